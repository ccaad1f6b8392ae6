//! Where the time of `sum(x*x)` at N = 100 goes (issue 24): the ordinary calls against the prepared
//! handle, the unfused ndarray expression and a plain loop, in rounds that alternate the ways, each
//! way's median thread CPU time a call (a loaded host moves wall time far more).
//!
//! `cargo run --release --example sumsq_call [rounds] [calls a round]`; with `WAY=k` in the
//! environment it runs way `k` alone, `calls` times, for callgrind.

use kiln::{ArrayArg, FusedRunner};
use ndarray::{Array1, ArrayD, arr0};
use std::cell::RefCell;
use std::hint::black_box;

#[path = "support/cpu_time.rs"]
mod cpu_time;
use cpu_time::cpu_ns;

/// The elements of a result in a `Vec`: what `kiln bench` did with a reduction's result before.
fn flat<T: Clone>(a: ArrayD<T>) -> Vec<T> {
    a.iter().cloned().collect()
}

type Way<'a> = (&'static str, Box<dyn Fn() + 'a>);

fn main() -> kiln::Result<()> {
    let mut argv = std::env::args().skip(1);
    let rounds: usize = argv.next().map_or(21, |s| s.parse().expect("a count of rounds"));
    let calls: usize = argv
        .next()
        .map_or(50_000, |s| s.parse().expect("a count of calls"));
    let n = 100;
    let x = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
    let args: Vec<(&str, ArrayArg<'_>)> = vec![("x", (&x).into())];
    let runner = FusedRunner::compile_text("sum(x*x)")?.with_threads(1);
    let h = runner.prepared(&args)?;
    let xs = x.as_slice().expect("contiguous");
    let out = RefCell::new(arr0(0.0f64));
    let ways: Vec<Way<'_>> = vec![
        (
            "ndarray (x*x).sum()",
            Box::new(|| {
                let x = black_box(&x);
                black_box((x * x).sum());
            }),
        ),
        (
            "runner.run(&args) (fresh)",
            Box::new(|| {
                black_box(runner.run(black_box(&args)).unwrap());
            }),
        ),
        (
            "runner.run, then flat (bench before)",
            Box::new(|| {
                black_box(flat(runner.run(black_box(&args)).unwrap().into_f64()));
            }),
        ),
        (
            "runner.run_into(&args, 0-d out)",
            Box::new(|| {
                let mut o = out.borrow_mut();
                runner.run_into(black_box(&args), o.view_mut()).unwrap();
                black_box(&*o);
            }),
        ),
        (
            "prepared run_slices",
            Box::new(|| {
                let mut o = [0.0f64];
                h.run_slices(black_box(&[xs]), &mut o).unwrap();
                black_box(o);
            }),
        ),
        (
            "plain loop (one chain of adds)",
            Box::new(|| {
                let x = black_box(xs);
                black_box(x.iter().map(|v| v * v).sum::<f64>());
            }),
        ),
    ];
    if let Ok(w) = std::env::var("WAY") {
        let f = &ways[w.parse::<usize>().expect("a way's index")].1;
        for _ in 0..calls {
            f();
        }
        return Ok(());
    }
    for (_, f) in &ways {
        for _ in 0..1000 {
            f();
        }
    }
    let mut times = vec![Vec::new(); ways.len()];
    for _ in 0..rounds {
        for ((_, f), t) in ways.iter().zip(&mut times) {
            let start = cpu_ns();
            for _ in 0..calls {
                f();
            }
            t.push((cpu_ns() - start) / calls as f64);
        }
    }
    let medians: Vec<f64> = times
        .into_iter()
        .map(|mut v| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        })
        .collect();
    for ((name, _), m) in ways.iter().zip(&medians) {
        println!("{name:<38} {m:>8.1} ns  {:>5.2}x ndarray", m / medians[0]);
    }
    Ok(())
}
