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
//! How each stage runs is decided once, when the handle is bound ([`How`]):
//! - A map, a reduction or a scan by its handle, its result read as the stage loop reads it
//!   ([`Temp::of`]: a typed kernel's as it is, the float path's indices or truth values as
//!   float64; `sum(i) + 1` took 1.7 us through the stage loop, `sum(i)` 0.29).
//! - A compound or sibling stage of float values in one pass by its handle, whose direct call
//!   gives the merged pass's tensor (`var(x)` at a thousand points took 3.0 us through the stage
//!   loop, 1.6 by its handle).
//! - Sibling reductions over few points ([`few_points`]), or that the stage loop runs apart, as
//!   their reductions, each by a handle of its own: a component of a merged pass has the bits of
//!   its reduction alone, and at a thousand points `sum(x) + max(x)` took 3.3 us through the stage
//!   loop's merged pass where `sum(x)` and `max(x)` take 0.36 us each by their handles; over many
//!   points the merged pass, which reads the inputs once, is the faster (0.52 against 0.66 ns an
//!   element at 1e6).
//! - A compound stage that the stage loop runs apart (integer values, leading axes) as its two
//!   reductions, each by its handle, joined as the stage loop joins them (`Compiled::run_pair`).
//! - Typed sibling reductions in one pass over many points and contractions (whose operands the
//!   stage loop places) as the stage loop runs them ([`Compiled::run_temp`]).
//!
//! The last stage must have a handle.

use super::Prepared;
use crate::array::{ArrayArg, Output};
use crate::backend::OutSlice;
use crate::compiled::{Compiled, Temp, few_points, stage_args};
use crate::error::Result;
use crate::executor::Passes;
use crate::program::{Pipeline, Program, Sibling, Siblings, Source, Stage, Work};
use kiln_ir::ElemType;
use smallvec::SmallVec;

/// Each stage's run.
#[derive(Debug)]
pub(crate) struct Staged {
    stages: Vec<Run>,
}

/// How a stage of a staged handle runs.
#[derive(Debug)]
enum Run {
    /// By its handle (boxed: a handle is large beside the other variants); whether its kernel is
    /// typed, so that its result is read as the stage loop reads it ([`Temp::of`]).
    Handle(Box<Prepared>, bool),
    /// A sibling stage, as its components, each by its handle, their results read as typed or not
    /// ([`How::Parts`]).
    Parts(Vec<Prepared>, bool),
    /// A compound stage the stage loop runs apart, as its two reductions, each by its handle
    /// ([`How::Pair`]); the iteration shape and the reduced axes.
    Pair(Vec<Prepared>, Vec<usize>, Vec<usize>),
    /// As the stage loop runs it.
    Loop,
}

/// Whether stage `s` runs by a handle of its own: a map, a reduction or a scan.
fn has_handle(s: &Stage) -> bool {
    matches!(s.program.work, Work::Map | Work::Reduce(_) | Work::Scan(..))
}

/// How stage `k` of `runner` runs in a staged handle on `args`.
enum How<'p> {
    /// By its handle.
    Handle,
    /// A sibling stage as its components, each by its handle: where the stage loop runs them so
    /// (apart), or over few points ([`few_points`]: a component of a merged pass has the bits of
    /// its reduction alone, integer ones exact); the components' results are read as the stage
    /// loop's are (`Compiled::run_components`: typed where an input is not float).
    Parts(&'p [Sibling], bool),
    /// A compound stage the stage loop runs apart (integer values, leading axes) as the two
    /// reductions it replaced (`Compiled::run_pair`), each by its handle: over `shape`, reducing
    /// `axes`.
    Pair(&'p Siblings, Vec<usize>, Vec<usize>),
    /// As the stage loop runs it.
    Loop,
}

/// [`How`] stage `k` (`s`) of `runner` runs on `args`: a map, a reduction or a scan by its handle;
/// a compound or sibling stage of float values in one pass by its handle, whose direct call gives
/// the merged pass's tensor, finished as the stage loop finishes it; sibling reductions as their
/// components where [`How::Parts`] says; a compound stage run apart as its two reductions;
/// anything else (typed sibling reductions in one pass over many points, a contraction) as the
/// stage loop runs it.
fn how<'p>(runner: &Compiled, k: usize, s: &'p Stage, args: &[&ArrayArg<'_>]) -> Result<How<'p>> {
    if has_handle(s) {
        return Ok(How::Handle);
    }
    let passes = runner.passes(k, args)?;
    let one_pass = passes == Passes::One;
    let float = args
        .iter()
        .all(|a| matches!(a.elem(), ElemType::F64 | ElemType::F32));
    Ok(match (&s.program.work, passes) {
        (Work::Siblings(parts), _) if !one_pass || few_points(&s.program, args) => {
            How::Parts(parts, args.iter().any(|a| !a.elem().is_float()))
        }
        (Work::Siblings(_) | Work::Compound(..), _) if one_pass && float => How::Handle,
        (Work::Compound(_, _, pair), Passes::Apart { shape, axes }) => How::Pair(pair, shape, axes),
        _ => How::Loop,
    })
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
            let (run, t) = {
                let args = stage_args(p, stage, user, &temps)?;
                let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
                match how(self, k, stage, &refs)? {
                    How::Parts(parts, typed) => {
                        let mut handles = Vec::with_capacity(parts.len());
                        let mut each = Vec::with_capacity(parts.len());
                        for part in parts {
                            let own: Vec<ArrayArg<'_>> =
                                part.inputs.iter().map(|&i| args[i].reborrow()).collect();
                            let (handle, out, _) = self.bind_program(&part.program, &own)?;
                            handles.push(handle);
                            each.push(Temp::of(out, typed));
                        }
                        (Run::Parts(handles, typed), Temp::Parts(each))
                    }
                    How::Pair(pair, shape, axes) => {
                        let mut handles = Vec::with_capacity(2);
                        let t = self.run_pair(k, pair, &refs, &shape, &axes, |_, program, own| {
                            let own: Vec<ArrayArg<'_>> = own.iter().map(|a| a.reborrow()).collect();
                            let (handle, out, _) = self.bind_program(program, &own)?;
                            handles.push(handle);
                            Ok(out)
                        })?;
                        (Run::Pair(handles, shape, axes), t)
                    }
                    How::Loop => (Run::Loop, self.run_temp(k, &refs)?),
                    How::Handle => {
                        let (handle, out, typed) = self.bind_program(&stage.program, &args)?;
                        if k == last {
                            stages.push(Run::Handle(Box::new(handle), typed));
                            return Ok(Some((Staged { stages }, out)));
                        }
                        (Run::Handle(Box::new(handle), typed), Temp::of(out, typed))
                    }
                }
            };
            stages.push(run);
            temps.push(t);
        }
        unreachable!("the last stage returned")
    }

    /// A handle of `program` (a stage's, or a sibling stage's component's) as a runner of its own,
    /// with this runner's backend and settings, bound to `args` (its inputs, named as it names
    /// them) as they are given: the stage loop runs no stage in memory order (only a whole
    /// pipeline: `Compiled::in_memory_order`); the result of the run that bound it; and whether
    /// the kernel it runs is typed (the stage loop keeps a typed kernel's result as it is, and
    /// reads any other as a float array: [`Temp::of`]).
    fn bind_program(&self, program: &Program, args: &[ArrayArg<'_>]) -> Result<(Prepared, Output, bool)> {
        let runner = self.with_pipeline(Pipeline {
            names: program.names.clone(),
            stages: vec![Stage {
                program: program.clone(),
                sources: (0..args.len()).map(Source::Input).collect(),
            }],
            results: vec![Source::Stage(0)],
            fused: None,
        });
        let named: Vec<(&str, ArrayArg<'_>)> = program
            .names
            .iter()
            .map(String::as_str)
            .zip(args.iter().map(ArrayArg::reborrow))
            .collect();
        let (forms, order) = runner.forms_of(&named);
        let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
        let (handle, mut outs) = runner.bind_as_given(forms, order, &refs)?;
        let typed = runner.ready_last(&refs)?.0.typed.is_some();
        Ok((handle, outs.pop().expect("a stage gives one result"), typed))
    }
}

impl Staged {
    /// Whether every stage runs by a handle, each taking its fast path ([`Prepared::is_direct`]).
    pub(crate) fn is_direct(&self) -> bool {
        self.stages.iter().all(|run| match run {
            Run::Handle(h, _) => h.is_direct(),
            Run::Parts(hs, _) | Run::Pair(hs, ..) => hs.iter().all(Prepared::is_direct),
            Run::Loop => false,
        })
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
        for (k, (stage, run)) in p.stages.iter().zip(&self.stages).enumerate() {
            let args = stage_args(p, stage, user, &temps)?;
            let t = match run {
                Run::Handle(h, _) if k == last => return f(h, &args),
                Run::Handle(h, typed) => Temp::of(h.run(&args)?, *typed),
                Run::Parts(hs, typed) => {
                    let Work::Siblings(parts) = &stage.program.work else {
                        unreachable!("components are a sibling stage's");
                    };
                    let each = hs.iter().zip(parts).map(|(h, part)| {
                        let own: SmallVec<[ArrayArg<'_>; 4]> =
                            part.inputs.iter().map(|&i| args[i].reborrow()).collect();
                        Ok(Temp::of(h.run(&own)?, *typed))
                    });
                    Temp::Parts(each.collect::<Result<_>>()?)
                }
                Run::Pair(hs, shape, axes) => {
                    let Work::Compound(_, _, pair) = &stage.program.work else {
                        unreachable!("a pair is a compound stage's");
                    };
                    let refs: SmallVec<[&ArrayArg<'_>; 4]> = args.iter().collect();
                    runner.run_pair(k, pair, &refs, shape, axes, |part, _, own| {
                        let own: SmallVec<[ArrayArg<'_>; 4]> = own.iter().map(|a| a.reborrow()).collect();
                        hs[part].run(&own)
                    })?
                }
                Run::Loop => {
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
