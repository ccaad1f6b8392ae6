//! The loop skeleton of a compiled kernel: segments, rows, and the inner row loop.
//!
//! ```text
//! fn kernel(ins: *const *const u8, out_val: *mut u8, out_idx: *mut u8, params: *const i64,
//!           seg_begin: i64, seg_end: i64, lo: i64, hi: i64)
//! for s in seg_begin..seg_end:                          // segments (see layout.rs)
//!     s0 = s * seg_len; f0 = s0 + lo; f1 = min(s0 + hi, n)   // [lo, hi): a range within each segment
//!     locate o_base (s * part for whole-array reductions), r_base; reset accumulators
//!     for row in f0 / row_len .. while row * row_len < f1:   // plan rows (outer axes)
//!         row pointers of contiguous / per-row inputs, per-row splats, outer Index values
//!         j in [max(f0 - rs, 0), min(f1 - rs, row_len)):     // the hot inner loop
//!             main: U vectors per iteration (max(U, K) for folding reductions, vector p -> acc p % K)
//!             remainder: one vector per iteration
//!             tail: one scalar per iteration
//!     fold accumulators into out[o_base] (trailing reductions)
//! ```
//! Splat inputs and literals are splatted once in the entry block; per-row splats once per row.
//!
//! Every loop is the frame's bottom-tested counted loop (see frame.rs for why that shape): loop-invariant
//! values (splats, row pointers, `jhi - step`) are computed once in the loop's preheader, and loads and
//! stores address `row_ptr + j * size`.

use crate::clif::mem;
use crate::compound::Item;
use crate::frame::{Frame, counted_loop};
use crate::layout::{Access, Mode, Structure};
use crate::lower::{Gen, ManyInputs, W};
use crate::moments::Moments;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{
    Block, BlockArg, FuncRef, InstBuilder, StackSlotData, StackSlotKind, Value, types,
};
use cranelift_frontend::Variable;
use kiln_ir::ReduceOp;

mod block;
mod packed;

/// Emits a map or reduction kernel into the frame's function (after the entry block's loads).
pub fn emit(g: &mut Gen<'_, '_>, frame: &Frame<'_>) {
    let sk = Skeleton::new(g, frame);
    let cursor = sk.cursor(g);
    if sk.groups_rows() {
        sk.grouped_segments(g, cursor);
    } else {
        frame.segments(g, |g, s| {
            sk.segment(g, s, cursor);
            if let Some(c) = cursor {
                let one = g.b.ins().iconst(types::I64, 1);
                sk.advance(g, c, one);
            }
        });
    }
}

/// Reduced rows a kept sum adds together (a kept max, min, product, `any` or `all` folds) before
/// they meet the output (see [`Skeleton::grouped_segments`]): a power of two. 8 measured best for
/// column sums of 1e6 f64 (4:
/// 0.114, 8: 0.104 ns/elem, against 0.159 row by row, with groups of adjacent rows; BENCHMARKS.md
/// before 0b97b4d, issue 14 items 2 and 7).
const ROW_GROUP: i64 = crate::wide::GROUP as i64;

/// Runs of fewer columns than this keep a kept sum's, max's or min's inline loop where it could
/// call the row step at full width (the call costs more than it saves there).
const WIDE_ROW_MIN: i64 = 16;

/// f64 blocks of more bytes than this (the reduced rows of one output run: at most about a core's
/// L2) keep a kept sum's inline loop (a kept max or min, bound by its compares, takes the step at
/// any size): streamed from L3 or memory the row steps at full width
/// measured no faster, from L3 slower (column sums of 1e6 f64, 8 MB: 0.099-0.102 ns/elem against
/// 0.090-0.092 inline; BENCHMARKS.md before 0b97b4d, "Column sums at full width"). f32 blocks of any size take
/// the steps: the inline loop widens every vector to two f64 halves and is bound by that, not by
/// memory (1e6 f32: 0.10 against 0.23, 1e7: 0.14 against 0.18-0.20), and so do a typed kernel's
/// integer and bool sums.
const WIDE_ROW_MAX_BYTES: i64 = 1 << 20;

/// The fewest points of a row that a trailing max or min of a plain read folds by one call at
/// full width ([`Skeleton::wide_folds`]); shorter rows keep the inline loop, which folds them
/// in less time than the call takes.
const WIDE_EXTREME_MIN: i64 = 64;

/// The fewest points of a row whose moments are folded by one call at full width
/// ([`Skeleton::segment`]); shorter rows keep the inline blocks.
const WIDE_MOMENTS_MIN: i64 = 256;

/// The fewest points of a row that a trailing sum of f32 values folds by one call at full width
/// ([`Skeleton::wide_folds`]; an f64 sum folds where it keeps 16 partials, rows of at least
/// [`crate::LONG_SUM_ROW`] points); shorter rows keep the inline loop, which adds them in less time than
/// the call and the accumulators' trip through memory take: about 20 ns a row (`sum(m, axis=1)`
/// of 1e6 float32 from Python: rows of 64 points 0.38 ns an element against 0.20 inline, of 200
/// 0.17 against 0.17, of 256 0.14 against 0.17, of 1000 0.086 against 0.16).
const WIDE_SUM_MIN: i64 = 256;

/// The points an `any` or `all` over a row runs between two tests of whether its result is
/// decided ([`Skeleton::decided_stretches`], for schedules whose vector loop's step, unroll ·
/// lanes, divides it, so that each stretch ends where the next begins: every default one).
const DECIDE_STRETCH: i64 = 1024;

/// The points of a block of an argmin or argmax of a row ([`Skeleton::arg_blocks`]).
const ARG_BLOCK: i64 = 256;

/// The fewest points of a row whose argmin or argmax of a plain read is one call of the wide
/// routine ([`Skeleton::arg_row`]); shorter rows keep the argument's own update. From Python,
/// `argmax(m, axis=1)` of float64 rows of 16 points: 70 -> 58 ns a row by the call, of 24: 78 ->
/// 68; of 12 no faster.
const ARG_WIDE_MIN_ROW: i64 = 16;

/// The fewest points of a row whose argmin or argmax runs by blocks ([`Skeleton::arg_blocks`]):
/// `argmax(m, axis=1)` of 1e6 float64 from Python measured faster by blocks from rows of about 64
/// points (rows of 100: 1.28 -> 1.12-1.23 ns an element, of 255: 1.13 -> 0.83-0.89) and slower
/// below (rows of 32: 2.20 -> 2.43), where each row's fixed work (the blocks' fold, the search's
/// branches) outweighs the per-point update it saves.
const ARG_MIN_ROW: i64 = 64;

struct Skeleton<'f, 'k> {
    f: &'f Frame<'k>,
    st: &'k Structure,
    // parameters loaded in the entry block
    row_len: Value,
    seg_len: Value,
    n: Value,
    part: Value,
    /// Where each kept reduction's outputs start: the output's, or each component's run of kept
    /// sibling reductions (`out_val + c·part·8`, [`Structure::COMPONENT_OUTPUTS`]).
    kept_outputs: Vec<Value>,
    outer: Vec<(Value, Value)>,
    strides: Vec<Vec<Value>>,
    seg: Vec<[Value; 4]>,
    iota: Option<Value>,
    /// Every output's root (`body`, then `extra`).
    roots: Vec<kiln_ir::NodeId>,
    /// The nodes run on blocks by the wide routines (the functions, complex quotients), with their
    /// stack slots (block.rs).
    blocked: Vec<block::Staged>,
    /// Whether the one staged node's routine writes each block into the output row (block.rs
    /// `direct`).
    direct: bool,
    /// A kept sum, max or min of a plain read (or kept sibling reductions, each component one;
    /// of a typed kernel's integer or bool values, also an `any` or `all`): each component's
    /// input and its row steps at full width, `[group, single]` (`wide/rows.rs`,
    /// `wide/int_rows.rs`; see [`Skeleton::wide_rows`]).
    kept_steps: Option<Vec<(usize, [FuncRef; 2])>>,
    /// The input `i` a trailing argmax or argmin reads plainly (see [`Skeleton::arg_row`]), and
    /// where each segment is (part of) one row, whether the segment's row was one call, so that
    /// its vector accumulators hold the identity (an i8 variable: see [`Skeleton::arg_fold`]).
    arg_wide: Option<(usize, Option<Variable>)>,
    /// A trailing sum, max or min whose body a fold at full width reads, or sibling reductions
    /// whose every component's does: each reduction's fold (none where one has none): see
    /// [`Skeleton::wide_folds`].
    folds: Vec<ComponentFold>,
    /// A compound moments kernel of a plain read of input `i`, and the fold of a row at full
    /// width it calls (see [`Skeleton::segment`]).
    moments_wide: Option<(usize, FuncRef)>,
}

/// Segment `s`'s position along the last segment axis, carried from one segment to the next
/// instead of divided out of `s` at each (a 64-bit divide costs tens of cycles on some cores, and a
/// reduction over a middle axis of short rows locates a segment every few points): `q = s / dim`
/// and `i = s % dim`, `dim` that axis's length. Kept where a segment is located through two or
/// more segment axes ([`Skeleton::locate`]); the loops visit segments in increasing order.
#[derive(Clone, Copy)]
struct Cursor {
    q: Variable,
    i: Variable,
}

/// The accumulators of one reduction over a segment: K vectors (if vector code) and one scalar,
/// as variables. A trailing reduction has one; sibling reductions one per component, each what the
/// component's reduction alone keeps (so the same bits). Alone, a reduction of K accumulators
/// runs a main loop of K vectors an iteration (of the schedule's unroll where that is more: vector
/// `p` into accumulator `p % K`), then one vector an iteration into the first, then the scalar
/// tail. A sibling pass runs a main loop of the most any component keeps (or of the unroll), then
/// one of each smaller K, then one vector an iteration: each
/// component takes vector `p` into accumulator `p % K` in the loops of at least K vectors an
/// iteration and into its first in the others ([`Skeleton::item`]), which is where its values go
/// alone (the Ks of the default schedules divide one another: 4 and 8).
struct Acc {
    op: ReduceOp,
    vector: Vec<Vec<Variable>>,
    scalar: Vec<Variable>,
}

/// A compound reduction's state in one segment: what the inner loop folds each iteration's
/// values into (the moments alone since softmax's statistics became two reductions; another
/// compound op adds its state here).
enum Compound {
    Moments(Moments),
}

impl Compound {
    /// Folds one iteration's values, a batch of `count` vectors (`W::Vector`) or one scalar:
    /// `item(g, p)` for `p < count`, the first at byte offset `at` in its row.
    fn update(&self, g: &mut Gen<'_, '_>, w: W, count: usize, at: Value, item: &mut Item<'_>) {
        match self {
            Compound::Moments(m) => m.update(g, w, count, at, item),
        }
    }

    /// Stores the segment's state in slot `o` of `out` ([`crate::compound::SLOT_F64S`] f64 per slot).
    fn store(&self, g: &mut Gen<'_, '_>, out: Value, o: Value) {
        match self {
            Compound::Moments(m) => m.store(g, out, o),
        }
    }
}

/// The blocks of a row's run `[jlo, jhi)` taken by one call at full width or by the inline loop
/// ([`Skeleton::wide_rows`], [`Skeleton::wide_folds`]): its length, whether that is at least
/// the call's minimum, and the blocks of the call, of the inline loop and after both.
struct RowCall {
    len: Value,
    long: Value,
    called: cranelift_codegen::ir::Block,
    short: cranelift_codegen::ir::Block,
    done: cranelift_codegen::ir::Block,
}

impl RowCall {
    /// The row's run by `inline` in the block of the inline loop, both branches then joined.
    fn inline_and_join(&self, g: &mut Gen<'_, '_>, inline: impl FnOnce(&mut Gen<'_, '_>)) {
        g.b.switch_to_block(self.short);
        inline(g);
        g.b.ins().jump(self.done, &[]);
        g.b.switch_to_block(self.done);
    }

    fn new(g: &mut Gen<'_, '_>, jlo: Value, jhi: Value, min: i64) -> RowCall {
        let len = g.b.ins().isub(jhi, jlo);
        RowCall {
            len,
            long: g.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, len, min),
            called: g.b.create_block(),
            short: g.b.create_block(),
            done: g.b.create_block(),
        }
    }
}

/// One call of a kept reduction's row step at full width ([`Skeleton::wide_rows`]).
struct RowStep {
    /// The step (`wide/rows.rs`, `wide/int_rows.rs`): `fn(rows..., out, n)`.
    step: FuncRef,
    /// Its rows' pointers at column 0 (column `j` of row `m` at `rows[m] + j * size`), the code's
    /// addresses of input `input` (a typed kernel's stored input's shifted back for the call).
    rows: Vec<Value>,
    /// The input the rows are of.
    input: usize,
    /// Where the reduction's outputs start (the kernel's output, or a kept sibling component's).
    out: Value,
    /// The reduction, whose accumulator's bytes step the output.
    op: ReduceOp,
}

/// The input whose plain read is the kernel's body, where the row steps and folds at full width
/// may read its rows as runs: not strided, and stored as `stored` says (None: in the kernel's
/// dtype).
fn plain_read(f: &Frame<'_>, stored: Option<kiln_ir::ElemType>) -> Option<usize> {
    plain_input(f, f.key.body, stored)
}

/// [`plain_read`] of the node `n`: the input it reads, where its rows may be read as runs.
fn plain_input(f: &Frame<'_>, n: kiln_ir::NodeId, stored: Option<kiln_ir::ElemType>) -> Option<usize> {
    match *f.key.arena.node(n) {
        kiln_ir::Node::Input(i) => {
            let i = i as usize;
            (!f.st.inputs[i].strided() && f.st.stored[i] == stored).then_some(i)
        }
        _ => None,
    }
}

/// A typed kernel's integer or bool values that the extremes' folds at full width read (int64,
/// int32, bool), as they are stored; None otherwise.
fn folded_ints(g: &Gen<'_, '_>) -> Option<kiln_ir::ElemType> {
    use kiln_ir::ElemType;
    g.int_values()
        .filter(|t| matches!(t, ElemType::I64 | ElemType::I32 | ElemType::Bool))
}

/// The inputs whose rows a sum's fold at full width reads (wide/sums.rs), where the kernel
/// imported it: the plain read `(i, i)` that is `root`, or the two factors `(i, j)` of its
/// product.
fn summed_inputs(f: &Frame<'_>, root: kiln_ir::NodeId) -> Option<(usize, usize)> {
    match *f.key.arena.node(root) {
        kiln_ir::Node::Binary(kiln_ir::BinaryOp::Mul, a, b) => {
            Some((plain_input(f, a, None)?, plain_input(f, b, None)?))
        }
        _ => plain_input(f, root, None).map(|i| (i, i)),
    }
}

/// How one reduction (alone, or a component of sibling reductions) folds a long row at full
/// width (see [`Skeleton::wide_folds`]): its fold, and the inputs it reads (a product's two
/// factors).
#[derive(Clone, Copy)]
enum ComponentFold {
    /// A max or min of a plain read of input `i`.
    Extreme { fold: FuncRef, i: usize },
    /// A typed kernel's sum of a plain read of input `i`'s int64, int32 or bool values: an int64
    /// partial.
    IntSum { fold: FuncRef, i: usize },
    /// A sum of a plain read of input `i` (`j == i`) or of the product of inputs `i` and `j`,
    /// its accumulators handed to the fold in `slot`.
    Sum {
        fold: FuncRef,
        i: usize,
        j: usize,
        slot: cranelift_codegen::ir::StackSlot,
    },
}

/// A stack slot for the accumulators a sum's fold at full width adds a row into (its
/// [`crate::wide::PARTS`] partials and the scalar).
fn sum_slot(g: &mut Gen<'_, '_>) -> cranelift_codegen::ir::StackSlot {
    let bytes = 8 * (crate::wide::PARTS as u32 + 1);
    g.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 4))
}

/// The fold at full width of a trailing sum, max or min, or of every component of sibling
/// reductions where each has one (`KernelKey::folds`: compile.rs imported them), reading its rows as
/// runs; else none.
fn folds(g: &mut Gen<'_, '_>, f: &Frame<'_>) -> Vec<ComponentFold> {
    let ints = folded_ints(g);
    let values = crate::math::fold_values(g.typed.map(|t| t.value_type()), g.dtype);
    let Some(folds) = f.key.folds(values) else {
        return Vec::new();
    };
    // each fold's import and the inputs it reads (a sum's stack slot made once all are there)
    let routes: Option<Vec<(crate::math::Fold, FuncRef, usize, usize)>> = folds
        .iter()
        .zip(f.key.roots())
        .map(|(&fold, root)| match fold {
            crate::math::Fold::Extreme { max } => {
                let i = plain_input(f, root, ints)?;
                Some((fold, g.math.extreme(max)?, i, i))
            }
            crate::math::Fold::IntSum => {
                let i = plain_input(f, root, ints)?;
                Some((fold, g.math.int_sum()?, i, i))
            }
            crate::math::Fold::Sum { dot } => {
                let (i, j) = summed_inputs(f, root)?;
                Some((fold, g.math.sum(dot)?, i, j))
            }
        })
        .collect();
    routes
        .unwrap_or_default()
        .into_iter()
        .map(|(kind, fold, i, j)| match kind {
            crate::math::Fold::Extreme { .. } => ComponentFold::Extreme { fold, i },
            crate::math::Fold::IntSum => ComponentFold::IntSum { fold, i },
            crate::math::Fold::Sum { .. } => ComponentFold::Sum {
                fold,
                i,
                j,
                slot: sum_slot(g),
            },
        })
        .collect()
}

/// Per-row state of the inner loop.
#[derive(Clone)]
struct Row {
    rs: Value,
    ptrs: Vec<Option<Value>>,
    /// Where the row pointers are, for kernels of more than [`crate::schedule::MANY_INPUTS`] inputs.
    many: Option<ManyInputs>,
    splats: Vec<Option<[Value; 2]>>,
    row_index: Vec<Option<[Value; 2]>>,
    out_row: Option<Value>,
    /// The row's start in each further output of a map of several (output `1 + k` at `ins[n_in + k]`).
    extra_rows: Vec<Value>,
    /// Output element of the row's first point (kept reductions): `o_base + rs - s0`.
    kept_row: Option<Value>,
    /// Reduction index of the row's first point (trailing arg reductions): `r_base + rs - s0`.
    rpos: Option<Value>,
    /// The index vector of a kept arg reduction's segment (`r_base` per width).
    kept_ridx: Option<[Value; 2]>,
    /// The nodes of the body computed beforehand for the current block, and where (see block.rs).
    staged: Vec<(kiln_ir::NodeId, Value)>,
}

impl<'f, 'k> Skeleton<'f, 'k> {
    fn new(g: &mut Gen<'_, '_>, f: &'f Frame<'k>) -> Self {
        let st = f.st;
        let row_len = f.param(g, Structure::ROW_LEN);
        let seg_len = f.param(g, Structure::SEG_LEN);
        let n = f.param(g, Structure::N);
        let part = f.param(g, Structure::PART);
        let k = st.outer_axes;
        let outer = (0..k)
            .map(|a| (f.param(g, st.p_outer(a)), f.param(g, st.p_outer(a) + 1)))
            .collect();
        let strides = (0..st.inputs.len())
            .map(|i| match st.inputs[i] {
                acc if acc.per_row() => (0..k).map(|a| f.param(g, st.p_stride(i, a))).collect(),
                _ => Vec::new(),
            })
            .collect();
        let seg = (0..st.seg_axes)
            .map(|bx| {
                let p = st.p_seg(bx);
                [
                    f.param(g, p),
                    f.param(g, p + 1),
                    f.param(g, p + 2),
                    f.param(g, p + 3),
                ]
            })
            .collect();
        let iota = (f.vector && st.mode.reduce_op().is_some_and(|op| op.is_arg())).then(|| {
            let mut v = g.iconst(W::Vector, 0);
            for lane in 1..g.lanes {
                let x = g.b.ins().iconst(g.it, lane as i64);
                v = g.b.ins().insertlane(v, x, lane);
            }
            v
        });
        let blocked = block::staged(g, f);
        let kept_outputs = match st.mode {
            Mode::KeptSiblings(parts) => (0..parts.ops().len() as i64)
                .map(|c| {
                    let run = g.b.ins().imul_imm_s(part, 8 * c);
                    g.b.ins().iadd(f.out_val, run)
                })
                .collect(),
            _ => vec![f.out_val],
        };
        Skeleton {
            f,
            st,
            direct: block::direct(f, &blocked),
            row_len,
            seg_len,
            n,
            part,
            kept_outputs,
            outer,
            strides,
            seg,
            iota,
            roots: f.key.roots(),
            blocked,
            // the row steps read their rows as contiguous runs: a strided row keeps the inline loop
            kept_steps: Some(st.mode.kept_ops())
                .filter(|ops| !ops.is_empty())
                .and_then(|ops| {
                    ops.iter()
                        .zip(f.key.roots())
                        .map(|(&op, root)| {
                            Some((plain_input(f, root, folded_ints(g))?, g.math.kept_rows(op)?))
                        })
                        .collect()
                }),
            // (read where it is: a float kernel's input in its dtype, a typed one's int64, int32
            // or bool input)
            arg_wide: match st.mode {
                Mode::Trailing(op) if op.is_arg() && g.math.arg().is_some() => {
                    let called = st.segments_in_one_row().then(|| g.b.declare_var(types::I8));
                    plain_read(f, folded_ints(g)).map(|i| (i, called))
                }
                _ => None,
            },
            folds: folds(g, f),
            moments_wide: g
                .math
                .moments()
                .and_then(|fold| plain_read(f, None).map(|i| (i, fold))),
        }
    }

    /// The accumulators of `op`: `k` vectors (if vector code) and one scalar, as variables.
    fn new_acc(&self, g: &mut Gen<'_, '_>, op: ReduceOp, k: u8) -> Acc {
        let mut vector = Vec::new();
        if self.f.vector {
            for _ in 0..k {
                let init = g.acc_identity(op, W::Vector);
                vector.push(self.vars(g, op, W::Vector, &init));
            }
        }
        let init = g.acc_identity(op, W::Scalar);
        let scalar = self.vars(g, op, W::Scalar, &init);
        Acc { op, vector, scalar }
    }

    /// The vector accumulators of output `c`'s reduction: the schedule's, or for a component of
    /// sibling reductions the count the schedule gives it ([`crate::Schedule::components`]: what
    /// it keeps alone by default), at most the schedule's, so that the merged pass partitions each
    /// component's values as its reduction alone does (see [`Acc`]).
    fn accumulators(&self, c: usize) -> u8 {
        match self.st.mode {
            Mode::Siblings(_) => self.f.key.schedule.component_accumulators(c),
            _ => self.f.key.schedule.accumulators,
        }
    }

    fn vars(&self, g: &mut Gen<'_, '_>, op: ReduceOp, w: W, init: &[Value]) -> Vec<Variable> {
        g.acc_types(op, w)
            .into_iter()
            .zip(init)
            .map(|(ty, &v)| {
                let var = g.b.declare_var(ty);
                g.b.def_var(var, v);
                var
            })
            .collect()
    }

    /// Whether segments are located through two or more segment axes (so through a division
    /// without a [`Cursor`]).
    fn locates_by_axes(&self) -> bool {
        !(self.st.mode.folds_segments() && self.st.seg_axes == 0)
            && (self.st.mode.keeps() || self.st.mode.folds_segments())
            && self.st.seg_axes >= 2
    }

    /// The cursor of the first segment `seg_begin` (the one division of the loop), where segments
    /// are located through two or more axes.
    fn cursor(&self, g: &mut Gen<'_, '_>) -> Option<Cursor> {
        if !self.locates_by_axes() {
            return None;
        }
        let [dim, ..] = self.seg[self.st.seg_axes - 1];
        let (q, i) = (g.b.declare_var(types::I64), g.b.declare_var(types::I64));
        // computed before the loop's guard: never a division by zero (an empty axis has no
        // segments, so the value is then unused)
        let one = g.b.ins().iconst(types::I64, 1);
        let d = g.b.ins().umax(dim, one);
        let q0 = g.b.ins().udiv(self.f.seg_begin, d);
        let i0 = g.b.ins().urem(self.f.seg_begin, d);
        g.b.def_var(q, q0);
        g.b.def_var(i, i0);
        Some(Cursor { q, i })
    }

    /// Moves the cursor `by` segments on (`0 <= by <= dim`, so at most one wrap).
    fn advance(&self, g: &mut Gen<'_, '_>, c: Cursor, by: Value) {
        let [dim, ..] = self.seg[self.st.seg_axes - 1];
        let (q, i) = (g.b.use_var(c.q), g.b.use_var(c.i));
        let i = g.b.ins().iadd(i, by);
        let wraps = g.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, i, dim);
        let wrapped = g.b.ins().isub(i, dim);
        let i = g.b.ins().select(wraps, wrapped, i);
        let q_next = g.b.ins().iadd_imm_s(q, 1);
        let q = g.b.ins().select(wraps, q_next, q);
        g.b.def_var(c.q, q);
        g.b.def_var(c.i, i);
    }

    /// The first output (`o_base`) and first reduction index (`r_base`) of segment `s`, whose first
    /// point is `s0`; `cursor` is `s`'s position along the last segment axis where
    /// [`Skeleton::cursor`] keeps one.
    fn locate(&self, g: &mut Gen<'_, '_>, s: Value, s0: Value, cursor: Option<Cursor>) -> (Value, Value) {
        let zero = g.b.ins().iconst(types::I64, 0);
        let (mut o_base, mut r_base) = (zero, zero);
        if self.st.mode.folds_segments() && self.st.seg_axes == 0 {
            // a whole-array reduction: chunk s folds into slot s * part; flat index = reduction index
            o_base = g.b.ins().imul(s, self.part);
            r_base = s0;
        } else if self.st.mode.keeps() || self.st.mode.folds_segments() {
            // no division where none is needed (a 64-bit divide costs tens of cycles on some
            // cores, once per segment): the last segment axis has c-stride 1, the first one's
            // quotient is already below its dimension (s < n_seg), and the cursor carries the last
            // axis's index and the quotient by its length (the next axis's quotient)
            let last = self.seg.len().saturating_sub(1);
            let carried = cursor.map(|c| (g.b.use_var(c.q), g.b.use_var(c.i)));
            for (b, &[dim, segcs, ostr, rstr]) in self.seg.iter().enumerate() {
                let i = match carried {
                    Some((_, i)) if b == last => i,
                    Some((q, _)) if b + 1 == last && b == 0 => q,
                    Some((q, _)) if b + 1 == last => g.b.ins().urem(q, dim),
                    _ => {
                        let q = if b == last { s } else { g.b.ins().udiv(s, segcs) };
                        if b == 0 { q } else { g.b.ins().urem(q, dim) }
                    }
                };
                let o = g.b.ins().imul(i, ostr);
                o_base = g.b.ins().iadd(o_base, o);
                let r = g.b.ins().imul(i, rstr);
                r_base = g.b.ins().iadd(r_base, r);
            }
        }
        (o_base, r_base)
    }

    /// The plan row that holds point `f0` of segment `s`, without a division where the structure
    /// fixes it: every point is in row 0 when the plan has no outer axes, and rows are segments when
    /// the plan's outer axes are the segment axes (`row_len == seg_len`).
    fn row_of(&self, g: &mut Gen<'_, '_>, s: Value, f0: Value) -> Value {
        let k = self.st.outer_axes;
        if k == 0 {
            g.b.ins().iconst(types::I64, 0)
        } else if k == self.st.seg_axes {
            s
        } else {
            g.b.ins().udiv(f0, self.row_len)
        }
    }

    fn segment(&self, g: &mut Gen<'_, '_>, s: Value, cursor: Option<Cursor>) {
        let s0 = g.b.ins().imul(s, self.seg_len);
        let f0 = g.b.ins().iadd(s0, self.f.lo);
        let f1 = g.b.ins().iadd(s0, self.f.hi);
        let f1 = g.b.ins().smin(f1, self.n);
        let zero = g.b.ins().iconst(types::I64, 0);
        let (o_base, r_base) = self.locate(g, s, s0, cursor);
        let compound = match self.st.mode {
            // (a body more than a plain read in the dtype is computed once a block, kept for
            // the second pass)
            Mode::Compound(kiln_ir::CompoundOp::Moments) => Some(Compound::Moments(Moments::new(
                g,
                self.f.vector,
                usize::from(self.f.key.schedule.accumulators),
                plain_read(self.f, None).is_none(),
            ))),
            _ => None,
        };
        let slots: Vec<Acc> = self
            .st
            .mode
            .folds()
            .iter()
            .enumerate()
            .map(|(c, &op)| self.new_acc(g, op, self.accumulators(c)))
            .collect();
        if let Some((_, Some(called))) = self.arg_wide {
            let no = g.b.ins().iconst(types::I8, 0);
            g.b.def_var(called, no);
        }
        let kept_ridx = match self.st.mode {
            Mode::Kept(op) if op.is_arg() => {
                let s = g.index_lanes(W::Scalar, r_base, zero);
                Some([s, g.splat(W::Vector, s)])
            }
            _ => None,
        };

        let row_var = g.b.declare_var(types::I64);
        let row0 = self.row_of(g, s, f0);
        g.b.def_var(row_var, row0);
        let row_body = g.b.create_block();
        let seg_done = g.b.create_block();
        let rs0 = g.b.ins().imul(row0, self.row_len);
        let none = g.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, rs0, f1);
        g.b.ins().brif(none, seg_done, &[], row_body, &[]);

        g.b.switch_to_block(row_body);
        let row = g.b.use_var(row_var);
        let rs = g.b.ins().imul(row, self.row_len);
        let lo = g.b.ins().isub(f0, rs);
        let jlo = g.b.ins().smax(lo, zero);
        let hi = g.b.ins().isub(f1, rs);
        let jhi = g.b.ins().smin(hi, self.row_len);
        let r = self.row_state(g, row, rs, s0, o_base, r_base, kept_ridx);
        // each reduction's fold at full width and the rows it reads (all or none of them)
        let folds: Option<Vec<(ComponentFold, [Value; 2])>> = self
            .folds
            .iter()
            .map(|&cf| match cf {
                ComponentFold::Extreme { i, .. } | ComponentFold::IntSum { i, .. } => {
                    r.ptrs[i].map(|x| (cf, [x, x]))
                }
                ComponentFold::Sum { i, j, .. } => Some((cf, [r.ptrs[i]?, r.ptrs[j]?])),
            })
            .collect();
        // a kept reduction's row of a plain read (each component's) by the single-row step at
        // full width
        let kept_steps = self.kept_row_steps(|i, [_, single]| Some((single, vec![r.ptrs[i]?])));
        if let Some(steps) = kept_steps {
            let o = r.kept_row.expect("kept rows have an output");
            self.wide_rows(g, jlo, jhi, &steps, o, |g| self.inner(g, &r, jlo, jhi, &[], None));
        } else if let Some(folds) = folds.filter(|f| !f.is_empty() && f.len() == slots.len()) {
            self.wide_folds(g, jlo, jhi, &folds, &slots, |g| {
                self.inner(g, &r, jlo, jhi, &slots, None)
            });
        } else if let Some(c @ Compound::Moments(m)) = &compound {
            match self
                .moments_wide
                .and_then(|(i, fold)| r.ptrs[i].map(|x| (x, fold)))
            {
                Some((x, fold)) => {
                    let row = RowCall::new(g, jlo, jhi, WIDE_MOMENTS_MIN);
                    g.b.ins().brif(row.long, row.called, &[], row.short, &[]);
                    g.b.switch_to_block(row.called);
                    let jb = g.b.ins().imul_imm_s(jlo, g.size);
                    let x = g.b.ins().iadd(x, jb);
                    let state = m.state_address(g);
                    let call = g.b.ins().call(fold, &[x, row.len, state]);
                    let nan = g.b.inst_results(call)[0];
                    g.b.ins().brif(nan, row.short, &[], row.done, &[]);
                    row.inline_and_join(g, |g| self.moments_blocks(g, &r, jlo, jhi, c, m));
                }
                None => self.moments_blocks(g, &r, jlo, jhi, c, m),
            }
        } else if self.blocked.is_empty() || compound.is_some() {
            self.inner(g, &r, jlo, jhi, &slots, compound.as_ref());
        } else {
            self.blocks(g, &r, jlo, jhi, &slots);
        }
        let row_next = g.b.ins().iadd_imm_s(row, 1);
        g.b.def_var(row_var, row_next);
        let rs_next = g.b.ins().iadd(rs, self.row_len);
        let done = g.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, rs_next, f1);
        g.b.ins().brif(done, seg_done, &[], row_body, &[]);

        g.b.switch_to_block(seg_done);
        if let Some(c) = &compound {
            c.store(g, self.f.out_val, o_base);
        }
        for (c, acc) in slots.iter().enumerate() {
            self.fold_out(g, acc, c, o_base);
        }
    }

    /// Folds `acc` (component `c`) into its output: the vector accumulators and the scalar one
    /// merged into one partial, merged into the output element `o_base` (a trailing reduction's
    /// buffer, or word `c` of slot `o_base` of sibling reductions: see [`crate::layout::Parts`]).
    fn fold_out(&self, g: &mut Gen<'_, '_>, acc: &Acc, c: usize, o_base: Value) {
        let op = acc.op;
        let vs: Vec<Vec<Value>> = acc
            .vector
            .iter()
            .map(|slot| slot.iter().map(|&v| g.b.use_var(v)).collect())
            .collect();
        let tail: Vec<Value> = acc.scalar.iter().map(|&v| g.b.use_var(v)).collect();
        let partial = if op.is_arg() && vs.len() > 1 {
            self.arg_fold(g, op, &vs, tail)
        } else {
            g.acc_fold(op, &vs, tail)
        };
        let (out_val, out_idx) = (self.f.out_val, self.f.out_idx);
        let Mode::Siblings(parts) = self.st.mode else {
            let state = g.acc_load(op, W::Scalar, out_val, out_idx, o_base, 0);
            let merged = g.acc_merge_scalar(op, &state, &partial);
            g.acc_store(op, out_val, out_idx, o_base, 0, &merged);
            return;
        };
        // a component's word is f64 (min and max of f32 held exactly, widened), or a typed
        // kernel's int64 accumulator (int_acc.rs)
        let slot = g.elem_addr(out_val, o_base, 8 * parts.ops().len() as i64);
        if g.int_values().is_some() {
            let word = g.b.ins().load(types::I64, mem(), slot, 8 * c as i32);
            let merged = g.acc_merge_scalar(op, &[word], &partial)[0];
            g.b.ins().store(mem(), merged, slot, 8 * c as i32);
            return;
        }
        let word = g.b.ins().load(types::F64, mem(), slot, 8 * c as i32);
        let narrow = matches!(op, ReduceOp::Min | ReduceOp::Max) && g.dtype == kiln_ir::ElemType::F32;
        let state = if narrow {
            g.b.ins().fdemote(types::F32, word)
        } else {
            word
        };
        let merged = g.acc_merge_scalar(op, &[state], &partial)[0];
        let merged = if narrow {
            g.b.ins().fpromote(types::F64, merged)
        } else {
            merged
        };
        g.b.ins().store(mem(), merged, slot, 8 * c as i32);
    }

    /// [`Gen::acc_fold`] of an arg reduction's vector accumulators `vs` and scalar one `tail`. Where
    /// every stretch of a row the segment folds (at most `min(row_len, seg_len)` points) is shorter
    /// than one step of the main vector loop (`unroll` or `accumulators` vectors), that loop never
    /// ran and only the remainder loop, a vector at a time (`p = 0`), updated an accumulator, the
    /// first: it is folded alone (the others hold the identity, which a merge leaves alone). Short
    /// rows (argmax over 10 classes) skip most of the fold's merges, a few dozen instructions each.
    /// A segment's row that was one call of the wide routine ([`Skeleton::arg_row`]) left them all
    /// the identity: the scalar one is the partial.
    fn arg_fold(&self, g: &mut Gen<'_, '_>, op: ReduceOp, vs: &[Vec<Value>], tail: Vec<Value>) -> Vec<Value> {
        let sched = self.f.key.schedule;
        let step = sched.unroll.max(sched.accumulators) as i64 * self.f.lanes;
        let (all, first, join) = (g.b.create_block(), g.b.create_block(), g.b.create_block());
        let types: Vec<_> = tail.iter().map(|&v| g.b.func.dfg.value_type(v)).collect();
        for &ty in &types {
            g.b.append_block_param(join, ty);
        }
        if let Some((_, Some(called))) = self.arg_wide {
            let inline = g.b.create_block();
            let called = g.b.use_var(called);
            let args: Vec<_> = tail.iter().map(|&v| v.into()).collect();
            g.b.ins().brif(called, join, &args, inline, &[]);
            g.b.switch_to_block(inline);
        }
        // a row's stretch of a segment: at most the row, at most the segment
        let extent = g.b.ins().smin(self.row_len, self.seg_len);
        let short = g.b.ins().icmp_imm_s(IntCC::SignedLessThan, extent, step);
        g.b.ins().brif(short, first, &[], all, &[]);
        for (block, slots) in [(first, &vs[..1]), (all, vs)] {
            g.b.switch_to_block(block);
            let partial = g.acc_fold(op, slots, tail.clone());
            let args: Vec<_> = partial.into_iter().map(Into::into).collect();
            g.b.ins().jump(join, &args);
        }
        g.b.switch_to_block(join);
        g.b.block_params(join).to_vec()
    }

    #[allow(clippy::too_many_arguments)]
    fn row_state(
        &self,
        g: &mut Gen<'_, '_>,
        row: Value,
        rs: Value,
        s0: Value,
        o_base: Value,
        r_base: Value,
        kept_ridx: Option<[Value; 2]>,
    ) -> Row {
        let st = self.st;
        let k = st.outer_axes;
        let index_axes = self.f.key.arena.index_axes_all(&self.f.key.roots());
        let needs_outer = st.inputs.iter().any(|a| a.per_row()) || index_axes.iter().any(|&a| a < k);
        let outer_idx: Vec<Value> = if needs_outer {
            self.outer
                .iter()
                .map(|&(dim, ocs)| {
                    let q = g.b.ins().udiv(row, ocs);
                    g.b.ins().urem(q, dim)
                })
                .collect()
        } else {
            Vec::new()
        };
        let size = g.size;
        let mut ptrs = vec![None; st.inputs.len()];
        let mut splats = self.f.splats.clone();
        let mut many = self.f.row_slot.map(|slot| ManyInputs {
            ins: self.f.ins_arg,
            row_bytes: g.b.ins().imul_imm_s(rs, size),
            slot: g.b.ins().stack_addr(types::I64, slot, 0),
            in_slot: vec![false; st.inputs.len()],
        });
        for (i, &acc) in st.inputs.iter().enumerate() {
            if acc == Access::Splat || (acc == Access::Contiguous && many.is_some()) {
                // a contiguous input of many is read at `ins[i] + row_bytes` where it is used
                continue;
            }
            let base = self.f.input_base(g, i);
            let row_off = |g: &mut Gen<'_, '_>| g.row_addr(base, &outer_idx, &self.strides[i], size);
            match acc {
                Access::Splat => {}
                Access::Contiguous => ptrs[i] = Some(g.elem_addr(base, rs, size)),
                Access::RowRun | Access::RowStrided { .. } => ptrs[i] = Some(row_off(g)),
                Access::RowSplat => {
                    let addr = row_off(g);
                    let s = g.load_input(W::Scalar, i, addr, 0, st.stored[i]);
                    splats[i] = Some([s, g.splat_input(s, st.stored[i])]);
                }
            }
        }
        if let Some(m) = &mut many {
            m.hold(g, &mut ptrs);
        }
        let row_index = (0..st.rank)
            .map(|a| {
                (a < k && index_axes.contains(&a)).then(|| {
                    let f = g.b.ins().fcvt_from_uint(types::F64, outer_idx[a]);
                    let s = if g.dtype == kiln_ir::ElemType::F32 {
                        g.b.ins().fdemote(types::F32, f)
                    } else {
                        f
                    };
                    [s, g.splat(W::Vector, s)]
                })
            })
            .collect();
        let rel = g.b.ins().isub(rs, s0);
        let (out_row, kept_row, rpos) = match st.mode {
            Mode::Map | Mode::Scan { .. } => (Some(g.elem_addr(self.f.out_val, rs, size)), None, None),
            Mode::Kept(_) | Mode::KeptSiblings(_) => (None, Some(g.b.ins().iadd(o_base, rel)), None),
            Mode::Trailing(op) => (None, None, op.is_arg().then(|| g.b.ins().iadd(r_base, rel))),
            Mode::Compound(_) | Mode::Siblings(_) => (None, None, None),
        };
        let n_in = st.inputs.len();
        // sibling reductions' further roots are components, not outputs of their own
        let n_extra = match st.mode.parts() {
            Some(_) => 0,
            None => self.f.key.extra.len(),
        };
        let extra_rows = (0..n_extra)
            .map(|k| {
                let base = self.f.input_base(g, n_in + k);
                g.elem_addr(base, rs, size)
            })
            .collect();
        Row {
            rs,
            ptrs,
            extra_rows,
            many,
            splats,
            row_index,
            out_row,
            kept_row,
            rpos,
            kept_ridx,
            staged: Vec::new(),
        }
    }

    /// A row's run `[jlo, jhi)` of moments `m` (`c` its compound state), in blocks of
    /// [`crate::moments::BLOCK_POINTS`]: each block's sums, then its squared deviations from its
    /// mean, by the inner loop (see `moments.rs`).
    #[allow(clippy::too_many_arguments)]
    fn moments_blocks(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        jlo: Value,
        jhi: Value,
        c: &Compound,
        m: &Moments,
    ) {
        let len = crate::moments::BLOCK_POINTS;
        let b_var = g.b.declare_var(types::I64);
        g.b.def_var(b_var, jlo);
        let head = g.b.create_block();
        let body = g.b.create_block();
        let done = g.b.create_block();
        g.b.ins().jump(head, &[]);

        g.b.switch_to_block(head);
        let b = g.b.use_var(b_var);
        let more = g.b.ins().icmp(IntCC::SignedLessThan, b, jhi);
        g.b.ins().brif(more, body, &[], done, &[]);

        g.b.switch_to_block(body);
        let end = g.b.ins().iadd_imm_s(b, len);
        let bhi = g.b.ins().smin(end, jhi);
        let points = |g: &mut Gen<'_, '_>| {
            let k = g.b.ins().isub(bhi, b);
            g.b.ins().fcvt_from_sint(types::F64, k)
        };
        // the block's first value (the first pass's shift)
        let jb = g.b.ins().imul_imm_s(b, g.size);
        let first = m.shifts().then(|| {
            let flat = g.b.ins().iadd(r.rs, b);
            self.value(g, r, W::Scalar, jb, flat, 0)
        });
        m.begin_block(g, jb, first);
        self.inner(g, r, b, bhi, &[], Some(c));
        let n = points(g);
        m.end_sum(g, n);
        self.inner(g, r, b, bhi, &[], Some(c));
        let n = points(g);
        m.end_block(g, n);
        g.b.def_var(b_var, bhi);
        g.b.ins().jump(head, &[]);

        g.b.switch_to_block(done);
    }

    /// The inner loop over `j` in `[jlo, jhi)` of one row.
    fn inner(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        jlo: Value,
        jhi: Value,
        slots: &[Acc],
        compound: Option<&Compound>,
    ) {
        let j_var = g.b.declare_var(types::I64);
        g.b.def_var(j_var, jlo);
        let sched = self.f.key.schedule;
        if self.f.vector {
            // kept reductions update distinct outputs per vector: as many per iteration as a
            // trailing one folds, so column sums run as wide as row sums
            let per_iter = match self.st.mode {
                Mode::Trailing(_)
                | Mode::Kept(_)
                | Mode::Compound(_)
                | Mode::Siblings(_)
                | Mode::KeptSiblings(_) => sched.unroll.max(sched.accumulators) as i64,
                Mode::Map | Mode::Scan { .. } => sched.unroll as i64,
            };
            if let ([acc], None) = (slots, compound)
                && matches!(acc.op, ReduceOp::Any | ReduceOp::All)
                && matches!(self.st.mode, Mode::Trailing(_))
                && DECIDE_STRETCH % (per_iter * self.f.lanes) == 0
            {
                self.decided_stretches(g, r, j_var, jhi, per_iter, acc);
            }
            if let ([acc], None) = (slots, compound)
                && acc.op.is_arg()
                && matches!(self.st.mode, Mode::Trailing(_))
                && self.roots.len() == 1
                && g.complex_values(acc.op).is_none()
            {
                self.arg_blocks(g, r, j_var, jhi, per_iter, acc);
            }
            self.loop_(g, r, j_var, jhi, per_iter, W::Vector, slots, compound);
            // components of fewer accumulators than the schedule's (sibling reductions): a loop
            // of as many vectors each, where such a component alone would run its main loop (see
            // `Acc`)
            let most = sched.accumulators as i64;
            let mut fewer: Vec<i64> = slots
                .iter()
                .map(|a| a.vector.len() as i64)
                .filter(|&k| k > 1 && k < most)
                .collect();
            fewer.sort_unstable_by(|a, b| b.cmp(a));
            fewer.dedup();
            for k in fewer {
                self.loop_(g, r, j_var, jhi, k, W::Vector, slots, compound);
            }
            if per_iter > 1 {
                self.loop_(g, r, j_var, jhi, 1, W::Vector, slots, compound);
            }
        }
        self.loop_(g, r, j_var, jhi, 1, W::Scalar, slots, compound);
    }

    /// An `any` or `all` of a row: its points from `j_var` on in stretches of [`DECIDE_STRETCH`]
    /// (the vector loop of `per_iter` items each), until fewer remain or its result is decided
    /// (`any`: a lane of an accumulator or the scalar one is true; `all`: one is false). Then
    /// `j_var` is `jhi`, so the loops after it (the rest of the row, its tail) run no point: a
    /// segment whose result is decided reads no more of this row. The result is the same (a
    /// decided `any` or `all` stays so), and so are the bits of every output. Rows computed on
    /// blocks for the wide routines (`block.rs`: `any(exp(x) > 5)`) run their inner loops a block
    /// of at most 256 points at a time, so they read every point.
    fn decided_stretches(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        j_var: Variable,
        jhi: Value,
        per_iter: i64,
        acc: &Acc,
    ) {
        let (body, done, last) = enter_stretches(g, j_var, jhi, DECIDE_STRETCH);
        let j = g.b.use_var(j_var);
        let end = g.b.ins().iadd_imm_s(j, DECIDE_STRETCH);
        self.loop_(
            g,
            r,
            j_var,
            end,
            per_iter,
            W::Vector,
            std::slice::from_ref(acc),
            None,
        );
        // any: some lane true; all: some lane false (a lane holds a mask, or 0 / 1)
        let any = acc.op == ReduceOp::Any;
        let mut decided = None;
        for v in acc.vector.iter().flatten().chain(&acc.scalar) {
            let x = g.b.use_var(*v);
            let bit = if g.b.func.dfg.value_type(x).is_vector() {
                let b = if any {
                    g.b.ins().vany_true(x)
                } else {
                    let t = g.b.ins().vall_true(x);
                    g.b.ins().bxor_imm_s(t, 1)
                };
                g.b.ins().uextend(types::I32, b)
            } else {
                let cc = if any { IntCC::NotEqual } else { IntCC::Equal };
                let b = g.b.ins().icmp_imm_s(cc, x, 0);
                g.b.ins().uextend(types::I32, b)
            };
            decided = Some(match decided {
                None => bit,
                Some(d) => g.b.ins().bor(d, bit),
            });
        }
        let decided = decided.expect("an accumulator has its scalar part");
        let next = g.b.use_var(j_var);
        let at = g.b.ins().select(decided, jhi, next);
        g.b.def_var(j_var, at);
        let beyond = g.b.ins().icmp(IntCC::SignedGreaterThan, next, last);
        let beyond = g.b.ins().uextend(types::I32, beyond);
        let stop = g.b.ins().bor(beyond, decided);
        g.b.ins().brif(stop, done, &[], body, &[]);
        g.b.switch_to_block(done);
    }

    /// The address from which a call at full width reads input `i`'s run from point `j` on, `x`
    /// the code's address of the row's point 0: the elements' own address, which the code's is a
    /// multiple of where the input is stored narrower than the lanes (`run::stored_shift`: a typed
    /// kernel's int32 input in int64 lanes is addressed at twice its own).
    fn run_at(&self, g: &mut Gen<'_, '_>, i: usize, x: Value, j: Value) -> Value {
        let jb = g.b.ins().imul_imm_s(j, g.size);
        let at = g.b.ins().iadd(x, jb);
        let shift = self.st.stored[i].map_or(0, |t| crate::run::stored_shift(g.size as usize, t));
        g.own_address(at, shift)
    }

    /// An argmin or argmax of a row of float, integer or bool values (its one output) of
    /// [`ARG_MIN_ROW`] points or more: its points from `j_var` on in blocks of [`ARG_BLOCK`], the
    /// last one the rest of the row, and `j_var` at the row's end after them (shorter rows keep
    /// the argument's own update, in the loops after this). Where the body is a plain read of an
    /// input and the wide routine is imported, the row is one call instead ([`Skeleton::arg_row`]).
    ///
    /// Each block is reduced to its extreme (NumPy's `minimum` / `maximum`, NaN propagating) by
    /// the loops of the plain reduction, a few operations a vector where the argument's update
    /// takes about twenty. The row keeps the first block whose extreme is better than every
    /// earlier one's (strictly; a NaN beats every number; the first block beats none; integer and
    /// bool values compare as int64), and afterwards finds in that block the first point equal to
    /// its extreme (or NaN, for a NaN): the first vector holding one, then the point in it. That
    /// point is the first of the extreme in the blocks, as the argument's own update finds it, and
    /// is merged into the scalar accumulator as a partial result (lower indices win ties). The
    /// body's scalar value is the vector's lane's, bit for bit (so the point is found); were it
    /// not, the block's points are folded one by one instead. A bool row stops at the first block
    /// holding a true (argmax) or a false (argmin): no later point is better.
    fn arg_blocks(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        j_var: Variable,
        jhi: Value,
        per_iter: i64,
        acc: &Acc,
    ) {
        if let Some((arg, ty)) = g.math.arg()
            && let Some((i, _)) = self.arg_wide
            && let Some(x) = r.ptrs[i]
        {
            self.arg_row(g, j_var, jhi, acc, (arg, ty), i, x, r);
            return;
        }
        let (op, cc, icc) = match acc.op {
            ReduceOp::ArgMin => (ReduceOp::Min, FloatCC::LessThan, IntCC::SignedLessThan),
            _ => (ReduceOp::Max, FloatCC::GreaterThan, IntCC::SignedGreaterThan),
        };
        // integer and bool values fold int64 lanes (int_acc.rs), and have no NaN
        let ints = g.int_values().is_some();
        // twice the accumulators (and vectors an iteration) of the argument's schedule: a max's
        // chain (`maxpd`, the NaN blend) is longer than the loads and compares beside it
        let mut extreme = self.new_acc(g, op, self.f.key.schedule.accumulators);
        for _ in 0..extreme.vector.len() {
            let init = g.acc_identity(op, W::Vector);
            let more = self.vars(g, op, W::Vector, &init);
            extreme.vector.push(more);
        }
        let per_iter = 2 * per_iter;
        let best_var = g.b.declare_var(g.acc_types(op, W::Scalar)[0]);
        let init = g.acc_identity(op, W::Scalar)[0];
        g.b.def_var(best_var, init);
        let blk_var = g.b.declare_var(types::I64);
        let none_yet = g.b.ins().iconst(types::I64, -1);
        g.b.def_var(blk_var, none_yet);

        // rows of fewer than ARG_MIN_ROW points keep the argument's own update; a block: ARG_BLOCK
        // points, or the rest of the row (vectors, then single points)
        let (body, blocks_done, _) = enter_stretches(g, j_var, jhi, ARG_MIN_ROW);
        let j = g.b.use_var(j_var);
        for (vars, w) in extreme
            .vector
            .iter()
            .map(|slot| (slot, W::Vector))
            .chain(std::iter::once((&extreme.scalar, W::Scalar)))
        {
            let identity = g.acc_identity(op, w);
            for (&v, x) in vars.iter().zip(identity) {
                g.b.def_var(v, x);
            }
        }
        let full = g.b.ins().iadd_imm_s(j, ARG_BLOCK);
        let end = g.b.ins().smin(full, jhi);
        let one = std::slice::from_ref(&extreme);
        self.loop_(g, r, j_var, end, per_iter, W::Vector, one, None);
        if per_iter > 1 {
            self.loop_(g, r, j_var, end, 1, W::Vector, one, None);
        }
        self.loop_(g, r, j_var, end, 1, W::Scalar, one, None);
        let vs: Vec<Vec<Value>> = extreme
            .vector
            .iter()
            .map(|slot| slot.iter().map(|&v| g.b.use_var(v)).collect())
            .collect();
        let tail: Vec<Value> = extreme.scalar.iter().map(|&v| g.b.use_var(v)).collect();
        let m = g.acc_fold(op, &vs, tail)[0];
        let best = g.b.use_var(best_var);
        let blk = g.b.use_var(blk_var);
        let first = g.b.ins().icmp_imm_s(IntCC::Equal, blk, -1);
        let take = if ints {
            let better = g.b.ins().icmp(icc, m, best);
            g.b.ins().bor(better, first)
        } else {
            let better = g.b.ins().fcmp(cc, m, best);
            let m_nan = g.b.ins().fcmp(FloatCC::Unordered, m, m);
            let best_num = g.b.ins().fcmp(FloatCC::Ordered, best, best);
            let nan_first = g.b.ins().band(m_nan, best_num);
            let take = g.b.ins().bor(better, nan_first);
            g.b.ins().bor(take, first)
        };
        let best = g.b.ins().select(take, m, best);
        let blk = g.b.ins().select(take, j, blk);
        g.b.def_var(best_var, best);
        g.b.def_var(blk_var, blk);
        let next = g.b.use_var(j_var);
        let mut stop = g.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, next, jhi);
        if g.int_values() == Some(kiln_ir::ElemType::Bool) {
            // a bool's argmax is decided by its first true, its argmin by its first false: no
            // later point is better, so the rest of the row (its later loops too) is not read
            let decided =
                g.b.ins()
                    .icmp_imm_s(IntCC::Equal, best, i64::from(op == ReduceOp::Max));
            let at = g.b.ins().select(decided, jhi, next);
            g.b.def_var(j_var, at);
            stop = g.b.ins().bor(stop, decided);
        }
        g.b.ins().brif(stop, blocks_done, &[], body, &[]);

        // the first point of the extreme in the best block, if a block ran
        g.b.switch_to_block(blocks_done);
        let after = g.b.create_block();
        let found = g.b.create_block();
        let at = g.b.append_block_param(found, types::I64);
        let fold = g.b.create_block();
        let blk = g.b.use_var(blk_var);
        let best = g.b.use_var(best_var);
        let limit = g.b.ins().iadd_imm_s(blk, ARG_BLOCK);
        let limit = g.b.ins().smin(limit, jhi);
        let ran = g.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, blk, 0);
        self.search_block(g, r, blk, limit, best, ran, found, fold, after);

        g.b.switch_to_block(found);
        self.arg_merge(g, r, acc, best, at);
        g.b.ins().jump(after, &[]);

        // not found (the scalar value differing from the lane's): the block point by point
        g.b.switch_to_block(fold);
        let k_var = g.b.declare_var(types::I64);
        g.b.def_var(k_var, blk);
        self.loop_(g, r, k_var, limit, 1, W::Scalar, std::slice::from_ref(acc), None);
        g.b.ins().jump(after, &[]);

        g.b.switch_to_block(after);
    }

    /// The point `at` of a row (its extreme `best`) merged into an argmin's or argmax's scalar
    /// accumulator as a partial result (lower indices win ties).
    fn arg_merge(&self, g: &mut Gen<'_, '_>, r: &Row, acc: &Acc, best: Value, at: Value) {
        let rpos = r.rpos.expect("arg reductions have row positions");
        let pos = g.b.ins().iadd(rpos, at);
        let idx = g.index_lanes(W::Scalar, pos, pos);
        let old: Vec<Value> = acc.scalar.iter().map(|&x| g.b.use_var(x)).collect();
        let merged = g.acc_merge_scalar(acc.op, &old, &[best, idx]);
        for (&x, y) in acc.scalar.iter().zip(merged) {
            g.b.def_var(x, y);
        }
    }

    /// An argmin or argmax of a plain read of input `i` (`x` the code's address of the row's
    /// point 0) over a row's points from `j_var` on, [`ARG_WIDE_MIN_ROW`] of them or more: one
    /// call of the wide routine `arg` (wide/args.rs: the first NaN, else the first point
    /// equal to the extreme, as the argument's own update finds it), which writes the point's value
    /// (of type `ty`) to a stack slot; merged into the scalar accumulator as a partial result, and
    /// `j_var` at the row's end. Shorter rows keep the argument's own update, in the loops after
    /// this.
    #[allow(clippy::too_many_arguments)]
    fn arg_row(
        &self,
        g: &mut Gen<'_, '_>,
        j_var: Variable,
        jhi: Value,
        acc: &Acc,
        (arg, ty): (FuncRef, cranelift_codegen::ir::Type),
        i: usize,
        x: Value,
        r: &Row,
    ) {
        let (_, after, _) = enter_stretches(g, j_var, jhi, ARG_WIDE_MIN_ROW);
        let j = g.b.use_var(j_var);
        let len = g.b.ins().isub(jhi, j);
        let start = self.run_at(g, i, x, j);
        let slot =
            g.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 8, 3));
        let value_at = g.b.ins().stack_addr(types::I64, slot, 0);
        let call = g.b.ins().call(arg, &[start, len, value_at]);
        let k = g.b.inst_results(call)[0];
        let best = g.b.ins().load(ty, mem(), value_at, 0);
        let at = g.b.ins().iadd(j, k);
        self.arg_merge(g, r, acc, best, at);
        g.b.def_var(j_var, jhi);
        if let Some((_, Some(called))) = self.arg_wide {
            // The argument's vector accumulators are still their identity here: a segment in one
            // row calls `inner` once (a plain read's row is not computed in blocks, `blocks`),
            // which starts here with them as `new_acc` made them, and the call merged only into
            // the scalar one. Defined again, their values from before are not live across the
            // call above (which clobbers every vector register): spilled and reloaded around
            // it, they were most of the kernel's own time on rows of a hundred points. (A
            // segment of several rows, `argmax(m)` of a strided `m`, carries them from row to
            // row.) The segment's fold skips them (`arg_fold`).
            let identity = g.acc_identity(acc.op, W::Vector);
            for slot in &acc.vector {
                for (&v, &x) in slot.iter().zip(&identity) {
                    g.b.def_var(v, x);
                }
            }
            let yes = g.b.ins().iconst(types::I8, 1);
            g.b.def_var(called, yes);
        }
        g.b.ins().jump(after, &[]);
        g.b.switch_to_block(after);
    }

    /// The inline search of an argmax's or argmin's best block `[blk, limit)` (if one `ran`) for
    /// its extreme `best`: a vector at a time to the first holding it, then point by point from
    /// there, to `found` (the point) or, none equal, to `fold`; to `after` where no block ran.
    #[allow(clippy::too_many_arguments)]
    fn search_block(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        blk: Value,
        limit: Value,
        best: Value,
        ran: Value,
        found: Block,
        fold: Block,
        after: Block,
    ) {
        let head = g.b.create_block();
        let k = g.b.append_block_param(head, types::I64);
        let vhead = g.b.create_block();
        let kv = g.b.append_block_param(vhead, types::I64);
        g.b.ins().brif(ran, vhead, &[BlockArg::Value(blk)], after, &[]);

        g.b.switch_to_block(vhead);
        let vend = g.b.ins().iadd_imm_s(kv, self.f.lanes);
        let fits = g.b.ins().icmp(IntCC::SignedLessThanOrEqual, vend, limit);
        let vtest = g.b.create_block();
        g.b.ins().brif(fits, vtest, &[], head, &[BlockArg::Value(kv)]);

        g.b.switch_to_block(vtest);
        let kb = g.b.ins().imul_imm_s(kv, g.size);
        let flat = g.b.ins().iadd(r.rs, kv);
        let v = self.value(g, r, W::Vector, kb, flat, 0);
        let bv = g.splat(W::Vector, best);
        let hit = self.is_extreme(g, W::Vector, v, bv);
        let hit = g.b.ins().vany_true(hit);
        g.b.ins()
            .brif(hit, head, &[BlockArg::Value(kv)], vhead, &[BlockArg::Value(vend)]);

        g.b.switch_to_block(head);
        let inside = g.b.ins().icmp(IntCC::SignedLessThan, k, limit);
        let test = g.b.create_block();
        g.b.ins().brif(inside, test, &[], fold, &[]);

        g.b.switch_to_block(test);
        let kb = g.b.ins().imul_imm_s(k, g.size);
        let flat = g.b.ins().iadd(r.rs, k);
        let v = self.value(g, r, W::Scalar, kb, flat, 0);
        let hit = self.is_extreme(g, W::Scalar, v, best);
        let k1 = g.b.ins().iadd_imm_s(k, 1);
        g.b.ins()
            .brif(hit, found, &[BlockArg::Value(k)], head, &[BlockArg::Value(k1)]);
    }

    /// Where the body's value `v` (at width `w`, as the body gives it) is the extreme `best` (of
    /// the accumulator's type): equal, or both NaN; integer and bool values widened to int64 first.
    fn is_extreme(&self, g: &mut Gen<'_, '_>, w: W, v: Value, best: Value) -> Value {
        if g.int_values().is_some() {
            let v = g.int_value(v);
            return g.b.ins().icmp(IntCC::Equal, v, best);
        }
        let v = g.typed_float(w, v);
        let eq = g.b.ins().fcmp(FloatCC::Equal, v, best);
        let v_nan = g.b.ins().fcmp(FloatCC::Unordered, v, v);
        let best_nan = g.b.ins().fcmp(FloatCC::Unordered, best, best);
        let both_nan = g.b.ins().band(v_nan, best_nan);
        g.b.ins().bor(eq, both_nan)
    }

    /// One loop: `count` items of width `w` per iteration while they fit before `jhi`.
    #[allow(clippy::too_many_arguments)]
    fn loop_(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        j_var: Variable,
        jhi: Value,
        count: i64,
        w: W,
        slots: &[Acc],
        compound: Option<&Compound>,
    ) {
        let width = if w == W::Vector { self.f.lanes } else { 1 };
        counted_loop(g, j_var, jhi, count * width, |g, j| {
            let jb = g.b.ins().imul_imm_s(j, g.size);
            let flat = g.b.ins().iadd(r.rs, j);
            if let Some(c) = compound {
                // the iteration's values, folded as one batch (each computed where the fold asks)
                c.update(g, w, count as usize, jb, &mut |g, p| {
                    self.value(g, r, w, jb, flat, p as i64 * width)
                });
                return;
            }
            let bools = |g: &Gen<'_, '_>| {
                g.typed.is_some_and(|t| {
                    self.roots
                        .iter()
                        .any(|&r| t.type_of(r) == kiln_ir::ElemType::Bool)
                })
            };
            if matches!(self.st.mode, Mode::Map) && w == W::Vector && g.packs_bools(count) && bools(g) {
                // every step's values first, then each output's steps stored together (a typed
                // kernel's bools packed: packed.rs)
                self.packed_iteration(g, r, jb, flat, count);
                return;
            }
            for p in 0..count {
                let off = p * width;
                self.item(g, r, w, j, jb, flat, off, (p, count), slots);
            }
        });
    }

    /// The bool inputs of a typed kernel that a row reads point by point where they lie (neither
    /// splat nor strided), with their row pointers: none in a kernel of many inputs, whose rows
    /// keep no pointers (`ManyInputs`; its inputs are loaded as `input_value` finds them).
    fn bool_reads(&self, r: &Row) -> Vec<(usize, Value)> {
        (0..self.st.stored.len())
            .filter(|&i| {
                self.st.stored[i] == Some(kiln_ir::ElemType::Bool)
                    && self.f.contiguous_run(i)
                    && r.splats[i].is_none()
            })
            .filter_map(|i| Some((i, r.ptrs[i]?)))
            .collect()
    }

    /// The body's vector or scalar at row position `j + off` (`jb` the byte offset of `j`).
    fn value(&self, g: &mut Gen<'_, '_>, r: &Row, w: W, jb: Value, flat: Value, off: i64) -> Value {
        self.values(g, r, w, jb, flat, off)[0]
    }

    /// Every output's vector or scalar at row position `j + off` (see [`Frame::outputs`]).
    fn values(&self, g: &mut Gen<'_, '_>, r: &Row, w: W, jb: Value, flat: Value, off: i64) -> Vec<Value> {
        self.values_loaded(g, r, w, jb, flat, off, &[], &self.roots)
    }

    /// The values of `roots` as [`Skeleton::values`] gives the outputs', the inputs in `loaded`
    /// given their values there.
    #[allow(clippy::too_many_arguments)]
    fn values_loaded(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        w: W,
        jb: Value,
        flat: Value,
        off: i64,
        loaded: &[(usize, Value)],
        roots: &[kiln_ir::NodeId],
    ) -> Vec<Value> {
        let row_index = |a: usize| r.row_index[a];
        let flat_off = if off == 0 {
            flat
        } else {
            g.b.ins().iadd_imm_s(flat, off)
        };
        let size = g.size;
        self.f.values_of(
            g,
            w,
            &r.ptrs,
            r.many.as_ref(),
            &r.splats,
            &row_index,
            jb,
            off * size,
            flat_off,
            &r.staged,
            loaded,
            roots,
        )
    }

    /// One vector or scalar at row position `j + off`, item `p` of the loop's `count` an
    /// iteration: the vector accumulator `p % K` of a reduction of K where the loop runs at least
    /// K items an iteration, else the first (a loop of fewer is where that reduction alone would run
    /// one vector an iteration: see [`Acc`]).
    #[allow(clippy::too_many_arguments)]
    fn item(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        w: W,
        j: Value,
        jb: Value,
        flat: Value,
        off: i64,
        (p, count): (i64, i64),
        slots: &[Acc],
    ) {
        let vs = self.values(g, r, w, jb, flat, off);
        let size = g.size;
        match self.st.mode {
            Mode::Compound(_) => unreachable!("compound batches are folded in loop_"),
            Mode::Map | Mode::Scan { .. } => {
                // every output's value is computed (every input of these points loaded) before the
                // first store: an output may be an input updated in place (see call.rs)
                let rows = std::iter::once(r.out_row.expect("map rows have an output"))
                    .chain(r.extra_rows.iter().copied());
                for ((row, &v), &root) in rows.zip(&vs).zip(&self.roots) {
                    let addr = g.b.ins().iadd(row, jb);
                    g.store_value(root, v, addr, off * size);
                }
            }
            Mode::Trailing(_) | Mode::Siblings(_) => {
                // the further outputs of a reduction of every axis are maps, stored at their points
                // (after every value of the point is computed: see the map arm)
                for ((row, &x), &root) in r.extra_rows.iter().zip(&vs[1..]).zip(&self.roots[1..]) {
                    let addr = g.b.ins().iadd(*row, jb);
                    g.store_value(root, x, addr, off * size);
                }
                let ridx = r.rpos.map(|rpos| {
                    let pos = g.b.ins().iadd(rpos, j);
                    let pos = if off == 0 {
                        pos
                    } else {
                        g.b.ins().iadd_imm_s(pos, off)
                    };
                    let iota = self.iota.unwrap_or(pos);
                    g.index_lanes(w, pos, iota)
                });
                // each accumulator folds its own root's value (a trailing reduction's one: the body)
                for (acc, &v) in slots.iter().zip(&vs) {
                    let vars = match w {
                        W::Vector => {
                            let k = acc.vector.len() as i64;
                            &acc.vector[if count >= k { p % k } else { 0 } as usize]
                        }
                        W::Scalar => &acc.scalar,
                    };
                    let old: Vec<Value> = vars.iter().map(|&x| g.b.use_var(x)).collect();
                    let new = g.acc_update(acc.op, w, &old, v, ridx);
                    for (&x, y) in vars.iter().zip(new) {
                        g.b.def_var(x, y);
                    }
                }
            }
            Mode::Kept(_) | Mode::KeptSiblings(_) => {
                // each reduction's value into its output at the point (every value of the point
                // computed before the first store, as a map's)
                let o = g.b.ins().iadd(r.kept_row.expect("kept rows have an output"), j);
                let ridx = r.kept_ridx.map(|x| x[w as usize]);
                let ops = self.st.mode.kept_ops();
                for ((&op, &out), &v) in ops.iter().zip(&self.kept_outputs).zip(&vs) {
                    let acc = g.acc_load(op, w, out, self.f.out_idx, o, off);
                    let new = g.acc_update(op, w, &acc, v, ridx);
                    g.acc_store(op, out, self.f.out_idx, o, off, &new);
                }
            }
        }
    }
}

/// Enters a loop over stretches of `len` points from `j_var` (a row position): `(body, after,
/// last)`, the loop's body block, switched to (where at least `len` points remain before `jhi`),
/// the block after the loop (where not), and `last = jhi - len`, the last position a whole
/// stretch starts at. The caller ends the body with its branch back to `body` or on to `after`.
fn enter_stretches(
    g: &mut Gen<'_, '_>,
    j_var: Variable,
    jhi: Value,
    len: i64,
) -> (cranelift_codegen::ir::Block, cranelift_codegen::ir::Block, Value) {
    let body = g.b.create_block();
    let after = g.b.create_block();
    let last = g.b.ins().iadd_imm_s(jhi, -len);
    let j0 = g.b.use_var(j_var);
    let none = g.b.ins().icmp(IntCC::SignedGreaterThan, j0, last);
    g.b.ins().brif(none, after, &[], body, &[]);
    g.b.switch_to_block(body);
    (body, after, last)
}

/// Kept sums, several reduced rows per pass.
///
/// A kept reduction (column sums: `sum(x, axis=0)`) folds every segment (one reduced row) into the
/// same run of outputs. Row by row, every vector of x costs a load, an add and a store of the
/// output besides its own load: the output row is read and written once per input row. A kept sum
/// here adds [`ROW_GROUP`] rows first, `out += ((x[r] + x[r+1]) + (x[r+2] + x[r+3])) + ((x[r+4] +
/// ...))`, a balanced tree ([`Gen::acc_update_rows`]): one read-modify-write of the output per group.
///
/// The rows of a group are a band apart: in a block of `dim` rows (the last segment axis, in a kept
/// reduction always a reduced one, of c-stride 1 among the segments), `band = dim / ROW_GROUP`, and
/// row `i < band` heads the group of rows `i, i + band, ..., i + (ROW_GROUP - 1) * band`; the groups
/// run in order of `i`, then the last `dim % ROW_GROUP` rows are added one at a time. So each of the
/// group's [`ROW_GROUP`] row pointers walks its band of rows as one long sequential stream, which the
/// hardware prefetchers follow. Groups of adjacent rows (`x[r..r + 8]`, as before) made every pointer
/// a stream of one 8000-byte row, restarted at every group: column sums of 1e7 f64 (80 MB) ran at
/// 0.36-0.40 ns/elem against 0.28 for row sums; in bands they run at 0.28 (BENCHMARKS.md before 0b97b4d, issue 14,
/// "Column sums in bands").
///
/// Where the body is a plain read of an input (`sum(x, axis=0)`) and the host has a wide level, the
/// group's loop (and a row added alone) is a call of the row step at full width, compiled by rustc
/// (`wide/rows.rs`, [`Skeleton::wide_rows`]): the same additions in the same association, so the
/// same bits, 8 f64 lanes per instruction on AVX-512. A typed kernel's kept reductions of integer
/// or bool values step their rows into its int64 words (`wide/int_rows.rs`): exact operations, so
/// the inline words whatever the grouping.
///
/// The bands are fixed by the shape alone: a block is banded when the unit runs it whole (a kept
/// reduction's units are ranges of outputs that each run every segment, so always), else its rows
/// are added one at a time. So how every output is associated never depends on how a run is cut
/// into units (threads).
///
/// **Kept max, min, product, `any` and `all`** fold their rows in order, `out = f(...f(f(out,
/// x[r]), x[r+1]) ...)`, and so in groups of [`ROW_GROUP`] adjacent rows (`i % ROW_GROUP == 0`,
/// the rest of the block one at a time): the same operations in the same order, so every output's
/// bits as row by row, with one read-modify-write of the output per group instead of one per row
/// (the output's
/// loads and stores, not the rows' loads, bound a kept max: `max(m, axis=0)` of 1000 x 1000 f64
/// measured 0.27 ms row by row). Kept sibling reductions group as their components do: every
/// component a sum (bands), or every one a max, min, product, `any` or `all` (adjacent rows).
impl Skeleton<'_, '_> {
    /// Whether this kernel folds rows in groups: kept sums (in bands), or kept maxes, mins,
    /// products, `any`s and `all`s (adjacent rows), whose plan rows each hold whole segments (so a
    /// segment's points are one run of every row pointer) and whose row pointers live in
    /// registers.
    fn groups_rows(&self) -> bool {
        let ops = self.st.mode.kept_ops();
        let sums = ops.iter().all(|&op| op == ReduceOp::Sum);
        let in_order = ops.iter().all(|op| {
            matches!(
                op,
                ReduceOp::Max | ReduceOp::Min | ReduceOp::Prod | ReduceOp::Any | ReduceOp::All
            )
        });
        !ops.is_empty()
            && (sums || in_order)
            && self.st.seg_axes > 0
            && self.st.outer_axes <= self.st.seg_axes
            && self.f.row_slot.is_none()
    }

    /// `for s in seg_begin..seg_end`, the rows in groups, then the function's return. Kept sums:
    /// in a block of `dim` rows (the last segment axis) that the unit runs whole, the first `band =
    /// dim / ROW_GROUP` rows each head a group (rows `i, i + band, ..., i + (ROW_GROUP - 1) *
    /// band`), the rows the groups took are skipped, and the last `dim % ROW_GROUP` rows are added
    /// one by one; any other segment is added alone. Kept maxes, mins, products, `any`s and
    /// `all`s: each row `i` with `i % ROW_GROUP == 0` and `i + ROW_GROUP <= dim` heads the group
    /// of rows `i..i + ROW_GROUP` (`band` 1), and the rest are folded one by one: every row in
    /// order.
    fn grouped_segments(&self, g: &mut Gen<'_, '_>, cursor: Option<Cursor>) {
        let f = self.f;
        let adjacent = !self.st.mode.kept_ops().contains(&ReduceOp::Sum);
        let ge = IntCC::SignedGreaterThanOrEqual;
        let le = IntCC::SignedLessThanOrEqual;
        let s_var = g.b.declare_var(types::I64);
        g.b.def_var(s_var, f.seg_begin);
        let head = g.b.create_block();
        let grouped = g.b.create_block();
        let single = g.b.create_block();
        let next = g.b.create_block();
        let exit = g.b.create_block();
        let [dim, ..] = self.seg[self.st.seg_axes - 1];
        let band = match adjacent {
            true => g.b.ins().iconst(types::I64, 1),
            false => g.b.ins().ushr_imm_u(dim, i64::from(ROW_GROUP.trailing_zeros())),
        };
        let none = g.b.ins().icmp(ge, f.seg_begin, f.seg_end);
        g.b.ins().brif(none, exit, &[], head, &[]);

        g.b.switch_to_block(head);
        let s = g.b.use_var(s_var);
        // the row's index along the last segment axis (s itself when that is the only one)
        let i = match cursor {
            Some(c) => g.b.use_var(c.i),
            None => s,
        };
        let ok = if adjacent {
            // a whole group of rows in order within the block and the unit
            let aligned = g.b.ins().band_imm_s(i, ROW_GROUP - 1);
            let aligned = g.b.ins().icmp_imm_s(IntCC::Equal, aligned, 0);
            let end = g.b.ins().iadd_imm_s(i, ROW_GROUP);
            let fits = g.b.ins().icmp(le, end, dim);
            let s_end = g.b.ins().iadd_imm_s(s, ROW_GROUP);
            let in_unit = g.b.ins().icmp(le, s_end, f.seg_end);
            let ok = g.b.ins().band(aligned, fits);
            g.b.ins().band(ok, in_unit)
        } else {
            // a head of the block's bands, the block whole in the unit
            let block = g.b.ins().isub(s, i);
            let block_end = g.b.ins().iadd(block, dim);
            let whole = g.b.ins().icmp(ge, block, f.seg_begin);
            let whole_end = g.b.ins().icmp(le, block_end, f.seg_end);
            let heads = g.b.ins().icmp(IntCC::SignedLessThan, i, band);
            let ok = g.b.ins().band(whole, whole_end);
            g.b.ins().band(ok, heads)
        };
        g.b.ins().brif(ok, grouped, &[], single, &[]);

        g.b.switch_to_block(grouped);
        self.group(g, s, band, cursor);
        let s_next = if adjacent {
            g.b.ins().iadd_imm_s(s, ROW_GROUP)
        } else {
            // after the last head, past the rows its groups took
            let s_next = g.b.ins().iadd_imm_s(s, 1);
            let i_next = g.b.ins().iadd_imm_s(i, 1);
            let last = g.b.ins().icmp(IntCC::Equal, i_next, band);
            let taken = g.b.ins().imul_imm_s(band, ROW_GROUP - 1);
            let past = g.b.ins().iadd(s_next, taken);
            g.b.ins().select(last, past, s_next)
        };
        g.b.def_var(s_var, s_next);
        if let Some(c) = cursor {
            // at most `dim` rows on (`1 + (ROW_GROUP - 1) * band`, or `ROW_GROUP` with `i +
            // ROW_GROUP <= dim`): at most one wrap
            let by = g.b.ins().isub(s_next, s);
            self.advance(g, c, by);
        }
        g.b.ins().jump(next, &[]);

        g.b.switch_to_block(single);
        self.segment(g, s, cursor);
        let s_next = g.b.ins().iadd_imm_s(s, 1);
        g.b.def_var(s_var, s_next);
        if let Some(c) = cursor {
            let one = g.b.ins().iconst(types::I64, 1);
            self.advance(g, c, one);
        }
        g.b.ins().jump(next, &[]);

        g.b.switch_to_block(next);
        let s = g.b.use_var(s_var);
        let done = g.b.ins().icmp(ge, s, f.seg_end);
        g.b.ins().brif(done, exit, &[], head, &[]);

        g.b.switch_to_block(exit);
        g.b.ins().return_(&[]);
    }

    /// The group headed by segment `s`: segments `s, s + band, ..., s + (ROW_GROUP - 1) * band` (one
    /// output run: they differ only along a reduced axis; `band` 1 for adjacent rows) over `[lo,
    /// hi)`, each row read from its segment's first point.
    fn group(&self, g: &mut Gen<'_, '_>, s: Value, band: Value, cursor: Option<Cursor>) {
        let size = g.size;
        let s0 = g.b.ins().imul(s, self.seg_len);
        let (o_base, r_base) = self.locate(g, s, s0, cursor);
        let hi = g.b.ins().smin(self.f.hi, self.seg_len);
        let band_len = g.b.ins().imul(band, self.seg_len);
        let rows: Vec<Row> = (0..ROW_GROUP)
            .map(|m| {
                let step = g.b.ins().imul_imm_s(band_len, m);
                let sm = g.b.ins().iadd(s0, step);
                let band_m = g.b.ins().imul_imm_s(band, m);
                let sm_index = g.b.ins().iadd(s, band_m);
                let row = self.row_of(g, sm_index, sm);
                let rs = g.b.ins().imul(row, self.row_len);
                let r = self.row_state(g, row, rs, sm, o_base, r_base, None);
                // the segment starts `sm - rs` points into its plan row (`stride` elements apart in a
                // strided row)
                let d = g.b.ins().isub(sm, rs);
                let ptrs = (0..r.ptrs.len())
                    .map(|i| {
                        r.ptrs[i].map(|p| {
                            let d = match self.f.row_stride(g, i) {
                                Some(stride) => g.b.ins().imul(d, stride),
                                None => d,
                            };
                            let db = g.b.ins().imul_imm_s(d, size);
                            g.b.ins().iadd(p, db)
                        })
                    })
                    .collect();
                Row {
                    rs: sm,
                    ptrs,
                    kept_row: Some(o_base),
                    ..r
                }
            })
            .collect();
        let inline = |g: &mut Gen<'_, '_>| {
            let j_var = g.b.declare_var(types::I64);
            g.b.def_var(j_var, self.f.lo);
            if self.f.vector {
                let sched = self.f.key.schedule;
                let per_iter = sched.unroll.max(sched.accumulators) as i64;
                self.group_loop(g, &rows, j_var, hi, per_iter, W::Vector);
                if per_iter > 1 {
                    self.group_loop(g, &rows, j_var, hi, 1, W::Vector);
                }
            }
            self.group_loop(g, &rows, j_var, hi, 1, W::Scalar);
        };
        let group_of = |i: usize| rows.iter().map(|r| r.ptrs[i]).collect::<Option<Vec<Value>>>();
        match self.kept_row_steps(|i, [group, _]| Some((group, group_of(i)?))) {
            Some(steps) => self.wide_rows(g, self.f.lo, hi, &steps, o_base, inline),
            None => inline(g),
        }
    }

    /// A kept sum's rows (or a kept max's or min's row, or each component's of kept sibling
    /// extremes) over columns `[jlo, jhi)` by the row steps at full width `steps` (`wide`,
    /// `rows.rs`: the group of [`ROW_GROUP`] rows, or one), one call each, where the run has at
    /// least [`WIDE_ROW_MIN`] columns and (a float kernel's sum of f64) the block at most
    /// [`WIDE_ROW_MAX_BYTES`], else by `inline`. Each step's output of column `j` is at `out + (o +
    /// j) * b` (`b` the accumulator's bytes: 8 for a sum's f64 and a typed kernel's int64 words,
    /// the data's for a max or min). The steps give the inline loop's bits, so the choice never
    /// shows in a result.
    fn wide_rows(
        &self,
        g: &mut Gen<'_, '_>,
        jlo: Value,
        jhi: Value,
        steps: &[RowStep],
        o: Value,
        inline: impl FnOnce(&mut Gen<'_, '_>),
    ) {
        let row = RowCall::new(g, jlo, jhi, WIDE_ROW_MIN);
        // (a kept max or min is bound by its compares, not by memory: any block)
        let sum = steps.iter().any(|s| s.op == ReduceOp::Sum);
        // (a typed kernel's integer sum too: its inline loop widens its values to int64 lanes)
        let wide = if g.dtype == kiln_ir::ElemType::F64 && sum && g.int_values().is_none() {
            // the block's bytes: its rows (the last segment axis) of `seg_len` points
            let dim = match self.seg.last() {
                Some(&[dim, ..]) => dim,
                None => g.b.ins().iconst(types::I64, 1),
            };
            let points = g.b.ins().imul(dim, self.seg_len);
            let bytes = g.b.ins().imul_imm_s(points, g.size);
            let max = WIDE_ROW_MAX_BYTES;
            let fits = g.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, bytes, max);
            g.b.ins().band(row.long, fits)
        } else {
            row.long
        };
        g.b.ins().brif(wide, row.called, &[], row.short, &[]);

        g.b.switch_to_block(row.called);
        let oj = g.b.ins().iadd(o, jlo);
        for s in steps {
            // (each row's elements at their own addresses: a stored input's shifted back)
            let mut args: Vec<Value> = s.rows.iter().map(|&x| self.run_at(g, s.input, x, jlo)).collect();
            // (a kept sum's outputs are f64 accumulators, a max's or min's of the data's type; a
            // typed kernel's integer accumulators int64 words)
            let ab = match g.int_values() {
                Some(_) => 8,
                None => crate::reduce::acc_bytes(s.op, g.dtype),
            };
            args.push(g.elem_addr(s.out, oj, ab));
            args.push(row.len);
            g.b.ins().call(s.step, &args);
        }
        g.b.ins().jump(row.done, &[]);

        row.inline_and_join(g, inline);
    }

    /// A row `[jlo, jhi)` of trailing reductions that each fold it at full width (`folds`: one
    /// reduction's, or every component's of sibling reductions, each with its rows' pointers,
    /// the same twice where it reads one; `slots` their accumulators): where the row holds at
    /// least [`WIDE_EXTREME_MIN`] points ([`WIDE_SUM_MIN`] where a sum is among them), one call
    /// each, else by `inline`, the inline loop of them all.
    ///
    /// - **A max or min** (wide/extremes.rs): the run's extreme is merged into the scalar
    ///   accumulator as one value. A nonzero number is the only value with its bits among the
    ///   values equal to it, so the fold's extreme is the one the inline lanes keep; merged as one
    ///   value it changes no tie the inline path breaks (every other value of the row is beyond
    ///   it or, for a max, below it). A NaN extreme is where the lanes' order shows (which NaN's
    ///   payload), and so is a zero where the row holds zeros of both signs (which zero: the
    ///   row's fold gives a NaN there, `wide::row_extreme`) or where the segment is several rows
    ///   (another row's lanes may hold the other zero). A zero of one sign only, in a segment of
    ///   one row, is every order's result. Integer values have no such cases. A bool's `any` and
    ///   `all` are its max and min (an int32's or a bool's extreme comes back held in int64).
    /// - **A sum** (wide/sums.rs): the call takes the accumulators (the vector ones'
    ///   [`crate::wide::PARTS`] f64 lanes in order, then the scalar one) in its stack slot and adds
    ///   the row into them as the inline loop partitions it, so the accumulators it hands back are
    ///   that loop's bits. Where one holds a NaN, its payload depends on the order of an
    ///   addition's operands, which the fold does not fix.
    ///
    /// Where any call's result is such a case, the row is folded again by `inline`, for every
    /// reduction, from the accumulators before the calls (nothing is merged until every call is
    /// back), as on a host without the wide code. So every route gives the same bits, as the
    /// reproducible profile promises.
    fn wide_folds(
        &self,
        g: &mut Gen<'_, '_>,
        jlo: Value,
        jhi: Value,
        folds: &[(ComponentFold, [Value; 2])],
        slots: &[Acc],
        inline: impl FnOnce(&mut Gen<'_, '_>),
    ) {
        let sums = folds.iter().any(|(f, _)| matches!(f, ComponentFold::Sum { .. }));
        let min = if sums { WIDE_SUM_MIN } else { WIDE_EXTREME_MIN };
        let row = RowCall::new(g, jlo, jhi, min);
        g.b.ins().brif(row.long, row.called, &[], row.short, &[]);

        g.b.switch_to_block(row.called);
        let jb = g.b.ins().imul_imm_s(jlo, g.size);
        let mut again = g.b.ins().iconst(types::I8, 0);
        // each call's result, merged once every call is back: an extreme, or the partials'
        // variables and where the call left them
        enum Called {
            Extreme(Value),
            IntSum(Value),
            Sum(Vec<Variable>, Value),
        }
        let mut results = Vec::with_capacity(folds.len());
        for ((fold, [x, y]), acc) in folds.iter().zip(slots) {
            match *fold {
                ComponentFold::Extreme { fold, i } => {
                    let x = self.run_at(g, i, *x, jlo);
                    let call = g.b.ins().call(fold, &[x, row.len]);
                    let partial = g.b.inst_results(call)[0];
                    if g.int_values().is_none() {
                        let zero = match g.dtype {
                            kiln_ir::ElemType::F32 => g.b.ins().f32const(0.0),
                            _ => g.b.ins().f64const(0.0),
                        };
                        // a NaN (the row holds one, or a zero extreme and zeros of both signs:
                        // `wide::row_extreme`) is folded again inline; so is a zero where the
                        // segment is more rows than this one, whose lanes may hold the other zero
                        let cc = if self.st.segments_in_one_row() {
                            FloatCC::Unordered
                        } else {
                            FloatCC::UnorderedOrEqual
                        };
                        let odd = g.b.ins().fcmp(cc, partial, zero);
                        again = g.b.ins().bor(again, odd);
                    }
                    results.push((acc, Called::Extreme(partial)));
                }
                ComponentFold::IntSum { fold, i } => {
                    let x = self.run_at(g, i, *x, jlo);
                    let call = g.b.ins().call(fold, &[x, row.len]);
                    results.push((acc, Called::IntSum(g.b.inst_results(call)[0])));
                }
                ComponentFold::Sum { fold, slot, .. } => {
                    // the partials in the inline partition's order: accumulator p's halves
                    let parts: Vec<Variable> = acc.vector.iter().flatten().copied().collect();
                    debug_assert_eq!(parts.len() * 2, crate::wide::PARTS);
                    let at = g.b.ins().stack_addr(types::I64, slot, 0);
                    for (k, &var) in parts.iter().enumerate() {
                        let v = g.b.use_var(var);
                        g.b.ins().store(mem(), v, at, 16 * k as i32);
                    }
                    let t = g.b.use_var(acc.scalar[0]);
                    g.b.ins().store(mem(), t, at, 8 * crate::wide::PARTS as i32);
                    let x = g.b.ins().iadd(*x, jb);
                    let y = g.b.ins().iadd(*y, jb);
                    let call = g.b.ins().call(fold, &[x, y, row.len, at]);
                    let nan = g.b.inst_results(call)[0];
                    again = g.b.ins().bor(again, nan);
                    results.push((acc, Called::Sum(parts, at)));
                }
            }
        }
        let merge = g.b.create_block();
        g.b.ins().brif(again, row.short, &[], merge, &[]);

        g.b.switch_to_block(merge);
        for (acc, result) in results {
            match result {
                Called::Extreme(partial) => {
                    // (an integer's extreme or a bool's truth comes back held in int64: in the
                    // value's own scalar type again, a bool's 0 / 1)
                    let own = g.int_values().map(crate::lower::values::scalar_type);
                    let partial = match own {
                        Some(t) if t != g.b.func.dfg.value_type(partial) => g.b.ins().ireduce(t, partial),
                        _ => partial,
                    };
                    let state: Vec<Value> = acc.scalar.iter().map(|&v| g.b.use_var(v)).collect();
                    let merged = g.acc_update(acc.op, W::Scalar, &state, partial, None);
                    for (&var, v) in acc.scalar.iter().zip(merged) {
                        g.b.def_var(var, v);
                    }
                }
                Called::IntSum(partial) => {
                    // the row's int64 sum added into the int64 accumulator (a partial, not a
                    // value to widen: a bool's count is not 0 / 1)
                    let state: Vec<Value> = acc.scalar.iter().map(|&v| g.b.use_var(v)).collect();
                    let merged = g.int_acc_merge_scalar(acc.op, &state, &[partial]);
                    for (&var, v) in acc.scalar.iter().zip(merged) {
                        g.b.def_var(var, v);
                    }
                }
                Called::Sum(parts, at) => {
                    for (k, &var) in parts.iter().enumerate() {
                        let v = g.b.ins().load(types::F64X2, mem(), at, 16 * k as i32);
                        g.b.def_var(var, v);
                    }
                    let t =
                        g.b.ins()
                            .load(types::F64, mem(), at, 8 * crate::wide::PARTS as i32);
                    g.b.def_var(acc.scalar[0], t);
                }
            }
        }
        g.b.ins().jump(row.done, &[]);

        row.inline_and_join(g, inline);
    }

    /// Each component's row step of a kept reduction at full width ([`Skeleton::kept_steps`]),
    /// the step and its rows' pointers picked by `pick` from the component's input and its
    /// `[group, single]` steps; None unless every component has one.
    fn kept_row_steps(
        &self,
        pick: impl Fn(usize, [FuncRef; 2]) -> Option<(FuncRef, Vec<Value>)>,
    ) -> Option<Vec<RowStep>> {
        let steps = self.kept_steps.as_ref()?;
        steps
            .iter()
            .zip(self.st.mode.kept_ops())
            .zip(&self.kept_outputs)
            .map(|((&(i, refs), &op), &out)| {
                let (step, rows) = pick(i, refs)?;
                Some(RowStep {
                    step,
                    rows,
                    input: i,
                    out,
                    op,
                })
            })
            .collect()
    }

    /// One loop over a group's rows: `count` items of width `w` per iteration, each the rows'
    /// values at one position folded into the output there (each component's into its own, kept
    /// sibling reductions).
    fn group_loop(&self, g: &mut Gen<'_, '_>, rows: &[Row], j_var: Variable, hi: Value, count: i64, w: W) {
        let width = if w == W::Vector { self.f.lanes } else { 1 };
        let size = g.size;
        let out_idx = self.f.out_idx;
        counted_loop(g, j_var, hi, count * width, |g, j| {
            let jb = g.b.ins().imul_imm_s(j, size);
            let o =
                g.b.ins()
                    .iadd(rows[0].kept_row.expect("grouped rows have an output"), j);
            for p in 0..count {
                let off = p * width;
                // each row's value of every component
                let vs: Vec<Vec<Value>> = rows
                    .iter()
                    .map(|r| {
                        let flat = g.b.ins().iadd(r.rs, j);
                        let flat = g.b.ins().iadd_imm_s(flat, off);
                        let row_index = |a: usize| r.row_index[a];
                        self.f.values_of(
                            g,
                            w,
                            &r.ptrs,
                            None,
                            &r.splats,
                            &row_index,
                            jb,
                            off * size,
                            flat,
                            &[],
                            &[],
                            &self.roots,
                        )
                    })
                    .collect();
                // a sum adds the rows' tree, a max, min, product, any or all folds them in order
                let ops = self.st.mode.kept_ops();
                for (c, (&op, &out)) in ops.iter().zip(&self.kept_outputs).enumerate() {
                    let acc = g.acc_load(op, w, out, out_idx, o, off);
                    let new = match op {
                        ReduceOp::Sum => {
                            let column: Vec<Value> = vs.iter().map(|v| v[c]).collect();
                            g.acc_update_rows(w, &acc, &column)
                        }
                        _ => vs.iter().fold(acc, |a, v| g.acc_update(op, w, &a, v[c], None)),
                    };
                    g.acc_store(op, out, out_idx, o, off, &new);
                }
            }
        });
    }
}
