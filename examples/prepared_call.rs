//! The prepared positional handle's call at N = 100 against the unfused ndarray expression (axpy):
//! `cargo run --release --example prepared_call` prints the minimum of 15 rounds of each.

use kiln::{ArrayArg, FusedRunner};
use ndarray::{Array1, arr0};
use std::hint::black_box;
use std::time::Instant;

fn min_ns(rounds: usize, iters: usize, mut f: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let t = Instant::now();
            for _ in 0..iters {
                f();
            }
            t.elapsed().as_nanos() as f64 / iters as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() -> kiln::Result<()> {
    let n = 100;
    let x = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
    let y = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
    let a = arr0(2.5);
    let runner = FusedRunner::compile_text("a*x + y")?;
    let h = runner.prepared(&[("a", (&a).into()), ("x", (&x).into()), ("y", (&y).into())])?;
    let args: [ArrayArg<'_>; 3] = [(&a).into(), (&x).into(), (&y).into()];
    let mut out = Array1::<f64>::zeros(n);
    h.run_into(&args, out.view_mut())?;
    assert_eq!(out, &x * 2.5 + &y);
    let prepared = min_ns(15, 20_000, || {
        h.run_into(black_box(&args), out.view_mut()).unwrap()
    });
    let (xs, ys, as_) = (
        x.as_slice().unwrap(),
        y.as_slice().unwrap(),
        a.as_slice().unwrap(),
    );
    let slices = [as_, xs, ys];
    let mut o2 = vec![0.0; n];
    let by_slice = min_ns(15, 20_000, || h.run_slices(black_box(&slices), &mut o2).unwrap());
    assert_eq!(o2, out.as_slice().unwrap());
    let plain = min_ns(15, 20_000, || {
        black_box(&x * black_box(2.5) + &y);
    });
    println!("direct: {}", h.is_direct());
    println!("prepared run_into, axpy n=100: {prepared:.0} ns");
    println!("prepared run_slices, axpy n=100: {by_slice:.0} ns");
    println!("ndarray `&x * a + &y`, n=100:  {plain:.0} ns");
    println!("ratio: {:.2}x", prepared / plain);
    Ok(())
}
