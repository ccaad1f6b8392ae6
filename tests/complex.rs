//! Complex numbers end to end (issue 25): every row of `tests/data/complex_cases.csv`, which NumPy 2
//! wrote (`tests/gen/make_complex_cases.py`), through `FusedRunner::compile_text` over the same
//! complex64 and complex128 points: the functions numexpr offers for complex values, the parts and
//! the magnitude, and the operators.
//!
//! The reference is mpmath's correctly rounded value where the point's parts are finite and nonzero
//! (NumPy's own `log1p`, `expm1` and power lose digits there), NumPy's elsewhere (a zero part picks
//! a side of a branch cut; the special values are C99's, Annex G, as glibc gives them).
//!
//! The bound: a finite result within [`ULPS`] units of the type's epsilon of the reference, relative
//! to the result's magnitude (`|got - want| <= ULPS * eps * |want|`: a complex function's error is a
//! distance in the plane); `z ** w`, computed as `exp(w log z)`, within `(ULPS + |w log z|) * eps`,
//! its condition number. A special value (a part that is infinite or NaN) must be the same: the same
//! infinity, any NaN for a NaN, except where C99 leaves a sign unspecified (the infinite part of
//! `±inf + NaN i`, the zero of `NaN ± 0i`). Where kiln differs from NumPy on purpose, [`differs`]
//! says why.

use kiln::kiln_ir::UnaryOp;
use kiln::kiln_ir::num_complex::{Complex32, Complex64};
use kiln::{ArrayArg, FusedRunner, Output};
use ndarray::Array1;

/// The bound on a finite result, in units of the type's epsilon relative to its magnitude.
const ULPS: f64 = 4.0;

const CASES: &str = include_str!("data/complex_cases.csv");

fn pairs(s: &str) -> Vec<Complex64> {
    s.split(' ')
        .map(|p| {
            let (re, im) = p.split_once(',').expect("re,im");
            Complex64::new(re.parse().expect("a float"), im.parse().expect("a float"))
        })
        .collect()
}

/// The result as complex128 values (a real result with a zero imaginary part, bools as 1 / 0).
fn values(out: Output) -> (String, Vec<Complex64>) {
    let name = out.dtype_name().to_string();
    let v = match out {
        Output::C128(a) => a.iter().copied().collect(),
        Output::C64(a) => a
            .iter()
            .map(|z| Complex64::new(z.re.into(), z.im.into()))
            .collect(),
        Output::Bool(a) => a
            .iter()
            .map(|&b| Complex64::new(f64::from(u8::from(b)), 0.0))
            .collect(),
        real => real.into_f64().iter().map(|&x| Complex64::new(x, 0.0)).collect(),
    };
    (name, v)
}

/// NumPy's result dtype for `expr` of `dtype` inputs.
fn numpy_dtype(expr: &str, dtype: &str) -> &'static str {
    let real = if dtype == "complex64" {
        "float32"
    } else {
        "float64"
    };
    let complex = if dtype == "complex64" {
        "complex64"
    } else {
        "complex128"
    };
    if expr.contains("==") || expr.contains("!=") {
        "bool"
    } else if ["abs(", "real(", "imag("].iter().any(|f| expr.starts_with(f)) {
        real
    } else {
        complex
    }
}

fn same_special(got: f64, want: f64, other_nan: bool) -> bool {
    (got.is_nan() && want.is_nan())
        || got == want && (got.is_sign_negative() == want.is_sign_negative() || got != 0.0 || other_nan)
        || other_nan && got.is_infinite() && want.is_infinite()
}

/// Why kiln's value at `z` differs from NumPy's there on purpose, if it does.
fn differs(expr: &str, z: Complex64, w: Complex64) -> Option<&'static str> {
    let finite = |c: Complex64| c.re.is_finite() && c.im.is_finite();
    match expr {
        // NumPy's nc_log1p is log(hypot(1 + x, y)), 0 for |x| below half an ulp of 1; kiln's
        // 0.5 log1p(x (2 + x) + y²) is exact there
        "log1p(z)" if finite(z) && z.re.abs() < 1e-10 => Some("NumPy's complex log1p loses a tiny x"),
        // NumPy's nc_expm1 is expm1(x) cos y - 2 sin²(y/2) + i exp(x) sin y even for y = 0, where
        // inf * sin(0) is NaN; kiln's is exp's, exact on the real axis (expm1(inf + 0i) = inf + 0i)
        "expm1(z)" if z.im == 0.0 => Some("NumPy's complex expm1 is NaN on the real axis beyond overflow"),
        // C99 leaves cpow's special values to cexp(w clog z): kiln's `**` is NaN where a part of an
        // operand is not finite
        "z ** w" if !(finite(z) && finite(w)) => Some("`**` of non-finite operands is NaN"),
        // x² - y² of parts beyond sqrt(MAX) is inf - inf: kiln's NaN, NumPy's -inf (the true real
        // part of (1e300 + 1e300i)² is 0)
        "square(z)" if z.re.abs().max(z.im.abs()) > 1e150 => Some("the square's parts overflow"),
        _ => None,
    }
}

/// The error of `got` against `want` in units of `eps` relative to `|want|` (0 where they agree
/// exactly); None where a special value differs.
fn error(got: Complex64, want: Complex64, eps: f64) -> Option<f64> {
    if !(want.re.is_finite() && want.im.is_finite() && got.re.is_finite() && got.im.is_finite()) {
        // the non-finite parts the same, a finite part within the bound of itself
        let part = |g: f64, w: f64, other_nan: bool| {
            if g.is_finite() && w.is_finite() && g != w {
                (g - w).abs() <= ULPS * eps * w.abs()
            } else {
                same_special(g, w, other_nan)
            }
        };
        let same = part(got.re, want.re, want.im.is_nan()) && part(got.im, want.im, want.re.is_nan());
        return same.then_some(0.0);
    }
    let d = (got.re - want.re).hypot(got.im - want.im);
    if d == 0.0 {
        return Some(0.0);
    }
    let scale = want.re.hypot(want.im).max(f64::MIN_POSITIVE);
    Some(d / scale / eps)
}

#[test]
fn numpy_values_of_every_function_and_operator() {
    let mut z = std::collections::HashMap::new();
    let mut failures = Vec::new();
    let mut worst: Vec<(String, f64)> = Vec::new();
    for line in CASES.lines().filter(|l| !l.starts_with('#')) {
        let fields: Vec<&str> = line.split(';').collect();
        if fields[0] == "z" || fields[0] == "w" {
            z.insert((fields[0], fields[1]), pairs(fields[2]));
            continue;
        }
        let (dtype, expr, want) = (fields[0], fields[1], pairs(fields[2]));
        let (zs, ws) = (&z[&("z", dtype)], &z[&("w", dtype)]);
        let eps = if dtype == "complex64" {
            f32::EPSILON as f64
        } else {
            f64::EPSILON
        };
        let (z64, w64): (Array1<Complex32>, Array1<Complex32>) = (
            zs.iter()
                .map(|c| Complex32::new(c.re as f32, c.im as f32))
                .collect(),
            ws.iter()
                .map(|c| Complex32::new(c.re as f32, c.im as f32))
                .collect(),
        );
        let (z128, w128): (Array1<Complex64>, Array1<Complex64>) =
            (zs.iter().copied().collect(), ws.iter().copied().collect());
        let args: Vec<(&str, ArrayArg<'_>)> = if dtype == "complex64" {
            vec![("z", (&z64).into()), ("w", (&w64).into())]
        } else {
            vec![("z", (&z128).into()), ("w", (&w128).into())]
        };
        let runner = FusedRunner::compile_text(expr).unwrap_or_else(|e| panic!("{expr}: {e}"));
        let used: Vec<(&str, ArrayArg<'_>)> = args
            .into_iter()
            .filter(|(n, _)| runner.input_names().iter().any(|m| m == n))
            .collect();
        let out = runner
            .run(&used)
            .unwrap_or_else(|e| panic!("{dtype} {expr}: {e}"));
        let (name, got) = values(out);
        assert_eq!(
            name,
            numpy_dtype(expr, dtype),
            "{dtype} {expr}: the result's dtype"
        );
        let mut max = 0.0f64;
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            if differs(expr, zs[i], ws[i]).is_some() {
                continue;
            }
            // `exp(w log z)`: the error of `w log z` in units of eps, times the exponential's
            let bound = if expr == "z ** w" {
                let (z, w) = (zs[i], ws[i]);
                let l = Complex64::new(z.norm().ln(), z.im.atan2(z.re));
                let cond = (w * l).norm();
                if cond.is_nan() { ULPS } else { ULPS + cond }
            } else {
                ULPS
            };
            match error(g, w, eps) {
                Some(e) if e <= bound => max = max.max(e / bound * ULPS),
                e => failures.push(format!(
                    "{dtype} {expr} at z = ({:e}, {:e}), w = ({:e}, {:e}): kiln ({:e}, {:e}), reference ({:e}, {:e}) ({e:?} eps)",
                    zs[i].re, zs[i].im, ws[i].re, ws[i].im, g.re, g.im, w.re, w.im
                )),
            }
        }
        worst.push((format!("{dtype} {expr}"), max));
    }
    for (what, e) in &worst {
        eprintln!("{what}: {e:.2} eps");
    }
    assert!(
        failures.is_empty(),
        "{} differences:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// NumPy's promotion with complex operands and its refusals, through the text language.
#[test]
fn promotion_and_refusals() {
    let z: Array1<Complex64> = [Complex64::new(1.0, 2.0), Complex64::new(-0.5, 0.0)]
        .into_iter()
        .collect();
    let c: Array1<Complex32> = z
        .iter()
        .map(|v| Complex32::new(v.re as f32, v.im as f32))
        .collect();
    let f: Array1<f32> = ndarray::array![1.5, -2.0];
    let i: Array1<i32> = ndarray::array![3, -4];
    let run = |expr: &str| {
        let runner = FusedRunner::compile_text(expr)?;
        let all: [(&str, ArrayArg<'_>); 4] = [
            ("z", (&z).into()),
            ("c", (&c).into()),
            ("f", (&f).into()),
            ("i", (&i).into()),
        ];
        let used: Vec<(&str, ArrayArg<'_>)> = all
            .into_iter()
            .filter(|(n, _)| runner.input_names().iter().any(|m| m == n))
            .collect();
        runner.run(&used)
    };
    for (expr, dtype) in [
        ("f * 1j", "complex64"),
        ("i * 1j", "complex128"),
        ("c + f", "complex64"),
        ("c + i", "complex128"),
        ("c * 2.5", "complex64"),
        ("abs(c)", "float32"),
        ("real(z) + imag(z)", "float64"),
        ("complex(f, f)", "complex64"),
        ("complex(f, i)", "complex128"),
        ("z == 1j", "bool"),
        ("sum(c)", "complex64"),
        ("mean(z)", "complex128"),
        ("cumprod(z)", "complex128"),
        ("where(f > 0, z, 2)", "complex128"),
    ] {
        assert_eq!(
            run(expr).unwrap_or_else(|e| panic!("{expr}: {e}")).dtype_name(),
            dtype,
            "{expr}"
        );
    }
    let out = run("z * z + 1j").unwrap();
    let Output::C128(a) = out else {
        panic!("complex128")
    };
    assert_eq!(a[0], Complex64::new(-3.0, 5.0));
    // `complex(1, 2)` of two literals is a complex constant, not folded away
    let Output::C128(k) = run("complex(1, 2) * 2").unwrap() else {
        panic!("complex128")
    };
    assert_eq!(k.iter().next(), Some(&Complex64::new(2.0, 4.0)));
    for (expr, what) in [
        ("z < 1", "the ordering `lt`"),
        ("z // 2", "`//`"),
        ("z % 2", "`%`"),
        ("floor(z)", "floor"),
        ("arctan2(z, z)", "arctan2"),
        ("max(z)", "max"),
        ("cummax(z)", "cummax"),
        ("z << 1", "a bitwise operator"),
        ("complex(z, f)", "complex() takes two real numbers"),
    ] {
        let e = run(expr).expect_err(expr).to_string();
        assert!(e.contains(what), "{expr}: {e}");
    }
}

/// The parts of the edge values: zeros of both signs, ±1, a half, NaNs of both signs, ±inf, the
/// extremes, a subnormal and a tiny normal (their pairs are the complex edge values).
const EDGE_PARTS: [f64; 13] = [
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    f64::NAN,
    -f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1e300,
    -5e-324,
    f64::MAX,
    -1e-310,
];

/// Whether two complex values are the same bit for bit (any NaN equal to any NaN).
fn same_c64(a: Complex64, b: Complex64) -> bool {
    let part = |x: f64, y: f64| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
    part(a.re, b.re) && part(a.im, b.im)
}

/// The compiled value `a` of `expr` against the interpreter's `b`: the same bits, but for `abs`,
/// the vector hypot of the parts, within its stated 1 ULP of libm's (`kiln_jit::binary_ulp_bound`)
/// in the result's precision (`f32`: complex64's magnitude).
fn agrees(expr: &str, f32: bool, a: Complex64, b: Complex64) -> bool {
    if same_c64(a, b) {
        return true;
    }
    for (name, op) in [("exp(", UnaryOp::Exp), ("sqrt(", UnaryOp::Sqrt)] {
        if expr.contains(name) {
            return bounded_agrees(kiln_jit::complex_ulp_bound(op), f32, a, b);
        }
    }
    if !expr.contains("abs(") || a.im != 0.0 || b.im != 0.0 || !(a.re.is_finite() && b.re.is_finite()) {
        return false;
    }
    let ulps = kiln_jit::binary_ulp_bound(kiln::kiln_ir::BinaryOp::Hypot) as i64;
    let diff = if f32 {
        ((a.re as f32).to_bits() as i64 - (b.re as f32).to_bits() as i64).abs()
    } else {
        (a.re.to_bits() as i64 - b.re.to_bits() as i64).abs()
    };
    a.re.is_sign_positive() && b.re.is_sign_positive() && diff <= ulps
}

/// The compiled value `a` of a complex function computed from the vector float math (`exp`,
/// `sqrt`) against the interpreter's `b`: a part that is zero, infinite or NaN in either is the
/// other's (any NaN equal to any NaN), and each finite part within `bound`
/// (`kiln_jit::complex_ulp_bound`) of the interpreter's, in units of the part's last place or of
/// the modulus's, `|b|` (the bound `docs/semantics.md` states).
fn bounded_agrees(bound: u32, f32: bool, a: Complex64, b: Complex64) -> bool {
    let bound = f64::from(bound);
    let eps = if f32 { f32::EPSILON as f64 } else { f64::EPSILON };
    let ulps = |x: f64, y: f64| {
        if f32 {
            ((x as f32).to_bits() as i64 - (y as f32).to_bits() as i64).abs() as f64
        } else {
            (x.to_bits() as i64 - y.to_bits() as i64).abs() as f64
        }
    };
    let part = |x: f64, y: f64| {
        if x.is_nan() || y.is_nan() || !x.is_finite() || !y.is_finite() || x == 0.0 || y == 0.0 {
            return x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan());
        }
        x.is_sign_positive() == y.is_sign_positive()
            && (ulps(x, y) <= bound || (x - y).abs() <= bound * eps * b.norm())
    };
    part(a.re, b.re) && part(a.im, b.im)
}

/// `out` as complex128 values, bit for bit (a complex64's parts widened exactly; bools 1 / 0).
fn exact_values(out: &Output) -> Vec<Complex64> {
    match out {
        Output::C128(a) => a.iter().copied().collect(),
        Output::C64(a) => a
            .iter()
            .map(|z| Complex64::new(z.re.into(), z.im.into()))
            .collect(),
        Output::F32(a) => a.iter().map(|&x| Complex64::new(x.into(), 0.0)).collect(),
        Output::F64(a) => a.iter().map(|&x| Complex64::new(x, 0.0)).collect(),
        Output::I64(a) => a.iter().map(|&x| Complex64::new(x as f64, 0.0)).collect(),
        Output::Bool(a) => a
            .iter()
            .map(|&b| Complex64::new(f64::from(u8::from(b)), 0.0))
            .collect(),
        other => panic!("an unexpected result {}", other.dtype_name()),
    }
}

/// `expr` run on `backend` with `threads`, after checking that its kernels are compiled (none left
/// to the typed interpreter); `what` names the case in a failure.
fn compiled_run(
    expr: &str,
    backend: &str,
    threads: usize,
    args: &[(&str, ArrayArg<'_>)],
    what: &str,
) -> Output {
    let tested = FusedRunner::compile_text(expr)
        .unwrap()
        .with_backend(kiln::backend_by_name(backend).unwrap())
        .with_threads(threads);
    let engines: Vec<kiln::Engine> = tested
        .explain_kernels(args)
        .unwrap()
        .iter()
        .map(|k| k.engine)
        .collect();
    assert!(
        !engines.contains(&kiln::Engine::TypedInterpreted),
        "{what} {expr} on {backend}: interpreted ({engines:?})"
    );
    tested
        .run(args)
        .unwrap_or_else(|e| panic!("{what} {expr} on {backend}: {e}"))
}

/// Every complex opcode compiled (the JIT's both schedules) gives the interpreter's values bit for
/// bit (and so do exact reductions of real values computed from them), over every pair of edge values (`z` repeats each, `w` cycles through them), for complex64
/// and complex128, and over strided, reversed and broadcast views, at lengths below one vector,
/// with tails and empty; each kernel compiled (none left to the typed interpreter).
#[test]
fn compiled_maps_equal_the_interpreter_bit_for_bit() {
    use ndarray::Array2;
    let values: Vec<Complex64> = EDGE_PARTS
        .iter()
        .flat_map(|&re| EDGE_PARTS.iter().map(move |&im| Complex64::new(re, im)))
        .collect();
    let n = values.len();
    let z128: Array1<Complex64> = (0..n * n).map(|k| values[k / n]).collect();
    let w128: Array1<Complex64> = (0..n * n).map(|k| values[k % n]).collect();
    let narrow = |a: &Array1<Complex64>| -> Array1<Complex32> {
        a.iter()
            .map(|c| Complex32::new(c.re as f32, c.im as f32))
            .collect()
    };
    let (z64, w64) = (narrow(&z128), narrow(&w128));
    let f: Array1<f64> = (0..n * n).map(|k| EDGE_PARTS[k % EDGE_PARTS.len()]).collect();
    let f32s: Array1<f32> = f.iter().map(|&x| x as f32).collect();
    let i: Array1<i64> = (0..(n * n) as i64).map(|k| k % 7 - 3).collect();
    let p: Array1<bool> = (0..n * n).map(|k| k % 3 == 1).collect();
    let exprs = [
        "z + w",
        "z - w",
        "z * w",
        "z / w",
        "-z",
        "conj(z)",
        "real(z)",
        "imag(z)",
        "abs(z)",
        "z == w",
        "z != w",
        "z & w",
        "z | w",
        "~(z == w)",
        "isnan(z)",
        "isinf(z)",
        "isfinite(z)",
        "complex(real(z), imag(w))",
        "where(p, z, w)",
        "z * 2.5 + 1j",
        "z * w + 1j",
        "1 / z",
        "reciprocal(z)",
        "round(z)",
        "sign(z)",
        "z ** w",
        "z ** 2",
        "z ** 3",
        "z ** -2",
        "z ** 0.5",
        "sqrt(z)",
        "exp(z)",
        "log(z)",
        "log1p(z)",
        "expm1(z)",
        "log2(z)",
        "log10(z)",
        "exp2(z)",
        "sin(z)",
        "cos(z)",
        "tan(z)",
        "sinh(z)",
        "cosh(z)",
        "tanh(z)",
        "arcsin(z)",
        "arccos(z)",
        "arctan(z)",
        "arcsinh(z)",
        "arccosh(z)",
        "arctanh(z)",
        "f * 1j + z",
        "g * 1j",
        "i * 1j + z",
        "z + c",
        "c * 1j",
        "where(f > 0, z, 2)",
        "abs(z) * 2",
        "complex(f, f) / z",
        "complex(g, g)",
        "z > 0j",
        // reductions of real values computed from complex ones
        "max(abs(z))",
        "sum(isnan(z * w))",
        "any(z == w)",
        // the truth of complex values
        "any(z - w)",
        "all(z)",
        "all(z * 0)",
    ];
    let mut checked = 0;
    for dtype in ["complex64", "complex128"] {
        let (z, w): (ArrayArg<'_>, ArrayArg<'_>) = if dtype == "complex64" {
            ((&z64).into(), (&w64).into())
        } else {
            ((&z128).into(), (&w128).into())
        };
        let all: Vec<(&str, ArrayArg<'_>)> = vec![
            ("z", z),
            ("w", w),
            ("c", (&z64).into()),
            ("f", (&f).into()),
            ("g", (&f32s).into()),
            ("i", (&i).into()),
            ("p", (&p).into()),
        ];
        for expr in exprs {
            let Ok(oracle) = FusedRunner::compile_text(expr) else {
                panic!("{expr} does not compile")
            };
            let used: Vec<(&str, ArrayArg<'_>)> = all
                .iter()
                .filter(|(n, _)| oracle.input_names().iter().any(|m| m == n))
                .map(|(n, a)| (*n, a.clone()))
                .collect();
            let oracle = oracle.with_backend(kiln::interpreter());
            let want = match oracle.run(&used) {
                Ok(w) => w,
                // a type error (the ordering of complex numbers) is the interpreter's too
                Err(e) => {
                    let got = FusedRunner::compile_text(expr).unwrap().run(&used);
                    assert!(got.is_err(), "{dtype} {expr}: interp {e}, jit {got:?}");
                    continue;
                }
            };
            for backend in ["jit", "jit-scalar"] {
                let got = compiled_run(expr, backend, 1, &used, dtype);
                assert_eq!(got.dtype_name(), want.dtype_name(), "{dtype} {expr}");
                let (g, wv) = (exact_values(&got), exact_values(&want));
                for k in 0..wv.len() {
                    assert!(
                        agrees(expr, dtype == "complex64", g[k], wv[k]),
                        "{dtype} {expr} on {backend} at z = {}, w = {}: compiled {}, interpreted {}",
                        z128[k],
                        w128[k],
                        g[k],
                        wv[k]
                    );
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} kernels checked");
    // views read in place: strided, reversed, broadcast rows and columns; short lengths (below
    // one vector of either type's points, 2 or 4, and tails after whole vectors) and empty; both
    // complex types, and kernels mixing complex values with real ones
    let grid: Array2<Complex64> = Array2::from_shape_fn((n, n), |(r, c)| {
        values[(r * 5 + c) % n] * Complex64::new(1.0, 0.5)
    });
    let col: Array2<Complex64> = Array2::from_shape_fn((n, 1), |(r, _)| values[(r * 7) % n]);
    let row: Array2<Complex64> = Array2::from_shape_fn((1, n), |(_, c)| values[(c * 3) % n]);
    let to32 = |c: &Complex64| Complex32::new(c.re as f32, c.im as f32);
    let (grid32, col32, row32) = (grid.map(to32), col.map(to32), row.map(to32));
    let exprs = [
        "z * w + 1j",
        "z / w",
        "sqrt(z) * 2",
        "exp(z)",
        "exp(z * 1e-3) * 2",
        "abs(z - w)",
        "z == w",
        "where(real(z) > 0, conj(z), w * 2)",
        "1 / w + z",
        "z + w * (z != w)",
        "(z + w) / (z - 1j)",
    ];
    for dtype in ["complex64", "complex128"] {
        let cases = if dtype == "complex64" {
            view_cases(&grid32, &col32, &row32, &z64, &w64)
        } else {
            view_cases(&grid, &col, &row, &z128, &w128)
        };
        for expr in exprs {
            for (what, z, w) in &cases {
                let args = [("z", z.clone()), ("w", w.clone())];
                let want = FusedRunner::compile_text(expr)
                    .unwrap()
                    .with_backend(kiln::interpreter())
                    .run(&args)
                    .unwrap_or_else(|e| panic!("{dtype} {expr} {what}: {e}"));
                let got = compiled_run(expr, "jit", 1, &args, what);
                assert_eq!(got.shape(), want.shape(), "{dtype} {expr} {what}");
                let (g, wv) = (exact_values(&got), exact_values(&want));
                assert_eq!(g.len(), wv.len(), "{dtype} {expr} {what}");
                for k in 0..wv.len() {
                    assert!(
                        agrees(expr, dtype == "complex64", g[k], wv[k]),
                        "{dtype} {expr} {what} at {k}: compiled {}, interpreted {}",
                        g[k],
                        wv[k]
                    );
                }
            }
        }
    }
}

/// The view cases of [`compiled_maps_equal_the_interpreter_bit_for_bit`] (pairs of arguments `z`
/// and `w` with what they test): strided and broadcast, reversed, a column and a row, transposed,
/// every length to a few vectors of points (empty, below one vector, tails), a strided row.
#[allow(clippy::type_complexity)]
fn view_cases<'a, T: kiln::Element>(
    grid: &'a ndarray::Array2<T>,
    col: &'a ndarray::Array2<T>,
    row: &'a ndarray::Array2<T>,
    z: &'a Array1<T>,
    w: &'a Array1<T>,
) -> Vec<(String, ArrayArg<'a>, ArrayArg<'a>)> {
    use ndarray::s;
    let mut cases: Vec<(String, ArrayArg<'a>, ArrayArg<'a>)> = vec![
        (
            "strided and broadcast".into(),
            grid.slice(s![..;2, ..;3]).into(),
            row.slice(s![.., ..;3]).into(),
        ),
        (
            "reversed and a column".into(),
            grid.slice(s![..;-1, ..]).into(),
            col.into(),
        ),
        ("a column and a row".into(), col.into(), row.into()),
        ("transposed".into(), grid.t().into(), grid.into()),
        (
            "every second point".into(),
            z.slice(s![..40;2]).into(),
            w.slice(s![3..23]).into(),
        ),
    ];
    for len in [0, 1, 2, 3, 4, 5, 7, 9, 17, 33] {
        cases.push((
            format!("{len} points"),
            z.slice(s![..len]).into(),
            w.slice(s![1..len + 1]).into(),
        ));
    }
    cases
}

/// The inputs `z`, `w` (`z` again) and `u` of [`compiled_sums_and_products_within_the_bound`], by
/// what they test: whole, strided both ways, transposed, empty, one element.
fn reduction_inputs<'a, T: kiln::Element>(
    z: &'a ndarray::Array2<T>,
    u: &'a ndarray::Array2<T>,
) -> Vec<(&'static str, Vec<(&'static str, ArrayArg<'a>)>)> {
    use ndarray::s;
    let three =
        |zv: ndarray::ArrayView2<'a, T>, wv: ndarray::ArrayView2<'a, T>, uv: ndarray::ArrayView2<'a, T>| {
            vec![("z", zv.into()), ("w", wv.into()), ("u", uv.into())]
        };
    vec![
        ("whole", three(z.view(), z.view(), u.view())),
        (
            "strided",
            three(
                z.slice(s![..;2, ..;-3]),
                z.slice(s![1..;2, ..;3]),
                u.slice(s![..;2, ..;3]),
            ),
        ),
        ("transposed", three(z.t(), z.t(), u.t())),
        (
            "empty",
            three(z.slice(s![..0, ..]), z.slice(s![..0, ..]), u.slice(s![..0, ..])),
        ),
        (
            "one",
            three(
                z.slice(s![..1, ..1]),
                z.slice(s![..1, ..1]),
                u.slice(s![..1, ..1]),
            ),
        ),
    ]
}

/// Sums, means and products of complex values compiled (the JIT's both schedules, one thread and
/// two over a chunked whole-array reduction): within the reductions' relative bound of the
/// interpreter (a sum's error `n ε Σ|z|`, a product's `8 n ε Π|z|`, distances in the plane), over
/// every axis and all, from views, empty and one element; a NaN or an infinite part where the
/// interpreter has one. Each kernel compiled.
#[test]
fn compiled_sums_and_products_within_the_bound() {
    use ndarray::Array2;
    let (rows, cols) = (37, 203);
    let z: Array2<Complex64> = Array2::from_shape_fn((rows, cols), |(r, c)| {
        let k = (r * cols + c) as f64;
        Complex64::new((k * 0.618).sin() * 1.5, (k * 0.371).cos() - 0.25)
    });
    // factors of modulus near 1, so that long products neither overflow nor vanish
    let u: Array2<Complex64> = z.mapv(|v| Complex64::from_polar(1.0 + 0.01 * v.re, v.im));
    let narrow = |a: &Array2<Complex64>| a.mapv(|c| Complex32::new(c.re as f32, c.im as f32));
    let (z64, u64) = (narrow(&z), narrow(&u));
    let mut specials = z.clone();
    specials[[3, 5]] = Complex64::new(f64::NAN, 1.0);
    specials[[7, 9]] = Complex64::new(f64::INFINITY, -0.0);
    specials[[7, 10]] = Complex64::new(2.0, f64::NEG_INFINITY);
    let big: Array1<Complex64> = (0..300_000)
        .map(|k| Complex64::new((k as f64 * 0.001).sin(), (k as f64 * 0.002).cos()))
        .collect();
    // each reduction and the interpreter's sum (mean, product) of the magnitudes, its bound's scale
    let exprs = [
        ("sum(z)", "sum(abs(z))"),
        ("sum(z, axis=0)", "sum(abs(z), axis=0)"),
        ("sum(z, axis=1)", "sum(abs(z), axis=1)"),
        ("mean(z)", "mean(abs(z))"),
        ("mean(z, axis=0)", "mean(abs(z), axis=0)"),
        ("sum(z * w + 1j, axis=1)", "sum(abs(z * w + 1j), axis=1)"),
        // quotients on blocks (the wide complex division), folded row by row and whole
        ("sum(z / (w + 2), axis=1)", "sum(abs(z / (w + 2)), axis=1)"),
        ("sum(z / (w + 2))", "sum(abs(z / (w + 2)))"),
        ("prod(u)", "prod(abs(u))"),
        ("prod(u, axis=0)", "prod(abs(u), axis=0)"),
        ("prod(u, axis=1)", "prod(abs(u), axis=1)"),
    ];
    let mut checked = 0;
    for dtype in ["complex64", "complex128"] {
        let eps = if dtype == "complex64" {
            f32::EPSILON as f64
        } else {
            f64::EPSILON
        };
        let mut inputs = if dtype == "complex64" {
            reduction_inputs(&z64, &u64)
        } else {
            reduction_inputs(&z, &u)
        };
        if dtype == "complex128" {
            let specials = [
                ("z", (&specials).into()),
                ("w", (&specials).into()),
                ("u", (&specials).into()),
            ];
            inputs.push(("specials", specials.to_vec()));
        }
        for (what, args) in &inputs {
            for (expr, scale_expr) in exprs {
                let runner = FusedRunner::compile_text(expr).unwrap();
                let used: Vec<(&str, ArrayArg<'_>)> = args
                    .iter()
                    .filter(|(n, _)| runner.input_names().iter().any(|m| m == n))
                    .map(|(n, a)| (*n, a.clone()))
                    .collect();
                let Ok(want) = runner.with_backend(kiln::interpreter()).run(&used) else {
                    let got = FusedRunner::compile_text(expr).unwrap().run(&used);
                    assert!(got.is_err(), "{dtype} {expr} {what}: the interpreter refuses it");
                    continue;
                };
                let terms = used[0].1.shape().iter().product::<usize>().max(1) as f64;
                let scale = FusedRunner::compile_text(scale_expr)
                    .unwrap()
                    .with_backend(kiln::interpreter())
                    .run(&used)
                    .unwrap_or_else(|e| panic!("{scale_expr}: {e}"));
                let scale = exact_values(&scale);
                for backend in ["jit", "jit-scalar"] {
                    for threads in [1, 2] {
                        let got = compiled_run(expr, backend, threads, &used, &format!("{dtype} {what}"));
                        assert_eq!(got.dtype_name(), want.dtype_name(), "{dtype} {expr} {what}");
                        assert_eq!(got.shape(), want.shape(), "{dtype} {expr} {what}");
                        let factor = if expr.starts_with("prod") { 8.0 } else { 1.0 };
                        let (g, w) = (exact_values(&got), exact_values(&want));
                        for k in 0..w.len() {
                            let ok = if w[k].re.is_finite() && w[k].im.is_finite() {
                                let bound = factor * terms * eps * scale[k].re;
                                (g[k] - w[k]).norm() <= bound
                            } else {
                                // a non-finite part the same; a finite one beside it close
                                let part = |g: f64, w: f64| {
                                    (g.is_nan() && w.is_nan())
                                        || g == w
                                        || w.is_finite()
                                            && (g - w).abs() <= 4.0 * terms * eps * w.abs().max(1.0)
                                };
                                part(g[k].re, w[k].re) && part(g[k].im, w[k].im)
                            };
                            assert!(
                                ok,
                                "{dtype} {expr} {what} on {backend}, {threads} threads, at {k}: compiled {}, interpreted {}",
                                g[k], w[k]
                            );
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked > 100, "only {checked} reductions checked");
    // a whole-array sum of more points than one chunk: its partials merged in chunk order
    for threads in [1, 2] {
        let args = [("z", ArrayArg::from(&big))];
        let want = FusedRunner::compile_text("sum(z)")
            .unwrap()
            .with_backend(kiln::interpreter())
            .run(&args)
            .unwrap();
        let got = FusedRunner::compile_text("sum(z)")
            .unwrap()
            .with_threads(threads)
            .run(&args)
            .unwrap();
        let (g, w) = (exact_values(&got)[0], exact_values(&want)[0]);
        let bound = big.len() as f64 * f64::EPSILON * big.iter().map(|v| v.norm()).sum::<f64>();
        assert!((g - w).norm() <= bound, "sum of {} points: {g} vs {w}", big.len());
    }
}

/// A complex reduction from a start other than its identity (`initial=`, `v + 0i`) is compiled
/// (the JIT's both schedules, one thread and two) and within the reductions' bound of the
/// interpreter, whole-array (chunked where long) and along an axis.
#[test]
fn a_complex_reduction_with_an_initial_value_is_compiled() {
    let z = ndarray::Array2::from_shape_fn((3, 4), |(r, c)| Complex64::new(r as f64 + 0.5, c as f64 - 1.0));
    let long: Array1<Complex64> = (0..5000)
        .map(|k| Complex64::from_polar(1.0 + 1e-4 * (k as f64).sin(), k as f64 * 0.1))
        .collect();
    let narrow = z.mapv(|c| Complex32::new(c.re as f32, c.im as f32));
    let long32 = long.mapv(|c| Complex32::new(c.re as f32, c.im as f32));
    let cases: [(&str, ArrayArg<'_>, f64); 4] = [
        ("complex128", (&z).into(), f64::EPSILON),
        ("complex64", (&narrow).into(), f64::from(f32::EPSILON)),
        ("complex128 long", (&long).into(), f64::EPSILON),
        ("complex64 long", (&long32).into(), f64::from(f32::EPSILON)),
    ];
    for (what, arg, eps) in cases {
        let args = [("z", arg)];
        let terms = args[0].1.shape().iter().product::<usize>() as f64 + 1.0;
        for expr in [
            "sum(z, initial=2)",
            "sum(z, initial=-0.0)",
            "sum(z, axis=-1, initial=-1.5)",
            "prod(z, initial=3)",
            "prod(z, axis=0, initial=-2)",
        ] {
            if what.ends_with("long") && expr.contains("axis") {
                continue;
            }
            let want = FusedRunner::compile_text(expr)
                .unwrap()
                .with_backend(kiln::interpreter())
                .run(&args)
                .unwrap_or_else(|e| panic!("{expr} interpreted: {e}"));
            let w = exact_values(&want);
            for backend in ["jit", "jit-scalar"] {
                for threads in [1, 2] {
                    let got = compiled_run(expr, backend, threads, &args, what);
                    assert_eq!(got.dtype_name(), want.dtype_name(), "{what} {expr}");
                    let g = exact_values(&got);
                    for k in 0..w.len() {
                        // the terms' moduli are at most 4 (the long ones about 1), the starts' 3
                        let scale = if expr.starts_with("sum") {
                            4.0 * terms + 3.0
                        } else {
                            3.0 * w[k].norm().max(1.0)
                        };
                        let bound = 8.0 * terms * eps * scale;
                        assert!(
                            (g[k] - w[k]).norm() <= bound,
                            "{what} {expr} on {backend}, {threads} threads, at {k}: compiled {}, interpreted {}",
                            g[k],
                            w[k]
                        );
                    }
                }
            }
        }
    }
}

/// Cumulative sums and products of complex values compiled (the JIT's both schedules, one thread
/// and two) give the interpreter's bits (any NaN equal to any NaN), flattened and along each axis,
/// reversed, exclusive and from an `initial`, from views, over edge values and empty.
#[test]
fn compiled_complex_scans_equal_the_interpreter_bit_for_bit() {
    use ndarray::{Array2, s};
    let parts = [
        0.0,
        -0.0,
        1.0,
        -1.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.25,
        1e-310,
        7.0,
    ];
    let z: Array2<Complex64> = Array2::from_shape_fn((9, 11), |(r, c)| {
        let k = r * 11 + c;
        Complex64::new(
            parts[k % parts.len()],
            parts[(3 * k + k / parts.len()) % parts.len()],
        )
    });
    let narrow = z.mapv(|c| Complex32::new(c.re as f32, c.im as f32));
    let same = |a: f64, b: f64| a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan());
    let mut checked = 0;
    for (dtype, views) in [
        (
            "complex128",
            vec![
                ("whole", ArrayArg::from(&z)),
                ("strided", z.slice(s![..;2, ..;-3]).into()),
                ("transposed", z.t().into()),
                ("empty", z.slice(s![..0, ..]).into()),
            ],
        ),
        (
            "complex64",
            vec![
                ("whole", ArrayArg::from(&narrow)),
                ("strided", narrow.slice(s![1..;2, ..;3]).into()),
                ("transposed", narrow.t().into()),
            ],
        ),
    ] {
        for (what, arg) in views {
            let args = [("z", arg)];
            for expr in [
                "cumsum(z)",
                "cumprod(z)",
                "cumsum(z, axis=0)",
                "cumprod(z, axis=1)",
                "cumsum(z * 2 - 1j, axis=1, reverse=1)",
                "cumprod(z, axis=0, exclusive=1)",
                "cumsum(z, exclusive=1, initial=2.5)",
                "cumprod(z, axis=1, initial=-2, reverse=1)",
            ] {
                let want = FusedRunner::compile_text(expr)
                    .unwrap()
                    .with_backend(kiln::interpreter())
                    .run(&args)
                    .unwrap_or_else(|e| panic!("{expr} interpreted: {e}"));
                let w = exact_values(&want);
                for backend in ["jit", "jit-scalar"] {
                    for threads in [1, 2] {
                        let got = compiled_run(expr, backend, threads, &args, &format!("{dtype} {what}"));
                        assert_eq!(got.dtype_name(), want.dtype_name(), "{dtype} {expr} {what}");
                        assert_eq!(got.shape(), want.shape(), "{dtype} {expr} {what}");
                        let g = exact_values(&got);
                        for k in 0..w.len() {
                            assert!(
                                same(g[k].re, w[k].re) && same(g[k].im, w[k].im),
                                "{dtype} {expr} {what} on {backend}, {threads} threads, at {k}: compiled {}, interpreted {}",
                                g[k],
                                w[k]
                            );
                        }
                        checked += 1;
                    }
                }
            }
        }
    }
    assert!(checked >= 100, "only {checked} scans checked");
}

/// `explain` of a kernel that reads an earlier kernel's complex result (`sum(z, axis=0) * 2`)
/// shows the typed kernel the run compiles, reading a complex input, not a float kernel of a
/// float64 stand-in.
#[test]
fn explain_reads_an_earlier_complex_result_as_complex() {
    use ndarray::Array2;
    let z: Array2<Complex64> = Array2::from_shape_fn((4, 3), |(r, c)| Complex64::new(r as f64, c as f64));
    let y = z.mapv(|c| Complex32::new(c.re as f32, c.im as f32));
    for (dtype, arg, want) in [
        ("complex128", ArrayArg::from(&z), kiln::ElemType::C128),
        ("complex64", ArrayArg::from(&y), kiln::ElemType::C64),
    ] {
        for expr in ["sum(z, axis=0) * 2", "mean(z, axis=1) + 1j", "prod(z) * z"] {
            let runner = FusedRunner::compile_text(expr).unwrap();
            let kernels = runner.explain_kernels(&[("z", arg.clone())]).unwrap();
            let last = kernels.last().unwrap();
            let typed = last
                .typed
                .as_ref()
                .unwrap_or_else(|| panic!("{dtype} {expr}: the last kernel is not typed: {:?}", last.engine));
            assert_eq!(last.engine, kiln::Engine::TypedCompiled, "{dtype} {expr}");
            assert_eq!(typed.output_type(), want, "{dtype} {expr}");
            assert!(
                typed.input_types.iter().all(|&t| t == want),
                "{dtype} {expr}: inputs {:?}",
                typed.input_types
            );
        }
    }
}

/// A reduction of complex values from an `initial`, and a complex scan, are compiled, and
/// `explain` says so.
#[test]
fn explain_says_complex_scans_and_reductions_from_initial_are_compiled() {
    let z: Array1<Complex64> = (0..7).map(|k| Complex64::new(k as f64, 1.0)).collect();
    let args = [("z", ArrayArg::from(&z))];
    for expr in [
        "sum(z, initial=1)",
        "prod(z, initial=-2)",
        "sum(z)",
        "cumsum(z)",
        "cumprod(z, exclusive=1)",
    ] {
        let kernels = FusedRunner::compile_text(expr)
            .unwrap()
            .explain_kernels(&args)
            .unwrap();
        assert_eq!(kernels[0].engine, kiln::Engine::TypedCompiled, "{expr}");
        let note = kernels[0].engine_note.clone().unwrap_or_default();
        assert!(note.starts_with("compiled"), "{expr}: {note}");
        if expr.starts_with("cum") {
            assert!(note.contains("a state of both parts"), "{expr}: {note}");
        }
    }
}
