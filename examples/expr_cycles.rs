//! One expression of `x` over N points into a reused output on one thread, timed as the minimum over
//! SAMPLES samples of about 100 us each (on a busy shared machine the minimum is the time the code
//! takes when nothing else runs on its core, where a median still moves with the load):
//! `target/release/examples/expr_cycles '1/(1+exp(-x))' 10000 400 f64` prints ns per element of x
//! (`1000x1000` for a 2-D x). x is uniform in [-3, 3]. With a fifth argument `--calls`, SAMPLES
//! calls, untimed (for valgrind).

use kiln::{ArrayArg, FusedRunner};
use ndarray::Array1;
use std::hint::black_box;
use std::time::Instant;

fn main() -> kiln::Result<()> {
    let mut argv = std::env::args().skip(1);
    let text = argv.next().unwrap_or_else(|| "1/(1+exp(-x))".into());
    // N, or ROWSxCOLS for a 2-D x
    let shape: Vec<usize> = argv.next().map_or(vec![10_000], |s| {
        s.split('x')
            .map(|d| d.parse().expect("a count of points"))
            .collect()
    });
    let n: usize = shape.iter().product();
    let samples: usize = argv
        .next()
        .map_or(400, |s| s.parse().expect("a count of samples"));
    let f32 = argv.next().is_some_and(|d| d == "f32");
    let calls = argv.next().is_some_and(|c| c == "--calls");
    let runner = FusedRunner::compile_text(&text)?.with_threads(1);
    // a fixed pseudo-random sequence in [-3, 3]
    let mut s = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64 * 6.0 - 3.0
    };
    if f32 {
        let x = Array1::from_iter((0..n).map(|_| next() as f32))
            .into_shape_with_order(ndarray::IxDyn(&shape))
            .unwrap();
        run(&runner, ArrayArg::from(&x), x.as_slice().unwrap(), samples, calls)
    } else {
        let x = Array1::from_iter((0..n).map(|_| next()))
            .into_shape_with_order(ndarray::IxDyn(&shape))
            .unwrap();
        run(&runner, ArrayArg::from(&x), x.as_slice().unwrap(), samples, calls)
    }
}

fn run<T: kiln::Float>(
    runner: &FusedRunner,
    arg: ArrayArg<'_>,
    x: &[T],
    samples: usize,
    calls: bool,
) -> kiln::Result<()> {
    let h = runner.prepared(&[("x", arg)])?;
    let mut out = vec![T::from_f64(0.0); h.output_shape().iter().product()];
    h.run_slices(&[x], &mut out)?;
    if calls {
        for _ in 0..samples {
            h.run_slices(black_box(&[x]), &mut out)?;
        }
        black_box(&out);
        return Ok(());
    }
    let t = Instant::now();
    h.run_slices(&[x], &mut out)?;
    let reps = (100_000 / t.elapsed().as_nanos().max(1)).max(1) as usize;
    let mut best = f64::INFINITY;
    for _ in 0..samples {
        let t = Instant::now();
        for _ in 0..reps {
            h.run_slices(black_box(&[x]), &mut out)?;
        }
        // per point of x
        best = best.min(t.elapsed().as_nanos() as f64 / (reps * x.len()) as f64);
    }
    black_box(&out);
    println!("{best:.3}");
    Ok(())
}
