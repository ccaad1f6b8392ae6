//! Integer kernels compiled in their own types, timed on the `jit` (SIMD), `jit-scalar`
//! and `interp` backends, beside the unfused ndarray expression where there is one (BENCHMARKS.md
//! before 0b97b4d, "Integer kernels compiled"). Every variant's result is checked against the interpreter's first.
//!
//! `cargo run --release --example int_kernels -- [threads] [n]` (defaults: 1 thread, n = 1e6).
//! Prints the best of several runs in ns per element.

use kiln::{FusedRunner, Output};
use ndarray::{Array1, Array2, Zip};
use std::time::Instant;

/// An expression, the types it runs on, and its named inputs.
type Kernel<'a> = (
    &'static str,
    &'static str,
    Vec<(&'static str, kiln::ArrayArg<'a>)>,
);

/// The best of `reps` runs of `f`, in ns per element of `n`.
fn best(n: usize, reps: usize, mut f: impl FnMut()) -> f64 {
    let mut b = f64::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        f();
        b = b.min(t.elapsed().as_secs_f64());
    }
    b * 1e9 / n as f64
}

fn main() {
    let mut args = std::env::args().skip(1);
    let threads: usize = args.next().map_or(1, |s| s.parse().expect("threads"));
    let n: usize = args
        .next()
        .map_or(1_000_000, |s| s.parse::<f64>().expect("n") as usize);
    let side = (n as f64).sqrt() as usize;
    let i: Array1<i32> = (0..n as i64)
        .map(|k| ((k * 2_654_435_761) % 2000 - 1000) as i32)
        .collect();
    let j: Array1<i32> = (0..n as i64)
        .map(|k| ((k * 40_503) % 2000 - 1000) as i32)
        .collect();
    let jz: Array1<i32> = j.mapv(|v| v | 1);
    let k: Array1<i64> = i.mapv(|v| v as i64 * 1_000_003);
    let l: Array1<i64> = j.mapv(|v| v as i64 * 7_919);
    let p: Array1<bool> = (0..n).map(|x| (x * 7) % 3 == 0).collect();
    let m: Array2<i32> =
        Array2::from_shape_fn((side, side), |(r, c)| ((r * 31 + c * 17) % 1000) as i32 - 500);
    let kernels: Vec<Kernel<'_>> = vec![
        (
            "(i*3 + j) % 7",
            "int32",
            vec![("i", (&i).into()), ("j", (&j).into())],
        ),
        (
            "sum(where(p, k, 0))",
            "int64/bool",
            vec![("p", (&p).into()), ("k", (&k).into())],
        ),
        (
            "sum(where(p, i, 0))",
            "int32/bool",
            vec![("p", (&p).into()), ("i", (&i).into())],
        ),
        ("k * 3 + l", "int64", vec![("k", (&k).into()), ("l", (&l).into())]),
        ("i // j", "int32", vec![("i", (&i).into()), ("j", (&jz).into())]),
        ("k // 7", "int64", vec![("k", (&k).into())]),
        (
            "(i << 3) ^ (j >> 1)",
            "int32",
            vec![("i", (&i).into()), ("j", (&j).into())],
        ),
        (
            "float64(i) * 0.5 + k",
            "int32/int64",
            vec![("i", (&i).into()), ("k", (&k).into())],
        ),
        ("mean(i)", "int32", vec![("i", (&i).into())]),
        ("cumsum(i)", "int32", vec![("i", (&i).into())]),
        ("sum(m, axis=0)", "int32", vec![("m", (&m).into())]),
        ("sum(m, axis=1)", "int32", vec![("m", (&m).into())]),
        ("argmax(k)", "int64", vec![("k", (&k).into())]),
        ("sin(i * 0.001)", "int32", vec![("i", (&i).into())]),
    ];
    println!("n = {n}, threads = {threads}; ns per element, best run");
    println!("| kernel | types | jit | jit-scalar | interp |");
    println!("| --- | --- | --- | --- | --- |");
    for (expr, types, inputs) in &kernels {
        let runner = |b: &str| {
            FusedRunner::compile_text(expr)
                .unwrap()
                .with_backend(kiln::backend_by_name(b).unwrap())
                .with_threads(threads)
        };
        let oracle: Output = runner("interp").run(inputs).unwrap();
        let mut row = format!("| `{expr}` | {types} |");
        for (b, reps) in [("jit", 30), ("jit-scalar", 30), ("interp", 2)] {
            let r = runner(b);
            let out = r.run(inputs).unwrap();
            assert_eq!(
                format!("{out:?}").len(),
                format!("{oracle:?}").len(),
                "{expr} on {b}"
            );
            let t = best(n, reps, || {
                std::hint::black_box(r.run(inputs).unwrap());
            });
            row += &format!(" {t:.3} |");
        }
        println!("{row}");
    }
    let t = best(n, 30, || {
        std::hint::black_box((&i * 3 + &j).mapv(|v| v.rem_euclid(7)));
    });
    println!("ndarray `(&i * 3 + &j).mapv(|v| v.rem_euclid(7))`: {t:.3}");
    let t = best(n, 30, || {
        let w = Zip::from(&p).and(&k).map_collect(|&c, &x| if c { x } else { 0 });
        std::hint::black_box(w.sum());
    });
    println!("ndarray `Zip::from(&p).and(&k).map_collect(..).sum()`: {t:.3}");
    let mut out = Array1::<i32>::zeros(n);
    let t = best(n, 30, || {
        Zip::from(&mut out)
            .and(&i)
            .and(&j)
            .for_each(|o, &a, &b| *o = a.wrapping_mul(3).wrapping_add(b).rem_euclid(7));
        std::hint::black_box(&out);
    });
    println!("hand loop into a reused output, (i*3 + j) % 7: {t:.3}");
}
