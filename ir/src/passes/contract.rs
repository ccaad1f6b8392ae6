//! FMA contraction: `a*b + c` into one fused multiply-add (the `approximate` profile only).
//!
//! `fma(a, b, c)` rounds `a*b + c` once where the written form rounds twice, so it may differ from it
//! in the last bit (and where `a*b` alone overflows, `fma` can be finite): approximate, never run by
//! the `default` and `reproducible` profiles, which keep the user's arithmetic as written. Both the
//! interpreter (`mul_add`) and kiln-jit (`vfmadd` where the host has FMA, else a call of libm's
//! correctly rounded `fma`) compute the same single rounding, so the contracted kernel is bit-exact
//! between them and the same on every machine.
//!
//! Rules, on each `add` and `sub` whose operand is a product (the left one first):
//! `a*b + c` and `c + a*b` -> `fma(a, b, c)`; `a*b - c` -> `fma(a, b, -c)`; `c - a*b` ->
//! `fma(-a, b, c)` (negation is exact, so each is the one rounding of the written value). A product
//! used elsewhere too is still computed there.

use crate::expr::{ExprArena, Node, NodeId};
use crate::kernel::KernelIR;
use crate::op::{BinaryOp, UnaryOp};

/// The kernel with every `a*b ± c` contracted into `fma`, and how many were (0: the kernel is
/// returned unchanged).
pub fn rewrite(kernel: &KernelIR) -> (KernelIR, usize) {
    let mut done = 0;
    let out = super::rebuild(kernel, |arena, _, node| {
        let f = contract(arena, node)?;
        done += 1;
        Some(f)
    });
    (out.unwrap_or_else(|| kernel.clone()), done)
}

/// A one-line account of the contractions, for `kiln explain`.
pub fn describe(done: usize) -> String {
    format!("{done} x a*b+c -> fma(a, b, c) (approximate)")
}

/// The `fma` that replaces `node` (its operands already in `arena`), if it is a contractible
/// `add` or `sub`.
fn contract(arena: &mut ExprArena, node: Node) -> Option<NodeId> {
    let product = |arena: &ExprArena, x: NodeId| match *arena.node(x) {
        Node::Binary(BinaryOp::Mul, a, b) => Some((a, b)),
        _ => None,
    };
    match node {
        Node::Binary(BinaryOp::Add, x, y) => {
            if let Some((a, b)) = product(arena, x) {
                Some(arena.fma(a, b, y))
            } else {
                let (a, b) = product(arena, y)?;
                Some(arena.fma(a, b, x))
            }
        }
        Node::Binary(BinaryOp::Sub, x, y) => {
            if let Some((a, b)) = product(arena, x) {
                let c = negate(arena, y);
                Some(arena.fma(a, b, c))
            } else {
                let (a, b) = product(arena, y)?;
                let na = negate(arena, a);
                Some(arena.fma(na, b, x))
            }
        }
        _ => None,
    }
}

/// `-x`: a literal negated in place (the kernel then holds `-c` as it would `c`), else a `neg` node.
fn negate(arena: &mut ExprArena, x: NodeId) -> NodeId {
    match *arena.node(x) {
        Node::Literal(bits) => arena.literal(-f64::from_bits(bits)),
        _ => arena.unary(UnaryOp::Neg, x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{StridedInput, interpret};
    use crate::kernel::{InputDecl, KernelKind};
    use crate::{ElemType, Values};

    fn kernel(build: impl FnOnce(&mut ExprArena, [NodeId; 3]) -> NodeId) -> KernelIR {
        let mut arena = ExprArena::new();
        let ins = [arena.input(0), arena.input(1), arena.input(2)];
        let body = build(&mut arena, ins);
        KernelIR {
            dtype: ElemType::F64,
            inputs: (0..3)
                .map(|i| InputDecl {
                    name: format!("x{i}"),
                    shape: vec![3],
                    stored: None,
                })
                .collect(),
            shape: vec![3],
            arena,
            body,
            extra: Vec::new(),
            kind: KernelKind::Map,
        }
    }

    fn run(k: &KernelIR, cols: [&[f64]; 3]) -> Vec<f64> {
        let inputs: Vec<StridedInput<'_, f64>> = cols
            .iter()
            .map(|&data| StridedInput {
                data,
                offset: 0,
                strides: vec![1],
            })
            .collect();
        match interpret(k, &inputs).unwrap().values {
            Values::F64(v) => v,
            other => panic!("f64 expected, got {other:?}"),
        }
    }

    // 1 + 2^-30 squared is 1 + 2^-29 + 2^-60: the written form loses the 2^-60, fma keeps it
    const E: f64 = 1.0 + 1.0 / (1u64 << 30) as f64;
    const A: [f64; 3] = [E, 2.0, f64::INFINITY];
    const C: [f64; 3] = [-1.0, 3.0, 1.0];

    /// Builds a body of the three inputs.
    type Build = fn(&mut ExprArena, [NodeId; 3]) -> NodeId;
    /// The value the contracted body computes.
    type Want = fn(f64, f64, f64) -> f64;

    #[test]
    fn each_form_becomes_one_rounding() {
        let forms: [(&str, Build, Want); 4] = [
            (
                "a*b + c",
                |ar, [a, b, c]| {
                    let p = ar.binary(BinaryOp::Mul, a, b);
                    ar.binary(BinaryOp::Add, p, c)
                },
                |a, b, c| a.mul_add(b, c),
            ),
            (
                "c + a*b",
                |ar, [a, b, c]| {
                    let p = ar.binary(BinaryOp::Mul, a, b);
                    ar.binary(BinaryOp::Add, c, p)
                },
                |a, b, c| a.mul_add(b, c),
            ),
            (
                "a*b - c",
                |ar, [a, b, c]| {
                    let p = ar.binary(BinaryOp::Mul, a, b);
                    ar.binary(BinaryOp::Sub, p, c)
                },
                |a, b, c| a.mul_add(b, -c),
            ),
            (
                "c - a*b",
                |ar, [a, b, c]| {
                    let p = ar.binary(BinaryOp::Mul, a, b);
                    ar.binary(BinaryOp::Sub, c, p)
                },
                |a, b, c| (-a).mul_add(b, c),
            ),
        ];
        for (name, build, want) in forms {
            let k = kernel(build);
            let (f, n) = rewrite(&k);
            assert_eq!(n, 1, "{name}");
            assert!(matches!(f.arena.node(f.body), Node::Fma(..)), "{name}");
            let got = run(&f, [&A, &A, &C]);
            for i in 0..3 {
                let w = want(A[i], A[i], C[i]);
                assert!(
                    got[i].to_bits() == w.to_bits() || got[i].is_nan() && w.is_nan(),
                    "{name} at {i}"
                );
            }
        }
        // the written and the fused value differ in the last bits at E (the point of the test data)
        let written = run(
            &kernel(|ar, [a, b, c]| {
                let p = ar.binary(BinaryOp::Mul, a, b);
                ar.binary(BinaryOp::Add, p, c)
            }),
            [&A, &A, &C],
        );
        assert_ne!(written[0], E.mul_add(E, -1.0));
    }

    #[test]
    fn horner_contracts_every_step_and_others_stay() {
        // ((a*x + b)*x + c): two contractions, nested
        let k = kernel(|ar, [x, b, c]| {
            let p = ar.binary(BinaryOp::Mul, x, x);
            let s = ar.binary(BinaryOp::Add, p, b);
            let q = ar.binary(BinaryOp::Mul, s, x);
            ar.binary(BinaryOp::Add, q, c)
        });
        let (f, n) = rewrite(&k);
        assert_eq!(n, 2);
        match *f.arena.node(f.body) {
            Node::Fma(s, _, _) => assert!(matches!(f.arena.node(s), Node::Fma(..))),
            ref other => panic!("fma expected, got {other:?}"),
        }
        // no product beside the add: unchanged
        let k = kernel(|ar, [a, b, c]| {
            let s = ar.binary(BinaryOp::Add, a, b);
            ar.binary(BinaryOp::Div, s, c)
        });
        assert_eq!(rewrite(&k).1, 0);
    }
}
