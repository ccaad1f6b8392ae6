//! Compiling one kernel, the one way every kernel is built from the code generator's input
//! ([`KernelKey`]): the host ISA (built once), one `JITModule` per kernel (so evicting a kernel frees
//! its machine code), one `define` step (the signature, the function built on the shared frame by the
//! kernel's mode: maps and reductions by the skeleton, scans by scan.rs) and optional CLIF / VCode
//! dumps.

use crate::call::{self, Code};
use crate::error::{JitError, Result};
use crate::frame::Frame;
use crate::host::{self, MathFn, MathRefs};
use crate::key::KernelKey;
use crate::layout::Mode;
use crate::lower::Gen;
use crate::math;
use crate::schedule::MANY_INPUTS;
use crate::wide::{Routine, WideFn};
use crate::{scan, skeleton};
use cranelift_codegen::ir::{AbiParam, Function, Signature, UserFuncName, types};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use kiln_ir::KernelIR;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The host ISA: native features (SSE4.2, AVX, AVX2, FMA on the target machine; FMA off under
/// [`NO_FMA_ENV`]), `opt_level=speed`, the
/// verifier on in debug builds only (it costs 30-45% of compile time).
pub(crate) fn isa() -> Result<OwnedTargetIsa> {
    static ISA: OnceLock<std::result::Result<OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(|| build_isa("speed"))
        .clone()
        .map_err(JitError::Isa)
}

/// The host ISA at `opt_level=none`, for kernels of more than [`MANY_INPUTS`] inputs: Cranelift's
/// e-graph pass places each pure value just before its first use, so every load of a sum of
/// thousands of inputs would come before the first add, all of them live at once and spilled (the
/// register allocator's time grows quadratically with that number). Without the pass the adds stay
/// where the body put them, beside their loads, and compile time is linear in the inputs.
fn isa_unoptimised() -> Result<OwnedTargetIsa> {
    static ISA: OnceLock<std::result::Result<OwnedTargetIsa, String>> = OnceLock::new();
    ISA.get_or_init(|| build_isa("none"))
        .clone()
        .map_err(JitError::Isa)
}

/// Set (to anything but `0`) when a process starts, compiles every kernel as for a host without FMA,
/// whatever this one has: Cranelift then lowers each `fma` of the vector math and of the
/// `approximate` profile's contraction to a call of libm's `fma` per lane instead of `vfmadd`. Both
/// round once, so the bits are the same and only the speed differs: this is how the tests check, on
/// an FMA host, what a host without FMA computes.
pub const NO_FMA_ENV: &str = "KILN_JIT_NO_FMA";

fn build_isa(opt_level: &str) -> std::result::Result<OwnedTargetIsa, String> {
    let mut flags = settings::builder();
    let set = |f: &mut settings::Builder, k: &str, v: &str| f.set(k, v).map_err(|e| format!("{k}={v}: {e}"));
    set(&mut flags, "opt_level", opt_level)?;
    set(&mut flags, "use_colocated_libcalls", "false")?;
    set(&mut flags, "is_pic", "false")?;
    set(
        &mut flags,
        "enable_verifier",
        if cfg!(debug_assertions) { "true" } else { "false" },
    )?;
    let mut isa = cranelift_native::builder().map_err(|e| e.to_string())?;
    if std::env::var_os(NO_FMA_ENV).is_some_and(|v| v != "0") {
        isa.set("has_fma", "false")
            .map_err(|e| format!("has_fma=false: {e}"))?;
    }
    isa.finish(settings::Flags::new(flags)).map_err(|e| e.to_string())
}

/// The text forms of a compiled kernel.
#[derive(Debug, Clone, Default)]
pub struct Dumps {
    /// The Cranelift IR, before optimisation.
    pub clif: String,
    /// The lowered machine code (Cranelift's VCode text), if Cranelift produced it.
    pub vcode: Option<String>,
}

/// A freshly compiled kernel: its code, and the time compiling it took.
pub(crate) struct Compiled {
    pub code: Code,
    pub dumps: Option<Dumps>,
    pub compile_time: Duration,
}

/// Compiles `key` into its own module.
pub(crate) fn compile_key(key: &KernelKey, dumps: bool) -> Result<Compiled> {
    let start = Instant::now();
    let isa = if key.structure.inputs.len() > MANY_INPUTS {
        isa_unoptimised()?
    } else {
        isa()?
    };
    let mut jb = JITBuilder::with_isa(isa, default_libcall_names());
    host::register_symbols(&mut jb);
    jb.symbol(crate::bytes::SYMBOL, call::bytes_op_address());
    if crate::wide::level().is_some() {
        for r in crate::wide::Routine::ALL {
            for dtype in [kiln_ir::ElemType::F64, kiln_ir::ElemType::F32] {
                jb.symbol(
                    crate::wide::WideFn::One(r).symbol(dtype),
                    call::wide_block_address(r, dtype),
                );
            }
        }
        for r in crate::wide::Binary::ALL {
            for dtype in [kiln_ir::ElemType::F64, kiln_ir::ElemType::F32] {
                jb.symbol(
                    crate::wide::WideFn::Two(r).symbol(dtype),
                    call::wide_binary_block_address(r, dtype),
                );
            }
        }
        for dtype in [kiln_ir::ElemType::F64, kiln_ir::ElemType::F32] {
            jb.symbol(
                crate::wide::WideFn::ComplexDiv.symbol(dtype),
                call::wide_complex_div_address(dtype),
            );
            jb.symbol(
                crate::wide::WideFn::ComplexAbs.symbol(dtype),
                call::wide_complex_abs_address(dtype),
            );
            jb.symbol(host::sincos_symbol(dtype), call::wide_sincos_address(dtype));
            jb.symbol(host::moments_symbol(dtype), call::moments_address(dtype));
            for group in [true, false] {
                jb.symbol(
                    host::kept_rows_symbol(group, dtype),
                    call::kept_rows_address(group, dtype),
                );
            }
            for (max, group) in [(true, false), (false, false), (true, true), (false, true)] {
                jb.symbol(
                    host::kept_extreme_symbol(max, group, dtype),
                    call::kept_extreme_address(max, group, dtype),
                );
            }
        }
        for dtype in [kiln_ir::ElemType::F64, kiln_ir::ElemType::F32] {
            for dot in [false, true] {
                jb.symbol(host::sum_symbol(dot, dtype), call::sum_address(dot, dtype));
            }
        }
        for dtype in [
            kiln_ir::ElemType::F64,
            kiln_ir::ElemType::F32,
            kiln_ir::ElemType::I64,
            kiln_ir::ElemType::I32,
            kiln_ir::ElemType::Bool,
        ] {
            for (max, row) in [(true, false), (false, false), (true, true), (false, true)] {
                jb.symbol(
                    host::extreme_symbol(max, dtype, row),
                    call::extreme_address(max, dtype, row),
                );
            }
            for max in [true, false] {
                jb.symbol(host::arg_symbol(max, dtype), call::arg_address(max, dtype));
            }
        }
        for dtype in [
            kiln_ir::ElemType::I64,
            kiln_ir::ElemType::I32,
            kiln_ir::ElemType::Bool,
        ] {
            jb.symbol(host::sum_symbol(false, dtype), call::int_sum_address(dtype));
            for op in crate::wide::int_rows::OPS {
                for group in [true, false] {
                    jb.symbol(
                        host::kept_int_symbol(op, group, dtype),
                        call::kept_int_address(op, group, dtype),
                    );
                }
            }
        }
    }
    let mut module = JITModule::new(jb);
    match define(&mut module, key, dumps) {
        Ok((id, dumps)) => {
            let code = Code::new(module, id)?;
            Ok(Compiled {
                code,
                dumps,
                compile_time: start.elapsed(),
            })
        }
        Err(e) => {
            call::discard(module);
            Err(e)
        }
    }
}

fn define(
    module: &mut JITModule,
    key: &KernelKey,
    dumps: bool,
) -> Result<(cranelift_module::FuncId, Option<Dumps>)> {
    let sig = signature(module);
    let id = module.declare_function("kiln_kernel", Linkage::Local, &sig)?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    ctx.func.name = UserFuncName::user(0, id.as_u32());
    ctx.set_disasm(dumps);
    build(module, &mut ctx.func, key)?;
    let clif = dumps.then(|| ctx.func.display().to_string());
    module
        .define_function(id, &mut ctx)
        .map_err(|e| JitError::Codegen {
            kernel: format!("{:?}", key.structure),
            message: match e {
                cranelift_module::ModuleError::Compilation(err) => {
                    cranelift_codegen::print_errors::pretty_error(&ctx.func, err)
                }
                other => other.to_string(),
            },
        })?;
    let dumps = clif.map(|clif| Dumps {
        clif,
        vcode: ctx.compiled_code().and_then(|c| c.vcode.clone()),
    });
    module.clear_context(&mut ctx);
    Ok((id, dumps))
}

/// The signature every kernel has (see the ABI in lib.rs): eight i64 parameters, no result.
fn signature<M: Module>(module: &M) -> Signature {
    let mut sig = Signature::new(module.isa().default_call_conv());
    for _ in 0..8 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig
}

/// Builds the body of `func` for `key`: the math functions it calls, the frame, then the loops of
/// its mode.
fn build<M: Module>(module: &mut M, func: &mut Function, key: &KernelKey) -> Result<()> {
    let st = &key.structure;
    let order = key.arena.reachable_all(&key.roots());
    let used = MathFn::used_by(&key.arena, &order);
    // a typed kernel's float functions: the wide routines on blocks for values of its lanes' type
    // (below), inline vector math where they have it (math.rs, vmath), else the interpreter's own
    // called per lane (`Gen::function`); no kept sum's row step
    let typed = match st.typed {
        Some(_) => Some(typed_kernel(key)?),
        None => None,
    };
    let mut math = match &typed {
        // float32 and float64 functions both (a typed kernel may hold either), inline vector math
        // as a float kernel's; the wide routines on blocks of the nodes that are values of the
        // lanes' float type, of operands of that type (`typed::stages_in_lanes`: `exp(cast f64
        // i)` of an integer input), sin and cos each by its own routine
        Some(t) => {
            let inline = math::inline_vector_math(&key.arena, &order);
            let blocked = matches!(st.mode, Mode::Map | Mode::Trailing(_) | Mode::Siblings(_));
            let lanes: Vec<_> = order
                .iter()
                .copied()
                .filter(|&id| crate::typed::stages_in_lanes(t, id, st.dtype))
                .collect();
            let mut wide = math::wide_routines(&key.arena, &lanes, blocked, key.schedule, inline, st.dtype);
            // complex division and magnitude of parts of the lanes' type, on blocks as well
            // (`wide/complex.rs`)
            for &id in &order {
                let f = crate::typed::wide_complex(t, id, st.dtype);
                // the magnitude only where the vector math is inline, as the wide hypot: else
                // the inline `abs` calls libm's hypot, and a point's bits would depend on its row
                // piece (the quotient is plain arithmetic either way)
                if let Some(f) = f
                    && (inline || f == WideFn::ComplexDiv)
                    && blocked
                    && key.schedule.wide
                    && crate::wide::routed(f, st.dtype)
                    && !wide.contains(&f)
                {
                    wide.push(f);
                }
            }
            let imports: Vec<(String, usize)> =
                wide.iter().map(|f| (f.symbol(st.dtype), f.arity())).collect();
            MathRefs::import(
                module,
                func,
                kiln_ir::ElemType::F32,
                &used,
                inline,
                &imports,
                false,
            )?
        }
        None => {
            let inline = math::inline_vector_math(&key.arena, &order);
            let blocked = matches!(st.mode, Mode::Map | Mode::Trailing(_) | Mode::Siblings(_));
            let wide = math::wide_routines(&key.arena, &order, blocked, key.schedule, inline, st.dtype);
            let imports: Vec<(String, usize)> =
                wide.iter().map(|f| (f.symbol(st.dtype), f.arity())).collect();
            let (sin, cos) = (WideFn::One(Routine::Sin), WideFn::One(Routine::Cos));
            let sincos = wide.contains(&sin) && wide.contains(&cos);
            MathRefs::import(module, func, st.dtype, &used, inline, &imports, sincos)?
        }
    };
    if typed.as_ref().is_some_and(crate::typed::holds_complex) {
        math.import_complex(module, func)?;
    }
    // a kept reduction, or kept sibling reductions, of plain reads step their rows at full width,
    // each component's step in turn (skeleton.rs `segment`, `group`)
    // float values of a float kernel, or int64, int32 or bool values of a typed one, folded in
    // their own type
    let folded = math::fold_values(typed.as_ref().map(|t| t.value_type()), st.dtype);
    let kept = st.mode.kept_ops();
    if let Some(values) = folded
        && math::wide_kept_rows(&key.arena, &key.roots(), kept, key.schedule, values)
    {
        for &op in kept {
            math.import_kept_rows(module, func, op, values, crate::wide::GROUP)?;
        }
    }
    // a compound moments kernel folds its long rows (skeleton.rs `segment`)
    if st.mode == Mode::Compound(kiln_ir::CompoundOp::Moments)
        && typed.is_none()
        && math::wide_moments(&key.arena, key.body, key.schedule, st.dtype)
    {
        math.import_moments(module, func, st.dtype)?;
    }
    // an argmax or argmin of a plain read finds a row's point by one call (skeleton.rs
    // `arg_blocks`)
    if let Mode::Trailing(op) = st.mode
        && op.is_arg()
        && let Some(values) = folded
        && key.roots().len() == 1
        && math::wide_extreme(&key.arena, key.body, key.schedule)
    {
        math.import_arg(module, func, op == kiln_ir::ReduceOp::ArgMax, values)?;
    }
    // a trailing sum, max or min, or sibling reductions, whose every reduction folds its long
    // rows at full width (skeleton.rs `wide_folds`; a typed kernel's integer sums in int64)
    for fold in key.folds(folded).unwrap_or_default() {
        match fold {
            math::Fold::Extreme { max } if math.extreme(max).is_none() => {
                // (a row's fold where it is all its segment: its zero of one sign is kept)
                let row = st.segments_in_one_row();
                math.import_extreme(module, func, max, folded.expect("a fold's values"), row)?
            }
            math::Fold::Sum { dot } if math.sum(dot).is_none() => {
                math.import_sum(module, func, dot, folded.expect("a fold's values"))?
            }
            math::Fold::IntSum if math.int_sum().is_none() => {
                math.import_int_sum(module, func, folded.expect("a fold's values"))?
            }
            _ => {}
        }
    }
    if crate::bytes::compares(&st.stored, &key.arena, &order) {
        math.import_bytes(module, func)?;
    }
    let config = module.target_config();
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    {
        let mut g = Gen::new(&mut b, st.dtype, math);
        g.typed = typed.as_ref();
        // (`typed_kernel` types the arena as a map's: the mode says whether it is one)
        if key.schedule.is_vector()
            && typed
                .as_ref()
                .is_some_and(|t| crate::typed::runs_bytes(t, st.mode))
        {
            g.byte_lanes();
        }
        let frame = Frame::new(&mut g, key, entry);
        match st.mode {
            Mode::Scan { .. } => scan::emit(&mut g, &frame),
            Mode::Map
            | Mode::Trailing(_)
            | Mode::Kept(_)
            | Mode::Compound(_)
            | Mode::Siblings(_)
            | Mode::KeptSiblings(_) => skeleton::emit(&mut g, &frame),
        }
    }
    b.seal_all_blocks();
    b.finalize(config);
    Ok(())
}

/// The typed kernel of `key` (a typed structure's): its arena typed from the inputs' types.
fn typed_kernel(key: &KernelKey) -> Result<kiln_ir::typed::TypedKernel> {
    let st = &key.structure;
    let inputs: Vec<kiln_ir::ElemType> = st.stored.iter().map(|t| t.unwrap_or(st.dtype)).collect();
    let kernel = KernelIR {
        dtype: st.dtype,
        inputs: inputs
            .iter()
            .enumerate()
            .map(|(i, _)| kiln_ir::InputDecl::new(format!("in{i}"), Vec::new()))
            .collect(),
        // the rank alone matters (the `Index` axes it validates)
        shape: vec![1; st.rank],
        arena: key.arena.clone(),
        body: key.body,
        extra: key.extra.clone(),
        kind: kiln_ir::KernelKind::Map,
    };
    Ok(kiln_ir::typed::TypedKernel::of_arena(&kernel, &inputs)?)
}
