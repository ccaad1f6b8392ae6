//! The argmax and argmin of a run at full width: the first index of its max or min, as NumPy's
//! `argmax` and `argmin` give it and the inline code's update finds it (skeleton.rs
//! `arg_blocks`): of the first NaN where the run holds one, else of the first point equal to the
//! extreme (-0.0 and 0.0 are equal: the first of either); 0 for an empty run. An argmax or argmin
//! of a plain read of an input finds a row's point by one call (`crate::apply_arg` for tests): an
//! index, the same on every route.
//!
//! **One pass, in AVX2's registers.** Four registers of lanes each keep their extreme
//! (`maxp*` / `minp*`, which keeps the register's lane where the value is not beyond it) and the
//! number of the chunk (of four registers) it came from, blended by the same compare, so a
//! lane's is its first; one `cmpunord` of two registers and an or keep whether a NaN went by.
//! Then the lanes' extreme is the run's, and the least index of a lane holding it its first
//! point; the points after the last chunk are folded one by one. A NaN anywhere is found again by
//! a scan (rare). Float chunk numbers are kept as floats (exact below 2^24 in float32; a run is
//! taken in pieces of 2^24 chunks), so one mask blends the value and its number alike.
//!
//! The lane code LLVM vectorises (a select of the value and one of its chunk number per lane)
//! packed each compare's mask to bytes and widened it again for the second select, and spilled:
//! two to three times the time of a max (`max(m, axis=1)`) over rows of a thousand float64
//! values, where this is the max's time. So the routine is written in AVX2's intrinsics,
//! expanded by [`arg_registers`] in a `#[target_feature]` function per type (safe code: the
//! intrinsics are safe in it, the chunks read into registers by `bytemuck`); an AVX-512 host
//! runs the same code. A bool run's argmax is its first true and its argmin its first false
//! ([`arg_truth`]: extremes.rs `find`, which stops there). Elsewhere than x86-64 the routines are
//! a scalar loop.

use super::extremes::{Extreme, Truth, beyond, find, pick};

/// The points [`arg_registers`] takes with one count of chunks: its counts stay below 2^24, which
/// float32 holds exactly.
#[cfg(target_arch = "x86_64")]
const PIECE_CHUNKS: usize = 1 << 24;

/// The first index of the max (`MAX`) or min of the run `$x` of `$t` values, in four `$v`
/// registers of `$l` lanes each, by the operations given as `|names| expression`: `beyond` (the
/// mask of the lanes of `v` beyond `acc`), `extreme` (`acc` moved to `v` where beyond),
/// `blend` (where the mask `m` is set, `to`, else `from`), `unordered` (the mask of the lanes
/// where either register holds a NaN, or none for integers), `or`, `any` (whether a mask has a
/// lane set), `splat` (a value in every lane), `equal` (the bits of the lanes where two registers
/// are equal), and the chunk counter's `zero`, `one` and `add` (floats for float values). See the
/// module doc.
#[cfg(target_arch = "x86_64")]
macro_rules! arg_registers {
    (
        $x:expr, $t:ty, $v:ty, $l:literal,
        beyond: |$bv:ident, $ba:ident| $beyond:expr,
        extreme: |$ev:ident, $ea:ident| $extreme:expr,
        blend: |$from:ident, $to:ident, $m:ident| $blend:expr,
        unordered: |$u0:ident, $u1:ident| $unordered:expr,
        or: |$o0:ident, $o1:ident| $or:expr,
        any: |$an:ident| $any:expr,
        splat: |$sp:ident| $splat:expr,
        equal: |$q0:ident, $q1:ident| $equal:expr,
        zero: $zero:expr, one: $one:expr,
        add: |$a0:ident, $a1:ident| $add:expr $(,)?
    ) => {{
        const PER: usize = 4 * $l;
        // (closures of a `#[target_feature]` function have its features: the intrinsics are
        // safe and inlined in them)
        let beyond = |$bv: $v, $ba: $v| $beyond;
        let extreme = |$ev: $v, $ea: $v| $extreme;
        let blend = |$from: $v, $to: $v, $m: $v| $blend;
        let unordered = |$u0: $v, $u1: $v| $unordered;
        let or = |$o0: $v, $o1: $v| $or;
        let any = |$an: $v| $any;
        let equal = |$q0: $v, $q1: $v| -> u32 { $equal };
        let add = |$a0: $v, $a1: $v| $add;
        let registers = |c: &[$t]| -> [$v; 4] {
            bytemuck::cast(<[$t; PER]>::try_from(c).expect("a chunk of four registers"))
        };
        let x: &[$t] = $x;
        let mut best: Option<($t, usize)> = None;
        for (p, piece) in x.chunks(PER * PIECE_CHUNKS).enumerate() {
            let base = p * PER * PIECE_CHUNKS;
            let mut chunks = piece.chunks_exact(PER);
            let tail = chunks.remainder();
            let head = piece.len() - tail.len();
            if let Some(c) = chunks.next() {
                // chunk 0 as the lanes' start, the chunks after it compared
                let mut acc = registers(c);
                let mut nan = or(unordered(acc[0], acc[1]), unordered(acc[2], acc[3]));
                let one: $v = $one;
                let mut at = [$zero; 4];
                let mut k = one;
                for c in chunks {
                    let vs = registers(c);
                    for r in 0..4 {
                        let mask = beyond(vs[r], acc[r]);
                        acc[r] = extreme(vs[r], acc[r]);
                        at[r] = blend(at[r], k, mask);
                    }
                    nan = or(nan, or(unordered(vs[0], vs[1]), unordered(vs[2], vs[3])));
                    k = add(k, one);
                }
                if any(nan) {
                    return base + piece.iter().position(|v| v.nan()).unwrap_or(0);
                }
                // the lanes' extreme: the registers' folded by a tree of `extreme`, then the
                // lanes of one (no NaN is left: a chain of scalar compares over every lane was
                // most of a short row's time)
                let one_register: [$t; $l] =
                    bytemuck::cast(extreme(extreme(acc[0], acc[1]), extreme(acc[2], acc[3])));
                let m = one_register
                    .iter()
                    .fold(one_register[0], |m, &v| pick::<$t, MAX>(m, v));
                // its first point: of the lanes equal to it (the bits of each register's compare,
                // mostly one), the least index
                let splat_m = {
                    let $sp = m;
                    $splat
                };
                let at: [[$t; $l]; 4] = bytemuck::cast(at);
                let mut first = usize::MAX;
                for r in 0..4 {
                    let mut bits = equal(acc[r], splat_m);
                    while bits != 0 {
                        let l = bits.trailing_zeros() as usize;
                        first = first.min(at[r][l] as usize * PER + r * $l + l);
                        bits &= bits - 1;
                    }
                }
                merge::<$t, MAX>(&mut best, m, base + first);
            }
            for (t, &v) in tail.iter().enumerate() {
                if v.nan() {
                    return base + head + t;
                }
                merge::<$t, MAX>(&mut best, v, base + head + t);
            }
        }
        best.map_or(0, |(_, k)| k)
    }};
}

/// `(v, at)` as the run's best so far, where there is none yet or `v` is beyond it.
#[inline(always)]
fn merge<T: Extreme, const MAX: bool>(best: &mut Option<(T, usize)>, v: T, at: usize) {
    let beyond = match *best {
        Some((b, _)) => beyond::<T, MAX>(b, v),
        None => true,
    };
    if beyond {
        *best = Some((v, at));
    }
}

/// The argmax (`MAX`) or argmin of a run of float64 values (see the module doc).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) fn arg_f64<const MAX: bool>(x: &[f64]) -> usize {
    use std::arch::x86_64::*;
    arg_registers!(x, f64, __m256d, 4,
        beyond: |v, a| if MAX { _mm256_cmp_pd::<_CMP_GT_OQ>(v, a) } else { _mm256_cmp_pd::<_CMP_LT_OQ>(v, a) },
        extreme: |v, a| if MAX { _mm256_max_pd(v, a) } else { _mm256_min_pd(v, a) },
        blend: |from, to, m| _mm256_blendv_pd(from, to, m),
        unordered: |a, b| _mm256_cmp_pd::<_CMP_UNORD_Q>(a, b),
        or: |a, b| _mm256_or_pd(a, b),
        any: |m| _mm256_movemask_pd(m) != 0,
        splat: |m| _mm256_set1_pd(m),
        equal: |a, b| _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_EQ_OQ>(a, b)) as u32,
        zero: _mm256_setzero_pd(), one: _mm256_set1_pd(1.0),
        add: |a, b| _mm256_add_pd(a, b),
    )
}

/// The argmax (`MAX`) or argmin of a run of float32 values (see the module doc).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) fn arg_f32<const MAX: bool>(x: &[f32]) -> usize {
    use std::arch::x86_64::*;
    arg_registers!(x, f32, __m256, 8,
        beyond: |v, a| if MAX { _mm256_cmp_ps::<_CMP_GT_OQ>(v, a) } else { _mm256_cmp_ps::<_CMP_LT_OQ>(v, a) },
        extreme: |v, a| if MAX { _mm256_max_ps(v, a) } else { _mm256_min_ps(v, a) },
        blend: |from, to, m| _mm256_blendv_ps(from, to, m),
        unordered: |a, b| _mm256_cmp_ps::<_CMP_UNORD_Q>(a, b),
        or: |a, b| _mm256_or_ps(a, b),
        any: |m| _mm256_movemask_ps(m) != 0,
        splat: |m| _mm256_set1_ps(m),
        equal: |a, b| _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_EQ_OQ>(a, b)) as u32,
        zero: _mm256_setzero_ps(), one: _mm256_set1_ps(1.0),
        add: |a, b| _mm256_add_ps(a, b),
    )
}

/// The argmax (`MAX`) or argmin of a run of int64 values (see the module doc): no NaN, and no
/// max instruction at AVX2 (the compare's blend).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) fn arg_i64<const MAX: bool>(x: &[i64]) -> usize {
    use std::arch::x86_64::*;
    let gt = |v, a| {
        if MAX {
            _mm256_cmpgt_epi64(v, a)
        } else {
            _mm256_cmpgt_epi64(a, v)
        }
    };
    arg_registers!(x, i64, __m256i, 4,
        beyond: |v, a| gt(v, a),
        extreme: |v, a| _mm256_blendv_epi8(a, v, gt(v, a)),
        blend: |from, to, m| _mm256_blendv_epi8(from, to, m),
        unordered: |_a, _b| _mm256_setzero_si256(),
        or: |a, b| _mm256_or_si256(a, b),
        any: |m| _mm256_testz_si256(m, m) == 0,
        splat: |m| _mm256_set1_epi64x(m),
        equal: |a, b| _mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpeq_epi64(a, b))) as u32,
        zero: _mm256_setzero_si256(), one: _mm256_set1_epi64x(1),
        add: |a, b| _mm256_add_epi64(a, b),
    )
}

/// The argmax (`MAX`) or argmin of a run of int32 values (see the module doc): no NaN.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) fn arg_i32<const MAX: bool>(x: &[i32]) -> usize {
    use std::arch::x86_64::*;
    arg_registers!(x, i32, __m256i, 8,
        beyond: |v, a| if MAX { _mm256_cmpgt_epi32(v, a) } else { _mm256_cmpgt_epi32(a, v) },
        extreme: |v, a| if MAX { _mm256_max_epi32(v, a) } else { _mm256_min_epi32(v, a) },
        blend: |from, to, m| _mm256_blendv_epi8(from, to, m),
        unordered: |_a, _b| _mm256_setzero_si256(),
        or: |a, b| _mm256_or_si256(a, b),
        any: |m| _mm256_testz_si256(m, m) == 0,
        splat: |m| _mm256_set1_epi32(m),
        equal: |a, b| _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(a, b))) as u32,
        zero: _mm256_setzero_si256(), one: _mm256_set1_epi32(1),
        add: |a, b| _mm256_add_epi32(a, b),
    )
}

/// The argmax (`MAX`) or argmin of a run, point by point: the routines elsewhere than x86-64, and
/// call.rs's answer should a routine's level be missing (never, where its symbol is registered).
pub fn arg_scalar<T: Extreme, const MAX: bool>(x: &[T]) -> usize {
    if let Some(k) = x.iter().position(|v| v.nan()) {
        return k;
    }
    let mut best = None;
    for (k, &v) in x.iter().enumerate() {
        merge::<T, MAX>(&mut best, v, k);
    }
    best.map_or(0, |(_, k)| k)
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn arg_f64<const MAX: bool>(x: &[f64]) -> usize {
    arg_scalar::<f64, MAX>(x)
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn arg_f32<const MAX: bool>(x: &[f32]) -> usize {
    arg_scalar::<f32, MAX>(x)
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn arg_i64<const MAX: bool>(x: &[i64]) -> usize {
    arg_scalar::<i64, MAX>(x)
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn arg_i32<const MAX: bool>(x: &[i32]) -> usize {
    arg_scalar::<i32, MAX>(x)
}

/// The argmax (`MAX`: the first true) or argmin (the first false) of a run of bools, 0 where it
/// has none (every point is the extreme): extremes.rs `find`, which stops at it.
#[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
pub(super) fn arg_truth<const MAX: bool>(x: &[Truth]) -> usize {
    let at = find(x, Truth(u8::from(MAX)));
    if at == x.len() { 0 } else { at }
}
