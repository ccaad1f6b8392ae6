//! NumPy's integer arithmetic for int32 and int64: the scalar meaning of every operator on integers,
//! written once (issue 13: the interpreter will call these, and compiled integer kernels will be
//! checked against them bit for bit).
//!
//! - `+ - *` and unary `-` wrap in two's complement, as NumPy's (which only warns, for scalars);
//! - `//` is floor division and `%` takes the divisor's sign; `x // 0` and `x % 0` are 0 (NumPy's
//!   value, with a warning), and `MIN // -1` wraps to `MIN` (its `%` is 0);
//! - `**` by a non-negative exponent wraps (square and multiply); a negative exponent is refused
//!   before a kernel runs (see [`crate::promote`]), so [`Int::pow`] reads it as 0;
//! - `<<` and `>>` with a count outside `0..bits` give what NumPy gives: 0 for `<<`, the sign (0 or
//!   -1) for `>>`; `>>` is arithmetic;
//! - `abs(MIN)` is `MIN` (it wraps); `sign` is -1, 0 or 1;
//! - a float cast to an integer truncates toward zero, and NaN, ±inf and values outside the type's
//!   range give `MIN`, x86's "integer indefinite", which NumPy's casts give on this architecture.
//!
//! `tests/data/numpy_int_ops.csv` holds NumPy's results on edge values; `ir/tests/int_ops.rs` checks
//! every row.

/// An integer type kiln computes in (sealed: i32 and i64).
pub trait Int: sealed::Sealed + Copy + Eq + Ord + std::fmt::Debug + Send + Sync + 'static {
    /// The width in bits.
    const BITS: u32;
    /// The most negative value, what a float out of range converts to.
    const MIN: Self;
    /// Zero.
    const ZERO: Self;
    /// One.
    const ONE: Self;

    /// `self + b`, wrapping.
    fn add(self, b: Self) -> Self;
    /// `self - b`, wrapping.
    fn sub(self, b: Self) -> Self;
    /// `self * b`, wrapping.
    fn mul(self, b: Self) -> Self;
    /// `-self`, wrapping (`-MIN == MIN`).
    fn neg(self) -> Self;
    /// Floor division; 0 for a zero divisor.
    fn floor_div(self, b: Self) -> Self;
    /// The remainder with the divisor's sign; 0 for a zero divisor.
    fn rem(self, b: Self) -> Self;
    /// `self` to the power `e`, wrapping; 1 for `e == 0`, and `e < 0` reads as 0.
    fn pow(self, e: Self) -> Self;
    /// Left shift; 0 for a count outside `0..BITS`.
    fn shl(self, count: Self) -> Self;
    /// Arithmetic right shift; the sign (0 or -1) for a count outside `0..BITS`.
    fn shr(self, count: Self) -> Self;
    /// Bitwise and.
    fn and(self, b: Self) -> Self;
    /// Bitwise or.
    fn or(self, b: Self) -> Self;
    /// Bitwise exclusive or.
    fn xor(self, b: Self) -> Self;
    /// Bitwise not (`~`).
    fn not(self) -> Self;
    /// `|self|`, wrapping (`abs(MIN) == MIN`).
    fn abs(self) -> Self;
    /// -1, 0 or 1, as the sign of `self`.
    fn sign(self) -> Self;
    /// A float truncated toward zero; `MIN` for NaN, ±inf and values out of range.
    fn from_f64(v: f64) -> Self;
    /// The nearest f64 (exact below 2**53; round to nearest even above).
    fn to_f64(self) -> f64;
    /// The nearest f32.
    fn to_f32(self) -> f32;
}

macro_rules! int_impl {
    ($t:ty) => {
        impl Int for $t {
            const BITS: u32 = <$t>::BITS;
            const MIN: Self = <$t>::MIN;
            const ZERO: Self = 0;
            const ONE: Self = 1;

            fn add(self, b: Self) -> Self {
                self.wrapping_add(b)
            }
            fn sub(self, b: Self) -> Self {
                self.wrapping_sub(b)
            }
            fn mul(self, b: Self) -> Self {
                self.wrapping_mul(b)
            }
            fn neg(self) -> Self {
                self.wrapping_neg()
            }
            fn floor_div(self, b: Self) -> Self {
                if b == 0 {
                    return 0;
                }
                // MIN / -1 wraps to MIN, and its remainder is 0
                let q = self.wrapping_div(b);
                let r = self.wrapping_rem(b);
                if r != 0 && ((r < 0) != (b < 0)) {
                    q - 1
                } else {
                    q
                }
            }
            fn rem(self, b: Self) -> Self {
                if b == 0 {
                    return 0;
                }
                let r = self.wrapping_rem(b);
                if r != 0 && ((r < 0) != (b < 0)) {
                    r + b
                } else {
                    r
                }
            }
            fn pow(self, e: Self) -> Self {
                let (mut base, mut e, mut acc) = (self, e.max(0), 1 as $t);
                while e > 0 {
                    if e & 1 == 1 {
                        acc = acc.wrapping_mul(base);
                    }
                    base = base.wrapping_mul(base);
                    e >>= 1;
                }
                acc
            }
            fn shl(self, count: Self) -> Self {
                if (0..Self::BITS as $t).contains(&count) {
                    self << count
                } else {
                    0
                }
            }
            fn shr(self, count: Self) -> Self {
                if (0..Self::BITS as $t).contains(&count) {
                    self >> count
                } else if self < 0 {
                    -1
                } else {
                    0
                }
            }
            fn and(self, b: Self) -> Self {
                self & b
            }
            fn or(self, b: Self) -> Self {
                self | b
            }
            fn xor(self, b: Self) -> Self {
                self ^ b
            }
            fn not(self) -> Self {
                !self
            }
            fn abs(self) -> Self {
                self.wrapping_abs()
            }
            fn sign(self) -> Self {
                self.signum()
            }
            fn from_f64(v: f64) -> Self {
                // the exclusive upper bound 2**(BITS-1) is exact in f64; NaN fails both tests
                let limit = (1u64 << (Self::BITS - 1)) as f64;
                if v > -limit - 1.0 && v < limit {
                    v as $t
                } else {
                    Self::MIN
                }
            }
            fn to_f64(self) -> f64 {
                self as f64
            }
            fn to_f32(self) -> f32 {
                self as f32
            }
        }
    };
}

int_impl!(i32);
int_impl!(i64);

mod sealed {
    pub trait Sealed {}
    impl Sealed for i32 {}
    impl Sealed for i64 {}
}

#[cfg(test)]
mod tests {
    use super::Int;

    #[test]
    fn python_floor_division_and_remainder() {
        assert_eq!((-7i32).floor_div(2), -4);
        assert_eq!((-7i32).rem(2), 1);
        assert_eq!(7i64.floor_div(-2), -4);
        assert_eq!(7i64.rem(-2), -1);
        assert_eq!(i32::MIN.floor_div(-1), i32::MIN);
        assert_eq!(i64::MIN.rem(-1), 0);
        assert_eq!(5i32.floor_div(0), 0);
        assert_eq!(5i64.rem(0), 0);
    }

    #[test]
    fn casts_from_floats_as_x86() {
        assert_eq!(i32::from_f64(-2.9), -2);
        assert_eq!(i32::from_f64(2147483647.0), i32::MAX);
        assert_eq!(i32::from_f64(-2147483648.5), i32::MIN);
        assert_eq!(i32::from_f64(-2147483649.0), i32::MIN);
        assert_eq!(i32::from_f64(2147483648.0), i32::MIN);
        assert_eq!(i64::from_f64(f64::NAN), i64::MIN);
        assert_eq!(i64::from_f64(9.2e18), 9_200_000_000_000_000_000);
    }
}
