//! kiln-jit's typed kernels through its own API ([`kiln_jit::compile_typed`]), against kiln-ir's
//! typed interpreter: a map, a reduction and a scan over int32, int64 and bool buffers at every
//! length around the vector width, splat and strided inputs, and the checks that refuse buffers that
//! do not fit the code (an error, never a read out of bounds). The operator-by-operator parity over
//! every type pair is `tests/typed_jit.rs` (through the front ends).

use kiln_ir::typed::TypedKernel;
use kiln_ir::*;
use kiln_jit::typed::{kernel_of, lanes_dtype, plan, why_not};
use kiln_jit::{BoundKernel, InputRef, OutSlice, RunConfig, Schedule, Stored, TypedView, Workspace};

mod common;
use common::Scrambled;

fn kernel(
    arena: ExprArena,
    body: NodeId,
    shapes: &[Vec<usize>],
    shape: &[usize],
    kind: KernelKind,
) -> KernelIR {
    KernelIR {
        dtype: ElemType::F64,
        inputs: shapes
            .iter()
            .enumerate()
            .map(|(i, s)| InputDecl::new(format!("in{i}"), s.clone()))
            .collect(),
        shape: shape.to_vec(),
        arena,
        body,
        extra: vec![],
        kind,
    }
}

fn whole<'a, T>(data: &'a [T], shape: &[usize], of: &[usize]) -> StridedInput<'a, T> {
    StridedInput {
        data,
        offset: 0,
        strides: kiln_ir::shape::broadcast_strides(shape, &kiln_ir::shape::c_strides(shape), of).unwrap(),
    }
}

/// `(a * 3 + b) % 7` over int32 `a` and `b` (`b` splat where `splat_b`).
fn mod7(n: usize, splat_b: bool) -> TypedKernel {
    let mut a = ExprArena::new();
    let (x, y, three, seven) = (a.input(0), a.input(1), a.int(3), a.int(7));
    let m = a.binary(BinaryOp::Mul, x, three);
    let s = a.binary(BinaryOp::Add, m, y);
    let body = a.binary(BinaryOp::Rem, s, seven);
    let b_shape = if splat_b { vec![1] } else { vec![n] };
    let k = kernel(a, body, &[vec![n], b_shape], &[n], KernelKind::Map);
    TypedKernel::new(&k, &[ElemType::I32, ElemType::I32], false).unwrap()
}

/// The typed kernel `t` compiled by [`kiln_jit::compile_typed`] (`scalar`: one lane) for inputs laid
/// out as `layouts` (None: C-contiguous of the declared shape), and bound.
fn bind(t: &TypedKernel, layouts: Option<Vec<InputLayout>>, scalar: bool) -> BoundKernel {
    let k = kernel_of(t);
    let layouts = layouts.unwrap_or_else(|| {
        k.inputs
            .iter()
            .map(|d| InputLayout::contiguous(&d.shape))
            .collect()
    });
    let p = plan(&k, &layouts).unwrap().expect("every input read in place");
    let schedule = if scalar {
        Schedule::scalar()
    } else {
        Schedule::for_kernel(&k)
    };
    kiln_jit::compile_typed(&k, &p, schedule)
        .unwrap()
        .bind(&k, &p)
        .unwrap()
}

/// A run of `code` (as [`bind`] made it, of float dtype `dtype`) over `ins`, with four units' worth of
/// threads and small chunks.
fn run(code: &BoundKernel, dtype: ElemType, ins: &[Stored<'_>]) -> kiln_jit::Result<Values> {
    let cfg = RunConfig {
        min_chunk: 64,
        max_units: 4,
        ..Default::default()
    };
    run_cut(code, dtype, ins, &cfg, &mut Workspace::new())
}

/// A run of `code` (of float dtype `dtype`) over `ins`, cut and spread as `cfg` says, its
/// partials in `ws`.
fn run_cut(
    code: &BoundKernel,
    dtype: ElemType,
    ins: &[Stored<'_>],
    cfg: &RunConfig<'_>,
    ws: &mut Workspace,
) -> kiln_jit::Result<Values> {
    match dtype {
        ElemType::F64 => {
            let refs: Vec<InputRef<'_, f64>> = ins
                .iter()
                .map(|s| match s {
                    Stored::F64(x) => InputRef::Slice(x),
                    other => InputRef::Stored(other.view()),
                })
                .collect();
            code.run_with(&refs, cfg, ws).map(|t| t.values)
        }
        ElemType::F32 => {
            let refs: Vec<InputRef<'_, f32>> = ins
                .iter()
                .map(|s| match s {
                    Stored::F32(x) => InputRef::Slice(x),
                    other => InputRef::Stored(other.view()),
                })
                .collect();
            code.run_with(&refs, cfg, ws).map(|t| t.values)
        }
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

#[test]
fn a_map_at_every_length_around_the_vector_width() {
    for splat_b in [false, true] {
        for n in [0usize, 1, 2, 3, 4, 5, 7, 8, 9, 17, 1000] {
            let t = mod7(n, splat_b);
            assert_eq!(why_not(&t), None);
            // 32-bit values: float32's four lanes
            assert_eq!(lanes_dtype(&t), ElemType::F32);
            let a: Vec<i32> = (0..n as i32).map(|k| k.wrapping_mul(-1_640_531_527)).collect();
            let b: Vec<i32> = if splat_b {
                vec![-5]
            } else {
                (0..n as i32).map(|k| k - 3).collect()
            };
            let want = evaluate(
                &t,
                &[
                    TypedInput::I32(whole(&a, &[n], &[n])),
                    TypedInput::I32(whole(&b, &[b.len()], &[n])),
                ],
                Start::Identity,
            )
            .unwrap();
            for scalar in [false, true] {
                let code = bind(&t, None, scalar);
                let got = run(&code, ElemType::F32, &[Stored::I32(&a), Stored::I32(&b)]).unwrap();
                assert_eq!(want.values, got, "n = {n}, splat {splat_b}, scalar {scalar}");
            }
        }
    }
}

/// Float functions in a typed kernel (of an int64 input `i` and a float64 `x`): `exp(i)` (a cast
/// to float64 first), `sin(i * 0.5)`, `arctan2(x, i)` and `hypot(x, 2.5)` take the wide routines on
/// blocks where the host has a level (their code calls the block functions), `x`'s read where it
/// lies: the bits of the same kernel compiled inline (`with_wide(false)`) at every length around a
/// block, as a map and as row sums, and the interpreter's within a relative 1e-13.
#[test]
fn float_functions_in_typed_kernels_take_the_wide_routines() {
    let build = |n: usize, kind: KernelKind| {
        let mut a = ExprArena::new();
        let (i, x) = (a.input(0), a.input(1));
        let e = a.unary(UnaryOp::Exp, i);
        let half = a.literal(0.5);
        let ih = a.binary(BinaryOp::Mul, i, half);
        let s = a.unary(UnaryOp::Sin, ih);
        let t = a.binary(BinaryOp::Arctan2, x, i);
        let c = a.literal(2.5);
        let h = a.binary(BinaryOp::Hypot, x, c);
        let es = a.binary(BinaryOp::Add, e, s);
        let th = a.binary(BinaryOp::Mul, t, h);
        let body = a.binary(BinaryOp::Add, es, th);
        let shape = if kind == KernelKind::Map {
            vec![n]
        } else {
            vec![3, n]
        };
        let k = kernel(a, body, &[shape.clone(), shape.clone()], &shape, kind);
        TypedKernel::new(&k, &[ElemType::I64, ElemType::F64], false).unwrap()
    };
    let row_sum = KernelKind::Reduce {
        op: ReduceOp::Sum,
        axes: vec![1],
    };
    for kind in [KernelKind::Map, row_sum] {
        for n in [1usize, 15, 16, 17, 255, 256, 257, 700] {
            let t = build(n, kind.clone());
            assert_eq!(why_not(&t), None);
            assert_eq!(lanes_dtype(&t), ElemType::F64);
            let points = if kind == KernelKind::Map { n } else { 3 * n };
            let shape = if kind == KernelKind::Map {
                vec![n]
            } else {
                vec![3, n]
            };
            let is: Vec<i64> = (0..points as i64).map(|k| (k * 37) % 41 - 20).collect();
            let xs: Vec<f64> = (0..points).map(|k| (k as f64 * 0.731).sin() * 30.0).collect();
            let want = evaluate(
                &t,
                &[
                    TypedInput::I64(whole(&is, &shape, &shape)),
                    TypedInput::F64(whole(&xs, &shape, &shape)),
                ],
                Start::Identity,
            )
            .unwrap();
            let k = kernel_of(&t);
            let layouts: Vec<_> = k
                .inputs
                .iter()
                .map(|d| InputLayout::contiguous(&d.shape))
                .collect();
            let p = plan(&k, &layouts).unwrap().expect("every input read in place");
            let sched = Schedule::for_kernel(&k);
            let ins = [Stored::I64(&is), Stored::F64(&xs)];
            let got = |s: Schedule| {
                let code = kiln_jit::compile_typed(&k, &p, s).unwrap().bind(&k, &p).unwrap();
                run(&code, ElemType::F64, &ins).unwrap().to_f64()
            };
            let (wide, inline) = (got(sched), got(sched.with_wide(false)));
            let what = format!("{kind:?} n = {n}");
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&wide), bits(&inline), "{what}");
            for (g, w) in wide.iter().zip(want.values.to_f64()) {
                assert!(
                    (g - w).abs() <= 1e-13 * w.abs().max(1.0),
                    "{what}: {g} against {w}"
                );
            }
            // the route shows in the code: block functions of one argument (slot, source, count)
            // and of two (slot, source, second, count) where the host routes them to its level
            use kiln_jit::wide::{Binary, Routine, WideFn, routed};
            let c = kiln_jit::CompiledKernel::explain_typed(&k, &p, sched).unwrap();
            let clif = &c.dumps().unwrap().clif;
            let one = [Routine::Exp, Routine::Sin].map(|r| routed(WideFn::One(r), ElemType::F64));
            let two = [Binary::Arctan2, Binary::Hypot].map(|r| routed(WideFn::Two(r), ElemType::F64));
            assert_eq!(clif.contains("= (i64, i64, i64) "), one.contains(&true), "{what}");
            assert_eq!(
                clif.contains("= (i64, i64, i64, i64) "),
                two.contains(&true),
                "{what}"
            );
        }
    }
}

/// `abs` of complex128 and complex64 values (`hypot` of the parts, which a block computes by the
/// wide routine of the magnitude, reading the points where they lie, where the host routes it)
/// has the bits of the inline code
/// (`with_wide(false)`) over the edge values (NaN, infinite, huge, subnormal and zero parts) and
/// ordinary ones at lengths around a block, and the interpreter's within one ULP.
#[test]
fn abs_of_complex_values_takes_the_wide_magnitude() {
    use kiln_jit::wide::{WideFn, routed};
    for n in [1usize, 16, 17, 300, 700] {
        for (what, points) in [("edge", edge_points(n)), ("plain", plain_points(n))] {
            let narrow: Vec<num_complex::Complex32> = points
                .iter()
                .map(|z| num_complex::Complex32::new(z.re as f32, z.im as f32))
                .collect();
            for (ct, ft) in [(ElemType::C128, ElemType::F64), (ElemType::C64, ElemType::F32)] {
                let stored = match ct {
                    ElemType::C128 => Stored::C128(&points),
                    _ => Stored::C64(&narrow),
                };
                let input = match ct {
                    ElemType::C128 => TypedInput::C128(whole(&points, &[n], &[n])),
                    _ => TypedInput::C64(whole(&narrow, &[n], &[n])),
                };
                // the magnitude of the input (written straight into the output), of a computed
                // value (its points computed into their slot), and read back from its slot
                // and beside more vector math than a kernel inlines (libm's functions then, the
                // inline `abs` libm's hypot: no routine may give a row piece other bits)
                for form in ["abs(z)", "abs(z * z)", "abs(z) + abs(z)", "abs(z) + 25 exps"] {
                    let mut a = ExprArena::new();
                    let z = a.input(0);
                    let body = match form {
                        "abs(z)" => a.unary(UnaryOp::Abs, z),
                        "abs(z * z)" => {
                            let zz = a.binary(BinaryOp::Mul, z, z);
                            a.unary(UnaryOp::Abs, zz)
                        }
                        "abs(z) + abs(z)" => {
                            let m = a.unary(UnaryOp::Abs, z);
                            a.binary(BinaryOp::Add, m, m)
                        }
                        _ => {
                            let r = a.unary(UnaryOp::Real, z);
                            let mut acc = a.unary(UnaryOp::Abs, z);
                            for k in 1..=25 {
                                let c = a.intern(Node::literal(f64::from(k) * 0.01));
                                let m = a.binary(BinaryOp::Mul, r, c);
                                let e = a.unary(UnaryOp::Exp, m);
                                acc = a.binary(BinaryOp::Add, acc, e);
                            }
                            acc
                        }
                    };
                    let t =
                        TypedKernel::new(&kernel(a, body, &[vec![n]], &[n], KernelKind::Map), &[ct], false)
                            .unwrap();
                    assert_eq!(why_not(&t), None);
                    let want = evaluate(&t, std::slice::from_ref(&input), Start::Identity)
                        .unwrap()
                        .values
                        .to_f64();
                    let k = kernel_of(&t);
                    let p = plan(&k, &[InputLayout::contiguous(&[n])]).unwrap().unwrap();
                    let sched = Schedule::for_kernel(&k);
                    let got = |s: Schedule| {
                        let code = kiln_jit::compile_typed(&k, &p, s).unwrap().bind(&k, &p).unwrap();
                        run(&code, k.dtype, std::slice::from_ref(&stored))
                            .unwrap()
                            .to_f64()
                    };
                    let (wide, inline) = (got(sched), got(sched.with_wide(false)));
                    let label = format!("{what} {ct} n = {n}: {form}");
                    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                    assert_eq!(bits(&wide), bits(&inline), "{label}");
                    let ulp = if ft == ElemType::F64 {
                        f64::EPSILON
                    } else {
                        f32::EPSILON as f64
                    };
                    for (g, w) in wide.iter().zip(&want) {
                        let close = g == w || (g.is_nan() && w.is_nan()) || (g - w).abs() <= ulp * w.abs();
                        assert!(close, "{label}: {g:e} against {w:e}");
                    }
                    // the block function of the magnitude called: the call of three arguments (slot,
                    // points, count), the only call such a kernel makes
                    let calls = |s: Schedule| {
                        let c = kiln_jit::CompiledKernel::explain_typed(&k, &p, s).unwrap();
                        let clif = &c.dumps().unwrap().clif;
                        clif.lines()
                            .any(|l| l.contains("call fn") && l.matches(", ").count() == 2)
                    };
                    let staged = routed(WideFn::ComplexAbs, k.dtype) && !form.contains("exps");
                    assert_eq!(calls(sched), staged, "{label}");
                    assert!(!calls(sched.with_wide(false)), "{label}");
                }
            }
        }
    }
}

/// Complex division of complex128 and complex64 values on blocks (the wide routine of complex
/// division, where the host routes it) has the interpreter's bits and the inline code's
/// (`with_wide(false)`), over the edge values and ordinary ones at lengths around a block, with
/// inputs read in place (`z / w`), with dividends and divisors computed into the block's slots
/// (`(z + w) / (z * w)`), and read back from its slot (`z / w + z`; the others are written
/// straight into the output); the code calls the block function where the route is taken.
#[test]
fn complex_division_takes_the_wide_routine() {
    use kiln_jit::wide::{WideFn, routed};
    for n in [1usize, 15, 16, 17, 300, 700] {
        for (what, points) in [("edge", edge_points(n)), ("plain", plain_points(n))] {
            // w: the points in another order, so that every kind meets every other
            let other: Vec<num_complex::Complex64> = (0..n).map(|k| points[(k * 7 + 3) % n]).collect();
            let narrow = |v: &[num_complex::Complex64]| -> Vec<num_complex::Complex32> {
                v.iter()
                    .map(|z| num_complex::Complex32::new(z.re as f32, z.im as f32))
                    .collect()
            };
            let (z32, w32) = (narrow(&points), narrow(&other));
            for (ct, ft) in [(ElemType::C128, ElemType::F64), (ElemType::C64, ElemType::F32)] {
                let (stored, inputs) = match ct {
                    ElemType::C128 => (
                        [Stored::C128(&points), Stored::C128(&other)],
                        [
                            TypedInput::C128(whole(&points, &[n], &[n])),
                            TypedInput::C128(whole(&other, &[n], &[n])),
                        ],
                    ),
                    _ => (
                        [Stored::C64(&z32), Stored::C64(&w32)],
                        [
                            TypedInput::C64(whole(&z32, &[n], &[n])),
                            TypedInput::C64(whole(&w32, &[n], &[n])),
                        ],
                    ),
                };
                // the quotient of the inputs, of computed operands, and read back from its slot
                for form in ["z / w", "(z + w) / (z * w)", "z / w + z"] {
                    let mut a = ExprArena::new();
                    let (z, w) = (a.input(0), a.input(1));
                    let body = match form {
                        "z / w" => a.binary(BinaryOp::Div, z, w),
                        "(z + w) / (z * w)" => {
                            let s = a.binary(BinaryOp::Add, z, w);
                            let p = a.binary(BinaryOp::Mul, z, w);
                            a.binary(BinaryOp::Div, s, p)
                        }
                        _ => {
                            let q = a.binary(BinaryOp::Div, z, w);
                            a.binary(BinaryOp::Add, q, z)
                        }
                    };
                    let shapes = [vec![n], vec![n]];
                    let t =
                        TypedKernel::new(&kernel(a, body, &shapes, &[n], KernelKind::Map), &[ct, ct], false)
                            .unwrap();
                    assert_eq!(why_not(&t), None);
                    let want = evaluate(&t, &inputs, Start::Identity).unwrap().values.to_f64();
                    let k = kernel_of(&t);
                    assert_eq!(k.dtype, ft, "complex values in their parts' lanes");
                    let layouts = [InputLayout::contiguous(&[n]), InputLayout::contiguous(&[n])];
                    let p = plan(&k, &layouts).unwrap().unwrap();
                    let sched = Schedule::for_kernel(&k);
                    let got = |s: Schedule| {
                        let code = kiln_jit::compile_typed(&k, &p, s).unwrap().bind(&k, &p).unwrap();
                        run(&code, k.dtype, &stored).unwrap().to_f64()
                    };
                    let (wide, inline) = (got(sched), got(sched.with_wide(false)));
                    let label = format!("{what} {ct} n = {n}: {form}");
                    let bits = |v: &[f64]| {
                        v.iter()
                            .map(|x| if x.is_nan() { u64::MAX } else { x.to_bits() })
                            .collect::<Vec<_>>()
                    };
                    assert_eq!(bits(&wide), bits(&inline), "{label}");
                    assert_eq!(bits(&wide), bits(&want), "{label}");
                    // the block function called: a call of four arguments (slot, source, second,
                    // count), the only call such a kernel makes
                    let calls = |s: Schedule| {
                        let c = kiln_jit::CompiledKernel::explain_typed(&k, &p, s).unwrap();
                        let clif = &c.dumps().unwrap().clif;
                        clif.lines()
                            .any(|l| l.contains("call fn") && l.matches(", ").count() == 3)
                    };
                    assert_eq!(calls(sched), routed(WideFn::ComplexDiv, ft), "{label}");
                    assert!(!calls(sched.with_wide(false)), "{label}");
                }
            }
        }
    }
}

/// `p` as bool bytes of every kind NumPy's memory may hold: a true as 1, 2, 255 or 128 in turn
/// (compiled code reads a byte as true where it is nonzero: [`Stored::Bool`]).
fn truths(p: &[bool]) -> Vec<u8> {
    p.iter()
        .enumerate()
        .map(|(k, &t)| if t { [1, 2, 255, 128][k % 4] } else { 0 })
        .collect()
}

/// The typed kernel `t` compiled (vector code, and scalar) and run on `stored`: the interpreter's
/// values over `inputs` (the same elements), bit for bit.
fn agrees(t: &TypedKernel, inputs: &[TypedInput<'_>], stored: &[Stored<'_>], what: &str) {
    let want = evaluate(t, inputs, Start::Identity).unwrap();
    for scalar in [false, true] {
        let code = bind(t, None, scalar);
        let got = run(&code, lanes_dtype(t), stored).unwrap();
        assert_eq!(want.values, got, "{what}, scalar {scalar}");
    }
}

/// Bool inputs given as bytes other than 0 and 1 read as true where nonzero, by every way the
/// code reads bools: 16 byte lanes (a map of bools alone), masks of 2 and 4 lanes (a select of
/// int64 and of int32 values), several steps' masks at once (bool results of 2 and 4 lanes),
/// converted to float64 values (`x * b`), and the scalar tail; the interpreter's values over the
/// same bools.
#[test]
fn bool_bytes_are_true_where_nonzero() {
    type Build = fn(&mut ExprArena) -> NodeId;
    let cases: [(&str, [ElemType; 2], Build); 7] = [
        ("b & c", [ElemType::Bool, ElemType::Bool], |a| {
            let (b, c) = (a.input(0), a.input(1));
            a.binary(BinaryOp::And, b, c)
        }),
        ("~b == c", [ElemType::Bool, ElemType::Bool], |a| {
            let (b, c) = (a.input(0), a.input(1));
            let n = a.unary(UnaryOp::Not, b);
            a.binary(BinaryOp::Eq, n, c)
        }),
        ("where(b, i, -1)", [ElemType::Bool, ElemType::I64], |a| {
            let (b, i, m) = (a.input(0), a.input(1), a.int(-1));
            a.select(b, i, m)
        }),
        ("where(b, i32, 7)", [ElemType::Bool, ElemType::I32], |a| {
            let (b, i, m) = (a.input(0), a.input(1), a.int(7));
            a.select(b, i, m)
        }),
        ("x * b", [ElemType::Bool, ElemType::F64], |a| {
            let (b, x) = (a.input(0), a.input(1));
            a.binary(BinaryOp::Mul, x, b)
        }),
        // bool results of 2 and 4 lanes: the steps' bools loaded at once (`load_bool_steps`)
        ("b & (x < 3.0)", [ElemType::Bool, ElemType::F64], |a| {
            let (b, x, c) = (a.input(0), a.input(1), a.literal(3.0));
            let lt = a.binary(BinaryOp::Lt, x, c);
            a.binary(BinaryOp::And, b, lt)
        }),
        ("b ^ (i32 > 7)", [ElemType::Bool, ElemType::I32], |a| {
            let (b, i, c) = (a.input(0), a.input(1), a.int(7));
            let gt = a.binary(BinaryOp::Gt, i, c);
            a.binary(BinaryOp::BitXor, b, gt)
        }),
    ];
    for (what, types, build) in cases {
        for n in [0usize, 1, 3, 7, 15, 16, 17, 33, 100] {
            let p: Vec<bool> = (0..n).map(|v| v % 3 != 1).collect();
            let q: Vec<bool> = (0..n).map(|v| v % 5 < 2).collect();
            let i64s: Vec<i64> = (0..n as i64).map(|v| v * 3 - 50).collect();
            let i32s: Vec<i32> = (0..n as i32).map(|v| v * 3 - 50).collect();
            let f64s: Vec<f64> = (0..n).map(|v| v as f64 - 0.5).collect();
            let mut a = ExprArena::new();
            let body = build(&mut a);
            let k = kernel(a, body, &[vec![n], vec![n]], &[n], KernelKind::Map);
            let t = TypedKernel::new(&k, &types, false).unwrap();
            let whole_of = |ty: ElemType| match ty {
                ElemType::Bool => TypedInput::Bool(whole(&q, &[n], &[n])),
                ElemType::I64 => TypedInput::I64(whole(&i64s, &[n], &[n])),
                ElemType::I32 => TypedInput::I32(whole(&i32s, &[n], &[n])),
                _ => TypedInput::F64(whole(&f64s, &[n], &[n])),
            };
            let (p_bytes, q_bytes) = (truths(&p), truths(&q));
            let stored_of = |ty: ElemType| match ty {
                ElemType::Bool => Stored::Bool(&q_bytes),
                ElemType::I64 => Stored::I64(&i64s),
                ElemType::I32 => Stored::I32(&i32s),
                _ => Stored::F64(&f64s),
            };
            agrees(
                &t,
                &[TypedInput::Bool(whole(&p, &[n], &[n])), whole_of(types[1])],
                &[Stored::Bool(&p_bytes), stored_of(types[1])],
                &format!("{what}, n = {n}"),
            );
        }
    }
}

/// Two bool inputs of a bool map of 2 lanes (`b & c & (x < 3.0)`, `(b ^ c) | (x > 5.0)`, and
/// `where(b, x, 0.0) < 2.0`, where `b` is read both as the iteration's bytes and as each step's
/// lanes: packed.rs), their bytes other than 0 and 1, at every length around an iteration: the
/// interpreter's values over the same bools.
#[test]
fn bool_maps_of_two_bool_inputs_compute_on_packed_bytes() {
    type Build = fn(&mut ExprArena) -> NodeId;
    let cases: [(&str, Build); 3] = [
        ("b & c & (x < 3.0)", |a| {
            let (b, c, x, k) = (a.input(0), a.input(1), a.input(2), a.literal(3.0));
            let bc = a.binary(BinaryOp::BitAnd, b, c);
            let lt = a.binary(BinaryOp::Lt, x, k);
            a.binary(BinaryOp::BitAnd, bc, lt)
        }),
        ("(b ^ c) | (x > 5.0)", |a| {
            let (b, c, x, k) = (a.input(0), a.input(1), a.input(2), a.literal(5.0));
            let bc = a.binary(BinaryOp::BitXor, b, c);
            let gt = a.binary(BinaryOp::Gt, x, k);
            a.binary(BinaryOp::BitOr, bc, gt)
        }),
        ("(where(b, x, 0.0) < 2.0) == ~c", |a| {
            let (b, c, x, z, k) = (a.input(0), a.input(1), a.input(2), a.literal(0.0), a.literal(2.0));
            let w = a.select(b, x, z);
            let lt = a.binary(BinaryOp::Lt, w, k);
            let nc = a.unary(UnaryOp::Not, c);
            a.binary(BinaryOp::Eq, lt, nc)
        }),
    ];
    for (what, build) in cases {
        for n in [0usize, 1, 7, 8, 9, 15, 16, 17, 33, 100] {
            let p: Vec<bool> = (0..n).map(|v| v % 3 != 1).collect();
            let q: Vec<bool> = (0..n).map(|v| v % 5 < 2).collect();
            let x: Vec<f64> = (0..n).map(|v| v as f64 * 0.25 - 1.0).collect();
            let mut a = ExprArena::new();
            let body = build(&mut a);
            let k = kernel(a, body, &[vec![n], vec![n], vec![n]], &[n], KernelKind::Map);
            let t = TypedKernel::new(&k, &[ElemType::Bool, ElemType::Bool, ElemType::F64], false).unwrap();
            let (pb, qb) = (truths(&p), truths(&q));
            agrees(
                &t,
                &[
                    TypedInput::Bool(whole(&p, &[n], &[n])),
                    TypedInput::Bool(whole(&q, &[n], &[n])),
                    TypedInput::F64(whole(&x, &[n], &[n])),
                ],
                &[Stored::Bool(&pb), Stored::Bool(&qb), Stored::F64(&x)],
                &format!("{what}, n = {n}"),
            );
        }
    }
}

#[test]
fn a_masked_sum_and_a_scan_of_int64_and_bool() {
    for n in [0usize, 1, 2, 3, 5, 64, 999] {
        let k: Vec<i64> = (0..n as i64)
            .map(|v| v.wrapping_mul(0x5851_f42d_4c95_7f2d))
            .collect();
        let p: Vec<bool> = (0..n).map(|v| v % 3 != 1).collect();
        let mut a = ExprArena::new();
        let (pi, ki, zero) = (a.input(0), a.input(1), a.int(0));
        let body = a.select(pi, ki, zero);
        for kind in [
            KernelKind::Reduce {
                op: ReduceOp::Sum,
                axes: vec![0],
            },
            KernelKind::Reduce {
                op: ReduceOp::ArgMax,
                axes: vec![0],
            },
            KernelKind::Scan(kiln_ir::scan::Scan::new(kiln_ir::scan::ScanOp::Prod, Some(0))),
            KernelKind::Scan(
                kiln_ir::scan::Scan::new(kiln_ir::scan::ScanOp::Sum, Some(0)).with_initial(Some(-3.0)),
            ),
        ] {
            if n == 0
                && matches!(
                    kind,
                    KernelKind::Reduce {
                        op: ReduceOp::ArgMax,
                        ..
                    }
                )
            {
                continue;
            }
            let kr = kernel(a.clone(), body, &[vec![n], vec![n]], &[n], kind.clone());
            let t = TypedKernel::new(&kr, &[ElemType::Bool, ElemType::I64], false).unwrap();
            assert_eq!(lanes_dtype(&t), ElemType::F64);
            agrees(
                &t,
                &[
                    TypedInput::Bool(whole(&p, &[n], &[n])),
                    TypedInput::I64(whole(&k, &[n], &[n])),
                ],
                &[Stored::Bool(&truths(&p)), Stored::I64(&k)],
                &format!("{kind:?}, n = {n}"),
            );
        }
    }
}

#[test]
fn buffers_that_do_not_fit_the_code_are_errors() {
    let t = mod7(8, false);
    let code = bind(&t, None, false);
    let (a, short) = ([1i32; 8], [3i32; 7]);
    let wide = [1i64; 8];
    let e = run(&code, ElemType::F32, &[Stored::I32(&a), Stored::I32(&short)]).unwrap_err();
    assert!(e.to_string().contains("input 1"), "{e}");
    let e = run(&code, ElemType::F32, &[Stored::I32(&a), Stored::I64(&wide)]).unwrap_err();
    assert!(e.to_string().contains("input 1"), "{e}");
    let e = run(&code, ElemType::F32, &[Stored::I32(&a)]).unwrap_err();
    assert!(e.to_string().contains('1') && e.to_string().contains('2'), "{e}");
    // a float64 run of a float32-lane kernel
    let e = run(&code, ElemType::F64, &[Stored::I32(&a), Stored::I32(&a)]).unwrap_err();
    assert!(matches!(e, kiln_jit::JitError::DType { .. }), "{e}");
    // a kernel the code generator declines is an error naming why, not a panic
    let mut ar = ExprArena::new();
    let body = ar.input(0);
    let scan = kiln_ir::scan::Scan::new(kiln_ir::scan::ScanOp::Sum, None).with_initial(Some(2.5));
    let k = kernel(ar, body, &[vec![4]], &[4], KernelKind::Scan(scan));
    let t = TypedKernel::new(&k, &[ElemType::I32], false).unwrap();
    let k = kernel_of(&t);
    let layouts = [InputLayout::contiguous(&[4])];
    let p = plan(&k, &layouts).unwrap().unwrap();
    let Err(e) = kiln_jit::compile_typed(&k, &p, Schedule::for_kernel(&k)) else {
        panic!("a scan whose initial value int64 cannot hold compiled")
    };
    assert!(
        e.to_string()
            .contains("the scan cumsum with an initial value its accumulator does not hold"),
        "{e}"
    );
}

#[test]
fn strided_views_are_read_in_place_and_checked() {
    // `(a * 3 + b) % 7` with `a` a reversed view (strides [-1] over 8 points), read in place; a
    // view of other strides, a contiguous buffer given for the view, and a short buffer are errors
    // (never a read out of bounds)
    let t = mod7(8, false);
    let layouts = vec![
        InputLayout {
            shape: vec![8],
            contiguous: false,
            strides: Some(vec![-1]),
        },
        InputLayout::contiguous(&[8]),
    ];
    let data: Vec<i32> = (0..16i32)
        .map(|k| k.wrapping_mul(1_000_000_007).wrapping_sub(5))
        .collect();
    let base = ndarray::ArrayView1::from(&data[..]);
    let b: Vec<i32> = (0..8).map(|k| k - 3).collect();
    let reversed = base.slice(ndarray::s![..8;-1]).into_dyn();
    let copy: Vec<i32> = reversed.iter().copied().collect();
    let want = evaluate(
        &t,
        &[
            TypedInput::I32(whole(&copy, &[8], &[8])),
            TypedInput::I32(whole(&b, &[8], &[8])),
        ],
        Start::Identity,
    )
    .unwrap();
    for scalar in [false, true] {
        let code = bind(&t, Some(layouts.clone()), scalar);
        let got = run(
            &code,
            ElemType::F32,
            &[Stored::View(TypedView::I32(reversed.clone())), Stored::I32(&b)],
        )
        .unwrap();
        assert_eq!(want.values, got, "scalar {scalar}");
        let stepped = base.slice(ndarray::s![..;-2]).into_dyn();
        assert!(
            run(
                &code,
                ElemType::F32,
                &[Stored::View(TypedView::I32(stepped)), Stored::I32(&b)]
            )
            .is_err()
        );
        let e = run(
            &code,
            ElemType::F32,
            &[Stored::I32(&data[..8]), Stored::I32(&b[..4])],
        )
        .unwrap_err();
        assert!(e.to_string().contains("input"), "{e}");
    }
}

/// Kernels built by hand in forms the typing never makes (operands of two types, an int32 `where`
/// condition, `not` of an int64) are refused by `compile_typed`, never compiled into wrong code or a
/// panic.
#[test]
fn hand_made_kernels_of_mismatched_types_are_refused() {
    let build = |body: Body| {
        let mut a = ExprArena::new();
        let root = body(&mut a);
        let mut k = kernel(a, root, &[vec![9], vec![9]], &[9], KernelKind::Map);
        k.inputs[0].stored = Some(ElemType::I32);
        k.inputs[1].stored = Some(ElemType::I64);
        k
    };
    type Body = fn(&mut ExprArena) -> NodeId;
    let cases: [(Body, &str); 3] = [
        (
            |a| {
                let (x, y) = (a.input(0), a.input(1));
                let ny = a.unary(UnaryOp::Neg, y);
                a.select(x, y, ny)
            },
            "a where of a int32 condition",
        ),
        (
            |a| {
                let y = a.input(1);
                a.unary(UnaryOp::Not, y)
            },
            "not of int64",
        ),
        (
            |a| {
                let (x, y) = (a.input(0), a.input(1));
                a.binary(BinaryOp::Add, x, y)
            },
            "of int32 and int64",
        ),
    ];
    for (body, why) in cases {
        let k = build(body);
        let layouts: Vec<_> = k
            .inputs
            .iter()
            .map(|d| InputLayout::contiguous(&d.shape))
            .collect();
        let p = plan(&k, &layouts).unwrap().unwrap();
        let Err(e) = kiln_jit::compile_typed(&k, &p, Schedule::for_kernel(&k)) else {
            panic!("a kernel of mismatched types compiled ({why})")
        };
        assert!(e.to_string().contains(why), "{e}");
    }
}

/// A run of `code` (of float64 lanes, as every complex scan and reduction is) over `ins` from
/// `start`, with four units' worth of threads and small chunks.
fn run_from(code: &BoundKernel, ins: &[Stored<'_>], start: Start<'_>) -> kiln_jit::Result<Values> {
    let cfg = RunConfig {
        min_chunk: 64,
        max_units: 4,
        start,
        ..Default::default()
    };
    let refs: Vec<InputRef<'_, f64>> = ins.iter().map(|s| InputRef::Stored(s.view())).collect();
    code.run_with(&refs, &cfg, &mut Workspace::new())
        .map(|t| t.values)
}

/// The complex values `v` (either complex type) as complex128, exactly.
fn c128s(v: &Values) -> Vec<num_complex::Complex64> {
    match v {
        Values::C128(x) => x.clone(),
        Values::C64(x) => x
            .iter()
            .map(|z| num_complex::Complex64::new(z.re.into(), z.im.into()))
            .collect(),
        other => panic!("complex values expected, not {}", other.output_type()),
    }
}

use kiln_ir::num_complex;

/// `n` complex values whose parts cycle through the edge values (zeros of both signs, ±1, a half,
/// NaN, ±inf, a large value, a subnormal) at different rates, so that every pair of parts occurs.
fn edge_points(n: usize) -> Vec<num_complex::Complex64> {
    let e = [
        0.0,
        -0.0,
        1.0,
        -1.0,
        0.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        1e300,
        1e-310,
        3.25,
        -2.0,
    ];
    (0..n)
        .map(|k| num_complex::Complex64::new(e[k % e.len()], e[(k / e.len() + 5 * k) % e.len()]))
        .collect()
}

/// `n` finite complex values of modest size (sums and products of a few hundred stay finite).
fn plain_points(n: usize) -> Vec<num_complex::Complex64> {
    (0..n)
        .map(|k| {
            let k = k as f64;
            num_complex::Complex64::from_polar(1.0 + 0.01 * (k * 0.618).sin(), k * 0.37)
        })
        .collect()
}

/// Cumulative sums and products of complex64 and complex128 values compiled (both schedules)
/// give the typed interpreter's bits (any NaN equal to any NaN): flattened and along every axis of
/// a matrix, forward and reversed, inclusive and exclusive, with and without an `initial`, over the
/// edge values (NaN, infinite, signed zero and subnormal parts), empty, one element and lengths
/// around the vector width.
#[test]
fn complex_scans_equal_the_interpreter_bit_for_bit() {
    use kiln_ir::scan::{Scan, ScanOp};
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    let mut checked = 0;
    for shape in [
        vec![0, 3],
        vec![1, 1],
        vec![3, 1],
        vec![5, 7],
        vec![2, 9],
        vec![13, 4],
    ] {
        let n: usize = shape.iter().product();
        for (what, points) in [("edge", edge_points(n)), ("plain", plain_points(n))] {
            let narrow: Vec<num_complex::Complex32> = points
                .iter()
                .map(|z| num_complex::Complex32::new(z.re as f32, z.im as f32))
                .collect();
            for (ct, stored) in [
                (ElemType::C128, Stored::C128(&points)),
                (ElemType::C64, Stored::C64(&narrow)),
            ] {
                let input = match ct {
                    ElemType::C128 => TypedInput::C128(whole(&points, &shape, &shape)),
                    _ => TypedInput::C64(whole(&narrow, &shape, &shape)),
                };
                for op in [ScanOp::Sum, ScanOp::Prod] {
                    for axis in [None, Some(0), Some(1)] {
                        for (exclusive, reverse, initial) in [
                            (false, false, None),
                            (true, false, None),
                            (false, true, None),
                            (true, true, Some(-0.0)),
                            (false, false, Some(2.5)),
                            (true, false, Some(-3.0)),
                        ] {
                            let mut scan = Scan::new(op, axis).with_initial(initial);
                            scan.exclusive = exclusive;
                            scan.reverse = reverse;
                            // `z * z` beside `z`: a body computed, not only read
                            let mut a = ExprArena::new();
                            let z = a.input(0);
                            let zz = a.binary(BinaryOp::Mul, z, z);
                            let body = if what == "plain" { zz } else { z };
                            let k = kernel(
                                a,
                                body,
                                std::slice::from_ref(&shape),
                                &shape,
                                KernelKind::Scan(scan),
                            );
                            let t = TypedKernel::new(&k, &[ct], false).unwrap();
                            assert_eq!(why_not(&t), None, "{scan:?}");
                            let want = evaluate(&t, std::slice::from_ref(&input), Start::Identity).unwrap();
                            let want = c128s(&want.values);
                            for scalar in [false, true] {
                                let code = bind(&t, None, scalar);
                                let got =
                                    run_from(&code, std::slice::from_ref(&stored), Start::Identity).unwrap();
                                let got = c128s(&got);
                                assert_eq!(got.len(), want.len());
                                for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                                    assert!(
                                        same(g.re, w.re) && same(g.im, w.im),
                                        "{ct} {what} {shape:?} {scan:?} scalar {scalar} at {i}: \
                                         compiled {g}, interpreted {w}"
                                    );
                                }
                                checked += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 500, "only {checked} scans checked");
}

/// Sums and products of complex64 and complex128 values compiled (both schedules) from a start
/// other than the identity, `initial` (one start for every output) and one start per output (as
/// `run_accumulate` passes them), a real start `v` being `v + 0i`: within the reductions' bound of
/// the typed interpreter (a sum's error `n ε (|v| + Σ|z|)`, a product's `8 n ε |v| Π|z|`), over
/// either axis of a matrix and the whole of it (chunked: its partials merged from the start), and
/// empty extents (the starts themselves, exactly).
#[test]
fn complex_reductions_from_a_start_within_the_bound() {
    let mut checked = 0;
    for shape in [vec![0, 5], vec![1, 1], vec![7, 3], vec![37, 29]] {
        let n: usize = shape.iter().product();
        let points = plain_points(n);
        let narrow: Vec<num_complex::Complex32> = points
            .iter()
            .map(|z| num_complex::Complex32::new(z.re as f32, z.im as f32))
            .collect();
        for (ct, stored, eps) in [
            (ElemType::C128, Stored::C128(&points), f64::EPSILON),
            (ElemType::C64, Stored::C64(&narrow), f64::from(f32::EPSILON)),
        ] {
            let input = match ct {
                ElemType::C128 => TypedInput::C128(whole(&points, &shape, &shape)),
                _ => TypedInput::C64(whole(&narrow, &shape, &shape)),
            };
            for op in [ReduceOp::Sum, ReduceOp::Prod] {
                for axes in [vec![0], vec![1], vec![0, 1]] {
                    let n_out: usize = (0..2).filter(|a| !axes.contains(a)).map(|a| shape[a]).product();
                    let terms = n / n_out.max(1);
                    let each: Vec<f64> = (0..n_out).map(|o| [-0.0, 1.5, -2.0, 0.25][o % 4]).collect();
                    let mut a = ExprArena::new();
                    let body = a.input(0);
                    let k = kernel(
                        a,
                        body,
                        std::slice::from_ref(&shape),
                        &shape,
                        KernelKind::Reduce {
                            op,
                            axes: axes.clone(),
                        },
                    );
                    let t = TypedKernel::new(&k, &[ct], false).unwrap();
                    assert_eq!(why_not(&t), None);
                    for start in [Start::Initial(2.5), Start::Initial(-0.0), Start::Each(&each)] {
                        let want = evaluate(&t, std::slice::from_ref(&input), start).unwrap();
                        let want = c128s(&want.values);
                        // the bound's scale, output by output: the start's and the terms' moduli
                        let abs = {
                            let mut a = ExprArena::new();
                            let z = a.input(0);
                            let body = a.unary(UnaryOp::Abs, z);
                            let k = kernel(
                                a,
                                body,
                                std::slice::from_ref(&shape),
                                &shape,
                                KernelKind::Reduce {
                                    op,
                                    axes: axes.clone(),
                                },
                            );
                            let t = TypedKernel::new(&k, &[ElemType::C128], false).unwrap();
                            let i = TypedInput::C128(whole(&points, &shape, &shape));
                            match evaluate(&t, &[i], Start::Identity).unwrap().values {
                                Values::F64(v) => v,
                                other => panic!("{}", other.output_type()),
                            }
                        };
                        for scalar in [false, true] {
                            let code = bind(&t, None, scalar);
                            let got = c128s(&run_from(&code, std::slice::from_ref(&stored), start).unwrap());
                            assert_eq!(got.len(), want.len());
                            for (o, (g, w)) in got.iter().zip(&want).enumerate() {
                                let v = start.at(o).unwrap().abs();
                                let bound = match op {
                                    ReduceOp::Sum => (terms + 1) as f64 * eps * (v + abs[o]),
                                    _ => 8.0 * (terms + 1) as f64 * eps * v * abs[o],
                                };
                                assert!(
                                    (g - w).norm() <= bound,
                                    "{ct} {shape:?} {op:?} {axes:?} {start:?} scalar {scalar} at {o}: \
                                     compiled {g}, interpreted {w}"
                                );
                                if terms == 0 {
                                    // an empty extent: the start itself, bit for bit
                                    assert_eq!(g.re.to_bits(), w.re.to_bits(), "{ct} {op:?} {start:?}");
                                    assert_eq!(g.im.to_bits(), w.im.to_bits(), "{ct} {op:?} {start:?}");
                                }
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} reductions checked");
}

/// The typed kernel of `roots` (the first the body, the others further outputs, maps over `n`
/// points) over inputs of `types`, each of shape `[n]`.
fn several(a: ExprArena, roots: &[NodeId], types: &[ElemType], n: usize) -> TypedKernel {
    let shapes = vec![vec![n]; types.len()];
    let mut k = kernel(a, roots[0], &shapes, &[n], KernelKind::Map);
    k.extra = roots[1..].to_vec();
    TypedKernel::new(&k, types, false).unwrap()
}

/// The outputs of a run into `outs` as values (to compare with the interpreter's).
fn values_of(outs: &[OutSlice<'_>]) -> Vec<Values> {
    outs.iter()
        .map(|o| match o {
            OutSlice::F64(s) => Values::F64(s.to_vec()),
            OutSlice::F32(s) => Values::F32(s.to_vec()),
            OutSlice::I64(s) => Values::I64(s.to_vec()),
            OutSlice::I32(s) => Values::I32(s.to_vec()),
            OutSlice::Bool(s) => Values::Bool(s.to_vec()),
            OutSlice::C64(s) => Values::C64(s.to_vec()),
            OutSlice::C128(s) => Values::C128(s.to_vec()),
        })
        .collect()
}

/// Several outputs of any types run straight into the caller's buffers (int64 and bool of int64
/// values; float64 and bool of float64 values; two complex128 outputs), at every length around the
/// vector width, equal to the typed interpreter's and to the fresh run's; a buffer of another
/// type or length, or a count other than the kernel's, is an error that names the output, and
/// nothing is written.
#[test]
fn several_outputs_of_any_type_run_into_given_buffers() {
    use num_complex::Complex64;
    for n in [0, 1, 2, 3, 4, 5, 7, 8, 9, 17, 64] {
        let ints: Vec<i64> = (0..n as i64).map(|i| i * 7 - 20).collect();
        let floats: Vec<f64> = (0..n).map(|i| i as f64 * 0.75 - 2.0).collect();
        let zs: Vec<Complex64> = (0..n)
            .map(|i| Complex64::new(i as f64 - 1.5, 0.5 * i as f64))
            .collect();
        // a*3, a > 2 over int64 a
        let mut a = ExprArena::new();
        let (x, three, two) = (a.input(0), a.int(3), a.int(2));
        let m = a.binary(BinaryOp::Mul, x, three);
        let c = a.binary(BinaryOp::Gt, x, two);
        let int_k = several(a, &[m, c], &[ElemType::I64], n);
        // x*2, x > 0 over float64 x
        let mut a = ExprArena::new();
        let (x, two, zero) = (a.input(0), a.literal(2.0), a.literal(0.0));
        let m = a.binary(BinaryOp::Mul, x, two);
        let c = a.binary(BinaryOp::Gt, x, zero);
        let float_k = several(a, &[m, c], &[ElemType::F64], n);
        // z*z, z + z over complex128 z
        let mut a = ExprArena::new();
        let z = a.input(0);
        let sq = a.binary(BinaryOp::Mul, z, z);
        let dbl = a.binary(BinaryOp::Add, z, z);
        let complex_k = several(a, &[sq, dbl], &[ElemType::C128], n);
        let cases: [(&TypedKernel, Stored<'_>, TypedInput<'_>); 3] = [
            (
                &int_k,
                Stored::I64(&ints),
                TypedInput::I64(whole(&ints, &[n], &[n])),
            ),
            (
                &float_k,
                Stored::F64(&floats),
                TypedInput::F64(whole(&floats, &[n], &[n])),
            ),
            (
                &complex_k,
                Stored::C128(&zs),
                TypedInput::C128(whole(&zs, &[n], &[n])),
            ),
        ];
        for (t, input, oracle_input) in cases {
            assert!(why_not(t).is_none(), "{:?}", why_not(t));
            let want: Vec<Values> = evaluate_outputs(t, &[oracle_input], Start::Identity)
                .unwrap()
                .into_iter()
                .map(|t| t.values)
                .collect();
            for scalar in [false, true] {
                let code = bind(t, None, scalar);
                let dtype = code.kernel().dtype;
                let fresh = match dtype {
                    ElemType::F64 => {
                        code.run_typed(&[ref64(&input)], &RunConfig::default(), &mut Workspace::new())
                    }
                    ElemType::F32 => {
                        code.run_typed(&[ref32(&input)], &RunConfig::default(), &mut Workspace::new())
                    }
                    other => unreachable!("a kernel's lanes are a float type, not {other}"),
                }
                .unwrap();
                let fresh: Vec<Values> = fresh.into_iter().map(|t| t.values).collect();
                assert_eq!(fresh, want, "fresh n={n} scalar={scalar}");
                // into given buffers of each output's type
                let types: Vec<ElemType> = (0..2).map(|o| t.output_type_of(o)).collect();
                let mut bufs: Vec<Values> = types.iter().map(|&ty| filled(ty, n)).collect();
                let mut outs: Vec<OutSlice<'_>> = bufs.iter_mut().map(out_of).collect();
                run_many(&code, &input, &mut outs).unwrap();
                assert_eq!(values_of(&outs), want, "given n={n} scalar={scalar}");
                // the wrong count, type or length: an error naming the output, nothing written
                let mut wrong: Vec<Values> = vec![filled(types[0], n), filled(ElemType::I32, n)];
                let mut outs: Vec<OutSlice<'_>> = wrong.iter_mut().map(out_of).collect();
                let e = run_many(&code, &input, &mut outs).unwrap_err().to_string();
                assert!(e.contains("output 1"), "{e}");
                assert_eq!(
                    values_of(&outs),
                    vec![filled(types[0], n), filled(ElemType::I32, n)]
                );
                let mut short: Vec<Values> = vec![filled(types[0], n), filled(types[1], n + 1)];
                let mut outs: Vec<OutSlice<'_>> = short.iter_mut().map(out_of).collect();
                let e = run_many(&code, &input, &mut outs).unwrap_err().to_string();
                assert!(e.contains("output 1"), "{e}");
                assert_eq!(values_of(&outs)[0], filled(types[0], n));
                let mut one: Vec<Values> = vec![filled(types[0], n)];
                let mut outs: Vec<OutSlice<'_>> = one.iter_mut().map(out_of).collect();
                assert!(run_many(&code, &input, &mut outs).is_err());
            }
        }
    }
}

/// A typed kernel's input as a run in float64 lanes takes it.
fn ref64<'a>(s: &'a Stored<'_>) -> InputRef<'a, f64> {
    match s {
        Stored::F64(x) => InputRef::Slice(x),
        other => InputRef::Stored(other.view()),
    }
}

/// A typed kernel's input as a run in float32 lanes takes it.
fn ref32<'a>(s: &'a Stored<'_>) -> InputRef<'a, f32> {
    match s {
        Stored::F32(x) => InputRef::Slice(x),
        other => InputRef::Stored(other.view()),
    }
}

/// `n` elements of `ty`, each a value no run writes here (a marker: 1, true, 1 + 1i).
fn filled(ty: ElemType, n: usize) -> Values {
    match ty {
        ElemType::F64 => Values::F64(vec![1.0; n]),
        ElemType::F32 => Values::F32(vec![1.0; n]),
        ElemType::I64 => Values::I64(vec![1; n]),
        ElemType::I32 => Values::I32(vec![1; n]),
        ElemType::Bool => Values::Bool(vec![true; n]),
        ElemType::C64 => Values::C64(vec![num_complex::Complex32::new(1.0, 1.0); n]),
        ElemType::C128 => Values::C128(vec![num_complex::Complex64::new(1.0, 1.0); n]),
        other => panic!("no buffer of {other}"),
    }
}

fn out_of(v: &mut Values) -> OutSlice<'_> {
    match v {
        Values::F64(x) => OutSlice::F64(x),
        Values::F32(x) => OutSlice::F32(x),
        Values::I64(x) => OutSlice::I64(x),
        Values::I32(x) => OutSlice::I32(x),
        Values::Bool(x) => OutSlice::Bool(x),
        Values::C64(x) => OutSlice::C64(x),
        Values::C128(x) => OutSlice::C128(x),
        Values::Bytes { .. } => panic!("no byte-string buffer"),
    }
}

/// [`BoundKernel::run_into_many`] of `code` (one input) in its lanes.
fn run_many(code: &BoundKernel, input: &Stored<'_>, outs: &mut [OutSlice<'_>]) -> kiln_jit::Result<()> {
    match code.kernel().dtype {
        ElemType::F64 => code.run_into_many(&[ref64(input)], outs, &RunConfig::default()),
        ElemType::F32 => code.run_into_many(&[ref32(input)], outs, &RunConfig::default()),
        other => unreachable!("a kernel's lanes are a float type, not {other}"),
    }
}

/// The shapes and reduced axes the extremes' folds at full width are checked over: short rows
/// (the inline loop), rows around the 64-point threshold (an argmax's and argmin's 16), long rows,
/// several segments, one long whole array (several chunks).
fn extreme_shapes() -> Vec<(Vec<usize>, Vec<usize>)> {
    vec![
        (vec![1000], vec![0]),
        (vec![5, 15], vec![1]),
        (vec![5, 16], vec![1]),
        (vec![3, 63], vec![1]),
        (vec![3, 64], vec![1]),
        (vec![4, 777], vec![1]),
        (vec![2, 3, 100], vec![2]),
        (vec![20_000], vec![0]),
        (vec![2, 9000], vec![1]),
    ]
}

/// `op` of the one input of type `ty` (`input`, `stored`: its values) over `axes` of `shape`: the
/// wide fold's import `(i64, i64) -> i64` (an argmax's or argmin's `(i64, i64, i64) -> i64`) is in
/// the code where the host has a wide level, and the results, vector and scalar code, equal the
/// typed interpreter's; several units and small chunks.
fn check_extreme(
    op: ReduceOp,
    ty: ElemType,
    input: TypedInput<'_>,
    stored: Stored<'_>,
    shape: &[usize],
    axes: &[usize],
) {
    let sig = match op {
        ReduceOp::ArgMax | ReduceOp::ArgMin => "= (i64, i64, i64) -> i64 ",
        _ => "= (i64, i64) -> i64 ",
    };
    check_fold(op, ty, input, stored, shape, axes, Some(sig))
}

/// [`check_extreme`], the import whose signature is `sig` (where given) in the code where the host
/// has a wide level.
fn check_fold(
    op: ReduceOp,
    ty: ElemType,
    input: TypedInput<'_>,
    stored: Stored<'_>,
    shape: &[usize],
    axes: &[usize],
    sig: Option<&str>,
) {
    let mut a = ExprArena::new();
    let body = a.input(0);
    let kind = KernelKind::Reduce {
        op,
        axes: axes.to_vec(),
    };
    let kr = kernel(a, body, &[shape.to_vec()], shape, kind);
    let t = TypedKernel::new(&kr, &[ty], false).unwrap();
    let want = evaluate(&t, &[input], Start::Identity).unwrap();
    let k = kernel_of(&t);
    let layouts: Vec<InputLayout> = k
        .inputs
        .iter()
        .map(|d| InputLayout::contiguous(&d.shape))
        .collect();
    let p = plan(&k, &layouts).unwrap().unwrap();
    let dump = kiln_jit::CompiledKernel::explain_typed(&k, &p, Schedule::for_kernel(&k)).unwrap();
    let what = format!("{op:?} of {ty} {shape:?} axes {axes:?}");
    if let Some(sig) = sig {
        let calls = dump.dumps().unwrap().clif.contains(sig);
        assert_eq!(calls, kiln_jit::wide::level().is_some(), "{what}");
    }
    for scalar in [false, true] {
        let code = bind(&t, None, scalar);
        let got = run(&code, lanes_dtype(&t), std::slice::from_ref(&stored)).unwrap();
        assert_eq!(want.values, got, "{what}, scalar {scalar}");
    }
}

/// `n` scattered int64 values and int32 ones, each type's MAX and MIN placed twice, neither at the
/// front (an arg reduction gives the first; an int64 sum of them wraps).
fn int_data(n: usize) -> (Vec<i64>, Vec<i32>) {
    let mut data: Vec<i64> = (0..n as i64)
        .map(|v| v.wrapping_mul(0x5851_f42d_4c95_7f2d) >> 8)
        .collect();
    let mut narrow: Vec<i32> = data.iter().map(|&v| (v >> 20) as i32).collect();
    for (at, max) in [(n / 3, true), (2 * n / 3, true), (n / 2, false), (n - 1, false)] {
        data[at] = if max { i64::MAX } else { i64::MIN };
        narrow[at] = if max { i32::MAX } else { i32::MIN };
    }
    (data, narrow)
}

/// The max, min, argmax, argmin and sum of int64 and int32 values, of the whole array and along
/// rows ([`extreme_shapes`]; int32 runs are read at their own addresses, which an argmax's int64
/// lanes double), each extreme (the type's MIN and MAX) placed twice, away from the front (so an
/// int64 sum wraps).
#[test]
fn integer_extremes_and_sums_fold_at_full_width() {
    for (shape, axes) in extreme_shapes() {
        let n: usize = shape.iter().product();
        let (data, narrow) = int_data(n);
        for op in [
            ReduceOp::Max,
            ReduceOp::Min,
            ReduceOp::ArgMax,
            ReduceOp::ArgMin,
            ReduceOp::Sum,
        ] {
            let wide = TypedInput::I64(whole(&data, &shape, &shape));
            check_extreme(op, ElemType::I64, wide, Stored::I64(&data), &shape, &axes);
            let int32 = TypedInput::I32(whole(&narrow, &shape, &shape));
            check_extreme(op, ElemType::I32, int32, Stored::I32(&narrow), &shape, &axes);
        }
    }
}

/// The max, min, any, all, argmax, argmin and sum of bool values ([`extreme_shapes`]): a bool's
/// max is its `any`, its min its `all`, its argmax and argmin stop at the first point that decides
/// them, and its sum counts its truths (bytes 1, 2, 255 and 128: [`truths`]). Each pattern:
/// random, one true among falses (at the front, a third of the way, on either side of a block's
/// edge, at the end), one false among trues, all false, all true.
#[test]
fn bool_extremes_fold_at_full_width() {
    for (shape, axes) in extreme_shapes() {
        let n: usize = shape.iter().product();
        let random: Vec<bool> = (0..n as u64)
            .map(|v| (v.wrapping_mul(0x5851_f42d_4c95_7f2d) >> 40) & 1 == 1)
            .collect();
        let mut patterns = vec![random, vec![false; n], vec![true; n]];
        // (a row's blocks of bools are 2048 points)
        for at in [0, n / 3, n - 1, 2047, 2048, 2049]
            .into_iter()
            .filter(|&at| at < n)
        {
            for base in [false, true] {
                let mut p = vec![base; n];
                p[at] = !base;
                patterns.push(p);
            }
        }
        for data in &patterns {
            for op in [
                ReduceOp::Max,
                ReduceOp::Min,
                ReduceOp::Any,
                ReduceOp::All,
                ReduceOp::ArgMax,
                ReduceOp::ArgMin,
                ReduceOp::Sum,
            ] {
                let input = TypedInput::Bool(whole(data, &shape, &shape));
                check_extreme(
                    op,
                    ElemType::Bool,
                    input,
                    Stored::Bool(&truths(data)),
                    &shape,
                    &axes,
                );
            }
        }
    }
}

/// Chunked whole-array reductions of bools that one chunk's partial decides (any, all; max, min,
/// argmax, argmin) run no chunk after the first that decided (call.rs `Decides`): in chunks of
/// 64 points, in order and spread over scrambled threads (later chunks first), vector and scalar
/// code, one workspace's partials reused by every run, they give the interpreter's result (the
/// truth, and its first point) wherever the deciding points lie: none, the first point, one
/// chunk's edges, the middle, the last, several chunks.
#[test]
fn chunked_bool_reductions_that_a_chunk_decides() {
    let n = 5000;
    let shape = vec![n];
    let serial = RunConfig {
        min_chunk: 64,
        target_partials: 100,
        ..Default::default()
    };
    let scrambled = RunConfig {
        max_units: 5,
        spread: &Scrambled,
        ..serial
    };
    let mut ws = Workspace::new();
    let places: [&[usize]; 7] = [
        &[],
        &[0],
        &[63, 64],
        &[n / 2],
        &[n - 1],
        &[70, 4000],
        &[1000, 1001, 4999],
    ];
    for ats in places {
        for base in [false, true] {
            let mut data = vec![base; n];
            for &at in ats {
                data[at] = !base;
            }
            for op in [
                ReduceOp::Any,
                ReduceOp::All,
                ReduceOp::Max,
                ReduceOp::Min,
                ReduceOp::ArgMax,
                ReduceOp::ArgMin,
            ] {
                let mut a = ExprArena::new();
                let body = a.input(0);
                let kind = KernelKind::Reduce { op, axes: vec![0] };
                let kr = kernel(a, body, std::slice::from_ref(&shape), &shape, kind);
                let t = TypedKernel::new(&kr, &[ElemType::Bool], false).unwrap();
                let input = TypedInput::Bool(whole(&data, &shape, &shape));
                let want = evaluate(&t, &[input], Start::Identity).unwrap();
                let bytes = truths(&data);
                for scalar in [false, true] {
                    let code = bind(&t, None, scalar);
                    for cut in [&serial, &scrambled] {
                        let ins = [Stored::Bool(&bytes)];
                        let got = run_cut(&code, lanes_dtype(&t), &ins, cut, &mut ws).unwrap();
                        let what = format!("{op:?} of {base} but at {ats:?}, scalar {scalar}");
                        assert_eq!(want.values, got, "{what}");
                    }
                }
            }
        }
    }
}

/// Kept sums, maxes, mins, `any`s and `all`s of int64, int32 and bool values (`sum(i, axis=0)`,
/// `any(b, axis=0)`): their rows stepped at full width (wide/int_rows.rs: the group step's import
/// of ten arguments is in the code where the host has a wide level), in groups of eight rows (a
/// sum's bands, the others' adjacent rows) and alone, over runs of columns shorter and longer than
/// a call takes; the interpreter's values, vector and scalar code. Each int64 extreme (MIN, MAX)
/// placed twice, so sums wrap; bools as bytes 1, 2, 255 and 128 ([`truths`]), random, and a column
/// of one truth in a block of the other.
#[test]
fn kept_integer_and_bool_reductions_step_their_rows_at_full_width() {
    let group = Some("(i64, i64, i64, i64, i64, i64, i64, i64, i64, i64) ");
    let shapes: Vec<(Vec<usize>, Vec<usize>, Option<&str>)> = vec![
        (vec![64, 100], vec![0], group),
        (vec![9, 70], vec![0], group),
        (vec![3, 63], vec![0], group),
        (vec![20, 3, 80], vec![0], group),
        (vec![20, 3, 80], vec![0, 1], None),
        (vec![5, 17, 66], vec![1], None),
    ];
    for (shape, axes, sig) in shapes {
        let n: usize = shape.iter().product();
        let (data, narrow) = int_data(n);
        let random: Vec<bool> = data.iter().map(|&v| (v >> 30) & 1 == 1).collect();
        let mut one = vec![false; n];
        one[n / 2] = true;
        let mut all_but = vec![true; n];
        all_but[n / 3] = false;
        for op in [
            ReduceOp::Sum,
            ReduceOp::Max,
            ReduceOp::Min,
            ReduceOp::Any,
            ReduceOp::All,
        ] {
            let wide = TypedInput::I64(whole(&data, &shape, &shape));
            check_fold(op, ElemType::I64, wide, Stored::I64(&data), &shape, &axes, sig);
            let int32 = TypedInput::I32(whole(&narrow, &shape, &shape));
            check_fold(op, ElemType::I32, int32, Stored::I32(&narrow), &shape, &axes, sig);
            for bools in [&random, &one, &all_but] {
                let input = TypedInput::Bool(whole(bools, &shape, &shape));
                let bytes = truths(bools);
                check_fold(
                    op,
                    ElemType::Bool,
                    input,
                    Stored::Bool(&bytes),
                    &shape,
                    &axes,
                    sig,
                );
            }
        }
    }
}

/// A chunked whole-array max or min of bools that also writes further map outputs (`[max(b),
/// ~b]`) runs every chunk, whatever decided the max: each unit writes the maps at its points
/// (call.rs `Decides` is off for it, execute.rs). The deciding point first, in chunks of 64.
#[test]
fn a_decided_reduction_with_further_outputs_runs_every_chunk() {
    let n = 5000;
    let shape = vec![n];
    let cut = RunConfig {
        min_chunk: 64,
        target_partials: 100,
        ..Default::default()
    };
    for (op, base) in [(ReduceOp::Max, false), (ReduceOp::Min, true)] {
        let mut data = vec![base; n];
        data[0] = !base;
        data[n / 2] = !base;
        let mut a = ExprArena::new();
        let b = a.input(0);
        let not = a.unary(UnaryOp::Invert, b);
        let kind = KernelKind::Reduce { op, axes: vec![0] };
        let mut k = kernel(a, b, std::slice::from_ref(&shape), &shape, kind);
        k.extra = vec![not];
        let t = TypedKernel::new(&k, &[ElemType::Bool], false).unwrap();
        let input = TypedInput::Bool(whole(&data, &shape, &shape));
        let want: Vec<Values> = evaluate_outputs(&t, &[input], Start::Identity)
            .unwrap()
            .into_iter()
            .map(|t| t.values)
            .collect();
        let bytes = truths(&data);
        let stored = Stored::Bool(&bytes);
        for scalar in [false, true] {
            let code = bind(&t, None, scalar);
            let got = match code.kernel().dtype {
                ElemType::F64 => code.run_typed(&[ref64(&stored)], &cut, &mut Workspace::new()),
                _ => code.run_typed(&[ref32(&stored)], &cut, &mut Workspace::new()),
            };
            let got: Vec<Values> = got.unwrap().into_iter().map(|t| t.values).collect();
            assert_eq!(want, got, "{op:?} of bools and their inverse, scalar {scalar}");
        }
    }
}

/// A trailing sum, `any`, `all`, max and min of bools alone (`b & c`, `b != ~c`, `b`) run 16 byte
/// lanes, each vector of masks folded at once (int_acc.rs `byte_fold`: a popcount, `vany_true`,
/// `vall_true`): the interpreter's values, vector and scalar code, several units and small
/// chunks, over whole arrays of every length around the vector width and rows of several
/// lengths; bytes other than 0 and 1 read as true; runs all true, all false and one true.
#[test]
fn bool_reductions_fold_bytes_a_vector_at_a_time() {
    type Build = fn(&mut ExprArena) -> NodeId;
    let bodies: [(&str, Build); 3] = [
        ("b & c", |a| {
            let (b, c) = (a.input(0), a.input(1));
            a.binary(BinaryOp::And, b, c)
        }),
        ("b != ~c", |a| {
            let (b, c) = (a.input(0), a.input(1));
            let n = a.unary(UnaryOp::Not, c);
            a.binary(BinaryOp::Ne, b, n)
        }),
        ("b", |a| {
            let _ = a.input(1);
            a.input(0)
        }),
    ];
    let shapes: [&[usize]; 12] = [
        &[1],
        &[15],
        &[16],
        &[17],
        &[33],
        &[255 * 16 + 9],
        &[5000],
        &[3, 15],
        &[4, 16],
        &[3, 47],
        &[2, 3, 70],
        &[2, 1000],
    ];
    for (what, build) in bodies {
        for shape in shapes {
            let n: usize = shape.iter().product();
            let axes = vec![shape.len() - 1];
            for fill in ["mixed", "true", "false", "one"] {
                let p: Vec<bool> = match fill {
                    "mixed" => (0..n).map(|v| v % 3 != 1).collect(),
                    "true" => vec![true; n],
                    "false" => vec![false; n],
                    _ => (0..n).map(|v| v == n / 2).collect(),
                };
                let q: Vec<bool> = (0..n).map(|v| v % 7 < 4 || fill != "mixed").collect();
                for op in [
                    ReduceOp::Sum,
                    ReduceOp::Any,
                    ReduceOp::All,
                    ReduceOp::Max,
                    ReduceOp::Min,
                ] {
                    let mut a = ExprArena::new();
                    let body = build(&mut a);
                    let kind = KernelKind::Reduce {
                        op,
                        axes: axes.clone(),
                    };
                    let k = kernel(a, body, &[shape.to_vec(), shape.to_vec()], shape, kind);
                    let t = TypedKernel::new(&k, &[ElemType::Bool, ElemType::Bool], false).unwrap();
                    // a trailing reduction: its code runs 16 byte lanes
                    let kt = kernel_of(&t);
                    let layouts: Vec<InputLayout> = kt
                        .inputs
                        .iter()
                        .map(|d| InputLayout::contiguous(&d.shape))
                        .collect();
                    let p_of = plan(&kt, &layouts).unwrap().unwrap();
                    assert_eq!(kiln_jit::typed::points_over(&t, &p_of), 16, "{what}");
                    let (pb, qb) = (truths(&p), truths(&q));
                    agrees(
                        &t,
                        &[
                            TypedInput::Bool(whole(&p, shape, shape)),
                            TypedInput::Bool(whole(&q, shape, shape)),
                        ],
                        &[Stored::Bool(&pb), Stored::Bool(&qb)],
                        &format!("{op:?} of {what} over {shape:?}, {fill}"),
                    );
                }
            }
        }
    }
}
