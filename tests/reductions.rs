//! The reduction family: `initial`, `keepdims`, axis tuples and `axis=()`, the AcceleratedKernels
//! reduce_nd corner cases and the numexpr reduction cases (copied with attribution into tests/data/),
//! NaN and empty extents, multi-kernel plans against the interpreter, and bitwise determinism over
//! thread counts.
//!
//! Bounds: elementwise results are bit-exact against the interpreter. A sum or product the JIT
//! reassociates (vector lanes, accumulators, chunks) differs from the interpreter's sequential fold by
//! at most `(n + 2) * eps * Σ|x|` (the jit parity suite's bound, with `n` values folded into the
//! output); here, on data of one sign or small integers, a relative 1e-12 (f64) holds and is used.
//! min, max, argmin, argmax, any and all are exact.

use kiln::kiln_ir::ReduceOp;
use kiln::{ArrayArg, Axes, Expr, FusedRunner, Output, Parallel};
use ndarray::{ArrayD, Dimension, IxDyn};

#[macro_use]
mod support;

use support::{Rng, bits_equal, close};

backend_suite!(
    ak_reduce_nd_corner_cases,
    numexpr_reduction_cases,
    initial_keepdims_and_axis_tuples,
    nan_in_min_max_argmin_argmax,
    empty_axes,
);

fn arr(shape: &[usize], f: impl FnMut() -> f64) -> ArrayD<f64> {
    let n = shape.iter().product();
    let mut f = f;
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|_| f()).collect()).unwrap()
}

fn runner(expr: &str, backend: &str, threads: usize) -> FusedRunner {
    FusedRunner::compile_text(expr)
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
        .with_backend(kiln::backend_by_name(backend).unwrap())
        .with_threads(threads)
}

fn run(expr: &str, x: &ArrayD<f64>, backend: &str) -> kiln::Result<Output> {
    runner(expr, backend, 1).run(&[("x", x.into())])
}

fn f64s(out: Output) -> (Vec<usize>, Vec<f64>) {
    let shape = out.shape().to_vec();
    (shape, out.into_f64().iter().copied().collect())
}

/// The data rows of a copied corpus (the `#` header and the column row skipped), split on commas
/// outside double quotes.
fn csv_rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .skip(1)
        .map(|line| {
            let mut out = vec![String::new()];
            let mut quoted = false;
            for c in line.chars() {
                match c {
                    '"' => quoted = !quoted,
                    ',' if !quoted => out.push(String::new()),
                    c => out.last_mut().unwrap().push(c),
                }
            }
            out
        })
        .collect()
}

// ---- AcceleratedKernels reduce_nd corner cases ----

fn ak_reduce_nd_corner_cases(backend: &str) {
    let rows = csv_rows(include_str!("data/ak_reduce_nd_corner_cases.csv"));
    assert_eq!(rows.len(), 256);
    let mut rng = Rng::new(0x5eed);
    for row in &rows {
        let dims: usize = row[0].parse().unwrap();
        let shape: Vec<usize> = row[1..4].iter().map(|s| s.parse().unwrap()).collect();
        let want_shape: Vec<usize> = row[4].split('x').map(|s| s.parse().unwrap()).collect();
        let rule = &row[5];
        // Int32 data, read as f64
        let x = arr(&shape, || rng.int(-1000, 1000));
        // Julia's dims=d is axis=d-1; dims=4, beyond the rank, reduces over no axis
        let axis = if dims <= 3 {
            format!("{}", dims - 1)
        } else {
            "()".into()
        };
        let exprs = [
            format!("sum(x, axis={axis}, initial=10, keepdims=1)"),
            format!("sum(x, keepdims=True, initial=10, axis={axis})"),
        ];
        // the expected values: init + the sum over the reduced axis, init applied once per output
        let mut want = ArrayD::<f64>::from_elem(IxDyn(&want_shape), 10.0);
        for (idx, &v) in x.indexed_iter() {
            let mut o = idx.slice().to_vec();
            if dims <= 3 {
                o[dims - 1] = 0;
            }
            want[IxDyn(&o)] += v;
        }
        let want: Vec<f64> = want.iter().copied().collect();
        if rule.starts_with("filled with init") {
            assert!(want.iter().all(|&v| v == 10.0));
        }
        if rule.starts_with("empty output") {
            assert!(want.is_empty());
        }
        for expr in &exprs {
            let (s, v) = f64s(run(expr, &x, backend).unwrap_or_else(|e| panic!("{expr} {shape:?}: {e}")));
            assert_eq!(s, want_shape, "{expr} on {shape:?} ({backend}): shape ({rule})");
            assert_eq!(v, want, "{expr} on {shape:?} ({backend}): values ({rule})");
            // threads and the threshold forced to 0 change nothing
            let r = runner(expr, backend, 3).with_threshold(0);
            let (s, v) = f64s(r.run(&[("x", (&x).into())]).unwrap());
            assert_eq!(
                (s, v),
                (want_shape.clone(), want.clone()),
                "{expr} on {shape:?} (3 threads)"
            );
        }
        // without keepdims the reduced axis goes
        if dims <= 3 {
            let (s, _) = f64s(run(&format!("sum(x, axis={axis}, initial=10)"), &x, backend).unwrap());
            let mut dropped = shape.clone();
            dropped.remove(dims - 1);
            assert_eq!(s, dropped);
        }
    }
}

// ---- numexpr reduction cases ----

/// The input an `input` cell describes, or None for the complex rows.
fn numexpr_input(desc: &str) -> Option<(String, ArrayD<f64>)> {
    let (name, rest) = desc.split_once(" = ")?;
    if rest.contains("complex") || rest.contains("j ") || rest.contains("0.1j") {
        return None;
    }
    let a = if rest.starts_with("zeros(100000) + 0.01") {
        ArrayD::from_elem(IxDyn(&[100_000]), 0.01)
    } else if rest.starts_with("arange(10).reshape(1,10)") {
        ArrayD::from_shape_vec(IxDyn(&[1, 10]), (0..10).map(f64::from).collect()).unwrap()
    } else if rest.starts_with("arange(10.0)") || rest.starts_with("arange(10).astype(int)") {
        ArrayD::from_shape_vec(IxDyn(&[10]), (0..10).map(f64::from).collect()).unwrap()
    } else if rest.starts_with("arange(100.0)") {
        ArrayD::from_shape_vec(IxDyn(&[100]), (0..100).map(f64::from).collect()).unwrap()
    } else if rest.starts_with("linspace(0.1, 1.0, 2000)") {
        let step = (1.0 - 0.1) / 1999.0;
        let mut v: Vec<f64> = (0..2000).map(|i| 0.1 + i as f64 * step).collect();
        v[1999] = 1.0;
        ArrayD::from_shape_vec(IxDyn(&[2000]), v).unwrap()
    } else if rest.starts_with("arange(9.0).reshape(3,3)") {
        ArrayD::from_shape_vec(IxDyn(&[3, 3]), (0..9).map(f64::from).collect()).unwrap()
    } else {
        panic!("unknown numexpr input '{desc}'")
    };
    Some((name.to_string(), a))
}

/// The expression's value by a plain sequential loop over the iteration space (the reference).
fn reference(expr: &str, x: &ArrayD<f64>) -> (Vec<usize>, Vec<f64>) {
    // the body evaluated elementwise by the interpreter, then folded here
    let (op, rest) = expr.split_once('(').unwrap();
    let inner = &rest[..rest.len() - 1];
    let (body, axis) = match inner
        .rsplit_once(",axis=")
        .or_else(|| inner.rsplit_once(", axis="))
    {
        Some((b, a)) => (b, a.trim()),
        None => (inner, "None"),
    };
    let name = if expr.contains('y') { "y" } else { "x" };
    let vals = FusedRunner::compile_text(body)
        .unwrap()
        .with_backend(kiln::interpreter())
        .run(&[(name, x.into())])
        .unwrap()
        .into_f64();
    let fold = |it: &mut dyn Iterator<Item = f64>| -> f64 {
        match op {
            "sum" => it.fold(0.0, |a, v| a + v),
            "prod" => it.fold(1.0, |a, v| a * v),
            "min" => it.fold(f64::INFINITY, f64::min),
            "max" => it.fold(f64::NEG_INFINITY, f64::max),
            _ => panic!("op {op}"),
        }
    };
    if axis == "None" {
        return (vec![], vec![fold(&mut vals.iter().copied())]);
    }
    let a: usize = axis.parse().unwrap();
    let lanes: Vec<f64> = vals
        .lanes(ndarray::Axis(a))
        .into_iter()
        .map(|l| fold(&mut l.iter().copied()))
        .collect();
    let mut shape = vals.shape().to_vec();
    shape.remove(a);
    (shape, lanes)
}

fn numexpr_reduction_cases(backend: &str) {
    let rows = csv_rows(include_str!("data/numexpr_reduction_cases.csv"));
    assert_eq!(rows.len(), 38);
    let mut ran = 0;
    for row in &rows {
        let Some((name, x)) = numexpr_input(&row[0]) else {
            continue; // complex rows
        };
        let expr = &row[1];
        let want = reference(expr, &x);
        for threads in [1, 2] {
            let out = runner(expr, backend, threads)
                .with_threshold(0)
                .run(&[(name.as_str(), (&x).into())])
                .unwrap_or_else(|e| panic!("{expr}: {e}"));
            let got = f64s(out);
            assert_eq!(got.0, want.0, "{expr} ({backend}): shape");
            // upstream: assert_allclose, rtol 1e-7
            assert!(
                close(&got.1, &want.1, 1e-7),
                "{expr} ({backend}): {:?} vs {:?}",
                got.1,
                want.1
            );
        }
        ran += 1;
    }
    assert_eq!(ran, 36, "every float and int row runs");
}

/// numexpr issue #41: 100 000 × 0.01 summed; f64 accumulators and two passes keep it to a few ulp.
#[test]
fn sum_accuracy() {
    let x = ArrayD::from_elem(IxDyn(&[100_000]), 0.01);
    let exact = 100_000.0 * 0.01f64; // one rounding
    for threads in [1, 2, 3] {
        let r = runner("sum(x)", "jit", threads).with_threshold(0);
        let got = r.run(&[("x", (&x).into())]).unwrap().into_f64()[[]];
        assert!((got - exact).abs() <= 1e-12 * exact, "{got} vs {exact}");
    }
    // f32 data: accumulated in f64, rounded once
    let x32 = ArrayD::from_elem(IxDyn(&[100_000]), 0.01f32);
    let got = runner("sum(x)", "jit", 2)
        .with_threshold(0)
        .run(&[("x", (&x32).into())])
        .unwrap();
    let Output::F32(a) = got else {
        panic!("f32 sum gives f32")
    };
    let exact = (100_000.0 * 0.01f32 as f64) as f32;
    assert_eq!(a[[]], exact);
}

// ---- initial, keepdims, axes ----

fn initial_keepdims_and_axis_tuples(backend: &str) {
    let x = ArrayD::from_shape_vec(IxDyn(&[2, 3, 4]), (0..24).map(f64::from).collect()).unwrap();
    let cases: &[(&str, &[usize], &[f64])] = &[
        ("sum(x, axis=(0, 2))", &[3], &[60.0, 92.0, 124.0]),
        (
            "sum(x, axis=(0, 2), keepdims=1)",
            &[1, 3, 1],
            &[60.0, 92.0, 124.0],
        ),
        ("sum(x, axis=(-1, 0), initial=-3.5)", &[3], &[56.5, 88.5, 120.5]),
        ("max(x, axis=(1,), initial=100)", &[2, 4], &[100.0; 8]),
        ("min(x, axis=(0, 1, 2), initial=-inf)", &[], &[f64::NEG_INFINITY]),
        (
            "prod(x + 1, axis=2, initial=0.5)",
            &[2, 3],
            &[12.0, 840.0, 5940.0, 21840.0, 58140.0, 127512.0],
        ),
        ("sum(x, axis=None, keepdims=True)", &[1, 1, 1], &[276.0]),
        ("argmax(x, axis=1, keepdims=1)", &[2, 1, 4], &[2.0; 8]),
        ("any(x > 22, axis=(0, 1))", &[4], &[0.0, 0.0, 0.0, 1.0]),
        ("all(x >= 0, axis=-1, keepdims=1)", &[2, 3, 1], &[1.0; 6]),
    ];
    for &(expr, shape, want) in cases {
        let (s, v) = f64s(run(expr, &x, backend).unwrap_or_else(|e| panic!("{expr}: {e}")));
        assert_eq!(s, shape, "{expr} ({backend})");
        assert_eq!(v, want, "{expr} ({backend})");
    }
    // axis=() reduces over no axis: initial ⊕ x elementwise (NumPy's rule)
    let (s, v) = f64s(run("sum(x, axis=(), initial=10)", &x, backend).unwrap());
    assert_eq!(s, vec![2, 3, 4]);
    assert_eq!(v, (0..24).map(|i| i as f64 + 10.0).collect::<Vec<_>>());
    let (_, v) = f64s(run("min(x, axis=())", &x, backend).unwrap());
    assert_eq!(v, (0..24).map(f64::from).collect::<Vec<_>>());
    // the builder says the same
    let e = Expr::input("x").reduce_with(ReduceOp::Sum, Axes::Some(vec![0, 2]), true, Some(-3.5));
    let out = FusedRunner::compile(&e)
        .unwrap()
        .run(&[("x", (&x).into())])
        .unwrap();
    assert_eq!(out.shape(), &[1, 3, 1]);
    // errors: initial on any/all/argmin/argmax, tuples on argmin/argmax, repeated axes
    for bad in [
        "any(x, initial=1)",
        "all(x, initial=0)",
        "argmin(x, initial=1)",
        "argmax(x, axis=(0, 1))",
        "argmin(x, axis=())",
    ] {
        assert!(FusedRunner::compile_text(bad).is_err(), "{bad}");
    }
    assert!(run("sum(x, axis=(0, -3))", &x, backend).is_err());
    assert!(run("sum(x, axis=(0, 3))", &x, backend).is_err());
    let e = Expr::input("x").reduce_with(ReduceOp::Any, Axes::All, false, Some(1.0));
    assert!(FusedRunner::compile(&e).is_err());
    // an empty extent: initial fills it, min/max with initial do not fail
    let empty = ArrayD::<f64>::zeros(IxDyn(&[3, 0]));
    let (s, v) = f64s(run("min(x, axis=1, initial=7)", &empty, backend).unwrap());
    assert_eq!((s, v), (vec![3], vec![7.0; 3]));
    assert!(run("min(x, axis=1)", &empty, backend).is_err());
    let (s, v) = f64s(run("sum(x, axis=0, keepdims=1)", &empty, backend).unwrap());
    assert_eq!((s, v), (vec![1, 0], vec![]));
}

#[test]
fn accumulate_into_previous_values() {
    let x = ArrayD::from_shape_vec(IxDyn(&[2, 2]), vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    let mut out = ndarray::arr1(&[1.0, 2.0]);
    let r = FusedRunner::compile_text("sum(x, axis=0)").unwrap();
    r.run_accumulate(&[("x", (&x).into())], out.view_mut()).unwrap();
    assert_eq!(out, ndarray::arr1(&[5.0, 8.0]));
    r.run_accumulate(&[("x", (&x).into())], out.view_mut()).unwrap();
    assert_eq!(out, ndarray::arr1(&[9.0, 14.0]));
    let r = FusedRunner::compile_text("max(x, axis=1)").unwrap();
    let mut out = ndarray::arr1(&[10.0, 0.0]);
    r.run_accumulate(&[("x", (&x).into())], out.view_mut()).unwrap();
    assert_eq!(out, ndarray::arr1(&[10.0, 4.0]));
    // f32 outputs accumulate in f64 and round once
    let x32 = ArrayD::from_elem(IxDyn(&[1000]), 1e-8f32);
    let mut out = ndarray::arr0(1.0f32);
    FusedRunner::compile_text("sum(x)")
        .unwrap()
        .run_accumulate(&[("x", (&x32).into())], out.view_mut())
        .unwrap();
    assert_eq!(out[[]], (1.0f64 + 1000.0 * 1e-8f32 as f64) as f32);
    assert!(
        FusedRunner::compile_text("argmax(x)")
            .unwrap()
            .run_accumulate(&[("x", (&x).into())], ndarray::arr0(0.0).view_mut())
            .is_err()
    );
}

// ---- NaN and empty extents ----

fn nan_in_min_max_argmin_argmax(backend: &str) {
    let nan = f64::NAN;
    let x = ArrayD::from_shape_vec(IxDyn(&[2, 4]), vec![1.0, nan, -3.0, nan, 5.0, 2.0, 2.0, -1.0]).unwrap();
    let v = |e: &str| f64s(run(e, &x, backend).unwrap()).1;
    assert!(v("min(x)")[0].is_nan());
    assert!(v("max(x)")[0].is_nan());
    assert_eq!(v("argmin(x)"), vec![1.0]);
    assert_eq!(v("argmax(x)"), vec![1.0]);
    assert_eq!(v("argmax(x, axis=1)"), vec![1.0, 0.0]);
    assert_eq!(v("argmin(x, axis=1)"), vec![1.0, 3.0]);
    let m = v("max(x, axis=0)");
    assert!(bits_equal(&m, &[5.0, nan, 2.0, nan]), "{m:?}");
    assert_eq!(v("min(x, axis=1)")[1], -1.0);
    // across chunks: the first NaN wins wherever the chunk boundaries fall
    let n = 400_000;
    let mut big = vec![1.0; n];
    big[250_000] = nan;
    big[150_001] = nan;
    big[399_999] = 7.0;
    let big = ArrayD::from_shape_vec(IxDyn(&[n]), big).unwrap();
    for threads in [1, 2, 7] {
        let r = |e: &str| f64s(runner(e, backend, threads).run(&[("x", (&big).into())]).unwrap()).1;
        assert_eq!(r("argmax(x)"), vec![150_001.0]);
        assert_eq!(r("argmin(x)"), vec![150_001.0]);
        assert!(r("max(x)")[0].is_nan());
        assert_eq!(r("argmax(where(x != x, 0, x))"), vec![399_999.0]);
    }
}

fn empty_axes(backend: &str) {
    for shape in [vec![0usize], vec![0, 5], vec![5, 0], vec![2, 0, 3]] {
        let x = ArrayD::<f64>::zeros(IxDyn(&shape));
        for threads in [1, 3] {
            let r = |e: &str| {
                runner(e, backend, threads)
                    .with_threshold(0)
                    .run(&[("x", (&x).into())])
                    .map(f64s)
            };
            assert_eq!(r("sum(x)").unwrap().1, vec![0.0]);
            assert_eq!(r("prod(x)").unwrap().1, vec![1.0]);
            assert_eq!(r("sum(x, initial=2)").unwrap().1, vec![2.0]);
            assert_eq!(r("max(x, initial=-1)").unwrap().1, vec![-1.0]);
            assert!(r("min(x)").is_err());
            assert!(r("argmax(x)").is_err());
            let (s, v) = r("sum(x, axis=0, keepdims=1)").unwrap();
            let mut want = shape.clone();
            want[0] = 1;
            assert_eq!(s, want);
            assert!(v.iter().all(|&v| v == 0.0));
            assert!(r("mean(x)").unwrap().1[0].is_nan());
        }
    }
}

// ---- multi-kernel plans ----

#[test]
fn multi_kernel_plans_match_the_interpreter() {
    // data of one sign (see the bound in the module doc): a whole-array mean of mixed signs cancels,
    // and its reassociated sum is then not within a relative 1e-12 of the sequential one
    let mut rng = Rng::new(77);
    let x = arr(&[37, 301], || rng.uniform(0.5, 3.0));
    let cases: &[(&str, usize)] = &[
        ("x - max(x, axis=1, keepdims=1)", 2),
        // softmax: the max, the sum of exponentials (at full width: src/siblings.rs), the map
        ("exp(x - max(x)) / sum(exp(x - max(x)))", 3),
        (
            "exp(x - max(x, axis=-1, keepdims=1)) / sum(exp(x - max(x, axis=-1, keepdims=1)), axis=-1, keepdims=1)",
            3,
        ),
        ("sqrt(sum(x*x))", 2),
        ("sqrt(sum(x*x, axis=0))", 2),
        ("mean(x)", 1),
        ("mean(x, axis=1)", 1),
        ("mean(x, axis=(0, 1), keepdims=1)", 1),
        ("var(x)", 2),
        ("var(x, axis=0)", 2),
        // mean and var: one pass, then sqrt
        ("std(x, axis=1, keepdims=True)", 2),
        ("x / sum(x, axis=0) + mean(x)", 3),
        ("sum(x - mean(x, axis=0), axis=0)", 2),
        ("argmax(x - min(x, axis=1, keepdims=1), axis=1)", 2),
        ("sum(sum(x, axis=0))", 2),
    ];
    for &(expr, kernels) in cases {
        let jit = runner(expr, "jit", 2).with_threshold(0);
        assert_eq!(
            jit.pipeline().stages.len(),
            kernels,
            "{expr}: kernels\n{}",
            jit.pipeline()
        );
        let a = f64s(jit.run(&[("x", (&x).into())]).unwrap());
        let b = f64s(run(expr, &x, "interp").unwrap());
        assert_eq!(a.0, b.0, "{expr}: shape");
        // a sum that cancels to ~0 (`sum(x - mean(x))`) differs by its rounding, relative to the
        // magnitude of its terms (the interpreter sums pairwise, the JIT's column sums in order):
        // an absolute floor of 1e-12 times the data's scale (37 rows of |x| <= 3)
        let floor = if expr.starts_with("sum(x - mean") {
            1e-12 * 37.0 * 3.0
        } else {
            0.0
        };
        assert!(
            close(&a.1, &b.1, 1e-12) || a.1.iter().zip(&b.1).all(|(p, q)| (p - q).abs() <= floor),
            "{expr}: {:?} vs {:?}",
            &a.1[..a.1.len().min(4)],
            &b.1[..4.min(b.1.len())]
        );
    }
    // against NumPy's definitions, computed here
    let v: Vec<f64> = x.iter().copied().collect();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    let got = f64s(run("std(x)", &x, "jit").unwrap()).1[0];
    assert!((got - var.sqrt()).abs() <= 1e-12 * var.sqrt());
    let b = Expr::input("x").std_axes(Axes::Some(vec![1]), true);
    let out = FusedRunner::compile(&b)
        .unwrap()
        .run(&[("x", (&x).into())])
        .unwrap();
    assert_eq!(out.shape(), &[37, 1]);
    // softmax rows sum to 1
    let sm = runner(cases[2].0, "jit", 2)
        .run(&[("x", (&x).into())])
        .unwrap()
        .into_f64();
    for row in sm.rows() {
        assert!((row.sum() - 1.0).abs() < 1e-12);
    }
    // run_into on a multi-kernel plan writes the last kernel straight into the output
    let mut out = ArrayD::<f64>::zeros(IxDyn(&[37, 301]));
    FusedRunner::compile_text(cases[0].0)
        .unwrap()
        .run_into(&[("x", (&x).into())], out.view_mut())
        .unwrap();
    let want = f64s(run(cases[0].0, &x, "interp").unwrap()).1;
    assert!(bits_equal(&out.iter().copied().collect::<Vec<_>>(), &want));
    // the plan shows what flows between kernels
    let plan = runner(cases[3].0, "jit", 1).pipeline().to_string();
    assert!(plan.contains("kernel 0: reduce sum"), "{plan}");
    assert!(plan.contains("%0 (kernel 0)"), "{plan}");
}

// ---- threads ----

/// Thread counts 1, 2, 3 and 7 give the same bits, above the threshold and with it forced to 0.
#[test]
fn thread_count_does_not_change_the_bits() {
    let mut rng = Rng::new(99);
    // above the default threshold (2^18 points)
    let big = arr(&[400, 701], || {
        let v = rng.uniform(-3.0, 3.0);
        if rng.next_u64().is_multiple_of(10_007) {
            f64::NAN
        } else {
            v
        }
    });
    let near_one = arr(&[280_001], || rng.uniform(0.999, 1.001));
    let small = arr(&[7, 91], || rng.uniform(-3.0, 3.0));
    let exprs = [
        "sum(x*x)",
        "sum(x)",
        "min(x)",
        "max(x)",
        "argmin(x)",
        "argmax(x)",
        "any(x > 2.999)",
        "all(x > -2.999)",
        "sum(x, axis=1)",
        "sum(x, axis=0)",
        "max(x, axis=0)",
        "argmax(x, axis=1)",
        "argmin(x, axis=0)",
        "sum(x, axis=(0, 1), initial=1.5)",
        "1/(1+exp(-x))",
        "x - max(x, axis=1, keepdims=1)",
        "var(x, axis=0)",
    ];
    for (data, what) in [(&big, "big"), (&small, "small")] {
        for expr in exprs {
            for threshold in [None, Some(0)] {
                let mut reference: Option<(Vec<usize>, Vec<f64>)> = None;
                for threads in [1, 2, 3, 7] {
                    let mut r = runner(expr, "jit", threads);
                    if let Some(t) = threshold {
                        r = r.with_threshold(t);
                    }
                    let got = f64s(r.run(&[("x", data.into())]).unwrap());
                    match &reference {
                        None => reference = Some(got),
                        Some(want) => assert!(
                            want.0 == got.0 && bits_equal(&want.1, &got.1),
                            "{expr} on {what}, {threads} threads, threshold {threshold:?}"
                        ),
                    }
                }
            }
        }
    }
    // products, and small chunks (a tuning value, not the thread count) for two passes on small data
    for (expr, data) in [
        ("prod(x)", &near_one),
        ("sum(x*x)", &small),
        ("argmax(x)", &small),
    ] {
        let mut reference: Option<Vec<f64>> = None;
        for threads in [1, 2, 3, 7] {
            let mut p = Parallel::new(threads);
            p.threshold = 0;
            p.min_chunk = 64;
            let got = f64s(
                runner(expr, "jit", threads)
                    .with_parallel(p)
                    .run(&[("x", data.into())])
                    .unwrap(),
            )
            .1;
            match &reference {
                None => reference = Some(got),
                Some(want) => assert!(bits_equal(want, &got), "{expr}, {threads} threads"),
            }
        }
        let want = f64s(run(expr, data, "interp").unwrap()).1;
        assert!(
            close(reference.as_ref().unwrap(), &want, 1e-12),
            "{expr} against the interpreter"
        );
    }
}

#[test]
fn strided_views_and_f32() {
    let mut rng = Rng::new(5);
    let x = arr(&[40, 60], || rng.uniform(-1.0, 1.0));
    let t = x.t();
    let s = x.slice(ndarray::s![.., 5..45]);
    for (v, what) in [(t.into_dyn(), "transposed"), (s.into_dyn(), "sliced")] {
        for expr in [
            "sum(x, axis=1)",
            "sum(x, axis=0)",
            "max(x, axis=(0, 1))",
            "mean(x, axis=0)",
        ] {
            let a = runner(expr, "jit", 2)
                .with_threshold(0)
                .run(&[("x", ArrayArg::from(v.view()))])
                .unwrap();
            let b = runner(expr, "interp", 1)
                .run(&[("x", ArrayArg::from(v.view()))])
                .unwrap();
            let (a, b) = (f64s(a), f64s(b));
            assert_eq!(a.0, b.0);
            assert!(close(&a.1, &b.1, 1e-12), "{expr} on {what}");
        }
    }
    let x32 = x.mapv(|v| v as f32);
    let out = runner("mean(x, axis=1)", "jit", 2)
        .run(&[("x", (&x32).into())])
        .unwrap();
    assert!(matches!(out, Output::F32(_)));
    let out = runner("x - max(x, axis=1, keepdims=1)", "jit", 2)
        .run(&[("x", (&x32).into())])
        .unwrap();
    assert!(matches!(out, Output::F32(_)), "f32 flows between kernels as f32");
}

/// Reductions over middle axes, where a segment is located through two or three segment axes (the
/// skeleton carries its position from segment to segment instead of dividing): int64 data exact
/// against the interpreter, f64 data the same bits for every thread count and close to the
/// interpreter, with runs cut at every segment (threshold 0, 1-7 threads): grouped column sums
/// (a reduced axis of 16 and of 19: groups and single rows), kept and trailing reductions.
#[test]
fn middle_axes_located_without_division() {
    let mut rng = Rng::new(31);
    let cases: [(&[usize], &str); 9] = [
        (&[6, 16, 10], "sum(x, axis=1)"),
        (&[5, 19, 3], "sum(x, axis=1)"),
        (&[4, 3, 17, 5], "sum(x, axis=2)"),
        (&[4, 3, 17, 5], "sum(x, axis=(1, 2))"),
        (&[3, 9, 8, 2], "sum(x, axis=1)"),
        (&[5, 19, 3], "max(x, axis=1)"),
        (&[4, 3, 17, 5], "argmin(x, axis=2)"),
        (&[4, 5, 6], "sum(x, axis=2)"),
        (&[2, 3, 4, 5], "min(x, axis=3)"),
    ];
    for (shape, expr) in cases {
        let n: usize = shape.iter().product();
        let ints = ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(|_| rng.next_u64() as i64 >> 3).collect())
            .unwrap();
        let floats = arr(shape, || rng.uniform(-3.0, 3.0));
        let want_int = runner(expr, "interp", 1).run(&[("x", (&ints).into())]).unwrap();
        let want_float = f64s(run(expr, &floats, "interp").unwrap());
        let mut first: Option<(Vec<usize>, Vec<f64>)> = None;
        for threads in [1, 2, 3, 7] {
            let mut p = Parallel::new(threads);
            p.threshold = 0;
            p.min_chunk = 1;
            let r = runner(expr, "jit", threads).with_parallel(p);
            let got = r.run(&[("x", (&ints).into())]).unwrap();
            assert_eq!(got, want_int, "{expr} of int64 {shape:?}, {threads} threads");
            let got = f64s(r.run(&[("x", (&floats).into())]).unwrap());
            assert_eq!(got.0, want_float.0, "{expr} {shape:?}");
            assert!(
                close(&got.1, &want_float.1, 1e-12),
                "{expr} of f64 {shape:?}, {threads} threads"
            );
            match &first {
                None => first = Some(got),
                Some(want) => assert!(bits_equal(&want.1, &got.1), "{expr} {shape:?}, {threads} threads"),
            }
        }
    }
}

/// An integer reduction over axes into the caller's int64 array folds in that array (no result
/// buffer, no copy): sums, products, min and max of int64, int32 and bool values, with `initial`,
/// `keepdims` and several threads, equal to the interpreter's fresh result; a mean (float64) and a
/// wrong output type keep their paths.
#[test]
fn integer_reductions_into_the_callers_array() {
    let mut rng = Rng::new(77);
    let shape = [7usize, 19, 6];
    let n: usize = shape.iter().product();
    let i64s = ArrayD::from_shape_vec(
        IxDyn(&shape),
        (0..n).map(|_| (rng.next_u64() % 2001) as i64 - 1000).collect(),
    )
    .unwrap();
    let i32s = i64s.mapv(|v| v as i32);
    let bools = i64s.mapv(|v| v > 0);
    let exprs = [
        "sum(x, axis=1)",
        "sum(x, axis=(0, 2))",
        "prod(x, axis=2)",
        "max(x, axis=0)",
        "min(x, axis=1)",
        "sum(x, axis=1, initial=5)",
        "sum(x, axis=2, keepdims=1)",
        "sum(x, axis=1)*1",
    ];
    for x in [
        ArrayArg::from(&i64s),
        ArrayArg::from(&i32s),
        ArrayArg::from(&bools),
    ] {
        for expr in exprs {
            let want = runner(expr, "interp", 1).run(&[("x", x.clone())]).unwrap();
            let Output::I64(want) = want else {
                continue; // min/max of int32 or bool: results of their own type
            };
            for threads in [1, 3] {
                let mut p = Parallel::new(threads);
                p.threshold = 0;
                let r = runner(expr, "jit", threads).with_parallel(p);
                let mut out = ArrayD::<i64>::from_elem(want.shape(), 42);
                for _ in 0..2 {
                    r.call(&[("x", x.clone())], out.view_mut()).unwrap();
                    assert_eq!(out, want, "{expr} of {:?}, {threads} threads", x.elem());
                }
            }
        }
    }
    let r = runner("mean(x, axis=1)", "jit", 1);
    let mut out = ArrayD::<f64>::zeros(IxDyn(&[7, 6]));
    r.call(&[("x", (&i64s).into())], out.view_mut()).unwrap();
    let want = runner("mean(x, axis=1)", "interp", 1)
        .run(&[("x", (&i64s).into())])
        .unwrap();
    assert_eq!(Output::F64(out), want);
    let mut wrong = ArrayD::<i32>::zeros(IxDyn(&[7, 6]));
    let r = runner("sum(x, axis=1)", "jit", 1);
    assert!(r.call(&[("x", (&i64s).into())], wrong.view_mut()).is_err());
}

/// A mean below the threshold is folded serially (the bound fold, then each sum divided by its
/// count in the result's type): the same bits as the run cut into work units on two threads
/// (threshold 0), whole arrays and along axes, with keepdims, of float64, float32 and int64
/// inputs (read converted), into a fresh result and into a given array; close to the
/// interpreter.
#[test]
fn a_serial_mean_has_the_cut_runs_bits() {
    let mut rng = Rng::new(17);
    let x = arr(&[5, 13], || rng.uniform(-3.0, 3.0));
    let x32 = x.mapv(|v| v as f32);
    let i = x.mapv(|v| (v * 1000.0) as i64);
    for expr in [
        "mean(x)",
        "mean(x, axis=1)",
        "mean(x, axis=0)",
        "mean(x, axis=-1)",
        "mean(x, axis=(0, 1))",
        "mean(x, axis=1, keepdims=1)",
        "mean(x*x + 1, axis=0)",
    ] {
        for (arg, what) in [
            (ArrayArg::from(&x), "f64"),
            (ArrayArg::from(&x32), "f32"),
            (ArrayArg::from(&i), "i64"),
        ] {
            let args = [("x", arg)];
            let serial = runner(expr, "jit", 1);
            // (the first call binds the signature by a run of its own; the second is the bound one)
            serial.run(&args).unwrap();
            let got = serial.run(&args).unwrap();
            let cut = runner(expr, "jit", 2).with_threshold(0).run(&args).unwrap();
            assert_eq!(got.elem(), cut.elem(), "{expr} of {what}");
            let (g, c) = (f64s(got.clone()), f64s(cut));
            assert_eq!(g.0, c.0, "{expr} of {what}: shape");
            assert!(
                g.1.iter().zip(&c.1).all(|(a, b)| a.to_bits() == b.to_bits()),
                "{expr} of {what}: {:?} against {:?}",
                g.1,
                c.1
            );
            let want = f64s(runner(expr, "interp", 1).run(&args).unwrap());
            let tol = if what == "f32" { 1e-5 } else { 1e-12 };
            assert!(
                close(&g.1, &want.1, tol),
                "{expr} of {what}: {:?} against {:?}",
                g.1,
                want.1
            );
            // into a given array of the result's type: the same bits
            match got {
                Output::F64(a) => {
                    let mut out = ArrayD::<f64>::zeros(a.shape());
                    serial.run_into(&args, out.view_mut()).unwrap();
                    assert_eq!(out, a, "{expr} of {what}: run_into");
                }
                Output::F32(a) => {
                    let mut out = ArrayD::<f32>::zeros(a.shape());
                    serial.run_into(&args, out.view_mut()).unwrap();
                    assert_eq!(out, a, "{expr} of {what}: run_into");
                }
                other => panic!("{expr} of {what}: a float result, not {other:?}"),
            }
        }
        // a handle's call on slices (the serial fold of `run_slices`, Python's float path)
        let h = runner(expr, "jit", 1).prepared(&[("x", (&x).into())]).unwrap();
        let want = f64s(
            runner(expr, "jit", 2)
                .with_threshold(0)
                .run(&[("x", (&x).into())])
                .unwrap(),
        )
        .1;
        let mut out = vec![0.0f64; want.len()];
        h.run_slices(&[x.as_slice().unwrap()], &mut out).unwrap();
        assert!(
            out.iter().zip(&want).all(|(a, b)| a.to_bits() == b.to_bits()),
            "{expr}: run_slices {out:?} against {want:?}"
        );
        let h = runner(expr, "jit", 1).prepared(&[("x", (&x32).into())]).unwrap();
        let want = f64s(
            runner(expr, "jit", 2)
                .with_threshold(0)
                .run(&[("x", (&x32).into())])
                .unwrap(),
        )
        .1;
        let mut out = vec![0.0f32; want.len()];
        h.run_slices(&[x32.as_slice().unwrap()], &mut out).unwrap();
        assert!(
            out.iter()
                .zip(&want)
                .all(|(&a, &b)| f64::from(a).to_bits() == b.to_bits()),
            "{expr}: float32 run_slices {out:?} against {want:?}"
        );
    }
    // over an empty axis: 0 / 0, NaN, as the run gives it
    let e = ArrayD::<f64>::zeros(IxDyn(&[3, 0]));
    let r = runner("mean(x, axis=1)", "jit", 1);
    r.run(&[("x", (&e).into())]).unwrap();
    let got = f64s(r.run(&[("x", (&e).into())]).unwrap());
    assert_eq!(got.0, vec![3]);
    assert!(got.1.iter().all(|v| v.is_nan()), "{:?}", got.1);
}
