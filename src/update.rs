//! In-place updates: [`FusedRunner::run_update`] writes the result into one of the expression's own
//! inputs (`p = p + v*dt` into `p`), with no second buffer and no swap.
//!
//! An update is safe where the result's element `i` depends on the updated input only through its
//! element `i`: the last kernel is a map that reads the input at every point of the result (not
//! broadcast), and no earlier kernel (a reduction or scan whose result the map reads) reads it at
//! all. Anything else (`p - mean(p)`, `cumsum(p)`, a `p` broadcast along an axis) is refused with an
//! error that says why; [`FusedRunner::run_into`] into another array does those.
//!
//! Several results update several inputs at once ([`FusedRunner::call`] with [`crate::InPlace`]:
//! the particle step `p + v*dt; v*0.99 + g*dt` into `p` and `v`) where every result is a map of one
//! kernel, the targets of one element type (`InPlace(&mut [("p", ..), ("v", ..)])`) or of several
//! (`InPlace((("p", ..), ("n", ..)))`). There is one implementation: an update is bound to a handle
//! of its call signature ([`crate::Prepared::update_stored`], kept by the runner as its other calls
//! are: see `src/bindings.rs`), whose compiled loop loads every input of a point before it stores
//! any output of that point where the results are float maps of one kernel on the JIT; other
//! element types, backends and layouts (a strided view) are computed from a copy of the inputs'
//! previous values, with the same result.

use crate::array::{ArrayArg, Element, Output};
use crate::call::InPlaceTargets;
use crate::compiled::Compiled;
use crate::error::{Error, Result};
use crate::prepared::Prepared;
use crate::program::Source;
use crate::runner::FusedRunner;
use ndarray::{ArrayViewMut, Dimension};

impl FusedRunner {
    /// Evaluates the expression and writes the result into `target`, which is also the value of the
    /// input named `name` (not given in `inputs`): `p = f(p, ...)` in place. `target` must be of the
    /// result's shape and type. [`FusedRunner::call`] with [`crate::InPlace`] of one target.
    ///
    /// ```
    /// use kiln::FusedRunner;
    /// use ndarray::{arr0, array};
    /// let step = FusedRunner::compile_text("p + v*dt")?;
    /// let (mut p, v, dt) = (array![0.0, 1.0], array![1.0, 2.0], arr0(0.5));
    /// step.run_update("p", &[("v", (&v).into()), ("dt", (&dt).into())], p.view_mut())?;
    /// assert_eq!(p, array![0.5, 2.0]);
    /// # Ok::<(), kiln::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`FusedRunner::call`] with [`crate::InPlace`]: `name` is not an input of the expression,
    /// or is also given in `inputs`; the update is not safe in place (the error says why: a
    /// reduction or scan reads the input, or the map reads it broadcast); a result of another type
    /// than `A`; and the errors of [`FusedRunner::run`].
    pub fn run_update<A: Element, D: Dimension>(
        &self,
        name: &str,
        inputs: &[(&str, ArrayArg<'_>)],
        target: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        self.update(inputs, &mut [(name, target)])
    }

    /// The one in-place update: result `o` into target `o`, which is also the input of that name,
    /// the targets of any element types. A repeated signature goes straight to its bound handle; a
    /// new one is checked, then bound and kept: without a run where the plan is one kernel (the
    /// handle then updates), else by a run, whose results (of the targets' values before anything
    /// is written) are this call's update. The handle updates in one compiled pass (reading each
    /// point's old values before it writes the new ones), or from a copy of the previous values
    /// ([`crate::Prepared::update_stored`]); what no handle updates is computed from a copy here
    /// ([`FusedRunner::update_by_copy`]).
    pub(crate) fn update<T: InPlaceTargets + ?Sized>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &mut T,
    ) -> Result<()> {
        if let Some(h) = self.bindings.find_update(inputs, &*targets) {
            return self.update_with(&h, inputs, targets);
        }
        self.compiled.update_checks(inputs, &*targets)?;
        if self.compiled.updates_bindable() {
            let bound = {
                let mut all: Vec<(&str, ArrayArg<'_>)> =
                    inputs.iter().map(|(n, a)| (*n, a.reborrow())).collect();
                all.extend((0..targets.count()).map(|o| (targets.name(o), targets.arg(o))));
                let names: Vec<&str> = (0..targets.count()).map(|o| targets.name(o)).collect();
                self.compiled.bind_update(&all, &names)
            };
            // an error here is the call's: binding may have run the plan, which must not run twice
            let (h, _, results) = bound?;
            // a handle bound by a run: that run's results (of the inputs before anything is
            // written) are the update's
            if !results.is_empty() {
                self.bindings.keep_update(h);
                return write_update(targets, results);
            }
            let done = self.update_with(&h, inputs, targets);
            self.bindings.keep_update(h);
            return done;
        }
        self.update_by_copy(inputs, targets)
    }

    /// [`FusedRunner::update`] through the update handle `h` of the call's signature: its update
    /// on the targets' and inputs' own elements where they are C-contiguous and it updates, else
    /// from a copy.
    #[inline]
    fn update_with<T: InPlaceTargets + ?Sized>(
        &self,
        h: &Prepared,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &mut T,
    ) -> Result<()> {
        if !h.binds_update() {
            return self.update_by_copy(inputs, targets);
        }
        // below the threshold, float targets and inputs: the serial kernel on their slices
        if h.update_serial(inputs, targets) {
            return Ok(());
        }
        if let Some(mut bufs) = targets.buffers()
            && let Some(done) = h.update_named(inputs, &mut bufs)
        {
            return done;
        }
        self.update_by_copy(inputs, targets)
    }

    /// The update computed from a copy of each target's previous values (the oracle's way, for any
    /// element type, backend and layout): the results are computed in full and checked against the
    /// targets before any target is written.
    pub(crate) fn update_by_copy<T: InPlaceTargets + ?Sized>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &mut T,
    ) -> Result<()> {
        self.compiled.update_checks(inputs, &*targets)?;
        let previous: Vec<Output> = (0..targets.count())
            .map(|o| owned(&targets.arg(o)))
            .collect::<Result<_>>()?;
        let mut all: Vec<(&str, ArrayArg<'_>)> = inputs.iter().map(|(n, a)| (*n, a.reborrow())).collect();
        all.extend((0..targets.count()).map(|o| (targets.name(o), previous[o].arg())));
        let results = if self.compiled.pipeline().is_many() {
            self.compiled.run_many(&all)?
        } else {
            vec![self.run(&all)?]
        };
        drop(all);
        write_update(targets, results)
    }
}

/// Writes an update's `results` (one per target, computed from the targets' previous values) into
/// `targets`, each checked to fit its target before any is written.
fn write_update<T: InPlaceTargets + ?Sized>(targets: &mut T, results: Vec<Output>) -> Result<()> {
    for (o, r) in results.iter().enumerate() {
        let (ty, shape, _) = targets.form(o);
        let name = targets.name(o);
        if r.shape() != shape {
            return Err(Error::Unsupported(format!(
                "cannot update '{name}' in place: it has shape {shape:?} but the result {:?} (a \
                 broadcast input would be read at other elements than the one written)",
                r.shape()
            )));
        }
        if r.elem() != ty {
            return Err(Error::Output(format!(
                "cannot update '{name}' in place: it is {ty} but the result is {}",
                r.elem()
            )));
        }
    }
    for (o, r) in results.into_iter().enumerate() {
        targets.assign(o, r)?;
    }
    Ok(())
}

/// A copy of `a`'s elements (an update's previous values).
fn owned(a: &ArrayArg<'_>) -> Result<Output> {
    Ok(match a {
        ArrayArg::F64(v) => Output::F64(v.to_dyn().to_owned()),
        ArrayArg::F32(v) => Output::F32(v.to_dyn().to_owned()),
        ArrayArg::I64(v) => Output::I64(v.to_dyn().to_owned()),
        ArrayArg::I32(v) => Output::I32(v.to_dyn().to_owned()),
        ArrayArg::Bool(v) => Output::Bool(v.to_dyn().to_owned()),
        ArrayArg::C64(v) => Output::C64(v.to_dyn().to_owned()),
        ArrayArg::C128(v) => Output::C128(v.to_dyn().to_owned()),
        ArrayArg::Bytes(_) => return Err(Error::Unsupported("byte strings are not updated in place".into())),
    })
}

impl Compiled {
    /// The checks of an in-place update that need no run: one target per result, each an input of
    /// the expression, named once and not given again in `inputs`; each read by the last kernel only,
    /// which is a map (for several results: the maps of one kernel).
    pub(crate) fn update_checks<T: InPlaceTargets + ?Sized>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &T,
    ) -> Result<()> {
        if targets.count() != self.n_results() {
            return Err(Error::Unsupported(format!(
                "cannot update in place: {} inputs named for {} results (one per result)",
                targets.count(),
                self.n_results()
            )));
        }
        let names = &self.pipeline().names;
        for k in 0..targets.count() {
            let name = targets.name(k);
            let Some(t) = names.iter().position(|n| n == name) else {
                return Err(Error::Unsupported(format!(
                    "cannot update '{name}' in place: it is not an input of the expression (inputs: {})",
                    names.join(", ")
                )));
            };
            if inputs.iter().any(|(n, _)| *n == name) || (0..k).any(|j| targets.name(j) == name) {
                return Err(Error::DuplicateInput {
                    name: name.to_string(),
                });
            }
            if let Some(why) = self.update_refusal(t) {
                return Err(Error::Unsupported(format!(
                    "cannot update '{name}' in place: {why}"
                )));
            }
        }
        Ok(())
    }

    /// Why the plan cannot update its input `t` (in [`Compiled::input_names`] order) in place, or
    /// None where it can: each result reads it at its own point only. Several results: they are
    /// the maps of one kernel; one: no earlier kernel reads it, and the last is a map.
    pub(crate) fn update_refusal(&self, t: usize) -> Option<String> {
        if self.pipeline().is_many() {
            return (!self.updates_bindable()).then(|| {
                "the results are not all maps of one kernel (a reduction, scan or other kernel \
                 among them); run_into other arrays"
                    .to_string()
            });
        }
        let stages = &self.pipeline().stages;
        let last = stages.len() - 1;
        if let Some(k) = stages[..last]
            .iter()
            .position(|s| s.sources.contains(&Source::Input(t)))
        {
            return Some(format!(
                "kernel {k} (a {}) reads all of it before the update writes it; run_into another array",
                work_name(&stages[k].program.work)
            ));
        }
        if !matches!(self.pipeline().last().program.work, crate::program::Work::Map) {
            return Some(format!(
                "the result is a {}, not an elementwise map of it; run_into another array",
                work_name(&self.pipeline().last().program.work)
            ));
        }
        None
    }

    /// Whether an update may be bound to a handle that updates in one pass: a plan of one kernel, or
    /// of several results that are all maps of one kernel (bound with a run). Other plans update by
    /// copying at every call, with nothing to bind.
    pub(crate) fn updates_bindable(&self) -> bool {
        let p = self.pipeline();
        if !p.is_many() {
            return p.stages.len() == 1;
        }
        // the fused kernel a map (not a reduction with its further outputs)
        p.fused.as_ref().is_some_and(|f| {
            matches!(f.stage.program.work, crate::program::Work::Map)
                && f.members.len() == p.stages.len()
                && p.results.iter().all(|r| matches!(r, Source::Stage(_)))
        })
    }
}

/// What a kernel does, in an error message.
fn work_name(w: &crate::program::Work) -> &'static str {
    match w {
        crate::program::Work::Map => "map",
        crate::program::Work::Reduce(_) => "reduction",
        crate::program::Work::Scan(..) => "scan",
        crate::program::Work::Contract(..) => "contraction",
        crate::program::Work::Compound(..) => "compound reduction",
        crate::program::Work::Siblings(_) => "sibling reductions",
    }
}
