//! Compiled typed kernels (issue 13, item 6) against the typed interpreter, bit for bit: division by
//! literals and arrays in SIMD, splat, broadcast and strided inputs, the integer reductions (whole
//! arrays, every axis and pair of axes), the integer scans (every axis, exclusive and reversed
//! forms), large kernels cut into work units, prepared handles, float reductions and functions of
//! integer values, contractions and several outputs. Every opcode and cast over every pair of types
//! at the edge values and at lengths 0, 1, below the vector width and with tails is the parity
//! suite's (`tests/fuzz_parity.rs`, `edge_values` of each backend and type). Each case runs on the `jit`
//! backend (SIMD), `jit-scalar` (one lane) and `interp` (the oracle), which must agree (any NaN equal
//! to any NaN); where the typing refuses a case, all three must refuse it. `kiln explain` must say
//! the JIT compiled the kernels that compile, so a silent fallback to the interpreter fails here.

use kiln::{ArrayArg, FusedRunner, Output};
use ndarray::{Array1, Array2, ArrayD, IxDyn, s};

/// Edge values of each type, cycled to any length.
fn edges(ty: &str) -> Vec<f64> {
    match ty {
        "bool" => vec![1.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0],
        "int32" => vec![
            0.0,
            -1.0,
            1.0,
            -2147483648.0,
            2147483647.0,
            31.0,
            32.0,
            33.0,
            7.0,
            -7.0,
            3.0,
            -3.0,
            2.0,
            65.0,
        ],
        "int64" => vec![
            0.0,
            -1.0,
            1.0,
            -9.223372036854776e18,
            9.223372036854775e18,
            63.0,
            64.0,
            65.0,
            2147483648.0,
            7.0,
            -7.0,
            3.0,
            -2.0,
            31.0,
        ],
        _ => vec![
            0.5,
            -1.5,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            -0.0,
            2147483648.0,
            -2147483649.0,
            9.3e18,
            3.0,
            -7.25,
            1e30,
            2.5,
            -2147483648.0,
        ],
    }
}

/// An array of `ty` with `n` elements from the edge values, starting at `shift`.
fn array(ty: &str, shape: &[usize], shift: usize) -> Arr {
    let e = edges(ty);
    let n: usize = shape.iter().product();
    let at = |i: usize| e[(i * 5 + shift) % e.len()];
    match ty {
        "bool" => Arr::Bool(from(n, |i| at(i) != 0.0, shape)),
        "int32" => Arr::I32(from(n, |i| at(i) as i32, shape)),
        "int64" => Arr::I64(from(
            n,
            |i| {
                // the extremes exactly, and 2**53 + 1, which f64 cannot hold
                let v = at(i);
                if v <= -9.2e18 {
                    i64::MIN
                } else if v >= 9.2e18 {
                    i64::MAX
                } else if v == 2147483648.0 && i % 2 == 1 {
                    (1 << 53) + 1
                } else {
                    v as i64
                }
            },
            shape,
        )),
        "float32" => Arr::F32(from(n, |i| at(i) as f32, shape)),
        _ => Arr::F64(from(n, at, shape)),
    }
}

fn from<T>(n: usize, f: impl Fn(usize) -> T, shape: &[usize]) -> ArrayD<T> {
    ArrayD::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap()
}

/// An owned input of any type.
#[derive(Clone)]
enum Arr {
    Bool(ArrayD<bool>),
    I32(ArrayD<i32>),
    I64(ArrayD<i64>),
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
}

impl Arr {
    fn arg(&self) -> ArrayArg<'_> {
        match self {
            Arr::Bool(a) => a.into(),
            Arr::I32(a) => a.into(),
            Arr::I64(a) => a.into(),
            Arr::F32(a) => a.into(),
            Arr::F64(a) => a.into(),
        }
    }
}

/// Bitwise equality of two outputs, any NaN equal to any NaN.
fn same(a: &Output, b: &Output) -> bool {
    fn floats<T: Copy + PartialEq>(
        x: &ArrayD<T>,
        y: &ArrayD<T>,
        bits: impl Fn(T) -> u64,
        nan: impl Fn(T) -> bool,
    ) -> bool {
        x.shape() == y.shape()
            && x.iter()
                .zip(y)
                .all(|(&p, &q)| (nan(p) && nan(q)) || bits(p) == bits(q))
    }
    match (a, b) {
        (Output::F64(x), Output::F64(y)) => floats(x, y, f64::to_bits, f64::is_nan),
        (Output::F32(x), Output::F32(y)) => floats(x, y, |v| v.to_bits() as u64, f32::is_nan),
        (Output::I64(x), Output::I64(y)) => x == y,
        (Output::I32(x), Output::I32(y)) => x == y,
        (Output::Bool(x), Output::Bool(y)) => x == y,
        _ => false,
    }
}

/// Equality of two outputs, floats within a relative `tol` (any NaN equal to any NaN, infinities
/// exactly; `tol` 0: bit for bit), the rest bit for bit.
fn within(a: &Output, b: &Output, tol: f64) -> bool {
    if tol == 0.0 {
        return same(a, b);
    }
    let near = |p: f64, q: f64| {
        (p.is_nan() && q.is_nan())
            || p == q
            || (p.is_finite() && q.is_finite() && (p - q).abs() <= tol * p.abs().max(q.abs()))
    };
    match (a, b) {
        (Output::F64(x), Output::F64(y)) => {
            x.shape() == y.shape() && x.iter().zip(y).all(|(&p, &q)| near(p, q))
        }
        (Output::F32(x), Output::F32(y)) => {
            x.shape() == y.shape() && x.iter().zip(y).all(|(&p, &q)| near(f64::from(p), f64::from(q)))
        }
        _ => same(a, b),
    }
}

/// The float functions with a vector routine (the float kernels' own, within their documented
/// bounds of at most 4 ULP): a kernel applying one is compared within 4 ULP of float32 relatively
/// (its values may pass through a float32 one before a float64 sum), any other bit for bit.
const VECTOR_MATH: [&str; 19] = [
    "sin", "cos", "tan", "exp", "log", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "expm1",
    "log1p", "exp2", "cbrt", "hypot", "**", "power", "erf",
];

/// Runs `expr` over `inputs` on the three backends; all agree or all refuse. Returns whether the
/// kernel ran (typed) and the JIT's note.
fn check(expr: &str, inputs: &[(&str, ArrayArg<'_>)]) -> Option<String> {
    let tol = if VECTOR_MATH.iter().any(|f| expr.contains(f)) {
        4.0 * f64::from(f32::EPSILON)
    } else {
        0.0
    };
    let run = |backend: &str| {
        let r = FusedRunner::compile_text(expr)
            .map_err(|e| e.to_string())?
            .with_backend(kiln::backend_by_name(backend).unwrap());
        r.run(inputs).map_err(|e| e.to_string())
    };
    let oracle = run("interp");
    for backend in ["jit", "jit-scalar"] {
        let got = run(backend);
        match (&oracle, &got) {
            (Ok(a), Ok(b)) => assert!(
                within(a, b, tol),
                "{expr} on {backend}, inputs {:?}:\n interp {a:?}\n {backend} {b:?}",
                inputs
                    .iter()
                    .map(|(n, a)| (n, a.elem(), a.shape().to_vec()))
                    .collect::<Vec<_>>()
            ),
            (Err(_), Err(_)) => {}
            _ => panic!("{expr} on {backend}: interp {oracle:?}, {backend} {got:?}"),
        }
    }
    oracle.ok()?;
    let runner = FusedRunner::compile_text(expr).unwrap();
    let notes = runner.explain_rewrites(inputs).ok()?;
    Some(notes.last()?.2.join("\n"))
}

/// Every result of `expr` over `inputs` on the backend named `backend`.
fn run_many_on(expr: &str, backend: &str, inputs: &[(&str, ArrayArg<'_>)]) -> kiln::Result<Vec<Output>> {
    FusedRunner::compile_text(expr)
        .unwrap()
        .with_backend(kiln::backend_by_name(backend).unwrap())
        .run_many(inputs)
}

/// Whether `explain`'s notes say a kernel is compiled: by the typed code generator (a line
/// `compiled: typed`, after the memory order's where the kernel runs in another axis order), or by
/// the float one reading integer or bool inputs converted (`stored:`), never interpreted.
fn is_compiled(note: &str) -> bool {
    (note.lines().any(|l| l.starts_with("compiled")) || note.contains("stored: "))
        && !note.contains("interpreted")
}

/// Every note `explain_rewrites` gives for `expr` over `inputs`, each stage's joined.
fn all_notes(expr: &str, inputs: &[(&str, ArrayArg<'_>)]) -> String {
    let notes = FusedRunner::compile_text(expr)
        .unwrap()
        .explain_rewrites(inputs)
        .unwrap();
    notes
        .iter()
        .map(|k| k.2.join("\n"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn division_by_literals_in_simd() {
    // int32 `//`, `%` and `fmod` by a literal divide in SIMD (a shift or a magic multiply, then the
    // floor correction); int64 by a literal in SIMD through float64 (a shift and a mask for powers
    // of two), per lane beyond ±2^50: every sign, powers of two, the extremes
    let mut v32: Vec<i32> = (-1030..1030).collect();
    v32.extend([
        i32::MIN,
        i32::MIN + 1,
        i32::MAX,
        i32::MAX - 1,
        1 << 30,
        -(1 << 30),
        123_456_789,
    ]);
    v32.extend((0..500).map(|k: i32| k.wrapping_mul(-1_640_531_527)));
    let a32 = Array1::from(v32);
    let a64 = a32.mapv(|v| (v as i64) * 3_000_000_007);
    for d in [
        2i64,
        -2,
        3,
        -3,
        4,
        5,
        7,
        -7,
        8,
        -8,
        10,
        641,
        -641,
        1 << 30,
        -(1 << 30),
        2147483647,
        -2147483647,
        -2147483648,
        1_000_000_007,
        0,
        1,
        -1,
        (1 << 50) - 1,
        (1 << 50) + 3,
        -(1 << 55) - 1,
        1 << 52,
        i64::MAX,
    ] {
        for expr in [format!("a // {d}"), format!("a % {d}"), format!("fmod(a, {d})")] {
            if i32::try_from(d).is_ok() {
                let note = check(&expr, &[("a", (&a32).into())]).unwrap();
                assert!(note.starts_with("compiled"), "{expr}: {note}");
            }
            check(&expr, &[("a", (&a64).into())]).unwrap();
        }
    }
}

#[test]
fn division_by_arrays_in_simd() {
    // int32 `//`, `%` and `fmod` of two arrays divide in float64 in SIMD: every pair of a sweep of
    // dividends and divisors (every sign, 0, -1, the extremes, large quotients and tiny ones)
    let mut vals: Vec<i32> = (-40..40).collect();
    vals.extend([
        i32::MIN,
        i32::MIN + 1,
        i32::MAX,
        i32::MAX - 1,
        1 << 30,
        -(1 << 30),
        46341,
        -46341,
    ]);
    vals.extend((0..40).map(|k: i32| k.wrapping_mul(-1_640_531_527)));
    let a: Array1<i32> = vals.iter().flat_map(|&x| vals.iter().map(move |_| x)).collect();
    let b: Array1<i32> = vals.iter().flat_map(|_| vals.iter().copied()).collect();
    for expr in ["a // b", "a % b", "fmod(a, b)"] {
        let note = check(expr, &[("a", (&a).into()), ("b", (&b).into())]).unwrap();
        assert!(note.starts_with("compiled"), "{expr}: {note}");
    }
}

/// Integer `**` of two arrays loops while any lane of a vector has an exponent bit left: every
/// pair of bases (0, ±1, ±2, 3, the extremes, values that wrap) and exponents (negative, which read
/// as 0; 0, 1, 2, 31, 32, 62, 63, 64, the maximum), so that one vector's lanes need from none to
/// every one of the type's steps, at lengths below, at and past the vector width (a scalar tail),
/// against the interpreter.
#[test]
fn integer_power_of_arrays_runs_to_the_largest_exponent() {
    let bases: [i64; 12] = [0, 1, -1, 2, -2, 3, 7, -5, 1 << 20, 46_341, i64::MIN, i64::MAX];
    let exps: [i64; 14] = [-9, -1, 0, 1, 2, 3, 5, 31, 32, 62, 63, 64, 1000, i64::MAX];
    let a64: Vec<i64> = bases.iter().flat_map(|&x| exps.iter().map(move |_| x)).collect();
    let b64: Vec<i64> = bases.iter().flat_map(|_| exps.iter().copied()).collect();
    let ints = |v: &[i64]| -> Vec<i32> { v.iter().map(|&x| x as i32).collect() };
    let (a32, b32) = (ints(&a64), ints(&b64));
    for n in [0, 1, 3, 5, a64.len()] {
        let (a, b) = (Array1::from(a64[..n].to_vec()), Array1::from(b64[..n].to_vec()));
        let (c, d) = (Array1::from(a32[..n].to_vec()), Array1::from(b32[..n].to_vec()));
        for (expr, inputs) in [
            ("a ** b", [("a", (&a).into()), ("b", (&b).into())]),
            ("a ** b", [("a", (&c).into()), ("b", (&d).into())]),
            ("a ** b", [("a", (&c).into()), ("b", (&b).into())]),
            ("(a ** b) ** 2 - b ** a", [("a", (&a).into()), ("b", (&d).into())]),
        ] {
            let note = check(expr, &inputs).unwrap();
            assert!(note.starts_with("compiled"), "{expr}: {note}");
        }
        // int32 powers beside int64 values: a kernel of 2 lanes, the int32 ones half a vector
        let inputs = [("c", (&c).into()), ("d", (&d).into()), ("a", (&a).into())];
        for expr in ["c ** d + a", "where(a > 0, c ** d, 0)"] {
            let note = check(expr, &inputs).unwrap();
            assert!(note.starts_with("compiled"), "{expr}: {note}");
        }
    }
}

/// int64 `//`, `%` and `fmod` of two arrays divide in float64 in SIMD where a vector's operands are
/// within ±2^50, per lane elsewhere: every pair of a sweep of dividends and divisors (every sign, 0,
/// -1, the edges of the range and past them, the extremes, and dividends one either side of a
/// multiple of a large divisor, multiples a reciprocal's product falls short on), and by constants
/// (a division, a power of two's shift and mask), against the interpreter; pairs of one
/// vector mix lanes in range and out of it.
#[test]
fn int64_division_by_arrays_in_simd() {
    let edge = 1i64 << 50;
    let mut vals: Vec<i64> = (-20..20).collect();
    vals.extend([
        i64::MIN,
        i64::MIN + 1,
        i64::MAX,
        edge - 1,
        edge,
        -edge,
        -edge - 1,
        (1 << 31) + 7,
        -(1 << 40) - 3,
    ]);
    for b in [3i64, 7, 12_345, (1 << 25) + 1, (1 << 40) - 1] {
        let k = (edge - 2) / b;
        for a in [k * b - 1, k * b, k * b + 1, (k / 3) * b - 1] {
            vals.extend([a, -a]);
        }
        vals.extend([b, -b]);
    }
    vals.extend((0..30).map(|k: i64| k.wrapping_mul(-7_046_029_254_386_353_131) >> 14));
    // multiples of 49 and 12345 whose product by the rounded reciprocal lands just short of the
    // quotient (found by search), which a division by a reciprocal would floor one short
    vals.extend([
        14_175_832_346_523 * 49,
        -14_444_366_568_992 * 49,
        -24_829_824_410 * 12_345,
    ]);
    let a: Array1<i64> = vals.iter().flat_map(|&x| vals.iter().map(move |_| x)).collect();
    let b: Array1<i64> = vals.iter().flat_map(|_| vals.iter().copied()).collect();
    for expr in [
        "a // b",
        "a % b",
        "fmod(a, b)",
        "a // 7 + a % -3",
        "fmod(a, 12345)",
        "a // 49",
        "a % 49",
        "fmod(a, 49)",
        "a // 12345",
        "a % -12345",
        "a // 64 + a % 64 + fmod(a, 64)",
    ] {
        let note = check(expr, &[("a", (&a).into()), ("b", (&b).into())]).unwrap();
        assert!(note.starts_with("compiled"), "{expr}: {note}");
    }
}

#[test]
fn splat_broadcast_and_strided_inputs() {
    for (ta, tb) in [
        ("int32", "int32"),
        ("int64", "int64"),
        ("int32", "int64"),
        ("bool", "int32"),
    ] {
        let a2 = array(ta, &[5, 7], 0);
        let row = array(tb, &[7], 2);
        let col = array(tb, &[5, 1], 4);
        let one = array(tb, &[1], 3);
        for expr in ["a * b + 3", "where(a > b, a, b) // 3", "(a ^ b) >> 1"] {
            check(expr, &[("a", a2.arg()), ("b", row.arg())]);
            check(expr, &[("a", a2.arg()), ("b", col.arg())]);
            check(expr, &[("a", a2.arg()), ("b", one.arg())]);
        }
    }
    // strided views: every other element, and a transposed matrix
    let base: Array1<i32> = (0..40).map(|i| i * 7919 - 130_000).collect();
    let other: Array2<i64> = Array2::from_shape_fn((5, 8), |(i, j)| (i as i64 - 2) << (j * 8));
    let strided = base.slice(s![..;2]);
    let t = other.t();
    let cols: Array2<i32> = Array2::from_shape_fn((8, 5), |(i, j)| (i * 5 + j) as i32);
    check("a * 3 + 1", &[("a", strided.into())]);
    check("(a + b) % 5", &[("a", t.into()), ("b", (&cols).into())]);
}

#[test]
fn integer_reductions_whole_arrays_and_trailing_axes() {
    for ty in ["bool", "int32", "int64"] {
        for n in [0usize, 1, 3, 4, 7, 64, 1001] {
            let a = array(ty, &[n], 0);
            let p = array("bool", &[n], 2);
            for expr in [
                "sum(a)",
                "prod(a)",
                "min(a)",
                "max(a)",
                "any(a)",
                "all(a)",
                "sum(where(p, a, 0))",
                "sum(a * 3)",
                "argmin(a)",
                "argmax(a)",
                "argmax(where(p, a, 0))",
            ] {
                let note = check(expr, &[("a", a.arg()), ("p", p.arg())]);
                if let Some(note) = note
                    && n > 0
                {
                    assert!(note.starts_with("compiled"), "{expr} of {ty}: {note}");
                }
            }
        }
        for shape in [[3usize, 5], [4, 1], [2, 0], [6, 9], [1, 7], [0, 3]] {
            let a = array(ty, &shape, 1);
            for expr in [
                "sum(a, axis=1)",
                "max(a, axis=1)",
                "min(a, axis=-1)",
                "any(a, axis=1)",
                "sum(a, axis=0)",
                "prod(a, axis=1)",
                "prod(a, axis=0)",
                "min(a, axis=0)",
                "max(a * 3, axis=0)",
                "all(a, axis=0)",
                "any(a, axis=0)",
                "argmin(a, axis=1)",
                "argmax(a * 3, axis=-1)",
            ] {
                let note = check(expr, &[("a", a.arg())]);
                if let Some(note) = note {
                    assert!(note.starts_with("compiled"), "{expr} of {ty}: {note}");
                }
            }
        }
        let a3 = array(ty, &[3, 4, 5], 2);
        for expr in [
            "sum(a, axis=(0, 1))",
            "max(a, axis=(1, 2))",
            "min(a, axis=0)",
            "sum(a, axis=(0, 2))",
            "argmax(a, axis=0)",
            "argmin(a, axis=(1, 2))",
        ] {
            check(expr, &[("a", a3.arg())]);
        }
    }
    // kernels mixing 32- and 64-bit values (2 lanes, int32 half-filled)
    for n in [1usize, 2, 3, 5, 8, 33] {
        let (i, k, f) = (
            array("int32", &[n], 0),
            array("int64", &[n], 3),
            array("float64", &[n], 1),
        );
        let inputs = [("i", i.arg()), ("k", k.arg()), ("f", f.arg())];
        for expr in [
            "sum(i + k)",
            "max(int32(k))",
            "min(int32(f) // 3)",
            "any(i > k)",
            "all(i != k)",
            "prod(int32(k) | 1)",
            "sum(where(f > 0, i, 0))",
            "max(where(i > 0, k, i))",
            "where(f > 1, i, int32(k)) * 3",
            "float32(i) + float32(f)",
        ] {
            let note = check(expr, &inputs).unwrap();
            assert!(note.contains("2 lanes"), "{expr}: {note}");
        }
    }
    // a start other than the identity runs on the interpreter, with the same result
    let a = array("int32", &[9], 0);
    check("sum(a, initial=5)", &[("a", a.arg())]);
    check("max(a, initial=3)", &[("a", a.arg())]);
}

/// Reductions of bool and integer values over every axis and pair of axes (leading, middle,
/// trailing), of C-contiguous inputs, strided views read in place and broadcast inputs: compiled by
/// the main code generator (int64 accumulators), bit for bit the interpreter's.
#[test]
fn integer_reductions_over_every_axis_are_compiled() {
    let ops = ["sum", "prod", "min", "max", "any", "all"];
    for ty in ["bool", "int32", "int64"] {
        for shape in [[8usize, 9, 10], [3, 1, 4], [2, 0, 3], [1, 1, 1]] {
            let a = array(ty, &shape, 3);
            let b = array("int64", &[shape[1], 1], 1);
            let Arr::I64(bb) = &b else { unreachable!() };
            let mut exprs = Vec::new();
            for op in ops {
                for axes in ["0", "1", "2", "(0, 1)", "(0, 2)", "(1, 2)"] {
                    exprs.push(format!("{op}(a, axis={axes})"));
                }
                exprs.push(format!("{op}(a)"));
            }
            for axis in 0..3 {
                exprs.push(format!("argmin(a, axis={axis})"));
                exprs.push(format!("argmax(a * 3, axis={axis})"));
                exprs.push(format!("sum(a + b, axis={axis})"));
                exprs.push(format!("max(where(a > 0, b, a), axis={axis})"));
            }
            for expr in &exprs {
                let inputs = [("a", a.arg()), ("b", bb.into())];
                if let Some(note) = check(expr, &inputs)
                    && !shape.contains(&0)
                {
                    assert!(is_compiled(&note), "{expr} of {ty} {shape:?}: {note}");
                }
            }
            // strided views read in place: a reversed middle axis, a transposed array
            let views: Vec<ArrayD<i64>> = match &a {
                Arr::I64(x) => vec![x.slice(s![.., ..;-1, ..]).to_owned().into_dyn(), x.t().to_owned()],
                _ => Vec::new(),
            };
            if let Arr::I64(x) = &a {
                let rev = x.slice(s![.., ..;-1, ..]).into_dyn();
                let tr = x.t().into_dyn();
                for (v, owned) in [rev, tr].iter().zip(&views) {
                    for expr in [
                        "sum(a, axis=1)",
                        "min(a, axis=0)",
                        "argmax(a, axis=2)",
                        "prod(a, axis=(0, 2))",
                    ] {
                        let got = FusedRunner::compile_text(expr).unwrap().run(&[("a", v.into())]);
                        let want = FusedRunner::compile_text(expr)
                            .unwrap()
                            .with_backend(kiln::backend_by_name("interp").unwrap())
                            .run(&[("a", owned.into())]);
                        match (got, want) {
                            (Ok(g), Ok(w)) => assert!(same(&g, &w), "{expr} of a view {:?}", v.strides()),
                            (Err(_), Err(_)) => {}
                            (g, w) => panic!("{expr} of a view: {g:?} against {w:?}"),
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn large_maps_and_sums_cut_into_work_units_agree() {
    // long enough for several work units on threads: each unit's range and partial exact
    let n: usize = 600_003;
    let i: Array1<i32> = (0..n as i32)
        .map(|k| k.wrapping_mul(2_654_435_761u32 as i32))
        .collect();
    let j: Array1<i32> = (0..n as i32).map(|k| k % 1000 - 500).collect();
    let p: Array1<bool> = (0..n).map(|k| k % 3 == 0).collect();
    let k64: Array1<i64> = i.mapv(|v| (v as i64) << 20);
    check("(i * 3 + j) % 7", &[("i", (&i).into()), ("j", (&j).into())]);
    check("sum(where(p, i, 0))", &[("p", (&p).into()), ("i", (&i).into())]);
    check("sum(where(p, k, 0))", &[("p", (&p).into()), ("k", (&k64).into())]);
    check("prod(j | 1)", &[("j", (&j).into())]);
    check("max(k // (i | 1))", &[("k", (&k64).into()), ("i", (&i).into())]);
    check("argmax(i)", &[("i", (&i).into())]);
    check("argmin(j)", &[("j", (&j).into())]);
    check("argmax(j)", &[("j", (&j).into())]);
    // on three threads (work units run on a pool), against the interpreter
    let m = Array2::from_shape_fn((1000, 601), |(r, c)| {
        ((r * 601 + c) as i32).wrapping_mul(-1_640_531_527)
    });
    for (expr, inputs) in [
        ("(i * 3 + j) % 7", vec![("i", (&i).into()), ("j", (&j).into())]),
        (
            "sum(where(p, k, 0))",
            vec![("p", (&p).into()), ("k", (&k64).into())],
        ),
        ("argmin(j)", vec![("j", (&j).into())]),
        ("cumsum(m, axis=1)", vec![("m", (&m).into())]),
        ("sum(m, axis=0)", vec![("m", (&m).into())]),
        ("max(m, axis=1)", vec![("m", (&m).into())]),
    ] {
        let run = |b: &str, threads: usize| {
            FusedRunner::compile_text(expr)
                .unwrap()
                .with_backend(kiln::backend_by_name(b).unwrap())
                .with_threads(threads)
                .run(&inputs)
                .unwrap()
        };
        let (want, got) = (run("interp", 1), run("jit", 3));
        assert!(same(&want, &got), "{expr} on 3 threads");
    }
}

#[test]
fn integer_scans_on_every_axis() {
    for ty in ["bool", "int32", "int64"] {
        for shape in [
            vec![0usize],
            vec![1],
            vec![7],
            vec![3, 5],
            vec![2, 3, 4],
            vec![4, 0],
        ] {
            let a = array(ty, &shape, 2);
            let rank = shape.len() as i64;
            for op in ["cumsum", "cumprod", "cummax", "cummin"] {
                let mut exprs = vec![format!("{op}(a)"), format!("{op}(a * 3)")];
                for axis in -rank..rank {
                    exprs.push(format!("{op}(a, axis={axis})"));
                    exprs.push(format!("{op}(a, axis={axis}, exclusive=True)"));
                    exprs.push(format!("{op}(a, axis={axis}, reverse=True)"));
                    exprs.push(format!("{op}(a, axis={axis}, exclusive=1, reverse=1)"));
                }
                exprs.push(format!("{op}(a, exclusive=True, reverse=True)"));
                for expr in exprs {
                    let note = check(&expr, &[("a", a.arg())]);
                    if let Some(note) = note {
                        assert!(note.starts_with("compiled"), "{expr} of {ty}: {note}");
                    }
                }
            }
        }
    }
    // initial values: compiled where the accumulator holds them, else the interpreter's error
    for ty in ["bool", "int32", "int64"] {
        let a = array(ty, &[9], 0);
        for expr in [
            "cumsum(a, initial=5)",
            "cumprod(a, initial=-2, exclusive=True)",
            "cummax(a, initial=3)",
            "cummin(a, initial=0, reverse=True)",
            "cummax(a, initial=1)",
            "cumsum(a, initial=2.5)",
            "cummax(a, initial=3000000000)",
        ] {
            check(expr, &[("a", a.arg())]);
        }
    }
}

#[test]
fn prepared_handles_of_integer_inputs_run_the_compiled_kernel() {
    let i: Array1<i32> = (0..1000).map(|k| k * 7919 - 3_000_000).collect();
    let j: Array1<i32> = (0..1000).map(|k| k % 13 - 6).collect();
    for expr in ["(i * 3 + j) % 7", "sum(where(j > 0, i, 0))", "cumsum(i)"] {
        let runner = FusedRunner::compile_text(expr).unwrap();
        let h = runner
            .prepared(&[("i", (&i).into()), ("j", (&j).into())])
            .unwrap();
        let got = h.run(&[(&i).into(), (&j).into()]).unwrap();
        let want = FusedRunner::compile_text(expr)
            .unwrap()
            .with_backend(kiln::interpreter())
            .run(&[("i", (&i).into()), ("j", (&j).into())])
            .unwrap();
        assert!(same(&got, &want), "{expr}: {got:?} {want:?}");
    }
}

#[test]
fn float_reductions_of_typed_values_are_compiled() {
    // mean of integers, sums of float expressions of integers: the float JIT reading the integers
    // converted where it reads them (`stored:`), or, where a value is computed in integers first
    // (`where(i > 0, i, 0)`), the values by the typed JIT and the sum by the float JIT (reassociated:
    // a relative bound); min, max and argmin/argmax exactly
    let close = |a: &Output, b: &Output| match (a, b) {
        (Output::F64(x), Output::F64(y)) => x
            .iter()
            .zip(y)
            .all(|(p, q)| (p.is_nan() && q.is_nan()) || (p - q).abs() <= 1e-12 * p.abs().max(1.0)),
        (Output::F32(x), Output::F32(y)) => x
            .iter()
            .zip(y)
            .all(|(p, q)| (p.is_nan() && q.is_nan()) || (p - q).abs() <= 1e-5 * p.abs().max(1.0)),
        _ => same(a, b),
    };
    for n in [1usize, 3, 4, 5, 100, 4097] {
        let i: Array1<i32> = (0..n as i32)
            .map(|k| k.wrapping_mul(7919) % 100_003 - 50_000)
            .collect();
        let k: Array1<i64> = i.mapv(|v| v as i64 * 1_000_003);
        for expr in [
            "mean(i)",
            "sum(i * 0.5)",
            "var(i)",
            "std(k)",
            "min(i / 3)",
            "max(k * 0.25)",
            "argmax(i * 1.5)",
            "argmin(float32(i))",
            "sum(float32(i), axis=0)",
            "mean(where(i > 0, i, 0))",
        ] {
            let inputs = [("i", (&i).into()), ("k", (&k).into())];
            let run = |b: &str| {
                FusedRunner::compile_text(expr)
                    .unwrap()
                    .with_backend(kiln::backend_by_name(b).unwrap())
                    .run(&inputs)
                    .unwrap()
            };
            let want = run("interp");
            for b in ["jit", "jit-scalar"] {
                let got = run(b);
                assert!(close(&got, &want), "{expr} at n = {n} on {b}: {got:?} {want:?}");
            }
            let note = all_notes(expr, &inputs);
            assert!(is_compiled(&note), "{expr}: {note}");
        }
    }
}

#[test]
fn libm_functions_of_typed_values_are_compiled() {
    // transcendentals and float `// % **` of integer values: in a typed kernel (`i ** 0.5` of a
    // value computed in integers, `tanh(f) + i`) per-lane calls of the same host functions the
    // interpreter's `eval` is, so bit for bit; where NumPy casts the integers first (`sin(i)`,
    // `exp(i * 0.001)`) a float kernel reading them converted, its functions within their bounds
    // (equal to the interpreter's on these inputs)
    for n in [1usize, 3, 4, 5, 9, 33] {
        let (i, k) = (array("int32", &[n], 0), array("int64", &[n], 2));
        let f = array("float32", &[n], 1);
        let inputs = [("i", i.arg()), ("k", k.arg()), ("f", f.arg())];
        for expr in [
            "sin(i)",
            "exp(i * 0.001)",
            "i ** 0.5",
            "float32(i) ** 2.5",
            "arctan2(i, k)",
            "(i * 0.5) % 3.0",
            "(k * 1.5) // 2.5",
            "fmod(i * 0.25, -1.5)",
            "log1p(abs(k))",
            "1 / (1 + exp(-float32(i)))",
            "tanh(f) + i",
            "where(i > 0, cos(f), 1 / f)",
            "sign(f * i)",
            "sign(i * 0.0) + sign(k - 1.5)",
            "copysign(i, f)",
            "fmax(f, i) + fmin(k * 0.5, f)",
            "deg2rad(i) + rad2deg(float32(k))",
        ] {
            let note = check(expr, &inputs).unwrap();
            assert!(is_compiled(&note), "{expr}: {note}");
        }
    }
}

#[test]
fn contractions_over_integer_inputs_read_their_indices() {
    // named indices (`x[i]`, `index=`) are int64 values of the point's position along an axis
    for n in [1usize, 2, 3, 4, 7, 33] {
        let x: Array1<i32> = (0..n as i32).map(|v| v * 7 - 11).collect();
        let p: Array1<bool> = (0..n).map(|v| v % 3 == 0).collect();
        for expr in [
            "sum(where(i <= o, x[i], 0), index=(i, o), axis=i)",
            "sum(x[i] * (i <= o), index=(i, o), axis=i)",
            "max(where(p[i], x[i] * o, -5), index=(i, o), axis=i)",
        ] {
            let inputs = [("x", (&x).into()), ("p", (&p).into())];
            let got = check(expr, &inputs);
            if let Some(note) = got {
                assert!(note.contains("compiled"), "{expr}: {note}");
            }
        }
    }
}

#[test]
fn splat_inputs_in_every_kind_of_kernel() {
    // a one-element input beside a matrix: maps, reductions over rows, columns and everything,
    // scans and arg reductions, at every lane count
    for (ta, tb) in [
        ("int32", "int32"),
        ("int64", "int64"),
        ("int32", "int64"),
        ("bool", "int32"),
        ("int64", "bool"),
    ] {
        for shape in [[3usize, 5], [5, 9], [1, 4]] {
            let a = array(ta, &shape, 1);
            let b = array(tb, &[1], 2);
            for expr in [
                "a * b + 1",
                "sum(a * b, axis=0)",
                "sum(a + b, axis=1)",
                "max(a - b, axis=0)",
                "any(a > b, axis=0)",
                "cumsum(a - b, axis=0)",
                "cummax(a | b, axis=1)",
                "argmax(a ^ b, axis=1)",
                "min(a * b)",
                "prod(where(a > b, 1, 2))",
            ] {
                let note = check(expr, &[("a", a.arg()), ("b", b.arg())]);
                if let Some(note) = note {
                    assert!(note.starts_with("compiled"), "{expr} of {ta}, {tb}: {note}");
                }
            }
        }
    }
}

/// Bool results of kernels of 2 lanes (float64, int64 values) and 4 (float32, int32), whose
/// unrolled steps store their bools packed, 8 or 16 at once (`Gen::store_bools`): every length
/// around the unrolled step and its tail, alone and beside outputs of other types, in place of
/// an input, each against the interpreter.
#[test]
fn bool_results_of_narrow_lanes_store_packed() {
    for n in (0usize..=40).chain([63, 64, 65, 1000]) {
        for ty in ["float64", "float32", "int64", "int32"] {
            let (x, y) = (array(ty, &[n], 0), array(ty, &[n], 3));
            let inputs = [("x", x.arg()), ("y", y.arg())];
            // (the last: 32-bit comparisons beside a float64 result, in 2 lanes)
            for expr in [
                "x > y",
                "x != x",
                "x > y; x + y",
                "x * 2; x <= y; y > 0",
                "x > y; float64(x) * 0.5",
            ] {
                let want = run_many_on(expr, "interp", &inputs);
                for b in ["jit", "jit-scalar"] {
                    match (&want, run_many_on(expr, b, &inputs)) {
                        (Ok(want), Ok(got)) => {
                            assert_eq!(got.len(), want.len());
                            for (g, w) in got.iter().zip(want) {
                                assert!(same(g, w), "{expr} of {ty}[{n}] on {b}: {g:?} {w:?}");
                            }
                        }
                        (Err(_), Err(_)) => {}
                        (w, g) => panic!("{expr} of {ty}[{n}] on {b}: interp {w:?}, {b} {g:?}"),
                    }
                }
            }
        }
    }
    // into a bool array given, C-contiguous, at lengths around the packed store
    for n in [7usize, 8, 9, 16, 17, 100] {
        let (x, y) = (array("float64", &[n], 0), array("float64", &[n], 3));
        let runner = FusedRunner::compile_text("x > y").unwrap();
        let want = runner
            .clone()
            .with_backend(kiln::backend_by_name("interp").unwrap())
            .run(&[("x", x.arg()), ("y", y.arg())])
            .unwrap();
        let mut out = ndarray::ArrayD::<bool>::from_elem(vec![n], true);
        runner
            .run_into(&[("x", x.arg()), ("y", y.arg())], out.view_mut())
            .unwrap();
        assert!(same(&Output::Bool(out), &want), "x > y into bool[{n}]");
    }
}

#[test]
fn several_typed_outputs_compile_as_one_kernel() {
    for n in [1usize, 3, 4, 9, 1000] {
        let (i, j) = (array("int32", &[n], 0), array("int32", &[n], 5));
        let k = array("int64", &[n], 2);
        let inputs = [("i", i.arg()), ("j", j.arg()), ("k", k.arg())];
        for expr in [
            "i * 3 + j; i // j; i > j",
            "sum(i); k * i; float64(i) * 0.5",
            "i; k",
            "i > j; i + 1; k - i; int32(k) ^ i",
            "max(k); i < 0; k // 3",
            // int32 min, max and sum in 4 lanes beside 32-bit maps
            "max(i); i * 3 + j; i < 0",
            "min(i - j); j // 3",
            "sum(i); i * 3 + j",
        ] {
            let want = run_many_on(expr, "interp", &inputs).unwrap();
            for b in ["jit", "jit-scalar"] {
                let got = run_many_on(expr, b, &inputs).unwrap();
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(&want) {
                    assert!(same(g, w), "{expr} on {b}: {g:?} {w:?}");
                }
            }
            let note = all_notes(expr, &inputs);
            assert!(
                note.contains("compiled: typed kernel") && !note.contains("interpreted"),
                "{expr}: {note}"
            );
            // every output in one pass, each stored in its own type
            assert!(note.contains("in one pass"), "{expr}: {note}");
        }
    }
}

#[test]
fn integer_sibling_reductions_in_one_pass() {
    // sibling reductions of bool and integer values: one compiled pass of int64 accumulators, one
    // per component, each result of its reduction's type, against the interpreter (each reduction
    // alone); the extremes of int64 wrap in sums as NumPy's
    let exprs = [
        "sum(i); min(i); max(i)",
        "sum(i * 2) + max(i)",
        "prod(i); sum(i)",
        "min(i) - max(i); sum(i)",
        "sum(i, axis=1); max(i, axis=1); min(i, axis=1)",
        "sum(i, axis=0); min(i, axis=0)",
        "any(i); all(i)",
        // min and max alone: int32 values fold i32x4 accumulators
        "min(i); max(i)",
        "max(i, axis=1) - min(i, axis=1)",
        "(i - min(i)) * (max(i) - min(i))",
    ];
    for ty in ["bool", "int32", "int64"] {
        for shape in [
            vec![1usize, 1],
            vec![3, 5],
            vec![7, 9],
            vec![64, 33],
            vec![1000, 601],
        ] {
            let a = array(ty, &shape, 1);
            let inputs = [("i", a.arg())];
            for expr in exprs {
                let run = |b: &str, threads: usize| runner_on(expr, b, threads).run_many(&inputs);
                let want = run("interp", 1);
                for (b, threads) in [("jit", 1), ("jit", 3), ("jit-scalar", 1)] {
                    let got = run(b, threads);
                    match (&want, &got) {
                        (Ok(w), Ok(g)) => {
                            assert_eq!(w.len(), g.len());
                            for (w, g) in w.iter().zip(g) {
                                assert!(
                                    same(w, g),
                                    "{expr} of {ty} {shape:?} on {b}/{threads}: {g:?} {w:?}"
                                );
                            }
                        }
                        // a type error (`-` of bools) is both backends'
                        (Err(_), Err(_)) => {}
                        _ => panic!("{expr} of {ty} {shape:?} on {b}: {got:?} vs {want:?}"),
                    }
                }
            }
        }
    }
    // `kiln explain`: the siblings of a whole array and of trailing axes are one compiled pass
    let a = array("int64", &[8, 9, 10], 0);
    for expr in [
        "sum(i); min(i); max(i)",
        "sum(i * 2) + max(i)",
        "sum(i, axis=2); max(i, axis=2)",
    ] {
        let note = all_notes(expr, &[("i", a.arg())]);
        assert!(
            note.contains("sibling reductions [")
                && note.contains("in one pass")
                && !note.contains("interpreted"),
            "{expr}: {note}"
        );
    }
    // int32 min and max siblings in 4 lanes, int32's extremes among the values
    let e = array("int32", &[8, 9, 10], 0);
    let x: ArrayD<i32> = from(
        720,
        |k| match k % 13 {
            4 => i32::MIN,
            9 => i32::MAX,
            _ => (k as i32).wrapping_mul(-1_640_531_527),
        },
        &[8, 9, 10],
    );
    for expr in ["min(i); max(i)", "max(i, axis=2) - min(i, axis=2)"] {
        for inputs in [[("i", e.arg())], [("i", (&x).into())]] {
            let note = all_notes(expr, &inputs);
            assert!(
                note.contains("of int32 values in one pass (i32x4 vector accumulators)")
                    && note.contains("(4 lanes)"),
                "{expr}: {note}"
            );
            for threads in [1, 4] {
                let got = runner_on(expr, "jit", threads).run_many(&inputs).unwrap();
                let want = runner_on(expr, "interp", 1).run_many(&inputs).unwrap();
                for (g, w) in got.iter().zip(&want) {
                    assert!(same(g, w), "{expr} ({threads} threads): {g:?} {w:?}");
                }
            }
        }
    }
}

#[test]
fn typed_float_scans_starts_and_empty_extremes_compile() {
    // what the typed interpreter ran before: scans of float values in a typed kernel (a float
    // state, as a float kernel's), reductions from an `initial`, min / max over nothing
    let cases: &[(&str, &[usize])] = &[
        ("cumsum(where(i % 3 == 0, x, 0.5))", &[7, 9]),
        ("cumsum(where(i % 3 == 0, x, 0.5), axis=0)", &[7, 9]),
        ("cumprod(where(i > 0, x, 1.0), axis=1)", &[5, 33]),
        ("cummax(float32(j) * y, axis=0)", &[9, 7]),
        ("cummin(float32(j) - y, axis=1)", &[3, 17]),
        // float32 values beside int64 ones: scanned in float64 lanes
        ("cumsum(where(i > 3, y, 1.5))", &[7, 9]),
        ("cumprod(where(i % 3 == 0, y, 1), axis=1)", &[5, 33]),
        ("cummax(where(i > 0, y, -1), axis=0)", &[9, 7]),
        ("cummin(where(i > 0, y, 2), axis=1)", &[1000, 61]),
        ("sum(i, initial=5)", &[7, 9]),
        ("sum(i, axis=1, initial=-3)", &[7, 9]),
        ("prod(j, axis=0, initial=2)", &[7, 9]),
        ("min(i, axis=1, initial=3)", &[7, 9]),
        ("max(j, initial=-1)", &[1000, 601]),
        ("sum(i, initial=5)", &[1000, 601]),
        ("max(i, axis=1, initial=3)", &[4, 0]),
        ("min(j, axis=0)", &[0, 3]),
        ("max(i)", &[0, 3]),
        ("sum(i, initial=0.5)", &[3, 3]),
        ("max(j, initial=1e10)", &[3, 3]),
    ];
    for &(expr, shape) in cases {
        let (i, j) = (array("int64", shape, 0), array("int32", shape, 3));
        let (x, y) = (array("float64", shape, 1), array("float32", shape, 2));
        let inputs = [("i", i.arg()), ("j", j.arg()), ("x", x.arg()), ("y", y.arg())];
        let runner = FusedRunner::compile_text(expr).unwrap();
        let names = runner.input_names();
        let used: Vec<(&str, ArrayArg<'_>)> = inputs
            .iter()
            .filter(|(n, _)| names.iter().any(|m| m == n))
            .map(|(n, a)| (*n, a.reborrow()))
            .collect();
        let run = |b: &str, threads: usize| runner_on(expr, b, threads).run(&used);
        let want = run("interp", 1);
        for (b, threads) in [("jit", 1), ("jit", 3), ("jit-scalar", 1)] {
            match (&want, run(b, threads)) {
                (Ok(w), Ok(g)) => assert!(same(w, &g), "{expr} {shape:?} on {b}/{threads}: {g:?} {w:?}"),
                // the errors of NumPy (an empty max, an initial the accumulator does not hold)
                (Err(w), Err(g)) => assert_eq!(w.to_string(), g.to_string(), "{expr} {shape:?}"),
                (w, g) => panic!("{expr} {shape:?} on {b}: {g:?} vs {w:?}"),
            }
        }
        let note = all_notes(expr, &used);
        assert!(
            note.contains("compiled: typed kernel") && !note.contains("interpreted"),
            "{expr}: {note}"
        );
    }
}

/// The runner of `expr` on the backend named `b` with `threads` threads.
/// The extremes, `any` and `all` of bool and int32 values that the wide folds read at their own
/// addresses, decided late: a bool row of 3000 points false but for one true (or true but for one
/// false) at its front, on either side of a 2048-point block's edge and at its end; rows read
/// reversed (a negative outer stride) and from an offset (a slice), alone and as sibling
/// reductions, whole arrays and rows; against the interpreter on one and three threads.
#[test]
fn bool_and_int32_extremes_decided_late() {
    let exprs = [
        "any(b); all(b)",
        "min(b); max(b)",
        "argmax(b)",
        "argmin(b)",
        "any(b, axis=1); all(b, axis=1)",
        "argmax(b, axis=1)",
        "argmin(b, axis=1)",
        "max(b, axis=1)",
        "min(j); max(j)",
        "argmax(j)",
        "argmin(j, axis=1)",
        "max(j, axis=1) - min(j, axis=1)",
    ];
    let (rows, cols) = (4usize, 3000usize);
    for at in [0usize, 2047, 2048, 2049, cols - 1] {
        for base in [false, true] {
            // row r holds its odd point at `at` (the last row: none)
            let b = Array2::from_shape_fn((rows, cols), |(r, c)| (c == at && r + 1 < rows) != base);
            let j = Array2::from_shape_fn((rows, cols), |(r, c)| {
                let v = ((r * cols + c) as i32).wrapping_mul(-1_640_531_527) >> 4;
                if c == at { i32::MAX - r as i32 } else { v }
            });
            for view in 0..3 {
                let (bv, jv) = match view {
                    0 => (b.view(), j.view()),
                    1 => (b.slice(s![..;-1, ..]), j.slice(s![..;-1, ..])),
                    _ => (b.slice(s![1.., 3..]), j.slice(s![1.., 3..])),
                };
                let inputs = [("b", ArrayArg::from(bv)), ("j", ArrayArg::from(jv))];
                for expr in exprs {
                    let run = |b: &str, threads: usize| runner_on(expr, b, threads).run_many(&inputs);
                    let want = run("interp", 1).unwrap();
                    for (backend, threads) in [("jit", 1), ("jit", 3), ("jit-scalar", 1)] {
                        let got = run(backend, threads).unwrap();
                        let what = format!("{expr} at {at}, base {base}, view {view}, {backend}/{threads}");
                        assert_eq!(want.len(), got.len(), "{what}");
                        for (w, g) in want.iter().zip(&got) {
                            assert!(same(w, g), "{what}: {g:?} {w:?}");
                        }
                    }
                }
            }
        }
    }
}

/// A float32 input beside a float64 one that is only compared keeps NumPy's float32 result
/// (`a * (b > 0)`), alone and beside other results (the fuzz finding of 2026-12-07: the float path
/// gave float64, the several results' typed code float32), on every backend and the same values;
/// `a + b` stays float64.
#[test]
fn float32_beside_a_compared_float64_keeps_its_type() {
    let a = Array1::from(vec![1.5f32, -2.0, 3.25, f32::NAN, 0.1, -0.0, 7.0, 1e30]);
    let b = Array1::from(vec![1.0f64, -1.0, 0.5, 2.0, -3.0, 0.0, f64::NAN, 5.0]);
    let inputs = [("a", (&a).into()), ("b", (&b).into())];
    let want: Array1<f32> = a
        .iter()
        .zip(&b)
        .map(|(&x, &y)| x * f32::from(u8::from(y > 0.0)))
        .collect();
    for expr in ["a * (b > 0)", "a * (b > 0); b > 0; a + b"] {
        for backend in ["interp", "jit", "jit-scalar"] {
            let got = runner_on(expr, backend, 1).run_many(&inputs).unwrap();
            let what = format!("{expr} on {backend}: {got:?}");
            assert!(same(&got[0], &Output::F32(want.clone().into_dyn())), "{what}");
            if let [_, cmp, sum] = &got[..] {
                assert!(matches!(cmp, Output::Bool(_)), "{what}");
                assert!(matches!(sum, Output::F64(_)), "{what}");
            }
        }
    }
    let sum = runner_on("a + b", "jit", 1).run_many(&inputs).unwrap();
    assert!(matches!(sum[..], [Output::F64(_)]), "{sum:?}");
}

fn runner_on(expr: &str, b: &str, threads: usize) -> FusedRunner {
    FusedRunner::compile_text(expr)
        .unwrap()
        .with_backend(kiln::backend_by_name(b).unwrap())
        .with_threads(threads)
}

/// Selects with a branch of zero bits (`where(b, x, 0)`, one `and` with the mask where a select
/// takes three), and bool inputs loaded as lane masks (their bytes broadcast, each lane's bit
/// tested), at every length from 0 to 21 (tails of every size in 2- and 4-lane kernels), against
/// the interpreter bit for bit; -0.0 is no branch of zero bits and keeps its sign.
#[test]
fn selects_of_a_zero_branch_and_bool_masks() {
    let exprs = [
        "where(b, x, 0.0)",
        "where(b, 0.0, x)",
        "where(b, x, -0.0)",
        "where(b, -0.0, x)",
        "where(b, i, 0)",
        "where(b, 0, i)",
        "where(b, j, 0)",
        "where(b, 0, j)",
        "where(b, f, 0.0)",
        "where(b, -0.0, f)",
        "sum(where(b, i, 0))",
        "sum(where(b, j, 0))",
        "where(x > 0, x, 0.0)",
        "where(x > 0, 0.0, x)",
        "b & ~c",
        "where(c, b, b & c)",
    ];
    for n in 0..=21 {
        let (b, c) = (array("bool", &[n], 0), array("bool", &[n], 3));
        let (x, f) = (array("float64", &[n], 1), array("float32", &[n], 2));
        let (i, j) = (array("int64", &[n], 4), array("int32", &[n], 5));
        let inputs = [
            ("b", b.arg()),
            ("c", c.arg()),
            ("x", x.arg()),
            ("f", f.arg()),
            ("i", i.arg()),
            ("j", j.arg()),
        ];
        for expr in exprs {
            let note = check(expr, &inputs).unwrap_or_else(|| panic!("{expr} (n = {n}) ran"));
            assert!(is_compiled(&note), "{expr} (n = {n}): {note}");
        }
    }
}

/// A float map with a bool result (`x > 0.5`) compiles as a typed kernel, which writes each bool
/// as a byte (the float path wrote 1 / 0 in the dtype, then typed it in a second pass), after the
/// float path's strength rewrite (`x**2` as `x*x`, NumPy's fast path): against the interpreter at
/// every length from 0 to 21, over the edge values (NaN, infinities, -0.0).
#[test]
fn float_maps_with_a_bool_result_write_bytes() {
    let exprs = [
        "x > 0.5",
        "x**2 >= 2.25",
        "(x > 0) | (x < -1)",
        "~(x == x)",
        "x != x * 1",
        "f <= 2.5",
        "(f > 0) & (f * f < 1e30)",
        "(f > 0) & (x < 1)",
        "x + i > 3",
        "~b",
        "b | (x > 2)",
    ];
    for n in 0..=21 {
        let (x, f) = (array("float64", &[n], 1), array("float32", &[n], 2));
        let (i, b) = (array("int64", &[n], 3), array("bool", &[n], 4));
        let inputs = [("x", x.arg()), ("f", f.arg()), ("i", i.arg()), ("b", b.arg())];
        for expr in exprs {
            let note = check(expr, &inputs).unwrap_or_else(|| panic!("{expr} (n = {n}) ran"));
            assert!(
                note.contains("compiled: typed kernel (a map with a bool result"),
                "{expr} (n = {n}): {note}"
            );
            // the float path's truth values (a float result: not typed), 1.0 where true
            let run = |e: &str| FusedRunner::compile_text(e).unwrap().run(&inputs).unwrap();
            let (Output::Bool(got), Output::F64(float)) =
                (run(expr), run(&format!("where({expr}, 1.0, 0.0)")))
            else {
                panic!("{expr}: a bool and a float64 result");
            };
            assert!(
                got.iter().zip(&float).all(|(&g, &w)| g == (w == 1.0)),
                "{expr} (n = {n}): {got:?} against the float path's {float:?}"
            );
        }
    }
    let x = array("float64", &[5], 0);
    let notes = all_notes("x**2 >= 2.25", &[("x", x.arg())]);
    assert!(notes.contains("strength: x**2 -> x*x"), "{notes}");
}

/// A map of bools alone runs 16 lanes (`i8x16` masks, 16 bytes loaded and stored at once; four
/// vectors an iteration): against the interpreter and the scalar code at every length from 0 to 70
/// (no vector, one, the unrolled iteration of 64, and tails of every size), over contiguous,
/// strided, reversed and broadcast inputs and a transposed matrix, and `explain` says so.
#[test]
fn maps_of_bools_alone_run_sixteen_lanes() {
    let exprs = [
        "~b",
        "b & ~c",
        "b ^ c",
        "b | c",
        "where(b, c, ~c)",
        "(b == c) | b",
        "b < c",
        "b >= c",
    ];
    for n in 0..=70 {
        let (b, c) = (array("bool", &[n], 0), array("bool", &[n], 3));
        let inputs = [("b", b.arg()), ("c", c.arg())];
        for expr in exprs {
            let note = check(expr, &inputs).unwrap_or_else(|| panic!("{expr} (n = {n}) ran"));
            assert!(note.contains("(16 lanes)"), "{expr} (n = {n}): {note}");
        }
    }
    let long = array("bool", &[90], 1);
    let Arr::Bool(long) = long else { unreachable!() };
    let (strided, reversed) = (long.slice(s![..;2]), long.slice(s![..45;-1]));
    let grid: ArrayD<bool> = from(35, |i| (i * 7) % 3 == 0, &[5, 7]);
    let (row, col) = (array("bool", &[7], 2), array("bool", &[5, 1], 4));
    let (one, col7) = (array("bool", &[1], 5), array("bool", &[7, 1], 6));
    for expr in exprs {
        check(
            expr,
            &[("b", strided.view().into()), ("c", reversed.view().into())],
        )
        .unwrap();
        check(expr, &[("b", grid.view().into()), ("c", row.arg())]).unwrap();
        check(expr, &[("b", grid.view().into()), ("c", col.arg())]).unwrap();
        check(expr, &[("b", grid.t().into()), ("c", col7.arg())]).unwrap();
        check(expr, &[("b", one.arg()), ("c", grid.view().into())]).unwrap();
    }
}

/// A trailing sum, `any`, `all`, max or min of bools alone takes the typed path (not the float
/// path's bools read as float64 lanes) and runs 16 lanes, each vector of masks folded at once:
/// against the interpreter and the scalar code at every length from 0 to 70, over strided,
/// reversed and broadcast inputs, the rows of a matrix and of its transpose, and `explain` says so;
/// a kept one (`axis=0`) keeps its lanes.
#[test]
fn reductions_of_bools_alone_run_sixteen_lanes() {
    let exprs = [
        "sum(b & c)",
        "sum(b ^ ~c)",
        "any(b & ~c)",
        "all(b | c)",
        "max(b & c)",
        "min(b | c)",
        "sum(~b)",
    ];
    for n in 0..=70 {
        let (b, c) = (array("bool", &[n], 0), array("bool", &[n], 3));
        let inputs = [("b", b.arg()), ("c", c.arg())];
        for expr in exprs {
            if n == 0 && (expr.starts_with("max") || expr.starts_with("min")) {
                continue;
            }
            let note = check(expr, &inputs).unwrap_or_else(|| panic!("{expr} (n = {n}) ran"));
            assert!(note.contains("typed kernel"), "{expr} (n = {n}): {note}");
            assert!(note.contains("(16 lanes)"), "{expr} (n = {n}): {note}");
        }
    }
    let long = array("bool", &[90], 1);
    let Arr::Bool(long) = long else { unreachable!() };
    let (strided, reversed) = (long.slice(s![..;2]), long.slice(s![..45;-1]));
    let grid: ArrayD<bool> = from(35 * 9, |i| (i * 7) % 3 == 0, &[5, 63]);
    let row = array("bool", &[63], 2);
    let col = array("bool", &[63, 1], 4);
    for expr in exprs {
        check(
            expr,
            &[("b", strided.view().into()), ("c", reversed.view().into())],
        )
        .unwrap();
        let rows = expr.replace(')', ", axis=1)");
        let note = check(&rows, &[("b", grid.view().into()), ("c", row.arg())]).unwrap();
        assert!(note.contains("(16 lanes)"), "{rows}: {note}");
        check(&rows, &[("b", grid.t().into()), ("c", col.arg())]).unwrap();
        let kept = expr.replace(')', ", axis=0)");
        let note = check(&kept, &[("b", grid.view().into()), ("c", row.arg())]).unwrap();
        assert!(!note.contains("(16 lanes)"), "{kept}: {note}");
    }
}

/// [`check`] of `expr` on `inputs` (the last kernel compiled, not interpreted), and the JIT's result
/// on 1 and 4 threads the interpreter's; `what` names the case in a failure.
fn compiled_on_threads(expr: &str, inputs: &[(&str, ArrayArg<'_>)], what: &str) {
    let note = check(expr, inputs).unwrap_or_else(|| panic!("{expr} ({what}) ran"));
    assert!(is_compiled(&note), "{expr} ({what}): {note}");
    for threads in [1, 4] {
        let got = runner_on(expr, "jit", threads).run(inputs).unwrap();
        let want = runner_on(expr, "interp", 1).run(inputs).unwrap();
        assert!(same(&got, &want), "{expr} ({what}, {threads} threads)");
    }
}

/// `any` and `all` stop reading a row once its result is decided (tested every 1024 points): the
/// same results as the interpreter's, whatever the row's length (below, at and past the stretch),
/// where its one deciding point lies (first, either side of a stretch's end, last, none), the input
/// type (bool, int64, float32, float64 through a comparison), the axes (whole arrays, cut into work
/// units, and rows of a matrix) and the thread count.
#[test]
fn any_and_all_stop_once_decided() {
    for n in [0usize, 1, 1023, 1024, 1025, 3000, 70_000, 200_003] {
        let mut at: Vec<Option<usize>> = vec![None];
        at.extend(
            [0, 1023, 1024, 2047, n / 2, n.wrapping_sub(1)]
                .into_iter()
                .filter(|&p| p < n)
                .map(Some),
        );
        for p in at {
            let one = |i: usize| Some(i) == p;
            let b: ArrayD<bool> = from(n, one, &[n]);
            let nb: ArrayD<bool> = from(n, |i| !one(i), &[n]);
            let x: ArrayD<f64> = from(n, |i| if one(i) { 2.0 } else { -(i as f64) }, &[n]);
            let f: ArrayD<f32> = from(n, |i| if one(i) { f32::NAN } else { 0.5 }, &[n]);
            let i64s: ArrayD<i64> = from(n, |i| if one(i) { 0 } else { i as i64 + 1 }, &[n]);
            let inputs = [
                ("b", (&b).into()),
                ("nb", (&nb).into()),
                ("x", (&x).into()),
                ("f", (&f).into()),
                ("i", (&i64s).into()),
            ];
            for expr in [
                "any(b)",
                "all(nb)",
                "any(x > 1)",
                "all(x < 1)",
                "any(f != f)",
                "all(i)",
                "any(i == 0)",
            ] {
                compiled_on_threads(expr, &inputs, &format!("n = {n}, at {p:?}"));
            }
        }
    }
    // rows of a matrix, each decided at its own point (or not at all)
    let (rows, cols) = (7, 5000);
    let m: ArrayD<bool> = from(
        rows * cols,
        |k| k % cols == (k / cols) * 997 % (cols + 1500),
        &[rows, cols],
    );
    for expr in ["any(m, axis=1)", "all(~m, axis=1)", "any(m, axis=0)", "any(m)"] {
        check(expr, &[("m", (&m).into())]).unwrap();
    }
}

/// argmin and argmax of rows of 64 points and more (of a plain read: one call of the routine of
/// wide/args.rs from 16 points; of a computed body: each block of 256 reduced to its extreme, the
/// point found afterwards): the interpreter's index wherever the extreme lies (first or last point, either
/// side of a block's end, in the tail after the last block), with ties (the first wins, -0.0 and
/// 0.0 equal), NaN (the first NaN wins), infinities and rows of -inf or +inf alone, over float64,
/// float32, int64, int32 and bool values (and int64 through a float body), whole arrays (cut into
/// work units) and rows of a matrix, with 1 and 4 threads.
#[test]
fn argmin_and_argmax_by_blocks() {
    for n in [
        16usize, 17, 40, 63, 64, 100, 255, 256, 257, 511, 512, 1000, 4099, 70_001,
    ] {
        let spots = [0, 1, 255, 256, 257, n / 2, n - 3, n - 1];
        for (k, &p) in spots.iter().enumerate() {
            // a smooth background, the extreme at p, a tie later, a NaN at another spot in some
            let q = spots[(k + 3) % spots.len()];
            let base = |i: usize| ((i * 37) % 101) as f64 - 50.0;
            let tie = |i: usize| i > p && i == (p + n / 3) % n;
            let x: ArrayD<f64> = from(n, |i| if i == p || tie(i) { 1e6 } else { base(i) }, &[n]);
            let xn: ArrayD<f64> = from(n, |i| if i == q { f64::NAN } else { x[[i]] }, &[n]);
            let f: ArrayD<f32> = from(n, |i| -(x[[i]] as f32), &[n]);
            let fnan: ArrayD<f32> = from(n, |i| xn[[i]] as f32, &[n]);
            let z: ArrayD<f64> = from(n, |i| if i % 2 == 0 { -0.0 } else { 0.0 }, &[n]);
            let inf: ArrayD<f64> = from(n, |_| f64::NEG_INFINITY, &[n]);
            let i64s: ArrayD<i64> = from(n, |i| x[[i]] as i64, &[n]);
            let i32s: ArrayD<i32> = from(n, |i| -(x[[i]] as i32), &[n]);
            let inputs = [
                ("x", (&x).into()),
                ("xn", (&xn).into()),
                ("f", (&f).into()),
                ("fnan", (&fnan).into()),
                ("z", (&z).into()),
                ("inf", (&inf).into()),
                ("i", (&i64s).into()),
                ("j", (&i32s).into()),
            ];
            for expr in [
                "argmax(i)",
                "argmin(-i)",
                "argmin(j)",
                "argmax(j > 40)",
                "argmin(j > -1e6)",
                "argmax(x)",
                "argmin(-x)",
                "argmax(xn)",
                "argmin(xn)",
                "argmin(f)",
                "argmax(f * 2)",
                "argmax(fnan)",
                "argmin(fnan)",
                "argmax(z)",
                "argmin(z)",
                "argmax(inf)",
                "argmin(-inf)",
                "argmax(i * 0.5)",
            ] {
                compiled_on_threads(expr, &inputs, &format!("n = {n}, at {p}"));
            }
        }
    }
    // rows of a matrix, each with its extreme, a NaN or neither at its own point
    let (rows, cols) = (9, 1300);
    let m: ArrayD<f64> = from(
        rows * cols,
        |k| {
            let (r, c) = (k / cols, k % cols);
            if c == (r * 257) % cols {
                if r % 3 == 0 { f64::NAN } else { 1e9 }
            } else {
                ((k * 7919) % 1009) as f64
            }
        },
        &[rows, cols],
    );
    for expr in [
        "argmax(m, axis=1)",
        "argmin(m, axis=1)",
        "argmax(m, axis=0)",
        "argmin(m)",
    ] {
        compiled_on_threads(expr, &[("m", (&m).into())], "a matrix");
    }
    // segments of several rows: a column broadcast along each row (read per row), and a strided
    // view (its rows of 650 points read with a stride); the whole array's extreme in a middle row
    let c: ArrayD<f64> = from(rows, |r| if r == 4 { 2e9 } else { (r % 3) as f64 }, &[rows, 1]);
    let strided = m.slice(s![.., ..;2]);
    for expr in [
        "argmax(m + c)",
        "argmin(m - c)",
        "argmax(m + c, axis=1)",
        "argmin(m * c, axis=1)",
    ] {
        compiled_on_threads(
            expr,
            &[("m", (&m).into()), ("c", (&c).into())],
            "a broadcast column",
        );
    }
    for expr in ["argmax(m)", "argmin(m)", "argmax(m, axis=1)", "argmin(m * 2)"] {
        compiled_on_threads(expr, &[("m", strided.view().into())], "a strided view");
    }
}

/// A cumulative product of float values along a line folds point by point, in order: the
/// interpreter's bits where an in-register prefix reassociating it underflowed and overflowed
/// elsewhere (`cumprod([1e-300, 1e-300, 1e300, 1e300])` gave NaN for 0; a fuzzer's case gave
/// -2.7e-288 for -0.0), forward, reversed, exclusive, from an initial value, over float64 and
/// float32, a flat array and the columns of a Fortran-ordered matrix (each a line in memory).
#[test]
fn float_cumprod_folds_in_order() {
    let edge: Vec<f64> = vec![
        1e-300,
        1e-300,
        1e300,
        1e300,
        -5e-324,
        2147483648.0,
        2.8249216867049225e-124,
        5.309437597612406e142,
        -9.86e-36,
        1e200,
        1e200,
        1e-200,
        3.0,
        -0.5,
        1e-310,
        f64::MAX,
    ];
    for n in [4usize, 5, 16, 37] {
        let x: ArrayD<f64> = from(n, |i| edge[(i * 7) % edge.len()], &[n]);
        let f: ArrayD<f32> = from(n, |i| edge[(i * 5) % edge.len()] as f32, &[n]);
        let m = from(n * 3, |i| edge[(i * 3) % edge.len()], &[n, 3]);
        let mf = m.t().as_standard_layout().into_owned();
        let mt = mf.t();
        let inputs = [("x", (&x).into()), ("f", (&f).into()), ("m", mt.into())];
        for expr in [
            "cumprod(x)",
            "cumprod(x, reverse=True)",
            "cumprod(x, exclusive=True)",
            "cumprod(x, initial=16777217.0)",
            "cumprod(f)",
            "cumprod(f * 1e20)",
            "cumprod(m, axis=0)",
            "cumprod(m, axis=-2, initial=16777217.0)",
        ] {
            // (the matrix's kernel runs in memory order, which its note says first)
            let note = check(expr, &inputs).unwrap_or_else(|| panic!("{expr} (n = {n}) ran"));
            assert!(
                note.contains("compiled: ") && !note.contains("interpreted"),
                "{expr}: {note}"
            );
        }
    }
}

/// A cumulative sum of float64 values along a line keeps its in-register prefix (`carry + (a +
/// b)`), but a vector whose partial sums come near float64's overflow folds point by point: the
/// interpreter's bits where the prefix overflowed in another place (`cumsum([1e308, 1e308, -1e308,
/// -1e308])` gave NaN for inf: `1e308 + 1e308` is inf, and so was the carry it met as `-inf`),
/// over sequences of huge, small, infinite and NaN values of every length to 40, forward,
/// reversed, exclusive, from an initial value, along the rows of a matrix and its columns.
#[test]
fn float_cumsum_near_overflow_folds_in_order() {
    let values = [
        1e308,
        -1e308,
        1.7e308,
        -1.7e308,
        f64::MAX,
        1.0,
        -1.0,
        0.0,
        -0.0,
        1e-300,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
    ];
    // a splitmix64 step: a value index per point
    let hash = |k: u64| {
        let z = k
            .wrapping_add(0x9e37_79b9_7f4a_7c15)
            .wrapping_mul(0xbf58_476d_1ce4_e5b9);
        let z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    // the interpreter's values where either is not finite, else within the prefix's documented
    // bound, `(k + 2)·eps·Σ|x|` over the points the k-th result sums (`line`: its terms in scan
    // order, an exclusive scan's led by 0, a start's by it; one more taken, to cover both)
    let agree = |got: &[f64], want: &[f64], line: &[f64]| {
        got.iter().zip(want).enumerate().all(|(k, (&g, &w))| {
            if g == w || !(g.is_finite() && w.is_finite()) {
                return (g.is_nan() && w.is_nan()) || g == w;
            }
            let terms = &line[..(k + 2).min(line.len())];
            let abs: f64 = terms.iter().filter(|v| v.is_finite()).map(|v| v.abs()).sum();
            (g - w).abs() <= (k as f64 + 3.0) * f64::EPSILON * abs
        })
    };
    let first: ArrayD<f64> = from(4, |i| [1e308, 1e308, -1e308, -1e308][i], &[4]);
    check("cumsum(x)", &[("x", (&first).into())]).unwrap();
    for n in 1usize..=40 {
        for round in 0..6u64 {
            // NaN in every other round only: it takes over every later partial sum
            let pick = |r: u64| values[(r % (values.len() as u64 - round % 2)) as usize];
            let seed = (n as u64 * 100 + round) * 1000;
            let x: ArrayD<f64> = from(n, |i| pick(hash(seed + i as u64)), &[n]);
            let m: ArrayD<f64> = from(3 * n, |i| pick(hash(seed + 500 + i as u64)), &[3, n]);
            let k: ArrayD<i64> = from(
                n,
                |i| {
                    [100_000_000, -100_000_000, 170_000_000, -170_000_000, 1, -1, 0]
                        [(hash(seed + 900 + i as u64) % 7) as usize]
                },
                &[n],
            );
            let ks: Vec<i64> = k.iter().copied().collect();
            let inputs = [("x", (&x).into()), ("m", (&m).into()), ("k", (&k).into())];
            let xs: Vec<f64> = x.iter().copied().collect();
            let lead = |v: f64| std::iter::once(v).chain(xs.iter().copied()).collect::<Vec<f64>>();
            for (expr, line) in [
                ("cumsum(x)", xs.clone()),
                ("cumsum(x, reverse=True)", xs.iter().rev().copied().collect()),
                ("cumsum(x, exclusive=True)", lead(0.0)),
                ("cumsum(x, initial=1e308)", lead(1e308)),
                ("cumsum(x, reverse=True, exclusive=True)", {
                    let mut l: Vec<f64> = xs.iter().rev().copied().collect();
                    l.insert(0, 0.0);
                    l
                }),
                ("cumsum(m)", m.iter().copied().collect()),
                // float64 values of a typed kernel (an int64 input)
                (
                    "cumsum(k * 1e300)",
                    ks.iter().map(|&k| k as f64 * 1e300).collect(),
                ),
            ] {
                let run = |b: &str| -> Vec<f64> {
                    let out = runner_on(expr, b, 1).run(&inputs).unwrap().into_f64();
                    let mut v: Vec<f64> = out.iter().copied().collect();
                    if expr.contains("reverse") {
                        v.reverse();
                    }
                    v
                };
                let (got, want) = (run("jit"), run("interp"));
                assert!(
                    agree(&got, &want, &line),
                    "{expr} of {xs:?} / {m:?}:\n jit {got:?}\n interp {want:?}"
                );
            }
            // along the columns, each line folds in order: the interpreter's bits
            check("cumsum(m, axis=0)", &inputs).unwrap();
        }
    }
}

/// min and max of int32 values fold `i32x4` accumulators, 4 points a vector, and sums two `i64x2`
/// halves (int_acc.rs): the interpreter's results over every length 0..=40 and long ones (the
/// vector loop, its tail and the work units), int32's extremes (`i32::MIN` and `i32::MAX` against
/// the accumulators' identities, summed into int64),
/// whole arrays, every axis of a matrix and of a 3-d array (kept outputs, 4 at a time, whose int64
/// words hold the identity before the first row; kept sums by groups of rows), strided and
/// transposed views, an int32 body
/// (`i*2 - j`, wrapping), from an `initial` value, with 1 and 4 threads; explain says `i32x4`
/// accumulators in 4 lanes (beside map outputs: `several_typed_outputs_compile_as_one_kernel`).
#[test]
fn int32_min_max_and_sum_fold_in_four_lanes() {
    let value = |k: usize| -> i32 {
        match k % 11 {
            3 => i32::MIN,
            7 => i32::MAX,
            _ => (k as i32).wrapping_mul(-1_640_531_527) >> 7,
        }
    };
    let mut lengths: Vec<usize> = (0..=40).collect();
    lengths.extend([1023, 4097, 70_001]);
    for n in lengths {
        for shift in [0, 3, 7] {
            // the extremes at every position mod 11, shifted
            let i: ArrayD<i32> = from(n, |k| value(k + shift), &[n]);
            let j: ArrayD<i32> = from(n, |k| value(k * 5 + 1), &[n]);
            let inputs = [("i", (&i).into()), ("j", (&j).into())];
            for expr in [
                "max(i)",
                "min(i)",
                "max(i*2 - j)",
                "min(where(i > j, j, i))",
                "min(i, initial=5)",
                "sum(i)",
                "sum(i*2 - j)",
                "sum(i) + max(j)",
            ] {
                if n == 0 {
                    // an empty min or max is an error on every backend, but from an initial value;
                    // an empty sum is 0
                    let ran = check(expr, &inputs).is_some();
                    let defined = expr.contains("initial") || !expr.contains("max") && !expr.contains("min");
                    assert_eq!(ran, defined, "{expr} of nothing");
                    continue;
                }
                compiled_on_threads(expr, &inputs, &format!("n = {n}, shift {shift}"));
            }
        }
    }
    for shape in [
        vec![3usize, 5],
        vec![37, 100],
        vec![100, 37],
        vec![4, 9, 13],
        vec![2, 3, 1025],
    ] {
        let n: usize = shape.iter().product();
        let m: ArrayD<i32> = from(n, value, &shape);
        let t = m.t().to_owned();
        let views = [
            m.view(),
            m.slice_axis(ndarray::Axis(0), ndarray::Slice::new(0, None, -1)),
            t.view(),
        ];
        for v in views {
            let inputs = [("m", (&v).into())];
            for axis in 0..shape.len() {
                for f in ["max", "min", "sum"] {
                    for expr in [
                        format!("{f}(m, axis={axis})"),
                        format!("{f}(m, axis={axis}, initial=-7)"),
                    ] {
                        compiled_on_threads(&expr, &inputs, &format!("shape {shape:?}"));
                    }
                }
            }
        }
    }
    let i: ArrayD<i32> = from(100, value, &[100]);
    let note = check("max(i)", &[("i", (&i).into())]).unwrap();
    assert!(
        note.contains("i32x4 vector accumulators") && note.contains("(4 lanes)"),
        "{note}"
    );
    // a kept int32 sum (4 outputs' int64 words a vector) and min straight into a caller's array
    let m: ArrayD<i32> = from(37 * 10, value, &[37, 10]);
    for (expr, kept) in [("sum(m, axis=0)", true), ("max(m, axis=1)", false)] {
        let runner = FusedRunner::compile_text(expr).unwrap();
        let args = [("m", (&m).into())];
        let want = runner_on(expr, "interp", 1).run(&args).unwrap();
        let got = match want {
            Output::I64(_) => {
                let mut out = ndarray::Array1::<i64>::zeros(10).into_dyn();
                runner.run_into(&args, out.view_mut()).unwrap();
                Output::I64(out)
            }
            _ => {
                let mut out = ndarray::Array1::<i32>::zeros(37).into_dyn();
                runner.run_into(&args, out.view_mut()).unwrap();
                Output::I32(out)
            }
        };
        assert!(same(&got, &want), "{expr} (kept {kept}): {got:?} {want:?}");
    }
    let note = check("sum(i)", &[("i", (&i).into())]).unwrap();
    assert!(
        note.contains("(int64 accumulators)") && note.contains("(4 lanes)"),
        "{note}"
    );
}

/// argmin and argmax of short rows (1 to 70 points, below and around the blocks' threshold and the
/// main loop's step): each row's vector accumulators merged as vectors, then their lanes, and rows
/// shorter than a main-loop step fold the first accumulator alone. Each row holds its extreme
/// twice (the first must win) or a NaN (the first NaN wins) or ±0 ties, at positions that fall in
/// every lane of every accumulator and in the scalar tail, over float64, float32, int64, int32 and
/// bool values, rows of a matrix and of a 3-d array, with 1 and 4 threads.
#[test]
fn argmin_and_argmax_of_short_rows() {
    for cols in (1usize..=40).chain([47, 63, 64, 65, 70]) {
        let rows = 2 * cols + 3;
        let n = rows * cols;
        // row r: its extreme at (r * 5) % cols and again at (r * 5 + r / 2 + 1) % cols, a NaN in
        // every 4th row, background values below the extreme
        let at = |k: usize| {
            let (r, c) = (k / cols, k % cols);
            let first = (r * 5) % cols;
            let second = (r * 5 + r / 2 + 1) % cols;
            (r, c, first, second)
        };
        let x: ArrayD<f64> = from(
            n,
            |k| {
                let (r, c, first, second) = at(k);
                if r % 4 == 3 && c == (r * 3) % cols {
                    f64::NAN
                } else if c == first || c == second {
                    1e6
                } else {
                    ((k * 7919) % 1009) as f64
                }
            },
            &[rows, cols],
        );
        let f: ArrayD<f32> = x.mapv(|v| -(v as f32));
        let z: ArrayD<f64> = from(n, |k| if (k * 7) % 3 == 0 { -0.0 } else { 0.0 }, &[rows, cols]);
        let i: ArrayD<i64> = from(
            n,
            |k| {
                if x.as_slice().unwrap()[k] == 1e6 {
                    9
                } else {
                    (k % 7) as i64
                }
            },
            &[rows, cols],
        );
        let j: ArrayD<i32> = i.mapv(|v| -(v as i32));
        let b: ArrayD<bool> = i.mapv(|v| v == 9);
        let cube: ArrayD<f64> = x.clone().into_shape_with_order(IxDyn(&[1, rows, cols])).unwrap();
        let inputs = [
            ("x", (&x).into()),
            ("f", (&f).into()),
            ("z", (&z).into()),
            ("i", (&i).into()),
            ("j", (&j).into()),
            ("b", (&b).into()),
            ("c", (&cube).into()),
        ];
        for expr in [
            "argmax(x, axis=1)",
            "argmin(-x, axis=1)",
            "argmin(f, axis=1)",
            "argmax(f, axis=1)",
            "argmax(z, axis=1)",
            "argmin(z, axis=1)",
            "argmax(i, axis=1)",
            "argmin(j, axis=1)",
            "argmax(b, axis=1)",
            "argmin(b, axis=1)",
            "argmax(c, axis=2)",
            "argmax(x, axis=0)",
        ] {
            compiled_on_threads(expr, &inputs, &format!("rows of {cols}"));
        }
        // a whole array read as several short rows (a strided view, a transposed one): one
        // segment of many rows, cut into work units
        let strided = x.slice(s![.., ..;2]);
        let t = x.t();
        for (what, v) in [("strided", strided.into_dyn()), ("transposed", t.view())] {
            for expr in ["argmax(v)", "argmin(v)", "argmax(v, axis=1)"] {
                compiled_on_threads(
                    expr,
                    &[("v", v.view().into())],
                    &format!("{what}, rows of {cols}"),
                );
            }
        }
    }
}
