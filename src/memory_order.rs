//! Memory order: running an expression on Fortran-ordered or transposed inputs in place.
//!
//! The planner reads a view in place when its rows are runs of consecutive elements; a Fortran array
//! (or the `.T` of a C array) has none, and used to be copied into C order before the kernel ran.
//! Where every input shares one axis permutation under which it is C-contiguous (all Fortran, all
//! transposed the same way, with broadcast, size-1 and 0-d inputs beside them), the result of an
//! expression that does not depend on axis order is the same computed on the permuted views (the
//! axes reordered so that memory order is C order) and permuted back: the kernel then reads every
//! input as a C-contiguous slice, and the result comes out in the inputs' own layout (NumPy's and
//! numexpr's `order='K'`: a Fortran result for Fortran inputs).
//!
//! It declines (and the inputs are read as before: in place per row where the rows allow, else
//! copied once) where the inputs' layouts mix (a C and a Fortran input), where an input steps
//! backwards or with gaps, and for expressions whose value depends on the order of the axes: an
//! axis reduction or scan (its axes would have to be mapped through the permutation: not done
//! here), a flat index (`argmin`, `argmax`, a scan without an axis), a contraction, the position of
//! a point (`Index`), and several results.

use crate::array::{ArrayArg, Output, map_view, on_view};
use crate::executor::is_standard;
use crate::expr::Axes;
use crate::program::{Pipeline, Work};
use kiln_ir::shape::broadcast_shapes;
use kiln_ir::{Node, ReduceOp};
use ndarray::{Axis, IxDyn};

/// Whether the pipeline's result is the same whatever the order of the axes its inputs are given
/// in (permuted alike): every stage is a map or a reduction over every axis (not an arg-reduction,
/// whose result is a flat index), and no stage reads a point's position.
pub(crate) fn order_free(pipeline: &Pipeline) -> bool {
    !pipeline.is_many()
        && pipeline.stages.iter().all(|stage| {
            let p = &stage.program;
            let work = match &p.work {
                Work::Map => true,
                Work::Reduce(r) => {
                    matches!(r.axes, Axes::All) && !matches!(r.op, ReduceOp::ArgMin | ReduceOp::ArgMax)
                }
                _ => false,
            };
            work && p.extra.is_empty()
                && (0..p.arena.len()).all(|i| !matches!(p.arena.node_at(i), Node::Index(_)))
        })
}

/// The axis order (`order[i]` is the input axis that becomes axis `i`) under which every input,
/// given as many leading length-1 axes as the broadcast rank asks, is C-contiguous, where that
/// order is not the identity; None where the inputs are all C-contiguous already, where no one
/// order makes them all so, or where their shapes do not broadcast (the run in the user's order then
/// reports the shapes as the user gave them).
pub fn common_order(args: &[&ArrayArg<'_>]) -> Option<Vec<usize>> {
    if args.iter().all(|a| is_standard(a)) || broadcast_shapes(args.iter().map(|a| a.shape())).is_err() {
        return None;
    }
    let rank = args.iter().map(|a| a.shape().len()).max()?;
    if rank < 2 {
        return None;
    }
    // the order is read off the largest input that is not C-contiguous: its axes by decreasing
    // stride (length-1 axes, whose stride means nothing, kept in place relative to each other)
    let lead = args
        .iter()
        .filter(|a| !is_standard(a) && a.shape().len() == rank)
        .max_by_key(|a| a.shape().iter().product::<usize>())?;
    let (shape, strides) = on_view!(lead, v => (v.shape(), v.strides()));
    if strides.iter().zip(shape).any(|(&s, &d)| d > 1 && s <= 0) {
        return None;
    }
    let mut order: Vec<usize> = (0..rank).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(if shape[i] > 1 { strides[i] } else { isize::MAX }));
    if order.iter().enumerate().all(|(i, &o)| i == o) {
        return None;
    }
    args.iter()
        .all(|a| is_standard(&in_order(a, rank, &order)))
        .then_some(order)
}

/// The view of `a` with leading length-1 axes up to `rank` and its axes in `order` (no copy).
pub fn in_order<'a>(a: &ArrayArg<'a>, rank: usize, order: &[usize]) -> ArrayArg<'a> {
    map_view!(a.clone(), v => {
        let mut v = v;
        while v.ndim() < rank {
            v.insert_axis_inplace(Axis(0));
        }
        v.permuted_axes(IxDyn(order))
    })
}

/// The inverse of an axis order: the order that puts a result computed in `order` back in the
/// inputs' axes.
pub fn inverse(order: &[usize]) -> Vec<usize> {
    let mut inv = vec![0; order.len()];
    for (i, &o) in order.iter().enumerate() {
        inv[o] = i;
    }
    inv
}

/// A result computed on inputs in `order`, in the inputs' own axes (a view of the same elements:
/// no copy). A result of lower rank (a reduction over every axis) is returned as it is.
pub fn restore(out: Output, order: &[usize]) -> Output {
    if out.shape().len() != order.len() {
        return out;
    }
    let inv = IxDyn(&inverse(order));
    match out {
        Output::F64(a) => Output::F64(a.permuted_axes(inv)),
        Output::F32(a) => Output::F32(a.permuted_axes(inv)),
        Output::I64(a) => Output::I64(a.permuted_axes(inv)),
        Output::I32(a) => Output::I32(a.permuted_axes(inv)),
        Output::Bool(a) => Output::Bool(a.permuted_axes(inv)),
    }
}

/// The line `kiln explain` prints for a run in memory order.
pub fn note(order: &[usize]) -> String {
    format!(
        "memory order: every input is C-contiguous with its axes in the order {order:?} (Fortran or \
         transposed): the kernel runs on them in that order, reading each in place, and the result is \
         given back in the inputs' axes (order='K')"
    )
}
