//! Element types: f64 and f32, and the scalar semantics each one gives every opcode.
//!
//! [`Real`] is the one place where the meaning of an opcode on a concrete float type is written down.
//! The interpreter calls exactly these functions; every compiled kernel is tested against them.

use std::fmt;

/// The element type a kernel computes in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    F32,
    F64,
}

impl DType {
    /// The size of one element in bytes.
    pub fn size(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 => 8,
        }
    }

    /// NumPy's promotion of two array dtypes: f32 with f64 gives f64.
    pub fn promote(self, other: DType) -> DType {
        self.max(other)
    }

    /// The NumPy name, as `kiln explain` and the JSON output print it.
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A float type kiln computes in, with the scalar semantics of every opcode.
///
/// Conventions shared by all opcodes:
/// - truth values are `1.0` and `0.0`; any nonzero value, NaN included, reads as true;
/// - comparisons follow IEEE 754: any comparison with NaN is false, except `!=`, which is true;
/// - transcendentals are the platform's libm (glibc through `std` for f64, the `libm` crate's
///   single-precision functions for f32), so f32 math is computed in f32, never through f64.
pub trait Real:
    Copy
    + PartialOrd
    + PartialEq
    + fmt::Debug
    + Send
    + Sync
    + 'static
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    /// The dtype tag of this type.
    const DTYPE: DType;
    const ZERO: Self;
    const ONE: Self;
    const INFINITY: Self;
    const NEG_INFINITY: Self;
    /// Rounds an f64 (a literal, an index) to this type, as NumPy casts a Python scalar.
    fn from_f64(v: f64) -> Self;
    /// Widens to f64 exactly.
    fn to_f64(self) -> f64;
    fn is_nan(self) -> bool;
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;
    fn sin(self) -> Self;
    fn cos(self) -> Self;
    fn tan(self) -> Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn pow(self, e: Self) -> Self;
    /// The raw bits, widened to u64 (for bit-exact comparisons).
    fn bits(self) -> u64;

    /// A truth value as 1 or 0.
    fn truth(b: bool) -> Self {
        if b { Self::ONE } else { Self::ZERO }
    }

    /// Whether the value reads as true: nonzero, NaN included.
    fn is_true(self) -> bool {
        self != Self::ZERO
    }

    /// NumPy's `minimum`: NaN if either is NaN, and -0.0 below +0.0 (as Cranelift's `fmin`).
    fn minimum(self, other: Self) -> Self {
        if self.is_nan() {
            self
        } else if other.is_nan() {
            other
        } else if self < other {
            self
        } else if other < self {
            other
        } else if self.bits() > other.bits() {
            // equal values: -0.0 (sign bit set, the larger bit pattern) wins
            self
        } else {
            other
        }
    }

    /// NumPy's `maximum`: NaN if either is NaN, and +0.0 above -0.0 (as Cranelift's `fmax`).
    fn maximum(self, other: Self) -> Self {
        if self.is_nan() {
            self
        } else if other.is_nan() {
            other
        } else if self > other {
            self
        } else if other > self {
            other
        } else if self.bits() < other.bits() {
            self
        } else {
            other
        }
    }
}

impl Real for f64 {
    const DTYPE: DType = DType::F64;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const INFINITY: Self = f64::INFINITY;
    const NEG_INFINITY: Self = f64::NEG_INFINITY;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn abs(self) -> Self {
        f64::abs(self)
    }
    fn sqrt(self) -> Self {
        f64::sqrt(self)
    }
    fn sin(self) -> Self {
        f64::sin(self)
    }
    fn cos(self) -> Self {
        f64::cos(self)
    }
    fn tan(self) -> Self {
        f64::tan(self)
    }
    fn exp(self) -> Self {
        f64::exp(self)
    }
    fn ln(self) -> Self {
        f64::ln(self)
    }
    fn pow(self, e: Self) -> Self {
        f64::powf(self, e)
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

impl Real for f32 {
    const DTYPE: DType = DType::F32;
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    const INFINITY: Self = f32::INFINITY;
    const NEG_INFINITY: Self = f32::NEG_INFINITY;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn to_f64(self) -> f64 {
        self as f64
    }
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn abs(self) -> Self {
        f32::abs(self)
    }
    fn sqrt(self) -> Self {
        f32::sqrt(self)
    }
    fn sin(self) -> Self {
        libm::sinf(self)
    }
    fn cos(self) -> Self {
        libm::cosf(self)
    }
    fn tan(self) -> Self {
        libm::tanf(self)
    }
    fn exp(self) -> Self {
        libm::expf(self)
    }
    fn ln(self) -> Self {
        libm::logf(self)
    }
    fn pow(self, e: Self) -> Self {
        libm::powf(self, e)
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}
