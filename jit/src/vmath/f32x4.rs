//! exp, log, sin and cos natively on F32X4 (four lanes at once, computed in f32); the other f32
//! functions are computed by widening to F64X2.
//!
//! **exp**: as `exp.rs` in single precision: `k = nearest(x·log2(e))`, `r = x - k·ln2` by Cody-Waite
//! with FMA (ln2 split in two floats; the first `fma` is exact), `e^r = 1 + (r + r²·Q(r))` with `Q` of
//! degree 4 fitted here (Chebyshev interpolation in mpmath, coefficients rounded to f32; relative
//! error of the polynomial 2^-26.5), `k` added into the exponent field. Vectors with a lane of
//! |x| >= 87 or NaN take the general path: x clamped to [-104, 89], two exact scalings (subnormal
//! results rounded once, overflow to inf). Measured against the `libm` crate's `expf` over a million
//! points in [-103.9, 88.7]: max 1 ULP.
//!
//! **log**: musl's `logf` (fdlibm's `e_logf.c`, via the Rust `libm` crate): `x = 2^k·(1+f)` with
//! `1 + f` in [sqrt(2)/2, sqrt(2)) by integer arithmetic on the bits, `s = f/(2+f)`,
//! `log(1+f) = f - hfsq + s·(hfsq + R(s²))` with fdlibm's single-precision Lg1..Lg4 (by Horner's
//! rule, and with two products fused), `k·ln2` added in two parts. Vectors with a lane that is subnormal, zero, negative, inf or NaN take the general
//! path (subnormals scaled by 2^25, special values selected). musl states an error below 1 ULP;
//! measured against `logf` over a million points: max 1 ULP.
//!
//! **sin, cos**: `q = nearest(x·2/pi)`, `r = x - q·pi/2` by Cody-Waite with FMA and pi/2 in three
//! floats (the first `fma` exact), for |x| <= 2^16; beyond (and ±inf) a per-lane call of the host
//! `sinf` / `cosf` on a branch taken only when needed. `sin r = r + r³·S(r²)`, `cos r = 1 + r²·C(r²)`
//! with musl's `__sindf` / `__cosdf` coefficients (fdlibm's `k_sinf.c`, `k_cosf.c`, Remez fits with
//! errors 2^-37.5 and 2^-34.5 in double) rounded to f32, and the quadrant `q mod 4` choosing the
//! kernel and the sign. |x| < 2^-12 returns x for sin (keeping -0.0). Measured against `sinf` /
//! `cosf` over a million points in [-1e4, 1e4] (and beyond, through the slow path): max 1 ULP.

use super::Vb;
use super::exp::{ExpConsts, exp_with};
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// f32 exp (`exp.rs`'s algorithm): ln 2 in two floats (the float nearest ln 2, and the float nearest
/// the rest); `Q` of degree 4, f32 coefficients; the general path from |x| >= 87, clamped to
/// [-104, 89].
pub(crate) const F32: ExpConsts = ExpConsts {
    log2e: 1.4426950216293335,
    ln2_hi: 0.6931471824645996,
    ln2_lo: -1.9046542121259336e-09,
    q: &[
        0.5,
        0.16666576266288757,
        0.04166655242443085,
        0.00836323294788599,
        0.0013926250394433737,
    ],
    edge: 87.0,
    clamp: (-104.0, 89.0),
};

pub(crate) fn exp(v: &mut Vb<'_, '_>, x: Value) -> Value {
    exp_with(v, &F32, x, None)
}

pub(crate) const LG: [f64; 4] = [0.66666662693, 0.40000972152, 0.28498786688, 0.24279078841];
pub(crate) const FD_LN2_HI: f64 = 6.9313812256e-01;
pub(crate) const FD_LN2_LO: f64 = 9.0580006145e-06;
pub(crate) const MIN_NORMAL: f64 = 1.1754943508222875e-38;

/// musl's `logf` for positive normal finite `x`.
fn log_normal(v: &mut Vb<'_, '_>, x: Value, kadj: Option<Value>) -> Value {
    let u = v.bits(x);
    let u = v.iaddc(u, 0x3f800000 - 0x3f3504f3);
    let e = v.ushr(u, 23);
    // (e - 0x7f) as a float: the bits of 1.5·2^23 + e - 0x7f, minus 1.5·2^23
    let kb = v.iaddc(e, 0x4b40_0000 - 0x7f);
    let kf = v.float(kb);
    let mut k = v.addc(kf, -12582912.0);
    if let Some(a) = kadj {
        k = v.add(k, a);
    }
    let m = v.andc(u, 0x007f_ffff);
    let m = v.iaddc(m, 0x3f3504f3);
    let m = v.float(m);
    let f = v.addc(m, -1.0);
    let two = v.addc(f, 2.0);
    let s = v.div(f, two);
    // R = z·(Lg1 + z·(Lg2 + z·(Lg3 + z·Lg4))) by Horner's rule (fewer instructions than musl's two
    // chains in z²)
    let z = v.mul(s, s);
    let r = v.poly(z, &LG);
    let r = v.mul(z, r);
    let half = v.mulc(f, 0.5);
    let hfsq = v.mul(half, f);
    // s*(hfsq+R) + dk*ln2_lo - hfsq + f + dk*ln2_hi, two products fused (k·ln2_hi is exact)
    let a = v.add(hfsq, r);
    let b = v.mulc(k, FD_LN2_LO);
    let a = v.fma(s, a, b);
    let a = v.sub(a, hfsq);
    let a = v.add(a, f);
    let c = v.c(FD_LN2_HI);
    v.fma(k, c, a)
}

pub(crate) fn log(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let fast = log_normal(v, x, None);
    let small = v.cmpc(UnorderedOrLessThan, x, MIN_NORMAL);
    let inf = v.cmpc(Equal, x, f64::INFINITY);
    let edge = v.or(small, inf);
    v.guard(edge, fast, |v| {
        let fin = v.cmpc(LessThan, x, f64::INFINITY);
        let sub = v.cmpc(LessThan, x, MIN_NORMAL);
        let xs = v.mulc(x, 33554432.0); // 2^25
        let xx = v.sel(sub, xs, x);
        let m25 = v.c(-25.0);
        let zero = v.c(0.0);
        let kadj = v.sel(sub, m25, zero);
        let y = log_normal(v, xx, Some(kadj));
        // log(±0) = -inf, log(x < 0) = NaN, log(inf) = inf, log(NaN) = NaN
        let pos = v.cmpc(GreaterThan, x, 0.0);
        let ok = v.and(pos, fin);
        let neg = v.cmpc(LessThan, x, 0.0);
        let sp = v.selc(neg, super::INVALID, x);
        let zero = v.cmpc(Equal, x, 0.0);
        let sp = v.selc(zero, f64::NEG_INFINITY, sp);
        v.sel(ok, y, sp)
    })
}

// ---------------------------------------------------------------------------------------------
// sin and cos

/// pi/2 in three floats (72 bits), and 2/pi rounded to f32.
pub(crate) const PIO2_1: f64 = 1.5707963705062866;
pub(crate) const PIO2_2: f64 = -4.371138828673793e-08;
pub(crate) const PIO2_3: f64 = -1.7151245100058819e-15;
pub(crate) const TWO_OVER_PI: f64 = 0.6366197466850281;
/// Above this, the reduction is left to libm (`sinf`, `cosf`).
pub(crate) const REDUCE_MAX: f64 = 65536.0;
/// Below this, sin(x) rounds to x in f32.
pub(crate) const TINY: f64 = 2.44140625e-4;
/// musl's `__sindf` and `__cosdf` polynomials (fdlibm's `k_sinf.c`, `k_cosf.c`), rounded to f32.
pub(crate) const S: [f64; 4] = [
    -0.166666666416265235595,
    0.0083333293858894631756,
    -0.000198393348360966317347,
    0.0000027183114939898219064,
];
pub(crate) const C: [f64; 4] = [
    -0.499999997251031003120,
    0.0416666233237390631894,
    -0.00138867637746099294692,
    0.0000243904487962774090654,
];

/// `(sin r, cos r, n)` for `x = q·pi/2 + r`, `n = q mod 4` (I32X4).
fn sincos_reduced(v: &mut Vb<'_, '_>, x: Value) -> (Value, Value, Value) {
    let t = v.mulc(x, TWO_OVER_PI);
    let q = v.nearest(t);
    let nq = v.neg(q);
    let p1 = v.c(PIO2_1);
    let r = v.fma(nq, p1, x); // exact
    let p2 = v.c(PIO2_2);
    let r = v.fma(nq, p2, r);
    let p3 = v.c(PIO2_3);
    let r = v.fma(nq, p3, r);
    let qb = v.addc(q, 12582912.0);
    let qb = v.bits(qb);
    let n = v.andc(qb, 3);
    let z = v.mul(r, r);
    // sin r = r + r³·S(r²); cos r = 1 + r²·C(r²)
    let s = v.poly(z, &S);
    let r3 = v.mul(z, r);
    let sin = v.fma(r3, s, r);
    let c = v.poly(z, &C);
    let one = v.c(1.0);
    let cos = v.fma(z, c, one);
    (sin, cos, n)
}

fn quadrant(v: &mut Vb<'_, '_>, sin: Value, cos: Value, n: Value) -> Value {
    use cranelift_codegen::ir::condcodes::IntCC;
    let b = v.andc(n, 1);
    let one = v.ci(1);
    let odd = v.icmp(IntCC::Equal, b, one);
    let r = v.sel(odd, cos, sin);
    let s = v.andc(n, 2);
    let s = v.shl(s, 30);
    let rb = v.bits(r);
    let rb = v.xor(rb, s);
    v.float(rb)
}

pub(crate) fn sin(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let (s, c, n) = sincos_reduced(v, x);
    let r = quadrant(v, s, c, n);
    let ax = v.abs(x);
    let tiny = v.cmpc(FloatCC::LessThan, ax, TINY);
    let r = v.sel(tiny, x, r);
    let huge = v.cmpc(FloatCC::GreaterThan, ax, REDUCE_MAX);
    v.slow_path(huge, crate::host::MathFn::Sin, x, r)
}

pub(crate) fn cos(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let (s, c, n) = sincos_reduced(v, x);
    // cos(x) = sin(x + pi/2): quadrant n + 1
    let n1 = v.iaddc(n, 1);
    let r = quadrant(v, s, c, n1);
    let ax = v.abs(x);
    let huge = v.cmpc(FloatCC::GreaterThan, ax, REDUCE_MAX);
    v.slow_path(huge, crate::host::MathFn::Cos, x, r)
}
