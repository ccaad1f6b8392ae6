//! Strength reduction of `pow` (`kiln_ir::passes::strength`): `x**2`, `x**-1`, `x**1`, `x**0` and
//! `x**0.5` bit-identical to what NumPy computes for them (`x*x`, `1/x`, `x`, `1`, `sqrt(x)`, its
//! `fast_scalar_power`), in every profile, on the JIT and on the interpreter, f64 and f32, with NaN,
//! ±inf, ±0 and subnormals; the approximate profile's multiplication chains within a few ULP of
//! `pow`; and golden texts (`tests/golden/strength/`, `KILN_BLESS=1` rewrites them) showing the
//! kernel before and after the rewrite.

use kiln::{ArrayArg, FusedRunner, Profile, interpreter};
use ndarray::{ArrayD, IxDyn};

#[path = "support/golden.rs"]
mod golden;
use golden::Golden;

fn specials_f64() -> Vec<f64> {
    let mut v = vec![
        0.0,
        -0.0,
        1.0,
        -1.0,
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::MIN_POSITIVE,
        -f64::MIN_POSITIVE,
        5e-324,
        -5e-324,
        1e-160,
        1e160,
        -1e200,
        f64::MAX,
        3.0,
        0.1,
        -2.5,
        1.0000000000000002,
    ];
    // a spread of ordinary values, deterministic
    let mut s = 0x9e3779b97f4a7c15u64;
    for _ in 0..200 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let m = (s >> 11) as f64 / (1u64 << 53) as f64;
        let e = ((s & 0xff) as i32) - 128;
        v.push((m - 0.5) * 2f64.powi(e / 4));
    }
    v
}

fn runners(expr: &str) -> Vec<(String, FusedRunner)> {
    let mut out = Vec::new();
    for profile in Profile::ALL {
        let jit = FusedRunner::compile_text(expr).unwrap().with_profile(profile);
        let int = FusedRunner::compile_text(expr)
            .unwrap()
            .with_profile(profile)
            .with_backend(interpreter());
        out.push((format!("jit {profile}"), jit));
        out.push((format!("interpreter {profile}"), int));
    }
    out
}

/// Same bits, any NaN equal to any NaN.
fn same_f64(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

fn same_f32(a: f32, b: f32) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

type Want64 = fn(f64) -> f64;
type Want32 = fn(f32) -> f32;

const EXACT: &[(&str, Want64, Want32)] = &[
    ("x ** 2", |x| x * x, |x| x * x),
    ("x ** 2.0", |x| x * x, |x| x * x),
    ("x ** -1", |x| 1.0 / x, |x| 1.0 / x),
    ("x ** 1", |x| x, |x| x),
    ("x ** 0", |_| 1.0, |_| 1.0),
    ("x ** -0.0", |_| 1.0, |_| 1.0),
    ("x ** 0.5", f64::sqrt, f32::sqrt),
    ("square(x)", |x| x * x, |x| x * x),
    ("reciprocal(x)", |x| 1.0 / x, |x| 1.0 / x),
];

#[test]
fn numpy_fast_paths_are_bit_identical_f64() {
    let xs = specials_f64();
    let x = ArrayD::from_shape_vec(IxDyn(&[xs.len()]), xs.clone()).unwrap();
    let mut failures = Vec::new();
    for (expr, want, _) in EXACT {
        for (name, runner) in runners(expr) {
            let got = runner.run(&[("x", ArrayArg::from(&x))]).unwrap().into_f64();
            for (i, (&g, &xi)) in got.iter().zip(&xs).enumerate() {
                if !same_f64(g, want(xi)) {
                    failures.push(format!(
                        "{expr} [{name}] x[{i}] = {xi:e}: got {g:e}, want {:e}",
                        want(xi)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn numpy_fast_paths_are_bit_identical_f32() {
    let xs: Vec<f32> = specials_f64()
        .into_iter()
        .map(|v| v as f32)
        .chain([1e-45f32, -1e-45, f32::MIN_POSITIVE, 1e20, f32::MAX])
        .collect();
    let x = ArrayD::from_shape_vec(IxDyn(&[xs.len()]), xs.clone()).unwrap();
    let mut failures = Vec::new();
    for (expr, _, want) in EXACT {
        for (name, runner) in runners(expr) {
            let out = runner.run(&[("x", ArrayArg::from(&x))]).unwrap();
            let kiln::Output::F32(got) = out else {
                panic!("{expr} [{name}]: an f32 input gives an f32 result")
            };
            for (i, (&g, &xi)) in got.iter().zip(&xs).enumerate() {
                if !same_f32(g, want(xi)) {
                    failures.push(format!(
                        "{expr} [{name}] x[{i}] = {xi:e}: got {g:e}, want {:e}",
                        want(xi)
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Without the rewrite, `pow(x, 2)` would be libm's `pow`: check that the rewrite is what runs (the
/// kernel has no `pow` left) in every profile.
#[test]
fn exact_rewrites_fire_in_every_profile_and_chains_only_when_approximate() {
    let x = ArrayD::<f64>::zeros(IxDyn(&[8]));
    for profile in Profile::ALL {
        let runner = FusedRunner::compile_text("x**2 + x**-1 + x**3")
            .unwrap()
            .with_profile(profile);
        let (kernel, _, notes) = runner
            .explain_rewrites(&[("x", ArrayArg::from(&x))])
            .unwrap()
            .pop()
            .unwrap();
        let text = kernel.to_string();
        let pows = text.matches(" pow ").count();
        let want = if profile == Profile::Approximate { 0 } else { 1 };
        assert_eq!(pows, want, "{profile}:\n{text}");
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("strength: x**2 -> x*x, x**-1 -> 1/x")),
            "{profile}: {notes:?}"
        );
    }
}

/// The approximate profile's chains against libm's `pow`: within 4 ULP on ordinary values, and the
/// same specials (`pow` and a chain agree on NaN, ±inf, ±0).
#[test]
fn approximate_chains_stay_close_to_pow() {
    let xs: Vec<f64> = specials_f64()
        .into_iter()
        .filter(|v| v.is_finite() && v.abs() > 1e-30 && v.abs() < 1e30)
        .collect();
    let x = ArrayD::from_shape_vec(IxDyn(&[xs.len()]), xs.clone()).unwrap();
    for n in [-16i32, -7, -3, -2, 3, 4, 5, 7, 8, 13, 16] {
        let expr = format!("x ** {n}");
        let runner = FusedRunner::compile_text(&expr)
            .unwrap()
            .with_profile(Profile::Approximate);
        let got = runner.run(&[("x", ArrayArg::from(&x))]).unwrap().into_f64();
        for (&g, &xi) in got.iter().zip(&xs) {
            let want = xi.powi(n);
            if !want.is_finite() || want == 0.0 || want.abs() < f64::MIN_POSITIVE {
                continue;
            }
            let ulps = (g.to_bits() as i64 - want.to_bits() as i64).unsigned_abs();
            assert!(
                ulps <= 4 * n.unsigned_abs() as u64,
                "{expr} at {xi:e}: {g:e} vs {want:e}"
            );
        }
    }
}

/// (name, expression, profile)
const GOLDEN: &[(&str, &str, Profile)] = &[
    (
        "numpy_fast_paths",
        "x**2 + x**-1 + x**1 + x**0 + x**0.5",
        Profile::Default,
    ),
    ("default_keeps_pow", "x**3 + x**-2 + x**2.5", Profile::Default),
    (
        "approximate_chains",
        "x**3 + x**-2 + x**8 + x**2.5 + x**17",
        Profile::Approximate,
    ),
    ("shared_square", "a*x**2 + b*sin(x) + square(x)", Profile::Default),
];

#[test]
fn golden_strength() {
    let mut golden = Golden::new("strength");
    let x = ArrayD::<f64>::zeros(IxDyn(&[100]));
    let s = ArrayD::<f64>::zeros(IxDyn(&[]));
    for (name, expr, profile) in GOLDEN {
        let runner = FusedRunner::compile_text(expr).unwrap().with_profile(*profile);
        let args = [
            ("x", ArrayArg::from(&x)),
            ("a", ArrayArg::from(&s)),
            ("b", ArrayArg::from(&s)),
        ];
        let before = FusedRunner::compile_text(expr).unwrap().program_text(&args);
        let (kernel, _, notes) = runner.explain_rewrites(&args).unwrap().pop().unwrap();
        let notes = if notes.is_empty() {
            "no rewrite".to_string()
        } else {
            notes.join("\n# ")
        };
        let got = format!("# {expr} (profile {profile})\n# before\n{before}# after\n{kernel}# {notes}\n");
        golden.check(name, &got);
    }
    golden.finish();
}

/// The kernel before any rewrite, for the golden texts.
trait ProgramText {
    fn program_text(&self, args: &[(&str, ArrayArg<'_>)]) -> String;
}

impl ProgramText for FusedRunner {
    fn program_text(&self, args: &[(&str, ArrayArg<'_>)]) -> String {
        let shapes: Vec<Vec<usize>> = self
            .program()
            .names
            .iter()
            .map(|n| args.iter().find(|(a, _)| a == n).unwrap().1.shape().to_vec())
            .collect();
        let kernel = self
            .program()
            .kernel(kiln::kiln_ir::ElemType::F64, &shapes)
            .unwrap();
        // as the executor gives a float kernel: integer literals as float literals
        kiln::kiln_ir::passes::rebuild(&kernel, |arena, _, node| match node {
            kiln::kiln_ir::Node::Int(v) => Some(arena.literal(v as f64)),
            _ => None,
        })
        .unwrap_or(kernel)
        .to_string()
    }
}
