//! Integer `//`, `%`, `fmod`, shifts and `**`, as [`kiln_ir::int`] computes them. `//`, `%` and
//! `fmod` divide with a divisor made safe first (0 and -1 replaced by 1, their results chosen
//! after: 0 for a zero divisor, `-a` wrapping for -1) and the floor / sign correction after; per
//! lane on vectors (x86 has no vector integer division) but for int32, divided in SIMD by a
//! constant (a shift or a multiply-high by a magic number) or through float64, and for int64,
//! divided in SIMD by a power of two (a shift and a mask) or through float64 where a vector's
//! operands are within ±2^50 ([`Gen::divide_i64x2`]), per lane otherwise. Shifts give NumPy's
//! results for counts outside `0..bits` (0 for `<<`, the sign for `>>`), with an immediate count
//! where the count is a literal and per lane otherwise. `**` is square and multiply over the bits of
//! the exponent, in SIMD: a loop while any lane has a bit left.

use crate::clif::cast;
use crate::lower::Gen;
use crate::lower::values::{bits, scalar_type};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{BlockArg, InstBuilder, Value, types};
use kiln_ir::typed::Scalar;
use kiln_ir::{BinaryOp, ElemType};

impl Gen<'_, '_> {
    /// A shift by a compile-time count (immediate on vectors).
    pub(crate) fn shift_by(&mut self, op: BinaryOp, a: Value, t: ElemType, c: Scalar) -> Value {
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
    pub(crate) fn shift(&mut self, op: BinaryOp, a: Value, count: Value, t: ElemType) -> Value {
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
    pub(crate) fn divide(&mut self, op: BinaryOp, a: Value, b: Value, t: ElemType) -> Value {
        let ty = scalar_type(t);
        let zero = self.b.ins().iconst(ty, 0);
        let b_zero = self.b.ins().icmp_imm_s(IntCC::Equal, b, 0);
        let b_m1 = self.b.ins().icmp_imm_s(IntCC::Equal, b, -1);
        let unsafe_divisor = self.b.ins().bor(b_zero, b_m1);
        let one = self.b.ins().iconst(ty, 1);
        let safe = self.b.ins().select(unsafe_divisor, one, b);
        // with the divisor 1 for 0 and -1: q = a, r = 0, which the selects below correct
        let q = self.b.ins().sdiv(a, safe);
        // the remainder from the quotient (x86 computes both in one `idiv`, but Cranelift lowers
        // `srem` as a second one); `q * safe` does not overflow, the divisor being neither 0 nor -1
        let qs = self.b.ins().imul(q, safe);
        let r = self.b.ins().isub(a, qs);
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
    /// `-a` (wrapping) and remainder 0; 1 gives `a` and 0. `//` and `%` by `d > 1` floor from the
    /// start instead ([`Gen::floor_i32x4_by`]).
    pub(crate) fn divide_i32x4_by(&mut self, op: BinaryOp, a: Value, d: i32) -> Value {
        if d > 1
            && op != BinaryOp::Fmod
            && let Some(r) = self.floor_i32x4_by(op, a, d)
        {
            return r;
        }
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
                let q = self.magic_i32x4(a, d);
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

    /// The multiply-high by `d`'s magic number (`magic_s32`, Hacker's Delight) of `a`, adjusted by
    /// `a` where the magic's sign differs from `d`'s, and shifted: `trunc(a / d)` of a non-negative
    /// lane, one short of it for a negative one (the caller adds the sign bit, or feeds
    /// non-negative lanes only).
    fn magic_i32x4(&mut self, a: Value, d: i32) -> Value {
        let (m, shift) = magic_s32(d);
        // a `vconst`, not a splat: the mid-end rewrites `swiden_low` of a splat into a splat of
        // int64, and `imul` of two `swiden_low` is what lowers to `pmuldq`
        let bytes: Vec<u8> = (0..4).flat_map(|_| m.to_le_bytes()).collect();
        let mv = self.vector_constant(types::I32X4, bytes);
        let mut q = self.mulhs_i32x4(a, mv);
        if d > 0 && m < 0 {
            q = self.b.ins().iadd(q, a);
        } else if d < 0 && m > 0 {
            q = self.b.ins().isub(q, a);
        }
        self.b.ins().sshr_imm_s(q, i64::from(shift))
    }

    /// `//` and `%` of an `i32x4` by a constant `d > 1`, floored from the start: a power of two is
    /// an arithmetic shift (`//`) or a mask (`%`); any other `d`'s quotient is `floor(a / d) =
    /// !trunc(!a / d)` for negative `a` (`!a = -a - 1 >= 0`, and `floor(-k / d) = -(trunc((k - 1)
    /// / d) + 1)`), so the magic multiply runs on `a ^ s` (`s` the sign mask: every dividend
    /// non-negative, no sign fix) and its quotient is `^ s` again, the remainder `a - q·d`: no
    /// floor correction after. None for `fmod` (truncated).
    fn floor_i32x4_by(&mut self, op: BinaryOp, a: Value, d: i32) -> Option<Value> {
        let pow2 = d.unsigned_abs().is_power_of_two();
        match op {
            BinaryOp::FloorDiv if pow2 => Some(self.b.ins().sshr_imm_s(a, i64::from(d.trailing_zeros()))),
            BinaryOp::Rem if pow2 => {
                let mask = self.konst(Scalar::I32(d - 1), true);
                Some(self.b.ins().band(a, mask))
            }
            BinaryOp::FloorDiv | BinaryOp::Rem => {
                let s = self.b.ins().sshr_imm_s(a, 31);
                let x = self.b.ins().bxor(a, s);
                let q = self.magic_i32x4(x, d);
                let q = self.b.ins().bxor(q, s);
                if op == BinaryOp::FloorDiv {
                    return Some(q);
                }
                // the floor quotient's remainder, `a - q·d`, has `d`'s sign already
                let dv = self.konst(Scalar::I32(d), true);
                let qd = self.b.ins().imul(q, dv);
                Some(self.b.ins().isub(a, qd))
            }
            _ => None,
        }
    }

    /// `//`, `%` or `fmod` of two `i32x4` in SIMD, through float64: an int32 quotient divided in
    /// float64 is correctly rounded and never within rounding of an integer it does not equal
    /// (`|a| < 2**31` makes its error below `2**-22 / |b|`, while a non-integral quotient is at least
    /// `1 / |b|` from an integer), so `floor` (`trunc` for `fmod`) of it is the exact quotient. The
    /// remainder is `a - q * b` (wrapping); a zero divisor gives 0 and -1 gives `-a` and 0, chosen by
    /// masks after (the float quotient of those lanes is discarded).
    pub(crate) fn divide_i32x4(&mut self, op: BinaryOp, a: Value, b: Value) -> Value {
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

    /// `//`, `%` or `fmod` of two `i64x2` (`b`: an array's, or the splat of the constant `by`), as
    /// [`Gen::divide`] computes each lane: in SIMD through float64 where every lane of both
    /// operands is within ±2^50, per lane by [`Gen::divide`] otherwise (a branch per vector, to a
    /// cold block; a constant divisor stays a constant there, which Cranelift divides by
    /// multiplying).
    ///
    /// In range, the bits of 1.5·2^52 plus `x` are the bits of the float64 1.5·2^52 + `x` (exact),
    /// and `floor` (`trunc` for `fmod`) of the correctly rounded quotient is the exact one, as
    /// [`Gen::divide_i32x4`]'s: a quotient that is not an integer lies at least `1 / |b|` from one,
    /// while its rounding error is at most `|a / b|·2^-53 <= 2^-3 / |b|`. The remainder `a - q·b` is then exact (integers below 2^51 in
    /// magnitude). A zero divisor gives 0 (its lanes' float values are discarded); -1 gives `-a`,
    /// exact here.
    pub(crate) fn divide_i64x2(&mut self, op: BinaryOp, a: Value, b: Value, by: Option<i64>) -> Value {
        let t = ElemType::I64;
        // (x + 2^50) >> 51 (logical) is zero exactly where -2^50 <= x < 2^50
        let bias = self.konst(Scalar::I64(1 << 50), true);
        let (ab, bb) = (self.b.ins().iadd(a, bias), self.b.ins().iadd(b, bias));
        let (ah, bh) = (self.b.ins().ushr_imm_u(ab, 51), self.b.ins().ushr_imm_u(bb, 51));
        let out = self.b.ins().bor(ah, bh);
        let any = self.b.ins().vany_true(out);
        let cold = self.b.create_block();
        let merge = self.b.create_block();
        let result = self.b.append_block_param(merge, types::I64X2);
        let fast = self.b.create_block();
        self.b.ins().brif(any, cold, &[], fast, &[]);
        self.b.set_cold_block(cold);
        self.b.switch_to_block(cold);
        let each = self.divide_lanes(op, a, b, t, by.map(Scalar::I64));
        self.b.ins().jump(merge, &[BlockArg::Value(each)]);
        self.b.switch_to_block(fast);
        let shift = 1.5 * (1u64 << 52) as f64;
        let magic = self.konst(Scalar::I64(shift.to_bits() as i64), true);
        let magic_f = self.konst(Scalar::F64(shift), true);
        let float = |g: &mut Self, x: Value| {
            let bits = g.b.ins().iadd(x, magic);
            let f = g.b.ins().bitcast(types::F64X2, cast(), bits);
            g.b.ins().fsub(f, magic_f)
        };
        let int = |g: &mut Self, f: Value| {
            let f = g.b.ins().fadd(f, magic_f);
            let bits = g.b.ins().bitcast(types::I64X2, cast(), f);
            g.b.ins().isub(bits, magic)
        };
        let (af, bf) = (float(self, a), float(self, b));
        let q = self.b.ins().fdiv(af, bf);
        let q = if op == BinaryOp::Fmod {
            self.b.ins().trunc(q)
        } else {
            self.b.ins().floor(q)
        };
        let value = if op == BinaryOp::FloorDiv {
            int(self, q)
        } else {
            let p = self.b.ins().fmul(q, bf);
            let r = self.b.ins().fsub(af, p);
            int(self, r)
        };
        let zero = self.int_zero(t, true);
        let b_zero = self.b.ins().icmp(IntCC::Equal, b, zero);
        let value = self.b.ins().band_not(value, b_zero);
        self.b.ins().jump(merge, &[BlockArg::Value(value)]);
        self.b.switch_to_block(merge);
        result
    }

    /// `//`, `%` or `fmod` of two integer vectors of type `t` lane by lane ([`Gen::divide`]); `by`:
    /// `b` is the splat of this constant, which each lane's division takes as a constant
    /// (Cranelift then divides by multiplying by its magic number).
    pub(crate) fn divide_lanes(
        &mut self,
        op: BinaryOp,
        a: Value,
        b: Value,
        t: ElemType,
        by: Option<Scalar>,
    ) -> Value {
        match by {
            Some(c) => self.per_lane(t, &[(a, t)], &mut |g, xs| {
                let d = g.konst(c, false);
                g.divide(op, xs[0], d, t)
            }),
            None => self.per_lane(t, &[(a, t), (b, t)], &mut |g, xs| g.divide(op, xs[0], xs[1], t)),
        }
    }

    /// `//`, `%` or `fmod` of an `i64x2` by the constant `d`: by a shift and a mask where `d` is a
    /// power of two above 1 (the floor quotient is the arithmetic shift, the floor remainder the low
    /// bits; `fmod` less `d` where the dividend is negative and the remainder nonzero), else as
    /// [`Gen::divide_i64x2`] of `d` splat.
    pub(crate) fn divide_i64x2_by(&mut self, op: BinaryOp, a: Value, d: i64) -> Value {
        if d < 2 || !d.unsigned_abs().is_power_of_two() {
            let dv = self.konst(Scalar::I64(d), true);
            if !(-(1 << 50)..1 << 50).contains(&d) {
                // beyond the float64 path's range every vector would take its cold block
                return self.divide_lanes(op, a, dv, ElemType::I64, Some(Scalar::I64(d)));
            }
            // (a product by the rounded reciprocal and a fix-up where it falls one short, tried,
            // measured a third slower than the division)
            return self.divide_i64x2(op, a, dv, Some(d));
        }
        if op == BinaryOp::FloorDiv {
            return self.b.ins().sshr_imm_s(a, i64::from(d.trailing_zeros()));
        }
        let low = self.konst(Scalar::I64(d - 1), true);
        let r = self.b.ins().band(a, low);
        if op == BinaryOp::Rem {
            return r;
        }
        let zero = self.int_zero(ElemType::I64, true);
        let a_neg = self.b.ins().icmp(IntCC::SignedLessThan, a, zero);
        let nz = self.b.ins().icmp(IntCC::NotEqual, r, zero);
        let less = self.b.ins().band(a_neg, nz);
        let dv = self.konst(Scalar::I64(d), true);
        let sub = self.b.ins().band(less, dv);
        self.b.ins().isub(r, sub)
    }

    /// The high 32 bits of each lane's signed 64-bit product (`pmuldq` on the even and odd lanes).
    pub(crate) fn mulhs_i32x4(&mut self, a: Value, m: Value) -> Value {
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

    /// `a ** e`, wrapping: square and multiply over the bits of the exponent (a negative exponent
    /// reads as 0, as [`kiln_ir::int::Int::pow`]); unrolled over the bits a constant exponent has,
    /// and otherwise a loop that runs while any lane's exponent has a bit left, so that its trip
    /// count is the bit length of the vector's largest exponent, not the type's width (which the
    /// unrolled form paid in every vector, and in compile time for each `**`).
    pub(crate) fn pow(&mut self, a: Value, e: Value, t: ElemType, e_const: Option<Scalar>) -> Value {
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
        let e = self.b.ins().smax(e, z);
        // head(acc, base, e): done where every lane's e is 0; else step(acc, base, e) multiplies
        // acc by base in the lanes whose low bit of e is set, squares base, halves e
        let ty = self.b.func.dfg.value_type(a);
        let head = self.b.create_block();
        let step = self.b.create_block();
        let done = self.b.create_block();
        let params = [ty; 3].map(|ty| self.b.append_block_param(head, ty));
        let [acc, base, left] = params;
        let result = self.b.append_block_param(done, ty);
        let args = [one, a, e].map(BlockArg::Value);
        self.b.ins().jump(head, &args);
        self.b.switch_to_block(head);
        let more = self.b.ins().icmp(IntCC::NotEqual, left, z);
        let more = if vector {
            self.b.ins().vany_true(more)
        } else {
            more
        };
        self.b.ins().brif(more, step, &[], done, &[BlockArg::Value(acc)]);
        self.b.switch_to_block(step);
        let bit = self.b.ins().band(left, one);
        let set = self.b.ins().icmp(IntCC::NotEqual, bit, z);
        let m = self.b.ins().imul(acc, base);
        let acc = self.pick(set, m, acc);
        let base = self.b.ins().imul(base, base);
        let left = self.b.ins().sshr_imm_s(left, 1);
        let args = [acc, base, left].map(BlockArg::Value);
        self.b.ins().jump(head, &args);
        self.b.switch_to_block(done);
        result
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
