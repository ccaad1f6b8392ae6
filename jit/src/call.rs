//! The only unsafe code of kiln-jit: owning JIT memory, and calling compiled code.
//!
//! Invariants:
//! - a [`Code`] owns the `JITModule` its entry point lives in, and frees that module's memory only in
//!   `Drop`, when no `&Code` exists any more, so no call can be running and the pointer never escapes;
//! - compiled code runs only through [`execute`], after every input buffer was checked to hold every
//!   element the plan makes the code read (contiguous: `n`; per-row runs: the furthest row start plus
//!   `row_len`; per-row splats: the furthest row start; splats: one), and the output buffers were
//!   allocated with exactly the elements the segment geometry makes the code write. The geometry
//!   ([`Geometry`]) is computed by kiln-jit itself from the checked kernel shape, never taken from
//!   the caller;
//! - an input given as a view ([`InputRef::View`], read in place without a copy) is never made into a
//!   slice (the gaps between its elements may be borrowed mutably elsewhere); the code gets its
//!   element pointer (`as_ptr`, the element at index 0) and reads only elements of the view:
//!   `check_view` proves, before any call, that the plan reads it per row, that the view has the
//!   declared shape and non-negative strides, that the plan's outer strides are the view's strides
//!   broadcast to the iteration shape and that a run's inner axes step as the view's (so each offset
//!   read, row start plus position in the row, is `Σ index·stride` of an in-bounds index of the
//!   view), and, computed in i128, that every offset read lies in `[0, span)`, `span` being one past
//!   the view's largest element offset. The view's shared borrow (lifetime `'a` of the `InputRef`)
//!   outlives the run and allows those reads;
//! - a run is cut into *work units* (`Units`), chosen here, never by the caller: a unit is a range of
//!   segments (each folding into outputs no other segment touches, or into its own partial slot) or a
//!   range `[lo, hi)` within every segment (maps, and kept reductions, whose outputs within a segment
//!   are distinct): distinct units write disjoint memory. The caller's [`Spread`] may run units on any
//!   threads in any order; each unit runs at most once (an atomic claim per unit), so no two calls write
//!   the same memory, and every unit's segment and range bounds are checked against the geometry before
//!   the call. Every buffer outlives `Spread::spread`, which returns only when all units are done
//!   (checked: a unit left unclaimed is an error and the result is discarded);
//! - scans ([`ScanCode`], `execute_scan`, `execute_scan_into`) run the same way: their parameters are
//!   computed by kiln-jit from the kernel's shape and checked against it before the call, every input
//!   holds the `n` elements it is read at (one for a splat), the output (a fresh buffer, or the
//!   caller's slice, whose length is checked to be exactly `n` before any call) holds `n`, and each
//!   unit is a range of whole blocks with a state row of its own;
//! - `zeroed_output` only advises the kernel (madvise) about memory it owns.

use crate::error::{JitError, Result};
use crate::layout::{Access, Geometry, Mode, Structure};
use cranelift_jit::JITModule;
use cranelift_module::FuncId;
use kiln_ir::{BroadcastPlan, InputPlan, KernelIR, KernelKind, Real, ReduceOp, Start, Tensor, Values};
use ndarray::ArrayViewD;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// `kernel(ins, out_val, out_idx, params, seg_begin, seg_end, lo, hi)`: see skeleton.rs.
type KernelFn = unsafe extern "C" fn(*const *const u8, *mut u8, *mut u8, *const i64, i64, i64, i64, i64);

static LIVE_MODULES: AtomicUsize = AtomicUsize::new(0);

/// The number of JIT modules alive (compiled kernels not yet freed), for tests and diagnostics.
pub fn live_modules() -> usize {
    LIVE_MODULES.load(Ordering::Relaxed)
}

/// The signature of a compiled entry point, and how its finalized address becomes a function pointer.
pub(crate) trait Entry: Copy {
    /// # Safety
    /// `ptr` is the finalized code of a function declared with this entry's signature
    /// (`skeleton::signature` for kernels, `scan::signature` for scans).
    unsafe fn from_ptr(ptr: *const u8) -> Self;
}

impl Entry for KernelFn {
    unsafe fn from_ptr(ptr: *const u8) -> KernelFn {
        // SAFETY (the caller's): `skeleton::signature` is eight i64 parameters, no result, the ISA's
        // default calling convention (System V on x86-64 Linux): the ABI of `KernelFn`.
        unsafe { std::mem::transmute::<*const u8, KernelFn>(ptr) }
    }
}

impl Entry for ScanFn {
    unsafe fn from_ptr(ptr: *const u8) -> ScanFn {
        // SAFETY (the caller's): `scan::signature` is six i64 parameters, no result, the ISA's default
        // calling convention: the ABI of `ScanFn`.
        unsafe { std::mem::transmute::<*const u8, ScanFn>(ptr) }
    }
}

/// A finalized function (a kernel, or a scan: [`ScanCode`]) and the module that owns its machine code.
pub(crate) struct Code<F: Entry = KernelFn> {
    entry: F,
    /// Only touched again in `Drop`; the mutex makes `Code` `Sync` (`JITModule` is only `Send`).
    module: Mutex<Option<JITModule>>,
}

/// A compiled scan.
pub(crate) type ScanCode = Code<ScanFn>;

impl<F: Entry> Code<F> {
    /// Finalizes `module` and takes its function `id`, which must have been declared with the
    /// signature `F` stands for (see [`Entry::from_ptr`]).
    pub(crate) fn new(mut module: JITModule, id: FuncId) -> Result<Code<F>> {
        if let Err(e) = module.finalize_definitions() {
            discard(module);
            return Err(e.into());
        }
        let ptr = module.get_finalized_function(id);
        // SAFETY: `ptr` is the finalized code of `id`, which the caller declared with `F`'s signature.
        let entry = unsafe { F::from_ptr(ptr) };
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

impl<F: Entry> Drop for Code<F> {
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

/// An element type kernels compute in: f64 or f32.
pub trait Elem: Real + Default {
    /// The index type of arg reductions, as wide as the float (lanes line up with the vectors).
    type Idx: Copy + Into<i64> + Send + Sync + 'static;
    const NO_INDEX: Self::Idx;
    /// The largest reduction extent whose indices the index type holds.
    const MAX_INDEX: usize;
    fn values(v: Vec<Self>) -> Values;
    /// The workspace's partial buffers: f64 accumulators, values and indices of this type.
    #[doc(hidden)]
    fn partials(ws: &mut Workspace) -> (&mut Vec<f64>, &mut Vec<Self>, &mut Vec<Self::Idx>);
}

impl Elem for f64 {
    type Idx = i64;
    const NO_INDEX: i64 = -1;
    const MAX_INDEX: usize = i64::MAX as usize;
    fn values(v: Vec<f64>) -> Values {
        Values::F64(v)
    }
    fn partials(ws: &mut Workspace) -> (&mut Vec<f64>, &mut Vec<f64>, &mut Vec<i64>) {
        (&mut ws.acc, &mut ws.f64s, &mut ws.i64s)
    }
}

impl Elem for f32 {
    type Idx = i32;
    const NO_INDEX: i32 = -1;
    const MAX_INDEX: usize = i32::MAX as usize;
    fn values(v: Vec<f32>) -> Values {
        Values::F32(v)
    }
    fn partials(ws: &mut Workspace) -> (&mut Vec<f64>, &mut Vec<f32>, &mut Vec<i32>) {
        (&mut ws.acc, &mut ws.f32s, &mut ws.i32s)
    }
}

/// Reusable buffers for the partials of chunked whole-array reductions: a reduction run in a loop
/// with the same workspace allocates no partials after its first run.
#[derive(Debug, Default)]
pub struct Workspace {
    /// Sum and product partials (f64 accumulators).
    acc: Vec<f64>,
    f64s: Vec<f64>,
    f32s: Vec<f32>,
    i64s: Vec<i64>,
    i32s: Vec<i32>,
}

impl Workspace {
    pub fn new() -> Workspace {
        Workspace::default()
    }
}

/// The caller's executor for the independent work units of one run (kiln-jit knows no threads).
pub trait Spread: Sync {
    /// Calls `work(u)` for every `u` in `0..units`, on any threads and in any order, and returns when
    /// every call has returned.
    fn spread(&self, units: usize, work: &(dyn Fn(usize) + Sync));
}

/// Runs every unit in order on the calling thread.
#[derive(Debug, Clone, Copy, Default)]
pub struct Serial;

impl Spread for Serial {
    fn spread(&self, units: usize, work: &(dyn Fn(usize) + Sync)) {
        (0..units).for_each(work);
    }
}

/// How one run is cut and where its reductions start.
#[derive(Clone, Copy)]
pub struct RunConfig<'a> {
    /// Where each reduction's accumulator starts (identity, `initial`, or the previous outputs).
    pub start: Start<'a>,
    /// Whole-array reductions are cut into at most this many chunks (a tuning value): the chunk
    /// length depends on `n` and this alone, never on the thread count, so the result does not either.
    pub target_partials: usize,
    /// The shortest chunk of a whole-array reduction: an input of at most this many points is one
    /// chunk, reduced in one pass.
    pub min_chunk: usize,
    /// At most this many units for maps and axis reductions (1: one call does everything). Any value
    /// gives the same bits: units never split an output's fold.
    pub max_units: usize,
    pub spread: &'a dyn Spread,
}

impl Default for RunConfig<'_> {
    fn default() -> Self {
        RunConfig {
            start: Start::Identity,
            target_partials: 64,
            min_chunk: 1 << 15,
            max_units: 1,
            spread: &Serial,
        }
    }
}

impl std::fmt::Debug for RunConfig<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunConfig")
            .field("start", &self.start)
            .field("target_partials", &self.target_partials)
            .field("min_chunk", &self.min_chunk)
            .field("max_units", &self.max_units)
            .finish()
    }
}

/// The chunk length of a whole-array reduction over `n` points: at most `target` chunks, at least
/// `min_chunk` points each, a multiple of 64. A function of `n` and the tuning alone.
pub fn chunk_len(n: usize, target: usize, min_chunk: usize) -> usize {
    let c = n.div_ceil(target.max(1)).max(min_chunk).max(1);
    c.div_ceil(64).saturating_mul(64)
}

/// How a run is cut into work units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Units {
    /// Unit `u` runs segments `[u * per, (u + 1) * per)` whole.
    Segments { per: usize },
    /// Unit `u` runs every segment over `[u * per, (u + 1) * per)` within it.
    Ranges { per: usize },
}

/// One input of a run.
///
/// A view is never turned into a slice: the memory between its elements may be borrowed mutably
/// elsewhere (split views), so a `&[T]` over its whole range would be undefined behaviour. The code is
/// given the view's element pointer (`ArrayView::as_ptr`, the element at index 0) and, after
/// `check_inputs` proved it, reads only elements of the view, which its shared borrow allows.
#[derive(Debug, Clone)]
pub enum InputRef<'a, T> {
    /// The input's elements in C order (of the iteration shape where the plan says `Materialise`).
    Slice(&'a [T]),
    /// A view read in place through its own strides, where the plan reads it per row with the view's
    /// strides as outer strides (its rows contiguous, its strides non-negative).
    View(ArrayViewD<'a, T>),
}

impl<T> InputRef<'_, T> {
    /// The address of the element at offset 0, the base the code adds its offsets to.
    fn base(&self) -> *const u8 {
        match self {
            InputRef::Slice(s) => s.as_ptr().cast(),
            InputRef::View(v) => v.as_ptr().cast(),
        }
    }
}

impl<'a, T> From<&'a [T]> for InputRef<'a, T> {
    fn from(s: &'a [T]) -> Self {
        InputRef::Slice(s)
    }
}

impl<'a, T> From<ArrayViewD<'a, T>> for InputRef<'a, T> {
    fn from(v: ArrayViewD<'a, T>) -> Self {
        InputRef::View(v)
    }
}

/// Raw pointers shared by the units of one run.
#[derive(Clone, Copy)]
struct Shared {
    ins: *const *const u8,
    out_val: *mut u8,
    out_idx: *mut u8,
    params: *const i64,
}

// SAFETY: the pointers are only dereferenced by compiled code inside `execute`, while the buffers they
// point to are alive (they outlive `Spread::spread`), and distinct units write disjoint elements (see
// the module doc); the inputs and the parameter block are only read.
unsafe impl Send for Shared {}
unsafe impl Sync for Shared {}

/// Checks `inputs` against the plan and the sizes, runs the code over every work unit (through
/// `cfg.spread`), finishes chunked reductions (the second pass, over the partials in order), and
/// turns the output buffers into a tensor as the interpreter would give it. With `dest`, a map with a
/// float result writes straight into it (which must hold exactly `n` elements) and no tensor is
/// returned.
#[allow(clippy::too_many_arguments)]
pub(crate) fn execute<T: Elem>(
    code: &Code,
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    inputs: &[InputRef<'_, T>],
    dest: Option<&mut [T]>,
    cfg: &RunConfig<'_>,
    ws: &mut Workspace,
) -> Result<Option<Tensor>> {
    // the code steps DTYPE-sized elements and indices; `Real` is sealed to f64 and f32, which these
    // assertions restate where the pointers are made
    const { assert!(std::mem::size_of::<T>() == T::DTYPE.size()) };
    const { assert!(std::mem::size_of::<T::Idx>() == std::mem::size_of::<T>()) };
    check_inputs(st, geo, kernel, plan, inputs)?;
    let op = st.mode.reduce_op();
    if let Some(op) = op {
        cfg.start.check(op, geo.n_out)?;
        if geo.n_red == 0 && geo.n_out > 0 && !op.has_identity() && cfg.start == Start::Identity {
            return Err(kiln_ir::IrError::EmptyReduction { op: op.name() }.into());
        }
        if op.is_arg() && geo.n_red > T::MAX_INDEX {
            return Err(JitError::Unsupported(format!(
                "{} over {} elements of {}: indices do not fit the index lanes",
                op.name(),
                geo.n_red,
                T::DTYPE
            )));
        }
    } else if cfg.start != Start::Identity {
        return Err(JitError::Unsupported("a map takes no initial value".into()));
    }
    let n_val = if st.mode == Mode::Map { geo.n } else { geo.n_out };
    let direct = dest.is_some();
    if let Some(d) = &dest
        && (op.is_some() || kernel.output_type() != kiln_ir::OutputType::Float(T::DTYPE) || d.len() != n_val)
    {
        return Err(JitError::BadInput {
            index: kernel.inputs.len(),
            name: "output".into(),
            why: format!(
                "{} elements of {} given for a result of {n_val}",
                d.len(),
                T::DTYPE
            ),
        });
    }
    // The cut: whole-array reductions in chunks fixed by n alone, each into its own partial slot.
    let whole = matches!(st.mode, Mode::Trailing(_)) && st.seg_axes == 0;
    let mut params = geo.params.clone();
    let (n_seg, seg_len) = (geo.n_seg, geo.seg_len);
    let chunks = if whole && geo.n > 0 {
        let c = chunk_len(geo.n, cfg.target_partials, cfg.min_chunk);
        let k = geo.n.div_ceil(c);
        (k > 1).then_some((k, c))
    } else {
        None
    };
    let (n_seg, seg_len, n_slots) = match chunks {
        Some((k, c)) => (k, c, k),
        None => (n_seg, seg_len, n_val),
    };
    params[Structure::SEG_LEN] = seg_len as i64;
    params[Structure::PART] = i64::from(chunks.is_some());
    let units = choose_units(st, kernel, n_seg, seg_len, chunks.is_some(), cfg.max_units);
    let n_units = match units {
        Units::Segments { per } => n_seg.div_ceil(per),
        Units::Ranges { per } => seg_len.div_ceil(per),
    };
    // Output buffers, with exactly the elements the code writes (see the module doc); the partials
    // of a chunked reduction live in the workspace.
    let start_of = |o: usize| if chunks.is_some() { None } else { cfg.start.at(o) };
    let mut val_t: Vec<T> = Vec::new();
    let mut val_f64: Vec<f64> = Vec::new();
    let mut idx: Vec<T::Idx> = Vec::new();
    let (ws_acc, ws_t, ws_idx) = T::partials(ws);
    let (vt, vf, vi): (&mut Vec<T>, &mut Vec<f64>, &mut Vec<T::Idx>) = if chunks.is_some() {
        (ws_t, ws_acc, ws_idx)
    } else {
        (&mut val_t, &mut val_f64, &mut idx)
    };
    let refill_f64 = |v: &mut Vec<f64>, id: f64| -> Result<()> {
        v.clear();
        v.try_reserve_exact(n_slots).map_err(|_| oom(n_slots))?;
        v.extend((0..n_slots).map(|o| start_of(o).unwrap_or(id)));
        Ok(())
    };
    let refill_t = |v: &mut Vec<T>, id: T| -> Result<()> {
        v.clear();
        v.try_reserve_exact(n_slots).map_err(|_| oom(n_slots))?;
        v.extend((0..n_slots).map(|o| start_of(o).map_or(id, T::from_f64)));
        Ok(())
    };
    let mut dest = dest;
    let out_val: *mut u8 = match op {
        None => match dest.as_mut() {
            Some(d) => d.as_mut_ptr().cast(),
            None => {
                // every element is written by the kernel before it is read
                *vt = zeroed_output(n_val)?;
                vt.as_mut_ptr().cast()
            }
        },
        Some(ReduceOp::Sum) => {
            refill_f64(vf, -0.0)?;
            vf.as_mut_ptr().cast()
        }
        Some(ReduceOp::Prod) => {
            refill_f64(vf, 1.0)?;
            vf.as_mut_ptr().cast()
        }
        Some(op) => {
            refill_t(vt, identity::<T>(op))?;
            vt.as_mut_ptr().cast()
        }
    };
    let out_idx: *mut u8 = if op.is_some_and(ReduceOp::is_arg) {
        vi.clear();
        vi.try_reserve_exact(n_slots).map_err(|_| oom(n_slots))?;
        vi.resize(n_slots, T::NO_INDEX);
        vi.as_mut_ptr().cast()
    } else {
        std::ptr::null_mut()
    };
    let ins: Vec<*const u8> = inputs.iter().map(InputRef::base).collect();
    if geo.n > 0 && n_seg > 0 {
        debug_assert_eq!(params.len(), st.param_count());
        let shared = Shared {
            ins: ins.as_ptr(),
            out_val,
            out_idx,
            params: params.as_ptr(),
        };
        let claims: Vec<AtomicBool> = (0..n_units).map(|_| AtomicBool::new(false)).collect();
        let entry = code.entry;
        let work = |u: usize| {
            if u >= n_units || claims[u].swap(true, Ordering::AcqRel) {
                return;
            }
            let (sb, se, lo, hi) = match units {
                Units::Segments { per } => (u * per, ((u + 1) * per).min(n_seg), 0, seg_len),
                Units::Ranges { per } => (0, n_seg, u * per, ((u + 1) * per).min(seg_len)),
            };
            // the bounds the code trusts, checked before the call
            assert!(
                sb <= se && se <= n_seg && lo <= hi && hi <= seg_len,
                "unit out of range"
            );
            let sh = shared;
            // SAFETY: see the module doc: `check_inputs` proved every read in bounds (of a slice,
            // or, for a view read in place, of an element of that view); the output
            // buffers hold `n` (map), `n_out` (reduction) or one slot per chunk (chunked whole-array
            // reduction) elements of the types the code stores, and the segment geometry only
            // addresses outputs below those counts; segments `sb..se` and the range `lo..hi` lie
            // within the geometry (asserted above); this unit was claimed by this call alone and
            // writes elements no other unit writes; `params` has the layout `Structure` fixes for
            // this code, whose structure the caller matched against `kernel` and `plan`. The buffers
            // (the caller's `dest` included, whose length was checked above) outlive `spread`.
            unsafe {
                entry(
                    sh.ins, sh.out_val, sh.out_idx, sh.params, sb as i64, se as i64, lo as i64, hi as i64,
                )
            };
        };
        cfg.spread.spread(n_units, &work);
        if !claims.iter().all(|c| c.load(Ordering::Acquire)) {
            return Err(JitError::Unsupported(
                "the executor did not run every work unit".into(),
            ));
        }
    }
    if direct {
        return Ok(None);
    }
    if chunks.is_some() {
        // the second pass: the partials in order, from the start
        let op = op.expect("chunks are reductions");
        let start = cfg.start.at(0);
        match op {
            ReduceOp::Sum => val_f64 = vec![ws.acc.iter().fold(start.unwrap_or(-0.0), |a, &p| a + p)],
            ReduceOp::Prod => val_f64 = vec![ws.acc.iter().fold(start.unwrap_or(1.0), |a, &p| a * p)],
            _ => {
                let (_, pt, pi) = T::partials(ws);
                let (v, i) = merge_partials::<T>(op, start, pt, pi);
                val_t = vec![v];
                idx = if op.is_arg() { vec![i] } else { Vec::new() };
            }
        }
    }
    Ok(Some(crate::output::tensor::<T>(
        kernel,
        st,
        geo,
        val_t,
        val_f64,
        idx,
        cfg.start != Start::Identity,
    )))
}

/// The identity of `op` in the kernel's dtype (min, max, any, all, argmin, argmax).
fn identity<T: Elem>(op: ReduceOp) -> T {
    match op {
        ReduceOp::Min | ReduceOp::ArgMin => T::INFINITY,
        ReduceOp::Max | ReduceOp::ArgMax => T::NEG_INFINITY,
        ReduceOp::Any => T::ZERO,
        _ => T::ONE,
    }
}

/// Merges per-chunk partials in chunk order: the same answer as one sequential fold (argmin and
/// argmax keep the first extreme and the first NaN, as the chunks come in index order).
fn merge_partials<T: Elem>(op: ReduceOp, start: Option<f64>, vals: &[T], idx: &[T::Idx]) -> (T, T::Idx) {
    match op {
        ReduceOp::Min | ReduceOp::Max => {
            let init = start.map_or(identity::<T>(op), T::from_f64);
            let f = if op == ReduceOp::Min {
                T::minimum
            } else {
                T::maximum
            };
            (vals.iter().fold(init, |a, &p| f(a, p)), T::NO_INDEX)
        }
        ReduceOp::Any => {
            let t = vals.iter().any(|v| v.is_true());
            (if t { T::ONE } else { T::ZERO }, T::NO_INDEX)
        }
        ReduceOp::All => {
            let t = vals.iter().all(|v| v.is_true());
            (if t { T::ONE } else { T::ZERO }, T::NO_INDEX)
        }
        ReduceOp::ArgMin | ReduceOp::ArgMax => {
            let mut best: Option<(T, T::Idx)> = None;
            for (&v, &i) in vals.iter().zip(idx) {
                if i.into() < 0 {
                    continue;
                }
                let take = match best {
                    None => true,
                    Some((b, _)) if b.is_nan() => false,
                    Some(_) if v.is_nan() => true,
                    Some((b, _)) => {
                        if op == ReduceOp::ArgMin {
                            v < b
                        } else {
                            v > b
                        }
                    }
                };
                if take {
                    best = Some((v, i));
                }
            }
            best.unwrap_or((identity::<T>(op), T::NO_INDEX))
        }
        ReduceOp::Sum | ReduceOp::Prod => unreachable!("f64 partials are merged by the caller"),
    }
}

/// Cuts a run into units that write disjoint memory (see the module doc). Which cut is chosen never
/// changes the result: a unit never splits one output's fold.
fn choose_units(
    st: &Structure,
    kernel: &KernelIR,
    n_seg: usize,
    seg_len: usize,
    chunked: bool,
    max_units: usize,
) -> Units {
    let max_units = max_units.max(1);
    let all = Units::Segments { per: n_seg.max(1) };
    if max_units == 1 && !chunked {
        return all;
    }
    match st.mode {
        Mode::Map => {
            // ranges of at least 4096 points, a multiple of 64 (whole vectors and unrolled steps)
            let per = seg_len.div_ceil(max_units).max(4096).div_ceil(64) * 64;
            Units::Ranges { per }
        }
        Mode::Trailing(_) if chunked => Units::Segments { per: 1 },
        Mode::Trailing(_) => {
            let axes = match &kernel.kind {
                KernelKind::Reduce { axes, .. } => axes.as_slice(),
                KernelKind::Map | KernelKind::Scan(_) => &[],
            };
            // segments fold into distinct outputs only when no segment axis is reduced
            if axes.iter().all(|&a| a >= st.seg_axes) {
                Units::Segments {
                    per: n_seg.div_ceil(max_units).max(1),
                }
            } else {
                all
            }
        }
        Mode::Kept(_) => {
            // column ranges of at least 256 outputs: each output is folded by one unit, in order
            let per = seg_len.div_ceil(max_units).max(256).div_ceil(16) * 16;
            Units::Ranges { per }
        }
    }
}

/// Outputs of at least this many bytes ask for transparent huge pages.
const HUGE_OUTPUT_BYTES: usize = 4 << 20;

/// A zeroed buffer of `n` elements for a fresh output. A large one is allocated untouched (calloc
/// maps zero pages) and, on Linux, advised to use transparent huge pages before the kernel first
/// writes it: a 1e7-element output then takes about forty 2 MiB page faults instead of twenty
/// thousand 4 KiB ones, which cost more than the kernel itself.
pub fn zeroed_output<T: Elem>(n: usize) -> Result<Vec<T>> {
    // ask first, on a throwaway reservation, so memory that cannot be had is an error, not an abort;
    // then `vec!` of zeros, which the allocator serves from fresh zero pages (calloc): no page is
    // touched until the kernel writes it (filling it here costs a 1e7 output ten times the kernel)
    Vec::<T>::new().try_reserve_exact(n).map_err(|_| oom(n))?;
    let v = vec![T::ZERO; n];
    #[cfg(target_os = "linux")]
    if n * std::mem::size_of::<T>() >= HUGE_OUTPUT_BYTES {
        const HUGE: usize = 2 << 20;
        let start = v.as_ptr() as usize;
        let end = start + n * std::mem::size_of::<T>();
        let (lo, hi) = (start.div_ceil(HUGE) * HUGE, end / HUGE * HUGE);
        if hi > lo {
            // SAFETY: `[lo, hi)` lies within `v`'s allocation, which this function owns; MADV_HUGEPAGE
            // is advice about how pages are backed and never changes their contents (untouched pages
            // still read as zero). Its result is ignored: without huge pages the buffer is as valid.
            unsafe {
                libc::madvise(lo as *mut libc::c_void, hi - lo, libc::MADV_HUGEPAGE);
            }
        }
    }
    Ok(v)
}

/// Checks that every input holds what its declaration and the plan make the code read.
fn check_inputs<T: Elem>(
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    inputs: &[InputRef<'_, T>],
) -> Result<()> {
    if inputs.len() != kernel.inputs.len() {
        return Err(kiln_ir::IrError::Arity {
            expected: kernel.inputs.len(),
            got: inputs.len(),
        }
        .into());
    }
    for (i, (input, decl)) in inputs.iter().zip(&kernel.inputs).enumerate() {
        let bad = |why: String| JitError::BadInput {
            index: i,
            name: decl.name.clone(),
            why,
        };
        let buf = match input {
            InputRef::Slice(buf) => buf,
            InputRef::View(view) => {
                check_view(st, geo, kernel, plan, i, view).map_err(bad)?;
                continue;
            }
        };
        let declared = kiln_ir::shape::checked_size(&decl.shape)?;
        let expected = if plan.inputs[i] == InputPlan::Materialise {
            geo.n
        } else {
            declared
        };
        if buf.len() != expected {
            let what = if plan.inputs[i] == InputPlan::Materialise {
                format!("a materialised buffer of the iteration shape {:?}", kernel.shape)
            } else {
                format!("shape {:?}", decl.shape)
            };
            return Err(bad(format!(
                "{} elements given, {expected} expected for {what}",
                buf.len()
            )));
        }
        if geo.n == 0 {
            continue;
        }
        let need = match st.inputs[i] {
            Access::Splat => 1,
            Access::Contiguous => geo.n,
            Access::RowRun | Access::RowSplat => {
                let InputPlan::PerRow { outer_strides, .. } = &plan.inputs[i] else {
                    return Err(bad("the plan changed under the kernel".into()));
                };
                let (lo, hi) = row_reach(plan, outer_strides, st.inputs[i]);
                if lo < 0 {
                    return Err(bad(format!("negative outer strides {outer_strides:?}")));
                }
                usize::try_from(hi + 1).map_err(|_| bad("row offsets overflow".into()))?
            }
        };
        if buf.len() < need {
            return Err(bad(format!("{} elements, but the plan reads {need}", buf.len())));
        }
    }
    Ok(())
}

/// The lowest and highest element offsets a per-row input is read at (computed in i128, so no
/// overflow): the extreme row starts, plus `row_len - 1` for a run.
fn row_reach(plan: &BroadcastPlan, outer_strides: &[isize], access: Access) -> (i128, i128) {
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&d, &s) in plan.outer_shape().iter().zip(outer_strides) {
        let span = (d as i128 - 1) * s as i128;
        if span < 0 { lo += span } else { hi += span }
    }
    if access == Access::RowRun {
        hi += plan.row_len as i128 - 1;
    }
    (lo, hi)
}

/// Checks a view read in place (see [`InputRef::View`]) before any call: the plan reads it per row,
/// the view has the declared shape and non-negative strides, the plan's outer strides are exactly the
/// view's strides broadcast to the iteration shape, and a run's inner axes step as the view's
/// (C-contiguous within the row), so every offset the code reads is the offset of an element of the
/// view; and (again, in i128) every such offset lies within `[0, span)`, where `span` is one past the
/// largest offset of an element of the view.
fn check_view<T: Elem>(
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    i: usize,
    view: &ArrayViewD<'_, T>,
) -> std::result::Result<(), String> {
    let decl = &kernel.inputs[i].shape;
    if view.shape() != &decl[..] {
        return Err(format!("a view of shape {:?} for shape {decl:?}", view.shape()));
    }
    let InputPlan::PerRow { outer_strides, .. } = &plan.inputs[i] else {
        return Err(format!(
            "a strided view is read in place only per row, not as {}",
            plan.inputs[i]
        ));
    };
    let access = st.inputs[i];
    if !matches!(access, Access::RowRun | Access::RowSplat) {
        return Err("the plan changed under the kernel".into());
    }
    if geo.n == 0 || view.is_empty() {
        // nothing is read (an empty view broadcasts only to an empty iteration shape)
        return if geo.n == 0 {
            Ok(())
        } else {
            Err("an empty view read by a non-empty kernel".into())
        };
    }
    let strides = view.strides();
    if view.shape().iter().zip(strides).any(|(&d, &s)| d > 1 && s < 0) {
        return Err(format!("negative strides {strides:?}"));
    }
    // the strides with which the kernel's points map to the view's elements (0 on broadcast axes)
    let shape = &kernel.shape;
    let full = kiln_ir::shape::broadcast_strides(decl, strides, shape).map_err(|e| e.to_string())?;
    let k = plan.outer_axes;
    if outer_strides[..] != full[..k] {
        return Err(format!(
            "outer strides {outer_strides:?}, but the view's strides read as {:?}",
            &full[..k]
        ));
    }
    let cs = kiln_ir::shape::c_strides(shape);
    let inner_ok = match access {
        // point j of a row is at row start + j: each inner axis must step as in a C-contiguous row
        Access::RowRun => (k..shape.len()).all(|a| shape[a] == 1 || full[a] == cs[a]),
        // a row reads its first point only: the row's other points are the same element
        _ => (k..shape.len()).all(|a| full[a] == 0),
    };
    if !inner_ok {
        return Err(format!(
            "the view's inner strides {:?} do not make the row the plan reads",
            &full[k..]
        ));
    }
    let span = 1 + view
        .shape()
        .iter()
        .zip(strides)
        .map(|(&d, &s)| (d as i128 - 1) * s.max(0) as i128)
        .sum::<i128>();
    let (lo, hi) = row_reach(plan, outer_strides, access);
    if lo < 0 || hi >= span {
        return Err(format!(
            "the plan reads offsets {lo}..={hi}, but the view spans {span}"
        ));
    }
    Ok(())
}

/// `scan(ins, out, state, params, o_begin, o_end)`: see scan.rs.
type ScanFn = unsafe extern "C" fn(*const *const u8, *mut u8, *mut u8, *const i64, i64, i64);

/// Runs a scan over `inputs` into a fresh output of `n` elements: see [`execute_scan_into`].
pub(crate) fn execute_scan<T: Elem>(
    code: &ScanCode,
    kernel: &KernelIR,
    access: &[Access],
    params: &[i64],
    state_bytes: usize,
    inputs: &[&[T]],
    cfg: &RunConfig<'_>,
) -> Result<Vec<T>> {
    let lines = check_scan(kernel, access, params, inputs, cfg)?;
    let mut out: Vec<T> = zeroed_output(lines.n)?;
    run_scan(code, &lines, params, state_bytes, inputs, &mut out, cfg)?;
    Ok(out)
}

/// Runs a scan over `inputs` straight into the caller's `out`, which must hold exactly the `n`
/// elements of the scan's iteration space (every one of them is written): checks every buffer against
/// the access the code makes (splat: one element; contiguous: `n`) and `out` against `n`, allocates
/// one state row (`inner` elements of `state_bytes`) per unit, and runs blocks `o_begin..o_end` per
/// unit. Units are ranges of whole blocks, so no line is split and the bits never depend on the cut.
#[allow(clippy::too_many_arguments)]
pub(crate) fn execute_scan_into<T: Elem>(
    code: &ScanCode,
    kernel: &KernelIR,
    access: &[Access],
    params: &[i64],
    state_bytes: usize,
    inputs: &[&[T]],
    out: &mut [T],
    cfg: &RunConfig<'_>,
) -> Result<()> {
    let lines = check_scan(kernel, access, params, inputs, cfg)?;
    run_scan(code, &lines, params, state_bytes, inputs, out, cfg)
}

/// A scan's geometry, computed by kiln-jit from the kernel's checked shape (never from the caller).
struct ScanLines {
    n: usize,
    outer: usize,
    inner: usize,
}

/// Checks a scan run before any code is called: the kernel is a scan, `params` are the ones kiln-jit
/// computed for its shape, every input holds what the code reads, and the start is the kernel's own.
fn check_scan<T: Elem>(
    kernel: &KernelIR,
    access: &[Access],
    params: &[i64],
    inputs: &[&[T]],
    cfg: &RunConfig<'_>,
) -> Result<ScanLines> {
    if inputs.len() != kernel.inputs.len() || access.len() != inputs.len() {
        return Err(kiln_ir::IrError::Arity {
            expected: kernel.inputs.len(),
            got: inputs.len(),
        }
        .into());
    }
    if cfg.start != Start::Identity {
        return Err(JitError::Unsupported(
            "a scan takes its initial value in the kernel".into(),
        ));
    }
    let n = kiln_ir::shape::checked_size(&kernel.shape)?;
    let (outer, len, inner) = match kernel.kind {
        KernelKind::Scan(s) => s.lines(&kernel.shape),
        _ => return Err(JitError::Unsupported("not a scan kernel".into())),
    };
    // the parameters the code trusts were computed by kiln-jit from this kernel's shape
    if params.len() != 4 + 2 * kernel.shape.len()
        || params[..4] != [n as i64, outer as i64, len as i64, inner as i64]
    {
        return Err(JitError::WrongKernel(
            "scan parameters do not match the kernel".into(),
        ));
    }
    for (i, (buf, &acc)) in inputs.iter().zip(access).enumerate() {
        let need = match acc {
            Access::Splat => 1.min(n),
            _ => n,
        };
        if buf.len() < need {
            return Err(JitError::BadInput {
                index: i,
                name: kernel.inputs[i].name.clone(),
                why: format!("{} elements, but the scan reads {need}", buf.len()),
            });
        }
    }
    Ok(ScanLines { n, outer, inner })
}

/// Runs the checked scan `lines` into `out`, after checking that `out` holds exactly `n` elements:
/// the code writes every flat position below `n` and no other.
fn run_scan<T: Elem>(
    code: &ScanCode,
    lines: &ScanLines,
    params: &[i64],
    state_bytes: usize,
    inputs: &[&[T]],
    out: &mut [T],
    cfg: &RunConfig<'_>,
) -> Result<()> {
    // the code steps DTYPE-sized elements; `Real` is sealed to f64 and f32
    const { assert!(std::mem::size_of::<T>() == T::DTYPE.size()) };
    let &ScanLines { n, outer, inner } = lines;
    if out.len() != n {
        return Err(JitError::BadInput {
            index: inputs.len(),
            name: "output".into(),
            why: format!("{} elements of {} given for a scan of {n}", out.len(), T::DTYPE),
        });
    }
    if n == 0 {
        return Ok(());
    }
    let units = cfg.max_units.clamp(1, outer);
    let per = outer.div_ceil(units);
    let units = outer.div_ceil(per);
    let state_len = if inner > 1 { inner * state_bytes } else { 0 };
    // f64 words hold either state type at any alignment the code needs
    let words = units.saturating_mul(state_len).div_ceil(8);
    Vec::<f64>::new()
        .try_reserve_exact(words)
        .map_err(|_| oom(words))?;
    let mut state: Vec<f64> = vec![0.0; words];
    let ins: Vec<*const u8> = inputs.iter().map(|b| b.as_ptr().cast()).collect();
    let shared = Shared {
        ins: ins.as_ptr(),
        out_val: out.as_mut_ptr().cast(),
        out_idx: state.as_mut_ptr().cast(),
        params: params.as_ptr(),
    };
    let claims: Vec<AtomicBool> = (0..units).map(|_| AtomicBool::new(false)).collect();
    let entry = code.entry;
    let work = |u: usize| {
        if u >= units || claims[u].swap(true, Ordering::AcqRel) {
            return;
        }
        let (ob, oe) = (u * per, ((u + 1) * per).min(outer));
        assert!(ob <= oe && oe <= outer, "unit out of range");
        let sh = shared;
        // SAFETY: every input holds what the code reads (checked by `check_scan`: `n` elements for
        // flat reads, one for splats; the code reads flat positions below `n` only, as blocks `ob..oe`
        // of `len * inner` points lie within `outer` blocks); `out` holds exactly `n` elements
        // (checked above: the caller's slice or a fresh buffer, borrowed mutably for this whole
        // function, so nothing else reads or writes it meanwhile) and the unit writes only its
        // blocks' points; the state buffer holds `units` rows of `inner` states and this unit
        // (claimed once) uses row `u` alone; `params` was built by kiln-jit for this kernel (checked
        // by `check_scan`). Every buffer outlives `spread`.
        unsafe {
            let st = sh.out_idx.add(u * state_len);
            entry(sh.ins, sh.out_val, st, sh.params, ob as i64, oe as i64)
        };
    };
    cfg.spread.spread(units, &work);
    if !claims.iter().all(|c| c.load(Ordering::Acquire)) {
        return Err(JitError::Unsupported(
            "the executor did not run every work unit".into(),
        ));
    }
    Ok(())
}

/// The error of an output that cannot be allocated.
fn oom(elements: usize) -> JitError {
    kiln_ir::IrError::Allocation {
        what: "the kernel's output".into(),
        elements,
    }
    .into()
}
