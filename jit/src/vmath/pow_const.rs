//! pow by a literal exponent, decided when the kernel is compiled: `x**1.5`, `x**3`, `x**4`,
//! `x**-0.5` and `x**-2` (exponents NumPy's own fast paths leave to `pow`; `x**2`, `x**-1`,
//! `x**0.5`, `x**1` and `x**0` are rewritten before, by `kiln_ir::passes::strength`).
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
//!   NaN), `-0` (`+0`), `+inf` and an overflowing result (`hi` is `+inf`, the residual NaN: `+inf`
//!   is selected), `-inf` (`+inf`, selected).
//! - `x**3` ([`cube`]) and `x**4` ([`fourth`]): `x² = x2 + x2l` exactly (`fma`), `x³ = h + l +
//!   x2l·x` with `h = x2·x` and `l` its exact residual, `x⁴ = h + l + 2·x2·x2l` with `h = x2²`
//!   (`x2l²` is below 2^-104 of it); `h + fma(...)`. Where `h` is zero, infinite or NaN (`±0`,
//!   `±inf`, overflow, underflow to zero, NaN) the result is `h`, which has pow's sign (`pow(-0, 3)
//!   = -0`).
//! - `x**-0.5` ([`inv_sqrt`]): `s = sqrt(x)`, `r0 = 1/s`, `d = 1 - r0·s` and `e = s² - x` exact
//!   (`fma`), `1/sqrt(x) = r0·(1 + d + e·r0²/2)` to second order: `fma(r0, fma(e/2, r0², d), r0)`.
//!   Bases below 2^-1000 are scaled by 2^128 first and the result by 2^64 (`e` is exact from about
//!   2^-970 on); `±0` give `+inf`, `±inf` give `+0`, a negative base NaN.
//! - `x**-2` ([`inv_square`]): `x² = x2 + x2l` (`fma`), `r0 = 1/x2`, `d = 1 - r0·x2` exact,
//!   `1/(x2 + x2l) = fma(r0, d - x2l·r0, r0)` to second order. `|x|` beyond 2^500 (below 2^-500)
//!   is scaled by 2^-64 (2^64) first and the result by 2^-128 (2^128), so that `x²` and `x2l` stay
//!   normal; `|x| <= 2^-512` gives `+inf` (overflow, `±0`), `|x| >= 2^538` gives `+0` (`±inf`).
//!
//! Checked with exact rational arithmetic over 100,000 points in [0, 100] and 100,000
//! log-uniform over all of f64: every normal result of `x**-0.5` and `x**-2` correctly rounded, and
//! of `x**1.5`, `x**3`, `x**4` all but those below 2^-1015 (39 points), where the residual `lo`
//! (or `l`) falls into the subnormals and is no longer exact: within 1 ULP of the correctly
//! rounded value there, as in the subnormal results.
//!
//! f32 ([`pow_const_f32`]) is the same code in f32, four lanes an F32X4 (it was computed on the
//! widened values, two lanes an F64X2: `x**1.5` 0.88 ns a point in cache at AVX-512, now 0.26;
//! `x**-0.5` 1.42, now 0.44; `x**-2` 0.62, now 0.21). Its error before the last rounding is of the
//! second order, about 2^-22 ULP, so the result is correctly rounded but within that of a
//! midpoint, where its residuals are exact: bases from 2^-68 on for `x**1.5`, |x| from 2^-34 for
//! `x**3` and 2^-25 for `x**4`, |x| in [2^-51, 2^63] for `x**-2` (there `1/x²` is normal too).
//! NaN takes the widened branch of the last three.
//! A vector with a lane outside takes a branch ([`or_widened`]) that computes those lanes, results
//! in or near the subnormals, zeros, overflows, infinities and NaN among them, on the widened
//! values ([`pow_const_widened`]): `x·sqrt(x)`, `(x·x)·x`, `(x·x)²`, `1/sqrt(x)` and `1/(x·x)` in
//! f64 are within 2 f64 ULP of the true power (`x·x` exact), so rounded once they are the
//! correctly rounded value but for double roundings within 2^-28 f32 ULP of a midpoint (native f32
//! residuals there put 2,019 of a million log-uniform points of `x**1.5` off by one). `x**-0.5`
//! scales instead, as in f64: bases below 2^-100 by 2^64 and the result by 2^32 (its residual
//! `s² - x` is exact from 2^-102 on), one path. A scalar goes
//! through lane 0 of a vector. On blocks (`skeleton/block.rs`) each exponent has a wide routine of one argument,
//! these operations per lane (`wide/pow_const.rs`), so its bits do not depend on the route.
//! `jit/tests/accuracy.rs` (`pow_literal_exponents`) holds both types against libm and f32 against
//! the correctly rounded value, NumPy's special values, and the bits of each route.

use super::Vb;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{InstBuilder, InstructionData, Opcode, Value, ValueDef};
use cranelift_frontend::FunctionBuilder;

/// An exponent with its own code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConstExp {
    /// `x**1.5`.
    ThreeHalves,
    /// `x**3`.
    Cube,
    /// `x**4`.
    Fourth,
    /// `x**-0.5`.
    InvSqrt,
    /// `x**-2`.
    InvSquare,
}

impl ConstExp {
    /// Every exponent with its own code, and its value (each exact in f32).
    pub(crate) const ALL: [(f64, ConstExp); 5] = [
        (1.5, ConstExp::ThreeHalves),
        (3.0, ConstExp::Cube),
        (4.0, ConstExp::Fourth),
        (-0.5, ConstExp::InvSqrt),
        (-2.0, ConstExp::InvSquare),
    ];

    /// The exponent `e` has its own code.
    pub(crate) fn of(e: f64) -> Option<ConstExp> {
        ConstExp::ALL.iter().find(|(v, _)| *v == e).map(|&(_, c)| c)
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
        ConstExp::Fourth => fourth(v, x),
        ConstExp::InvSqrt => inv_sqrt(v, x),
        ConstExp::InvSquare => inv_square(v, x),
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
        ConstExp::Fourth => {
            let x2 = v.mul(x, x);
            v.mul(x2, x2)
        }
        ConstExp::InvSqrt => {
            // 1/sqrt(±0) = ±inf and sqrt(-inf) = NaN, where pow gives +inf and +0
            let s = v.sqrt(x);
            let one = v.c(1.0);
            let r = v.div(one, s);
            let zero = v.cmpc(FloatCC::Equal, x, 0.0);
            let r = v.selc(zero, f64::INFINITY, r);
            let ninf = v.cmpc(FloatCC::Equal, x, f64::NEG_INFINITY);
            v.selc(ninf, 0.0, r)
        }
        ConstExp::InvSquare => {
            let x2 = v.mul(x, x);
            let one = v.c(1.0);
            v.div(one, x2)
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

/// `x**e` on an F32X4: the f64 code's operations in f32, and a vector with a lane outside the
/// range where they are exact takes a branch that computes those lanes widened ([`or_widened`]).
pub(crate) fn pow_const_f32(v: &mut Vb<'_, '_>, x: Value, e: ConstExp) -> Value {
    use FloatCC::*;
    let ax = v.abs(x);
    let (fast, widen) = match e {
        ConstExp::ThreeHalves => {
            let fast = three_halves(v, x);
            let pos = v.cmpc(GreaterThan, x, 0.0);
            let small = v.cmpc(LessThan, x, THREE_HALVES_TINY_F32);
            (fast, v.and(pos, small))
        }
        ConstExp::Cube => (cube(v, x), v.cmpc(UnorderedOrLessThan, ax, CUBE_TINY_F32)),
        ConstExp::Fourth => (fourth(v, x), v.cmpc(UnorderedOrLessThan, ax, FOURTH_TINY_F32)),
        ConstExp::InvSqrt => return inv_sqrt(v, x),
        ConstExp::InvSquare => {
            let fast = inv_square_f32(v, ax);
            let lo = v.cmpc(GreaterThanOrEqual, ax, INV_SQ_LOW_F32);
            let hi = v.cmpc(LessThanOrEqual, ax, INV_SQ_HIGH_F32);
            let inside = v.and(lo, hi);
            (fast, v.not(inside))
        }
    };
    or_widened(v, x, e, fast, widen)
}

/// Below this a positive f32 base of `x**1.5` takes the widened computation
/// ([`pow_const_widened`]): from 2^-68 on, the residuals `x·s - hi` and `x - s²` of
/// [`three_halves`] in f32 are exact (the product's low bits stay above 2^-149).
pub(crate) const THREE_HALVES_TINY_F32: f64 = two_to(-68);

/// Below these |x| an f32 base of `x**3` and of `x**4` is computed widened: from 2^-34 (2^-25)
/// on, the residuals of `x²` and of `x²·x` (`x²·x²`) are exact.
pub(crate) const CUBE_TINY_F32: f64 = two_to(-34);
pub(crate) const FOURTH_TINY_F32: f64 = two_to(-25);

/// The |x| for which f32's `x**-2` is computed in f32 ([`inv_square_f32`]): from 2^-51 on, `x²`'s
/// residual is exact; up to 2^63, `1/x²` is normal. Other lanes (zeros, infinities and NaN among
/// them) are computed widened.
pub(crate) const INV_SQ_LOW_F32: f64 = two_to(-51);
pub(crate) const INV_SQ_HIGH_F32: f64 = two_to(63);

/// `fast`, but where a lane of `widen` is set (a branch taken only then), those lanes of `x**e`
/// computed on the widened values (the two halves of the F32X4 as F64X2, [`pow_const_widened`]).
fn or_widened(v: &mut Vb<'_, '_>, x: Value, e: ConstExp, fast: Value, widen: Value) -> Value {
    debug_assert!(v.f32);
    v.guard(widen, fast, |v| {
        v.f32 = false;
        let lo = v.b.ins().fvpromote_low(x);
        let h = super::high_half(v.b, x);
        let hi = v.b.ins().fvpromote_low(h);
        let r_lo = pow_const_widened(v, lo, e);
        let r_hi = pow_const_widened(v, hi, e);
        v.f32 = true;
        let wide = super::join_halves(v.b, r_lo, r_hi);
        v.sel(widen, wide, fast)
    })
}

/// `x**-2` of an f32 `ax = |x|` in [`INV_SQ_LOW_F32`, `INV_SQ_HIGH_F32`], in f32: [`inv_square`]
/// without its scalings and special values.
fn inv_square_f32(v: &mut Vb<'_, '_>, ax: Value) -> Value {
    let x2 = v.mul(ax, ax);
    let nx2 = v.neg(x2);
    let x2l = v.fma(ax, ax, nx2);
    let one = v.c(1.0);
    let r0 = v.div(one, x2);
    let nr0 = v.neg(r0);
    let d = v.fma(nr0, x2, one);
    let nx2l = v.neg(x2l);
    let t = v.fma(nx2l, r0, d);
    v.fma(r0, t, r0)
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

/// `x**4` (see the module docs).
fn fourth(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let x2 = v.mul(x, x);
    let nx2 = v.neg(x2);
    let x2l = v.fma(x, x, nx2);
    let h = v.mul(x2, x2);
    let nh = v.neg(h);
    let l = v.fma(x2, x2, nh);
    let tx2 = v.add(x2, x2);
    let t = v.fma(tx2, x2l, l);
    let r = v.add(h, t);
    let ah = v.abs(h);
    let finite = v.cmpc(FloatCC::LessThan, ah, f64::INFINITY);
    let nonzero = v.cmpc(FloatCC::NotEqual, h, 0.0);
    let m = v.and(finite, nonzero);
    v.sel(m, r, h)
}

/// 2^n for a normal power of two.
const fn two_to(n: i64) -> f64 {
    f64::from_bits(((1023 + n) as u64) << 52)
}

/// Below this a base of `x**-0.5` is scaled by [`INV_SQRT_UP`] (the residual `s² - x` is exact
/// from about 2^-970 on).
pub(crate) const INV_SQRT_SMALL: f64 = two_to(-1000);
/// 2^128, and its inverse square root 2^-64 undone by [`INV_SQRT_BACK`].
pub(crate) const INV_SQRT_UP: f64 = two_to(128);
pub(crate) const INV_SQRT_BACK: f64 = two_to(64);

/// f32's: bases below 2^-100 scaled by 2^64 (the residual `s² - x` is exact from 2^-102 on), the
/// result by 2^32.
pub(crate) const INV_SQRT_SMALL_F32: f64 = two_to(-100);
pub(crate) const INV_SQRT_UP_F32: f64 = two_to(64);
pub(crate) const INV_SQRT_BACK_F32: f64 = two_to(32);

/// `x**-0.5` (see the module docs), in f64 or in f32.
fn inv_sqrt(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let (small_c, up_c, back_c) = if v.f32 {
        (INV_SQRT_SMALL_F32, INV_SQRT_UP_F32, INV_SQRT_BACK_F32)
    } else {
        (INV_SQRT_SMALL, INV_SQRT_UP, INV_SQRT_BACK)
    };
    let small = v.cmpc(FloatCC::LessThan, x, small_c);
    let up = v.mulc(x, up_c);
    let xs = v.sel(small, up, x);
    let s = v.sqrt(xs);
    let one = v.c(1.0);
    let r0 = v.div(one, s);
    let nr0 = v.neg(r0);
    let d = v.fma(nr0, s, one);
    let nxs = v.neg(xs);
    let e = v.fma(s, s, nxs);
    let he = v.mulc(e, 0.5);
    let u = v.mul(r0, r0);
    let t = v.fma(he, u, d);
    let r = v.fma(r0, t, r0);
    let back = v.c(back_c);
    let r_back = v.mul(r, back);
    let r = v.sel(small, r_back, r);
    // ±0: +inf; ±inf: +0 (a negative base: sqrt's NaN)
    let zero = v.cmpc(FloatCC::Equal, x, 0.0);
    let r = v.selc(zero, f64::INFINITY, r);
    let ax = v.abs(x);
    let inf = v.cmpc(FloatCC::Equal, ax, f64::INFINITY);
    v.selc(inf, 0.0, r)
}

/// Beyond these |x| a base of `x**-2` is scaled by [`INV_SQ_DOWN`] or [`INV_SQ_UP`] (`x²` and its
/// residual stay normal) and the result by its inverse square.
pub(crate) const INV_SQ_BIG: f64 = two_to(500);
pub(crate) const INV_SQ_SMALL: f64 = two_to(-500);
pub(crate) const INV_SQ_DOWN: f64 = two_to(-64);
pub(crate) const INV_SQ_UP: f64 = two_to(64);
/// From these |x| on, `x**-2` overflows (`x^-2 >= 2^1024`) or rounds to zero (`x^-2 <= 2^-1076`).
pub(crate) const INV_SQ_TINY: f64 = two_to(-512);
pub(crate) const INV_SQ_HUGE: f64 = two_to(538);

/// `x**-2` (see the module docs).
fn inv_square(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let ax = v.abs(x);
    let big = v.cmpc(FloatCC::GreaterThan, ax, INV_SQ_BIG);
    let small = v.cmpc(FloatCC::LessThan, ax, INV_SQ_SMALL);
    let one = v.c(1.0);
    let down = v.c(INV_SQ_DOWN);
    let up = v.c(INV_SQ_UP);
    let f = v.sel(small, up, one);
    let f = v.sel(big, down, f);
    let xs = v.mul(ax, f);
    let x2 = v.mul(xs, xs);
    let nx2 = v.neg(x2);
    let x2l = v.fma(xs, xs, nx2);
    let r0 = v.div(one, x2);
    let nr0 = v.neg(r0);
    let d = v.fma(nr0, x2, one);
    let nx2l = v.neg(x2l);
    let t = v.fma(nx2l, r0, d);
    let r = v.fma(r0, t, r0);
    let f2 = v.mul(f, f);
    let r = v.mul(r, f2);
    // |x| <= 2^-512 (±0 too): +inf; |x| >= 2^538 (±inf too): +0, where x² would leave the range
    let tiny = v.cmpc(FloatCC::LessThanOrEqual, ax, INV_SQ_TINY);
    let r = v.selc(tiny, f64::INFINITY, r);
    let huge = v.cmpc(FloatCC::GreaterThanOrEqual, ax, INV_SQ_HUGE);
    v.selc(huge, 0.0, r)
}
