//! tanh, sinh and cosh on F64X2, on exp's reduction (`exp.rs`); sinh and cosh on F32X4 with f32
//! constants too (`f32x4.rs`: `HYP`, polynomials of degree 4, the edges of f32's exp; the figures
//! below are f64's). f32 tanh has a method of its own, with no exp and no division (`tanh32.rs`).
//!
//! **tanh**: of |x|, on |x| < [`TANH_SMALL`] (log(3)/2, where tanh is 1/2) the odd polynomial
//! `x + x³·P(x²)`; beyond, `1 - 2/(e^(2|x|) + 1)` (a result in [1/2, 1), where the division's error
//! is at most a quarter of an ULP of the result; `e^(2|x|) + 1 = 2^k·s + (2^k + 1)` from exp's
//! reduction, one rounding), |x| clamped to 20 first (tanh(20) rounds to 1, and `e^40` stays on
//! exp's fast path); NaN takes the polynomial (NaN stays NaN), the subnormals give themselves
//! through it, and the sign bit of x is or-ed in last (tanh(-0.0) = -0.0). No branch.
//!
//! **sinh**: on |x| < [`SINH_SMALL`] the odd polynomial `x + x³·P(x²)`; beyond, `e/2 - (1/2)/e` with
//! `e = e^|x|` and the sign of x (the errors of `e` and `1/e` are of opposite signs and cancel to
//! `coth(2)`, 1.04, times exp's). **cosh**: `2^(k-1)·e^r + 2^(-k-1)·e^-r` from exp's one reduction
//! `|x| = k·ln2 + r`, the two exponentials from the even and odd halves of exp's polynomial, with no
//! division (`cosh_fast`; cosh(0) = 1 exactly). A vector with a lane of |x| >= 708 (cosh: or NaN)
//! branches to the general path: |x| clamped to 711, `e^|x|/2` as `(1 + s)·2^(k-1)` by two exact
//! scalings (finite up to 710.4758, inf beyond), the other lanes the fast path's bits.
//!
//! Coefficients: Chebyshev interpolation in mpmath (`chebyfit`, 200-bit arithmetic,
//! `scripts/fexp_fit.py`), rounded to doubles; the relative error of each whole polynomial
//! approximation over its interval, measured in exact arithmetic: tanh 2^-57.6 (degree 10 in x²),
//! sinh 2^-55.3 (degree 8; bounded by the rounding of 1/6). Measured against glibc over a million
//! points (`jit/tests/accuracy.rs`) and against mpmath's correctly rounded values
//! (`tests/math_accuracy.rs`): see `math::ulp_bound`.

use super::Vb;
use super::exp::{ExpConsts, F64, exp_arg, exp_parts, exp_reduce};
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// The constants of sinh and cosh (and f64 tanh's exp) in one precision: exp's, sinh's polynomial,
/// the |x| from which sinh and cosh take their general path (where exp's fast path ends) and the
/// |x| that path clamps to (beyond the overflow of sinh and cosh). [`HYP`] for f64, `f32x4::HYP`
/// for f32; the algorithms are the same.
pub(crate) struct Hyp {
    pub exp: &'static ExpConsts,
    /// sinh's `P`: `sinh(x) ≈ x + x³·P(x²)` on |x| <= [`SINH_SMALL`].
    pub sinh_p: &'static [f64],
    pub edge: f64,
    pub clamp: f64,
}

/// f64: [`SINH_P`]; the general path from |x| >= 708, clamped to 711 (sinh and cosh overflow from
/// 710.4758).
pub(crate) const HYP: Hyp = Hyp {
    exp: &F64,
    sinh_p: &SINH_P,
    edge: 708.0,
    clamp: 711.0,
};

/// The |x| from which tanh is `1 - 2/(e^(2|x|) + 1)`: log(3)/2 rounded down.
pub(crate) const TANH_SMALL: f64 = 0.5493;

/// tanh's `P` in f64: `tanh(x) ≈ x + x³·P(x²)` on |x| <= 0.5493.
pub(crate) const TANH_P: [f64; 11] = [
    -0.3333333333333333,
    0.13333333333332728,
    -0.05396825396745134,
    0.02186948849445927,
    -0.008863234416113615,
    0.0035921106202983504,
    -0.0014556637641338977,
    0.000588945598897686,
    -0.0002346631274569021,
    8.515973036928387e-05,
    -2.0635184405443472e-05,
];

/// Beyond this |x|, tanh is ±1 (the argument of its exp is clamped to twice it; in f32 `e^40`
/// is still on exp's fast path too).
pub(crate) const TANH_ONE: f64 = 20.0;

/// The |x| below which sinh is its polynomial.
pub(crate) const SINH_SMALL: f64 = 2.0;

/// sinh's `P` in f64: `sinh(x) ≈ x + x³·P(x²)` on |x| <= 2.
pub(crate) const SINH_P: [f64; 9] = [
    0.16666666666666666,
    0.008333333333333331,
    0.00019841269841270936,
    2.7557319223705004e-06,
    2.505210842152821e-08,
    1.6059041233681633e-10,
    7.647273957195198e-13,
    2.8087409252747675e-15,
    8.580357849794261e-18,
];

/// The `e` beyond which sinh's `(1/2)/e` is computed as `(1/2)/2^64`: `e/2 - (1/2)/e` rounds to
/// `e/2` there either way (in f64 and f32), and the quotient stays normal (in f32 it would be subnormal from
/// |x| = 86.6, and a subnormal result costs a microcode assist: f32 cosh and sinh of arguments
/// spread over [-88, 88] measured 0.93 and 0.84 ns an element that way, 0.39 and 0.58 this way).
pub(crate) const RECIP_MAX: f64 = 18446744073709551616.0;

/// `x + x³·P(x²)` (`z = x²`), its halves in two chains.
fn odd_poly(v: &mut Vb<'_, '_>, x: Value, z: Value, p: &[f64]) -> Value {
    let z2 = v.mul(z, z);
    let q = v.poly2(z, z2, p);
    let x3 = v.mul(x, z);
    v.fma(x3, q, x)
}

/// f64 tanh of the F64X2 `x`.
pub(crate) fn tanh(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let c = &HYP;
    let ax = v.abs(x);
    let z = v.mul(ax, ax);
    let small = odd_poly(v, ax, z, &TANH_P);
    let one = v.cmpc(GreaterThan, ax, TANH_ONE);
    let a = v.selc(one, TANH_ONE, ax);
    let a2 = v.add(a, a);
    // e^(2a) + 1 = 2^k·s + (2^k + 1), one rounding
    let (k, s) = exp_parts(v, c.exp, a2, None);
    let tk = v.pow2(k);
    let tk1 = v.addc(tk, 1.0);
    let e1 = v.fma(tk, s, tk1);
    let two = v.c(2.0);
    let q = v.div(two, e1);
    let onec = v.c(1.0);
    let big = v.sub(onec, q);
    let is_small = v.cmpc(UnorderedOrLessThan, ax, TANH_SMALL);
    let r = v.sel(is_small, small, big);
    // the sign of x, or-ed into tanh(|x|) (the polynomial of -x is minus that of x, bit for bit)
    v.or_sign(r, x)
}

/// `e/2 - (1/2)/e` for `e = e^|x|` (sinh of |x| >= [`SINH_SMALL`]), with the general path for
/// lanes of |x| >= `c.edge`.
fn exp_pair(v: &mut Vb<'_, '_>, c: &Hyp, ax: Value) -> Value {
    use FloatCC::*;
    let combine = |v: &mut Vb<'_, '_>, e: Value| {
        let h = v.mulc(e, 0.5);
        let big = v.cmpc(GreaterThan, e, RECIP_MAX);
        let ec = v.selc(big, RECIP_MAX, e);
        let half = v.c(0.5);
        let q = v.div(half, ec);
        v.sub(h, q)
    };
    let (k, p) = exp_reduce(v, c.exp, ax, None);
    let e = v.ldexp_fast(p, k);
    let fast = combine(v, e);
    let edge = v.cmpc(GreaterThanOrEqual, ax, c.edge);
    v.guard(edge, fast, |v| {
        let big = v.cmpc(GreaterThan, ax, c.clamp);
        let a = v.selc(big, c.clamp, ax);
        let (k, p) = exp_reduce(v, c.exp, a, None);
        let e = v.scale(p, k);
        let r = combine(v, e);
        let k1 = v.addc(k, -1.0);
        let h = v.scale(p, k1);
        let far = v.cmpc(GreaterThanOrEqual, a, c.edge);
        v.sel(far, h, r)
    })
}

/// The `k` beyond which cosh's `2^(-k-1)` is taken as `2^-65`: the term `2^(-k-1)·e^-r` is then
/// below 2^-128 of the result (2^-65 keeps it a normal number in f32 too).
pub(crate) const COSH_K_MAX: f64 = 64.0;

/// cosh(a) for `0 <= a < c.edge`, with no division: `a = k·ln2 + r` (exp's reduction), so that
/// `cosh(a) = A·e^r + B·e^-r` with `A = 2^(k-1)`, `B = 2^(-k-1)`; exp's `e^r = 1 + s(r)`, `s(r) =
/// r + r²·Q(r)`, with `Q(±r) = E(r²) ± r·O(r²)` from the even and odd halves of exp's polynomial,
/// gives both exponentials, and `cosh(a) = A + (A·s(r) + (B + B·s(-r)))`: one rounding at the
/// result's scale (the last addition), as exp's `1 + s`, and cosh(0) = 1. Emulated in exact
/// arithmetic against mpmath over [0, 700] (`scripts/cosh_error.py`): at most 1.13 ULP from the true value (the quotient
/// form `e/2 + (1/2)/e` it replaces: 1.39), so within 1 ULP of the correctly rounded value.
fn cosh_fast(v: &mut Vb<'_, '_>, c: &Hyp, a: Value) -> Value {
    use FloatCC::*;
    let (k, r) = exp_arg(v, c.exp, a);
    let r2 = v.mul(r, r);
    let (e, o) = v.poly_halves(r2, c.exp.q);
    let nr = v.neg(r);
    let qp = v.fma(o, r, e);
    let qm = v.fma(o, nr, e);
    let sp = v.fma(r2, qp, r);
    let sm = v.fma(r2, qm, nr);
    let k1 = v.addc(k, -1.0);
    let big = v.pow2(k1);
    let far = v.cmpc(GreaterThan, k, COSH_K_MAX);
    let kc = v.selc(far, COSH_K_MAX, k);
    let nk = v.neg(kc);
    let nk1 = v.addc(nk, -1.0);
    let small = v.pow2(nk1);
    let b = v.fma(small, sm, small);
    let t = v.fma(big, sp, b);
    v.add(big, t)
}

pub(crate) fn sinh(v: &mut Vb<'_, '_>, c: &Hyp, x: Value) -> Value {
    use FloatCC::*;
    let z = v.mul(x, x);
    let small = odd_poly(v, x, z, c.sinh_p);
    let ax = v.abs(x);
    let big = exp_pair(v, c, ax);
    let big = v.copysign(big, x);
    let is_small = v.cmpc(UnorderedOrLessThan, ax, SINH_SMALL);
    v.sel(is_small, small, big)
}

/// [`cosh_fast`]; a vector with a lane of |x| >= `c.edge` or NaN branches to the general path:
/// those lanes `e^a/2` for `a = min(|x|, c.clamp)` (the `e^-a` term is far below their last bit),
/// by two exact scalings (inf from 710.4758), the others the fast path's bits.
pub(crate) fn cosh(v: &mut Vb<'_, '_>, c: &Hyp, x: Value) -> Value {
    use FloatCC::*;
    let ax = v.abs(x);
    let fast = cosh_fast(v, c, ax);
    let edge = v.cmpc(UnorderedOrGreaterThanOrEqual, ax, c.edge);
    v.guard(edge, fast, |v| {
        let big = v.cmpc(GreaterThan, ax, c.clamp);
        let a = v.selc(big, c.clamp, ax);
        let (k, p) = exp_reduce(v, c.exp, a, None);
        let k1 = v.addc(k, -1.0);
        let h = v.scale(p, k1);
        v.sel(edge, h, fast)
    })
}
