//! Lowering: a builder [`Expr`] becomes a [`Pipeline`], a sequence of kernels ([`Stage`]s), each a
//! [`Program`]: the dtype- and shape-independent half of a kernel (input names, the hash-consed body,
//! the reduction). A `Program` with concrete input dtypes and shapes becomes a [`KernelIR`].
//!
//! An expression without reductions, or whose only reduction is outermost, is one kernel. A reduction
//! whose value feeds later elementwise work (`x - max(x, axis=1, keepdims=1)`, softmax,
//! `sqrt(sum(x*x))`, `mean`, `var`, `std`) ends a kernel of its own, fused as far as it goes; its result
//! flows into the next kernel as an input named `%k` (the index of the stage that made it) and is
//! broadcast there as NumPy would. Stages that compute the same thing (the two `max(x)` of a softmax
//! written out in text) are computed once.
//!
//! Several expressions ([`Pipeline::lower_many`]) lower into one pipeline: their stages are shared
//! where equal, and their results that are maps become one more kernel, [`Fused`], a map of several
//! outputs that reads its inputs once and computes every subexpression the maps share once.
//!
//! Lowering walks each kernel's tree with an explicit stack (no recursion, so no depth limit within a
//! kernel) and interns every node into one arena: a subtree used twice is computed once.

use crate::contract::Contraction;
use crate::error::{Error, Result};
use crate::expr::{Axes, Expr, ExprNode};
use crate::scan_options::ScanOptions;
use kiln_ir::shape::{broadcast_shapes, normalize_axes};
use kiln_ir::{
    BinaryOp, CompoundOp, ElemType, ExprArena, InputDecl, KernelIR, KernelKind, Node, NodeId, Real, ReduceOp,
    Scan, ScanOp, UnaryOp,
};
use rustc_hash::FxHashMap as HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A kernel's reduction: its op and axes, how its result is shaped and finished.
#[derive(Debug, Clone)]
pub struct Reduction {
    /// The reduction.
    pub op: ReduceOp,
    /// The reduced axes.
    pub axes: Axes,
    /// Keep each reduced axis with length 1.
    pub keepdims: bool,
    /// Each output's fold starts here (sum, prod, min, max only), applied exactly once.
    pub initial: Option<f64>,
    /// A mean: the sum divided by the number of values reduced into each output.
    pub mean: bool,
}

impl Reduction {
    /// A plain reduction: no keepdims, no initial, no mean.
    pub fn new(op: ReduceOp, axes: Axes) -> Reduction {
        Reduction {
            op,
            axes,
            keepdims: false,
            initial: None,
            mean: false,
        }
    }

    /// The reduced axes of an iteration space of rank `rank` (normalised, sorted; checked).
    pub fn resolve_axes(&self, rank: usize) -> Result<Vec<usize>> {
        Ok(match &self.axes {
            Axes::All => (0..rank).collect(),
            Axes::Some(list) => {
                if self.op.is_arg() && list.len() != 1 {
                    return Err(kiln_ir::IrError::InvalidReduction(format!(
                        "{} takes one axis or none, not {} axes",
                        self.op.name(),
                        list.len()
                    ))
                    .into());
                }
                normalize_axes(list, rank)?
            }
        })
    }

    /// The result's shape over an iteration shape: the kept axes, and the reduced ones as 1 with
    /// `keepdims`.
    pub fn result_shape(&self, shape: &[usize], axes: &[usize]) -> Vec<usize> {
        shape
            .iter()
            .enumerate()
            .filter_map(|(a, &d)| match (axes.contains(&a), self.keepdims) {
                (false, _) => Some(d),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect()
    }
}

impl PartialEq for Reduction {
    fn eq(&self, other: &Self) -> bool {
        self.op == other.op
            && self.axes == other.axes
            && self.keepdims == other.keepdims
            && self.initial.map(f64::to_bits) == other.initial.map(f64::to_bits)
            && self.mean == other.mean
    }
}

impl Eq for Reduction {}

impl Hash for Reduction {
    fn hash<H: Hasher>(&self, h: &mut H) {
        self.op.hash(h);
        self.axes.hash(h);
        self.keepdims.hash(h);
        self.initial.map(f64::to_bits).hash(h);
        self.mean.hash(h);
    }
}

impl fmt::Display for Reduction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(if self.mean { "mean" } else { self.op.name() })?;
        match &self.axes {
            Axes::All => f.write_str(" axis=None")?,
            Axes::Some(list) => write!(f, " axis={list:?}")?,
        }
        if self.keepdims {
            f.write_str(" keepdims")?;
        }
        if let Some(v) = self.initial {
            write!(f, " initial={v:?}")?;
        }
        Ok(())
    }
}

/// One kernel, ready to be specialised: its inputs by name, its body and what it does with it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Program {
    /// Input names, in order of first appearance; input `i` of the body is `names[i]` (a user input,
    /// or `%k`, the result of stage `k`).
    pub names: Vec<String>,
    /// The body's hash-consed nodes.
    pub arena: ExprArena,
    /// The body: the stage's value at each point.
    pub body: NodeId,
    /// The further outputs of a map of several ([`KernelIR::extra`]); empty for one output.
    pub extra: Vec<NodeId>,
    /// What the kernel does with the body's values.
    pub work: Work,
    /// Whether the body held a function of constants (`trunc(-1)`, `cos(3)`), folded in f64 to a
    /// literal: NumPy 2 makes such a value a strong float64 scalar, so the kernel computes in f64
    /// whatever its inputs' dtypes (operators on literals, `2*3`, stay weak Python scalars).
    pub strong_f64: bool,
}

/// What a stage's kernel does with the body's values: one of four, exclusively.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Work {
    /// One output element per point.
    Map,
    /// The outermost reduction.
    Reduce(Reduction),
    /// The outermost scan.
    Scan(ScanOp, ScanOptions),
    /// A contraction: its index variables and input placements, and its fold.
    Contract(Contraction, Reduction),
    /// Two statistics over `axes` in one pass (made by [`crate::siblings`] of two sibling
    /// reductions): the result is both, along a leading axis of length 2, each with the reduced axes
    /// kept as length 1; later stages read one of them ([`Source::Part`]). The two reductions it
    /// replaced run instead where the backend does not compile it for the shapes at hand.
    Compound(CompoundOp, Axes, Box<Siblings>),
    /// Several reductions over the same inputs and axes in one pass (made by
    /// [`crate::sibling_pass`]): component `c` reduces root `c` (`body`, then `extra`) as
    /// `parts[c]` did alone. The result is every component along a leading axis, each with the
    /// reduced axes kept as length 1; later stages read one ([`Source::Part`]). The reductions run
    /// one by one where the backend does not run the pass for the shapes and types at hand.
    Siblings(Vec<Sibling>),
}

/// One component of a [`Work::Siblings`] stage: the reduction stage it was.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sibling {
    /// The stage's program as it was (run alone where the backend does not run the pass).
    pub program: Program,
    /// For each of `program`'s inputs, the input of the merged stage it is.
    pub inputs: Vec<usize>,
}

impl Sibling {
    /// The component's reduction.
    pub fn reduction(&self) -> &Reduction {
        self.program.reduction().expect("a sibling is a reduction")
    }

    /// The name of component `c` in plans (`sum0`, `mean1`, ...).
    pub fn name(&self, c: usize) -> String {
        let r = self.reduction();
        format!("{}{c}", if r.mean { "mean" } else { r.op.name() })
    }
}

/// The two stages a compound stage replaced, to run where a backend does not run it (the JIT for
/// a reduction over leading axes): `first` reads the compound stage's inputs, `second` reads
/// `first`'s result (with the reduced axes kept) as its input `m_input` and otherwise the compound
/// stage's inputs.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Siblings {
    /// The first of the two stages (the mean, or the max).
    pub first: Program,
    /// The second (the squared deviations' mean, or the sum of exponentials).
    pub second: Stage,
    /// The input of `second` that reads `first`'s result.
    pub m_input: usize,
}

impl Program {
    /// The reduction the kernel folds with (a reduction's, or a contraction's fold), if any.
    pub fn reduction(&self) -> Option<&Reduction> {
        match &self.work {
            Work::Reduce(r) | Work::Contract(_, r) => Some(r),
            Work::Map | Work::Scan(..) | Work::Compound(..) | Work::Siblings(_) => None,
        }
    }

    /// The axes a compound or sibling stage reduces (each component alike), if it is one.
    pub fn component_axes(&self) -> Option<&Axes> {
        match &self.work {
            Work::Compound(_, axes, _) => Some(axes),
            Work::Siblings(parts) => Some(&parts[0].reduction().axes),
            _ => None,
        }
    }

    /// The contraction, if the kernel is one.
    pub fn contraction(&self) -> Option<&Contraction> {
        match &self.work {
            Work::Contract(c, _) => Some(c),
            _ => None,
        }
    }
}

/// Where a stage's input comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Source {
    /// The user's input `k` ([`Pipeline::names`]).
    Input(usize),
    /// The result of stage `k`.
    Stage(usize),
    /// The result of stage `k`, a reduction with keepdims, with its reduced axes dropped: what the
    /// same reduction without keepdims gives (one reduction computed once for both shapes).
    Dropped(usize),
    /// The result of stage `k`, a reduction without keepdims over listed axes, with its reduced
    /// axes put back as length 1: what the same reduction with keepdims gives.
    Kept(usize),
    /// Component `part` (0 or 1) of the result of stage `stage`, a compound reduction, with its
    /// reduced axes kept as length 1 (`keepdims`) or dropped.
    Part {
        /// The compound stage.
        stage: usize,
        /// The component, 0 or 1.
        part: u8,
        /// Whether the reduced axes are kept as length 1.
        keepdims: bool,
    },
}

impl Source {
    /// The name a stage's body gives this input (a user input keeps the user's name).
    pub(crate) fn stage_name(self, pipeline: &[Stage]) -> Option<String> {
        Some(match self {
            Source::Input(_) => return None,
            Source::Stage(k) => format!("%{k}"),
            Source::Dropped(k) => format!("%{k}.dropped"),
            Source::Kept(k) => format!("%{k}.kept"),
            Source::Part {
                stage,
                part,
                keepdims,
            } => {
                let name = match &pipeline[stage].program.work {
                    Work::Compound(op, ..) => op.parts()[part as usize].to_string(),
                    Work::Siblings(parts) => parts[part as usize].name(part as usize),
                    _ => "?".into(),
                };
                format!("%{stage}.{name}{}", if keepdims { ".kept" } else { "" })
            }
        })
    }
}

/// One kernel of a pipeline and where each of its inputs comes from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Stage {
    /// The kernel.
    pub program: Program,
    /// Where each of its inputs comes from, in the order of its names.
    pub sources: Vec<Source>,
}

/// An expression (or several) as a sequence of kernels; the last stage's result is the expression's
/// (for several, [`Pipeline::results`] says where each comes from).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Pipeline {
    /// The user's input names, in order of first appearance.
    pub names: Vec<String>,
    /// The kernels, in the order they run.
    pub stages: Vec<Stage>,
    /// Where each result comes from: one for an expression (its last stage), one per expression of
    /// [`Pipeline::lower_many`].
    pub results: Vec<Source>,
    /// The results that are maps, as one kernel of several outputs (two or more of them).
    pub fused: Option<Fused>,
}

/// Maps among a pipeline's results, computed as one kernel of several outputs: output `o` is the
/// result of stage `members[o]` (each a map, or a sum, prod, min, max or mean of every axis, that no
/// other stage reads; at most one reduction, output 0, whose kernel the maps become further outputs
/// of: `y = x*2; s = sum(x*2)` reads `x` once). The members stay stages of their own: a run whose
/// members do not share one iteration shape and dtype computes them one by one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Fused {
    /// The kernel of several outputs.
    pub stage: Stage,
    /// Output `o` is the result of stage `members[o]`.
    pub members: Vec<usize>,
}

impl Fused {
    /// The results of `stages` that can be one kernel of several outputs: the maps among `results`
    /// and one whole-array sum, prod, min or max no other stage reads (output 0), when there are two
    /// or more of them.
    pub fn choose(stages: &[Stage], results: &[Source]) -> Option<Fused> {
        let mut members: Vec<usize> = Vec::new();
        let mut reduction: Option<usize> = None;
        let read = |k: usize| {
            stages.iter().any(|s| {
                s.sources
                    .iter()
                    .any(|x| matches!(*x, Source::Stage(j) | Source::Dropped(j) | Source::Kept(j) if j == k))
            }) || results
                .iter()
                .any(|x| matches!(*x, Source::Dropped(j) | Source::Kept(j) if j == k))
        };
        for r in results {
            if let Source::Stage(k) = *r {
                let p = &stages[k].program;
                // a map computed in f64 because of a folded function of constants keeps its own kernel
                if p.strong_f64 || members.contains(&k) || reduction == Some(k) {
                    continue;
                }
                match &p.work {
                    Work::Map => members.push(k),
                    // one whole-array reduction no other stage reads becomes the kernel's output 0
                    Work::Reduce(r)
                        if reduction.is_none()
                            && r.axes == Axes::All
                            && r.initial.is_none()
                            && matches!(
                                r.op,
                                ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Min | ReduceOp::Max
                            )
                            && !read(k) =>
                    {
                        reduction = Some(k)
                    }
                    _ => {}
                }
            }
        }
        (!members.is_empty() && members.len() + usize::from(reduction.is_some()) >= 2)
            .then(|| Fused::merge(stages, reduction.into_iter().chain(members).collect()))
    }

    /// Merges the map stages `members` of `stages` into one stage of several outputs: their inputs
    /// (user inputs and earlier results) once each, their bodies interned into one arena (so a
    /// subexpression they share is one node).
    fn merge(stages: &[Stage], members: Vec<usize>) -> Fused {
        let mut arena = ExprArena::new();
        let (mut names, mut sources): (Vec<String>, Vec<Source>) = (Vec::new(), Vec::new());
        let mut roots = Vec::new();
        for &k in &members {
            let st = &stages[k];
            let p = &st.program;
            let mut map: Vec<Option<NodeId>> = vec![None; p.body.index() + 1];
            for id in p.arena.reachable(p.body) {
                let node = match *p.arena.node(id) {
                    Node::Input(n) => {
                        let src = st.sources[n as usize];
                        let i = sources.iter().position(|s| *s == src).unwrap_or_else(|| {
                            sources.push(src);
                            names.push(p.names[n as usize].clone());
                            sources.len() - 1
                        });
                        Node::Input(i as u32)
                    }
                    node => node.map_operands(|o| map[o.index()].expect("operands come first")),
                };
                map[id.index()] = Some(arena.intern(node));
            }
            roots.push(map[p.body.index()].expect("the body is reachable"));
        }
        let work = stages[members[0]].program.work.clone();
        Fused {
            stage: Stage {
                program: Program {
                    names,
                    arena,
                    body: roots[0],
                    extra: roots[1..].to_vec(),
                    work,
                    strong_f64: false,
                },
                sources,
            },
            members,
        }
    }
}

impl Pipeline {
    /// Lowers `expr` into as few kernels as its reductions allow.
    pub fn lower(expr: &Expr) -> Result<Pipeline> {
        let mut b = Builder::default();
        let root = b.stage(expr)?;
        debug_assert_eq!(
            root,
            Source::Stage(b.stages.len() - 1),
            "the root is the last stage"
        );
        Ok(Pipeline {
            names: b.names,
            results: vec![Source::Stage(b.stages.len() - 1)],
            stages: b.stages,
            fused: None,
        })
    }

    /// Lowers several expressions into one pipeline: equal stages (and reductions that differ only in
    /// keepdims) are computed once whichever expression they come from, and the results that are maps
    /// (two or more) also become one [`Fused`] kernel of several outputs.
    ///
    /// # Errors
    /// No expression, or the errors of [`Pipeline::lower`].
    pub fn lower_many(exprs: &[Expr]) -> Result<Pipeline> {
        if exprs.is_empty() {
            return Err(Error::Unsupported("no expression to compile".into()));
        }
        let mut b = Builder::default();
        let results = exprs
            .iter()
            .map(|e| b.stage(e))
            .collect::<Result<Vec<Source>>>()?;
        let fused = Fused::choose(&b.stages, &results);
        Ok(Pipeline {
            names: b.names,
            stages: b.stages,
            results,
            fused,
        })
    }

    /// Whether the pipeline has several results ([`Pipeline::lower_many`] of two or more).
    pub fn is_many(&self) -> bool {
        self.results.len() != 1
    }

    /// The stage whose result is the expression's.
    pub fn last(&self) -> &Stage {
        self.stages.last().expect("a pipeline has a stage")
    }
}

impl fmt::Display for Pipeline {
    /// The plan: each kernel, what flows into it and what it gives.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (k, stage) in self.stages.iter().enumerate() {
            let from: Vec<String> = stage
                .program
                .names
                .iter()
                .zip(&stage.sources)
                .map(|(n, s)| match s {
                    Source::Input(_) => n.clone(),
                    Source::Stage(j) => format!("%{j} (kernel {j})"),
                    Source::Dropped(j) => format!("%{j} (kernel {j}, reduced axes dropped)"),
                    Source::Kept(j) => format!("%{j} (kernel {j}, reduced axes kept)"),
                    Source::Part { stage, keepdims, .. } => format!(
                        "{} (kernel {stage}, reduced axes {})",
                        s.stage_name(&self.stages).unwrap_or_default(),
                        if *keepdims { "kept" } else { "dropped" }
                    ),
                })
                .collect();
            let p = &stage.program;
            let what = match &p.work {
                Work::Compound(op, axes, _) => {
                    let axes = match axes {
                        Axes::All => "None".to_string(),
                        Axes::Some(list) => format!("{list:?}"),
                    };
                    let [a, b] = op.parts();
                    format!("compound {} axis={axes} ({a}, {b}: one pass)", op.name())
                }
                Work::Siblings(parts) => {
                    let each: Vec<String> = parts.iter().map(|s| s.reduction().to_string()).collect();
                    format!("siblings [{}] (one pass)", each.join(", "))
                }
                Work::Contract(c, r) => format!("contract {r} index={:?}", c.index),
                Work::Reduce(r) => format!("reduce {r}"),
                Work::Scan(op, o) => format!(
                    "scan {} axis={}{}{}",
                    op.name(),
                    o.axis.map_or("None".into(), |a| a.to_string()),
                    if o.exclusive { " exclusive" } else { "" },
                    if o.reverse { " reverse" } else { "" }
                ),
                Work::Map => "map".into(),
            };
            let fused = match &self.fused {
                Some(fu) if fu.members.contains(&k) => format!(
                    " (computed by kernel {} with the other results where they share one iteration shape)",
                    self.stages.len()
                ),
                _ => String::new(),
            };
            writeln!(f, "kernel {k}: {what} <- [{}] -> %{k}{fused}", from.join(", "))?;
        }
        if self.is_many() {
            let results: Vec<String> = self
                .results
                .iter()
                .map(|s| match s {
                    Source::Input(i) => self.names[*i].clone(),
                    Source::Stage(j) | Source::Dropped(j) | Source::Kept(j) => format!("%{j}"),
                    Source::Part { .. } => s.stage_name(&self.stages).unwrap_or_default(),
                })
                .collect();
            writeln!(f, "results: {}", results.join(", "))?;
        }
        if let Some(fu) = &self.fused {
            let outs: Vec<String> = fu.members.iter().map(|k| format!("%{k}")).collect();
            let what = match fu.stage.program.reduction() {
                Some(r) if outs.len() == 2 => format!("reduce {r} and 1 map"),
                Some(r) => format!("reduce {r} and {} maps", outs.len() - 1),
                None => format!("map of {} outputs", outs.len()),
            };
            writeln!(
                f,
                "kernel {}: {what} in one pass <- [{}] -> {}",
                self.stages.len(),
                fu.stage.program.names.join(", "),
                outs.join(", ")
            )?;
        }
        Ok(())
    }
}

impl Program {
    /// Lowers `expr` into one kernel. Errors if the expression needs several (a reduction whose
    /// value feeds later work): [`Pipeline::lower`] takes any expression.
    pub fn lower(expr: &Expr) -> Result<Program> {
        let mut p = Pipeline::lower(expr)?;
        if p.stages.len() != 1 {
            return Err(Error::Unsupported(format!(
                "the expression needs {} kernels; run it with FusedRunner",
                p.stages.len()
            )));
        }
        let stage = p.stages.pop().expect("one stage");
        let mut program = stage.program;
        program.names = p.names;
        Ok(program)
    }

    /// The kernel this program is for inputs of `dtype` and `shapes` (one per name, in order).
    pub fn kernel(&self, dtype: ElemType, shapes: &[Vec<usize>]) -> Result<KernelIR> {
        if shapes.len() != self.names.len() {
            return Err(kiln_ir::IrError::Arity {
                expected: self.names.len(),
                got: shapes.len(),
            }
            .into());
        }
        let shape = match self.contraction() {
            None => broadcast_shapes(shapes.iter().map(|s| s.as_slice()))?,
            Some(c) => c.shape(shapes)?,
        };
        let kind = match &self.work {
            Work::Reduce(r) | Work::Contract(_, r) => KernelKind::Reduce {
                op: r.op,
                axes: r.resolve_axes(shape.len())?,
            },
            Work::Scan(op, o) => {
                let axis = match o.axis {
                    None => None,
                    Some(a) => Some(normalize_axes(&[a], shape.len())?[0]),
                };
                let mut scan = Scan::new(*op, axis).with_initial(o.initial);
                scan.exclusive = o.exclusive;
                scan.reverse = o.reverse;
                KernelKind::Scan(scan)
            }
            Work::Map => KernelKind::Map,
            Work::Compound(op, axes, _) => KernelKind::Compound {
                op: *op,
                axes: Reduction::new(ReduceOp::Sum, axes.clone()).resolve_axes(shape.len())?,
            },
            Work::Siblings(parts) => KernelKind::Siblings {
                ops: parts.iter().map(|s| s.reduction().op).collect(),
                axes: parts[0].reduction().resolve_axes(shape.len())?,
            },
        };
        let inputs = self
            .names
            .iter()
            .zip(shapes)
            .map(|(name, shape)| InputDecl {
                name: name.clone(),
                shape: shape.clone(),
                stored: None,
            })
            .collect();
        let kernel = KernelIR {
            dtype,
            inputs,
            shape,
            arena: self.arena.clone(),
            body: self.body,
            extra: self.extra.clone(),
            kind,
        };
        kernel.validate()?;
        Ok(kernel)
    }
}

/// Whether `new` is `old` but for keepdims (both reductions over the same data and axes): `Some(true)`
/// where `old` keeps the reduced axes (`new` reads it with them dropped), `Some(false)` where it drops
/// listed axes (`new` reads it with them put back). `None` otherwise, and for `axis=None` without
/// keepdims, whose result does not tell the rank to put back.
fn keepdims_twin(old: &Stage, new: &Stage) -> Option<bool> {
    let (Work::Reduce(a), Work::Reduce(b)) = (&old.program.work, &new.program.work) else {
        return None;
    };
    if a.keepdims == b.keepdims || old.sources != new.sources {
        return None;
    }
    let mut twin = new.program.clone();
    twin.work = Work::Reduce(Reduction {
        keepdims: a.keepdims,
        ..b.clone()
    });
    let same = twin == old.program;
    match (same, a.keepdims, &a.axes) {
        (false, _, _) => None,
        (true, true, _) => Some(true),
        (true, false, Axes::Some(_)) => Some(false),
        (true, false, Axes::All) => None,
    }
}

#[derive(Default)]
struct Builder {
    names: Vec<String>,
    stages: Vec<Stage>,
    /// Reduction nodes already lowered, by identity.
    done: HashMap<*const ExprNode, Source>,
}

impl Builder {
    /// Lowers the kernel rooted at `root` (a reduction or not) after the stages it reads; where its
    /// result comes from. Equal stages are one stage, and so are two reductions that differ only in
    /// keepdims (common subexpressions across kernels): the one lowered first is computed, the other
    /// reads it reshaped ([`Source::Dropped`], [`Source::Kept`]).
    fn stage(&mut self, root: &Expr) -> Result<Source> {
        if let Some(&k) = self.done.get(&root.ptr()) {
            return Ok(k);
        }
        let stage = self.finish(classify(root)?)?;
        let source = if let Some(k) = self.stages.iter().position(|s| *s == stage) {
            Source::Stage(k)
        } else if let Some((k, kept)) = self.stages.iter().enumerate().find_map(|(k, s)| {
            let kept = keepdims_twin(s, &stage)?;
            Some((k, kept))
        }) {
            if kept { Source::Dropped(k) } else { Source::Kept(k) }
        } else {
            self.stages.push(stage);
            Source::Stage(self.stages.len() - 1)
        };
        self.done.insert(root.ptr(), source);
        Ok(source)
    }

    /// Lowers a classified root's body (after the stages it reads) into its stage.
    fn finish(&mut self, root: Root<'_>) -> Result<Stage> {
        let index = match &root.work {
            RootWork::Contract { index, .. } => Some(index.clone()),
            _ => None,
        };
        let mut lowering = Lowering {
            index,
            ..Default::default()
        };
        let body = lowering.lower(root.body, self)?;
        let work = match root.work {
            RootWork::Map => Work::Map,
            RootWork::Reduce(r) => Work::Reduce(r),
            RootWork::Scan(op, o) => Work::Scan(op, o),
            RootWork::Contract { index, reduced, fold } => {
                let mut bound = vec![false; index.len()];
                for p in lowering.placements.iter().flatten() {
                    for &a in p {
                        bound[a] = true;
                    }
                }
                let placements = lowering
                    .placements
                    .iter()
                    .map(|p| p.clone().unwrap_or_default())
                    .collect();
                let c = Contraction {
                    index,
                    reduced,
                    bound,
                    placements,
                };
                Work::Contract(c, fold)
            }
        };
        Ok(Stage {
            program: Program {
                names: lowering.names,
                arena: lowering.arena,
                body,
                extra: Vec::new(),
                work,
                strong_f64: lowering.strong_f64,
            },
            sources: lowering.sources,
        })
    }

    fn user_input(&mut self, name: &str) -> usize {
        match self.names.iter().position(|x| x == name) {
            Some(n) => n,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        }
    }
}

/// A stage's root, classified: what the stage does, and the body it does it with.
struct Root<'e> {
    work: RootWork,
    body: &'e Expr,
}

/// What a stage does, before its body is lowered (a contraction's placements come from the body).
enum RootWork {
    Map,
    Reduce(Reduction),
    Scan(ScanOp, ScanOptions),
    Contract {
        index: Vec<String>,
        reduced: usize,
        fold: Reduction,
    },
}

/// Classifies `root` (a reduction, mean, scan, contraction, or anything else: a map) and checks
/// what the classification needs (an initial value only where the op takes one, a contraction's
/// indices distinct and its folded index among them).
fn classify(root: &Expr) -> Result<Root<'_>> {
    let reduction = |op: ReduceOp, axes: &Axes, keepdims: bool, initial: Option<f64>, mean: bool| Reduction {
        op,
        axes: axes.clone(),
        keepdims,
        initial,
        mean,
    };
    let (work, body) = match root.node() {
        ExprNode::Reduce {
            op,
            axes,
            arg,
            keepdims,
            initial,
        } => {
            if initial.is_some() && !op.takes_initial() {
                return Err(kiln_ir::IrError::InvalidReduction(format!(
                    "{}() takes no initial value",
                    op.name()
                ))
                .into());
            }
            (
                RootWork::Reduce(reduction(*op, axes, *keepdims, *initial, false)),
                arg,
            )
        }
        ExprNode::Mean { axes, arg, keepdims } => (
            RootWork::Reduce(reduction(ReduceOp::Sum, axes, *keepdims, None, true)),
            arg,
        ),
        ExprNode::Scan { op, options, arg } => (RootWork::Scan(*op, *options), arg),
        ExprNode::Contract {
            op,
            index,
            reduced,
            arg,
            initial,
        } => {
            if !op.takes_initial() {
                return Err(Error::Unsupported(format!(
                    "a contraction folds with sum, prod, min or max, not {}",
                    op.name()
                )));
            }
            for (k, n) in index.iter().enumerate() {
                if index[..k].contains(n) {
                    return Err(Error::Unsupported(format!("index '{n}' is declared twice")));
                }
            }
            let Some(r) = index.iter().position(|n| n == reduced) else {
                return Err(Error::Unsupported(format!(
                    "the folded index '{reduced}' is not among the declared indices {index:?}"
                )));
            };
            let fold = reduction(*op, &Axes::Some(vec![r as isize]), false, *initial, false);
            let work = RootWork::Contract {
                index: index.clone(),
                reduced: r,
                fold,
            };
            (work, arg)
        }
        _ => (RootWork::Map, root),
    };
    Ok(Root { work, body })
}

/// `x op y` on two Python ints, as Python computes it, where the result is an int that fits int64
/// (`+ - * // % ** ^ << >>`); None otherwise (the caller folds it as floats: `/`, a negative
/// exponent, a zero divisor, an overflow; or leaves it to the kernel: comparisons, `&`, `|`).
fn python_int(op: BinaryOp, x: i64, y: i64) -> Option<i64> {
    use kiln_ir::int::Int;
    let (a, b) = (i128::from(x), i128::from(y));
    let v: i128 = match op {
        BinaryOp::Add => a + b,
        BinaryOp::Sub => a - b,
        BinaryOp::Mul => a * b,
        BinaryOp::FloorDiv if y != 0 => return Some(x.floor_div(y)).filter(|_| !(x == i64::MIN && y == -1)),
        BinaryOp::Rem if y != 0 => return Some(x.rem(y)),
        BinaryOp::Pow if y >= 0 => {
            let e = u32::try_from(y).ok()?;
            return x.checked_pow(e);
        }
        BinaryOp::BitXor => a ^ b,
        BinaryOp::Shl if (0..64).contains(&y) => a.checked_shl(y as u32)?,
        BinaryOp::Shr if y >= 0 => a >> y.min(127),
        _ => return None,
    };
    i64::try_from(v).ok()
}

#[derive(Default)]
struct Lowering {
    names: Vec<String>,
    sources: Vec<Source>,
    /// Per input: the iteration axes a subscripted input is read along (contractions only).
    placements: Vec<Option<Vec<usize>>>,
    /// The index variables of the contraction being lowered, if it is one.
    index: Option<Vec<String>>,
    arena: ExprArena,
    done: HashMap<*const ExprNode, NodeId>,
    /// Whether a function of constants was folded (see [`Program::strong_f64`]).
    strong_f64: bool,
}

impl Lowering {
    /// The value of `node` if it is a literal (an integer one as the nearest f64).
    fn constant(&self, node: NodeId) -> Option<f64> {
        match *self.arena.node(node) {
            Node::Literal(bits) => Some(f64::from_bits(bits)),
            Node::Int(v) => Some(v as f64),
            _ => None,
        }
    }

    /// The value of `node` if it is an integer literal.
    fn int_constant(&self, node: NodeId) -> Option<i64> {
        match *self.arena.node(node) {
            Node::Int(v) => Some(v),
            _ => None,
        }
    }

    /// A literal for a subtree of constants, computed in f64 (rounded to the kernel's dtype only
    /// where it is used, as NumPy rounds a Python float); a function's result is a strong f64.
    fn fold(&mut self, value: f64, function: bool) -> NodeId {
        self.strong_f64 |= function;
        self.arena.literal(value)
    }

    /// The body input reading `source` (named `name`) placed along `placement`, added if new.
    fn input(&mut self, source: Source, name: String, placement: Option<Vec<usize>>) -> NodeId {
        let found =
            (0..self.sources.len()).find(|&k| self.sources[k] == source && self.placements[k] == placement);
        let n = match found {
            Some(n) => n,
            None => {
                self.sources.push(source);
                self.names.push(name);
                self.placements.push(placement);
                self.sources.len() - 1
            }
        };
        self.arena.input(n as u32)
    }

    /// The axis of index variable `name` in the contraction being lowered.
    fn index_axis(&self, name: &str) -> Result<usize> {
        let Some(index) = &self.index else {
            return Err(Error::Unsupported(format!(
                "index '{name}' is used outside a contraction"
            )));
        };
        index.iter().position(|n| n == name).ok_or_else(|| {
            Error::Unsupported(format!("'{name}' is not an index of the contraction {index:?}"))
        })
    }

    fn lower(&mut self, root: &Expr, pipeline: &mut Builder) -> Result<NodeId> {
        // post-order walk: a node is interned once all its operands are
        let mut stack: Vec<(&Expr, bool)> = vec![(root, false)];
        while let Some((e, expanded)) = stack.pop() {
            if self.done.contains_key(&e.ptr()) {
                continue;
            }
            let operands: Vec<&Expr> = match e.node() {
                ExprNode::Input(_)
                | ExprNode::Literal(_)
                | ExprNode::Int(_)
                | ExprNode::Bytes(_)
                | ExprNode::Index(_)
                | ExprNode::IndexVar(_)
                | ExprNode::Subscript(..)
                | ExprNode::Reduce { .. }
                | ExprNode::Mean { .. }
                | ExprNode::Scan { .. }
                | ExprNode::Contract { .. } => vec![],
                ExprNode::Unary(_, a) | ExprNode::Cast(_, a) => vec![a],
                ExprNode::Binary(_, a, b) => vec![a, b],
                ExprNode::Where(c, a, b) => vec![c, a, b],
            };
            if !expanded && !operands.is_empty() {
                stack.push((e, true));
                stack.extend(operands.into_iter().rev().map(|o| (o, false)));
                continue;
            }
            let id = |l: &Self, x: &Expr| l.done[&x.ptr()];
            let node = match e.node() {
                ExprNode::Input(name) => {
                    if let Some(index) = &self.index {
                        return Err(Error::Unsupported(format!(
                            "input '{name}' in a contraction must be subscripted by its indices {index:?}"
                        )));
                    }
                    let k = pipeline.user_input(name);
                    self.input(Source::Input(k), name.to_string(), None)
                }
                ExprNode::IndexVar(name) => {
                    let axis = self.index_axis(name)?;
                    self.arena.index(axis as u32)
                }
                ExprNode::Subscript(name, indices) => {
                    let placement = indices
                        .iter()
                        .map(|i| self.index_axis(i))
                        .collect::<Result<Vec<usize>>>()?;
                    if placement.windows(2).any(|w| w[0] >= w[1]) {
                        return Err(Error::Unsupported(format!(
                            "{name}{indices:?}: subscripts must follow the declared index order {:?} \
                             (transposes are not supported)",
                            self.index.as_ref().expect("index_axis checked")
                        )));
                    }
                    let k = pipeline.user_input(name);
                    self.input(Source::Input(k), name.clone(), Some(placement))
                }
                ExprNode::Literal(v) => self.arena.literal(*v),
                ExprNode::Int(v) => self.arena.int(*v),
                ExprNode::Bytes(v) => self.arena.intern(Node::Bytes(*v)),
                ExprNode::Cast(t, a) => {
                    let a = id(self, a);
                    self.arena.cast(*t, a)
                }
                ExprNode::Index(axis) => {
                    let axis = u32::try_from(*axis)
                        .map_err(|_| Error::Unsupported(format!("index({axis}): axis too large")))?;
                    self.arena.index(axis)
                }
                ExprNode::Unary(op, a) => {
                    let a = id(self, a);
                    // Python's `-` of an int stays an int
                    if let (UnaryOp::Neg, Some(v)) = (op, self.int_constant(a))
                        && let Some(n) = v.checked_neg()
                    {
                        self.done.insert(e.ptr(), self.arena.int(n));
                        continue;
                    }
                    // truth values stay nodes: the kernel's output type (bool) is read from them
                    match self.constant(a).filter(|_| !op.is_logical()) {
                        Some(x) => self.fold(
                            op.eval(x),
                            !matches!(op, UnaryOp::Neg | UnaryOp::Recip | UnaryOp::Not),
                        ),
                        None => self.arena.unary(*op, a),
                    }
                }
                ExprNode::Binary(op, a, b) => {
                    let (a, b) = (id(self, a), id(self, b));
                    let ints = self.int_constant(a).zip(self.int_constant(b));
                    match (
                        ints.and_then(|(x, y)| python_int(*op, x, y)),
                        self.constant(a),
                        self.constant(b),
                    ) {
                        (Some(v), _, _) => self.arena.int(v),
                        // bitwise operators and shifts of floats are type errors: the typing says so;
                        // `complex(x, y)` of two constants is a complex constant, kept as the node
                        (None, Some(x), Some(y))
                            if !op.is_logical()
                                && !BinaryOp::INTEGER.contains(op)
                                && *op != BinaryOp::Complex =>
                        {
                            self.fold(op.eval(x, y), !op.is_operator())
                        }
                        _ => self.arena.binary(*op, a, b),
                    }
                }
                ExprNode::Where(c, a, b) => {
                    let (c, a, b) = (id(self, c), id(self, a), id(self, b));
                    match (self.constant(c), self.constant(a), self.constant(b)) {
                        (Some(x), Some(y), Some(z)) => self.fold(if x.is_true() { y } else { z }, true),
                        _ => self.arena.select(c, a, b),
                    }
                }
                ExprNode::Reduce { .. }
                | ExprNode::Mean { .. }
                | ExprNode::Scan { .. }
                | ExprNode::Contract { .. } => {
                    if self.index.is_some() {
                        return Err(Error::Unsupported(
                            "a reduction or scan inside a contraction (compute it outside and subscript it)"
                                .into(),
                        ));
                    }
                    // a reduction inside this kernel: a kernel of its own, whose result flows in
                    let source = pipeline.stage(e)?;
                    let name = source.stage_name(&pipeline.stages).expect("a stage's result");
                    self.input(source, name, None)
                }
            };
            self.done.insert(e.ptr(), node);
        }
        Ok(self.done[&root.ptr()])
    }
}
