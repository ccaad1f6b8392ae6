//! exp, exp2, expm1 on F64X2.
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
//! `2^x = e^t_hi · (1 + t_lo) · 2^k` with the same polynomial and scaling. Measured: max 1 ULP.
//!
//! **expm1**: fdlibm's `s_expm1.c` (FreeBSD msun, via musl / the Rust `libm` crate), every branch
//! computed and selected lane by lane: reduction `x = k·ln2 + r` with the rounding error `c` of `r`
//! kept, the rational approximation with fdlibm's Q1..Q5 (a Remez fit, error below 2^-61.8), then the
//! branch of the reconstruction that fits `k` (0, ±1, 2..19, 20..56, other). fdlibm states an error
//! below 1 ULP. Measured: max 1 ULP.

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

/// `(k, e^r)` with `x + lo = k·ln2 + r` (`lo` a small correction, or None).
fn exp_reduce(v: &mut Vb<'_, '_>, c: &ExpConsts, x: Value, lo: Option<Value>) -> (Value, Value) {
    let t = v.mulc(x, c.log2e);
    let k = v.nearest(t);
    let nk = v.neg(k);
    let hi = v.c(c.ln2_hi);
    let r = v.fma(nk, hi, x);
    let lo2 = v.c(c.ln2_lo);
    let mut r = v.fma(nk, lo2, r);
    if let Some(lo) = lo {
        r = v.add(r, lo);
    }
    (k, exp_poly(v, c, r))
}

/// `(k, s)` with `e^(x + lo) = (1 + s)·2^k` in f64 (`lo` a small correction): the reduction and
/// polynomial of [`exp`] without the final `1 +` and scaling, for a caller that folds them into its
/// own last operation (erfc's division keeps one rounding that way). No special values: `x` must be
/// finite with |x| < 2^40 or so.
pub(crate) fn exp_parts(v: &mut Vb<'_, '_>, x: Value, lo: Value) -> (Value, Value) {
    let c = &F64;
    let t = v.mulc(x, c.log2e);
    let k = v.nearest(t);
    let nk = v.neg(k);
    let hi = v.c(c.ln2_hi);
    let r = v.fma(nk, hi, x);
    let lo2 = v.c(c.ln2_lo);
    let r = v.fma(nk, lo2, r);
    let r = v.add(r, lo);
    let r2 = v.mul(r, r);
    let q = v.poly2(r, r2, c.q);
    (k, v.fma(r2, q, r))
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

pub(crate) fn exp2(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let x = clamp(v, x, -1080.0, 1025.0);
    let k = v.nearest(x);
    let r = v.sub(x, k);
    let ln2 = v.c(F64.ln2_hi);
    let t = v.mul(r, ln2);
    let nt = v.neg(t);
    let e = v.fma(r, ln2, nt);
    let ln2lo = v.c(F64.ln2_lo);
    let tl = v.fma(r, ln2lo, e);
    let p = exp_poly(v, &F64, t);
    let p = v.fma(p, tl, p);
    v.scale(p, k)
}

// fdlibm s_expm1.c constants.
const O_THRESHOLD: f64 = 7.09782712893383973096e+02;
const FD_LN2_HI: f64 = 6.93147180369123816490e-01;
const FD_LN2_LO: f64 = 1.90821492927058770002e-10;
const INVLN2: f64 = 1.44269504088896338700e+00;
const Q: [f64; 6] = [
    1.0,
    -3.33333333333331316428e-02,
    1.58730158725481460165e-03,
    -7.93650757867487942473e-05,
    4.00821782732936239552e-06,
    -2.01099218183624371326e-07,
];

pub(crate) fn expm1(v: &mut Vb<'_, '_>, x0: Value) -> Value {
    use FloatCC::*;
    // beyond [-50, 710] the result is -1 or inf
    let x = clamp(v, x0, -50.0, 710.0);
    let t = v.mulc(x, INVLN2);
    let k = v.nearest(t);
    let nk = v.neg(k);
    let c_hi = v.c(FD_LN2_HI);
    let hi = v.fma(nk, c_hi, x); // exact: ln2_hi has 32 trailing zero bits
    let lo = v.mulc(k, FD_LN2_LO);
    let xr = v.sub(hi, lo);
    let d = v.sub(hi, xr);
    let c = v.sub(d, lo);
    // x is now in primary range
    let hfx = v.mulc(xr, 0.5);
    let hxs = v.mul(xr, hfx);
    let r1 = v.poly(hxs, &Q);
    let r1h = v.mul(r1, hfx);
    let three = v.c(3.0);
    let t = v.sub(three, r1h);
    let xt = v.mul(xr, t);
    let six = v.c(6.0);
    let den = v.sub(six, xt);
    let num = v.sub(r1, t);
    let q = v.div(num, den);
    let e = v.mul(hxs, q);
    // k == 0: x - (x*e - hxs)
    let xe = v.mul(xr, e);
    let xe = v.sub(xe, hxs);
    let r_k0 = v.sub(xr, xe);
    // e = x*(e-c) - c - hxs
    let ec = v.sub(e, c);
    let e2 = v.mul(xr, ec);
    let e2 = v.sub(e2, c);
    let e2 = v.sub(e2, hxs);
    let xme = v.sub(xr, e2);
    // k == -1: 0.5*(x-e) - 0.5
    let h = v.mulc(xme, 0.5);
    let r_km1 = v.addc(h, -0.5);
    // k == 1: x < -0.25 ? -2*(e-(x+0.5)) : 1 + 2*(x-e)
    let xh = v.addc(xr, 0.5);
    let a = v.sub(e2, xh);
    let a = v.mulc(a, -2.0);
    let b2 = v.mulc(xme, 2.0);
    let b2 = v.addc(b2, 1.0);
    let lt = v.cmpc(LessThan, xr, -0.25);
    let r_k1 = v.sel(lt, a, b2);
    // 2^-k for 2 <= k <= 56 (other lanes hold a harmless power of two)
    let kc = clamp(v, k, 0.0, 60.0);
    let nkc = v.neg(kc);
    let uf = v.pow2(nkc);
    // 2 <= k < 20: (x - e + (1 - 2^-k)) * 2^k
    let one = v.c(1.0);
    let omu = v.sub(one, uf);
    let y_lo = v.add(xme, omu);
    // 20 <= k <= 56: (x - (e + 2^-k) + 1) * 2^k
    let eu = v.add(e2, uf);
    let y_mid = v.sub(xr, eu);
    let y_mid = v.addc(y_mid, 1.0);
    // otherwise: (x - e + 1) * 2^k - 1
    let y_far = v.addc(xme, 1.0);
    let k_lt20 = v.cmpc(LessThan, k, 20.0);
    let y = v.sel(k_lt20, y_lo, y_mid);
    let k_in = v.cmpc(GreaterThanOrEqual, k, 2.0);
    let k_le56 = v.cmpc(LessThanOrEqual, k, 56.0);
    let k_in = v.and(k_in, k_le56);
    let y = v.sel(k_in, y, y_far);
    let y = v.scale(y, k);
    let y_m1 = v.addc(y, -1.0);
    let mut r = v.sel(k_in, y, y_m1);
    let is1 = v.cmpc(Equal, k, 1.0);
    r = v.sel(is1, r_k1, r);
    let ism1 = v.cmpc(Equal, k, -1.0);
    r = v.sel(ism1, r_km1, r);
    let is0 = v.cmpc(Equal, k, 0.0);
    r = v.sel(is0, r_k0, r);
    // |x| < 2^-54: x itself (keeps -0.0 and the subnormals); NaN: NaN; overflow: inf
    let ax = v.abs(x0);
    let tiny = v.cmpc(LessThan, ax, 5.551115123125783e-17);
    let nan = v.cmp(Unordered, x0, x0);
    let tiny = v.or(tiny, nan);
    r = v.sel(tiny, x0, r);
    let over = v.cmpc(GreaterThan, x0, O_THRESHOLD);
    v.selc(over, f64::INFINITY, r)
}
