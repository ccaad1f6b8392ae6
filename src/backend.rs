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
    pub data: BufferData<'a, T>,
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
}

/// The inputs of one run, in the kernel's dtype; a typed kernel's in each input's own type.
#[derive(Debug, Clone)]
pub enum Buffers<'a> {
    F64(Vec<Buffer<'a, f64>>),
    F32(Vec<Buffer<'a, f32>>),
    Typed(Vec<TypedBuffer>),
}

/// One input of a typed kernel ([`kiln_ir::typed`]): its elements in its own type, C order, and the
/// shape the kernel reads it in.
#[derive(Debug, Clone)]
pub struct TypedBuffer {
    pub data: TypedData,
    pub shape: Vec<usize>,
}

/// The elements of a typed input.
#[derive(Debug, Clone)]
pub enum TypedData {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
}

/// A caller's output buffer: C-contiguous, of the kernel's output shape and element type.
#[derive(Debug)]
pub enum OutSlice<'a> {
    F64(&'a mut [f64]),
    F32(&'a mut [f32]),
    I64(&'a mut [i64]),
    I32(&'a mut [i32]),
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

    /// The JIT's compiled kernel bound to this specialisation, which a [`crate::Prepared`] handle
    /// calls directly (None: every other backend).
    fn bound_jit(&self) -> Option<&kiln_jit::BoundKernel> {
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

/// A typed kernel (an integer or bool value, or a cast), evaluated by kiln-ir's typed interpreter
/// whatever the backend: the JIT compiles float kernels only (integer code generation is to come).
#[derive(Debug)]
pub(crate) struct TypedExecutable {
    pub typed: std::sync::Arc<TypedKernel>,
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
                let strides = broadcast_strides(&b.shape, &c_strides(&b.shape), &kernel.shape)?;
                Ok(match &b.data {
                    TypedData::Bool(d) => TypedInput::Bool(whole(d, strides)),
                    TypedData::I32(d) => TypedInput::I32(whole(d, strides)),
                    TypedData::I64(d) => TypedInput::I64(whole(d, strides)),
                    TypedData::F32(d) => TypedInput::F32(whole(d, strides)),
                    TypedData::F64(d) => TypedInput::F64(whole(d, strides)),
                })
            })
            .collect()
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
        let inputs = Self::inputs(kernel, inputs)?;
        Ok(kiln_ir::typed::interpret(&self.typed, &inputs, ctx.start)?)
    }

    /// Every output, each of its own type: several maps, or a reduction of every axis and maps.
    fn run_many(
        &self,
        kernel: &KernelIR,
        _plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Vec<Tensor>> {
        let inputs = Self::inputs(kernel, inputs)?;
        Ok(kiln_ir::typed::interpret_outputs(
            &self.typed,
            &inputs,
            ctx.start,
        )?)
    }
}

fn interpret<T: Real>(kernel: &KernelIR, buffers: &[Buffer<'_, T>], start: Start<'_>) -> Result<Tensor> {
    // the oracle reads C-contiguous buffers: a view the JIT reads in place is copied here
    let copies: Vec<Option<Vec<T>>> = buffers
        .iter()
        .map(|b| match &b.data {
            BufferData::Contiguous(_) => None,
            BufferData::Strided(v) => Some(v.iter().copied().collect()),
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
                (BufferData::Strided(_), None) => unreachable!("every view was copied"),
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
