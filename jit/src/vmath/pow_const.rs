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
//!   NaN, whose sign the sign of `hi` or-ed in keeps whatever operand order the compiler chose),
//!   `-0` (`+0`), `+inf` and an overflowing result (`hi` is `+inf` and the sum NaN: `+inf` is
//!   selected), `-inf` (`+inf`, selected). Bases from 2^680 on are scaled by 2^-4 and the result by
//!   2^6 ([`Plan`]), so that it overflows exactly where the power does (`hi = x·s` rounded up past
//!   the largest double for `x = 0x1.965fea53d6e3cp+682`, whose power is below the midpoint to
//!   infinity).
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
//! widened values, two lanes an F64X2: `x**1.5` 0.88 ns a point in cache at AVX-512, now 0.25;
//! `x**-0.5` 1.42, now 0.42; `x**-2` 0.62, now 0.20; `x**3` and `x**4` 0.42, now 0.15). Its error
//! before the last rounding is of the second order, about 2^-22 ULP, so the result is correctly
//! rounded but within that of a midpoint (1 of the 10 million points of the accuracy sweeps rounds
//! the other way). Its residuals must be exact, and normal (a subnormal operand or result costs a
//! microcode assist on x86: `x**1.5` of bases log-uniform over [1e-20, 1e20] ran at twice the time
//! where residuals fell into the subnormals), and a result must overflow exactly where the power
//! does (f32 `x**3` of 6.9814636e12 gave inf for `f32::MAX`). So a vector with a base near either
//! end of the range ([`Plan`]: `0 < x < 2^-40` or `|x| >= 2^80` for `x**1.5`, `0 < |x| < 2^-26`
//! or `|x| >= 2^40` for `x**3`, `2^-20` and `2^30` for `x**4`; `x**-2`: |x| outside [2^-40,
//! 2^60], zeros and infinities among them) takes a branch that scales those bases by an even power
//! of two (the result by its power, exactly, and past the largest float exactly where the power
//! is) and computes the lanes whose results are in the subnormals (`x**1.5` below 2^-84, `x**3`
//! 2^-42, `x**4` 2^-31, `x**-2` beyond 2^63) on the widened values ([`pow_const_widened`]):
//! `x·sqrt(x)`, `(x·x)·x`, `(x·x)²` and `1/(x·x)` in f64 are within 2 f64 ULP of the true power,
//! so rounded once they are correctly rounded but for double roundings within 2^-28 f32 ULP of a
//! midpoint. `x**-0.5` scales as in f64, in one path: bases below 2^-60 by 2^64 and the result by
//! 2^32 (its residual `s² - x` stays normal). A scalar goes through lane 0 of a vector. On blocks
//! (`skeleton/block.rs`) each exponent has a wide routine of one argument, these operations per
//! lane (`wide/pow_const.rs`), so its bits do not depend on the route.
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
        ConstExp::ThreeHalves => {
            let ax = v.abs(x);
            scaled(v, x, ax, &THREE_HALVES_F64, three_halves)
        }
        ConstExp::Cube => cube(v, x),
        ConstExp::Fourth => fourth(v, x),
        ConstExp::InvSqrt => inv_sqrt(v, x),
        ConstExp::InvSquare => {
            let ax = v.abs(x);
            inv_square(v, ax, &INV_SQ_F64)
        }
    }
}

/// `x**e` of f32 values widened to f64, for a result rounded once to f32 (see the module docs).
pub(crate) fn pow_const_widened(v: &mut Vb<'_, '_>, x: Value, e: ConstExp) -> Value {
    match e {
        ConstExp::ThreeHalves => {
            let s = v.sqrt(x);
            v.mul(x, s)
        }
        ConstExp::Cube => {
            let x2 = v.mul(x, x);
            v.mul(x2, x)
        }
        ConstExp::Fourth => {
            let x2 = v.mul(x, x);
            v.mul(x2, x2)
        }
        ConstExp::InvSqrt => unreachable!("x**-0.5 of f32 has one path, in f32"),
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
    // a negative base: the NaN sqrt gives (the invalid one, sign set) passes through operations
    // whose operand order, and so the sign of the NaN that comes out, is the compiler's; hi's sign
    // (set there, clear for every other base) or-ed in makes it the invalid NaN on every route
    let r = v.or_sign(r, hi);
    // +inf where hi is (x = +inf, overflow) and where x = -inf
    let big = v.cmpc(FloatCC::Equal, hi, f64::INFINITY);
    let ninf = v.cmpc(FloatCC::Equal, x, f64::NEG_INFINITY);
    let m = v.or(big, ninf);
    v.selc(m, f64::INFINITY, r)
}

/// `x**e` on an F32X4: the f64 code's operations in f32. A vector with a lane near the ends of the
/// range ([`Plan`]: |x| nonzero below `small`, for `x**1.5` x positive, or from `big` on; `x**-2`:
/// |x| outside [2^-40, 2^60], zeros and infinities too) takes a branch ([`general_f32`]) that
/// scales those bases, so that no residual is subnormal and overflow is exact, and computes the
/// lanes whose results are in or at the edge of the subnormals widened; the other lanes keep the
/// fast path's bits there.
pub(crate) fn pow_const_f32(v: &mut Vb<'_, '_>, x: Value, e: ConstExp) -> Value {
    use FloatCC::*;
    let ax = v.abs(x);
    let (fast, edge) = match planned(e) {
        Some((plan, code, signed)) => {
            let fast = code(v, x);
            let t = if signed { x } else { ax };
            (fast, edge(v, t, ax, plan))
        }
        None if e == ConstExp::InvSqrt => return inv_sqrt(v, x),
        None => {
            let one = v.c(1.0);
            let fast = inv_square_core(v, ax, one);
            let lo = v.cmpc(LessThan, ax, INV_SQ_F32.small);
            let hi = v.cmpc(GreaterThan, ax, INV_SQ_F32.big);
            (fast, v.or(lo, hi))
        }
    };
    v.guard(edge, fast, |v| general_f32(v, x, ax, e))
}

/// The code of one power on a vector.
type Code = fn(&mut Vb<'_, '_>, Value) -> Value;

/// A power with an f32 [`Plan`] (`x**1.5`, `x**3`, `x**4`): its plan, its code, and whether the
/// plan's small-base test reads the base itself (`x**1.5`: a negative base is NaN unscaled)
/// rather than |x|.
fn planned(e: ConstExp) -> Option<(&'static Plan, Code, bool)> {
    match e {
        ConstExp::ThreeHalves => Some((&THREE_HALVES_F32, three_halves, true)),
        ConstExp::Cube => Some((&CUBE_F32, cube, false)),
        ConstExp::Fourth => Some((&FOURTH_F32, fourth, false)),
        ConstExp::InvSqrt | ConstExp::InvSquare => None,
    }
}

/// The lanes a plan scales: `t` (the base, or |x|) in (0, `small`), or |x| (`ax`) from `big` on.
fn edge(v: &mut Vb<'_, '_>, t: Value, ax: Value, plan: &Plan) -> Value {
    let tiny = nonzero_below(v, t, plan.small);
    let big = v.cmpc(FloatCC::GreaterThanOrEqual, ax, plan.big);
    v.or(tiny, big)
}

/// The lanes of `t` in (0, `c`).
fn nonzero_below(v: &mut Vb<'_, '_>, t: Value, c: f64) -> Value {
    let pos = v.cmpc(FloatCC::GreaterThan, t, 0.0);
    let below = v.cmpc(FloatCC::LessThan, t, c);
    v.and(pos, below)
}

/// [`pow_const_f32`]'s branch: every lane by the f32 code with its scalings (the other lanes' bits
/// unchanged), and where a lane's result is in the subnormals (a further branch), those lanes on
/// the widened values (the two halves of the F32X4 as F64X2, [`pow_const_widened`]).
fn general_f32(v: &mut Vb<'_, '_>, x: Value, ax: Value, e: ConstExp) -> Value {
    use FloatCC::*;
    let (r, widen) = match planned(e) {
        Some((plan, code, signed)) => {
            let r = scaled(v, x, ax, plan, code);
            let t = if signed { x } else { ax };
            (r, nonzero_below(v, t, plan.widen))
        }
        None => {
            // x**-2 (x**-0.5 has one path, in pow_const_f32)
            let r = inv_square(v, ax, &INV_SQ_F32);
            let big = v.cmpc(GreaterThan, ax, INV_SQ_WIDEN_F32);
            let fin = v.cmpc(LessThan, ax, f64::INFINITY);
            (r, v.and(big, fin))
        }
    };
    v.guard(widen, r, |v| {
        v.f32 = false;
        let lo = v.b.ins().fvpromote_low(x);
        let h = super::high_half(v.b, x);
        let hi = v.b.ins().fvpromote_low(h);
        let r_lo = pow_const_widened(v, lo, e);
        let r_hi = pow_const_widened(v, hi, e);
        v.f32 = true;
        let wide = super::join_halves(v.b, r_lo, r_hi);
        v.sel(widen, wide, r)
    })
}

/// How `x**1.5`, `x**3` or `x**4` scales its bases ([`scaled`]): |x| below `small` by `up` (a
/// power of two whose power is exact: 2^48, 2^32, 2^24) and the result by `back`, so that the
/// residuals stay normal (a subnormal operand or result costs a microcode assist on x86, and they
/// are exact only down to a bound); |x| from `big` on by `down` and the result by `grow`, so that
/// a result overflows exactly where the power does (unscaled, `x²·x` could round up past the
/// largest float where `x³` is below the midpoint to infinity: f32 `x**3` of 6.9814636e12 gave inf
/// for `f32::MAX`; the scaled threshold is a midpoint itself). f32 lanes of |x| in (0, `widen`),
/// whose results are in or at the edge of the subnormals, are computed widened. In f32
/// ([`pow_const_f32`]) a vector takes the scaled and widened code on a branch, where a lane needs
/// it.
pub(crate) struct Plan {
    pub small: f64,
    pub up: f64,
    pub back: f64,
    pub big: f64,
    pub down: f64,
    pub grow: f64,
    pub widen: f64,
}

impl Plan {
    /// The plan of the power `num/den` that scales bases below 2^`small` by 2^`up` and from 2^`big`
    /// on by 2^`down` (each exponent times the power an integer: the result's scaling), and
    /// computes the lanes below 2^`widen` widened.
    const fn new(num: i64, den: i64, small: i64, up: i64, big: i64, down: i64, widen: i64) -> Plan {
        Plan {
            small: two_to(small),
            up: two_to(up),
            back: two_to(-up * num / den),
            big: two_to(big),
            down: two_to(down),
            grow: two_to(-down * num / den),
            widen: two_to(widen),
        }
    }
}

/// f32 `x**1.5`: from 2^-40 on, `x·sqrt(x)` is at least 2^-60 and its residuals about 2^-84; below,
/// scaled by 2^48 down to 2^-84, under which the result is subnormal; from 2^80 (the result
/// 2^120), by 2^-4.
pub(crate) const THREE_HALVES_F32: Plan = Plan::new(3, 2, -40, 48, 80, -4, -84);
/// f32 `x**3`: unscaled in [2^-26, 2^40) (results in [2^-78, 2^120)), scaled by 2^32 down to
/// 2^-42, by 2^-2 above.
pub(crate) const CUBE_F32: Plan = Plan::new(3, 1, -26, 32, 40, -2, -42);
/// f32 `x**4`: unscaled in [2^-20, 2^30) (results in [2^-80, 2^120)), scaled by 2^24 down to
/// 2^-31, by 2^-2 above.
pub(crate) const FOURTH_F32: Plan = Plan::new(4, 1, -20, 24, 30, -2, -31);
/// f64 `x**1.5`: from 2^680 (the result 2^1020) by 2^-4, no other scaling (f64's `x**3` and
/// `x**4` were checked 300 ULP about their overflow thresholds: none rounds past it).
pub(crate) const THREE_HALVES_F64: Plan = Plan::new(3, 2, -1022, 0, 680, -4, -1022);

/// The lanes of f32's `x**-2` computed widened: finite |x| beyond 2^63 (results in the subnormals).
pub(crate) const INV_SQ_WIDEN_F32: f64 = two_to(63);

/// `f(x)`, but where `|x|` (`ax`) is below `plan.small`, `f(x·up)·back`, and where it is at least
/// `plan.big`, `f(x·down)·grow`.
fn scaled(v: &mut Vb<'_, '_>, x: Value, ax: Value, plan: &Plan, f: Code) -> Value {
    let small = v.cmpc(FloatCC::LessThan, ax, plan.small);
    let big = v.cmpc(FloatCC::GreaterThanOrEqual, ax, plan.big);
    let one = v.c(1.0);
    let up = v.c(plan.up);
    let down = v.c(plan.down);
    let back = v.c(plan.back);
    let grow = v.c(plan.grow);
    let fx = v.sel(big, down, one);
    let fx = v.sel(small, up, fx);
    let fr = v.sel(big, grow, one);
    let fr = v.sel(small, back, fr);
    let xs = v.mul(x, fx);
    let r = f(v, xs);
    v.mul(r, fr)
}

/// `1/(xs·xs)` of a positive `xs` whose square and its residual are normal ([`inv_square`]):
/// `x² = x2 + x2l` exactly, `r0 = 1/x2`, `d = 1 - r0·x2` exact, `fma(r0, d - x2l·r0, r0)`.
fn inv_square_core(v: &mut Vb<'_, '_>, xs: Value, one: Value) -> Value {
    let x2 = v.mul(xs, xs);
    let nx2 = v.neg(x2);
    let x2l = v.fma(xs, xs, nx2);
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

/// f32's: bases below 2^-60 scaled by 2^64, the result by 2^32, so that the residual `s² - x`
/// (about `x·2^-24`) is normal: exact (from 2^-102 on), and no subnormal operand (a microcode
/// assist on x86).
pub(crate) const INV_SQRT_SMALL_F32: f64 = two_to(-60);
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
    // a negative base: the invalid NaN, as in `three_halves` (s is sqrt's NaN there, sign set; at
    // -0, -0, where the select below gives +inf)
    let r = v.or_sign(r, s);
    // ±0: +inf; ±inf: +0
    let zero = v.cmpc(FloatCC::Equal, x, 0.0);
    let r = v.selc(zero, f64::INFINITY, r);
    let ax = v.abs(x);
    let inf = v.cmpc(FloatCC::Equal, ax, f64::INFINITY);
    v.selc(inf, 0.0, r)
}

/// How `x**-2` scales its bases ([`inv_square`]): |x| below `small` by `up`, above `big` by
/// `down` (the result by their inverse squares), so that `x²` and its residual stay normal; |x| up
/// to `tiny` (zeros too) gives +inf (the power overflows), from `huge` on (infinities too) +0.
pub(crate) struct InvSquarePlan {
    pub small: f64,
    pub big: f64,
    pub up: f64,
    pub down: f64,
    pub tiny: f64,
    pub huge: f64,
}

/// f64: scaled below 2^-500 by 2^64, above 2^500 by 2^-64; +inf up to 2^-512, +0 from 2^538
/// (`x^-2 <= 2^-1076`).
pub(crate) const INV_SQ_F64: InvSquarePlan = InvSquarePlan {
    small: two_to(-500),
    big: two_to(500),
    up: two_to(64),
    down: two_to(-64),
    tiny: two_to(-512),
    huge: two_to(538),
};
/// f32: scaled below 2^-40 by 2^32 (so that the residual stays normal), above 2^60 by 2^-32; +inf
/// up to 2^-64, +0 from 2^75 (finite |x| beyond 2^63 are computed widened: [`INV_SQ_WIDEN_F32`]).
pub(crate) const INV_SQ_F32: InvSquarePlan = InvSquarePlan {
    small: two_to(-40),
    big: two_to(60),
    up: two_to(32),
    down: two_to(-32),
    tiny: two_to(-64),
    huge: two_to(75),
};

/// `x**-2` of `ax = |x|` (see the module docs), scaled as `c` says.
fn inv_square(v: &mut Vb<'_, '_>, ax: Value, c: &InvSquarePlan) -> Value {
    let big = v.cmpc(FloatCC::GreaterThan, ax, c.big);
    let small = v.cmpc(FloatCC::LessThan, ax, c.small);
    let one = v.c(1.0);
    let down = v.c(c.down);
    let up = v.c(c.up);
    let f = v.sel(small, up, one);
    let f = v.sel(big, down, f);
    let xs = v.mul(ax, f);
    let r = inv_square_core(v, xs, one);
    let f2 = v.mul(f, f);
    let r = v.mul(r, f2);
    // +inf where the power overflows (±0 too), +0 where it rounds to zero (±inf too), where x²
    // would leave the range
    let tiny = v.cmpc(FloatCC::LessThanOrEqual, ax, c.tiny);
    let r = v.selc(tiny, f64::INFINITY, r);
    let huge = v.cmpc(FloatCC::GreaterThanOrEqual, ax, c.huge);
    v.selc(huge, 0.0, r)
}
