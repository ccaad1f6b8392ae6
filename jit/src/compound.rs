//! Compound reductions in the loop skeleton (see [`kiln_ir::compound`]): one kernel that gives two
//! statistics, for segments that each fold into one output (row statistics, whole arrays). Each
//! segment's state is stored in its slot of five f64 ([`SLOT_F64S`]); chunked whole-array
//! reductions merge the chunks' slots in chunk order (output.rs). Nothing depends on the thread
//! count.
//!
//! - moments: two passes over each block of a segment, the second from L1 (`moments.rs`).
//!
//! Softmax's and logsumexp's statistics had a one-pass form here too (a running maximum, its sum
//! rescaled); they run as their two reductions now, the exponentials at full width
//! (`src/siblings.rs` says why).

use crate::clif::mem;
use crate::lower::Gen;
use cranelift_codegen::ir::{InstBuilder, Value};
use cranelift_frontend::Variable;

/// f64 words of one compound output slot.
pub const SLOT_F64S: usize = 5;

/// The value of item `p` of an iteration (a vector or a scalar of the kernel's dtype), computed
/// where it is asked for.
pub(crate) type Item<'a> = dyn FnMut(&mut Gen<'_, '_>, usize) -> Value + 'a;

/// A variable of `v`'s type, defined as `v`.
pub(crate) fn var(g: &mut Gen<'_, '_>, v: Value) -> Variable {
    let ty = g.b.func.dfg.value_type(v);
    let x = g.b.declare_var(ty);
    g.b.def_var(x, v);
    x
}

/// Stores `values` ([`SLOT_F64S`] f64) in slot `o` of `out`.
pub(crate) fn store_slot(g: &mut Gen<'_, '_>, out: Value, o: Value, values: &[Value]) {
    let off = g.b.ins().imul_imm_s(o, (SLOT_F64S * 8) as i64);
    let addr = g.b.ins().iadd(out, off);
    for (i, &x) in values.iter().enumerate() {
        g.b.ins().store(mem(), x, addr, (8 * i) as i32);
    }
}

/// `f` folded over `xs` as a balanced tree (`((x0 f x1) f (x2 f x3))`, the left half the larger).
pub(crate) fn tree(
    g: &mut Gen<'_, '_>,
    xs: &[Value],
    f: impl Fn(&mut Gen<'_, '_>, Value, Value) -> Value + Copy,
) -> Value {
    match xs.len() {
        1 => xs[0],
        n => {
            let (l, r) = xs.split_at(n.div_ceil(2));
            let a = tree(g, l, f);
            let b = tree(g, r, f);
            f(g, a, b)
        }
    }
}
