//! One value of any element type ([`Scalar`]), its conversions (NumPy's `astype`) and what every
//! opcode gives on values of one type: [`crate::int`]'s integer semantics, [`crate::Real`]'s float
//! semantics, [`crate::complex`]'s complex ones, NumPy's bool arithmetic. The interpreter
//! ([`crate::interp`]) evaluates every kernel with these.

use crate::complex;
use crate::dtype::Real;
use crate::int::Int;
use crate::op::{BinaryOp, UnaryOp};
use crate::promote::ElemType;
use num_complex::{Complex32, Complex64};

/// One value of a typed kernel.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Scalar {
    /// A bool.
    Bool(bool),
    /// An int32.
    I32(i32),
    /// An int64.
    I64(i64),
    /// A float32.
    F32(f32),
    /// A float64.
    F64(f64),
    /// A complex64.
    C64(Complex32),
    /// A complex128.
    C128(Complex64),
}

impl Scalar {
    /// The value's type.
    pub fn ty(self) -> ElemType {
        match self {
            Scalar::Bool(_) => ElemType::Bool,
            Scalar::I32(_) => ElemType::I32,
            Scalar::I64(_) => ElemType::I64,
            Scalar::F32(_) => ElemType::F32,
            Scalar::F64(_) => ElemType::F64,
            Scalar::C64(_) => ElemType::C64,
            Scalar::C128(_) => ElemType::C128,
        }
    }

    /// Whether the value reads as true: nonzero, NaN included.
    pub fn truth(self) -> bool {
        match self {
            Scalar::Bool(b) => b,
            Scalar::I32(v) => v != 0,
            Scalar::I64(v) => v != 0,
            Scalar::F32(v) => v != 0.0,
            Scalar::F64(v) => v != 0.0,
            Scalar::C64(z) => complex::truth(z),
            Scalar::C128(z) => complex::truth(z),
        }
    }

    /// The value converted to `t` as NumPy's `astype`: integers wrap to a narrower integer, floats
    /// truncate toward zero into an integer (NaN, ±inf and values out of range give the type's MIN,
    /// as x86), integers round to the nearest float, anything is true where nonzero; a complex number
    /// converts to a real type by its real part (NumPy's `ComplexWarning` case), a real number to a
    /// complex type with a zero imaginary part.
    pub fn cast(self, t: ElemType) -> Scalar {
        use Scalar::*;
        if t != ElemType::Bool {
            match self {
                C64(z) if !t.is_complex() => return F32(z.re).cast(t),
                C128(z) if !t.is_complex() => return F64(z.re).cast(t),
                _ => {}
            }
        }
        match t {
            ElemType::Bool => Bool(self.truth()),
            ElemType::I32 => I32(match self {
                Bool(b) => b as i32,
                I32(v) => v,
                I64(v) => v as i32,
                F32(v) => <i32 as Int>::from_f64(v as f64),
                F64(v) => <i32 as Int>::from_f64(v),
                C64(_) | C128(_) => unreachable!("a complex number casts by its real part"),
            }),
            ElemType::I64 => I64(match self {
                Bool(b) => b as i64,
                I32(v) => v as i64,
                I64(v) => v,
                F32(v) => <i64 as Int>::from_f64(v as f64),
                F64(v) => <i64 as Int>::from_f64(v),
                C64(_) | C128(_) => unreachable!("a complex number casts by its real part"),
            }),
            ElemType::F32 => F32(match self {
                Bool(b) => b as u8 as f32,
                I32(v) => v as f32,
                I64(v) => v as f32,
                F32(v) => v,
                F64(v) => v as f32,
                C64(_) | C128(_) => unreachable!("a complex number casts by its real part"),
            }),
            ElemType::F64 => F64(match self {
                Bool(b) => b as u8 as f64,
                I32(v) => v as f64,
                I64(v) => v as f64,
                F32(v) => v as f64,
                F64(v) => v,
                C64(_) | C128(_) => unreachable!("a complex number casts by its real part"),
            }),
            ElemType::C64 => C64(match self {
                C64(z) => z,
                C128(z) => Complex32::new(z.re as f32, z.im as f32),
                real => match real.cast(ElemType::F32) {
                    F32(v) => Complex32::new(v, 0.0),
                    _ => unreachable!("cast to float32"),
                },
            }),
            ElemType::C128 => C128(match self {
                C64(z) => Complex64::new(z.re as f64, z.im as f64),
                C128(z) => z,
                real => match real.cast(ElemType::F64) {
                    F64(v) => Complex64::new(v, 0.0),
                    _ => unreachable!("cast to float64"),
                },
            }),
            ElemType::Bytes(_) => unreachable!("the typing casts nothing to a byte string"),
        }
    }
}

/// The float types of complex values' parts, and how a complex value of them is a [`Scalar`].
pub(crate) trait Parts: Real + Into<Scalar> {
    /// The scalar of a complex value of these parts.
    fn wrap(z: num_complex::Complex<Self>) -> Scalar;
    /// The complex value a scalar of this complex type holds.
    fn unwrap(s: Scalar) -> num_complex::Complex<Self>;
}

impl Parts for f32 {
    fn wrap(z: Complex32) -> Scalar {
        Scalar::C64(z)
    }
    fn unwrap(s: Scalar) -> Complex32 {
        match s {
            Scalar::C64(z) => z,
            _ => unreachable!("values of the body's type"),
        }
    }
}

impl Parts for f64 {
    fn wrap(z: Complex64) -> Scalar {
        Scalar::C128(z)
    }
    fn unwrap(s: Scalar) -> Complex64 {
        match s {
            Scalar::C128(z) => z,
            _ => unreachable!("values of the body's type"),
        }
    }
}

/// A complex opcode's result as a scalar.
fn complex_out<T: Parts>(o: complex::Out<T>) -> Scalar {
    match o {
        complex::Out::Complex(z) => T::wrap(z),
        complex::Out::Real(v) => v.into(),
        complex::Out::Truth(b) => Scalar::Bool(b),
    }
}

fn int_unary<T: Int>(op: UnaryOp, x: T) -> T {
    match op {
        UnaryOp::Neg => x.neg(),
        UnaryOp::Abs => x.abs(),
        UnaryOp::Sign => x.sign(),
        UnaryOp::Invert => x.not(),
        UnaryOp::Floor | UnaryOp::Ceil | UnaryOp::Trunc | UnaryOp::Round => x,
        _ => unreachable!("the typing casts integer operands of {op} to float64"),
    }
}

fn int_binary<T: Int>(op: BinaryOp, a: T, b: T) -> std::result::Result<T, bool> {
    Ok(match op {
        BinaryOp::Add => a.add(b),
        BinaryOp::Sub => a.sub(b),
        BinaryOp::Mul => a.mul(b),
        BinaryOp::FloorDiv => a.floor_div(b),
        BinaryOp::Rem => a.rem(b),
        // C's `%` (the dividend's sign), 0 for a zero divisor as NumPy's integer fmod
        BinaryOp::Fmod => a.rem(b).sub(fmod_fix(a, b)),
        BinaryOp::Pow => a.pow(b),
        BinaryOp::Min | BinaryOp::Fmin => a.min(b),
        BinaryOp::Max | BinaryOp::Fmax => a.max(b),
        BinaryOp::BitAnd => a.and(b),
        BinaryOp::BitOr => a.or(b),
        BinaryOp::BitXor => a.xor(b),
        BinaryOp::Shl => a.shl(b),
        BinaryOp::Shr => a.shr(b),
        BinaryOp::Lt => return Err(a < b),
        BinaryOp::Le => return Err(a <= b),
        BinaryOp::Gt => return Err(a > b),
        BinaryOp::Ge => return Err(a >= b),
        BinaryOp::Eq => return Err(a == b),
        BinaryOp::Ne => return Err(a != b),
        _ => unreachable!("the typing gives {op} float operands"),
    })
}

/// What turns Python's remainder (the divisor's sign) into C's (the dividend's): `b` where the
/// remainder is nonzero and its sign differs from `a`'s, else 0 (also for a zero divisor).
fn fmod_fix<T: Int>(a: T, b: T) -> T {
    let r = a.rem(b);
    if r != T::ZERO && ((r < T::ZERO) != (a < T::ZERO)) {
        b
    } else {
        T::ZERO
    }
}

/// One unary opcode on a value of its operand type.
pub(crate) fn unary(op: UnaryOp, x: Scalar) -> Scalar {
    use Scalar::*;
    match x {
        F64(v) if op.is_logical() => Bool(op.eval(v) != 0.0),
        F32(v) if op.is_logical() => Bool(op.eval(v) != 0.0),
        F64(v) => F64(op.eval(v)),
        F32(v) => F32(op.eval(v)),
        I32(_) | I64(_) if matches!(op, UnaryOp::IsNan | UnaryOp::IsInf) => Bool(false),
        I32(_) | I64(_) if op == UnaryOp::IsFinite => Bool(true),
        I32(v) => I32(int_unary(op, v)),
        I64(v) => I64(int_unary(op, v)),
        C64(z) => complex_out(complex::unary(op, z)),
        C128(z) => complex_out(complex::unary(op, z)),
        Bool(b) => Bool(match op {
            UnaryOp::Not | UnaryOp::Invert => !b,
            UnaryOp::Abs => b,
            UnaryOp::IsNan | UnaryOp::IsInf => false,
            UnaryOp::IsFinite => true,
            _ => unreachable!("the typing casts bool operands of {op} to float64"),
        }),
    }
}

/// One binary opcode on two values of its operands' type.
pub(crate) fn binary(op: BinaryOp, a: Scalar, b: Scalar) -> Scalar {
    use Scalar::*;
    match (a, b) {
        (F32(x), F32(y)) if op == BinaryOp::Complex => C64(Complex32::new(x, y)),
        (F64(x), F64(y)) if op == BinaryOp::Complex => C128(Complex64::new(x, y)),
        (F64(x), F64(y)) if op.is_logical() => Bool(op.eval(x, y) != 0.0),
        (F32(x), F32(y)) if op.is_logical() => Bool(op.eval(x, y) != 0.0),
        (F64(x), F64(y)) => F64(op.eval(x, y)),
        (F32(x), F32(y)) => F32(op.eval(x, y)),
        (I32(x), I32(y)) => int_binary(op, x, y).map_or_else(Bool, I32),
        (I64(x), I64(y)) => int_binary(op, x, y).map_or_else(Bool, I64),
        (C64(x), C64(y)) => complex_out(complex::binary(op, x, y)),
        (C128(x), C128(y)) => complex_out(complex::binary(op, x, y)),
        (Bool(x), Bool(y)) => Bool(match op {
            BinaryOp::Add | BinaryOp::Max | BinaryOp::Fmax | BinaryOp::Or | BinaryOp::BitOr => x || y,
            BinaryOp::Mul | BinaryOp::Min | BinaryOp::Fmin | BinaryOp::And | BinaryOp::BitAnd => x && y,
            BinaryOp::BitXor | BinaryOp::Ne => x != y,
            BinaryOp::Eq => x == y,
            BinaryOp::Lt => !x & y,
            BinaryOp::Le => x <= y,
            BinaryOp::Gt => x & !y,
            BinaryOp::Ge => x >= y,
            _ => unreachable!("the typing refuses {op} of two bools"),
        }),
        _ => unreachable!("the typing gives {op} operands of one type"),
    }
}

impl From<f64> for Scalar {
    fn from(v: f64) -> Scalar {
        Scalar::F64(v)
    }
}

impl From<f32> for Scalar {
    fn from(v: f32) -> Scalar {
        Scalar::F32(v)
    }
}
