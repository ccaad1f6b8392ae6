//! Complex kernels compiled (planar: each complex value the real and the imaginary parts of the
//! kernel's lanes of points, two float vectors),
//! timed on the `jit` and `interp` backends (run in turn, the median of each:
//! `support/alternate.rs`), beside a hand-written Rust loop over num-complex. Each kernel's
//! compiled result is checked against the interpreter's first (bit for bit, the scans too; the
//! sums' real parts within 1e-9; `abs`, `exp` and `sqrt`, within their ULP bounds, not here).
//!
//! `cargo run --release --example complex_kernels -- [n] [rounds]` (defaults: n = 1e6, 11 rounds).
//! Prints ns per element.

#[path = "support/alternate.rs"]
mod alternate;

use kiln::kiln_ir::num_complex::{Complex32, Complex64};
use kiln::{ArrayArg, FusedRunner};
use ndarray::{Array1, Zip};

/// An expression, its inputs' type, and its named inputs.
type Kernel<'a> = (&'static str, &'static str, Vec<(&'static str, ArrayArg<'a>)>);

fn main() {
    let mut args = std::env::args().skip(1);
    let n: usize = args
        .next()
        .map_or(1_000_000, |s| s.parse::<f64>().expect("n") as usize);
    let rounds: usize = args.next().map_or(11, |s| s.parse().expect("rounds"));
    let part = |k: usize, m: usize| ((k * m) % 2001) as f64 / 1000.0 - 1.0;
    let z: Array1<Complex64> = (0..n)
        .map(|k| Complex64::new(part(k, 7919), part(k, 104_729)))
        .collect();
    let w: Array1<Complex64> = (0..n)
        .map(|k| Complex64::new(part(k, 31), part(k, 613)))
        .collect();
    let narrow = |a: &Array1<Complex64>| a.mapv(|c| Complex32::new(c.re as f32, c.im as f32));
    let (z64, w64) = (narrow(&z), narrow(&w));
    let zw = || vec![("z", (&z).into()), ("w", (&w).into())];
    let kernels: Vec<Kernel<'_>> = vec![
        ("z*w + 1j", "complex128", zw()),
        (
            "z*w + 1j",
            "complex64",
            vec![("z", (&z64).into()), ("w", (&w64).into())],
        ),
        ("z / w", "complex128", zw()),
        ("abs(z)", "complex128", vec![("z", (&z).into())]),
        ("exp(z)", "complex128", vec![("z", (&z).into())]),
        ("sqrt(z)", "complex128", vec![("z", (&z).into())]),
        ("sum(z*w)", "complex128", zw()),
        ("sum(z*w, initial=1)", "complex128", zw()),
        ("cumsum(z)", "complex128", vec![("z", (&z).into())]),
        ("cumsum(z)", "complex64", vec![("z", (&z64).into())]),
        ("cumprod(z)", "complex128", vec![("z", (&z).into())]),
    ];
    println!("n = {n}, one thread; ns per element, median of {rounds} rounds");
    println!("| kernel | type | jit | interp |");
    println!("| --- | --- | --- | --- |");
    for (expr, ty, inputs) in &kernels {
        let on = |b: &str| {
            FusedRunner::compile_text(expr)
                .unwrap()
                .with_backend(kiln::backend_by_name(b).unwrap())
                .with_threads(1)
        };
        let (jit, interp) = (on("jit"), on("interp"));
        let (got, want) = (jit.run(inputs).unwrap(), interp.run(inputs).unwrap());
        if expr.starts_with("sum") {
            // a sum in another grouping than the interpreter's pairwise one: close, not the same bits
            let (g, w) = (got.into_f64(), want.into_f64());
            assert!((g[[]] - w[[]]).abs() <= 1e-9 * w[[]].abs(), "{expr} {ty}");
        } else if !["abs(z)", "exp(z)", "sqrt(z)"].contains(expr) {
            // (abs, exp and sqrt are the vector float functions, within their stated ULP bounds of
            // the interpreter's: tests/complex.rs checks them)
            assert_eq!(format!("{got:?}"), format!("{want:?}"), "{expr} {ty}");
        }
        let us = alternate::alternate(
            &[&|| drop(std::hint::black_box(jit.run(inputs).unwrap())), &|| {
                drop(std::hint::black_box(interp.run(inputs).unwrap()))
            }],
            rounds,
        );
        let ns = |u: f64| u * 1e3 / n as f64;
        println!("| `{expr}` | {ty} | {:.2} | {:.2} |", ns(us[0]), ns(us[1]));
    }
    let mut out = Array1::<Complex64>::zeros(n);
    let hand = || {
        Zip::from(&mut out)
            .and(&z)
            .and(&w)
            .for_each(|o, &a, &b| *o = a * b + Complex64::new(0.0, 1.0));
    };
    let cell = std::cell::RefCell::new(hand);
    let us = alternate::alternate(&[&|| (cell.borrow_mut())()], rounds);
    println!(
        "hand loop into a reused output, z*w + 1j (num-complex): {:.2}",
        us[0] * 1e3 / n as f64
    );
}
