//! The functions Black-Scholes and NumPy users reach for: `erf`, `erfc`, `cbrt`, `square`,
//! `reciprocal`, `logaddexp`, `logaddexp2`, `deg2rad`, `rad2deg`, through the text language and the
//! builder, on the JIT and on the interpreter, f64 and f32, against the values NumPy gives (its
//! formulas written out here: `npy_logaddexp`, `npy_deg2rad`, ...; reference values of `erf`
//! from its series) with NaN, ±inf, ±0 and subnormals. JIT and interpreter agree bit for bit (the
//! JIT calls the interpreter's libm functions per lane, and lowers deg2rad/rad2deg to the same
//! multiplication), except erf and erfc, which the JIT computes in vector registers within their
//! documented ULP bound (special values bit for bit).

use kiln::{ArrayArg, Expr, FusedRunner, Output, interpreter};
use ndarray::{ArrayD, IxDyn, array};

const SPECIALS: &[f64] = &[
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    -2.5,
    3.0,
    27.0,
    -8.0,
    180.0,
    1e-310,
    -5e-324,
    1e300,
    -1e300,
    f64::INFINITY,
    f64::NEG_INFINITY,
    f64::NAN,
];

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn run2(expr: &str, x: &ArrayD<f64>, y: &ArrayD<f64>) -> Vec<(String, ArrayD<f64>)> {
    let args = [("x", ArrayArg::from(x)), ("y", ArrayArg::from(y))];
    let jit = FusedRunner::compile_text(expr).unwrap();
    let int = FusedRunner::compile_text(expr)
        .unwrap()
        .with_backend(interpreter());
    vec![
        ("jit".into(), jit.run(&args).unwrap().into_f64()),
        ("interpreter".into(), int.run(&args).unwrap().into_f64()),
    ]
}

fn vec1(v: &[f64]) -> ArrayD<f64> {
    ArrayD::from_shape_vec(IxDyn(&[v.len()]), v.to_vec()).unwrap()
}

/// NumPy's `npy_logaddexp`.
fn np_logaddexp(x: f64, y: f64) -> f64 {
    if x == y {
        return x + std::f64::consts::LN_2;
    }
    let t = x - y;
    if t > 0.0 {
        x + (-t).exp().ln_1p()
    } else if t <= 0.0 {
        y + t.exp().ln_1p()
    } else {
        t
    }
}

/// NumPy's `npy_logaddexp2`.
fn np_logaddexp2(x: f64, y: f64) -> f64 {
    if x == y {
        return x + 1.0;
    }
    let t = x - y;
    if t > 0.0 {
        x + std::f64::consts::LOG2_E * (-t).exp2().ln_1p()
    } else if t <= 0.0 {
        y + std::f64::consts::LOG2_E * t.exp2().ln_1p()
    } else {
        t
    }
}

#[test]
fn unary_functions_against_numpy_f64() {
    let x = vec1(SPECIALS);
    let y = vec1(&[0.0]);
    let pi = std::f64::consts::PI;
    type F = fn(f64) -> Option<f64>;
    // (expression, NumPy's value where it is exact or a formula; None: checked below by ULP)
    let cases: &[(&str, F)] = &[
        ("deg2rad(x)", |x| Some(x * (std::f64::consts::PI / 180.0))),
        ("rad2deg(x)", |x| Some(x * (180.0 / std::f64::consts::PI))),
        ("square(x)", |x| Some(x * x)),
        ("reciprocal(x)", |x| Some(1.0 / x)),
        ("cbrt(x)", |x| Some(x.cbrt())),
    ];
    for (expr, want) in cases {
        for (backend, got) in run2(expr, &x, &y) {
            for (&g, &xi) in got.iter().zip(SPECIALS) {
                let w = want(xi).unwrap();
                assert!(same(g, w), "{expr} [{backend}] at {xi:e}: {g:e} vs {w:e}");
            }
        }
    }
    // exact values NumPy (and C99) give
    let got = run2("deg2rad(x)", &vec1(&[180.0, -90.0]), &y);
    assert_eq!(got[0].1.as_slice().unwrap(), &[pi, -pi / 2.0]);
    let got = run2("cbrt(x)", &vec1(&[27.0, -8.0, -0.0, f64::NEG_INFINITY]), &y);
    for (_, g) in got {
        let g = g.into_raw_vec_and_offset().0;
        assert_eq!(g[..2], [3.0, -2.0]);
        assert!(g[2] == 0.0 && g[2].is_sign_negative());
        assert_eq!(g[3], f64::NEG_INFINITY);
    }
}

#[test]
fn erf_and_erfc_special_values_and_reference_points() {
    let xs = [
        0.0,
        -0.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        0.5,
        -1.0,
        3.0,
        1e-310,
        30.0,
    ];
    let x = vec1(&xs);
    let y = vec1(&[0.0]);
    let erf: Vec<(String, ArrayD<f64>)> = run2("erf(x)", &x, &y);
    let erfc: Vec<(String, ArrayD<f64>)> = run2("erfc(x)", &x, &y);
    // JIT (the vector erf and erfc) against the interpreter (libm): the same bits where libm gives
    // a special value (NaN, ±0, ±1, 2, inf), else within the documented bound
    for (pair, op) in [
        (&erf, kiln::kiln_ir::UnaryOp::Erf),
        (&erfc, kiln::kiln_ir::UnaryOp::Erfc),
    ] {
        let bound = kiln_jit::unary_ulp_bound(op) as i64;
        for (a, b) in pair[0].1.iter().zip(pair[1].1.iter()) {
            let special = b.is_nan() || *b == 0.0 || b.abs() == 1.0 || *b == 2.0 || b.is_infinite();
            let ok = if special {
                same(*a, *b)
            } else {
                (a.to_bits() as i64 - b.to_bits() as i64).abs() <= bound
            };
            assert!(ok, "{op:?}: jit {a:e} vs interpreter {b:e}");
        }
    }
    let e = erf[0].1.as_slice().unwrap();
    let c = erfc[0].1.as_slice().unwrap();
    assert!(e[0] == 0.0 && e[0].is_sign_positive());
    assert!(e[1] == 0.0 && e[1].is_sign_negative());
    assert_eq!((e[2], e[3]), (1.0, -1.0));
    assert!(e[4].is_nan() && c[4].is_nan());
    assert_eq!((c[0], c[2], c[3]), (1.0, 0.0, 2.0));
    // reference values (scipy.special.erf / math.erf), within 1 ULP
    let near = |a: f64, b: f64| (a.to_bits() as i64 - b.to_bits() as i64).abs() <= 1;
    assert!(near(e[5], 0.5204998778130465), "{}", e[5]);
    assert!(near(e[6], -0.8427007929497149), "{}", e[6]);
    assert!(near(e[7], 0.9999779095030014), "{}", e[7]);
    assert!(near(c[5], 0.4795001221869535), "{}", c[5]);
    assert!(near(c[7], 2.209049699858544e-05), "{}", c[7]);
    // erf of a subnormal is about 2/sqrt(pi) x; erfc(30) underflows past f64's normal range
    assert!(e[8] > 1e-310 && e[8] < 1.2e-310);
    assert!(c[9] >= 0.0 && c[9] < 1e-300);
}

#[test]
fn logaddexp_against_numpy_f64() {
    let mut xs = Vec::new();
    let mut ys = Vec::new();
    for &a in SPECIALS {
        for &b in SPECIALS {
            xs.push(a);
            ys.push(b);
        }
    }
    let (x, y) = (vec1(&xs), vec1(&ys));
    for (expr, f) in [
        ("logaddexp(x, y)", np_logaddexp as fn(f64, f64) -> f64),
        ("logaddexp2(x, y)", np_logaddexp2),
    ] {
        for (backend, got) in run2(expr, &x, &y) {
            for ((&g, &a), &b) in got.iter().zip(&xs).zip(&ys) {
                assert!(
                    same(g, f(a, b)),
                    "{expr} [{backend}] at ({a:e}, {b:e}): {g:e} vs {:e}",
                    f(a, b)
                );
            }
        }
    }
    // NumPy's documented special cases
    let inf = f64::INFINITY;
    let got = run2(
        "logaddexp(x, y)",
        &vec1(&[inf, -inf, inf, 0.0, f64::NAN]),
        &vec1(&[inf, -inf, -inf, 0.0, 1.0]),
    );
    for (backend, g) in got {
        let g = g.into_raw_vec_and_offset().0;
        assert_eq!(g[..4], [inf, -inf, inf, std::f64::consts::LN_2], "{backend}");
        assert!(g[4].is_nan(), "{backend}");
    }
    let got = run2(
        "logaddexp2(x, y)",
        &vec1(&[inf, -inf, 1.0, 3.0]),
        &vec1(&[inf, -inf, 1.0, 3.0]),
    );
    assert_eq!(got[0].1.as_slice().unwrap(), &[inf, -inf, 2.0, 4.0]);
}

/// f32: NumPy computes in f32 with f32 constants (`NPY_PIf / 180.0f`, `NPY_LOGE2f`); rad2deg's
/// constant differs from the f64 one rounded to f32, which the op accounts for.
#[test]
fn f32_uses_f32_constants() {
    let xs: Vec<f32> = vec![0.0, -0.0, 1.0, -3.5, 90.0, 1e-40, f32::INFINITY, f32::NAN, 1e38];
    let x = ArrayD::from_shape_vec(IxDyn(&[xs.len()]), xs.clone()).unwrap();
    let pi = std::f32::consts::PI;
    type F = fn(f32) -> f32;
    let cases: &[(&str, F)] = &[
        ("deg2rad(x)", |x| x * (std::f32::consts::PI / 180.0)),
        ("rad2deg(x)", |x| x * (180.0 / std::f32::consts::PI)),
        ("square(x)", |x| x * x),
        ("logaddexp(x, x)", |x| x + std::f32::consts::LN_2),
        ("logaddexp2(x, 0)", |x| {
            let t = x;
            if x == 0.0 {
                1.0
            } else if t > 0.0 {
                x + std::f32::consts::LOG2_E * libm::log1pf(libm::exp2f(-t))
            } else if t <= 0.0 {
                std::f32::consts::LOG2_E * libm::log1pf(libm::exp2f(t))
            } else {
                t
            }
        }),
    ];
    assert_ne!(
        (180.0 / pi).to_bits(),
        ((180.0 / std::f64::consts::PI) as f32).to_bits()
    );
    for (expr, want) in cases {
        for backend in ["jit", "interpreter"] {
            let mut r = FusedRunner::compile_text(expr).unwrap();
            if backend == "interpreter" {
                r = r.with_backend(interpreter());
            }
            let Output::F32(got) = r.run(&[("x", ArrayArg::from(&x))]).unwrap() else {
                panic!("{expr}: f32 in, f32 out")
            };
            for (&g, &xi) in got.iter().zip(&xs) {
                let w = want(xi);
                assert!(
                    g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()),
                    "{expr} [{backend}] at {xi:e}: {g:e} vs {w:e}"
                );
            }
        }
    }
}

/// The builder spells them as methods; `square` is the very node `x * x` is.
#[test]
fn builder_methods() {
    let x = Expr::input("x");
    let y = Expr::input("y");
    let a = array![0.25, -1.0, 2.0];
    let b = array![1.0, 1.0, -3.0];
    let e = x.erf()
        + x.erfc()
        + x.cbrt()
        + x.deg2rad()
        + x.rad2deg()
        + x.square()
        + x.reciprocal()
        + x.logaddexp(&y)
        + x.logaddexp2(&y);
    let got = FusedRunner::compile(&e)
        .unwrap()
        .run(&[("x", (&a).into()), ("y", (&b).into())])
        .unwrap()
        .into_f64();
    let t = FusedRunner::compile_text(
        "erf(x) + erfc(x) + cbrt(x) + deg2rad(x) + rad2deg(x) + square(x) + reciprocal(x) \
         + logaddexp(x, y) + logaddexp2(x, y)",
    )
    .unwrap()
    .run(&[("x", (&a).into()), ("y", (&b).into())])
    .unwrap()
    .into_f64();
    assert_eq!(got, t);
    let sq = FusedRunner::compile(&(x.square() - &x * &x)).unwrap();
    let (k, _) = sq.explain(&[("x", (&a).into())]).unwrap();
    assert!(k.to_string().contains("sub %1 %1"), "{k}");
}
