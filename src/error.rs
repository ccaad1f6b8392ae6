//! kiln's error type: every way a user's input can be wrong, with what and where.

use thiserror::Error;

/// An error from any of kiln's front ends, its planner or a backend.
#[derive(Debug, Error)]
pub enum Error {
    /// An error of the language layer: shapes, axes, empty reductions, sizes.
    #[error(transparent)]
    Ir(#[from] kiln_ir::IrError),
    /// A text expression that does not parse: the byte position and what was expected there.
    #[error("parse error at position {pos}: {message}")]
    Parse {
        /// The byte offset in the text.
        pos: usize,
        /// What was expected there.
        message: String,
    },
    /// A function name the text language does not know, with its position.
    #[error("unknown function '{name}' at position {pos}")]
    UnknownFunction {
        /// The name.
        name: String,
        /// Its byte offset in the text.
        pos: usize,
    },
    /// A function called with the wrong number of arguments.
    #[error("{name}() takes {expected} argument(s) but {got} were given (at position {pos})")]
    Arity {
        /// The function.
        name: String,
        /// The argument counts it takes.
        expected: String,
        /// The arguments given.
        got: usize,
        /// The call's byte offset in the text.
        pos: usize,
    },
    /// An expression names an input that was not bound when it ran.
    #[error("no input named '{name}' was given")]
    MissingInput {
        /// The input's name.
        name: String,
    },
    /// The same input bound twice.
    #[error("input '{name}' is given twice")]
    DuplicateInput {
        /// The input's name.
        name: String,
    },
    /// An element type kiln does not compute in.
    #[error(
        "unsupported dtype {dtype} for '{name}': kiln computes in bool, int32, int64, float32 and float64"
    )]
    UnsupportedDType {
        /// The input's name.
        name: String,
        /// Its element type.
        dtype: String,
    },
    /// A construct this version does not support yet, such as a reduction inside an expression.
    #[error("unsupported: {0}")]
    Unsupported(String),
    /// A result requested with the wrong element type or shape.
    #[error("result mismatch: {0}")]
    Output(String),
    /// An output array given for a result of another shape.
    #[error("result mismatch: the output has shape {output:?} but the result has shape {result:?}{hint}")]
    OutputShape {
        /// The output's shape.
        output: Vec<usize>,
        /// The result's shape.
        result: Vec<usize>,
        /// What the caller's API offers for such a result (empty, or a clause that begins with a
        /// space).
        hint: &'static str,
    },
    /// A call of a [`crate::Prepared`] handle whose inputs are not what it was bound to: their count,
    /// or an input's dtype or shape (with its position and name).
    #[error("prepared call: {0}")]
    Prepared(String),
    /// A failure of the JIT backend (codegen, or inputs that do not fit the compiled kernel).
    #[error("jit: {0}")]
    Jit(String),
    /// Reading or writing a .npy file.
    #[error("{path}: {message}")]
    Npy {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

impl Error {
    /// An output of shape `output` given for a result of shape `result`.
    pub(crate) fn output_shape(output: &[usize], result: &[usize]) -> Error {
        Error::OutputShape {
            output: output.to_vec(),
            result: result.to_vec(),
            hint: "",
        }
    }
}

/// The result type of kiln.
pub type Result<T, E = Error> = std::result::Result<T, E>;
