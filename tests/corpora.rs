//! External correctness corpora, run on kiln's default (interpreter) backend:
//!
//! - numexpr's own test expressions (`tests/data/numexpr_cases.txt`, made by
//!   `tests/gen/make_numexpr_cases.py` from `tests/data/numexpr_test_expressions.csv`) on numexpr's
//!   inputs, for f64 and f32 and numexpr's three `test_scalar` variants, against the values NumPy
//!   gives;
//! - NumPy's `maximum` / `minimum` NaN, precision and reduce cases (`tests/data/numpy_minmax_*.csv`);
//! - NumPy's special-value table for the functions kiln has (`tests/data/numpy_special_values.csv`).
//!
//! The CSV files are rows copied from upstream test suites by `tests/gen/copy_corpora.py`; each starts
//! with a header naming the upstream repository, path, commit and license. Every failure is reported,
//! not just the first.

#[path = "gen/fixture.rs"]
mod fixture;

use fixture::{Check, Expected, Values};
use kiln::kiln_ir::ElemType;
use kiln::{ArrayArg, Float, FusedRunner, Output};
use ndarray::{Array1, Array2, ArrayD, ArrayViewD, Axis, IxDyn, s};

// ---------------------------------------------------------------------------------------------
// numexpr's test expressions

const NUMEXPR_CASES: &str = include_str!("data/numexpr_cases.txt");

/// (expression, dtype, reason): where kiln deliberately differs from NumPy (a design decision). Each
/// must still fail in every test_scalar variant: when one passes, the test says so. A bug is not
/// listed here: its case fails until it is fixed.
const NUMEXPR_KNOWN_DIVERGENCES: &[(&str, &str, &str)] = &[(
    "2*a + (cos(3)+5)*sinh(cos(b))",
    "float32",
    "kiln folds `cos(3)+5` in f64 to a strong float64, as NumPy 2 makes `cos(3)`, so the result \
         is float64 as NumPy's; but kiln then computes the whole kernel in f64, `sinh(cos(b))` \
         included, where NumPy computes `sinh(cos(b))` in float32 and only then promotes",
)];

/// numexpr's inputs (`test_numexpr.py`, `test_expressions`): `a = arange(200)[::2]` (a strided
/// view), `a2 = zeros((100, 100))`, `b = arange(100) / 100`, `c = d = e = arange(100)`.
struct NumexprInputs<T> {
    a_full: Array1<T>,
    a2: Array2<T>,
    b: Array1<T>,
    c: Array1<T>,
}

impl<T: Float> NumexprInputs<T> {
    fn new() -> Self {
        let n = |i: usize| T::from_f64(i as f64);
        NumexprInputs {
            a_full: Array1::from_shape_fn(200, n),
            a2: Array2::from_elem((100, 100), T::ZERO),
            // computed in T, as NumPy divides an array of dtype T by the Python int 100
            b: Array1::from_shape_fn(100, |i| n(i) / n(100)),
            c: Array1::from_shape_fn(100, n),
        }
    }

    /// The named inputs for `test_scalar` 0 (all arrays), 1 (`a = a[50]`, 0-d) or 2 (`b = b[50]`).
    fn args(&self, test_scalar: u32) -> Vec<(&'static str, ArrayArg<'_>)> {
        let a = self.a_full.slice(s![..;2]);
        assert_eq!(a.strides(), &[2], "a is a strided view");
        let a: ArrayArg<'_> = if test_scalar == 1 {
            a.index_axis_move(Axis(0), 50).into()
        } else {
            a.into()
        };
        let b: ArrayArg<'_> = if test_scalar == 2 {
            self.b.view().index_axis_move(Axis(0), 50).into()
        } else {
            (&self.b).into()
        };
        vec![
            ("a", a),
            ("a2", (&self.a2).into()),
            ("b", b),
            ("c", (&self.c).into()),
            ("d", (&self.c).into()),
            ("e", (&self.c).into()),
        ]
    }
}

#[test]
fn numexpr_expressions() {
    let cases = fixture::parse(NUMEXPR_CASES);
    let f64s = NumexprInputs::<f64>::new();
    let f32s = NumexprInputs::<f32>::new();
    let mut failures = Vec::new();
    let (mut ran, mut known_failing, mut skipped) = (0, 0, 0);
    for case in &cases {
        if case.name == "skipped" {
            // what kiln's language lacks must be refused, not silently computed
            for (why, expr) in &case.skips {
                skipped += 1;
                if let Ok(runner) = FusedRunner::compile_text(expr) {
                    let ok = runner.run(&f64s.args(0)).is_ok();
                    failures.push(format!(
                        "`{expr}` was skipped ({why}) but kiln now compiles it (runs: {ok}): \
                         add it to tests/gen/make_numexpr_cases.py"
                    ));
                }
            }
            continue;
        }
        ran += 1;
        let dtype = case.meta("dtype").expect("meta dtype");
        let scalar: u32 = case
            .meta("scalar")
            .and_then(|s| s.parse().ok())
            .expect("meta scalar");
        let args = if dtype == "float32" {
            f32s.args(scalar)
        } else {
            f64s.args(scalar)
        };
        let want = case.out.as_ref().expect("out");
        let result = FusedRunner::compile_text(&case.expr)
            .and_then(|r| r.run(&args))
            .map_err(|e| format!("error: {e}"))
            .and_then(|out| fixture::compare(&out, want, case.check, case.zeros_any));
        let known = NUMEXPR_KNOWN_DIVERGENCES
            .iter()
            .find(|(e, d, _)| *e == case.expr && *d == dtype);
        let what = format!(
            "{} [{}] `{}` ({dtype}, test_scalar {scalar})",
            case.name,
            case.meta("section").unwrap_or(""),
            case.expr
        );
        match (result, known) {
            (Ok(()), None) => {}
            (Ok(()), Some((_, _, why))) => failures.push(format!(
                "{what}\n    now agrees with NumPy: take it off NUMEXPR_KNOWN_DIVERGENCES ({why})"
            )),
            (Err(_), Some(_)) => known_failing += 1,
            (Err(e), None) => failures.push(format!("{what}\n    {e}")),
        }
    }
    eprintln!(
        "numexpr corpus: {ran} cases run, {known_failing} known divergences, {skipped} expressions skipped, {} failures",
        failures.len()
    );
    for (expr, dtype, _) in NUMEXPR_KNOWN_DIVERGENCES {
        assert!(
            cases
                .iter()
                .any(|c| c.expr == *expr && c.meta("dtype") == Some(dtype)),
            "NUMEXPR_KNOWN_DIVERGENCES names no case `{expr}` ({dtype})"
        );
    }
    assert!(ran >= 400, "only {ran} numexpr cases");
    assert!(
        failures.is_empty(),
        "{} numexpr corpus failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// CSV rows copied from upstream

/// The rows of a copied CSV file (header comment lines and the column header row dropped), each as
/// (column name, field) pairs. Fields may be double-quoted, as Python's csv module writes them.
fn csv_rows(text: &str) -> Vec<Vec<(String, String)>> {
    let mut lines = text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty());
    let header = split_csv(lines.next().expect("a header row"));
    lines
        .map(|l| {
            let fields = split_csv(l);
            assert_eq!(fields.len(), header.len(), "row {l}");
            header.iter().cloned().zip(fields).collect()
        })
        .collect()
}

fn split_csv(line: &str) -> Vec<String> {
    let (mut fields, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    let mut chars = line.chars().peekable();
    while let Some(ch) = chars.next() {
        match ch {
            '"' if quoted && chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            ',' if !quoted => fields.push(std::mem::take(&mut cur)),
            _ => cur.push(ch),
        }
    }
    fields.push(cur);
    fields
}

fn field<'a>(row: &'a [(String, String)], name: &str) -> &'a str {
    row.iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("no column {name}"))
}

fn bits(s: &str) -> f64 {
    f64::from_bits(u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex bits"))
}

/// A decimal as Python prints a float (`nan`, `inf`, `-0.0`, `1.7976931348623157e+308`, `10`).
fn decimal(s: &str) -> f64 {
    s.parse().unwrap_or_else(|_| panic!("bad number {s}"))
}

/// Whether `v` survives a round trip through f32 (NaN does).
fn fits_f32(v: f64) -> bool {
    v.is_nan() || (v as f32) as f64 == v
}

/// Runs `expr` on `inputs` (all of one float type) and compares the result, of the first input's
/// shape, with `want` exactly: any NaN equals any NaN, the sign of zero counts.
fn check_exact<T: Float>(
    expr: &str,
    inputs: &[(&str, ArrayViewD<'_, T>)],
    want: &[f64],
) -> Result<(), String> {
    let args: Vec<(&str, ArrayArg<'_>)> = inputs.iter().map(|(n, v)| (*n, T::arg(v.view()))).collect();
    let out = FusedRunner::compile_text(expr)
        .and_then(|r| r.run(&args))
        .map_err(|e| format!("error: {e}"))?;
    let (dtype, values) = if T::DTYPE == ElemType::F64 {
        ("float64", Values::F64(want.to_vec()))
    } else {
        ("float32", Values::F32(to_f32(want)))
    };
    let want = Expected {
        dtype: dtype.into(),
        shape: inputs[0].1.shape().to_vec(),
        values,
    };
    fixture::compare(&out, &want, Check::Exact, false)
}

fn to_f32(v: &[f64]) -> Vec<f32> {
    v.iter().map(|&x| x as f32).collect()
}

// ---------------------------------------------------------------------------------------------
// NumPy maximum / minimum

const MINMAX_NAN: &str = include_str!("data/numpy_minmax_nan_cases.csv");
const MINMAX_REDUCE: &str = include_str!("data/numpy_minmax_reduce_cases.csv");

#[test]
fn numpy_minmax_elementwise() {
    let rows = csv_rows(MINMAX_NAN);
    assert_eq!(rows.len(), 30);
    let mut failures = Vec::new();
    let mut ops: Vec<&str> = Vec::new();
    for row in &rows {
        let op = field(row, "op");
        assert!(op == "maximum" || op == "minimum", "{op}");
        let (x, y, want) = (
            bits(field(row, "x_bits")),
            bits(field(row, "y_bits")),
            decimal(field(row, "expected")),
        );
        assert!(
            x.is_nan() || x.to_bits() == decimal(field(row, "x")).to_bits(),
            "the x and x_bits columns agree"
        );
        let expr = format!("{op}(x, y)");
        let what = format!(
            "{expr} with x = {x:e} ({:016x}), y = {y:e} ({:016x}) [{}]",
            x.to_bits(),
            y.to_bits(),
            field(row, "numpy_test")
        );
        // one element, as 0-d arrays
        let (xa, ya) = (ArrayD::from_elem(IxDyn(&[]), x), ArrayD::from_elem(IxDyn(&[]), y));
        if let Err(e) = check_exact(&expr, &[("x", xa.view()), ("y", ya.view())], &[want]) {
            failures.push(format!("{what} (f64): {e}"));
        }
        // float32, where the row's values are float32 values
        if fits_f32(x) && fits_f32(y) && fits_f32(want) {
            let (xa, ya) = (xa.mapv(|v| v as f32), ya.mapv(|v| v as f32));
            if let Err(e) = check_exact(&expr, &[("x", xa.view()), ("y", ya.view())], &[want]) {
                failures.push(format!("{what} (f32): {e}"));
            }
        }
        if !ops.contains(&op) {
            ops.push(op);
        }
    }
    // every row of an op at once, with x a strided view and y reversed (upstream's test_strided_array)
    for op in ops {
        let mine: Vec<_> = rows.iter().filter(|r| field(r, "op") == op).collect();
        let n = mine.len();
        let xs: Vec<f64> = mine.iter().map(|r| bits(field(r, "x_bits"))).collect();
        let ys: Vec<f64> = mine.iter().map(|r| bits(field(r, "y_bits"))).collect();
        let want: Vec<f64> = mine.iter().map(|r| decimal(field(r, "expected"))).collect();
        let x_long = Array1::from_shape_fn(2 * n, |i| if i % 2 == 0 { xs[i / 2] } else { -7777.0 });
        let y_rev: Array1<f64> = ys.iter().rev().copied().collect();
        let (x, y) = (
            x_long.slice(s![..;2]).into_dyn(),
            y_rev.slice(s![..;-1]).into_dyn(),
        );
        if let Err(e) = check_exact(&format!("{op}(x, y)"), &[("x", x), ("y", y)], &want) {
            failures.push(format!("{op}(x, y) over all {n} rows, strided (f64): {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} NumPy minimum/maximum failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn numpy_minmax_reduce() {
    let rows = csv_rows(MINMAX_REDUCE);
    assert_eq!(rows.len(), 8);
    let mut failures = Vec::new();
    for row in &rows {
        let (op, input, want) = (
            field(row, "reduce_op"),
            field(row, "input"),
            decimal(field(row, "expected")),
        );
        let expr = match op {
            "maximum" => "max(x)",
            "minimum" => "min(x)",
            other => panic!("unexpected reduce_op {other}"),
        };
        // the four inputs upstream builds, recognised from their description
        let reversed = input.starts_with("arange(11)[::-1] as float");
        let with_nan = input.contains("every even index") && input.ends_with("set to nan");
        let plain = matches!(input, "arange(11) as float" | "arange(11)[::-1] as float");
        assert!(plain || with_nan, "unknown input description '{input}'");
        let mut base = Array1::from_shape_fn(11, |i| i as f64);
        if with_nan {
            // the even indices of the array as upstream builds it (after reversing, if it does)
            for i in (0..11).step_by(2) {
                let at = if reversed { 10 - i } else { i };
                base[at] = f64::NAN;
            }
        }
        // upstream reverses with [::-1] and copies (astype); here the reversed input is a view with a
        // negative stride, which exercises kiln's handling of one
        let base32 = base.mapv(|v| v as f32);
        let (view, view32) = if reversed {
            (base.slice(s![..;-1]), base32.slice(s![..;-1]))
        } else {
            (base.view(), base32.view())
        };
        let check = |out: kiln::Result<Output>, dtype: &str| -> Result<(), String> {
            let out = out.map_err(|e| format!("error: {e}"))?;
            let values = if dtype == "float64" {
                Values::F64(vec![want])
            } else {
                Values::F32(vec![want as f32])
            };
            fixture::compare(
                &out,
                &Expected {
                    dtype: dtype.into(),
                    shape: vec![],
                    values,
                },
                Check::Exact,
                false,
            )
        };
        let runner = FusedRunner::compile_text(expr).expect("compiles");
        if let Err(e) = check(runner.run(&[("x", view.into())]), "float64") {
            failures.push(format!("{expr} of {input} (f64): {e}"));
        }
        if let Err(e) = check(runner.run(&[("x", view32.into())]), "float32") {
            failures.push(format!("{expr} of {input} (f32): {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} NumPy min/max reduce failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------------
// NumPy special values

const SPECIAL_VALUES: &str = include_str!("data/numpy_special_values.csv");

/// The kiln expressions that compute NumPy's function `f` of `x`.
fn special_exprs(f: &str) -> &'static [&'static str] {
    match f {
        "exp" => &["exp(x)"],
        "log" => &["log(x)"],
        "sin" => &["sin(x)"],
        "cos" => &["cos(x)"],
        "tan" => &["tan(x)"],
        "sqrt" => &["sqrt(x)", "x ** 0.5"],
        "abs" => &["abs(x)"],
        "reciprocal" => &["1 / x", "x ** -1"],
        "square" => &["x * x", "x ** 2"],
        "log2" => &["log2(x)"],
        "log10" => &["log10(x)"],
        "log1p" => &["log1p(x)"],
        "arcsin" => &["arcsin(x)"],
        "arccos" => &["arccos(x)"],
        "arctan" => &["arctan(x)"],
        "sinh" => &["sinh(x)"],
        "cosh" => &["cosh(x)"],
        "tanh" => &["tanh(x)"],
        other => panic!("no kiln expression for {other}"),
    }
}

/// The functions of NumPy's special-value table that kiln does not have (their rows are not copied).
const SPECIAL_NOT_IN_KILN: &[&str] = &[];

#[test]
fn numpy_special_values() {
    let rows = csv_rows(SPECIAL_VALUES);
    assert_eq!(rows.len(), 87);
    let mut failures = Vec::new();
    let mut fns: Vec<&str> = Vec::new();
    for row in &rows {
        let f = field(row, "fn");
        let (x, want) = (bits(field(row, "input_bits")), decimal(field(row, "expected")));
        for expr in special_exprs(f) {
            let x0 = ArrayD::from_elem(IxDyn(&[]), x);
            let what = format!(
                "{expr} with x = {} ({:016x}) [{}]",
                field(row, "input"),
                x.to_bits(),
                field(row, "numpy_test")
            );
            if let Err(e) = check_exact(expr, &[("x", x0.view())], &[want]) {
                failures.push(format!("{what} (f64): {e}"));
            }
            let x0 = x0.mapv(|v| v as f32);
            if let Err(e) = check_exact(expr, &[("x", x0.view())], &[want]) {
                failures.push(format!("{what} (f32): {e}"));
            }
        }
        if !fns.contains(&f) {
            fns.push(f);
        }
    }
    // each function's rows at once, as one array
    for f in fns {
        let mine: Vec<_> = rows.iter().filter(|r| field(r, "fn") == f).collect();
        let xs: Vec<f64> = mine.iter().map(|r| bits(field(r, "input_bits"))).collect();
        let want: Vec<f64> = mine.iter().map(|r| decimal(field(r, "expected"))).collect();
        for expr in special_exprs(f) {
            let x = ArrayD::from_shape_vec(IxDyn(&[xs.len()]), xs.clone()).unwrap();
            if let Err(e) = check_exact(expr, &[("x", x.view())], &want) {
                failures.push(format!("{expr} over all {} rows (f64): {e}", xs.len()));
            }
            let x = ArrayD::from_shape_vec(IxDyn(&[xs.len()]), to_f32(&xs)).unwrap();
            if let Err(e) = check_exact(expr, &[("x", x.view())], &want) {
                failures.push(format!("{expr} over all {} rows (f32): {e}", xs.len()));
            }
        }
    }
    for f in SPECIAL_NOT_IN_KILN {
        assert!(
            FusedRunner::compile_text(&format!("{f}(x)")).is_err(),
            "kiln now has {f}: copy its rows of numpy_special_values.csv (tests/gen/copy_corpora.py)"
        );
    }
    assert!(
        failures.is_empty(),
        "{} NumPy special-value failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
