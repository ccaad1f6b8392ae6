//! Rows in blocks: the functions with a wide routine (exp, log, sin, cos, tan, exp2, expm1, tanh,
//! sinh, cosh, the inverse trigonometric functions, log2, log10, log1p,
//! arcsinh, arccosh, arctanh, cbrt, pow, hypot, and pow by a literal exponent with its own code;
//! and the quotient and the magnitude of complex values whose parts are of the lanes' type:
//! `wide::WideFn`) at the host's full vector width. Complex slots (a quotient's, the points of a
//! magnitude) hold points interleaved, as memory holds complex values; a quotient's is read back
//! as a complex input is.
//!
//! A map or a reduction of rows (or of every axis) whose body holds nodes of those functions, where the
//! kernel's schedule asks for it and the host has a wide level (`math::wide_routines`), runs each row
//! of at least [`MIN_ROW`] points in blocks of [`BLOCK`] points:
//!
//! ```text
//! for each block [b, e) of the row:
//!     for each such node, in the body's order (an operand's node first; a sin and a cos node
//!     of one argument as one, both computed by one call from one reduction):
//!         if the argument is an input read as a contiguous run of the kernel's type:
//!             src = its address at b                      (the routine reads it there)
//!         else:
//!             for j in b..e: slot[j - b] = the argument at j  (vectors, then scalars; the nodes
//!                                                             done before read from their slots)
//!             src = 0                                     (the routine reads the slot)
//!         wide routine(slot, src, e - b)                  // into the slot, 8 f64 lanes per
//!                                                         // instruction on AVX-512; two
//!                                                         // arguments: (slot, src, second,
//!                                                         // e - b), the second argument its
//!                                                         // input where it lies or a second
//!                                                         // slot filled as above
//!     the row's usual loops over [b, e), each such node read from its slot instead of computed
//! ```
//!
//! Reading an input where it lies saves the copy into the slot (a load and a store a point) and
//! spreads the input's loads among the routine's arithmetic, where the copy's loads waited for
//! memory before any of it began: on an Intel Xeon with AVX-512 at N = 1e6, f64 exp 1.11 -> 0.80 ns
//! an element, log 1.47 -> 1.08, sin 2.04 -> 1.67 (`python -m kiln.bench --functions`).
//!
//! **Straight into the output.** Where the map's one output is the staged node itself (`exp(x)`,
//! `arctan2(x, y)`, `z / w`: [`direct`]), the routine's "slot" is the output row at `b`, and the
//! block has no last phase: nothing is read back from a slot and stored again. On the same Xeon,
//! one thread, N = 1e6: f64 exp 0.76 -> 0.62 ns an element, log 1.10 -> 0.94, log2 1.13 -> 1.02,
//! exp2 0.70 -> 0.56, tanh 1.36 -> 1.17 (`python -m kiln.bench --functions`, a run before the
//! change and one after, on one host). The output may be an input updated in place: the second
//! argument's phase runs before the first argument's fills the output row (which may be the input
//! the second reads), an argument read where it lies that is the output is read there (`src` 0), and a
//! second argument that is the output is copied into its slot first (a cold branch), so that the
//! routine's result and arguments never overlap.
//!
//! The rest of the body is computed again in the last phase from the inputs (the block has just
//! been read, so they are in L1) rather than kept in further slots. A slot is a stack slot of
//! [`BLOCK`] elements (twice as many parts for complex points): the block, in L1, is the one
//! place where kiln writes values between two phases of a kernel, never an array of the
//! iteration's size (a block written straight into the output has its first argument's phase
//! write into the output's own block, which the routine then overwrites with the results). The
//! wide routines give the inline vector math's bits (`wide`), so a point's value does not depend on
//! which route its row took, nor on where a block ends; a reduction folds the block's values in the row's own order (a block is
//! a whole number of the hot loop's iterations), so its sums are those of the unblocked loop.
//! Shorter rows take the inline path.

use super::{Acc, Row, Skeleton};
use crate::frame::{Frame, counted_loop};
use crate::lower::{Gen, W};
use crate::wide::WideFn;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    BlockArg, FuncRef, InstBuilder, StackSlot, StackSlotData, StackSlotKind, Value, types,
};
use kiln_ir::{ElemType, Node, NodeId};

/// Points per block: 256 f64 are 2 KiB per slot.
pub(crate) const BLOCK: i64 = 256;

/// Rows shorter than this take the inline path (a call per block costs more than it saves there).
const MIN_ROW: i64 = 16;

/// A node run on blocks: the node, its (first) operand, the block function, the slot, and what
/// else the call takes.
pub(super) struct Staged {
    node: NodeId,
    arg: NodeId,
    call: FuncRef,
    slot: StackSlot,
    with: With,
    /// The complex type of a complex division's values (its slots hold them interleaved, two
    /// parts a point, as memory holds complex values), None for a float node.
    complex: Option<ElemType>,
}

/// The second slot of a staged call, if any.
#[derive(Clone, Copy)]
enum With {
    /// One argument: `call` is `fn(slot, src, n)`.
    Alone,
    /// A sin node whose argument this cos node shares, and the cos node's slot: `call` computes
    /// both, `fn(sin slot, cos slot, src, n)`.
    Cos(NodeId, StackSlot),
    /// A function of two arguments (or a complex quotient): the second operand and its slot;
    /// `call` is `fn(slot, src, second, n)`, the result written into the first slot.
    Second(NodeId, StackSlot),
    /// The magnitude of complex points of this type (its argument), read where they lie or from
    /// this slot of `2 * BLOCK` parts: `call` is `fn(slot, points, n)`, the magnitudes written
    /// into the first slot.
    FromComplex(StackSlot, ElemType),
}

/// The bytes of a cache line: a routine's slot starts on one.
const LINE: i64 = 64;

/// The address of `slot`'s first cache line: Cranelift aligns a stack slot to at most the frame's
/// 16 bytes, and a routine's full-width loads of a chunk that straddles two lines are split (the
/// slot is created a line longer).
fn slot_address(g: &mut Gen<'_, '_>, slot: StackSlot) -> Value {
    let a = g.b.ins().stack_addr(types::I64, slot, 0);
    let a = g.b.ins().iadd_imm_s(a, LINE - 1);
    g.b.ins().band_imm_s(a, -LINE)
}

/// The body's nodes whose routines the kernel imported (`math::wide_routines`, and complex
/// quotients and magnitudes), each with a stack slot of [`BLOCK`] elements (of `2 * BLOCK` parts
/// for a complex quotient, and a second one of them for a magnitude's points; the first unused
/// where the block is written straight into the output, [`direct`]).
///
/// A sin node and a cos node of the same argument are staged as one, at the place of the first of
/// the two (their argument precedes both), by the block function that computes both from one
/// reduction (`wide::WideElem::sincos`), where the kernel imported it.
pub(super) fn staged(g: &mut Gen<'_, '_>, f: &Frame<'_>) -> Vec<Staged> {
    let arena = &f.key.arena;
    // the cos node of each argument with a sin node and a cos node
    let unary_of = |op: kiln_ir::UnaryOp, arg: NodeId| {
        f.order
            .iter()
            .copied()
            .find(|&id| *arena.node(id) == Node::Unary(op, arg))
    };
    let mut out = Vec::new();
    let mut paired: Vec<NodeId> = Vec::new();
    let bytes = (BLOCK * g.size) as u32;
    for &id in &f.order {
        // a slot of `BLOCK` elements, or of `2 * BLOCK` parts (complex points), and a cache line
        // to start it on one (`slot_address`)
        let mut slot = |parts: u32| {
            let data = StackSlotData::new(StackSlotKind::ExplicitSlot, parts * bytes + LINE as u32, 4);
            g.b.create_sized_stack_slot(data)
        };
        // a quotient or a magnitude of complex values whose parts are of the lanes' type (the
        // routines of `wide/complex.rs`, over interleaved points); else a typed kernel's node only
        // where it and its operands are values of the lanes' type
        let complex = g
            .typed
            .and_then(|t| crate::typed::wide_complex(t, id, g.dtype).map(|w| (w, t)));
        let wide = match complex {
            Some((w, _)) => w,
            None if g
                .typed
                .is_some_and(|t| !crate::typed::stages_in_lanes(t, id, g.dtype)) =>
            {
                continue;
            }
            None => match WideFn::of_node(arena, id, g.dtype) {
                Some(w) => w,
                None => continue,
            },
        };
        let Some(call) = g.math.wide(&wide.symbol(g.dtype)) else {
            continue;
        };
        let (op, arg) = match (*arena.node(id), complex) {
            // the magnitude: the points read where they lie or computed into their slot
            (Node::Unary(_, z), Some((WideFn::ComplexAbs, t))) => {
                let (result, points) = (slot(1), slot(2));
                out.push(Staged {
                    node: id,
                    arg: z,
                    call,
                    slot: result,
                    with: With::FromComplex(points, t.type_of(z)),
                    complex: None,
                });
                continue;
            }
            (Node::Unary(op, arg), _) => (Some(op), arg),
            // pow by a literal exponent with its own code: a routine of its base alone
            (Node::Binary(_, a, _), _) if matches!(wide, WideFn::One(_)) => (None, a),
            // a function of two arguments, or the complex quotient (a routine of two arguments
            // over interleaved points, in slots twice as large)
            (Node::Binary(_, a, b), _) => {
                let t = complex.map(|(_, t)| t.type_of(id));
                let parts = if t.is_some() { 2 } else { 1 };
                let (first, second) = (slot(parts), slot(parts));
                out.push(Staged {
                    node: id,
                    arg: a,
                    call,
                    slot: first,
                    with: With::Second(b, second),
                    complex: t,
                });
                continue;
            }
            _ => continue,
        };
        if paired.contains(&id) {
            continue;
        }
        let pair = match (op, g.math.wide_sincos()) {
            (Some(kiln_ir::UnaryOp::Sin | kiln_ir::UnaryOp::Cos), Some(both)) => {
                let sin = unary_of(kiln_ir::UnaryOp::Sin, arg);
                let cos = unary_of(kiln_ir::UnaryOp::Cos, arg);
                sin.zip(cos).map(|p| (p, both))
            }
            _ => None,
        };
        match pair {
            Some(((sin, cos), both)) => {
                paired.extend([sin, cos]);
                let (s_slot, c_slot) = (slot(1), slot(1));
                out.push(Staged {
                    node: sin,
                    arg,
                    call: both,
                    slot: s_slot,
                    with: With::Cos(cos, c_slot),
                    complex: None,
                });
            }
            None => {
                let slot = slot(1);
                out.push(Staged {
                    node: id,
                    arg,
                    call,
                    slot,
                    with: With::Alone,
                    complex: None,
                });
            }
        }
    }
    out
}

/// Whether the routine of the one staged node writes each block straight into the output row:
/// a map of one output whose value is that node (a function of one argument or of two, a complex
/// quotient or magnitude), which it stores as the routine computes it (a float kernel's values of
/// its dtype, a typed kernel's of the lanes' type or their complex type: `stages_in_lanes`,
/// `wide_complex`), so that no last phase reads the block back from a slot
/// and stores it again.
pub(super) fn direct(f: &Frame<'_>, blocked: &[Staged]) -> bool {
    let alone = |st: &Staged| {
        st.node == f.key.body && matches!(st.with, With::Alone | With::Second(..) | With::FromComplex(..))
    };
    matches!(f.st.mode, crate::layout::Mode::Map)
        && f.key.extra.is_empty()
        && matches!(blocked, [st] if alone(st))
}

impl Skeleton<'_, '_> {
    /// The inner loops of one row over `[jlo, jhi)`: in blocks where the row has at least
    /// [`MIN_ROW`] points, else inline.
    pub(super) fn blocks(&self, g: &mut Gen<'_, '_>, r: &Row, jlo: Value, jhi: Value, slots: &[Acc]) {
        let blocked = g.b.create_block();
        let short = g.b.create_block();
        let done = g.b.create_block();
        let len = g.b.ins().isub(jhi, jlo);
        let small = g.b.ins().icmp_imm_s(IntCC::SignedLessThan, len, MIN_ROW);
        g.b.ins().brif(small, short, &[], blocked, &[]);

        g.b.switch_to_block(short);
        self.inner(g, r, jlo, jhi, slots, None);
        g.b.ins().jump(done, &[]);

        g.b.switch_to_block(blocked);
        // do { e = min(b + BLOCK, jhi); phases; b = e } while b < jhi (at least MIN_ROW points)
        let b_var = g.b.declare_var(types::I64);
        g.b.def_var(b_var, jlo);
        let body = g.b.create_block();
        g.b.ins().jump(body, &[]);
        g.b.switch_to_block(body);
        let b = g.b.use_var(b_var);
        let e = g.b.ins().iadd_imm_s(b, self.block_len());
        let e = g.b.ins().smin(e, jhi);
        let count = g.b.ins().isub(e, b);
        // a slot's pointer for the block: the point at row position j is at `ptr + j * size`
        let b_bytes = g.b.ins().imul_imm_s(b, g.size);
        let mut row = r.clone();
        for st in &self.blocked {
            // a point's address in the code's terms: a complex value's is its own shifted down,
            // as a complex input's (`run::stored_shift`); the routine takes the own addresses
            let shift = st
                .complex
                .map_or(0, |t| crate::run::stored_shift(g.size as usize, t));
            // where the routine writes the block (its own address), and the code's address of the
            // row's point 0 there: the output row itself (`direct`), else the slot
            let (slot, ptr) = if self.direct {
                let out = r.out_row.expect("map rows have an output");
                let at = g.b.ins().iadd(out, b_bytes);
                (g.own_address(at, shift), out)
            } else {
                let slot = slot_address(g, st.slot);
                let code = g.own_address(slot, -shift);
                (slot, g.b.ins().isub(code, b_bytes))
            };
            // the second argument first (a first argument computed into the output row may
            // overwrite an input the second one reads, where the output is that input updated in
            // place); it is only read: its input where it lies, or its slot
            let second = match st.with {
                With::Second(arg2, slot2) => {
                    let fill = |g: &mut Gen<'_, '_>| {
                        let slot2 = slot_address(g, slot2);
                        let code = g.own_address(slot2, -shift);
                        let ptr2 = g.b.ins().isub(code, b_bytes);
                        self.phase(g, &row, b, e, arg2, ptr2, st.complex);
                        slot2
                    };
                    Some(match self.in_place_source(g, &row, arg2, b_bytes, st.complex) {
                        Some(s) if self.direct => {
                            // the output may be this input, updated in place, and the routine's
                            // result and arguments must not overlap: then it is copied first
                            let s = g.own_address(s, shift);
                            let same = g.b.ins().icmp(IntCC::Equal, s, slot);
                            let copy = g.b.create_block();
                            let go = g.b.create_block();
                            let second = g.b.append_block_param(go, types::I64);
                            g.b.ins().brif(same, copy, &[], go, &[BlockArg::Value(s)]);
                            g.b.set_cold_block(copy);
                            g.b.switch_to_block(copy);
                            let filled = fill(g);
                            g.b.ins().jump(go, &[BlockArg::Value(filled)]);
                            g.b.switch_to_block(go);
                            second
                        }
                        Some(s) => g.own_address(s, shift),
                        None => fill(g),
                    })
                }
                _ => None,
            };
            // the routine reads its argument from the input where it lies, or (0) from where it
            // writes, which the phase fills (an input that is the output, updated in place, is
            // read there as well: the routine's result and arguments must not overlap)
            let src = match st.with {
                // complex points where they lie or computed into their slot, of another type than
                // the real magnitudes written (so never the output's memory)
                With::FromComplex(points, t) => {
                    let shift = crate::run::stored_shift(g.size as usize, t);
                    match self.in_place_source(g, &row, st.arg, b_bytes, Some(t)) {
                        Some(s) => g.own_address(s, shift),
                        None => {
                            let slot2 = slot_address(g, points);
                            let code = g.own_address(slot2, -shift);
                            let ptr2 = g.b.ins().isub(code, b_bytes);
                            self.phase(g, &row, b, e, st.arg, ptr2, Some(t));
                            slot2
                        }
                    }
                }
                _ => match self.in_place_source(g, &row, st.arg, b_bytes, st.complex) {
                    Some(s) if self.direct => {
                        let s = g.own_address(s, shift);
                        let same = g.b.ins().icmp(IntCC::Equal, s, slot);
                        let zero = g.b.ins().iconst(types::I64, 0);
                        g.b.ins().select(same, zero, s)
                    }
                    Some(s) => g.own_address(s, shift),
                    None => {
                        self.phase(g, &row, b, e, st.arg, ptr, st.complex);
                        g.b.ins().iconst(types::I64, 0)
                    }
                },
            };
            match (st.with, second) {
                (With::Second(..), Some(second)) => {
                    // complex division counts parts, two a point
                    let n = match st.complex {
                        Some(_) => g.b.ins().ishl_imm_u(count, 1),
                        None => count,
                    };
                    g.b.ins().call(st.call, &[slot, src, second, n]);
                }
                (With::Cos(cos, cos_slot), _) => {
                    let cslot = slot_address(g, cos_slot);
                    g.b.ins().call(st.call, &[slot, cslot, src, count]);
                    let cptr = g.b.ins().isub(cslot, b_bytes);
                    row.staged.push((cos, cptr));
                }
                (With::Alone | With::FromComplex(..), _) => {
                    g.b.ins().call(st.call, &[slot, src, count]);
                }
                (With::Second(..), None) => unreachable!("a second argument is staged with it"),
            }
            row.staged.push((st.node, ptr));
        }
        // written straight into the output row, the block needs no last phase
        if !self.direct {
            self.inner(g, &row, b, e, slots, None);
        }
        g.b.def_var(b_var, e);
        let more = g.b.ins().icmp(IntCC::SignedLessThan, e, jhi);
        g.b.ins().brif(more, body, &[], done, &[]);

        g.b.switch_to_block(done);
    }

    /// The address of the block's first point (`b_bytes` into the row) of the input `arg`, where
    /// `arg` is an input the kernel reads as a contiguous run of its own type
    /// ([`Frame::contiguous_in_row`]) from a row pointer it holds: the wide routine then reads the
    /// block there (the addresses the row's own loads would read), with no copy into the slot
    /// first and its loads among its arithmetic. None for any other argument.
    /// A complex argument (`complex`: its type, a quotient's or a magnitude's argument's) is read
    /// in place where it is an input of that type in a contiguous run: the address returned is then
    /// the code's, which the caller shifts back to the input's own.
    fn in_place_source(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        arg: NodeId,
        b_bytes: Value,
        complex: Option<ElemType>,
    ) -> Option<Value> {
        let Node::Input(i) = *self.f.key.arena.node(arg) else {
            return None;
        };
        let i = i as usize;
        let run = match complex {
            Some(t) => self.f.contiguous_run(i) && self.f.st.stored[i] == Some(t),
            None => self.f.contiguous_in_row(i),
        };
        if !run {
            return None;
        }
        let base = r.ptrs[i]?;
        Some(g.b.ins().iadd(base, b_bytes))
    }

    /// Points per block: [`BLOCK`] rounded down to a whole number of the hot loop's iterations, so
    /// that a reduction folds every point into the accumulator the unblocked loop would.
    fn block_len(&self) -> i64 {
        let sched = self.f.key.schedule;
        let per_iter = match self.st.mode {
            crate::layout::Mode::Map => sched.unroll,
            _ => sched.unroll.max(sched.accumulators),
        };
        let step = if self.f.vector {
            i64::from(per_iter) * self.f.lanes
        } else {
            1
        };
        BLOCK - BLOCK % step
    }

    /// `ptr[j] = arg(j)` for `j` in `[b, e)`: the schedule's unroll of vectors per iteration, one
    /// vector, then scalars.
    /// A complex argument (`complex`: its type) is stored interleaved at the points' own addresses
    /// (`ptr` is in the code's terms, see `blocks`).
    #[allow(clippy::too_many_arguments)]
    fn phase(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        b: Value,
        e: Value,
        arg: NodeId,
        ptr: Value,
        complex: Option<ElemType>,
    ) {
        let j_var = g.b.declare_var(types::I64);
        g.b.def_var(j_var, b);
        let unroll = i64::from(self.f.key.schedule.unroll);
        let mut loops = Vec::new();
        if self.f.vector {
            loops.push((W::Vector, unroll));
            if unroll > 1 {
                loops.push((W::Vector, 1));
            }
        }
        loops.push((W::Scalar, 1));
        for (w, count) in loops {
            let width = if w == W::Vector { self.f.lanes } else { 1 };
            counted_loop(g, j_var, e, count * width, |g, j| {
                let jb = g.b.ins().imul_imm_s(j, g.size);
                let flat = g.b.ins().iadd(r.rs, j);
                let addr = g.b.ins().iadd(ptr, jb);
                let row_index = |a: usize| r.row_index[a];
                for p in 0..count {
                    let off = p * width;
                    let flat = if off == 0 {
                        flat
                    } else {
                        g.b.ins().iadd_imm_s(flat, off)
                    };
                    let v = self.f.values_of(
                        g,
                        w,
                        &r.ptrs,
                        r.many.as_ref(),
                        &r.splats,
                        &row_index,
                        jb,
                        off * g.size,
                        flat,
                        &r.staged,
                        &[],
                        &[arg],
                    )[0];
                    match complex {
                        Some(t) => {
                            let shift = crate::run::stored_shift(g.size as usize, t);
                            let own = g.own_address(addr, shift);
                            let off = crate::run::own_offset(off * g.size, shift);
                            let at = g.b.ins().iadd_imm_s(own, off);
                            g.complex_store(t, v, at);
                        }
                        None => {
                            g.b.ins()
                                .store(crate::clif::mem(), v, addr, (off * g.size) as i32);
                        }
                    }
                }
            });
        }
    }
}
