//! The sum of a row at full width, as the inline loop partitions it: a trailing `sum` or `mean`
//! of f32 values whose body is a plain read of an input (`sum(x)`, `mean(m, axis=1)`) or the
//! product of two (`sum(x*y)`, `sum(x*x)`), or of f64 values whose body is a plain read or a
//! square (`sum(x)`, `sum(x*x)`: the sums that keep 16 partials), folds each long enough row by
//! one call (skeleton.rs `wide_folds`), in place of the inline loop, into the very accumulators
//! that loop keeps.
//!
//! **The inline partition.** The inline code keeps [`PARTS`] f64 partials in vector
//! accumulators, as many vectors an iteration: f32 in 4 accumulators, each f32 vector of 4 lanes
//! widened to two f64 halves added into its accumulator's two `F64X2`s; f64 in 8 `F64X2`
//! accumulators of 2 lanes. Element `e` of each run of 16 goes into partial `e`. The vectors
//! after the last whole run (fewer than 4 of f32, 8 of f64, under the schedules `math::fold_of`
//! takes: a loop of more vectors leaves more) go to the first accumulator
//! (partials 0 to 3, or 0 and 1), and the last points (fewer than a vector) to the scalar
//! accumulator, one by one. Each partial adds its elements in increasing order. [`fold`] adds
//! the same values into the same partials in the same order (two `vaddpd zmm` chains an
//! iteration at AVX-512, where the inline code keeps eight 128-bit chains, bound by the widening
//! at f32 and by the 128-bit adds at f64), so each partial is the inline one's sum, and the
//! caller folds the partials as it always does. The product of two f32 is rounded to f32 before
//! it is widened, as the inline code's `fmul` does; the product of two f64 is rounded before it
//! is added (no fused multiply-add, as inline). A NaN's payload is where the order of an
//! addition's operands shows, which LLVM may swap: a run whose partials hold a NaN is reported,
//! and the caller folds that row again inline.

/// The f64 partials of the inline loop's vector accumulators (and the scalar one after them, in
/// the caller's slot).
pub const PARTS: usize = 16;

/// The vector accumulators that keep [`PARTS`] partials in vectors of `lanes` lanes (each lane
/// widened to f64 if it is not): 8 of f64 (`F64X2`), 4 of f32 (two `F64X2` halves).
pub const fn sum_accumulators(lanes: u8) -> u8 {
    (PARTS / lanes as usize) as u8
}

/// The values a row sum folds at full width: f32 and f64.
pub trait Summed: Copy + Into<f64> + std::ops::Mul<Output = Self> {
    /// The lanes of one inline vector of them.
    const LANES: usize;

    /// The fold of a row at `level`, of its values (`dot` false: `y` unread) or of the products
    /// `x[i]·y[i]`. Unsafe to call unless the host has `level` ([`super::Level::on_host`]),
    /// which call.rs checks.
    fn sum_fold(dot: bool, level: super::Level)
    -> unsafe fn(&[Self], &[Self], &mut [f64; PARTS + 1]) -> bool;
}

/// What [`fold`] adds: each value of the row `x`.
const PLAIN: u8 = 0;
/// The products `x[i]·y[i]`.
const PRODUCTS: u8 = 1;
/// The squares `x[i]·x[i]` (`y` unread: a square's row loaded once).
const SQUARES: u8 = 2;

/// The fold of the products of `x` and `y` (`DOT`), or of the squares where they are one row, or
/// of the values of `x` (`y` unread).
#[inline(always)]
fn fold_row<T: Summed, const DOT: bool>(x: &[T], y: &[T], parts: &mut [f64; PARTS + 1]) -> bool {
    match DOT {
        false => fold::<T, PLAIN>(x, x, parts),
        true if std::ptr::eq(x, y) => fold::<T, SQUARES>(x, x, parts),
        true => fold::<T, PRODUCTS>(x, y, parts),
    }
}

/// Adds the row `x` (or the products `x[i]·y[i]`, `y` as long as `x`, or the squares, as `WHAT`
/// says) into `parts`, the inline loop's [`PARTS`] partials and its scalar accumulator, as that
/// loop would: whether a partial or the scalar is NaN afterwards.
#[inline(always)]
fn fold<T: Summed, const WHAT: u8>(x: &[T], y: &[T], parts: &mut [f64; PARTS + 1]) -> bool {
    let value = |a: T, b: T| match WHAT {
        PLAIN => a,
        SQUARES => a * a,
        _ => a * b,
    };
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut p = [0.0f64; PARTS];
    p.copy_from_slice(&parts[..PARTS]);
    let (xs, ys) = (x.chunks_exact(PARTS), y.chunks_exact(PARTS));
    let (xr, yr) = (xs.remainder(), ys.remainder());
    for (cx, cy) in xs.zip(ys) {
        let cx: &[T; PARTS] = cx.try_into().expect("a run of PARTS");
        let cy: &[T; PARTS] = cy.try_into().expect("a run of PARTS");
        for l in 0..PARTS {
            p[l] += value(cx[l], cy[l]).into();
        }
    }
    // (held in memory between the runs and the vectors after them: LLVM otherwise shapes the
    // runs' partials by the vectors' few, in registers of several widths, more instructions a run)
    let mut p = std::hint::black_box(p);
    let (xv, yv) = (xr.chunks_exact(T::LANES), yr.chunks_exact(T::LANES));
    let (xt, yt) = (xv.remainder(), yv.remainder());
    for (cx, cy) in xv.zip(yv) {
        for l in 0..T::LANES {
            p[l] += value(cx[l], cy[l]).into();
        }
    }
    let mut s = parts[PARTS];
    for (&a, &b) in xt.iter().zip(yt) {
        s += value(a, b).into();
    }
    parts[..PARTS].copy_from_slice(&p);
    parts[PARTS] = s;
    p.iter().any(|v| v.is_nan()) || s.is_nan()
}

macro_rules! levels {
    ($($name:ident: $t:ty, $dot:expr;)*) => {
        $(
            pub(super) mod $name {
                use super::PARTS;
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn avx2(x: &[$t], y: &[$t], parts: &mut [f64; PARTS + 1]) -> bool {
                    super::fold_row::<$t, $dot>(x, y, parts)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn avx512(x: &[$t], y: &[$t], parts: &mut [f64; PARTS + 1]) -> bool {
                    super::fold_row::<$t, $dot>(x, y, parts)
                }
            }
        )*
    };
}

levels! {
    plain32: f32, false;
    dot32: f32, true;
    plain64: f64, false;
    dot64: f64, true;
}

impl Summed for f32 {
    const LANES: usize = 4;

    fn sum_fold(dot: bool, level: super::Level) -> unsafe fn(&[f32], &[f32], &mut [f64; PARTS + 1]) -> bool {
        use super::Level;
        match (dot, level) {
            (false, Level::Avx2) => plain32::avx2,
            (false, Level::Avx512) => plain32::avx512,
            (true, Level::Avx2) => dot32::avx2,
            (true, Level::Avx512) => dot32::avx512,
        }
    }
}

impl Summed for f64 {
    const LANES: usize = 2;

    fn sum_fold(dot: bool, level: super::Level) -> unsafe fn(&[f64], &[f64], &mut [f64; PARTS + 1]) -> bool {
        use super::Level;
        match (dot, level) {
            (false, Level::Avx2) => plain64::avx2,
            (false, Level::Avx512) => plain64::avx512,
            (true, Level::Avx2) => dot64::avx2,
            (true, Level::Avx512) => dot64::avx512,
        }
    }
}
