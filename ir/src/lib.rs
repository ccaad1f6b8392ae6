//! kiln-ir: the language of kiln.
//!
//! - [`dtype`]: f64 and f32, and [`Real`], the scalar semantics of every opcode per type;
//! - [`op`]: the opcodes, each documenting its NaN, ±0 and ±inf behaviour;
//! - [`expr`]: the hash-consed arena of scalar nodes;
//! - [`kernel`]: [`KernelIR`], a body over an iteration space, mapped or reduced;
//! - [`compound`]: reductions that give two statistics in one pass (mean and variance);
//! - [`shape`] and [`plan`]: NumPy broadcasting and how each input is read;
//! - [`int`]: NumPy's integer arithmetic for int32 and int64 (wrapping, floor division, shifts, casts);
//! - [`interp`]: the interpreter, the oracle every compiled kernel is checked against, of every
//!   element type;
//! - [`scalar`]: one value of any element type, its casts, and every opcode on values of one type;
//! - [`scan`]: cumulative sums, products, maxima and minima;
//! - [`promote`]: NumPy 2's type promotion for bool, integer, float and complex operands (NEP 50);
//! - [`bytes`]: byte strings (NumPy's `S` arrays): comparisons and `contains`, numexpr's rules;
//! - [`complex`]: what every opcode gives on complex64 and complex128 values (the oracle's);
//! - [`passes`]: rewrites of a kernel (the prefix-scan rewrite, strength reduction of `pow`);
//! - [`typed`]: kernels whose every value has an element type: the typing (NumPy 2's promotion,
//!   explicit casts), a float kernel's trivial typing;
//! - [`text`]: the stable text form.
//!
//! ```
//! use kiln_ir::{ElemType, ExprArena, KernelIR, KernelKind, InputDecl, BinaryOp, interpret, StridedInput};
//! let mut arena = ExprArena::new();
//! let x = arena.input(0);
//! let two = arena.literal(2.0);
//! let body = arena.binary(BinaryOp::Mul, x, two);
//! let kernel = KernelIR {
//!     dtype: ElemType::F64,
//!     inputs: vec![InputDecl::new("x", vec![3])],
//!     shape: vec![3],
//!     arena,
//!     body,
//!     extra: vec![],
//!     kind: KernelKind::Map,
//! };
//! let data = [1.0, 2.0, 3.0];
//! let out = interpret(&kernel, &[StridedInput { data: &data, offset: 0, strides: vec![1] }]).unwrap();
//! assert_eq!(out.values, kiln_ir::Values::F64(vec![2.0, 4.0, 6.0]));
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]

pub mod bytes;
pub mod complex;
pub mod compound;
pub mod dtype;
pub mod error;
pub mod expr;
pub mod int;
pub mod interp;
pub mod kernel;
pub mod op;
pub mod passes;
pub mod plan;
pub mod promote;
pub mod scalar;
pub mod scan;
pub mod shape;
mod sum;
pub mod tensor;
pub mod text;
pub mod typed;

pub use compound::CompoundOp;
pub use dtype::Real;
pub use error::{IrError, Result};
pub use expr::{ExprArena, Node, NodeId};
pub use interp::{
    StridedInput, TypedInput, evaluate, evaluate_outputs, interpret, interpret_from, interpret_outputs,
};
pub use kernel::{InputDecl, KernelIR, KernelKind, ReduceOp, Start};
/// The complex number type of complex64 and complex128 values (`Complex32`, `Complex64`).
pub use num_complex;
pub use op::{BinaryOp, UnaryOp};
pub use plan::{BroadcastPlan, InputLayout, InputPlan, PlanOptions, RowAccess};
pub use promote::ElemType;
pub use scan::{Carried, Scan, ScanOp};
pub use tensor::{Tensor, Values};
