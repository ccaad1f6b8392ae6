//! Maps with bool results, packed: 8 or 16 points an iteration of 2 or 4 lanes a step
//! ([`Gen::packs_bools`]), each result's bools stored by one store. Every value of these points is
//! computed before the first store, as `Skeleton::item` keeps it (an output may be an input
//! updated in place: call.rs).
//!
//! A bool value is computed in one of two forms:
//! - **lanes**: a mask of a step's lanes, as the body computes every value (`Skeleton::values`);
//! - **bytes**: the iteration's bools in the low bytes of one `i8x16`, a byte -1 or 0 each.
//!
//! A bool input read point by point where it lies is bytes as it is loaded (one load, one compare
//! with zero: `Gen::load_truths`), and lanes by a byte shuffle a step (`Gen::spread_truths`) where
//! a lane value reads it. A logical operation of two bools (and, or, xor, the comparisons of
//! bools; not) that has an operand in bytes is computed in bytes, an operand in lanes packed first
//! (`Gen::pack_masks`, as a lanes result is packed to be stored); a result in bytes is stored as it
//! is. `b & (x < 0.7)` of a bool `b` and float64 `x` packs its comparison's four masks and ands
//! the bytes with `b`'s, where spreading `b` into each step's lanes took a shuffle a step beside
//! the packs, on the one port both run on at Intel (port 5).

use super::{Row, Skeleton};
use crate::lower::{Gen, W};
use cranelift_codegen::ir::{InstBuilder, Value};
use kiln_ir::{ElemType, Node, NodeId, UnaryOp};

impl Skeleton<'_, '_> {
    /// One iteration of `count` steps (`jb` the byte offset of its first point, `flat` that
    /// point's flat index) of a map with a bool result, packed.
    pub(super) fn packed_iteration(&self, g: &mut Gen<'_, '_>, r: &Row, jb: Value, flat: Value, count: i64) {
        let tk = g.typed.expect("bool results are a typed kernel's");
        let arena = &self.f.key.arena;
        let width = self.f.lanes;
        let steps = count as usize;
        let n = (count * width) as usize;
        let reads = self.bool_reads(r);
        let order = self.f.order_of(&self.roots, &[]);
        let is_bool = |id: NodeId| tk.type_of(id) == ElemType::Bool;
        // which nodes are computed in bytes (an operand's node before its own, in `order`)
        let mut bytes = vec![false; arena.len()];
        for &id in &order {
            bytes[id.index()] = match *arena.node(id) {
                Node::Input(i) => reads.iter().any(|&(k, _)| k == i as usize),
                Node::Unary(UnaryOp::Not | UnaryOp::Invert | UnaryOp::Abs, a) => {
                    is_bool(a) && bytes[a.index()]
                }
                Node::Binary(_, a, b) => {
                    is_bool(id) && is_bool(a) && is_bool(b) && (bytes[a.index()] || bytes[b.index()])
                }
                _ => false,
            };
        }
        let in_bytes = |id: NodeId| bytes[id.index()];
        // the values computed in lanes: each result that is not in bytes, then each operand in
        // lanes of a node in bytes
        let mut lanes: Vec<NodeId> = Vec::new();
        let wanted = self.roots.iter().copied().filter(|&id| !in_bytes(id)).chain(
            order
                .iter()
                .filter(|&&id| in_bytes(id))
                .flat_map(|&id| arena.node(id).operands())
                .filter(|&op| !in_bytes(op)),
        );
        for id in wanted {
            if !lanes.contains(&id) {
                lanes.push(id);
            }
        }
        // the bool inputs' truths, once for the iteration; each step's lanes of them where a
        // value in lanes reads them (unread shuffles are dropped by Cranelift)
        let shift = crate::run::stored_shift(g.size as usize, ElemType::Bool);
        let mut truths: Vec<(usize, Value)> = Vec::new();
        let mut loaded: Vec<Vec<(usize, Value)>> = vec![Vec::new(); steps];
        for &(i, base) in &reads {
            let at = g.b.ins().iadd(base, jb);
            let at = g.own_address(at, shift);
            let t = g.load_truths(at, n);
            truths.push((i, t));
            for (p, v) in g.spread_truths(t, steps).into_iter().enumerate() {
                loaded[p].push((i, v));
            }
        }
        let in_lanes: Vec<Vec<Value>> = (0..count)
            .map(|p| self.values_loaded(g, r, W::Vector, jb, flat, p * width, &loaded[p as usize], &lanes))
            .collect();
        let lanes_of = |id: NodeId| -> Vec<Value> {
            let k = lanes.iter().position(|&l| l == id).expect("a value in lanes");
            in_lanes.iter().map(|s| s[k]).collect()
        };
        // the nodes in bytes, in order
        let mut packed: Vec<Option<Value>> = vec![None; arena.len()];
        let byte_value = |g: &mut Gen<'_, '_>, packed: &[Option<Value>], id: NodeId| match packed[id.index()]
        {
            Some(v) => v,
            None => g.pack_masks(&lanes_of(id)),
        };
        for &id in order.iter().filter(|&&id| in_bytes(id)) {
            let v = match *arena.node(id) {
                Node::Input(i) => {
                    let (_, t) = truths
                        .iter()
                        .find(|t| t.0 == i as usize)
                        .expect("a read bool input");
                    *t
                }
                Node::Unary(op, a) => {
                    let x = byte_value(g, &packed, a);
                    g.unary(op, x, ElemType::Bool)
                }
                Node::Binary(op, a, b) => {
                    let x = byte_value(g, &packed, a);
                    let y = byte_value(g, &packed, b);
                    g.binary(op, x, y, ElemType::Bool, None)
                }
                _ => unreachable!("only inputs and logical operations are computed in bytes"),
            };
            packed[id.index()] = Some(v);
        }
        // each output's steps stored together
        let rows =
            std::iter::once(r.out_row.expect("map rows have an output")).chain(r.extra_rows.iter().copied());
        for (row, &root) in rows.zip(&self.roots) {
            let addr = g.b.ins().iadd(row, jb);
            match packed[root.index()] {
                Some(v) => {
                    let at = g.stored_at(ElemType::Bool, addr, 0);
                    g.store_packed(v, n, at);
                }
                None => g.store_steps(root, &lanes_of(root), addr, 0, width * g.size),
            }
        }
    }
}
