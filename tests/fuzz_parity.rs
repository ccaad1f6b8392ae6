//! The parity suite over (backend x element type): every compiled backend (the JIT's SIMD and
//! scalar schedules) against the interpreter, for every element type (bool, int32, int64, float32,
//! float64, complex64, complex128), with three tests each, written once and stamped out by [`parity_tests!`] (in the
//! manner of fidget's `float_slice_tests!`):
//! - `random_kernels`: the bounded fuzzer, seeded random kernels of the type
//!   (`tests/support/random_kernel.rs`, the generator the cargo-fuzz targets share: every op,
//!   broadcasting shapes, strided and reversed views, special bit patterns and integer edge values,
//!   casts, integer opcodes, reductions over axes, means, scans, several results);
//! - `edge_values`: every kernel kind over the type's edge values paired each with each: every unary
//!   and binary op, with each type and with literals, at lengths 0 to 31 too, casts, `where`, every
//!   reduction over all and over each axis, means, every scan along each axis (exclusive, reversed,
//!   from an initial value), several results; each kernel that types must be compiled;
//! - `threaded`: maps and reductions over more points than one thread takes, on two threads.
//!
//! Each kernel is compared with the tolerance of its kind (`random_kernel::Rule`), then through the
//! prepared handle, the in-place updates and one runner of several results. Findings not yet fixed
//! are held in [`KNOWN`].
//!
//! `KILN_FUZZ_FROM`..`KILN_FUZZ_TO` select the random kernels' seed range (default 0..`CASES`),
//! `KILN_FUZZ_SEED` one seed; `KILN_FUZZ_TRACE=1` prints each kernel, `KILN_FUZZ_ENGINES=1` counts
//! the engines (`kiln explain`'s) that run them and prints those left to the typed interpreter.

#[path = "support/random_kernel.rs"]
mod random_kernel;

use arbitrary::Unstructured;
use kiln::kiln_ir::{BinaryOp, ElemType, ReduceOp, ScanOp, UnaryOp};
use kiln::{Axes, Expr, ScanOptions};
use ndarray::{ArrayD, IxDyn};
use random_kernel::{Case, Data, Elem, TYPES, with_elem};

/// The random kernels of each (backend, type) in a full run.
const CASES: u64 = 1000;

/// A finding not yet fixed: the cases that show it may fail with this error (a part of its text),
/// and a full run must meet it (a known finding no case shows any more fails the test: remove it).
struct Known {
    /// The home type of the random kernel, or the type of the edge-value test.
    elem: ElemType,
    /// The seed of a random kernel, or the start of an edge-value kernel's name (`{:?} at {len}`).
    case: Which<'static>,
    /// A part of the error it gives.
    error: &'static str,
}

/// A case of the suite: a random kernel by its seed, or an edge-value kernel by its name.
#[derive(Clone, Copy)]
enum Which<'a> {
    Seed(u64),
    Kernel(&'a str),
}

/// hypot of a signalling NaN and an infinity: libm's (glibc's, NumPy's) NaN, the JIT's vector
/// hypot inf (jit/src/vmath).
const HYPOT_SNAN_INF: &str = "interp NaN vs compiled inf";

const KNOWN: &[Known] = &[
    Known {
        elem: ElemType::F64,
        case: Which::Kernel(r#"Expr(Binary(Hypot, Expr(Input("a")), Expr(Input("#),
        error: HYPOT_SNAN_INF,
    },
    Known {
        elem: ElemType::F32,
        case: Which::Kernel(r#"Expr(Binary(Hypot, Expr(Input("a")), Expr(Input("c"))))"#),
        error: HYPOT_SNAN_INF,
    },
];

/// The known findings one test meets: how many cases showed each.
struct Findings {
    elem: ElemType,
    hits: Vec<usize>,
}

impl Findings {
    fn new(elem: ElemType) -> Findings {
        Findings {
            elem,
            hits: vec![0; KNOWN.len()],
        }
    }

    /// The check of `case`, held to a known finding where it has one: `Err` describes a
    /// disagreement.
    fn check(&mut self, case: &Case, backend: &str, which: Which<'_>) -> Result<(), String> {
        let known = KNOWN.iter().position(|k| {
            k.elem == self.elem
                && match (k.case, which) {
                    (Which::Seed(a), Which::Seed(b)) => a == b,
                    (Which::Kernel(a), Which::Kernel(b)) => b.starts_with(a),
                    _ => false,
                }
        });
        match (case.check(backend), known) {
            (Err(e), Some(k)) if e.contains(KNOWN[k].error) => {
                eprintln!("known finding: {e}");
                self.hits[k] += 1;
                Ok(())
            }
            (Err(e), _) => Err(e),
            (Ok(()), _) => Ok(()),
        }
    }

    /// Every known finding of this type and kind of case was met (`seeds`: the random kernels'
    /// findings, in `range`; else the edge values').
    fn all_met(&self, seeds: Option<std::ops::Range<u64>>) {
        for (k, known) in KNOWN.iter().enumerate() {
            let ours = known.elem == self.elem
                && match (known.case, &seeds) {
                    (Which::Seed(s), Some(range)) => range.contains(&s),
                    (Which::Kernel(_), None) => true,
                    _ => false,
                };
            assert!(
                !ours || self.hits[k] > 0,
                "no case shows the known finding '{}' any more: remove it from KNOWN",
                known.error
            );
        }
    }
}

/// One module per backend, in it one per element type, in it one `#[test]` per test function of
/// this file (`fn test(backend: &str, elem: ElemType)`).
macro_rules! parity_tests {
    ($($backend:ident = $name:tt),+ $(,)?) => {
        $(
            mod $backend {
                parity_tests!(@types $name; bool = Bool, int32 = I32, int64 = I64, float32 = F32,
                    float64 = F64, complex64 = C64, complex128 = C128);
            }
        )+
        #[test]
        fn the_suite_covers_every_compiled_backend_and_type() {
            let mut known: Vec<&str> = kiln::BACKENDS.iter().copied().filter(|b| *b != "interp").collect();
            known.sort_unstable();
            let mut ours = vec![$($name),+];
            ours.sort_unstable();
            assert_eq!(known, ours);
            // every element type
            assert_eq!(TYPES.to_vec(), ElemType::ALL.to_vec());
        }
    };
    (@types $name:tt; $($ty:ident = $elem:ident),+) => {
        $(
            mod $ty {
                use kiln::kiln_ir::ElemType;
                #[test]
                fn random_kernels() {
                    crate::random_kernels($name, ElemType::$elem)
                }
                #[test]
                fn edge_values() {
                    crate::edge_values($name, ElemType::$elem)
                }
                #[test]
                fn threaded() {
                    crate::threaded($name, ElemType::$elem)
                }
            }
        )+
    };
}

parity_tests!(jit = "jit", jit_scalar = "jit-scalar");

/// xorshift64*: bytes for `Unstructured`, the same on every machine.
fn bytes(seed: u64, len: usize) -> Vec<u8> {
    let mut s = seed | 1;
    (0..len)
        .map(|_| {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            (s.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 56) as u8
        })
        .collect()
}

/// The seed range of a run: `KILN_FUZZ_FROM`..`KILN_FUZZ_TO` (default `0..to`), or only
/// `KILN_FUZZ_SEED`.
fn seed_range(to: u64) -> (std::ops::Range<u64>, Option<u64>) {
    let var = |name: &str| std::env::var(name).ok().and_then(|s| s.parse().ok());
    let from = var("KILN_FUZZ_FROM").unwrap_or(0);
    (from..var("KILN_FUZZ_TO").unwrap_or(to), var("KILN_FUZZ_SEED"))
}

/// The random kernels of home type `elem`, seeds `0..CASES`, on `backend`.
fn random_kernels(backend: &str, elem: ElemType) {
    let (range, only) = seed_range(CASES);
    let full = only.is_none() && range == (0..CASES);
    let trace = std::env::var_os("KILN_FUZZ_TRACE").is_some();
    let engines_trace = std::env::var_os("KILN_FUZZ_ENGINES").is_some();
    let stream = TYPES.iter().position(|&t| t == elem).expect("a type") as u64;
    let (mut failures, mut checked, mut ran, mut interpreted) = (Vec::new(), 0u64, 0u64, 0u64);
    let mut seen: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    let mut findings = Findings::new(elem);
    for seed in range.clone() {
        if only.is_some_and(|o| o != seed) {
            continue;
        }
        let data = bytes((seed * 7919 + 1) ^ (stream << 40), 4096);
        let Ok(case) = Case::of_type(&mut Unstructured::new(&data), elem) else {
            continue;
        };
        if trace {
            let inputs: Vec<_> = case
                .inputs
                .iter()
                .map(|(n, d, v)| (n, d.elem(), d.shape(), v))
                .collect();
            eprintln!(
                "seed {seed}: {:?} {inputs:?} siblings {:?}",
                case.expr, case.siblings
            );
        }
        checked += 1;
        if let Err(e) = findings.check(&case, backend, Which::Seed(seed)) {
            let f = format!(
                "{} seed {seed} on {backend}: {e}\n  expr {:?}",
                elem.name(),
                case.expr
            );
            eprintln!("FAIL {f}");
            failures.push(f);
        }
        if case.oracle().is_some_and(|o| !o.shape().contains(&0)) {
            ran += 1;
            if let Some(engines) = case.engines(backend) {
                if engines.contains(&kiln::Engine::TypedInterpreted) {
                    interpreted += 1;
                    if engines_trace {
                        eprintln!("seed {seed} left to the typed interpreter: {:?}", case.expr);
                    }
                }
                if engines_trace {
                    *seen.entry(format!("{engines:?}")).or_default() += 1;
                }
            }
        }
    }
    for (engines, count) in &seen {
        eprintln!("{count:6} {engines}");
    }
    eprintln!(
        "{} on {backend}: {checked} kernels checked, {ran} of them run by the interpreter with a non-empty result, {interpreted} of those left to the typed interpreter",
        elem.name()
    );
    assert!(
        !full || checked > CASES * 9 / 10,
        "only {checked} cases generated"
    );
    assert!(!full || ran > CASES * 2 / 5, "too few cases type and run: {ran}");
    // every kernel kind compiles: several outputs, sibling reductions, float scans in a typed
    // kernel, reductions from an initial value, complex scans (KILN_FUZZ_ENGINES=1 lists any)
    assert!(
        !full || interpreted == 0,
        "{interpreted} random kernels of {} left to the typed interpreter on {backend}",
        elem.name()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
    if only.is_none() {
        findings.all_met(Some(range));
    }
}

/// `len` values of `T` from its edge values: every 5th, from the `shift`th on, cycled.
fn cycled<T: Elem>(len: usize, shift: usize) -> ArrayD<T> {
    let v = T::edges();
    ArrayD::from_shape_fn(IxDyn(&[len]), |k| v[(k[0] * 5 + shift) % v.len()])
}

/// Lengths of the maps besides all pairs: empty, one element, below and above the vector width,
/// with tails.
const LENGTHS: [usize; 6] = [0, 1, 3, 4, 9, 31];

/// Literals every binary op meets on either side: weak ints (0, divisors -1 and 7) and floats;
/// and the shift counts around both widths, the shifts' right operands.
fn literals() -> (Vec<Expr>, Vec<Expr>) {
    let every = [0i64, -1, 2, 7]
        .map(Expr::int)
        .into_iter()
        .chain([Expr::lit(0.5)]);
    let counts = [1i64, 31, 32, 33, 63, 64, 65].map(Expr::int);
    (every.collect(), counts.to_vec())
}

/// Every kernel kind over the edge values of `T`, named: at the length of all pairs `a` repeats
/// each edge value and `b` cycles through them, `m` and `q` are them as square matrices; `p` is a
/// bool pattern and `c` each type's edge values. With `short`, the maps over `a`, `b` and `c` run
/// at [`LENGTHS`] too.
fn edge_cases<T: Elem>(short: bool) -> Vec<(String, Case)> {
    let v = T::edges();
    let n = v.len();
    let a = ArrayD::from_shape_fn(IxDyn(&[n * n]), |k| v[k[0] / n]);
    let b = ArrayD::from_shape_fn(IxDyn(&[n * n]), |k| v[k[0] % n]);
    let (m, q) = (
        a.clone().into_shape_with_order(IxDyn(&[n, n])).expect("square"),
        b.clone().into_shape_with_order(IxDyn(&[n, n])).expect("square"),
    );
    let bools = |len: usize| Data::Bool(ArrayD::from_shape_fn(IxDyn(&[len]), |k| k[0] % 3 == 1));
    let (m, q) = (T::data(m), T::data(q));
    let x = |name: &str| Expr::input(name);
    let mut cases: Vec<(String, Case)> = Vec::new();
    let mut add = |expr: Expr, inputs: Vec<(&str, &Data)>| {
        let len = inputs
            .first()
            .map_or(0, |(_, d)| d.shape().iter().product::<usize>());
        let inputs = inputs.into_iter().map(|(n, d)| (n, d.clone())).collect();
        let mut case = Case::new(expr, inputs);
        // the maps at the short lengths: their runs (the prepared handles, updates and several
        // results are the pairs')
        case.run_only = len < 32 && len != n * n;
        cases.push((format!("{:?} at {len}", case.expr), case));
    };
    let unary: Vec<UnaryOp> = UnaryOp::ALL.into_iter().chain([UnaryOp::Invert]).collect();
    let binary: Vec<BinaryOp> = BinaryOp::ALL.into_iter().chain(BinaryOp::INTEGER).collect();
    // maps: every unary op (the approximated ones within their ULP bound), every binary op with
    // `b` and with each type's `c`, casts, `where`: over all pairs and at each length
    let lengths = LENGTHS.into_iter().filter(|&l| short && l != n * n);
    for len in std::iter::once(n * n).chain(lengths) {
        let (a, b, p) = if len == n * n {
            (T::data(a.clone()), T::data(b.clone()), bools(len))
        } else {
            (
                T::data(cycled::<T>(len, 0)),
                T::data(cycled::<T>(len, 3)),
                bools(len),
            )
        };
        for &op in &unary {
            add(x("a").unary(op), vec![("a", &a)]);
        }
        for &op in &binary {
            add(x("a").binary(op, x("b")), vec![("a", &a), ("b", &b)]);
        }
        for other in TYPES {
            let c = with_elem!(other, U => U::data(cycled::<U>(len, 1)));
            add(x("a").cast(other), vec![("a", &a)]);
            if other == T::ELEM && len != n * n {
                continue;
            }
            for &op in &binary {
                add(x("a").binary(op, x("c")), vec![("a", &a), ("c", &c)]);
            }
        }
        add(
            Expr::select(x("p"), x("a"), x("b")),
            vec![("a", &a), ("b", &b), ("p", &p)],
        );
        add(
            Expr::select(x("a"), x("p"), x("b")),
            vec![("a", &a), ("b", &b), ("p", &p)],
        );
        add(Expr::select(x("a"), Expr::int(1), Expr::int(2)), vec![("a", &a)]);
        if len == n * n {
            // literals: every binary op with each on either side, the shifts by every count
            let (every, counts) = literals();
            for &op in &binary {
                for lit in &every {
                    add(x("a").binary(op, lit.clone()), vec![("a", &a)]);
                    add(lit.binary(op, x("a")), vec![("a", &a)]);
                }
            }
            for op in [BinaryOp::Shl, BinaryOp::Shr] {
                for count in &counts {
                    add(x("a").binary(op, count.clone()), vec![("a", &a)]);
                }
            }
        }
    }
    // reductions over all and along each axis, of the values and of a product of pairs; means
    let axes = [
        Axes::All,
        Axes::Some(vec![0]),
        Axes::Some(vec![1]),
        Axes::Some(vec![-1, 0]),
    ];
    for op in ReduceOp::ALL {
        for ax in &axes {
            add(x("m").reduce(op, ax.clone()), vec![("m", &m)]);
            add(
                x("m").binary(BinaryOp::Mul, x("q")).reduce(op, ax.clone()),
                vec![("m", &m), ("q", &q)],
            );
        }
        add(
            x("m").reduce_with(op, Axes::Some(vec![1]), true, None),
            vec![("m", &m)],
        );
    }
    for ax in &axes {
        add(x("m").mean_axes(ax.clone(), false), vec![("m", &m)]);
    }
    // scans: every op along the flattened array and each axis, inclusive and exclusive, forward
    // and reversed, and from an initial value
    for op in ScanOp::ALL {
        for axis in [None, Some(0), Some(1), Some(-1)] {
            for (exclusive, reverse, initial) in [
                (false, false, None),
                (true, false, None),
                (false, true, None),
                (true, true, None),
                (false, false, Some(2.0)),
            ] {
                let options = ScanOptions {
                    axis,
                    exclusive,
                    reverse,
                    initial,
                };
                add(x("m").scan(op, options), vec![("m", &m)]);
            }
        }
    }
    // several results: maps and whole-array reductions in one runner
    let mut many = Case::new(
        x("a").binary(BinaryOp::Add, x("b")),
        vec![("a", T::data(a.clone())), ("b", T::data(b.clone()))],
    );
    many.siblings = vec![
        x("a").binary(BinaryOp::Mul, x("b")),
        x("a").reduce(ReduceOp::Max, Axes::All),
        x("b").reduce(ReduceOp::Sum, Axes::All),
    ];
    cases.push(("several results".to_string(), many));
    cases
}

/// Every kernel kind over the edge values of `elem`, on `backend`: each within its tolerance, and
/// each that types compiled (none left to the typed interpreter).
fn edge_values(backend: &str, elem: ElemType) {
    // the short lengths (tails, below the vector width) on the SIMD schedule
    let cases = with_elem!(elem, T => edge_cases::<T>(backend == "jit"));
    let mut findings = Findings::new(elem);
    let (mut failures, mut interpreted, mut ran) = (Vec::new(), Vec::new(), 0);
    for (what, case) in &cases {
        // the maps at the short lengths are the pairs' kernels (typed and compiled alike)
        if !case.run_only && case.oracle().is_some() {
            ran += 1;
            if case
                .engines(backend)
                .is_some_and(|e| e.contains(&kiln::Engine::TypedInterpreted))
            {
                interpreted.push(what.as_str());
            }
        }
        if let Err(e) = findings.check(case, backend, Which::Kernel(what)) {
            failures.push(format!("{what} on {backend}: {e}"));
        }
    }
    let full = cases.iter().filter(|(_, c)| !c.run_only).count();
    eprintln!(
        "{} on {backend}: {} edge-value kernels ({} of them maps at short lengths), {ran} of the rest type and run",
        elem.name(),
        cases.len(),
        cases.len() - full
    );
    // complex numbers have no ordering, integer or bitwise opcodes: about a third of their
    // kernels type
    let share = if elem.is_complex() { 3 } else { 2 };
    assert!(ran * share > full, "only {ran} of {full} kernels type and run");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        interpreted.is_empty(),
        "{} kernels left to the typed interpreter on {backend}:\n{}",
        interpreted.len(),
        interpreted.join("\n")
    );
    findings.all_met(None);
}

/// Kernels over more points than one thread takes (2**18), split over two threads, give the
/// interpreter's results: maps, division by a literal, masked and plain reductions, a scan.
fn threaded(backend: &str, elem: ElemType) {
    let n = (1 << 18) + 77;
    let stream = TYPES.iter().position(|&t| t == elem).expect("a type") as u64;
    let raw = bytes(0x2545_f491_4f6c_dd1d ^ stream, n * 20);
    let mut u = Unstructured::new(&raw);
    let shape = [n];
    let draw = |u: &mut Unstructured<'_>| {
        Data::draw(u, elem, &shape, random_kernel::View::Plain).expect("enough bytes")
    };
    let (a, b) = (draw(&mut u), draw(&mut u));
    let p = Data::draw(&mut u, ElemType::Bool, &shape, random_kernel::View::Plain).expect("enough bytes");
    let x = |name: &str| Expr::input(name);
    let kernels = [
        x("a")
            .binary(BinaryOp::Mul, Expr::int(3))
            .binary(BinaryOp::Add, x("b")),
        x("a").binary(BinaryOp::FloorDiv, x("b")),
        x("a").binary(BinaryOp::Rem, Expr::int(-3)),
        x("a").binary(BinaryOp::FloorDiv, Expr::int(7)),
        Expr::select(x("p"), x("a"), x("b")),
        x("a").cast(ElemType::F32).binary(BinaryOp::Add, x("b")),
        Expr::select(x("p"), x("a"), 0).reduce(ReduceOp::Sum, Axes::All),
        x("a")
            .binary(BinaryOp::BitXor, x("b"))
            .reduce(ReduceOp::Max, Axes::All),
        x("a").reduce(ReduceOp::Min, Axes::All),
        x("a").binary(BinaryOp::Eq, 0).reduce(ReduceOp::Any, Axes::All),
        x("a").reduce(ReduceOp::ArgMax, Axes::All),
        x("a").mean_axes(Axes::All, false),
        x("a").scan(ScanOp::Max, ScanOptions::default()),
    ];
    let mut ran = 0;
    for expr in kernels {
        let mut case = Case::new(expr, vec![("a", a.clone()), ("b", b.clone()), ("p", p.clone())]);
        case.threads = Some(2);
        if case.oracle().is_some() {
            ran += 1;
        }
        if let Err(e) = case.check(backend) {
            panic!("{:?} on {backend}, 2 threads: {e}", case.expr);
        }
    }
    assert!(ran >= 5, "only {ran} threaded kernels type and run");
}

/// The generator's copy of the complex functions' bounds (`random_kernel::complex_ulp_bound`,
/// shared with the fuzz crate, which does not link kiln-jit) is kiln-jit's.
#[test]
fn the_complex_bounds_are_kiln_jits() {
    for op in kiln::kiln_ir::UnaryOp::ALL {
        let documented = kiln_jit::complex_ulp_bound(op);
        assert_eq!(
            random_kernel::complex_ulp_bound(op),
            (documented > 0).then_some(u64::from(documented)),
            "{op}"
        );
    }
}
