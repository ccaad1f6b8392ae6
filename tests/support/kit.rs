//! The test kit shared by every test crate of the workspace (kiln's `tests/`, kiln-jit's
//! `jit/tests/common`, kiln-ir's `ir/tests`): one deterministic random generator and the NaN-aware
//! comparators. It depends on std alone, so each crate includes it with `#[path]`.
//!
//! Comparisons follow the house rule: bit-exact where the result must be (any NaN equals any NaN, the
//! sign of zero counts), a relative bound for reassociated sums, a ULP distance for transcendentals.
#![allow(dead_code)]

/// A small deterministic generator (xorshift64*).
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// Uniform in `0..n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    /// A whole number in [lo, hi], as an f64.
    pub fn int(&mut self, lo: i64, hi: i64) -> f64 {
        (lo + (self.next_u64() % (hi - lo + 1) as u64) as i64) as f64
    }
}

/// `a` and `b` are the same value bit for bit (the sign of zero counts), or both NaN.
pub fn same_bits(a: f64, b: f64) -> bool {
    a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan())
}

/// [`same_bits`] element by element, and the same length.
pub fn bits_equal(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(&x, &y)| same_bits(x, y))
}

/// Every element within `rtol` of the other (relative to the larger magnitude), equal, or both NaN;
/// and the same length.
pub fn close(a: &[f64], b: &[f64], rtol: f64) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(&x, &y)| {
            (x.is_nan() && y.is_nan()) || x == y || (x - y).abs() <= rtol * x.abs().max(y.abs()) + 1e-300
        })
}

/// The distance in ULP between two values of f64 (or, with `f32`, of f32: both rounded to f32 first):
/// 0 for two NaNs, `u64::MAX` for a NaN against a number (-0.0 and +0.0 are 0 apart).
pub fn ulp_distance(a: f64, b: f64, f32: bool) -> u64 {
    if a.is_nan() || b.is_nan() {
        return if a.is_nan() && b.is_nan() { 0 } else { u64::MAX };
    }
    let ord = |x: f64| -> i128 {
        let (bits, sign) = if f32 {
            ((x as f32).to_bits() as i128, 1i128 << 31)
        } else {
            (x.to_bits() as i128, 1i128 << 63)
        };
        if bits & sign != 0 {
            -(bits & (sign - 1))
        } else {
            bits
        }
    };
    (ord(a) - ord(b)).unsigned_abs() as u64
}
