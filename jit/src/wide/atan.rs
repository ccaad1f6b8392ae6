//! arctan and arctan2 at full width: `vmath::atan` written for one lane (the operations in the
//! order it emits them, its constants, `mul_add` where it emits `fma`), and their
//! `#[target_feature]` functions. The fast path of arctan2 is taken per chunk of
//! lanes where the inline code takes it per vector; the general path gives a lane the fast path
//! accepts the fast path's bits (a scaling by 1, selects that do not apply), so the bits are the
//! inline route's on every host and at every width.

use super::binary::{Paths2, levels2, map2};
use super::lanes::{Lane, Paths, levels, map, poly, sel};
use crate::vmath::atan::{AtanConsts, F32 as ATAN32, F64 as ATAN64};

/// What the kernel needs beyond [`Lane`]: its constants, the sign bit, the NaN test.
trait AtanLane: Lane {
    /// The constants of this type's kernel.
    const K: &'static AtanConsts;
    /// The sign bit (`vmath::Vb::sign_mask`).
    fn sign_bit(self) -> bool;
    fn is_nan(self) -> bool;
}

impl AtanLane for f64 {
    const K: &'static AtanConsts = &ATAN64;
    #[inline(always)]
    fn sign_bit(self) -> bool {
        self.is_sign_negative()
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

impl AtanLane for f32 {
    const K: &'static AtanConsts = &ATAN32;
    #[inline(always)]
    fn sign_bit(self) -> bool {
        self.is_sign_negative()
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

/// `vmath::atan::core`: `atan(ay / ax)` for `ay, ax >= 0`, or `pi -` it where `left`.
#[inline(always)]
fn core<T: AtanLane>(ay: T, ax: T, left: Option<bool>) -> T {
    let k = T::K;
    let mut m = [false; 4];
    for (i, &c) in k.cut.iter().enumerate() {
        m[i] = ay >= ax * T::c(c);
    }
    let zero = T::c(0.0);
    let (mut kk, mut hi, mut lo) = (zero, zero, zero);
    for (i, &mi) in m.iter().enumerate() {
        if i < 3 {
            kk = sel(mi, T::c(0.5 * (i + 1) as f64), kk);
        }
        hi = sel(mi, T::c(k.hi[i]), hi);
        lo = sel(mi, T::c(k.lo[i]), lo);
    }
    let num = (-kk).mul_add(ax, ay);
    let den = kk.mul_add(ay, ax);
    let num = sel(m[3], -ax, num);
    let den = sel(m[3], ay, den);
    let mut t = num / den;
    if let Some(left) = left {
        let mut lh = T::c(k.left_hi[0]);
        let mut ll = T::c(k.left_lo[0]);
        for (i, &mi) in m[..3].iter().enumerate() {
            lh = sel(mi, T::c(k.left_hi[i + 1]), lh);
            ll = sel(mi, T::c(k.left_lo[i + 1]), ll);
        }
        lh = sel(m[3], T::c(k.hi[3]), lh);
        ll = sel(m[3], T::c(k.lo[3]), ll);
        hi = sel(left, lh, hi);
        lo = sel(left, ll, lo);
        t = sel(left, -t, t);
    }
    let z = t * t;
    let w = z * z;
    let s1 = z * poly(w, k.even);
    let s2 = w * poly(w, k.odd);
    let s = s1 + s2;
    hi - ((t * s - lo) - t)
}

/// `vmath::atan::atan2`'s fast-path test.
#[inline(always)]
fn atan2_fast_ok<T: AtanLane>(y: T, x: T) -> bool {
    let k = T::K;
    let (ax, ay) = (x.abs(), y.abs());
    let big = T::c(k.big);
    let tiny = T::c(k.tiny);
    (ax <= big) & (ay <= big) & ((ax >= tiny) | (ay >= tiny))
}

#[inline(always)]
fn atan2_fast<T: AtanLane>(y: T, x: T) -> T {
    core(y.abs(), x.abs(), Some(x < T::c(0.0))).copysign(y)
}

/// `vmath::atan::atan2`'s general path: scaling, the kernel, the special cases.
#[inline(always)]
fn atan2_general<T: AtanLane>(y: T, x: T) -> T {
    let k = T::K;
    let (ax, ay) = (x.abs(), y.abs());
    let big = (ax >= T::c(k.tiny)) | (ay >= T::c(k.tiny));
    let huge = (ax > T::c(k.big)) | (ay > T::c(k.big));
    let f = sel(big, T::c(1.0), T::c(k.up));
    let f = sel(huge, T::c(k.down), f);
    let neg = x < T::c(0.0);
    let r = core(ay * f, ax * f, Some(neg));
    let inf = T::c(f64::INFINITY);
    let (ix, iy) = (ax == inf, ay == inf);
    let pi = T::c(k.pi);
    let zero = T::c(0.0);
    let r = sel(ix, sel(neg, pi, zero), r);
    let r = sel(iy, T::c(k.pio2), r);
    let r = sel(ix & iy, sel(neg, T::c(k.three_pio4), T::c(k.pio4)), r);
    let zz = (ax == zero) & (ay == zero);
    let r = sel(zz, sel(x.sign_bit(), pi, zero), r);
    let r = r.copysign(y);
    sel(x.is_nan() | y.is_nan(), x + y, r)
}

pub(super) struct Arctan;
pub(super) struct Arctan2;

macro_rules! paths {
    ($($t:ty)*) => {
        $(
            impl Paths<$t> for Arctan {
                #[inline(always)]
                fn fast_ok(_: $t) -> bool {
                    true
                }
                #[inline(always)]
                fn fast(x: $t) -> $t {
                    core(x.abs(), 1.0, None).copysign(x)
                }
                #[inline(always)]
                fn general(x: $t) -> $t {
                    Self::fast(x)
                }
            }
            impl Paths2<$t> for Arctan2 {
                #[inline(always)]
                fn fast_ok(y: $t, x: $t) -> bool {
                    atan2_fast_ok(y, x)
                }
                #[inline(always)]
                fn fast(y: $t, x: $t) -> $t {
                    atan2_fast(y, x)
                }
                #[inline(always)]
                fn general(y: $t, x: $t) -> $t {
                    atan2_general(y, x)
                }
            }
        )*
    };
}

paths!(f64 f32);

levels! {
    atan64: f64, Arctan;
    atan32: f32, Arctan;
}

levels2! {
    atan2_64: f64, Arctan2;
    atan2_32: f32, Arctan2;
}
