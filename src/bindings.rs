//! The bindings a runner keeps of its recent call signatures: what makes the ordinary call fast.
//!
//! A [`FusedRunner::run`](crate::FusedRunner::run) or [`FusedRunner::run_into`](crate::FusedRunner::run_into) names its inputs, and each name has to be
//! found, the specialisation looked up and the plan's stages walked before the compiled code runs:
//! about a microsecond, the whole cost of a kernel over a hundred elements. A runner therefore keeps
//! the [`Prepared`] handles of the last few call signatures (the names in the order given, and each
//! input's dtype, shape and layout). A call whose signature is one of them goes straight to that
//! handle, which calls the compiled code (see [`crate::prepared`]): a comparison of the names and
//! forms, no lock for the first signature bound (one uncontended lock for the others), no hashing, and no allocation for a map or scan into a given output.
//!
//! A call with a new signature binds it: a fresh result ([`crate::Fresh`], [`crate::FreshAll`])
//! keeps the handle its run made (one run); one result into your array binds one without running
//! where the expression is one kernel, else by the call's own run, whose result is assigned; several
//! results into your arrays are bound by the call's own run too; a fold into your array
//! ([`crate::Accumulate`]) binds one without running where the expression is one kernel whose
//! inputs are read in their given order (else it folds by name at each call, a fold cannot take a
//! run's result, unless another way of calling kept a handle for the signature). A caller that calls the handle
//! itself finds it by [`FusedRunner::bound`](crate::FusedRunner::bound) (the Python package, for
//! results into arrays NumPy allocates). An in-place update ([`crate::InPlace`], [`FusedRunner::run_update`](crate::FusedRunner::run_update), so
//! `fuse_assign`) keeps update handles alike ([`FusedRunner::prepared_update`](crate::FusedRunner::prepared_update) of the updated
//! inputs, bound last; without a run where the plan is one kernel), and also keeps a handle that
//! cannot update in one pass, so that a repeated call of its signature goes straight to the copying
//! update. Everything a call checks on the caller's buffers (count, dtypes, shapes, layouts, the
//! outputs' fit) is checked at every call, bound or not.

use crate::array::ArrayArg;
use crate::prepared::Prepared;
use std::ops::Deref;
use std::sync::{Arc, Mutex, OnceLock};

/// At most this many signatures are kept per runner besides the first, the most recent first (the
/// Python package's kernels, which keep none of their own, see as many forms).
const KEPT: usize = 8;

/// A runner's bound signatures (shared by its clones; a runner with other settings gets its own).
#[derive(Debug, Default)]
pub(crate) struct Bindings {
    runs: Kept,
    /// The update handles of in-place calls' signatures (the updated inputs bound last).
    updates: Kept,
}

/// One kind of bound handle: the first bound, and the most recent others.
#[derive(Debug, Default)]
struct Kept {
    first: OnceLock<Prepared>,
    recent: Mutex<Vec<Arc<Prepared>>>,
}

/// A handle a runner keeps for a call signature ([`crate::FusedRunner::bound`]): borrowed (the
/// first bound) or shared (one of the recent, which a later bind may drop from the list while it
/// runs). It derefs to the [`Prepared`] handle.
#[derive(Debug)]
pub enum BoundHandle<'a> {
    /// The runner's first bound handle.
    First(&'a Prepared),
    /// One of the runner's recent handles.
    Recent(Arc<Prepared>),
}

pub(crate) use BoundHandle as Bound;

impl Deref for Bound<'_> {
    type Target = Prepared;
    fn deref(&self) -> &Prepared {
        match self {
            Bound::First(p) => p,
            Bound::Recent(p) => p,
        }
    }
}

impl Kept {
    /// The handle that `fits`: the first, else the first of the recent (moved to the front).
    #[inline(always)]
    fn find(&self, fits: impl Fn(&Prepared) -> bool) -> Option<Bound<'_>> {
        match self.first.get() {
            Some(p) if fits(p) => Some(Bound::First(p)),
            // nothing is in the list before the first is set
            None => None,
            Some(_) => front(&self.recent, fits).map(Bound::Recent),
        }
    }

    /// Keeps `handle`: as the first if none is, else in front of at most [`KEPT`] - 1 others; the
    /// handle as kept.
    fn keep(&self, handle: Prepared) -> Bound<'_> {
        match self.first.set(handle) {
            Ok(()) => Bound::First(self.first.get().expect("just set")),
            Err(handle) => Bound::Recent(push(&self.recent, handle)),
        }
    }
}

impl Bindings {
    /// The handle bound to the signature of `inputs`, if one is kept (inlined into each call: the
    /// ordinary call's hot path).
    #[inline(always)]
    pub(crate) fn find(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Option<Bound<'_>> {
        self.runs.find(|p| p.accepts_named(inputs))
    }

    /// The handle kept for a call of C-contiguous inputs of these element types and shapes, given
    /// in the runner's order of inputs, if one is.
    #[inline]
    pub(crate) fn find_c_order(&self, forms: &[(kiln_ir::ElemType, &[usize])]) -> Option<Bound<'_>> {
        self.runs.find(|p| p.accepts_c_order(forms))
    }

    /// Keeps `handle` (the first, or in front of at most [`KEPT`] - 1 others); the handle as kept.
    pub(crate) fn keep(&self, handle: Prepared) -> Bound<'_> {
        self.runs.keep(handle)
    }

    /// The update handle bound to an update of `targets` from `inputs`, if one is kept.
    pub(crate) fn find_update<T: crate::InPlaceTargets + ?Sized>(
        &self,
        inputs: &[(&str, ArrayArg<'_>)],
        targets: &T,
    ) -> Option<Bound<'_>> {
        self.updates.find(|p| p.accepts_update(inputs, targets))
    }

    /// Keeps an update handle.
    pub(crate) fn keep_update(&self, handle: Prepared) {
        self.updates.keep(handle);
    }
}

/// The first handle of `list` that `fits`, moved to the front.
fn front(list: &Mutex<Vec<Arc<Prepared>>>, fits: impl Fn(&Prepared) -> bool) -> Option<Arc<Prepared>> {
    let mut list = list.lock().unwrap_or_else(|e| e.into_inner());
    let i = list.iter().position(|p| fits(p))?;
    if i > 0 {
        let p = list.remove(i);
        list.insert(0, p);
    }
    Some(list[0].clone())
}

fn push(list: &Mutex<Vec<Arc<Prepared>>>, handle: Prepared) -> Arc<Prepared> {
    let mut list = list.lock().unwrap_or_else(|e| e.into_inner());
    let handle = Arc::new(handle);
    list.insert(0, handle.clone());
    list.truncate(KEPT);
    handle
}
