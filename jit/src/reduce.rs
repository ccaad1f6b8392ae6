//! Reduction accumulators: their types and identities, the per-value update, the merge of partial
//! results, and the accumulator buffers in memory.
//!
//! An accumulator is a short list of values at one width:
//! - sum / prod: f64 (`F64`, `F64X2`, or for f32 vectors two `F64X2` halves): f32 data is widened and
//!   accumulated in f64 exactly as the interpreter does, rounded once by the caller;
//! - min / max: the kernel's float type, through NumPy's `minimum` / `maximum` ([`Gen::minimum`]:
//!   NaN-propagating, the later of two equal values);
//! - any / all: a lane mask (`i8` for scalars);
//! - argmin / argmax: the best value and its index (an integer as wide as the float, `-1` = empty).
//!
//! Updates keep the sequential semantics for values seen in increasing index order (argmin keeps the
//! first extreme and the first NaN). Merges of partial results (vector lanes, independent
//! accumulators, the scalar tail, the previous output) are order-independent: argmin breaks ties on the
//! lower index. In memory, sums and products are f64, any / all are 1.0 / 0.0 of the kernel's dtype,
//! argmin / argmax a value buffer and an index buffer.

use crate::clif::{cast, mem};
use crate::lower::{Gen, W};
use cranelift_codegen::ir::ConstantData;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{Immediate, InstBuilder, Type, Value, types};
use kiln_ir::{ElemType, ReduceOp};

/// Bytes per element of the value buffer of a reduction.
pub fn acc_bytes(op: ReduceOp, dtype: ElemType) -> i64 {
    match op {
        ReduceOp::Sum | ReduceOp::Prod => 8,
        _ => dtype.size() as i64,
    }
}

impl Gen<'_, '_> {
    /// The types of an accumulator of `op` at width `w`.
    pub fn acc_types(&self, op: ReduceOp, w: W) -> Vec<Type> {
        if let Some(ct) = self.complex_values(op) {
            return Self::complex_acc_types(op, ct, w);
        }
        if self.int_values().is_some() {
            return self.int_acc_types(op, w);
        }
        match (op, w) {
            (ReduceOp::Sum | ReduceOp::Prod, W::Scalar) => vec![types::F64],
            (ReduceOp::Sum | ReduceOp::Prod, W::Vector) => match self.dtype {
                ElemType::F64 => vec![types::F64X2],
                ElemType::F32 => vec![types::F64X2, types::F64X2],
                _ => unreachable!("only float types (f32, f64) reach here"),
            },
            (ReduceOp::Min | ReduceOp::Max, _) => vec![self.float_ty(w)],
            (ReduceOp::Any | ReduceOp::All, W::Scalar) => vec![types::I8],
            (ReduceOp::Any | ReduceOp::All, W::Vector) => vec![self.iv],
            (ReduceOp::ArgMin | ReduceOp::ArgMax, _) => vec![self.float_ty(w), self.ity(w)],
        }
    }

    /// The identity of `op` at width `w`.
    pub fn acc_identity(&mut self, op: ReduceOp, w: W) -> Vec<Value> {
        if let Some(ct) = self.complex_values(op) {
            return self.complex_acc_identity(op, ct, w);
        }
        if self.int_values().is_some() {
            return self.int_acc_identity(op, w);
        }
        let n = self.acc_types(op, w).len();
        match op {
            // -0.0 is the exact identity of IEEE addition (the interpreter's, too)
            ReduceOp::Sum => (0..n).map(|_| self.f64const(w, -0.0)).collect(),
            ReduceOp::Prod => (0..n).map(|_| self.f64const(w, 1.0)).collect(),
            ReduceOp::Min => vec![self.fconst(w, f64::INFINITY)],
            ReduceOp::Max => vec![self.fconst(w, f64::NEG_INFINITY)],
            ReduceOp::Any | ReduceOp::All => {
                let bit = if op == ReduceOp::All { -1 } else { 0 };
                match w {
                    W::Scalar => vec![self.b.ins().iconst(types::I8, bit & 1)],
                    W::Vector => vec![self.iconst(W::Vector, bit)],
                }
            }
            ReduceOp::ArgMin => vec![self.fconst(w, f64::INFINITY), self.iconst(w, -1)],
            ReduceOp::ArgMax => vec![self.fconst(w, f64::NEG_INFINITY), self.iconst(w, -1)],
        }
    }

    /// A typed kernel's float32 value as the float64 its accumulators fold (exactly: the kernel's
    /// lanes are float64's, a float32 vector half-filled); any other value as it is.
    pub(crate) fn typed_float(&mut self, w: W, v: Value) -> Value {
        match (self.typed.map(|t| t.value_type()), w) {
            (Some(ElemType::F32), W::Scalar) => self.b.ins().fpromote(types::F64, v),
            (Some(ElemType::F32), W::Vector) => self.b.ins().fvpromote_low(v),
            _ => v,
        }
    }

    /// The upper half of an F32X4 moved to the lower half (for widening to f64).
    fn high_half(&mut self, v: Value) -> Value {
        let bytes = self.b.ins().bitcast(types::I8X16, cast(), v);
        let mask: Vec<u8> = (8..16).chain(8..16).collect();
        let imm: Immediate = self.b.func.dfg.immediates.push(ConstantData::from(mask));
        let sh = self.b.ins().shuffle(bytes, bytes, imm);
        self.b.ins().bitcast(types::F32X4, cast(), sh)
    }

    /// `v` widened to f64 parts matching a sum / prod accumulator at width `w`.
    pub(crate) fn widen(&mut self, w: W, v: Value) -> Vec<Value> {
        match (self.dtype, w) {
            (ElemType::F64, _) => vec![v],
            (ElemType::F32, W::Scalar) => vec![self.b.ins().fpromote(types::F64, v)],
            (ElemType::F32, W::Vector) => {
                let lo = self.b.ins().fvpromote_low(v);
                let h = self.high_half(v);
                let hi = self.b.ins().fvpromote_low(h);
                vec![lo, hi]
            }
            _ => unreachable!("only float types (f32, f64) reach here"),
        }
    }

    /// Folds the value `v` (at index `ridx` for arg reductions) into `acc`, in sequence.
    pub fn acc_update(
        &mut self,
        op: ReduceOp,
        w: W,
        acc: &[Value],
        v: Value,
        ridx: Option<Value>,
    ) -> Vec<Value> {
        if let Some(ct) = self.complex_values(op) {
            return self.complex_acc_update(op, ct, acc, v);
        }
        if let Some(vt) = self.int_values() {
            return self.int_acc_update(op, vt, acc, v, ridx);
        }
        let v = self.typed_float(w, v);
        match op {
            ReduceOp::Sum | ReduceOp::Prod => {
                let parts = self.widen(w, v);
                acc.iter()
                    .zip(parts)
                    .map(|(&a, x)| {
                        if op == ReduceOp::Sum {
                            self.b.ins().fadd(a, x)
                        } else {
                            self.b.ins().fmul(a, x)
                        }
                    })
                    .collect()
            }
            ReduceOp::Min => vec![self.minimum(acc[0], v)],
            ReduceOp::Max => vec![self.maximum(acc[0], v)],
            ReduceOp::Any | ReduceOp::All => {
                // a complex value's truth: a nonzero part (lower/complex.rs)
                let m = match self.typed.map(|t| t.value_type()).filter(|t| t.is_complex()) {
                    Some(ct) => self.complex_cast(v, ct, ElemType::Bool),
                    None => self.truth_mask(w, v),
                };
                if op == ReduceOp::Any {
                    vec![self.b.ins().bor(acc[0], m)]
                } else {
                    vec![self.b.ins().band(acc[0], m)]
                }
            }
            ReduceOp::ArgMin | ReduceOp::ArgMax => {
                let (best, idx) = (acc[0], acc[1]);
                let ridx = ridx.expect("arg reductions pass the index");
                let cc = if op == ReduceOp::ArgMin {
                    FloatCC::LessThan
                } else {
                    FloatCC::GreaterThan
                };
                let better = self.fcmp(cc, v, best);
                let nan_v = self.fcmp(FloatCC::Unordered, v, v);
                let minus1 = self.iconst(w, -1);
                let empty = self.icmp(IntCC::Equal, idx, minus1);
                let ord_best = self.fcmp(FloatCC::Ordered, best, best);
                let t = self.b.ins().bor(better, nan_v);
                let t = self.b.ins().bor(t, empty);
                let take = self.b.ins().band(t, ord_best);
                let nb = self.pick(take, v, best);
                let ni = self.pick(take, ridx, idx);
                vec![nb, ni]
            }
        }
    }

    /// Folds the values `vs` of several reduced rows (in row order) into the sum accumulator `acc`
    /// at once: `acc + ((v0 + v1) + (v2 + v3))`, each value widened to f64 first, the pairs combined
    /// as a balanced tree so that the grouping depends only on the number of values. One add into
    /// `acc` (one read-modify-write of a kept output) per group instead of one per row.
    pub fn acc_update_rows(&mut self, w: W, acc: &[Value], vs: &[Value]) -> Vec<Value> {
        if let Some(ct) = self.complex_values(ReduceOp::Sum) {
            return self.complex_acc_update_rows(ReduceOp::Sum, ct, acc, vs);
        }
        if let Some(vt) = self.int_values() {
            return self.int_acc_update_rows(vt, acc, vs);
        }
        let vs: Vec<Value> = vs.iter().map(|&v| self.typed_float(w, v)).collect();
        let vs = &vs[..];
        let mut level: Vec<Vec<Value>> = vs.iter().map(|&v| self.widen(w, v)).collect();
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|pair| match pair {
                    [a, b] => a.iter().zip(b).map(|(&x, &y)| self.b.ins().fadd(x, y)).collect(),
                    [a] => a.clone(),
                    _ => unreachable!("chunks of two"),
                })
                .collect();
        }
        let sum = level.pop().expect("at least one row");
        acc.iter()
            .zip(sum)
            .map(|(&a, x)| self.b.ins().fadd(a, x))
            .collect()
    }

    /// Order-independent merge of two scalar partial results `a` (the state) and `c`.
    pub fn acc_merge_scalar(&mut self, op: ReduceOp, a: &[Value], c: &[Value]) -> Vec<Value> {
        if self.complex_values(op).is_some() {
            return self.complex_acc_merge_all(op, [a.to_vec(), c.to_vec()]);
        }
        if self.int_values().is_some() {
            return self.int_acc_merge_scalar(op, a, c);
        }
        match op {
            ReduceOp::Sum => vec![self.b.ins().fadd(a[0], c[0])],
            ReduceOp::Prod => vec![self.b.ins().fmul(a[0], c[0])],
            ReduceOp::Min => vec![self.minimum(a[0], c[0])],
            ReduceOp::Max => vec![self.maximum(a[0], c[0])],
            ReduceOp::Any => vec![self.b.ins().bor(a[0], c[0])],
            ReduceOp::All => vec![self.b.ins().band(a[0], c[0])],
            ReduceOp::ArgMin | ReduceOp::ArgMax => self.arg_merge(op, a, c),
        }
    }

    /// Order-independent merge of two arg accumulators `a` (the state) and `c`, `[best, index]`
    /// each, scalars or vectors (lane by lane): the lower index among the best values, the first
    /// NaN before any number, an empty one (index -1) never taken.
    fn arg_merge(&mut self, op: ReduceOp, a: &[Value], c: &[Value]) -> Vec<Value> {
        let w = if self.is_vector(a[0]) {
            W::Vector
        } else {
            W::Scalar
        };
        let (bv, bi, cv, ci) = (a[0], a[1], c[0], c[1]);
        let zero = self.iconst(w, 0);
        let c_valid = self.icmp(IntCC::SignedGreaterThanOrEqual, ci, zero);
        let b_empty = self.icmp(IntCC::SignedLessThan, bi, zero);
        let b_nan = self.fcmp(FloatCC::Unordered, bv, bv);
        let c_nan = self.fcmp(FloatCC::Unordered, cv, cv);
        let lower = self.icmp(IntCC::SignedLessThan, ci, bi);
        let nan_case = self.b.ins().band(c_nan, lower);
        let cc = if op == ReduceOp::ArgMin {
            FloatCC::LessThan
        } else {
            FloatCC::GreaterThan
        };
        let better = self.fcmp(cc, cv, bv);
        let eq = self.fcmp(FloatCC::Equal, cv, bv);
        let tie = self.b.ins().band(eq, lower);
        let num_case = self.b.ins().bor(better, tie);
        let num_case = self.b.ins().bor(num_case, c_nan);
        let inner = self.pick(b_nan, nan_case, num_case);
        let t = self.b.ins().bor(b_empty, inner);
        let take = self.b.ins().band(c_valid, t);
        vec![self.pick(take, cv, bv), self.pick(take, ci, bi)]
    }

    /// Merges vector accumulators `slots` and the scalar accumulator `tail` into one scalar partial.
    pub fn acc_fold(&mut self, op: ReduceOp, slots: &[Vec<Value>], tail: Vec<Value>) -> Vec<Value> {
        if self.complex_values(op).is_some() {
            return self.complex_acc_fold(op, slots, tail);
        }
        if self.int_values().is_some() {
            return self.int_acc_fold(op, slots, tail);
        }
        let mut state = tail;
        if slots.is_empty() {
            return state;
        }
        if op.is_arg() {
            // the slots merged as vectors (the merge is order-independent), then their lanes
            let mut acc = slots[0].clone();
            for slot in &slots[1..] {
                acc = self.arg_merge(op, &acc, slot);
            }
            for lane in 0..self.lanes {
                let cv = self.b.ins().extractlane(acc[0], lane);
                let ci = self.b.ins().extractlane(acc[1], lane);
                state = self.acc_merge_scalar(op, &state, &[cv, ci]);
            }
            return state;
        }
        // vertical: accumulators lane by lane
        let mut acc = slots[0].clone();
        for slot in &slots[1..] {
            acc = acc
                .iter()
                .zip(slot)
                .map(|(&a, &b)| self.vmerge(op, a, b))
                .collect();
        }
        // f32 sums: the two f64 halves
        let mut v = acc[0];
        for &h in &acc[1..] {
            v = self.vmerge(op, v, h);
        }
        match op {
            ReduceOp::Any => {
                let t = self.b.ins().vany_true(v);
                vec![self.b.ins().bor(state[0], t)]
            }
            ReduceOp::All => {
                let t = self.b.ins().vall_true(v);
                vec![self.b.ins().band(state[0], t)]
            }
            _ => {
                let lanes = self.b.func.dfg.value_type(v).lane_count() as u8;
                for lane in 0..lanes {
                    let x = self.b.ins().extractlane(v, lane);
                    state = self.acc_merge_scalar(op, &state, &[x]);
                }
                state
            }
        }
    }

    fn vmerge(&mut self, op: ReduceOp, a: Value, b: Value) -> Value {
        match op {
            ReduceOp::Sum => self.b.ins().fadd(a, b),
            ReduceOp::Prod => self.b.ins().fmul(a, b),
            ReduceOp::Min => self.minimum(a, b),
            ReduceOp::Max => self.maximum(a, b),
            ReduceOp::Any => self.b.ins().bor(a, b),
            ReduceOp::All => self.b.ins().band(a, b),
            ReduceOp::ArgMin | ReduceOp::ArgMax => {
                unreachable!("arg accumulators merge in pairs (arg_merge)")
            }
        }
    }

    /// Loads the accumulator of `op` at width `w` from the output buffers at element `o` (i64), plus
    /// the constant element offset `off`.
    pub fn acc_load(
        &mut self,
        op: ReduceOp,
        w: W,
        out_val: Value,
        out_idx: Value,
        o: Value,
        off: i64,
    ) -> Vec<Value> {
        if let Some(ct) = self.complex_values(op) {
            return self.complex_acc_load(op, ct, w, out_val, o, off);
        }
        if self.int_values().is_some() {
            return self.int_acc_load(op, w, out_val, out_idx, o, off);
        }
        let ab = acc_bytes(op, self.dtype);
        let addr = self.elem_addr(out_val, o, ab);
        match op {
            ReduceOp::Sum | ReduceOp::Prod => self
                .acc_types(op, w)
                .into_iter()
                .enumerate()
                .map(|(h, ty)| {
                    self.b
                        .ins()
                        .load(ty, mem(), addr, (off * ab + 16 * h as i64) as i32)
                })
                .collect(),
            ReduceOp::Min | ReduceOp::Max => vec![self.load_float(w, addr, off * ab)],
            ReduceOp::Any | ReduceOp::All => {
                let x = self.load_float(w, addr, off * ab);
                vec![self.truth_mask(w, x)]
            }
            ReduceOp::ArgMin | ReduceOp::ArgMax => {
                let best = self.load_float(w, addr, off * ab);
                let iaddr = self.elem_addr(out_idx, o, self.size);
                let ity = self.ity(w);
                let idx = self.b.ins().load(ity, mem(), iaddr, (off * self.size) as i32);
                vec![best, idx]
            }
        }
    }

    /// Stores an accumulator loaded by [`Gen::acc_load`] back.
    #[allow(clippy::too_many_arguments)]
    pub fn acc_store(
        &mut self,
        op: ReduceOp,
        out_val: Value,
        out_idx: Value,
        o: Value,
        off: i64,
        acc: &[Value],
    ) {
        if let Some(ct) = self.complex_values(op) {
            return self.complex_acc_store(op, ct, out_val, o, off, acc);
        }
        if self.int_values().is_some() {
            return self.int_acc_store(op, out_val, out_idx, o, off, acc);
        }
        let ab = acc_bytes(op, self.dtype);
        let addr = self.elem_addr(out_val, o, ab);
        match op {
            ReduceOp::Sum | ReduceOp::Prod => {
                for (h, &x) in acc.iter().enumerate() {
                    self.b
                        .ins()
                        .store(mem(), x, addr, (off * ab + 16 * h as i64) as i32);
                }
            }
            ReduceOp::Min | ReduceOp::Max => {
                self.b.ins().store(mem(), acc[0], addr, (off * ab) as i32);
            }
            ReduceOp::Any | ReduceOp::All => {
                let x = self.mask_one(acc[0], self.dtype);
                self.b.ins().store(mem(), x, addr, (off * ab) as i32);
            }
            ReduceOp::ArgMin | ReduceOp::ArgMax => {
                self.b.ins().store(mem(), acc[0], addr, (off * ab) as i32);
                let iaddr = self.elem_addr(out_idx, o, self.size);
                self.b.ins().store(mem(), acc[1], iaddr, (off * self.size) as i32);
            }
        }
    }

    /// `base + o * bytes`.
    pub fn elem_addr(&mut self, base: Value, o: Value, bytes: i64) -> Value {
        let off = self.b.ins().imul_imm_s(o, bytes);
        self.b.ins().iadd(base, off)
    }

    /// The address of an input's row: `base` plus the row's outer multi-index `idx` times the
    /// input's outer strides (in elements of `bytes`; run-time values of any sign, one per axis).
    pub fn row_addr(&mut self, base: Value, idx: &[Value], strides: &[Value], bytes: i64) -> Value {
        debug_assert_eq!(idx.len(), strides.len());
        let mut off = self.b.ins().iconst(types::I64, 0);
        for (&ix, &s) in idx.iter().zip(strides) {
            let t = self.b.ins().imul(ix, s);
            off = self.b.ins().iadd(off, t);
        }
        self.elem_addr(base, off, bytes)
    }

    /// An i64 index narrowed to the index type, at width `w` (`lane` added per lane for vectors).
    pub fn index_lanes(&mut self, w: W, r: Value, iota: Value) -> Value {
        let s = if self.it == types::I64 {
            r
        } else {
            self.b.ins().ireduce(self.it, r)
        };
        match w {
            W::Scalar => s,
            W::Vector => {
                let v = self.b.ins().splat(self.iv, s);
                self.b.ins().iadd(v, iota)
            }
        }
    }
}
