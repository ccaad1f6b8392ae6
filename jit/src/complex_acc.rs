//! The accumulators of a typed kernel's complex values (see `complex_lower`): `sum` and `prod`
//! (and `mean`, a sum), one point at a time.
//!
//! A sum folds both parts at once in one `f64x2` (a complex64's parts widened exactly), as the
//! interpreter sums each part in float64 ([`kiln_ir::typed`]'s `fold_complex`), from `-0.0` (the
//! result takes `+ 0.0` where it is finished, output.rs); a product multiplies in the parts' own
//! type by the oracle's formula (`complex_lower`), from `1 + 0i`. In memory each slot is two
//! float64 words (re, im): a complex64 product's parts stored widened (exactly) and narrowed where
//! loaded. The grouping differs from the interpreter's (its sum is pairwise, the chunks of a
//! whole-array reduction merge in chunk order), so the results agree within the reductions'
//! relative bound, not bit for bit.

use crate::clif::mem;
use crate::lower::Gen;
use cranelift_codegen::ir::{ConstantData, InstBuilder, Type, Value, types};
use kiln_ir::{BinaryOp, ElemType, ReduceOp};

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

impl Gen<'_, '_> {
    /// The complex type of a typed kernel's values, where they are complex and fold as pairs
    /// (sums, products; `any` and `all` fold their truth as a float kernel folds masks).
    pub(crate) fn complex_values(&self, op: ReduceOp) -> Option<ElemType> {
        self.typed
            .map(|t| t.value_type())
            .filter(|t| t.is_complex() && folds_pairs(op))
    }

    /// The register type of the accumulator of `op` over values of complex type `ct`.
    fn complex_acc_type(op: ReduceOp, ct: ElemType) -> Type {
        match (op, ct) {
            (ReduceOp::Prod, ElemType::C64) => types::F32X4,
            _ => types::F64X2,
        }
    }

    /// The accumulator types of `op` over values of complex type `ct`.
    pub(crate) fn complex_acc_types(op: ReduceOp, ct: ElemType) -> Vec<Type> {
        vec![Self::complex_acc_type(op, ct)]
    }

    /// The identity of `op` over values of complex type `ct`.
    pub(crate) fn complex_acc_identity(&mut self, op: ReduceOp, ct: ElemType) -> Vec<Value> {
        let [re, im] = identity(op);
        let ty = Self::complex_acc_type(op, ct);
        let bytes: Vec<u8> = if ty == types::F32X4 {
            [re as f32, im as f32, 0.0, 0.0]
                .iter()
                .flat_map(|x| x.to_le_bytes())
                .collect()
        } else {
            [re, im].iter().flat_map(|x| x.to_le_bytes()).collect()
        };
        let c = self.b.func.dfg.constants.insert(ConstantData::from(bytes));
        vec![self.b.ins().vconst(ty, c)]
    }

    /// The complex value `v` (of type `ct`) as the accumulator of `op` folds it.
    fn complex_folded(&mut self, op: ReduceOp, ct: ElemType, v: Value) -> Value {
        match (op, ct) {
            (ReduceOp::Sum, ElemType::C64) => self.b.ins().fvpromote_low(v),
            _ => v,
        }
    }

    /// Two accumulators (or an accumulator and a folded value) of `op` merged: `a + b`, or `a * b`
    /// as the oracle multiplies.
    fn complex_merge(&mut self, op: ReduceOp, ct: ElemType, a: Value, b: Value) -> Value {
        match op {
            ReduceOp::Sum => self.b.ins().fadd(a, b),
            _ => self.tg().complex_binary(BinaryOp::Mul, a, b, ct),
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
        vec![self.complex_merge(op, ct, acc[0], v)]
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
        let mut level: Vec<Value> = vs.iter().map(|&v| self.complex_folded(op, ct, v)).collect();
        if op != ReduceOp::Sum {
            let mut a = acc[0];
            for v in level {
                a = self.complex_merge(op, ct, a, v);
            }
            return vec![a];
        }
        while level.len() > 1 {
            level = level
                .chunks(2)
                .map(|pair| match pair {
                    [a, b] => self.b.ins().fadd(*a, *b),
                    [a] => *a,
                    _ => unreachable!("chunks of two"),
                })
                .collect();
        }
        let sum = level.pop().expect("at least one row");
        vec![self.b.ins().fadd(acc[0], sum)]
    }

    /// Merges the partial accumulators `parts` in order into one.
    pub(crate) fn complex_acc_merge_all(
        &mut self,
        op: ReduceOp,
        ct: ElemType,
        parts: impl IntoIterator<Item = Vec<Value>>,
    ) -> Vec<Value> {
        let mut parts = parts.into_iter();
        let mut a = parts.next().expect("at least one partial")[0];
        for p in parts {
            a = self.complex_merge(op, ct, a, p[0]);
        }
        vec![a]
    }

    /// Loads the accumulator of `op` over values of complex type `ct` from slot `o` (i64) plus the
    /// constant slot offset `off` of the value buffer.
    pub(crate) fn complex_acc_load(
        &mut self,
        op: ReduceOp,
        ct: ElemType,
        out_val: Value,
        o: Value,
        off: i64,
    ) -> Vec<Value> {
        let addr = self.elem_addr(out_val, o, SLOT_BYTES);
        let x = self
            .b
            .ins()
            .load(types::F64X2, mem(), addr, (off * SLOT_BYTES) as i32);
        vec![match Self::complex_acc_type(op, ct) {
            types::F32X4 => self.b.ins().fvdemote(x),
            _ => x,
        }]
    }

    /// Stores an accumulator loaded by [`Gen::complex_acc_load`] back.
    pub(crate) fn complex_acc_store(&mut self, out_val: Value, o: Value, off: i64, acc: &[Value]) {
        let addr = self.elem_addr(out_val, o, SLOT_BYTES);
        let x = match self.b.func.dfg.value_type(acc[0]) {
            types::F32X4 => self.b.ins().fvpromote_low(acc[0]),
            _ => acc[0],
        };
        self.b.ins().store(mem(), x, addr, (off * SLOT_BYTES) as i32);
    }
}
