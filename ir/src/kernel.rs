//! KernelIR: one kernel, its inputs, its iteration space, its body and what it does with the values.

use crate::compound::CompoundOp;
use crate::dtype::Real;
use crate::error::{IrError, Result};
use crate::expr::{ExprArena, Node, NodeId};
use crate::op::{BinaryOp, UnaryOp};
use crate::promote::ElemType;
use crate::scan::Scan;
use crate::shape::checked_size;

/// A reduction that folds the body's values over some axes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ReduceOp {
    /// Sum from +0.0, as NumPy's (so a sum of -0.0s is +0.0, and 0 over nothing). f32 data is summed
    /// in an f64 accumulator and rounded once at the end.
    Sum,
    /// Product; 1 over nothing. f32 data is multiplied in an f64 accumulator.
    Prod,
    /// Minimum, propagating NaN (NumPy's `min`); an error over nothing.
    Min,
    /// Maximum, propagating NaN (NumPy's `max`); an error over nothing.
    Max,
    /// Position of the first minimum, or of the first NaN if there is one; an error over nothing.
    ArgMin,
    /// Position of the first maximum, or of the first NaN if there is one; an error over nothing.
    ArgMax,
    /// Whether any value is true (nonzero or NaN); false over nothing.
    Any,
    /// Whether every value is true (nonzero or NaN); true over nothing.
    All,
}

impl ReduceOp {
    /// Every reduction, in declaration order.
    pub const ALL: [ReduceOp; 8] = [
        ReduceOp::Sum,
        ReduceOp::Prod,
        ReduceOp::Min,
        ReduceOp::Max,
        ReduceOp::ArgMin,
        ReduceOp::ArgMax,
        ReduceOp::Any,
        ReduceOp::All,
    ];

    /// The NumPy name.
    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Prod => "prod",
            ReduceOp::Min => "min",
            ReduceOp::Max => "max",
            ReduceOp::ArgMin => "argmin",
            ReduceOp::ArgMax => "argmax",
            ReduceOp::Any => "any",
            ReduceOp::All => "all",
        }
    }

    /// The reduction named `name`, if any.
    pub fn from_name(name: &str) -> Option<ReduceOp> {
        ReduceOp::ALL.into_iter().find(|op| op.name() == name)
    }

    /// Whether the reduction has a value over an empty extent.
    pub fn has_identity(self) -> bool {
        matches!(
            self,
            ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Any | ReduceOp::All
        )
    }

    /// Whether the reduction gives an index (argmin, argmax) rather than a value.
    pub fn is_arg(self) -> bool {
        matches!(self, ReduceOp::ArgMin | ReduceOp::ArgMax)
    }

    /// The exact identity of the accumulator (`merge(identity, x)` is `x` bit for bit, -0.0
    /// included): -0.0 for a sum (see [`ReduceOp::finish`]), 1 for a product, +inf for min and
    /// argmin, -inf for max and argmax, false (0) for any and true (1) for all. Sums and products
    /// accumulate in f64; the others in the data type, where every one of these is exact.
    pub fn identity(self) -> f64 {
        match self {
            ReduceOp::Sum => -0.0,
            ReduceOp::Prod | ReduceOp::All => 1.0,
            ReduceOp::Min | ReduceOp::ArgMin => f64::INFINITY,
            ReduceOp::Max | ReduceOp::ArgMax => f64::NEG_INFINITY,
            ReduceOp::Any => 0.0,
        }
    }

    /// Two accumulators (or an accumulator and a value) merged: `a + b`, `a * b`, NaN-propagating
    /// `minimum` / `maximum`, or the truth (1 or 0) of `a or b` / `a and b`. Merging in order is the
    /// fold of the interpreter and the second pass over the partials of a chunked reduction. Arg
    /// reductions merge by position: see [`ReduceOp::arg_replaces`].
    pub fn merge<T: Real>(self, a: T, b: T) -> T {
        let truth = |t: bool| if t { T::ONE } else { T::ZERO };
        match self {
            ReduceOp::Sum => a + b,
            ReduceOp::Prod => a * b,
            ReduceOp::Min | ReduceOp::ArgMin => T::minimum(a, b),
            ReduceOp::Max | ReduceOp::ArgMax => T::maximum(a, b),
            ReduceOp::Any => truth(a.is_true() || b.is_true()),
            ReduceOp::All => truth(a.is_true() && b.is_true()),
        }
    }

    /// Whether `v`, met after `best` (at a larger position), replaces it in an argmin / argmax: never
    /// after a NaN, always for a NaN, otherwise only if strictly smaller (argmin) or larger (argmax),
    /// so the first extreme and the first NaN are kept.
    pub fn arg_replaces<T: Real>(self, best: T, v: T) -> bool {
        if best.is_nan() {
            return false;
        }
        v.is_nan()
            || if self == ReduceOp::ArgMax {
                v > best
            } else {
                v < best
            }
    }

    /// The result of an f64 accumulator `acc` that started from the identity (`started: false`) or
    /// from a given value: a sum started at -0.0 (the exact identity) gets +0.0 added once, which
    /// gives NumPy's answer from its +0.0 start (a sum of -0.0s, or of nothing, is +0.0); a sum that
    /// started from a given value, and every other reduction, is `acc` as it is.
    pub fn finish(self, acc: f64, started: bool) -> f64 {
        if self == ReduceOp::Sum && !started {
            acc + 0.0
        } else {
            acc
        }
    }

    /// Whether the reduction takes an `initial` value (sum, prod, min, max; as NumPy's ufunc reductions).
    pub fn takes_initial(self) -> bool {
        matches!(
            self,
            ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Min | ReduceOp::Max
        )
    }
}

/// Where each output's accumulator starts: the op's identity, NumPy's `initial` (one value for every
/// output, applied exactly once per output), or each output's previous value (`out = out ⊕ reduce(x)`,
/// Julia's `sum!`). Only sum, prod, min and max take a start other than the identity; the value is
/// held in the accumulator's type (f64 for sums and products, the kernel's dtype for min and max), so an
/// f32 sum starts from the f64 value and is rounded once at the end. With a start, min and max of an
/// empty extent are the start, and an empty sum is the start (not +0.0).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Start<'a> {
    /// The op's identity (0 for sum, 1 for prod, -inf for max, +inf for min).
    Identity,
    /// NumPy's `initial`: one value for every output, applied once per output.
    Initial(f64),
    /// One value per output element, in C order.
    Each(&'a [f64]),
}

impl Start<'_> {
    /// Checks that `op` takes this start, and that `Each` holds `n_out` values.
    pub fn check(&self, op: ReduceOp, n_out: usize) -> Result<()> {
        match self {
            Start::Identity => Ok(()),
            _ if op.takes_initial() => match self {
                Start::Each(v) if v.len() != n_out => Err(IrError::InvalidReduction(format!(
                    "{} start values for {n_out} outputs",
                    v.len()
                ))),
                _ => Ok(()),
            },
            _ => Err(IrError::InvalidReduction(format!(
                "{} takes no initial value",
                op.name()
            ))),
        }
    }

    /// The start of output `o`, if not the identity (none past the end of `Each`, which
    /// [`Start::check`] makes one per output: a kernel without outputs asks for none).
    pub fn at(&self, o: usize) -> Option<f64> {
        match self {
            Start::Identity => None,
            Start::Initial(v) => Some(*v),
            Start::Each(v) => v.get(o).copied(),
        }
    }
}

/// What a kernel does with the body's value at each point.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum KernelKind {
    /// One output element per point of the iteration space.
    Map,
    /// Fold the values over `axes` (sorted, distinct); the other axes remain, in order.
    Reduce {
        /// The reduction.
        op: ReduceOp,
        /// The reduced axes, sorted and distinct.
        axes: Vec<usize>,
    },
    /// A cumulative sum, product, max or min of the body's values along one axis (or over the
    /// flattened space): one output per point (see [`crate::scan`]).
    Scan(Scan),
    /// Two statistics of the body's values over `axes` (sorted, distinct) in one pass (see
    /// [`crate::compound`]): the result has a leading axis of length 2, then the kept axes.
    Compound {
        /// The pair of statistics.
        op: CompoundOp,
        /// The reduced axes, sorted and distinct.
        axes: Vec<usize>,
    },
    /// Several reductions over the same iteration space and `axes` (sorted, distinct) in one pass
    /// (sibling reductions): component `c` folds the values of root `c` (`body`, then `extra`, in
    /// the one arena: a node they share is evaluated once per point) with `ops[c]`, giving exactly
    /// the bits the reduction of that root alone gives. The result has a leading axis of
    /// `ops.len()`, then the kept axes. Sum, prod, min and max of values (not truth values).
    Siblings {
        /// Each component's reduction.
        ops: Vec<ReduceOp>,
        /// The reduced axes, sorted and distinct.
        axes: Vec<usize>,
    },
}

impl KernelKind {
    /// The reduced axes (none for a map or a scan).
    pub fn reduced_axes(&self) -> &[usize] {
        match self {
            KernelKind::Map | KernelKind::Scan(_) => &[],
            KernelKind::Reduce { axes, .. }
            | KernelKind::Compound { axes, .. }
            | KernelKind::Siblings { axes, .. } => axes,
        }
    }
}

/// A named input: its name and its own shape (before broadcasting to the iteration shape).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct InputDecl {
    /// The name the input is bound by.
    pub name: String,
    /// The input's own shape, which broadcasts to the kernel's iteration shape.
    pub shape: Vec<usize>,
    /// The element type the input's memory holds where it is not the kernel's `dtype` (an integer
    /// or bool array, a float32 one in a float64 kernel): each element is converted to the dtype
    /// where it is read, as NumPy's cast (`int64` to the nearest `float64`, `bool` to 1 / 0), so
    /// the kernel computes on the dtype's values and no converted copy is made. `None`: the input
    /// holds the dtype (or was converted before the kernel, see the executor).
    pub stored: Option<ElemType>,
}

impl InputDecl {
    /// An input of `shape` holding the kernel's dtype.
    pub fn new(name: impl Into<String>, shape: Vec<usize>) -> InputDecl {
        InputDecl {
            name: name.into(),
            shape,
            stored: None,
        }
    }
}

/// One kernel: a scalar body evaluated over an iteration space, mapped or reduced.
///
/// Every input is read in the kernel's `dtype` (converted where it is read where its memory holds
/// another type: [`InputDecl::stored`]), and its shape broadcasts to `shape`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KernelIR {
    /// The float type the kernel computes in, [`ElemType::F64`] or [`ElemType::F32`] (every input is
    /// read in it, see [`InputDecl::stored`]; [`KernelIR::validate`] refuses any other).
    pub dtype: ElemType,
    /// The inputs, in the order [`Node::Input`] numbers them.
    pub inputs: Vec<InputDecl>,
    /// The iteration shape: the broadcast of every input's shape.
    pub shape: Vec<usize>,
    /// The hash-consed nodes of the body and of the extra outputs.
    pub arena: ExprArena,
    /// The body: output 0's value at each point.
    pub body: NodeId,
    /// The bodies of further outputs (outputs 1, 2, ...), in the same arena: each one more map, an
    /// array of the iteration shape, computed in the same pass as `body` (every node the outputs
    /// share is evaluated once per point). Empty for a kernel of one output. Only a map, or a
    /// reduction of every axis (sum, prod, min, max: `y = x*2; s = sum(x*2)` reads `x` once), has
    /// more; in [`KernelKind::Siblings`] they are instead the roots of components 1, 2, ... of the
    /// one result ([`KernelIR::map_extra`] is empty there).
    pub extra: Vec<NodeId>,
    /// What the kernel does with the body's value at each point.
    pub kind: KernelKind,
}

impl KernelIR {
    /// Why the kernel must be typed before it runs (an opcode of integers, or a cast), if it must:
    /// the float path (typed trivially: [`crate::typed::TypedKernel::of_float`]) and the JIT take
    /// the rest (the typed ones: [`crate::typed`]).
    pub fn needs_typing(&self) -> Option<String> {
        self.arena
            .reachable_all(&self.roots())
            .into_iter()
            .find_map(|id| match *self.arena.node(id) {
                Node::Cast(t, _) => Some(format!("a cast to {t}")),
                Node::Binary(op, _, _) if BinaryOp::INTEGER.contains(&op) => {
                    Some(format!("the integer operator {op}"))
                }
                Node::Unary(UnaryOp::Invert, _) => Some("the integer operator invert".into()),
                Node::Binary(BinaryOp::Complex, _, _) => Some("a complex number".into()),
                Node::Bytes(_) | Node::Binary(BinaryOp::Contains, _, _) => Some("a byte string".into()),
                Node::Unary(op, _) if UnaryOp::COMPLEX.contains(&op) => {
                    Some(format!("the complex function {op}"))
                }
                _ => None,
            })
    }

    /// Checks the kernel's invariants: input numbers and index axes in range, reduction axes valid.
    pub fn validate(&self) -> Result<()> {
        if !self.dtype.is_float() {
            return Err(IrError::Malformed(format!(
                "a kernel computes in float32 or float64, not {}",
                self.dtype
            )));
        }
        if self.body.index() >= self.arena.len() {
            return Err(IrError::Malformed(format!(
                "the body %{} is not a node of the kernel's arena of {} nodes",
                self.body.index(),
                self.arena.len()
            )));
        }
        checked_size(&self.shape)?;
        let rank = self.shape.len();
        if rank > crate::shape::MAX_DIMS {
            return Err(IrError::TooManyDims {
                rank,
                max: crate::shape::MAX_DIMS,
            });
        }
        if let KernelKind::Siblings { ops, .. } = &self.kind {
            self.validate_siblings(ops)?;
        } else if !self.extra.is_empty() && !self.takes_extra() {
            return Err(IrError::Malformed(format!(
                "a kernel of {} outputs must be a map or a sum, prod, min or max of every axis",
                self.extra.len() + 1
            )));
        }
        if let Some(bad) = self.extra.iter().find(|e| e.index() >= self.arena.len()) {
            return Err(IrError::Malformed(format!(
                "the output %{} is not a node of the kernel's arena of {} nodes",
                bad.index(),
                self.arena.len()
            )));
        }
        for id in self.arena.reachable_all(&self.roots()) {
            match *self.arena.node(id) {
                Node::Input(n) if n as usize >= self.inputs.len() => {
                    return Err(IrError::Arity {
                        expected: self.inputs.len(),
                        got: n as usize + 1,
                    });
                }
                Node::Index(axis) if axis as usize >= rank => {
                    return Err(IrError::IndexAxis {
                        axis: axis as usize,
                        rank,
                    });
                }
                _ => {}
            }
        }
        if let KernelKind::Scan(Scan { axis: Some(a), .. }) = self.kind
            && a >= rank
        {
            return Err(IrError::AxisOutOfRange {
                axis: a as isize,
                rank,
            });
        }
        if let KernelKind::Reduce { axes, .. }
        | KernelKind::Compound { axes, .. }
        | KernelKind::Siblings { axes, .. } = &self.kind
        {
            for (i, &a) in axes.iter().enumerate() {
                if a >= rank {
                    return Err(IrError::AxisOutOfRange {
                        axis: a as isize,
                        rank,
                    });
                }
                if i > 0 && axes[i - 1] >= a {
                    return Err(IrError::DuplicateAxis { axis: a });
                }
            }
        }
        Ok(())
    }

    /// Whether the kernel may have further map outputs: a map, or a sum, prod, min or max of every
    /// axis of at least one.
    pub fn takes_extra(&self) -> bool {
        match &self.kind {
            KernelKind::Map => true,
            KernelKind::Reduce { op, axes } => {
                !op.is_arg()
                    && !matches!(op, ReduceOp::Any | ReduceOp::All)
                    && !self.shape.is_empty()
                    && axes.len() == self.shape.len()
            }
            KernelKind::Scan(_) | KernelKind::Compound { .. } | KernelKind::Siblings { .. } => false,
        }
    }

    /// Checks a sibling kernel: one root per component, each a sum, prod, min or max of values.
    fn validate_siblings(&self, ops: &[ReduceOp]) -> Result<()> {
        if ops.len() != self.extra.len() + 1 || ops.len() < 2 {
            return Err(IrError::Malformed(format!(
                "sibling reductions of {} ops over {} bodies",
                ops.len(),
                self.extra.len() + 1
            )));
        }
        let bad_op = ops.iter().find(|op| !Self::sibling_op(**op));
        let logical = self
            .roots()
            .into_iter()
            .any(|r| self.arena.node(r).is_logical(&self.arena));
        if bad_op.is_some() || logical {
            return Err(IrError::Malformed(
                "sibling reductions are sums, products, minima and maxima of values".into(),
            ));
        }
        Ok(())
    }

    /// Whether `op` may be a component of [`KernelKind::Siblings`].
    pub fn sibling_op(op: ReduceOp) -> bool {
        matches!(op, ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Min | ReduceOp::Max)
    }

    /// Component `c` of a sibling kernel alone: the reduction of root `c` (the oracle of that
    /// component, which the merged pass gives bit for bit).
    pub fn component(&self, c: usize) -> KernelIR {
        let KernelKind::Siblings { ops, axes } = &self.kind else {
            unreachable!("a component of sibling reductions");
        };
        KernelIR {
            body: self.roots()[c],
            extra: Vec::new(),
            kind: KernelKind::Reduce {
                op: ops[c],
                axes: axes.clone(),
            },
            ..self.clone()
        }
    }

    /// The bodies of further map outputs (see [`KernelIR::extra`]; none for sibling reductions,
    /// whose further roots are components of the one result).
    pub fn map_extra(&self) -> &[NodeId] {
        match self.kind {
            KernelKind::Siblings { .. } => &[],
            _ => &self.extra,
        }
    }

    /// Every output's body: `body`, then `extra`.
    pub fn roots(&self) -> Vec<NodeId> {
        std::iter::once(self.body)
            .chain(self.extra.iter().copied())
            .collect()
    }

    /// The number of outputs.
    pub fn n_outputs(&self) -> usize {
        1 + self.map_extra().len()
    }

    /// Output `o` alone: the same kernel with `roots()[o]` as its body and no other output (a
    /// further output is a map).
    pub fn output(&self, o: usize) -> KernelIR {
        KernelIR {
            body: self.roots()[o],
            extra: Vec::new(),
            kind: if o == 0 {
                self.kind.clone()
            } else {
                KernelKind::Map
            },
            ..self.clone()
        }
    }

    /// The element type of output `o` (see [`KernelIR::output_type`]).
    pub fn output_type_of(&self, o: usize) -> ElemType {
        match o.checked_sub(1).map(|e| self.extra[e]) {
            None => self.output_type(),
            // only a map has further outputs
            Some(root) if self.arena.node(root).is_logical(&self.arena) => ElemType::Bool,
            Some(_) => self.dtype,
        }
    }

    /// The shape of the result: the iteration shape less the reduced axes.
    pub fn output_shape(&self) -> Vec<usize> {
        match &self.kind {
            KernelKind::Map | KernelKind::Scan(Scan { axis: Some(_), .. }) => self.shape.clone(),
            KernelKind::Scan(Scan { axis: None, .. }) => vec![self.shape.iter().product()],
            KernelKind::Reduce { axes, .. } => self
                .shape
                .iter()
                .enumerate()
                .filter(|(i, _)| !axes.contains(i))
                .map(|(_, &d)| d)
                .collect(),
            KernelKind::Compound { axes, .. } | KernelKind::Siblings { axes, .. } => {
                std::iter::once(self.components())
                    .chain(
                        self.shape
                            .iter()
                            .enumerate()
                            .filter(|(i, _)| !axes.contains(i))
                            .map(|(_, &d)| d),
                    )
                    .collect()
            }
        }
    }

    /// The length of the leading axis of a compound or sibling result (1 for any other kernel).
    pub fn components(&self) -> usize {
        match &self.kind {
            KernelKind::Compound { .. } => 2,
            KernelKind::Siblings { ops, .. } => ops.len(),
            _ => 1,
        }
    }

    /// The element type of the result, as NumPy would type it (scans: always the kernel's float type).
    pub fn output_type(&self) -> ElemType {
        let logical = self.arena.node(self.body).is_logical(&self.arena);
        match &self.kind {
            KernelKind::Map if logical => ElemType::Bool,
            KernelKind::Map => self.dtype,
            // a scan of truth values is a float scan (NumPy would give int64 for cumsum of bools)
            KernelKind::Scan(_) | KernelKind::Compound { .. } | KernelKind::Siblings { .. } => self.dtype,
            KernelKind::Reduce { op, .. } => match op {
                ReduceOp::Any | ReduceOp::All => ElemType::Bool,
                ReduceOp::ArgMin | ReduceOp::ArgMax => ElemType::I64,
                ReduceOp::Sum | ReduceOp::Prod if logical => ElemType::I64,
                ReduceOp::Min | ReduceOp::Max if logical => ElemType::Bool,
                _ => self.dtype,
            },
        }
    }
}
