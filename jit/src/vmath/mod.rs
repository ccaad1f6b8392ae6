//! Vector math: transcendentals as straight-line Cranelift IR on F64X2, with no call on the fast path.
//!
//! Every function here computes two f64 lanes at once (or, for f32 exp, log, log2, log10, log1p, sin,
//! cos, tan and cbrt, four f32 lanes: `f32x4.rs`, `cbrt.rs`; for f32 exp2, expm1, tanh, sinh and
//! cosh `exp.rs` and `hyperbolic.rs` on f32 constants from `f32x4.rs`; for f32 arcsin, arccos,
//! arctan and arctan2 `atan.rs` on F32X4, for f32 arcsinh, arccosh and arctanh `arc_hyp.rs`) from
//! range reduction, a polynomial and reconstruction by exponent arithmetic.
//! Special values (NaN, ±inf, ±0, subnormals, overflow) are handled by lane selects, or, where that
//! would slow the common case, by a branch to a general path taken only when some lane of the vector
//! needs it; the few arguments a function cannot reduce accurately (sin, cos and tan of |x| > 2^20, or
//! 2^16 in f32) take a branch to a per-lane call of the host libm. The other f32 functions are
//! computed by widening to f64 and rounding the result once (see [`crate::math`]), which keeps them
//! within a rounding of the correctly rounded value.
//!
//! Files, one per family, each opening with its method, the source of its coefficients and the
//! maximum error measured: `exp.rs` (exp, exp2, expm1), `log.rs` (log, log2, log10, log1p), `trig.rs`
//! (sin, cos, tan), `pow.rs`, `hyperbolic.rs` (tanh, sinh, cosh), `erf.rs` (erf, erfc), `f32x4.rs`
//! (f32 exp, log, log2, log10, log1p, sin, cos, tan, and the f32 constants of exp2, expm1, tanh,
//! sinh, cosh), `atan.rs` (arctan, arctan2, arcsin, arccos, both types, on one kernel), `cbrt.rs` (a
//! division-free cube root: a polynomial seed and two Newton steps, f64 and native f32), `hypot.rs`, `arc_hyp.rs` (arcsinh, arccosh, arctanh, each one log1p of a selected argument, both types).
//! FMA is used freely inside these approximations; it never
//! reaches the user's own arithmetic (see `lower.rs`).
//!
//! The coefficients of the log, log1p, expm1, erf, erfc, trigonometric and arctangent kernels (and the
//! formulas of the inverse hyperbolic functions) are fdlibm's (Sun Microsystems,
//! 1993: "Permission to use, copy, modify, and distribute this software is freely granted, provided
//! that this notice is preserved."), as carried by musl and the Rust `libm` crate (MIT); the exp,
//! expm1, tanh, sinh, f32 tan and pow polynomials are fitted here (Chebyshev interpolation in mpmath,
//! `scripts/fexp_fit.py` for expm1, tanh, sinh and f32 tan) or Taylor series (the tail of pow's double-double
//! log), whose coefficients are exact facts.

// The coefficients are quoted with the digits their sources give (fdlibm prints 21), and fdlibm's
// constants near log2(e) or ln 2 are its own splits, not approximations of std's.
#![allow(clippy::excessive_precision, clippy::approx_constant)]

/// The NaN an invalid operation gives (log of a negative, a negative base to a fractional power):
/// x86's "QNaN floating-point indefinite", sign bit set, which the hardware and glibc produce and
/// NumPy shows as `-nan`. Its sign is observable through `copysign`, so the vector code uses the same
/// one as the interpreter's libm rather than `f64::NAN` (sign clear).
pub(crate) const INVALID: f64 = f64::from_bits(0xfff8_0000_0000_0000);

pub(crate) mod arc_hyp;
pub(crate) mod asin;
pub(crate) mod atan;
pub(crate) mod cbrt;
mod erf;
pub(crate) mod exp;
pub(crate) mod f32x4;
pub(crate) mod hyperbolic;
pub(crate) mod hypot;
pub(crate) mod log;
pub(crate) mod pow;
pub(crate) mod trig;

use crate::clif::cast;
use crate::host::{MathFn, MathRefs};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{BlockArg, InstBuilder, Value, types};
use cranelift_frontend::FunctionBuilder;

/// Whether `f` has a vector implementation here (else it is a per-lane call).
pub fn has_vector(f: MathFn) -> bool {
    use MathFn::*;
    matches!(
        f,
        Exp | Exp2
            | Expm1
            | Log
            | Log2
            | Log10
            | Log1p
            | Sin
            | Cos
            | Tan
            | Pow
            | Tanh
            | Erf
            | Erfc
            | Sinh
            | Cosh
            | Arcsin
            | Arccos
            | Arctan
            | Arctan2
            | Cbrt
            | Hypot
            | Arcsinh
            | Arccosh
            | Arctanh
    )
}

/// Whether `f` has a native F32X4 implementation (else f32 goes through F64X2).
pub fn has_f32(f: MathFn) -> bool {
    matches!(
        f,
        MathFn::Exp
            | MathFn::Exp2
            | MathFn::Expm1
            | MathFn::Log
            | MathFn::Log2
            | MathFn::Log10
            | MathFn::Log1p
            | MathFn::Sin
            | MathFn::Cos
            | MathFn::Tan
            | MathFn::Tanh
            | MathFn::Sinh
            | MathFn::Cosh
            | MathFn::Arcsin
            | MathFn::Arccos
            | MathFn::Arctan
            | MathFn::Arctan2
            | MathFn::Cbrt
            | MathFn::Arcsinh
            | MathFn::Arccosh
            | MathFn::Arctanh
    )
}

/// Emits `f(args)` on F32X4 values (`has_f32(f)` must hold).
pub fn emit_f32(b: &mut FunctionBuilder<'_>, refs: &MathRefs, f: MathFn, args: &[Value]) -> Value {
    let mut v = Vb {
        b,
        refs,
        f32: true,
        cold: None,
    };
    match f {
        MathFn::Exp => f32x4::exp(&mut v, args[0]),
        MathFn::Exp2 => exp::exp2(&mut v, &f32x4::FAMILY, args[0]),
        MathFn::Expm1 => exp::expm1(&mut v, &f32x4::FAMILY, args[0]),
        MathFn::Log => f32x4::log(&mut v, args[0]),
        MathFn::Log2 => f32x4::log2(&mut v, args[0]),
        MathFn::Log10 => f32x4::log10(&mut v, args[0]),
        MathFn::Log1p => f32x4::log1p(&mut v, args[0]),
        MathFn::Sin => f32x4::sin(&mut v, args[0]),
        MathFn::Cos => f32x4::cos(&mut v, args[0]),
        MathFn::Tan => f32x4::tan(&mut v, args[0]),
        MathFn::Tanh => hyperbolic::tanh(&mut v, &f32x4::HYP, args[0]),
        MathFn::Sinh => hyperbolic::sinh(&mut v, &f32x4::HYP, args[0]),
        MathFn::Cosh => hyperbolic::cosh(&mut v, &f32x4::HYP, args[0]),
        MathFn::Arcsin => asin::asin(&mut v, args[0]),
        MathFn::Arccos => asin::acos(&mut v, args[0]),
        MathFn::Arctan => atan::atan(&mut v, args[0]),
        MathFn::Arctan2 => atan::atan2(&mut v, args[0], args[1]),
        MathFn::Cbrt => cbrt::cbrt(&mut v, args[0]),
        MathFn::Arcsinh => arc_hyp::asinh(&mut v, args[0]),
        MathFn::Arccosh => arc_hyp::acosh(&mut v, args[0]),
        MathFn::Arctanh => arc_hyp::atanh(&mut v, args[0]),
        _ => unreachable!("{f:?} has no F32X4 implementation"),
    }
}

/// Emits `f(args)` on F64X2 values (`has_vector(f)` must hold).
pub fn emit(b: &mut FunctionBuilder<'_>, refs: &MathRefs, f: MathFn, args: &[Value]) -> Value {
    let mut v = Vb {
        b,
        refs,
        f32: false,
        cold: None,
    };
    let x = args[0];
    match f {
        MathFn::Exp => exp::exp(&mut v, x),
        MathFn::Exp2 => exp::exp2(&mut v, &exp::FAMILY, x),
        MathFn::Expm1 => exp::expm1(&mut v, &exp::FAMILY, x),
        MathFn::Log => log::log(&mut v, x),
        MathFn::Log2 => log::log2(&mut v, x),
        MathFn::Log10 => log::log10(&mut v, x),
        MathFn::Log1p => log::log1p(&mut v, x),
        MathFn::Sin => trig::sin(&mut v, x),
        MathFn::Cos => trig::cos(&mut v, x),
        MathFn::Tan => trig::tan(&mut v, x),
        MathFn::Tanh => hyperbolic::tanh(&mut v, &hyperbolic::HYP, x),
        MathFn::Pow => pow::pow(&mut v, x, args[1]),
        MathFn::Erf => erf::erf(&mut v, x),
        MathFn::Erfc => erf::erfc(&mut v, x),
        MathFn::Sinh => hyperbolic::sinh(&mut v, &hyperbolic::HYP, x),
        MathFn::Cosh => hyperbolic::cosh(&mut v, &hyperbolic::HYP, x),
        MathFn::Arcsin => asin::asin(&mut v, x),
        MathFn::Arccos => asin::acos(&mut v, x),
        MathFn::Arctan => atan::atan(&mut v, x),
        MathFn::Arctan2 => atan::atan2(&mut v, x, args[1]),
        MathFn::Cbrt => cbrt::cbrt(&mut v, x),
        MathFn::Hypot => hypot::hypot(&mut v, x, args[1]),
        MathFn::Arcsinh => arc_hyp::asinh(&mut v, x),
        MathFn::Arccosh => arc_hyp::acosh(&mut v, x),
        MathFn::Arctanh => arc_hyp::atanh(&mut v, x),
        _ => unreachable!("{f:?} has no vector implementation"),
    }
}

/// Emits `f(args)` on f32 values widened to F64X2, for a result the caller rounds once to f32: the
/// f32 algorithm computed in f64 where `f` has one (pow: `pow::pow_f32`), else [`emit`]'s.
pub fn emit_widened(b: &mut FunctionBuilder<'_>, refs: &MathRefs, f: MathFn, args: &[Value]) -> Value {
    if f != MathFn::Pow {
        return emit(b, refs, f, args);
    }
    let mut v = Vb {
        b,
        refs,
        f32: false,
        cold: None,
    };
    pow::pow_f32(&mut v, args[0], args[1])
}

/// `(erfc(x), erfc(-x))` on one F64X2 `x`, sharing the work of the two (see `erf::erfc_pair`).
pub fn emit_erfc_pair(b: &mut FunctionBuilder<'_>, refs: &MathRefs, x: Value) -> (Value, Value) {
    let mut v = Vb {
        b,
        refs,
        f32: false,
        cold: None,
    };
    erf::erfc_pair(&mut v, x)
}

/// A small assembler for F64X2 / I64X2 arithmetic: constants, lane masks, selects, bit operations.
pub(crate) struct Vb<'x, 'a> {
    pub b: &'x mut FunctionBuilder<'a>,
    pub refs: &'x MathRefs,
    /// F32X4 / I32X4 rather than F64X2 / I64X2.
    pub f32: bool,
    /// Inside a cold block ([`Vb::guard_many`]): a scalar zero (I64) the compiler cannot prove zero,
    /// which the constants made here depend on (see [`Vb::c`]).
    pub cold: Option<Value>,
}

impl Vb<'_, '_> {
    /// The float vector type.
    pub fn ft(&self) -> types::Type {
        if self.f32 { types::F32X4 } else { types::F64X2 }
    }
    /// The integer vector type of the same lanes.
    pub fn it(&self) -> types::Type {
        if self.f32 { types::I32X4 } else { types::I64X2 }
    }
    /// A splatted float constant (rounded to f32 on F32X4).
    ///
    /// A constant is a pure value with no arguments, which Cranelift hoists out of the loop (and
    /// merges with an equal one elsewhere), so a cold block's constants would be live, and take
    /// registers or spill slots, across the whole loop. Inside a cold block, the constant's bits are
    /// therefore or-ed with [`Vb::cold`], a zero computed in that block from the branch condition:
    /// the constant then stays in the block that uses it, costing a few instructions when taken.
    pub fn c(&mut self, x: f64) -> Value {
        let ft = self.ft();
        if let Some(z) = self.cold {
            let (it, ty, bits) = if self.f32 {
                (types::I32, types::F32, (x as f32).to_bits() as i64)
            } else {
                (types::I64, types::F64, x.to_bits() as i64)
            };
            let s = self.cold_bits(it, z, bits);
            let s = self.b.ins().bitcast(ty, cast(), s);
            return self.b.ins().splat(ft, s);
        }
        let s = if self.f32 {
            self.b.ins().f32const(x as f32)
        } else {
            self.b.ins().f64const(x)
        };
        self.b.ins().splat(ft, s)
    }
    /// A splatted integer constant (its low 32 bits on I32X4).
    pub fn ci(&mut self, x: i64) -> Value {
        let it = self.it();
        if let Some(z) = self.cold {
            let (st, bits) = if self.f32 {
                (types::I32, x as i32 as u32 as i64)
            } else {
                (types::I64, x)
            };
            let s = self.cold_bits(st, z, bits);
            return self.b.ins().splat(it, s);
        }
        let s = if self.f32 {
            self.b.ins().iconst(types::I32, x as i32 as u32 as i64)
        } else {
            self.b.ins().iconst(types::I64, x)
        };
        self.b.ins().splat(it, s)
    }
    /// `bits` as a scalar of type `it` (I64 or I32) that depends on the cold block's zero `z`, so
    /// that Cranelift neither hoists it out of the block nor merges it with the fast path's.
    fn cold_bits(&mut self, it: types::Type, z: Value, bits: i64) -> Value {
        let z = if it == types::I64 {
            z
        } else {
            self.b.ins().ireduce(it, z)
        };
        let k = self.b.ins().iconst(it, bits);
        self.b.ins().bor(k, z)
    }
    pub fn add(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fadd(a, b)
    }
    pub fn sub(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fsub(a, b)
    }
    pub fn mul(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fmul(a, b)
    }
    pub fn div(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().fdiv(a, b)
    }
    /// `a * b + c` with one rounding.
    pub fn fma(&mut self, a: Value, b: Value, c: Value) -> Value {
        self.b.ins().fma(a, b, c)
    }
    pub fn addc(&mut self, a: Value, c: f64) -> Value {
        let c = self.c(c);
        self.add(a, c)
    }
    pub fn mulc(&mut self, a: Value, c: f64) -> Value {
        let c = self.c(c);
        self.mul(a, c)
    }
    pub fn neg(&mut self, a: Value) -> Value {
        self.b.ins().fneg(a)
    }
    pub fn abs(&mut self, a: Value) -> Value {
        self.b.ins().fabs(a)
    }
    /// The correctly rounded square root.
    pub fn sqrt(&mut self, a: Value) -> Value {
        self.b.ins().sqrt(a)
    }
    /// Round to the nearest integer, ties to even.
    pub fn nearest(&mut self, a: Value) -> Value {
        self.b.ins().nearest(a)
    }
    pub fn floor(&mut self, a: Value) -> Value {
        self.b.ins().floor(a)
    }
    pub fn trunc(&mut self, a: Value) -> Value {
        self.b.ins().trunc(a)
    }
    /// A lane mask (I64X2, all ones where true).
    pub fn cmp(&mut self, cc: FloatCC, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(cc, a, b)
    }
    pub fn cmpc(&mut self, cc: FloatCC, a: Value, c: f64) -> Value {
        let c = self.c(c);
        self.cmp(cc, a, c)
    }
    pub fn icmp(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        self.b.ins().icmp(cc, a, b)
    }
    pub fn and(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().band(a, b)
    }
    pub fn or(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bor(a, b)
    }
    pub fn xor(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().bxor(a, b)
    }
    pub fn not(&mut self, a: Value) -> Value {
        self.b.ins().bnot(a)
    }
    pub fn andc(&mut self, a: Value, c: i64) -> Value {
        let c = self.ci(c);
        self.and(a, c)
    }
    pub fn iadd(&mut self, a: Value, b: Value) -> Value {
        self.b.ins().iadd(a, b)
    }
    pub fn iaddc(&mut self, a: Value, c: i64) -> Value {
        let c = self.ci(c);
        self.iadd(a, c)
    }
    pub fn shl(&mut self, a: Value, n: i64) -> Value {
        self.b.ins().ishl_imm_u(a, n)
    }
    pub fn ushr(&mut self, a: Value, n: i64) -> Value {
        self.b.ins().ushr_imm_u(a, n)
    }
    /// The bits of a float vector as the integer vector of its lanes.
    pub fn bits(&mut self, a: Value) -> Value {
        let it = self.it();
        self.b.ins().bitcast(it, cast(), a)
    }
    /// Integer lanes as float lanes.
    pub fn float(&mut self, a: Value) -> Value {
        let ft = self.ft();
        self.b.ins().bitcast(ft, cast(), a)
    }
    /// `m ? a : b` lane by lane (`m` a lane mask, `a`, `b` F64X2).
    pub fn sel(&mut self, m: Value, a: Value, b: Value) -> Value {
        let m = self.float(m);
        self.b.ins().bitselect(m, a, b)
    }
    /// `m ? c : b` for a constant `c`.
    pub fn selc(&mut self, m: Value, c: f64, b: Value) -> Value {
        let c = self.c(c);
        self.sel(m, c, b)
    }
    /// `|a|` with the sign bit of `s`.
    pub fn copysign(&mut self, a: Value, s: Value) -> Value {
        let ab = self.bits(a);
        let sb = self.bits(s);
        let (mag, sign) = if self.f32 {
            (i32::MAX as i64, i32::MIN as i64)
        } else {
            (i64::MAX, i64::MIN)
        };
        let ab = self.andc(ab, mag);
        let sb = self.andc(sb, sign);
        let r = self.or(ab, sb);
        self.float(r)
    }
    /// `a` with the sign bit of `s` or-ed in (`a`'s own sign bit clear: [`Vb::copysign`] less one
    /// operation).
    pub fn or_sign(&mut self, a: Value, s: Value) -> Value {
        let ab = self.bits(a);
        let sb = self.bits(s);
        let sign = if self.f32 { i32::MIN as i64 } else { i64::MIN };
        let sb = self.andc(sb, sign);
        let r = self.or(ab, sb);
        self.float(r)
    }
    /// The sign bit of `a` as a lane mask (true for -0.0 and negative NaNs too).
    pub fn sign_mask(&mut self, a: Value) -> Value {
        let ab = self.bits(a);
        let z = self.ci(0);
        self.icmp(IntCC::SignedLessThan, ab, z)
    }
    /// `c0 + c1 x + c2 x² + ...` by Horner's rule with FMA (`coeffs` in ascending order).
    pub fn poly(&mut self, x: Value, coeffs: &[f64]) -> Value {
        let (&last, rest) = coeffs.split_last().expect("a polynomial has coefficients");
        let mut acc = self.c(last);
        for &c in rest.iter().rev() {
            let c = self.c(c);
            acc = self.fma(acc, x, c);
        }
        acc
    }
    /// `2^j` for integers `j` in [-1022, 1023] (f32: [-126, 127]): `j` plus the exponent bias placed in
    /// the exponent field.
    pub fn pow2(&mut self, j: Value) -> Value {
        // j + (1.5·2^52 + 1023) holds j + 1023 in its low mantissa bits; shifting by 52 keeps just them
        let (magic, shift) = if self.f32 {
            (12582912.0 + 127.0, 23)
        } else {
            (6755399441055744.0 + 1023.0, 52)
        };
        let t = self.addc(j, magic);
        let t = self.bits(t);
        let t = self.shl(t, shift);
        self.float(t)
    }
    /// `p · 2^k` for integers `k` that keep the result normal: `k` added into the exponent field.
    pub fn ldexp_fast(&mut self, p: Value, k: Value) -> Value {
        let (magic, shift) = if self.f32 {
            (12582912.0, 23)
        } else {
            (6755399441055744.0, 52)
        };
        let kb = self.addc(k, magic);
        let kb = self.bits(kb);
        let kb = self.shl(kb, shift);
        let pb = self.bits(p);
        let r = self.iadd(pb, kb);
        self.float(r)
    }
    /// `p · 2^k` for integers `k` in [-1080, 1080], by two exact scalings, so that the one rounding
    /// into the subnormals happens last and overflow gives inf.
    pub fn scale(&mut self, p: Value, k: Value) -> Value {
        let h = self.mulc(k, 0.5);
        let k1 = self.floor(h);
        let k2 = self.sub(k, k1);
        let s1 = self.pow2(k1);
        let s2 = self.pow2(k2);
        let p = self.mul(p, s1);
        self.mul(p, s2)
    }
    /// The integer value of F64X2 integers `k` (|k| < 2^51) as I64X2.
    pub fn int_of(&mut self, k: Value) -> Value {
        let t = self.addc(k, 6755399441055744.0);
        let t = self.bits(t);
        self.iaddc(t, -0x4338_0000_0000_0000)
    }
    /// `(s, e)` with `s + e = a + b` exactly (Knuth's TwoSum).
    pub fn two_sum(&mut self, a: Value, b: Value) -> (Value, Value) {
        let s = self.add(a, b);
        let bb = self.sub(s, a);
        let t = self.sub(s, bb);
        let ea = self.sub(a, t);
        let eb = self.sub(b, bb);
        (s, self.add(ea, eb))
    }
    /// `(s, e)` with `s + e = a + b` exactly when `|a| >= |b|` (Dekker's Fast2Sum).
    pub fn fast_two_sum(&mut self, a: Value, b: Value) -> (Value, Value) {
        let s = self.add(a, b);
        let t = self.sub(s, a);
        (s, self.sub(b, t))
    }

    /// `fast`, or where any lane of `mask` is set, the value `slow` computes for all lanes: a branch
    /// to a cold block, so that a fast path may skip the work its rare lanes (special values, the
    /// edges of a range) need. The cold block makes its own constants (see [`Vb::c`]), so that they
    /// take no register or spill slot across the loop.
    pub fn guard(&mut self, mask: Value, fast: Value, slow: impl FnOnce(&mut Self) -> Value) -> Value {
        self.guard_many(mask, &[fast], |v| vec![slow(v)])[0]
    }

    /// [`Vb::guard`] of several values: `fast`, or where any lane of `mask` is set, the values
    /// `slow` computes (as many, of the same types).
    pub fn guard_many(
        &mut self,
        mask: Value,
        fast: &[Value],
        slow: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        self.branch(mask, fast, true, slow)
    }

    /// [`Vb::guard`] whose slow path uses the constants of the fast path (hoisted and shared as
    /// usual), for a path taken often (erf's ranges beyond the small one: most vectors of arguments
    /// spread over [-3, 3]) or one that redoes the fast path's work with few constants of its own
    /// (log's): made in the block, each constant costs a few instructions every time it is taken
    /// (erf of such arguments measured 171 instructions per element that way, against 100), and
    /// log's loop measured a quarter of an instruction per element more.
    pub fn guard_shared(&mut self, mask: Value, fast: Value, slow: impl FnOnce(&mut Self) -> Value) -> Value {
        self.branch(mask, &[fast], false, |v| vec![slow(v)])[0]
    }

    /// [`Vb::guard_many`] with the fast path's constants (see [`Vb::guard_shared`]).
    pub fn guard_many_shared(
        &mut self,
        mask: Value,
        fast: &[Value],
        slow: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        self.branch(mask, fast, false, slow)
    }

    /// The branch of the guards: `own_constants` when the block is rare enough to make its own.
    fn branch(
        &mut self,
        mask: Value,
        fast: &[Value],
        own_constants: bool,
        slow: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        let any = self.b.ins().vany_true(mask);
        let cold = self.b.create_block();
        let merge = self.b.create_block();
        let out: Vec<Value> = fast
            .iter()
            .map(|&f| {
                let ty = self.b.func.dfg.value_type(f);
                self.b.append_block_param(merge, ty)
            })
            .collect();
        let args: Vec<BlockArg> = fast.iter().map(|&f| BlockArg::Value(f)).collect();
        self.b.ins().brif(any, cold, &[], merge, &args);
        self.b.set_cold_block(cold);
        self.b.switch_to_block(cold);
        // `any` is 1 here (`vany_true` gives 0 or 1), so this is 0, which the compiler cannot see:
        // the cold block's constants are made from it and stay in the block (see `Vb::c`)
        let outer = self.cold;
        if own_constants {
            let any = self.b.ins().uextend(types::I64, any);
            self.cold = Some(self.b.ins().ushr_imm_u(any, 1));
        }
        let r = slow(self);
        self.cold = outer;
        debug_assert_eq!(r.len(), fast.len(), "a guard's two paths give as many values");
        let args: Vec<BlockArg> = r.iter().map(|&v| BlockArg::Value(v)).collect();
        self.b.ins().jump(merge, &args);
        self.b.switch_to_block(merge);
        out
    }

    /// `cur`, or where any lane of `mask` is set, the values `f` computes (which select by `mask`
    /// themselves): a branch around work that only some vectors need.
    pub fn when(
        &mut self,
        mask: Value,
        cur: &[Value],
        f: impl FnOnce(&mut Self) -> Vec<Value>,
    ) -> Vec<Value> {
        let any = self.b.ins().vany_true(mask);
        let then = self.b.create_block();
        let merge = self.b.create_block();
        let out: Vec<Value> = cur
            .iter()
            .map(|&c| {
                let ty = self.b.func.dfg.value_type(c);
                self.b.append_block_param(merge, ty)
            })
            .collect();
        let args: Vec<BlockArg> = cur.iter().map(|&c| BlockArg::Value(c)).collect();
        self.b.ins().brif(any, then, &[], merge, &args);
        self.b.switch_to_block(then);
        let new = f(self);
        let args: Vec<BlockArg> = new.iter().map(|&c| BlockArg::Value(c)).collect();
        self.b.ins().jump(merge, &args);
        self.b.switch_to_block(merge);
        out
    }

    /// `c0 + c1 x + ...` split in even and odd parts (`E(x²) + x·O(x²)`): the same number of FMAs as
    /// Horner's rule in two independent chains of half the latency.
    pub fn poly2(&mut self, x: Value, x2: Value, coeffs: &[f64]) -> Value {
        let (e, o) = self.poly_halves(x2, coeffs);
        self.fma(o, x, e)
    }
    /// The even and odd halves `(E(x2), O(x2))` of the polynomial `P(x) = E(x²) + x·O(x²)`, each in
    /// its own chain (what [`Vb::poly2`] combines).
    pub fn poly_halves(&mut self, x2: Value, coeffs: &[f64]) -> (Value, Value) {
        let even: Vec<f64> = coeffs.iter().step_by(2).copied().collect();
        let odd: Vec<f64> = coeffs.iter().skip(1).step_by(2).copied().collect();
        let e = self.poly(x2, &even);
        let o = self.poly(x2, &odd);
        (e, o)
    }

    /// Replaces `fast` by the host libm `f` computed lane by lane where any lane of `mask` is set:
    /// a branch around the calls, taken only when needed.
    pub fn slow_path(&mut self, mask: Value, f: MathFn, x: Value, fast: Value) -> Value {
        let any = self.b.ins().vany_true(mask);
        let slow = self.b.create_block();
        let merge = self.b.create_block();
        let ft = self.ft();
        let out = self.b.append_block_param(merge, ft);
        self.b.ins().brif(any, slow, &[], merge, &[BlockArg::Value(fast)]);
        self.b.set_cold_block(slow);
        self.b.switch_to_block(slow);
        let (dtype, lanes) = if self.f32 {
            (kiln_ir::DType::F32, 4u8)
        } else {
            (kiln_ir::DType::F64, 2)
        };
        let fref = self.refs.host(f, dtype);
        let mut r = fast;
        for lane in 0..lanes {
            let xl = self.b.ins().extractlane(x, lane);
            let call = self.b.ins().call(fref, &[xl]);
            let y = self.b.inst_results(call)[0];
            r = self.b.ins().insertlane(r, y, lane);
        }
        let m = self.float(mask);
        let r = self.b.ins().bitselect(m, r, fast);
        self.b.ins().jump(merge, &[BlockArg::Value(r)]);
        self.b.switch_to_block(merge);
        out
    }
}
