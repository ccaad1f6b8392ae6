//! Golden tests of the prefix-scan rewrite, in the style of a rewrite's positive and negative cases:
//! each file in `tests/golden/prefix_scan/` shows the composed kernel (IR in), then the scan kernel the
//! rewrite made (IR out) or the reason it declined. `KILN_BLESS=1` rewrites the files.

use kiln::FusedRunner;
use kiln::kiln_ir::passes::prefix_scan;
use kiln::kiln_ir::{KernelIR, KernelKind};
use ndarray::{ArrayD, IxDyn};

#[path = "support/golden.rs"]
mod golden;
use golden::Golden;

/// A change made to the composed kernel before the pass sees it (for forms the text cannot write).
type Edit = fn(&mut KernelIR);

const P: &str = "sum(where(i <= o, x[i], 0), index=(i, o), axis=i)";

/// (name, expression, inputs as (name, dtype, shape), edit)
#[allow(clippy::type_complexity)]
const CASES: &[(&str, &str, &[(&str, &str, &[usize])], Option<Edit>)] = &[
    // recognised
    ("prefix_le_where", P, &[("x", "f64", &[5])], None),
    (
        "prefix_lt_product",
        "sum(x[i] * (i < o), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "suffix_ge_complement",
        "sum(where(i < o, 0, x[i]), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "suffix_gt_product",
        "sum(x[i] * (o < i), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "max_prefix",
        "max(where(i <= o, x[i], -inf), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "min_suffix_exclusive",
        "min(where(i > o, x[i], inf), index=(i, o), axis=i)",
        &[("x", "f32", &[5])],
        None,
    ),
    (
        "difference_form",
        "sum(where(o - i >= 0, x[i] * x[i], 0), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "batched_rows",
        "sum(where(i <= o, x[b, i], 0), index=(b, i, o), axis=i)",
        &[("x", "f64", &[3, 5])],
        None,
    ),
    (
        "with_initial",
        "sum(where(i <= o, x[i], 0), index=(i, o), axis=i, initial=2.5)",
        &[("x", "f64", &[5])],
        None,
    ),
    // declined
    (
        "decline_band",
        "sum(where((i <= o) & (i >= o - 2), x[i], 0), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "decline_shifted",
        "sum(where(i <= o + 1, x[i], 0), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "decline_anti_diagonal",
        "sum(where(i + o <= 4, x[i], 0), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "decline_row_varying",
        "sum(where((i <= o) & (b > 0), x[b, i], 0), index=(b, i, o), axis=i)",
        &[("x", "f64", &[3, 5])],
        None,
    ),
    (
        "decline_mask_from_input",
        "sum(x[i] * t[i, o], index=(i, o), axis=i)",
        &[("x", "f64", &[5]), ("t", "f64", &[5, 5])],
        None,
    ),
    (
        "decline_max_product_mask",
        "max(x[i] * (i <= o), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "decline_payload_reads_o",
        "sum(where(i <= o, x[i] * o, 0), index=(i, o), axis=i)",
        &[("x", "f64", &[5])],
        None,
    ),
    (
        "decline_two_reduced_axes",
        "sum(where(i <= o, x[b, i], 0), index=(b, i, o), axis=i)",
        &[("x", "f64", &[3, 5])],
        Some(two_axes),
    ),
    (
        "decline_ranges_differ",
        P,
        &[("x", "f64", &[5])],
        Some(ranges_differ),
    ),
    (
        "decline_f32_beyond_2_24",
        P,
        &[("x", "f32", &[5])],
        Some(beyond_2_24),
    ),
];

fn two_axes(k: &mut KernelIR) {
    k.kind = KernelKind::Reduce {
        op: kiln::kiln_ir::ReduceOp::Sum,
        axes: vec![0, 1],
    };
}

fn ranges_differ(k: &mut KernelIR) {
    k.shape[1] = 7;
}

fn beyond_2_24(k: &mut KernelIR) {
    let n = (1 << 24) + 2;
    k.shape = vec![n, n];
    k.inputs[0].shape = vec![n, 1];
}

fn render(expr: &str, inputs: &[(&str, &str, &[usize])], edit: Option<Edit>) -> String {
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
    // the composed kernel: the runner with the rewrite off
    let (mut kernel, _) = runner.explain(&args).expect("specialises");
    if let Some(edit) = edit {
        edit(&mut kernel);
    }
    let initial = runner.program().reduction().and_then(|r| r.initial);
    let out = match prefix_scan::rewrite(&kernel, initial) {
        Ok(scan) => format!("{scan}"),
        Err(why) => format!("declined: {why}\n"),
    };
    format!("# {expr}\n{kernel}--- prefix_scan --->\n{out}")
}

#[test]
fn golden_prefix_scan() {
    let mut golden = Golden::new("prefix_scan");
    for (name, expr, inputs, edit) in CASES {
        let got = render(expr, inputs, *edit);
        let recognised = !name.starts_with("decline");
        assert_eq!(got.contains("kernel scan"), recognised, "{name}:\n{got}");
        golden.check(name, &got);
    }
    golden.finish();
}
