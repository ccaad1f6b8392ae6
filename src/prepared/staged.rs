//! A handle of several kernels bound stage by stage: `sqrt(sum(x*x))`, `max(x) + 1`,
//! `x - mean(x)`, `(x - mean(x)) / std(x)`.
//!
//! The runner's stage loop finds each stage's specialisation in its cache by the arguments' forms,
//! runs it through the general dispatch into a tensor, and makes that an argument of the stages
//! after it: about 1.5-2 us a call beyond the kernels, most of a call at a thousand elements. A
//! handle bound to a pipeline of several kernels holds one handle per stage instead, each bound (by
//! the run that binds the pipeline) to the forms its arguments have, so a call runs each stage
//! through its handle's fast path (the direct call, the serial fold) with no lookup: the same
//! kernels on the same arguments, so the same bits. The arguments are the stage loop's own
//! ([`stage_args`]: the call's inputs, the earlier stages' results as each stage reads them).
//!
//! A stage whose kernel is a map, a reduction or a scan has a handle, where its result is the
//! pipeline's or a float array: the stage loop reads any other result of the float path as
//! float64 ([`Temp::of`]), which a stage handle would not. Compound and sibling stages (which may
//! run apart, as their reductions) and contractions (whose operands the stage loop places) run as
//! the stage loop runs them ([`Compiled::run_temp`]); the last stage must have a handle.

use super::Prepared;
use crate::array::{ArrayArg, Output};
use crate::backend::OutSlice;
use crate::compiled::{Compiled, Temp, stage_args};
use crate::error::Result;
use crate::program::{Pipeline, Source, Stage, Work};
use kiln_ir::ElemType;
use smallvec::SmallVec;

/// Each stage's handle (None: the stage loop's run of it).
#[derive(Debug)]
pub(crate) struct Staged {
    stages: Vec<Option<Prepared>>,
}

/// Whether stage `s` runs by a handle of its own: a map, a reduction or a scan.
fn has_handle(s: &Stage) -> bool {
    matches!(s.program.work, Work::Map | Work::Reduce(_) | Work::Scan(..))
}

impl Compiled {
    /// The pipeline bound stage by stage to `user` (the runner's inputs in its order), and the
    /// result of the run that bound it; None where the pipeline is one kernel, or its last stage
    /// or a stage's result is not what a stage handle gives (see the module doc): the caller then
    /// runs the stage loop.
    pub(crate) fn bind_staged(&self, user: &[&ArrayArg<'_>]) -> Result<Option<(Staged, Output)>> {
        let p = self.pipeline();
        let last = p.stages.len() - 1;
        if last == 0 || p.is_many() || !has_handle(&p.stages[last]) {
            return Ok(None);
        }
        let mut stages = Vec::with_capacity(p.stages.len());
        let mut temps: Vec<Temp> = Vec::with_capacity(last);
        for (k, stage) in p.stages.iter().enumerate() {
            let (handle, t) = {
                let args = stage_args(p, stage, user, &temps)?;
                let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
                if !has_handle(stage) {
                    (None, self.run_temp(k, &refs)?)
                } else {
                    // bound to the arguments as they are given: the stage loop runs no stage in
                    // memory order (only a whole pipeline: `Compiled::in_memory_order`)
                    let named: Vec<(&str, ArrayArg<'_>)> = stage
                        .program
                        .names
                        .iter()
                        .map(String::as_str)
                        .zip(args.iter().map(ArrayArg::reborrow))
                        .collect();
                    let runner = self.stage_runner(p, k);
                    let (forms, order) = runner.forms_of(&named);
                    let (handle, mut outs) = runner.bind_as_given(forms, order, &refs)?;
                    let out = outs.pop().expect("a stage gives one result");
                    if k == last {
                        stages.push(Some(handle));
                        return Ok(Some((Staged { stages }, out)));
                    }
                    if !matches!(out.elem(), ElemType::F64 | ElemType::F32) {
                        return Ok(None);
                    }
                    (Some(handle), Temp::of(out, false))
                }
            };
            stages.push(handle);
            temps.push(t);
        }
        unreachable!("the last stage returned")
    }

    /// Stage `k` of `p` as a runner of its own: one kernel, whose inputs are the stage's
    /// arguments (named as its program names them), with this runner's backend and settings.
    fn stage_runner(&self, p: &Pipeline, k: usize) -> Compiled {
        let stage = &p.stages[k];
        let own = Pipeline {
            names: stage.program.names.clone(),
            stages: vec![Stage {
                program: stage.program.clone(),
                sources: (0..stage.sources.len()).map(Source::Input).collect(),
            }],
            results: vec![Source::Stage(0)],
            fused: None,
        };
        self.with_pipeline(own)
    }
}

impl Staged {
    /// Whether every stage runs by a handle, each taking its fast path ([`Prepared::is_direct`]).
    pub(crate) fn is_direct(&self) -> bool {
        self.stages
            .iter()
            .all(|h| h.as_ref().is_some_and(Prepared::is_direct))
    }

    /// The result of `runner` (the runner the stages were bound from) on `user` (its inputs in
    /// its order, checked against the handle's forms).
    pub(crate) fn run(&self, runner: &Compiled, user: &[&ArrayArg<'_>]) -> Result<Output> {
        self.with_last(runner, user, |last, args| last.run(args))
    }

    /// [`Staged::run`] into `out` (of the result's type and element count: the last stage's handle
    /// checks).
    pub(crate) fn run_out(&self, runner: &Compiled, user: &[&ArrayArg<'_>], out: OutSlice<'_>) -> Result<()> {
        self.with_last(runner, user, |last, args| last.run_into_out(args, out))
    }

    /// Runs every stage but the last, then `f` of the last stage's handle and its arguments.
    fn with_last<R>(
        &self,
        runner: &Compiled,
        user: &[&ArrayArg<'_>],
        f: impl FnOnce(&Prepared, &[ArrayArg<'_>]) -> Result<R>,
    ) -> Result<R> {
        let p = runner.pipeline();
        let last = p.stages.len() - 1;
        let mut temps: SmallVec<[Temp; 2]> = SmallVec::new();
        for (k, (stage, handle)) in p.stages.iter().zip(&self.stages).enumerate() {
            let args = stage_args(p, stage, user, &temps)?;
            let t = match handle {
                Some(h) if k == last => return f(h, &args),
                Some(h) => Temp::of(h.run(&args)?, false),
                None => {
                    let refs: SmallVec<[&ArrayArg<'_>; 4]> = args.iter().collect();
                    runner.run_temp(k, &refs)?
                }
            };
            drop(args);
            temps.push(t);
        }
        unreachable!("the last stage has a handle")
    }
}
