//! The schedule: how a kernel's loops are shaped, independent of what they compute.
//!
//! `lanes` is 1 (scalar code only) or the 128-bit vector width of the dtype (F64X2 or F32X4: the only
//! vectors Cranelift 0.135 lowers on x86-64). `unroll` is how many independent vectors one iteration of
//! the hot loop handles; `accumulators` is how many independent vector accumulators a reduction keeps
//! (a reduction's hot loop handles `max(unroll, accumulators)` vectors per iteration, vector `p` going
//! to accumulator `p % accumulators`). `wide` asks for the host's full vector width where it has
//! it: the math functions on blocks (see `wide` and `skeleton/block.rs`), and the folds of plain
//! reads (kept sums, maxima and minima, trailing extremes, trailing f32 sums: `wide/rows.rs`,
//! `wide/extremes.rs`, `wide/sums.rs`). The schedule is part of the kernel cache key.

use kiln_ir::{ElemType, KernelIR, KernelKind};

/// Above this many inputs a kernel is compiled for compile time: input and row pointers are not
/// held in registers across the loops (each is loaded where it is read, see `skeleton.rs`) and the
/// default schedule handles one vector per iteration, so no copy of the body reuses another's
/// loaded pointers. Otherwise thousands of values live across the inner loop, every one spilled,
/// and regalloc2's allocation of spilled bundles grows quadratically with their number (a sum of
/// 3000 inputs took 6.4 s to compile). Below it the code is as it always was.
pub const MANY_INPUTS: usize = 64;

/// Loop shape of a compiled kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Schedule {
    /// 1 for scalar code, or the vector width: 2 for f64 (F64X2), 4 for f32 (F32X4).
    pub lanes: u8,
    /// Independent vectors per iteration of the hot loop (at least 1).
    pub unroll: u8,
    /// Independent vector accumulators of a reduction (at least 1).
    pub accumulators: u8,
    /// The wide code where the host has a wide level (else, and after [`Schedule::normalised`] on
    /// such a host, false): the math functions by the wide routines on blocks, and the row steps
    /// and folds of plain reads (see the module doc); the same bits as the inline path.
    pub wide: bool,
}

impl Schedule {
    /// Plain scalar loops: one element per iteration, one accumulator.
    pub fn scalar() -> Schedule {
        Schedule {
            lanes: 1,
            unroll: 1,
            accumulators: 1,
            wide: false,
        }
    }

    /// Vector code for `dtype` with `unroll` vectors per iteration and `accumulators` accumulators,
    /// exp, log and trig at full width where the host has it.
    pub fn simd(dtype: ElemType, unroll: u8, accumulators: u8) -> Schedule {
        Schedule {
            lanes: Self::vector_lanes(dtype),
            unroll,
            accumulators,
            wide: true,
        }
    }

    /// This schedule with the wide routines (`true`, where the host has it) or inline.
    pub fn with_wide(self, wide: bool) -> Schedule {
        Schedule { wide, ..self }
    }

    /// The lanes of one 128-bit vector of `dtype` (one for a type as wide as the vector or wider: a
    /// kernel of a non-float dtype is refused later, by its validation, not here).
    pub fn vector_lanes(dtype: ElemType) -> u8 {
        (16 / dtype.size().clamp(1, 16)) as u8
    }

    /// The default choice: vectors, 4 per iteration for maps, 4 accumulators for reductions (the
    /// measured sweet spot on a Zen 3 core: see CRANELIFT.md), 8 for a min or max reduction (of any
    /// values: a typed kernel's dtype is that of its lanes), as many as keep 16 f64 partials for a
    /// sum of a plain read or of a square ([`Schedule::reduction_accumulators`]), and for sibling
    /// reductions the most any component keeps; one vector per iteration for kernels of
    /// more than `MANY_INPUTS` (64) inputs, whose body is a long run of loads.
    pub fn for_kernel(kernel: &KernelIR) -> Schedule {
        if kernel.inputs.len() > MANY_INPUTS {
            return Schedule::simd(kernel.dtype, 1, 1);
        }
        let lanes = Self::vector_lanes(kernel.dtype);
        let of = |op, body| Self::reduction_accumulators(lanes, op, &kernel.arena, body);
        match &kernel.kind {
            KernelKind::Map | KernelKind::Scan(_) => Schedule::simd(kernel.dtype, 4, 1),
            // min and max: a chain of a compare, a min / max and a blend an accumulator, longer
            // than a sum's add, so twice the accumulators keep the core busy
            KernelKind::Reduce {
                op: kiln_ir::ReduceOp::Min | kiln_ir::ReduceOp::Max,
                ..
            } => Schedule::simd(kernel.dtype, 1, 8),
            KernelKind::Reduce { op, .. } => Schedule::simd(kernel.dtype, 1, of(*op, kernel.body)),
            KernelKind::Compound { .. } => Schedule::simd(kernel.dtype, 1, 4),
            KernelKind::Siblings { ops, .. } => {
                let k = ops
                    .iter()
                    .zip(kernel.roots())
                    .map(|(&op, root)| of(op, root))
                    .max();
                Schedule::simd(kernel.dtype, 1, k.unwrap_or(4))
            }
        }
    }

    /// The vector accumulators a reduction `op` of `body` keeps by default in vectors of `lanes`
    /// lanes, alone or as a component of sibling reductions (each component its own: see
    /// skeleton.rs `Acc`): 16 f64 partials for a sum of a plain read or of the square of one
    /// ([`crate::wide::sum_accumulators`]: 8 `F64X2` of f64, 4 of f32, whose vectors are two
    /// halves each, the partition `wide/sums.rs` reproduces), so that the latency of the adds
    /// does not bind a sum of f64 (`sum(x)` of 1e6 float64: 0.105 -> 0.085 ns an element, `sum(x*x)`
    /// 0.119 -> 0.095; `sum(x*y)`, two inputs, measured slower so: its loads and eight
    /// accumulators outgrow the registers); 4 for any other.
    pub fn reduction_accumulators(
        lanes: u8,
        op: kiln_ir::ReduceOp,
        arena: &kiln_ir::ExprArena,
        body: kiln_ir::NodeId,
    ) -> u8 {
        use kiln_ir::{BinaryOp, Node};
        let input = |n: kiln_ir::NodeId| match *arena.node(n) {
            Node::Input(i) => Some(i),
            _ => None,
        };
        let one_input = match *arena.node(body) {
            Node::Input(_) => true,
            Node::Binary(BinaryOp::Mul, a, b) => input(a).is_some() && input(a) == input(b),
            _ => false,
        };
        if op == kiln_ir::ReduceOp::Sum && one_input && lanes > 1 {
            crate::wide::sum_accumulators(lanes)
        } else {
            4
        }
    }

    /// This schedule made valid for `dtype`: lanes either 1 or the vector width, counts at least 1,
    /// `wide` only where the host has a wide level ([`crate::wide::level`]).
    pub fn normalised(self, dtype: ElemType) -> Schedule {
        let lanes = if self.lanes <= 1 {
            1
        } else {
            Self::vector_lanes(dtype)
        };
        Schedule {
            lanes,
            unroll: self.unroll.max(1),
            accumulators: self.accumulators.max(1),
            wide: self.wide && crate::wide::level().is_some(),
        }
    }

    /// Whether the kernel uses vector code.
    pub fn is_vector(&self) -> bool {
        self.lanes > 1
    }
}
