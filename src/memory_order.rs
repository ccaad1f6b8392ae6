//! Memory order: running an expression on Fortran-ordered or transposed inputs in place.
//!
//! The planner reads a view in place per row (a run of consecutive elements, or lanes gathered at a
//! stride); a Fortran array (or the `.T` of a C array) read in C order is all strided rows, one
//! element per cache line in the worst case. Where every input shares one axis permutation under which it is C-contiguous (all Fortran, all
//! transposed the same way, with broadcast, size-1 and 0-d inputs beside them), the expression runs
//! on the permuted views (the axes reordered so that memory order is C order) and its result is
//! permuted back: every kernel then reads its inputs as C-contiguous slices, and the result comes
//! out in the inputs' own layout (NumPy's and numexpr's `order='K'`: a Fortran result for Fortran
//! inputs).
//!
//! An expression whose value depends on the order of the axes runs with its axes mapped through the
//! permutation (`layout`, `remap`): each kernel's iteration axes have an order (the user's axis
//! each of its axes is), from its inputs' (the permutation for the user's inputs, the order of an
//! earlier kernel's result for that result), and an axis reduction, arg-reduction or scan along user
//! axis `a` folds along the kernel's axis that is `a`. A reduction's result keeps the order of the
//! axes it keeps, so `std(x, axis=0)` and `x - mean(x, axis=1, keepdims=True)` run every kernel in
//! memory order. The runner keeps the remapped plan per permutation.
//!
//! It declines (and the inputs are read in the user's order: per row in place, strided where the
//! last axis is, else copied once) where the inputs' layouts mix (a C and a Fortran input), where an input steps
//! backwards or with gaps, and for what depends on C order itself: a flat index (`argmin` or
//! `argmax` without an axis, a scan without an axis), the position of a point (`Index`), a
//! contraction, several results, and a kernel that broadcasts an input of fewer axes than its own
//! against another (its leading axes would not be the user's).

use crate::array::{ArrayArg, Output, map_view, on_view};
use crate::executor::is_standard;
use crate::expr::Axes;
use crate::program::{Pipeline, Program, Reduction, Source, Work};
use kiln_ir::shape::{broadcast_shapes, normalize_axes};
use kiln_ir::{Node, ReduceOp};
use ndarray::{Axis, IxDyn};

/// How a pipeline runs in memory order: per stage, the order of its iteration axes (`stages[k][i]`
/// is the user's axis of stage `k`'s iteration space that is its axis `i` in memory order), and the
/// order of the result's axes (the same for a map or scan; the kept axes' for a reduction).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) stages: Vec<Vec<usize>>,
    pub(crate) result: Vec<usize>,
    /// Whether some stage names its axes (an axis reduction or scan): the plan must be remapped.
    pub(crate) names_axes: bool,
}

/// The order of a value on its way between stages: the user's axes of its axes in memory order.
#[derive(Clone)]
enum Flow {
    /// A value of this order (its rank is the order's length).
    Of(Vec<usize>),
    /// A compound stage's pair: read only as one of its parts.
    Pair,
}

/// The layout of `pipeline` run on user inputs of ranks `ranks` (in the order of its names), each
/// given as many leading length-1 axes as `order` has and permuted by it; None where the pipeline
/// depends on C order or a stage's inputs' orders do not agree (see the module doc).
pub(crate) fn layout(pipeline: &Pipeline, ranks: &[usize], order: &[usize]) -> Option<Layout> {
    if pipeline.is_many() {
        return None;
    }
    let mut flows: Vec<Flow> = Vec::with_capacity(pipeline.stages.len());
    let mut stages = Vec::with_capacity(pipeline.stages.len());
    let mut names_axes = false;
    for stage in &pipeline.stages {
        let p = &stage.program;
        if !p.extra.is_empty() || (0..p.arena.len()).any(|i| matches!(p.arena.node_at(i), Node::Index(_))) {
            return None;
        }
        // each input as read: its rank in the user's run and its order in memory order
        let mut inputs: Vec<(usize, Vec<usize>)> = Vec::with_capacity(stage.sources.len());
        for s in &stage.sources {
            let sigma = match *s {
                Source::Input(i) => {
                    inputs.push((*ranks.get(i)?, order.to_vec()));
                    continue;
                }
                Source::Stage(k) => match &flows[k] {
                    Flow::Of(o) => o.clone(),
                    Flow::Pair => return None,
                },
                Source::Kept(k) => stages_of(&stages, k)?,
                Source::Dropped(k) => {
                    let r = pipeline.stages[k].program.reduction()?;
                    let axes = r.resolve_axes(stages_of(&stages, k)?.len()).ok()?;
                    kept(&stages_of(&stages, k)?, &axes)
                }
                Source::Part {
                    stage: k, keepdims, ..
                } => {
                    let Work::Compound(_, axes, _) = &pipeline.stages[k].program.work else {
                        return None;
                    };
                    let sigma = stages_of(&stages, k)?;
                    if keepdims {
                        sigma
                    } else {
                        let axes = Reduction::new(ReduceOp::Sum, axes.clone())
                            .resolve_axes(sigma.len())
                            .ok()?;
                        kept(&sigma, &axes)
                    }
                }
            };
            inputs.push((sigma.len(), sigma));
        }
        // the stage's rank in the user's run; every input of another rank in memory order (a user
        // input of fewer axes, padded) would be broadcast otherwise than there, unless the stage
        // folds every axis into one value of inputs of one order (all padded alike: the pairs of
        // elements are the user's, and the count and order of the axes do not matter)
        let rank = inputs.iter().map(|(u, _)| *u).max().unwrap_or(0);
        let whole =
            matches!(&p.work, Work::Reduce(r) if r.axes == Axes::All && !r.keepdims && !r.op.is_arg());
        let mut sigma: Option<&Vec<usize>> = None;
        for (_, o) in &inputs {
            if o.is_empty() {
                continue;
            }
            if o.len() != rank && !whole {
                return None;
            }
            match sigma {
                None => sigma = Some(o),
                Some(s) if s == o => {}
                Some(_) => return None,
            }
        }
        let sigma = sigma.cloned().unwrap_or_default();
        let flow = match &p.work {
            Work::Map => Flow::Of(sigma.clone()),
            Work::Reduce(r) => match &r.axes {
                Axes::All if r.op.is_arg() => return None,
                Axes::All if r.keepdims => Flow::Of(sigma.clone()),
                Axes::All => Flow::Of(Vec::new()),
                Axes::Some(_) => {
                    names_axes = true;
                    let axes = r.resolve_axes(rank).ok()?;
                    Flow::Of(if r.keepdims {
                        sigma.clone()
                    } else {
                        kept(&sigma, &axes)
                    })
                }
            },
            Work::Scan(_, o) => {
                normalize_axes(&[o.axis?], rank).ok()?;
                names_axes = true;
                Flow::Of(sigma.clone())
            }
            Work::Compound(_, axes, _) => {
                Reduction::new(ReduceOp::Sum, axes.clone())
                    .resolve_axes(rank)
                    .ok()?;
                names_axes |= matches!(axes, Axes::Some(_));
                Flow::Pair
            }
            Work::Contract(..) | Work::Siblings(_) => return None,
        };
        flows.push(flow);
        stages.push(sigma);
    }
    let Some(Flow::Of(result)) = flows.pop() else {
        return None;
    };
    Some(Layout {
        stages,
        result,
        names_axes,
    })
}

/// Stage `k`'s iteration order.
fn stages_of(stages: &[Vec<usize>], k: usize) -> Option<Vec<usize>> {
    stages.get(k).cloned()
}

/// The order of a value of order `sigma` with its user axes `axes` folded away: the kept axes in
/// memory order, each renumbered among the kept ones.
fn kept(sigma: &[usize], axes: &[usize]) -> Vec<usize> {
    let left: Vec<usize> = sigma.iter().copied().filter(|a| !axes.contains(a)).collect();
    left.iter()
        .map(|&a| left.iter().filter(|&&b| b < a).count())
        .collect()
}

/// `pipeline` with every stage's axes mapped through its order in `layout`: user axis `a` of stage
/// `k` becomes axis `inverse(layout.stages[k])[a]` (a compound stage's two fallback reductions
/// alike). Axes were checked by [`layout`].
pub(crate) fn remap(pipeline: &Pipeline, layout: &Layout) -> Pipeline {
    let mut out = pipeline.clone();
    for (stage, sigma) in out.stages.iter_mut().zip(&layout.stages) {
        let inv = inverse(sigma);
        remap_program(&mut stage.program, &inv);
        if let Work::Compound(_, _, pair) = &mut stage.program.work {
            remap_program(&mut pair.first, &inv);
            remap_program(&mut pair.second.program, &inv);
        }
    }
    out
}

/// One program's axes mapped through `inv` (the memory-order position of each user axis).
fn remap_program(p: &mut Program, inv: &[usize]) {
    let rank = inv.len();
    let map = |axes: &mut Axes| {
        if let Axes::Some(list) = axes {
            let mut moved: Vec<isize> = normalize_axes(list, rank)
                .expect("axes checked by layout")
                .iter()
                .map(|&a| inv[a] as isize)
                .collect();
            moved.sort_unstable();
            *list = moved;
        }
    };
    match &mut p.work {
        Work::Reduce(r) | Work::Contract(_, r) => map(&mut r.axes),
        Work::Compound(_, axes, _) => map(axes),
        // `layout` declines plans of several roots per stage
        Work::Siblings(_) => unreachable!("sibling stages are not remapped"),
        Work::Scan(_, o) => {
            if let Some(a) = o.axis {
                let a = normalize_axes(&[a], rank).expect("axis checked by layout")[0];
                o.axis = Some(inv[a] as isize);
            }
        }
        Work::Map => {}
    }
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
    // an input of more axes than the run's iteration space is one the kernels do not read (a
    // caller's extra input beside those of the expression): as it is
    if a.shape().len() > rank {
        return a.clone();
    }
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

/// A result computed in memory order, its axes in `order` (the user's axis of each of its axes), in
/// the user's axes (a view of the same elements: no copy). A result of another rank is returned as
/// it is.
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
        Output::C64(a) => Output::C64(a.permuted_axes(inv)),
        Output::C128(a) => Output::C128(a.permuted_axes(inv)),
        Output::Bytes(b) => Output::Bytes(b.permuted(&inverse(order))),
    }
}

/// `out` in C order (copied where it is not): NumPy gives an arg-reduction's indices in C order
/// whatever its input's layout.
pub(crate) fn in_c_order(out: Output) -> Output {
    fn c<T: Clone>(a: ndarray::ArrayD<T>) -> ndarray::ArrayD<T> {
        if a.is_standard_layout() {
            a
        } else {
            a.as_standard_layout().into_owned()
        }
    }
    match out {
        Output::F64(a) => Output::F64(c(a)),
        Output::F32(a) => Output::F32(c(a)),
        Output::I64(a) => Output::I64(c(a)),
        Output::I32(a) => Output::I32(c(a)),
        Output::Bool(a) => Output::Bool(c(a)),
        Output::C64(a) => Output::C64(c(a)),
        Output::C128(a) => Output::C128(c(a)),
        // always in C order
        Output::Bytes(b) => Output::Bytes(b),
    }
}

/// The line `kiln explain` prints for a kernel run in memory order: the inputs' order, and the
/// kernel's own axes (`axes[i]` is the user's axis that is its axis `i`).
pub fn note(order: &[usize], axes: &[usize]) -> String {
    format!(
        "memory order: every input is C-contiguous with its axes in the order {order:?} (Fortran or \
         transposed): the kernels run on them in that order, reading each in place; this kernel's axes \
         are its axes {axes:?} in the user's order (its reductions and scans fold along the ones the \
         user named), and the result is given back in the user's axes (order='K')"
    )
}
