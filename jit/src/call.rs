//! The only unsafe code of kiln-jit: owning JIT memory, and calling compiled code.
//!
//! Invariants:
//! - a [`Code`] owns the `JITModule` its entry point lives in, and frees that module's memory only in
//!   `Drop`, when no `&Code` exists any more, so no call can be running and the pointer never escapes;
//! - every kernel (map, reduction or scan) has the one signature `compile::signature` declares, which
//!   is [`KernelFn`]'s ABI;
//! - compiled code runs only through [`dispatch`], which takes the proof ([`Checked`]) that check.rs
//!   checked every input against the plan and the sizes: every input buffer holds every element the
//!   plan makes the code read (contiguous: `n`; per-row runs: the furthest row start plus `row_len`;
//!   per-row splats: the furthest row start; splats: one), and a view read in place
//!   ([`crate::InputRef::View`]) is never made into a slice and is read only at offsets of its own
//!   elements (`check_view`). An input stored in another type than the kernel's
//!   ([`crate::InputRef::Stored`]) is checked to be of exactly the type the code reads (check.rs)
//!   and to hold the same elements in its own type; its pointer is passed scaled up by the ratio of
//!   the element sizes (`InputRef::base`), never dereferenced by Rust, and the code shifts every
//!   address it computes from it back before it loads (exact: every offset is a multiple of the
//!   dtype's size). The serial handles (serial.rs) take such inputs only in `SerialMap::run_refs`
//!   and `SerialReduce::run_refs`, checked there (check.rs `check_serial_refs`) exactly as
//!   `check_run` checks them, and passed as a run passes them. The geometry ([`crate::layout::Geometry`]) is computed by kiln-jit itself
//!   from the checked kernel shape, never taken from the caller;
//! - the output buffers ([`Targets`], allocated by output.rs from the run plan) hold exactly the
//!   elements the segment geometry makes the code write: `dispatch` checks their sizes against the
//!   plan before any call;
//! - a run is cut into *work units* by plan.rs, never by the caller: distinct units write disjoint
//!   memory (a unit is a range of segments, each folding into outputs no other segment touches, into
//!   its own partial slot, or scanning whole blocks with a state row of its own; or a range `[lo, hi)`
//!   within every segment, whose outputs are distinct). The caller's [`Spread`] may run units on any
//!   threads in any order; each unit runs at most once (an atomic claim per unit), so no two calls
//!   write the same memory, and every unit's segment and range bounds are checked against the plan
//!   before the call. Every buffer outlives `Spread::spread`, which returns only when all units are
//!   done (checked: a unit left unclaimed is an error and the result is discarded). A unit of a
//!   chunked whole-array reduction that an earlier unit's partial decided ([`Decides`]) is claimed
//!   and not run: its slot keeps the identity output.rs filled it with before the run;
//! - an input read from the destination ([`crate::InputRef::Destination`], an in-place update) is
//!   read through the same pointer the code writes through, only by a map that reads it at the point
//!   it writes (checked): each element is loaded, in the iteration (and the unit) that stores it,
//!   before it is stored (the stored value depends on the load), and no other unit or iteration
//!   touches it;
//! - a map of several outputs ([`kiln_ir::KernelIR::extra`]), or a reduction of every axis with
//!   further map outputs, finds output `1 + k`'s pointer at `ins[n_in + k]`, after the input
//!   pointers (execute.rs fills them from the caller's buffers, each checked by `check_run` to hold
//!   `n` elements of the type the code stores for that output: a float kernel's dtype, a typed
//!   kernel's own output type, whose address is shifted as a stored input's and shifted back by
//!   each store, `lower.rs` `Gen::store_typed`, so element `i` is written at its own address, at
//!   most `n` of them); each is written at the points of the unit's segments and ranges, so
//!   distinct units write disjoint elements of it as of the map's output; an input read in place from any
//!   output ([`crate::InputRef::Output`]; checked to be of the dtype the code reads it in) obeys the rule above, and the compiled loop computes every
//!   output of a point (so loads every input of it) before it stores any output of that point
//!   (skeleton.rs `item`), so an output that is also an input is never read after it is written,
//!   whichever output reads it;
//! - a byte-string input ([`crate::Stored::Bytes`], at any address) is passed as its first
//!   string's address `p`, scaled as a one-byte stored input's; for string `k` the code computes
//!   `p + k` (shifted back), and from `p` (loaded from `ins`, which nothing writes while the code
//!   runs) `(p + k) * width + p * (1 - width) = p + k * width` (wrapping: exact), the address of a
//!   string the plan reads (`k` below the strings check.rs checked the input holds:
//!   its bytes `k * width .. (k + 1) * width` are in the slice), and hands it to `bytes_op` with
//!   the width, which reads those bytes only;
//! - `zeroed_output` and `uninit_output` only advise the kernel (madvise) about memory they own;
//! - a fresh map or scan output is allocated uninitialised (`uninit_output`, length 0) and given its
//!   length only by `written_output`, which takes the proof ([`Ran`]) that `dispatch` ran every work
//!   unit of the run to completion: a map's or scan's segment geometry writes every point `0..n` of
//!   output 0 (the plan's `n_slots`), each exactly once, so after such a run every element is
//!   initialised (execute.rs calls it only for that output, of that run);
//! - the wide routines (`apply_wide`) are `#[target_feature]` functions, called only after the host is
//!   checked for their features; compiled code calls `wide_block` (and the sincos, binary,
//!   complex division and magnitude block functions) only on its own stack slots and, for a block written
//!   straight into the output, on its work unit's run of output 0 (as [`Io::From`] where the
//!   argument is read elsewhere: elements the routine only writes, which need not hold values
//!   yet); the kept reductions' row steps (`kept_group`, `kept_single`, `kept_extreme`, and a
//!   typed kernel's `kept_int`, `kept_int_group` into its int64 words) only over the input
//!   elements and outputs its own loop would read and write, and the trailing extremes' fold
//!   (`trailing_extreme`) and the trailing sums' folds (`trailing_sum`, whose accumulators are a
//!   stack slot of the kernel's, and `trailing_int_sum`) only over a row's runs its own loop
//!   would read; the block
//!   functions' sources, the kept rows and the folded runs are the places where an input's run is
//!   made into a slice: a plain run of a checked row that the kernel's own loads would read,
//!   read-only, not written by anyone during the call. (A folded run or a kept row may be a typed
//!   kernel's int64, int32 or bool input, which is stored: its pointer is the code's, shifted back,
//!   as the code's own loads shift it: by nothing for int64 in 8-byte lanes, by 1 for int32 in
//!   them, by 3 for a bool.)
#![allow(unsafe_code)]

/// The byte strings' comparison compiled code calls per lane ([`crate::bytes::SYMBOL`]): `op` (a
/// code of [`crate::bytes::code`]) of the `wa` bytes at `a` and the `wb` bytes at `b`, as 1 or 0:
/// the interpreter's own [`kiln_ir::bytes::eval`].
extern "C" fn bytes_op(op: i64, a: *const u8, wa: i64, b: *const u8, wb: i64) -> i8 {
    let Some(op) = crate::bytes::op_of(op) else {
        return 0;
    };
    let (wa, wb) = (usize::try_from(wa).unwrap_or(0), usize::try_from(wb).unwrap_or(0));
    // SAFETY: compiled code passes the address and width of a string of a byte-string input (its
    // first string's address plus an index the plan reads, inside the strings check.rs checked the
    // input holds, times the width: see the module doc), or of an interned string constant, which
    // lives as long as the process; nothing writes either while the kernel runs
    let (x, y) = unsafe {
        (
            std::slice::from_raw_parts(a, wa),
            std::slice::from_raw_parts(b, wb),
        )
    };
    i8::from(kiln_ir::bytes::eval(op, x, y).unwrap_or(false))
}

/// The address of [`bytes_op`], registered as [`crate::bytes::SYMBOL`].
pub(crate) fn bytes_op_address() -> *const u8 {
    bytes_op as *const u8
}

use crate::check::Checked;
use crate::error::{JitError, Result, oom};
use crate::plan::RunPlan;
use crate::run::{Elem, Spread};
use crate::wide::{
    Binary, IntRows, IntSummed, Io, Level, MOMENTS_STATE, Moments, Routine, Summed, WideElem, WideExtreme,
};
use cranelift_jit::JITModule;
use cranelift_module::FuncId;
use kiln_ir::ReduceOp;
use std::mem::MaybeUninit;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `kernel(ins, out_val, out_idx, params, seg_begin, seg_end, lo, hi)`: see lib.rs.
type KernelFn = unsafe extern "C" fn(*const *const u8, *mut u8, *mut u8, *const i64, i64, i64, i64, i64);

static LIVE_MODULES: AtomicUsize = AtomicUsize::new(0);

/// The number of JIT modules alive (compiled kernels not yet freed), for tests and diagnostics.
pub fn live_modules() -> usize {
    LIVE_MODULES.load(Ordering::Relaxed)
}

/// A finalized kernel and the module that owns its machine code.
pub(crate) struct Code {
    entry: KernelFn,
    /// Only touched again in `Drop`; the mutex makes `Code` `Sync` (`JITModule` is only `Send`).
    module: Mutex<Option<JITModule>>,
}

impl Code {
    /// Finalizes `module` and takes its function `id`, which must have been declared with the
    /// kernel signature (`compile::signature`).
    pub(crate) fn new(mut module: JITModule, id: FuncId) -> Result<Code> {
        if let Err(e) = module.finalize_definitions() {
            discard(module);
            return Err(e.into());
        }
        let ptr = module.get_finalized_function(id);
        // SAFETY: `ptr` is the finalized code of `id`, declared by `compile::define` with
        // `compile::signature`: eight i64 parameters, no result, the ISA's default calling convention
        // (System V on x86-64 Linux), which is the ABI of `KernelFn`.
        let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(ptr) };
        LIVE_MODULES.fetch_add(1, Ordering::Relaxed);
        Ok(Code {
            entry,
            module: Mutex::new(Some(module)),
        })
    }
}

/// Frees a module whose code never ran and whose pointers never escaped.
pub(crate) fn discard(module: JITModule) {
    // SAFETY: nothing from this module was ever called or handed out.
    unsafe { module.free_memory() }
}

impl Drop for Code {
    fn drop(&mut self) {
        let module = self.module.get_mut().unwrap_or_else(|e| e.into_inner()).take();
        if let Some(module) = module {
            // SAFETY: `drop` has the only access to `self`; every call goes through `&Code`, so none
            // is running, and `entry` is private and dies with `self`.
            unsafe { module.free_memory() };
            LIVE_MODULES.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// The raw addresses of a run's outputs, and how many bytes each holds.
pub(crate) struct Targets {
    pub out_val: *mut u8,
    pub val_bytes: usize,
    pub out_idx: *mut u8,
    pub idx_bytes: usize,
    /// Bytes of `out_idx` each unit owns (scan states), or 0 when units share it (indices).
    pub idx_unit_bytes: usize,
    /// How a unit's partial decides a chunked whole-array reduction, where one can.
    pub decides: Option<Decides>,
}

/// How the partial of one chunk decides a chunked whole-array `any` or `all` (of any values), or
/// a max, min, argmax or argmin of bools: its slot (unit `u` folds chunk `u` into slot `u`) holds
/// the truth `when` (`any`, max, argmax: true; `all`, min, argmin: false). The merge of the
/// partials in chunk order then gives that chunk's partial whatever the later chunks hold (the
/// first extreme is kept), so [`dispatch`] runs no unit after the first that decided: each such
/// unit's slot keeps the identity output.rs started it at, which changes no merge.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Decides {
    /// Whether a slot is an int64 word (a typed kernel's integer accumulator), else an element of
    /// the kernel's float type (1 or 0).
    pub word: bool,
    /// The truth of a slot that decides the result.
    pub when: bool,
}

/// Raw pointers shared by the units of one run.
#[derive(Clone, Copy)]
struct Shared {
    ins: *const *const u8,
    out_val: *mut u8,
    out_idx: *mut u8,
    params: *const i64,
}

// SAFETY: the pointers are only dereferenced by compiled code inside `dispatch`, while the buffers
// they point to are alive (they outlive `Spread::spread`), and distinct units write disjoint elements
// (see the module doc); the inputs and the parameter block are only read.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// Runs `code` over every work unit of `plan` (through `spread`), reading the checked inputs at
/// `ins` (input `i`'s element at offset 0) and writing `out`. The one call of compiled code, for
/// maps, reductions and scans alike.
#[inline]
pub(crate) fn dispatch<T: Elem>(
    code: &Code,
    _checked: Checked,
    plan: &RunPlan,
    ins: &[*const u8],
    out: &Targets,
    spread: &dyn Spread,
) -> Result<Ran> {
    // the code steps DTYPE-sized elements and indices; `Real` is sealed to f64 and f32, which these
    // assertions restate where the pointers are used
    const { assert!(std::mem::size_of::<T>() == T::DTYPE.size()) };
    const { assert!(std::mem::size_of::<T::Idx>() == std::mem::size_of::<T>()) };
    if !plan.runs {
        return Ok(Ran(()));
    }
    let n_units = plan.n_units;
    // the outputs hold what the plan writes: the values of every slot (f64 accumulators are as wide
    // or wider; a compound slot's or siblings' words), and the index of every slot (arg
    // reductions) or one state row per unit (scans)
    let slots_bytes = plan
        .n_slots
        .saturating_mul(plan.slot_bytes.max(std::mem::size_of::<T>()));
    let idx_needed = match (out.idx_unit_bytes, out.out_idx.is_null()) {
        (0, true) => 0,
        (0, false) => slots_bytes,
        (row, _) => n_units * row,
    };
    if out.val_bytes < slots_bytes || out.idx_bytes < idx_needed {
        return Err(JitError::WrongKernel(
            "the outputs do not fit the run plan".into(),
        ));
    }
    let shared = Shared {
        ins: ins.as_ptr(),
        out_val: out.out_val,
        out_idx: out.out_idx,
        params: plan.params.as_ptr(),
    };
    let unit_bytes = out.idx_unit_bytes;
    // one claim per unit (a run of one unit keeps its claim on the stack: no allocation)
    let one = [AtomicBool::new(false)];
    let many: Vec<AtomicBool> = match n_units {
        1 => Vec::new(),
        _ => (0..n_units).map(|_| AtomicBool::new(false)).collect(),
    };
    let claims: &[AtomicBool] = if n_units == 1 { &one } else { &many };
    let entry = code.entry;
    // the first unit whose partial decided the result (`Decides`), where the run has more than one
    let decides = out.decides.filter(|_| n_units > 1);
    let slot_size = match decides {
        Some(Decides { word: true, .. }) => 8,
        _ => std::mem::size_of::<T>(),
    };
    if decides.is_some() && n_units.saturating_mul(slot_size) > out.val_bytes {
        return Err(JitError::WrongKernel(
            "the partials do not fit the run plan".into(),
        ));
    }
    let decided = AtomicUsize::new(usize::MAX);
    let work = |u: usize| {
        if u >= n_units || claims[u].swap(true, Ordering::AcqRel) {
            return;
        }
        // a unit after the one that decided is not run: its slot keeps its identity
        if decides.is_some() && decided.load(Ordering::Acquire) < u {
            return;
        }
        let (sb, se, lo, hi) = plan.unit(u);
        // the bounds the code trusts, checked before the call
        assert!(
            sb <= se && se <= plan.n_seg && lo <= hi && hi <= plan.seg_len,
            "unit out of range"
        );
        let sh = shared;
        // SAFETY: see the module doc: `check::check_run` proved every read in bounds (of a slice, or,
        // for a view read in place, of an element of that view); the output buffers hold `n` (maps
        // and scans), `n_out` (reductions) or one slot per chunk (chunked whole-array reductions)
        // elements of the types the code stores (their sizes checked above: kept sibling
        // components' runs, `params[PART] = n_slots` words apart as plan.rs sets it, hold
        // `slot_bytes` a slot), and the segment geometry only addresses outputs below those
        // counts; segments `sb..se` and the range
        // `lo..hi` lie within the plan (asserted above); this unit was claimed by this call alone and
        // writes elements no other unit writes, its scan states in its own row `u` of `out_idx`
        // (`unit_bytes` each, `n_units` rows checked above); `params` has the layout `Structure`
        // fixes for this code, whose structure the caller matched against the kernel and plan. The
        // buffers (the caller's destination included) outlive `spread`.
        unsafe {
            let idx = if unit_bytes > 0 {
                sh.out_idx.add(u * unit_bytes)
            } else {
                sh.out_idx
            };
            entry(
                sh.ins, sh.out_val, idx, sh.params, sb as i64, se as i64, lo as i64, hi as i64,
            )
        };
        if let Some(d) = decides {
            // SAFETY: unit `u` of a chunked whole-array reduction (`Decides`) folded chunk `u` into
            // slot `u` (a `slot_size`-byte word or element, every slot within `val_bytes`:
            // checked above), which no other unit writes, and the call above, on this thread,
            // has returned: the slot holds the value the code stored, read once
            let truth = unsafe {
                let at = sh.out_val.add(u * slot_size);
                if d.word {
                    std::ptr::read_unaligned(at.cast::<i64>()) != 0
                } else {
                    std::ptr::read_unaligned(at.cast::<T>()).to_f64() != 0.0
                }
            };
            if truth == d.when {
                decided.fetch_min(u, Ordering::AcqRel);
            }
        }
    };
    spread.spread(n_units, &work);
    if !claims.iter().all(|c| c.load(Ordering::Acquire)) {
        return Err(JitError::Unsupported(
            "the executor did not run every work unit".into(),
        ));
    }
    Ok(Ran(()))
}

/// Proof that [`dispatch`] ran every work unit of its run plan to completion (or that the plan runs
/// no code: no point to write), which only `dispatch` makes. A chunked reduction's unit that an
/// earlier one decided ([`Decides`]) is not run: such a run writes no map or scan output (its
/// further map outputs, where it has any, turn `Decides` off: execute.rs).
pub(crate) struct Ran(());

/// Calls `code` once over `unit` of a map with the parameter block `params`, on the calling thread,
/// writing output 0 through `out0`: the call of a [`crate::SerialMap`]. `ins` holds the inputs'
/// pointers, then those of outputs 1, 2, ... (`ins[n_in + k]` is output `1 + k`'s, as execute.rs lays
/// them out).
#[inline]
pub(crate) fn call_unit<T: Elem>(
    code: &Code,
    _checked: Checked,
    params: &[i64],
    ins: &[*const u8],
    out0: *mut u8,
    unit: (usize, usize, usize, usize),
) {
    const { assert!(std::mem::size_of::<T>() == T::DTYPE.size()) };
    let (sb, se, lo, hi) = unit;
    // SAFETY: as `dispatch`'s call, for the one unit of a run plan of one unit (`SerialMap` made
    // `params` and `unit` from `RunPlan::new` of the bound structure and geometry, whose structure
    // the code was checked to be compiled for): `check::check_serial` (slices of the dtype) or
    // `check::check_serial_refs` (a bound kernel's inputs, each a slice of the dtype or its
    // elements of exactly the type the code reads it in, passed scaled as `InputRef::base` passes
    // them, never dereferenced by Rust) proved every input holds the elements the plan reads (the
    // bound element count, or `n` where materialised), every output holds `n` elements of the type
    // the code stores for it (the dtype; `check_serial_refs`: a typed kernel's own output types,
    // each address shifted as output.rs `out_target` shifts a run's), the map's segment geometry
    // writing exactly points `0..n`; and an input read in place from an output (`check_serial`
    // only) is one the map reads at every point at that point alone (contiguous of the iteration
    // shape, or a one-point splat loaded in the entry block), which the code loads before it
    // stores any output of that point (skeleton.rs `item`). The buffers are borrowed by the caller
    // for the whole call, on this thread.
    unsafe {
        (code.entry)(
            ins.as_ptr(),
            out0,
            std::ptr::null_mut(),
            params.as_ptr(),
            sb as i64,
            se as i64,
            lo as i64,
            hi as i64,
        )
    };
}

/// Calls `code` once over `unit` of a reduction with the parameter block `params`, on the calling
/// thread, folding into the accumulator slots at `acc` (f64s for sums and products, `T`s for min,
/// max, argmin and argmax) and, for an argmin or argmax, the index slots at `idx` (null else): the
/// call of a [`crate::SerialReduce`].
#[inline]
pub(crate) fn call_reduce_unit<T: Elem>(
    code: &Code,
    _checked: Checked,
    params: &[i64],
    ins: &[*const u8],
    acc: *mut u8,
    idx: *mut u8,
    unit: (usize, usize, usize, usize),
) {
    const { assert!(std::mem::size_of::<T>() == T::DTYPE.size()) };
    let (sb, se, lo, hi) = unit;
    // SAFETY: as `call_unit`, for the one unit of an unchunked run plan of one unit (`SerialReduce`
    // made `params` and `unit` from `RunPlan::new` of the bound structure and geometry, and refused
    // a chunked plan or several units): `check::check_serial` (slices of the dtype, of a reduction
    // reading every input in it) or `check::check_serial_refs` (inputs as a run takes them, stored
    // ones passed scaled as `InputRef::base` passes them) proved every input holds the elements the
    // plan reads; the segment geometry addresses the plan's `n_slots` output slots only (one per
    // output), and `acc` points to that many accumulators (`SerialReduce` checks the caller's
    // count, or holds them itself): f64s for float sums and products, elements of the dtype for
    // float min, max, argmin and argmax, int64 words for bool and integer values, as output.rs
    // `targets` lays out the value output. `idx` is null but for an argmin or argmax, where it
    // points to `n_slots` indices of `T::Idx` (`SerialReduce::fold_indices` holds them), as
    // `targets` lays out the index output. There is no scan state. The buffers are borrowed by the
    // caller for the whole call.
    unsafe {
        (code.entry)(
            ins.as_ptr(),
            acc,
            idx,
            params.as_ptr(),
            sb as i64,
            se as i64,
            lo as i64,
            hi as i64,
        )
    };
}

/// Outputs of at least this many bytes ask for transparent huge pages.
const HUGE_OUTPUT_BYTES: usize = 4 << 20;

/// A zeroed buffer of `n` elements for a fresh output. A large one is allocated untouched (calloc
/// maps zero pages) and, on Linux, advised to use transparent huge pages before the kernel first
/// writes it: a 1e7-element output then takes about forty 2 MiB page faults instead of twenty
/// thousand 4 KiB ones, which cost more than the kernel itself.
pub fn zeroed_output<T: Elem>(n: usize) -> Result<Vec<T>> {
    zeroed(n, T::ZERO)
}

/// [`zeroed_output`] of any element type whose `zero` is all zero bits (the integers, bool, floats).
pub(crate) fn zeroed<T: Copy>(n: usize, zero: T) -> Result<Vec<T>> {
    // ask first, on a throwaway reservation, so memory that cannot be had is an error, not an abort;
    // then `vec!` of zeros, which the allocator serves from fresh zero pages (calloc): no page is
    // touched until the kernel writes it (filling it here costs a 1e7 output ten times the kernel)
    Vec::<T>::new().try_reserve_exact(n).map_err(|_| oom(n))?;
    let v = vec![zero; n];
    advise_huge(v.as_ptr(), n);
    Ok(v)
}

/// Room for a fresh map or scan output of `n` elements, none initialised (length 0): the allocator
/// neither zeroes it (calloc clears a block it reuses, 8 MB at 1e6 elements, about half the cost of
/// a map over them) nor is it touched before the code writes it; huge pages advised as
/// [`zeroed_output`]. [`written_output`] gives it its length after the run.
pub(crate) fn uninit_output<T: Elem>(n: usize) -> Result<Vec<T>> {
    let mut v = Vec::<T>::new();
    v.try_reserve_exact(n).map_err(|_| oom(n))?;
    advise_huge(v.as_ptr(), n);
    Ok(v)
}

/// Gives `v`, an [`uninit_output`] of `n` elements that the run proven by `_ran` wrote as its output
/// 0, its `n` elements (see the module's invariants).
pub(crate) fn written_output<T: Elem>(v: &mut Vec<T>, n: usize, _ran: &Ran) {
    assert!(
        v.capacity() >= n && v.is_empty(),
        "a fresh output of {n} elements"
    );
    // SAFETY: `v` has room for `n` elements (asserted), and the run `_ran` proves complete wrote every
    // one of them (a map's or scan's geometry writes each point `0..n` of output 0, and `dispatch`
    // checked that every work unit ran); `T` is f64 or f32, for which any written bits are a value.
    unsafe { v.set_len(n) };
}

/// Advises the kernel to back the `n` elements at `p` (a buffer of ours) with transparent huge pages
/// when they are at least [`HUGE_OUTPUT_BYTES`]: a 1e7-element output then takes about forty 2 MiB
/// page faults instead of twenty thousand 4 KiB ones, which cost more than the kernel itself.
fn advise_huge<T>(p: *const T, n: usize) {
    #[cfg(target_os = "linux")]
    if n * std::mem::size_of::<T>() >= HUGE_OUTPUT_BYTES {
        const HUGE: usize = 2 << 20;
        let start = p as usize;
        let end = start + n * std::mem::size_of::<T>();
        let (lo, hi) = (start.div_ceil(HUGE) * HUGE, end / HUGE * HUGE);
        if hi > lo {
            // SAFETY: `[lo, hi)` lies within the allocation at `p`, which the caller owns;
            // MADV_HUGEPAGE is advice about how pages are backed and never changes their contents
            // (untouched pages still read as zero). Its result is ignored: without huge pages the
            // buffer is as valid.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (p, n);
}

/// `r` of every element of `xs`, in place, by the wide routine of `level` ([`crate::wide`]): the
/// bits of the inline vector math. An error if the host lacks `level`.
pub fn apply_wide<T: WideElem>(r: Routine, level: Level, xs: &mut [T]) -> Result<()> {
    run_wide(r, level, Io::InPlace(xs))
}

/// `dst[j] = r(src[j])` by the wide routine of `level`, as [`apply_wide`] computes it in place (the
/// routine reads the source where it lies: what a kernel's block does for an argument that is a
/// contiguous input). An error if the host lacks `level` or if `src` is not as long as `dst`.
pub fn apply_wide_from<T: WideElem>(r: Routine, level: Level, dst: &mut [T], src: &[T]) -> Result<()> {
    if dst.len() != src.len() {
        return Err(JitError::WrongKernel(format!(
            "{r:?} of {} sources into {} destinations",
            src.len(),
            dst.len()
        )));
    }
    let dst = as_uninit(dst);
    run_wide(r, level, Io::From { dst, src })
}

/// `xs` as elements that need not hold values, which a routine only writes (valid values of `T`).
fn as_uninit<T>(xs: &mut [T]) -> &mut [MaybeUninit<T>] {
    // SAFETY: `MaybeUninit<T>` has `T`'s size and alignment, so the slice covers the same memory;
    // the routines write into it only values of `T` (copies of the `T`s they compute), never
    // uninitialised bytes, so `xs` holds valid `T`s again when the borrow ends.
    unsafe { &mut *(xs as *mut [T] as *mut [MaybeUninit<T>]) }
}

/// The block a routine computes from the `n` elements at `p` in place where `src` is null, else
/// from the `n` at `src` into the `n` at `p`, which need not hold values yet (a stack slot on its
/// first use, an output row allocated uninitialised: the routine only writes them).
///
/// # Safety
/// `p` is valid for reads and writes of `n` elements of `T` (reads only where `src` is null, and
/// then they hold values), `src` if not null for reads of `n` initialised elements, the two never
/// overlap, and nothing else accesses either during the borrow `'a`.
unsafe fn block_io<'a, T>(p: *mut T, src: *const T, n: usize) -> Io<'a, T> {
    if src.is_null() {
        // SAFETY: the caller's contract, `p`'s elements initialised
        Io::InPlace(unsafe { std::slice::from_raw_parts_mut(p, n) })
    } else {
        // SAFETY: the caller's contract; `MaybeUninit<T>` has `T`'s layout and needs no values
        Io::From {
            dst: unsafe { std::slice::from_raw_parts_mut(p.cast::<MaybeUninit<T>>(), n) },
            src: unsafe { std::slice::from_raw_parts(src, n) },
        }
    }
}

/// An error unless this host has `level`'s processor features (which every call of a
/// `#[target_feature]` routine of `level` needs).
fn on_host(level: Level) -> Result<()> {
    if level.on_host() {
        Ok(())
    } else {
        Err(JitError::Unsupported(format!(
            "the wide routines of level {level:?} need processor features this host lacks"
        )))
    }
}

/// The routine `r` of `level` over `io` (source and destination of one length: the callers check
/// it).
fn run_wide<T: WideElem>(r: Routine, level: Level, io: Io<'_, T>) -> Result<()> {
    on_host(level)?;
    let routine = T::routine(r, level);
    // SAFETY: `routine` is one of wide.rs's `#[target_feature]` functions compiled for `level`
    // (`WideElem::routine` maps each level to its own), and the host has every feature of `level`
    // (checked above); apart from those features they are safe functions of slices.
    unsafe { routine(io) };
    Ok(())
}

/// The function compiled code calls on a block (see block.rs): `r` at [`crate::wide::level`] of the
/// `n` elements at `src` into the `n` at `p`, or of those at `p` in place where `src` is null.
extern "C" fn wide_block<T: WideElem, const R: usize>(p: *mut T, src: *const T, n: i64) {
    let r = Routine::ALL[R];
    // SAFETY: this function's address is given to compiled code only by `wide_block_address`, whose
    // symbol block.rs calls with `0 <= n <= block::BLOCK` and `p` either the kernel's own stack slot
    // of `block::BLOCK` elements of `T` (aligned to 64 bytes) or, where the block is written
    // straight into the output (block.rs `direct`), the block's first point in this work unit's
    // run of output 0, a contiguous row of `T` the map's own stores would write (in bounds by
    // `dispatch`'s checks of the output against the plan, written by no other unit). Where `src` is
    // null, the same iteration wrote the block's arguments at `p` before the call. A non-null `src`
    // is the address of the block's first point in a contiguous input row of `T` (block.rs
    // `Skeleton::in_place_source`: an input the plan reads at `base + j * size` for every row
    // position `j`, neither splatted, strided nor stored in another type), whose `n` elements the
    // row's own loads would read: in bounds by `check_run`'s checks, not written during the call
    // (this thread's code waits for it; other threads write only their own units' points), and
    // never `p`'s memory: a slot is no input, and an input that is the output, updated in place,
    // is passed as a null `src` (block.rs; an input is either the output's whole memory or
    // disjoint from it, `check_run`). Nothing else reads or writes `p`'s elements during the call.
    let io = unsafe { block_io(p, src, n as usize) };
    // registered only where `level()` is some, which implies the host has it: `run_wide` cannot
    // fail (and a panic may not unwind out of an `extern "C"` function)
    if let Some(level) = crate::wide::level() {
        let _ = run_wide(r, level, io);
    }
}

/// The address of the function compiled code calls for `r` on `dtype`'s blocks.
pub(crate) fn wide_block_address(r: Routine, dtype: kiln_ir::ElemType) -> *const u8 {
    use kiln_ir::ElemType;
    // `R` is the routine's discriminant, its index in `Routine::ALL` (the order of declaration)
    macro_rules! addresses {
        ($($r:ident)*) => {
            match (r, dtype) {
                $(
                    (Routine::$r, ElemType::F64) => wide_block::<f64, { Routine::$r as usize }> as *const u8,
                    (Routine::$r, ElemType::F32) => wide_block::<f32, { Routine::$r as usize }> as *const u8,
                )*
                _ => unreachable!("only float types (f32, f64) reach here"),
            }
        };
    }
    addresses!(
        Exp Log Sin Cos Tan Exp2 Expm1 Tanh Sinh Cosh Arcsin Arccos Arctan Cbrt Log2 Log10 Log1p Arcsinh Arccosh
        Arctanh PowThreeHalves PowCube PowFourth PowInvSqrt PowInvSquare
    )
}

/// `r` of every pair `(xs[j], ys[j])`, into `xs[j]`, by the wide routine of two arguments of `level`
/// ([`crate::wide`], `binary.rs`): the bits of the inline vector math. An error if the host lacks
/// `level` or if `ys` is not as long as `xs`.
pub fn apply_wide_binary<T: WideElem>(r: Binary, level: Level, xs: &mut [T], ys: &[T]) -> Result<()> {
    on_host(level)?;
    if xs.len() != ys.len() {
        return Err(JitError::WrongKernel(format!(
            "{r:?} of {} first arguments and {} second ones",
            xs.len(),
            ys.len()
        )));
    }
    run_binary(r, level, Io::InPlace(xs), ys);
    Ok(())
}

/// The routine of two arguments `r` of `level` (which the host has: the callers check it) over
/// `io`'s first arguments and `ys` (of equal lengths).
fn run_binary<T: WideElem>(r: Binary, level: Level, io: Io<'_, T>, ys: &[T]) {
    let routine = T::binary(r, level);
    // SAFETY: as in `run_wide`: `routine` is compiled for `level`, which the host has (checked by
    // the callers), and is otherwise a safe function of slices.
    unsafe { routine(io, ys) };
}

/// The function compiled code calls on a block for a routine of two arguments (see block.rs):
/// `p[j] = r(a[j], q[j])` for the `n` elements at `p` and `q`, `a` the `n` at `src`, or those at
/// `p` where `src` is null, at [`crate::wide::level`].
extern "C" fn wide_binary_block<T: WideElem, const R: usize>(p: *mut T, src: *const T, q: *const T, n: i64) {
    let r = Binary::ALL[R];
    // SAFETY: this function's address is given to compiled code only by
    // `wide_binary_block_address`, whose symbol block.rs calls with `p`, `src` and `n` as
    // `wide_block` is called (a stack slot or the output row, an input row or null). `q` is the
    // address of a second stack slot, written by the same iteration, or the block's first point
    // in a contiguous input row of `T` (as a non-null `src`): `n` elements the row's own loads
    // would read, not written during the call, and never `p`'s memory (an input that is the
    // output, updated in place, is first copied into the second slot: block.rs); only read here.
    let io = unsafe { block_io(p, src, n as usize) };
    let ys = unsafe { std::slice::from_raw_parts(q, n as usize) };
    // registered only where `level()` is some (see `wide_block`)
    if let Some(level) = crate::wide::level() {
        run_binary(r, level, io, ys);
    }
}

/// The address of the function compiled code calls for the routine of two arguments `r` on
/// `dtype`'s blocks.
pub(crate) fn wide_binary_block_address(r: Binary, dtype: kiln_ir::ElemType) -> *const u8 {
    use kiln_ir::ElemType;
    // `R` is the routine's discriminant, its index in `Binary::ALL` (the order of declaration)
    macro_rules! addresses {
        ($($r:ident)*) => {
            match (r, dtype) {
                $(
                    (Binary::$r, ElemType::F64) => wide_binary_block::<f64, { Binary::$r as usize }> as *const u8,
                    (Binary::$r, ElemType::F32) => wide_binary_block::<f32, { Binary::$r as usize }> as *const u8,
                )*
                _ => unreachable!("only float types (f32, f64) reach here"),
            }
        };
    }
    addresses!(Arctan2 Pow Hypot)
}

/// Each complex point of `xs` (its parts interleaved, `re, im`, as memory holds complex values)
/// divided by the point of `ys` at its place, into `xs`, by the wide routine of `level`
/// ([`crate::wide`], `complex.rs`): the bits of the inline code's division. An error if the host lacks
/// `level`, if `ys` is not as long as `xs`, or if they hold half a point.
pub fn apply_wide_complex_div<T: WideElem>(level: Level, xs: &mut [T], ys: &[T]) -> Result<()> {
    on_host(level)?;
    if xs.len() != ys.len() || !xs.len().is_multiple_of(2) {
        return Err(JitError::WrongKernel(format!(
            "complex division of {} parts by {} parts (two parts a point, as many points each)",
            xs.len(),
            ys.len()
        )));
    }
    run_complex_div(level, Io::InPlace(xs), ys);
    Ok(())
}

/// Complex division at `level` (which the host has: the callers check it) of `io`'s dividends by
/// `ys` (of one even length).
fn run_complex_div<T: WideElem>(level: Level, io: Io<'_, T>, ys: &[T]) {
    let routine = T::complex_div(level);
    // SAFETY: as in `run_wide`: `routine` is compiled for `level`, which the host has (checked by
    // the callers), and is otherwise a safe function of slices.
    unsafe { routine(io, ys) };
}

/// The function compiled code calls on a block for complex division (see block.rs): the `n` parts
/// at `p` (`n / 2` points, interleaved) divided point by point by those at `q`, the dividends the
/// `n` parts at `src`, or those at `p` where `src` is null, at [`crate::wide::level`].
extern "C" fn wide_complex_div_block<T: WideElem>(p: *mut T, src: *const T, q: *const T, n: i64) {
    // SAFETY: as in `wide_binary_block`, in parts: this function's address is given to compiled
    // code only by `wide_complex_div_address`, whose symbol block.rs calls with `n` twice the
    // block's points, `0 <= n <= 2 * block::BLOCK`, and `p` a stack slot of the kernel of `2 *
    // block::BLOCK` parts of `T` (aligned to 64 bytes) or the block's first point in this unit's
    // run of output 0, a contiguous complex row whose parts are `T` (block.rs `direct`); `q` a
    // second such slot written by the same iteration, or the block's first point in a contiguous
    // complex input row whose parts are `T`, as a non-null `src` is: `n` parts the row's own loads
    // would read, not written during the call, never `p`'s memory (as in `wide_binary_block`).
    let io = unsafe { block_io(p, src, n as usize) };
    let ys = unsafe { std::slice::from_raw_parts(q, n as usize) };
    // registered only where `level()` is some (see `wide_block`)
    if let Some(level) = crate::wide::level() {
        run_complex_div(level, io, ys);
    }
}

/// The address of the function compiled code calls for complex division on blocks of points whose
/// parts are of `dtype`.
pub(crate) fn wide_complex_div_address(dtype: kiln_ir::ElemType) -> *const u8 {
    match dtype {
        kiln_ir::ElemType::F64 => wide_complex_div_block::<f64> as *const u8,
        kiln_ir::ElemType::F32 => wide_complex_div_block::<f32> as *const u8,
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// The magnitude of each complex point of `src` (its parts interleaved, `re, im`, as memory holds
/// complex values) into `dst`, by the wide routine of `level` ([`crate::wide`], `complex.rs`): the
/// bits of the inline code's `abs`. An error if the host lacks `level`, or if `src` does not hold
/// two parts for each element of `dst`.
pub fn apply_wide_complex_abs<T: WideElem>(level: Level, dst: &mut [T], src: &[T]) -> Result<()> {
    on_host(level)?;
    if src.len() != 2 * dst.len() {
        return Err(JitError::WrongKernel(format!(
            "the magnitudes of {} parts into {} elements (two parts a point)",
            src.len(),
            dst.len()
        )));
    }
    run_complex_abs(level, as_uninit(dst), src);
    Ok(())
}

/// The magnitude at `level` (which the host has: the callers check it) of the points of `src`
/// into `dst` (half as long).
fn run_complex_abs<T: WideElem>(level: Level, dst: &mut [MaybeUninit<T>], src: &[T]) {
    let routine = T::complex_abs(level);
    // SAFETY: as in `run_wide`: `routine` is compiled for `level`, which the host has (checked by
    // the callers), and is otherwise a safe function of slices.
    unsafe { routine(dst, src) };
}

/// The function compiled code calls on a block for the magnitude of complex points (see
/// block.rs): the `n` magnitudes of the `n` points (`2n` parts) at `src` into the `n` elements at
/// `p`, at [`crate::wide::level`].
extern "C" fn wide_complex_abs_block<T: WideElem>(p: *mut T, src: *const T, n: i64) {
    // SAFETY: this function's address is given to compiled code only by
    // `wide_complex_abs_address`, whose symbol block.rs calls with `0 <= n <= block::BLOCK`, `p`
    // as `wide_block`'s (a stack slot of `block::BLOCK` elements of `T`, or the block's first point
    // in this unit's run of output 0: elements only written here, which need not hold values),
    // and `src` never null: the block's first point in a contiguous complex input row whose parts
    // are `T` (`2n` parts the row's own loads would read, not written during the call), or a
    // second stack slot of `2 * block::BLOCK` parts written by the same iteration; of a complex
    // type where `p`'s memory is of a real one, so never `p`'s memory.
    let dst = unsafe { std::slice::from_raw_parts_mut(p.cast::<MaybeUninit<T>>(), n as usize) };
    let src = unsafe { std::slice::from_raw_parts(src, 2 * n as usize) };
    // registered only where `level()` is some (see `wide_block`)
    if let Some(level) = crate::wide::level() {
        run_complex_abs(level, dst, src);
    }
}

/// The address of the function compiled code calls for the magnitude on blocks of points whose
/// parts are of `dtype`.
pub(crate) fn wide_complex_abs_address(dtype: kiln_ir::ElemType) -> *const u8 {
    match dtype {
        kiln_ir::ElemType::F64 => wide_complex_abs_block::<f64> as *const u8,
        kiln_ir::ElemType::F32 => wide_complex_abs_block::<f32> as *const u8,
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// sin of every element of `xs` in place and cos of it into `ys`, by the wide routine of `level`
/// that computes both ([`crate::wide`], `WideElem::sincos`): the bits of [`Routine::Sin`] and
/// [`Routine::Cos`]. An error if the host lacks `level` or if `ys` is not as long as `xs`.
pub fn apply_wide_sincos<T: WideElem>(level: Level, xs: &mut [T], ys: &mut [T]) -> Result<()> {
    on_host(level)?;
    if xs.len() != ys.len() {
        return Err(JitError::WrongKernel(format!(
            "sin and cos of {} elements into an output of {}",
            xs.len(),
            ys.len()
        )));
    }
    run_sincos(level, Io::InPlace(xs), as_uninit(ys));
    Ok(())
}

/// The sin and cos routine of `level` (which the host has: the callers check it) over `io` and
/// `ys` (of equal lengths).
fn run_sincos<T: WideElem>(level: Level, io: Io<'_, T>, ys: &mut [MaybeUninit<T>]) {
    let routine = T::sincos(level);
    // SAFETY: as in `run_wide`: `routine` is compiled for `level`, which the host has (checked by
    // the callers), and is otherwise a safe function of slices.
    unsafe { routine(io, ys) };
}

/// The function compiled code calls on a block whose sin and cos nodes share their argument (see
/// block.rs): `q[j] = cos(a[j])`, `p[j] = sin(a[j])` for the `n` elements at `p` and `q`, `a` the
/// `n` at `src`, or those at `p` where `src` is null.
extern "C" fn wide_sincos_block<T: WideElem>(p: *mut T, q: *mut T, src: *const T, n: i64) {
    // SAFETY: this function's address is given to compiled code only by `wide_sincos_address`,
    // whose symbol block.rs calls with `p` and `q` the addresses of two distinct stack slots of the
    // kernel, each of `block::BLOCK` elements of `T` (aligned to 64 bytes; `p` written by the same
    // iteration before the call where `src` is null; `q` only written here, so it need not hold
    // values), and `0 <= n <= block::BLOCK`; nothing else reads or writes the slots during the
    // call. A non-null `src` is, as in `wide_block`, the block's first point in a contiguous input
    // row of `T`, `n` elements the row's own loads would read, not written during the call.
    let io = unsafe { block_io(p, src, n as usize) };
    let ys = unsafe { std::slice::from_raw_parts_mut(q.cast::<MaybeUninit<T>>(), n as usize) };
    // registered only where `level()` is some (see `wide_block`)
    if let Some(level) = crate::wide::level() {
        run_sincos(level, io, ys);
    }
}

/// The address of the function compiled code calls for sin and cos of one argument on `dtype`'s
/// blocks.
pub(crate) fn wide_sincos_address(dtype: kiln_ir::ElemType) -> *const u8 {
    match dtype {
        kiln_ir::ElemType::F64 => wide_sincos_block::<f64> as *const u8,
        kiln_ir::ElemType::F32 => wide_sincos_block::<f32> as *const u8,
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// The kept sum's row steps at `level` ([`crate::wide`], `rows.rs`): with eight rows, `out[j] +=
/// ((r0[j] + r1[j]) + (r2[j] + r3[j])) + ((r4[j] + r5[j]) + (r6[j] + r7[j]))`, with one, `out[j] +=
/// x[j]`, for every `j` of `out`, each value widened to f64: the inline path's bits. An error if the
/// host lacks `level`, if the rows are not one or eight, or if a row is shorter than `out`.
pub fn apply_kept_rows<T: WideElem>(level: Level, rows: &[&[T]], out: &mut [f64]) -> Result<()> {
    on_host(level)?;
    match step_rows("sum", rows, out.len())? {
        StepRows::One(x) => {
            let step = T::single(level);
            // SAFETY: `step` is one of rows.rs's `#[target_feature]` functions compiled for `level`
            // (`WideElem::single` maps each level to its own), and the host has every feature of
            // `level` (checked above); apart from those features it is a safe function of slices.
            unsafe { step(x, out) };
        }
        StepRows::Group(group) => {
            let step = T::group(level);
            // SAFETY: as above, for `WideElem::group`.
            unsafe { step(group, out) };
        }
    }
    Ok(())
}

/// The rows a kept reduction's row step takes: one, or a group of [`crate::wide::GROUP`].
enum StepRows<'r, T> {
    One(&'r [T]),
    Group([&'r [T]; crate::wide::GROUP]),
}

/// `rows` as a row step takes them, each holding at least the `n` elements of its output run: an
/// error naming the kept reduction (`what`) otherwise.
fn step_rows<'r, T>(what: &str, rows: &[&'r [T]], n: usize) -> Result<StepRows<'r, T>> {
    if let Some(r) = rows.iter().find(|r| r.len() < n) {
        return Err(JitError::WrongKernel(format!(
            "a kept {what}'s row of {} elements is shorter than its output run of {n}",
            r.len()
        )));
    }
    match rows {
        [x] => Ok(StepRows::One(x)),
        _ => <[&[T]; crate::wide::GROUP]>::try_from(rows)
            .map(StepRows::Group)
            .map_err(|_| {
                JitError::WrongKernel(format!(
                    "a kept {what}'s row step takes 1 or {} rows, not {}",
                    crate::wide::GROUP,
                    rows.len()
                ))
            }),
    }
}

/// The function compiled code calls for a kept sum's group of rows (skeleton.rs `group`):
/// [`apply_kept_rows`] of the eight rows at `r0..r7` over the `n` outputs at `out`, at
/// [`crate::wide::level`].
#[allow(clippy::too_many_arguments)]
extern "C" fn kept_group<T: WideElem>(
    r0: *const T,
    r1: *const T,
    r2: *const T,
    r3: *const T,
    r4: *const T,
    r5: *const T,
    r6: *const T,
    r7: *const T,
    out: *mut f64,
    n: i64,
) {
    // SAFETY: this function's address is given to compiled code only by `kept_rows_address`,
    // whose symbol skeleton.rs calls (for a kept sum whose body is a plain read of one input) in
    // place of its own loop over a group's columns `[lo, hi)`, with `n = hi - lo > 0`, each `r_m`
    // the group's row `m` of that input at column `lo` and `out` the f64 accumulator of column
    // `lo`: exactly the elements that loop reads (in a checked input: see `dispatch`) and the
    // outputs it reads and writes (this unit's alone, see the module doc). The rows are only read
    // during the call, by every thread (no unit writes an input: kept sums read no destination),
    // and the output run is in a different allocation from every input (output.rs allocates it,
    // or it is the caller's `&mut` buffer of a serial fold, `SerialReduce`, which no input slice
    // borrows), so the shared slices and the one mutable slice do not alias.
    let (rows, out) = unsafe {
        let n = n as usize;
        let rows = [r0, r1, r2, r3, r4, r5, r6, r7].map(|r| std::slice::from_raw_parts(r, n));
        (rows, std::slice::from_raw_parts_mut(out, n))
    };
    // registered only where `level()` is some, which implies the host has it, with eight rows as
    // long as the output run: `apply_kept_rows` cannot fail (and a panic may not unwind out of an
    // `extern "C"` function)
    if let Some(level) = crate::wide::level() {
        let _ = apply_kept_rows(level, &rows, out);
    }
}

/// The function compiled code calls for a kept sum's row added alone (skeleton.rs `segment`):
/// [`apply_kept_rows`] of the row at `x` over the `n` outputs at `out`.
extern "C" fn kept_single<T: WideElem>(x: *const T, out: *mut f64, n: i64) {
    // SAFETY: as `kept_group`'s, for one row: skeleton.rs calls it in place of its own inner loop
    // over a row's columns `[jlo, jhi)`, `n = jhi - jlo > 0`, `x` the row's input at `jlo`, `out`
    // the accumulator of that column.
    let (x, out) = unsafe {
        let n = n as usize;
        (
            std::slice::from_raw_parts(x, n),
            std::slice::from_raw_parts_mut(out, n),
        )
    };
    if let Some(level) = crate::wide::level() {
        let _ = apply_kept_rows(level, &[x], out);
    }
}

/// The address of the function compiled code calls for a kept sum's group of rows (`group`) or
/// single row on `dtype`.
pub(crate) fn kept_rows_address(group: bool, dtype: kiln_ir::ElemType) -> *const u8 {
    use kiln_ir::ElemType;
    match (group, dtype) {
        (true, ElemType::F64) => kept_group::<f64> as *const u8,
        (true, ElemType::F32) => kept_group::<f32> as *const u8,
        (false, ElemType::F64) => kept_single::<f64> as *const u8,
        (false, ElemType::F32) => kept_single::<f32> as *const u8,
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// The kept max's (`max`) or min's row steps at `level` ([`crate::wide`], `rows.rs`): with one
/// row `x`, `out[j] = maximum(out[j], x[j])` (NumPy's NaN-propagating `maximum`, or `minimum`),
/// with eight, the eight rows folded in order, for every `j` of `out`: the inline path's bits. An
/// error if the host lacks `level`, if the rows are not one or eight, or if a row is shorter than
/// `out`.
pub fn apply_kept_extreme<T: WideElem>(level: Level, max: bool, rows: &[&[T]], out: &mut [T]) -> Result<()> {
    on_host(level)?;
    match step_rows("extreme", rows, out.len())? {
        StepRows::One(x) => {
            let step = T::single_extreme(max, level);
            // SAFETY: `step` is one of rows.rs's `#[target_feature]` functions compiled for
            // `level` (`WideElem::single_extreme` maps each level to its own), and the host has
            // every feature of `level` (checked above); apart from those features it is a safe
            // function of slices.
            unsafe { step(x, out) };
        }
        StepRows::Group(group) => {
            let step = T::group_extreme(max, level);
            // SAFETY: as above, for `WideElem::group_extreme`.
            unsafe { step(group, out) };
        }
    }
    Ok(())
}

/// The function compiled code calls for a kept max's (`MAX`) or min's row (skeleton.rs
/// `segment`): [`apply_kept_extreme`] of the row at `x` over the `n` outputs at `out`.
extern "C" fn kept_extreme<T: WideElem, const MAX: bool>(x: *const T, out: *mut T, n: i64) {
    // SAFETY: as `kept_single`'s: skeleton.rs calls it in place of its own inner loop over a row's
    // columns `[jlo, jhi)`, `n = jhi - jlo > 0`, `x` the row's input at `jlo` (a plain read of a
    // checked input), `out` that column's output element, of the data's type, in a buffer no
    // input slice borrows (output.rs allocates it, or it is the caller's `&mut` buffer).
    let (x, out) = unsafe {
        let n = n as usize;
        (
            std::slice::from_raw_parts(x, n),
            std::slice::from_raw_parts_mut(out, n),
        )
    };
    if let Some(level) = crate::wide::level() {
        let _ = apply_kept_extreme(level, MAX, &[x], out);
    }
}

/// The function compiled code calls for a kept max's (`MAX`) or min's group of adjacent rows
/// (skeleton.rs `group`): [`apply_kept_extreme`] of the eight rows at `r0..r7` over the `n`
/// outputs at `out`.
#[allow(clippy::too_many_arguments)]
extern "C" fn kept_extreme_group<T: WideElem, const MAX: bool>(
    r0: *const T,
    r1: *const T,
    r2: *const T,
    r3: *const T,
    r4: *const T,
    r5: *const T,
    r6: *const T,
    r7: *const T,
    out: *mut T,
    n: i64,
) {
    // SAFETY: as `kept_group`'s: skeleton.rs calls it in place of its own loop over a group's
    // columns `[lo, hi)`, `n = hi - lo > 0`, each `r_m` the group's row `m` of a plain read of a
    // checked input at column `lo`, `out` that column's output element, of the data's type, in a
    // buffer no input slice borrows (output.rs allocates it, or it is the caller's `&mut` buffer).
    let (rows, out) = unsafe {
        let n = n as usize;
        let rows = [r0, r1, r2, r3, r4, r5, r6, r7].map(|r| std::slice::from_raw_parts(r, n));
        (rows, std::slice::from_raw_parts_mut(out, n))
    };
    if let Some(level) = crate::wide::level() {
        let _ = apply_kept_extreme(level, MAX, &rows, out);
    }
}

/// The address of the function compiled code calls for a kept max's (`max`) or min's row (or
/// group of rows: `group`) on `dtype`.
pub(crate) fn kept_extreme_address(max: bool, group: bool, dtype: kiln_ir::ElemType) -> *const u8 {
    use kiln_ir::ElemType;
    match (max, group, dtype) {
        (true, false, ElemType::F64) => kept_extreme::<f64, true> as *const u8,
        (true, false, ElemType::F32) => kept_extreme::<f32, true> as *const u8,
        (false, false, ElemType::F64) => kept_extreme::<f64, false> as *const u8,
        (false, false, ElemType::F32) => kept_extreme::<f32, false> as *const u8,
        (true, true, ElemType::F64) => kept_extreme_group::<f64, true> as *const u8,
        (true, true, ElemType::F32) => kept_extreme_group::<f32, true> as *const u8,
        (false, true, ElemType::F64) => kept_extreme_group::<f64, false> as *const u8,
        (false, true, ElemType::F32) => kept_extreme_group::<f32, false> as *const u8,
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// The kept reduction `op`'s row steps over int64, int32 or bool values at `level` ([`crate::wide`],
/// `int_rows.rs`): with one row `x`, `out[j] = op(out[j], x[j])`, with eight, the eight rows
/// folded in, for every `j` of `out`, into int64 words as a typed kernel's kept accumulators hold
/// them (a sum wrapping, a max or min of the values widened, an `any` or `all` of their truths
/// 0 / 1): the inline path's words. An error if the host lacks `level`, if `op` is not a sum, max,
/// min, `any` or `all`, if the rows are not one or eight, or if a row is shorter than `out`.
pub fn apply_kept_int<T: IntRows>(level: Level, op: ReduceOp, rows: &[&[T]], out: &mut [i64]) -> Result<()> {
    on_host(level)?;
    let Some(code) = crate::wide::int_rows::code(op) else {
        return Err(JitError::Unsupported(format!(
            "a kept {op:?} has no integer row step"
        )));
    };
    match step_rows(op.name(), rows, out.len())? {
        StepRows::One(x) => {
            let step = T::single_step(code, level);
            // SAFETY: `step` is one of int_rows.rs's `#[target_feature]` functions compiled for
            // `level` (`IntRows::single_step` maps each level to its own), and the host has every
            // feature of `level` (checked above); apart from those features it is a safe function
            // of slices.
            unsafe { step(x, out) };
        }
        StepRows::Group(group) => {
            let step = T::group_step(code, level);
            // SAFETY: as above, for `IntRows::group_step`.
            unsafe { step(group, out) };
        }
    }
    Ok(())
}

/// The function compiled code calls for a typed kernel's kept reduction's row (skeleton.rs
/// `segment`): [`apply_kept_int`] of the row at `x` over the `n` int64 words at `out`.
extern "C" fn kept_int<T: IntRows, const OP: u8>(x: *const T, out: *mut i64, n: i64) {
    // SAFETY: as `kept_single`'s: skeleton.rs calls it in place of its own inner loop over a row's
    // columns `[jlo, jhi)`, `n = jhi - jlo > 0`, `x` the row's input at `jlo` (a plain read of a
    // checked int64, int32 or bool input, at its own address: the code's shifted back by
    // `stored_shift`), `out` that column's int64 word, in a buffer no input slice borrows
    // (output.rs allocates it, or it is the caller's `&mut` buffer).
    let (x, out) = unsafe {
        let n = n as usize;
        (
            std::slice::from_raw_parts(x, n),
            std::slice::from_raw_parts_mut(out, n),
        )
    };
    if let (Some(level), Some(op)) = (crate::wide::level(), crate::wide::int_rows::op_of(OP)) {
        let _ = apply_kept_int(level, op, &[x], out);
    }
}

/// The function compiled code calls for a typed kernel's kept reduction's group of rows
/// (skeleton.rs `group`): [`apply_kept_int`] of the eight rows at `r0..r7` over the `n` int64
/// words at `out`.
#[allow(clippy::too_many_arguments)]
extern "C" fn kept_int_group<T: IntRows, const OP: u8>(
    r0: *const T,
    r1: *const T,
    r2: *const T,
    r3: *const T,
    r4: *const T,
    r5: *const T,
    r6: *const T,
    r7: *const T,
    out: *mut i64,
    n: i64,
) {
    // SAFETY: as `kept_group`'s: skeleton.rs calls it in place of its own loop over a group's
    // columns `[lo, hi)`, `n = hi - lo > 0`, each `r_m` the group's row `m` of a plain read of a
    // checked int64, int32 or bool input at column `lo` (at its own address, as `kept_int`'s),
    // `out` that column's int64 word, in a buffer no input slice borrows.
    let (rows, out) = unsafe {
        let n = n as usize;
        let rows = [r0, r1, r2, r3, r4, r5, r6, r7].map(|r| std::slice::from_raw_parts(r, n));
        (rows, std::slice::from_raw_parts_mut(out, n))
    };
    if let (Some(level), Some(op)) = (crate::wide::level(), crate::wide::int_rows::op_of(OP)) {
        let _ = apply_kept_int(level, op, &rows, out);
    }
}

/// The address of the function compiled code calls for a typed kernel's kept `op` (sum, max, min,
/// `any`, `all`) of `values` (i64, i32, bool): its row, or its group of rows (`group`).
pub(crate) fn kept_int_address(op: ReduceOp, group: bool, values: kiln_ir::ElemType) -> *const u8 {
    fn of<T: IntRows>(op: ReduceOp, group: bool) -> *const u8 {
        use crate::wide::int_rows::{ALL, ANY, MAX, MIN, SUM};
        match (op, group) {
            (ReduceOp::Sum, false) => kept_int::<T, SUM> as *const u8,
            (ReduceOp::Max, false) => kept_int::<T, MAX> as *const u8,
            (ReduceOp::Min, false) => kept_int::<T, MIN> as *const u8,
            (ReduceOp::Any, false) => kept_int::<T, ANY> as *const u8,
            (ReduceOp::All, false) => kept_int::<T, ALL> as *const u8,
            (ReduceOp::Sum, true) => kept_int_group::<T, SUM> as *const u8,
            (ReduceOp::Max, true) => kept_int_group::<T, MAX> as *const u8,
            (ReduceOp::Min, true) => kept_int_group::<T, MIN> as *const u8,
            (ReduceOp::Any, true) => kept_int_group::<T, ANY> as *const u8,
            (ReduceOp::All, true) => kept_int_group::<T, ALL> as *const u8,
            _ => unreachable!("only sums, maxes, mins, anys and alls have integer row steps"),
        }
    }
    use kiln_ir::ElemType;
    match values {
        ElemType::I64 => of::<i64>(op, group),
        ElemType::I32 => of::<i32>(op, group),
        ElemType::Bool => of::<crate::wide::Truth>(op, group),
        _ => unreachable!("only i64, i32 and bool values have integer row steps"),
    }
}

/// The max (`max`) or min of `x` at `level` ([`crate::wide`], `extremes.rs`), as a trailing `max`
/// or `min` of a plain read of an input folds a long row (`row`: a zero of a row holding zeros
/// of both signs is a NaN, [`crate::wide::row_extreme`]) or a segment of several rows: a NaN
/// where `x` holds one, else its extreme (of -0.0 and 0.0, either, where `row` is false). An error if the
/// host lacks `level`.
pub fn apply_extreme<T: WideExtreme>(level: Level, max: bool, row: bool, x: &[T]) -> Result<T> {
    on_host(level)?;
    let fold = T::extreme(max, level, row);
    // SAFETY: `fold` is one of extremes.rs's `#[target_feature]` functions compiled for `level`
    // (`WideExtreme::extreme` maps each level to its own), and the host has every feature of `level`
    // (checked above); apart from those features it is a safe function of a slice.
    Ok(unsafe { fold(x) })
}

/// The function compiled code calls for a trailing max (`MAX`) or min of a plain read of an input
/// (skeleton.rs `wide_folds`): [`apply_extreme`] of the `n` values at `x`, at
/// [`crate::wide::level`], a row's (`ROW`) or a segment's.
extern "C" fn trailing_extreme<T: WideExtreme, const MAX: bool, const ROW: bool>(
    x: *const T,
    n: i64,
) -> T::Held {
    // SAFETY: this function's address is given to compiled code only by `extreme_address`, whose
    // symbol skeleton.rs calls for a trailing max or min, or a bool's any or all
    // (alone, or a component of sibling reductions), whose body (the component's root) is a plain
    // read of one input that is not strided (of the kernel's float dtype, or a typed kernel's
    // int64, int32 or bool input, at its own address: the code's shifted back by
    // `stored_shift`): in place of its own loop over a row's points `[jlo, jhi)` (`wide_folds`),
    // with `n > 0` points and `x` the row's input at the
    // first: the elements that loop reads (in a checked input: see `dispatch`; a bool's fold may
    // stop early and read only some), only read during the call.
    let x = unsafe { std::slice::from_raw_parts(x, n as usize) };
    // registered only where `level()` is some, which implies the host has it: `apply_extreme`
    // cannot fail (and a panic may not unwind out of an `extern "C"` function)
    let extreme = match crate::wide::level() {
        Some(level) => apply_extreme(level, MAX, ROW, x).unwrap_or(T::identity(MAX)),
        None => T::identity(MAX),
    };
    extreme.held()
}

/// The first index of the max (`max`) or min of `x` at `level` (`wide/args.rs`): of the
/// first NaN where `x` holds one, else of the first point equal to the extreme; 0 for an empty
/// `x`. An error if the host lacks `level`.
pub fn apply_arg<T: WideExtreme>(level: Level, max: bool, x: &[T]) -> Result<usize> {
    on_host(level)?;
    let arg = T::arg(max, level);
    // SAFETY: as `apply_extreme`: one of args.rs's `#[target_feature]` functions (AVX2's, which
    // every level has), on a host that has `level`; otherwise a safe function of a slice.
    Ok(unsafe { arg(x) })
}

/// The function compiled code calls for an argmax (`MAX`) or argmin of a plain read of an input
/// over a row's points (skeleton.rs `arg_blocks`): [`apply_arg`] of the `n` values at `x`, at
/// [`crate::wide::level`]; the point's value, as compiled code holds it, written to `at`.
extern "C" fn row_arg<T: WideExtreme, const MAX: bool>(x: *const T, n: i64, at: *mut T::Held) -> i64 {
    // SAFETY: this function's address is given to compiled code only by `arg_address`, whose
    // symbol skeleton.rs `arg_blocks` calls for a trailing argmax or argmin whose body is a
    // plain read of one input that is not strided (of the kernel's float dtype, or a typed
    // kernel's int64, int32 or bool input, at its own address: the code's shifted back by
    // `stored_shift`), in place of its own loop over a row's points `[j, jhi)`, `n > 0` of
    // them, `x` the row's input at the first: the elements that loop reads (in a checked input:
    // see `dispatch`), only read during the call; `at` is a stack slot of 8 bytes, aligned to 8,
    // of the calling code's frame, written once here.
    let x = unsafe { std::slice::from_raw_parts(x, n as usize) };
    // registered only where `level()` is some, which implies the host has it: `apply_arg`
    // cannot fail (and a panic may not unwind out of an `extern "C"` function); were it to, the
    // same index point by point
    let k = crate::wide::level()
        .and_then(|level| apply_arg(level, MAX, x).ok())
        .unwrap_or_else(|| crate::wide::arg_scalar::<T, MAX>(x));
    if let Some(&v) = x.get(k) {
        // SAFETY: see above: `at` is valid for a write of a held value (at most 8 bytes).
        unsafe { at.write(v.held()) };
    }
    k as i64
}

/// The address of the function compiled code calls for an argmax (`max`) or argmin of a row of
/// `dtype` values (f64, f32, i64, i32, bool).
pub(crate) fn arg_address(max: bool, dtype: kiln_ir::ElemType) -> *const u8 {
    fn of<T: WideExtreme>(max: bool) -> *const u8 {
        match max {
            true => row_arg::<T, true> as *const u8,
            false => row_arg::<T, false> as *const u8,
        }
    }
    use kiln_ir::ElemType;
    match dtype {
        ElemType::F64 => of::<f64>(max),
        ElemType::F32 => of::<f32>(max),
        ElemType::I64 => of::<i64>(max),
        ElemType::I32 => of::<i32>(max),
        ElemType::Bool => of::<crate::wide::Truth>(max),
        _ => unreachable!("only f32, f64, i64, i32 and bool rows have an argmax"),
    }
}

/// The address of the function compiled code calls for a trailing max (`max`) or min of `dtype`
/// values (f64, f32, i64, i32, bool): a row's (`row`, [`crate::wide::row_extreme`]) or a
/// segment's.
pub(crate) fn extreme_address(max: bool, dtype: kiln_ir::ElemType, row: bool) -> *const u8 {
    fn of<T: WideExtreme>(max: bool, row: bool) -> *const u8 {
        match (max, row) {
            (true, true) => trailing_extreme::<T, true, true> as *const u8,
            (true, false) => trailing_extreme::<T, true, false> as *const u8,
            (false, true) => trailing_extreme::<T, false, true> as *const u8,
            (false, false) => trailing_extreme::<T, false, false> as *const u8,
        }
    }
    use kiln_ir::ElemType;
    match dtype {
        ElemType::F64 => of::<f64>(max, row),
        ElemType::F32 => of::<f32>(max, row),
        ElemType::I64 => of::<i64>(max, row),
        ElemType::I32 => of::<i32>(max, row),
        ElemType::Bool => of::<crate::wide::Truth>(max, row),
        _ => unreachable!("only f32, f64, i64, i32 and bool runs are folded"),
    }
}

/// The wrapping int64 sum of the int64, int32 or bool values `x` at `level` (a bool's count of
/// its truths; `wide/int_sums.rs`), as a trailing `sum` of a plain read folds a long row. An error
/// if the host lacks `level`.
pub fn apply_int_sum<T: IntSummed>(level: Level, x: &[T]) -> Result<i64> {
    on_host(level)?;
    let sum = T::int_sum(level);
    // SAFETY: `sum` is one of int_sums.rs's `#[target_feature]` functions compiled for `level`
    // (`IntSummed::int_sum` maps each level to its own), and the host has every feature of
    // `level` (checked above); apart from those features it is a safe function of a slice.
    Ok(unsafe { sum(x) })
}

/// The function compiled code calls for a trailing sum of a plain read of int64, int32 or bool
/// values (skeleton.rs `wide_folds`): [`apply_int_sum`] of the `n` values at `x`, at
/// [`crate::wide::level`].
extern "C" fn trailing_int_sum<T: IntSummed>(x: *const T, n: i64) -> i64 {
    // SAFETY: this function's address is given to compiled code only by `int_sum_address`, whose
    // symbol skeleton.rs calls for a trailing sum (alone, or a component of sibling reductions)
    // of a typed kernel whose body (the component's root) is a plain read of one int64, int32 or
    // bool input that is not strided, at its own address (the code's shifted back by
    // `stored_shift`): in place of its own loop over a row's points `[jlo, jhi)`, with `n > 0`
    // points and `x` the row's input at the first: the elements that loop reads (in a checked
    // input: see `dispatch`), only read during the call.
    let x = unsafe { std::slice::from_raw_parts(x, n as usize) };
    // registered only where `level()` is some, which implies the host has it: `apply_int_sum`
    // cannot fail (and a panic may not unwind out of an `extern "C"` function)
    match crate::wide::level() {
        Some(level) => apply_int_sum(level, x).unwrap_or(0),
        None => 0,
    }
}

/// The address of the function compiled code calls for a trailing sum of `dtype` values (i64,
/// i32, bool).
pub(crate) fn int_sum_address(dtype: kiln_ir::ElemType) -> *const u8 {
    use kiln_ir::ElemType;
    match dtype {
        ElemType::I64 => trailing_int_sum::<i64> as *const u8,
        ElemType::I32 => trailing_int_sum::<i32> as *const u8,
        ElemType::Bool => trailing_int_sum::<crate::wide::Truth> as *const u8,
        _ => unreachable!("only i64, i32 and bool runs are summed in int64"),
    }
}

/// The row `x` (or, `y` given, the products `x[i]·y[i]`) of f32 or f64 values added at `level`
/// into `parts`, the inline loop's [`crate::wide::PARTS`] f64 partials and its scalar accumulator
/// (`wide/sums.rs`), as a trailing `sum` of a plain read, or of a product of two, folds a long
/// row: whether a partial is NaN afterwards. An error if the host lacks `level` or `y` is not as
/// long as `x`.
pub fn apply_sum<T: Summed>(
    level: Level,
    x: &[T],
    y: Option<&[T]>,
    parts: &mut [f64; crate::wide::PARTS + 1],
) -> Result<bool> {
    on_host(level)?;
    if let Some(y) = y
        && y.len() != x.len()
    {
        return Err(JitError::Unsupported(format!(
            "a sum of products reads rows of {} and {} elements",
            x.len(),
            y.len()
        )));
    }
    let fold = T::sum_fold(y.is_some(), level);
    // SAFETY: `fold` is one of sums.rs's `#[target_feature]` functions compiled for `level`
    // (`sum_fold` maps each level to its own), and the host has every feature of `level` (checked
    // above); apart from those features it is a safe function of its slices.
    Ok(unsafe { fold(x, y.unwrap_or(x), parts) })
}

/// The function compiled code calls for a trailing sum of `T` values whose body is a plain read
/// of an input (`DOT` false) or the product of two (skeleton.rs `wide_folds`): [`apply_sum`] of the
/// `n` values at `x` (and `y`) into the 17 f64 at `parts`, at [`crate::wide::level`]; 1 where a
/// partial is NaN afterwards (or no level: the caller then folds the row inline), else 0.
extern "C" fn trailing_sum<T: Summed, const DOT: bool>(
    x: *const T,
    y: *const T,
    n: i64,
    parts: *mut f64,
) -> i8 {
    // SAFETY: this function's address is given to compiled code only by `sum_address`, whose
    // symbol skeleton.rs calls for a trailing sum of a `T` kernel (alone, or a component of
    // sibling reductions) whose body (the component's root) is a plain read of an input, or the
    // product of two, none strided: in place of its own loop over a row's points
    // `[jlo, jhi)`, with `n > 0` points, `x` (and `y`, `x` itself for a square) the row's inputs at
    // the first: exactly the elements that loop reads (in checked inputs: see `dispatch`; the
    // caller's slices or arrays of `T`, so aligned to it), only read during the call; `parts` a
    // stack slot of `PARTS + 1` f64 of the kernel's own, holding the accumulators, not otherwise
    // used during the call.
    let (x, y, parts) = unsafe {
        (
            std::slice::from_raw_parts(x, n as usize),
            std::slice::from_raw_parts(y, n as usize),
            &mut *parts.cast::<[f64; crate::wide::PARTS + 1]>(),
        )
    };
    // registered only where `level()` is some, which implies the host has it: `apply_sum` cannot
    // fail (and a panic may not unwind out of an `extern "C"` function)
    let nan = match crate::wide::level() {
        Some(level) => apply_sum(level, x, DOT.then_some(y), parts).unwrap_or(true),
        None => true,
    };
    i8::from(nan)
}

/// The row `x` folded at `level` into `state`, a compound moments state `(k, n, mean, m2, sum)`
/// (`wide/moments.rs`), as a compound `moments` of a plain read folds a long row: whether the
/// state came out NaN (then it is left as it was). An error if the host lacks `level`.
pub fn apply_moments<T: Moments>(level: Level, x: &[T], state: &mut [f64; MOMENTS_STATE]) -> Result<bool> {
    on_host(level)?;
    let fold = T::moments_fold(level);
    // SAFETY: `fold` is one of moments.rs's `#[target_feature]` functions compiled for `level`
    // (`moments_fold` maps each level to its own), and the host has every feature of `level`
    // (checked above); apart from those features it is a safe function of its arguments.
    Ok(unsafe { fold(x, state) })
}

/// The function compiled code calls for the moments of a row of `T` values (skeleton.rs
/// `segment`): [`apply_moments`] of the `n` values at `x` into the state at `state`, at
/// [`crate::wide::level`]; 1 where the state came out NaN (or no level: the caller then folds
/// the row inline), else 0.
extern "C" fn trailing_moments<T: Moments>(x: *const T, n: i64, state: *mut f64) -> i8 {
    // SAFETY: this function's address is given to compiled code only by `moments_address`, whose
    // symbol skeleton.rs calls for a compound moments kernel of `T` values whose body is a plain
    // read of an input, not strided: in place of its own blocks over a row's points `[jlo,
    // jhi)`, with `n > 0` points, `x` the input's row at the first: exactly the elements those
    // blocks read (in checked inputs: see `dispatch`), only read during the call; `state` a stack
    // slot of the kernel's own of at least `MOMENTS_STATE` f64, holding the segment's state, not
    // otherwise used during the call.
    let (x, state) = unsafe {
        (
            std::slice::from_raw_parts(x, n as usize),
            &mut *state.cast::<[f64; MOMENTS_STATE]>(),
        )
    };
    // registered only where `level()` is some, which implies the host has it: `apply_moments`
    // cannot fail (and a panic may not unwind out of an `extern "C"` function)
    let nan = match crate::wide::level() {
        Some(level) => apply_moments(level, x, state).unwrap_or(true),
        None => true,
    };
    i8::from(nan)
}

/// The address of the function compiled code calls for the moments of a row of `dtype` values
/// (f64, f32).
pub(crate) fn moments_address(dtype: kiln_ir::ElemType) -> *const u8 {
    match dtype {
        kiln_ir::ElemType::F32 => trailing_moments::<f32> as *const u8,
        _ => trailing_moments::<f64> as *const u8,
    }
}

/// The address of the function compiled code calls for a trailing sum of a plain read of `dtype`
/// values (f32, f64; `dot` false) or of the product of two.
pub(crate) fn sum_address(dot: bool, dtype: kiln_ir::ElemType) -> *const u8 {
    match (dtype, dot) {
        (kiln_ir::ElemType::F32, false) => trailing_sum::<f32, false> as *const u8,
        (kiln_ir::ElemType::F32, true) => trailing_sum::<f32, true> as *const u8,
        (kiln_ir::ElemType::F64, false) => trailing_sum::<f64, false> as *const u8,
        (kiln_ir::ElemType::F64, true) => trailing_sum::<f64, true> as *const u8,
        _ => unreachable!("only f32 and f64 rows are summed at full width"),
    }
}
