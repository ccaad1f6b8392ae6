//! Random typed kernels for fuzzing (issue 13): inputs of bool, int32, int64, float32 and float64
//! (broadcasting shapes, strided and reversed views), their edge values (0, ±1, MIN, MAX, 2**53 + 1,
//! shift counts outside the width, zero divisors, floats out of an integer's range), mixed-type trees
//! over every operator with weak int and float literals, the integer opcodes (`& | ^ ~ << >> // %`,
//! `**` of integers), casts, `where`, integer reductions and scans, and one or two more results run
//! as one runner of several results. A compiled backend must give the typed interpreter's result bit
//! for bit (any NaN equal to any NaN), of the same dtype and shape.
//!
//! Shared by the bounded fuzzer (`tests/fuzz_parity.rs`, a seeded generator) and the cargo-fuzz
//! target `exprs` (`fuzz/fuzz_targets/exprs.rs`, which checks a float case of `random_kernel.rs` and a
//! typed case of this file from each input). Floats stay exact here: no transcendental, no `**` of
//! floats, and a reduction or scan folds integers or bools (a float body is cast first), so every
//! result compares bit for bit; `random_kernel.rs` covers the float tolerances.

#![allow(dead_code)] // each includer uses a different part

pub use super::random_kernel::View;
use super::random_kernel::{exact_binary_stand_in, exact_stand_in, shape, sub_shape};
use arbitrary::{Result, Unstructured};
use kiln::kiln_ir::{BinaryOp, ElemType, ReduceOp, ScanOp, UnaryOp};
use kiln::{ArrayArg, Axes, Element, Expr, FusedRunner, Output, ScanOptions};
use ndarray::{ArrayD, ArrayViewD, IxDyn, ShapeBuilder};

/// One input array of any element type.
#[derive(Debug, Clone)]
pub enum Data {
    Bool(ArrayD<bool>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
}

/// A random typed kernel, its inputs and its sibling results.
#[derive(Debug, Clone)]
pub struct TypedCase {
    pub expr: Expr,
    pub inputs: Vec<(String, Data, View)>,
    /// More results computed with `expr` by one runner of several results: typed maps, now and then
    /// a whole-array reduction.
    pub siblings: Vec<Expr>,
}

/// int32 values the generator picks often: the extremes and their neighbours, ±1, 0, shift counts
/// around the width, the square root of the overflow.
const EDGE_I32: [i32; 18] = [
    0,
    -1,
    1,
    i32::MIN,
    i32::MAX,
    i32::MIN + 1,
    i32::MAX - 1,
    2,
    -2,
    3,
    7,
    31,
    32,
    33,
    64,
    -32,
    1 << 30,
    46_341,
];

/// int64 values the generator picks often: as [`EDGE_I32`], and 2**53 + 1 (the first integer an f64
/// rounds), the int32 extremes and their neighbours outside.
const EDGE_I64: [i64; 22] = [
    0,
    -1,
    1,
    i64::MIN,
    i64::MAX,
    i64::MIN + 1,
    i64::MAX - 1,
    (1 << 53) + 1,
    -(1 << 53) - 1,
    1 << 53,
    i32::MIN as i64,
    i32::MAX as i64,
    i32::MIN as i64 - 1,
    i32::MAX as i64 + 1,
    2,
    -3,
    7,
    63,
    64,
    65,
    -64,
    3_037_000_500,
];

/// Floats the generator picks often: the special bit patterns, and the values an integer cast meets
/// (halves, the ends of int32 and int64 and just beyond, 2**53 + 1 rounded).
const EDGE_F64: [f64; 26] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -0.5,
    1.5,
    2.5,
    -2.5,
    f64::NAN,
    f64::from_bits(0xfff0_0000_0000_0001), // negative signalling NaN
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::MIN,
    f64::MAX,
    5e-324,
    2_147_483_647.0,
    2_147_483_647.5,
    2_147_483_648.0,
    -2_147_483_648.0,
    -2_147_483_649.0,
    9_007_199_254_740_993.0,   // 2**53 + 1, rounded to 2**53
    9.223_372_036_854_775e18,  // just below 2**63
    -9.223_372_036_854_776e18, // -2**63
    1e19,
    3.0,
];

/// Python int literals: mostly small (a literal that does not fit the array's integer type is an
/// error, as NumPy 2's), now and then one at the edges.
const LITERALS: [i64; 16] = [
    0,
    1,
    -1,
    2,
    3,
    -5,
    7,
    31,
    32,
    33,
    63,
    64,
    (1 << 53) + 1,
    i64::MAX,
    i64::MIN,
    i32::MIN as i64,
];

/// Unary ops compared bit for bit (`random_kernel.rs` compares the vector polynomials in ULP: sin,
/// cos, tan, exp, exp2, expm1, log, log2, log10, log1p, tanh, erf, erfc), and `~`.
fn exact_unary() -> Vec<UnaryOp> {
    const POLYNOMIAL: [UnaryOp; 13] = [
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Exp,
        UnaryOp::Exp2,
        UnaryOp::Expm1,
        UnaryOp::Log,
        UnaryOp::Log2,
        UnaryOp::Log10,
        UnaryOp::Log1p,
        UnaryOp::Tanh,
        UnaryOp::Erf,
        UnaryOp::Erfc,
    ];
    UnaryOp::ALL
        .into_iter()
        .filter(|op| !POLYNOMIAL.contains(op))
        .chain([UnaryOp::Invert, UnaryOp::Invert, UnaryOp::Neg, UnaryOp::Abs])
        .collect()
}

/// Binary ops compared bit for bit (all but `**`, drawn apart with an integer base, and `copysign`,
/// see `random_kernel.rs`), the integer opcodes drawn as often as the rest together.
fn exact_binary() -> Vec<BinaryOp> {
    let integer = BinaryOp::INTEGER
        .into_iter()
        .chain([BinaryOp::FloorDiv, BinaryOp::Rem]);
    BinaryOp::ALL
        .into_iter()
        .filter(|op| !matches!(op, BinaryOp::Pow | BinaryOp::Copysign))
        .chain(integer.clone().cycle().take(20))
        .collect()
}

const TYPES: [ElemType; 5] = [
    ElemType::Bool,
    ElemType::I32,
    ElemType::I64,
    ElemType::F32,
    ElemType::F64,
];

/// What the generator knows of a subtree's type: enough to cast a float operand of an integer
/// opcode to an integer first, so that most trees type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Bool,
    Int,
    Float,
}

fn kind_of(t: ElemType) -> Kind {
    match t {
        ElemType::Bool => Kind::Bool,
        ElemType::I32 | ElemType::I64 => Kind::Int,
        _ => Kind::Float,
    }
}

fn float(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => f64::from_bits(u.arbitrary()?),
        1 => f64::from(u.int_in_range(-9..=9i8)?),
        _ => *u.choose(&EDGE_F64)?,
    })
}

fn int64(u: &mut Unstructured<'_>) -> Result<i64> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => u.arbitrary()?,
        1 => i64::from(u.int_in_range(-9..=9i8)?),
        _ => *u.choose(&EDGE_I64)?,
    })
}

fn int32(u: &mut Unstructured<'_>) -> Result<i32> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => u.arbitrary()?,
        1 => i32::from(u.int_in_range(-9..=9i8)?),
        _ => *u.choose(&EDGE_I32)?,
    })
}

/// The buffer behind an input of `shape` handed over as `view` (twice as long along the last axis
/// for a stepped view, Fortran order for a transposed one).
fn array<T>(
    u: &mut Unstructured<'_>,
    shape: &[usize],
    view: View,
    mut value: impl FnMut(&mut Unstructured<'_>) -> Result<T>,
) -> Result<ArrayD<T>> {
    let mut buf = shape.to_vec();
    if let Some(last) = buf.last_mut() {
        *last *= view.last_step();
    }
    let len: usize = buf.iter().product();
    let mut data = Vec::with_capacity(len);
    for _ in 0..len {
        data.push(value(u)?);
    }
    Ok(match view {
        View::Transposed => ArrayD::from_shape_vec(IxDyn(&buf).f(), data).expect("sized"),
        _ => ArrayD::from_shape_vec(IxDyn(&buf), data).expect("sized"),
    })
}

/// The view of `a` that `view` says.
fn viewed<T: Element>(a: &ArrayD<T>, view: View) -> ArrayArg<'_> {
    let v: ArrayViewD<'_, T> = view.of(a.view());
    T::arg(v)
}

/// A subtree as an integer (a float cast to int32 or int64, a bool to int64 now and then).
fn integer(u: &mut Unstructured<'_>, (e, k): (Expr, Kind)) -> Result<(Expr, Kind)> {
    Ok(match k {
        Kind::Float => (e.cast(*u.choose(&[ElemType::I32, ElemType::I64])?), Kind::Int),
        Kind::Bool if u.ratio(1, 4)? => (e.cast(ElemType::I64), Kind::Int),
        _ => (e, k),
    })
}

/// A random typed tree over `inputs` (each name with its element type).
fn tree(
    u: &mut Unstructured<'_>,
    inputs: &[(String, ElemType)],
    rank: usize,
    depth: u32,
) -> Result<(Expr, Kind)> {
    if depth == 0 || u.ratio(1, 3)? {
        return Ok(match u.int_in_range(0..=7u8)? {
            0 => (Expr::int(*u.choose(&LITERALS)?), Kind::Int),
            1 => (Expr::int(i64::from(u.int_in_range(-4..=8i8)?)), Kind::Int),
            2 => (Expr::lit(float(u)?), Kind::Float),
            3 if rank > 0 => (Expr::index(u.int_in_range(0..=rank - 1)?), Kind::Int),
            _ => {
                let (name, t) = u.choose(inputs)?;
                (Expr::input(name.clone()), kind_of(*t))
            }
        });
    }
    let sub = |u: &mut Unstructured<'_>| tree(u, inputs, rank, depth - 1);
    Ok(match u.int_in_range(0..=9u8)? {
        0 => {
            let t = *u.choose(&TYPES)?;
            (sub(u)?.0.cast(t), kind_of(t))
        }
        1 => {
            let op = exact_stand_in(*u.choose(&exact_unary())?);
            let (a, k) = sub(u)?;
            match op {
                UnaryOp::Invert => {
                    let (a, k) = integer(u, (a, k))?;
                    (a.unary(op), k)
                }
                // `not` of an integer is its bitwise `~`
                UnaryOp::Not if k == Kind::Int => (a.unary(op), k),
                UnaryOp::Not | UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite => {
                    (a.unary(op), Kind::Bool)
                }
                UnaryOp::Neg | UnaryOp::Abs | UnaryOp::Sign | UnaryOp::Floor | UnaryOp::Ceil => {
                    (a.unary(op), k)
                }
                UnaryOp::Trunc | UnaryOp::Round => (a.unary(op), k),
                _ => (a.unary(op), Kind::Float),
            }
        }
        2 => {
            let (c, _) = sub(u)?;
            let (a, ka) = sub(u)?;
            let (b, kb) = sub(u)?;
            let k = if ka == Kind::Float || kb == Kind::Float {
                Kind::Float
            } else {
                ka.max_kind(kb)
            };
            (Expr::select(c, a, b), k)
        }
        3 => {
            // `**` of integers: a small non-negative exponent, or any integer (a negative element
            // reads as 0), wrapping
            let base = sub(u)?;
            let (base, k) = integer(u, base)?;
            let e = if u.ratio(3, 4)? {
                Expr::int(u.int_in_range(0..=6i64)?)
            } else {
                let e = sub(u)?;
                integer(u, e)?.0
            };
            (base.pow(e), k)
        }
        _ => {
            let op = exact_binary_stand_in(*u.choose(&exact_binary())?);
            let (mut a, mut b) = (sub(u)?, sub(u)?);
            if BinaryOp::INTEGER.contains(&op) {
                a = integer(u, a)?;
                b = integer(u, b)?;
            }
            let k = match op {
                BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne => {
                    Kind::Bool
                }
                BinaryOp::Div
                | BinaryOp::Arctan2
                | BinaryOp::Hypot
                | BinaryOp::Nextafter
                | BinaryOp::Logaddexp
                | BinaryOp::Logaddexp2 => Kind::Float,
                _ if a.1 == Kind::Float || b.1 == Kind::Float => Kind::Float,
                _ => a.1.max_kind(b.1),
            };
            (a.0.binary(op, b.0), k)
        }
    })
}

impl Kind {
    /// The wider of two non-float kinds.
    fn max_kind(self, other: Kind) -> Kind {
        if self == Kind::Int || other == Kind::Int {
            Kind::Int
        } else {
            Kind::Bool
        }
    }
}

impl TypedCase {
    /// A random typed case drawn from `u`.
    pub fn arbitrary(u: &mut Unstructured<'_>) -> Result<TypedCase> {
        let full = shape(u, 40)?;
        let n_inputs = u.int_in_range(1..=3usize)?;
        let mut inputs = Vec::new();
        for i in 0..n_inputs {
            let s = if i == 0 {
                full.clone()
            } else {
                sub_shape(u, &full)?
            };
            let view = View::draw(u, i)?;
            // integers and bools twice as often as floats
            let data = match u.int_in_range(0..=7u8)? {
                0 | 1 => Data::I32(array(u, &s, view, int32)?),
                2 | 3 => Data::I64(array(u, &s, view, int64)?),
                4 | 5 => Data::Bool(array(u, &s, view, |u| u.arbitrary())?),
                6 => Data::F32(array(u, &s, view, |u| Ok(float(u)? as f32))?),
                _ => Data::F64(array(u, &s, view, float)?),
            };
            inputs.push((format!("x{i}"), data, view));
        }
        let typed: Vec<(String, ElemType)> = inputs.iter().map(|(n, d, _)| (n.clone(), d.elem())).collect();
        let rank = full.len();
        let depth = u.int_in_range(0..=4u32)?;
        let body = tree(u, &typed, rank, depth)?;
        let one_axis = |u: &mut Unstructured<'_>| -> Result<Option<isize>> {
            let r = rank as isize;
            Ok(if rank == 0 || u.ratio(1, 2)? {
                None
            } else {
                Some(u.int_in_range(-r..=r - 1)?)
            })
        };
        let expr = match u.int_in_range(0..=5u8)? {
            0 => {
                // a product of floats regroups where it may underflow or overflow (random_kernel.rs
                // bounds it): products fold integers; a sum of floats is compared within a bound of
                // its reassociation, the other reductions of floats bit for bit
                let op = *u.choose(&ReduceOp::ALL)?;
                let body = if op == ReduceOp::Prod || u.ratio(1, 2)? {
                    integer(u, body)?.0
                } else {
                    body.0
                };
                let axes = one_axis(u)?.map_or(Axes::All, |a| Axes::Some(vec![a]));
                body.reduce(op, axes)
            }
            1 => {
                let (body, _) = integer(u, body)?;
                let options = ScanOptions {
                    axis: one_axis(u)?,
                    exclusive: u.ratio(1, 3)?,
                    reverse: u.ratio(1, 3)?,
                    initial: if u.ratio(1, 3)? {
                        Some(f64::from(u.int_in_range(-3..=3i8)?))
                    } else {
                        None
                    },
                };
                body.scan(*u.choose(&ScanOp::ALL)?, options)
            }
            _ => body.0,
        };
        let mut siblings = Vec::new();
        if u.ratio(1, 2)? {
            for _ in 0..u.int_in_range(1..=2u8)? {
                let depth = u.int_in_range(0..=3u32)?;
                let s = tree(u, &typed, rank, depth)?;
                siblings.push(if u.ratio(1, 5)? {
                    let (s, _) = integer(u, s)?;
                    s.reduce(
                        *u.choose(&[ReduceOp::Sum, ReduceOp::Max, ReduceOp::Any])?,
                        Axes::All,
                    )
                } else {
                    s.0
                });
            }
        }
        Ok(TypedCase {
            expr,
            inputs,
            siblings,
        })
    }

    /// The inputs as the runners take them.
    pub fn args(&self) -> Vec<(&str, ArrayArg<'_>)> {
        self.inputs
            .iter()
            .map(|(name, data, view)| {
                let arg = match data {
                    Data::Bool(a) => viewed(a, *view),
                    Data::I32(a) => viewed(a, *view),
                    Data::I64(a) => viewed(a, *view),
                    Data::F32(a) => viewed(a, *view),
                    Data::F64(a) => viewed(a, *view),
                };
                (name.as_str(), arg)
            })
            .collect()
    }

    /// The interpreter's result, if the kernel types and runs.
    pub fn oracle(&self) -> Option<Output> {
        let r = FusedRunner::compile(&self.expr)
            .ok()?
            .with_backend(kiln::interpreter());
        r.run(&self.args()).ok()
    }

    /// `want` and `got` agree: bit for bit, except that a min or max of floats may keep either of
    /// equal zeros of both signs (the JIT folds interleaved lanes: README).
    fn agree(&self, want: &Output, got: &Output) -> std::result::Result<(), String> {
        if let kiln::ExprNode::Reduce {
            op: ReduceOp::Sum,
            arg,
            axes,
            ..
        } = self.expr.node()
            && matches!(want, Output::F64(_) | Output::F32(_))
            && want.dtype_name() == got.dtype_name()
            && want.shape() == got.shape()
        {
            return self.sum_within_bound(want, got, arg, axes);
        }
        let extreme = matches!(
            self.expr.node(),
            kiln::ExprNode::Reduce {
                op: ReduceOp::Min | ReduceOp::Max,
                ..
            }
        );
        match (want, got) {
            (Output::F64(a), Output::F64(b)) if extreme && a.shape() == b.shape() => {
                let zeros = |x: &f64, y: &f64| *x == 0.0 && *y == 0.0;
                let a2 = a.mapv(|v| if v == 0.0 { 0.0 } else { v });
                let b2 = ndarray::Zip::from(a)
                    .and(b)
                    .map_collect(|x, y| if zeros(x, y) { 0.0 } else { *y });
                same(&Output::F64(a2), &Output::F64(b2))
            }
            (Output::F32(a), Output::F32(b)) if extreme && a.shape() == b.shape() => {
                let zeros = |x: &f32, y: &f32| *x == 0.0 && *y == 0.0;
                let a2 = a.mapv(|v| if v == 0.0 { 0.0 } else { v });
                let b2 = ndarray::Zip::from(a)
                    .and(b)
                    .map_collect(|x, y| if zeros(x, y) { 0.0 } else { *y });
                same(&Output::F32(a2), &Output::F32(b2))
            }
            _ => same(want, got),
        }
    }

    /// A sum of floats, reassociated by the JIT: each output within `4 ε max(n, 16) Σ|x|` of the
    /// interpreter's (`Σ|x|` the interpreter's sum of the magnitudes over the same axes; anything
    /// where it overflows), NaN where NaN.
    fn sum_within_bound(
        &self,
        want: &Output,
        got: &Output,
        arg: &Expr,
        axes: &Axes,
    ) -> std::result::Result<(), String> {
        let magnitude = FusedRunner::compile(&arg.abs().reduce(ReduceOp::Sum, axes.clone()))
            .map(|r| r.with_backend(kiln::interpreter()))
            .and_then(|r| r.run(&self.args()))
            .map_err(|e| format!("the sum of magnitudes: {e}"))?
            .into_f64();
        let eps = if matches!(want, Output::F32(_)) {
            f64::from(f32::EPSILON)
        } else {
            f64::EPSILON
        };
        let n: usize = self
            .inputs
            .iter()
            .map(|(_, d, _)| d.shape().iter().product::<usize>())
            .max()
            .unwrap_or(1);
        let (w, g) = (want.clone().into_f64(), got.clone().into_f64());
        for (k, ((&a, &b), &m)) in w.iter().zip(g.iter()).zip(magnitude.iter()).enumerate() {
            let ok = if a.is_nan() || b.is_nan() {
                (a.is_nan() && b.is_nan()) || !m.is_finite()
            } else {
                a == b || !m.is_finite() || (a - b).abs() <= 4.0 * m * eps * (n.max(16) as f64)
            };
            if !ok {
                return Err(format!(
                    "sum element {k}: interp {a:?} vs compiled {b:?} (sum of |x| {m:?})"
                ));
            }
        }
        Ok(())
    }

    /// What `kiln explain` says runs the kernel on `backend` (the typed kernel's note up to the
    /// kernel's text: compiled, or interpreted and why), or None for a float kernel or an error.
    pub fn engine(&self, backend: &str) -> Option<String> {
        let r = FusedRunner::compile(&self.expr)
            .ok()?
            .with_backend(kiln::backend_by_name(backend).ok()?);
        let all = r.explain_rewrites(&self.args()).ok()?;
        let notes = &all.last()?.2;
        let note = notes.iter().find(|n| n.contains("the typed kernel:"))?;
        Some(note[..note.find("; the typed kernel:").unwrap_or(note.len())].to_string())
    }

    /// Runs the case on `backend` and on the interpreter; `Err` describes a disagreement.
    pub fn check(&self, backend: &str) -> std::result::Result<(), String> {
        let args = self.args();
        let oracle = FusedRunner::compile(&self.expr).map(|r| r.with_backend(kiln::interpreter()));
        let tested = FusedRunner::compile(&self.expr)
            .and_then(|r| Ok(r.with_backend(kiln::backend_by_name(backend)?)));
        let (oracle, tested) = match (oracle, tested) {
            (Ok(o), Ok(t)) => (o, t),
            (Err(_), Err(_)) => return Ok(()),
            (o, t) => return Err(format!("compile differs: interp {o:?} vs {backend} {t:?}")),
        };
        let got = match (oracle.run(&args), tested.run(&args)) {
            (Err(_), Err(_)) => return Ok(()),
            (Ok(want), Ok(got)) => {
                self.agree(&want, &got)?;
                got
            }
            (w, g) => return Err(format!("run differs: interp {w:?} vs {backend} {g:?}")),
        };
        // the prepared handle gives the same result
        let positional: Vec<ArrayArg<'_>> = args.iter().map(|(_, a)| a.clone()).collect();
        let again = tested
            .prepared(&args)
            .and_then(|h| h.run(&positional))
            .map_err(|e| format!("the prepared handle fails where run did not: {e}"))?;
        self.agree(&got, &again).map_err(|e| format!("prepared: {e}"))?;
        self.check_updates(&args, &tested, &got)?;
        self.check_siblings(&args, backend, &got)
    }

    /// An in-place update of each input of the result's type and shape: refused, or the result
    /// `tested` gave (`got`).
    fn check_updates(
        &self,
        args: &[(&str, ArrayArg<'_>)],
        tested: &FusedRunner,
        got: &Output,
    ) -> std::result::Result<(), String> {
        fn update<T: Element>(
            tested: &FusedRunner,
            name: &str,
            others: &[(&str, ArrayArg<'_>)],
            previous: ndarray::ArrayViewD<'_, T>,
            wrap: fn(ArrayD<T>) -> Output,
        ) -> Option<Output> {
            let mut target = previous.to_owned();
            tested
                .run_update(name, others, target.view_mut())
                .ok()
                .map(|_| wrap(target))
        }
        for (k, (name, arg)) in args.iter().enumerate() {
            if arg.shape() != got.shape() {
                continue;
            }
            let others: Vec<(&str, ArrayArg<'_>)> = args
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != k)
                .map(|(_, (n, a))| (*n, a.clone()))
                .collect();
            let updated = match (arg, got) {
                (ArrayArg::Bool(v), Output::Bool(_)) => {
                    update(tested, name, &others, v.to_dyn(), Output::Bool)
                }
                (ArrayArg::I32(v), Output::I32(_)) => update(tested, name, &others, v.to_dyn(), Output::I32),
                (ArrayArg::I64(v), Output::I64(_)) => update(tested, name, &others, v.to_dyn(), Output::I64),
                (ArrayArg::F32(v), Output::F32(_)) => update(tested, name, &others, v.to_dyn(), Output::F32),
                (ArrayArg::F64(v), Output::F64(_)) => update(tested, name, &others, v.to_dyn(), Output::F64),
                _ => None,
            };
            if let Some(u) = updated {
                same(got, &u).map_err(|e| format!("run_update of '{name}': {e}"))?;
            }
        }
        Ok(())
    }

    /// `expr` and the siblings as one runner of several results on `backend`: each result as the
    /// interpreter gives it alone.
    fn check_siblings(
        &self,
        args: &[(&str, ArrayArg<'_>)],
        backend: &str,
        got: &Output,
    ) -> std::result::Result<(), String> {
        if self.siblings.is_empty() {
            return Ok(());
        }
        let all: Vec<Expr> = std::iter::once(self.expr.clone())
            .chain(self.siblings.iter().cloned())
            .collect();
        let many = FusedRunner::compile_many(&all)
            .and_then(|r| Ok(r.with_backend(kiln::backend_by_name(backend)?)))
            .map_err(|e| format!("compile_many fails where compile did not: {e}"))?;
        let alone: Vec<std::result::Result<Output, String>> = self
            .siblings
            .iter()
            .map(|s| {
                FusedRunner::compile(s)
                    .map(|r| r.with_backend(kiln::interpreter()))
                    .and_then(|r| r.run(args))
                    .map_err(|e| e.to_string())
            })
            .collect();
        let outs = match many.run_many(args) {
            Ok(o) => o,
            // an error of one of them (a sibling that does not type, an empty max) fails them all
            Err(_) if alone.iter().any(|a| a.is_err()) => return Ok(()),
            Err(e) => return Err(format!("run_many fails where each ran: {e}")),
        };
        // the kernel of several results may run where `expr` alone did not (a sum reassociated)
        self.agree(got, &outs[0])
            .map_err(|e| format!("run_many result 0: {e}"))?;
        for (i, (o, want)) in outs[1..].iter().zip(alone).enumerate() {
            let want = want.map_err(|e| format!("sibling {i} fails alone but not in run_many: {e}"))?;
            same(&want, o).map_err(|e| format!("run_many result {}: {e}", i + 1))?;
        }
        Ok(())
    }
}

impl Data {
    pub fn elem(&self) -> ElemType {
        match self {
            Data::Bool(_) => ElemType::Bool,
            Data::I32(_) => ElemType::I32,
            Data::I64(_) => ElemType::I64,
            Data::F32(_) => ElemType::F32,
            Data::F64(_) => ElemType::F64,
        }
    }

    pub fn shape(&self) -> &[usize] {
        match self {
            Data::Bool(a) => a.shape(),
            Data::I32(a) => a.shape(),
            Data::I64(a) => a.shape(),
            Data::F32(a) => a.shape(),
            Data::F64(a) => a.shape(),
        }
    }
}

/// The same dtype, shape and elements, bit for bit (any NaN equal to any NaN, the sign of zero
/// counts); `Err` names the first difference.
pub fn same(want: &Output, got: &Output) -> std::result::Result<(), String> {
    if want.dtype_name() != got.dtype_name() || want.shape() != got.shape() {
        return Err(format!(
            "type differs: interp {}{:?} vs compiled {}{:?}",
            want.dtype_name(),
            want.shape(),
            got.dtype_name(),
            got.shape()
        ));
    }
    fn first<T: PartialEq + std::fmt::Debug>(
        a: &ArrayD<T>,
        b: &ArrayD<T>,
        eq: impl Fn(&T, &T) -> bool,
    ) -> std::result::Result<(), String> {
        match a.iter().zip(b.iter()).position(|(x, y)| !eq(x, y)) {
            None => Ok(()),
            Some(i) => Err(format!(
                "element {i}: interp {:?} vs compiled {:?}",
                a.iter().nth(i).expect("in range"),
                b.iter().nth(i).expect("in range")
            )),
        }
    }
    let f64_bits = |x: &f64, y: &f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    let f32_bits = |x: &f32, y: &f32| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    match (want, got) {
        (Output::F64(a), Output::F64(b)) => first(a, b, f64_bits),
        (Output::F32(a), Output::F32(b)) => first(a, b, f32_bits),
        (Output::I64(a), Output::I64(b)) => first(a, b, |x, y| x == y),
        (Output::I32(a), Output::I32(b)) => first(a, b, |x, y| x == y),
        (Output::Bool(a), Output::Bool(b)) => first(a, b, |x, y| x == y),
        _ => unreachable!("the dtypes are equal (checked above)"),
    }
}
