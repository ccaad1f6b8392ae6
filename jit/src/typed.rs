//! Compiled typed maps and scans (issue 13) of bool, int32 and int64 values (and the floats and
//! casts a typed kernel mixes in), bit-identical to kiln-ir's typed interpreter
//! ([`kiln_ir::typed::interpret`]). Typed reductions compile on the main code generator instead
//! ([`crate::compile_typed`]: its skeleton, plans and int64 accumulators, `int_acc.rs`), which
//! lowers their bodies with the same `typed_lower`; maps and scans are to follow them there.
//!
//! **Lanes.** A kernel whose values are all 32 bits wide (int32, float32; bools beside them) runs
//! 4 lanes per iteration (`i32x4` / `f32x4`, bools as `i32x4` lane masks); any other runs 2:
//! int64 and float64 as `i64x2` / `f64x2`, bools as `i64x2` masks, and where the kernel mixes
//! widths (an int32 cast to float64, int32 + int64), its 32-bit values half-filled: an `i32x4` /
//! `f32x4` whose lanes 0 and 1 hold the two points (loaded and stored as one 64-bit word; lanes 2
//! and 3 hold copies or garbage that no result reads). Casts between widths are `swiden_low`, a
//! lane shuffle, `cvtdq2pd`, `cvttpd2dq`, `fvpromote_low` and `fvdemote`; a comparison of
//! half-filled values gives an `i32x4` mask, widened to the kernel's `i64x2` bool, and narrowed back
//! where a bool chooses between 32-bit values. The tail of a vector loop (fewer than `lanes`
//! points) runs the same body in scalars; the `jit-scalar` backend runs scalars only. See
//! `typed_lower` for the opcodes.
//!
//! **Inputs.** Each input is read as its [`TypedRead`] says: a C-contiguous buffer of the iteration
//! shape at the flat point, one element read once and splat, or in place with element strides over
//! the iteration shape (a strided view, `x[::-1]` or `x[:, ::2]`, a transposed one, or a broadcast
//! buffer): `typed_read` generates those loads, and `check.rs` checks every read before a call.
//!
//! **Kinds.** A map writes its values (bools one byte 0 / 1 each). A scan (`cumsum` / `cumprod` in
//! int64, `cummax` / `cummin` in the type, from its `initial` value where it has one) runs each line
//! in scalars. What does not compile ([`why_not`]: a scan of float values or whose `initial` its
//! accumulator cannot hold, `fma`) runs on the typed interpreter. An index (a named index of a
//! contraction) is computed from the kernel's shape, so the code is for that shape.
//!
//! ABI: the float kernels' ([`crate`] doc), of which a typed kernel reads `ins` (input `i`'s buffer
//! at `ins[i]`), `out_val` (the map's output) and `[lo, hi)` (the flat points to compute).

use crate::call::{self, Code};
use crate::check::TypedChecked;
use crate::error::{JitError, Result};
use crate::host::{MathFn, MathRefs};
use crate::run::Spread;
use crate::run::Stored;
use crate::typed_lower::{
    TypedGen, bits, constant, float_binary_compiles, float_unary_compiles, int_binary_compiles, scalar_type,
};
use crate::typed_read::ReadAxis;
pub use crate::typed_read::{TypedRead, TypedSliceMut, TypedView};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, InstBuilder, Signature, UserFuncName, Value, types};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use kiln_ir::scan::{Scan, ScanOp};
use kiln_ir::typed::{Scalar, TypedKernel};
use kiln_ir::{ElemType, KernelKind, Node};
use std::time::{Duration, Instant};

/// Why `kernel` does not compile here, if it does not: a map or scan compiles here, a reduction on
/// the main code generator ([`main_why_not`], [`crate::compile_typed`]); what neither compiles runs
/// on the typed interpreter.
pub fn why_not(kernel: &TypedKernel) -> Option<String> {
    let k = &kernel.kernel;
    match &k.kind {
        KernelKind::Map => {}
        KernelKind::Reduce { .. } => {
            return Some("a reduction (the main code generator compiles it: kiln_jit::compile_typed)".into());
        }
        KernelKind::Scan(s) => {
            if kernel.value_type().is_float() {
                return Some(format!(
                    "the scan {} of {} values (the JIT scans bools and integers)",
                    s.op.name(),
                    kernel.value_type()
                ));
            }
            if s.initial().is_some() && scan_start(s, kernel.value_type()).is_none() {
                return Some(format!(
                    "the scan {} with an initial value its accumulator does not hold",
                    s.op.name()
                ));
            }
        }
        KernelKind::Compound { op, .. } => return Some(format!("the compound reduction {}", op.name())),
        KernelKind::Siblings { .. } => return Some("sibling reductions".into()),
    }
    if !k.extra.is_empty() {
        return Some("several outputs".into());
    }
    body_why_not(kernel)
}

/// Why the main code generator does not compile the typed kernel `kernel` ([`crate::compile_typed`]),
/// if it does not: it compiles reductions over any axes of bool, integer and float values (in
/// float64 lanes: float32 values fold in float64, as a float32 kernel's sums do).
pub fn main_why_not(kernel: &TypedKernel) -> Option<String> {
    let k = &kernel.kernel;
    if !matches!(k.kind, KernelKind::Reduce { .. } | KernelKind::Map) {
        return Some(
            "a kernel other than a map or a reduction (its scans compile by compile_typed_reads)".into(),
        );
    }
    if !k.extra.is_empty() {
        return Some("several outputs".into());
    }
    body_why_not(kernel)
}

/// The float dtype whose lanes the main code generator runs the typed kernel `kernel` in (the
/// input of [`crate::compile_typed`]): float32's 4 for a map whose values are all 32 bits wide,
/// else float64's 2 (reductions fold in 64-bit accumulators).
pub fn lanes_dtype(kernel: &TypedKernel) -> kiln_ir::DType {
    match kernel.kernel.kind {
        KernelKind::Map if lanes_of(kernel) == 4 => kiln_ir::DType::F32,
        _ => kiln_ir::DType::F64,
    }
}

/// Why the typed lowering does not compile `kernel`'s body, if it does not.
fn body_why_not(kernel: &TypedKernel) -> Option<String> {
    let k = &kernel.kernel;
    for id in k.arena.reachable_all(&k.roots()) {
        let t = |x| kernel.type_of(x);
        match *k.arena.node(id) {
            Node::Input(_) | Node::Where(..) => {}
            Node::Cast(_, a) => {
                if matches!(k.arena.node(a), Node::Int(_) | Node::Literal(_))
                    && constant(kernel, id).is_none()
                {
                    return Some("a literal it cannot type".into());
                }
            }
            Node::Int(_) | Node::Literal(_) => {
                // only read through the cast that types them (constants); a bare literal is refused
                let typed = k
                    .arena
                    .reachable(k.body)
                    .into_iter()
                    .any(|u| matches!(*k.arena.node(u), Node::Cast(_, a) if a == id));
                if !typed || id == k.body {
                    return Some("an untyped literal".into());
                }
            }
            Node::Index(_) => {}
            Node::Fma(..) => return Some("fma".into()),
            Node::Unary(op, a) => {
                if t(a).is_float() && !float_unary_compiles(op) {
                    return Some(format!("{op} of {}", t(a)));
                }
            }
            Node::Binary(op, a, _) => {
                let ta = t(a);
                if (ta.is_float() && !float_binary_compiles(op))
                    || (ta.is_integer() && !int_binary_compiles(op))
                {
                    return Some(format!("{op} of {ta}"));
                }
            }
        }
    }
    None
}

/// How `kernel`'s values are held (see the module doc), for `kiln explain`.
pub fn describe_lanes(kernel: &TypedKernel) -> &'static str {
    let k = &kernel.kernel;
    let has32 = k
        .arena
        .reachable(k.body)
        .into_iter()
        .any(|id| matches!(kernel.type_of(id), ElemType::I32 | ElemType::F32));
    match (lanes_of(kernel), has32) {
        (4, _) => "4 lanes: i32x4 / f32x4, bools as i32x4 masks",
        (_, false) => "2 lanes: i64x2 / f64x2, bools as i64x2 masks",
        _ => "2 lanes: i64x2 / f64x2, 32-bit values half-filled i32x4 / f32x4, bools as i64x2 masks",
    }
}

/// The lane count of `kernel` (see the module doc): 4, 2, or 1 where it mixes widths.
pub fn lanes_of(kernel: &TypedKernel) -> u8 {
    let k = &kernel.kernel;
    let mut widths = k
        .arena
        .reachable(k.body)
        .into_iter()
        .filter(|&id| !matches!(k.arena.node(id), Node::Int(_) | Node::Literal(_)))
        .map(|id| kernel.type_of(id))
        .filter(|&t| t != ElemType::Bool)
        .map(bits)
        .collect::<Vec<_>>();
    widths.sort_unstable();
    widths.dedup();
    match widths[..] {
        [] | [32] => 4,
        _ => 2,
    }
}

/// A compiled typed kernel (see the module doc), runnable from many threads at once.
pub struct TypedCode {
    code: Code,
    lanes: u8,
    input_types: Vec<ElemType>,
    reads: Vec<TypedRead>,
    /// The kernel's iteration shape (strided reads are for it).
    shape: Vec<usize>,
    value: ElemType,
    /// The scan, where the kernel is one.
    scan: Option<Scan>,
    compile_time: Duration,
    clif: Option<String>,
}

impl std::fmt::Debug for TypedCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedCode")
            .field("lanes", &self.lanes)
            .field("input_types", &self.input_types)
            .field("reads", &self.reads)
            .field("scan", &self.scan)
            .finish()
    }
}

/// Compiles `kernel` (which [`why_not`] accepts), input `i` read as one splat element where
/// `splat[i]`; `scalar`: one lane whatever the types (the `jit-scalar` backend); `dump`: keep the CLIF.
///
/// # Errors
/// [`JitError::Unsupported`] with [`why_not`]'s reason, and Cranelift's errors.
pub fn compile_typed(kernel: &TypedKernel, splat: &[bool], scalar: bool, dump: bool) -> Result<TypedCode> {
    let reads: Vec<TypedRead> = splat
        .iter()
        .map(|&s| if s { TypedRead::Splat } else { TypedRead::Flat })
        .collect();
    compile_typed_reads(kernel, &reads, scalar, dump)
}

/// Compiles `kernel` (which [`why_not`] accepts), input `i` read as `reads[i]` says (a strided
/// read's strides are over the kernel's shape); `scalar` and `dump` as [`compile_typed`]'s.
///
/// # Errors
/// [`JitError::Unsupported`] with [`why_not`]'s reason or for reads that do not fit the kernel, and
/// Cranelift's errors.
pub fn compile_typed_reads(
    kernel: &TypedKernel,
    reads: &[TypedRead],
    scalar: bool,
    dump: bool,
) -> Result<TypedCode> {
    if let Some(why) = why_not(kernel) {
        return Err(JitError::Unsupported(format!("the typed kernel holds {why}")));
    }
    if reads.len() != kernel.input_types.len() {
        return Err(JitError::Unsupported(format!(
            "{} reads for {} inputs",
            reads.len(),
            kernel.input_types.len()
        )));
    }
    let rank = kernel.kernel.shape.len();
    if let Some(i) = reads
        .iter()
        .position(|r| matches!(r, TypedRead::Strided(s) if s.len() != rank))
    {
        return Err(JitError::Unsupported(format!(
            "input {i} read with strides for {} axes in a kernel of {rank}",
            match &reads[i] {
                TypedRead::Strided(s) => s.len(),
                _ => 0,
            }
        )));
    }
    let start = Instant::now();
    let lanes = if scalar { 1 } else { lanes_of(kernel) };
    let isa = crate::compile::isa()?;
    let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
    crate::host::register_symbols(&mut jb);
    let mut module = JITModule::new(jb);
    let mut sig = Signature::new(module.isa().default_call_conv());
    for _ in 0..8 {
        sig.params.push(AbiParam::new(types::I64));
    }
    let defined = (|| -> Result<_> {
        let id = module.declare_function("kiln_typed_kernel", Linkage::Local, &sig)?;
        let mut ctx = module.make_context();
        ctx.func.signature = sig.clone();
        ctx.func.name = UserFuncName::user(0, id.as_u32());
        ctx.set_disasm(dump);
        // the libm functions of float values (the interpreter's own, so bit-exact), f32 and f64
        let order = kernel.kernel.arena.reachable(kernel.kernel.body);
        let used = MathFn::used_by(&kernel.kernel.arena, &order);
        let math = MathRefs::import(&mut module, &mut ctx.func, kiln_ir::DType::F32, &used, false, &[])?;
        {
            let mut fctx = FunctionBuilderContext::new();
            let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
            let mut g = TypedGen {
                b: &mut b,
                k: kernel,
                lanes,
                math: &math,
            };
            match &kernel.kernel.kind {
                KernelKind::Scan(scan) => build_scan(&mut g, reads, scan),
                _ => build(&mut g, reads),
            }
            b.seal_all_blocks();
            b.finalize(module.target_config());
        }
        let clif = dump.then(|| ctx.func.display().to_string());
        module
            .define_function(id, &mut ctx)
            .map_err(|e| JitError::Codegen {
                kernel: "a typed kernel".into(),
                message: match e {
                    cranelift_module::ModuleError::Compilation(err) => {
                        cranelift_codegen::print_errors::pretty_error(&ctx.func, err)
                    }
                    other => other.to_string(),
                },
            })?;
        let clif = clif.map(|c| {
            let vcode = ctx
                .compiled_code()
                .and_then(|c| c.vcode.clone())
                .unwrap_or_default();
            format!("{c}\n; machine code\n{vcode}")
        });
        module.clear_context(&mut ctx);
        Ok((id, clif))
    })();
    let (id, clif) = match defined {
        Ok(d) => d,
        Err(e) => {
            call::discard(module);
            return Err(e);
        }
    };
    Ok(TypedCode {
        code: Code::new(module, id)?,
        lanes,
        input_types: kernel.input_types.clone(),
        reads: reads.to_vec(),
        shape: kernel.kernel.shape.clone(),
        value: kernel.value_type(),
        scan: match &kernel.kernel.kind {
            KernelKind::Scan(s) => Some(*s),
            _ => None,
        },
        compile_time: start.elapsed(),
        clif,
    })
}

/// A map's function: entry loads, the vector loop (lanes > 1), then the scalar loop.
fn build(g: &mut TypedGen<'_, '_>, reads: &[TypedRead]) {
    let k = g.k;
    let Entry {
        out,
        lo,
        hi,
        ptrs,
        splats,
        ..
    } = enter(g, reads);
    let vt = k.value_type();
    let kv = g.b.declare_var(types::I64);
    g.b.def_var(kv, lo);
    let tail = g.b.create_block();
    if g.lanes > 1 {
        let head = g.b.create_block();
        let body = g.b.create_block();
        g.b.ins().jump(head, &[]);
        g.b.switch_to_block(head);
        let kk = g.b.use_var(kv);
        let next = g.b.ins().iadd_imm_s(kk, g.lanes as i64);
        let fits = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, next, hi);
        g.b.ins().brif(fits, body, &[], tail, &[]);
        g.b.switch_to_block(body);
        let kk = g.b.use_var(kv);
        let v = eval(g, &ptrs, &splats, kk, true);
        let addr = address(g, out, kk, vt);
        g.store(vt, v, addr);
        let next = g.b.ins().iadd_imm_s(kk, g.lanes as i64);
        g.b.def_var(kv, next);
        g.b.ins().jump(head, &[]);
    } else {
        g.b.ins().jump(tail, &[]);
    }
    g.b.switch_to_block(tail);
    let kk = g.b.use_var(kv);
    let more = g.b.ins().icmp(IntCC::SignedLessThan, kk, hi);
    let body = g.b.create_block();
    let exit = g.b.create_block();
    g.b.ins().brif(more, body, &[], exit, &[]);
    g.b.switch_to_block(body);
    let kk = g.b.use_var(kv);
    let v = eval(g, &ptrs, &splats, kk, false);
    let addr = address(g, out, kk, vt);
    g.store(vt, v, addr);
    let next = g.b.ins().iadd_imm_s(kk, 1);
    g.b.def_var(kv, next);
    g.b.ins().jump(tail, &[]);
    g.b.switch_to_block(exit);
    g.b.ins().return_(&[]);
}

/// What every typed function starts from: the entry block's parameters it reads (the signature's:
/// output pointer, sizes block, unit range `lo..hi`), the input pointers and the splat inputs.
struct Entry {
    out: Value,
    sizes: Value,
    lo: Value,
    hi: Value,
    ptrs: Vec<Src>,
    /// Per input: where it is a splat the body reads, its one element as a scalar and as a vector.
    splats: Vec<Option<[Value; 2]>>,
}

/// Where an input is: its pointer (its first element), and the axes of a strided read.
struct Src {
    ptr: Value,
    axes: Option<Vec<ReadAxis>>,
}

/// Makes the entry block and loads the input pointers and splat inputs in it.
fn enter(g: &mut TypedGen<'_, '_>, reads: &[TypedRead]) -> Entry {
    let shape = g.k.kernel.shape.clone();
    let entry = g.b.create_block();
    g.b.append_block_params_for_function_params(entry);
    g.b.switch_to_block(entry);
    let params = g.b.block_params(entry).to_vec();
    let ins = params[0];
    let k = g.k;
    let ptrs: Vec<Src> = (0..k.input_types.len())
        .map(|i| Src {
            ptr: g
                .b
                .ins()
                .load(types::I64, crate::clif::mem(), ins, (8 * i) as i32),
            axes: match &reads[i] {
                TypedRead::Strided(s) => Some(crate::typed_read::read_axes(&shape, s)),
                _ => None,
            },
        })
        .collect();
    // splat inputs the body reads: one element, loaded once, at both widths (an input the body does
    // not read, beside others in a kernel of several outputs, may be of a width the lanes do not hold)
    let read: Vec<bool> = {
        let mut read = vec![false; k.input_types.len()];
        for id in k.kernel.arena.reachable(k.kernel.body) {
            if let Node::Input(n) = *k.kernel.arena.node(id) {
                read[n as usize] = true;
            }
        }
        read
    };
    let splats = (0..k.input_types.len())
        .map(|i| {
            (reads[i] == TypedRead::Splat && read[i]).then(|| {
                let t = k.input_types[i];
                let s = g.load(t, ptrs[i].ptr, false);
                let v = if g.lanes == 1 {
                    s
                } else if t == ElemType::Bool {
                    let lane = if g.lanes == 4 { types::I32 } else { types::I64 };
                    let w = g.b.ins().uextend(lane, s);
                    let m = g.b.ins().ineg(w);
                    let vt = g.ty(t, true);
                    g.b.ins().splat(vt, m)
                } else {
                    let vt = g.ty(t, true);
                    g.b.ins().splat(vt, s)
                };
                [s, v]
            })
        })
        .collect();
    Entry {
        out: params[1],
        sizes: params[3],
        lo: params[6],
        hi: params[7],
        ptrs,
        splats,
    }
}

/// A scan's starting state, as the typed interpreter's: its `initial` value where it has one (an
/// integral value int64 holds for `cumsum` / `cumprod`; one the data type holds for `cummax` /
/// `cummin`, 0 or 1 for bools), else the neutral element; None for an `initial` the interpreter
/// refuses (it then runs, and gives the error).
fn scan_start(scan: &Scan, vt: ElemType) -> Option<Scalar> {
    let integral =
        |v: f64| (v.fract() == 0.0 && v >= -(2f64.powi(63)) && v < 2f64.powi(63)).then_some(v as i64);
    Some(match (scan.initial(), scan.op, vt) {
        (None, ScanOp::Sum, _) => Scalar::I64(0),
        (None, ScanOp::Prod, _) => Scalar::I64(1),
        (None, ScanOp::Max, ElemType::Bool) => Scalar::Bool(false),
        (None, ScanOp::Min, ElemType::Bool) => Scalar::Bool(true),
        (None, ScanOp::Max, ElemType::I32) => Scalar::I32(i32::MIN),
        (None, ScanOp::Min, ElemType::I32) => Scalar::I32(i32::MAX),
        (None, ScanOp::Max, _) => Scalar::I64(i64::MIN),
        (None, ScanOp::Min, _) => Scalar::I64(i64::MAX),
        (Some(v), ScanOp::Sum | ScanOp::Prod, _) => Scalar::I64(integral(v)?),
        (Some(v), _, ElemType::Bool) if v == 0.0 || v == 1.0 => Scalar::Bool(v == 1.0),
        (Some(_), _, ElemType::Bool) => return None,
        (Some(v), _, ElemType::I32) => Scalar::I32(i32::try_from(integral(v)?).ok()?),
        (Some(v), _, _) => Scalar::I64(integral(v)?),
    })
}

/// A scan's function: for each line `lo..hi` (line `l` is `o * inner + c`; `params` holds the line
/// length and `inner`), the carried state from the neutral element over the line's points in order
/// (reversed where the scan is), each point's output the state after it (before it where exclusive):
/// sums and products in int64 (wrapping), `cummax` / `cummin` in the data type. Scalar: a scan's
/// state is sequential.
fn build_scan(g: &mut TypedGen<'_, '_>, reads: &[TypedRead], scan: &Scan) {
    let vt = g.k.value_type();
    let wide = scan.op.wide();
    let ot = if wide { ElemType::I64 } else { vt };
    let Entry {
        out,
        sizes,
        lo,
        hi,
        ptrs,
        splats,
    } = enter(g, reads);
    let mem = crate::clif::mem();
    let len = g.b.ins().load(types::I64, mem, sizes, 0);
    let inner = g.b.ins().load(types::I64, mem, sizes, 8);
    let neutral = scan_start(scan, vt).expect("why_not checked the scan's start");
    let line = g.b.declare_var(types::I64);
    let at = g.b.declare_var(types::I64);
    let t = g.b.declare_var(types::I64);
    let acc = g.b.declare_var(scalar_type(ot));
    g.b.def_var(line, lo);
    let (line_head, line_body, point_head, point_body, line_end, exit) = (
        g.b.create_block(),
        g.b.create_block(),
        g.b.create_block(),
        g.b.create_block(),
        g.b.create_block(),
        g.b.create_block(),
    );
    g.b.ins().jump(line_head, &[]);
    // per line: its first point (its last where reversed) and the step between points
    g.b.switch_to_block(line_head);
    let l = g.b.use_var(line);
    let more = g.b.ins().icmp(IntCC::SignedLessThan, l, hi);
    g.b.ins().brif(more, line_body, &[], exit, &[]);
    g.b.switch_to_block(line_body);
    let l = g.b.use_var(line);
    let o = g.b.ins().sdiv(l, inner);
    let c = g.b.ins().srem(l, inner);
    let ol = g.b.ins().imul(o, len);
    let oli = g.b.ins().imul(ol, inner);
    let first = g.b.ins().iadd(oli, c);
    let first = if scan.reverse {
        let last = g.b.ins().iadd_imm_s(len, -1);
        let off = g.b.ins().imul(last, inner);
        g.b.ins().iadd(first, off)
    } else {
        first
    };
    let step = if scan.reverse {
        g.b.ins().ineg(inner)
    } else {
        inner
    };
    g.b.def_var(at, first);
    let zero = g.b.ins().iconst(types::I64, 0);
    g.b.def_var(t, zero);
    let n0 = g.konst(neutral, false);
    g.b.def_var(acc, n0);
    g.b.ins().jump(point_head, &[]);
    g.b.switch_to_block(point_head);
    let tv = g.b.use_var(t);
    let more = g.b.ins().icmp(IntCC::SignedLessThan, tv, len);
    g.b.ins().brif(more, point_body, &[], line_end, &[]);
    g.b.switch_to_block(point_body);
    let k = g.b.use_var(at);
    let v = eval(g, &ptrs, &splats, k, false);
    let a = g.b.use_var(acc);
    let x = if wide { g.cast(v, vt, ElemType::I64) } else { v };
    let next = match scan.op {
        ScanOp::Sum => g.b.ins().iadd(a, x),
        ScanOp::Prod => g.b.ins().imul(a, x),
        ScanOp::Max if vt == ElemType::Bool => g.b.ins().bor(a, x),
        ScanOp::Min if vt == ElemType::Bool => g.b.ins().band(a, x),
        ScanOp::Max => g.b.ins().smax(a, x),
        ScanOp::Min => g.b.ins().smin(a, x),
    };
    let addr = address(g, out, k, ot);
    let stored = if scan.exclusive { a } else { next };
    g.store(ot, stored, addr);
    g.b.def_var(acc, next);
    let k1 = g.b.ins().iadd(k, step);
    g.b.def_var(at, k1);
    let t1 = g.b.ins().iadd_imm_s(tv, 1);
    g.b.def_var(t, t1);
    g.b.ins().jump(point_head, &[]);
    g.b.switch_to_block(line_end);
    let l = g.b.use_var(line);
    let l1 = g.b.ins().iadd_imm_s(l, 1);
    g.b.def_var(line, l1);
    g.b.ins().jump(line_head, &[]);
    g.b.switch_to_block(exit);
    g.b.ins().return_(&[]);
}

/// The address of element `k` of a buffer of `t` at `base`.
fn address(g: &mut TypedGen<'_, '_>, base: Value, k: Value, t: ElemType) -> Value {
    let off = g.b.ins().imul_imm_s(k, (bits(t) / 8) as i64);
    g.b.ins().iadd(base, off)
}

/// The body's value at point `k` (scalar) or points `k .. k + lanes` (vector).
fn eval(
    g: &mut TypedGen<'_, '_>,
    ptrs: &[Src],
    splats: &[Option<[Value; 2]>],
    k: Value,
    vector: bool,
) -> Value {
    let kernel = g.k;
    let arena = &kernel.kernel.arena;
    let order = arena.reachable(kernel.kernel.body);
    let mut vals: Vec<Option<Value>> = vec![None; kernel.kernel.body.index() + 1];
    for id in order {
        let get = |x: kiln_ir::NodeId| vals[x.index()].expect("operands come first in post order");
        let t = |x| kernel.type_of(x);
        let v = match *arena.node(id) {
            Node::Input(n) => {
                let n = n as usize;
                match splats[n] {
                    Some(s) => s[vector as usize],
                    None => match &ptrs[n].axes {
                        Some(axes) => {
                            crate::typed_read::load(g, ptrs[n].ptr, axes, k, kernel.input_types[n], vector)
                        }
                        None => {
                            let addr = address(g, ptrs[n].ptr, k, kernel.input_types[n]);
                            g.load(kernel.input_types[n], addr, vector)
                        }
                    },
                }
            }
            Node::Int(_) | Node::Literal(_) => continue,
            Node::Cast(to, a) => match constant(kernel, id) {
                Some(c) => g.konst(c, vector),
                None => g.cast(get(a), t(a), to),
            },
            Node::Unary(op, a) => g.unary(op, get(a), t(a)),
            Node::Binary(op, a, b) => {
                let c = constant(kernel, b);
                g.binary(op, get(a), get(b), t(a), c)
            }
            Node::Where(c, a, b) => g.select(get(c), get(a), get(b)),
            Node::Index(axis) => index(g, k, axis as usize, vector),
            Node::Fma(..) => unreachable!("why_not refuses it"),
        };
        // a comparison of half-filled 32-bit values gives an i32x4 mask: the kernel's bools are i64x2
        let v = if kernel.type_of(id) == ElemType::Bool && vector {
            g.bool_mask(v)
        } else {
            v
        };
        vals[id.index()] = Some(v);
    }
    vals[kernel.kernel.body.index()].expect("the body is evaluated")
}

/// The index along `axis` of point `k` (scalar) or of points `k .. k + lanes` (an `i64x2`: an index
/// is int64, so its kernel has 2 lanes), from the kernel's shape: `(k / stride) % extent`, the
/// divisions by constants (Cranelift multiplies), per lane.
fn index(g: &mut TypedGen<'_, '_>, k: Value, axis: usize, vector: bool) -> Value {
    let shape = &g.k.kernel.shape;
    let stride: usize = shape[axis + 1..].iter().product();
    let extent = shape[axis];
    let one = |g: &mut TypedGen<'_, '_>, k: Value| {
        let q = if stride > 1 {
            let s = g.b.ins().iconst(types::I64, stride as i64);
            g.b.ins().udiv(k, s)
        } else {
            k
        };
        if axis > 0 && extent > 0 {
            let e = g.b.ins().iconst(types::I64, extent as i64);
            g.b.ins().urem(q, e)
        } else {
            q
        }
    };
    if !vector {
        return one(g, k);
    }
    let mut v = None;
    for l in 0..g.lanes {
        let kl = g.b.ins().iadd_imm_s(k, l as i64);
        let x = one(g, kl);
        v = Some(match v {
            None => g.b.ins().splat(types::I64X2, x),
            Some(v) => g.b.ins().insertlane(v, x, l),
        });
    }
    v.expect("a vector has lanes")
}

/// A zeroed output of `n` elements for a typed map, as the float kernels' fresh outputs (calloc's
/// untouched zero pages; transparent huge pages for large ones): `zero` must be all zero bits.
///
/// # Errors
/// An allocation error where `n` elements cannot be had.
pub fn zeroed_output<T: Copy>(n: usize, zero: T) -> Result<Vec<T>> {
    call::zeroed(n, zero)
}

/// A typed run whose call or output does not fit the code.
fn bad(why: String) -> JitError {
    JitError::WrongKernel(why)
}

/// Points per work unit of a map at least: shorter runs stay in one unit.
const MIN_UNIT: usize = 1 << 14;

impl TypedCode {
    /// How the code reads each input.
    pub fn reads(&self) -> &[TypedRead] {
        &self.reads
    }

    /// The lanes per iteration (1: scalars).
    pub fn lanes(&self) -> u8 {
        self.lanes
    }

    /// How long compiling took.
    pub fn compile_time(&self) -> Duration {
        self.compile_time
    }

    /// The CLIF text and the machine code (Cranelift's VCode), where compiled with `dump`.
    pub fn clif(&self) -> Option<&str> {
        self.clif.as_deref()
    }

    /// Checks `inputs` for `n` points ([`crate::check::check_typed`]).
    fn check(&self, inputs: &[Stored<'_>], n: usize) -> Result<TypedChecked> {
        crate::check::check_typed(&self.input_types, &self.reads, &self.shape, inputs, n)
    }

    /// Runs a map into `out` (its `n` elements, of the kernel's value type), cut into at most
    /// `max_units` ranges run by `spread`.
    ///
    /// # Errors
    /// [`JitError::BadInput`] for inputs or an output that do not fit the code.
    pub fn run_map(
        &self,
        inputs: &[Stored<'_>],
        mut out: TypedSliceMut<'_>,
        max_units: usize,
        spread: &dyn Spread,
    ) -> Result<()> {
        if self.scan.is_some() {
            return Err(bad("run_map of a scan".into()));
        }
        if out.ty() != self.value {
            return Err(bad(format!("a {} output for a map of {}", out.ty(), self.value)));
        }
        let n = out.len();
        let checked = self.check(inputs, n)?;
        let units = max_units.clamp(1, n.div_ceil(MIN_UNIT).max(1));
        // unit lengths a multiple of 4 lanes, so only the last unit has a tail
        let per = n.div_ceil(units).div_ceil(4) * 4;
        let ranges: Vec<(usize, usize)> = (0..units)
            .map(|u| ((u * per).min(n), ((u + 1) * per).min(n)))
            .collect();
        let ins: Vec<*const u8> = inputs.iter().map(Stored::ptr).collect();
        call::dispatch_typed(&self.code, checked, &ins, out.ptr(), 0, &[], &ranges, spread);
        Ok(())
    }

    /// Runs a scan over `shape` (the kernel's iteration shape) into `out` (`n` elements: int64 for
    /// `cumsum` / `cumprod`, the value type for `cummax` / `cummin`), its lines cut into at most
    /// `max_units` ranges run by `spread` (lines are independent).
    ///
    /// # Errors
    /// [`JitError::BadInput`] for inputs or an output that do not fit the code.
    pub fn run_scan(
        &self,
        inputs: &[Stored<'_>],
        shape: &[usize],
        mut out: TypedSliceMut<'_>,
        max_units: usize,
        spread: &dyn Spread,
    ) -> Result<()> {
        let Some(scan) = self.scan else {
            return Err(bad("run_scan of a kernel that is not a scan".into()));
        };
        let want = if scan.op.wide() { ElemType::I64 } else { self.value };
        if out.ty() != want {
            return Err(bad(format!("a {} output for a scan of {want}", out.ty())));
        }
        let n = out.len();
        if shape.iter().product::<usize>() != n || scan.axis.is_some_and(|a| a >= shape.len()) {
            return Err(bad(format!("an output of {n} for a scan over {shape:?}")));
        }
        let checked = self.check(inputs, n)?;
        let (outer, len, inner) = scan.lines(shape);
        let lines = outer * inner;
        let units = max_units.clamp(1, lines.max(1)).min(n.div_ceil(MIN_UNIT).max(1));
        let per = lines.div_ceil(units).max(1);
        let ranges: Vec<(usize, usize)> = (0..units)
            .map(|u| ((u * per).min(lines), ((u + 1) * per).min(lines)))
            .collect();
        let ins: Vec<*const u8> = inputs.iter().map(Stored::ptr).collect();
        let params = [len as i64, inner.max(1) as i64];
        call::dispatch_typed(&self.code, checked, &ins, out.ptr(), 0, &params, &ranges, spread);
        Ok(())
    }
}
