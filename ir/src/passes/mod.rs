//! Passes over a kernel. Each pass is a file of its own, opening with what it does and declines.

pub mod contract;
pub mod prefix_scan;
pub mod strength;

use crate::expr::{ExprArena, Node, NodeId};
use crate::kernel::KernelIR;

/// Rebuilds `kernel`'s reachable nodes in post order into a fresh arena, each with its operands
/// already rebuilt; `replace` (given the new arena, the node's id in `kernel`, and the node with its
/// operands rebuilt) may emit a node's replacement into the new arena (and says so with `Some`),
/// otherwise the node is kept. `None` when nothing was replaced (the caller keeps the
/// kernel as it is).
pub fn rebuild(
    kernel: &KernelIR,
    mut replace: impl FnMut(&mut ExprArena, NodeId, Node) -> Option<NodeId>,
) -> Option<KernelIR> {
    let mut arena = ExprArena::new();
    let roots = kernel.roots();
    let top = roots.iter().map(|r| r.index()).max().unwrap_or(0);
    let mut map: Vec<Option<NodeId>> = vec![None; top + 1];
    let mut replaced = false;
    for id in kernel.arena.reachable_all(&roots) {
        let node = kernel
            .arena
            .node(id)
            .map_operands(|o| map[o.index()].expect("operands come first in post order"));
        let new = match replace(&mut arena, id, node) {
            Some(r) => {
                replaced = true;
                r
            }
            None => arena.intern(node),
        };
        map[id.index()] = Some(new);
    }
    replaced.then(|| KernelIR {
        arena,
        body: map[kernel.body.index()].expect("the body is reachable"),
        extra: kernel
            .extra
            .iter()
            .map(|e| map[e.index()].expect("every output is reachable"))
            .collect(),
        ..kernel.clone()
    })
}
