//! Times the streaming reductions of issue 14 (sumsq, rowsum, colsum) and a map into a fresh output
//! against a reused one, one thread, as minimum and median of many calls (robust on a shared host).
//!
//! `cargo run --release --example stream_reduce -- [N ...]` (default 1e4 1e6 1e7); pin it with
//! `taskset -c 0`. Prints one line per case: ns per element, minimum and median. `COLS=1024` reads
//! the rowsum / colsum matrix with that many columns instead of 1000; `THREADS=k` runs the map with k
//! threads (default 1: where a fresh output's first touch is spread over the threads writing it).
use kiln::FusedRunner;
use ndarray::{Array1, ArrayD, IxDyn};
use std::time::Instant;

/// Minimum and median seconds of `reps` calls of `f` (after two untimed calls).
fn time(reps: usize, f: &mut dyn FnMut()) -> (f64, f64) {
    f();
    f();
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            f();
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(f64::total_cmp);
    (t[0], t[reps / 2])
}

fn main() {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse::<f64>().expect("a size such as 1e7") as usize)
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 1_000_000, 10_000_000]
    } else {
        sizes
    };
    for &n in &sizes {
        let x = Array1::from_shape_fn(n, |i| ((i * 7919) % 1013) as f64 * 0.01 - 5.0);
        let cols: usize = std::env::var("COLS")
            .ok()
            .and_then(|c| c.parse().ok())
            .unwrap_or(1000);
        let m = x.slice(ndarray::s![..n / cols * cols]);
        let m = m.into_shape_with_order((n / cols, cols)).expect("a matrix");
        let reps = (2e9 / n as f64).clamp(20.0, 2000.0) as usize;
        let cases: [(&str, &str, bool); 3] = [
            ("sumsq", "sum(x*x)", false),
            ("rowsum", "sum(x, axis=1)", true),
            ("colsum", "sum(x, axis=0)", true),
        ];
        for (name, text, matrix) in cases {
            let r = FusedRunner::compile_text(text).unwrap().with_threads(1);
            let arg = if matrix { m.into() } else { (&x).into() };
            let args = [("x", arg)];
            let (lo, med) = time(reps, &mut || {
                std::hint::black_box(r.run(&args).unwrap());
            });
            let ns = 1e9 / n as f64;
            println!("{name:7} n={n:<9} min {:.3} med {:.3} ns/elem", lo * ns, med * ns);
        }
        // a map into a fresh output against a reused one
        let threads = std::env::var("THREADS")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or(1);
        let r = FusedRunner::compile_text("2.5*x + 1")
            .unwrap()
            .with_threads(threads);
        let args = [("x", (&x).into())];
        let mut out = ArrayD::<f64>::zeros(IxDyn(&[n]));
        let reps = reps.min(200);
        let (rlo, rmed) = time(reps, &mut || r.run_into(&args, out.view_mut()).unwrap());
        let (flo, fmed) = time(reps, &mut || {
            std::hint::black_box(r.run(&args).unwrap());
        });
        println!(
            "map     n={n:<9} threads={threads} reused min {:.3} med {:.3} ms, fresh min {:.3} med {:.3} ms, fresh/reused (medians) {:.2}",
            rlo * 1e3,
            rmed * 1e3,
            flo * 1e3,
            fmed * 1e3,
            fmed / rmed
        );
    }
}
