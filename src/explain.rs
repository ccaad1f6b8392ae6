//! What `kiln explain` shows of one kernel: the kernel and its plan, what the rewrites did, and how
//! the kernel runs ([`Engine`]), a value rather than the wording of a note; and the one text of
//! it ([`crate::FusedRunner::explain_text`]) that the CLI and Python print.

use crate::backend::Backend;
use crate::error::Result;
use crate::profile::Settings;
use crate::program::Pipeline;
use kiln_ir::{BroadcastPlan, KernelIR};
use std::fmt::Write;

/// How one kernel runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    /// A float kernel, run by the backend: compiled by the JIT, or the interpreter backend's (its
    /// note says which).
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
    /// Which engine runs the kernel: a float kernel's `compiled: ...` (what, in which lanes) or
    /// `interpreted: ...` (the interpreter backend, chosen); for a typed kernel, also why it is
    /// typed, and the typed kernel's text.
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

/// What [`crate::FusedRunner::explain_text`] adds to the kernels and their plans: the last
/// kernel's code as the backend compiles it.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExplainOptions {
    /// The Cranelift IR.
    pub clif: bool,
    /// The machine code.
    pub asm: bool,
}

/// What a compiled expression is explained from: its settings, the plan's rewrite notes, its
/// pipeline and backend.
pub(crate) struct Source<'a> {
    pub settings: Settings,
    pub plan_notes: &'a [String],
    pub pipeline: &'a Pipeline,
    pub backend: &'a dyn Backend,
}

impl Source<'_> {
    /// The explanation of the kernels `all` as text: the profile, the plan's rewrites, each kernel
    /// with its rewrites, engine and broadcast plan (a typed kernel's typed text in place of its
    /// float form), and the last kernel's compiled code where `opts` asks for it.
    pub(crate) fn text(&self, mut all: Vec<Explained>, opts: ExplainOptions) -> Result<String> {
        let settings = self.settings;
        let mut w = String::new();
        let on = if settings.prefix_scan { "on" } else { "off" };
        let _ = writeln!(w, "# profile {}, prefix_scan {on}", settings.profile);
        let show = |w: &mut String, e: &Explained| {
            for n in &e.rewrites {
                let _ = writeln!(w, "# rewrite {n}");
            }
            if let Some(n) = &e.engine_note {
                let _ = writeln!(w, "# {n}");
            }
            // a typed kernel's note holds its text: the float form is not what runs
            if e.engine.is_typed() {
                let _ = write!(w, "{}", e.plan);
            } else {
                let _ = write!(w, "{}{}", e.kernel, e.plan);
            }
        };
        for n in self.plan_notes {
            let _ = writeln!(w, "# rewrite {n}");
        }
        if all.len() > 1 {
            // several kernels: the plan (what flows between them), then each kernel
            let _ = write!(w, "{}", self.pipeline);
            for (k, e) in all.iter().enumerate() {
                let _ = writeln!(w, "# kernel {k}");
                show(&mut w, e);
            }
        }
        let last = all.pop().expect("a pipeline has a kernel");
        if self.pipeline.stages.len() == 1 {
            show(&mut w, &last);
        }
        if !(opts.clif || opts.asm) {
            return Ok(w);
        }
        let typed = match last.engine {
            Engine::TypedInterpreted => {
                let _ = writeln!(w, "# no compiled code: the kernel is interpreted");
                return Ok(w);
            }
            Engine::TypedCompiled => last.typed.as_ref(),
            Engine::Float => None,
        };
        let Some(dump) = self.backend.code_dump(&last.kernel, &last.plan, typed)? else {
            let _ = writeln!(
                w,
                "# no compiled code: the {} backend compiles nothing",
                self.backend.name()
            );
            return Ok(w);
        };
        let _ = writeln!(w, "{}", dump.header);
        if opts.clif {
            let _ = writeln!(w, "; clif\n{}", dump.clif);
        }
        if opts.asm {
            let _ = writeln!(
                w,
                "; machine code\n{}",
                dump.asm.as_deref().unwrap_or("(not available)")
            );
        }
        Ok(w)
    }
}
