//! The host-function table: every libm function kiln's kernels may call ([`MathFn`]), the host
//! symbol of each (exactly the interpreter's `UnaryOp::eval` / `BinaryOp::eval`, wrapped in
//! `extern "C"`), their registration with a JIT module, and the functions one kernel imports
//! ([`MathRefs`]). Which functions are called rather than computed inline is the policy of
//! [`crate::math`].

use cranelift_codegen::ir::{AbiParam, FuncRef, Signature, Type, types};
use cranelift_jit::JITBuilder;
use cranelift_module::{Linkage, Module};
use kiln_ir::{BinaryOp, ElemType, ReduceOp, UnaryOp};
use std::collections::HashMap;

macro_rules! math_fns {
    (unary: $($u:ident),* ; binary: $($b:ident),*) => {
        /// A function computed by libm (or, on the vector path, by the polynomials of vmath/: see [`crate::math`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum MathFn {
            $($u,)*
            $($b,)*
        }

        impl MathFn {
            const ALL: &[MathFn] = &[$(MathFn::$u,)* $(MathFn::$b,)*];

            pub fn of_unary(op: UnaryOp) -> Option<MathFn> {
                match op {
                    $(UnaryOp::$u => Some(MathFn::$u),)*
                    _ => None,
                }
            }

            pub fn of_binary(op: BinaryOp) -> Option<MathFn> {
                match op {
                    $(BinaryOp::$b => Some(MathFn::$b),)*
                    _ => None,
                }
            }

            pub(crate) fn arity(self) -> usize {
                match self {
                    $(MathFn::$b => 2,)*
                    _ => 1,
                }
            }

            /// The host function: exactly `UnaryOp::eval` / `BinaryOp::eval` for `dtype`.
            fn address(self, dtype: ElemType) -> *const u8 {
                #[allow(non_snake_case)]
                mod host {
                    use kiln_ir::{BinaryOp, UnaryOp};
                    $(
                        pub mod $u {
                            pub extern "C" fn f64(x: f64) -> f64 {
                                super::UnaryOp::$u.eval(x)
                            }
                            pub extern "C" fn f32(x: f32) -> f32 {
                                super::UnaryOp::$u.eval(x)
                            }
                        }
                    )*
                    $(
                        pub mod $b {
                            pub extern "C" fn f64(x: f64, y: f64) -> f64 {
                                super::BinaryOp::$b.eval(x, y)
                            }
                            pub extern "C" fn f32(x: f32, y: f32) -> f32 {
                                super::BinaryOp::$b.eval(x, y)
                            }
                        }
                    )*
                }
                match (self, dtype) {
                    $(
                        (MathFn::$u, ElemType::F64) => host::$u::f64 as *const u8,
                        (MathFn::$u, ElemType::F32) => host::$u::f32 as *const u8,
                    )*
                    $(
                        (MathFn::$b, ElemType::F64) => host::$b::f64 as *const u8,
                        (MathFn::$b, ElemType::F32) => host::$b::f32 as *const u8,
                    )*
                    _ => unreachable!("only float types (f32, f64) reach here"),
                }
            }
        }
    };
}

math_fns!(
    unary: Sin, Cos, Tan, Exp, Log, Tanh, Exp2, Log2, Log10, Expm1, Log1p, Arcsin, Arccos, Arctan,
        Sinh, Cosh, Arcsinh, Arccosh, Arctanh, Erf, Erfc, Cbrt;
    binary: Pow, Arctan2, Hypot, Fmod, Rem, FloorDiv, Nextafter, Logaddexp, Logaddexp2
);

impl MathFn {
    fn symbol(self, dtype: ElemType) -> String {
        format!("kiln_{self:?}_{}", dtype.short_name()).to_lowercase()
    }

    /// The math function node `id` calls, if any.
    pub(crate) fn of_node(arena: &kiln_ir::ExprArena, id: kiln_ir::NodeId) -> Option<MathFn> {
        match *arena.node(id) {
            kiln_ir::Node::Unary(op, _) => MathFn::of_unary(op),
            kiln_ir::Node::Binary(op, _, _) => MathFn::of_binary(op),
            _ => None,
        }
    }

    /// The math functions the nodes in `order` call, each once.
    pub fn used_by(arena: &kiln_ir::ExprArena, order: &[kiln_ir::NodeId]) -> Vec<MathFn> {
        let mut used: Vec<MathFn> = Vec::new();
        for &id in order {
            used.extend(MathFn::of_node(arena, id).filter(|f| !used.contains(f)));
        }
        used
    }
}

/// The symbol of the kept sum's row step (`group`: of a group of rows, wide/rows.rs, else of one) on
/// `dtype` (registered by compile.rs where the host has a wide level).
pub(crate) fn kept_rows_symbol(group: bool, dtype: ElemType) -> String {
    let what = if group { "group" } else { "single" };
    format!("kiln_wide_kept_{what}_{}", dtype.short_name()).to_lowercase()
}

/// The symbol of the kept max's (`max`) or min's single-row step (or group step: `group`) on
/// `dtype` (wide/rows.rs, registered by compile.rs where the host has a wide level).
pub(crate) fn kept_extreme_symbol(max: bool, group: bool, dtype: ElemType) -> String {
    let what = if max { "max" } else { "min" };
    let rows = if group { "_group" } else { "" };
    format!("kiln_wide_kept_{what}{rows}_{}", dtype.short_name()).to_lowercase()
}

/// The symbol of a typed kernel's kept `op`'s (sum, max, min, `any`, `all`) single-row step (or
/// group step: `group`) on `values` (i64, i32, bool; wide/int_rows.rs, registered by compile.rs
/// where the host has a wide level).
pub(crate) fn kept_int_symbol(op: ReduceOp, group: bool, values: ElemType) -> String {
    let rows = if group { "_group" } else { "" };
    format!("kiln_wide_kept_int_{}{rows}_{}", op.name(), values.short_name()).to_lowercase()
}

/// The symbol of the trailing max (`max`) or min of a run on `dtype` (wide/extremes.rs, registered
/// by compile.rs where the host has a wide level): a row's (`row`: a zero of a row holding zeros
/// of both signs made a NaN, [`crate::wide::row_extreme`]) or a block's.
pub(crate) fn extreme_symbol(max: bool, dtype: ElemType, row: bool) -> String {
    let what = if max { "max" } else { "min" };
    let of = if row { "row_" } else { "" };
    format!("kiln_wide_{of}{what}_{}", dtype.short_name()).to_lowercase()
}

/// The type compiled code holds the extreme of a run of `dtype` values in (`WideExtreme::Held`):
/// the float's own, int64 for an integer or a bool (a typed kernel's reductions widen int32 and
/// bool lanes).
fn held_type(dtype: ElemType) -> Type {
    match dtype {
        ElemType::I64 | ElemType::I32 | ElemType::Bool => types::I64,
        _ => scalar_type(dtype),
    }
}

/// The symbol of the argmax (`max`) or argmin of a row of `dtype` values (wide/args.rs,
/// registered by compile.rs where the host has a wide level).
pub(crate) fn arg_symbol(max: bool, dtype: ElemType) -> String {
    let what = if max { "argmax" } else { "argmin" };
    format!("kiln_wide_{what}_{}", dtype.short_name()).to_lowercase()
}

/// The symbol of the trailing sum of a run of `dtype` values (f32, f64; `dot` false; i64, i32 and
/// bool into int64, wide/int_sums.rs) or of the products of two runs (wide/sums.rs, registered by
/// compile.rs where the host has a wide level).
pub(crate) fn sum_symbol(dot: bool, dtype: ElemType) -> String {
    let what = if dot { "sum_products" } else { "sum" };
    format!("kiln_wide_{what}_{}", dtype.short_name()).to_lowercase()
}

/// The symbol of the moments of a row of `dtype` values (f64, f32; wide/moments.rs, registered
/// by compile.rs where the host has a wide level).
pub(crate) fn moments_symbol(dtype: ElemType) -> String {
    format!("kiln_wide_moments_{}", dtype.short_name()).to_lowercase()
}

/// The symbol of the block function of sin and cos of one argument on `dtype` (registered by
/// compile.rs where the host has a wide level).
pub(crate) fn sincos_symbol(dtype: ElemType) -> String {
    format!("kiln_wide_sincos_{}", dtype.short_name()).to_lowercase()
}

/// Where [`MathRefs`] keeps the kept reduction `op`'s row steps: a sum's, a min's, a max's.
fn kept_index(op: ReduceOp) -> Option<usize> {
    match op {
        ReduceOp::Sum => Some(0),
        ReduceOp::Min => Some(1),
        ReduceOp::Max => Some(2),
        ReduceOp::Any => Some(3),
        ReduceOp::All => Some(4),
        _ => None,
    }
}

/// Declares `symbol` in `module` and imports it into `func`: a host function of `params`
/// arguments of 64 bits (addresses, lengths) returning `returns`, if anything (the full-width
/// folds and row steps, the byte strings' comparison).
fn import_i64s<M: Module>(
    module: &mut M,
    func: &mut cranelift_codegen::ir::Function,
    symbol: &str,
    params: usize,
    returns: Option<cranelift_codegen::ir::Type>,
) -> crate::Result<FuncRef> {
    let mut sig = Signature::new(module.isa().default_call_conv());
    sig.params
        .extend(std::iter::repeat_n(AbiParam::new(types::I64), params));
    sig.returns.extend(returns.map(AbiParam::new));
    let id = module.declare_function(symbol, Linkage::Import, &sig)?;
    Ok(module.declare_func_in_func(id, func))
}

/// Registers every host math symbol with a JIT module under construction.
pub fn register_symbols(builder: &mut JITBuilder) {
    for dtype in [ElemType::F64, ElemType::F32] {
        for &f in MathFn::ALL {
            builder.symbol(f.symbol(dtype), f.address(dtype));
        }
    }
    for parts in [ElemType::F64, ElemType::F32] {
        builder.symbol(complex_symbol("unary", parts), complex::unary_address(parts));
        builder.symbol(complex_symbol("pow", parts), complex::pow_address(parts));
    }
}

/// The symbol of the complex host function `what` ("unary", "pow") of complex values of `parts`
/// parts (float64: complex128, float32: complex64).
fn complex_symbol(what: &str, parts: ElemType) -> String {
    format!("kiln_complex_{what}_{parts}")
}

/// Whether the complex host functions can be called: they return a complex number as two float64
/// values (`#[repr(C)]` pair), which the C ABIs of Unix-like hosts return in two float registers,
/// as Cranelift's two float results; Windows' returns it through memory.
pub const COMPLEX_CALLS: bool = cfg!(not(windows));

/// The host functions of complex values: the interpreter's own ([`kiln_ir::complex`]), taking and
/// giving each part as a float64 (a complex64's float32 parts widened and narrowed exactly), so a
/// call is bit-exact by construction.
mod complex {
    use kiln_ir::ElemType;
    use kiln_ir::complex::{self as c, Out};
    use kiln_ir::num_complex::Complex;
    use kiln_ir::{Real, UnaryOp};

    /// A complex number as two float64 registers (see [`super::COMPLEX_CALLS`]).
    #[repr(C)]
    pub struct Pair {
        re: f64,
        im: f64,
    }

    fn pair<T: Real>(z: Complex<T>) -> Pair {
        Pair {
            re: z.re.to_f64(),
            im: z.im.to_f64(),
        }
    }

    fn of<T: Real>(re: f64, im: f64) -> Complex<T> {
        Complex {
            re: T::from_f64(re),
            im: T::from_f64(im),
        }
    }

    /// `UnaryOp::ALL[op]` of `re + im i` in `T`; NaN parts for an opcode without a complex result
    /// (the code calls only those with one: lower/complex.rs).
    fn unary<T: Real>(op: i64, re: f64, im: f64) -> Pair {
        let op = usize::try_from(op)
            .ok()
            .and_then(|i| UnaryOp::ALL.get(i).copied());
        match op.map(|op| c::unary(op, of::<T>(re, im))) {
            Some(Out::Complex(z)) => pair(z),
            _ => Pair {
                re: f64::NAN,
                im: f64::NAN,
            },
        }
    }

    extern "C" fn unary_f64(op: i64, re: f64, im: f64) -> Pair {
        unary::<f64>(op, re, im)
    }

    extern "C" fn unary_f32(op: i64, re: f64, im: f64) -> Pair {
        unary::<f32>(op, re, im)
    }

    extern "C" fn pow_f64(ar: f64, ai: f64, br: f64, bi: f64) -> Pair {
        pair(c::pow(of::<f64>(ar, ai), of::<f64>(br, bi)))
    }

    extern "C" fn pow_f32(ar: f64, ai: f64, br: f64, bi: f64) -> Pair {
        pair(c::pow(of::<f32>(ar, ai), of::<f32>(br, bi)))
    }

    pub fn unary_address(parts: ElemType) -> *const u8 {
        match parts {
            ElemType::F64 => unary_f64 as *const u8,
            ElemType::F32 => unary_f32 as *const u8,
            _ => unreachable!("only float types (f32, f64) reach here"),
        }
    }

    pub fn pow_address(parts: ElemType) -> *const u8 {
        match parts {
            ElemType::F64 => pow_f64 as *const u8,
            ElemType::F32 => pow_f32 as *const u8,
            _ => unreachable!("only float types (f32, f64) reach here"),
        }
    }
}

/// The host functions one kernel calls, imported into its function, and whether its vector math is
/// inline or per-lane libm calls.
pub struct MathRefs {
    refs: HashMap<(MathFn, ElemType), FuncRef>,
    /// The block functions of the wide routines the kernel calls, `fn(ptr, n)`, or `fn(ptr, ptr, n)`
    /// for a function of two arguments (see `skeleton/block.rs`), by the routine.
    wide: HashMap<String, FuncRef>,
    /// The block function of sin and cos of one argument, `fn(ptr, ptr, n)`, where `wide` holds
    /// both sin and cos.
    sincos: Option<FuncRef>,
    /// The kept sum's, min's and max's row steps at full width (see `wide/rows.rs` and
    /// skeleton.rs; a typed kernel's, and its `any`'s and `all`'s, `wide/int_rows.rs`): each its
    /// group step (a sum's band of rows, the others' adjacent rows),
    /// `fn(r0, ..., r7, out, n)`, and its single-row step, `fn(x, out, n)`, where
    /// [`MathRefs::import_kept_rows`] imported them (index: [`kept_index`]).
    kept: [Option<[FuncRef; 2]>; 5],
    /// The trailing min and max of a run (`wide/extremes.rs`): a row's, for skeleton.rs
    /// `wide_folds` where each segment is one row, else a segment's of several rows, where
    /// [`MathRefs::import_extreme`] imported them (index: max).
    extremes: [Option<FuncRef>; 2],
    /// The argmax or argmin of a row (`wide/args.rs`), and the type of the value it
    /// writes.
    arg: Option<(FuncRef, Type)>,
    /// The trailing sum of a row of f32 values and of the products of two rows (`wide/sums.rs`,
    /// skeleton.rs `wide_folds`), where [`MathRefs::import_sum`] imported them (index: products).
    sums: [Option<FuncRef>; 2],
    /// The trailing sum of a row of a typed kernel's int64, int32 or bool values
    /// (`wide/int_sums.rs`, skeleton.rs `wide_folds`), where [`MathRefs::import_int_sum`]
    /// imported it.
    int_sum: Option<FuncRef>,
    /// The moments of a row (`wide/moments.rs`, skeleton.rs `segment`), where
    /// [`MathRefs::import_moments`] imported it.
    moments: Option<FuncRef>,
    /// The byte-string comparison (`call::bytes_op`), where [`MathRefs::import_bytes`] imported it.
    bytes: Option<FuncRef>,
    /// Whether vector math is inline (the policy's choice, [`crate::math::inline_vector_math`]).
    pub inline: bool,
    /// The complex host functions (unary, pow) per parts' type, where
    /// [`MathRefs::import_complex`] imported them.
    complex: HashMap<(&'static str, ElemType), FuncRef>,
}

impl MathRefs {
    /// Declares in `module` and imports into `func` every function in `used`, for `dtype` and (for the
    /// slow paths of the vector code) f64, and the block function of every routine in `wide`.
    pub fn import<M: Module>(
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
        dtype: ElemType,
        used: &[MathFn],
        inline: bool,
        wide: &[(String, usize)],
        sincos: bool,
    ) -> crate::Result<MathRefs> {
        let mut refs = HashMap::new();
        for &f in used {
            for dt in [dtype, ElemType::F64] {
                if refs.contains_key(&(f, dt)) {
                    continue;
                }
                let ty = scalar_type(dt);
                let mut sig = Signature::new(module.isa().default_call_conv());
                for _ in 0..f.arity() {
                    sig.params.push(AbiParam::new(ty));
                }
                sig.returns.push(AbiParam::new(ty));
                let id = module.declare_function(&f.symbol(dt), Linkage::Import, &sig)?;
                refs.insert((f, dt), module.declare_func_in_func(id, func));
            }
        }
        let mut wide_refs = HashMap::new();
        for (symbol, args) in wide {
            // the slot, its argument's source (or 0), the second argument's slot or source (two
            // arguments), then the count
            let mut sig = Signature::new(module.isa().default_call_conv());
            sig.params.extend(vec![AbiParam::new(types::I64); args + 2]);
            let id = module.declare_function(symbol, Linkage::Import, &sig)?;
            wide_refs.insert(symbol.clone(), module.declare_func_in_func(id, func));
        }
        let sincos = if sincos {
            let mut sig = Signature::new(module.isa().default_call_conv());
            // the sin slot, the cos slot, the source (or 0), the count
            sig.params.extend([AbiParam::new(types::I64); 4]);
            let id = module.declare_function(&sincos_symbol(dtype), Linkage::Import, &sig)?;
            Some(module.declare_func_in_func(id, func))
        } else {
            None
        };
        Ok(MathRefs {
            refs,
            wide: wide_refs,
            sincos,
            kept: [None; 5],
            extremes: [None; 2],
            arg: None,
            sums: [None; 2],
            int_sum: None,
            moments: None,
            bytes: None,
            inline,
            complex: HashMap::new(),
        })
    }

    /// Declares in `module` and imports into `func` what complex values call: the complex host
    /// functions (`unary(op, re, im)` and `pow(ar, ai, br, bi)`, two float64 results) and the float
    /// functions complex ones are computed from (`hypot`, a complex number's magnitude; `exp`, `cos`
    /// and `sin`, its exponential: lower/complex.rs), for both parts' types.
    pub fn import_complex<M: Module>(
        &mut self,
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
    ) -> crate::Result<()> {
        for parts in [ElemType::F64, ElemType::F32] {
            for (what, ints, floats) in [("unary", 1, 2), ("pow", 0, 4)] {
                let mut sig = Signature::new(module.isa().default_call_conv());
                sig.params.extend(vec![AbiParam::new(types::I64); ints]);
                sig.params.extend(vec![AbiParam::new(types::F64); floats]);
                sig.returns.extend([AbiParam::new(types::F64); 2]);
                let id = module.declare_function(&complex_symbol(what, parts), Linkage::Import, &sig)?;
                self.complex
                    .insert((what, parts), module.declare_func_in_func(id, func));
            }
            for f in [MathFn::Hypot, MathFn::Exp, MathFn::Cos, MathFn::Sin] {
                if let std::collections::hash_map::Entry::Vacant(e) = self.refs.entry((f, parts)) {
                    let ty = scalar_type(parts);
                    let mut sig = Signature::new(module.isa().default_call_conv());
                    sig.params.extend(vec![AbiParam::new(ty); f.arity()]);
                    sig.returns.push(AbiParam::new(ty));
                    let id = module.declare_function(&f.symbol(parts), Linkage::Import, &sig)?;
                    e.insert(module.declare_func_in_func(id, func));
                }
            }
        }
        Ok(())
    }

    /// The complex host function `what` ("unary" or "pow") of complex values of `parts` parts
    /// (imported by [`MathRefs::import_complex`]).
    pub fn complex(&self, what: &'static str, parts: ElemType) -> FuncRef {
        self.complex[&(what, parts)]
    }

    /// Declares in `module` and imports into `func` the byte strings' comparison,
    /// `fn(op, a, width_a, b, width_b) -> i8` ([`crate::bytes::SYMBOL`]).
    pub fn import_bytes<M: Module>(
        &mut self,
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
    ) -> crate::Result<()> {
        self.bytes = Some(import_i64s(
            module,
            func,
            crate::bytes::SYMBOL,
            5,
            Some(types::I8),
        )?);
        Ok(())
    }

    /// The byte strings' comparison, if the kernel imported it.
    pub fn bytes(&self) -> Option<FuncRef> {
        self.bytes
    }

    /// Declares in `module` and imports into `func` the kept reduction `op`'s row steps on `dtype`
    /// (registered by compile.rs where the host has a wide level): its group of `group_rows` rows
    /// (wide/rows.rs) and single row, `fn(rows.., out, n)`, of a sum, a max or a min (of a kept
    /// reduction, or a component of kept sibling reductions); of a typed kernel's int64, int32 or
    /// bool values (`dtype`), also of an `any` or `all`, into int64 words (wide/int_rows.rs); once
    /// per `op`.
    pub fn import_kept_rows<M: Module>(
        &mut self,
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
        op: ReduceOp,
        dtype: ElemType,
        group_rows: usize,
    ) -> crate::Result<()> {
        let Some(k) = kept_index(op).filter(|&k| self.kept[k].is_none()) else {
            return Ok(());
        };
        let float = dtype.is_float();
        if float && !matches!(op, ReduceOp::Sum | ReduceOp::Max | ReduceOp::Min) {
            // (a float kernel's kept `any` or `all` has no row step: its inline loop)
            return Ok(());
        }
        let symbol = |group: bool| match op {
            _ if !float => kept_int_symbol(op, group, dtype),
            ReduceOp::Sum => kept_rows_symbol(group, dtype),
            _ => kept_extreme_symbol(op == ReduceOp::Max, group, dtype),
        };
        let group = import_i64s(module, func, &symbol(true), group_rows + 2, None)?;
        let single = import_i64s(module, func, &symbol(false), 3, None)?;
        self.kept[k] = Some([group, single]);
        Ok(())
    }

    /// Declares in `module` and imports into `func` the trailing max (`max`) or min of a run of
    /// `dtype` values (f64, f32, i64, i32, bool), a row's (`row`) or an argument's block's, `fn(x, n) ->
    /// value` ([`held_type`]; registered by compile.rs where the host has a wide level).
    pub fn import_extreme<M: Module>(
        &mut self,
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
        max: bool,
        dtype: ElemType,
        row: bool,
    ) -> crate::Result<()> {
        let value = held_type(dtype);
        let symbol = extreme_symbol(max, dtype, row);
        self.extremes[usize::from(max)] = Some(import_i64s(module, func, &symbol, 2, Some(value))?);
        Ok(())
    }

    /// Declares in `module` and imports into `func` the argmax (`max`) or argmin of a row of
    /// `dtype` values (f64, f32, i64, i32, bool), `fn(x, n, at) -> index`, the point's value
    /// written to `at` ([`held_type`]; registered by compile.rs where the host has a wide level).
    pub fn import_arg<M: Module>(
        &mut self,
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
        max: bool,
        dtype: ElemType,
    ) -> crate::Result<()> {
        self.arg = Some((
            import_i64s(module, func, &arg_symbol(max, dtype), 3, Some(types::I64))?,
            held_type(dtype),
        ));
        Ok(())
    }

    /// The argmax or argmin of a row, if the kernel imported it, and the type of the value it
    /// writes.
    pub fn arg(&self) -> Option<(FuncRef, Type)> {
        self.arg
    }

    /// Declares in `module` and imports into `func` the trailing sum of a row of `dtype` values
    /// (f32, f64; `dot` false) or of the products of two rows, `fn(x, y, n, parts) -> i8`
    /// (registered by compile.rs where the host has a wide level).
    pub fn import_sum<M: Module>(
        &mut self,
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
        dot: bool,
        dtype: ElemType,
    ) -> crate::Result<()> {
        let symbol = sum_symbol(dot, dtype);
        self.sums[usize::from(dot)] = Some(import_i64s(module, func, &symbol, 4, Some(types::I8))?);
        Ok(())
    }

    /// Declares in `module` and imports into `func` the trailing sum of a row of `dtype` values
    /// (i64, i32, bool) into a wrapping int64 partial, `fn(x, n) -> i64` (registered by compile.rs
    /// where the host has a wide level).
    pub fn import_int_sum<M: Module>(
        &mut self,
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
        dtype: ElemType,
    ) -> crate::Result<()> {
        let symbol = sum_symbol(false, dtype);
        self.int_sum = Some(import_i64s(module, func, &symbol, 2, Some(types::I64))?);
        Ok(())
    }

    /// Declares in `module` and imports into `func` the moments of a row of `dtype` values,
    /// `fn(x, n, state) -> i8` (registered by compile.rs where the host has a wide level).
    pub fn import_moments<M: Module>(
        &mut self,
        module: &mut M,
        func: &mut cranelift_codegen::ir::Function,
        dtype: ElemType,
    ) -> crate::Result<()> {
        let symbol = moments_symbol(dtype);
        self.moments = Some(import_i64s(module, func, &symbol, 3, Some(types::I8))?);
        Ok(())
    }

    /// The moments of a row, if the kernel imported it.
    pub fn moments(&self) -> Option<FuncRef> {
        self.moments
    }

    /// The trailing sum of a row (`dot`: of the products of two), if the kernel imported it.
    pub fn sum(&self, dot: bool) -> Option<FuncRef> {
        self.sums[usize::from(dot)]
    }

    /// The trailing int64 sum of a row of integer or bool values, if the kernel imported it.
    pub fn int_sum(&self) -> Option<FuncRef> {
        self.int_sum
    }

    /// The trailing max (`max`) or min of a run, if the kernel imported it.
    pub fn extreme(&self, max: bool) -> Option<FuncRef> {
        self.extremes[usize::from(max)]
    }

    /// The kept reduction `op`'s group step and single-row step, if the kernel imported them.
    pub fn kept_rows(&self, op: ReduceOp) -> Option<[FuncRef; 2]> {
        self.kept[kept_index(op)?]
    }

    /// The block function of the wide routine of this symbol (`wide::WideFn::symbol`), if the
    /// kernel imported it.
    pub fn wide(&self, symbol: &str) -> Option<FuncRef> {
        self.wide.get(symbol).copied()
    }

    /// The block function of sin and cos of one argument, if the kernel imported it.
    pub fn wide_sincos(&self) -> Option<FuncRef> {
        self.sincos
    }

    /// The host function `f` for `dtype` (imported by [`MathRefs::import`]).
    pub fn host(&self, f: MathFn, dtype: ElemType) -> FuncRef {
        self.refs[&(f, dtype)]
    }
}

fn scalar_type(dtype: ElemType) -> Type {
    match dtype {
        ElemType::F64 => types::F64,
        ElemType::F32 => types::F32,
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}
