//! The per-call cost of the prepared handle's `run_slices` at N = 100, for callgrind:
//! `valgrind --tool=callgrind target/release/examples/percall_callgrind axpy 10000` (and with 0
//! calls: the difference over 10000 is the instructions of one call).

use kiln::{ArrayArg, FusedRunner};
use ndarray::{Array1, arr0};
use std::hint::black_box;

fn main() -> kiln::Result<()> {
    let mut argv = std::env::args().skip(1);
    let which = argv.next().unwrap_or_else(|| "axpy".into());
    let calls: usize = argv
        .next()
        .map_or(10_000, |s| s.parse().expect("a count of calls"));
    let n = 100;
    let x = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
    let y = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
    let (a, b, c, d) = (arr0(2.5), arr0(-1.0), arr0(0.5), arr0(3.0));
    let (text, args): (&str, Vec<(&str, ArrayArg<'_>)>) = match which.as_str() {
        "axpy" => (
            "a*x + y",
            vec![("a", (&a).into()), ("x", (&x).into()), ("y", (&y).into())],
        ),
        "horner" => (
            "((a*x+b)*x+c)*x+d",
            vec![
                ("a", (&a).into()),
                ("b", (&b).into()),
                ("c", (&c).into()),
                ("d", (&d).into()),
                ("x", (&x).into()),
            ],
        ),
        "sumsq" => ("sum(x*x)", vec![("x", (&x).into())]),
        other => panic!("unknown kernel {other}"),
    };
    let runner = FusedRunner::compile_text(text)?;
    let h = runner.prepared(&args)?;
    let slices: Vec<&[f64]> = args
        .iter()
        .map(|(_, a)| match a {
            ArrayArg::F64(v) => v.as_slice().unwrap(),
            _ => unreachable!("the kernels here are f64"),
        })
        .collect();
    let mut out = vec![0.0; h.output_shape().iter().product()];
    h.run_slices(&slices, &mut out)?;
    for _ in 0..calls {
        h.run_slices(black_box(&slices), &mut out)?;
    }
    black_box(&out);
    Ok(())
}
