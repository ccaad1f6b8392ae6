//! Scans: NumPy parity on many shapes and axes (committed fixtures from tests/gen/make_scan_cases.py),
//! the shared corner cases (tests/data/scan_cases.csv), JIT against the interpreter, thread-count
//! invariance, and the numerics of the prefix-scan rewrite.

#[macro_use]
mod support;

use kiln::{ArrayArg, FusedRunner, Output, Profile, backend_by_name};
use ndarray::{ArrayD, IxDyn};
use support::{Rng, same_bits};

/// One output as f64s (f32 widened exactly).
fn floats(out: Output) -> Vec<f64> {
    match out {
        Output::F64(a) => a.iter().copied().collect(),
        Output::F32(a) => a.iter().map(|&v| v as f64).collect(),
        other => panic!("not a float result: {other:?}"),
    }
}

backend_suite!(
    scans_match_numpy_on_many_shapes_and_axes,
    scan_corpus_corner_cases,
    cumsum_through_the_triangular_mask_end_to_end,
    a_suffix_scan_regroups_within_its_bound,
);

fn run(expr: &str, backend: &str, x: &ArrayArg<'_>, threads: usize) -> Vec<f64> {
    let runner = FusedRunner::compile_text(expr)
        .unwrap()
        .with_backend(backend_by_name(backend).unwrap())
        .with_threads(threads);
    floats(
        runner
            .run(&[("x", x.clone())])
            .unwrap_or_else(|e| panic!("{expr}: {e}")),
    )
}

struct Case {
    op: String,
    axis: Option<isize>,
    exclusive: bool,
    reverse: bool,
    initial: Option<f64>,
    f32: bool,
    shape: Vec<usize>,
    input: Vec<f64>,
    expected: Vec<f64>,
}

fn parse_values(s: &str) -> Vec<f64> {
    s.split_whitespace().map(|v| v.parse().unwrap()).collect()
}

fn cases() -> Vec<Case> {
    let text = include_str!("data/scan_numpy_cases.txt");
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            Case {
                op: f[0].into(),
                axis: (f[1] != "None").then(|| f[1].parse().unwrap()),
                exclusive: f[2] == "1",
                reverse: f[3] == "1",
                initial: (f[4] != "-").then(|| f[4].parse().unwrap()),
                f32: f[5] == "f32",
                shape: f[6].split(',').map(|d| d.parse().unwrap()).collect(),
                input: parse_values(f[7]),
                expected: parse_values(f[8]),
            }
        })
        .collect()
}

impl Case {
    fn expr(&self) -> String {
        let axis = self.axis.map_or("None".to_string(), |a| a.to_string());
        let mut e = format!(
            "{}(x, axis={axis}, exclusive={}, reverse={}",
            self.op,
            if self.exclusive { "True" } else { "0" },
            if self.reverse { "1" } else { "False" }
        );
        if let Some(v) = self.initial {
            e += &format!(", initial={v:?}");
        }
        e + ")"
    }

    /// Whether the JIT scans this case along the innermost axis (the reassociating vector prefix).
    fn innermost(&self) -> bool {
        match self.axis {
            None => true,
            Some(a) => {
                let a = a.rem_euclid(self.shape.len() as isize) as usize;
                self.shape[a + 1..].iter().product::<usize>() == 1
            }
        }
    }
}

/// The stated bound of the vector prefix of a sum or product: the f64 state reassociated within
/// blocks of at most 4, `(len + 4) * 2^-52` relative to the sum of magnitudes (products: to the
/// value), plus one rounding to f32 for f32 data.
fn within_bound(op: &str, got: f64, want: f64, magnitude: f64, len: usize, f32: bool) -> bool {
    if same_bits(got, want) || (got.is_infinite() && got == want) {
        return true;
    }
    if got.is_nan() || want.is_nan() || got.is_infinite() || want.is_infinite() {
        return false;
    }
    let scale = if op == "cumprod" { want.abs() } else { magnitude };
    let mut bound = (len as f64 + 4.0) * f64::EPSILON * scale;
    if f32 {
        bound += want.abs() * f32::EPSILON as f64;
    }
    (got - want).abs() <= bound
}

fn scans_match_numpy_on_many_shapes_and_axes(backend: &str) {
    let cases = cases();
    assert!(cases.len() > 500);
    let mut failures = Vec::new();
    for c in &cases {
        let a64 = ArrayD::from_shape_vec(IxDyn(&c.shape), c.input.clone()).unwrap();
        let a32 = a64.mapv(|v| v as f32);
        let x: ArrayArg<'_> = if c.f32 { (&a32).into() } else { (&a64).into() };
        let expr = c.expr();
        let got = run(&expr, backend, &x, 1);
        if got.len() != c.expected.len() {
            failures.push(format!(
                "{expr} {backend}: {} values for {}",
                got.len(),
                c.expected.len()
            ));
            continue;
        }
        let exact = backend != "jit" || !c.innermost() || matches!(c.op.as_str(), "cummax" | "cummin");
        let len = got.len();
        for (k, (&g, &w)) in got.iter().zip(&c.expected).enumerate() {
            let ok = if exact {
                same_bits(g, w)
            } else {
                // the magnitudes of the finite values (a non-finite one makes every later output exact)
                let mag: f64 = c
                    .input
                    .iter()
                    .filter(|v| v.is_finite())
                    .map(|v| v.abs())
                    .sum::<f64>()
                    + c.initial.unwrap_or(0.0).abs();
                within_bound(&c.op, g, w, mag, len, c.f32)
            };
            if !ok {
                failures.push(format!(
                    "{expr} {} {backend} shape {:?} [{k}]: got {g:?}, want {w:?}",
                    if c.f32 { "f32" } else { "f64" },
                    c.shape
                ));
                break;
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

/// `[1,2,3]` or `[10,11,...,19]` (an arithmetic run written with an ellipsis).
fn list(s: &str) -> Option<Vec<f64>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    let parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    if let Some(p) = parts.iter().position(|&p| p == "...") {
        let (a, b, last): (f64, f64, f64) = (
            parts[0].parse().ok()?,
            parts[1].parse().ok()?,
            parts[p + 1].parse().ok()?,
        );
        let step = b - a;
        let n = ((last - a) / step).round() as usize + 1;
        return Some((0..n).map(|k| a + step * k as f64).collect());
    }
    if let Some((a, b)) = inner.split_once("..") {
        let (a, b): (i64, i64) = (a.parse().ok()?, b.parse().ok()?);
        return Some((a..=b).map(|v| v as f64).collect());
    }
    parts.iter().map(|p| p.parse().ok()).collect()
}

/// A naive CSV row split (quoted fields may hold commas).
fn csv_row(line: &str) -> Vec<String> {
    let (mut out, mut cur, mut quoted) = (Vec::new(), String::new(), false);
    for ch in line.chars() {
        match ch {
            '"' => quoted = !quoted,
            ',' if !quoted => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

fn scan_corpus_corner_cases(backend: &str) {
    let text = include_str!("data/scan_cases.csv");
    let mut checked = 0;
    for line in text.lines().filter(|l| !l.starts_with('#')).skip(1) {
        let r = csv_row(line);
        let (op, direction, inclusive, init, input, expected) = (&r[1], &r[2], &r[3], &r[4], &r[5], &r[7]);
        let name = match op.as_str() {
            "add" => "cumsum",
            "max" => "cummax",
            "min" => "cummin",
            other => panic!("op {other}"),
        };
        let (shape, data): (Vec<usize>, Vec<f64>) = if let Some(n) = input
            .strip_prefix("ones(Int32,")
            .and_then(|s| s.strip_suffix(')'))
        {
            let n: usize = n.parse().unwrap();
            (vec![n], vec![1.0; n])
        } else if input == "ones(10,10)" {
            (vec![10, 10], vec![1.0; 100])
        } else if input == "x (random)" {
            (
                vec![37],
                (0..37).map(|k| ((k * 7919) % 101) as f64 / 7.0 - 5.0).collect(),
            )
        } else {
            let v = list(&input.replace("nan", "NaN")).expect("a list");
            (vec![v.len()], v)
        };
        let init: f64 = match init.as_str() {
            "init" => 10.0,
            "-inf" => f64::NEG_INFINITY,
            "+inf" => f64::INFINITY,
            v => v.parse().unwrap(),
        };
        // Julia's dims=2 of a 10x10 is along each row's second index; every row the same here
        let axis = if shape.len() == 2 { 1 } else { 0 };
        let expr = format!(
            "{name}(x, axis={axis}, exclusive={}, reverse={}, initial={init:?})",
            if inclusive == "exclusive" { 1 } else { 0 },
            if direction == "backward" { 1 } else { 0 }
        );
        let want: Vec<f64> = if expected.starts_with("(cumsum(x) - x)") {
            let mut s = 0.0;
            data.iter()
                .map(|&v| {
                    s += v;
                    (s - v) + init
                })
                .collect()
        } else if let Some(row) = expected.strip_prefix("every row = ") {
            list(row).unwrap().repeat(10)
        } else {
            // the NaN row: NumPy's maximum.accumulate propagates (the first reading)
            let e = expected.split(" if ").next().unwrap();
            list(&e.replace("nan", "NaN")).expect("expected list")
        };
        let x = ArrayD::from_shape_vec(IxDyn(&shape), data.clone()).unwrap();
        let got = run(&expr, backend, &(&x).into(), 1);
        assert_eq!(got.len(), want.len(), "{expr}");
        for (g, w) in got.iter().zip(&want) {
            assert!(
                same_bits(*g, *w) || (g - w).abs() < 1e-12,
                "{expr} {backend}: {got:?} want {want:?}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 12);
}

#[test]
fn scans_fuse_their_producer_and_ignore_the_thread_count() {
    let n = 300_000;
    let x = ArrayD::from_shape_fn(IxDyn(&[600, n / 600]), |i| {
        ((i[0] * 31 + i[1] * 17) % 97) as f64 / 13.0 - 3.0
    });
    for expr in [
        "cumsum(x*x, axis=1)",
        "cumsum(x*x - 1, axis=0)",
        "cummax(sin(x), axis=1, reverse=1)",
        "cumsum(x*x)",
    ] {
        let runner = FusedRunner::compile_text(expr).unwrap();
        assert_eq!(runner.pipeline().stages.len(), 1, "{expr} is one kernel");
        let one = run(expr, "jit", &(&x).into(), 1);
        let four = FusedRunner::compile_text(expr)
            .unwrap()
            .with_threads(4)
            .with_threshold(0);
        let four = floats(four.run(&[("x", (&x).into())]).unwrap());
        assert!(
            one.iter().zip(&four).all(|(a, b)| same_bits(*a, *b)),
            "{expr}: thread count changed bits"
        );
    }
}

/// The triangular-mask contractions of the rewrite tests: (text, suffix?, op)
const PREFIX: &str = "sum(where(i <= o, x[i], 0), index=(i, o), axis=i)";

fn contraction(expr: &str, profile: Profile, backend: &str, x: &ArrayArg<'_>) -> Vec<f64> {
    let runner = FusedRunner::compile_text(expr)
        .unwrap()
        .with_backend(backend_by_name(backend).unwrap())
        .with_profile(profile);
    floats(runner.run(&[("x", x.clone())]).unwrap())
}

fn cumsum_through_the_triangular_mask_end_to_end(backend: &str) {
    let x = ArrayD::from_shape_vec(IxDyn(&[4]), vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    for profile in [Profile::Default, Profile::Approximate] {
        for expr in [PREFIX, "sum(x[i] * (i <= o), index=(i, o), axis=i)"] {
            assert_eq!(
                contraction(expr, profile, backend, &(&x).into()),
                vec![1.0, 3.0, 6.0, 10.0],
                "{expr} {profile} {backend}"
            );
        }
    }
}

fn random(n: usize, seed: u64) -> Vec<f64> {
    let mut rng = Rng::new(seed);
    (0..n).map(|_| rng.uniform(-10.0, 10.0)).collect()
}

/// In the interpreter the rewrite is bit-exact for max and min; a sum is folded pairwise in the
/// composed form (the interpreter's reductions) and in order by the scan, so the two agree within
/// the bound of a reassociated sum.
#[test]
fn the_rewrite_agrees_with_the_composed_prefix_in_the_interpreter() {
    let v = random(257, 7);
    let x = ArrayD::from_shape_vec(IxDyn(&[257]), v.clone()).unwrap();
    let x32 = x.mapv(|v| v as f32);
    for expr in [
        PREFIX,
        "sum(x[i] * (i < o), index=(i, o), axis=i)",
        "max(where(i <= o, x[i], -inf), index=(i, o), axis=i)",
        "min(where(o > i, x[i], inf), index=(i, o), axis=i)",
        "sum(where(i <= o, x[i] * x[i], 0), index=(i, o), axis=i, initial=3.5)",
    ] {
        for arg in [ArrayArg::from(&x), ArrayArg::from(&x32)] {
            let composed = contraction(expr, Profile::Default, "interp", &arg);
            let scan = contraction(expr, Profile::Approximate, "interp", &arg);
            let mag: f64 = v.iter().map(|x| x * x + x.abs()).sum::<f64>() + 3.5;
            let f32 = arg.dtype() == kiln::kiln_ir::ElemType::F32;
            assert!(
                composed
                    .iter()
                    .zip(&scan)
                    .all(|(a, b)| if expr.starts_with("sum") {
                        within_bound("cumsum", *b, *a, mag, 257, f32)
                    } else {
                        same_bits(*a, *b)
                    }),
                "{expr}"
            );
            // and the compiled scan: exact for max / min, within the bound for sums
            let jit = contraction(expr, Profile::Approximate, "jit", &arg);
            for (g, w) in jit.iter().zip(&composed) {
                assert!(
                    within_bound(
                        "cumsum",
                        *g,
                        *w,
                        mag,
                        257,
                        arg.dtype() == kiln::kiln_ir::ElemType::F32
                    ),
                    "{expr}: {g} vs {w}"
                );
            }
        }
    }
}

fn a_suffix_scan_regroups_within_its_bound(backend: &str) {
    let v = random(1000, 11);
    let x = ArrayD::from_shape_vec(IxDyn(&[1000]), v.clone()).unwrap();
    let expr = "sum(x[i] * (i >= o), index=(i, o), axis=i)";
    let composed = contraction(expr, Profile::Default, "interp", &(&x).into());
    let mag: f64 = v.iter().map(|x| x.abs()).sum();
    let scan = contraction(expr, Profile::Approximate, backend, &(&x).into());
    // a sum of n terms in two orders differs by at most 2 (n - 1) eps sum |x|
    for (g, w) in scan.iter().zip(&composed) {
        assert!(
            (g - w).abs() <= 2.0 * 1000.0 * f64::EPSILON * mag,
            "{backend}: {g} vs {w}"
        );
    }
}

#[test]
fn an_infinite_payload_outside_the_triangle_is_why_the_rewrite_is_approximate() {
    let x = ArrayD::from_shape_vec(IxDyn(&[4]), vec![1.0, 2.0, 3.0, f64::INFINITY]).unwrap();
    let expr = "sum(x[i] * (i <= o), index=(i, o), axis=i)";
    let composed = contraction(expr, Profile::Default, "interp", &(&x).into());
    let scan = contraction(expr, Profile::Approximate, "interp", &(&x).into());
    // inf * 0 = NaN in every composed output; the scan never reads x[3] before o = 3
    assert!(composed[..3].iter().all(|v| v.is_nan()));
    assert_eq!(&scan[..3], &[1.0, 3.0, 6.0]);
    assert_eq!(scan[3], f64::INFINITY);
}

#[test]
fn a_rewritten_contraction_folds_into_the_target() {
    let x = ArrayD::from_shape_vec(IxDyn(&[4]), vec![1.0, 2.0, 3.0, 4.0]).unwrap();
    for profile in [Profile::Default, Profile::Approximate] {
        let runner = FusedRunner::compile_text(PREFIX).unwrap().with_profile(profile);
        let mut y = ndarray::Array1::from(vec![100.0, 200.0, 300.0, 400.0]);
        runner
            .run_accumulate(&[("x", (&x).into())], y.view_mut())
            .unwrap();
        assert_eq!(y.to_vec(), vec![101.0, 203.0, 306.0, 410.0], "{profile}");
    }
}

#[test]
fn scan_text_errors() {
    for bad in [
        "cumsum(x, exclusive=2)",
        "cumsum(x, axis=0, axis=1)",
        "cumsum(x, keepdims=1)",
        "cumsum()",
        "sum(x[i], index=(i, o))",
        "sum(x, index=(i, o), axis=i)",
        "argmax(x[i], index=(i), axis=i)",
    ] {
        let r = FusedRunner::compile_text(bad).and_then(|r| {
            let x = ArrayD::<f64>::zeros(IxDyn(&[4]));
            r.run(&[("x", (&x).into())])
        });
        assert!(r.is_err(), "{bad} should be an error");
    }
    let r = FusedRunner::compile_text(PREFIX)
        .unwrap()
        .with_profile(Profile::Reproducible)
        .with_prefix_scan(true);
    assert!(r.is_err(), "reproducible pins prefix_scan off");
}

#[test]
fn run_into_writes_a_scan_straight_into_the_output() {
    let x = ArrayD::from_shape_vec(IxDyn(&[7, 9]), random(63, 5)).unwrap();
    let x32 = x.mapv(|v| v as f32);
    for expr in [
        "cumsum(x)",
        "cumsum(x * x, axis=1)",
        "cumprod(x, axis=0, exclusive=1, reverse=1)",
        "cummax(x, axis=-1, initial=0.25)",
        "cummin(x, reverse=1, exclusive=1)",
    ] {
        for backend in ["jit", "jit-scalar", "interp"] {
            for threads in [1, 3] {
                let r = FusedRunner::compile_text(expr)
                    .unwrap()
                    .with_backend(backend_by_name(backend).unwrap())
                    .with_threads(threads);
                let want = floats(r.run(&[("x", (&x).into())]).unwrap());
                let mut out = ArrayD::<f64>::from_elem(
                    IxDyn(if expr.contains("axis") { &[7, 9] } else { &[63] }),
                    f64::NAN,
                );
                r.run_into(&[("x", (&x).into())], out.view_mut()).unwrap();
                assert!(
                    out.iter().zip(&want).all(|(&g, &w)| same_bits(g, w)),
                    "{expr} {backend}"
                );
                let want32 = floats(r.run(&[("x", (&x32).into())]).unwrap());
                let mut out32 = out.mapv(|_| f32::NAN);
                r.run_into(&[("x", (&x32).into())], out32.view_mut()).unwrap();
                assert!(
                    out32.iter().zip(&want32).all(|(&g, &w)| same_bits(g as f64, w)),
                    "{expr} {backend} f32"
                );
                // a wrong shape or dtype is an error, never a partial write past the end
                let mut short = ArrayD::<f64>::zeros(IxDyn(&[62]));
                assert!(r.run_into(&[("x", (&x).into())], short.view_mut()).is_err());
                assert!(r.run_into(&[("x", (&x32).into())], out.view_mut()).is_err());
            }
        }
    }
}
