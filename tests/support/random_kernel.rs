//! Random kernels for fuzzing: an expression tree, its inputs (shapes that broadcast, strided and
//! reversed views, floats built from raw bits), and the parity check of a compiled backend against the
//! interpreter. Shared by the bounded fuzzer in the test suite (fed by a seeded generator) and the
//! cargo-fuzz targets in `fuzz/` (fed by libFuzzer), which include this file by path.
//!
//! Parity rules: elementwise algebra, comparisons, `where`, min/max, argmin/argmax, any/all are
//! bit-exact (any NaN equals any NaN; the sign of zero counts). A transcendental appears only at the
//! root of a map, over an exact subtree, and is compared in ULP. Sums are compared against a bound
//! relative to the sum of the magnitudes (reassociation), products relatively where finite. A scan
//! (cumsum, cumprod, cummax, cummin; any axis, exclusive, reverse, initial) may stand at the root over
//! an exact subtree: exact where the code folds in order, else per output as `scan_rule` says.
//!
//! About half the cases have one or two more results (`siblings`: exact maps over the same inputs,
//! now and then a max of one), run with the first as one runner of several results
//! (`FusedRunner::compile_many`, the maps one kernel of several outputs where they share an iteration
//! shape) and compared, result by result, with the interpreter running each expression alone.

#![allow(dead_code)] // each includer uses a different part

// the workspace's test kit (this file is also compiled into the cargo-fuzz targets)
#[path = "kit.rs"]
mod kit;

use arbitrary::{Result, Unstructured};
use kiln::kiln_ir::{BinaryOp, ReduceOp, ScanOp, UnaryOp};
use kiln::{ArrayArg, Axes, Expr, FusedRunner, Output, ScanOptions};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};

/// One input array, in either dtype, possibly a non-contiguous view of a larger buffer.
#[derive(Debug, Clone)]
pub enum Data {
    F64(ArrayD<f64>),
    F32(ArrayD<f32>),
}

/// A random kernel and its inputs.
#[derive(Debug, Clone)]
pub struct Case {
    pub expr: Expr,
    pub inputs: Vec<(String, Data, View)>,
    /// The transcendental at the root, if any (compared in ULP).
    pub transcendental: bool,
    /// More results computed with `expr` by one runner of several results: exact maps, or a max.
    pub siblings: Vec<Expr>,
}

/// How an input is handed over: as it is, transposed (a Fortran-order view), every other element
/// along its last axis, reversed along its first axis, or every axis backwards with every other
/// element of the last (`a[::-1, ..., ::-2]`: a strided row of negative stride).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum View {
    Plain,
    Transposed,
    Stepped,
    Reversed,
    Backwards,
}

impl View {
    /// The view of input `i` drawn from `u`: plain twice as often as each other; a stepped view of
    /// an odd input is the backwards one (the same buffer, so the bytes of a committed input decode
    /// to the same values as before it was added).
    pub fn draw(u: &mut Unstructured<'_>, i: usize) -> Result<View> {
        let view = *u.choose(&[
            View::Plain,
            View::Plain,
            View::Transposed,
            View::Stepped,
            View::Reversed,
        ])?;
        Ok(if view == View::Stepped && i % 2 == 1 {
            View::Backwards
        } else {
            view
        })
    }

    /// How many buffer elements the view's last axis steps over per element.
    pub fn last_step(self) -> usize {
        match self {
            View::Stepped | View::Backwards => 2,
            _ => 1,
        }
    }

    /// The view this says of `v` (a buffer built with [`View::last_step`], or a view of one laid
    /// out as it: the guarded copies).
    pub fn of<T>(self, v: ndarray::ArrayViewD<'_, T>) -> ndarray::ArrayViewD<'_, T> {
        let mut v = v;
        let rank = v.ndim();
        if rank == 0 {
            return v;
        }
        match self {
            View::Stepped => v.slice_each_axis_inplace(|ax| step_last(ax, rank)),
            View::Reversed => v.invert_axis(ndarray::Axis(0)),
            View::Backwards => v.slice_each_axis_inplace(|ax| {
                let step = if ax.axis.index() == rank - 1 { -2 } else { -1 };
                ndarray::Slice::new(0, None, step)
            }),
            View::Plain | View::Transposed => {}
        }
        v
    }
}

/// Values the generator picks often (besides raw f64 and f32 bit patterns): the special bit patterns
/// every fuzz target's seeds reach (`fuzz/seeds/`): quiet and signalling NaNs of both signs, ±0, ±inf,
/// subnormals, the extremes of both dtypes.
const SPECIALS: [f64; 27] = [
    f64::from_bits(0x000f_ffff_ffff_ffff), // the largest subnormal
    f64::from_bits(0x7ff0_0000_0000_0001), // signalling NaN
    f64::from_bits(0xfff0_0000_0000_0001), // negative signalling NaN
    f64::from_bits(0xfff8_0000_0000_0000), // negative quiet NaN
    f64::MIN,
    f64::MAX,
    f64::MIN_POSITIVE,
    -5e-324,
    f32::MIN as f64,
    f32::MAX as f64,
    f32::MIN_POSITIVE as f64,
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    -3.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    5e-324,
    -2.2e-308,
    1e300,
    -1e-300,
    3.4e38,
    1.5e-45,
];

/// The unary ops the JIT computes as vector polynomials, within a ULP bound of libm (the rest are
/// exact algebra, direct instructions, or the interpreter's own libm called per lane).
const TRANSCENDENTAL: [UnaryOp; 11] = [
    UnaryOp::Sin,
    UnaryOp::Cos,
    UnaryOp::Tan,
    UnaryOp::Exp,
    UnaryOp::Exp2,
    UnaryOp::Expm1,
    UnaryOp::Log,
    UnaryOp::Log2,
    UnaryOp::Log10,
    UnaryOp::Log1p,
    UnaryOp::Tanh,
];

/// Unary ops compared bit for bit.
fn exact_unary() -> Vec<UnaryOp> {
    UnaryOp::ALL
        .into_iter()
        .filter(|op| !TRANSCENDENTAL.contains(op))
        .collect()
}

/// `op`, or for the functions the JIT now computes as vector polynomials (within a ULP bound, not
/// bit for bit: erf, erfc, sinh, cosh, cbrt, the inverse trigonometric and inverse hyperbolic functions), an exact op in
/// their place (sign, abs, neg, floor, ceil): the generator keeps drawing from the same list, so that the
/// committed seeds and regressions still decode to the kernels they were found as, while no exact
/// tree holds a function that is not exact.
pub(crate) fn exact_stand_in(op: UnaryOp) -> UnaryOp {
    match op {
        UnaryOp::Erf => UnaryOp::Sign,
        UnaryOp::Erfc => UnaryOp::Abs,
        UnaryOp::Sinh => UnaryOp::Neg,
        UnaryOp::Cosh => UnaryOp::Abs,
        UnaryOp::Cbrt => UnaryOp::Neg,
        UnaryOp::Arcsin | UnaryOp::Arccos | UnaryOp::Arctan => UnaryOp::Abs,
        UnaryOp::Arcsinh => UnaryOp::Neg,
        UnaryOp::Arccosh => UnaryOp::Floor,
        UnaryOp::Arctanh => UnaryOp::Ceil,
        op => op,
    }
}

/// The same for the binary ops vectorised since the seeds were committed (hypot, arctan2): an
/// exact op in their place.
pub(crate) fn exact_binary_stand_in(op: BinaryOp) -> BinaryOp {
    match op {
        BinaryOp::Hypot | BinaryOp::Arctan2 => BinaryOp::Fmax,
        op => op,
    }
}

/// Binary ops compared bit for bit: all but `pow` (a vector polynomial, compared in ULP at the root)
/// and `copysign`, whose result shows the sign of a NaN operand, which IEEE leaves unspecified and
/// libm and the vector math set differently (glibc's log10 of a negative is +NaN, the JIT's -NaN).
fn exact_binary() -> Vec<BinaryOp> {
    BinaryOp::ALL
        .into_iter()
        .filter(|op| !matches!(op, BinaryOp::Pow | BinaryOp::Copysign))
        .collect()
}

fn float(u: &mut Unstructured<'_>) -> Result<f64> {
    Ok(match u.int_in_range(0..=3u8)? {
        0 => f64::from_bits(u.arbitrary()?),
        1 => f32::from_bits(u.arbitrary()?) as f64,
        _ => *u.choose(&SPECIALS)?,
    })
}

/// A shape of rank 0 to 3, its axes mostly short, up to `longest` (typed_kernel.rs draws its
/// shapes here too).
pub(crate) fn shape(u: &mut Unstructured<'_>, longest: usize) -> Result<Vec<usize>> {
    let rank = u.int_in_range(0..=3usize)?;
    (0..rank)
        .map(|_| {
            Ok(match u.int_in_range(0..=9u8)? {
                0 => 0,
                1..=3 => 1,
                4..=7 => u.int_in_range(2..=9usize)?,
                _ => u.int_in_range(10..=longest)?,
            })
        })
        .collect()
}

/// A shape that broadcasts to `full`: some leading axes dropped, some axes set to 1.
pub(crate) fn sub_shape(u: &mut Unstructured<'_>, full: &[usize]) -> Result<Vec<usize>> {
    let drop = u.int_in_range(0..=full.len())?;
    full[drop..]
        .iter()
        .map(|&d| Ok(if u.ratio(1, 4)? { 1 } else { d }))
        .collect()
}

fn array<T: Copy + num_like::Zero>(
    u: &mut Unstructured<'_>,
    shape: &[usize],
    view: View,
    conv: fn(f64) -> T,
) -> Result<ArrayD<T>> {
    let n: usize = shape.iter().product();
    let (buf_shape, len) = match view.last_step() {
        step if step > 1 && !shape.is_empty() => {
            let mut s = shape.to_vec();
            let last = s.len() - 1;
            s[last] *= step;
            (s, n * step)
        }
        _ => (shape.to_vec(), n),
    };
    let mut data = Vec::with_capacity(len);
    for _ in 0..len {
        data.push(conv(float(u)?));
    }
    Ok(match view {
        View::Transposed => ArrayD::from_shape_vec(IxDyn(&buf_shape).f(), data).expect("sized"),
        _ => ArrayD::from_shape_vec(IxDyn(&buf_shape), data).expect("sized"),
    })
}

/// Tiny local trait so `array` can build both dtypes.
mod num_like {
    pub trait Zero {}
    impl Zero for f64 {}
    impl Zero for f32 {}
}

/// An exact expression tree (no transcendental) over `names`.
fn exact_tree(u: &mut Unstructured<'_>, names: &[String], rank: usize, depth: u32) -> Result<Expr> {
    let leaf = depth == 0 || u.ratio(1, 3)?;
    if leaf {
        return Ok(match u.int_in_range(0..=5u8)? {
            0 | 1 => Expr::lit(float(u)?),
            2 if rank > 0 => Expr::index(u.int_in_range(0..=rank - 1)?),
            _ => Expr::input(u.choose(names)?.clone()),
        });
    }
    Ok(match u.int_in_range(0..=5u8)? {
        0 => exact_tree(u, names, rank, depth - 1)?.unary(exact_stand_in(*u.choose(&exact_unary())?)),
        1 => Expr::select(
            exact_tree(u, names, rank, depth - 1)?,
            exact_tree(u, names, rank, depth - 1)?,
            exact_tree(u, names, rank, depth - 1)?,
        ),
        _ => {
            let op = exact_binary_stand_in(*u.choose(&exact_binary())?);
            let a = exact_tree(u, names, rank, depth - 1)?;
            let b = exact_tree(u, names, rank, depth - 1)?;
            a.binary(op, b)
        }
    })
}

impl Case {
    /// A random case drawn from `u`.
    pub fn arbitrary(u: &mut Unstructured<'_>) -> Result<Case> {
        let full = shape(u, 70)?;
        let n_inputs = u.int_in_range(1..=3usize)?;
        let all_f32 = u.ratio(1, 3)?;
        let mut inputs = Vec::new();
        for i in 0..n_inputs {
            let s = if i == 0 {
                full.clone()
            } else {
                sub_shape(u, &full)?
            };
            let view = View::draw(u, i)?;
            let f32_input = all_f32 || u.ratio(1, 6)?;
            let data = if f32_input {
                Data::F32(array(u, &s, view, |v| v as f32)?)
            } else {
                Data::F64(array(u, &s, view, |v| v)?)
            };
            inputs.push((format!("x{i}"), data, view));
        }
        let names: Vec<String> = inputs.iter().map(|(n, _, _)| n.clone()).collect();
        let depth = u.int_in_range(0..=4u32)?;
        let body = exact_tree(u, &names, full.len(), depth)?;
        let (expr, transcendental) = match u.int_in_range(0..=7u8)? {
            0 | 1 => {
                let op = *u.choose(&ReduceOp::ALL)?;
                let axes = if full.is_empty() || u.ratio(1, 2)? {
                    Axes::All
                } else {
                    let rank = full.len() as isize;
                    Axes::Some(vec![u.int_in_range(-rank..=rank - 1)?])
                };
                (body.reduce(op, axes), false)
            }
            2 if u.ratio(1, 4)? => (body.pow(exact_tree(u, &names, full.len(), 2)?), true),
            2 => (body.unary(*u.choose(&TRANSCENDENTAL)?), true),
            3 | 4 => {
                let op = *u.choose(&ScanOp::ALL)?;
                let rank = full.len() as isize;
                let axis = if full.is_empty() || u.ratio(1, 3)? {
                    None
                } else {
                    Some(u.int_in_range(-rank..=rank - 1)?)
                };
                let options = ScanOptions {
                    axis,
                    exclusive: u.ratio(1, 3)?,
                    reverse: u.ratio(1, 3)?,
                    initial: if u.ratio(1, 3)? { Some(float(u)?) } else { None },
                };
                (body.scan(op, options), false)
            }
            _ => (body, false),
        };
        // drawn last, so the cases above keep their meaning
        let mut siblings = Vec::new();
        if u.ratio(1, 2)? {
            for _ in 0..u.int_in_range(1..=2u8)? {
                let depth = u.int_in_range(0..=3u32)?;
                let s = exact_tree(u, &names, full.len(), depth)?;
                siblings.push(if u.ratio(1, 6)? {
                    s.reduce(ReduceOp::Max, Axes::All)
                } else {
                    s
                });
            }
        }
        Ok(Case {
            expr,
            inputs,
            transcendental,
            siblings,
        })
    }

    fn args(&self) -> Vec<(&str, ArrayArg<'_>)> {
        self.inputs
            .iter()
            .map(|(name, data, view)| {
                let arg: ArrayArg<'_> = match data {
                    Data::F64(a) => ArrayArg::from(view.of(a.view())),
                    Data::F32(a) => ArrayArg::from(view.of(a.view())),
                };
                (name.as_str(), arg)
            })
            .collect()
    }

    /// The number of elements the interpreter gives, if it runs.
    pub fn check_len(&self) -> Option<usize> {
        let r = FusedRunner::compile(&self.expr)
            .ok()?
            .with_backend(kiln::interpreter());
        r.run(&self.args()).ok().map(|o| o.into_f64().len())
    }

    /// Runs the case on `backend` and on the interpreter; `Err` describes a disagreement.
    pub fn check(&self, backend: &str) -> std::result::Result<(), String> {
        let args = self.args();
        let oracle = FusedRunner::compile(&self.expr).map(|r| r.with_backend(kiln::interpreter()));
        let tested = FusedRunner::compile(&self.expr)
            .and_then(|r| Ok(r.with_backend(kiln::backend_by_name(backend)?)));
        let (oracle, tested) = match (oracle, tested) {
            (Ok(o), Ok(t)) => (o, t),
            (Err(_), Err(_)) => return Ok(()),
            (o, t) => return Err(format!("compile differs: interp {o:?} vs {backend} {t:?}")),
        };
        let want = oracle.run(&args);
        let got = tested.run(&args);
        let (want, got) = match (want, got) {
            (Err(_), Err(_)) => return Ok(()),
            (Ok(w), Ok(g)) => (w, g),
            (w, g) => return Err(format!("run differs: interp {w:?} vs {backend} {g:?}")),
        };
        if want.shape() != got.shape() || want.dtype_name() != got.dtype_name() {
            return Err(format!("result type differs: {want:?} vs {got:?}"));
        }
        let rule = self.rule(&args, backend)?;
        compare(&want, &got, &rule)?;
        self.check_siblings(&args, backend, &got, &rule)?;
        self.check_prepared(&args, &tested, &got)
    }

    /// Runs `expr` and the siblings as one runner of several results on `backend`: the first result
    /// as `got` was (the rule of `expr`), each sibling as the interpreter gives it alone.
    fn check_siblings(
        &self,
        args: &[(&str, ArrayArg<'_>)],
        backend: &str,
        got: &Output,
        rule: &Rule,
    ) -> std::result::Result<(), String> {
        if self.siblings.is_empty() {
            return Ok(());
        }
        let all: Vec<Expr> = std::iter::once(self.expr.clone())
            .chain(self.siblings.iter().cloned())
            .collect();
        let many = FusedRunner::compile_many(&all)
            .and_then(|r| Ok(r.with_backend(kiln::backend_by_name(backend)?)))
            .map_err(|e| format!("compile_many fails where compile did not: {e}"))?;
        let outs = many.run_many(args);
        let alone: Vec<std::result::Result<Output, String>> = self
            .siblings
            .iter()
            .map(|s| {
                FusedRunner::compile(s)
                    .map(|r| r.with_backend(kiln::interpreter()))
                    .and_then(|r| r.run(args))
                    .map_err(|e| e.to_string())
            })
            .collect();
        let outs = match outs {
            Ok(o) => o,
            // an error of one of them (an empty max) fails the whole run
            Err(_) if alone.iter().any(|a| a.is_err()) => return Ok(()),
            Err(e) => return Err(format!("run_many fails where each ran: {e}")),
        };
        compare(got, &outs[0], rule).map_err(|e| format!("run_many result 0: {e}"))?;
        for (i, (o, want)) in outs[1..].iter().zip(alone).enumerate() {
            let want = want.map_err(|e| format!("sibling {i} fails alone but not in run_many: {e}"))?;
            if want.shape() != o.shape() || want.dtype_name() != o.dtype_name() {
                return Err(format!(
                    "run_many result {}: type differs: {want:?} vs {o:?}",
                    i + 1
                ));
            }
            let rule = match self.siblings[i].node() {
                kiln::ExprNode::Reduce { .. } => Rule::Extreme,
                _ => Rule::Exact,
            };
            compare(&want, o, &rule).map_err(|e| format!("run_many result {}: {e}", i + 1))?;
        }
        Ok(())
    }

    /// The comparison rule of `expr`'s result.
    fn rule(&self, args: &[(&str, ArrayArg<'_>)], backend: &str) -> std::result::Result<Rule, String> {
        let args = args.to_vec();
        let rule = match self.expr.node() {
            kiln::ExprNode::Reduce {
                op: ReduceOp::Sum,
                arg,
                ..
            } => {
                // the bound of a reassociated sum: n * eps * sum(|x|)
                let magnitude =
                    FusedRunner::compile(&arg.clone().abs().reduce(ReduceOp::Sum, reduce_axes(&self.expr)))
                        .map_err(|e| e.to_string())?
                        .with_backend(kiln::interpreter())
                        .run(&args)
                        .map_err(|e| e.to_string())?;
                Rule::SumBound(magnitude.into_f64().iter().copied().collect())
            }
            kiln::ExprNode::Reduce {
                op: ReduceOp::Prod,
                arg,
                ..
            } => {
                // a regrouped product loses every digit where one of its partial products passes
                // through the subnormals or overflows, which the grouping decides: flag each output
                // whose factors below 1 in magnitude multiply to less than the smallest normal f64
                // (the accumulator's type), or whose factors above 1 multiply to inf
                let a = arg.clone().abs();
                let part = |keep: Expr| -> std::result::Result<Vec<f64>, String> {
                    let out = FusedRunner::compile(
                        &Expr::select(keep, &a, 1.0).reduce(ReduceOp::Prod, reduce_axes(&self.expr)),
                    )
                    .map_err(|e| e.to_string())?
                    .with_backend(kiln::interpreter())
                    .run(&args)
                    .map_err(|e| e.to_string())?;
                    Ok(out.into_f64().iter().copied().collect())
                };
                let (small, large) = (part(a.lt(1.0))?, part(a.gt(1.0))?);
                Rule::Relative(
                    small
                        .iter()
                        .zip(&large)
                        .map(|(&s, &l)| s < f64::MIN_POSITIVE || l.is_infinite())
                        .collect(),
                )
            }
            kiln::ExprNode::Reduce {
                op: ReduceOp::Min | ReduceOp::Max,
                ..
            } => Rule::Extreme,
            kiln::ExprNode::Scan { op, options, arg } => {
                let body = FusedRunner::compile(arg)
                    .map_err(|e| e.to_string())?
                    .with_backend(kiln::interpreter())
                    .run(&args)
                    .map_err(|e| e.to_string())?;
                scan_rule(*op, options, body, backend)
            }
            _ if self.transcendental => Rule::Ulp(8),
            _ => Rule::Exact,
        };
        Ok(rule)
    }

    /// The prepared handle and the in-place updates of `tested` give what its run gave (`got`).
    fn check_prepared(
        &self,
        args: &[(&str, ArrayArg<'_>)],
        tested: &FusedRunner,
        got: &Output,
    ) -> std::result::Result<(), String> {
        let got = got.clone();
        // the prepared handle, by position (its direct path where it applies), gives the same bits
        let h = tested
            .prepared(args)
            .map_err(|e| format!("prepared fails where run did not: {e}"))?;
        let positional: Vec<ArrayArg<'_>> = args.iter().map(|(_, a)| a.clone()).collect();
        let again = match &got {
            Output::F64(a) => {
                let mut o = ArrayD::<f64>::zeros(a.raw_dim());
                h.run_into(&positional, o.view_mut()).map(|_| Output::F64(o))
            }
            Output::F32(a) => {
                let mut o = ArrayD::<f32>::zeros(a.raw_dim());
                h.run_into(&positional, o.view_mut()).map(|_| Output::F32(o))
            }
            _ => h.run(&positional),
        };
        let again = again.map_err(|e| format!("the prepared call fails where run did not: {e}"))?;
        compare(&got, &again, &Rule::Exact).map_err(|e| format!("prepared call: {e}"))?;
        // an in-place update of each input the result could overwrite: refused, or the same bits
        for (k, (name, arg)) in args.iter().enumerate() {
            let others: Vec<(&str, ArrayArg<'_>)> = args
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != k)
                .map(|(_, (n, a))| (*n, a.clone()))
                .collect();
            let updated = match (arg, &got) {
                (ArrayArg::F64(v), Output::F64(g)) if v.shape() == g.shape() => {
                    let mut target = v.to_dyn().as_standard_layout().into_owned();
                    tested
                        .run_update(name, &others, target.view_mut())
                        .ok()
                        .map(|_| Output::F64(target))
                }
                (ArrayArg::F32(v), Output::F32(g)) if v.shape() == g.shape() => {
                    let mut target = v.to_dyn().as_standard_layout().into_owned();
                    tested
                        .run_update(name, &others, target.view_mut())
                        .ok()
                        .map(|_| Output::F32(target))
                }
                _ => None,
            };
            if let Some(u) = updated {
                compare(&got, &u, &Rule::Exact).map_err(|e| format!("run_update of '{name}': {e}"))?;
            }
        }
        Ok(())
    }
}

fn step_last(ax: ndarray::AxisDescription, ndim: usize) -> ndarray::Slice {
    if ax.axis.index() == ndim - 1 {
        ndarray::Slice::new(0, None, 2)
    } else {
        ndarray::Slice::from(..)
    }
}

fn reduce_axes(e: &Expr) -> Axes {
    match e.node() {
        kiln::ExprNode::Reduce { axes, .. } => axes.clone(),
        _ => Axes::All,
    }
}

enum Rule {
    Exact,
    /// min / max reductions: bit-exact, except that of equal extremes +0.0 and -0.0 the JIT's
    /// interleaved lanes may keep another than the sequential fold's last (README).
    Extreme,
    Ulp(u64),
    SumBound(Vec<f64>),
    /// Relative, except the outputs flagged `true`, whose regrouped products may underflow or
    /// overflow on the way (anything stands there).
    Relative(Vec<bool>),
    /// Per output of a reassociated scan (see [`scan_rule`]).
    Scan(Vec<Slack>),
}

/// How far one output of a reassociated cumsum or cumprod may be from the interpreter's.
#[derive(Debug, Clone, Copy)]
enum Slack {
    /// Anything: an intermediate of the reassociated fold may overflow or underflow where the
    /// sequential one does not (then NaN, ±inf, 0 and finite values may all come out either way).
    Any,
    /// Finite results within this absolute bound, non-finite ones equal.
    Abs(f64),
    /// Finite results within this fraction of the larger magnitude, non-finite ones equal.
    Rel(f64),
}

/// The parity rule of a scan. cummax and cummin are exact (associative, NaN and signed zeros
/// included), and so is every scan that folds sequentially: the scalar schedule, and an outer axis
/// (columns, each folded in order). Along the innermost axis (or the flattened array) the SIMD code
/// reassociates a sum or product within one 128-bit vector (`carry ⊕ (a ⊕ b)`, blocks of 2 for f64,
/// 4 for f32 in the f64 state; jit/src/scan.rs), so:
/// - cumsum: `|err| <= (len + 4) * eps * m`, `m` the running sum of the finite `|x|` (and `|initial|`)
///   along the same line in scan order; where `m` overflows, anything;
/// - cumprod: relative `2 * (len + 4) * eps` while every prefix and every window of up to 4
///   consecutive factors stays well inside the normal range (log2 within ±1000, f32 results within
///   ±120), else anything from there to the end of the line.
///
/// f32 results may differ by one more rounding (see [`compare`]).
fn scan_rule(op: ScanOp, options: &ScanOptions, body: Output, backend: &str) -> Rule {
    let f32_result = matches!(body, Output::F32(_));
    let body = body.into_f64();
    let shape = body.shape().to_vec();
    let x: Vec<f64> = body.iter().copied().collect();
    let n = x.len();
    let (outer, len, inner) = match options.axis {
        None => (1, n, 1),
        Some(a) => {
            let a = if a < 0 { a + shape.len() as isize } else { a } as usize;
            (
                shape[..a].iter().product(),
                shape[a],
                shape[a + 1..].iter().product::<usize>(),
            )
        }
    };
    let sequential = backend.ends_with("scalar") || inner != 1;
    if sequential || matches!(op, ScanOp::Max | ScanOp::Min) {
        return Rule::Exact;
    }
    let start = options.initial.unwrap_or(if options.exclusive {
        op.neutral()
    } else {
        op.identity()
    });
    let finite_nonzero = |v: f64| v.is_finite() && v != 0.0;
    let eps = f64::EPSILON;
    let mut slack = vec![Slack::Any; n];
    for o in 0..outer {
        let mut m = if start.is_finite() { start.abs() } else { 0.0 };
        let mut log = if finite_nonzero(start) {
            start.abs().log2()
        } else {
            0.0
        };
        let mut in_range = log.abs() <= 1000.0;
        let mut window: Vec<f64> = Vec::new();
        for t in 0..len {
            let k = if options.reverse { len - 1 - t } else { t };
            let i = o * len + k;
            let v = x[i];
            slack[i] = if op == ScanOp::Sum {
                if v.is_finite() {
                    m += v.abs();
                }
                if m.is_finite() && (!f32_result || m < 1e38) {
                    Slack::Abs((len + 4) as f64 * eps * m)
                } else {
                    Slack::Any
                }
            } else {
                if finite_nonzero(v) {
                    let l = v.abs().log2();
                    log += l;
                    window.insert(0, l);
                    window.truncate(4);
                    let mut w = 0.0;
                    for &l in &window {
                        w += l;
                        in_range &= w.abs() <= 1000.0;
                    }
                    in_range &= log.abs() <= 1000.0;
                }
                if in_range && (!f32_result || log.abs() <= 120.0) {
                    Slack::Rel(2.0 * (len + 4) as f64 * eps)
                } else {
                    Slack::Any
                }
            };
        }
    }
    Rule::Scan(slack)
}

fn compare(want: &Output, got: &Output, rule: &Rule) -> std::result::Result<(), String> {
    let f32_result = matches!(want, Output::F32(_));
    let (w, g) = (want.clone().into_f64(), got.clone().into_f64());
    let eps = if f32_result {
        f32::EPSILON as f64
    } else {
        f64::EPSILON
    };
    let n = w.len().max(1) as f64;
    for (i, (&a, &b)) in w.iter().zip(g.iter()).enumerate() {
        let ok = if let Rule::Scan(slack) = rule {
            // f32 results: the f64 states within the slack may round to neighbouring f32 values
            let rounding = if f32_result {
                f32::EPSILON as f64 * a.abs().max(b.abs()) + f64::from(f32::from_bits(1))
            } else {
                0.0
            };
            match slack[i] {
                Slack::Any => true,
                _ if a.is_nan() || b.is_nan() => a.is_nan() && b.is_nan(),
                _ if !a.is_finite() || !b.is_finite() => a == b,
                Slack::Abs(bound) => (a - b).abs() <= bound + rounding,
                Slack::Rel(r) => (a - b).abs() <= r * a.abs().max(b.abs()) + rounding,
            }
        } else if matches!(rule, Rule::Relative(exposed) if exposed[i]) {
            true
        } else if matches!(rule, Rule::Relative(_))
            && (a.is_nan() || b.is_nan())
            && [a, b].iter().any(|v| !v.is_finite() || *v == 0.0)
        {
            // a product that meets inf and 0 (or overflows and underflows) in a regrouped order can
            // give NaN where the sequential order gives inf or 0, and the other way round
            true
        } else if matches!(rule, Rule::SumBound(mag) if mag[i] == f64::INFINITY) {
            // the magnitudes overflow (an infinite input, or finite ones whose |x| sum overflows): a
            // reassociated sum may meet inf and -inf in one grouping and not in another, so inf, NaN
            // and finite results all stand (cargo-fuzz exprs: sum([.., -MAX, .., MAX, .., inf, ..]) is
            // inf pairwise in the interpreter, NaN with the JIT's accumulators); a NaN input makes the
            // magnitude NaN, not inf, and is still checked below
            true
        } else if a.is_nan() || b.is_nan() {
            a.is_nan() && b.is_nan()
        } else {
            match rule {
                Rule::Exact => kit::same_bits(a, b),
                Rule::Extreme => kit::same_bits(a, b) || (a == 0.0 && b == 0.0),
                Rule::Ulp(max) => a == b || kit::ulp_distance(a, b, f32_result) <= *max,
                Rule::SumBound(mag) => {
                    let m = mag[i];
                    a == b
                        || (m.is_finite() && (a - b).abs() <= 4.0 * m * eps * n.max(16.0))
                        || !m.is_finite()
                }
                Rule::Relative(_) => {
                    // a regrouped product can underflow to 0 (or overflow to inf) where the
                    // sequential order does not, and the other way round (cargo-fuzz exprs:
                    // prod([.., 1e300, .., -6.4e-43, .., 5e-324, ..]) is -1.3e-65 in order, -0.0
                    // with four accumulators)
                    a == b
                        || (a - b).abs() <= 1e-6 * a.abs().max(b.abs())
                        || (!a.is_finite() || !b.is_finite())
                        || a == 0.0
                        || b == 0.0
                        || a.abs().max(b.abs()) < 1e-290
                }
                Rule::Scan(_) => unreachable!("handled above"),
            }
        };
        if !ok {
            return Err(format!("element {i}: interp {a:?} vs compiled {b:?}"));
        }
    }
    Ok(())
}
