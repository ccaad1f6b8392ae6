//! The ordinary call is the fast one (issue 24 item 2): `FusedRunner::run` and `run_into` keep the
//! bindings of their last call signatures and go straight to them. Whatever the order of calls
//! (signatures alternating past what is kept, names reordered, extra names, strided and Fortran
//! views, another dtype, a reduction), every call gives the interpreter's result, bit for bit where
//! the kernel is exact; and a wrong call after a bound one is still an error naming what is wrong.

use kiln::{Error, FusedRunner};
use ndarray::{Array0, Array1, Array2, ArrayD, IxDyn, ShapeBuilder, s};

fn data(n: usize, seed: f64) -> Array1<f64> {
    Array1::from_iter((0..n).map(|i| ((i as f64 + seed) * 0.37).sin() * 3.0))
}

/// Bit equality, any NaN equal to any NaN.
fn same_bits(a: &ArrayD<f64>, b: &ArrayD<f64>) -> bool {
    a.shape() == b.shape()
        && a.iter()
            .zip(b.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

#[test]
fn alternating_signatures_give_the_interpreters_bits() {
    let runner = FusedRunner::compile_text("a*x + y").unwrap();
    let oracle = FusedRunner::compile_text("a*x + y")
        .unwrap()
        .with_backend(kiln::interpreter());
    let a = Array0::from_elem((), 2.5);
    // more signatures than a runner keeps, visited three times over in both calls
    let sizes = [0, 1, 3, 17, 100, 1027];
    let xs: Vec<Array1<f64>> = sizes.iter().map(|&n| data(n, 0.0)).collect();
    let ys: Vec<Array1<f64>> = sizes.iter().map(|&n| data(n, 7.0)).collect();
    for round in 0..3 {
        for ((x, y), &n) in xs.iter().zip(&ys).zip(&sizes) {
            let args = [("x", x.into()), ("y", y.into()), ("a", (&a).into())];
            let want = oracle.run(&args).unwrap().into_f64();
            let got = runner.run(&args).unwrap().into_f64();
            assert!(same_bits(&got, &want), "run, n = {n}, round {round}");
            let mut out = Array1::<f64>::from_elem(n, f64::NAN);
            runner.run_into(&args, out.view_mut()).unwrap();
            assert!(
                same_bits(&out.into_dyn(), &want),
                "run_into, n = {n}, round {round}"
            );
        }
    }
}

#[test]
fn names_reordered_extra_names_views_and_dtypes_are_signatures_of_their_own() {
    let runner = FusedRunner::compile_text("a*x + y").unwrap();
    let oracle = FusedRunner::compile_text("a*x + y")
        .unwrap()
        .with_backend(kiln::interpreter());
    let a = Array0::from_elem((), -1.5);
    let (x, y) = (data(64, 1.0), data(64, 2.0));
    let wide = data(128, 3.0);
    let strided = wide.slice(s![..;2]);
    let (x32, y32) = (x.mapv(|v| v as f32), y.mapv(|v| v as f32));
    let unused = Array2::<i64>::zeros((2, 2));
    let calls: Vec<Vec<(&str, kiln::ArrayArg<'_>)>> = vec![
        vec![("x", (&x).into()), ("y", (&y).into()), ("a", (&a).into())],
        vec![("a", (&a).into()), ("y", (&y).into()), ("x", (&x).into())],
        vec![
            ("x", (&x).into()),
            ("y", (&y).into()),
            ("a", (&a).into()),
            ("b", (&unused).into()),
        ],
        vec![("x", strided.into()), ("y", (&y).into()), ("a", (&a).into())],
        vec![("x", (&x32).into()), ("y", (&y32).into()), ("a", (&a).into())],
        vec![("x", (&x).into()), ("y", (&y32).into()), ("a", (&a).into())],
    ];
    for round in 0..3 {
        for (k, args) in calls.iter().enumerate() {
            let want = oracle.run(args).unwrap();
            let got = runner.run(args).unwrap();
            assert_eq!(got.elem(), want.elem(), "call {k}, round {round}");
            assert!(
                same_bits(&got.into_f64(), &want.into_f64()),
                "call {k}, round {round}"
            );
        }
    }
}

#[test]
fn fortran_inputs_and_reductions_through_the_bound_call() {
    let m = Array2::from_shape_vec((6, 5).f(), (0..30).map(|i| (i as f64 * 0.7).cos()).collect()).unwrap();
    let runner = FusedRunner::compile_text("x*2 + 1").unwrap();
    let first = runner.run(&[("x", (&m).into())]).unwrap().into_f64();
    let again = runner.run(&[("x", (&m).into())]).unwrap().into_f64();
    assert!(same_bits(&first, &again));
    // NumPy's order='K': a Fortran result for a Fortran input
    assert!(again.t().is_standard_layout());
    assert!(same_bits(&again, &m.mapv(|v| v * 2.0 + 1.0).into_dyn()));

    let sum = FusedRunner::compile_text("sum(x*x)").unwrap();
    let x = data(1000, 0.5);
    let want = FusedRunner::compile_text("sum(x*x)")
        .unwrap()
        .with_backend(kiln::interpreter())
        .run(&[("x", (&x).into())])
        .unwrap()
        .into_f64()[IxDyn(&[])];
    let runs: Vec<f64> = (0..4)
        .map(|_| sum.run(&[("x", (&x).into())]).unwrap().into_f64()[IxDyn(&[])])
        .collect();
    assert!(runs.iter().all(|r| r.to_bits() == runs[0].to_bits()), "{runs:?}");
    assert!(
        (runs[0] - want).abs() <= 1e-12 * want.abs(),
        "{} vs {want}",
        runs[0]
    );
}

#[test]
fn a_wrong_call_after_a_bound_one_is_still_an_error() {
    let runner = FusedRunner::compile_text("a*x + y").unwrap();
    let a = Array0::from_elem((), 2.0);
    let (x, y) = (data(10, 0.0), data(10, 1.0));
    let args = [("x", (&x).into()), ("y", (&y).into()), ("a", (&a).into())];
    let mut out = Array1::<f64>::zeros(10);
    runner.run_into(&args, out.view_mut()).unwrap();
    runner.run_into(&args, out.view_mut()).unwrap();
    // an output of another shape, or another dtype, or not C-contiguous
    let mut short = Array1::<f64>::zeros(9);
    let e = runner.run_into(&args, short.view_mut()).unwrap_err();
    assert!(
        matches!(&e, Error::OutputShape { output, result, .. } if *output == [9] && *result == [10]),
        "{e}"
    );
    let mut f32_out = Array1::<f32>::zeros(10);
    assert!(matches!(
        runner.run_into(&args, f32_out.view_mut()),
        Err(Error::Output(_))
    ));
    // a view in another layout is assigned the result (it was refused before), the bound call's
    // output untouched by it
    let mut wide = Array1::<f64>::from_elem(20, -1.0);
    runner.run_into(&args, wide.slice_mut(s![..;2])).unwrap();
    assert_eq!(wide.slice(s![..;2]), out);
    assert!(wide.slice(s![1..;2]).iter().all(|&v| v == -1.0));
    // a missing name, a repeated one, a shape that does not broadcast
    let e = runner.run(&[("x", (&x).into()), ("a", (&a).into())]).unwrap_err();
    assert!(matches!(&e, Error::MissingInput { name } if name == "y"), "{e}");
    let e = runner
        .run(&[
            ("x", (&x).into()),
            ("y", (&y).into()),
            ("a", (&a).into()),
            ("x", (&x).into()),
        ])
        .unwrap_err();
    assert!(matches!(e, Error::DuplicateInput { .. }), "{e}");
    let y3 = data(3, 0.0);
    assert!(
        runner
            .run(&[("x", (&x).into()), ("y", (&y3).into()), ("a", (&a).into())])
            .is_err()
    );
    // and the bound signature still runs, unharmed
    runner.run_into(&args, out.view_mut()).unwrap();
    assert_eq!(out[3], 2.0 * x[3] + y[3]);
}

#[test]
fn a_runner_with_other_settings_keeps_its_own_bindings() {
    let runner = FusedRunner::compile_text("x*3").unwrap();
    let x = data(50, 0.0);
    runner.run(&[("x", (&x).into())]).unwrap();
    // the same signature on the interpreter and on one thread: each its own binding, same values
    let interp = runner.clone().with_backend(kiln::interpreter());
    let one = runner.clone().with_threads(1);
    for r in [&runner, &interp, &one, &runner] {
        let got = r.run(&[("x", (&x).into())]).unwrap().into_f64();
        assert!(same_bits(&got, &x.mapv(|v| v * 3.0).into_dyn()));
    }
    assert_eq!(interp.backend().name(), "interp");
}

#[test]
fn repeated_updates_in_place_match_the_interpreter() {
    use kiln::FuseAssignExt;
    let runner = FusedRunner::compile_text("p + v*dt").unwrap();
    let oracle = FusedRunner::compile_text("p + v*dt")
        .unwrap()
        .with_backend(kiln::interpreter());
    let dt = Array0::from_elem((), 0.01);
    for n in [0, 1, 7, 64, 1000] {
        let v = data(n, 2.0);
        let (mut p, mut want) = (data(n, 0.0), data(n, 0.0));
        for step in 0..5 {
            let args = [("v", (&v).into()), ("dt", (&dt).into())];
            runner.run_update("p", &args, p.view_mut()).unwrap();
            let next = oracle
                .run(&[("p", (&want).into()), ("v", (&v).into()), ("dt", (&dt).into())])
                .unwrap()
                .into_f64();
            want.assign(&next);
            assert!(
                same_bits(&p.clone().into_dyn(), &want.clone().into_dyn()),
                "n = {n}, step {step}"
            );
        }
    }
    // fuse_assign goes the same way: a particle step, 100 times, against plain Rust
    let (mut p, mut v) = (data(64, 0.0), data(64, 1.0));
    let (mut pp, mut pv) = (p.clone(), v.clone());
    let none: [&Array1<f64>; 0] = [];
    for _ in 0..100 {
        p.fuse_assign(&(&v,), |p, (v,)| p + v * 0.001).unwrap();
        v.fuse_assign(&none[..], |v, _| v * 0.99 + -9.81 * 0.001).unwrap();
        pp.zip_mut_with(&pv, |p, v| *p += v * 0.001);
        pv.mapv_inplace(|v| v * 0.99 + -9.81 * 0.001);
    }
    assert_eq!(p, pp);
    assert_eq!(v, pv);
    // after bound updates, an unsafe one (p broadcast against a longer v) is still refused, and a
    // target of another shape than the result is an error
    let mut short = data(1, 0.0);
    let v = data(8, 0.0);
    let e = runner
        .run_update("p", &[("v", (&v).into()), ("dt", (&dt).into())], short.view_mut())
        .unwrap_err();
    assert!(e.to_string().contains("cannot update 'p' in place"), "{e}");
}

/// Values with the edge cases a reduction meets: signed zeros, a subnormal, large and small.
fn edgy(n: usize, seed: f64) -> Array1<f64> {
    Array1::from_iter((0..n).map(|i| match (i + seed as usize) % 11 {
        0 => -0.0,
        1 => 0.0,
        2 => 5e-324,
        3 => 1e300,
        4 => -1e-300,
        _ => ((i as f64 + seed) * 0.37).sin() * 3.0,
    }))
}

#[test]
fn a_bound_whole_reduction_gives_the_general_runs_bits() {
    for text in [
        "sum(x*x)",
        "sum(x)",
        "prod(x*0.5 + 1)",
        "min(x)",
        "max(x*2)",
        "sum(-x*0)",
    ] {
        let serial = FusedRunner::compile_text(text).unwrap().with_threads(1);
        // spread over a pool from the first point: the general run (the same chunks, by n alone)
        let general = FusedRunner::compile_text(text)
            .unwrap()
            .with_threads(2)
            .with_threshold(0);
        let oracle = FusedRunner::compile_text(text)
            .unwrap()
            .with_backend(kiln::interpreter());
        for n in [1, 2, 3, 17, 100, 1000, 40_000] {
            for with_nan in [false, true] {
                let mut x = edgy(n, 1.0);
                if with_nan {
                    x[n / 2] = f64::NAN;
                }
                let x32 = x.mapv(|v| v as f32);
                for arg in [kiln::ArrayArg::from(&x), kiln::ArrayArg::from(&x32)] {
                    let args = [("x", arg)];
                    let want = general.run(&args).unwrap().into_f64();
                    for call in 0..3 {
                        let got = serial.run(&args).unwrap().into_f64();
                        assert!(
                            same_bits(&got, &want),
                            "{text}, n = {n}, nan {with_nan}, call {call}: {got} vs {want}"
                        );
                    }
                    // the prepared handle's slices take the same serial fold
                    let h = serial.prepared(&args).unwrap();
                    let sliced = match &args[0].1 {
                        kiln::ArrayArg::F64(v) => {
                            let mut o = [7.0];
                            h.run_slices(&[v.to_slice().unwrap()], &mut o).unwrap();
                            o[0]
                        }
                        kiln::ArrayArg::F32(v) => {
                            let mut o = [7.0f32];
                            h.run_slices(&[v.to_slice().unwrap()], &mut o).unwrap();
                            f64::from(o[0])
                        }
                        _ => unreachable!("the inputs here are floats"),
                    };
                    let g = want[IxDyn(&[])];
                    assert!(
                        sliced.to_bits() == g.to_bits() || (sliced.is_nan() && g.is_nan()),
                        "{text}, n = {n}, nan {with_nan}: run_slices {sliced} vs {g}"
                    );
                    // the ordinary call into a zero-dimensional array: the same serial fold, bound
                    // on the first call and taken on the next
                    let into = match &args[0].1 {
                        kiln::ArrayArg::F64(_) => {
                            let mut o = ndarray::arr0(7.0);
                            for _ in 0..2 {
                                serial.run_into(&args, o.view_mut()).unwrap();
                            }
                            o[()]
                        }
                        kiln::ArrayArg::F32(_) => {
                            let mut o = ndarray::arr0(7.0f32);
                            for _ in 0..2 {
                                serial.run_into(&args, o.view_mut()).unwrap();
                            }
                            f64::from(o[()])
                        }
                        _ => unreachable!("the inputs here are floats"),
                    };
                    assert!(
                        into.to_bits() == g.to_bits() || (into.is_nan() && g.is_nan()),
                        "{text}, n = {n}, nan {with_nan}: run_into {into} vs {g}"
                    );
                    let o = oracle.run(&args).unwrap().into_f64()[IxDyn(&[])];
                    let close =
                        (g.is_nan() && o.is_nan()) || g == o || (g - o).abs() <= 1e-6 * o.abs().max(1e-300);
                    assert!(close, "{text}, n = {n}: {g} vs the interpreter's {o}");
                }
            }
        }
    }
    // an empty sum is 0 and an empty max an error, bound or not
    let e = Array1::<f64>::zeros(0);
    let sum = FusedRunner::compile_text("sum(x)").unwrap();
    for _ in 0..2 {
        assert_eq!(
            sum.run(&[("x", (&e).into())]).unwrap().into_f64()[IxDyn(&[])],
            0.0
        );
    }
    let max = FusedRunner::compile_text("max(x)").unwrap();
    assert!(max.run(&[("x", (&e).into())]).is_err());
    assert!(max.run(&[("x", (&e).into())]).is_err());
    for _ in 0..2 {
        let mut o = ndarray::arr0(7.0);
        assert!(max.run_into(&[("x", (&e).into())], o.view_mut()).is_err());
        // an output of another type than the kernel's, or of another shape, is still refused
        let x = edgy(10, 2.0);
        let mut o32 = ndarray::arr0(7.0f32);
        assert!(sum.run_into(&[("x", (&x).into())], o32.view_mut()).is_err());
        let mut two = Array1::<f64>::zeros(2);
        assert!(sum.run_into(&[("x", (&x).into())], two.view_mut()).is_err());
    }
}

#[test]
fn views_of_any_dimensionality_and_layout_bind_alike() {
    // a 1-d input passed as an Array1, a dynamic view, a slice and a unit-stride column; a 0-d one
    // as an Array0 and a dynamic 0-d view; and, bound after a C-contiguous call, a view whose
    // length-1 axis has another stride (the same layout) and a strided one (another signature)
    let runner = FusedRunner::compile_text("a*x + y").unwrap();
    let oracle = FusedRunner::compile_text("a*x + y")
        .unwrap()
        .with_backend(kiln::interpreter());
    let (x, y) = (data(33, 1.0), data(33, 2.0));
    let a = Array0::from_elem((), -1.5);
    let ad = a.view().into_dyn();
    let xd = x.view().into_dyn();
    let col = Array2::from_shape_fn((33, 1), |(i, _)| x[i]);
    let wide = Array2::from_shape_fn((33, 3), |(i, j)| if j == 0 { x[i] } else { f64::NAN });
    let sliced = x.as_slice().unwrap();
    let x2 = data(66, 1.0);
    let strided = x2.slice(s![..;2]);
    let calls: Vec<(&str, kiln::ArrayArg<'_>)> = vec![
        ("array1", (&x).into()),
        ("dynamic", xd.clone().into()),
        ("slice", sliced.into()),
        ("strided", strided.into()),
    ];
    for round in 0..2 {
        for (what, xa) in &calls {
            for aa in [kiln::ArrayArg::from(&a), ad.clone().into()] {
                let args = [("a", aa), ("x", xa.reborrow()), ("y", (&y).into())];
                let want = oracle.run(&args).unwrap().into_f64();
                let mut out = Array1::<f64>::from_elem(33, f64::NAN);
                runner.run_into(&args, out.view_mut()).unwrap();
                assert!(same_bits(&out.into_dyn(), &want), "{what}, round {round}");
                assert!(same_bits(&runner.run(&args).unwrap().into_f64(), &want), "{what}");
            }
        }
        // two-dimensional: a C-contiguous column, then the first column of a wider array (rows
        // 3 apart: another layout, so another signature), each against the interpreter
        for (what, m) in [("column", col.view()), ("first column", wide.slice(s![.., 0..1]))] {
            let ym = Array2::from_shape_fn((33, 1), |(i, _)| y[i]);
            let args = [("a", (&a).into()), ("x", m.into()), ("y", (&ym).into())];
            let want = oracle.run(&args).unwrap().into_f64();
            let got = runner.run(&args).unwrap().into_f64();
            assert!(same_bits(&got, &want), "{what}, round {round}");
        }
    }
    // a length-1 axis with any stride is still C-contiguous: bound once, accepted by the other
    let one = Array2::from_shape_fn((1, 33), |(_, j)| x[j]);
    let big = Array2::from_shape_fn((2, 33), |(_, j)| x[j]);
    let row = big.slice(s![0..1;2, ..]);
    assert_ne!(one.strides(), row.strides());
    assert!(row.is_standard_layout());
    for m in [one.view(), row] {
        let args = [("a", (&a).into()), ("x", m.into()), ("y", (&one).into())];
        let want = oracle.run(&args).unwrap().into_f64();
        assert!(same_bits(&runner.run(&args).unwrap().into_f64(), &want));
    }
}

/// The fast call is on the executable interface (issue 24 item 3): the JIT's executable takes the
/// direct calls and gives its general run's bits; the interpreter's says it takes none, and a
/// direct call to it is an error, not a panic.
#[test]
fn direct_calls_are_on_the_executable_trait() {
    use kiln::{Backend, DirectInputs, Executable, OutSlice, Parallel, RunCtx};
    use kiln_jit::{InputRef, RunConfig, Workspace};
    let runner = FusedRunner::compile_text("a*x + y").unwrap();
    let (x, y, a) = (data(37, 0.0), data(37, 1.0), Array0::from_elem((), 2.5));
    let inputs = [("a", (&a).into()), ("x", (&x).into()), ("y", (&y).into())];
    let (kernel, plan) = runner.explain(&inputs).unwrap();
    // the kernel's inputs in its own order
    let names: Vec<&str> = kernel.inputs.iter().map(|d| d.name.as_str()).collect();
    let slice = |n: &str| match n {
        "a" => a.as_slice().unwrap(),
        "x" => x.as_slice().unwrap(),
        _ => y.as_slice().unwrap(),
    };
    let refs: Vec<InputRef<'_, f64>> = names.iter().map(|n| InputRef::Slice(slice(n))).collect();
    let bufs = kiln::Buffers::F64(
        names
            .iter()
            .zip(&kernel.inputs)
            .map(|(n, d)| kiln::Buffer {
                data: kiln::BufferData::Contiguous(slice(n).into()),
                shape: d.shape.clone(),
            })
            .collect(),
    );
    let parallel = Parallel::new(1);
    let ctx = RunCtx {
        start: kiln::kiln_ir::Start::Identity,
        parallel: &parallel,
    };
    let cfg = RunConfig::default();

    let jit: Box<dyn Executable> = kiln::jit::Jit::default().prepare(&kernel, &plan).unwrap();
    assert!(jit.direct(&kiln::kiln_ir::Start::Identity).is_some());
    let general = jit.run(&kernel, &plan, &bufs, &ctx).unwrap();
    let mut out = vec![0.0; 37];
    jit.call_into(DirectInputs::F64(&refs), OutSlice::F64(&mut out), &cfg)
        .unwrap();
    let fresh = jit
        .call(DirectInputs::F64(&refs), &cfg, &mut Workspace::new())
        .unwrap();
    let kiln::kiln_ir::Values::F64(want) = general.values else {
        panic!("an f64 kernel gives f64 values")
    };
    let kiln::kiln_ir::Values::F64(got) = fresh.values else {
        panic!("an f64 kernel gives f64 values")
    };
    assert!(want.iter().zip(&out).all(|(w, o)| w.to_bits() == o.to_bits()));
    assert!(want.iter().zip(&got).all(|(w, o)| w.to_bits() == o.to_bits()));
    assert!(jit.serial_map().is_some(), "a float map has a serial form");
    // an output of another dtype than the kernel's: an error
    let mut wrong = vec![0.0f32; 37];
    assert!(
        jit.call_into(DirectInputs::F64(&refs), OutSlice::F32(&mut wrong), &cfg)
            .is_err()
    );

    let interp = kiln::Interpreter.prepare(&kernel, &plan).unwrap();
    assert!(interp.direct(&kiln::kiln_ir::Start::Identity).is_none());
    assert!(interp.serial_map().is_none());
    let err = interp
        .call_into(DirectInputs::F64(&refs), OutSlice::F64(&mut out), &cfg)
        .unwrap_err();
    assert!(matches!(err, Error::Unsupported(_)), "{err}");
}

/// The bound handles a caller that calls them itself finds (`FusedRunner::bound`, `kept`,
/// `bound_c_order`): the first call of a signature binds by its run and gives that run's result, a
/// repeated one finds the handle; a C-order lookup finds only a handle bound with every input
/// C-contiguous, in the runner's order, of those types and shapes.
#[test]
fn a_caller_finds_the_runners_bound_handles() {
    use kiln::kiln_ir::ElemType;
    let r = FusedRunner::compile_text("x * 2 + y").unwrap();
    let (x, y) = (Array1::from_vec(vec![1.0, 2.0, 3.0]), ndarray::arr0(0.5));
    let named = [("x", (&x).into()), ("y", (&y).into())];
    assert!(r.kept(&named).is_none());
    let (h, out) = r.bound(&named).unwrap();
    let want = out.expect("the binding run's result").into_f64();
    assert_eq!(want, ndarray::arr1(&[2.5, 4.5, 6.5]).into_dyn());
    assert_eq!(h.output_shape(), &[3]);
    let (h, out) = r.bound(&named).unwrap();
    assert!(out.is_none(), "a repeated signature runs nothing");
    let args: Vec<kiln::ArrayArg<'_>> = named.iter().map(|(_, a)| a.clone()).collect();
    assert_eq!(h.run(&args).unwrap().into_f64(), want);
    assert!(r.kept(&named).is_some());
    // by C-order forms, in the runner's order of inputs
    let forms = [(ElemType::F64, &[3usize][..]), (ElemType::F64, &[][..])];
    let h = r.bound_c_order(&forms).expect("bound with C-contiguous inputs");
    let mut out = vec![0.0; 3];
    h.run_slices(&[x.as_slice().unwrap(), &[0.5]], &mut out).unwrap();
    assert_eq!(out, vec![2.5, 4.5, 6.5]);
    assert!(
        r.bound_c_order(&[(ElemType::F32, &[3][..]), (ElemType::F64, &[][..])])
            .is_none()
    );
    assert!(
        r.bound_c_order(&[(ElemType::F64, &[4][..]), (ElemType::F64, &[][..])])
            .is_none()
    );
    // a signature bound with its names in another order is not the runner's order
    let r2 = FusedRunner::compile_text("x * 2 + y").unwrap();
    r2.bound(&[("y", (&y).into()), ("x", (&x).into())]).unwrap();
    assert!(r2.bound_c_order(&forms).is_none());
    // a strided input: found by name, not by C-order forms
    let long = Array1::from_vec(vec![1.0, 0.0, 2.0, 0.0, 3.0, 0.0]);
    let strided = long.slice(ndarray::s![..;2]);
    let r3 = FusedRunner::compile_text("x * 2 + y").unwrap();
    let (_, out) = r3.bound(&[("x", (&strided).into()), ("y", (&y).into())]).unwrap();
    assert_eq!(out.unwrap().into_f64(), want);
    assert!(r3.bound_c_order(&forms).is_none());
    // several results: no handle of one result
    let many = FusedRunner::compile_text("x * 2; x + y").unwrap();
    assert!(many.bound(&named).is_err());
    assert!(many.kept(&named).is_none());
}
