//! Several results from one runner: [`FusedRunner::compile_many`](crate::FusedRunner::compile_many) (or `;` in
//! [`FusedRunner::compile_text`](crate::FusedRunner::compile_text)) lowers every expression into one pipeline ([`Pipeline::lower_many`]),
//! and [`FusedRunner::run_many`](crate::FusedRunner::run_many) computes them all: the stages they share once, and the results that
//! are maps (with, as output 0, one sum, prod, min, max or mean of every axis that no other stage
//! reads) as one kernel of several outputs ([`crate::program::Fused`]) that reads each input once per
//! point and computes each subexpression they share once: `y = x*2; s = sum(x*2)` reads `x` once.
//!
//! The maps share a kernel where they share an iteration space: each one's own inputs broadcast to
//! the shape of all of them, and give the same dtype. Where they do not (`x*2; y*2` with `x` of 3
//! elements and `y` of 4 by 3), each map runs as the kernel of its own stage: the results are what
//! separate runners would give, either way.

use crate::array::{ArrayArg, Output};
use crate::backend::RunCtx;
use crate::compiled::{Compiled, Temp, stage_args, temp_arg};
use crate::error::{Error, Result};
use crate::executor::{Passes, Specialised, bind, buffers};
use crate::expr::Expr;
use crate::program::{Fused, Pipeline, Source, Work};
use kiln_ir::Start;
use kiln_ir::shape::broadcast_shapes;
use ndarray::{ArrayD, IxDyn};
use std::sync::Arc;

impl Compiled {
    /// Compiles several expressions into one runner of several results (see the module doc): stages
    /// they share are computed once, and their maps in one pass.
    ///
    /// # Errors
    /// No expression, or the errors of [`FusedRunner::compile`](crate::FusedRunner::compile) for any of them.
    pub fn compile_many(exprs: &[Expr]) -> Result<Compiled> {
        Compiled::of(Pipeline::lower_many(exprs)?)
    }

    /// How many results a run gives (1 unless compiled from several expressions).
    pub fn n_results(&self) -> usize {
        self.pipeline().results.len()
    }

    /// Errors if the runner has several results (`what` is the single-result method called).
    pub(crate) fn single(&self, what: &str) -> Result<()> {
        if self.pipeline().is_many() {
            return Err(Error::Unsupported(format!(
                "{what} gives one result but the runner has {}: call it with `FreshAll` or with \
                 several outputs (run_many, run_into_many)",
                self.n_results()
            )));
        }
        Ok(())
    }

    /// Runs and returns every result, in the order of the expressions (a runner of one expression
    /// gives one). Inputs are bound by name.
    ///
    /// # Errors
    /// As [`FusedRunner::run`](crate::FusedRunner::run).
    pub fn run_many(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Vec<Output>> {
        let user = bind(self.input_names(), inputs)?;
        self.run_many_bound(&user)
    }

    /// [`FusedRunner::run_many`](crate::FusedRunner::run_many) on the inputs in the order of [`FusedRunner::input_names`](crate::FusedRunner::input_names).
    pub(crate) fn run_many_bound(&self, user: &[&ArrayArg<'_>]) -> Result<Vec<Output>> {
        let p = self.pipeline();
        let members: &[usize] = p.fused.as_ref().map_or(&[], |f| &f.members);
        let is_result = |k: usize| {
            p.results
                .iter()
                .any(|r| matches!(*r, Source::Stage(j) | Source::Dropped(j) | Source::Kept(j) if j == k))
        };
        let mut temps: Vec<Temp> = Vec::with_capacity(p.stages.len());
        let mut outs: Vec<Option<Output>> = vec![None; p.stages.len()];
        // every stage but the fused maps (which no stage reads), in order
        for (k, stage) in p.stages.iter().enumerate() {
            if members.contains(&k) {
                temps.push(Temp::F64(ArrayD::zeros(IxDyn(&[0]))));
                continue;
            }
            // a compound or sibling stage is read one component at a time, never a result: it
            // runs as an earlier stage does (as the reductions it merged where the backend
            // does not run its one pass)
            if matches!(stage.program.work, Work::Compound(..) | Work::Siblings(_)) {
                let t = {
                    let args = stage_args(p, stage, user, &temps)?;
                    let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
                    self.run_temp(k, &refs)?
                };
                temps.push(t);
                continue;
            }
            let out = self.stage_output(k, stage, user, &temps)?;
            if is_result(k) {
                outs[k] = Some(out.clone());
            }
            // an integer pipeline keeps its stages' types (see `Temp`)
            let typed = matches!(out, Output::I32(_)) || user.iter().any(|a| !a.elem().is_float());
            temps.push(Temp::of(out, typed));
        }
        if let Some(f) = &p.fused {
            let args = stage_args(p, &f.stage, user, &temps)?;
            let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
            match self.fused_spec(f, &refs)? {
                Some(spec) => {
                    let bufs = buffers(&spec, &refs)?;
                    let ctx = RunCtx {
                        start: Start::Identity,
                        parallel: self.parallel(),
                    };
                    let ts = spec.exe.run_many(&spec.kernel, &spec.plan, &bufs, &ctx)?;
                    let reduction = f.stage.program.reduction();
                    for (o, (&k, t)) in f.members.iter().zip(ts).enumerate() {
                        // output 0 of a reduction's kernel is the reduction (finished: mean, keepdims)
                        let t = if o == 0 {
                            crate::compiled::finish(t, &spec.kernel, reduction)
                        } else {
                            t
                        };
                        outs[k] = Some(Output::try_from(t)?);
                    }
                }
                None => {
                    for &k in &f.members {
                        outs[k] = Some(self.stage_output(k, &p.stages[k], user, &temps)?);
                    }
                }
            }
        }
        p.results
            .iter()
            .map(|r| match *r {
                Source::Stage(k) => Ok(outs[k].clone().expect("every result stage ran")),
                Source::Dropped(k) | Source::Kept(k) => {
                    let shape = temp_arg(p, *r, &temps)?.shape().to_vec();
                    reshaped(outs[k].clone().expect("every result stage ran"), &shape)
                }
                // the sibling rewrite reads a statistic that is a result out by a map of its own
                Source::Input(_) | Source::Part { .. } => unreachable!("a result is a stage's"),
            })
            .collect()
    }

    /// Runs stage `k` on its arguments: its result, typed.
    fn stage_output(
        &self,
        k: usize,
        stage: &crate::program::Stage,
        user: &[&ArrayArg<'_>],
        temps: &[Temp],
    ) -> Result<Output> {
        let args = stage_args(self.pipeline(), stage, user, temps)?;
        let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
        Output::try_from(self.run_stage(k, &refs, Start::Identity)?.1)
    }

    /// The fused kernel's specialisation for `args` (its arguments), if the maps share one iteration
    /// shape and dtype there: each member's own arguments broadcast to the shape of all, and give the
    /// same dtype.
    pub(crate) fn fused_spec(&self, f: &Fused, args: &[&ArrayArg<'_>]) -> Result<Option<Arc<Specialised>>> {
        if !self.fuses(f, args)? {
            return Ok(None);
        }
        let cache = &self.spec_caches()[self.pipeline().stages.len()];
        Ok(Some(cache.get(
            &f.stage.program,
            self.backend(),
            args,
            self.plan_options(),
            self.settings(),
        )?))
    }

    /// Whether the maps of `f` run as its one kernel on arguments of the form of `args`
    /// ([`Compiled::fused_applies`]), decided once per form and kept beside the fused kernel's
    /// specialisations ([`crate::executor::SpecCache::decided`]).
    pub(crate) fn fuses(&self, f: &Fused, args: &[&ArrayArg<'_>]) -> Result<bool> {
        let cache = &self.spec_caches()[self.pipeline().stages.len()];
        let passes = cache.decided(args, || {
            Ok(if self.fused_applies(f, args)? {
                Passes::One
            } else {
                Passes::Alone
            })
        })?;
        Ok(passes == Passes::One)
    }

    /// Whether the maps of `f` share one kernel for its arguments `args` (see
    /// [`Compiled::fused_spec`]).
    fn fused_applies(&self, f: &Fused, args: &[&ArrayArg<'_>]) -> Result<bool> {
        let path = crate::executor::float_path_of(&f.stage.program, args);
        let p = self.pipeline();
        // maps whose shapes do not broadcast together (a row statistic of shape [6] beside a map of
        // [6, 9]) each run alone; a member's own shapes are checked when it runs
        let Ok(joint) = broadcast_shapes(args.iter().map(|a| a.shape())) else {
            return Ok(false);
        };
        // a reduction's kernel takes further outputs over one axis or more (a 0-d one is a map)
        if f.stage.program.reduction().is_some() && joint.is_empty() {
            return Ok(false);
        }
        for &k in &f.members {
            let own: Vec<&ArrayArg<'_>> = p.stages[k]
                .sources
                .iter()
                .map(|s| {
                    let at = f.stage.sources.iter().position(|t| t == s);
                    args[at.expect("a member's sources are the fused kernel's")]
                })
                .collect();
            let shape = broadcast_shapes(own.iter().map(|a| a.shape()))?;
            // a member joins where it alone takes the fused kernel's path (the one typing rule): a
            // typed kernel types each output on its own; a float one computes every output in its
            // inputs' float dtype, which must then be the member's own
            let fits = crate::executor::float_path_of(&p.stages[k].program, &own) == path;
            if shape != joint || !fits {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// A result reshaped to its keepdims twin's shape (same elements).
fn reshaped(out: Output, shape: &[usize]) -> Result<Output> {
    let s = IxDyn(shape);
    let bad = |e: ndarray::ShapeError| Error::Output(e.to_string());
    Ok(match out {
        Output::F64(a) => Output::F64(a.into_shape_with_order(s).map_err(bad)?),
        Output::F32(a) => Output::F32(a.into_shape_with_order(s).map_err(bad)?),
        Output::I64(a) => Output::I64(a.into_shape_with_order(s).map_err(bad)?),
        Output::I32(a) => Output::I32(a.into_shape_with_order(s).map_err(bad)?),
        Output::Bool(a) => Output::Bool(a.into_shape_with_order(s).map_err(bad)?),
        Output::C64(a) => Output::C64(a.into_shape_with_order(s).map_err(bad)?),
        Output::C128(a) => Output::C128(a.into_shape_with_order(s).map_err(bad)?),
        Output::Bytes(b) => Output::Bytes(b.into_shape(shape.to_vec())?),
    })
}
