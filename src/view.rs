//! [`View`]: the view of one input as a call passes it, in the dimensionality it was given in.
//!
//! An ndarray view of any dimension becomes an `ArrayViewD` by copying its shape and strides into
//! `IxDyn`s: about a hundred instructions an input, a third of what a bound call of a small kernel
//! costs in all. Most inputs are scalars (0-d) and vectors (1-d), so a [`View`] keeps those as
//! they are (a pointer and at most two words) and every other dimensionality as an `ArrayViewD`.
//! What a call reads on its fast path (the shape, the strides, the elements of a C-contiguous view)
//! is read from the view as it is; a slow path that computes with ndarray takes the `ArrayViewD`
//! ([`View::to_dyn`]), converted there.

use ndarray::{ArrayView, ArrayView0, ArrayView1, ArrayViewD, Dimension, Ix0, Ix1};

/// The view of one input: an ndarray view of elements of `T`, of any dimension and strides.
#[derive(Debug)]
pub struct View<'a, T>(Repr<'a, T>);

#[derive(Debug)]
enum Repr<'a, T> {
    D0(ArrayView0<'a, T>),
    D1(ArrayView1<'a, T>),
    Dyn(ArrayViewD<'a, T>),
}

/// `$body` with `$v` bound to the ndarray view inside `$view`, whatever its dimensionality.
macro_rules! on_repr {
    ($view:expr, $v:ident => $body:expr) => {
        match $view {
            Repr::D0($v) => $body,
            Repr::D1($v) => $body,
            Repr::Dyn($v) => $body,
        }
    };
}

// a view is a pointer and its shape: cloned whatever `T` is (derive would ask `T: Clone`)
impl<T> Clone for View<'_, T> {
    #[inline]
    fn clone(&self) -> Self {
        View(match &self.0 {
            Repr::D0(v) => Repr::D0(*v),
            Repr::D1(v) => Repr::D1(*v),
            Repr::Dyn(v) => Repr::Dyn(v.clone()),
        })
    }
}

impl<'a, T> View<'a, T> {
    /// The shape.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        on_repr!(&self.0, v => v.shape())
    }

    /// The strides, in elements.
    #[inline]
    pub fn strides(&self) -> &[isize] {
        on_repr!(&self.0, v => v.strides())
    }

    /// The number of dimensions.
    #[inline]
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }

    /// The number of elements.
    #[inline]
    pub fn len(&self) -> usize {
        on_repr!(&self.0, v => v.len())
    }

    /// Whether it has no elements.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether its elements are C-contiguous (ndarray's standard layout).
    #[inline]
    pub fn is_standard_layout(&self) -> bool {
        on_repr!(&self.0, v => v.is_standard_layout())
    }

    /// The address of its element at index 0.
    #[inline]
    pub fn as_ptr(&self) -> *const T {
        on_repr!(&self.0, v => v.as_ptr())
    }

    /// Its elements in C order, where it is C-contiguous.
    #[inline]
    pub fn to_slice(&self) -> Option<&'a [T]> {
        match &self.0 {
            Repr::D0(v) => v.to_slice(),
            // a vector's one test: unit stride, or at most one element
            Repr::D1(v) => v.to_slice(),
            Repr::Dyn(v) => v.to_slice(),
        }
    }

    /// The same view, borrowed for a shorter time.
    #[inline]
    pub fn view(&self) -> View<'_, T> {
        View(match &self.0 {
            Repr::D0(v) => Repr::D0(v.view()),
            Repr::D1(v) => Repr::D1(v.view()),
            Repr::Dyn(v) => Repr::Dyn(v.view()),
        })
    }

    /// The view as an `ArrayViewD` (its shape and strides copied where it has 0 or 1 dimensions).
    pub fn to_dyn(&self) -> ArrayViewD<'a, T> {
        self.clone().into_dyn()
    }

    /// The view as an `ArrayViewD`.
    pub fn into_dyn(self) -> ArrayViewD<'a, T> {
        on_repr!(self.0, v => v.into_dyn())
    }
}

impl<'a, T, D: Dimension> From<ArrayView<'a, T, D>> for View<'a, T> {
    /// Keeps a 0-d or 1-d view as one (for `Ix0` and `Ix1` a move; a dynamic view's one or no axis
    /// is converted here, once), any other as an `ArrayViewD`.
    #[inline]
    fn from(v: ArrayView<'a, T, D>) -> View<'a, T> {
        let repr = match v.ndim() {
            0 => v
                .clone()
                .into_dimensionality::<Ix0>()
                .map_or_else(|_| Repr::Dyn(v.into_dyn()), Repr::D0),
            1 => v
                .clone()
                .into_dimensionality::<Ix1>()
                .map_or_else(|_| Repr::Dyn(v.into_dyn()), Repr::D1),
            _ => Repr::Dyn(v.into_dyn()),
        };
        View(repr)
    }
}
