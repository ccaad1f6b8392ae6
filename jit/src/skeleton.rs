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
//! Every loop is bottom-tested behind a guard (`if !(cond) goto exit; do { .. } while cond`): one
//! compare and branch per iteration, and every exit is the first target of its `brif`. That order
//! matters: Cranelift 0.135's elaborator (its LICM) walks the dominator tree in that order and keeps
//! a stack of the loops it is in, which a loop exit visited before the loop's body pops for good. With
//! top-tested loops whose exit came second, nothing was hoisted: splats were redone and row pointers
//! recomputed (`lea`) inside the hot loop. Now loop-invariant values (splats, row pointers, `jhi -
//! step`) are computed once in the loop's preheader, and loads and stores address `row_ptr + j * size`.

use crate::cache::KernelKey;
use crate::error::Result;
use crate::layout::{Access, Mode, Structure};
use crate::lower::{Gen, Leaves, ManyInputs, W, emit_body, mem};
use crate::math::{MathFn, MathRefs};
use crate::schedule::MANY_INPUTS;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, Function, InstBuilder, Signature, StackSlot, StackSlotData, StackSlotKind, Value, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext, Variable};
use cranelift_module::Module;
use kiln_ir::{Node, NodeId, ReduceOp};

/// The signature every kernel has (see the module doc).
pub fn signature<M: Module>(module: &M) -> Signature {
    let mut sig = Signature::new(module.isa().default_call_conv());
    for _ in 0..8 {
        sig.params.push(AbiParam::new(types::I64));
    }
    sig
}

/// Builds the body of `func` for `key`.
pub fn build<M: Module>(module: &mut M, func: &mut Function, key: &KernelKey) -> Result<()> {
    let st = &key.structure;
    let order = key.arena.reachable(key.body);
    let inline = MathFn::inline_vector_math(&key.arena, &order);
    let math = MathRefs::import(
        module,
        func,
        st.dtype,
        &MathFn::used_by(&key.arena, &order),
        inline,
    )?;
    let config = module.target_config();
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    {
        let mut g = Gen::new(&mut b, st.dtype, math);
        let sk = Skeleton::new(&mut g, key, entry, order);
        sk.emit(&mut g);
    }
    b.seal_all_blocks();
    b.finalize(config);
    Ok(())
}

struct Skeleton<'k> {
    key: &'k KernelKey,
    st: &'k Structure,
    order: Vec<NodeId>,
    vector: bool,
    lanes: i64,
    // function arguments
    /// The input pointers, loaded in the entry block; empty when they are [`Skeleton::row_slot`]'s.
    ins: Vec<Value>,
    /// The `ins` argument (the array of input pointers).
    ins_arg: Value,
    /// With more than [`MANY_INPUTS`] inputs: a stack slot for the row pointers, stored once per
    /// row and loaded where each is read, so no pointer lives across a loop (see [`MANY_INPUTS`]).
    row_slot: Option<StackSlot>,
    out_val: Value,
    out_idx: Value,
    seg_begin: Value,
    seg_end: Value,
    lo: Value,
    hi: Value,
    // parameters loaded in the entry block
    row_len: Value,
    seg_len: Value,
    n: Value,
    part: Value,
    outer: Vec<(Value, Value)>,
    strides: Vec<Vec<Value>>,
    seg: Vec<[Value; 4]>,
    axis: Vec<(Value, Value)>,
    // hoisted leaves
    splats: Vec<Option<[Value; 2]>>,
    literals: Vec<Option<[Value; 2]>>,
    iota: Option<Value>,
}

/// Per-row state of the inner loop.
struct Row {
    rs: Value,
    ptrs: Vec<Option<Value>>,
    /// Where the row pointers are, for kernels of more than [`MANY_INPUTS`] inputs.
    many: Option<ManyInputs>,
    splats: Vec<Option<[Value; 2]>>,
    row_index: Vec<Option<[Value; 2]>>,
    out_row: Option<Value>,
    /// Output element of the row's first point (kept reductions): `o_base + rs - s0`.
    kept_row: Option<Value>,
    /// Reduction index of the row's first point (trailing arg reductions): `r_base + rs - s0`.
    rpos: Option<Value>,
    /// The index vector of a kept arg reduction's segment (`r_base` per width).
    kept_ridx: Option<[Value; 2]>,
}

impl<'k> Skeleton<'k> {
    fn new(g: &mut Gen<'_, '_>, key: &'k KernelKey, entry: Block, order: Vec<NodeId>) -> Self {
        let st = &key.structure;
        let args = g.b.block_params(entry).to_vec();
        let params = args[3];
        let ld = |g: &mut Gen<'_, '_>, i: usize| g.b.ins().load(types::I64, mem(), params, (8 * i) as i32);
        let row_len = ld(g, Structure::ROW_LEN);
        let seg_len = ld(g, Structure::SEG_LEN);
        let n = ld(g, Structure::N);
        let part = ld(g, Structure::PART);
        let k = st.outer_axes;
        let outer = (0..k)
            .map(|a| (ld(g, st.p_outer(a)), ld(g, st.p_outer(a) + 1)))
            .collect();
        let strides = (0..st.inputs.len())
            .map(|i| match st.inputs[i] {
                Access::RowRun | Access::RowSplat => (0..k).map(|a| ld(g, st.p_stride(i, a))).collect(),
                _ => Vec::new(),
            })
            .collect();
        let seg = (0..st.seg_axes)
            .map(|bx| {
                let p = st.p_seg(bx);
                [ld(g, p), ld(g, p + 1), ld(g, p + 2), ld(g, p + 3)]
            })
            .collect();
        let axis = (0..st.rank)
            .map(|a| (ld(g, st.p_axis(a)), ld(g, st.p_axis(a) + 1)))
            .collect();
        let many = st.inputs.len() > MANY_INPUTS;
        let row_slot = many.then(|| {
            let bytes = u32::try_from(8 * st.inputs.len()).expect("input count checked by the planner");
            g.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 3))
        });
        let ins: Vec<Value> = if many {
            Vec::new()
        } else {
            (0..st.inputs.len())
                .map(|i| g.b.ins().load(types::I64, mem(), args[0], (8 * i) as i32))
                .collect()
        };
        let splats = (0..st.inputs.len())
            .map(|i| {
                (st.inputs[i] == Access::Splat).then(|| {
                    let p = match ins.get(i) {
                        Some(&p) => p,
                        None => g.b.ins().load(types::I64, mem(), args[0], (8 * i) as i32),
                    };
                    let s = g.load(W::Scalar, p, 0);
                    [s, g.splat(W::Vector, s)]
                })
            })
            .collect();
        let mut literals = vec![None; key.arena.len()];
        for &id in &order {
            if let Node::Literal(bits) = *key.arena.node(id) {
                let s = g.fconst(W::Scalar, f64::from_bits(bits));
                literals[id.index()] = Some([s, g.splat(W::Vector, s)]);
            }
        }
        let vector = key.schedule.is_vector();
        let iota = (vector && st.mode.reduce_op().is_some_and(|op| op.is_arg())).then(|| {
            let mut v = g.iconst(W::Vector, 0);
            for lane in 1..g.lanes {
                let x = g.b.ins().iconst(g.it, lane as i64);
                v = g.b.ins().insertlane(v, x, lane);
            }
            v
        });
        Skeleton {
            key,
            st,
            order,
            vector,
            lanes: g.lanes as i64,
            ins,
            ins_arg: args[0],
            row_slot,
            out_val: args[1],
            out_idx: args[2],
            seg_begin: args[4],
            seg_end: args[5],
            lo: args[6],
            hi: args[7],
            row_len,
            seg_len,
            n,
            part,
            outer,
            strides,
            seg,
            axis,
            splats,
            literals,
            iota,
        }
    }

    fn emit(&self, g: &mut Gen<'_, '_>) {
        let s_var = g.b.declare_var(types::I64);
        g.b.def_var(s_var, self.seg_begin);
        let seg_body = g.b.create_block();
        let exit = g.b.create_block();
        let ge = IntCC::SignedGreaterThanOrEqual;
        let none = g.b.ins().icmp(ge, self.seg_begin, self.seg_end);
        g.b.ins().brif(none, exit, &[], seg_body, &[]);

        g.b.switch_to_block(seg_body);
        let s = g.b.use_var(s_var);
        self.segment(g, s);
        let s_next = g.b.ins().iadd_imm_s(s, 1);
        g.b.def_var(s_var, s_next);
        let done = g.b.ins().icmp(ge, s_next, self.seg_end);
        g.b.ins().brif(done, exit, &[], seg_body, &[]);

        g.b.switch_to_block(exit);
        g.b.ins().return_(&[]);
    }

    /// The accumulator slots: K vectors (if vector code) and one scalar, as variables.
    fn new_slots(&self, g: &mut Gen<'_, '_>, op: ReduceOp) -> (Vec<Vec<Variable>>, Vec<Variable>) {
        let mut vec_slots = Vec::new();
        if self.vector {
            for _ in 0..self.key.schedule.accumulators {
                let init = g.acc_identity(op, W::Vector);
                vec_slots.push(self.vars(g, op, W::Vector, &init));
            }
        }
        let init = g.acc_identity(op, W::Scalar);
        let scalar = self.vars(g, op, W::Scalar, &init);
        (vec_slots, scalar)
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

    fn segment(&self, g: &mut Gen<'_, '_>, s: Value) {
        let s0 = g.b.ins().imul(s, self.seg_len);
        let f0 = g.b.ins().iadd(s0, self.lo);
        let f1 = g.b.ins().iadd(s0, self.hi);
        let f1 = g.b.ins().smin(f1, self.n);
        let op = self.st.mode.reduce_op();
        let zero = g.b.ins().iconst(types::I64, 0);
        let (mut o_base, mut r_base) = (zero, zero);
        if matches!(self.st.mode, Mode::Trailing(_)) && self.st.seg_axes == 0 {
            // a whole-array reduction: chunk s folds into slot s * part; flat index = reduction index
            o_base = g.b.ins().imul(s, self.part);
            r_base = s0;
        } else if op.is_some() {
            for &[dim, segcs, ostr, rstr] in &self.seg {
                let q = g.b.ins().udiv(s, segcs);
                let i = g.b.ins().urem(q, dim);
                let o = g.b.ins().imul(i, ostr);
                o_base = g.b.ins().iadd(o_base, o);
                let r = g.b.ins().imul(i, rstr);
                r_base = g.b.ins().iadd(r_base, r);
            }
        }
        let slots = match self.st.mode {
            Mode::Trailing(op) => Some(self.new_slots(g, op)),
            _ => None,
        };
        let kept_ridx = match self.st.mode {
            Mode::Kept(op) if op.is_arg() => {
                let s = g.index_lanes(W::Scalar, r_base, zero);
                Some([s, g.splat(W::Vector, s)])
            }
            _ => None,
        };

        let row_var = g.b.declare_var(types::I64);
        let row0 = g.b.ins().udiv(f0, self.row_len);
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
        self.inner(g, &r, jlo, jhi, slots.as_ref());
        let row_next = g.b.ins().iadd_imm_s(row, 1);
        g.b.def_var(row_var, row_next);
        let rs_next = g.b.ins().iadd(rs, self.row_len);
        let done = g.b.ins().icmp(IntCC::SignedGreaterThanOrEqual, rs_next, f1);
        g.b.ins().brif(done, seg_done, &[], row_body, &[]);

        g.b.switch_to_block(seg_done);
        if let (Mode::Trailing(op), Some((vec_slots, scalar))) = (self.st.mode, &slots) {
            let vs: Vec<Vec<Value>> = vec_slots
                .iter()
                .map(|slot| slot.iter().map(|&v| g.b.use_var(v)).collect())
                .collect();
            let tail: Vec<Value> = scalar.iter().map(|&v| g.b.use_var(v)).collect();
            let partial = g.acc_fold(op, &vs, tail);
            let state = g.acc_load(op, W::Scalar, self.out_val, self.out_idx, o_base, 0);
            let merged = g.acc_merge_scalar(op, &state, &partial);
            g.acc_store(op, W::Scalar, self.out_val, self.out_idx, o_base, 0, &merged);
        }
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
        let index_axes = self.key.arena.index_axes(self.key.body);
        let needs_outer = st
            .inputs
            .iter()
            .any(|a| matches!(a, Access::RowRun | Access::RowSplat))
            || index_axes.iter().any(|&a| a < k);
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
        let mut splats = self.splats.clone();
        let mut many = self.row_slot.map(|slot| ManyInputs {
            ins: self.ins_arg,
            row_bytes: g.b.ins().imul_imm_s(rs, size),
            slot: g.b.ins().stack_addr(types::I64, slot, 0),
            in_slot: vec![false; st.inputs.len()],
        });
        for (i, &acc) in st.inputs.iter().enumerate() {
            if acc == Access::Splat || (acc == Access::Contiguous && many.is_some()) {
                // a contiguous input of many is read at `ins[i] + row_bytes` where it is used
                continue;
            }
            let base = match self.ins.get(i) {
                Some(&p) => p,
                None => g.b.ins().load(types::I64, mem(), self.ins_arg, (8 * i) as i32),
            };
            let row_off = |g: &mut Gen<'_, '_>| {
                let mut off = g.b.ins().iconst(types::I64, 0);
                for (a, &ix) in outer_idx.iter().enumerate() {
                    let t = g.b.ins().imul(ix, self.strides[i][a]);
                    off = g.b.ins().iadd(off, t);
                }
                g.elem_addr(base, off, size)
            };
            match acc {
                Access::Splat => {}
                Access::Contiguous => ptrs[i] = Some(g.elem_addr(base, rs, size)),
                Access::RowRun => ptrs[i] = Some(row_off(g)),
                Access::RowSplat => {
                    let addr = row_off(g);
                    let s = g.load(W::Scalar, addr, 0);
                    splats[i] = Some([s, g.splat(W::Vector, s)]);
                }
            }
        }
        if let Some(m) = &mut many {
            for (i, p) in ptrs.iter_mut().enumerate() {
                if let Some(v) = p.take() {
                    g.b.ins().store(mem(), v, m.slot, (8 * i) as i32);
                    m.in_slot[i] = true;
                }
            }
        }
        let row_index = (0..st.rank)
            .map(|a| {
                (a < k && index_axes.contains(&a)).then(|| {
                    let f = g.b.ins().fcvt_from_uint(types::F64, outer_idx[a]);
                    let s = if g.dtype == kiln_ir::DType::F32 {
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
            Mode::Map => (Some(g.elem_addr(self.out_val, rs, size)), None, None),
            Mode::Kept(_) => (None, Some(g.b.ins().iadd(o_base, rel)), None),
            Mode::Trailing(op) => (None, None, op.is_arg().then(|| g.b.ins().iadd(r_base, rel))),
        };
        Row {
            rs,
            ptrs,
            many,
            splats,
            row_index,
            out_row,
            kept_row,
            rpos,
            kept_ridx,
        }
    }

    /// The inner loop over `j` in `[jlo, jhi)` of one row.
    fn inner(
        &self,
        g: &mut Gen<'_, '_>,
        r: &Row,
        jlo: Value,
        jhi: Value,
        slots: Option<&(Vec<Vec<Variable>>, Vec<Variable>)>,
    ) {
        let j_var = g.b.declare_var(types::I64);
        g.b.def_var(j_var, jlo);
        let sched = self.key.schedule;
        if self.vector {
            // kept reductions update distinct outputs per vector: as many per iteration as a
            // trailing one folds, so column sums run as wide as row sums
            let per_iter = match self.st.mode {
                Mode::Trailing(_) | Mode::Kept(_) => sched.unroll.max(sched.accumulators) as i64,
                Mode::Map => sched.unroll as i64,
            };
            self.loop_(g, r, j_var, jhi, per_iter, W::Vector, slots);
            if per_iter > 1 {
                self.loop_(g, r, j_var, jhi, 1, W::Vector, slots);
            }
        }
        self.loop_(g, r, j_var, jhi, 1, W::Scalar, slots);
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
        slots: Option<&(Vec<Vec<Variable>>, Vec<Variable>)>,
    ) {
        let width = if w == W::Vector { self.lanes } else { 1 };
        let step = count * width;
        let body = g.b.create_block();
        let done = g.b.create_block();
        // a bottom-tested loop behind a guard: one compare and branch per iteration. `j + step <= jhi`
        // is `j <= last` with `last = jhi - step` computed once (no overflow: both are row positions).
        // Every loop exit is the branch's first target: Cranelift's elaborator (LICM) walks the
        // dominator tree in that order and must see a loop's blocks before the blocks after it.
        let last = g.b.ins().iadd_imm_s(jhi, -step);
        let j0 = g.b.use_var(j_var);
        let none = g.b.ins().icmp(IntCC::SignedGreaterThan, j0, last);
        g.b.ins().brif(none, done, &[], body, &[]);

        g.b.switch_to_block(body);
        let j = g.b.use_var(j_var);
        let jb = g.b.ins().imul_imm_s(j, g.size);
        let flat = g.b.ins().iadd(r.rs, j);
        for p in 0..count {
            let off = p * width;
            self.item(g, r, w, j, jb, flat, off, p, slots);
        }
        let j_next = g.b.ins().iadd_imm_s(j, step);
        g.b.def_var(j_var, j_next);
        let stop = g.b.ins().icmp(IntCC::SignedGreaterThan, j_next, last);
        g.b.ins().brif(stop, done, &[], body, &[]);
        g.b.switch_to_block(done);
    }

    /// One vector or scalar at row position `j + off`; `p` picks the accumulator.
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
        p: i64,
        slots: Option<&(Vec<Vec<Variable>>, Vec<Variable>)>,
    ) {
        let literals = |id: NodeId| self.literals[id.index()].expect("literal hoisted");
        let row_index = |a: usize| r.row_index[a];
        let leaves = Leaves {
            ptrs: &r.ptrs,
            many: r.many.as_ref(),
            splats: &r.splats,
            literals: &literals,
            row_index: &row_index,
            axis_params: &self.axis,
        };
        let flat_off = if off == 0 {
            flat
        } else {
            g.b.ins().iadd_imm_s(flat, off)
        };
        let mut scratch = vec![None; self.key.arena.len()];
        let size = g.size;
        let v = emit_body(
            g,
            w,
            &self.key.arena,
            &self.order,
            &leaves,
            jb,
            off * size,
            flat_off,
            &mut scratch,
        );
        match self.st.mode {
            Mode::Map => {
                let addr = g.b.ins().iadd(r.out_row.expect("map rows have an output"), jb);
                g.b.ins().store(mem(), v, addr, (off * size) as i32);
            }
            Mode::Trailing(op) => {
                let (vec_slots, scalar) = slots.expect("trailing reductions have slots");
                let vars = match w {
                    W::Vector => &vec_slots[p as usize % vec_slots.len()],
                    W::Scalar => scalar,
                };
                let acc: Vec<Value> = vars.iter().map(|&x| g.b.use_var(x)).collect();
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
                let new = g.acc_update(op, w, &acc, v, ridx);
                for (&x, y) in vars.iter().zip(new) {
                    g.b.def_var(x, y);
                }
            }
            Mode::Kept(op) => {
                let o = g.b.ins().iadd(r.kept_row.expect("kept rows have an output"), j);
                let acc = g.acc_load(op, w, self.out_val, self.out_idx, o, off);
                let ridx = r.kept_ridx.map(|x| x[w as usize]);
                let new = g.acc_update(op, w, &acc, v, ridx);
                g.acc_store(op, w, self.out_val, self.out_idx, o, off, &new);
            }
        }
    }
}
