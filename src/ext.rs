//! The ndarray front end: extension traits that fuse a closure over arrays into one kernel.
//!
//! - [`FuseExt`] on one array or view: `x.fuse(|x| ...)` gives an `Array<A, D>` of `x`'s dimension;
//!   `fuse_reduced` a one-axis reduction (`Array<A, D::Smaller>`), `fuse_scalar` a whole-array one
//!   (`A`), `fuse_dyn` any result ([`Output`]), `fuse_into` writes into your array.
//! - [`FuseAllExt`] on several: a tuple of 1 to 8 array references, `(&a, &b).fuse_all(|(a, b)| ...)`,
//!   or a slice of them, `[&a, &b, &c].fuse_all(|xs| ...)` (the closure gets a `Vec<Expr>`). Shapes
//!   broadcast like NumPy; the element type is NumPy's promotion (f32 with f64 gives f64; of bool,
//!   i32, i64, f32 and f64 as NumPy 2's `result_type`: i32 with f32 gives f64) and the
//!   dimension ndarray's broadcast dimension ([`ndarray::DimMax`]: `Ix2` with `Ix1` gives `Ix2`).
//!   (The method is not called `fuse`: that name is `Iterator::fuse`, and a tuple the trait does not
//!   cover would get the iterator's error.)
//!
//! Every `fuse*` call is cached per call site (see [`crate::fuse_cache`]): in a loop, a repeated call
//! costs the closure, a comparison and the run, not a compilation. A result whose dimension is not the
//! one a method returns is an [`Error::Output`] that names the method that fits (an output of
//! another shape given to `fuse_into`, an [`Error::OutputShape`] that names them).
//!
//! - [`FuseAssignExt`] updates an array in place: `p.fuse_assign(&(&v,), |p, (v,)| p + v * dt)`,
//!   the others a [`FuseInputs`]; refused (with the reason) where the result reads `p` at other
//!   elements than the one it writes.
//!
//! - [`FuseManyExt`] gives several results of one pass: `(&s, &k).fuse_many(|(s, k)| (a, b))`
//!   returns a tuple of arrays of the broadcast dimension (a closure returning 2 to 4 expressions, or
//!   a `Vec` of them for a `Vec` of arrays). The maps among them are one kernel of several outputs
//!   where they share an iteration space (see [`FusedRunner::compile_many`]).
//!
//! ```
//! use kiln::{FuseAllExt, FuseExt};
//! use ndarray::{Array1, Array2, array};
//! let x = array![1.0f32, 2.0, 3.0];
//! let y: Array1<f32> = x.fuse(|x| x * 2.0 + 1.0)?;
//! assert_eq!(y, array![3.0f32, 5.0, 7.0]);
//!
//! let a = array![[1.0, 2.0], [3.0, 4.0]];
//! let b = array![10.0, 20.0];
//! let c: Array2<f64> = (&a, &b).fuse_all(|(a, b)| a * b)?; // broadcasts like NumPy
//! assert_eq!(c, array![[10.0, 40.0], [30.0, 80.0]]);
//! let rows: Array1<f64> = a.fuse_reduced(|a| a.sum_axis(1))?;
//! assert_eq!(rows, array![3.0, 7.0]);
//! assert_eq!(a.fuse_scalar(|a| a.max())?, 4.0);
//! # Ok::<(), kiln::Error>(())
//! ```

use crate::array::{ArrayArg, Element, Output};
use crate::error::{Error, Result};
use crate::expr::{Expr, FUSE_SELF, begin_fuse};
use crate::fuse_cache;
use crate::runner::FusedRunner;
use ndarray::{Array, ArrayBase, ArrayD, ArrayRef, ArrayView, Data, DimMax, Dimension, RemoveAxis};
use std::panic::Location;

/// The names inputs are bound by (`x0`, `x1`, ...), without an allocation for the first 16.
use crate::expr::FUSE_NAMES as NAMES;

/// The names of inputs past the 16th (allocated; empty for `n` <= 16).
fn more_names(n: usize) -> Vec<String> {
    if n <= NAMES.len() {
        return Vec::new();
    }
    (NAMES.len()..n).map(|i| format!("x{i}")).collect()
}

/// Fuses a closure over one array into one kernel.
pub trait FuseExt<A: Element, D: Dimension> {
    /// Evaluates `f(x)` elementwise; the result has `x`'s shape and dimension type. Truth values come
    /// back as 1 / 0 (as `true`/`false` for bool). On an integer or bool array the result must be of
    /// a type `A` holds (`i.fuse(|i| i * 3 + 1)` on int32 is int32; `i / 2` is float64: an error that
    /// says so, use `fuse_dyn`); the kernel is compiled by the JIT in its values' own types where it
    /// can be, else run on the typed interpreter.
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if the closure reduces (the error names `fuse_reduced`,
    /// `fuse_scalar` or `fuse_dyn`).
    fn fuse(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Array<A, D>>;

    /// Evaluates `f(x)` where it reduces one axis (`x.fuse_reduced(|x| x.max_axis(1))`): the result
    /// has one axis fewer.
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if the result does not have one axis fewer than `x`.
    fn fuse_reduced(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Array<A, D::Smaller>>
    where
        D: RemoveAxis;

    /// Evaluates `f(x)` where it reduces every axis (`x.fuse_scalar(|x| (&x * &x).sum())`): one value.
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if the result is not a single value of zero dimensions.
    fn fuse_scalar(&self, f: impl FnOnce(Expr) -> Expr) -> Result<A>;

    /// Evaluates `f(x)` and writes it into `out`, which must have the result's shape.
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if `out` does not have the result's shape.
    fn fuse_into(&self, out: &mut ArrayRef<A, D>, f: impl FnOnce(Expr) -> Expr) -> Result<()>;

    /// Evaluates `f(x)`, any shape and element type the kernel gives (reductions included).
    ///
    /// # Errors
    /// As [`FusedRunner::run`].
    fn fuse_dyn(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Output>;
}

impl<A: Element, D: Dimension> FuseExt<A, D> for ArrayRef<A, D> {
    #[track_caller]
    fn fuse(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Array<A, D>> {
        begin_fuse();
        let site = Location::caller();
        typed(A::convert_output(run_one(site, self, f(x(0)))?)?, "fuse")
    }

    #[track_caller]
    fn fuse_reduced(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Array<A, D::Smaller>>
    where
        D: RemoveAxis,
    {
        begin_fuse();
        let site = Location::caller();
        typed(A::convert_output(run_one(site, self, f(x(0)))?)?, "fuse_reduced")
    }

    #[track_caller]
    fn fuse_scalar(&self, f: impl FnOnce(Expr) -> Expr) -> Result<A> {
        begin_fuse();
        let site = Location::caller();
        scalar(A::convert_output(run_one(site, self, f(x(0)))?)?)
    }

    #[track_caller]
    fn fuse_into(&self, out: &mut ArrayRef<A, D>, f: impl FnOnce(Expr) -> Expr) -> Result<()> {
        begin_fuse();
        let runner = fuse_cache::runner(Location::caller(), f(x(0)))?;
        run_into_or_assign(
            &runner,
            &[("x0", ArrayArg::from(self))],
            out.view_mut().into_dyn(),
        )
    }

    #[track_caller]
    fn fuse_dyn(&self, f: impl FnOnce(Expr) -> Expr) -> Result<Output> {
        begin_fuse();
        run_one(Location::caller(), self, f(x(0)))
    }
}

/// Input `i` of a fused closure, recorded on this thread's tape (the call began with
/// [`begin_fuse`]).
fn x(i: usize) -> Expr {
    Expr::fuse_input(i as u32)
}

/// Runs `expr` (built at `site`) on one array, bound as `x0` (no allocation for the binding).
fn run_one<A: Element, D: Dimension>(
    site: &'static Location<'static>,
    a: &ArrayRef<A, D>,
    expr: Expr,
) -> Result<Output> {
    fuse_cache::runner(site, expr)?.run(&[("x0", ArrayArg::from(a))])
}

/// Runs `expr` (built at `site`) on the arrays of `inputs`, bound as `x0`, `x1`, ...
fn run_at<I: FuseInputs + ?Sized>(
    site: &'static Location<'static>,
    inputs: &I,
    expr: Expr,
) -> Result<Output> {
    let runner = fuse_cache::runner(site, expr)?;
    inputs.with_bound(|bound| runner.run(bound))
}

/// The result as an array of dimension `E`, or an error naming the method that returns its dimension.
fn typed<A: Element, E: Dimension>(out: ArrayD<A>, method: &str) -> Result<Array<A, E>> {
    let ndim = out.ndim();
    let shape = out.shape().to_vec();
    out.into_dimensionality::<E>().map_err(|_| {
        let want = E::NDIM.map_or("any number of".to_string(), |n| n.to_string());
        let hint = match ndim {
            0 => "a reduction of every axis: use `fuse_scalar` (one value) or `fuse_dyn`",
            _ => "use `fuse_reduced` for a reduction of one axis, `fuse_dyn` for any result",
        };
        Error::Output(format!(
            "`{method}` returns an array of {want} axes but the result has shape {shape:?} ({ndim} axes): {hint}"
        ))
    })
}

/// The single value of a zero-dimensional result.
fn scalar<A: Element>(out: ArrayD<A>) -> Result<A> {
    if out.ndim() != 0 {
        return Err(Error::Output(format!(
            "`fuse_scalar` needs a reduction of every axis but the result has shape {:?}: use `fuse` \
             for an elementwise result, `fuse_reduced` for a reduction of one axis, `fuse_dyn` for any",
            out.shape()
        )));
    }
    Ok(out
        .into_iter()
        .next()
        .expect("a zero-dimensional array holds one value"))
}

/// Runs into `out`: straight in where the kernel's result is of `out`'s type (no temporary where `out`
/// is C-contiguous); a result of another type computed and assigned, converting truth values to
/// 1 / 0 ([`Element::convert_output`]).
fn run_into_or_assign<A: Element>(
    runner: &FusedRunner,
    args: &[(&str, ArrayArg<'_>)],
    out: ndarray::ArrayViewMutD<'_, A>,
) -> Result<()> {
    runner.deliver_converted(args, out).map_err(|e| match e {
        Error::OutputShape { output, result, .. } => Error::OutputShape {
            output,
            result,
            hint: " (for a result of another dimension use `fuse_reduced`, `fuse_scalar` or `fuse_dyn`)",
        },
        e => e,
    })
}

/// NumPy's promotion of two element types (`result_type`): bool < int32 < int64 within integers,
/// f32 with f32 stays f32, an integer with any float is f64 (int32 with f32 too, as NumPy 2), bool
/// with anything is the other.
pub trait Promote<B: Element>: Element {
    /// The promoted type.
    type Out: Element;
}

macro_rules! promote {
    ($($a:ty, $b:ty => $out:ty;)*) => {$(
        impl Promote<$b> for $a {
            type Out = $out;
        }
    )*};
}

promote! {
    bool, bool => bool; bool, i32 => i32; bool, i64 => i64; bool, f32 => f32; bool, f64 => f64;
    i32, bool => i32; i32, i32 => i32; i32, i64 => i64; i32, f32 => f64; i32, f64 => f64;
    i64, bool => i64; i64, i32 => i64; i64, i64 => i64; i64, f32 => f64; i64, f64 => f64;
    f32, bool => f32; f32, i32 => f64; f32, i64 => f64; f32, f32 => f32; f32, f64 => f64;
    f64, bool => f64; f64, i32 => f64; f64, i64 => f64; f64, f32 => f64; f64, f64 => f64;
}

/// The arrays a fused closure reads: a tuple of 1 to 8 array references (any element types and
/// dimensions) or a slice of references or views of one type. The machinery under [`FuseAllExt`].
pub trait FuseInputs {
    /// What the closure gets: a tuple of as many [`Expr`]s, or a `Vec<Expr>` for a slice.
    type Exprs;
    /// The element type of the result (NumPy's promotion).
    type Elem: Element;
    /// The dimension of the broadcast result.
    type Dim: Dimension;
    /// One input expression per array, `x0`, `x1`, ...
    fn exprs(&self) -> Self::Exprs;
    /// Calls `f` with the arrays in order, bound by the names of [`FuseInputs::exprs`] (`x0`, `x1`,
    /// ...): an array on the stack for a tuple, one allocation for a slice.
    fn with_bound<R>(&self, f: impl FnOnce(&[(&str, ArrayArg<'_>)]) -> R) -> R;
}

/// [`FuseInputs::with_bound`] of a slice's arrays.
fn bound_slice<'a, R>(
    args: impl ExactSizeIterator<Item = ArrayArg<'a>>,
    f: impl FnOnce(&[(&str, ArrayArg<'_>)]) -> R,
) -> R {
    let more = more_names(args.len());
    let names = NAMES.iter().copied().chain(more.iter().map(String::as_str));
    // on the stack for up to 8 inputs (no allocation a call), filled where it lies (a collected
    // `SmallVec` is moved out of `collect`: a copy of its kilobyte of room each call)
    let mut bound: smallvec::SmallVec<[(&str, ArrayArg<'_>); 8]> = smallvec::SmallVec::new();
    bound.extend(names.zip(args));
    f(&bound)
}

/// Fuses a closure over several arrays into one kernel, broadcasting like NumPy.
pub trait FuseAllExt: FuseInputs {
    /// Evaluates the closure elementwise: an array of the broadcast dimension; truth values come back
    /// as 1 / 0.
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if the closure reduces (the error names the method that fits).
    fn fuse_all(&self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<Array<Self::Elem, Self::Dim>>;
    /// Evaluates a closure that reduces one axis: one axis fewer than the broadcast dimension.
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if the result does not have one axis fewer.
    fn fuse_all_reduced(
        &self,
        f: impl FnOnce(Self::Exprs) -> Expr,
    ) -> Result<Array<Self::Elem, <Self::Dim as Dimension>::Smaller>>
    where
        Self::Dim: RemoveAxis;
    /// Evaluates a closure that reduces every axis: one value.
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if the result is not a single value.
    fn fuse_all_scalar(&self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<Self::Elem>;
    /// Evaluates the closure into `out`, which must have the result's shape.
    ///
    /// # Errors
    /// As [`FusedRunner::run`], and if `out` does not have the result's shape.
    fn fuse_all_into<E: Dimension>(
        &self,
        out: &mut ArrayRef<Self::Elem, E>,
        f: impl FnOnce(Self::Exprs) -> Expr,
    ) -> Result<()>;
    /// Evaluates the closure, any shape and element type.
    ///
    /// # Errors
    /// As [`FusedRunner::run`].
    fn fuse_all_dyn(&self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<Output>;
}

impl<T: FuseInputs + ?Sized> FuseAllExt for T {
    #[track_caller]
    fn fuse_all(&self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<Array<Self::Elem, Self::Dim>> {
        begin_fuse();
        let out = run_at(Location::caller(), self, f(self.exprs()))?;
        typed(Self::Elem::convert_output(out)?, "fuse_all").map_err(all_names)
    }

    #[track_caller]
    fn fuse_all_reduced(
        &self,
        f: impl FnOnce(Self::Exprs) -> Expr,
    ) -> Result<Array<Self::Elem, <Self::Dim as Dimension>::Smaller>>
    where
        Self::Dim: RemoveAxis,
    {
        begin_fuse();
        let out = run_at(Location::caller(), self, f(self.exprs()))?;
        typed(Self::Elem::convert_output(out)?, "fuse_all_reduced").map_err(all_names)
    }

    #[track_caller]
    fn fuse_all_scalar(&self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<Self::Elem> {
        begin_fuse();
        let out = run_at(Location::caller(), self, f(self.exprs()))?;
        scalar(Self::Elem::convert_output(out)?).map_err(all_names)
    }

    #[track_caller]
    fn fuse_all_into<E: Dimension>(
        &self,
        out: &mut ArrayRef<Self::Elem, E>,
        f: impl FnOnce(Self::Exprs) -> Expr,
    ) -> Result<()> {
        begin_fuse();
        let runner = fuse_cache::runner(Location::caller(), f(self.exprs()))?;
        self.with_bound(|bound| run_into_or_assign(&runner, bound, out.view_mut().into_dyn()))
    }

    #[track_caller]
    fn fuse_all_dyn(&self, f: impl FnOnce(Self::Exprs) -> Expr) -> Result<Output> {
        begin_fuse();
        run_at(Location::caller(), self, f(self.exprs()))
    }
}

/// The hints of a dimension error, in the names of [`FuseAllExt`].
fn all_names(e: Error) -> Error {
    match e {
        Error::Output(m) => Error::Output(
            m.replace("`fuse_scalar`", "`fuse_all_scalar`")
                .replace("`fuse_reduced`", "`fuse_all_reduced`")
                .replace("`fuse_dyn`", "`fuse_all_dyn`")
                .replace("use `fuse` ", "use `fuse_all` "),
        ),
        e => e,
    }
}

/// The results of a [`FuseManyExt::fuse_many`] closure: a tuple of 2 to 4 expressions, or a `Vec`.
pub trait FuseResults {
    /// What comes back: a tuple of as many arrays (or a `Vec`), each of element type `A` and
    /// dimension `D`.
    type Arrays<A: Element, D: Dimension>;
    /// The expressions, in order.
    fn into_exprs(self) -> Vec<Expr>;
    /// The arrays from the runner's results, typed.
    ///
    /// # Errors
    /// A result of another dimension than `D` (the error names the method that fits).
    fn arrays<A: Element, D: Dimension>(outs: Vec<Output>) -> Result<Self::Arrays<A, D>>;
}

/// A result of `fuse_many`, typed.
fn typed_many<A: Element, D: Dimension>(o: Output, i: usize) -> Result<Array<A, D>> {
    typed(A::convert_output(o)?, "fuse_many").map_err(|e| match e {
        Error::Output(m) => Error::Output(format!(
            "result {i}: {}",
            m.replace(
                "use `fuse_reduced` for a reduction of one axis, `fuse_dyn` for any result",
                "run a reduction with `FusedRunner::compile_many` and `run_many`"
            )
            .replace(
                "a reduction of every axis: use `fuse_scalar` (one value) or `fuse_dyn`",
                "a reduction of every axis: run it with `FusedRunner::compile_many` and `run_many`"
            )
        )),
        e => e,
    })
}

macro_rules! fuse_results {
    ($n:literal; $($i:tt),+) => {
        impl FuseResults for ($(fuse_results!(@e $i),)+) {
            type Arrays<A: Element, D: Dimension> = ($(fuse_results!(@a $i A D),)+);
            fn into_exprs(self) -> Vec<Expr> {
                vec![$(self.$i),+]
            }
            fn arrays<A: Element, D: Dimension>(outs: Vec<Output>) -> Result<Self::Arrays<A, D>> {
                let mut it = outs.into_iter();
                Ok(($(typed_many::<A, D>(it.next().expect("one result per expression"), $i)?,)+))
            }
        }
    };
    (@e $i:tt) => { Expr };
    (@a $i:tt $A:ident $D:ident) => { Array<$A, $D> };
}

fuse_results!(2; 0, 1);
fuse_results!(3; 0, 1, 2);
fuse_results!(4; 0, 1, 2, 3);

impl FuseResults for Vec<Expr> {
    type Arrays<A: Element, D: Dimension> = Vec<Array<A, D>>;
    fn into_exprs(self) -> Vec<Expr> {
        self
    }
    fn arrays<A: Element, D: Dimension>(outs: Vec<Output>) -> Result<Self::Arrays<A, D>> {
        outs.into_iter()
            .enumerate()
            .map(|(i, o)| typed_many(o, i))
            .collect()
    }
}

/// Several results of one pass over several arrays (see the module doc).
///
/// ```
/// use kiln::FuseManyExt;
/// use ndarray::{Array1, array};
/// let (x, y) = (array![1.0, 2.0, 3.0], array![0.5, 0.5, 0.5]);
/// let (s, d): (Array1<f64>, Array1<f64>) = (&x, &y).fuse_many(|(x, y)| (&x + &y, x - y))?;
/// assert_eq!(s, array![1.5, 2.5, 3.5]);
/// assert_eq!(d, array![0.5, 1.5, 2.5]);
/// # Ok::<(), kiln::Error>(())
/// ```
pub trait FuseManyExt: FuseInputs {
    /// Evaluates the closure's results elementwise, in one pass where they share an iteration space:
    /// arrays of the broadcast dimension; truth values come back as 1 / 0.
    ///
    /// # Errors
    /// As [`FusedRunner::run_many`], and if a result is a reduction (the error names the result).
    fn fuse_many<R: FuseResults>(
        &self,
        f: impl FnOnce(Self::Exprs) -> R,
    ) -> Result<R::Arrays<Self::Elem, Self::Dim>>;
}

impl<T: FuseInputs + ?Sized> FuseManyExt for T {
    #[track_caller]
    fn fuse_many<R: FuseResults>(
        &self,
        f: impl FnOnce(Self::Exprs) -> R,
    ) -> Result<R::Arrays<Self::Elem, Self::Dim>> {
        begin_fuse();
        let runner = fuse_cache::runner_many(Location::caller(), f(self.exprs()).into_exprs())?;
        R::arrays(self.with_bound(|bound| runner.run_many(bound))?)
    }
}

/// A tuple impl of [`FuseInputs`]: folds the element types by [`Promote`] and the dimensions by
/// [`DimMax`], one array at a time.
macro_rules! fuse_tuple {
    // start: the first array's types are the running ones
    ($(($a:ident, $s:ident, $d:ident, $i:tt)),+) => {
        fuse_tuple!(@fold [$(($a, $s, $d, $i))+] [] ; $(($a, $s, $d, $i))+);
    };
    (@fold $all:tt [] ; ($a:ident, $s:ident, $d:ident, $i:tt) $($rest:tt)*) => {
        fuse_tuple!(@fold $all [[$a] [$d]] ; $($rest)*);
    };
    (@fold $all:tt [[$($elem:tt)*] [$($dim:tt)*] $($bound:tt)*] ; ($a:ident, $s:ident, $d:ident, $i:tt) $($rest:tt)*) => {
        fuse_tuple!(@fold $all [
            [<$($elem)* as Promote<$a>>::Out]
            [<$($dim)* as DimMax<$d>>::Output]
            $($bound)* $($elem)*: Promote<$a>, $($dim)*: DimMax<$d>,
        ] ; $($rest)*);
    };
    (@fold [$(($a:ident, $s:ident, $d:ident, $i:tt))+] [[$($elem:tt)*] [$($dim:tt)*] $($bound:tt)*] ;) => {
        impl<'a, $($a: Element, $s: Data<Elem = $a>, $d: Dimension),+> FuseInputs
            for ($(&'a ArrayBase<$s, $d, $a>,)+)
        where
            $($bound)*
        {
            type Exprs = ($(fuse_tuple!(@expr $a),)+);
            type Elem = $($elem)*;
            type Dim = $($dim)*;

            fn exprs(&self) -> Self::Exprs {
                ($(x($i),)+)
            }

            fn with_bound<R>(&self, f: impl FnOnce(&[(&str, ArrayArg<'_>)]) -> R) -> R {
                f(&[$((NAMES[$i], ArrayArg::from(self.$i))),+])
            }
        }
    };
    (@expr $a:ident) => { Expr };
}

fuse_tuple!((A0, S0, D0, 0));
fuse_tuple!((A0, S0, D0, 0), (A1, S1, D1, 1));
fuse_tuple!((A0, S0, D0, 0), (A1, S1, D1, 1), (A2, S2, D2, 2));
fuse_tuple!((A0, S0, D0, 0), (A1, S1, D1, 1), (A2, S2, D2, 2), (A3, S3, D3, 3));
fuse_tuple!(
    (A0, S0, D0, 0),
    (A1, S1, D1, 1),
    (A2, S2, D2, 2),
    (A3, S3, D3, 3),
    (A4, S4, D4, 4)
);
fuse_tuple!(
    (A0, S0, D0, 0),
    (A1, S1, D1, 1),
    (A2, S2, D2, 2),
    (A3, S3, D3, 3),
    (A4, S4, D4, 4),
    (A5, S5, D5, 5)
);
fuse_tuple!(
    (A0, S0, D0, 0),
    (A1, S1, D1, 1),
    (A2, S2, D2, 2),
    (A3, S3, D3, 3),
    (A4, S4, D4, 4),
    (A5, S5, D5, 5),
    (A6, S6, D6, 6)
);
fuse_tuple!(
    (A0, S0, D0, 0),
    (A1, S1, D1, 1),
    (A2, S2, D2, 2),
    (A3, S3, D3, 3),
    (A4, S4, D4, 4),
    (A5, S5, D5, 5),
    (A6, S6, D6, 6),
    (A7, S7, D7, 7)
);

/// A slice of array references of one element type and dimension: `[&a, &b, &c].fuse_all(|xs| ...)`.
impl<A: Element, S: Data<Elem = A>, D: Dimension> FuseInputs for [&ArrayBase<S, D, A>] {
    type Exprs = Vec<Expr>;
    type Elem = A;
    type Dim = D;

    fn exprs(&self) -> Vec<Expr> {
        (0..self.len()).map(x).collect()
    }

    fn with_bound<R>(&self, f: impl FnOnce(&[(&str, ArrayArg<'_>)]) -> R) -> R {
        bound_slice(self.iter().map(|a| ArrayArg::from(*a)), f)
    }
}

/// A slice of views of one element type and dimension.
impl<'a, A: Element, D: Dimension> FuseInputs for [ArrayView<'a, A, D>] {
    type Exprs = Vec<Expr>;
    type Elem = A;
    type Dim = D;

    fn exprs(&self) -> Vec<Expr> {
        (0..self.len()).map(x).collect()
    }

    fn with_bound<R>(&self, f: impl FnOnce(&[(&str, ArrayArg<'_>)]) -> R) -> R {
        bound_slice(self.iter().map(|v| ArrayArg::from(v.view())), f)
    }
}

/// Updates an array in place with a closure over it and other arrays (issue 12's in-place update):
/// `p.fuse_assign(&(&v,), |p, (v,)| p + v * dt)` computes `p + v*dt` into `p` in one kernel, with no
/// second buffer. The closure's first argument is the array itself (bound as `self`); the others are
/// a [`FuseInputs`] (a tuple of 1 to 8 array references, or a slice), bound as `x0`, `x1`, ...
///
/// ```
/// use kiln::FuseAssignExt;
/// use ndarray::array;
/// let (mut p, v) = (array![0.0, 1.0], array![1.0, 2.0]);
/// let dt = 0.5;
/// p.fuse_assign(&(&v,), |p, (v,)| p + v * dt)?;
/// assert_eq!(p, array![0.5, 2.0]);
/// // refused: every element of the result reads all of `p`
/// assert!(p.fuse_assign(&(&v,), |p, (v,)| &p - p.sum() + v).is_err());
/// # Ok::<(), kiln::Error>(())
/// ```
pub trait FuseAssignExt<A: Element, D: Dimension> {
    /// Evaluates `f(self, others)` and writes it into `self`.
    ///
    /// # Errors
    /// As [`FusedRunner::run_update`]: the update is not safe in place (a reduction or scan of
    /// `self`, or `self` broadcast to a larger result; the error says which), `self` is not
    /// C-contiguous of the result's shape (a float `self`), or the closure's result is of another
    /// type (`i32` stays `i32` under `i * 3 + 1`, as NumPy's).
    fn fuse_assign<I: FuseInputs + ?Sized>(
        &mut self,
        others: &I,
        f: impl FnOnce(Expr, I::Exprs) -> Expr,
    ) -> Result<()>;
}

impl<A: Element, D: Dimension> FuseAssignExt<A, D> for ArrayRef<A, D> {
    #[track_caller]
    fn fuse_assign<I: FuseInputs + ?Sized>(
        &mut self,
        others: &I,
        f: impl FnOnce(Expr, I::Exprs) -> Expr,
    ) -> Result<()> {
        begin_fuse();
        let runner = fuse_cache::runner(Location::caller(), f(Expr::fuse_input(FUSE_SELF), others.exprs()))?;
        others.with_bound(|bound| runner.run_update("self", bound, self.view_mut()))
    }
}
