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
    /// NumPy's `minimum`: NaN if either operand is NaN; `-0.0` is below `+0.0`.
    Min,
    /// NumPy's `maximum`: NaN if either operand is NaN; `+0.0` is above `-0.0`.
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
}

impl UnaryOp {
    /// Every unary opcode, in declaration order.
    pub const ALL: [UnaryOp; 10] = [
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
        }
    }

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
        }
    }

    /// Whether the result is a truth value (1 / 0), which NumPy would give as a bool.
    pub fn is_logical(self) -> bool {
        matches!(self, UnaryOp::Not)
    }

    /// Whether this is a transcendental computed by libm (not exact IEEE algebra).
    pub fn is_transcendental(self) -> bool {
        matches!(
            self,
            UnaryOp::Sin | UnaryOp::Cos | UnaryOp::Tan | UnaryOp::Exp | UnaryOp::Log
        )
    }
}

impl BinaryOp {
    /// Every binary opcode, in declaration order.
    pub const ALL: [BinaryOp; 15] = [
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
        }
    }

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
        )
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
