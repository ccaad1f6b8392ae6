//! One run of a compiled kernel, in four steps: check the inputs (check.rs), plan the cut (plan.rs),
//! allocate the outputs (output.rs), call the code over every work unit (call.rs), and finish the
//! result (output.rs). Maps, reductions and scans all run this way.

use crate::call::{self, Code};
use crate::check;
use crate::error::Result;
use crate::layout::{Geometry, Structure};
use crate::output::Outputs;
use crate::plan::RunPlan;
use crate::run::{Elem, InputRef, OutSlice, RunConfig, Workspace};
use kiln_ir::{BroadcastPlan, ElemType, KernelIR, Tensor};

/// Runs of at most this many inputs pass their input pointers from the stack.
const STACK_INPUTS: usize = 16;

/// Checks `inputs` against the plan and the sizes, runs the code over every work unit (through
/// `cfg.spread`), finishes chunked reductions (the second pass, over the partials in order), and
/// turns the output buffers into a tensor as the interpreter would give it. With `dest`, a map or scan
/// writes straight into it (which must hold exactly `n` elements of its result type: a float
/// kernel's dtype, a typed kernel's result type) and no tensor is returned. A kernel of several
/// outputs writes its further ones into `extra`, the caller's buffers (`n` elements each, of the
/// types `extra_types` says: a float kernel's dtype, a typed kernel's own output types), checked
/// with everything else before any is written; a fresh result of several outputs is this run into
/// buffers its caller allocated.
#[allow(clippy::too_many_arguments)]
pub(crate) fn execute<T: Elem>(
    code: &Code,
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    inputs: &[InputRef<'_, T>],
    dest: Option<OutSlice<'_>>,
    extra: &mut [OutSlice<'_>],
    extra_types: &[ElemType],
    cfg: &RunConfig<'_>,
    ws: &mut Workspace,
) -> Result<Option<Tensor>> {
    let checked = check::check_run(
        st,
        geo,
        kernel,
        plan,
        inputs,
        dest.as_ref(),
        extra,
        extra_types,
        cfg,
    )?;
    let run = RunPlan::new(st, geo, kernel, cfg, std::mem::size_of::<T>());
    let mut outputs = Outputs::<T>::new(st, &run, dest, ws);
    outputs.allocate(&run, cfg)?;
    let mut targets = outputs.targets(&run);
    if !extra.is_empty() {
        // every unit writes the further map outputs at its points: none is skipped (call.rs
        // `Decides`), whatever its partial
        targets.decides = None;
    }
    // the input pointers, then the further outputs' (the caller's buffers, each of its output's
    // type, through their addresses shifted as output.rs gives them), on the stack for up to
    // `STACK_INPUTS` of them (no allocation per run); an input read in place from an output takes
    // the very pointer the code writes through
    let size = std::mem::size_of::<T>();
    let n_extra = extra.len();
    let extra_ptrs = extra
        .iter_mut()
        .map(|e| crate::output::out_target(e, size).0.cast_const());
    let mut out_stack = [std::ptr::null::<u8>(); STACK_INPUTS];
    let out_heap: Vec<*const u8>;
    let outs: &[*const u8] = if n_extra < STACK_INPUTS {
        out_stack[0] = targets.out_val.cast_const();
        for (p, e) in out_stack[1..].iter_mut().zip(extra_ptrs) {
            *p = e;
        }
        &out_stack[..=n_extra]
    } else {
        out_heap = std::iter::once(targets.out_val.cast_const())
            .chain(extra_ptrs)
            .collect();
        &out_heap
    };
    let out_ptr = |k: usize| outs[k];
    let base = |i: &InputRef<'_, T>| match i {
        InputRef::Destination => out_ptr(0),
        InputRef::Output(k) => out_ptr(*k),
        other => other.base(),
    };
    let all = inputs.len() + n_extra;
    let mut stack = [std::ptr::null::<u8>(); STACK_INPUTS];
    let heap: Vec<*const u8>;
    let ins: &[*const u8] = if all <= STACK_INPUTS {
        for (p, i) in stack.iter_mut().zip(inputs) {
            *p = base(i);
        }
        for k in 0..n_extra {
            stack[inputs.len() + k] = out_ptr(k + 1);
        }
        &stack[..all]
    } else {
        heap = inputs
            .iter()
            .map(base)
            .chain((0..n_extra).map(|k| out_ptr(k + 1)))
            .collect();
        &heap
    };
    let ran = call::dispatch::<T>(code, checked, &run, ins, &targets, cfg.spread)?;
    outputs.written(&ran);
    Ok(outputs.finish(kernel, st, geo, cfg))
}
