//! The prefix-scan rewrite, after OCANNL's `Prefix_scan`: a reduction over a triangular mask, O(n²),
//! becomes a scan, O(n).
//!
//! It recognises one reduction nest `y[.., o] ⊕= rhs` with exactly one reduced axis `i` and an output
//! axis `o` of the same range next to it, `⊕` one of add, max, min, `y` a float; `rhs` must split
//! into a payload `v` that does not depend on `o` (no `index o`, no input that varies along `o`) and
//! a mask `M(i, o)` built from index expressions alone: for add a product `v * M` with a 0/1 (logical)
//! mask, or `where(M, v, 0)` / `where(M, 0, v)`; for max and min `where(M, v, -inf)` /
//! `where(M, v, +inf)` (or the complement). What the mask rejects must be exactly the neutral element
//! of `⊕`, so a max over a 0/1 product mask is declined. The mask is proved a triangle by evaluating
//! it symbolically: every node is an integer affine form `a·i + b·o + c` or a set of values of
//! `d = i - o`; a comparison must reduce to one of `d`; the final set, over the whole range
//! `-(n-1) ..= n-1` of `d`, must be one of the four triangles `i <= o`, `i < o`, `i >= o`, `i > o`.
//! Every intermediate index value must be an integer exactly representable in the kernel's dtype
//! (at most 2^24 in magnitude for f32, 2^53 for f64), so the float comparisons the composed form makes
//! are the integer ones proved here. The nest is replaced by a scan of `v` along `i` (the axis `o`
//! removed): inclusive or exclusive, forward for a prefix (`i <= o`, `i < o`), backward for a suffix
//! (`i >= o`, `i > o`); a sum starts from `initial` or +0.0, as the composed sum does.
//!
//! It declines, with the reason, everything else: a band, a shifted or anti-diagonal triangle, a mask
//! that varies with a row (reads a third axis), two reduced axes, ranges that differ, axes that are
//! not adjacent (the scan would transpose the result), a mask read from an input array, a payload
//! that varies with `o`, an inexact index range.
//!
//! The rewrite is approximate (the `approximate` profile turns it on): on finite inputs a prefix scan
//! adds in order where the interpreter sums the composed form pairwise (max and min agree bit for
//! bit, sums within the bound of a reassociated sum), a suffix scan regroups the sum, and
//! an infinite or NaN payload outside the triangle makes a product-mask form NaN (`inf * 0`) while the
//! scan never reads it.

use crate::Real;
use crate::expr::{ExprArena, Node, NodeId};
use crate::kernel::{InputDecl, KernelIR, KernelKind, ReduceOp};
use crate::op::{BinaryOp, UnaryOp};
use crate::promote::ElemType;
use crate::scan::{Scan, ScanOp};
use std::collections::HashMap;
use std::fmt;

/// Why the rewrite left a kernel alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decline(pub String);

impl fmt::Display for Decline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn decline<T>(why: impl Into<String>) -> Result<T, Decline> {
    Err(Decline(why.into()))
}

/// The four triangles, as sets of `d = i - o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Triangle {
    Le,
    Lt,
    Ge,
    Gt,
}

/// The scan that replaces `kernel`'s triangular-mask reduction (`initial`: the reduction's start).
pub fn rewrite(kernel: &KernelIR, initial: Option<f64>) -> Result<KernelIR, Decline> {
    if !kernel.dtype.is_float() {
        return decline(format!("the kernel's dtype {} is not a float type", kernel.dtype));
    }
    let KernelKind::Reduce { op, axes } = &kernel.kind else {
        return decline("not a reduction");
    };
    if axes.len() != 1 {
        return decline(format!(
            "{} reduced axes {axes:?} (the rewrite takes exactly one)",
            axes.len()
        ));
    }
    let i = axes[0];
    let scan_op = match op {
        ReduceOp::Sum => ScanOp::Sum,
        ReduceOp::Max => ScanOp::Max,
        ReduceOp::Min => ScanOp::Min,
        other => {
            return decline(format!(
                "{} has no prefix scan here (add, max, min)",
                other.name()
            ));
        }
    };
    if kernel.output_type() != kernel.dtype {
        return decline("the result is not a float array");
    }
    let arena = &kernel.arena;
    let (mask, payload, complement) = split(arena, kernel.body, *op)?;
    if reads_input(arena, mask) {
        return decline("the mask reads an input array (only index expressions are proved)");
    }
    let mask_axes = arena.index_axes(mask);
    if !mask_axes.contains(&i) {
        return decline(format!("the mask does not read the reduced index (axis {i})"));
    }
    let others: Vec<usize> = mask_axes.iter().copied().filter(|&a| a != i).collect();
    let o = match others.as_slice() {
        [o] => *o,
        [] => return decline("the mask reads no output index"),
        more => {
            return decline(format!(
                "the mask reads axes {more:?} besides the reduced axis {i}: it varies with a row"
            ));
        }
    };
    let (ni, no) = (kernel.shape[i], kernel.shape[o]);
    if ni != no {
        return decline(format!(
            "ranges differ: the reduced axis {i} has {ni} points, the output axis {o} has {no}"
        ));
    }
    if i.abs_diff(o) != 1 {
        return decline(format!(
            "the reduced axis {i} and the output axis {o} are not adjacent (the scan would transpose the result)"
        ));
    }
    if arena.index_axes(payload).contains(&o) {
        return decline(format!("the payload reads the output index (axis {o})"));
    }
    let rank = kernel.shape.len();
    for input in &kernel.inputs {
        if along(input, rank, o) != 1 {
            return decline(format!(
                "input '{}' varies along the output axis {o}: the payload depends on o",
                input.name
            ));
        }
    }
    let limit = match kernel.dtype {
        ElemType::F32 => 1i64 << 24,
        ElemType::F64 => 1i64 << 53,
        _ => unreachable!("only float types (f32, f64) reach here"),
    };
    let n = ni as i64;
    let mut sym = Symbolic {
        arena,
        i: i as u32,
        o: o as u32,
        n,
        limit,
        dtype: kernel.dtype,
        memo: HashMap::new(),
    };
    let range = vec![(-(n - 1), n - 1)];
    let mut set = match sym.eval(mask)? {
        Sym::Set(s) => s,
        Sym::Affine(a) => sym.truth(a)?,
    };
    if complement {
        set = difference(&range, &set);
    }
    let set = intersect(&set, &range);
    let triangle = [Triangle::Le, Triangle::Lt, Triangle::Ge, Triangle::Gt]
        .into_iter()
        .find(|t| normal(&triangle_set(*t, n)) == normal(&set));
    let Some(triangle) = triangle else {
        return decline(format!(
            "the mask holds for i - o in {} of -{}..={}: {}",
            show(&set),
            n - 1,
            n - 1,
            what_shape(&set, n)
        ));
    };
    Ok(build(kernel, scan_op, payload, i, o, triangle, initial))
}

/// A one-line account of the scan kernel a rewrite produced (for `kiln explain`).
pub fn describe(kernel: &KernelIR) -> String {
    match kernel.kind {
        KernelKind::Scan(s) => format!(
            "{} axis={} {} {}, O(n) instead of O(n²)",
            s.op.name(),
            s.axis.map_or("None".into(), |a| a.to_string()),
            if s.exclusive { "exclusive" } else { "inclusive" },
            if s.reverse {
                "backward (suffix)"
            } else {
                "forward (prefix)"
            },
        ),
        _ => "not a scan".into(),
    }
}

/// `(mask, payload, complement)`: the body as a masked payload, or why not.
fn split(arena: &ExprArena, body: NodeId, op: ReduceOp) -> Result<(NodeId, NodeId, bool), Decline> {
    let neutral = match op {
        ReduceOp::Sum => 0.0,
        ReduceOp::Max => f64::NEG_INFINITY,
        _ => f64::INFINITY,
    };
    let is_neutral = |id: NodeId| matches!(*arena.node(id), Node::Literal(b) if f64::from_bits(b) == neutral);
    let index_mask = |id: NodeId| arena.node(id).is_logical(arena) && !reads_input(arena, id);
    match *arena.node(body) {
        Node::Binary(BinaryOp::Mul, a, b) => {
            if op != ReduceOp::Sum {
                return decline(format!(
                    "a 0/1 product mask rejects with 0, not {}'s neutral element {neutral}",
                    op.name()
                ));
            }
            if index_mask(b) && arena.index_axes(b).len() >= arena.index_axes(a).len() {
                Ok((b, a, false))
            } else if index_mask(a) {
                Ok((a, b, false))
            } else if index_mask(b) {
                Ok((b, a, false))
            } else {
                decline(
                    "neither factor is a 0/1 mask of index expressions (a mask read from an input array is not proved)",
                )
            }
        }
        Node::Where(c, a, b) => {
            if is_neutral(b) {
                Ok((c, a, false))
            } else if is_neutral(a) {
                Ok((c, b, true))
            } else {
                decline(format!(
                    "where's rejected branch is not {neutral}, the neutral element of {}",
                    op.name()
                ))
            }
        }
        _ => decline("the body is not a masked payload (v * mask, or where(mask, v, neutral))"),
    }
}

fn reads_input(arena: &ExprArena, root: NodeId) -> bool {
    arena
        .reachable(root)
        .into_iter()
        .any(|id| matches!(arena.node(id), Node::Input(_)))
}

/// The extent of `input` along iteration axis `axis` (shapes are right-aligned).
fn along(input: &InputDecl, rank: usize, axis: usize) -> usize {
    let lead = rank - input.shape.len();
    if axis < lead { 1 } else { input.shape[axis - lead] }
}

/// Sorted disjoint closed intervals of `d = i - o`.
type Set = Vec<(i64, i64)>;

/// A symbolic value: an integer affine form `ci·i + co·o + c`, or a truth value as a set of `d`.
#[derive(Debug, Clone)]
enum Sym {
    Affine((i64, i64, i64)),
    Set(Set),
}

struct Symbolic<'a> {
    arena: &'a ExprArena,
    i: u32,
    o: u32,
    n: i64,
    limit: i64,
    dtype: ElemType,
    memo: HashMap<NodeId, Sym>,
}

impl Symbolic<'_> {
    fn eval(&mut self, id: NodeId) -> Result<Sym, Decline> {
        if let Some(s) = self.memo.get(&id) {
            return Ok(s.clone());
        }
        let s = self.node(id)?;
        if let Sym::Affine(a) = s {
            self.exact(a)?;
        }
        self.memo.insert(id, s.clone());
        Ok(s)
    }

    /// Checks that the affine form takes only exactly representable integer values.
    fn exact(&self, (ci, co, c): (i64, i64, i64)) -> Result<(), Decline> {
        let m = self.n - 1;
        let big =
            (ci.unsigned_abs() as u128 + co.unsigned_abs() as u128) * m as u128 + c.unsigned_abs() as u128;
        if big > self.limit as u128 {
            return decline(format!(
                "an index value reaches {big}, beyond the exact integers of {} (2^{})",
                self.dtype.short(),
                self.limit.trailing_zeros()
            ));
        }
        Ok(())
    }

    fn affine(&mut self, id: NodeId) -> Result<(i64, i64, i64), Decline> {
        match self.eval(id)? {
            Sym::Affine(a) => Ok(a),
            Sym::Set(_) => decline("a truth value used as a number in the mask"),
        }
    }

    fn set(&mut self, id: NodeId) -> Result<Set, Decline> {
        match self.eval(id)? {
            Sym::Set(s) => Ok(s),
            Sym::Affine(a) => self.truth(a),
        }
    }

    /// The `d` where an affine form is nonzero (true), if it is a function of `d`.
    fn truth(&self, a: (i64, i64, i64)) -> Result<Set, Decline> {
        let eq = self.compare(BinaryOp::Eq, a)?;
        Ok(difference(&self.all(), &eq))
    }

    fn all(&self) -> Set {
        vec![(i64::MIN / 4, i64::MAX / 4)]
    }

    /// The `d` where `a cmp 0` holds, `a` an affine form of `d` alone.
    fn compare(&self, cmp: BinaryOp, (ci, co, c): (i64, i64, i64)) -> Result<Set, Decline> {
        if ci == 0 && co == 0 {
            let holds = BinaryOp::eval::<f64>(cmp, c as f64, 0.0) != 0.0;
            return Ok(if holds { self.all() } else { Vec::new() });
        }
        if ci != -co {
            let why = if ci == co {
                "depends on i + o (an anti-diagonal)"
            } else {
                "depends on i and o otherwise than through i - o"
            };
            return decline(format!("a comparison in the mask {why}"));
        }
        let k = ci;
        // k·d + c <= 0, as an interval of d
        let le = |k: i64, c: i64| -> Set {
            let (lo, hi) = self.all()[0];
            if k > 0 {
                vec![(lo, (-c).div_euclid(k))]
            } else {
                let kk = -k;
                // d >= ceil(c / kk)
                vec![(-((-c).div_euclid(kk)), hi)]
            }
        };
        Ok(match cmp {
            BinaryOp::Le => le(k, c),
            BinaryOp::Lt => le(k, c + 1),
            BinaryOp::Ge => le(-k, -c),
            BinaryOp::Gt => le(-k, -c + 1),
            BinaryOp::Eq => intersect(&le(k, c), &le(-k, -c)),
            BinaryOp::Ne => difference(&self.all(), &intersect(&le(k, c), &le(-k, -c))),
            _ => unreachable!("comparisons only"),
        })
    }

    fn node(&mut self, id: NodeId) -> Result<Sym, Decline> {
        let node = *self.arena.node(id);
        Ok(match node {
            Node::Index(a) if a == self.i => Sym::Affine((1, 0, 0)),
            Node::Index(a) if a == self.o => Sym::Affine((0, 1, 0)),
            Node::Index(a) => return decline(format!("the mask reads axis {a}: it varies with a row")),
            Node::Input(_) => return decline("the mask reads an input array"),
            Node::Literal(bits) => {
                let v = f64::from_bits(bits);
                let rounded = match self.dtype {
                    ElemType::F32 => <f32 as Real>::from_f64(v) as f64,
                    ElemType::F64 => v,
                    _ => unreachable!("only float types (f32, f64) reach here"),
                };
                if v.fract() != 0.0 || !v.is_finite() || rounded != v || v.abs() > self.limit as f64 {
                    return decline(format!("the literal {v:?} in the mask is not an exact integer"));
                }
                Sym::Affine((0, 0, v as i64))
            }
            Node::Unary(UnaryOp::Neg, a) => {
                let (x, y, z) = self.affine(a)?;
                Sym::Affine((-x, -y, -z))
            }
            Node::Unary(UnaryOp::Not, a) => Sym::Set(difference(&self.all(), &self.set(a)?)),
            Node::Binary(op @ (BinaryOp::Add | BinaryOp::Sub), a, b) => {
                let (a, b) = (self.affine(a)?, self.affine(b)?);
                let s = if op == BinaryOp::Add { 1 } else { -1 };
                Sym::Affine((a.0 + s * b.0, a.1 + s * b.1, a.2 + s * b.2))
            }
            Node::Binary(BinaryOp::Mul, a, b) => match (self.eval(a)?, self.eval(b)?) {
                (Sym::Set(x), Sym::Set(y)) => Sym::Set(intersect(&x, &y)),
                (Sym::Affine((0, 0, k)), Sym::Affine((x, y, z)))
                | (Sym::Affine((x, y, z)), Sym::Affine((0, 0, k))) => Sym::Affine((k * x, k * y, k * z)),
                _ => return decline("a product in the mask that is not a constant times an index form"),
            },
            Node::Binary(
                op
                @ (BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge | BinaryOp::Eq | BinaryOp::Ne),
                a,
                b,
            ) => {
                let (a, b) = (self.affine(a)?, self.affine(b)?);
                Sym::Set(self.compare(op, (a.0 - b.0, a.1 - b.1, a.2 - b.2))?)
            }
            Node::Binary(BinaryOp::And, a, b) => Sym::Set(intersect(&self.set(a)?, &self.set(b)?)),
            Node::Binary(BinaryOp::Or, a, b) => Sym::Set(union(&self.set(a)?, &self.set(b)?)),
            Node::Where(c, a, b) => {
                let c = self.set(c)?;
                let (a, b) = (self.set(a)?, self.set(b)?);
                Sym::Set(union(&intersect(&c, &a), &difference(&b, &c)))
            }
            other => {
                return decline(format!(
                    "the mask uses {other:?}, which the rewrite does not evaluate"
                ));
            }
        })
    }
}

fn normal(s: &Set) -> Set {
    let mut v: Set = s.iter().copied().filter(|(a, b)| a <= b).collect();
    v.sort_unstable();
    let mut out: Set = Vec::new();
    for (a, b) in v {
        match out.last_mut() {
            Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
            _ => out.push((a, b)),
        }
    }
    out
}

fn intersect(x: &Set, y: &Set) -> Set {
    let mut out = Vec::new();
    for &(a, b) in x {
        for &(c, d) in y {
            let (lo, hi) = (a.max(c), b.min(d));
            if lo <= hi {
                out.push((lo, hi));
            }
        }
    }
    normal(&out)
}

fn union(x: &Set, y: &Set) -> Set {
    normal(&x.iter().chain(y).copied().collect())
}

fn difference(x: &Set, y: &Set) -> Set {
    let mut cur = normal(x);
    for &(c, d) in &normal(y) {
        let mut next = Vec::new();
        for (a, b) in cur {
            if d < a || c > b {
                next.push((a, b));
                continue;
            }
            if a < c {
                next.push((a, c - 1));
            }
            if d < b {
                next.push((d + 1, b));
            }
        }
        cur = next;
    }
    normal(&cur)
}

fn triangle_set(t: Triangle, n: i64) -> Set {
    let m = n - 1;
    normal(&vec![match t {
        Triangle::Le => (-m, 0),
        Triangle::Lt => (-m, -1),
        Triangle::Ge => (0, m),
        Triangle::Gt => (1, m),
    }])
}

fn show(s: &Set) -> String {
    if s.is_empty() {
        return "{}".into();
    }
    let parts: Vec<String> = s.iter().map(|(a, b)| format!("{a}..={b}")).collect();
    format!("{{{}}}", parts.join(", "))
}

fn what_shape(s: &Set, n: i64) -> String {
    let m = n - 1;
    match s.as_slice() {
        [] => "the mask is empty".into(),
        [(a, b)] if *a == -m && *b == m => "the mask is full (no triangle)".into(),
        [(a, b)] if *a == -m => format!("a triangle shifted to i - o <= {b}, not i <= o or i < o"),
        [(a, b)] if *b == m => format!("a triangle shifted to i - o >= {a}, not i >= o or i > o"),
        [_] => "a band, not a triangle".into(),
        _ => "several bands, not a triangle".into(),
    }
}

/// The scan kernel: the payload along `i`, the axis `o` removed.
fn build(
    kernel: &KernelIR,
    op: ScanOp,
    payload: NodeId,
    i: usize,
    o: usize,
    triangle: Triangle,
    initial: Option<f64>,
) -> KernelIR {
    let mut arena = ExprArena::new();
    let mut map: HashMap<NodeId, NodeId> = HashMap::new();
    for id in kernel.arena.reachable(payload) {
        let m = |x: NodeId| map[&x];
        let node = match *kernel.arena.node(id) {
            Node::Index(a) if a as usize > o => Node::Index(a - 1),
            Node::Unary(u, a) => Node::Unary(u, m(a)),
            Node::Cast(t, a) => Node::Cast(t, m(a)),
            Node::Binary(b, x, y) => Node::Binary(b, m(x), m(y)),
            Node::Where(c, x, y) => Node::Where(m(c), m(x), m(y)),
            Node::Fma(x, y, z) => Node::Fma(m(x), m(y), m(z)),
            leaf => leaf,
        };
        map.insert(id, arena.intern(node));
    }
    let rank = kernel.shape.len();
    let inputs = kernel
        .inputs
        .iter()
        .map(|input| {
            let lead = rank - input.shape.len();
            let mut shape = input.shape.clone();
            if o >= lead {
                shape.remove(o - lead);
            }
            InputDecl {
                name: input.name.clone(),
                shape,
                stored: input.stored,
            }
        })
        .collect();
    let mut shape = kernel.shape.clone();
    shape.remove(o);
    let axis = if i < o { i } else { i - 1 };
    let initial = match op {
        // the composed sum starts from +0.0 (NumPy's): so does the scan
        ScanOp::Sum => Some(initial.unwrap_or(0.0)),
        _ => initial,
    };
    let mut scan = Scan::new(op, Some(axis)).with_initial(initial);
    scan.exclusive = matches!(triangle, Triangle::Lt | Triangle::Gt);
    scan.reverse = matches!(triangle, Triangle::Ge | Triangle::Gt);
    KernelIR {
        dtype: kernel.dtype,
        inputs,
        shape,
        body: map[&payload],
        arena,
        extra: Vec::new(),
        kind: KernelKind::Scan(scan),
    }
}
