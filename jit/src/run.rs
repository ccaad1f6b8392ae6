//! The safe run API of kiln-jit: the element types kernels compute in ([`Elem`]), a run's inputs
//! ([`InputRef`]), how a run is cut and started ([`RunConfig`], [`Spread`], `chunk_len`) and the
//! reusable buffers of chunked reductions ([`Workspace`]). Nothing here calls compiled code: that is
//! call.rs, after the checks of check.rs.

use kiln_ir::num_complex::{Complex32, Complex64};
use kiln_ir::{ElemType, Real, Start, Values};
use ndarray::ArrayViewD;

/// An element type kernels compute in: f64 or f32.
pub trait Elem: Real + Default {
    /// The index type of arg reductions, as wide as the float (lanes line up with the vectors).
    type Idx: Copy + Into<i64> + Send + Sync + 'static;
    /// The index no element has yet (the start of an arg reduction's fold).
    const NO_INDEX: Self::Idx;
    /// The largest reduction extent whose indices the index type holds.
    const MAX_INDEX: usize;
    /// The values as a result's elements.
    fn values(v: Vec<Self>) -> Values;
    /// The workspace's partial buffers: f64 accumulators, values and indices of this type.
    #[doc(hidden)]
    fn partials(ws: &mut Workspace) -> (&mut Vec<f64>, &mut Vec<Self>, &mut Vec<Self::Idx>);
    /// A caller's buffer of this type as a run's destination.
    fn out_slice(s: &mut [Self]) -> OutSlice<'_>;
    /// A run's destination as the caller's buffer of this type, where it is one.
    fn of_out(o: OutSlice<'_>) -> Option<&mut [Self]>;
}

impl Elem for f64 {
    type Idx = i64;
    const NO_INDEX: i64 = -1;
    const MAX_INDEX: usize = i64::MAX as usize;
    fn values(v: Vec<f64>) -> Values {
        Values::F64(v)
    }
    fn partials(ws: &mut Workspace) -> (&mut Vec<f64>, &mut Vec<f64>, &mut Vec<i64>) {
        (&mut ws.acc, &mut ws.f64s, &mut ws.i64s)
    }
    fn out_slice(s: &mut [f64]) -> OutSlice<'_> {
        OutSlice::F64(s)
    }
    fn of_out(o: OutSlice<'_>) -> Option<&mut [f64]> {
        match o {
            OutSlice::F64(s) => Some(s),
            _ => None,
        }
    }
}

impl Elem for f32 {
    type Idx = i32;
    const NO_INDEX: i32 = -1;
    const MAX_INDEX: usize = i32::MAX as usize;
    fn values(v: Vec<f32>) -> Values {
        Values::F32(v)
    }
    fn partials(ws: &mut Workspace) -> (&mut Vec<f64>, &mut Vec<f32>, &mut Vec<i32>) {
        (&mut ws.acc, &mut ws.f32s, &mut ws.i32s)
    }
    fn out_slice(s: &mut [f32]) -> OutSlice<'_> {
        OutSlice::F32(s)
    }
    fn of_out(o: OutSlice<'_>) -> Option<&mut [f32]> {
        match o {
            OutSlice::F32(s) => Some(s),
            _ => None,
        }
    }
}

/// Reusable buffers for the partials of chunked whole-array reductions: a reduction run in a loop
/// with the same workspace allocates no partials after its first run.
#[derive(Debug, Default)]
pub struct Workspace {
    /// Sum and product partials (f64 accumulators).
    acc: Vec<f64>,
    f64s: Vec<f64>,
    f32s: Vec<f32>,
    i64s: Vec<i64>,
    i32s: Vec<i32>,
}

impl Workspace {
    /// An empty workspace (its buffers grow on first use).
    pub fn new() -> Workspace {
        Workspace::default()
    }
}

/// The caller's executor for the independent work units of one run (kiln-jit knows no threads).
pub trait Spread: Sync {
    /// Calls `work(u)` for every `u` in `0..units`, on any threads and in any order, and returns when
    /// every call has returned.
    fn spread(&self, units: usize, work: &(dyn Fn(usize) + Sync));
}

/// Runs every unit in order on the calling thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct Serial;

impl Spread for Serial {
    fn spread(&self, units: usize, work: &(dyn Fn(usize) + Sync)) {
        (0..units).for_each(work);
    }
}

/// How one run is cut and where its reductions start.
#[derive(Clone, Copy)]
pub struct RunConfig<'a> {
    /// Where each reduction's accumulator starts (identity, `initial`, or the previous outputs).
    pub start: Start<'a>,
    /// Whole-array reductions are cut into at most this many chunks (a tuning value): the chunk
    /// length depends on `n` and this alone, never on the thread count, so the result does not either.
    pub target_partials: usize,
    /// The shortest chunk of a whole-array reduction: an input of at most this many points is one
    /// chunk, reduced in one pass.
    pub min_chunk: usize,
    /// At most this many units for maps and axis reductions (1: one call does everything). Any value
    /// gives the same bits: units never split an output's fold.
    pub max_units: usize,
    /// How the units run: on the calling thread ([`Serial`]) or the caller's thread pool.
    pub spread: &'a dyn Spread,
}

impl Default for RunConfig<'_> {
    fn default() -> Self {
        RunConfig {
            start: Start::Identity,
            target_partials: 64,
            min_chunk: 1 << 15,
            max_units: 1,
            spread: &Serial,
        }
    }
}

impl std::fmt::Debug for RunConfig<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunConfig")
            .field("start", &self.start)
            .field("target_partials", &self.target_partials)
            .field("min_chunk", &self.min_chunk)
            .field("max_units", &self.max_units)
            .finish()
    }
}

/// The chunk length of a whole-array reduction over `n` points: at most `target` chunks, at least
/// `min_chunk` points each, a multiple of 64. A function of `n` and the tuning alone.
pub(crate) fn chunk_len(n: usize, target: usize, min_chunk: usize) -> usize {
    let c = n.div_ceil(target.max(1)).max(min_chunk).max(1);
    c.div_ceil(64).saturating_mul(64)
}

/// One input of a run.
///
/// A view is never turned into a slice: the memory between its elements may be borrowed mutably
/// elsewhere (split views), so a `&[T]` over its whole range would be undefined behaviour. The code is
/// given the view's element pointer (`ArrayView::as_ptr`, the element at index 0) and, after
/// `check_inputs` proved it, reads only elements of the view, which its shared borrow allows.
#[derive(Debug, Clone)]
pub enum InputRef<'a, T> {
    /// The input's elements in C order (of the iteration shape where the plan says `Materialise`).
    Slice(&'a [T]),
    /// A view read in place: a C-contiguous one as the slice of its elements, any other through its
    /// own strides, where the plan reads it per row with the view's strides as outer strides (its rows
    /// contiguous; an outer stride may be negative, a row then starting below the element at index 0).
    View(ArrayViewD<'a, T>),
    /// The run's own destination, read in place (an in-place update, `p = p + v*dt` into `p`): only
    /// in a map that writes into a destination and reads this input contiguously at every point, so
    /// that each element is read, in the iteration that writes it, before it is written (checked).
    Destination,
    /// The elements of an input stored in another type than the kernel's
    /// ([`kiln_ir::InputDecl::stored`]), C order or a view read per row: each converted to the
    /// kernel's type where it is read.
    Stored(Stored<'a>),
    /// Output `k` of a map of several outputs, read in place (`Output(0)` is the destination): as
    /// [`InputRef::Destination`], for the outputs of one pass that update inputs (`p = p + v*dt;
    /// v = v*0.99 + g*dt` into `p` and `v`). Every output of the map is computed from the loads of a
    /// point before any is stored, so another output reading the same input sees its old value.
    Output(usize),
}

impl<T> InputRef<'_, T> {
    /// The address of the element at offset 0, the base the code adds its offsets to. A stored
    /// input's is its address as [`code_address`] makes it (times `size_of::<T>() / its element
    /// size` for a narrower element, divided by the ratio for a wider one: a complex128 in float64
    /// lanes; powers of two: `Structure::new` refused any other conversion, check.rs any other
    /// type): the code steps every input by offsets in elements of `T`, and the stored input's load
    /// shifts the sum back into its own address (lower.rs, `Gen::load_input`), so a row's
    /// arithmetic is the same for every input.
    pub(crate) fn base(&self) -> *const u8 {
        match self {
            InputRef::Slice(s) => s.as_ptr().cast(),
            InputRef::View(v) => v.as_ptr().cast(),
            InputRef::Stored(s) => {
                // byte strings as one-byte elements: the code steps `p + k` for string `k` and
                // finds it at `p + k * width` (`Gen::load_input`), at any address
                let shift = stored_shift(std::mem::size_of::<T>(), s.ty());
                // no Rust code dereferences it (the code shifts it back first)
                std::ptr::without_provenance(code_address(s.ptr() as usize, shift))
            }
            // the destination's address is taken where the outputs are (execute.rs)
            InputRef::Destination | InputRef::Output(_) => std::ptr::null(),
        }
    }
}

/// How far a stored element's address is shifted for a kernel of elements of `size` bytes (see
/// [`InputRef::base`]): `log2(size / t.size())` where `t` is narrower (the code's address is the
/// element's shifted left, its loads shift right), `-log2(t.size() / size)` where it is wider (a
/// complex128's 16 bytes in float64 lanes: the code's address is the element's shifted right, its
/// loads shift left), 0 for the same size; a byte string's as a one-byte element's (the code
/// multiplies its offset from the base by the width: [`InputRef::base`]).
pub(crate) fn stored_shift(size: usize, t: ElemType) -> i32 {
    let e = if t.is_bytes() { 1 } else { t.size() };
    if e <= size {
        (size / e).trailing_zeros() as i32
    } else {
        -((e / size).trailing_zeros() as i32)
    }
}

/// A byte offset in the code's terms (elements of the lanes' size) as the offset of the elements'
/// own addresses ([`stored_shift`] `shift`).
pub(crate) fn own_offset(offset: i64, shift: i32) -> i64 {
    if shift >= 0 {
        offset >> shift
    } else {
        offset << -shift
    }
}

/// The address the code steps from for an element whose own address is `addr` ([`stored_shift`]
/// `shift`): shifted left for a narrower element (a user-space address, below 2^48, shifted by at
/// most 3 does not wrap), right for a wider one (exact: a complex element's address is a multiple
/// of its parts' size, at least the shift's power of two).
pub(crate) fn code_address(addr: usize, shift: i32) -> usize {
    if shift >= 0 { addr << shift } else { addr >> -shift }
}

/// An input's elements in their own type: an input of a float kernel stored in another type than
/// the kernel computes in ([`InputRef::Stored`]), and every input of a compiled typed kernel. C
/// order (or one element, splat), or a view read in place.
#[derive(Debug, Clone)]
pub enum Stored<'a> {
    /// bool elements as their bytes, one each: true where nonzero, as NumPy's logical functions
    /// read a bool (any byte, so that NumPy's memory is read as it is, unchecked). A Rust
    /// `&[bool]` is passed as [`Stored::bools`]; [`Stored::as_bools`] gives bytes back as bools
    /// where each is 0 or 1.
    Bool(&'a [u8]),
    /// int32 elements.
    I32(&'a [i32]),
    /// int64 elements.
    I64(&'a [i64]),
    /// float32 elements.
    F32(&'a [f32]),
    /// float64 elements.
    F64(&'a [f64]),
    /// complex64 elements.
    C64(&'a [Complex32]),
    /// complex128 elements.
    C128(&'a [Complex64]),
    /// Byte strings of this width (at least 1), one after another.
    Bytes(&'a [u8], u32),
    /// A view read in place, per row (its strides the plan's), not C-contiguous.
    View(TypedView<'a>),
}

/// A view of any element type, read in place (by a compiled typed kernel, or as a stored input
/// of a float kernel: [`Stored::View`]).
#[derive(Debug, Clone)]
pub enum TypedView<'a> {
    /// A bool view.
    Bool(ArrayViewD<'a, bool>),
    /// An int32 view.
    I32(ArrayViewD<'a, i32>),
    /// An int64 view.
    I64(ArrayViewD<'a, i64>),
    /// A float32 view.
    F32(ArrayViewD<'a, f32>),
    /// A float64 view.
    F64(ArrayViewD<'a, f64>),
    /// A complex64 view.
    C64(ArrayViewD<'a, Complex32>),
    /// A complex128 view.
    C128(ArrayViewD<'a, Complex64>),
}

impl TypedView<'_> {
    /// The same view, borrowed.
    pub fn view(&self) -> TypedView<'_> {
        match self {
            TypedView::Bool(v) => TypedView::Bool(v.view()),
            TypedView::I32(v) => TypedView::I32(v.view()),
            TypedView::I64(v) => TypedView::I64(v.view()),
            TypedView::F32(v) => TypedView::F32(v.view()),
            TypedView::F64(v) => TypedView::F64(v.view()),
            TypedView::C64(v) => TypedView::C64(v.view()),
            TypedView::C128(v) => TypedView::C128(v.view()),
        }
    }

    pub(crate) fn ty(&self) -> ElemType {
        match self {
            TypedView::Bool(_) => ElemType::Bool,
            TypedView::I32(_) => ElemType::I32,
            TypedView::I64(_) => ElemType::I64,
            TypedView::F32(_) => ElemType::F32,
            TypedView::F64(_) => ElemType::F64,
            TypedView::C64(_) => ElemType::C64,
            TypedView::C128(_) => ElemType::C128,
        }
    }

    /// The view's shape and element strides.
    pub(crate) fn geometry(&self) -> (&[usize], &[isize]) {
        match self {
            TypedView::Bool(v) => (v.shape(), v.strides()),
            TypedView::I32(v) => (v.shape(), v.strides()),
            TypedView::I64(v) => (v.shape(), v.strides()),
            TypedView::F32(v) => (v.shape(), v.strides()),
            TypedView::F64(v) => (v.shape(), v.strides()),
            TypedView::C64(v) => (v.shape(), v.strides()),
            TypedView::C128(v) => (v.shape(), v.strides()),
        }
    }

    /// Its first element's address.
    pub(crate) fn ptr(&self) -> *const u8 {
        match self {
            TypedView::Bool(v) => v.as_ptr().cast(),
            TypedView::I32(v) => v.as_ptr().cast(),
            TypedView::I64(v) => v.as_ptr().cast(),
            TypedView::F32(v) => v.as_ptr().cast(),
            TypedView::F64(v) => v.as_ptr().cast(),
            TypedView::C64(v) => v.as_ptr().cast(),
            TypedView::C128(v) => v.as_ptr().cast(),
        }
    }
}

impl<'a> Stored<'a> {
    /// Rust bools as their bytes (0 or 1).
    pub fn bools(b: &'a [bool]) -> Stored<'a> {
        Stored::Bool(bytemuck::cast_slice(b))
    }

    /// Bool bytes as Rust bools where each is 0 or 1 (checked: a byte of any other value may not
    /// be a `bool`); None where one is not.
    pub fn as_bools(bytes: &'a [u8]) -> Option<&'a [bool]> {
        bytemuck::checked::try_cast_slice(bytes).ok()
    }
}

/// A slice of each element type as its [`Stored`] elements.
macro_rules! stored_from {
    ($($t:ty => $variant:ident),*) => {$(
        impl<'a> From<&'a [$t]> for Stored<'a> {
            fn from(s: &'a [$t]) -> Stored<'a> {
                Stored::$variant(s)
            }
        }
    )*};
}
stored_from!(i32 => I32, i64 => I64, f32 => F32, f64 => F64, Complex32 => C64, Complex64 => C128);

impl<'a> From<&'a [bool]> for Stored<'a> {
    fn from(s: &'a [bool]) -> Stored<'a> {
        Stored::bools(s)
    }
}

impl Stored<'_> {
    /// The same elements, borrowed.
    pub fn view(&self) -> Stored<'_> {
        match self {
            Stored::Bool(s) => Stored::Bool(s),
            Stored::I32(s) => Stored::I32(s),
            Stored::I64(s) => Stored::I64(s),
            Stored::F32(s) => Stored::F32(s),
            Stored::F64(s) => Stored::F64(s),
            Stored::C64(s) => Stored::C64(s),
            Stored::C128(s) => Stored::C128(s),
            Stored::Bytes(s, w) => Stored::Bytes(s, *w),
            Stored::View(v) => Stored::View(v.view()),
        }
    }

    /// The element type.
    pub fn ty(&self) -> ElemType {
        match self {
            Stored::Bool(_) => ElemType::Bool,
            Stored::I32(_) => ElemType::I32,
            Stored::I64(_) => ElemType::I64,
            Stored::F32(_) => ElemType::F32,
            Stored::F64(_) => ElemType::F64,
            Stored::C64(_) => ElemType::C64,
            Stored::C128(_) => ElemType::C128,
            Stored::Bytes(_, w) => ElemType::Bytes(*w),
            Stored::View(v) => v.ty(),
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            Stored::Bool(s) => s.len(),
            Stored::I32(s) => s.len(),
            Stored::I64(s) => s.len(),
            Stored::F32(s) => s.len(),
            Stored::F64(s) => s.len(),
            Stored::C64(s) => s.len(),
            Stored::C128(s) => s.len(),
            Stored::Bytes(s, w) => s.len() / (*w).max(1) as usize,
            Stored::View(v) => v.geometry().0.iter().product(),
        }
    }

    /// Whether there is no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub(crate) fn ptr(&self) -> *const u8 {
        match self {
            Stored::Bool(s) => s.as_ptr().cast(),
            Stored::I32(s) => s.as_ptr().cast(),
            Stored::I64(s) => s.as_ptr().cast(),
            Stored::F32(s) => s.as_ptr().cast(),
            Stored::F64(s) => s.as_ptr().cast(),
            Stored::C64(s) => s.as_ptr().cast(),
            Stored::C128(s) => s.as_ptr().cast(),
            Stored::Bytes(s, _) => s.as_ptr(),
            Stored::View(v) => v.ptr(),
        }
    }
}

/// A caller's buffer a map or scan writes its result into, C order, of the result's element type:
/// a float kernel's of its dtype, a typed kernel's ([`crate::compile_typed`]) of its result type,
/// written by the code through its address shifted as a stored input's ([`InputRef::Stored`]).
#[derive(Debug)]
pub enum OutSlice<'a> {
    /// A float64 output.
    F64(&'a mut [f64]),
    /// A float32 output.
    F32(&'a mut [f32]),
    /// An int64 output.
    I64(&'a mut [i64]),
    /// An int32 output.
    I32(&'a mut [i32]),
    /// A bool output (one byte each, written 0 or 1).
    Bool(&'a mut [bool]),
    /// A complex64 output.
    C64(&'a mut [Complex32]),
    /// A complex128 output.
    C128(&'a mut [Complex64]),
}

impl OutSlice<'_> {
    /// The element type.
    pub fn ty(&self) -> ElemType {
        match self {
            OutSlice::F64(_) => ElemType::F64,
            OutSlice::F32(_) => ElemType::F32,
            OutSlice::I64(_) => ElemType::I64,
            OutSlice::I32(_) => ElemType::I32,
            OutSlice::Bool(_) => ElemType::Bool,
            OutSlice::C64(_) => ElemType::C64,
            OutSlice::C128(_) => ElemType::C128,
        }
    }

    /// The number of elements.
    pub fn len(&self) -> usize {
        match self {
            OutSlice::F64(s) => s.len(),
            OutSlice::F32(s) => s.len(),
            OutSlice::I64(s) => s.len(),
            OutSlice::I32(s) => s.len(),
            OutSlice::Bool(s) => s.len(),
            OutSlice::C64(s) => s.len(),
            OutSlice::C128(s) => s.len(),
        }
    }

    /// Whether there is no element.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same buffer, reborrowed.
    pub fn reborrow(&mut self) -> OutSlice<'_> {
        match self {
            OutSlice::F64(s) => OutSlice::F64(s),
            OutSlice::F32(s) => OutSlice::F32(s),
            OutSlice::I64(s) => OutSlice::I64(s),
            OutSlice::I32(s) => OutSlice::I32(s),
            OutSlice::Bool(s) => OutSlice::Bool(s),
            OutSlice::C64(s) => OutSlice::C64(s),
            OutSlice::C128(s) => OutSlice::C128(s),
        }
    }

    /// Its first element's address.
    pub(crate) fn ptr(&mut self) -> *mut u8 {
        match self {
            OutSlice::F64(s) => s.as_mut_ptr().cast(),
            OutSlice::F32(s) => s.as_mut_ptr().cast(),
            OutSlice::I64(s) => s.as_mut_ptr().cast(),
            OutSlice::I32(s) => s.as_mut_ptr().cast(),
            OutSlice::Bool(s) => s.as_mut_ptr().cast(),
            OutSlice::C64(s) => s.as_mut_ptr().cast(),
            OutSlice::C128(s) => s.as_mut_ptr().cast(),
        }
    }
}

impl<'a, T> From<&'a [T]> for InputRef<'a, T> {
    fn from(s: &'a [T]) -> Self {
        InputRef::Slice(s)
    }
}

impl<'a, T> From<ArrayViewD<'a, T>> for InputRef<'a, T> {
    fn from(v: ArrayViewD<'a, T>) -> Self {
        InputRef::View(v)
    }
}
