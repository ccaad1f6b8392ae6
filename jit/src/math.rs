//! How transcendentals are lowered: the one place that decides it.
//!
//! - exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, tanh, sinh, cosh, arcsin, arccos,
//!   arctan, arctan2, arcsinh, arccosh, arctanh, erf, erfc, pow, cbrt and hypot are computed
//!   in vector registers by the IR polynomials of [`crate::vmath`] on F64X2: f64 vectors directly, a scalar
//!   splatted into a vector (so a kernel's scalar tail gives the same bits as its vector body); f32
//!   exp, exp2, expm1, log, log2, log10, log1p, sin, cos, tan, tanh, sinh, cosh, cbrt, arcsin, arccos,
//!   arctan, arctan2, arcsinh, arccosh and arctanh natively on F32X4, the other f32 functions
//!   widened to f64 (two F64X2 per F32X4) with
//!   the result rounded once to f32 (pow by an f32 algorithm in f64, `vmath::pow::pow_f32`), which keeps them within a rounding of the correctly rounded value. Each differs from the interpreter's libm by
//!   at most [`ulp_bound`] ULP.
//! - pow by a literal exponent with its own code (`x**1.5`, `x**3`, `x**4`, `x**-0.5`, `x**-2`:
//!   `vmath::pow_const`, decided here from the exponent's constant when the kernel is compiled) is
//!   a square root, products or a quotient and their exact residuals, within pow's bound: inline,
//!   and on blocks by its own wide routine of one argument (`wide/pow_const.rs`, the same bits).
//! - Every other libm function (fmod, NumPy's remainder and
//!   floor_divide, nextafter, logaddexp and logaddexp2) is a call, one lane at a time, of the very function
//!   the interpreter uses (`UnaryOp::eval` / `BinaryOp::eval` wrapped in `extern "C"` host symbols
//!   registered with each JIT module), so those are bit-exact against it. The vector code's own slow
//!   paths (sin, cos, tan of huge arguments) call the same f64 host symbols.

use crate::host::{MathFn, MathRefs};
use crate::vmath;
use crate::vmath::pow_const::ConstExp;
use cranelift_codegen::ir::{InstBuilder, Value, types};
use cranelift_frontend::FunctionBuilder;
use kiln_ir::{BinaryOp, ElemType, UnaryOp};

/// The documented maximum distance, in ULP, of the JIT's result from the interpreter's (libm's) for
/// the opcode `op` computes, or `None` when the JIT calls the interpreter's own function (bit-exact).
/// Measured maxima are at most these (see each `vmath` file); the parity suites allow one more.
fn ulp_bound(f: MathFn) -> Option<u32> {
    vmath::has_vector(f).then_some(match f {
        MathFn::Tanh => 2,
        // expm1: the reduction's `2^k·s + (2^k - 1)` near |x| = 0.35 (`vmath::exp`); sinh: exp's
        // error and the last rounding of `e/2 - (1/2)/e`; cosh: libm's own error beside kiln's
        // (`2^(k-1)·e^r + 2^(-k-1)·e^-r`, within 1.13 ULP of the true value; `vmath::hyperbolic`;
        // 1 against libm over the log-uniform sweep, 2 in [-710, 710]). The same in
        // f32 (native, `vmath::f32x4`, tanh `vmath::tanh32`): 2 against libm for each of tanh,
        // expm1, sinh and cosh, and against the correctly rounded value 2 for expm1 and sinh, 1 for
        // tanh and cosh; exp2 and tan (the `_` arm) 1 against both
        MathFn::Expm1 | MathFn::Sinh | MathFn::Cosh => 2,
        // libm's (fdlibm's) erfc is itself up to about 2.6 ULP from the correctly rounded value in
        // its tail (mpmath, 200 bits); the vector erfc's own error measured there is below 0.7 ULP
        MathFn::Erfc => 3,
        // below 0.6 ULP from the correctly rounded value (cbrt.rs, hypot.rs); glibc's own error
        // makes the distance from libm up to 1
        MathFn::Cbrt | MathFn::Hypot => 1,
        // measured against libm over a million points each (jit/tests/accuracy.rs): max 1 ULP for
        // arcsinh f64, 2 for arccosh and arctanh f64; f32 (native, `vmath::arc_hyp` on
        // `vmath::f32x4`'s log1p) over every bit pattern: at most 2 from std's f64 functions
        // rounded, as libm's asinhf, acoshf and atanhf are
        MathFn::Arcsinh | MathFn::Arccosh | MathFn::Arctanh => 2,
        // log10: glibc's f64 log10 is itself up to 2 ULP from the correctly rounded value (its
        // manual; 10 of 20 million log-uniform points in [1e-300, 1e300] are 1.4 to 1.6 ULP off, by
        // mpmath, where kiln's table-driven log10, `vmath::log`, is within 0.508 ULP), so kiln and libm differ by 2 there
        // (`kiln bench --functions` read it WRONG at N = 1e6); f32 over every bit pattern 1 from
        // std's f64 log10 rounded (`examples/ulp32.rs`)
        MathFn::Log10 => 2,
        // log, log2 and log1p: 1 in both types (f64 `vmath::log`, table-driven: log, log2 and log10
        // within 0.524 ULP of the correctly rounded value over 48,000 log-uniform, near-1 and
        // subnormal points by mpmath, log1p within 0.66; f32 native, `vmath::f32x4`, over every
        // bit pattern: at most 1 from std's f64 functions rounded, `examples/ulp32.rs`); arcsin and arccos (the direct method,
        // `vmath::asin`): 1 in both types against libm over a million points in [-1, 1] and
        // log-uniform, and 1 against the correctly rounded value (tests/math_accuracy.rs); arctan
        // and arctan2 1 against both; pow (ARM's table-driven pow on 16-row tables in f64, within
        // 0.53 of the correctly rounded value; log2 and exp2 in f64 by 16-row tables for f32,
        // `vmath::pow`): 1 in both types against libm (jit/tests/accuracy.rs,
        // a million points per sweep) and against the correctly rounded value
        // (tests/data/ulp/power.csv: f64 1, f32 0; f32 over 3.7 million points,
        // `pow_f32_correctly_rounded`: 1, 169 of them off by one)
        _ => 1,
    })
}

/// The ULP bound of a unary opcode's compiled math against the interpreter (`math::ulp_bound`, the
/// table the accuracy tests check); 0 where the JIT is bit-exact.
pub fn unary_ulp_bound(op: UnaryOp) -> u32 {
    MathFn::of_unary(op).and_then(ulp_bound).unwrap_or(0)
}

/// The ULP bound of a binary opcode's compiled math against the interpreter (`math::ulp_bound`); 0
/// where the JIT is bit-exact.
pub fn binary_ulp_bound(op: BinaryOp) -> u32 {
    MathFn::of_binary(op).and_then(ulp_bound).unwrap_or(0)
}

/// The bound of a complex function `op` compiled from the vector float math
/// (`lower/complex.rs`) against the interpreter's ([`kiln_ir::complex`], from libm's float
/// functions of the parts): each finite part within this many units in its own last place, or in
/// the last place of the result's modulus (a part much smaller than the modulus, `e^x cos y` near
/// a zero of `cos y`, is as accurate as the modulus, as NumPy's functions are); zero, infinite and
/// NaN parts are the interpreter's. 0 where the compiled function is the interpreter's own (and
/// wherever the kernel's math is calls, which computes the same formulas with libm's functions).
/// Measured over 400,000 points of each type (`|x|` to 700 and past the overflow thresholds, `|y|`
/// to 5e5):
/// - `exp`: the vector `exp`, `cos` and `sin` (1 ULP each from libm, [`unary_ulp_bound`]) and the
///   products' roundings: at most 1.8 units (complex128) and 2.0 (complex64); bound 3.
/// - `sqrt`: the vector `hypot` (1 ULP), every other operation exact IEEE arithmetic: at most 1
///   unit; bound 2.
pub fn complex_ulp_bound(op: UnaryOp) -> u32 {
    match op {
        UnaryOp::Exp => 3,
        UnaryOp::Sqrt => 2,
        _ => 0,
    }
}

/// The most vector-math nodes a kernel inlines (see `inline_vector_math`).
pub const MAX_INLINE_MATH: usize = 24;

/// Whether a kernel whose body is `order` gets its vector math inline: at most
/// [`MAX_INLINE_MATH`] nodes with a vector implementation. Each such node is emitted once per
/// unrolled vector, remainder and tail, and register allocation grows faster than linearly with
/// the function: 200 inlined `tanh(exp(..))` took 16 s to compile. A larger kernel calls libm per
/// lane for all its math (never a mix, so a point's bits do not depend on where the loop's tail
/// falls, and so on the thread count).
pub fn inline_vector_math(arena: &kiln_ir::ExprArena, order: &[kiln_ir::NodeId]) -> bool {
    order
        .iter()
        .filter(|&&id| MathFn::of_node(arena, id).is_some_and(vmath::has_vector))
        .count()
        <= MAX_INLINE_MATH
}

/// The wide routines a kernel of `dtype` calls on blocks (`skeleton/block.rs`): those of its exp,
/// log, sin, cos, tan and the other nodes with a wide routine (`wide::WideFn::of_node`: pow by a
/// literal exponent with its own code, `x**1.5`, as a routine of one argument) that pay on this
/// host (`wide::routed`), where its vector
/// math is inline (`inline`), its schedule asks for them (normalised: and the host has them), and
/// its mode runs rows in blocks (`blocked`: a map or a reduction of rows or of every axis; kept and
/// compound reductions and scans keep the inline path); none otherwise.
pub fn wide_routines(
    arena: &kiln_ir::ExprArena,
    order: &[kiln_ir::NodeId],
    blocked: bool,
    schedule: crate::Schedule,
    inline: bool,
    dtype: ElemType,
) -> Vec<crate::wide::WideFn> {
    if !(inline && schedule.wide && blocked) {
        return Vec::new();
    }
    let mut rs = Vec::new();
    for &id in order {
        let f = crate::wide::WideFn::of_node(arena, id, dtype);
        rs.extend(f.filter(|&f| !rs.contains(&f) && crate::wide::routed(f, dtype)));
    }
    rs
}

/// Whether a kernel runs its kept reductions' row steps at full width (`wide/rows.rs`,
/// skeleton.rs "Kept sums, several reduced rows per pass"): a kept sum, max or min, or kept
/// sibling reductions of those (`ops`, of `roots`), each a plain read of an input
/// (`sum(x, axis=0)`, `max(m, axis=0) - min(m, axis=0)`), of a float kernel or of a typed
/// kernel's int64, int32 or bool `values` (`wide/int_rows.rs`; whose `any` and `all` too),
/// where the schedule asks for the wide routines (normalised: and the host has them). A computed
/// body keeps the inline path.
pub fn wide_kept_rows(
    arena: &kiln_ir::ExprArena,
    roots: &[kiln_ir::NodeId],
    ops: &[kiln_ir::ReduceOp],
    schedule: crate::Schedule,
    values: kiln_ir::ElemType,
) -> bool {
    use kiln_ir::ReduceOp::{All, Any, Max, Min, Sum};
    let ints = !values.is_float();
    schedule.wide
        && !ops.is_empty()
        && ops.iter().zip(roots).all(|(op, &root)| {
            (matches!(op, Sum | Max | Min) || (ints && matches!(op, Any | All)))
                && matches!(arena.node(root), kiln_ir::Node::Input(_))
        })
}

/// Whether a compound moments kernel folds its long rows by one call at full width
/// (`wide/moments.rs`, skeleton.rs `segment`): its body a plain read of an input (`var(x)`,
/// `std(m, axis=1)`) of a float kernel of `dtype`, where its schedule asks for the wide routines
/// (normalised: and the host has them) and is the default one, whose partition the fold
/// reproduces: lanes of 128 bits, 4 accumulators, 8 vectors an iteration.
pub fn wide_moments(
    arena: &kiln_ir::ExprArena,
    body: kiln_ir::NodeId,
    schedule: crate::Schedule,
    dtype: kiln_ir::ElemType,
) -> bool {
    use kiln_ir::ElemType;
    let default_lanes = matches!((dtype, schedule.lanes), (ElemType::F64, 2) | (ElemType::F32, 4));
    schedule.wide
        && default_lanes
        && schedule.accumulators == 4
        && schedule.unroll == 8
        && matches!(arena.node(body), kiln_ir::Node::Input(_))
}

/// Whether a trailing `max` or `min` folds its long rows by one call at full width
/// (`wide/extremes.rs`, skeleton.rs `segment`), and an argmax or argmin finds a row's point by one
/// (`wide/args.rs`, skeleton.rs `arg_row`): its body a plain read of an input (`max(x)`,
/// `min(m, axis=1)`; the caller checks that it writes no further map outputs, which its own loop
/// stores as it reads), where its schedule asks for the wide routines (normalised: and the host has
/// them). A computed body keeps the inline path.
pub fn wide_extreme(arena: &kiln_ir::ExprArena, body: kiln_ir::NodeId, schedule: crate::Schedule) -> bool {
    schedule.wide && schedule.is_vector() && matches!(arena.node(body), kiln_ir::Node::Input(_))
}

/// The form of a sum's body that the fold at full width reads (`wide/sums.rs`): `Some(false)`
/// for a plain read of an input (`sum(x)`, `mean(m, axis=1)`), `Some(true)` for the product of
/// two (`sum(x*y)`, `sum(x*x)`), else None.
pub fn summed_body(arena: &kiln_ir::ExprArena, body: kiln_ir::NodeId) -> Option<bool> {
    use kiln_ir::{BinaryOp, Node};
    let input = |n: kiln_ir::NodeId| matches!(arena.node(n), Node::Input(_));
    match *arena.node(body) {
        Node::Input(_) => Some(false),
        Node::Binary(BinaryOp::Mul, a, b) if input(a) && input(b) => Some(true),
        _ => None,
    }
}

/// The fold at full width a reduction takes for its long rows (`wide/extremes.rs`,
/// `wide/sums.rs`): see [`fold_of`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fold {
    /// The max (`max`) or min of a plain read.
    Extreme {
        /// Max, else min.
        max: bool,
    },
    /// The sum of a plain read of float values, or (`dot`) of the product of two.
    Sum {
        /// The product of two plain reads.
        dot: bool,
    },
    /// The wrapping int64 sum of a plain read of a typed kernel's int64, int32 or bool values (a
    /// bool's count of truths).
    IntSum,
}

/// The fold at full width a trailing reduction `op` of `body` (alone, or a component of sibling
/// reductions) takes for its long rows, if any, where the schedule asks for the wide routines
/// (normalised: and the host has them):
/// - a max or min of a plain read ([`wide_extreme`]) of `values` (a float kernel's dtype, or a
///   typed kernel's int64, int32 or bool values), and an `any` or `all` of bools (their max and
///   min);
/// - a sum of f32 or f64 values of a float kernel whose body [`summed_body`] reads, where its own
///   `accumulators` (a sibling component's may be fewer than the schedule's) keep the partition
///   the fold reproduces: [`crate::wide::PARTS`] partials (4 accumulators of f32, 8 of f64: an
///   f64 sum of a plain read or a square over long rows), each vector `p` of the loops of at
///   least K vectors an iteration into accumulator `p % K`, and fewer than K after them
///   ([`leaves_fewer`]);
/// - a sum of a plain read of a typed kernel's int64, int32 or bool values, into int64: wrapping
///   addition is associative, so any partition gives the inline word.
///
/// The caller checks that the kernel writes no further map outputs. Other bodies keep the inline
/// path.
pub fn fold_of(
    op: kiln_ir::ReduceOp,
    arena: &kiln_ir::ExprArena,
    body: kiln_ir::NodeId,
    schedule: crate::Schedule,
    accumulators: u8,
    values: Option<kiln_ir::ElemType>,
) -> Option<Fold> {
    use kiln_ir::{ElemType, ReduceOp};
    match (op, values) {
        (
            ReduceOp::Max | ReduceOp::Min,
            Some(ElemType::F64 | ElemType::F32 | ElemType::I64 | ElemType::I32 | ElemType::Bool),
        ) if wide_extreme(arena, body, schedule) => Some(Fold::Extreme {
            max: op == ReduceOp::Max,
        }),
        // a bool's `any` is its max, its `all` its min (wide/extremes.rs `Truth`)
        (ReduceOp::Any | ReduceOp::All, Some(ElemType::Bool)) if wide_extreme(arena, body, schedule) => {
            Some(Fold::Extreme {
                max: op == ReduceOp::Any,
            })
        }
        (ReduceOp::Sum, Some(ElemType::I64 | ElemType::I32 | ElemType::Bool))
            if wide_extreme(arena, body, schedule) =>
        {
            Some(Fold::IntSum)
        }
        (ReduceOp::Sum, Some(t @ (ElemType::F32 | ElemType::F64)))
            if schedule.wide
                && usize::from(schedule.lanes) == 16 / t.size()
                && accumulators == crate::wide::sum_accumulators(schedule.lanes)
                && leaves_fewer(schedule, accumulators) =>
        {
            summed_body(arena, body).map(|dot| Fold::Sum { dot })
        }
        _ => None,
    }
}

/// Whether a reduction of `k` vector accumulators under `schedule` takes vector `p` of each of
/// its loops of at least `k` vectors an iteration into accumulator `p % k`, and fewer than `k`
/// vectors after them into its first (skeleton.rs `Acc`): every such loop is a multiple of `k`
/// (the main loop, of the unroll or the most accumulators a component keeps, and the loop of each
/// component that keeps more than `k` but fewer than the most), and the last of them is of `k`
/// (the main loop, or the component's own, where another keeps more: `sum(x)` of f32 beside
/// `max(x)`). A main loop of more vectors than every component keeps (`Schedule::simd(t, 16,
/// 8)`) leaves up to 15 vectors, all into the first accumulator, which the folds at full width
/// do not reproduce.
fn leaves_fewer(schedule: crate::Schedule, k: u8) -> bool {
    let most = schedule.accumulators;
    let per_iter = schedule.unroll.max(most);
    let mut loops = (0..crate::schedule::COMPONENTS)
        .map(|c| schedule.component_accumulators(c))
        .filter(|&m| m > k && m < most)
        .chain([per_iter]);
    loops.all(|m| m.is_multiple_of(k)) && (per_iter == k || k < most)
}

/// The values a kernel's folds at full width read ([`fold_of`]): a float kernel's (its dtype), a
/// typed kernel's int64, int32 or bool values, or none (a typed kernel's other values).
pub fn fold_values(
    value_type: Option<kiln_ir::ElemType>,
    dtype: kiln_ir::ElemType,
) -> Option<kiln_ir::ElemType> {
    match value_type {
        None => Some(dtype),
        Some(t @ (kiln_ir::ElemType::I64 | kiln_ir::ElemType::I32 | kiln_ir::ElemType::Bool)) => Some(t),
        Some(_) => None,
    }
}

/// Emits `f(args)` for a scalar or a vector of the kernel's dtype (all arguments of one type).
pub fn lower(b: &mut FunctionBuilder<'_>, refs: &MathRefs, f: MathFn, args: &[Value]) -> Value {
    let ty = b.func.dfg.value_type(args[0]);
    if refs.inline && f == MathFn::Pow {
        let e = vmath::pow_const::constant(b, args[1]).and_then(vmath::pow_const::ConstExp::of);
        if let Some(e) = e {
            return lower_pow_const(b, refs, args[0], e);
        }
    }
    if refs.inline && vmath::has_vector(f) {
        return match ty {
            types::F64X2 => vmath::emit(b, refs, f, args),
            types::F32X4 if vmath::has_f32(f) => vmath::emit_f32(b, refs, f, args),
            types::F32 if vmath::has_f32(f) => {
                let xs: Vec<Value> = args.iter().map(|&a| b.ins().splat(types::F32X4, a)).collect();
                let r = vmath::emit_f32(b, refs, f, &xs);
                b.ins().extractlane(r, 0)
            }
            types::F64 => {
                let xs: Vec<Value> = args.iter().map(|&a| b.ins().splat(types::F64X2, a)).collect();
                let r = vmath::emit(b, refs, f, &xs);
                b.ins().extractlane(r, 0)
            }
            types::F32 => {
                let xs: Vec<Value> = args
                    .iter()
                    .map(|&a| {
                        let d = b.ins().fpromote(types::F64, a);
                        b.ins().splat(types::F64X2, d)
                    })
                    .collect();
                let r = vmath::emit_widened(b, refs, f, &xs);
                let r = b.ins().extractlane(r, 0);
                b.ins().fdemote(types::F32, r)
            }
            types::F32X4 => {
                let lo: Vec<Value> = args.iter().map(|&a| b.ins().fvpromote_low(a)).collect();
                let hi: Vec<Value> = args
                    .iter()
                    .map(|&a| {
                        let h = vmath::high_half(b, a);
                        b.ins().fvpromote_low(h)
                    })
                    .collect();
                let r_lo = vmath::emit_widened(b, refs, f, &lo);
                let r_hi = vmath::emit_widened(b, refs, f, &hi);
                vmath::join_halves(b, r_lo, r_hi)
            }
            _ => unreachable!("math on {ty}"),
        };
    }
    let dtype = if ty.lane_type() == types::F64 {
        ElemType::F64
    } else {
        ElemType::F32
    };
    let fref = refs.host(f, dtype);
    let call = |b: &mut FunctionBuilder<'_>, xs: &[Value]| {
        let inst = b.ins().call(fref, xs);
        b.inst_results(inst)[0]
    };
    if !ty.is_vector() {
        return call(b, args);
    }
    let mut out = args[0];
    for lane in 0..ty.lane_count() as u8 {
        let xs: Vec<Value> = args.iter().map(|&a| b.ins().extractlane(a, lane)).collect();
        let r = call(b, &xs);
        out = b.ins().insertlane(out, r, lane);
    }
    out
}

/// `(erfc(x), erfc(-x))` for an f64 scalar or F64X2 `x`: one evaluation of what the two share where
/// the vector math is inline (the same bits as two [`lower`]s, see `vmath::erf::erfc_pair`), else
/// two calls.
pub fn lower_erfc_pair(b: &mut FunctionBuilder<'_>, refs: &MathRefs, x: Value) -> (Value, Value) {
    let ty = b.func.dfg.value_type(x);
    if !(refs.inline && (ty == types::F64X2 || ty == types::F64)) {
        let nx = b.ins().fneg(x);
        let r = lower(b, refs, MathFn::Erfc, &[x]);
        return (r, lower(b, refs, MathFn::Erfc, &[nx]));
    }
    if ty == types::F64 {
        let xs = b.ins().splat(types::F64X2, x);
        let (r, nr) = vmath::emit_erfc_pair(b, refs, xs);
        return (b.ins().extractlane(r, 0), b.ins().extractlane(nr, 0));
    }
    vmath::emit_erfc_pair(b, refs, x)
}

/// `x**e` for a literal exponent with its own code (`vmath::pow_const`): f64 on F64X2, f32 on F32X4
/// (`pow_const_f32`); a scalar through lane 0.
fn lower_pow_const(b: &mut FunctionBuilder<'_>, refs: &MathRefs, x: Value, e: ConstExp) -> Value {
    let ty = b.func.dfg.value_type(x);
    match ty {
        types::F64X2 => vmath::emit_pow_const(b, refs, x, e),
        types::F64 => {
            let xs = b.ins().splat(types::F64X2, x);
            let r = vmath::emit_pow_const(b, refs, xs, e);
            b.ins().extractlane(r, 0)
        }
        types::F32 => {
            let xs = b.ins().splat(types::F32X4, x);
            let r = vmath::emit_pow_const_f32(b, refs, xs, e);
            b.ins().extractlane(r, 0)
        }
        types::F32X4 => vmath::emit_pow_const_f32(b, refs, x, e),
        _ => unreachable!("math on {ty}"),
    }
}
