//! cbrt at full width: `vmath::cbrt` written for one lane (the same operations in the same order,
//! its constants, `mul_add` where it emits `fma`), and its `#[target_feature]` loops. The inline
//! code has one path for every lane (lane selects, no branch), so the fast and general paths here
//! are one function. f32 is the f64 lane of the widened value, rounded once, as the inline code
//! computes it.

use super::lanes::{Lane, Paths, levels, map, poly, sel};
use crate::vmath::cbrt::{CBRT_HALF, CBRT_QUARTER, SEED};
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

/// cbrt's one path (see the module docs).
pub(super) struct Cbrt;

impl Paths<f64> for Cbrt {
    #[inline(always)]
    fn fast_ok(_: f64) -> bool {
        true
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        cbrt_lane(x)
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        cbrt_lane(x)
    }
}

impl Paths<f32> for Cbrt {
    #[inline(always)]
    fn fast_ok(_: f32) -> bool {
        true
    }
    #[inline(always)]
    fn fast(x: f32) -> f32 {
        cbrt_lane(x as f64) as f32
    }
    #[inline(always)]
    fn general(x: f32) -> f32 {
        cbrt_lane(x as f64) as f32
    }
}

levels! {
    cbrt64: f64, Cbrt;
    cbrt32: f32, Cbrt;
}
