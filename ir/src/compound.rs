//! Compound reductions: one pass over the data that gives two statistics, where the plain plan
//! needs two reductions (the second reading the data again, with the first's result).
//!
//! - [`CompoundOp::Moments`]: `(mean(x), var(x))` (ddof 0). The mean is the plain `mean`: the sum in
//!   f64 ([`crate::sum::pairwise_sum`]'s order, rounded once to the dtype) divided by the count
//!   in the dtype, bit for bit what `mean` gives. The variance is Welford's `M2 / n`, in f64: each
//!   value updates `(n, mean, M2)` as `d = x - mean; mean += d / n; M2 += d * (x - mean)`, and two
//!   states merge with Chan's formula `M2 = M2a + M2b + δ² na nb / n` (`δ = mean_b - mean_a`). Values
//!   are cut into leaves of 128 and the leaves merged like a binary counter (as the pairwise sum), so
//!   the rounding error grows with `log n`, not `n`: as accurate as the two-pass `mean((x - m)**2)`
//!   (tests/compound.rs measures both against an exact reference on data offset by 1e8). The states
//!   are of the values less the extent's first value (the variance does not change; the running
//!   mean stays near 0, so its rounding does not grow with an offset such as 1e8). NaN gives
//!   NaN, an infinity a NaN variance (and an infinite mean, as NumPy); an empty extent gives NaN for
//!   both, as NumPy's `mean` and `var`.
//!
//! Softmax's and logsumexp's statistics (the maximum and `Σ exp(x - max)`) were a second op, one
//! pass with a running maximum; they run as their two reductions now (`src/siblings.rs` says why).
//!
//! A compound kernel's result holds both statistics along a leading axis of length 2 (component 0 the
//! mean, component 1 the variance), each in the kernel's dtype.

use crate::dtype::Real;
use crate::sum::LEAF;

/// A reduction that gives two statistics in one pass (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CompoundOp {
    /// `(mean, var)`, ddof 0.
    Moments,
}

impl CompoundOp {
    /// The name `kiln explain` prints.
    pub fn name(self) -> &'static str {
        match self {
            CompoundOp::Moments => "moments",
        }
    }

    /// The names of the two components, in order.
    pub fn parts(self) -> [&'static str; 2] {
        match self {
            CompoundOp::Moments => ["mean", "var"],
        }
    }

    /// The two statistics of `values` (in order), each rounded once to `T`.
    pub fn fold<T: Real>(self, values: impl Iterator<Item = T>) -> [T; 2] {
        let xs: Vec<f64> = values.map(T::to_f64).collect();
        match self {
            CompoundOp::Moments => {
                // Welford on the values less the first (exact for values within a factor 2 of it):
                // the running mean stays near 0, so its rounding does not scale with an offset
                let k = xs.first().copied().unwrap_or(0.0);
                let shifted: Vec<f64> = xs.iter().map(|&x| x - k).collect();
                let m: Welford = counter_fold(&shifted);
                let n = xs.len() as f64;
                // the plain mean: the f64 sum (from +0.0, as NumPy's) rounded once, then divided in
                // the dtype
                let sum = crate::sum::pairwise_sum(xs.iter().copied()) + 0.0;
                [T::from_f64(sum) / T::from_f64(n), T::from_f64(m.var())]
            }
        }
    }
}

/// Partial states as compiled code keeps them, five f64 per output slot: moments
/// `(k, n, mean, m2, sum)` (the mean and squared deviations of the values less `k`, and the plain
/// sum of the values, which gives the mean where an infinity or NaN is among them).
pub type Slot = [f64; 5];

impl CompoundOp {
    /// The state of no values.
    pub fn empty_slot(self) -> Slot {
        match self {
            CompoundOp::Moments => [0.0; 5],
        }
    }

    /// Two partial states merged, `a`'s values first: Chan's formula keeping `a`'s shift (the means
    /// differ by `(kb - ka) + (mean_b - mean_a)`, never a difference of two large absolute means; an
    /// empty side gives the other).
    pub fn merge_slots(self, a: Slot, b: Slot) -> Slot {
        match self {
            CompoundOp::Moments => {
                let ([ka, na, ma, qa, sa], [kb, nb, mb, qb, sb]) = (a, b);
                if nb == 0.0 {
                    return a;
                }
                if na == 0.0 {
                    return b;
                }
                let n = na + nb;
                let d = (kb - ka) + (mb - ma);
                let df = d * (nb / n);
                [ka, n, ma + df, (qa + qb) + d * df * na, sa + sb]
            }
        }
    }

    /// The two statistics of a merged state (f64): `(k + mean, m2 / n)` (NaN and NaN for no values;
    /// `(sum / n, NaN)` where the plain sum is not finite: an infinity or NaN among the values).
    pub fn finish_slot(self, s: Slot) -> [f64; 2] {
        match self {
            CompoundOp::Moments => {
                let [k, n, mean, m2, sum] = s;
                match n {
                    0.0 => [f64::NAN, f64::NAN],
                    // an infinity or NaN among the values: the mean is the plain sum's (inf, -inf
                    // or NaN, as NumPy's), the variance NaN (`x - mean` is NaN or infinite there)
                    _ if !sum.is_finite() => [sum / n, f64::NAN],
                    _ => [k + mean, m2 / n],
                }
            }
        }
    }
}

/// A statistic's state that merges with another's (associative up to rounding).
pub trait Merge: Copy {
    /// The state of no values.
    const EMPTY: Self;
    /// The state of `a`'s values followed by `b`'s.
    fn merge(a: Self, b: Self) -> Self;
    /// The state with one more value `x` (a merge with `x`'s own state, cheaper).
    fn push(self, x: f64) -> Self;
}

/// Welford's state: the count, the mean and the sum of squared deviations from it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welford {
    /// The number of values folded (a float: merges weigh counts).
    pub n: f64,
    /// The mean of the values.
    pub mean: f64,
    /// The sum of squared deviations from the mean (the variance is `m2 / n`).
    pub m2: f64,
}

impl Welford {
    /// The state of one value.
    pub fn of(x: f64) -> Welford {
        Welford::EMPTY.push(x)
    }

    /// The population variance `M2 / n` (NaN for no values).
    pub fn var(&self) -> f64 {
        self.m2 / self.n
    }
}

impl Merge for Welford {
    const EMPTY: Welford = Welford {
        n: 0.0,
        mean: 0.0,
        m2: 0.0,
    };

    /// Chan, Golub and LeVeque's pairwise update.
    fn merge(a: Welford, b: Welford) -> Welford {
        if a.n == 0.0 {
            return b;
        }
        if b.n == 0.0 {
            return a;
        }
        let n = a.n + b.n;
        let d = b.mean - a.mean;
        let f = b.n / n;
        Welford {
            n,
            mean: a.mean + d * f,
            m2: a.m2 + b.m2 + d * d * a.n * f,
        }
    }

    /// Welford's update.
    fn push(self, x: f64) -> Welford {
        let n = self.n + 1.0;
        let d = x - self.mean;
        let mean = self.mean + d / n;
        Welford {
            n,
            mean,
            m2: self.m2 + d * (x - mean),
        }
    }
}

/// The state of `xs`: pushed in order within leaves of `LEAF` (128) values, the leaves merged like a
/// binary counter (two states of as many leaves merged as soon as both exist, the earlier first; what
/// remains merged from the latest to the earliest), the shape of [`crate::sum::pairwise_sum`].
pub fn counter_fold<S: Merge>(xs: &[f64]) -> S {
    // (leaves, merged state), leaves strictly decreasing down the stack
    let mut stack: Vec<(u64, S)> = Vec::with_capacity(64);
    for leaf in xs.chunks(LEAF) {
        let mut s = leaf.iter().fold(S::EMPTY, |s, &x| s.push(x));
        let mut leaves = 1;
        while let Some(&(l, earlier)) = stack.last() {
            if l != leaves {
                break;
            }
            stack.pop();
            s = S::merge(earlier, s);
            leaves += l;
        }
        stack.push((leaves, s));
    }
    stack
        .iter()
        .rev()
        .fold(S::EMPTY, |later, &(_, s)| S::merge(s, later))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn moments_of_offset_data_are_exact_where_two_passes_are() {
        let x: Vec<f64> = (0..1000).map(|i| 1e8 + (i % 7) as f64).collect();
        let [mean, var] = CompoundOp::Moments.fold(x.iter().copied());
        let m = x.iter().sum::<f64>() / 1000.0;
        let v = x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / 1000.0;
        assert_eq!(mean, m);
        assert!((var - v).abs() <= 1e-12 * v, "{var} vs {v}");
    }

    #[test]
    fn welford_merge_is_the_push_of_every_value() {
        let x: Vec<f64> = (0..300).map(|i| ((i * 37) % 101) as f64 * 0.5 - 7.0).collect();
        let seq = x.iter().fold(Welford::EMPTY, |s, &v| s.push(v));
        let (a, b) = x.split_at(123);
        let merged = Welford::merge(
            a.iter().fold(Welford::EMPTY, |s, &v| s.push(v)),
            b.iter().fold(Welford::EMPTY, |s, &v| s.push(v)),
        );
        assert_eq!(seq.n, merged.n);
        assert!((seq.mean - merged.mean).abs() < 1e-12);
        assert!((seq.var() - merged.var()).abs() < 1e-12 * seq.var());
    }
}
