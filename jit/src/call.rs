//! The only unsafe code of kiln-jit: owning JIT memory, and calling compiled code.
//!
//! Invariants:
//! - a [`Code`] owns the `JITModule` its entry point lives in, and frees that module's memory only in
//!   `Drop`, when no `&Code` exists any more, so no call can be running and the pointer never escapes;
//! - compiled code runs only through [`execute`], after every input buffer was checked to hold every
//!   element the plan makes the code read (contiguous: `n`; per-row runs: the furthest row start plus
//!   `row_len`; per-row splats: the furthest row start; splats: one), and the output buffers were
//!   allocated with exactly the elements the segment geometry makes the code write. The geometry
//!   ([`Geometry`]) is computed by kiln-jit itself from the checked kernel shape, never taken from
//!   the caller.

use crate::error::{JitError, Result};
use crate::layout::{Access, Geometry, Mode, Structure};
use cranelift_jit::JITModule;
use cranelift_module::FuncId;
use kiln_ir::{BroadcastPlan, InputPlan, KernelIR, Real, ReduceOp, Tensor, Values};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// `kernel(ins, out_val, out_idx, params, seg_begin, seg_end)`: see skeleton.rs.
type KernelFn = unsafe extern "C" fn(*const *const u8, *mut u8, *mut u8, *const i64, i64, i64);

static LIVE_MODULES: AtomicUsize = AtomicUsize::new(0);

/// The number of JIT modules alive (compiled kernels not yet freed), for tests and diagnostics.
pub fn live_modules() -> usize {
    LIVE_MODULES.load(Ordering::Relaxed)
}

/// A finalized kernel and the module that owns its machine code.
pub(crate) struct Code {
    entry: KernelFn,
    /// Only touched again in `Drop`; the mutex makes `Code` `Sync` (`JITModule` is only `Send`).
    module: Mutex<Option<JITModule>>,
}

impl Code {
    /// Finalizes `module` and takes its function `id`, which must have the signature of
    /// `skeleton::signature`.
    pub(crate) fn new(mut module: JITModule, id: FuncId) -> Result<Code> {
        if let Err(e) = module.finalize_definitions() {
            Self::discard(module);
            return Err(e.into());
        }
        let ptr = module.get_finalized_function(id);
        // SAFETY: `ptr` is the finalized code of a function declared with `skeleton::signature`
        // (six i64 parameters, no result, the ISA's default calling convention: System V on x86-64
        // Linux), which is the ABI of `KernelFn`.
        let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(ptr) };
        LIVE_MODULES.fetch_add(1, Ordering::Relaxed);
        Ok(Code {
            entry,
            module: Mutex::new(Some(module)),
        })
    }

    /// Frees a module whose code never ran and whose pointers never escaped.
    pub(crate) fn discard(module: JITModule) {
        // SAFETY: nothing from this module was ever called or handed out.
        unsafe { module.free_memory() }
    }
}

impl Drop for Code {
    fn drop(&mut self) {
        let module = self.module.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(module) = module {
            // SAFETY: `drop` has the only access to `self`; every call goes through `&Code`, so none
            // is running, and `entry` is private and dies with `self`.
            unsafe { module.free_memory() };
            LIVE_MODULES.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// An element type kernels compute in: f64 or f32.
pub trait Elem: Real + Default {
    /// The index type of arg reductions, as wide as the float (lanes line up with the vectors).
    type Idx: Copy + Into<i64> + Send + Sync + 'static;
    const NO_INDEX: Self::Idx;
    /// The largest reduction extent whose indices the index type holds.
    const MAX_INDEX: usize;
    fn values(v: Vec<Self>) -> Values;
}

impl Elem for f64 {
    type Idx = i64;
    const NO_INDEX: i64 = -1;
    const MAX_INDEX: usize = i64::MAX as usize;
    fn values(v: Vec<f64>) -> Values {
        Values::F64(v)
    }
}

impl Elem for f32 {
    type Idx = i32;
    const NO_INDEX: i32 = -1;
    const MAX_INDEX: usize = i32::MAX as usize;
    fn values(v: Vec<f32>) -> Values {
        Values::F32(v)
    }
}

/// Checks `inputs` against the plan and the sizes, runs the code over every segment, and turns the
/// output buffers into a tensor as the interpreter would give it. With `dest`, a map with a float
/// result writes straight into it (which must hold exactly `n` elements) and no tensor is returned.
pub(crate) fn execute<T: Elem>(
    code: &Code,
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    inputs: &[&[T]],
    dest: Option<&mut [T]>,
) -> Result<Option<Tensor>> {
    check_inputs(st, geo, kernel, plan, inputs)?;
    let op = st.mode.reduce_op();
    if let Some(op) = op {
        if geo.n_red == 0 && geo.n_out > 0 && !op.has_identity() {
            return Err(kiln_ir::IrError::EmptyReduction { op: op.name() }.into());
        }
        if op.is_arg() && geo.n_red > T::MAX_INDEX {
            return Err(JitError::Unsupported(format!(
                "{} over {} elements of {}: indices do not fit the index lanes",
                op.name(),
                geo.n_red,
                T::DTYPE
            )));
        }
    }
    // Output buffers, with exactly the elements the code writes (see the module doc).
    let n_val = if st.mode == Mode::Map { geo.n } else { geo.n_out };
    let mut val_t: Vec<T> = Vec::new();
    let mut val_f64: Vec<f64> = Vec::new();
    let mut idx: Vec<T::Idx> = Vec::new();
    let direct = dest.is_some();
    if let Some(d) = &dest {
        if op.is_some() || kernel.output_type() != kiln_ir::OutputType::Float(T::DTYPE) || d.len() != n_val {
            return Err(JitError::BadInput {
                index: kernel.inputs.len(),
                name: "output".into(),
                why: format!(
                    "{} elements of {} given for a result of {n_val}",
                    d.len(),
                    T::DTYPE
                ),
            });
        }
    }
    let out_val: *mut u8 = match op {
        None => match dest {
            Some(d) => d.as_mut_ptr().cast(),
            None => {
                val_t = vec![T::ZERO; n_val];
                val_t.as_mut_ptr().cast()
            }
        },
        Some(ReduceOp::Sum) => {
            val_f64 = vec![-0.0; n_val];
            val_f64.as_mut_ptr().cast()
        }
        Some(ReduceOp::Prod) => {
            val_f64 = vec![1.0; n_val];
            val_f64.as_mut_ptr().cast()
        }
        Some(op) => {
            let init = match op {
                ReduceOp::Min | ReduceOp::ArgMin => T::INFINITY,
                ReduceOp::Max | ReduceOp::ArgMax => T::NEG_INFINITY,
                ReduceOp::Any => T::ZERO,
                _ => T::ONE,
            };
            val_t = vec![init; n_val];
            val_t.as_mut_ptr().cast()
        }
    };
    let out_idx: *mut u8 = if op.is_some_and(ReduceOp::is_arg) {
        idx = vec![T::NO_INDEX; n_val];
        idx.as_mut_ptr().cast()
    } else {
        std::ptr::null_mut()
    };
    let ins: Vec<*const u8> = inputs.iter().map(|b| b.as_ptr().cast()).collect();
    if geo.n > 0 && geo.n_seg > 0 {
        debug_assert_eq!(geo.params.len(), st.param_count());
        // SAFETY: see the module doc: `check_inputs` proved every read in bounds; the output
        // buffers hold `n` (map) or `n_out` (reduction) elements of the types the code stores, and the
        // segment geometry only addresses outputs below those counts; `params` has the layout
        // `Structure` fixes for this code, whose structure the caller matched against `kernel` and
        // `plan`. The buffers (the caller's `dest` included, whose length was checked above) outlive
        // the call, which returns before they are read.
        unsafe {
            (code.entry)(
                ins.as_ptr(),
                out_val,
                out_idx,
                geo.params.as_ptr(),
                0,
                geo.n_seg as i64,
            )
        };
    }
    if direct {
        return Ok(None);
    }
    Ok(Some(crate::output::tensor::<T>(
        kernel, st, geo, val_t, val_f64, idx,
    )))
}

/// Checks that every input buffer holds what its declaration and the plan make the code read.
fn check_inputs<T: Elem>(
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    inputs: &[&[T]],
) -> Result<()> {
    if inputs.len() != kernel.inputs.len() {
        return Err(kiln_ir::IrError::Arity {
            expected: kernel.inputs.len(),
            got: inputs.len(),
        }
        .into());
    }
    for (i, (buf, decl)) in inputs.iter().zip(&kernel.inputs).enumerate() {
        let bad = |why: String| JitError::BadInput {
            index: i,
            name: decl.name.clone(),
            why,
        };
        let declared = kiln_ir::shape::checked_size(&decl.shape)?;
        let expected = if plan.inputs[i] == InputPlan::Materialise {
            geo.n
        } else {
            declared
        };
        if buf.len() != expected {
            let what = if plan.inputs[i] == InputPlan::Materialise {
                format!("a materialised buffer of the iteration shape {:?}", kernel.shape)
            } else {
                format!("shape {:?}", decl.shape)
            };
            return Err(bad(format!(
                "{} elements given, {expected} expected for {what}",
                buf.len()
            )));
        }
        if geo.n == 0 {
            continue;
        }
        let need = match st.inputs[i] {
            Access::Splat => 1,
            Access::Contiguous => geo.n,
            Access::RowRun | Access::RowSplat => {
                let InputPlan::PerRow { outer_strides, .. } = &plan.inputs[i] else {
                    return Err(bad("the plan changed under the kernel".into()));
                };
                let (mut lo, mut hi) = (0i128, 0i128);
                for (&d, &s) in plan.outer_shape().iter().zip(outer_strides) {
                    let span = (d as i128 - 1) * s as i128;
                    if span < 0 { lo += span } else { hi += span }
                }
                if lo < 0 {
                    return Err(bad(format!("negative outer strides {outer_strides:?}")));
                }
                let last = if st.inputs[i] == Access::RowRun {
                    plan.row_len as i128
                } else {
                    1
                };
                usize::try_from(hi + last).map_err(|_| bad("row offsets overflow".into()))?
            }
        };
        if buf.len() < need {
            return Err(bad(format!("{} elements, but the plan reads {need}", buf.len())));
        }
    }
    Ok(())
}
