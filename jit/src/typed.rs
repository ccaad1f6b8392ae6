//! The typed kernels ([`kiln_ir::typed`]: bool, int32 and int64 values beside floats, casts
//! explicit) as the one code generator compiles them ([`crate::compile_typed`]): which it compiles
//! ([`why_not`]) and in which lanes ([`lanes_dtype`]).
//!
//! **Lanes.** A typed kernel runs in the lanes of a float dtype: a map whose values are all 32 bits
//! wide (int32, float32; bools beside them), and a min, max or sum of such int32 values (alone, or
//! every component of sibling reductions), in float32's 4 (`i32x4` / `f32x4`, bools as `i32x4`
//! lane masks), any other kernel in float64's 2: int64 and float64 as `i64x2` / `f64x2`, bools as
//! `i64x2` masks, and 32-bit values half-filled (an `i32x4` / `f32x4` whose lanes 0 and 1 hold the
//! two points, loaded and stored as one 64-bit word; lanes 2 and 3 hold copies or garbage no result
//! reads). A map whose every value is a bool (`~b`, `b & c`, `where(b, c, d)` of bools) runs 16
//! lanes, its bools `i8x16` lane masks loaded and stored as 16 bytes at once ([`byte_lanes`]); its
//! dtype stays float32's (the element size its addresses count in). `lower` lowers the opcodes in
//! these registers; the kernel's skeleton, plans and
//! checks are every kernel's. Each input is read in its own type where it is (stored,
//! [`kiln_ir::InputDecl::stored`]); a map's values are stored in their own type (bools one byte 0 /
//! 1 each, the 2 or 4 of each unrolled step gathered into one 8- or 16-byte store:
//! `Gen::store_bools`); reductions and scans of bool and integer values fold int64 lanes (`int_acc`, scan.rs),
//! but min and max of int32 values, whose vector accumulators are `i32x4`, and their sums, two
//! `i64x2` halves.
//!
//! **Complex values** are pairs of lanes: the real parts and the imaginary parts of the points,
//! each in the lanes a float value of the parts' type takes (`lower/complex.rs`), so a complex64
//! value counts as 32 bits wide here and a complex128 value as 64; maps of them compile, their
//! sums, products (`complex_acc`, from any start), `any` and `all`, and their cumulative sums and
//! products (scan.rs, point by point in a state of the parts' type).

use crate::lower::ops::{float_binary_compiles, float_unary_compiles, int_binary_compiles};
use crate::lower::values::{bits, constant};
use kiln_ir::scan::Scan;
use kiln_ir::typed::{Scalar, TypedKernel};
use kiln_ir::{BroadcastPlan, ElemType, InputLayout, KernelIR, KernelKind, Node};

/// Why the code generator does not compile the typed kernel `kernel` ([`crate::compile_typed`]), if
/// it does not (it then runs on the typed interpreter): it compiles maps, reductions over any axes
/// (bool, integer and float values; float32 values fold in float64, as a float32 kernel's sums
/// do) and scans (bool and integer values in an int64 state, float values as a float kernel's); a
/// map of several outputs, each of its own type, and a reduction of every axis beside such maps, in
/// one pass; sibling reductions of bool or integer values of one type in one pass; of complex
/// values, maps, sums, products, `any`, `all`, and cumulative sums and products.
pub fn why_not(kernel: &TypedKernel) -> Option<String> {
    let k = &kernel.kernel;
    let complex_compiles = match &k.kind {
        KernelKind::Map => true,
        KernelKind::Reduce { op, .. } => crate::complex_acc::compiles(*op),
        // sums and products (the typing refuses cummax and cummin), point by point (scan.rs)
        KernelKind::Scan(s) => matches!(s.op, kiln_ir::ScanOp::Sum | kiln_ir::ScanOp::Prod),
        _ => false,
    };
    if kernel.value_type().is_complex() && !complex_compiles {
        let what = match &k.kind {
            KernelKind::Reduce { op, .. } => op.name(),
            KernelKind::Scan(s) => s.op.name(),
            _ => "reduction",
        };
        return Some(format!(
            "the {what} of complex values (not compiled yet: the typed interpreter computes it)"
        ));
    }
    if let Some(why) = crate::bytes::why_not(kernel) {
        return Some(why);
    }
    match &k.kind {
        KernelKind::Map | KernelKind::Reduce { .. } => {}
        KernelKind::Scan(s) => {
            // float values scan as a float kernel's (float32 ones beside 64-bit values widened to
            // float64 lanes, scan.rs)
            let vt = kernel.value_type();
            if !vt.is_float() && !vt.is_complex() && scan_start(s, vt).is_none() {
                return Some(format!(
                    "the scan {} with an initial value its accumulator does not hold",
                    s.op.name()
                ));
            }
        }
        KernelKind::Compound { op, .. } => return Some(format!("the compound reduction {}", op.name())),
        // one pass of int64 accumulators, one per component (int_acc.rs), over values of one type
        KernelKind::Siblings { .. } => {
            let vt = kernel.value_type();
            if vt.is_float() || vt.is_complex() || k.roots().iter().any(|&r| kernel.type_of(r) != vt) {
                return Some("sibling reductions of float values, or of values of several types".into());
            }
        }
    }
    if !k.extra.is_empty() && matches!(k.kind, KernelKind::Scan(_)) {
        return Some("a scan of several outputs".into());
    }
    body_why_not(kernel)
}

/// The float dtype whose lanes the main code generator runs the typed kernel `kernel` in (the
/// input of [`crate::compile_typed`]): float32's 4 for a map whose values are all 32 bits wide and
/// a scan of float32 values beside only 32-bit ones, and min, max and sum of int32 values beside
/// only 32-bit ones (alone, or every component of sibling reductions), else float64's 2 (other
/// reductions fold in 64-bit accumulators).
pub fn lanes_dtype(kernel: &TypedKernel) -> kiln_ir::ElemType {
    match kernel.kernel.kind {
        KernelKind::Map if lanes_of(kernel) >= 4 => kiln_ir::ElemType::F32,
        // min and max of int32 values fold `i32x4` accumulators and sums two `i64x2` halves
        // (int_acc.rs), alone or as every component of sibling reductions
        KernelKind::Reduce { op, .. } if in_four(&[op]) && int32_lanes(kernel) => kiln_ir::ElemType::F32,
        KernelKind::Siblings { ref ops, .. } if in_four(ops) && int32_lanes(kernel) => kiln_ir::ElemType::F32,
        // a scan of float32 values carries a float32 state, as a float32 kernel's
        KernelKind::Scan(_) if kernel.value_type() == ElemType::F32 && lanes_of(kernel) == 4 => {
            kiln_ir::ElemType::F32
        }
        _ => kiln_ir::ElemType::F64,
    }
}

/// Whether every one of `ops` folds int32 values in 4 lanes: a min, a max or a sum.
fn in_four(ops: &[kiln_ir::ReduceOp]) -> bool {
    use kiln_ir::ReduceOp::*;
    ops.iter().all(|op| matches!(op, Min | Max | Sum))
}

/// Whether `kernel`'s values are int32 ones beside only 32-bit values.
fn int32_lanes(kernel: &TypedKernel) -> bool {
    kernel.value_type() == ElemType::I32 && lanes_of(kernel) == 4
}

/// Why the typed lowering does not compile `kernel`'s body, if it does not.
fn body_why_not(kernel: &TypedKernel) -> Option<String> {
    let k = &kernel.kernel;
    let roots = k.roots();
    let reachable = k.arena.reachable_all(&roots);
    for &id in &reachable {
        let t = |x| kernel.type_of(x);
        match *k.arena.node(id) {
            Node::Input(_) => {}
            // the typing's forms, which a kernel built by hand may break: a bool condition between
            // two branches of one type
            Node::Where(c, a, b) => {
                if t(c) != ElemType::Bool || t(a) != t(b) {
                    return Some(format!(
                        "a where of a {} condition between {} and {}",
                        t(c),
                        t(a),
                        t(b)
                    ));
                }
            }
            Node::Cast(_, a) => {
                if matches!(k.arena.node(a), Node::Int(_) | Node::Literal(_))
                    && constant(kernel, id).is_none()
                {
                    return Some("a literal it cannot type".into());
                }
            }
            Node::Int(_) | Node::Literal(_) => {
                // only read through the cast that types them (constants); a bare literal is refused
                let typed = reachable
                    .iter()
                    .any(|&u| matches!(*k.arena.node(u), Node::Cast(_, a) if a == id));
                if !typed || roots.contains(&id) {
                    return Some("an untyped literal".into());
                }
            }
            Node::Index(_) => {}
            // a string constant, compared (crate::bytes::why_not)
            Node::Bytes(_) => {}
            Node::Fma(..) => return Some("fma".into()),
            Node::Unary(op, a) => {
                use kiln_ir::UnaryOp::*;
                let compiles = match t(a) {
                    ta if ta.is_complex() => crate::lower::complex::unary_compiles(op),
                    ElemType::Bool => matches!(op, Not | Invert | Abs | IsNan | IsInf | IsFinite),
                    ta if ta.is_integer() => matches!(
                        op,
                        Neg | Abs | Invert | Sign | Floor | Ceil | Trunc | Round | IsNan | IsInf | IsFinite
                    ),
                    _ => float_unary_compiles(op),
                };
                if !compiles {
                    return Some(format!("{op} of {}", t(a)));
                }
            }
            // two strings, of any widths, compared or searched (crate::bytes::why_not)
            Node::Binary(_, a, _) if t(a).is_bytes() => {}
            // both operands of one type, as the typing casts them
            Node::Binary(op, a, b) => {
                use kiln_ir::BinaryOp::*;
                let ta = t(a);
                let bools = matches!(
                    op,
                    Add | Max
                        | Fmax
                        | Or
                        | BitOr
                        | Mul
                        | Min
                        | Fmin
                        | And
                        | BitAnd
                        | BitXor
                        | Ne
                        | Eq
                        | Lt
                        | Le
                        | Gt
                        | Ge
                );
                if ta != t(b) {
                    return Some(format!("{op} of {ta} and {}", t(b)));
                }
                let complex = ta.is_complex() || op == Complex;
                if complex && !crate::lower::complex::binary_compiles(op, ta) {
                    return Some(format!("{op} of {ta}"));
                }
                if (ta.is_float() && !complex && !float_binary_compiles(op))
                    || (ta.is_integer() && !int_binary_compiles(op))
                    || (ta == ElemType::Bool && !bools)
                {
                    return Some(format!("{op} of {ta}"));
                }
            }
        }
    }
    None
}

/// Whether `kernel` holds a complex value (an input, or a value its outputs reach): its code then
/// imports the complex host functions (`lower/complex.rs`).
pub fn holds_complex(kernel: &TypedKernel) -> bool {
    let k = &kernel.kernel;
    kernel.input_types.iter().any(|t| t.is_complex())
        || k.arena
            .reachable_all(&k.roots())
            .into_iter()
            .any(|id| kernel.type_of(id).is_complex())
}

/// Whether node `id` of `kernel` may be computed by a wide routine on blocks (block.rs) in a
/// kernel of float lanes `lanes`: it and each of its operands are values of that type (held as the
/// lanes' own vectors: no other type, no half-filled narrower float, no complex part); a unary
/// function of an integer is one of a cast to float64 (`exp(cast f64 i)`), so it qualifies in
/// float64 lanes.
pub fn stages_in_lanes(kernel: &TypedKernel, id: kiln_ir::NodeId, lanes: kiln_ir::ElemType) -> bool {
    kernel.type_of(id) == lanes
        && kernel
            .kernel
            .arena
            .node(id)
            .operands()
            .all(|o| kernel.type_of(o) == lanes)
}

/// The wide routine of complex values (`wide/complex.rs`) that computes node `id` of `kernel` on
/// blocks in a kernel of float lanes `lanes`, if one does: a quotient, or the magnitude (`abs`), of
/// complex values whose parts are of that type (complex128 in float64 lanes, complex64 in float32
/// lanes: whole vectors of parts; complex64 beside 64-bit values, half-filled, stays inline).
pub fn wide_complex(
    kernel: &TypedKernel,
    id: kiln_ir::NodeId,
    lanes: kiln_ir::ElemType,
) -> Option<crate::wide::WideFn> {
    use crate::wide::WideFn;
    let (f, complex) = match *kernel.kernel.arena.node(id) {
        Node::Binary(kiln_ir::BinaryOp::Div, ..) => (WideFn::ComplexDiv, kernel.type_of(id)),
        Node::Unary(kiln_ir::UnaryOp::Abs, z) => (WideFn::ComplexAbs, kernel.type_of(z)),
        _ => return None,
    };
    (complex.is_complex() && complex.real_part() == Some(lanes)).then_some(f)
}

/// The points one step of `kernel`'s compiled loop computes: its lanes ([`lanes_of`]: 16, or
/// [`lanes_dtype`]'s 4 or 2; complex values too, as pairs of lanes).
pub fn points_per_step(kernel: &TypedKernel) -> u8 {
    if byte_lanes(kernel) {
        return 16;
    }
    crate::Schedule::vector_lanes(lanes_dtype(kernel))
}

/// Whether `kernel` is a map whose every value is a bool (inputs, operations and outputs; its
/// literals aside): it runs 16 lanes of `i8x16` masks, its bools loaded and stored 16 bytes at once
/// (module doc).
pub fn byte_lanes(kernel: &TypedKernel) -> bool {
    matches!(kernel.kernel.kind, KernelKind::Map) && bools_alone(kernel)
}

/// Whether a typed kernel compiled in `mode` runs 16 lanes of `i8x16` masks: a map of bools alone
/// ([`byte_lanes`]), and a trailing sum, `any`, `all`, max or min of them with no further outputs,
/// each vector of masks folded at once (int_acc.rs `byte_fold`). `kernel`'s kind is not read
/// (compile.rs types the arena as a map's).
pub fn runs_bytes(kernel: &TypedKernel, mode: crate::Mode) -> bool {
    let bytes = match mode {
        crate::Mode::Map => true,
        crate::Mode::Trailing(op) => {
            crate::int_acc::BYTE_FOLDS.contains(&op) && kernel.kernel.extra.is_empty()
        }
        _ => false,
    };
    bytes && bools_alone(kernel)
}

/// The points one step of `kernel`'s compiled loop computes when it runs over `plan`: 16 where it
/// runs bytes in the mode the plan gives ([`runs_bytes`]), else [`points_per_step`].
pub fn points_over(kernel: &TypedKernel, plan: &BroadcastPlan) -> u8 {
    match crate::Structure::typed(&kernel_of(kernel), plan) {
        Ok((st, _)) if runs_bytes(kernel, st.mode) => 16,
        _ => points_per_step(kernel),
    }
}

/// Whether every value of `kernel` is a bool (inputs, operations and outputs; its literals aside),
/// whatever its kind: a map of them runs 16 lanes ([`byte_lanes`]), and so does a trailing
/// reduction of them ([`runs_bytes`]).
pub fn bools_alone(kernel: &TypedKernel) -> bool {
    let k = &kernel.kernel;
    k.arena
        .reachable_all(&k.roots())
        .into_iter()
        .filter(|&id| !matches!(k.arena.node(id), Node::Int(_) | Node::Literal(_)))
        .all(|id| kernel.type_of(id) == ElemType::Bool)
}

/// The lanes `kernel`'s values (every output's) fill (see the module doc): 16 for a map of bools
/// alone ([`byte_lanes`]), 4 where they are all 32 bits wide (a complex value as wide as its
/// parts), else 2.
pub fn lanes_of(kernel: &TypedKernel) -> u8 {
    if byte_lanes(kernel) {
        return 16;
    }
    let k = &kernel.kernel;
    let mut widths = k
        .arena
        .reachable_all(&k.roots())
        .into_iter()
        .filter(|&id| !matches!(k.arena.node(id), Node::Int(_) | Node::Literal(_)))
        .map(|id| kernel.type_of(id))
        .filter(|&t| t != ElemType::Bool)
        .map(|t| bits(t.real_part().unwrap_or(t)))
        .collect::<Vec<_>>();
    widths.sort_unstable();
    widths.dedup();
    match widths[..] {
        [] | [32] => 4,
        _ => 2,
    }
}

/// A scan's starting state, the typed interpreter's ([`kiln_ir::typed::scan_start`]); None for an
/// `initial` the interpreter refuses (it then runs, and gives the error).
pub(crate) fn scan_start(scan: &Scan, vt: ElemType) -> Option<Scalar> {
    kiln_ir::typed::scan_start(scan, vt).ok()
}

/// The kernel [`crate::compile_typed`] compiles for the typed kernel `typed`: its own, in the float
/// dtype of its lanes ([`lanes_dtype`]), each input of another type declared stored as it.
pub fn kernel_of(typed: &TypedKernel) -> KernelIR {
    let dtype = lanes_dtype(typed);
    let mut kernel = KernelIR {
        dtype,
        ..typed.kernel.clone()
    };
    for (decl, &t) in kernel.inputs.iter_mut().zip(&typed.input_types) {
        decl.stored = (t != dtype).then_some(t);
    }
    kernel
}

/// A plan of the typed kernel's `kernel` ([`kernel_of`]) over inputs laid out as `layouts` that
/// reads every input where it is (a typed kernel reads no converted copy): the planner's own where
/// it copies nothing, else rows of the last axis (which read any broadcast and any view in place);
/// a scan's rows are its lines or its blocks' steps ([`kiln_ir::Scan::row_axes`]; an integer
/// state is exact in any grouping, so each gives the same bits). None where no plan reads every
/// input in place.
///
/// # Errors
/// The planner's (shapes that do not broadcast).
pub fn plan(kernel: &KernelIR, layouts: &[InputLayout]) -> kiln_ir::Result<Option<BroadcastPlan>> {
    let shape = &kernel.shape;
    let candidates: Vec<usize> = match &kernel.kind {
        KernelKind::Scan(scan) => std::iter::once(0).chain(scan.row_axes(shape).rev()).collect(),
        _ => {
            let plan = BroadcastPlan::new(shape, layouts, kiln_ir::PlanOptions::default())?;
            if plan.copies() == 0 {
                return Ok(Some(plan));
            }
            vec![shape.len().saturating_sub(1)]
        }
    };
    for k in candidates {
        let plan = BroadcastPlan::with_outer_axes(shape, layouts, k)?;
        if plan.copies() == 0 {
            return Ok(Some(plan));
        }
    }
    Ok(None)
}
