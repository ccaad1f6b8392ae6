//! NumPy 2's type promotion (NEP 50) for kiln's operators over bool, int32, int64, float32 and
//! float64: the result type of each binary operator and of `where`, for arrays and for Python-style
//! literals, and the errors NumPy raises instead of a type.
//!
//! This is the first step of integer and bool types (issue 13): the rule table every layer will ask.
//! `tests/data/numpy_promotion.csv` (written by `scripts/numpy_promotion.py` from NumPy itself) holds
//! NumPy's answer for every pair; `ir/tests/promotion.rs` checks this module against all of it.
//!
//! - **Arrays** promote as NumPy's `result_type`: bool < int32 < int64 within a kind, any integer with
//!   a float gives float64 (int32 + float32 is float64, as NumPy 2), bool with anything gives the other.
//! - **Literals are weak**: an integer literal takes the array's type if that is an integer or float
//!   type (and must fit an integer type: `int32 + 3000000000` is an error, as NumPy 2's
//!   `OverflowError`), and gives int64 beside bool; a float literal takes the array's type if that is a
//!   float, and gives float64 beside bool or an integer.
//! - **Per operator**: `/` of integers or bools is float64 and accepts any integer literal; `<` (every
//!   comparison) is bool and accepts any literal (NumPy 2 compares out-of-range integers exactly); `&` (`|`, `^`, shifts) refuses floats;
//!   `-` refuses two bools; `**` refuses a negative integer literal exponent of an integer result;
//!   `//`, `%` and `**` of two bools are int8 in NumPy, a type kiln does not compute: an error that
//!   says so.
//!
//! Where kiln differs on purpose: `where(c, int32_array, 3000000000)` is the literal-range error here,
//! as for every operator, where NumPy silently wraps the literal to int32.

use std::fmt;

/// An element type of kiln's arrays, bool and the integers included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElemType {
    /// bool (`|b1`), stored as one byte.
    Bool,
    /// int32 (`<i4`).
    I32,
    /// int64 (`<i8`).
    I64,
    /// float32 (`<f4`).
    F32,
    /// float64 (`<f8`).
    F64,
    /// complex64 (`<c8`): two float32, the real part first.
    C64,
    /// complex128 (`<c16`): two float64, the real part first.
    C128,
    /// A byte string of this many bytes (NumPy's `S<width>`, numexpr's strings: [`crate::bytes`]),
    /// padded with NULs. Only compared and searched (`contains`), never computed with.
    Bytes(u32),
}

/// NumPy's kinds, ordered as promotion climbs them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Bool,
    Int,
    Float,
    Complex,
    Bytes,
}

impl ElemType {
    /// Every element type, in promotion order.
    pub const ALL: [ElemType; 7] = [
        ElemType::Bool,
        ElemType::I32,
        ElemType::I64,
        ElemType::F32,
        ElemType::F64,
        ElemType::C64,
        ElemType::C128,
    ];

    /// NumPy's dtype name.
    pub fn name(self) -> &'static str {
        match self {
            ElemType::Bool => "bool",
            ElemType::I32 => "int32",
            ElemType::I64 => "int64",
            ElemType::F32 => "float32",
            ElemType::F64 => "float64",
            ElemType::C64 => "complex64",
            ElemType::C128 => "complex128",
            ElemType::Bytes(_) => "bytes",
        }
    }

    /// The type NumPy names `name`, if kiln has it.
    pub fn from_name(name: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.name() == name)
    }

    fn kind(self) -> Kind {
        match self {
            ElemType::Bool => Kind::Bool,
            ElemType::I32 | ElemType::I64 => Kind::Int,
            ElemType::F32 | ElemType::F64 => Kind::Float,
            ElemType::C64 | ElemType::C128 => Kind::Complex,
            ElemType::Bytes(_) => Kind::Bytes,
        }
    }

    /// Whether this is a byte string (NumPy's `S` dtype).
    pub fn is_bytes(self) -> bool {
        self.kind() == Kind::Bytes
    }

    /// numexpr's one-letter code of the type in its opcode names (`b i l f d c s`).
    pub fn numexpr_code(self) -> char {
        match self {
            ElemType::Bool => 'b',
            ElemType::I32 => 'i',
            ElemType::I64 => 'l',
            ElemType::F32 => 'f',
            ElemType::F64 => 'd',
            ElemType::C64 | ElemType::C128 => 'c',
            ElemType::Bytes(_) => 's',
        }
    }

    /// Whether this is int32 or int64.
    pub fn is_integer(self) -> bool {
        self.kind() == Kind::Int
    }

    /// Whether this is float32 or float64.
    pub fn is_float(self) -> bool {
        self.kind() == Kind::Float
    }

    /// Whether this is complex64 or complex128.
    pub fn is_complex(self) -> bool {
        self.kind() == Kind::Complex
    }

    /// Whether this is a float or a complex type (the inexact types, NumPy's `np.inexact`).
    pub fn is_inexact(self) -> bool {
        self.is_float() || self.is_complex()
    }

    /// The float type of a complex type's parts (complex64's float32); None for a real type.
    pub fn real_part(self) -> Option<ElemType> {
        match self {
            ElemType::C64 => Some(ElemType::F32),
            ElemType::C128 => Some(ElemType::F64),
            _ => None,
        }
    }

    /// The complex type whose parts are of float type `self` (float32's complex64); integers and
    /// bools are complex128's, a complex type itself.
    pub fn complex(self) -> ElemType {
        match self {
            ElemType::F32 | ElemType::C64 => ElemType::C64,
            _ => ElemType::C128,
        }
    }

    /// The size of one element in bytes.
    pub const fn size(self) -> usize {
        match self {
            ElemType::Bool => 1,
            ElemType::I32 | ElemType::F32 => 4,
            ElemType::I64 | ElemType::F64 | ElemType::C64 => 8,
            ElemType::C128 => 16,
            ElemType::Bytes(w) => w as usize,
        }
    }

    /// Whether a kernel computing in float type `dtype` reads an input of this type converted where
    /// it reads it ([`crate::InputDecl::stored`]): NumPy's promotions into a float type no narrower
    /// (bool into either float; int32, int64 and float32 into float64; int64 rounded to the
    /// nearest). Never for a `dtype` that is not a float type.
    pub fn converts_into(self, dtype: ElemType) -> bool {
        match dtype {
            ElemType::F64 => !matches!(
                self,
                ElemType::F64 | ElemType::C64 | ElemType::C128 | ElemType::Bytes(_)
            ),
            ElemType::F32 => self == ElemType::Bool,
            _ => false,
        }
    }

    /// The float type a kernel computing in `self` and `other` computes in, NumPy's promotion of two
    /// float arrays: float32 with float64 gives float64.
    pub fn promote_float(self, other: ElemType) -> ElemType {
        debug_assert!(
            self.is_float() && other.is_float(),
            "{self} and {other} are float types"
        );
        self.max(other)
    }

    /// kiln's short name, as the IR's text form prints it (`bool i32 i64 f32 f64`).
    pub fn short_name(self) -> &'static str {
        match self {
            ElemType::Bool => "bool",
            ElemType::I32 => "i32",
            ElemType::I64 => "i64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
            ElemType::C64 => "c64",
            ElemType::C128 => "c128",
            ElemType::Bytes(_) => "bytes",
        }
    }

    /// The type a short or NumPy name (`i32`, `int32`, ...) names.
    pub fn from_any_name(name: &str) -> Option<ElemType> {
        if let Some(w) = name.strip_prefix('S').and_then(|w| w.parse().ok()) {
            return Some(ElemType::Bytes(w));
        }
        ElemType::ALL
            .into_iter()
            .find(|t| t.name() == name || t.short_name() == name)
    }

    /// The values an integer type holds.
    fn int_range(self) -> Option<(i128, i128)> {
        match self {
            ElemType::I32 => Some((i32::MIN.into(), i32::MAX.into())),
            ElemType::I64 => Some((i64::MIN.into(), i64::MAX.into())),
            _ => None,
        }
    }
}

impl fmt::Display for ElemType {
    /// NumPy's name (`int32`); a byte string's dtype string (`S10`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ElemType::Bytes(w) => write!(f, "S{w}"),
            t => f.write_str(t.name()),
        }
    }
}

impl ElemType {
    /// The type as the IR's text form prints it: [`ElemType::short_name`] (`i32`), a byte
    /// string's dtype string (`S10`).
    pub fn short(self) -> impl fmt::Display {
        struct Short(ElemType);
        impl fmt::Display for Short {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self.0 {
                    ElemType::Bytes(w) => write!(f, "S{w}"),
                    t => f.write_str(t.short_name()),
                }
            }
        }
        Short(self)
    }
}

/// One operand of an operator: an array of a type, or a Python-style literal (weak).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Operand {
    /// An array (or 0-d array) of this type: strong.
    Array(ElemType),
    /// A Python int literal: weak, it takes the other operand's type.
    Int(i128),
    /// A Python float literal: weak, it takes a float operand's type.
    Float(f64),
    /// A Python complex literal (`2j`): weak, it takes a complex operand's type, and the complex
    /// type of a float operand's.
    Complex,
}

/// The operators whose typing differs; `Arith` is `+` and `*` (and `min`/`max`-like binary functions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PromoteOp {
    /// `+`, `*` and the binary functions typed alike (`minimum`, `maximum`, `fmax`, `fmin`, `fmod`, ...).
    Arith,
    /// `-` (refused for two bools).
    Sub,
    /// `/`, always a float.
    TrueDiv,
    /// `//`.
    FloorDiv,
    /// `%`.
    Rem,
    /// `**` (refused for an integer to a negative integer literal).
    Pow,
    /// The comparisons: bool results, operands promoted as `+` does.
    Compare,
    /// `& | ^` and the shifts: bitwise on integers, logical on bools.
    Bitwise,
    /// `where(c, a, b)`'s two branches, promoted as `+` does.
    Where,
}

/// Why an operator has no result type (NumPy raises the exception named in each variant's doc).
#[derive(Debug, Clone, PartialEq)]
pub enum PromoteError {
    /// An integer literal outside the range of the integer type it takes (`OverflowError`).
    LiteralOutOfRange {
        /// The literal.
        value: i128,
        /// The type it would take.
        ty: ElemType,
    },
    /// An integer raised to a negative integer literal (`ValueError`).
    NegativeIntPower {
        /// The exponent.
        exponent: i128,
    },
    /// `-` of two bools (`TypeError`: NumPy asks for `^` or `logical_xor`).
    BoolSubtract,
    /// A bitwise operator with a float operand (`TypeError`).
    BitwiseFloat {
        /// The float operand's type.
        ty: ElemType,
    },
    /// `//`, `%`, `**` or a shift of two bools, which NumPy types int8, a type kiln does not
    /// compute.
    BoolToInt8 {
        /// The operator.
        op: PromoteOp,
    },
    /// An operator or function that complex numbers do not have (`<`, `//`, `%`, the bitwise
    /// operators, `floor`, `arctan2`, ...: NumPy's `TypeError`, numexpr's `NotImplementedError`).
    NotComplex {
        /// The operator or function.
        what: String,
        /// The complex type.
        ty: ElemType,
    },
    /// An operation byte strings do not have, or a string compared with a number: numexpr's
    /// `NotImplementedError`, with numexpr's name of the missing opcode
    /// ([`crate::bytes::numexpr_signature`]: `add_sss`, `eq_bsi`).
    NotBytes {
        /// numexpr's opcode name.
        signature: String,
    },
    /// Arithmetic, a function or `where` of a byte string beside a number: numexpr's `TypeError`.
    BytesWithNumber,
}

impl fmt::Display for PromoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PromoteError::LiteralOutOfRange { value, ty } => {
                write!(f, "the integer literal {value} is out of range for {ty}")
            }
            PromoteError::NegativeIntPower { exponent } => write!(
                f,
                "integers to negative integer powers are not allowed (exponent {exponent}); \
                 write a float exponent, e.g. {exponent}.0"
            ),
            PromoteError::BoolSubtract => {
                f.write_str("`-` of two bools is not defined (as in NumPy): use `^` for exclusive or")
            }
            PromoteError::BitwiseFloat { ty } => {
                write!(f, "bitwise operators take bool or integer operands, not {ty}")
            }
            PromoteError::BoolToInt8 { op } => {
                let (what, verb) = match op {
                    PromoteOp::FloorDiv => ("`//`", "is"),
                    PromoteOp::Rem => ("`%`", "is"),
                    PromoteOp::Bitwise => ("shifts", "are"),
                    _ => ("`**`", "is"),
                };
                write!(
                    f,
                    "{what} of two bools {verb} int8 in NumPy, a type kiln does not compute: cast an \
                     operand to int32 or int64"
                )
            }
            PromoteError::NotComplex { what, ty } => {
                write!(f, "{what} is not defined for complex numbers ({ty})")
            }
            PromoteError::NotBytes { signature } => write!(
                f,
                "couldn't find matching opcode for '{signature}' (byte strings are only compared with \
                 byte strings and searched with contains())"
            ),
            PromoteError::BytesWithNumber => f.write_str("strings can only be operated with strings"),
        }
    }
}

impl std::error::Error for PromoteError {}

impl PromoteError {
    /// The exception NumPy raises where kiln refuses (`"int8"` where NumPy computes a result of a
    /// type kiln lacks).
    pub fn numpy_exception(&self) -> &'static str {
        match self {
            PromoteError::LiteralOutOfRange { .. } => "OverflowError",
            PromoteError::NegativeIntPower { .. } => "ValueError",
            PromoteError::BoolSubtract
            | PromoteError::BitwiseFloat { .. }
            | PromoteError::NotComplex { .. }
            | PromoteError::BytesWithNumber => "TypeError",
            PromoteError::NotBytes { .. } => "NotImplementedError",
            PromoteError::BoolToInt8 { .. } => "int8",
        }
    }
}

/// NumPy's `result_type` of two arrays.
pub fn result_type(a: ElemType, b: ElemType) -> ElemType {
    match (a.kind(), b.kind()) {
        (ka, kb) if ka == kb => a.max(b),
        (Kind::Bool, _) => b,
        (_, Kind::Bool) => a,
        // a complex with a real: the complex type of its parts' type with the real (complex64 with
        // float64 or an int32 is complex128)
        (Kind::Complex, _) => result_type(a.real_part().unwrap_or(ElemType::F64), b).complex(),
        (_, Kind::Complex) => result_type(a, b.real_part().unwrap_or(ElemType::F64)).complex(),
        // an integer with a float: float64 (NumPy 2: int32 + float32 is float64 too)
        _ => ElemType::F64,
    }
}

/// The type a weak literal takes beside an array of type `ty`; `check_range`: an integer literal must
/// fit the integer type it takes.
fn with_literal(ty: ElemType, lit: Operand, check_range: bool) -> Result<ElemType, PromoteError> {
    let out = match (lit, ty.kind()) {
        (Operand::Int(_), Kind::Bool) => ElemType::I64,
        (Operand::Int(_), _) => ty,
        (Operand::Float(_), Kind::Float | Kind::Complex) => ty,
        (Operand::Float(_), _) => ElemType::F64,
        (Operand::Complex, _) => ty.complex(),
        (Operand::Array(t), _) => return Ok(result_type(ty, t)),
    };
    if let (Operand::Int(value), Some((lo, hi)), true) = (lit, out.int_range(), check_range)
        && !(lo..=hi).contains(&value)
    {
        return Err(PromoteError::LiteralOutOfRange { value, ty: out });
    }
    Ok(out)
}

/// The common type of two operands before the operator's own rule.
fn promote(a: Operand, b: Operand, check_range: bool) -> Result<ElemType, PromoteError> {
    match (a, b) {
        (Operand::Array(x), Operand::Array(y)) => Ok(result_type(x, y)),
        (Operand::Array(t), lit) | (lit, Operand::Array(t)) => with_literal(t, lit, check_range),
        // two literals: Python's own arithmetic, an int64 or float64 value once it meets an array
        (Operand::Int(_), Operand::Int(_)) => Ok(ElemType::I64),
        (Operand::Complex, _) | (_, Operand::Complex) => Ok(ElemType::C128),
        _ => Ok(ElemType::F64),
    }
}

/// The common type of two operands without the operator's rule, an integer literal's range unchecked
/// (where a comparison compares its operands).
pub fn common(a: Operand, b: Operand) -> ElemType {
    promote(a, b, false).expect("unchecked promotion does not fail")
}

fn is_float_operand(o: Operand) -> Option<ElemType> {
    match o {
        Operand::Array(t) if t.is_float() => Some(t),
        Operand::Float(_) => Some(ElemType::F64),
        _ => None,
    }
}

/// The result type of `a op b` (`where(c, a, b)` for [`PromoteOp::Where`]), or NumPy's refusal.
pub fn binary(op: PromoteOp, a: Operand, b: Operand) -> Result<ElemType, PromoteError> {
    if op == PromoteOp::Bitwise
        && let Some(ty) = is_float_operand(a).or(is_float_operand(b))
    {
        return Err(PromoteError::BitwiseFloat { ty });
    }
    // comparisons compare out-of-range integers exactly, and `/` computes integers in float64, so
    // neither checks an integer literal's range
    let common = promote(a, b, !matches!(op, PromoteOp::Compare | PromoteOp::TrueDiv))?;
    if common.is_complex() {
        let what = match op {
            PromoteOp::Bitwise => Some("a bitwise operator"),
            PromoteOp::FloorDiv => Some("`//`"),
            PromoteOp::Rem => Some("`%`"),
            _ => None,
        };
        if let Some(what) = what {
            return Err(PromoteError::NotComplex {
                what: what.into(),
                ty: common,
            });
        }
    }
    match op {
        PromoteOp::Compare => Ok(ElemType::Bool),
        PromoteOp::TrueDiv if !common.is_inexact() => Ok(ElemType::F64),
        PromoteOp::Sub if common == ElemType::Bool => Err(PromoteError::BoolSubtract),
        PromoteOp::FloorDiv | PromoteOp::Rem | PromoteOp::Pow if common == ElemType::Bool => {
            Err(PromoteError::BoolToInt8 { op })
        }
        PromoteOp::Pow => match b {
            Operand::Int(e) if e < 0 && common.is_integer() => {
                Err(PromoteError::NegativeIntPower { exponent: e })
            }
            _ => Ok(common),
        },
        _ => Ok(common),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_examples() {
        use ElemType::*;
        use Operand::*;
        let arith = |a, b| binary(PromoteOp::Arith, a, b);
        assert_eq!(arith(Array(I32), Array(I64)), Ok(I64));
        assert_eq!(arith(Array(I32), Array(F32)), Ok(F64));
        assert_eq!(arith(Array(I64), Array(F32)), Ok(F64));
        assert_eq!(arith(Array(Bool), Array(I32)), Ok(I32));
        assert_eq!(arith(Array(I32), Int(2)), Ok(I32));
        assert_eq!(arith(Array(I32), Float(2.5)), Ok(F64));
        assert_eq!(arith(Array(F32), Float(2.5)), Ok(F32));
        assert_eq!(
            arith(Array(I32), Int(3_000_000_000)),
            Err(PromoteError::LiteralOutOfRange {
                value: 3_000_000_000,
                ty: I32
            })
        );
    }

    #[test]
    fn errors_say_what_to_do() {
        let e = binary(PromoteOp::Pow, Operand::Array(ElemType::I32), Operand::Int(-1)).unwrap_err();
        assert!(e.to_string().contains("-1.0"), "{e}");
        let e = binary(
            PromoteOp::Rem,
            Operand::Array(ElemType::Bool),
            Operand::Array(ElemType::Bool),
        )
        .unwrap_err();
        assert!(e.to_string().contains("int8"), "{e}");
    }
}
