//! Contractions with index expressions: a reduction over one named index of an expression that
//! reads named indices, einsum-like: `y[.., o] ⊕= rhs(.., i, o)`.
//!
//! A contraction declares its index variables in order (they are the axes of its iteration space)
//! and the one it folds; the others are the result's axes, in the declared order. Inside it:
//! - `Expr::idx("i")` is the value of index `i` (0, 1, 2, ... as a float, like `Expr::index`);
//! - `Expr::subscript("x", &["i", "o"])` reads input `x` at `[i, o]`: one index per axis of `x`, in
//!   the declared order (a transpose is not expressible yet); an index's range is the length of the
//!   input axes it subscripts (they must agree, or be 1 to broadcast);
//! - an index that subscripts no input ranges like the folded index (the square nest of a scan:
//!   `y[o] = Σ_i where(i <= o, x[i], 0)` needs no array along `o`).
//!
//! In the text language: `sum(where(i <= o, x[i], 0), index=(i, o), axis=i)` (`prod`, `min` and
//! `max` too, with `initial=`). Inputs in a contraction must be subscripted; the result is an array
//! of the free indices' ranges and flows into the rest of the expression as any reduction's does.
//!
//! ```
//! use kiln::{Expr, FusedRunner};
//! use kiln::kiln_ir::ReduceOp;
//! use ndarray::array;
//! let (i, o) = (Expr::idx("i"), Expr::idx("o"));
//! let body = Expr::select(i.le(o), Expr::subscript("x", &["i"]), 0.0);
//! let cumsum = Expr::contract(ReduceOp::Sum, &["i", "o"], "i", body);
//! let x = array![1.0, 2.0, 3.0, 4.0];
//! let out = FusedRunner::compile(&cumsum)?.run(&[("x", (&x).into())])?;
//! assert_eq!(out.into_f64().into_raw_vec_and_offset().0, vec![1.0, 3.0, 6.0, 10.0]);
//! # Ok::<(), kiln::Error>(())
//! ```

use crate::expr::{Expr, ExprNode};
use kiln_ir::ReduceOp;

impl Expr {
    /// The value of index variable `name` of the enclosing contraction.
    pub fn idx(name: impl Into<String>) -> Expr {
        Expr::new(ExprNode::IndexVar(name.into()))
    }

    /// Input `name` read at the index variables `indices` of the enclosing contraction.
    pub fn subscript(name: impl Into<String>, indices: &[&str]) -> Expr {
        Expr::new(ExprNode::Subscript(
            name.into(),
            indices.iter().map(|s| s.to_string()).collect(),
        ))
    }

    /// The contraction `⊕_{reduced} body` over the index variables `index` (see the module doc).
    pub fn contract(op: ReduceOp, index: &[&str], reduced: &str, body: Expr) -> Expr {
        Expr::contract_with(op, index, reduced, body, None)
    }

    /// [`Expr::contract`] with each output's fold starting from `initial` (sum, prod, min, max).
    pub fn contract_with(
        op: ReduceOp,
        index: &[&str],
        reduced: &str,
        body: Expr,
        initial: Option<f64>,
    ) -> Expr {
        Expr::new(ExprNode::Contract {
            op,
            index: index.iter().map(|s| s.to_string()).collect(),
            reduced: reduced.to_string(),
            arg: body,
            initial,
        })
    }
}

/// A program's contraction: its index variables (the iteration axes), the folded one, which axes
/// some input subscripts, and where each input's axes go.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Contraction {
    /// The index variables, in the order of the iteration axes.
    pub index: Vec<String>,
    /// The folded axis.
    pub reduced: usize,
    /// Per axis: whether an input subscripts it (else it ranges like the folded axis).
    pub bound: Vec<bool>,
    /// Per program input: the iteration axes its own axes are read along (increasing).
    pub placements: Vec<Vec<usize>>,
}

impl Contraction {
    /// The iteration shape for inputs whose shapes were already placed (rank = index count).
    pub fn shape(&self, placed: &[Vec<usize>]) -> crate::Result<Vec<usize>> {
        let mut shape = kiln_ir::shape::broadcast_shapes(placed.iter().map(|s| s.as_slice()))?;
        if shape.len() != self.index.len() {
            shape = vec![1; self.index.len()];
        }
        if !self.bound[self.reduced] {
            return Err(crate::Error::Unsupported(format!(
                "the folded index '{}' subscripts no input, so it has no range",
                self.index[self.reduced]
            )));
        }
        let n = shape[self.reduced];
        for (a, d) in shape.iter_mut().enumerate() {
            if !self.bound[a] {
                *d = n;
            }
        }
        Ok(shape)
    }
}
