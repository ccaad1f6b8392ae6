//! cbrt at full width: `vmath::cbrt` written for one lane (the same operations in the same order,
//! its constants, `mul_add` where it emits `fma`), and its `#[target_feature]` loops. The fast path
//! is the core for normal, finite, nonzero lanes, taken per chunk where the inline code branches
//! per vector; the general path scales subnormals and selects the special values, which leaves the
//! other lanes' bits as the core gives them. f32 is the same algorithm in single precision (but the
//! seed's square taken directly, without a Newton step for it), as the inline F32X4 code computes
//! it (16 lanes per AVX-512 vector).

use super::lanes::{Lane, Paths, levels, map, poly, sel};
use crate::vmath::cbrt::{F32, F64, KR, KR2, SEED};

/// `vmath::cbrt::core` on one f64 lane: `x` normal, finite and nonzero, or (`general`) a subnormal
/// scaled by 2^54 with `eadj` = -54 (0 for the others).
#[inline(always)]
fn core64(x: f64, eadj: f64, general: bool) -> f64 {
    let k = &F64;
    let u = x.abs().to_bits();
    let eb = (u >> k.shift).wrapping_add(k.bias_bits as u64);
    let ef = f64::from_bits(eb) + -k.magic;
    let ef = if general { ef + eadj } else { ef };
    let ms = f64::from_bits((x.to_bits() & (k.mant | k.sign) as u64).wrapping_add(k.one as u64));
    let m = ms.abs();
    let q = Lane::floor(ef.mul_add(1.0 / 3.0, 1.0 / 6.0));
    let r = q.mul_add(-3.0, ef);
    let z = ms.ldexp_fast(r);
    let t = m.mul_add(2.0, -3.0);
    let p = poly(t, &SEED);
    let kr = poly(r, &[1.0, KR[0], KR[1]]);
    let y = p * kr;
    let y2 = y * y;
    let y3 = y2 * y;
    let e = Lane::mul_add(-z.abs(), y3, 1.0);
    let e = e * (1.0 / 3.0);
    let y = Lane::mul_add(y, e, y);
    let y2 = y * y;
    let c = z * y2;
    let c2 = c * c;
    let nc2 = -c2;
    let c2e = Lane::mul_add(c, c, nc2);
    let d = Lane::mul_add(nc2, c, z);
    let d = Lane::mul_add(-c2e, c, d);
    let w = y2 * (1.0 / 3.0);
    let c = Lane::mul_add(d, w, c);
    c.ldexp_fast(q)
}

/// `vmath::cbrt::core` on one f32 lane (its F32X4 code: the f32 constants, the seed squared, no
/// Newton step for it).
#[inline(always)]
fn core32(x: f32, eadj: f32, general: bool) -> f32 {
    let k = &F32;
    let c = <f32 as Lane>::c;
    let u = x.abs().to_bits();
    let eb = (u >> k.shift).wrapping_add(k.bias_bits as u32);
    let ef = f32::from_bits(eb) + c(-k.magic);
    let ef = if general { ef + eadj } else { ef };
    let ms = f32::from_bits((x.to_bits() & (k.mant | k.sign) as u32).wrapping_add(k.one as u32));
    let m = ms.abs();
    let q = Lane::floor(ef.mul_add(c(1.0 / 3.0), c(1.0 / 6.0)));
    let r = q.mul_add(-3.0, ef);
    let z = ms.ldexp_fast(r);
    let t = m.mul_add(2.0, -3.0);
    let p = poly(t, &SEED);
    let kr2 = poly(r, &[1.0, KR2[0], KR2[1]]);
    let pp = p * p;
    let y2 = pp * kr2;
    let cc = z * y2;
    let c2 = cc * cc;
    let nc2 = -c2;
    let c2e = Lane::mul_add(cc, cc, nc2);
    let d = Lane::mul_add(nc2, cc, z);
    let d = Lane::mul_add(-c2e, cc, d);
    let w = y2 * c(1.0 / 3.0);
    let cc = Lane::mul_add(d, w, cc);
    cc.ldexp_fast(q)
}

/// cbrt's paths: the core where every lane of a chunk is normal, finite and nonzero (as the inline
/// code's branch per vector), else the general path.
pub(super) struct Cbrt;

macro_rules! paths {
    ($($t:ty: $core:ident, $k:ident, $max:expr;)*) => {
        $(
            impl Paths<$t> for Cbrt {
                #[inline(always)]
                fn fast_ok(x: $t) -> bool {
                    let ax = x.abs();
                    (ax >= <$t as Lane>::c($k.min_normal)) & (ax <= $max)
                }
                #[inline(always)]
                fn fast(x: $t) -> $t {
                    $core(x, 0.0, false)
                }
                #[inline(always)]
                fn general(x: $t) -> $t {
                    // subnormals scaled, ±0, ±inf and NaN as `x` (`vmath::cbrt::cbrt`'s guard)
                    let c = <$t as Lane>::c;
                    let ax = x.abs();
                    let small = ax < c($k.min_normal); // NaN: x either way
                    let xs = sel(small, x * c($k.sub_scale), x);
                    let eadj = sel(small, c($k.sub_adj), 0.0);
                    let r = $core(xs, eadj, true);
                    let ok = (ax > 0.0) & (ax <= $max);
                    sel(ok, r, x)
                }
            }
        )*
    };
}

paths! {
    f64: core64, F64, f64::MAX;
    f32: core32, F32, f32::MAX;
}

levels! {
    cbrt64: f64, Cbrt;
    cbrt32: f32, Cbrt;
}
