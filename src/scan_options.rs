//! How a scan runs ([`ScanOptions`]): the data of a scan node of the builder's tree, which the
//! builder ([`crate::expr`]), its scan methods (`scan.rs`) and the lowering read.

use std::hash::{Hash, Hasher};

/// How a scan runs: its axis (`None`: the flattened array), exclusive, reverse, and its start.
#[derive(Debug, Clone, Copy, Default)]
pub struct ScanOptions {
    /// The scanned axis (negative counts from the end); `None` scans the flattened array.
    pub axis: Option<isize>,
    /// Whether output `k` excludes element `k`.
    pub exclusive: bool,
    /// Whether the scan runs from the end.
    pub reverse: bool,
    /// The start of every line (see [`kiln_ir::scan`]).
    pub initial: Option<f64>,
}

impl ScanOptions {
    /// Along `axis`, inclusive, forward, from the default start.
    pub fn along(axis: isize) -> ScanOptions {
        ScanOptions {
            axis: Some(axis),
            ..Default::default()
        }
    }
}

impl PartialEq for ScanOptions {
    fn eq(&self, other: &Self) -> bool {
        self.axis == other.axis
            && self.exclusive == other.exclusive
            && self.reverse == other.reverse
            && self.initial.map(f64::to_bits) == other.initial.map(f64::to_bits)
    }
}

impl Eq for ScanOptions {}

impl Hash for ScanOptions {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.axis.hash(h);
        self.exclusive.hash(h);
        self.reverse.hash(h);
        self.initial.map(f64::to_bits).hash(h);
    }
}
