//! Arrays at kiln's boundary: inputs bound by name ([`ArrayArg`]) and results ([`Output`]).

use crate::error::{Error, Result};
use crate::view::View;
use kiln_ir::num_complex::{Complex32, Complex64};
use kiln_ir::{ElemType, Tensor, Values};
use ndarray::{ArrayD, ArrayRef, ArrayViewD, Dimension, IxDyn};

/// An input array of any element type kiln has (f64, f32, i64, i32, bool, and the complex numbers
/// `Complex32` and `Complex64` of `num_complex`, ndarray's and NumPy's layout), any dimension, any
/// strides. A kernel with an integer or bool input is typed as NumPy 2 types it and compiled by the
/// JIT in its values' own types where it can be, else run on the typed interpreter (`kiln explain`
/// says which, and why).
#[derive(Debug, Clone)]
pub enum ArrayArg<'a> {
    /// A float64 view.
    F64(View<'a, f64>),
    /// A float32 view.
    F32(View<'a, f32>),
    /// An int64 view.
    I64(View<'a, i64>),
    /// An int32 view.
    I32(View<'a, i32>),
    /// A bool view.
    Bool(View<'a, bool>),
    /// A complex64 view.
    C64(View<'a, Complex32>),
    /// A complex128 view.
    C128(View<'a, Complex64>),
    /// Byte strings (NumPy's `S<width>`), compared and searched only ([`kiln_ir::bytes`]).
    Bytes(crate::strings::Strings<'a>),
}

/// `$body` with `$v` bound to the view of whichever type `$arg` holds.
macro_rules! on_view {
    ($arg:expr, $v:ident => $body:expr) => {
        match $arg {
            $crate::array::ArrayArg::F64($v) => $body,
            $crate::array::ArrayArg::F32($v) => $body,
            $crate::array::ArrayArg::I64($v) => $body,
            $crate::array::ArrayArg::I32($v) => $body,
            $crate::array::ArrayArg::Bool($v) => $body,
            $crate::array::ArrayArg::C64($v) => $body,
            $crate::array::ArrayArg::C128($v) => $body,
            // a byte-string array's shape and layout are those of its strings' first bytes
            $crate::array::ArrayArg::Bytes($crate::strings::Strings { heads: $v, .. }) => $body,
        }
    };
}
pub(crate) use on_view;

/// `$body` with `$v` bound to the `ArrayViewD` of `$arg` (see [`View::into_dyn`]), its resulting
/// view rewrapped in the same variant: the slow paths that reshape an input.
macro_rules! map_view {
    ($arg:expr, $v:ident => $body:expr) => {
        match $arg {
            $crate::array::ArrayArg::F64(w) => $crate::array::ArrayArg::F64({
                let $v = w.into_dyn();
                $crate::view::View::from($body)
            }),
            $crate::array::ArrayArg::F32(w) => $crate::array::ArrayArg::F32({
                let $v = w.into_dyn();
                $crate::view::View::from($body)
            }),
            $crate::array::ArrayArg::I64(w) => $crate::array::ArrayArg::I64({
                let $v = w.into_dyn();
                $crate::view::View::from($body)
            }),
            $crate::array::ArrayArg::I32(w) => $crate::array::ArrayArg::I32({
                let $v = w.into_dyn();
                $crate::view::View::from($body)
            }),
            $crate::array::ArrayArg::Bool(w) => $crate::array::ArrayArg::Bool({
                let $v = w.into_dyn();
                $crate::view::View::from($body)
            }),
            $crate::array::ArrayArg::C64(w) => $crate::array::ArrayArg::C64({
                let $v = w.into_dyn();
                $crate::view::View::from($body)
            }),
            $crate::array::ArrayArg::C128(w) => $crate::array::ArrayArg::C128({
                let $v = w.into_dyn();
                $crate::view::View::from($body)
            }),
            // the strings' first bytes take the reshaping; the memory they lie in stays
            $crate::array::ArrayArg::Bytes(s) => $crate::array::ArrayArg::Bytes({
                let $v = s.heads.into_dyn();
                $crate::strings::Strings {
                    heads: $crate::view::View::from($body),
                    ..s
                }
            }),
        }
    };
}
pub(crate) use map_view;

impl ArrayArg<'_> {
    /// The float dtype a float kernel reads this input in (f64 for integers and bools, which only
    /// typed kernels read: see [`ArrayArg::elem`]).
    pub fn dtype(&self) -> ElemType {
        match self {
            ArrayArg::F32(_) => ElemType::F32,
            _ => ElemType::F64,
        }
    }

    /// The element type.
    pub fn elem(&self) -> ElemType {
        match self {
            ArrayArg::F64(_) => ElemType::F64,
            ArrayArg::F32(_) => ElemType::F32,
            ArrayArg::I64(_) => ElemType::I64,
            ArrayArg::I32(_) => ElemType::I32,
            ArrayArg::Bool(_) => ElemType::Bool,
            ArrayArg::C64(_) => ElemType::C64,
            ArrayArg::C128(_) => ElemType::C128,
            ArrayArg::Bytes(s) => ElemType::Bytes(s.width),
        }
    }

    /// The input's shape.
    pub fn shape(&self) -> &[usize] {
        on_view!(self, a => a.shape())
    }
}

/// The element types of kiln's arrays: f64, f32, i64, i32, bool, `Complex32` and `Complex64`. Any
/// of them is an input
/// ([`ArrayArg`]) and a result ([`Output`]).
pub trait Element: Copy + Send + Sync + 'static + element_sealed::Sealed {
    /// The element type.
    const ELEM: ElemType;
    /// Wraps a view of any dimension as an [`ArrayArg`].
    fn arg<D: Dimension>(view: ndarray::ArrayView<'_, Self, D>) -> ArrayArg<'_>;
    /// Takes a result of exactly this type (NumPy's dtype); anything else is an error that names both.
    fn take(out: Output) -> Result<ArrayD<Self>>;
    /// Takes a result as an array of this type where that loses nothing NumPy's casting would keep:
    /// a float type takes anything (bools as 1 / 0, integers rounded; f32 refuses an f64 result), an
    /// integer type takes bools and narrower integers, bool only bools; otherwise an error that names
    /// the result's type (`fuse_dyn` gives any result).
    fn convert_output(out: Output) -> Result<ArrayD<Self>>;
    /// A C-contiguous output of this type, as the compiled code writes it.
    #[doc(hidden)]
    fn out_buffer(s: &mut [Self]) -> crate::OutSlice<'_>;
    /// A C-contiguous input of this type, as its own elements ([`kiln_jit::Stored`]).
    #[doc(hidden)]
    fn stored(s: &[Self]) -> kiln_jit::Stored<'_>;
    /// [`Element::serial_slices`] of one output.
    #[doc(hidden)]
    fn serial_slice<B: Element>(_handle: &crate::Prepared, _inputs: &[&[Self]], _out: &mut [B]) -> bool {
        false
    }
    /// `s` as elements of the float type `L`, where they are.
    #[doc(hidden)]
    fn as_float<L: Float>(_s: &[Self]) -> Option<&[L]> {
        None
    }
    /// `s` as elements of the float type `L`, where they are.
    #[doc(hidden)]
    fn as_float_mut<L: Float>(_s: &mut [Self]) -> Option<&mut [L]> {
        None
    }
    /// The slice call of a prepared handle on inputs of this type into `outs` where both are of one
    /// float type and the handle has a serial kernel for them (see [`crate::Prepared::run_slices`]);
    /// false otherwise (the caller then takes the call of every type).
    #[doc(hidden)]
    fn serial_slices<B: Element>(
        _handle: &crate::Prepared,
        _inputs: &[&[Self]],
        _outs: &mut [&mut [B]],
    ) -> bool {
        false
    }
    /// [`Element::serial_slices`] of an update: `updated` overwritten, `rest` read.
    #[doc(hidden)]
    fn serial_update<B: Element>(
        _handle: &crate::Prepared,
        _updated: &mut [&mut [Self]],
        _rest: &[&[B]],
    ) -> bool {
        false
    }
}

mod element_sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
    impl Sealed for i64 {}
    impl Sealed for i32 {}
    impl Sealed for bool {}
    impl Sealed for super::Complex32 {}
    impl Sealed for super::Complex64 {}
}

macro_rules! element {
    ($t:ty, $variant:ident, $convert:expr) => {
        impl Element for $t {
            element!(@items $t, $variant, $convert);
        }
    };
    // the float types: a result into a view through the float call's serial paths, an update in place
    ($t:ty, $variant:ident, $convert:expr, float, $from:ident, $from_mut:ident) => {
        impl Element for $t {
            element!(@items $t, $variant, $convert);
            fn as_float<L: Float>(s: &[$t]) -> Option<&[L]> {
                L::$from(s)
            }
            fn as_float_mut<L: Float>(s: &mut [$t]) -> Option<&mut [L]> {
                L::$from_mut(s)
            }
            fn serial_slice<B: Element>(handle: &crate::Prepared, inputs: &[&[$t]], out: &mut [B]) -> bool {
                handle.try_serial_one(inputs, out)
            }
            fn serial_slices<B: Element>(
                handle: &crate::Prepared,
                inputs: &[&[$t]],
                outs: &mut [&mut [B]],
            ) -> bool {
                handle.try_serial_as(inputs, outs)
            }
            fn serial_update<B: Element>(
                handle: &crate::Prepared,
                updated: &mut [&mut [$t]],
                rest: &[&[B]],
            ) -> bool {
                handle.try_serial_update(updated, rest)
            }
        }
    };
    (@items $t:ty, $variant:ident, $convert:expr) => {
        const ELEM: ElemType = ElemType::$variant;
        fn convert_output(out: Output) -> Result<ArrayD<$t>> {
            $convert(out)
        }
        fn out_buffer(s: &mut [$t]) -> crate::OutSlice<'_> {
            crate::OutSlice::$variant(s)
        }
        fn stored(s: &[$t]) -> kiln_jit::Stored<'_> {
            kiln_jit::Stored::from(s)
        }
        fn arg<D: Dimension>(view: ndarray::ArrayView<'_, $t, D>) -> ArrayArg<'_> {
            ArrayArg::$variant(View::from(view))
        }
        fn take(out: Output) -> Result<ArrayD<$t>> {
            match out {
                Output::$variant(a) => Ok(a),
                other => Err(Error::Output(format!(
                    "the kernel gives {}, not {}",
                    other.dtype_name(),
                    ElemType::$variant
                ))),
            }
        }
    };
}

fn refuse<T>(out: &Output, to: ElemType) -> Result<ArrayD<T>> {
    Err(Error::Output(format!(
        "the kernel gives {}, which {to} does not hold: ask for that type or use `fuse_dyn`",
        out.dtype_name()
    )))
}

element!(f64, F64, f64::from_output, float, from_f64s, from_f64s_mut);
element!(f32, F32, f32::from_output, float, from_f32s, from_f32s_mut);
element!(i64, I64, |out: Output| match out {
    Output::I64(a) => Ok(a),
    Output::I32(a) => Ok(a.mapv(i64::from)),
    Output::Bool(a) => Ok(a.mapv(i64::from)),
    other => refuse(&other, ElemType::I64),
});
element!(i32, I32, |out: Output| match out {
    Output::I32(a) => Ok(a),
    Output::Bool(a) => Ok(a.mapv(i32::from)),
    other => refuse(&other, ElemType::I32),
});
element!(bool, Bool, |out: Output| match out {
    Output::Bool(a) => Ok(a),
    other => refuse(&other, ElemType::Bool),
});
element!(Complex32, C64, |out: Output| match out {
    Output::C64(a) => Ok(a),
    other => refuse(&other, ElemType::C64),
});
element!(Complex64, C128, |out: Output| match out {
    Output::C128(a) => Ok(a),
    Output::C64(a) => Ok(a.mapv(|z| Complex64::new(z.re.into(), z.im.into()))),
    other => match f64::from_output(other) {
        Ok(a) => Ok(a.mapv(|v| Complex64::new(v, 0.0))),
        Err(_) => Err(Error::Output("a complex128 result was asked for".into())),
    },
});

/// The float element types kiln computes in: f64 and f32.
pub trait Float: kiln_ir::Real + kiln_jit::Elem + Convert + Element + sealed::Sealed {
    /// Takes a result as an array of this type: floats of this dtype as they are, bools and
    /// integers as 1 / 0 and exact integers (NumPy's `astype`).
    fn from_output(out: Output) -> Result<ArrayD<Self>>;
    /// The view of an argument of this dtype.
    #[doc(hidden)]
    fn view_of<'a>(arg: &ArrayArg<'a>) -> Option<ArrayViewD<'a, Self>>;
    /// The elements of a C-contiguous argument of this dtype, without copying its view.
    #[doc(hidden)]
    fn slice_of<'a>(arg: &ArrayArg<'a>) -> Option<&'a [Self]>;
    /// The elements of `s` where they are of this dtype.
    #[doc(hidden)]
    fn stored_slice<'a>(s: &kiln_jit::Stored<'a>) -> Option<&'a [Self]>;
    /// The result holding `a`.
    #[doc(hidden)]
    fn output(a: ArrayD<Self>) -> Output;
    /// The elements of an output buffer of this dtype.
    #[doc(hidden)]
    fn from_out<'s>(o: crate::OutSlice<'s>) -> Option<&'s mut [Self]>;
    /// f64 elements as this type's, where it is f64.
    #[doc(hidden)]
    fn from_f64s(s: &[f64]) -> Option<&[Self]>;
    /// f64 elements as this type's, where it is f64.
    #[doc(hidden)]
    fn from_f64s_mut(s: &mut [f64]) -> Option<&mut [Self]>;
    /// f32 elements as this type's, where it is f32.
    #[doc(hidden)]
    fn from_f32s(s: &[f32]) -> Option<&[Self]>;
    /// f32 elements as this type's, where it is f32.
    #[doc(hidden)]
    fn from_f32s_mut(s: &mut [f32]) -> Option<&mut [Self]>;
    /// The inputs of a direct call ([`crate::Executable::call_into`]).
    #[doc(hidden)]
    fn direct_inputs<'r, 'i>(
        inputs: &'r [kiln_jit::InputRef<'i, Self>],
    ) -> crate::backend::DirectInputs<'r, 'i>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f64 {}
    impl Sealed for f32 {}
}

impl Float for f64 {
    fn direct_inputs<'r, 'i>(
        inputs: &'r [kiln_jit::InputRef<'i, f64>],
    ) -> crate::backend::DirectInputs<'r, 'i> {
        crate::backend::DirectInputs::F64(inputs)
    }
    fn view_of<'a>(arg: &ArrayArg<'a>) -> Option<ArrayViewD<'a, f64>> {
        match arg {
            ArrayArg::F64(v) => Some(v.to_dyn()),
            _ => None,
        }
    }
    fn stored_slice<'a>(s: &kiln_jit::Stored<'a>) -> Option<&'a [f64]> {
        match s {
            kiln_jit::Stored::F64(x) => Some(x),
            _ => None,
        }
    }
    fn from_f64s(s: &[f64]) -> Option<&[f64]> {
        Some(s)
    }
    fn from_f64s_mut(s: &mut [f64]) -> Option<&mut [f64]> {
        Some(s)
    }
    fn from_f32s(_s: &[f32]) -> Option<&[f64]> {
        None
    }
    fn from_f32s_mut(_s: &mut [f32]) -> Option<&mut [f64]> {
        None
    }
    fn from_out<'s>(o: crate::OutSlice<'s>) -> Option<&'s mut [f64]> {
        match o {
            crate::OutSlice::F64(s) => Some(s),
            _ => None,
        }
    }
    fn output(a: ArrayD<f64>) -> Output {
        Output::F64(a)
    }
    fn slice_of<'a>(arg: &ArrayArg<'a>) -> Option<&'a [f64]> {
        match arg {
            ArrayArg::F64(v) => v.to_slice(),
            _ => None,
        }
    }
    fn from_output(out: Output) -> Result<ArrayD<f64>> {
        Ok(match out {
            Output::F64(a) => a,
            Output::F32(a) => a.mapv(|v| v as f64),
            Output::I64(a) => a.mapv(|v| v as f64),
            Output::I32(a) => a.mapv(|v| v as f64),
            Output::Bool(a) => a.mapv(|v| if v { 1.0 } else { 0.0 }),
            Output::C64(_) | Output::C128(_) => return Err(complex_to_real(ElemType::F64)),
            Output::Bytes(b) => return Err(bytes_to_number(b.width as u32, ElemType::F64)),
        })
    }
}

fn bytes_to_number(width: u32, to: ElemType) -> Error {
    Error::Output(format!(
        "byte strings (S{width}) are not numbers of {to}: compare them (==, <, contains()) for bools"
    ))
}

fn complex_to_real(to: ElemType) -> Error {
    Error::Output(format!(
        "the kernel gives complex numbers, which {to} does not hold: take `real(...)`, `imag(...)` or \
         `abs(...)`, or ask for a complex type"
    ))
}

impl Float for f32 {
    fn direct_inputs<'r, 'i>(
        inputs: &'r [kiln_jit::InputRef<'i, f32>],
    ) -> crate::backend::DirectInputs<'r, 'i> {
        crate::backend::DirectInputs::F32(inputs)
    }
    fn view_of<'a>(arg: &ArrayArg<'a>) -> Option<ArrayViewD<'a, f32>> {
        match arg {
            ArrayArg::F32(v) => Some(v.to_dyn()),
            _ => None,
        }
    }
    fn stored_slice<'a>(s: &kiln_jit::Stored<'a>) -> Option<&'a [f32]> {
        match s {
            kiln_jit::Stored::F32(x) => Some(x),
            _ => None,
        }
    }
    fn from_f32s(s: &[f32]) -> Option<&[f32]> {
        Some(s)
    }
    fn from_f32s_mut(s: &mut [f32]) -> Option<&mut [f32]> {
        Some(s)
    }
    fn from_f64s(_s: &[f64]) -> Option<&[f32]> {
        None
    }
    fn from_f64s_mut(_s: &mut [f64]) -> Option<&mut [f32]> {
        None
    }
    fn from_out<'s>(o: crate::OutSlice<'s>) -> Option<&'s mut [f32]> {
        match o {
            crate::OutSlice::F32(s) => Some(s),
            _ => None,
        }
    }
    fn output(a: ArrayD<f32>) -> Output {
        Output::F32(a)
    }
    fn slice_of<'a>(arg: &ArrayArg<'a>) -> Option<&'a [f32]> {
        match arg {
            ArrayArg::F32(v) => v.to_slice(),
            _ => None,
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
            Output::I32(a) => a.mapv(|v| v as f32),
            Output::Bool(a) => a.mapv(|v| if v { 1.0 } else { 0.0 }),
            Output::C64(_) | Output::C128(_) => return Err(complex_to_real(ElemType::F32)),
            Output::Bytes(b) => return Err(bytes_to_number(b.width as u32, ElemType::F32)),
        })
    }
}

impl<'a, A: Element, D: Dimension> From<&'a ArrayRef<A, D>> for ArrayArg<'a> {
    fn from(a: &'a ArrayRef<A, D>) -> ArrayArg<'a> {
        A::arg(a.view())
    }
}

impl<'a, A: Element, S: ndarray::Data<Elem = A>, D: Dimension> From<&'a ndarray::ArrayBase<S, D, A>>
    for ArrayArg<'a>
{
    fn from(a: &'a ndarray::ArrayBase<S, D, A>) -> ArrayArg<'a> {
        A::arg(a.view())
    }
}

impl<'a, A: Element, D: Dimension> From<ndarray::ArrayView<'a, A, D>> for ArrayArg<'a> {
    fn from(a: ndarray::ArrayView<'a, A, D>) -> ArrayArg<'a> {
        A::arg(a)
    }
}

impl ArrayArg<'_> {
    /// The same input, borrowed for a shorter time.
    pub fn reborrow(&self) -> ArrayArg<'_> {
        match self {
            ArrayArg::F64(v) => ArrayArg::F64(v.view()),
            ArrayArg::F32(v) => ArrayArg::F32(v.view()),
            ArrayArg::I64(v) => ArrayArg::I64(v.view()),
            ArrayArg::I32(v) => ArrayArg::I32(v.view()),
            ArrayArg::Bool(v) => ArrayArg::Bool(v.view()),
            ArrayArg::C64(v) => ArrayArg::C64(v.view()),
            ArrayArg::C128(v) => ArrayArg::C128(v.view()),
            ArrayArg::Bytes(s) => ArrayArg::Bytes(crate::strings::Strings {
                heads: s.heads.view(),
                memory: s.memory,
                width: s.width,
            }),
        }
    }
}

impl<'a, A: Element> From<&'a [A]> for ArrayArg<'a> {
    /// A slice, as a one-dimensional input.
    fn from(s: &'a [A]) -> ArrayArg<'a> {
        A::arg(ndarray::ArrayView1::from(s))
    }
}

/// A kernel's result, typed as NumPy would type it.
#[derive(Debug, Clone, PartialEq)]
pub enum Output {
    /// float64: float arithmetic and functions of float64 (or mixed) inputs, means of integers.
    F64(ArrayD<f64>),
    /// float32: arithmetic and functions of float32 inputs and literals.
    F32(ArrayD<f32>),
    /// argmin / argmax, sums of truth values, int64 arithmetic.
    I64(ArrayD<i64>),
    /// int32 arithmetic.
    I32(ArrayD<i32>),
    /// Comparisons and logical results, any, all.
    Bool(ArrayD<bool>),
    /// complex64: arithmetic and functions of complex64 inputs (or complex literals with float32).
    C64(ArrayD<Complex32>),
    /// complex128: arithmetic and functions of complex128 inputs, `complex(a, b)` of float64.
    C128(ArrayD<Complex64>),
    /// Byte strings: a byte-string input or constant as it is (`s`, numexpr's copy).
    Bytes(crate::strings::ByteStrings),
}

impl Output {
    /// Copies the elements, in C order, into `out`, a buffer of the same type and length.
    ///
    /// # Errors
    /// An `out` of another type or length (byte strings have no such buffer).
    pub(crate) fn copy_into(&self, out: crate::backend::OutSlice<'_>) -> Result<()> {
        use crate::backend::OutSlice;
        fn copy<T: Copy>(a: &ArrayD<T>, o: &mut [T]) -> Result<()> {
            if a.len() != o.len() {
                return Err(Error::Output(format!(
                    "{} elements for an output of {}",
                    a.len(),
                    o.len()
                )));
            }
            // a result in C order (a fresh one always is) is one block copy; another layout is
            // walked in logical order
            match a.as_slice() {
                Some(s) => o.copy_from_slice(s),
                None => o.iter_mut().zip(a.iter()).for_each(|(o, &v)| *o = v),
            }
            Ok(())
        }
        match (self, out) {
            (Output::F64(a), OutSlice::F64(o)) => copy(a, o),
            (Output::F32(a), OutSlice::F32(o)) => copy(a, o),
            (Output::I64(a), OutSlice::I64(o)) => copy(a, o),
            (Output::I32(a), OutSlice::I32(o)) => copy(a, o),
            (Output::Bool(a), OutSlice::Bool(o)) => copy(a, o),
            (Output::C64(a), OutSlice::C64(o)) => copy(a, o),
            (Output::C128(a), OutSlice::C128(o)) => copy(a, o),
            (a, o) => Err(Error::Output(format!(
                "a result of {} given an output of {}",
                a.elem().short_name(),
                o.ty().short_name()
            ))),
        }
    }

    /// The result's shape.
    pub fn shape(&self) -> &[usize] {
        match self {
            Output::F64(a) => a.shape(),
            Output::F32(a) => a.shape(),
            Output::I64(a) => a.shape(),
            Output::I32(a) => a.shape(),
            Output::Bool(a) => a.shape(),
            Output::C64(a) => a.shape(),
            Output::C128(a) => a.shape(),
            Output::Bytes(b) => &b.shape,
        }
    }

    /// The element type.
    pub fn elem(&self) -> ElemType {
        match self {
            Output::F64(_) => ElemType::F64,
            Output::F32(_) => ElemType::F32,
            Output::I64(_) => ElemType::I64,
            Output::I32(_) => ElemType::I32,
            Output::Bool(_) => ElemType::Bool,
            Output::C64(_) => ElemType::C64,
            Output::C128(_) => ElemType::C128,
            Output::Bytes(b) => ElemType::Bytes(u32::try_from(b.width).unwrap_or(u32::MAX)),
        }
    }

    /// The result as an array of exactly type `A` (an error naming both types otherwise; see
    /// [`Output::into_f64`] for a converting read).
    pub fn into_typed<A: Element>(self) -> Result<ArrayD<A>> {
        A::take(self)
    }

    /// The result as an input of a later run (a view).
    pub fn arg(&self) -> ArrayArg<'_> {
        match self {
            Output::F64(a) => ArrayArg::from(a),
            Output::F32(a) => ArrayArg::from(a),
            Output::I64(a) => ArrayArg::from(a),
            Output::I32(a) => ArrayArg::from(a),
            Output::Bool(a) => ArrayArg::from(a),
            Output::C64(a) => ArrayArg::from(a),
            Output::C128(a) => ArrayArg::from(a),
            Output::Bytes(b) => b.arg(),
        }
    }

    /// The result as an f64 array (f32 widened, integers and bools converted, a complex result's
    /// real part as NumPy's `astype(float64)` takes it; byte strings read as numbers as NumPy's
    /// `astype(float64)` reads them, NaN where one is not a number, where NumPy raises).
    pub fn into_f64(self) -> ArrayD<f64> {
        match self {
            Output::C64(a) => a.mapv(|z| f64::from(z.re)),
            Output::C128(a) => a.mapv(|z| z.re),
            Output::Bytes(b) => b.numbers(),
            real => f64::from_output(real).expect("every real output converts to f64"),
        }
    }

    /// The NumPy name of the element type.
    pub fn dtype_name(&self) -> &'static str {
        match self {
            Output::F64(_) => "float64",
            Output::F32(_) => "float32",
            Output::I64(_) => "int64",
            Output::I32(_) => "int32",
            Output::Bool(_) => "bool",
            Output::C64(_) => "complex64",
            Output::C128(_) => "complex128",
            Output::Bytes(_) => "bytes",
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
            Values::I32(v) => Output::I32(ArrayD::from_shape_vec(shape, v).map_err(bad)?),
            Values::Bool(v) => Output::Bool(ArrayD::from_shape_vec(shape, v).map_err(bad)?),
            Values::C64(v) => Output::C64(ArrayD::from_shape_vec(shape, v).map_err(bad)?),
            Values::C128(v) => Output::C128(ArrayD::from_shape_vec(shape, v).map_err(bad)?),
            Values::Bytes { width, data } => Output::Bytes(
                crate::strings::ByteStrings {
                    shape: Vec::new(),
                    width,
                    data,
                }
                .into_shape(t.shape)?,
            ),
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

fn converted<S: Copy, T>(v: &View<'_, S>, f: impl Fn(S) -> T) -> Result<ArrayD<T>> {
    let v = v.to_dyn();
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
            ArrayArg::F64(v) => Converted::View(v.to_dyn()),
            ArrayArg::F32(v) => Converted::Owned(converted(v, |x| x as f64)?),
            // integers and bools reach float kernels only through a typed kernel's cast; as astype
            ArrayArg::I64(v) => Converted::Owned(converted(v, |x| x as f64)?),
            ArrayArg::I32(v) => Converted::Owned(converted(v, |x| x as f64)?),
            ArrayArg::Bool(v) => Converted::Owned(converted(v, |x| u8::from(x) as f64)?),
            ArrayArg::C64(_) | ArrayArg::C128(_) => return Err(complex_to_real(ElemType::F64)),
            ArrayArg::Bytes(s) => return Err(bytes_to_number(s.width, ElemType::F64)),
        })
    }
}

impl Convert for f32 {
    fn convert<'a>(arg: &ArrayArg<'a>) -> Result<Converted<'a, f32>> {
        Ok(match arg {
            // only reached if a caller forces an f32 kernel over f64 data: round as NumPy's astype
            ArrayArg::F64(v) => Converted::Owned(converted(v, |x| x as f32)?),
            ArrayArg::F32(v) => Converted::View(v.to_dyn()),
            ArrayArg::I64(v) => Converted::Owned(converted(v, |x| x as f32)?),
            ArrayArg::I32(v) => Converted::Owned(converted(v, |x| x as f32)?),
            ArrayArg::Bool(v) => Converted::Owned(converted(v, |x| u8::from(x) as f32)?),
            ArrayArg::C64(_) | ArrayArg::C128(_) => return Err(complex_to_real(ElemType::F32)),
            ArrayArg::Bytes(s) => return Err(bytes_to_number(s.width, ElemType::F32)),
        })
    }
}
