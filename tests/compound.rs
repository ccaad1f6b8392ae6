//! Sibling reductions merged into one compound pass (issue 12 item 4): `mean` and `var` (and so
//! `std` and layer norm's statistics) become one `moments` kernel on every backend (the JIT
//! compiles it where every reduced axis is trailing, rows and whole arrays, and runs a reduction
//! over leading axes as the two reductions it replaced); softmax's and logsumexp's `max` and sum
//! of exponentials stay two reductions (src/siblings.rs says why). The plans are golden texts; the one-pass variance is measured
//! against an exact reference on data offset by 1e8 next to the two-pass formula's (NumPy's
//! `mean(abs(x - mean(x))**2)`, which the rewrite leaves alone); the special values (NaN, ±inf, all
//! -inf rows, empty and one-element rows) give what the two passes give; the JIT agrees with the
//! interpreter within a relative bound, with the same bits for 1, 2 and 4 threads.

#[path = "support/kit.rs"]
mod kit;

use kiln::{FusedRunner, backend_by_name};
use kit::Rng;
use ndarray::{Array2, ArrayD};

fn runner(src: &str, backend: &str) -> FusedRunner {
    FusedRunner::compile_text(src)
        .unwrap()
        .with_backend(backend_by_name(backend).unwrap())
}

fn run(src: &str, backend: &str, x: &Array2<f64>) -> ArrayD<f64> {
    runner(src, backend)
        .run(&[("x", x.into())])
        .unwrap_or_else(|e| panic!("{src} on {backend}: {e}"))
        .into_f64()
}

fn run32(src: &str, backend: &str, x: &Array2<f32>) -> ArrayD<f64> {
    runner(src, backend)
        .run(&[("x", x.into())])
        .unwrap_or_else(|e| panic!("{src} on {backend}: {e}"))
        .into_f64()
}

const SOFTMAX: &str =
    "exp(x - max(x, axis=1, keepdims=1)) / sum(exp(x - max(x, axis=1, keepdims=1)), axis=1, keepdims=1)";
const LOGSUMEXP: &str = "max(x, axis=1) + log(sum(exp(x - max(x, axis=1, keepdims=1)), axis=1))";
const LAYER_NORM: &str = "(x - mean(x, axis=1, keepdims=1)) / sqrt(var(x, axis=1, keepdims=1) + 1e-5)";

/// (expression, the plan on the interpreter, which runs compound reductions)
const PLANS: &[(&str, &str)] = &[
    (
        "var(x, axis=1)",
        "kernel 0: compound moments axis=[1] (mean, var: one pass) <- [x] -> %0\n\
         kernel 1: map <- [%0.var (kernel 0, reduced axes dropped)] -> %1\n",
    ),
    (
        "var(x)",
        "kernel 0: compound moments axis=None (mean, var: one pass) <- [x] -> %0\n\
         kernel 1: map <- [%0.var (kernel 0, reduced axes dropped)] -> %1\n",
    ),
    (
        "mean(x, axis=0) + std(x, axis=0)",
        "kernel 0: compound moments axis=[0] (mean, var: one pass) <- [x] -> %0\n\
         kernel 1: map <- [%0.mean (kernel 0, reduced axes dropped), %0.var (kernel 0, reduced axes dropped)] -> %1\n",
    ),
    (
        LAYER_NORM,
        "kernel 0: compound moments axis=[1] (mean, var: one pass) <- [x] -> %0\n\
         kernel 1: map <- [x, %0.mean.kept (kernel 0, reduced axes kept), %0.var.kept (kernel 0, reduced axes kept)] -> %1\n",
    ),
    (
        // softmax's statistics stay two reductions (the sum of exponentials at full width:
        // src/siblings.rs)
        SOFTMAX,
        "kernel 0: reduce max axis=[1] keepdims <- [x] -> %0\n\
         kernel 1: reduce sum axis=[1] keepdims <- [x, %0 (kernel 0)] -> %1\n\
         kernel 2: map <- [x, %0 (kernel 0), %1 (kernel 1)] -> %2\n",
    ),
    (
        LOGSUMEXP,
        "kernel 0: reduce max axis=[1] <- [x] -> %0\n\
         kernel 1: reduce sum axis=[1] <- [x, %0 (kernel 0, reduced axes kept)] -> %1\n\
         kernel 2: map <- [%0 (kernel 0), %1 (kernel 1)] -> %2\n",
    ),
    (
        // moments, and sibling reductions of one input (x and 2*x) beside them
        "var(x, axis=1) + sum(x, axis=1) + log(sum(exp(2*x - max(2*x, axis=1, keepdims=1)), axis=1))",
        "kernel 0: compound moments axis=[1] (mean, var: one pass) <- [x] -> %0\n\
         kernel 1: siblings [sum axis=[1], max axis=[1] keepdims] (one pass) <- [x] -> %1\n\
         kernel 2: reduce sum axis=[1] <- [x, %1.max1.kept (kernel 1, reduced axes kept)] -> %2\n\
         kernel 3: map <- [%0.var (kernel 0, reduced axes dropped), %1.sum0 (kernel 1, reduced axes dropped), %2 (kernel 2)] -> %3\n",
    ),
    (
        // declined: the second mean is over other axes (and softmax-like statistics stay apart)
        "sum(exp(x - max(x, axis=1, keepdims=1) + 1), axis=1) + mean((x - mean(x, axis=0, keepdims=1))**2, axis=1)",
        "kernel 0: reduce max axis=[1] keepdims <- [x] -> %0\n\
         kernel 1: reduce sum axis=[1] <- [x, %0 (kernel 0)] -> %1\n\
         kernel 2: reduce mean axis=[0] keepdims <- [x] -> %2\n\
         kernel 3: reduce mean axis=[1] <- [x, %2 (kernel 2)] -> %3\n\
         kernel 4: map <- [%1 (kernel 1), %3 (kernel 3)] -> %4\n",
    ),
];

/// NumPy's own formula for the variance, `mean(abs(x - mean(x))**2)`: two passes (the rewrite
/// matches `d * d`, not `abs(d) * abs(d)`), the same values as `(x - m)**2`.
const TWO_PASS_VAR: &str = "mean(abs(x - mean(x, axis=1, keepdims=1))**2, axis=1)";

#[test]
fn sibling_reductions_are_one_pass() {
    for backend in ["interp", "jit", "jit-scalar"] {
        for (src, plan) in PLANS {
            assert_eq!(
                runner(src, backend).pipeline().to_string(),
                *plan,
                "{src} on {backend}"
            );
        }
    }
    let two = runner(TWO_PASS_VAR, "jit").pipeline().to_string();
    assert!(two.contains("reduce mean") && !two.contains("compound"), "{two}");
}

/// The exact variance of each row of `x` (all values `c + a·2^-26` with integers `a`, the grid of
/// f64 near 1e8), in i128.
fn exact_row_var(x: &Array2<f64>, c: f64) -> Vec<f64> {
    x.rows()
        .into_iter()
        .map(|row| {
            let n = row.len() as i128;
            let (mut s, mut s2) = (0i128, 0i128);
            for &v in row {
                let a = ((v - c) * 67_108_864.0) as i128; // exact: v - c is exact near 1e8
                assert_eq!((a as f64) / 67_108_864.0 + c, v);
                s += a;
                s2 += a * a;
            }
            let num = n * s2 - s * s;
            num as f64 / (n * n) as f64 / 67_108_864.0f64.powi(2)
        })
        .collect()
}

#[test]
fn one_pass_variance_is_as_accurate_as_two_passes_on_offset_data() {
    let mut rng = Rng::new(12);
    let c = 1e8;
    let x = Array2::from_shape_fn((8, 1000), |_| c + rng.uniform(-1.0, 1.0));
    let exact = exact_row_var(&x, c);
    let one = run("var(x, axis=1)", "interp", &x);
    let one_jit = run("var(x, axis=1)", "jit", &x);
    let two = run(TWO_PASS_VAR, "jit", &x);
    let rel = |got: &ArrayD<f64>| -> f64 {
        got.iter()
            .zip(&exact)
            .map(|(g, e)| ((g - e) / e).abs())
            .fold(0.0, f64::max)
    };
    let (e1, e2, ej) = (rel(&one), rel(&two), rel(&one_jit));
    assert!(
        ej <= e2.max(1e-13),
        "one pass on the JIT {ej:e}, two passes {e2:e}"
    );
    // the two-pass plan's error on this data is a few 1e-10 (its mean's rounding at 1e8); one pass
    // with the shift by the first value is far below it
    assert!(e1 <= e2.max(1e-13), "one pass {e1:e}, two passes {e2:e}");
    assert!(e1 < 1e-12, "one pass {e1:e}");

    // integer-valued data: NumPy 2.4's `np.var` (two passes) gives exactly 83518.14549375 here, the
    // exact value, and so does one pass
    let n = 10_000;
    let k: Vec<f64> = (0..n)
        .map(|i| (((i * 7919 + 13) % 1001) as f64) - 500.0)
        .collect();
    let x = Array2::from_shape_fn((1, n), |(_, j)| 1e8 + k[j]);
    assert_eq!(run("var(x)", "interp", &x)[[]], 83518.14549375);
    let v = run("var(x)", "jit", &x)[[]];
    assert!(kit::ulp_distance(v, 83518.14549375, false) <= 2, "{v}");
    // the same in f32 (offset 1e4, where the f32 grid holds the integers): the exact value rounded
    // once (83518.1484375), where NumPy's float32 two passes give the f32 below it (83518.140625)
    let x32 = x.mapv(|v| (v - 1e8 + 1e4) as f32);
    let v = run32("var(x)", "interp", &x32)[[]];
    assert_eq!(v as f32, 83518.14549375f64 as f32);
    assert_eq!(kit::ulp_distance(v, 83518.140625, true), 1);
}

#[test]
fn moments_special_values_and_short_rows() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let x = ndarray::array![
        [1.0, 2.0, 3.0, 4.0],
        [1.0, nan, 3.0, 4.0],
        [1.0, inf, 3.0, 4.0],
        [inf, 2.0, 3.0, 4.0],
        [-inf, inf, 0.0, 0.0],
        [5.0, 5.0, 5.0, 5.0],
    ];
    let src = "mean(x, axis=1) + 1000 * var(x, axis=1)";
    let one = run(src, "interp", &x);
    let two = run(
        "mean(x, axis=1) + 1000 * mean(abs(x - mean(x, axis=1, keepdims=1))**2, axis=1)",
        "jit",
        &x,
    );
    assert!(
        kit::close(one.as_slice().unwrap(), two.as_slice().unwrap(), 1e-15),
        "{one} vs {two}"
    );
    let two = run(src, "jit", &x);
    // the mean read from the compound stage where the variance is NaN: inf, NaN as NumPy's
    let mean_where_nan = "where(var(x, axis=1) == var(x, axis=1), 0, mean(x, axis=1))";
    for n in [4usize, 300] {
        let wide = Array2::from_shape_fn((6, n), |(r, c)| x[[r, c % 4]]);
        let want = run(mean_where_nan, "interp", &wide);
        for backend in ["jit", "jit-scalar"] {
            let got = run(mean_where_nan, backend, &wide);
            assert!(
                kit::bits_equal(got.as_slice().unwrap(), want.as_slice().unwrap()),
                "{n}: {got} vs {want}"
            );
        }
    }
    assert!(
        kit::close(one.as_slice().unwrap(), two.as_slice().unwrap(), 1e-15),
        "{one} vs {two}"
    );
    let m = run("mean(x, axis=1)", "interp", &x);
    let v = run("var(x, axis=1)", "interp", &x);
    let both = run("mean(x, axis=1) + 0 * var(x, axis=1)", "interp", &x);
    // NumPy: mean [2.5, nan, inf, inf, nan, 5], var [1.25, nan, nan, nan, nan, 0]
    assert!(kit::bits_equal(
        v.as_slice().unwrap(),
        &[1.25, nan, nan, nan, nan, 0.0]
    ));
    // the mean read from the compound stage is the plain mean, bit for bit (NaN where var is NaN)
    assert!(kit::bits_equal(
        &m.as_slice().unwrap()[..1],
        &both.as_slice().unwrap()[..1]
    ));
    assert_eq!(m.as_slice().unwrap()[2], inf);

    // one element: var 0; empty rows: NaN (NumPy's mean and var of nothing)
    let one_col = Array2::from_shape_fn((3, 1), |(i, _)| i as f64 * 1e8);
    assert!(
        run("var(x, axis=1)", "interp", &one_col)
            .iter()
            .all(|&v| v == 0.0)
    );
    let empty = Array2::<f64>::zeros((3, 0));
    let got = run("mean(x, axis=1) + var(x, axis=1)", "interp", &empty);
    assert_eq!(got.shape(), &[3]);
    assert!(got.iter().all(|v| v.is_nan()));
    let got = run("var(x, axis=0)", "interp", &empty);
    assert_eq!(got.shape(), &[0]);
}

#[test]
fn softmax_and_logsumexp_special_rows_give_numpys_values() {
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    let x = ndarray::array![
        [1.0, 2.0, 3.0, 4.0],
        [-inf, 2.0, -inf, 4.0],
        [-inf, -inf, -inf, -inf],
        [1.0, nan, 3.0, 4.0],
        [1.0, inf, 3.0, 4.0],
        [-inf, inf, 3.0, -inf],
        [700.0, -700.0, 710.0, 0.0],
    ];
    // the two passes written another way: `exp(-(m - x))` is `exp(x - m)` bit for bit (IEEE
    // subtraction is antisymmetric), NaN where it is NaN
    let two_pass = [
        "exp(x - max(x, axis=1, keepdims=1)) / sum(exp(-(max(x, axis=1, keepdims=1) - x)), axis=1, keepdims=1)",
        "max(x, axis=1) + log(sum(exp(-(max(x, axis=1, keepdims=1) - x)), axis=1))",
    ];
    for (src, two) in [SOFTMAX, LOGSUMEXP].into_iter().zip(two_pass) {
        let want = run(two, "interp", &x);
        assert!(!runner(two, "jit").pipeline().to_string().contains("compound"));
        for backend in ["interp", "jit", "jit-scalar"] {
            let got = run(src, backend, &x);
            assert!(
                kit::close(got.as_slice().unwrap(), want.as_slice().unwrap(), 1e-14),
                "{src} on {backend}: {got} vs {want}"
            );
        }
    }
    let s = run(SOFTMAX, "interp", &x);
    // NumPy: an all -inf row is NaN (exp(-inf - -inf)); -inf among finite values is 0; NaN and +inf
    // rows are NaN
    assert!(s.index_axis(ndarray::Axis(0), 2).iter().all(|v| v.is_nan()));
    assert_eq!(s[[1, 0]], 0.0);
    assert!(s.index_axis(ndarray::Axis(0), 3).iter().all(|v| v.is_nan()));
    assert!(s.index_axis(ndarray::Axis(0), 4).iter().all(|v| v.is_nan()));
    let l = run(LOGSUMEXP, "interp", &x);
    assert!(l[[2]].is_nan() && l[[3]].is_nan() && l[[4]].is_nan());
    assert!((l[[1]] - (4.0 + (1.0 + (-2.0f64).exp()).ln())).abs() < 1e-15);
    // max of an empty row is an error
    let empty = Array2::<f64>::zeros((2, 0));
    for backend in ["interp", "jit"] {
        let e = runner(SOFTMAX, backend)
            .run(&[("x", (&empty).into())])
            .unwrap_err();
        assert!(e.to_string().contains("max"), "{e}");
    }
}

/// Within `rtol` of each other relative to the larger magnitude, or `atol` apart (layer norm's
/// `x - mean` cancels: a mean one ULP off moves a value near it by far more than one ULP of itself).
fn near(a: &ArrayD<f64>, b: &ArrayD<f64>, rtol: f64, atol: f64) -> bool {
    a.shape() == b.shape()
        && a.iter()
            .zip(b)
            .all(|(&x, &y)| kit::same_bits(x, y) || (x - y).abs() <= rtol * x.abs().max(y.abs()) + atol)
}

#[test]
fn jit_agrees_with_the_interpreter_within_a_relative_bound() {
    let mut rng = Rng::new(7);
    for &(rows, cols) in &[(1, 1), (3, 7), (5, 129), (2, 1000), (40, 33), (1, 70_000)] {
        let x = Array2::from_shape_fn((rows, cols), |_| rng.uniform(-30.0, 30.0));
        let x32 = x.mapv(|v| v as f32);
        for src in [
            SOFTMAX,
            LOGSUMEXP,
            LAYER_NORM,
            "std(x)",
            "var(x, axis=0)",
            "var(x, axis=1)",
        ] {
            for backend in ["jit", "jit-scalar"] {
                let (a, b) = (run(src, "interp", &x), run(src, backend, &x));
                assert!(near(&a, &b, 1e-12, 1e-12), "{src} {rows}x{cols} on {backend}");
                let (a, b) = (run32(src, "interp", &x32), run32(src, backend, &x32));
                assert!(near(&a, &b, 4e-6, 1e-5), "{src} f32 {rows}x{cols} on {backend}");
            }
        }
    }
}

#[test]
fn jit_matches_the_interpreter_on_special_rows_and_every_length() {
    // every row length from 0 to 40 (tails, one vector, unrolled iterations), f64 and f32, with
    // NaN, +inf and -inf rows among them
    let (nan, inf) = (f64::NAN, f64::INFINITY);
    for cols in 0..=40usize {
        let mut rng = Rng::new(cols as u64);
        let mut x = Array2::from_shape_fn((6, cols), |_| rng.uniform(-5.0, 5.0) + 1e3);
        if cols > 0 {
            x[[1, cols / 2]] = nan;
            x[[2, cols - 1]] = inf;
            x[[3, 0]] = -inf;
            x.row_mut(4).fill(-inf);
        }
        let x32 = x.mapv(|v| v as f32);
        let sources: &[&str] = if cols == 0 {
            &["var(x, axis=1) + mean(x, axis=1)"]
        } else {
            &[SOFTMAX, LOGSUMEXP, "var(x, axis=1) + mean(x, axis=1)", "std(x)"]
        };
        for src in sources {
            let want = run(src, "interp", &x);
            let want32 = run32(src, "interp", &x32);
            for backend in ["jit", "jit-scalar"] {
                let got = run(src, backend, &x);
                assert!(
                    near(&got, &want, 1e-12, 0.0),
                    "{src} {cols} columns on {backend}: {got} vs {want}"
                );
                let got = run32(src, backend, &x32);
                assert!(
                    near(&got, &want32, 4e-6, 0.0),
                    "{src} f32 {cols} columns on {backend}: {got} vs {want32}"
                );
            }
        }
    }
}

#[test]
fn one_pass_statistics_do_not_depend_on_the_thread_count() {
    // large enough for threads (2^18 points) and for a whole-array reduction in chunks
    let mut rng = Rng::new(3);
    let x = Array2::from_shape_fn((600, 1000), |_| rng.uniform(-3.0, 3.0) + 1e6);
    let x32 = x.mapv(|v| (v - 1e6) as f32);
    for src in [
        SOFTMAX,
        LOGSUMEXP,
        LAYER_NORM,
        "var(x)",
        "std(x, axis=1)",
        "var(x, axis=0)",
    ] {
        let at = |threads: usize| {
            let r = runner(src, "jit").with_threads(threads);
            let a = r.run(&[("x", (&x).into())]).unwrap().into_f64();
            let b = r.run(&[("x", (&x32).into())]).unwrap().into_f64();
            (a, b)
        };
        let (a1, b1) = at(1);
        for threads in [2, 4] {
            let (a, b) = at(threads);
            assert!(
                kit::bits_equal(a.as_slice().unwrap(), a1.as_slice().unwrap()),
                "{src} f64 {threads}"
            );
            assert!(
                kit::bits_equal(b.as_slice().unwrap(), b1.as_slice().unwrap()),
                "{src} f32 {threads}"
            );
        }
    }
    // the chunked whole-array statistics within a relative bound of the interpreter's
    for src in ["var(x)", "mean(x) + var(x)"] {
        let (want, got) = (run(src, "interp", &x), run(src, "jit", &x));
        assert!(near(&got, &want, 1e-12, 0.0), "{src}: {got} vs {want}");
    }
}

#[test]
fn softmax_and_logsumexp_of_moving_maxima_agree_with_the_interpreter() {
    // ascending rows (the maximum moves at every value: jumps of 0.7 and of 90), slowly ascending
    // ones, a descending one, and a late jump of 1000 (rows a one-pass running maximum rescales
    // often)
    let cols = 1000;
    let x = Array2::from_shape_fn((5, cols), |(r, c)| {
        let c = c as f64;
        match r {
            0 => 0.7 * c,
            1 => 90.0 * c - 5e4,
            2 => 1e-6 * c,
            3 => -0.3 * c,
            _ => {
                if c == 900.0 {
                    1000.0
                } else {
                    (c * 0.37).sin()
                }
            }
        }
    });
    let x32 = x.mapv(|v| v as f32);
    for src in [SOFTMAX, LOGSUMEXP] {
        let want = run(src, "interp", &x);
        let want32 = run32(src, "interp", &x32);
        for backend in ["jit", "jit-scalar"] {
            let got = run(src, backend, &x);
            assert!(near(&got, &want, 1e-13, 0.0), "{src} on {backend}");
            let got = run32(src, backend, &x32);
            assert!(near(&got, &want32, 4e-7, 1e-30), "{src} f32 on {backend}");
        }
    }
}

/// `kiln explain` says how a compound stage runs: one compiled pass over trailing axes, and over
/// leading ones (which the JIT does not reduce in one pass) the two reductions it replaced, the
/// first shown with a note that says so, as it runs.
#[test]
fn explain_says_a_compound_over_leading_axes_runs_as_two_reductions() {
    let x = Array2::from_shape_fn((40, 30), |(r, c)| (r * 30 + c) as f64 * 0.25);
    let notes = |src: &str| -> Vec<String> {
        let kernels = runner(src, "jit")
            .explain_rewrites(&[("x", (&x).into())])
            .unwrap();
        kernels.into_iter().next().unwrap().2
    };
    let rows = notes("std(x, axis=1)");
    assert!(
        rows.iter()
            .any(|n| n.starts_with("compiled: the compound reduction moments"))
            && !rows.iter().any(|n| n.starts_with("compound: declined")),
        "{rows:?}"
    );
    let columns = notes("std(x, axis=0)");
    assert!(
        columns
            .iter()
            .any(|n| n.starts_with("compound: declined over axes the backend does not reduce in one pass"))
            && columns
                .iter()
                .any(|n| n.starts_with("compiled: the reduction sum")),
        "{columns:?}"
    );
}
