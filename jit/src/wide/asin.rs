//! arcsin and arccos at full width: `vmath::asin` written for one lane (the operations in the order
//! it emits them, its constants, `mul_add` where it emits `fma`), and their `#[target_feature]`
//! functions. The fast path is taken per chunk of lanes where the inline code takes it per vector;
//! the general path gives a lane of [-1, 1] the fast path's bits, so the bits are the inline
//! route's on every host and at every width.

use super::lanes::{Lane, Paths, levels, map, poly2, sel};
use crate::vmath::asin::{AsinConsts, F32 as ASIN32, F64 as ASIN64};

/// What the kernel needs beyond [`Lane`]: its constants and its polynomial (`poly2`, whose
/// sizes are const parameters).
trait AsinLane: Lane {
    const K: &'static AsinConsts;
    fn p(x2: Self, x4: Self) -> Self;
    fn is_nan(self) -> bool;
}

impl AsinLane for f64 {
    const K: &'static AsinConsts = &ASIN64;
    #[inline(always)]
    fn p(x2: f64, x4: f64) -> f64 {
        poly2::<f64, 6, 6>(x2, x4, ASIN64.poly)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
}

impl AsinLane for f32 {
    const K: &'static AsinConsts = &ASIN32;
    #[inline(always)]
    fn p(x2: f32, x4: f32) -> f32 {
        poly2::<f32, 3, 2>(x2, x4, ASIN32.poly)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
}

/// `vmath::asin::parts`: the first range's mask, the leading term and its correction.
#[inline(always)]
fn parts<T: AsinLane>(ax: T) -> (bool, T, T) {
    let o = ax < T::c(0.5);
    let sq = ax * ax;
    let d = (T::c(1.0) - ax) * T::c(0.5);
    let x2 = sel(o, sq, d);
    let r = x2.sqrt();
    let y = sel(o, ax, r);
    let x4 = x2 * x2;
    let p = T::p(x2, x4);
    let u = p * (x2 * y);
    (o, y, u)
}

/// `vmath::asin::finish`: `c - (s + t)` with `c = hi + lo`.
#[inline(always)]
fn finish<T: AsinLane>(hi: T, lo: T, s: T, t: T) -> T {
    let h = hi - s;
    let e = (((hi - h) - s) + lo) - t;
    h + e
}

/// `vmath::asin::domain`'s general path.
#[inline(always)]
fn domain<T: AsinLane>(x: T, r: T) -> T {
    let r = sel(x.abs() > T::c(1.0), T::c(crate::vmath::INVALID), r);
    sel(x.is_nan(), x, r)
}

#[inline(always)]
fn asin_fast<T: AsinLane>(x: T) -> T {
    let k = T::K;
    let (o, y, u) = parts(x.abs());
    let s = sel(o, -y, y + y);
    let t = sel(o, -u, u + u);
    let hi = sel(o, T::c(0.0), T::c(k.pio2[0]));
    let lo = sel(o, T::c(0.0), T::c(k.pio2[1]));
    finish(hi, lo, s, t).copysign(x)
}

#[inline(always)]
fn acos_fast<T: AsinLane>(x: T) -> T {
    let k = T::K;
    let (o, y, u) = parts(x.abs());
    let neg = x < T::c(0.0);
    let (y2, u2) = (y + y, u + u);
    let sl = sel(neg, y2, -y2);
    let tl = sel(neg, u2, -u2);
    let s = sel(o, x, sl);
    let t = sel(o, u.copysign(x), tl);
    let zero = T::c(0.0);
    let hi = sel(o, T::c(k.pio2[0]), sel(neg, T::c(k.pi[0]), zero));
    let lo = sel(o, T::c(k.pio2[1]), sel(neg, T::c(k.pi[1]), zero));
    finish(hi, lo, s, t)
}

pub(super) struct Arcsin;
pub(super) struct Arccos;

macro_rules! paths {
    ($($t:ty)*) => {
        $(
            impl Paths<$t> for Arcsin {
                #[inline(always)]
                fn fast_ok(x: $t) -> bool {
                    x.abs() <= 1.0
                }
                #[inline(always)]
                fn fast(x: $t) -> $t {
                    asin_fast(x)
                }
                #[inline(always)]
                fn general(x: $t) -> $t {
                    domain(x, asin_fast(x))
                }
            }
            impl Paths<$t> for Arccos {
                #[inline(always)]
                fn fast_ok(x: $t) -> bool {
                    x.abs() <= 1.0
                }
                #[inline(always)]
                fn fast(x: $t) -> $t {
                    acos_fast(x)
                }
                #[inline(always)]
                fn general(x: $t) -> $t {
                    domain(x, acos_fast(x))
                }
            }
        )*
    };
}

paths!(f64 f32);

levels! {
    asin64: f64, Arcsin;
    asin32: f32, Arcsin;
    acos64: f64, Arccos;
    acos32: f32, Arccos;
}
