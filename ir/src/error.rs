//! The errors of kiln-ir: everything a user can get wrong at the level of the language.

use thiserror::Error;

/// An error raised while building, checking, planning or interpreting a kernel.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum IrError {
    /// Two or more shapes that NumPy's rules cannot broadcast together.
    #[error("shapes {left:?} and {right:?} cannot be broadcast together")]
    Broadcast {
        /// The first shape.
        left: Vec<usize>,
        /// The shape it does not broadcast with.
        right: Vec<usize>,
    },
    /// An axis outside the iteration shape.
    #[error("axis {axis} is out of range for an array of rank {rank}")]
    AxisOutOfRange {
        /// The axis as given (negative counts from the end).
        axis: isize,
        /// The rank of the array.
        rank: usize,
    },
    /// The same axis named twice in one reduction.
    #[error("axis {axis} is repeated in the reduction's axes")]
    DuplicateAxis {
        /// The repeated axis.
        axis: usize,
    },
    /// min, max, argmin or argmax over an empty extent.
    #[error("zero-size reduction: {op} of an empty extent has no identity")]
    EmptyReduction {
        /// The reduction's name.
        op: &'static str,
    },
    /// A shape whose element count does not fit in memory sizes.
    #[error("size overflow: the shape {shape:?} has more elements (or bytes) than can be addressed")]
    SizeOverflow {
        /// The shape.
        shape: Vec<usize>,
    },
    /// An input buffer that does not hold the elements its shape and strides reach.
    #[error("input {index} does not match its declaration: {why}")]
    BadInput {
        /// The input's position.
        index: usize,
        /// What does not match.
        why: String,
    },
    /// The number of inputs bound differs from the kernel's declaration.
    #[error("the kernel takes {expected} inputs but {got} were given")]
    Arity {
        /// The inputs the kernel declares.
        expected: usize,
        /// The inputs given.
        got: usize,
    },
    /// A reduction that is not valid for this kernel (for example argmin over a tuple of axes).
    #[error("invalid reduction: {0}")]
    InvalidReduction(String),
    /// A kernel whose parts do not fit together (built by hand through the public fields).
    #[error("malformed kernel: {0}")]
    Malformed(String),
    /// More dimensions than kiln supports (NumPy's limit, 64).
    #[error("{rank} dimensions: kiln supports at most {max}")]
    TooManyDims {
        /// The rank asked for.
        rank: usize,
        /// The largest rank kiln supports.
        max: usize,
    },
    /// A buffer that could not be allocated.
    #[error("out of memory: cannot allocate {elements} elements for {what}")]
    Allocation {
        /// What the buffer was for.
        what: String,
        /// The elements asked for.
        elements: usize,
    },
    /// Operand types an operator does not take, as NumPy 2 refuses them (a float in `^`, `int32 +
    /// 3000000000`, an integer to a negative integer power), or an initial value of the wrong type.
    #[error("type error: {0}")]
    Type(String),
    /// Operand types NumPy 2's promotion refuses for an operator (`what` names the node); the
    /// refusal says which exception NumPy raises ([`crate::promote::PromoteError::numpy_exception`]).
    #[error("type error: {what}: {error}")]
    Promote {
        /// The node, as the typing names it.
        what: String,
        /// Why it has no result type.
        error: crate::promote::PromoteError,
    },
    /// An index expression naming an axis the iteration space does not have.
    #[error("index({axis}) names an axis outside the iteration space of rank {rank}")]
    IndexAxis {
        /// The axis named.
        axis: usize,
        /// The rank of the iteration space.
        rank: usize,
    },
}

/// The result type of kiln-ir.
pub type Result<T, E = IrError> = std::result::Result<T, E>;
