//! The code generator's state ([`Gen`]) and the body of a kernel: each node lowered at one width, a
//! scalar or one 128-bit vector of the kernel's lanes.
//!
//! One lowering serves every kernel. The opcodes, by (operation, type class), are in `ops`
//! (`values`: how each type is held; `cast`, `int`, `complex`). A float kernel's values are all
//! of its dtype and its truth values 1.0 / 0.0: its opcodes are those of `ops` with a predicate's
//! lane mask turned into 1.0 / 0.0 by and-ing it with the bits of 1.0 ([`Gen::float_unary`],
//! [`Gen::float_binary`]); its `where` reads "nonzero or NaN" as true (unordered-not-equal against
//! zero). A typed kernel's values each have their own element type ([`emit_body`] lowers each node
//! in it). Every opcode lowers to exactly the operation the interpreter performs, so elementwise
//! results are bit-exact: no FMA contraction, no reassociation; `min` / `max` are NumPy's
//! `(a < b || isnan(a)) ? a : b` (NaN propagating; of two equal operands, `-0.0` and `+0.0`, the
//! second: [`Gen::minimum`]), not Cranelift's `fmin` / `fmax`, which order -0 below +0;
//! transcendentals go through [`crate::math`].

mod cast;
pub(crate) mod complex;
mod int;
pub(crate) mod ops;
pub(crate) mod values;

use crate::clif::{cast, mem};
use crate::host::MathRefs;
use crate::math;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{ConstantData, InstBuilder, Type, Value, types};
use cranelift_frontend::FunctionBuilder;
use kiln_ir::typed::TypedKernel;
use kiln_ir::{BinaryOp, ElemType, ExprArena, Node, NodeId, UnaryOp};
use std::collections::HashMap;
use values::constant;

/// A width at which code is generated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum W {
    Scalar,
    Vector,
}

/// The code generator's state: the builder, the types of the kernel, and hoisted constants.
pub struct Gen<'a, 'b> {
    pub b: &'b mut FunctionBuilder<'a>,
    pub dtype: ElemType,
    /// Scalar float, vector float, scalar int of the same width, vector int (mask) type.
    pub t: Type,
    pub v: Type,
    pub it: Type,
    pub iv: Type,
    pub lanes: u8,
    /// Bytes per element.
    pub size: i64,
    pub math: MathRefs,
    /// Per width: 1.0, 0.0 (hoisted into the entry block).
    pub one: [Value; 2],
    pub zero: [Value; 2],
    /// A typed kernel's types (see [`crate::layout::TypedValues`]): each value is lowered in its
    /// own type (`lower/values.rs` holds how), its inputs loaded in their own types. None for a
    /// float kernel.
    pub typed: Option<&'b TypedKernel>,
    /// The imaginary parts of a typed kernel's complex values, by their real parts (see
    /// `lower/complex.rs`: a complex node's `Value` is its real parts).
    pub imag: HashMap<Value, Value>,
    /// The lane masks of comparisons by their 1 / 0 values ([`Gen::mask_one`]): the truth of such
    /// a value ([`Gen::truth_mask`]: `any(x > 0)`, `where(x > 0, ...)`) is its mask, where a
    /// compare of the value with zero took two instructions more.
    pub truths: HashMap<Value, Value>,
    /// The kernel's array of input pointers (its first argument), where a byte-string load finds
    /// its input's base ([`Gen::load_input`]); set by `Frame::new`.
    pub ins_arg: Option<Value>,
}

impl<'a, 'b> Gen<'a, 'b> {
    /// Creates the state, emitting the shared constants at the current position (the entry block).
    pub fn new(b: &'b mut FunctionBuilder<'a>, dtype: ElemType, math: MathRefs) -> Self {
        let (t, v, it, iv, lanes, size) = match dtype {
            ElemType::F64 => (types::F64, types::F64X2, types::I64, types::I64X2, 2u8, 8i64),
            ElemType::F32 => (types::F32, types::F32X4, types::I32, types::I32X4, 4u8, 4i64),
            _ => unreachable!("only float types (f32, f64) reach here"),
        };
        let one_s = fconst(b, dtype, 1.0);
        let zero_s = fconst(b, dtype, 0.0);
        let one_v = b.ins().splat(v, one_s);
        let zero_v = b.ins().splat(v, zero_s);
        Gen {
            b,
            dtype,
            t,
            v,
            it,
            iv,
            lanes,
            size,
            math,
            one: [one_s, one_v],
            zero: [zero_s, zero_v],
            typed: None,
            imag: HashMap::new(),
            truths: HashMap::new(),
            ins_arg: None,
        }
    }

    /// A scalar input element `s` (as [`Gen::load_input`] gives it) splat to a vector: a typed
    /// kernel's bool (`i8` 0 / 1) as its lane mask, a complex value as its two parts splat
    /// (lower/complex.rs).
    pub fn splat_input(&mut self, s: Value, stored: Option<ElemType>) -> Value {
        if let Some(t) = stored.filter(|t| t.is_complex()) {
            return self.complex_splat(s, t);
        }
        if self.typed.is_some() && stored == Some(ElemType::Bool) {
            let mask = self.bool_lane(s);
            let vt = self.ty(ElemType::Bool, true);
            return self.b.ins().splat(vt, mask);
        }
        self.splat(W::Vector, s)
    }

    /// The float kernel's type at width `w` (its dtype, scalar or vector).
    pub fn float_ty(&self, w: W) -> Type {
        match w {
            W::Scalar => self.t,
            W::Vector => self.v,
        }
    }

    pub fn ity(&self, w: W) -> Type {
        match w {
            W::Scalar => self.it,
            W::Vector => self.iv,
        }
    }

    /// A float constant of the kernel's dtype at width `w` (an f64 rounded as `Real::from_f64`).
    pub fn fconst(&mut self, w: W, x: f64) -> Value {
        let s = fconst(self.b, self.dtype, x);
        match w {
            W::Scalar => s,
            W::Vector => self.b.ins().splat(self.v, s),
        }
    }

    /// An f64 constant at width `w` of f64 accumulators (scalar F64 or F64X2).
    pub fn f64const(&mut self, w: W, x: f64) -> Value {
        let s = self.b.ins().f64const(x);
        match w {
            W::Scalar => s,
            W::Vector => self.b.ins().splat(types::F64X2, s),
        }
    }

    /// An integer constant of the index type at width `w`.
    pub fn iconst(&mut self, w: W, x: i64) -> Value {
        let s = self.b.ins().iconst(self.it, x);
        match w {
            W::Scalar => s,
            W::Vector => self.b.ins().splat(self.iv, s),
        }
    }

    /// Splats a scalar to width `w`.
    pub fn splat(&mut self, w: W, x: Value) -> Value {
        match w {
            W::Scalar => x,
            W::Vector => {
                let ty = self.b.func.dfg.value_type(x);
                let vt = ty.by(128 / ty.bits()).expect("128-bit vector type");
                self.b.ins().splat(vt, x)
            }
        }
    }

    /// A lane mask `a cc b` (i8 0/1 for scalars, all-ones lanes for vectors).
    pub fn fcmp(&mut self, cc: FloatCC, a: Value, b: Value) -> Value {
        self.b.ins().fcmp(cc, a, b)
    }

    /// Whether `x` reads as true: nonzero or NaN.
    pub fn truth_mask(&mut self, w: W, x: Value) -> Value {
        // a comparison's 1 / 0 (never NaN): true exactly where its mask is
        if let Some(&m) = self.truths.get(&x)
            && self.b.func.dfg.value_type(m) == self.b.func.dfg.value_type(x).as_truthy()
        {
            return m;
        }
        let z = self.zero[w as usize];
        self.b.ins().fcmp(FloatCC::NotEqual, x, z)
    }

    /// Stores the value(s) `v` of the output whose root is `root` at `addr + offset` bytes: a typed
    /// kernel's in the root's type, at the address shifted back as an input stored in that type is
    /// read ([`Gen::load_input`]: its output's base was shifted up as far, output.rs), bools one
    /// byte each.
    pub fn store_value(&mut self, root: NodeId, v: Value, addr: Value, offset: i64) {
        match self.typed {
            Some(tk) => self.store_typed(tk.type_of(root), v, addr, offset),
            None => {
                self.b.ins().store(mem(), v, addr, offset as i32);
            }
        }
    }

    /// [`Gen::store_value`] of a typed kernel's value `v` of type `t`.
    pub fn store_typed(&mut self, t: ElemType, v: Value, addr: Value, offset: i64) {
        let at = self.stored_at(t, addr, offset);
        self.store(t, v, at);
    }

    /// The own address of a typed value of type `t` the code addresses at `addr + offset` (an
    /// output's base was shifted as an input stored in that type is read: output.rs).
    pub(crate) fn stored_at(&mut self, t: ElemType, addr: Value, offset: i64) -> Value {
        let shift = crate::run::stored_shift(self.size as usize, t);
        let at = self.b.ins().iadd_imm_s(addr, offset);
        self.own_address(at, shift)
    }

    /// [`Gen::store_value`] of the vectors `vs` of consecutive steps from `addr + offset`, of the
    /// output whose root is `root`: a typed kernel's bools in one store where
    /// [`Gen::packs_bools`], else each step's vector alone (`step` bytes apart in the code's
    /// addresses).
    pub fn store_steps(&mut self, root: NodeId, vs: &[Value], addr: Value, offset: i64, step: i64) {
        let t = self.typed.map(|tk| tk.type_of(root));
        if t == Some(ElemType::Bool) && self.packs_bools(vs.len() as i64) {
            let at = self.stored_at(ElemType::Bool, addr, offset);
            return self.store_bools(vs, at);
        }
        for (p, &v) in vs.iter().enumerate() {
            self.store_value(root, v, addr, offset + p as i64 * step);
        }
    }

    /// An element's own address from the code's address `at` of an element stored with
    /// [`crate::run::stored_shift`] `shift` (the inverse of [`crate::run::code_address`]).
    pub(crate) fn own_address(&mut self, at: Value, shift: i32) -> Value {
        match shift {
            0 => at,
            s if s > 0 => self.b.ins().ushr_imm_u(at, i64::from(s)),
            s => self.b.ins().ishl_imm_u(at, i64::from(-s)),
        }
    }

    /// The address of byte-string input `input`'s string `k`, from `at`, the code's address of it
    /// shifted back (`shift`, [`Gen::own_address`]): a byte-string input's base is its first
    /// string's address `p` scaled as a one-byte element's ([`crate::InputRef::base`]), so `at` is
    /// `p + k`, and the string lies at `p + k * width = at * width + p * (1 - width)` (any address:
    /// no alignment is assumed; the arithmetic wraps, the result is exact). `p` is loaded from the
    /// input array, which nothing writes while the kernel runs: a readonly load, pure, which
    /// Cranelift hoists out of the loops with `p * (1 - width)` (two instructions a string).
    fn string_address(&mut self, input: usize, at: Value, shift: i32, width: u32) -> Value {
        let ins = self
            .ins_arg
            .expect("Frame::new sets the input array before any load");
        let slot = i32::try_from(8 * input).expect("input count checked by the planner");
        let flags = mem().with_readonly().with_can_move();
        let base = self.b.ins().load(types::I64, flags, ins, slot);
        let p = self.own_address(base, shift);
        let fix = self.b.ins().imul_imm_s(p, 1 - i64::from(width));
        let scaled = self.b.ins().imul_imm_u(at, i64::from(width));
        self.b.ins().iadd(scaled, fix)
    }

    /// Loads one element (`Scalar`) or one vector at `addr + offset` bytes.
    pub fn load_float(&mut self, w: W, addr: Value, offset: i64) -> Value {
        let ty = self.float_ty(w);
        self.b.ins().load(ty, mem(), addr, offset as i32)
    }

    /// Loads one element (`Scalar`) or one vector of input `input`'s values at `addr + offset`
    /// bytes, where the input is stored as `stored` (None: the dtype): `addr` and `offset` count in
    /// elements of the dtype ([`crate::InputRef::base`] shifted a stored input's address up as
    /// far), so the address is shifted back by the same amount, and the elements converted as NumPy
    /// casts (`int64` to the nearest `float64`, exactly as the interpreter's `as f64`; `bool` to 1 /
    /// 0).
    pub fn load_input(
        &mut self,
        w: W,
        input: usize,
        addr: Value,
        offset: i64,
        stored: Option<ElemType>,
    ) -> Value {
        let Some(t) = stored else {
            return self.load_float(w, addr, offset);
        };
        let shift = crate::run::stored_shift(self.size as usize, t);
        let at = self.own_address(addr, shift);
        let off = crate::run::own_offset(offset, shift) as i32;
        let vector = w == W::Vector;
        if self.typed.is_some() {
            // a typed kernel's input in its own type, as the typed lowering holds it
            let at = if off == 0 {
                at
            } else {
                self.b.ins().iadd_imm_s(at, i64::from(off))
            };
            let at = match t {
                ElemType::Bytes(width) => self.string_address(input, at, shift, width),
                _ => at,
            };
            return self.load(t, at, vector);
        }
        match (t, self.dtype) {
            // two float32 lanes as one 8-byte load, widened by one instruction (`cvtps2pd`)
            (ElemType::F32, ElemType::F64) if vector => {
                let v = self.load_low(types::I64, types::F32X4, at, off);
                self.b.ins().fvpromote_low(v)
            }
            // two int32 lanes as one 8-byte load, converted by one instruction (`cvtdq2pd`)
            (ElemType::I32, ElemType::F64) if vector => {
                let v = self.load_low(types::I64, types::I32X4, at, off);
                self.int32_lanes_to_f64(v)
            }
            // the bools as a mask of the lanes (`load_bools`), and-ed with 1.0's bits: 1.0 or +0.0
            (ElemType::Bool, ElemType::F64 | ElemType::F32) if vector => {
                let at = if off == 0 {
                    at
                } else {
                    self.b.ins().iadd_imm_s(at, i64::from(off))
                };
                let m = self.load_bools(at);
                let (vt, one) = if self.dtype == ElemType::F64 {
                    (types::F64X2, 1.0f64.to_bits().to_le_bytes().repeat(2))
                } else {
                    (types::F32X4, 1.0f32.to_bits().to_le_bytes().repeat(4))
                };
                let mt = self.b.func.dfg.value_type(m);
                let one = self.vector_constant(mt, one);
                let v = self.b.ins().band(m, one);
                self.b.ins().bitcast(vt, cast(), v)
            }
            // int64 lanes, converted without going lane by lane (`i64_lanes_to_f64`)
            (ElemType::I64, ElemType::F64) if vector => {
                let v = self.b.ins().load(types::I64X2, mem(), at, off);
                self.i64_lanes_to_f64(v)
            }
            _ => self.load_scalar_input(t, at, off),
        }
    }

    /// The int64 lanes of `v` as float64 lanes, each rounded once to nearest even as `x as f64`
    /// (x64 has no vector conversion before AVX-512, where Cranelift's goes lane by lane through
    /// general registers): `u = x + 2^63` as two 32-bit halves put into the mantissas of 2^84 and
    /// 2^52, then `(2^84 + hi·2^32) - (2^84 + 2^63 + 2^52)` (exact: a multiple of 2^32 below 2^64
    /// in magnitude) plus `2^52 + lo`.
    pub(crate) fn i64_lanes_to_f64(&mut self, v: Value) -> Value {
        let splat = |g: &mut Self, bits: i64| {
            let c = g.b.ins().iconst(types::I64, bits);
            g.b.ins().splat(types::I64X2, c)
        };
        let sign = splat(self, i64::MIN);
        let u = self.b.ins().bxor(v, sign);
        let hi = self.b.ins().ushr_imm_u(u, 32);
        let low_half = splat(self, 0xffff_ffff);
        let lo = self.b.ins().band(u, low_half);
        let hi_exp = splat(self, 0x4530_0000_0000_0000);
        let lo_exp = splat(self, 0x4330_0000_0000_0000);
        let hi = self.b.ins().bor(hi, hi_exp);
        let lo = self.b.ins().bor(lo, lo_exp);
        let hi = self.b.ins().bitcast(types::F64X2, cast(), hi);
        let lo = self.b.ins().bitcast(types::F64X2, cast(), lo);
        let bias = self.f64const(W::Vector, f64::from_bits(0x4530_0000_8010_0000));
        let hi = self.b.ins().fsub(hi, bias);
        self.b.ins().fadd(hi, lo)
    }

    /// A `bits`-wide load at `at + off` into the low lanes of a vector, as `vt`.
    fn load_low(&mut self, bits: Type, vt: Type, at: Value, off: i32) -> Value {
        let x = self.b.ins().load(bits, mem(), at, off);
        let wide = match bits {
            types::I16 => types::I16X8,
            types::I32 => types::I32X4,
            _ => types::I64X2,
        };
        let v = self.b.ins().scalar_to_vector(wide, x);
        self.b.ins().bitcast(vt, cast(), v)
    }

    /// The low two int32 lanes of `v` as f64 lanes (one `cvtdq2pd`).
    fn int32_lanes_to_f64(&mut self, v: Value) -> Value {
        let low = self.b.ins().swiden_low(v);
        self.b.ins().fcvt_from_sint(types::F64X2, low)
    }

    /// One element of type `t` at `at + off` (an address of its own type), as the dtype.
    fn load_scalar_input(&mut self, t: ElemType, at: Value, off: i32) -> Value {
        let x = match t {
            ElemType::Bool => {
                // true where the byte is nonzero ([`crate::Stored::Bool`]), as 0 / 1
                let byte = self.b.ins().load(types::I8, mem(), at, off);
                let truth = self.b.ins().icmp_imm_u(IntCC::NotEqual, byte, 0);
                self.b.ins().uextend(types::I32, truth)
            }
            ElemType::I32 => self.b.ins().load(types::I32, mem(), at, off),
            ElemType::I64 => self.b.ins().load(types::I64, mem(), at, off),
            ElemType::F32 => {
                let x = self.b.ins().load(types::F32, mem(), at, off);
                return match self.dtype {
                    ElemType::F64 => self.b.ins().fpromote(types::F64, x),
                    ElemType::F32 => x,
                    _ => unreachable!("only float types (f32, f64) reach here"),
                };
            }
            ElemType::F64 => return self.b.ins().load(types::F64, mem(), at, off),
            ElemType::C64 | ElemType::C128 | ElemType::Bytes(_) => unreachable!(
                "a float kernel reads no complex or byte-string input (a typed kernel loads it: lower/complex.rs, bytes.rs)"
            ),
        };
        self.b.ins().fcvt_from_sint(self.t, x)
    }

    /// Loads the element(s) of a strided row at row positions `j + off_bytes / size` onwards: lane
    /// `l` at `row + (j + off + l) * stride` elements, `jb` being `j * size`. A reversed row's lanes
    /// are one contiguous block backwards: one vector load and a lane reversal. Any other stride
    /// (an i64 value) is gathered by one scalar load per lane and `insertlane` (Cranelift has no
    /// gather), each lane's address the last one's plus the stride in bytes. The caller checked
    /// that every lane the run reads is an element of the input (check.rs), so the wrapping
    /// arithmetic of addresses that are never read does not matter.
    #[allow(clippy::too_many_arguments)]
    pub fn load_strided(
        &mut self,
        w: W,
        row: Value,
        jb: Value,
        off_bytes: i64,
        step: RowStep,
        params: Value,
        stored: Option<ElemType>,
    ) -> Value {
        if let Some(t) = stored {
            return self.load_strided_stored(w, row, jb, off_bytes, step, params, t);
        }
        let lanes = i64::from(self.lanes);
        if let RowStep::Reversed = step {
            let back = self.b.ins().ineg(jb);
            let at = self.b.ins().iadd(row, back);
            let first = -off_bytes;
            return match w {
                W::Scalar => self.load_far(self.t, at, first),
                W::Vector => {
                    // lanes l = 0.. at first - l * size: the block from lane lanes-1 up, reversed
                    let low = first - (lanes - 1) * self.size;
                    let v = self.load_far(self.v, at, low);
                    let bytes = self.b.ins().bitcast(types::I8X16, cast(), v);
                    let size = self.size as u8;
                    let mask: Vec<u8> = (0..lanes as u8)
                        .rev()
                        .flat_map(|l| (0..size).map(move |b| l * size + b))
                        .collect();
                    let imm = self.b.func.dfg.immediates.push(ConstantData::from(mask));
                    let r = self.b.ins().shuffle(bytes, bytes, imm);
                    self.b.ins().bitcast(self.v, cast(), r)
                }
            };
        }
        let (mut addr, step_bytes) = self.first_lane(row, jb, off_bytes, step, params);
        match w {
            W::Scalar => self.b.ins().load(self.t, mem(), addr, 0),
            W::Vector => {
                // lane 0 into a vector, the others inserted (x64: `vinsertps` from memory, f64's
                // lane 1 `vmovlhps`). Lane 0 as x64 lowers it best (a float `scalar_to_vector`
                // zeroes a register and merges into it: two more instructions): f32 as an i32
                // into a zeroed vector (one `vmovss` from memory), f64 splatted (`vmovsd` and
                // `vpshufd`; as an i64 it goes through a general register)
                let mut v = if self.dtype == ElemType::F32 {
                    let x = self.b.ins().load(self.it, mem(), addr, 0);
                    let x = self.b.ins().scalar_to_vector(self.iv, x);
                    self.b.ins().bitcast(self.v, cast(), x)
                } else {
                    let x = self.b.ins().load(self.t, mem(), addr, 0);
                    self.b.ins().splat(self.v, x)
                };
                for l in 1..self.lanes {
                    addr = self.b.ins().iadd(addr, step_bytes);
                    let x = self.b.ins().load(self.t, mem(), addr, 0);
                    v = self.b.ins().insertlane(v, x, l);
                }
                v
            }
        }
    }

    /// The address of a strided row's first lane at row positions `j + off_bytes / size` (`jb`
    /// being `j * size`), and the step to the next lane, in bytes.
    fn first_lane(
        &mut self,
        row: Value,
        jb: Value,
        off_bytes: i64,
        step: RowStep,
        params: Value,
    ) -> (Value, Value) {
        let stride = step.elements(self, params);
        let scaled = self.b.ins().imul(jb, stride);
        let at = self.b.ins().iadd(row, scaled);
        let step_bytes = self.b.ins().imul_imm_s(stride, self.size);
        let addr = match off_bytes / self.size {
            0 => at,
            off => {
                let o = self.b.ins().imul_imm_s(step_bytes, off);
                self.b.ins().iadd(at, o)
            }
        };
        (addr, step_bytes)
    }

    /// [`Gen::load_strided`] of an input stored as `t` ([`Gen::load_input`]): lane by lane, each
    /// lane's address (in the dtype's units, as every stored input's) shifted back to the input's
    /// own and its element converted.
    #[allow(clippy::too_many_arguments)]
    fn load_strided_stored(
        &mut self,
        w: W,
        row: Value,
        jb: Value,
        off_bytes: i64,
        step: RowStep,
        params: Value,
        t: ElemType,
    ) -> Value {
        let shift = crate::run::stored_shift(self.size as usize, t);
        let (mut addr, step_bytes) = self.first_lane(row, jb, off_bytes, step, params);
        let lanes = if w == W::Vector { self.lanes } else { 1 };
        if self.typed.is_some() {
            // a typed kernel's lanes in the input's own type, gathered as the typed lowering holds
            // them (bools widened into masks)
            let mut scalars = Vec::with_capacity(usize::from(lanes));
            for l in 0..lanes {
                if l > 0 {
                    addr = self.b.ins().iadd(addr, step_bytes);
                }
                // never byte strings: they are read in C order only (`Stored::Bytes`), never
                // through a row's strides (check.rs refuses a plan that would)
                let real = self.own_address(addr, shift);
                scalars.push(self.load(t, real, false));
            }
            return match w {
                W::Scalar => scalars[0],
                W::Vector => self.assemble(scalars, t),
            };
        }
        let mut v = self.zero[w as usize];
        for l in 0..lanes {
            if l > 0 {
                addr = self.b.ins().iadd(addr, step_bytes);
            }
            let real = self.own_address(addr, shift);
            let x = self.load_scalar_input(t, real, 0);
            v = match w {
                W::Scalar => x,
                W::Vector => self.b.ins().insertlane(v, x, l),
            };
        }
        v
    }

    /// Loads a `ty` at `addr + offset` bytes, an offset beyond the load's 32-bit immediate added to
    /// the address first.
    fn load_far(&mut self, ty: Type, addr: Value, offset: i64) -> Value {
        match i32::try_from(offset) {
            Ok(o) => self.b.ins().load(ty, mem(), addr, o),
            Err(_) => {
                let a = self.b.ins().iadd_imm_s(addr, offset);
                self.b.ins().load(ty, mem(), a, 0)
            }
        }
    }

    /// The unary opcode `op` of a float kernel on `x`: [`Gen::unary`] in the kernel's dtype, a
    /// predicate's lane mask given as 1.0 / 0.0 (a float kernel's truth values).
    pub fn float_unary(&mut self, op: UnaryOp, x: Value) -> Value {
        use UnaryOp::*;
        let r = self.unary(op, x, self.dtype);
        match op {
            Not | IsNan | IsInf | IsFinite | Signbit => self.mask_one(r, self.dtype),
            _ => r,
        }
    }

    /// The binary opcode `op` of a float kernel on `a` and `b`: [`Gen::binary`] in the kernel's
    /// dtype, a comparison's lane mask given as 1.0 / 0.0; `and` / `or` of truth values (nonzero or
    /// NaN).
    pub fn float_binary(&mut self, w: W, op: BinaryOp, a: Value, b: Value) -> Value {
        use BinaryOp::*;
        match op {
            And | Or => {
                let ma = self.truth_mask(w, a);
                let mb = self.truth_mask(w, b);
                let m = if op == And {
                    self.b.ins().band(ma, mb)
                } else {
                    self.b.ins().bor(ma, mb)
                };
                self.mask_one(m, self.dtype)
            }
            Lt | Le | Gt | Ge | Eq | Ne => {
                let m = self.binary(op, a, b, self.dtype, None);
                self.mask_one(m, self.dtype)
            }
            _ => self.binary(op, a, b, self.dtype, None),
        }
    }

    /// NumPy's `minimum` of two floats of one type, scalars or vectors: `a` where `a < b` or `a` is
    /// NaN, else `b` (so of two equal values the second, and the first NaN), exactly as
    /// [`kiln_ir::Real::minimum`].
    pub fn minimum(&mut self, a: Value, b: Value) -> Value {
        self.nan_first(FloatCC::LessThan, a, b)
    }

    /// NumPy's `maximum`: `a` where `a > b` or `a` is NaN, else `b` (see [`Gen::minimum`]).
    pub fn maximum(&mut self, a: Value, b: Value) -> Value {
        self.nan_first(FloatCC::GreaterThan, a, b)
    }

    /// `a` where `a cc b` or `a` is NaN, else `b`: `a cc b ? a : b` in the form x86's `minp*` /
    /// `maxp*` compute (`cc` as a `<`, `b` where unordered or equal: one instruction), then `a`
    /// where it is NaN (a select of a compare's mask: one blend), where the or of the two masks
    /// took three instructions more.
    fn nan_first(&mut self, cc: FloatCC, a: Value, b: Value) -> Value {
        let better = match cc {
            FloatCC::GreaterThan => self.b.ins().fcmp(FloatCC::LessThan, b, a),
            _ => self.b.ins().fcmp(cc, a, b),
        };
        let m = self.pick(better, a, b);
        let nan = self.b.ins().fcmp(FloatCC::Unordered, a, a);
        self.pick(nan, a, m)
    }

    /// A float kernel's `where(c, a, b)`: `a` where `c` is nonzero or NaN.
    pub fn float_select(&mut self, w: W, c: Value, a: Value, b: Value) -> Value {
        let m = self.truth_mask(w, c);
        self.pick(m, a, b)
    }

    /// The position `pos` (an i64 flat index of the iteration space, plus `lane` for each lane at
    /// vector width) along an axis of `dim` points and c-stride `cs`, as the kernel's float type.
    pub fn index_value(&mut self, w: W, pos: Value, cs: Value, dim: Value) -> Value {
        let one = |g: &mut Self, p: Value| {
            let q = g.b.ins().udiv(p, cs);
            let r = g.b.ins().urem(q, dim);
            // u64 -> f64 -> dtype: exactly the interpreter's `T::from_f64(i as f64)`
            let f = g.b.ins().fcvt_from_uint(types::F64, r);
            if g.dtype == ElemType::F32 {
                g.b.ins().fdemote(types::F32, f)
            } else {
                f
            }
        };
        match w {
            W::Scalar => one(self, pos),
            W::Vector => {
                let mut out = self.zero[1];
                for lane in 0..self.lanes {
                    let p = self.b.ins().iadd_imm_s(pos, lane as i64);
                    let x = one(self, p);
                    out = self.b.ins().insertlane(out, x, lane);
                }
                out
            }
        }
    }

    /// The position `pos` along an axis of `dim` points and c-stride `cs` (as [`Gen::index_value`])
    /// as an int64: a typed kernel's index (`i64x2` at vector width).
    pub fn index_i64(&mut self, w: W, pos: Value, cs: Value, dim: Value) -> Value {
        let one = |g: &mut Self, p: Value| {
            let q = g.b.ins().udiv(p, cs);
            g.b.ins().urem(q, dim)
        };
        match w {
            W::Scalar => one(self, pos),
            W::Vector => {
                let x = one(self, pos);
                let mut out = self.b.ins().splat(types::I64X2, x);
                for lane in 1..self.lanes {
                    let p = self.b.ins().iadd_imm_s(pos, lane as i64);
                    let x = one(self, p);
                    out = self.b.ins().insertlane(out, x, lane);
                }
                out
            }
        }
    }

    /// Integer compare on index values.
    pub fn icmp(&mut self, cc: IntCC, a: Value, b: Value) -> Value {
        self.b.ins().icmp(cc, a, b)
    }
}

/// A float constant of `dtype`: `x` rounded as `Real::from_f64` does.
pub fn fconst(b: &mut FunctionBuilder<'_>, dtype: ElemType, x: f64) -> Value {
    match dtype {
        ElemType::F64 => b.ins().f64const(x),
        ElemType::F32 => b.ins().f32const(x as f32),
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// The row pointers of a kernel of many inputs, loaded where each input is read instead of held
/// in registers across the loops: a contiguous input's from the `ins` argument plus the row's byte
/// offset, a per-row input's from a stack slot written once per row. No load is a candidate for
/// hoisting or forwarding out of the loop (none is `readonly`, and nothing loaded the same address
/// before it), so no pointer lives across the inner loop.
#[derive(Clone)]
pub struct ManyInputs {
    /// The `ins` argument: the array of input pointers.
    pub ins: Value,
    /// The row's first element times the element size.
    pub row_bytes: Value,
    /// The address of the stack slot of per-row pointers (8 bytes per input).
    pub slot: Value,
    /// Per input: whether its row pointer is in the slot (else it is `ins[i] + row_bytes`).
    pub in_slot: Vec<bool>,
}

impl ManyInputs {
    /// Moves the row pointers computed in `ptrs` into the stack slot (once per row), so each is
    /// loaded where it is read.
    pub fn hold(&mut self, g: &mut Gen<'_, '_>, ptrs: &mut [Option<Value>]) {
        for (i, p) in ptrs.iter_mut().enumerate() {
            if let Some(v) = p.take() {
                g.b.ins().store(mem(), v, self.slot, (8 * i) as i32);
                self.in_slot[i] = true;
            }
        }
    }

    fn row_pointer(&self, g: &mut Gen<'_, '_>, i: usize) -> Value {
        if self.in_slot[i] {
            g.b.ins().load(types::I64, mem(), self.slot, (8 * i) as i32)
        } else {
            let base = g.b.ins().load(types::I64, mem(), self.ins, (8 * i) as i32);
            g.b.ins().iadd(base, self.row_bytes)
        }
    }
}

/// Where a literal's value is read.
#[derive(Debug, Clone, Copy)]
pub enum Literal {
    /// In registers, per width, defined in the entry block.
    Hoisted([Value; 2]),
    /// In the entry block's literal slot, whose address is the value, at this byte offset (see
    /// `frame::HOISTED_LITERALS`): a load where it is read, which Cranelift does not hoist.
    Slot(Value, i32),
}

/// Where the body's leaves come from at one point of one row.
pub struct Leaves<'v> {
    /// Per input: the row's base address (contiguous reads) or None.
    pub ptrs: &'v [Option<Value>],
    /// Where the row's base addresses are when `ptrs` holds none for a read input (kernels of
    /// many inputs, see `skeleton::MANY_INPUTS`).
    pub many: Option<&'v ManyInputs>,
    /// Per input: the value splatted for the row or the kernel, per width, or None.
    pub splats: &'v [Option<[Value; 2]>],
    /// Per literal node: where its value is (see `frame::HOISTED_LITERALS`).
    pub literals: &'v dyn Fn(NodeId) -> Literal,
    /// Per outer axis used by `Index`: its value for the row, per width.
    pub row_index: &'v dyn Fn(usize) -> Option<[Value; 2]>,
    /// `(dim, c-stride)` of each axis the body's `Index` nodes read (loaded once), for `Index` on
    /// inner axes.
    pub axis_params: &'v [Option<(Value, Value)>],
    /// Nodes computed beforehand for the block (see `skeleton/block.rs`), each read at its pointer
    /// plus the point's byte offset like a contiguous input.
    pub staged: &'v [(NodeId, Value)],
    /// Per input: how a strided row steps (see [`Gen::load_strided`]), or None where the row is
    /// contiguous.
    pub row_steps: &'v [Option<RowStep>],
    /// The parameter block (for a [`RowStep::Param`]).
    pub params: Value,
    /// Per input: the type its memory holds where that is not the dtype (see [`Gen::load_input`]).
    pub stored: &'v [Option<ElemType>],
    /// Inputs whose value at the point(s) was loaded beforehand, with it (the bools of several
    /// steps in one load: [`Gen::spread_truths`]).
    pub loaded: &'v [(usize, Value)],
}

/// How a strided row steps from one point to the next.
#[derive(Debug, Clone, Copy)]
pub enum RowStep {
    /// Backwards by one element (fixed in the code).
    Reversed,
    /// By this many elements (an i64 loaded from the parameter block in the entry block).
    By(Value),
    /// By parameter `p` of the parameter block, loaded where it is read (kernels of many inputs).
    Param(usize),
}

impl RowStep {
    /// The step in elements, as an i64 value at the current position.
    pub fn elements(self, g: &mut Gen<'_, '_>, params: Value) -> Value {
        match self {
            RowStep::Reversed => g.b.ins().iconst(types::I64, -1),
            RowStep::By(v) => v,
            RowStep::Param(p) => g.b.ins().load(types::I64, mem(), params, (8 * p) as i32),
        }
    }
}

/// Emits the body at width `w` for the point(s) starting at flat position `flat` (i64) whose byte
/// offset in a contiguous row is `jb` plus the constant `off_bytes`: each node in order, by the one
/// lowering of its opcode. A typed kernel's nodes each in their own type (a constant cast as its
/// value, computed by the interpreter's cast; `Index` as int64); a float kernel's in its dtype,
/// its literals hoisted or read from their slots, its truth values 1.0 / 0.0.
#[allow(clippy::too_many_arguments)]
pub fn emit_body(
    g: &mut Gen<'_, '_>,
    w: W,
    arena: &ExprArena,
    order: &[NodeId],
    leaves: &Leaves<'_>,
    jb: Value,
    off_bytes: i64,
    flat: Value,
    scratch: &mut [Option<Value>],
) -> Value {
    let typed = g.typed;
    let vector = w == W::Vector;
    let pairs = if typed.is_none() && g.math.inline && g.dtype == ElemType::F64 {
        erfc_pairs(arena, order)
    } else {
        Vec::new()
    };
    for &id in order {
        if let Some(&(first, second)) = pairs.iter().find(|p| p.0 == id || p.1 == id) {
            if id == second {
                // computed with `first`
                debug_assert!(
                    scratch[id.index()].is_some(),
                    "the pair emitted at its first node"
                );
                continue;
            }
            let Node::Unary(UnaryOp::Erfc, a) = *arena.node(first) else {
                unreachable!("a pair is of two erfc nodes")
            };
            let a = scratch[a.index()].expect("operand emitted");
            let (r, nr) = math::lower_erfc_pair(g.b, &g.math, a);
            scratch[first.index()] = Some(r);
            scratch[second.index()] = Some(nr);
            continue;
        }
        // a wide routine's result (a typed kernel's of the lanes' float type, or a complex quotient
        // of parts of that type: block.rs)
        if let Some(&(_, ptr)) = leaves.staged.iter().find(|s| s.0 == id) {
            let addr = g.b.ins().iadd(ptr, jb);
            scratch[id.index()] = Some(match typed.map(|t| t.type_of(id)) {
                // a complex division's points, interleaved at their own addresses (block.rs)
                Some(t) if t.is_complex() => {
                    let shift = crate::run::stored_shift(g.size as usize, t);
                    let own = g.own_address(addr, shift);
                    let at =
                        g.b.ins()
                            .iadd_imm_s(own, crate::run::own_offset(off_bytes, shift));
                    g.complex_load(t, at, vector)
                }
                _ => g.load_float(w, addr, off_bytes),
            });
            continue;
        }
        let get = |x: NodeId| scratch[x.index()].expect("operand emitted");
        let val = match (*arena.node(id), typed) {
            (Node::Input(i), _) => input_value(g, w, i as usize, leaves, jb, off_bytes),
            // a typed kernel reads a literal only through the cast that types it (a constant)
            (Node::Int(_) | Node::Literal(_), Some(_)) => continue,
            (Node::Literal(_), None) => match (leaves.literals)(id) {
                Literal::Hoisted(v) => v[w as usize],
                Literal::Slot(base, offset) => {
                    let s = g.load_float(W::Scalar, base, offset as i64);
                    match w {
                        W::Scalar => s,
                        W::Vector => g.splat(W::Vector, s),
                    }
                }
            },
            (Node::Int(_) | Node::Cast(..) | Node::Bytes(_), None) => {
                unreachable!("KernelKey::new refuses typed kernels")
            }
            (Node::Bytes(s), Some(_)) => g.string(s, vector),
            (Node::Cast(to, a), Some(tk)) => match constant(tk, id) {
                Some(c) => g.konst(c, vector),
                None => g.cast(get(a), tk.type_of(a), to),
            },
            (Node::Index(axis), _) => {
                let axis = axis as usize;
                match (leaves.row_index)(axis) {
                    Some(v) if typed.is_none() => v[w as usize],
                    _ => {
                        let (dim, cs) = leaves.axis_params[axis].expect("the frame loads every Index axis");
                        match typed {
                            Some(_) => g.index_i64(w, flat, cs, dim),
                            None => g.index_value(w, flat, cs, dim),
                        }
                    }
                }
            }
            (Node::Unary(op, a), Some(tk)) => g.unary(op, get(a), tk.type_of(a)),
            (Node::Unary(op, a), None) => g.float_unary(op, get(a)),
            (Node::Binary(op, a, b), Some(tk)) if tk.type_of(a).is_bytes() => {
                // a constant needle of 1 to 8 bytes up to its first NUL: searched inline
                let needle = match (op, arena.node(b)) {
                    (BinaryOp::Contains, &Node::Bytes(s)) => Some(kiln_ir::bytes::c_string(s.bytes())),
                    _ => None,
                };
                // `==` and `!=` of a constant: against its bytes, inline
                let constant = |n: NodeId| match arena.node(n) {
                    &Node::Bytes(s) => Some(s),
                    _ => None,
                };
                let equal = matches!(op, BinaryOp::Eq | BinaryOp::Ne);
                match needle {
                    Some(n) if (1..=8).contains(&n.len()) => g.contains_const(get(a), tk.type_of(a), n),
                    _ if equal && let Some(s) = constant(b) => {
                        g.bytes_equal_const(op, get(a), tk.type_of(a), s.bytes())
                    }
                    _ if equal && let Some(s) = constant(a) => {
                        g.bytes_equal_const(op, get(b), tk.type_of(b), s.bytes())
                    }
                    _ => g.bytes_op(op, get(a), tk.type_of(a), get(b), tk.type_of(b)),
                }
            }
            (Node::Binary(op, a, b), Some(tk)) => {
                g.binary(op, get(a), get(b), tk.type_of(a), constant(tk, b))
            }
            (Node::Binary(op, a, b), None) => g.float_binary(w, op, get(a), get(b)),
            (Node::Where(c, a, b), Some(tk)) if tk.type_of(a).is_complex() => {
                g.complex_select(get(c), get(a), get(b))
            }
            (Node::Where(c, a, b), Some(_)) => g.select(get(c), get(a), get(b)),
            (Node::Where(c, a, b), None) => g.float_select(w, get(c), get(a), get(b)),
            // one rounding, as the interpreter's `mul_add`: `vfmadd` where the host has FMA, else
            // Cranelift's call of libm's `fma` (correctly rounded too, so the bits are the same)
            (Node::Fma(a, b, c), None) => g.b.ins().fma(get(a), get(b), get(c)),
            (Node::Fma(..), Some(_)) => unreachable!("typed::why_not refuses fma"),
        };
        // a comparison of half-filled 32-bit values gives an i32x4 mask: the kernel's bools are i64x2
        let val = match typed {
            Some(tk) if vector && tk.type_of(id) == ElemType::Bool => g.bool_mask(val),
            _ => val,
        };
        scratch[id.index()] = Some(val);
    }
    scratch[order.last().expect("a body has a root").index()].expect("root emitted")
}

/// Input `i`'s value at width `w` at the point(s) whose byte offset in a contiguous row is `jb`
/// plus `off_bytes`.
fn input_value(g: &mut Gen<'_, '_>, w: W, i: usize, leaves: &Leaves<'_>, jb: Value, off_bytes: i64) -> Value {
    if let Some(&(_, v)) = leaves.loaded.iter().find(|l| l.0 == i) {
        return v;
    }
    if let Some(s) = leaves.splats[i] {
        return s[w as usize];
    }
    let base = match (leaves.ptrs[i], leaves.many) {
        (Some(p), _) => p,
        (None, Some(m)) => m.row_pointer(g, i),
        (None, None) => unreachable!("a contiguous input has a row pointer"),
    };
    match leaves.row_steps[i] {
        Some(step) => g.load_strided(w, base, jb, off_bytes, step, leaves.params, leaves.stored[i]),
        None => {
            let addr = g.b.ins().iadd(base, jb);
            g.load_input(w, i, addr, off_bytes, leaves.stored[i])
        }
    }
}

/// The pairs `(e1, e2)` of erfc nodes in `order`, `e1` first, whose arguments are exact negations
/// of each other (see [`negation`]): the normal CDF's `N(d)` and `N(-d)` as
/// `erfc(-d*c)` and `erfc(d*c)`. Each pair is emitted as one [`math::lower_erfc_pair`], whose two
/// results are bit for bit those of the two nodes (NaN aside, whose sign the negation flips); each
/// node is in one pair at most.
fn erfc_pairs(arena: &ExprArena, order: &[NodeId]) -> Vec<(NodeId, NodeId)> {
    let erfc_arg = |id: NodeId| match *arena.node(id) {
        Node::Unary(UnaryOp::Erfc, a) => Some(a),
        _ => None,
    };
    let nodes: Vec<(NodeId, NodeId)> = order
        .iter()
        .filter_map(|&id| erfc_arg(id).map(|a| (id, a)))
        .collect();
    let mut pairs: Vec<(NodeId, NodeId)> = Vec::new();
    let taken = |pairs: &[(NodeId, NodeId)], id: NodeId| pairs.iter().any(|p| p.0 == id || p.1 == id);
    for (i, &(e1, a1)) in nodes.iter().enumerate() {
        for &(e2, a2) in &nodes[i + 1..] {
            if !taken(&pairs, e1) && !taken(&pairs, e2) && negation(arena, a1, a2, 8) == Some(true) {
                pairs.push((e1, e2));
            }
        }
    }
    pairs
}

/// Whether `b` is, bit for bit, `a` (`Some(false)`) or `-a` (`Some(true)`) for every input, NaN
/// aside, by the structure of the two (`None`: not known): `-x` negates, and so does negating one
/// operand of a product or a quotient (IEEE rounds the magnitude alone, the sign is the exclusive
/// or of the operands' signs: `(-x)*c == -(x*c)` exactly, zeros and infinities included); two
/// literals of opposite signs. A difference is not: `a - b` and `b - a` are both `+0.0` where
/// `a == b`. `depth` bounds the search.
fn negation(arena: &ExprArena, a: NodeId, b: NodeId, depth: u32) -> Option<bool> {
    if a == b {
        return Some(false);
    }
    if depth == 0 {
        return None;
    }
    let d = depth - 1;
    match (*arena.node(a), *arena.node(b)) {
        (Node::Unary(UnaryOp::Neg, x), _) => negation(arena, x, b, d).map(|s| !s),
        (_, Node::Unary(UnaryOp::Neg, y)) => negation(arena, a, y, d).map(|s| !s),
        (Node::Literal(x), Node::Literal(y)) => {
            (x ^ y == 1 << 63 && !f64::from_bits(x).is_nan()).then_some(true)
        }
        (Node::Binary(op1, x1, x2), Node::Binary(op2, y1, y2))
            if op1 == op2 && matches!(op1, BinaryOp::Mul | BinaryOp::Div) =>
        {
            let s1 = negation(arena, x1, y1, d)?;
            let s2 = negation(arena, x2, y2, d)?;
            Some(s1 != s2)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn negations_by_structure() {
        let mut ar = ExprArena::new();
        let x = ar.intern(Node::Input(0));
        let y = ar.intern(Node::Input(1));
        let c = ar.intern(Node::literal(0.5));
        let nc = ar.intern(Node::literal(-0.5));
        let nx = ar.intern(Node::Unary(UnaryOp::Neg, x));
        let nnx = ar.intern(Node::Unary(UnaryOp::Neg, nx));
        let xc = ar.intern(Node::Binary(BinaryOp::Mul, x, c));
        let nxc = ar.intern(Node::Binary(BinaryOp::Mul, nx, c));
        let x_nc = ar.intern(Node::Binary(BinaryOp::Mul, x, nc));
        let nx_nc = ar.intern(Node::Binary(BinaryOp::Mul, nx, nc));
        let q = ar.intern(Node::Binary(BinaryOp::Div, nnx, y));
        let nq = ar.intern(Node::Binary(BinaryOp::Div, x, y));
        let d1 = ar.intern(Node::Binary(BinaryOp::Sub, x, y));
        let d2 = ar.intern(Node::Binary(BinaryOp::Sub, y, x));
        let sum = ar.intern(Node::Binary(BinaryOp::Add, x, c));
        assert_eq!(negation(&ar, x, nx, 8), Some(true));
        assert_eq!(negation(&ar, x, nnx, 8), Some(false));
        assert_eq!(negation(&ar, xc, nxc, 8), Some(true));
        assert_eq!(negation(&ar, xc, x_nc, 8), Some(true));
        assert_eq!(negation(&ar, xc, nx_nc, 8), Some(false));
        assert_eq!(negation(&ar, q, nq, 8), Some(false));
        assert_eq!(
            negation(&ar, d1, d2, 8),
            None,
            "x - y and y - x are both +0 at x == y"
        );
        assert_eq!(negation(&ar, sum, nx, 8), None);
        assert_eq!(negation(&ar, xc, nxc, 1), None, "the depth bound");
        let e = |ar: &mut ExprArena, a| ar.intern(Node::Unary(UnaryOp::Erfc, a));
        let (e1, e2, e3, e4) = (e(&mut ar, nxc), e(&mut ar, xc), e(&mut ar, x_nc), e(&mut ar, d1));
        // e3 is a negation of e2's argument too, but e2 is taken; e1 and e3 are equal arguments
        assert_eq!(erfc_pairs(&ar, &[x, e1, e2, e3, e4]), vec![(e1, e2)]);
    }
}
