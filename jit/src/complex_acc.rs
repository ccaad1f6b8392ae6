//! The accumulators of a typed kernel's complex values (see `lower/complex.rs`): `sum` and `prod`
//! (and `mean`, a sum), planar as the values are.
//!
//! An accumulator is two registers, its real and its imaginary parts, in the kernel's lanes (the
//! vector accumulators fold one point per lane, and are folded lane by lane into the scalar one at
//! the end of a run). A sum adds each part in float64 (a complex64's parts widened exactly), as the
//! interpreter sums each part in float64 ([`kiln_ir::typed`]'s `fold_complex`), from `-0.0` (the
//! result takes `+ 0.0` where it is finished, output.rs); a product multiplies in the parts' own
//! type by the oracle's formula (`lower/complex.rs`), from `1 + 0i`. In memory each slot is two
//! float64 words (re, im), laid out as a complex128 (so a kept reduction's slots load and store as
//! complex128 values do): a complex64 product's parts stored widened (exactly) and narrowed where
//! loaded. A reduction from a start (`initial`, or one per output) starts each slot at the complex
//! `start + 0i` ([`start`]), as the interpreter folds from it (a chunked one's partials at the
//! identity, merged from the start, output.rs). The grouping differs from the interpreter's (its
//! sum is pairwise, the chunks of a whole-array reduction merge in chunk order), so the results
//! agree within the reductions' relative bound, not bit for bit.

use crate::lower::complex::Z;
use crate::lower::{Gen, W};
use cranelift_codegen::ir::{InstBuilder, Type, Value, types};
use kiln_ir::typed::Scalar;
use kiln_ir::{ElemType, ReduceOp};

/// Bytes of a complex accumulator slot: two float64 words.
pub(crate) const SLOT_BYTES: i64 = 16;

/// The reductions of complex values the code generator compiles: sums and products here, `any`
/// and `all` of their truth as a float kernel's (reduce.rs).
pub(crate) fn compiles(op: ReduceOp) -> bool {
    matches!(op, ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Any | ReduceOp::All)
}

/// Whether `op` folds complex accumulators (two float64 words per slot); `any` and `all` fold the
/// values' truth.
pub(crate) fn folds_pairs(op: ReduceOp) -> bool {
    matches!(op, ReduceOp::Sum | ReduceOp::Prod)
}

/// The identity of `op` as a slot's two words (re, im).
pub(crate) fn identity(op: ReduceOp) -> [f64; 2] {
    match op {
        ReduceOp::Prod => [1.0, 0.0],
        _ => [-0.0, -0.0],
    }
}

/// The start `v` of `op` over values of complex type `ct` as a slot's two words (re, im): the
/// complex `v + 0i` as the interpreter folds from it (`fold_complex`): a sum's real part `v` in
/// float64, its imaginary part `+0.0`; a product's `v` in the parts' type (widened exactly).
pub(crate) fn start(op: ReduceOp, ct: ElemType, v: f64) -> [f64; 2] {
    match op {
        ReduceOp::Prod => match Scalar::F64(v).cast(ct.real_part().expect("a complex type")) {
            Scalar::F32(x) => [f64::from(x), 0.0],
            Scalar::F64(x) => [x, 0.0],
            _ => unreachable!("a float part"),
        },
        _ => [v, 0.0],
    }
}

impl Gen<'_, '_> {
    /// The complex type of a typed kernel's values, where they are complex and fold as pairs
    /// (sums, products; `any` and `all` fold their truth as a float kernel folds masks).
    pub(crate) fn complex_values(&self, op: ReduceOp) -> Option<ElemType> {
        self.typed
            .map(|t| t.value_type())
            .filter(|t| t.is_complex() && folds_pairs(op))
    }

    /// The float type an accumulator of `op` over values of complex type `ct` holds each part in:
    /// float64 for sums, the parts' own type for products.
    fn acc_part(op: ReduceOp, ct: ElemType) -> ElemType {
        match op {
            ReduceOp::Prod => ct.real_part().expect("a complex type"),
            _ => ElemType::F64,
        }
    }

    /// The accumulator types of `op` over values of complex type `ct` at width `w`: its real and
    /// its imaginary parts.
    pub(crate) fn complex_acc_types(op: ReduceOp, ct: ElemType, w: W) -> Vec<Type> {
        // a float part's type in a reduction's lanes (float64's 2: a float32 vector half-filled)
        let ty = match (Self::acc_part(op, ct), w) {
            (ElemType::F32, W::Scalar) => types::F32,
            (ElemType::F32, W::Vector) => types::F32X4,
            (_, W::Scalar) => types::F64,
            (_, W::Vector) => types::F64X2,
        };
        vec![ty, ty]
    }

    /// The identity of `op` over values of complex type `ct` at width `w`.
    pub(crate) fn complex_acc_identity(&mut self, op: ReduceOp, ct: ElemType, w: W) -> Vec<Value> {
        let part = Self::acc_part(op, ct);
        identity(op)
            .into_iter()
            .map(|x| self.konst(Scalar::F64(x).cast(part), w == W::Vector))
            .collect()
    }

    /// The complex value `v` (of type `ct`) as the accumulator of `op` folds it: its parts (a
    /// complex64's widened for a sum).
    fn complex_folded(&mut self, op: ReduceOp, ct: ElemType, v: Value) -> Z {
        let z = self.z(v);
        let part = ct.real_part().expect("a complex type");
        let to = Self::acc_part(op, ct);
        let re = self.cast(z.re, part, to);
        let im = self.cast(z.im, part, to);
        Z { re, im }
    }

    /// Two accumulators (or an accumulator and a folded value) of `op` merged: `a + b` part by
    /// part, or `a * b` as the oracle multiplies.
    fn complex_merge(&mut self, op: ReduceOp, a: Z, b: Z) -> Z {
        match op {
            ReduceOp::Sum => Z {
                re: self.b.ins().fadd(a.re, b.re),
                im: self.b.ins().fadd(a.im, b.im),
            },
            _ => self.mul(a, b),
        }
    }

    /// Folds the complex value `v` (of type `ct`) into `acc`.
    pub(crate) fn complex_acc_update(
        &mut self,
        op: ReduceOp,
        ct: ElemType,
        acc: &[Value],
        v: Value,
    ) -> Vec<Value> {
        let v = self.complex_folded(op, ct, v);
        let r = self.complex_merge(op, pair(acc), v);
        vec![r.re, r.im]
    }

    /// Folds the values `vs` of several reduced rows (in row order) into `acc`: a sum's as a
    /// balanced tree added once (as [`Gen::acc_update_rows`]), a product's in order.
    pub(crate) fn complex_acc_update_rows(
        &mut self,
        op: ReduceOp,
        ct: ElemType,
        acc: &[Value],
        vs: &[Value],
    ) -> Vec<Value> {
        let mut level: Vec<Z> = vs.iter().map(|&v| self.complex_folded(op, ct, v)).collect();
        if op != ReduceOp::Sum {
            let mut a = pair(acc);
            for v in level {
                a = self.complex_merge(op, a, v);
            }
            return vec![a.re, a.im];
        }
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|two| match two {
                    [a, b] => self.complex_merge(op, *a, *b),
                    [a] => *a,
                    _ => unreachable!("chunks of two"),
                })
                .collect();
        }
        let sum = level.pop().expect("at least one row");
        let r = self.complex_merge(op, pair(acc), sum);
        vec![r.re, r.im]
    }

    /// Merges the partial scalar accumulators `parts` in order into one.
    pub(crate) fn complex_acc_merge_all(
        &mut self,
        op: ReduceOp,
        parts: impl IntoIterator<Item = Vec<Value>>,
    ) -> Vec<Value> {
        let mut parts = parts.into_iter();
        let mut a = pair(&parts.next().expect("at least one partial"));
        for p in parts {
            a = self.complex_merge(op, a, pair(&p));
        }
        vec![a.re, a.im]
    }

    /// Merges the vector accumulators `slots` (lane by lane, the slots first) and the scalar
    /// accumulator `tail` into one scalar partial.
    pub(crate) fn complex_acc_fold(
        &mut self,
        op: ReduceOp,
        slots: &[Vec<Value>],
        tail: Vec<Value>,
    ) -> Vec<Value> {
        let mut state = pair(&tail);
        let Some(first) = slots.first() else {
            return tail;
        };
        let mut acc = pair(first);
        for slot in &slots[1..] {
            acc = self.complex_merge(op, acc, pair(slot));
        }
        for lane in 0..self.lanes {
            let re = self.b.ins().extractlane(acc.re, lane);
            let im = self.b.ins().extractlane(acc.im, lane);
            state = self.complex_merge(op, state, Z { re, im });
        }
        vec![state.re, state.im]
    }

    /// Loads the accumulator of `op` over values of complex type `ct` at width `w` from slot `o`
    /// (i64) plus the constant slot offset `off` of the value buffer.
    pub(crate) fn complex_acc_load(
        &mut self,
        op: ReduceOp,
        ct: ElemType,
        w: W,
        out_val: Value,
        o: Value,
        off: i64,
    ) -> Vec<Value> {
        let addr = self.elem_addr(out_val, o, SLOT_BYTES);
        let addr = self.b.ins().iadd_imm_s(addr, off * SLOT_BYTES);
        let z = self.load_parts(ElemType::C128, addr, w == W::Vector);
        let part = Self::acc_part(op, ct);
        let re = self.cast(z.re, ElemType::F64, part);
        let im = self.cast(z.im, ElemType::F64, part);
        vec![re, im]
    }

    /// Stores an accumulator of `op` over values of complex type `ct` loaded by
    /// [`Gen::complex_acc_load`] back.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn complex_acc_store(
        &mut self,
        op: ReduceOp,
        ct: ElemType,
        out_val: Value,
        o: Value,
        off: i64,
        acc: &[Value],
    ) {
        let addr = self.elem_addr(out_val, o, SLOT_BYTES);
        let addr = self.b.ins().iadd_imm_s(addr, off * SLOT_BYTES);
        let part = Self::acc_part(op, ct);
        let z = pair(acc);
        let re = self.cast(z.re, part, ElemType::F64);
        let im = self.cast(z.im, part, ElemType::F64);
        self.store_parts(ElemType::C128, Z { re, im }, addr);
    }
}

/// An accumulator's two registers as a complex value's parts.
fn pair(acc: &[Value]) -> Z {
    Z {
        re: acc[0],
        im: acc[1],
    }
}
