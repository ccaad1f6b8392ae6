//! The broadcast plan: how each input is read so that a kernel's inner loop sees only contiguous
//! loads and splats.
//!
//! The iteration space is split into an outer part (`shape[..k]`, walked by an outer loop) and an inner
//! row (`shape[k..]`, flattened into one contiguous loop of `row_len` elements). Each input is then:
//! - [`InputPlan::Splat`]: one element, loaded once and splatted;
//! - [`InputPlan::Contiguous`]: already C-contiguous with the iteration shape, read at the flat index;
//! - [`InputPlan::PerRow`]: constant along the inner axes (splatted once per row) or the same contiguous
//!   row repeated along outer axes (re-read per row); its outer strides say where each row starts, with
//!   stride 0 on stretched axes, so nothing is copied;
//! - [`InputPlan::Materialise`]: any other broadcast, or a strided view that cannot be read per row,
//!   copied once into a C-contiguous buffer of the iteration shape before the kernel runs.
//!
//! A strided view (an [`InputLayout`] with `strides`) is read in place, as a per-row input whose outer
//! strides are the view's own element strides (0 on broadcast axes, negative where the view steps
//! backwards: a row's start is then below the view's first element):
//! - as a [`RowAccess::Run`] when its inner axes are C-contiguous (the row is a run of consecutive
//!   elements): column slices (`x[:, :500]`), row steps (`x[::2, :]`) and reversed rows
//!   (`x[::-1, :]`);
//! - as a [`RowAccess::Strided`] row when its inner axes step uniformly by `stride` elements (each
//!   inner axis's stride is `stride` times its C stride in the iteration shape): a reversed or
//!   stepped last axis (`x[::-1]`, `x[:, ::2]`, `x[::-1, ::-2]`), and the last axis of a transposed
//!   or Fortran-ordered input beside a C one (`a + b.T`: `b.T`'s row steps by a whole column). The
//!   code generator gathers such a row's lanes with scalar loads (a contiguous load and a lane
//!   reversal for stride -1);
//! - as a [`RowAccess::Splat`] where it is constant along the row.
//!
//! Only views whose inner axes do not step uniformly (a transposed block read as one row) are
//! materialised.
//!
//! The planner picks the smallest `k` at which every input is readable without a copy. When that row is
//! shorter than `min_row` elements, it plans one flat loop instead (`k = 0`) and materialises the inputs
//! that need it: a copy is cheaper than an outer loop around rows of a few elements. Scans read rows
//! that nest in their lines or blocks ([`crate::Scan::row_axes`]) and are planned with one of those
//! numbers of outer axes or none ([`BroadcastPlan::with_outer_axes`]; the executor picks).

use crate::error::Result;
use crate::shape::{broadcast_strides, c_strides, checked_size};
use std::fmt;

/// How the inner row reads a per-row input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RowAccess {
    /// A contiguous run of `row_len` elements, starting at the row's offset.
    Run,
    /// One element per row, splatted across it.
    Splat,
    /// `row_len` elements `stride` elements apart (any stride but 0 and 1, negative included),
    /// starting at the row's offset: a reversed or stepped last axis, or a transposed one.
    Strided {
        /// Elements between two consecutive elements of a row.
        stride: isize,
    },
}

/// How one input is read.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum InputPlan {
    /// One element, splatted across the whole iteration space (a scalar or an all-broadcast input).
    Splat,
    /// C-contiguous with the iteration shape: read at the flat point.
    Contiguous,
    /// Read per row; `outer_strides` (in elements, one per outer axis) give each row's start.
    PerRow {
        /// How each row is read.
        row: RowAccess,
        /// Elements to step per outer axis to a row's start.
        outer_strides: Vec<isize>,
    },
    /// Copied once into a C-contiguous buffer of the iteration shape before the kernel runs.
    Materialise,
}

/// An input as the planner sees it: its shape, and whether its buffer is C-contiguous.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputLayout {
    /// The input's own shape.
    pub shape: Vec<usize>,
    /// False for a strided view, which is read per row in place when `strides` allow it, and
    /// materialised otherwise (unless it holds a single element).
    pub contiguous: bool,
    /// The element strides of a view that is not contiguous (one per axis of `shape`), when the caller
    /// can pass the view itself to the backend; ignored for contiguous inputs. None: such a view is
    /// materialised.
    pub strides: Option<Vec<isize>>,
}

impl InputLayout {
    /// A C-contiguous input of `shape`.
    pub fn contiguous(shape: &[usize]) -> InputLayout {
        InputLayout {
            shape: shape.to_vec(),
            contiguous: true,
            strides: None,
        }
    }
}

/// Tuning of the planner.
#[derive(Debug, Clone, Copy)]
pub struct PlanOptions {
    /// The shortest inner row worth an outer loop; shorter rows make the planner flatten and copy.
    pub min_row: usize,
}

impl Default for PlanOptions {
    fn default() -> Self {
        PlanOptions { min_row: 64 }
    }
}

/// The plan of a whole kernel: the outer/inner split and one [`InputPlan`] per input.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BroadcastPlan {
    /// The iteration shape.
    pub shape: Vec<usize>,
    /// `k`: the number of outer axes.
    pub outer_axes: usize,
    /// The length of one inner row: the product of `shape[k..]`.
    pub row_len: usize,
    /// Per input, how it is read.
    pub inputs: Vec<InputPlan>,
}

impl BroadcastPlan {
    /// Plans how `inputs` are read over the iteration shape `shape` (their broadcast, checked first).
    pub fn new(shape: &[usize], inputs: &[InputLayout], options: PlanOptions) -> Result<BroadcastPlan> {
        checked_size(shape)?;
        for input in inputs {
            broadcast_strides(&input.shape, &c_strides(&input.shape), shape)?;
        }
        let rank = shape.len();
        let free = (0..=rank)
            .find(|&k| inputs.iter().all(|i| access_at(i, shape, k).is_some()))
            .unwrap_or(rank);
        let row_len = |k: usize| shape[k..].iter().product::<usize>();
        let k = if free == 0 || row_len(free) >= options.min_row {
            free
        } else {
            0
        };
        let plans = inputs.iter().map(|input| plan_input(input, shape, k)).collect();
        Ok(BroadcastPlan {
            shape: shape.to_vec(),
            outer_axes: k,
            row_len: row_len(k),
            inputs: plans,
        })
    }

    /// Plans how `inputs` are read with exactly `k` outer axes (at most the rank): each input in
    /// place where it is readable per row of `shape[k..]`, materialised otherwise. Scans use it: their
    /// code reads rows of one fixed geometry (see [`crate::Scan::row_axes`]).
    pub fn with_outer_axes(shape: &[usize], inputs: &[InputLayout], k: usize) -> Result<BroadcastPlan> {
        checked_size(shape)?;
        for input in inputs {
            broadcast_strides(&input.shape, &c_strides(&input.shape), shape)?;
        }
        let k = k.min(shape.len());
        Ok(BroadcastPlan {
            shape: shape.to_vec(),
            outer_axes: k,
            row_len: shape[k..].iter().product(),
            inputs: inputs.iter().map(|input| plan_input(input, shape, k)).collect(),
        })
    }

    /// The number of inputs copied before the kernel runs.
    pub fn copies(&self) -> usize {
        self.inputs
            .iter()
            .filter(|p| **p == InputPlan::Materialise)
            .count()
    }

    /// The outer shape walked by the outer loop.
    pub fn outer_shape(&self) -> &[usize] {
        &self.shape[..self.outer_axes]
    }
}

fn is_single(input: &InputLayout) -> bool {
    input.shape.iter().all(|&d| d == 1)
}

/// How `input` is read with `k` outer axes, or None if it must be copied.
fn access_at(input: &InputLayout, shape: &[usize], k: usize) -> Option<InputPlan> {
    if is_single(input) {
        return Some(InputPlan::Splat);
    }
    let lead = shape.len() - input.shape.len();
    if !input.contiguous {
        return strided_at(input, shape, k, lead);
    }
    // the input's dims aligned with the iteration shape's inner axes (missing leading axes are 1)
    let inner: Vec<usize> = (k..shape.len())
        .map(|a| if a < lead { 1 } else { input.shape[a - lead] })
        .collect();
    let row = if inner == shape[k..] {
        RowAccess::Run
    } else if inner.iter().all(|&d| d == 1) {
        RowAccess::Splat
    } else {
        return None;
    };
    let strides = broadcast_strides(&input.shape, &c_strides(&input.shape), shape).ok()?;
    let outer_strides = strides[..k].to_vec();
    if row == RowAccess::Run
        && outer_strides
            .iter()
            .zip(&c_strides(shape)[..k])
            .all(|(a, b)| a == b)
    {
        // every outer axis advances exactly one row: the whole input is the iteration shape
        let full = (0..k).all(|a| a >= lead && input.shape[a - lead] == shape[a]);
        if full {
            return Some(InputPlan::Contiguous);
        }
    }
    Some(InputPlan::PerRow { row, outer_strides })
}

/// How a strided view is read with `k` outer axes: per row, in place, when its inner axes step
/// uniformly (each one `stride` times its C stride in the iteration shape: a run of consecutive
/// elements for stride 1, a strided row otherwise) or not at all (one element per row); None if it
/// must be copied. Outer and row strides may be negative (the backend passes the address of the
/// view's first element, and the run checks every row's first and last element against the view's
/// extent).
fn strided_at(input: &InputLayout, shape: &[usize], k: usize, lead: usize) -> Option<InputPlan> {
    let strides = input.strides.as_ref()?;
    if strides.len() != input.shape.len() {
        return None;
    }
    // the strides the kernel reads with at each point of the iteration shape (0 on broadcast axes)
    let strides = broadcast_strides(&input.shape, strides, shape).ok()?;
    let cs = c_strides(shape);
    let inner = || (k..shape.len()).filter(|&a| shape[a] > 1);
    let row = if inner().all(|a| a >= lead && strides[a] == cs[a]) {
        // each inner axis steps as in a C-contiguous row: the row is consecutive elements
        RowAccess::Run
    } else if (k..shape.len()).all(|a| strides[a] == 0) {
        // constant along the row (a broadcast or size-1 inner block): one element per row
        RowAccess::Splat
    } else {
        // the innermost axis of more than one point sets the step (its C stride is 1); every other
        // inner axis must step that many whole rows of the axes after it
        let last = inner().next_back()?;
        let stride = strides[last];
        let uniform = inner().all(|a| stride.checked_mul(cs[a]) == Some(strides[a]));
        if stride == 0 || !uniform {
            return None;
        }
        RowAccess::Strided { stride }
    };
    Some(InputPlan::PerRow {
        row,
        outer_strides: strides[..k].to_vec(),
    })
}

fn plan_input(input: &InputLayout, shape: &[usize], k: usize) -> InputPlan {
    access_at(input, shape, k).unwrap_or(InputPlan::Materialise)
}

impl InputPlan {
    /// Whether the input's own elements are read where they are (contiguous, one element, per
    /// row): an input stored in another type than the kernel's ([`crate::InputDecl::stored`]) is
    /// then converted where it is read; a materialised input is converted into the dtype before
    /// the kernel runs.
    pub fn reads_stored(&self) -> bool {
        *self != InputPlan::Materialise
    }
}

impl fmt::Display for InputPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputPlan::Splat => f.write_str("splat"),
            InputPlan::Contiguous => f.write_str("contiguous"),
            InputPlan::PerRow {
                row: RowAccess::Run,
                outer_strides,
            } => {
                write!(f, "per-row run, outer strides {outer_strides:?}")
            }
            InputPlan::PerRow {
                row: RowAccess::Splat,
                outer_strides,
            } => {
                write!(f, "per-row splat, outer strides {outer_strides:?}")
            }
            InputPlan::PerRow {
                row: RowAccess::Strided { stride },
                outer_strides,
            } => {
                write!(
                    f,
                    "per-row strided, in place (element stride {stride}), outer strides {outer_strides:?}"
                )
            }
            InputPlan::Materialise => f.write_str("materialise"),
        }
    }
}

impl fmt::Display for BroadcastPlan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "plan shape={:?} outer={:?} row_len={}",
            self.shape,
            self.outer_shape(),
            self.row_len
        )?;
        for (i, p) in self.inputs.iter().enumerate() {
            writeln!(f, "  in{i}: {p}")?;
        }
        Ok(())
    }
}
