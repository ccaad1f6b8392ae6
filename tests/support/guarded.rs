//! The `bounds` fuzz target's check, shared with `tests/fuzz_regressions.rs` (which replays the
//! committed inputs): shapes, strides and offsets, no read or write outside the arrays.
//! AddressSanitizer sees only the Rust side, so every input and the output are also placed against
//! a `PROT_NONE` guard page (the case's first byte picks which end): an overrun by compiled code
//! faults at once.

use super::random_kernel::{self, Data, Elem, View, each_data};
use arbitrary::Unstructured;
use kiln::{ArrayArg, FusedRunner};
use ndarray::{ArrayViewD, ArrayViewMutD, IxDyn, ShapeBuilder};

const PAGE: usize = 4096;

/// The bytes of `n` elements in their own mapping, flush against a guard page before or after them.
struct Guarded {
    map: *mut u8,
    map_len: usize,
    data: *mut u8,
    n: usize,
}

impl Guarded {
    fn new<T: Copy>(values: &[T], at_end: bool) -> Guarded {
        let n = values.len();
        let size = std::mem::size_of_val(values);
        let pages = size.max(1).div_ceil(PAGE);
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
            let data = if at_end {
                map.add((pages + 1) * PAGE - size)
            } else {
                map.add(PAGE)
            };
            std::ptr::copy_nonoverlapping(values.as_ptr() as *const u8, data, size);
            Guarded {
                map,
                map_len,
                data,
                n,
            }
        }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; no view of it outlives `self`.
        unsafe { libc::munmap(self.map as *mut _, self.map_len) };
    }
}

/// `a`'s elements in memory order, flush against a guard page.
fn guard<T: Copy>(a: &ndarray::ArrayD<T>, at_end: bool) -> Guarded {
    Guarded::new(a.as_slice_memory_order().expect("built contiguous"), at_end)
}

/// A view of guarded memory with the shape and layout of `a` (whose elements `g` holds), then
/// modified as `view` says, as an input.
fn guarded_arg<'a, T: Elem>(g: &'a Guarded, a: &ndarray::ArrayD<T>, view: View) -> ArrayArg<'a> {
    let shape = IxDyn(a.shape());
    assert_eq!(g.n, a.len());
    // SAFETY: `g` holds exactly a.len() elements of T laid out as `a` is (C order, or F order for
    // the transposed case), aligned, and lives as long as the view.
    let v: ArrayViewD<'a, T> = unsafe {
        if view == View::Transposed {
            ArrayViewD::from_shape_ptr(shape.f(), g.data as *const T)
        } else {
            ArrayViewD::from_shape_ptr(shape, g.data as *const T)
        }
    };
    T::arg(view.of(v))
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
    let guards: Vec<Guarded> = case
        .inputs
        .iter()
        .map(|(_, d, _)| each_data!(d, a => guard(a, at_end)))
        .collect();
    let args: Vec<(&str, ArrayArg<'_>)> = case
        .inputs
        .iter()
        .zip(&guards)
        .map(|((name, d, view), g)| (name.as_str(), each_data!(d, a => guarded_arg(g, a, *view))))
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
            // SAFETY: `g` holds r.len() f64 elements, C order, for the life of the view.
            let view = unsafe { ArrayViewMutD::from_shape_ptr(IxDyn(r.shape()), g.data as *mut f64) };
            let _ = runner.run_into(&args, view);
        } else if let kiln::Output::F32(r) = &out {
            let g = Guarded::new(&vec![0.0f32; r.len()], at_end);
            // SAFETY: as above.
            let view = unsafe { ArrayViewMutD::from_shape_ptr(IxDyn(r.shape()), g.data as *mut f32) };
            let _ = runner.run_into(&args, view);
        }
    }
}
