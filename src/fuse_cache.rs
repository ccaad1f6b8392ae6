//! The call-site cache behind the ndarray front end's `fuse` methods.
//!
//! `x.fuse(|x| ...)` in a loop builds the same expression at every call. Lowering it and looking its
//! kernel up in the JIT's cache cost 4-10 us a call; this cache keeps, per thread and per call site
//! (`#[track_caller]`'s [`Location`]), the last few expressions built there with their runners, so a
//! repeated call costs the closure (its nodes pushed as small records on the thread's tape, see
//! [`Expr`]: no allocation), one comparison of the tape with the one kept (a slice comparison) and
//! the run: the runner keeps its specialisations per input signature (dtypes, shapes, layouts), so a
//! call on inputs of a form seen before neither plans nor compiles.
//!
//! The expression is always rebuilt and compared, never trusted from the call site alone: a closure
//! that captures a value (`|x| x * dt`) builds a different expression when the value changes, and the
//! comparison (literals by bit pattern, so `0.0` and `-0.0` differ) sends it to a runner of its own.
//! An expression the tape does not hold (a node built outside the closure, a scan) is kept and
//! compared as a tree. Each call site keeps at most [`PER_SITE`] expressions, the most recently used
//! first.

use crate::error::Result;
use crate::expr::{Expr, ExprNode, Rec, Tape};
use crate::runner::FusedRunner;
use rustc_hash::FxHashMap;
use smallvec::SmallVec;
use std::cell::{Cell, RefCell};
use std::panic::Location;
use std::rc::Rc;

/// How many expressions one call site keeps (a generic helper called with several closures).
pub const PER_SITE: usize = 4;

type Site = &'static Location<'static>;

/// A call site and kind as the cache's key: the address of the site's [`Location`], with the low
/// bit set for several results (a `Location` is aligned to more than 1). Hashing it is one
/// multiplication; a site whose `Location` the compiler duplicated gets one entry per copy (each
/// still compared, so never a wrong runner).
fn key(site: Site, many: bool) -> usize {
    std::ptr::from_ref(site).addr() | usize::from(many)
}

/// What a call site's expressions are kept as: the records of their tape and their indices there
/// (every expression recorded on one tape), else the trees.
enum Key {
    Tape(Vec<Rec>, SmallVec<[u32; 4]>),
    Tree(Vec<Expr>),
}

/// The expressions built at one call site (one for `fuse`, several for `fuse_many`), and their runner
/// (shared: a hit hands out the runner for one count, not a clone of its parts).
type Entry = (Key, Rc<FusedRunner>);

/// A thread's cache: per call site and kind (`true`: several results), the entries most recently
/// used first; and its counts (one thread-local, one access a call).
struct Cache {
    sites: RefCell<FxHashMap<usize, Vec<Entry>>>,
    stats: Cell<Stats>,
}

thread_local! {
    static CACHE: Cache = const {
        Cache {
            sites: RefCell::new(FxHashMap::with_hasher(rustc_hash::FxBuildHasher)),
            stats: Cell::new(Stats { hits: 0, misses: 0 }),
        }
    };
}

/// How often this thread's `fuse` calls found their runner cached, and how often they compiled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    /// Calls that found their runner cached.
    pub hits: u64,
    /// Calls that compiled one.
    pub misses: u64,
}

/// This thread's counts since it started.
pub fn stats() -> Stats {
    CACHE.with(|c| c.stats.get())
}

fn count(stats: &Cell<Stats>, hit: bool) {
    let mut v = stats.get();
    if hit {
        v.hits += 1;
    } else {
        v.misses += 1;
    }
    stats.set(v);
}

/// The runner of `expr` built at `site`: the cached one if `expr` equals one built there before,
/// else a new one (remembered).
pub(crate) fn runner(site: Site, expr: Expr) -> Result<Rc<FusedRunner>> {
    cached(key(site, false), std::slice::from_ref(&expr), |e| {
        FusedRunner::compile(&e[0])
    })
}

/// The runner of several results `exprs` built at `site` (`fuse_many`), cached as [`runner`] is.
pub(crate) fn runner_many(site: Site, exprs: Vec<Expr>) -> Result<Rc<FusedRunner>> {
    cached(key(site, true), &exprs, FusedRunner::compile_many)
}

/// The tape every one of `exprs` is recorded on, and their indices there.
fn recorded(exprs: &[Expr]) -> Option<(&Rc<Tape>, SmallVec<[u32; 4]>)> {
    let (tape, _) = exprs.first()?.recorded()?;
    let mut roots = SmallVec::new();
    for e in exprs {
        match e.recorded() {
            Some((t, i)) if Rc::ptr_eq(t, tape) => roots.push(i),
            _ => return None,
        }
    }
    Some((tape, roots))
}

/// The runner of `exprs` at `key`: a cached one whose expressions equal these (moved to the front),
/// else `build`'s, remembered in front of at most [`PER_SITE`] - 1 others.
fn cached(
    key: usize,
    exprs: &[Expr],
    build: impl FnOnce(&[Expr]) -> Result<FusedRunner>,
) -> Result<Rc<FusedRunner>> {
    let tape = recorded(exprs);
    let hit = CACHE.with(|c| {
        let recs = tape.as_ref().map(|(t, roots)| (t.recs(), roots));
        let hit = c.sites.borrow_mut().get_mut(&key).and_then(|entries| {
            let i = entries.iter().position(|(k, _)| match (k, &recs) {
                (Key::Tape(kept, kept_roots), Some((recs, roots))) => {
                    kept_roots.len() == roots.len()
                        && kept_roots.iter().zip(roots.iter()).all(|(a, b)| a == b)
                        && kept[..] == recs[..]
                }
                (Key::Tree(es), None) => {
                    es.len() == exprs.len() && es.iter().zip(exprs).all(|(a, b)| same(a, b))
                }
                _ => false,
            })?;
            if i > 0 {
                let e = entries.remove(i);
                entries.insert(0, e);
            }
            Some(entries[0].1.clone())
        });
        count(&c.stats, hit.is_some());
        hit
    });
    if let Some(r) = hit {
        return Ok(r);
    }
    let runner = Rc::new(build(exprs)?);
    let kept = match tape {
        Some((t, roots)) => Key::Tape(t.recs().to_vec(), roots),
        None => Key::Tree(exprs.to_vec()),
    };
    CACHE.with(|c| {
        let mut sites = c.sites.borrow_mut();
        let entries = sites.entry(key).or_default();
        entries.insert(0, (kept, runner.clone()));
        entries.truncate(PER_SITE);
    });
    Ok(runner)
}

/// Structural equality of two trees, literals (and `initial`s) by bit pattern. Iterative (a deep
/// chain does not overflow the stack); a pair of shared subtrees is compared once, so a DAG that
/// doubles at every level costs its size, not its unfolded size.
fn same(a: &Expr, b: &Expr) -> bool {
    // on the stack for small trees, on the heap beyond
    let mut stack: SmallVec<[(&Expr, &Expr); 16]> = smallvec::smallvec![(a, b)];
    let mut seen: SmallVec<[(*const ExprNode, *const ExprNode); 8]> = SmallVec::new();
    while let Some((a, b)) = stack.pop() {
        if a.ptr() == b.ptr() {
            continue;
        }
        if a.shared() || b.shared() {
            let key = (a.ptr(), b.ptr());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
        }
        let Some(children) = shallow(a, b) else {
            return false;
        };
        stack.extend_from_slice(&children.pairs[..children.n]);
    }
    true
}

/// The operand pairs of one node pair (at most three: `where`), in place.
struct Kids<'e> {
    n: usize,
    pairs: [(&'e Expr, &'e Expr); 3],
}

impl<'e> Kids<'e> {
    fn push1(&mut self, x: &'e Expr, y: &'e Expr) {
        self.pairs[0] = (x, y);
        self.n = 1;
    }
    fn push2(&mut self, p: (&'e Expr, &'e Expr), q: (&'e Expr, &'e Expr)) {
        self.pairs[0] = p;
        self.pairs[1] = q;
        self.n = 2;
    }
    fn push3(&mut self, p: (&'e Expr, &'e Expr), q: (&'e Expr, &'e Expr), r: (&'e Expr, &'e Expr)) {
        self.pairs = [p, q, r];
        self.n = 3;
    }
}

/// Whether the roots of `a` and `b` are the same operation with the same parameters (literals by
/// bit pattern); their pairs of operands are added to `children`.
#[inline]
fn shallow<'e>(a: &'e Expr, b: &'e Expr) -> Option<Kids<'e>> {
    let mut children = Kids {
        n: 0,
        pairs: [(a, b); 3],
    };
    let bits = |v: &Option<f64>| v.map(f64::to_bits);
    match (a.node(), b.node()) {
        (ExprNode::Input(x), ExprNode::Input(y)) if x == y => {}
        (ExprNode::Literal(x), ExprNode::Literal(y)) if x.to_bits() == y.to_bits() => {}
        (ExprNode::Int(x), ExprNode::Int(y)) if x == y => {}
        (ExprNode::Bytes(x), ExprNode::Bytes(y)) if x == y => {}
        (ExprNode::Cast(p, x), ExprNode::Cast(q, y)) if p == q => children.push1(x, y),
        (ExprNode::Index(x), ExprNode::Index(y)) if x == y => {}
        (ExprNode::IndexVar(x), ExprNode::IndexVar(y)) if x == y => {}
        (ExprNode::Subscript(x, i), ExprNode::Subscript(y, j)) if x == y && i == j => {}
        (ExprNode::Unary(p, x), ExprNode::Unary(q, y)) if p == q => children.push1(x, y),
        (ExprNode::Binary(p, x0, x1), ExprNode::Binary(q, y0, y1)) if p == q => {
            children.push2((x0, y0), (x1, y1))
        }
        (ExprNode::Where(c, x0, x1), ExprNode::Where(d, y0, y1)) => {
            children.push3((c, d), (x0, y0), (x1, y1))
        }
        (
            ExprNode::Reduce {
                op: p,
                axes: ax,
                arg: x,
                keepdims: kx,
                initial: ix,
            },
            ExprNode::Reduce {
                op: q,
                axes: ay,
                arg: y,
                keepdims: ky,
                initial: iy,
            },
        ) if p == q && ax == ay && kx == ky && bits(ix) == bits(iy) => children.push1(x, y),
        (
            ExprNode::Mean {
                axes: ax,
                arg: x,
                keepdims: kx,
            },
            ExprNode::Mean {
                axes: ay,
                arg: y,
                keepdims: ky,
            },
        ) if ax == ay && kx == ky => children.push1(x, y),
        (
            ExprNode::Scan {
                op: p,
                options: ox,
                arg: x,
            },
            ExprNode::Scan {
                op: q,
                options: oy,
                arg: y,
            },
        ) if p == q && ox == oy => children.push1(x, y),
        (
            ExprNode::Contract {
                op: p,
                index: ix,
                reduced: rx,
                arg: x,
                initial: nx,
            },
            ExprNode::Contract {
                op: q,
                index: iy,
                reduced: ry,
                arg: y,
                initial: ny,
            },
        ) if p == q && ix == iy && rx == ry && bits(nx) == bits(ny) => children.push1(x, y),
        _ => return None,
    }
    Some(children)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_compare_by_bits() {
        let x = Expr::input("x");
        assert!(same(&(&x * 0.0), &(&x * 0.0)));
        assert!(!same(&(&x * 0.0), &(&x * -0.0)));
        assert!(same(&(&x * f64::NAN), &(&x * f64::NAN)));
        assert!(!same(&x.sum_axis(0), &x.sum_axis(1)));
        assert!(!same(&x.sum_axis(0), &x.sum_axis_keepdims(0)));
        assert!(!same(&x.sin(), &x.cos()));
        assert!(!same(&Expr::input("x"), &Expr::input("y")));
        assert!(!same(&(&x + 1.0), &(&x - 1.0)));
        assert!(!same(&(&x * 2.0), &(2.0 * &x)));
        assert!(!same(&(-&x), &x.abs()));
        assert!(same(&(-(&x * 2.0)), &(-(&x * 2.0))));
    }

    #[test]
    fn a_tape_holds_what_is_built_on_it() {
        // each call clears the tape; what is built on it is recorded, and its tree made on demand
        for k in 0..100 {
            crate::expr::begin_fuse();
            let x = Expr::fuse_input(0);
            let dt = f64::from(k) * 0.5;
            let e = &x + &x * dt - 1.0;
            let (tape, root) = e.recorded().expect("recorded");
            assert_eq!(tape.recs().len(), 4, "step {k}");
            assert_eq!(root, 3);
            let want = Expr::input("x0") + Expr::input("x0") * Expr::lit(dt) - Expr::lit(1.0);
            assert!(same(&e, &want), "step {k}");
            assert!(!same(
                &e,
                &(Expr::input("x0") + Expr::input("x0") * Expr::lit(dt + 1.0) - 1.0)
            ));
            let ExprNode::Binary(kiln_ir::BinaryOp::Sub, l, r) = e.node() else {
                panic!("a subtraction at the root")
            };
            assert!(matches!(r.node(), ExprNode::Literal(v) if *v == 1.0));
            assert!(matches!(l.node(), ExprNode::Binary(kiln_ir::BinaryOp::Add, ..)));
        }
    }

    #[test]
    fn a_handle_kept_past_its_call_keeps_its_expression() {
        crate::expr::begin_fuse();
        let kept = Expr::fuse_input(0) * 2.0;
        // the next call cannot clear the tape `kept` holds: it records on another
        crate::expr::begin_fuse();
        let other = Expr::fuse_input(1) + 5.0;
        assert!(!Rc::ptr_eq(
            kept.recorded().unwrap().0,
            other.recorded().unwrap().0
        ));
        assert!(same(&kept, &(Expr::input("x0") * 2.0)));
        assert!(same(&other, &(Expr::input("x1") + 5.0)));
        // operands of two tapes, or a tree and a record, make a tree
        let both = &kept + &other;
        assert!(both.recorded().is_none());
        assert!(same(
            &both,
            &(Expr::input("x0") * 2.0 + (Expr::input("x1") + 5.0))
        ));
        let mixed = &other * Expr::input("y");
        assert!(mixed.recorded().is_none());
        assert!(same(&mixed, &((Expr::input("x1") + 5.0) * Expr::input("y"))));
    }

    #[test]
    fn a_site_keeps_a_runner_per_tape() {
        let site = Location::caller();
        let build = |dt: f64| {
            crate::expr::begin_fuse();
            let x = Expr::fuse_input(0);
            (&x * dt).sum()
        };
        let a = runner(site, build(2.0)).unwrap();
        let b = runner(site, build(2.0)).unwrap();
        assert!(std::ptr::eq(a.pipeline(), b.pipeline()));
        let c = runner(site, build(-0.0)).unwrap();
        let d = runner(site, build(0.0)).unwrap();
        assert!(!std::ptr::eq(c.pipeline(), d.pipeline()));
        assert!(!std::ptr::eq(a.pipeline(), d.pipeline()));
        let e = runner(site, build(2.0)).unwrap();
        assert!(std::ptr::eq(a.pipeline(), e.pipeline()));
    }

    #[test]
    fn a_doubling_dag_compares_in_linear_time() {
        let build = || {
            let mut e = Expr::input("x");
            for _ in 0..200 {
                e = &e + &e;
            }
            e
        };
        assert!(same(&build(), &build()));
        let mut other = Expr::input("x");
        for _ in 0..199 {
            other = &other + &other;
        }
        other = &other * &other;
        assert!(!same(&build(), &other));
    }

    #[test]
    fn a_site_keeps_its_runners() {
        let site = Location::caller();
        let a = runner(site, Expr::input("x") * 2.0).unwrap();
        let b = runner(site, Expr::input("x") * 2.0).unwrap();
        assert!(std::ptr::eq(a.pipeline(), b.pipeline()));
        let c = runner(site, Expr::input("x") * 3.0).unwrap();
        assert!(!std::ptr::eq(a.pipeline(), c.pipeline()));
    }
}
