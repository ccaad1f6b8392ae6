//! The Cranelift backend: each kernel compiled by kiln-jit into one native SIMD function.
//!
//! [`Jit::prepare`](crate::Backend::prepare) compiles (or finds in kiln-jit's kernel cache) the code
//! for the kernel's structure and schedule; runs pass the prepared buffers' slices, and strided views
//! the plan reads in place (no copy), which kiln-jit bounds-checks against the plan before any compiled code reads them.

use crate::backend::{
    Backend, Buffer, BufferData, Buffers, DirectInputs, Executable, OutSlice, RunCtx, TypedBuffer, TypedData,
    copy_into,
};
use crate::error::{Error, Result};
use crate::interpreter::Interpreted;
use kiln_ir::typed::TypedKernel;
use kiln_ir::{BroadcastPlan, ElemType, InputLayout, KernelIR, KernelKind, ReduceOp, Start, Tensor};
use kiln_jit::{BoundKernel, Elem, InputRef, JitError, RunConfig, Schedule, Workspace};
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// The JIT backend; `schedule: None` lets kiln-jit choose per kernel (SIMD lanes, unrolled).
#[derive(Debug, Clone, Copy, Default)]
pub struct Jit {
    /// The schedule for every kernel, or `None` for kiln-jit's choice.
    pub schedule: Option<Schedule>,
}

impl Jit {
    /// The one-lane schedule: the "fused scalar" variant.
    pub fn scalar() -> Jit {
        Jit {
            schedule: Some(Schedule::scalar()),
        }
    }
}

impl From<JitError> for Error {
    fn from(e: JitError) -> Error {
        match e {
            JitError::Ir(e) => Error::Ir(e),
            other => Error::Jit(other.to_string()),
        }
    }
}

impl Backend for Jit {
    fn name(&self) -> &'static str {
        if self.schedule.is_some_and(|s| !s.is_vector()) {
            "jit-scalar"
        } else {
            "jit"
        }
    }

    fn compound_reductions(&self) -> bool {
        true
    }

    /// Compound reductions compile where every reduced axis is trailing (row statistics, whole
    /// arrays); a reduction over leading axes (columns) runs as the two reductions it replaced.
    fn runs_compound(&self, axes: &[usize], rank: usize) -> bool {
        kiln_jit::compiles_compound(axes, rank)
    }

    /// Sibling reductions compile where every reduced axis is trailing, or the trailing axes are
    /// kept and every component or none is a sum (float32 sums aside), up to `kiln_jit`'s number
    /// of components: `kiln_jit::compiles_siblings`.
    fn runs_siblings(&self, axes: &[usize], rank: usize, ops: &[ReduceOp], float: Option<ElemType>) -> bool {
        kiln_jit::compiles_siblings(axes, rank, ops, float)
    }

    fn prepare(&self, kernel: &KernelIR, plan: &BroadcastPlan) -> Result<Box<dyn Executable>> {
        let schedule = self.schedule.unwrap_or_else(|| Schedule::for_kernel(kernel));
        Ok(Box::new(JitExecutable {
            code: kiln_jit::compile(kernel, plan, schedule)?.bind(kernel, plan)?,
            workspace: Mutex::default(),
            typed: false,
        }))
    }

    /// `compiled: <what> of <dtype> values[ in one pass] by the JIT (<lanes> lanes, <unroll>
    /// vectors an iteration[, <accumulators> accumulators])`.
    fn float_note(&self, kernel: &KernelIR) -> String {
        let s = self
            .schedule
            .unwrap_or_else(|| Schedule::for_kernel(kernel))
            .normalised(kernel.dtype);
        let n = kernel.n_outputs();
        let (what, pass) = match &kernel.kind {
            KernelKind::Map if n > 1 => (format!("a map of {n} outputs"), " in one pass".to_string()),
            KernelKind::Map => ("a map".to_string(), String::new()),
            KernelKind::Reduce { op, .. } if n > 1 => (
                format!("the reduction {}", op.name()),
                format!(
                    " beside {} map output{}, in one pass",
                    n - 1,
                    if n == 2 { "" } else { "s" }
                ),
            ),
            KernelKind::Reduce { op, .. } => (format!("the reduction {}", op.name()), String::new()),
            KernelKind::Scan(scan) => (format!("the scan {}", scan.op.name()), String::new()),
            KernelKind::Compound { op, .. } => (
                format!("the compound reduction {}", op.name()),
                " in one pass".to_string(),
            ),
            KernelKind::Siblings { ops, .. } => {
                let ops: Vec<&str> = ops.iter().map(|op| op.name()).collect();
                (
                    format!("sibling reductions [{}]", ops.join(", ")),
                    " in one pass".to_string(),
                )
            }
        };
        let plural = |n: u8, one: &str| format!("{n} {one}{}", if n == 1 { "" } else { "s" });
        let mut how = format!(
            "{}, {} an iteration",
            plural(s.lanes, "lane"),
            plural(s.unroll, "vector")
        );
        if s.components.iter().any(|&k| k > 0) {
            // sibling reductions, each component its own count (kiln_jit::Schedule::components)
            let ks: Vec<String> = s
                .components
                .iter()
                .filter(|&&k| k > 0)
                .map(|k| k.to_string())
                .collect();
            how.push_str(&format!(", {} accumulators a component", ks.join(" / ")));
        } else if !matches!(kernel.kind, KernelKind::Map | KernelKind::Scan(_)) {
            how.push_str(&format!(", {}", plural(s.accumulators, "accumulator")));
        }
        format!(
            "compiled: {what} of {} values{pass} by the JIT ({how})",
            kernel.dtype
        )
    }

    fn compiles_typed(&self, typed: &TypedKernel) -> bool {
        typed_refusal(typed, None).is_none()
    }

    /// [`kiln_jit::typed::plan`]: the compiled typed code reads no converted copy.
    fn typed_plan(&self, kernel: &KernelIR, layouts: &[InputLayout]) -> Result<Option<BroadcastPlan>> {
        Ok(kiln_jit::typed::plan(kernel, layouts)?)
    }

    /// `compiled: typed kernel (<why>), <what> by the JIT's main code generator (<lanes> lanes)...`
    /// where it compiles it, else `interpreted: <why>, and` why it does not.
    fn typed_note(&self, typed: &TypedKernel, plan: &BroadcastPlan, why: &str) -> (bool, String) {
        match typed_refusal(typed, Some(plan)) {
            Some(not) => (false, format!("interpreted: {why}, and {not}")),
            None => (true, compiled_note(typed, plan, why)),
        }
    }

    /// Compiled again with its dumps kept: a typed kernel in the form [`kiln_jit::compile_typed`]
    /// takes, read as its plan says.
    fn code_dump(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        typed: Option<&TypedKernel>,
    ) -> Result<Option<crate::backend::CodeDump>> {
        let compiled = match typed {
            Some(t) => {
                let k = kiln_jit::typed::kernel_of(t);
                let schedule = self.schedule.unwrap_or_else(|| Schedule::for_kernel(&k));
                kiln_jit::CompiledKernel::explain_typed(&k, plan, schedule)?
            }
            None => {
                let schedule = self.schedule.unwrap_or_else(|| Schedule::for_kernel(kernel));
                kiln_jit::CompiledKernel::explain(kernel, plan, schedule)?
            }
        };
        let dumps = compiled
            .dumps()
            .ok_or_else(|| Error::Jit("the JIT kept no dumps".into()))?;
        Ok(Some(crate::backend::CodeDump {
            header: format!(
                "schedule {:?}, compiled in {:?}",
                compiled.schedule(),
                compiled.compile_time()
            ),
            clif: dumps.clif.clone(),
            asm: dumps.vcode.clone(),
        }))
    }

    /// Compiled by the main code generator ([`kiln_jit::compile_typed`]) in the form it compiles
    /// ([`kiln_jit::typed::kernel_of`]: its arena typed, the float lanes of its values, each input of
    /// another type stored as it), every output of a kernel of several in one pass, where it
    /// compiles it ([`kiln_jit::typed::why_not`]) and `plan` reads every input where it is; else on
    /// the typed interpreter.
    fn prepare_typed(&self, typed: &Arc<TypedKernel>, plan: &BroadcastPlan) -> Result<Box<dyn Executable>> {
        if typed_refusal(typed, Some(plan)).is_some() {
            return Ok(Interpreted::typed(typed.clone()));
        }
        let kernel = kiln_jit::typed::kernel_of(typed);
        let schedule = self.schedule.unwrap_or_else(|| Schedule::for_kernel(&kernel));
        Ok(Box::new(JitExecutable {
            code: kiln_jit::compile_typed(&kernel, plan, schedule)?.bind(&kernel, plan)?,
            workspace: Mutex::default(),
            typed: true,
        }))
    }
}

/// Why the JIT does not compile the typed kernel `typed` (read as `plan`, where given), if it does
/// not: the one rule of [`Jit::prepare_typed`](crate::Backend::prepare_typed),
/// [`Backend::compiles_typed`] and the explain note.
fn typed_refusal(typed: &TypedKernel, plan: Option<&BroadcastPlan>) -> Option<String> {
    if let Some(not) = kiln_jit::typed::why_not(typed) {
        return Some(format!("the JIT does not compile {not}"));
    }
    if plan.is_some_and(|p| p.copies() > 0) {
        return Some(
            "the JIT does not compile a plan that copies an input (no plan reads every input where it is)"
                .into(),
        );
    }
    None
}

/// The accumulators integer and bool reductions `ops` fold in a kernel of `lanes` lanes (int_acc.rs):
/// int64 ones, but at 4 lanes (int32 values) `i32x4` ones for min and max, and two `i64x2` halves
/// for a sum.
fn int_accumulators(ops: &[kiln_ir::ReduceOp], lanes: u8) -> &'static str {
    use kiln_ir::ReduceOp::{Max, Min};
    match lanes {
        4 if ops.iter().all(|op| matches!(op, Min | Max)) => "i32x4 vector accumulators",
        4 if ops.iter().any(|op| matches!(op, Min | Max)) => "int64 accumulators, i32x4 for min and max",
        _ => "int64 accumulators",
    }
}

/// What `kiln explain` says of the typed kernel `typed` (typed because of `why`) the JIT compiles:
/// what it computes in which lanes.
fn compiled_note(typed: &TypedKernel, plan: &BroadcastPlan, why: &str) -> String {
    let lanes = kiln_jit::typed::points_over(typed, plan);
    let vt = typed.value_type();
    let n = typed.kernel.n_outputs();
    let what = match &typed.kernel.kind {
        KernelKind::Map if n > 1 => {
            let types: Vec<String> = (0..n).map(|o| typed.output_type_of(o).to_string()).collect();
            format!("a map of {n} outputs ({}) in one pass", types.join(", "))
        }
        KernelKind::Map => format!("a map of {vt} values"),
        KernelKind::Scan(s) if vt.is_float() => {
            format!("the scan {} of {vt} values (as a float kernel's)", s.op.name())
        }
        KernelKind::Scan(s) if vt.is_complex() => {
            format!(
                "the scan {} of {vt} values (point by point, a state of both parts)",
                s.op.name()
            )
        }
        KernelKind::Scan(s) => format!("the scan {} of {vt} values (an int64 state)", s.op.name()),
        KernelKind::Siblings { ops, .. } => {
            let acc = int_accumulators(ops, lanes);
            let ops: Vec<&str> = ops.iter().map(|op| op.name()).collect();
            format!(
                "sibling reductions [{}] of {vt} values in one pass ({acc})",
                ops.join(", ")
            )
        }
        _ if vt.is_float() => format!("a reduction of {vt} values (float accumulators)"),
        _ if vt.is_complex() => format!("a reduction of {vt} values (one accumulator of both parts)"),
        KernelKind::Reduce { op, .. } => {
            format!(
                "a reduction of {vt} values ({})",
                int_accumulators(std::slice::from_ref(op), lanes)
            )
        }
        _ => format!("a reduction of {vt} values (int64 accumulators)"),
    };
    let what = match &typed.kernel.kind {
        KernelKind::Map => what,
        _ if n > 1 => format!("{what} beside {} map outputs, in one pass", n - 1),
        _ => what,
    };
    format!(
        "compiled: typed kernel ({why}), {what} by the JIT's main code generator ({lanes} lane{}), reading each in place",
        if lanes == 1 { "" } else { "s" }
    )
}

/// A compiled kernel (a map, reduction or scan, shared with kiln-jit's cache) bound to its
/// specialisation's kernel and plan, and the workspace its reductions' partials live in between runs
/// (a run that finds it busy, on another thread, uses a fresh one).
struct JitExecutable {
    code: BoundKernel,
    workspace: Mutex<Workspace>,
    /// A typed kernel's code ([`kiln_jit::compile_typed`]): its inputs arrive each in its own type,
    /// its outputs are of their own types.
    typed: bool,
}

/// The inputs as kiln-jit takes them: slices, views read in place (kiln-jit checks each view
/// against the plan before any compiled code reads it), and the elements of inputs stored in
/// another type (converted where the code reads them).
fn refs<'b, T: Clone>(b: &'b [Buffer<'_, T>]) -> Vec<InputRef<'b, T>> {
    b.iter()
        .map(|b| match &b.data {
            BufferData::Contiguous(d) => InputRef::Slice(&d[..]),
            BufferData::Strided(v) => InputRef::View(v.view()),
            BufferData::Stored(s) => InputRef::Stored(s.view()),
        })
        .collect()
}

impl JitExecutable {
    fn run_t<T: Elem>(
        &self,
        kernel: &KernelIR,
        inputs: &[InputRef<'_, T>],
        ctx: &RunCtx<'_>,
    ) -> Result<Tensor> {
        let n = kiln_ir::shape::checked_size(&kernel.shape)?;
        let cfg = ctx.parallel.jit_config(n, start_of(kernel, ctx));
        let run = |ws: &mut Workspace| self.code.run_with(inputs, &cfg, ws);
        self.with_workspace(run)
    }

    /// `run` with this executable's workspace, or a fresh one where another thread holds it.
    fn with_workspace<R>(&self, run: impl FnOnce(&mut Workspace) -> kiln_jit::Result<R>) -> Result<R> {
        Ok(match self.workspace.try_lock() {
            Ok(mut ws) => run(&mut ws)?,
            Err(_) => run(&mut Workspace::new())?,
        })
    }
}

impl JitExecutable {
    /// Every output of a map of several into a fresh buffer, in one pass; logical outputs (written as
    /// 1 / 0) typed as bools.
    fn run_many_t<T: Elem>(
        &self,
        kernel: &KernelIR,
        inputs: &[InputRef<'_, T>],
        ctx: &RunCtx<'_>,
    ) -> Result<Vec<kiln_ir::Tensor>> {
        let n = kiln_ir::shape::checked_size(&kernel.shape)?;
        let cfg = ctx.parallel.jit_config(n, start_of(kernel, ctx));
        if self.typed {
            // each output of its own type, written by the code
            return self.with_workspace(|ws| self.code.run_typed(inputs, &cfg, ws));
        }
        let mut outs = Vec::with_capacity(kernel.n_outputs());
        let reduces = matches!(kernel.kind, KernelKind::Reduce { .. });
        for _ in usize::from(reduces)..kernel.n_outputs() {
            let what = "an output of a kernel of several";
            outs.push(kiln_ir::shape::try_filled(n, T::ZERO, what)?);
        }
        let mut slices: Vec<OutSlice<'_>> = outs.iter_mut().map(|o| T::out_slice(o)).collect();
        // a reduction of every axis returns its value; its further outputs are maps
        let first = if reduces {
            Some(self.with_workspace(|ws| self.code.run_with_extra(inputs, &mut slices, &cfg, ws))?)
        } else {
            self.code.run_into_many(inputs, &mut slices, &cfg)?;
            None
        };
        let maps = outs.into_iter().enumerate().map(|(i, v)| {
            let o = i + usize::from(reduces);
            let values = match kernel.output_type_of(o) {
                ElemType::Bool => kiln_ir::Values::Bool(v.iter().map(|x| x.to_f64() != 0.0).collect()),
                _ => T::values(v),
            };
            kiln_ir::Tensor {
                shape: kernel.shape.clone(),
                values,
            }
        });
        Ok(first.into_iter().chain(maps).collect())
    }
}

impl JitExecutable {
    /// `run` of a typed kernel's buffers as its code takes them: inputs of the code's float dtype as
    /// a float kernel's, any other stored (byte strings read where they are, at any address).
    fn with_stored<R>(
        &self,
        bufs: &[TypedBuffer<'_>],
        run: impl FnOnce(&Buffers<'_>) -> Result<R>,
    ) -> Result<R> {
        if !self.typed {
            return Err(Error::Output(
                "a typed kernel's inputs given to a compiled float kernel".into(),
            ));
        }
        run(&stored(self.code.kernel().dtype, bufs))
    }
}

/// The error of typed buffers where [`stored`] gives float ones (never: `stored` gives every input
/// in the code's float dtype or stored).
fn typed_as_stored() -> Error {
    Error::Output("a typed kernel's inputs left unstored for its compiled code".into())
}

/// A typed kernel's buffers as its code (of float dtype `dtype`) takes them: each input of that
/// dtype as a float kernel's, any other stored.
fn stored<'s>(dtype: kiln_ir::ElemType, bufs: &'s [TypedBuffer<'_>]) -> Buffers<'s> {
    use kiln_jit::TypedView;
    /// Each buffer as a buffer of `T`: its elements where they are `T`'s (`own`), else stored.
    fn of<'s, T: Clone>(
        bufs: &'s [TypedBuffer<'_>],
        own: impl Fn(&'s TypedData<'_>) -> Option<BufferData<'s, T>>,
    ) -> Vec<Buffer<'s, T>> {
        bufs.iter()
            .map(|b| Buffer {
                data: own(&b.data).unwrap_or_else(|| BufferData::Stored(slice_of(&b.data))),
                shape: b.shape.clone(),
            })
            .collect()
    }
    match dtype {
        kiln_ir::ElemType::F64 => Buffers::F64(of(bufs, |d| match d {
            TypedData::F64(d) => Some(BufferData::Contiguous(Cow::Borrowed(&d[..]))),
            TypedData::View(TypedView::F64(v)) => Some(BufferData::Strided(v.view())),
            _ => None,
        })),
        kiln_ir::ElemType::F32 => Buffers::F32(of(bufs, |d| match d {
            TypedData::F32(d) => Some(BufferData::Contiguous(Cow::Borrowed(&d[..]))),
            TypedData::View(TypedView::F32(v)) => Some(BufferData::Strided(v.view())),
            _ => None,
        })),
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// The compiled code's input for `d`, borrowed.
fn slice_of<'s>(d: &'s TypedData<'_>) -> kiln_jit::Stored<'s> {
    use kiln_jit::Stored;
    match d {
        TypedData::Bool(d) => Stored::bools(d),
        TypedData::I32(d) => Stored::I32(d),
        TypedData::I64(d) => Stored::I64(d),
        TypedData::F32(d) => Stored::F32(d),
        TypedData::F64(d) => Stored::F64(d),
        TypedData::C64(d) => Stored::C64(d),
        TypedData::C128(d) => Stored::C128(d),
        TypedData::Bytes(d, w) => Stored::Bytes(d, *w),
        TypedData::View(v) => Stored::View(v.view()),
    }
}

impl std::fmt::Debug for JitExecutable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JitExecutable({:?})", self.code.code().schedule())
    }
}

/// The bound kernel ignores the `kernel` and `plan` a run passes: they are the ones it was prepared
/// for (the executor keeps both in the same specialisation), and kiln-jit checks every buffer against
/// the bound geometry before calling compiled code.
impl Executable for JitExecutable {
    fn run(
        &self,
        kernel: &KernelIR,
        _plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Tensor> {
        let run = |kernel: &KernelIR, inputs: &Buffers<'_>| match inputs {
            Buffers::F64(b) => self.run_t(kernel, &refs(b), ctx),
            Buffers::F32(b) => self.run_t(kernel, &refs(b), ctx),
            Buffers::Typed(_) => Err(typed_as_stored()),
        };
        match inputs {
            Buffers::Typed(b) => self.with_stored(b, |bufs| run(self.code.kernel(), bufs)),
            _ => run(kernel, inputs),
        }
    }

    fn run_many(
        &self,
        kernel: &KernelIR,
        _plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<Vec<kiln_ir::Tensor>> {
        let run = |kernel: &KernelIR, inputs: &Buffers<'_>| match inputs {
            Buffers::F64(b) => self.run_many_t(kernel, &refs(b), ctx),
            Buffers::F32(b) => self.run_many_t(kernel, &refs(b), ctx),
            Buffers::Typed(_) => Err(typed_as_stored()),
        };
        match inputs {
            Buffers::Typed(b) => self.with_stored(b, |bufs| run(self.code.kernel(), bufs)),
            _ => run(kernel, inputs),
        }
    }

    /// The bound kernel and plan, unless the plan materialises an input (a buffer of the
    /// iteration shape the caller does not have).
    fn direct(&self, _start: &Start<'_>) -> Option<(&KernelIR, &BroadcastPlan)> {
        let plan = self.code.plan();
        (!plan.inputs.contains(&kiln_ir::InputPlan::Materialise)).then(|| (self.code.kernel(), plan))
    }

    /// Into `out` of the result's type (kiln-jit checks it: a float kernel's dtype, a typed
    /// kernel's result type).
    fn call_into(&self, inputs: DirectInputs<'_, '_>, out: OutSlice<'_>, cfg: &RunConfig<'_>) -> Result<()> {
        match inputs {
            DirectInputs::F64(i) => Ok(self.code.run_into_out(i, out, cfg)?),
            DirectInputs::F32(i) => Ok(self.code.run_into_out(i, out, cfg)?),
        }
    }

    fn call(&self, inputs: DirectInputs<'_, '_>, cfg: &RunConfig<'_>, ws: &mut Workspace) -> Result<Tensor> {
        Ok(match inputs {
            DirectInputs::F64(i) => self.code.run_with(i, cfg, ws)?,
            DirectInputs::F32(i) => self.code.run_with(i, cfg, ws)?,
        })
    }

    /// Into `outs`, each of its output's type (kiln-jit checks them before any is written).
    fn call_into_many(
        &self,
        inputs: DirectInputs<'_, '_>,
        outs: &mut [OutSlice<'_>],
        cfg: &RunConfig<'_>,
    ) -> Result<()> {
        match inputs {
            DirectInputs::F64(i) => self.code.run_into_many(i, outs, cfg)?,
            DirectInputs::F32(i) => self.code.run_into_many(i, outs, cfg)?,
        }
        Ok(())
    }

    fn serial_map(&self) -> Option<kiln_jit::SerialMap> {
        self.code.serial_map().ok()
    }

    fn reduces_into(&self, ty: ElemType) -> bool {
        self.code.reduces_into(ty)
    }

    fn serial_reduce(&self, cfg: &RunConfig<'_>) -> Option<kiln_jit::SerialReduce> {
        self.code.serial_reduce(cfg).ok()
    }

    fn run_into(
        &self,
        kernel: &KernelIR,
        plan: &BroadcastPlan,
        inputs: &Buffers<'_>,
        out: OutSlice<'_>,
        ctx: &RunCtx<'_>,
    ) -> Result<()> {
        let direct = matches!(kernel.kind, KernelKind::Map | KernelKind::Scan(_))
            && kernel.output_type() == kernel.dtype
            && ctx.start == kiln_ir::Start::Identity;
        let n = kiln_ir::shape::checked_size(&kernel.shape)?;
        let cfg = ctx.parallel.jit_config(n, start_of(kernel, ctx));
        match (inputs, out) {
            (Buffers::F64(b), OutSlice::F64(o)) if direct => {
                Ok(self.code.run_into_with(&refs(b), o, &cfg)?)
            }
            (Buffers::F32(b), OutSlice::F32(o)) if direct => {
                Ok(self.code.run_into_with(&refs(b), o, &cfg)?)
            }
            (_, out) => copy_into(self.run(kernel, plan, inputs, ctx)?.values, out),
        }
    }
}

/// The start a run passes to the code: a scan's start lives in its kernel (the executor's start is
/// for reductions), everything else takes the executor's.
fn start_of<'a>(kernel: &KernelIR, ctx: &RunCtx<'a>) -> kiln_ir::Start<'a> {
    match kernel.kind {
        KernelKind::Scan(_) => kiln_ir::Start::Identity,
        _ => ctx.start,
    }
}
