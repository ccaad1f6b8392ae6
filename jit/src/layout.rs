//! The structure of a kernel as the code generator sees it, and the run-time parameter block.
//!
//! [`Structure`] is everything about a (KernelIR, BroadcastPlan) pair that shapes the generated code
//! except the concrete sizes: the dtype, the rank, the number of outer (row) axes, how each input is
//! read, and how the iteration space is cut into *segments*. Sizes travel at run time in a parameter
//! block of `i64`s whose layout [`Structure`] fixes, so one compiled kernel serves every size of the
//! same plan shape.
//!
//! Segments: the iteration space (row-major, `n` points) is cut into `n_seg` consecutive flat ranges of
//! `seg_len` points, by the trailing block of axes that are all reduced or all kept:
//! - a map is one segment holding everything;
//! - [`Mode::Trailing`]: the trailing axes are reduced, so each segment folds into one output element
//!   (whole-array reductions are one segment; row sums are one segment per row);
//! - [`Mode::Kept`]: the trailing axes are kept, so each segment updates `seg_len` consecutive outputs
//!   element by element (column sums: one segment per reduced row).
//!
//! The axes before the trailing block (`seg_axes`) locate a segment: its first output (`o_base`) and
//! its first reduction index (`r_base`) are sums of the segment's multi-index times per-axis strides.

use crate::error::{JitError, Result};
use kiln_ir::{BroadcastPlan, shape::c_strides, shape::checked_size};
use kiln_ir::{CompoundOp, ElemType, InputPlan, KernelIR, KernelKind, ReduceOp, RowAccess, Scan};

/// How the inner row reads one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// One element for the whole kernel, splatted once.
    Splat,
    /// Read at the flat index of the iteration space (also every materialised input).
    Contiguous,
    /// A contiguous run per row, starting at the row's offset (outer strides at run time).
    RowRun,
    /// One element per row, splatted once per row.
    RowSplat,
    /// `row_len` elements per row, a stride of elements apart (neither 0 nor 1; negative steps
    /// backwards), starting at the row's offset. `reversed` (stride -1) is fixed in the code: one
    /// contiguous load and a lane reversal per vector. Any other stride is the run-time parameter
    /// [`Structure::p_row_stride`] and its lanes are gathered one by one, so one compiled kernel
    /// serves every stride (a transposed input's stride is its column length: a size).
    RowStrided {
        /// Whether the stride is -1 (else it is a run-time parameter).
        reversed: bool,
    },
}

impl Access {
    /// Whether the input is read per row, from a row start given by its outer strides.
    pub fn per_row(self) -> bool {
        matches!(
            self,
            Access::RowRun | Access::RowSplat | Access::RowStrided { .. }
        )
    }

    /// Whether the input is read as a strided row.
    pub fn strided(self) -> bool {
        matches!(self, Access::RowStrided { .. })
    }
}

/// What the kernel does with each value of the body.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    /// Store it at its flat position.
    Map,
    /// Fold a whole segment into one output element.
    Trailing(ReduceOp),
    /// Fold each value into the output element at its position within the segment.
    Kept(ReduceOp),
    /// Scan each line of a segment (a block of `len` points `inner` apart) in order, storing every
    /// carried state: one line in vectors (`columns: false`, `inner == 1`), or `inner` lines side by
    /// side, vectorised across them (`columns: true`). See scan.rs.
    Scan {
        /// The scan's operation, axis and options.
        scan: Scan,
        /// Whether `inner` lines run side by side (an outer axis), else one line in vectors.
        columns: bool,
    },
    /// Fold a whole segment into one output's two statistics (see compound.rs): every reduced axis
    /// is in the trailing block, so each segment is one output, or one chunk of a whole array.
    Compound(CompoundOp),
    /// Fold a whole segment into one output element per component (sibling reductions, see
    /// [`Parts`]): every reduced axis is in the trailing block, as for `Compound`.
    Siblings(Parts),
    /// Fold each value into the output element at its position within the segment, once per
    /// component (sibling reductions over leading or middle axes, the trailing axes kept): as
    /// `Kept` for each component, into its own run of outputs ([`Parts`]). Every component a sum
    /// (rows added in groups, as a kept sum alone adds them) or none (rows one by one, as a kept
    /// max, min or product alone): [`Parts::kept_order`].
    KeptSiblings(Parts),
}

/// The reductions of a sibling kernel's components ([`KernelKind::Siblings`]), in order: at most
/// [`Parts::MAX`]. Trailing ([`Mode::Siblings`]): each keeps the accumulators its reduction alone
/// would (see skeleton.rs), and its partials in word `c` of each output slot of `Parts::len` f64
/// words; kept ([`Mode::KeptSiblings`]): component `c` folds into its own run of `n_out` words,
/// `c·n_out` words on (output.rs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Parts {
    n: u8,
    ops: [ReduceOp; Parts::MAX],
}

// a schedule gives a count of accumulators for every component (skeleton.rs `accumulators`)
const _: () = assert!(Parts::MAX == crate::schedule::COMPONENTS);

impl Parts {
    /// The most components one compiled kernel folds.
    pub const MAX: usize = 8;

    /// The components of `ops`, if they are at most [`Parts::MAX`].
    pub fn new(ops: &[ReduceOp]) -> Option<Parts> {
        let mut all = [ReduceOp::Sum; Parts::MAX];
        all.get_mut(..ops.len())?.copy_from_slice(ops);
        Some(Parts {
            n: ops.len() as u8,
            ops: all,
        })
    }

    /// Each component's reduction.
    pub fn ops(&self) -> &[ReduceOp] {
        &self.ops[..usize::from(self.n)]
    }

    /// Whether sibling reductions of `ops` over kept trailing axes fold each component in the
    /// order its reduction alone folds it, so that one pass gives every component's bits: every
    /// one a sum (a kept sum adds its rows in groups, skeleton.rs "Kept sums, several reduced rows
    /// per pass") or none (a kept max, min or product folds its rows one by one, in groups of
    /// adjacent rows). A sum beside another reduction would need both orders at once: such
    /// siblings run one by one. Whether rows are grouped at all depends on the plan and the
    /// inputs (skeleton.rs `groups_rows`), which a component alone ([`KernelIR::component`]: every
    /// input kept) shares with the merged kernel under the same plan.
    pub fn kept_order(ops: &[ReduceOp]) -> bool {
        let sums = ops.iter().filter(|&&op| op == ReduceOp::Sum).count();
        sums == 0 || sums == ops.len()
    }
}

impl Mode {
    /// The reduction of a `Trailing` or `Kept` mode.
    pub fn reduce_op(self) -> Option<ReduceOp> {
        match self {
            Mode::Map | Mode::Scan { .. } | Mode::Compound(_) | Mode::Siblings(_) | Mode::KeptSiblings(_) => {
                None
            }
            Mode::Trailing(op) | Mode::Kept(op) => Some(op),
        }
    }

    /// The reductions whose accumulators a segment folds into: a trailing reduction's one, each
    /// component's of sibling reductions, none otherwise.
    pub fn folds(&self) -> &[ReduceOp] {
        match self {
            Mode::Trailing(op) => std::slice::from_ref(op),
            Mode::Siblings(parts) => parts.ops(),
            _ => &[],
        }
    }

    /// Whether each segment folds into one output element (or one chunk's partial of a whole
    /// array): trailing, compound and sibling reductions.
    pub fn folds_segments(self) -> bool {
        matches!(self, Mode::Trailing(_) | Mode::Compound(_) | Mode::Siblings(_))
    }

    /// Whether every point's value is stored at its flat position (maps and scans).
    pub fn stores_points(self) -> bool {
        matches!(self, Mode::Map | Mode::Scan { .. })
    }

    /// The components of sibling reductions, trailing or kept.
    pub fn parts(self) -> Option<Parts> {
        match self {
            Mode::Siblings(parts) | Mode::KeptSiblings(parts) => Some(parts),
            _ => None,
        }
    }

    /// Whether each point folds into the outputs at its position within the segment: a kept
    /// reduction, or kept sibling reductions.
    pub fn keeps(self) -> bool {
        matches!(self, Mode::Kept(_) | Mode::KeptSiblings(_))
    }

    /// The reductions each point folds into the outputs at its position: a kept reduction's one,
    /// each component's of kept sibling reductions (into its own run of outputs), none otherwise.
    pub fn kept_ops(&self) -> &[ReduceOp] {
        match self {
            Mode::Kept(op) => std::slice::from_ref(op),
            Mode::KeptSiblings(parts) => parts.ops(),
            _ => &[],
        }
    }
}

/// The size-independent structure of a kernel: part of the cache key, and the parameter layout.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Structure {
    /// The element type of the kernel.
    pub dtype: ElemType,
    /// The rank of the iteration space.
    pub rank: usize,
    /// `k`: the plan's outer axes, walked row by row.
    pub outer_axes: usize,
    /// How each input is read.
    pub inputs: Vec<Access>,
    /// Per input: the type its memory holds where that is not the dtype (converted where it is
    /// read: [`kiln_ir::InputDecl::stored`], where the plan reads its elements in place).
    pub stored: Vec<Option<ElemType>>,
    /// The loops the kernel runs.
    pub mode: Mode,
    /// The axes before the trailing block, which locate a segment.
    pub seg_axes: usize,
    /// A typed kernel's value and result types ([`Structure::typed`]); None for a float kernel.
    pub typed: Option<TypedValues>,
}

/// What a typed kernel computes ([`kiln_ir::typed`]: bool, integer and float values, compiled by
/// [`crate::compile_typed`]): the type of its values and of its result. Its code holds every value
/// in the registers its type takes at the lanes of its dtype ([`crate::typed::lanes_dtype`]: 4, a
/// float32 kernel's, for a map of 32-bit values and a min, max or sum of int32 ones (alone or
/// sibling reductions), else 2, a float64
/// kernel's: `i64x2`, `f64x2`, bools as masks, 32-bit values half-filled, as `lower/values.rs`
/// holds them), reads every input in its own type where it is ([`Structure::stored`]), and folds
/// integer and bool values in int64 accumulators (int_acc.rs; int32 min and max in `i32x4` ones at
/// vector width, int32 sums in two `i64x2` halves).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TypedValues {
    /// The type of the body's values.
    pub values: ElemType,
    /// The type of the result.
    pub output: ElemType,
}

impl TypedValues {
    /// Whether the values fold in int64 accumulators (bool and integer values); float values fold
    /// as a float kernel's.
    pub fn int_acc(self) -> bool {
        !self.values.is_float() && !self.values.is_complex()
    }

    /// Whether the values fold as complex pairs (complex_acc.rs: two float64 words per slot).
    pub fn complex_acc(self) -> bool {
        self.values.is_complex()
    }
}

/// The run-time sizes of one call.
#[derive(Debug, Clone)]
pub struct Geometry {
    /// The parameter block passed to the compiled code.
    pub params: Vec<i64>,
    /// Points of the iteration space.
    pub n: usize,
    pub n_seg: usize,
    pub seg_len: usize,
    /// Output elements and points folded into each (1 for a map).
    pub n_out: usize,
    pub n_red: usize,
    pub out_shape: Vec<usize>,
    /// Each input's declared element count (`checked_size` of its declared shape; `None` where that
    /// overflows, which the run's check reports as before), computed once with the rest.
    pub declared: Vec<Option<usize>>,
    /// The kernel's result type ([`KernelIR::output_type`]), computed once with the rest.
    pub out_type: ElemType,
}

/// The reduced axes of `kind` (none for a map).
fn reduced_axes(kind: &KernelKind) -> &[usize] {
    kind.reduced_axes()
}

/// The start of the trailing block of axes that are all reduced or all kept, and whether it is reduced.
fn trailing_block(rank: usize, axes: &[usize]) -> (usize, bool) {
    if rank == 0 {
        return (0, false);
    }
    let reduced = |a: usize| axes.contains(&a);
    let last = reduced(rank - 1);
    let mut m = rank - 1;
    while m > 0 && reduced(m - 1) == last {
        m -= 1;
    }
    (m, last)
}

impl Structure {
    /// Whether each segment is one run of one plan row: the plan's rows hold whole segments (no
    /// more outer axes than segment axes; none: every point in row 0), where a segment of several
    /// rows (more outer axes) walks row by row.
    pub fn segments_in_one_row(&self) -> bool {
        self.outer_axes <= self.seg_axes
    }

    /// Whether a reduction of this structure accumulates straight in a caller's destination of type `dest`: an
    /// axis reduction (never chunked) of bool or integer values by sum, prod, min or max whose
    /// accumulator, one int64 word per output, is its int64 result (int_acc.rs). The run then fills the
    /// destination with the starts, and the code folds into it: no buffer and no copy.
    pub(crate) fn accumulates_in(&self, dest: ElemType) -> bool {
        let (Some(t), Some(op)) = (self.typed, self.mode.reduce_op()) else {
            return false;
        };
        let axis = self.seg_axes > 0 || !self.mode.folds_segments();
        axis && dest == ElemType::I64
            && t.int_acc()
            && match op {
                ReduceOp::Sum | ReduceOp::Prod => true,
                ReduceOp::Min | ReduceOp::Max => t.values == ElemType::I64,
                _ => false,
            }
    }

    /// The structure of `kernel` read through `plan`; checks that the plan describes the kernel.
    pub fn new(kernel: &KernelIR, plan: &BroadcastPlan) -> Result<Structure> {
        Self::build(kernel, plan, false)
    }

    /// [`Structure::new`]; `typed`: a typed kernel's, whose stored inputs are read in their own
    /// type (any type), not converted into the dtype.
    fn build(kernel: &KernelIR, plan: &BroadcastPlan, typed: bool) -> Result<Structure> {
        kernel.validate()?;
        if plan.shape != kernel.shape {
            return Err(JitError::PlanMismatch(format!(
                "plan shape {:?}, kernel shape {:?}",
                plan.shape, kernel.shape
            )));
        }
        if plan.inputs.len() != kernel.inputs.len() {
            return Err(JitError::PlanMismatch(format!(
                "{} input plans for {} inputs",
                plan.inputs.len(),
                kernel.inputs.len()
            )));
        }
        let rank = kernel.shape.len();
        let k = plan.outer_axes;
        if k > rank || checked_size(&kernel.shape[k..])? != plan.row_len {
            return Err(JitError::PlanMismatch(format!(
                "outer axes {k}, row length {} for shape {:?}",
                plan.row_len, kernel.shape
            )));
        }
        let inputs = plan
            .inputs
            .iter()
            .enumerate()
            .map(|(i, p)| match p {
                InputPlan::Splat => Ok(Access::Splat),
                InputPlan::Contiguous | InputPlan::Materialise => Ok(Access::Contiguous),
                InputPlan::PerRow { row, outer_strides } => {
                    if outer_strides.len() != k {
                        return Err(JitError::PlanMismatch(format!(
                            "input {i} has {} outer strides for {k} outer axes",
                            outer_strides.len()
                        )));
                    }
                    Ok(match *row {
                        RowAccess::Run => Access::RowRun,
                        RowAccess::Splat => Access::RowSplat,
                        RowAccess::Strided { stride } if stride != 0 && stride != 1 => Access::RowStrided {
                            reversed: stride == -1,
                        },
                        RowAccess::Strided { stride } => {
                            return Err(JitError::PlanMismatch(format!(
                                "input {i} is read as a strided row of element stride {stride}"
                            )));
                        }
                    })
                }
            })
            .collect::<Result<Vec<_>>>()?;
        let own = kernel.dtype;
        let stored = kernel
            .inputs
            .iter()
            .zip(&plan.inputs)
            .map(|(decl, p)| match decl.stored {
                Some(t) if t != own && p.reads_stored() => {
                    if typed || t.converts_into(kernel.dtype) {
                        Ok(Some(t))
                    } else {
                        Err(JitError::Unsupported(format!(
                            "input '{}' stored as {t} in a {} kernel",
                            decl.name,
                            kernel.dtype.short()
                        )))
                    }
                }
                _ => Ok(None),
            })
            .collect::<Result<Vec<_>>>()?;
        let (mode, seg_axes) = match &kernel.kind {
            KernelKind::Map => (Mode::Map, 0),
            KernelKind::Scan(scan) => {
                // the code reads the whole space as one row (no outer axes) or rows of one fixed
                // geometry: each line, or each step of a block of lines side by side
                let rows = scan.row_axes(&kernel.shape);
                if k != 0 && !rows.contains(&k) {
                    return Err(JitError::Unsupported(format!(
                        "a scan over axis {:?} of shape {:?} is planned with no outer axes or {rows:?}, \
                         not {k}",
                        scan.axis, kernel.shape
                    )));
                }
                let (_, _, inner) = scan.lines(&kernel.shape);
                (
                    Mode::Scan {
                        scan: *scan,
                        columns: inner > 1,
                    },
                    0,
                )
            }
            KernelKind::Compound { op, axes } => {
                let (m, reduced) = trailing_block(rank, axes);
                if !reduced || axes.iter().any(|&a| a < m) {
                    return Err(JitError::Unsupported(format!(
                        "the compound reduction {} over axes {axes:?} of rank {rank}: compiled only where \
                         every reduced axis is trailing (rows, whole arrays)",
                        op.name()
                    )));
                }
                (Mode::Compound(*op), m)
            }
            KernelKind::Siblings { ops, axes } => {
                let (m, reduced) = trailing_block(rank, axes);
                let mode = match Parts::new(ops) {
                    Some(parts) if reduced && axes.iter().all(|&a| a >= m) => Some(Mode::Siblings(parts)),
                    Some(parts) if !reduced && !axes.is_empty() && Parts::kept_order(ops) => {
                        Some(Mode::KeptSiblings(parts))
                    }
                    _ => None,
                };
                let Some(mode) = mode else {
                    return Err(JitError::Unsupported(format!(
                        "{} sibling reductions {ops:?} over axes {axes:?} of rank {rank}: compiled \
                         where every reduced axis is trailing (rows, whole arrays), or the trailing \
                         axes are kept and every component or none is a sum; at most {}",
                        ops.len(),
                        Parts::MAX
                    )));
                };
                (mode, m)
            }
            KernelKind::Reduce { op, axes } => {
                let (m, reduced) = trailing_block(rank, axes);
                let mode = if reduced {
                    Mode::Trailing(*op)
                } else {
                    Mode::Kept(*op)
                };
                (mode, m)
            }
        };
        Ok(Structure {
            dtype: kernel.dtype,
            rank,
            outer_axes: k,
            inputs,
            stored,
            mode,
            seg_axes,
            typed: None,
        })
    }

    /// The structure of a typed kernel's `kernel` (its arena typed, casts explicit; its dtype
    /// float64, the kernel's lanes; each input of another type than float64 declared
    /// [`kiln_ir::InputDecl::stored`] as it) read through `plan`, and the typed kernel: what
    /// [`Structure::new`] checks, and that the code generator compiles it
    /// ([`crate::typed::why_not`]) and the plan reads every input where it is.
    ///
    /// # Errors
    /// What [`Structure::new`] refuses, [`JitError::Unsupported`] for a kernel the code generator
    /// does not compile, and a plan that materialises an input.
    pub fn typed(
        kernel: &KernelIR,
        plan: &BroadcastPlan,
    ) -> Result<(Structure, kiln_ir::typed::TypedKernel)> {
        let own = kernel.dtype;
        let inputs: Vec<ElemType> = kernel.inputs.iter().map(|d| d.stored.unwrap_or(own)).collect();
        let typed = kiln_ir::typed::TypedKernel::of_arena(kernel, &inputs)?;
        if let Some(why) = crate::typed::why_not(&typed) {
            return Err(JitError::Unsupported(format!("the typed kernel holds {why}")));
        }
        if kernel.dtype != crate::typed::lanes_dtype(&typed) {
            return Err(JitError::Unsupported(format!(
                "a typed kernel in {} lanes where its values take {}",
                kernel.dtype.short(),
                crate::typed::lanes_dtype(&typed).short()
            )));
        }
        if let Some(i) = plan.inputs.iter().position(|p| !p.reads_stored()) {
            return Err(JitError::Unsupported(format!(
                "input '{}' of a typed kernel planned as a copy (a typed kernel reads every input \
                 where it is)",
                kernel.inputs[i].name
            )));
        }
        let mut st = Structure::build(kernel, plan, true)?;
        st.typed = Some(TypedValues {
            values: typed.value_type(),
            output: (typed.output_type()),
        });
        Ok((st, typed))
    }

    // ---- parameter layout: [row_len, seg_len, n, part, (dim, ocs) per outer axis, strides per input
    // ---- per outer axis, row stride per input, (dim, segcs, ostr, rstr) per segment axis, (dim,
    // ---- cstride) per axis]

    /// The parameter slot of the row length.
    pub const ROW_LEN: usize = 0;
    /// The parameter slot of the segment length.
    pub const SEG_LEN: usize = 1;
    /// The number of points: a segment's range is clamped to it (the last chunk of a chunked
    /// whole-array reduction is shorter).
    pub const N: usize = 2;
    /// Whole-array reductions (`seg_axes == 0`, trailing): segment `s` folds into output slot
    /// `s * part`: 0 folds every segment into one slot, 1 gives each chunk its own partial.
    pub const PART: usize = 3;
    /// Kept sibling reductions: the outputs of one component, each component's run that many
    /// 8-byte words after the one before it, in the `PART` slot.
    pub const COMPONENT_OUTPUTS: usize = 3;
    /// Scans: the length of a line (points along the scanned axis), in the `SEG_LEN` slot.
    pub const LINE_LEN: usize = 1;
    /// Scans: the distance between a line's points (`inner`, the lines side by side), in the `PART`
    /// slot. A scan's segment is one block of `LINE_LEN * LINE_STRIDE` points.
    pub const LINE_STRIDE: usize = 3;
    const HEAD: usize = 4;

    /// Dimension and row-count stride of outer axis `a`: `(p, p + 1)`.
    pub fn p_outer(&self, a: usize) -> usize {
        Self::HEAD + 2 * a
    }
    /// Outer stride (elements) of input `i` along outer axis `a`.
    pub fn p_stride(&self, i: usize, a: usize) -> usize {
        Self::HEAD + 2 * self.outer_axes + i * self.outer_axes + a
    }
    /// The element stride of input `i`'s strided row ([`Access::RowStrided`]; 0 for any other
    /// access).
    pub fn p_row_stride(&self, i: usize) -> usize {
        Self::HEAD + 2 * self.outer_axes + self.inputs.len() * self.outer_axes + i
    }
    /// `(dim, segment stride, output stride, reduction stride)` of segment axis `b`: `p..p + 4`.
    pub fn p_seg(&self, b: usize) -> usize {
        self.p_row_stride(self.inputs.len()) + 4 * b
    }
    /// `(dim, c-stride)` of iteration axis `a` (for `Index`).
    pub fn p_axis(&self, a: usize) -> usize {
        self.p_seg(self.seg_axes) + 2 * a
    }
    /// The number of i64 parameters a run passes.
    pub fn param_count(&self) -> usize {
        self.p_axis(self.rank)
    }

    /// The run-time sizes of `kernel` over `plan` (which [`Structure::new`] accepted).
    pub fn geometry(&self, kernel: &KernelIR, plan: &BroadcastPlan) -> Result<Geometry> {
        let shape = &kernel.shape;
        let n = checked_size(shape)?;
        let k = self.outer_axes;
        let axes = reduced_axes(&kernel.kind);
        let mut p = vec![0i64; self.param_count()];
        p[Self::ROW_LEN] = plan.row_len as i64;
        let outer_cs = c_strides(&shape[..k]);
        for a in 0..k {
            p[self.p_outer(a)] = shape[a] as i64;
            p[self.p_outer(a) + 1] = outer_cs[a] as i64;
        }
        for (i, ip) in plan.inputs.iter().enumerate() {
            if let InputPlan::PerRow { outer_strides, row } = ip {
                for a in 0..k {
                    p[self.p_stride(i, a)] = outer_strides[a] as i64;
                }
                if let RowAccess::Strided { stride } = *row {
                    p[self.p_row_stride(i)] = stride as i64;
                }
            }
        }
        let m = self.seg_axes;
        let kept: Vec<usize> = (0..shape.len()).filter(|a| !axes.contains(a)).collect();
        let out_shape: Vec<usize> = kept.iter().map(|&a| shape[a]).collect();
        let red_shape: Vec<usize> = axes.iter().map(|&a| shape[a]).collect();
        let out_cs = c_strides(&out_shape);
        let red_cs = c_strides(&red_shape);
        let seg_cs = c_strides(&shape[..m]);
        for b in 0..m {
            let base = self.p_seg(b);
            p[base] = shape[b] as i64;
            p[base + 1] = seg_cs[b] as i64;
            if let Some(pos) = kept.iter().position(|&a| a == b) {
                p[base + 2] = out_cs[pos] as i64;
            } else if let Some(pos) = axes.iter().position(|&a| a == b) {
                p[base + 3] = red_cs[pos] as i64;
            }
        }
        let cs = c_strides(shape);
        for a in 0..shape.len() {
            p[self.p_axis(a)] = shape[a] as i64;
            p[self.p_axis(a) + 1] = cs[a] as i64;
        }
        let (n_seg, seg_len) = match self.mode {
            Mode::Map => (usize::from(n > 0), n),
            Mode::Scan { scan, .. } => {
                let (outer, len, inner) = scan.lines(shape);
                (outer, len * inner)
            }
            _ => (checked_size(&shape[..m])?, checked_size(&shape[m..])?),
        };
        p[Self::SEG_LEN] = seg_len as i64;
        p[Self::N] = n as i64;
        if let Mode::Scan { scan, .. } = self.mode {
            let (_, len, inner) = scan.lines(shape);
            p[Self::LINE_LEN] = len as i64;
            p[Self::LINE_STRIDE] = inner as i64;
        }
        let (n_out, out_shape) = match self.mode {
            Mode::Scan { .. } => (n, kernel.output_shape()),
            _ => (checked_size(&out_shape)?, out_shape),
        };
        if let Mode::KeptSiblings(_) = self.mode {
            p[Self::COMPONENT_OUTPUTS] = n_out as i64;
        }
        let n_red = checked_size(&red_shape)?;
        if n > i64::MAX as usize / 16 {
            return Err(JitError::Unsupported(format!(
                "{n} points do not fit the i64 offsets"
            )));
        }
        let declared = kernel
            .inputs
            .iter()
            .map(|i| checked_size(&i.shape).ok())
            .collect();
        Ok(Geometry {
            params: p,
            n,
            n_seg,
            seg_len,
            n_out,
            n_red,
            out_shape,
            declared,
            out_type: self.typed.map_or_else(|| kernel.output_type(), |t| t.output),
        })
    }
}
