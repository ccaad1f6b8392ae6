//! kiln's math functions against the values NumPy gives: the vectorised transcendentals and numexpr's
//! other functions (`tests/data/math_cases.txt`, written by `tests/gen/make_math_cases.py`; the test
//! never runs Python), through the text language on the default (JIT) backend and on the interpreter.
//! Special values, f64 and f32, 1-D and 2-D inputs (the result keeps the input's dtype and shape).
//! Exact functions are compared bit for bit (any NaN equals any NaN, the sign of zero counts); libm
//! functions within 4 ULP of NumPy. Every failure is reported, not just the first.

#[path = "gen/fixture.rs"]
mod fixture;

use fixture::Check;
use kiln::{FusedRunner, interpreter};

const CASES: &str = include_str!("data/math_cases.txt");

#[test]
fn math_against_numpy() {
    let cases = fixture::parse(CASES);
    assert!(cases.len() >= 100, "only {} cases", cases.len());
    let mut failures = Vec::new();
    let mut worst = (0u128, String::new());
    for case in &cases {
        for (backend, runner) in [
            ("jit", FusedRunner::compile_text(&case.expr)),
            (
                "interpreter",
                FusedRunner::compile_text(&case.expr).map(|r| r.with_backend(interpreter())),
            ),
        ] {
            let out = runner.and_then(|r| r.run(&case.args()));
            let want = case.out.as_ref().expect("every case has an expected output");
            match out {
                Err(e) => failures.push(format!("{} [{backend}] `{}`: error {e}", case.name, case.expr)),
                Ok(out) => {
                    if let Err(e) = fixture::compare(&out, want, case.check, case.zeros_any) {
                        failures.push(format!("{} [{backend}] `{}`: {e}", case.name, case.expr));
                    } else if matches!(case.check, Check::Ulp(_)) && backend == "jit" {
                        let u = fixture::max_ulp(&out, want);
                        if u > worst.0 {
                            worst = (u, case.name.clone());
                        }
                    }
                }
            }
        }
    }
    println!(
        "largest ULP distance from NumPy (jit): {} in {}",
        worst.0, worst.1
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// Regression (cargo-fuzz `exprs`): the NaN of an invalid operation carries the sign bit, as glibc's
/// and NumPy's do, so `copysign` of it agrees between the vector math and the interpreter.
#[test]
fn invalid_operations_give_the_negative_default_nan() {
    let x = ndarray::array![-2.0, -8.0, 3.0];
    for backend in ["interp", "jit", "jit-scalar"] {
        for expr in [
            "copysign(1, x ** 0.3)",
            "copysign(1, log(x))",
            "copysign(1, log2(x))",
            "copysign(1, log1p(x - 1))",
        ] {
            let r = kiln::FusedRunner::compile_text(expr)
                .unwrap()
                .with_backend(kiln::backend_by_name(backend).unwrap())
                .run(&[("x", (&x).into())])
                .unwrap()
                .into_f64();
            assert_eq!(r.as_slice().unwrap(), &[-1.0, -1.0, 1.0], "{expr} on {backend}");
        }
    }
}

/// A kernel with more vector-math nodes than `kiln_jit::MAX_INLINE_MATH` calls libm per lane for all
/// of them (compiling 200 inlined polynomials took seconds): its results are then the interpreter's
/// bit for bit, and compiling it stays fast.
#[test]
fn large_kernels_call_libm_per_lane() {
    let text: Vec<String> = (1..=60).map(|i| format!("tanh(exp(x * {i}e-2))")).collect();
    let expr = text.join(" + ");
    let x = ndarray::Array1::linspace(-3.0, 3.0, 37);
    let start = std::time::Instant::now();
    let jit = kiln::FusedRunner::compile_text(&expr)
        .unwrap()
        .run(&[("x", (&x).into())])
        .unwrap();
    assert!(
        start.elapsed() < std::time::Duration::from_secs(20),
        "compiling took {:?}",
        start.elapsed()
    );
    let interp = kiln::FusedRunner::compile_text(&expr)
        .unwrap()
        .with_backend(kiln::interpreter())
        .run(&[("x", (&x).into())])
        .unwrap();
    assert_eq!(jit, interp);
}
