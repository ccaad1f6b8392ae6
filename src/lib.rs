//! kiln: a JIT kernel-fusion engine for array expressions.
//!
//! An expression over arrays (`a*x + y`, `sum(x*x)`, `1/(1+exp(-x))`) becomes one kernel that reads
//! every input once and writes its output once, with NumPy's broadcasting and IEEE semantics. Three
//! front ends produce the same kernels:
//! - the builder, [`Expr`], with [`FusedRunner`];
//! - closures over ndarray arrays, [`FuseExt`] and [`FuseAllExt`];
//! - the numexpr-like text language, [`text::parse`] and the `kiln` CLI.
//!
//! Every kernel runs on a [`Backend`]; the [`Interpreter`] is the oracle the compiled backends are
//! tested against.
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod array;
pub mod backend;
mod bindings;
pub mod call;
mod compiled;
pub mod contract;
pub mod error;
mod executor;
pub mod explain;
pub mod expr;
pub mod ext;
pub mod fuse_cache;
pub mod interpreter;
pub mod jit;
mod many;
pub mod memory_order;
pub mod npy;
pub mod parallel;
pub mod prepared;
pub mod profile;
pub mod program;
pub mod runner;
pub mod scan;
mod scan_options;
pub mod sibling_pass;
pub mod siblings;
pub mod strings;
pub mod text;
pub mod update;
pub mod view;

pub use array::{ArrayArg, Element, Float, Output};
pub use backend::{
    Backend, Buffer, BufferData, Buffers, CodeDump, DirectInputs, Executable, OutSlice, RunCtx,
};
pub use bindings::BoundHandle;
pub use call::{Accumulate, Fresh, FreshAll, InPlace, InPlaceTargets, Results, ResultsAt};
pub use error::{Error, Result};
pub use explain::{Engine, ExplainOptions, Explained};
pub use expr::{Axes, Expr, ExprNode, select};
pub use ext::{FuseAllExt, FuseAssignExt, FuseExt, FuseInputs, FuseManyExt, FuseResults};
pub use interpreter::Interpreter;
pub use kiln_ir;
pub use kiln_ir::{BinaryOp, ElemType, ReduceOp, ScanOp, UnaryOp};
pub use kiln_jit::Stored;
pub use parallel::Parallel;
pub use prepared::Prepared;
pub use profile::{Profile, Settings};
pub use program::{Fused, Pipeline, Program, Reduction, Siblings, Source, Stage, Work};
pub use runner::{FusedRunner, interpreter};
pub use scan::ScanOptions;
pub use strings::{ByteStrings, Strings};
pub use view::View;

/// The backend runners use unless told otherwise: the JIT.
pub fn default_backend() -> std::sync::Arc<dyn Backend> {
    std::sync::Arc::new(jit::Jit::default())
}

/// The names [`backend_by_name`] knows.
pub const BACKENDS: [&str; 3] = ["jit", "jit-scalar", "interp"];

/// Looks a backend up by the name `--backend` takes: `jit` (SIMD), `jit-scalar` (one lane), `interp`.
pub fn backend_by_name(name: &str) -> Result<std::sync::Arc<dyn Backend>> {
    match name {
        "jit" => Ok(default_backend()),
        "jit-scalar" => Ok(std::sync::Arc::new(jit::Jit::scalar())),
        "interp" => Ok(interpreter()),
        other => Err(Error::Unsupported(format!(
            "unknown backend '{other}' (known: {})",
            BACKENDS.join(", ")
        ))),
    }
}

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The examples of `docs/performance.md` (the hot-loop calls), compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../docs/performance.md")]
pub struct PerformanceDoctests;

// A compiled expression and its bound handles go between threads (Python's wrappers and Dask
// hold them; `Expr`, the builder, is per thread: its nodes are counted by `Rc`).
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<FusedRunner>();
    send_sync::<Prepared>();
};
