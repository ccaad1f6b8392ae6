//! Times a row sum over `x[:, :500]` of a 2000x1000 f64 array: read in place (the JIT's plan) against
//! the same view copied to a C-contiguous array first (what the executor did before).
use kiln::FusedRunner;
use ndarray::{Array2, s};
use std::time::Instant;

fn main() {
    let x = Array2::from_shape_fn((2000, 1000), |(i, j)| ((i * 7 + j * 13) % 101) as f64);
    let v = x.slice(s![.., ..500]);
    let run = FusedRunner::compile_text("sum(x, axis=1)")
        .unwrap()
        .with_threads(1);
    let time = |f: &dyn Fn()| {
        f();
        let reps = 200;
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        t.elapsed().as_secs_f64() / reps as f64 * 1e6
    };
    let in_place = time(&|| {
        run.run(&[("x", v.into())]).unwrap();
    });
    let copied = time(&|| {
        let c = v.to_owned();
        run.run(&[("x", (&c).into())]).unwrap();
    });
    println!(
        "in place {in_place:.1} us, copy first {copied:.1} us, ratio {:.2}",
        copied / in_place
    );
}
