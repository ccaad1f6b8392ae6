//! [`SerialMap`]: a bound map called on the calling thread, everything but the buffers fixed when
//! it is made: the parameter block, the one work unit, and per input the elements a slice must hold
//! and whether it may be read in place from an output. A call checks the buffers against those
//! (check.rs `check_serial`), puts their pointers on the stack and calls the code once (call.rs
//! `call_unit`): no run plan, no output allocation, no thread pool. The call of a prepared handle
//! in a hot loop (issue 12: the particle step at n = 64). [`SerialReduce`] is the same for a sum,
//! product, min, max, argmin or argmax (any and all of bool and integer values), of the whole array
//! or along axes, into one accumulator per output (issue 24: `sum(x*x)` and `sum(m, axis=1)` at
//! N = 100). A bound kernel's own call into buffers takes either below the threshold for every
//! element type (`run_refs`: inputs stored in another type passed as a run passes them).

use crate::call;
use crate::check;
use crate::error::{JitError, Result};
use crate::layout::{Access, Mode};
use crate::plan::RunPlan;
use crate::run::{Elem, OutSlice, RunConfig, Serial};
use crate::{BoundKernel, CompiledKernel};
use kiln_ir::{ElemType, InputPlan, ReduceOp, Start};
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

/// Per input of a serial call: the elements its slice must hold, and whether it may be read in place
/// from an output.
type SerialLens = (Box<[usize]>, Box<[bool]>);

/// Runs of at most this many inputs and outputs pass their pointers from the stack.
const STACK_POINTERS: usize = 16;

/// A map of one or several outputs bound for calls on the calling thread (see the module doc).
pub struct SerialMap {
    code: Arc<CompiledKernel>,
    params: Box<[i64]>,
    /// `(seg_begin, seg_end, lo, hi)` of the one unit; `None` when there is nothing to run.
    unit: Option<(usize, usize, usize, usize)>,
    dtype: ElemType,
    /// Points of the iteration space: the length of every output.
    n: usize,
    n_outputs: usize,
    /// Per input: the elements its slice must hold.
    lens: Box<[usize]>,
    /// Per input: whether it may be read in place from an output (read at every point at that point
    /// alone: contiguous of the iteration shape, or the one point of a one-point iteration).
    in_place: Box<[bool]>,
    /// Per input: the element type it is read in where the code reads it converted (a typed
    /// kernel's inputs, or one stored in another type: [`BoundKernel::run_into_out`]'s call takes
    /// them), None where it is read in the dtype.
    stored: Box<[Option<ElemType>]>,
    /// Per output: the element type the code writes it in (a typed kernel's own; a float kernel's
    /// dtype); None where no call into the outputs' buffers takes it (a float map's logical result
    /// alone, which a run types after).
    out_types: Option<Box<[ElemType]>>,
    /// Whether [`SerialMap::run`] takes the map: every input read in the dtype, every output
    /// written in it.
    slices: bool,
}

impl BoundKernel {
    /// This bound map as a [`SerialMap`].
    ///
    /// # Errors
    /// The kernel is not a map, or an input is read per row in place from a strided view (a
    /// `SerialMap` takes slices: use [`BoundKernel::run_into_many`]).
    pub fn serial_map(&self) -> Result<SerialMap> {
        let (st, geo, kernel) = (&self.st, &self.geo, &self.kernel);
        if st.mode != Mode::Map {
            return Err(JitError::Unsupported("a serial map is a map".into()));
        }
        // the types of the outputs' buffers: a typed kernel's own; a float kernel's dtype (a logical
        // result written 1 / 0 in it where the map has several outputs, as `check_run` takes them)
        let own = kernel.dtype;
        let out_types = match st.typed {
            Some(_) => Some(
                std::iter::once(geo.out_type)
                    .chain(self.extra_types.iter().copied())
                    .collect(),
            ),
            None if geo.out_type == own
                || (!self.extra_types.is_empty() && geo.out_type == ElemType::Bool) =>
            {
                Some(vec![own; kernel.n_outputs()].into_boxed_slice())
            }
            None => None,
        };
        let cfg = RunConfig {
            max_units: 1,
            spread: &Serial,
            ..RunConfig::default()
        };
        let run = RunPlan::new(st, geo, kernel, &cfg, kernel.dtype.size());
        debug_assert!(run.n_units <= 1, "one unit (or none) when max_units is 1");
        let (lens, in_place) = self.serial_lens()?;
        Ok(SerialMap {
            code: self.code.clone(),
            params: run.params.to_vec().into_boxed_slice(),
            unit: run.runs.then(|| run.unit(0)),
            dtype: kernel.dtype,
            n: geo.n,
            n_outputs: kernel.n_outputs(),
            lens,
            in_place,
            slices: st.stored.iter().all(Option::is_none)
                && (st.typed.is_none() || out_types.as_ref().is_some_and(|t| t.iter().all(|&t| t == own))),
            stored: st.stored.clone().into_boxed_slice(),
            out_types,
        })
    }

    /// This bound reduction as a [`SerialReduce`], for runs under `cfg`'s chunking (its
    /// `target_partials` and `min_chunk`; the run is one unit on the calling thread).
    ///
    /// # Errors
    /// The kernel is not a sum, product, min or max (of the whole array or along axes) of float
    /// values with a result of its dtype, nor a sum, product, min, max, any or all of bool or
    /// integer values, nor an argmin or argmax; it has further map outputs; the run would be cut
    /// into chunks (their partials are merged by the general run); an input is read per row in
    /// place from a strided view; or a min or max over an empty axis.
    pub fn serial_reduce(&self, cfg: &RunConfig<'_>) -> Result<SerialReduce> {
        let (st, geo, kernel) = (&self.st, &self.geo, &self.kernel);
        // float values (a float kernel's, or a typed kernel's of its lanes' type): sums and
        // products in f64 accumulators, min and max in the dtype; bool and integer values (a typed
        // kernel's): any of these and any / all in int64 words (int_acc.rs)
        let ints = st.typed.filter(|t| t.int_acc()).map(|t| t.values);
        let complex = st.typed.is_some_and(|t| t.complex_acc());
        let op = match st.mode {
            Mode::Trailing(op) | Mode::Kept(op) if !complex => op,
            _ => {
                return Err(JitError::Unsupported(
                    "a serial reduction is a sum, product, min, max, argmin, argmax, any or all of real \
                     values"
                        .into(),
                ));
            }
        };
        let result = match (ints, op) {
            (None, ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Min | ReduceOp::Max) => kernel.dtype,
            (_, ReduceOp::ArgMin | ReduceOp::ArgMax) => ElemType::I64,
            (Some(_), ReduceOp::Sum | ReduceOp::Prod) => ElemType::I64,
            (Some(_), ReduceOp::Any | ReduceOp::All) => ElemType::Bool,
            (Some(vt), ReduceOp::Min | ReduceOp::Max) => vt,
            _ => {
                return Err(JitError::Unsupported(
                    "a serial reduction is a sum, product, min, max, argmin or argmax (any or all of \
                     bool and integer values)"
                        .into(),
                ));
            }
        };
        if geo.out_type != result {
            return Err(JitError::Unsupported(format!(
                "a serial reduction's result is {result}, not {}",
                geo.out_type
            )));
        }
        // a min or max of nothing has no value: the general run's check reports it
        if geo.n_red == 0 && !op.has_identity() {
            return Err(kiln_ir::IrError::EmptyReduction { op: op.name() }.into());
        }
        let cfg = RunConfig {
            start: Start::Identity,
            max_units: 1,
            spread: &Serial,
            ..*cfg
        };
        let run = RunPlan::new(st, geo, kernel, &cfg, kernel.dtype.size());
        if run.chunks.is_some() || run.n_units > 1 || run.n_slots != geo.n_out || run.state_row_bytes > 0 {
            return Err(JitError::Unsupported(
                "a serial reduction is one chunk of one unit, one slot per output".into(),
            ));
        }
        // a reduction with further map outputs writes them through pointers after the inputs'
        // (`run_with_extra`), which a serial call does not pass
        if !kernel.map_extra().is_empty() {
            return Err(JitError::Unsupported(
                "a serial reduction of a kernel with further map outputs".into(),
            ));
        }
        let (lens, in_place) = self.serial_lens()?;
        Ok(SerialReduce {
            code: self.code.clone(),
            params: run.params.to_vec().into_boxed_slice(),
            unit: run.runs.then(|| run.unit(0)),
            dtype: kernel.dtype,
            op,
            slots: run.n_slots,
            lens,
            in_place,
            // (an arg-reduction's result is its indices, never of the dtype: `run_refs` takes it)
            slices: ints.is_none() && !op.is_arg() && st.stored.iter().all(Option::is_none),
            stored: st.stored.clone().into_boxed_slice(),
            ints,
            result,
        })
    }

    /// Per input of a serial call: the elements its slice (or its elements in another type) must
    /// hold, and whether it may be read in place from an output (read at every point at that point
    /// alone).
    fn serial_lens(&self) -> Result<SerialLens> {
        let (st, geo, kernel, plan) = (&self.st, &self.geo, &self.kernel, &self.plan);
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
        Ok((lens.into_boxed_slice(), in_place.into_boxed_slice()))
    }
}

/// A sum, product, min, max, argmin or argmax (of the whole array, or along any axes; of bool and
/// integer values also any and all) bound for calls on the calling thread: the parameter block and
/// the one unit fixed when it is made, as for [`SerialMap`]. A call checks the inputs, folds into
/// one accumulator slot per output, starting at the op's identity (float values: f64 for sums and
/// products, the dtype for min and max, the caller's own elements where they are of the
/// accumulators' type, else slots on the stack; bool and integer values: int64 words, as
/// int_acc.rs keeps them; an argmin's or argmax's indices beside its extremes, on the stack up to
/// 16 outputs) and finishes each as the general run does (a float sum rounded once, with
/// [`ReduceOp::finish`]'s sign rule; an integer word narrowed to the result's type; an index
/// widened to int64): the same bits as [`BoundKernel::run_with`] of an unchunked run.
pub struct SerialReduce {
    code: Arc<CompiledKernel>,
    params: Box<[i64]>,
    unit: Option<(usize, usize, usize, usize)>,
    dtype: ElemType,
    op: ReduceOp,
    /// The outputs: the plan's slots, one per element of the result.
    slots: usize,
    lens: Box<[usize]>,
    in_place: Box<[bool]>,
    /// Per input: the element type the code reads it in, where not the dtype (see [`SerialMap`]).
    stored: Box<[Option<ElemType>]>,
    /// The value type of bool or integer values (int64 accumulators), None for float values.
    ints: Option<ElemType>,
    /// The result's element type.
    result: ElemType,
    /// [`SerialReduce::takes_slices`].
    slices: bool,
}

/// Accumulator slots a [`SerialReduce`] that does not fold in the caller's elements keeps on the
/// stack (more: on the heap).
const STACK_SLOTS: usize = 16;

/// `f` of `slots` accumulators, each at `start`: on the stack up to [`STACK_SLOTS`], else on the
/// heap.
#[inline]
fn with_slots<X: Copy>(slots: usize, start: X, f: impl FnOnce(&mut [X])) {
    let mut stack = [start; STACK_SLOTS];
    let mut heap = Vec::new();
    let acc: &mut [X] = if slots <= STACK_SLOTS {
        &mut stack[..slots]
    } else {
        heap.resize(slots, start);
        &mut heap
    };
    acc.fill(start);
    f(acc);
}

impl std::fmt::Debug for SerialReduce {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SerialReduce({}, {} inputs)", self.op.name(), self.lens.len())
    }
}

impl SerialReduce {
    /// The reduction of `inputs` (each its elements in C order), on the calling thread: the one
    /// value of a whole-array reduction.
    ///
    /// # Errors
    /// As [`SerialReduce::run_into`], and a reduction of several outputs.
    #[inline]
    pub fn run<T: Elem>(&self, inputs: &[Part<'_, T>]) -> Result<T> {
        let mut out = [T::from_f64(0.0)];
        self.run_into(inputs, &mut out)?;
        Ok(out[0])
    }

    /// The outputs of the reduction, in C order: the elements a [`SerialReduce::run_into`] writes.
    pub fn outputs(&self) -> usize {
        self.slots
    }

    /// Whether [`SerialReduce::run`] and [`SerialReduce::run_into`] (slices of the dtype) take the
    /// reduction: float values, every input read in the dtype, a result of the dtype (not an
    /// argmin's or argmax's indices). Any other takes its inputs as a run does
    /// ([`SerialReduce::run_refs`]).
    #[inline]
    pub fn takes_slices(&self) -> bool {
        self.slices
    }

    /// The reduction of `inputs` (each its elements in C order) into `out` (its outputs in C
    /// order), on the calling thread.
    ///
    /// # Errors
    /// Another dtype than the kernel's, another count of inputs or outputs, a slice of another
    /// length than bound, an input given as an output (a reduction has none to read), or a
    /// reduction these slices do not take ([`SerialReduce::takes_slices`]).
    #[inline]
    pub fn run_into<T: Elem>(&self, inputs: &[Part<'_, T>], out: &mut [T]) -> Result<()> {
        if T::DTYPE != self.dtype {
            return Err(JitError::DType {
                kernel: self.dtype,
                given: T::DTYPE,
            });
        }
        if !self.takes_slices() {
            return Err(JitError::Unsupported(
                "a serial reduction on slices of the dtype of values of another type, or of indices \
                 (run_refs takes its inputs)"
                    .into(),
            ));
        }
        if out.len() != self.slots {
            return Err(JitError::BadInput {
                index: inputs.len(),
                name: "output".into(),
                why: format!("{} elements given for a result of {}", out.len(), self.slots),
            });
        }
        let checked = check::check_serial(&self.lens, &self.in_place, 0, 0, inputs, &[])?;
        let mut stack = [std::ptr::null::<u8>(); STACK_POINTERS];
        let mut heap = Vec::new();
        let ptrs: &mut [*const u8] = if inputs.len() <= STACK_POINTERS {
            &mut stack[..inputs.len()]
        } else {
            heap.resize(inputs.len(), std::ptr::null());
            &mut heap
        };
        for (p, input) in ptrs.iter_mut().zip(inputs) {
            *p = match *input {
                Part::Slice(s) => s.as_ptr().cast(),
                Part::Output(_) => unreachable!("checked: a reduction reads no output"),
            };
        }
        self.fold_floats(checked, ptrs, out);
        Ok(())
    }

    /// The reduction of `inputs` (as a bound kernel's run takes them: slices of the dtype, or
    /// elements of the type the code reads, see [`SerialMap`]) into `out` (its outputs in C order,
    /// of the result's type) on the calling thread: a handle's call below the threshold. None where
    /// the call is not one this takes (a view, byte strings, a count, type or length other than
    /// bound), for the general run, which checks everything and says what is wrong.
    #[inline]
    pub fn run_refs<T: Elem>(&self, inputs: &[crate::InputRef<'_, T>], out: OutSlice<'_>) -> Option<()> {
        if T::DTYPE != self.dtype || inputs.len() > STACK_POINTERS {
            return None;
        }
        let checked = check::check_serial_refs(
            &self.lens,
            &self.stored,
            std::slice::from_ref(&self.result),
            self.slots,
            inputs,
            std::slice::from_ref(&out),
        )?;
        let mut stack = [std::ptr::null::<u8>(); STACK_POINTERS];
        for (p, input) in stack.iter_mut().zip(inputs) {
            *p = input.base();
        }
        let ptrs = &stack[..inputs.len()];
        if self.op.is_arg() {
            self.fold_indices::<T>(checked, ptrs, out)?;
            return Some(());
        }
        if self.ints.is_none() {
            self.fold_floats(checked, ptrs, T::of_out(out)?);
            return Some(());
        }
        // bool and integer values: int64 words, the caller's own where the result is int64
        let id = crate::output::int_identity(self.op);
        if let OutSlice::I64(o) = out {
            o.fill(id);
            self.fold_at::<T>(checked, ptrs, o.as_mut_ptr().cast(), std::ptr::null_mut());
            return Some(());
        }
        with_slots(self.slots, id, |words: &mut [i64]| {
            self.fold_at::<T>(checked, ptrs, words.as_mut_ptr().cast(), std::ptr::null_mut());
            // narrowed as output.rs `int_tensor` narrows them (each holds a value of the result's
            // type)
            match out {
                OutSlice::I32(o) => o.iter_mut().zip(words.iter()).for_each(|(o, &w)| *o = w as i32),
                OutSlice::Bool(o) => o.iter_mut().zip(words.iter()).for_each(|(o, &w)| *o = w != 0),
                _ => unreachable!("checked: the result is int64, int32 or bool"),
            }
        });
        Some(())
    }

    /// An argmin or argmax over the inputs at `ptrs` into `out` (int64, checked: the slots'
    /// count): per slot an extreme (in the dtype, or an int64 word for bool and integer values) and
    /// its index, on the stack (or the heap past [`STACK_SLOTS`]), each at the start output.rs
    /// `allocate` gives a run's (the op's identity, [`Elem::NO_INDEX`]); the indices widened into
    /// `out` as output.rs `tensor` widens them.
    #[inline]
    fn fold_indices<T: Elem>(
        &self,
        checked: check::Checked,
        ptrs: &[*const u8],
        out: OutSlice<'_>,
    ) -> Option<()> {
        let OutSlice::I64(out) = out else {
            return None;
        };
        let fold = |values: *mut u8| {
            with_slots(self.slots, T::NO_INDEX, |idx: &mut [T::Idx]| {
                self.fold_at::<T>(checked, ptrs, values, idx.as_mut_ptr().cast());
                for (o, &i) in out.iter_mut().zip(idx.iter()) {
                    *o = i.into();
                }
            });
        };
        match self.ints {
            None => with_slots(self.slots, T::from_f64(self.op.identity()), |v: &mut [T]| {
                fold(v.as_mut_ptr().cast());
            }),
            Some(_) => with_slots(
                self.slots,
                crate::output::int_identity(self.op),
                |v: &mut [i64]| {
                    fold(v.as_mut_ptr().cast());
                },
            ),
        }
        Some(())
    }

    /// The fold of float values over the inputs at `ptrs` into `out` (checked: the slots' count):
    /// sums and products in f64 accumulators (`out`'s own where it is f64, else on the stack),
    /// min and max in `out`, each finished as output.rs `tensor` finishes it.
    #[inline]
    fn fold_floats<T: Elem>(&self, checked: check::Checked, ptrs: &[*const u8], out: &mut [T]) {
        let op = self.op;
        let wide = matches!(op, ReduceOp::Sum | ReduceOp::Prod);
        // as output.rs `tensor`: the sign rule decided by the answer for -0.0
        let plus_zero = wide && op.finish(-0.0, false).is_sign_positive();
        if wide && T::DTYPE != ElemType::F64 {
            // f64 accumulators for elements of another type, rounded once into `out`
            with_slots(self.slots, op.identity(), |acc: &mut [f64]| {
                self.fold_at::<T>(checked, ptrs, acc.as_mut_ptr().cast(), std::ptr::null_mut());
                for (o, &a) in out.iter_mut().zip(acc.iter()) {
                    *o = T::from_f64(if plus_zero { a + 0.0 } else { a });
                }
            });
            return;
        }
        // the accumulators are `out`'s own elements (f64 sums and products, min and max)
        out.fill(T::from_f64(op.identity()));
        self.fold_at::<T>(checked, ptrs, out.as_mut_ptr().cast(), std::ptr::null_mut());
        if plus_zero {
            for o in out.iter_mut() {
                *o = T::from_f64(o.to_f64() + 0.0);
            }
        }
    }

    /// Calls the code once over the unit, reading the inputs at `ptrs` and folding into the
    /// accumulators at `acc` (`slots` of them, each at its start: f64 for float sums and
    /// products, `T` for float min, max, argmin and argmax, int64 words for bool and integer
    /// values) and, for an argmin or argmax, the indices at `idx` (null for the others).
    #[inline]
    fn fold_at<T: Elem>(&self, checked: check::Checked, ptrs: &[*const u8], acc: *mut u8, idx: *mut u8) {
        if let Some(unit) = self.unit {
            call::call_reduce_unit::<T>(&self.code.code, checked, &self.params, ptrs, acc, idx, unit);
        }
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
        if !self.slices {
            return Err(JitError::Unsupported(
                "a serial call on slices of the dtype of a map reading or writing other types (a \
                 bound kernel's run_into_out takes its elements)"
                    .into(),
            ));
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

impl SerialMap {
    /// Whether [`SerialMap::run`] (slices of the dtype) takes the map: every input read in the
    /// dtype, every output written in it. Any other takes its buffers as a bound kernel's run does.
    #[inline]
    pub fn takes_slices(&self) -> bool {
        self.slices
    }

    /// The map over `inputs` (as a run takes them: slices of the dtype, or elements stored in
    /// another type) into `outs` (one buffer per output, of the type the code writes it in, `n`
    /// elements each) on the calling thread: [`BoundKernel::run_into_out`]'s call below the
    /// threshold. None where the call is not one this takes (a view, byte strings, an output read
    /// in place, a count, type or length other than bound), for the general run, which checks
    /// everything and says what is wrong.
    #[inline]
    pub(crate) fn run_refs<T: Elem>(
        &self,
        inputs: &[crate::InputRef<'_, T>],
        outs: &mut [OutSlice<'_>],
    ) -> Option<Result<()>> {
        let out_types = self.out_types.as_deref()?;
        let checked = check::check_serial_refs(&self.lens, &self.stored, out_types, self.n, inputs, outs)?;
        let Some(unit) = self.unit else {
            return Some(Ok(()));
        };
        let (n_in, size) = (inputs.len(), T::DTYPE.size());
        let all = n_in + outs.len() - 1;
        if all > STACK_POINTERS {
            return None;
        }
        // the inputs' pointers (an input stored in another type scaled as a run passes it), then
        // outputs 1, 2, ...'s; output 0's is `out_val` (each output's address shifted as a run's)
        let mut ptrs = [std::ptr::null::<u8>(); STACK_POINTERS];
        for (p, input) in ptrs.iter_mut().zip(inputs) {
            *p = input.base();
        }
        let (first, rest) = outs.split_first_mut()?;
        for (p, o) in ptrs[n_in..all].iter_mut().zip(rest) {
            *p = crate::output::out_target(o, size).0.cast_const();
        }
        let out0 = crate::output::out_target(first, size).0;
        call::call_unit::<T>(&self.code.code, checked, &self.params, &ptrs[..all], out0, unit);
        Some(Ok(()))
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
