//! The seam between planning and execution: a [`Backend`] prepares a kernel once (the JIT compiles it
//! there) and the [`Executable`] it returns runs it over prepared buffers many times.
//!
//! The executor hands every backend the same thing: the [`KernelIR`], its [`BroadcastPlan`], and one
//! buffer per input in the kernel's dtype: C-contiguous elements (an input the plan materialises
//! arrives already expanded to the iteration shape), or the caller's strided view itself
//! ([`BufferData::Strided`]) where the plan reads it per row in place with the view's own strides. The plan
//! is the same for every backend: the JIT reads such a view in place; the [`Interpreter`], the oracle
//! and not a fast path, copies it into a C-contiguous buffer of its shape before it runs.

use crate::error::{Error, Result};
use crate::parallel::Parallel;
use kiln_ir::shape::{broadcast_strides, c_strides};
use kiln_ir::typed::{TypedInput, TypedKernel};
use kiln_ir::{BroadcastPlan, KernelIR, Real, Start, StridedInput, Tensor, Values};
use ndarray::ArrayViewD;
use std::borrow::Cow;
use std::fmt::Debug;

/// One input, ready to run: its elements and their shape.
#[derive(Debug, Clone)]
pub struct Buffer<'a, T: Clone> {
    /// The elements, C-contiguous or a strided view.
    pub data: BufferData<'a, T>,
    /// The shape the kernel reads the input in.
    pub shape: Vec<usize>,
}

/// The elements of one input.
#[derive(Debug, Clone)]
pub enum BufferData<'a, T: Clone> {
    /// C-contiguous elements: the caller's memory where it is C-contiguous, else a copy.
    Contiguous(Cow<'a, [T]>),
    /// The caller's view (of the buffer's shape), not C-contiguous: the plan reads it per row with its
    /// own element strides as outer strides (`InputPlan::PerRow`), its rows contiguous.
    Strided(ArrayViewD<'a, T>),
    /// The caller's elements of another type than the kernel's ([`kiln_ir::InputDecl::stored`]),
    /// C-contiguous or a view the plan reads per row: the JIT converts each where it reads it; the
    /// interpreter converts a copy first.
    Stored(kiln_jit::Stored<'a>),
}

/// The inputs of one run, in the kernel's dtype; a typed kernel's in each input's own type.
#[derive(Debug, Clone)]
pub enum Buffers<'a> {
    /// The inputs of a float64 kernel.
    F64(Vec<Buffer<'a, f64>>),
    /// The inputs of a float32 kernel.
    F32(Vec<Buffer<'a, f32>>),
    /// The inputs of a typed kernel, each in its own type.
    Typed(Vec<TypedBuffer<'a>>),
}

/// One input of a typed kernel ([`kiln_ir::typed`]): its elements in its own type, C order, and the
/// shape the kernel reads it in.
#[derive(Debug, Clone)]
pub struct TypedBuffer<'a> {
    /// The elements.
    pub data: TypedData<'a>,
    /// The shape the kernel reads the input in.
    pub shape: Vec<usize>,
}

/// The elements of a typed input: the caller's memory where it is C-contiguous, the caller's view
/// (read in place by the compiled code, copied for the interpreter), else a copy.
#[derive(Debug, Clone)]
pub enum TypedData<'a> {
    /// bool elements.
    Bool(Cow<'a, [bool]>),
    /// int32 elements.
    I32(Cow<'a, [i32]>),
    /// int64 elements.
    I64(Cow<'a, [i64]>),
    /// float32 elements.
    F32(Cow<'a, [f32]>),
    /// float64 elements.
    F64(Cow<'a, [f64]>),
    /// complex64 elements.
    C64(Cow<'a, [kiln_ir::num_complex::Complex32]>),
    /// complex128 elements.
    C128(Cow<'a, [kiln_ir::num_complex::Complex64]>),
    /// Byte strings of this width, one after another.
    Bytes(Cow<'a, [u8]>, u32),
    /// A strided view of the kernel's input shape.
    View(kiln_jit::TypedView<'a>),
}

impl TypedData<'_> {
    /// The elements in C order, the caller's memory where they are already; a view copied.
    fn c_order(&self) -> Result<TypedData<'_>> {
        match self {
            TypedData::View(v) => copy_view(v),
            other => Ok(other.borrowed()),
        }
    }

    /// The same elements, borrowed.
    fn borrowed(&self) -> TypedData<'_> {
        match self {
            TypedData::Bool(d) => TypedData::Bool(Cow::Borrowed(d)),
            TypedData::I32(d) => TypedData::I32(Cow::Borrowed(d)),
            TypedData::I64(d) => TypedData::I64(Cow::Borrowed(d)),
            TypedData::F32(d) => TypedData::F32(Cow::Borrowed(d)),
            TypedData::F64(d) => TypedData::F64(Cow::Borrowed(d)),
            TypedData::C64(d) => TypedData::C64(Cow::Borrowed(d)),
            TypedData::C128(d) => TypedData::C128(Cow::Borrowed(d)),
            TypedData::Bytes(d, w) => TypedData::Bytes(Cow::Borrowed(d), *w),
            TypedData::View(v) => TypedData::View(v.view()),
        }
    }
}

/// Byte strings copied to an address their width divides (where compiled code finds a string at
/// its index times its width: `kiln_jit::InputRef::base`): the copy and where the strings start in it.
fn aligned_strings(d: &[u8], width: usize) -> Result<StringsCopy> {
    let mut v = Vec::new();
    v.try_reserve_exact(d.len() + width)
        .map_err(|_| kiln_ir::IrError::Allocation {
            what: "an aligned copy of byte strings".into(),
            elements: d.len() / width.max(1),
        })?;
    v.resize(d.len() + width, 0);
    let start = (width - v.as_ptr() as usize % width) % width;
    v[start..start + d.len()].copy_from_slice(d);
    Ok((v, start))
}

/// A copy of byte strings and where they start in it ([`aligned_strings`]).
type StringsCopy = (Vec<u8>, usize);

/// Whether `b` holds byte strings at an address their width does not divide (compiled code reads
/// them from an aligned copy, [`aligned_strings`]).
fn misaligned_strings(b: &TypedBuffer<'_>) -> bool {
    matches!(&b.data, TypedData::Bytes(d, w) if !(d.as_ptr() as usize).is_multiple_of((*w as usize).max(1)))
}

/// Per buffer, a copy of its byte strings at an address their width divides where they are not
/// at one ([`aligned_strings`]), else None.
fn aligned_copies(bufs: &[TypedBuffer<'_>]) -> Result<Vec<Option<StringsCopy>>> {
    bufs.iter()
        .map(|b| match &b.data {
            TypedData::Bytes(d, w) if misaligned_strings(b) => aligned_strings(d, *w as usize).map(Some),
            _ => Ok(None),
        })
        .collect()
}

/// `bufs` with each byte-string buffer that has a copy in `copies` ([`aligned_copies`]) read
/// from the copy, the others borrowed.
fn aligned<'s>(bufs: &'s [TypedBuffer<'_>], copies: &'s [Option<StringsCopy>]) -> Vec<TypedBuffer<'s>> {
    bufs.iter()
        .zip(copies)
        .map(|(b, copy)| TypedBuffer {
            data: match (copy, &b.data) {
                (Some((v, start)), TypedData::Bytes(d, w)) => {
                    TypedData::Bytes(Cow::Borrowed(&v[*start..*start + d.len()]), *w)
                }
                _ => b.data.borrowed(),
            },
            shape: b.shape.clone(),
        })
        .collect()
}

/// The compiled code's input for `d`, borrowed.
fn slice_of<'s>(d: &'s TypedData<'_>) -> kiln_jit::Stored<'s> {
    use kiln_jit::Stored;
    match d {
        TypedData::Bool(d) => Stored::Bool(d),
        TypedData::I32(d) => Stored::I32(d),
        TypedData::I64(d) => Stored::I64(d),
        TypedData::F32(d) => Stored::F32(d),
        TypedData::F64(d) => Stored::F64(d),
        TypedData::C64(d) => Stored::C64(d),
        TypedData::C128(d) => Stored::C128(d),
        TypedData::Bytes(d, w) => Stored::Bytes(d, *w),
        TypedData::View(v) => Stored::View(v.view()),
    }
}

/// A strided view's elements copied in C order (fallibly).
fn copy_view<'x>(v: &kiln_jit::TypedView<'_>) -> Result<TypedData<'x>> {
    use kiln_jit::TypedView;
    fn copy<T: Copy>(v: &ndarray::ArrayViewD<'_, T>) -> Result<Vec<T>> {
        let mut out = Vec::new();
        out.try_reserve_exact(v.len())
            .map_err(|_| kiln_ir::IrError::Allocation {
                what: "a C-order copy of a strided input".into(),
                elements: v.len(),
            })?;
        out.extend(v.iter().copied());
        Ok(out)
    }
    Ok(match v {
        TypedView::Bool(v) => TypedData::Bool(copy(v)?.into()),
        TypedView::I32(v) => TypedData::I32(copy(v)?.into()),
        TypedView::I64(v) => TypedData::I64(copy(v)?.into()),
        TypedView::F32(v) => TypedData::F32(copy(v)?.into()),
        TypedView::F64(v) => TypedData::F64(copy(v)?.into()),
        TypedView::C64(v) => TypedData::C64(copy(v)?.into()),
        TypedView::C128(v) => TypedData::C128(copy(v)?.into()),
    })
}

/// A caller's output buffer: C-contiguous, of the kernel's output shape and element type.
pub use kiln_jit::OutSlice;

/// Something that runs kernels.
pub trait Backend: Send + Sync + Debug {
    /// The name `--backend` takes.
    fn name(&self) -> &'static str;
    /// Readies `kernel`, to be read as `plan` says, for any number of runs.
    fn prepare(&self, kernel: &KernelIR, plan: &BroadcastPlan) -> Result<Box<dyn Executable>>;
    /// Readies a typed kernel (a map, reduction or scan) in the form [`kiln_jit::compile_typed`]
    /// compiles ([`kiln_jit::typed::kernel_of`]: its arena typed, the float lanes of its values, each
    /// input of another type stored as it), read as `plan` says (every input where it is), where the
    /// backend compiles one; None where it does not (the typed interpreter then runs it).
    fn prepare_typed(&self, kernel: &KernelIR, plan: &BroadcastPlan) -> Result<Option<Box<dyn Executable>>> {
        let _ = (kernel, plan);
        Ok(None)
    }
    /// Whether the backend compiles the typed kernel `typed` (its [`Backend::prepare_typed`] gives an
    /// executable that runs it compiled): sibling reductions of bool and integer values run in one
    /// pass only where it does (elsewhere the runner runs the reductions one by one).
    fn compiles_typed(&self, typed: &TypedKernel) -> bool {
        let _ = typed;
        false
    }
    /// Whether the backend runs compound reductions ([`kiln_ir::KernelKind::Compound`]): plans merge
    /// sibling reductions into one pass ([`crate::siblings`]) only for backends that do.
    fn compound_reductions(&self) -> bool {
        false
    }
    /// Whether the backend runs a compound reduction over `axes` (sorted) of an iteration space of
    /// rank `rank`; where it does not, the runner runs the two reductions it replaced.
    fn runs_compound(&self, axes: &[usize], rank: usize) -> bool {
        let _ = (axes, rank);
        self.compound_reductions()
    }
    /// Whether the backend runs `parts` sibling reductions ([`kiln_ir::KernelKind::Siblings`])
    /// over `axes` (sorted) of an iteration space of rank `rank` in one pass; where it does not,
    /// the runner runs them one by one.
    fn runs_siblings(&self, axes: &[usize], rank: usize, parts: usize) -> bool {
        let _ = parts;
        self.runs_compound(axes, rank)
    }
}

/// How one run goes: where its reduction starts, and the threads it may use.
#[derive(Debug, Clone, Copy)]
pub struct RunCtx<'a> {
    /// The start of each output's fold (identity, `initial`, or the previous outputs).
    pub start: Start<'a>,
    /// The threads, the threshold below which a run stays on the calling thread, and the tuning of
    /// whole-array reductions.
    pub parallel: &'a Parallel,
}

/// A kernel a backend has readied for one kernel and plan: runs pass that same kernel and plan.
pub trait Executable: Send + Sync + Debug {
    /// Runs over `inputs`, prepared for the kernel and plan this was made from, with the start and
    /// threads of `ctx`.
    fn run(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Tensor>;

    /// The kernel and plan the direct calls below run ([`Executable::call_into`],
    /// [`Executable::call`], [`Executable::call_into_many`]) from `start`, where this executable
    /// takes them: the inputs in the kernel's order, nothing converted or copied; an input of the
    /// kernel's float dtype as a slice or a view (read as the plan says), an input the kernel
    /// declares stored in another type ([`kiln_ir::InputDecl::stored`]: an integer, bool, complex
    /// or byte-string input, and every input of a typed kernel that is not of its lanes' dtype) as
    /// its own elements ([`kiln_jit::InputRef::Stored`]). A bound handle ([`crate::Prepared`])
    /// calls them for every element type; every other call takes [`Executable::run`]. The JIT's
    /// compiled kernels, float and typed, do (not where the plan materialises an input, nor a
    /// typed reduction the typed interpreter runs from `start`); the default is None.
    fn direct(&self, start: &Start<'_>) -> Option<(&KernelIR, &BroadcastPlan)> {
        let _ = start;
        None
    }

    /// The direct call of a map or scan into `out` (the result's elements in C order, of its
    /// type: a float kernel's dtype, a typed kernel's result type); an input may be read through
    /// the output it is written to ([`kiln_jit::InputRef::Destination`]: an in-place update). The
    /// kernel and plan are the ones this was made for.
    ///
    /// # Errors
    /// A backend without direct calls ([`Executable::direct`]), inputs of another dtype than the
    /// kernel's lanes, an input or output of another type than the kernel reads or writes, and the
    /// errors of [`Executable::run`].
    fn call_into(
        &self,
        inputs: DirectInputs<'_, '_>,
        out: OutSlice<'_>,
        cfg: &kiln_jit::RunConfig<'_>,
    ) -> Result<()> {
        let _ = (inputs, out, cfg);
        Err(no_direct_call())
    }

    /// The direct call into a fresh result (a reduction's partials in `ws`), unfinished: a mean not
    /// yet divided, keepdims not applied ([`Executable::run`] alike).
    ///
    /// # Errors
    /// As [`Executable::call_into`].
    fn call(
        &self,
        inputs: DirectInputs<'_, '_>,
        cfg: &kiln_jit::RunConfig<'_>,
        ws: &mut kiln_jit::Workspace,
    ) -> Result<Tensor> {
        let _ = (inputs, cfg, ws);
        Err(no_direct_call())
    }

    /// The direct call of a map of several outputs, one slice each; an input may be read in place
    /// from an output ([`kiln_jit::InputRef::Output`]).
    ///
    /// # Errors
    /// As [`Executable::call_into`].
    fn call_into_many(
        &self,
        inputs: DirectInputs<'_, '_>,
        outs: DirectOutputs<'_, '_>,
        cfg: &kiln_jit::RunConfig<'_>,
    ) -> Result<()> {
        let _ = (inputs, outs, cfg);
        Err(no_direct_call())
    }

    /// The map bound for calls on the calling thread on slices ([`kiln_jit::SerialMap`]), where
    /// this executable has one (None: not a compiled float map read from slices).
    fn serial_map(&self) -> Option<kiln_jit::SerialMap> {
        None
    }

    /// The whole-array reduction bound for calls on the calling thread under `cfg`'s chunking
    /// ([`kiln_jit::SerialReduce`]), where this executable has one.
    fn serial_reduce(&self, cfg: &kiln_jit::RunConfig<'_>) -> Option<kiln_jit::SerialReduce> {
        let _ = cfg;
        None
    }

    /// Runs a map of several outputs ([`KernelIR::extra`]): one tensor per output, each as
    /// [`Executable::run`] would give that output alone.
    fn run_many(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Vec<Tensor>>;

    /// Runs into `out`. The default runs [`Executable::run`] and copies.
    fn run_into(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        out: OutSlice<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<()> {
        copy_into(self.run(kernel, plan, inputs, ctx)?.values, out)
    }
}

/// The inputs of a direct call ([`Executable::call_into`]), in the kernel's order, in the float
/// dtype of its lanes: an input the kernel stores in another type as its own elements
/// ([`kiln_jit::InputRef::Stored`]).
#[derive(Debug)]
pub enum DirectInputs<'r, 'i> {
    /// A float64 kernel's inputs.
    F64(&'r [kiln_jit::InputRef<'i, f64>]),
    /// A float32 kernel's inputs.
    F32(&'r [kiln_jit::InputRef<'i, f32>]),
}

/// The outputs of a direct call of several ([`Executable::call_into_many`]), one slice each.
#[derive(Debug)]
pub enum DirectOutputs<'r, 'o> {
    /// A float64 kernel's outputs.
    F64(&'r mut [&'o mut [f64]]),
    /// A float32 kernel's outputs.
    F32(&'r mut [&'o mut [f32]]),
}

/// The error of a direct call to an executable without them.
fn no_direct_call() -> Error {
    Error::Unsupported("this backend's executable takes no direct calls (see Executable::direct)".into())
}

/// Copies a result into a caller's buffer of the same type and length.
pub fn copy_into(values: Values, out: OutSlice<'_>) -> Result<()> {
    fn copy<T: Copy>(src: &[T], dst: &mut [T]) -> Result<()> {
        if src.len() != dst.len() {
            return Err(Error::Output(format!(
                "{} elements for an output of {}",
                src.len(),
                dst.len()
            )));
        }
        dst.copy_from_slice(src);
        Ok(())
    }
    match (values, out) {
        (Values::F64(v), OutSlice::F64(o)) => copy(&v, o),
        (Values::F32(v), OutSlice::F32(o)) => copy(&v, o),
        (Values::I64(v), OutSlice::I64(o)) => copy(&v, o),
        (Values::I32(v), OutSlice::I32(o)) => copy(&v, o),
        (Values::Bool(v), OutSlice::Bool(o)) => copy(&v, o),
        (Values::C64(v), OutSlice::C64(o)) => copy(&v, o),
        (Values::C128(v), OutSlice::C128(o)) => copy(&v, o),
        (v, _) => Err(Error::Output(format!(
            "the output buffer is not of type {}",
            v.output_type()
        ))),
    }
}

/// The tree-walking interpreter of kiln-ir, one element at a time: the oracle.
#[derive(Debug, Clone, Copy, Default)]
pub struct Interpreter;

impl Backend for Interpreter {
    fn name(&self) -> &'static str {
        "interp"
    }

    fn prepare(&self, _kernel: &KernelIR, _plan: &BroadcastPlan) -> Result<Box<dyn Executable>> {
        Ok(Box::new(Interpreter))
    }

    fn compound_reductions(&self) -> bool {
        true
    }
}

impl Executable for Interpreter {
    /// The oracle runs on the calling thread, in sequential order, whatever the thread count.
    fn run(
        &self,
        kernel: &KernelIR,
        _plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Tensor> {
        match inputs {
            Buffers::F64(b) => interpret(kernel, b, ctx.start),
            Buffers::F32(b) => interpret(kernel, b, ctx.start),
            Buffers::Typed(_) => Err(Error::Output(
                "a typed kernel's inputs given to a float kernel".into(),
            )),
        }
    }

    /// Each output alone, as `run` computes it: the oracle of a map of several outputs.
    fn run_many(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Vec<Tensor>> {
        (0..kernel.n_outputs())
            .map(|o| self.run(&kernel.output(o), plan, inputs, ctx))
            .collect()
    }
}

/// A buffer of a whole input read from its first element with `strides`.
fn whole<T>(data: &[T], strides: Vec<isize>) -> StridedInput<'_, T> {
    StridedInput {
        data,
        offset: 0,
        strides,
    }
}

/// A typed kernel (an integer or bool value, or a cast), where the backend is a JIT: compiled by
/// the main code generator ([`kiln_jit::compile_typed`]) where it compiles it
/// ([`kiln_jit::typed::why_not`]), every output of a kernel of several in one pass; else evaluated
/// by kiln-ir's typed interpreter.
#[derive(Debug)]
pub(crate) struct TypedExecutable {
    pub typed: std::sync::Arc<TypedKernel>,
    /// The compiled kernel.
    pub main: Option<MainKernel>,
}

/// A typed kernel on the JIT: the kernel in the form it compiles (see
/// [`Backend::prepare_typed`]), its plan (every input read where it is), and the executable.
#[derive(Debug)]
pub(crate) struct MainKernel {
    kernel: KernelIR,
    plan: BroadcastPlan,
    exe: Box<dyn Executable>,
}

impl MainKernel {
    /// `typed` on `backend`'s code generator, input `i` read in place with
    /// `views[i]`'s strides where the caller passes a strided view; None where the backend does not
    /// compile it.
    fn new(
        typed: &TypedKernel,
        backend: &dyn Backend,
        views: &[Option<Vec<isize>>],
    ) -> Result<Option<MainKernel>> {
        let kernel = kiln_jit::typed::kernel_of(typed);
        let layouts: Vec<kiln_ir::InputLayout> = kernel
            .inputs
            .iter()
            .enumerate()
            .map(|(i, d)| {
                let strides = views.get(i).cloned().flatten();
                kiln_ir::InputLayout {
                    shape: d.shape.clone(),
                    contiguous: strides.is_none(),
                    strides,
                }
            })
            .collect();
        let Some(plan) = kiln_jit::typed::plan(&kernel, &layouts)? else {
            return Ok(None);
        };
        Ok(backend
            .prepare_typed(&kernel, &plan)?
            .map(|exe| MainKernel { kernel, plan, exe }))
    }

    /// The typed kernel's buffers as the compiled kernel takes them: inputs of the kernel's float
    /// dtype as a float kernel's, any other stored (byte strings at an address their width divides:
    /// [`aligned`]).
    fn buffers<'s>(&self, bufs: &'s [TypedBuffer<'_>]) -> Buffers<'s> {
        use kiln_jit::TypedView;
        /// Each buffer as a buffer of `T`: its elements where they are `T`'s (`own`), else stored.
        fn of<'s, T: Clone>(
            bufs: &'s [TypedBuffer<'_>],
            own: impl Fn(&'s TypedData<'_>) -> Option<BufferData<'s, T>>,
        ) -> Vec<Buffer<'s, T>> {
            bufs.iter()
                .map(|b| Buffer {
                    data: own(&b.data).unwrap_or_else(|| BufferData::Stored(slice_of(&b.data))),
                    shape: b.shape.clone(),
                })
                .collect()
        }
        match self.kernel.dtype {
            kiln_ir::DType::F64 => Buffers::F64(of(bufs, |d| match d {
                TypedData::F64(d) => Some(BufferData::Contiguous(Cow::Borrowed(&d[..]))),
                TypedData::View(TypedView::F64(v)) => Some(BufferData::Strided(v.view())),
                _ => None,
            })),
            kiln_ir::DType::F32 => Buffers::F32(of(bufs, |d| match d {
                TypedData::F32(d) => Some(BufferData::Contiguous(Cow::Borrowed(&d[..]))),
                TypedData::View(TypedView::F32(v)) => Some(BufferData::Strided(v.view())),
                _ => None,
            })),
        }
    }
}

impl TypedExecutable {
    /// The executable of `typed` for `backend`: compiled where the backend compiles it, input `i`
    /// read in place with `views[i]`'s strides where the caller passes a strided view; else the
    /// typed interpreter's.
    pub fn new(
        typed: std::sync::Arc<TypedKernel>,
        backend: &dyn Backend,
        views: &[Option<Vec<isize>>],
    ) -> Result<TypedExecutable> {
        let main = match kiln_jit::typed::why_not(&typed) {
            None => MainKernel::new(&typed, backend, views)?,
            Some(_) => None,
        };
        Ok(TypedExecutable { typed, main })
    }
}

impl TypedExecutable {
    /// The typed interpreter's inputs: each buffer read whole, broadcast to the kernel's shape.
    fn inputs<'a>(kernel: &KernelIR, inputs: &'a Buffers<'_>) -> Result<Vec<TypedInput<'a>>> {
        let Buffers::Typed(bufs) = inputs else {
            return Err(Error::Output(
                "a float kernel's inputs given to a typed kernel".into(),
            ));
        };
        bufs.iter()
            .map(|b| {
                let TypedData::View(_) = &b.data else {
                    return Ok(b);
                };
                Err(Error::Output(
                    "a strided view given to the typed interpreter (copied first)".into(),
                ))
            })
            .collect::<Result<Vec<_>>>()?
            .into_iter()
            .map(|b| {
                let strides = broadcast_strides(&b.shape, &c_strides(&b.shape), &kernel.shape)?;
                Ok(match &b.data {
                    TypedData::Bool(d) => TypedInput::Bool(whole(d, strides)),
                    TypedData::I32(d) => TypedInput::I32(whole(d, strides)),
                    TypedData::I64(d) => TypedInput::I64(whole(d, strides)),
                    TypedData::F32(d) => TypedInput::F32(whole(d, strides)),
                    TypedData::F64(d) => TypedInput::F64(whole(d, strides)),
                    TypedData::C64(d) => TypedInput::C64(whole(d, strides)),
                    TypedData::C128(d) => TypedInput::C128(whole(d, strides)),
                    TypedData::Bytes(d, w) => {
                        let bytes = strides.iter().map(|s| s * *w as isize).collect();
                        TypedInput::Bytes(whole(d, bytes), *w)
                    }
                    TypedData::View(_) => unreachable!("views were refused above"),
                })
            })
            .collect()
    }

    /// `run` of the compiled kernel and its inputs, or None where the typed interpreter runs this
    /// kernel (not compiled).
    fn with_compiled<R>(
        &self,
        inputs: &Buffers<'_>,
        run: impl FnOnce(&MainKernel, &Buffers<'_>) -> Result<R>,
    ) -> Result<Option<R>> {
        let Buffers::Typed(bufs) = inputs else {
            return Err(Error::Output(
                "a float kernel's inputs given to a typed kernel".into(),
            ));
        };
        let Some(main) = &self.main else {
            return Ok(None);
        };
        // the caller's buffers as they are, but for byte strings at an address their width does
        // not divide (no copy, no allocation, on the common path)
        if !bufs.iter().any(misaligned_strings) {
            return run(main, &main.buffers(bufs)).map(Some);
        }
        let copies = aligned_copies(bufs)?;
        let bufs = aligned(bufs, &copies);
        run(main, &main.buffers(&bufs)).map(Some)
    }

    /// The typed interpreter's inputs of this run: `inputs`, strided views copied.
    fn interpreted<R>(
        &self,
        kernel: &KernelIR,
        inputs: &Buffers<'_>,
        run: impl FnOnce(&[TypedInput<'_>]) -> kiln_ir::Result<R>,
    ) -> Result<R> {
        let copied = without_views(inputs)?;
        let inputs = match &copied {
            Some(c) => Self::inputs(kernel, c)?,
            None => Self::inputs(kernel, inputs)?,
        };
        Ok(run(&inputs)?)
    }
}

impl Executable for TypedExecutable {
    fn run(
        &self,
        kernel: &KernelIR,
        _plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Tensor> {
        if let Some(t) = self.with_compiled(inputs, |main, bufs| {
            main.exe.run(&main.kernel, &main.plan, bufs, ctx)
        })? {
            return Ok(t);
        }
        self.interpreted(kernel, inputs, |i| {
            kiln_ir::typed::interpret(&self.typed, i, ctx.start)
        })
    }

    /// Every output, each of its own type (several maps, or a reduction of every axis and maps),
    /// in one pass where compiled.
    fn run_many(
        &self,
        kernel: &KernelIR,
        _plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Vec<Tensor>> {
        if let Some(t) = self.with_compiled(inputs, |main, bufs| {
            main.exe.run_many(&main.kernel, &main.plan, bufs, ctx)
        })? {
            return Ok(t);
        }
        self.interpreted(kernel, inputs, |i| {
            kiln_ir::typed::interpret_outputs(&self.typed, i, ctx.start)
        })
    }

    /// The compiled kernel's direct calls (in the float dtype of its lanes, each input of another
    /// type stored), where it is compiled (from any `start`): a fresh result, or a map into a buffer of its type (several results of a typed kernel run
    /// through [`Executable::run_many`]).
    fn direct(&self, start: &Start<'_>) -> Option<(&KernelIR, &BroadcastPlan)> {
        self.main.as_ref()?.exe.direct(start)
    }

    fn call_into(
        &self,
        inputs: DirectInputs<'_, '_>,
        out: OutSlice<'_>,
        cfg: &kiln_jit::RunConfig<'_>,
    ) -> Result<()> {
        self.compiled()?.call_into(inputs, out, cfg)
    }

    fn call(
        &self,
        inputs: DirectInputs<'_, '_>,
        cfg: &kiln_jit::RunConfig<'_>,
        ws: &mut kiln_jit::Workspace,
    ) -> Result<Tensor> {
        self.compiled()?.call(inputs, cfg, ws)
    }
}

impl TypedExecutable {
    /// The compiled kernel's executable for a direct call; an error where the typed interpreter
    /// runs this kernel (see [`TypedExecutable::direct`](Executable::direct)).
    fn compiled(&self) -> Result<&dyn Executable> {
        match &self.main {
            Some(main) => Ok(&*main.exe),
            None => Err(no_direct_call()),
        }
    }
}

/// `inputs` with every strided view copied into C order (the typed interpreter reads buffers), or
/// None where there is none.
fn without_views<'b>(inputs: &'b Buffers<'_>) -> Result<Option<Buffers<'b>>> {
    let Buffers::Typed(bufs) = inputs else {
        return Ok(None);
    };
    if !bufs.iter().any(|b| matches!(b.data, TypedData::View(_))) {
        return Ok(None);
    }
    let copied = bufs
        .iter()
        .map(|b| {
            Ok(TypedBuffer {
                data: b.data.c_order()?,
                shape: b.shape.clone(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(Buffers::Typed(copied)))
}

fn interpret<T: Real>(kernel: &KernelIR, buffers: &[Buffer<'_, T>], start: Start<'_>) -> Result<Tensor> {
    // the oracle reads C-contiguous buffers: a view the JIT reads in place is copied here
    let copies: Vec<Option<Vec<T>>> = buffers
        .iter()
        .map(|b| match &b.data {
            BufferData::Contiguous(_) => None,
            BufferData::Strided(v) => Some(v.iter().copied().collect()),
            BufferData::Stored(s) => Some(converted(s)),
        })
        .collect();
    let inputs = buffers
        .iter()
        .zip(&copies)
        .map(|(b, copy)| {
            let strides = broadcast_strides(&b.shape, &c_strides(&b.shape), &kernel.shape)?;
            let data = match (&b.data, copy) {
                (_, Some(c)) => &c[..],
                (BufferData::Contiguous(d), None) => &d[..],
                (BufferData::Strided(_) | BufferData::Stored(_), None) => {
                    unreachable!("every view and stored input was copied")
                }
            };
            Ok(StridedInput {
                data,
                offset: 0,
                strides,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(kiln_ir::interpret_from(kernel, &inputs, start)?)
}

/// A stored input's elements converted to `T` as NumPy casts them (through f64: exact for bool,
/// int32 and float32, int64 rounded to the nearest f64 as the JIT's conversion; float32 kernels
/// store only bools).
fn converted<T: Real>(s: &kiln_jit::Stored<'_>) -> Vec<T> {
    use kiln_jit::{Stored, TypedView};
    match s {
        Stored::Bool(d) => d.iter().map(|&x| T::from_f64(f64::from(u8::from(x)))).collect(),
        Stored::I32(d) => d.iter().map(|&x| T::from_f64(f64::from(x))).collect(),
        Stored::I64(d) => d.iter().map(|&x| T::from_f64(x as f64)).collect(),
        Stored::F32(d) => d.iter().map(|&x| T::from_f64(f64::from(x))).collect(),
        Stored::F64(d) => d.iter().map(|&x| T::from_f64(x)).collect(),
        // (float kernels store no complex input: `ElemType::converts_into`) a real part, as astype
        Stored::C64(d) => d.iter().map(|&z| T::from_f64(f64::from(z.re))).collect(),
        Stored::C128(d) => d.iter().map(|&z| T::from_f64(z.re)).collect(),
        // (float kernels store no byte strings either: `ElemType::converts_into`)
        Stored::Bytes(d, w) => vec![T::from_f64(f64::NAN); d.len() / (*w).max(1) as usize],
        // a view's elements in C order
        Stored::View(v) => match v {
            TypedView::Bool(v) => v.iter().map(|&x| T::from_f64(f64::from(u8::from(x)))).collect(),
            TypedView::I32(v) => v.iter().map(|&x| T::from_f64(f64::from(x))).collect(),
            TypedView::I64(v) => v.iter().map(|&x| T::from_f64(x as f64)).collect(),
            TypedView::F32(v) => v.iter().map(|&x| T::from_f64(f64::from(x))).collect(),
            TypedView::F64(v) => v.iter().map(|&x| T::from_f64(x)).collect(),
            TypedView::C64(v) => v.iter().map(|&z| T::from_f64(f64::from(z.re))).collect(),
            TypedView::C128(v) => v.iter().map(|&z| T::from_f64(z.re)).collect(),
        },
    }
}
