//! The code generator's input: [`KernelKey`], everything that shapes a kernel's code (and so the
//! kernel cache's key).

use crate::error::{JitError, Result};
use crate::layout::{Mode, Structure};
use crate::math;
use crate::schedule::Schedule;
use kiln_ir::{BroadcastPlan, ExprArena, KernelIR, NodeId};

/// Everything that shapes a kernel's code. Made only by [`KernelKey::new`], from a validated kernel
/// and a normalised schedule: codegen relies on both (input and index numbers in range, at least one
/// vector and one accumulator per iteration).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelKey {
    pub(crate) structure: Structure,
    pub(crate) arena: ExprArena,
    pub(crate) body: NodeId,
    /// The further outputs of a map of several (see [`KernelIR::extra`]).
    pub(crate) extra: Vec<NodeId>,
    pub(crate) schedule: Schedule,
}

impl KernelKey {
    /// The key of `kernel` read through `plan` with `schedule` (normalised for the dtype).
    pub fn new(kernel: &KernelIR, plan: &BroadcastPlan, schedule: Schedule) -> Result<KernelKey> {
        kernel.validate()?;
        // this key is a float kernel's: integer literals, casts and integer opcodes are a typed
        // kernel's (kiln_ir::typed), whose key is KernelKey::typed
        if let Some(why) = kiln_ir::typed::needs_typing(kernel).or_else(|| {
            let reach = kernel.arena.reachable_all(&kernel.roots());
            reach
                .iter()
                .any(|&id| matches!(kernel.arena.node(id), kiln_ir::Node::Int(_)))
                .then(|| "an integer literal (give it as a float literal)".to_string())
        }) {
            return Err(JitError::Unsupported(format!(
                "a float kernel's key, and this kernel holds {why}: compile its typed kernel (kiln_jit::compile_typed)"
            )));
        }
        Ok(Self::of(Structure::new(kernel, plan)?, kernel, schedule))
    }

    /// The key of a typed kernel's `kernel` read through `plan` with `schedule` (see
    /// [`Structure::typed`]).
    pub fn typed(kernel: &KernelIR, plan: &BroadcastPlan, schedule: Schedule) -> Result<KernelKey> {
        let (structure, _) = Structure::typed(kernel, plan)?;
        Ok(Self::of(structure, kernel, schedule))
    }

    /// The key of `kernel` of structure `structure`.
    fn of(structure: Structure, kernel: &KernelIR, schedule: Schedule) -> KernelKey {
        KernelKey {
            structure,
            arena: kernel.arena.clone(),
            body: kernel.body,
            extra: kernel.extra.clone(),
            schedule: schedule.normalised(kernel.dtype),
        }
    }

    /// Every output's body: `body`, then `extra`.
    pub(crate) fn roots(&self) -> Vec<NodeId> {
        std::iter::once(self.body)
            .chain(self.extra.iter().copied())
            .collect()
    }

    /// The fold at full width of each reduction of a trailing sum, max or min (one), or of
    /// sibling reductions (one per component, each with its own accumulators:
    /// [`Schedule::component_accumulators`]), where every one has one ([`math::fold_of`]), of
    /// `values` (a float kernel's dtype, a typed kernel's int64, int32 or bool values: compile.rs
    /// `define`):
    /// compile.rs imports them, skeleton.rs `wide_folds` calls them all for a long row. None for a
    /// kernel that writes map outputs beside its reduction (its own loop stores them as it reads)
    /// and for any other mode.
    pub(crate) fn folds(&self, values: Option<kiln_ir::ElemType>) -> Option<Vec<math::Fold>> {
        let (sched, roots) = (self.schedule, self.roots());
        let mode = self.structure.mode;
        let ops: Vec<kiln_ir::ReduceOp> = match mode {
            Mode::Trailing(op) if roots.len() == 1 && !op.is_arg() => vec![op],
            Mode::Siblings(parts) => parts.ops().to_vec(),
            _ => return None,
        };
        ops.iter()
            .zip(roots)
            .enumerate()
            .map(|(c, (&op, root))| {
                let k = match mode {
                    Mode::Siblings(_) => sched.component_accumulators(c),
                    _ => sched.accumulators,
                };
                math::fold_of(op, &self.arena, root, sched, k, values)
            })
            .collect()
    }

    /// The structure of the kernel (plan, mode, rank) the code is for.
    pub fn structure(&self) -> &Structure {
        &self.structure
    }

    /// The schedule, normalised for the kernel's dtype.
    pub fn schedule(&self) -> Schedule {
        self.schedule
    }
}
