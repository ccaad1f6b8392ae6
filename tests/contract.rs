//! FMA contraction (`kiln_ir::passes::contract`): under the `approximate` profile `a*b + c` (and
//! `c + a*b`, `a*b - c`, `c - a*b`, nested as in Horner's rule) is rounded once, on the JIT and the
//! interpreter alike (bit for bit, f64 and f32, at every length's vector body and scalar tail, with
//! NaN, ±inf, ±0 and subnormals); `default` and `reproducible` keep the user's two roundings.

use kiln::{ArrayArg, FusedRunner, Output, Profile, interpreter};
use ndarray::{ArrayD, IxDyn};

#[path = "support/kit.rs"]
mod kit;

/// Values where one rounding and two differ (`1 + 2^-30` squared), specials, and a spread.
fn values(n: usize, seed: u64) -> Vec<f64> {
    let e = 1.0 + 2f64.powi(-30);
    let special = [
        e,
        -e,
        0.0,
        -0.0,
        1.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        5e-324,
        f64::MIN_POSITIVE,
        1e300,
        -1e-300,
        3.0,
        0.1,
    ];
    let mut rng = kit::Rng::new(seed);
    (0..n)
        .map(|i| {
            if i % 3 == 0 {
                special[rng.below(special.len())]
            } else {
                rng.uniform(-4.0, 4.0)
            }
        })
        .collect()
}

type Want = fn(f64, f64, f64) -> (f64, f64);

/// Each expression with its fused and its written value.
const FORMS: &[(&str, Want)] = &[
    ("a*b + c", |a, b, c| (a.mul_add(b, c), a * b + c)),
    ("c + a*b", |a, b, c| (a.mul_add(b, c), c + a * b)),
    ("a*b - c", |a, b, c| (a.mul_add(b, -c), a * b - c)),
    ("c - a*b", |a, b, c| ((-a).mul_add(b, c), c - a * b)),
    ("(a*b + 1.5)*b - c", |a, b, c| {
        (a.mul_add(b, 1.5).mul_add(b, -c), (a * b + 1.5) * b - c)
    }),
];

fn runners(expr: &str, profile: Profile) -> [(String, FusedRunner); 2] {
    let jit = FusedRunner::compile_text(expr).unwrap().with_profile(profile);
    let int = FusedRunner::compile_text(expr)
        .unwrap()
        .with_profile(profile)
        .with_backend(interpreter());
    [
        (format!("jit {profile}"), jit),
        (format!("interpreter {profile}"), int),
    ]
}

fn same(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

#[test]
fn approximate_rounds_once_and_the_others_as_written_f64() {
    let mut failures = Vec::new();
    for n in [1, 3, 8, 13, 1001] {
        let (a, b, c) = (
            values(n, 1 + n as u64),
            values(n, 77),
            values(n, 9 + 2 * n as u64),
        );
        let arr = |v: &Vec<f64>| ArrayD::from_shape_vec(IxDyn(&[n]), v.clone()).unwrap();
        let (xa, xb, xc) = (arr(&a), arr(&b), arr(&c));
        for &(expr, want) in FORMS {
            for profile in Profile::ALL {
                for (name, runner) in runners(expr, profile) {
                    let args = [
                        ("a", ArrayArg::from(&xa)),
                        ("b", ArrayArg::from(&xb)),
                        ("c", ArrayArg::from(&xc)),
                    ];
                    let got = runner.run(&args).unwrap().into_f64();
                    for i in 0..n {
                        let (fused, written) = want(a[i], b[i], c[i]);
                        let w = if profile == Profile::Approximate {
                            fused
                        } else {
                            written
                        };
                        if !same(got[i], w) {
                            failures.push(format!(
                                "{expr} [{name}] n={n} i={i} ({:e}, {:e}, {:e}): got {:e}, want {w:e}",
                                a[i], b[i], c[i], got[i]
                            ));
                        }
                    }
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{}",
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn approximate_rounds_once_f32() {
    let n = 37;
    let to32 = |v: Vec<f64>| -> Vec<f32> { v.into_iter().map(|x| x as f32).collect() };
    let e = 1.0f32 + 2f32.powi(-13);
    let mut a = to32(values(n, 3));
    a[0] = e;
    let c = to32(values(n, 5));
    let xa = ArrayD::from_shape_vec(IxDyn(&[n]), a.clone()).unwrap();
    let xc = ArrayD::from_shape_vec(IxDyn(&[n]), c.clone()).unwrap();
    for (name, runner) in runners("a*a - c", Profile::Approximate) {
        let out = runner
            .run(&[("a", ArrayArg::from(&xa)), ("c", ArrayArg::from(&xc))])
            .unwrap();
        let Output::F32(got) = out else {
            panic!("[{name}]: f32 inputs give an f32 result")
        };
        for i in 0..n {
            let w = a[i].mul_add(a[i], -c[i]);
            assert!(
                got[i].to_bits() == w.to_bits() || got[i].is_nan() && w.is_nan(),
                "[{name}] i={i}: got {:e}, want {w:e}",
                got[i]
            );
        }
    }
}

#[test]
fn contraction_is_approximate_only_and_explained() {
    let x = ArrayD::<f64>::zeros(IxDyn(&[8]));
    for profile in Profile::ALL {
        let runner = FusedRunner::compile_text("(x*x + 1.5)*x - 2")
            .unwrap()
            .with_profile(profile);
        let (kernel, _, notes) = runner
            .explain_rewrites(&[("x", ArrayArg::from(&x))])
            .unwrap()
            .pop()
            .unwrap();
        let text = kernel.to_string();
        let fmas = text.matches(" fma ").count();
        let contracted = notes.iter().any(|n| n.starts_with("contract: 2 x a*b+c"));
        if profile == Profile::Approximate {
            assert_eq!(fmas, 2, "{text}");
            assert!(contracted, "{notes:?}");
        } else {
            assert_eq!(fmas, 0, "{profile}:\n{text}");
            assert!(!contracted, "{profile}: {notes:?}");
        }
    }
}

/// Reductions and scans of a contracted body: the interpreter, the SIMD JIT and the scalar JIT
/// contract alike (the same `fma` nodes), so they agree within the bound of a reassociated sum, and
/// each differs from the default profile's written form.
#[test]
fn reductions_and_scans_of_a_contracted_body() {
    let (rows, cols) = (7, 33);
    let n = rows * cols;
    let (a, b) = (values(n, 11), values(n, 12));
    // finite operands, so the sums compare by a relative bound
    let fin = |v: Vec<f64>| -> Vec<f64> {
        v.into_iter()
            .map(|x| if x.is_finite() { x.clamp(-4.0, 4.0) } else { 0.5 })
            .collect()
    };
    let (a, b) = (fin(a), fin(b));
    let xa = ArrayD::from_shape_vec(IxDyn(&[rows, cols]), a.clone()).unwrap();
    let xb = ArrayD::from_shape_vec(IxDyn(&[rows, cols]), b.clone()).unwrap();
    for expr in [
        "sum(a*b + 0.25)",
        "sum(a*b - b, axis=1)",
        "sum(b - a*a, axis=0)",
        "cumsum(a*b + b, axis=1)",
    ] {
        let outs: Vec<(String, Vec<f64>)> = ["jit", "jit-scalar", "interp"]
            .iter()
            .map(|&name| {
                let runner = FusedRunner::compile_text(expr)
                    .unwrap()
                    .with_profile(Profile::Approximate)
                    .with_backend(kiln::backend_by_name(name).unwrap());
                let args = [("a", ArrayArg::from(&xa)), ("b", ArrayArg::from(&xb))];
                (
                    name.to_string(),
                    runner.run(&args).unwrap().into_f64().iter().copied().collect(),
                )
            })
            .collect();
        let want = &outs[2].1;
        let scale = want.iter().fold(1.0f64, |m, v| m.max(v.abs()));
        for (name, got) in &outs {
            assert_eq!(got.len(), want.len(), "{expr} [{name}]");
            for (g, w) in got.iter().zip(want) {
                assert!(
                    (g - w).abs() <= 1e-12 * scale * n as f64,
                    "{expr} [{name}]: {g:e} against {w:e}"
                );
            }
        }
        let (kernel, _, notes) = FusedRunner::compile_text(expr)
            .unwrap()
            .with_profile(Profile::Approximate)
            .explain_rewrites(&[("a", ArrayArg::from(&xa)), ("b", ArrayArg::from(&xb))])
            .unwrap()
            .pop()
            .unwrap();
        assert!(kernel.to_string().contains(" fma "), "{expr}: {kernel}");
        assert!(
            notes.iter().any(|n| n.starts_with("contract: 1 x")),
            "{expr}: {notes:?}"
        );
    }
}
