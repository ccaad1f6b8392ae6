//! ns per element of each wide routine at each level over an in-cache slice of 4,096 elements (the
//! best of 7 rounds of 400 passes, each pass a copy of the input and the routine in place), to
//! compare the routines' own cost apart from a kernel's loads, stores and staging (a routine of two
//! arguments, `Binary`, with a second slice of values in [0.5, 3]):
//! `cargo run --release -p kiln-jit --example routine_speed [routine names]`. Both levels must be on
//! the host (an AVX-512 one).
use kiln_jit::wide::{Binary, Level, Routine, WideElem};
use kiln_jit::{apply_wide, apply_wide_binary};
use std::time::Instant;

/// ns per element of `run` over a copy of `src` (the best of 7 rounds of 400 passes, each pass a
/// copy of the input and the routine in place).
fn best_of<T: Copy>(src: &[T], mut run: impl FnMut(&mut [T])) -> f64 {
    let mut xs = src.to_vec();
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let reps = 400;
        let t = Instant::now();
        for _ in 0..reps {
            xs.copy_from_slice(src);
            run(&mut xs);
        }
        let ns = t.elapsed().as_nanos() as f64 / (reps * src.len()) as f64;
        best = best.min(ns);
    }
    best
}

fn time<T: WideElem + Copy>(r: Routine, level: Level, src: &[T]) -> f64 {
    best_of(src, |xs| apply_wide(r, level, xs).unwrap())
}

fn time_binary<T: WideElem + Copy>(r: Binary, level: Level, src: &[T], ys: &[T]) -> f64 {
    best_of(src, |xs| apply_wide_binary(r, level, xs, ys).unwrap())
}

fn main() {
    let n = 4096;
    let filter: Vec<String> = std::env::args().skip(1).collect();
    let x64: Vec<f64> = (0..n).map(|i| 0.5 + (i as f64) * 0.37 % 9.0).collect();
    let x32: Vec<f32> = x64.iter().map(|&v| v as f32).collect();
    let small64: Vec<f64> = (0..n).map(|i| -0.9 + (i as f64) * 1.8 / n as f64).collect();
    let small32: Vec<f32> = small64.iter().map(|&v| v as f32).collect();
    for r in Routine::ALL {
        let name = format!("{r:?}");
        if !filter.is_empty() && !filter.iter().any(|f| f.eq_ignore_ascii_case(&name)) {
            continue;
        }
        let unit = matches!(
            r,
            Routine::Arcsin | Routine::Arccos | Routine::Arctanh | Routine::Log1p
        );
        let (a, b) = if unit { (&small64, &small32) } else { (&x64, &x32) };
        println!(
            "{name:8} f64 avx512 {:.3} avx2 {:.3}  f32 avx512 {:.3} avx2 {:.3}",
            time(r, Level::Avx512, a),
            time(r, Level::Avx2, a),
            time(r, Level::Avx512, b),
            time(r, Level::Avx2, b)
        );
    }
    let y64: Vec<f64> = (0..n).map(|i| 0.5 + (i as f64) * 0.61 % 2.5).collect();
    let y32: Vec<f32> = y64.iter().map(|&v| v as f32).collect();
    for r in Binary::ALL {
        let name = format!("{r:?}");
        if !filter.is_empty() && !filter.iter().any(|f| f.eq_ignore_ascii_case(&name)) {
            continue;
        }
        println!(
            "{name:8} f64 avx512 {:.3} avx2 {:.3}  f32 avx512 {:.3} avx2 {:.3}",
            time_binary(r, Level::Avx512, &x64, &y64),
            time_binary(r, Level::Avx2, &x64, &y64),
            time_binary(r, Level::Avx512, &x32, &y32),
            time_binary(r, Level::Avx2, &x32, &y32)
        );
    }
}
