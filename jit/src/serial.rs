//! [`SerialMap`]: a bound map called on the calling thread, everything but the buffers fixed when it
//! is made: the parameter block, the one work unit, and per input the elements a slice must hold and
//! whether it may be read in place from an output. A call checks the buffers against those
//! (check.rs `check_serial`), puts their pointers on the stack and calls the code once (call.rs
//! `call_unit`): no run plan, no output allocation, no thread pool. The call of a prepared handle in a
//! hot loop (issue 12: the particle step at n = 64).

use crate::call;
use crate::check;
use crate::error::{JitError, Result};
use crate::layout::{Access, Mode};
use crate::plan::RunPlan;
use crate::run::{Elem, RunConfig, Serial};
use crate::{BoundKernel, CompiledKernel};
use kiln_ir::{DType, InputPlan};
use std::sync::Arc;

/// One input of a [`SerialMap`] call: a slice, or an output of the call read in place.
#[derive(Debug, Clone, Copy)]
pub enum Part<'a, T> {
    /// The input's elements in C order (of the iteration shape where the plan materialises it).
    Slice(&'a [T]),
    /// Output `k` of the call, read in place (an update: `p = p + v*dt` into `p`), where the map
    /// reads the input at every point at that point alone (checked).
    Output(usize),
}

/// Runs of at most this many inputs and outputs pass their pointers from the stack.
const STACK_POINTERS: usize = 16;

/// A map of one or several outputs bound for calls on the calling thread (see the module doc).
pub struct SerialMap {
    code: Arc<CompiledKernel>,
    params: Box<[i64]>,
    /// `(seg_begin, seg_end, lo, hi)` of the one unit; `None` when there is nothing to run.
    unit: Option<(usize, usize, usize, usize)>,
    dtype: DType,
    /// Points of the iteration space: the length of every output.
    n: usize,
    n_outputs: usize,
    /// Per input: the elements its slice must hold.
    lens: Box<[usize]>,
    /// Per input: whether it may be read in place from an output (read at every point at that point
    /// alone: contiguous of the iteration shape, or the one point of a one-point iteration).
    in_place: Box<[bool]>,
}

impl BoundKernel {
    /// This bound map as a [`SerialMap`].
    ///
    /// # Errors
    /// The kernel is not a map, or an input is read per row in place from a strided view (a
    /// `SerialMap` takes slices: use [`BoundKernel::run_into_many`]).
    pub fn serial_map(&self) -> Result<SerialMap> {
        let (st, geo, kernel, plan) = (&self.st, &self.geo, &self.kernel, &self.plan);
        if st.mode != Mode::Map {
            return Err(JitError::Unsupported("a serial map is a map".into()));
        }
        let cfg = RunConfig {
            max_units: 1,
            spread: &Serial,
            ..RunConfig::default()
        };
        let run = RunPlan::new(st, geo, kernel, &cfg, kernel.dtype.size());
        debug_assert!(run.n_units <= 1, "one unit (or none) when max_units is 1");
        let mut lens = Vec::with_capacity(kernel.inputs.len());
        let mut in_place = Vec::with_capacity(kernel.inputs.len());
        for (i, decl) in kernel.inputs.iter().enumerate() {
            let declared = match geo.declared[i] {
                Some(size) => size,
                None => kiln_ir::shape::checked_size(&decl.shape)?,
            };
            let materialised = plan.inputs[i] == InputPlan::Materialise;
            let len = if materialised { geo.n } else { declared };
            // a slice of `len` elements holds what the plan reads (not so for a plan that reads a
            // strided view's rows in place: such a map runs through `run_into_many`)
            let need = if geo.n == 0 {
                0
            } else {
                check::needed(st, geo, plan, i).map_err(|why| JitError::BadInput {
                    index: i,
                    name: decl.name.clone(),
                    why,
                })?
            };
            if need > len {
                return Err(JitError::Unsupported(format!(
                    "input {i} ('{}') is read through a view's strides: {need} elements of {len}",
                    decl.name
                )));
            }
            lens.push(len);
            let one_point = st.inputs[i] == Access::Splat && decl.shape == kernel.shape;
            in_place.push(!materialised && (st.inputs[i] == Access::Contiguous || one_point));
        }
        Ok(SerialMap {
            code: self.code.clone(),
            params: run.params.to_vec().into_boxed_slice(),
            unit: run.runs.then(|| run.unit(0)),
            dtype: kernel.dtype,
            n: geo.n,
            n_outputs: kernel.n_outputs(),
            lens: lens.into_boxed_slice(),
            in_place: in_place.into_boxed_slice(),
        })
    }
}

impl std::fmt::Debug for SerialMap {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SerialMap({} points, {} outputs)", self.n, self.n_outputs)
    }
}

impl SerialMap {
    /// Runs the map over `inputs` into `outs` (one slice of `n` elements per output, C order) on the
    /// calling thread; an input may be read in place from an output ([`Part::Output`]) where that is
    /// safe (checked).
    ///
    /// # Errors
    /// Another dtype than the kernel's, counts other than the kernel's inputs and outputs, a slice of
    /// another length than bound, and an input read in place that the map reads at other points than
    /// the one it writes.
    #[inline]
    pub fn run<T: Elem>(&self, inputs: &[Part<'_, T>], outs: &mut [&mut [T]]) -> Result<()> {
        if T::DTYPE != self.dtype {
            return Err(JitError::DType {
                kernel: self.dtype,
                given: T::DTYPE,
            });
        }
        let checked = check::check_serial(&self.lens, &self.in_place, self.n, self.n_outputs, inputs, outs)?;
        let Some(unit) = self.unit else {
            return Ok(());
        };
        // the inputs' pointers, then outputs 1, 2, ...'s (output 0 is `out_val`)
        let all = inputs.len() + outs.len() - 1;
        if all > STACK_POINTERS {
            let mut heap = vec![std::ptr::null(); all];
            let out0 = fill(&mut heap, inputs, outs);
            call::call_unit::<T>(&self.code.code, checked, &self.params, &heap, out0, unit);
            return Ok(());
        }
        let mut stack = [std::ptr::null::<u8>(); STACK_POINTERS];
        let out0 = fill(&mut stack[..all], inputs, outs);
        call::call_unit::<T>(&self.code.code, checked, &self.params, &stack[..all], out0, unit);
        Ok(())
    }
}

/// Fills `ptrs` with the pointers the code reads: each input's (an input read in place takes its
/// output's), then those of outputs 1, 2, ... (`ins[n_in + k]` is output `1 + k`'s); returns output
/// 0's, which the code is passed as `out_val`.
#[inline]
fn fill<T: Elem>(ptrs: &mut [*const u8], inputs: &[Part<'_, T>], outs: &mut [&mut [T]]) -> *mut u8 {
    let n_in = inputs.len();
    let (first, rest) = outs.split_first_mut().expect("checked: a map has an output");
    let out0: *mut u8 = first.as_mut_ptr().cast();
    for (k, o) in rest.iter_mut().enumerate() {
        ptrs[n_in + k] = o.as_mut_ptr().cast_const().cast();
    }
    for (i, input) in inputs.iter().enumerate() {
        ptrs[i] = match *input {
            Part::Slice(s) => s.as_ptr().cast(),
            Part::Output(0) => out0.cast_const(),
            Part::Output(k) => ptrs[n_in + k - 1],
        };
    }
    out0
}
