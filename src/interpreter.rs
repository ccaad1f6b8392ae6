//! The [`Interpreter`] backend: kiln-ir's tree-walking interpreter, one element at a time, the
//! oracle every compiled kernel is checked against. A float kernel runs on [`kiln_ir::interpret_from`]
//! (the evaluator over the float kernel typed trivially), a typed kernel (integer, bool, complex or
//! byte-string values) on [`kiln_ir::evaluate`].
//! It reads C-contiguous buffers: a strided view, which the JIT reads in place, is copied first.

use crate::backend::{Backend, Buffer, BufferData, Buffers, Executable, RunCtx, TypedBuffer, TypedData};
use crate::error::{Error, Result};
use kiln_ir::shape::{broadcast_strides, c_strides};
use kiln_ir::typed::TypedKernel;
use kiln_ir::{BroadcastPlan, KernelIR, Real, Start, StridedInput, Tensor, TypedInput};
use std::sync::Arc;

/// The tree-walking interpreter of kiln-ir, one element at a time: the oracle.
#[derive(Debug, Clone, Copy, Default)]
pub struct Interpreter;

impl Backend for Interpreter {
    fn name(&self) -> &'static str {
        "interp"
    }

    fn prepare(&self, _kernel: &KernelIR, _plan: &BroadcastPlan) -> Result<Box<dyn Executable>> {
        Ok(Box::new(Interpreted { typed: None }))
    }

    /// kiln-ir's interpreter of the typed kernel.
    fn prepare_typed(&self, typed: &Arc<TypedKernel>, _plan: &BroadcastPlan) -> Result<Box<dyn Executable>> {
        Ok(Interpreted::typed(typed.clone()))
    }

    fn compound_reductions(&self) -> bool {
        true
    }
}

/// The interpreter's executable: of a float kernel (`typed` None), or of the typed kernel `typed`.
#[derive(Debug, Clone)]
pub(crate) struct Interpreted {
    pub typed: Option<Arc<TypedKernel>>,
}

impl Interpreted {
    /// The executable of the typed kernel `typed`, on kiln-ir's interpreter.
    pub(crate) fn typed(typed: Arc<TypedKernel>) -> Box<dyn Executable> {
        Box::new(Interpreted { typed: Some(typed) })
    }
}

impl Executable for Interpreted {
    /// The oracle runs on the calling thread, in sequential order, whatever the thread count.
    fn run(
        &self,
        kernel: &KernelIR,
        _plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Tensor> {
        match (&self.typed, inputs) {
            (None, Buffers::F64(b)) => interpret(kernel, b, ctx.start),
            (None, Buffers::F32(b)) => interpret(kernel, b, ctx.start),
            (Some(t), Buffers::Typed(b)) => {
                with_typed_inputs(kernel, b, |i| kiln_ir::evaluate(t, i, ctx.start))
            }
            (None, Buffers::Typed(_)) => Err(Error::Output(
                "a typed kernel's inputs given to a float kernel".into(),
            )),
            (Some(_), _) => Err(Error::Output(
                "a float kernel's inputs given to a typed kernel".into(),
            )),
        }
    }

    /// Each output alone, as `run` computes it (a float kernel), or every output of the typed
    /// kernel, each of its own type: the oracle of a kernel of several outputs.
    fn run_many(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Vec<Tensor>> {
        match (&self.typed, inputs) {
            (Some(t), Buffers::Typed(b)) => {
                with_typed_inputs(kernel, b, |i| kiln_ir::evaluate_outputs(t, i, ctx.start))
            }
            _ => (0..kernel.n_outputs())
                .map(|o| self.run(&kernel.output(o), plan, inputs, ctx))
                .collect(),
        }
    }
}

/// `run` of the interpreter's typed inputs: each buffer read whole, broadcast to `kernel`'s shape,
/// a strided view copied into C order first.
fn with_typed_inputs<R>(
    kernel: &KernelIR,
    bufs: &[TypedBuffer<'_>],
    run: impl FnOnce(&[TypedInput<'_>]) -> kiln_ir::Result<R>,
) -> Result<R> {
    let copied = bufs
        .iter()
        .map(|b| {
            Ok(TypedBuffer {
                data: b.data.c_order()?,
                shape: b.shape.clone(),
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let inputs = copied
        .iter()
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
                TypedData::View(_) => {
                    return Err(Error::Output("a strided view left after the C-order copy".into()));
                }
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(run(&inputs)?)
}

/// A buffer of a whole input read from its first element with `strides`.
fn whole<T>(data: &[T], strides: Vec<isize>) -> StridedInput<'_, T> {
    StridedInput {
        data,
        offset: 0,
        strides,
    }
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
        Stored::Bool(d) => d
            .iter()
            .map(|&x| T::from_f64(f64::from(u8::from(x != 0))))
            .collect(),
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
