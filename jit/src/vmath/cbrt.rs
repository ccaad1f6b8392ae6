//! cbrt on F64X2 and natively on F32X4 (the same algorithm in single precision, [`F32`]), with no
//! division.
//!
//! Method: `|x| = 2^(3q + r) · m` with `m` in [1, 2) from the bits (subnormals scaled by 2^54
//! first, f32: 2^24) and `q = floor(e/3 + 1/6)` (one fused multiply-add: the fraction of
//! `(e + 1/2)/3` is at least 1/6 from an integer, far more than its rounding), `r = e - 3q` in
//! {0, 1, 2}, exact; `z = ±2^r · m` (r added into the exponent field of `±m`, the sign of x kept
//! through to the result). A seed `y0 ≈ |z|^(-1/3)` is `P(2m - 3) · 2^(-r/3)` with `P` of degree 5
//! (Chebyshev interpolation of `m^(-1/3)` on [1, 2], relative error 2^-17.1) and `2^(-r/3)` the
//! quadratic in `r` through its three values ([`KR`]). f64: one Newton step for the inverse cube
//! root `y = y0 + y0·(1 - |z|·y0³)/3` (no division; error near 2^-33), then `c = z·y²` and one
//! Newton step for the cube root itself, `c + (z - c³)·y²/3`, with `z - c³` computed to about
//! 2^-80 by fused multiply-adds (`c²` as a double-double): the error before the last rounding is
//! near 2^-60, so the result is the correctly rounded cube root but for very rare near-halfway
//! cases. f32: the seed's 2^-17 is enough for the last step alone (its error is about
//! 12·(2^-17)² = 2^-30 before the last rounding), so `y² = P²·2^(-2r/3)` ([`KR2`]) is taken
//! directly: over every f32 in [1, 8) (which, scaled by 2^3q exactly, are all the cases) the result
//! is within 0.505 ULP of the true cube root, the correctly rounded one in all but 38 thousand of
//! 25 million. `cbrt(x) = c · 2^q`, q added into the exponent field. Lanes that are subnormal, ±0,
//! ±inf or NaN take a general path for their vector (a branch), which scales the subnormals and
//! gives ±0, ±inf and NaN as `x`; the other lanes get the core's bits either way. Measured
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
/// The constants of one precision's cbrt: the exponent field's shift, the bits of 1.5·2^p minus the
/// exponent bias (to turn the field into a float), 1.5·2^p, the mantissa mask, the sign bit, the bits of 1.0, the
/// smallest normal and the subnormals' scaling (a power of 2^3, so that `r` is unchanged).
pub(crate) struct CbrtConsts {
    pub shift: i64,
    pub bias_bits: i64,
    pub magic: f64,
    pub mant: i64,
    pub sign: i64,
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
    sign: i64::MIN,
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
    sign: 0x8000_0000,
    one: 0x3f80_0000,
    min_normal: 1.1754943508222875e-38,
    sub_scale: 16777216.0,
    sub_adj: -24.0,
};

/// `2^(-r/3)` for `r` in {0, 1, 2} as `1 + r·(A + B·r)` (f64's seed factor; through the three
/// points, rounded: the seed's error is 2^-17 anyway).
pub(crate) const KR: [f64; 2] = [-0.22757921050551871, 0.021279736489618506];
/// `2^(-2r/3)` the same way (f32's factor of the seed's square).
pub(crate) const KR2: [f64; 2] = [-0.43850408160115173, 0.06846460654858832];

/// cbrt in the precision of `v` (F64X2, or F32X4 where `v.f32`): the core for normal finite
/// nonzero lanes, or where a lane is not, the general path for the whole vector (a branch taken
/// only then; the subnormal scaling and the selects leave the other lanes' bits as they were).
pub(crate) fn cbrt(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let k = if v.f32 { &F32 } else { &F64 };
    let ax = v.abs(x);
    let fast = core(v, x, ax, None);
    let small = v.cmpc(UnorderedOrLessThan, ax, k.min_normal);
    let inf = v.cmpc(Equal, ax, f64::INFINITY); // inf on F32X4 too
    let edge = v.or(small, inf);
    v.guard_shared(edge, fast, |v| {
        // subnormals scaled by 2^54 (f32: 2^24), their exponent lowered by as much
        let xs = v.mulc(x, k.sub_scale);
        let xs = v.sel(small, xs, x);
        let zero = v.c(0.0);
        let eadj = v.selc(small, k.sub_adj, zero);
        let axs = v.abs(xs);
        let r = core(v, xs, axs, Some(eadj));
        // ±0, ±inf, NaN: x
        let pos = v.cmpc(GreaterThan, ax, 0.0);
        let fin = v.cmpc(LessThan, ax, f64::INFINITY);
        let ok = v.and(pos, fin);
        v.sel(ok, r, x)
    })
}

/// cbrt of `x` (`ax` = |x|) for normal finite nonzero `x`, or a scaled subnormal with its exponent
/// adjustment `eadj` (see the module docs).
fn core(v: &mut Vb<'_, '_>, x: Value, ax: Value, eadj: Option<Value>) -> Value {
    let k = if v.f32 { &F32 } else { &F64 };
    // e = exponent - bias as a float (the bits of 1.5·2^52 + e, minus 1.5·2^52)
    let u = v.bits(ax);
    let eb = v.ushr(u, k.shift);
    let eb = v.iaddc(eb, k.bias_bits);
    let ef = v.float(eb);
    let ef = v.addc(ef, -k.magic);
    let ef = match eadj {
        Some(a) => v.add(ef, a),
        None => ef,
    };
    // ±m with m in [1, 2) from the bits of x (its sign kept), and m
    let xb = v.bits(x);
    let ms = v.andc(xb, k.mant | k.sign);
    let ms = v.iaddc(ms, k.one);
    let ms = v.float(ms);
    let m = v.abs(ms);
    // q = floor(e/3 + 1/6), r = e - 3q; z = ±2^r·m
    let third = v.c(1.0 / 3.0);
    let sixth = v.c(1.0 / 6.0);
    let eq = v.fma(ef, third, sixth);
    let q = v.floor(eq);
    let m3 = v.c(-3.0);
    let r = v.fma(q, m3, ef);
    let z = v.ldexp_fast(ms, r);
    // the seed P(2m - 3)·2^(-r/3) ≈ |z|^(-1/3); f64: a Newton step for it, y² = y·y; f32: its
    // square directly, P²·2^(-2r/3)
    let two = v.c(2.0);
    let t = v.fma(m, two, m3);
    let p = v.poly(t, &SEED);
    let y2 = if v.f32 {
        let kr2 = v.poly(r, &[1.0, KR2[0], KR2[1]]);
        let pp = v.mul(p, p);
        v.mul(pp, kr2)
    } else {
        let kr = v.poly(r, &[1.0, KR[0], KR[1]]);
        let y = v.mul(p, kr);
        let y2 = v.mul(y, y);
        let y3 = v.mul(y2, y);
        let az = v.abs(z);
        let naz = v.neg(az);
        let one = v.c(1.0);
        let e = v.fma(naz, y3, one);
        let e = v.mulc(e, 1.0 / 3.0);
        let y = v.fma(y, e, y);
        v.mul(y, y)
    };
    // c = z·y², then c + (z - c³)·y²/3 with z - c³ by fused multiply-adds
    let c = v.mul(z, y2);
    let c2 = v.mul(c, c);
    let nc2 = v.neg(c2);
    let c2e = v.fma(c, c, nc2);
    let d = v.fma(nc2, c, z);
    let nc2e = v.neg(c2e);
    let d = v.fma(nc2e, c, d);
    let w = v.mulc(y2, 1.0 / 3.0);
    let c = v.fma(d, w, c);
    // ±2^q · c: q added into the exponent field
    v.ldexp_fast(c, q)
}
