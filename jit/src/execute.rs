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
    let ins: Vec<*const u8> = inputs.iter().map(InputRef::base).collect();
    call::dispatch::<T>(code, checked, &run, &ins, &outputs.targets(&run), cfg.spread)?;
    Ok(outputs.finish(kernel, st, geo, cfg))
}
