//! pow and hypot at full width: `vmath::pow` and `vmath::hypot` written for one lane (the same
//! operations in the same order, their constants, `mul_add` where they emit `fma`), and their
//! `#[target_feature]` loops over two slices (`binary.rs`).
//!
//! pow's inline code branches once, inside its exp (`vmath::exp::exp_with`: a vector with a lane
//! whose `|y·log|x||` reaches 708, or NaN, takes the general path). That path gives a lane below
//! the edge the fast path's bits (the clamp leaves it alone, and two exact scalings by powers of two
//! make the same normal number as adding `k` to the exponent), so here every lane takes it: one
//! path, no test per chunk. hypot has one path inline as well. f32 is the f64 lane of the widened
//! values (pow: `vmath::pow::pow_f32`'s lane), rounded once, as the inline code computes it.

use super::binary::{Paths2, levels2, map2};
use super::lanes::{Lane, poly, poly2, sel};
use crate::vmath::exp::F64 as EXP64;
use crate::vmath::hypot::{HUGE, SCALE_DOWN, SCALE_UP, TINY};
use crate::vmath::log::{ATANH_TAIL, LN2_HI, LN2_LO, MIN_NORMAL};
use crate::vmath::pow::LOG_F32;

/// `vmath::Vb::two_sum`.
#[inline(always)]
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    let t = s - bb;
    let ea = a - t;
    let eb = b - bb;
    (s, ea + eb)
}

/// `vmath::Vb::fast_two_sum`.
#[inline(always)]
fn fast_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let t = s - a;
    (s, b - t)
}

/// `vmath::log::log_dd`: `log(x)` as a double-double for positive finite `x`.
#[inline(always)]
fn log_dd(x: f64) -> (f64, f64) {
    // reduce (subnormals scaled by 2^54)
    let sub = x < MIN_NORMAL;
    let xs = x * 18014398509481984.0;
    let x = sel(sub, xs, x);
    let kadj = sel(sub, -54.0, 0.0);
    let u = x.to_bits().wrapping_add((0x3ff00000 - 0x3fe6a09e) << 32);
    let e = u >> 52;
    let kb = e.wrapping_add(0x4338_0000_0000_0000 - 0x3ff);
    let kf = f64::from_bits(kb) + -6755399441055744.0;
    let k = kf + kadj;
    let m = (u & 0x000f_ffff_ffff_ffff).wrapping_add(0x3fe6a09e << 32);
    let f = f64::from_bits(m) + -1.0;
    // s = f / (2 + f) as a double-double
    let (dh, dl) = fast_two_sum(2.0, f);
    let sh = f / dh;
    let nsh = -sh;
    let rem = nsh.mul_add(dh, f);
    let rem = nsh.mul_add(dl, rem);
    let sl = rem / dh;
    let s2h = sh * sh;
    let s2l = sh.mul_add(sh, -s2h);
    let t = sh * sl;
    let s2l = t.mul_add(2.0, s2l);
    let s3h = s2h * sh;
    let s3l = s2h.mul_add(sh, -s3h);
    let s3l = s2l.mul_add(sh, s3l);
    let s3l = s2h.mul_add(sl, s3l);
    let c_hi = 0.6666666666666666;
    let bh = c_hi * s3h;
    let bl = f64::mul_add(c_hi, s3h, -bh);
    let bl = f64::mul_add(c_hi, s3l, bl);
    let bl = f64::mul_add(3.700743415417188e-17, s3h, bl);
    let z = s2h;
    let tail = poly(z, &ATANH_TAIL);
    let s5 = s3h * z;
    let cc = s5 * tail;
    let ah = sh * 2.0;
    let al = sl * 2.0;
    let (h1, l1) = fast_two_sum(ah, bh);
    let l1 = l1 + al;
    let l1 = l1 + bl;
    let l1 = l1 + cc;
    let kh = k * LN2_HI;
    let (h2, l2) = two_sum(kh, h1);
    let kl = k * LN2_LO;
    let l2 = l2 + l1;
    let l2 = l2 + kl;
    fast_two_sum(h2, l2)
}

/// `vmath::exp::exp_with(F64, x, lo)`'s general path: clamp, reduction with the correction,
/// polynomial, two exact scalings.
#[inline(always)]
fn exp_dd(x: f64, lo: Option<f64>) -> f64 {
    let c = &EXP64;
    let x = sel(x > c.clamp.1, c.clamp.1, x);
    let x = sel(x < c.clamp.0, c.clamp.0, x);
    let k = (x * c.log2e).round_ties_even();
    let nk = -k;
    let r = nk.mul_add(c.ln2_hi, x);
    let r = nk.mul_add(c.ln2_lo, r);
    let r = match lo {
        Some(lo) => r + lo,
        None => r,
    };
    let r2 = r * r;
    let q = poly2::<f64, 5, 5>(r, r2, c.q);
    let s = r2.mul_add(q, r);
    let p = s + 1.0;
    let k1 = (k * 0.5).floor();
    let k2 = k - k1;
    p * Lane::pow2(k1) * Lane::pow2(k2)
}

/// `vmath::pow::pow` on one f64 lane.
#[inline(always)]
pub(super) fn pow_lane(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    let (lh, ll) = log_dd(ax);
    let (ok, sp) = log_edges(ax);
    let lh = sel(ok, lh, sp);
    let ll = sel(ok, ll, 0.0);
    let zh = y * lh;
    let zl = y.mul_add(lh, -zh);
    let zl = y.mul_add(ll, zl);
    let zl = sel(zh.abs() < 2000.0, zl, 0.0);
    let r = exp_dd(zh, Some(zl));
    annex_f(x, y, r)
}

/// `vmath::pow::pow_f32` on one lane of f32 values widened to f64 (the result to be rounded to
/// f32).
#[inline(always)]
pub(super) fn pow_f32_lane(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    // log::reduce_normal
    let u = ax.to_bits().wrapping_add((0x3ff00000 - 0x3fe6a09e) << 32);
    let e = u >> 52;
    let kb = e.wrapping_add(0x4338_0000_0000_0000 - 0x3ff);
    let k = f64::from_bits(kb) + -6755399441055744.0;
    let m = (u & 0x000f_ffff_ffff_ffff).wrapping_add(0x3fe6a09e << 32);
    let f = f64::from_bits(m) + -1.0;
    let two = f + 2.0;
    let s = f / two;
    let z = s * s;
    let p = poly(z, &LOG_F32);
    let kl = k * std::f64::consts::LN_2;
    let l = s.mul_add(p, kl);
    let (ok, sp) = log_edges(ax);
    let l = sel(ok, l, sp);
    let t = y * l;
    let r = exp_dd(t, None);
    annex_f(x, y, r)
}

/// `vmath::pow::log_edges`: where `log ax` is computed, and the others' value.
#[inline(always)]
fn log_edges(ax: f64) -> (bool, f64) {
    let ok = (ax > 0.0) & (ax <= f64::MAX);
    (ok, sel(ax == 0.0, f64::NEG_INFINITY, ax))
}

/// `vmath::pow::annex_f`: the sign and C99's special cases.
#[inline(always)]
fn annex_f(x: f64, y: f64, r: f64) -> f64 {
    let ty = y.trunc();
    let yint = ty == y;
    let hy = y * 0.5;
    let even = hy.trunc() == hy;
    let yodd = yint & !even;
    let negx = (x.to_bits() as i64) < 0;
    let r = sel(negx & yodd, -r, r);
    let bad = (f64::MIN..0.0).contains(&x) & !yint;
    let r = sel(bad, crate::vmath::INVALID, r);
    let one = (y == 0.0) | (x == 1.0) | ((x == -1.0) & (y.abs() > f64::MAX));
    sel(one, 1.0, r)
}

/// `vmath::hypot::hypot` on one f64 lane.
#[inline(always)]
pub(super) fn hypot_lane(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    let ay = y.abs();
    let ge = ax >= ay;
    let big = sel(ge, ax, ay);
    let small = sel(ge, ay, ax);
    let huge = big > HUGE;
    let tiny = big < TINY;
    let s = sel(tiny, SCALE_UP, 1.0);
    let s = sel(huge, SCALE_DOWN, s);
    let back = sel(tiny, SCALE_DOWN, 1.0);
    let back = sel(huge, SCALE_UP, back);
    let b = big * s;
    let sm = small * s;
    let s2 = sm * sm;
    let sum = b.mul_add(b, s2);
    let r = sum.sqrt() * back;
    sel((ax > f64::MAX) | (ay > f64::MAX), f64::INFINITY, r)
}

/// pow's one path (see the module docs).
pub(super) struct Pow;
/// hypot's one path.
pub(super) struct Hypot;

macro_rules! one_path {
    ($($f:ident: $lane:ident, $lane32:ident;)*) => {
        $(
            impl Paths2<f64> for $f {
                #[inline(always)]
                fn fast_ok(_: f64, _: f64) -> bool {
                    true
                }
                #[inline(always)]
                fn fast(x: f64, y: f64) -> f64 {
                    $lane(x, y)
                }
                #[inline(always)]
                fn general(x: f64, y: f64) -> f64 {
                    $lane(x, y)
                }
            }
            impl Paths2<f32> for $f {
                #[inline(always)]
                fn fast_ok(_: f32, _: f32) -> bool {
                    true
                }
                #[inline(always)]
                fn fast(x: f32, y: f32) -> f32 {
                    $lane32(x as f64, y as f64) as f32
                }
                #[inline(always)]
                fn general(x: f32, y: f32) -> f32 {
                    $lane32(x as f64, y as f64) as f32
                }
            }
        )*
    };
}

one_path! {
    Pow: pow_lane, pow_f32_lane;
    Hypot: hypot_lane, hypot_lane;
}

levels2! {
    pow64: f64, Pow;
    pow32: f32, Pow;
    hypot64: f64, Hypot;
    hypot32: f32, Hypot;
}
