//! arcsinh, arccosh and arctanh on F64X2, each one log1p (`log::log1p_core`) of an argument built
//! with at most one square root and one division.
//!
//! Method: fdlibm's (`s_asinh.c`, `e_acosh.c`, `e_atanh.c`, as musl and the Rust `libm` crate carry
//! them, the interpreter's functions), every branch turned into lane selects of one argument `a`,
//! so that each vector computes a single log1p:
//!
//! - arcsinh, `y = |x|`, `q = sqrt(y² + 1)`: `a = y + y²/(1 + q)` for `y < 2`; `a = (2y + 1/(q + y))
//!   - 1` for `2 <= y < 2^28` (fdlibm's `log(2y + 1/(q + y))`; the subtraction is exact for an
//!   argument of at least 2, and log1p adds the 1 back exactly); `a = y - 1` and one more `ln2` in
//!   log1p's exponent for `y >= 2^28` (fdlibm's `log(y) + ln2`); `x` itself for `y < 2^-28`, NaN
//!   and ±inf; the sign of `x` copied (so -0.0 stays).
//! - arccosh, `t = x - 1` (exact for x in [1, 2]): `a = t + sqrt(t² + 2t)` for `x < 2`, `a = (x +
//!   sqrt(x² - 1)) - 1` for `2 <= x < 2^28` (the definition, `log(x + sqrt(x² - 1))`, rather than
//!   fdlibm's `log(2x - 1/(x + sqrt(x² - 1)))`: a quarter of an ULP more rounding error in the
//!   argument, one division less), `a = x - 1` and one more `ln2` beyond; NaN for `x < 1` and NaN,
//!   inf for inf; arccosh(1) = log1p(0) = +0.
//! - arctanh, `y = |x|`, `d = y/(1 - y)`: `a = 2y + 2y·d` (one fma) for `y < 0.5`, `a = 2d` above;
//!   the result `0.5·log1p(a)` with the sign of `x`; `x` for `y < 2^-28` (keeps -0.0 and the
//!   subnormals) and NaN; `y = 1` gives `d = inf` and ±inf, `y > 1` a negative `a` below -1 and
//!   NaN.
//!
//! f32 is the same on F32X4 in single precision, on `f32x4::log1p_core` (the argument scaled by
//! `2^-k`, a division-free kernel, without log1p's TwoSum), with musl's edges 2^-12 and 2^12 for
//! 2^-28 and 2^28 (`asinhf`, `acoshf`, `atanhf`).
//!
//! Measured against libm (`jit/tests/accuracy.rs`) and against mpmath's correctly rounded values
//! (`tests/math_accuracy.rs`): see [`crate::math`]'s bounds. f32 over every bit pattern against
//! std's f64 functions rounded (`examples/ulp32.rs`): max 2 ULP each (5,290, 3,007 and 5,078
//! results 2 ULP off for arcsinh, arccosh, arctanh with log1p's TwoSum, 16,472, 4,578 and 26,816
//! without: the argument's roundings, about a ULP, and log1p's).

use super::Vb;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// 2^-28: below it each function is `x` to within half an ULP (fdlibm's threshold).
pub(crate) const TINY: f64 = 3.725290298461914e-9;
/// 2^28: from it arcsinh and arccosh are `log(2|x|)` to within half an ULP.
pub(crate) const HUGE: f64 = 268435456.0;
/// f32's: 2^-12 and 2^12 (musl's `asinhf`, `acoshf`, `atanhf`).
pub(crate) const TINY_F32: f64 = 2.44140625e-4;
pub(crate) const HUGE_F32: f64 = 4096.0;

/// `(TINY, HUGE)` of the precision of `v`.
fn edges(v: &Vb<'_, '_>) -> (f64, f64) {
    if v.f32 { (TINY_F32, HUGE_F32) } else { (TINY, HUGE) }
}

/// The log1p core of the precision of `v` (`log::log1p_core`, `f32x4::log1p_core`).
fn log1p_core(v: &mut Vb<'_, '_>, a: Value, kextra: Option<Value>) -> Value {
    if v.f32 {
        super::f32x4::log1p_core(v, a, kextra, false)
    } else {
        super::log::log1p_core(v, a, kextra)
    }
}

pub(crate) fn asinh(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let (tiny, huge) = edges(v);
    let y = v.abs(x);
    let y2 = v.mul(y, y);
    let q = v.addc(y2, 1.0);
    let q = v.sqrt(q);
    let small = v.cmpc(LessThan, y, 2.0);
    let huge = v.cmpc(GreaterThanOrEqual, y, huge);
    // one division: y²/(1 + q) below 2, 1/(q + y) above
    let one = v.c(1.0);
    let num = v.sel(small, y2, one);
    let q1 = v.addc(q, 1.0);
    let qy = v.add(q, y);
    let den = v.sel(small, q1, qy);
    let t = v.div(num, den);
    let a_small = v.add(y, t);
    let w = v.add(y, y);
    let w = v.add(w, t);
    let a_big = v.addc(w, -1.0);
    let a = v.sel(small, a_small, a_big);
    let a_huge = v.addc(y, -1.0);
    let a = v.sel(huge, a_huge, a);
    let zero = v.c(0.0);
    let ke = v.sel(huge, one, zero);
    let r = log1p_core(v, a, Some(ke));
    let r = v.copysign(r, x);
    // x itself where |x| < 2^-28, NaN and ±inf
    let big_enough = v.cmpc(GreaterThanOrEqual, y, tiny);
    let fin = v.cmpc(LessThan, y, f64::INFINITY);
    let ok = v.and(big_enough, fin);
    v.sel(ok, r, x)
}

pub(crate) fn acosh(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let (_, huge) = edges(v);
    let t = v.addc(x, -1.0);
    let small = v.cmpc(LessThan, x, 2.0);
    let huge = v.cmpc(GreaterThanOrEqual, x, huge);
    // one square root: of t² + 2t below 2, of x² - 1 above
    let t2 = v.add(t, t);
    let ss = v.fma(t, t, t2);
    let m1 = v.c(-1.0);
    let sb = v.fma(x, x, m1);
    let sq = v.sel(small, ss, sb);
    let sq = v.sqrt(sq);
    let a_small = v.add(t, sq);
    let one = v.c(1.0);
    let w = v.add(x, sq);
    let a_big = v.addc(w, -1.0);
    let a = v.sel(small, a_small, a_big);
    let a = v.sel(huge, t, a);
    let zero = v.c(0.0);
    let ke = v.sel(huge, one, zero);
    let r = log1p_core(v, a, Some(ke));
    // x >= 1 and finite: r; x = inf: inf; x < 1 and NaN: NaN
    let ge1 = v.cmpc(GreaterThanOrEqual, x, 1.0);
    let fin = v.cmpc(LessThan, x, f64::INFINITY);
    let ok = v.and(ge1, fin);
    let inf = v.cmpc(Equal, x, f64::INFINITY);
    let sp = v.selc(inf, f64::INFINITY, x);
    let bad = v.cmpc(UnorderedOrLessThan, x, 1.0);
    let nan = v.c(super::INVALID);
    let sp = v.sel(bad, nan, sp);
    v.sel(ok, r, sp)
}

pub(crate) fn atanh(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let (tiny, _) = edges(v);
    let y = v.abs(x);
    let one = v.c(1.0);
    let den = v.sub(one, y);
    let d = v.div(y, den);
    let y2 = v.add(y, y);
    let a_small = v.fma(y2, d, y2);
    let a_big = v.add(d, d);
    let small = v.cmpc(LessThan, y, 0.5);
    let a = v.sel(small, a_small, a_big);
    let r = log1p_core(v, a, None);
    let r = v.mulc(r, 0.5);
    let r = v.copysign(r, x);
    // |x| = 1: ±inf; |x| > 1: NaN; |x| < 2^-28 and NaN: x
    let is1 = v.cmpc(Equal, y, 1.0);
    let inf = v.c(f64::INFINITY);
    let sinf = v.copysign(inf, x);
    let r = v.sel(is1, sinf, r);
    let over = v.cmpc(GreaterThan, y, 1.0);
    let r = v.selc(over, super::INVALID, r);
    let tiny = v.cmpc(UnorderedOrLessThan, y, tiny);
    v.sel(tiny, x, r)
}
