//! The frame every kernel shares, whatever it computes (map, reduction or scan): the entry block's
//! input pointers, the splat inputs, literals and `Index` parameters hoisted once, the leaves the body
//! reads, and the one loop shape kiln emits.
//!
//! Every loop is bottom-tested behind a guard (`if !(cond) goto exit; do { .. } while cond`): one
//! compare and branch per iteration, and every exit is the first target of its `brif`. That order
//! matters: Cranelift 0.135's elaborator (its LICM) walks the dominator tree in that order and keeps
//! a stack of the loops it is in, which a loop exit visited before the loop's body pops for good. With
//! top-tested loops whose exit came second, nothing was hoisted: splats were redone and row pointers
//! recomputed (`lea`) inside the hot loop. Now loop-invariant values (splats, row pointers, `end -
//! step`) are computed once in the loop's preheader. [`counted_loop`] is that loop; the segment loop
//! of [`Frame::segments`] is the same shape.

use crate::clif::mem;
use crate::key::KernelKey;
use crate::layout::{Access, Mode, Structure};
use crate::lower::{Gen, Leaves, Literal, ManyInputs, RowStep, W, emit_body};
use crate::schedule::MANY_INPUTS;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, InstBuilder, StackSlot, StackSlotData, StackSlotKind, Value, types};
use cranelift_frontend::Variable;
use kiln_ir::{Node, NodeId};

/// The function's arguments (see the ABI in lib.rs), the parameters every kernel reads, and the
/// leaves hoisted into the entry block.
pub struct Frame<'k> {
    pub key: &'k KernelKey,
    pub st: &'k Structure,
    /// The body's nodes in evaluation order.
    pub order: Vec<NodeId>,
    /// Whether the schedule asks for vector code.
    pub vector: bool,
    /// Lanes of one vector of the dtype.
    pub lanes: i64,
    /// Input `i`'s base address, loaded in the entry block; empty for a map or reduction of more
    /// than [`MANY_INPUTS`] inputs, whose pointers are loaded where they are read (see
    /// [`Frame::input_base`] and [`Frame::row_slot`]).
    pub ins: Vec<Value>,
    /// The `ins` argument (the array of input pointers).
    pub ins_arg: Value,
    /// With more than [`MANY_INPUTS`] inputs: a stack slot for the row pointers, stored once per
    /// row and loaded where each is read, so no pointer lives across a loop (see [`MANY_INPUTS`]).
    pub row_slot: Option<StackSlot>,
    pub out_val: Value,
    pub out_idx: Value,
    pub params: Value,
    pub seg_begin: Value,
    pub seg_end: Value,
    pub lo: Value,
    pub hi: Value,
    /// `(dim, c-stride)` of every iteration axis an `Index` node reads (no other is loaded).
    pub axis: Vec<Option<(Value, Value)>>,
    /// Per input: its value per width, if the whole kernel reads one element of it.
    pub splats: Vec<Option<[Value; 2]>>,
    /// Per node: where its value is, if it is a literal.
    literals: Vec<Option<Literal>>,
    /// Per input: how a strided row ([`Access::RowStrided`]) steps, else None.
    row_steps: Vec<Option<RowStep>>,
}

/// The most literals a kernel keeps in registers across its loops; the rest are stored once into a
/// stack slot in the entry block and loaded where they are read. Every hoisted value is live across
/// the whole loop: a few thousand (a chain `x*c0 + x*c1 + ...` of distinct literals) made register
/// allocation superlinear (2,000 took 7 s to compile, 10,000 several minutes), and past the sixteen
/// vector registers the allocator spills them anyway.
pub const HOISTED_LITERALS: usize = 32;

impl<'k> Frame<'k> {
    /// Emits the entry block's loads and hoisted leaves (at the builder's current position).
    pub fn new(g: &mut Gen<'_, '_>, key: &'k KernelKey, entry: Block) -> Self {
        let st = &key.structure;
        let order = key.arena.reachable_all(&key.roots());
        let args = g.b.block_params(entry).to_vec();
        let params = args[3];
        g.ins_arg = Some(args[0]);
        let many = st.inputs.len() > MANY_INPUTS && !matches!(st.mode, Mode::Scan { .. });
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
        let splats = st
            .inputs
            .iter()
            .enumerate()
            .map(|(i, &acc)| {
                (acc == Access::Splat).then(|| {
                    let p = match ins.get(i) {
                        Some(&p) => p,
                        None => g.b.ins().load(types::I64, mem(), args[0], (8 * i) as i32),
                    };
                    let s = g.load_input(W::Scalar, i, p, 0, st.stored[i]);
                    [s, g.splat_input(s, st.stored[i])]
                })
            })
            .collect();
        let mut literals = vec![None; key.arena.len()];
        // a typed kernel reads a literal only through the cast that makes it a constant (lower.rs)
        let lits: Vec<(NodeId, u64)> = order
            .iter()
            .filter_map(|&id| match *key.arena.node(id) {
                Node::Literal(bits) if g.typed.is_none() => Some((id, bits)),
                _ => None,
            })
            .collect();
        let spilled = lits.len().saturating_sub(HOISTED_LITERALS);
        let slot = (spilled > 0).then(|| {
            let bytes =
                u32::try_from(spilled * g.size as usize).expect("a kernel's literals fit a stack slot");
            let slot =
                g.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 3));
            g.b.ins().stack_addr(types::I64, slot, 0)
        });
        for (k, &(id, bits)) in lits.iter().enumerate() {
            let s = g.fconst(W::Scalar, f64::from_bits(bits));
            literals[id.index()] = Some(match (k.checked_sub(HOISTED_LITERALS), slot) {
                (Some(j), Some(base)) => {
                    let offset =
                        i32::try_from(j as i64 * g.size).expect("a kernel's literals fit a stack slot");
                    g.b.ins().store(mem(), s, base, offset);
                    Literal::Slot(base, offset)
                }
                _ => Literal::Hoisted([s, g.splat(W::Vector, s)]),
            });
        }
        let mut frame = Frame {
            key,
            st,
            order,
            vector: key.schedule.is_vector(),
            lanes: g.lanes as i64,
            ins,
            ins_arg: args[0],
            row_slot,
            out_val: args[1],
            out_idx: args[2],
            params,
            seg_begin: args[4],
            seg_end: args[5],
            lo: args[6],
            hi: args[7],
            axis: Vec::new(),
            splats,
            literals,
            row_steps: Vec::new(),
        };
        // a run-time stride loaded once here, or (many inputs: no value lives across the loops)
        // where it is read
        frame.row_steps = (0..st.inputs.len())
            .map(|i| match st.inputs[i] {
                Access::RowStrided { reversed: true } => Some(RowStep::Reversed),
                Access::RowStrided { reversed: false } if many => Some(RowStep::Param(st.p_row_stride(i))),
                Access::RowStrided { reversed: false } => {
                    Some(RowStep::By(frame.param(g, st.p_row_stride(i))))
                }
                _ => None,
            })
            .collect();
        let index_axes = key.arena.index_axes_all(&key.roots());
        frame.axis = (0..st.rank)
            .map(|a| {
                index_axes
                    .contains(&a)
                    .then(|| (frame.param(g, st.p_axis(a)), frame.param(g, st.p_axis(a) + 1)))
            })
            .collect();
        frame
    }

    /// The element stride of input `i`'s strided row, as a value at the current position (None for
    /// any other access).
    pub fn row_stride(&self, g: &mut Gen<'_, '_>, i: usize) -> Option<Value> {
        self.row_steps[i].map(|step| step.elements(g, self.params))
    }

    /// Whether input `i` is read at its row pointer plus `j` elements for every row position `j`,
    /// in the kernel's own type: a contiguous run (neither splatted, strided nor stored in another
    /// type), which the wide routines may read where it lies (block.rs).
    pub fn contiguous_in_row(&self, i: usize) -> bool {
        self.contiguous_run(i) && self.st.stored[i].is_none()
    }

    /// Whether input `i` is read at its row pointer plus `j` elements for every row position `j`,
    /// in any type it is stored in (a complex input's in the code's terms, `run::stored_shift`).
    pub fn contiguous_run(&self, i: usize) -> bool {
        matches!(self.st.inputs[i], Access::Contiguous | Access::RowRun)
    }

    /// Input `i`'s base address: the entry block's load, or a load where it is needed for a kernel
    /// of many inputs.
    pub fn input_base(&self, g: &mut Gen<'_, '_>, i: usize) -> Value {
        match self.ins.get(i) {
            Some(&p) => p,
            None => g.b.ins().load(types::I64, mem(), self.ins_arg, (8 * i) as i32),
        }
    }

    /// Loads parameter `i` of the parameter block.
    pub fn param(&self, g: &mut Gen<'_, '_>, i: usize) -> Value {
        g.b.ins().load(types::I64, mem(), self.params, (8 * i) as i32)
    }

    /// The body at width `w` for the point(s) at flat position `flat`, whose inputs are read at
    /// `ptrs[i] + jb + off_bytes` (or are `splats[i]`), `Index` of an outer axis `a` being
    /// `row_index(a)` where given; a kernel of many inputs reads those `ptrs` leaves as None from
    /// `many`.
    #[allow(clippy::too_many_arguments)]
    pub fn body(
        &self,
        g: &mut Gen<'_, '_>,
        w: W,
        ptrs: &[Option<Value>],
        many: Option<&ManyInputs>,
        splats: &[Option<[Value; 2]>],
        row_index: &dyn Fn(usize) -> Option<[Value; 2]>,
        jb: Value,
        off_bytes: i64,
        flat: Value,
    ) -> Value {
        let roots = self.key.roots();
        self.values_of(
            g,
            w,
            ptrs,
            many,
            splats,
            row_index,
            jb,
            off_bytes,
            flat,
            &[],
            &[],
            &roots[..1],
        )[0]
    }

    /// The values of `roots` (nodes of the body) at the point(s) of [`Frame::body`], the nodes in
    /// `staged` read at their pointers (plus `jb + off_bytes`) instead of computed, the inputs in
    /// `loaded` given the values loaded for them beforehand (`Gen::spread_truths`): the nodes they
    /// reach emitted once, in one order, so every shared subexpression is computed once and every
    /// input of the point(s) is loaded before any output is stored (see call.rs). Given every
    /// output's root (`body`, then `extra`: [`KernelKey::roots`]), every output's value.
    #[allow(clippy::too_many_arguments)]
    pub fn values_of(
        &self,
        g: &mut Gen<'_, '_>,
        w: W,
        ptrs: &[Option<Value>],
        many: Option<&ManyInputs>,
        splats: &[Option<[Value; 2]>],
        row_index: &dyn Fn(usize) -> Option<[Value; 2]>,
        jb: Value,
        off_bytes: i64,
        flat: Value,
        staged: &[(NodeId, Value)],
        loaded: &[(usize, Value)],
        roots: &[NodeId],
    ) -> Vec<Value> {
        let literals = |id: NodeId| self.literals[id.index()].expect("literal placed");
        let leaves = Leaves {
            ptrs,
            many,
            splats,
            literals: &literals,
            row_index,
            axis_params: &self.axis,
            staged,
            row_steps: &self.row_steps,
            params: self.params,
            stored: &self.st.stored,
            loaded,
        };
        let mut scratch = vec![None; self.key.arena.len()];
        let order = self.order_of(roots, staged);
        emit_body(
            g,
            w,
            &self.key.arena,
            &order,
            &leaves,
            jb,
            off_bytes,
            flat,
            &mut scratch,
        );
        roots
            .iter()
            .map(|r| scratch[r.index()].expect("every root emitted"))
            .collect()
    }

    /// The nodes of [`Frame::order`] that `roots` reach without passing through a node of `staged`
    /// (which are leaves here), in that order.
    pub(crate) fn order_of(&self, roots: &[NodeId], staged: &[(NodeId, Value)]) -> Vec<NodeId> {
        if staged.is_empty() && roots == self.key.roots() {
            return self.order.clone();
        }
        let mut live = vec![false; self.key.arena.len()];
        for r in roots {
            live[r.index()] = true;
        }
        for &id in self.order.iter().rev() {
            if live[id.index()] && !staged.iter().any(|s| s.0 == id) {
                for op in self.key.arena.node(id).operands() {
                    live[op.index()] = true;
                }
            }
        }
        self.order.iter().copied().filter(|id| live[id.index()]).collect()
    }

    /// `for s in seg_begin..seg_end { f(s) }`, then the function's return.
    pub fn segments(&self, g: &mut Gen<'_, '_>, f: impl FnOnce(&mut Gen<'_, '_>, Value)) {
        let s_var = g.b.declare_var(types::I64);
        g.b.def_var(s_var, self.seg_begin);
        let body = g.b.create_block();
        let exit = g.b.create_block();
        let ge = IntCC::SignedGreaterThanOrEqual;
        let none = g.b.ins().icmp(ge, self.seg_begin, self.seg_end);
        g.b.ins().brif(none, exit, &[], body, &[]);

        g.b.switch_to_block(body);
        let s = g.b.use_var(s_var);
        f(g, s);
        let s_next = g.b.ins().iadd_imm_s(s, 1);
        g.b.def_var(s_var, s_next);
        let done = g.b.ins().icmp(ge, s_next, self.seg_end);
        g.b.ins().brif(done, exit, &[], body, &[]);

        g.b.switch_to_block(exit);
        g.b.ins().return_(&[]);
    }
}

/// `while x + step <= end { f(x); x += step }` over the variable `var` (left at the first position
/// not done): a bottom-tested loop behind a guard, `x + step <= end` tested as `x <= last` with
/// `last = end - step` computed once (no overflow: both are positions within the iteration space).
pub fn counted_loop(
    g: &mut Gen<'_, '_>,
    var: Variable,
    end: Value,
    step: i64,
    f: impl FnOnce(&mut Gen<'_, '_>, Value),
) {
    let body = g.b.create_block();
    let done = g.b.create_block();
    let last = g.b.ins().iadd_imm_s(end, -step);
    let x0 = g.b.use_var(var);
    let none = g.b.ins().icmp(IntCC::SignedGreaterThan, x0, last);
    g.b.ins().brif(none, done, &[], body, &[]);

    g.b.switch_to_block(body);
    let x = g.b.use_var(var);
    f(g, x);
    let next = g.b.ins().iadd_imm_s(x, step);
    g.b.def_var(var, next);
    let stop = g.b.ins().icmp(IntCC::SignedGreaterThan, next, last);
    g.b.ins().brif(stop, done, &[], body, &[]);
    g.b.switch_to_block(done);
}
