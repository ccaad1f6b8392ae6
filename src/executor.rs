//! The executor: binds inputs by name, settles the dtype and the iteration shape, plans the
//! broadcasts, materialises what the plan says, and hands the buffers to a backend.

use crate::array::{ArrayArg, Converted, Float, Output};
use crate::backend::{Backend, Buffer, Buffers};
use crate::error::{Error, Result};
use crate::program::Program;
use kiln_ir::{BroadcastPlan, DType, InputLayout, InputPlan, KernelIR, PlanOptions};
use ndarray::IxDyn;
use std::borrow::Cow;

/// The arguments of a run, in the program's input order.
pub(crate) fn bind<'b, 'a>(
    program: &Program,
    args: &'b [(&str, ArrayArg<'a>)],
) -> Result<Vec<&'b ArrayArg<'a>>> {
    for (i, (name, _)) in args.iter().enumerate() {
        if args[..i].iter().any(|(n, _)| n == name) {
            return Err(Error::DuplicateInput {
                name: name.to_string(),
            });
        }
    }
    program
        .names
        .iter()
        .map(|name| {
            args.iter()
                .find(|(n, _)| n == name)
                .map(|(_, a)| a)
                .ok_or_else(|| Error::MissingInput { name: name.clone() })
        })
        .collect()
}

/// The dtype a kernel over `args` computes in: f64 if any input is f64 or there is none, else f32.
pub(crate) fn kernel_dtype(args: &[&ArrayArg<'_>]) -> DType {
    args.iter()
        .map(|a| a.dtype())
        .reduce(DType::promote)
        .unwrap_or(DType::F64)
}

/// The kernel and its plan for these arguments.
pub(crate) fn specialise(
    program: &Program,
    args: &[&ArrayArg<'_>],
    options: PlanOptions,
) -> Result<(KernelIR, BroadcastPlan)> {
    let shapes: Vec<Vec<usize>> = args.iter().map(|a| a.shape().to_vec()).collect();
    let kernel = program.kernel(kernel_dtype(args), &shapes)?;
    let layouts: Vec<InputLayout> = args
        .iter()
        .map(|a| InputLayout {
            shape: a.shape().to_vec(),
            contiguous: a.dtype() != kernel.dtype || is_standard(a),
        })
        .collect();
    let plan = BroadcastPlan::new(&kernel.shape, &layouts, options)?;
    Ok((kernel, plan))
}

fn is_standard(a: &ArrayArg<'_>) -> bool {
    match a {
        ArrayArg::F64(v) => v.is_standard_layout(),
        ArrayArg::F32(v) => v.is_standard_layout(),
    }
}

/// Runs `program` over `args` on `backend`.
pub(crate) fn execute(
    program: &Program,
    backend: &dyn Backend,
    args: &[(&str, ArrayArg<'_>)],
    options: PlanOptions,
) -> Result<Output> {
    let args = bind(program, args)?;
    let (kernel, plan) = specialise(program, &args, options)?;
    let buffers = match kernel.dtype {
        DType::F64 => Buffers::F64(prepare::<f64>(&kernel, &plan, &args)?),
        DType::F32 => Buffers::F32(prepare::<f32>(&kernel, &plan, &args)?),
    };
    Output::try_from(backend.run(&kernel, &plan, &buffers)?)
}

/// One C-contiguous buffer per input: the caller's memory where it already is one, else a copy.
fn prepare<'a, T: Float>(
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    args: &[&ArrayArg<'a>],
) -> Result<Vec<Buffer<'a, T>>> {
    args.iter()
        .zip(&plan.inputs)
        .map(|(arg, input_plan)| {
            let conv = Converted::<T>::of(arg);
            if *input_plan == InputPlan::Materialise {
                let view = conv.view();
                let expanded =
                    view.broadcast(IxDyn(&kernel.shape))
                        .ok_or_else(|| kiln_ir::IrError::Broadcast {
                            left: view.shape().to_vec(),
                            right: kernel.shape.clone(),
                        })?;
                return Ok(Buffer {
                    data: Cow::Owned(expanded.iter().copied().collect()),
                    shape: kernel.shape.clone(),
                });
            }
            let shape = arg.shape().to_vec();
            let data = match conv {
                Converted::View(v) => match v.to_slice() {
                    Some(s) => Cow::Borrowed(s),
                    None => Cow::Owned(v.iter().copied().collect()),
                },
                Converted::Owned(a) => Cow::Owned(a.into_raw_vec_and_offset().0),
            };
            Ok(Buffer { data, shape })
        })
        .collect()
}
