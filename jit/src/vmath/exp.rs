//! exp, exp2, expm1 on F64X2, and exp2 and expm1 on F32X4 with f32 constants (`f32x4.rs`:
//! `FAMILY`; the same algorithms, the figures below are f64's).
//!
//! **exp**: `k = nearest(x·log2(e))`, `r = x - k·ln2` by Cody-Waite with FMA (`ln2` split in two
//! doubles; the first `fma` is exact since `x` and `k·ln2_hi` are multiples of 2^-53 and `|r| < 0.35`),
//! `e^r = 1 + (r + r²·Q(r))` with `Q` of degree 9 fitted here (Chebyshev interpolation in mpmath,
//! relative error of the whole polynomial 2^-55.8 with the rounded coefficients) and evaluated as
//! even and odd halves, and `e^r · 2^k` by adding `k` into the exponent field. Vectors with a lane
//! of |x| >= 708 or NaN branch to the general path: x clamped to [-746, 710] (beyond, the result is
//! 0 or inf anyway) and two exact scalings by powers of two, so that results in the subnormals are
//! rounded once and overflow gives inf. Measured against glibc over a million points in [-745, 709.8]:
//! max 1 ULP.
//!
//! **exp2**: `k = nearest(x)`, `r = x - k` exactly, `t = r·ln2` as a double-double (`fma` residual),
//! `2^x = e^t_hi · (1 + t_lo) · 2^k` with the same polynomial; for |x| < 1020 `k` is added into the
//! exponent field, and a vector with a lane beyond (or NaN) takes the general path (clamp and two
//! exact scalings, the same bits for normal results). Measured: max 1 ULP.
//!
//! **expm1**: on |x| < 0.35 the polynomial `x + x²·(1/2 + x·P(x))` (Chebyshev interpolation in
//! mpmath, `scripts/fexp_fit.py`, relative error 2^-58.5); beyond, exp's reduction `e^x = (1 +
//! s)·2^k` and `2^k·s + (2^k - 1)` in one `fma` (k is never 0 there); the sign of x last. x >= 708 or
//! NaN takes a branch to `exp(x) - 1`. No division and no select per range of k, where fdlibm's
//! `s_expm1.c` (the previous method here) needs both. Measured: see `math::ulp_bound`.

use super::Vb;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// The constants of one precision's exp: the reduction `x = k·ln2 + r` (Cody-Waite with `ln2`
/// split in two numbers of that precision), the polynomial `Q`, the `|x|` from which a vector takes
/// the general path, and the interval the general path clamps `x` into. The algorithm is the same
/// for f64 ([`F64`]) and f32 (`f32x4::F32`).
pub(crate) struct ExpConsts {
    pub log2e: f64,
    pub ln2_hi: f64,
    pub ln2_lo: f64,
    /// `Q(r) ≈ (e^r - 1 - r) / r²` on [-ln2/2, ln2/2].
    pub q: &'static [f64],
    pub edge: f64,
    pub clamp: (f64, f64),
}

/// f64 exp: `ln2` split in two doubles (the double nearest ln 2 and the double nearest the rest);
/// `Q` of degree 9: Chebyshev interpolation (mpmath `chebyfit`, 200-bit arithmetic) rounded to
/// doubles, so that `1 + r + r²·Q(r)` is within 2^-55.8 of `e^r` (relative), measured in exact
/// arithmetic over the interval; the general path from |x| >= 708, clamped to [-746, 710].
pub(crate) const F64: ExpConsts = ExpConsts {
    log2e: 1.4426950408889634,
    ln2_hi: 0.6931471805599453,
    ln2_lo: 2.3190468138462996e-17,
    q: &[
        0.5000000000000001,
        0.16666666666666669,
        0.04166666666662413,
        0.008333333333330062,
        0.0013888888917213717,
        0.00019841269863053618,
        2.4801521295954376e-05,
        2.7557268459997064e-06,
        2.7620088445409746e-07,
        2.510038549551032e-08,
    ],
    edge: 708.0,
    clamp: (-746.0, 710.0),
};

/// `e^r` for |r| <= ln2/2 (a little beyond is fine): `1 + (r + r²·Q(r))`, the small part first so
/// that the one rounding that matters is the last addition.
pub(crate) fn exp_poly(v: &mut Vb<'_, '_>, c: &ExpConsts, r: Value) -> Value {
    let r2 = v.mul(r, r);
    let q = v.poly2(r, r2, c.q);
    let s = v.fma(r2, q, r);
    v.addc(s, 1.0)
}

/// Clamps `x` into `[lo, hi]`, keeping NaN.
pub(crate) fn clamp(v: &mut Vb<'_, '_>, x: Value, lo: f64, hi: f64) -> Value {
    let big = v.cmpc(FloatCC::GreaterThan, x, hi);
    let x = v.selc(big, hi, x);
    let small = v.cmpc(FloatCC::LessThan, x, lo);
    v.selc(small, lo, x)
}

/// `(k, s)` with `e^(x + lo) = (1 + s)·2^k` (`lo` a small correction, or None): the reduction
/// `x + lo = k·ln2 + r` and `s = r + r²·Q(r)`, without the final `1 +` and scaling, for a caller
/// that folds them into its own last operation (erfc's division, expm1's `2^k·s + (2^k - 1)`). No
/// special values: `x` must be finite with |x| < 2^40 or so.
pub(crate) fn exp_parts(v: &mut Vb<'_, '_>, c: &ExpConsts, x: Value, lo: Option<Value>) -> (Value, Value) {
    let (k, mut r) = exp_arg(v, c, x);
    if let Some(lo) = lo {
        r = v.add(r, lo);
    }
    let r2 = v.mul(r, r);
    let q = v.poly2(r, r2, c.q);
    (k, v.fma(r2, q, r))
}

/// `(k, r)` with `x = k·ln2 + r`, `k` an integer and |r| <= ln2/2 (a little beyond): exp's
/// reduction (Cody-Waite with FMA).
pub(crate) fn exp_arg(v: &mut Vb<'_, '_>, c: &ExpConsts, x: Value) -> (Value, Value) {
    let t = v.mulc(x, c.log2e);
    let k = v.nearest(t);
    let nk = v.neg(k);
    let hi = v.c(c.ln2_hi);
    let r = v.fma(nk, hi, x);
    let lo2 = v.c(c.ln2_lo);
    (k, v.fma(nk, lo2, r))
}

/// `(k, e^r)` with `x + lo = k·ln2 + r` (`lo` a small correction, or None): [`exp_parts`] and the
/// `1 +` of [`exp_poly`].
pub(crate) fn exp_reduce(v: &mut Vb<'_, '_>, c: &ExpConsts, x: Value, lo: Option<Value>) -> (Value, Value) {
    let (k, s) = exp_parts(v, c, x, lo);
    (k, v.addc(s, 1.0))
}

/// `e^(x + lo)` in the precision of `c`, where `lo` is a small correction (or None): the exp of a
/// double-double. The fast path, for |x| below `c.edge` (normal results), adds `k` into the
/// exponent field of `e^r`; a vector with a lane beyond (or NaN) takes the general path: `x` clamped
/// (beyond, the result is 0 or inf anyway) and two exact scalings by powers of two, so that results
/// in the subnormals are rounded once and overflow gives inf.
pub(crate) fn exp_with(v: &mut Vb<'_, '_>, c: &ExpConsts, x: Value, lo: Option<Value>) -> Value {
    let (k, p) = exp_reduce(v, c, x, lo);
    let fast = v.ldexp_fast(p, k);
    // |x| >= edge as x² >= edge² (NaN unordered): a multiply and a compare, where |x| costs a mask
    // and an `and` more per vector (the exact boundary does not matter: both paths are right there)
    let x2 = v.mul(x, x);
    let edge = v.cmpc(FloatCC::UnorderedOrGreaterThanOrEqual, x2, c.edge * c.edge);
    v.guard(edge, fast, |v| {
        let x = clamp(v, x, c.clamp.0, c.clamp.1);
        let (k, p) = exp_reduce(v, c, x, lo);
        v.scale(p, k)
    })
}

/// `e^(x + lo)` in f64 (see [`exp_with`]).
pub(crate) fn exp_dd(v: &mut Vb<'_, '_>, x: Value, lo: Option<Value>) -> Value {
    exp_with(v, &F64, x, lo)
}

pub(crate) fn exp(v: &mut Vb<'_, '_>, x: Value) -> Value {
    exp_dd(v, x, None)
}

/// The constants of exp2 and expm1 in one precision: exp's ([`ExpConsts`]), exp2's edge and
/// clamp, expm1's polynomial and edge. [`FAMILY`] for f64, `f32x4::FAMILY` for f32; the algorithms
/// are the same.
pub(crate) struct ExpFamily {
    pub exp: &'static ExpConsts,
    /// The |x| from which exp2 takes its general path: below, `p·2^k` is normal.
    pub exp2_edge: f64,
    /// The interval exp2's general path clamps `x` into (beyond, the result is 0 or inf anyway).
    pub exp2_clamp: (f64, f64),
    /// expm1's `P` on |x| < [`EXPM1_SMALL`]: `expm1(x) ≈ x + x²·(1/2 + x·P(x))`.
    pub expm1_p: &'static [f64],
    /// The x from which expm1 takes its general path (where exp's fast path ends).
    pub expm1_edge: f64,
}

/// f64's exp2 and expm1: exp2's general path from |x| >= 1020, clamped to [-1080, 1025];
/// [`EXPM1_P`]; expm1's general path from x >= 708.
pub(crate) const FAMILY: ExpFamily = ExpFamily {
    exp: &F64,
    exp2_edge: 1020.0,
    exp2_clamp: (-1080.0, 1025.0),
    expm1_p: &EXPM1_P,
    expm1_edge: 708.0,
};

/// `(k, p)` with `2^x = p·2^k` (`k = nearest(x)`): `r = x - k` exactly, `t = r·ln2` as a
/// double-double (`fma` residual; in f32 a pair of floats), `p = e^t_hi · (1 + t_lo)`.
fn exp2_parts(v: &mut Vb<'_, '_>, c: &ExpConsts, x: Value) -> (Value, Value) {
    let k = v.nearest(x);
    let r = v.sub(x, k);
    let ln2 = v.c(c.ln2_hi);
    let t = v.mul(r, ln2);
    let nt = v.neg(t);
    let e = v.fma(r, ln2, nt);
    let ln2lo = v.c(c.ln2_lo);
    let tl = v.fma(r, ln2lo, e);
    let p = exp_poly(v, c, t);
    (k, v.fma(p, tl, p))
}

/// `2^x`: for |x| < `exp2_edge`, [`exp2_parts`] with `k` added into the exponent field; a vector
/// with a lane beyond (or NaN) takes the general path: `x` clamped to `exp2_clamp` and two exact
/// scalings, which give a normal lane the same bits.
pub(crate) fn exp2(v: &mut Vb<'_, '_>, c: &ExpFamily, x: Value) -> Value {
    let (k, p) = exp2_parts(v, c.exp, x);
    let fast = v.ldexp_fast(p, k);
    let x2 = v.mul(x, x);
    let edge = v.cmpc(
        FloatCC::UnorderedOrGreaterThanOrEqual,
        x2,
        c.exp2_edge * c.exp2_edge,
    );
    v.guard(edge, fast, |v| {
        let x = clamp(v, x, c.exp2_clamp.0, c.exp2_clamp.1);
        let (k, p) = exp2_parts(v, c.exp, x);
        v.scale(p, k)
    })
}

/// expm1's polynomial on |x| < [`EXPM1_SMALL`] in f64: `P` with `expm1(x) ≈ x + x²·(1/2 + x·P(x))`,
/// Chebyshev interpolation of `(expm1(x) - x - x²/2)/x³` on [-0.35, 0.35] (mpmath `chebyfit`,
/// 200-bit arithmetic, degree 9, `scripts/fexp_fit.py`), rounded to doubles: the whole
/// approximation is within 2^-58.5 of expm1 (relative), measured over the interval.
pub(crate) const EXPM1_P: [f64; 10] = [
    0.16666666666666669,
    0.041666666666666664,
    0.008333333333329796,
    0.0013888888888886363,
    0.00019841269864364933,
    2.4801587318080937e-05,
    2.7557266442353424e-06,
    2.7557281528710364e-07,
    2.5101335854788522e-08,
    2.0911915299044694e-09,
];

/// The |x| below which expm1 takes its polynomial (above ln2/2, so that the other range has
/// `k != 0`).
pub(crate) const EXPM1_SMALL: f64 = 0.35;

/// Below this x, expm1 is -1 (e^-60 is far below half an ULP of 1, in f64 and f32): the
/// reduction's `x` is clamped to it, so that `2^k` stays normal.
pub(crate) const EXPM1_LOW: f64 = -60.0;

/// `e^x - 1`: on |x| < [`EXPM1_SMALL`] the polynomial `x + x²·(1/2 + x·P(x))`; beyond, exp's
/// reduction `e^x = (1 + s)·2^k` with `expm1 = 2^k·s + (2^k - 1)` in one `fma` (`2^k - 1` is exact
/// for the `k` that matter, `x` clamped below at [`EXPM1_LOW`]); the sign of x copied last (the
/// sign of expm1 is the sign of x: -0.0 stays -0.0). A vector with a lane of x >= `expm1_edge`
/// or NaN branches to the general path, `exp(x) - 1` for those lanes (inf beyond the overflow of
/// exp, NaN for NaN).
pub(crate) fn expm1(v: &mut Vb<'_, '_>, c: &ExpFamily, x: Value) -> Value {
    use FloatCC::*;
    let fast = expm1_fast(v, c, x);
    let edge = v.cmpc(UnorderedOrGreaterThanOrEqual, x, c.expm1_edge);
    v.guard(edge, fast, |v| {
        let e = exp_with(v, c.exp, x, None);
        let e = v.addc(e, -1.0);
        v.sel(edge, e, fast)
    })
}

/// [`expm1`] for x < `expm1_edge`.
fn expm1_fast(v: &mut Vb<'_, '_>, c: &ExpFamily, x: Value) -> Value {
    use FloatCC::*;
    let x2 = v.mul(x, x);
    let p = v.poly2(x, x2, c.expm1_p);
    let half = v.c(0.5);
    let t = v.fma(x, p, half);
    let small = v.fma(x2, t, x);
    let low = v.cmpc(LessThan, x, EXPM1_LOW);
    let xc = v.selc(low, EXPM1_LOW, x);
    let (k, s) = exp_parts(v, c.exp, xc, None);
    let tk = v.pow2(k);
    let tk1 = v.addc(tk, -1.0);
    let big = v.fma(tk, s, tk1);
    let ax = v.abs(x);
    let is_small = v.cmpc(LessThan, ax, EXPM1_SMALL);
    let r = v.sel(is_small, small, big);
    v.copysign(r, x)
}
