//! Scans and the prefix-scan rewrite: `cargo bench --bench scan`.
//!
//! - `cumsum/*`: cumsum of 1e6 f64 (and f32) through kiln (the JIT's in-register prefix with a
//!   carried state, one thread) into a reused output (`run_into`) against a hand-written sequential
//!   Rust loop into a reused output (target: kiln at least 1.3x faster); `kiln_alloc` is `run`, which
//!   allocates its result each call;
//! - `cumsum_axis0/*`: cumsum along the outer axis of a 1000x1000 array (vectorised across columns),
//!   into a reused output;
//! - `triangle/*`: the triangular-mask contraction `sum(where(i <= o, x[i], 0))` at n = 4096 with the
//!   rewrite (an O(n) scan) and without (the O(n²) nest) (target: at least 100x).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use kiln::{ArrayArg, FusedRunner, Profile};
use ndarray::{ArrayD, IxDyn};
use std::hint::black_box;
use std::time::Duration;

fn data(n: usize) -> ArrayD<f64> {
    ArrayD::from_shape_fn(IxDyn(&[n]), |i| ((i[0] * 7919) % 1000) as f64 / 500.0 - 1.0)
}

#[inline(never)]
fn hand_cumsum<T: Copy + std::ops::Add<Output = T>>(x: &[T], y: &mut [T], zero: T) {
    let mut s = zero;
    for (xi, yi) in x.iter().zip(y.iter_mut()) {
        s = s + *xi;
        *yi = s;
    }
}

fn cumsum(c: &mut Criterion) {
    let mut g = c.benchmark_group("cumsum");
    g.warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    let n = 1_000_000;
    let x = data(n);
    let x32 = x.mapv(|v| v as f32);
    g.throughput(Throughput::Elements(n as u64));
    let r = FusedRunner::compile_text("cumsum(x)").unwrap().with_threads(1);
    // kiln/*: run_into a reused output, as the hand loop; kiln_alloc/*: run, a fresh result each call
    let mut out = ArrayD::<f64>::zeros(IxDyn(&[n]));
    let args = vec![("x", ArrayArg::from(&x))];
    r.prepare(&args).unwrap();
    g.bench_function(BenchmarkId::new("kiln/f64", n), |b| {
        b.iter(|| r.run_into(black_box(&args), out.view_mut()).unwrap())
    });
    let mut out32 = ArrayD::<f32>::zeros(IxDyn(&[n]));
    let args32 = vec![("x", ArrayArg::from(&x32))];
    r.prepare(&args32).unwrap();
    g.bench_function(BenchmarkId::new("kiln/f32", n), |b| {
        b.iter(|| r.run_into(black_box(&args32), out32.view_mut()).unwrap())
    });
    for (label, args) in [("f64", &args), ("f32", &args32)] {
        g.bench_function(BenchmarkId::new(format!("kiln_alloc/{label}"), n), |b| {
            b.iter(|| black_box(r.run(args).unwrap()))
        });
    }
    let xs = x.as_slice().unwrap();
    let mut y = vec![0.0f64; n];
    g.bench_function(BenchmarkId::new("hand_loop/f64", n), |b| {
        b.iter(|| hand_cumsum(black_box(xs), &mut y, 0.0))
    });
    let xs32 = x32.as_slice().unwrap();
    let mut y32 = vec![0.0f32; n];
    g.bench_function(BenchmarkId::new("hand_loop/f32", n), |b| {
        b.iter(|| hand_cumsum(black_box(xs32), &mut y32, 0.0))
    });
    g.finish();

    let mut g = c.benchmark_group("cumsum_axis0");
    g.warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    let m = ArrayD::from_shape_fn(IxDyn(&[1000, 1000]), |i| ((i[0] * 31 + i[1]) % 97) as f64 / 50.0);
    let r = FusedRunner::compile_text("cumsum(x, axis=0)")
        .unwrap()
        .with_threads(1);
    let args = vec![("x", ArrayArg::from(&m))];
    r.prepare(&args).unwrap();
    g.throughput(Throughput::Elements(1_000_000));
    let mut out = ArrayD::<f64>::zeros(IxDyn(&[1000, 1000]));
    g.bench_function("kiln/f64", |b| {
        b.iter(|| r.run_into(black_box(&args), out.view_mut()).unwrap())
    });
    g.finish();
}

fn triangle(c: &mut Criterion) {
    let mut g = c.benchmark_group("triangle");
    g.warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_secs(2))
        .sample_size(10);
    let n = 4096;
    let x = data(n);
    let args = vec![("x", ArrayArg::from(&x))];
    let expr = "sum(where(i <= o, x[i], 0), index=(i, o), axis=i)";
    for (label, profile) in [("rewrite", Profile::Approximate), ("composed", Profile::Default)] {
        let r = FusedRunner::compile_text(expr)
            .unwrap()
            .with_threads(1)
            .with_profile(profile);
        r.prepare(&args).unwrap();
        g.bench_function(BenchmarkId::new(label, n), |b| {
            b.iter(|| black_box(r.run(&args).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, cumsum, triangle);
criterion_main!(benches);
