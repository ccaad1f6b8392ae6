//! The sum of a row at full width, as the inline loop partitions it: a trailing `sum` or `mean`
//! of f32 values whose body is a plain read of an input (`sum(x)`, `mean(m, axis=1)`) or the
//! product of two (`sum(x*y)`, `sum(x*x)`) folds each long enough row by one call (skeleton.rs
//! `wide_folds`), in place of the inline loop, into the very accumulators that loop keeps.
//!
//! **The inline partition.** The inline code (the default schedule: 4 vector accumulators, as
//! many vectors an iteration) widens each f32 vector of 4 lanes to two f64 halves and adds them
//! into its accumulator's two `F64X2`s: [`PARTS`] f64 partials, element `e`
//! of each run of 16 into partial `e`. The vectors after the last whole run (fewer than 4) go to
//! the first accumulator (partials 0 to 3), and the last points (fewer than 4) to the scalar
//! accumulator, one by one. Each partial adds its elements in increasing order. [`fold`] adds
//! the same values into the same partials in the same order (two `vaddpd zmm` chains an
//! iteration at AVX-512, where the inline code's eight 128-bit chains are bound by the widening),
//! so each partial is the inline one's sum, and the caller folds the partials as it always does.
//! The product of two f32 is rounded to f32 before it is widened, as the inline code's `fmul`
//! does. A NaN's payload is where the order of an addition's operands shows, which LLVM may swap:
//! a run whose partials hold a NaN is reported, and the caller folds that row again inline.

/// The f64 partials of the inline loop's vector accumulators (and the scalar one after them, in
/// the caller's slot).
pub const PARTS: usize = 16;

/// The vector accumulators that keep [`PARTS`] partials in vectors of `lanes` lanes (each lane
/// widened to f64 if it is not): 8 of f64 (`F64X2`), 4 of f32 (two `F64X2` halves).
pub const fn sum_accumulators(lanes: u8) -> u8 {
    (PARTS / lanes as usize) as u8
}

/// The lanes of one inline f32 vector.
const LANES: usize = 4;

/// Adds the row `x` (or, `DOT`, the products `x[i]·y[i]`, `y` as long as `x`) into `parts`, the
/// inline loop's [`PARTS`] partials and its scalar accumulator, as that loop would: whether a
/// partial or the scalar is NaN afterwards.
#[inline(always)]
fn fold<const DOT: bool>(x: &[f32], y: &[f32], parts: &mut [f64; PARTS + 1]) -> bool {
    let value = |a: f32, b: f32| if DOT { a * b } else { a };
    let n = x.len().min(y.len());
    let (x, y) = (&x[..n], &y[..n]);
    let mut p = [0.0f64; PARTS];
    p.copy_from_slice(&parts[..PARTS]);
    let (xs, ys) = (x.chunks_exact(PARTS), y.chunks_exact(PARTS));
    let (xr, yr) = (xs.remainder(), ys.remainder());
    for (cx, cy) in xs.zip(ys) {
        let cx: &[f32; PARTS] = cx.try_into().expect("a run of PARTS");
        let cy: &[f32; PARTS] = cy.try_into().expect("a run of PARTS");
        for l in 0..PARTS {
            p[l] += value(cx[l], cy[l]) as f64;
        }
    }
    // (held in memory between the runs and the vectors after them: LLVM otherwise shapes the
    // runs' partials by the vectors' few, in registers of several widths, more instructions a run)
    let mut p = std::hint::black_box(p);
    let (xv, yv) = (xr.chunks_exact(LANES), yr.chunks_exact(LANES));
    let (xt, yt) = (xv.remainder(), yv.remainder());
    for (cx, cy) in xv.zip(yv) {
        for l in 0..LANES {
            p[l] += value(cx[l], cy[l]) as f64;
        }
    }
    let mut s = parts[PARTS];
    for (&a, &b) in xt.iter().zip(yt) {
        s += value(a, b) as f64;
    }
    parts[..PARTS].copy_from_slice(&p);
    parts[PARTS] = s;
    p.iter().any(|v| v.is_nan()) || s.is_nan()
}

macro_rules! levels {
    ($($name:ident: $dot:expr;)*) => {
        $(
            pub(super) mod $name {
                use super::PARTS;
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn avx2(x: &[f32], y: &[f32], parts: &mut [f64; PARTS + 1]) -> bool {
                    super::fold::<$dot>(x, y, parts)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn avx512(x: &[f32], y: &[f32], parts: &mut [f64; PARTS + 1]) -> bool {
                    super::fold::<$dot>(x, y, parts)
                }
            }
        )*
    };
}

levels! {
    plain: false;
    dot: true;
}

/// The fold of a row at `level`, of its values (`dot` false: `y` unread) or of the products
/// `x[i]·y[i]`. Unsafe to call unless the host has `level` ([`super::Level::on_host`]), which
/// call.rs checks.
pub fn sum_fold(dot: bool, level: super::Level) -> unsafe fn(&[f32], &[f32], &mut [f64; PARTS + 1]) -> bool {
    use super::Level;
    match (dot, level) {
        (false, Level::Avx2) => plain::avx2,
        (false, Level::Avx512) => plain::avx512,
        (true, Level::Avx2) => dot::avx2,
        (true, Level::Avx512) => dot::avx512,
    }
}
