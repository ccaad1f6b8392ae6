//! One run of a compiled kernel, in four steps: check the inputs (check.rs), plan the cut (plan.rs),
//! allocate the outputs (output.rs), call the code over every work unit (call.rs), and finish the
//! result (output.rs). Maps, reductions and scans all run this way.

use crate::call::{self, Code};
use crate::check;
use crate::error::Result;
use crate::layout::{Geometry, Structure};
use crate::output::Outputs;
use crate::plan::RunPlan;
use crate::run::{Elem, InputRef, RunConfig, Workspace};
use kiln_ir::{BroadcastPlan, KernelIR, Tensor};

/// Runs of at most this many inputs pass their input pointers from the stack.
const STACK_INPUTS: usize = 16;

/// Checks `inputs` against the plan and the sizes, runs the code over every work unit (through
/// `cfg.spread`), finishes chunked reductions (the second pass, over the partials in order), and
/// turns the output buffers into a tensor as the interpreter would give it. With `dest`, a map or scan
/// with a float result writes straight into it (which must hold exactly `n` elements) and no tensor
/// is returned.
#[allow(clippy::too_many_arguments)]
pub(crate) fn execute<T: Elem>(
    code: &Code,
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    inputs: &[InputRef<'_, T>],
    dest: Option<&mut [T]>,
    cfg: &RunConfig<'_>,
    ws: &mut Workspace,
) -> Result<Option<Tensor>> {
    let checked = check::check_run(st, geo, kernel, plan, inputs, dest.as_deref(), cfg)?;
    let run = RunPlan::new(st, geo, kernel, cfg, std::mem::size_of::<T>());
    let mut outputs = Outputs::new(st, &run, dest, ws);
    outputs.allocate(&run, cfg)?;
    let targets = outputs.targets(&run);
    // the input pointers, on the stack for up to `STACK_INPUTS` inputs (no allocation per run); an
    // input read in place from the destination takes the very pointer the code writes through
    let base = |i: &InputRef<'_, T>| match i {
        InputRef::Destination => targets.out_val.cast_const(),
        other => other.base(),
    };
    let mut stack = [std::ptr::null::<u8>(); STACK_INPUTS];
    let heap: Vec<*const u8>;
    let ins: &[*const u8] = if inputs.len() <= STACK_INPUTS {
        for (p, i) in stack.iter_mut().zip(inputs) {
            *p = base(i);
        }
        &stack[..inputs.len()]
    } else {
        heap = inputs.iter().map(base).collect();
        &heap
    };
    call::dispatch::<T>(code, checked, &run, ins, &targets, cfg.spread)?;
    Ok(outputs.finish(kernel, st, geo, cfg))
}
