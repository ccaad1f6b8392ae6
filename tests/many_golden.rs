//! Golden texts of runners of several results (`kiln explain` of `"a; b"`): the plan (which results
//! share which kernel, what each kernel reads) and each kernel's IR, the fused maps' kernel with every
//! shared subexpression computed once and one `out<k>` line per output. In `tests/golden/many/`;
//! `KILN_BLESS=1` rewrites them.

#[path = "support/golden.rs"]
mod golden;
use golden::Golden;

use kiln::FusedRunner;
use ndarray::{ArrayD, IxDyn};

const BS_CALL: &str = "s*(0.5*erfc(-((log(s/k) + (r + 0.5*v*v)*t) / (v*sqrt(t)))*0.7071067811865476)) - k*exp(-r*t)*(0.5*erfc(-(((log(s/k) + (r + 0.5*v*v)*t) / (v*sqrt(t))) - v*sqrt(t))*0.7071067811865476))";
const BS_PUT: &str = "k*exp(-r*t)*(0.5*erfc((((log(s/k) + (r + 0.5*v*v)*t) / (v*sqrt(t))) - v*sqrt(t))*0.7071067811865476)) - s*(0.5*erfc(((log(s/k) + (r + 0.5*v*v)*t) / (v*sqrt(t)))*0.7071067811865476))";

/// Inputs as (name, shape), all f64.
type Inputs = Vec<(&'static str, Vec<usize>)>;

/// (name, expressions, inputs)
fn cases() -> Vec<(&'static str, String, Inputs)> {
    vec![
        (
            "black_scholes_call_put",
            format!("{BS_CALL}; {BS_PUT}"),
            vec![
                ("s", vec![64]),
                ("k", vec![64]),
                ("t", vec![64]),
                ("r", vec![]),
                ("v", vec![]),
            ],
        ),
        (
            "particle_step",
            "p + v*dt; v*0.99 + g*dt".into(),
            vec![("p", vec![64]), ("v", vec![64]), ("dt", vec![]), ("g", vec![])],
        ),
        ("map_and_its_sum", "x*2; sum(x*2)".into(), vec![("x", vec![100])]),
        (
            "softmax_parts",
            "x - max(x, axis=1, keepdims=1); max(x, axis=1); exp(x)".into(),
            vec![("x", vec![4, 100])],
        ),
        (
            "maps_of_two_shapes",
            "r*2; m*r".into(),
            vec![("r", vec![100]), ("m", vec![3, 100])],
        ),
    ]
}

fn render(src: &str, inputs: &[(&str, Vec<usize>)]) -> String {
    let runner = FusedRunner::compile_text(src).expect("parses");
    let arrays: Vec<ArrayD<f64>> = inputs.iter().map(|(_, s)| ArrayD::zeros(IxDyn(s))).collect();
    let args: Vec<(&str, kiln::ArrayArg<'_>)> = inputs
        .iter()
        .zip(&arrays)
        .map(|((n, _), a)| (*n, a.into()))
        .collect();
    let mut s = format!("# {src}\n{}", runner.pipeline());
    for (k, (kernel, plan, notes)) in runner
        .explain_rewrites(&args)
        .expect("specialises")
        .iter()
        .enumerate()
    {
        s.push_str(&format!("# kernel {k}\n"));
        for n in notes {
            s.push_str(&format!("# rewrite {n}\n"));
        }
        s.push_str(&format!("{kernel}{plan}"));
    }
    s
}

#[test]
fn golden_many() {
    let mut golden = Golden::new("many");
    for (name, src, inputs) in cases() {
        golden.check(name, &render(&src, &inputs));
    }
    golden.finish();
}

#[test]
fn black_scholes_computes_its_shared_subexpressions_once() {
    let (_, src, inputs) = cases().swap_remove(0);
    let text = render(&src, &inputs);
    let fused = text
        .rsplit("# kernel 2\n")
        .next()
        .expect("the fused kernel is kernel 2");
    // one log, one exp, two sqrt (v*sqrt(t) and sqrt(t) are one), four erfc for the four N(.)
    assert_eq!(fused.matches(" = log ").count(), 1, "{fused}");
    assert_eq!(fused.matches(" = exp ").count(), 1, "{fused}");
    assert_eq!(fused.matches(" = sqrt ").count(), 1, "{fused}");
    assert_eq!(fused.matches(" = erfc ").count(), 4, "{fused}");
    assert!(fused.contains("out0 %") && fused.contains("out1 %"), "{fused}");
}
