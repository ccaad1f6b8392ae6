//! The `bounds` fuzz target's check, shared with `tests/fuzz_regressions.rs` (which replays the
//! committed inputs): shapes, strides and offsets, no read or write outside the arrays.
//! AddressSanitizer sees only the Rust side, so every input and the output are also placed against
//! a `PROT_NONE` guard page (the case's first byte picks which end): an overrun by compiled code
//! faults at once.

use super::random_kernel::{self, Data, View};
use arbitrary::Unstructured;
use kiln::{ArrayArg, FusedRunner};
use ndarray::{ArrayViewD, ArrayViewMutD, IxDyn, ShapeBuilder};

const PAGE: usize = 4096;

/// `n` elements of `T` in their own mapping, flush against a guard page before or after them.
struct Guarded<T> {
    map: *mut u8,
    map_len: usize,
    data: *mut T,
    n: usize,
}

impl<T: Copy> Guarded<T> {
    fn new(values: &[T], at_end: bool) -> Guarded<T> {
        let n = values.len();
        let bytes = std::mem::size_of_val(values).max(1);
        let pages = bytes.div_ceil(PAGE);
        let map_len = (pages + 2) * PAGE;
        // SAFETY: a fresh anonymous private mapping; the two guard pages are its first and last page,
        // and the data lies between them, aligned for T (page offsets and multiples of size_of::<T>()).
        unsafe {
            let map = libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            ) as *mut u8;
            assert!(map as isize != -1, "mmap failed");
            libc::mprotect(map as *mut _, PAGE, libc::PROT_NONE);
            libc::mprotect(map.add((pages + 1) * PAGE) as *mut _, PAGE, libc::PROT_NONE);
            let start = if at_end {
                map.add((pages + 1) * PAGE - std::mem::size_of_val(values))
            } else {
                map.add(PAGE)
            };
            let data = start as *mut T;
            std::ptr::copy_nonoverlapping(values.as_ptr(), data, n);
            Guarded {
                map,
                map_len,
                data,
                n,
            }
        }
    }
}

impl<T> Drop for Guarded<T> {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; no view of it outlives `self`.
        unsafe { libc::munmap(self.map as *mut _, self.map_len) };
    }
}

/// A view of guarded memory with the shape and layout of `a`, then modified as `view` says.
fn guarded_view<'a, T: Copy>(g: &'a Guarded<T>, a: &ndarray::ArrayD<T>, view: View) -> ArrayViewD<'a, T> {
    let shape = IxDyn(a.shape());
    // SAFETY: `g` holds exactly a.len() elements laid out as `a` is (C order, or F order for the
    // transposed case), and lives as long as the view.
    let v = unsafe {
        if view == View::Transposed {
            ArrayViewD::from_shape_ptr(shape.f(), g.data)
        } else {
            ArrayViewD::from_shape_ptr(shape, g.data)
        }
    };
    debug_assert_eq!(g.n, a.len());
    view.of(v)
}

fn memory_order<T: Copy>(a: &ndarray::ArrayD<T>) -> Vec<T> {
    a.as_slice_memory_order().expect("built contiguous").to_vec()
}

/// The `bounds` target's check: the case drawn from `data` (its first byte picks the guard page's
/// end) run on both JIT schedules with every input and the output flush against a guard page.
pub fn check(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let at_end = first & 1 == 0;
    let mut u = Unstructured::new(rest);
    let Ok(case) = random_kernel::Case::arbitrary(&mut u) else {
        return;
    };
    let mut g64 = Vec::new();
    let mut g32 = Vec::new();
    for (_, d, _) in &case.inputs {
        match d {
            Data::F64(a) => g64.push(Guarded::new(&memory_order(a), at_end)),
            Data::F32(a) => g32.push(Guarded::new(&memory_order(a), at_end)),
        }
    }
    let (mut i64s, mut i32s) = (g64.iter(), g32.iter());
    let args: Vec<(&str, ArrayArg<'_>)> = case
        .inputs
        .iter()
        .map(|(name, d, view)| {
            let arg = match d {
                Data::F64(a) => ArrayArg::from(guarded_view(i64s.next().unwrap(), a, *view)),
                Data::F32(a) => ArrayArg::from(guarded_view(i32s.next().unwrap(), a, *view)),
            };
            (name.as_str(), arg)
        })
        .collect();
    for backend in ["jit", "jit-scalar"] {
        let Ok(runner) = FusedRunner::compile(&case.expr) else {
            return;
        };
        let runner = runner.with_backend(kiln::backend_by_name(backend).unwrap());
        let Ok(out) = runner.run(&args) else { continue };
        // the same kernel into a guarded output of the result's shape (maps write it directly)
        if let kiln::Output::F64(r) = &out {
            let g = Guarded::new(&vec![0.0f64; r.len()], at_end);
            // SAFETY: `g` holds r.len() elements, C order, for the life of the view.
            let view = unsafe { ArrayViewMutD::from_shape_ptr(IxDyn(r.shape()), g.data) };
            let _ = runner.run_into(&args, view);
        } else if let kiln::Output::F32(r) = &out {
            let g = Guarded::new(&vec![0.0f32; r.len()], at_end);
            // SAFETY: as above.
            let view = unsafe { ArrayViewMutD::from_shape_ptr(IxDyn(r.shape()), g.data) };
            let _ = runner.run_into(&args, view);
        }
    }
}
