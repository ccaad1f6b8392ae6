//! Compound reductions in the loop skeleton (see [`kiln_ir::compound`]): one pass that gives two
//! statistics, for segments that each fold into one output (row statistics, whole arrays).
//!
//! Every lane keeps one running state, in f64 (f32 data is widened, as sums are), updated once per
//! loop iteration with the batch of `B` vectors that iteration loads (`B = max(unroll,
//! accumulators)` in the main loop, 1 in the remainder loop); the scalar tail keeps its own state.
//! At the end of a segment the lanes' states, in lane order, then the tail's, are merged into one and
//! stored in the segment's slot of five f64 ([`SLOT_F64S`]); chunked whole-array reductions merge the
//! chunks' slots in chunk order (output.rs). Nothing depends on the thread count.
//!
//! - moments: per lane `(k, mean, M2)` of the values less `k` (for f64 data the lane's first value:
//!   the running mean stays near 0, so its rounding does not scale with an offset such as 1e8; for
//!   f32 data 0, as the f64 state's rounding is far below the f32 result's), and one count
//!   for every lane. A batch merges by Chan's formula with its own mean and squared deviations,
//!   needing one reciprocal of the new count per iteration (every lane has the same count), not a
//!   division per value. The tail updates by Welford's. Each lane also keeps the plain sum of its
//!   values, which gives the mean where an infinity or NaN is among them. Slot:
//!   `(k, n, mean, M2, sum)`.
//! - max_sumexp: per lane the running maximum `m` (in the data type, starting at the lowest finite
//!   value), a reference `r` and `s = Σ exp(x - r)` (f64). A batch takes the maximum of its vectors;
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
use kiln_ir::{CompoundOp, ElemType};

/// How far a lane's maximum may pass the reference its terms are taken against before its sum is
/// rescaled: `exp(64)` is about 6e27, far below f32's overflow (3.4e38).
const RESCALE_GAP: f64 = 64.0;

/// f64 words of one compound output slot.
pub const SLOT_F64S: usize = 5;

/// The running state of one segment, as variables.
pub(crate) struct State {
    op: CompoundOp,
    /// Per f64 part of a vector (1 for f64 kernels, 2 for f32): moments `[k, mean, m2, sum]`,
    /// max_sumexp `[s]`.
    parts: Vec<Vec<Variable>>,
    /// moments: values per lane so far (f64); max_sumexp: the lanes' maximum (data type).
    shared: Option<Variable>,
    /// max_sumexp: the lanes' reference maximum (data type): `s` is `Σ exp(x - reference)`.
    reference: Option<Variable>,
    /// The scalar tail's state (f64): moments `[k, n, mean, m2, sum]`, max_sumexp `[m, s]`.
    tail: Vec<Variable>,
}

fn var(g: &mut Gen<'_, '_>, v: Value) -> Variable {
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

impl State {
    /// A fresh state (no values) for the loops of one segment; `vector`: whether vector code runs.
    pub fn new(g: &mut Gen<'_, '_>, op: CompoundOp, vector: bool) -> State {
        let n_parts = match (vector, g.dtype) {
            (false, _) => 0,
            (true, ElemType::F64) => 1,
            (true, ElemType::F32) => 2,
            _ => unreachable!("only float types (f32, f64) reach here"),
        };
        let zero = g.f64const(W::Vector, 0.0);
        let z = g.b.ins().f64const(0.0);
        let (parts, shared, tail) = match op {
            CompoundOp::Moments => {
                let parts = (0..n_parts)
                    .map(|_| (0..4).map(|_| var(g, zero)).collect())
                    .collect();
                let shared = vector.then(|| var(g, z));
                (parts, shared, (0..5).map(|_| var(g, z)).collect())
            }
            CompoundOp::MaxSumExp => {
                let parts = (0..n_parts).map(|_| vec![var(g, zero)]).collect();
                // the lanes' maximum starts at the lowest finite value, not -inf, so no term is
                // ever exp(-inf - -inf) (NaN): a lane of only -inf values keeps s = 0, which the
                // result reads as the maximum -inf ([`kiln_ir::CompoundOp::finish_slot`])
                let lowest = match g.dtype {
                    ElemType::F64 => f64::MIN,
                    ElemType::F32 => f64::from(f32::MIN),
                    _ => unreachable!("only float types (f32, f64) reach here"),
                };
                let shared = vector.then(|| {
                    let m = g.fconst(W::Vector, lowest);
                    var(g, m)
                });
                let reference = vector.then(|| {
                    let m = g.fconst(W::Vector, lowest);
                    var(g, m)
                });
                let ninf = g.b.ins().f64const(f64::NEG_INFINITY);
                return State {
                    op,
                    parts,
                    shared,
                    reference,
                    tail: vec![var(g, ninf), var(g, z)],
                };
            }
        };
        State {
            op,
            parts,
            shared,
            reference: None,
            tail,
        }
    }

    fn get(g: &mut Gen<'_, '_>, vars: &[Variable]) -> Vec<Value> {
        vars.iter().map(|&v| g.b.use_var(v)).collect()
    }

    /// Folds one iteration's values: a batch of vectors (`W::Vector`) or one scalar.
    pub fn update(&self, g: &mut Gen<'_, '_>, w: W, vs: &[Value]) {
        match (self.op, w) {
            (CompoundOp::Moments, W::Vector) => self.moments_batch(g, vs),
            (CompoundOp::MaxSumExp, W::Vector) => self.max_sumexp_batch(g, vs),
            (CompoundOp::Moments, W::Scalar) => {
                let x = to_f64(g, vs[0]);
                let [k, n, mean, m2, total] = <[Value; 5]>::try_from(Self::get(g, &self.tail)).expect("5");
                let total = g.b.ins().fadd(total, x);
                let one = g.b.ins().f64const(1.0);
                let zero = g.b.ins().f64const(0.0);
                let first = g.b.ins().fcmp(FloatCC::Equal, n, zero);
                let k = g.b.ins().select(first, x, k);
                let y = g.b.ins().fsub(x, k);
                let n = g.b.ins().fadd(n, one);
                let d = g.b.ins().fsub(y, mean);
                let q = g.b.ins().fdiv(d, n);
                let mean = g.b.ins().fadd(mean, q);
                let e = g.b.ins().fsub(y, mean);
                let t = g.b.ins().fmul(d, e);
                let m2 = g.b.ins().fadd(m2, t);
                for (&v, x) in self.tail.iter().zip([k, n, mean, m2, total]) {
                    g.b.def_var(v, x);
                }
            }
            (CompoundOp::MaxSumExp, W::Scalar) => {
                let x = to_f64(g, vs[0]);
                let [m, s] = <[Value; 2]>::try_from(Self::get(g, &self.tail)).expect("2");
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

    fn moments_batch(&self, g: &mut Gen<'_, '_>, vs: &[Value]) {
        let c_var = self.shared.expect("vector state");
        let c = g.b.use_var(c_var);
        let bsz = vs.len() as f64;
        let zero = g.b.ins().f64const(0.0);
        let first = g.b.ins().fcmp(FloatCC::Equal, c, zero);
        let bc = g.b.ins().f64const(bsz);
        let c1 = g.b.ins().fadd(c, bc);
        // the one division of the iteration: every lane has the same count
        let r = g.b.ins().fdiv(bc, c1); // B / c'
        let cr = g.b.ins().fmul(c, r); // c B / c'
        let r = g.b.ins().splat(types::F64X2, r);
        let cr = g.b.ins().splat(types::F64X2, cr);
        let inv_b = g.f64const(W::Vector, 1.0 / bsz);
        let wide: Vec<Vec<Value>> = vs.iter().map(|&v| g.widen(W::Vector, v)).collect();
        for (p, vars) in self.parts.iter().enumerate() {
            let [k, mean, m2, total] = <[Value; 4]>::try_from(Self::get(g, vars)).expect("4");
            let ws: Vec<Value> = wide.iter().map(|w| w[p]).collect();
            let plain = tree(g, &ws, |g, a, b| g.b.ins().fadd(a, b));
            let total = g.b.ins().fadd(total, plain);
            // f64 data: the values less the lane's first (see the module doc); f32 data widened
            // to f64 has 29 spare bits, so its running mean's rounding is far below f32's: k = 0
            let (k, ys): (Value, Vec<Value>) = if g.dtype == ElemType::F64 {
                let k = g.b.ins().select(first, wide[0][p], k);
                (k, wide.iter().map(|w| g.b.ins().fsub(w[p], k)).collect())
            } else {
                (k, wide.iter().map(|w| w[p]).collect())
            };
            let (mb, m2b) = if ys.len() == 1 {
                (ys[0], None)
            } else {
                let sum = tree(g, &ys, |g, a, b| g.b.ins().fadd(a, b));
                let mb = g.b.ins().fmul(sum, inv_b);
                let sq: Vec<Value> = ys
                    .iter()
                    .map(|&y| {
                        let d = g.b.ins().fsub(y, mb);
                        g.b.ins().fmul(d, d)
                    })
                    .collect();
                (mb, Some(tree(g, &sq, |g, a, b| g.b.ins().fadd(a, b))))
            };
            let d = g.b.ins().fsub(mb, mean);
            let dr = g.b.ins().fmul(d, r);
            let mean = g.b.ins().fadd(mean, dr);
            let dd = g.b.ins().fmul(d, d);
            let t = g.b.ins().fmul(dd, cr);
            let m2 = match m2b {
                Some(b) => {
                    let s = g.b.ins().fadd(m2, b);
                    g.b.ins().fadd(s, t)
                }
                None => g.b.ins().fadd(m2, t),
            };
            for (&v, x) in vars.iter().zip([k, mean, m2, total]) {
                g.b.def_var(v, x);
            }
        }
        g.b.def_var(c_var, c1);
    }

    fn max_sumexp_batch(&self, g: &mut Gen<'_, '_>, vs: &[Value]) {
        let m_var = self.shared.expect("vector state");
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
        for (p, vars) in self.parts.iter().enumerate() {
            let s = g.b.use_var(vars[0]);
            let a = g.b.ins().fsub(old[p], new[p]);
            let r = exp2x(g, a);
            let sr = g.b.ins().fmul(s, r);
            g.b.def_var(vars[0], sr);
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
        for (p, vars) in self.parts.iter().enumerate() {
            let s = g.b.use_var(vars[0]);
            let parts: Vec<Value> = wide.iter().map(|w| w[p]).collect();
            let t = tree(g, &parts, |g, a, b| g.b.ins().fadd(a, b));
            let s1 = g.b.ins().fadd(s, t);
            g.b.def_var(vars[0], s1);
        }
    }

    /// Merges the lanes' states (in lane order) and the tail's into one, and stores it in slot `o`
    /// of `out` ([`SLOT_F64S`] f64 per slot).
    pub fn store(&self, g: &mut Gen<'_, '_>, out: Value, o: Value) {
        let mut acc: Vec<Value> = Self::get(g, &self.tail);
        let mut lanes: Vec<Vec<Value>> = Vec::new();
        match self.op {
            CompoundOp::Moments => {
                if let Some(c) = self.shared {
                    let n = g.b.use_var(c);
                    for vars in &self.parts {
                        let [k, mean, m2, total] = <[Value; 4]>::try_from(Self::get(g, vars)).expect("4");
                        for l in 0..2 {
                            let k = g.b.ins().extractlane(k, l);
                            let mean = g.b.ins().extractlane(mean, l);
                            let m2 = g.b.ins().extractlane(m2, l);
                            let total = g.b.ins().extractlane(total, l);
                            lanes.push(vec![k, n, mean, m2, total]);
                        }
                    }
                }
                if let Some(first) = lanes.first().cloned() {
                    let mut state = first;
                    for l in lanes.iter().skip(1) {
                        state = moments_merge(g, &state, l);
                    }
                    acc = moments_merge(g, &state, &acc);
                }
            }
            CompoundOp::MaxSumExp => {
                if let (Some(mv), Some(rv)) = (self.shared, self.reference) {
                    let m = g.b.use_var(mv);
                    let m = g.widen(W::Vector, m);
                    let r = g.b.use_var(rv);
                    let r = g.widen(W::Vector, r);
                    for (p, vars) in self.parts.iter().enumerate() {
                        // s of the reference, as s of the maximum: s exp(reference - max)
                        let s = g.b.use_var(vars[0]);
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
            }
        }
        let off = g.b.ins().imul_imm_s(o, (SLOT_F64S * 8) as i64);
        let addr = g.b.ins().iadd(out, off);
        for (i, &x) in acc.iter().enumerate() {
            g.b.ins().store(mem(), x, addr, (8 * i) as i32);
        }
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

/// Chan's merge of two shifted states `(k, n, mean, m2)` (f64 scalars), keeping `a`'s shift: the
/// difference of the means is `(kb - ka) + (mean_b - mean_a)`, never a difference of two large
/// absolute means. An empty side gives the other.
fn moments_merge(g: &mut Gen<'_, '_>, a: &[Value], b: &[Value]) -> Vec<Value> {
    let (ka, na, ma, qa) = (a[0], a[1], a[2], a[3]);
    let (kb, nb, mb, qb) = (b[0], b[1], b[2], b[3]);
    let total = g.b.ins().fadd(a[4], b[4]);
    let n = g.b.ins().fadd(na, nb);
    let fb = g.b.ins().fdiv(nb, n);
    let dk = g.b.ins().fsub(kb, ka);
    let dm = g.b.ins().fsub(mb, ma);
    let d = g.b.ins().fadd(dk, dm);
    let df = g.b.ins().fmul(d, fb);
    let mean = g.b.ins().fadd(ma, df);
    let dd = g.b.ins().fmul(d, df);
    let t = g.b.ins().fmul(dd, na);
    let q = g.b.ins().fadd(qa, qb);
    let q = g.b.ins().fadd(q, t);
    let zero = g.b.ins().f64const(0.0);
    let a_empty = g.b.ins().fcmp(FloatCC::Equal, na, zero);
    let b_empty = g.b.ins().fcmp(FloatCC::Equal, nb, zero);
    let mut merged: Vec<Value> = [ka, n, mean, q]
        .into_iter()
        .zip(a.iter().zip(b))
        .map(|(m, (&x, &y))| {
            let m = g.b.ins().select(b_empty, x, m);
            g.b.ins().select(a_empty, y, m)
        })
        .collect();
    merged.push(total);
    merged
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

/// `f` folded over `xs` as a balanced tree (`((x0 f x1) f (x2 f x3))`).
fn tree(
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
