//! Complex values at full width: the quotient `a / b` and the magnitude `|z|`, over points whose
//! parts are interleaved as memory holds complex values (`re, im, re, im, ...`).
//!
//! **Division** by Smith's method as NumPy writes it (the oracle, `kiln_ir::complex::div`), in the
//! operations and the order the inline code lowers it (`lower/complex.rs`, `Gen::div`), so the
//! same bits: where `|br| >= |bi|` (false for NaN), `rat = bi / br, scl = 1 / (br + bi rat)`, else
//! `rat = br / bi, scl = 1 / (bi + br rat)`, each lane's divisor parts chosen before the two
//! divisions; the numerators `ar + ai rat`, `ai - ar rat` or `ai + ar rat`, `ai rat - ar`; a
//! divisor of two zero parts gives `(ar·inf, ai·inf)`. Plain multiplications and additions, no
//! fused multiply-add (the inline code has none). The inline code runs 2 complex128 points (4
//! complex64) a step in 128-bit lanes, about 40 instructions a step around its two divisions; here
//! rustc vectorises the loop over the points at the level's width, the parts deinterleaved by
//! shuffles: on an Intel Xeon with AVX-512, 1.1 ns a complex128 point against 2.3 inline (a Rust
//! copy of both loops over 10,000 points in cache). Its slices: `xs[2j..2j + 2] = xs[2j..2j + 2] /
//! ys[2j..2j + 2]`, the dividends read from a source where one is given (a kernel's complex input
//! where it lies), the signature of the routines of two arguments (`binary.rs`), so a kernel
//! stages it as one (`skeleton/block.rs`).
//!
//! **Magnitude**: `|z|` is `hypot` of the parts, as the inline code computes it (`math::lower` of
//! `MathFn::Hypot`: complex128's parts by the f64 lane of `vmath::hypot`, complex64's widened to
//! f64 and rounded once), the wide hypot routine's lanes (`pow.rs`), so the same bits; read from
//! the interleaved points where they lie, or from a slot of them, `n` magnitudes from `2n` parts.

use super::lanes::{Lane, sel};
use super::pow::{hypot_lane, hypot_widened_lane};
use super::{Io, write};
use std::mem::MaybeUninit;

/// `a / b` of one point's parts (see the module doc).
#[inline(always)]
fn div<T: Lane>(ar: T, ai: T, br: T, bi: T) -> (T, T) {
    let (abr, abi) = (br.abs(), bi.abs());
    let big = abr >= abi;
    let n = sel(big, bi, br);
    let d = sel(big, br, bi);
    let rat = n / d;
    let den = d + n * rat;
    let scl = T::c(1.0) / den;
    let xr = ar * rat;
    let xi = ai * rat;
    let re = sel(big, ar + xi, ai + xr);
    let im = sel(big, ai - xr, xi - ar);
    // both parts zero (a sum of two magnitudes is zero only where both are)
    let zero = abr + abi == T::c(0.0);
    let inf = T::c(f64::INFINITY);
    (sel(zero, ar * inf, re * scl), sel(zero, ai * inf, im * scl))
}

/// Every point of the dividends (in place, or read from the source and the quotients written into
/// the destination) divided by `ys`'s (as long: callers check); the slices hold whole points (an
/// even number of parts: callers check).
#[inline(always)]
fn map_div<T: Lane>(io: Io<'_, T>, ys: &[T]) {
    let (y, _) = ys.as_chunks::<2>();
    match io {
        Io::InPlace(xs) => {
            let (x, _) = xs.as_chunks_mut::<2>();
            for (x, y) in x.iter_mut().zip(y) {
                let (re, im) = div(x[0], x[1], y[0], y[1]);
                *x = [re, im];
            }
        }
        Io::From { dst, src } => {
            let (x, _) = dst.as_chunks_mut::<2>();
            let (s, _) = src.as_chunks::<2>();
            for ((x, y), s) in x.iter_mut().zip(y).zip(s) {
                let (re, im) = div(s[0], s[1], y[0], y[1]);
                write(&mut x[..], &[re, im]);
            }
        }
    }
}

/// A float type of complex parts: `|z|` of one point.
pub(super) trait Parts: Copy {
    /// `hypot(re, im)` as the inline code computes it (see the module doc).
    fn magnitude(re: Self, im: Self) -> Self;
}

impl Parts for f64 {
    #[inline(always)]
    fn magnitude(re: f64, im: f64) -> f64 {
        hypot_lane(re, im)
    }
}

impl Parts for f32 {
    #[inline(always)]
    fn magnitude(re: f32, im: f32) -> f32 {
        hypot_widened_lane(re as f64, im as f64) as f32
    }
}

/// `dst[j] = |z_j|` for the points `z_j` of `src` (two parts each, `src` twice as long as `dst`:
/// callers check), into elements that need not hold values yet.
#[inline(always)]
fn map_abs<T: Parts>(dst: &mut [MaybeUninit<T>], src: &[T]) {
    let (s, _) = src.as_chunks::<2>();
    for (d, s) in dst.iter_mut().zip(s) {
        d.write(T::magnitude(s[0], s[1]));
    }
}

/// The `#[target_feature]` functions of complex division of parts type `$t`, as `binary.rs`'s
/// `levels2!` makes them for the routines of two arguments.
macro_rules! levels {
    ($($name:ident: $t:ty;)*) => {
        $(
            pub(super) mod $name {
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn avx2(io: super::Io<'_, $t>, ys: &[$t]) {
                    super::map_div::<$t>(io, ys)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn avx512(io: super::Io<'_, $t>, ys: &[$t]) {
                    super::map_div::<$t>(io, ys)
                }
            }
        )*
    };
}

levels! {
    div128: f64;
    div64: f32;
}

/// The `#[target_feature]` functions of the magnitude of points whose parts are `$t`.
macro_rules! abs_levels {
    ($($name:ident: $t:ty;)*) => {
        $(
            pub(super) mod $name {
                use std::mem::MaybeUninit;
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn avx2(dst: &mut [MaybeUninit<$t>], src: &[$t]) {
                    super::map_abs::<$t>(dst, src)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn avx512(dst: &mut [MaybeUninit<$t>], src: &[$t]) {
                    super::map_abs::<$t>(dst, src)
                }
            }
        )*
    };
}

abs_levels! {
    abs128: f64;
    abs64: f32;
}
