//! Lowering of complex values (complex64, complex128; [`kiln_ir::complex`] is their oracle) in a
//! typed kernel's body: the complex half of [`TypedGen`].
//!
//! **Representation.** A kernel holding a complex value runs one point at a time (its schedule's
//! lanes are 1: [`crate::typed::holds_complex`]), and a complex value is one 128-bit register of
//! its two parts as memory holds them: complex128 an `f64x2` (re, im), complex64 an `f32x4` whose
//! lanes 0 and 1 hold (re, im) (lanes 2 and 3 are garbage no result reads). A load or a store is one
//! 16-byte (8-byte) move, with no shuffle; the element being wider than a float64 lane, a complex128
//! input's address is shifted down where the code's is formed and back up where it is read
//! ([`crate::run::stored_shift`]).
//!
//! **Operations**, bit for bit the oracle's: the same formulas in the same order, no fused
//! multiply-add. `+ - ` and unary `-` are one vector instruction (each part is the parts'
//! operation); `*` is `(ar br - ai bi, ar bi + ai br)` as two vector products, the first's lane 0
//! subtracted by adding it negated (IEEE's `x - y` is `x + (-y)`); `/` is Smith's method as NumPy
//! writes it, its two branches side by side in one register's lanes and selected; `reciprocal`
//! NumPy's, its branches computed and selected; `== != & | not isnan isinf isfinite` compare the
//! parts; `abs` is `hypot` of the parts as a float kernel computes it (`math::lower`: the vector
//! hypot, within `math::binary_ulp_bound(Hypot)`, 1 ULP, of the interpreter's libm); casts between complex types widen or narrow both parts at
//! once, a real value takes a zero imaginary part, a complex value casts to a real type by its real
//! part and to bool by its truth (a nonzero part). The other functions (`sqrt exp log log1p expm1
//! log2 log10 exp2`, the trigonometric and hyperbolic functions and their inverses, `sign`, `**`)
//! are calls of the interpreter's own complex functions ([`crate::host`]'s complex host functions),
//! bit-exact by construction.

use crate::clif::{cast, mem};
use crate::host::COMPLEX_CALLS;
use crate::typed_lower::TypedGen;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{ConstantData, InstBuilder, Type, Value, types};
use kiln_ir::typed::Scalar;
use kiln_ir::{BinaryOp, DType, ElemType, UnaryOp};

/// The unary opcodes of a complex operand that compile (every one the typing gives complex
/// values; the functions only where the host's ABI allows their calls, [`COMPLEX_CALLS`]).
pub(crate) fn unary_compiles(op: UnaryOp) -> bool {
    inline_unary(op) || (COMPLEX_CALLS && called_unary(op))
}

/// The binary opcodes of complex operands (of one type `t`), and `complex(a, b)` of two real
/// operands, that compile.
pub(crate) fn binary_compiles(op: BinaryOp, t: ElemType) -> bool {
    use BinaryOp::*;
    match op {
        Complex => t.is_float(),
        Add | Sub | Mul | Div | Eq | Ne | And | Or => t.is_complex(),
        Pow => t.is_complex() && COMPLEX_CALLS,
        _ => false,
    }
}

/// The unary opcodes of a complex operand lowered inline.
fn inline_unary(op: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        op,
        Neg | Conj | Real | Imag | Abs | IsNan | IsInf | IsFinite | Not | Round | Recip
    )
}

/// The unary opcodes of a complex operand computed by a call of the interpreter's function.
fn called_unary(op: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        op,
        Sqrt | Exp
            | Log
            | Log2
            | Log10
            | Exp2
            | Expm1
            | Log1p
            | Sin
            | Cos
            | Tan
            | Sinh
            | Cosh
            | Tanh
            | Arcsin
            | Arccos
            | Arctan
            | Arcsinh
            | Arccosh
            | Arctanh
            | Sign
    )
}

/// The float dtype of the parts of complex type `t`.
fn parts_dtype(t: ElemType) -> DType {
    match t {
        ElemType::C64 => DType::F32,
        _ => DType::F64,
    }
}

impl TypedGen<'_, '_> {
    /// Loads the complex value of type `t` at `addr`: complex128 one 16-byte load, complex64 one
    /// 8-byte load into lanes 0 and 1.
    pub(crate) fn complex_load(&mut self, t: ElemType, addr: Value) -> Value {
        if t == ElemType::C128 {
            return self.b.ins().load(types::F64X2, mem(), addr, 0);
        }
        let x = self.b.ins().load(types::I64, mem(), addr, 0);
        let v = self.b.ins().scalar_to_vector(types::I64X2, x);
        self.b.ins().bitcast(types::F32X4, cast(), v)
    }

    /// Stores the complex value `v` of type `t` at `addr` (complex64: its lanes 0 and 1).
    pub(crate) fn complex_store(&mut self, t: ElemType, v: Value, addr: Value) {
        if t == ElemType::C128 {
            self.b.ins().store(mem(), v, addr, 0);
            return;
        }
        let w = self.b.ins().bitcast(types::I64X2, cast(), v);
        let x = self.b.ins().extractlane(w, 0);
        self.b.ins().store(mem(), x, addr, 0);
    }

    /// A complex constant as its register.
    pub(crate) fn complex_konst(&mut self, s: Scalar) -> Value {
        let (ty, bytes): (Type, Vec<u8>) = match s {
            Scalar::C64(z) => (
                types::F32X4,
                [z.re, z.im, 0.0, 0.0]
                    .iter()
                    .flat_map(|x| x.to_le_bytes())
                    .collect(),
            ),
            Scalar::C128(z) => (
                types::F64X2,
                [z.re, z.im].iter().flat_map(|x| x.to_le_bytes()).collect(),
            ),
            _ => unreachable!("a complex constant"),
        };
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        self.b.ins().vconst(ty, c)
    }

    /// The two parts of a complex value, as scalars of its parts' type.
    fn parts(&mut self, v: Value) -> (Value, Value) {
        (self.b.ins().extractlane(v, 0), self.b.ins().extractlane(v, 1))
    }

    /// The complex value of parts `re` and `im` (scalars of one float type).
    fn join(&mut self, re: Value, im: Value) -> Value {
        let vt = match self.b.func.dfg.value_type(re) {
            types::F32 => types::F32X4,
            _ => types::F64X2,
        };
        let v = self.b.ins().splat(vt, re);
        self.b.ins().insertlane(v, im, 1)
    }

    /// A float constant of the type of the scalar `like`.
    fn like(&mut self, like: Value, x: f64) -> Value {
        match self.b.func.dfg.value_type(like) {
            types::F32 => self.b.ins().f32const(x as f32),
            _ => self.b.ins().f64const(x),
        }
    }

    /// Whether the complex value `v` reads as true: a nonzero part (NaN included), as a bool.
    fn complex_truth(&mut self, v: Value) -> Value {
        let (re, im) = self.parts(v);
        let z = self.like(re, 0.0);
        let a = self.b.ins().fcmp(FloatCC::NotEqual, re, z);
        let b = self.b.ins().fcmp(FloatCC::NotEqual, im, z);
        self.b.ins().bor(a, b)
    }

    /// `v`'s lanes rearranged: result lane `i` (of the first two) is `v`'s lane `from[i]`.
    fn lanes_of(&mut self, v: Value, from: [u8; 2]) -> Value {
        self.pick_lanes(v, v, [(false, from[0]), (false, from[1])])
    }

    /// Lanes of `a` and `b` (of one type): result lane `i` (of the first two) is lane `from[i].1`
    /// of `b` where `from[i].0`, else of `a` (the others keep `a`'s).
    fn pick_lanes(&mut self, a: Value, b: Value, from: [(bool, u8); 2]) -> Value {
        let ty = self.b.func.dfg.value_type(a);
        let size = (ty.lane_bits() / 8) as u8;
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            let lane = i as u8 / size;
            let (second, src) = if lane < 2 {
                from[lane as usize]
            } else {
                (false, lane)
            };
            *m = if second { 16 } else { 0 } + src * size + i as u8 % size;
        }
        let x = self.b.ins().bitcast(types::I8X16, cast(), a);
        let y = self.b.ins().bitcast(types::I8X16, cast(), b);
        let imm = self.b.func.dfg.immediates.push(ConstantData::from(&mask[..]));
        let r = self.b.ins().shuffle(x, y, imm);
        self.b.ins().bitcast(ty, cast(), r)
    }

    /// `v` with the sign of its lane 0 flipped.
    fn negate_lane0(&mut self, v: Value) -> Value {
        let ty = self.b.func.dfg.value_type(v);
        let it = ty.as_int();
        let mut bytes = vec![0u8; 16];
        let size = (ty.lane_bits() / 8) as usize;
        bytes[size - 1] = 0x80;
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        let sign = self.b.ins().vconst(it, c);
        let bits = self.b.ins().bitcast(it, cast(), v);
        let r = self.b.ins().bxor(bits, sign);
        self.b.ins().bitcast(ty, cast(), r)
    }

    /// `x` of type `from` converted to `to`, one of them complex (see the module doc).
    pub(crate) fn complex_cast(&mut self, x: Value, from: ElemType, to: ElemType) -> Value {
        match (from.real_part(), to.real_part()) {
            (Some(_), Some(_)) if from == to => x,
            (Some(_), Some(_)) if to == ElemType::C128 => self.b.ins().fvpromote_low(x),
            (Some(_), Some(_)) => self.b.ins().fvdemote(x),
            (Some(_), None) if to == ElemType::Bool => self.complex_truth(x),
            (Some(part), None) => {
                let re = self.b.ins().extractlane(x, 0);
                self.cast(re, part, to)
            }
            (None, Some(part)) => {
                let re = self.cast(x, from, part);
                let zero = self.like(re, 0.0);
                self.join(re, zero)
            }
            (None, None) => unreachable!("a complex cast"),
        }
    }

    /// A unary opcode on the complex value `x` of type `t` (the typing's result type: complex,
    /// the parts' type for `abs real imag`, bool for the tests).
    pub(crate) fn complex_unary(&mut self, op: UnaryOp, x: Value, t: ElemType) -> Value {
        use UnaryOp::*;
        match op {
            Neg => return self.b.ins().fneg(x),
            Round => {
                let (re, im) = self.parts(x);
                let (re, im) = (self.b.ins().nearest(re), self.b.ins().nearest(im));
                return self.join(re, im);
            }
            Not => {
                let m = self.complex_truth(x);
                return self.b.ins().bxor_imm_s(m, 1);
            }
            _ => {}
        }
        if called_unary(op) {
            return self.call_unary(op, x, t);
        }
        let (re, im) = self.parts(x);
        match op {
            Real => re,
            Imag => im,
            Conj => {
                let im = self.b.ins().fneg(im);
                self.join(re, im)
            }
            // hypot of the parts as a float kernel computes it (`math::lower`: the vector hypot,
            // within 1 ULP of the interpreter's libm, or libm's where the kernel's math is calls)
            Abs => crate::math::lower(self.b, self.math, crate::host::MathFn::Hypot, &[re, im]),
            IsNan => {
                let a = self.b.ins().fcmp(FloatCC::Unordered, re, re);
                let b = self.b.ins().fcmp(FloatCC::Unordered, im, im);
                self.b.ins().bor(a, b)
            }
            IsInf | IsFinite => {
                let inf = self.like(re, f64::INFINITY);
                let (ar, ai) = (self.b.ins().fabs(re), self.b.ins().fabs(im));
                if op == IsInf {
                    let a = self.b.ins().fcmp(FloatCC::Equal, ar, inf);
                    let b = self.b.ins().fcmp(FloatCC::Equal, ai, inf);
                    self.b.ins().bor(a, b)
                } else {
                    let a = self.b.ins().fcmp(FloatCC::LessThan, ar, inf);
                    let b = self.b.ins().fcmp(FloatCC::LessThan, ai, inf);
                    self.b.ins().band(a, b)
                }
            }
            Recip => self.reciprocal(re, im),
            _ => unreachable!("typed::why_not refuses {op} of a complex value"),
        }
    }

    /// NumPy's `1 / z` ([`kiln_ir::complex::reciprocal`]): both branches, chosen by `|y| <= |x|`
    /// (false for NaN, as the oracle's `if`).
    fn reciprocal(&mut self, x: Value, y: Value) -> Value {
        let one = self.like(x, 1.0);
        let minus_one = self.like(x, -1.0);
        // |y| <= |x|: r = y / x, d = x + y r, (1 / d, -r / d)
        let r1 = self.b.ins().fdiv(y, x);
        let yr = self.b.ins().fmul(y, r1);
        let d1 = self.b.ins().fadd(x, yr);
        let re1 = self.b.ins().fdiv(one, d1);
        let nr1 = self.b.ins().fneg(r1);
        let im1 = self.b.ins().fdiv(nr1, d1);
        // else: r = x / y, d = x r + y, (r / d, -1 / d)
        let r2 = self.b.ins().fdiv(x, y);
        let xr = self.b.ins().fmul(x, r2);
        let d2 = self.b.ins().fadd(xr, y);
        let re2 = self.b.ins().fdiv(r2, d2);
        let im2 = self.b.ins().fdiv(minus_one, d2);
        let (ax, ay) = (self.b.ins().fabs(x), self.b.ins().fabs(y));
        let first = self.b.ins().fcmp(FloatCC::LessThanOrEqual, ay, ax);
        let re = self.b.ins().select(first, re1, re2);
        let im = self.b.ins().select(first, im1, im2);
        self.join(re, im)
    }

    /// A call of the interpreter's complex function `op` of `x` (of complex type `t`).
    fn call_unary(&mut self, op: UnaryOp, x: Value, t: ElemType) -> Value {
        let index = UnaryOp::ALL
            .iter()
            .position(|&o| o == op)
            .expect("a complex function is in UnaryOp::ALL") as i64;
        let code = self.b.ins().iconst(types::I64, index);
        let (re, im) = self.wide_parts(x, t);
        let f = self.math.complex("unary", parts_dtype(t));
        let call = self.b.ins().call(f, &[code, re, im]);
        let r = self.b.inst_results(call).to_vec();
        self.narrow_join(r[0], r[1], t)
    }

    /// The parts of `x` (of complex type `t`) as float64 scalars (exactly: a complex64's widened).
    fn wide_parts(&mut self, x: Value, t: ElemType) -> (Value, Value) {
        let x = if t == ElemType::C64 {
            self.b.ins().fvpromote_low(x)
        } else {
            x
        };
        self.parts(x)
    }

    /// The complex value of type `t` of the float64 parts `re` and `im` (narrowed for complex64:
    /// exactly, a host function's float32 results widened).
    fn narrow_join(&mut self, re: Value, im: Value, t: ElemType) -> Value {
        let v = self.join(re, im);
        if t == ElemType::C64 {
            self.b.ins().fvdemote(v)
        } else {
            v
        }
    }

    /// A binary opcode on the complex values `a` and `b` of type `t`.
    pub(crate) fn complex_binary(&mut self, op: BinaryOp, a: Value, b: Value, t: ElemType) -> Value {
        use BinaryOp::*;
        match op {
            Add => self.b.ins().fadd(a, b),
            Sub => self.b.ins().fsub(a, b),
            Mul => self.complex_mul(a, b),
            Div => self.complex_div(a, b),
            Eq | Ne => {
                let (ar, ai) = self.parts(a);
                let (br, bi) = self.parts(b);
                let cc = if op == Eq {
                    FloatCC::Equal
                } else {
                    FloatCC::NotEqual
                };
                let x = self.b.ins().fcmp(cc, ar, br);
                let y = self.b.ins().fcmp(cc, ai, bi);
                if op == Eq {
                    self.b.ins().band(x, y)
                } else {
                    self.b.ins().bor(x, y)
                }
            }
            And | Or => {
                let x = self.complex_truth(a);
                let y = self.complex_truth(b);
                if op == And {
                    self.b.ins().band(x, y)
                } else {
                    self.b.ins().bor(x, y)
                }
            }
            Pow => {
                let (ar, ai) = self.wide_parts(a, t);
                let (br, bi) = self.wide_parts(b, t);
                let f = self.math.complex("pow", parts_dtype(t));
                let call = self.b.ins().call(f, &[ar, ai, br, bi]);
                let r = self.b.inst_results(call).to_vec();
                self.narrow_join(r[0], r[1], t)
            }
            _ => unreachable!("typed::why_not refuses {op} of complex values"),
        }
    }

    /// `complex(a, b)` of two real values of one float type.
    pub(crate) fn complex_of(&mut self, re: Value, im: Value) -> Value {
        self.join(re, im)
    }

    /// `a * b` as the oracle: `(ar br - ai bi, ar bi + ai br)`, as `(ar, ar) * (br, bi)` plus
    /// `(-(ai bi), ai br)`.
    fn complex_mul(&mut self, a: Value, b: Value) -> Value {
        let ar = self.lanes_of(a, [0, 0]);
        let ai = self.lanes_of(a, [1, 1]);
        let bs = self.lanes_of(b, [1, 0]);
        let p = self.b.ins().fmul(ar, b);
        let q = self.b.ins().fmul(ai, bs);
        let q = self.negate_lane0(q);
        self.b.ins().fadd(p, q)
    }

    /// `a / b` by Smith's method as the oracle ([`kiln_ir::complex::div`]): its two branches
    /// computed side by side in the lanes of one register (lane 0 the `|br| >= |bi|` branch's,
    /// lane 1 the other's: the same operations, each lane's bits the oracle's; `x * 1` is `x`) and
    /// the both-zero case apart, the oracle's choice taken (`|br| >= |bi|`, false for NaN).
    fn complex_div(&mut self, a: Value, b: Value) -> Value {
        let ty = self.b.func.dfg.value_type(a);
        let (br, bi) = self.parts(b);
        let one = self.like(br, 1.0);
        let ones = self.b.ins().splat(ty, one);
        let bs = self.lanes_of(b, [1, 0]);
        let swapped = self.lanes_of(a, [1, 0]);
        // rat = (bi / br, br / bi); scl = 1 / (br + bi rat, bi + br rat)
        let rat = self.b.ins().fdiv(bs, b);
        let t = self.b.ins().fmul(bs, rat);
        let d = self.b.ins().fadd(b, t);
        let scl = self.b.ins().fdiv(ones, d);
        // real parts: (ar + ai rat, ai + ar rat) scl
        let t = self.b.ins().fmul(swapped, rat);
        let re = self.b.ins().fadd(a, t);
        let re = self.b.ins().fmul(re, scl);
        // imaginary parts: (ai - ar rat, ai rat - ar) scl, as (ai, ai) (1, rat) - (ar, ar) (rat, 1)
        let aiai = self.lanes_of(a, [1, 1]);
        let arar = self.lanes_of(a, [0, 0]);
        let one_rat = self.pick_lanes(ones, rat, [(false, 0), (true, 1)]);
        let rat_one = self.pick_lanes(rat, ones, [(false, 0), (true, 1)]);
        let x = self.b.ins().fmul(aiai, one_rat);
        let y = self.b.ins().fmul(arar, rat_one);
        let im = self.b.ins().fsub(x, y);
        let im = self.b.ins().fmul(im, scl);
        let first = self.pick_lanes(re, im, [(false, 0), (true, 0)]);
        let second = self.pick_lanes(re, im, [(false, 1), (true, 1)]);
        // both parts of the divisor zero: the parts divided by |br|
        let (abr, abi) = (self.b.ins().fabs(br), self.b.ins().fabs(bi));
        let zero = self.like(br, 0.0);
        let abr_v = self.b.ins().splat(ty, abr);
        let by_zero = self.b.ins().fdiv(a, abr_v);
        let big = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, abr, abi);
        let zr = self.b.ins().fcmp(FloatCC::Equal, abr, zero);
        let zi = self.b.ins().fcmp(FloatCC::Equal, abi, zero);
        let both = self.b.ins().band(zr, zi);
        let first = self.b.ins().select(both, by_zero, first);
        self.b.ins().select(big, first, second)
    }
}
