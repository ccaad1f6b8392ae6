//! Shared helpers of the kiln-jit tests: building kernels and plans, deterministic data with special
//! values, running the interpreter and the compiled kernel, and comparing their results. The random
//! generator and the comparators are the workspace's test kit (`tests/support/kit.rs`).
#![allow(dead_code)]

use kiln_ir::shape::{broadcast_strides, c_strides, checked_size, unravel};
use kiln_ir::*;
use kiln_jit::{Elem, Schedule};

#[path = "../../../tests/support/kit.rs"]
mod kit;
#[allow(unused_imports)]
pub use kit::{Rng, bits_equal, same_bits, ulp_distance};

/// How test data looks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Data {
    /// Uniform in [-3, 3] with a sprinkle of special values (NaN, ±inf, ±0, subnormals, 1, -1).
    Special,
    /// Uniform in [-3, 3], no specials.
    Plain,
    /// In [0.5, 2] (for products).
    NearOne,
    /// In [0.5, 2] with NaN, ±inf, ±0 and ±1 sprinkled (products: specials that do not make the
    /// result depend on the order, as 1e300 * 1e300 * 1e-310 would).
    NearOneSpecial,
    /// Small integers in [-2, 2] (many ties and zeros).
    Ties,
    /// Mostly zeros, some ones, NaN now and then (truth values).
    Truth,
}

pub fn gen_data<T: Elem>(rng: &mut Rng, n: usize, data: Data) -> Vec<T> {
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        5e-324,
        -1e-310,
        1.0e-40,
        -1.0e-45,
        1.0,
        -1.0,
        1e300,
    ];
    (0..n)
        .map(|_| {
            let x = match data {
                Data::Special if rng.below(5) == 0 => specials[rng.below(specials.len())],
                Data::Special | Data::Plain => rng.uniform(-3.0, 3.0),
                Data::NearOne => rng.uniform(0.5, 2.0),
                Data::NearOneSpecial if rng.below(6) == 0 => {
                    [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 0.0, -0.0, 1.0, -1.0][rng.below(7)]
                }
                Data::NearOneSpecial => rng.uniform(0.5, 2.0),
                Data::Ties => rng.below(5) as f64 - 2.0,
                Data::Truth => [0.0, 0.0, 0.0, -0.0, 1.0, 2.0, f64::NAN][rng.below(7)],
            };
            T::from_f64(x)
        })
        .collect()
}

pub fn kernel(
    dtype: ElemType,
    shapes: &[&[usize]],
    arena: ExprArena,
    body: NodeId,
    kind: KernelKind,
) -> KernelIR {
    let shape = kiln_ir::shape::broadcast_shapes(shapes.iter().copied()).unwrap();
    KernelIR {
        dtype,
        inputs: shapes
            .iter()
            .enumerate()
            .map(|(i, s)| InputDecl {
                name: format!("in{i}"),
                shape: s.to_vec(),
                stored: None,
            })
            .collect(),
        shape,
        arena,
        body,
        extra: Vec::new(),
        kind,
    }
}

pub fn plan(kernel: &KernelIR, min_row: usize) -> BroadcastPlan {
    let layouts: Vec<InputLayout> = kernel
        .inputs
        .iter()
        .map(|i| InputLayout {
            shape: i.shape.clone(),
            contiguous: true,
            strides: None,
        })
        .collect();
    BroadcastPlan::new(&kernel.shape, &layouts, PlanOptions { min_row }).unwrap()
}

/// Copies input `i` into a C-contiguous buffer of the iteration shape (what the executor does for
/// `Materialise`).
pub fn materialise<T: Copy>(kernel: &KernelIR, i: usize, data: &[T]) -> Vec<T> {
    let decl = &kernel.inputs[i];
    let strides = broadcast_strides(&decl.shape, &c_strides(&decl.shape), &kernel.shape).unwrap();
    let n = checked_size(&kernel.shape).unwrap();
    let mut idx = vec![0; kernel.shape.len()];
    (0..n)
        .map(|f| {
            unravel(f, &kernel.shape, &mut idx);
            let off: isize = idx.iter().zip(&strides).map(|(&i, &s)| i as isize * s).sum();
            data[off as usize]
        })
        .collect()
}

/// The interpreter's result.
pub fn oracle<T: Elem>(kernel: &KernelIR, data: &[Vec<T>]) -> kiln_ir::Result<Tensor> {
    let inputs: Vec<StridedInput<'_, T>> = kernel
        .inputs
        .iter()
        .zip(data)
        .map(|(decl, d)| StridedInput {
            data: d,
            offset: 0,
            strides: broadcast_strides(&decl.shape, &c_strides(&decl.shape), &kernel.shape).unwrap(),
        })
        .collect();
    interpret(kernel, &inputs)
}

/// The compiled kernel's result.
pub fn jit<T: Elem>(
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    sched: Schedule,
    data: &[Vec<T>],
) -> kiln_jit::Result<Tensor> {
    let bufs: Vec<Vec<T>> = data
        .iter()
        .enumerate()
        .map(|(i, d)| {
            if plan.inputs[i] == InputPlan::Materialise {
                materialise(kernel, i, d)
            } else {
                d.clone()
            }
        })
        .collect();
    let refs: Vec<&[T]> = bufs.iter().map(|b| b.as_slice()).collect();
    let compiled = kiln_jit::compile(kernel, plan, sched)?;
    compiled.run(kernel, plan, &refs)
}

fn ulp(x: f64, dtype: ElemType) -> f64 {
    let eps = if dtype == ElemType::F32 {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let m = x.abs().max(if dtype == ElemType::F32 {
        f32::MIN_POSITIVE as f64
    } else {
        f64::MIN_POSITIVE
    });
    eps * m
}

/// Compares a compiled result with the oracle's: bit-exact (any NaN equals any NaN) except sums and
/// products, which may differ by reassociation (`scale[i]` is the sum of |values| of output `i`).
pub fn compare(what: &str, kernel: &KernelIR, got: &Tensor, want: &Tensor, data_scale: Option<&[f64]>) {
    assert_eq!(got.shape, want.shape, "{what}: shape");
    assert_eq!(
        got.values.output_type(),
        want.values.output_type(),
        "{what}: output type ({:?} vs {:?})",
        got.values,
        want.values
    );
    let (g, w) = (got.values.to_f64(), want.values.to_f64());
    assert_eq!(g.len(), w.len(), "{what}: length");
    let op = match &kernel.kind {
        KernelKind::Reduce { op, .. } => Some(*op),
        // compound kernels are compared in tests/compound.rs (kiln's), within a relative bound;
        // sibling kernels in tests/siblings.rs (kiln's), bit for bit against each reduction alone
        KernelKind::Map | KernelKind::Scan(_) | KernelKind::Compound { .. } | KernelKind::Siblings { .. } => {
            None
        }
    };
    let n_red = kernel.shape.iter().product::<usize>() / w.len().max(1);
    for i in 0..w.len() {
        let (a, b) = (g[i], w[i]);
        let ok = match (op, data_scale) {
            (Some(ReduceOp::Sum | ReduceOp::Prod), Some(scale)) if a.is_finite() && b.is_finite() => {
                let s = if op == Some(ReduceOp::Sum) {
                    scale[i]
                } else {
                    b.abs()
                };
                let tol = (n_red as f64 + 2.0) * f64::EPSILON * s + 2.0 * ulp(b, kernel.dtype);
                (a - b).abs() <= tol
            }
            // the JIT folds min and max in interleaved lanes: of equal extremes (+0.0 and -0.0) it
            // may keep another than the sequential fold's last (README, "Semantics in brief")
            (Some(ReduceOp::Min | ReduceOp::Max), _) if a == 0.0 && b == 0.0 => true,
            _ => same_bits(a, b),
        };
        assert!(
            ok,
            "{what}: element {i} of {}: jit {a:e} ({:#x}) vs interpreter {b:e} ({:#x})\nkernel {:?}",
            w.len(),
            a.to_bits(),
            b.to_bits(),
            kernel.kind
        );
    }
}

/// The largest documented ULP bound of the opcodes in `body` (0: the JIT must be bit-exact).
pub fn body_ulp_bound(arena: &ExprArena, body: NodeId) -> u32 {
    arena
        .reachable(body)
        .into_iter()
        .map(|id| match *arena.node(id) {
            Node::Unary(op, _) => kiln_jit::unary_ulp_bound(op),
            Node::Binary(op, _, _) => kiln_jit::binary_ulp_bound(op),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
}

/// Runs both and compares a map within `ulps` ULP (any NaN equals any NaN).
pub fn check_ulp<T: Elem>(
    what: &str,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    sched: Schedule,
    data: &[Vec<T>],
    ulps: u64,
) {
    let want = oracle(kernel, data).unwrap();
    let got = jit(kernel, plan, sched, data).unwrap();
    assert_eq!(got.shape, want.shape, "{what}: shape");
    let (g, w) = (got.values.to_f64(), want.values.to_f64());
    for i in 0..w.len() {
        let d = ulp_distance(g[i], w[i], kernel.dtype == ElemType::F32);
        assert!(
            d <= ulps,
            "{what}: element {i} of {} (inputs {:?}): jit {:e} vs interpreter {:e}: {d} ULP > {ulps}",
            w.len(),
            data.iter()
                .map(|d| d.get(i).map(|v| v.to_f64()))
                .collect::<Vec<_>>(),
            g[i],
            w[i]
        );
    }
}

/// Runs both and compares; errors must agree (an error from both is a pass).
pub fn check<T: Elem>(what: &str, kernel: &KernelIR, plan: &BroadcastPlan, sched: Schedule, data: &[Vec<T>]) {
    let want = oracle(kernel, data);
    let got = jit(kernel, plan, sched, data);
    match (got, want) {
        (Ok(g), Ok(w)) => {
            let scale = sum_abs_scale(kernel, data);
            compare(what, kernel, &g, &w, scale.as_deref());
        }
        (Err(_g), Err(_w)) => {
            if std::env::var("KILN_TEST_VERBOSE").is_ok() {
                eprintln!("{what}: both failed: {_g} / {_w}");
            }
        }
        (g, w) => panic!("{what}: jit {g:?} vs interpreter {w:?}"),
    }
}

/// For sums: per output, the sum of |value| (by the interpreter), the scale of reassociation error.
fn sum_abs_scale<T: Elem>(kernel: &KernelIR, data: &[Vec<T>]) -> Option<Vec<f64>> {
    let KernelKind::Reduce {
        op: ReduceOp::Sum,
        axes,
    } = &kernel.kind
    else {
        return Some(Vec::new()).filter(|_| matches!(kernel.kind, KernelKind::Reduce { .. }));
    };
    let mut k = kernel.clone();
    let body = k.arena.unary(UnaryOp::Abs, k.body);
    k.body = body;
    k.kind = KernelKind::Reduce {
        op: ReduceOp::Sum,
        axes: axes.clone(),
    };
    let t = oracle(&k, data).ok()?;
    Some(t.values.to_f64())
}

/// Runs units on three scoped threads, in a scrambled order (the bits must not care).
pub struct Scrambled;

impl kiln_jit::Spread for Scrambled {
    fn spread(&self, units: usize, work: &(dyn Fn(usize) + Sync)) {
        std::thread::scope(|s| {
            for t in 0..3 {
                s.spawn(move || {
                    for u in (0..units).rev().filter(|u| u % 3 == t) {
                        work(u);
                    }
                });
            }
        });
    }
}
