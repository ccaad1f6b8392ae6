//! `kiln bench --functions`: every function of numexpr's set that kiln computes, one at a time,
//! against the scalar libm loop a Rust programmer writes.
//!
//! [`FUNCTIONS`] is the one table: each function's expression form (`tanh(x)`, `arctan2(x, y)`,
//! `x ** y`, `x ** 1.5`, `2.5 ** x`) and the domain its inputs are drawn from per type (where the
//! function is defined and its result finite). Nothing else here is per function: the expression
//! is the opcode's name, the bound is `kiln_jit`'s documented ULP bound for the opcode
//! ([`kiln_jit::unary_ulp_bound`], 0 where the JIT calls the interpreter's own libm function), the
//! loop is std's method for the opcode (arctanh: the `libm` crate's, as std's is wrong near -1;
//! [`super::std_loops`]). A function that becomes vector code
//! in kiln-jit changes its row's time and bound here with no change to this file.
//!
//! Per function, type and N, two rows: `kiln-simd`, kiln's ordinary call
//! ([`FusedRunner::run_into`] a preallocated output, on `threads` threads, under the profile), and
//! `rust-loop`, std's method element by element into the same output, on one thread. Both are first
//! checked against the interpreter (the oracle) on the inputs they are timed on: kiln within its
//! bound, the loop within [`LOOP_ULP`] (std is glibc, the interpreter partly the `libm` crate). The
//! edge values (NaN, ±inf, ±0, subnormals, a domain's ends) are the accuracy tests' business, not
//! this benchmark's.

use super::kernels::{Rng, Tolerance, try_array};
use super::report::{Row, Timed};
use super::std_loops::StdLoops;
use super::{Config, agrees, timing};
use kiln::error::{Error, Result};
use kiln::runner::FusedRunner;
use kiln_ir::{BinaryOp, ElemType, UnaryOp};
use ndarray::Array1;

/// How a function is written in the text language.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Form {
    /// `name(x)`.
    Unary(UnaryOp),
    /// `name(x, y)`, or `x ** y` for `Pow`.
    Binary(BinaryOp),
    /// `x ** e`, a literal exponent.
    PowScalar(f64),
    /// `b ** x`, a literal base.
    ScalarPow(f64),
}

impl Form {
    /// The text expression kiln compiles (its inputs are `x` and `y`).
    pub fn expr(self) -> String {
        match self {
            Form::Unary(op) => format!("{}(x)", op.name()),
            Form::Binary(BinaryOp::Pow) => "x ** y".into(),
            Form::Binary(op) => format!("{}(x, y)", op.name()),
            Form::PowScalar(e) => format!("x ** {e:?}"),
            Form::ScalarPow(b) => format!("{b:?} ** x"),
        }
    }

    /// kiln-jit's documented bound, in ULP, of its result from the interpreter's.
    pub fn ulp_bound(self) -> u32 {
        match self {
            Form::Unary(op) => kiln_jit::unary_ulp_bound(op),
            Form::Binary(op) => kiln_jit::binary_ulp_bound(op),
            Form::PowScalar(_) | Form::ScalarPow(_) => kiln_jit::binary_ulp_bound(BinaryOp::Pow),
        }
    }

    /// Whether the expression reads `y`.
    pub fn binary(self) -> bool {
        matches!(self, Form::Binary(_))
    }

    /// std's loop over `x` (and `y`) into `out`; `false` where std has no method.
    fn std_loop<T: StdLoops>(self, x: &[T], y: &[T], out: &mut [T]) -> bool {
        match self {
            Form::Unary(op) => T::unary(op, x, out),
            Form::Binary(op) => T::binary(op, x, y, out),
            Form::PowScalar(e) => {
                T::pow_scalar(x, T::from_f64(e), out);
                true
            }
            Form::ScalarPow(b) => {
                T::scalar_pow(T::from_f64(b), x, out);
                true
            }
        }
    }
}

/// Where an input is drawn from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Domain {
    /// Uniform on `[lo, hi)`.
    Uniform(f64, f64),
    /// Positive, the exponent uniform: `exp(uniform(ln lo, ln hi))`, `0 < lo < hi`.
    Log(f64, f64),
    /// [`Domain::Log`] with a random sign.
    SignedLog(f64, f64),
}

impl Domain {
    /// One draw.
    fn sample(self, rng: &mut Rng) -> f64 {
        let log = |rng: &mut Rng, lo: f64, hi: f64| {
            let (a, b) = (lo.ln(), hi.ln());
            (a + (b - a) * rng.unit()).exp().clamp(lo, hi)
        };
        match self {
            Domain::Uniform(lo, hi) => lo + (hi - lo) * rng.unit(),
            Domain::Log(lo, hi) => log(rng, lo, hi),
            Domain::SignedLog(lo, hi) => {
                let sign = if rng.unit() < 0.5 { -1.0 } else { 1.0 };
                sign * log(rng, lo, hi)
            }
        }
    }

    /// `(kind, lo, hi)`, kind `"uniform"`, `"log"` or `"signed-log"`: what another harness needs to
    /// draw the same distribution (`python -m kiln.bench --functions`).
    pub fn parts(self) -> (&'static str, f64, f64) {
        match self {
            Domain::Uniform(lo, hi) => ("uniform", lo, hi),
            Domain::Log(lo, hi) => ("log", lo, hi),
            Domain::SignedLog(lo, hi) => ("signed-log", lo, hi),
        }
    }
}

/// One function of the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Function {
    /// The row's name (`tanh`, `x**y`, `x**1.5`, `2.5**x`).
    pub name: &'static str,
    /// How the function is written as an expression.
    pub form: Form,
    /// The domain of `x`: `[f64, f32]`.
    pub x: [Domain; 2],
    /// The domain of `y` for a binary form: `[f64, f32]`.
    pub y: Option<[Domain; 2]>,
}

impl Function {
    /// The domain of `x` (`which` 0) or `y` (1) in `dtype`.
    pub fn domain(&self, which: usize, dtype: ElemType) -> Option<Domain> {
        let d = if which == 0 { Some(self.x) } else { self.y }?;
        Some(d[usize::from(dtype == ElemType::F32)])
    }

    /// The function named `name`.
    pub fn from_name(name: &str) -> Option<&'static Function> {
        FUNCTIONS.iter().find(|f| f.name == name)
    }
}

const fn typed(name: &'static str, form: Form, f64: Domain, f32: Domain) -> Function {
    Function {
        name,
        form,
        x: [f64, f32],
        y: None,
    }
}

const fn both(name: &'static str, form: Form, d: Domain) -> Function {
    Function {
        name,
        form,
        x: [d, d],
        y: None,
    }
}

use Domain::{Log, SignedLog, Uniform};
/// Where exp's result is finite and normal, in f64 and f32 (also expm1's, sinh's, cosh's).
const EXP_F64: Domain = Uniform(-700.0, 700.0);
const EXP_F32: Domain = Uniform(-87.0, 88.0);
/// Positive and finite: the logarithms' and sqrt's, every exponent.
const POS_F64: Domain = Log(1e-300, 1e300);
const POS_F32: Domain = Log(1e-37, 1e37);
/// Everywhere defined, bounded: the interesting range of the functions of all reals.
const REALS: Domain = Uniform(-10.0, 10.0);
const UNIT: Domain = Uniform(-1.0, 1.0);

/// Every function of numexpr's set that kiln computes (exp, log, sin, cos, tan, sqrt, and the
/// functions of issue 22), with pow as `x ** y` of two arrays, `x ** 1.5` and `2.5 ** x`.
pub const FUNCTIONS: &[Function] = &[
    typed("exp", Form::Unary(UnaryOp::Exp), EXP_F64, EXP_F32),
    typed("log", Form::Unary(UnaryOp::Log), POS_F64, POS_F32),
    both("sin", Form::Unary(UnaryOp::Sin), Uniform(-100.0, 100.0)),
    both("cos", Form::Unary(UnaryOp::Cos), Uniform(-100.0, 100.0)),
    both("tan", Form::Unary(UnaryOp::Tan), Uniform(-100.0, 100.0)),
    typed("sqrt", Form::Unary(UnaryOp::Sqrt), POS_F64, POS_F32),
    both("tanh", Form::Unary(UnaryOp::Tanh), Uniform(-20.0, 20.0)),
    typed("sinh", Form::Unary(UnaryOp::Sinh), EXP_F64, Uniform(-88.0, 88.0)),
    typed("cosh", Form::Unary(UnaryOp::Cosh), EXP_F64, Uniform(-88.0, 88.0)),
    both("arcsin", Form::Unary(UnaryOp::Arcsin), UNIT),
    both("arccos", Form::Unary(UnaryOp::Arccos), UNIT),
    both("arctan", Form::Unary(UnaryOp::Arctan), REALS),
    both("arcsinh", Form::Unary(UnaryOp::Arcsinh), REALS),
    both("arccosh", Form::Unary(UnaryOp::Arccosh), Log(1.0, 1e10)),
    both("arctanh", Form::Unary(UnaryOp::Arctanh), UNIT),
    both("log1p", Form::Unary(UnaryOp::Log1p), Uniform(-1.0, 10.0)),
    typed("expm1", Form::Unary(UnaryOp::Expm1), EXP_F64, EXP_F32),
    typed("log2", Form::Unary(UnaryOp::Log2), POS_F64, POS_F32),
    typed("log10", Form::Unary(UnaryOp::Log10), POS_F64, POS_F32),
    typed(
        "exp2",
        Form::Unary(UnaryOp::Exp2),
        Uniform(-1000.0, 1000.0),
        Uniform(-126.0, 127.0),
    ),
    typed(
        "cbrt",
        Form::Unary(UnaryOp::Cbrt),
        SignedLog(1e-300, 1e300),
        SignedLog(1e-37, 1e37),
    ),
    Function {
        name: "arctan2",
        form: Form::Binary(BinaryOp::Arctan2),
        x: [REALS, REALS],
        y: Some([REALS, REALS]),
    },
    Function {
        name: "hypot",
        form: Form::Binary(BinaryOp::Hypot),
        x: [REALS, REALS],
        y: Some([REALS, REALS]),
    },
    // |x ** y| within [1e-30, 1e30]: finite and normal in both types
    Function {
        name: "x**y",
        form: Form::Binary(BinaryOp::Pow),
        x: [Log(1e-3, 1e3), Log(1e-3, 1e3)],
        y: Some([REALS, REALS]),
    },
    both("x**1.5", Form::PowScalar(1.5), Log(1e-20, 1e20)),
    typed(
        "2.5**x",
        Form::ScalarPow(2.5),
        Uniform(-700.0, 700.0),
        Uniform(-90.0, 90.0),
    ),
];

/// The bound, in ULP, within which std's loop must agree with the interpreter. std is glibc, the
/// interpreter's f64 arcsinh, arccosh, arctanh and every f32 function are the `libm` crate's (most
/// differ by one or two ULP), and std computes asinh and acosh by formulas of its own (`acosh` is
/// some hundreds of ULP off near 1). The loose bound still catches a loop that computes another
/// function. (std's `atanh` loses its digits near -1, beyond any such bound: arctanh's loop is the
/// `libm` crate's, see [`super::std_loops`].)
pub const LOOP_ULP: u32 = 1 << 12;

/// Runs every function of `functions` at every N and dtype of `config`; `progress` hears about
/// each step.
pub fn run(
    config: &Config,
    functions: &[&'static Function],
    mut progress: impl FnMut(&str),
) -> Result<Vec<Row>> {
    if config.threads == 0 {
        return Err(Error::Unsupported("--threads 0: at least one thread".into()));
    }
    let mut rows = Vec::new();
    for &f in functions {
        for &dtype in &config.dtypes {
            for &n in &config.ns {
                progress(&format!("{} {} n={n}", f.name, dtype.short()));
                match dtype {
                    ElemType::F64 => rows.extend(one::<f64>(f, n, config)?),
                    ElemType::F32 => rows.extend(one::<f32>(f, n, config)?),
                    _ => unreachable!("only float types (f32, f64) reach here"),
                }
            }
        }
    }
    Ok(rows)
}

/// The inputs of `f` at size `n` in `T`, drawn from its domains (a fixed seed per function and N).
fn inputs<T: StdLoops>(f: &Function, n: usize) -> Result<[Option<Array1<T>>; 2]> {
    let seed = f
        .name
        .bytes()
        .fold(n as u64, |h, b| h.rotate_left(7) ^ u64::from(b));
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ seed);
    let mut draw = |which: usize, what: &str| -> Result<Option<Array1<T>>> {
        f.domain(which, T::DTYPE)
            .map(|d| try_array(n, what, || T::from_f64(d.sample(&mut rng))))
            .transpose()
    };
    Ok([draw(0, "the function input x")?, draw(1, "the function input y")?])
}

/// Both variants of `f` at one N in `T`.
fn one<T: StdLoops>(f: &'static Function, n: usize, config: &Config) -> Result<Vec<Row>> {
    let [x, y] = inputs::<T>(f, n)?;
    let x = x.ok_or_else(|| Error::Unsupported(format!("function {}: no x domain", f.name)))?;
    let mut args: Vec<(&str, kiln::ArrayArg<'_>)> = vec![("x", (&x).into())];
    if let Some(y) = &y {
        args.push(("y", y.into()));
    }
    let expr = f.form.expr();
    let oracle: Vec<T> = FusedRunner::compile_text(&expr)?
        .with_backend(kiln::interpreter())
        .with_profile(config.profile)
        .run(&args)
        .and_then(T::from_output)?
        .iter()
        .copied()
        .collect();
    let mut out = try_array(n, "the benchmark output", || T::ZERO)?;
    let bytes = ((1 + usize::from(y.is_some()) + 1) * n * std::mem::size_of::<T>()) as f64;
    let timed = Timed {
        kernel: f.name,
        n,
        dtype: T::DTYPE.short_name(),
        bytes,
    };
    let runner = FusedRunner::compile_text(&expr)?
        .with_profile(config.profile)
        .with_threads(config.threads);
    runner.run_into(&args, out.view_mut())?;
    let ok = agrees(Tolerance::Ulp(f.form.ulp_bound()), slice(&out), &oracle, false);
    let kiln_ns = timing::median_ns(
        || runner.run_into(&args, out.view_mut()).expect("ran once already"),
        config.budget,
    );
    let mut rows = vec![timed.row("kiln-simd", config.threads, kiln_ns, ok)];
    let (xs, ys): (&[T], &[T]) = (slice(&x), y.as_ref().map_or(&[], slice));
    let go = |out: &mut Array1<T>| f.form.std_loop(xs, ys, out.as_slice_mut().expect("contiguous"));
    if go(&mut out) {
        let ok = agrees(Tolerance::Ulp(LOOP_ULP), slice(&out), &oracle, true);
        let ns = timing::median_ns(
            || {
                go(&mut out);
            },
            config.budget,
        );
        rows.push(timed.row("rust-loop", 1, ns, ok));
    }
    Ok(rows)
}

fn slice<T>(a: &Array1<T>) -> &[T] {
    a.as_slice().expect("a fresh array is contiguous")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Every function, both types, agrees with the interpreter on small and awkward sizes (empty,
    /// one element, below a vector, a tail), kiln within its bound and std's loop within
    /// [`LOOP_ULP`]; each has its loop.
    #[test]
    fn every_function_agrees_at_small_sizes() {
        let config = Config {
            ns: vec![0, 1, 3, 1003],
            budget: Duration::from_micros(100),
            ..Default::default()
        };
        let all: Vec<&Function> = FUNCTIONS.iter().collect();
        let rows = run(&config, &all, |_| {}).expect("bench runs");
        assert_eq!(rows.len(), FUNCTIONS.len() * 2 * 4 * 2);
        for r in &rows {
            assert!(r.ok, "{} n={} {} {} disagrees", r.kernel, r.n, r.dtype, r.variant);
        }
    }

    /// Names are unique, the binary forms have a `y` domain, and every function is finite on its
    /// drawn inputs in both types (the domains are where it is defined and does not overflow).
    #[test]
    fn names_are_unique_and_every_function_is_finite_on_its_domain() {
        fn finite<T: StdLoops>(f: &Function) {
            let [x, y] = inputs::<T>(f, 2000).unwrap();
            let (x, y) = (x.unwrap(), y);
            let mut args: Vec<(&str, kiln::ArrayArg<'_>)> = vec![("x", (&x).into())];
            if let Some(y) = &y {
                args.push(("y", y.into()));
            }
            let got = FusedRunner::compile_text(&f.form.expr())
                .unwrap()
                .with_backend(kiln::interpreter())
                .run(&args)
                .and_then(T::from_output)
                .unwrap();
            let bad = got.iter().zip(&x).find(|(v, _)| !v.to_f64().is_finite());
            assert!(bad.is_none(), "{} {}: {bad:?} (value, x)", f.name, T::DTYPE);
        }
        for f in FUNCTIONS {
            assert_eq!(Function::from_name(f.name), Some(f), "{} is not unique", f.name);
            assert_eq!(f.form.binary(), f.y.is_some(), "{}", f.name);
            finite::<f64>(f);
            finite::<f32>(f);
        }
        assert_eq!(Form::PowScalar(1.5).expr(), "x ** 1.5");
        assert_eq!(Form::ScalarPow(2.5).expr(), "2.5 ** x");
        assert_eq!(Form::Binary(BinaryOp::Arctan2).expr(), "arctan2(x, y)");
        assert_eq!(Form::Binary(BinaryOp::Pow).expr(), "x ** y");
        assert_eq!(Form::Unary(UnaryOp::Log1p).expr(), "log1p(x)");
    }
}
