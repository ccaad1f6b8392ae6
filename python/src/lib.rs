//! `kiln._kiln`, the extension module behind the `kiln` Python package: kiln's [`FusedRunner`]
//! over NumPy arrays, read in place.
//!
//! It compiles an expression once per (text, profile, threads) into a cache every Python thread
//! shares; it looks the inputs up by name in the dicts given or the caller's frame's, as numexpr,
//! and binds bool, int32, int64, float32 and float64 arrays of any strides as views (no copy,
//! claimed for reading: see [`Held::view`]; kiln's view plans read them in place or copy them once);
//! it runs each form of inputs through a [`Prepared`] handle (C-contiguous inputs of one float type
//! on their elements as slices) into a result NumPy allocates, or a large one into a buffer of a
//! small pool ([`Pooled`]), with the GIL released (above [`DETACH_ELEMENTS`]); and it makes the
//! common calls of numexpr's `evaluate` ([`evaluate`]) and of a compiled kernel ([`Callable`])
//! without a Python frame, and keeps numexpr's per-thread last expression. The first call of an
//! expression, other options, scalar and dtype conversions of unusual values (byte-swapped,
//! unaligned, lists) and `out=` fallbacks are the Python layer's job (`kiln/numexpr.py`,
//! `kiln/_core.py`), where they are cheap to state and to read.
//!
//! Errors map onto the exception types numexpr raises: a bad expression is a `SyntaxError` (with
//! its position) or a `ValueError` (an unknown function), a wrong arity a `TypeError`, shapes that
//! do not broadcast and other errors of the inputs a `ValueError`, an unsupported dtype a
//! `TypeError`.

mod claims;
mod literals;

use claims::Claims;
use kiln::kiln_ir::ElemType;
use kiln::kiln_ir::num_complex::{Complex32, Complex64};
use kiln::{ArrayArg, Error, FusedRunner, OutSlice, Output, Prepared, Profile};
use numpy::{PyArrayDescrMethods, PyArrayDyn, PyArrayMethods, PyReadwriteArrayDyn, PyUntypedArrayMethods};
use pyo3::exceptions::{
    PyKeyError, PyNotImplementedError, PyOverflowError, PyRuntimeError, PySyntaxError, PyTypeError,
    PyValueError,
};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyDict, PyString, PyTuple};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

/// A kernel cache key: the expression's text, the profile's name and the thread count.
type Key = (String, Option<String>, Option<usize>);

/// The most expressions the cache keeps; a program that makes expressions without end (text built
/// from data) empties it when it is full rather than growing without bound, as numexpr's cache does.
const CACHE_CAPACITY: usize = 4096;

/// Every compiled expression of the process, shared by all Python threads. A [`FusedRunner`] is
/// cheap to clone (its kernels sit behind an `Arc`), so a hit is a lookup and a clone.
fn cache() -> &'static Mutex<HashMap<Key, FusedRunner>> {
    static CACHE: OnceLock<Mutex<HashMap<Key, FusedRunner>>> = OnceLock::new();
    CACHE.get_or_init(Default::default)
}

/// A kiln error as the Python exception numexpr would raise for it.
fn py_err(e: Error, src: &str) -> PyErr {
    let msg = e.to_string();
    match e {
        Error::Parse { pos, .. } => {
            // SyntaxError(msg, (filename, lineno, offset, text)): Python's own caret display
            let offset = pos + 1;
            PySyntaxError::new_err((msg, ("<kiln expression>", 1, offset, src.to_string())))
        }
        Error::UnknownFunction { .. } => PyValueError::new_err(msg),
        Error::Arity { .. } | Error::UnsupportedDType { .. } => PyTypeError::new_err(msg),
        Error::MissingInput { name } => PyKeyError::new_err(name),
        Error::Jit(_) => PyRuntimeError::new_err(msg),
        // NumPy's exceptions for the operand types an operator refuses (kiln_ir's promote.rs); the
        // int8 results of bools NumPy computes and kiln does not are a TypeError
        // an operation complex numbers do not have: numexpr's exception (it has no opcode for it)
        Error::Ir(kiln::kiln_ir::IrError::Promote {
            error: kiln::kiln_ir::promote::PromoteError::NotComplex { .. },
            ..
        }) => PyNotImplementedError::new_err(msg),
        Error::Ir(kiln::kiln_ir::IrError::Promote { ref error, .. }) => match error.numpy_exception() {
            "OverflowError" => PyOverflowError::new_err(msg),
            // an operation byte strings do not have: numexpr's exception, its opcode named
            "NotImplementedError" => PyNotImplementedError::new_err(msg),
            "ValueError" => PyValueError::new_err(msg),
            _ => PyTypeError::new_err(msg),
        },
        _ => PyValueError::new_err(msg),
    }
}

/// The dtypes kiln reads NumPy arrays of in place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    F64,
    F32,
    I64,
    I32,
    Bool,
    C64,
    C128,
    /// Byte strings of this many bytes (NumPy's `S<n>`), C-contiguous.
    Bytes(usize),
}

impl Kind {
    /// The element type kiln binds an array of this kind with.
    fn elem(self) -> ElemType {
        match self {
            Kind::F64 => ElemType::F64,
            Kind::F32 => ElemType::F32,
            Kind::I64 => ElemType::I64,
            Kind::I32 => ElemType::I32,
            Kind::Bool => ElemType::Bool,
            Kind::C64 => ElemType::C64,
            Kind::C128 => ElemType::C128,
            Kind::Bytes(w) => ElemType::Bytes(u32::try_from(w).unwrap_or(u32::MAX)),
        }
    }

    /// The bytes of one element.
    fn itemsize(self) -> usize {
        match self {
            Kind::Bytes(w) => w,
            Kind::C128 => 16,
            Kind::F64 | Kind::I64 | Kind::C64 => 8,
            Kind::F32 | Kind::I32 => 4,
            Kind::Bool => 1,
        }
    }
}

/// An input for the length of one call: an array kiln reads in place, or a Python float.
enum Held<'a, 'py> {
    /// A NumPy array of one of kiln's dtypes, native byte order and aligned (see [`kind_of`]).
    Array(Kind, &'a Bound<'py, numpy::PyUntypedArray>),
    /// A Python float (or NumPy float64 scalar), bound as a 0-d float64 array as numexpr binds it.
    Scalar([f64; 1]),
    /// A NumPy float32 scalar, bound as a 0-d float32 array (as `np.asarray` makes it).
    Scalar32([f32; 1]),
    /// A Python complex (or NumPy complex128 scalar), bound as a 0-d complex128 array.
    ScalarC([Complex64; 1]),
    /// A Python int within int64 (not a bool) or a NumPy int64 scalar, bound as a 0-d int64 array
    /// (as `np.asarray` makes it).
    ScalarI([i64; 1]),
}

impl Held<'_, '_> {
    /// Where this input is a bool array holding a byte other than 0 and 1 (which a Rust `bool` may
    /// not hold: a view of other data as bool), its truths as a new array, each true where its
    /// byte is nonzero (as compiled code reads C-contiguous bools: [`Held::stored`]); None for
    /// every other input. Checked on the views' path only ([`views`]).
    fn bool_copy(&self) -> Option<ndarray::ArrayD<bool>> {
        let Held::Array(Kind::Bool, a) = self else {
            return None;
        };
        if Held::bools_valid(a) {
            return None;
        }
        // SAFETY: `kind_of` checked that `a` has one-byte elements, and every byte is a valid `u8`;
        // the read is covered by the call's read claim, as `Held::view`'s
        let bytes = unsafe { a.cast_unchecked::<PyArrayDyn<u8>>().as_array() };
        Some(bytes.map(|&b| b != 0))
    }

    /// This input as an array view.
    ///
    /// # Safety
    /// A bool array's bytes are all 0 or 1: [`Held::bool_copy`] gave None for it ([`views`]).
    unsafe fn view(&self) -> ArrayArg<'_> {
        let (kind, a) = match self {
            Held::Array(kind, a) => (*kind, *a),
            Held::Scalar(v) => {
                return ArrayArg::from(
                    ndarray::ArrayViewD::from_shape(ndarray::IxDyn(&[]), v)
                        .expect("one value fills a 0-d array"),
                );
            }
            Held::Scalar32(v) => {
                return ArrayArg::from(
                    ndarray::ArrayViewD::from_shape(ndarray::IxDyn(&[]), v)
                        .expect("one value fills a 0-d array"),
                );
            }
            Held::ScalarC(v) => {
                return ArrayArg::from(
                    ndarray::ArrayViewD::from_shape(ndarray::IxDyn(&[]), v)
                        .expect("one value fills a 0-d array"),
                );
            }
            Held::ScalarI(v) => {
                return ArrayArg::from(
                    ndarray::ArrayViewD::from_shape(ndarray::IxDyn(&[]), v)
                        .expect("one value fills a 0-d array"),
                );
            }
        };
        // SAFETY: kiln takes NumPy's data pointers for its inputs here, in `Held::slice` and in
        // `Held::stored` only. `kind_of` checked that `a` is an aligned array in native byte order
        // whose elements are the `kind`'s type, and the caller that a bool array's bytes are all 0
        // or 1 (the values a Rust `bool` may hold: this function's contract), so the cast names
        // its real element type; NumPy's shape and strides
        // describe memory the array owns (or its base does, which the array keeps alive), and `a`
        // is borrowed for the view's lifetime, so neither is freed while the view lives.
        // Aliasing: the views are shared references, so nothing may write the arrays while they
        // live. Every call claims its input arrays' bytes for reading for its length
        // (`Kernel::hold_all`, see `claims`), and kiln's only writer of a caller's array, an
        // `out=` call, claims `out` for writing first: claims of the two kinds never overlap, so
        // kiln never writes an array a running call reads. Writers outside kiln (NumPy's ufuncs,
        // other C extensions) take no claims and are not excluded, as with the `numpy` crate's
        // own flags.
        unsafe {
            match kind {
                Kind::F64 => ArrayArg::from(a.cast_unchecked::<PyArrayDyn<f64>>().as_array()),
                Kind::F32 => ArrayArg::from(a.cast_unchecked::<PyArrayDyn<f32>>().as_array()),
                Kind::I64 => ArrayArg::from(a.cast_unchecked::<PyArrayDyn<i64>>().as_array()),
                Kind::I32 => ArrayArg::from(a.cast_unchecked::<PyArrayDyn<i32>>().as_array()),
                Kind::Bool => ArrayArg::from(a.cast_unchecked::<PyArrayDyn<bool>>().as_array()),
                Kind::C64 => ArrayArg::from(a.cast_unchecked::<PyArrayDyn<Complex32>>().as_array()),
                Kind::C128 => ArrayArg::from(a.cast_unchecked::<PyArrayDyn<Complex64>>().as_array()),
                Kind::Bytes(w) => {
                    // `kind_of` checked that the array is C-contiguous: its `len * w` bytes from
                    // its data pointer are its strings, in C order
                    let n = a.len();
                    let bytes = std::slice::from_raw_parts(
                        (*a.as_array_ptr()).fields.data.cast::<u8>().cast_const(),
                        n * w,
                    );
                    match kiln::Strings::new(bytes, w, a.shape()) {
                        Ok(s) => ArrayArg::Bytes(s),
                        Err(_) => unreachable!("the strings of a C-contiguous array of its shape"),
                    }
                }
            }
        }
    }

    /// The elements of a C-contiguous array of `A`, or of a scalar of `A` (a Python float is a
    /// float64), as a slice in C order; None for anything else.
    fn slice<A: PoolElem>(&self) -> Option<&[A]> {
        match self {
            Held::Scalar(v) => A::scalar(v),
            Held::Scalar32(v) => A::scalar32(v),
            Held::ScalarC(_) | Held::ScalarI(_) => None,
            Held::Array(kind, a) if *kind == A::KIND && a.is_c_contiguous() => {
                // SAFETY: as in `Held::view` (the same cast to the checked element type, and the same
                // reasons the data may be read without NumPy's flags): `as_slice` gives the `len`
                // elements of a C-contiguous aligned array, which `a` keeps alive while borrowed.
                unsafe { a.cast_unchecked::<PyArrayDyn<A>>().as_slice().ok() }
            }
            Held::Array(..) => None,
        }
    }

    /// The elements of a C-contiguous array of any type kiln binds, or of a scalar, in C order as
    /// their own type (no view made: what [`Prepared::run_stored`] takes); None for anything else.
    fn stored(&self) -> Option<kiln_jit::Stored<'_>> {
        use kiln_jit::Stored;
        let a = match self {
            Held::Scalar(v) => return Some(Stored::F64(v)),
            Held::Scalar32(v) => return Some(Stored::F32(v)),
            Held::ScalarC(v) => return Some(Stored::C128(v)),
            Held::ScalarI(v) => return Some(Stored::I64(v)),
            Held::Array(_, a) if !a.is_c_contiguous() => return None,
            Held::Array(_, a) => a,
        };
        // SAFETY: as in `Held::view` (the cast to the element type `kind_of` checked, the data read
        // under the call's read claim; bools as bytes, which any byte is): `as_slice` gives the
        // `len` elements of a C-contiguous aligned array, which `a` keeps alive while borrowed,
        // and a byte-string array's `len * w` bytes from its data pointer are its strings in C
        // order
        unsafe {
            Some(match self {
                Held::Array(Kind::F64, _) => {
                    Stored::F64(a.cast_unchecked::<PyArrayDyn<f64>>().as_slice().ok()?)
                }
                Held::Array(Kind::F32, _) => {
                    Stored::F32(a.cast_unchecked::<PyArrayDyn<f32>>().as_slice().ok()?)
                }
                Held::Array(Kind::I64, _) => {
                    Stored::I64(a.cast_unchecked::<PyArrayDyn<i64>>().as_slice().ok()?)
                }
                Held::Array(Kind::I32, _) => {
                    Stored::I32(a.cast_unchecked::<PyArrayDyn<i32>>().as_slice().ok()?)
                }
                Held::Array(Kind::Bool, _) => {
                    Stored::Bool(a.cast_unchecked::<PyArrayDyn<u8>>().as_slice().ok()?)
                }
                Held::Array(Kind::C64, _) => {
                    Stored::C64(a.cast_unchecked::<PyArrayDyn<Complex32>>().as_slice().ok()?)
                }
                Held::Array(Kind::C128, _) => {
                    Stored::C128(a.cast_unchecked::<PyArrayDyn<Complex64>>().as_slice().ok()?)
                }
                Held::Array(Kind::Bytes(w), _) => {
                    let bytes = std::slice::from_raw_parts(
                        (*a.as_array_ptr()).fields.data.cast::<u8>().cast_const(),
                        a.len() * w,
                    );
                    Stored::Bytes(bytes, u32::try_from(*w).ok()?)
                }
                _ => return None,
            })
        }
    }

    /// Whether every byte of the bool array `a` is 0 or 1, the only values a Rust `bool` may hold
    /// (NumPy makes no others, but a view of other data as bool can hold any byte).
    fn bools_valid(a: &Bound<'_, numpy::PyUntypedArray>) -> bool {
        // SAFETY: `kind_of` checked that `a` has one-byte elements, and every byte is a valid `u8`;
        // the read is covered by the call's read claim, as `Held::view`'s
        let bytes = unsafe { a.cast_unchecked::<PyArrayDyn<u8>>() };
        if let Ok(s) = unsafe { bytes.as_slice() } {
            return bytes_are_bools(s);
        }
        unsafe { bytes.as_array() }.iter().fold(0u8, |m, &b| m | b) <= 1
    }

    /// The dtype and shape kiln binds this input with.
    fn form(&self) -> (ElemType, &[usize]) {
        match self {
            Held::Scalar(_) => (ElemType::F64, &[]),
            Held::Scalar32(_) => (ElemType::F32, &[]),
            Held::ScalarC(_) => (ElemType::C128, &[]),
            Held::ScalarI(_) => (ElemType::I64, &[]),
            Held::Array(kind, a) => (kind.elem(), a.shape()),
        }
    }
}

/// `runner` on `bound` into `out`, an array of element type `A` (its kind checked by the
/// caller): [`Kernel::run_into`] of one type.
fn run_into_typed<A: numpy::Element + kiln::Element>(
    py: Python<'_>,
    runner: &FusedRunner,
    bound: &[(&str, ArrayArg<'_>)],
    out: &Bound<'_, PyAny>,
) -> PyResult<kiln::Result<()>> {
    let mut w = writable::<A>(out)?;
    let view = w.as_array_mut();
    Ok(py.detach(|| runner.run_into(bound, view)))
}

/// `run` on the elements of `out`, a C-contiguous array of `A` (its kind checked by the caller), as
/// a slice in C order; the GIL released unless the call is `small` (inputs and result below
/// [`DETACH_ELEMENTS`] elements).
fn write_slice<A: numpy::Element + Send>(
    py: Python<'_>,
    out: &Bound<'_, PyAny>,
    small: bool,
    run: impl FnOnce(&mut [A]) -> kiln::Result<()> + Send,
) -> PyResult<kiln::Result<()>> {
    let mut w = writable::<A>(out)?;
    let s = w
        .as_slice_mut()
        .map_err(|e| PyValueError::new_err(format!("out= is not C-contiguous: {e}")))?;
    Ok(if small { run(s) } else { py.detach(|| run(s)) })
}

/// `out`, an array of `A` (its kind checked by the caller), borrowed for writing: a `TypeError`
/// where it is not of `A`, a `ValueError` where it cannot be written (read-only, or borrowed).
fn writable<'py, A: numpy::Element>(out: &Bound<'py, PyAny>) -> PyResult<PyReadwriteArrayDyn<'py, A>> {
    let o = out
        .cast::<PyArrayDyn<A>>()
        .map_err(|_| PyTypeError::new_err("out= is not of the type its dtype says"))?;
    o.try_readwrite().map_err(|e| {
        PyValueError::new_err(format!(
            "out= cannot be written: {e} (is it in use by another call?)"
        ))
    })
}

/// The dtype of `obj` if kiln reads it in place: a NumPy array (or subclass) of bool, int32, int64,
/// float32 or float64 (NumPy's builtin types, native byte order) whose data is aligned.
fn kind_of<'a, 'py>(obj: &'a Bound<'py, PyAny>) -> Option<(Kind, &'a Bound<'py, numpy::PyUntypedArray>)> {
    let a = obj.cast::<numpy::PyUntypedArray>().ok()?;
    if !a.is_aligned() {
        return None;
    }
    let d = a.dtype();
    // builtin types only (a user-defined dtype numbers from NPY_USERDEF), native order
    if d.num() >= numpy::npyffi::NPY_TYPES::NPY_USERDEF as std::ffi::c_int
        || d.is_native_byteorder() == Some(false)
    {
        return None;
    }
    let kind = match (d.kind(), d.itemsize()) {
        (b'f', 8) => Kind::F64,
        (b'f', 4) => Kind::F32,
        (b'i', 8) => Kind::I64,
        (b'i', 4) => Kind::I32,
        (b'b', 1) => Kind::Bool,
        (b'c', 8) => Kind::C64,
        (b'c', 16) => Kind::C128,
        // byte strings in C order (the Python layer makes another layout contiguous)
        (b'S', w) if w > 0 && u32::try_from(w).is_ok() && a.is_c_contiguous() => Kind::Bytes(w),
        _ => return None,
    };
    Some((kind, a))
}

/// The element type of `out` if kiln writes it in place (an aligned array of a type [`kind_of`]
/// reads, other than byte strings, no two of whose elements share bytes:
/// [`claims::overlaps_itself`]) and the bytes it spans (for [`Claims::write`]).
#[allow(clippy::type_complexity)]
fn out_kind(out: &Bound<'_, PyAny>) -> Option<(Kind, Option<(usize, usize)>)> {
    match kind_of(out) {
        Some((kind, o))
            if !matches!(kind, Kind::Bytes(_)) && !claims::overlaps_itself(o, kind.itemsize()) =>
        {
            Some((kind, claims::extent(o, kind.itemsize())))
        }
        _ => None,
    }
}

/// Holds `obj`, named `name`, as an input (a `TypeError` for anything [`kind_of`] refuses and that
/// is not a Python float: the Python layer has converted what it can).
fn hold<'a, 'py>(obj: &'a Bound<'py, PyAny>, name: &str) -> PyResult<Held<'a, 'py>> {
    if let Some((kind, a)) = kind_of(obj) {
        return Ok(Held::Array(kind, a));
    }
    if let Ok(v) = obj.cast::<pyo3::types::PyFloat>() {
        return Ok(Held::Scalar([v.value()]));
    }
    if let Ok(v) = obj.cast::<pyo3::types::PyComplex>() {
        return Ok(Held::ScalarC([Complex64::new(v.real(), v.imag())]));
    }
    if is_float32_scalar(obj)? {
        // exact: a float32 converts to a float64 and back unchanged
        return Ok(Held::Scalar32([obj.extract::<f32>()?]));
    }
    if let Some(v) = int64_scalar(obj)? {
        return Ok(Held::ScalarI([v]));
    }
    let what = match obj.getattr("dtype") {
        Ok(d) => d.str()?.to_string(),
        Err(_) => obj.get_type().name()?.to_string(),
    };
    Err(PyTypeError::new_err(format!(
        "input '{name}' has type {what}: kiln computes in bool, int32, int64, float32, float64, complex64 and \
         complex128 (native byte order)"
    )))
}

/// Whether `obj` is a NumPy float32 scalar (`np.float32(0.5)`, as `x[0]` of a float32 array gives).
fn is_float32_scalar(obj: &Bound<'_, PyAny>) -> PyResult<bool> {
    static FLOAT32: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let float32 = FLOAT32.import(obj.py(), "numpy", "float32")?;
    Ok(obj.get_type().is(float32))
}

/// The value of `obj` if it is a Python int within int64 (not a bool, which is a 0-d bool array) or
/// a NumPy int64 scalar: what `np.asarray` makes a 0-d int64 array of. None for anything else (a
/// Python int beyond int64 goes to the Python layer, which refuses it).
fn int64_scalar(obj: &Bound<'_, PyAny>) -> PyResult<Option<i64>> {
    static INT64: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    if obj.is_exact_instance_of::<pyo3::types::PyInt>() {
        return Ok(obj.extract::<i64>().ok());
    }
    let int64 = INT64.import(obj.py(), "numpy", "int64")?;
    Ok(if obj.get_type().is(int64) {
        Some(obj.extract::<i64>()?)
    } else {
        None
    })
}

/// Whether `obj` is bound as it is (an aligned NumPy array of a dtype kiln computes in, a Python
/// float, complex or int within int64, or a NumPy float32 or int64 scalar), so that the Python
/// layer's conversion (`kiln._core.as_input`) need not be called.
fn holds_as_is(obj: &Bound<'_, PyAny>) -> bool {
    kind_of(obj).is_some()
        || obj.is_instance_of::<pyo3::types::PyFloat>()
        || obj.is_instance_of::<pyo3::types::PyComplex>()
        || is_float32_scalar(obj).unwrap_or(false)
        || int64_scalar(obj).is_ok_and(|v| v.is_some())
}

/// The value of `name` in `local`, else in `global` (each a dict or another mapping, or None), as
/// numexpr resolves names; a `KeyError` naming it where neither has it.
fn lookup<'py>(
    name: &Bound<'py, PyString>,
    local: Option<&Bound<'py, PyAny>>,
    global: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    for scope in [local, global].into_iter().flatten() {
        if let Ok(d) = scope.cast::<PyDict>() {
            if let Some(v) = d.get_item(name)? {
                return Ok(v);
            }
            continue;
        }
        // another mapping (a frame's locals proxy on newer Pythons)
        match scope.get_item(name) {
            Ok(v) => return Ok(v),
            Err(e) if e.is_instance_of::<PyKeyError>(scope.py()) => {}
            Err(e) => return Err(e),
        }
    }
    Err(PyKeyError::new_err(name.clone().unbind()))
}

/// The Python layer's conversion of a value kiln does not bind as it is (`kiln._core.as_input`).
fn as_input<'py>(py: Python<'py>) -> PyResult<&'py Bound<'py, PyAny>> {
    static AS_INPUT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    AS_INPUT.import(py, "kiln._core", "as_input")
}

/// Calls through a prepared handle whose inputs and result all have fewer elements than this run
/// without releasing the GIL, as NumPy's ufuncs do below 500 elements: releasing and taking it back
/// costs about 0.1 us, a fifth of such a call, while another Python thread gains at most that long.
const DETACH_ELEMENTS: usize = 1024;

thread_local! {
    /// This thread's last `evaluate` (a [`Kernel`]) or the state the Python layer recorded for its
    /// other calls (`set_last`), for `re_evaluate`. A Python thread is an OS thread, so a thread-local
    /// is per Python thread, as numexpr's record is.
    static LAST: std::cell::RefCell<Option<Py<PyAny>>> = const { std::cell::RefCell::new(None) };
}

/// This thread's last expression for `re_evaluate`: a `Kernel` (an `evaluate` that took the common
/// path) or what `set_last` recorded; None before any.
#[pyfunction]
fn last(py: Python<'_>) -> Option<Py<PyAny>> {
    LAST.with_borrow(|l| l.as_ref().map(|s| s.clone_ref(py)))
}

/// Records `state` as this thread's last expression (the Python layer's `evaluate` with `out=` or
/// other options, and `validate`).
#[pyfunction]
fn set_last(state: Py<PyAny>) {
    LAST.with_borrow_mut(|l| *l = Some(state));
}

/// `kiln.numexpr`'s compiled expressions for its current thread count (a dict: the text to
/// `(kernel, names)`), registered by `kiln.numexpr` at import and by `set_num_threads`
/// ([`set_evaluate_cache`]); [`evaluate`] looks a call's expression up there.
static EVALUATE_CACHE: Mutex<Option<Py<PyDict>>> = Mutex::new(None);

/// Registers `cache` (`kiln.numexpr`'s dict of compiled expressions for its current thread count)
/// as the one [`evaluate`] looks expressions up in.
#[pyfunction]
fn set_evaluate_cache(cache: Py<PyDict>) {
    *EVALUATE_CACHE.lock().expect("the evaluate cache lock") = Some(cache);
}

/// The compiled kernel of `ex` in the registered cache, if it is there.
fn cached_kernel<'py>(ex: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, Kernel>>> {
    let py = ex.py();
    // the dict is taken out of the lock before the lookup, which may run Python code (a str
    // subclass's __eq__) that calls evaluate again
    let Some(cache) = EVALUATE_CACHE
        .lock()
        .expect("the evaluate cache lock")
        .as_ref()
        .map(|c| c.clone_ref(py))
    else {
        return Ok(None);
    };
    let Some(hit) = cache.bind(py).get_item(ex)? else {
        return Ok(None);
    };
    let Ok(hit) = hit.cast_into::<PyTuple>() else {
        return Ok(None);
    };
    Ok(hit.get_item(0)?.cast_into::<Kernel>().ok())
}

/// The caller's frame's locals (`globals` false) or globals (true): the frame that called
/// [`evaluate`], which being a builtin makes no frame of its own; None where there is no Python
/// frame. The locals of a function's frame are a snapshot (as `frame.f_locals` in Python), taken
/// only when needed: it holds a reference to each local until the frame ends or takes another.
fn caller_scope(py: Python<'_>, globals: bool) -> PyResult<Option<Bound<'_, PyAny>>> {
    // SAFETY: both return a borrowed reference (owned by the executing frame, which outlives this
    // call) or NULL (no frame, or an error set); `from_borrowed_ptr_or_opt` takes a new reference.
    let scope = unsafe {
        let scope = if globals {
            pyo3::ffi::PyEval_GetGlobals()
        } else {
            pyo3::ffi::PyEval_GetLocals()
        };
        Bound::from_borrowed_ptr_or_opt(py, scope)
    };
    match scope {
        Some(scope) => Ok(Some(scope)),
        None => PyErr::take(py).map_or(Ok(None), Err),
    }
}

/// Evaluates the array expression `ex` and returns a new array (or `out`, written in place).
///
/// Names are looked up in `local_dict`, then `global_dict`; each defaults to the caller's frame.
/// Values may be NumPy arrays of bool, int32, int64, float32 or float64 (any strides; other
/// integer types widened), 0-d arrays, NumPy scalars or Python numbers; shapes broadcast as
/// NumPy's. `out`, if given, must have the result's shape (or one it broadcasts to) and a dtype the
/// result casts to under `casting` ('same_kind' by default, as numexpr 2.14's). `order='K'` (the default) returns a result laid out as the inputs where they all
/// share one (Fortran or transposed inputs of an elementwise expression give a Fortran or
/// transposed result, as numexpr's), else in C order; `order='C'` and `order='F'` force one.
/// `sanitize` (numexpr's sanitiser of the text: `;`, `:`, `[` other than kiln's `v[i]`, dunders and
/// attribute access other than `.real` / `.imag` are a `ValueError` unless it is off; kiln's parser
/// never evaluates Python, but refuses what numexpr refuses), `optimization` ('none', 'moderate', 'aggressive') and
/// `truediv` (False, True, 'auto') are numexpr's and checked as numexpr checks them: kiln always
/// optimises, and `/` is true division (as numexpr's on Python 3). `disable_cache` is accepted:
/// kiln's cache is bounded and keeps no reference to inputs or `out`.
///
/// Raises `KeyError` for a name found nowhere, `SyntaxError` (with the position) or `ValueError`
/// for a bad expression, `ValueError` for shapes that do not broadcast or an unknown keyword,
/// `TypeError` for an unsupported type, `OverflowError` for an integer literal out of range.
///
/// (`kiln.numexpr.evaluate` and `kiln.evaluate` are this builtin: the common call, an expression
/// compiled before with no `order` other than 'K' nor `_frame_depth` given, and either no `out` and
/// `casting` 'same_kind' (numexpr 2.14's default) or 'safe', or an array `out` and any casting,
/// runs here without a Python frame, whatever `sanitize`, `disable_cache` and the valid values of
/// `optimization` and `truediv`, which change nothing there (an `out` it cannot write as it is, one
/// read-only or overlapping an input, goes on to the Python layer); any other goes to
/// `kiln.numexpr._evaluate`.)
#[pyfunction]
#[pyo3(
    signature = (ex, local_dict=None, global_dict=None, out=None, order=None, casting=None, sanitize=None, _frame_depth=None, optimization=None, truediv=None, disable_cache=None, **kwargs),
    text_signature = "(ex, local_dict=None, global_dict=None, out=None, order='K', casting='same_kind', sanitize=None, _frame_depth=1, optimization='aggressive', truediv='auto', disable_cache=False, **kwargs)"
)]
#[allow(clippy::too_many_arguments)] // numexpr's signature
fn evaluate<'py>(
    py: Python<'py>,
    ex: &Bound<'py, PyAny>,
    local_dict: Option<Bound<'py, PyAny>>,
    global_dict: Option<Bound<'py, PyAny>>,
    #[pyo3(from_py_with = given)] out: Option<Bound<'py, PyAny>>,
    #[pyo3(from_py_with = given)] order: Option<Bound<'py, PyAny>>,
    #[pyo3(from_py_with = given)] casting: Option<Bound<'py, PyAny>>,
    #[pyo3(from_py_with = given)] sanitize: Option<Bound<'py, PyAny>>,
    #[pyo3(from_py_with = given)] _frame_depth: Option<Bound<'py, PyAny>>,
    #[pyo3(from_py_with = given)] optimization: Option<Bound<'py, PyAny>>,
    #[pyo3(from_py_with = given)] truediv: Option<Bound<'py, PyAny>>,
    #[pyo3(from_py_with = given)] disable_cache: Option<Bound<'py, PyAny>>,
    kwargs: Option<Bound<'py, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let is_str = |v: &Option<Bound<'py, PyAny>>, allowed: &[&str]| {
        v.as_ref().is_none_or(|v| {
            v.cast::<PyString>()
                .is_ok_and(|s| s.to_str().is_ok_and(|s| allowed.contains(&s)))
        })
    };
    // `out` given as an array (written in place here where it can be; an explicit `out=None` goes
    // to the Python layer)
    let into = out.as_ref().filter(|o| o.cast::<numpy::PyUntypedArray>().is_ok());
    // the castings of a result into `out` (NumPy's), which change nothing without one
    let castings: &[&str] = if into.is_some() {
        &CASTINGS
    } else {
        &["safe", "same_kind"]
    };
    // the options that change nothing in the builtin's call where their values are valid
    let common = _frame_depth.is_none()
        && kwargs.as_ref().is_none_or(|k| k.is_empty())
        && is_str(&order, &["K"])
        && is_str(&casting, castings)
        && is_str(&optimization, &["none", "moderate", "aggressive"])
        && truediv.as_ref().is_none_or(|t| {
            t.cast::<pyo3::types::PyBool>().is_ok()
                || t.cast::<PyString>()
                    .is_ok_and(|s| s.to_str().is_ok_and(|s| s == "auto"))
        });
    let kernel = if common && (out.is_none() || into.is_some()) {
        cached_kernel(ex)?
    } else {
        None
    };
    if let Some(kernel) = kernel {
        let k = kernel.get();
        let (mut local, mut global) = (local_dict.clone(), global_dict.clone());
        if !k.py_names.is_empty() {
            if local.is_none() {
                local = caller_scope(py, false)?;
            }
            if global.is_none() {
                global = caller_scope(py, true)?;
            }
        }
        // without a frame (called from outside Python code) the Python layer raises as it does
        if k.py_names.is_empty() || (local.is_some() && global.is_some()) {
            let Some(into) = into else {
                let result = k.call_with(py, local.as_ref(), global.as_ref())?;
                // recorded only once it ran: a failed call leaves the last expression as it was
                LAST.with_borrow_mut(|l| *l = Some(kernel.clone().into_any().unbind()));
                return Ok(result);
            };
            // numexpr 2.14's default casting
            let casting_given = casting
                .clone()
                .unwrap_or_else(|| PyString::new(py, "same_kind").into_any());
            if k.evaluate_into(py, local.as_ref(), global.as_ref(), into, &casting_given)? {
                // recorded as the Python layer records a call with `out` (`_evaluate`): the
                // kernel, its names, a weak reference to `out`, the order and the casting
                let names = PyTuple::new(py, k.py_names.iter().map(|n| n.bind(py)))?;
                let weak = pyo3::types::PyWeakrefReference::new(into)?;
                let state = PyTuple::new(
                    py,
                    [
                        kernel.into_any(),
                        names.into_any(),
                        weak.into_any(),
                        PyString::new(py, "K").into_any(),
                        casting_given,
                    ],
                )?;
                LAST.with_borrow_mut(|l| *l = Some(state.into_any().unbind()));
                return Ok(into.clone().unbind());
            }
        }
    }
    static SLOW: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let slow = SLOW.import(py, "kiln.numexpr", "_evaluate")?;
    let options = [
        ("out", out),
        ("order", order),
        ("casting", casting),
        ("sanitize", sanitize),
        ("_frame_depth", _frame_depth),
        ("optimization", optimization),
        ("truediv", truediv),
        ("disable_cache", disable_cache),
    ];
    let slow_kwargs = kwargs.unwrap_or_else(|| PyDict::new(py));
    for (name, value) in options {
        if let Some(v) = value {
            slow_kwargs.set_item(name, v)?;
        }
    }
    slow.call((ex, local_dict, global_dict), Some(&slow_kwargs))
        .map(Bound::unbind)
}

/// NumPy's castings of a result into `out`.
const CASTINGS: [&str; 5] = ["no", "equiv", "safe", "same_kind", "unsafe"];

/// An optional argument as given, `None` included (for [`evaluate`], which tells an argument
/// given as `None` from one not given, as the Python layer's defaults do).
fn given<'py>(v: &Bound<'py, PyAny>) -> PyResult<Option<Bound<'py, PyAny>>> {
    Ok(Some(v.clone()))
}

/// Results of at least this many bytes get their memory from kiln's output pool (see [`Pooled`]);
/// smaller ones from NumPy, whose allocator reuses small blocks itself.
const POOL_MIN_BYTES: usize = 4 << 20;
/// The pool keeps at most this many buffers, and this many bytes in all.
const POOL_BUFFERS: usize = 4;
const POOL_BYTES: usize = 512 << 20;

/// The memory of a large result: the base object of the NumPy array kiln returns. When NumPy frees
/// the array (and every view of it), this object is freed and its buffer goes back to a small
/// bounded pool, where the next call of that size and dtype finds it: its pages are already mapped
/// and written, so the call does not pay the OS for zeroing fresh pages (glibc returns blocks above
/// 32 MiB to the OS at free, and a fresh 80 MB output cost about twice the kernel that fills it).
#[pyclass(frozen, module = "kiln._kiln")]
struct Pooled {
    buffer: Option<Buffer>,
}

/// A pooled buffer of one dtype.
enum Buffer {
    F64(Vec<f64>),
    F32(Vec<f32>),
}

impl Buffer {
    fn bytes(&self) -> usize {
        match self {
            Buffer::F64(v) => v.len() * 8,
            Buffer::F32(v) => v.len() * 4,
        }
    }
}

/// A float type kiln's results come in, with its pool slot.
trait PoolElem: kiln::Float + kiln_jit::Elem + numpy::Element {
    /// The kind of a NumPy array of this type.
    const KIND: Kind;
    /// A Python float's value as a slice of one of this type (None for float32: kiln binds a
    /// Python float as float64).
    fn scalar(v: &[f64; 1]) -> Option<&[Self]>;
    /// A NumPy float32 scalar's value as a slice of one of this type (None for float64).
    fn scalar32(v: &[f32; 1]) -> Option<&[Self]>;
    fn wrap(v: Vec<Self>) -> Buffer;
    fn unwrap(b: Buffer) -> Result<Vec<Self>, Buffer>;
    /// The length of a buffer of this type; None for the other.
    fn len_of(b: &Buffer) -> Option<usize>;
}

impl PoolElem for f64 {
    const KIND: Kind = Kind::F64;
    fn scalar(v: &[f64; 1]) -> Option<&[f64]> {
        Some(v)
    }
    fn scalar32(_: &[f32; 1]) -> Option<&[f64]> {
        None
    }
    fn wrap(v: Vec<f64>) -> Buffer {
        Buffer::F64(v)
    }
    fn unwrap(b: Buffer) -> Result<Vec<f64>, Buffer> {
        match b {
            Buffer::F64(v) => Ok(v),
            other => Err(other),
        }
    }
    fn len_of(b: &Buffer) -> Option<usize> {
        match b {
            Buffer::F64(v) => Some(v.len()),
            Buffer::F32(_) => None,
        }
    }
}

impl PoolElem for f32 {
    const KIND: Kind = Kind::F32;
    fn scalar(_: &[f64; 1]) -> Option<&[f32]> {
        None
    }
    fn scalar32(v: &[f32; 1]) -> Option<&[f32]> {
        Some(v)
    }
    fn wrap(v: Vec<f32>) -> Buffer {
        Buffer::F32(v)
    }
    fn unwrap(b: Buffer) -> Result<Vec<f32>, Buffer> {
        match b {
            Buffer::F32(v) => Ok(v),
            other => Err(other),
        }
    }
    fn len_of(b: &Buffer) -> Option<usize> {
        match b {
            Buffer::F32(v) => Some(v.len()),
            Buffer::F64(_) => None,
        }
    }
}

/// The pool of buffers freed by NumPy, the most recently freed last.
fn pool() -> &'static Mutex<Vec<Buffer>> {
    static POOL: OnceLock<Mutex<Vec<Buffer>>> = OnceLock::new();
    POOL.get_or_init(Default::default)
}

/// A buffer of `n` elements of `T` for a result: one from the pool if it has one of that size,
/// else a new one (untouched zero pages, advised to use huge pages: kiln-jit's fresh output).
fn pooled_buffer<T: PoolElem>(n: usize) -> kiln::Result<Vec<T>> {
    let mut pool = pool().lock().expect("the output pool lock");
    if let Some(i) = pool.iter().rposition(|b| T::len_of(b) == Some(n))
        && let Ok(v) = T::unwrap(pool.remove(i))
    {
        return Ok(v);
    }
    drop(pool);
    kiln_jit::zeroed_output::<T>(n).map_err(|e| Error::Jit(e.to_string()))
}

impl Drop for Pooled {
    fn drop(&mut self) {
        let Some(b) = self.buffer.take() else {
            return;
        };
        let bytes = b.bytes();
        if bytes > POOL_BYTES {
            return;
        }
        let mut pool = pool().lock().expect("the output pool lock");
        // the oldest go first, until this one fits both bounds
        while pool.len() >= POOL_BUFFERS || pool.iter().map(Buffer::bytes).sum::<usize>() + bytes > POOL_BYTES
        {
            pool.remove(0);
        }
        pool.push(b);
    }
}

/// The number of buffers in kiln's output pool and their bytes (for tests and diagnostics).
#[pyfunction]
fn output_pool() -> (usize, usize) {
    let pool = pool().lock().expect("the output pool lock");
    (pool.len(), pool.iter().map(Buffer::bytes).sum())
}

/// Frees the buffers in kiln's output pool (results still alive keep theirs).
#[pyfunction]
fn clear_output_pool() {
    pool().lock().expect("the output pool lock").clear();
}

/// A domain as `(kind, lo, hi)`: see [`kiln_cli::bench::functions::Domain::parts`].
type Domain = (&'static str, f64, f64);

/// One function of the table: its name, its expression, the domains of `x` and of `y`.
type FunctionRow = (&'static str, String, [Domain; 2], Option<[Domain; 2]>);

/// `kiln bench --functions`' table, for `python -m kiln.bench --functions`: per function its name,
/// its expression (`tanh(x)`, `x ** y`: NumPy's and numexpr's names too), and the domains of `x`
/// and of `y` (`None` for one argument), each as `[f64's, f32's]`. One table for both benchmarks.
#[pyfunction]
fn bench_functions() -> Vec<FunctionRow> {
    kiln_cli::bench::functions::FUNCTIONS
        .iter()
        .map(|f| {
            (
                f.name,
                f.form.expr(),
                f.x.map(|d| d.parts()),
                f.y.map(|y| y.map(|d| d.parts())),
            )
        })
        .collect()
}

/// The most inputs a call on slices passes on the stack (more take the call through views).
const SLICE_INPUTS: usize = 8;

/// A kiln result as a NumPy array (moved, not copied).
fn to_numpy(py: Python<'_>, out: Output) -> PyResult<Py<PyAny>> {
    use numpy::PyArray;
    Ok(match out {
        Output::F64(a) => PyArray::from_owned_array(py, a).into_any().unbind(),
        Output::F32(a) => PyArray::from_owned_array(py, a).into_any().unbind(),
        Output::I64(a) => PyArray::from_owned_array(py, a).into_any().unbind(),
        Output::I32(a) => PyArray::from_owned_array(py, a).into_any().unbind(),
        Output::Bool(a) => PyArray::from_owned_array(py, a).into_any().unbind(),
        Output::C64(a) => PyArray::from_owned_array(py, a).into_any().unbind(),
        Output::C128(a) => PyArray::from_owned_array(py, a).into_any().unbind(),
        // NumPy's `S<width>` array over a copy of the strings (writable, as numexpr's)
        Output::Bytes(b) => {
            let numpy = py.import("numpy")?;
            let buffer = pyo3::types::PyByteArray::new(py, &b.data);
            let dtype = format!("S{}", b.width);
            let flat = numpy.call_method1("frombuffer", (buffer, dtype))?;
            flat.call_method1("reshape", (b.shape.clone(),))?.unbind()
        }
    })
}

/// A compiled expression: call it with its inputs, in the order of [`Kernel::names`].
///
/// A call binds its inputs to the runner's [`Prepared`] handle of their form
/// ([`FusedRunner::bound`]: made on the first call of that form, from that call's run, and kept
/// with the runner's few others), which runs the compiled code with no name lookup or
/// specialisation, into an output NumPy allocates (no zeroing, and NumPy's own cache of small
/// blocks).
#[pyclass(frozen, module = "kiln._kiln")]
struct Kernel {
    runner: FusedRunner,
    expr: String,
    /// The input names as interned Python strings, for the lookups of [`Kernel::call`].
    py_names: Vec<Py<PyString>>,
    /// An integer literal of the text beyond int64, refused beside integer inputs (see [`literals`]).
    beyond_int64: Option<String>,
}

#[pymethods]
impl Kernel {
    /// The input names, in order of first appearance in the expression.
    #[getter]
    fn names(&self) -> Vec<String> {
        self.runner.input_names().to_vec()
    }

    /// The expression's text.
    #[getter]
    fn expression(&self) -> &str {
        &self.expr
    }

    /// The number of kernels the expression runs as (more than one when a reduction feeds later work).
    #[getter]
    fn stages(&self) -> usize {
        self.runner.pipeline().stages.len()
    }

    /// Runs on `args` (one array or Python float per name, in order, as `kiln._core.as_input`
    /// makes them) and returns a new array.
    fn run(&self, py: Python<'_>, args: Vec<Bound<'_, PyAny>>) -> PyResult<Py<PyAny>> {
        let (held, _reading) = self.hold_all(&args)?;
        if let Some(result) = self.run_contiguous(py, &held) {
            return result;
        }
        self.run_held(py, &held)
    }

    /// Runs on the inputs given by name in the dict `arrays` (`kernel(**arrays)`): a `KeyError`
    /// naming an input it lacks, a `TypeError` naming those it has and the expression does not
    /// use. Values are bound as [`Kernel::evaluate`] binds them. Returns a new array.
    fn call(&self, py: Python<'_>, arrays: Bound<'_, PyDict>) -> PyResult<Py<PyAny>> {
        self.check_names(&arrays)?;
        self.call_with(py, Some(arrays.as_any()), None)
    }

    /// numexpr's `evaluate` once its dicts are known: runs on the inputs found by name in `local`,
    /// then in `global` (dicts or other mappings; a `KeyError` for a name in neither), as numexpr
    /// resolves names, and becomes this thread's last expression (for `re_evaluate`, see
    /// [`last`]). Values other than aligned arrays of kiln's dtypes and Python floats go through
    /// `kiln._core.as_input` first. Returns a new array.
    #[pyo3(signature = (local, global=None))]
    fn evaluate(
        slf: &Bound<'_, Self>,
        local: Option<Bound<'_, PyAny>>,
        global: Option<Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        LAST.with_borrow_mut(|l| *l = Some(slf.clone().into_any().unbind()));
        slf.get().call_with(slf.py(), local.as_ref(), global.as_ref())
    }

    /// Runs on `args` straight into `out`, a writeable aligned array of the result's shape and
    /// element type (bool, int32, int64, float32, float64, complex64 or complex128; a C-contiguous
    /// one is written by the compiled pass itself, another layout assigned). A `ValueError`
    /// starting "result mismatch" where the result's shape or type is not `out`'s (the Python
    /// layer then casts), a `TypeError` for an array of another type.
    fn run_into(&self, py: Python<'_>, args: Vec<Bound<'_, PyAny>>, out: Bound<'_, PyAny>) -> PyResult<()> {
        let (held, _reading) = self.hold_all(&args)?;
        let Some(kind) = out_kind(&out) else {
            return Err(PyTypeError::new_err(
                "out= must be an aligned array of bool, int32, int64, float32, float64, complex64 or complex128 \
                 whose elements do not overlap",
            ));
        };
        // `out` claimed for writing: refused if a call in flight (this one's inputs included)
        // reads or writes any of its bytes
        let _writing = Claims::write(kind.1)?;
        // a result of another shape or type than out's is `Error::Output` or `OutputShape`
        // ("result mismatch"), a ValueError: the Python layer then checks and casts
        self.write_out(py, &held, kind.0, &out)?
            .map_err(|e| py_err(e, &self.expr))
    }

    /// Specialises and compiles the kernels for inputs of this form without running them (for
    /// `validate`): shapes that do not broadcast, axes out of range and the like are found here.
    fn prepare(&self, py: Python<'_>, args: Vec<Bound<'_, PyAny>>) -> PyResult<()> {
        let (held, _reading) = self.hold_all(&args)?;
        let copies = bool_copies(&held);
        let bound = self.bind(&held, &copies);
        py.detach(|| self.runner.prepare(&bound))
            .map_err(|e| py_err(e, &self.expr))
    }

    /// What kiln makes of the expression for these inputs: the plan of kernels, each kernel's IR and
    /// broadcast plan, and with `clif` / `asm` the last kernel's Cranelift IR and machine code.
    #[pyo3(signature = (args, clif=false, asm=false))]
    fn explain(
        &self,
        py: Python<'_>,
        args: Vec<Bound<'_, PyAny>>,
        clif: bool,
        asm: bool,
    ) -> PyResult<String> {
        let (held, _reading) = self.hold_all(&args)?;
        let copies = bool_copies(&held);
        let bound = self.bind(&held, &copies);
        py.detach(|| {
            self.runner
                .explain_text(&bound, kiln::ExplainOptions { clif, asm })
        })
        .map_err(|e| py_err(e, &self.expr))
    }

    fn __repr__(&self) -> String {
        format!(
            "kiln.Kernel({:?}, names={:?})",
            self.expr,
            self.runner.input_names()
        )
    }
}

impl Kernel {
    /// A `TypeError` naming the inputs in `arrays` (a call's by name) that the expression does not
    /// use, where it has every one the expression uses (a name missing is the lookup's `KeyError`
    /// first, as the Python layer's `Kernel._args` raises it).
    fn check_names(&self, arrays: &Bound<'_, PyDict>) -> PyResult<()> {
        if arrays.len() != self.py_names.len() {
            for name in &self.py_names {
                if !arrays.contains(name.bind(arrays.py()))? {
                    return Ok(());
                }
            }
            let names = self.runner.input_names();
            let mut extra: Vec<String> = Vec::new();
            for k in arrays.keys() {
                let k = k.str()?.to_string();
                if !names.contains(&k) {
                    extra.push(k);
                }
            }
            if !extra.is_empty() {
                extra.sort();
                let uses = if names.is_empty() {
                    "no inputs".to_string()
                } else {
                    names.join(", ")
                };
                return Err(PyTypeError::new_err(format!(
                    "unexpected input(s) {}: the expression uses {uses}",
                    extra.join(", ")
                )));
            }
        }
        Ok(())
    }

    /// Looks the inputs up (see [`Kernel::evaluate`]), binds and runs them.
    fn call_with(
        &self,
        py: Python<'_>,
        local: Option<&Bound<'_, PyAny>>,
        global: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Py<PyAny>> {
        let values = self.values(py, local, global)?;
        let (held, _reading) = self.hold_all(&values)?;
        if let Some(result) = self.run_contiguous(py, &held) {
            return result;
        }
        self.run_held(py, &held)
    }

    /// The inputs' values found by name in `local`, then `global` (a `KeyError` for a name in
    /// neither), those kiln does not bind as they are converted by `kiln._core.as_input`.
    fn values<'py>(
        &self,
        py: Python<'py>,
        local: Option<&Bound<'py, PyAny>>,
        global: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Vec<Bound<'py, PyAny>>> {
        let mut values = Vec::with_capacity(self.py_names.len());
        for name in &self.py_names {
            let name = name.bind(py);
            let v = lookup(name, local, global)?;
            values.push(if holds_as_is(&v) {
                v
            } else {
                as_input(py)?.call1((name, v, &self.expr))?
            });
        }
        Ok(values)
    }

    /// numexpr's `evaluate` with `out=` in one step (the builtin [`evaluate`]'s call, and a
    /// `Kernel`'s call with `out=`, [`Callable`]): the inputs looked up as [`Kernel::call_with`]
    /// does and the result written straight into `out` ([`Kernel::write_out`]), or where `out` is
    /// of another dtype or shape, a new result written into it by the Python layer's
    /// `finish_out` (cast under `casting`, broadcast, or refused as `run_out` refuses it). Ok(false),
    /// with nothing written, where `out` cannot be written as it is: not an aligned array of kiln's
    /// types, read-only, overlapping an input or in use by another call (the Python layer then
    /// writes through a temporary or raises).
    fn evaluate_into(
        &self,
        py: Python<'_>,
        local: Option<&Bound<'_, PyAny>>,
        global: Option<&Bound<'_, PyAny>>,
        out: &Bound<'_, PyAny>,
        casting: &Bound<'_, PyAny>,
    ) -> PyResult<bool> {
        let values = self.values(py, local, global)?;
        let Some((kind, extent)) = out_kind(out) else {
            return Ok(false);
        };
        let (held, _reading) = self.hold_all(&values)?;
        let Ok(_writing) = Claims::write(extent) else {
            return Ok(false);
        };
        match self.write_out(py, &held, kind, out) {
            Ok(Ok(())) => Ok(true),
            // a read-only or borrowed `out`
            Err(_) => Ok(false),
            // a result of another shape or type: made, then cast or broadcast into `out` (still
            // claimed for writing, as the inputs for reading)
            Ok(Err(Error::Output(_) | Error::OutputShape { .. })) => {
                let result = match self.run_contiguous(py, &held) {
                    Some(result) => result?,
                    None => self.run_held(py, &held)?,
                };
                static FINISH_OUT: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
                FINISH_OUT
                    .import(py, "kiln._core", "finish_out")?
                    .call1((result, out, casting))?;
                Ok(true)
            }
            Ok(Err(e)) => Err(py_err(e, &self.expr)),
        }
    }

    /// Runs on `held` into `out`, an array of the element type `kind` (claimed for writing by the
    /// caller). A `PyErr` where `out` is not of that type or cannot be written; the run's own error
    /// otherwise (`Error::OutputShape` or `Error::Output` for a result of another shape or type than
    /// `out`'s).
    fn write_out(
        &self,
        py: Python<'_>,
        held: &[Held<'_, '_>],
        kind: Kind,
        out: &Bound<'_, PyAny>,
    ) -> PyResult<kiln::Result<()>> {
        if let Some(written) = self.write_contiguous(py, held, kind, out) {
            return written;
        }
        let copies = bool_copies(held);
        let bound = self.bind(held, &copies);
        match kind {
            Kind::F64 => run_into_typed::<f64>(py, &self.runner, &bound, out),
            Kind::F32 => run_into_typed::<f32>(py, &self.runner, &bound, out),
            Kind::I64 => run_into_typed::<i64>(py, &self.runner, &bound, out),
            Kind::I32 => run_into_typed::<i32>(py, &self.runner, &bound, out),
            Kind::Bool => run_into_typed::<bool>(py, &self.runner, &bound, out),
            Kind::C64 => run_into_typed::<Complex32>(py, &self.runner, &bound, out),
            Kind::C128 => run_into_typed::<Complex64>(py, &self.runner, &bound, out),
            Kind::Bytes(_) => Err(PyTypeError::new_err(
                "out= of byte strings is not written in place",
            )),
        }
    }

    /// [`Kernel::write_out`] through the handle bound to C-contiguous inputs of `held`'s forms
    /// (the call [`Kernel::run_stored`] makes, into `out`'s elements rather than a new array),
    /// where every input is C-contiguous (or a scalar), such a handle exists, and `out` is
    /// C-contiguous with the handle's result type and shape; None otherwise (the general call
    /// then binds `out` as a view, and says how a result of another type or shape differs).
    fn write_contiguous(
        &self,
        py: Python<'_>,
        held: &[Held<'_, '_>],
        kind: Kind,
        out: &Bound<'_, PyAny>,
    ) -> Option<PyResult<kiln::Result<()>>> {
        let (parts, n, handle) = self.stored_parts(held)?;
        let parts = &parts[..n];
        let o = out.cast::<numpy::PyUntypedArray>().ok()?;
        if handle.output_type() != kind.elem() || handle.output_shape() != o.shape() || !o.is_c_contiguous() {
            return None;
        }
        let small = o.len() < DETACH_ELEMENTS && parts.iter().all(|p| p.len() < DETACH_ELEMENTS);
        let run = |s: OutSlice<'_>| handle.run_stored(parts, s);
        Some(match kind {
            Kind::F64 => write_slice::<f64>(py, out, small, |s| run(OutSlice::F64(s))),
            Kind::F32 => write_slice::<f32>(py, out, small, |s| run(OutSlice::F32(s))),
            Kind::I64 => write_slice::<i64>(py, out, small, |s| run(OutSlice::I64(s))),
            Kind::I32 => write_slice::<i32>(py, out, small, |s| run(OutSlice::I32(s))),
            Kind::Bool => write_slice::<bool>(py, out, small, |s| run(OutSlice::Bool(s))),
            Kind::C64 => write_slice::<Complex32>(py, out, small, |s| run(OutSlice::C64(s))),
            Kind::C128 => write_slice::<Complex64>(py, out, small, |s| run(OutSlice::C128(s))),
            Kind::Bytes(_) => return None,
        })
    }

    fn new(py: Python<'_>, runner: FusedRunner, expr: String) -> Kernel {
        let py_names = runner
            .input_names()
            .iter()
            .map(|n| PyString::intern(py, n).unbind())
            .collect();
        let beyond_int64 = literals::beyond_int64(&expr).map(str::to_string);
        Kernel {
            runner,
            expr,
            py_names,
            beyond_int64,
        }
    }

    /// Runs on `held` (in the order of the names) and returns a new array: through the handle of
    /// their form into an array NumPy allocates, or, on the first call of a form, through the run
    /// that prepares its handle. Fortran or transposed inputs are read in memory order by their
    /// handle, which gives the result in their layout (NumPy's order='K').
    fn run_held(&self, py: Python<'_>, held: &[Held<'_, '_>]) -> PyResult<Py<PyAny>> {
        let copies = bool_copies(held);
        self.run_args(py, views(held, &copies))
    }

    /// [`Kernel::run_held`] on the inputs as kiln reads them.
    fn run_args(&self, py: Python<'_>, args: Vec<ArrayArg<'_>>) -> PyResult<Py<PyAny>> {
        let named: Vec<(&str, ArrayArg<'_>)> = self
            .runner
            .input_names()
            .iter()
            .map(String::as_str)
            .zip(args.iter().cloned())
            .collect();
        // the runner's handle of this form, found holding the GIL; on the first call of a form,
        // bound by that call's run (the GIL released), whose result is this call's
        let handle = match self.runner.kept(&named) {
            Some(handle) => handle,
            None => {
                let (handle, out) = py
                    .detach(|| self.runner.bound(&named))
                    .map_err(|e| py_err(e, &self.expr))?;
                if let Some(out) = out {
                    return to_numpy(py, out);
                }
                handle
            }
        };
        let small = args
            .iter()
            .all(|a| a.shape().iter().product::<usize>() < DETACH_ELEMENTS);
        fn view<'o, A>(shape: &[usize], out: &'o mut [A]) -> kiln::Result<ndarray::ArrayViewMutD<'o, A>> {
            ndarray::ArrayViewMutD::from_shape(shape, out).map_err(|e| Error::Output(e.to_string()))
        }
        match handle.output_type() {
            // a handle in memory order allocates its result in the inputs' layout
            _ if handle.memory_order().is_some() => {
                let out = py
                    .detach(|| handle.run(&args))
                    .map_err(|e| py_err(e, &self.expr))?;
                to_numpy(py, out)
            }
            ElemType::F64 => self.run_fresh::<f64>(py, &handle, small, |out| {
                handle.run_into(&args, view(handle.output_shape(), out)?)
            }),
            ElemType::F32 => self.run_fresh::<f32>(py, &handle, small, |out| {
                handle.run_into(&args, view(handle.output_shape(), out)?)
            }),
            // the other types into an array NumPy allocates, as the small float results
            ElemType::I64 => self.run_numpy::<i64>(py, &handle, small, |out| {
                handle.run_into_out(&args, OutSlice::I64(out))
            }),
            ElemType::I32 => self.run_numpy::<i32>(py, &handle, small, |out| {
                handle.run_into_out(&args, OutSlice::I32(out))
            }),
            ElemType::Bool => self.run_numpy::<bool>(py, &handle, small, |out| {
                handle.run_into_out(&args, OutSlice::Bool(out))
            }),
            ElemType::C64 => self.run_numpy::<Complex32>(py, &handle, small, |out| {
                handle.run_into_out(&args, OutSlice::C64(out))
            }),
            ElemType::C128 => self.run_numpy::<Complex64>(py, &handle, small, |out| {
                handle.run_into_out(&args, OutSlice::C128(out))
            }),
            _ => {
                let out = py
                    .detach(|| handle.run(&args))
                    .map_err(|e| py_err(e, &self.expr))?;
                to_numpy(py, out)
            }
        }
    }

    /// Runs `run` (a call of `handle`) into a new NumPy array of the handle's result shape and
    /// dtype `A`, given as its elements in C order: a large one in a buffer of kiln's output pool, a
    /// small one allocated by NumPy. The GIL is released unless the inputs (`small_inputs`) and the
    /// result all have fewer than [`DETACH_ELEMENTS`] elements.
    fn run_fresh<A: PoolElem>(
        &self,
        py: Python<'_>,
        handle: &Prepared,
        small_inputs: bool,
        run: impl FnOnce(&mut [A]) -> kiln::Result<()> + Send,
    ) -> PyResult<Py<PyAny>> {
        let shape = handle.output_shape();
        let n: usize = shape.iter().product();
        if n * std::mem::size_of::<A>() >= POOL_MIN_BYTES {
            let mut buffer = pooled_buffer::<A>(n).map_err(|e| py_err(e, &self.expr))?;
            py.detach(|| run(&mut buffer[..]))
                .map_err(|e| py_err(e, &self.expr))?;
            let data = buffer.as_ptr();
            let base = Bound::new(
                py,
                Pooled {
                    buffer: Some(A::wrap(buffer)),
                },
            )?;
            // SAFETY: the view covers the `n` elements of the buffer now owned by `base` (moved
            // there as a Vec: its heap block, which `data` points at, did not move), laid out in C
            // order as `shape` says. `base` becomes the NumPy array's base object, so the block
            // lives as long as the array and every view of it; it returns to the pool only when
            // `base` is freed, after them.
            let array = unsafe {
                let view = ndarray::ArrayViewD::from_shape_ptr(ndarray::IxDyn(shape), data);
                numpy::PyArray::borrow_from_array(&view, base.into_any())
            };
            return Ok(array.into_any().unbind());
        }
        self.run_numpy(py, handle, small_inputs, run)
    }

    /// Runs `run` (a call of `handle`) into a new NumPy array of the handle's result shape and
    /// element type `A`, allocated by NumPy, given as its elements in C order. The GIL is released
    /// unless the inputs (`small_inputs`) and the result all have fewer than [`DETACH_ELEMENTS`]
    /// elements.
    fn run_numpy<A: numpy::Element + Send>(
        &self,
        py: Python<'_>,
        handle: &Prepared,
        small_inputs: bool,
        run: impl FnOnce(&mut [A]) -> kiln::Result<()> + Send,
    ) -> PyResult<Py<PyAny>> {
        let shape = handle.output_shape();
        let n: usize = shape.iter().product();
        // SAFETY: `PyArray::new` leaves the elements uninitialised. The array is made here and is not
        // seen by Python, nor borrowed elsewhere, until this function returns it; it is returned only
        // after `run` returned Ok, which writes every element of its output (a map each point, a
        // reduction its finished result; bools one byte 0 or 1 each), so Python never reads an
        // uninitialised element. Its mutable slice (C order: a new array is C-contiguous) is the
        // only one while the code runs.
        let out = unsafe { numpy::PyArray::<A, _>::new(py, shape, false) };
        let elements = unsafe { out.as_slice_mut() }.map_err(|e| PyValueError::new_err(e.to_string()))?;
        let result = if small_inputs && n < DETACH_ELEMENTS {
            run(elements)
        } else {
            py.detach(|| run(elements))
        };
        result.map_err(|e| py_err(e, &self.expr))?;
        Ok(out.into_any().unbind())
    }

    /// Runs on `held` through a handle made for C-contiguous inputs of their dtypes and shapes, if
    /// they are all C-contiguous (or scalars) and such a handle exists: on their elements as slices
    /// where they are of one float type and so is the result (the cheapest call), else as their
    /// own elements ([`Kernel::run_stored`]; no views either); None otherwise.
    fn run_contiguous(&self, py: Python<'_>, held: &[Held<'_, '_>]) -> Option<PyResult<Py<PyAny>>> {
        let floats = match held.first()?.form().0 {
            ElemType::F64 => self.run_slices::<f64>(py, held),
            ElemType::F32 => self.run_slices::<f32>(py, held),
            _ => None,
        };
        floats.or_else(|| self.run_stored(py, held))
    }

    /// The runner's handle bound to C-contiguous inputs of the dtypes and shapes of `held`, if
    /// there is one.
    fn contiguous_handle<'r>(&'r self, held: &[Held<'_, '_>]) -> Option<kiln::BoundHandle<'r>> {
        if held.len() > SLICE_INPUTS {
            return None;
        }
        let mut forms: [(ElemType, &[usize]); SLICE_INPUTS] = [(ElemType::F64, &[]); SLICE_INPUTS];
        for (f, h) in forms.iter_mut().zip(held) {
            *f = h.form();
        }
        self.runner.bound_c_order(&forms[..held.len()])
    }

    /// The elements of `held` as they are (the first `n` of the array), each input C-contiguous or
    /// a scalar, and the runner's handle bound to C-contiguous inputs of their forms; None where an
    /// input is not so or no such handle exists.
    fn stored_parts<'h>(
        &self,
        held: &'h [Held<'_, '_>],
    ) -> Option<([kiln_jit::Stored<'h>; SLICE_INPUTS], usize, kiln::BoundHandle<'_>)> {
        use kiln_jit::Stored;
        if held.len() > SLICE_INPUTS {
            return None;
        }
        let mut parts: [Stored<'h>; SLICE_INPUTS] = std::array::from_fn(|_| Stored::F64(&[]));
        for (p, h) in parts.iter_mut().zip(held) {
            *p = h.stored()?;
        }
        Some((parts, held.len(), self.contiguous_handle(held)?))
    }

    /// [`Kernel::run_contiguous`] for inputs of any types (integers, bools, complex, byte strings,
    /// mixed), each C-contiguous: their elements as they are ([`Prepared::run_stored`]: no view
    /// made), into a new array of the result's type; None where an input is not C-contiguous, no
    /// such handle exists or the result is byte strings.
    fn run_stored(&self, py: Python<'_>, held: &[Held<'_, '_>]) -> Option<PyResult<Py<PyAny>>> {
        let (parts, n, handle) = self.stored_parts(held)?;
        let parts = &parts[..n];
        let small = parts.iter().all(|p| p.len() < DETACH_ELEMENTS);
        Some(match handle.output_type() {
            ElemType::F64 => self.run_fresh::<f64>(py, &handle, small, |out| {
                handle.run_stored(parts, OutSlice::F64(out))
            }),
            ElemType::F32 => self.run_fresh::<f32>(py, &handle, small, |out| {
                handle.run_stored(parts, OutSlice::F32(out))
            }),
            ElemType::I64 => self.run_numpy::<i64>(py, &handle, small, |out| {
                handle.run_stored(parts, OutSlice::I64(out))
            }),
            ElemType::I32 => self.run_numpy::<i32>(py, &handle, small, |out| {
                handle.run_stored(parts, OutSlice::I32(out))
            }),
            ElemType::Bool => self.run_numpy::<bool>(py, &handle, small, |out| {
                handle.run_stored(parts, OutSlice::Bool(out))
            }),
            ElemType::C64 => self.run_numpy::<Complex32>(py, &handle, small, |out| {
                handle.run_stored(parts, OutSlice::C64(out))
            }),
            ElemType::C128 => self.run_numpy::<Complex64>(py, &handle, small, |out| {
                handle.run_stored(parts, OutSlice::C128(out))
            }),
            _ => return None,
        })
    }

    /// [`Kernel::run_contiguous`] for inputs of `A`.
    fn run_slices<A: PoolElem>(&self, py: Python<'_>, held: &[Held<'_, '_>]) -> Option<PyResult<Py<PyAny>>> {
        if held.len() > SLICE_INPUTS {
            return None;
        }
        let mut slices: [&[A]; SLICE_INPUTS] = [&[]; SLICE_INPUTS];
        for (s, h) in slices.iter_mut().zip(held) {
            *s = h.slice::<A>()?;
        }
        let slices = &slices[..held.len()];
        let handle = self.contiguous_handle(held)?;
        if handle.output_type() != A::DTYPE {
            return None;
        }
        let small = slices.iter().all(|s| s.len() < DETACH_ELEMENTS);
        Some(self.run_fresh::<A>(py, &handle, small, |out| handle.run_slices(slices, out)))
    }

    /// Holds `args` (one per name) as inputs, claimed for reading for the call's length (see
    /// [`claims`]): a `ValueError` for an array another call is writing. A bool array may hold any
    /// byte: compiled code reads its bytes as true where nonzero, as NumPy's logical functions;
    /// only a call that views it as Rust bools ([`views`]) reads a copy of one holding other bytes than 0 and 1.
    fn hold_all<'a, 'py>(&self, args: &'a [Bound<'py, PyAny>]) -> PyResult<(Vec<Held<'a, 'py>>, Claims)> {
        let names = self.runner.input_names();
        if args.len() != names.len() {
            return Err(PyTypeError::new_err(format!(
                "the expression takes {} input(s) ({}) but {} were given",
                names.len(),
                names.join(", "),
                args.len()
            )));
        }
        let held: Vec<Held<'a, 'py>> = args
            .iter()
            .zip(names)
            .map(|(a, n)| hold(a, n))
            .collect::<PyResult<_>>()?;
        if let Some(literal) = &self.beyond_int64
            && (held.is_empty()
                || held.iter().any(|h| {
                    matches!(
                        h,
                        Held::ScalarI(_) | Held::Array(Kind::I64 | Kind::I32 | Kind::Bool, _)
                    )
                }))
        {
            return Err(PyOverflowError::new_err(format!(
                "the integer literal {literal} of '{}' is beyond int64 (Python int too large to convert \
                 to int64): NumPy and numexpr raise OverflowError beside integer inputs; write it as a \
                 float ({literal}.0) to compute in float64",
                self.expr
            )));
        }
        let claims = Claims::read(held.iter().zip(names).filter_map(|(h, n)| match h {
            Held::Array(kind, a) => Some((claims::extent(a, kind.itemsize())?, n.as_str())),
            _ => None,
        }))?;
        Ok((held, claims))
    }

    /// `held` as views by name ([`views`]).
    fn bind<'a>(
        &'a self,
        held: &'a [Held<'_, '_>],
        copies: &'a [Option<ndarray::ArrayD<bool>>],
    ) -> Vec<(&'a str, ArrayArg<'a>)> {
        self.runner
            .input_names()
            .iter()
            .map(String::as_str)
            .zip(views(held, copies))
            .collect()
    }
}

/// [`Held::bool_copy`] of each input.
fn bool_copies(held: &[Held<'_, '_>]) -> Vec<Option<ndarray::ArrayD<bool>>> {
    held.iter().map(Held::bool_copy).collect()
}

/// The inputs `held` as array views, a bool array holding other bytes than 0 and 1 read from its
/// copy in `copies` ([`bool_copies`] of `held`).
fn views<'a>(held: &'a [Held<'_, '_>], copies: &'a [Option<ndarray::ArrayD<bool>>]) -> Vec<ArrayArg<'a>> {
    held.iter()
        .zip(copies)
        .map(|(h, c)| match c {
            Some(c) => ArrayArg::from(c.view()),
            // SAFETY: `bool_copy` found a bool array's bytes all 0 or 1 (no copy)
            None => unsafe { h.view() },
        })
        .collect()
}

/// Whether every byte of `s` is 0 or 1 (a valid Rust `bool`): the or of them all is at most 1,
/// folded 64 bytes at a time, at AVX2's width where the host has it (a bool input is read once
/// more by this check than by its kernel: at SSE2's width it took a third of `b & c`'s time at
/// N = 1e6).
fn bytes_are_bools(s: &[u8]) -> bool {
    #[inline(always)]
    fn or_all(s: &[u8]) -> u8 {
        let mut acc = [0u8; 64];
        let mut chunks = s.chunks_exact(64);
        for c in &mut chunks {
            for (a, &b) in acc.iter_mut().zip(c) {
                *a |= b;
            }
        }
        let tail = chunks.remainder().iter().fold(0u8, |m, &b| m | b);
        acc.iter().fold(tail, |m, &b| m | b)
    }
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2")]
        fn or_all_avx2(s: &[u8]) -> u8 {
            or_all(s)
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the host has AVX2, checked just above
            return unsafe { or_all_avx2(s) } <= 1;
        }
    }
    or_all(s) <= 1
}

/// The base class of the Python `kiln.Kernel` (kiln/_core.py): its call, `kernel(**arrays)`, made
/// here so that the common calls run without a Python frame: no `out`, `order='K'` and
/// `casting='safe'`; or an array `out` that kiln writes as it is ([`Kernel::evaluate_into`]: the
/// result's type and shape, written in place; else cast under `casting` from a new result), with
/// `order='K'` (a call with `out=` took 5.8 us at 100 elements through the Python layer, 1.2 here).
/// Any other call goes to the subclass's `_call_slow(out, order, casting, arrays)`.
#[pyclass(subclass, frozen, module = "kiln._kiln")]
struct Callable {
    kernel: Py<Kernel>,
}

#[pymethods]
impl Callable {
    #[new]
    fn new(kernel: Py<Kernel>) -> Callable {
        Callable { kernel }
    }

    /// The compiled expression (a `kiln._kiln.Kernel`).
    #[getter]
    fn _kernel(&self, py: Python<'_>) -> Py<Kernel> {
        self.kernel.clone_ref(py)
    }

    /// `kernel(out=None, order="K", casting="safe", **arrays)`: runs on the named arrays; into
    /// `out` if given (returned).
    #[pyo3(signature = (out=None, order=None, casting=None, **arrays))]
    fn __call__(
        slf: &Bound<'_, Self>,
        out: Option<Bound<'_, PyAny>>,
        order: Option<Bound<'_, PyAny>>,
        casting: Option<Bound<'_, PyAny>>,
        arrays: Option<Bound<'_, PyDict>>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let is = |v: &Option<Bound<'_, PyAny>>, want: &str| {
            v.as_ref().is_none_or(|v| {
                v.cast::<PyString>()
                    .is_ok_and(|s| s.to_str().is_ok_and(|s| s == want))
            })
        };
        let arrays = arrays.unwrap_or_else(|| PyDict::new(py));
        let kernel = slf.get().kernel.get();
        match &out {
            None if is(&order, "K") && is(&casting, "safe") => match kernel.call(py, arrays.clone()) {
                // a name missing: the slow path says which, and what was given
                Err(e) if e.is_instance_of::<PyKeyError>(py) => {}
                result => return result,
            },
            // an array `out`, written here where it can be as it is (else the slow path writes
            // through a temporary, or raises)
            Some(o)
                if is(&order, "K")
                    && CASTINGS.iter().any(|c| is(&casting, c))
                    && o.cast::<numpy::PyUntypedArray>().is_ok() =>
            {
                let casting = casting
                    .clone()
                    .unwrap_or_else(|| PyString::new(py, "safe").into_any());
                kernel.check_names(&arrays)?;
                match kernel.evaluate_into(py, Some(arrays.as_any()), None, o, &casting) {
                    Ok(true) => return Ok(o.clone().unbind()),
                    // a name missing: the slow path says which, and what was given
                    Err(e) if !e.is_instance_of::<PyKeyError>(py) => return Err(e),
                    _ => {}
                }
            }
            _ => {}
        }
        let order = order.unwrap_or_else(|| PyString::new(py, "K").into_any());
        let casting = casting.unwrap_or_else(|| PyString::new(py, "safe").into_any());
        slf.call_method1("_call_slow", (out, order, casting, arrays))
            .map(Bound::unbind)
    }
}

/// Compiles `ex` (kiln's text language, a superset of numexpr's) under `profile` ("default",
/// "reproducible", ...) on `threads` threads (None: every core). Compiled once per process: later
/// calls, from any thread, get the cached kernel. The GIL is released while it compiles.
#[pyfunction]
#[pyo3(signature = (ex, profile=None, threads=None))]
fn compile(py: Python<'_>, ex: &str, profile: Option<&str>, threads: Option<usize>) -> PyResult<Kernel> {
    let profile = match profile {
        None => None,
        Some(p) => Some(Profile::from_name(p).map_err(|e| py_err(e, ex))?),
    };
    if threads == Some(0) {
        return Err(PyValueError::new_err("threads must be at least 1"));
    }
    let key: Key = (ex.to_string(), profile.map(|p| p.to_string()), threads);
    let hit = cache().lock().expect("the kernel cache lock").get(&key).cloned();
    if let Some(r) = hit {
        return Ok(Kernel::new(py, r, key.0));
    }
    let runner = py
        .detach(|| {
            let mut r = FusedRunner::compile_text(ex)?;
            if let Some(p) = profile {
                r = r.with_profile(p);
            }
            if let Some(t) = threads {
                r = r.with_threads(t);
            }
            Ok::<_, Error>(r)
        })
        .map_err(|e| py_err(e, ex))?;
    // two threads may both have compiled it: the first one in is kept, so all share its kernels
    let mut cache = cache().lock().expect("the kernel cache lock");
    if cache.len() >= CACHE_CAPACITY && !cache.contains_key(&key) {
        cache.clear();
    }
    let runner = cache.entry(key.clone()).or_insert(runner).clone();
    drop(cache);
    Ok(Kernel::new(py, runner, key.0))
}

/// The number of cores kiln's thread pool uses by default.
#[pyfunction]
fn detect_number_of_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Empties the kernel cache (kernels already handed out keep working).
#[pyfunction]
fn clear_cache() {
    cache().lock().expect("the kernel cache lock").clear();
}

/// The number of expressions in the kernel cache.
#[pyfunction]
fn cache_size() -> usize {
    cache().lock().expect("the kernel cache lock").len()
}

/// kiln's extension module: `compile` an expression into a `Kernel` (cached per process, shared by
/// threads) and run it on float32 and float64 NumPy arrays, read in place, with the GIL released.
#[pymodule]
fn _kiln(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Kernel>()?;
    m.add_class::<Callable>()?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(detect_number_of_cores, m)?)?;
    m.add_function(wrap_pyfunction!(clear_cache, m)?)?;
    m.add_function(wrap_pyfunction!(cache_size, m)?)?;
    m.add_function(wrap_pyfunction!(last, m)?)?;
    m.add_function(wrap_pyfunction!(output_pool, m)?)?;
    m.add_function(wrap_pyfunction!(clear_output_pool, m)?)?;
    m.add_function(wrap_pyfunction!(set_last, m)?)?;
    m.add_function(wrap_pyfunction!(set_evaluate_cache, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(bench_functions, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
