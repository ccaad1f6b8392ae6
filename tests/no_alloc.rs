//! Repeated calls of a bound signature allocate nothing (issue 24): several results of any types
//! written into the caller's arrays (an int64 map of two results, a float map with a bool result,
//! two complex results) and a scan into a given output, through a handle's call, its slice call
//! and the runner's named call. A counting global allocator counts every allocation of this test
//! binary; after a warm-up call (which compiles and binds), the repeated calls must make none.
//! Deterministic: a count, not a time.

use kiln::kiln_ir::num_complex::Complex64;
use kiln::{FusedRunner, Prepared};
use ndarray::Array1;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// The system allocator, counting the allocations of the thread that switched counting on.
struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);
static COUNTING: AtomicBool = AtomicBool::new(false);

thread_local! {
    static COUNTED_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn counted() -> bool {
    COUNTING.load(Ordering::SeqCst) && COUNTED_THREAD.try_with(|c| c.get()).unwrap_or(false)
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is an atomic.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if counted() {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: the caller's contract is System's
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        if counted() {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: the caller's contract is System's
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if counted() {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: the caller's contract is System's
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is System's
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// One test counts at a time (the counter is global).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// The allocations `f` makes on this thread over `calls` calls, after one warm-up call.
fn allocations(calls: usize, mut f: impl FnMut()) -> usize {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    f();
    COUNTED_THREAD.with(|c| c.set(true));
    ALLOCATIONS.store(0, Ordering::SeqCst);
    COUNTING.store(true, Ordering::SeqCst);
    for _ in 0..calls {
        f();
    }
    COUNTING.store(false, Ordering::SeqCst);
    COUNTED_THREAD.with(|c| c.set(false));
    ALLOCATIONS.load(Ordering::SeqCst)
}

const N: usize = 37;

#[test]
fn the_counter_counts() {
    assert!(allocations(3, || drop(std::hint::black_box(vec![0u8; 16]))) >= 3);
}

#[test]
fn an_int64_map_of_two_results_into_given_arrays() {
    let r = FusedRunner::compile_text("i*3; i + 1").unwrap();
    let i = Array1::from_iter((0..N as i64).map(|k| k * 5 - 40));
    let h: Prepared = r.prepared(&[("i", (&i).into())]).unwrap();
    assert!(h.is_direct_many());
    let (mut a, mut b) = (Array1::<i64>::zeros(N), Array1::<i64>::zeros(N));
    let n = allocations(20, || {
        h.call(&[(&i).into()], &mut [a.view_mut(), b.view_mut()]).unwrap();
    });
    assert_eq!(n, 0, "a handle's call");
    assert_eq!(a, i.mapv(|v| v * 3));
    assert_eq!(b, i.mapv(|v| v + 1));
    let (mut sa, mut sb) = (vec![0i64; N], vec![0i64; N]);
    let slice = i.as_slice().unwrap();
    let n = allocations(20, || {
        h.run_slices_many(&[slice], &mut [&mut sa[..], &mut sb[..]])
            .unwrap();
    });
    assert_eq!(n, 0, "a handle's slice call");
    assert_eq!((&sa[..], &sb[..]), (a.as_slice().unwrap(), b.as_slice().unwrap()));
    let n = allocations(20, || {
        r.call(&[("i", (&i).into())], &mut [a.view_mut(), b.view_mut()])
            .unwrap();
    });
    assert_eq!(n, 0, "the runner's call by name");
}

#[test]
fn a_float_map_with_a_bool_result_into_given_arrays() {
    let r = FusedRunner::compile_text("x*2; x > 0").unwrap();
    let x = Array1::from_iter((0..N).map(|k| k as f64 * 0.5 - 4.0));
    let h = r.prepared(&[("x", (&x).into())]).unwrap();
    assert!(h.is_direct_many());
    let (mut twice, mut pos) = (Array1::<f64>::zeros(N), Array1::<bool>::default(N));
    let n = allocations(20, || {
        h.call(&[(&x).into()], (twice.view_mut(), pos.view_mut()))
            .unwrap();
    });
    assert_eq!(n, 0, "a handle's call");
    assert_eq!(twice, x.mapv(|v| v * 2.0));
    assert_eq!(pos, x.mapv(|v| v > 0.0));
    let n = allocations(20, || {
        r.call(&[("x", (&x).into())], (twice.view_mut(), pos.view_mut()))
            .unwrap();
    });
    assert_eq!(n, 0, "the runner's call by name");
}

#[test]
fn two_complex_results_into_given_arrays() {
    let r = FusedRunner::compile_text("z*z; z + z").unwrap();
    let z = Array1::from_iter((0..N).map(|k| Complex64::new(k as f64 - 3.0, 0.25 * k as f64)));
    let h = r.prepared(&[("z", (&z).into())]).unwrap();
    assert!(h.is_direct_many());
    let (mut sq, mut dbl) = (Array1::<Complex64>::zeros(N), Array1::<Complex64>::zeros(N));
    let n = allocations(20, || {
        h.call(&[(&z).into()], &mut [sq.view_mut(), dbl.view_mut()])
            .unwrap();
    });
    assert_eq!(n, 0, "a handle's call");
    assert_eq!(sq, z.mapv(|v| v * v));
    assert_eq!(dbl, z.mapv(|v| v + v));
    let n = allocations(20, || {
        r.call(&[("z", (&z).into())], &mut [sq.view_mut(), dbl.view_mut()])
            .unwrap();
    });
    assert_eq!(n, 0, "the runner's call by name");
}

#[test]
fn a_scan_into_a_given_output() {
    let r = FusedRunner::compile_text("cumsum(x*x)").unwrap();
    let x = Array1::from_iter((0..N).map(|k| k as f64 * 0.25));
    let h = r.prepared(&[("x", (&x).into())]).unwrap();
    let mut out = Array1::<f64>::zeros(N);
    let n = allocations(20, || {
        h.call(&[(&x).into()], out.view_mut()).unwrap();
    });
    assert_eq!(n, 0, "a handle's call");
    let mut acc = 0.0;
    let want = x.mapv(|v| {
        acc += v * v;
        acc
    });
    assert_eq!(out, want);
    let n = allocations(20, || {
        r.call(&[("x", (&x).into())], out.view_mut()).unwrap();
    });
    assert_eq!(n, 0, "the runner's call by name");
}

#[test]
fn axis_reductions_into_given_outputs() {
    // rows and columns of a 4 x 9 matrix: f64 sums fold in the caller's elements, f32 sums in f64
    // accumulators on the stack, min and max in the caller's elements
    let m = ndarray::Array2::from_shape_fn((4, 9), |(i, j)| (i * 9 + j) as f64 * 0.5 - 7.0);
    let m32 = m.mapv(|v| v as f32);
    for (text, axis, rows) in [
        ("sum(m*m, axis=1)", 1, 4),
        ("max(m, axis=0)", 0, 9),
        ("prod(m, axis=0)", 0, 9),
    ] {
        let r = FusedRunner::compile_text(text).unwrap();
        let h = r.prepared(&[("m", (&m).into())]).unwrap();
        let mut out = Array1::<f64>::zeros(rows);
        let n = allocations(20, || h.call(&[(&m).into()], out.view_mut()).unwrap());
        assert_eq!(n, 0, "{text}: a handle's call");
        let want = match text {
            "sum(m*m, axis=1)" => (&m * &m).sum_axis(ndarray::Axis(axis)),
            "max(m, axis=0)" => m.fold_axis(ndarray::Axis(axis), f64::NEG_INFINITY, |a, &b| a.max(b)),
            _ => m.fold_axis(ndarray::Axis(axis), 1.0, |a, &b| a * b),
        };
        assert!(
            out.iter()
                .zip(&want)
                .all(|(a, b)| (a - b).abs() <= 1e-12 * b.abs()),
            "{text}: {out} against {want}"
        );
        let n = allocations(20, || r.run_into(&[("m", (&m).into())], out.view_mut()).unwrap());
        assert_eq!(n, 0, "{text}: the runner's call by name");
        let mut out32 = Array1::<f32>::zeros(rows);
        let n = allocations(20, || {
            r.run_into(&[("m", (&m32).into())], out32.view_mut()).unwrap();
        });
        assert_eq!(n, 0, "{text}: float32, the runner's call by name");
        assert!(
            out32
                .iter()
                .zip(&want)
                .all(|(&a, &b)| (f64::from(a) - b).abs() <= 1e-5 * b.abs()),
            "{text}: float32 {out32} against {want}"
        );
    }
    // bool and integer values: int64 words, narrowed into int32 and bool results
    let i = m.mapv(|v| (v * 2.0) as i32);
    let b = m.mapv(|v| v > 0.0);
    let r = FusedRunner::compile_text("min(i, axis=0)").unwrap();
    let mut out = Array1::<i32>::zeros(9);
    let n = allocations(20, || r.run_into(&[("i", (&i).into())], out.view_mut()).unwrap());
    assert_eq!(n, 0, "min(i, axis=0) of int32: the runner's call by name");
    assert_eq!(out, i.fold_axis(ndarray::Axis(0), i32::MAX, |a, &v| *a.min(&v)));
    let r = FusedRunner::compile_text("any(b, axis=1)").unwrap();
    let mut out = Array1::<bool>::default(4);
    let n = allocations(20, || r.run_into(&[("b", (&b).into())], out.view_mut()).unwrap());
    assert_eq!(n, 0, "any(b, axis=1) of bool: the runner's call by name");
    assert_eq!(out, b.map_axis(ndarray::Axis(1), |row| row.iter().any(|&v| v)));
}

/// A fresh result costs its own array and nothing more: a map or a reduction along an axis
/// below the threshold is written by the bound serial call straight into the array it returns
/// (one allocation a call; the general run allocated its buffers and a tensor, then converted it).
#[test]
fn a_fresh_result_is_its_one_allocation() {
    let x = Array1::from_iter((0..N).map(|k| k as f64 * 0.5 - 4.0));
    let m = ndarray::Array2::from_shape_fn((3, 7), |(i, j)| (i * 7 + j) as i64 - 9);
    let i = Array1::from_iter((0..N as i32).map(|k| k * 3 - 20));
    let mf = m.mapv(|v| v as f64);
    for (text, name, arg) in [
        ("x*2 + 1", "x", kiln::ArrayArg::from(&x)),
        ("x > 0", "x", kiln::ArrayArg::from(&x)),
        ("(i*3 + 1) % 7", "i", kiln::ArrayArg::from(&i)),
        ("sum(m, axis=1)", "m", kiln::ArrayArg::from(&m)),
        ("mean(m, axis=1)", "m", kiln::ArrayArg::from(&mf)),
    ] {
        let r = FusedRunner::compile_text(text).unwrap();
        let args = [(name, arg)];
        let want = r.run(&args).unwrap();
        let n = allocations(20, || drop(std::hint::black_box(r.run(&args).unwrap())));
        assert_eq!(n, 20, "{text}: one allocation a call");
        assert_eq!(r.run(&args).unwrap(), want, "{text}");
    }
}
