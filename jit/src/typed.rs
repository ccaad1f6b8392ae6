//! Compiled typed kernels (issue 13): maps and reductions of bool, int32 and int64 values (and the
//! floats and casts a typed kernel mixes in), bit-identical to kiln-ir's typed interpreter
//! ([`kiln_ir::typed::interpret`]).
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
//! **Kinds.** A map writes its values (bools one byte 0 / 1 each). A reduction over trailing axes
//! (whole arrays included) of bool or integer values reduces each row of `row` points into one int64
//! slot: `sum` / `prod` wrapping in int64 (NumPy's accumulator; integer sums are exact and
//! associative, so any cut into chunks gives the same bits), `min` / `max` in the data type, `any` /
//! `all`; one over leading axes folds each row into a slot per column (`lanes` columns at a time,
//! `build_columns`). A scan (`cumsum` / `cumprod` in int64, `cummax` / `cummin` in the type, from
//! its `initial` value where it has one) runs each line in scalars. `argmin` / `argmax` (whole
//! arrays and trailing axes) keep the extreme and its first index per range (scalar,
//! `build_arg`). What does not compile ([`why_not`]: reductions of float values (see
//! [`split_float_reduction`]) or over axes neither leading nor trailing, `argmin` / `argmax` over
//! leading axes, a scan whose `initial` its accumulator cannot hold, `fma`) runs on the typed
//! interpreter. An index (a named index of a contraction) is computed from the kernel's shape, so
//! the code is for that shape.
//!
//! ABI: the float kernels' ([`crate`] doc), of which a typed kernel reads `ins` (input `i`'s buffer
//! at `ins[i]`), `out_val` (the map's output, or the reduction's one int64 slot) and `[lo, hi)` (the
//! flat points to compute).

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
use kiln_ir::{ElemType, KernelKind, Node, ReduceOp, Values};
use std::time::{Duration, Instant};

/// Why `kernel` does not compile, if it does not (it then runs on the typed interpreter).
pub fn why_not(kernel: &TypedKernel) -> Option<String> {
    let k = &kernel.kernel;
    match &k.kind {
        KernelKind::Map => {}
        KernelKind::Reduce { op, axes } => {
            if reduced_axes(&k.shape, axes).is_none() {
                return Some(
                    "a reduction over axes neither leading nor trailing (the JIT reduces trailing \
                     axes, or leading ones)"
                        .into(),
                );
            }
            if kernel.value_type().is_float() {
                return Some(format!(
                    "a reduction of {} values (the JIT reduces bools and integers)",
                    kernel.value_type()
                ));
            }
            if matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax)
                && reduced_axes(&k.shape, axes) == Some(true)
                && axes.len() < k.shape.len()
            {
                return Some(format!("{} over leading axes", op.name()));
            }
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
    for id in k.arena.reachable(k.body) {
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

/// A reduction of float values in a typed kernel (`mean(i * 2)`; `mean(i)` and `var(i)` are float
/// kernels reading `i` stored),
/// which [`why_not`] declines, as two kernels: its body as a typed map (where that compiles), and
/// the float reduction of the map's values (input 0, `values`, of the iteration shape) for the
/// float JIT. None where the kernel is not such a reduction or its map does not compile.
pub fn split_float_reduction(kernel: &TypedKernel) -> Option<(TypedKernel, kiln_ir::KernelIR)> {
    let k = &kernel.kernel;
    let KernelKind::Reduce { op, axes } = &k.kind else {
        return None;
    };
    let dtype = kernel.value_type().float()?;
    // the typed kernel typed again as a map gives its own body back (its casts are explicit)
    let map = kiln_ir::KernelIR {
        kind: KernelKind::Map,
        ..k.clone()
    };
    let map = TypedKernel::new(&map, &kernel.input_types, false).ok()?;
    if map.value_type() != kernel.value_type() || why_not(&map).is_some() {
        return None;
    }
    let mut arena = kiln_ir::ExprArena::new();
    let body = arena.input(0);
    let reduce = kiln_ir::KernelIR {
        dtype,
        inputs: vec![kiln_ir::InputDecl {
            name: "values".into(),
            shape: k.shape.clone(),
            stored: None,
        }],
        shape: k.shape.clone(),
        arena,
        body,
        extra: Vec::new(),
        kind: KernelKind::Reduce {
            op: *op,
            axes: axes.clone(),
        },
    };
    Some((map, reduce))
}

/// Which axes a reduction over `axes` of `shape` folds, as the code generator reads them: `Some(false)`
/// trailing axes (rows of consecutive points, whole arrays included), `Some(true)` leading axes
/// (columns: each output one of the `cols` trailing points of every row), None neither.
fn reduced_axes(shape: &[usize], axes: &[usize]) -> Option<bool> {
    let rank = shape.len();
    if axes.iter().enumerate().all(|(i, &a)| a == rank - axes.len() + i) {
        Some(false)
    } else if axes.iter().enumerate().all(|(i, &a)| a == i) {
        Some(true)
    } else {
        None
    }
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
    reduce: Option<ReduceOp>,
    /// The scan, where the kernel is one.
    scan: Option<Scan>,
    /// A reduction over leading axes (one output per trailing point; see `build_columns`).
    columns: bool,
    compile_time: Duration,
    clif: Option<String>,
}

impl std::fmt::Debug for TypedCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TypedCode")
            .field("lanes", &self.lanes)
            .field("input_types", &self.input_types)
            .field("reads", &self.reads)
            .field("reduce", &self.reduce)
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
    let columns = match &kernel.kernel.kind {
        KernelKind::Reduce { axes, .. } => {
            reduced_axes(&kernel.kernel.shape, axes) == Some(true) && axes.len() < kernel.kernel.shape.len()
        }
        _ => false,
    };
    let reduce = match &kernel.kernel.kind {
        KernelKind::Reduce { op, .. } => Some(*op),
        _ => None,
    };
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
                KernelKind::Reduce { op, .. } if columns => build_columns(&mut g, reads, *op),
                KernelKind::Reduce {
                    op: op @ (ReduceOp::ArgMin | ReduceOp::ArgMax),
                    ..
                } => build_arg(&mut g, reads, *op),
                _ => build(&mut g, reads, reduce),
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
        reduce,
        scan: match &kernel.kernel.kind {
            KernelKind::Scan(s) => Some(*s),
            _ => None,
        },
        columns,
        compile_time: start.elapsed(),
        clif,
    })
}

/// The accumulator of a reduction at one width: its identity and how a value folds into it.
fn identity(op: ReduceOp, vt: ElemType) -> Scalar {
    match (op, vt) {
        (ReduceOp::Sum, _) => Scalar::I64(0),
        (ReduceOp::Prod, _) => Scalar::I64(1),
        (ReduceOp::Any, _) | (ReduceOp::Max, ElemType::Bool) => Scalar::Bool(false),
        (ReduceOp::All, _) | (ReduceOp::Min, ElemType::Bool) => Scalar::Bool(true),
        (ReduceOp::Min, ElemType::I32) => Scalar::I32(i32::MAX),
        (ReduceOp::Max, ElemType::I32) => Scalar::I32(i32::MIN),
        (ReduceOp::Min, _) => Scalar::I64(i64::MAX),
        (ReduceOp::Max, _) => Scalar::I64(i64::MIN),
        (ReduceOp::ArgMin | ReduceOp::ArgMax, _) => unreachable!("why_not refuses arg reductions"),
    }
}

/// The function: entry loads, the vector loop (lanes > 1), the scalar loop, and a reduction's store.
fn build(g: &mut TypedGen<'_, '_>, reads: &[TypedRead], reduce: Option<ReduceOp>) {
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
    // accumulators: a vector one (the kernel's lanes; sums and products in i64x2) and a scalar one
    let acc_types = reduce.map(|op| {
        let wide = matches!(op, ReduceOp::Sum | ReduceOp::Prod);
        let st = if wide {
            types::I64
        } else {
            scalar_type(identity(op, vt).ty())
        };
        let vty = match (wide, g.lanes) {
            (true, _) | (false, 1) => types::I64X2,
            (false, _) => g.ty(identity(op, vt).ty(), true),
        };
        (st, vty)
    });
    let accs = reduce.zip(acc_types).map(|(op, (st, vty))| {
        let s = g.b.declare_var(st);
        let id = identity(op, vt);
        let s0 = g.konst(id, false);
        g.b.def_var(s, s0);
        let wide = matches!(op, ReduceOp::Sum | ReduceOp::Prod);
        let v = (g.lanes > 1).then(|| {
            let v = g.b.declare_var(vty);
            let v0 = if wide {
                let x = g.konst(id, false);
                g.b.ins().splat(types::I64X2, x)
            } else {
                g.konst(id, true)
            };
            g.b.def_var(v, v0);
            v
        });
        (s, v)
    });
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
        match (reduce, accs) {
            (Some(op), Some((_, Some(acc)))) => {
                let a = g.b.use_var(acc);
                let a = fold_vector(g, op, a, v, vt);
                g.b.def_var(acc, a);
            }
            _ => {
                let addr = address(g, out, kk, vt);
                g.store(vt, v, addr);
            }
        }
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
    match (reduce, accs) {
        (Some(op), Some((acc, _))) => {
            let a = g.b.use_var(acc);
            let a = fold_scalar(g, op, a, v, vt);
            g.b.def_var(acc, a);
        }
        _ => {
            let addr = address(g, out, kk, vt);
            g.store(vt, v, addr);
        }
    }
    let next = g.b.ins().iadd_imm_s(kk, 1);
    g.b.def_var(kv, next);
    g.b.ins().jump(tail, &[]);
    g.b.switch_to_block(exit);
    if let (Some(op), Some((s, v))) = (reduce, accs) {
        let mut a = g.b.use_var(s);
        if let Some(v) = v {
            let vec = g.b.use_var(v);
            // the kernel's lanes (a half-filled int32 accumulator's lanes 2 and 3 are not values)
            let lanes = g.b.func.dfg.value_type(vec).lane_count().min(g.lanes as u32);
            for l in 0..lanes {
                let x = g.b.ins().extractlane(vec, l as u8);
                let x = if matches!(op, ReduceOp::Sum | ReduceOp::Prod) {
                    x
                } else if identity(op, vt).ty() == ElemType::Bool {
                    g.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)
                } else {
                    x
                };
                a = combine(g, op, a, x, vt);
            }
        }
        let t = g.b.func.dfg.value_type(a);
        let wide = if t == types::I64 {
            a
        } else if t == types::I8 {
            g.b.ins().uextend(types::I64, a)
        } else {
            g.b.ins().sextend(types::I64, a)
        };
        g.b.ins().store(crate::clif::mem(), wide, out, 0);
    }
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

/// `argmin` / `argmax` of the points `lo..hi`: the extreme (as int64) and the flat index of its first
/// occurrence, stored as two int64 at `out` (the extreme starts at the identity and the index at
/// `lo`, so a range of equal extremes keeps `lo`). Scalar: the strict compare is sequential.
fn build_arg(g: &mut TypedGen<'_, '_>, reads: &[TypedRead], op: ReduceOp) {
    let vt = g.k.value_type();
    let Entry {
        out,
        lo,
        hi,
        ptrs,
        splats,
        ..
    } = enter(g, reads);
    let (k, best, at) = (
        g.b.declare_var(types::I64),
        g.b.declare_var(types::I64),
        g.b.declare_var(types::I64),
    );
    g.b.def_var(k, lo);
    g.b.def_var(at, lo);
    let start = g.b.ins().iconst(
        types::I64,
        if op == ReduceOp::ArgMin {
            i64::MAX
        } else {
            i64::MIN
        },
    );
    g.b.def_var(best, start);
    let (head, body, exit) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
    g.b.ins().jump(head, &[]);
    g.b.switch_to_block(head);
    let kv = g.b.use_var(k);
    let more = g.b.ins().icmp(IntCC::SignedLessThan, kv, hi);
    g.b.ins().brif(more, body, &[], exit, &[]);
    g.b.switch_to_block(body);
    let kv = g.b.use_var(k);
    let v = eval(g, &ptrs, &splats, kv, false);
    let x = g.cast(v, vt, ElemType::I64);
    let b = g.b.use_var(best);
    let cc = if op == ReduceOp::ArgMin {
        IntCC::SignedLessThan
    } else {
        IntCC::SignedGreaterThan
    };
    let better = g.b.ins().icmp(cc, x, b);
    let b1 = g.b.ins().select(better, x, b);
    g.b.def_var(best, b1);
    let a = g.b.use_var(at);
    let a1 = g.b.ins().select(better, kv, a);
    g.b.def_var(at, a1);
    let k1 = g.b.ins().iadd_imm_s(kv, 1);
    g.b.def_var(k, k1);
    g.b.ins().jump(head, &[]);
    g.b.switch_to_block(exit);
    let (b, a) = (g.b.use_var(best), g.b.use_var(at));
    let mem = crate::clif::mem();
    g.b.ins().store(mem, b, out, 0);
    g.b.ins().store(mem, a, out, 8);
    g.b.ins().return_(&[]);
}

/// A reduction over leading axes: for each row `0..rows` (`params[0]`; a row is `cols = params[1]`
/// consecutive points) and each column `lo..hi`, the point's value folded into that column's int64
/// slot of `out` (pre-filled with the identity by `run_reduce`): sums and products wrapping in
/// int64, `min` / `max` on the values sign-extended (the same extreme), `any` / `all` on 0 / 1; a
/// vector of `lanes` columns at a time (its values widened into `i64x2` slots), then the columns
/// left one by one. Rows in order, so each slot folds its column's values in row order; columns may
/// be cut into units.
fn build_columns(g: &mut TypedGen<'_, '_>, reads: &[TypedRead], op: ReduceOp) {
    let vt = g.k.value_type();
    let Entry {
        out,
        sizes,
        lo,
        hi,
        ptrs,
        splats,
    } = enter(g, reads);
    let mem = crate::clif::mem();
    let rows = g.b.ins().load(types::I64, mem, sizes, 0);
    let cols = g.b.ins().load(types::I64, mem, sizes, 8);
    let (r, j) = (g.b.declare_var(types::I64), g.b.declare_var(types::I64));
    let zero = g.b.ins().iconst(types::I64, 0);
    g.b.def_var(r, zero);
    let (row_head, row_body, col_head, col_body, row_end, exit) = (
        g.b.create_block(),
        g.b.create_block(),
        g.b.create_block(),
        g.b.create_block(),
        g.b.create_block(),
        g.b.create_block(),
    );
    g.b.ins().jump(row_head, &[]);
    g.b.switch_to_block(row_head);
    let rv = g.b.use_var(r);
    let more = g.b.ins().icmp(IntCC::SignedLessThan, rv, rows);
    g.b.ins().brif(more, row_body, &[], exit, &[]);
    g.b.switch_to_block(row_body);
    g.b.def_var(j, lo);
    if g.lanes > 1 {
        // `lanes` columns at a time: the values widened to int64 lanes, folded into i64x2 slots
        let (vhead, vbody) = (g.b.create_block(), g.b.create_block());
        g.b.ins().jump(vhead, &[]);
        g.b.switch_to_block(vhead);
        let jv = g.b.use_var(j);
        let next = g.b.ins().iadd_imm_s(jv, g.lanes as i64);
        let fits = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, next, hi);
        g.b.ins().brif(fits, vbody, &[], col_head, &[]);
        g.b.switch_to_block(vbody);
        let (rv, jv) = (g.b.use_var(r), g.b.use_var(j));
        let base = g.b.ins().imul(rv, cols);
        let k = g.b.ins().iadd(base, jv);
        let v = eval(g, &ptrs, &splats, k, true);
        let x = match op {
            ReduceOp::Any | ReduceOp::All => {
                let m = g.cast(v, vt, ElemType::Bool);
                g.b.ins().ineg(m)
            }
            _ if vt == ElemType::Bool => g.b.ins().ineg(v),
            _ => v,
        };
        let parts = match (g.b.func.dfg.value_type(x), g.lanes) {
            (types::I32X4, 4) => vec![g.b.ins().swiden_low(x), g.b.ins().swiden_high(x)],
            (types::I32X4, _) => vec![g.b.ins().swiden_low(x)],
            _ => vec![x],
        };
        let slot = address(g, out, jv, ElemType::I64);
        for (q, p) in parts.into_iter().enumerate() {
            let a = g.b.ins().load(types::I64X2, mem, slot, 16 * q as i32);
            let a = match op {
                ReduceOp::Sum => g.b.ins().iadd(a, p),
                ReduceOp::Prod => g.b.ins().imul(a, p),
                ReduceOp::Min | ReduceOp::All => g.b.ins().smin(a, p),
                ReduceOp::Max | ReduceOp::Any => g.b.ins().smax(a, p),
                ReduceOp::ArgMin | ReduceOp::ArgMax => unreachable!("why_not refuses arg reductions"),
            };
            g.b.ins().store(mem, a, slot, 16 * q as i32);
        }
        let next = g.b.ins().iadd_imm_s(jv, g.lanes as i64);
        g.b.def_var(j, next);
        g.b.ins().jump(vhead, &[]);
    } else {
        g.b.ins().jump(col_head, &[]);
    }
    g.b.switch_to_block(col_head);
    let jv = g.b.use_var(j);
    let more = g.b.ins().icmp(IntCC::SignedLessThan, jv, hi);
    g.b.ins().brif(more, col_body, &[], row_end, &[]);
    g.b.switch_to_block(col_body);
    let (rv, jv) = (g.b.use_var(r), g.b.use_var(j));
    let base = g.b.ins().imul(rv, cols);
    let k = g.b.ins().iadd(base, jv);
    let v = eval(g, &ptrs, &splats, k, false);
    let x = match op {
        ReduceOp::Any | ReduceOp::All => {
            let t = g.cast(v, vt, ElemType::Bool);
            g.b.ins().uextend(types::I64, t)
        }
        _ => g.cast(v, vt, ElemType::I64),
    };
    let slot = address(g, out, jv, ElemType::I64);
    let a = g.b.ins().load(types::I64, mem, slot, 0);
    let a = match op {
        ReduceOp::Sum => g.b.ins().iadd(a, x),
        ReduceOp::Prod => g.b.ins().imul(a, x),
        ReduceOp::Min | ReduceOp::All => g.b.ins().smin(a, x),
        ReduceOp::Max | ReduceOp::Any => g.b.ins().smax(a, x),
        ReduceOp::ArgMin | ReduceOp::ArgMax => unreachable!("why_not refuses arg reductions"),
    };
    g.b.ins().store(mem, a, slot, 0);
    let j1 = g.b.ins().iadd_imm_s(jv, 1);
    g.b.def_var(j, j1);
    g.b.ins().jump(col_head, &[]);
    g.b.switch_to_block(row_end);
    let rv = g.b.use_var(r);
    let r1 = g.b.ins().iadd_imm_s(rv, 1);
    g.b.def_var(r, r1);
    g.b.ins().jump(row_head, &[]);
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

/// A vector of values folded into the vector accumulator.
fn fold_vector(g: &mut TypedGen<'_, '_>, op: ReduceOp, acc: Value, v: Value, vt: ElemType) -> Value {
    match op {
        ReduceOp::Sum | ReduceOp::Prod => {
            // the values as int64 lanes: masks to 0 / 1, int32 widened (two i64x2)
            let v = if vt == ElemType::Bool {
                g.b.ins().ineg(v)
            } else {
                v
            };
            let parts = match (g.b.func.dfg.value_type(v), g.lanes) {
                (types::I32X4, 4) => vec![g.b.ins().swiden_low(v), g.b.ins().swiden_high(v)],
                // half-filled int32: lanes 0 and 1
                (types::I32X4, _) => vec![g.b.ins().swiden_low(v)],
                _ => vec![v],
            };
            parts.into_iter().fold(acc, |a, p| {
                if op == ReduceOp::Sum {
                    g.b.ins().iadd(a, p)
                } else {
                    g.b.ins().imul(a, p)
                }
            })
        }
        ReduceOp::Min if vt == ElemType::Bool => g.b.ins().band(acc, v),
        ReduceOp::Max if vt == ElemType::Bool => g.b.ins().bor(acc, v),
        ReduceOp::Min => g.b.ins().smin(acc, v),
        ReduceOp::Max => g.b.ins().smax(acc, v),
        ReduceOp::Any | ReduceOp::All => {
            let m = g.cast(v, vt, ElemType::Bool);
            if op == ReduceOp::Any {
                g.b.ins().bor(acc, m)
            } else {
                g.b.ins().band(acc, m)
            }
        }
        ReduceOp::ArgMin | ReduceOp::ArgMax => unreachable!("why_not refuses arg reductions"),
    }
}

/// A scalar value folded into the scalar accumulator.
fn fold_scalar(g: &mut TypedGen<'_, '_>, op: ReduceOp, acc: Value, v: Value, vt: ElemType) -> Value {
    let x = match op {
        ReduceOp::Sum | ReduceOp::Prod => g.cast(v, vt, ElemType::I64),
        ReduceOp::Any | ReduceOp::All => g.cast(v, vt, ElemType::Bool),
        _ => v,
    };
    combine(g, op, acc, x, vt)
}

/// Two scalar accumulators (or an accumulator and a value in the accumulator's type) combined.
fn combine(g: &mut TypedGen<'_, '_>, op: ReduceOp, a: Value, x: Value, vt: ElemType) -> Value {
    let boolean = identity(op, vt).ty() == ElemType::Bool;
    match op {
        ReduceOp::Sum => g.b.ins().iadd(a, x),
        ReduceOp::Prod => g.b.ins().imul(a, x),
        ReduceOp::Min | ReduceOp::All if boolean => g.b.ins().band(a, x),
        ReduceOp::Max | ReduceOp::Any if boolean => g.b.ins().bor(a, x),
        ReduceOp::Min => g.b.ins().smin(a, x),
        ReduceOp::Max => g.b.ins().smax(a, x),
        _ => unreachable!("any / all accumulate bools"),
    }
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
        if self.reduce.is_some() || self.scan.is_some() {
            return Err(bad("run_map of a reduction or a scan".into()));
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

    /// Runs a reduction of `n_out` rows of `row` points each (C order: row `o` is points `o * row ..
    /// (o + 1) * row`), from the identity. A whole array (one row) is cut into at most `max_units`
    /// chunks run by `spread`, their partials combined after (exact: integer folds are associative).
    /// The result has the kernel's output type.
    ///
    /// # Errors
    /// [`JitError::BadInput`] for inputs that do not fit the code.
    pub fn run_reduce(
        &self,
        inputs: &[Stored<'_>],
        n_out: usize,
        row: usize,
        max_units: usize,
        spread: &dyn Spread,
    ) -> Result<Values> {
        let Some(op) = self.reduce else {
            return Err(bad("run_reduce of a map".into()));
        };
        let n = n_out
            .checked_mul(row)
            .ok_or_else(|| bad("too many points".into()))?;
        let checked = self.check(inputs, n)?;
        let ins: Vec<*const u8> = inputs.iter().map(Stored::ptr).collect();
        let convert = |slots: Vec<i64>| match (op, self.value) {
            (ReduceOp::Sum | ReduceOp::Prod, _) => Values::I64(slots),
            (ReduceOp::Any | ReduceOp::All, _) | (_, ElemType::Bool) => {
                Values::Bool(slots.into_iter().map(|s| s != 0).collect())
            }
            (_, ElemType::I32) => Values::I32(slots.into_iter().map(|s| s as i32).collect()),
            _ => Values::I64(slots),
        };
        if self.columns {
            // one slot per column from the identity, columns cut into units
            let start = match op {
                ReduceOp::Sum | ReduceOp::Any => 0,
                ReduceOp::Prod | ReduceOp::All => 1,
                ReduceOp::Min if self.value == ElemType::Bool => 1,
                ReduceOp::Max if self.value == ElemType::Bool => 0,
                ReduceOp::Min => i64::MAX,
                _ => i64::MIN,
            };
            let mut slots = vec![start; n_out];
            let units = max_units.clamp(1, n_out.max(1)).min(n.div_ceil(MIN_UNIT).max(1));
            let per = n_out.div_ceil(units).max(1);
            let ranges: Vec<(usize, usize)> = (0..units)
                .map(|u| ((u * per).min(n_out), ((u + 1) * per).min(n_out)))
                .collect();
            let params = [row as i64, n_out as i64];
            call::dispatch_typed(
                &self.code,
                checked,
                &ins,
                slots.as_mut_ptr().cast(),
                0,
                &params,
                &ranges,
                spread,
            );
            return Ok(convert(slots));
        }
        if matches!(op, ReduceOp::ArgMin | ReduceOp::ArgMax) {
            // (extreme, index) per range: rows, or chunks of a whole array combined in order, the
            // first of equal extremes kept
            let ranges: Vec<(usize, usize)> = if n_out == 1 {
                let units = max_units.clamp(1, n.div_ceil(MIN_UNIT).max(1));
                let per = n.div_ceil(units).max(1);
                (0..units)
                    .map(|u| ((u * per).min(n), ((u + 1) * per).min(n)))
                    .filter(|(lo, hi)| lo < hi)
                    .collect()
            } else {
                (0..n_out).map(|o| (o * row, (o + 1) * row)).collect()
            };
            let mut slots = vec![0i64; 2 * ranges.len()];
            call::dispatch_typed(
                &self.code,
                checked,
                &ins,
                slots.as_mut_ptr().cast(),
                16,
                &[],
                &ranges,
                if n_out == 1 { spread } else { &crate::Serial },
            );
            let pairs = slots.chunks(2).map(|p| (p[0], p[1]));
            let idx: Vec<i64> = if n_out == 1 {
                let first = pairs.reduce(|a, b| {
                    let better = if op == ReduceOp::ArgMin {
                        b.0 < a.0
                    } else {
                        b.0 > a.0
                    };
                    if better { b } else { a }
                });
                vec![first.map_or(0, |p| p.1)]
            } else {
                pairs.enumerate().map(|(o, p)| p.1 - (o * row) as i64).collect()
            };
            return Ok(Values::I64(idx));
        }
        let ranges: Vec<(usize, usize)> = if n_out == 1 {
            let units = max_units.clamp(1, n.div_ceil(MIN_UNIT).max(1));
            let per = n.div_ceil(units).div_ceil(4) * 4;
            (0..units)
                .map(|u| ((u * per).min(n), ((u + 1) * per).min(n)))
                .collect()
        } else {
            (0..n_out).map(|o| (o * row, (o + 1) * row)).collect()
        };
        let mut slots = vec![0i64; ranges.len()];
        call::dispatch_typed(
            &self.code,
            checked,
            &ins,
            slots.as_mut_ptr().cast(),
            8,
            &[],
            &ranges,
            if n_out == 1 { spread } else { &crate::Serial },
        );
        let fold = |a: i64, b: i64| match op {
            ReduceOp::Sum => a.wrapping_add(b),
            ReduceOp::Prod => a.wrapping_mul(b),
            ReduceOp::Min | ReduceOp::All => a.min(b),
            _ => a.max(b),
        };
        if n_out == 1 {
            slots = vec![slots.into_iter().reduce(fold).unwrap_or(0)];
        }
        Ok(convert(slots))
    }
}
