//! The accumulators of a typed kernel's bool and integer values (see [`crate::layout::TypedValues`]):
//! the same folds as reduce.rs's float ones, in int64.
//!
//! Every value is first taken as an int64 lane (`i64x2` at vector width, `i64` in scalars; but see
//! int32 min and max below): an integer sign-extended, a bool 0 / 1, and for `any` / `all` its
//! truth as 0 / 1. Then:
//! - sum / prod: wrapping `iadd` / `imul` (NumPy's int64 accumulator; integer sums are exact and
//!   associative, so any cut into chunks, lanes or threads gives the same bits). A sum of int32
//!   values in a kernel of 4 lanes keeps two `i64x2` halves at vector width ([`Gen::int32_sum`]),
//!   as a float32 kernel's sums keep two `f64x2` ones: its words are 4 outputs' int64 words;
//! - min / max: `smin` / `smax` (the result narrowed to the value type after; of bools, 0 / 1).
//!   Of int32 values they fold in the type: the kernel runs float32's 4 lanes
//!   (`typed::lanes_dtype`) and its vector accumulators are `i32x4` ([`Gen::int32_extremes`]),
//!   `pminsd` / `pmaxsd` 4 points at a time; its scalar accumulator and its words in memory stay
//!   int64 (a vector of 4 outputs' words loaded as two `i64x2` and narrowed, widened back to be
//!   stored), so nothing outside the vector loop sees a difference;
//! - any / all: the or / and of the truths;
//! - of bools alone in 16 lanes (a trailing sum, any, all, max or min of a bool body computed
//!   from bools: `sum(b & c)`; compile.rs), each vector of `i8x16` masks is folded at once
//!   ([`Gen::byte_fold`]): a sum adds the popcount of its mask's bits to lane 0, any and max take
//!   whether a lane is set, all and min whether every lane is;
//! - argmin / argmax: the best value and its index, a later value taken only where strictly better
//!   (the first extreme kept); merges break ties on the lower index.
//!
//! In memory every accumulator is one int64 word per output (the f64 words of a float kernel's sums,
//! as wide), an arg reduction's index beside it in the index buffer.

use crate::clif::mem;
use crate::lower::{Gen, W};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, Type, Value, types};
use kiln_ir::{ElemType, ReduceOp};

/// The trailing reductions of bools alone that run 16 lanes of `i8x16` masks (compile.rs), each
/// vector folded at once ([`Gen::byte_fold`]).
pub(crate) const BYTE_FOLDS: [ReduceOp; 5] = [
    ReduceOp::Sum,
    ReduceOp::Any,
    ReduceOp::All,
    ReduceOp::Max,
    ReduceOp::Min,
];

impl Gen<'_, '_> {
    /// The type of a typed kernel's values where they fold in int64 accumulators (bool and
    /// integer values); None for float values and float kernels.
    pub(crate) fn int_values(&self) -> Option<ElemType> {
        self.typed
            .map(|t| t.value_type())
            .filter(|t| !t.is_float() && !t.is_complex())
    }

    /// Whether this kernel folds int32 values in 4 lanes (`typed::lanes_dtype` gives such a
    /// reduction float32's lanes).
    fn int32_in_four(&self) -> bool {
        self.int_values() == Some(ElemType::I32) && self.dtype == ElemType::F32
    }

    /// Whether `op` folds this kernel's vectors in `i32x4` accumulators: min and max of int32 values
    /// in a kernel of 4 lanes.
    pub(crate) fn int32_extremes(&self, op: ReduceOp) -> bool {
        matches!(op, ReduceOp::Min | ReduceOp::Max) && self.int32_in_four()
    }

    /// Whether `op` is a sum of int32 values in a kernel of 4 lanes: its vector accumulator is two
    /// `i64x2` halves, lanes 0-1 and 2-3 of the `i32x4` values widened.
    pub(crate) fn int32_sum(&self, op: ReduceOp) -> bool {
        op == ReduceOp::Sum && self.int32_in_four()
    }

    fn int_ty(w: W) -> Type {
        match w {
            W::Scalar => types::I64,
            W::Vector => types::I64X2,
        }
    }

    fn int_const(&mut self, w: W, x: i64) -> Value {
        let s = self.b.ins().iconst(types::I64, x);
        match w {
            W::Scalar => s,
            W::Vector => self.b.ins().splat(types::I64X2, s),
        }
    }

    /// The types of an integer accumulator of `op` at width `w`.
    pub(crate) fn int_acc_types(&self, op: ReduceOp, w: W) -> Vec<Type> {
        if w == W::Vector && self.int32_extremes(op) {
            return vec![types::I32X4];
        }
        let n = if op.is_arg() || (w == W::Vector && self.int32_sum(op)) {
            2
        } else {
            1
        };
        vec![Self::int_ty(w); n]
    }

    /// The identity of `op`'s integer accumulator at width `w` (int32's for `i32x4` ones).
    pub(crate) fn int_acc_identity(&mut self, op: ReduceOp, w: W) -> Vec<Value> {
        let (v, idx) = match op {
            ReduceOp::Sum | ReduceOp::Any => (0, None),
            ReduceOp::Prod | ReduceOp::All => (1, None),
            ReduceOp::Min => (i64::MAX, None),
            ReduceOp::Max => (i64::MIN, None),
            ReduceOp::ArgMin => (i64::MAX, Some(-1)),
            ReduceOp::ArgMax => (i64::MIN, Some(-1)),
        };
        if w == W::Vector && self.int32_extremes(op) {
            let v = if op == ReduceOp::Min { i32::MAX } else { i32::MIN };
            let v = self.b.ins().iconst(types::I32, i64::from(v));
            return vec![self.b.ins().splat(types::I32X4, v)];
        }
        let mut out = vec![self.int_const(w, v)];
        if let Some(i) = idx {
            out.push(self.int_const(w, i));
        }
        if w == W::Vector && self.int32_sum(op) {
            out.push(self.int_const(w, v));
        }
        out
    }

    /// The value `v` (of type `vt`, as the typed lowering holds it) as int64 lanes for `op`: its
    /// truth 0 / 1 for any / all, else the value widened (a bool 0 / 1).
    fn int_lanes(&mut self, op: ReduceOp, vt: ElemType, v: Value) -> Value {
        let v = if matches!(op, ReduceOp::Any | ReduceOp::All) {
            self.cast(v, vt, ElemType::Bool)
        } else {
            v
        };
        let from = if matches!(op, ReduceOp::Any | ReduceOp::All) {
            ElemType::Bool
        } else {
            vt
        };
        self.cast(v, from, ElemType::I64)
    }

    /// The value `v` (of the typed kernel's value type, as the typed lowering holds it) widened to
    /// int64 lanes (a bool 0 / 1).
    pub(crate) fn int_value(&mut self, v: Value) -> Value {
        let vt = self
            .int_values()
            .expect("a typed kernel of integer or bool values");
        self.cast(v, vt, ElemType::I64)
    }

    /// `m ? a : b` on int64 lanes, `m` an `icmp` result.
    fn int_pick(&mut self, m: Value, a: Value, b: Value) -> Value {
        if self.b.func.dfg.value_type(a).is_vector() {
            self.b.ins().bitselect(m, a, b)
        } else {
            self.b.ins().select(m, a, b)
        }
    }

    /// Folds the value `v` (at index `ridx` for arg reductions) into `acc`, in sequence.
    pub(crate) fn int_acc_update(
        &mut self,
        op: ReduceOp,
        vt: ElemType,
        acc: &[Value],
        v: Value,
        ridx: Option<Value>,
    ) -> Vec<Value> {
        if self.b.func.dfg.value_type(v) == types::I8X16 {
            return vec![self.byte_fold(op, acc[0], v)];
        }
        if self.int32_extremes(op) && self.b.func.dfg.value_type(v).is_vector() {
            return vec![self.int_merge(op, acc[0], v)];
        }
        if self.int32_sum(op) && self.b.func.dfg.value_type(v).is_vector() {
            let [lo, hi] = self.int32_halves(v);
            return vec![self.b.ins().iadd(acc[0], lo), self.b.ins().iadd(acc[1], hi)];
        }
        let x = self.int_lanes(op, vt, v);
        match op {
            ReduceOp::ArgMin | ReduceOp::ArgMax => {
                let (best, idx) = (acc[0], acc[1]);
                let ridx = ridx.expect("arg reductions pass the index");
                let cc = if op == ReduceOp::ArgMin {
                    IntCC::SignedLessThan
                } else {
                    IntCC::SignedGreaterThan
                };
                let better = self.b.ins().icmp(cc, x, best);
                let w = if self.b.func.dfg.value_type(idx).is_vector() {
                    W::Vector
                } else {
                    W::Scalar
                };
                let minus1 = self.int_const(w, -1);
                let empty = self.b.ins().icmp(IntCC::Equal, idx, minus1);
                let take = self.b.ins().bor(better, empty);
                vec![self.int_pick(take, x, best), self.int_pick(take, ridx, idx)]
            }
            _ => vec![self.int_merge(op, acc[0], x)],
        }
    }

    /// A vector of 16 bools (`i8x16` masks, [`BYTE_FOLDS`]) folded into the `i64x2` accumulator
    /// `acc` of `op`: a sum's count of set lanes (the popcount of the mask's bits, `pmovmskb` and
    /// `popcnt`) added to lane 0; any and max or'd with whether a lane is set, all and min and'ed
    /// with whether every lane is (the truths 0 / 1 in both lanes). The same words as the lanes
    /// folded one by one: sums are associative, the others idempotent.
    fn byte_fold(&mut self, op: ReduceOp, acc: Value, v: Value) -> Value {
        let x = match op {
            ReduceOp::Sum => {
                let bits = self.b.ins().vhigh_bits(types::I64, v);
                let count = self.b.ins().popcnt(bits);
                self.b.ins().scalar_to_vector(types::I64X2, count)
            }
            ReduceOp::Any | ReduceOp::Max | ReduceOp::All | ReduceOp::Min => {
                let t = if matches!(op, ReduceOp::Any | ReduceOp::Max) {
                    self.b.ins().vany_true(v)
                } else {
                    self.b.ins().vall_true(v)
                };
                let t = self.b.ins().uextend(types::I64, t);
                self.b.ins().splat(types::I64X2, t)
            }
            _ => unreachable!("only {BYTE_FOLDS:?} fold bytes"),
        };
        self.int_merge(op, acc, x)
    }

    /// Two int64 accumulators of `op` (not arg) merged, or a value folded into one.
    fn int_merge(&mut self, op: ReduceOp, a: Value, x: Value) -> Value {
        match op {
            ReduceOp::Sum => self.b.ins().iadd(a, x),
            ReduceOp::Prod => self.b.ins().imul(a, x),
            ReduceOp::Min => self.b.ins().smin(a, x),
            ReduceOp::Max => self.b.ins().smax(a, x),
            ReduceOp::Any => self.b.ins().bor(a, x),
            ReduceOp::All => self.b.ins().band(a, x),
            ReduceOp::ArgMin | ReduceOp::ArgMax => unreachable!("arg accumulators merge in pairs"),
        }
    }

    /// The values `vs` of several reduced rows folded into the sum accumulator `acc` at once (see
    /// [`Gen::acc_update_rows`]; integer sums are associative, so the grouping changes no bit).
    pub(crate) fn int_acc_update_rows(&mut self, vt: ElemType, acc: &[Value], vs: &[Value]) -> Vec<Value> {
        if acc.len() == 2 {
            // an int32 sum's halves
            let mut sums = [acc[0], acc[1]];
            for &v in vs {
                let halves = self.int32_halves(v);
                for (s, h) in sums.iter_mut().zip(halves) {
                    *s = self.b.ins().iadd(*s, h);
                }
            }
            return sums.to_vec();
        }
        let mut sum = acc[0];
        for &v in vs {
            let x = self.int_lanes(ReduceOp::Sum, vt, v);
            sum = self.b.ins().iadd(sum, x);
        }
        vec![sum]
    }

    /// The `i32x4` `v` widened to int64: lanes 0-1 and 2-3, each an `i64x2`.
    fn int32_halves(&mut self, v: Value) -> [Value; 2] {
        [self.b.ins().swiden_low(v), self.b.ins().swiden_high(v)]
    }

    /// Order-independent merge of two partial results `a` (the state) and `c`: scalars, or (arg
    /// reductions) int64 vectors, lane by lane.
    pub(crate) fn int_acc_merge_scalar(&mut self, op: ReduceOp, a: &[Value], c: &[Value]) -> Vec<Value> {
        if !op.is_arg() {
            return vec![self.int_merge(op, a[0], c[0])];
        }
        let (bv, bi, cv, ci) = (a[0], a[1], c[0], c[1]);
        let w = if self.b.func.dfg.value_type(bi).is_vector() {
            W::Vector
        } else {
            W::Scalar
        };
        let zero = self.int_const(w, 0);
        let c_valid = self.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, ci, zero);
        let b_empty = self.b.ins().icmp(IntCC::SignedLessThan, bi, zero);
        let cc = if op == ReduceOp::ArgMin {
            IntCC::SignedLessThan
        } else {
            IntCC::SignedGreaterThan
        };
        let better = self.b.ins().icmp(cc, cv, bv);
        let eq = self.b.ins().icmp(IntCC::Equal, cv, bv);
        let lower = self.b.ins().icmp(IntCC::SignedLessThan, ci, bi);
        let tie = self.b.ins().band(eq, lower);
        let t = self.b.ins().bor(better, tie);
        let t = self.b.ins().bor(t, b_empty);
        let take = self.b.ins().band(c_valid, t);
        vec![self.int_pick(take, cv, bv), self.int_pick(take, ci, bi)]
    }

    /// Merges vector accumulators `slots` and the scalar accumulator `tail` into one scalar partial.
    pub(crate) fn int_acc_fold(
        &mut self,
        op: ReduceOp,
        slots: &[Vec<Value>],
        tail: Vec<Value>,
    ) -> Vec<Value> {
        let mut state = tail;
        if op.is_arg() {
            // the slots merged as vectors (the merge is order-independent), then their lanes
            let Some((first, rest)) = slots.split_first() else {
                return state;
            };
            let mut acc = first.clone();
            for slot in rest {
                acc = self.int_acc_merge_scalar(op, &acc, slot);
            }
            for lane in 0..2 {
                let cv = self.b.ins().extractlane(acc[0], lane);
                let ci = self.b.ins().extractlane(acc[1], lane);
                state = self.int_acc_merge_scalar(op, &state, &[cv, ci]);
            }
            return state;
        }
        let Some((first, rest)) = slots.split_first() else {
            return state;
        };
        // each part (an int32 sum's two halves) over the slots, then the parts together
        let mut parts = first.clone();
        for slot in rest {
            for (p, &x) in parts.iter_mut().zip(slot) {
                *p = self.int_merge(op, *p, x);
            }
        }
        let mut v = parts[0];
        for &p in &parts[1..] {
            v = self.int_merge(op, v, p);
        }
        let lanes = self.b.func.dfg.value_type(v).lane_count() as u8;
        for lane in 0..lanes {
            let x = self.b.ins().extractlane(v, lane);
            let x = if lanes == 4 {
                self.b.ins().sextend(types::I64, x)
            } else {
                x
            };
            state = vec![self.int_merge(op, state[0], x)];
        }
        state
    }

    /// Loads the accumulator of `op` at width `w` of output element `o` (plus `off`) from its int64
    /// words (narrowed to `i32x4` for [`Gen::int32_extremes`]).
    pub(crate) fn int_acc_load(
        &mut self,
        op: ReduceOp,
        w: W,
        out_val: Value,
        out_idx: Value,
        o: Value,
        off: i64,
    ) -> Vec<Value> {
        let ty = Self::int_ty(w);
        let addr = self.elem_addr(out_val, o, 8);
        if w == W::Vector && self.int32_extremes(op) {
            // 4 outputs' int64 words, each an int32 value (a run's start is one: `initial` is checked
            // to fit the type, ir/src/typed.rs) or the int64 identity, clamped on the identity's
            // side into int32's range (the identity to int32's), and their low halves taken
            let bound = if op == ReduceOp::Min { i32::MAX } else { i32::MIN };
            let bound = self.int_const(W::Vector, bound.into());
            let [lo, hi] = [0, 16].map(|h| {
                let word = self.b.ins().load(ty, mem(), addr, (off * 8 + h) as i32);
                self.int_merge(op, word, bound)
            });
            let mask: [u8; 16] = std::array::from_fn(|i| ((i / 4) * 8 + i % 4) as u8);
            return vec![self.shuffle_bytes(lo, hi, mask, types::I32X4)];
        }
        let mut acc = vec![self.b.ins().load(ty, mem(), addr, (off * 8) as i32)];
        if w == W::Vector && self.int32_sum(op) {
            // 4 outputs' words: the second half
            acc.push(self.b.ins().load(ty, mem(), addr, (off * 8 + 16) as i32));
            return acc;
        }
        if op.is_arg() {
            let iaddr = self.elem_addr(out_idx, o, 8);
            acc.push(self.b.ins().load(ty, mem(), iaddr, (off * 8) as i32));
        }
        acc
    }

    /// Stores an accumulator loaded by [`Gen::int_acc_load`] back.
    pub(crate) fn int_acc_store(
        &mut self,
        op: ReduceOp,
        out_val: Value,
        out_idx: Value,
        o: Value,
        off: i64,
        acc: &[Value],
    ) {
        let addr = self.elem_addr(out_val, o, 8);
        if self.b.func.dfg.value_type(acc[0]) == types::I32X4 {
            let lo = self.b.ins().swiden_low(acc[0]);
            let hi = self.b.ins().swiden_high(acc[0]);
            self.b.ins().store(mem(), lo, addr, (off * 8) as i32);
            self.b.ins().store(mem(), hi, addr, (off * 8 + 16) as i32);
            return;
        }
        self.b.ins().store(mem(), acc[0], addr, (off * 8) as i32);
        if !op.is_arg() && acc.len() == 2 {
            // an int32 sum's second half: the next 2 outputs' words
            self.b.ins().store(mem(), acc[1], addr, (off * 8 + 16) as i32);
            return;
        }
        if op.is_arg() {
            let iaddr = self.elem_addr(out_idx, o, 8);
            self.b.ins().store(mem(), acc[1], iaddr, (off * 8) as i32);
        }
    }
}
