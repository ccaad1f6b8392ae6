//! Vectorised math against hand-written Rust loops over std (glibc for f64, the platform's f32
//! functions), f64 and f32, one thread, N = 1e6, results written into a preallocated array:
//!
//! - `logistic`: `1/(1+exp(-x))`;
//! - `sincos_sqrt`: `sin(x)*cos(x) + sqrt(abs(x))`;
//! - `exp`, `log`, `sin`, `cos`, `erf`, `erfc` alone, f64 and f32.
//!
//! `cargo bench --bench math`. Each group has a `kiln` and a `rust-loop` variant; the ratio of their
//! medians is the speed-up (BENCHMARKS.md records a run).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use kiln::{FusedRunner, kiln_ir::Real};
use ndarray::Array1;
use std::hint::black_box;
use std::time::Duration;

const N: usize = 1_000_000;

/// Deterministic inputs uniform in [lo, hi).
fn inputs<T: Real>(lo: f64, hi: f64) -> Array1<T> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    Array1::from_iter((0..N).map(|_| {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        let u = (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64;
        T::from_f64(lo + (hi - lo) * u)
    }))
}

fn bench<T: kiln::Float + Default>(
    c: &mut Criterion,
    name: &str,
    expr: &str,
    (lo, hi): (f64, f64),
    hand: fn(&[T], &mut [T]),
) {
    let mut group = c.benchmark_group(name);
    group
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20)
        .throughput(Throughput::Elements(N as u64));
    let x = inputs::<T>(lo, hi);
    let mut out = Array1::<T>::default(N);
    let runner = FusedRunner::compile_text(expr).unwrap().with_threads(1);
    let args = [("x", (&x).into())];
    runner.run_into(&args, out.view_mut()).unwrap();
    let dtype = T::DTYPE.name();
    group.bench_function(BenchmarkId::new("kiln", dtype), |b| {
        b.iter(|| runner.run_into(&args, out.view_mut()).unwrap())
    });
    let xs = x.as_slice().unwrap();
    group.bench_function(BenchmarkId::new("rust-loop", dtype), |b| {
        b.iter(|| hand(black_box(xs), out.as_slice_mut().unwrap()))
    });
    group.finish();
}

fn composite(c: &mut Criterion) {
    bench::<f64>(c, "logistic", "1/(1+exp(-x))", (-10.0, 10.0), |x, o| {
        for (o, &x) in o.iter_mut().zip(x) {
            *o = 1.0 / (1.0 + (-x).exp());
        }
    });
    bench::<f64>(
        c,
        "sincos_sqrt",
        "sin(x)*cos(x) + sqrt(abs(x))",
        (-10.0, 10.0),
        |x, o| {
            for (o, &x) in o.iter_mut().zip(x) {
                *o = x.sin() * x.cos() + x.abs().sqrt();
            }
        },
    );
}

fn single(c: &mut Criterion) {
    bench::<f64>(c, "exp", "exp(x)", (-10.0, 10.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = x.exp())
    });
    bench::<f32>(c, "exp", "exp(x)", (-10.0, 10.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = x.exp())
    });
    bench::<f64>(c, "log", "log(x)", (0.0, 100.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = x.ln())
    });
    bench::<f32>(c, "log", "log(x)", (0.0, 100.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = x.ln())
    });
    bench::<f64>(c, "sin", "sin(x)", (-10.0, 10.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = x.sin())
    });
    bench::<f32>(c, "sin", "sin(x)", (-10.0, 10.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = x.sin())
    });
    bench::<f64>(c, "cos", "cos(x)", (-10.0, 10.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = x.cos())
    });
    bench::<f32>(c, "cos", "cos(x)", (-10.0, 10.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = x.cos())
    });
    // erf and erfc: the loop calls the `libm` crate's, as the interpreter and Black-Scholes' plain
    // Rust version do (std has no stable erf)
    bench::<f64>(c, "erf", "erf(x)", (-4.0, 4.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = Real::erf(x))
    });
    bench::<f32>(c, "erf", "erf(x)", (-4.0, 4.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = Real::erf(x))
    });
    bench::<f64>(c, "erfc", "erfc(x)", (-4.0, 4.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = Real::erfc(x))
    });
    bench::<f32>(c, "erfc", "erfc(x)", (-4.0, 4.0), |x, o| {
        o.iter_mut().zip(x).for_each(|(o, &x)| *o = Real::erfc(x))
    });
}

criterion_group!(math, composite, single);
criterion_main!(math);
