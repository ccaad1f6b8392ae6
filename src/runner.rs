//! [`FusedRunner`]: an expression compiled once, run on many inputs.

use crate::array::{ArrayArg, Float, Output};
use crate::backend::{Backend, Interpreter};
use crate::error::{Error, Result};
use crate::executor::{SpecCache, bind, buffers, specialise};
use crate::expr::Expr;
use crate::program::Program;
use kiln_ir::{BroadcastPlan, KernelIR, OutputType, PlanOptions};
use ndarray::{ArrayViewMut, Dimension};
use std::sync::Arc;

/// A fused expression, ready to run on named inputs.
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
    program: Program,
    backend: Arc<dyn Backend>,
    plan_options: PlanOptions,
    specialised: Arc<SpecCache>,
}

impl FusedRunner {
    /// Lowers `expr` into one kernel. Errors if the expression cannot be one kernel (for example, a
    /// reduction inside an elementwise expression).
    pub fn compile(expr: &Expr) -> Result<FusedRunner> {
        Ok(FusedRunner {
            program: Program::lower(expr)?,
            backend: crate::default_backend(),
            plan_options: PlanOptions::default(),
            specialised: Arc::default(),
        })
    }

    /// Parses a text expression (see [`crate::text`]) and compiles it.
    pub fn compile_text(src: &str) -> Result<FusedRunner> {
        FusedRunner::compile(&crate::text::parse(src)?)
    }

    /// Runs on `backend` instead of the default one.
    pub fn with_backend(mut self, backend: Arc<dyn Backend>) -> FusedRunner {
        self.backend = backend;
        self.specialised = Arc::default();
        self
    }

    /// Changes how broadcasts are planned.
    pub fn with_plan_options(mut self, options: PlanOptions) -> FusedRunner {
        self.plan_options = options;
        self.specialised = Arc::default();
        self
    }

    /// The names of the inputs, in order of first appearance.
    pub fn input_names(&self) -> &[String] {
        &self.program.names
    }

    /// The lowered program.
    pub fn program(&self) -> &Program {
        &self.program
    }

    /// The backend this runner uses.
    pub fn backend(&self) -> &dyn Backend {
        &*self.backend
    }

    /// The kernel and broadcast plan these inputs would run with (for `kiln explain`).
    pub fn explain(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<(KernelIR, BroadcastPlan)> {
        let args = bind(&self.program, inputs)?;
        specialise(&self.program, &args, self.plan_options)
    }

    /// Specialises and readies the kernel for inputs of this form (the JIT compiles it here) without
    /// running it; a later run on inputs of the same dtypes, shapes and layouts starts at once.
    pub fn prepare(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
        let args = bind(&self.program, inputs)?;
        self.specialised
            .get(&self.program, &*self.backend, &args, self.plan_options)
            .map(|_| ())
    }

    /// Runs the kernel. Inputs are bound by name; names the expression does not use are ignored.
    ///
    /// # Errors
    /// A missing or repeated name, shapes that do not broadcast, an axis out of range, a min, max,
    /// argmin or argmax over an empty extent, a size overflow, or a backend failure.
    pub fn run(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Output> {
        let args = bind(&self.program, inputs)?;
        let spec = self
            .specialised
            .get(&self.program, &*self.backend, &args, self.plan_options)?;
        let buffers = buffers(&spec, &args)?;
        Output::try_from(spec.exe.run(&spec.kernel, &spec.plan, &buffers)?)
    }

    /// Runs the kernel into `out`, which must be C-contiguous, of the result's shape and of the
    /// kernel's float dtype (no allocation for the result).
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if `out` does not fit the result.
    pub fn run_into<A: Float, D: Dimension>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        mut out: ArrayViewMut<'_, A, D>,
    ) -> Result<()> {
        let args = bind(&self.program, inputs)?;
        let spec = self
            .specialised
            .get(&self.program, &*self.backend, &args, self.plan_options)?;
        let want = spec.kernel.output_shape();
        if out.shape() != want.as_slice() || spec.kernel.output_type() != OutputType::Float(A::DTYPE) {
            return Err(Error::Output(format!(
                "the output is {}{:?} but the kernel gives {}{:?}",
                A::DTYPE,
                out.shape(),
                spec.kernel.output_type(),
                want
            )));
        }
        let slice = out
            .as_slice_mut()
            .ok_or_else(|| Error::Output("the output array is not C-contiguous".into()))?;
        let buffers = buffers(&spec, &args)?;
        spec.exe
            .run_into(&spec.kernel, &spec.plan, &buffers, A::out_slice(slice))
    }
}

/// The interpreter backend, shared.
pub fn interpreter() -> Arc<dyn Backend> {
    Arc::new(Interpreter)
}
