//! The reader of the fixture files that the generators in this folder write (format: see
//! `tests/gen/fixture.py`), and the comparison of a kiln [`Output`] with an expected result.
//!
//! Shared by `tests/numpy_parity.rs` and `tests/corpora.rs` through `#[path]`; no dependencies.

#![allow(dead_code)]

use kiln::{ArrayArg, Output};
use ndarray::{ArrayD, ArrayViewD, Axis, IxDyn, ShapeBuilder, Slice};

/// Element values of an input or an expected result, in logical C order.
#[derive(Debug, Clone)]
pub enum Values {
    F64(Vec<f64>),
    F32(Vec<f32>),
    I64(Vec<i64>),
    Bool(Vec<bool>),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::F64(v) => v.len(),
            Values::F32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::Bool(v) => v.len(),
        }
    }
}

/// How an input's memory is laid out (its logical values are the same whatever the layout).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// C order.
    C,
    /// Fortran order.
    F,
    /// Every other element of an axis 0 twice as long (a positive stride of 2 rows).
    Step,
    /// Axis 0 reversed (a negative stride).
    Rev,
}

/// An input array, held in memory laid out as its [`Layout`] says.
#[derive(Debug, Clone)]
pub struct Input {
    pub name: String,
    pub layout: Layout,
    backing: Backing,
}

#[derive(Debug, Clone)]
enum Backing {
    F64(ArrayD<f64>),
    F32(ArrayD<f32>),
}

/// The filler of the rows a `step` view skips: reading one of them is a bug that shows.
const SKIPPED: f64 = -7777.0;

fn backing<T: Copy + From<f32>>(shape: &[usize], values: Vec<T>, layout: Layout) -> ArrayD<T> {
    let c = ArrayD::from_shape_vec(IxDyn(shape), values).expect("value count matches the shape");
    match layout {
        Layout::C => c,
        Layout::F => {
            let mut f = ArrayD::from_elem(IxDyn(shape).f(), T::from(0.0));
            f.assign(&c);
            f
        }
        Layout::Step => {
            let mut long = shape.to_vec();
            long[0] *= 2;
            let mut b = ArrayD::from_elem(IxDyn(&long), T::from(SKIPPED as f32));
            b.slice_axis_mut(Axis(0), Slice::new(0, None, 2)).assign(&c);
            b
        }
        Layout::Rev => c.slice_axis(Axis(0), Slice::new(0, None, -1)).to_owned(),
    }
}

fn view<T>(b: &ArrayD<T>, layout: Layout) -> ArrayViewD<'_, T> {
    match layout {
        Layout::C | Layout::F => b.view(),
        Layout::Step => b.slice_axis(Axis(0), Slice::new(0, None, 2)),
        Layout::Rev => b.slice_axis(Axis(0), Slice::new(0, None, -1)),
    }
}

impl Input {
    pub fn new_f64(name: &str, shape: &[usize], values: Vec<f64>, layout: Layout) -> Input {
        Input {
            name: name.into(),
            layout,
            backing: Backing::F64(backing(shape, values, layout)),
        }
    }

    pub fn new_f32(name: &str, shape: &[usize], values: Vec<f32>, layout: Layout) -> Input {
        Input {
            name: name.into(),
            layout,
            backing: Backing::F32(backing(shape, values, layout)),
        }
    }

    /// The input as kiln takes it: a view with this input's layout.
    pub fn arg(&self) -> ArrayArg<'_> {
        match &self.backing {
            Backing::F64(b) => view(b, self.layout).into(),
            Backing::F32(b) => view(b, self.layout).into(),
        }
    }

    /// `name shape dtype layout`, for failure messages.
    pub fn describe(&self) -> String {
        let a = self.arg();
        format!("{}: {} {:?} {:?}", self.name, a.dtype(), a.shape(), self.layout)
    }
}

/// An expected result.
#[derive(Debug, Clone)]
pub struct Expected {
    /// NumPy's name: float64, float32, int64 or bool.
    pub dtype: String,
    pub shape: Vec<usize>,
    pub values: Values,
}

/// How a float result is compared.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Check {
    /// Bit for bit (any NaN equals any NaN; the sign of zero counts).
    Exact,
    /// Within this many units in the last place (NaN, infinities and the sign of zero exact).
    Ulp(u64),
    /// `|got - want| <= atol + rtol * |want|` (NaN, infinities and the sign of zero exact).
    Close { rtol: f64, atol: f64 },
}

/// One case of a fixture file.
#[derive(Debug, Clone)]
pub struct Case {
    pub name: String,
    /// The line of `case` in the file.
    pub line: usize,
    pub meta: Vec<(String, String)>,
    pub expr: String,
    pub inputs: Vec<Input>,
    pub out: Option<Expected>,
    pub check: Check,
    /// +0.0 and -0.0 compare equal (NumPy does not pin which zero minimum/maximum return).
    pub zeros_any: bool,
    /// The run must fail, with a message containing each of these.
    pub err: Option<Vec<String>>,
    /// Expressions recorded as not run: (reason, expression).
    pub skips: Vec<(String, String)>,
}

impl Case {
    pub fn meta(&self, key: &str) -> Option<&str> {
        self.meta.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// The inputs as `FusedRunner::run` takes them.
    pub fn args(&self) -> Vec<(&str, ArrayArg<'_>)> {
        self.inputs.iter().map(|i| (i.name.as_str(), i.arg())).collect()
    }
}

fn parse_shape(s: &str) -> Vec<usize> {
    let inner = s
        .strip_prefix('[')
        .and_then(|s| s.strip_suffix(']'))
        .unwrap_or_else(|| panic!("bad shape {s}"));
    if inner.is_empty() {
        return vec![];
    }
    inner
        .split(',')
        .map(|d| d.parse().unwrap_or_else(|_| panic!("bad shape {s}")))
        .collect()
}

/// Expands `tok` or `tok*N` tokens.
fn tokens<'a>(toks: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out = Vec::new();
    for t in toks {
        match t.split_once('*') {
            Some((v, n)) => {
                let n: usize = n.parse().unwrap_or_else(|_| panic!("bad repeat {t}"));
                out.extend(std::iter::repeat_n(v, n));
            }
            None => out.push(t),
        }
    }
    out
}

fn parse_values<'a>(dtype: &str, toks: impl Iterator<Item = &'a str>) -> Values {
    let toks = tokens(toks);
    // the bit pattern in hex, its trailing zero digits left out
    let hex = |t: &str, width: usize| {
        assert!(!t.is_empty() && t.len() <= width, "bad float bits {t}");
        u64::from_str_radix(t, 16).unwrap_or_else(|_| panic!("bad float bits {t}")) << (4 * (width - t.len()))
    };
    let hex64 = |t: &str| f64::from_bits(hex(t, 16));
    let hex32 = |t: &str| f32::from_bits(hex(t, 8) as u32);
    match dtype {
        "f64" | "float64" => Values::F64(toks.iter().map(|t| hex64(t)).collect()),
        "f32" | "float32" => Values::F32(toks.iter().map(|t| hex32(t)).collect()),
        "int64" => Values::I64(
            toks.iter()
                .map(|t| t.parse().unwrap_or_else(|_| panic!("bad int {t}")))
                .collect(),
        ),
        "bool" => Values::Bool(
            toks.iter()
                .map(|t| match *t {
                    "0" => false,
                    "1" => true,
                    _ => panic!("bad bool {t}"),
                })
                .collect(),
        ),
        other => panic!("unknown dtype {other}"),
    }
}

/// Parses a fixture file.
pub fn parse(text: &str) -> Vec<Case> {
    let mut cases = Vec::new();
    let mut cur: Option<Case> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (kw, rest) = line.split_once(' ').unwrap_or((line, ""));
        if kw == "case" {
            assert!(cur.is_none(), "line {}: case inside a case", i + 1);
            cur = Some(Case {
                name: rest.to_string(),
                line: i + 1,
                meta: vec![],
                expr: String::new(),
                inputs: vec![],
                out: None,
                check: Check::Exact,
                zeros_any: false,
                err: None,
                skips: vec![],
            });
            continue;
        }
        let c = cur
            .as_mut()
            .unwrap_or_else(|| panic!("line {}: '{kw}' outside a case", i + 1));
        match kw {
            "meta" => {
                let (k, v) = rest.split_once(' ').unwrap_or((rest, ""));
                c.meta.push((k.to_string(), v.to_string()));
            }
            "expr" => c.expr = rest.to_string(),
            "in" => {
                let mut it = rest.split_ascii_whitespace();
                let name = it.next().expect("input name");
                let dtype = it.next().expect("input dtype");
                let shape = parse_shape(it.next().expect("input shape"));
                let layout = match it.next().expect("input layout") {
                    "c" => Layout::C,
                    "f" => Layout::F,
                    "step" => Layout::Step,
                    "rev" => Layout::Rev,
                    other => panic!("line {}: unknown layout {other}", i + 1),
                };
                let input = match parse_values(dtype, it) {
                    Values::F64(v) => Input::new_f64(name, &shape, v, layout),
                    Values::F32(v) => Input::new_f32(name, &shape, v, layout),
                    _ => panic!("line {}: inputs are f64 or f32", i + 1),
                };
                c.inputs.push(input);
            }
            "out" => {
                let mut it = rest.split_ascii_whitespace();
                let dtype = it.next().expect("output dtype").to_string();
                let shape = parse_shape(it.next().expect("output shape"));
                let values = parse_values(&dtype, it);
                assert_eq!(
                    values.len(),
                    shape.iter().product::<usize>(),
                    "line {}: value count",
                    i + 1
                );
                c.out = Some(Expected { dtype, shape, values });
            }
            "check" => {
                let mut it = rest.split_ascii_whitespace();
                c.check = match it.next() {
                    Some("exact") => Check::Exact,
                    Some("ulp") => Check::Ulp(it.next().and_then(|n| n.parse().ok()).expect("ulp N")),
                    Some("close") => {
                        let mut f = || {
                            it.next()
                                .and_then(|n| n.parse::<f64>().ok())
                                .expect("close RTOL ATOL")
                        };
                        let rtol = f();
                        let atol = f();
                        Check::Close { rtol, atol }
                    }
                    other => panic!("line {}: unknown check {other:?}", i + 1),
                };
                c.zeros_any = it.next() == Some("zeros_any");
            }
            "err" => c.err = Some(rest.split(" | ").map(|s| s.trim().to_string()).collect()),
            "skip" => {
                let (reason, expr) = rest.split_once(" | ").expect("skip REASON | EXPR");
                c.skips.push((reason.to_string(), expr.to_string()));
            }
            "end" => cases.push(cur.take().expect("in a case")),
            other => panic!("line {}: unknown keyword {other}", i + 1),
        }
    }
    assert!(cur.is_none(), "the last case has no 'end'");
    cases
}

/// A float as its bits on a line of integers where adjacent floats are adjacent (±0 both at 0).
fn ordered(bits: u64, sign: u64) -> i128 {
    let mag = (bits & !sign) as i128;
    if bits & sign != 0 { -mag } else { mag }
}

/// Compares one float; `bits` are the raw bits and `sign` the sign bit of the type.
fn float_ok(got: f64, want: f64, gbits: u64, wbits: u64, sign: u64, check: Check, zeros_any: bool) -> bool {
    if got.is_nan() || want.is_nan() {
        return got.is_nan() && want.is_nan();
    }
    if got == 0.0 && want == 0.0 {
        return zeros_any || gbits == wbits;
    }
    match check {
        Check::Exact => gbits == wbits,
        _ if got.is_infinite() || want.is_infinite() => got == want,
        Check::Ulp(n) => (ordered(gbits, sign) - ordered(wbits, sign)).unsigned_abs() <= n as u128,
        Check::Close { rtol, atol } => (got - want).abs() <= atol + rtol * want.abs(),
    }
}

/// The largest distance in units in the last place between finite elements of a float result and
/// the expectation (0 for other dtypes, or if the dtypes differ).
pub fn max_ulp(got: &Output, want: &Expected) -> u128 {
    let dist = |g: u64, w: u64, sign: u64| (ordered(g, sign) - ordered(w, sign)).unsigned_abs();
    match (got, &want.values) {
        (Output::F64(g), Values::F64(w)) => g
            .iter()
            .zip(w)
            .filter(|(g, w)| g.is_finite() && w.is_finite())
            .map(|(g, w)| dist(g.to_bits(), w.to_bits(), 1 << 63))
            .max()
            .unwrap_or(0),
        (Output::F32(g), Values::F32(w)) => g
            .iter()
            .zip(w)
            .filter(|(g, w)| g.is_finite() && w.is_finite())
            .map(|(g, w)| dist(g.to_bits() as u64, w.to_bits() as u64, 1 << 31))
            .max()
            .unwrap_or(0),
        _ => 0,
    }
}

fn fmt64(v: f64) -> String {
    format!("{v:e} ({:016x})", v.to_bits())
}

fn fmt32(v: f32) -> String {
    format!("{v:e} ({:08x})", v.to_bits())
}

/// Compares a result with the expectation: dtype, shape and every element. Describes the first
/// mismatching elements (at most 5) on failure.
pub fn compare(got: &Output, want: &Expected, check: Check, zeros_any: bool) -> Result<(), String> {
    if got.dtype_name() != want.dtype {
        return Err(format!(
            "dtype: got {}, NumPy gives {}",
            got.dtype_name(),
            want.dtype
        ));
    }
    if got.shape() != want.shape.as_slice() {
        return Err(format!(
            "shape: got {:?}, NumPy gives {:?}",
            got.shape(),
            want.shape
        ));
    }
    let mut bad = Vec::new();
    let mut count = 0;
    let mut note = |i: usize, g: String, w: String| {
        count += 1;
        if bad.len() < 5 {
            bad.push(format!("[{i}] got {g}, want {w}"));
        }
    };
    match (got, &want.values) {
        (Output::F64(g), Values::F64(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                if !float_ok(g, w, g.to_bits(), w.to_bits(), 1 << 63, check, zeros_any) {
                    note(i, fmt64(g), fmt64(w));
                }
            }
        }
        (Output::F32(g), Values::F32(w)) => {
            for (i, (&g, &w)) in g.iter().zip(w).enumerate() {
                let ok = float_ok(
                    g as f64,
                    w as f64,
                    g.to_bits() as u64,
                    w.to_bits() as u64,
                    1 << 31,
                    check,
                    zeros_any,
                );
                if !ok {
                    note(i, fmt32(g), fmt32(w));
                }
            }
        }
        (Output::I64(g), Values::I64(w)) => {
            for (i, (g, w)) in g.iter().zip(w).enumerate() {
                if g != w {
                    note(i, g.to_string(), w.to_string());
                }
            }
        }
        (Output::Bool(g), Values::Bool(w)) => {
            for (i, (g, w)) in g.iter().zip(w).enumerate() {
                if g != w {
                    note(i, g.to_string(), w.to_string());
                }
            }
        }
        _ => unreachable!("dtype names were compared"),
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{count} of {} elements differ ({check:?}): {}",
            want.values.len(),
            bad.join("; ")
        ))
    }
}
