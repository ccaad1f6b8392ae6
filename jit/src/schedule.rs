//! The schedule: how a kernel's loops are shaped, independent of what they compute.
//!
//! `lanes` is 1 (scalar code only) or the 128-bit vector width of the dtype (F64X2 or F32X4: the only
//! vectors Cranelift 0.135 lowers on x86-64). `unroll` is how many independent vectors one iteration of
//! the hot loop handles; `accumulators` is how many independent vector accumulators a reduction keeps
//! (a reduction's hot loop handles `max(unroll, accumulators)` vectors per iteration, vector `p` going
//! to accumulator `p % accumulators`; the components of sibling reductions may keep fewer each:
//! `components`, skeleton.rs `Acc`). `wide` asks for the host's full vector width where it has
//! it: the math functions on blocks (see `wide` and `skeleton/block.rs`), and the folds of plain
//! reads (kept sums, maxima and minima, trailing extremes, trailing sums of 16 partials, moments:
//! `wide/rows.rs`, `wide/extremes.rs`, `wide/sums.rs`, `wide/moments.rs`). The schedule is part
//! of the kernel cache key.

use kiln_ir::{ElemType, KernelIR, KernelKind};

/// Above this many inputs a kernel is compiled for compile time: input and row pointers are not
/// held in registers across the loops (each is loaded where it is read, see `skeleton.rs`) and the
/// default schedule handles one vector per iteration, so no copy of the body reuses another's
/// loaded pointers. Otherwise thousands of values live across the inner loop, every one spilled,
/// and regalloc2's allocation of spilled bundles grows quadratically with their number (a sum of
/// 3000 inputs took 6.4 s to compile). Below it the code is as it always was.
pub const MANY_INPUTS: usize = 64;

/// The fewest points of a row over which a float sum of a plain read or a square keeps 16 f64
/// partials by default ([`Schedule::reduction_accumulators`]).
pub const LONG_SUM_ROW: usize = 1024;

/// The components of sibling reductions a schedule gives counts of ([`Schedule::components`]):
/// every one a sibling kernel may have (`layout::Parts::MAX`).
pub const COMPONENTS: usize = 8;

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
    /// The vector accumulators of each component of sibling reductions (at most `accumulators`),
    /// where [`Schedule::for_kernel`] gives each what it keeps alone by default
    /// ([`Schedule::reduction_accumulators`]), so that each gives the bits of its reduction alone
    /// under its own default schedule; all 0 (every schedule a caller makes): every component keeps
    /// `accumulators`, as every reduction alone does under it.
    pub components: [u8; COMPONENTS],
}

impl Schedule {
    /// Plain scalar loops: one element per iteration, one accumulator.
    pub fn scalar() -> Schedule {
        Schedule {
            lanes: 1,
            unroll: 1,
            accumulators: 1,
            wide: false,
            components: [0; COMPONENTS],
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
            components: [0; COMPONENTS],
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
    /// measured sweet spot on a Zen 3 core), 8 for a min or max and for a float64 sum of a plain
    /// read or a square over long rows ([`Schedule::reduction_accumulators`]), and for sibling
    /// reductions the most any component keeps, each component its own
    /// ([`Schedule::components`]); 8 vectors an iteration into 4 accumulators for compound
    /// moments (two each, added first: `moments.rs`); one vector per iteration for kernels of more than
    /// `MANY_INPUTS` (64) inputs, whose body is a long run of loads.
    pub fn for_kernel(kernel: &KernelIR) -> Schedule {
        if kernel.inputs.len() > MANY_INPUTS {
            return Schedule::simd(kernel.dtype, 1, 1);
        }
        let lanes = Self::vector_lanes(kernel.dtype);
        let stored: Vec<Option<ElemType>> = kernel.inputs.iter().map(|i| i.stored).collect();
        // the points of a row of a reduction over trailing axes (0 for any other)
        let axes = kernel.kind.reduced_axes();
        let rank = kernel.shape.len();
        let trailing = !axes.is_empty() && axes.iter().enumerate().all(|(i, &a)| a + axes.len() == rank + i);
        let row: usize = if trailing {
            axes.iter().map(|&a| kernel.shape[a]).product()
        } else {
            0
        };
        let of = |op, body| Self::reduction_accumulators(lanes, op, &kernel.arena, body, &stored, row);
        match &kernel.kind {
            KernelKind::Map | KernelKind::Scan(_) => Schedule::simd(kernel.dtype, 4, 1),
            KernelKind::Reduce { op, .. } => Schedule::simd(kernel.dtype, 1, of(*op, kernel.body)),
            // moments: two vectors an iteration into each accumulator, added first (moments.rs)
            KernelKind::Compound {
                op: kiln_ir::CompoundOp::Moments,
                ..
            } => Schedule::simd(kernel.dtype, 8, 4),
            KernelKind::Siblings { ops, .. } => {
                let mut components = [0; COMPONENTS];
                for ((k, &op), root) in components.iter_mut().zip(ops).zip(kernel.roots()) {
                    *k = of(op, root);
                }
                let most = components.iter().copied().max().filter(|&k| k > 0).unwrap_or(4);
                Schedule {
                    components,
                    ..Schedule::simd(kernel.dtype, 1, most)
                }
            }
        }
    }

    /// The vector accumulators a reduction `op` of `body` keeps by default in vectors of `lanes`
    /// lanes (`stored`: how each input is stored, None in the kernel's dtype), over rows of `row`
    /// points (0: not a reduction over trailing axes), alone or as a component of sibling
    /// reductions ([`Schedule::components`]):
    /// - 8 for min and max: a chain of a compare, a min / max and a blend an accumulator, longer
    ///   than a sum's add, so twice the accumulators keep the core busy;
    /// - 16 f64 partials for a sum of a plain read, or the square of one, of float values in the
    ///   kernel's dtype, over rows of at least [`LONG_SUM_ROW`] points
    ///   ([`crate::wide::sum_accumulators`]: 8 `F64X2` of f64, 4 of f32, whose vectors are two
    ///   halves each, the partition `wide/sums.rs` reproduces), so that the latency of the adds
    ///   does not bind a sum of f64 (`sum(x)` of 1e6 float64: 0.105 -> 0.085 ns an element,
    ///   `sum(x*x)` 0.119 -> 0.095). Shorter rows keep 4: the vectors after the main loop's last
    ///   step, up to 7 of them, all go to the first accumulator, one chain of adds, and the fold
    ///   of 8 costs more a row (rows of 100 points: 0.113 -> 0.127; 1000: about even). `sum(x*y)`,
    ///   two inputs, keeps 4 too: its loads and eight accumulators outgrow the registers;
    /// - 4 for any other (integer, bool or complex values: a typed kernel's inputs are stored).
    pub fn reduction_accumulators(
        lanes: u8,
        op: kiln_ir::ReduceOp,
        arena: &kiln_ir::ExprArena,
        body: kiln_ir::NodeId,
        stored: &[Option<ElemType>],
        row: usize,
    ) -> u8 {
        use kiln_ir::{BinaryOp, Node, ReduceOp};
        let input = |n: kiln_ir::NodeId| match *arena.node(n) {
            Node::Input(i) if stored.get(i as usize) == Some(&None) => Some(i),
            _ => None,
        };
        let one_input = match *arena.node(body) {
            Node::Input(_) => input(body).is_some(),
            Node::Binary(BinaryOp::Mul, a, b) => input(a).is_some() && input(a) == input(b),
            _ => false,
        };
        match op {
            ReduceOp::Min | ReduceOp::Max => 8,
            ReduceOp::Sum if one_input && lanes > 1 && row >= LONG_SUM_ROW => {
                crate::wide::sum_accumulators(lanes)
            }
            _ => 4,
        }
    }

    /// The vector accumulators of component `c` of sibling reductions: the count this schedule
    /// gives it ([`Schedule::components`]: what it keeps alone by default), at most
    /// `accumulators`, or `accumulators` where it gives none (skeleton.rs `Acc`).
    pub fn component_accumulators(&self, c: usize) -> u8 {
        match self.components.get(c) {
            Some(&k) if k > 0 => k.min(self.accumulators),
            _ => self.accumulators,
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
            components: self.components,
        }
    }

    /// Whether the kernel uses vector code.
    pub fn is_vector(&self) -> bool {
        self.lanes > 1
    }
}
