//! A row's moments at full width, as the inline loop computes them: a compound `moments`
//! (`mean` and `var` of one pass, `var(x)`, `std(m, axis=1)`) whose body is a plain read of an
//! input folds each long enough row by one call (skeleton.rs `segment`), in place of the inline
//! blocks (`moments.rs`), into the very state those blocks keep.
//!
//! **The inline partition.** Each block of [`BLOCK_POINTS`] (the last shorter) is read twice,
//! for `S = Σ x` and `S' = Σ (x - c)`, then for `Q = Σ (x - k)²`, each sum by the default
//! schedule's loop: 4 vector accumulators of [`Lane::V`] lanes (each lane widened to f64), 8
//! vectors an iteration, vectors `p` and `p + 4` added together first, then into accumulator `p`:
//! [`Lane::PARTS`] f64 partials, partial `e` adding `t[e] + t[e + PARTS]` of each run of
//! `2 PARTS` terms. The vectors after the last whole run go to the first accumulator (partials 0
//! to `V - 1`), one by one, and the last points (fewer than `V`) to a scalar accumulator. The sum
//! is then the partials' vectors of two added as a balanced tree, its two lanes, then the
//! scalar ([`total`]). [`fold`] adds the same terms in
//! the same order (zmm at AVX-512, where the inline code's chains are 128 bits wide), then ends
//! each block and merges it into the state as the inline code does (the shift, TwoSum, Chan's
//! merge), operation for operation: so the state is
//! the inline one's, bit for bit. A NaN's payload is where the order of an addition's operands
//! shows, which LLVM may swap: a row whose state ends NaN is reported, left as it was, and the
//! caller folds the row again inline.

/// The points of one block of a segment's values, read by both passes: 8 KiB of f64, so the
/// second pass reads from L1. Shorter blocks add less rounding error a block (the integers
/// offset by 1e8 of tests/compound.rs: the exact variance at 1024 points, 4 ULP off at 2048),
/// longer ones cost less a point (a block's end: two divisions and a merge).
pub const BLOCK_POINTS: usize = 1024;

/// The words of a moments state: `(k, n, mean, m2, sum)` ([`kiln_ir::compound::Slot`]).
pub const STATE: usize = 5;

/// A float type whose rows fold as moments: its inline vector's lanes and partials.
pub trait Lane: Copy {
    /// The lanes of one inline vector.
    const V: usize;
    /// The f64 partials of one pass: 4 accumulators of `V` lanes.
    const PARTS: usize;
    /// Whether the first pass shifts the values by the block's first (`moments.rs`).
    const SHIFTS: bool;
    /// The value widened to f64.
    fn wide(self) -> f64;
}

impl Lane for f64 {
    const V: usize = 2;
    const PARTS: usize = 8;
    const SHIFTS: bool = true;
    #[inline(always)]
    fn wide(self) -> f64 {
        self
    }
}

impl Lane for f32 {
    const V: usize = 4;
    const PARTS: usize = 16;
    const SHIFTS: bool = false;
    #[inline(always)]
    fn wide(self) -> f64 {
        f64::from(self)
    }
}

/// One pass over a block: the sums of `term(x)` (and, `TWO`, of `second(x)`) in the inline
/// partition of `N` ([`Lane::PARTS`]) partials (see the module doc).
#[inline(always)]
fn pass<T: Lane, const N: usize, const TWO: bool>(
    x: &[T],
    term: impl Fn(f64) -> f64,
    second: impl Fn(f64) -> f64,
) -> (f64, f64) {
    let (mut p, mut q) = ([0.0f64; N], [0.0f64; N]);
    let runs = x.chunks_exact(2 * N);
    let rest = runs.remainder();
    for run in runs {
        let (lo, hi) = run.split_at(N);
        let lo: &[T; N] = lo.try_into().expect("a run of 2N");
        let hi: &[T; N] = hi.try_into().expect("a run of 2N");
        for e in 0..N {
            let (a, b) = (lo[e].wide(), hi[e].wide());
            p[e] += term(a) + term(b);
            if TWO {
                q[e] += second(a) + second(b);
            }
        }
    }
    // (held in memory between the runs and the vectors after them, as sums.rs does: LLVM
    // otherwise shapes the runs' partials by the vectors' few)
    let (mut p, mut q) = std::hint::black_box((p, q));
    let vectors = rest.chunks_exact(T::V);
    let tail = vectors.remainder();
    for v in vectors {
        for (l, &a) in v.iter().enumerate() {
            p[l] += term(a.wide());
            if TWO {
                q[l] += second(a.wide());
            }
        }
    }
    let (mut s, mut s2) = (0.0f64, 0.0f64);
    for &a in tail {
        s += term(a.wide());
        if TWO {
            s2 += second(a.wide());
        }
    }
    (total(&p, s), total(&q, s2))
}

/// The partials' sum as the inline code takes it (`moments.rs` `Accs::total`): the vectors of
/// two lanes added as a balanced tree (their count a power of 2: adjacent pairs, level by
/// level), its two lanes, then the scalar `s`.
#[inline(always)]
fn total<const N: usize>(p: &[f64; N], s: f64) -> f64 {
    debug_assert!(N >= 2 && (N / 2).is_power_of_two());
    let mut v = [[0.0f64; 2]; MOST / 2];
    for (j, w) in v.iter_mut().take(N / 2).enumerate() {
        *w = [p[2 * j], p[2 * j + 1]];
    }
    let mut len = N / 2;
    while len > 1 {
        len /= 2;
        for j in 0..len {
            v[j] = [v[2 * j][0] + v[2 * j + 1][0], v[2 * j][1] + v[2 * j + 1][1]];
        }
    }
    (v[0][0] + v[0][1]) + s
}

/// The partials of one pass, at most (f32's [`Lane::PARTS`]).
const MOST: usize = 16;

/// Folds the row `x` into `state` as the inline blocks would (`moments.rs`, the same
/// operations): whether the state came out NaN (then `state` is left as it was).
#[inline(always)]
fn fold<T: Lane, const N: usize>(x: &[T], state: &mut [f64; STATE]) -> bool {
    debug_assert_eq!(N, T::PARTS);
    let mut st = *state;
    for block in x.chunks(BLOCK_POINTS) {
        let n = block.len() as f64;
        let (c, s, shifted) = if T::SHIFTS {
            let c = block[0].wide();
            let c = if c.is_finite() { c } else { 0.0 };
            let (s, shifted) = pass::<T, N, true>(block, |v| v, |v| v - c);
            (c, s, shifted)
        } else {
            let (s, _) = pass::<T, N, false>(block, |v| v, |v| v);
            (0.0, s, s)
        };
        let offset = shifted / n;
        let k = c + offset;
        let bb = k - c;
        let e = (c - (k - bb)) + (offset - bb);
        let (q, _) = pass::<T, N, false>(
            block,
            |v| {
                let d = v - k;
                d * d
            },
            |v| v,
        );
        let m2 = q - (n * e) * e;
        let m2 = if m2 < 0.0 { 0.0 } else { m2 };
        let block = [k, n, e, m2, s];
        // the segment's first block is its state (as the inline code: no merge)
        st = if st[1] == 0.0 {
            block
        } else {
            kiln_ir::CompoundOp::Moments.merge_slots(st, block)
        };
    }
    if st.iter().any(|v| v.is_nan()) {
        return true;
    }
    *state = st;
    false
}

macro_rules! levels {
    ($($name:ident: $t:ty, $n:expr;)*) => {
        $(
            pub(super) mod $name {
                use super::STATE;
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn avx2(x: &[$t], state: &mut [f64; STATE]) -> bool {
                    super::fold::<$t, $n>(x, state)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn avx512(x: &[$t], state: &mut [f64; STATE]) -> bool {
                    super::fold::<$t, $n>(x, state)
                }
            }
        )*
    };
}

levels! {
    of_f64: f64, 8;
    of_f32: f32, 16;
}

/// A float type whose rows fold as moments at full width, with its functions per level.
pub trait Moments: Lane {
    /// The fold at `level`. Unsafe to call unless the host has `level`
    /// ([`super::Level::on_host`]), which call.rs checks.
    fn moments_fold(level: super::Level) -> unsafe fn(&[Self], &mut [f64; STATE]) -> bool;
}

impl Moments for f64 {
    fn moments_fold(level: super::Level) -> unsafe fn(&[f64], &mut [f64; STATE]) -> bool {
        match level {
            super::Level::Avx2 => of_f64::avx2,
            super::Level::Avx512 => of_f64::avx512,
        }
    }
}

impl Moments for f32 {
    fn moments_fold(level: super::Level) -> unsafe fn(&[f32], &mut [f64; STATE]) -> bool {
        match level {
            super::Level::Avx2 => of_f32::avx2,
            super::Level::Avx512 => of_f32::avx512,
        }
    }
}
