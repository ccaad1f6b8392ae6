//! Opcodes and their scalar semantics.
//!
//! Each opcode carries its meaning: [`UnaryOp::eval`] and [`BinaryOp::eval`] are the definition the
//! interpreter runs and every backend must reproduce. Special values follow IEEE 754 and C99 unless
//! an opcode's doc says otherwise.

use crate::dtype::Real;
use std::fmt;

/// An operation of one operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum UnaryOp {
    /// `-x`: flips the sign bit (so `-0.0 -> 0.0`, NaN stays NaN).
    Neg,
    /// `|x|`: clears the sign bit (`abs(-0.0) = 0.0`, `abs(-inf) = inf`).
    Abs,
    /// IEEE square root, correctly rounded: `sqrt(-0.0) = -0.0`, negative or NaN gives NaN.
    Sqrt,
    /// libm sine: NaN and ±inf give NaN, `sin(±0) = ±0`.
    Sin,
    /// libm cosine: NaN and ±inf give NaN.
    Cos,
    /// libm tangent: NaN and ±inf give NaN, `tan(±0) = ±0`.
    Tan,
    /// libm exponential: `exp(-inf) = 0`, `exp(inf) = inf`, overflow gives inf.
    Exp,
    /// libm natural logarithm: `log(±0) = -inf`, negative gives NaN, `log(inf) = inf`.
    Log,
    /// `1 / x` in one IEEE division: `1/±0 = ±inf`, `1/±inf = ±0`.
    Recip,
    /// Logical not: 1 if `x == 0` (either zero), else 0; NaN counts as true, so `not(NaN) = 0`.
    Not,
    /// libm hyperbolic tangent: `tanh(±0) = ±0`, `tanh(±inf) = ±1`, NaN gives NaN.
    Tanh,
    /// libm `2^x`: `exp2(-inf) = 0`, `exp2(inf) = inf`, overflow gives inf.
    Exp2,
    /// libm base-2 logarithm: `log2(±0) = -inf`, negative gives NaN, `log2(inf) = inf`.
    Log2,
    /// libm base-10 logarithm: `log10(±0) = -inf`, negative gives NaN, `log10(inf) = inf`.
    Log10,
    /// libm `exp(x) - 1`, accurate near 0: `expm1(±0) = ±0`, `expm1(-inf) = -1`.
    Expm1,
    /// libm `log(1 + x)`, accurate near 0: `log1p(±0) = ±0`, `log1p(-1) = -inf`, below -1 NaN.
    Log1p,
    /// libm arc sine: `asin(±0) = ±0`, `|x| > 1` gives NaN.
    Arcsin,
    /// libm arc cosine: `acos(1) = +0`, `|x| > 1` gives NaN.
    Arccos,
    /// libm arc tangent: `atan(±0) = ±0`, `atan(±inf) = ±pi/2`.
    Arctan,
    /// libm hyperbolic sine: `sinh(±0) = ±0`, `sinh(±inf) = ±inf`.
    Sinh,
    /// libm hyperbolic cosine: `cosh(±inf) = inf`.
    Cosh,
    /// libm inverse hyperbolic sine: `asinh(±0) = ±0`, `asinh(±inf) = ±inf`.
    Arcsinh,
    /// libm inverse hyperbolic cosine: `acosh(1) = +0`, below 1 gives NaN.
    Arccosh,
    /// libm inverse hyperbolic tangent: `atanh(±1) = ±inf`, `|x| > 1` gives NaN.
    Arctanh,
    /// Round towards -inf; ±0, ±inf and NaN are returned unchanged.
    Floor,
    /// Round towards +inf (`ceil(-0.5) = -0.0`); ±0, ±inf and NaN unchanged.
    Ceil,
    /// Round towards 0 (`trunc(-0.5) = -0.0`); ±0, ±inf and NaN unchanged.
    Trunc,
    /// Round to the nearest integer, ties to even, as NumPy's `round` (`round(2.5) = 2`,
    /// `round(-0.5) = -0.0`); ±inf and NaN unchanged.
    Round,
    /// NumPy's `sign`: 1 for `x > 0`, -1 for `x < 0`, `+0.0` for either zero, NaN for NaN.
    Sign,
    /// Whether `x` is NaN, as 1 / 0.
    IsNan,
    /// Whether `x` is ±inf, as 1 / 0.
    IsInf,
    /// Whether `x` is finite (not NaN, not ±inf), as 1 / 0.
    IsFinite,
    /// Whether `x`'s sign bit is set, as 1 / 0 (NumPy's `signbit`: true for -0.0 and a negative
    /// NaN, false for +0.0).
    Signbit,
    /// libm error function: `erf(±0) = ±0`, `erf(±inf) = ±1`, NaN gives NaN.
    Erf,
    /// libm complementary error function `1 - erf(x)`, accurate for large x: `erfc(-inf) = 2`,
    /// `erfc(inf) = +0`, NaN gives NaN.
    Erfc,
    /// libm cube root: `cbrt(±0) = ±0`, `cbrt(±inf) = ±inf`, negative x gives a negative root, NaN gives NaN.
    Cbrt,
    /// NumPy's `deg2rad`: `x * (pi / 180)`, the constant computed in the kernel's dtype (f32 divides
    /// f32 pi by 180 as `npy_deg2radf` does); one IEEE multiplication, so ±0, ±inf and NaN pass through.
    Deg2Rad,
    /// NumPy's `rad2deg`: `x * (180 / pi)`, the constant computed in the kernel's dtype; one IEEE
    /// multiplication, so ±0, ±inf and NaN pass through.
    Rad2Deg,
    /// `~x` on integers: the bitwise complement (`~0 = -1`); only in typed kernels ([`crate::typed`]),
    /// which give bool's `~` as [`UnaryOp::Not`]. Not defined on floats (the typing refuses it); a
    /// float kernel reads it as logical not.
    Invert,
    /// The real part of a complex number; of a real number, the number itself.
    Real,
    /// The imaginary part of a complex number; of a real number, zero (`imag(NaN) = 0`, as NumPy).
    Imag,
    /// The complex conjugate (`conj(a + bj) = a - bj`, the imaginary part's sign flipped, a zero's
    /// too); of a real number, the number itself.
    Conj,
}

/// An operation of two operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BinaryOp {
    /// IEEE addition.
    Add,
    /// IEEE subtraction.
    Sub,
    /// IEEE multiplication.
    Mul,
    /// IEEE division: `x/0` is ±inf or NaN as IEEE says, never an error.
    Div,
    /// NumPy's `minimum`: NaN if either operand is NaN; of two equal operands the second
    /// (`minimum(-0.0, 0.0)` is `0.0`, as NumPy's `(a < b || isnan(a)) ? a : b`).
    Min,
    /// NumPy's `maximum`: NaN if either operand is NaN; of two equal operands the second
    /// (`maximum(0.0, -0.0)` is `-0.0`).
    Max,
    /// C99 `pow` (Annex F): `pow(x, ±0) = 1` even for NaN x, `pow(1, y) = 1` even for NaN y,
    /// a negative base with a non-integer exponent gives NaN, `pow(±0, -1) = ±inf`.
    Pow,
    /// `<`, IEEE (false with NaN), as 1 / 0.
    Lt,
    /// `<=`, IEEE, as 1 / 0.
    Le,
    /// `>`, IEEE, as 1 / 0.
    Gt,
    /// `>=`, IEEE, as 1 / 0.
    Ge,
    /// `==`, IEEE (`-0.0 == 0.0`, NaN never equal), as 1 / 0.
    Eq,
    /// `!=`, IEEE (true whenever an operand is NaN), as 1 / 0.
    Ne,
    /// Logical and of two truth values (nonzero or NaN is true), as 1 / 0.
    And,
    /// Logical or of two truth values (nonzero or NaN is true), as 1 / 0.
    Or,
    /// libm `atan2(a, b)`, the angle of the point `(b, a)`: C99 Annex F signs (`atan2(±0, -0) = ±pi`).
    Arctan2,
    /// libm `hypot(a, b)`: `sqrt(a² + b²)` without overflow; an infinite operand gives inf even with NaN.
    Hypot,
    /// `a` with the sign bit of `b` (NaN's sign bit counts).
    Copysign,
    /// NumPy's `fmax`: the larger operand, ignoring a NaN (NaN only when both are NaN); on equal
    /// operands (`-0.0`, `+0.0`) the first.
    Fmax,
    /// NumPy's `fmin`: the smaller operand, ignoring a NaN (NaN only when both are NaN); on equal
    /// operands the first.
    Fmin,
    /// C's `fmod`: `a - trunc(a / b) * b` exactly, with the sign of the dividend `a`; `b = 0` or an
    /// infinite `a` gives NaN, an infinite `b` gives `a`.
    Fmod,
    /// NumPy's `remainder` (Python's `%`): the sign of the divisor `b` (`-1 % 3 = 2`); a zero result is
    /// `copysign(0, b)`; `b = 0` gives NaN; computed from `fmod` as NumPy's `npy_divmod` does.
    Rem,
    /// NumPy's `floor_divide` (Python's `//`): see [`Real::floor_divide`] (`b = 0` gives ±inf or NaN,
    /// an infinite `a` gives NaN, `a // ±inf` is 0 or -1 by the signs).
    FloorDiv,
    /// C's `nextafter(a, b)`: the representable value next to `a` in the direction of `b`.
    Nextafter,
    /// NumPy's `logaddexp`, `log(exp(a) + exp(b))` without overflow, by `npy_logaddexp`'s formula:
    /// `a == b` gives `a + ln 2` (so `logaddexp(inf, inf) = inf`, `logaddexp(-inf, -inf) = -inf`);
    /// else `max + log1p(exp(-|a - b|))` (`logaddexp(inf, -inf) = inf`); a NaN operand gives NaN.
    Logaddexp,
    /// NumPy's `logaddexp2`, `log2(2^a + 2^b)`, by `npy_logaddexp2`'s formula: `a == b` gives `a + 1`;
    /// else `max + log2(e) * log1p(exp2(-|a - b|))`; a NaN operand gives NaN.
    Logaddexp2,
    /// `a & b` on integers, bitwise; on bools the logical and. Only in typed kernels ([`crate::typed`]),
    /// which give the text language's `&` this opcode for integer operands ([`BinaryOp::And`] stays
    /// kiln's logical extension on floats). A float kernel reads it as logical and.
    BitAnd,
    /// `a | b` on integers, bitwise; on bools the logical or (see [`BinaryOp::BitAnd`]).
    BitOr,
    /// `a ^ b` on integers, bitwise exclusive or; on bools the logical one. Refused on floats by the
    /// typing (as NumPy); a float kernel reads it as the logical exclusive or.
    BitXor,
    /// `a << b` on integers: NumPy's left shift, 0 for a count outside `0..bits`. Refused on floats
    /// and bools by the typing; a float kernel never holds it (it reads as NaN).
    Shl,
    /// `a >> b` on integers: NumPy's arithmetic right shift, the sign (0 or -1) for a count outside
    /// `0..bits`. Refused on floats and bools by the typing; a float kernel never holds it (NaN).
    Shr,
    /// `complex(a, b)`, the complex number `a + bj` of two real numbers (numexpr's `complex`), in
    /// the complex type of their common float type. Only in typed kernels ([`crate::typed`]); a
    /// float kernel never holds it (it reads as `a`).
    Complex,
    /// numexpr's `contains(haystack, needle)` of two byte strings ([`crate::bytes::contains`]), a
    /// bool. Only in typed kernels; a float kernel never holds it (it reads as 0).
    Contains,
}

impl UnaryOp {
    /// Every unary opcode, in declaration order.
    pub const ALL: [UnaryOp; 38] = [
        UnaryOp::Neg,
        UnaryOp::Abs,
        UnaryOp::Sqrt,
        UnaryOp::Sin,
        UnaryOp::Cos,
        UnaryOp::Tan,
        UnaryOp::Exp,
        UnaryOp::Log,
        UnaryOp::Recip,
        UnaryOp::Not,
        UnaryOp::Tanh,
        UnaryOp::Exp2,
        UnaryOp::Log2,
        UnaryOp::Log10,
        UnaryOp::Expm1,
        UnaryOp::Log1p,
        UnaryOp::Arcsin,
        UnaryOp::Arccos,
        UnaryOp::Arctan,
        UnaryOp::Sinh,
        UnaryOp::Cosh,
        UnaryOp::Arcsinh,
        UnaryOp::Arccosh,
        UnaryOp::Arctanh,
        UnaryOp::Floor,
        UnaryOp::Ceil,
        UnaryOp::Trunc,
        UnaryOp::Round,
        UnaryOp::Sign,
        UnaryOp::IsNan,
        UnaryOp::IsInf,
        UnaryOp::IsFinite,
        UnaryOp::Signbit,
        UnaryOp::Erf,
        UnaryOp::Erfc,
        UnaryOp::Cbrt,
        UnaryOp::Deg2Rad,
        UnaryOp::Rad2Deg,
    ];

    /// The scalar semantics of this opcode.
    #[inline]
    pub fn eval<T: Real>(self, x: T) -> T {
        match self {
            UnaryOp::Neg => -x,
            UnaryOp::Abs => x.abs(),
            UnaryOp::Sqrt => x.sqrt(),
            UnaryOp::Sin => x.sin(),
            UnaryOp::Cos => x.cos(),
            UnaryOp::Tan => x.tan(),
            UnaryOp::Exp => x.exp(),
            UnaryOp::Log => x.ln(),
            UnaryOp::Recip => T::ONE / x,
            UnaryOp::Not => T::truth(!x.is_true()),
            UnaryOp::Tanh => x.tanh(),
            UnaryOp::Exp2 => x.exp2(),
            UnaryOp::Log2 => x.log2(),
            UnaryOp::Log10 => x.log10(),
            UnaryOp::Expm1 => x.expm1(),
            UnaryOp::Log1p => x.log1p(),
            UnaryOp::Arcsin => x.asin(),
            UnaryOp::Arccos => x.acos(),
            UnaryOp::Arctan => x.atan(),
            UnaryOp::Sinh => x.sinh(),
            UnaryOp::Cosh => x.cosh(),
            UnaryOp::Arcsinh => x.asinh(),
            UnaryOp::Arccosh => x.acosh(),
            UnaryOp::Arctanh => x.atanh(),
            UnaryOp::Floor => x.floor(),
            UnaryOp::Ceil => x.ceil(),
            UnaryOp::Trunc => x.trunc(),
            UnaryOp::Round => x.round_even(),
            UnaryOp::Sign => {
                if x.is_nan() {
                    x
                } else {
                    T::truth(x > T::ZERO) - T::truth(x < T::ZERO)
                }
            }
            UnaryOp::IsNan => T::truth(x.is_nan()),
            UnaryOp::IsInf => T::truth(x.abs() == T::INFINITY),
            UnaryOp::IsFinite => T::truth(x.abs() < T::INFINITY),
            UnaryOp::Signbit => T::truth(T::ONE.copysign(x) < T::ZERO),
            UnaryOp::Erf => x.erf(),
            UnaryOp::Erfc => x.erfc(),
            UnaryOp::Cbrt => x.cbrt(),
            UnaryOp::Deg2Rad => x * (T::from_f64(std::f64::consts::PI) / T::from_f64(180.0)),
            UnaryOp::Rad2Deg => x * (T::from_f64(180.0) / T::from_f64(std::f64::consts::PI)),
            UnaryOp::Invert => T::truth(!x.is_true()),
            UnaryOp::Real | UnaryOp::Conj => x,
            UnaryOp::Imag => T::ZERO,
        }
    }

    /// The opcodes of complex numbers (their parts and conjugate), beside [`UnaryOp::ALL`]: the
    /// typing ([`crate::typed`]) gives them to complex operands only (of a real operand, its value
    /// or zero), so a float kernel never holds them.
    pub const COMPLEX: [UnaryOp; 3] = [UnaryOp::Real, UnaryOp::Imag, UnaryOp::Conj];

    /// The name in the IR's text form and in the text language.
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Sin => "sin",
            UnaryOp::Cos => "cos",
            UnaryOp::Tan => "tan",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Recip => "recip",
            UnaryOp::Not => "not",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Exp2 => "exp2",
            UnaryOp::Log2 => "log2",
            UnaryOp::Log10 => "log10",
            UnaryOp::Expm1 => "expm1",
            UnaryOp::Log1p => "log1p",
            UnaryOp::Arcsin => "arcsin",
            UnaryOp::Arccos => "arccos",
            UnaryOp::Arctan => "arctan",
            UnaryOp::Sinh => "sinh",
            UnaryOp::Cosh => "cosh",
            UnaryOp::Arcsinh => "arcsinh",
            UnaryOp::Arccosh => "arccosh",
            UnaryOp::Arctanh => "arctanh",
            UnaryOp::Floor => "floor",
            UnaryOp::Ceil => "ceil",
            UnaryOp::Trunc => "trunc",
            UnaryOp::Round => "round",
            UnaryOp::Sign => "sign",
            UnaryOp::IsNan => "isnan",
            UnaryOp::IsInf => "isinf",
            UnaryOp::IsFinite => "isfinite",
            UnaryOp::Signbit => "signbit",
            UnaryOp::Erf => "erf",
            UnaryOp::Erfc => "erfc",
            UnaryOp::Cbrt => "cbrt",
            UnaryOp::Deg2Rad => "deg2rad",
            UnaryOp::Rad2Deg => "rad2deg",
            UnaryOp::Invert => "invert",
            UnaryOp::Real => "real",
            UnaryOp::Imag => "imag",
            UnaryOp::Conj => "conj",
        }
    }

    /// Whether the result is a truth value (1 / 0), which NumPy would give as a bool.
    pub fn is_logical(self) -> bool {
        matches!(
            self,
            UnaryOp::Not | UnaryOp::IsNan | UnaryOp::IsInf | UnaryOp::IsFinite | UnaryOp::Signbit
        )
    }

    /// Whether this is a transcendental computed by libm (not exact IEEE algebra).
    pub fn is_transcendental(self) -> bool {
        use UnaryOp::*;
        matches!(
            self,
            Sin | Cos
                | Tan
                | Exp
                | Log
                | Tanh
                | Exp2
                | Log2
                | Log10
                | Expm1
                | Log1p
                | Arcsin
                | Arccos
                | Arctan
                | Sinh
                | Cosh
                | Arcsinh
                | Arccosh
                | Arctanh
                | Erf
                | Erfc
                | Cbrt
        )
    }

    /// The opcode named `name` in the IR's text form.
    pub fn from_name(name: &str) -> Option<UnaryOp> {
        UnaryOp::ALL
            .into_iter()
            .chain([UnaryOp::Invert])
            .chain(UnaryOp::COMPLEX)
            .find(|op| op.name() == name)
    }
}

impl BinaryOp {
    /// Every binary opcode, in declaration order.
    pub const ALL: [BinaryOp; 26] = [
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Min,
        BinaryOp::Max,
        BinaryOp::Pow,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Arctan2,
        BinaryOp::Hypot,
        BinaryOp::Copysign,
        BinaryOp::Fmax,
        BinaryOp::Fmin,
        BinaryOp::Fmod,
        BinaryOp::Rem,
        BinaryOp::FloorDiv,
        BinaryOp::Nextafter,
        BinaryOp::Logaddexp,
        BinaryOp::Logaddexp2,
    ];

    /// The scalar semantics of this opcode.
    #[inline]
    pub fn eval<T: Real>(self, a: T, b: T) -> T {
        match self {
            BinaryOp::Add => a + b,
            BinaryOp::Sub => a - b,
            BinaryOp::Mul => a * b,
            BinaryOp::Div => a / b,
            BinaryOp::Min => a.minimum(b),
            BinaryOp::Max => a.maximum(b),
            BinaryOp::Pow => a.pow(b),
            BinaryOp::Lt => T::truth(a < b),
            BinaryOp::Le => T::truth(a <= b),
            BinaryOp::Gt => T::truth(a > b),
            BinaryOp::Ge => T::truth(a >= b),
            BinaryOp::Eq => T::truth(a == b),
            BinaryOp::Ne => T::truth(a != b),
            BinaryOp::And => T::truth(a.is_true() && b.is_true()),
            BinaryOp::Or => T::truth(a.is_true() || b.is_true()),
            BinaryOp::Arctan2 => a.atan2(b),
            BinaryOp::Hypot => a.hypot(b),
            BinaryOp::Copysign => a.copysign(b),
            BinaryOp::Fmax => {
                if a >= b || b.is_nan() {
                    a
                } else {
                    b
                }
            }
            BinaryOp::Fmin => {
                if a <= b || b.is_nan() {
                    a
                } else {
                    b
                }
            }
            BinaryOp::Fmod => a.fmod(b),
            BinaryOp::Rem => a.remainder(b),
            BinaryOp::FloorDiv => a.floor_divide(b),
            BinaryOp::Nextafter => a.nextafter(b),
            BinaryOp::Logaddexp => {
                if a == b {
                    return a + T::from_f64(std::f64::consts::LN_2);
                }
                let d = a - b;
                if d > T::ZERO {
                    a + (-d).exp().log1p()
                } else if d <= T::ZERO {
                    b + d.exp().log1p()
                } else {
                    d
                }
            }
            BinaryOp::Logaddexp2 => {
                if a == b {
                    return a + T::ONE;
                }
                let d = a - b;
                let log2e = T::from_f64(std::f64::consts::LOG2_E);
                if d > T::ZERO {
                    a + log2e * (-d).exp2().log1p()
                } else if d <= T::ZERO {
                    b + log2e * d.exp2().log1p()
                } else {
                    d
                }
            }
            BinaryOp::BitAnd => T::truth(a.is_true() && b.is_true()),
            BinaryOp::BitOr => T::truth(a.is_true() || b.is_true()),
            BinaryOp::BitXor => T::truth(a.is_true() != b.is_true()),
            BinaryOp::Shl | BinaryOp::Shr => T::from_f64(f64::NAN),
            BinaryOp::Complex => a,
            BinaryOp::Contains => T::ZERO,
        }
    }

    /// The opcodes of integer and bool operands only (bitwise and shifts), beside [`BinaryOp::ALL`]:
    /// the JIT compiles none of them, and the typing ([`crate::typed`]) refuses them on floats.
    pub const INTEGER: [BinaryOp; 5] = [
        BinaryOp::BitAnd,
        BinaryOp::BitOr,
        BinaryOp::BitXor,
        BinaryOp::Shl,
        BinaryOp::Shr,
    ];

    /// The name in the IR's text form.
    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::Min => "min",
            BinaryOp::Max => "max",
            BinaryOp::Pow => "pow",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Arctan2 => "arctan2",
            BinaryOp::Hypot => "hypot",
            BinaryOp::Copysign => "copysign",
            BinaryOp::Fmax => "fmax",
            BinaryOp::Fmin => "fmin",
            BinaryOp::Fmod => "fmod",
            BinaryOp::Rem => "rem",
            BinaryOp::FloorDiv => "floor_divide",
            BinaryOp::Nextafter => "nextafter",
            BinaryOp::Logaddexp => "logaddexp",
            BinaryOp::Logaddexp2 => "logaddexp2",
            BinaryOp::BitAnd => "bitwise_and",
            BinaryOp::BitOr => "bitwise_or",
            BinaryOp::BitXor => "bitwise_xor",
            BinaryOp::Shl => "left_shift",
            BinaryOp::Shr => "right_shift",
            BinaryOp::Complex => "complex",
            BinaryOp::Contains => "contains",
        }
    }

    /// Whether the result is a truth value (1 / 0), which NumPy would give as a bool.
    pub fn is_logical(self) -> bool {
        matches!(
            self,
            BinaryOp::Lt
                | BinaryOp::Le
                | BinaryOp::Gt
                | BinaryOp::Ge
                | BinaryOp::Eq
                | BinaryOp::Ne
                | BinaryOp::And
                | BinaryOp::Or
                | BinaryOp::Contains
        )
    }

    /// Whether this is an operator of the text language (`+ - * / // ** %`, comparisons, `& |`) rather
    /// than a function (`minimum`, `arctan2`, ...): NumPy applies operators on Python scalars in
    /// Python (weak results) and functions as ufuncs (a strong float64).
    pub fn is_operator(self) -> bool {
        use BinaryOp::*;
        matches!(
            self,
            Add | Sub
                | Mul
                | Div
                | Pow
                | Rem
                | FloorDiv
                | Lt
                | Le
                | Gt
                | Ge
                | Eq
                | Ne
                | And
                | Or
                | BitAnd
                | BitOr
                | BitXor
                | Shl
                | Shr
        )
    }

    /// Whether this is computed by libm (not exact IEEE algebra): `pow`, `atan2`, `hypot`,
    /// `logaddexp`, `logaddexp2`.
    pub fn is_transcendental(self) -> bool {
        matches!(
            self,
            BinaryOp::Pow | BinaryOp::Arctan2 | BinaryOp::Hypot | BinaryOp::Logaddexp | BinaryOp::Logaddexp2
        )
    }

    /// The opcode named `name` in the IR's text form.
    pub fn from_name(name: &str) -> Option<BinaryOp> {
        BinaryOp::ALL
            .into_iter()
            .chain(BinaryOp::INTEGER)
            .chain([BinaryOp::Complex, BinaryOp::Contains])
            .find(|op| op.name() == name)
    }
}

impl fmt::Display for UnaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl fmt::Display for BinaryOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
