//! The sum of a run of a typed kernel's int64, int32 or bool values at full width: a trailing
//! `sum` whose body is a plain read of an input (`sum(i)`, `sum(b, axis=1)`, a bool's count of
//! its truths) folds each long enough row by one call (skeleton.rs `wide_folds`), whose int64
//! partial the segment's scalar accumulator then adds.
//!
//! **The inline code's bits, by construction.** The inline code adds each value, widened to
//! int64 (a bool 0 / 1), into wrapping int64 accumulators (int_acc.rs). Wrapping addition is
//! associative and commutative, so any partition of the row into lanes and any order of their
//! merges gives the same word: the partial added to the accumulator is the inline loop's.
//!
//! rustc vectorises the loops: int64 and int32 (`vpmovsxdq`) values into int64 lanes; a bool's
//! bytes are counted [`LANES`] at a time in byte lanes (`vpcmpeqb`, `vpsubb`) for at most 255
//! steps, whose counts are then added into the int64 total, so most of the row costs a compare
//! and a subtraction per 32 bytes.

use super::Truth;

/// The byte lanes a bool row is counted in: two vectors at AVX2.
const LANES: usize = 64;

/// The chunks of [`LANES`] bytes a count's byte lanes take before they are added into the
/// total: at most 255, so that no lane wraps.
const STEPS: usize = 255;

/// An element whose runs the wide code sums into a wrapping int64 partial.
pub trait IntSummed: Copy {
    /// The wrapping int64 sum of a run at `level` (a bool's count of truths). Unsafe to call unless
    /// the host has `level` ([`super::Level::on_host`]), which call.rs checks.
    fn int_sum(level: super::Level) -> unsafe fn(&[Self]) -> i64;
}

/// The wrapping sum of int64 values.
#[inline(always)]
fn sum_i64(x: &[i64]) -> i64 {
    x.iter().fold(0i64, |a, &v| a.wrapping_add(v))
}

/// The wrapping sum of int32 values, each widened to int64.
#[inline(always)]
fn sum_i32(x: &[i32]) -> i64 {
    x.iter().fold(0i64, |a, &v| a.wrapping_add(i64::from(v)))
}

/// The count of the true (nonzero) bytes of a bool run.
#[inline(always)]
fn count(x: &[Truth]) -> i64 {
    let mut total = 0u64;
    for block in x.chunks(STEPS * LANES) {
        let chunks = block.chunks_exact(LANES);
        let tail = chunks.remainder();
        let mut counts = [0u8; LANES];
        for c in chunks {
            for (n, v) in counts.iter_mut().zip(c) {
                // (at most STEPS chunks: no lane passes 255)
                *n += u8::from(v.0 != 0);
            }
        }
        let lanes: u64 = counts.iter().map(|&n| u64::from(n)).sum();
        let rest = tail.iter().filter(|v| v.0 != 0).count() as u64;
        total += lanes + rest;
    }
    // (a count of at most `isize::MAX` bytes)
    total as i64
}

macro_rules! levels {
    ($($t:ty: $name:ident, $f:ident;)*) => {
        $(
            mod $name {
                use super::*;

                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(super) fn avx2(x: &[$t]) -> i64 {
                    $f(x)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(super) fn avx512(x: &[$t]) -> i64 {
                    $f(x)
                }
            }

            impl IntSummed for $t {
                fn int_sum(level: super::Level) -> unsafe fn(&[$t]) -> i64 {
                    match level {
                        super::Level::Avx2 => $name::avx2,
                        super::Level::Avx512 => $name::avx512,
                    }
                }
            }
        )*
    };
}

levels! {
    i64: sums_i64, sum_i64;
    i32: sums_i32, sum_i32;
    Truth: counts, count;
}
