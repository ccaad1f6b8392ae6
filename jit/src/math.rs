//! How transcendentals are lowered: the one place that decides it.
//!
//! Today every transcendental (sin cos tan exp log pow) is a call, one lane at a time, to the very
//! function the interpreter uses: `std`'s f64 methods (glibc) for f64 and the `libm` crate's
//! single-precision functions for f32, wrapped in `extern "C"` host symbols registered with each JIT
//! module. That makes compiled kernels bit-exact against the interpreter. A later issue can replace
//! [`lower`] with vector polynomials (see CRANELIFT.md) without touching the rest of the code generator.

use cranelift_codegen::ir::{AbiParam, FuncRef, InstBuilder, Signature, Type, Value, types};
use cranelift_frontend::FunctionBuilder;
use cranelift_jit::JITBuilder;
use cranelift_module::{Linkage, Module};
use kiln_ir::{BinaryOp, DType, UnaryOp};
use std::collections::HashMap;

/// A transcendental function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MathFn {
    Sin,
    Cos,
    Tan,
    Exp,
    Log,
    Pow,
}

impl MathFn {
    const ALL: [MathFn; 6] = [
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Exp,
        MathFn::Log,
        MathFn::Pow,
    ];

    pub fn of_unary(op: UnaryOp) -> Option<MathFn> {
        Some(match op {
            UnaryOp::Sin => MathFn::Sin,
            UnaryOp::Cos => MathFn::Cos,
            UnaryOp::Tan => MathFn::Tan,
            UnaryOp::Exp => MathFn::Exp,
            UnaryOp::Log => MathFn::Log,
            _ => return None,
        })
    }

    pub fn of_binary(op: BinaryOp) -> Option<MathFn> {
        (op == BinaryOp::Pow).then_some(MathFn::Pow)
    }

    fn arity(self) -> usize {
        if self == MathFn::Pow { 2 } else { 1 }
    }

    fn symbol(self, dtype: DType) -> &'static str {
        match (self, dtype) {
            (MathFn::Sin, DType::F64) => "kiln_sin_f64",
            (MathFn::Cos, DType::F64) => "kiln_cos_f64",
            (MathFn::Tan, DType::F64) => "kiln_tan_f64",
            (MathFn::Exp, DType::F64) => "kiln_exp_f64",
            (MathFn::Log, DType::F64) => "kiln_log_f64",
            (MathFn::Pow, DType::F64) => "kiln_pow_f64",
            (MathFn::Sin, DType::F32) => "kiln_sin_f32",
            (MathFn::Cos, DType::F32) => "kiln_cos_f32",
            (MathFn::Tan, DType::F32) => "kiln_tan_f32",
            (MathFn::Exp, DType::F32) => "kiln_exp_f32",
            (MathFn::Log, DType::F32) => "kiln_log_f32",
            (MathFn::Pow, DType::F32) => "kiln_pow_f32",
        }
    }

    fn address(self, dtype: DType) -> *const u8 {
        match (self, dtype) {
            (MathFn::Sin, DType::F64) => sin_f64 as *const u8,
            (MathFn::Cos, DType::F64) => cos_f64 as *const u8,
            (MathFn::Tan, DType::F64) => tan_f64 as *const u8,
            (MathFn::Exp, DType::F64) => exp_f64 as *const u8,
            (MathFn::Log, DType::F64) => log_f64 as *const u8,
            (MathFn::Pow, DType::F64) => pow_f64 as *const u8,
            (MathFn::Sin, DType::F32) => sin_f32 as *const u8,
            (MathFn::Cos, DType::F32) => cos_f32 as *const u8,
            (MathFn::Tan, DType::F32) => tan_f32 as *const u8,
            (MathFn::Exp, DType::F32) => exp_f32 as *const u8,
            (MathFn::Log, DType::F32) => log_f32 as *const u8,
            (MathFn::Pow, DType::F32) => pow_f32 as *const u8,
        }
    }
}

// The host functions: exactly kiln_ir::Real's methods for each type.
extern "C" fn sin_f64(x: f64) -> f64 {
    x.sin()
}
extern "C" fn cos_f64(x: f64) -> f64 {
    x.cos()
}
extern "C" fn tan_f64(x: f64) -> f64 {
    x.tan()
}
extern "C" fn exp_f64(x: f64) -> f64 {
    x.exp()
}
extern "C" fn log_f64(x: f64) -> f64 {
    x.ln()
}
extern "C" fn pow_f64(x: f64, y: f64) -> f64 {
    x.powf(y)
}
extern "C" fn sin_f32(x: f32) -> f32 {
    libm::sinf(x)
}
extern "C" fn cos_f32(x: f32) -> f32 {
    libm::cosf(x)
}
extern "C" fn tan_f32(x: f32) -> f32 {
    libm::tanf(x)
}
extern "C" fn exp_f32(x: f32) -> f32 {
    libm::expf(x)
}
extern "C" fn log_f32(x: f32) -> f32 {
    libm::logf(x)
}
extern "C" fn pow_f32(x: f32, y: f32) -> f32 {
    libm::powf(x, y)
}

/// Registers every host math symbol with a JIT module under construction.
pub fn register_symbols(builder: &mut JITBuilder) {
    for dtype in [DType::F64, DType::F32] {
        for f in MathFn::ALL {
            builder.symbol(f.symbol(dtype), f.address(dtype));
        }
    }
}

/// The host functions one kernel calls, imported into its function.
pub struct MathRefs {
    dtype: DType,
    refs: HashMap<MathFn, FuncRef>,
}

impl MathRefs {
    /// Declares in `module` and imports into `func` every function in `used`.
    pub fn import<M: Module>(
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
        dtype: DType,
        used: &[MathFn],
    ) -> crate::Result<MathRefs> {
        let ty = scalar_type(dtype);
        let mut refs = HashMap::new();
        for &f in used {
            if refs.contains_key(&f) {
                continue;
            }
            let mut sig = Signature::new(module.isa().default_call_conv());
            for _ in 0..f.arity() {
                sig.params.push(AbiParam::new(ty));
            }
            sig.returns.push(AbiParam::new(ty));
            let id = module.declare_function(f.symbol(dtype), Linkage::Import, &sig)?;
            refs.insert(f, module.declare_func_in_func(id, func));
        }
        Ok(MathRefs { dtype, refs })
    }
}

fn scalar_type(dtype: DType) -> Type {
    match dtype {
        DType::F64 => types::F64,
        DType::F32 => types::F32,
    }
}

/// Emits `f(args)` for a scalar or a vector of the kernel's dtype: today one host call per lane.
pub fn lower(b: &mut FunctionBuilder<'_>, refs: &MathRefs, f: MathFn, args: &[Value]) -> Value {
    let fref = refs.refs[&f];
    let ty = b.func.dfg.value_type(args[0]);
    let call = |b: &mut FunctionBuilder<'_>, xs: &[Value]| {
        let inst = b.ins().call(fref, xs);
        b.inst_results(inst)[0]
    };
    if !ty.is_vector() {
        return call(b, args);
    }
    debug_assert_eq!(ty.lane_type(), scalar_type(refs.dtype));
    let mut out = args[0];
    for lane in 0..ty.lane_count() as u8 {
        let xs: Vec<Value> = args.iter().map(|&a| b.ins().extractlane(a, lane)).collect();
        let r = call(b, &xs);
        out = b.ins().insertlane(out, r, lane);
    }
    out
}
