//! The public API around the compiled code: caching by structure (not size), use from many threads,
//! input checking, errors, and the CLIF / VCode dumps.

mod common;

use common::*;
use kiln_ir::*;
use kiln_jit::{CompiledKernel, JitError, KernelCache, Schedule};
use std::sync::Arc;

fn axpy(n: usize) -> KernelIR {
    let mut arena = ExprArena::new();
    let a = arena.input(0);
    let x = arena.input(1);
    let y = arena.input(2);
    let ax = arena.binary(BinaryOp::Mul, a, x);
    let body = arena.binary(BinaryOp::Add, ax, y);
    kernel(ElemType::F64, &[&[], &[n], &[n]], arena, body, KernelKind::Map)
}

#[test]
fn one_kernel_serves_every_size() {
    let cache = KernelCache::new(4);
    let mut first: Option<Arc<CompiledKernel>> = None;
    for n in [0usize, 2, 3, 10, 100, 1000] {
        let k = axpy(n);
        let p = plan(&k, 64);
        let c = cache.get_or_compile(&k, &p, Schedule::for_kernel(&k)).unwrap();
        if let Some(f) = &first {
            assert!(Arc::ptr_eq(f, &c), "n={n} recompiled");
        }
        first = Some(c.clone());
        let mut rng = Rng::new(n as u64);
        let data = vec![
            vec![2.0],
            gen_data::<f64>(&mut rng, n, Data::Special),
            gen_data(&mut rng, n, Data::Special),
        ];
        let want = oracle(&k, &data).unwrap();
        let refs: Vec<&[f64]> = data.iter().map(|d| d.as_slice()).collect();
        let got = c.run_f64(&k, &p, &refs).unwrap();
        compare("axpy", &k, &got, &want, None);
    }
    let s = cache.stats();
    assert_eq!((s.misses, s.hits), (1, 5));
}

/// Scans are kernels like any other: cached by structure (one compiled scan serves every length of a
/// line), bound, and dumped.
#[test]
fn scans_are_cached_and_dumped_like_other_kernels() {
    let cache = KernelCache::new(4);
    let mut first: Option<Arc<CompiledKernel>> = None;
    for n in [2usize, 3, 10, 1000] {
        // size 1 would plan a splat
        let mut arena = ExprArena::new();
        let x = arena.input(0);
        let body = arena.binary(BinaryOp::Mul, x, x);
        let k = kernel(
            ElemType::F64,
            &[&[n]],
            arena,
            body,
            KernelKind::Scan(Scan::new(ScanOp::Sum, Some(0))),
        );
        let p = plan(&k, usize::MAX);
        let c = cache.get_or_compile(&k, &p, Schedule::for_kernel(&k)).unwrap();
        if let Some(f) = &first {
            assert!(Arc::ptr_eq(f, &c), "n={n} recompiled");
        }
        first = Some(c.clone());
        let data = vec![(0..n).map(|i| i as f64 * 0.5 - 3.0).collect::<Vec<f64>>()];
        let want = oracle(&k, &data).unwrap();
        let got = c.bind(&k, &p).unwrap().run_with(
            &[data[0].as_slice().into()],
            &kiln_jit::RunConfig::default(),
            &mut kiln_jit::Workspace::new(),
        );
        compare("scan", &k, &got.unwrap(), &want, None);
        if n == 1000 {
            let d = CompiledKernel::explain(&k, &p, Schedule::for_kernel(&k)).unwrap();
            let d = d.dumps().unwrap();
            assert!(
                d.clif.contains("f64x2") && d.clif.contains("shuffle"),
                "{}",
                d.clif
            );
            assert!(d.vcode.as_deref().is_some_and(|v| !v.is_empty()));
        }
    }
    let s = cache.stats();
    assert_eq!((s.misses, s.hits), (1, 3));
}

#[test]
fn runs_from_many_threads() {
    let k = axpy(2);
    let p = plan(&k, 64);
    let compiled = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k)).unwrap();
    std::thread::scope(|s| {
        for t in 0..8usize {
            let compiled = compiled.clone();
            s.spawn(move || {
                let mut rng = Rng::new(t as u64);
                for round in 0..50 {
                    let n = (t * 37 + round * 11) % 300 + 2; // size 1 would plan splats
                    let k = axpy(n);
                    let p = plan(&k, 64);
                    let data = vec![
                        vec![-1.5],
                        gen_data::<f64>(&mut rng, n, Data::Plain),
                        gen_data(&mut rng, n, Data::Plain),
                    ];
                    let refs: Vec<&[f64]> = data.iter().map(|d| d.as_slice()).collect();
                    let got = compiled.run_f64(&k, &p, &refs).unwrap();
                    compare("threads", &k, &got, &oracle(&k, &data).unwrap(), None);
                }
            });
        }
    });
}

#[test]
fn a_kernel_of_no_float_type_is_refused() {
    let mut k = axpy(10);
    let p = plan(&k, 64);
    for t in [
        ElemType::Bool,
        ElemType::I32,
        ElemType::I64,
        ElemType::C64,
        ElemType::C128,
        ElemType::Bytes(0),
    ] {
        k.dtype = t;
        // the schedule of the kernel's own choice too (it panicked on such a dtype: the review's
        // finding), and the rewrites decline or leave it as it is
        for s in [Schedule::scalar(), Schedule::for_kernel(&k)] {
            let Err(e) = kiln_jit::compile(&k, &p, s) else {
                panic!("a kernel computing in {t} compiled");
            };
            assert!(e.to_string().contains("float32 or float64"), "{e}");
        }
        assert!(kiln_ir::passes::prefix_scan::rewrite(&k, None).is_err());
        assert_eq!(kiln_ir::passes::strength::rewrite(&k, true).0, k);
    }
}

#[test]
fn bad_inputs_are_errors() {
    let k = axpy(10);
    let p = plan(&k, 64);
    let c = kiln_jit::compile(&k, &p, Schedule::scalar()).unwrap();
    let a = [1.0];
    let x = [0.0; 10];
    let short = [0.0; 9];
    assert!(matches!(
        c.run_f64(&k, &p, &[&a, &x, &short]),
        Err(JitError::BadInput { index: 2, .. })
    ));
    assert!(matches!(
        c.run_f64(&k, &p, &[&a, &x]),
        Err(JitError::Ir(IrError::Arity { .. }))
    ));
    let xf = [0.0f32; 10];
    assert!(matches!(
        c.run_f32(&k, &p, &[&[1.0f32], &xf, &xf]),
        Err(JitError::DType { .. })
    ));
    // another structure (a reduction) is refused by this kernel
    let mut r = k.clone();
    r.kind = KernelKind::Reduce {
        op: ReduceOp::Sum,
        axes: vec![0],
    };
    assert!(matches!(
        c.run_f64(&r, &p, &[&a, &x, &x]),
        Err(JitError::WrongKernel(_))
    ));
    // a plan for other shapes
    let p2 = plan(&axpy(11), 64);
    assert!(matches!(
        c.run_f64(&k, &p2, &[&a, &x, &x]),
        Err(JitError::PlanMismatch(_))
    ));
    // min of nothing
    let mut m = axpy(0);
    m.kind = KernelKind::Reduce {
        op: ReduceOp::Min,
        axes: vec![0],
    };
    let pm = plan(&m, 64);
    let cm = kiln_jit::compile(&m, &pm, Schedule::for_kernel(&m)).unwrap();
    let err = cm.run_f64(&m, &pm, &[&a, &[], &[]]).unwrap_err();
    assert!(
        matches!(err, JitError::Ir(IrError::EmptyReduction { op: "min" })),
        "{err}"
    );
}

#[test]
fn dumps_show_vector_code() {
    let k = axpy(100);
    let p = plan(&k, 64);
    let c = CompiledKernel::explain(&k, &p, Schedule::simd(ElemType::F64, 2, 1)).unwrap();
    let d = c.dumps().expect("explain keeps dumps");
    assert!(d.clif.contains("f64x2"), "{}", d.clif);
    assert!(d.clif.contains("fmul") && d.clif.contains("fadd"));
    assert!(!d.clif.contains("fma"));
    let vcode = d.vcode.as_deref().expect("vcode text");
    assert!(!vcode.is_empty());
    // the dumped kernel runs too
    let data = [vec![3.0], vec![1.0; 100], vec![0.5; 100]];
    let refs: Vec<&[f64]> = data.iter().map(|d| d.as_slice()).collect();
    assert_eq!(
        c.run_f64(&k, &p, &refs).unwrap().values,
        Values::F64(vec![3.5; 100])
    );
}

/// Compile latency and per-call overhead (printed; run with --ignored --nocapture).
#[test]
#[ignore]
fn timings() {
    use std::time::Instant;
    let k = axpy(100);
    let p = plan(&k, 64);
    for sched in [Schedule::scalar(), Schedule::for_kernel(&k)] {
        let key = kiln_jit::KernelKey::new(&k, &p, sched).unwrap();
        let mut total = std::time::Duration::ZERO;
        for _ in 0..50 {
            total += CompiledKernel::compile_uncached(key.clone())
                .unwrap()
                .compile_time();
        }
        println!("compile axpy {sched:?}: {:?} per kernel", total / 50);
    }
    let c = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k)).unwrap();
    let data = [vec![3.0], vec![1.0; 100], vec![0.5; 100]];
    let refs: Vec<&[f64]> = data.iter().map(|d| d.as_slice()).collect();
    let t = Instant::now();
    for _ in 0..100_000 {
        std::hint::black_box(c.run_f64(&k, &p, &refs).unwrap());
    }
    println!("run axpy n=100: {:?} per call", t.elapsed() / 100_000);
    let t = Instant::now();
    for _ in 0..100_000 {
        std::hint::black_box(kiln_jit::compile(&k, &p, Schedule::for_kernel(&k)).unwrap());
    }
    println!("cache lookup: {:?} per call", t.elapsed() / 100_000);
}

/// Throughput of the default schedules on 1e5 elements (printed; run with --ignored --nocapture).
#[test]
#[ignore]
fn throughput() {
    use std::time::Instant;
    let n = 100_000;
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let xx = arena.binary(BinaryOp::Mul, x, x);
    for (name, kind) in [
        ("map x*x", KernelKind::Map),
        (
            "sum x*x",
            KernelKind::Reduce {
                op: ReduceOp::Sum,
                axes: vec![0],
            },
        ),
        (
            "argmax x*x",
            KernelKind::Reduce {
                op: ReduceOp::ArgMax,
                axes: vec![0],
            },
        ),
    ] {
        let k = kernel(ElemType::F64, &[&[n]], arena.clone(), xx, kind);
        let p = plan(&k, 64);
        let data = vec![1.000001f64; n];
        for sched in [Schedule::scalar(), Schedule::for_kernel(&k)] {
            let c = kiln_jit::compile(&k, &p, sched).unwrap();
            let t = Instant::now();
            for _ in 0..200 {
                std::hint::black_box(c.run_f64(&k, &p, &[&data]).unwrap());
            }
            let ns = t.elapsed().as_nanos() as f64 / (200 * n) as f64;
            println!("{name} {sched:?}: {ns:.3} ns/element");
        }
    }
}

/// Prints the CLIF and VCode of a reduction (run with --ignored --nocapture).
#[test]
#[ignore]
fn print_dump() {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let kind = KernelKind::Reduce {
        op: ReduceOp::Sum,
        axes: vec![0],
    };
    let k = kernel(ElemType::F32, &[&[100]], arena, x, kind);
    let p = plan(&k, 64);
    let c = CompiledKernel::explain(&k, &p, Schedule::simd(ElemType::F32, 1, 2)).unwrap();
    let d = c.dumps().unwrap();
    println!("{}\n----\n{}", d.clif, d.vcode.as_deref().unwrap_or(""));
}

/// The row sum of a 6 x 100 f64 input (`sum(x, axis=1)`) that the strided-view tests plan, and a
/// 12 x 300 buffer (element (i, j) is `i * 1000 + j`) to take its views of.
fn row_sum_of_views() -> (KernelIR, ndarray::Array2<f64>) {
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let kind = KernelKind::Reduce {
        op: ReduceOp::Sum,
        axes: vec![1],
    };
    let k = kernel(ElemType::F64, &[&[6, 100]], arena, x, kind);
    let data = ndarray::Array2::from_shape_fn((12, 300), |(i, j)| (i * 1000 + j) as f64);
    (k, data)
}

/// The layout of a view of `shape` with element `strides`, read in place.
fn view_layout(shape: &[usize], strides: &[isize]) -> InputLayout {
    InputLayout {
        shape: shape.to_vec(),
        contiguous: false,
        strides: Some(strides.to_vec()),
    }
}

/// A view read in place: the plan's outer strides are the view's, and every other view is refused
/// before any code runs (wrong strides, strides of the other sign, a plan that does not read it per
/// row); a plan of negative outer strides reads a view of reversed rows in place.
#[test]
fn strided_views_are_checked_against_the_plan() {
    use kiln_jit::{InputRef, RunConfig, Workspace};
    use ndarray::s;
    let (k, data) = row_sum_of_views();
    let view = data.slice(s![..;2, 10..110]).into_dyn();
    let layout = |strides: &[isize]| view_layout(&[6, 100], strides);
    let p = BroadcastPlan::new(&k.shape, &[layout(view.strides())], PlanOptions::default()).unwrap();
    assert_eq!(
        p.inputs[0],
        InputPlan::PerRow {
            row: RowAccess::Run,
            outer_strides: vec![600]
        }
    );
    let bound = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &p)
        .unwrap();
    let run = |v: ndarray::ArrayViewD<'_, f64>| {
        bound.run_with(&[InputRef::View(v)], &RunConfig::default(), &mut Workspace::new())
    };
    let out = run(view.view()).unwrap();
    let want: Vec<f64> = (0..6)
        .map(|i| (10..110).map(|j| (2 * i * 1000 + j) as f64).sum())
        .collect();
    assert_eq!(out.values, Values::F64(want));
    // the same shape with other strides, reversed rows, a reversed row, a slice: all refused
    let other = data.slice(s![..6, 10..110]).into_dyn();
    let reversed = data.slice(s![..;-2, 10..110]).into_dyn();
    let backwards = data.slice(s![..;2, 10..110;-1]).into_dyn();
    for v in [other, reversed, backwards] {
        let e = run(v).unwrap_err();
        assert!(matches!(e, JitError::BadInput { .. }), "{e}");
    }
    let flat: Vec<f64> = view.iter().copied().collect();
    let e = bound
        .run_with(
            &[InputRef::Slice(&flat[..10])],
            &RunConfig::default(),
            &mut Workspace::new(),
        )
        .unwrap_err();
    assert!(matches!(e, JitError::BadInput { .. }), "{e}");
    // a contiguous plan takes no view
    let pc = BroadcastPlan::new(
        &k.shape,
        &[InputLayout::contiguous(&[6, 100])],
        PlanOptions::default(),
    )
    .unwrap();
    let bc = kiln_jit::compile(&k, &pc, Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &pc)
        .unwrap();
    let e = bc
        .run_with(
            &[InputRef::View(view.view())],
            &RunConfig::default(),
            &mut Workspace::new(),
        )
        .unwrap_err();
    assert!(matches!(e, JitError::BadInput { .. }), "{e}");
    // reversed rows: planned with their negative stride, read from the view's first element (the
    // last row in memory), and the forward view refused by that plan
    let reversed = data.slice(s![..;-2, 10..110]).into_dyn();
    let pr = BroadcastPlan::new(&k.shape, &[layout(reversed.strides())], PlanOptions::default()).unwrap();
    assert_eq!(
        pr.inputs[0],
        InputPlan::PerRow {
            row: RowAccess::Run,
            outer_strides: vec![-600]
        }
    );
    let br = kiln_jit::compile(&k, &pr, Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &pr)
        .unwrap();
    let run_r = |v: ndarray::ArrayViewD<'_, f64>| {
        br.run_with(&[InputRef::View(v)], &RunConfig::default(), &mut Workspace::new())
    };
    let out = run_r(reversed.view()).unwrap();
    let want: Vec<f64> = (0..6)
        .map(|i| (10..110).map(|j| ((11 - 2 * i) * 1000 + j) as f64).sum())
        .collect();
    assert_eq!(out.values, Values::F64(want));
    let e = run_r(view.view()).unwrap_err();
    assert!(matches!(e, JitError::BadInput { .. }), "{e}");
}

#[test]
fn scan_rows_are_checked_against_the_plan() {
    // a float scan reads a strided view per row (one row per line along the last axis, one row per
    // step of a block along an outer axis): every read is bounded by the plan, checked first
    use kiln_jit::{InputRef, RunConfig, Workspace};
    use ndarray::{Array2, s};
    let data = Array2::from_shape_fn((12, 300), |(i, j)| (i * 1000 + j) as f64);
    let layout = |v: &ndarray::ArrayViewD<'_, f64>| view_layout(v.shape(), v.strides());
    let reversed = data.slice(s![..;2, 10..110;-1]).into_dyn();
    let stepped = data.slice(s![..;-2, 10..210;2]).into_dyn();
    for axis in [1, 0] {
        let mut arena = ExprArena::new();
        let x = arena.input(0);
        let kind = KernelKind::Scan(Scan::new(ScanOp::Sum, Some(axis)));
        let k = kernel(ElemType::F64, &[&[6, 100]], arena, x, kind);
        let scan = Scan::new(ScanOp::Sum, Some(axis));
        assert!(scan.row_axes(&k.shape).contains(&1));
        for (v, stride, outer) in [(&reversed, -1isize, 600isize), (&stepped, 2, -600)] {
            let p = BroadcastPlan::with_outer_axes(&k.shape, &[layout(v)], 1).unwrap();
            assert_eq!(
                p.inputs[0],
                InputPlan::PerRow {
                    row: RowAccess::Strided { stride },
                    outer_strides: vec![outer]
                }
            );
            let bound = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
                .unwrap()
                .bind(&k, &p)
                .unwrap();
            let run = |v: ndarray::ArrayViewD<'_, f64>| {
                bound.run_with(&[InputRef::View(v)], &RunConfig::default(), &mut Workspace::new())
            };
            // integers: every partial sum is exact, in any order
            let out = run(v.view()).unwrap();
            let mut want = v.to_owned();
            want.accumulate_axis_inplace(ndarray::Axis(axis), |&a, b| *b += a);
            assert_eq!(
                out.values,
                Values::F64(want.iter().copied().collect()),
                "axis {axis}"
            );
            // other strides, another shape: refused before any read
            let others = [
                data.slice(s![..;2, 10..110]).into_dyn(),
                data.slice(s![..;2, 10..110;-1]).into_dyn(),
                data.slice(s![..;-2, 10..210;2]).into_dyn(),
                data.slice(s![..;2, 10..210;-2]).into_dyn(),
                data.slice(s![..6, 10..210;2]).into_dyn(),
            ];
            for o in others.iter().filter(|o| o.strides() != v.strides()) {
                let e = run(o.view()).unwrap_err();
                assert!(matches!(e, JitError::BadInput { .. }), "{e}");
            }
            let e = run(data.slice(s![..;2, 10..109;-1]).into_dyn()).unwrap_err();
            assert!(e.to_string().contains("shape"), "{e}");
            // a C buffer of the declared size: the rows reach below its start or past its end
            let flat: Vec<f64> = v.iter().copied().collect();
            let e = bound
                .run_with(
                    &[InputRef::Slice(&flat)],
                    &RunConfig::default(),
                    &mut Workspace::new(),
                )
                .unwrap_err();
            assert!(matches!(e, JitError::BadInput { .. }), "{e}");
        }
    }
    // along the first axis of a 3-D view whose inner axes do not step alike: each step of a block
    // is several plan rows of the last axis, each checked
    let cube = ndarray::Array3::from_shape_fn((4, 6, 120), |(i, j, l)| (i * 100_000 + j * 1000 + l) as f64);
    let v = cube.slice(s![..;-1, ..;2, 10..110;-1]).into_dyn();
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let kind = KernelKind::Scan(Scan::new(ScanOp::Sum, Some(0)));
    let k = kernel(ElemType::F64, &[&[4, 3, 100]], arena, x, kind);
    assert_eq!(
        BroadcastPlan::with_outer_axes(&k.shape, &[layout(&v)], 1)
            .unwrap()
            .copies(),
        1
    );
    let p = BroadcastPlan::with_outer_axes(&k.shape, &[layout(&v)], 2).unwrap();
    assert_eq!(
        p.inputs[0],
        InputPlan::PerRow {
            row: RowAccess::Strided { stride: -1 },
            outer_strides: vec![-720, 240]
        }
    );
    let bound = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &p)
        .unwrap();
    let out = bound
        .run_with(
            &[InputRef::View(v.view())],
            &RunConfig::default(),
            &mut Workspace::new(),
        )
        .unwrap();
    let mut want = v.to_owned();
    want.accumulate_axis_inplace(ndarray::Axis(0), |&a, b| *b += a);
    assert_eq!(out.values, Values::F64(want.iter().copied().collect()));
    let flat: Vec<f64> = v.iter().copied().collect();
    let e = bound
        .run_with(
            &[InputRef::Slice(&flat)],
            &RunConfig::default(),
            &mut Workspace::new(),
        )
        .unwrap_err();
    assert!(matches!(e, JitError::BadInput { .. }), "{e}");
    // the flattened array walked row by row (one plan row per row of the last axis, the carry going
    // on from one into the next): every read bounded by the plan, checked first
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let flat_scan = Scan::new(ScanOp::Sum, None);
    let k = kernel(ElemType::F64, &[&[6, 100]], arena, x, KernelKind::Scan(flat_scan));
    assert_eq!(flat_scan.row_axes(&k.shape), 0..=1);
    for (v, other) in [(&reversed, &stepped), (&stepped, &reversed)] {
        let p = BroadcastPlan::with_outer_axes(&k.shape, &[layout(v)], 1).unwrap();
        assert!(matches!(p.inputs[0], InputPlan::PerRow { .. }), "{p}");
        let bound = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
            .unwrap()
            .bind(&k, &p)
            .unwrap();
        let run =
            |input: InputRef<'_, f64>| bound.run_with(&[input], &RunConfig::default(), &mut Workspace::new());
        // integers: every partial sum is exact, in any order
        let out = run(InputRef::View(v.view())).unwrap();
        let want: Vec<f64> = v
            .iter()
            .scan(0.0, |s, &x| {
                *s += x;
                Some(*s)
            })
            .collect();
        assert_eq!(out.values, Values::F64(want));
        let e = run(InputRef::View(other.view())).unwrap_err();
        assert!(matches!(e, JitError::BadInput { .. }), "{e}");
        let flat: Vec<f64> = v.iter().copied().collect();
        let e = run(InputRef::Slice(&flat)).unwrap_err();
        assert!(matches!(e, JitError::BadInput { .. }), "{e}");
    }
    // a plan of other outer axes than the scan's rows is refused at compile time
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let kind = KernelKind::Scan(Scan::new(ScanOp::Max, Some(2)));
    let k = kernel(ElemType::F64, &[&[3, 4, 100]], arena, x, kind);
    let p = BroadcastPlan::with_outer_axes(&k.shape, &[InputLayout::contiguous(&[3, 4, 100])], 1).unwrap();
    let Err(e) = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k)) else {
        panic!("a scan along axis 2 compiled over one outer axis")
    };
    assert!(
        e.to_string()
            .contains("planned with no outer axes or 2..=2, not 1"),
        "{e}"
    );
}

/// A strided row (a reversed or stepped last axis) read in place: the plan's row stride and outer
/// strides are the view's, and every view or buffer the code could read out of bounds with is
/// refused with an error before any code runs: another inner stride (the other sign, another
/// step), other outer strides, another shape, a C buffer the rows reach below or past, and a plan
/// whose row stride is 0 or 1 (not a strided row).
#[test]
fn strided_rows_are_checked_against_the_plan() {
    use kiln_jit::{InputRef, RunConfig, Workspace};
    use ndarray::s;
    let (k, data) = row_sum_of_views();
    let layout = |strides: &[isize]| view_layout(&[6, 100], strides);
    let compiled = |p: &BroadcastPlan| {
        kiln_jit::compile(&k, p, Schedule::for_kernel(&k))
            .unwrap()
            .bind(&k, p)
            .unwrap()
    };
    let reversed = data.slice(s![..;2, 10..110;-1]).into_dyn();
    let stepped = data.slice(s![..;2, 10..210;2]).into_dyn();
    for (v, stride, first) in [(&reversed, -1isize, 109usize), (&stepped, 2, 10)] {
        let p = BroadcastPlan::new(&k.shape, &[layout(v.strides())], PlanOptions::default()).unwrap();
        assert_eq!(
            p.inputs[0],
            InputPlan::PerRow {
                row: RowAccess::Strided { stride },
                outer_strides: vec![600]
            }
        );
        let bound = compiled(&p);
        let run = |v: ndarray::ArrayViewD<'_, f64>| {
            bound.run_with(&[InputRef::View(v)], &RunConfig::default(), &mut Workspace::new())
        };
        let out = run(v.view()).unwrap();
        let want: Vec<f64> = (0..6)
            .map(|i| {
                (0..100)
                    .map(|j| (2 * i * 1000) as f64 + (first as isize + j * stride) as f64)
                    .sum()
            })
            .collect();
        assert_eq!(out.values, Values::F64(want));
        // the other row strides, the forward rows, other outer strides, another shape: refused
        let others = [
            data.slice(s![..;2, 10..110]).into_dyn(),
            data.slice(s![..;2, 10..110;-1]).into_dyn(),
            data.slice(s![..;2, 10..210;2]).into_dyn(),
            data.slice(s![..;2, 10..210;-2]).into_dyn(),
            data.slice(s![..;-2, 10..110;-1]).into_dyn(),
            data.slice(s![..6, 10..210;2]).into_dyn(),
        ];
        for o in others.iter().filter(|o| o.strides() != v.strides()) {
            let e = run(o.view()).unwrap_err();
            assert!(matches!(e, JitError::BadInput { .. }), "{e}");
        }
        let short = data.slice(s![..;2, 10..109;-1]).into_dyn();
        let e = run(short).unwrap_err();
        assert!(e.to_string().contains("shape"), "{e}");
        // a C buffer of the declared size: a backwards row reads below its start, a stepped one
        // past its end
        let flat: Vec<f64> = v.iter().copied().collect();
        let e = bound
            .run_with(
                &[InputRef::Slice(&flat)],
                &RunConfig::default(),
                &mut Workspace::new(),
            )
            .unwrap_err();
        assert!(matches!(e, JitError::BadInput { .. }), "{e}");
    }
    // one compiled kernel serves every stride but -1 (a run-time parameter): x[:, ::2] and
    // x[:, ::3] share code, each bound with its own plan; the reversed row has code of its own
    let plan_of = |v: &ndarray::ArrayViewD<'_, f64>| {
        BroadcastPlan::new(&k.shape, &[layout(v.strides())], PlanOptions::default()).unwrap()
    };
    let by3 = data.slice(s![1..;2, ..;3]).into_dyn();
    let (p2, p3, pr) = (plan_of(&stepped), plan_of(&by3), plan_of(&reversed));
    let c2 = kiln_jit::compile(&k, &p2, Schedule::for_kernel(&k)).unwrap();
    let c3 = kiln_jit::compile(&k, &p3, Schedule::for_kernel(&k)).unwrap();
    let cr = kiln_jit::compile(&k, &pr, Schedule::for_kernel(&k)).unwrap();
    assert!(Arc::ptr_eq(&c2, &c3) && !Arc::ptr_eq(&c2, &cr));
    let out = c3
        .bind(&k, &p3)
        .unwrap()
        .run_with(
            &[InputRef::View(by3.view())],
            &RunConfig::default(),
            &mut Workspace::new(),
        )
        .unwrap();
    let want: Vec<f64> = by3.rows().into_iter().map(|r| r.iter().sum()).collect();
    assert_eq!(out.values, Values::F64(want));
    // a plan that says a row steps by 0 or 1 is not a strided row: refused when compiled
    for stride in [0, 1] {
        let p = BroadcastPlan {
            shape: vec![6, 100],
            outer_axes: 1,
            row_len: 100,
            inputs: vec![InputPlan::PerRow {
                row: RowAccess::Strided { stride },
                outer_strides: vec![600],
            }],
        };
        let e = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k)).err().unwrap();
        assert!(matches!(e, JitError::PlanMismatch(_)), "{e}");
    }
}

/// An input read from the run's own destination (an in-place update): a map reading it at every
/// point updates it exactly as a run into another buffer; a run without a destination, a reduction
/// and a broadcast read are refused before any code runs.
#[test]
fn the_destination_is_read_in_place_only_by_a_map_at_every_point() {
    use kiln_jit::{InputRef, RunConfig};
    let mut arena = ExprArena::new();
    let p = arena.input(0);
    let v = arena.input(1);
    let half = arena.literal(0.5);
    let pv = arena.binary(BinaryOp::Mul, p, half);
    let body = arena.binary(BinaryOp::Add, pv, v);
    for n in [2usize, 3, 17, 1000] {
        let k = kernel(ElemType::F64, &[&[n], &[n]], arena.clone(), body, KernelKind::Map);
        let plan = plan(&k, 1);
        let bound = kiln_jit::compile(&k, &plan, Schedule::for_kernel(&k))
            .unwrap()
            .bind(&k, &plan)
            .unwrap();
        let p0: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
        let v: Vec<f64> = (0..n).map(|i| (i as f64).cos()).collect();
        let mut want = vec![0.0; n];
        let cfg = RunConfig::default();
        bound
            .run_into_with(&[InputRef::Slice(&p0), InputRef::Slice(&v)], &mut want, &cfg)
            .unwrap();
        let mut p = p0.clone();
        bound
            .run_into_with(&[InputRef::Destination, InputRef::Slice(&v)], &mut p, &cfg)
            .unwrap();
        assert_eq!(p, want, "n = {n}");
        let e = bound
            .run_with(
                &[InputRef::Destination, InputRef::Slice(&v)],
                &cfg,
                &mut kiln_jit::Workspace::new(),
            )
            .unwrap_err();
        assert!(matches!(e, JitError::Unsupported(_)), "{e}");
    }
    // p broadcast along the rows of a [4, 8] result: read at other points than it is written
    let k = kernel(
        ElemType::F64,
        &[&[8], &[4, 8]],
        arena.clone(),
        body,
        KernelKind::Map,
    );
    let plan = plan(&k, 1);
    let bound = kiln_jit::compile(&k, &plan, Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &plan)
        .unwrap();
    let v = vec![1.0; 32];
    let mut out = vec![0.0; 32];
    let e = bound
        .run_into_with(
            &[InputRef::Destination, InputRef::Slice(&v)],
            &mut out,
            &RunConfig::default(),
        )
        .unwrap_err();
    assert!(matches!(e, JitError::BadInput { .. }), "{e}");
}

/// `in0 * 1.5 + in1` reduced by `op` over `axes` of `shape` (both inputs of that shape).
fn reduction(dtype: ElemType, shape: &[usize], op: ReduceOp, axes: &[usize]) -> KernelIR {
    let mut arena = ExprArena::new();
    let (x, y) = (arena.input(0), arena.input(1));
    let c = arena.literal(1.5);
    let xc = arena.binary(BinaryOp::Mul, x, c);
    let body = arena.binary(BinaryOp::Add, xc, y);
    let kind = KernelKind::Reduce {
        op,
        axes: axes.to_vec(),
    };
    kernel(dtype, &[shape, shape], arena, body, kind)
}

/// The general run of one unit (`run_with`) of `bound` on `ins`, its values as f64.
fn general_run<T: kiln_jit::Elem>(
    bound: &kiln_jit::BoundKernel,
    ins: &[kiln_jit::InputRef<'_, T>],
) -> Vec<f64> {
    bound
        .run_with(
            ins,
            &kiln_jit::RunConfig::default(),
            &mut kiln_jit::Workspace::new(),
        )
        .unwrap()
        .values
        .to_f64()
}

/// [`kiln_jit::SerialReduce`] of a reduction along axes (trailing, leading, middle, several, all)
/// writes the same bits as the general run of one unit (`run_with`), into the caller's elements:
/// both dtypes (f32 sums through f64 accumulators on the stack, and on the heap past 16 outputs),
/// sums, products, min and max, special values (NaN, ±inf, ±0, subnormals), rows shorter than a
/// vector and with tails, one element, an empty axis (a sum of nothing is 0, a min of nothing is
/// refused when bound); a wrong count of outputs is an error.
#[test]
fn serial_reduce_along_axes_has_the_general_runs_bits() {
    fn check<T: kiln_jit::Elem>() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[7], &[0]),
            (&[3, 5], &[1]),
            (&[3, 5], &[0]),
            (&[2, 3, 4], &[1]),
            (&[2, 3, 4], &[0, 2]),
            (&[2, 3, 4], &[1, 2]),
            (&[4, 1, 9], &[0]),
            (&[1, 1], &[1]),
            (&[20, 3], &[1]),
            (&[3, 17], &[0]),
            (&[5, 0], &[1]),
            (&[0, 5], &[0]),
        ];
        let mut rng = Rng::new(7);
        for &(shape, axes) in cases {
            for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max] {
                let k = reduction(T::DTYPE, shape, op, axes);
                let p = plan(&k, 1);
                let what = format!("{} {op:?} of {shape:?} over {axes:?}", T::DTYPE);
                let bound = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
                    .unwrap()
                    .bind(&k, &p)
                    .unwrap();
                let serial = match bound.serial_reduce(&kiln_jit::RunConfig::default()) {
                    Ok(s) => s,
                    Err(e) => {
                        // only a min or max over an empty axis has no serial form (and no value)
                        assert!(!op.has_identity() && shape.contains(&0), "{what}: {e}");
                        continue;
                    }
                };
                let n: usize = shape.iter().product();
                let data = if op == ReduceOp::Prod {
                    Data::NearOneSpecial
                } else {
                    Data::Special
                };
                let (x, y): (Vec<T>, Vec<T>) = (gen_data(&mut rng, n, data), gen_data(&mut rng, n, data));
                let ins = [
                    kiln_jit::InputRef::Slice(&x[..]),
                    kiln_jit::InputRef::Slice(&y[..]),
                ];
                let want = general_run(&bound, &ins);
                let mut out = vec![T::from_f64(0.25); serial.outputs()];
                let parts = [kiln_jit::Part::Slice(&x[..]), kiln_jit::Part::Slice(&y[..])];
                serial.run_into(&parts, &mut out).unwrap();
                let got: Vec<f64> = out.iter().map(|v| v.to_f64()).collect();
                assert!(bits_equal(&got, &want), "{what}: {got:?} against {want:?}");
                if serial.outputs() == 1 {
                    assert!(same_bits(serial.run(&parts).unwrap().to_f64(), want[0]), "{what}");
                }
                // the same through the call a bound kernel's run takes
                let mut out = vec![T::from_f64(0.25); serial.outputs()];
                serial.run_refs(&ins, T::out_slice(&mut out)).unwrap();
                let got: Vec<f64> = out.iter().map(|v| v.to_f64()).collect();
                assert!(
                    bits_equal(&got, &want),
                    "{what}, run_refs: {got:?} against {want:?}"
                );
                let mut short = vec![T::from_f64(0.0); serial.outputs() + 1];
                let e = serial.run_into(&parts, &mut short).unwrap_err().to_string();
                assert!(e.contains("elements given for a result of"), "{what}: {e}");
            }
        }
    }
    check::<f64>();
    check::<f32>();
}

/// [`kiln_jit::SerialReduce`] of an argmin or argmax (trailing, leading, middle, several and all
/// axes; on the stack and past 16 outputs on the heap) gives the general run's indices, on values
/// with NaN, ±inf, ±0 and subnormals (the first NaN, the first of equal extremes), through the
/// call a bound kernel's run takes (int64 results); the slices of the dtype do not take it.
#[test]
fn serial_argmin_argmax_have_the_general_runs_indices() {
    fn check<T: kiln_jit::Elem>() {
        let cases: &[(&[usize], &[usize])] = &[
            (&[1], &[0]),
            (&[7], &[0]),
            (&[1000], &[0]),
            (&[3, 5], &[1]),
            (&[3, 5], &[0]),
            (&[2, 3, 4], &[1]),
            (&[2, 3, 4], &[0, 2]),
            (&[20, 3], &[1]),
            (&[3, 300], &[1]),
        ];
        let mut rng = Rng::new(11);
        for &(shape, axes) in cases {
            for op in [ReduceOp::ArgMin, ReduceOp::ArgMax] {
                for data in [Data::Special, Data::Ties] {
                    let k = reduction(T::DTYPE, shape, op, axes);
                    let p = plan(&k, 1);
                    let what = format!("{} {op:?} of {shape:?} over {axes:?}", T::DTYPE);
                    let bound = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
                        .unwrap()
                        .bind(&k, &p)
                        .unwrap();
                    let serial = bound
                        .serial_reduce(&kiln_jit::RunConfig::default())
                        .unwrap_or_else(|e| panic!("{what}: {e}"));
                    assert!(!serial.takes_slices(), "{what}");
                    let n: usize = shape.iter().product();
                    let (x, y): (Vec<T>, Vec<T>) = (gen_data(&mut rng, n, data), gen_data(&mut rng, n, data));
                    let ins = [
                        kiln_jit::InputRef::Slice(&x[..]),
                        kiln_jit::InputRef::Slice(&y[..]),
                    ];
                    let want = general_run(&bound, &ins);
                    let mut out = vec![-7i64; serial.outputs()];
                    serial
                        .run_refs(&ins, kiln_jit::OutSlice::I64(&mut out))
                        .unwrap_or_else(|| panic!("{what}: run_refs declined"));
                    let got: Vec<f64> = out.iter().map(|&v| v as f64).collect();
                    assert_eq!(got, want, "{what}");
                    // a result of another type is declined, for the general run to report
                    let mut wrong = vec![T::from_f64(0.0); serial.outputs()];
                    assert!(
                        serial.run_refs(&ins, T::out_slice(&mut wrong)).is_none(),
                        "{what}"
                    );
                }
            }
        }
    }
    check::<f64>();
    check::<f32>();
}

/// A reduction of every axis with further map outputs writes them through pointers a serial call
/// does not pass: it has no serial form (its run writes every output).
#[test]
fn a_reduction_with_further_map_outputs_has_no_serial_form() {
    let mut k = reduction(ElemType::F64, &[8], ReduceOp::Sum, &[0]);
    k.extra = vec![k.body];
    let p = plan(&k, 1);
    let bound = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &p)
        .unwrap();
    assert!(matches!(
        bound.serial_reduce(&kiln_jit::RunConfig::default()),
        Err(JitError::Unsupported(_))
    ));
}
