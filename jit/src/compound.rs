//! Compound reductions in the loop skeleton (see [`kiln_ir::compound`]): one kernel that gives two
//! statistics, for segments that each fold into one output (row statistics, whole arrays). Each
//! segment's state is stored in its slot of five f64 ([`SLOT_F64S`]); chunked whole-array
//! reductions merge the chunks' slots in chunk order (output.rs). Nothing depends on the thread
//! count.
//!
//! - moments: two passes over each block of a segment, the second from L1 (`moments.rs`).
//! - max_sumexp ([`SumExp`], one pass): per lane the running maximum `m` (in the data type,
//!   starting at the lowest finite value), a reference `r` and `s = Σ exp(x - r)` (f64), updated
//!   once per loop iteration with the batch of `B` vectors that iteration loads (`B = max(unroll,
//!   accumulators)` in the main loop, 1 in the remainder loop); the scalar tail keeps its own state.
//!   A batch takes the maximum of its vectors;
//!   where some lane's maximum passed its reference by more than [`RESCALE_GAP`] (a cold branch, a
//!   few times per extent: the first values, and jumps of more than 64), that lane's reference
//!   moves to its maximum and `s` is rescaled by `exp(r - r')` (in f64); then the batch's
//!   `exp(x - r)` (in the data type, each rounded once as the two-pass plan's, none above
//!   `exp(64)`) are added. So about one exponential per value; at the segment's end each lane's `s`
//!   becomes `s exp(r - m)` (f64). A lane of only -inf values keeps `s = 0`, and the scalar tail
//!   keeps `s = 0` while its maximum is -inf; a state with `s = 0` is read as the maximum -inf.
//!   Slot: `(m, s, -, -, -)`. A maximum that ends NaN or ±inf makes the sum NaN (`finish_slot`), as
//!   `Σ exp(x - m)` is there.

use crate::clif::mem;
use crate::host::MathFn;
use crate::lower::{Gen, W};
use crate::vmath;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{InstBuilder, Value, types};
use cranelift_frontend::Variable;
use kiln_ir::ElemType;

/// How far a lane's maximum may pass the reference its terms are taken against before its sum is
/// rescaled: `exp(64)` is about 6e27, far below f32's overflow (3.4e38).
const RESCALE_GAP: f64 = 64.0;

/// f64 words of one compound output slot.
pub const SLOT_F64S: usize = 5;

/// The value of item `p` of an iteration (a vector or a scalar of the kernel's dtype), computed
/// where it is asked for.
pub(crate) type Item<'a> = dyn FnMut(&mut Gen<'_, '_>, usize) -> Value + 'a;

/// The running state of one segment's max_sumexp, as variables.
pub(crate) struct SumExp {
    /// Per f64 part of a vector (1 for f64 kernels, 2 for f32): `s`.
    parts: Vec<Variable>,
    /// The lanes' maximum (data type).
    max: Option<Variable>,
    /// The lanes' reference maximum (data type): `s` is `Σ exp(x - reference)`.
    reference: Option<Variable>,
    /// The scalar tail's state (f64): `[m, s]`.
    tail: [Variable; 2],
}

/// A variable of `v`'s type, defined as `v`.
pub(crate) fn var(g: &mut Gen<'_, '_>, v: Value) -> Variable {
    let ty = g.b.func.dfg.value_type(v);
    let x = g.b.declare_var(ty);
    g.b.def_var(x, v);
    x
}

/// `exp` of an F64X2.
fn exp2x(g: &mut Gen<'_, '_>, x: Value) -> Value {
    vmath::emit(g.b, &g.math, MathFn::Exp, &[x])
}

/// `exp` of a vector of the kernel's dtype.
fn exp_dt(g: &mut Gen<'_, '_>, x: Value) -> Value {
    match g.dtype {
        ElemType::F64 => vmath::emit(g.b, &g.math, MathFn::Exp, &[x]),
        ElemType::F32 => vmath::emit_f32(g.b, &g.math, MathFn::Exp, &[x]),
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// `(exp(a), exp(b))` of two f64 scalars, with one vector exponential.
fn exp_pair(g: &mut Gen<'_, '_>, a: Value, b: Value) -> (Value, Value) {
    let v = g.b.ins().scalar_to_vector(types::F64X2, a);
    let v = g.b.ins().insertlane(v, b, 1);
    let e = exp2x(g, v);
    (g.b.ins().extractlane(e, 0), g.b.ins().extractlane(e, 1))
}

/// A scalar of the kernel's dtype as f64.
fn to_f64(g: &mut Gen<'_, '_>, x: Value) -> Value {
    match g.dtype {
        ElemType::F64 => x,
        ElemType::F32 => g.b.ins().fpromote(types::F64, x),
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

impl SumExp {
    /// A fresh state (no values) for the loops of one segment; `vector`: whether vector code runs.
    pub fn new(g: &mut Gen<'_, '_>, vector: bool) -> SumExp {
        let n_parts = match (vector, g.dtype) {
            (false, _) => 0,
            (true, ElemType::F64) => 1,
            (true, ElemType::F32) => 2,
            _ => unreachable!("only float types (f32, f64) reach here"),
        };
        let zero = g.f64const(W::Vector, 0.0);
        let z = g.b.ins().f64const(0.0);
        let parts = (0..n_parts).map(|_| var(g, zero)).collect();
        // the lanes' maximum starts at the lowest finite value, not -inf, so no term is ever
        // exp(-inf - -inf) (NaN): a lane of only -inf values keeps s = 0, which the result reads
        // as the maximum -inf ([`kiln_ir::CompoundOp::finish_slot`])
        let lowest = match g.dtype {
            ElemType::F64 => f64::MIN,
            ElemType::F32 => f64::from(f32::MIN),
            _ => unreachable!("only float types (f32, f64) reach here"),
        };
        let max = vector.then(|| {
            let m = g.fconst(W::Vector, lowest);
            var(g, m)
        });
        let reference = vector.then(|| {
            let m = g.fconst(W::Vector, lowest);
            var(g, m)
        });
        let ninf = g.b.ins().f64const(f64::NEG_INFINITY);
        SumExp {
            parts,
            max,
            reference,
            tail: [var(g, ninf), var(g, z)],
        }
    }
}

impl SumExp {
    /// Folds one iteration's values (`item(g, p)` for `p < count`) into the state: a batch of
    /// vectors as one, or a scalar.
    pub fn update(&self, g: &mut Gen<'_, '_>, w: W, count: usize, item: &mut Item<'_>) {
        let vs: Vec<Value> = (0..count).map(|p| item(g, p)).collect();
        match w {
            W::Vector => self.batch(g, &vs),
            W::Scalar => {
                let x = to_f64(g, vs[0]);
                let [m, s] = self.tail.map(|v| g.b.use_var(v));
                let m1 = g.maximum(m, x);
                let a = g.b.ins().fsub(m, m1);
                let b = g.b.ins().fsub(x, m1);
                let (r, e) = exp_pair(g, a, b);
                let sr = g.b.ins().fmul(s, r);
                let s1 = g.b.ins().fadd(sr, e);
                let s1 = zero_while_ninf(g, W::Scalar, m1, s1);
                g.b.def_var(self.tail[0], m1);
                g.b.def_var(self.tail[1], s1);
            }
        }
    }
}

impl SumExp {
    fn batch(&self, g: &mut Gen<'_, '_>, vs: &[Value]) {
        let m_var = self.max.expect("vector state");
        let r_var = self.reference.expect("vector state");
        let m = g.b.use_var(m_var);
        let mx = tree(g, vs, |g, a, b| g.maximum(a, b));
        let m1 = g.maximum(m, mx);
        g.b.def_var(m_var, m1);
        // the terms are `exp(x - reference)`, the reference trailing the maximum by at most
        // RESCALE_GAP (no term above exp(64), far from overflow); only where some lane's maximum
        // passed its reference by more is `s` rescaled (a cold branch around the f64 exponentials:
        // a few times per extent at most)
        let reference = g.b.use_var(r_var);
        let gap = g.fconst(W::Vector, RESCALE_GAP);
        let limit = g.b.ins().fadd(reference, gap);
        let passed = g.b.ins().fcmp(FloatCC::GreaterThan, m1, limit);
        let any = g.b.ins().vany_true(passed);
        let rescale = g.b.create_block();
        let join = g.b.create_block();
        g.b.ins().brif(any, rescale, &[], join, &[]);
        g.b.set_cold_block(rescale);
        g.b.switch_to_block(rescale);
        let moved = g.pick(passed, m1, reference);
        let old = g.widen(W::Vector, reference);
        let new = g.widen(W::Vector, moved);
        for (p, &var) in self.parts.iter().enumerate() {
            let s = g.b.use_var(var);
            let a = g.b.ins().fsub(old[p], new[p]);
            let r = exp2x(g, a);
            let sr = g.b.ins().fmul(s, r);
            g.b.def_var(var, sr);
        }
        g.b.def_var(r_var, moved);
        g.b.ins().jump(join, &[]);
        g.b.switch_to_block(join);
        let reference = g.b.use_var(r_var);
        let terms: Vec<Value> = vs
            .iter()
            .map(|&v| {
                let d = g.b.ins().fsub(v, reference);
                exp_dt(g, d)
            })
            .collect();
        let wide: Vec<Vec<Value>> = terms.iter().map(|&t| g.widen(W::Vector, t)).collect();
        for (p, &var) in self.parts.iter().enumerate() {
            let s = g.b.use_var(var);
            let parts: Vec<Value> = wide.iter().map(|w| w[p]).collect();
            let t = tree(g, &parts, |g, a, b| g.b.ins().fadd(a, b));
            let s1 = g.b.ins().fadd(s, t);
            g.b.def_var(var, s1);
        }
    }

    /// Merges the lanes' states (in lane order) and the tail's into one, and stores it in slot `o`
    /// of `out` ([`SLOT_F64S`] f64 per slot).
    pub fn store(&self, g: &mut Gen<'_, '_>, out: Value, o: Value) {
        let mut acc: Vec<Value> = self.tail.iter().map(|&v| g.b.use_var(v)).collect();
        let mut lanes: Vec<Vec<Value>> = Vec::new();
        if let (Some(mv), Some(rv)) = (self.max, self.reference) {
            let m = g.b.use_var(mv);
            let m = g.widen(W::Vector, m);
            let r = g.b.use_var(rv);
            let r = g.widen(W::Vector, r);
            for (p, &var) in self.parts.iter().enumerate() {
                // s of the reference, as s of the maximum: s exp(reference - max)
                let s = g.b.use_var(var);
                let d = g.b.ins().fsub(r[p], m[p]);
                let f = exp2x(g, d);
                let s = g.b.ins().fmul(s, f);
                for l in 0..2 {
                    let ml = g.b.ins().extractlane(m[p], l);
                    let sl = g.b.ins().extractlane(s, l);
                    lanes.push(vec![ml, sl]);
                }
            }
        }
        if let Some(first) = lanes.first().cloned() {
            let mut state = first;
            for l in lanes.iter().skip(1) {
                state = max_sumexp_merge(g, &state, l);
            }
            acc = max_sumexp_merge(g, &state, &acc);
        }
        let z = g.b.ins().f64const(0.0);
        acc.extend([z, z, z]);
        store_slot(g, out, o, &acc);
    }
}

/// Stores `values` ([`SLOT_F64S`] f64) in slot `o` of `out`.
pub(crate) fn store_slot(g: &mut Gen<'_, '_>, out: Value, o: Value, values: &[Value]) {
    let off = g.b.ins().imul_imm_s(o, (SLOT_F64S * 8) as i64);
    let addr = g.b.ins().iadd(out, off);
    for (i, &x) in values.iter().enumerate() {
        g.b.ins().store(mem(), x, addr, (8 * i) as i32);
    }
}

/// `s` where the maximum `m` is not -inf, else 0 (every value so far -inf: nothing added yet).
fn zero_while_ninf(g: &mut Gen<'_, '_>, w: W, m: Value, s: Value) -> Value {
    let ninf = g.b.ins().f64const(f64::NEG_INFINITY);
    let zero = g.b.ins().f64const(0.0);
    let (ninf, zero) = match w {
        W::Scalar => (ninf, zero),
        W::Vector => (
            g.b.ins().splat(types::F64X2, ninf),
            g.b.ins().splat(types::F64X2, zero),
        ),
    };
    let is = g.b.ins().fcmp(FloatCC::Equal, m, ninf);
    g.pick(is, zero, s)
}

/// The merge of two `(m, s)` states (f64 scalars): `M = max`, `s = sa exp(ma - M) + sb exp(mb - M)`,
/// 0 while `M` is -inf.
fn max_sumexp_merge(g: &mut Gen<'_, '_>, a: &[Value], b: &[Value]) -> Vec<Value> {
    let m = g.maximum(a[0], b[0]);
    let da = g.b.ins().fsub(a[0], m);
    let db = g.b.ins().fsub(b[0], m);
    let (ra, rb) = exp_pair(g, da, db);
    let sa = g.b.ins().fmul(a[1], ra);
    let sb = g.b.ins().fmul(b[1], rb);
    let s = g.b.ins().fadd(sa, sb);
    let s = zero_while_ninf(g, W::Scalar, m, s);
    vec![m, s]
}

/// `f` folded over `xs` as a balanced tree (`((x0 f x1) f (x2 f x3))`, the left half the larger).
pub(crate) fn tree(
    g: &mut Gen<'_, '_>,
    xs: &[Value],
    f: impl Fn(&mut Gen<'_, '_>, Value, Value) -> Value + Copy,
) -> Value {
    match xs.len() {
        1 => xs[0],
        n => {
            let (l, r) = xs.split_at(n.div_ceil(2));
            let a = tree(g, l, f);
            let b = tree(g, r, f);
            f(g, a, b)
        }
    }
}
