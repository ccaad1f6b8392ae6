//! The opcodes, by (operation, type class): one lowering of every unary and binary opcode for
//! bool, integer, float, complex ([`super::complex`]) and byte-string values, at one width (a
//! scalar or one 128-bit vector of the kernel's lanes). A float kernel's opcodes are these, in its
//! dtype, with a predicate's lane mask given as 1.0 / 0.0 ([`Gen::float_unary`]).
//!
//! Every opcode computes what [`kiln_ir::int`] and the float opcodes' `eval` compute, bit for bit:
//! IEEE operations inline (no FMA contraction, no reassociation); NumPy's `minimum` / `maximum`
//! ([`Gen::minimum`]); integer `+ - *` and unary `-` wrap (Cranelift's integer ops do); integer
//! `//`, `%`, `fmod`, shifts and `**` as `int.rs` lowers them; the libm functions of float values
//! (transcendentals, NumPy's float `//`, `%`, `**`) through [`crate::math`]: vector code within its
//! ULP bound where there is one, else the interpreter's own function ([`crate::host`]) per lane.
//! Byte strings are compared inline (`==`, `!=`) or by the interpreter's function per lane.

use crate::clif::mem;
use crate::host::MathFn;
use crate::lower::Gen;
use crate::lower::values::{scalar_type, sign_bit};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, Type, Value, types};
use kiln_ir::typed::Scalar;
use kiln_ir::{BinaryOp, ElemType, UnaryOp};

/// The float opcodes a typed kernel compiles: IEEE operations inline, and the libm functions
/// (transcendentals, NumPy's float `//`, `%`, `**`...) through [`Gen::function`].
pub(crate) fn float_unary_compiles(op: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        op,
        Neg | Abs
            | Sqrt
            | Floor
            | Ceil
            | Trunc
            | Round
            | IsNan
            | IsInf
            | IsFinite
            | Signbit
            | Not
            | Recip
            | Sign
            | Deg2Rad
            | Rad2Deg
    ) || MathFn::of_unary(op).is_some()
}

pub(crate) fn float_binary_compiles(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(
        op,
        Add | Sub | Mul | Div | Min | Max | Fmax | Fmin | Copysign | Lt | Le | Gt | Ge | Eq | Ne
    ) || MathFn::of_binary(op).is_some()
}

/// The integer opcodes a typed kernel compiles: all the typing gives integers.
pub(crate) fn int_binary_compiles(op: BinaryOp) -> bool {
    use BinaryOp::*;
    matches!(
        op,
        Add | Sub
            | Mul
            | FloorDiv
            | Rem
            | Fmod
            | Pow
            | Min
            | Max
            | Fmin
            | Fmax
            | BitAnd
            | BitOr
            | BitXor
            | Shl
            | Shr
            | Lt
            | Le
            | Gt
            | Ge
            | Eq
            | Ne
    )
}

impl Gen<'_, '_> {
    /// A unary opcode on `x` of type `t` (the operand's).
    pub(crate) fn unary(&mut self, op: UnaryOp, x: Value, t: ElemType) -> Value {
        use UnaryOp::*;
        if t.is_complex() {
            return self.complex_unary(op, x, t);
        }
        let vector = self.is_vector(x);
        if t == ElemType::Bool {
            return match op {
                Not | Invert => self.not_bool(x),
                Abs => x,
                IsNan | IsInf => self.konst(Scalar::Bool(false), vector),
                IsFinite => self.konst(Scalar::Bool(true), vector),
                _ => unreachable!("the typing casts bool operands of {op} to float64"),
            };
        }
        if t.is_float() {
            return match op {
                Neg => self.b.ins().fneg(x),
                Abs => self.b.ins().fabs(x),
                Sqrt => self.b.ins().sqrt(x),
                Floor => self.b.ins().floor(x),
                Ceil => self.b.ins().ceil(x),
                Trunc => self.b.ins().trunc(x),
                Round => self.b.ins().nearest(x),
                IsNan => self.b.ins().fcmp(FloatCC::Unordered, x, x),
                IsInf | IsFinite => {
                    let a = self.b.ins().fabs(x);
                    let inf = self.konst(Scalar::F64(f64::INFINITY).cast(t), vector);
                    let cc = if op == IsInf {
                        FloatCC::Equal
                    } else {
                        FloatCC::LessThan
                    };
                    self.b.ins().fcmp(cc, a, inf)
                }
                // kiln's logical not of a float: true where the value is 0 (NaN is true)
                Not => {
                    let z = self.konst(Scalar::F64(0.0).cast(t), vector);
                    self.b.ins().fcmp(FloatCC::Equal, x, z)
                }
                Signbit => sign_bit(self.b, x),
                Recip => {
                    let one = self.konst(Scalar::F64(1.0).cast(t), vector);
                    self.b.ins().fdiv(one, x)
                }
                // one multiplication by the constant `eval` uses (`op.eval(1)` is exactly it), in
                // the value's type
                Deg2Rad | Rad2Deg => {
                    let c = match t {
                        ElemType::F32 => Scalar::F32(op.eval(1.0f32)),
                        _ => Scalar::F64(op.eval(1.0f64)),
                    };
                    let c = self.konst(c, vector);
                    self.b.ins().fmul(x, c)
                }
                // NaN stays NaN; else (x > 0) - (x < 0), so ±0 gives +0
                Sign => {
                    let zero = self.konst(Scalar::F64(0.0).cast(t), vector);
                    let gt = self.b.ins().fcmp(FloatCC::GreaterThan, x, zero);
                    let lt = self.b.ins().fcmp(FloatCC::LessThan, x, zero);
                    let g = self.mask_one(gt, t);
                    let l = self.mask_one(lt, t);
                    let r = self.b.ins().fsub(g, l);
                    let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                    self.pick(nan, x, r)
                }
                // the vector code of `crate::math` (within its ULP bound), else the interpreter's
                // own function called per lane
                _ => match MathFn::of_unary(op) {
                    Some(f) => self.function(f, t, &[x]),
                    None => unreachable!("typed.rs routes {op} of floats to the interpreter"),
                },
            };
        }
        match op {
            Neg => self.b.ins().ineg(x),
            Abs => self.b.ins().iabs(x),
            Invert => self.b.ins().bnot(x),
            Sign => {
                // (x < 0) - (x > 0) on masks (-1 / 0); (x > 0) - (x < 0) on 0 / 1 flags
                let z = self.int_zero(t, vector);
                let gt = self.b.ins().icmp(IntCC::SignedGreaterThan, x, z);
                let lt = self.b.ins().icmp(IntCC::SignedLessThan, x, z);
                if vector {
                    self.b.ins().isub(lt, gt)
                } else {
                    let ty = scalar_type(t);
                    let (gt, lt) = (self.b.ins().uextend(ty, gt), self.b.ins().uextend(ty, lt));
                    self.b.ins().isub(gt, lt)
                }
            }
            Floor | Ceil | Trunc | Round => x,
            IsNan | IsInf => self.konst(Scalar::Bool(false), vector),
            IsFinite => self.konst(Scalar::Bool(true), vector),
            _ => unreachable!("the typing casts integer operands of {op} to float64"),
        }
    }

    /// A binary opcode on `a` and `b` of type `t`; `b_const`: `b` as a compile-time constant.
    pub(crate) fn binary(
        &mut self,
        op: BinaryOp,
        a: Value,
        b: Value,
        t: ElemType,
        b_const: Option<Scalar>,
    ) -> Value {
        use BinaryOp::*;
        if op == Complex {
            return self.complex_of(a, b);
        }
        if t.is_complex() {
            return self.complex_binary(op, a, b, t);
        }
        if t == ElemType::Bool {
            return match op {
                Add | Max | Fmax | Or | BitOr => self.b.ins().bor(a, b),
                Mul | Min | Fmin | And | BitAnd => self.b.ins().band(a, b),
                BitXor | Ne => self.b.ins().bxor(a, b),
                Eq => {
                    let x = self.b.ins().bxor(a, b);
                    self.not_bool(x)
                }
                Lt => {
                    let na = self.not_bool(a);
                    self.b.ins().band(na, b)
                }
                Le => {
                    let na = self.not_bool(a);
                    self.b.ins().bor(na, b)
                }
                Gt => {
                    let nb = self.not_bool(b);
                    self.b.ins().band(a, nb)
                }
                Ge => {
                    let nb = self.not_bool(b);
                    self.b.ins().bor(a, nb)
                }
                _ => unreachable!("the typing refuses {op} of two bools"),
            };
        }
        if t.is_float() {
            let cmp = |cc| Some(cc);
            let cc = match op {
                Lt => cmp(FloatCC::LessThan),
                Le => cmp(FloatCC::LessThanOrEqual),
                Gt => cmp(FloatCC::GreaterThan),
                Ge => cmp(FloatCC::GreaterThanOrEqual),
                Eq => cmp(FloatCC::Equal),
                Ne => cmp(FloatCC::NotEqual),
                _ => None,
            };
            if let Some(cc) = cc {
                return self.b.ins().fcmp(cc, a, b);
            }
            return match op {
                Add => self.b.ins().fadd(a, b),
                Sub => self.b.ins().fsub(a, b),
                Mul => self.b.ins().fmul(a, b),
                Div => self.b.ins().fdiv(a, b),
                Min => self.minimum(a, b),
                Max => self.maximum(a, b),
                // C's fmax / fmin: `a` where `a >= b` (`a <= b`) or `b` is NaN, else `b`
                Fmax | Fmin => {
                    let cc = if op == Fmax {
                        FloatCC::GreaterThanOrEqual
                    } else {
                        FloatCC::LessThanOrEqual
                    };
                    let keep = self.b.ins().fcmp(cc, a, b);
                    let nan = self.b.ins().fcmp(FloatCC::Unordered, b, b);
                    let m = self.b.ins().bor(keep, nan);
                    self.pick(m, a, b)
                }
                Copysign if !self.is_vector(a) => self.b.ins().fcopysign(a, b),
                // on vectors (no `fcopysign` lowering for them): `a`'s bits but the sign bit of `b`
                Copysign => {
                    let sign = self.konst(Scalar::F64(-0.0).cast(t), true);
                    self.b.ins().bitselect(sign, b, a)
                }
                _ => match MathFn::of_binary(op) {
                    Some(f) => self.function(f, t, &[a, b]),
                    None => unreachable!("typed.rs routes {op} of floats to the interpreter"),
                },
            };
        }
        let vector = self.is_vector(a);
        let icmp = |cc| Some(cc);
        let cc = match op {
            Lt => icmp(IntCC::SignedLessThan),
            Le => icmp(IntCC::SignedLessThanOrEqual),
            Gt => icmp(IntCC::SignedGreaterThan),
            Ge => icmp(IntCC::SignedGreaterThanOrEqual),
            Eq => icmp(IntCC::Equal),
            Ne => icmp(IntCC::NotEqual),
            _ => None,
        };
        if let Some(cc) = cc {
            return self.b.ins().icmp(cc, a, b);
        }
        match op {
            Add => self.b.ins().iadd(a, b),
            Sub => self.b.ins().isub(a, b),
            Mul => self.b.ins().imul(a, b),
            Min | Fmin => self.b.ins().smin(a, b),
            Max | Fmax => self.b.ins().smax(a, b),
            BitAnd => self.b.ins().band(a, b),
            BitOr => self.b.ins().bor(a, b),
            BitXor => self.b.ins().bxor(a, b),
            Shl | Shr => match b_const {
                Some(c) => self.shift_by(op, a, t, c),
                None if vector => {
                    self.per_lane(t, &[(a, t), (b, t)], &mut |g, xs| g.shift(op, xs[0], xs[1], t))
                }
                None => self.shift(op, a, b, t),
            },
            FloorDiv | Rem | Fmod if vector => match b_const {
                Some(Scalar::I32(d)) if d != i32::MIN => self.divide_i32x4_by(op, a, d),
                Some(Scalar::I64(d)) => self.divide_i64x2_by(op, a, d),
                // int32's `i32::MIN`: per lane, a constant
                Some(c) => self.divide_lanes(op, a, b, t, Some(c)),
                None if t == ElemType::I32 => self.divide_i32x4(op, a, b),
                None if t == ElemType::I64 => self.divide_i64x2(op, a, b, None),
                None => self.divide_lanes(op, a, b, t, None),
            },
            FloorDiv | Rem | Fmod => self.divide(op, a, b, t),
            Pow => self.pow(a, b, t, b_const),
            _ => unreachable!("typed.rs routes {op} of integers to the interpreter"),
        }
    }

    /// The libm function `f` of float values of type `t` (`args`): [`crate::math::lower`] (vector
    /// code within the function's ULP bound where it has it, else the interpreter's own function
    /// per lane); a half-filled vector's host calls on the kernel's lanes only (its lanes 2 and 3
    /// are copies no result reads).
    pub(crate) fn function(&mut self, f: MathFn, t: ElemType, args: &[Value]) -> Value {
        let calls = !(self.math.inline && crate::vmath::has_vector(f));
        if calls && self.is_vector(args[0]) && self.half(t) {
            let typed: Vec<(Value, ElemType)> = args.iter().map(|&a| (a, t)).collect();
            return self.per_lane(t, &typed, &mut |g, xs| crate::math::lower(g.b, &g.math, f, xs));
        }
        crate::math::lower(self.b, &self.math, f, args)
    }

    /// The address of the interned string constant `s` (it lives as long as the process).
    pub(crate) fn string(&mut self, s: kiln_ir::bytes::ByteStr, vector: bool) -> Value {
        let x = self.b.ins().iconst(types::I64, s.bytes().as_ptr() as i64);
        if vector {
            self.b.ins().splat(types::I64X2, x)
        } else {
            x
        }
    }

    /// `op` (a comparison or `contains`) of the byte strings at `a` and `b` (their addresses, of
    /// types `ta` and `tb`): the interpreter's own function, called per lane (`call::bytes_op`).
    pub(crate) fn bytes_op(&mut self, op: BinaryOp, a: Value, ta: ElemType, b: Value, tb: ElemType) -> Value {
        if self.is_vector(a) {
            let args = [(a, ElemType::I64), (b, ElemType::I64)];
            return self.per_lane(ElemType::Bool, &args, &mut |g, xs| {
                g.bytes_op(op, xs[0], ta, xs[1], tb)
            });
        }
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
            return self.bytes_equal(op, a, ta.size(), b, tb.size());
        }
        let f = self
            .math
            .bytes()
            .expect("a kernel comparing byte strings imports the host function");
        let code = self.b.ins().iconst(types::I64, crate::bytes::code(op));
        let wa = self.b.ins().iconst(types::I64, ta.size() as i64);
        let wb = self.b.ins().iconst(types::I64, tb.size() as i64);
        let call = self.b.ins().call(f, &[code, a, wa, b, wb]);
        self.b.inst_results(call)[0]
    }

    /// `==` or `!=` (`op`) of the `wa` bytes at `a` and the `wb` bytes at `b`, each padded with NULs
    /// (`kiln_ir::bytes::compare`'s equality), inline: the first `min(wa, wb)` bytes of both xor-ed
    /// and the longer one's rest or-ed in, 8, 4, 2 and 1 bytes a load (each within its string's
    /// width: the widths are the strings' types'), equal where nothing is set; an `i8` 0 / 1.
    pub(crate) fn bytes_equal(&mut self, op: BinaryOp, a: Value, wa: usize, b: Value, wb: usize) -> Value {
        /// The loads that cover bytes `from..to`: (offset, type), widest first.
        fn pieces(from: usize, to: usize) -> Vec<(usize, Type)> {
            let mut out = Vec::new();
            let mut at = from;
            for (n, ty) in [(8, types::I64), (4, types::I32), (2, types::I16), (1, types::I8)] {
                while to - at >= n {
                    out.push((at, ty));
                    at += n;
                }
            }
            out
        }
        let load = |g: &mut Self, base: Value, at: usize, ty: Type| {
            let x = g.b.ins().load(ty, mem(), base, at as i32);
            if ty == types::I64 {
                x
            } else {
                g.b.ins().uextend(types::I64, x)
            }
        };
        let n = wa.min(wb);
        let mut acc = self.b.ins().iconst(types::I64, 0);
        for (at, ty) in pieces(0, n) {
            let x = load(self, a, at, ty);
            let y = load(self, b, at, ty);
            let d = self.b.ins().bxor(x, y);
            acc = self.b.ins().bor(acc, d);
        }
        let (longer, w) = if wa > wb { (a, wa) } else { (b, wb) };
        for (at, ty) in pieces(n, w) {
            let x = load(self, longer, at, ty);
            acc = self.b.ins().bor(acc, x);
        }
        let cc = if op == BinaryOp::Eq {
            IntCC::Equal
        } else {
            IntCC::NotEqual
        };
        self.b.ins().icmp_imm_u(cc, acc, 0)
    }

    /// `==` or `!=` (`op`) of the byte strings at `a` (of type `ta`: one address, or a vector of
    /// them, `i64x2`) and the constant `c` (`kiln_ir::bytes::compare`'s equality: each padded
    /// with NULs), inline: the string's `w` bytes xor-ed with the constant's first `w` (padded)
    /// in words of 8, else 4, 2 or 1 bytes, the last word ending at the string's end (overlapping
    /// the one before it: bytes compared twice are compared with the same constant bytes), equal
    /// where nothing is set and the constant holds only NULs past `w`. An `i8` 0 / 1 of one string,
    /// the `i64x2` mask of a vector of them (each lane's bytes loaded on its own, compared
    /// together).
    pub(crate) fn bytes_equal_const(&mut self, op: BinaryOp, a: Value, ta: ElemType, c: &[u8]) -> Value {
        let w = ta.size();
        let vector = self.is_vector(a);
        // a constant longer than the string, with a byte other than NUL past it: never equal
        let never = c.iter().skip(w).any(|&x| x != 0);
        let padded: Vec<u8> = (0..w).map(|i| c.get(i).copied().unwrap_or(0)).collect();
        // the loads: (offset, bytes), each within the width
        let size = [8, 4, 2, 1]
            .into_iter()
            .find(|&n| n <= w)
            .expect("a string of one byte or more");
        let mut at: Vec<usize> = (0..w / size).map(|i| i * size).collect();
        if !w.is_multiple_of(size) {
            at.push(w - size);
        }
        let ty = match size {
            8 => types::I64,
            4 => types::I32,
            2 => types::I16,
            _ => types::I8,
        };
        let bases: Vec<Value> = if vector {
            (0..self.lanes).map(|l| self.b.ins().extractlane(a, l)).collect()
        } else {
            vec![a]
        };
        let mut v = None;
        for (l, &base) in bases.iter().enumerate() {
            let mut acc = None;
            for &o in &at {
                let mut word = [0u8; 8];
                word[..size].copy_from_slice(&padded[o..o + size]);
                let x = self.b.ins().load(ty, mem(), base, o as i32);
                let x = if ty == types::I64 {
                    x
                } else {
                    self.b.ins().uextend(types::I64, x)
                };
                let d = self.b.ins().bxor_imm_s(x, u64::from_le_bytes(word) as i64);
                acc = Some(match acc {
                    None => d,
                    Some(acc) => self.b.ins().bor(acc, d),
                });
            }
            let acc = acc.expect("a load");
            let acc = if never {
                self.b.ins().bor_imm_s(acc, 1)
            } else {
                acc
            };
            v = Some(match v {
                None if vector => self.b.ins().splat(types::I64X2, acc),
                None => acc,
                Some(v) => self.b.ins().insertlane(v, acc, l as u8),
            });
        }
        let v = v.expect("a string");
        let cc = if op == BinaryOp::Eq {
            IntCC::Equal
        } else {
            IntCC::NotEqual
        };
        let zero = self.b.ins().iconst(types::I64, 0);
        let zero = if vector {
            self.b.ins().splat(types::I64X2, zero)
        } else {
            zero
        };
        self.b.ins().icmp(cc, v, zero)
    }

    /// `contains(a, needle)` of the haystacks at `a` (of type `ta`) and a constant needle of 1 to
    /// 8 nonzero bytes, inline: [`kiln_ir::bytes::contains`]'s search of 8 places a word (its
    /// `contains_8`, operation for operation, the needle's bytes and the widths constants), an
    /// `i8` 0 / 1 of one haystack, or of a vector of haystacks (their addresses, `i64x2`) their
    /// `i64x2` mask: the words are loaded per lane and searched together, two haystacks an
    /// instruction. Each word is the haystack's bytes `8k..8k + 8`, zero past its width: one load
    /// where they are inside it, else its last 8 bytes shifted down, else (a width below 8) its
    /// bytes 4, 2 and 1 at a time; every load within the string's width.
    pub(crate) fn contains_const(&mut self, a: Value, ta: ElemType, needle: &[u8]) -> Value {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGHS: u64 = ONES << 7;
        let w = ta.size();
        debug_assert!((1..=8).contains(&needle.len()) && !needle.contains(&0));
        let vector = self.is_vector(a);
        // the haystacks' addresses: one, or each lane's
        let bases: Vec<Value> = if vector {
            (0..self.lanes).map(|l| self.b.ins().extractlane(a, l)).collect()
        } else {
            vec![a]
        };
        // bytes `i..i + 8` of the haystack at `base` as a little-endian word, zero past its width
        let word1 = |g: &mut Self, base: Value, i: usize| -> Value {
            if i + 8 <= w {
                g.b.ins().load(types::I64, mem(), base, i as i32)
            } else if w >= 8 {
                let x = g.b.ins().load(types::I64, mem(), base, (w - 8) as i32);
                g.b.ins().ushr_imm_s(x, (8 * (i + 8 - w)) as i64)
            } else {
                let mut acc = g.b.ins().iconst(types::I64, 0);
                let mut at = i;
                for (n, ty) in [(4, types::I32), (2, types::I16), (1, types::I8)] {
                    if w - at >= n {
                        let x = g.b.ins().load(ty, mem(), base, at as i32);
                        let x = g.b.ins().uextend(types::I64, x);
                        let x = g.b.ins().ishl_imm_s(x, (8 * (at - i)) as i64);
                        acc = g.b.ins().bor(acc, x);
                        at += n;
                    }
                }
                acc
            }
        };
        // a constant word (in every lane)
        let k = |g: &mut Self, c: u64| {
            let x = g.b.ins().iconst(types::I64, c as i64);
            if vector {
                g.b.ins().splat(types::I64X2, x)
            } else {
                x
            }
        };
        // the haystacks' word `i`: every lane's, as a vector of them where there are several
        let word = |g: &mut Self, i: usize| -> Value {
            if i >= w {
                return k(g, 0);
            }
            let mut v = None;
            for (l, &base) in bases.iter().enumerate() {
                let x = word1(g, base, i);
                v = Some(match v {
                    None if vector => g.b.ins().splat(types::I64X2, x),
                    None => x,
                    Some(v) => g.b.ins().insertlane(v, x, l as u8),
                });
            }
            v.expect("a haystack")
        };
        let shl = |g: &mut Self, x: Value, n: usize| {
            let n = g.b.ins().iconst(types::I64, n as i64);
            g.b.ins().ishl(x, n)
        };
        let shr = |g: &mut Self, x: Value, n: usize| {
            let n = g.b.ins().iconst(types::I64, n as i64);
            g.b.ins().ushr(x, n)
        };
        let low7 = k(self, !HIGHS);
        let highs = k(self, HIGHS);
        let minus_ones = k(self, ONES.wrapping_neg());
        let zero = k(self, 0);
        let mut found: Option<Value> = None;
        let mut after_nul: Option<Value> = None;
        let mut lo = word(self, 0);
        let mut base = 0;
        loop {
            let hi = (needle.len() > 1).then(|| word(self, base + 8));
            // 0x80 in exactly the zero bytes of `lo`
            let low = self.b.ins().band(lo, low7);
            let sum = self.b.ins().iadd(low, low7);
            let t = self.b.ins().bor(sum, lo);
            // `t` is all ones but 0x80 clear in exactly the zero bytes of `lo` (`nul = !t` has
            // 0x80 there): `first = nul & -nul`, with `-nul = t + 1`
            let t = self.b.ins().bor(t, low7);
            let ones = k(self, 1);
            let neg = self.b.ins().iadd(t, ones);
            let first = self.b.ins().band_not(neg, t);
            // every byte from the first NUL on: `!((first >> 7) - 1)`, which is `-(first >> 7)`
            let f7 = shr(self, first, 7);
            let dead = self.b.ins().isub(zero, f7);
            let dead = match after_nul {
                Some(after) => self.b.ins().bor(dead, after),
                None => dead,
            };
            let c0 = k(self, ONES * u64::from(needle[0]));
            let d0 = self.b.ins().bxor(lo, c0);
            let mut d = self.b.ins().bor(d0, dead);
            for (j, &c) in needle.iter().enumerate().skip(1) {
                let hi = hi.expect("a needle of two bytes or more reads the next word");
                let x = shr(self, lo, 8 * j);
                let y = shl(self, hi, 64 - 8 * j);
                let x = self.b.ins().bor(x, y);
                let cj = k(self, ONES * u64::from(c));
                let x = self.b.ins().bxor(x, cj);
                d = self.b.ins().bor(d, x);
            }
            // a zero byte in `d`: `(d - ONES) & !d & HIGHS`
            let m = self.b.ins().iadd(d, minus_ones);
            let m = self.b.ins().band_not(m, d);
            let m = self.b.ins().band(m, highs);
            let f = match found {
                Some(found) => self.b.ins().bor(found, m),
                None => m,
            };
            found = Some(f);
            base += 8;
            if base >= w {
                // a vector's result is its lanes' mask, a scalar's an i8 0 / 1
                return self.b.ins().icmp(IntCC::NotEqual, f, zero);
            }
            // all ones where `lo` held a NUL (where `t` is not all ones)
            let all_ones = k(self, u64::MAX);
            let any = self.b.ins().icmp(IntCC::NotEqual, t, all_ones);
            let all = if vector {
                any
            } else {
                let any = self.b.ins().uextend(types::I64, any);
                self.b.ins().ineg(any)
            };
            after_nul = Some(match after_nul {
                Some(after) => self.b.ins().bor(after, all),
                None => all,
            });
            lo = hi.unwrap_or_else(|| word(self, base));
        }
    }

    /// `where(c, a, b)`: `c` a bool.
    pub(crate) fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.pick(c, a, b)
    }
}
