//! kiln: a JIT kernel-fusion engine for array expressions.
pub mod error;
pub mod expr;
pub mod text;

pub use error::{Error, Result};
pub use expr::{Axes, Expr, ExprNode, select};
