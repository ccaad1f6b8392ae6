//! Scan kernels: the body (the scan's elementwise producer, fused) and the carried state in one
//! Cranelift function.
//!
//! The iteration space is `outer` blocks of `len` points along the scanned axis, `inner` elements
//! apart (see [`kiln_ir::Scan::lines`]). The function scans blocks `o_begin..o_end`:
//!
//! ```text
//! fn scan(ins: *const *const u8, out: *mut T, state: *mut u8, params: *const i64, o_begin, o_end)
//! inner == 1 (the innermost axis, or the flattened array): one line per block, in vectors:
//!     v = body(lanes points); exclusive: v = (prev, v[..lanes-1]), prev = v's last lane
//!     p = in-register prefix of v (log2(lanes) shifts filling with the identity)
//!     out = carry ⊕ p; carry = carry ⊕ p's last lane  (out's last lane, off the vector path;
//!                                                     a scalar tail finishes the line in order)
//! inner > 1 (an outer axis): vectorised across the `inner` independent lines of a block:
//!     state[c] = start; for each k along the axis: v = body(row k); out/state updated per column
//! ```
//!
//! The carried state of a sum or product is f64 (an f32 vector is widened into two F64X2 halves and
//! each output rounded once from its f64 value); cummax / cummin carry the data type. Along an outer
//! axis every column folds in sequential order, bit-exact with the interpreter. Along the innermost
//! axis the in-register prefix reassociates a sum or product within each vector (`carry + (a + b)`
//! instead of `(carry + a) + b`): the error bound is that of a sum reassociated in blocks of `lanes`
//! (2 for f64, 4 for f32 in the f64 state), `|err| <= (len + lanes) * eps * sum |x|` for the f64
//! state; max and min are exact (they are associative, NaN and signed zeros included). The reverse
//! scan walks the line from its end with the mirrored shifts. Lines are never split between work
//! units, so the bits never depend on the thread count.
//!
//! Inputs are read at the flat index (contiguous or materialised) or splatted: a scan's plan is flat
//! (the executor plans scans with no outer loop), and a plan with per-row inputs is refused.

use crate::call::{self, Elem, RunConfig, ScanCode};
use crate::compile::isa;
use crate::error::{JitError, Result};
use crate::layout::Access;
use crate::lower::{Gen, Leaves, W, cast, emit_body, mem};
use crate::math::{self, MathFn, MathRefs};
use crate::schedule::Schedule;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, ConstantData, Function, Immediate, InstBuilder, Signature, UserFuncName, Value, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use kiln_ir::shape::{c_strides, checked_size};
use kiln_ir::{BroadcastPlan, DType, InputPlan, KernelIR, KernelKind, Node, NodeId, Scan, ScanOp, Tensor};
use std::time::{Duration, Instant};

/// Parameter block: n, outer, len, inner, then (dim, c-stride) per axis.
const P_N: usize = 0;
const P_OUTER: usize = 1;
const P_LEN: usize = 2;
const P_INNER: usize = 3;
const P_AXES: usize = 4;

/// A compiled scan kernel bound to its kernel and plan (sizes included: a scan is compiled per
/// specialisation, which the executor caches).
pub struct ScanKernel {
    code: ScanCode,
    kernel: KernelIR,
    scan: Scan,
    access: Vec<Access>,
    params: Vec<i64>,
    vector: bool,
    compile_time: Duration,
    clif: Option<String>,
}

impl std::fmt::Debug for ScanKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ScanKernel({:?}, vector: {})", self.scan, self.vector)
    }
}

impl ScanKernel {
    /// Compiles the scan `kernel` read through `plan`: vector code if `schedule` is a vector one.
    pub fn compile(kernel: &KernelIR, plan: &BroadcastPlan, schedule: Schedule) -> Result<ScanKernel> {
        Self::build(kernel, plan, schedule, false)
    }

    /// [`ScanKernel::compile`], keeping the CLIF text (for `kiln explain --clif`).
    pub fn explain(kernel: &KernelIR, plan: &BroadcastPlan, schedule: Schedule) -> Result<ScanKernel> {
        Self::build(kernel, plan, schedule, true)
    }

    fn build(kernel: &KernelIR, plan: &BroadcastPlan, schedule: Schedule, dump: bool) -> Result<ScanKernel> {
        let start = Instant::now();
        kernel.validate()?;
        let KernelKind::Scan(scan) = kernel.kind else {
            return Err(JitError::Unsupported("not a scan kernel".into()));
        };
        if plan.shape != kernel.shape || plan.inputs.len() != kernel.inputs.len() {
            return Err(JitError::PlanMismatch("the plan is not the kernel's".into()));
        }
        let access = plan
            .inputs
            .iter()
            .map(|p| match p {
                InputPlan::Splat => Ok(Access::Splat),
                InputPlan::Contiguous | InputPlan::Materialise => Ok(Access::Contiguous),
                InputPlan::PerRow { .. } => Err(JitError::Unsupported(
                    "a scan reads its inputs flat (plan it with no outer axes)".into(),
                )),
            })
            .collect::<Result<Vec<_>>>()?;
        let shape = &kernel.shape;
        let n = checked_size(shape)?;
        if n > i64::MAX as usize / 16 {
            return Err(JitError::Unsupported(format!(
                "{n} points do not fit the i64 offsets"
            )));
        }
        let (outer, len, inner) = scan.lines(shape);
        let mut params = vec![n as i64, outer as i64, len as i64, inner as i64];
        for (&d, &cs) in shape.iter().zip(&c_strides(shape)) {
            params.extend([d as i64, cs as i64]);
        }
        let vector = schedule.is_vector();
        let (code, clif) = compile_code(kernel, &scan, &access, vector, inner > 1, dump)?;
        Ok(ScanKernel {
            code,
            kernel: kernel.clone(),
            scan,
            access,
            params,
            vector,
            compile_time: start.elapsed(),
            clif,
        })
    }

    /// The CLIF text, if compiled by [`ScanKernel::explain`].
    pub fn clif(&self) -> Option<&str> {
        self.clif.as_deref()
    }

    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// Whether the code uses vectors.
    pub fn is_vector(&self) -> bool {
        self.vector
    }

    /// Runs over `inputs` (C-contiguous, in the kernel's dtype; each input's declared shape, or the
    /// iteration shape where the plan materialises it), blocks cut into units run by `cfg.spread`.
    pub fn run_with<T: Elem>(&self, inputs: &[&[T]], cfg: &RunConfig<'_>) -> Result<Tensor> {
        self.check_dtype::<T>()?;
        let out = call::execute_scan(
            &self.code,
            &self.kernel,
            &self.access,
            &self.params,
            self.state_bytes::<T>(),
            inputs,
            cfg,
        )?;
        Ok(Tensor {
            shape: self.kernel.output_shape(),
            values: T::values(out),
        })
    }

    /// [`ScanKernel::run_with`] on the calling thread.
    pub fn run<T: Elem>(&self, inputs: &[&[T]]) -> Result<Tensor> {
        self.run_with(inputs, &RunConfig::default())
    }

    /// [`ScanKernel::run_with`] straight into `out`, which must hold exactly the result's elements
    /// (the iteration space's, C order; checked before the code runs): nothing is allocated for the
    /// result, and every element of `out` is written.
    pub fn run_into_with<T: Elem>(&self, inputs: &[&[T]], out: &mut [T], cfg: &RunConfig<'_>) -> Result<()> {
        self.check_dtype::<T>()?;
        call::execute_scan_into(
            &self.code,
            &self.kernel,
            &self.access,
            &self.params,
            self.state_bytes::<T>(),
            inputs,
            out,
            cfg,
        )
    }

    /// [`ScanKernel::run_into_with`] on the calling thread.
    pub fn run_into<T: Elem>(&self, inputs: &[&[T]], out: &mut [T]) -> Result<()> {
        self.run_into_with(inputs, out, &RunConfig::default())
    }

    fn check_dtype<T: Elem>(&self) -> Result<()> {
        if self.kernel.dtype != T::DTYPE {
            return Err(JitError::DType {
                kernel: self.kernel.dtype,
                given: T::DTYPE,
            });
        }
        Ok(())
    }

    /// The bytes of one carried state: f64 for sums and products, the data type otherwise.
    fn state_bytes<T: Elem>(&self) -> usize {
        if self.scan.op.wide() { 8 } else { T::DTYPE.size() }
    }
}

/// The signature of a scan function (see the module doc).
fn signature<M: Module>(module: &M) -> Signature {
    let mut sig = Signature::new(module.isa().default_call_conv());
    for _ in 0..6 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig
}

fn compile_code(
    kernel: &KernelIR,
    scan: &Scan,
    access: &[Access],
    vector: bool,
    columns: bool,
    dump: bool,
) -> Result<(ScanCode, Option<String>)> {
    let mut jb = JITBuilder::with_isa(isa()?, default_libcall_names());
    math::register_symbols(&mut jb);
    let mut module = JITModule::new(jb);
    let defined = (|| {
        let sig = signature(&module);
        let id = module.declare_function("kiln_scan", Linkage::Local, &sig)?;
        let mut ctx = module.make_context();
        ctx.func.signature = sig;
        ctx.func.name = UserFuncName::user(0, id.as_u32());
        build(&mut module, &mut ctx.func, kernel, scan, access, vector, columns)?;
        let clif = dump.then(|| ctx.func.display().to_string());
        module
            .define_function(id, &mut ctx)
            .map_err(|e| JitError::Codegen {
                kernel: format!("{scan:?}"),
                message: match e {
                    cranelift_module::ModuleError::Compilation(err) => {
                        cranelift_codegen::print_errors::pretty_error(&ctx.func, err)
                    }
                    other => other.to_string(),
                },
            })?;
        module.clear_context(&mut ctx);
        Ok::<_, JitError>((id, clif))
    })();
    match defined {
        Ok((id, clif)) => Ok((ScanCode::new(module, id)?, clif)),
        Err(e) => {
            call::discard(module);
            Err(e)
        }
    }
}

/// The function body.
fn build<M: Module>(
    module: &mut M,
    func: &mut Function,
    kernel: &KernelIR,
    scan: &Scan,
    access: &[Access],
    vector: bool,
    columns: bool,
) -> Result<()> {
    let order = kernel.arena.reachable(kernel.body);
    let math = MathRefs::import(
        module,
        func,
        kernel.dtype,
        &MathFn::used_by(&kernel.arena, &order),
        MathFn::inline_vector_math(&kernel.arena, &order),
    )?;
    let config = module.target_config();
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    {
        let mut g = Gen::new(&mut b, kernel.dtype, math);
        let e = Emitter::new(&mut g, kernel, scan, access, order, vector, entry);
        e.emit(&mut g, columns);
    }
    b.seal_all_blocks();
    b.finalize(config);
    Ok(())
}

struct Emitter<'k> {
    kernel: &'k KernelIR,
    scan: &'k Scan,
    order: Vec<NodeId>,
    vector: bool,
    ins: Vec<Option<Value>>,
    splats: Vec<Option<[Value; 2]>>,
    literals: Vec<Option<[Value; 2]>>,
    axis: Vec<(Value, Value)>,
    out: Value,
    state: Value,
    o_begin: Value,
    o_end: Value,
    len: Value,
    inner: Value,
}

impl<'k> Emitter<'k> {
    fn new(
        g: &mut Gen<'_, '_>,
        kernel: &'k KernelIR,
        scan: &'k Scan,
        access: &[Access],
        order: Vec<NodeId>,
        vector: bool,
        entry: cranelift_codegen::ir::Block,
    ) -> Self {
        let args = g.b.block_params(entry).to_vec();
        let params = args[3];
        let ld = |g: &mut Gen<'_, '_>, i: usize| g.b.ins().load(types::I64, mem(), params, (8 * i) as i32);
        let _n = ld(g, P_N);
        let _outer = ld(g, P_OUTER);
        let len = ld(g, P_LEN);
        let inner = ld(g, P_INNER);
        let axis = (0..kernel.shape.len())
            .map(|a| (ld(g, P_AXES + 2 * a), ld(g, P_AXES + 2 * a + 1)))
            .collect();
        let mut ins = Vec::new();
        let mut splats = Vec::new();
        for (i, &acc) in access.iter().enumerate() {
            let p = g.b.ins().load(types::I64, mem(), args[0], (8 * i) as i32);
            if acc == Access::Splat {
                let s = g.load(W::Scalar, p, 0);
                splats.push(Some([s, g.splat(W::Vector, s)]));
                ins.push(None);
            } else {
                splats.push(None);
                ins.push(Some(p));
            }
        }
        let mut literals = vec![None; kernel.arena.len()];
        for &id in &order {
            if let Node::Literal(bits) = *kernel.arena.node(id) {
                let s = g.fconst(W::Scalar, f64::from_bits(bits));
                literals[id.index()] = Some([s, g.splat(W::Vector, s)]);
            }
        }
        Emitter {
            kernel,
            scan,
            order,
            vector,
            ins,
            splats,
            literals,
            axis,
            out: args[1],
            state: args[2],
            o_begin: args[4],
            o_end: args[5],
            len,
            inner,
        }
    }

    /// The body at width `w` for the point(s) at flat position `flat`.
    fn body(&self, g: &mut Gen<'_, '_>, w: W, flat: Value) -> Value {
        let literals = |id: NodeId| self.literals[id.index()].expect("literal hoisted");
        let row_index = |_: usize| None;
        let ptrs = self.ins.clone();
        let leaves = Leaves {
            many: None,
            ptrs: &ptrs,
            splats: &self.splats,
            literals: &literals,
            row_index: &row_index,
            axis_params: &self.axis,
        };
        let jb = g.b.ins().imul_imm_s(flat, g.size);
        let mut scratch = vec![None; self.kernel.arena.len()];
        emit_body(
            g,
            w,
            &self.kernel.arena,
            &self.order,
            &leaves,
            jb,
            0,
            flat,
            &mut scratch,
        )
    }

    fn emit(&self, g: &mut Gen<'_, '_>, columns: bool) {
        // for o in o_begin..o_end
        let o_var = g.b.declare_var(types::I64);
        g.b.def_var(o_var, self.o_begin);
        let hdr = g.b.create_block();
        let body = g.b.create_block();
        let exit = g.b.create_block();
        g.b.ins().jump(hdr, &[]);
        g.b.switch_to_block(hdr);
        let o = g.b.use_var(o_var);
        let more = g.b.ins().icmp(IntCC::SignedLessThan, o, self.o_end);
        g.b.ins().brif(more, body, &[], exit, &[]);
        g.b.switch_to_block(body);
        if columns {
            self.columns(g, o);
        } else {
            self.line(g, o);
        }
        let o_next = g.b.ins().iadd_imm_s(o, 1);
        g.b.def_var(o_var, o_next);
        g.b.ins().jump(hdr, &[]);
        g.b.switch_to_block(exit);
        g.b.ins().return_(&[]);
    }

    fn op(&self) -> ScanOp {
        self.scan.op
    }

    /// `a ⊕ b` (vectors or scalars, state or data type).
    fn combine(&self, g: &mut Gen<'_, '_>, a: Value, b: Value) -> Value {
        match self.op() {
            ScanOp::Sum => g.b.ins().fadd(a, b),
            ScanOp::Prod => g.b.ins().fmul(a, b),
            ScanOp::Max => g.maximum(a, b),
            ScanOp::Min => g.minimum(a, b),
        }
    }

    /// The state type (scalar).
    fn state_ty(&self, g: &Gen<'_, '_>) -> types::Type {
        if self.op().wide() { types::F64 } else { g.t }
    }

    /// A scalar state constant.
    fn state_const(&self, g: &mut Gen<'_, '_>, x: f64) -> Value {
        if self.op().wide() {
            g.b.ins().f64const(x)
        } else {
            g.fconst(W::Scalar, x)
        }
    }

    /// A data value folded into a scalar state.
    fn push_scalar(&self, g: &mut Gen<'_, '_>, state: Value, v: Value) -> Value {
        let v = if self.op().wide() && g.dtype == DType::F32 {
            g.b.ins().fpromote(types::F64, v)
        } else {
            v
        };
        self.combine(g, state, v)
    }

    /// A scalar state rounded to the data type.
    fn round_scalar(&self, g: &mut Gen<'_, '_>, state: Value) -> Value {
        if self.op().wide() && g.dtype == DType::F32 {
            g.b.ins().fdemote(types::F32, state)
        } else {
            state
        }
    }

    /// `v` (a 128-bit float vector of lanes `esz` bytes wide) moved `s` lanes towards the end of the
    /// scan (up for a forward scan, down for a reverse one), the vacated lanes taken from `fill`.
    fn shift(&self, g: &mut Gen<'_, '_>, v: Value, fill: Value, s: usize) -> Value {
        let ty = g.b.func.dfg.value_type(v);
        let esz = (ty.lane_bits() / 8) as usize;
        let lanes = ty.lane_count() as usize;
        let mut mask = Vec::with_capacity(16);
        for byte in 0..16usize {
            let lane = byte / esz;
            let src = if !self.scan.reverse {
                (lane >= s).then(|| byte - s * esz)
            } else {
                (lane + s < lanes).then(|| byte + s * esz)
            };
            mask.push(src.unwrap_or(16 + byte) as u8);
        }
        let a = g.b.ins().bitcast(types::I8X16, cast(), v);
        let f = g.b.ins().bitcast(types::I8X16, cast(), fill);
        let imm: Immediate = g.b.func.dfg.immediates.push(ConstantData::from(mask));
        let r = g.b.ins().shuffle(a, f, imm);
        g.b.ins().bitcast(ty, cast(), r)
    }

    /// The in-register inclusive prefix (in scan direction) of a float vector.
    fn prefix(&self, g: &mut Gen<'_, '_>, v: Value, ident: Value) -> Value {
        let lanes = g.b.func.dfg.value_type(v).lane_count() as usize;
        let mut p = v;
        let mut s = 1;
        while s < lanes {
            let sh = self.shift(g, p, ident, s);
            // earlier values (shifted in) on the left: max and min keep the later of equal values
            p = self.combine(g, sh, p);
            s *= 2;
        }
        p
    }

    /// The lane that comes last in scan order.
    fn last_lane(&self, g: &mut Gen<'_, '_>, v: Value) -> Value {
        let lanes = g.b.func.dfg.value_type(v).lane_count() as u8;
        let lane = if self.scan.reverse { 0 } else { lanes - 1 };
        g.b.ins().extractlane(v, lane)
    }

    /// Splits an F32X4 into two F64X2 halves (lanes 0-1, lanes 2-3).
    fn widen(&self, g: &mut Gen<'_, '_>, v: Value) -> (Value, Value) {
        let lo = g.b.ins().fvpromote_low(v);
        let bytes = g.b.ins().bitcast(types::I8X16, cast(), v);
        let mask: Vec<u8> = (8..16).chain(8..16).collect();
        let imm: Immediate = g.b.func.dfg.immediates.push(ConstantData::from(mask));
        let sh = g.b.ins().shuffle(bytes, bytes, imm);
        let h = g.b.ins().bitcast(types::F32X4, cast(), sh);
        let hi = g.b.ins().fvpromote_low(h);
        (lo, hi)
    }

    /// Two F64X2 halves rounded into one F32X4.
    fn narrow(&self, g: &mut Gen<'_, '_>, lo: Value, hi: Value) -> Value {
        let a = g.b.ins().fvdemote(lo);
        let b = g.b.ins().fvdemote(hi);
        let a8 = g.b.ins().bitcast(types::I8X16, cast(), a);
        let b8 = g.b.ins().bitcast(types::I8X16, cast(), b);
        let mask: Vec<u8> = (0..8).chain(16..24).collect();
        let imm: Immediate = g.b.func.dfg.immediates.push(ConstantData::from(mask));
        let r = g.b.ins().shuffle(a8, b8, imm);
        g.b.ins().bitcast(types::F32X4, cast(), r)
    }

    /// One line (`inner == 1`): block `o` holds points `o * len .. (o + 1) * len`.
    fn line(&self, g: &mut Gen<'_, '_>, o: Value) {
        let base = g.b.ins().imul(o, self.len);
        let ty = self.state_ty(g);
        let carry = g.b.declare_var(ty);
        let start = self.state_const(g, self.scan.start());
        g.b.def_var(carry, start);
        // exclusive scans shift the line by one: `prev` holds the last value not yet folded
        let prev = g.b.declare_var(g.t);
        let id_t = g.fconst(W::Scalar, self.op().identity());
        g.b.def_var(prev, id_t);
        // t counts points done from the scan's start
        let t_var = g.b.declare_var(types::I64);
        let zero = g.b.ins().iconst(types::I64, 0);
        g.b.def_var(t_var, zero);
        if self.vector {
            let lanes = g.lanes as i64;
            self.counted_loop(g, t_var, lanes, |e, g, t| {
                // forward: points [t, t + lanes); reverse: [len - t - lanes, len - t)
                let k = if e.scan.reverse {
                    let r = g.b.ins().isub(e.len, t);
                    g.b.ins().iadd_imm_s(r, -lanes)
                } else {
                    t
                };
                let flat = g.b.ins().iadd(base, k);
                e.line_vector(g, flat, carry, prev);
            });
            // the value an exclusive scan held back joins the state before the scalar tail
            if self.scan.exclusive {
                let c = g.b.use_var(carry);
                let p = g.b.use_var(prev);
                let c = self.push_scalar(g, c, p);
                g.b.def_var(carry, c);
            }
        }
        self.counted_loop(g, t_var, 1, |e, g, t| {
            let k = if e.scan.reverse {
                let r = g.b.ins().isub(e.len, t);
                g.b.ins().iadd_imm_s(r, -1)
            } else {
                t
            };
            let flat = g.b.ins().iadd(base, k);
            let v = e.body(g, W::Scalar, flat);
            let c = g.b.use_var(carry);
            let addr = g.elem_addr(e.out, flat, g.size);
            let (out, next) = if e.scan.exclusive {
                (e.round_scalar(g, c), e.push_scalar(g, c, v))
            } else {
                let next = e.push_scalar(g, c, v);
                (e.round_scalar(g, next), next)
            };
            g.b.ins().store(mem(), out, addr, 0);
            g.b.def_var(carry, next);
        });
    }

    /// One vector of a line: the body, the exclusive shift, the prefix and the carry.
    fn line_vector(&self, g: &mut Gen<'_, '_>, flat: Value, carry: Variable, prev: Variable) {
        let mut v = self.body(g, W::Vector, flat);
        let id = self.op().identity();
        if self.scan.exclusive {
            let p = g.b.use_var(prev);
            let fill = g.splat(W::Vector, p);
            let last = self.last_lane(g, v);
            v = self.shift(g, v, fill, 1);
            g.b.def_var(prev, last);
        }
        let c = g.b.use_var(carry);
        let addr = g.elem_addr(self.out, flat, g.size);
        let out = if self.op().wide() && g.dtype == DType::F32 {
            let ident = g.f64const(W::Vector, id);
            let (lo, hi) = self.widen(g, v);
            let (first, second) = if self.scan.reverse { (hi, lo) } else { (lo, hi) };
            let p1 = self.prefix(g, first, ident);
            let p2 = self.prefix(g, second, ident);
            let l1 = self.last_lane(g, p1);
            let l1 = g.b.ins().splat(types::F64X2, l1);
            let p2 = self.combine(g, l1, p2);
            let cs = g.b.ins().splat(types::F64X2, c);
            let o1 = self.combine(g, cs, p1);
            let o2 = self.combine(g, cs, p2);
            // the last lane of `o2`, computed from the scalar carry: the same bits, and the carry's
            // dependency chain is one scalar operation per vector (no splat and lane extract on it)
            let total = self.last_lane(g, p2);
            let next = self.combine(g, c, total);
            g.b.def_var(carry, next);
            let (lo, hi) = if self.scan.reverse { (o2, o1) } else { (o1, o2) };
            self.narrow(g, lo, hi)
        } else {
            let ident = g.fconst(W::Vector, id);
            let p = self.prefix(g, v, ident);
            let cs = g.splat(W::Vector, c);
            let out = self.combine(g, cs, p);
            // `out`'s last lane from the scalar carry (as above)
            let total = self.last_lane(g, p);
            let next = self.combine(g, c, total);
            g.b.def_var(carry, next);
            out
        };
        g.b.ins().store(mem(), out, addr, 0);
    }

    /// Columns (`inner > 1`): block `o` is `len` rows of `inner` independent lines, each carried in
    /// `state[c]` (f64 for sums and products), folded row by row in scan order.
    fn columns(&self, g: &mut Gen<'_, '_>, o: Value) {
        let sb = if self.op().wide() { 8 } else { g.size };
        let block = g.b.ins().imul(o, self.len);
        // reset the state row
        let start = self.state_const(g, self.scan.start());
        let c_var = g.b.declare_var(types::I64);
        let zero = g.b.ins().iconst(types::I64, 0);
        g.b.def_var(c_var, zero);
        self.counted_to(g, c_var, self.inner, 1, |e, g, c| {
            let addr = g.elem_addr(e.state, c, sb);
            g.b.ins().store(mem(), start, addr, 0);
        });
        let t_var = g.b.declare_var(types::I64);
        g.b.def_var(t_var, zero);
        self.counted_to(g, t_var, self.len, 1, |e, g, t| {
            let k = if e.scan.reverse {
                let r = g.b.ins().isub(e.len, t);
                g.b.ins().iadd_imm_s(r, -1)
            } else {
                t
            };
            let row = g.b.ins().iadd(block, k);
            let row0 = g.b.ins().imul(row, e.inner);
            let c_var = g.b.declare_var(types::I64);
            let zero = g.b.ins().iconst(types::I64, 0);
            g.b.def_var(c_var, zero);
            if e.vector {
                let lanes = g.lanes as i64;
                e.counted_to(g, c_var, e.inner, lanes, |e, g, c| {
                    e.column_step(g, W::Vector, row0, c)
                });
            }
            e.counted_to(g, c_var, e.inner, 1, |e, g, c| {
                e.column_step(g, W::Scalar, row0, c)
            });
        });
    }

    /// Columns `c ..` of row `row0`: out = state ⊕ v (inclusive) or state (exclusive).
    fn column_step(&self, g: &mut Gen<'_, '_>, w: W, row0: Value, c: Value) {
        let flat = g.b.ins().iadd(row0, c);
        let v = self.body(g, w, flat);
        let out_addr = g.elem_addr(self.out, flat, g.size);
        let wide = self.op().wide();
        let sb = if wide { 8 } else { g.size };
        let st_addr = g.elem_addr(self.state, c, sb);
        let out = match (w, wide, g.dtype) {
            (W::Vector, true, DType::F32) => {
                let s_lo = g.b.ins().load(types::F64X2, mem(), st_addr, 0);
                let s_hi = g.b.ins().load(types::F64X2, mem(), st_addr, 16);
                let (lo, hi) = self.widen(g, v);
                let n_lo = self.combine(g, s_lo, lo);
                let n_hi = self.combine(g, s_hi, hi);
                g.b.ins().store(mem(), n_lo, st_addr, 0);
                g.b.ins().store(mem(), n_hi, st_addr, 16);
                if self.scan.exclusive {
                    self.narrow(g, s_lo, s_hi)
                } else {
                    self.narrow(g, n_lo, n_hi)
                }
            }
            (W::Scalar, _, _) => {
                let ty = self.state_ty(g);
                let s = g.b.ins().load(ty, mem(), st_addr, 0);
                let next = self.push_scalar(g, s, v);
                g.b.ins().store(mem(), next, st_addr, 0);
                if self.scan.exclusive {
                    self.round_scalar(g, s)
                } else {
                    self.round_scalar(g, next)
                }
            }
            (W::Vector, _, _) => {
                // f64 data (any op) or f32 max / min: the state has the data's vector type
                let s = g.load(W::Vector, st_addr, 0);
                let next = self.combine(g, s, v);
                g.b.ins().store(mem(), next, st_addr, 0);
                if self.scan.exclusive { s } else { next }
            }
        };
        g.b.ins().store(mem(), out, out_addr, 0);
    }

    /// `while t + step <= len { f(t); t += step }` over the line (`t` counts points from the start).
    fn counted_loop(
        &self,
        g: &mut Gen<'_, '_>,
        t_var: Variable,
        step: i64,
        f: impl FnOnce(&Self, &mut Gen<'_, '_>, Value),
    ) {
        self.counted_to(g, t_var, self.len, step, f)
    }

    /// `while x + step <= end { f(x); x += step }`.
    fn counted_to(
        &self,
        g: &mut Gen<'_, '_>,
        var: Variable,
        end: Value,
        step: i64,
        f: impl FnOnce(&Self, &mut Gen<'_, '_>, Value),
    ) {
        let hdr = g.b.create_block();
        let body = g.b.create_block();
        let done = g.b.create_block();
        g.b.ins().jump(hdr, &[]);
        g.b.switch_to_block(hdr);
        let x = g.b.use_var(var);
        let next = g.b.ins().iadd_imm_s(x, step);
        let fits = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, next, end);
        g.b.ins().brif(fits, body, &[], done, &[]);
        g.b.switch_to_block(body);
        f(self, g, x);
        g.b.def_var(var, next);
        g.b.ins().jump(hdr, &[]);
        g.b.switch_to_block(done);
    }
}
