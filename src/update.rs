//! In-place updates: [`FusedRunner::run_update`] writes the result into one of the expression's own
//! inputs (`p = p + v*dt` into `p`), with no second buffer and no swap.
//!
//! An update is safe where the result's element `i` depends on the updated input only through its
//! element `i`: the last kernel is a map that reads the input at every point of the result (not
//! broadcast), and no earlier kernel (a reduction or scan whose result the map reads) reads it at
//! all. Anything else (`p - mean(p)`, `cumsum(p)`, a `p` broadcast along an axis) is refused with an
//! error that says why; [`FusedRunner::run_into`] into another array does those.
//!
//! On the JIT the map reads the input through the pointer it writes (kiln-jit's
//! `InputRef::Destination`, checked there again). Other backends, and inputs that would need a
//! conversion or a copy, run on a copy of the input's previous values: the same result.

use crate::array::{ArrayArg, Element, Float};
use crate::compiled::Compiled;
use crate::error::{Error, Result};
use crate::executor::{bind, same};
use crate::program::Source;
use crate::runner::FusedRunner;
use kiln_ir::{InputPlan, KernelKind, OutputType, Start};
use kiln_jit::InputRef;
use ndarray::{ArrayViewMut, ArrayViewMutD, Dimension};

impl FusedRunner {
    /// Evaluates the expression and writes the result into `target`, which is also the value of the
    /// input named `name` (not given in `inputs`): `p = f(p, ...)` in place. `target` must be of the
    /// result's shape and type; a float target C-contiguous (as [`FusedRunner::run_into`]). An
    /// integer or bool target (`i = (i*3 + j) % 7` over int32) takes the result computed from a copy
    /// of its previous values.
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
    /// `name` is not an input of the expression, or is also given in `inputs`; the update is not safe
    /// in place (the error says why: a reduction or scan reads the input, or the map reads it
    /// broadcast); a result of another type than `A`; and the errors of [`FusedRunner::run_into`].
    pub fn run_update<A: Element, D: Dimension>(
        &self,
        name: &str,
        inputs: &[(&str, ArrayArg<'_>)],
        mut target: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        if let Some(done) = A::run_update_float(self, name, inputs, target.view_mut().into_dyn()) {
            return done;
        }
        // integers and bools: a run over a copy of the previous values, then written back
        self.compiled.update_checks(name, inputs)?;
        let previous = target.to_owned().into_dyn();
        let mut all: Vec<(&str, ArrayArg<'_>)> = inputs.iter().map(|(n, a)| (*n, a.reborrow())).collect();
        all.push((name, A::arg(previous.view())));
        let result = A::take(self.run(&all)?)?;
        if result.shape() != target.shape() {
            return Err(Error::Unsupported(format!(
                "cannot update '{name}' in place: it has shape {:?} but the result {:?} (a \
                 broadcast input would be read at other elements than the one written)",
                target.shape(),
                result.shape()
            )));
        }
        target.view_mut().into_dyn().assign(&result);
        Ok(())
    }

    /// [`FusedRunner::run_update`] of a float target: the JIT reads the input through the pointer
    /// it writes where it can, else a run into the target from a copy of its previous values.
    pub(crate) fn run_update_float<A: Float>(
        &self,
        name: &str,
        inputs: &[(&str, ArrayArg<'_>)],
        mut target: ArrayViewMutD<'_, A>,
    ) -> Result<()> {
        let dtype = kiln_ir::ElemType::of_float(A::DTYPE);
        if let Some(h) = self.bindings.find_update(name, inputs, dtype, target.shape())
            && let Some(slice) = target.as_slice_mut()
            && let Some(done) = h.update_named(inputs, slice)
        {
            return done;
        }
        self.compiled
            .run_update_general(name, inputs, target.view_mut())?;
        // bind the signature for the next call (where the update is one compiled map)
        let mut all: Vec<(&str, ArrayArg<'_>)> = inputs.iter().map(|(n, a)| (*n, a.reborrow())).collect();
        all.push((name, A::arg(target.view())));
        if let Ok(h) = self.compiled.prepared_update(&all, &[name]) {
            self.bindings.keep_update(h);
        }
        Ok(())
    }
}

impl Compiled {
    /// The checks of an in-place update of input `name` that need no run: it is an input, not given
    /// again in `inputs`, read by the last kernel only, which is a map. Its position among the
    /// expression's inputs.
    pub(crate) fn update_checks(&self, name: &str, inputs: &[(&str, ArrayArg<'_>)]) -> Result<usize> {
        self.single("run_update")?;
        let names = &self.pipeline().names;
        let Some(t) = names.iter().position(|n| n == name) else {
            return Err(Error::Unsupported(format!(
                "cannot update '{name}' in place: it is not an input of the expression (inputs: {})",
                names.join(", ")
            )));
        };
        if inputs.iter().any(|(n, _)| *n == name) {
            return Err(Error::DuplicateInput { name: name.into() });
        }
        let stages = &self.pipeline().stages;
        let last = stages.len() - 1;
        if let Some(k) = stages[..last]
            .iter()
            .position(|s| s.sources.contains(&Source::Input(t)))
        {
            return Err(Error::Unsupported(format!(
                "cannot update '{name}' in place: kernel {k} (a {}) reads all of it before the \
                 update writes it; run_into another array",
                work_name(&stages[k].program.work)
            )));
        }
        if !matches!(self.pipeline().last().program.work, crate::program::Work::Map) {
            return Err(Error::Unsupported(format!(
                "cannot update '{name}' in place: the result is a {}, not an elementwise map of it; \
                 run_into another array",
                work_name(&self.pipeline().last().program.work)
            )));
        }
        Ok(t)
    }

    /// [`FusedRunner::run_update_float`] through the stage loop.
    pub(crate) fn run_update_general<A: Float>(
        &self,
        name: &str,
        inputs: &[(&str, ArrayArg<'_>)],
        mut target: ArrayViewMutD<'_, A>,
    ) -> Result<()> {
        let t = self.update_checks(name, inputs)?;
        let names = &self.pipeline().names;
        // the previous values: the caller's array, read through a view while the kernels are readied
        let (spec, temps, direct) = {
            let mut all: Vec<(&str, ArrayArg<'_>)> = inputs.iter().map(|(n, a)| (*n, a.reborrow())).collect();
            all.push((name, A::arg(target.view())));
            let user = bind(names, &all)?;
            let (spec, temps) = self.ready_last(&user)?;
            let kernel = &spec.kernel;
            let pos = self
                .pipeline()
                .last()
                .sources
                .iter()
                .position(|s| *s == Source::Input(t));
            let pos = pos.expect("the last kernel reads the input (checked above)");
            if !same(&kernel.inputs[pos].shape, &kernel.shape) || !same(target.shape(), &kernel.shape) {
                return Err(Error::Unsupported(format!(
                    "cannot update '{name}' in place: it has shape {:?} but the result {:?} (a \
                     broadcast input would be read at other elements than the one written)",
                    target.shape(),
                    kernel.output_shape()
                )));
            }
            let args = self.last_args(&user, &temps)?;
            let direct = spec.exe.direct()
                && kernel.dtype == A::DTYPE
                && kernel.output_type() == OutputType::Float(A::DTYPE)
                && matches!(kernel.kind, KernelKind::Map)
                && args
                    .iter()
                    .all(|a| a.elem() == kiln_ir::ElemType::of_float(kernel.dtype))
                && spec.plan.inputs.iter().all(|p| *p != InputPlan::Materialise)
                // read at every point as it is written (a single element is a splat: copied)
                && spec.plan.inputs[pos] == InputPlan::Contiguous
                && target.as_slice().is_some();
            (spec, temps, direct.then_some(pos))
        };
        let Some(pos) = direct else {
            // the oracle's way: the previous values copied, then a run into the target
            let previous = target.to_owned().into_dyn();
            let mut all: Vec<(&str, ArrayArg<'_>)> = inputs.iter().map(|(n, a)| (*n, a.reborrow())).collect();
            all.push((name, A::arg(previous.view())));
            let user = bind(names, &all)?;
            return self.run_into_bound(&user, target, false);
        };
        let stage = self.pipeline().last();
        let refs: Vec<InputRef<'_, A>> = stage
            .sources
            .iter()
            .enumerate()
            .map(|(n, s)| match *s {
                _ if n == pos => Ok(InputRef::Destination),
                Source::Input(i) => {
                    let (_, a) = inputs.iter().find(|(m, _)| *m == names[i]).expect("bound above");
                    Ok(InputRef::View(A::view_of(a).expect("dtypes checked")))
                }
                other => A::view_of(&crate::compiled::temp_arg(self.pipeline(), other, &temps)?)
                    .map(InputRef::View)
                    .ok_or_else(|| Error::Output("an intermediate of another dtype".into())),
            })
            .collect::<Result<_>>()?;
        let out = target.as_slice_mut().expect("checked C-contiguous");
        let cfg = self.parallel().jit_config(out.len(), Start::Identity);
        spec.exe
            .call_into(A::direct_inputs(&refs), A::out_slice(out), &cfg)
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
