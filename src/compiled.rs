//! [`Compiled`]: an expression compiled once, its plan, caches and stage loop, which a
//! [`crate::FusedRunner`] and its handles run through.

use crate::array::{ArrayArg, Float, Output};
use crate::backend::{Backend, OutSlice, RunCtx};
use crate::error::{Error, Result};
use crate::executor::{Passes, SpecCache, Specialised, bind, buffers, explained, specialise};
use crate::explain::{ExplainOptions, Explained};
use crate::expr::Expr;
use crate::memory_order;
use crate::parallel::Parallel;
use crate::profile::{Profile, Settings};
use crate::program::{Pipeline, Program, Reduction, Sibling, Siblings, Source, Stage, Work};
use kiln_ir::shape::broadcast_shapes;
use kiln_ir::{BroadcastPlan, ElemType, KernelIR, KernelKind, PlanOptions, Start, Tensor, Values};
use ndarray::{ArrayD, ArrayViewMut, Dimension, IxDyn};
use std::sync::{Arc, Mutex};

/// The compiled object behind a [`FusedRunner`](crate::FusedRunner) and its [`crate::Prepared`] handles: the plan
/// (lowered, and as it runs on the backend), the backend, the settings and threads, and the caches of
/// specialisations; the stage loop every call runs through. A handle holds one of these, and a
/// runner holds one beside the handles of its recent call signatures ([`FusedRunner`](crate::FusedRunner)'s bindings),
/// so nothing here refers to a handle.
///
/// [`FusedRunner`](crate::FusedRunner): crate::FusedRunner
#[derive(Debug, Clone)]
pub(crate) struct Compiled {
    /// The plan as lowered, before the backend-dependent rewrites.
    lowered: Arc<Pipeline>,
    /// The plan that runs: `lowered`, with sibling reductions merged where the backend runs compound
    /// reductions ([`crate::siblings`]).
    pipeline: Arc<Pipeline>,
    /// What the backend-dependent rewrites did, for `kiln explain`.
    plan_notes: Arc<Vec<String>>,
    backend: Arc<dyn Backend>,
    plan_options: PlanOptions,
    settings: Settings,
    parallel: Arc<Parallel>,
    /// One cache of specialisations per stage (and one for the fused maps): the stage's kernels, the
    /// reductions a compound or sibling stage merged (where it runs apart), and each form's decision
    /// of which ([`SpecCache::decided`]).
    specialised: Arc<Vec<SpecCache>>,
    /// The runners of the plan with its axes mapped for runs in memory order (see
    /// [`memory_order`]), per layout (each kernel's axes): runners like this one, whose
    /// specialisations their own caches keep. Made on first use, the most recent [`REMAPPED`] kept.
    remapped: Arc<Mutex<Vec<Remapped>>>,
}

/// A remapped runner, by the layout it was made for (each kernel's axes).
type Remapped = (Vec<Vec<usize>>, Compiled);

/// At most this many remapped runners are kept per runner (one per layout of inputs seen).
const REMAPPED: usize = 8;

/// Empty caches of specialisations for a plan of `stages` stages: one per stage, and one for its
/// fused maps.
fn spec_caches(stages: usize) -> Arc<Vec<SpecCache>> {
    Arc::new((0..stages + 1).map(|_| SpecCache::default()).collect())
}

/// A run in memory order (see [`memory_order`]): the permutation that makes every input
/// C-contiguous, the runner of the plan with its axes mapped through it, and the order of the
/// result's axes.
#[derive(Debug, Clone)]
pub(crate) struct MemoryRun {
    pub(crate) order: Vec<usize>,
    /// Each kernel's axes: the user's axis that is its axis `i` ([`memory_order::Layout`]).
    pub(crate) stages: Vec<Vec<usize>>,
    pub(crate) result: Vec<usize>,
    pub(crate) runner: Compiled,
    /// The result is an arg-reduction's indices, which NumPy gives in C order.
    c_result: bool,
}

impl MemoryRun {
    /// The user's inputs (in the runner's order) as the run reads them: views in memory order.
    pub(crate) fn inputs<'a, 'b: 'a>(
        &self,
        user: impl IntoIterator<Item = &'a ArrayArg<'b>>,
    ) -> Vec<ArrayArg<'b>> {
        user.into_iter()
            .map(|a| memory_order::in_order(a, self.order.len(), &self.order))
            .collect()
    }

    /// A result computed in memory order, in the user's axes (an arg-reduction's in C order).
    pub(crate) fn restore(&self, out: Output) -> Output {
        let out = memory_order::restore(out, &self.result);
        if self.c_result {
            return memory_order::in_c_order(out);
        }
        out
    }
}

/// A stage's result on its way to the next stage: floats as they are; the int64 and bool results of
/// a float kernel (argmax, `sum(x > 0)`) as f64, as they always flowed (the next kernel stays a float
/// kernel, compiled); a typed kernel's results in their own type.
pub(crate) enum Temp {
    F64(ArrayD<f64>),
    F32(ArrayD<f32>),
    Typed(Output),
    /// Each component of a sibling stage run one by one, as its reduction gives it (see
    /// [`FusedRunner::run_components`](crate::FusedRunner::run_components)); read only one component at a time ([`temp_arg`]).
    Parts(Vec<Temp>),
}

impl Temp {
    pub(crate) fn of(out: Output, typed: bool) -> Temp {
        match out {
            Output::F32(a) => Temp::F32(a),
            Output::F64(a) => Temp::F64(a),
            // a complex result is never a float one (its real part alone would be a wrong answer)
            other if typed || other.elem().is_complex() => Temp::Typed(other),
            other => Temp::F64(other.into_f64()),
        }
    }

    fn arg(&self) -> ArrayArg<'_> {
        match self {
            Temp::F64(a) => ArrayArg::from(a),
            Temp::F32(a) => ArrayArg::from(a),
            Temp::Typed(o) => o.arg(),
            Temp::Parts(_) => unreachable!("sibling components are read one at a time"),
        }
    }
}

impl Compiled {
    /// Lowers `expr` into its kernels.
    pub fn compile(expr: &Expr) -> Result<Compiled> {
        Compiled::of(Pipeline::lower(expr)?)
    }

    /// A runner of `lowered`, planned for the default backend (sibling reductions merged where it
    /// runs compound reductions): one cache of specialisations per stage, and one for its fused maps.
    pub(crate) fn of(lowered: Pipeline) -> Result<Compiled> {
        let lowered = Arc::new(lowered);
        let backend = crate::default_backend();
        let (pipeline, notes) = plan_for(&lowered, &*backend);
        let caches = spec_caches(pipeline.stages.len());
        Ok(Compiled {
            lowered,
            pipeline,
            plan_notes: Arc::new(notes),
            backend,
            plan_options: PlanOptions::default(),
            settings: Settings::default(),
            parallel: Arc::new(Parallel::default()),
            specialised: caches,
            remapped: Arc::default(),
        })
    }

    /// Parses a text expression (see [`crate::text`]) and compiles it; several separated by `;`
    /// (`"call; put"`) compile as [`FusedRunner::compile_many`](crate::FusedRunner::compile_many).
    pub fn compile_text(src: &str) -> Result<Compiled> {
        let mut exprs = crate::text::parse_many(src)?;
        if exprs.len() == 1 {
            return Compiled::compile(&exprs.pop().expect("one expression"));
        }
        Compiled::compile_many(&exprs)
    }

    /// The caches of specialisations: one per stage, then the fused maps'.
    pub(crate) fn spec_caches(&self) -> &[SpecCache] {
        &self.specialised
    }

    /// How broadcasts are planned.
    pub(crate) fn plan_options(&self) -> PlanOptions {
        self.plan_options
    }

    fn fresh_caches(&mut self) {
        self.specialised = spec_caches(self.pipeline.stages.len());
        self.remapped = Arc::default();
    }

    /// Runs on `backend` instead of the default one.
    pub fn with_backend(mut self, backend: Arc<dyn Backend>) -> Compiled {
        let (pipeline, notes) = plan_for(&self.lowered, &*backend);
        self.pipeline = pipeline;
        self.plan_notes = Arc::new(notes);
        self.backend = backend;
        self.fresh_caches();
        self
    }

    /// Changes how broadcasts are planned.
    pub fn with_plan_options(mut self, options: PlanOptions) -> Compiled {
        self.plan_options = options;
        self.fresh_caches();
        self
    }

    /// Runs with `settings` (a profile and its rewrites; see [`crate::profile`]).
    pub fn with_settings(mut self, settings: Settings) -> Compiled {
        self.settings = settings;
        self.fresh_caches();
        if settings.reproducible() {
            // the order of whole-array reductions is fixed by the default tuning, whatever was set
            let p = (*self.parallel).clone();
            return self.with_parallel(p);
        }
        self
    }

    /// Runs under `profile`, with its choice of `prefix_scan`.
    pub fn with_profile(self, profile: Profile) -> Compiled {
        let settings = Settings::new(profile, None).expect("a profile's own choice is valid");
        self.with_settings(settings)
    }

    /// Turns the prefix-scan rewrite on or off (an error under the reproducible profile).
    pub fn with_prefix_scan(self, on: bool) -> Result<Compiled> {
        let settings = Settings::new(self.settings.profile, Some(on))?;
        Ok(self.with_settings(settings))
    }

    /// The profile and rewrites this runner uses.
    pub fn settings(&self) -> Settings {
        self.settings
    }

    /// Runs on `threads` threads (1: the calling thread only). Compiled kernels are kept.
    pub fn with_threads(self, threads: usize) -> Compiled {
        let mut p = Parallel::new(threads);
        p.threshold = self.parallel.threshold;
        p.target_partials = self.parallel.target_partials;
        p.min_chunk = self.parallel.min_chunk;
        self.with_parallel(p)
    }

    /// Runs over fewer than `points` points stay on the calling thread (0: every run is spread).
    pub fn with_threshold(self, points: usize) -> Compiled {
        let mut p = (*self.parallel).clone();
        p.threshold = points;
        self.with_parallel(p)
    }

    /// Every thread and reduction setting at once.
    pub fn with_parallel(mut self, mut parallel: Parallel) -> Compiled {
        if self.settings.reproducible() {
            parallel.target_partials = crate::parallel::DEFAULT_TARGET_PARTIALS;
            parallel.min_chunk = crate::parallel::DEFAULT_MIN_CHUNK;
        }
        self.parallel = Arc::new(parallel.ready());
        self
    }

    /// The thread setting.
    pub fn parallel(&self) -> &Parallel {
        &self.parallel
    }

    /// The names of the inputs, in order of first appearance.
    pub fn input_names(&self) -> &[String] {
        &self.pipeline.names
    }

    /// The program of the last kernel (the only one for most expressions).
    pub fn program(&self) -> &Program {
        &self.pipeline.last().program
    }

    /// The kernels, in the order they run.
    pub fn pipeline(&self) -> &Pipeline {
        &self.pipeline
    }

    /// What the plan's rewrites did (sibling reductions merged), one line each, for `kiln explain`.
    pub fn plan_notes(&self) -> &[String] {
        &self.plan_notes
    }

    /// The backend this runner uses.
    pub fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// The kernel and broadcast plan of the last kernel for these inputs (for `kiln explain`).
    pub fn explain(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<(KernelIR, BroadcastPlan)> {
        Ok(self.explain_all(inputs)?.pop().expect("a pipeline has a stage"))
    }

    /// The kernel and broadcast plan of every kernel, in order, for these inputs. Nothing runs: the
    /// results that flow between kernels are stood in for by zeros of their dtype and shape.
    pub fn explain_all(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Vec<(KernelIR, BroadcastPlan)>> {
        Ok(self
            .explain_rewrites(inputs)?
            .into_iter()
            .map(|(k, p, _)| (k, p))
            .collect())
    }

    /// [`FusedRunner::explain_all`](crate::FusedRunner::explain_all), with what each rewrite did to each kernel (fired, declined and
    /// why, or off), the engine's note last.
    pub fn explain_rewrites(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
    ) -> Result<Vec<(KernelIR, BroadcastPlan, Vec<String>)>> {
        Ok(self
            .explain_kernels(inputs)?
            .into_iter()
            .map(|e| {
                let notes = e.notes();
                (e.kernel, e.plan, notes)
            })
            .collect())
    }

    /// [`Compiled::explain_kernels`] as text, with the last kernel's compiled code where `opts`
    /// asks for it ([`crate::FusedRunner::explain_text`]).
    pub fn explain_text(&self, inputs: &[(&str, ArrayArg<'_>)], opts: ExplainOptions) -> Result<String> {
        let source = crate::explain::Source {
            settings: self.settings(),
            plan_notes: &self.plan_notes,
            pipeline: &self.pipeline,
            backend: self.backend(),
        };
        source.text(self.explain_kernels(inputs)?, opts)
    }

    /// Every kernel, in order, for these inputs, with its plan, what each rewrite did and how it
    /// runs ([`Explained`]). Nothing runs but what later kernels read.
    pub fn explain_kernels(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Vec<Explained>> {
        let user = bind(&self.pipeline.names, inputs)?;
        // the kernels as a run specialises them: on the inputs in memory order, where they share one
        if let Some(m) = self.in_memory_order(&user) {
            let moved = m.inputs(user.iter().copied());
            let refs: Vec<&ArrayArg<'_>> = moved.iter().collect();
            return m.runner.explain_bound(&refs, Some((&m.order, &m.stages)));
        }
        self.explain_bound(&user, None)
    }

    /// [`FusedRunner::explain_rewrites`](crate::FusedRunner::explain_rewrites) on the inputs in the order of
    /// [`FusedRunner::input_names`](crate::FusedRunner::input_names); `memory`: they are in memory order, in that order, and each
    /// kernel's axes are the user's listed.
    fn explain_bound(
        &self,
        user: &[&ArrayArg<'_>],
        memory: Option<(&[usize], &[Vec<usize>])>,
    ) -> Result<Vec<Explained>> {
        let backend = &*self.backend;
        let mut out = Vec::new();
        let temps = self.for_stages(user, self.pipeline.stages.len(), |k, args| {
            let program = &self.pipeline.stages[k].program;
            // a compound stage runs as its two reductions over integer or bool inputs (typed kernels
            // have no compound form) and over axes the backend does not reduce in one pass (leading
            // ones): the first is shown, and the stage runs for its result
            if let Work::Compound(_, _, pair) = &program.work
                && self.passes(k, args)? != Passes::One
            {
                let (kernel, plan, notes, typed) = specialise(
                    &pair.first,
                    args,
                    self.plan_options,
                    self.settings,
                    &*self.backend,
                )?;
                let mut e = explained(kernel, plan, notes, typed.as_ref(), backend);
                let why = if crate::executor::float_path_of(program, args).is_none() {
                    "for the typed path"
                } else {
                    "over axes the backend does not reduce in one pass"
                };
                e.rewrites.insert(
                    0,
                    format!(
                        "compound: declined {why}: its two reductions run one after the other (the \
                         first shown)"
                    ),
                );
                out.push(e);
                return self.run_temp(k, args);
            }
            if let Work::Siblings(parts) = &program.work
                && self.passes(k, args)? != Passes::One
            {
                let own: Vec<&ArrayArg<'_>> = parts[0].inputs.iter().map(|&i| args[i]).collect();
                let (kernel, plan, notes, typed) = specialise(
                    &parts[0].program,
                    &own,
                    self.plan_options,
                    self.settings,
                    &*self.backend,
                )?;
                let mut e = explained(kernel, plan, notes, typed.as_ref(), backend);
                e.rewrites.insert(
                    0,
                    "siblings: declined for integer or bool values (the typed path), or axes the backend \
                     does not reduce in one pass: the reductions run one after the other (the first \
                     shown)"
                        .into(),
                );
                out.push(e);
                return self.run_temp(k, args);
            }
            let (kernel, plan, notes, typed) =
                specialise(program, args, self.plan_options, self.settings, &*self.backend)?;
            if matches!(program.work, Work::Siblings(_)) && typed.is_some() {
                // typed sibling reductions in one pass: each component of its own type, as the
                // stages after it read them
                let mut e = explained(kernel, plan, notes, typed.as_ref(), backend);
                if few_points(program, args) {
                    e.rewrites.insert(0, components_note());
                }
                if let Some((order, axes)) = memory {
                    e.rewrites.insert(0, memory_order::note(order, &axes[k]));
                }
                out.push(e);
                return self.run_temp(k, args);
            }
            let shape = result_shape(&kernel, program.reduction());
            // a stand-in for the stage's result, allocated fallibly (its shape is the user's)
            let n = kiln_ir::shape::checked_addressable(&shape, 8)?;
            let what = "a stand-in for an intermediate result";
            let out_type = match &typed {
                Some(t) => t.output_type(),
                None => kernel.output_type(),
            };
            let temp = match (out_type, program.reduction()) {
                (ElemType::I64 | ElemType::I32 | ElemType::Bool, r)
                    if typed.is_some() && !r.is_some_and(|r| r.mean) =>
                {
                    let zeros = kiln_ir::shape::try_filled(n, 0i64, what)?;
                    let a = ArrayD::from_shape_vec(IxDyn(&shape), zeros)
                        .map_err(|e| Error::Output(e.to_string()))?;
                    Temp::Typed(match out_type {
                        ElemType::I64 => Output::I64(a),
                        ElemType::I32 => Output::I32(a.mapv(|v| v as i32)),
                        _ => Output::Bool(a.mapv(|v| v != 0)),
                    })
                }
                // a complex result (a mean of complex values too) is complex, as the run gives it
                (ElemType::C64, _) => {
                    let zeros =
                        kiln_ir::shape::try_filled(n, kiln_ir::num_complex::Complex32::new(0.0, 0.0), what)?;
                    Temp::Typed(Output::C64(
                        ArrayD::from_shape_vec(IxDyn(&shape), zeros)
                            .map_err(|e| Error::Output(e.to_string()))?,
                    ))
                }
                (ElemType::C128, _) => {
                    let zeros =
                        kiln_ir::shape::try_filled(n, kiln_ir::num_complex::Complex64::new(0.0, 0.0), what)?;
                    Temp::Typed(Output::C128(
                        ArrayD::from_shape_vec(IxDyn(&shape), zeros)
                            .map_err(|e| Error::Output(e.to_string()))?,
                    ))
                }
                (ElemType::F32, r) if !r.is_some_and(|r| r.mean) => {
                    let zeros = kiln_ir::shape::try_filled(n, 0.0f32, what)?;
                    Temp::F32(
                        ArrayD::from_shape_vec(IxDyn(&shape), zeros)
                            .map_err(|e| Error::Output(e.to_string()))?,
                    )
                }
                _ => {
                    let zeros = kiln_ir::shape::try_filled(n, 0.0f64, what)?;
                    Temp::F64(
                        ArrayD::from_shape_vec(IxDyn(&shape), zeros)
                            .map_err(|e| Error::Output(e.to_string()))?,
                    )
                }
            };
            let mut e = explained(kernel, plan, notes, typed.as_ref(), backend);
            if few_points(program, args) {
                e.rewrites.insert(0, components_note());
            }
            if let Some((order, axes)) = memory {
                e.rewrites.insert(0, memory_order::note(order, &axes[k]));
            }
            out.push(e);
            Ok(temp)
        })?;
        if let Some(f) = &self.pipeline.fused {
            let args = stage_args(&self.pipeline, &f.stage, user, &temps)?;
            let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
            let (kernel, plan, notes, typed) = specialise(
                &f.stage.program,
                &refs,
                self.plan_options,
                self.settings,
                &*self.backend,
            )?;
            let mut e = explained(kernel, plan, notes, typed.as_ref(), backend);
            if !self.fuses(f, &refs)? {
                e.rewrites
                    .push("fused: declined: the maps do not share one iteration shape and dtype here".into());
            }
            out.push(e);
        }
        Ok(out)
    }

    /// Specialises and readies the kernels for inputs of this form (the JIT compiles them here)
    /// without running them; a later run on inputs of the same dtypes, shapes and layouts starts at
    /// once. (A multi-kernel expression is run once, so that every kernel sees its inputs' form.)
    pub fn prepare(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
        let user = bind(&self.pipeline.names, inputs)?;
        if self.pipeline.is_many() {
            // as a run: every kernel runs
            return self.run_many_bound(&user).map(|_| ());
        }
        if let Some(m) = self.in_memory_order(&user) {
            let moved = m.inputs(user.iter().copied());
            let refs: Vec<&ArrayArg<'_>> = moved.iter().collect();
            return m.runner.prepare_bound(&refs);
        }
        self.prepare_bound(&user)
    }

    /// [`FusedRunner::prepare`](crate::FusedRunner::prepare) of one result, on the inputs in the order of
    /// [`FusedRunner::input_names`](crate::FusedRunner::input_names).
    fn prepare_bound(&self, user: &[&ArrayArg<'_>]) -> Result<()> {
        let k = self.pipeline.stages.len() - 1;
        let temps = self.for_stages(user, k, |k, args| self.run_temp(k, args))?;
        let args = stage_args(&self.pipeline, self.pipeline.last(), user, &temps)?;
        let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
        if k > 0 {
            // as a run: the last kernel runs too
            return self.run_stage(k, &refs, Start::Identity).map(|_| ());
        }
        self.specialised[k]
            .get(
                &self.pipeline.last().program,
                &*self.backend,
                &refs,
                self.plan_options,
                self.settings,
            )
            .map(|_| ())
    }

    /// The axis order in which the expression runs on these inputs (in the order of
    /// [`FusedRunner::input_names`](crate::FusedRunner::input_names)), where it is not their own: where every input is C-contiguous
    /// with its axes permuted alike (Fortran or transposed arrays) and the expression does not
    /// depend on C order itself (a flat index, a contraction: see [`memory_order`]). A run then reads
    /// each input in place in that order, its axis reductions and scans along the axes mapped
    /// alike, and gives its result back in the inputs' axes (a Fortran result for Fortran inputs,
    /// as NumPy's `order='K'`).
    pub fn memory_order(&self, inputs: &[&ArrayArg<'_>]) -> Option<Vec<usize>> {
        self.in_memory_order(inputs).map(|m| m.order)
    }

    /// The run in memory order of these inputs (see [`FusedRunner::memory_order`](crate::FusedRunner::memory_order)), if they have
    /// one: its runner is this one where no kernel names an axis, else the one of the plan remapped
    /// for the layout (made once per layout).
    pub(crate) fn in_memory_order(&self, inputs: &[&ArrayArg<'_>]) -> Option<MemoryRun> {
        let order = memory_order::common_order(inputs)?;
        let ranks: Vec<usize> = inputs.iter().map(|a| a.shape().len()).collect();
        let layout = memory_order::layout(&self.pipeline, &ranks, &order)?;
        let c_result = self
            .pipeline
            .last()
            .program
            .reduction()
            .is_some_and(|r| r.op.is_arg());
        let runner = if layout.names_axes {
            self.remapped(&layout)
        } else {
            self.clone()
        };
        Some(MemoryRun {
            order,
            stages: layout.stages,
            result: layout.result,
            runner,
            c_result,
        })
    }

    /// A runner of `pipeline` (one derived from this runner's: a stage of it) with this runner's
    /// backend and settings, and caches of its own.
    pub(crate) fn with_pipeline(&self, pipeline: Pipeline) -> Compiled {
        let pipeline = Arc::new(pipeline);
        Compiled {
            lowered: pipeline.clone(),
            specialised: spec_caches(pipeline.stages.len()),
            pipeline,
            plan_notes: Arc::default(),
            remapped: Arc::default(),
            ..self.clone()
        }
    }

    /// This runner with the plan remapped for `layout`, with caches of its own: made on the first
    /// run of the layout, kept for the next.
    fn remapped(&self, layout: &memory_order::Layout) -> Compiled {
        let mut kept = self.remapped.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, runner)) = kept.iter().find(|(stages, _)| *stages == layout.stages) {
            // this runner's thread settings, which `with_parallel` changes without new caches
            return Compiled {
                parallel: self.parallel.clone(),
                ..runner.clone()
            };
        }
        let pipeline = memory_order::remap(&self.pipeline, layout);
        let runner = Compiled {
            specialised: spec_caches(pipeline.stages.len()),
            pipeline: Arc::new(pipeline),
            remapped: Arc::default(),
            ..self.clone()
        };
        if kept.len() >= REMAPPED {
            kept.remove(0);
        }
        kept.push((layout.stages.clone(), runner.clone()));
        runner
    }

    /// Runs every stage but the last, then the last, on the inputs in the order of
    /// [`FusedRunner::input_names`](crate::FusedRunner::input_names); the last stage's tensor (finished).
    pub(crate) fn run_stages(&self, user: &[&ArrayArg<'_>]) -> Result<(Arc<Specialised>, Tensor)> {
        let k = self.pipeline.stages.len() - 1;
        let temps = self.for_stages(user, k, |k, args| self.run_temp(k, args))?;
        let args = stage_args(&self.pipeline, self.pipeline.last(), user, &temps)?;
        let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
        self.run_stage(k, &refs, Start::Identity)
    }

    /// The one stage loop (of run, run_into, prepare and explain): for each of the first `upto`
    /// stages in order, its arguments (the user's inputs, and the results of the stages before it)
    /// handed to `each`, whose result is what later stages read. The results, in order.
    fn for_stages(
        &self,
        user: &[&ArrayArg<'_>],
        upto: usize,
        mut each: impl FnMut(usize, &[&ArrayArg<'_>]) -> Result<Temp>,
    ) -> Result<Vec<Temp>> {
        let mut temps: Vec<Temp> = Vec::new();
        for (k, stage) in self.pipeline.stages[..upto].iter().enumerate() {
            let t = {
                let args = stage_args(&self.pipeline, stage, user, &temps)?;
                let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
                each(k, &refs)?
            };
            temps.push(t);
        }
        Ok(temps)
    }

    /// Runs every stage but the last and readies the last (nothing of it runs): its specialisation,
    /// and the earlier stages' results.
    pub(crate) fn ready_last(&self, user: &[&ArrayArg<'_>]) -> Result<(Arc<Specialised>, Vec<Temp>)> {
        let k = self.pipeline.stages.len() - 1;
        let temps = self.for_stages(user, k, |k, args| self.run_temp(k, args))?;
        let args = stage_args(&self.pipeline, self.pipeline.last(), user, &temps)?;
        let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
        let spec = self.specialised[k].get(
            &self.pipeline.last().program,
            &*self.backend,
            &refs,
            self.plan_options,
            self.settings,
        )?;
        Ok((spec, temps))
    }

    /// Runs stage `k` on `args` as an earlier stage: its result, as the later stages read it.
    pub(crate) fn run_temp(&self, k: usize, args: &[&ArrayArg<'_>]) -> Result<Temp> {
        if let Passes::Apart { shape, axes } = self.passes(k, args)? {
            match &self.pipeline.stages[k].program.work {
                Work::Compound(_, _, pair) => {
                    return self.run_pair(k, pair, args, &shape, &axes, |part, program, own| {
                        Output::try_from(self.run_program(program, (k, part + 1), own, Start::Identity)?.1)
                    });
                }
                Work::Siblings(parts) => return self.run_components(k, parts, args),
                _ => unreachable!("only compound and sibling stages run apart"),
            }
        }
        let (spec, t) = self.run_stage(k, args, Start::Identity)?;
        if let (Work::Siblings(parts), Some(typed)) = (&self.pipeline.stages[k].program.work, &spec.typed) {
            return typed_components(t, typed, &spec.kernel, parts);
        }
        Ok(Temp::of(Output::try_from(t)?, spec.typed.is_some()))
    }

    /// How stage `k` runs on arguments of the form of `args` ([`Passes`]), decided once per form
    /// (its specialisation's dtypes, shapes and layouts) and kept in the stage's cache beside its
    /// kernels: a compound or sibling stage runs as the reductions it merged for integer or bool
    /// inputs the float path does not read (a typed kernel has no such form), or where the backend
    /// does not run its one pass over these axes; every other stage in one pass.
    pub(crate) fn passes(&self, k: usize, args: &[&ArrayArg<'_>]) -> Result<Passes> {
        let program = &self.pipeline.stages[k].program;
        if program.component_axes().is_none() {
            return Ok(Passes::One);
        }
        self.specialised[k].decided(args, || self.decide_passes(k, program, args))
    }

    /// [`Compiled::passes`] of stage `k`, a compound or sibling stage of `program`, decided (a
    /// typed sibling stage that runs in one pass has its specialisation readied here).
    fn decide_passes(&self, k: usize, program: &Program, args: &[&ArrayArg<'_>]) -> Result<Passes> {
        let Some(axes) = program.component_axes() else {
            return Ok(Passes::One);
        };
        let shape = broadcast_shapes(args.iter().map(|a| a.shape()))?;
        let axes = Reduction::new(kiln_ir::ReduceOp::Sum, axes.clone()).resolve_axes(shape.len())?;
        // a compound or sibling stage runs as one pass where the float path computes it (float
        // inputs, or integer and bool inputs it reads converted: `var(i)`, `sum(i * 0.5) + max(i *
        // 0.5)`), else apart (typed: integer arithmetic, complex values)
        // (sibling reductions of bool and integer values in one pass where the backend compiles
        // their typed kernel: `sum(i); min(i); max(i)`)
        let float = crate::executor::float_path_of(program, args);
        let typed = float.is_none();
        let one_pass = match &program.work {
            Work::Siblings(parts) => {
                let ops: Vec<kiln_ir::ReduceOp> = parts.iter().map(|p| p.reduction().op).collect();
                self.backend.runs_siblings(&axes, shape.len(), &ops, float)
            }
            _ => self.backend.runs_compound(&axes, shape.len()),
        };
        let typed_apart = typed && !(one_pass && self.typed_siblings_compile(k, program, args)?);
        Ok(if typed_apart || !one_pass {
            Passes::Apart { shape, axes }
        } else {
            Passes::One
        })
    }

    /// Whether `program` (stage `k`), sibling reductions over `args` of bool or integer values (no
    /// mean, no `initial`), is a typed kernel the backend compiles in one pass; if so, its
    /// specialisation is readied in the stage's cache, where the run finds it.
    fn typed_siblings_compile(&self, k: usize, program: &Program, args: &[&ArrayArg<'_>]) -> Result<bool> {
        let Work::Siblings(parts) = &program.work else {
            return Ok(false);
        };
        if parts
            .iter()
            .any(|p| p.reduction().mean || p.reduction().initial.is_some())
        {
            return Ok(false);
        }
        let Ok(made) = specialise(program, args, self.plan_options, self.settings, &*self.backend) else {
            return Ok(false);
        };
        if !made
            .3
            .as_ref()
            .is_some_and(|typed| self.backend.compiles_typed(typed))
        {
            return Ok(false);
        }
        self.specialised[k].keep(0, made, &*self.backend, args)?;
        Ok(true)
    }

    /// A sibling stage `k` that the backend does not run for these inputs, as the reductions it
    /// merged, one pass each: each component's result as its reduction gives it.
    fn run_components(&self, k: usize, parts: &[Sibling], args: &[&ArrayArg<'_>]) -> Result<Temp> {
        let typed = args.iter().any(|a| !a.elem().is_float());
        let temps = parts
            .iter()
            .enumerate()
            .map(|(i, part)| {
                let own: Vec<&ArrayArg<'_>> = part.inputs.iter().map(|&i| args[i]).collect();
                let t = self
                    .run_program(&part.program, (k, i + 1), &own, Start::Identity)?
                    .1;
                Ok(Temp::of(Output::try_from(t)?, typed))
            })
            .collect::<Result<Vec<Temp>>>()?;
        Ok(Temp::Parts(temps))
    }

    /// A compound stage `k` that the backend does not run for these shapes, as the two reductions it
    /// replaced (two passes): their results side by side, as the compound stage gives them.
    /// `run(part, program, args)` gives the result of `pair.first` (part 0) and `pair.second`
    /// (part 1) on their arguments: the stage loop's run of them, or a staged handle's.
    pub(crate) fn run_pair(
        &self,
        k: usize,
        pair: &Siblings,
        args: &[&ArrayArg<'_>],
        shape: &[usize],
        axes: &[usize],
        mut run: impl FnMut(usize, &Program, &[&ArrayArg<'_>]) -> Result<Output>,
    ) -> Result<Temp> {
        let typed = args.iter().any(|a| !a.elem().is_float());
        let first = Temp::of(run(0, &pair.first, args)?, typed);
        let r = pair.first.reduction().expect("a sibling is a reduction");
        let m = if r.keepdims {
            first.arg()
        } else {
            twin(first.arg(), r, true)?
        };
        let stage = &self.pipeline.stages[k];
        let second_args = pair
            .second
            .sources
            .iter()
            .enumerate()
            .map(|(n, s)| {
                if n == pair.m_input {
                    return Ok(m.clone());
                }
                let i = stage.sources.iter().position(|x| x == s).ok_or_else(|| {
                    Error::Unsupported("a merged reduction reads an input its sibling does not".into())
                })?;
                Ok(args[i].reborrow())
            })
            .collect::<Result<Vec<ArrayArg<'_>>>>()?;
        let refs: Vec<&ArrayArg<'_>> = second_args.iter().collect();
        let second = Temp::of(run(1, &pair.second.program, &refs)?, typed);
        if [&first, &second]
            .iter()
            .any(|t| matches!(t, Temp::Typed(o) if o.elem().is_complex()))
        {
            return Err(Error::Unsupported(
                "the variance and standard deviation of complex numbers (NumPy's mean(|x - mean(x)|²), \
                 a real number) are not computed yet: write mean(abs(x - mean(x))**2)"
                    .into(),
            ));
        }
        let kept: Vec<usize> = std::iter::once(2)
            .chain((0..shape.len()).map(|a| if axes.contains(&a) { 1 } else { shape[a] }))
            .collect();
        let both = match (&first, &second) {
            (Temp::F32(a), Temp::F32(b)) => Temp::F32(
                ArrayD::from_shape_vec(IxDyn(&kept), a.iter().chain(b.iter()).copied().collect())
                    .map_err(|e| Error::Output(e.to_string()))?,
            ),
            _ => {
                let f = |t: &Temp| -> Vec<f64> {
                    match t {
                        Temp::F64(a) => a.iter().copied().collect(),
                        Temp::F32(a) => a.iter().map(|&v| f64::from(v)).collect(),
                        // an integer pipeline's sums: the compound result is a float array
                        Temp::Typed(o) => o.clone().into_f64().iter().copied().collect(),
                        Temp::Parts(_) => unreachable!("a reduction's result is one array"),
                    }
                };
                let mut v = f(&first);
                v.extend(f(&second));
                Temp::F64(ArrayD::from_shape_vec(IxDyn(&kept), v).map_err(|e| Error::Output(e.to_string()))?)
            }
        };
        Ok(both)
    }

    /// Runs stage `k` on `args`; its tensor, finished (mean, keepdims).
    pub(crate) fn run_stage(
        &self,
        k: usize,
        args: &[&ArrayArg<'_>],
        start: Start<'_>,
    ) -> Result<(Arc<Specialised>, Tensor)> {
        self.run_program(&self.pipeline.stages[k].program, (k, 0), args, start)
    }

    /// Runs `program`, part `part` of stage `stage` (`at`: see [`SpecCache::get_part`]), on `args`;
    /// its tensor, finished (mean, keepdims).
    fn run_program(
        &self,
        program: &Program,
        at: (usize, usize),
        args: &[&ArrayArg<'_>],
        start: Start<'_>,
    ) -> Result<(Arc<Specialised>, Tensor)> {
        let (stage, part) = at;
        let spec = self.specialised[stage].get_part(
            part,
            program,
            &*self.backend,
            args,
            self.plan_options,
            self.settings,
        )?;
        self.run_with(spec, program, args, start)
    }

    /// [`Compiled::run_program`] with its specialisation for `args` found.
    fn run_with(
        &self,
        spec: Arc<Specialised>,
        program: &Program,
        args: &[&ArrayArg<'_>],
        start: Start<'_>,
    ) -> Result<(Arc<Specialised>, Tensor)> {
        let bufs = buffers(&spec, args)?;
        let start = match (start, program.reduction().and_then(|r| r.initial)) {
            (Start::Identity, Some(v)) => Start::Initial(v),
            (s, _) => s,
        };
        // a scan carries its start in the kernel (a rewritten contraction's `initial` too); folding
        // into the previous outputs adds them once to each output: `y ⊕ s`
        let (start, previous) = match (&spec.kernel.kind, start) {
            (KernelKind::Scan(_), Start::Each(prev)) => (Start::Identity, Some(prev)),
            (KernelKind::Scan(_), _) => (Start::Identity, None),
            (_, s) => (s, None),
        };
        let ctx = RunCtx {
            start,
            parallel: &self.parallel,
        };
        let mut t = spec.exe.run(&spec.kernel, &spec.plan, &bufs, &ctx)?;
        if let (Some(prev), KernelKind::Scan(scan)) = (previous, &spec.kernel.kind) {
            t.values = fold_previous(t.values, prev, scan.op);
        }
        Ok((spec.clone(), finish_stage(t, &spec.kernel, program)))
    }

    /// Whether the expression can fold into an output
    /// ([`FusedRunner::run_accumulate`](crate::FusedRunner::run_accumulate)): one result, whose last
    /// kernel is a sum, product, min or max without an `initial`, not a mean.
    pub(crate) fn check_accumulate(&self) -> Result<()> {
        match self.pipeline.last().program.reduction() {
            Some(r) if r.op.takes_initial() && r.initial.is_none() && !r.mean => {}
            _ => {
                return Err(Error::Unsupported(
                    "run_accumulate needs a sum, prod, min or max (without initial) as the last kernel"
                        .into(),
                ));
            }
        }
        self.single("run_accumulate")
    }

    /// The fold into `out` (`out = out ⊕ reduce(...)`, each output's fold from its previous value,
    /// in the accumulator's type, rounded once) past its checks, on the inputs in the order of
    /// [`FusedRunner::input_names`](crate::FusedRunner::input_names) (a bound handle's call
    /// starts here: no name bound).
    pub(crate) fn accumulate_user<A: Float, D: Dimension>(
        &self,
        user: &[&ArrayArg<'_>],
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        self.accumulate_in(user, self.in_memory_order(user), out)
    }

    /// [`Compiled::accumulate_user`] with the inputs' run in memory order found (`memory`:
    /// [`Compiled::in_memory_order`]).
    pub(crate) fn accumulate_in<A: Float, D: Dimension>(
        &self,
        user: &[&ArrayArg<'_>],
        memory: Option<MemoryRun>,
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        if let Some(m) = memory {
            // the result is folded in memory order where `out` with its axes in the result's
            // order is C-contiguous; else the inputs are read in their own order
            let mut out = out.into_dyn();
            if out.ndim() == m.result.len() && out.view().permuted_axes(IxDyn(&m.result)).is_standard_layout()
            {
                let moved = m.inputs(user.iter().copied());
                let refs: Vec<&ArrayArg<'_>> = moved.iter().collect();
                let permuted = out.view_mut().permuted_axes(IxDyn(&m.result));
                return m.runner.accumulate_bound(&refs, permuted);
            }
            return self.accumulate_bound(user, out);
        }
        self.accumulate_bound(user, out)
    }

    /// [`FusedRunner::run_accumulate`](crate::FusedRunner::run_accumulate) on the inputs in the
    /// order of [`FusedRunner::input_names`](crate::FusedRunner::input_names): each output's fold
    /// starts from its previous value.
    fn accumulate_bound<A: Float, D: Dimension>(
        &self,
        user: &[&ArrayArg<'_>],
        mut out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        self.with_last_stage(user, |k, refs, spec| {
            let (want, out_type) = result_form(spec, self.pipeline.last().program.reduction());
            if out.shape() != want.as_slice() || out_type != A::DTYPE {
                return Err(Error::Output(format!(
                    "the output is {}{:?} but the kernel gives {}{:?}",
                    A::DTYPE.short(),
                    out.shape(),
                    out_type,
                    want
                )));
            }
            let prev: Vec<f64> = out.iter().map(|v| v.to_f64()).collect();
            let program = &self.pipeline.stages[k].program;
            let t = self
                .run_with(Arc::clone(spec), program, refs, Start::Each(&prev))?
                .1;
            match out.as_slice_mut() {
                Some(slice) => crate::backend::copy_into(t.values, A::out_slice(slice)),
                None => {
                    // another layout: the fold assigned in C order
                    let mut fresh = vec![A::ZERO; out.len()];
                    crate::backend::copy_into(t.values, A::out_slice(&mut fresh))?;
                    let fresh = ndarray::ArrayView::from_shape(out.raw_dim(), &fresh)
                        .map_err(|e| Error::Output(e.to_string()))?;
                    out.assign(&fresh);
                    Ok(())
                }
            }
        })
    }

    /// The one result into `out` (its elements in C order, of the result's type and element
    /// count) on the inputs in the order of [`FusedRunner::input_names`](crate::FusedRunner::input_names):
    /// the stages before the last run into temporaries; a last map or scan writes `out` itself,
    /// any other result is copied in.
    pub(crate) fn run_out_bound(&self, user: &[&ArrayArg<'_>], out: OutSlice<'_>) -> Result<()> {
        self.with_last_stage(user, |k, refs, spec| {
            let (want, out_type) = result_form(spec, self.pipeline.last().program.reduction());
            if Some(out.len()) != kiln_ir::shape::checked_size(&want).ok() || out_type != out.ty() {
                return Err(Error::Output(format!(
                    "{} elements of {} given for a result of {out_type} of shape {want:?}",
                    out.len(),
                    out.ty().short_name(),
                )));
            }
            if matches!(spec.kernel.kind, KernelKind::Map | KernelKind::Scan(_)) {
                let bufs = buffers(spec, refs)?;
                let ctx = RunCtx {
                    start: Start::Identity,
                    parallel: &self.parallel,
                };
                return spec.exe.run_into(&spec.kernel, &spec.plan, &bufs, out, &ctx);
            }
            let t = self.run_stage(k, refs, Start::Identity)?.1;
            crate::backend::copy_into(t.values, out)
        })
    }

    /// Runs the stages before the last into temporaries and calls `f` with the last stage's index,
    /// its arguments and its specialisation for them.
    fn with_last_stage<R>(
        &self,
        user: &[&ArrayArg<'_>],
        f: impl FnOnce(usize, &[&ArrayArg<'_>], &Arc<Specialised>) -> Result<R>,
    ) -> Result<R> {
        let k = self.pipeline.stages.len() - 1;
        let temps = self.for_stages(user, k, |k, args| self.run_temp(k, args))?;
        let stage = self.pipeline.last();
        let args = stage_args(&self.pipeline, stage, user, &temps)?;
        let refs: Vec<&ArrayArg<'_>> = args.iter().collect();
        let spec = self.specialised[k].get(
            &stage.program,
            &*self.backend,
            &refs,
            self.plan_options,
            self.settings,
        )?;
        f(k, &refs, &spec)
    }
}

/// The arguments of a stage: user inputs as given (placed along their axes in a contraction),
/// earlier results from `temps` (reshaped where the stage reads a reduction's keepdims twin).
pub(crate) fn stage_args<'t>(
    pipeline: &Pipeline,
    stage: &Stage,
    user: &[&'t ArrayArg<'_>],
    temps: &'t [Temp],
) -> Result<Vec<ArrayArg<'t>>> {
    let contraction = stage.program.contraction();
    stage
        .sources
        .iter()
        .enumerate()
        .map(|(n, s)| {
            let arg = match *s {
                Source::Input(i) => user[i].reborrow(),
                _ => temp_arg(pipeline, *s, temps)?,
            };
            match contraction {
                Some(c) => place(arg, &stage.program.names[n], &c.placements[n], c.index.len()),
                None => Ok(arg),
            }
        })
        .collect()
}

/// An earlier stage's result as `s` reads it (`s` is not a user input).
pub(crate) fn temp_arg<'t>(pipeline: &Pipeline, s: Source, temps: &'t [Temp]) -> Result<ArrayArg<'t>> {
    match s {
        Source::Stage(k) => Ok(temps[k].arg()),
        Source::Dropped(k) | Source::Kept(k) => {
            let Some(r) = pipeline.stages[k].program.reduction() else {
                unreachable!("a keepdims twin is a reduction");
            };
            twin(temps[k].arg(), r, matches!(s, Source::Kept(_)))
        }
        Source::Part {
            stage,
            part,
            keepdims,
        } => {
            let program = &pipeline.stages[stage].program;
            if let (Temp::Parts(each), Work::Siblings(parts)) = (&temps[stage], &program.work) {
                // a component run alone: its result as its reduction shaped it
                let r = parts[part as usize].reduction();
                let one = each[part as usize].arg();
                return if r.keepdims == keepdims {
                    Ok(one)
                } else {
                    twin(one, r, keepdims)
                };
            }
            let axes = program
                .component_axes()
                .expect("a component is of a compound or sibling stage");
            let one = crate::array::map_view!(temps[stage].arg(), v => v.index_axis_move(ndarray::Axis(0), part as usize));
            if keepdims {
                return Ok(one);
            }
            twin(one, &Reduction::new(kiln_ir::ReduceOp::Sum, axes.clone()), false)
        }
        Source::Input(_) => unreachable!("a user input is no stage's result"),
    }
}

/// A reduction's result `arg` (of `r`'s keepdims) read as its keepdims twin: the reduced axes put
/// back as length 1 (`keep`), or dropped. Views, no copy.
fn twin<'t>(arg: ArrayArg<'t>, r: &Reduction, keep: bool) -> Result<ArrayArg<'t>> {
    let rank = match (&r.axes, keep) {
        (crate::expr::Axes::Some(a), true) => arg.shape().len() + a.len(),
        _ => arg.shape().len(),
    };
    let axes = match &r.axes {
        crate::expr::Axes::All => (0..rank).collect(),
        crate::expr::Axes::Some(a) => kiln_ir::shape::normalize_axes(a, rank)?,
    };
    fn reshape<'v, T>(
        mut v: ndarray::ArrayViewD<'v, T>,
        axes: &[usize],
        keep: bool,
    ) -> ndarray::ArrayViewD<'v, T> {
        if keep {
            for &a in axes {
                v.insert_axis_inplace(ndarray::Axis(a));
            }
        } else {
            for &a in axes.iter().rev() {
                v.index_axis_inplace(ndarray::Axis(a), 0);
            }
        }
        v
    }
    Ok(crate::array::map_view!(arg, v => reshape(v, &axes, keep)))
}

/// `arg` with size-1 axes inserted so that its axes lie along `placement` of `rank` axes.
fn place<'t>(arg: ArrayArg<'t>, name: &str, placement: &[usize], rank: usize) -> Result<ArrayArg<'t>> {
    if arg.shape().len() != placement.len() {
        return Err(Error::Unsupported(format!(
            "input '{name}' has {} axes but is subscripted with {} indices",
            arg.shape().len(),
            placement.len()
        )));
    }
    let missing: Vec<usize> = (0..rank).filter(|a| !placement.contains(a)).collect();
    Ok(crate::array::map_view!(arg, v => {
        let mut v = v;
        for &a in &missing {
            v.insert_axis_inplace(ndarray::Axis(a));
        }
        v
    }))
}

/// `prev[o] ⊕ s[o]` per output, in f64, rounded once: a scan folded into the previous outputs.
fn fold_previous(values: Values, prev: &[f64], op: kiln_ir::ScanOp) -> Values {
    let f = |s: f64, p: f64| op.apply_f64(p, s);
    match values {
        Values::F64(v) => Values::F64(v.iter().zip(prev).map(|(&s, &p)| f(s, p)).collect()),
        Values::F32(v) => Values::F32(v.iter().zip(prev).map(|(&s, &p)| f(s as f64, p) as f32).collect()),
        other => other,
    }
}

/// The shape and type of the result a stage whose kernel is `spec` gives.
pub(crate) fn result_form(spec: &Specialised, reduce: Option<&Reduction>) -> (Vec<usize>, ElemType) {
    let shape = result_shape(&spec.kernel, reduce);
    let out_type = match reduce {
        // a typed kernel's result type is NumPy's, the mean's included (typed as a mean: float32
        // data keeps float32, integers give float64); the float path divides in its dtype
        Some(r) if r.mean && spec.typed.is_none() => spec.kernel.dtype,
        _ => spec.output_type(),
    };
    (shape, out_type)
}

/// The shape a stage gives: the kernel's output shape, with the reduced axes as 1 under keepdims.
fn result_shape(kernel: &KernelIR, reduce: Option<&Reduction>) -> Vec<usize> {
    match (&kernel.kind, reduce) {
        // both statistics, each with the reduced axes kept as 1 (a later stage drops them if it
        // reads them dropped)
        (KernelKind::Compound { axes, .. } | KernelKind::Siblings { axes, .. }, _) => {
            std::iter::once(kernel.components())
                .chain((0..kernel.shape.len()).map(|a| if axes.contains(&a) { 1 } else { kernel.shape[a] }))
                .collect()
        }
        (KernelKind::Reduce { axes, .. }, Some(r)) => r.result_shape(&kernel.shape, axes),
        _ => kernel.output_shape(),
    }
}

/// A stage's tensor finished: a mean divided by the count of values reduced into each output (as
/// NumPy's `mean`: the sum, in f64 for f32 data and rounded once, divided in the result's dtype; a
/// sum of truth values gives f64), and reshaped for keepdims.
pub(crate) fn finish(mut t: Tensor, kernel: &KernelIR, reduce: Option<&Reduction>) -> Tensor {
    if let KernelKind::Compound { .. } | KernelKind::Siblings { .. } = &kernel.kind {
        t.shape = result_shape(kernel, None);
        return t;
    }
    let Some(r) = reduce else { return t };
    let KernelKind::Reduce { axes, .. } = &kernel.kind else {
        return t;
    };
    if r.mean {
        let count = mean_count(kernel);
        t.values = match t.values {
            Values::F64(v) => Values::F64(v.into_iter().map(|x| x / count as f64).collect()),
            Values::F32(v) => Values::F32(v.into_iter().map(|x| x / count as f32).collect()),
            Values::I64(v) => Values::F64(v.into_iter().map(|x| x as f64 / count as f64).collect()),
            Values::I32(v) => Values::F64(v.into_iter().map(|x| x as f64 / count as f64).collect()),
            Values::Bool(v) => Values::F64(
                v.into_iter()
                    .map(|x| f64::from(u8::from(x)) / count as f64)
                    .collect(),
            ),
            Values::C64(v) => Values::C64(v.into_iter().map(|z| z / count as f32).collect()),
            Values::C128(v) => Values::C128(v.into_iter().map(|z| z / count as f64).collect()),
            // the typing refuses a mean of byte strings
            strings @ Values::Bytes { .. } => strings,
        };
    }
    t.shape = r.result_shape(&kernel.shape, axes);
    t
}

/// The most points of a sibling stage whose components run one by one, each by its handle: below
/// the 1e5 points (800 kB of float64) where the merged pass of `sum(x) + max(x)` and the two
/// reductions by their handles took the same time, one thread (`prepared/staged.rs`).
pub(crate) const COMPONENTS_POINTS: usize = 1 << 16;

/// Whether sibling stage `program` runs as its components on `args` wherever it runs in one pass:
/// over at most [`COMPONENTS_POINTS`] points.
pub(crate) fn few_points(program: &Program, args: &[&ArrayArg<'_>]) -> bool {
    matches!(program.work, Work::Siblings(_))
        && kiln_ir::shape::broadcast_shapes(args.iter().map(|a| a.shape()))
            .ok()
            .and_then(|shape| kiln_ir::shape::checked_size(&shape).ok())
            .is_some_and(|n| n <= COMPONENTS_POINTS)
}

/// `kiln explain`'s note on a sibling stage in one pass over few points ([`few_points`]).
fn components_note() -> String {
    format!(
        "siblings: over at most {COMPONENTS_POINTS} points a call of one result runs them as their \
         reductions, each by its own handle (the bits of the pass shown)"
    )
}

/// A tensor of `program`'s kernel `kernel` finished: [`finish_siblings`] for sibling reductions,
/// else [`finish`].
pub(crate) fn finish_stage(t: Tensor, kernel: &KernelIR, program: &Program) -> Tensor {
    match &program.work {
        Work::Siblings(parts) => finish_siblings(t, kernel, parts),
        _ => finish(t, kernel, program.reduction()),
    }
}

/// The count of values a mean of `kernel` (a reduction) reduces into each output: the product of
/// its reduced axes' extents (0 over an empty axis: the mean is then NaN, as NumPy's).
pub(crate) fn mean_count(kernel: &KernelIR) -> usize {
    kernel
        .kind
        .reduced_axes()
        .iter()
        .map(|&a| kernel.shape[a])
        .product()
}

/// A sibling stage's tensor finished: every component with the reduced axes kept as 1, a mean's
/// divided by the count of values reduced into each output, as [`finish`] divides a mean alone.
fn finish_siblings(mut t: Tensor, kernel: &KernelIR, parts: &[Sibling]) -> Tensor {
    t.shape = result_shape(kernel, None);
    let count = mean_count(kernel);
    let n_out = t.shape[1..].iter().product::<usize>();
    for (c, part) in parts.iter().enumerate() {
        if !part.reduction().mean || n_out == 0 {
            continue;
        }
        let range = c * n_out..(c + 1) * n_out;
        match &mut t.values {
            Values::F64(v) => v[range].iter_mut().for_each(|x| *x /= count as f64),
            Values::F32(v) => v[range].iter_mut().for_each(|x| *x /= count as f32),
            _ => unreachable!("sibling components are float reductions"),
        }
    }
    t
}

/// The result `t` of typed sibling reductions run in one pass (every component's int64, component
/// major: kiln-jit's), as each component's reduction alone gives it: of its type
/// ([`kiln_ir::typed::TypedKernel::component_type`]), shaped as its reduction shapes it.
fn typed_components(
    t: Tensor,
    typed: &kiln_ir::typed::TypedKernel,
    kernel: &KernelIR,
    parts: &[Sibling],
) -> Result<Temp> {
    let Values::I64(words) = t.values else {
        return Err(Error::Output(format!(
            "sibling reductions of bool or integer values gave {} words",
            t.values.output_type()
        )));
    };
    let axes = kernel.kind.reduced_axes();
    let kept: Vec<usize> = t.shape[1..].to_vec();
    let n_out: usize = kept.iter().product();
    let each = parts
        .iter()
        .enumerate()
        .map(|(c, part)| {
            let shape: Vec<usize> = if part.reduction().keepdims {
                kept.clone()
            } else {
                kept.iter()
                    .enumerate()
                    .filter(|(a, _)| !axes.contains(a))
                    .map(|(_, &d)| d)
                    .collect()
            };
            fn array<X>(shape: &[usize], v: Vec<X>) -> Result<ArrayD<X>> {
                ArrayD::from_shape_vec(IxDyn(shape), v).map_err(|e| Error::Output(e.to_string()))
            }
            let v = words[c * n_out..(c + 1) * n_out].iter().copied();
            let out = match typed.component_type(c) {
                Some(ElemType::Bool) => Output::Bool(array(&shape, v.map(|x| x != 0).collect())?),
                Some(ElemType::I32) => Output::I32(array(&shape, v.map(|x| x as i32).collect())?),
                _ => Output::I64(array(&shape, v.collect())?),
            };
            Ok(Temp::Typed(out))
        })
        .collect::<Result<Vec<Temp>>>()?;
    Ok(Temp::Parts(each))
}

/// The plan that runs on `backend`: sibling reductions merged into compound stages where it runs
/// them ([`Backend::compound_reductions`]), else the plan as lowered; and what the rewrite did.
fn plan_for(lowered: &Arc<Pipeline>, backend: &dyn Backend) -> (Arc<Pipeline>, Vec<String>) {
    if !backend.compound_reductions() {
        return (lowered.clone(), Vec::new());
    }
    let (p, mut notes) = crate::siblings::merge_siblings(lowered);
    let (p, more) = crate::sibling_pass::merge_reductions(&p);
    notes.extend(more);
    (Arc::new(p), notes)
}
