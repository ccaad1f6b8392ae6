//! The seam between planning and execution: a [`Backend`] prepares a kernel once (the JIT compiles it
//! there) and the [`Executable`] it returns runs it over prepared buffers many times.
//!
//! The executor hands every backend the same thing: the [`KernelIR`], its [`BroadcastPlan`], and one
//! buffer per input in the kernel's dtype: C-contiguous elements (an input the plan materialises
//! arrives already expanded to the iteration shape), or the caller's strided view itself
//! ([`BufferData::Strided`]) where the plan reads it per row in place with the view's own strides. The plan
//! is the same for every backend: the JIT reads such a view in place; the [`crate::Interpreter`], the
//! oracle and not a fast path, copies it into a C-contiguous buffer of its shape before it runs. A
//! typed kernel's inputs ([`Backend::prepare_typed`]) arrive each in its own type ([`Buffers::Typed`]).

use crate::error::{Error, Result};
use crate::parallel::Parallel;
use kiln_ir::typed::TypedKernel;
use kiln_ir::{BroadcastPlan, InputLayout, KernelIR, Start, Tensor, Values};
use ndarray::ArrayViewD;
use std::borrow::Cow;
use std::fmt::Debug;
use std::sync::Arc;

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
    pub(crate) fn c_order(&self) -> Result<TypedData<'_>> {
        match self {
            TypedData::View(v) => copy_view(v),
            other => Ok(other.borrowed()),
        }
    }

    /// The same elements, borrowed.
    pub(crate) fn borrowed(&self) -> TypedData<'_> {
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
    /// Readies the typed kernel `typed` (integer, bool, complex or byte-string values; see
    /// [`kiln_ir::typed`]), to be read as `plan` says, for any number of runs. The executable takes
    /// the inputs in their own types ([`Buffers::Typed`]: C-contiguous, or a strided view `plan`
    /// reads in place, else a copy in C order): the interpreter's runs it on kiln-ir's typed
    /// interpreter; a backend that compiles it ([`Backend::compiles_typed`]) gives its compiled
    /// kernel where `plan` copies no input.
    fn prepare_typed(&self, typed: &Arc<TypedKernel>, plan: &BroadcastPlan) -> Result<Box<dyn Executable>>;
    /// Whether the backend compiles the typed kernel `typed` (its [`Backend::prepare_typed`] gives an
    /// executable that runs it compiled, from its identity at least, where the plan copies no
    /// input):
    /// sibling reductions of bool and integer values run in one pass only where it does (elsewhere
    /// the runner runs the reductions one by one), and `kiln explain` says which engine runs it.
    fn compiles_typed(&self, typed: &TypedKernel) -> bool {
        let _ = typed;
        false
    }
    /// The plan by which the backend runs the typed kernel `kernel` (its [`TypedKernel::kernel`])
    /// over inputs of `layouts` compiled: one that reads every input where it is. None where it has
    /// none (the planner's first plan then, which may copy; the interpreter's, which compiles no
    /// typed kernel).
    ///
    /// # Errors
    /// The planner's (shapes that do not broadcast).
    fn typed_plan(&self, kernel: &KernelIR, layouts: &[InputLayout]) -> Result<Option<BroadcastPlan>> {
        let _ = (kernel, layouts);
        Ok(None)
    }
    /// How the backend runs the typed kernel `typed` (typed because of `why`) read as `plan`, as
    /// `kiln explain` says it: whether it runs compiled, and the note (`compiled: ...`, what in
    /// which lanes; else `interpreted: ...`, and why).
    fn typed_note(&self, typed: &TypedKernel, plan: &BroadcastPlan, why: &str) -> (bool, String) {
        let _ = (typed, plan);
        (
            false,
            format!(
                "interpreted: {why}, and the {} backend compiles no typed kernel",
                self.name()
            ),
        )
    }
    /// How the backend runs the float kernel `kernel`, as `kiln explain` says it: `compiled: ...`
    /// where it compiles it (what, in which lanes), else `interpreted: ...` (the interpreter, which
    /// a user chooses).
    fn float_note(&self, kernel: &KernelIR) -> String {
        let _ = kernel;
        format!(
            "interpreted: the {} backend, chosen, compiles nothing",
            self.name()
        )
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
    /// Whether the backend runs the sibling reductions `ops` ([`kiln_ir::KernelKind::Siblings`])
    /// over `axes` (sorted) of an iteration space of rank `rank` in one pass, its values of the
    /// float dtype `float` (None: a typed kernel's); where it does not, the runner runs them one
    /// by one.
    fn runs_siblings(
        &self,
        axes: &[usize],
        rank: usize,
        ops: &[kiln_ir::ReduceOp],
        float: Option<kiln_ir::ElemType>,
    ) -> bool {
        let _ = (ops, float);
        self.runs_compound(axes, rank)
    }
    /// The code the backend compiles for `kernel` read as `plan` (or for the typed kernel `typed`,
    /// read in place, where the backend compiles it), for `kiln explain --clif/--asm`; `None` where
    /// the backend compiles nothing (the interpreter).
    fn code_dump(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        typed: Option<&TypedKernel>,
    ) -> Result<Option<CodeDump>> {
        let _ = (kernel, plan, typed);
        Ok(None)
    }
}

/// What a backend compiled of one kernel ([`Backend::code_dump`]).
#[derive(Debug, Clone)]
pub struct CodeDump {
    /// One line: the schedule and how long the compile took.
    pub header: String,
    /// The Cranelift IR.
    pub clif: String,
    /// The machine code, where the code generator gave it.
    pub asm: Option<String>,
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
    /// type: a float kernel's dtype, a typed kernel's result type), or of a reduction where
    /// [`Executable::reduces_into`] says so (from `cfg.start`); an input may be read through
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

    /// The direct call of a map of several outputs, one buffer each, of that output's own type (a
    /// float kernel's dtype, a typed kernel's output types), everything checked before any is
    /// written; an input may be read in place from an output of the kernel's lanes
    /// ([`kiln_jit::InputRef::Output`]).
    ///
    /// # Errors
    /// As [`Executable::call_into`].
    fn call_into_many(
        &self,
        inputs: DirectInputs<'_, '_>,
        outs: &mut [OutSlice<'_>],
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

    /// Whether [`Executable::call_into`] takes this kernel's reduction into an output of type
    /// `ty` (folding in it), where the kernel is a reduction.
    fn reduces_into(&self, ty: kiln_ir::ElemType) -> bool {
        let _ = ty;
        false
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

/// The error of a direct call to an executable without them.
pub(crate) fn no_direct_call() -> Error {
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
