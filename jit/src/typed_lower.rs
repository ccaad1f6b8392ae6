//! Lowering of a typed kernel's body (bool, int32, int64, float32, float64 values; see
//! [`kiln_ir::typed`]) to Cranelift IR, at one width: scalars, or one 128-bit vector per value with
//! the kernel's lane count.
//!
//! Representations. A scalar bool is an `i8` holding 0 or 1; int32, int64, float32 and float64 are
//! Cranelift's `i32 i64 f32 f64`. In a vector kernel of 4 lanes (every value 32 bits wide) int32 is
//! `i32x4`, float32 `f32x4` and bool a lane mask `i32x4` (0 or -1 per lane, what `icmp` and `fcmp`
//! give); in one of 2 lanes (every value 64 bits wide) int64 is `i64x2`, float64 `f64x2` and bool an
//! `i64x2` mask. A kernel mixing 32- and 64-bit values runs 2 lanes, its 32-bit values half-filled
//! (see `typed.rs`).
//!
//! Every opcode computes what [`kiln_ir::int`] and the float opcodes' `eval` compute, bit for bit:
//! `+ - *` and unary `-` wrap (Cranelift's integer ops do); `//`, `%` and `fmod` divide per lane
//! (x86 has no vector integer division) with a divisor made safe first (0 and -1 replaced by 1,
//! their results chosen after: 0 for a zero divisor, `-a` wrapping for -1) and the floor / sign
//! correction after; shifts give NumPy's results for counts outside `0..bits` (0 for `<<`, the sign
//! for `>>`), on vectors with an immediate count where the count is a literal and per lane otherwise;
//! `**` is square and multiply over every bit of the exponent (branch-free, so it vectorises);
//! a float cast to an integer truncates and gives `MIN` for NaN, ±inf and out-of-range values (x86's
//! "integer indefinite", [`kiln_ir::int::Int::from_f64`]). Operations Cranelift does not lower on
//! 128-bit x64 vectors (integer division, int64 <-> float64 conversions, shifts by a vector of counts)
//! run per lane: each lane extracted, computed as a scalar, and put back. So do the libm functions
//! of float values (transcendentals, NumPy's float `//`, `%`, `**`): calls of the host functions
//! that are the interpreter's own `eval` ([`crate::host`]), bit-exact by construction.

use crate::clif::{cast, mem};
use crate::host::{MathFn, MathRefs};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, Type, Value, types};
use cranelift_frontend::FunctionBuilder;
use kiln_ir::typed::{Scalar, TypedKernel};
use kiln_ir::{BinaryOp, ElemType, Node, NodeId, UnaryOp};
use std::collections::HashMap;

/// The float opcodes a typed kernel compiles: IEEE operations inline, and the libm functions
/// (transcendentals, NumPy's float `//`, `%`, `**`...) as calls of the interpreter's own function,
/// per lane on vectors (so bit-exact by construction).
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

/// A node's value as a compile-time constant: a literal cast to its type, computed by the
/// interpreter's own cast (so the constant is the interpreter's, bit for bit).
pub(crate) fn constant(k: &TypedKernel, id: NodeId) -> Option<Scalar> {
    let arena = &k.kernel.arena;
    match *arena.node(id) {
        Node::Cast(t, a) => match *arena.node(a) {
            Node::Int(v) => Some(Scalar::I64(v).cast(t)),
            // a Python float takes float32 by rounding once (as the interpreter's cast)
            Node::Literal(bits) if t == ElemType::F32 => Some(Scalar::F32(f64::from_bits(bits) as f32)),
            Node::Literal(bits) => Some(Scalar::F64(f64::from_bits(bits)).cast(t)),
            _ => None,
        },
        _ => None,
    }
}

/// Whether the sign bit of each lane of the float value `x` is set (a NaN's too), as a mask: its
/// bits read as a signed integer below zero (x64 has no vector `fcopysign` in Cranelift).
pub(crate) fn sign_bit(b: &mut FunctionBuilder<'_>, x: Value) -> Value {
    let it = b.func.dfg.value_type(x).as_int();
    let bits = b.ins().bitcast(it, crate::clif::cast(), x);
    let zero = b.ins().iconst(it.lane_type(), 0);
    let zero = if it.is_vector() {
        b.ins().splat(it, zero)
    } else {
        zero
    };
    b.ins().icmp(IntCC::SignedLessThan, bits, zero)
}

/// The bits a value of type `t` takes in memory and in a scalar register.
pub(crate) fn bits(t: ElemType) -> u32 {
    match t {
        // a byte string is held as its address
        ElemType::Bytes(_) => 64,
        _ => t.size() as u32 * 8,
    }
}

/// The scalar Cranelift type of `t`.
pub(crate) fn scalar_type(t: ElemType) -> Type {
    match t {
        ElemType::Bool => types::I8,
        ElemType::I32 => types::I32,
        ElemType::I64 => types::I64,
        ElemType::F32 => types::F32,
        ElemType::F64 => types::F64,
        // a complex value's node carries its real parts (complex_lower.rs)
        ElemType::C64 => types::F32,
        ElemType::C128 => types::F64,
        // a byte string is held as its address
        ElemType::Bytes(_) => types::I64,
    }
}

/// The generator of one typed kernel's body.
pub(crate) struct TypedGen<'a, 'b> {
    pub b: &'b mut FunctionBuilder<'a>,
    /// 1 (scalars only), 2 (64-bit values) or 4 (32-bit values).
    pub lanes: u8,
    /// The host math functions the kernel calls.
    pub math: &'b MathRefs,
    /// The imaginary parts of the complex values, by their real parts (complex_lower.rs).
    pub imag: &'b mut HashMap<Value, Value>,
}

impl TypedGen<'_, '_> {
    /// The type of a value of `t` at `vector` width.
    pub fn ty(&self, t: ElemType, vector: bool) -> Type {
        if let Some(part) = t.real_part() {
            // a complex value's parts (complex_lower.rs)
            return self.ty(part, vector);
        }
        if !vector {
            return scalar_type(t);
        }
        match (t, self.lanes) {
            (ElemType::Bool | ElemType::I32, 4) => types::I32X4,
            (ElemType::F32, 4) => types::F32X4,
            (ElemType::Bool | ElemType::I64 | ElemType::Bytes(_), 2) => types::I64X2,
            (ElemType::F64, 2) => types::F64X2,
            // a 32-bit value in a kernel of 2 lanes: its lanes 0 and 1 (half-filled)
            (ElemType::I32, 2) => types::I32X4,
            (ElemType::F32, 2) => types::F32X4,
            _ => unreachable!("a vector kernel has 2 or 4 lanes (typed.rs lanes_of)"),
        }
    }

    /// The integer lane type of a vector of `lanes` lanes (what masks are).
    fn mask_lane(&self) -> Type {
        if self.lanes == 4 { types::I32 } else { types::I64 }
    }

    pub(crate) fn is_vector(&self, v: Value) -> bool {
        self.b.func.dfg.value_type(v).is_vector()
    }

    /// Whether values of `t` are half-filled vectors here: 32 bits wide in a kernel of 2 lanes.
    fn half(&self, t: ElemType) -> bool {
        self.lanes == 2 && bits(t) == 32
    }

    /// A mask of a half-filled comparison (`i32x4`, lanes 0 and 1) as the kernel's bool (`i64x2`);
    /// any other value unchanged.
    pub fn bool_mask(&mut self, m: Value) -> Value {
        if self.lanes == 2 && self.b.func.dfg.value_type(m) == types::I32X4 {
            self.b.ins().swiden_low(m)
        } else {
            m
        }
    }

    /// The low 32 bits of each lane of an `i64x2` as the half-filled `i32x4` (lanes 0 and 1;
    /// wrapping: an int64 narrowed to int32, or a mask for 32-bit data).
    fn narrow_lanes(&mut self, v: Value) -> Value {
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = ((i / 4) % 2 * 8 + i % 4) as u8;
        }
        self.shuffle_bytes(v, v, mask, types::I32X4)
    }

    /// A constant of type `t`, as a scalar or splat.
    pub fn konst(&mut self, s: Scalar, vector: bool) -> Value {
        let t = s.ty();
        let x = match s {
            Scalar::Bool(v) if vector => {
                let lane = self.mask_lane();
                self.b.ins().iconst(lane, if v { -1 } else { 0 })
            }
            Scalar::Bool(v) => self.b.ins().iconst(types::I8, v as i64),
            Scalar::I32(v) => self.b.ins().iconst(types::I32, v as i64),
            Scalar::I64(v) => self.b.ins().iconst(types::I64, v),
            Scalar::F32(v) => self.b.ins().f32const(v),
            Scalar::F64(v) => self.b.ins().f64const(v),
            Scalar::C64(_) | Scalar::C128(_) => return self.complex_konst(s, vector),
        };
        if vector {
            let vt = self.ty(t, true);
            self.b.ins().splat(vt, x)
        } else {
            x
        }
    }

    /// Loads one element of type `t` at `addr` (scalar) or `lanes` elements (vector; bools one byte
    /// each, made into a mask).
    pub fn load(&mut self, t: ElemType, addr: Value, vector: bool) -> Value {
        if t.is_complex() {
            return self.complex_load(t, addr, vector);
        }
        if let ElemType::Bytes(w) = t {
            // a string's address: its index (`addr`, see `InputRef::base`) times its width; a
            // vector's two strings are the next two
            let first = self.b.ins().imul_imm_u(addr, i64::from(w));
            if !vector {
                return first;
            }
            let second = self.b.ins().iadd_imm_u(first, i64::from(w));
            let v = self.b.ins().splat(types::I64X2, first);
            return self.b.ins().insertlane(v, second, 1);
        }
        if t == ElemType::Bool {
            if !vector {
                return self.b.ins().load(types::I8, mem(), addr, 0);
            }
            // `lanes` bytes in one load, zero-extended lane by lane to the mask's width, negated
            let word = if self.lanes == 4 {
                self.b.ins().load(types::I32, mem(), addr, 0)
            } else {
                self.b.ins().uload16(types::I32, mem(), addr, 0)
            };
            let v = self.b.ins().splat(types::I32X4, word);
            let v = self.b.ins().bitcast(types::I8X16, cast(), v);
            let v = self.b.ins().uwiden_low(v);
            let mut v = self.b.ins().uwiden_low(v);
            if self.lanes == 2 {
                v = self.b.ins().uwiden_low(v);
            }
            return self.b.ins().ineg(v);
        }
        if vector && self.half(t) {
            // two 32-bit elements: one 64-bit load, splat (lanes 2 and 3 repeat lanes 0 and 1)
            let x = self.b.ins().load(types::I64, mem(), addr, 0);
            let v = self.b.ins().splat(types::I64X2, x);
            let ty = self.ty(t, true);
            return self.b.ins().bitcast(ty, cast(), v);
        }
        let ty = self.ty(t, vector);
        self.b.ins().load(ty, mem(), addr, 0)
    }

    /// Stores `v` (of type `t`) at `addr`: bools as one byte 0 / 1 each.
    pub fn store(&mut self, t: ElemType, v: Value, addr: Value) {
        if t.is_complex() {
            return self.complex_store(t, v, addr);
        }
        if t == ElemType::Bool && self.is_vector(v) {
            // masks to 0 / 1, narrowed to bytes (unsigned saturation keeps 0 and 1), stored at once
            let v = if self.lanes == 2 { self.narrow_lanes(v) } else { v };
            let v = self.b.ins().ineg(v);
            let z = self.konst(Scalar::I32(0), true);
            let h = self.b.ins().unarrow(v, z);
            let hz = self.b.ins().bitcast(types::I16X8, cast(), z);
            let bytes = self.b.ins().unarrow(h, hz);
            let words = self.b.ins().bitcast(types::I32X4, cast(), bytes);
            let w = self.b.ins().extractlane(words, 0);
            if self.lanes == 4 {
                self.b.ins().store(mem(), w, addr, 0);
            } else {
                self.b.ins().istore16(mem(), w, addr, 0);
            }
            return;
        }
        if self.is_vector(v) && self.half(t) {
            let w = self.b.ins().bitcast(types::I64X2, cast(), v);
            let x = self.b.ins().extractlane(w, 0);
            self.b.ins().store(mem(), x, addr, 0);
            return;
        }
        self.b.ins().store(mem(), v, addr, 0);
    }

    /// One scalar per lane (`lanes` of them, each as [`TypedGen::load`] gives a scalar) as the
    /// kernel's vector for `t`: bools (bytes 0 / 1) widened to the lane's width and negated into
    /// masks; lane 0 splat (a half-filled 32-bit vector's lanes 2 and 3 hold copies no result
    /// reads), the others inserted.
    pub fn assemble(&mut self, scalars: Vec<Value>, t: ElemType) -> Value {
        if t.is_complex() {
            return self.complex_assemble(scalars, t);
        }
        let vt = self.ty(t, true);
        let lane_ty = vt.lane_type();
        let scalars: Vec<Value> = if t == ElemType::Bool {
            scalars
                .into_iter()
                .map(|s| {
                    let w = self.b.ins().uextend(lane_ty, s);
                    self.b.ins().ineg(w)
                })
                .collect()
        } else {
            scalars
        };
        let mut v = self.b.ins().splat(vt, scalars[0]);
        for (l, &s) in scalars.iter().enumerate().skip(1) {
            v = self.b.ins().insertlane(v, s, l as u8);
        }
        v
    }

    /// Bitwise select on masks or a scalar select on a bool (`i8` 0 / 1).
    pub(crate) fn pick(&mut self, c: Value, a: Value, b: Value) -> Value {
        // a scalar bool: a scalar select
        if !self.is_vector(c) {
            return self.b.ins().select(c, a, b);
        }
        let (ta, tc) = (self.b.func.dfg.value_type(a), self.b.func.dfg.value_type(c));
        // a bool (i64x2) choosing between half-filled 32-bit values
        let c = if ta.lane_count() == 4 && tc == types::I64X2 {
            self.narrow_lanes(c)
        } else {
            c
        };
        let tc = self.b.func.dfg.value_type(c);
        if ta == tc {
            return self.b.ins().bitselect(c, a, b);
        }
        let c = self.b.ins().bitcast(ta, cast(), c);
        self.b.ins().bitselect(c, a, b)
    }

    pub(crate) fn not_bool(&mut self, x: Value) -> Value {
        if self.is_vector(x) {
            self.b.ins().bnot(x)
        } else {
            self.b.ins().bxor_imm_s(x, 1)
        }
    }

    /// `x == 0` of a bool: the mask of lanes that are false.
    fn int_zero(&mut self, t: ElemType, vector: bool) -> Value {
        let s = Scalar::I64(0).cast(t);
        self.konst(s, vector)
    }

    /// Per lane: each lane of `args` (of types `ts`) extracted as a scalar, `f` applied, the results
    /// (of type `out`) put back into a vector.
    fn per_lane(
        &mut self,
        out: ElemType,
        args: &[(Value, ElemType)],
        f: &mut dyn FnMut(&mut Self, &[Value]) -> Value,
    ) -> Value {
        let mut v = None;
        for l in 0..self.lanes {
            let xs: Vec<Value> = args
                .iter()
                .map(|&(a, t)| {
                    let x = self.b.ins().extractlane(a, l);
                    if t == ElemType::Bool {
                        self.b.ins().icmp_imm_s(IntCC::NotEqual, x, 0)
                    } else {
                        x
                    }
                })
                .collect();
            let mut r = f(self, &xs);
            if out == ElemType::Bool {
                let lane = self.mask_lane();
                let w = self.b.ins().uextend(lane, r);
                r = self.b.ins().ineg(w);
            }
            v = Some(match v {
                None => {
                    let vt = self.ty(out, true);
                    self.b.ins().splat(vt, r)
                }
                Some(v) => self.b.ins().insertlane(v, r, l),
            });
        }
        v.expect("a vector has lanes")
    }

    /// Converts `x` of type `from` to `to`, as [`Scalar::cast`].
    pub fn cast(&mut self, x: Value, from: ElemType, to: ElemType) -> Value {
        use ElemType::*;
        if from == to {
            return x;
        }
        if from.is_complex() || to.is_complex() {
            return self.complex_cast(x, from, to);
        }
        let vector = self.is_vector(x);
        match (from, to) {
            (_, Bool) if from.is_float() => {
                let z = self.konst(Scalar::F64(0.0).cast(from), vector);
                let m = self.b.ins().fcmp(FloatCC::NotEqual, x, z);
                self.bool_mask(m)
            }
            (_, Bool) => {
                let z = self.int_zero(from, vector);
                let m = self.b.ins().icmp(IntCC::NotEqual, x, z);
                self.bool_mask(m)
            }
            (Bool, _) if vector && self.half(to) => {
                let x = self.narrow_lanes(x);
                if to == I32 {
                    self.b.ins().ineg(x)
                } else {
                    let one = self.konst(Scalar::F32(1.0), true);
                    let bits = self.b.ins().bitcast(types::I32X4, cast(), one);
                    let m = self.b.ins().band(x, bits);
                    self.b.ins().bitcast(types::F32X4, cast(), m)
                }
            }
            (Bool, I32 | I64) if vector => self.b.ins().ineg(x),
            (Bool, I32 | I64) => self.b.ins().uextend(scalar_type(to), x),
            (Bool, F32 | F64) if vector => {
                let one = self.konst(Scalar::F64(1.0).cast(to), true);
                let it = self.b.func.dfg.value_type(x);
                let bits = self.b.ins().bitcast(it, cast(), one);
                let m = self.b.ins().band(x, bits);
                let vt = self.ty(to, true);
                self.b.ins().bitcast(vt, cast(), m)
            }
            (Bool, F32 | F64) => {
                let w = self.b.ins().uextend(types::I32, x);
                self.b.ins().fcvt_from_sint(scalar_type(to), w)
            }
            _ if vector => self.cast_vector(x, from, to),
            (I32, I64) => self.b.ins().sextend(types::I64, x),
            (I64, I32) => self.b.ins().ireduce(types::I32, x),
            (I32 | I64, F32 | F64) => self.b.ins().fcvt_from_sint(scalar_type(to), x),
            (F32, F64) => self.b.ins().fpromote(types::F64, x),
            (F64, F32) => self.b.ins().fdemote(types::F32, x),
            (F32 | F64, I32 | I64) => self.float_to_int(x, from, to),
            _ => unreachable!("every pair of types is above"),
        }
    }

    /// A vector cast between two types of the kernel's lane width.
    fn cast_vector(&mut self, x: Value, from: ElemType, to: ElemType) -> Value {
        use ElemType::*;
        match (from, to) {
            (I32, F32) => self.b.ins().fcvt_from_sint(types::F32X4, x),
            // between widths (a kernel of 2 lanes, 32-bit values half-filled)
            (I32, I64) => self.b.ins().swiden_low(x),
            (I64, I32) => self.narrow_lanes(x),
            (I32, F64) => {
                let w = self.b.ins().swiden_low(x);
                self.b.ins().fcvt_from_sint(types::F64X2, w)
            }
            (F32, F64) => self.b.ins().fvpromote_low(x),
            (F64, F32) => self.b.ins().fvdemote(x),
            (F64, I32) => {
                // truncation saturates; NaN and values outside (-2**31 - 1, 2**31) give MIN instead
                let zeros = self
                    .b
                    .func
                    .dfg
                    .constants
                    .insert(cranelift_codegen::ir::ConstantData::from(&[0u8; 16][..]));
                let z = self.b.ins().vconst(types::I64X2, zeros);
                let t = self.b.ins().fcvt_to_sint_sat(types::I64X2, x);
                let t = self.b.ins().snarrow(t, z);
                let lo = self.konst(Scalar::F64(-2147483649.0), true);
                let hi = self.konst(Scalar::F64(2147483648.0), true);
                let gt = self.b.ins().fcmp(FloatCC::GreaterThan, x, lo);
                let lt = self.b.ins().fcmp(FloatCC::LessThan, x, hi);
                let ok = self.b.ins().band(gt, lt);
                let ok = self.narrow_lanes(ok);
                let min = self.konst(Scalar::I32(i32::MIN), true);
                self.b.ins().bitselect(ok, t, min)
            }
            (F32, I32) => {
                // truncation saturates; NaN and values outside [-2**31, 2**31) give MIN instead
                let t = self.b.ins().fcvt_to_sint_sat(types::I32X4, x);
                let lo = self.konst(Scalar::F32(-2147483648.0), true);
                let hi = self.konst(Scalar::F32(2147483648.0), true);
                let ge = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, x, lo);
                let lt = self.b.ins().fcmp(FloatCC::LessThan, x, hi);
                let ok = self.b.ins().band(ge, lt);
                let min = self.konst(Scalar::I32(i32::MIN), true);
                self.b.ins().bitselect(ok, t, min)
            }
            // int64 <-> float64 has no 128-bit lowering without AVX-512: per lane
            _ => self.per_lane(to, &[(x, from)], &mut |g, xs| g.cast(xs[0], from, to)),
        }
    }

    /// A float truncated toward zero into an integer; `MIN` for NaN, ±inf and out of range.
    fn float_to_int(&mut self, x: Value, from: ElemType, to: ElemType) -> Value {
        let x = if from == ElemType::F32 {
            self.b.ins().fpromote(types::F64, x)
        } else {
            x
        };
        let limit = (1u64 << (bits(to) - 1)) as f64;
        let lo = self.b.ins().f64const(-limit - 1.0);
        let hi = self.b.ins().f64const(limit);
        let gt = self.b.ins().fcmp(FloatCC::GreaterThan, x, lo);
        let lt = self.b.ins().fcmp(FloatCC::LessThan, x, hi);
        let ok = self.b.ins().band(gt, lt);
        let ty = scalar_type(to);
        let t = self.b.ins().fcvt_to_sint_sat(ty, x);
        let min = self.b.ins().iconst(
            ty,
            if to == ElemType::I32 {
                i32::MIN as i64
            } else {
                i64::MIN
            },
        );
        self.b.ins().select(ok, t, min)
    }

    /// A unary opcode on `x` of type `t` (the operand's), giving a value of type `out`.
    pub fn unary(&mut self, op: UnaryOp, x: Value, t: ElemType) -> Value {
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
                // the constant as `eval` rounds it, in the value's type
                Deg2Rad | Rad2Deg => {
                    let c = match (op, t) {
                        (Deg2Rad, ElemType::F32) => Scalar::F32(std::f32::consts::PI / 180.0),
                        (Rad2Deg, ElemType::F32) => Scalar::F32(180.0 / std::f32::consts::PI),
                        (Deg2Rad, _) => Scalar::F64(std::f64::consts::PI / 180.0),
                        _ => Scalar::F64(180.0 / std::f64::consts::PI),
                    };
                    let c = self.konst(c, vector);
                    self.b.ins().fmul(x, c)
                }
                // NaN stays NaN; else (x > 0) - (x < 0), so ±0 gives +0
                Sign => {
                    let (one, zero) = (
                        self.konst(Scalar::F64(1.0).cast(t), vector),
                        self.konst(Scalar::F64(0.0).cast(t), vector),
                    );
                    let gt = self.b.ins().fcmp(FloatCC::GreaterThan, x, zero);
                    let lt = self.b.ins().fcmp(FloatCC::LessThan, x, zero);
                    let g = self.pick(gt, one, zero);
                    let l = self.pick(lt, one, zero);
                    let r = self.b.ins().fsub(g, l);
                    let nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
                    self.pick(nan, x, r)
                }
                _ => match MathFn::of_unary(op) {
                    Some(f) => self.call_math(f, t, &[x]),
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
    pub fn binary(
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
                // NumPy's minimum / maximum: `a` where `a < b` (`a > b`) or `a` is NaN, else `b`
                Min | Max => {
                    let cc = if op == Min {
                        FloatCC::LessThan
                    } else {
                        FloatCC::GreaterThan
                    };
                    let better = self.b.ins().fcmp(cc, a, b);
                    let nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
                    let m = self.b.ins().bor(better, nan);
                    self.pick(m, a, b)
                }
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
                    Some(f) => self.call_math(f, t, &[a, b]),
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
                // a constant divisor per lane stays a constant, which Cranelift divides by
                // multiplying (its magic numbers)
                Some(c) => self.per_lane(t, &[(a, t)], &mut |g, xs| {
                    let d = g.konst(c, false);
                    g.divide(op, xs[0], d, t)
                }),
                None if t == ElemType::I32 => self.divide_i32x4(op, a, b),
                None => self.per_lane(t, &[(a, t), (b, t)], &mut |g, xs| g.divide(op, xs[0], xs[1], t)),
            },
            FloorDiv | Rem | Fmod => self.divide(op, a, b, t),
            Pow => self.pow(a, b, t, b_const),
            _ => unreachable!("typed.rs routes {op} of integers to the interpreter"),
        }
    }

    /// A shift by a compile-time count (immediate on vectors).
    fn shift_by(&mut self, op: BinaryOp, a: Value, t: ElemType, c: Scalar) -> Value {
        let count = match c {
            Scalar::I32(v) => v as i64,
            Scalar::I64(v) => v,
            _ => unreachable!("a shift count of the operand's integer type"),
        };
        let w = bits(t) as i64;
        let inside = (0..w).contains(&count);
        match (op, inside) {
            (BinaryOp::Shl, true) => self.b.ins().ishl_imm_s(a, count),
            (BinaryOp::Shl, false) => self.int_zero(t, self.is_vector(a)),
            (_, true) => self.b.ins().sshr_imm_s(a, count),
            (_, false) => self.b.ins().sshr_imm_s(a, w - 1),
        }
    }

    /// A scalar shift by a count known at run time.
    fn shift(&mut self, op: BinaryOp, a: Value, count: Value, t: ElemType) -> Value {
        let w = bits(t) as i64;
        // an unsigned compare puts negative counts outside too
        let inside = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, count, w);
        if op == BinaryOp::Shl {
            let s = self.b.ins().ishl(a, count);
            let z = self.int_zero(t, false);
            self.b.ins().select(inside, s, z)
        } else {
            let last = self.b.ins().iconst(scalar_type(t), w - 1);
            let c = self.b.ins().select(inside, count, last);
            self.b.ins().sshr(a, c)
        }
    }

    /// Scalar `//`, `%` (the divisor's sign) or `fmod` (the dividend's sign) as [`kiln_ir::int`].
    fn divide(&mut self, op: BinaryOp, a: Value, b: Value, t: ElemType) -> Value {
        let ty = scalar_type(t);
        let zero = self.b.ins().iconst(ty, 0);
        let b_zero = self.b.ins().icmp_imm_s(IntCC::Equal, b, 0);
        let b_m1 = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
        let unsafe_divisor = self.b.ins().bor(b_zero, b_m1);
        let one = self.b.ins().iconst(ty, 1);
        let safe = self.b.ins().select(unsafe_divisor, one, b);
        // with the divisor 1 for 0 and -1: q = a, r = 0, which the selects below correct
        let q = self.b.ins().sdiv(a, safe);
        let r = self.b.ins().srem(a, safe);
        if op == BinaryOp::Fmod {
            return r;
        }
        // the floor correction: a nonzero remainder whose sign differs from the divisor's
        let r_neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, r, 0);
        let b_neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, b, 0);
        let differ = self.b.ins().bxor(r_neg, b_neg);
        let r_nz = self.b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
        let fix = self.b.ins().band(differ, r_nz);
        if op == BinaryOp::Rem {
            let rb = self.b.ins().iadd(r, b);
            return self.b.ins().select(fix, rb, r);
        }
        let q1 = self.b.ins().iadd_imm_s(q, -1);
        let q = self.b.ins().select(fix, q1, q);
        let neg = self.b.ins().ineg(a);
        let q = self.b.ins().select(b_m1, neg, q);
        self.b.ins().select(b_zero, zero, q)
    }

    /// `//`, `%` or `fmod` of an `i32x4` by the constant `d` (not `i32::MIN`) in SIMD: the truncated
    /// quotient by a shift (`|d|` a power of two) or a multiply-high by Hacker's Delight's magic
    /// number (`magic_s32`, as Cranelift's own scalar rewrite), the remainder `a - q * d`, then the
    /// floor correction where the remainder's sign differs from `d`'s. `d` of 0 gives 0; -1 gives
    /// `-a` (wrapping) and remainder 0; 1 gives `a` and 0.
    fn divide_i32x4_by(&mut self, op: BinaryOp, a: Value, d: i32) -> Value {
        let zero = self.konst(Scalar::I32(0), true);
        let q = match d {
            0 => return zero,
            -1 | 1 if op != BinaryOp::FloorDiv => return zero,
            -1 => return self.b.ins().ineg(a),
            1 => return a,
            _ if d.unsigned_abs().is_power_of_two() => {
                let k = d.unsigned_abs().trailing_zeros() as i64;
                // round toward zero: add |d| - 1 to negative dividends before the shift
                let t1 = self.b.ins().sshr_imm_s(a, k - 1);
                let t2 = self.b.ins().ushr_imm_s(t1, 32 - k);
                let t3 = self.b.ins().iadd(a, t2);
                let q = self.b.ins().sshr_imm_s(t3, k);
                if d < 0 { self.b.ins().ineg(q) } else { q }
            }
            _ => {
                let (m, shift) = magic_s32(d);
                // a `vconst`, not a splat: the mid-end rewrites `swiden_low` of a splat into a
                // splat of int64, and `imul` of two `swiden_low` is what lowers to `pmuldq`
                let bytes: Vec<u8> = (0..4).flat_map(|_| m.to_le_bytes()).collect();
                let c = self.b.func.dfg.constants.insert(bytes.into());
                let mv = self.b.ins().vconst(types::I32X4, c);
                let mut q = self.mulhs_i32x4(a, mv);
                if d > 0 && m < 0 {
                    q = self.b.ins().iadd(q, a);
                } else if d < 0 && m > 0 {
                    q = self.b.ins().isub(q, a);
                }
                let q = self.b.ins().sshr_imm_s(q, shift as i64);
                let sign = self.b.ins().ushr_imm_s(q, 31);
                self.b.ins().iadd(q, sign)
            }
        };
        let dv = self.konst(Scalar::I32(d), true);
        let qd = self.b.ins().imul(q, dv);
        let r = self.b.ins().isub(a, qd);
        if op == BinaryOp::Fmod {
            return r;
        }
        // the floor correction: a remainder of the other sign than d (-1 in the mask's lanes)
        let cc = if d > 0 {
            IntCC::SignedLessThan
        } else {
            IntCC::SignedGreaterThan
        };
        let fix = self.b.ins().icmp(cc, r, zero);
        if op == BinaryOp::FloorDiv {
            return self.b.ins().iadd(q, fix);
        }
        let add = self.b.ins().band(fix, dv);
        self.b.ins().iadd(r, add)
    }

    /// `//`, `%` or `fmod` of two `i32x4` in SIMD, through float64: an int32 quotient divided in
    /// float64 is correctly rounded and never within rounding of an integer it does not equal
    /// (`|a| < 2**31` makes its error below `2**-22 / |b|`, while a non-integral quotient is at least
    /// `1 / |b|` from an integer), so `floor` (`trunc` for `fmod`) of it is the exact quotient. The
    /// remainder is `a - q * b` (wrapping); a zero divisor gives 0 and -1 gives `-a` and 0, chosen by
    /// masks after (the float quotient of those lanes is discarded).
    fn divide_i32x4(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
        let (a0, a1) = self.i32x4_to_f64x2(a);
        let (b0, b1) = self.i32x4_to_f64x2(b);
        let (q0, q1) = (self.b.ins().fdiv(a0, b0), self.b.ins().fdiv(a1, b1));
        let (q0, q1) = if op == BinaryOp::Fmod {
            (self.b.ins().trunc(q0), self.b.ins().trunc(q1))
        } else {
            (self.b.ins().floor(q0), self.b.ins().floor(q1))
        };
        let q = self.f64x2_to_i32x4(q0, q1);
        let zero = self.konst(Scalar::I32(0), true);
        let m1 = self.konst(Scalar::I32(-1), true);
        let b_zero = self.b.ins().icmp(IntCC::Equal, b, zero);
        let b_m1 = self.b.ins().icmp(IntCC::Equal, b, m1);
        let neg = self.b.ins().ineg(a);
        let q = self.b.ins().bitselect(b_m1, neg, q);
        let q = self.b.ins().band_not(q, b_zero);
        if op == BinaryOp::FloorDiv {
            return q;
        }
        let qb = self.b.ins().imul(q, b);
        let r = self.b.ins().isub(a, qb);
        self.b.ins().band_not(r, b_zero)
    }

    /// A byte shuffle of two 128-bit vectors (`mask`: bytes 0-15 of `x`, 16-31 of `y`), as `ty`.
    pub(crate) fn shuffle_bytes(&mut self, x: Value, y: Value, mask: [u8; 16], ty: Type) -> Value {
        let (x, y) = (
            self.b.ins().bitcast(types::I8X16, cast(), x),
            self.b.ins().bitcast(types::I8X16, cast(), y),
        );
        let imm = self
            .b
            .func
            .dfg
            .immediates
            .push(cranelift_codegen::ir::ConstantData::from(&mask[..]));
        let r = self.b.ins().shuffle(x, y, imm);
        self.b.ins().bitcast(ty, cast(), r)
    }

    /// The four lanes of an `i32x4` as two `f64x2` (exact; `cvtdq2pd` on each half).
    fn i32x4_to_f64x2(&mut self, a: Value) -> (Value, Value) {
        let lo = self.b.ins().swiden_low(a);
        let lo = self.b.ins().fcvt_from_sint(types::F64X2, lo);
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = 8 + (i % 8) as u8;
        }
        let high = self.shuffle_bytes(a, a, mask, types::I32X4);
        let hi = self.b.ins().swiden_low(high);
        let hi = self.b.ins().fcvt_from_sint(types::F64X2, hi);
        (lo, hi)
    }

    /// Two `f64x2` of integral values inside int32's range as one `i32x4` (`cvttpd2dq` on each).
    fn f64x2_to_i32x4(&mut self, lo: Value, hi: Value) -> Value {
        let zeros = self
            .b
            .func
            .dfg
            .constants
            .insert(cranelift_codegen::ir::ConstantData::from(&[0u8; 16][..]));
        let z = self.b.ins().vconst(types::I64X2, zeros);
        let lo = self.b.ins().fcvt_to_sint_sat(types::I64X2, lo);
        let lo = self.b.ins().snarrow(lo, z);
        let hi = self.b.ins().fcvt_to_sint_sat(types::I64X2, hi);
        let hi = self.b.ins().snarrow(hi, z);
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = if i < 8 { i as u8 } else { 8 + i as u8 };
        }
        self.shuffle_bytes(lo, hi, mask, types::I32X4)
    }

    /// The high 32 bits of each lane's signed 64-bit product (`pmuldq` on the even and odd lanes).
    fn mulhs_i32x4(&mut self, a: Value, m: Value) -> Value {
        let (al, ml) = (self.b.ins().swiden_low(a), self.b.ins().swiden_low(m));
        let lo = self.b.ins().imul(al, ml);
        let (ah, mh) = (self.b.ins().swiden_high(a), self.b.ins().swiden_high(m));
        let hi = self.b.ins().imul(ah, mh);
        let lo = self.b.ins().bitcast(types::I8X16, cast(), lo);
        let hi = self.b.ins().bitcast(types::I8X16, cast(), hi);
        // lanes 1 and 3 of each product vector: the high halves, in order
        let mut mask = [0u8; 16];
        for (i, lane) in [1u8, 3, 5, 7].into_iter().enumerate() {
            for byte in 0..4 {
                mask[i * 4 + byte] = lane * 4 + byte as u8;
            }
        }
        let imm = self
            .b
            .func
            .dfg
            .immediates
            .push(cranelift_codegen::ir::ConstantData::from(&mask[..]));
        let high = self.b.ins().shuffle(lo, hi, imm);
        self.b.ins().bitcast(types::I32X4, cast(), high)
    }

    /// `a ** e`, wrapping: square and multiply over every bit of the exponent (a negative exponent
    /// reads as 0, as [`kiln_ir::int::Int::pow`]); unrolled over the bits a constant exponent has.
    fn pow(&mut self, a: Value, e: Value, t: ElemType, e_const: Option<Scalar>) -> Value {
        let vector = self.is_vector(a);
        let one = self.konst(Scalar::I64(1).cast(t), vector);
        if let Some(c) = e_const {
            let mut e = match c {
                Scalar::I32(v) => (v as i64).max(0),
                Scalar::I64(v) => v.max(0),
                _ => unreachable!("an exponent of the base's integer type"),
            };
            let (mut acc, mut base) = (None::<Value>, a);
            while e > 0 {
                if e & 1 == 1 {
                    acc = Some(match acc {
                        None => base,
                        Some(x) => self.b.ins().imul(x, base),
                    });
                }
                e >>= 1;
                if e > 0 {
                    base = self.b.ins().imul(base, base);
                }
            }
            return acc.unwrap_or(one);
        }
        let z = self.int_zero(t, vector);
        let mut e = self.b.ins().smax(e, z);
        let (mut acc, mut base) = (one, a);
        for step in 0..bits(t) - 1 {
            let bit = self.b.ins().band(e, one);
            let set = self.b.ins().icmp(IntCC::NotEqual, bit, z);
            let m = self.b.ins().imul(acc, base);
            acc = self.pick(set, m, acc);
            if step + 2 < bits(t) {
                base = self.b.ins().imul(base, base);
                e = self.b.ins().sshr_imm_s(e, 1);
            }
        }
        acc
    }

    /// The host function `f` of float type `t` on `args` (scalars), or per lane on vectors.
    fn call_math(&mut self, f: MathFn, t: ElemType, args: &[Value]) -> Value {
        let dtype = t.float().expect("a float operation");
        if self.is_vector(args[0]) {
            let typed: Vec<(Value, ElemType)> = args.iter().map(|&a| (a, t)).collect();
            return self.per_lane(t, &typed, &mut |g, xs| g.call_math(f, t, xs));
        }
        let func = self.math.host(f, dtype);
        let call = self.b.ins().call(func, args);
        self.b.inst_results(call)[0]
    }

    /// The address of the interned string constant `s` (it lives as long as the process).
    pub fn string(&mut self, s: kiln_ir::bytes::ByteStr, vector: bool) -> Value {
        let x = self.b.ins().iconst(types::I64, s.bytes().as_ptr() as i64);
        if vector {
            self.b.ins().splat(types::I64X2, x)
        } else {
            x
        }
    }

    /// `op` (a comparison or `contains`) of the byte strings at `a` and `b` (their addresses, of
    /// types `ta` and `tb`): the interpreter's own function, called per lane (`call::bytes_op`).
    pub fn bytes_op(&mut self, op: BinaryOp, a: Value, ta: ElemType, b: Value, tb: ElemType) -> Value {
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
    fn bytes_equal(&mut self, op: BinaryOp, a: Value, wa: usize, b: Value, wb: usize) -> Value {
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

    /// `contains(a, needle)` of the haystacks at `a` (of type `ta`) and a constant needle of 1 to
    /// 8 nonzero bytes, inline: [`kiln_ir::bytes::contains`]'s search of 8 places a word (its
    /// `contains_8`, operation for operation, the needle's bytes and the widths constants), an
    /// `i8` 0 / 1. Each word is the haystack's bytes `8k..8k + 8`, zero past its width: one load
    /// where they are inside it, else its last 8 bytes shifted down, else (a width below 8) its
    /// bytes 4, 2 and 1 at a time; every load within the string's width.
    pub fn contains_const(&mut self, a: Value, ta: ElemType, needle: &[u8]) -> Value {
        if self.is_vector(a) {
            let args = [(a, ElemType::I64)];
            return self.per_lane(ElemType::Bool, &args, &mut |g, xs| {
                g.contains_const(xs[0], ta, needle)
            });
        }
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGHS: u64 = ONES << 7;
        let w = ta.size();
        debug_assert!((1..=8).contains(&needle.len()) && !needle.contains(&0));
        // bytes `i..i + 8` of the haystack as a little-endian word, zero past its width
        let word = |g: &mut Self, i: usize| -> Value {
            if i + 8 <= w {
                g.b.ins().load(types::I64, mem(), a, i as i32)
            } else if i >= w {
                g.b.ins().iconst(types::I64, 0)
            } else if w >= 8 {
                let x = g.b.ins().load(types::I64, mem(), a, (w - 8) as i32);
                g.b.ins().ushr_imm_s(x, (8 * (i + 8 - w)) as i64)
            } else {
                let mut acc = g.b.ins().iconst(types::I64, 0);
                let mut at = i;
                for (n, ty) in [(4, types::I32), (2, types::I16), (1, types::I8)] {
                    if w - at >= n {
                        let x = g.b.ins().load(ty, mem(), a, at as i32);
                        let x = g.b.ins().uextend(types::I64, x);
                        let x = g.b.ins().ishl_imm_s(x, (8 * (at - i)) as i64);
                        acc = g.b.ins().bor(acc, x);
                        at += n;
                    }
                }
                acc
            }
        };
        let k = |g: &mut Self, c: u64| g.b.ins().iconst(types::I64, c as i64);
        let mut found = k(self, 0);
        let mut after_nul = k(self, 0);
        let mut lo = word(self, 0);
        let mut base = 0;
        loop {
            let hi = (needle.len() > 1).then(|| word(self, base + 8));
            // 0x80 in exactly the zero bytes of `lo`
            let low = self.b.ins().band_imm_s(lo, !HIGHS as i64);
            let sum = self.b.ins().iadd_imm_s(low, !HIGHS as i64);
            let t = self.b.ins().bor(sum, lo);
            let t = self.b.ins().bor_imm_s(t, !HIGHS as i64);
            let nul = self.b.ins().bnot(t);
            let neg = self.b.ins().ineg(nul);
            let first = self.b.ins().band(nul, neg);
            // every byte from the first NUL on
            let f7 = self.b.ins().ushr_imm_s(first, 7);
            let f7 = self.b.ins().iadd_imm_s(f7, -1);
            let dead = self.b.ins().bnot(f7);
            let dead = self.b.ins().bor(dead, after_nul);
            let d0 = self.b.ins().bxor_imm_s(lo, (ONES * u64::from(needle[0])) as i64);
            let mut d = self.b.ins().bor(d0, dead);
            for (j, &c) in needle.iter().enumerate().skip(1) {
                let hi = hi.expect("a needle of two bytes or more reads the next word");
                let x = self.b.ins().ushr_imm_s(lo, (8 * j) as i64);
                let y = self.b.ins().ishl_imm_s(hi, (64 - 8 * j) as i64);
                let x = self.b.ins().bor(x, y);
                let x = self.b.ins().bxor_imm_s(x, (ONES * u64::from(c)) as i64);
                d = self.b.ins().bor(d, x);
            }
            // a zero byte in `d`
            let m = self.b.ins().iadd_imm_s(d, ONES.wrapping_neg() as i64);
            let nd = self.b.ins().bnot(d);
            let m = self.b.ins().band(m, nd);
            let m = self.b.ins().band_imm_s(m, HIGHS as i64);
            found = self.b.ins().bor(found, m);
            base += 8;
            if base >= w {
                return self.b.ins().icmp_imm_u(IntCC::NotEqual, found, 0);
            }
            let any = self.b.ins().icmp_imm_u(IntCC::NotEqual, nul, 0);
            let any = self.b.ins().uextend(types::I64, any);
            let all = self.b.ins().ineg(any);
            after_nul = self.b.ins().bor(after_nul, all);
            lo = hi.unwrap_or_else(|| word(self, base));
        }
    }

    /// `where(c, a, b)`: `c` a bool.
    pub fn select(&mut self, c: Value, a: Value, b: Value) -> Value {
        self.pick(c, a, b)
    }
}

/// Hacker's Delight's magic number and shift for signed 32-bit division by `d` (`|d| >= 2`), as
/// Cranelift's `magic_s32` (cranelift-codegen `opts/div_const.rs`, private there).
fn magic_s32(d: i32) -> (i32, i32) {
    let two31: u32 = 0x8000_0000;
    let mut p: i32 = 31;
    let ad = d.unsigned_abs();
    let t = two31 + ((d as u32) >> 31);
    let anc = (t - 1).wrapping_sub(t % ad);
    let (mut q1, mut q2) = (two31 / anc, two31 / ad);
    let (mut r1, mut r2) = (two31 - q1 * anc, two31 - q2 * ad);
    loop {
        p += 1;
        q1 = q1.wrapping_mul(2);
        r1 = r1.wrapping_mul(2);
        if r1 >= anc {
            q1 = q1.wrapping_add(1);
            r1 = r1.wrapping_sub(anc);
        }
        q2 = q2.wrapping_mul(2);
        r2 = r2.wrapping_mul(2);
        if r2 >= ad {
            q2 = q2.wrapping_add(1);
            r2 = r2.wrapping_sub(ad);
        }
        let delta = ad - r2;
        if !(q1 < delta || (q1 == delta && r1 == 0)) {
            break;
        }
    }
    let m = q2.wrapping_add(1);
    ((if d < 0 { m.wrapping_neg() } else { m }) as i32, p - 32)
}
