//! The JIT against hand-written Rust and unfused ndarray, single thread, f64, side by side in one
//! process: horner, axpy and sumsq over N, compile latency, cache-hit latency, and the fixed cost of a
//! call at N = 100, and the ndarray front end's cached `fuse` call. `cargo bench --bench jit`; BENCHMARKS.md records a run.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use kiln::kiln_ir::PlanOptions;
use kiln::{ArrayArg, Float, FusedRunner, Output};
use kiln_cli::bench::baseline;
use kiln_cli::bench::kernels::{Inputs, Kernel, ndarray_variant};
use ndarray::{Array1, ArrayD, arr0};
use std::hint::black_box;
use std::time::Duration;

struct Case {
    inputs: Inputs<f64>,
    scalars: Vec<(&'static str, ArrayD<f64>)>,
}

impl Case {
    fn new(n: usize) -> Case {
        let inputs = Inputs::<f64>::new(n).expect("the benchmark's inputs fit in memory");
        let scalars = [("a", inputs.a), ("b", inputs.b), ("c", inputs.c), ("d", inputs.d)]
            .into_iter()
            .map(|(name, v)| (name, arr0(v).into_dyn()))
            .collect();
        Case { inputs, scalars }
    }

    fn args(&self) -> Vec<(&str, ArrayArg<'_>)> {
        let mut args: Vec<(&str, ArrayArg<'_>)> =
            vec![("x", (&self.inputs.x).into()), ("y", (&self.inputs.y).into())];
        args.extend(self.scalars.iter().map(|(n, v)| (*n, v.into())));
        args
    }
}

fn seed_kernel(c: &mut Criterion, kernel: Kernel, ns: &[usize]) {
    let mut group = c.benchmark_group(kernel.name());
    group
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(2))
        .sample_size(20);
    for &n in ns {
        let case = Case::new(n);
        let args = case.args();
        group.throughput(Throughput::Elements(n as u64));
        let mut out = Array1::<f64>::zeros(if kernel.reduces() { 1 } else { n });
        for backend in ["jit", "jit-scalar"] {
            let runner = FusedRunner::compile_text(kernel.expr())
                .unwrap()
                .with_backend(kiln::backend_by_name(backend).unwrap())
                .with_threads(1);
            let variant = if backend == "jit" {
                "kiln-simd"
            } else {
                "kiln-scalar"
            };
            group.bench_with_input(BenchmarkId::new(variant, n), &n, |b, _| {
                if kernel.reduces() {
                    b.iter(|| black_box(runner.run(&args).unwrap()))
                } else {
                    b.iter(|| runner.run_into(&args, out.view_mut()).unwrap())
                }
            });
        }
        group.bench_with_input(BenchmarkId::new("rust-loop", n), &n, |b, _| {
            b.iter(|| {
                kiln_cli::bench::kernels::loop_variant(kernel, &case.inputs, out.as_slice_mut().unwrap())
            })
        });
        group.bench_with_input(BenchmarkId::new("ndarray", n), &n, |b, _| {
            b.iter(|| black_box(ndarray_variant(kernel, &case.inputs)))
        });
    }
    group.finish();
}

fn horner(c: &mut Criterion) {
    seed_kernel(c, Kernel::Horner, &[10_000, 1_000_000, 10_000_000]);
}

fn axpy(c: &mut Criterion) {
    seed_kernel(c, Kernel::Axpy, &[1_000_000, 10_000_000]);
}

fn sumsq(c: &mut Criterion) {
    let mut group = c.benchmark_group("sumsq-strict");
    let case = Case::new(1_000_000);
    let x = case.inputs.x.as_slice().unwrap();
    group
        .throughput(Throughput::Elements(x.len() as u64))
        .sample_size(30);
    group.bench_function("strict-iter-sum", |b| {
        b.iter(|| black_box(x.iter().map(|v| v * v).sum::<f64>()))
    });
    group.bench_function("avx2-strict-loop", |b| b.iter(|| black_box(baseline::sumsq(x))));
    group.finish();
    seed_kernel(c, Kernel::Sumsq, &[1_000_000]);
}

/// Codegen of a kernel not in any cache; a cache hit; the whole call at N = 100.
fn latency(c: &mut Criterion) {
    let mut group = c.benchmark_group("latency");
    let case = Case::new(1000);
    let args = case.args();
    let runner = FusedRunner::compile_text(Kernel::Horner.expr()).unwrap();
    let (kernel, plan) = runner.explain(&args).unwrap();
    let schedule = kiln_jit::Schedule::for_kernel(&kernel);
    group.bench_function("compile-new-horner", |b| {
        b.iter(|| {
            let key = kiln_jit::KernelKey::new(&kernel, &plan, schedule).unwrap();
            black_box(kiln_jit::CompiledKernel::compile_uncached(key).unwrap())
        })
    });
    let expr = kiln::text::parse(Kernel::Horner.expr()).unwrap();
    runner.prepare(&args).unwrap();
    group.bench_function("compile-cached-horner", |b| {
        b.iter(|| {
            let r = FusedRunner::compile(&expr).unwrap();
            r.prepare(&args).unwrap();
            black_box(r)
        })
    });
    let small = Case::new(100);
    let small_args = small.args();
    let axpy = FusedRunner::compile_text(Kernel::Axpy.expr())
        .unwrap()
        .with_plan_options(PlanOptions::default());
    axpy.run(&small_args).unwrap();
    group.bench_function("run-axpy-n100-allocating", |b| {
        b.iter(|| black_box::<Output>(axpy.run(&small_args).unwrap()))
    });
    group.finish();
}

/// The ndarray front end's `fuse` at N = 100, where the call path is all there is: the run of a
/// prepared runner (the floor), `fuse` compiling at every call (what it did before the call-site
/// cache: lower, look the kernel up, plan, run) and the cached `fuse`, for one input and for a tuple.
fn fuse_call(c: &mut Criterion) {
    use kiln::{Expr, FuseAllExt, FuseExt};
    let mut group = c.benchmark_group("fuse-call");
    let small = Case::new(100);
    let (x, y) = (&small.inputs.x, &small.inputs.y);
    let one = |x: Expr| &x * 2.5 + 1.0;
    let runner = FusedRunner::compile(&one(Expr::input("x0"))).unwrap();
    let args = [("x0", ArrayArg::from(x))];
    runner.run(&args).unwrap();
    group.bench_function("run-n100", |b| {
        b.iter(|| black_box::<Output>(runner.run(&args).unwrap()))
    });
    group.bench_function("fuse-compiling-n100", |b| {
        b.iter(|| {
            let r = FusedRunner::compile(&one(Expr::input("x0"))).unwrap();
            let out = f64::from_output(r.run(&args).unwrap()).unwrap();
            black_box(out.into_dimensionality::<ndarray::Ix1>().unwrap())
        })
    });
    group.bench_function("fuse-cached-n100", |b| b.iter(|| black_box(x.fuse(one).unwrap())));
    let two = |(x, y): (Expr, Expr)| 2.5 * &x + y;
    let runner2 = FusedRunner::compile(&two((Expr::input("x0"), Expr::input("x1")))).unwrap();
    let args2 = [("x0", ArrayArg::from(x)), ("x1", ArrayArg::from(y))];
    runner2.run(&args2).unwrap();
    group.bench_function("run-axpy-n100", |b| {
        b.iter(|| black_box::<Output>(runner2.run(&args2).unwrap()))
    });
    group.bench_function("fuse-all-cached-axpy-n100", |b| {
        b.iter(|| black_box((x, y).fuse_all(two).unwrap()))
    });
    group.finish();
}

/// The prepared positional handle at N = 100 (`FusedRunner::prepared`, then `Prepared::run_into`)
/// against the unfused ndarray expression, for axpy, horner and sumsq (issue 12: at most 2x).
fn prepared_call(c: &mut Criterion) {
    let mut group = c.benchmark_group("prepared");
    let case = Case::new(100);
    let args = case.args();
    for kernel in [Kernel::Axpy, Kernel::Horner, Kernel::Sumsq] {
        let runner = FusedRunner::compile_text(kernel.expr()).unwrap();
        let h = runner.prepared(&args).unwrap();
        let positional: Vec<ArrayArg<'_>> = args.iter().map(|(_, a)| a.clone()).collect();
        let name = kernel.name();
        let slices: Vec<&[f64]> = args
            .iter()
            .map(|(_, a)| match a {
                ArrayArg::F64(v) => v.to_slice().unwrap(),
                _ => unreachable!("the bench's inputs are f64"),
            })
            .collect();
        let mut flat = vec![0.0; h.output_shape().iter().product()];
        group.bench_function(format!("{name}-prepared-slices-n100"), |b| {
            b.iter(|| h.run_slices(black_box(&slices), &mut flat).unwrap())
        });
        if kernel.reduces() {
            let mut out = ndarray::Array0::<f64>::zeros(());
            group.bench_function(format!("{name}-prepared-n100"), |b| {
                b.iter(|| h.run_into(black_box(&positional), out.view_mut()).unwrap())
            });
        } else {
            let mut out = Array1::<f64>::zeros(100);
            group.bench_function(format!("{name}-prepared-n100"), |b| {
                b.iter(|| h.run_into(black_box(&positional), out.view_mut()).unwrap())
            });
        }
        group.bench_function(format!("{name}-run-into-by-name-n100"), |b| {
            let mut out = Array1::<f64>::zeros(100);
            b.iter(|| {
                if kernel.reduces() {
                    black_box(runner.run(&args).unwrap());
                } else {
                    runner.run_into(&args, out.view_mut()).unwrap()
                }
            })
        });
        group.bench_function(format!("{name}-ndarray-n100"), |b| {
            b.iter(|| black_box(ndarray_variant(kernel, black_box(&case.inputs))))
        });
    }
    group.finish();
}

/// The particle step at n = 64 (issue 12: at most 2x the plain in-place `Zip` loop): one prepared
/// call of a kernel of two outputs that updates `p` and `v` in place (`Prepared::update`), the same
/// handle's `run_slices_many` into two other buffers, and the plain loop.
fn particle_step(c: &mut Criterion) {
    let mut group = c.benchmark_group("particle");
    let n = 64;
    let p0 = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
    let v0 = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
    let (dt, g) = (ndarray::arr0(0.001), ndarray::arr0(-9.81));
    let bind = [
        ("p", (&p0).into()),
        ("v", (&v0).into()),
        ("dt", (&dt).into()),
        ("g", (&g).into()),
    ];
    let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt").unwrap();
    let h = step.prepared_update(&bind, &["p", "v"]).unwrap();
    let (dts, gs) = (dt.as_slice().unwrap(), g.as_slice().unwrap());
    let (mut p, mut v) = (p0.to_vec(), v0.to_vec());
    group.bench_function("prepared-update-in-place-n64", |b| {
        b.iter(|| {
            h.update(&mut [&mut p[..], &mut v[..]], black_box(&[dts, gs]))
                .unwrap()
        })
    });
    let m = step.prepared(&bind).unwrap();
    let (mut p2, mut v2) = (vec![0.0; n], vec![0.0; n]);
    let ins = [p0.as_slice().unwrap(), v0.as_slice().unwrap(), dts, gs];
    group.bench_function("prepared-run-slices-many-n64", |b| {
        b.iter(|| {
            m.run_slices_many(black_box(&ins), &mut [&mut p2[..], &mut v2[..]])
                .unwrap()
        })
    });
    let (mut pp, mut pv) = (p0.clone(), v0.clone());
    let (dtv, gv) = (black_box(0.001), black_box(-9.81));
    group.bench_function("plain-zip-in-place-n64", |b| {
        b.iter(|| {
            ndarray::Zip::from(&mut pp).and(&mut pv).for_each(|p, v| {
                *p += *v * dtv;
                *v = *v * 0.99 + gv * dtv;
            })
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    horner,
    axpy,
    sumsq,
    latency,
    fuse_call,
    prepared_call,
    particle_step
);
criterion_main!(benches);
