//! cbrt on F64X2 and natively on F32X4 (the same algorithm in single precision, [`F32`]), with no
//! division.
//!
//! Method: `|x| = 2^(3q + r) · m` with `m` in [1, 2) from the bits (subnormals scaled by 2^54 first)
//! and `q = floor((e + 1/2)/3)`, `r = e - 3q` in {0, 1, 2} computed exactly in floating point (the
//! fraction of `(e + 1/2)/3` is at least 1/6 from an integer, so the rounded product by 1/3 floors
//! right); `z = 2^r · m` in [1, 8). A seed `y0 ≈ z^(-1/3)` is `P(2m - 3) · 2^(-r/3)` with `P` of
//! degree 5 (Chebyshev interpolation of `m^(-1/3)` on [1, 2], relative error 2^-17.1), one Newton
//! step for the inverse cube root `y = y0 + y0·(1 - z·y0³)/3` (no division; error near 2^-33), then
//! `c = z·y²` and one Newton step for the cube root itself, `c + (z - c³)·y²/3`, with `z - c³`
//! computed to about 2^-80 by fused multiply-adds (`c²` as a double-double): the error before the
//! last rounding is near 2^-60, so the result is the correctly rounded cube root but for very rare
//! near-halfway cases. In f32 the seed's error 2^-17 is already below the precision, so the same
//! two steps leave about 2^-40 before the last rounding (a simulation in NumPy matched the
//! correctly rounded cbrtf on four million points). `cbrt(x) = ±2^q · c`, an exact scaling. ±0, ±inf and NaN return `x`
//! (lane selects: one path for every lane, so the wide routine is the same function). Measured
//! against glibc over the sweeps of `tests/accuracy.rs`: max 1 ULP.

use super::Vb;
use super::log::MIN_NORMAL;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// `P(t) ≈ m^(-1/3)` for `t = 2m - 3` in [-1, 1] (ascending).
pub(crate) const SEED: [f64; 6] = [
    0.8735852631923362,
    -0.0970659481061915,
    0.02148396067483032,
    -0.0055661943562035545,
    0.0017757481998486506,
    -0.000515989971601281,
];
/// 2^(-1/3) and 2^(-2/3), the seed's factor for `r` = 1 and 2.
pub(crate) const CBRT_HALF: f64 = 0.7937005259840998;
pub(crate) const CBRT_QUARTER: f64 = 0.6299605249474366;

/// The constants of one precision's cbrt: the exponent field's shift, the bits of 1.5·2^p minus the
/// exponent bias (to turn the field into a float), 1.5·2^p, the mantissa mask, the bits of 1.0, the
/// smallest normal and the subnormals' scaling (a power of 2^3, so that `r` is unchanged).
pub(crate) struct CbrtConsts {
    pub shift: i64,
    pub bias_bits: i64,
    pub magic: f64,
    pub mant: i64,
    pub one: i64,
    pub min_normal: f64,
    pub sub_scale: f64,
    pub sub_adj: f64,
}

/// f64: subnormals scaled by 2^54.
pub(crate) const F64: CbrtConsts = CbrtConsts {
    shift: 52,
    bias_bits: 0x4338_0000_0000_0000 - 0x3ff,
    magic: 6755399441055744.0,
    mant: 0x000f_ffff_ffff_ffff,
    one: 0x3ff0_0000_0000_0000,
    min_normal: MIN_NORMAL,
    sub_scale: 18014398509481984.0,
    sub_adj: -54.0,
};

/// f32 (native on F32X4, the same algorithm in single precision, the constants rounded to f32):
/// subnormals scaled by 2^24.
pub(crate) const F32: CbrtConsts = CbrtConsts {
    shift: 23,
    bias_bits: 0x4b40_0000 - 0x7f,
    magic: 12582912.0,
    mant: 0x007f_ffff,
    one: 0x3f80_0000,
    min_normal: 1.1754943508222875e-38,
    sub_scale: 16777216.0,
    sub_adj: -24.0,
};

/// cbrt in the precision of `v` (F64X2, or F32X4 where `v.f32`).
pub(crate) fn cbrt(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let k = if v.f32 { &F32 } else { &F64 };
    let ax = v.abs(x);
    // subnormals scaled by 2^54 (f32: 2^24)
    let sub = v.cmpc(LessThan, ax, k.min_normal);
    let axs = v.mulc(ax, k.sub_scale);
    let a = v.sel(sub, axs, ax);
    let m54 = v.c(k.sub_adj);
    let z0 = v.c(0.0);
    let eadj = v.sel(sub, m54, z0);
    // e = exponent - bias as a float (the bits of 1.5·2^52 + e, minus 1.5·2^52), m in [1, 2)
    let u = v.bits(a);
    let eb = v.ushr(u, k.shift);
    let eb = v.iaddc(eb, k.bias_bits);
    let ef = v.float(eb);
    let ef = v.addc(ef, -k.magic);
    let ef = v.add(ef, eadj);
    let mb = v.andc(u, k.mant);
    let mb = v.iaddc(mb, k.one);
    let m = v.float(mb);
    // q = floor((e + 1/2)/3), r = e - 3q
    let eh = v.addc(ef, 0.5);
    let eq = v.mulc(eh, 1.0 / 3.0);
    let q = v.floor(eq);
    let q3 = v.mulc(q, 3.0);
    let r = v.sub(ef, q3);
    let r1 = v.cmpc(Equal, r, 1.0);
    let r2 = v.cmpc(Equal, r, 2.0);
    let one = v.c(1.0);
    let s = v.selc(r2, 4.0, one);
    let s = v.selc(r1, 2.0, s);
    let z = v.mul(m, s);
    let kr = v.selc(r2, CBRT_QUARTER, one);
    let kr = v.selc(r1, CBRT_HALF, kr);
    // the seed and a Newton step for z^(-1/3)
    let t = v.mulc(m, 2.0);
    let t = v.addc(t, -3.0);
    let p = v.poly(t, &SEED);
    let y = v.mul(p, kr);
    let y2 = v.mul(y, y);
    let y3 = v.mul(y2, y);
    let nz = v.neg(z);
    let e = v.fma(nz, y3, one);
    let e = v.mulc(e, 1.0 / 3.0);
    let y = v.fma(y, e, y);
    // c = z·y², then c + (z - c³)·y²/3 with z - c³ by fused multiply-adds
    let y2 = v.mul(y, y);
    let c = v.mul(z, y2);
    let c2 = v.mul(c, c);
    let nc2 = v.neg(c2);
    let c2e = v.fma(c, c, nc2);
    let d = v.fma(nc2, c, z);
    let nc2e = v.neg(c2e);
    let d = v.fma(nc2e, c, d);
    let w = v.mulc(y2, 1.0 / 3.0);
    let c = v.fma(d, w, c);
    // ±2^q · c
    let sc = v.pow2(q);
    let r = v.mul(c, sc);
    let r = v.copysign(r, x);
    // ±0, ±inf, NaN: x
    let pos = v.cmpc(GreaterThan, ax, 0.0);
    let fin = v.cmpc(LessThan, ax, f64::INFINITY); // inf on F32X4 too
    let ok = v.and(pos, fin);
    v.sel(ok, r, x)
}
