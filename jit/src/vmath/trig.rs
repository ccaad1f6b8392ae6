//! sin, cos, tan on F64X2 (f32 sin, cos and tan are native in `f32x4.rs`).
//!
//! Reduction (Cody-Waite with FMA, for |x| <= 2^20): `q = nearest(x·2/pi)`, then `x - q·pi/2` as a
//! double-double `y = yh + yl`, with pi/2 split in three doubles C1 + C2 + C3 (159 bits): `x - q·C1` is
//! one exact `fma` (both are multiples of 2^-53 and the difference is below 1), `q·C2` is split exactly
//! by an `fma` and added by TwoSum, `q·C3` goes into the tail. For q < 2^20 the reduced argument keeps
//! far more than the 2^-116 relative accuracy the kernels need, even at the worst cancellations.
//! Larger |x| (and ±inf) take a per-lane call of the host libm (glibc's Payne-Hanek reduction), on a
//! branch taken only when some lane needs it: sin(1e300) is right, not garbage.
//!
//! Kernels: fdlibm's `__kernel_sin`, `__kernel_cos` (Remez polynomials S1..S6, C1..C6 on [-pi/4, pi/4],
//! errors below 2^-58 and 2^-58.3 as fdlibm states) and `__kernel_tan` (T0..T12, with the pi/4 - y
//! transformation above 0.6744 and the careful -1/tan), each taking the tail `yl`; the quadrant
//! `q mod 4` picks the kernel and the sign lane by lane. Coefficients from FreeBSD msun `k_sin.c`,
//! `k_cos.c`, `k_tan.c` (Sun Microsystems 1993, freely granted with this notice preserved), as carried
//! by musl and the Rust `libm` crate. fdlibm states errors below 1 ULP. tan takes one division per
//! lane where fdlibm's branches take two: the lane's case picks the quotient (`w²/(w ± 1)` above
//! 0.6744, `-1/w` below, in odd quadrants), and `-1/(w + tl)` is corrected by fused multiply-adds
//! (`q + q·(1 + q·w + q·tl)`, the remainder `1 + q·w` exact) instead of fdlibm's split halves. Measured against glibc over a
//! million points in [-1e4, 1e4] (and beyond, through the slow path): sin, cos, tan max 1 ULP.
//! |x| < 2^-27 returns x for sin and tan (keeping -0.0); NaN and ±inf give NaN.

use super::Vb;
use crate::host::MathFn;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};

pub(crate) const TWO_OVER_PI: f64 = 0.6366197723675814;
pub(crate) const C1: f64 = 1.5707963267948966;
pub(crate) const C2: f64 = 6.123233995736766e-17;
pub(crate) const C3: f64 = -1.4973849048591698e-33;
/// Above this, the reduction is left to libm.
pub(crate) const REDUCE_MAX: f64 = 1048576.0;
/// Below this, sin(x) and tan(x) round to x.
pub(crate) const TINY: f64 = 7.450580596923828e-9;

pub(crate) const S: [f64; 6] = [
    -1.66666666666666324348e-01,
    8.33333333332248946124e-03,
    -1.98412698298579493134e-04,
    2.75573137070700676789e-06,
    -2.50507602534068634195e-08,
    1.58969099521155010221e-10,
];
pub(crate) const C: [f64; 6] = [
    4.16666666666666019037e-02,
    -1.38888888888741095749e-03,
    2.48015872894767294178e-05,
    -2.75573143513906633035e-07,
    2.08757232129817482790e-09,
    -1.13596475577881948265e-11,
];
pub(crate) const T: [f64; 13] = [
    3.33333333333334091986e-01,
    1.33333333333201242699e-01,
    5.39682539762260521377e-02,
    2.18694882948595424599e-02,
    8.86323982359930005737e-03,
    3.59207910759131235356e-03,
    1.45620945432529025516e-03,
    5.88041240820264096874e-04,
    2.46463134818469906812e-04,
    7.81794442939557092300e-05,
    7.14072491382608190305e-05,
    -1.85586374855275456654e-05,
    2.59073051863633712884e-05,
];
pub(crate) const PIO4: f64 = 7.85398163397448278999e-01;
pub(crate) const PIO4_LO: f64 = 3.06161699786838301793e-17;

/// `(yh, yl, n)`: `x - q·pi/2 = yh + yl`, `n = q mod 4` as I64X2.
fn reduce(v: &mut Vb<'_, '_>, x: Value) -> (Value, Value, Value) {
    let t = v.mulc(x, TWO_OVER_PI);
    let q = v.nearest(t);
    let nq = v.neg(q);
    let c1 = v.c(C1);
    let r1 = v.fma(nq, c1, x);
    let c2 = v.c(C2);
    let p = v.mul(q, c2);
    let np = v.neg(p);
    let pe = v.fma(q, c2, np);
    let (s, e1) = v.two_sum(r1, np);
    let c3 = v.c(C3);
    let lo = v.sub(e1, pe);
    let lo = v.fma(nq, c3, lo);
    let (yh, yl) = v.fast_two_sum(s, lo);
    let qi = v.int_of(q);
    let n = v.andc(qi, 3);
    (yh, yl, n)
}

/// fdlibm's `__kernel_sin(x, y, 1)`.
fn k_sin(v: &mut Vb<'_, '_>, x: Value, y: Value) -> Value {
    let z = v.mul(x, x);
    let w = v.mul(z, z);
    let r1 = v.poly(z, &S[1..4]);
    let r2 = v.poly(z, &S[4..6]);
    let zw = v.mul(z, w);
    let r2 = v.mul(zw, r2);
    let r = v.add(r1, r2);
    let vv = v.mul(z, x);
    // x - ((z*(0.5*y - v*r) - y) - v*S1)
    let hy = v.mulc(y, 0.5);
    let vr = v.mul(vv, r);
    let a = v.sub(hy, vr);
    let a = v.mul(z, a);
    let a = v.sub(a, y);
    let vs = v.mulc(vv, S[0]);
    let a = v.sub(a, vs);
    v.sub(x, a)
}

/// fdlibm's `__kernel_cos(x, y)`.
fn k_cos(v: &mut Vb<'_, '_>, x: Value, y: Value) -> Value {
    let z = v.mul(x, x);
    let w = v.mul(z, z);
    let r1 = v.poly(z, &C[0..3]);
    let r1 = v.mul(z, r1);
    let r2 = v.poly(z, &C[3..6]);
    let ww = v.mul(w, w);
    let r2 = v.mul(ww, r2);
    let r = v.add(r1, r2);
    let hz = v.mulc(z, 0.5);
    let one = v.c(1.0);
    let w = v.sub(one, hz);
    // w + (((1.0 - w) - hz) + (z*r - x*y))
    let a = v.sub(one, w);
    let a = v.sub(a, hz);
    let zr = v.mul(z, r);
    let xy = v.mul(x, y);
    let b = v.sub(zr, xy);
    let a = v.add(a, b);
    v.add(w, a)
}

/// A lane mask: bit `bit` of `n` set.
fn bit(v: &mut Vb<'_, '_>, n: Value, bit: i64) -> Value {
    let m = v.andc(n, bit);
    let b = v.ci(bit);
    v.icmp(IntCC::Equal, m, b)
}

/// Flips the sign of the lanes where bit 1 of `n` is set.
fn flip(v: &mut Vb<'_, '_>, r: Value, n: Value) -> Value {
    let s = v.andc(n, 2);
    let s = v.shl(s, 62);
    let rb = v.bits(r);
    let rb = v.xor(rb, s);
    v.float(rb)
}

fn huge(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let ax = v.abs(x);
    v.cmpc(FloatCC::GreaterThan, ax, REDUCE_MAX)
}

pub(crate) fn sin(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let (yh, yl, n) = reduce(v, x);
    let s = k_sin(v, yh, yl);
    let c = k_cos(v, yh, yl);
    let odd = bit(v, n, 1);
    let r = v.sel(odd, c, s);
    let r = flip(v, r, n);
    let ax = v.abs(x);
    let tiny = v.cmpc(FloatCC::LessThan, ax, TINY);
    let r = v.sel(tiny, x, r);
    let h = huge(v, x);
    v.slow_path(h, MathFn::Sin, x, r)
}

pub(crate) fn cos(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let (yh, yl, n) = reduce(v, x);
    let s = k_sin(v, yh, yl);
    let c = k_cos(v, yh, yl);
    let odd = bit(v, n, 1);
    let r = v.sel(odd, s, c);
    let n1 = v.iaddc(n, 1);
    let r = flip(v, r, n1);
    let h = huge(v, x);
    v.slow_path(h, MathFn::Cos, x, r)
}

pub(crate) fn tan(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let (yh, yl, n) = reduce(v, x);
    let odd = bit(v, n, 1);
    // __kernel_tan(yh, yl, odd), branches as selects
    let ay = v.abs(yh);
    let big = v.cmpc(GreaterThanOrEqual, ay, f64::from_bits(0x3FE5942800000000));
    let neg = v.sign_mask(yh);
    let nyl = v.neg(yl);
    let yls = v.sel(neg, nyl, yl);
    let pio4 = v.c(PIO4);
    let a = v.sub(pio4, ay);
    let pio4lo = v.c(PIO4_LO);
    let b = v.sub(pio4lo, yls);
    let xb = v.add(a, b);
    let x1 = v.sel(big, xb, yh);
    let zero = v.c(0.0);
    let y1 = v.sel(big, zero, yl);
    let z = v.mul(x1, x1);
    let w = v.mul(z, z);
    let r = v.poly(w, &[T[1], T[3], T[5], T[7], T[9], T[11]]);
    let vv = v.poly(w, &[T[2], T[4], T[6], T[8], T[10], T[12]]);
    let vv = v.mul(z, vv);
    let s = v.mul(z, x1);
    // r = y + z*(s*(r + v) + y) + s*T0
    let rv = v.add(r, vv);
    let a = v.mul(s, rv);
    let a = v.add(a, y1);
    let a = v.mul(z, a);
    let a = v.add(y1, a);
    let st = v.mulc(s, T[0]);
    let r = v.add(a, st);
    let w = v.add(x1, r);
    // x1 + r = w + tl exactly (|x1| >= |r|)
    let d = v.sub(w, x1);
    let tl = v.sub(r, d);
    // one division, the one the lane's case needs: big, fdlibm's w²/(w + s) with s = 1 - 2*odd;
    // small, -1/w (odd lanes; the even ones do not use it)
    let one = v.c(1.0);
    let mone = v.c(-1.0);
    let sg = v.sel(odd, mone, one);
    let ww = v.mul(w, w);
    let ws = v.add(w, sg);
    let num = v.sel(big, ww, mone);
    let den = v.sel(big, ws, w);
    let q = v.div(num, den);
    // big: v = s - 2*(x + (r - w*w/(w + s))), the sign of yh
    let qb = v.sub(r, q);
    let qb = v.add(x1, qb);
    let qb = v.mulc(qb, 2.0);
    let vb = v.sub(sg, qb);
    let nvb = v.neg(vb);
    let r_big = v.sel(neg, nvb, vb);
    // odd: -1/(w + tl) = q + q·f with f = 1 + q·(w + tl) (the remainder 1 + q·w is exact)
    let f = v.fma(q, w, one);
    let f = v.fma(q, tl, f);
    let r_odd = v.fma(q, f, q);
    let r_small = v.sel(odd, r_odd, w);
    let res = v.sel(big, r_big, r_small);
    let ax = v.abs(x);
    let tiny = v.cmpc(LessThan, ax, TINY);
    let res = v.sel(tiny, x, res);
    let h = huge(v, x);
    v.slow_path(h, MathFn::Tan, x, res)
}
