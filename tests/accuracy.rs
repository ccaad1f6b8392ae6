//! The oracle is at least as accurate as NumPy: `sum` and `var` over data where a sequential sum
//! loses digits, against exact references computed here in integers (no NumPy in CI). The data is
//! the xorshift64* stream below; `tests/gen/accuracy.py` regenerates it for NumPy, which is how the
//! bounds' NumPy figures were measured (NumPy 2.4.6, `np.sum` and `np.var`).

use kiln::{ArrayArg, FusedRunner};
use ndarray::{Array1, ArrayD};

/// `n` values `base + 1000 u`, u uniform in [0, 1) from xorshift64* seeded with `seed`.
fn data(seed: u64, n: usize, base: f64) -> ArrayD<f64> {
    let mut s = seed | 1;
    Array1::from_shape_fn(n, |_| {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        base + (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64 * 1000.0
    })
    .into_dyn()
}

fn eval(expr: &str, backend: &str, x: &ArrayD<f64>, threads: usize) -> f64 {
    let args: [(&str, ArrayArg<'_>); 1] = [("x", x.into())];
    FusedRunner::compile_text(expr)
        .unwrap()
        .with_backend(kiln::backend_by_name(backend).unwrap())
        .with_threads(threads)
        .run(&args)
        .unwrap()
        .into_f64()[[]]
}

/// The integers `x * 2^scale` (exact: every value is a multiple of its ULP, `2^-scale`).
fn scaled(x: &ArrayD<f64>, scale: i32) -> Vec<i128> {
    x.iter()
        .map(|&v| {
            let k = v * 2f64.powi(scale);
            assert_eq!(k.fract(), 0.0, "{v} is not a multiple of 2^-{scale}");
            k as i128
        })
        .collect()
}

fn ulp(v: f64) -> f64 {
    f64::from_bits(v.to_bits() + 1) - v
}

#[test]
fn sums_of_a_million_values_near_1e9() {
    let x = data(0x5eed, 1_000_000, 1e9);
    // values in [1e9, 1e9 + 1000) < 2^30 are multiples of 2^-23: the exact sum in i128, rounded once
    let exact = scaled(&x, 23).iter().sum::<i128>() as f64 / 2f64.powi(23);
    // NumPy's np.sum of this data is 1 ULP from the exact sum (0.51 ULP before rounding); the
    // interpreter's sequential sum was 218 ULP off, its pairwise sum is within 1
    let interp = eval("sum(x)", "interp", &x, 1);
    assert!(
        (interp - exact).abs() <= ulp(exact),
        "interpreter {interp} vs exact {exact}"
    );
    // the JIT's chunked, multi-accumulator sum: a few ULP, the same bits for any thread count
    let jit = eval("sum(x)", "jit", &x, 1);
    assert!(
        (jit - exact).abs() <= 8.0 * ulp(exact),
        "jit {jit} vs exact {exact}"
    );
    for threads in [2, 3, 16] {
        assert_eq!(eval("sum(x)", "jit", &x, threads).to_bits(), jit.to_bits());
    }
}

#[test]
fn variance_of_values_near_1e12() {
    let n = 100_000;
    let x = data(0xface, n, 1e12);
    // values in [1e12, 1e12 + 1000) < 2^40 are multiples of 2^-13; shifted by the first value the
    // integers are below 2^24, so n·Σd² and (Σd)² fit in i128: var = (n·Σd² - (Σd)²) / n² exactly
    let k = scaled(&x, 13);
    let d: Vec<i128> = k.iter().map(|&v| v - k[0]).collect();
    let (s1, s2) = (d.iter().sum::<i128>(), d.iter().map(|v| v * v).sum::<i128>());
    let num = n as i128 * s2 - s1 * s1;
    let exact = num as f64 / (n as f64 * n as f64) / 2f64.powi(26);
    // NumPy's np.var of this data: relative error 2.2e-13 (two passes, pairwise sums); the
    // interpreter's sequential sums gave 13 times NumPy's error. Both kiln backends must do at least
    // as well as NumPy, for any thread count.
    const NUMPY: f64 = 2.2e-13;
    for backend in ["interp", "jit"] {
        for threads in [1, 4] {
            let v = eval("var(x)", backend, &x, threads);
            let rel = (v - exact).abs() / exact;
            assert!(
                rel <= NUMPY,
                "{backend} x{threads}: var {v} vs exact {exact}: {rel:e}"
            );
            let s = eval("std(x)", backend, &x, threads);
            let rel = (s - exact.sqrt()).abs() / exact.sqrt();
            assert!(rel <= NUMPY, "{backend} x{threads}: std {s}: {rel:e}");
        }
    }
}

#[test]
fn pairwise_order_is_the_documented_one() {
    // [1, u, u, ..., u] with u = 2^-53, 256 values. Sequentially every u is lost against 1 (1.0).
    // Pairwise (kiln_ir::interp::pairwise_sum): the first leaf's accumulator 0 holds 1 and loses its
    // 15 u's, accumulators 1..7 hold 16u each, so the leaf is 1 + 112u; the second leaf is 128u; the
    // two are added: 1 + 240u, exactly. (The exact sum is 1 + 255u.)
    let u = 2f64.powi(-53);
    let mut v = vec![u; 256];
    v[0] = 1.0;
    let x = Array1::from(v).into_dyn();
    assert_eq!(eval("sum(x)", "interp", &x, 1), 1.0 + 240.0 * u);
    assert_eq!(
        kiln::kiln_ir::interp::pairwise_sum(x.iter().copied()),
        1.0 + 240.0 * u
    );
}
