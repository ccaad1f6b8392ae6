//! The prepared positional handle (`FusedRunner::prepared`, issue 12 item 3): its calls give what the
//! runner gives by name (bit for bit, on the JIT's fast path and on the general path), and a call
//! whose inputs are not what the handle was bound to is an error naming the input.

use kiln::{Error, FusedRunner, Output};
use ndarray::{Array0, Array1, Array2, ArrayD, ShapeBuilder, s};

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
fn a_map_takes_the_fast_path_and_matches_the_named_run() {
    for n in [0, 1, 3, 100, 1027] {
        let (x, y) = (data(n, 0.0), data(n, 5.0));
        let a = Array0::from_elem((), 2.5);
        let runner = FusedRunner::compile_text("a*x + y").unwrap();
        // bound in another order than the expression's
        let h = runner
            .prepared(&[("y", (&y).into()), ("a", (&a).into()), ("x", (&x).into())])
            .unwrap();
        assert!(h.is_direct(), "n = {n}");
        assert_eq!(h.input_names().collect::<Vec<_>>(), ["y", "a", "x"]);
        let want = runner
            .run(&[("x", (&x).into()), ("y", (&y).into()), ("a", (&a).into())])
            .unwrap()
            .into_f64();
        let mut out = Array1::<f64>::from_elem(n, f64::NAN);
        h.run_into(&[(&y).into(), (&a).into(), (&x).into()], out.view_mut())
            .unwrap();
        assert!(same_bits(&out.clone().into_dyn(), &want), "n = {n}");
        // slices are inputs too, and a second call reuses everything
        let (xs, ys) = (x.as_slice().unwrap(), y.as_slice().unwrap());
        out.fill(0.0);
        h.run_into(&[ys.into(), (&a).into(), xs.into()], out.view_mut())
            .unwrap();
        assert!(same_bits(&out.into_dyn(), &want), "n = {n}");
        // the slice call, the cheapest
        let mut o = vec![f64::NAN; n];
        h.run_slices(&[ys, a.as_slice().unwrap(), xs], &mut o).unwrap();
        assert!(
            same_bits(&Array1::from(o).into_dyn(), &want),
            "n = {n}: run_slices"
        );
    }
}

#[test]
fn the_slice_call_checks_counts_lengths_and_dtypes() {
    let (x, y) = (data(10, 0.0), data(10, 1.0));
    let m = Array2::from_shape_fn((2, 10), |(i, j)| (i * 10 + j) as f64);
    let runner = FusedRunner::compile_text("x*y + m").unwrap();
    let h = runner
        .prepared(&[("x", (&x).into()), ("y", (&y).into()), ("m", (&m).into())])
        .unwrap();
    let (xs, ys, ms) = (
        x.as_slice().unwrap(),
        y.as_slice().unwrap(),
        m.as_slice().unwrap(),
    );
    assert_eq!(h.output_shape(), [2, 10]);
    let mut out = vec![0.0; 20];
    h.run_slices(&[xs, ys, ms], &mut out).unwrap();
    assert_eq!(out[13], x[3] * y[3] + 13.0);
    let e = h.run_slices(&[xs, ys], &mut out).unwrap_err();
    assert_eq!(e.to_string(), "prepared call: 2 inputs given, 3 bound (x, y, m)");
    let e = h.run_slices(&[xs, &ys[..9], ms], &mut out).unwrap_err();
    assert_eq!(
        e.to_string(),
        "prepared call: input 1 ('y') is 9 elements of f64 but was bound as f64 of shape [10]"
    );
    let x32: Vec<f32> = xs.iter().map(|&v| v as f32).collect();
    let e = h
        .run_slices(&[&x32[..], &x32[..], &x32[..]], &mut [0.0f32; 20])
        .unwrap_err();
    assert!(matches!(e, Error::Prepared(_)), "{e}");
    let e = h.run_slices(&[xs, ys, ms], &mut out[..19]).unwrap_err();
    assert!(matches!(e, Error::Output(_)), "{e}");
    // a whole-array reduction through slices: one value, as the named run gives it
    let runner = FusedRunner::compile_text("sum(x*y)").unwrap();
    let h = runner
        .prepared(&[("x", (&x).into()), ("y", (&y).into())])
        .unwrap();
    assert!(h.is_direct());
    let mut one = [0.0f64];
    h.run_slices(&[xs, ys], &mut one).unwrap();
    let want = runner
        .run(&[("x", (&x).into()), ("y", (&y).into())])
        .unwrap()
        .into_f64();
    assert_eq!(one[0].to_bits(), want.iter().next().unwrap().to_bits());
}

#[test]
fn reductions_several_kernels_views_and_the_interpreter_match_the_named_run() {
    let m = Array2::from_shape_fn((7, 301), |(i, j)| ((i * 301 + j) as f64 * 0.61).cos());
    let cases: [(&str, bool); 6] = [
        ("sum(x*x)", true),
        ("mean(x, axis=1, keepdims=1)", true),
        ("sum(x, axis=0, initial=2.5)", true),
        // two kernels, bound stage by stage: each stage's handle direct
        ("exp(x - max(x, axis=1, keepdims=1))", true),
        ("cumsum(x*2, axis=1)", true), // a scan reads a view of contiguous rows in place too
        ("x*x + 1", true),
    ];
    for (src, direct) in cases {
        for backend in ["jit", "interp"] {
            let runner = FusedRunner::compile_text(src)
                .unwrap()
                .with_backend(kiln::backend_by_name(backend).unwrap());
            // a strided view with contiguous rows, which a map reads in place
            let v = m.slice(s![.., 1..]);
            let h = runner.prepared(&[("x", v.into())]).unwrap();
            assert_eq!(h.is_direct(), direct && backend == "jit", "{src} on {backend}");
            let want = runner.run(&[("x", v.into())]).unwrap().into_f64();
            let got = h.run(&[v.into()]).unwrap().into_f64();
            assert!(same_bits(&got, &want), "{src} on {backend}");
            let mut out = ArrayD::<f64>::zeros(h.output_shape());
            h.run_into(&[v.into()], out.view_mut()).unwrap();
            assert!(same_bits(&out, &want), "{src} on {backend}: run_into");
            // the same shape with other strides (a wider array): off the fast path, the same values
            let wide = Array2::from_shape_fn((7, 400), |(i, j)| {
                if (1..301).contains(&j) {
                    m[[i, j]]
                } else {
                    f64::NAN
                }
            });
            let w = wide.slice(s![.., 1..301]);
            let got = h.run(&[w.into()]).unwrap().into_f64();
            assert!(same_bits(&got, &want), "{src} on {backend}: other strides");
            h.run_into(&[w.into()], out.view_mut()).unwrap();
            assert!(
                same_bits(&out, &want),
                "{src} on {backend}: other strides, run_into"
            );
        }
    }
}

/// The result of `h` on `inputs` through the stage loop: a call into a slice of outputs runs
/// the runner's several-result path (`run_many_bound`), which runs the stages one by one.
fn by_stage_loop(h: &kiln::Prepared, inputs: &[kiln::ArrayArg<'_>]) -> ArrayD<f64> {
    if h.output_type() == kiln::ElemType::F32 {
        let mut out = ArrayD::<f32>::zeros(h.output_shape());
        h.call(inputs, &mut [out.view_mut()][..]).unwrap();
        return out.mapv(f64::from);
    }
    if h.output_type() == kiln::ElemType::I64 {
        let mut out = ArrayD::<i64>::zeros(h.output_shape());
        h.call(inputs, &mut [out.view_mut()][..]).unwrap();
        return out.mapv(|v| v as f64);
    }
    let mut out = ArrayD::<f64>::zeros(h.output_shape());
    h.call(inputs, &mut [out.view_mut()][..]).unwrap();
    out
}

/// `src` of the input `x` = `a` on `threads` threads (every run cut into units where more than
/// one) by a bound handle, twice: the stage loop's bits and the handle's result type.
fn as_the_stage_loop(src: &str, a: kiln::ArrayArg<'_>, threads: usize) {
    let runner = FusedRunner::compile_text(src)
        .unwrap()
        .with_threads(threads)
        .with_threshold(if threads > 1 { 0 } else { 1 << 20 });
    let h = runner.prepared(&[("x", a.clone())]).unwrap();
    let args = [a.clone()];
    let want = by_stage_loop(&h, &args);
    for call in 0..2 {
        let got = h.run(&args).unwrap();
        assert_eq!(got.elem(), h.output_type(), "{src}");
        assert!(
            same_bits(&got.into_f64(), &want),
            "{src} of {:?}, {threads} threads, call {call}",
            a.elem()
        );
    }
}

/// A pipeline of several kernels, bound stage by stage (prepared/staged.rs), gives what the stage
/// loop gives and what its stages give run one by one as runners of their own, bit for bit, fresh
/// and into an output, on every call; each stage's handle takes its fast path on the JIT (a
/// compound or sibling stage in one pass by its handle; sibling reductions the stage loop runs
/// apart, or over few points, as their reductions, each by its handle, with the merged pass's bits;
/// a compound stage the stage loop runs apart, over leading axes or of integers, as its two
/// reductions, each by its handle). float32 inputs, an integer input with a float result between the kernels, a scan, `initial`,
/// several threads over a long input, inputs of another layout than bound, and Fortran inputs
/// whose pipeline is not run in memory order (a stage reading only them is not either: the stage
/// loop does not) give the stage loop's bits and layout; so do a bool, an index or an integer
/// result between two kernels.
#[test]
fn pipelines_run_stage_by_stage_as_their_stages_one_by_one() {
    let x = data(1000, 0.0);
    let y = data(1000, 3.0);
    let m = Array2::from_shape_fn((7, 301), |(i, j)| ((i * 301 + j) as f64 * 0.61).cos());
    let one = |src: &str, args: &[(&str, kiln::ArrayArg<'_>)]| -> ArrayD<f64> {
        FusedRunner::compile_text(src)
            .unwrap()
            .run(args)
            .unwrap()
            .into_f64()
    };
    // (expression, its stages one by one: `s` the first's result, `t` the second's; whether every
    // stage has a direct handle)
    let cases: [(&str, &[&str], bool); 14] = [
        ("sqrt(sum(x*x))", &["sum(x*x)", "sqrt(s)"], true),
        ("max(x) + 1", &["max(x)", "s + 1"], true),
        ("x - mean(x)", &["mean(x)", "x - s"], true),
        ("sum(x*y) / sum(x)", &["sum(x*y)", "sum(x)", "s / t"], true),
        ("exp(x - max(x))", &["max(x)", "exp(x - s)"], true),
        (
            "m / sum(m, axis=1, keepdims=1)",
            &["sum(m, axis=1, keepdims=1)", "m / s"],
            true,
        ),
        (
            "(x - mean(x)) / std(x)",
            &["mean(x)", "std(x)", "(x - s) / t"],
            true,
        ),
        ("var(x) + 1", &["var(x)", "s + 1"], true),
        (
            "sum(m, axis=0) + max(m, axis=0)",
            &["sum(m, axis=0)", "max(m, axis=0)", "s + t"],
            true,
        ),
        (
            "(m - mean(m, axis=0)) / std(m, axis=0)",
            &["mean(m, axis=0)", "std(m, axis=0)", "(m - s) / t"],
            true,
        ),
        (
            "max(m, axis=0) - min(m, axis=0)",
            &["max(m, axis=0)", "min(m, axis=0)", "s - t"],
            true,
        ),
        ("sum(x) + max(x)", &["sum(x)", "max(x)", "s + t"], true),
        (
            "mean(m, axis=1) * min(m, axis=1)",
            &["mean(m, axis=1)", "min(m, axis=1)", "s * t"],
            true,
        ),
        (
            "m / max(m, axis=1, keepdims=1) - sum(m, axis=1, keepdims=1)",
            &[
                "max(m, axis=1, keepdims=1)",
                "sum(m, axis=1, keepdims=1)",
                "m / s - t",
            ],
            true,
        ),
    ];
    for (src, stages, direct) in cases {
        let named = [("x", (&x).into()), ("y", (&y).into()), ("m", (&m).into())];
        let used: Vec<(&str, kiln::ArrayArg<'_>)> =
            named.iter().filter(|(n, _)| src.contains(n)).cloned().collect();
        let s = one(stages[0], &used);
        let t = (stages.len() == 3).then(|| one(stages[1], &used));
        let mut last: Vec<(&str, kiln::ArrayArg<'_>)> = used.clone();
        last.push(("s", (&s).into()));
        if let Some(t) = &t {
            last.push(("t", t.into()));
        }
        let want = one(stages[stages.len() - 1], &last);
        let runner = FusedRunner::compile_text(src).unwrap();
        let h = runner.prepared(&used).unwrap();
        assert_eq!(h.is_direct(), direct, "{src}");
        let positional: Vec<kiln::ArrayArg<'_>> = used.iter().map(|(_, a)| a.clone()).collect();
        assert!(
            same_bits(&by_stage_loop(&h, &positional), &want),
            "{src}: the stage loop"
        );
        for call in 0..3 {
            assert!(
                same_bits(&h.run(&positional).unwrap().into_f64(), &want),
                "{src}: call {call}"
            );
            let mut out = ArrayD::<f64>::zeros(h.output_shape());
            h.run_into(&positional, out.view_mut()).unwrap();
            assert!(same_bits(&out, &want), "{src}: run_into, call {call}");
            assert!(
                same_bits(&runner.run(&used).unwrap().into_f64(), &want),
                "{src}: by name"
            );
        }
    }
    // against the stage loop: float32, an integer input, a scan, `initial`, several threads
    let x32 = x.mapv(|v| v as f32);
    let i = Array1::from_iter((0..1000i64).map(|k| (k * 7919) % 1000 - 500));
    let long = data(300_000, 1.0);
    let long_i = long.mapv(|v| (v * 1000.0) as i64);
    let big = Array2::from_shape_fn((400, 300), |(r, c)| ((r * 300 + c) as f64 * 0.013).sin());
    // (sibling components over few points: special values, ±0 in both orders, NaN and ±inf; bool
    // and int32 values; an empty input; three threads)
    let mut sp = data(1000, 5.0);
    for (k, v) in [
        (3, -0.0),
        (4, 0.0),
        (10, f64::NAN),
        (20, f64::INFINITY),
        (21, f64::NEG_INFINITY),
    ] {
        sp[k] = v;
    }
    let b = Array1::from_iter((0..1000).map(|k| k % 7 == 3));
    let zeros = Array1::from_iter((0..1000).map(|k| if k % 3 == 0 { 0.0 } else { -0.0 }));
    let i32s = i.mapv(|v| v as i32);
    let empty = Array1::<f64>::zeros(0);
    let checked: [(&str, kiln::ArrayArg<'_>, usize); 25] = [
        ("sum(x) + max(x) * min(x)", (&sp).into(), 1),
        ("max(x) - min(x)", (&zeros).into(), 1),
        ("1 / max(x) + 1 / min(x)", (&zeros).into(), 1),
        ("sum(x) + max(x)", (&b).into(), 1),
        ("sum(x) * max(x) - min(x)", (&i32s).into(), 1),
        ("sum(x) + max(x) * mean(x)", (&x).into(), 3),
        ("sum(x) + mean(x)", (&empty).into(), 1),
        ("sqrt(sum(x*x)) + x", (&x32).into(), 1),
        ("sum(x) + max(x)", (&x32).into(), 1),
        ("sum(x) * min(x) - x", (&long).into(), 1),
        ("sum(x) * min(x) - x", (&long).into(), 3),
        ("(x - mean(x)) / std(x)", (&x32).into(), 1),
        ("var(x) * x", (&long).into(), 3),
        ("var(x) + 1", (&i).into(), 1),
        ("std(x, axis=0) * x", (&big).into(), 1),
        ("(x - mean(x, axis=0)) / std(x, axis=0)", (&big).into(), 3),
        ("mean(x) * var(x)", (&long_i).into(), 3),
        ("sum(x, axis=0) * max(x, axis=0)", (&big).into(), 1),
        ("max(x) - min(x)", (&long_i).into(), 1),
        ("max(x) - min(x) + sum(x)", (&i).into(), 1),
        ("x - mean(x)", (&i).into(), 1),
        ("cumsum(x) / sum(x)", (&x).into(), 1),
        ("sum(x, initial=2.5) * x", (&x).into(), 1),
        ("x - mean(x)", (&long).into(), 3),
        ("sqrt(sum(x*x))", (&long).into(), 3),
    ];
    for (src, a, threads) in checked {
        as_the_stage_loop(src, a, threads);
    }
    // Fortran inputs whose pipeline is not run in memory order: the stage loop's bits and layout
    let f = Array2::from_shape_fn((41, 33).f(), |(i, j)| ((i * 33 + j) as f64 * 0.37).sin());
    let c = Array2::from_shape_fn((41, 33), |(i, j)| ((i + 2 * j) as f64 * 0.11).cos());
    let r = Array1::from_iter((0..33).map(|j| j as f64 * 0.5));
    for (src, args) in [
        ("f - mean(f, axis=0)", vec![("f", (&f).into())]),
        ("sum(f) + r", vec![("f", (&f).into()), ("r", (&r).into())]),
        ("sum(f) * c", vec![("f", (&f).into()), ("c", (&c).into())]),
        ("f + sum(c)", vec![("f", (&f).into()), ("c", (&c).into())]),
    ] {
        let runner = FusedRunner::compile_text(src).unwrap();
        let h = runner.prepared(&args).unwrap();
        let positional: Vec<kiln::ArrayArg<'_>> = args.iter().map(|(_, a)| a.clone()).collect();
        let want = by_stage_loop(&h, &positional);
        let got = h.run(&positional).unwrap().into_f64();
        assert!(same_bits(&got, &want), "{src}");
        if h.memory_order().is_none() {
            assert!(
                got.is_standard_layout(),
                "{src}: C order, as the stage loop gives it"
            );
        }
    }
    // another layout than bound: each stage off its fast path, the same values
    let runner = FusedRunner::compile_text("m / sum(m, axis=1, keepdims=1)").unwrap();
    let v = m.slice(s![.., 1..]);
    let h = runner.prepared(&[("m", v.into())]).unwrap();
    let want = h.run(&[v.into()]).unwrap().into_f64();
    let wide = Array2::from_shape_fn((7, 400), |(i, j)| if j < 300 { m[[i, j + 1]] } else { f64::NAN });
    let w = wide.slice(s![.., ..300]);
    assert!(same_bits(&h.run(&[w.into()]).unwrap().into_f64(), &want));
    // a bool, an index or an integer result between two kernels: by handles, each result read as
    // the stage loop reads it (a typed kernel's as it is, the float path's as float64)
    for (src, want) in [
        (
            "sum(x > 0) + 0.5",
            Some((x.iter().filter(|&&v| v > 0.0).count() as f64) + 0.5),
        ),
        ("argmax(x) + 0.5", {
            let best = x
                .iter()
                .enumerate()
                .fold(0, |b, (k, &v)| if v > x[b] { k } else { b });
            Some(best as f64 + 0.5)
        }),
        ("sum(i) + 1", Some((i.sum() + 1) as f64)),
        ("i - sum(i)", None),
        ("x * any(b)", None),
        (
            "max(i) - min(i)",
            Some((i.iter().max().unwrap() - i.iter().min().unwrap()) as f64),
        ),
        ("i * 2 - mean(i)", None),
    ] {
        let named = [("x", (&x).into()), ("i", (&i).into()), ("b", (&b).into())];
        let used: Vec<(&str, kiln::ArrayArg<'_>)> =
            named.iter().filter(|(n, _)| src.contains(n)).cloned().collect();
        let positional: Vec<kiln::ArrayArg<'_>> = used.iter().map(|(_, a)| a.clone()).collect();
        let runner = FusedRunner::compile_text(src).unwrap();
        let h = runner.prepared(&used).unwrap();
        let looped = by_stage_loop(&h, &positional);
        for call in 0..2 {
            let got = h.run(&positional).unwrap();
            assert_eq!(got.elem(), h.output_type(), "{src}");
            let got = got.into_f64();
            assert!(same_bits(&got, &looped), "{src}: call {call}");
            if let Some(want) = want {
                assert_eq!(got[[]], want, "{src}");
            }
        }
    }
}

#[test]
fn a_call_with_other_inputs_than_bound_is_an_error_naming_the_input() {
    let (x, y) = (data(100, 0.0), data(100, 1.0));
    let runner = FusedRunner::compile_text("x*y + 1").unwrap();
    let h = runner
        .prepared(&[("x", (&x).into()), ("y", (&y).into())])
        .unwrap();
    let mut out = Array1::<f64>::zeros(100);
    let msg = |e: Error| {
        assert!(matches!(e, Error::Prepared(_)), "{e}");
        e.to_string()
    };
    // count
    let e = h.run_into(&[(&x).into()], out.view_mut()).unwrap_err();
    assert_eq!(msg(e), "prepared call: 1 inputs given, 2 bound (x, y)");
    // shape
    let short = data(99, 0.0);
    let e = h
        .run_into(&[(&x).into(), (&short).into()], out.view_mut())
        .unwrap_err();
    assert_eq!(
        msg(e),
        "prepared call: input 1 ('y') is f64 of shape [99] but was bound as f64 of shape [100]"
    );
    // dtype
    let y32 = y.mapv(|v| v as f32);
    let e = h.run(&[(&x).into(), (&y32).into()]).unwrap_err();
    assert_eq!(
        msg(e),
        "prepared call: input 1 ('y') is f32 of shape [100] but was bound as f64 of shape [100]"
    );
    // an output that does not fit: the runner's own error
    let mut wrong = Array1::<f64>::zeros(99);
    let e = h
        .run_into(&[(&x).into(), (&y).into()], wrong.view_mut())
        .unwrap_err();
    assert!(matches!(e, Error::OutputShape { .. }), "{e}");
    let mut wrong_type = Array1::<f32>::zeros(100);
    let e = h
        .run_into(&[(&x).into(), (&y).into()], wrong_type.view_mut())
        .unwrap_err();
    assert!(matches!(e, Error::Output(_)), "{e}");
    // binding itself checks the names
    assert!(matches!(
        runner.prepared(&[("x", (&x).into())]),
        Err(Error::MissingInput { .. })
    ));
}

#[test]
fn a_layout_other_than_bound_runs_correctly_off_the_fast_path() {
    let m = Array2::from_shape_fn((6, 8), |(i, j)| (i * 8 + j) as f32 * 0.5 - 7.0);
    let runner = FusedRunner::compile_text("x*x - 3").unwrap();
    let h = runner.prepared(&[("x", (&m).into())]).unwrap();
    assert!(h.is_direct());
    // the same shape, transposed data: not C-contiguous
    let t = Array2::from_shape_fn((8, 6), |(i, j)| m[[j, i]]);
    let tv = t.t();
    let want = runner.run(&[("x", tv.into())]).unwrap();
    let mut out = Array2::<f32>::zeros((6, 8));
    h.run_into(&[tv.into()], out.view_mut()).unwrap();
    assert_eq!(Output::F32(out.into_dyn()), want);
}

/// An empty view of any strides (here transposed) is an empty slice to the compiled code (the
/// bounded fuzzer's seed 6).
#[test]
fn an_empty_transposed_view_takes_the_fast_path() {
    let e = Array2::<f64>::zeros((42, 0));
    let t = e.t();
    for src in ["x*2 + 1", "prod(logaddexp(x, 2.5))", "sum(x, axis=0)"] {
        let runner = FusedRunner::compile_text(src).unwrap();
        let want = runner.run(&[("x", t.into())]).unwrap().into_f64();
        let h = runner.prepared(&[("x", t.into())]).unwrap();
        let mut out = ArrayD::<f64>::zeros(h.output_shape());
        h.run_into(&[t.into()], out.view_mut()).unwrap();
        assert!(same_bits(&out, &want), "{src}");
    }
}

/// `Prepared::run` of a direct handle calls the compiled code into a fresh result (not zeroed):
/// every element is the run's, at every size (vector tails, one element, empty, several work units).
#[test]
fn a_direct_run_fills_its_fresh_result() {
    for src in [
        "x * 2.5 + 1",
        "cumsum(x)",
        "sum(x)",
        "mean(x)",
        "max(x * x, initial=0.5)",
    ] {
        let runner = FusedRunner::compile_text(src)
            .unwrap()
            .with_threads(3)
            .with_threshold(0);
        for n in [0usize, 1, 3, 8, 17, 1000, 4099, 100_000] {
            let x = data(n, n as f64 * 0.1);
            // a freed result of other values just before
            drop(runner.run(&[("x", (&Array1::from_elem(n, 1e300)).into())]));
            let want = runner.run(&[("x", (&x).into())]);
            let h = runner.prepared(&[("x", (&x).into())]);
            match (want, h) {
                (Ok(want), Ok(h)) => {
                    assert!(h.is_direct(), "{src}");
                    let got = h.run(&[(&x).into()]).unwrap().into_f64();
                    assert!(same_bits(&got, &want.into_f64()), "{src} over {n}");
                }
                (Err(_), Err(_)) => {}
                (w, h) => panic!("{src} over {n}: {:?} vs {:?}", w.is_ok(), h.is_ok()),
            }
        }
    }
}

/// A handle bound to a transposed input beside an extra input of more axes, which the expression does
/// not read (fuzz seed 2965 of the typed generator): the run in memory order leaves the extra input
/// as it is, where it panicked permuting its three axes by the two-axis order.
#[test]
fn an_unread_input_of_more_axes_beside_a_transposed_one() {
    let x = Array2::from_shape_fn((18, 7), |(i, j)| (i * 7 + j) as f64 - 60.0);
    let xt = x.t();
    let extra = ArrayD::<f64>::zeros(ndarray::IxDyn(&[1, 7, 18]));
    let runner = FusedRunner::compile_text("sum(floor(x) * 0.5, axis=0)").unwrap();
    let inputs = [("extra", (&extra).into()), ("x", xt.into())];
    let want = FusedRunner::compile_text("sum(floor(x) * 0.5, axis=0)")
        .unwrap()
        .with_backend(kiln::interpreter())
        .run(&[("x", (&xt.to_owned()).into())])
        .unwrap();
    // the ordinary call binds a handle on its first call and takes it on the second
    for _ in 0..3 {
        let got = runner.run(&inputs).unwrap();
        assert_eq!(format!("{got:?}"), format!("{want:?}"));
    }
    let h = runner.prepared(&inputs).unwrap();
    let got = h.run(&[(&extra).into(), xt.into()]).unwrap();
    assert_eq!(format!("{got:?}"), format!("{want:?}"));
}

/// The slice calls take every element type: inputs of one type, a result of its own (a bool of a
/// comparison, an integer, a complex number), the handle's serial kernel or the call of every
/// type; each equals the interpreter's result; a slice of another type is an error, nothing
/// written.
#[test]
fn slice_calls_take_every_element_type() {
    use kiln::kiln_ir::num_complex::Complex64;
    let n = 45;
    let i = Array1::from_iter((0..n).map(|k| (k * 13 % 29) as i64 - 14));
    let k = Array1::from_iter((0..n).map(|k| k as i64 % 4));
    let z = Array1::from_iter((0..n).map(|k| Complex64::new(k as f64 * 0.25, 2.0 - k as f64)));
    let x = data(n, 0.5);
    fn oracle(expr: &str, inputs: &[(&str, kiln::ArrayArg<'_>)]) -> kiln::Output {
        FusedRunner::compile_text(expr)
            .unwrap()
            .with_backend(kiln::backend_by_name("interp").unwrap())
            .run(inputs)
            .unwrap()
    }
    fn check<A: kiln::Element, B: kiln::Element + PartialEq + std::fmt::Debug + Default>(
        expr: &str,
        names: &[&str],
        inputs: &[&ndarray::Array1<A>],
    ) {
        let named: Vec<(&str, kiln::ArrayArg<'_>)> =
            names.iter().zip(inputs).map(|(n, a)| (*n, (*a).into())).collect();
        let want = B::take(oracle(expr, &named)).unwrap();
        let h = FusedRunner::compile_text(expr).unwrap().prepared(&named).unwrap();
        let slices: Vec<&[A]> = inputs.iter().map(|a| a.as_slice().unwrap()).collect();
        for _ in 0..3 {
            let mut out = vec![B::default(); want.len()];
            h.run_slices(&slices, &mut out).unwrap();
            assert_eq!(out, want.iter().cloned().collect::<Vec<_>>(), "{expr}");
        }
    }
    check::<i64, i64>("i * 3 - k", &["i", "k"], &[&i, &k]);
    check::<i64, bool>("i > k", &["i", "k"], &[&i, &k]);
    check::<i64, i64>("sum(i * k)", &["i", "k"], &[&i, &k]);
    check::<i64, i64>("cumsum(i)", &["i"], &[&i]);
    check::<i64, f64>("i / 3", &["i"], &[&i]);
    check::<Complex64, Complex64>("z * z + 1", &["z"], &[&z]);
    check::<f64, bool>("x > 0.5", &["x"], &[&x]);
    check::<f64, f64>("x * x + 1", &["x"], &[&x]);
    check::<f64, f64>("sum(x * x)", &["x"], &[&x]);

    // a slice of another type than bound, an output of another type: errors, nothing written
    let h = FusedRunner::compile_text("i > k")
        .unwrap()
        .prepared(&[("i", (&i).into()), ("k", (&k).into())])
        .unwrap();
    let wrong: Vec<i32> = vec![1; n];
    let mut out = vec![true; n];
    let e = h.run_slices(&[&wrong[..], &wrong[..]], &mut out).unwrap_err();
    assert!(
        matches!(e, Error::Prepared(_)) && e.to_string().contains("input 0 ('i')"),
        "{e}"
    );
    let mut ints = vec![7i64; n];
    let e = h
        .run_slices(&[i.as_slice().unwrap(), k.as_slice().unwrap()], &mut ints)
        .unwrap_err();
    assert!(matches!(e, Error::Output(_)), "{e}");
    assert!(out.iter().all(|&v| v) && ints.iter().all(|&v| v == 7));
}
