//! The moments `(mean, var)` of a compound reduction ([`kiln_ir::CompoundOp::Moments`]) in the loop
//! skeleton: two passes over each block of a segment's rows, the second from L1.
//!
//! A segment (a row's reduced points, or a whole-array chunk) is cut into blocks of
//! [`BLOCK_POINTS`] (the last shorter); each block is read twice while it is in L1:
//! 1. **Sums**: `S = Σ x` and `S' = Σ (x - c)` (f64, f32 data widened), `c` the block's first
//!    value (0 where that is not finite), so the block's mean is `m = c + S'/n`, rounded to `k`
//!    with its error `e` kept exactly (Knuth's TwoSum). f32 data take `c = 0` (`S' = S`, not
//!    summed twice): widened to f64, their sums keep 29 bits more than an f32 result needs;
//! 2. **Deviations**: `Q = Σ (x - k)²` (f64).
//!
//! The block's state is `(k, n, mean, M2, sum) = (k, n, e, Q - n e², S)`: the values' mean and
//! squared deviations less `k`, and their plain sum (which gives the mean where an infinity or
//! NaN is among them). Blocks merge into the segment's state in order by Chan's formula
//! ([`merge`]), as chunks merge into a whole array's (output.rs); the slot is that state
//! ([`kiln_ir::compound::Slot`]).
//!
//! **Why the shift and the error term.** Chan's merge weighs the difference of two blocks' means,
//! so an error in a block's mean puts an error of the first order into the merged `M2`. `S` of
//! values far from 0 (1e12 plus a spread of 1000: tests/accuracy.rs) is off by about `ε n |x|`,
//! which made the variance 1.5e-9 off where NumPy is 2.2e-13 off; `S'` is a sum of values of the
//! spread's size. And `m` rounded to `k` (the integers offset by 1e8 of tests/compound.rs: 38 ULP
//! from the exact variance with `e` taken as 0) is corrected by `e`.
//!
//! Each pass folds the values into vector accumulators as a trailing sum does: in an iteration
//! of at least A vectors (A = the schedule's accumulators), vectors `p, p + A, ...` added
//! together first, in order, then into accumulator `p`; else each into the first; the last
//! points into a scalar one. Then the vectors (each accumulator's parts in order) are added as a
//! balanced tree, then its two lanes, then the scalar (`Accs::total`). `wide/moments.rs`
//! reproduces this partition at full width.
//!
//! Against one pass of Welford's update, this is about 2.5 times the speed inline and more at
//! full width (a block's second read is from L1: no more traffic to memory than one pass). A
//! body that is more than a plain read of an input in the dtype (int64 values converted as they
//! are read, a strided view, an expression) is computed once: the first pass keeps the block's
//! values in a buffer on the stack (8 KiB at most), which the second reads back (`var(i)` of 1e6
//! int64 values: 2.33 ms computing them twice, 0.65 ms kept; NumPy 1.9).

use crate::clif::mem;
use crate::compound::{Item, SLOT_F64S, tree, var};
use crate::lower::{Gen, W};
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{InstBuilder, StackSlot, StackSlotData, StackSlotKind, Value, types};
use cranelift_frontend::Variable;
use kiln_ir::ElemType;
use std::cell::Cell;

/// The points of one block of a segment's values ([`crate::wide::MOMENTS_BLOCK`], which the
/// fold at full width shares: `wide` imports nothing of this module's).
pub const BLOCK_POINTS: i64 = crate::wide::MOMENTS_BLOCK as i64;

/// Which pass of a block the inner loop runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pass {
    /// `S = Σ x`, `S' = Σ (x - c)`.
    Sum,
    /// `Q = Σ (x - m)²`.
    Deviations,
}

/// One pass's accumulators: per vector accumulator, one `F64X2` per f64 part of a vector (1 for
/// f64 data, 2 for f32), and the scalar one.
struct Accs {
    vector: Vec<Vec<Variable>>,
    scalar: Variable,
}

/// The running state of one segment's moments, as variables.
pub(crate) struct Moments {
    pass: Cell<Pass>,
    sums: Accs,
    /// `S'`'s accumulators (f64 data; f32 data take `c = 0`, so `S' = S`).
    shifted: Option<Accs>,
    squares: Accs,
    /// The first pass's shift `c`, then the second's `k`, splatted.
    shift: Variable,
    /// The segment's state `(k, n, mean, m2, sum)`, then the block's `S` and `e`: in memory, not
    /// registers, between blocks (the loops' accumulators need every register).
    state: StackSlot,
    /// Where the body is more than a plain read of an input in the dtype (converted int64
    /// values, a strided view, an expression): the block's values as the first pass computes
    /// them, which the second reads back (so each is computed once), and the byte offset in the
    /// row of the block's first point.
    buffer: Option<(StackSlot, Variable)>,
}

/// The word of [`Moments::state`] that holds the block's sum `S`.
const BLOCK_SUM: usize = SLOT_F64S;
/// The word of [`Moments::state`] that holds the error `e` of the block's mean.
const BLOCK_ERROR: usize = SLOT_F64S + 1;

impl Accs {
    fn new(g: &mut Gen<'_, '_>, accumulators: usize, parts: usize) -> Accs {
        let zero = g.f64const(W::Vector, 0.0);
        let z = g.b.ins().f64const(0.0);
        Accs {
            vector: (0..accumulators)
                .map(|_| (0..parts).map(|_| var(g, zero)).collect())
                .collect(),
            scalar: var(g, z),
        }
    }

    /// Every accumulator back to 0.
    fn clear(&self, g: &mut Gen<'_, '_>) {
        let zero = g.f64const(W::Vector, 0.0);
        for &v in self.vector.iter().flatten() {
            g.b.def_var(v, zero);
        }
        let z = g.b.ins().f64const(0.0);
        g.b.def_var(self.scalar, z);
    }

    /// The variables group `a` of an iteration of width `w` adds into (a scalar iteration's one
    /// group: the scalar accumulator).
    fn of(&self, w: W, a: usize) -> &[Variable] {
        match w {
            W::Scalar => std::slice::from_ref(&self.scalar),
            W::Vector => &self.vector[a],
        }
    }

    /// Adds `x` (one f64 value per variable) into `vars`.
    fn add(g: &mut Gen<'_, '_>, vars: &[Variable], xs: &[Value]) {
        for (&v, &x) in vars.iter().zip(xs) {
            let a = g.b.use_var(v);
            let s = g.b.ins().fadd(a, x);
            g.b.def_var(v, s);
        }
    }

    /// The accumulators' sum: the vectors (each accumulator's parts in order) added as a
    /// balanced tree (`(v0 + v1) + (v2 + v3)`, as `wide/moments.rs` `total`), its two lanes,
    /// then the scalar. (A tree, not a chain: a short row's blocks end with three of these.)
    fn total(&self, g: &mut Gen<'_, '_>) -> Value {
        let vs: Vec<Value> = self.vector.iter().flatten().map(|&v| g.b.use_var(v)).collect();
        let s = g.b.use_var(self.scalar);
        if vs.is_empty() {
            return s;
        }
        let v = tree(g, &vs, |g, a, b| g.b.ins().fadd(a, b));
        let l0 = g.b.ins().extractlane(v, 0);
        let l1 = g.b.ins().extractlane(v, 1);
        let t = g.b.ins().fadd(l0, l1);
        g.b.ins().fadd(t, s)
    }
}

impl Moments {
    /// A fresh state (no values) for the loops of one segment; `vector`: whether vector code runs,
    /// with `accumulators` vector accumulators a pass; `buffered`: whether the block's values are
    /// kept for the second pass ([`Moments::buffer`]).
    pub fn new(g: &mut Gen<'_, '_>, vector: bool, accumulators: usize, buffered: bool) -> Moments {
        let parts = match (vector, g.dtype) {
            (false, _) => 0,
            (true, ElemType::F64) => 1,
            (true, ElemType::F32) => 2,
            _ => unreachable!("only float types (f32, f64) reach here"),
        };
        let accumulators = if vector { accumulators.max(1) } else { 0 };
        let z = g.b.ins().f64const(0.0);
        let zv = g.f64const(W::Vector, 0.0);
        let bytes = 8 * (BLOCK_ERROR as u32 + 1);
        let state =
            g.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 3));
        let at = g.b.ins().stack_addr(types::I64, state, 0);
        for w in 0..SLOT_F64S {
            g.b.ins().store(mem(), z, at, 8 * w as i32);
        }
        Moments {
            pass: Cell::new(Pass::Sum),
            sums: Accs::new(g, accumulators, parts),
            shifted: (g.dtype == ElemType::F64).then(|| Accs::new(g, accumulators, parts)),
            squares: Accs::new(g, accumulators, parts),
            shift: var(g, zv),
            state,
            buffer: buffered.then(|| {
                let bytes = (BLOCK_POINTS * g.size) as u32;
                let slot =
                    g.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4));
                let zero = g.b.ins().iconst(types::I64, 0);
                (slot, var(g, zero))
            }),
        }
    }

    /// Whether the first pass shifts the values by the block's first (f64 data).
    pub fn shifts(&self) -> bool {
        self.shifted.is_some()
    }

    /// Readies the first pass of a block at byte offset `at` in its row whose first value is
    /// `first` (of the dtype; None where the pass does not shift, [`Moments::shifts`]): its sums
    /// from 0, shifted by `first` where it is finite, else by 0.
    pub fn begin_block(&self, g: &mut Gen<'_, '_>, at: Value, first: Option<Value>) {
        if let Some((_, start)) = self.buffer {
            g.b.def_var(start, at);
        }
        let zero = g.b.ins().f64const(0.0);
        let c = match first {
            Some(first) => {
                let c = g.widen(W::Scalar, first)[0];
                let cc = g.b.ins().fsub(c, c);
                let finite = g.b.ins().fcmp(FloatCC::Equal, cc, zero);
                g.b.ins().select(finite, c, zero)
            }
            None => zero,
        };
        let cv = g.b.ins().splat(types::F64X2, c);
        g.b.def_var(self.shift, cv);
        self.sums.clear(g);
        if let Some(shifted) = &self.shifted {
            shifted.clear(g);
        }
        self.pass.set(Pass::Sum);
    }

    /// Ends the first pass of a block of `n` points (an f64): its mean `k` and the error `e`, and
    /// the second pass readied.
    pub fn end_sum(&self, g: &mut Gen<'_, '_>, n: Value) {
        let c = self.shift(g);
        let s = self.sums.total(g);
        let shifted = match &self.shifted {
            Some(shifted) => shifted.total(g),
            None => s,
        };
        let offset = g.b.ins().fdiv(shifted, n);
        // k = c + offset rounded, e its error (TwoSum: exact)
        let k = g.b.ins().fadd(c, offset);
        let bb = g.b.ins().fsub(k, c);
        let kb = g.b.ins().fsub(k, bb);
        let ec = g.b.ins().fsub(c, kb);
        let eo = g.b.ins().fsub(offset, bb);
        let e = g.b.ins().fadd(ec, eo);
        let at = g.b.ins().stack_addr(types::I64, self.state, 0);
        g.b.ins().store(mem(), s, at, 8 * BLOCK_SUM as i32);
        g.b.ins().store(mem(), e, at, 8 * BLOCK_ERROR as i32);
        let kv = g.b.ins().splat(types::F64X2, k);
        g.b.def_var(self.shift, kv);
        self.squares.clear(g);
        self.pass.set(Pass::Deviations);
    }

    /// Ends the second pass of a block of `n` points (an f64, computed again after the loop, so
    /// that it does not hold a register through it): the block's state merged into the
    /// segment's.
    pub fn end_block(&self, g: &mut Gen<'_, '_>, n: Value) {
        let k = self.shift(g);
        let at = g.b.ins().stack_addr(types::I64, self.state, 0);
        let sum = g.b.ins().load(types::F64, mem(), at, 8 * BLOCK_SUM as i32);
        let e = g.b.ins().load(types::F64, mem(), at, 8 * BLOCK_ERROR as i32);
        let q = self.squares.total(g);
        // Q less n e², never below 0 (NaN kept)
        let ne = g.b.ins().fmul(n, e);
        let nee = g.b.ins().fmul(ne, e);
        let m2 = g.b.ins().fsub(q, nee);
        let zero = g.b.ins().f64const(0.0);
        let below = g.b.ins().fcmp(FloatCC::LessThan, m2, zero);
        let m2 = g.b.ins().select(below, zero, m2);
        // the segment's first block is its state (no merge: a short row has one block)
        let block = [k, n, e, m2, sum];
        let a = self.segment(g);
        let first = g.b.ins().fcmp(FloatCC::Equal, a[1], zero);
        let (alone, merged, done) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
        g.b.ins().brif(first, alone, &[], merged, &[]);
        g.b.switch_to_block(alone);
        for (w, &x) in block.iter().enumerate() {
            g.b.ins().store(mem(), x, at, 8 * w as i32);
        }
        g.b.ins().jump(done, &[]);
        g.b.switch_to_block(merged);
        for (w, x) in merge(g, &a, &block).into_iter().enumerate() {
            g.b.ins().store(mem(), x, at, 8 * w as i32);
        }
        g.b.ins().jump(done, &[]);
        g.b.switch_to_block(done);
    }

    /// Stores the segment's state in slot `o` of `out` ([`crate::compound::SLOT_F64S`] f64 per
    /// slot).
    pub fn store(&self, g: &mut Gen<'_, '_>, out: Value, o: Value) {
        let values = self.segment(g);
        crate::compound::store_slot(g, out, o, &values);
    }

    /// The segment's state so far.
    fn segment(&self, g: &mut Gen<'_, '_>) -> Vec<Value> {
        let at = g.b.ins().stack_addr(types::I64, self.state, 0);
        (0..SLOT_F64S)
            .map(|w| g.b.ins().load(types::F64, mem(), at, 8 * w as i32))
            .collect()
    }

    /// The address of the segment's state ([`crate::wide::MOMENTS_STATE`] f64), which a fold at
    /// full width updates in place.
    pub fn state_address(&self, g: &mut Gen<'_, '_>) -> Value {
        g.b.ins().stack_addr(types::I64, self.state, 0)
    }

    /// The pass's shift: `c` in the first, `k` in the second.
    fn shift(&self, g: &mut Gen<'_, '_>) -> Value {
        let v = g.b.use_var(self.shift);
        g.b.ins().extractlane(v, 0)
    }

    /// The address in the block's buffer of item `p` of an iteration at byte offset `at` in the
    /// row, `width` points an item.
    fn buffered_at(&self, g: &mut Gen<'_, '_>, at: Value, p: usize, width: i64) -> Option<Value> {
        let (slot, start) = self.buffer?;
        let base = g.b.ins().stack_addr(types::I64, slot, 0);
        let start = g.b.use_var(start);
        let off = g.b.ins().isub(at, start);
        let addr = g.b.ins().iadd(base, off);
        Some(g.b.ins().iadd_imm_s(addr, p as i64 * width * g.size))
    }

    /// Folds one iteration's values (`item(g, p)` for `p < count`, the first at byte offset
    /// `at` in its row) into the pass's accumulators: in an iteration of at least as many
    /// vectors as accumulators, group `a` (vectors `a, a + k, ...`) into accumulator `a`; else
    /// every vector into the first.
    pub fn update(&self, g: &mut Gen<'_, '_>, w: W, count: usize, at: Value, item: &mut Item<'_>) {
        let pass = self.pass.get();
        let shift = match w {
            W::Scalar => self.shift(g),
            W::Vector => g.b.use_var(self.shift),
        };
        // each accumulator adds its vectors of the iteration (p, p + k, ...), added together
        // first in order: one add on its chain an iteration
        let k = match w {
            W::Vector => self.sums.vector.len(),
            W::Scalar => 1,
        };
        let groups = if count >= k { k } else { 1 };
        let width = if w == W::Vector { i64::from(g.lanes) } else { 1 };
        for a in 0..groups {
            // each vector's terms (per f64 part): x and x - c, or (x - k)²
            let (mut firsts, mut seconds) = (Vec::new(), Vec::new());
            for p in (a..count).step_by(groups) {
                // the block's values computed by the first pass, kept for the second
                let v = match (pass, self.buffered_at(g, at, p, width)) {
                    (Pass::Sum, Some(addr)) => {
                        let v = item(g, p);
                        g.b.ins().store(mem(), v, addr, 0);
                        v
                    }
                    (Pass::Deviations, Some(addr)) => g.load_float(w, addr, 0),
                    (_, None) => item(g, p),
                };
                let parts = g.widen(w, v);
                match pass {
                    Pass::Sum => {
                        if self.shifted.is_some() {
                            seconds.push(parts.iter().map(|&x| g.b.ins().fsub(x, shift)).collect());
                        }
                        firsts.push(parts);
                    }
                    Pass::Deviations => firsts.push(
                        parts
                            .iter()
                            .map(|&x| {
                                let d = g.b.ins().fsub(x, shift);
                                g.b.ins().fmul(d, d)
                            })
                            .collect(),
                    ),
                }
            }
            let (first, second) = match pass {
                Pass::Sum => (&self.sums, self.shifted.as_ref()),
                Pass::Deviations => (&self.squares, None),
            };
            let sums = added(g, &firsts);
            Accs::add(g, first.of(w, a), &sums);
            if let Some(second) = second {
                let sums = added(g, &seconds);
                Accs::add(g, second.of(w, a), &sums);
            }
        }
    }
}

/// Chan's merge of a block's state `b` into the segment's `a` (f64 scalars `(k, n, mean, m2,
/// sum)`, both of some points), keeping `a`'s shift: the difference of the means is
/// `(kb - ka) + (mean_b - mean_a)`, never a difference of two large absolute means. The
/// operations of [`kiln_ir::CompoundOp::merge_slots`], in its order, which the fold at full
/// width calls.
fn merge(g: &mut Gen<'_, '_>, a: &[Value], b: &[Value]) -> Vec<Value> {
    let (ka, na, ma, qa, sa) = (a[0], a[1], a[2], a[3], a[4]);
    let (kb, nb, mb, qb, sb) = (b[0], b[1], b[2], b[3], b[4]);
    let n = g.b.ins().fadd(na, nb);
    let dk = g.b.ins().fsub(kb, ka);
    let dm = g.b.ins().fsub(mb, ma);
    let d = g.b.ins().fadd(dk, dm);
    let fb = g.b.ins().fdiv(nb, n);
    let df = g.b.ins().fmul(d, fb);
    let mean = g.b.ins().fadd(ma, df);
    let dd = g.b.ins().fmul(d, df);
    let t = g.b.ins().fmul(dd, na);
    let q = g.b.ins().fadd(qa, qb);
    let q = g.b.ins().fadd(q, t);
    let total = g.b.ins().fadd(sa, sb);
    vec![ka, n, mean, q, total]
}

/// Per f64 part, the sum of `terms` (each a vector's parts) in order: `((t0 + t1) + t2) ...`.
fn added(g: &mut Gen<'_, '_>, terms: &[Vec<Value>]) -> Vec<Value> {
    (0..terms[0].len())
        .map(|part| {
            let mut s = terms[0][part];
            for t in &terms[1..] {
                s = g.b.ins().fadd(s, t[part]);
            }
            s
        })
        .collect()
}
