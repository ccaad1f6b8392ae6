//! log2, log10, log1p, arcsinh, arccosh and arctanh per lane, for the wide routines: `vmath::log`'s
//! log2, log10 and log1p and `vmath::arc_hyp` written for one lane (the operations in the order
//! they are emitted, the same constants, `mul_add` where they emit `fma`), the bits of the inline
//! route by construction.
//!
//! log2 and log10 take the inline code's branch (a lane not positive, normal and finite sends the
//! chunk to the general path: subnormals scaled, special values selected; a normal lane gets the
//! fast path's bits there too); log1p and the inverse hyperbolic functions are straight-line selects
//! inline, so their fast and general paths are one. f32 is, as inline, the f64 algorithm of the
//! widened lane rounded once.

use super::lanes::{
    Lane, Paths, log_fast_ok, log_kernel64, log_reduce64, log_specials64, map, poly, sel, widened_f32,
};
use crate::vmath::arc_hyp::{HUGE, TINY};
use crate::vmath::log::{
    IVLN2HI, IVLN2LO, IVLN10HI, IVLN10LO, LN2_HI, LN2_LO, LOG10_2HI, LOG10_2LO, MIN_NORMAL,
};

/// `vmath::log::split`: `(hi, lo)` with `hi + lo = f - hfsq + s·(hfsq + R)`, `hi` its top 21 bits.
#[inline(always)]
fn split(f: f64, hfsq: f64, s: f64, r: f64) -> (f64, f64) {
    let hi = f - hfsq;
    let hi = f64::from_bits(hi.to_bits() & ((-1i64 << 32) as u64));
    let lo = f - hi;
    let lo = lo - hfsq;
    let a = hfsq + r;
    let a = s * a;
    (hi, lo + a)
}

/// `vmath::log::log2_reduced`.
#[inline(always)]
fn log2_reduced(f: f64, k: f64) -> f64 {
    let (hfsq, s, r) = log_kernel64(f);
    let (hi, lo) = split(f, hfsq, s, r);
    let val_hi = hi * IVLN2HI;
    let lh = lo + hi;
    let a = lh * IVLN2LO;
    let b = lo * IVLN2HI;
    let val_lo = a + b;
    let w = k + val_hi;
    let d = k - w;
    let d = d + val_hi;
    let val_lo = val_lo + d;
    val_lo + w
}

/// `vmath::log::log10_reduced`.
#[inline(always)]
fn log10_reduced(f: f64, k: f64) -> f64 {
    let (hfsq, s, r) = log_kernel64(f);
    let (hi, lo) = split(f, hfsq, s, r);
    let val_hi = hi * IVLN10HI;
    let y = k * LOG10_2HI;
    let a = k * LOG10_2LO;
    let lh = lo + hi;
    let b = lh * IVLN10LO;
    let a = a + b;
    let c = lo * IVLN10HI;
    let val_lo = a + c;
    let w = y + val_hi;
    let d = y - w;
    let d = d + val_hi;
    let val_lo = val_lo + d;
    val_lo + w
}

/// `vmath::log::log1p_core`: fdlibm's log1p of finite `x > -1`, `kextra·ln2` added into `k`.
#[inline(always)]
fn log1p_core(x: f64, kextra: Option<f64>) -> f64 {
    let u = x + 1.0;
    let ub = u.to_bits().wrapping_add((0x3ff00000 - 0x3fe6a09e) << 32);
    let e = ub >> 52;
    let kb = e.wrapping_add(0x4338_0000_0000_0000 - 0x3ff);
    let k = f64::from_bits(kb) + -6755399441055744.0;
    let um = u - x;
    let c_big = 1.0 - um;
    let u1 = u + -1.0;
    let c_small = x - u1;
    let c = sel(k >= 2.0, c_big, c_small);
    let m = (ub & 0x000f_ffff_ffff_ffff).wrapping_add(0x3fe6a09e << 32);
    let f = f64::from_bits(m) + -1.0;
    let near = (x > -f64::from_bits(0x3fd2bec500000000)) & (x < f64::from_bits(0x3fda827a00000000));
    let f = sel(near, x, f);
    let (hfsq, s, r) = log_kernel64(f);
    let inv = poly(s, &[1.0, -2.0, 2.0, -2.0]);
    let c = c * (-k).pow2();
    let c = c * inv;
    let c = sel(k < 54.0, c, 0.0);
    let c = sel(near, 0.0, c);
    let k = sel(near, 0.0, k);
    let k = match kextra {
        Some(ke) => k + ke,
        None => k,
    };
    let a = hfsq + r;
    let a = s * a;
    let b = k * LN2_LO;
    let b = b + c;
    let a = a + b;
    let a = a - hfsq;
    let a = a + f;
    let d = k * LN2_HI;
    a + d
}

/// `vmath::log::log1p`.
#[inline(always)]
pub(super) fn log1p(x: f64) -> f64 {
    let y = log1p_core(x, None);
    let y = sel(x.abs() < 1.1102230246251565e-16, x, y);
    let ok = (x > -1.0) & (x < f64::INFINITY);
    let sp = sel(x < -1.0, crate::vmath::INVALID, x);
    let sp = sel(x == -1.0, f64::NEG_INFINITY, sp);
    sel(ok, y, sp)
}

/// `vmath::arc_hyp::asinh`.
#[inline(always)]
pub(super) fn asinh(x: f64) -> f64 {
    let y = x.abs();
    let y2 = y * y;
    let q = (y2 + 1.0).sqrt();
    let small = y < 2.0;
    let huge = y >= HUGE;
    let num = sel(small, y2, 1.0);
    let den = sel(small, q + 1.0, q + y);
    let t = num / den;
    let a_small = y + t;
    let w = y + y;
    let w = w + t;
    let a_big = w + -1.0;
    let a = sel(small, a_small, a_big);
    let a = sel(huge, y + -1.0, a);
    let r = log1p_core(a, Some(sel(huge, 1.0, 0.0)));
    let r = r.copysign(x);
    // `&` of the two compares as the inline code's `band` (what LLVM vectorises)
    #[allow(clippy::manual_range_contains)]
    let ok = (y >= TINY) & (y < f64::INFINITY);
    sel(ok, r, x)
}

/// `vmath::arc_hyp::acosh`.
#[inline(always)]
pub(super) fn acosh(x: f64) -> f64 {
    let t = x + -1.0;
    let small = x < 2.0;
    let huge = x >= HUGE;
    let ss = t.mul_add(t, t + t);
    let sb = x.mul_add(x, -1.0);
    let sq = sel(small, ss, sb).sqrt();
    let a_small = t + sq;
    let w = x + sq;
    let a_big = w + -1.0;
    let a = sel(small, a_small, a_big);
    let a = sel(huge, t, a);
    let r = log1p_core(a, Some(sel(huge, 1.0, 0.0)));
    #[allow(clippy::manual_range_contains)]
    let ok = (x >= 1.0) & (x < f64::INFINITY);
    let sp = sel(x == f64::INFINITY, f64::INFINITY, x);
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let bad = !(x >= 1.0);
    let sp = sel(bad, crate::vmath::INVALID, sp);
    sel(ok, r, sp)
}

/// `vmath::arc_hyp::atanh`.
#[inline(always)]
pub(super) fn atanh(x: f64) -> f64 {
    let y = x.abs();
    let den = 1.0 - y;
    let d = y / den;
    let y2 = y + y;
    let a_small = y2.mul_add(d, y2);
    let a_big = d + d;
    let a = sel(y < 0.5, a_small, a_big);
    let r = log1p_core(a, None);
    let r = r * 0.5;
    let r = r.copysign(x);
    let r = sel(y == 1.0, f64::INFINITY.copysign(x), r);
    let r = sel(y > 1.0, crate::vmath::INVALID, r);
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let tiny = !(y >= TINY);
    sel(tiny, x, r)
}

pub(super) struct Log2;
pub(super) struct Log10;
pub(super) struct Log1p;
pub(super) struct Asinh;
pub(super) struct Acosh;
pub(super) struct Atanh;

macro_rules! log_paths {
    ($($f:ident, $reduced:ident;)*) => {
        $(
            impl Paths<f64> for $f {
                #[inline(always)]
                fn fast_ok(x: f64) -> bool {
                    log_fast_ok(x, MIN_NORMAL, f64::MAX)
                }
                /// `vmath::log::fast_or_general`'s fast path: no subnormal scaling, no specials.
                #[inline(always)]
                fn fast(x: f64) -> f64 {
                    let (f, k) = log_reduce64(x, false);
                    $reduced(f, k)
                }
                #[inline(always)]
                fn general(x: f64) -> f64 {
                    let (f, k) = log_reduce64(x, true);
                    log_specials64(x, $reduced(f, k))
                }
            }
        )*
    };
}

log_paths! {
    Log2, log2_reduced;
    Log10, log10_reduced;
}

/// The functions whose inline code has no branch: one path.
macro_rules! one_path {
    ($($f:ident, $lane:ident;)*) => {
        $(
            impl Paths<f64> for $f {
                #[inline(always)]
                fn fast_ok(_: f64) -> bool {
                    true
                }
                #[inline(always)]
                fn fast(x: f64) -> f64 {
                    $lane(x)
                }
                #[inline(always)]
                fn general(x: f64) -> f64 {
                    $lane(x)
                }
            }
        )*
    };
}

one_path! {
    Log1p, log1p;
    Asinh, asinh;
    Acosh, acosh;
    Atanh, atanh;
}

widened_f32!(Log2 Log10 Log1p Asinh Acosh Atanh);

super::lanes::levels! {
    log2_64: f64, Log2;
    log2_32: f32, Log2;
    log10_64: f64, Log10;
    log10_32: f32, Log10;
    log1p64: f64, Log1p;
    log1p32: f32, Log1p;
    asinh64: f64, Asinh;
    asinh32: f32, Asinh;
    acosh64: f64, Acosh;
    acosh32: f32, Acosh;
    atanh64: f64, Atanh;
    atanh32: f32, Atanh;
}
