//! One-pass statistics against the two-pass plan, kernel time only: `cargo run --release --example
//! one_pass_stats [ROWSxCOLS]` (default 1000x1000, f32, one thread). Each program is timed as the
//! best of 15 rounds of 20 runs. The two-pass forms are written so that the sibling rewrite leaves
//! them alone (`abs(d)**2` is `d*d`), the plan `kiln explain` shows before the rewrite. (Softmax's
//! and logsumexp's statistics were merged too, and are two passes again: src/siblings.rs.)

use kiln::FusedRunner;
use ndarray::Array2;
use std::time::Instant;

fn main() -> kiln::Result<()> {
    let (rows, cols) = std::env::args()
        .nth(1)
        .and_then(|s| {
            let (r, c) = s.split_once('x')?;
            Some((r.parse().ok()?, c.parse().ok()?))
        })
        .unwrap_or((1000usize, 1000usize));
    let mut state = 1u64;
    let x = Array2::from_shape_fn((rows, cols), |_| {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64 * 20.0 - 10.0) as f32
    });
    let pairs = [
        (
            "var",
            "var(x, axis=1)",
            "mean(abs(x - mean(x, axis=1, keepdims=1))**2, axis=1)",
        ),
        (
            "layer norm",
            "(x - mean(x, axis=1, keepdims=1)) / sqrt(var(x, axis=1, keepdims=1) + 1e-5)",
            "(x - mean(x, axis=1, keepdims=1)) / sqrt(mean(abs(x - mean(x, axis=1, keepdims=1))**2, axis=1, keepdims=1) + 1e-5)",
        ),
    ];
    println!("{rows}x{cols} f32, one thread, best of 15 x 20 runs");
    for (name, one, two) in pairs {
        let time = |src: &str| -> kiln::Result<f64> {
            let r = FusedRunner::compile_text(src)?.with_threads(1);
            r.run(&[("x", (&x).into())])?;
            let mut best = f64::MAX;
            for _ in 0..15 {
                let t = Instant::now();
                for _ in 0..20 {
                    r.run(&[("x", (&x).into())])?;
                }
                best = best.min(t.elapsed().as_secs_f64() / 20.0);
            }
            Ok(best * 1e3)
        };
        let (a, b) = (time(one)?, time(two)?);
        println!(
            "{name:12} one pass {a:7.3} ms   two passes {b:7.3} ms   ratio {:.2}",
            b / a
        );
    }
    Ok(())
}
