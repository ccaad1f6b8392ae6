//! The run plan: how one run of a kernel is cut, computed from its structure, its geometry and the
//! run's configuration alone (no buffers, no code): the parameter block the code is passed, the
//! chunks of a whole-array reduction, the output slots, and the work units.
//!
//! A run is cut into *work units* that write disjoint memory: a unit is a range of segments (each
//! folding into outputs no other segment touches, into its own partial slot, or, for a scan, a range
//! of whole blocks with a state row of its own) or a range `[lo, hi)` within every segment (maps, and
//! kept reductions, whose outputs within a segment are distinct). Which cut is chosen never changes
//! the result: a unit never splits one output's fold or one scan line.

use crate::layout::{Geometry, Mode, Structure};
use crate::run::{RunConfig, chunk_len};
use kiln_ir::KernelIR;
use std::borrow::Cow;

/// How a run is cut into work units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Units {
    /// Unit `u` runs segments `[u * per, (u + 1) * per)` whole.
    Segments { per: usize },
    /// Unit `u` runs every segment over `[u * per, (u + 1) * per)` within it.
    Ranges { per: usize },
}

/// One run's cut (see the module doc).
#[derive(Debug, Clone)]
pub(crate) struct RunPlan<'g> {
    /// The parameter block the code is passed: the geometry's own where this run changes nothing in
    /// it (no copy), else a copy with the chunking of this run.
    pub params: Cow<'g, [i64]>,
    pub n_seg: usize,
    pub seg_len: usize,
    /// `(chunks, chunk length)` of a whole-array reduction run in two passes.
    pub chunks: Option<(usize, usize)>,
    /// Elements of the value output: `n` (maps and scans), `n_out` (reductions) or one partial per
    /// chunk.
    pub n_slots: usize,
    /// The least bytes of each slot the code writes: the element's, or the f64 words of each slot
    /// of a compound reduction or of sibling reductions (call.rs checks the output against it).
    pub slot_bytes: usize,
    pub units: Units,
    pub n_units: usize,
    /// Bytes of carried state each unit owns (scans along an outer axis: `inner` states), else 0.
    pub state_row_bytes: usize,
    /// Whether there is anything to run (points and segments).
    pub runs: bool,
}

impl<'g> RunPlan<'g> {
    /// The cut of a run of `kernel` (whose structure and geometry are `st` and `geo`) with `cfg`, in
    /// elements of `elem_bytes` bytes.
    #[inline(always)]
    pub fn new(
        st: &Structure,
        geo: &'g Geometry,
        kernel: &KernelIR,
        cfg: &RunConfig<'_>,
        elem_bytes: usize,
    ) -> RunPlan<'g> {
        let whole = st.mode.folds_segments() && st.seg_axes == 0;
        let chunks = if whole && geo.n > 0 {
            let c = chunk_len(geo.n, cfg.target_partials, cfg.min_chunk);
            let k = geo.n.div_ceil(c);
            (k > 1).then_some((k, c))
        } else {
            None
        };
        let n_val = if st.mode.stores_points() { geo.n } else { geo.n_out };
        let (n_seg, seg_len, n_slots) = match chunks {
            Some((k, c)) => (k, c, k),
            None => (geo.n_seg, geo.seg_len, n_val),
        };
        let mut params = Cow::Borrowed(&geo.params[..]);
        let mut state_row_bytes = 0;
        match st.mode {
            Mode::Scan { scan, columns } => {
                if columns {
                    let inner = params[Structure::LINE_STRIDE] as usize;
                    // a complex scan's states are values of its type (scan.rs)
                    let state = match st.typed.filter(|t| t.values.is_complex()) {
                        Some(t) => t.values.size(),
                        None if scan.op.wide() => 8,
                        None => elem_bytes,
                    };
                    state_row_bytes = inner.saturating_mul(state);
                }
            }
            _ => {
                let part = match st.mode {
                    Mode::KeptSiblings(_) => n_slots as i64,
                    _ => i64::from(chunks.is_some()),
                };
                let seg = seg_len as i64;
                if params[Structure::SEG_LEN] != seg || params[Structure::PART] != part {
                    let p = params.to_mut();
                    p[Structure::SEG_LEN] = seg;
                    p[Structure::PART] = part;
                }
            }
        }
        let units = choose_units(st, kernel, n_seg, seg_len, chunks.is_some(), cfg.max_units);
        let n_units = match units {
            Units::Segments { per } => n_seg.div_ceil(per),
            Units::Ranges { per } => seg_len.div_ceil(per),
        };
        let slot_bytes = match st.mode {
            Mode::Compound(_) => 8 * crate::compound::SLOT_F64S,
            _ => st.mode.parts().map_or(elem_bytes, |p| 8 * p.ops().len()),
        };
        RunPlan {
            params,
            n_seg,
            seg_len,
            chunks,
            n_slots,
            slot_bytes,
            units,
            n_units,
            state_row_bytes,
            runs: geo.n > 0 && n_seg > 0,
        }
    }

    /// `(seg_begin, seg_end, lo, hi)` of unit `u`.
    #[inline]
    pub fn unit(&self, u: usize) -> (usize, usize, usize, usize) {
        match self.units {
            Units::Segments { per } => (u * per, ((u + 1) * per).min(self.n_seg), 0, self.seg_len),
            Units::Ranges { per } => (0, self.n_seg, u * per, ((u + 1) * per).min(self.seg_len)),
        }
    }
}

/// Cuts a run into units that write disjoint memory (see the module doc).
fn choose_units(
    st: &Structure,
    kernel: &KernelIR,
    n_seg: usize,
    seg_len: usize,
    chunked: bool,
    max_units: usize,
) -> Units {
    let max_units = max_units.max(1);
    let all = Units::Segments { per: n_seg.max(1) };
    if max_units == 1 && !chunked {
        return all;
    }
    match st.mode {
        Mode::Map => {
            // ranges of at least 4096 points, a multiple of 64 (whole vectors and unrolled steps)
            let per = seg_len.div_ceil(max_units).max(4096).div_ceil(64) * 64;
            Units::Ranges { per }
        }
        Mode::Scan { .. } => {
            // ranges of whole blocks: a line is never split
            let units = max_units.min(n_seg).max(1);
            Units::Segments {
                per: n_seg.div_ceil(units).max(1),
            }
        }
        Mode::Trailing(_) | Mode::Compound(_) | Mode::Siblings(_) if chunked => Units::Segments { per: 1 },
        Mode::Trailing(_) | Mode::Compound(_) | Mode::Siblings(_) => {
            let axes = kernel.kind.reduced_axes();
            // segments fold into distinct outputs only when no segment axis is reduced
            if axes.iter().all(|&a| a >= st.seg_axes) {
                Units::Segments {
                    per: n_seg.div_ceil(max_units).max(1),
                }
            } else {
                all
            }
        }
        Mode::Kept(_) | Mode::KeptSiblings(_) => {
            // column ranges of at least 256 outputs: each output is folded by one unit, in order
            let per = seg_len.div_ceil(max_units).max(256).div_ceil(16) * 16;
            Units::Ranges { per }
        }
    }
}
