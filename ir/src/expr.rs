//! The scalar expression language, stored in a hash-consed arena.
//!
//! A [`Node`] is one operation whose operands are earlier nodes ([`NodeId`]s), so the arena is in
//! post order: a node's operands always have smaller ids. Interning a node that already exists returns
//! the existing id, so structurally equal subexpressions are one node (common subexpressions are
//! computed once) and two arenas built the same way are equal, which lets an arena key a compile
//! cache. Literals are keyed by their bit pattern, so `0.0` and `-0.0` are different nodes and NaN is
//! equal to itself.

use crate::bytes::ByteStr;
use crate::op::{BinaryOp, UnaryOp};
use crate::promote::ElemType;
use rustc_hash::FxHashMap as HashMap;

/// The id of a node in an [`ExprArena`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(u32);

impl NodeId {
    /// The position of the node in its arena.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The id of the node at position `i` of its arena.
    pub(crate) fn at(i: usize) -> NodeId {
        NodeId(u32::try_from(i).expect("fewer than 2^32 nodes"))
    }
}

/// One scalar operation. Evaluated at every point of a kernel's iteration space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Node {
    /// The value of input number `n` at the current point (after broadcasting).
    Input(u32),
    /// A constant, stored as the bits of an f64 and rounded to the kernel's dtype when used.
    Literal(u64),
    /// An integer constant as Python writes it (a weak int, NEP 50): it takes the type of the array
    /// it meets. A float kernel reads it as the nearest f64, rounded to the kernel's dtype where used,
    /// as a [`Node::Literal`].
    Int(i64),
    /// The current position along axis `n` of the iteration space, as a float.
    Index(u32),
    /// A byte-string constant (`b'abc'`, of type `S3`: [`crate::bytes`]); only typed kernels
    /// compute with it.
    Bytes(ByteStr),
    /// The operand converted to a type, as NumPy's `astype` (see [`crate::typed`]): only typed
    /// kernels hold it (compiled by kiln-jit in their own types, `kiln_jit::compile_typed`).
    Cast(ElemType, NodeId),
    /// A unary operation of one operand.
    Unary(UnaryOp, NodeId),
    /// A binary operation of two operands.
    Binary(BinaryOp, NodeId, NodeId),
    /// `where(c, a, b)`: `a` where `c` is true (nonzero or NaN), else `b`.
    Where(NodeId, NodeId, NodeId),
    /// `fma(a, b, c)`: `a * b + c` rounded once (IEEE fusedMultiplyAdd). No front end writes it:
    /// the `approximate` profile's contraction ([`crate::passes::contract`]) makes it of `a*b + c`.
    Fma(NodeId, NodeId, NodeId),
}

impl Node {
    /// A literal node holding `v`.
    pub fn literal(v: f64) -> Node {
        Node::Literal(v.to_bits())
    }

    /// The operands of this node.
    pub fn operands(&self) -> impl Iterator<Item = NodeId> {
        let (n, ops) = match *self {
            Node::Input(_) | Node::Literal(_) | Node::Int(_) | Node::Index(_) | Node::Bytes(_) => {
                (0, [NodeId(0); 3])
            }
            Node::Unary(_, a) | Node::Cast(_, a) => (1, [a, a, a]),
            Node::Binary(_, a, b) => (2, [a, b, b]),
            Node::Where(c, a, b) | Node::Fma(c, a, b) => (3, [c, a, b]),
        };
        ops.into_iter().take(n)
    }

    /// The node with each operand `o` replaced by `f(o)` (a leaf as it is): how a pass copies a node
    /// into another arena whose operands it has already copied.
    pub fn map_operands(self, mut f: impl FnMut(NodeId) -> NodeId) -> Node {
        match self {
            node @ (Node::Input(_) | Node::Literal(_) | Node::Int(_) | Node::Index(_) | Node::Bytes(_)) => {
                node
            }
            Node::Cast(t, a) => Node::Cast(t, f(a)),
            Node::Unary(op, a) => Node::Unary(op, f(a)),
            Node::Binary(op, a, b) => Node::Binary(op, f(a), f(b)),
            Node::Where(c, a, b) => Node::Where(f(c), f(a), f(b)),
            Node::Fma(a, b, c) => Node::Fma(f(a), f(b), f(c)),
        }
    }

    /// Whether the node's value is a truth value (1 / 0) that NumPy would type as bool.
    pub fn is_logical(&self, arena: &ExprArena) -> bool {
        match *self {
            Node::Unary(op, _) => op.is_logical(),
            Node::Binary(op, _, _) => op.is_logical(),
            Node::Where(_, a, b) => arena.node(a).is_logical(arena) && arena.node(b).is_logical(arena),
            _ => false,
        }
    }
}

/// A hash-consed arena of [`Node`]s in post order.
#[derive(Debug, Clone, Default)]
pub struct ExprArena {
    nodes: Vec<Node>,
    lookup: HashMap<Node, NodeId>,
}

impl PartialEq for ExprArena {
    fn eq(&self, other: &Self) -> bool {
        self.nodes == other.nodes
    }
}

impl Eq for ExprArena {}

impl std::hash::Hash for ExprArena {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.nodes.hash(state)
    }
}

impl ExprArena {
    /// An empty arena.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `node`, or returns the id of the equal node already present.
    ///
    /// # Panics
    /// If an operand id does not belong to this arena (a broken invariant of the caller).
    pub fn intern(&mut self, node: Node) -> NodeId {
        if let Some(&id) = self.lookup.get(&node) {
            return id;
        }
        for op in node.operands() {
            assert!(
                op.index() < self.nodes.len(),
                "operand {op:?} is not in the arena"
            );
        }
        let id = NodeId(u32::try_from(self.nodes.len()).expect("more than 2^32 nodes"));
        self.nodes.push(node);
        self.lookup.insert(node, id);
        id
    }

    /// Input number `n` of the kernel (see [`Node::Input`]).
    pub fn input(&mut self, n: u32) -> NodeId {
        self.intern(Node::Input(n))
    }
    /// A weak float literal (see [`Node::Literal`]).
    pub fn literal(&mut self, v: f64) -> NodeId {
        self.intern(Node::literal(v))
    }
    /// A byte-string constant (see [`Node::Bytes`]).
    pub fn bytes(&mut self, v: &[u8]) -> NodeId {
        self.intern(Node::Bytes(ByteStr::new(v)))
    }
    /// A weak integer literal (see [`Node::Int`]).
    pub fn int(&mut self, v: i64) -> NodeId {
        self.intern(Node::Int(v))
    }
    /// `a` converted to `ty` (see [`Node::Cast`]).
    pub fn cast(&mut self, ty: ElemType, a: NodeId) -> NodeId {
        self.intern(Node::Cast(ty, a))
    }
    /// The position along `axis` of the iteration space (see [`Node::Index`]).
    pub fn index(&mut self, axis: u32) -> NodeId {
        self.intern(Node::Index(axis))
    }
    /// `op(a)`.
    pub fn unary(&mut self, op: UnaryOp, a: NodeId) -> NodeId {
        self.intern(Node::Unary(op, a))
    }
    /// `op(a, b)`.
    pub fn binary(&mut self, op: BinaryOp, a: NodeId, b: NodeId) -> NodeId {
        self.intern(Node::Binary(op, a, b))
    }
    /// `where(c, a, b)` (see [`Node::Where`]).
    pub fn select(&mut self, c: NodeId, a: NodeId, b: NodeId) -> NodeId {
        self.intern(Node::Where(c, a, b))
    }
    /// `a * b + c`, rounded once (see [`Node::Fma`]).
    pub fn fma(&mut self, a: NodeId, b: NodeId, c: NodeId) -> NodeId {
        self.intern(Node::Fma(a, b, c))
    }

    /// The node at position `i` (every node of the arena, reachable or not).
    pub fn node_at(&self, i: usize) -> &Node {
        &self.nodes[i]
    }

    /// The node behind `id`.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the arena has no nodes.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// The iteration axes that `Index` nodes reachable from `root` read, sorted and distinct.
    pub fn index_axes(&self, root: NodeId) -> Vec<usize> {
        self.index_axes_all(&[root])
    }

    /// The iteration axes any of `roots` reads through `Index` nodes, sorted and distinct.
    pub fn index_axes_all(&self, roots: &[NodeId]) -> Vec<usize> {
        let mut v: Vec<usize> = self
            .reachable_all(roots)
            .into_iter()
            .filter_map(|id| match *self.node(id) {
                Node::Index(a) => Some(a as usize),
                _ => None,
            })
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The ids of the nodes `root` depends on, itself included, in post order (operands first).
    pub fn reachable(&self, root: NodeId) -> Vec<NodeId> {
        self.reachable_all(&[root])
    }

    /// The nodes any of `roots` reaches, in evaluation order (operands first), each once: the nodes
    /// of a kernel of several outputs, every shared subexpression evaluated once.
    pub fn reachable_all(&self, roots: &[NodeId]) -> Vec<NodeId> {
        let Some(top) = roots.iter().map(|r| r.index()).max() else {
            return Vec::new();
        };
        let root = NodeId(top as u32);
        let mut live = vec![false; root.index() + 1];
        for r in roots {
            live[r.index()] = true;
        }
        for i in (0..=root.index()).rev() {
            if live[i] {
                for op in self.nodes[i].operands() {
                    live[op.index()] = true;
                }
            }
        }
        (0..=root.index())
            .filter(|&i| live[i])
            .map(|i| NodeId(i as u32))
            .collect()
    }
}
