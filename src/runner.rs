//! [`FusedRunner`]: an expression compiled once, run on many inputs, and the one object a caller
//! holds: the compiled plan and caches (what a [`crate::Prepared`] handle holds too), and the handles
//! bound to its last call signatures, which make a repeated ordinary call the fast one.

use crate::array::{ArrayArg, Element, Float, Output};
use crate::backend::Backend;
use crate::bindings::{Bindings, BoundHandle};
use crate::compiled::Compiled;
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::interpreter::Interpreter;
use crate::parallel::Parallel;
use crate::prepared::Prepared;
use crate::profile::{Profile, Settings};
use crate::program::{Pipeline, Program};
use kiln_ir::{BroadcastPlan, KernelIR, PlanOptions};
use ndarray::{ArrayViewMut, Dimension};
use std::sync::Arc;

/// A fused expression, ready to run on named inputs.
///
/// The expression becomes as few kernels as its reductions allow (see [`Pipeline`]): one for
/// `a*x + y` or `sum(x*x, axis=1)`, two for `x - max(x, axis=1, keepdims=1)`. Runs use the runner's
/// threads ([`FusedRunner::with_threads`], default: every core); the result's bits do not depend on
/// the thread count.
///
/// ```
/// use kiln::{Expr, FusedRunner};
/// use ndarray::array;
/// let x = Expr::input("x");
/// let y = Expr::input("y");
/// let runner = FusedRunner::compile(&(2.0 * &x + y))?;
/// let (a, b) = (array![1.0, 2.0, 3.0], array![10.0, 20.0, 30.0]);
/// let out = runner.run(&[("x", (&a).into()), ("y", (&b).into())])?;
/// assert_eq!(out.into_f64().into_raw_vec_and_offset().0, vec![12.0, 24.0, 36.0]);
/// # Ok::<(), kiln::Error>(())
/// ```
#[derive(Debug, Clone)]
pub struct FusedRunner {
    /// The plan, backend, settings and caches: what a handle holds too.
    pub(crate) compiled: Compiled,
    /// The handles of the last call signatures, which `run`, `run_into` and `run_update` go straight
    /// to (see [`crate::bindings`]); shared by clones, a fresh set for every change of settings.
    pub(crate) bindings: Arc<Bindings>,
}

impl FusedRunner {
    /// A runner of `compiled`, with no signature bound yet.
    pub(crate) fn new(compiled: Compiled) -> FusedRunner {
        FusedRunner {
            compiled,
            bindings: Arc::default(),
        }
    }

    /// Lowers `expr` into its kernels.
    pub fn compile(expr: &Expr) -> Result<FusedRunner> {
        Compiled::compile(expr).map(FusedRunner::new)
    }

    /// Parses a text expression (see [`crate::text`]) and compiles it; several separated by `;`
    /// (`"call; put"`) compile as [`FusedRunner::compile_many`].
    pub fn compile_text(src: &str) -> Result<FusedRunner> {
        Compiled::compile_text(src).map(FusedRunner::new)
    }

    /// Compiles several expressions into one runner of several results (see the module doc): stages
    /// they share are computed once, and their maps in one pass.
    ///
    /// ```
    /// use kiln::{Expr, FusedRunner};
    /// use ndarray::array;
    /// let x = Expr::input("x");
    /// let runner = FusedRunner::compile_many(&[&x * 2.0, (&x * 2.0).sum(), x.exp()])?;
    /// let a = array![1.0, 2.0];
    /// let outs = runner.run_many(&[("x", (&a).into())])?;
    /// assert_eq!(outs[1].clone().into_f64().into_raw_vec_and_offset().0, vec![6.0]);
    /// # Ok::<(), kiln::Error>(())
    /// ```
    ///
    /// # Errors
    /// No expression, or the errors of [`FusedRunner::compile`] for any of them.
    pub fn compile_many(exprs: &[Expr]) -> Result<FusedRunner> {
        Compiled::compile_many(exprs).map(FusedRunner::new)
    }

    /// Runs on `backend` instead of the default one.
    pub fn with_backend(self, backend: Arc<dyn Backend>) -> FusedRunner {
        FusedRunner::new(self.compiled.with_backend(backend))
    }

    /// Changes how broadcasts are planned.
    pub fn with_plan_options(self, options: PlanOptions) -> FusedRunner {
        FusedRunner::new(self.compiled.with_plan_options(options))
    }

    /// Runs with `settings` (a profile and its rewrites; see [`crate::profile`]).
    pub fn with_settings(self, settings: Settings) -> FusedRunner {
        FusedRunner::new(self.compiled.with_settings(settings))
    }

    /// Runs under `profile`, with its choice of `prefix_scan`.
    pub fn with_profile(self, profile: Profile) -> FusedRunner {
        FusedRunner::new(self.compiled.with_profile(profile))
    }

    /// Turns the prefix-scan rewrite on or off (an error under the reproducible profile).
    pub fn with_prefix_scan(self, on: bool) -> Result<FusedRunner> {
        self.compiled.with_prefix_scan(on).map(FusedRunner::new)
    }

    /// Runs on `threads` threads (1: the calling thread only). Compiled kernels are kept.
    pub fn with_threads(self, threads: usize) -> FusedRunner {
        FusedRunner::new(self.compiled.with_threads(threads))
    }

    /// Runs over fewer than `points` points stay on the calling thread (0: every run is spread).
    pub fn with_threshold(self, points: usize) -> FusedRunner {
        FusedRunner::new(self.compiled.with_threshold(points))
    }

    /// Every thread and reduction setting at once.
    pub fn with_parallel(self, parallel: Parallel) -> FusedRunner {
        FusedRunner::new(self.compiled.with_parallel(parallel))
    }

    /// The profile and rewrites this runner uses.
    pub fn settings(&self) -> Settings {
        self.compiled.settings()
    }

    /// The thread setting.
    pub fn parallel(&self) -> &Parallel {
        self.compiled.parallel()
    }

    /// The names of the inputs, in order of first appearance.
    pub fn input_names(&self) -> &[String] {
        self.compiled.input_names()
    }

    /// The program of the last kernel (the only one for most expressions).
    pub fn program(&self) -> &Program {
        self.compiled.program()
    }

    /// The kernels, in the order they run.
    pub fn pipeline(&self) -> &Pipeline {
        self.compiled.pipeline()
    }

    /// What the plan's rewrites did (sibling reductions merged), one line each, for `kiln explain`.
    pub fn plan_notes(&self) -> &[String] {
        self.compiled.plan_notes()
    }

    /// The backend this runner uses.
    pub fn backend(&self) -> &dyn Backend {
        self.compiled.backend()
    }

    /// How many results a run gives (1 unless compiled from several expressions).
    pub fn n_results(&self) -> usize {
        self.compiled.n_results()
    }

    /// The kernel and broadcast plan of the last kernel for these inputs (for `kiln explain`).
    pub fn explain(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<(KernelIR, BroadcastPlan)> {
        self.compiled.explain(inputs)
    }

    /// The kernel and broadcast plan of every kernel, in order, for these inputs. Nothing runs: the
    /// results that flow between kernels are stood in for by zeros of their dtype and shape.
    pub fn explain_all(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Vec<(KernelIR, BroadcastPlan)>> {
        self.compiled.explain_all(inputs)
    }

    /// [`FusedRunner::explain_all`], with what each rewrite did to each kernel (fired, declined and
    /// why, or off).
    pub fn explain_rewrites(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
    ) -> Result<Vec<(KernelIR, BroadcastPlan, Vec<String>)>> {
        self.compiled.explain_rewrites(inputs)
    }

    /// Every kernel, in order, for these inputs: the kernel, its plan, what each rewrite did and how
    /// it runs ([`crate::Engine`]: a float kernel, a typed one compiled, or one interpreted). Nothing
    /// runs but what later kernels read.
    pub fn explain_kernels(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Vec<crate::Explained>> {
        self.compiled.explain_kernels(inputs)
    }

    /// What [`FusedRunner::explain_kernels`] gives, as the text `kiln explain` and Python's
    /// `Kernel.explain` print, with the last kernel's compiled code where `opts` asks for it.
    pub fn explain_text(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        opts: crate::ExplainOptions,
    ) -> Result<String> {
        self.compiled.explain_text(inputs, opts)
    }

    /// Specialises and readies the kernels for inputs of this form (the JIT compiles them here)
    /// without running them; a later run on inputs of the same dtypes, shapes and layouts starts at
    /// once. (A multi-kernel expression is run once, so that every kernel sees its inputs' form.)
    pub fn prepare(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
        self.compiled.prepare(inputs)
    }

    /// The axis order in which the expression runs on these inputs (in the order of
    /// [`FusedRunner::input_names`]), where it is not their own: where every input is C-contiguous
    /// with its axes permuted alike (Fortran or transposed arrays) and the expression does not
    /// depend on C order itself (a flat index, a contraction: see [`crate::memory_order`]). A run then reads
    /// each input in place in that order, its axis reductions and scans along the axes mapped
    /// alike, and gives its result back in the inputs' axes (a Fortran result for Fortran inputs,
    /// as NumPy's `order='K'`).
    pub fn memory_order(&self, inputs: &[&ArrayArg<'_>]) -> Option<Vec<usize>> {
        self.compiled.memory_order(inputs)
    }

    /// Runs the kernel: [`FusedRunner::call`] with [`crate::Fresh`]. Inputs are bound by name;
    /// names the expression does not use are ignored.
    ///
    /// # Errors
    /// A missing or repeated name, shapes that do not broadcast, an axis out of range, a min, max,
    /// argmin or argmax over an empty extent (without `initial`), a size overflow, or a backend failure.
    #[inline]
    pub fn run(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Output> {
        self.fresh(inputs)
    }

    /// Runs the expression into `out`: [`FusedRunner::call`] with `out`, of the result's shape and
    /// element type (any: a float, integer, bool or complex result). An elementwise or scan last
    /// kernel writes straight into a C-contiguous `out` (no allocation for the result), as does a
    /// whole-array sum, product, min or max on the calling thread (a zero-dimensional `out`);
    /// another reduction's result, or an `out` in another layout, takes the result copied in. So
    /// does the first call of a signature of several kernels or of Fortran-order inputs: the run
    /// that binds it gives the result, assigned.
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if `out` does not fit the result (nothing is written).
    #[inline]
    pub fn run_into<A: Element, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        self.deliver_out(inputs, out)
    }

    /// The one fresh result of a call ([`crate::Fresh`]): a repeated signature goes straight to its
    /// bound handle; a new one runs and keeps the handle the run made.
    pub(crate) fn fresh(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Output> {
        if let Some(handle) = self.bindings.find(inputs) {
            return handle.run_checked(inputs);
        }
        self.bind_by_run(inputs).map(|(_, out)| out)
    }

    /// A new signature bound by the run of its call ([`Compiled::run_prepared`]): the handle kept,
    /// and the run's result (the call's).
    #[inline(never)]
    fn bind_by_run(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<(BoundHandle<'_>, Output)> {
        self.compiled.single("run")?;
        let (handle, out) = self.compiled.run_prepared(inputs)?;
        Ok((self.bindings.keep(handle), out))
    }

    /// The handle a call of `inputs` (by name) goes to: the one kept for its signature (names in
    /// order, dtypes, shapes, layouts), else one bound now by the run of the call, whose one result
    /// comes with it (and is then the call's). For a caller that calls the handle itself (the
    /// Python package, which runs it into arrays NumPy allocates); the ordinary call does this.
    ///
    /// # Errors
    /// As [`FusedRunner::run`].
    #[inline]
    pub fn bound(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<(BoundHandle<'_>, Option<Output>)> {
        match self.kept(inputs) {
            Some(handle) => Ok((handle, None)),
            None => self.bind_by_run(inputs).map(|(handle, out)| (handle, Some(out))),
        }
    }

    /// The handle kept for a call of `inputs` (by name), if one is: [`FusedRunner::bound`] without
    /// the binding (nothing runs).
    #[inline]
    pub fn kept(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Option<BoundHandle<'_>> {
        if self.compiled.pipeline().is_many() {
            return None;
        }
        self.bindings.find(inputs)
    }

    /// The handle kept for a call of C-contiguous inputs of these element types and shapes, given in
    /// the order of [`FusedRunner::input_names`] (a handle bound by [`FusedRunner::bound`] with its
    /// inputs in that order), if one is: a caller that holds the inputs' elements as slices finds it
    /// without making an array of any (the Python package's cheapest call,
    /// [`Prepared::run_stored`]).
    #[inline]
    pub fn bound_c_order(&self, forms: &[(kiln_ir::ElemType, &[usize])]) -> Option<BoundHandle<'_>> {
        self.bindings.find_c_order(forms)
    }

    /// Every result of a call, fresh ([`crate::FreshAll`]): a repeated signature goes straight to
    /// its bound handle (no names bound); a new one runs and keeps the handle the run made.
    pub(crate) fn fresh_all(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Vec<Output>> {
        if let Some(handle) = self.bindings.find(inputs) {
            return handle.run_all_checked(inputs);
        }
        let (handle, outs) = self.compiled.run_all_prepared(inputs)?;
        self.bindings.keep(handle);
        Ok(outs)
    }

    /// The one result of a call into `out`, an array of the result's shape and element type in any
    /// layout: a repeated signature goes straight to its bound handle; a new one is bound first
    /// (without a run where one kernel's specialisation tells the result's form; else by the run
    /// that makes the handle, whose result is then assigned).
    pub(crate) fn deliver_out<A: Element, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        if let Some(handle) = self.bindings.find(inputs) {
            return handle.run_view_checked(inputs, out);
        }
        self.deliver_new(inputs, out, false)
    }

    /// [`FusedRunner::deliver_out`] of a result of any type, converted into `out`'s as
    /// [`Element::convert_output`] does (bools as 1 / 0 in a float array: a `fuse_into` closure's
    /// comparison); one of `out`'s own type is written as `deliver_out` writes it. Which of the two
    /// is decided before anything runs: nothing runs twice.
    pub(crate) fn deliver_converted<A: Element, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        match self.bindings.find(inputs) {
            Some(handle) => converting(&handle, inputs, out, true),
            None => self.deliver_new(inputs, out, true),
        }
    }

    /// [`FusedRunner::deliver_out`] (or, `convert`, `deliver_converted`) of a new signature: bound
    /// without a run where one kernel's specialisation gives the result's form, else by the call's
    /// run, whose result is assigned.
    #[inline(never)]
    fn deliver_new<A: Element, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        out: ArrayViewMut<'_, A, D>,
        convert: bool,
    ) -> Result<()> {
        self.compiled.single("run_into")?;
        if let Some(handle) = self.compiled.bind_without_run(inputs)? {
            let done = converting(&handle, inputs, out, convert);
            self.bindings.keep(handle);
            return done;
        }
        let (handle, result) = self.compiled.run_prepared(inputs)?;
        self.bindings.keep(handle);
        assign(out, result, convert)
    }

    /// Several results of a call into `outs`, one per result, each of any element type: through
    /// the handle bound to the signature, which writes maps of one kernel in one compiled pass and
    /// copies anything else in; a new signature is bound by a run, whose results are assigned.
    pub(crate) fn deliver_several<O: crate::prepared::OutArrays + ?Sized>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        outs: &mut O,
    ) -> Result<()> {
        if let Some(handle) = self.bindings.find(inputs) {
            return handle.run_outs_checked(inputs, outs);
        }
        // a new signature: the run that binds it gives the results, assigned once every output
        // is checked
        let (handle, results) = self.compiled.run_all_prepared(inputs)?;
        let checked = handle.check_outs(outs);
        self.bindings.keep(handle);
        checked?;
        for (o, r) in results.into_iter().enumerate() {
            outs.assign(o, r)?;
        }
        Ok(())
    }

    /// Folds the result into `out`: `out = out ⊕ reduce(...)` for an expression whose last kernel is
    /// a sum, product, min or max (Julia's `sum!`, NumPy's `np.add.reduce(x, out=out,
    /// initial=...)` with the previous values as the start): each output's fold starts from its
    /// previous value, in the accumulator's type (f64 for sums and products), and is rounded once.
    /// [`FusedRunner::call`] with [`crate::Accumulate`].
    ///
    /// # Errors
    /// As [`FusedRunner::run_into`], and if the last kernel is not such a reduction, or has an
    /// `initial` of its own or is a mean.
    pub fn run_accumulate<A: Float, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        self.call(inputs, crate::Accumulate(out))
    }

    /// [`crate::Accumulate`]'s fold (see [`FusedRunner::run_accumulate`]): a signature with a kept
    /// handle (bound by any way of calling) goes to it, no name bound; a new one is bound without
    /// a run where the plan is one kernel whose inputs are read in their given order, else (a plan
    /// of several stages, inputs read in memory order: a fold cannot take a run's result to bind
    /// by) folds by name.
    pub(crate) fn accumulate<A: Float, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        if let Some(handle) = self.bindings.find(inputs) {
            return handle.accumulate_checked(inputs, out);
        }
        self.accumulate_new(inputs, out)
    }

    /// [`FusedRunner::accumulate`] of a new signature: its names bound once, then a handle bound
    /// and kept where it can be without a run, else the fold by the runner's run.
    #[inline(never)]
    fn accumulate_new<A: Float, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        let c = &self.compiled;
        c.check_accumulate()?;
        let user = crate::executor::bind(c.input_names(), inputs)?;
        let memory = c.in_memory_order(&user);
        if memory.is_none() && c.pipeline().stages.len() == 1 {
            let handle = c.bind_user(inputs, &user)?;
            let done = handle.accumulate_checked(inputs, out);
            self.bindings.keep(handle);
            return done;
        }
        c.accumulate_in(&user, memory, out)
    }

    /// Runs and returns every result, in the order of the expressions (a runner of one expression
    /// gives one): [`FusedRunner::call`] with [`crate::FreshAll`]. Inputs are bound by name.
    ///
    /// # Errors
    /// As [`FusedRunner::run`].
    pub fn run_many(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Vec<Output>> {
        self.call(inputs, crate::FreshAll)
    }

    /// Runs into `outs`, one array per result, each of its result's shape and type `A` (any
    /// element type; results of several types: [`FusedRunner::call`] with a tuple of views):
    /// [`FusedRunner::call`] with `outs`. Maps of one iteration space over C-contiguous inputs of
    /// one float type are one compiled pass into C-contiguous `outs`, no result allocated or
    /// copied; a new signature is bound by a run first.
    ///
    /// # Errors
    /// As [`FusedRunner::run_many`], a count of outputs other than the results', and an output that
    /// does not fit its result (its position says which; nothing is written).
    pub fn run_into_many<A: Element, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        outs: &mut [ArrayViewMut<'_, A, D>],
    ) -> Result<()> {
        self.deliver_several(inputs, outs)
    }

    /// Binds this runner to the names, dtypes and shapes (and layouts) of `inputs`, and compiles its
    /// kernels for them: the handle's calls pass inputs of the same forms in the same order.
    ///
    /// # Errors
    /// As [`FusedRunner::run`] (the expression runs once, so that every kernel sees its inputs).
    pub fn prepared(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Prepared> {
        self.compiled.prepared(inputs)
    }

    /// [`FusedRunner::run`] that also returns a handle bound to the forms of `inputs`: preparing runs
    /// the expression once, and this keeps that run's result instead of running again (a caller that
    /// prepares on the first call of a form, such as the Python package, pays for one run).
    ///
    /// # Errors
    /// As [`FusedRunner::run`].
    pub fn run_prepared(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<(Prepared, Output)> {
        self.compiled.run_prepared(inputs)
    }

    /// Binds a handle (as [`FusedRunner::prepared`]) whose results overwrite inputs: result `o` is
    /// written into the input named `updated[o]`, in one pass ([`Prepared::update`]). `inputs` binds
    /// every input, the updated ones included.
    ///
    /// ```
    /// use kiln::FusedRunner;
    /// use ndarray::{arr0, Array1};
    /// let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt")?;
    /// let (mut p, mut v) = (Array1::<f64>::zeros(64), Array1::<f64>::ones(64));
    /// let (dt, g) = (arr0(0.01), arr0(-9.81));
    /// let h = step.prepared_update(
    ///     &[("p", (&p).into()), ("v", (&v).into()), ("dt", (&dt).into()), ("g", (&g).into())],
    ///     &["p", "v"],
    /// )?;
    /// for _ in 0..10 {
    ///     let (p, v) = (p.as_slice_mut().unwrap(), v.as_slice_mut().unwrap());
    ///     h.update(&mut [p, v], &[dt.as_slice().unwrap(), g.as_slice().unwrap()])?;
    /// }
    /// assert!(p[0] > 0.0 && v[0] < 1.0);
    /// # Ok::<(), kiln::Error>(())
    /// ```
    ///
    /// # Errors
    /// The errors of [`FusedRunner::prepared`]; an update count other than the results', a name
    /// that is not bound or is updated twice; and an update that is not safe in place or not on the
    /// direct path (the error says why: a result that is not a map of the one kernel, an input read
    /// broadcast or of another shape than the iteration's, another dtype, a strided view).
    pub fn prepared_update(&self, inputs: &[(&str, ArrayArg<'_>)], updated: &[&str]) -> Result<Prepared> {
        self.compiled.prepared_update(inputs, updated)
    }
}

/// The interpreter backend, shared.
pub fn interpreter() -> Arc<dyn Backend> {
    Arc::new(Interpreter)
}

/// Writes `result` into `out`, checked as a bound handle checks an output (its shape, then its
/// type: converted into `out`'s where `convert` says so, as [`Element::convert_output`]).
fn assign<A: Element, D: Dimension>(
    mut out: ArrayViewMut<'_, A, D>,
    result: Output,
    convert: bool,
) -> Result<()> {
    if out.shape() != result.shape() {
        return Err(Error::output_shape(out.shape(), result.shape()));
    }
    let result = if convert {
        A::convert_output(result)?
    } else if A::ELEM != result.elem() {
        return Err(Error::Output(format!(
            "an output of {} given for a result of {}",
            A::ELEM.short_name(),
            result.elem().short_name()
        )));
    } else {
        A::take(result)?
    };
    let result = result
        .into_dimensionality::<D>()
        .map_err(|e| Error::Output(e.to_string()))?;
    out.assign(&result);
    Ok(())
}

/// `handle`'s one result into `out`: straight in, or (`convert`, a result of another type than
/// `out`'s) computed fresh and converted into `out`'s type, its shape checked before it runs.
fn converting<A: Element, D: Dimension>(
    handle: &Prepared,
    inputs: &[(&str, ArrayArg<'_>)],
    out: ArrayViewMut<'_, A, D>,
    convert: bool,
) -> Result<()> {
    if convert && handle.output_type() != A::ELEM {
        if out.shape() != handle.output_shape() {
            return Err(Error::output_shape(out.shape(), handle.output_shape()));
        }
        return assign(out, handle.run_checked(inputs)?, true);
    }
    handle.run_view_checked(inputs, out)
}
