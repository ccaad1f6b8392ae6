//! cbrt at full width: `vmath::cbrt` written for one lane (the same operations in the same order,
//! its constants, `mul_add` where it emits `fma`), and its `#[target_feature]` loops. The inline
//! code has one path for every lane (lane selects, no branch), so the fast and general paths here
//! are one function. f32 is the same algorithm in single precision, as the inline F32X4 code
//! computes it (16 lanes per AVX-512 vector).

use super::lanes::{Lane, Paths, levels, map, poly, sel};
use crate::vmath::cbrt::{CBRT_HALF, CBRT_QUARTER, F32, SEED};
use crate::vmath::log::MIN_NORMAL;

/// `vmath::cbrt::cbrt` on one f64 lane.
#[inline(always)]
pub(super) fn cbrt_lane(x: f64) -> f64 {
    let ax = x.abs();
    let sub = ax < MIN_NORMAL;
    let axs = ax * 18014398509481984.0;
    let a = sel(sub, axs, ax);
    let eadj = sel(sub, -54.0, 0.0);
    let u = a.to_bits();
    let eb = (u >> 52).wrapping_add(0x4338_0000_0000_0000 - 0x3ff);
    let ef = f64::from_bits(eb) + -6755399441055744.0;
    let ef = ef + eadj;
    let m = f64::from_bits((u & 0x000f_ffff_ffff_ffff).wrapping_add(0x3ff0_0000_0000_0000));
    let eh = ef + 0.5;
    let eq = eh * (1.0 / 3.0);
    let q = Lane::floor(eq);
    let q3 = q * 3.0;
    let r = ef - q3;
    let (r1, r2) = (r == 1.0, r == 2.0);
    let s = sel(r2, 4.0, 1.0);
    let s = sel(r1, 2.0, s);
    let z = m * s;
    let k = sel(r2, CBRT_QUARTER, 1.0);
    let k = sel(r1, CBRT_HALF, k);
    let t = m * 2.0;
    let t = t + -3.0;
    let p = poly(t, &SEED);
    let y = p * k;
    let y2 = y * y;
    let y3 = y2 * y;
    let e = Lane::mul_add(-z, y3, 1.0);
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
    let r = c * Lane::pow2(q);
    let r = r.copysign(x);
    let ok = (ax > 0.0) & (ax <= f64::MAX);
    sel(ok, r, x)
}

/// `vmath::cbrt::cbrt` on one f32 lane (its F32X4 code: the f32 constants).
#[inline(always)]
pub(super) fn cbrt_f32_lane(x: f32) -> f32 {
    let k = &F32;
    let c = <f32 as Lane>::c;
    let ax = x.abs();
    let sub = ax < c(k.min_normal);
    let axs = ax * c(k.sub_scale);
    let a = sel(sub, axs, ax);
    let eadj = sel(sub, c(k.sub_adj), 0.0);
    let u = a.to_bits();
    let eb = (u >> k.shift).wrapping_add(k.bias_bits as u32);
    let ef = f32::from_bits(eb) + c(-k.magic);
    let ef = ef + eadj;
    let m = f32::from_bits((u & k.mant as u32).wrapping_add(k.one as u32));
    let eh = ef + 0.5;
    let eq = eh * c(1.0 / 3.0);
    let q = Lane::floor(eq);
    let q3 = q * 3.0;
    let r = ef - q3;
    let (r1, r2) = (r == 1.0, r == 2.0);
    let s = sel(r2, 4.0, 1.0);
    let s = sel(r1, 2.0, s);
    let z = m * s;
    let kr = sel(r2, c(CBRT_QUARTER), 1.0);
    let kr = sel(r1, c(CBRT_HALF), kr);
    let t = m * 2.0;
    let t = t + -3.0;
    let p = poly(t, &SEED);
    let y = p * kr;
    let y2 = y * y;
    let y3 = y2 * y;
    let e = Lane::mul_add(-z, y3, 1.0);
    let e = e * c(1.0 / 3.0);
    let y = Lane::mul_add(y, e, y);
    let y2 = y * y;
    let cc = z * y2;
    let c2 = cc * cc;
    let nc2 = -c2;
    let c2e = Lane::mul_add(cc, cc, nc2);
    let d = Lane::mul_add(nc2, cc, z);
    let d = Lane::mul_add(-c2e, cc, d);
    let w = y2 * c(1.0 / 3.0);
    let cc = Lane::mul_add(d, w, cc);
    let r = cc * Lane::pow2(q);
    let r = r.copysign(x);
    let ok = (ax > 0.0) & (ax <= f32::MAX);
    sel(ok, r, x)
}

/// cbrt's one path (see the module docs).
pub(super) struct Cbrt;

macro_rules! one_path {
    ($($t:ty: $lane:ident;)*) => {
        $(
            impl Paths<$t> for Cbrt {
                #[inline(always)]
                fn fast_ok(_: $t) -> bool {
                    true
                }
                #[inline(always)]
                fn fast(x: $t) -> $t {
                    $lane(x)
                }
                #[inline(always)]
                fn general(x: $t) -> $t {
                    $lane(x)
                }
            }
        )*
    };
}

one_path! {
    f64: cbrt_lane;
    f32: cbrt_f32_lane;
}

levels! {
    cbrt64: f64, Cbrt;
    cbrt32: f32, Cbrt;
}
