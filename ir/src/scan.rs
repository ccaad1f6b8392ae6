//! Scans: cumulative sum, product, maximum and minimum along one axis (or over the flattened array,
//! as NumPy's `axis=None`), inclusive or exclusive, forward or reverse, from an optional initial value.
//!
//! With `⊕` the scan's operation and `s` its start:
//! - inclusive: `y[k] = s ⊕ x[0] ⊕ … ⊕ x[k]`, where `s` is `initial` if given, else the exact identity
//!   of `⊕` (-0.0 for a sum, so `cumsum([-0.0]) = [-0.0]` as NumPy's);
//! - exclusive: `y[k] = s ⊕ x[0] ⊕ … ⊕ x[k-1]`, so `y[0] = s`, where `s` defaults to `⊕`'s neutral
//!   element (0, 1, -inf, +inf); for a sum this is AcceleratedKernels' `(cumsum(x) - x) + init`;
//! - reverse scans from the end: `j >= k` (inclusive) or `j > k` (exclusive).
//!
//! The carried state of a sum or product is an f64 (for f32 data too: each output is rounded once
//! from it, so an f32 cumsum is at least as accurate as NumPy's, which carries f32); the state of
//! cummax / cummin is the data type, and they propagate NaN as NumPy's `maximum.accumulate` and
//! `minimum.accumulate`: from the first NaN on, every output is NaN.

use crate::dtype::Real;

/// The operation of a scan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScanOp {
    /// `cumsum`: running sums.
    Sum,
    /// `cumprod`: running products.
    Prod,
    /// `cummax`: running maxima (NaN propagates).
    Max,
    /// `cummin`: running minima (NaN propagates).
    Min,
}

impl ScanOp {
    /// Every scan operation.
    pub const ALL: [ScanOp; 4] = [ScanOp::Sum, ScanOp::Prod, ScanOp::Max, ScanOp::Min];

    /// The NumPy-style name: `cumsum`, `cumprod`, `cummax`, `cummin`.
    pub fn name(self) -> &'static str {
        match self {
            ScanOp::Sum => "cumsum",
            ScanOp::Prod => "cumprod",
            ScanOp::Max => "cummax",
            ScanOp::Min => "cummin",
        }
    }

    /// The scan named `name`, if any.
    pub fn from_name(name: &str) -> Option<ScanOp> {
        ScanOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// The neutral element NumPy would name: 0, 1, -inf, +inf (an exclusive scan's default start).
    pub fn neutral(self) -> f64 {
        match self {
            ScanOp::Sum => 0.0,
            ScanOp::Prod => 1.0,
            ScanOp::Max => f64::NEG_INFINITY,
            ScanOp::Min => f64::INFINITY,
        }
    }

    /// The exact identity (`e ⊕ x = x` bit for bit, -0.0 included): -0.0 for a sum.
    pub fn identity(self) -> f64 {
        match self {
            ScanOp::Sum => -0.0,
            other => other.neutral(),
        }
    }

    /// Whether the carried state is an f64 whatever the data type (sums and products).
    pub fn wide(self) -> bool {
        matches!(self, ScanOp::Sum | ScanOp::Prod)
    }

    /// `a ⊕ b` in the f64 state of a sum or product.
    pub fn apply_f64(self, a: f64, b: f64) -> f64 {
        match self {
            ScanOp::Sum => a + b,
            ScanOp::Prod => a * b,
            ScanOp::Max => <f64 as Real>::maximum(a, b),
            ScanOp::Min => <f64 as Real>::minimum(a, b),
        }
    }

    /// `a ⊕ b` in the data type (NaN-propagating for max and min).
    pub fn apply<T: Real>(self, a: T, b: T) -> T {
        match self {
            ScanOp::Sum => a + b,
            ScanOp::Prod => a * b,
            ScanOp::Max => T::maximum(a, b),
            ScanOp::Min => T::minimum(a, b),
        }
    }
}

/// A scan kernel's operation, axis and options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Scan {
    /// The operation.
    pub op: ScanOp,
    /// The scanned axis of the iteration space; `None` scans the flattened array (C order) and
    /// gives a 1-D result.
    pub axis: Option<usize>,
    /// Whether output `k` excludes element `k` (`y[0]` is the start).
    pub exclusive: bool,
    /// Whether the scan runs from the end of the axis to its start.
    pub reverse: bool,
    /// The bits of the f64 initial value, if one was given.
    initial: Option<u64>,
}

impl Scan {
    /// An inclusive forward scan without an initial value.
    pub fn new(op: ScanOp, axis: Option<usize>) -> Scan {
        Scan {
            op,
            axis,
            exclusive: false,
            reverse: false,
            initial: None,
        }
    }

    /// This scan starting from `initial` (or from the default start).
    pub fn with_initial(mut self, initial: Option<f64>) -> Scan {
        self.initial = initial.map(f64::to_bits);
        self
    }

    /// The initial value, if one was given.
    pub fn initial(&self) -> Option<f64> {
        self.initial.map(f64::from_bits)
    }

    /// The value the carried state starts from (see the module doc).
    pub fn start(&self) -> f64 {
        match self.initial() {
            Some(v) => v,
            None if self.exclusive => self.op.neutral(),
            None => self.op.identity(),
        }
    }

    /// `(outer, len, inner)`: the iteration space as `outer` blocks of `len` points along the scanned
    /// axis, each point `inner` elements apart (C order). `axis: None` is one line of every point.
    pub fn lines(&self, shape: &[usize]) -> (usize, usize, usize) {
        match self.axis {
            None => (1, shape.iter().product(), 1),
            Some(a) => (
                shape[..a].iter().product(),
                shape[a],
                shape[a + 1..].iter().product(),
            ),
        }
    }

    /// The outer axes a per-row plan of this scan may have (see `jit/src/scan.rs`), fewest first:
    /// along the last axis of more than one point (`inner == 1`) each line is a row (`axis` outer
    /// axes); along an outer axis (`inner > 1`) each step of a block is one row of `inner` points
    /// side by side (`axis + 1` outer axes) or several rows of the axes after (up to the rank); a
    /// scan of the flattened array reads it flat (`0`) or as its one line walked row by row, the
    /// rows of the axes after `k` outer axes (`1..rank`), the carry going on from row to row.
    pub fn row_axes(&self, shape: &[usize]) -> std::ops::RangeInclusive<usize> {
        match self.axis {
            None => 0..=shape.len().saturating_sub(1),
            Some(a) if self.lines(shape).2 > 1 => a + 1..=shape.len(),
            Some(a) => a..=a,
        }
    }

    /// The flat positions of line (`o`, `c`) in scan order (reversed for a reverse scan).
    pub fn line(&self, shape: &[usize], o: usize, c: usize) -> impl Iterator<Item = usize> {
        let (_, len, inner) = self.lines(shape);
        let reverse = self.reverse;
        (0..len).map(move |t| {
            let k = if reverse { len - 1 - t } else { t };
            (o * len + k) * inner + c
        })
    }
}

/// The state a scan carries along one line: f64 for sums and products, the data type otherwise.
#[derive(Debug, Clone, Copy)]
pub enum Carried<T> {
    /// A sum's or product's state, carried in f64.
    Wide(ScanOp, f64),
    /// A max's or min's state, carried in the data type.
    Narrow(ScanOp, T),
}

impl<T: Real> Carried<T> {
    /// The state at the start of a line of `scan`.
    pub fn start(scan: &Scan) -> Carried<T> {
        if scan.op.wide() {
            Carried::Wide(scan.op, scan.start())
        } else {
            Carried::Narrow(scan.op, T::from_f64(scan.start()))
        }
    }

    /// Folds `v` in.
    pub fn push(&mut self, v: T) {
        match self {
            Carried::Wide(op, s) => *s = op.apply_f64(*s, v.to_f64()),
            Carried::Narrow(op, s) => *s = op.apply(*s, v),
        }
    }

    /// The state as an output value (a wide state rounded once).
    pub fn value(&self) -> T {
        match *self {
            Carried::Wide(_, s) => T::from_f64(s),
            Carried::Narrow(_, s) => s,
        }
    }
}
