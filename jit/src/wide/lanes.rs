//! The per-lane algorithms of the wide routines, each the inline vector math's general path written
//! for one lane (the operations in the order `vmath` emits them, its constants, `mul_add` where it
//! emits `fma`), and the `#[target_feature]` loops over slices that rustc vectorises.

use crate::vmath::exp::{ExpConsts, F64 as EXP64};
use crate::vmath::f32x4::{
    F32 as EXP32, FD_LN2_HI as LN2_HI_32, FD_LN2_LO as LN2_LO_32, LG as LG32, MIN_NORMAL as MIN_NORMAL_32,
};
use crate::vmath::log::{LG as LG64, LN2_HI as LN2_HI_64, LN2_LO as LN2_LO_64, MIN_NORMAL as MIN_NORMAL_64};

/// The operations the algorithms need, on f64 and on f32 (constants rounded to the type as
/// `vmath::Vb::c` rounds them).
trait Lane:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// The float nearest the f64 `x` (`x as f32` on f32).
    fn c(x: f64) -> Self;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn round_ties_even(self) -> Self;
    fn floor(self) -> Self;
    /// `2^j` for integers `j` that give a normal result (`vmath::Vb::pow2`).
    fn pow2(self) -> Self;
    /// `self · 2^k` for integers `k` that keep it normal: `k` added into the exponent field
    /// (`vmath::Vb::ldexp_fast`).
    fn ldexp_fast(self, k: Self) -> Self;
}

impl Lane for f64 {
    #[inline(always)]
    fn c(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn mul_add(self, a: f64, b: f64) -> f64 {
        f64::mul_add(self, a, b)
    }
    #[inline(always)]
    fn round_ties_even(self) -> f64 {
        f64::round_ties_even(self)
    }
    #[inline(always)]
    fn floor(self) -> f64 {
        f64::floor(self)
    }
    #[inline(always)]
    fn pow2(self) -> f64 {
        // j + (1.5·2^52 + 1023) holds j + 1023 in its low mantissa bits; shifting by 52 keeps just them
        f64::from_bits((self + (6755399441055744.0 + 1023.0)).to_bits() << 52)
    }
    #[inline(always)]
    fn ldexp_fast(self, k: f64) -> f64 {
        f64::from_bits(
            self.to_bits()
                .wrapping_add((k + 6755399441055744.0).to_bits() << 52),
        )
    }
}

impl Lane for f32 {
    #[inline(always)]
    fn c(x: f64) -> f32 {
        x as f32
    }
    #[inline(always)]
    fn mul_add(self, a: f32, b: f32) -> f32 {
        f32::mul_add(self, a, b)
    }
    #[inline(always)]
    fn round_ties_even(self) -> f32 {
        f32::round_ties_even(self)
    }
    #[inline(always)]
    fn floor(self) -> f32 {
        f32::floor(self)
    }
    #[inline(always)]
    fn pow2(self) -> f32 {
        f32::from_bits((self + (12582912.0 + 127.0) as f32).to_bits() << 23)
    }
    #[inline(always)]
    fn ldexp_fast(self, k: f32) -> f32 {
        f32::from_bits(self.to_bits().wrapping_add((k + 12582912.0).to_bits() << 23))
    }
}

#[inline(always)]
fn sel<T>(m: bool, a: T, b: T) -> T {
    if m { a } else { b }
}

/// `vmath::Vb::poly`: Horner's rule with FMA, coefficients ascending.
#[inline(always)]
fn poly<T: Lane>(x: T, coeffs: &[f64]) -> T {
    let (&last, rest) = coeffs.split_last().expect("a polynomial has coefficients");
    let mut acc = T::c(last);
    for &c in rest.iter().rev() {
        acc = acc.mul_add(x, T::c(c));
    }
    acc
}

/// `vmath::Vb::poly2`: even and odd halves.
#[inline(always)]
fn poly2<T: Lane, const E: usize, const O: usize>(x: T, x2: T, coeffs: &[f64]) -> T {
    let mut even = [0.0; E];
    let mut odd = [0.0; O];
    for (i, &c) in coeffs.iter().enumerate() {
        if i % 2 == 0 {
            even[i / 2] = c;
        } else {
            odd[i / 2] = c;
        }
    }
    let e = poly(x2, &even);
    let o = poly(x2, &odd);
    o.mul_add(x, e)
}

/// `vmath::exp::exp_reduce` (no correction): `(k, e^r)` with `x = k·ln2 + r`.
#[inline(always)]
fn exp_reduce<T: Lane, const E: usize, const O: usize>(c: &ExpConsts, x: T) -> (T, T) {
    let k = (x * T::c(c.log2e)).round_ties_even();
    let nk = -k;
    let r = nk.mul_add(T::c(c.ln2_hi), x);
    let r = nk.mul_add(T::c(c.ln2_lo), r);
    // exp_poly
    let r2 = r * r;
    let q = poly2::<T, E, O>(r, r2, c.q);
    let s = r2.mul_add(q, r);
    (k, s + T::c(1.0))
}

/// Whether `x` takes `vmath::exp::exp_with`'s fast path: `x² < edge²` (NaN does not).
#[inline(always)]
fn exp_fast_ok<T: Lane>(c: &ExpConsts, x: T) -> bool {
    x * x < T::c(c.edge * c.edge)
}

/// `vmath::exp::exp_with`'s fast path: `k` added into the exponent field.
#[inline(always)]
fn exp_fast<T: Lane, const E: usize, const O: usize>(c: &ExpConsts, x: T) -> T {
    let (k, p) = exp_reduce::<T, E, O>(c, x);
    p.ldexp_fast(k)
}

/// `vmath::exp::exp_with`'s general path: clamp, reduction, polynomial, two exact scalings.
#[inline(always)]
fn exp_general<T: Lane, const E: usize, const O: usize>(c: &ExpConsts, x: T) -> T {
    // clamp (keeps NaN)
    let hi = T::c(c.clamp.1);
    let x = sel(x > hi, hi, x);
    let lo = T::c(c.clamp.0);
    let x = sel(x < lo, lo, x);
    let (k, p) = exp_reduce::<T, E, O>(c, x);
    // scale
    let k1 = (k * T::c(0.5)).floor();
    let k2 = k - k1;
    p * k1.pow2() * k2.pow2()
}

/// `vmath::log::log`: on the fast path (`general` false) `reduce_with(x, false)` and `log_reduced`,
/// on the general path `reduce` (subnormals scaled by 2^54), `log_reduced` and `specials`.
#[inline(always)]
fn log_f64_lane(x: f64, general: bool) -> f64 {
    // reduce_with(x, general)
    let sub = general & (x < MIN_NORMAL_64);
    let xs = x * 18014398509481984.0; // 2^54
    let xx = sel(sub, xs, x);
    let kadj = sel(sub, -54.0, 0.0);
    let u = xx.to_bits().wrapping_add((0x3ff00000 - 0x3fe6a09e) << 32);
    let e = u >> 52;
    let kb = e.wrapping_add(0x4338_0000_0000_0000 - 0x3ff);
    let kf = f64::from_bits(kb) + -6755399441055744.0;
    let k = if general { kf + kadj } else { kf };
    let m = (u & 0x000f_ffff_ffff_ffff).wrapping_add(0x3fe6a09e << 32);
    let f = f64::from_bits(m) + -1.0;
    // kernel
    let half = f * 0.5;
    let hfsq = half * f;
    let two = f + 2.0;
    let s = f / two;
    let z = s * s;
    let r = poly(z, &LG64);
    let r = z * r;
    // log_reduced
    let a = hfsq + r;
    let b = k * LN2_LO_64;
    let a = s.mul_add(a, b);
    let a = a - hfsq;
    let a = a + f;
    let y = k.mul_add(LN2_HI_64, a);
    if !general {
        return y;
    }
    // specials
    let ok = (x > 0.0) & (x < f64::INFINITY);
    let sp = sel(x < 0.0, crate::vmath::INVALID, x);
    let sp = sel(x == 0.0, f64::NEG_INFINITY, sp);
    sel(ok, y, sp)
}

/// `vmath::f32x4::log`: on the fast path (`general` false) `log_normal(x, None)`, on the general
/// path subnormals scaled by 2^25, `log_normal(x, Some(kadj))` and the special values.
#[inline(always)]
fn log_f32_lane(x: f32, general: bool) -> f32 {
    let c = <f32 as Lane>::c;
    let fin = x < f32::INFINITY;
    let sub = general & (x < c(MIN_NORMAL_32));
    let xs = x * 33554432.0; // 2^25
    let xx = sel(sub, xs, x);
    let kadj = sel(sub, -25.0, 0.0);
    // log_normal(xx, Some(kadj))
    let u = xx.to_bits().wrapping_add(0x3f800000 - 0x3f3504f3);
    let e = u >> 23;
    let kb = e.wrapping_add(0x4b40_0000 - 0x7f);
    let kf = f32::from_bits(kb) + -12582912.0;
    let k = if general { kf + kadj } else { kf };
    let m = (u & 0x007f_ffff).wrapping_add(0x3f3504f3);
    let f = f32::from_bits(m) + -1.0;
    let two = f + 2.0;
    let s = f / two;
    let z = s * s;
    let r = poly(z, &LG32);
    let r = z * r;
    let half = f * 0.5;
    let hfsq = half * f;
    let a = hfsq + r;
    let b = k * c(LN2_LO_32);
    let a = s.mul_add(a, b);
    let a = a - hfsq;
    let a = a + f;
    let y = k.mul_add(c(LN2_HI_32), a);
    if !general {
        return y;
    }
    // specials
    let ok = (x > 0.0) & fin;
    let sp = sel(x < 0.0, c(crate::vmath::INVALID), x);
    let sp = sel(x == 0.0, f32::NEG_INFINITY, sp);
    sel(ok, y, sp)
}

/// Lanes per chunk: two AVX-512 vectors of f64, one of f32, four AVX2 vectors of f64.
const CHUNK: usize = 16;

/// One function on one type: which lanes may take the fast path, the fast path, the general path.
/// Function items rather than closures, so that each is inlined into the `#[target_feature]`
/// function (an outlined closure is compiled without its features: libm's `fma` per lane).
trait Paths<T: Copy> {
    fn fast_ok(x: T) -> bool;
    fn fast(x: T) -> T;
    fn general(x: T) -> T;
}

/// The chunk's lanes by the fast path if every one of them allows it, else by the general path:
/// the inline path's branch, taken per chunk rather than per vector (where `fast_ok` holds, both
/// give the same bits).
#[inline(always)]
fn chunk<T: Copy, P: Paths<T>>(c: &mut [T; CHUNK]) {
    let mut ok = true;
    for &x in c.iter() {
        ok &= P::fast_ok(x);
    }
    if ok {
        for x in c.iter_mut() {
            *x = P::fast(*x);
        }
    } else {
        for x in c.iter_mut() {
            *x = P::general(*x);
        }
    }
}

/// [`chunk`] over the slice; the remainder (fewer than [`CHUNK`] lanes) is copied into a chunk
/// padded with its first element, computed, and copied back.
#[inline(always)]
fn map<T: Copy, P: Paths<T>>(xs: &mut [T]) {
    let mut chunks = xs.chunks_exact_mut(CHUNK);
    for c in &mut chunks {
        chunk::<T, P>(c.try_into().expect("a chunk of CHUNK lanes"));
    }
    let rem = chunks.into_remainder();
    if let Some(&first) = rem.first() {
        let mut buf = [first; CHUNK];
        buf[..rem.len()].copy_from_slice(rem);
        chunk::<T, P>(&mut buf);
        rem.copy_from_slice(&buf[..rem.len()]);
    }
}

struct Exp;
struct Log;

impl Paths<f64> for Exp {
    #[inline(always)]
    fn fast_ok(x: f64) -> bool {
        exp_fast_ok(&EXP64, x)
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        exp_fast::<f64, 5, 5>(&EXP64, x)
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        exp_general::<f64, 5, 5>(&EXP64, x)
    }
}

impl Paths<f32> for Exp {
    #[inline(always)]
    fn fast_ok(x: f32) -> bool {
        exp_fast_ok(&EXP32, x)
    }
    #[inline(always)]
    fn fast(x: f32) -> f32 {
        exp_fast::<f32, 3, 2>(&EXP32, x)
    }
    #[inline(always)]
    fn general(x: f32) -> f32 {
        exp_general::<f32, 3, 2>(&EXP32, x)
    }
}

/// Whether `x` takes `vmath::log`'s fast path: positive, normal and finite (`fast_or_general`),
/// as `min_normal <= x <= max` (`x < inf` is turned by LLVM into a test of the bits that it does not
/// vectorise here).
#[inline(always)]
fn log_fast_ok<T: Lane>(x: T, min_normal: f64, max: f64) -> bool {
    (x >= T::c(min_normal)) & (x <= T::c(max))
}

impl Paths<f64> for Log {
    #[inline(always)]
    fn fast_ok(x: f64) -> bool {
        log_fast_ok(x, MIN_NORMAL_64, f64::MAX)
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        log_f64_lane(x, false)
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        log_f64_lane(x, true)
    }
}

impl Paths<f32> for Log {
    #[inline(always)]
    fn fast_ok(x: f32) -> bool {
        log_fast_ok(x, MIN_NORMAL_32, f32::MAX as f64)
    }
    #[inline(always)]
    fn fast(x: f32) -> f32 {
        log_f32_lane(x, false)
    }
    #[inline(always)]
    fn general(x: f32) -> f32 {
        log_f32_lane(x, true)
    }
}

macro_rules! levels {
    ($($name:ident: $t:ty, $f:ident;)*) => {
        $(
            pub(super) mod $name {
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn avx2(xs: &mut [$t]) {
                    super::map::<$t, super::$f>(xs)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn avx512(xs: &mut [$t]) {
                    super::map::<$t, super::$f>(xs)
                }
            }
        )*
    };
}

levels! {
    exp64: f64, Exp;
    exp32: f32, Exp;
    log64: f64, Log;
    log32: f32, Log;
}

pub(super) use exp32::{avx2 as exp_f32_avx2, avx512 as exp_f32_avx512};
pub(super) use exp64::{avx2 as exp_f64_avx2, avx512 as exp_f64_avx512};
pub(super) use log32::{avx2 as log_f32_avx2, avx512 as log_f32_avx512};
pub(super) use log64::{avx2 as log_f64_avx2, avx512 as log_f64_avx512};
