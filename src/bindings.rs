//! The bindings a runner keeps of its recent call signatures: what makes the ordinary call fast.
//!
//! A [`FusedRunner::run`] or [`FusedRunner::run_into`] names its inputs, and each name has to be
//! found, the specialisation looked up and the plan's stages walked before the compiled code runs:
//! about a microsecond, the whole cost of a kernel over a hundred elements. A runner therefore keeps
//! the [`Prepared`] handles of the last few call signatures (the names in the order given, and each
//! input's dtype, shape and layout). A call whose signature is one of them goes straight to that
//! handle, which calls the compiled code (see [`crate::prepared`]): a comparison of the names and
//! forms, one uncontended lock, no hashing, and no allocation for a map or scan into a given output.
//!
//! A call with a new signature binds it: `run` keeps the handle its run made (one run, as before),
//! `run_into` binds one without running where the expression is one kernel (several kernels are
//! bound by the next `run`). Everything a call checks on the caller's buffers (count, dtypes,
//! shapes, layouts, the output's fit) is checked at every call, bound or not.

use crate::array::ArrayArg;
use crate::prepared::Prepared;
use std::sync::{Arc, Mutex};

/// At most this many signatures are kept per runner, the most recent first.
const KEPT: usize = 4;

/// A runner's bound signatures (shared by its clones; a runner with other settings gets its own).
#[derive(Debug, Default)]
pub(crate) struct Bindings {
    recent: Mutex<Vec<Arc<Prepared>>>,
}

impl Bindings {
    /// The handle bound to the signature of `inputs`, if one is kept (moved to the front).
    pub(crate) fn find(&self, inputs: &[(&str, ArrayArg<'_>)]) -> Option<Arc<Prepared>> {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        let i = recent.iter().position(|p| p.accepts_named(inputs))?;
        if i > 0 {
            let p = recent.remove(i);
            recent.insert(0, p);
        }
        Some(recent[0].clone())
    }

    /// Keeps `handle` in front of at most [`KEPT`] - 1 others.
    pub(crate) fn keep(&self, handle: Prepared) {
        let mut recent = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        recent.insert(0, Arc::new(handle));
        recent.truncate(KEPT);
    }
}
