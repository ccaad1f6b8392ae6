//! The float element types, f64 and f32, and the scalar semantics each one gives every opcode.
//!
//! [`Real`] is the one place where the meaning of an opcode on a concrete float type is written down.
//! The interpreter calls exactly these functions; every compiled kernel is tested against them.

use crate::promote::ElemType;
use std::fmt;

/// A slice of float32 or float64 values ([`Real::floats`]).
#[derive(Debug, Clone, Copy)]
pub enum Floats<'a> {
    /// float32 values.
    F32(&'a [f32]),
    /// float64 values.
    F64(&'a [f64]),
}

/// A float type kiln computes in, with the scalar semantics of every opcode.
///
/// Conventions shared by all opcodes:
/// - truth values are `1.0` and `0.0`; any nonzero value, NaN included, reads as true;
/// - comparisons follow IEEE 754: any comparison with NaN is false, except `!=`, which is true;
/// - transcendentals are the platform's libm (glibc through `std` for f64, the `libm` crate's
///   single-precision functions for f32), so f32 math is computed in f32, never through f64.
///
/// The trait is sealed: compiled code sizes its buffers by [`Real::DTYPE`], so only `f64` and `f32`
/// may implement it.
pub trait Real:
    sealed::Sealed
    + Copy
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
    /// The element type of this type ([`ElemType::F64`] or [`ElemType::F32`]).
    const DTYPE: ElemType;
    /// 0.
    const ZERO: Self;
    /// 1.
    const ONE: Self;
    /// +inf.
    const INFINITY: Self;
    /// -inf.
    const NEG_INFINITY: Self;
    /// Rounds an f64 (a literal, an index) to this type, as NumPy casts a Python scalar.
    fn from_f64(v: f64) -> Self;
    /// `data` as a slice of its float type.
    fn floats(data: &[Self]) -> Floats<'_>;
    /// Widens to f64 exactly.
    fn to_f64(self) -> f64;
    /// Whether the value is a NaN (either sign, quiet or signalling).
    fn is_nan(self) -> bool;
    /// `|self|` (clears the sign bit, NaN included).
    fn abs(self) -> Self;
    /// `self * a + b` with one rounding (IEEE fusedMultiplyAdd).
    fn mul_add(self, a: Self, b: Self) -> Self;
    /// The square root (IEEE, correctly rounded).
    fn sqrt(self) -> Self;
    /// The sine, as libm computes it (the reference the compiled math is bounded against).
    fn sin(self) -> Self;
    /// The cosine, as libm computes it (the reference the compiled math is bounded against).
    fn cos(self) -> Self;
    /// The tangent, as libm computes it (the reference the compiled math is bounded against).
    fn tan(self) -> Self;
    /// `e**self`, as libm computes it (the reference the compiled math is bounded against).
    fn exp(self) -> Self;
    /// The natural logarithm, as libm computes it (the reference the compiled math is bounded against).
    fn ln(self) -> Self;
    /// C99 `pow(self, e)`, as libm computes it (the reference the compiled math is bounded against).
    fn pow(self, e: Self) -> Self;
    /// The hyperbolic tangent, as libm computes it (the reference the compiled math is bounded against).
    fn tanh(self) -> Self;
    /// `2**self`, as libm computes it (the reference the compiled math is bounded against).
    fn exp2(self) -> Self;
    /// The base-2 logarithm, as libm computes it (the reference the compiled math is bounded against).
    fn log2(self) -> Self;
    /// The base-10 logarithm, as libm computes it (the reference the compiled math is bounded against).
    fn log10(self) -> Self;
    /// `exp(self) - 1`, accurate near 0, as libm computes it (the reference the compiled math is bounded against).
    fn expm1(self) -> Self;
    /// `ln(1 + self)`, accurate near 0, as libm computes it (the reference the compiled math is bounded against).
    fn log1p(self) -> Self;
    /// The arcsine, as libm computes it (the reference the compiled math is bounded against).
    fn asin(self) -> Self;
    /// The arccosine, as libm computes it (the reference the compiled math is bounded against).
    fn acos(self) -> Self;
    /// The arctangent, as libm computes it (the reference the compiled math is bounded against).
    fn atan(self) -> Self;
    /// The hyperbolic sine, as libm computes it (the reference the compiled math is bounded against).
    fn sinh(self) -> Self;
    /// The hyperbolic cosine, as libm computes it (the reference the compiled math is bounded against).
    fn cosh(self) -> Self;
    /// The inverse hyperbolic sine, as libm computes it (the reference the compiled math is bounded against).
    fn asinh(self) -> Self;
    /// The inverse hyperbolic cosine, as libm computes it (the reference the compiled math is bounded against).
    fn acosh(self) -> Self;
    /// The inverse hyperbolic tangent, as libm computes it (the reference the compiled math is bounded against).
    fn atanh(self) -> Self;
    /// The error function, as libm computes it (the reference the compiled math is bounded against).
    fn erf(self) -> Self;
    /// The complementary error function, `1 - erf(self)` without cancellation, as libm computes it (the reference the compiled math is bounded against).
    fn erfc(self) -> Self;
    /// The cube root, as libm computes it (the reference the compiled math is bounded against).
    fn cbrt(self) -> Self;
    /// Rounds toward -inf.
    fn floor(self) -> Self;
    /// Rounds toward +inf.
    fn ceil(self) -> Self;
    /// Rounds toward zero.
    fn trunc(self) -> Self;
    /// Round to nearest, ties to even.
    fn round_even(self) -> Self;
    /// The angle of the point `(b, self)`, C99 `atan2(self, b)`, as libm computes it (the reference the compiled math is bounded against).
    fn atan2(self, b: Self) -> Self;
    /// `sqrt(self**2 + b**2)` without undue overflow, as libm computes it (the reference the compiled math is bounded against).
    fn hypot(self, b: Self) -> Self;
    /// `self` with the sign of `sign`.
    fn copysign(self, sign: Self) -> Self;
    /// C's `fmod` (exact; the sign of `self`).
    fn fmod(self, b: Self) -> Self;
    /// C's `nextafter`: the next representable value after `self` toward `b` (`b` itself when equal,
    /// NaN when either is NaN; from ±0 toward a nonzero `b`, the smallest subnormal of `b`'s sign).
    fn nextafter(self, b: Self) -> Self;
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

    /// NumPy's `remainder` (Python's `%`), from `fmod` exactly as NumPy's `npy_divmod`: the result
    /// takes the sign of `b`, a zero result is `copysign(0, b)`, `b = 0` gives NaN.
    fn remainder(self, b: Self) -> Self {
        let m = self.fmod(b);
        if b == Self::ZERO {
            m
        } else if m != Self::ZERO {
            if (b < Self::ZERO) != (m < Self::ZERO) {
                m + b
            } else {
                m
            }
        } else {
            Self::ZERO.copysign(b)
        }
    }

    /// NumPy's `floor_divide` (Python's `//` on floats), exactly as NumPy's `npy_floor_divide`: `b = 0`
    /// gives `a / b` (±inf, or NaN for `0 // 0` and NaN); otherwise `npy_divmod`'s quotient:
    /// `(a - fmod(a, b)) / b`, less one where the remainder's sign differs from `b`'s, floored and
    /// snapped to the nearest integer; a zero quotient takes the sign of `a / b` (`-0.0 // 3` is
    /// `-0.0`, `1 // -inf` is `-1`, `inf // 3` is NaN).
    fn floor_divide(self, b: Self) -> Self {
        if b == Self::ZERO {
            return self / b;
        }
        let m = self.fmod(b);
        let mut div = (self - m) / b;
        // C's `if (mod)`: true for a NaN remainder too, as `!=` is
        if m != Self::ZERO && (b < Self::ZERO) != (m < Self::ZERO) {
            div = div - Self::ONE;
        }
        if div != Self::ZERO {
            let f = div.floor();
            if div - f > Self::from_f64(0.5) {
                f + Self::ONE
            } else {
                f
            }
        } else {
            Self::ZERO.copysign(self / b)
        }
    }

    /// NumPy's `minimum`: the first NaN if either is NaN, else `self` where `self < other` and
    /// `other` otherwise, so of two equal values (`-0.0` and `+0.0`) the second comes back, as NumPy's
    /// `(a < b || isnan(a)) ? a : b`: `minimum(-0.0, 0.0)` is `0.0`. A fold with it keeps, among equal
    /// extremes, the last.
    fn minimum(self, other: Self) -> Self {
        if self.is_nan() || self < other {
            self
        } else {
            other
        }
    }

    /// NumPy's `maximum`: the first NaN if either is NaN, else `self` where `self > other` and
    /// `other` otherwise (of two equal values the second: `maximum(0.0, -0.0)` is `-0.0`).
    fn maximum(self, other: Self) -> Self {
        if self.is_nan() || self > other {
            self
        } else {
            other
        }
    }
}

impl Real for f64 {
    const DTYPE: ElemType = ElemType::F64;
    fn floats(data: &[f64]) -> Floats<'_> {
        Floats::F64(data)
    }
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
    fn mul_add(self, a: Self, b: Self) -> Self {
        f64::mul_add(self, a, b)
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
        // C99 and NumPy: pow(x, ±0) = 1 and pow(1, y) = 1 for every x and y, a signalling NaN
        // included (glibc's pow gives NaN for a signalling NaN there)
        if e == 0.0 || self == 1.0 {
            1.0
        } else {
            f64::powf(self, e)
        }
    }
    fn tanh(self) -> Self {
        f64::tanh(self)
    }
    fn exp2(self) -> Self {
        f64::exp2(self)
    }
    fn log2(self) -> Self {
        f64::log2(self)
    }
    fn log10(self) -> Self {
        f64::log10(self)
    }
    fn expm1(self) -> Self {
        f64::exp_m1(self)
    }
    fn log1p(self) -> Self {
        f64::ln_1p(self)
    }
    fn asin(self) -> Self {
        f64::asin(self)
    }
    fn acos(self) -> Self {
        f64::acos(self)
    }
    fn atan(self) -> Self {
        f64::atan(self)
    }
    fn sinh(self) -> Self {
        f64::sinh(self)
    }
    fn cosh(self) -> Self {
        f64::cosh(self)
    }
    // std computes these three by formulas that lose accuracy (acosh near 1, atanh near 0): use the
    // libm crate's (musl's) instead.
    fn asinh(self) -> Self {
        libm::asinh(self)
    }
    fn acosh(self) -> Self {
        // the libm crate's formula for 2 <= |x| < 2^26 is only meant for x >= 1: below, C99's NaN
        if self < 1.0 { f64::NAN } else { libm::acosh(self) }
    }
    fn atanh(self) -> Self {
        libm::atanh(self)
    }
    // std has no erf: the libm crate's (musl's, within 1 ULP)
    fn erf(self) -> Self {
        libm::erf(self)
    }
    fn erfc(self) -> Self {
        libm::erfc(self)
    }
    fn cbrt(self) -> Self {
        f64::cbrt(self)
    }
    fn floor(self) -> Self {
        f64::floor(self)
    }
    fn ceil(self) -> Self {
        f64::ceil(self)
    }
    fn trunc(self) -> Self {
        f64::trunc(self)
    }
    fn round_even(self) -> Self {
        f64::round_ties_even(self)
    }
    fn atan2(self, b: Self) -> Self {
        f64::atan2(self, b)
    }
    fn hypot(self, b: Self) -> Self {
        f64::hypot(self, b)
    }
    fn copysign(self, sign: Self) -> Self {
        f64::copysign(self, sign)
    }
    fn fmod(self, b: Self) -> Self {
        self % b
    }
    fn nextafter(self, b: Self) -> Self {
        libm::nextafter(self, b)
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}

impl Real for f32 {
    const DTYPE: ElemType = ElemType::F32;
    fn floats(data: &[f32]) -> Floats<'_> {
        Floats::F32(data)
    }
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
    fn mul_add(self, a: Self, b: Self) -> Self {
        f32::mul_add(self, a, b)
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
        // as f64's: pow(x, ±0) = pow(1, y) = 1 for every x and y, signalling NaNs included
        if e == 0.0 || self == 1.0 {
            1.0
        } else {
            libm::powf(self, e)
        }
    }
    fn tanh(self) -> Self {
        libm::tanhf(self)
    }
    fn exp2(self) -> Self {
        libm::exp2f(self)
    }
    fn log2(self) -> Self {
        libm::log2f(self)
    }
    fn log10(self) -> Self {
        libm::log10f(self)
    }
    fn expm1(self) -> Self {
        libm::expm1f(self)
    }
    fn log1p(self) -> Self {
        libm::log1pf(self)
    }
    fn asin(self) -> Self {
        libm::asinf(self)
    }
    fn acos(self) -> Self {
        libm::acosf(self)
    }
    fn atan(self) -> Self {
        libm::atanf(self)
    }
    fn sinh(self) -> Self {
        libm::sinhf(self)
    }
    fn cosh(self) -> Self {
        libm::coshf(self)
    }
    fn asinh(self) -> Self {
        libm::asinhf(self)
    }
    fn acosh(self) -> Self {
        // as for f64: the libm crate gives acoshf(-104) = -2.98, not NaN
        if self < 1.0 { f32::NAN } else { libm::acoshf(self) }
    }
    fn atanh(self) -> Self {
        libm::atanhf(self)
    }
    fn erf(self) -> Self {
        libm::erff(self)
    }
    fn erfc(self) -> Self {
        libm::erfcf(self)
    }
    fn cbrt(self) -> Self {
        libm::cbrtf(self)
    }
    fn floor(self) -> Self {
        f32::floor(self)
    }
    fn ceil(self) -> Self {
        f32::ceil(self)
    }
    fn trunc(self) -> Self {
        f32::trunc(self)
    }
    fn round_even(self) -> Self {
        f32::round_ties_even(self)
    }
    fn atan2(self, b: Self) -> Self {
        libm::atan2f(self, b)
    }
    fn hypot(self, b: Self) -> Self {
        libm::hypotf(self, b)
    }
    fn copysign(self, sign: Self) -> Self {
        f32::copysign(self, sign)
    }
    fn fmod(self, b: Self) -> Self {
        self % b
    }
    fn nextafter(self, b: Self) -> Self {
        libm::nextafterf(self, b)
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}
