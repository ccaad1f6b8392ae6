//! The checks a run passes before any compiled code is called (the invariants call.rs relies on):
//! the run's start and destination suit the kernel, and every input holds every element the plan
//! makes the code read (contiguous: `n`; per-row runs: the furthest row start plus `row_len`; per-row
//! strided rows: the lowest and highest of every row's first and last lanes; per-row splats: the
//! furthest row start; splats: one), a view read in place included (see [`check_view`]). A scan's code
//! reads the plan's rows as a map's does (scan.rs: each line, or each step of a block, is one plan
//! row), so the same bounds hold for it.
//! A successful check returns [`Checked`], which only this module makes and which
//! `call::dispatch` takes.

use crate::error::{JitError, Result};
use crate::layout::{Access, Geometry, Structure};
use crate::run::{Elem, InputRef, OutSlice, RunConfig, Stored};
use kiln_ir::{BroadcastPlan, ElemType, InputPlan, KernelIR, RowAccess, Start};

/// Proof that a run's inputs were checked against its kernel, plan and geometry.
pub(crate) struct Checked(());

/// Checks a run of `kernel` over `inputs` with `cfg`, writing into `dest` if given: see the module
/// doc.
#[inline]
#[allow(clippy::too_many_arguments)]
pub(crate) fn check_run<T: Elem>(
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    inputs: &[InputRef<'_, T>],
    dest: Option<&OutSlice<'_>>,
    extra: &[OutSlice<'_>],
    extra_types: &[ElemType],
    cfg: &RunConfig<'_>,
) -> Result<Checked> {
    check_inputs(st, geo, kernel, plan, inputs)?;
    let n_extra = extra.len();
    // a map of several outputs writes a logical output as 1 / 0 in the dtype, for its caller to type
    let float_or_truth = |t: ElemType| t == T::DTYPE || (!extra.is_empty() && t == ElemType::Bool);
    let op = st.mode.reduce_op();
    if let Some(parts) = st.mode.parts()
        && geo.n_red == 0
        && geo.n_out > 0
        && let Some(op) = parts.ops().iter().find(|op| !op.has_identity())
    {
        return Err(kiln_ir::IrError::EmptyReduction { op: op.name() }.into());
    }
    if let Some(op) = op {
        cfg.start.check(op, geo.n_out)?;
        if geo.n_red == 0 && geo.n_out > 0 && !op.has_identity() && cfg.start == Start::Identity {
            return Err(kiln_ir::IrError::EmptyReduction { op: op.name() }.into());
        }
        if op.is_arg() && geo.n_red > T::MAX_INDEX {
            return Err(JitError::Unsupported(format!(
                "{} over {} elements of {}: indices do not fit the index lanes",
                op.name(),
                geo.n_red,
                T::DTYPE.short()
            )));
        }
    } else if cfg.start != Start::Identity {
        return Err(JitError::Unsupported(match st.mode {
            crate::layout::Mode::Scan { .. } => "a scan takes its initial value in the kernel".into(),
            _ => "a map takes no initial value".into(),
        }));
    }
    let n_val = if st.mode.stores_points() { geo.n } else { geo.n_out };
    if dest.is_none()
        && inputs
            .iter()
            .any(|i| matches!(i, InputRef::Destination | InputRef::Output(_)))
    {
        return Err(JitError::Unsupported(
            "an input reads the destination but the run has none".into(),
        ));
    }
    if let Some(k) = inputs.iter().find_map(|i| match i {
        InputRef::Output(k) if *k > n_extra => Some(*k),
        _ => None,
    }) {
        return Err(JitError::Unsupported(format!(
            "an input reads output {k} in place but the run writes {} outputs",
            n_extra + 1
        )));
    }
    // a map of several outputs writes every one into a destination (a typed kernel's first may be
    // fresh); a reduction of every axis returns its value and writes its further (map) outputs into
    // destinations
    if kernel.map_extra().len() != n_extra
        || extra_types.len() != n_extra
        || (!extra.is_empty() && op.is_none() && dest.is_none() && st.typed.is_none())
    {
        return Err(JitError::Unsupported(format!(
            "the kernel has {} outputs but the run writes {}: a kernel of several outputs runs into \
             one destination per output",
            kernel.n_outputs(),
            n_extra + usize::from(dest.is_some())
        )));
    }
    // each further output of its own type (a float kernel's: the dtype, a logical one written 1 / 0
    // in it; a typed kernel's: its output's type), `n` elements; one read in place (an input
    // `Output(k)`) of the dtype the code reads it in
    let own = T::DTYPE;
    for (k, (e, &want)) in extra.iter().zip(extra_types).enumerate() {
        let read = inputs
            .iter()
            .any(|i| matches!(i, InputRef::Output(j) if *j == k + 1));
        let float_ok = st.typed.is_some() || float_or_truth(kernel.output_type_of(k + 1));
        if e.ty() != want || e.len() != geo.n || !float_ok || (read && e.ty() != own) {
            return Err(JitError::BadInput {
                index: kernel.inputs.len() + 1 + k,
                name: format!("output {}", k + 1),
                why: format!(
                    "{} elements of {} given for a result of {} {want}{}",
                    e.len(),
                    e.ty(),
                    geo.n,
                    if read && e.ty() != own {
                        format!(", read in place in {own}")
                    } else {
                        String::new()
                    }
                ),
            });
        }
    }
    // a float kernel's destination is of its dtype (a logical output of a map of several written
    // 1 / 0 in it); a typed kernel's of its result type, or of the dtype where an input reads it
    let reads_dest = inputs
        .iter()
        .any(|i| matches!(i, InputRef::Destination | InputRef::Output(0)));
    if let Some(d) = dest
        && ((op.is_some() && !st.accumulates_in(d.ty()))
            || matches!(st.mode, crate::layout::Mode::Compound(_))
            || st.mode.parts().is_some()
            || match st.typed {
                Some(_) => d.ty() != geo.out_type || (reads_dest && d.ty() != own),
                None => d.ty() != own || !float_or_truth(geo.out_type),
            }
            || d.len() != n_val)
    {
        return Err(JitError::BadInput {
            index: kernel.inputs.len(),
            name: "output".into(),
            why: format!(
                "{} elements of {} given for a result of {n_val} {}",
                d.len(),
                d.ty(),
                geo.out_type
            ),
        });
    }
    Ok(Checked(()))
}

/// Checks that every input holds what its declaration and the plan make the code read.
fn check_inputs<T: Elem>(
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    inputs: &[InputRef<'_, T>],
) -> Result<()> {
    if inputs.len() != kernel.inputs.len() {
        return Err(kiln_ir::IrError::Arity {
            expected: kernel.inputs.len(),
            got: inputs.len(),
        }
        .into());
    }
    for (i, (input, decl)) in inputs.iter().zip(&kernel.inputs).enumerate() {
        let bad = |why: String| JitError::BadInput {
            index: i,
            name: decl.name.clone(),
            why,
        };
        // an input stored in another type is given as such, and only then (the code converts it)
        let stored = match input {
            InputRef::Stored(s) => Some(s.ty()),
            _ => None,
        };
        if stored != st.stored[i] {
            let of = |t: Option<kiln_ir::ElemType>| t.map_or(T::DTYPE.short().to_string(), |t| t.to_string());
            return Err(bad(format!(
                "elements of {} given where the kernel reads {}",
                of(stored),
                of(st.stored[i])
            )));
        }
        // byte strings are found at their index times their width (`Gen::string_address`), never
        // through a row's strides: a plan that reads them so is refused
        if matches!(input, InputRef::Stored(Stored::Bytes(..)))
            && matches!(st.inputs[i], Access::RowStrided { .. })
        {
            return Err(bad(
                "byte strings read through a row's strides (compiled code reads them in C order only)".into(),
            ));
        }
        let len = match input {
            InputRef::Slice(buf) => buf.len(),
            // a C-contiguous view holds its `len()` elements one after another from its base: it is
            // checked (and read) as the slice of them
            InputRef::Stored(Stored::View(v)) if !c_contiguous(v.geometry()) => {
                check_view(st, geo, kernel, plan, i, v.geometry()).map_err(bad)?;
                continue;
            }
            InputRef::Stored(s) => s.len(),
            InputRef::View(view) if c_contiguous((view.shape(), view.strides())) => view.len(),
            InputRef::View(view) => {
                check_view(st, geo, kernel, plan, i, (view.shape(), view.strides())).map_err(bad)?;
                continue;
            }
            // read where it is written: a map reading it at each point (the destination's length
            // is checked in `check_run`)
            InputRef::Destination | InputRef::Output(_) => {
                // a splat of the iteration shape is its one point, loaded in the entry block before
                // the loop stores anything
                let one_point = st.inputs[i] == Access::Splat && decl.shape == kernel.shape;
                if !matches!(st.mode, crate::layout::Mode::Map)
                    || !(st.inputs[i] == Access::Contiguous || one_point)
                    || plan.inputs[i] == InputPlan::Materialise
                {
                    return Err(bad(format!(
                        "the destination is read in place only by a map that reads it at every point, \
                         not as {}",
                        plan.inputs[i]
                    )));
                }
                continue;
            }
        };
        // computed when the geometry was built, from this same kernel (an overflow is reported here,
        // at the run, as before)
        let declared = match geo.declared[i] {
            Some(size) => size,
            None => kiln_ir::shape::checked_size(&decl.shape)?,
        };
        let expected = if plan.inputs[i] == InputPlan::Materialise {
            geo.n
        } else {
            declared
        };
        if len != expected {
            let what = if plan.inputs[i] == InputPlan::Materialise {
                format!("a materialised buffer of the iteration shape {:?}", kernel.shape)
            } else {
                format!("shape {:?}", decl.shape)
            };
            return Err(bad(format!(
                "{len} elements given, {expected} expected for {what}"
            )));
        }
        if geo.n == 0 {
            continue;
        }
        let need = needed(st, geo, plan, i).map_err(bad)?;
        if len < need {
            return Err(bad(format!("{len} elements, but the plan reads {need}")));
        }
    }
    Ok(())
}

/// The elements a C-contiguous buffer of input `i` must hold for the code to read it as `plan` says
/// (over `geo.n > 0` points).
pub(crate) fn needed(
    st: &Structure,
    geo: &Geometry,
    plan: &BroadcastPlan,
    i: usize,
) -> std::result::Result<usize, String> {
    Ok(match st.inputs[i] {
        Access::Splat => 1,
        Access::Contiguous => geo.n,
        Access::RowRun | Access::RowSplat | Access::RowStrided { .. } => {
            let InputPlan::PerRow { outer_strides, row } = &plan.inputs[i] else {
                return Err("the plan changed under the kernel".into());
            };
            let (lo, hi) = row_reach(plan, outer_strides, *row);
            if lo < 0 {
                return Err(format!(
                    "the plan reads below the buffer's start (outer strides {outer_strides:?}, {})",
                    plan.inputs[i]
                ));
            }
            usize::try_from(hi + 1).map_err(|_| "row offsets overflow".to_string())?
        }
    })
}

/// Whether a view's elements lie one after another in C order from its base (every axis of more
/// than one element has the stride of the axes after it; an empty view holds none), computed
/// without allocating.
fn c_contiguous((shape, strides): (&[usize], &[isize])) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expect = 1isize;
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if d > 1 && s != expect {
            return false;
        }
        expect = expect.wrapping_mul(d as isize);
    }
    true
}

/// The lowest and highest element offsets a per-row input is read at, over a plan of at least one
/// point (computed in i128, so no overflow): the extreme row starts, plus the reach of a row's last
/// lane from its first, `(row_len - 1) * stride` (1 for a run, 0 for a splat; below the row's start
/// for a negative stride). Every lane of a row lies between its first and last, so these bound
/// every offset read.
fn row_reach(plan: &BroadcastPlan, outer_strides: &[isize], row: RowAccess) -> (i128, i128) {
    let lane_stride = match row {
        RowAccess::Run => 1,
        RowAccess::Strided { stride } => stride as i128,
        RowAccess::Splat => 0,
    };
    let spans = plan
        .outer_shape()
        .iter()
        .zip(outer_strides)
        .map(|(&d, &s)| (d as i128 - 1) * s as i128)
        .chain(std::iter::once((plan.row_len as i128 - 1) * lane_stride));
    reach(spans)
}

/// The lowest and highest offsets (from the first point's) over axes whose last point lies `span`
/// elements from the first (negative for a backward axis), in i128: each axis adds its span to one
/// end. Every point lies between them.
fn reach(spans: impl Iterator<Item = i128>) -> (i128, i128) {
    let (mut lo, mut hi) = (0i128, 0i128);
    for span in spans {
        if span < 0 { lo += span } else { hi += span }
    }
    (lo, hi)
}

/// Checks a view read in place (see [`InputRef::View`]) before any call: the plan reads it per row,
/// the view has the declared shape, the plan's outer strides are exactly the view's strides
/// broadcast to the iteration shape, and a row's inner axes step as the view's (a run: C-contiguous
/// within the row; a strided row of stride `s`: each inner axis `s` times its C stride), so every
/// offset the code reads (from the view's first element, `as_ptr`) is the offset of an element of
/// the view; and (again, in i128) the lowest and highest offsets read, the first and last lanes of
/// the extreme rows ([`row_reach`]), lie within `[first, last]`, the least and greatest offsets of
/// the view's elements (below zero where a stride is negative).
fn check_view(
    st: &Structure,
    geo: &Geometry,
    kernel: &KernelIR,
    plan: &BroadcastPlan,
    i: usize,
    (view_shape, strides): (&[usize], &[isize]),
) -> std::result::Result<(), String> {
    let decl = &kernel.inputs[i].shape;
    if view_shape != &decl[..] {
        return Err(format!("a view of shape {view_shape:?} for shape {decl:?}"));
    }
    let InputPlan::PerRow { outer_strides, row } = &plan.inputs[i] else {
        return Err(format!(
            "a strided view is read in place only per row, not as {}",
            plan.inputs[i]
        ));
    };
    let access = st.inputs[i];
    if !access.per_row() {
        return Err("the plan changed under the kernel".into());
    }
    if geo.n == 0 || view_shape.contains(&0) {
        // nothing is read (an empty view broadcasts only to an empty iteration shape)
        return if geo.n == 0 {
            Ok(())
        } else {
            Err("an empty view read by a non-empty kernel".into())
        };
    }
    // the strides with which the kernel's points map to the view's elements (0 on broadcast axes)
    let shape = &kernel.shape;
    let full = kiln_ir::shape::broadcast_strides(decl, strides, shape).map_err(|e| e.to_string())?;
    let k = plan.outer_axes;
    if outer_strides[..] != full[..k] {
        return Err(format!(
            "outer strides {outer_strides:?}, but the view's strides read as {:?}",
            &full[..k]
        ));
    }
    let cs = kiln_ir::shape::c_strides(shape);
    let inner_ok = match access {
        // point j of a row is at row start + j: each inner axis must step as in a C-contiguous row
        Access::RowRun => (k..shape.len()).all(|a| shape[a] == 1 || full[a] == cs[a]),
        // point j of a row is at row start + j * stride
        Access::RowStrided { .. } => {
            let RowAccess::Strided { stride } = *row else {
                return Err("the plan changed under the kernel".into());
            };
            (k..shape.len()).all(|a| shape[a] == 1 || full[a] as i128 == stride as i128 * cs[a] as i128)
        }
        // a row reads its first point only: the row's other points are the same element
        _ => (k..shape.len()).all(|a| full[a] == 0),
    };
    if !inner_ok {
        return Err(format!(
            "the view's inner strides {:?} do not make the row the plan reads",
            &full[k..]
        ));
    }
    let (mut first, mut last) = (0i128, 0i128);
    for (&d, &s) in view_shape.iter().zip(strides) {
        let reach = (d as i128 - 1) * s as i128;
        if reach < 0 { first += reach } else { last += reach }
    }
    let (lo, hi) = row_reach(plan, outer_strides, *row);
    if lo < first || hi > last {
        return Err(format!(
            "the plan reads offsets {lo}..={hi}, but the view's elements lie at {first}..={last}"
        ));
    }
    Ok(())
}

/// Checks a call of a [`crate::SerialMap`]: `inputs` and `outs` of the bound counts, each output of
/// `n` elements, each input slice of `lens[i]` elements, and an input read in place only where
/// `in_place[i]` (a map reading it at every point at that point alone) and from an output of the call.
#[inline]
pub(crate) fn check_serial<T: Elem>(
    lens: &[usize],
    in_place: &[bool],
    n: usize,
    n_outputs: usize,
    inputs: &[crate::Part<'_, T>],
    outs: &[&mut [T]],
) -> Result<Checked> {
    // the test inline (on every serial call), the message out of line (the cold error path)
    if inputs.len() == lens.len()
        && outs.len() == n_outputs
        && outs.iter().all(|o| o.len() == n)
        && inputs
            .iter()
            .enumerate()
            .all(|(i, input)| part_fits(lens, in_place, outs.len(), i, input))
    {
        return Ok(Checked(()));
    }
    Err(serial_error(lens, in_place, n, n_outputs, inputs, outs))
}

/// Checks a call of a [`crate::SerialMap`] or [`crate::SerialReduce`] as a bound kernel's run
/// takes it (`run_refs`; a reduction's `n` is its outputs' count): the bound counts; each output of `n` elements of its type
/// (`out_types`); each input a slice of the dtype where it is read in it, else its elements of the
/// type the code reads (`stored`), neither a view nor byte strings, of `lens[i]` elements. None
/// where anything differs (the general run checks it again and says what).
#[inline]
pub(crate) fn check_serial_refs<T: Elem>(
    lens: &[usize],
    stored: &[Option<ElemType>],
    out_types: &[ElemType],
    n: usize,
    inputs: &[InputRef<'_, T>],
    outs: &[OutSlice<'_>],
) -> Option<Checked> {
    let fits = |(i, input): (usize, &InputRef<'_, T>)| match input {
        InputRef::Slice(s) => stored[i].is_none() && s.len() == lens[i],
        InputRef::Stored(Stored::View(_) | Stored::Bytes(..)) => false,
        InputRef::Stored(s) => stored[i] == Some(s.ty()) && s.len() == lens[i],
        InputRef::View(_) | InputRef::Destination | InputRef::Output(_) => false,
    };
    (inputs.len() == lens.len()
        && outs.len() == out_types.len()
        && outs
            .iter()
            .zip(out_types)
            .all(|(o, &t)| o.ty() == t && o.len() == n)
        && inputs.iter().enumerate().all(fits))
    .then_some(Checked(()))
}

/// Whether input `i` of a serial call fits: a slice of its length, or an output it may read in place.
#[inline]
fn part_fits<T: Elem>(
    lens: &[usize],
    in_place: &[bool],
    n_outs: usize,
    i: usize,
    input: &crate::Part<'_, T>,
) -> bool {
    match *input {
        crate::Part::Slice(s) => s.len() == lens[i],
        crate::Part::Output(k) => in_place[i] && k < n_outs,
    }
}

/// What [`check_serial`] found wrong.
#[cold]
#[inline(never)]
fn serial_error<T: Elem>(
    lens: &[usize],
    in_place: &[bool],
    n: usize,
    n_outputs: usize,
    inputs: &[crate::Part<'_, T>],
    outs: &[&mut [T]],
) -> JitError {
    if inputs.len() != lens.len() {
        return kiln_ir::IrError::Arity {
            expected: lens.len(),
            got: inputs.len(),
        }
        .into();
    }
    if outs.len() != n_outputs || outs.iter().any(|o| o.len() != n) {
        return JitError::BadInput {
            index: lens.len(),
            name: "output".into(),
            why: format!(
                "{} outputs of {:?} elements given for {n_outputs} of {n}",
                outs.len(),
                outs.iter().map(|o| o.len()).collect::<Vec<_>>()
            ),
        };
    }
    for (i, input) in inputs.iter().enumerate() {
        if !part_fits(lens, in_place, outs.len(), i, input) {
            return JitError::BadInput {
                index: i,
                name: format!("input {i}"),
                why: match *input {
                    crate::Part::Slice(s) => format!("{} elements given, {} expected", s.len(), lens[i]),
                    crate::Part::Output(k) => format!(
                        "output {k} is read in place only by a map that reads it at every point, at \
                         that point alone, among the {} outputs of the call",
                        outs.len()
                    ),
                },
            };
        }
    }
    unreachable!("serial_error is called only when check_serial found a mismatch")
}
