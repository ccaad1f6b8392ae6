//! Arrays at kiln's boundary: inputs bound by name ([`ArrayArg`]) and results ([`Output`]).

use crate::error::{Error, Result};
use kiln_ir::{DType, Tensor, Values};
use ndarray::{ArrayD, ArrayRef, ArrayViewD, Dimension, IxDyn};

/// An input array of either float dtype, any dimension, any strides.
#[derive(Debug, Clone)]
pub enum ArrayArg<'a> {
    F64(ArrayViewD<'a, f64>),
    F32(ArrayViewD<'a, f32>),
}

impl ArrayArg<'_> {
    pub fn dtype(&self) -> DType {
        match self {
            ArrayArg::F64(_) => DType::F64,
            ArrayArg::F32(_) => DType::F32,
        }
    }

    pub fn shape(&self) -> &[usize] {
        match self {
            ArrayArg::F64(a) => a.shape(),
            ArrayArg::F32(a) => a.shape(),
        }
    }
}

/// The float element types kiln computes in: f64 and f32.
pub trait Float: kiln_ir::Real + kiln_jit::Elem + Convert + sealed::Sealed {
    /// Wraps a view as an [`ArrayArg`].
    fn arg(view: ArrayViewD<'_, Self>) -> ArrayArg<'_>;
    /// Takes a result as an array of this type: floats of this dtype as they are, bools and
    /// integers as 1 / 0 and exact integers (NumPy's `astype`).
    fn from_output(out: Output) -> Result<ArrayD<Self>>;
    /// Wraps a caller's output buffer.
    fn out_slice(s: &mut [Self]) -> crate::backend::OutSlice<'_>;
    /// The view of an argument of this dtype.
    #[doc(hidden)]
    fn view_of<'a>(arg: &ArrayArg<'a>) -> Option<ArrayViewD<'a, Self>>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

impl Float for f64 {
    fn out_slice(s: &mut [f64]) -> crate::backend::OutSlice<'_> {
        crate::backend::OutSlice::F64(s)
    }
    fn arg(view: ArrayViewD<'_, f64>) -> ArrayArg<'_> {
        ArrayArg::F64(view)
    }
    fn view_of<'a>(arg: &ArrayArg<'a>) -> Option<ArrayViewD<'a, f64>> {
        match arg {
            ArrayArg::F64(v) => Some(v.clone()),
            ArrayArg::F32(_) => None,
        }
    }
    fn from_output(out: Output) -> Result<ArrayD<f64>> {
        Ok(match out {
            Output::F64(a) => a,
            Output::F32(a) => a.mapv(|v| v as f64),
            Output::I64(a) => a.mapv(|v| v as f64),
            Output::Bool(a) => a.mapv(|v| if v { 1.0 } else { 0.0 }),
        })
    }
}

impl Float for f32 {
    fn out_slice(s: &mut [f32]) -> crate::backend::OutSlice<'_> {
        crate::backend::OutSlice::F32(s)
    }
    fn arg(view: ArrayViewD<'_, f32>) -> ArrayArg<'_> {
        ArrayArg::F32(view)
    }
    fn view_of<'a>(arg: &ArrayArg<'a>) -> Option<ArrayViewD<'a, f32>> {
        match arg {
            ArrayArg::F32(v) => Some(v.clone()),
            ArrayArg::F64(_) => None,
        }
    }
    fn from_output(out: Output) -> Result<ArrayD<f32>> {
        Ok(match out {
            Output::F32(a) => a,
            Output::F64(_) => {
                return Err(Error::Output(
                    "the kernel computed f64; ask for an f64 result".into(),
                ));
            }
            Output::I64(a) => a.mapv(|v| v as f32),
            Output::Bool(a) => a.mapv(|v| if v { 1.0 } else { 0.0 }),
        })
    }
}

impl<'a, A: Float, D: Dimension> From<&'a ArrayRef<A, D>> for ArrayArg<'a> {
    fn from(a: &'a ArrayRef<A, D>) -> ArrayArg<'a> {
        A::arg(a.view().into_dyn())
    }
}

impl<'a, A: Float, S: ndarray::Data<Elem = A>, D: Dimension> From<&'a ndarray::ArrayBase<S, D, A>>
    for ArrayArg<'a>
{
    fn from(a: &'a ndarray::ArrayBase<S, D, A>) -> ArrayArg<'a> {
        A::arg(a.view().into_dyn())
    }
}

impl<'a, A: Float, D: Dimension> From<ndarray::ArrayView<'a, A, D>> for ArrayArg<'a> {
    fn from(a: ndarray::ArrayView<'a, A, D>) -> ArrayArg<'a> {
        A::arg(a.into_dyn())
    }
}

impl ArrayArg<'_> {
    /// The same input, borrowed for a shorter time.
    pub fn reborrow(&self) -> ArrayArg<'_> {
        match self {
            ArrayArg::F64(v) => ArrayArg::F64(v.view()),
            ArrayArg::F32(v) => ArrayArg::F32(v.view()),
        }
    }
}

impl<'a, A: Float> From<&'a [A]> for ArrayArg<'a> {
    /// A slice, as a one-dimensional input.
    fn from(s: &'a [A]) -> ArrayArg<'a> {
        A::arg(ndarray::ArrayView1::from(s).into_dyn())
    }
}

/// A kernel's result, typed as NumPy would type it.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    F64(ArrayD<f64>),
    F32(ArrayD<f32>),
    /// argmin / argmax, and sums of truth values.
    I64(ArrayD<i64>),
    /// Comparisons and logical results, any, all.
    Bool(ArrayD<bool>),
}

impl Output {
    pub fn shape(&self) -> &[usize] {
        match self {
            Output::F64(a) => a.shape(),
            Output::F32(a) => a.shape(),
            Output::I64(a) => a.shape(),
            Output::Bool(a) => a.shape(),
        }
    }

    /// The result as an f64 array (f32 widened, integers and bools converted).
    pub fn into_f64(self) -> ArrayD<f64> {
        f64::from_output(self).expect("every output converts to f64")
    }

    /// The element type.
    pub fn output_type(&self) -> kiln_ir::OutputType {
        match self {
            Output::F64(_) => kiln_ir::OutputType::Float(kiln_ir::DType::F64),
            Output::F32(_) => kiln_ir::OutputType::Float(kiln_ir::DType::F32),
            Output::I64(_) => kiln_ir::OutputType::Int64,
            Output::Bool(_) => kiln_ir::OutputType::Bool,
        }
    }

    /// The NumPy name of the element type.
    pub fn dtype_name(&self) -> &'static str {
        match self {
            Output::F64(_) => "float64",
            Output::F32(_) => "float32",
            Output::I64(_) => "int64",
            Output::Bool(_) => "bool",
        }
    }
}

impl TryFrom<Tensor> for Output {
    type Error = Error;
    fn try_from(t: Tensor) -> Result<Output> {
        let shape = IxDyn(&t.shape);
        let bad = |e: ndarray::ShapeError| Error::Output(e.to_string());
        Ok(match t.values {
            Values::F64(v) => Output::F64(ArrayD::from_shape_vec(shape, v).map_err(bad)?),
            Values::F32(v) => Output::F32(ArrayD::from_shape_vec(shape, v).map_err(bad)?),
            Values::I64(v) => Output::I64(ArrayD::from_shape_vec(shape, v).map_err(bad)?),
            Values::Bool(v) => Output::Bool(ArrayD::from_shape_vec(shape, v).map_err(bad)?),
        })
    }
}

/// An input converted to the kernel's dtype: still the caller's view where no conversion was needed.
#[doc(hidden)]
#[derive(Debug)]
pub enum Converted<'a, T> {
    View(ArrayViewD<'a, T>),
    Owned(ArrayD<T>),
}

impl<'a, T: Float> Converted<'a, T> {
    pub(crate) fn of(arg: &ArrayArg<'a>) -> Result<Converted<'a, T>> {
        T::convert(arg)
    }

    pub(crate) fn view(&self) -> ArrayViewD<'_, T> {
        match self {
            Converted::View(v) => v.view(),
            Converted::Owned(a) => a.view(),
        }
    }
}

/// Conversions from any [`ArrayArg`] to one float type.
pub trait Convert: Sized {
    /// The argument in this dtype: a borrowed view if it already is, else a C-order converted copy
    /// ("out of memory" if the copy cannot be allocated).
    #[doc(hidden)]
    fn convert<'a>(arg: &ArrayArg<'a>) -> Result<Converted<'a, Self>>;
}

fn converted<S: Copy, T>(v: &ArrayViewD<'_, S>, f: impl Fn(S) -> T) -> Result<ArrayD<T>> {
    let mut data: Vec<T> = Vec::new();
    data.try_reserve_exact(v.len())
        .map_err(|_| kiln_ir::IrError::Allocation {
            what: "an input converted to the kernel's dtype".into(),
            elements: v.len(),
        })?;
    data.extend(v.iter().map(|&x| f(x)));
    Ok(ArrayD::from_shape_vec(v.raw_dim(), data).expect("same element count"))
}

impl Convert for f64 {
    fn convert<'a>(arg: &ArrayArg<'a>) -> Result<Converted<'a, f64>> {
        Ok(match arg {
            ArrayArg::F64(v) => Converted::View(v.clone()),
            ArrayArg::F32(v) => Converted::Owned(converted(v, |x| x as f64)?),
        })
    }
}

impl Convert for f32 {
    fn convert<'a>(arg: &ArrayArg<'a>) -> Result<Converted<'a, f32>> {
        Ok(match arg {
            // only reached if a caller forces an f32 kernel over f64 data: round as NumPy's astype
            ArrayArg::F64(v) => Converted::Owned(converted(v, |x| x as f32)?),
            ArrayArg::F32(v) => Converted::View(v.clone()),
        })
    }
}
