//! Timing for the examples that compare ways of running one kernel: closures run in turn, so that a
//! noisy neighbour hurts them alike, and the median of each.

use std::time::Instant;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Median microseconds of each closure per call, the closures run in turn for `rounds` rounds
/// (after one warm-up call each).
pub fn alternate(fs: &[&dyn Fn()], rounds: usize) -> Vec<f64> {
    for f in fs {
        f();
    }
    let mut times = vec![Vec::new(); fs.len()];
    for _ in 0..rounds {
        for (f, t) in fs.iter().zip(&mut times) {
            let start = Instant::now();
            f();
            t.push(start.elapsed().as_secs_f64() * 1e6);
        }
    }
    times.into_iter().map(median).collect()
}
