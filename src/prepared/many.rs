//! The calls of a [`Prepared`] handle that write several results, and those that update inputs in
//! place.
//!
//! A handle of a runner of several results ([`FusedRunner::compile_many`](crate::FusedRunner::compile_many)) is called with one output
//! per result ([`Prepared::run_slices_many`], [`Prepared::run_into_many`]). Where every result is a map
//! and the maps share one kernel of several outputs, compiled by the JIT, for inputs of the kernel's
//! dtype read as they were bound (C-contiguous), a call checks the counts and lengths, puts the input
//! slices in the kernel's order on the stack and calls the compiled code once, on the calling thread
//! below the runner's threshold: no name lookup, no lock, no allocation. Everything else runs through
//! [`FusedRunner::run_many`](crate::FusedRunner::run_many) and copies.
//!
//! [`FusedRunner::prepared_update`](crate::FusedRunner::prepared_update) binds a handle whose results overwrite some of its inputs (the
//! particle step `p = p + v*dt; v = v*0.99 + g*dt` into `p` and `v`): [`Prepared::update`] takes those
//! inputs as `&mut` slices, the others as slices. It is allowed only where it is safe, checked when
//! bound: every result a map of the one compiled kernel, and each updated input read at every point
//! at that point alone (its shape the iteration shape: no broadcast, C-contiguous, of the kernel's
//! dtype), each updated by one result. The compiled loop loads every input of a point before it stores
//! any output of that point (kiln-jit `call.rs`), so every result reads the old values.

use super::{Args, Form, Prepared};
use crate::array::{ArrayArg, Float};
use crate::compiled::Compiled;
use crate::error::{Error, Result};
use crate::executor::Specialised;
use crate::program::Source;
use kiln_ir::{ElemType, InputPlan, KernelIR, Start};
use kiln_jit::{InputRef, Part};
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
            .map(Arc::new);
        ManyBinding {
            results,
            direct,
            points,
            serial,
            slots,
            update_slots: Vec::new(),
            rest: Vec::new(),
        }
    }
}

impl ManyBinding {
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
    ) -> Result<Prepared> {
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
                self.fused_spec(f, &refs)?.filter(|spec| direct_ok(spec, user))
            }
            _ => None,
        };
        let sources = p.fused.as_ref().map_or(&[][..], |f| &f.stage.sources[..]);
        let many = ManyBinding::new(self, results, direct, sources, &order);
        let first = &many.results[0];
        Ok(Prepared {
            runner: self.clone(),
            forms,
            order,
            direct: None,
            lanes: kiln_ir::DType::F64,
            direct_points: None,
            workspace: Arc::default(),
            out_shape: first.shape.clone(),
            out_len: first.len,
            out_type: first.out_type,
            many: Arc::new(many),
            memory: None,
            serial: None,
            serial_reduce: None,
        })
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
            (h, None) => Ok(h),
            (_, Some(why)) => Err(Error::Unsupported(format!("cannot update in place: {why}"))),
        }
    }

    /// The handle of `inputs` (bound as [`FusedRunner::prepared`](crate::FusedRunner::prepared),
    /// without a run where the plan is one kernel), made to overwrite the inputs `updated` where that
    /// is safe and on the direct path; else the handle as bound and why it does not update (the
    /// runner keeps such a handle too, so that a repeated call of its signature goes straight to the
    /// copying update: see [`crate::update`]).
    ///
    /// # Errors
    /// The errors of [`FusedRunner::prepared`](crate::FusedRunner::prepared).
    pub(crate) fn bind_update(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        updated: &[&str],
    ) -> Result<(Prepared, Option<String>)> {
        // a one-kernel plan is bound without a run (the run would compute a result nobody reads)
        let mut h = match self.bind_without_run(inputs)? {
            Some(h) => h,
            None => self.prepared(inputs)?,
        };
        match update_binding(&h, updated) {
            Ok(binding) => {
                h.many = Arc::new(binding);
                Ok((h, None))
            }
            Err(why) => Ok((h, Some(why))),
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
    let Some(spec) = &m.direct else {
        return Err(
            "the results are not the maps of one compiled kernel over inputs of its dtype, read as \
             bound (a reduction, scan or other kernel among them, maps of different shapes, \
             mixed dtypes, a strided view, or a backend other than the JIT)"
                .into(),
        );
    };
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
    let kernel: &KernelIR = &spec.kernel;
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
    for (o, r) in m.results.iter().enumerate() {
        if r.out_type != ElemType::of_float(kernel.dtype) {
            return Err(format!(
                "result {o} is {} but '{}' is {}",
                r.out_type, updated[o], kernel.dtype
            ));
        }
    }
    // an updated input the kernel does not read is still written with its result
    for (o, &c) in positions.iter().enumerate() {
        if h.forms[c].len != m.points || h.forms[c].dtype != kiln_ir::ElemType::of_float(kernel.dtype) {
            return Err(format!(
                "'{}' ({} of shape {:?}) does not hold result {o} ({} of shape {:?})",
                updated[o],
                h.forms[c].dtype.short_name(),
                h.forms[c].shape,
                kernel.dtype,
                m.results[o].shape
            ));
        }
    }
    let rest = (0..h.forms.len()).filter(|k| !positions.contains(k)).collect();
    let mut binding = ManyBinding::new(&h.runner, m.results.clone(), m.direct.clone(), &[], &[]);
    binding.slots = m.slots.clone();
    binding.update_slots = update_slots;
    binding.rest = rest;
    Ok(binding)
}

/// Whether calls of `spec` may take the direct path: a map (a reduction's kernel runs through the
/// runner), the JIT, every input of the kernel's dtype,
/// C-contiguous (a view is read through the runner), none materialised, every output a float or
/// truth array of the dtype.
fn direct_ok(spec: &Specialised, user: &[&ArrayArg<'_>]) -> bool {
    spec.kernel.kind == kiln_ir::KernelKind::Map
        && spec.exe.direct(&Start::Identity).is_some()
        && user.iter().all(|a| {
            a.elem() == kiln_ir::ElemType::of_float(spec.kernel.dtype) && crate::executor::is_standard(a)
        })
        && spec.plan.inputs.iter().all(|p| *p != InputPlan::Materialise)
        && (0..spec.kernel.n_outputs())
            .all(|o| spec.kernel.output_type_of(o) == ElemType::of_float(spec.kernel.dtype))
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

    /// Whether calls of several results (and updates) take the direct path (see the module doc).
    pub fn is_direct_many(&self) -> bool {
        self.many.direct.is_some()
    }

    /// Runs on C-contiguous slices (each input's elements in C order, in the order bound) into
    /// `outs`, one slice per result (its elements in C order): the cheapest call of several results.
    ///
    /// # Errors
    /// A count of inputs or outputs other than the bound ones, a slice whose length is not its
    /// bound shape's element count or its result's, an input bound with another dtype than `A`, a
    /// result that is not of type `A`, and the errors of [`FusedRunner::run_many`](crate::FusedRunner::run_many).
    pub fn run_slices_many<A: Float>(&self, inputs: &[&[A]], outs: &mut [&mut [A]]) -> Result<()> {
        let m = &*self.many;
        // the serial kernel checks what it reads; on an error, the checks below say what is wrong
        if self.try_serial(inputs, outs) {
            return Ok(());
        }
        self.check_slices(inputs, None, "input")?;
        check_outs(m, outs)?;
        if let Some(spec) = &m.direct
            && A::DTYPE == spec.kernel.dtype
        {
            let input = |s: Slot| match s {
                Slot::Call(k) => InputRef::Slice(inputs[k]),
                Slot::Output(o) => InputRef::Output(o),
            };
            return self.call_many(spec, &m.slots, input, outs);
        }
        let arrays: Vec<ArrayArg<'_>> = inputs
            .iter()
            .zip(&self.forms)
            .map(|(s, f)| A::arg(ndarray::ArrayViewD::from_shape(&f.shape[..], s).expect("lengths checked")))
            .collect();
        self.copy_many(&arrays[..], outs)
    }

    /// [`Prepared::run_slices_many`] on arrays: the inputs in the order bound, one C-contiguous
    /// output per result.
    ///
    /// # Errors
    /// As [`Prepared::run_slices_many`]; an input of another dtype or shape than bound; a
    /// non-contiguous output.
    pub fn run_into_many<A: Float, D: Dimension>(
        &self,
        inputs: &[ArrayArg<'_>],
        outs: &mut [ArrayViewMut<'_, A, D>],
    ) -> Result<()> {
        self.run_into_many_args(inputs, outs)
    }

    /// The one call of several results into given arrays, of a handle's own call or of a runner's
    /// call that found this handle (inputs in the order bound): the outputs checked (count, shapes,
    /// types, layouts), then [`Prepared::run_slices_many`] where every input is a C-contiguous array
    /// of `A`, else the runner's run copied into them.
    pub(crate) fn run_into_many_args<'a, A: Float, D: Dimension, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        outs: &mut [ArrayViewMut<'_, A, D>],
    ) -> Result<()> {
        let mut slices: SmallVec<[&mut [A]; 4]> = SmallVec::new();
        for (o, out) in outs.iter_mut().enumerate() {
            if let Some(r) = self.many.results.get(o)
                && out.shape() != r.shape.as_slice()
            {
                return Err(Error::Output(format!(
                    "output {o} has shape {:?} but result {o} has shape {:?}",
                    out.shape(),
                    r.shape
                )));
            }
            slices.push(
                out.as_slice_mut()
                    .ok_or_else(|| Error::Output(format!("output {o} is not C-contiguous")))?,
            );
        }
        check_outs(&self.many, &slices)?;
        self.check(inputs)?;
        let given: Option<SmallVec<[&[A]; 8]>> =
            (0..inputs.count()).map(|i| A::slice_of(inputs.at(i))).collect();
        match given {
            Some(given) => self.run_slices_many(&given, &mut slices),
            None => self.copy_many(inputs, &mut slices),
        }
    }

    /// Whether the handle updates inputs in place ([`FusedRunner::prepared_update`](crate::FusedRunner::prepared_update)
    /// bound it so).
    pub(crate) fn updates(&self) -> bool {
        self.many.direct.is_some() && !self.many.update_slots.is_empty()
    }

    /// [`Prepared::update`] of a runner's in-place call whose inputs and targets this update handle
    /// accepts ([`Prepared::accepts_update`]): the targets overwritten, the other inputs in the order
    /// bound; None where an input is not a C-contiguous array of `A` or a target not C-contiguous
    /// (the caller then runs the copying update).
    pub(crate) fn update_named<A: Float, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &mut [(&str, ArrayViewMut<'_, A, D>)],
    ) -> Option<Result<()>> {
        // a smaller array for the common case is less to fill
        if inputs.len() <= 4 {
            self.update_on_stack::<A, D, 4>(inputs, targets)
        } else if inputs.len() <= STACK_INPUTS {
            self.update_on_stack::<A, D, STACK_INPUTS>(inputs, targets)
        } else {
            None
        }
    }

    /// [`Prepared::update_named`] with at most `K` inputs on the stack.
    #[inline]
    fn update_on_stack<A: Float, D: Dimension, const K: usize>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &mut [(&str, ArrayViewMut<'_, A, D>)],
    ) -> Option<Result<()>> {
        let mut outs: SmallVec<[&mut [A]; 4]> = SmallVec::new();
        for (_, t) in targets.iter_mut() {
            outs.push(t.as_slice_mut()?);
        }
        // below the threshold, the serial kernel straight on the inputs' slices (as `update` would
        // call it, without gathering them first); where it does not run, `update` says why
        let m = &*self.many;
        if let Some(serial) = &m.serial
            && inputs.len() == m.rest.len()
            && on_stack_serial(
                serial,
                &m.update_slots,
                |k| inputs.get(k).and_then(|(_, a)| A::slice_of(a)),
                &mut outs,
            )
        {
            return Some(Ok(()));
        }
        let mut rest: [&[A]; K] = [&[]; K];
        for (r, (_, a)) in rest.iter_mut().zip(inputs) {
            *r = A::slice_of(a)?;
        }
        Some(self.update(&mut outs, &rest[..inputs.len()]))
    }

    /// Runs the bound update (see [`FusedRunner::prepared_update`](crate::FusedRunner::prepared_update)): `updated[o]` is the input result
    /// `o` overwrites (its previous values read, its new ones written, in one pass), `rest` the other
    /// inputs in the order bound.
    ///
    /// # Errors
    /// A handle bound without updates, counts other than the bound ones, a slice whose length is not
    /// its bound shape's element count, and an input bound with another dtype than `A`.
    pub fn update<A: Float>(&self, updated: &mut [&mut [A]], rest: &[&[A]]) -> Result<()> {
        let m = &*self.many;
        let Some(spec) = m.direct.as_ref().filter(|_| !m.update_slots.is_empty()) else {
            return Err(Error::Prepared(
                "the handle updates no input: bind it with FusedRunner::prepared_update".into(),
            ));
        };
        if let Some(serial) = &m.serial
            && !m.update_slots.is_empty()
            && rest.len() == m.rest.len()
            && on_stack_serial(serial, &m.update_slots, |k| rest.get(k).copied(), updated)
        {
            return Ok(());
        }
        self.check_slices(rest, Some(&m.rest), "input not updated")?;
        check_outs(m, updated)?;
        if A::DTYPE != spec.kernel.dtype {
            return Err(Error::Prepared(format!(
                "the inputs were bound as {} but {} are given",
                spec.kernel.dtype,
                A::DTYPE
            )));
        }
        let input = |s: Slot| match s {
            Slot::Call(k) => InputRef::Slice(rest[k]),
            Slot::Output(o) => InputRef::Output(o),
        };
        self.call_many(spec, &m.update_slots, input, updated)
    }

    /// Calls the serial kernel of a map below the threshold with `inputs` (in the order bound), if
    /// there is one and the buffers are what it was bound for; whether it ran.
    #[inline]
    pub(crate) fn try_serial<A: Float>(&self, inputs: &[&[A]], outs: &mut [&mut [A]]) -> bool {
        inputs.len() == self.forms.len() && self.try_serial_with(|k| inputs.get(k).copied(), outs)
    }

    /// [`Prepared::try_serial`] with call input `k` given by `given` (None: not a slice of `A`).
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

    /// Checks that `given[j]` holds the elements of the bound input `positions[j]`, of dtype `A`.
    /// (`None`: every bound input, in order).
    fn check_slices<A: Float>(&self, given: &[&[A]], positions: Option<&[usize]>, what: &str) -> Result<()> {
        let bound = positions.map_or(self.forms.len(), <[usize]>::len);
        if given.len() != bound {
            return Err(Error::Prepared(format!(
                "{} {what}s given, {bound} bound",
                given.len()
            )));
        }
        for (j, s) in given.iter().enumerate() {
            let c = positions.map_or(j, |p| p[j]);
            let f = &self.forms[c];
            if f.dtype != kiln_ir::ElemType::of_float(A::DTYPE) || s.len() != f.len {
                return Err(Error::Prepared(format!(
                    "{what} {j} ('{}') is {} elements of {} but was bound as {} of shape {:?}",
                    f.name,
                    s.len(),
                    A::DTYPE,
                    f.dtype.short_name(),
                    f.shape
                )));
            }
        }
        Ok(())
    }

    /// Calls the one kernel with its inputs from `slots` (through `input`), on the stack.
    fn call_many<'i, A: Float>(
        &self,
        spec: &Specialised,
        slots: &[Slot],
        input: impl Fn(Slot) -> InputRef<'i, A>,
        outs: &mut [&mut [A]],
    ) -> Result<()> {
        let cfg = self
            .runner
            .parallel()
            .jit_config(self.many.points, Start::Identity);
        let run = |refs: &[InputRef<'i, A>], outs: &mut [&mut [A]]| {
            spec.exe
                .call_into_many(A::direct_inputs(refs), A::direct_outputs(outs), &cfg)
        };
        // a smaller array for the common case is less to fill and drop
        if slots.len() <= 4 {
            return on_stack::<A, 4>(slots, input, outs, run);
        }
        if slots.len() <= STACK_INPUTS {
            return on_stack::<A, STACK_INPUTS>(slots, input, outs, run);
        }
        let refs: Vec<InputRef<'i, A>> = slots.iter().map(|&s| input(s)).collect();
        run(&refs, outs)
    }

    /// Runs through the runner (inputs in the order bound) and copies each result into `outs`
    /// (checked by [`check_outs`]): the several-result call off the direct path.
    fn copy_many<'a, A: Float, I: Args<'a> + ?Sized>(&self, inputs: &I, outs: &mut [&mut [A]]) -> Result<()> {
        let user: Vec<&ArrayArg<'a>> = self.order.iter().map(|&p| inputs.at(p)).collect();
        let results = self.runner.run_many_bound(&user)?;
        for (o, (r, out)) in results.into_iter().zip(outs.iter_mut()).enumerate() {
            let a = A::from_output(r)?;
            out.copy_from_slice(
                a.as_slice()
                    .ok_or_else(|| Error::Output(format!("result {o} is not C-contiguous")))?,
            );
        }
        Ok(())
    }
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
    const K: usize = 8;
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

/// Calls `code` with the inputs of `slots` (at most `K`) in an array on the stack.
fn on_stack<'i, A: Float, const K: usize>(
    slots: &[Slot],
    input: impl Fn(Slot) -> InputRef<'i, A>,
    outs: &mut [&mut [A]],
    run: impl FnOnce(&[InputRef<'i, A>], &mut [&mut [A]]) -> Result<()>,
) -> Result<()> {
    let mut refs: [InputRef<'i, A>; K] = std::array::from_fn(|_| InputRef::Slice(&[]));
    for (r, &s) in refs.iter_mut().zip(slots) {
        *r = input(s);
    }
    run(&refs[..slots.len()], outs)
}

/// Checks the count, lengths and types of a call's outputs.
fn check_outs<A: Float>(m: &ManyBinding, outs: &[&mut [A]]) -> Result<()> {
    if outs.len() != m.results.len() {
        return Err(Error::Output(format!(
            "{} outputs given for {} results",
            outs.len(),
            m.results.len()
        )));
    }
    for (o, (out, r)) in outs.iter().zip(&m.results).enumerate() {
        if out.len() != r.len || r.out_type != ElemType::of_float(A::DTYPE) {
            return Err(Error::Output(format!(
                "output {o} is {} elements of {} for result {o}: {} of shape {:?}",
                out.len(),
                A::DTYPE,
                r.out_type,
                r.shape
            )));
        }
    }
    Ok(())
}
