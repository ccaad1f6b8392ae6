//! The cost of a cached `fuse` call at N = 100 against the run alone, in pieces (for `perf`): the
//! closure's expression built and dropped, the call-site lookup, the run, the whole call. Minimum
//! over several rounds, so a loaded machine reads less wrong.
use kiln::{Expr, FuseAllExt, FuseExt, FusedRunner};
use ndarray::Array1;
use std::hint::black_box;
use std::time::Instant;

fn time(what: &str, reps: u32, mut f: impl FnMut()) {
    let mut best = f64::INFINITY;
    for _ in 0..15 {
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        best = best.min(t.elapsed().as_nanos() as f64 / reps as f64);
    }
    println!("{what:<36} {best:>8.0} ns");
}

fn main() {
    let x = Array1::linspace(-1.0, 1.0, 100);
    let y = Array1::linspace(0.0, 2.0, 100);
    let reps = 20_000;
    let one = |x: Expr| &x * 2.5 + 1.0;
    let runner = FusedRunner::compile(&one(Expr::input("x0"))).unwrap();
    time("build + drop the expression", reps, || {
        black_box(one(Expr::input("x0")));
    });
    time("run (prepared runner)", reps, || {
        black_box(runner.run(&[("x0", (&x).into())]).unwrap());
    });
    time("fuse, cached", reps, || {
        black_box(x.fuse(one).unwrap());
    });
    time("fuse, compiling at every call", reps / 10, || {
        let r = FusedRunner::compile(&one(Expr::input("x0"))).unwrap();
        black_box(r.run(&[("x0", (&x).into())]).unwrap());
    });
    let two = |(x, y): (Expr, Expr)| 2.5 * &x + y;
    let runner2 = FusedRunner::compile(&two((Expr::input("x0"), Expr::input("x1")))).unwrap();
    time("run axpy (prepared runner)", reps, || {
        black_box(runner2.run(&[("x0", (&x).into()), ("x1", (&y).into())]).unwrap());
    });
    time("fuse_all axpy, cached", reps, || {
        black_box((&x, &y).fuse_all(two).unwrap());
    });
}
