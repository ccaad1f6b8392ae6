//! A handle of several kernels bound stage by stage: `sqrt(sum(x*x))`, `max(x) + 1`,
//! `x - mean(x)`.
//!
//! The runner's stage loop finds each stage's specialisation in its cache by the arguments' forms,
//! runs it through the general dispatch into a tensor, and makes that an argument of the stages
//! after it: about 2 us a call beyond the kernels, most of a call at a thousand elements. A handle
//! bound to a pipeline whose stages read only the call's inputs and earlier stages' whole results
//! holds one handle per stage instead, each bound (by the run that binds it) to the forms its
//! arguments have, so a call runs each stage through its handle's fast path (the direct call, the
//! serial fold) with no lookup: the same kernels on the same arguments, so the same bits.
//!
//! An earlier stage's result must be a float array: the stage loop reads any other result of the
//! float path as float64 ([`crate::compiled::Temp::of`]), which a stage handle would not. Compound
//! and sibling stages (read by component), contractions (their operands placed), and the other
//! sources (a reduction's keepdims twin) keep the stage loop.

use super::{Args, Prepared};
use crate::array::{ArrayArg, Output};
use crate::backend::OutSlice;
use crate::compiled::Compiled;
use crate::error::Result;
use crate::program::{Pipeline, Source, Stage, Work};
use kiln_ir::ElemType;
use smallvec::SmallVec;

/// Where a stage's argument comes from in a call.
#[derive(Debug, Clone, Copy)]
enum From {
    /// The call's input at this position.
    Call(usize),
    /// The result of this earlier stage.
    Stage(usize),
}

/// Each stage's handle, and where its arguments come from.
#[derive(Debug)]
pub(crate) struct Staged {
    stages: Vec<(Prepared, Vec<From>)>,
}

impl Compiled {
    /// The pipeline bound stage by stage to `user` (the runner's inputs in its order; `order`
    /// gives each one's position in a call), and the result of the run that bound it; None where
    /// a stage reads what a stage handle does not give it (see the module doc): the caller then
    /// runs the stage loop.
    pub(crate) fn bind_staged(
        &self,
        user: &[&ArrayArg<'_>],
        order: &[usize],
    ) -> Result<Option<(Staged, Output)>> {
        let p = self.pipeline();
        let plain = |s: &Stage| {
            !matches!(
                s.program.work,
                Work::Compound(..) | Work::Siblings(_) | Work::Contract(..)
            ) && s
                .sources
                .iter()
                .all(|s| matches!(s, Source::Input(_) | Source::Stage(_)))
        };
        if p.stages.len() < 2 || p.is_many() || !p.stages.iter().all(plain) {
            return Ok(None);
        }
        let mut stages = Vec::with_capacity(p.stages.len());
        let mut results: Vec<Output> = Vec::with_capacity(p.stages.len());
        for (k, stage) in p.stages.iter().enumerate() {
            let runner = self.stage_runner(p, k);
            let (handle, out) = {
                let args: Vec<(&str, ArrayArg<'_>)> = stage
                    .program
                    .names
                    .iter()
                    .zip(&stage.sources)
                    .map(|(name, s)| (name.as_str(), argument(*s, user, &results)))
                    .collect();
                runner.run_prepared(&args)?
            };
            let last = k + 1 == p.stages.len();
            if !last && !matches!(out.elem(), ElemType::F64 | ElemType::F32) {
                return Ok(None);
            }
            let from = stage
                .sources
                .iter()
                .map(|s| match *s {
                    Source::Stage(j) => From::Stage(j),
                    Source::Input(i) => From::Call(order[i]),
                    _ => unreachable!("plain stages read inputs and stages"),
                })
                .collect();
            stages.push((handle, from));
            results.push(out);
        }
        let out = results.pop().expect("a pipeline has stages");
        Ok(Some((Staged { stages }, out)))
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

/// A stage's argument as the binding run reads it: a user input, or an earlier stage's result.
fn argument<'t>(s: Source, user: &[&'t ArrayArg<'_>], results: &'t [Output]) -> ArrayArg<'t> {
    match s {
        Source::Input(i) => user[i].reborrow(),
        Source::Stage(j) => results[j].arg(),
        _ => unreachable!("plain stages read inputs and stages"),
    }
}

impl Staged {
    /// Whether every stage's handle takes its fast path ([`Prepared::is_direct`]).
    pub(crate) fn is_direct(&self) -> bool {
        self.stages.iter().all(|(h, _)| h.is_direct())
    }

    /// The result of a call whose inputs (in the handle's order) are checked against its forms.
    pub(crate) fn run<'a, I: Args<'a> + ?Sized>(&self, inputs: &I) -> Result<Output> {
        self.with_last(inputs, |last, args| last.run(args))
    }

    /// [`Staged::run`] into `out` (of the result's type and element count: the last stage's handle
    /// checks).
    pub(crate) fn run_out<'a, I: Args<'a> + ?Sized>(&self, inputs: &I, out: OutSlice<'_>) -> Result<()> {
        self.with_last(inputs, |last, args| last.run_into_out(args, out))
    }

    /// Runs every stage but the last, then `f` of the last stage's handle and its arguments.
    fn with_last<'a, R, I: Args<'a> + ?Sized>(
        &self,
        inputs: &I,
        f: impl FnOnce(&Prepared, &[ArrayArg<'_>]) -> Result<R>,
    ) -> Result<R> {
        let ((last, from), rest) = self.stages.split_last().expect("a pipeline has stages");
        let mut results: SmallVec<[Output; 2]> = SmallVec::new();
        for (handle, from) in rest {
            let out = handle.run(&arguments(from, inputs, &results))?;
            results.push(out);
        }
        f(last, &arguments(from, inputs, &results))
    }
}

/// A stage's arguments in a call: the call's inputs and the earlier stages' results.
fn arguments<'t, 'a: 't, I: Args<'a> + ?Sized>(
    from: &[From],
    inputs: &'t I,
    results: &'t [Output],
) -> SmallVec<[ArrayArg<'t>; 4]> {
    from.iter()
        .map(|f| match *f {
            From::Call(p) => inputs.at(p).reborrow(),
            From::Stage(j) => results[j].arg(),
        })
        .collect()
}
