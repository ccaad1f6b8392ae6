//! Golden tests of the IR's text form: each case shows the KernelIR of a representative expression.
//!
//! The expected text lives in `tests/golden/NAME.txt`. Run with `KILN_BLESS=1` to rewrite the files
//! from the current output (then review the diff).

use kiln::FusedRunner;
use kiln::kiln_ir::PlanOptions;
use ndarray::{ArrayD, IxDyn};

#[path = "support/golden.rs"]
mod golden;
use golden::Golden;

/// An input of a case: its name, dtype and shape.
type Input = (&'static str, &'static str, &'static [usize]);

/// (name, expression, inputs)
const CASES: &[(&str, &str, &[Input])] = &[
    (
        "axpy",
        "a*x + y",
        &[("a", "f64", &[]), ("x", "f64", &[1000]), ("y", "f64", &[1000])],
    ),
    (
        "horner",
        "((a*x+b)*x+c)*x+d",
        &[
            ("x", "f64", &[1000]),
            ("a", "f64", &[]),
            ("b", "f64", &[]),
            ("c", "f64", &[]),
            ("d", "f64", &[]),
        ],
    ),
    ("sumsq", "sum(x*x)", &[("x", "f64", &[1000])]),
    ("logistic_f32", "1/(1+exp(-x))", &[("x", "f32", &[256])]),
    (
        "trig_shared",
        "sin(x)*cos(x) + sqrt(abs(x))",
        &[("x", "f64", &[64])],
    ),
    ("row_sums", "sum(x, axis=1)", &[("x", "f64", &[100, 300])]),
    (
        "column_max_neg_axis",
        "max(x - y, axis=-2)",
        &[("x", "f64", &[100, 300]), ("y", "f64", &[300])],
    ),
    ("argmin_all", "argmin(x*x)", &[("x", "f32", &[10, 10])]),
    ("where_relu", "where(x > 0, x, 0)", &[("x", "f64", &[128])]),
    (
        "logical_mixed_dtype",
        "(a < b) & ~(b >= 1) | (a != a)",
        &[("a", "f32", &[4, 100]), ("b", "f64", &[100])],
    ),
    (
        "pow_sqrt_rule",
        "x ** 0.5 + x ** -1 + 2 ** x",
        &[("x", "f64", &[100])],
    ),
    (
        "any_all",
        "all(minimum(x, 1) == maximum(x, 1))",
        &[("x", "f64", &[3, 1, 100])],
    ),
    ("literal_only", "1.0 + 2 * 3", &[]),
    (
        "broadcast_outer_rows",
        "x * y",
        &[("x", "f64", &[3, 1]), ("y", "f64", &[3, 4])],
    ),
];

fn render(expr: &str, inputs: &[(&str, &str, &[usize])]) -> String {
    let runner = FusedRunner::compile_text(expr).expect("parses");
    let f64s: Vec<ArrayD<f64>> = inputs.iter().map(|(_, _, s)| ArrayD::zeros(IxDyn(s))).collect();
    let f32s: Vec<ArrayD<f32>> = inputs.iter().map(|(_, _, s)| ArrayD::zeros(IxDyn(s))).collect();
    let args: Vec<(&str, kiln::ArrayArg<'_>)> = inputs
        .iter()
        .enumerate()
        .map(|(i, (n, d, _))| {
            (
                *n,
                if *d == "f32" {
                    (&f32s[i]).into()
                } else {
                    (&f64s[i]).into()
                },
            )
        })
        .collect();
    let runner = runner.with_plan_options(PlanOptions { min_row: 4 });
    let (kernel, plan) = runner.explain(&args).expect("specialises");
    format!("# {expr}\n{kernel}{plan}")
}

#[test]
fn golden_ir() {
    let mut golden = Golden::new("");
    for (name, expr, inputs) in CASES {
        let got = render(expr, inputs);
        golden.check(name, &got);
    }
    golden.finish();
    assert!(CASES.len() >= 10);
}
