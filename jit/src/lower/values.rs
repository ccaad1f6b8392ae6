//! How each element type is held in Cranelift values, and what every opcode shares: types,
//! constants, loads, stores, lanes and selects.
//!
//! A scalar bool is an `i8` holding 0 or 1; int32, int64, float32 and float64 are Cranelift's
//! `i32 i64 f32 f64`. In a vector kernel of 4 lanes (every value 32 bits wide) int32 is `i32x4`,
//! float32 `f32x4` and bool a lane mask `i32x4` (0 or -1 per lane, what `icmp` and `fcmp` give); in
//! one of 2 lanes (every value 64 bits wide) int64 is `i64x2`, float64 `f64x2` and bool an `i64x2`
//! mask. A map of bools alone runs 16 lanes (`crate::typed::byte_lanes`): its bools are `i8x16`
//! masks, loaded and stored 16 bytes at once. A kernel mixing 32- and 64-bit values runs 2 lanes, its 32-bit values half-filled (see
//! `typed.rs`). A complex value is a pair of its parts' vectors (`complex.rs`); a byte string is
//! held as its address. Operations Cranelift does not lower on 128-bit x64 vectors run per lane
//! ([`Gen::per_lane`]): each lane extracted, computed as a scalar, and put back.

use crate::clif::{cast, mem};
use crate::lower::Gen;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Type, Value, types};
use cranelift_frontend::FunctionBuilder;
use kiln_ir::typed::{Scalar, TypedKernel};
use kiln_ir::{ElemType, Node, NodeId};

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
        // a complex value's node carries its real parts (lower/complex.rs)
        ElemType::C64 => types::F32,
        ElemType::C128 => types::F64,
        // a byte string is held as its address
        ElemType::Bytes(_) => types::I64,
    }
}

impl Gen<'_, '_> {
    /// The type of a value of `t` at `vector` width.
    pub(crate) fn ty(&self, t: ElemType, vector: bool) -> Type {
        if let Some(part) = t.real_part() {
            // a complex value's parts (lower/complex.rs)
            return self.ty(part, vector);
        }
        if !vector {
            return scalar_type(t);
        }
        match (t, self.lanes) {
            (ElemType::Bool, 16) => types::I8X16,
            (ElemType::Bool | ElemType::I32, 4) => types::I32X4,
            (ElemType::F32, 4) => types::F32X4,
            (ElemType::Bool | ElemType::I64 | ElemType::Bytes(_), 2) => types::I64X2,
            (ElemType::F64, 2) => types::F64X2,
            // a 32-bit value in a kernel of 2 lanes: its lanes 0 and 1 (half-filled)
            (ElemType::I32, 2) => types::I32X4,
            (ElemType::F32, 2) => types::F32X4,
            _ => unreachable!("a vector kernel has 2, 4 or (bools alone) 16 lanes (typed.rs lanes_of)"),
        }
    }

    /// The integer lane type of a vector of `lanes` lanes (what masks are).
    pub(crate) fn mask_lane(&self) -> Type {
        match self.lanes {
            16 => types::I8,
            4 => types::I32,
            _ => types::I64,
        }
    }

    /// A scalar bool (`i8` 0 / 1) as a lane of the kernel's masks: widened to the lane's width and
    /// negated (0 or all ones).
    pub(crate) fn bool_lane(&mut self, s: Value) -> Value {
        let lane = self.mask_lane();
        let w = if lane == types::I8 {
            s
        } else {
            self.b.ins().uextend(lane, s)
        };
        self.b.ins().ineg(w)
    }

    /// Runs this typed kernel, a map of bools alone ([`crate::typed::byte_lanes`]), in 16 lanes:
    /// its bools `i8x16` masks. Its dtype stays float32's, whose element size its addresses count
    /// in (an input's and the output's shifted by [`crate::run::stored_shift`]).
    pub(crate) fn byte_lanes(&mut self) {
        self.lanes = 16;
    }

    pub(crate) fn is_vector(&self, v: Value) -> bool {
        self.b.func.dfg.value_type(v).is_vector()
    }

    /// Whether values of `t` are half-filled vectors here: 32 bits wide in a kernel of 2 lanes.
    pub(crate) fn half(&self, t: ElemType) -> bool {
        self.lanes == 2 && bits(t) == 32
    }

    /// A mask of a half-filled comparison (`i32x4`, lanes 0 and 1) as the kernel's bool (`i64x2`);
    /// any other value unchanged.
    pub(crate) fn bool_mask(&mut self, m: Value) -> Value {
        if self.lanes == 2 && self.b.func.dfg.value_type(m) == types::I32X4 {
            self.b.ins().swiden_low(m)
        } else {
            m
        }
    }

    /// The low 32 bits of each lane of an `i64x2` as the half-filled `i32x4` (lanes 0 and 1;
    /// wrapping: an int64 narrowed to int32, or a mask for 32-bit data).
    pub(crate) fn narrow_lanes(&mut self, v: Value) -> Value {
        let mut mask = [0u8; 16];
        for (i, m) in mask.iter_mut().enumerate() {
            *m = ((i / 4) % 2 * 8 + i % 4) as u8;
        }
        self.shuffle_bytes(v, v, mask, types::I32X4)
    }

    /// 1.0 or +0.0 of the kernel's float dtype: the values hoisted into the entry block
    /// ([`Gen::new`]; Cranelift rematerialises a constant where it is used, in the loop).
    fn hoisted(&self, s: Scalar, vector: bool) -> Option<Value> {
        let bits = match (s, self.dtype) {
            (Scalar::F64(x), ElemType::F64) => x.to_bits(),
            (Scalar::F32(x), ElemType::F32) => u64::from(x.to_bits()) << 32,
            _ => return None,
        };
        let one = match self.dtype {
            ElemType::F64 => 1f64.to_bits(),
            ElemType::F32 => u64::from(1f32.to_bits()) << 32,
            _ => unreachable!("only float types (f32, f64) reach here"),
        };
        match bits {
            0 => Some(self.zero[vector as usize]),
            b if b == one => Some(self.one[vector as usize]),
            _ => None,
        }
    }

    /// The constant `s`, as a scalar or splat (of the kernel's float dtype, 1.0 and +0.0 are the
    /// values hoisted into the entry block: [`Gen::hoisted`]).
    pub(crate) fn konst(&mut self, s: Scalar, vector: bool) -> Value {
        if let Some(v) = self.hoisted(s, vector) {
            return v;
        }
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

    /// The `lanes` bools at `addr` (bytes, each true where nonzero: [`crate::Stored::Bool`]) as
    /// a mask of the kernel's lanes (int64 lanes of 2, int32 of 4, or bytes of 16 loaded as they
    /// are): the bytes in one load, broadcast to every lane; lane `k` keeps its own byte (bits `8k`
    /// to `8k + 7`) and is set where that is nonzero. One broadcast, where widening the bytes lane
    /// by lane takes a shuffle per doubling of the width.
    pub(crate) fn load_bools(&mut self, addr: Value) -> Value {
        if self.lanes == 16 {
            // 16 bools in one load, each lane set where its byte is nonzero
            return self.load_truths(addr, 16);
        }
        let (word_ty, splat_ty, vt, step) = if self.lanes == 4 {
            (types::I32, types::I32X4, types::I32X4, 4)
        } else {
            (types::I16, types::I16X8, types::I64X2, 8)
        };
        let word = self.b.ins().load(word_ty, mem(), addr, 0);
        let v = self.b.ins().splat(splat_ty, word);
        let v = self.b.ins().bitcast(vt, cast(), v);
        let mut bytes = Vec::with_capacity(16);
        for k in 0..self.lanes {
            let lane: u64 = 0xff << (8 * k);
            bytes.extend_from_slice(&lane.to_le_bytes()[..step]);
        }
        let own = self.vector_constant(vt, bytes);
        let v = self.b.ins().band(v, own);
        let zero = self.vector_constant(vt, vec![0; 16]);
        self.b.ins().icmp(IntCC::NotEqual, v, zero)
    }

    /// The truths of the `n` bools (8 or 16) from the own address `at`, in the low bytes of one
    /// `i8x16`, each -1 where its byte is nonzero ([`crate::Stored::Bool`]), else 0: one load and
    /// one compare.
    pub(crate) fn load_truths(&mut self, at: Value, n: usize) -> Value {
        let bytes = if n == 16 {
            self.b.ins().load(types::I8X16, mem(), at, 0)
        } else {
            let word = self.b.ins().load(types::I64, mem(), at, 0);
            let v = self.b.ins().scalar_to_vector(types::I64X2, word);
            self.b.ins().bitcast(types::I8X16, cast(), v)
        };
        let zero = self.vector_constant(types::I8X16, vec![0; 16]);
        self.b.ins().icmp(IntCC::NotEqual, bytes, zero)
    }

    /// The masks of `steps` consecutive steps of this kernel's 2 or 4 lanes from `truths` (as
    /// [`Gen::load_truths`] gives them, a step's bools after the last step's): each step's lanes
    /// spread from its bytes by one byte shuffle. Loaded a step at a time, two or four bools took
    /// seven operations (a load, a broadcast, an and, two compares and a not).
    pub(crate) fn spread_truths(&mut self, truths: Value, steps: usize) -> Vec<Value> {
        let lanes = usize::from(self.lanes);
        let (width, vt) = if lanes == 4 {
            (4, types::I32X4)
        } else {
            (8, types::I64X2)
        };
        (0..steps)
            .map(|p| {
                let mut mask = [0u8; 16];
                for (b, m) in mask.iter_mut().enumerate() {
                    *m = (p * lanes + b / width) as u8;
                }
                self.shuffle_bytes(truths, truths, mask, vt)
            })
            .collect()
    }

    /// A vector constant of type `vt`, of these bytes (little-endian lanes).
    pub(crate) fn vector_constant(&mut self, vt: Type, bytes: Vec<u8>) -> Value {
        let handle = self
            .b
            .func
            .dfg
            .constants
            .insert(cranelift_codegen::ir::ConstantData::from(bytes));
        self.b.ins().vconst(vt, handle)
    }

    /// Loads one element of type `t` at `addr` (scalar) or `lanes` elements (vector; bools one byte
    /// each, made into a mask: [`Gen::load_bools`]).
    pub(crate) fn load(&mut self, t: ElemType, addr: Value, vector: bool) -> Value {
        if t.is_complex() {
            return self.complex_load(t, addr, vector);
        }
        if let ElemType::Bytes(w) = t {
            // `addr` is the string's own address (`Gen::load_input`); a vector's two strings are
            // the next two
            let first = addr;
            if !vector {
                return first;
            }
            let second = self.b.ins().iadd_imm_u(first, i64::from(w));
            let v = self.b.ins().splat(types::I64X2, first);
            return self.b.ins().insertlane(v, second, 1);
        }
        if t == ElemType::Bool {
            if !vector {
                let byte = self.b.ins().load(types::I8, mem(), addr, 0);
                return self.b.ins().icmp_imm_u(IntCC::NotEqual, byte, 0);
            }
            return self.load_bools(addr);
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
    pub(crate) fn store(&mut self, t: ElemType, v: Value, addr: Value) {
        if t.is_complex() {
            return self.complex_store(t, v, addr);
        }
        if t == ElemType::Bool && self.is_vector(v) && self.lanes == 16 {
            // the masks are the 16 bools' bytes: stored at once
            return self.store_packed(v, 16, addr);
        }
        if t == ElemType::Bool && self.is_vector(v) {
            // the 2 or 4 bools of one vector
            return self.store_bools(&[v], addr);
        }
        if self.is_vector(v) && self.half(t) {
            let w = self.b.ins().bitcast(types::I64X2, cast(), v);
            let x = self.b.ins().extractlane(w, 0);
            self.b.ins().store(mem(), x, addr, 0);
            return;
        }
        self.b.ins().store(mem(), v, addr, 0);
    }

    /// Whether [`Gen::store_bools`] packs the bool vectors of `steps` consecutive steps of this
    /// kernel: 2 or 4 lanes (a vector holds 2 or 4 bools), 8 or 16 bools in all.
    pub(crate) fn packs_bools(&self, steps: i64) -> bool {
        matches!(self.lanes, 2 | 4) && matches!(steps * i64::from(self.lanes), 8 | 16)
    }

    /// Stores the bools of `vs` (masks of a kernel of 2 or 4 lanes: one vector, or those of
    /// consecutive steps, [`Gen::packs_bools`]) as one store of 2, 4, 8 or 16 bytes at the own
    /// address `at` of the first, each lane's byte (all ones or zero) and-ed with 1. One vector's
    /// lanes are gathered into its low bytes by one shuffle; several vectors' by saturating packs
    /// (`packssdw`, `packsswb`), a pair at a time, each halving the bytes of a lane (a mask's lane
    /// is -1 or 0 at any width, so saturation keeps it): 8 float64 comparisons take 4 packs where
    /// byte shuffles of pairs took 3 two-source permutes (`vpermi2b`, two uops each on Intel's
    /// port 5) and 3 reloaded shuffle constants, and ran at 0.69x NumPy's `x > 0.5`.
    pub(crate) fn store_bools(&mut self, vs: &[Value], at: Value) {
        let lanes = usize::from(self.lanes);
        let packed = if let [v] = vs {
            let width = 16 / lanes;
            let mut mask = [0u8; 16];
            for (k, m) in mask.iter_mut().take(lanes).enumerate() {
                *m = (k * width) as u8;
            }
            self.shuffle_bytes(*v, *v, mask, types::I8X16)
        } else {
            self.pack_masks(vs)
        };
        self.store_packed(packed, vs.len() * lanes, at);
    }

    /// Stores the `n` bools (2, 4, 8 or 16) in the low bytes of `packed` (an `i8x16`, a byte -1
    /// or 0 each) as one store of `n` bytes 0 / 1 at the own address `at`.
    pub(crate) fn store_packed(&mut self, packed: Value, n: usize, at: Value) {
        let ones = self.vector_constant(types::I8X16, vec![1; 16]);
        let bytes = self.b.ins().band(packed, ones);
        match n {
            16 => {
                self.b.ins().store(mem(), bytes, at, 0);
            }
            8 => {
                let words = self.b.ins().bitcast(types::I64X2, cast(), bytes);
                let w = self.b.ins().extractlane(words, 0);
                self.b.ins().store(mem(), w, at, 0);
            }
            n => {
                let words = self.b.ins().bitcast(types::I32X4, cast(), bytes);
                let w = self.b.ins().extractlane(words, 0);
                if n == 4 {
                    self.b.ins().store(mem(), w, at, 0);
                } else {
                    self.b.ins().istore16(mem(), w, at, 0);
                }
            }
        }
    }

    /// The masks `vs` (two or more, of this kernel's 2 or 4 lanes) packed into the low bytes of one
    /// `i8x16`, a byte a lane in order: pairs narrowed with saturation (a last one alone, with
    /// itself) until a lane is a byte.
    pub(crate) fn pack_masks(&mut self, vs: &[Value]) -> Value {
        let mut level: Vec<Value> = vs.to_vec();
        let mut lane_bytes = 16 / usize::from(self.lanes);
        while lane_bytes > 1 {
            // a lane of 4 or 8 bytes narrowed as 32-bit words, of 2 as 16-bit ones
            let from = if lane_bytes >= 4 {
                types::I32X4
            } else {
                types::I16X8
            };
            level = level
                .chunks(2)
                .map(|pair| {
                    let a = self.as_type(from, pair[0]);
                    let b = match pair.get(1) {
                        Some(&b) => self.as_type(from, b),
                        None => a,
                    };
                    self.b.ins().snarrow(a, b)
                })
                .collect();
            lane_bytes /= 2;
        }
        debug_assert_eq!(level.len(), 1, "at most 16 lanes, a byte each, fill one vector");
        level[0]
    }

    /// The 128-bit vector `v` as `ty`: bitcast where its type differs.
    fn as_type(&mut self, ty: Type, v: Value) -> Value {
        if self.b.func.dfg.value_type(v) == ty {
            v
        } else {
            self.b.ins().bitcast(ty, cast(), v)
        }
    }

    /// One scalar per lane (`lanes` of them, each as [`Gen::load`] gives a scalar) as the
    /// kernel's vector for `t`: bools (bytes 0 / 1) widened to the lane's width and negated into
    /// masks; lane 0 splat (a half-filled 32-bit vector's lanes 2 and 3 hold copies no result
    /// reads), the others inserted.
    pub(crate) fn assemble(&mut self, scalars: Vec<Value>, t: ElemType) -> Value {
        if t.is_complex() {
            return self.complex_assemble(scalars, t);
        }
        let vt = self.ty(t, true);
        let scalars: Vec<Value> = if t == ElemType::Bool {
            scalars.into_iter().map(|s| self.bool_lane(s)).collect()
        } else {
            scalars
        };
        let mut v = self.b.ins().splat(vt, scalars[0]);
        for (l, &s) in scalars.iter().enumerate().skip(1) {
            v = self.b.ins().insertlane(v, s, l as u8);
        }
        v
    }

    /// 1.0 where the mask `m` of a float value of type `t` (what `fcmp` of it gives: its own lanes)
    /// is set, else +0.0: the mask and-ed with 1.0's bits (a scalar: a select).
    pub(crate) fn mask_one(&mut self, m: Value, t: ElemType) -> Value {
        let vector = self.is_vector(m);
        let one = self.konst(Scalar::F64(1.0).cast(t), vector);
        let r = if !vector {
            let zero = self.konst(Scalar::F64(0.0).cast(t), false);
            self.b.ins().select(m, one, zero)
        } else {
            let (mt, ft) = (self.b.func.dfg.value_type(m), self.b.func.dfg.value_type(one));
            let bits = self.b.ins().bitcast(mt, cast(), one);
            let r = self.b.ins().band(m, bits);
            self.b.ins().bitcast(ft, cast(), r)
        };
        self.truths.insert(r, m);
        r
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
        // a branch of zero bits (`where(p, x, 0)`): one `and` of the mask (or of its complement)
        // with the other, where a select takes three (x86 has no select of a mask it cannot prove
        // to be one, as a bool loaded from memory is)
        let (zero_a, zero_b) = (self.zero_bits(a), self.zero_bits(b));
        if (zero_a || zero_b) && ta.lane_count() == tc.lane_count() && ta.lane_bits() == tc.lane_bits() {
            let kept = if zero_b { a } else { b };
            let kept = if ta == tc {
                kept
            } else {
                self.b.ins().bitcast(tc, cast(), kept)
            };
            let r = if zero_b {
                self.b.ins().band(kept, c)
            } else {
                self.b.ins().band_not(kept, c)
            };
            return if ta == tc {
                r
            } else {
                self.b.ins().bitcast(ta, cast(), r)
            };
        }
        if ta == tc {
            return self.b.ins().bitselect(c, a, b);
        }
        let c = self.b.ins().bitcast(ta, cast(), c);
        self.b.ins().bitselect(c, a, b)
    }

    /// Whether the vector `v` is all zero bits by its definition: a splat of an integer 0 or of
    /// +0.0 (not -0.0, whose sign bit is set), or a constant of zero bytes.
    fn zero_bits(&self, v: Value) -> bool {
        use cranelift_codegen::ir::{InstructionData, Opcode, ValueDef};
        let dfg = &self.b.func.dfg;
        let def = |v: Value| match dfg.value_def(v) {
            ValueDef::Result(inst, _) => Some(&dfg.insts[inst]),
            _ => None,
        };
        match def(v) {
            Some(&InstructionData::Unary {
                opcode: Opcode::Splat,
                arg,
            }) => match def(arg) {
                Some(&InstructionData::UnaryImm {
                    opcode: Opcode::Iconst,
                    imm,
                }) => imm.bits() == 0,
                Some(&InstructionData::UnaryIeee64 {
                    opcode: Opcode::F64const,
                    imm,
                }) => imm.bits() == 0,
                Some(&InstructionData::UnaryIeee32 {
                    opcode: Opcode::F32const,
                    imm,
                }) => imm.bits() == 0,
                _ => false,
            },
            Some(&InstructionData::UnaryConst {
                opcode: Opcode::Vconst,
                constant_handle,
            }) => dfg
                .constants
                .get(constant_handle)
                .as_slice()
                .iter()
                .all(|&b| b == 0),
            _ => false,
        }
    }

    pub(crate) fn not_bool(&mut self, x: Value) -> Value {
        if self.is_vector(x) {
            self.b.ins().bnot(x)
        } else {
            self.b.ins().bxor_imm_s(x, 1)
        }
    }

    /// Zero of the integer or bool type `t`, as a scalar or splat.
    pub(crate) fn int_zero(&mut self, t: ElemType, vector: bool) -> Value {
        let s = Scalar::I64(0).cast(t);
        self.konst(s, vector)
    }

    /// Per lane: each lane of `args` (of types `ts`) extracted as a scalar, `f` applied, the results
    /// (of type `out`) put back into a vector.
    pub(crate) fn per_lane(
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
                r = self.bool_lane(r);
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
}
