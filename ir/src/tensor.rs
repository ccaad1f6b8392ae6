//! Kernel results: a shape and a typed, row-major buffer.

use crate::dtype::DType;
use num_complex::{Complex32, Complex64};
use std::fmt;

/// The elements of a result, in the type NumPy would give it.
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    /// float64 values.
    F64(Vec<f64>),
    /// float32 values.
    F32(Vec<f32>),
    /// int32 values.
    I32(Vec<i32>),
    /// int64 values.
    I64(Vec<i64>),
    /// bool values.
    Bool(Vec<bool>),
    /// complex64 values.
    C64(Vec<Complex32>),
    /// complex128 values.
    C128(Vec<Complex64>),
}

impl Values {
    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::Bool(v) => v.len(),
            Values::C64(v) => v.len(),
            Values::C128(v) => v.len(),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    pub fn output_type(&self) -> OutputType {
        match self {
            Values::F64(_) => OutputType::Float(DType::F64),
            Values::F32(_) => OutputType::Float(DType::F32),
            Values::I32(_) => OutputType::Int32,
            Values::I64(_) => OutputType::Int64,
            Values::Bool(_) => OutputType::Bool,
            Values::C64(_) => OutputType::Complex(DType::F32),
            Values::C128(_) => OutputType::Complex(DType::F64),
        }
    }

    /// Every element widened to f64 (bools as 1 / 0; a complex element as two, its real part and
    /// then its imaginary part), for comparisons and printing.
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Values::F64(v) => v.clone(),
            Values::F32(v) => v.iter().map(|&x| x as f64).collect(),
            Values::I32(v) => v.iter().map(|&x| x as f64).collect(),
            Values::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Values::Bool(v) => v.iter().map(|&x| if x { 1.0 } else { 0.0 }).collect(),
            Values::C64(v) => v.iter().flat_map(|z| [z.re as f64, z.im as f64]).collect(),
            Values::C128(v) => v.iter().flat_map(|z| [z.re, z.im]).collect(),
        }
    }
}

/// A kernel's result: its shape and its row-major elements.
#[derive(Debug, Clone, PartialEq)]
pub struct Tensor {
    /// The result's shape.
    pub shape: Vec<usize>,
    /// The elements, in C order.
    pub values: Values,
}

/// The element type of a kernel's result, as NumPy would type it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OutputType {
    /// A float array in the kernel's dtype.
    Float(DType),
    /// A bool array: a comparison or logical result, any, all, or min/max of truth values.
    Bool,
    /// An int64 array: argmin, argmax, or a sum or product of truth values.
    Int64,
    /// An int32 array (typed kernels only: [`crate::typed`]).
    Int32,
    /// A complex array whose parts are of this dtype (typed kernels only).
    Complex(DType),
}

impl OutputType {
    /// The element type.
    pub fn elem(self) -> crate::promote::ElemType {
        use crate::promote::ElemType;
        match self {
            OutputType::Float(d) => ElemType::of_float(d),
            OutputType::Bool => ElemType::Bool,
            OutputType::Int64 => ElemType::I64,
            OutputType::Int32 => ElemType::I32,
            OutputType::Complex(DType::F32) => ElemType::C64,
            OutputType::Complex(DType::F64) => ElemType::C128,
        }
    }

    /// The output type of an element type.
    pub fn of(t: crate::promote::ElemType) -> OutputType {
        use crate::promote::ElemType;
        match t {
            ElemType::Bool => OutputType::Bool,
            ElemType::I32 => OutputType::Int32,
            ElemType::I64 => OutputType::Int64,
            ElemType::F32 => OutputType::Float(DType::F32),
            ElemType::F64 => OutputType::Float(DType::F64),
            ElemType::C64 => OutputType::Complex(DType::F32),
            ElemType::C128 => OutputType::Complex(DType::F64),
        }
    }
}

impl fmt::Display for OutputType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OutputType::Float(d) => write!(f, "{d}"),
            OutputType::Bool => f.write_str("bool"),
            OutputType::Int64 => f.write_str("i64"),
            OutputType::Int32 => f.write_str("i32"),
            OutputType::Complex(d) => {
                f.write_str(crate::promote::ElemType::of_float(*d).complex().short_name())
            }
        }
    }
}
