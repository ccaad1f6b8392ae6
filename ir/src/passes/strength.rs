//! Strength reduction of `pow` by a literal exponent, as NumPy does it.
//!
//! NumPy's `power` has fast paths for a scalar exponent (`fast_scalar_power`): `x**2` is `x*x`
//! (`square`), `x**-1` is `1/x` (`reciprocal`), `x**1` is `x`, `x**0` is `1` (even for NaN, as C99's
//! `pow(NaN, 0) = 1`), `x**0.5` is `sqrt(x)`. Each replacement here is that fast path, so the result is
//! bit-identical to NumPy's, whatever libm's `pow` would have rounded: the exact rewrites, run in every
//! profile. The exponent is the literal rounded to the kernel's dtype (all five are exact in f32).
//!
//! With `chains` (the `approximate` profile) it also turns the other integer exponents with
//! `2 < |n| <= MAX_CHAIN` into multiplication chains by repeated squaring (`x**3 = (x*x)*x`,
//! `x**4 = (x*x)*(x*x)`), and a negative one into the reciprocal of the chain. A chain rounds after
//! every product, so it may differ from the correctly rounded power by a few ULP, and it overflows or
//! underflows where `pow` does (`(x*x)*x` of a huge x is inf either way): approximate, not exact.
//!
//! It declines every other exponent: a non-literal one, a non-integer other than 0.5, an integer
//! beyond `MAX_CHAIN` in magnitude (the chain would lose more than `pow` saves), NaN and ±inf.

use crate::expr::{ExprArena, Node, NodeId};
use crate::kernel::KernelIR;
use crate::op::{BinaryOp, UnaryOp};
use crate::{ElemType, Real};

/// The largest exponent magnitude the approximate profile turns into a multiplication chain.
pub const MAX_CHAIN: i64 = 16;

/// What one `pow` became.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reduced {
    /// `x**0 -> 1` (NumPy's fast path, exact).
    One,
    /// `x**1 -> x` (exact).
    Identity,
    /// `x**2 -> x*x` (exact).
    Square,
    /// `x**-1 -> 1/x` (exact).
    Reciprocal,
    /// `x**0.5 -> sqrt(x)` (exact).
    Sqrt,
    /// A multiplication chain for this integer exponent (approximate profile).
    Chain(i64),
}

/// The kernel with every `pow` by a literal exponent that has a cheaper form replaced, and what each
/// replacement was (empty: the kernel is returned unchanged).
pub fn rewrite(kernel: &KernelIR, chains: bool) -> (KernelIR, Vec<Reduced>) {
    if !kernel.dtype.is_float() {
        // not a kernel the rules are stated for (validation refuses it): left as it is
        return (kernel.clone(), Vec::new());
    }
    let mut done = Vec::new();
    let out = super::rebuild(kernel, |arena, _, node| {
        let Node::Binary(BinaryOp::Pow, x, e) = node else {
            return None;
        };
        let Node::Literal(bits) = *arena.node(e) else {
            return None;
        };
        let r = plan(in_dtype(f64::from_bits(bits), kernel.dtype), chains)?;
        done.push(r);
        Some(emit(arena, x, r))
    });
    (out.unwrap_or_else(|| kernel.clone()), done)
}

/// A one-line account of the replacements, for `kiln explain`.
pub fn describe(done: &[Reduced]) -> String {
    let each: Vec<String> = done
        .iter()
        .map(|r| match r {
            Reduced::Square => "x**2 -> x*x".to_string(),
            Reduced::Reciprocal => "x**-1 -> 1/x".to_string(),
            Reduced::Identity => "x**1 -> x".to_string(),
            Reduced::One => "x**0 -> 1".to_string(),
            Reduced::Sqrt => "x**0.5 -> sqrt(x)".to_string(),
            Reduced::Chain(n) => format!("x**{n} -> multiplication chain (approximate)"),
        })
        .collect();
    each.join(", ")
}

/// The exponent as the kernel computes it: the literal rounded to its dtype.
fn in_dtype(v: f64, dtype: ElemType) -> f64 {
    match dtype {
        ElemType::F64 => v,
        ElemType::F32 => f32::from_f64(v) as f64,
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// The replacement for an exponent `v`, if any.
fn plan(v: f64, chains: bool) -> Option<Reduced> {
    // the rule table: exponent, replacement (NumPy's `fast_scalar_power`)
    let exact = [
        (0.0, Reduced::One),         // x**0 = 1, also for NaN x (and x**-0.0)
        (1.0, Reduced::Identity),    // x**1 = x
        (2.0, Reduced::Square),      // x**2 = x*x
        (-1.0, Reduced::Reciprocal), // x**-1 = 1/x
        (0.5, Reduced::Sqrt),        // x**0.5 = sqrt(x)
    ];
    if let Some(&(_, r)) = exact.iter().find(|(e, _)| *e == v) {
        return Some(r);
    }
    let n = v as i64;
    (chains && n as f64 == v && n.abs() <= MAX_CHAIN).then_some(Reduced::Chain(n))
}

/// Emits the replacement of `x ** n`.
fn emit(arena: &mut ExprArena, x: NodeId, r: Reduced) -> NodeId {
    match r {
        Reduced::One => arena.literal(1.0),
        Reduced::Identity => x,
        Reduced::Square => arena.binary(BinaryOp::Mul, x, x),
        Reduced::Reciprocal => arena.unary(UnaryOp::Recip, x),
        Reduced::Sqrt => arena.unary(UnaryOp::Sqrt, x),
        Reduced::Chain(n) => {
            let p = chain(arena, x, n.unsigned_abs());
            if n < 0 { arena.unary(UnaryOp::Recip, p) } else { p }
        }
    }
}

/// `x ** n` for `n >= 1` by repeated squaring (`x**5 = (x*x)*(x*x) * x`).
fn chain(arena: &mut ExprArena, x: NodeId, n: u64) -> NodeId {
    if n == 1 {
        return x;
    }
    let half = chain(arena, x, n / 2);
    let sq = arena.binary(BinaryOp::Mul, half, half);
    if n % 2 == 1 {
        arena.binary(BinaryOp::Mul, sq, x)
    } else {
        sq
    }
}
