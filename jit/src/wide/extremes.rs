//! The min and max of a run of values at full width (f64, f32, and i64 values of a typed
//! kernel): a trailing `min` or `max` whose body is a plain read of an input (`max(x)`, `min(m,
//! axis=1)`) folds each long enough row by one call (skeleton.rs `wide_folds`), whose partial
//! the segment's scalar accumulator then takes as one value; an argmax or argmin folds its
//! blocks so (`arg_blocks`).
//!
//! NumPy's `maximum` propagates NaN. The inline code's update (`Gen::maximum`) is a compare, a
//! select and a NaN test on the accumulator's chain; here each of [`LANES`] lanes keeps its
//! extreme by the one instruction x86's `maxp*` / `minp*` computes (`v > acc ? v : acc`, which
//! drops a NaN `v`), and, off that chain, the last NaN it saw. A run holding a NaN gives a NaN
//! (one of its own, not necessarily the payload the inline lanes keep), else its extreme; of
//! -0.0 and 0.0 the extreme is either. The caller (skeleton.rs `wide_folds`) folds a row whose
//! extreme is a zero or NaN again inline, so only a nonzero number, which is the only value of
//! its bits among those equal to it, is taken from here: the inline code's bits. rustc vectorises
//! the loop (`vmaxpd zmm` at AVX-512); int64 values (never NaN) fold as a plain reduction.

/// Lanes the loop keeps: four vectors of 8 f64 at AVX-512 (of 16 f32: two), so that the
/// `maxp*` chains overlap.
const LANES: usize = 32;

/// An element whose extremes are folded: f64, f32 and i64 (whose max and min `vpmaxsq` /
/// `vpminsq` compute at AVX-512, where the inline code's 128-bit lanes have no such instruction).
pub trait Extreme: Copy + PartialOrd {
    /// The identity of max (`-inf`), or of min (`inf`).
    fn identity(max: bool) -> Self;
    /// Whether the value is NaN.
    fn nan(self) -> bool;
    /// Whether a value may be NaN (else the fold is a plain reduction, which LLVM vectorises as
    /// one: a loop over lanes of its own would be vectorised across them, by gathers).
    const MAY_BE_NAN: bool;
}

impl Extreme for f64 {
    const MAY_BE_NAN: bool = true;
    #[inline(always)]
    fn identity(max: bool) -> f64 {
        if max { f64::NEG_INFINITY } else { f64::INFINITY }
    }
    #[inline(always)]
    fn nan(self) -> bool {
        self.is_nan()
    }
}

impl Extreme for i64 {
    const MAY_BE_NAN: bool = false;
    #[inline(always)]
    fn identity(max: bool) -> i64 {
        if max { i64::MIN } else { i64::MAX }
    }
    #[inline(always)]
    fn nan(self) -> bool {
        false
    }
}

impl Extreme for f32 {
    const MAY_BE_NAN: bool = true;
    #[inline(always)]
    fn identity(max: bool) -> f32 {
        if max { f32::NEG_INFINITY } else { f32::INFINITY }
    }
    #[inline(always)]
    fn nan(self) -> bool {
        self.is_nan()
    }
}

/// `v` where it is beyond `acc` (greater for max, less for min), else `acc`: `maxp*` / `minp*`'s
/// select, which keeps `acc` where either is NaN.
#[inline(always)]
fn pick<T: Extreme, const MAX: bool>(acc: T, v: T) -> T {
    let beyond = if MAX { v > acc } else { v < acc };
    if beyond { v } else { acc }
}

/// The max (`MAX`) or min of `x`: a NaN where `x` holds one, the identity where `x` is empty.
#[inline(always)]
pub(super) fn fold<T: Extreme, const MAX: bool>(x: &[T]) -> T {
    if !T::MAY_BE_NAN {
        return x.iter().fold(T::identity(MAX), |a, &v| pick::<T, MAX>(a, v));
    }
    let mut acc = [T::identity(MAX); LANES];
    // each lane's last NaN (the identity, which is not NaN, where it saw none)
    let mut nans = [T::identity(MAX); LANES];
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for c in chunks {
        for l in 0..LANES {
            let v = c[l];
            acc[l] = pick::<T, MAX>(acc[l], v);
            nans[l] = if v.nan() { v } else { nans[l] };
        }
    }
    let mut best = T::identity(MAX);
    let mut nan = None;
    for (&a, &n) in acc.iter().zip(&nans) {
        best = pick::<T, MAX>(best, a);
        if n.nan() {
            nan = Some(n);
        }
    }
    for &v in tail {
        best = pick::<T, MAX>(best, v);
        if v.nan() {
            nan = Some(v);
        }
    }
    nan.unwrap_or(best)
}

macro_rules! levels {
    ($($name:ident: $t:ty;)*) => {
        $(
            pub(super) mod $name {
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn max_avx2(x: &[$t]) -> $t {
                    super::fold::<$t, true>(x)
                }
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn min_avx2(x: &[$t]) -> $t {
                    super::fold::<$t, false>(x)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn max_avx512(x: &[$t]) -> $t {
                    super::fold::<$t, true>(x)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn min_avx512(x: &[$t]) -> $t {
                    super::fold::<$t, false>(x)
                }
            }
        )*
    };
}

levels! {
    extremes64: f64;
    extremes32: f32;
    extremes_i64: i64;
}

/// An element whose runs the wide code folds into their max or min.
pub trait WideExtreme: Extreme {
    /// The max (`max`) or min of a run at `level`: a NaN where the run holds one, else its
    /// extreme. Unsafe to call unless the host has `level` ([`super::Level::on_host`]), which
    /// call.rs checks.
    fn extreme(max: bool, level: super::Level) -> unsafe fn(&[Self]) -> Self;
}

macro_rules! wide_extreme {
    ($($t:ty: $m:ident;)*) => {
        $(
            impl WideExtreme for $t {
                fn extreme(max: bool, level: super::Level) -> unsafe fn(&[$t]) -> $t {
                    use super::Level;
                    match (max, level) {
                        (true, Level::Avx2) => $m::max_avx2,
                        (true, Level::Avx512) => $m::max_avx512,
                        (false, Level::Avx2) => $m::min_avx2,
                        (false, Level::Avx512) => $m::min_avx512,
                    }
                }
            }
        )*
    };
}

wide_extreme! {
    f64: extremes64;
    f32: extremes32;
    i64: extremes_i64;
}
