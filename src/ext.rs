//! The ndarray front end: extension traits that fuse a closure over arrays into one kernel.
//!
//! ```
//! use kiln::FuseExt;
//! use ndarray::array;
//! let x = array![1.0f32, 2.0, 3.0];
//! let y = x.fuse(|x| x * 2.0 + 1.0)?;
//! assert_eq!(y, array![3.0f32, 5.0, 7.0]);
//!
//! use kiln::FuseManyExt;
//! let a = array![[1.0, 2.0], [3.0, 4.0]];
//! let b = array![10.0, 20.0];
//! let c = (&a, &b).fuse(|(a, b)| a * b)?; // broadcasts like NumPy
//! assert_eq!(c, array![[10.0, 40.0], [30.0, 80.0]].into_dyn());
//! # Ok::<(), kiln::Error>(())
//! ```

use crate::array::{ArrayArg, Float, Output};
use crate::error::{Error, Result};
use crate::expr::Expr;
use crate::runner::FusedRunner;
use ndarray::{Array, ArrayBase, ArrayD, ArrayRef, Data, Dimension};

/// Fuses a closure over one array into one kernel.
pub trait FuseExt<A: Float, D: Dimension> {
    /// Evaluates `f(x)` elementwise; the result has `x`'s shape and dimension type. Truth values come
    /// back as 1 / 0. A closure that reduces changes the shape: use [`FuseExt::fuse_dyn`].
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if the result's rank differs from `D`.
    fn fuse(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Array<A, D>>;

    /// Evaluates `f(x)` and writes it into `out`, which must have the result's shape.
    fn fuse_into(&self, out: &mut ArrayRef<A, D>, f: impl FnOnce(Expr) -> Expr) -> Result<()>;

    /// Evaluates `f(x)`, any shape and element type the kernel gives (reductions included).
    fn fuse_dyn(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Output>;
}

impl<A: Float, D: Dimension> FuseExt<A, D> for ArrayRef<A, D> {
    fn fuse(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Array<A, D>> {
        let out = A::from_output(self.fuse_dyn(f)?)?;
        out.into_dimensionality::<D>()
            .map_err(|e| Error::Output(format!("the result does not have the input's dimension: {e}")))
    }

    fn fuse_into(&self, out: &mut ArrayRef<A, D>, f: impl FnOnce(Expr) -> Expr) -> Result<()> {
        let runner = FusedRunner::compile(&f(Expr::input("x0")))?;
        run_into_or_assign(
            &runner,
            &[("x0", ArrayArg::from(self))],
            out.view_mut().into_dyn(),
        )
    }

    fn fuse_dyn(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Output> {
        let runner = FusedRunner::compile(&f(Expr::input("x0")))?;
        runner.run(&[("x0", ArrayArg::from(self))])
    }
}

/// Runs straight into `out` where the kernel's result is a float array of `out`'s type and `out` is
/// C-contiguous (no temporary); otherwise computes the result and assigns it, converting truth values
/// to 1 / 0.
fn run_into_or_assign<A: Float>(
    runner: &FusedRunner,
    args: &[(&str, ArrayArg<'_>)],
    mut out: ndarray::ArrayViewMutD<'_, A>,
) -> Result<()> {
    if out.is_standard_layout() && runner.run_into(args, out.view_mut()).is_ok() {
        return Ok(());
    }
    assign(out, A::from_output(runner.run(args)?)?)
}

fn assign<A: Float>(mut out: ndarray::ArrayViewMutD<'_, A>, result: ArrayD<A>) -> Result<()> {
    if out.shape() != result.shape() {
        return Err(Error::Output(format!(
            "the output has shape {:?} but the result has shape {:?}",
            out.shape(),
            result.shape()
        )));
    }
    out.assign(&result);
    Ok(())
}

/// NumPy's promotion of two element types: f32 with f32 stays f32, anything with f64 is f64.
pub trait Promote<B: Float>: Float {
    type Out: Float;
}
impl Promote<f32> for f32 {
    type Out = f32;
}
impl Promote<f64> for f32 {
    type Out = f64;
}
impl Promote<f32> for f64 {
    type Out = f64;
}
impl Promote<f64> for f64 {
    type Out = f64;
}

/// Fuses a closure over several arrays (a tuple of 2 to 4 references; the closure takes a tuple of
/// as many [`Expr`]s, `|(a, b)| a * b`) into one kernel, broadcasting
/// their shapes like NumPy. The result is dynamic-dimensional, in the promoted element type.
pub trait FuseManyExt {
    /// One [`Expr`] per array.
    type Exprs;
    /// The element type of the result.
    type Elem: Float;

    /// Evaluates the closure; truth values come back as 1 / 0.
    fn fuse(self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<ArrayD<Self::Elem>>;
    /// Evaluates the closure into `out`, which must have the broadcast shape.
    fn fuse_into(self, out: &mut ArrayD<Self::Elem>, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<()>;
    /// Evaluates the closure, any shape and element type.
    fn fuse_dyn(self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<Output>;
}

macro_rules! fuse_tuple {
    ($elem:ty; [$($bound:tt)*]; $(($arr:ident, $a:ident, $s:ident, $dim:ident, $name:literal)),+) => {
        impl<'a, $($a: Float, $s: Data<Elem = $a>, $dim: Dimension),+> FuseManyExt
            for ($(&'a ArrayBase<$s, $dim, $a>,)+)
        where
            $($bound)*
        {
            type Exprs = ($(fuse_tuple!(@expr $arr),)+);
            type Elem = $elem;

            fn fuse(self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<ArrayD<Self::Elem>> {
                <$elem>::from_output(self.fuse_dyn(f)?)
            }

            fn fuse_into(self, out: &mut ArrayD<Self::Elem>, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<()> {
                let ($($arr,)+) = self;
                let runner = FusedRunner::compile(&f(($(Expr::input($name),)+)))?;
                run_into_or_assign(&runner, &[$(($name, ArrayArg::from($arr))),+], out.view_mut())
            }

            fn fuse_dyn(self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<Output> {
                let ($($arr,)+) = self;
                let runner = FusedRunner::compile(&f(($(Expr::input($name),)+)))?;
                runner.run(&[$(($name, ArrayArg::from($arr))),+])
            }
        }
    };
    (@expr $arr:ident) => { Expr };
}

fuse_tuple!(<A0 as Promote<A1>>::Out; [A0: Promote<A1>]; (a0, A0, S0, D0, "x0"), (a1, A1, S1, D1, "x1"));
fuse_tuple!(<<A0 as Promote<A1>>::Out as Promote<A2>>::Out;
    [A0: Promote<A1>, <A0 as Promote<A1>>::Out: Promote<A2>];
    (a0, A0, S0, D0, "x0"), (a1, A1, S1, D1, "x1"), (a2, A2, S2, D2, "x2"));
fuse_tuple!(<<<A0 as Promote<A1>>::Out as Promote<A2>>::Out as Promote<A3>>::Out;
    [A0: Promote<A1>, <A0 as Promote<A1>>::Out: Promote<A2>,
     <<A0 as Promote<A1>>::Out as Promote<A2>>::Out: Promote<A3>];
    (a0, A0, S0, D0, "x0"), (a1, A1, S1, D1, "x1"), (a2, A2, S2, D2, "x2"), (a3, A3, S3, D3, "x3"));
