//! Shapes, NumPy broadcasting and axis arithmetic.
//!
//! Broadcasting follows NumPy: shapes are aligned on the right, a missing leading axis counts as 1,
//! and an axis of length 1 stretches to any length. Arrays are row-major (C order).

use crate::error::{IrError, Result};

/// The most dimensions an array may have (NumPy's limit).
pub const MAX_DIMS: usize = 64;

/// A vector of `n` copies of `value`, or an error naming `what` if the memory cannot be had (an
/// allocation sized by user shapes must not abort the process).
pub fn try_filled<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| IrError::Allocation {
        what: what.to_string(),
        elements: n,
    })?;
    v.resize(n, value);
    Ok(v)
}

/// The number of elements of `shape`, or an error if it overflows `usize`.
pub fn checked_size(shape: &[usize]) -> Result<usize> {
    shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| IrError::SizeOverflow {
            shape: shape.to_vec(),
        })
}

/// The number of elements of an array of `shape` with `item_bytes`-byte elements, or an error if
/// the array could not be addressed: more than [`MAX_DIMS`] axes, a count that overflows `usize`, or
/// (as ndarray requires, empty arrays included) a product of the nonzero lengths whose bytes exceed
/// `isize::MAX`. `[0, 2^63]` has no elements but is refused, as ndarray would panic on it.
pub fn checked_addressable(shape: &[usize], item_bytes: usize) -> Result<usize> {
    if shape.len() > MAX_DIMS {
        return Err(IrError::TooManyDims {
            rank: shape.len(),
            max: MAX_DIMS,
        });
    }
    let n = checked_size(shape)?;
    let bytes = shape
        .iter()
        .filter(|&&d| d != 0)
        .try_fold(item_bytes.max(1), |acc, &d| acc.checked_mul(d));
    match bytes {
        Some(b) if b <= isize::MAX as usize => Ok(n),
        _ => Err(IrError::SizeOverflow {
            shape: shape.to_vec(),
        }),
    }
}

/// The broadcast of two shapes.
pub fn broadcast_pair(left: &[usize], right: &[usize]) -> Result<Vec<usize>> {
    let rank = left.len().max(right.len());
    let mut out = vec![0; rank];
    for (i, o) in out.iter_mut().enumerate() {
        // position i counted from the right
        let l = dim_from_right(left, rank - 1 - i);
        let r = dim_from_right(right, rank - 1 - i);
        *o = match (l, r) {
            (a, b) if a == b => a,
            (1, b) => b,
            (a, 1) => a,
            _ => {
                return Err(IrError::Broadcast {
                    left: left.to_vec(),
                    right: right.to_vec(),
                });
            }
        };
    }
    Ok(out)
}

/// The broadcast of any number of shapes (a scalar, `[]`, when there are none).
pub fn broadcast_shapes<'a>(shapes: impl IntoIterator<Item = &'a [usize]>) -> Result<Vec<usize>> {
    let mut acc: Vec<usize> = Vec::new();
    for s in shapes {
        acc = broadcast_pair(&acc, s)?;
    }
    checked_size(&acc)?;
    Ok(acc)
}

fn dim_from_right(shape: &[usize], k: usize) -> usize {
    if k < shape.len() {
        shape[shape.len() - 1 - k]
    } else {
        1
    }
}

/// Row-major strides, in elements, of a contiguous array of `shape`.
pub fn c_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0isize; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d.max(1) as isize);
    }
    strides
}

/// The strides, in elements, with which an input of `shape` and `strides` is read at each point of
/// the iteration shape `target`: stretched axes and missing leading axes get stride 0.
///
/// `shape` must broadcast to `target` (checked: an error names both shapes otherwise).
pub fn broadcast_strides(shape: &[usize], strides: &[isize], target: &[usize]) -> Result<Vec<isize>> {
    let bad = || IrError::Broadcast {
        left: shape.to_vec(),
        right: target.to_vec(),
    };
    if shape.len() > target.len() || strides.len() != shape.len() {
        return Err(bad());
    }
    let lead = target.len() - shape.len();
    let mut out = vec![0isize; target.len()];
    for (i, (&d, &s)) in shape.iter().zip(strides).enumerate() {
        let t = target[lead + i];
        out[lead + i] = if d == t && d != 1 {
            s
        } else if d == 1 || d == t {
            0
        } else {
            return Err(bad());
        };
    }
    Ok(out)
}

/// Resolves a possibly negative axis against `rank`, as NumPy does.
pub fn normalize_axis(axis: isize, rank: usize) -> Result<usize> {
    let r = rank as isize;
    let a = if axis < 0 { axis + r } else { axis };
    if (0..r).contains(&a) {
        Ok(a as usize)
    } else {
        Err(IrError::AxisOutOfRange { axis, rank })
    }
}

/// Resolves a list of axes: each normalised, sorted, and checked for repeats.
pub fn normalize_axes(axes: &[isize], rank: usize) -> Result<Vec<usize>> {
    let mut out = axes
        .iter()
        .map(|&a| normalize_axis(a, rank))
        .collect::<Result<Vec<_>>>()?;
    out.sort_unstable();
    for w in out.windows(2) {
        if w[0] == w[1] {
            return Err(IrError::DuplicateAxis { axis: w[0] });
        }
    }
    Ok(out)
}

/// The row-major multi-index of flat position `flat` in `shape`, written into `idx`.
pub fn unravel(mut flat: usize, shape: &[usize], idx: &mut [usize]) {
    for (i, &d) in shape.iter().enumerate().rev() {
        if d == 0 {
            idx[i] = 0;
            continue;
        }
        idx[i] = flat % d;
        flat /= d;
    }
}
