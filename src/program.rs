//! Lowering: a builder [`Expr`] becomes a [`Program`], the dtype- and shape-independent half of a
//! kernel (input names, the hash-consed body, the reduction), and a `Program` with concrete input
//! dtypes and shapes becomes a [`KernelIR`].
//!
//! Lowering walks the tree with an explicit stack (no recursion, so no depth limit) and interns every
//! node into one arena: a subtree used twice is computed once.

use crate::error::{Error, Result};
use crate::expr::{Axes, Expr, ExprNode};
use kiln_ir::shape::{broadcast_shapes, normalize_axes};
use kiln_ir::{DType, ExprArena, InputDecl, KernelIR, KernelKind, NodeId, ReduceOp};
use std::collections::HashMap;

/// An expression ready to be specialised: its inputs by name, its body and its reduction.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Program {
    /// Input names, in order of first appearance; input `i` of the body is `names[i]`.
    pub names: Vec<String>,
    pub arena: ExprArena,
    pub body: NodeId,
    /// The outermost reduction, if any.
    pub reduce: Option<(ReduceOp, Axes)>,
}

impl Program {
    /// Lowers `expr`. A reduction must be the outermost operation.
    pub fn lower(expr: &Expr) -> Result<Program> {
        let (reduce, body_expr) = match expr.node() {
            ExprNode::Reduce { op, axes, arg } => (Some((*op, axes.clone())), arg),
            _ => (None, expr),
        };
        let mut lowering = Lowering::default();
        let body = lowering.lower(body_expr)?;
        Ok(Program {
            names: lowering.names,
            arena: lowering.arena,
            body,
            reduce,
        })
    }

    /// The kernel this program is for inputs of `dtype` and `shapes` (one per name, in order).
    pub fn kernel(&self, dtype: DType, shapes: &[Vec<usize>]) -> Result<KernelIR> {
        if shapes.len() != self.names.len() {
            return Err(kiln_ir::IrError::Arity {
                expected: self.names.len(),
                got: shapes.len(),
            }
            .into());
        }
        let shape = broadcast_shapes(shapes.iter().map(|s| s.as_slice()))?;
        let kind = match &self.reduce {
            None => KernelKind::Map,
            Some((op, axes)) => {
                let axes = match axes {
                    Axes::All => (0..shape.len()).collect(),
                    Axes::Some(list) => {
                        if op.is_arg() && list.len() != 1 {
                            return Err(kiln_ir::IrError::InvalidReduction(format!(
                                "{} takes one axis or none, not {} axes",
                                op.name(),
                                list.len()
                            ))
                            .into());
                        }
                        normalize_axes(list, shape.len())?
                    }
                };
                KernelKind::Reduce { op: *op, axes }
            }
        };
        let inputs = self
            .names
            .iter()
            .zip(shapes)
            .map(|(name, shape)| InputDecl {
                name: name.clone(),
                shape: shape.clone(),
            })
            .collect();
        let kernel = KernelIR {
            dtype,
            inputs,
            shape,
            arena: self.arena.clone(),
            body: self.body,
            kind,
        };
        kernel.validate()?;
        Ok(kernel)
    }
}

#[derive(Default)]
struct Lowering {
    names: Vec<String>,
    arena: ExprArena,
    done: HashMap<*const ExprNode, NodeId>,
}

impl Lowering {
    fn lower(&mut self, root: &Expr) -> Result<NodeId> {
        // post-order walk: a node is interned once all its operands are
        let mut stack: Vec<(&Expr, bool)> = vec![(root, false)];
        while let Some((e, expanded)) = stack.pop() {
            if self.done.contains_key(&e.ptr()) {
                continue;
            }
            let operands: Vec<&Expr> = match e.node() {
                ExprNode::Input(_) | ExprNode::Literal(_) | ExprNode::Index(_) => vec![],
                ExprNode::Unary(_, a) => vec![a],
                ExprNode::Binary(_, a, b) => vec![a, b],
                ExprNode::Where(c, a, b) => vec![c, a, b],
                ExprNode::Reduce { op, .. } => {
                    return Err(Error::Unsupported(format!(
                        "{}() inside an expression: a reduction must be the outermost operation",
                        op.name()
                    )));
                }
            };
            if !expanded && !operands.is_empty() {
                stack.push((e, true));
                stack.extend(operands.into_iter().rev().map(|o| (o, false)));
                continue;
            }
            let id = |l: &Self, x: &Expr| l.done[&x.ptr()];
            let node = match e.node() {
                ExprNode::Input(name) => {
                    let n = match self.names.iter().position(|x| x == name) {
                        Some(n) => n,
                        None => {
                            self.names.push(name.clone());
                            self.names.len() - 1
                        }
                    };
                    self.arena.input(n as u32)
                }
                ExprNode::Literal(v) => self.arena.literal(*v),
                ExprNode::Index(axis) => {
                    let axis = u32::try_from(*axis)
                        .map_err(|_| Error::Unsupported(format!("index({axis}): axis too large")))?;
                    self.arena.index(axis)
                }
                ExprNode::Unary(op, a) => {
                    let a = id(self, a);
                    self.arena.unary(*op, a)
                }
                ExprNode::Binary(op, a, b) => {
                    let (a, b) = (id(self, a), id(self, b));
                    self.arena.binary(*op, a, b)
                }
                ExprNode::Where(c, a, b) => {
                    let (c, a, b) = (id(self, c), id(self, a), id(self, b));
                    self.arena.select(c, a, b)
                }
                ExprNode::Reduce { .. } => unreachable!("rejected above"),
            };
            self.done.insert(e.ptr(), node);
        }
        Ok(self.done[&root.ptr()])
    }
}
