//! Sibling reductions in one pass: reduction stages over the same data and axes, whatever their
//! operations, become one stage ([`Work::Siblings`], run as one [`kiln_ir::KernelKind::Siblings`]
//! kernel) that reads the data once: `sum(x*2) + max(x)` and `sum(x); min(x); max(x)` are one pass.
//!
//! Stages `a < b < ...` merge where each is a sum, prod, min, max or mean of values (not truth
//! values), without an `initial`, not computed in f64 by a folded function of constants, over the
//! same axes (as written: `axis=None`, or the same list) of the same set of inputs (so the same
//! iteration shape), and every stage the later ones read comes before `a` (so none reads another,
//! and the merged stage can run where `a` ran). keepdims may differ: each reader reads its
//! component as it read the stage ([`Source::Part`]). At most [`MAX_PARTS`] stages merge into one;
//! the merged stage's component `c` gives exactly the bits stage `c` gave alone.

use crate::executor::float_node;
use crate::expr::Axes;
use crate::program::{Pipeline, Program, Sibling, Source, Stage, Work};
use crate::siblings::rewire;
use kiln_ir::{ExprArena, KernelIR, Node, NodeId};

/// The most stages one pass merges (the compiled kernels' limit: `kiln_jit::compiles_siblings`).
pub const MAX_PARTS: usize = 8;

/// The plan with every group of sibling reductions merged, and a line per merge for `kiln explain`.
pub fn merge_reductions(plan: &Pipeline) -> (Pipeline, Vec<String>) {
    let mut p = plan.clone();
    let mut notes = Vec::new();
    while let Some(group) = find_group(&p) {
        let each: Vec<String> = group.iter().map(|&k| format!("{k}")).collect();
        notes.push(format!(
            "siblings: kernels {} reduce the same data over the same axes: one pass",
            each.join(", ")
        ));
        merge(&mut p, &group);
    }
    (p, notes)
}

/// Whether `stage` may be a component: a plain reduction (or mean) of values, of one output.
fn candidate(stage: &Stage) -> bool {
    let p = &stage.program;
    let Work::Reduce(r) = &p.work else {
        return false;
    };
    r.initial.is_none() && KernelIR::sibling_op(r.op) && !p.strong_f64 && p.extra.is_empty() && float_body(p)
}

/// Whether `p`'s body reads an input and is computed in the float dtype as NumPy types it (its
/// integer literals weak, beside float values), so the float path gives each component what the
/// stage alone would; integer and bool inputs run the stages one by one (see the runner).
fn float_body(p: &Program) -> bool {
    let nodes = p.arena.reachable(p.body);
    nodes.iter().any(|&id| matches!(p.arena.node(id), Node::Input(_)))
        && nodes.iter().all(|&id| float_node(*p.arena.node(id), true))
}

/// The reduced axes of a candidate.
fn axes_of(stage: &Stage) -> &Axes {
    &stage.program.reduction().expect("a candidate reduces").axes
}

/// Whether `stage` reads the same set of sources as `other`.
fn same_inputs(stage: &Stage, other: &Stage) -> bool {
    stage.sources.iter().all(|s| other.sources.contains(s))
        && other.sources.iter().all(|s| stage.sources.contains(s))
}

/// The stage `s` reads from, if it reads one.
fn stage_of(s: Source) -> Option<usize> {
    match s {
        Source::Input(_) => None,
        Source::Stage(k) | Source::Dropped(k) | Source::Kept(k) | Source::Part { stage: k, .. } => Some(k),
    }
}

/// The first group of two or more stages that merge (in order, the first its head).
fn find_group(p: &Pipeline) -> Option<Vec<usize>> {
    for (a, head) in p.stages.iter().enumerate() {
        if !candidate(head) {
            continue;
        }
        let mut group = vec![a];
        for (b, s) in p.stages.iter().enumerate().skip(a + 1) {
            let before = s.sources.iter().all(|&x| stage_of(x).is_none_or(|k| k < a));
            if group.len() < MAX_PARTS
                && candidate(s)
                && axes_of(s) == axes_of(head)
                && same_inputs(s, head)
                && before
            {
                group.push(b);
            }
        }
        if group.len() > 1 {
            return Some(group);
        }
    }
    None
}

/// The merged stage of `group`: the members' inputs once each (in the head's order), their bodies
/// in one arena (a node they share is one node), each member kept as its component.
fn merged(p: &Pipeline, group: &[usize]) -> Stage {
    let head = &p.stages[group[0]];
    let mut arena = ExprArena::new();
    let mut roots = Vec::with_capacity(group.len());
    let mut parts = Vec::with_capacity(group.len());
    for &k in group {
        let st = &p.stages[k];
        let inputs: Vec<usize> = st
            .sources
            .iter()
            .map(|s| head.sources.iter().position(|h| h == s).expect("the same inputs"))
            .collect();
        roots.push(intern(&mut arena, &st.program, &inputs));
        parts.push(Sibling {
            program: st.program.clone(),
            inputs,
        });
    }
    Stage {
        program: Program {
            names: head.program.names.clone(),
            arena,
            body: roots[0],
            extra: roots[1..].to_vec(),
            work: Work::Siblings(parts),
            strong_f64: false,
        },
        sources: head.sources.clone(),
    }
}

/// `program`'s body interned into `arena`, its input `n` renumbered `inputs[n]`.
fn intern(arena: &mut ExprArena, program: &Program, inputs: &[usize]) -> NodeId {
    let mut map: Vec<Option<NodeId>> = vec![None; program.body.index() + 1];
    for id in program.arena.reachable(program.body) {
        let node = match *program.arena.node(id) {
            Node::Input(n) => Node::Input(inputs[n as usize] as u32),
            node => node.map_operands(|o| map[o.index()].expect("operands come first")),
        };
        map[id.index()] = Some(arena.intern(node));
    }
    map[program.body.index()].expect("the body is reachable")
}

/// Merges `group` into its head (now the sibling stage) and points every reader of a member at
/// its component.
fn merge(p: &mut Pipeline, group: &[usize]) {
    let a = group[0];
    let keep: Vec<bool> = group
        .iter()
        .map(|&k| {
            p.stages[k]
                .program
                .reduction()
                .expect("a candidate reduces")
                .keepdims
        })
        .collect();
    p.stages[a] = merged(p, group);
    for &k in group[1..].iter().rev() {
        p.stages.remove(k);
    }
    let removed_below = |k: usize| group[1..].iter().filter(|&&g| g < k).count();
    let remap = |s: Source| -> Source {
        let part = |c: usize, keepdims: bool| Source::Part {
            stage: a,
            part: c as u8,
            keepdims,
        };
        let member = stage_of(s).and_then(|k| group.iter().position(|&g| g == k));
        match (s, member) {
            (Source::Stage(_), Some(c)) => part(c, keep[c]),
            (Source::Dropped(_), Some(c)) => part(c, false),
            (Source::Kept(_), Some(c)) => part(c, true),
            (Source::Input(_), _) => s,
            (Source::Stage(k), None) => Source::Stage(k - removed_below(k)),
            (Source::Dropped(k), None) => Source::Dropped(k - removed_below(k)),
            (Source::Kept(k), None) => Source::Kept(k - removed_below(k)),
            (
                Source::Part {
                    stage,
                    part,
                    keepdims,
                },
                _,
            ) => Source::Part {
                stage: stage - removed_below(stage),
                part,
                keepdims,
            },
        }
    };
    rewire(p, a + 1, remap);
}
