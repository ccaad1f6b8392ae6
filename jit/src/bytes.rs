//! Byte strings ([`kiln_ir::bytes`]) in compiled kernels. A typed kernel compares and searches
//! strings where each is an input or a constant and no result is a string (a copy is the
//! interpreter's): each string is held as its address (an input's counts strings, see
//! [`crate::InputRef::base`]; a constant's is its interned bytes'). `==` and `!=` are inline
//! (`Gen::bytes_equal`: the bytes both strings hold compared 8, 4, 2 and 1 at a time, the
//! longer one's rest against NULs, each load within its string's width; against a constant,
//! `Gen::bytes_equal_const`: the string's words xor-ed with the constant's, two strings' results
//! compared in one vector), and so is `contains` of a constant needle of 1 to 8 bytes
//! (`Gen::contains_const`: the interpreter's word-wide search, its needle's bytes and the widths
//! constants, two haystacks searched a vector instruction); the orderings and any other `contains`
//! call per lane the interpreter's own function (`call::bytes_op`), so their bits are the
//! interpreter's by construction.

use kiln_ir::typed::TypedKernel;
use kiln_ir::{BinaryOp, ElemType, ExprArena, Node, NodeId};

/// The host symbol of the byte strings' comparison.
pub(crate) const SYMBOL: &str = "kiln_bytes_op";

/// The code of `op` in a call of [`SYMBOL`], its place in [`kiln_ir::bytes::OPS`] (-1 for an
/// operation strings do not have).
pub(crate) fn code(op: BinaryOp) -> i64 {
    kiln_ir::bytes::OPS
        .iter()
        .position(|&o| o == op)
        .map_or(-1, |i| i as i64)
}

/// The operation of a code of [`code`].
pub(crate) fn op_of(code: i64) -> Option<BinaryOp> {
    usize::try_from(code)
        .ok()
        .and_then(|i| kiln_ir::bytes::OPS.get(i).copied())
}

/// Whether the nodes `order` of `arena`, over inputs stored as `stored`, compare strings.
pub(crate) fn compares(stored: &[Option<ElemType>], arena: &ExprArena, order: &[NodeId]) -> bool {
    stored.iter().flatten().any(|t| t.is_bytes())
        || order.iter().any(|&id| matches!(arena.node(id), Node::Bytes(_)))
}

/// Why the code generator does not compile `kernel`'s byte strings, if it holds any it does not:
/// a string result (a copy).
pub(crate) fn why_not(kernel: &TypedKernel) -> Option<String> {
    (0..kernel.kernel.n_outputs())
        .map(|o| kernel.output_type_of(o))
        .find(|t| t.is_bytes())
        .map(|t| format!("a result of byte strings ({t}: a copy, the interpreter's)"))
}
