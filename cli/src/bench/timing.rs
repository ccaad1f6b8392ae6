//! Timing: the median of repeated samples, each long enough to dwarf the clock's resolution.

use std::time::{Duration, Instant};

/// The median time of one call of `f`, in nanoseconds, measured within about `budget`.
///
/// One untimed call warms caches (and compiles a kernel on first use); then the number of calls per
/// sample is set so that a sample takes about a fifteenth of the budget, and up to 15 samples are
/// taken. Medians resist the noise of a shared machine better than means.
pub fn median_ns(mut f: impl FnMut(), budget: Duration) -> f64 {
    f();
    let start = Instant::now();
    f();
    let once = start.elapsed().max(Duration::from_nanos(20));
    let per_sample = budget / 15;
    let reps = (per_sample.as_nanos() / once.as_nanos()).clamp(1, 1_000_000) as u32;
    let mut samples = Vec::with_capacity(15);
    let deadline = Instant::now() + budget;
    while samples.len() < 15 && (samples.len() < 3 || Instant::now() < deadline) {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        samples.push(t.elapsed().as_nanos() as f64 / reps as f64);
    }
    samples.sort_by(f64::total_cmp);
    samples[samples.len() / 2]
}
