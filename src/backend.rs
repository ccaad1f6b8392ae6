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
use kiln_ir::{BroadcastPlan, ElemType, KernelIR, KernelKind, Real, Start, StridedInput, Tensor, Values};
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
    /// A strided view of the kernel's input shape.
    View(kiln_jit::typed::TypedView<'a>),
}

impl TypedData<'_> {
    /// The elements in C order, the caller's memory where they are already; a view copied.
    fn c_order(&self) -> Result<TypedData<'_>> {
        Ok(match self {
            TypedData::Bool(d) => TypedData::Bool(Cow::Borrowed(d)),
            TypedData::I32(d) => TypedData::I32(Cow::Borrowed(d)),
            TypedData::I64(d) => TypedData::I64(Cow::Borrowed(d)),
            TypedData::F32(d) => TypedData::F32(Cow::Borrowed(d)),
            TypedData::F64(d) => TypedData::F64(Cow::Borrowed(d)),
            TypedData::View(v) => copy_view(v)?,
        })
    }
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
        TypedData::View(v) => Stored::View(v.view()),
    }
}

/// A strided view's elements copied in C order (fallibly).
fn copy_view<'x>(v: &kiln_jit::typed::TypedView<'_>) -> Result<TypedData<'x>> {
    use kiln_jit::typed::TypedView;
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
    })
}

/// A caller's output buffer: C-contiguous, of the kernel's output shape and element type.
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
    /// A bool output.
    Bool(&'a mut [bool]),
}

/// Something that runs kernels.
pub trait Backend: Send + Sync + Debug {
    /// The name `--backend` takes.
    fn name(&self) -> &'static str;
    /// Readies `kernel`, to be read as `plan` says, for any number of runs.
    fn prepare(&self, kernel: &KernelIR, plan: &BroadcastPlan) -> Result<Box<dyn Executable>>;
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

    /// Whether this executable takes the direct calls below ([`Executable::call_into`],
    /// [`Executable::call`], [`Executable::call_into_many`]): inputs of the kernel's float dtype as
    /// slices or views in the kernel's order, nothing converted or copied. A bound handle
    /// ([`crate::Prepared`]) calls them where every input is of that dtype; every other call takes
    /// [`Executable::run`]. The JIT's float kernels do; the default is no.
    fn direct(&self) -> bool {
        false
    }

    /// The direct call of a map or scan into `out` (the result's elements in C order); an input
    /// may be read through the output it is written to ([`kiln_jit::InputRef::Destination`]: an
    /// in-place update). The kernel and plan are the ones this was made for.
    ///
    /// # Errors
    /// A backend without direct calls ([`Executable::direct`]), an input or output of another
    /// dtype than the kernel's, and the errors of [`Executable::run`].
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

/// The inputs of a direct call ([`Executable::call_into`]), in the kernel's order, of its dtype.
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

/// A typed kernel (an integer or bool value, or a cast): compiled by kiln-jit's typed code generator
/// where it compiles ([`kiln_jit::typed::why_not`]) and the backend is a JIT, else evaluated by
/// kiln-ir's typed interpreter. A compiled run that the code does not cover (a reduction with an
/// `initial` value or the previous outputs as its start, or an empty `min` / `max`) is interpreted.
#[derive(Debug)]
pub(crate) struct TypedExecutable {
    pub typed: std::sync::Arc<TypedKernel>,
    /// The compiled code (None: the interpreter runs every call).
    pub jit: Option<kiln_jit::typed::TypedCode>,
    /// A reduction of float values computed in integers (`mean(i * 2)`; `mean(i)` is a float kernel
    /// reading `i` stored): its values by a compiled typed map,
    /// then the float reduction by the backend ([`kiln_jit::typed::split_float_reduction`]).
    pub split: Option<FloatSplit>,
    /// A kernel of several outputs ([`KernelIR::extra`]): one executable per output, each compiled
    /// alone (each reads the inputs again: the typed code generator writes one output per kernel).
    pub outputs: Vec<TypedExecutable>,
}

/// The two kernels of a typed reduction of float values.
#[derive(Debug)]
pub(crate) struct FloatSplit {
    map: kiln_jit::typed::TypedCode,
    reduce: KernelIR,
    plan: BroadcastPlan,
    exe: Box<dyn Executable>,
}

impl TypedExecutable {
    /// The executable of `typed` for `backend`: compiled for the JIT backends where it compiles,
    /// input `i` read as [`kiln_jit::typed::TypedRead::of`] says: splat where the kernel declares it
    /// of one element, in place with `views[i]`'s strides where the caller passes a strided view
    /// ([`TypedData::View`]), broadcast in place, else contiguous.
    pub fn new(
        typed: std::sync::Arc<TypedKernel>,
        backend: &dyn Backend,
        views: &[Option<Vec<isize>>],
    ) -> Result<TypedExecutable> {
        if !typed.kernel.extra.is_empty() && backend.name() != "interp" {
            let outputs = (0..typed.kernel.n_outputs())
                .map(|o| TypedExecutable::new(std::sync::Arc::new(typed.output(o)), backend, views))
                .collect::<Result<Vec<_>>>()?;
            return Ok(TypedExecutable {
                typed,
                jit: None,
                split: None,
                outputs,
            });
        }
        let reads = (0..typed.kernel.inputs.len())
            .map(|i| typed_read(&typed, views, i))
            .collect::<kiln_ir::Result<Vec<_>>>()?;
        let jit = match backend.name() {
            "jit" | "jit-scalar" if kiln_jit::typed::why_not(&typed).is_none() => Some(
                kiln_jit::typed::compile_typed_reads(&typed, &reads, backend.name() == "jit-scalar", false)?,
            ),
            _ => None,
        };
        let split = match backend.name() {
            "jit" | "jit-scalar" if jit.is_none() => match kiln_jit::typed::split_float_reduction(&typed) {
                Some((map, reduce)) => {
                    let code = kiln_jit::typed::compile_typed_reads(
                        &map,
                        &reads,
                        backend.name() == "jit-scalar",
                        false,
                    )?;
                    let layout = kiln_ir::InputLayout::contiguous(&reduce.shape);
                    let plan = BroadcastPlan::new(&reduce.shape, &[layout], kiln_ir::PlanOptions::default())?;
                    let exe = backend.prepare(&reduce, &plan)?;
                    Some(FloatSplit {
                        map: code,
                        reduce,
                        plan,
                        exe,
                    })
                }
                None => None,
            },
            _ => None,
        };
        Ok(TypedExecutable {
            typed,
            jit,
            split,
            outputs: Vec::new(),
        })
    }

    /// Runs the compiled code, or None where this run is the interpreter's.
    fn run_compiled(
        &self,
        code: &kiln_jit::typed::TypedCode,
        kernel: &KernelIR,
        bufs: &[TypedBuffer<'_>],
        ctx: &RunCtx<'_>,
    ) -> Result<Option<Tensor>> {
        use kiln_jit::Stored;
        use kiln_jit::typed::TypedSliceMut;
        let n = kiln_ir::shape::checked_size(&kernel.shape)?;
        // every input as the code reads it (n elements in C order, one, or strided in place: a
        // view, or a buffer broadcast); a view the code reads contiguously is copied (the
        // specialisation compiled a strided read for every view it was given, so none is)
        let reads = code.reads();
        let copies: Vec<Option<TypedData<'_>>> = bufs
            .iter()
            .enumerate()
            .map(|(i, b)| match (&b.data, reads.get(i)) {
                (TypedData::View(_), Some(kiln_jit::typed::TypedRead::Strided(_))) | (_, None) => Ok(None),
                (TypedData::View(v), _) => copy_view(v).map(Some),
                _ => Ok(None),
            })
            .collect::<Result<_>>()?;
        let inputs: Vec<Stored<'_>> = bufs
            .iter()
            .zip(&copies)
            .map(|(b, e)| match e {
                Some(c) => slice_of(c),
                None => slice_of(&b.data),
            })
            .collect();
        let jc = ctx.parallel.jit_config(n, ctx.start);
        match &kernel.kind {
            KernelKind::Map | KernelKind::Scan(_) => {
                fn fresh<T: Copy>(n: usize, zero: T) -> Result<Vec<T>> {
                    Ok(kiln_jit::typed::zeroed_output(n, zero)?)
                }
                let scan = match &kernel.kind {
                    KernelKind::Scan(s) => Some(*s),
                    _ => None,
                };
                if scan.is_some() && ctx.start != Start::Identity {
                    return Ok(None);
                }
                let shape = &kernel.shape;
                let run = |out: TypedSliceMut<'_>| match scan {
                    Some(_) => code.run_scan(&inputs, shape, out, jc.max_units, jc.spread),
                    None => code.run_map(&inputs, out, jc.max_units, jc.spread),
                };
                let vt = match scan {
                    Some(s) if s.op.wide() => ElemType::I64,
                    _ => self.typed.value_type(),
                };
                let values = match vt {
                    ElemType::Bool => {
                        let mut o = fresh(n, false)?;
                        run(TypedSliceMut::Bool(&mut o))?;
                        Values::Bool(o)
                    }
                    ElemType::I32 => {
                        let mut o = fresh(n, 0i32)?;
                        run(TypedSliceMut::I32(&mut o))?;
                        Values::I32(o)
                    }
                    ElemType::I64 => {
                        let mut o = fresh(n, 0i64)?;
                        run(TypedSliceMut::I64(&mut o))?;
                        Values::I64(o)
                    }
                    ElemType::F32 => {
                        let mut o = fresh(n, 0f32)?;
                        run(TypedSliceMut::F32(&mut o))?;
                        Values::F32(o)
                    }
                    ElemType::F64 => {
                        let mut o = fresh(n, 0f64)?;
                        run(TypedSliceMut::F64(&mut o))?;
                        Values::F64(o)
                    }
                };
                Ok(Some(Tensor {
                    shape: kernel.output_shape(),
                    values,
                }))
            }
            KernelKind::Reduce { op, axes } => {
                let row: usize = axes.iter().map(|&a| kernel.shape[a]).product();
                let out_shape = kernel.output_shape();
                let n_out: usize = out_shape.iter().product();
                // a start other than the identity, or a min / max over nothing: the interpreter's
                if ctx.start != Start::Identity || (row == 0 && n_out > 0 && !op.has_identity()) {
                    return Ok(None);
                }
                let values = code.run_reduce(&inputs, n_out, row, jc.max_units, jc.spread)?;
                Ok(Some(Tensor {
                    shape: out_shape,
                    values,
                }))
            }
            _ => Ok(None),
        }
    }
}

impl FloatSplit {
    /// `kernel` (the typed reduction) as the map whose values it reduces.
    fn map_kernel(&self, kernel: &KernelIR) -> KernelIR {
        KernelIR {
            kind: KernelKind::Map,
            ..kernel.clone()
        }
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
                    TypedData::View(_) => unreachable!("views were refused above"),
                })
            })
            .collect()
    }

    /// The compiled run (the typed code, or a float reduction's map then its reduction), or None
    /// where this run is the interpreter's.
    fn run_jit(&self, kernel: &KernelIR, inputs: &Buffers<'_>, ctx: &RunCtx<'_>) -> Result<Option<Tensor>> {
        let Buffers::Typed(bufs) = inputs else {
            return Err(Error::Output(
                "a float kernel's inputs given to a typed kernel".into(),
            ));
        };
        if let Some(code) = &self.jit
            && let Some(t) = self.run_compiled(code, kernel, bufs, ctx)?
        {
            return Ok(Some(t));
        }
        let Some(split) = &self.split else {
            return Ok(None);
        };
        let values = self.run_compiled(&split.map, &split.map_kernel(kernel), bufs, ctx)?;
        let Some(Tensor { values, shape }) = values else {
            return Err(Error::Output(
                "the typed map of a float reduction did not run".into(),
            ));
        };
        let buffers = match values {
            Values::F64(v) => Buffers::F64(vec![Buffer {
                data: BufferData::Contiguous(Cow::Owned(v)),
                shape,
            }]),
            Values::F32(v) => Buffers::F32(vec![Buffer {
                data: BufferData::Contiguous(Cow::Owned(v)),
                shape,
            }]),
            other => {
                return Err(Error::Output(format!(
                    "float values expected of the typed map, got {}",
                    other.output_type()
                )));
            }
        };
        split.exe.run(&split.reduce, &split.plan, &buffers, ctx).map(Some)
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
        if let Some(t) = self.run_jit(kernel, inputs, ctx)? {
            return Ok(t);
        }
        let copied = without_views(inputs)?;
        let inputs = match &copied {
            Some(c) => Self::inputs(kernel, c)?,
            None => Self::inputs(kernel, inputs)?,
        };
        Ok(kiln_ir::typed::interpret(&self.typed, &inputs, ctx.start)?)
    }

    /// Every output, each of its own type: several maps, or a reduction of every axis and maps.
    fn run_many(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Vec<Tensor>> {
        if !self.outputs.is_empty() {
            return self
                .outputs
                .iter()
                .enumerate()
                .map(|(o, exe)| {
                    let ctx = RunCtx {
                        start: if o == 0 { ctx.start } else { Start::Identity },
                        parallel: ctx.parallel,
                    };
                    exe.run(&kernel.output(o), plan, inputs, &ctx)
                })
                .collect();
        }
        let copied = without_views(inputs)?;
        let inputs = match &copied {
            Some(c) => Self::inputs(kernel, c)?,
            None => Self::inputs(kernel, inputs)?,
        };
        Ok(kiln_ir::typed::interpret_outputs(
            &self.typed,
            &inputs,
            ctx.start,
        )?)
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
        // a view's elements in C order
        Stored::View(v) => match v {
            TypedView::Bool(v) => v.iter().map(|&x| T::from_f64(f64::from(u8::from(x)))).collect(),
            TypedView::I32(v) => v.iter().map(|&x| T::from_f64(f64::from(x))).collect(),
            TypedView::I64(v) => v.iter().map(|&x| T::from_f64(x as f64)).collect(),
            TypedView::F32(v) => v.iter().map(|&x| T::from_f64(f64::from(x))).collect(),
            TypedView::F64(v) => v.iter().map(|&x| T::from_f64(x)).collect(),
        },
    }
}

/// How the compiled code of `typed` reads its input `i`: in place with the element strides of
/// `views[i]` where the caller passes a view, else contiguous or as one element.
pub(crate) fn typed_read(
    typed: &TypedKernel,
    views: &[Option<Vec<isize>>],
    i: usize,
) -> kiln_ir::Result<kiln_jit::typed::TypedRead> {
    let view = views.get(i).and_then(Option::as_deref);
    kiln_jit::typed::TypedRead::of(&typed.kernel.inputs[i].shape, view, &typed.kernel.shape)
}
