//! Threads and the reduction family: `cargo bench --bench reduce`.
//!
//! - `threads/*`: 2 threads against 1 (sum(x*x) at 1e7, logistic at 1e6), and the threaded runner
//!   against 1 thread at 1e3 (below the threshold: it must not be slower);
//! - `threshold/*`: axpy and sum(x*x) at 2^14..2^19 points on 1 and 2 threads with the threshold
//!   forced to 0, where the second thread starts to pay;
//! - `axis/*`: row sums (axis 1, 1000 columns) and column sums (axis 0) at 1e6 elements against a
//!   hand-written loop with 8 accumulators;
//! - `alloc/*`: a 1e7-element map into a freshly allocated output against a reused one.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use kiln::{ArrayArg, FusedRunner};
use ndarray::{Array1, Array2, ArrayD, IxDyn};
use std::hint::black_box;
use std::time::Duration;

fn data(n: usize) -> ArrayD<f64> {
    ArrayD::from_shape_fn(IxDyn(&[n]), |i| ((i[0] * 7919) % 1000) as f64 / 500.0 - 1.0)
}

fn runner(expr: &str, threads: usize) -> FusedRunner {
    FusedRunner::compile_text(expr).unwrap().with_threads(threads)
}

fn threads(c: &mut Criterion) {
    let mut g = c.benchmark_group("threads");
    g.warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    let cases: [(&str, &str, usize, &[usize]); 3] = [
        ("sumsq", "sum(x*x)", 10_000_000, &[1, 2]),
        ("logistic", "1/(1+exp(-x))", 1_000_000, &[1, 2]),
        ("logistic", "1/(1+exp(-x))", 1_000, &[1, 0]),
    ];
    for (name, expr, n, counts) in cases {
        let x = data(n);
        let args: Vec<(&str, ArrayArg<'_>)> = vec![("x", (&x).into())];
        g.throughput(Throughput::Elements(n as u64));
        let reduces = expr.starts_with("sum");
        let mut out = ArrayD::<f64>::zeros(IxDyn(&[n]));
        for &t in counts {
            // 0: the default, every core
            let r = if t == 0 {
                FusedRunner::compile_text(expr).unwrap()
            } else {
                runner(expr, t)
            };
            r.prepare(&args).unwrap();
            let label = if t == 0 {
                "default".to_string()
            } else {
                format!("{t}t")
            };
            g.bench_function(BenchmarkId::new(format!("{name}/{label}"), n), |b| {
                if reduces {
                    b.iter(|| black_box(r.run(&args).unwrap()))
                } else {
                    b.iter(|| r.run_into(&args, out.view_mut()).unwrap())
                }
            });
        }
    }
    g.finish();
}

fn threshold(c: &mut Criterion) {
    let mut g = c.benchmark_group("threshold");
    g.warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(800))
        .sample_size(20);
    for (name, expr) in [("axpy", "2.5*x + y"), ("sumsq", "sum(x*x)")] {
        for p in [14, 15, 16, 17, 18, 19] {
            let n = 1usize << p;
            let (x, y) = (data(n), data(n));
            let args: Vec<(&str, ArrayArg<'_>)> = vec![("x", (&x).into()), ("y", (&y).into())];
            let mut out = ArrayD::<f64>::zeros(IxDyn(&[n]));
            for t in [1, 2] {
                let r = runner(expr, t).with_threshold(0);
                r.prepare(&args).unwrap();
                g.bench_function(BenchmarkId::new(format!("{name}/{t}t"), n), |b| {
                    if name == "sumsq" {
                        b.iter(|| black_box(r.run(&args).unwrap()))
                    } else {
                        b.iter(|| r.run_into(&args, out.view_mut()).unwrap())
                    }
                });
            }
        }
    }
    g.finish();
}

/// Row sums with 8 independent accumulators per row.
fn rows_loop(x: &[f64], cols: usize, out: &mut [f64]) {
    for (row, o) in x.chunks_exact(cols).zip(out.iter_mut()) {
        let mut acc = [0.0f64; 8];
        let mut it = row.chunks_exact(8);
        for c in &mut it {
            for k in 0..8 {
                acc[k] += c[k];
            }
        }
        let mut s = it.remainder().iter().sum::<f64>();
        for a in acc {
            s += a;
        }
        *o = s;
    }
}

/// Column sums: each row added into the output row (8 columns at a time).
fn cols_loop(x: &[f64], cols: usize, out: &mut [f64]) {
    out.fill(0.0);
    for row in x.chunks_exact(cols) {
        let mut o8 = out.chunks_exact_mut(8);
        let mut r8 = row.chunks_exact(8);
        for (o, r) in (&mut o8).zip(&mut r8) {
            for k in 0..8 {
                o[k] += r[k];
            }
        }
        for (o, r) in o8.into_remainder().iter_mut().zip(r8.remainder()) {
            *o += r;
        }
    }
}

fn axis(c: &mut Criterion) {
    let mut g = c.benchmark_group("axis");
    g.warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(30);
    let (rows, cols) = (1000, 1000);
    let x = Array2::from_shape_fn((rows, cols), |(i, j)| ((i * 31 + j * 7) % 97) as f64 / 97.0);
    let slice = x.as_slice().unwrap();
    let args: Vec<(&str, ArrayArg<'_>)> = vec![("x", (&x).into())];
    g.throughput(Throughput::Elements((rows * cols) as u64));
    for (name, expr) in [("rows", "sum(x, axis=1)"), ("cols", "sum(x, axis=0)")] {
        let r = runner(expr, 1);
        r.prepare(&args).unwrap();
        let mut out = Array1::<f64>::zeros(if name == "rows" { rows } else { cols });
        g.bench_function(format!("{name}/kiln-1t"), |b| {
            b.iter(|| r.run_into(&args, out.view_mut()).unwrap())
        });
        let mut out = vec![0.0; rows.max(cols)];
        g.bench_function(format!("{name}/loop-8acc"), |b| {
            b.iter(|| {
                if name == "rows" {
                    rows_loop(slice, cols, &mut out[..rows])
                } else {
                    cols_loop(slice, cols, &mut out[..cols])
                }
                black_box(&out);
            })
        });
    }
    g.finish();
}

fn alloc(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc");
    g.warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(3))
        .sample_size(20);
    let n = 10_000_000;
    let x = data(n);
    let args: Vec<(&str, ArrayArg<'_>)> = vec![("x", (&x).into())];
    g.throughput(Throughput::Elements(n as u64));
    for t in [1, 2] {
        let r = runner("2.5*x + 1", t);
        r.prepare(&args).unwrap();
        let mut out = ArrayD::<f64>::zeros(IxDyn(&[n]));
        g.bench_function(format!("reused/{t}t"), |b| {
            b.iter(|| r.run_into(&args, out.view_mut()).unwrap())
        });
        g.bench_function(format!("fresh/{t}t"), |b| {
            b.iter(|| black_box(r.run(&args).unwrap()))
        });
    }
    g.finish();
}

criterion_group!(benches, threads, threshold, axis, alloc);
criterion_main!(benches);
