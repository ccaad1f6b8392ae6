//! The one run call, [`FusedRunner::call`]: a compiled expression, its inputs by name, and where its
//! results go, said by the second argument's type ([`Results`]):
//!
//! | results | second argument | returns |
//! | --- | --- | --- |
//! | one, fresh | [`Fresh`] | [`Output`] |
//! | every one, fresh | [`FreshAll`] | `Vec<Output>` |
//! | one, into your array of its type | `out.view_mut()` | `()` |
//! | several, into your arrays | `&mut [a.view_mut(), b.view_mut()]` or `(a.view_mut(), m.view_mut())` | `()` |
//! | into inputs, in place | `InPlace(&mut [("p", p.view_mut()), ...])`, or of several types `InPlace((("p", p.view_mut()), ("n", n.view_mut())))` | `()` |
//! | one reduction, folded into your array's values | `Accumulate(out.view_mut())` | `()` |
//!
//! By position, a handle bound once to its inputs' forms ([`FusedRunner::prepared`]) has the same
//! call, [`Prepared::call`], with every way but [`InPlace`] ([`ResultsAt`]; a handle updates inputs
//! on slices, [`Prepared::update`]).
//!
//! Every way goes through the runner's bindings (`src/bindings.rs`): a call whose signature (names
//! in order, dtypes, shapes, layouts) was seen before goes straight to the compiled code, after the
//! checks on the caller's buffers. [`FusedRunner::run`], [`FusedRunner::run_into`],
//! [`FusedRunner::run_many`], [`FusedRunner::run_into_many`], [`FusedRunner::run_update`] and
//! [`FusedRunner::run_accumulate`] are this call with one of these. ([`Accumulate`]'s fold starts
//! from the output's values, read first; a new signature is bound without a run where the plan is
//! one kernel whose inputs are read in their given order, and otherwise folds by name at each call
//! unless another way of calling kept a handle for it.)

use crate::array::{ArrayArg, Element, Output};
use crate::backend::OutSlice;
use crate::error::Result;
use crate::prepared::Prepared;
use crate::runner::FusedRunner;
use kiln_ir::ElemType;
use ndarray::{ArrayViewMut, Dimension};
use smallvec::SmallVec;

/// Where the results of [`Prepared::call`] go (inputs by position): every way of [`Results`] but
/// [`InPlace`], which a handle does on slices ([`Prepared::update`]).
pub trait ResultsAt: Results {
    /// Runs `handle` on `inputs` (in the order bound) and delivers the results here.
    #[doc(hidden)]
    fn deliver_at(self, handle: &Prepared, inputs: &[ArrayArg<'_>]) -> Result<Self::Out>;
}

/// Where the results of [`FusedRunner::call`] go, and what the call returns (see the module doc).
/// Implemented by [`Fresh`], [`FreshAll`], a mutable view of any element type (one result into it),
/// a slice or array of such views of one type, a tuple of two to four views of any types (one per
/// result), [`InPlace`] and [`Accumulate`].
pub trait Results: sealed::Sealed {
    /// What the call returns: the results where they are fresh, else `()`.
    type Out;
    /// Runs `runner` on `inputs` and delivers the results here.
    #[doc(hidden)]
    fn deliver(self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Self::Out>;
}

mod sealed {
    pub trait Sealed {}
}

/// The one result, in a fresh array of its own type.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fresh;

/// Every result, each in a fresh array of its own type, in the order of the expressions.
#[derive(Debug, Clone, Copy, Default)]
pub struct FreshAll;

/// Each result written into the input of the paired name, in place (`p = p + v*dt`): the array is
/// that input's value, so it is not given among the call's inputs. One pair per result, in the order
/// of the expressions.
///
/// ```
/// use kiln::{FusedRunner, InPlace};
/// use ndarray::{Array1, arr0};
/// let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt")?;
/// let (mut p, mut v) = (Array1::<f64>::zeros(64), Array1::<f64>::ones(64));
/// let (dt, g) = (arr0(0.01), arr0(-9.81));
/// for _ in 0..10 {
///     step.call(
///         &[("dt", (&dt).into()), ("g", (&g).into())],
///         InPlace(&mut [("p", p.view_mut()), ("v", v.view_mut())]),
///     )?;
/// }
/// assert!(p[0] > 0.0 && v[0] < 1.0);
/// # Ok::<(), kiln::Error>(())
/// ```
///
///
/// InPlaceTargets of several element types take a tuple of named views (two to four), one per result:
///
/// ```
/// use kiln::{FusedRunner, InPlace};
/// use ndarray::{Array1, arr0};
/// let step = FusedRunner::compile_text("p + v*dt; n + 1")?;
/// let (mut p, v, mut n) = (Array1::<f64>::zeros(4), Array1::<f64>::ones(4), Array1::<i64>::zeros(4));
/// let dt = arr0(0.5);
/// for _ in 0..2 {
///     step.call(
///         &[("v", (&v).into()), ("dt", (&dt).into())],
///         InPlace((("p", p.view_mut()), ("n", n.view_mut()))),
///     )?;
/// }
/// assert_eq!((p[0], n[0]), (1.0, 2));
/// # Ok::<(), kiln::Error>(())
/// ```
///
/// An update is allowed where it is safe: each result's element `i` reads its input at element `i`
/// only (see [`crate::update`]); anything else is an error that says why.
pub struct InPlace<T>(pub T);

/// The one result, a sum, product, min or max (without `initial`, not a mean), folded into the
/// view's values: `out = out ⊕ reduce(...)`, each output's fold starting from its previous value in
/// the accumulator's type (float64 for sums and products) and rounded once (Julia's `sum!`,
/// NumPy's `np.add.reduce(x, out=out, initial=...)` with the previous values as the start).
///
/// ```
/// use kiln::{Accumulate, FusedRunner};
/// use ndarray::array;
/// let r = FusedRunner::compile_text("sum(x, axis=1)")?;
/// let (x, mut total) = (array![[1.0, 2.0], [3.0, 4.0]], array![10.0, 20.0]);
/// r.call(&[("x", (&x).into())], Accumulate(total.view_mut()))?;
/// assert_eq!(total, array![13.0, 27.0]);
/// # Ok::<(), kiln::Error>(())
/// ```
pub struct Accumulate<T>(pub T);

impl<A: crate::array::Float, D: Dimension> sealed::Sealed for Accumulate<ArrayViewMut<'_, A, D>> {}
impl<A: crate::array::Float, D: Dimension> Results for Accumulate<ArrayViewMut<'_, A, D>> {
    type Out = ();
    fn deliver(self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
        runner.accumulate(inputs, self.0)
    }
}

impl<A: crate::array::Float, D: Dimension> ResultsAt for Accumulate<ArrayViewMut<'_, A, D>> {
    fn deliver_at(self, handle: &Prepared, inputs: &[ArrayArg<'_>]) -> Result<()> {
        handle.check(inputs)?;
        handle.accumulate_checked(inputs, self.0)
    }
}

/// The targets of an in-place update ([`InPlace`]): named mutable views, one per result, a slice
/// or array of views of one element type, or a tuple of two to four of any types.
pub trait InPlaceTargets: sealed::Sealed {
    /// How many targets.
    #[doc(hidden)]
    fn count(&self) -> usize;
    /// Target `o`'s name.
    #[doc(hidden)]
    fn name(&self, o: usize) -> &str;
    /// Target `o`'s element type, shape and element strides.
    #[doc(hidden)]
    fn form(&self, o: usize) -> (ElemType, &[usize], &[isize]);
    /// Target `o`'s elements, read.
    #[doc(hidden)]
    fn arg(&self, o: usize) -> ArrayArg<'_>;
    /// Every target's elements in C order, where every one is C-contiguous.
    #[doc(hidden)]
    fn buffers(&mut self) -> Option<SmallVec<[OutSlice<'_>; 4]>>;
    /// Every target's elements in C order into `outs` (one per target), where every one is a
    /// C-contiguous array of the float type `L`; whether they are.
    #[doc(hidden)]
    fn float_slices<'s, L: crate::array::Float>(&'s mut self, outs: &mut [&'s mut [L]]) -> bool;
    /// Writes `r` (of target `o`'s type and shape, checked by the caller) into target `o`.
    #[doc(hidden)]
    fn assign(&mut self, o: usize, r: Output) -> Result<()>;
}

impl<A: Element, D: Dimension> sealed::Sealed for [(&str, ArrayViewMut<'_, A, D>)] {}
impl<A: Element, D: Dimension> InPlaceTargets for [(&str, ArrayViewMut<'_, A, D>)] {
    fn count(&self) -> usize {
        self.len()
    }
    fn name(&self, o: usize) -> &str {
        self[o].0
    }
    fn form(&self, o: usize) -> (ElemType, &[usize], &[isize]) {
        (A::ELEM, self[o].1.shape(), self[o].1.strides())
    }
    fn arg(&self, o: usize) -> ArrayArg<'_> {
        A::arg(self[o].1.view())
    }
    #[inline]
    fn buffers(&mut self) -> Option<SmallVec<[OutSlice<'_>; 4]>> {
        self.iter_mut()
            .map(|(_, v)| v.as_slice_mut().map(A::out_buffer))
            .collect()
    }
    fn assign(&mut self, o: usize, r: Output) -> Result<()> {
        crate::prepared::assign_view(&mut self[o].1, r)
    }
    #[inline]
    fn float_slices<'s, L: crate::array::Float>(&'s mut self, outs: &mut [&'s mut [L]]) -> bool {
        outs.len() == self.len()
            && self.iter_mut().zip(outs.iter_mut()).all(|((_, v), o)| {
                match v.as_slice_mut().and_then(A::as_float_mut::<L>) {
                    Some(s) => {
                        *o = s;
                        true
                    }
                    None => false,
                }
            })
    }
}

impl<A: Element, D: Dimension, const N: usize> sealed::Sealed for [(&str, ArrayViewMut<'_, A, D>); N] {}
impl<A: Element, D: Dimension, const N: usize> InPlaceTargets for [(&str, ArrayViewMut<'_, A, D>); N] {
    fn count(&self) -> usize {
        N
    }
    fn name(&self, o: usize) -> &str {
        self[o].0
    }
    fn form(&self, o: usize) -> (ElemType, &[usize], &[isize]) {
        self[..].form(o)
    }
    fn arg(&self, o: usize) -> ArrayArg<'_> {
        self[..].arg(o)
    }
    #[inline]
    fn buffers(&mut self) -> Option<SmallVec<[OutSlice<'_>; 4]>> {
        self[..].buffers()
    }
    fn assign(&mut self, o: usize, r: Output) -> Result<()> {
        self[..].assign(o, r)
    }
    #[inline]
    fn float_slices<'s, L: crate::array::Float>(&'s mut self, outs: &mut [&'s mut [L]]) -> bool {
        self[..].float_slices(outs)
    }
}

/// The targets of a tuple of named views, each of its own element type.
macro_rules! tuple_targets {
    ($n:expr; $($t:ident $d:ident $i:tt),+) => {
        impl<$($t: Element, $d: Dimension),+> sealed::Sealed for ($((&str, ArrayViewMut<'_, $t, $d>),)+) {}
        impl<$($t: Element, $d: Dimension),+> InPlaceTargets for ($((&str, ArrayViewMut<'_, $t, $d>),)+) {
            fn count(&self) -> usize {
                $n
            }
            fn name(&self, o: usize) -> &str {
                match o {
                    $($i => self.$i.0,)+
                    _ => unreachable!("a target of the tuple"),
                }
            }
            fn form(&self, o: usize) -> (ElemType, &[usize], &[isize]) {
                match o {
                    $($i => ($t::ELEM, self.$i.1.shape(), self.$i.1.strides()),)+
                    _ => unreachable!("a target of the tuple"),
                }
            }
            fn arg(&self, o: usize) -> ArrayArg<'_> {
                match o {
                    $($i => $t::arg(self.$i.1.view()),)+
                    _ => unreachable!("a target of the tuple"),
                }
            }
            fn buffers(&mut self) -> Option<SmallVec<[OutSlice<'_>; 4]>> {
                let mut bufs = SmallVec::new();
                $(bufs.push($t::out_buffer(self.$i.1.as_slice_mut()?));)+
                Some(bufs)
            }
            fn assign(&mut self, o: usize, r: Output) -> Result<()> {
                match o {
                    $($i => crate::prepared::assign_view(&mut self.$i.1, r),)+
                    _ => unreachable!("a target of the tuple"),
                }
            }
            fn float_slices<'s, L: crate::array::Float>(&'s mut self, outs: &mut [&'s mut [L]]) -> bool {
                if outs.len() != $n {
                    return false;
                }
                $(
                    match self.$i.1.as_slice_mut().and_then($t::as_float_mut::<L>) {
                        Some(s) => outs[$i] = s,
                        None => return false,
                    }
                )+
                true
            }
        }
        impl<$($t: Element, $d: Dimension),+> sealed::Sealed for InPlace<($((&str, ArrayViewMut<'_, $t, $d>),)+)> {}
        impl<$($t: Element, $d: Dimension),+> Results for InPlace<($((&str, ArrayViewMut<'_, $t, $d>),)+)> {
            type Out = ();
            #[inline]
            fn deliver(mut self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
                runner.update(inputs, &mut self.0)
            }
        }
    };
}
tuple_targets!(2; A0 D0 0, A1 D1 1);
tuple_targets!(3; A0 D0 0, A1 D1 1, A2 D2 2);
tuple_targets!(4; A0 D0 0, A1 D1 1, A2 D2 2, A3 D3 3);

impl sealed::Sealed for Fresh {}
impl Results for Fresh {
    type Out = Output;
    #[inline]
    fn deliver(self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Output> {
        runner.fresh(inputs)
    }
}

impl ResultsAt for Fresh {
    #[inline]
    fn deliver_at(self, handle: &Prepared, inputs: &[ArrayArg<'_>]) -> Result<Output> {
        handle.run(inputs)
    }
}

impl sealed::Sealed for FreshAll {}
impl Results for FreshAll {
    type Out = Vec<Output>;
    fn deliver(self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<Vec<Output>> {
        runner.fresh_all(inputs)
    }
}

impl ResultsAt for FreshAll {
    fn deliver_at(self, handle: &Prepared, inputs: &[ArrayArg<'_>]) -> Result<Vec<Output>> {
        handle.run_all(inputs)
    }
}

impl<A: Element, D: Dimension> sealed::Sealed for ArrayViewMut<'_, A, D> {}
impl<A: Element, D: Dimension> Results for ArrayViewMut<'_, A, D> {
    type Out = ();
    #[inline]
    fn deliver(self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
        runner.deliver_out(inputs, self)
    }
}

impl<A: Element, D: Dimension> ResultsAt for ArrayViewMut<'_, A, D> {
    #[inline]
    fn deliver_at(self, handle: &Prepared, inputs: &[ArrayArg<'_>]) -> Result<()> {
        handle.run_into_view(inputs, self)
    }
}

impl<A: Element, D: Dimension> sealed::Sealed for &mut [ArrayViewMut<'_, A, D>] {}
impl<A: Element, D: Dimension> Results for &mut [ArrayViewMut<'_, A, D>] {
    type Out = ();
    #[inline]
    fn deliver(self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
        runner.deliver_several(inputs, self)
    }
}

impl<A: Element, D: Dimension> ResultsAt for &mut [ArrayViewMut<'_, A, D>] {
    #[inline]
    fn deliver_at(self, handle: &Prepared, inputs: &[ArrayArg<'_>]) -> Result<()> {
        handle.run_into_many(inputs, self)
    }
}

impl<A: Element, D: Dimension, const N: usize> sealed::Sealed for &mut [ArrayViewMut<'_, A, D>; N] {}
impl<A: Element, D: Dimension, const N: usize> Results for &mut [ArrayViewMut<'_, A, D>; N] {
    type Out = ();
    #[inline]
    fn deliver(self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
        runner.deliver_several(inputs, &mut self[..])
    }
}

impl<A: Element, D: Dimension, const N: usize> ResultsAt for &mut [ArrayViewMut<'_, A, D>; N] {
    #[inline]
    fn deliver_at(self, handle: &Prepared, inputs: &[ArrayArg<'_>]) -> Result<()> {
        handle.run_into_many(inputs, &mut self[..])
    }
}

/// Several results into a tuple of views, each of its own element type (`(a.view_mut(),
/// m.view_mut())` for `x*2; x > 0`).
macro_rules! tuple_results {
    ($($t:ident $d:ident),+) => {
        impl<$($t: Element, $d: Dimension),+> sealed::Sealed for ($(ArrayViewMut<'_, $t, $d>,)+) {}
        impl<$($t: Element, $d: Dimension),+> Results for ($(ArrayViewMut<'_, $t, $d>,)+) {
            type Out = ();
            #[inline]
            fn deliver(mut self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
                runner.deliver_several(inputs, &mut self)
            }
        }
        impl<$($t: Element, $d: Dimension),+> ResultsAt for ($(ArrayViewMut<'_, $t, $d>,)+) {
            #[inline]
            fn deliver_at(mut self, handle: &Prepared, inputs: &[ArrayArg<'_>]) -> Result<()> {
                handle.check(inputs)?;
                handle.run_outs_checked(inputs, &mut self)
            }
        }
    };
}
tuple_results!(A0 D0, A1 D1);
tuple_results!(A0 D0, A1 D1, A2 D2);
tuple_results!(A0 D0, A1 D1, A2 D2, A3 D3);

impl<T: InPlaceTargets + ?Sized> sealed::Sealed for InPlace<&mut T> {}
impl<T: InPlaceTargets + ?Sized> Results for InPlace<&mut T> {
    type Out = ();
    #[inline]
    fn deliver(self, runner: &FusedRunner, inputs: &[(&str, ArrayArg<'_>)]) -> Result<()> {
        runner.update(inputs, self.0)
    }
}

impl FusedRunner {
    /// Runs the expression on `inputs` (by name; names it does not use are ignored) and delivers
    /// its results where `to` says: [`Fresh`] (returned), [`FreshAll`], your array
    /// (`out.view_mut()`: of the result's shape and element type), one array per result
    /// (`&mut [a.view_mut(), b.view_mut()]`), or [`InPlace`] into inputs. The one way to run: see the
    /// module doc for the table. A call whose signature (names in order, dtypes, shapes, layouts) is
    /// one of the last few goes straight to the compiled code bound to it; every check on the
    /// inputs and outputs still runs.
    ///
    /// ```
    /// use kiln::{Fresh, FusedRunner};
    /// use ndarray::{Array1, array};
    /// let r = FusedRunner::compile_text("a*x + y")?;
    /// let (a, x, y) = (ndarray::arr0(2.0), array![1.0, 2.0], array![10.0, 20.0]);
    /// let inputs = [("a", (&a).into()), ("x", (&x).into()), ("y", (&y).into())];
    /// let fresh = r.call(&inputs, Fresh)?.into_f64();
    /// let mut out = Array1::<f64>::zeros(2);
    /// r.call(&inputs, out.view_mut())?;
    /// assert_eq!(fresh, out.into_dyn());
    ///
    /// // several results of several types, each into your array of its type
    /// let two = FusedRunner::compile_text("x*2; x > 1.5")?;
    /// let (mut twice, mut big) = (Array1::<f64>::zeros(2), Array1::<bool>::default(2));
    /// two.call(&inputs, (twice.view_mut(), big.view_mut()))?;
    /// assert_eq!((twice, big), (array![2.0, 4.0], array![false, true]));
    /// # Ok::<(), kiln::Error>(())
    /// ```
    ///
    /// # Errors
    /// A missing or repeated name, shapes that do not broadcast, an axis out of range, a min, max,
    /// argmin or argmax over an empty extent (without `initial`), a size overflow, a backend failure;
    /// an output that does not fit its result (a count, shape, type or layout: the error says which);
    /// an update that is not safe in place (the error says why).
    #[inline]
    pub fn call<R: Results>(&self, inputs: &[(&str, ArrayArg<'_>)], to: R) -> Result<R::Out> {
        to.deliver(self, inputs)
    }
}

impl Prepared {
    /// [`FusedRunner::call`] by position: `inputs` in the order the handle was bound with, of the
    /// dtypes, shapes and layouts it was bound with (checked), the results delivered where `to`
    /// says ([`Fresh`], [`FreshAll`], your array, one array per result). In place, a handle updates
    /// slices: [`Prepared::update`].
    ///
    /// ```
    /// use kiln::{Fresh, FusedRunner};
    /// use ndarray::{Array1, array};
    /// let r = FusedRunner::compile_text("x*2 + y")?;
    /// let (x, y) = (array![1.0, 2.0], array![10.0, 20.0]);
    /// let h = r.prepared(&[("x", (&x).into()), ("y", (&y).into())])?;
    /// let mut out = Array1::<f64>::zeros(2);
    /// h.call(&[(&x).into(), (&y).into()], out.view_mut())?;
    /// assert_eq!(h.call(&[(&x).into(), (&y).into()], Fresh)?.into_f64(), out.into_dyn());
    /// # Ok::<(), kiln::Error>(())
    /// ```
    ///
    /// # Errors
    /// A count of inputs other than the bound one, an input of another dtype or shape than bound
    /// (the error names its position and name), an output that does not fit its result, and the
    /// errors of [`FusedRunner::call`].
    #[inline]
    pub fn call<R: ResultsAt>(&self, inputs: &[ArrayArg<'_>], to: R) -> Result<R::Out> {
        to.deliver_at(self, inputs)
    }
}
