//! Lowering of complex values (complex64, complex128; [`kiln_ir::complex`] is their oracle): the
//! complex type class of [`Gen`]'s opcodes.
//!
//! **Representation: planar, in the kernel's lanes.** A complex value is a pair of float values
//! of its parts' type ([`Z`]): the real parts of the points one step computes and their imaginary
//! parts, each in the lanes a float value of that type takes in the kernel (`typed.rs`): at the
//! vector width complex128 two `f64x2` (2 points), complex64 two `f32x4` (4 points in a kernel of
//! 32-bit lanes, else lanes 0-1 of each, half-filled); at the scalar width (the tails) two
//! scalars. The rest of the code generator carries one `Value` per node: a complex node's is its
//! real parts, and [`Gen::imag`] maps it to its imaginary parts ([`Gen::complex_value`]
//! gives each complex value a real-parts `Value` of its own, copied where it would be shared). A
//! load deinterleaves the points' 16-byte words (one or two loads and a shuffle per part: x64's
//! `unpcklpd`/`unpckhpd`, `shufps`), a store interleaves them back; a strided row gathers point by
//! point. The element being wider than a lane, a complex input's address is shifted down where
//! the code's is formed and back up where it is read ([`crate::run::stored_shift`]).
//!
//! **Operations**, bit for bit the oracle's, lanewise on the part vectors: the same formulas with
//! the same operands in the same order (an addition's operands may swap: IEEE addition is
//! commutative), no fused multiply-add. `+ -` and unary `-` act on each part; `*` is `(ar br - ai
//! bi, ar bi + ai br)`; `/` is Smith's method as NumPy writes it, each lane taking its branch's
//! operands before the divisions (`|br| >= |bi|`, false for NaN, picks `rat = bi / br` or `br /
//! bi`, and so on: the operations of both branches are the same up to their operands), a zero
//! divisor's lanes taking `(ar, ai) · inf` (the parts divided by `|br|`, `+0`) in a branch only a
//! vector holding one takes (on blocks, where the host routes it, by the wide routine of complex
//! division, `wide/complex.rs`, the same operations at full width: 1.1 ns a complex128 point
//! against 2.3 on an AVX-512 Xeon); `reciprocal` chooses its operands likewise; `== != & | not
//! isnan isinf isfinite` compare the parts; `abs` is `hypot` of the parts as a float kernel
//! computes it (`math::lower`: the vector hypot, within `math::binary_ulp_bound(Hypot)`, 1 ULP, of
//! the interpreter's libm); casts cast each part as a float cast does, a real value takes a zero
//! imaginary part, a complex value casts to a real type by its real part and to bool by its truth
//! (a nonzero part); `exp` is the oracle's formula on the float kernel's vector `exp`, `cos` and
//! `sin` of the parts and `sqrt` the oracle's formula on the vector `hypot`, each within
//! [`crate::math::complex_ulp_bound`] of the interpreter's, their special values (zero, infinite,
//! NaN parts) the interpreter's. The other functions (`log log1p expm1 log2 log10 exp2`, the
//! trigonometric and hyperbolic functions and their inverses, `sign`, `**`) are calls of the
//! interpreter's own complex functions ([`crate::host`]'s complex host functions), point by
//! point, bit-exact by construction.

use crate::clif::{cast, mem};
use crate::host::COMPLEX_CALLS;
use crate::lower::Gen;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::immediates::{Ieee32, Ieee64};
use cranelift_codegen::ir::{BlockArg, InstBuilder, Value, types};
use kiln_ir::typed::Scalar;
use kiln_ir::{BinaryOp, ElemType, UnaryOp};

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
        Neg | Conj | Real | Imag | Abs | IsNan | IsInf | IsFinite | Not | Round | Recip | Exp | Sqrt
    )
}

/// The unary opcodes of a complex operand computed by a call of the interpreter's function.
fn called_unary(op: UnaryOp) -> bool {
    use UnaryOp::*;
    matches!(
        op,
        Log | Log2
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

/// A complex value's two parts: the real parts and the imaginary parts of the points, each a float
/// value of the parts' type (a scalar, or a vector of the kernel's lanes).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Z {
    pub re: Value,
    pub im: Value,
}

/// The float dtype of the parts of complex type `t`.
fn parts_dtype(t: ElemType) -> ElemType {
    match t {
        ElemType::C64 => ElemType::F32,
        _ => ElemType::F64,
    }
}

/// The float type of the parts of complex type `t`.
fn part(t: ElemType) -> ElemType {
    t.real_part().expect("a complex type")
}

impl Gen<'_, '_> {
    /// The complex value whose real parts are `v` (as [`Gen::complex_value`] made it).
    pub(crate) fn z(&self, v: Value) -> Z {
        let im = *self
            .imag
            .get(&v)
            .expect("a complex value's real parts map to its imaginary parts");
        Z { re: v, im }
    }

    /// `z` as the one `Value` a node carries: its real parts, mapped to its imaginary parts. Real
    /// parts that already stand for another complex value (`conj z`, `complex(x, y)` beside
    /// `complex(x, w)`) are copied first (a bitcast to their own type, no instruction), so that
    /// each complex value has its own.
    pub(crate) fn complex_value(&mut self, z: Z) -> Value {
        let re = if self.imag.contains_key(&z.re) {
            let ty = self.b.func.dfg.value_type(z.re);
            self.b.ins().bitcast(ty, cast(), z.re)
        } else {
            z.re
        };
        self.imag.insert(re, z.im);
        re
    }

    /// The lanes of `a` and `b` (one vector type of `n` lanes) shuffled: result lane `i` is lane
    /// `from[i]` of `a` where it is below `n`, else lane `from[i] - n` of `b`.
    pub(crate) fn shuffle_lanes(&mut self, a: Value, b: Value, from: &[u8]) -> Value {
        let ty = self.b.func.dfg.value_type(a);
        let size = (ty.lane_bits() / 8) as u8;
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = from[i / size as usize] * size + i as u8 % size;
        }
        self.shuffle_bytes(a, b, mask, ty)
    }

    /// The 16-byte words holding the points of one vector step of complex type `t`: one for
    /// complex64 in a kernel of 2 lanes, else two.
    pub(crate) fn words(&self, t: ElemType) -> usize {
        usize::from(self.lanes) * t.size() / 16
    }

    /// Loads the complex value(s) of type `t` at `addr`: one point's two parts (scalar), or the
    /// kernel's lanes' points deinterleaved (vector).
    pub(crate) fn complex_load(&mut self, t: ElemType, addr: Value, vector: bool) -> Value {
        let z = self.load_parts(t, addr, vector);
        self.complex_value(z)
    }

    /// The parts of the complex value(s) of type `t` at `addr` (see [`Gen::complex_load`]).
    pub(crate) fn load_parts(&mut self, t: ElemType, addr: Value, vector: bool) -> Z {
        let pt = part(t);
        if !vector {
            let st = self.ty(pt, false);
            return Z {
                re: self.b.ins().load(st, mem(), addr, 0),
                im: self.b.ins().load(st, mem(), addr, pt.size() as i32),
            };
        }
        let vt = self.ty(pt, true);
        let words: Vec<Value> = (0..self.words(t))
            .map(|k| self.b.ins().load(vt, mem(), addr, 16 * k as i32))
            .collect();
        let (a, b) = (words[0], *words.last().expect("a word"));
        // point p's parts are lanes 2p and 2p + 1 of the words (one word: its lanes again)
        let n = vt.lane_count() as u8;
        let re: Vec<u8> = (0..n).map(|p| (2 * p) % (2 * n)).collect();
        let im: Vec<u8> = (0..n).map(|p| (2 * p + 1) % (2 * n)).collect();
        Z {
            re: self.shuffle_lanes(a, b, &re),
            im: self.shuffle_lanes(a, b, &im),
        }
    }

    /// Stores the complex value(s) `v` of type `t` at `addr`, interleaved as memory holds them.
    pub(crate) fn complex_store(&mut self, t: ElemType, v: Value, addr: Value) {
        let z = self.z(v);
        self.store_parts(t, z, addr);
    }

    /// Stores the parts `z` of complex value(s) of type `t` at `addr` (see
    /// [`Gen::complex_store`]).
    pub(crate) fn store_parts(&mut self, t: ElemType, z: Z, addr: Value) {
        if !self.is_vector(z.re) {
            self.b.ins().store(mem(), z.re, addr, 0);
            self.b.ins().store(mem(), z.im, addr, part(t).size() as i32);
            return;
        }
        let n = self.b.func.dfg.value_type(z.re).lane_count() as u8;
        for k in 0..self.words(t) as u8 {
            // word k holds points k n / 2 .. (k + 1) n / 2, each its real part then its imaginary
            let from: Vec<u8> = (0..n)
                .map(|l| {
                    let p = k * n / 2 + l / 2;
                    if l % 2 == 0 { p } else { n + p }
                })
                .collect();
            let w = self.shuffle_lanes(z.re, z.im, &from);
            self.b.ins().store(mem(), w, addr, 16 * i32::from(k));
        }
    }

    /// The points `scalars` (one complex value each, as a scalar [`Gen::complex_load`] gives
    /// them) as one vector complex value: each part assembled as a float value's.
    pub(crate) fn complex_assemble(&mut self, scalars: Vec<Value>, t: ElemType) -> Value {
        let zs: Vec<Z> = scalars.iter().map(|&s| self.z(s)).collect();
        let re = self.assemble(zs.iter().map(|z| z.re).collect(), part(t));
        let im = self.assemble(zs.iter().map(|z| z.im).collect(), part(t));
        self.complex_value(Z { re, im })
    }

    /// The scalar complex value `s` splat to the vector width.
    pub(crate) fn complex_splat(&mut self, s: Value, t: ElemType) -> Value {
        let z = self.z(s);
        let vt = self.ty(part(t), true);
        let re = self.b.ins().splat(vt, z.re);
        let im = self.b.ins().splat(vt, z.im);
        self.complex_value(Z { re, im })
    }

    /// A complex constant, as scalars or splat.
    pub(crate) fn complex_konst(&mut self, s: Scalar, vector: bool) -> Value {
        let (re, im) = match s {
            Scalar::C64(z) => (Scalar::F32(z.re), Scalar::F32(z.im)),
            Scalar::C128(z) => (Scalar::F64(z.re), Scalar::F64(z.im)),
            _ => unreachable!("a complex constant"),
        };
        let z = Z {
            re: self.konst(re, vector),
            im: self.konst(im, vector),
        };
        self.complex_value(z)
    }

    /// A float constant of the type of `like` (a scalar or vector float value).
    pub(crate) fn like(&mut self, like: Value, x: f64) -> Value {
        let ty = self.b.func.dfg.value_type(like);
        let c = match ty.lane_type() {
            types::F32 => self.b.ins().f32const(x as f32),
            _ => self.b.ins().f64const(x),
        };
        if ty.is_vector() {
            self.b.ins().splat(ty, c)
        } else {
            c
        }
    }

    /// Whether `z` reads as true: a nonzero part (NaN included), as the kernel's bool.
    pub(crate) fn truth(&mut self, z: Z) -> Value {
        let zero = self.like(z.re, 0.0);
        let a = self.b.ins().fcmp(FloatCC::NotEqual, z.re, zero);
        let b = self.b.ins().fcmp(FloatCC::NotEqual, z.im, zero);
        let m = self.b.ins().bor(a, b);
        self.bool_mask(m)
    }

    /// `x` of type `from` converted to `to`, one of them complex (see the module doc).
    pub(crate) fn complex_cast(&mut self, x: Value, from: ElemType, to: ElemType) -> Value {
        match (from.real_part(), to.real_part()) {
            (Some(_), Some(_)) if from == to => x,
            (Some(pf), Some(pt)) => {
                let z = self.z(x);
                let re = self.cast(z.re, pf, pt);
                let im = self.cast(z.im, pf, pt);
                self.complex_value(Z { re, im })
            }
            (Some(_), None) if to == ElemType::Bool => {
                let z = self.z(x);
                self.truth(z)
            }
            (Some(pf), None) => {
                let re = self.z(x).re;
                self.cast(re, pf, to)
            }
            (None, Some(pt)) => {
                let re = self.cast(x, from, pt);
                let im = self.like(re, 0.0);
                self.complex_value(Z { re, im })
            }
            (None, None) => unreachable!("a complex cast"),
        }
    }

    /// A unary opcode on the complex value `x` of type `t` (the typing's result type: complex,
    /// the parts' type for `abs real imag`, bool for the tests).
    pub(crate) fn complex_unary(&mut self, op: UnaryOp, x: Value, t: ElemType) -> Value {
        use UnaryOp::*;
        let z = self.z(x);
        if called_unary(op) {
            let r = self.call_unary(op, z, t);
            return self.complex_value(r);
        }
        let (re, im) = (z.re, z.im);
        let r = match op {
            Neg => Z {
                re: self.b.ins().fneg(re),
                im: self.b.ins().fneg(im),
            },
            Round => Z {
                re: self.b.ins().nearest(re),
                im: self.b.ins().nearest(im),
            },
            Conj => Z {
                re,
                im: self.b.ins().fneg(im),
            },
            Recip => self.reciprocal(re, im),
            Exp => self.exp(re, im),
            Sqrt => self.sqrt(re, im),
            Not => {
                let m = self.truth(z);
                return self.not_bool(m);
            }
            Real => return re,
            Imag => return im,
            // hypot of the parts as a float kernel computes it (`math::lower`: the vector hypot,
            // within 1 ULP of the interpreter's libm, or libm's where the kernel's math is calls)
            Abs => return crate::math::lower(self.b, &self.math, crate::host::MathFn::Hypot, &[re, im]),
            IsNan => {
                let a = self.b.ins().fcmp(FloatCC::Unordered, re, re);
                let b = self.b.ins().fcmp(FloatCC::Unordered, im, im);
                return self.b.ins().bor(a, b);
            }
            IsInf | IsFinite => {
                let inf = self.like(re, f64::INFINITY);
                let (ar, ai) = (self.b.ins().fabs(re), self.b.ins().fabs(im));
                let cc = if op == IsInf {
                    FloatCC::Equal
                } else {
                    FloatCC::LessThan
                };
                let a = self.b.ins().fcmp(cc, ar, inf);
                let b = self.b.ins().fcmp(cc, ai, inf);
                return if op == IsInf {
                    self.b.ins().bor(a, b)
                } else {
                    self.b.ins().band(a, b)
                };
            }
            _ => unreachable!("typed::why_not refuses {op} of a complex value"),
        };
        self.complex_value(r)
    }

    /// NumPy's `1 / z` ([`kiln_ir::complex::reciprocal`]): `|y| <= |x|` (false for NaN) takes
    /// `r = y / x, d = x + y r, (1 / d, -r / d)`, else `r = x / y, d = x r + y, (r / d, -1 / d)`:
    /// each lane its branch's operands, `n / d_` with `d = d_ + n r` in both.
    pub(crate) fn reciprocal(&mut self, x: Value, y: Value) -> Z {
        let (ax, ay) = (self.b.ins().fabs(x), self.b.ins().fabs(y));
        let first = self.b.ins().fcmp(FloatCC::LessThanOrEqual, ay, ax);
        let n = self.pick(first, y, x);
        let d_ = self.pick(first, x, y);
        let r = self.b.ins().fdiv(n, d_);
        let nr = self.b.ins().fmul(n, r);
        let d = self.b.ins().fadd(d_, nr);
        let one = self.like(x, 1.0);
        let minus_one = self.like(x, -1.0);
        let neg_r = self.b.ins().fneg(r);
        let re_n = self.pick(first, one, r);
        let im_n = self.pick(first, neg_r, minus_one);
        Z {
            re: self.b.ins().fdiv(re_n, d),
            im: self.b.ins().fdiv(im_n, d),
        }
    }

    /// `exp(x + yi)` as the oracle ([`kiln_ir::complex::exp`]) computes it, from the float
    /// functions of the parts as a float kernel computes them ([`crate::math::lower`]: the vector
    /// `exp`, `cos` and `sin`, each within 1 ULP of the interpreter's libm; or the interpreter's own,
    /// per lane, where the kernel's math is calls, which gives the oracle's bits). Lanewise, each
    /// lane the oracle's case: `y = 0` gives `(exp x, y)`, `x = 0` `(cos y, sin y)`, a non-finite
    /// `y` C99's values (`(x, NaN)` for `x = inf`, `0` for `x = -inf`, else NaN), and the general
    /// case `(e cos y, e sin y)` with `e = exp x`, or where `x > log(MAX)` (`e^x` overflowing
    /// before its products do) `((h cos y) h, (h sin y) h)` with `h = exp(x / 2)`: one `exp` of
    /// `x` or `x / 2` per lane.
    pub(crate) fn exp(&mut self, x: Value, y: Value) -> Z {
        use crate::host::MathFn;
        let f32_parts = self.b.func.dfg.value_type(x).lane_type() == types::F32;
        let top = self.like(
            x,
            if f32_parts {
                f64::from(f32::MAX.ln())
            } else {
                f64::MAX.ln()
            },
        );
        let big = self.b.ins().fcmp(FloatCC::GreaterThan, x, top);
        let half = self.like(x, 0.5);
        let hx = self.b.ins().fmul(x, half);
        let arg = self.pick(big, hx, x);
        let e = crate::math::lower(self.b, &self.math, MathFn::Exp, &[arg]);
        let c = crate::math::lower(self.b, &self.math, MathFn::Cos, &[y]);
        let s = crate::math::lower(self.b, &self.math, MathFn::Sin, &[y]);
        let (ec, es) = (self.b.ins().fmul(e, c), self.b.ins().fmul(e, s));
        let (ece, ese) = (self.b.ins().fmul(ec, e), self.b.ins().fmul(es, e));
        let re = self.pick(big, ece, ec);
        let im = self.pick(big, ese, es);
        // y not finite (infinite or NaN): C99's values by x
        let inf = self.like(x, f64::INFINITY);
        let (zero, nan) = (self.like(x, 0.0), self.like(x, f64::NAN));
        let ay = self.b.ins().fabs(y);
        let y_finite = self.b.ins().fcmp(FloatCC::LessThan, ay, inf);
        let x_inf = self.b.ins().fcmp(FloatCC::Equal, x, inf);
        let neg_inf = self.b.ins().fneg(inf);
        let x_neg_inf = self.b.ins().fcmp(FloatCC::Equal, x, neg_inf);
        let zero_or_nan = self.pick(x_neg_inf, zero, nan);
        let special_re = self.pick(x_inf, x, zero_or_nan);
        let re = self.pick(y_finite, re, special_re);
        let im = self.pick(y_finite, im, zero_or_nan);
        // x = 0: (cos y, sin y)
        let x_zero = self.b.ins().fcmp(FloatCC::Equal, x, zero);
        let re = self.pick(x_zero, c, re);
        let im = self.pick(x_zero, s, im);
        // y = 0: (exp x, y), exp x being h h where x / 2 was taken (overflowing, as exp x does)
        let ee = self.b.ins().fmul(e, e);
        let ex = self.pick(big, ee, e);
        let y_zero = self.b.ins().fcmp(FloatCC::Equal, y, zero);
        Z {
            re: self.pick(y_zero, ex, re),
            im: self.pick(y_zero, y, im),
        }
    }

    /// `copysign(a, b)` of float values of one type (the typed lowering's: bits on vectors).
    pub(crate) fn copysign(&mut self, a: Value, b: Value) -> Value {
        let t = if self.b.func.dfg.value_type(a).lane_type() == types::F32 {
            ElemType::F32
        } else {
            ElemType::F64
        };
        self.binary(BinaryOp::Copysign, a, b, t, None)
    }

    /// `sqrt(x + yi)` as the oracle ([`kiln_ir::complex::sqrt`]) computes it, lanewise: `t =
    /// sqrt((|x| + hypot(x, y)) / 2)`, `(t, y / 2t)` for `x >= 0`, else `(|y| / 2t, t copysign
    /// y)`, the parts scaled by 1/4 first and the result by 2 where a part is at least `MAX / 4`;
    /// `hypot` is the float kernel's ([`crate::math::lower`]: the vector hypot within 1 ULP of
    /// libm's, or the interpreter's own where the kernel's math is calls, which gives the oracle's
    /// bits), every other operation exact IEEE arithmetic. Then the oracle's special cases, each a
    /// lanewise select in its order: `x = y = 0` gives `(0, y)`, an infinite `y` `(inf, y)`, a
    /// NaN `x` `(x, NaN)`, an infinite `x` C99's values, a NaN `y` NaN.
    pub(crate) fn sqrt(&mut self, x: Value, y: Value) -> Z {
        use crate::host::MathFn;
        let f32_parts = self.b.func.dfg.value_type(x).lane_type() == types::F32;
        let max = if f32_parts { f64::from(f32::MAX) } else { f64::MAX };
        let (ax, ay) = (self.b.ins().fabs(x), self.b.ins().fabs(y));
        let big = self.like(x, max * 0.25);
        let bx = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, ax, big);
        let by = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, ay, big);
        let scaled = self.b.ins().bor(bx, by);
        let (quarter, one, two) = (self.like(x, 0.25), self.like(x, 1.0), self.like(x, 2.0));
        let q = self.pick(scaled, quarter, one);
        let (sx, sy) = (self.b.ins().fmul(x, q), self.b.ins().fmul(y, q));
        let h = crate::math::lower(self.b, &self.math, MathFn::Hypot, &[sx, sy]);
        let asx = self.b.ins().fabs(sx);
        let sum = self.b.ins().fadd(asx, h);
        let half = self.like(x, 0.5);
        let halved = self.b.ins().fmul(sum, half);
        let t = self.b.ins().sqrt(halved);
        let tt = self.b.ins().fadd(t, t);
        let zero = self.like(x, 0.0);
        let pos = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, sx, zero);
        let asy = self.b.ins().fabs(sy);
        let num = self.pick(pos, sy, asy);
        let quot = self.b.ins().fdiv(num, tt);
        let signed_t = self.copysign(t, sy);
        let re = self.pick(pos, t, quot);
        let im = self.pick(pos, quot, signed_t);
        // scaled: the root of the quarter, times 2 (a product by 1 elsewhere: exact)
        let k = self.pick(scaled, two, one);
        let (mut re, mut im) = (self.b.ins().fmul(re, k), self.b.ins().fmul(im, k));
        // the special cases, the oracle's last first, so that its first takes precedence
        let inf = self.like(x, f64::INFINITY);
        let nan = self.like(x, f64::NAN);
        let y_nan = self.b.ins().fcmp(FloatCC::Unordered, y, y);
        re = self.pick(y_nan, nan, re);
        im = self.pick(y_nan, nan, im);
        // |x| infinite: x > 0 gives (x, y NaN ? y : copysign(0, y)), x < 0 (y NaN ? y : 0,
        // copysign(inf, y))
        let x_inf = self.b.ins().fcmp(FloatCC::Equal, ax, inf);
        let x_pos = self.b.ins().fcmp(FloatCC::GreaterThan, x, zero);
        let signed_zero = self.copysign(zero, y);
        let signed_inf = self.copysign(inf, y);
        let im_pos = self.pick(y_nan, y, signed_zero);
        let re_neg = self.pick(y_nan, y, zero);
        let inf_re = self.pick(x_pos, x, re_neg);
        let inf_im = self.pick(x_pos, im_pos, signed_inf);
        re = self.pick(x_inf, inf_re, re);
        im = self.pick(x_inf, inf_im, im);
        let x_nan = self.b.ins().fcmp(FloatCC::Unordered, x, x);
        re = self.pick(x_nan, x, re);
        im = self.pick(x_nan, nan, im);
        let y_inf = self.b.ins().fcmp(FloatCC::Equal, ay, inf);
        re = self.pick(y_inf, inf, re);
        im = self.pick(y_inf, y, im);
        let x_zero = self.b.ins().fcmp(FloatCC::Equal, x, zero);
        let y_zero = self.b.ins().fcmp(FloatCC::Equal, y, zero);
        let both_zero = self.b.ins().band(x_zero, y_zero);
        Z {
            re: self.pick(both_zero, zero, re),
            im: self.pick(both_zero, y, im),
        }
    }

    /// The interpreter's complex function `op` of `z` (of complex type `t`), point by point.
    pub(crate) fn call_unary(&mut self, op: UnaryOp, z: Z, t: ElemType) -> Z {
        let index = UnaryOp::ALL
            .iter()
            .position(|&o| o == op)
            .expect("a complex function is in UnaryOp::ALL") as i64;
        let f = self.math.complex("unary", parts_dtype(t));
        self.per_point(&[z], &mut |g, xs| {
            let code = g.b.ins().iconst(types::I64, index);
            let call = g.b.ins().call(f, &[code, xs[0], xs[1]]);
            let r = g.b.inst_results(call);
            [r[0], r[1]]
        })
    }

    /// `f` of the points of `args`, point by point: each point's parts as float64 scalars (a
    /// complex64's widened, exactly), `f`'s two float64 results narrowed back (exactly: the host
    /// functions round a complex64's parts to float32 first) and put into the result's lanes.
    pub(crate) fn per_point(
        &mut self,
        args: &[Z],
        f: &mut dyn FnMut(&mut Self, &[Value]) -> [Value; 2],
    ) -> Z {
        let ty = self.b.func.dfg.value_type(args[0].re);
        let narrow = ty.lane_type() == types::F32;
        let lanes = if ty.is_vector() { self.lanes } else { 1 };
        let mut out: Option<Z> = None;
        for l in 0..lanes {
            let mut xs = Vec::with_capacity(2 * args.len());
            for z in args {
                for p in [z.re, z.im] {
                    let x = if ty.is_vector() {
                        self.b.ins().extractlane(p, l)
                    } else {
                        p
                    };
                    xs.push(if narrow {
                        self.b.ins().fpromote(types::F64, x)
                    } else {
                        x
                    });
                }
            }
            let [re, im] = f(self, &xs);
            let (re, im) = if narrow {
                (
                    self.b.ins().fdemote(types::F32, re),
                    self.b.ins().fdemote(types::F32, im),
                )
            } else {
                (re, im)
            };
            out = Some(match out {
                _ if !ty.is_vector() => Z { re, im },
                None => Z {
                    re: self.b.ins().splat(ty, re),
                    im: self.b.ins().splat(ty, im),
                },
                Some(z) => Z {
                    re: self.b.ins().insertlane(z.re, re, l),
                    im: self.b.ins().insertlane(z.im, im, l),
                },
            });
        }
        out.expect("at least one point")
    }

    /// A binary opcode on the complex values `a` and `b` of type `t`.
    pub(crate) fn complex_binary(&mut self, op: BinaryOp, a: Value, b: Value, t: ElemType) -> Value {
        use BinaryOp::*;
        let (x, y) = (self.z(a), self.z(b));
        let r = match op {
            Add => Z {
                re: self.b.ins().fadd(x.re, y.re),
                im: self.b.ins().fadd(x.im, y.im),
            },
            Sub => Z {
                re: self.b.ins().fsub(x.re, y.re),
                im: self.b.ins().fsub(x.im, y.im),
            },
            Mul => self.mul(x, y),
            Div => self.div(x, y),
            Eq | Ne => {
                let cc = if op == Eq {
                    FloatCC::Equal
                } else {
                    FloatCC::NotEqual
                };
                let p = self.b.ins().fcmp(cc, x.re, y.re);
                let q = self.b.ins().fcmp(cc, x.im, y.im);
                return if op == Eq {
                    self.b.ins().band(p, q)
                } else {
                    self.b.ins().bor(p, q)
                };
            }
            And | Or => {
                let p = self.truth(x);
                let q = self.truth(y);
                return if op == And {
                    self.b.ins().band(p, q)
                } else {
                    self.b.ins().bor(p, q)
                };
            }
            Pow => {
                let f = self.math.complex("pow", parts_dtype(t));
                self.per_point(&[x, y], &mut |g, xs| {
                    let call = g.b.ins().call(f, xs);
                    let r = g.b.inst_results(call);
                    [r[0], r[1]]
                })
            }
            _ => unreachable!("typed::why_not refuses {op} of complex values"),
        };
        self.complex_value(r)
    }

    /// `complex(a, b)` of two real values of one float type.
    pub(crate) fn complex_of(&mut self, re: Value, im: Value) -> Value {
        self.complex_value(Z { re, im })
    }

    /// `where(c, a, b)` of complex values: each part chosen.
    pub(crate) fn complex_select(&mut self, c: Value, a: Value, b: Value) -> Value {
        let (x, y) = (self.z(a), self.z(b));
        let re = self.pick(c, x.re, y.re);
        let im = self.pick(c, x.im, y.im);
        self.complex_value(Z { re, im })
    }

    /// `a * b` as the oracle: `(ar br - ai bi, ar bi + ai br)`.
    pub(crate) fn mul(&mut self, a: Z, b: Z) -> Z {
        let p = self.b.ins().fmul(a.re, b.re);
        let q = self.b.ins().fmul(a.im, b.im);
        let r = self.b.ins().fmul(a.re, b.im);
        let s = self.b.ins().fmul(a.im, b.re);
        Z {
            re: self.b.ins().fsub(p, q),
            im: self.b.ins().fadd(r, s),
        }
    }

    /// `a / b` by Smith's method as the oracle ([`kiln_ir::complex::div`]). Where `|br| >= |bi|`
    /// (false for NaN): `rat = bi / br, scl = 1 / (br + bi rat), ((ar + ai rat) scl, (ai - ar rat)
    /// scl)`; else `rat = br / bi, scl = 1 / (bi + br rat), ((ar rat + ai) scl, (ai rat - ar)
    /// scl)`. Each lane takes its branch's divisor parts (`n / d`, two selects) before the
    /// divisions; both branches' numerators are formed from `ar rat` and `ai rat` and one chosen
    /// per part (`ar rat + ai` is `ai + ar rat`, addition being commutative): four selects in all.
    /// A divisor of two zero parts gives the parts divided by `|br|`, which is `+0`: `ar / +0` is
    /// `ar · +inf` (NaN for a zero or NaN `ar`, else the infinity of its sign), so those lanes take
    /// `(ar · inf, ai · inf)`, in a branch around the selects that only a vector holding such a
    /// divisor takes (random operands, the bench's, never do; measured on this host's Rust copy of
    /// the loop, the selects in line cost about a tenth of the division's time).
    pub(crate) fn div(&mut self, a: Z, b: Z) -> Z {
        // a vector's magnitudes by `and` with a constant mask, which the loop holds in a register
        // (Cranelift's vector `fabs` forms its mask anew each time: two more instructions a part)
        let ty = self.b.func.dfg.value_type(b.re);
        let (abr, abi) = if ty.is_vector() {
            let bits = match ty.lane_type() {
                types::F32 => self.b.ins().f32const(Ieee32::with_bits(0x7fff_ffff)),
                _ => self.b.ins().f64const(Ieee64::with_bits(0x7fff_ffff_ffff_ffff)),
            };
            let mask = self.b.ins().splat(ty, bits);
            (self.b.ins().band(b.re, mask), self.b.ins().band(b.im, mask))
        } else {
            (self.b.ins().fabs(b.re), self.b.ins().fabs(b.im))
        };
        let big = self.b.ins().fcmp(FloatCC::GreaterThanOrEqual, abr, abi);
        let n = self.pick(big, b.im, b.re);
        let d = self.pick(big, b.re, b.im);
        let rat = self.b.ins().fdiv(n, d);
        let nr = self.b.ins().fmul(n, rat);
        let den = self.b.ins().fadd(d, nr);
        let one = self.like(b.re, 1.0);
        let scl = self.b.ins().fdiv(one, den);
        let xr = self.b.ins().fmul(a.re, rat);
        let xi = self.b.ins().fmul(a.im, rat);
        // big: ar + ai rat, ai - ar rat; else ai + ar rat, ai rat - ar
        let re_big = self.b.ins().fadd(a.re, xi);
        let re_small = self.b.ins().fadd(a.im, xr);
        let im_big = self.b.ins().fsub(a.im, xr);
        let im_small = self.b.ins().fsub(xi, a.re);
        let re = self.pick(big, re_big, re_small);
        let im = self.pick(big, im_big, im_small);
        let quot = Z {
            re: self.b.ins().fmul(re, scl),
            im: self.b.ins().fmul(im, scl),
        };
        // both parts zero: then the divisor picked is zero (it is `br` where `|br| >= |bi|`, and
        // a zero `bi` picked where that is false has a NaN `br`), so a vector holding no zero
        // divisor takes no branch; the cold block finds the lanes whose magnitudes' sum is zero
        // (a sum of two non-negative numbers is zero only where both are)
        let zero = self.like(b.re, 0.0);
        let maybe = self.b.ins().fcmp(FloatCC::Equal, d, zero);
        let any = if self.is_vector(maybe) {
            self.b.ins().vany_true(maybe)
        } else {
            maybe
        };
        let cold = self.b.create_block();
        let merge = self.b.create_block();
        let out_re = self.b.append_block_param(merge, ty);
        let out_im = self.b.append_block_param(merge, ty);
        let args = [BlockArg::Value(quot.re), BlockArg::Value(quot.im)];
        self.b.ins().brif(any, cold, &[], merge, &args);
        self.b.set_cold_block(cold);
        self.b.switch_to_block(cold);
        let sum = self.b.ins().fadd(abr, abi);
        let both = self.b.ins().fcmp(FloatCC::Equal, sum, zero);
        let inf = self.like(b.re, f64::INFINITY);
        let re_zero = self.b.ins().fmul(a.re, inf);
        let im_zero = self.b.ins().fmul(a.im, inf);
        let re = self.pick(both, re_zero, quot.re);
        let im = self.pick(both, im_zero, quot.im);
        self.b
            .ins()
            .jump(merge, &[BlockArg::Value(re), BlockArg::Value(im)]);
        self.b.switch_to_block(merge);
        Z {
            re: out_re,
            im: out_im,
        }
    }
}
