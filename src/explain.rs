//! What `kiln explain` shows of one kernel: the kernel and its plan, what the rewrites did, and how
//! the kernel runs ([`Engine`]), a value rather than the wording of a note.

use kiln_ir::{BroadcastPlan, KernelIR};

/// How one kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A float kernel, run by the backend: compiled by the JIT, or the interpreter backend's.
    Float,
    /// A typed kernel ([`kiln_ir::typed`]) compiled by the JIT in its values' own types: as one
    /// kernel (every output of several in one pass), or its values typed and then a float
    /// reduction.
    TypedCompiled,
    /// A typed kernel run by kiln-ir's typed interpreter: the JIT does not compile it, or the
    /// backend is the interpreter.
    TypedInterpreted,
}

impl Engine {
    /// Whether the kernel is a typed one (its typed form, not the float kernel, is what runs).
    pub fn is_typed(self) -> bool {
        self != Engine::Float
    }
}

/// One kernel as [`crate::FusedRunner::explain_kernels`] gives it.
#[derive(Debug, Clone)]
pub struct Explained {
    /// The kernel (a typed kernel's float form: the typed kernel is in `engine_note`).
    pub kernel: KernelIR,
    /// Its broadcast plan.
    pub plan: BroadcastPlan,
    /// What each rewrite did (fired, declined and why, or off), one line each.
    pub rewrites: Vec<String>,
    /// How the kernel runs.
    pub engine: Engine,
    /// For a typed kernel: which engine runs it and why, and the typed kernel's text.
    pub engine_note: Option<String>,
    /// For a typed kernel: the typed kernel itself (its inputs' types those of this run, an earlier
    /// kernel's result among them), the form the JIT compiles (`kiln_jit::typed::kernel_of`).
    pub typed: Option<kiln_ir::typed::TypedKernel>,
}

impl Explained {
    /// Every note in the order [`crate::FusedRunner::explain_rewrites`] gives them: the rewrites,
    /// then the engine's.
    pub fn notes(&self) -> Vec<String> {
        self.rewrites.iter().chain(&self.engine_note).cloned().collect()
    }
}
