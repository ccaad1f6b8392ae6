//! The parity suite: every opcode, every reduction, both dtypes, several broadcasting plans and every
//! tail length, compiled with several schedules and compared with `kiln_ir::interpret`.
//!
//! One generic suite (`suite`), instantiated by `parity_suite!` once per schedule.

mod common;

use common::*;
use kiln_ir::*;
use kiln_jit::{Elem, Schedule};

/// Bodies over inputs 0..arity: (name, arity, builder).
type BodyFn = fn(&mut ExprArena) -> NodeId;

fn bodies() -> Vec<(&'static str, usize, BodyFn)> {
    let mut v: Vec<(&'static str, usize, BodyFn)> = vec![
        ("x", 1, |a| a.input(0)),
        ("x*2.5+0.1", 1, |a| {
            let x = a.input(0);
            let c = a.literal(2.5);
            let m = a.binary(BinaryOp::Mul, x, c);
            let d = a.literal(0.1);
            a.binary(BinaryOp::Add, m, d)
        }),
        ("x*-0.0", 1, |a| {
            let x = a.input(0);
            let c = a.literal(-0.0);
            a.binary(BinaryOp::Mul, x, c)
        }),
        ("where(x<y, x*y, y-x)", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let c = a.binary(BinaryOp::Lt, x, y);
            let p = a.binary(BinaryOp::Mul, x, y);
            let q = a.binary(BinaryOp::Sub, y, x);
            a.select(c, p, q)
        }),
        ("where(x, y, 3)", 2, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let c = a.literal(3.0);
            a.select(x, y, c)
        }),
        ("(x*y+z)/sqrt(abs(x))", 3, |a| {
            let x = a.input(0);
            let y = a.input(1);
            let z = a.input(2);
            let m = a.binary(BinaryOp::Mul, x, y);
            let s = a.binary(BinaryOp::Add, m, z);
            let ab = a.unary(UnaryOp::Abs, x);
            let r = a.unary(UnaryOp::Sqrt, ab);
            a.binary(BinaryOp::Div, s, r)
        }),
    ];
    // every unary opcode on x, every binary opcode on (x, y)
    macro_rules! un {
        ($($op:ident),*) => { $( v.push((stringify!($op), 1, |a| { let x = a.input(0); a.unary(UnaryOp::$op, x) })); )* };
    }
    macro_rules! bin {
        ($($op:ident),*) => { $( v.push((stringify!($op), 2, |a| { let x = a.input(0); let y = a.input(1); a.binary(BinaryOp::$op, x, y) })); )* };
    }
    un!(
        Neg, Abs, Sqrt, Sin, Cos, Tan, Exp, Log, Recip, Not, Tanh, Exp2, Log2, Log10, Expm1, Log1p, Arcsin,
        Arccos, Arctan, Sinh, Cosh, Arcsinh, Arccosh, Arctanh, Floor, Ceil, Trunc, Round, Sign, IsNan, IsInf,
        IsFinite, Erf, Erfc, Cbrt, Deg2Rad, Rad2Deg
    );
    bin!(
        Add, Sub, Mul, Div, Min, Max, Pow, Lt, Le, Gt, Ge, Eq, Ne, And, Or, Arctan2, Hypot, Copysign, Fmax,
        Fmin, Fmod, Rem, FloorDiv, Nextafter, Logaddexp, Logaddexp2
    );
    v
}

fn all_bodies_count() -> usize {
    UnaryOp::ALL.len() + BinaryOp::ALL.len()
}

/// Every body as a map over 1-D inputs of every length up to past two unrolled iterations: bit-exact
/// against the interpreter, except bodies with a vectorised transcendental, which must be within its
/// documented ULP bound + 1.
pub fn maps_1d<T: Elem>(sched: Schedule) {
    assert!(bodies().len() >= all_bodies_count());
    let mut rng = Rng::new(1);
    let max_n = 2 * 4 * 4 + 1 + 3;
    for (name, arity, build) in bodies() {
        let mut arena = ExprArena::new();
        let body = build(&mut arena);
        for n in (0..=max_n).chain([100, 1000]) {
            let one = [n];
            let shapes: Vec<&[usize]> = (0..arity).map(|_| &one[..]).collect();
            let k = kernel(T::DTYPE, &shapes, arena.clone(), body, KernelKind::Map);
            let p = plan(&k, 64);
            let data: Vec<Vec<T>> = (0..arity).map(|_| gen_data(&mut rng, n, Data::Special)).collect();
            let ulps = body_ulp_bound(&k.arena, body) as u64;
            let run = |what: String, data: &[Vec<T>]| {
                if ulps == 0 {
                    check(&what, &k, &p, sched, data);
                } else {
                    check_ulp(&what, &k, &p, sched, data, ulps + 1);
                }
            };
            run(format!("map {name} n={n}"), &data);
            // same-value pairs exercise equality, min/max of ±0 and NaN against itself
            if arity == 2 {
                let mut d2 = data.clone();
                d2[1] = d2[0].iter().map(|&x| if x == T::ZERO { -x } else { x }).collect();
                run(format!("map {name} n={n} (pairs)"), &d2);
            }
        }
    }
}

/// Broadcasting plans: splat, per-row run, per-row splat, materialised, in 2-D and 3-D.
pub fn maps_broadcast<T: Elem>(sched: Schedule) {
    let mut rng = Rng::new(2);
    let cases: Vec<Vec<Vec<usize>>> = vec![
        vec![vec![7, 9], vec![9]],          // per-row run (or materialised)
        vec![vec![7, 9], vec![7, 1]],       // per-row splat
        vec![vec![7, 9], vec![1]],          // splat
        vec![vec![7, 9], vec![]],           // rank-0 splat
        vec![vec![5, 1], vec![1, 6]],       // outer product
        vec![vec![3, 4, 5], vec![4, 5]],    // 3-D per-row run
        vec![vec![3, 4, 5], vec![3, 1, 5]], // 3-D run with outer strides
        vec![vec![3, 4, 5], vec![3, 4, 1]], // 3-D per-row splat
        vec![vec![2, 3, 70], vec![70]],     // long rows: per-row even with the default plan
        vec![vec![2, 3, 70], vec![3, 1]],
        vec![vec![0, 5], vec![5]], // empty
        vec![vec![], vec![]],      // scalars
    ];
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let y = arena.input(1);
    let s = arena.binary(BinaryOp::Sub, x, y);
    let m = arena.binary(BinaryOp::Max, s, x);
    let body = arena.binary(BinaryOp::Mul, m, y);
    for shapes in &cases {
        let sh: Vec<&[usize]> = shapes.iter().map(|s| s.as_slice()).collect();
        let k = kernel(T::DTYPE, &sh, arena.clone(), body, KernelKind::Map);
        let data: Vec<Vec<T>> = k
            .inputs
            .iter()
            .map(|i| gen_data(&mut rng, i.shape.iter().product(), Data::Special))
            .collect();
        for min_row in [1, 64] {
            let p = plan(&k, min_row);
            check(
                &format!("broadcast {shapes:?} min_row={min_row}\n{p}"),
                &k,
                &p,
                sched,
                &data,
            );
        }
    }
}

/// Index(axis) in maps and reductions, on outer and inner axes.
pub fn index<T: Elem>(sched: Schedule) {
    let mut rng = Rng::new(3);
    for shape in [vec![13usize], vec![5, 9], vec![3, 4, 70], vec![2, 3, 5]] {
        for axis in 0..shape.len() {
            let mut arena = ExprArena::new();
            let x = arena.input(0);
            let i = arena.index(axis as u32);
            let xi = arena.binary(BinaryOp::Add, x, i);
            let y = arena.input(1);
            let body = arena.binary(BinaryOp::Mul, xi, y);
            for kind in [
                KernelKind::Map,
                KernelKind::Reduce {
                    op: ReduceOp::Sum,
                    axes: (0..shape.len()).collect(),
                },
                KernelKind::Reduce {
                    op: ReduceOp::Max,
                    axes: vec![axis],
                },
            ] {
                // the second input, one row, makes the plan walk outer axes row by row (min_row = 1)
                let last = [*shape.last().unwrap()];
                let k = kernel(T::DTYPE, &[&shape, &last], arena.clone(), body, kind);
                let data: Vec<Vec<T>> = vec![
                    gen_data(&mut rng, shape.iter().product(), Data::Plain),
                    gen_data(&mut rng, last[0], Data::Plain),
                ];
                for min_row in [1, 64] {
                    let p = plan(&k, min_row);
                    check(
                        &format!("index({axis}) {shape:?} {:?}", k.kind),
                        &k,
                        &p,
                        sched,
                        &data,
                    );
                }
            }
        }
    }
}

fn data_for(op: ReduceOp) -> Vec<Data> {
    match op {
        ReduceOp::Sum => vec![Data::Plain, Data::Special, Data::Ties],
        ReduceOp::Prod => vec![Data::NearOne, Data::NearOneSpecial],
        ReduceOp::Any | ReduceOp::All => vec![Data::Truth, Data::Ties, Data::Special],
        _ => vec![Data::Special, Data::Ties, Data::Plain],
    }
}

/// Whole-array reductions over every length (every tail), with specials, ties and NaN.
pub fn reduce_all<T: Elem>(sched: Schedule) {
    let mut rng = Rng::new(4);
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let two = arena.literal(2.0);
    let scaled = arena.binary(BinaryOp::Mul, x, two);
    let logical = arena.binary(BinaryOp::Gt, x, two);
    for op in ReduceOp::ALL {
        for (bname, body) in [("x", x), ("2x", scaled), ("x>2", logical)] {
            for n in (0..=35).chain([100, 257, 1000]) {
                let kind = KernelKind::Reduce { op, axes: vec![0] };
                let k = kernel(T::DTYPE, &[&[n]], arena.clone(), body, kind);
                let p = plan(&k, 64);
                for d in data_for(op) {
                    let data = vec![gen_data::<T>(&mut rng, n, d)];
                    check(
                        &format!("{} of {bname} n={n} {d:?}", op.name()),
                        &k,
                        &p,
                        sched,
                        &data,
                    );
                }
            }
        }
    }
}

/// Hand-written edge cases: NaN positions, ties, signed zeros, empty extents.
pub fn reduce_edges<T: Elem>(sched: Schedule) {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let cases: Vec<Vec<f64>> = vec![
        vec![],
        vec![-0.0],
        vec![-0.0, -0.0, -0.0, -0.0, -0.0],
        vec![0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0, 0.0],
        vec![-0.0, 0.0, -0.0, 0.0, -0.0, 0.0, -0.0],
        vec![1.0, nan, 2.0, nan, -5.0],
        vec![nan; 9],
        vec![3.0, 1.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 3.0, 1.0, 1.0],
        vec![inf, inf, inf, inf, inf],
        vec![-inf, -inf, -inf],
        vec![
            2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0, 9.0, 9.0, 1.0, 9.0, 1.0, 9.0, nan,
        ],
        (0..40)
            .map(|i| if i == 33 { nan } else { (i % 7) as f64 })
            .collect(),
        (0..40).map(|i| if i % 11 == 10 { nan } else { 1.0 }).collect(),
        vec![inf, -inf, 1.0],
        vec![5e-324, -5e-324, 1e-310],
    ];
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    for op in ReduceOp::ALL {
        for c in &cases {
            let kind = KernelKind::Reduce { op, axes: vec![0] };
            let k = kernel(T::DTYPE, &[&[c.len()]], arena.clone(), x, kind);
            let p = plan(&k, 64);
            let data = vec![c.iter().map(|&v| T::from_f64(v)).collect::<Vec<T>>()];
            check(&format!("{} of {c:?}", op.name()), &k, &p, sched, &data);
            if op == ReduceOp::Sum && !c.is_empty() && c.iter().all(|v| v.to_bits() == (-0.0f64).to_bits()) {
                let got = jit(&k, &p, sched, &data).unwrap();
                // NumPy 2 sums from +0.0, as the interpreter does
                assert_eq!(got.values.to_f64()[0].to_bits(), 0.0f64.to_bits(), "sum of -0.0s");
            }
            if op == ReduceOp::Sum && c.is_empty() {
                let got = jit(&k, &p, sched, &data).unwrap();
                assert_eq!(got.values.to_f64()[0].to_bits(), 0.0f64.to_bits(), "empty sum");
            }
        }
    }
}

/// Reductions along axes: innermost, outer, mixed; 2-D and 3-D; with broadcast inputs.
pub fn reduce_axes<T: Elem>(sched: Schedule) {
    let mut rng = Rng::new(5);
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let y = arena.input(1);
    let body = arena.binary(BinaryOp::Mul, x, y);
    let shapes: Vec<(Vec<usize>, Vec<usize>)> = vec![
        (vec![6, 11], vec![11]),
        (vec![6, 11], vec![6, 1]),
        (vec![3, 70], vec![1]),
        (vec![4, 5, 7], vec![5, 7]),
        (vec![4, 5, 7], vec![4, 1, 7]),
        (vec![3, 4, 67], vec![4, 1]),
        (vec![0, 5], vec![5]),
        (vec![5, 0], vec![1]),
        (vec![1, 9], vec![9]),
    ];
    for op in ReduceOp::ALL {
        for (sx, sy) in &shapes {
            let rank = sx.len();
            let mut axes_list: Vec<Vec<usize>> = Vec::new();
            for mask in 0..(1usize << rank) {
                axes_list.push((0..rank).filter(|a| mask & (1 << a) != 0).collect());
            }
            for axes in axes_list {
                let kind = KernelKind::Reduce {
                    op,
                    axes: axes.clone(),
                };
                let k = kernel(T::DTYPE, &[sx, sy], arena.clone(), body, kind);
                let d = if op == ReduceOp::Prod {
                    Data::NearOneSpecial
                } else {
                    Data::Special
                };
                let data = vec![
                    gen_data::<T>(&mut rng, sx.iter().product(), d),
                    gen_data::<T>(
                        &mut rng,
                        sy.iter().product(),
                        if d == Data::Special { Data::Ties } else { d },
                    ),
                ];
                for min_row in [1, 64] {
                    let p = plan(&k, min_row);
                    check(
                        &format!("{} axes {axes:?} of {sx:?}*{sy:?} min_row={min_row}", op.name()),
                        &k,
                        &p,
                        sched,
                        &data,
                    );
                }
            }
        }
    }
}

/// `pow(x, e)` after the strength reduction (`kiln_ir::passes::strength`, chains on): NumPy's fast
/// paths (`x*x`, `1/x`, `x`, `1`, `sqrt`) and multiplication chains, compiled and interpreted, bit for
/// bit on special values and every tail length; the exact forms also against NumPy's formula.
pub fn strength_reduced<T: Elem>(sched: Schedule) {
    let mut rng = Rng::new(7);
    for e in [0.0, -0.0, 1.0, 2.0, -1.0, 0.5, 3.0, -2.0, 5.0, 8.0, -7.0] {
        let mut arena = ExprArena::new();
        let x = arena.input(0);
        let lit = arena.literal(e);
        let body = arena.binary(BinaryOp::Pow, x, lit);
        for n in [0, 1, 3, 4, 7, 9, 17, 33, 100] {
            let k = kernel(T::DTYPE, &[&[n]], arena.clone(), body, KernelKind::Map);
            let (k, done) = passes::strength::rewrite(&k, true);
            assert_eq!(done.len(), 1, "x**{e} is rewritten");
            let p = plan(&k, 64);
            let data = vec![gen_data::<T>(&mut rng, n, Data::Special)];
            check(&format!("x**{e} n={n}"), &k, &p, sched, &data);
            let numpy: Option<fn(f64) -> f64> = match e {
                0.0 => Some(|_| 1.0),
                1.0 => Some(|x| x),
                2.0 => Some(|x| x * x),
                -1.0 => Some(|x| 1.0 / x),
                _ => None,
            };
            if let (Some(f), Ok(out)) = (numpy, oracle_values(&k, &data)) {
                for (g, v) in out.iter().zip(&data[0]) {
                    let w = T::from_f64(f(v.to_f64()));
                    assert!(
                        g.to_f64().to_bits() == w.to_f64().to_bits() || (g.is_nan() && w.is_nan()),
                        "x**{e} at {v:?}: {g:?} vs {w:?}"
                    );
                }
            }
        }
    }
}

/// The interpreter's values of a map kernel over `data`, in `T`.
fn oracle_values<T: Elem>(k: &KernelIR, data: &[Vec<T>]) -> Result<Vec<T>> {
    let inputs: Vec<StridedInput<'_, T>> = data
        .iter()
        .map(|d| StridedInput {
            data: d,
            offset: 0,
            strides: vec![1],
        })
        .collect();
    let t = interpret(k, &inputs)?;
    Ok(t.values.to_f64().into_iter().map(T::from_f64).collect())
}

macro_rules! parity_suite {
    ($name:ident, $sched:expr) => {
        mod $name {
            use super::*;
            fn sched<T: Elem>() -> Schedule {
                $sched(T::DTYPE)
            }
            #[test]
            fn maps_1d_f64() {
                maps_1d::<f64>(sched::<f64>());
            }
            #[test]
            fn maps_1d_f32() {
                maps_1d::<f32>(sched::<f32>());
            }
            #[test]
            fn maps_broadcast_f64() {
                maps_broadcast::<f64>(sched::<f64>());
            }
            #[test]
            fn maps_broadcast_f32() {
                maps_broadcast::<f32>(sched::<f32>());
            }
            #[test]
            fn index_f64() {
                index::<f64>(sched::<f64>());
            }
            #[test]
            fn index_f32() {
                index::<f32>(sched::<f32>());
            }
            #[test]
            fn reduce_all_f64() {
                reduce_all::<f64>(sched::<f64>());
            }
            #[test]
            fn reduce_all_f32() {
                reduce_all::<f32>(sched::<f32>());
            }
            #[test]
            fn reduce_edges_f64() {
                reduce_edges::<f64>(sched::<f64>());
            }
            #[test]
            fn reduce_edges_f32() {
                reduce_edges::<f32>(sched::<f32>());
            }
            #[test]
            fn reduce_axes_f64() {
                reduce_axes::<f64>(sched::<f64>());
            }
            #[test]
            fn reduce_axes_f32() {
                reduce_axes::<f32>(sched::<f32>());
            }
            #[test]
            fn strength_reduced_f64() {
                strength_reduced::<f64>(sched::<f64>());
            }
            #[test]
            fn strength_reduced_f32() {
                strength_reduced::<f32>(sched::<f32>());
            }
        }
    };
}

parity_suite!(scalar, |_d: ElemType| Schedule::scalar());
parity_suite!(simd_u1_k1, |d: ElemType| Schedule::simd(d, 1, 1));
parity_suite!(simd_u4_k4, |d: ElemType| Schedule::simd(d, 4, 4));
parity_suite!(simd_u2_k3, |d: ElemType| Schedule::simd(d, 2, 3));
parity_suite!(simd_u3_k2, |d: ElemType| Schedule::simd(d, 3, 2));

/// Bitwise equality of two results (any NaN equals any NaN), type and shape.
fn same_tensor(a: &Tensor, b: &Tensor) -> bool {
    a.shape == b.shape
        && a.values.output_type() == b.values.output_type()
        && bits_equal(&a.values.to_f64(), &b.values.to_f64())
}

/// Chunked and spread runs: whole-array reductions cut into many small chunks (two passes) against
/// the interpreter; every kernel spread over scrambled threads bitwise equal to the same cut run
/// serially; maps and axis reductions bitwise equal to the one-call run.
fn chunked<T: Elem>(sched: Schedule) {
    let mut rng = Rng::new(9);
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let y = arena.input(1);
    let body = arena.binary(BinaryOp::Mul, x, y);
    let shapes: Vec<(Vec<usize>, Vec<usize>)> = vec![
        (vec![1000], vec![1000]),
        (vec![777], vec![1]),
        (vec![3, 301], vec![301]),
        (vec![40, 70], vec![40, 1]),
        (vec![5, 7, 300], vec![7, 300]),
        (vec![0, 300], vec![300]),
    ];
    for op in ReduceOp::ALL {
        for (sx, sy) in &shapes {
            let rank = sx.len();
            let mut kinds = vec![KernelKind::Map];
            for mask in 0..(1usize << rank) {
                let axes = (0..rank).filter(|a| mask & (1 << a) != 0).collect();
                kinds.push(KernelKind::Reduce { op, axes });
            }
            for kind in kinds {
                if kind == KernelKind::Map && op != ReduceOp::Sum {
                    continue;
                }
                let k = kernel(T::DTYPE, &[sx, sy], arena.clone(), body, kind);
                let d = if op == ReduceOp::Prod {
                    Data::NearOneSpecial
                } else {
                    Data::Special
                };
                let data = vec![
                    gen_data::<T>(&mut rng, sx.iter().product(), d),
                    gen_data::<T>(&mut rng, sy.iter().product(), Data::Ties),
                ];
                let p = plan(&k, 64);
                let bufs: Vec<Vec<T>> = (0..2)
                    .map(|i| {
                        if p.inputs[i] == InputPlan::Materialise {
                            materialise(&k, i, &data[i])
                        } else {
                            data[i].clone()
                        }
                    })
                    .collect();
                let refs: Vec<&[T]> = bufs.iter().map(|b| b.as_slice()).collect();
                let compiled = kiln_jit::compile(&k, &p, sched).unwrap();
                let what = format!("chunked {:?} of {sx:?}*{sy:?}", k.kind);
                let one = compiled.run(&k, &p, &refs);
                let cut = kiln_jit::RunConfig {
                    target_partials: 7,
                    min_chunk: 64,
                    ..Default::default()
                };
                let serial = compiled.run_with(&k, &p, &refs, &cut, &mut kiln_jit::Workspace::new());
                let spread_cfg = kiln_jit::RunConfig {
                    max_units: 5,
                    spread: &Scrambled,
                    ..cut
                };
                let mut ws = kiln_jit::Workspace::new();
                for _ in 0..2 {
                    // twice: the second run reuses the workspace's partials
                    let spread = compiled.run_with(&k, &p, &refs, &spread_cfg, &mut ws);
                    match (&serial, &spread, oracle(&k, &data)) {
                        (Ok(a), Ok(b), Ok(want)) => {
                            assert!(same_tensor(a, b), "{what}: spread differs from serial");
                            let scale = if op == ReduceOp::Sum {
                                let mut ka = k.clone();
                                ka.body = ka.arena.unary(UnaryOp::Abs, ka.body);
                                Some(oracle(&ka, &data).unwrap().values.to_f64())
                            } else {
                                Some(Vec::new())
                            };
                            compare(&what, &k, b, &want, scale.as_deref());
                        }
                        (Err(_), Err(_), Err(_)) => {}
                        other => panic!("{what}: {other:?}"),
                    }
                }
                let whole = matches!(&k.kind, KernelKind::Reduce { axes, .. } if axes.len() == rank);
                if !whole && let (Ok(a), Ok(b)) = (&one, &serial) {
                    assert!(same_tensor(a, b), "{what}: cut differs from one call");
                }
            }
        }
    }
}

#[test]
fn chunked_f64() {
    chunked::<f64>(Schedule::simd(ElemType::F64, 1, 4));
}

#[test]
fn chunked_f32() {
    chunked::<f32>(Schedule::simd(ElemType::F32, 1, 4));
}

#[test]
fn chunked_scalar() {
    chunked::<f64>(Schedule::scalar());
}

/// Rows a kept sum adds per pass (skeleton.rs `ROW_GROUP`).
const ROW_GROUP: usize = 8;

/// `values` (a power of two of them) summed as a balanced tree of pairs (`(v0 + v1) + (v2 + v3)`,
/// ...): the grouping of `Gen::acc_update_rows`.
fn tree_sum(values: &[f64]) -> f64 {
    match values {
        [v] => *v,
        _ => {
            let half = values.len() / 2;
            tree_sum(&values[..half]) + tree_sum(&values[half..])
        }
    }
}

/// The association kept sums promise (skeleton.rs, "Kept sums, several reduced rows per pass"):
/// per output, over each block of the leading axes in order, with `band = rows / ROW_GROUP`: `acc +=
/// tree_sum(x[i], x[i + band], ..., x[i + (ROW_GROUP - 1) * band])` for `i` in `0..band`, then `acc
/// += x[r]` for the last `rows % ROW_GROUP` rows, from -0.0, in f64; then the sign rule of
/// `ReduceOp::finish`. `x` is `[a][r][c]` of shape `[blocks, rows, cols]`; `reduce_blocks` adds the
/// blocks too (else one output row per block).
fn grouped_reference<T: Elem>(
    x: &[T],
    blocks: usize,
    rows: usize,
    cols: usize,
    reduce_blocks: bool,
) -> Vec<f64> {
    let at = |a: usize, r: usize, c: usize| x[(a * rows + r) * cols + c].to_f64();
    let outs = if reduce_blocks { 1 } else { blocks };
    let mut acc = vec![-0.0f64; outs * cols];
    let band = rows / ROW_GROUP;
    for a in 0..blocks {
        let o = if reduce_blocks { 0 } else { a * cols };
        for i in 0..band {
            for c in 0..cols {
                let vs: Vec<f64> = (0..ROW_GROUP).map(|m| at(a, i + m * band, c)).collect();
                acc[o + c] += tree_sum(&vs);
            }
        }
        for r in ROW_GROUP * band..rows {
            for c in 0..cols {
                acc[o + c] += at(a, r, c);
            }
        }
    }
    acc.into_iter()
        .map(|s| T::from_f64(ReduceOp::Sum.finish(s, false)).to_f64())
        .collect()
}

/// Kept sums (column sums, and sums over leading axes of 3-D arrays) add their rows in groups of
/// `ROW_GROUP` rows a band apart, fixed by the row count: row counts 0..=9, 17 and 26 around the
/// group (no group, one row, one group and a row, bands of 2 and 3 rows and the rows left), every
/// column tail (of the vectors, and of the row steps at full width, which take runs of 16 columns
/// and more: the same association whichever route, `with_wide(false)` the inline one), NaN, ±inf, -0.0 and subnormals; bit for bit the documented association
/// ([`grouped_reference`]), within the reduction bound of the interpreter, and bit-equal whatever
/// the number of threads (1..=4 units on scrambled threads) and whether rows are plan rows or one
/// flat run (the two plans); `x*y` with `y` a per-row broadcast against the interpreter likewise.
fn kept_sums<T: Elem>(sched: Schedule) {
    let mut rng = Rng::new(11);
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let y = arena.input(1);
    let xy = arena.binary(BinaryOp::Mul, x, y);
    for rows in (0..=9usize).chain([17, 26]) {
        for cols in [1usize, 2, 3, 5, 8, 16, 17, 23, 33, 1003] {
            for (blocks, reduce_blocks) in [(1, true), (3, false), (2, true)] {
                let shape = if blocks == 1 {
                    vec![rows, cols]
                } else {
                    vec![blocks, rows, cols]
                };
                let axes = match (blocks, reduce_blocks) {
                    (1, _) => vec![0],
                    (_, false) => vec![1],
                    (_, true) => vec![0, 1],
                };
                let n = blocks * rows * cols;
                let d = [Data::Special, Data::Plain, Data::Ties][rows % 3];
                let mut xs = gen_data::<T>(&mut rng, n, d);
                if cols > 2 {
                    // one column of -0.0 only (its sum is +0.0), one of +inf and -inf (NaN)
                    for i in (0..n).filter(|i| i % cols == 1) {
                        xs[i] = T::from_f64(-0.0);
                    }
                    for i in (0..n).filter(|i| i % cols == 2) {
                        xs[i] = T::from_f64(if (i / cols) % 2 == 0 {
                            f64::INFINITY
                        } else {
                            f64::NEG_INFINITY
                        });
                    }
                }
                let ys = gen_data::<T>(&mut rng, cols, Data::Ties);
                let what = format!("sum axes {axes:?} of {shape:?} {d:?}");
                let want = grouped_reference(&xs, blocks, rows, cols, reduce_blocks);
                for (body, name) in [(x, "x"), (xy, "x*y")] {
                    let mut shapes: Vec<&[usize]> = vec![&shape];
                    let ycols = [cols];
                    if body == xy {
                        shapes.push(&ycols);
                    }
                    let kind = KernelKind::Reduce {
                        op: ReduceOp::Sum,
                        axes: axes.clone(),
                    };
                    let k = kernel(T::DTYPE, &shapes, arena.clone(), body, kind);
                    let data = if body == xy {
                        vec![xs.clone(), ys.clone()]
                    } else {
                        vec![xs.clone()]
                    };
                    for min_row in [1, 64] {
                        let p = plan(&k, min_row);
                        let what = format!("{what} body {name} min_row={min_row}");
                        check(&what, &k, &p, sched, &data);
                        if p.inputs.contains(&InputPlan::Materialise) {
                            continue;
                        }
                        let refs: Vec<&[T]> = data.iter().map(|b| b.as_slice()).collect();
                        let compiled = kiln_jit::compile(&k, &p, sched).unwrap();
                        let one = compiled.run(&k, &p, &refs).unwrap();
                        if body == x {
                            assert!(
                                bits_equal(&one.values.to_f64(), &want),
                                "{what}: not the documented association"
                            );
                        }
                        for units in 1..=4 {
                            let cfg = kiln_jit::RunConfig {
                                max_units: units,
                                spread: &Scrambled,
                                ..Default::default()
                            };
                            let got = compiled
                                .run_with(&k, &p, &refs, &cfg, &mut kiln_jit::Workspace::new())
                                .unwrap();
                            assert!(same_tensor(&one, &got), "{what}: {units} units differ from one");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn kept_sums_f64() {
    let sched = Schedule::for_kernel(&kernel_of(ElemType::F64, ReduceOp::Sum, 1));
    kept_sums::<f64>(sched);
    kept_sums::<f64>(sched.with_wide(false));
    kept_sums::<f64>(Schedule::simd(ElemType::F64, 2, 3));
    kept_sums::<f64>(Schedule::scalar());
}

#[test]
fn kept_sums_f32() {
    let sched = Schedule::for_kernel(&kernel_of(ElemType::F32, ReduceOp::Sum, 1));
    kept_sums::<f32>(sched);
    kept_sums::<f32>(sched.with_wide(false));
    kept_sums::<f32>(Schedule::simd(ElemType::F32, 1, 1));
}

/// A start (`initial`, or the previous outputs) is folded exactly once per output, as the
/// interpreter folds it, chunked or not.
#[test]
fn starts() {
    let mut rng = Rng::new(10);
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max] {
        for (shape, axes) in [
            (vec![1000usize], vec![0usize]),
            (vec![0], vec![0]),
            (vec![6, 50], vec![1]),
            (vec![6, 50], vec![0]),
            (vec![3, 0], vec![1]),
            (vec![4, 5], vec![]),
        ] {
            let k = kernel(
                ElemType::F64,
                &[&shape],
                arena.clone(),
                x,
                KernelKind::Reduce { op, axes },
            );
            let data = [gen_data::<f64>(&mut rng, shape.iter().product(), Data::NearOne)];
            let p = plan(&k, 64);
            let compiled = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k)).unwrap();
            let n_out = k.output_shape().iter().product::<usize>();
            let prev: Vec<f64> = (0..n_out).map(|i| i as f64 - 2.5).collect();
            for start in [Start::Initial(10.0), Start::Initial(-0.0), Start::Each(&prev)] {
                let inputs = [StridedInput {
                    data: &data[0][..],
                    offset: 0,
                    strides: kiln_ir::shape::c_strides(&shape),
                }];
                let want = interpret_from(&k, &inputs, start).unwrap();
                for cut in [64, 1 << 15] {
                    let cfg = kiln_jit::RunConfig {
                        start,
                        min_chunk: cut,
                        target_partials: 5,
                        ..Default::default()
                    };
                    let got = compiled
                        .run_with(&k, &p, &[&data[0]], &cfg, &mut kiln_jit::Workspace::new())
                        .unwrap();
                    let scale = vec![2000.0; n_out];
                    compare(
                        &format!("{op:?} {shape:?} {start:?}"),
                        &k,
                        &got,
                        &want,
                        Some(&scale),
                    );
                }
            }
        }
    }
}

/// Scan kernels against the interpreter on small powers of two (their sums and products are exact in
/// any order, so every op compares bit for bit on the in-register prefix, the scalar tail and the
/// columns), and `run_into` writes the bits `run` gives and refuses an output of the wrong length.
#[test]
fn scans() {
    let vals = [-2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0];
    let mut arena = ExprArena::new();
    let (a, b) = (arena.input(0), arena.input(1));
    let body = arena.binary(BinaryOp::Mul, a, b);
    for (shape, other, axis) in [
        (vec![37usize], vec![37usize], Some(0usize)),
        (vec![5, 9], vec![9], Some(1)),
        (vec![5, 9], vec![1], Some(0)),
        (vec![3, 4, 5], vec![4, 5], None),
    ] {
        for op in ScanOp::ALL {
            for (exclusive, reverse, initial) in [(false, false, None), (true, true, Some(0.5))] {
                let mut scan = Scan::new(op, axis).with_initial(initial);
                scan.exclusive = exclusive;
                scan.reverse = reverse;
                let k = kernel(
                    ElemType::F64,
                    &[&shape, &other],
                    arena.clone(),
                    body,
                    KernelKind::Scan(scan),
                );
                let p = plan(&k, usize::MAX);
                let data: Vec<Vec<f64>> = [&shape, &other]
                    .iter()
                    .enumerate()
                    .map(|(s, sh)| {
                        (0..sh.iter().product())
                            .map(|i| vals[(i * 5 + s * 3) % 8])
                            .collect()
                    })
                    .collect();
                let want = oracle(&k, &data).unwrap();
                let bufs: Vec<Vec<f64>> = (0..2)
                    .map(|i| {
                        if p.inputs[i] == InputPlan::Materialise {
                            materialise(&k, i, &data[i])
                        } else {
                            data[i].clone()
                        }
                    })
                    .collect();
                let refs: Vec<&[f64]> = bufs.iter().map(|b| b.as_slice()).collect();
                for sched in [Schedule::for_kernel(&k), Schedule::scalar()] {
                    let code = kiln_jit::compile(&k, &p, sched).unwrap();
                    let got = code.run(&k, &p, &refs).unwrap();
                    assert!(
                        same_tensor(&got, &want),
                        "{scan:?} {shape:?}: {got:?} vs {want:?}"
                    );
                    let mut out = vec![f64::NAN; got.values.len()];
                    code.run_into(&k, &p, &refs, &mut out).unwrap();
                    assert!(same_tensor(
                        &Tensor {
                            shape: got.shape.clone(),
                            values: Values::F64(out)
                        },
                        &got
                    ));
                    let mut short = vec![0.0; got.values.len() - 1];
                    assert!(code.run_into(&k, &p, &refs, &mut short).is_err());
                }
            }
        }
    }
}

/// The generated code's reduction semantics against kiln-ir's (`ReduceOp::identity`, `merge`,
/// `finish`): an empty extent gives the identity (finished: a sum's is +0.0), and one value merged
/// into the identity is that value bit for bit (-0.0, ±inf and NaN included), on every schedule and
/// both dtypes. The accumulators the code keeps are its own; these are what they must agree with.
#[test]
fn generated_reductions_agree_with_reduce_op_semantics() {
    reduce_op_semantics::<f64>();
    reduce_op_semantics::<f32>();
}

fn reduce_op_semantics<T: Elem>() {
    let values = [-0.0, 0.0, 1.5, -2.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
    let dtype = T::DTYPE;
    for op in ReduceOp::ALL {
        for sched in [Schedule::for_kernel(&kernel_of(dtype, op, 1)), Schedule::scalar()] {
            // an empty extent: rows of nothing (ops without an identity refuse it)
            let k = kernel_of(dtype, op, 0);
            let got = jit::<T>(&k, &plan(&k, usize::MAX), sched, &[vec![]]);
            if !op.has_identity() {
                assert!(got.is_err(), "{op:?} over nothing");
                continue;
            }
            let want = T::from_f64(op.finish(op.identity(), false)).to_f64();
            let got = got.unwrap().values.to_f64();
            assert!(
                got.iter().all(|&g| same_bits(g, want)),
                "{op:?} {dtype}: {got:?} vs {want:?}"
            );
            // one value per row: merge(identity, x) is x (its truth value for any and all)
            let k = kernel_of(dtype, op, 1);
            let x: Vec<T> = values.iter().map(|&v| T::from_f64(v)).collect();
            let got = jit::<T>(&k, &plan(&k, usize::MAX), sched, &[x]).unwrap();
            for (g, &v) in got.values.to_f64().iter().zip(&values) {
                let want = match op {
                    ReduceOp::ArgMin | ReduceOp::ArgMax => 0.0,
                    _ => T::from_f64(op.finish(op.merge(op.identity(), v), false)).to_f64(),
                };
                assert!(same_bits(*g, want), "{op:?} {dtype} of {v}: {g} vs {want}");
            }
        }
    }
}

/// `op` over axis 1 of a `[7, len]` input.
fn kernel_of(dtype: ElemType, op: ReduceOp, len: usize) -> KernelIR {
    let mut arena = ExprArena::new();
    let body = arena.input(0);
    kernel(
        dtype,
        &[&[7, len]],
        arena,
        body,
        KernelKind::Reduce { op, axes: vec![1] },
    )
}

/// The truth of a comparison's 1 / 0 is the comparison's mask (`Gen::truth_mask`): `any(x > 0.5)`
/// and `where(x > 0.5, x, 0)` compare no point's value with zero (`fcmp ne`, but for a
/// reduction's merge with its output), and
/// agree with the interpreter bit for bit over specials (a NaN compares false), on every schedule.
#[test]
fn a_comparison_is_its_own_truth() {
    let mut rng = Rng::new(23);
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let half = arena.literal(0.5);
    let zero = arena.literal(0.0);
    let gt = arena.binary(BinaryOp::Gt, x, half);
    let pick = arena.select(gt, x, zero);
    for dtype in [ElemType::F64, ElemType::F32] {
        for (body, kind) in [
            (
                gt,
                KernelKind::Reduce {
                    op: ReduceOp::Any,
                    axes: vec![0],
                },
            ),
            (
                gt,
                KernelKind::Reduce {
                    op: ReduceOp::All,
                    axes: vec![0],
                },
            ),
            (pick, KernelKind::Map),
        ] {
            let k = kernel(dtype, &[&[1003]], arena.clone(), body, kind.clone());
            let p = plan(&k, 1);
            for sched in [
                Schedule::for_kernel(&k),
                Schedule::scalar(),
                Schedule::simd(dtype, 2, 3),
            ] {
                let c = kiln_jit::CompiledKernel::explain(&k, &p, sched).unwrap();
                let clif = &c.dumps().unwrap().clif;
                // (a reduction's merge with its previous output reads that output's 1 / 0 once)
                let ne = clif.matches("fcmp ne").count();
                assert!(ne <= 1, "{dtype:?} {kind:?}: {ne} compares with zero");
                for d in [Data::Special, Data::Plain] {
                    match dtype {
                        ElemType::F64 => check("truth", &k, &p, sched, &[gen_data::<f64>(&mut rng, 1003, d)]),
                        _ => check("truth", &k, &p, sched, &[gen_data::<f32>(&mut rng, 1003, d)]),
                    }
                }
            }
        }
    }
}

/// A whole-array `any` or `all` is the interpreter's whichever chunk decides it (the first, a
/// middle one, the last, none), cut into many chunks, one unit or several on scrambled threads,
/// a NaN counting as true, and again into a workspace whose partials an earlier run left decided.
#[test]
fn a_whole_array_any_or_all_whichever_chunk_decides() {
    let n = 10_000usize;
    for dtype in [ElemType::F64, ElemType::F32] {
        for op in [ReduceOp::Any, ReduceOp::All] {
            let mut arena = ExprArena::new();
            let x = arena.input(0);
            let kind = KernelKind::Reduce { op, axes: vec![0] };
            let k = kernel(dtype, &[&[n]], arena, x, kind);
            let p = plan(&k, 1);
            let compiled = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k)).unwrap();
            // any: zeros with one truth; all: ones with one zero
            let (plain, odd) = if op == ReduceOp::Any {
                (0.0, f64::NAN)
            } else {
                (1.0, 0.0)
            };
            let mut ws = kiln_jit::Workspace::new();
            for at in [Some(0), Some(1), Some(4999), Some(n - 1), None] {
                let mut xs = vec![plain; n];
                if let Some(a) = at {
                    xs[a] = odd;
                }
                let data: Vec<f64> = xs.clone();
                let want = match dtype {
                    ElemType::F64 => oracle(&k, std::slice::from_ref(&data)).unwrap(),
                    _ => oracle(&k, &[data.iter().map(|&v| v as f32).collect::<Vec<f32>>()]).unwrap(),
                };
                for units in [1, 3] {
                    let cfg = kiln_jit::RunConfig {
                        target_partials: 40,
                        min_chunk: 64,
                        max_units: units,
                        spread: &Scrambled,
                        ..Default::default()
                    };
                    let got = match dtype {
                        ElemType::F64 => compiled.run_with(&k, &p, &[&xs[..]], &cfg, &mut ws),
                        _ => {
                            let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
                            compiled.run_with(&k, &p, &[&x32[..]], &cfg, &mut ws)
                        }
                    }
                    .unwrap();
                    assert!(
                        same_tensor(&got, &want),
                        "{dtype:?} {op:?} decided at {at:?}, {units} units"
                    );
                }
            }
        }
    }
}
