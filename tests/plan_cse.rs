//! Common subexpressions across the kernels of a plan (issue 12 item 4): a reduction written twice,
//! with keepdims and without, is computed once and read in both shapes. The plans are golden texts;
//! the results equal the interpreter's (which runs the same plan) and, for max and min, a plain
//! ndarray computation, bit for bit.

use kiln::{FusedRunner, backend_by_name};
use ndarray::{Array2, ArrayD, Axis};

fn runner(src: &str, backend: &str) -> FusedRunner {
    FusedRunner::compile_text(src)
        .unwrap()
        .with_backend(backend_by_name(backend).unwrap())
}

fn same_bits(a: &ArrayD<f64>, b: &ArrayD<f64>) -> bool {
    a.shape() == b.shape()
        && a.iter()
            .zip(b.iter())
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// Equal within a few ULP of f64 (exp and log in the JIT: 1 ULP each), NaN and infinities equal.
fn close(a: &ArrayD<f64>, b: &ArrayD<f64>) -> bool {
    a.shape() == b.shape()
        && a.iter().zip(b.iter()).all(|(x, y)| {
            x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()) || (x - y).abs() <= 1e-14 * x.abs()
        })
}

/// (expression, the plan `kiln explain` prints)
const PLANS: &[(&str, &str)] = &[
    (
        // logsumexp over rows: three kernels (it was four, the two maxima computed apart), the max
        // read by the sum of exponentials and the last map
        "log(sum(exp(x - max(x, axis=1, keepdims=1)), axis=1)) + max(x, axis=1)",
        "kernel 0: reduce max axis=[1] keepdims <- [x] -> %0\n\
         kernel 1: reduce sum axis=[1] <- [x, %0 (kernel 0)] -> %1\n\
         kernel 2: map <- [%1 (kernel 1), %0 (kernel 0, reduced axes dropped)] -> %2\n",
    ),
    (
        "max(x, axis=0) + x - max(x, axis=0, keepdims=1)",
        "kernel 0: reduce max axis=[0] <- [x] -> %0\n\
         kernel 1: map <- [%0 (kernel 0), x, %0 (kernel 0, reduced axes kept)] -> %1\n",
    ),
    (
        // axis=None: the keepdims result tells the rank, the other one does not
        "sum(x, keepdims=1) * x + sum(x)",
        "kernel 0: reduce sum axis=None keepdims <- [x] -> %0\n\
         kernel 1: map <- [%0 (kernel 0), x, %0 (kernel 0, reduced axes dropped)] -> %1\n",
    ),
    (
        // not twins, but siblings: one pass (issue 23 item 5)
        "sum(x) + x * sum(x, keepdims=1)",
        "kernel 0: siblings [sum axis=None, sum axis=None keepdims] (one pass) <- [x] -> %0\n\
         kernel 1: map <- [%0.sum0 (kernel 0, reduced axes dropped), x, %0.sum1.kept (kernel 0, reduced axes kept)] -> %1\n",
    ),
    (
        // other axes, another op, or axis=1 against axis=-1: not the same reduction
        "max(x, axis=1, keepdims=1) + min(x, axis=1) + max(x, axis=0)",
        // (the two over axis 1 are siblings: one pass)
        "kernel 0: siblings [max axis=[1] keepdims, min axis=[1]] (one pass) <- [x] -> %0\n\
         kernel 1: reduce max axis=[0] <- [x] -> %1\n\
         kernel 2: map <- [%0.max0.kept (kernel 0, reduced axes kept), %0.min1 (kernel 0, reduced axes dropped), %1 (kernel 1)] -> %2\n",
    ),
];

#[test]
fn a_reduction_with_and_without_keepdims_is_one_kernel() {
    for (src, plan) in PLANS {
        let r = runner(src, "jit");
        assert_eq!(r.pipeline().to_string(), *plan, "{src}");
    }
}

#[test]
fn shared_reductions_give_the_interpreters_bits_on_every_backend() {
    let x = Array2::from_shape_fn((7, 7), |(i, j)| ((i * 7 + j) as f64 * 0.731).sin() * 4.0);
    let mut y = x.clone();
    y[[2, 3]] = f64::NAN;
    y[[4, 0]] = f64::INFINITY;
    for data in [&x, &y] {
        for (src, _) in PLANS {
            let want = runner(src, "interp").run(&[("x", data.into())]);
            for backend in ["jit", "jit-scalar"] {
                let got = runner(src, backend).run(&[("x", data.into())]);
                match (&want, got) {
                    (Ok(w), Ok(g)) => {
                        let (w, g) = (w.clone().into_f64(), g.into_f64());
                        // bit for bit but where exp and log run (the JIT's within their ULP bounds)
                        let ok = if src.contains("exp") {
                            close(&w, &g)
                        } else {
                            same_bits(&w, &g)
                        };
                        assert!(ok, "{src} on {backend}: {g} vs {w}");
                    }
                    (w, g) => panic!("{src} on {backend}: {w:?} vs {g:?}"),
                }
            }
        }
    }
    // the maxima against plain ndarray, bit for bit
    let got = runner(PLANS[1].0, "jit")
        .run(&[("x", (&x).into())])
        .unwrap()
        .into_f64();
    let m = x.fold_axis(Axis(0), f64::NEG_INFINITY, |&a, &b| a.max(b));
    let want = &m + &x - &m.clone().insert_axis(Axis(0));
    assert!(same_bits(&got, &want.into_dyn()));
}
