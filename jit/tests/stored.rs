//! Inputs stored in another type than the kernel's ([`kiln_ir::InputDecl::stored`]): the code reads
//! bool, int32, int64 and float32 elements where they are and converts each as it reads it, as
//! NumPy's cast (`int64` to the nearest `float64`, `bool` to 1 / 0). Every conversion the code makes,
//! at every length around the vector width (the vector loop, its tail, one element, none), read
//! contiguously, as one splatted element, and per row (runs and splats), in maps and reductions,
//! against the interpreter on the same elements converted first; and a wrong input is refused.

mod common;

use common::*;
use kiln_ir::*;
use kiln_jit::{Elem, InputRef, JitError, OutSlice, Part, RunConfig, Schedule, Stored, Workspace};

/// The elements of one stored input, owned.
enum Owned {
    Bool(Vec<u8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
}

impl Owned {
    fn stored(&self) -> Stored<'_> {
        match self {
            Owned::Bool(v) => Stored::Bool(v),
            Owned::I32(v) => Stored::I32(v),
            Owned::I64(v) => Stored::I64(v),
            Owned::F32(v) => Stored::F32(v),
        }
    }
}

/// `n` values of a stored type: edge values first (int64 beyond 2^53, whose conversion rounds; the
/// extremes; float32 NaN, infinities, -0.0 and a subnormal), then more.
fn elements(t: ElemType, n: usize) -> Owned {
    match t {
        // bytes of every kind NumPy's memory may hold: true where nonzero
        ElemType::Bool => Owned::Bool((0..n).map(|k| [0, 1, 2, 0, 255, 128][k % 6]).collect()),
        ElemType::I32 => {
            let edge = [i32::MIN, i32::MAX, -1, 0, 1, 7];
            Owned::I32(
                (0..n)
                    .map(|k| edge.get(k).copied().unwrap_or(k as i32 * 37 - 500))
                    .collect(),
            )
        }
        ElemType::I64 => {
            let edge = [(1i64 << 53) + 1, i64::MIN, i64::MAX, -(1i64 << 60) - 3, 0, -1];
            Owned::I64(
                (0..n)
                    .map(|k| edge.get(k).copied().unwrap_or(k as i64 * 1_000_003 - 77))
                    .collect(),
            )
        }
        ElemType::F32 => {
            let edge = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY, -0.0, 1e-40, 3.25];
            Owned::F32(
                (0..n)
                    .map(|k| edge.get(k).copied().unwrap_or(k as f32 * 0.37 - 2.0))
                    .collect(),
            )
        }
        ElemType::F64 | ElemType::C64 | ElemType::C128 | ElemType::Bytes(_) => {
            unreachable!("float64, complex and string inputs are no stored inputs")
        }
    }
}

/// `s` converted to `T` as NumPy casts it.
fn converted<T: Elem>(s: &Stored<'_>) -> Vec<T> {
    match s {
        Stored::Bool(d) => d
            .iter()
            .map(|&x| T::from_f64(f64::from(u8::from(x != 0))))
            .collect(),
        Stored::I32(d) => d.iter().map(|&x| T::from_f64(f64::from(x))).collect(),
        Stored::I64(d) => d.iter().map(|&x| T::from_f64(x as f64)).collect(),
        Stored::F32(d) => d.iter().map(|&x| T::from_f64(f64::from(x))).collect(),
        Stored::F64(d) => d.iter().map(|&x| T::from_f64(x)).collect(),
        Stored::C64(_) | Stored::C128(_) | Stored::Bytes(..) | Stored::View(_) => {
            unreachable!("these tests pass real slices")
        }
    }
}

/// `x * 1.5 + y` with `x` stored as `t`, `y` of the dtype, as `kind`.
fn kernel_of(dtype: ElemType, t: ElemType, xs: &[usize], shape: &[usize], kind: KernelKind) -> KernelIR {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let y = arena.input(1);
    let c = arena.literal(1.5);
    let xc = arena.binary(BinaryOp::Mul, x, c);
    let body = arena.binary(BinaryOp::Add, xc, y);
    let mut k = kernel(dtype, &[xs, shape], arena, body, kind);
    k.inputs[0].stored = Some(t);
    k
}

fn check<T: Elem>(t: ElemType, xs: &[usize], shape: &[usize], kind: KernelKind) {
    let k = kernel_of(T::DTYPE, t, xs, shape, kind);
    let p = plan(&k, 1);
    let what = format!("{t} {xs:?} in {} {shape:?}, {:?}", T::DTYPE, k.kind);
    let owned = elements(t, xs.iter().product());
    let stored = owned.stored();
    let n: usize = shape.iter().product();
    let mut rng = Rng::new(n as u64);
    let y: Vec<T> = gen_data(&mut rng, n, Data::Special);
    let mut want_k = k.clone();
    want_k.inputs[0].stored = None;
    let xs_converted = converted::<T>(&stored);
    // a map's bits are the interpreter's; any kind's are the same code's over the elements
    // converted first (a reduction or scan reassociates as that code does)
    let oracle_map = matches!(k.kind, KernelKind::Map)
        .then(|| oracle(&want_k, &[xs_converted.clone(), y.clone()]).unwrap());
    for schedule in [Schedule::for_kernel(&k), Schedule::scalar()] {
        let got = run(
            &k,
            &p,
            schedule,
            &[InputRef::Stored(stored.view()), InputRef::Slice(&y[..])],
        );
        let want = run(
            &want_k,
            &p,
            schedule,
            &[InputRef::Slice(&xs_converted[..]), InputRef::Slice(&y[..])],
        );
        assert_eq!(got.shape, want.shape, "{what}");
        let (g, w) = (got.values.to_f64(), want.values.to_f64());
        assert!(
            g.len() == w.len() && g.iter().zip(&w).all(|(&a, &b)| same_bits(a, b)),
            "{what}: {g:?} vs {w:?}"
        );
        if let Some(o) = &oracle_map {
            compare(&what, &k, &got, o, None);
            // into the caller's buffer on the calling thread: the bound map's serial call, which
            // takes the stored input as a run does
            let code = kiln_jit::compile(&k, &p, schedule).unwrap().bind(&k, &p).unwrap();
            let mut out = vec![T::from_f64(0.25); n];
            let inputs = [InputRef::Stored(stored.view()), InputRef::Slice(&y[..])];
            code.run_into_out(&inputs, T::out_slice(&mut out), &RunConfig::default())
                .unwrap();
            let o: Vec<f64> = out.iter().map(|v| v.to_f64()).collect();
            assert!(
                o.len() == g.len() && o.iter().zip(&g).all(|(&a, &b)| same_bits(a, b)),
                "{what}, into a buffer: {o:?} vs {g:?}"
            );
        }
    }
}

/// The compiled kernel's result over `inputs`.
fn run<T: Elem>(k: &KernelIR, p: &BroadcastPlan, schedule: Schedule, inputs: &[InputRef<'_, T>]) -> Tensor {
    let code = kiln_jit::compile(k, p, schedule).unwrap().bind(k, p).unwrap();
    code.run_with(inputs, &RunConfig::default(), &mut Workspace::new())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The stored types a kernel of `dtype` converts (NumPy's promotions into it).
fn stored_types(dtype: ElemType) -> Vec<ElemType> {
    match dtype {
        ElemType::F64 => vec![ElemType::Bool, ElemType::I32, ElemType::I64, ElemType::F32],
        ElemType::F32 => vec![ElemType::Bool],
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

#[test]
fn every_conversion_at_every_length_contiguous_and_splat() {
    for dtype in [ElemType::F64, ElemType::F32] {
        for t in stored_types(dtype) {
            for n in [0usize, 1, 2, 3, 5, 8, 17, 33] {
                let run = |xs: &[usize], kind: KernelKind| match dtype {
                    ElemType::F64 => check::<f64>(t, xs, &[n], kind),
                    ElemType::F32 => check::<f32>(t, xs, &[n], kind),
                    _ => unreachable!("only float types (f32, f64) reach here"),
                };
                run(&[n], KernelKind::Map);
                run(&[1], KernelKind::Map);
                if n > 0 {
                    run(
                        &[n],
                        KernelKind::Reduce {
                            op: ReduceOp::Sum,
                            axes: vec![0],
                        },
                    );
                    run(
                        &[n],
                        KernelKind::Reduce {
                            op: ReduceOp::Max,
                            axes: vec![0],
                        },
                    );
                }
            }
        }
    }
}

#[test]
fn rows_of_runs_and_splats_and_reductions_over_every_axis() {
    for dtype in [ElemType::F64, ElemType::F32] {
        for t in stored_types(dtype) {
            let shape = [4usize, 7];
            // a row broadcast down (runs of outer stride 0), a column across (one element a row),
            // the whole array
            for xs in [&[7usize][..], &[4, 1], &[4, 7]] {
                for kind in [
                    KernelKind::Map,
                    KernelKind::Reduce {
                        op: ReduceOp::Sum,
                        axes: vec![1],
                    },
                    KernelKind::Reduce {
                        op: ReduceOp::Min,
                        axes: vec![0],
                    },
                    KernelKind::Scan(Scan::new(ScanOp::Sum, Some(1))),
                ] {
                    match dtype {
                        ElemType::F64 => check::<f64>(t, xs, &shape, kind),
                        ElemType::F32 => check::<f32>(t, xs, &shape, kind),
                        _ => unreachable!("only float types (f32, f64) reach here"),
                    }
                }
            }
        }
    }
}

#[test]
fn a_stored_input_is_given_as_stored_and_of_its_type() {
    let k = kernel_of(ElemType::F64, ElemType::I64, &[4], &[4], KernelKind::Map);
    let p = plan(&k, 1);
    let code = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &p)
        .unwrap();
    let y: &'static [f64] = &[1.0; 4];
    let run = |x: InputRef<'_, f64>| {
        code.run_with(
            &[x, InputRef::Slice(y)],
            &RunConfig::default(),
            &mut Workspace::new(),
        )
    };
    let floats = [1.0f64; 4];
    let int32 = [1i32; 4];
    let int64 = [1i64, 2, 3, 4];
    for (bad, why) in [
        (
            InputRef::Slice(&floats[..]),
            "elements of f64 given where the kernel reads int64",
        ),
        (
            InputRef::Stored(Stored::I32(&int32)),
            "elements of int32 given where the kernel reads int64",
        ),
    ] {
        match run(bad) {
            Err(JitError::BadInput { index: 0, why: w, .. }) => assert!(w.contains(why), "{w}"),
            other => panic!("{why}: {other:?}"),
        }
    }
    let short = [1i64; 3];
    assert!(matches!(
        run(InputRef::Stored(Stored::I64(&short))),
        Err(JitError::BadInput { index: 0, .. })
    ));
    let got = run(InputRef::Stored(Stored::I64(&int64))).unwrap();
    assert_eq!(got.values, Values::F64(vec![2.5, 4.0, 5.5, 7.0]));
    // and a float input given as stored where the kernel reads the dtype
    let stored_y = [1.0f32; 4];
    let e = code
        .run_with::<f64>(
            &[
                InputRef::Stored(Stored::I64(&int64)),
                InputRef::Stored(Stored::F32(&stored_y)),
            ],
            &RunConfig::default(),
            &mut Workspace::new(),
        )
        .unwrap_err();
    assert!(matches!(e, JitError::BadInput { index: 1, .. }), "{e}");
}

#[test]
fn a_conversion_the_code_does_not_make_is_refused_when_compiled() {
    // int64 into float32 is no promotion NumPy makes (int64 with float32 is float64)
    let k = kernel_of(ElemType::F32, ElemType::I64, &[4], &[4], KernelKind::Map);
    let p = plan(&k, 1);
    let Err(e) = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k)) else {
        panic!("int64 stored in a float32 kernel compiled");
    };
    assert!(e.to_string().contains("stored as int64 in a f32 kernel"), "{e}");
}

#[test]
fn int64_converts_as_numpy_casts_at_every_magnitude() {
    // the vector conversion rounds once, to nearest even, as `x as f64`: values of every bit
    // length, both signs, ties (2^53 + 1, ..) and the extremes
    let mut rng = Rng::new(64);
    let mut xs: Vec<i64> = vec![
        i64::MIN,
        i64::MAX,
        i64::MIN + 1,
        0,
        -1,
        1,
        (1 << 53) + 1,
        (1 << 54) + 2,
    ];
    for bits in 0..64u32 {
        for _ in 0..40 {
            let r = rng.next_u64();
            let v = if bits == 0 { 0 } else { (r >> (64 - bits)) as i64 };
            xs.push(v);
            xs.push(v.wrapping_neg());
        }
    }
    let mut arena = ExprArena::new();
    let body = arena.input(0);
    let n = xs.len();
    let mut k = kernel(ElemType::F64, &[&[n]], arena, body, KernelKind::Map);
    k.inputs[0].stored = Some(ElemType::I64);
    let p = plan(&k, 1);
    for schedule in [Schedule::for_kernel(&k), Schedule::scalar()] {
        let got = run::<f64>(&k, &p, schedule, &[InputRef::Stored(Stored::I64(&xs))]);
        let Values::F64(got) = got.values else {
            panic!("a float64 result")
        };
        for (x, g) in xs.iter().zip(&got) {
            assert_eq!(g.to_bits(), (*x as f64).to_bits(), "{x}");
        }
    }
}

#[test]
fn serial_handles_take_stored_inputs_as_a_run_does_and_refuse_them_as_slices() {
    // a serial call on slices passes them as they are: a stored input's scaled address is a bound
    // kernel's run's alone (`run_into_out`, whose serial call below the threshold takes it)
    let map = kernel_of(ElemType::F64, ElemType::I32, &[8], &[8], KernelKind::Map);
    let p = plan(&map, 1);
    let code = kiln_jit::compile(&map, &p, Schedule::for_kernel(&map))
        .unwrap()
        .bind(&map, &p)
        .unwrap();
    let serial = code.serial_map().unwrap();
    let (x, y) = ([1.0f64; 8], [2.0f64; 8]);
    let mut out = [0.0f64; 8];
    let e = serial
        .run(&[Part::Slice(&x[..]), Part::Slice(&y[..])], &mut [&mut out[..]])
        .unwrap_err();
    assert!(matches!(e, JitError::Unsupported(_)), "{e}");
    assert_eq!(out, [0.0; 8], "nothing written");
    let sum = kernel_of(
        ElemType::F64,
        ElemType::Bool,
        &[8],
        &[8],
        KernelKind::Reduce {
            op: ReduceOp::Sum,
            axes: vec![0],
        },
    );
    let p = plan(&sum, 1);
    let code = kiln_jit::compile(&sum, &p, Schedule::for_kernel(&sum))
        .unwrap()
        .bind(&sum, &p)
        .unwrap();
    let serial = code.serial_reduce(&RunConfig::default()).unwrap();
    assert!(!serial.takes_slices());
    let e = serial
        .run(&[Part::Slice(&x[..]), Part::Slice(&y[..])])
        .unwrap_err();
    assert!(matches!(e, JitError::Unsupported(_)), "{e}");
    // as a run takes the inputs: the bools' elements, and the same value as the general run
    let bytes = [1u8, 0, 2, 255, 0, 0, 128, 0];
    let inputs = [InputRef::Stored(Stored::Bool(&bytes)), InputRef::Slice(&y[..])];
    let mut one = [0.0f64];
    serial.run_refs(&inputs, OutSlice::F64(&mut one)).unwrap();
    let want = code
        .run_with(&inputs, &RunConfig::default(), &mut Workspace::new())
        .unwrap()
        .values
        .to_f64();
    assert_eq!(one[0].to_bits(), want[0].to_bits());
    // bytes other than 0 and 1 read as the bools they are true for
    let b = bytes.map(|v| v != 0);
    let truths = [InputRef::Stored(Stored::bools(&b)), InputRef::Slice(&y[..])];
    let mut of_truths = [0.0f64];
    serial.run_refs(&truths, OutSlice::F64(&mut of_truths)).unwrap();
    assert_eq!(one[0].to_bits(), of_truths[0].to_bits());
    // a view is the general run's
    let view = ndarray::ArrayView1::from(&b[..]).into_dyn();
    let inputs = [
        InputRef::Stored(Stored::View(kiln_jit::TypedView::Bool(view))),
        InputRef::Slice(&y[..]),
    ];
    assert!(serial.run_refs(&inputs, OutSlice::F64(&mut one)).is_none());
}
