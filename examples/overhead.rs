//! The fixed cost of a call: horner at N = 100, run many times (for `perf`).
use kiln::FusedRunner;
use ndarray::{Array1, arr0};

fn main() {
    let x = Array1::linspace(-3.0, 3.0, 100);
    let (a, b, c, d) = (arr0(0.5), arr0(-1.0), arr0(2.0), arr0(0.25));
    let runner = FusedRunner::compile_text("((a*x+b)*x+c)*x+d")
        .unwrap()
        .with_threads(1);
    let args = [
        ("x", (&x).into()),
        ("a", (&a).into()),
        ("b", (&b).into()),
        ("c", (&c).into()),
        ("d", (&d).into()),
    ];
    let mut out = Array1::<f64>::zeros(100);
    let reps = 2_000_000;
    let t = std::time::Instant::now();
    for _ in 0..reps {
        runner.run_into(&args, out.view_mut()).unwrap();
    }
    println!("{:.0} ns per call", t.elapsed().as_nanos() as f64 / reps as f64);
}
