//! Passes over a kernel. Each pass is a file of its own, opening with what it does and declines.

pub mod contract;
pub mod prefix_scan;
pub mod strength;
