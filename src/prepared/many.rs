//! The calls of a [`Prepared`] handle that write several results, and those that update inputs in
//! place.
//!
//! A handle of a runner of several results ([`FusedRunner::compile_many`](crate::FusedRunner::compile_many)) is called with one output
//! per result ([`Prepared::run_slices_many`], [`Prepared::run_into_many`]). Where every result is a map
//! and the maps share one kernel of several outputs, compiled by the JIT (float or typed: integer,
//! bool, complex values, each output of its own type), for inputs read as they were bound
//! (C-contiguous), a call checks the counts, types and lengths, puts the inputs in the kernel's order
//! on the stack and calls the compiled code once, writing every result into its output, on the
//! calling thread below the runner's threshold: no name lookup, no lock, no allocation. Everything
//! else (a reduction among the results, several kernels, the interpreter) runs through
//! [`FusedRunner::run_many`](crate::FusedRunner::run_many) and copies.
//!
//! [`FusedRunner::prepared_update`](crate::FusedRunner::prepared_update) binds a handle whose results overwrite some of its inputs (the
//! particle step `p = p + v*dt; v = v*0.99 + g*dt` into `p` and `v`): [`Prepared::update`] takes those
//! inputs as `&mut` slices, the others as slices. It is allowed only where it is safe, checked when
//! bound: every result a map of the one compiled kernel, and each updated input read at every point
//! at that point alone (its shape the iteration shape: no broadcast, C-contiguous, of the kernel's
//! dtype), each updated by one result. The compiled loop loads every input of a point before it stores
//! any output of that point (kiln-jit `call.rs`), so every result reads the old values.

use super::{Args, BoolCopies, Form, Prepared, StoredArgs};
use crate::array::{ArrayArg, Element, Float, Output};
use crate::backend::OutSlice;
use crate::compiled::Compiled;
use crate::error::{Error, Result};
use crate::executor::Specialised;
use crate::program::Source;
use kiln_ir::{ElemType, InputPlan, KernelIR, Start};
use kiln_jit::{InputRef, Part, Stored};
use ndarray::{ArrayViewMut, Dimension};
use smallvec::SmallVec;
use std::sync::Arc;

/// Kernels of at most this many inputs take their inputs from the stack (more: one allocation).
const STACK_INPUTS: usize = 16;

/// The shape, length and type of one result.
#[derive(Debug, Clone)]
struct ResultForm {
    shape: Vec<usize>,
    len: usize,
    out_type: ElemType,
}

/// Where a kernel input comes from in a call.
#[derive(Debug, Clone, Copy)]
enum Slot {
    /// Input `k` of the call (`run_slices_many`); in `update`, the `k`-th of the inputs not updated.
    Call(usize),
    /// Output `o`, read in place (`update` only).
    Output(usize),
}

/// What a handle knows of its results and of its one-kernel call.
#[derive(Debug)]
pub(crate) struct ManyBinding {
    results: Vec<ResultForm>,
    /// The one kernel that writes every result, where calls take the direct path.
    direct: Option<Arc<Specialised>>,
    /// The float dtype of its compiled code's lanes (a typed kernel's as kiln-jit chose them).
    lanes: kiln_ir::ElemType,
    /// Its points.
    points: usize,
    /// The kernel bound for calls on the calling thread, where the runner runs its points there.
    serial: Option<Arc<kiln_jit::SerialMap>>,
    /// Per kernel input: where it comes from in `run_slices_many`.
    slots: Vec<Slot>,
    /// Per kernel input: where it comes from in `update` (empty: the handle updates nothing).
    update_slots: Vec<Slot>,
    /// The call positions of the inputs not updated, in order (`update`'s `rest`).
    rest: Vec<usize>,
    /// The call positions of the updated inputs, one per result (empty: the handle updates
    /// nothing).
    updated: Vec<usize>,
}

impl ManyBinding {
    /// The binding of a one-result runner's handle: its map kernel (`direct`, if the fast path
    /// applies and the kernel is a map), and its result `t`.
    pub(crate) fn single(
        runner: &Compiled,
        direct: Option<&Arc<Specialised>>,
        order: &[usize],
        shape: &[usize],
        out_type: ElemType,
    ) -> ManyBinding {
        let stage = runner.pipeline().last();
        let direct = direct
            .filter(|s| s.kernel.kind == kiln_ir::KernelKind::Map)
            .cloned();
        ManyBinding::new(
            runner,
            vec![ResultForm {
                shape: shape.to_vec(),
                len: shape.iter().product(),
                out_type,
            }],
            direct,
            &stage.sources,
            order,
        )
    }

    fn new(
        runner: &Compiled,
        results: Vec<ResultForm>,
        direct: Option<Arc<Specialised>>,
        sources: &[Source],
        order: &[usize],
    ) -> ManyBinding {
        let points = direct
            .as_ref()
            .and_then(|s| kiln_ir::shape::checked_size(&s.kernel.shape).ok());
        let direct = direct.filter(|_| points.is_some());
        let lanes = direct
            .as_ref()
            .and_then(|s| s.exe.direct(&Start::Identity))
            .map_or(kiln_ir::ElemType::F64, |(k, _)| k.dtype);
        let slots = match &direct {
            Some(_) => sources
                .iter()
                .map(|s| match s {
                    Source::Input(u) => Slot::Call(order[*u]),
                    _ => unreachable!("a direct kernel reads user inputs only"),
                })
                .collect(),
            None => Vec::new(),
        };
        let points = points.unwrap_or(0);
        // below the runner's threshold (or on one thread) a call runs on the calling thread: bound
        // once, with nothing but the buffers left to check
        let serial = direct
            .as_ref()
            .filter(|_| runner.parallel().jit_config(points, Start::Identity).max_units == 1)
            .and_then(|s| s.exe.serial_map())
            .filter(kiln_jit::SerialMap::takes_slices)
            .map(Arc::new);
        ManyBinding {
            results,
            direct,
            lanes,
            points,
            serial,
            slots,
            update_slots: Vec::new(),
            rest: Vec::new(),
            updated: Vec::new(),
        }
    }
}

impl ManyBinding {
    /// The element type of the direct kernel's lanes.
    fn direct_lanes(&self) -> ElemType {
        self.lanes
    }

    /// Whether calls on the calling thread have a serial kernel bound.
    pub(crate) fn has_serial(&self) -> bool {
        self.serial.is_some()
    }
}

impl Compiled {
    /// [`FusedRunner::prepared`](crate::FusedRunner::prepared) for a runner of several results.
    pub(crate) fn prepared_many(
        &self,
        forms: Vec<Form>,
        order: Vec<usize>,
        user: &[&ArrayArg<'_>],
    ) -> Result<(Prepared, Vec<Output>)> {
        let outs = self.run_many_bound(user)?;
        let results: Vec<ResultForm> = outs
            .iter()
            .map(|o| ResultForm {
                shape: o.shape().to_vec(),
                len: o.shape().iter().product(),
                out_type: o.elem(),
            })
            .collect();
        let p = self.pipeline();
        // the direct path: every result a member of the fused maps, and nothing else to compute
        let direct = match &p.fused {
            Some(f)
                if f.members.len() == p.stages.len()
                    && p.results.iter().all(|r| matches!(r, Source::Stage(_))) =>
            {
                let args = crate::compiled::stage_args(p, &f.stage, user, &[])?;
                let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
                self.fused_spec(f, &refs)?
                    .filter(|spec| direct_ok(spec, &refs, &results))
            }
            _ => None,
        };
        let sources = p.fused.as_ref().map_or(&[][..], |f| &f.stage.sources[..]);
        let many = ManyBinding::new(self, results, direct, sources, &order);
        let first = &many.results[0];
        let handle = Prepared {
            runner: self.clone(),
            forms,
            order,
            direct: None,
            lanes: kiln_ir::ElemType::F64,
            direct_points: None,
            workspace: Arc::default(),
            out_shape: first.shape.clone(),
            out_len: first.len,
            out_type: first.out_type,
            many: Arc::new(many),
            memory: None,
            serial: None,
            serial_reduce: None,
            serial_mean: None,
            staged: None,
        };
        Ok((handle, outs))
    }

    /// Binds a handle (as [`FusedRunner::prepared`](crate::FusedRunner::prepared)) whose results overwrite inputs: result `o` is
    /// written into the input named `updated[o]`, in one pass ([`Prepared::update`]). `inputs` binds
    /// every input, the updated ones included.
    ///
    /// # Errors
    /// The errors of [`FusedRunner::prepared`](crate::FusedRunner::prepared); an update count other than the results', a name
    /// that is not bound or is updated twice; and an update that is not safe in place or not on the
    /// direct path (the error says why: a result that is not a map of the one kernel, an input read
    /// broadcast or of another shape than the iteration's, another dtype, a strided view).
    pub fn prepared_update(&self, inputs: &[(&str, ArrayArg<'_>)], updated: &[&str]) -> Result<Prepared> {
        match self.bind_update(inputs, updated)? {
            (h, None, _) => Ok(h),
            (_, Some(why), _) => Err(Error::Unsupported(format!("cannot update in place: {why}"))),
        }
    }

    /// The handle of `inputs` (bound as [`FusedRunner::prepared`](crate::FusedRunner::prepared),
    /// without a run where the plan is one kernel), made to overwrite the inputs `updated` where that
    /// is safe and on the direct path; else the handle as bound and why it does not update (the
    /// runner keeps such a handle too, so that a repeated call of its signature goes straight to the
    /// copying update: see [`crate::update`]); and the results of the run that bound it, where one
    /// did (computed before anything was written: the update's results).
    ///
    /// # Errors
    /// The errors of [`FusedRunner::prepared`](crate::FusedRunner::prepared).
    pub(crate) fn bind_update(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        updated: &[&str],
    ) -> Result<(Prepared, Option<String>, Vec<Output>)> {
        // a one-kernel plan is bound without a run (the run would compute a result nobody reads)
        let (mut h, results) = match self.bind_without_run(inputs)? {
            Some(h) => (h, Vec::new()),
            None => self.run_all_prepared(inputs)?,
        };
        match update_binding(&h, updated) {
            Ok(binding) => {
                h.many = Arc::new(binding);
                Ok((h, None, results))
            }
            Err(why) => Ok((h, Some(why), results)),
        }
    }
}

/// The binding of `h`'s calls as an update of the inputs `updated` (one per result), or why that is
/// not safe or not on the direct path.
fn update_binding(h: &Prepared, updated: &[&str]) -> std::result::Result<ManyBinding, String> {
    let m = &h.many;
    if updated.len() != m.results.len() {
        return Err(format!(
            "{} inputs named for {} results (one per result)",
            updated.len(),
            m.results.len()
        ));
    }
    let mut positions = Vec::with_capacity(updated.len());
    for name in updated {
        let Some(c) = h.forms.iter().position(|f| f.name == *name) else {
            return Err(format!("'{name}' is not a bound input"));
        };
        if positions.contains(&c) {
            return Err(format!("'{name}' is named twice"));
        }
        positions.push(c);
    }
    // the update is safe where each result reads its input at its own point only (checked on the
    // plan by name), and the input holds its result (its type and shape)
    for (o, &c) in positions.iter().enumerate() {
        let (f, r) = (&h.forms[c], &m.results[o]);
        let input = h.runner.input_names().iter().position(|n| *n == f.name);
        if let Some(why) = input.and_then(|t| h.runner.update_refusal(t)) {
            return Err(why);
        }
        if f.dtype != r.out_type || f.shape != r.shape {
            return Err(format!(
                "'{}' of shape {:?} ({}) does not hold result {o} ({} of shape {:?}): it would be \
                 read broadcast, each point reading elements other points write, or it is of \
                 another type",
                updated[o],
                f.shape,
                f.dtype.short_name(),
                r.out_type.short_name(),
                r.shape
            ));
        }
    }
    let rest: Vec<usize> = (0..h.forms.len()).filter(|k| !positions.contains(k)).collect();
    let Some(spec) = &m.direct else {
        // no compiled pass over the inputs' own buffers: each call computes from a copy of the
        // previous values ([`Prepared::update_stored`])
        let mut binding = ManyBinding::new(&h.runner, m.results.clone(), None, &[], &[]);
        binding.rest = rest;
        binding.updated = positions;
        return Ok(binding);
    };
    let kernel: &KernelIR = spec.exe.direct(&Start::Identity).map_or(&spec.kernel, |(k, _)| k);
    let mut update_slots = Vec::with_capacity(m.slots.len());
    for (i, slot) in m.slots.iter().enumerate() {
        let Slot::Call(c) = *slot else {
            unreachable!("a handle's slots are its call's")
        };
        match positions.iter().position(|&u| u == c) {
            Some(o) => {
                let decl = &kernel.inputs[i];
                if decl.shape != kernel.shape || spec.plan.inputs[i] == InputPlan::Materialise {
                    return Err(format!(
                        "'{}' of shape {:?} is read broadcast to the iteration shape {:?}: each \
                         point would read elements other points write",
                        decl.name, decl.shape, kernel.shape
                    ));
                }
                update_slots.push(Slot::Output(o));
            }
            None => {
                let j = (0..h.forms.len())
                    .filter(|k| !positions.contains(k))
                    .position(|k| k == c)
                    .expect("an input not updated is one of the rest");
                update_slots.push(Slot::Call(j));
            }
        }
    }
    // read in place by the code where every result and updated input is of its lanes' type (each
    // input the kernel reads holds its result's points: checked above); else (integer, bool or
    // complex values) each call computes from a copy of the previous values, through the same
    // compiled pass into the inputs' buffers
    let lanes = m.direct_lanes();
    let in_place = m.results.iter().all(|r| r.out_type == lanes)
        && positions
            .iter()
            .all(|&c| h.forms[c].len == m.points && h.forms[c].dtype == lanes);
    if !in_place {
        let mut binding = ManyBinding::new(&h.runner, m.results.clone(), m.direct.clone(), &[], &[]);
        binding.slots = m.slots.clone();
        binding.rest = rest;
        binding.updated = positions;
        return Ok(binding);
    }
    let mut binding = ManyBinding::new(&h.runner, m.results.clone(), m.direct.clone(), &[], &[]);
    binding.slots = m.slots.clone();
    binding.update_slots = update_slots;
    binding.rest = rest;
    binding.updated = positions;
    Ok(binding)
}

/// Whether calls of `spec` may take the direct path: a map (a reduction's kernel runs through the
/// runner) with a direct call ([`crate::Executable::direct`]: the JIT's code, float or typed), every
/// input (`args`, the kernel's) C-contiguous and read as it is (of the code's lanes, or of the
/// type the kernel stores it in), none materialised, and every output written in its result's
/// type (a float kernel's of its dtype: a logical one it writes as 1 / 0 runs through the runner).
fn direct_ok(spec: &Specialised, args: &[&ArrayArg<'_>], results: &[ResultForm]) -> bool {
    let Some((kernel, plan)) = spec.exe.direct(&Start::Identity) else {
        return false;
    };
    let own = kernel.dtype;
    spec.kernel.kind == kiln_ir::KernelKind::Map
        && args.len() == kernel.inputs.len()
        && args
            .iter()
            .enumerate()
            .all(|(i, a)| crate::executor::is_standard(a) && super::reads_direct(a, kernel, plan, i))
        && plan.inputs.iter().all(|p| *p != InputPlan::Materialise)
        && results.len() == kernel.n_outputs()
        && results.iter().enumerate().all(|(o, r)| match &spec.typed {
            Some(t) => t.output_type_of(o) == r.out_type,
            None => kernel.output_type_of(o) == own && r.out_type == own,
        })
}

impl Prepared {
    /// How many results a call writes.
    pub fn n_results(&self) -> usize {
        self.many.results.len()
    }

    /// The shape of result `o`.
    ///
    /// # Panics
    /// If `o` is not below [`Prepared::n_results`].
    pub fn result_shape(&self, o: usize) -> &[usize] {
        &self.many.results[o].shape
    }

    /// The element type of result `o`.
    ///
    /// # Panics
    /// If `o` is not below [`Prepared::n_results`].
    pub fn result_type(&self, o: usize) -> ElemType {
        self.many.results[o].out_type
    }

    /// Whether calls of several results (and updates) take the direct path (see the module doc).
    pub fn is_direct_many(&self) -> bool {
        self.many.direct.is_some()
    }

    /// Runs on C-contiguous slices (each input's elements in C order, in the order bound, all of
    /// element type `A`) into `outs`, one slice per result (its elements in C order, each result of
    /// type `B`): the cheapest call of several results. Inputs of several types, or results of
    /// several types: [`Prepared::run_stored_many`], which this call is.
    ///
    /// # Errors
    /// A count of inputs or outputs other than the bound ones, a slice whose length is not its
    /// bound shape's element count or its result's, an input bound with another type than `A`, a
    /// result that is not of type `B`, and the errors of [`FusedRunner::run_many`](crate::FusedRunner::run_many).
    pub fn run_slices_many<A: Element, B: Element>(
        &self,
        inputs: &[&[A]],
        outs: &mut [&mut [B]],
    ) -> Result<()> {
        // the float map below the threshold: the serial kernel checks what it reads; where it does
        // not run, the call of every type says what is wrong
        if A::serial_slices(self, inputs, outs) {
            return Ok(());
        }
        self.run_slices_many_stored(inputs, outs)
    }

    /// [`Prepared::run_slices_many`] as [`Prepared::run_stored_many`] (out of line: the serial call
    /// above keeps a small frame).
    #[inline(never)]
    fn run_slices_many_stored<A: Element, B: Element>(
        &self,
        inputs: &[&[A]],
        outs: &mut [&mut [B]],
    ) -> Result<()> {
        let stored: SmallVec<[Stored<'_>; 8]> = inputs.iter().map(|s| A::stored(s)).collect();
        let mut bufs: SmallVec<[OutSlice<'_>; 4]> = outs.iter_mut().map(|o| B::out_buffer(o)).collect();
        self.run_stored_many(&stored, &mut bufs)
    }

    /// Runs on inputs given as their own elements in C order ([`Stored`]: each of the type it was
    /// bound with, as many elements as its bound shape holds; a scalar is one element) into `outs`,
    /// one buffer per result (its elements in C order, of its type): the one call of several results
    /// on slices, for every element type. Maps of one compiled kernel (float or typed) write every
    /// result into its buffer in one pass, with no allocation; anything else runs through the runner
    /// and is copied in.
    ///
    /// # Errors
    /// As [`Prepared::run_slices_many`]; an input given as a view.
    pub fn run_stored_many(&self, inputs: &[Stored<'_>], outs: &mut [OutSlice<'_>]) -> Result<()> {
        self.check_stored(inputs, None, "input")?;
        check_bufs(&self.many, outs)?;
        let copies = BoolCopies::default();
        self.outs_rest(&StoredArgs::new(inputs, &self.forms, &copies), outs)
    }

    /// [`Prepared::run_slices_many`] on arrays: the inputs in the order bound, one output per
    /// result, each of its result's shape and type (any element type; a view in another layout
    /// than C order takes its result assigned). Results of several types: [`Prepared::call`] with
    /// a tuple of views.
    ///
    /// # Errors
    /// As [`Prepared::run_slices_many`]; an input of another type or shape than bound.
    pub fn run_into_many<A: Element, D: Dimension>(
        &self,
        inputs: &[ArrayArg<'_>],
        outs: &mut [ArrayViewMut<'_, A, D>],
    ) -> Result<()> {
        self.check(inputs)?;
        self.run_outs_checked(inputs, outs)
    }

    /// The one call of several results into the caller's arrays, of a handle's own call or of a
    /// runner's call that found this handle (inputs in the order bound, their count, types, shapes
    /// and layouts checked): the outputs checked (count, shapes, types: an error names the output,
    /// nothing written), then the compiled pass into C-contiguous outputs, or every result fresh,
    /// assigned.
    pub(crate) fn run_outs_checked<'a, I: Args<'a> + ?Sized, O: OutArrays + ?Sized>(
        &self,
        inputs: &I,
        outs: &mut O,
    ) -> Result<()> {
        self.check_outs(outs)?;
        if let Some(mut bufs) = outs.buffers() {
            return self.outs_rest(inputs, &mut bufs);
        }
        // an output in another layout: every result fresh (checked above), assigned
        let results = self.with_user(inputs, |user| self.runner.run_many_bound(user))?;
        for (o, r) in results.into_iter().enumerate() {
            outs.assign(o, r)?;
        }
        Ok(())
    }

    /// That `outs` hold the results: as many, each of its result's shape and type.
    pub(crate) fn check_outs<O: OutArrays + ?Sized>(&self, outs: &O) -> Result<()> {
        let m = &*self.many;
        if outs.count() != m.results.len() {
            return Err(Error::Output(format!(
                "{} outputs given for {} results",
                outs.count(),
                m.results.len()
            )));
        }
        for (o, r) in m.results.iter().enumerate() {
            let (ty, shape) = outs.form(o);
            if shape != r.shape.as_slice() {
                return Err(Error::Output(format!(
                    "output {o} has shape {shape:?} but result {o} has shape {:?}",
                    r.shape
                )));
            }
            if ty != r.out_type {
                return Err(Error::Output(format!(
                    "output {o} is of {} but result {o} is {}",
                    ty.short_name(),
                    r.out_type.short_name()
                )));
            }
        }
        Ok(())
    }

    /// Several results into `bufs` (checked: one per result, each of its result's type and
    /// length), the inputs checked: the compiled pass of a direct handle where they are laid out as
    /// bound, else the runner's run, each result copied in.
    fn outs_rest<'a, I: Args<'a> + ?Sized>(&self, inputs: &I, bufs: &mut [OutSlice<'_>]) -> Result<()> {
        if let Some(spec) = &self.many.direct
            && let Some(done) = self.direct_arrays(spec, inputs, bufs)
        {
            return done;
        }
        self.copy_many(inputs, bufs)
    }

    /// The compiled pass of a direct handle into `bufs` (checked: every one of its result's type),
    /// on the call's arrays where they are laid out as bound (the serial kernel first, where it
    /// takes them); None otherwise.
    fn direct_arrays<'a, I: Args<'a> + ?Sized>(
        &self,
        spec: &Specialised,
        inputs: &I,
        bufs: &mut [OutSlice<'_>],
    ) -> Option<Result<()>> {
        if !self.laid_out_as_bound(inputs) {
            return None;
        }
        match self.many.lanes {
            kiln_ir::ElemType::F64 => self.direct_arrays_in::<f64, I>(spec, inputs, bufs),
            kiln_ir::ElemType::F32 => self.direct_arrays_in::<f32, I>(spec, inputs, bufs),
            // a handle's lanes are a float type (`direct_lanes`); another runs through the runner
            _ => None,
        }
    }

    /// [`Prepared::direct_arrays`] in lanes of `L`.
    fn direct_arrays_in<'a, L: Float, I: Args<'a> + ?Sized>(
        &self,
        spec: &Specialised,
        inputs: &I,
        bufs: &mut [OutSlice<'_>],
    ) -> Option<Result<()>> {
        if self.many.serial.is_some() && bufs.len() <= 4 {
            let mut outs: [&mut [L]; 4] = [&mut [], &mut [], &mut [], &mut []];
            let n = bufs.len();
            let floats = bufs
                .iter_mut()
                .zip(outs.iter_mut())
                .all(|(b, o)| L::from_out(b.reborrow()).map(|s| *o = s).is_some());
            if floats && self.try_serial_with(|k| inputs.slice::<L>(k), &mut outs[..n]) {
                return Some(Ok(()));
            }
        }
        let input = |k: usize| inputs.direct::<L>(k);
        self.call_many(spec, &self.many.slots, input, bufs)
    }

    /// The compiled pass of a direct handle through `slots` on `inputs` (checked: each of its
    /// bound type, C order) into `bufs` (checked); None where an input is not read as it is.
    fn direct_stored(
        &self,
        spec: &Specialised,
        slots: &[Slot],
        inputs: &[Stored<'_>],
        bufs: &mut [OutSlice<'_>],
    ) -> Option<Result<()>> {
        match self.many.lanes {
            kiln_ir::ElemType::F64 => self.call_many(
                spec,
                slots,
                |k| inputs.get(k).map(super::stored_input::<f64>),
                bufs,
            ),
            kiln_ir::ElemType::F32 => self.call_many(
                spec,
                slots,
                |k| inputs.get(k).map(super::stored_input::<f32>),
                bufs,
            ),
            // lanes of no float type: the caller runs the handle's pass through the runner
            _ => None,
        }
    }

    /// Whether the handle was bound to update inputs ([`FusedRunner::prepared_update`](crate::FusedRunner::prepared_update)), in one
    /// compiled pass or from a copy ([`Prepared::update_stored`]).
    pub(crate) fn binds_update(&self) -> bool {
        !self.many.updated.is_empty()
    }

    /// [`Prepared::update_stored`] of a runner's in-place call whose inputs and targets this update
    /// handle accepts ([`Prepared::accepts_update`]): `bufs` the targets' elements (C order, each
    /// of its type), the other inputs in the order bound; None where one of them is not
    /// C-contiguous (the caller then runs the copying update).
    #[inline]
    pub(crate) fn update_named(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        bufs: &mut [OutSlice<'_>],
    ) -> Option<Result<()>> {
        match self.many.lanes {
            kiln_ir::ElemType::F64 => self.update_named_in::<f64>(inputs, bufs),
            kiln_ir::ElemType::F32 => self.update_named_in::<f32>(inputs, bufs),
            // lanes of no float type: the caller runs the copying update
            _ => None,
        }
    }

    /// A runner's in-place call through this update handle's serial kernel (below the threshold),
    /// straight on the slices of `targets` and `inputs` where they are all C-contiguous arrays of
    /// the kernel's float type (as `update_stored` would call it, without gathering them first);
    /// whether it ran (where it did not, [`Prepared::update_named`] runs, and says what is wrong).
    #[inline]
    pub(crate) fn update_serial<T: crate::InPlaceTargets + ?Sized>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &mut T,
    ) -> bool {
        let m = &*self.many;
        match (&m.serial, m.lanes) {
            (Some(serial), kiln_ir::ElemType::F64) => {
                self.update_serial_in::<f64, T>(serial, inputs, targets)
            }
            (Some(serial), kiln_ir::ElemType::F32) => {
                self.update_serial_in::<f32, T>(serial, inputs, targets)
            }
            // no serial kernel, or lanes of no float type: the named update runs
            _ => false,
        }
    }

    /// [`Prepared::update_serial`] in lanes of `L`.
    #[inline]
    fn update_serial_in<L: Float, T: crate::InPlaceTargets + ?Sized>(
        &self,
        serial: &kiln_jit::SerialMap,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &mut T,
    ) -> bool {
        let m = &*self.many;
        let n = targets.count();
        if m.update_slots.is_empty() || inputs.len() != m.rest.len() || n > 4 {
            return false;
        }
        let mut outs: [&mut [L]; 4] = [&mut [], &mut [], &mut [], &mut []];
        targets.float_slices(&mut outs[..n])
            && on_stack_serial(
                serial,
                &m.update_slots,
                |k| inputs.get(k).and_then(|(_, a)| L::slice_of(a)),
                &mut outs[..n],
            )
    }

    /// [`Prepared::update_named`] in lanes of `L`: the floats' serial kernel first (where the
    /// targets are slices of `L`), then the update of every type.
    #[inline]
    fn update_named_in<L: Float>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        bufs: &mut [OutSlice<'_>],
    ) -> Option<Result<()>> {
        let m = &*self.many;
        if let Some(serial) = &m.serial
            && !m.update_slots.is_empty()
            && inputs.len() == m.rest.len()
            && bufs.len() <= 4
        {
            let n = bufs.len();
            let mut outs: [&mut [L]; 4] = [&mut [], &mut [], &mut [], &mut []];
            let floats = bufs
                .iter_mut()
                .zip(outs.iter_mut())
                .all(|(b, o)| L::from_out(b.reborrow()).map(|s| *o = s).is_some());
            if floats
                && on_stack_serial(
                    serial,
                    &m.update_slots,
                    |k| inputs.get(k).and_then(|(_, a)| L::slice_of(a)),
                    &mut outs[..n],
                )
            {
                return Some(Ok(()));
            }
        }
        // a smaller array for the common case is less to fill
        if inputs.len() <= 4 {
            self.update_rest::<4>(inputs, bufs)
        } else if inputs.len() <= STACK_INPUTS {
            self.update_rest::<STACK_INPUTS>(inputs, bufs)
        } else {
            None
        }
    }

    /// [`Prepared::update_stored`] with the inputs not updated (at most `K`) on the stack as their
    /// own elements; None where one is not C-contiguous.
    fn update_rest<const K: usize>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        bufs: &mut [OutSlice<'_>],
    ) -> Option<Result<()>> {
        let mut rest: [Stored<'_>; K] = std::array::from_fn(|_| Stored::F64(&[]));
        for (r, (_, a)) in rest.iter_mut().zip(inputs) {
            *r = match crate::executor::stored_of(a)? {
                Stored::View(_) => return None,
                s => s,
            };
        }
        Some(self.update_stored(bufs, &rest[..inputs.len()]))
    }

    /// Runs the bound update (see [`FusedRunner::prepared_update`](crate::FusedRunner::prepared_update)): `updated[o]` is the input result
    /// `o` overwrites (its previous values read, its new ones written), `rest` the other inputs in
    /// the order bound; the updated inputs of type `A`, the others of type `B`. Inputs or results
    /// of several types: [`Prepared::update_stored`], which this call is.
    ///
    /// # Errors
    /// A handle bound without updates, counts other than the bound ones, a slice whose length is not
    /// its bound shape's element count, and an input bound with another type than given.
    pub fn update<A: Element, B: Element>(&self, updated: &mut [&mut [A]], rest: &[&[B]]) -> Result<()> {
        if A::serial_update(self, updated, rest) {
            return Ok(());
        }
        self.update_slices_stored(updated, rest)
    }

    /// [`Prepared::update`] as [`Prepared::update_stored`] (out of line: the serial call above
    /// keeps a small frame).
    #[inline(never)]
    fn update_slices_stored<A: Element, B: Element>(
        &self,
        updated: &mut [&mut [A]],
        rest: &[&[B]],
    ) -> Result<()> {
        let stored: SmallVec<[Stored<'_>; 8]> = rest.iter().map(|s| B::stored(s)).collect();
        let mut bufs: SmallVec<[OutSlice<'_>; 4]> = updated.iter_mut().map(|o| A::out_buffer(o)).collect();
        self.update_stored(&mut bufs, &stored)
    }

    /// The one update of a handle's inputs in place, for every element type: `updated[o]` (the
    /// elements in C order of the input result `o` overwrites, of its type) and `rest` (the other
    /// inputs, as their own elements, in the order bound). Maps of one compiled kernel over inputs
    /// of its float dtype update in one pass, which loads every input of a point before it stores
    /// any output of that point; anything else (integer, bool or complex values, another backend)
    /// is computed from a copy of the updated inputs' previous values, then written.
    ///
    /// # Errors
    /// As [`Prepared::update`].
    pub fn update_stored(&self, updated: &mut [OutSlice<'_>], rest: &[Stored<'_>]) -> Result<()> {
        let m = &*self.many;
        if m.updated.is_empty() {
            return Err(Error::Prepared(
                "the handle updates no input: bind it with FusedRunner::prepared_update".into(),
            ));
        }
        check_bufs(m, updated)?;
        self.check_stored(rest, Some(&m.rest), "input not updated")?;
        // (the other inputs as their elements in C order: read so where they were bound so)
        if let Some(spec) = m.direct.as_ref().filter(|_| !m.update_slots.is_empty())
            && m.rest.iter().all(|&c| self.forms[c].standard)
            && let Some(done) = self.direct_stored(spec, &m.update_slots, rest, updated)
        {
            return done;
        }
        // from a copy of the previous values: every result computed before any is written
        let previous: Vec<Output> = updated
            .iter()
            .zip(&m.updated)
            .map(|(u, &c)| previous_values(u, &self.forms[c].shape))
            .collect::<Result<_>>()?;
        // the handle's run (the compiled pass, or the runner's) from the copies into the buffers
        let mut next_rest = rest.iter();
        let all = (0..self.forms.len())
            .map(|c| match m.updated.iter().position(|&u| u == c) {
                Some(o) => output_elements(&previous[o]),
                None => next_rest.next().map(Stored::view),
            })
            .collect::<Option<SmallVec<[Stored<'_>; 8]>>>()
            .ok_or_else(|| Error::Prepared("an update's inputs not held as their elements".into()))?;
        let copies = BoolCopies::default();
        self.outs_rest(&StoredArgs::new(&all, &self.forms, &copies), updated)
    }

    /// [`Element::serial_slices`] of a float type `L`: the serial kernel on `inputs` into `outs`
    /// (of any type: it runs where they are `L`'s, at most 4 of them); whether it ran.
    #[inline]
    pub(crate) fn try_serial_as<L: Float, B: Element>(&self, inputs: &[&[L]], outs: &mut [&mut [B]]) -> bool {
        if self.many.serial.is_none() || inputs.len() != self.forms.len() || outs.len() > 4 {
            return false;
        }
        let n = outs.len();
        let mut typed: [&mut [L]; 4] = [&mut [], &mut [], &mut [], &mut []];
        for (t, o) in typed.iter_mut().zip(outs.iter_mut()) {
            match B::as_float_mut::<L>(o) {
                Some(o) => *t = o,
                None => return false,
            }
        }
        self.try_serial_with(|k| inputs.get(k).copied(), &mut typed[..n])
    }

    /// [`Element::serial_update`] of a float type `L`: the serial kernel of a bound update of
    /// `updated` with `rest` (of any type: it runs where they are `L`'s); whether it ran.
    #[inline]
    pub(crate) fn try_serial_update<L: Float, B: Element>(
        &self,
        updated: &mut [&mut [L]],
        rest: &[&[B]],
    ) -> bool {
        let m = &*self.many;
        match &m.serial {
            Some(serial) if !m.update_slots.is_empty() && rest.len() == m.rest.len() => on_stack_serial(
                serial,
                &m.update_slots,
                |k| rest.get(k).and_then(|r| B::as_float::<L>(r)),
                updated,
            ),
            _ => false,
        }
    }

    /// [`Prepared::try_serial_as`] with call input `k` given by `given` (None: not a slice of `A`).
    pub(crate) fn try_serial_with<'i, A: Float>(
        &self,
        given: impl Fn(usize) -> Option<&'i [A]>,
        outs: &mut [&mut [A]],
    ) -> bool {
        let m = &*self.many;
        match &m.serial {
            Some(serial) => on_stack_serial(serial, &m.slots, given, outs),
            None => false,
        }
    }

    /// Checks that `given[j]` holds the elements of the bound input `positions[j]` (`None`: every
    /// bound input, in order): its type, as many as its bound shape holds, not a view.
    pub(crate) fn check_stored(
        &self,
        given: &[Stored<'_>],
        positions: Option<&[usize]>,
        what: &str,
    ) -> Result<()> {
        let bound = positions.map_or(self.forms.len(), <[usize]>::len);
        if given.len() != bound {
            return Err(match positions {
                None => self.count_error(given.len()),
                Some(_) => Error::Prepared(format!("{} {what}s given, {bound} bound", given.len())),
            });
        }
        for (j, s) in given.iter().enumerate() {
            let f = &self.forms[positions.map_or(j, |p| p[j])];
            let whole = match s {
                Stored::View(_) => false,
                // exactly the strings of the shape (a trailing part of one is refused)
                Stored::Bytes(d, w) => Some(d.len()) == f.len.checked_mul(*w as usize),
                _ => true,
            };
            if !whole || s.ty() != f.dtype || s.len() != f.len {
                return Err(Error::Prepared(format!(
                    "{what} {j} ('{}') is {} elements of {}{} but was bound as {} of shape {:?}",
                    f.name,
                    s.len(),
                    s.ty().short_name(),
                    if matches!(s, Stored::View(_)) {
                        " (a view)"
                    } else {
                        ""
                    },
                    f.dtype.short_name(),
                    f.shape
                )));
            }
        }
        Ok(())
    }

    /// Calls the one kernel with its inputs from `slots` (`Call(k)` through `input(k)`), on the
    /// stack, into `outs`; None where `input` gives none for an input.
    fn call_many<'i, A: Float>(
        &self,
        spec: &Specialised,
        slots: &[Slot],
        input: impl Fn(usize) -> Option<InputRef<'i, A>>,
        outs: &mut [OutSlice<'_>],
    ) -> Option<Result<()>> {
        let cfg = self
            .runner
            .parallel()
            .jit_config(self.many.points, Start::Identity);
        let input = |s: Slot| match s {
            Slot::Call(k) => input(k),
            Slot::Output(o) => Some(InputRef::Output(o)),
        };
        let run = |refs: &[InputRef<'i, A>], outs: &mut [OutSlice<'_>]| {
            spec.exe.call_into_many(A::direct_inputs(refs), outs, &cfg)
        };
        // a smaller array for the common case is less to fill and drop
        if slots.len() <= 4 {
            return on_stack::<A, 4>(slots, input, outs, run);
        }
        if slots.len() <= STACK_INPUTS {
            return on_stack::<A, STACK_INPUTS>(slots, input, outs, run);
        }
        let refs: Vec<InputRef<'i, A>> = slots.iter().map(|&s| input(s)).collect::<Option<_>>()?;
        Some(run(&refs, outs))
    }

    /// Runs through the runner (inputs in the order bound) and copies each result into `outs`
    /// (checked: count, types, lengths): the several-result call off the direct path.
    fn copy_many<'a, I: Args<'a> + ?Sized>(&self, inputs: &I, outs: &mut [OutSlice<'_>]) -> Result<()> {
        let results = self.with_user(inputs, |user| self.runner.run_many_bound(user))?;
        for (r, out) in results.iter().zip(outs.iter_mut()) {
            r.copy_into(out.reborrow())?;
        }
        Ok(())
    }
}

/// The caller's arrays of a call of several results, one per result, each of any element type: a
/// slice or array of views of one type, or a tuple of views ([`crate::Results`]).
pub(crate) trait OutArrays {
    /// How many arrays.
    fn count(&self) -> usize;
    /// Array `o`'s element type and shape.
    fn form(&self, o: usize) -> (ElemType, &[usize]);
    /// Every array's elements in C order, where every one is C-contiguous.
    fn buffers(&mut self) -> Option<SmallVec<[OutSlice<'_>; 4]>>;
    /// Writes result `r` (of array `o`'s type and shape, checked) into array `o`.
    fn assign(&mut self, o: usize, r: Output) -> Result<()>;
}

impl<A: Element, D: Dimension> OutArrays for [ArrayViewMut<'_, A, D>] {
    fn count(&self) -> usize {
        self.len()
    }
    fn form(&self, o: usize) -> (ElemType, &[usize]) {
        (A::ELEM, self[o].shape())
    }
    fn buffers(&mut self) -> Option<SmallVec<[OutSlice<'_>; 4]>> {
        self.iter_mut()
            .map(|v| v.as_slice_mut().map(A::out_buffer))
            .collect()
    }
    fn assign(&mut self, o: usize, r: Output) -> Result<()> {
        assign_view(&mut self[o], r)
    }
}

/// Writes `r` into `view` (of its type and shape).
pub(crate) fn assign_view<A: Element, D: Dimension>(
    view: &mut ArrayViewMut<'_, A, D>,
    r: Output,
) -> Result<()> {
    let r = A::take(r)?
        .into_dimensionality::<D>()
        .map_err(|e| Error::Output(e.to_string()))?;
    view.assign(&r);
    Ok(())
}

/// The OutArrays of a tuple of views, each of its own element type.
macro_rules! tuple_outs {
    ($n:expr; $($t:ident $d:ident $i:tt),+) => {
        impl<$($t: Element, $d: Dimension),+> OutArrays for ($(ArrayViewMut<'_, $t, $d>,)+) {
            fn count(&self) -> usize {
                $n
            }
            fn form(&self, o: usize) -> (ElemType, &[usize]) {
                match o {
                    $($i => ($t::ELEM, self.$i.shape()),)+
                    _ => unreachable!("an output of the tuple"),
                }
            }
            fn buffers(&mut self) -> Option<SmallVec<[OutSlice<'_>; 4]>> {
                let mut bufs = SmallVec::new();
                $(bufs.push($t::out_buffer(self.$i.as_slice_mut()?));)+
                Some(bufs)
            }
            fn assign(&mut self, o: usize, r: Output) -> Result<()> {
                match o {
                    $($i => assign_view(&mut self.$i, r),)+
                    _ => unreachable!("an output of the tuple"),
                }
            }
        }
    };
}
tuple_outs!(2; A0 D0 0, A1 D1 1);
tuple_outs!(3; A0 D0 0, A1 D1 1, A2 D2 2);
tuple_outs!(4; A0 D0 0, A1 D1 1, A2 D2 2, A3 D3 3);

/// The elements of a fresh result in C order.
fn output_elements(o: &Output) -> Option<Stored<'_>> {
    Some(match o {
        Output::F64(a) => Stored::F64(a.as_slice()?),
        Output::F32(a) => Stored::F32(a.as_slice()?),
        Output::I64(a) => Stored::I64(a.as_slice()?),
        Output::I32(a) => Stored::I32(a.as_slice()?),
        Output::Bool(a) => Stored::bools(a.as_slice()?),
        Output::C64(a) => Stored::C64(a.as_slice()?),
        Output::C128(a) => Stored::C128(a.as_slice()?),
        Output::Bytes(_) => return None,
    })
}

/// The previous values of an updated input (its elements in C order, `shape`), copied.
fn previous_values(u: &OutSlice<'_>, shape: &[usize]) -> Result<Output> {
    fn copy<T: Clone>(s: &[T], shape: &[usize]) -> Result<ndarray::ArrayD<T>> {
        ndarray::ArrayD::from_shape_vec(shape, s.to_vec()).map_err(|e| Error::Output(e.to_string()))
    }
    Ok(match u {
        OutSlice::F64(s) => Output::F64(copy(s, shape)?),
        OutSlice::F32(s) => Output::F32(copy(s, shape)?),
        OutSlice::I64(s) => Output::I64(copy(s, shape)?),
        OutSlice::I32(s) => Output::I32(copy(s, shape)?),
        OutSlice::Bool(s) => Output::Bool(copy(s, shape)?),
        OutSlice::C64(s) => Output::C64(copy(s, shape)?),
        OutSlice::C128(s) => Output::C128(copy(s, shape)?),
    })
}

/// Calls the serial kernel with the inputs of `slots` (`Call(k)` is `given(k)`) on the stack;
/// whether it ran (false: the buffers are not what it was bound for, or there are too many).
#[inline]
fn on_stack_serial<'i, A: Float>(
    serial: &kiln_jit::SerialMap,
    slots: &[Slot],
    given: impl Fn(usize) -> Option<&'i [A]>,
    outs: &mut [&mut [A]],
) -> bool {
    // a smaller array for the common case is less to fill
    if slots.len() <= 4 {
        on_stack_serial_k::<A, 4>(serial, slots, given, outs)
    } else {
        on_stack_serial_k::<A, 8>(serial, slots, given, outs)
    }
}

/// [`on_stack_serial`] with at most `K` inputs.
#[inline]
fn on_stack_serial_k<'i, A: Float, const K: usize>(
    serial: &kiln_jit::SerialMap,
    slots: &[Slot],
    given: impl Fn(usize) -> Option<&'i [A]>,
    outs: &mut [&mut [A]],
) -> bool {
    if slots.len() > K {
        return false;
    }
    let mut parts: [Part<'i, A>; K] = [Part::Output(0); K];
    for (p, &s) in parts.iter_mut().zip(slots) {
        *p = match s {
            Slot::Call(k) => match given(k) {
                Some(x) => Part::Slice(x),
                None => return false,
            },
            Slot::Output(o) => Part::Output(o),
        };
    }
    serial.run(&parts[..slots.len()], outs).is_ok()
}

/// Calls `code` with the inputs of `slots` (at most `K`) in an array on the stack; None where
/// `input` gives none for one.
fn on_stack<'i, A: Float, const K: usize>(
    slots: &[Slot],
    input: impl Fn(Slot) -> Option<InputRef<'i, A>>,
    outs: &mut [OutSlice<'_>],
    run: impl FnOnce(&[InputRef<'i, A>], &mut [OutSlice<'_>]) -> Result<()>,
) -> Option<Result<()>> {
    let mut refs: [InputRef<'i, A>; K] = std::array::from_fn(|_| InputRef::Slice(&[]));
    for (r, &s) in refs.iter_mut().zip(slots) {
        *r = input(s)?;
    }
    Some(run(&refs[..slots.len()], outs))
}

/// Checks the count, lengths and types of a call's outputs.
fn check_bufs(m: &ManyBinding, outs: &[OutSlice<'_>]) -> Result<()> {
    if outs.len() != m.results.len() {
        return Err(Error::Output(format!(
            "{} outputs given for {} results",
            outs.len(),
            m.results.len()
        )));
    }
    for (o, (out, r)) in outs.iter().zip(&m.results).enumerate() {
        if out.len() != r.len || out.ty() != r.out_type {
            return Err(Error::Output(format!(
                "output {o} is {} elements of {} for result {o}: {} of shape {:?}",
                out.len(),
                out.ty().short_name(),
                r.out_type,
                r.shape
            )));
        }
    }
    Ok(())
}
