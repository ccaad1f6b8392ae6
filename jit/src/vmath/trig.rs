//! sin, cos, tan on F64X2 (f32 sin, cos and tan are native in `f32x4.rs`).
//!
//! Reduction (Cody-Waite with FMA, for |x| <= 2^20): `q = nearest(x·2/pi)` (an fma adding 1.5·2^52,
//! whose bits hold `q mod 4`), then `x - q·pi/2` as a double-double `y = yh + yl`, with pi/2 split in
//! C1 (53 bits) + C2 (33 bits) + C3 (139 bits in all): `x - q·C1` is one exact `fma` (both are
//! multiples of 2^-53 and the difference is below 1), `q·C2` is exact, and so is the remainder of
//! `r1 - q·C2` by Fast2Sum's steps (where |r1| < |q·C2| the difference itself is exact: both are
//! multiples of 2^-86 and it is below 2^-33); `q·C3` goes into the tail, and Fast2Sum normalises the
//! pair. For q < 2^20 the reduced argument is within about 2^-121.8 + 2^-106·|y| of `x - q·pi/2`
//! (the split's remainder times q, and the tail's rounding), far below 2^-53·|y| at the worst
//! cancellation (|y| >= 2^-60.5 below 2^20, at x = 0x1.6c6cbc45dc8dep+5; measured against the old
//! 159-bit split over 54 million doubles next to multiples of pi/2: within 2^-70 relative).
//! Larger |x| (and ±inf) take a per-lane call of the host libm (glibc's Payne-Hanek reduction), on a
//! branch taken only when some lane needs it: sin(1e300) is right, not garbage.
//!
//! Kernels: fdlibm's `__kernel_sin`, `__kernel_cos` (Remez polynomials S1..S6, C1..C6 on [-pi/4, pi/4],
//! errors below 2^-58 and 2^-58.3 as fdlibm states), each taking the tail `yl`; the quadrant
//! `q mod 4` picks the kernel and the sign lane by lane. Coefficients from FreeBSD msun `k_sin.c`,
//! `k_cos.c` (Sun Microsystems 1993, freely granted with this notice preserved), as carried by musl
//! and the Rust `libm` crate. fdlibm states errors below 1 ULP.
//!
//! tan is Cephes' rational `tan(y) = y·(D + M)/D` (degree 4 and 3 in `y²`, within 2^-55.7 of tan on
//! |y| <= pi/4 with its coefficients as doubles), and `-cot(y) = -D/(y·(D + M))` in odd quadrants: one division per lane, the lane's
//! case picking numerator and denominator. The quotient `q` is then corrected by its remainder
//! against the unrounded numerator and denominator (computed exactly enough by fused multiply-adds:
//! `yh - q` is exact, and `1 + q·yh` is small), `q + rho/den`, and by the tail, `yl·(1 + q²)`. Where
//! fdlibm's kernel (a polynomial of degree 12 and fdlibm's own division) took 2.58 ns an element at
//! full width on AVX-512, this takes 1.66, at the same accuracy. Measured against glibc over 40
//! million points (in [-1e4, 1e4], [-1e6, 1e6] and next to multiples of pi/2): sin, cos, tan max 1 ULP.
//! |x| < 2^-27 returns x for sin and tan (keeping -0.0); NaN and ±inf give NaN.

use super::Vb;
use crate::host::MathFn;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};

pub(crate) const TWO_OVER_PI: f64 = 0.6366197723675814;
pub(crate) const C1: f64 = 1.5707963267948966;
/// The next 33 bits of pi/2: `q·C2` is exact for q < 2^20.
pub(crate) const C2: f64 = 6.12323399538461e-17;
pub(crate) const C3: f64 = 3.5215598651832e-27;
/// 1.5·2^52: `x + ROUNDER` rounds `x` (|x| < 2^51) to an integer held in the low bits.
pub(crate) const ROUNDER: f64 = 6755399441055744.0;
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
/// tan's rational `tan(y) = y·(D + M)/D` on |y| <= pi/4, `D = 1 + z·(...)` and `M = z·(...)` in
/// `z = y²` (coefficients ascending): Cephes' `tan.c` (Stephen L. Moshier, Cephes Math Library 2.8,
/// freely usable as its README states), `x + x·z·P(z)/Q(z)`, its `P` and `Q` divided by `Q`'s
/// constant term. With Cephes' decimal coefficients the rational is within 2^-65 of tan
/// (relative, mpmath); with these doubles, 2^-55.7 at |y| = pi/4 (their rounding, about 0.1 ULP).
pub(crate) const TAN_D: [f64; 5] = [
    1.0,
    -0.46423941356632453,
    0.024520192146735387,
    -0.00025397074687295184,
    -1.8563353971011345e-08,
];
pub(crate) const TAN_M: [f64; 3] = [0.3333333333333333, -0.021413137855441616, 0.00024306287499048116];

/// `(yh, yl, n)`: `x - q·pi/2 = yh + yl`, `n = q mod 4` as I64X2.
fn reduce(v: &mut Vb<'_, '_>, x: Value) -> (Value, Value, Value) {
    // q = nearest(x·2/pi) by adding 1.5·2^52, whose bits then hold q's low bits
    let two_over_pi = v.c(TWO_OVER_PI);
    let magic = v.c(ROUNDER);
    let t = v.fma(x, two_over_pi, magic);
    let q = v.sub(t, magic);
    let nq = v.neg(q);
    let c1 = v.c(C1);
    let r1 = v.fma(nq, c1, x);
    // q·C2 is exact, and so is r1 - p's remainder: Fast2Sum where |r1| >= |p|, else r1 - p itself
    // is exact (both are multiples of 2^-86 and the difference is below 2^-33)
    let p = v.mulc(q, C2);
    let r2 = v.sub(r1, p);
    let d = v.sub(r1, r2);
    let e = v.sub(d, p);
    let c3 = v.c(C3);
    let lo = v.fma(nq, c3, e);
    let (yh, yl) = v.fast_two_sum(r2, lo);
    let tb = v.bits(t);
    let n = v.andc(tb, 3);
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
    let (yh, yl, n) = reduce(v, x);
    let odd = bit(v, n, 1);
    let z = v.mul(yh, yh);
    let d = v.poly(z, &TAN_D);
    let m = v.poly(z, &TAN_M);
    let m = v.mul(m, z);
    // tan(yh) = yh·(d + m)/d, and -cot(yh) = -d/(yh·(d + m)): one division, the lane's case picks
    // the quotient
    let e = v.add(d, m);
    let ye = v.mul(yh, e);
    let nd = v.neg(d);
    let num = v.sel(odd, nd, ye);
    let den = v.sel(odd, ye, d);
    let one = v.c(1.0);
    let inv = v.div(one, den);
    let q = v.mul(num, inv);
    // the remainder of q against the unrounded rational: even, yh·d + yh·m - q·d (yh - q is exact,
    // q/yh is in [1, 1.28]); odd, -d - q·yh·(d + m) = -(d·(1 + q·yh) + q·yh·m)
    let ym = v.mul(yh, m);
    let yq = v.sub(yh, q);
    let rho_even = v.fma(yq, d, ym);
    let a = v.fma(q, yh, one);
    let qy = v.mul(q, yh);
    let qym = v.mul(qy, m);
    let rho_odd = v.fma(d, a, qym);
    let rho_odd = v.neg(rho_odd);
    let rho = v.sel(odd, rho_odd, rho_even);
    // yl moves tan (and -cot) by yl·(1 + q²)
    let q2 = v.fma(q, q, one);
    let lt = v.mul(yl, q2);
    let c = v.fma(rho, inv, lt);
    let res = v.add(q, c);
    let ax = v.abs(x);
    let tiny = v.cmpc(FloatCC::LessThan, ax, TINY);
    let res = v.sel(tiny, x, res);
    let h = huge(v, x);
    v.slow_path(h, MathFn::Tan, x, res)
}
