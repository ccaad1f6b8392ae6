//! kiln-jit: kiln's Cranelift backend. Each [`KernelIR`] read through a [`BroadcastPlan`] becomes one
//! native function that reads every input once and writes its output once, checked against
//! [`kiln_ir::interpret`] (the oracle).
//!
//! - [`Schedule`]: lanes (scalar or one 128-bit vector), vectors per iteration, accumulators;
//! - [`compile`] / [`KernelCache`]: compiled kernels cached by structure, never by size;
//! - [`CompiledKernel::run`]: checks every buffer, runs the code, returns the interpreter's [`Tensor`];
//! - [`CompiledKernel::explain`]: the CLIF and VCode text of a kernel.
//!
//! Inside, one framework for every kernel (map, reduction, scan): `layout` (structure, [`Mode`] and
//! run-time parameters), `key` (the code generator's input, [`KernelKey`]), `compile` (the one `define` step), `frame` (what every
//! kernel's function shares: entry loads, hoisted leaves, the bottom-tested loop), `skeleton` (the
//! loops of maps and reductions), `scan` (the loops of scans), `lower` (opcodes), `math` (how each
//! transcendental is lowered), `vmath` (vector polynomials for exp, log, sin, cos, tan, pow, ...),
//! `reduce` (accumulators), `wide` (the functions with a wide routine at the host's full vector width, compiled by rustc,
//! which `skeleton/block.rs` calls on blocks of a row); and to run them: `run` (the safe run API), `check` (input checks), `plan`
//! (the cut into work units), `output` (buffers and result types), `execute` (one run), `call` (the
//! only unsafe code). Typed kernels (bool, int32 and int64 values beside floats, [`kiln_ir::typed`])
//! run on this framework too ([`compile_typed`]; the rules in [`typed`]), their opcodes lowered by
//! the same `lower`, bool and integer reductions and scans folding int64 lanes (`int_acc`, `scan`;
//! int32 min and max `i32x4` ones, int32 sums two `i64x2` halves).
//!
//! # ABI of a compiled kernel
//! `extern "C" fn(ins: *const *const T, out_val: *mut u8, out_idx: *mut u8, params: *const i64,
//! seg_begin: i64, seg_end: i64, lo: i64, hi: i64)` processes segments `seg_begin..seg_end` (see
//! `layout`), each over the flat range `[lo, hi)` within it (clamped to `n`): `ins[i]` is input `i`'s
//! C-contiguous buffer; `out_val` holds the map's or scan's output (`n` elements of `T`) or the
//! reduction's accumulators (f64 for sum / prod, `T` otherwise, pre-filled with the identity or the
//! start); `out_idx` the indices of argmin / argmax (integers as wide as `T`), or a scan's row of
//! carried states; `params` the sizes. A scan's segments are its blocks of lines; it ignores `lo`
//! and `hi` (see `scan`).
//!
//! # Work units and whole-array reductions
//! A run is cut into work units that write disjoint memory (ranges of a map, groups of segments of a
//! row reduction, column ranges of a kept reduction), which the caller's [`Spread`] may run on threads:
//! the bits never depend on the cut. A whole-array reduction takes at most two passes: the first cuts
//! the `n` points into chunks of `chunk_len` points (a function of `n` and [`RunConfig`]'s tuning
//! alone), each reduced by the SIMD loop into its own partial (kept in a reusable [`Workspace`]); the
//! second folds the partials in chunk order from the start. An input of one chunk takes one pass.
//!
//! ```
//! use kiln_ir::*;
//! use kiln_jit::{Schedule, compile};
//! let mut arena = ExprArena::new();
//! let x = arena.input(0);
//! let y = arena.input(1);
//! let body = arena.binary(BinaryOp::Mul, x, y);
//! let kernel = KernelIR {
//!     dtype: ElemType::F64,
//!     inputs: vec![
//!         InputDecl::new("x", vec![2, 3]),
//!         InputDecl::new("y", vec![3]),
//!     ],
//!     shape: vec![2, 3],
//!     arena,
//!     body,
//!     extra: vec![],
//!     kind: KernelKind::Reduce { op: ReduceOp::Sum, axes: vec![1] },
//! };
//! let layouts: Vec<InputLayout> = kernel.inputs.iter()
//!     .map(|i| InputLayout::contiguous(&i.shape))
//!     .collect();
//! // rows this short would be flattened and `y` materialised by the default plan; min_row = 1 reads
//! // `y` as a run repeated per row instead (no copy)
//! let plan = BroadcastPlan::new(&kernel.shape, &layouts, PlanOptions { min_row: 1 }).unwrap();
//! assert!(matches!(plan.inputs[1], InputPlan::PerRow { row: RowAccess::Run, .. }));
//! let compiled = compile(&kernel, &plan, Schedule::for_kernel(&kernel)).unwrap();
//! let x = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
//! let y = [1.0, 10.0, 100.0];
//! let out = compiled.run_f64(&kernel, &plan, &[&x, &y]).unwrap();
//! assert_eq!(out.shape, vec![2]);
//! assert_eq!(out.values, Values::F64(vec![321.0, 654.0]));
//! ```

#![deny(unsafe_code)]
#![deny(missing_docs)]

mod bytes;
mod cache;
mod call;
mod check;
mod clif;
mod compile;
mod complex_acc;
mod compound;
mod error;
mod execute;
mod frame;
mod host;
mod int_acc;
mod key;
mod layout;
mod lower;
mod math;
mod moments;
mod output;
mod plan;
mod reduce;
mod run;
mod scan;
mod schedule;
mod serial;
mod skeleton;
pub mod typed;
mod vmath;
pub mod wide;

pub use cache::{CacheStats, KernelCache, global};
pub use call::{
    apply_arg, apply_extreme, apply_int_sum, apply_kept_extreme, apply_kept_int, apply_kept_rows,
    apply_moments, apply_sum, apply_wide, apply_wide_binary, apply_wide_complex_abs, apply_wide_complex_div,
    apply_wide_from, apply_wide_sincos, live_modules, zeroed_output,
};
pub use compile::{Dumps, NO_FMA_ENV};
pub use error::{JitError, Result};
pub use key::KernelKey;
pub use layout::{Access, Mode, Parts, Structure, TypedValues};
pub use math::{MAX_INLINE_MATH, binary_ulp_bound, complex_ulp_bound, unary_ulp_bound};
pub use run::{Elem, InputRef, OutSlice, RunConfig, Serial, Spread, Stored, TypedView, Workspace};
pub use schedule::{COMPONENTS, LONG_SUM_ROW, Schedule};
pub use serial::{Part, SerialMap, SerialReduce};

/// Whether a compound reduction over `axes` (sorted, distinct) of a rank-`rank` iteration space
/// compiles: every reduced axis trailing (rows, whole arrays), at least one.
pub fn compiles_compound(axes: &[usize], rank: usize) -> bool {
    !axes.is_empty() && axes.iter().enumerate().all(|(i, &a)| a == rank - axes.len() + i)
}

/// Whether the sibling reductions `ops` over `axes` (sorted, distinct) of a rank-`rank` iteration
/// space compile in one pass, and run so: at most [`Parts::MAX`] of them, and every reduced axis
/// trailing (as [`compiles_compound`]: rows, whole arrays), or the trailing axes kept
/// (`max(m, axis=0)`) where every component or none is a sum ([`Parts::kept_order`]). `float` is
/// the float kernel's dtype (None: a typed kernel's values): kept sums of float32 values run one
/// by one, where each plain read's sum steps its rows at full width, since the merged pass adds
/// every component inline, two widened f64 halves a vector (`sum(m, axis=0) + sum(m*m,
/// axis=0)` of 4000 x 4000 float32 measured 7.2 ms merged, 5.9 apart).
///
/// [`Parts::MAX`]: layout::Parts::MAX
/// [`Parts::kept_order`]: layout::Parts::kept_order
pub fn compiles_siblings(
    axes: &[usize],
    rank: usize,
    ops: &[kiln_ir::ReduceOp],
    float: Option<ElemType>,
) -> bool {
    // float32 sums one by one (each plain read's at full width)
    let widened = float == Some(ElemType::F32) && ops.contains(&kiln_ir::ReduceOp::Sum);
    let trailing_kept = !axes.is_empty() && !axes.contains(&(rank - 1));
    let kept = trailing_kept && layout::Parts::kept_order(ops) && !widened;
    (compiles_compound(axes, rank) || kept) && ops.len() <= layout::Parts::MAX
}

use crate::layout::Geometry;
use kiln_ir::{BroadcastPlan, ElemType, KernelIR, Tensor};
use std::sync::Arc;
use std::time::Duration;

/// One compiled kernel (a map, a reduction or a scan): native code for one [`KernelKey`], runnable
/// from many threads at once.
pub struct CompiledKernel {
    key: KernelKey,
    code: call::Code,
    dumps: Option<Dumps>,
    compile_time: Duration,
}

/// Compiles `kernel` read through `plan` with `schedule`, through the global [`KernelCache`].
pub fn compile(kernel: &KernelIR, plan: &BroadcastPlan, schedule: Schedule) -> Result<Arc<CompiledKernel>> {
    cache::global().get_or_compile(kernel, plan, schedule)
}

/// Compiles a typed kernel ([`kiln_ir::typed`]: bool and integer values, casts explicit) read
/// through `plan` with `schedule`, through the global [`KernelCache`]: `kernel` is the typed
/// kernel's own ([`kiln_ir::typed::TypedKernel::kernel`]) in the float dtype of its lanes
/// ([`typed::lanes_dtype`]: float32 for a map of 32-bit values and a min, max or sum of int32 ones,
/// alone or as sibling reductions, else float64; [`typed::kernel_of`]
/// makes it), each input of another type declared [`kiln_ir::InputDecl::stored`] as it and read
/// where it is, as the float kernels read their stored inputs. It runs as a kernel of that dtype
/// does ([`CompiledKernel::bind`], inputs as [`InputRef::Stored`] where stored), and gives the
/// typed kernel's result type. Kernels [`typed::why_not`] accepts: maps, reductions over any axes,
/// scans of bool and integer values.
pub fn compile_typed(
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    schedule: Schedule,
) -> Result<Arc<CompiledKernel>> {
    cache::global().get_or_compile_typed(kernel, plan, schedule)
}

impl CompiledKernel {
    /// Compiles `key` into a fresh module, bypassing every cache.
    pub fn compile_uncached(key: KernelKey) -> Result<CompiledKernel> {
        Self::of_key(key, false)
    }

    /// Compiles `kernel` (uncached) keeping its CLIF and VCode text, for `kiln explain`.
    pub fn explain(kernel: &KernelIR, plan: &BroadcastPlan, schedule: Schedule) -> Result<CompiledKernel> {
        Self::of_key(KernelKey::new(kernel, plan, schedule)?, true)
    }

    /// [`CompiledKernel::explain`] of a typed kernel's `kernel` (see [`compile_typed`]).
    pub fn explain_typed(
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        schedule: Schedule,
    ) -> Result<CompiledKernel> {
        Self::of_key(KernelKey::typed(kernel, plan, schedule)?, true)
    }

    /// `key` compiled into a fresh module, keeping its CLIF and VCode text where `dumps`.
    fn of_key(key: KernelKey, dumps: bool) -> Result<CompiledKernel> {
        let c = compile::compile_key(&key, dumps)?;
        Ok(CompiledKernel {
            key,
            code: c.code,
            dumps: c.dumps,
            compile_time: c.compile_time,
        })
    }

    /// The CLIF and VCode text, if this kernel was compiled by [`CompiledKernel::explain`].
    pub fn dumps(&self) -> Option<&Dumps> {
        self.dumps.as_ref()
    }

    /// The cache key the kernel was compiled under.
    pub fn key(&self) -> &KernelKey {
        &self.key
    }

    /// The schedule (lanes, unroll, accumulators) the kernel was compiled with.
    pub fn schedule(&self) -> Schedule {
        self.key.schedule
    }

    /// How long building and finalizing the code took.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// Runs the kernel over `inputs` (input `i`'s C-contiguous buffer: `kernel.inputs[i].shape`, or
    /// the iteration shape where the plan says `Materialise`). `kernel` and `plan` must have the
    /// structure this kernel was compiled for (any sizes).
    pub fn run<T: Elem>(&self, kernel: &KernelIR, plan: &BroadcastPlan, inputs: &[&[T]]) -> Result<Tensor> {
        self.run_with(kernel, plan, inputs, &RunConfig::default(), &mut Workspace::new())
    }

    /// [`CompiledKernel::run`] with a start, a cut into work units run by `cfg.spread`, and a reusable
    /// workspace for the partials of whole-array reductions.
    pub fn run_with<T: Elem>(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &[&[T]],
        cfg: &RunConfig<'_>,
        ws: &mut Workspace,
    ) -> Result<Tensor> {
        self.run_with_extra(kernel, plan, inputs, &mut [], cfg, ws)
    }

    /// Runs a map or scan whose result is a float array straight into `out` (exactly `n` elements, C
    /// order): no allocation. Other kernels return [`JitError::BadInput`]: use [`CompiledKernel::run`].
    pub fn run_into<T: Elem>(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &[&[T]],
        out: &mut [T],
    ) -> Result<()> {
        self.run_into_with(kernel, plan, inputs, out, &RunConfig::default())
    }

    /// [`CompiledKernel::run_into`], cut into work units run by `cfg.spread`.
    pub fn run_into_with<T: Elem>(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &[&[T]],
        out: &mut [T],
        cfg: &RunConfig<'_>,
    ) -> Result<()> {
        let (st, geo) = self.check(kernel, plan, T::DTYPE)?;
        let mut ws = Workspace::new();
        execute::execute(
            &self.code,
            &st,
            &geo,
            kernel,
            plan,
            &slice_refs(inputs),
            Some(T::out_slice(out)),
            &mut [],
            &[],
            cfg,
            &mut ws,
        )
        .map(|_| ())
    }

    /// Runs a map of several outputs ([`KernelIR::extra`]) into `outs`, one slice of exactly `n`
    /// elements per output (C order), in one pass: every input is read once per point. A kernel of one
    /// output takes one slice (as [`CompiledKernel::run_into`]).
    pub fn run_into_many<T: Elem>(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &[&[T]],
        outs: &mut [&mut [T]],
    ) -> Result<()> {
        let (st, geo) = self.check(kernel, plan, T::DTYPE)?;
        let types = extra_types(&st, kernel, plan)?;
        let mut outs: Vec<OutSlice<'_>> = outs.iter_mut().map(|o| T::out_slice(o)).collect();
        run_many(
            &self.code,
            &st,
            &geo,
            kernel,
            plan,
            &slice_refs(inputs),
            &mut outs,
            &types,
            &RunConfig::default(),
        )
    }

    /// Runs a reduction of every axis with further map outputs ([`KernelIR::extra`]): its value as
    /// [`CompiledKernel::run_with`] gives it, and each further output written into `extra` (`n`
    /// elements each, C order), in one pass.
    pub fn run_with_extra<T: Elem>(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &[&[T]],
        extra: &mut [&mut [T]],
        cfg: &RunConfig<'_>,
        ws: &mut Workspace,
    ) -> Result<Tensor> {
        let (st, geo) = self.check(kernel, plan, T::DTYPE)?;
        let inputs = slice_refs(inputs);
        let types = extra_types(&st, kernel, plan)?;
        let mut extra: Vec<OutSlice<'_>> = extra.iter_mut().map(|o| T::out_slice(o)).collect();
        let tensor = execute::execute(
            &self.code, &st, &geo, kernel, plan, &inputs, None, &mut extra, &types, cfg, ws,
        )?;
        Ok(tensor.expect("a run without a destination returns its tensor"))
    }

    /// Binds this code to one kernel and plan: their structure is checked and their geometry (the
    /// sizes the code is passed) computed once, so each run of the [`BoundKernel`] only checks its
    /// buffers. This is what an executor keeps per specialisation.
    pub fn bind(self: &Arc<Self>, kernel: &KernelIR, plan: &BroadcastPlan) -> Result<BoundKernel> {
        let (st, geo) = self.check(kernel, plan, kernel.dtype)?;
        let extra_types = extra_types(&st, kernel, plan)?;
        let mut bound = BoundKernel {
            code: self.clone(),
            kernel: kernel.clone(),
            plan: plan.clone(),
            st,
            geo,
            extra_types,
            serial: None,
        };
        // a map's call into the caller's buffers on the calling thread (below the threshold)
        bound.serial = bound.serial_map().ok().map(Box::new);
        Ok(bound)
    }

    /// The structure and geometry of `kernel` read as `plan`, checked to be what this code was
    /// compiled for.
    fn check(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        given: ElemType,
    ) -> Result<(Structure, Geometry)> {
        if kernel.dtype != given {
            return Err(JitError::DType {
                kernel: kernel.dtype,
                given,
            });
        }
        let st = if self.key.structure.typed.is_some() {
            Structure::typed(kernel, plan)?.0
        } else {
            Structure::new(kernel, plan)?
        };
        if st != self.key.structure
            || kernel.body != self.key.body
            || kernel.extra != self.key.extra
            || kernel.arena != self.key.arena
        {
            return Err(JitError::WrongKernel(format!(
                "compiled for {:?}, given {:?}",
                self.key.structure, st
            )));
        }
        let geo = st.geometry(kernel, plan)?;
        Ok((st, geo))
    }

    /// [`CompiledKernel::run`] for f64 kernels.
    pub fn run_f64(&self, kernel: &KernelIR, plan: &BroadcastPlan, inputs: &[&[f64]]) -> Result<Tensor> {
        self.run(kernel, plan, inputs)
    }

    /// [`CompiledKernel::run`] for f32 kernels.
    pub fn run_f32(&self, kernel: &KernelIR, plan: &BroadcastPlan, inputs: &[&[f32]]) -> Result<Tensor> {
        self.run(kernel, plan, inputs)
    }
}

/// A run into one destination per output (see [`CompiledKernel::run_into_many`]).
#[allow(clippy::too_many_arguments)]
fn run_many<T: Elem>(
    code: &call::Code,
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    inputs: &[InputRef<'_, T>],
    outs: &mut [OutSlice<'_>],
    extra_types: &[ElemType],
    cfg: &RunConfig<'_>,
) -> Result<()> {
    let Some((first, extra)) = outs.split_first_mut() else {
        return Err(JitError::Unsupported(format!(
            "no output given for a kernel of {} outputs",
            kernel.n_outputs()
        )));
    };
    let mut ws = Workspace::new();
    execute::execute(
        code,
        st,
        geo,
        kernel,
        plan,
        inputs,
        Some(first.reborrow()),
        extra,
        extra_types,
        cfg,
        &mut ws,
    )
    .map(|_| ())
}

/// The types of `kernel`'s further outputs (read as `plan`, of structure `st`) as a run writes
/// them: a typed kernel's own ([`kiln_ir::typed::TypedKernel::output_type_of`]), a float kernel's
/// dtype (a logical output written 1 / 0 in it).
fn extra_types(st: &Structure, kernel: &KernelIR, plan: &BroadcastPlan) -> Result<Vec<ElemType>> {
    Ok(match st.typed {
        Some(_) => {
            let typed = Structure::typed(kernel, plan)?.1;
            (1..kernel.n_outputs()).map(|o| typed.output_type_of(o)).collect()
        }
        None => vec![kernel.dtype; kernel.n_outputs().saturating_sub(1)],
    })
}

/// Slices as run inputs.
fn slice_refs<'a, T>(inputs: &[&'a [T]]) -> Vec<InputRef<'a, T>> {
    inputs.iter().map(|&s| InputRef::Slice(s)).collect()
}

/// A compiled kernel bound to the kernel and plan it runs (see [`CompiledKernel::bind`]): the fixed
/// cost of a run is checking the buffers and calling the code.
pub struct BoundKernel {
    code: Arc<CompiledKernel>,
    kernel: KernelIR,
    plan: BroadcastPlan,
    st: Structure,
    geo: Geometry,
    /// The further outputs' types as a run writes them (a typed kernel's own, a float kernel's
    /// dtype).
    extra_types: Vec<ElemType>,
    /// A map's serial call, which a run into the caller's buffers on the calling thread takes
    /// ([`SerialMap::run_refs`]: no run plan, no output bookkeeping).
    serial: Option<Box<SerialMap>>,
}

impl BoundKernel {
    /// The compiled code.
    pub fn code(&self) -> &CompiledKernel {
        &self.code
    }

    fn dtype_is<T: Elem>(&self) -> Result<()> {
        if self.kernel.dtype != T::DTYPE {
            return Err(JitError::DType {
                kernel: self.kernel.dtype,
                given: T::DTYPE,
            });
        }
        Ok(())
    }

    /// [`CompiledKernel::run_with`] for the bound kernel and plan; an input may also be a view read
    /// in place ([`InputRef::View`]) where the plan reads it per row with the view's own strides.
    pub fn run_with<T: Elem>(
        &self,
        inputs: &[InputRef<'_, T>],
        cfg: &RunConfig<'_>,
        ws: &mut Workspace,
    ) -> Result<Tensor> {
        self.run_with_extra(inputs, &mut [], cfg, ws)
    }

    /// [`CompiledKernel::run_into_many`] for the bound kernel and plan, cut into work units run by
    /// `cfg.spread`, into the caller's buffers of every output's own type (a float kernel's dtype, a
    /// typed kernel's ([`compile_typed`]) output types, bools one byte each), `n` elements each in
    /// C order: no allocation. Everything is checked (the count, each buffer's type and length)
    /// before any is written. An input may be read in place from an output of the dtype
    /// ([`InputRef::Output`]).
    ///
    /// # Errors
    /// A count of outputs other than the kernel's, a buffer of another type or length (the error
    /// names it), and the errors of [`BoundKernel::run_with`].
    pub fn run_into_many<T: Elem>(
        &self,
        inputs: &[InputRef<'_, T>],
        outs: &mut [OutSlice<'_>],
        cfg: &RunConfig<'_>,
    ) -> Result<()> {
        self.dtype_is::<T>()?;
        if let Some(done) = self.serial_into(inputs, outs, cfg) {
            return done;
        }
        run_many(
            &self.code.code,
            &self.st,
            &self.geo,
            &self.kernel,
            &self.plan,
            inputs,
            outs,
            &self.extra_types,
            cfg,
        )
    }

    /// A map into the caller's buffers on the calling thread (`cfg` cuts no units and starts from
    /// the identity) by its serial call, where the inputs and outputs are what it takes (see
    /// [`SerialMap::run_refs`]); None elsewhere, for the general run.
    #[inline]
    fn serial_into<T: Elem>(
        &self,
        inputs: &[InputRef<'_, T>],
        outs: &mut [OutSlice<'_>],
        cfg: &RunConfig<'_>,
    ) -> Option<Result<()>> {
        let serial = self
            .serial
            .as_ref()
            .filter(|_| cfg.max_units <= 1 && cfg.start == kiln_ir::Start::Identity)?;
        serial.run_refs(inputs, outs)
    }

    /// [`CompiledKernel::run_with_extra`] for the bound kernel and plan, the further outputs into
    /// the caller's buffers of their types (as [`BoundKernel::run_into_many`]'s).
    pub fn run_with_extra<T: Elem>(
        &self,
        inputs: &[InputRef<'_, T>],
        extra: &mut [OutSlice<'_>],
        cfg: &RunConfig<'_>,
        ws: &mut Workspace,
    ) -> Result<Tensor> {
        self.dtype_is::<T>()?;
        self.fresh(inputs, extra, cfg, ws)
    }

    /// A run into a fresh result (and further outputs into `extra`): its tensor.
    fn fresh<T: Elem>(
        &self,
        inputs: &[InputRef<'_, T>],
        extra: &mut [OutSlice<'_>],
        cfg: &RunConfig<'_>,
        ws: &mut Workspace,
    ) -> Result<Tensor> {
        let (k, p) = (&self.kernel, &self.plan);
        let tensor = execute::execute(
            &self.code.code,
            &self.st,
            &self.geo,
            k,
            p,
            inputs,
            None,
            extra,
            &self.extra_types,
            cfg,
            ws,
        )?;
        Ok(tensor.expect("a run without a destination returns its tensor"))
    }

    /// Runs a typed kernel ([`compile_typed`]) into fresh outputs, every output of a kernel of
    /// several in one pass (each of its own type, bools one byte each): the first as
    /// [`BoundKernel::run_with`] gives it, then each further one (a map).
    ///
    /// # Errors
    /// A float kernel's code, and the errors of [`BoundKernel::run_with`].
    pub fn run_typed<T: Elem>(
        &self,
        inputs: &[InputRef<'_, T>],
        cfg: &RunConfig<'_>,
        ws: &mut Workspace,
    ) -> Result<Vec<Tensor>> {
        self.dtype_is::<T>()?;
        if self.st.typed.is_none() {
            return Err(JitError::Unsupported("run_typed of a float kernel's code".into()));
        }
        // the run into given buffers, into fresh ones (the first allocated by the run itself)
        let mut extra = self
            .extra_types
            .iter()
            .map(|&t| output::typed_fresh(t, self.geo.n))
            .collect::<Result<Vec<_>>>()?;
        let first = {
            let mut outs = extra
                .iter_mut()
                .map(output::values_out)
                .collect::<Option<Vec<OutSlice<'_>>>>()
                .ok_or_else(|| JitError::Unsupported("a further result of byte strings".into()))?;
            self.fresh(inputs, &mut outs, cfg, ws)?
        };
        Ok(std::iter::once(first)
            .chain(extra.into_iter().map(|values| Tensor {
                shape: self.kernel.shape.clone(),
                values,
            }))
            .collect())
    }

    /// The kernel this code is bound to.
    pub fn kernel(&self) -> &KernelIR {
        &self.kernel
    }

    /// The plan this code is bound to.
    pub fn plan(&self) -> &BroadcastPlan {
        &self.plan
    }

    /// [`CompiledKernel::run_into_with`] for the bound kernel and plan.
    pub fn run_into_with<T: Elem>(
        &self,
        inputs: &[InputRef<'_, T>],
        out: &mut [T],
        cfg: &RunConfig<'_>,
    ) -> Result<()> {
        self.run_into_out(inputs, T::out_slice(out), cfg)
    }

    /// Whether [`BoundKernel::run_into_out`] takes a reduction of this kernel into a buffer of
    /// type `ty`: an axis reduction of bool or integer values by sum, prod, min or max into int64,
    /// whose accumulators are its results (it folds in the caller's buffer).
    pub fn reduces_into(&self, ty: ElemType) -> bool {
        self.st.accumulates_in(ty)
    }

    /// A map or scan of the bound kernel and plan into `out`, the caller's buffer of the result's
    /// element type (a float kernel's dtype; a typed kernel's ([`compile_typed`]) own result type,
    /// bools one byte each), exactly `n` elements in C order: no allocation. A reduction where
    /// [`BoundKernel::reduces_into`] says so (its outputs in C order, started from `cfg.start`).
    ///
    /// # Errors
    /// An `out` of another type or length, a reduction other than those, and the errors of
    /// [`BoundKernel::run_with`].
    pub fn run_into_out<T: Elem>(
        &self,
        inputs: &[InputRef<'_, T>],
        mut out: OutSlice<'_>,
        cfg: &RunConfig<'_>,
    ) -> Result<()> {
        self.dtype_is::<T>()?;
        if let Some(done) = self.serial_into(inputs, std::slice::from_mut(&mut out), cfg) {
            return done;
        }
        let (k, p) = (&self.kernel, &self.plan);
        let mut ws = Workspace::new();
        execute::execute(
            &self.code.code,
            &self.st,
            &self.geo,
            k,
            p,
            inputs,
            Some(out),
            &mut [],
            &[],
            cfg,
            &mut ws,
        )
        .map(|_| ())
    }
}
