//! Casts between element types, bit for bit as [`kiln_ir::typed::Scalar::cast`]: a float cast to
//! an integer truncates and gives `MIN` for NaN, ±inf and out-of-range values (x86's "integer
//! indefinite", [`kiln_ir::int::Int::from_f64`]); int64 -> float64 on vectors by the float
//! path's exact bit construction ([`Gen::i64_lanes_to_f64`]), float64 -> int64 per lane (no 128-bit
//! lowering without AVX-512).

use crate::clif::cast;
use crate::lower::Gen;
use crate::lower::values::{bits, scalar_type};
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, Value, types};
use kiln_ir::ElemType;
use kiln_ir::typed::Scalar;

impl Gen<'_, '_> {
    /// Converts `x` of type `from` to `to`, as [`Scalar::cast`].
    pub(crate) fn cast(&mut self, x: Value, from: ElemType, to: ElemType) -> Value {
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
    pub(crate) fn cast_vector(&mut self, x: Value, from: ElemType, to: ElemType) -> Value {
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
            (I64, F64) => self.i64_lanes_to_f64(x),
            (F32, F64) => self.b.ins().fvpromote_low(x),
            (F64, F32) => self.b.ins().fvdemote(x),
            (F64, I32) => {
                // truncation saturates; NaN and values outside (-2**31 - 1, 2**31) give MIN instead
                let t = self.f64x2_to_i32_lanes(x);
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
            // float64 -> int64 and int64 -> float32 have no 128-bit lowering without AVX-512: per lane
            _ => self.per_lane(to, &[(x, from)], &mut |g, xs| g.cast(xs[0], from, to)),
        }
    }

    /// A float truncated toward zero into an integer; `MIN` for NaN, ±inf and out of range.
    pub(crate) fn float_to_int(&mut self, x: Value, from: ElemType, to: ElemType) -> Value {
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

    /// The four lanes of an `i32x4` as two `f64x2` (exact; `cvtdq2pd` on each half).
    pub(crate) fn i32x4_to_f64x2(&mut self, a: Value) -> (Value, Value) {
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

    /// An `f64x2` truncated (saturating) into lanes 0 and 1 of an `i32x4`, lanes 2 and 3 zero
    /// (`cvttpd2dq`).
    pub(crate) fn f64x2_to_i32_lanes(&mut self, x: Value) -> Value {
        let z = self.vector_constant(types::I64X2, vec![0; 16]);
        let t = self.b.ins().fcvt_to_sint_sat(types::I64X2, x);
        self.b.ins().snarrow(t, z)
    }

    /// Two `f64x2` of integral values inside int32's range as one `i32x4` (`cvttpd2dq` on each).
    pub(crate) fn f64x2_to_i32x4(&mut self, lo: Value, hi: Value) -> Value {
        let lo = self.f64x2_to_i32_lanes(lo);
        let hi = self.f64x2_to_i32_lanes(hi);
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = if i < 8 { i as u8 } else { 8 + i as u8 };
        }
        self.shuffle_bytes(lo, hi, mask, types::I32X4)
    }
}
