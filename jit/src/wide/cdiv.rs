//! Complex division at full width: `a / b` of complex values by Smith's method as NumPy writes it
//! (the oracle, `kiln_ir::complex::div`), in the operations and the order the inline code lowers it
//! (`lower/complex.rs`, `Gen::div`), so the same bits: where `|br| >= |bi|` (false for NaN),
//! `rat = bi / br, scl = 1 / (br + bi rat)`, else `rat = br / bi, scl = 1 / (bi + br rat)`, each
//! lane's divisor parts chosen before the two divisions; the numerators `ar + ai rat`, `ai - ar
//! rat` or `ai + ar rat`, `ai rat - ar`; a divisor of two zero parts gives `(ar·inf, ai·inf)`.
//! Plain multiplications and additions, no fused multiply-add (the inline code has none).
//!
//! The inline code runs 2 complex128 points (4 complex64) a step in 128-bit lanes, about 40
//! instructions a step around its two divisions; here rustc vectorises the loop over the points at
//! the level's width, the parts deinterleaved by shuffles: on an Intel Xeon with AVX-512, 1.1 ns a
//! complex128 point against 2.3 inline (a Rust copy of both loops over 10,000 points in cache).
//!
//! A routine's slices hold the points interleaved as memory holds them (`re, im, re, im, ...`),
//! two parts a point: `xs[2j..2j + 2] = xs[2j..2j + 2] / ys[2j..2j + 2]`, the dividends read from
//! `src` where it is given (a kernel's complex input where it lies), the signature of the
//! routines of two arguments (`binary.rs`), so a kernel stages it as one (`skeleton/block.rs`).

use super::lanes::{Lane, sel};

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

/// Every point of `xs` divided by `ys`'s (as long: callers check), the dividends from `src` where
/// given (as long as `xs`); the slices hold whole points (an even number of parts: callers check).
#[inline(always)]
fn map_div<T: Lane>(xs: &mut [T], ys: &[T], src: Option<&[T]>) {
    let (x, _) = xs.as_chunks_mut::<2>();
    let (y, _) = ys.as_chunks::<2>();
    match src {
        None => {
            for (x, y) in x.iter_mut().zip(y) {
                let (re, im) = div(x[0], x[1], y[0], y[1]);
                *x = [re, im];
            }
        }
        Some(src) => {
            let (s, _) = src.as_chunks::<2>();
            for ((x, y), s) in x.iter_mut().zip(y).zip(s) {
                let (re, im) = div(s[0], s[1], y[0], y[1]);
                *x = [re, im];
            }
        }
    }
}

/// The `#[target_feature]` functions of complex division of parts type `$t`, as `binary.rs`'s
/// `levels2!` makes them for the routines of two arguments.
macro_rules! levels {
    ($($name:ident: $t:ty;)*) => {
        $(
            pub(super) mod $name {
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn avx2(xs: &mut [$t], ys: &[$t], src: Option<&[$t]>) {
                    super::map_div::<$t>(xs, ys, src)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn avx512(xs: &mut [$t], ys: &[$t], src: Option<&[$t]>) {
                    super::map_div::<$t>(xs, ys, src)
                }
            }
        )*
    };
}

levels! {
    div128: f64;
    div64: f32;
}
