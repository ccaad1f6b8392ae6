//! The seam between planning and execution: a [`Backend`] runs a kernel over prepared buffers.
//!
//! The executor hands every backend the same thing: the [`KernelIR`], its [`BroadcastPlan`], and one
//! C-contiguous buffer per input in the kernel's dtype (an input the plan materialises arrives already
//! expanded to the iteration shape). The [`Interpreter`] is the first backend and the oracle; the JIT
//! implements the same trait.

use crate::error::Result;
use kiln_ir::shape::{broadcast_strides, c_strides};
use kiln_ir::{BroadcastPlan, KernelIR, Real, StridedInput, Tensor};
use std::borrow::Cow;
use std::fmt::Debug;

/// One input, ready to run: C-contiguous elements and their shape.
#[derive(Debug, Clone)]
pub struct Buffer<'a, T: Clone> {
    pub data: Cow<'a, [T]>,
    pub shape: Vec<usize>,
}

/// The inputs of one run, in the kernel's dtype.
#[derive(Debug, Clone)]
pub enum Buffers<'a> {
    F64(Vec<Buffer<'a, f64>>),
    F32(Vec<Buffer<'a, f32>>),
}

/// Something that runs kernels.
pub trait Backend: Send + Sync + Debug {
    /// The name `--backend` takes.
    fn name(&self) -> &'static str;
    /// Runs `kernel` over `inputs`, which were prepared according to `plan`.
    fn run(&self, kernel: &KernelIR, plan: &BroadcastPlan, inputs: &Buffers<'_>) -> Result<Tensor>;
}

/// The tree-walking interpreter of kiln-ir, one element at a time: the oracle.
#[derive(Debug, Clone, Copy, Default)]
pub struct Interpreter;

impl Backend for Interpreter {
    fn name(&self) -> &'static str {
        "interp"
    }

    fn run(&self, kernel: &KernelIR, _plan: &BroadcastPlan, inputs: &Buffers<'_>) -> Result<Tensor> {
        match inputs {
            Buffers::F64(b) => interpret(kernel, b),
            Buffers::F32(b) => interpret(kernel, b),
        }
    }
}

fn interpret<T: Real>(kernel: &KernelIR, buffers: &[Buffer<'_, T>]) -> Result<Tensor> {
    let inputs = buffers
        .iter()
        .map(|b| {
            let strides = broadcast_strides(&b.shape, &c_strides(&b.shape), &kernel.shape)?;
            Ok(StridedInput {
                data: &b.data[..],
                offset: 0,
                strides,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(kiln_ir::interpret(kernel, &inputs)?)
}
