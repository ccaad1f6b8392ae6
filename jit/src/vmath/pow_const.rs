//! pow by a literal exponent, decided when the kernel is compiled: `x**1.5` and `x**3` (the
//! exponents NumPy's own fast paths leave to `pow`; `x**2`, `x**-1`, `x**0.5`, `x**1` and `x**0`
//! are rewritten before, by `kiln_ir::passes::strength`).
//!
//! f64: each is a few correctly rounded operations and their exact residuals, summed so that the
//! result rounds once from a value within about 2^-100 (relative) of the true power: at most 0.5
//! ULP plus that from the correctly rounded value, where the general pow (`pow.rs`) states 0.52, so
//! within pow's bound of 1 ULP from libm. No table, no polynomial, no branch.
//!
//! - `x**1.5` ([`three_halves`]): `s = sqrt(x)` (correctly rounded), `x - s²` exact by one `fma`
//!   (the remainder of a correctly rounded square root is representable), and `sqrt(x) = s + (x -
//!   s²)/(2s) + O(2^-106·s)`; so `x·sqrt(x) = hi + lo + (s/2)·(x - s²)` with `hi = x·s`, `lo` its
//!   exact residual (`fma`), the last two terms summed by one `fma` (`x/(2s) = s/2` to 2^-52, on a
//!   term below 2^-53 of the result). Special values: a negative base (`sqrt` gives the invalid
//!   NaN), `-0` (`+0`), `+inf` and an overflowing result (`hi` is `+inf`, the residual NaN: `hi`
//!   is selected), `-inf` (`+inf`, selected).
//! - `x**3` ([`cube`]): `x² = x2 + x2l` exactly (`fma`), `x³ = x2·x + x2l·x = h + l + x2l·x`
//!   with `l` the exact residual of `h = x2·x`; `h + fma(x2l, x, l)`. Where `h` is zero, infinite
//!   or NaN (`±0`, `±inf`, overflow, underflow to zero, NaN) the result is `h`, which has pow's
//!   sign (`pow(-0, 3) = -0`).
//!
//! Where the residual `lo` (or `l`) falls into the subnormals (results below about 2^-1000) it is
//! no longer exact, and the result is within 1 ULP of the correctly rounded one. f32
//! ([`pow_const_widened`]) is computed on the widened values and rounded once: `x·sqrt(x)` and
//! `(x·x)·x` in f64 are within 1.5 and 1 f64 ULP of the true power (`x·x` exact), far inside an
//! f32 rounding, so the f32 result is the correctly rounded one but for double roundings within
//! 2^-28 f32 ULP of a midpoint, in the subnormals too (native f32 residuals were inexact below
//! 2^-100: 2,019 of a million log-uniform points off by one). A scalar goes through lane 0 of a
//! vector. A kernel computes it inline on every route (`math::wide_routines` keeps such a kernel's
//! pow off the wide routines), so its bits do not depend on the route. `jit/tests/accuracy.rs`
//! (`pow_literal_exponents`) holds both types against libm and f32 against the correctly rounded
//! value, NumPy's special values, and the bits of each route.

use super::Vb;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{InstructionData, Opcode, Value, ValueDef};
use cranelift_frontend::FunctionBuilder;

/// An exponent with its own code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConstExp {
    /// `x**1.5`.
    ThreeHalves,
    /// `x**3`.
    Cube,
}

impl ConstExp {
    /// Every exponent with its own code, and its value (each exact in f32).
    pub(crate) const ALL: [(f64, ConstExp); 2] = [(1.5, ConstExp::ThreeHalves), (3.0, ConstExp::Cube)];

    /// The exponent `e` has its own code.
    pub(crate) fn of(e: f64) -> Option<ConstExp> {
        ConstExp::ALL.iter().find(|(v, _)| *v == e).map(|&(_, c)| c)
    }

    /// Whether a literal of value `e` (as the IR holds it, in f64) may be compiled to its own code
    /// in a kernel of either dtype: `e` itself or its rounding to f32 is one of [`ConstExp::ALL`].
    pub(crate) fn may_be(e: f64) -> bool {
        ConstExp::of(e).is_some() || ConstExp::of(e as f32 as f64).is_some()
    }
}

/// The value of `v` where it is a constant the kernel materialised (an `f64const` or `f32const`,
/// or a splat of one, as `lower.rs` emits a literal held in registers), else None.
pub(crate) fn constant(b: &FunctionBuilder<'_>, v: Value) -> Option<f64> {
    let dfg = &b.func.dfg;
    let ValueDef::Result(inst, _) = dfg.value_def(v) else {
        return None;
    };
    match dfg.insts[inst] {
        InstructionData::Unary {
            opcode: Opcode::Splat,
            arg,
        } => constant(b, arg),
        InstructionData::UnaryIeee64 {
            opcode: Opcode::F64const,
            imm,
        } => Some(f64::from_bits(imm.bits())),
        InstructionData::UnaryIeee32 {
            opcode: Opcode::F32const,
            imm,
        } => Some(f32::from_bits(imm.bits()) as f64),
        _ => None,
    }
}

/// `x**e` on a vector of the builder's type.
pub(crate) fn pow_const(v: &mut Vb<'_, '_>, x: Value, e: ConstExp) -> Value {
    match e {
        ConstExp::ThreeHalves => three_halves(v, x),
        ConstExp::Cube => cube(v, x),
    }
}

/// `x**e` of f32 values widened to f64, for a result rounded once to f32 (see the module docs).
pub(crate) fn pow_const_widened(v: &mut Vb<'_, '_>, x: Value, e: ConstExp) -> Value {
    match e {
        ConstExp::ThreeHalves => {
            let s = v.sqrt(x);
            let r = v.mul(x, s);
            let ninf = v.cmpc(FloatCC::Equal, x, f64::NEG_INFINITY);
            v.selc(ninf, f64::INFINITY, r)
        }
        ConstExp::Cube => {
            let x2 = v.mul(x, x);
            v.mul(x2, x)
        }
    }
}

/// `x**1.5` (see the module docs).
fn three_halves(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let s = v.sqrt(x);
    let hi = v.mul(x, s);
    let nhi = v.neg(hi);
    let lo = v.fma(x, s, nhi);
    let ns = v.neg(s);
    let e = v.fma(ns, s, x);
    let hs = v.mulc(s, 0.5);
    let t = v.fma(hs, e, lo);
    let r = v.add(hi, t);
    // +inf where hi is (x = +inf, overflow) and where x = -inf
    let big = v.cmpc(FloatCC::Equal, hi, f64::INFINITY);
    let ninf = v.cmpc(FloatCC::Equal, x, f64::NEG_INFINITY);
    let m = v.or(big, ninf);
    v.selc(m, f64::INFINITY, r)
}

/// `x**3` (see the module docs).
fn cube(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let x2 = v.mul(x, x);
    let nx2 = v.neg(x2);
    let x2l = v.fma(x, x, nx2);
    let h = v.mul(x2, x);
    let nh = v.neg(h);
    let l = v.fma(x2, x, nh);
    let t = v.fma(x2l, x, l);
    let r = v.add(h, t);
    let ah = v.abs(h);
    let finite = v.cmpc(FloatCC::LessThan, ah, f64::INFINITY);
    let nonzero = v.cmpc(FloatCC::NotEqual, h, 0.0);
    let m = v.and(finite, nonzero);
    v.sel(m, r, h)
}
