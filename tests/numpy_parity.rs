//! NumPy parity: kiln's default (interpreter) backend against results NumPy computed.
//!
//! The cases live in `tests/data/numpy_cases.txt`, written by `tests/gen/make_numpy_cases.py`
//! (regenerate with `python3 tests/gen/make_numpy_cases.py`; the test itself never runs Python).
//! They cover every operator and function of the text language over special values (NaN, ±inf, ±0,
//! subnormals, the largest finite), NumPy broadcasting (scalars, stretched axes, empty arrays),
//! strided, reversed and Fortran-order inputs, f32 / f64 / mixed dtypes with NumPy 2's promotion,
//! every reduction with and without an axis, and the errors (shapes that do not broadcast, empty
//! min/max/argmin/argmax, axes out of range).
//!
//! Comparisons: IEEE algebra bit for bit (any NaN equals any NaN, the sign of zero counts); libm
//! functions and pow within 4 ULP; sums and products with a relative tolerance, because kiln folds
//! sequentially in an f64 accumulator while NumPy sums pairwise. Every failure is reported, not
//! just the first.

#[path = "gen/fixture.rs"]
mod fixture;

use fixture::{Case, Check};
use kiln::FusedRunner;

const CASES: &str = include_str!("data/numpy_cases.txt");

/// Cases where kiln deliberately differs from NumPy (a design decision, not a slip), with the
/// reason. Each must still fail: when one passes, the test says so, and it comes off this list.
/// A bug is not listed here: its case fails until it is fixed.
const KNOWN_DIVERGENCES: &[(&str, &str)] = &[
    (
        "mixed_f32_intermediate",
        "kiln converts every input to the kernel's promoted dtype once, then computes every operation in \
         it; NumPy types each operation by its own operands, so f32 * f32 is rounded to f32 before it \
         meets the f64 input",
    ),
    (
        "mixed_f32_lit_intermediate",
        "as mixed_f32_intermediate: NumPy rounds f32 * 0.1 to f32 before adding the f64 input",
    ),
    (
        "red_sum_f32_overflow_f32",
        "kiln sums f32 data in an f64 accumulator and rounds once: 3e38 + 3e38 - 3e38 is 3e38, where \
         NumPy's f32 accumulator overflows to inf",
    ),
    (
        "red_max_0d_axis0",
        "NumPy lets axis=0 and axis=-1 through on a 0-d array for backwards compatibility (the axis is \
         ignored); kiln reports the axis as out of range for rank 0",
    ),
    ("red_sum_0d_axis_m1", "as red_max_0d_axis0"),
];

/// Runs one case: `Ok` if kiln agrees with NumPy (with the largest ULP distance of a case checked
/// within ULPs), else what differs.
fn run(case: &Case) -> Result<u128, String> {
    let result = FusedRunner::compile_text(&case.expr).and_then(|r| r.run(&case.args()));
    match (&case.err, result) {
        (Some(want), Err(e)) => {
            let msg = e.to_string();
            let missing: Vec<&String> = want.iter().filter(|s| !msg.contains(s.as_str())).collect();
            if missing.is_empty() {
                Ok(0)
            } else {
                Err(format!("error '{msg}' does not mention {missing:?}"))
            }
        }
        (Some(want), Ok(out)) => Err(format!(
            "expected an error mentioning {want:?}, got a {} {:?} result",
            out.dtype_name(),
            out.shape()
        )),
        (None, Err(e)) => Err(format!("error: {e}")),
        (None, Ok(out)) => {
            let want = case.out.as_ref().expect("a case without err has an out");
            fixture::compare(&out, want, case.check, case.zeros_any)?;
            Ok(if matches!(case.check, Check::Ulp(_)) {
                fixture::max_ulp(&out, want)
            } else {
                0
            })
        }
    }
}

fn describe(case: &Case) -> String {
    let inputs: Vec<String> = case.inputs.iter().map(|i| i.describe()).collect();
    format!(
        "{} (line {}): `{}` with [{}]",
        case.name,
        case.line,
        case.expr,
        inputs.join(", ")
    )
}

#[test]
fn numpy_parity() {
    let cases = fixture::parse(CASES);
    assert!(cases.len() >= 150, "only {} cases", cases.len());
    let mut failures = Vec::new();
    let mut known_failing = 0;
    let mut worst_ulp = (0, "");
    for case in &cases {
        let known = KNOWN_DIVERGENCES.iter().find(|(n, _)| *n == case.name);
        match (run(case), known) {
            (Ok(ulp), None) => {
                if ulp > worst_ulp.0 {
                    worst_ulp = (ulp, case.name.as_str());
                }
            }
            (Ok(_), Some((_, why))) => failures.push(format!(
                "{}\n    now agrees with NumPy: take it off KNOWN_DIVERGENCES ({why})",
                describe(case)
            )),
            (Err(_), Some(_)) => known_failing += 1,
            (Err(e), None) => failures.push(format!("{}\n    {e}", describe(case))),
        }
    }
    for (name, _) in KNOWN_DIVERGENCES {
        assert!(
            cases.iter().any(|c| c.name == *name),
            "KNOWN_DIVERGENCES names no case '{name}'"
        );
    }
    eprintln!(
        "numpy parity: {} cases, {} agree, {} known divergences, {} failures; largest ULP distance of a libm function or pow: {} ({})",
        cases.len(),
        cases.len() - known_failing - failures.len(),
        known_failing,
        failures.len(),
        worst_ulp.0,
        worst_ulp.1,
    );
    assert!(
        failures.is_empty(),
        "{} of {} NumPy parity cases fail:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// The fixture covers what it claims to: every operator, function and reduction of the text
/// language, both dtypes, error cases, empty and 0-d inputs, and every layout.
#[test]
fn fixture_coverage() {
    let cases = fixture::parse(CASES);
    let exprs: Vec<&str> = cases.iter().map(|c| c.expr.as_str()).collect();
    let has = |s: &str| exprs.iter().any(|e| e.contains(s));
    for tok in [
        " + ",
        " - ",
        " * ",
        " / ",
        "**",
        " < ",
        " <= ",
        " > ",
        " >= ",
        " == ",
        " != ",
        " & ",
        " | ",
        "~",
        "-a",
        "sin(",
        "cos(",
        "tan(",
        "exp(",
        "log(",
        "sqrt(",
        "abs(",
        "where(",
        "minimum(",
        "maximum(",
        "sum(",
        "prod(",
        "min(",
        "max(",
        "argmin(",
        "argmax(",
        "any(",
        "all(",
        "axis=-",
        "axis=0",
        "axis=None",
        "max(a, 0)",
        "** 0.5",
    ] {
        assert!(has(tok), "no case uses '{tok}'");
    }
    let inputs = || cases.iter().flat_map(|c| c.inputs.iter());
    for layout in [
        fixture::Layout::C,
        fixture::Layout::F,
        fixture::Layout::Step,
        fixture::Layout::Rev,
    ] {
        assert!(
            inputs().any(|i| i.layout == layout),
            "no input has layout {layout:?}"
        );
    }
    assert!(inputs().any(|i| i.arg().shape().is_empty()), "no 0-d input");
    assert!(inputs().any(|i| i.arg().shape().contains(&0)), "no empty input");
    assert!(inputs().any(|i| i.arg().dtype() == kiln::kiln_ir::ElemType::F32));
    assert!(
        cases.iter().filter(|c| c.err.is_some()).count() >= 10,
        "too few error cases"
    );
    for dtype in ["float64", "float32", "int64", "bool"] {
        assert!(
            cases
                .iter()
                .any(|c| c.out.as_ref().is_some_and(|o| o.dtype == dtype)),
            "no {dtype} result"
        );
    }
}
