//! pow on F64X2: C99 `pow` with Annex F's special cases; and pow of f32 values by an f32 algorithm
//! computed in f64 ([`pow_f32`]).
//!
//! Method: `|x|^y = e^(y·log|x|)` with `log|x|` as a double-double (`log::log_dd`, relative error near
//! 2^-65), the product `y·log|x|` as a double-double (`fma` residual), and the exp of that pair
//! (`exp::exp_dd`: the low part is added to the reduced argument). The sign and the special cases are
//! lane selects: a negative base with an odd integer exponent flips the sign, with a non-integer
//! exponent gives NaN; `pow(x, ±0) = 1` and `pow(1, y) = 1` even for NaN, `pow(-1, ±inf) = 1`;
//! zeros and infinities of either operand follow from `log(0) = -inf`, `log(inf) = inf` and
//! `e^±inf`. Coefficients: Taylor series (exact facts). Measured against glibc over a million
//! points (x in [0, 100], y in [-30, 30], plus negative bases with integer exponents): max 1 ULP.
//!
//! **Cost.** The f64 kernel is inline and has no call; what makes it slow (18 ns per element from
//! Python, where exp is 1.2) is its size: `kiln explain --asm "y ** x"` shows about 170
//! instructions per F64X2 vector (two elements), two of them divisions, and its thirty-odd constants
//! outnumber the 16 XMM registers, so most are reloaded from the stack in every iteration. The
//! double-double log is what the 1 ULP bound costs (an error of 2^-53 in `log|x|` becomes
//! `|y·log|x||·2^-53`, up to 745 times that, in the result). f32 needs no double-double:
//! [`pow_f32`] is about half the work.
//! Measured on this branch (AVX-512 host under heavy load, N = 1e6, the minimum of 25 calls,
//! `run_into`; NumPy and numexpr one thread in the same window): `x ** y` f64 13.8 ns/elem with the
//! wide routine (NumPy 2.9, numexpr 32), f32 3.5 (NumPy 0.8, numexpr 10.2): short of NumPy's
//! table-driven AVX-512 loops by 4-5x; a cheaper f64 log (one division, no double-double tail)
//! is what is left to try.

use super::Vb;
use super::exp::exp_dd;
use super::log::log_dd;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

pub(crate) fn pow(v: &mut Vb<'_, '_>, x: Value, y: Value) -> Value {
    use FloatCC::*;
    let ax = v.abs(x);
    let (lh, ll) = log_dd(v, ax);
    let (ok, sp) = log_edges(v, ax);
    let lh = v.sel(ok, lh, sp);
    let z0 = v.c(0.0);
    let ll = v.sel(ok, ll, z0);
    // y·log|x| as zh + zl
    let zh = v.mul(y, lh);
    let nzh = v.neg(zh);
    let zl = v.fma(y, lh, nzh);
    let zl = v.fma(y, ll, zl);
    let azh = v.abs(zh);
    // beyond the range of exp the low part is meaningless (and may be huge or NaN)
    let zfin = v.cmpc(LessThan, azh, 2000.0);
    let zl = v.sel(zfin, zl, z0);
    let r = exp_dd(v, zh, Some(zl));
    annex_f(v, x, y, r)
}

/// `2/(2j+1)`, j = 0..=6: `log(1+f) = s·Σ 2/(2j+1)·s^(2j)` for `s = f/(2+f)` (Taylor series of
/// `2·atanh(s)`, exact facts; truncated below 2^-39 relative for |s| <= 0.1716).
pub(crate) const LOG_F32: [f64; 7] = [
    2.0,
    0.6666666666666666,
    0.4,
    0.2857142857142857,
    0.2222222222222222,
    0.18181818181818182,
    0.15384615384615385,
];

/// pow of f32 values widened to F64X2, for a result rounded once to f32 by the caller: `|x|^y =
/// e^(y·log|x|)` in plain f64, without pow's double-doubles. `log|x| = k·ln2 + s·P(s²)` (`s = f/(2+f)`,
/// [`LOG_F32`]; a positive finite f32 is a normal f64, so no subnormal scaling), its relative error
/// near 2^-39; `y·log|x|` rounded once; f64 exp (`exp::exp_dd`, 2^-55, with its general path for
/// overflow and underflow); so the f64 result is within 2^-31 of `x^y` (relative) wherever the
/// f32 result is finite and nonzero, and the rounding to f32 gives the correctly rounded value but
/// in near-halfway cases. The sign and C99's special cases are [`annex_f`]'s, as in f64. Measured
/// against the interpreter's `powf` over the sweeps of `tests/accuracy.rs`: max 1 ULP.
pub(crate) fn pow_f32(v: &mut Vb<'_, '_>, x: Value, y: Value) -> Value {
    let ax = v.abs(x);
    let (f, k) = super::log::reduce_normal(v, ax);
    let two = v.addc(f, 2.0);
    let s = v.div(f, two);
    let z = v.mul(s, s);
    let p = v.poly(z, &LOG_F32);
    let kl = v.mulc(k, std::f64::consts::LN_2);
    let l = v.fma(s, p, kl);
    let (ok, sp) = log_edges(v, ax);
    let l = v.sel(ok, l, sp);
    let t = v.mul(y, l);
    let r = exp_dd(v, t, None);
    annex_f(v, x, y, r)
}

/// `(ok, sp)` for `ax = |x|`: the lanes where `log ax` is computed (positive and finite), and the
/// value of the others (`log 0 = -inf`, `log inf = inf`, NaN for NaN).
fn log_edges(v: &mut Vb<'_, '_>, ax: Value) -> (Value, Value) {
    use FloatCC::*;
    let pos = v.cmpc(GreaterThan, ax, 0.0);
    let fin = v.cmpc(LessThan, ax, f64::INFINITY);
    let ok = v.and(pos, fin);
    let zero = v.cmpc(Equal, ax, 0.0);
    (ok, v.selc(zero, f64::NEG_INFINITY, ax))
}

/// `r = |x|^y` given the sign and C99 Annex F's special cases: a negative base (the sign bit, so
/// -0.0 and -inf too) with an odd integer exponent flips the sign, a finite negative base with a
/// non-integer exponent gives NaN, and `pow(x, ±0) = 1`, `pow(1, y) = 1`, `pow(-1, ±inf) = 1`.
fn annex_f(v: &mut Vb<'_, '_>, x: Value, y: Value, r: Value) -> Value {
    use FloatCC::*;
    let mut r = r;
    // the sign: negative base (the sign bit, so -0.0 and -inf too) with an odd integer exponent
    let ty = v.trunc(y);
    let yint = v.cmp(Equal, ty, y);
    let hy = v.mulc(y, 0.5);
    let thy = v.trunc(hy);
    let even = v.cmp(Equal, thy, hy);
    let neven = v.not(even);
    let yodd = v.and(yint, neven);
    let negx = v.sign_mask(x);
    let flip = v.and(negx, yodd);
    let nr = v.neg(r);
    r = v.sel(flip, nr, r);
    // a finite negative base with a non-integer exponent: NaN
    let xneg = v.cmpc(LessThan, x, 0.0);
    let xfin = v.cmpc(GreaterThan, x, f64::NEG_INFINITY);
    let bad = v.and(xneg, xfin);
    let nyint = v.not(yint);
    let bad = v.and(bad, nyint);
    r = v.selc(bad, super::INVALID, r);
    // pow(x, ±0) = 1, pow(1, y) = 1, pow(-1, ±inf) = 1
    let y0 = v.cmpc(Equal, y, 0.0);
    let x1 = v.cmpc(Equal, x, 1.0);
    let xm1 = v.cmpc(Equal, x, -1.0);
    let ay = v.abs(y);
    let yinf = v.cmpc(Equal, ay, f64::INFINITY);
    let m = v.and(xm1, yinf);
    let one = v.or(y0, x1);
    let one = v.or(one, m);
    v.selc(one, 1.0, r)
}
