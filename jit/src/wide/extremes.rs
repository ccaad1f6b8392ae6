//! The min and max of a run of values at full width (f64, f32, and i64, i32 and bool values of a
//! typed kernel: a bool's max is `any`, its min `all`): a trailing `min` or `max` whose body is a plain read of an input (`max(x)`, `min(m,
//! axis=1)`) folds each long enough row by one call (skeleton.rs `wide_folds`), whose partial
//! the segment's scalar accumulator then takes as one value. (An argmax or argmin of a plain read
//! finds its row's point by one call of `args.rs`.)
//!
//! NumPy's `maximum` propagates NaN. The inline code's update (`Gen::maximum`) is a compare, a
//! select and a NaN test on the accumulator's chain; here each of [`LANES`] lanes keeps its
//! extreme by the one instruction x86's `maxp*` / `minp*` computes (`v > acc ? v : acc`, which
//! drops a NaN `v`), and, off that chain, the last NaN it saw. A run holding a NaN gives a NaN
//! (one of its own, not necessarily the payload the inline lanes keep), else its extreme; of
//! -0.0 and 0.0 the extreme is either. The caller (skeleton.rs `wide_folds`) folds a row whose
//! extreme is a NaN again inline, so only a number that is the only value of its bits among those
//! equal to it is taken from here: the inline code's bits. A nonzero number is; a zero is where
//! the row holds zeros of one sign only and is all its segment ([`row_extreme`] makes a zero of
//! a row holding both a NaN; where a segment is several rows, the caller folds a zero again too:
//! min of data holding zeros, ReLU's outputs, would otherwise pay both ways on every row). rustc
//! vectorises the loop (`vmaxpd zmm` at AVX-512); int64 and int32 values (never NaN) fold as a
//! plain reduction, and bools ([`Truth`]) as an or (max, `any`) or an and (min, `all`) of their
//! truths that stops once decided, tested every 4096 points (so a call may read only a prefix of
//! its run).

use super::args::{arg_f32, arg_f64, arg_i32, arg_i64, arg_truth};

/// Lanes the loop keeps: four vectors of 8 f64 at AVX-512 (of 16 f32: two), so that the
/// `maxp*` chains overlap.
const LANES: usize = 32;

/// An element whose extremes are folded: f64, f32, i64 (whose max and min `vpmaxsq` / `vpminsq`
/// compute at AVX-512, where the inline code's 128-bit lanes have no such instruction), i32 and
/// bool ([`Truth`]).
pub trait Extreme: Copy + PartialOrd {
    /// The identity of max (`-inf`), or of min (`inf`).
    fn identity(max: bool) -> Self;
    /// Whether the value is NaN.
    fn nan(self) -> bool;
    /// Whether a value may be NaN (else the fold is a plain reduction, which LLVM vectorises as
    /// one: a loop over lanes of its own would be vectorised across them, by gathers).
    const MAY_BE_NAN: bool;
    /// Whether the value is a zero of a float type.
    fn is_zero(self) -> bool;
    /// Whether the value is the zero of the other sign than `zero` (a zero), bit for bit.
    fn other_zero(self, zero: Self) -> bool;
    /// A NaN (of a float type; an integer's or a bool's some value, never asked for).
    fn nan_value() -> Self;
    /// The max (`MAX`) or min of `x` of a type without NaN: a plain reduction.
    #[inline(always)]
    fn plain<const MAX: bool>(x: &[Self]) -> Self {
        x.iter()
            .fold(Self::identity(MAX), |a, &v| pick::<Self, MAX>(a, v))
    }
}

/// The extreme `r` of the row `x`, as a row's fold gives it (skeleton.rs `wide_folds`): `r`,
/// unless `r` is a zero and `x` holds zeros of both signs (whose order in the inline lanes picks
/// the one they keep): then a NaN, which the caller folds again inline, as it does a row holding
/// a NaN. Only a zero extreme is looked at again, by a second pass over the row (from memory,
/// as slow as the fold: tracking the zeros in the fold's loop made every row's fold twice as
/// slow, and folding in blocks of 2048 points, each looked at again from L1, three times).
#[inline(always)]
pub fn row_extreme<T: Extreme>(r: T, x: &[T]) -> T {
    // (a fold, not `any`: no early exit, so the compare vectorises)
    if T::MAY_BE_NAN && r.is_zero() && x.iter().fold(false, |a, &v| a | v.other_zero(r)) {
        T::nan_value()
    } else {
        r
    }
}

impl Extreme for f64 {
    const MAY_BE_NAN: bool = true;
    #[inline(always)]
    fn is_zero(self) -> bool {
        self == 0.0
    }
    #[inline(always)]
    fn other_zero(self, zero: f64) -> bool {
        self.to_bits() == (-zero).to_bits()
    }
    fn nan_value() -> f64 {
        f64::NAN
    }
    #[inline(always)]
    fn identity(max: bool) -> f64 {
        if max { f64::NEG_INFINITY } else { f64::INFINITY }
    }
    #[inline(always)]
    fn nan(self) -> bool {
        self.is_nan()
    }
}

/// Integer values (never NaN): their max and min are a plain reduction.
macro_rules! int_extreme {
    ($($t:ty),*) => {
        $(
            impl Extreme for $t {
                const MAY_BE_NAN: bool = false;
                #[inline(always)]
                fn is_zero(self) -> bool {
                    false
                }
                #[inline(always)]
                fn other_zero(self, _: $t) -> bool {
                    false
                }
                fn nan_value() -> $t {
                    <$t>::MAX
                }
                #[inline(always)]
                fn identity(max: bool) -> $t {
                    if max { <$t>::MIN } else { <$t>::MAX }
                }
                #[inline(always)]
                fn nan(self) -> bool {
                    false
                }
            }
        )*
    };
}

int_extreme!(i64, i32);

/// A bool as NumPy stores it: one byte, true where it is nonzero, as kiln's loads read it. Its
/// values compare by their truth: its max is `any`, its min `all`, and this module's `find`
/// gives the first point of a truth.
#[derive(Clone, Copy, Debug)]
#[repr(transparent)]
pub struct Truth(pub u8);

impl Truth {
    #[inline(always)]
    fn is_true(self) -> bool {
        self.0 != 0
    }
}

impl PartialEq for Truth {
    #[inline(always)]
    fn eq(&self, other: &Truth) -> bool {
        self.is_true() == other.is_true()
    }
}

impl PartialOrd for Truth {
    #[inline(always)]
    fn partial_cmp(&self, other: &Truth) -> Option<std::cmp::Ordering> {
        self.is_true().partial_cmp(&other.is_true())
    }
}

/// The points a bool run's `any` or `all` (its max or min) reads between two tests of whether its
/// result is decided, as the inline loop's `any` and `all` do (skeleton.rs `DECIDE_STRETCH`).
const DECIDE: usize = 4096;

impl Extreme for Truth {
    const MAY_BE_NAN: bool = false;
    #[inline(always)]
    fn is_zero(self) -> bool {
        false
    }
    #[inline(always)]
    fn other_zero(self, _: Truth) -> bool {
        false
    }
    fn nan_value() -> Truth {
        Truth(0)
    }
    #[inline(always)]
    fn identity(max: bool) -> Truth {
        Truth(u8::from(!max))
    }
    #[inline(always)]
    fn nan(self) -> bool {
        false
    }
    /// `any` (`MAX`: an or of the bytes) or `all` (whether no byte is zero), a stretch of
    /// `DECIDE` points at a time, until one decides it.
    #[inline(always)]
    fn plain<const MAX: bool>(x: &[Truth]) -> Truth {
        for c in x.chunks(DECIDE) {
            let decided = if MAX {
                c.iter().fold(0u8, |a, v| a | v.0) != 0
            } else {
                c.iter().fold(false, |a, v| a | (v.0 == 0))
            };
            if decided {
                return Truth(u8::from(MAX));
            }
        }
        Truth::identity(MAX)
    }
}

impl Extreme for f32 {
    const MAY_BE_NAN: bool = true;
    #[inline(always)]
    fn is_zero(self) -> bool {
        self == 0.0
    }
    #[inline(always)]
    fn other_zero(self, zero: f32) -> bool {
        self.to_bits() == (-zero).to_bits()
    }
    fn nan_value() -> f32 {
        f32::NAN
    }
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
pub(super) fn pick<T: Extreme, const MAX: bool>(acc: T, v: T) -> T {
    if beyond::<T, MAX>(acc, v) { v } else { acc }
}

/// Whether `v` is beyond `acc`: greater (`MAX`) or less; false where either is NaN.
#[inline(always)]
pub(super) fn beyond<T: Extreme, const MAX: bool>(acc: T, v: T) -> bool {
    if MAX { v > acc } else { v < acc }
}

/// The max (`MAX`) or min of `x`: a NaN where `x` holds one, the identity where `x` is empty.
#[inline(always)]
pub(super) fn fold<T: Extreme, const MAX: bool>(x: &[T]) -> T {
    if !T::MAY_BE_NAN {
        return T::plain::<MAX>(x);
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
    // the lanes merged by halves, vertical operations that vectorise (lane by lane, the merge was
    // most of a call's time on rows of about a hundred points): the order of a max's merges
    // changes no extreme (no lane's is NaN) but a zero's sign
    let mut half = LANES / 2;
    while half > 0 {
        for l in 0..half {
            acc[l] = pick::<T, MAX>(acc[l], acc[l + half]);
        }
        half /= 2;
    }
    let mut best = acc[0];
    for &v in tail {
        best = pick::<T, MAX>(best, v);
    }
    // whether a lane saw a NaN, by a compare of them all that vectorises (the NaNs merged by
    // halves as the extremes did not: LLVM made a scalar test and blend of each lane, a third of
    // a call's time on rows of a hundred points); which NaN only on that rare path
    if nans.iter().chain(tail).fold(false, |a, v| a | v.nan()) {
        let mut nan = nans.iter().chain(tail).filter(|v| v.nan());
        return nan.next_back().copied().unwrap_or(best);
    }
    best
}

/// The first index of `best` in `x` (equal to it, or both NaN), `x.len()` where none is: chunks
/// of [`LANES`] compared whole to the first holding it, whose hits make a mask (the first hit its
/// lowest bit), then the rest point by point. A bool run's argmax (its first true) or argmin
/// ([`arg_truth`]).
#[inline(always)]
pub(super) fn find<T: Extreme>(x: &[T], best: T) -> usize {
    const { assert!(LANES <= 32, "a chunk's hits are the bits of a u32") };
    let nan = best.nan();
    let hit = |v: T| (v == best) | (nan & v.nan());
    let chunks = x.chunks_exact(LANES);
    let tail = chunks.remainder();
    for (k, c) in chunks.enumerate() {
        // (no exit inside a chunk, so the compares vectorise; the mask only of the chunk with a
        // hit, whose shifts vectorise less well)
        if c.iter().fold(false, |a, &v| a | hit(v)) {
            let bits = c
                .iter()
                .enumerate()
                .fold(0u32, |m, (l, &v)| m | (u32::from(hit(v)) << l));
            return k * LANES + bits.trailing_zeros() as usize;
        }
    }
    let at = x.len() - tail.len();
    tail.iter().position(|&v| hit(v)).map_or(x.len(), |k| at + k)
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
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn row_max_avx2(x: &[$t]) -> $t {
                    super::row_extreme(super::fold::<$t, true>(x), x)
                }
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn row_min_avx2(x: &[$t]) -> $t {
                    super::row_extreme(super::fold::<$t, false>(x), x)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn row_max_avx512(x: &[$t]) -> $t {
                    super::row_extreme(super::fold::<$t, true>(x), x)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn row_min_avx512(x: &[$t]) -> $t {
                    super::row_extreme(super::fold::<$t, false>(x), x)
                }
            }
        )*
    };
}

levels! {
    extremes64: f64;
    extremes32: f32;
    extremes_i64: i64;
    extremes_i32: i32;
    extremes_bool: super::Truth;
}

/// An element whose runs the wide code folds into their max or min.
pub trait WideExtreme: Extreme {
    /// The max (`max`) or min of a run at `level`: a NaN where the run holds one, else its
    /// extreme; a row's (`row`): a NaN too for a zero of a row holding zeros of both signs
    /// ([`row_extreme`]). Unsafe to call unless the host has `level`
    /// ([`super::Level::on_host`]), which call.rs checks.
    fn extreme(max: bool, level: super::Level, row: bool) -> unsafe fn(&[Self]) -> Self;
    /// The first index of a run's max (`max`) or min (`args.rs`), at AVX2 for either level (the
    /// routine is written in AVX2's registers). Unsafe to call unless the host has `level`, as
    /// [`WideExtreme::extreme`].
    fn arg(max: bool, level: super::Level) -> unsafe fn(&[Self]) -> usize;
    /// The type compiled code holds a value in: its own, but int64 for int32 and bool (0 / 1),
    /// whose lanes a typed kernel's reductions widen to their int64 accumulators.
    type Held: Copy;
    /// The value as compiled code holds it.
    fn held(self) -> Self::Held;
    /// A held value that is one of a run's values (or the identity) back in this type: exact.
    fn unheld(h: Self::Held) -> Self;
}

macro_rules! wide_extreme {
    ($($t:ty: $m:ident, $arg:ident, $h:ty, $held:expr, $unheld:expr;)*) => {
        $(
            impl WideExtreme for $t {
                type Held = $h;
                #[inline(always)]
                fn held(self) -> $h {
                    $held(self)
                }
                #[inline(always)]
                fn unheld(h: $h) -> $t {
                    $unheld(h)
                }
                fn extreme(max: bool, level: super::Level, row: bool) -> unsafe fn(&[$t]) -> $t {
                    use super::Level;
                    match (row, max, level) {
                        (false, true, Level::Avx2) => $m::max_avx2,
                        (false, true, Level::Avx512) => $m::max_avx512,
                        (false, false, Level::Avx2) => $m::min_avx2,
                        (false, false, Level::Avx512) => $m::min_avx512,
                        (true, true, Level::Avx2) => $m::row_max_avx2,
                        (true, true, Level::Avx512) => $m::row_max_avx512,
                        (true, false, Level::Avx2) => $m::row_min_avx2,
                        (true, false, Level::Avx512) => $m::row_min_avx512,
                    }
                }
                fn arg(max: bool, _: super::Level) -> unsafe fn(&[$t]) -> usize {
                    if max { $arg::<true> } else { $arg::<false> }
                }
            }
        )*
    };
}

wide_extreme! {
    f64: extremes64, arg_f64, f64, |v| v, |h| h;
    f32: extremes32, arg_f32, f32, |v| v, |h| h;
    i64: extremes_i64, arg_i64, i64, |v| v, |h| h;
    i32: extremes_i32, arg_i32, i64, i64::from, |h| h as i32;
    Truth: extremes_bool, arg_truth, i64, |v: Truth| i64::from(v.is_true()), |h| Truth(u8::from(h != 0));
}
