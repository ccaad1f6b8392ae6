//! log, log2, log10, log1p on F64X2.
//!
//! Method: fdlibm's (`e_log.c`, `e_log2.c`, `e_log10.c`, `s_log1p.c`; FreeBSD msun, via musl and the
//! Rust `libm` crate), with every branch turned into lane selects. `x = 2^k · m` with `m` in
//! [sqrt(2)/2, sqrt(2)) by integer arithmetic on the bits (subnormals scaled by 2^54 first);
//! `f = m - 1`, `s = f/(2+f)`, and `log(1+f) = f - hfsq + s·(hfsq + R(s²))` with fdlibm's Remez
//! polynomial Lg1..Lg7 (error below 2^-58.45; evaluated by Horner's rule in s², and for log with two
//! of the final products fused); a vector with a lane that is not positive, normal and finite takes
//! the general path (subnormals scaled by 2^54, special values selected); log2 and log10 split `f - hfsq` into a 21-bit head and
//! a tail before scaling by 1/ln2 or 1/ln10 (each split in two), and add `k` (or `k·log10(2)`) with
//! the error of the addition kept; log1p keeps the rounding error `c` of `1 + x` (its `c/u` by a
//! short polynomial in `s` and `2^-k` rather than fdlibm's second division). fdlibm states an
//! error below 1 ULP for each. Measured against glibc over a million points: log, log2, log10,
//! log1p max 1 ULP.

use super::Vb;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

pub(crate) const LG: [f64; 7] = [
    6.666666666666735130e-01,
    3.999999999940941908e-01,
    2.857142874366239149e-01,
    2.222219843214978396e-01,
    1.818357216161805012e-01,
    1.531383769920937332e-01,
    1.479819860511658591e-01,
];
pub(crate) const LN2_HI: f64 = 6.93147180369123816490e-01;
pub(crate) const LN2_LO: f64 = 1.90821492927058770002e-10;
pub(crate) const IVLN2HI: f64 = 1.44269504072144627571e+00;
pub(crate) const IVLN2LO: f64 = 1.67517131648865118353e-10;
pub(crate) const IVLN10HI: f64 = 4.34294481878168880939e-01;
pub(crate) const IVLN10LO: f64 = 2.50829467116452752298e-11;
pub(crate) const LOG10_2HI: f64 = 3.01029995663611771306e-01;
pub(crate) const LOG10_2LO: f64 = 3.69423907715893078616e-13;
/// The smallest normal f64.
pub(crate) const MIN_NORMAL: f64 = 2.2250738585072014e-308;

/// `(f, k)`: `x = 2^k · (1 + f)` with `1 + f` in [sqrt(2)/2, sqrt(2)), for positive finite `x`
/// (other lanes give garbage, replaced by the caller); subnormal `x` only if `subnormals`.
fn reduce_with(v: &mut Vb<'_, '_>, x: Value, subnormals: bool) -> (Value, Value) {
    let (x, kadj) = if subnormals {
        let sub = v.cmpc(FloatCC::LessThan, x, MIN_NORMAL);
        let xs = v.mulc(x, 18014398509481984.0); // 2^54
        let x = v.sel(sub, xs, x);
        let kadj = v.c(-54.0);
        let zero = v.c(0.0);
        (x, Some(v.sel(sub, kadj, zero)))
    } else {
        (x, None)
    };
    let u = v.bits(x);
    let u = v.iaddc(u, (0x3ff00000 - 0x3fe6a09e) << 32);
    let e = v.ushr(u, 52);
    // (e - 0x3ff) as a float: the bits of 1.5·2^52 + e - 0x3ff, minus 1.5·2^52
    let kb = v.iaddc(e, 0x4338_0000_0000_0000 - 0x3ff);
    let kf = v.float(kb);
    let kf = v.addc(kf, -6755399441055744.0);
    let k = match kadj {
        Some(a) => v.add(kf, a),
        None => kf,
    };
    let m = v.andc(u, 0x000f_ffff_ffff_ffff);
    let m = v.iaddc(m, 0x3fe6a09e << 32);
    let m = v.float(m);
    let f = v.addc(m, -1.0);
    (f, k)
}

fn reduce(v: &mut Vb<'_, '_>, x: Value) -> (Value, Value) {
    reduce_with(v, x, true)
}

/// `f(x)` for positive normal finite `x` without the subnormal scaling, or where a lane is not,
/// `general(x)` for the whole vector (a branch taken only then).
fn fast_or_general(
    v: &mut Vb<'_, '_>,
    x: Value,
    f: fn(&mut Vb<'_, '_>, Value, Value, Value) -> Value,
) -> Value {
    let (fr, k) = reduce_with(v, x, false);
    let fast = f(v, x, fr, k);
    let small = v.cmpc(FloatCC::UnorderedOrLessThan, x, MIN_NORMAL);
    let inf = v.cmpc(FloatCC::Equal, x, f64::INFINITY);
    let edge = v.or(small, inf);
    v.guard_shared(edge, fast, |v| {
        let (fr, k) = reduce(v, x);
        let y = f(v, x, fr, k);
        specials(v, x, y)
    })
}

/// `(hfsq, s, R)` of fdlibm's kernel for `f`.
fn kernel(v: &mut Vb<'_, '_>, f: Value) -> (Value, Value, Value) {
    let half = v.mulc(f, 0.5);
    let hfsq = v.mul(half, f);
    let two = v.addc(f, 2.0);
    let s = v.div(f, two);
    // R = z·(Lg1 + z·(Lg2 + ... + z·Lg7)), z = s² (fdlibm splits it in two chains in z²; Horner's
    // rule in z takes fewer instructions, which is what bounds a vector loop)
    let z = v.mul(s, s);
    let r = v.poly(z, &LG);
    let r = v.mul(z, r);
    (hfsq, s, r)
}

/// Replaces the lanes where `x` is not positive and finite: log(±0) = -inf, log(x < 0) = NaN,
/// log(inf) = inf, log(NaN) = NaN.
fn specials(v: &mut Vb<'_, '_>, x: Value, r: Value) -> Value {
    use FloatCC::*;
    let pos = v.cmpc(GreaterThan, x, 0.0);
    let fin = v.cmpc(LessThan, x, f64::INFINITY);
    let ok = v.and(pos, fin);
    let neg = v.cmpc(LessThan, x, 0.0);
    let sp = v.selc(neg, super::INVALID, x);
    let zero = v.cmpc(Equal, x, 0.0);
    let sp = v.selc(zero, f64::NEG_INFINITY, sp);
    v.sel(ok, r, sp)
}

pub(crate) fn log(v: &mut Vb<'_, '_>, x: Value) -> Value {
    fast_or_general(v, x, log_reduced)
}

fn log_reduced(v: &mut Vb<'_, '_>, _x: Value, f: Value, k: Value) -> Value {
    let (hfsq, s, r) = kernel(v, f);
    // s*(hfsq+R) + dk*ln2_lo - hfsq + f + dk*ln2_hi, with two of the products fused (k·ln2_hi is
    // exact, so that fma rounds as the addition did)
    let a = v.add(hfsq, r);
    let b = v.mulc(k, LN2_LO);
    let a = v.fma(s, a, b);
    let a = v.sub(a, hfsq);
    let a = v.add(a, f);
    let c = v.c(LN2_HI);
    v.fma(k, c, a)
}

/// `(hi, lo)` with `hi + lo = f - hfsq + s·(hfsq + R)`, `hi` holding the top 21 bits.
fn split(v: &mut Vb<'_, '_>, f: Value, hfsq: Value, s: Value, r: Value) -> (Value, Value) {
    let hi = v.sub(f, hfsq);
    let hb = v.bits(hi);
    let hb = v.andc(hb, -1i64 << 32);
    let hi = v.float(hb);
    let lo = v.sub(f, hi);
    let lo = v.sub(lo, hfsq);
    let a = v.add(hfsq, r);
    let a = v.mul(s, a);
    let lo = v.add(lo, a);
    (hi, lo)
}

pub(crate) fn log2(v: &mut Vb<'_, '_>, x: Value) -> Value {
    fast_or_general(v, x, log2_reduced)
}

fn log2_reduced(v: &mut Vb<'_, '_>, _x: Value, f: Value, k: Value) -> Value {
    let (hfsq, s, r) = kernel(v, f);
    let (hi, lo) = split(v, f, hfsq, s, r);
    let val_hi = v.mulc(hi, IVLN2HI);
    let lh = v.add(lo, hi);
    let a = v.mulc(lh, IVLN2LO);
    let b = v.mulc(lo, IVLN2HI);
    let val_lo = v.add(a, b);
    let w = v.add(k, val_hi);
    let d = v.sub(k, w);
    let d = v.add(d, val_hi);
    let val_lo = v.add(val_lo, d);
    v.add(val_lo, w)
}

pub(crate) fn log10(v: &mut Vb<'_, '_>, x: Value) -> Value {
    fast_or_general(v, x, log10_reduced)
}

fn log10_reduced(v: &mut Vb<'_, '_>, _x: Value, f: Value, k: Value) -> Value {
    let (hfsq, s, r) = kernel(v, f);
    let (hi, lo) = split(v, f, hfsq, s, r);
    let val_hi = v.mulc(hi, IVLN10HI);
    let y = v.mulc(k, LOG10_2HI);
    let a = v.mulc(k, LOG10_2LO);
    let lh = v.add(lo, hi);
    let b = v.mulc(lh, IVLN10LO);
    let a = v.add(a, b);
    let c = v.mulc(lo, IVLN10HI);
    let val_lo = v.add(a, c);
    let w = v.add(y, val_hi);
    let d = v.sub(y, w);
    let d = v.add(d, val_hi);
    let val_lo = v.add(val_lo, d);
    v.add(val_lo, w)
}

pub(crate) fn log1p(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let y = log1p_core(v, x, None);
    // |x| < 2^-53: x (keeps -0.0 and the subnormals)
    log1p_specials(v, x, y, 1.1102230246251565e-16)
}

/// log1p's value from its core's `y` (either type): `x` where `|x| < tiny` (keeping -0.0 and the
/// subnormals), and the special values.
pub(crate) fn log1p_specials(v: &mut Vb<'_, '_>, x: Value, y: Value, tiny: f64) -> Value {
    use FloatCC::*;
    let ax = v.abs(x);
    let small = v.cmpc(LessThan, ax, tiny);
    let y = v.sel(small, x, y);
    // x > -1 and finite: y; x = -1: -inf; x < -1: NaN; inf, NaN: x
    let gt = v.cmpc(GreaterThan, x, -1.0);
    let fin = v.cmpc(LessThan, x, f64::INFINITY);
    let ok = v.and(gt, fin);
    let below = v.cmpc(LessThan, x, -1.0);
    let sp = v.selc(below, super::INVALID, x);
    let m1 = v.cmpc(Equal, x, -1.0);
    let sp = v.selc(m1, f64::NEG_INFINITY, sp);
    v.sel(ok, y, sp)
}

/// The rounding error `c` of `u = 1 + x` (`u` of exponent `k`), either type: `1 - (u - x)` for
/// `k >= 2`, `x - (u - 1)` below.
pub(crate) fn log1p_error(v: &mut Vb<'_, '_>, x: Value, u: Value, k: Value) -> Value {
    use FloatCC::*;
    let um = v.sub(u, x);
    let one = v.c(1.0);
    let c_big = v.sub(one, um);
    let u1 = v.addc(u, -1.0);
    let c_small = v.sub(x, u1);
    let k2 = v.cmpc(GreaterThanOrEqual, k, 2.0);
    v.sel(k2, c_big, c_small)
}

/// log1p's correction `c/u` (either type) from the rounding error `c` of `u = 1 + x`, `s` of the
/// kernel and the exponent `k` of `u`: `c·2^-k·(1 - 2s + 2s² - 2s³)`, 0 from `k = k_max` (where it
/// is below half an ULP of the result) and in the `near` range (`k = 0` there too), with `kextra`
/// added into `k` where given. Returns `(c/u, k)`.
pub(crate) fn log1p_correction(
    v: &mut Vb<'_, '_>,
    c: Value,
    s: Value,
    k: Value,
    near: Value,
    k_max: f64,
    kextra: Option<Value>,
) -> (Value, Value) {
    use FloatCC::*;
    let inv = v.poly(s, &[1.0, -2.0, 2.0, -2.0]);
    let nk = v.neg(k);
    let sc = v.pow2(nk);
    let c = v.mul(c, sc);
    let c = v.mul(c, inv);
    let below = v.cmpc(LessThan, k, k_max);
    let zero = v.c(0.0);
    let c = v.sel(below, c, zero);
    let c = v.sel(near, zero, c);
    let k = v.sel(near, zero, k);
    let k = match kextra {
        Some(ke) => v.add(k, ke),
        None => k,
    };
    (c, k)
}

/// fdlibm's log1p of finite `x > -1` with no special value handled (other lanes: garbage), plus
/// `kextra · ln2` (0 or 1 per lane) added into the exponent `k` where given: the inverse
/// hyperbolic functions (`arc_hyp.rs`) take `log(2|x|)` of huge arguments as `log1p(|x| - 1)`
/// with `kextra = 1`, exactly as fdlibm adds `k·ln2`.
pub(crate) fn log1p_core(v: &mut Vb<'_, '_>, x: Value, kextra: Option<Value>) -> Value {
    use FloatCC::*;
    // the general case: u = 1 + x = 2^k·m, with c the correction log(1+x) - log(u) ≈ c/u
    let u = v.addc(x, 1.0);
    let ub = v.bits(u);
    let ub = v.iaddc(ub, (0x3ff00000 - 0x3fe6a09e) << 32);
    let e = v.ushr(ub, 52);
    let kb = v.iaddc(e, 0x4338_0000_0000_0000 - 0x3ff);
    let kf = v.float(kb);
    let k = v.addc(kf, -6755399441055744.0);
    let c = log1p_error(v, x, u, k);
    let m = v.andc(ub, 0x000f_ffff_ffff_ffff);
    let m = v.iaddc(m, 0x3fe6a09e << 32);
    let m = v.float(m);
    let f = v.addc(m, -1.0);
    // sqrt(2)/2 - 1 <= x < sqrt(2) - 1: k = 0, c = 0, f = x
    let lo = v.cmpc(GreaterThan, x, -f64::from_bits(0x3fd2bec500000000));
    let hi = v.cmpc(LessThan, x, f64::from_bits(0x3fda827a00000000));
    let near = v.and(lo, hi);
    let f = v.sel(near, x, f);
    let (hfsq, s, r) = kernel(v, f);
    // c/u = c·2^-k/(1+f), with 1/(1+f) = (1-s)/(1+s) ≈ 1 - 2s + 2s² - 2s³ (s = f/(2+f), |s| <
    // 0.172, relative error below 2s⁴ < 2^-9): c is at most half an ULP of u, so the error this
    // adds is below 2^-62 of a result of at least 0.34 (where k != 0): a multiply-add chain in
    // place of fdlibm's second division
    let (c, k) = log1p_correction(v, c, s, k, near, 54.0, kextra);
    // s*(hfsq+R) + (dk*ln2_lo + c) - hfsq + f + dk*ln2_hi
    let a = v.add(hfsq, r);
    let a = v.mul(s, a);
    let b = v.mulc(k, LN2_LO);
    let b = v.add(b, c);
    let a = v.add(a, b);
    let a = v.sub(a, hfsq);
    let a = v.add(a, f);
    let d = v.mulc(k, LN2_HI);
    v.add(a, d)
}
