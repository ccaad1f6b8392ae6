//! Which memory kiln's calls are reading and writing, so that kiln never writes an array a running
//! call of kiln reads.
//!
//! A call reads its input arrays through Rust shared references (views and slices, see
//! `Held::arg`), which nothing may write while they live; kiln's only writer of a caller's array is
//! an `out=` call. Each call claims the bytes of its input arrays for reading, and an `out=` call
//! claims `out`'s bytes for writing, in one registry under a lock: a claim that overlaps another
//! call's claim of the other kind (or a write beside a write) is refused with a `ValueError`,
//! never waited for, so a call can neither deadlock nor be reentered into a conflict. The claims
//! are given back when the call ends.
//!
//! This is the `numpy` crate's borrow tracking restricted to what kiln needs, at a fraction of its
//! cost (the crate's flags took 1.6k instructions per input array, a third of a call at N = 100):
//! one lock, a short scan of the claims in flight, no hashing. Writers outside kiln (NumPy's ufuncs,
//! other C extensions) take no claims and are not excluded, as with the crate's flags.

use numpy::PyUntypedArrayMethods;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

/// One call's claim on the bytes `[lo, hi)`.
struct Claim {
    call: u64,
    lo: usize,
    hi: usize,
    write: bool,
}

/// Every claim of the calls in flight.
static CLAIMS: Mutex<Vec<Claim>> = Mutex::new(Vec::new());
/// The number of the next call that claims.
static NEXT: AtomicU64 = AtomicU64::new(0);

/// The bytes `[lo, hi)` the elements of `a` (of `itemsize` bytes) lie in, or None for an empty
/// array.
pub(crate) fn extent(a: &Bound<'_, numpy::PyUntypedArray>, itemsize: usize) -> Option<(usize, usize)> {
    let shape = a.shape();
    if shape.contains(&0) {
        return None;
    }
    // SAFETY: `a` is a live NumPy array (borrowed), whose object header holds its data pointer;
    // only the pointer's value is read, never the data
    let data = unsafe { (*a.as_array_ptr()).fields.data } as usize;
    let (mut lo, mut hi) = (data as i128, data as i128 + itemsize as i128);
    for (&d, &s) in shape.iter().zip(a.strides()) {
        let span = (d as i128 - 1) * s as i128;
        if span < 0 { lo += span } else { hi += span }
    }
    Some((usize::try_from(lo).ok()?, usize::try_from(hi).ok()?))
}

/// Whether two elements of `a` (of `itemsize` bytes) may share bytes: a view made by
/// `as_strided` with a zero or too small stride. Sufficient, not exact: the axes of more than one
/// element sorted by the size of their stride, each stride must pass the extent the smaller axes
/// span (a C, F or any sliced layout of distinct elements passes). Such an `out=` is written
/// through a temporary, never made into a mutable view whose elements alias.
pub(crate) fn overlaps_itself(a: &Bound<'_, numpy::PyUntypedArray>, itemsize: usize) -> bool {
    let mut axes: Vec<(u128, u128)> = a
        .shape()
        .iter()
        .zip(a.strides())
        .filter(|&(&d, _)| d > 1)
        .map(|(&d, &s)| (s.unsigned_abs() as u128, d as u128))
        .collect();
    axes.sort_unstable();
    let mut reach = itemsize as u128;
    for (stride, d) in axes {
        if stride < reach {
            return true;
        }
        reach += stride * (d - 1);
    }
    false
}

/// One call's claims, given back when it is dropped.
pub(crate) struct Claims {
    call: u64,
}

impl Claims {
    /// Claims `reads` (each the extent of an input array and its name) for reading: a `ValueError`
    /// naming the first that another call is writing (as its `out=`).
    pub(crate) fn read<'n>(reads: impl IntoIterator<Item = ((usize, usize), &'n str)>) -> PyResult<Claims> {
        let call = NEXT.fetch_add(1, Ordering::Relaxed);
        let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
        let start = claims.len();
        for ((lo, hi), name) in reads {
            if claims[..start].iter().any(|c| c.write && c.lo < hi && lo < c.hi) {
                claims.truncate(start);
                return Err(PyValueError::new_err(format!(
                    "input '{name}' cannot be read: another call is writing it (is it another call's out=?)"
                )));
            }
            claims.push(Claim {
                call,
                lo,
                hi,
                write: false,
            });
        }
        Ok(Claims { call })
    }

    /// Claims `extent` (the bytes of an `out=` array) for writing: a `ValueError` if any call in
    /// flight reads or writes any of them (this call's own inputs included).
    pub(crate) fn write(extent: Option<(usize, usize)>) -> PyResult<Claims> {
        let call = NEXT.fetch_add(1, Ordering::Relaxed);
        if let Some((lo, hi)) = extent {
            let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
            if claims.iter().any(|c| c.lo < hi && lo < c.hi) {
                return Err(PyValueError::new_err(
                    "out= cannot be written: it is in use by another call, or it is one of this call's inputs",
                ));
            }
            claims.push(Claim {
                call,
                lo,
                hi,
                write: true,
            });
        }
        Ok(Claims { call })
    }
}

impl Drop for Claims {
    fn drop(&mut self) {
        let mut claims = CLAIMS.lock().unwrap_or_else(|e| e.into_inner());
        claims.retain(|c| c.call != self.call);
    }
}
