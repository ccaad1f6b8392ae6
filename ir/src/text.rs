//! The stable text form of a kernel, for `kiln explain` and golden tests.
//!
//! ```text
//! kernel map f64 [3, 4] -> f64 [3, 4]
//!   in0 x: [3, 1]
//!   in1 y: [4]
//!   %0 = in0
//!   %1 = lit 2.0
//!   %2 = mul %0 %1
//!   %3 = in1
//!   %4 = add %2 %3
//!   out %4
//! ```
//!
//! Only the nodes the body reaches are printed, numbered from 0 in post order, so the text does not
//! depend on how the arena was built. Literals print as Rust's shortest round-trip form of the f64.

use crate::expr::{ExprArena, Node, NodeId};
use crate::kernel::{KernelIR, KernelKind};
use std::collections::HashMap;
use std::fmt;

impl fmt::Display for KernelIR {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write_kind(f, &self.kind)?;
        writeln!(
            f,
            " {} {:?} -> {} {:?}",
            self.dtype.short(),
            self.shape,
            self.output_type().short_name(),
            self.output_shape()
        )?;
        for (i, input) in self.inputs.iter().enumerate() {
            write!(f, "  in{i} {}: {:?}", input.name, input.shape)?;
            match input.stored {
                Some(t) => writeln!(f, " stored {t}")?,
                None => writeln!(f)?,
            }
        }
        if self.extra.is_empty() {
            return write_body(f, &self.arena, self.body, "  ");
        }
        write_outputs(f, &self.arena, &self.roots(), "  ")
    }
}

/// Writes `kernel map`, `kernel reduce sum axes=[0]`, ...: the head of a kernel's text.
pub fn write_kind(f: &mut impl fmt::Write, kind: &KernelKind) -> fmt::Result {
    match kind {
        KernelKind::Map => write!(f, "kernel map")?,
        KernelKind::Reduce { op, axes } => write!(f, "kernel reduce {} axes={axes:?}", op.name())?,
        KernelKind::Compound { op, axes } => write!(f, "kernel compound {} axes={axes:?}", op.name())?,
        KernelKind::Siblings { ops, axes } => {
            let names: Vec<&str> = ops.iter().map(|op| op.name()).collect();
            write!(f, "kernel siblings {} axes={axes:?}", names.join(","))?
        }
        KernelKind::Scan(s) => {
            write!(f, "kernel scan {}", s.op.name())?;
            match s.axis {
                Some(a) => write!(f, " axis={a}")?,
                None => write!(f, " axis=None")?,
            }
            if s.exclusive {
                write!(f, " exclusive")?;
            }
            if s.reverse {
                write!(f, " reverse")?;
            }
            if let Some(v) = s.initial() {
                write!(f, " initial={v:?}")?;
            }
        }
    }
    Ok(())
}

/// Writes the nodes any of `roots` reaches, one per line (each shared node once), then one
/// `out<k> %n` line per output.
pub fn write_outputs(
    f: &mut impl fmt::Write,
    arena: &ExprArena,
    roots: &[NodeId],
    indent: &str,
) -> fmt::Result {
    let names = write_nodes(f, arena, roots, indent)?;
    for (k, r) in roots.iter().enumerate() {
        writeln!(f, "{indent}out{k} %{}", names[r])?;
    }
    Ok(())
}

/// Writes the nodes `root` reaches, one per line, then `out %n`.
pub fn write_body(f: &mut impl fmt::Write, arena: &ExprArena, root: NodeId, indent: &str) -> fmt::Result {
    let names = write_nodes(f, arena, &[root], indent)?;
    writeln!(f, "{indent}out %{}", names[&root])
}

/// Writes the nodes any of `roots` reaches, one per line; their numbers.
fn write_nodes(
    f: &mut impl fmt::Write,
    arena: &ExprArena,
    roots: &[NodeId],
    indent: &str,
) -> Result<HashMap<NodeId, usize>, fmt::Error> {
    let mut names: HashMap<NodeId, usize> = HashMap::new();
    for id in arena.reachable_all(roots) {
        let n = names.len();
        names.insert(id, n);
        let r = |id: NodeId| names[&id];
        write!(f, "{indent}%{n} = ")?;
        match *arena.node(id) {
            Node::Input(i) => writeln!(f, "in{i}")?,
            Node::Literal(bits) => writeln!(f, "lit {:?}", f64::from_bits(bits))?,
            Node::Int(v) => writeln!(f, "int {v}")?,
            Node::Index(axis) => writeln!(f, "index {axis}")?,
            Node::Bytes(s) => writeln!(f, "bytes {s}")?,
            Node::Cast(t, a) => writeln!(f, "cast {t} %{}", r(a))?,
            Node::Unary(op, a) => writeln!(f, "{op} %{}", r(a))?,
            Node::Binary(op, a, b) => writeln!(f, "{op} %{} %{}", r(a), r(b))?,
            Node::Where(c, a, b) => writeln!(f, "where %{} %{} %{}", r(c), r(a), r(b))?,
            Node::Fma(a, b, c) => writeln!(f, "fma %{} %{} %{}", r(a), r(b), r(c))?,
        }
    }
    Ok(names)
}
