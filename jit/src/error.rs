//! Errors of kiln-jit: Cranelift failures (codegen, module, ISA) wrapped with their context, and bad
//! run-time inputs (a buffer of the wrong length, a plan that does not match the compiled kernel), each
//! saying what was wrong and where.

use thiserror::Error;

/// An error raised while compiling or running a kernel.
#[derive(Debug, Error)]
pub enum JitError {
    /// The kernel itself is invalid (kiln-ir's checks), or a reduction over nothing.
    #[error(transparent)]
    Ir(#[from] kiln_ir::IrError),
    /// Cranelift could not build an ISA for this host.
    #[error("cranelift: no ISA for this host: {0}")]
    Isa(String),
    /// Cranelift rejected the generated function (verifier or lowering error).
    #[error("cranelift codegen failed for kernel `{kernel}`: {message}")]
    Codegen {
        /// The kernel's text form.
        kernel: String,
        /// Cranelift's message.
        message: String,
    },
    /// cranelift-module failed to declare, define or link a function.
    #[error("cranelift module error: {0}")]
    Module(#[from] Box<cranelift_module::ModuleError>),
    /// The plan does not describe the kernel (other shape, other input count, an axis it lacks).
    #[error("the broadcast plan does not match the kernel: {0}")]
    PlanMismatch(String),
    /// The kernel and plan given to `run` are not the ones the kernel was compiled for.
    #[error("this compiled kernel was built for another kernel structure: {0}")]
    WrongKernel(String),
    /// An input buffer whose length is not what its shape and plan require.
    #[error("input {index} ({name}): {why}")]
    BadInput {
        /// The input's position.
        index: usize,
        /// The input's name.
        name: String,
        /// What is wrong with it.
        why: String,
    },
    /// The element type of the buffers differs from the kernel's dtype.
    #[error("the kernel computes in {} but the buffers are {}", kernel.short(), given.short())]
    DType {
        /// The kernel's dtype.
        kernel: kiln_ir::ElemType,
        /// The buffers' dtype.
        given: kiln_ir::ElemType,
    },
    /// A size the compiled code cannot index (for example an f32 argmin over 2^31 elements or more).
    #[error("unsupported: {0}")]
    Unsupported(String),
}

impl From<cranelift_module::ModuleError> for JitError {
    fn from(e: cranelift_module::ModuleError) -> Self {
        JitError::Module(Box::new(e))
    }
}

/// The result type of kiln-jit.
pub type Result<T, E = JitError> = std::result::Result<T, E>;

/// The error of an output that cannot be allocated.
pub(crate) fn oom(elements: usize) -> JitError {
    kiln_ir::IrError::Allocation {
        what: "the kernel's output".into(),
        elements,
    }
    .into()
}
