//! Kernel results: a shape and a typed, row-major buffer.

use crate::promote::ElemType;
use num_complex::{Complex32, Complex64};

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
    /// Byte strings (NumPy's `S<width>`), each `width` bytes (at least 1), NUL-padded, in order.
    Bytes {
        /// The bytes of each string.
        width: usize,
        /// The strings, one after another.
        data: Vec<u8>,
    },
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
            Values::Bytes { width, data } => data.len() / (*width).max(1),
        }
    }

    /// Whether there are no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The element type.
    pub fn output_type(&self) -> ElemType {
        match self {
            Values::F64(_) => ElemType::F64,
            Values::F32(_) => ElemType::F32,
            Values::I32(_) => ElemType::I32,
            Values::I64(_) => ElemType::I64,
            Values::Bool(_) => ElemType::Bool,
            Values::C64(_) => ElemType::C64,
            Values::C128(_) => ElemType::C128,
            Values::Bytes { width, .. } => ElemType::Bytes(u32::try_from(*width).unwrap_or(u32::MAX)),
        }
    }

    /// Every element widened to f64 (bools as 1 / 0; a complex element as two, its real part and
    /// then its imaginary part; a byte string as its bytes), for comparisons and printing.
    pub fn to_f64(&self) -> Vec<f64> {
        match self {
            Values::F64(v) => v.clone(),
            Values::F32(v) => v.iter().map(|&x| x as f64).collect(),
            Values::I32(v) => v.iter().map(|&x| x as f64).collect(),
            Values::I64(v) => v.iter().map(|&x| x as f64).collect(),
            Values::Bool(v) => v.iter().map(|&x| if x { 1.0 } else { 0.0 }).collect(),
            Values::C64(v) => v.iter().flat_map(|z| [z.re as f64, z.im as f64]).collect(),
            Values::C128(v) => v.iter().flat_map(|z| [z.re, z.im]).collect(),
            Values::Bytes { data, .. } => data.iter().map(|&b| b as f64).collect(),
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
