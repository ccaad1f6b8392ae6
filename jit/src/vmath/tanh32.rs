//! float32 tanh on F32X4 by a table of polynomials (NumPy's and SVML's method), with no exp and
//! no division: `a = |x|` (clamped to [`CLAMP`], where tanh rounds to 1; NaN kept), its interval
//! `i` of 16 from the bits of `a` (`(bits - BASE) >> 22`, clamped to [0, 15]: [0, 1/16), then
//! half binades up to 8, then [8, 9.25]), and on it
//!
//! `tanh(a) ≈ c0 + (c1·y + c0lo) + y²·Q(y)`, `Q = c2 + y·(c3 + ... + y·c7)`, `y = a - b`,
//!
//! with `b` the interval's middle (`y` is exact: Sterbenz), `c0 + c0lo` its tanh as a pair of floats
//! (so that the result is within about half an ULP plus the polynomial's error), and the sign of
//! `x` or-ed in last (tanh(-0.0) = -0.0). Interval 0 is the odd `y + y³·(c3 + y²·c5)` (`b`, `c0`,
//! `c0lo`, `c2`, `c4`, `c6`, `c7` zero, `c1` one): tiny and subnormal arguments give themselves.
//! NaN (row 15) stays NaN through `y`.
//!
//! The table ([`TANH32`]) is `scripts/tanhf_fit.py`'s: Chebyshev interpolation in mpmath
//! (200-bit), rounded to floats; each interval's polynomial within 2^-27.2 of tanh (relative), and
//! the float32 evaluation, over every 7th float in [0, 9.25], at most 1 ULP from float64 tanh
//! rounded (mean at most 0.05 in any interval). The inline code reads a lane's row by scalar
//! loads ([`Vb::lookup_cols`]); the wide routines look the same columns up by permutes
//! (`wide/tanh32.rs`: one `vpermps` at AVX-512, 16 floats a register; two and a blend at AVX2):
//! the same values and operations, so the same bits. 16 rows of degree 7 rather than 32 of
//! degree 5 (as accurate): AVX2's lookups of 32 rows cost 4 permutes and 3 blends a column.

use super::Vb;
use cranelift_codegen::ir::InstBuilder;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// Above this |x|, tanh is 1 in float32 (1 - tanh(a) is below 2^-25 from 9.0109); the last
/// interval's polynomial gives 1 here.
pub(crate) const CLAMP: f32 = 9.25;
/// The bits of 1/16 less one half binade: `(bits(a) - BASE) >> 22` is 1 at 1/16.
pub(crate) const BASE: i32 = 0x3d40_0000;
/// A half binade of float32 bits.
pub(crate) const SHIFT: i32 = 22;
/// The table's rows.
pub(crate) const ROWS: i32 = 16;

/// The polynomials, by column: `b`, `c0`, `c0lo`, `c1` .. `c7`, each over the 16 intervals.
pub(crate) const TANH32: [[f32; 16]; 10] = [
    // b
    [
        0.0, 0.078125, 0.109375, 0.15625, 0.21875, 0.3125, 0.4375, 0.625, 0.875, 1.25, 1.75, 2.5, 3.5, 5.0,
        7.0, 8.625,
    ],
    // c0 (high part)
    [
        0.0,
        0.077966444,
        0.10894093,
        0.15499073,
        0.21532634,
        0.30270973,
        0.41157004,
        0.5545997,
        0.7039056,
        0.84828365,
        0.94137555,
        0.9866143,
        0.9981779,
        0.9999092,
        0.99999833,
        0.99999994,
    ],
    // c0 (low part)
    [
        0.0,
        -2.8189486e-09,
        7.4643136e-10,
        -2.298207e-09,
        6.5935907e-10,
        8.5267177e-10,
        1.3302244e-08,
        1.9993234e-08,
        2.1513308e-08,
        -8.416877e-09,
        -1.5213715e-08,
        9.8780735e-09,
        1.1875482e-08,
        -1.3016251e-08,
        5.9641128e-09,
        -4.879011e-09,
    ],
    // c1
    [
        1.0,
        0.9939212,
        0.9881319,
        0.9759779,
        0.95363456,
        0.9083668,
        0.8306101,
        0.6924192,
        0.5045169,
        0.28041488,
        0.1138121,
        0.026592229,
        0.0036408848,
        0.00018158219,
        3.3260897e-06,
        1.2896744e-07,
    ],
    // c2
    [
        0.0,
        -0.077492505,
        -0.10764801,
        -0.15126753,
        -0.20534264,
        -0.2749715,
        -0.34185424,
        -0.38401547,
        -0.35513228,
        -0.23787141,
        -0.10713987,
        -0.026236096,
        -0.0036342856,
        -0.00018172165,
        -3.3289837e-06,
        -1.2897377e-07,
    ],
    // c3
    [
        -0.33333322,
        -0.32526526,
        -0.31765002,
        -0.3018809,
        -0.2736625,
        -0.2195524,
        -0.13617305,
        -0.01783152,
        0.0818073,
        0.10831085,
        0.062921524,
        0.017020876,
        0.0024140058,
        0.00012105593,
        2.218025e-06,
        8.5979686e-08,
    ],
    // c4
    [
        0.0,
        0.051190607,
        0.07048775,
        0.09721122,
        0.12737426,
        0.15811726,
        0.16999587,
        0.13789588,
        0.06079587,
        -0.012583065,
        -0.023523713,
        -0.008051206,
        -0.001197485,
        -5.9720154e-05,
        -1.0943963e-06,
        -4.2908567e-08,
    ],
    // c5
    [
        0.13312282,
        0.12651774,
        0.12016282,
        0.10724851,
        0.08498567,
        0.045506395,
        -0.0061160494,
        -0.055142775,
        -0.05885062,
        -0.019202495,
        0.0036969224,
        0.0028598576,
        0.0004721356,
        2.4011977e-05,
        4.4034016e-07,
        1.7177841e-08,
    ],
    // c6
    [
        0.0,
        -0.028642558,
        -0.038969137,
        -0.052337836,
        -0.065262645,
        -0.07237096,
        -0.061621845,
        -0.024057308,
        0.012955038,
        0.015073806,
        0.002087871,
        -0.0006980542,
        -0.0001572269,
        -9.256554e-06,
        -1.7026979e-07,
        -6.059476e-09,
    ],
    // c7
    [
        0.0,
        -0.049261246,
        -0.044950064,
        -0.03638166,
        -0.022355687,
        -4.966003e-05,
        0.022560248,
        0.02952186,
        0.011089723,
        -0.004461709,
        -0.001962425,
        6.316753e-05,
        4.168965e-05,
        2.5547831e-06,
        4.716427e-08,
        1.7101589e-09,
    ],
];

/// float32 tanh of the F32X4 `x`.
pub(crate) fn tanh(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let a = v.abs(x);
    let over = v.cmpc(FloatCC::GreaterThan, a, CLAMP as f64);
    let a = v.selc(over, CLAMP as f64, a);
    let bits = v.bits(a);
    let d = v.iaddc(bits, -(BASE as i64));
    let i = v.b.ins().sshr_imm_u(d, SHIFT as i64);
    let zero = v.ci(0);
    let i = v.b.ins().smax(i, zero);
    let top = v.ci((ROWS - 1) as i64);
    let i = v.b.ins().smin(i, top);
    let [b, c0, c0lo, c1, c2, c3, c4, c5, c6, c7] = v.lookup_cols(&TANH32, i);
    let y = v.sub(a, b);
    let q = v.fma(c7, y, c6);
    let q = v.fma(q, y, c5);
    let q = v.fma(q, y, c4);
    let q = v.fma(q, y, c3);
    let q = v.fma(q, y, c2);
    let t = v.fma(c1, y, c0lo);
    let y2 = v.mul(y, y);
    let s = v.fma(y2, q, t);
    let r = v.add(c0, s);
    v.or_sign(r, x)
}

#[cfg(test)]
mod tests {
    use super::{BASE, CLAMP, ROWS, SHIFT, TANH32};

    /// The row of `a >= 0` (the kernel's index).
    fn row(a: f32) -> usize {
        ((a.to_bits() as i32).wrapping_sub(BASE) >> SHIFT).clamp(0, ROWS - 1) as usize
    }

    /// What the evaluation relies on, checked on the table as written (a regenerated or edited
    /// table that breaks it fails here): row 0 is the odd polynomial (`b`, `c0`, `c0lo` and the
    /// even coefficients zero, `c1` one); every float of a row's interval has `b` in that
    /// interval's Sterbenz range, so `y = a - b` is exact; NaN and the clamp land in row 15.
    #[test]
    fn the_table_keeps_the_kernels_invariants() {
        let col = |k: usize, i: usize| TANH32[k][i];
        for k in [0, 1, 2, 4, 6, 8, 9] {
            assert_eq!(col(k, 0).to_bits(), 0, "row 0, column {k}");
        }
        assert_eq!(col(3, 0), 1.0);
        assert_eq!(row(1.0 / 16.0), 1);
        assert_eq!(row(f32::from_bits((1.0f32 / 16.0).to_bits() - 1)), 0);
        assert_eq!(row(CLAMP), 15);
        assert_eq!(row(f32::NAN), 15);
        // each row's floats, from the first of its interval to the last (or the clamp)
        for i in 1..ROWS as usize {
            let lo = f32::from_bits((BASE + (i as i32) * (1 << SHIFT)) as u32);
            let hi = f32::from_bits((BASE + (i as i32 + 1) * (1 << SHIFT)) as u32 - 1).min(CLAMP);
            assert_eq!((row(lo), row(hi)), (i, i), "row {i}: [{lo}, {hi}]");
            let b = col(0, i);
            assert!(
                b / 2.0 <= lo && hi <= 2.0 * b,
                "row {i}: b = {b} for [{lo}, {hi}]"
            );
            assert!(lo <= b && b <= hi, "row {i}: b = {b} outside [{lo}, {hi}]");
            // c0 + c0lo is the polynomial at b as a pair of floats (the low part below half an
            // ULP of the high), tanh(b) within the fit's error (2^-27.2, `scripts/tanhf_fit.py`)
            let (c0, c0lo) = (col(1, i), col(2, i));
            assert!(
                c0lo.abs() <= c0 * f32::EPSILON / 2.0,
                "row {i}: c0lo {c0lo} for c0 {c0}"
            );
            let t = (b as f64).tanh();
            assert!(
                ((c0 as f64 + c0lo as f64) - t).abs() <= t * 2f64.powi(-27),
                "row {i}"
            );
        }
    }
}
