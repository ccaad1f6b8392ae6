//! NumPy's pairwise summation, the order in which every float sum of kiln's interpreter adds its
//! values (and the leaf size the compound reductions share): a leaf module, so that the
//! interpreter and the compound reductions both read it.

/// The values of a leaf of [`pairwise_sum`]: NumPy's block size.
pub(crate) const LEAF: usize = 128;

/// The sum of `values` in f64, pairwise, in a fixed order that depends only on their number:
///
/// - the values are cut, in order, into leaves of `LEAF` (128) values (the last may be shorter);
/// - a leaf is summed as NumPy's `pairwise_sum` sums a block: value `k` goes to accumulator `k % 8`
///   (each starting at -0.0, the identity of `+`), and the eight are added as
///   `((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))`;
/// - leaf sums are combined like a binary counter: two sums of the same number of leaves are
///   added (the earlier on the left) as soon as both exist, and what is left at the end is added
///   from the latest to the earliest, `s0 + (s1 + (… + sk))`.
///
/// The rounding error is within `(log2(n / 128) + 16 + 3) ε Σ|x|` of the exact sum (NumPy's bound),
/// against `n ε Σ|x|` for a sequential fold, with no allocation: the counter holds at most 64 sums.
pub fn pairwise_sum(values: impl Iterator<Item = f64>) -> f64 {
    fn leaf_sum(acc: &[f64; 8]) -> f64 {
        ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]))
    }
    // (number of leaves, their sum), the number of leaves strictly decreasing down the stack
    let mut stack: Vec<(u64, f64)> = Vec::with_capacity(64);
    let mut acc = [-0.0f64; 8];
    let mut in_leaf = 0;
    let push = |stack: &mut Vec<(u64, f64)>, mut sum: f64| {
        let mut leaves = 1;
        while let Some(&(l, s)) = stack.last() {
            if l != leaves {
                break;
            }
            stack.pop();
            sum += s; // s + sum: addition commutes, the earlier is on the left in effect
            leaves += l;
        }
        stack.push((leaves, sum));
    };
    for v in values {
        acc[in_leaf % 8] += v;
        in_leaf += 1;
        if in_leaf == LEAF {
            push(&mut stack, leaf_sum(&acc));
            acc = [-0.0; 8];
            in_leaf = 0;
        }
    }
    if in_leaf > 0 {
        push(&mut stack, leaf_sum(&acc));
    }
    stack.iter().rev().fold(-0.0, |total, &(_, s)| s + total)
}
