//! The cost of compiling an expression whose kernel is already in the cache (for `perf`).
use kiln::FusedRunner;
use ndarray::{Array1, arr0};

fn main() {
    let x = Array1::linspace(-3.0, 3.0, 1000);
    let (a, b, c, d) = (arr0(0.5), arr0(-1.0), arr0(2.0), arr0(0.25));
    let args = [
        ("x", (&x).into()),
        ("a", (&a).into()),
        ("b", (&b).into()),
        ("c", (&c).into()),
        ("d", (&d).into()),
    ];
    let expr = kiln::text::parse("((a*x+b)*x+c)*x+d").unwrap();
    let reps = 300_000;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        let r = FusedRunner::compile(&expr).unwrap();
        r.prepare(&args).unwrap();
    }
    println!(
        "{:.0} ns per compile + prepare",
        t.elapsed().as_nanos() as f64 / reps as f64
    );
}
