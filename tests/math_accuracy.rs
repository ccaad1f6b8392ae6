//! Accuracy of kiln's math through the whole stack (text -> kernel -> the default JIT backend):
//!
//! - NumPy's ULP validation sets (`tests/data/umath/umath-validation-set-*.csv`, copied from NumPy with
//!   its license): correctly rounded outputs; f64 within 1 ULP for exp, log, sin, cos, tan, exp2,
//!   log2, log10, log1p, 2 for expm1 and tanh; f32 within each file's own bound (2 to 4 ULP);
//! - NumPy's special-value table (`tests/data/umath/special_values.csv`): exact (tanh within 3 ULP,
//!   as upstream), in f64 and f32;
//! - the correctly rounded references of `scripts/mpmath_reference.py` (`tests/data/ulp/`: cbrt,
//!   hypot, pow, tanh, sinh, cosh, exp2, expm1, log2, log10, log1p, arcsinh, arccosh, arctanh,
//!   ...), within each function's documented bound in f64 and f32;
//! - C99 Annex F's special cases of `pow` (the `**` of the text language), hypot of every pair of
//!   special values, and the special values of the vectorised functions (NaN, ±inf, ±0, subnormals, overflow, underflow, huge
//!   arguments) against the interpreter's libm: bit for bit where libm's result is NaN, ±inf, ±0 or
//!   ±1, else within the function's bound + 1.
//!
//! Every function and dtype prints its maximum ULP error. The dense million-point sweeps against libm
//! are in `jit/tests/accuracy.rs`.

mod support;

use kiln::{FusedRunner, Output, interpreter};
use ndarray::ArrayD;

/// The distance in ULP between two f64 (the kit's, 0 for two NaNs, u64::MAX for a NaN against a
/// number).
fn ulp64(a: f64, b: f64) -> u64 {
    support::ulp_distance(a, b, false)
}

/// The same for two f32.
fn ulp32(a: f32, b: f32) -> u64 {
    support::ulp_distance(a as f64, b as f64, true)
}

fn run_f64(runner: &FusedRunner, x: &[f64]) -> Vec<f64> {
    let a = ArrayD::from_shape_vec(vec![x.len()], x.to_vec()).unwrap();
    match runner.run(&[("x", (&a).into())]).unwrap() {
        Output::F64(o) => o.iter().copied().collect(),
        o => panic!("f64 input gave {}", o.dtype_name()),
    }
}

fn run_f32(runner: &FusedRunner, x: &[f32]) -> Vec<f32> {
    let a = ArrayD::from_shape_vec(vec![x.len()], x.to_vec()).unwrap();
    match runner.run(&[("x", (&a).into())]).unwrap() {
        Output::F32(o) => o.iter().copied().collect(),
        o => panic!("f32 input gave {}", o.dtype_name()),
    }
}

fn run_f64_2(runner: &FusedRunner, x: &[f64], y: &[f64]) -> Vec<f64> {
    let a = ArrayD::from_shape_vec(vec![x.len()], x.to_vec()).unwrap();
    let b = ArrayD::from_shape_vec(vec![y.len()], y.to_vec()).unwrap();
    match runner.run(&[("x", (&a).into()), ("y", (&b).into())]).unwrap() {
        Output::F64(o) => o.iter().copied().collect(),
        o => panic!("f64 input gave {}", o.dtype_name()),
    }
}

fn run_f32_2(runner: &FusedRunner, x: &[f32], y: &[f32]) -> Vec<f32> {
    let a = ArrayD::from_shape_vec(vec![x.len()], x.to_vec()).unwrap();
    let b = ArrayD::from_shape_vec(vec![y.len()], y.to_vec()).unwrap();
    match runner.run(&[("x", (&a).into()), ("y", (&b).into())]).unwrap() {
        Output::F32(o) => o.iter().copied().collect(),
        o => panic!("f32 input gave {}", o.dtype_name()),
    }
}

fn hex(s: &str) -> u64 {
    u64::from_str_radix(s.trim().trim_start_matches("0x"), 16).unwrap()
}

/// One of NumPy's validation files, or of `scripts/mpmath_reference.py`'s (`tests/data/ulp/`, the
/// same format with one or two inputs a row): per dtype, the rows as (input bits, correctly rounded output bits), and the
/// documented bound of each dtype.
struct Reference {
    f32: Vec<(Vec<u64>, u64)>,
    f64: Vec<(Vec<u64>, u64)>,
    tol32: u64,
    tol64: u64,
}

fn parse_reference(text: &str) -> Reference {
    let mut r = Reference {
        f32: vec![],
        f64: vec![],
        tol32: 0,
        tol64: 0,
    };
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') || line.starts_with('$') || line.starts_with("dtype") {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let n = f.len();
        let inputs: Vec<u64> = f[1..n - 2].iter().map(|s| hex(s)).collect();
        let (out, tol): (u64, u64) = (hex(f[n - 2]), f[n - 1].trim().parse().unwrap());
        match f[0] {
            "np.float32" => {
                r.f32.push((inputs, out));
                r.tol32 = r.tol32.max(tol);
            }
            "np.float64" => {
                r.f64.push((inputs, out));
                r.tol64 = r.tol64.max(tol);
            }
            other => panic!("unknown dtype {other}"),
        }
    }
    r
}

macro_rules! validation_sets {
    ($($name:ident: $f:literal, $tol64:expr;)*) => {
        const VALIDATION: &[(&str, &str, u64)] = &[
            $(($f, include_str!(concat!("data/umath/umath-validation-set-", $f, ".csv")), $tol64),)*
        ];
    };
}

validation_sets! {
    exp: "exp", 1;
    exp2: "exp2", 1;
    expm1: "expm1", 2;
    log: "log", 1;
    log2: "log2", 1;
    log10: "log10", 1;
    log1p: "log1p", 1;
    sin: "sin", 1;
    cos: "cos", 1;
    tan: "tan", 1;
    tanh: "tanh", 2;
}

#[test]
fn numpy_validation_sets() {
    let mut failures = Vec::new();
    for &(name, text, tol64) in VALIDATION {
        let v = parse_reference(text);
        let runner = FusedRunner::compile_text(&format!("{name}(x)")).unwrap();
        let oracle = FusedRunner::compile_text(&format!("{name}(x)"))
            .unwrap()
            .with_backend(interpreter());
        // f64
        let x: Vec<f64> = v.f64.iter().map(|(i, _)| f64::from_bits(i[0])).collect();
        let got = run_f64(&runner, &x);
        let libm = run_f64(&oracle, &x);
        let (mut max, mut max_libm, mut sum) = (0u64, 0u64, 0f64);
        for (i, &(_, want)) in v.f64.iter().enumerate() {
            let want = f64::from_bits(want);
            let d = ulp64(got[i], want);
            max_libm = max_libm.max(ulp64(libm[i], want));
            sum += d.min(1000) as f64;
            if d > tol64 {
                failures.push(format!(
                    "{name} f64 x={:e} ({:#x}): kiln {:e}, want {want:e}: {d} ULP > {tol64}",
                    x[i],
                    x[i].to_bits(),
                    got[i]
                ));
            }
            max = max.max(d);
        }
        println!(
            "{name:>6} f64: {} rows, kiln max {max} ULP (mean {:.3}), libm max {max_libm}, bound {tol64}",
            x.len(),
            sum / x.len() as f64
        );
        // f32
        let x: Vec<f32> = v.f32.iter().map(|(i, _)| f32::from_bits(i[0] as u32)).collect();
        let got = run_f32(&runner, &x);
        let libm = run_f32(&oracle, &x);
        let (mut max, mut max_libm, mut sum) = (0u64, 0u64, 0f64);
        for (i, &(_, want)) in v.f32.iter().enumerate() {
            let want = f32::from_bits(want as u32);
            let d = ulp32(got[i], want);
            max_libm = max_libm.max(ulp32(libm[i], want));
            sum += d.min(1000) as f64;
            if d > v.tol32 {
                failures.push(format!(
                    "{name} f32 x={:e} ({:#x}): kiln {:e}, want {want:e}: {d} ULP > {}",
                    x[i],
                    x[i].to_bits(),
                    got[i],
                    v.tol32
                ));
            }
            max = max.max(d);
        }
        println!(
            "{name:>6} f32: {} rows, kiln max {max} ULP (mean {:.3}), libm max {max_libm}, bound {}",
            x.len(),
            sum / x.len() as f64,
            v.tol32
        );
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The correctly rounded references of `scripts/mpmath_reference.py` (mpmath, 256 bits): (the
/// expression, the file).
const REFERENCES: &[(&str, &str)] = &[
    ("cbrt(x)", include_str!("data/ulp/cbrt.csv")),
    ("hypot(x, y)", include_str!("data/ulp/hypot.csv")),
    ("x ** y", include_str!("data/ulp/power.csv")),
    ("tanh(x)", include_str!("data/ulp/tanh.csv")),
    ("sinh(x)", include_str!("data/ulp/sinh.csv")),
    ("cosh(x)", include_str!("data/ulp/cosh.csv")),
    ("exp2(x)", include_str!("data/ulp/exp2.csv")),
    ("expm1(x)", include_str!("data/ulp/expm1.csv")),
    ("log2(x)", include_str!("data/ulp/log2.csv")),
    ("log10(x)", include_str!("data/ulp/log10.csv")),
    ("log1p(x)", include_str!("data/ulp/log1p.csv")),
    ("arcsinh(x)", include_str!("data/ulp/arcsinh.csv")),
    ("arccosh(x)", include_str!("data/ulp/arccosh.csv")),
    ("arctanh(x)", include_str!("data/ulp/arctanh.csv")),
    ("arcsin(x)", include_str!("data/ulp/arcsin.csv")),
    ("arccos(x)", include_str!("data/ulp/arccos.csv")),
    ("arctan(x)", include_str!("data/ulp/arctan.csv")),
    ("arctan2(x, y)", include_str!("data/ulp/arctan2.csv")),
];

/// Each function's maximum ULP against the correctly rounded reference, within the bound the file
/// carries (kiln's documented one), in f64 and f32; libm's own maximum printed beside it.
#[test]
fn correctly_rounded_references() {
    let mut failures = Vec::new();
    for &(src, text) in REFERENCES {
        let r = parse_reference(text);
        assert!(
            r.f64.len() > 100 && r.f32.len() > 100,
            "{src}: {} rows",
            r.f64.len()
        );
        // the file's f64 bound is the one kiln documents for the opcode
        let name = src.split('(').next().unwrap().replace("x ** y", "pow");
        let documented = kiln_ir::UnaryOp::ALL
            .iter()
            .find(|op| op.name() == name)
            .map(|&op| kiln_jit::unary_ulp_bound(op))
            .or_else(|| {
                kiln_ir::BinaryOp::ALL
                    .iter()
                    .find(|op| op.name() == name)
                    .map(|&op| kiln_jit::binary_ulp_bound(op))
            });
        assert_eq!(
            Some(r.tol64),
            documented.map(u64::from),
            "{src}: the file's f64 bound"
        );
        let runner = FusedRunner::compile_text(src).unwrap();
        let oracle = FusedRunner::compile_text(src)
            .unwrap()
            .with_backend(interpreter());
        let arity = r.f64[0].0.len();
        // each type's rows as f64 values (f32 widened exactly), with its bound
        let bits = |f32: bool, b: u64| {
            if f32 {
                f64::from(f32::from_bits(b as u32))
            } else {
                f64::from_bits(b)
            }
        };
        for (f32, rows, tol) in [(false, &r.f64, r.tol64), (true, &r.f32, r.tol32)] {
            let cols: Vec<Vec<f64>> = (0..arity)
                .map(|k| rows.iter().map(|(i, _)| bits(f32, i[k])).collect())
                .collect();
            let (got, libm) = (run_cols(&runner, &cols, f32), run_cols(&oracle, &cols, f32));
            let ulp = |a: f64, b: f64| support::ulp_distance(a, b, f32);
            let ty = if f32 { "f32" } else { "f64" };
            let (mut max, mut max_libm) = (0, 0);
            for (i, (_, want)) in rows.iter().enumerate() {
                let want = bits(f32, *want);
                let d = ulp(got[i], want);
                max = d.max(max);
                max_libm = ulp(libm[i], want).max(max_libm);
                if d > tol {
                    let at: Vec<f64> = cols.iter().map(|c| c[i]).collect();
                    failures.push(format!(
                        "{src} {ty} at {at:?}: kiln {:e}, want {want:e}: {d} ULP > {tol}",
                        got[i]
                    ));
                }
            }
            println!(
                "{src:>12} {ty}: {} rows, kiln max {max} ULP, libm max {max_libm}, bound {tol}",
                rows.len()
            );
        }
    }
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

const SPECIAL: &str = include_str!("data/umath/special_values.csv");

#[test]
fn numpy_special_values() {
    let mut failures = Vec::new();
    let mut count = 0;
    for line in SPECIAL.lines() {
        if line.starts_with('#') || line.starts_with("fn,") || line.trim().is_empty() {
            continue;
        }
        let f: Vec<&str> = line.split(',').collect();
        let (name, expected, bits) = (f[0], f[2], hex(f[3]));
        let src = match name {
            "reciprocal" => "1/x".to_string(),
            "square" => "x*x".to_string(),
            other => format!("{other}(x)"),
        };
        let x = f64::from_bits(bits);
        let want: f64 = expected.parse().unwrap();
        let tol = if name == "tanh" { 3 } else { 0 };
        let runner = FusedRunner::compile_text(&src).unwrap();
        let got = run_f64(&runner, &[x])[0];
        let got32 = run_f32(&runner, &[x as f32])[0];
        let exact = |a: f64, b: f64| (a.is_nan() && b.is_nan()) || a.to_bits() == b.to_bits();
        if !(exact(got, want) || (tol > 0 && ulp64(got, want) <= tol)) {
            failures.push(format!("{src} f64 at {x:?}: {got:?}, want {want:?}"));
        }
        let want32 = want as f32;
        if !(exact(got32 as f64, want32 as f64) || (tol > 0 && ulp32(got32, want32) <= tol)) {
            failures.push(format!("{src} f32 at {x:?}: {got32:?}, want {want32:?}"));
        }
        count += 1;
    }
    assert!(count > 80, "read {count} rows");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// C99 Annex F (F.9.4.4) and NumPy's `**`: (x, y, pow(x, y)).
#[test]
fn pow_annex_f() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let cases: &[(f64, f64, f64)] = &[
        // pow(x, ±0) = 1 for any x, even NaN
        (nan, 0.0, 1.0),
        (nan, -0.0, 1.0),
        (inf, 0.0, 1.0),
        (-inf, -0.0, 1.0),
        (0.0, 0.0, 1.0),
        (-3.5, 0.0, 1.0),
        // pow(+1, y) = 1 for any y, even NaN
        (1.0, nan, 1.0),
        (1.0, inf, 1.0),
        (1.0, -inf, 1.0),
        (1.0, 1e300, 1.0),
        // pow(-1, ±inf) = 1
        (-1.0, inf, 1.0),
        (-1.0, -inf, 1.0),
        // NaN otherwise
        (nan, 1.0, nan),
        (2.0, nan, nan),
        (-1.0, nan, nan),
        // pow(±0, y): odd integer y < 0 gives ±inf, other y < 0 +inf, odd y > 0 ±0, other y > 0 +0
        (0.0, -1.0, inf),
        (-0.0, -1.0, -inf),
        (-0.0, -3.0, -inf),
        (0.0, -2.0, inf),
        (-0.0, -2.0, inf),
        (-0.0, -0.5, inf),
        (-0.0, -inf, inf),
        (0.0, 3.0, 0.0),
        (-0.0, 3.0, -0.0),
        (-0.0, 2.0, 0.0),
        (-0.0, 0.5, 0.0),
        (-0.0, inf, 0.0),
        // pow(x, -inf): |x| < 1 gives +inf, |x| > 1 +0; pow(x, +inf) the reverse
        (0.5, -inf, inf),
        (-0.5, -inf, inf),
        (2.0, -inf, 0.0),
        (-2.0, -inf, 0.0),
        (0.5, inf, 0.0),
        (-0.5, inf, 0.0),
        (2.0, inf, inf),
        (-2.0, inf, inf),
        // pow(-inf, y): odd y < 0 gives -0, other y < 0 +0, odd y > 0 -inf, other y > 0 +inf
        (-inf, -1.0, -0.0),
        (-inf, -2.0, 0.0),
        (-inf, -0.5, 0.0),
        (-inf, 3.0, -inf),
        (-inf, 2.0, inf),
        (-inf, 0.5, inf),
        // pow(+inf, y): y < 0 gives +0, y > 0 +inf
        (inf, -1.0, 0.0),
        (inf, 0.5, inf),
        // a finite negative base with a non-integer exponent: NaN
        (-8.0, 1.0 / 3.0, nan),
        (-2.0, 0.5, nan),
        (-1e-300, 2.5, nan),
        // negative bases with integer exponents
        (-2.0, 3.0, -8.0),
        (-2.0, 2.0, 4.0),
        (-2.0, -1.0, -0.5),
        (-2.0, -2.0, 0.25),
        (-3.0, 5.0, -243.0),
        (-1.0, 9007199254740991.0, -1.0),
        (-1.0, 9007199254740992.0, 1.0),
        (-1.0, 1e300, 1.0),
        // overflow, underflow through the subnormals
        (10.0, 308.0, 1e308),
        (10.0, 309.0, inf),
        (-10.0, 309.0, -inf),
        (2.0, 1024.0, inf),
        (2.0, 1023.0, 8.98846567431158e307),
        (2.0, -1074.0, 5e-324),
        (2.0, -1075.0, 0.0),
        (-2.0, -1075.0, -0.0),
        (0.5, 1074.0, 5e-324),
        (2.0, -1022.5, 1.5733648139913585e-308),
        (5e-324, 1.0, 5e-324),
        (5e-324, 0.5, 2.2227587494850775e-162),
    ];
    let runner = FusedRunner::compile_text("x ** y").unwrap();
    let oracle = FusedRunner::compile_text("x ** y")
        .unwrap()
        .with_backend(interpreter());
    let x: Vec<f64> = cases.iter().map(|c| c.0).collect();
    let y: Vec<f64> = cases.iter().map(|c| c.1).collect();
    let got = run_f64_2(&runner, &x, &y);
    let libm = run_f64_2(&oracle, &x, &y);
    let mut failures = Vec::new();
    for (i, &(x, y, want)) in cases.iter().enumerate() {
        let exact = |a: f64| (a.is_nan() && want.is_nan()) || a.to_bits() == want.to_bits();
        let close = |a: f64| want.is_finite() && want != 0.0 && ulp64(a, want) <= 1;
        if !(exact(got[i]) || close(got[i])) {
            failures.push(format!("kiln pow({x:?}, {y:?}) = {:?}, want {want:?}", got[i]));
        }
        if !(exact(libm[i]) || close(libm[i])) {
            failures.push(format!("libm pow({x:?}, {y:?}) = {:?}, want {want:?}", libm[i]));
        }
    }
    // f32 (its own algorithm, vmath::pow::pow_f32): the same cases against the interpreter's f32
    // pow, bit for bit where that gives NaN, ±inf, ±0 or ±1, else within the bound
    let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let y32: Vec<f32> = y.iter().map(|&v| v as f32).collect();
    let got = run_f32_2(&runner, &x32, &y32);
    let libm = run_f32_2(&oracle, &x32, &y32);
    for i in 0..x32.len() {
        let (g, w) = (got[i], libm[i]);
        let special = w.is_nan() || w.is_infinite() || w == 0.0 || w.abs() == 1.0;
        let ok = if special {
            (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
        } else {
            ulp32(g, w) <= 2
        };
        if !ok {
            failures.push(format!(
                "kiln f32 pow({:?}, {:?}) = {g:?}, libm {w:?}",
                x32[i], y32[i]
            ));
        }
    }
    // NumPy computes x ** 0.5 as sqrt: so does kiln (pow(-0.0, 0.5) would be +0.0, sqrt gives -0.0)
    let sqrt = FusedRunner::compile_text("x ** 0.5").unwrap();
    let got = run_f64(&sqrt, &[-0.0, -4.0, 2.0]);
    assert_eq!(got[0].to_bits(), (-0.0f64).to_bits());
    assert!(got[1].is_nan());
    assert_eq!(got[2], 2.0f64.sqrt());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Special inputs of every vectorised function, f64 and f32, against the interpreter's libm.
#[test]
fn special_values_against_libm() {
    let specials: Vec<f64> = vec![
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        5e-324,
        -5e-324,
        1e-310,
        -1e-310,
        2.2250738585072014e-308,
        1e-300,
        1e-20,
        -1e-20,
        1e-45,
        1.0e-40,
        1.0,
        -1.0,
        0.5,
        -0.5,
        2.0,
        -2.0,
        3.0,
        10.0,
        20.0,
        -20.0,
        88.72,
        89.0,
        -103.9,
        -104.0,
        127.9,
        128.0,
        -149.5,
        -150.0,
        709.78,
        709.79,
        710.0,
        -708.4,
        -745.0,
        -745.2,
        1023.9,
        1024.0,
        -1074.0,
        -1075.0,
        -1080.0,
        1e3,
        -1e3,
        1048576.0,
        1048577.0,
        1e6,
        1e22,
        -1e22,
        1e300,
        -1e300,
        f64::MAX,
        f64::MIN,
        std::f64::consts::FRAC_PI_2,
        std::f64::consts::PI,
        -0.9999999999999999,
        1e16,
        // erf / erfc: both sides of each range boundary (0.84375, 1.25, 1/0.35 with its low word
        // cleared, 6, 28), the tiny arguments (2^-28, 2^-56), x = 1/4 and the subnormal results
        0.84375,
        0.8437499999999999,
        -0.84375,
        1.25,
        1.2499999999999998,
        -1.25,
        f64::from_bits(0x4006_db6d_0000_0000),
        f64::from_bits(0x4006_db6c_ffff_ffff),
        -f64::from_bits(0x4006_db6d_0000_0000),
        6.0,
        5.999999999999999,
        -6.0,
        28.0,
        27.999999999999996,
        -28.0,
        26.5,
        27.2,
        3.725290298461914e-9,
        3.7252902984619136e-9,
        1.3877787807814457e-17,
        0.25,
        0.24999999999999997,
        -0.25,
        // the log family's edges: around 1 and -1 (arccosh, arctanh, log1p), the arctanh branch at
        // 0.5, the tiny and huge arguments of the inverse hyperbolic functions (2^-28, 2^28)
        1.0000000000000002,
        0.9999999999999999,
        -1.0000000000000002,
        0.49999999999999994,
        268435456.0,
        268435455.99999997,
        -268435456.0,
        -3.725290298461914e-9,
    ];
    let mut failures = Vec::new();
    for name in [
        "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan", "tanh", "erf", "erfc",
        "cbrt", "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "arcsin", "arccos", "arctan",
    ] {
        let bound = match name {
            "tanh" | "sinh" | "cosh" | "expm1" | "arcsinh" | "arccosh" | "arctanh" => 3,
            "erfc" => 4,
            _ => 2,
        };
        let src = format!("{name}(x)");
        let runner = FusedRunner::compile_text(&src).unwrap();
        let oracle = FusedRunner::compile_text(&src)
            .unwrap()
            .with_backend(interpreter());
        let got = run_f64(&runner, &specials);
        let want = run_f64(&oracle, &specials);
        for i in 0..specials.len() {
            let (g, w) = (got[i], want[i]);
            let special = w.is_nan() || w.is_infinite() || w == 0.0 || w.abs() == 1.0;
            let ok = if special {
                (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
            } else {
                ulp64(g, w) <= bound
            };
            if !ok {
                failures.push(format!("{name} f64 ({:?}): kiln {g:?}, libm {w:?}", specials[i]));
            }
        }
        let s32: Vec<f32> = specials.iter().map(|&x| x as f32).collect();
        let got = run_f32(&runner, &s32);
        let want = run_f32(&oracle, &s32);
        for i in 0..s32.len() {
            let (g, w) = (got[i], want[i]);
            let special = w.is_nan() || w.is_infinite() || w == 0.0 || w.abs() == 1.0;
            let ok = if special {
                (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
            } else {
                ulp32(g, w) <= bound
            };
            if !ok {
                failures.push(format!("{name} f32 ({:?}): kiln {g:?}, libm {w:?}", s32[i]));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// hypot of every pair of special values (NaN, ±inf, ±0, subnormals, the largest and smallest
/// normals, the edges of its scaling), f64 and f32, against the interpreter's libm: bit for bit
/// where libm's result is NaN, ±inf, ±0 or ±1 (an infinite operand gives +inf even beside a NaN),
/// else within the bound + 1.
#[test]
fn hypot_special_pairs() {
    let specials = [
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        5e-324,
        -5e-324,
        1e-310,
        2.2250738585072014e-308,
        1e-300,
        3.054936363499605e-151,
        3.054936363499605e-151f64.next_down(),
        1e-45,
        1.0,
        -1.0,
        3.0,
        -4.0,
        1e20,
        3.273390607896142e150,
        3.273390607896142e150f64.next_up(),
        1e300,
        f64::MAX,
        f64::MIN,
        3.4028234663852886e38,
    ];
    let (x, y): (Vec<f64>, Vec<f64>) = specials
        .iter()
        .flat_map(|&a| specials.iter().map(move |&b| (a, b)))
        .unzip();
    let runner = FusedRunner::compile_text("hypot(x, y)").unwrap();
    let oracle = FusedRunner::compile_text("hypot(x, y)")
        .unwrap()
        .with_backend(interpreter());
    let special = |w: f64| w.is_nan() || w.is_infinite() || w == 0.0 || w.abs() == 1.0;
    let mut failures = Vec::new();
    let (got, want) = (run_f64_2(&runner, &x, &y), run_f64_2(&oracle, &x, &y));
    for i in 0..x.len() {
        let (g, w) = (got[i], want[i]);
        let ok = if special(w) {
            (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
        } else {
            ulp64(g, w) <= 2
        };
        if !ok {
            failures.push(format!(
                "hypot f64 ({:?}, {:?}): kiln {g:?}, libm {w:?}",
                x[i], y[i]
            ));
        }
    }
    let (x, y): (Vec<f32>, Vec<f32>) = (
        x.iter().map(|&v| v as f32).collect(),
        y.iter().map(|&v| v as f32).collect(),
    );
    let (got, want) = (run_f32_2(&runner, &x, &y), run_f32_2(&oracle, &x, &y));
    for i in 0..x.len() {
        let (g, w) = (got[i], want[i]);
        let ok = if special(w as f64) {
            (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
        } else {
            ulp32(g, w) <= 2
        };
        if !ok {
            failures.push(format!(
                "hypot f32 ({:?}, {:?}): kiln {g:?}, libm {w:?}",
                x[i], y[i]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `runner` over the argument columns `cols` (one or two, as f64), in f32 where `f32`, the results
/// widened to f64.
fn run_cols(runner: &FusedRunner, cols: &[Vec<f64>], f32: bool) -> Vec<f64> {
    let narrow = |c: &Vec<f64>| -> Vec<f32> { c.iter().map(|&v| v as f32).collect() };
    let widen = |v: Vec<f32>| -> Vec<f64> { v.into_iter().map(f64::from).collect() };
    match (cols, f32) {
        ([x], false) => run_f64(runner, x),
        ([x, y], false) => run_f64_2(runner, x, y),
        ([x], true) => widen(run_f32(runner, &narrow(x))),
        ([x, y], true) => widen(run_f32_2(runner, &narrow(x), &narrow(y))),
        _ => panic!("{} argument columns", cols.len()),
    }
}

/// Whether kiln's `g` agrees with libm's `w` (f32 values widened where `f32`): bit for bit where `w`
/// is NaN (any NaN), ±inf, ±0 or ±1, else within `bound` ULP.
fn agrees_with_libm(g: f64, w: f64, f32: bool, bound: u64) -> bool {
    let special = w.is_nan() || w.is_infinite() || w == 0.0 || w.abs() == 1.0;
    if special {
        (g.is_nan() && w.is_nan()) || g.to_bits() == w.to_bits()
    } else {
        support::ulp_distance(g, w, f32) <= bound
    }
}

/// arctan2 over every pair of special values (C99 Annex F: signed zeros, infinities, NaN, and the
/// subnormal, tiny and huge magnitudes of the general path), f64 and f32, against the interpreter's
/// libm: bit for bit where libm gives NaN, ±inf, ±0 or ±1, else within the bound + 1.
#[test]
fn arctan2_special_values_against_libm() {
    let specials = [
        f64::NAN,
        -f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        5e-324,
        -5e-324,
        1e-310,
        2.2250738585072014e-308,
        1e-300,
        -1e-300,
        1e-40,
        1e-20,
        0.4375,
        -0.6875,
        1.0,
        -1.0,
        1.1875,
        2.4375,
        -3.0,
        1e20,
        3e38,
        1e300,
        -1e300,
        f64::MAX,
        f64::MIN,
    ];
    let (x, y): (Vec<f64>, Vec<f64>) = specials
        .iter()
        .flat_map(|&a| specials.iter().map(move |&b| (a, b)))
        .unzip();
    let runner = FusedRunner::compile_text("arctan2(x, y)").unwrap();
    let oracle = FusedRunner::compile_text("arctan2(x, y)")
        .unwrap()
        .with_backend(interpreter());
    let bound = kiln_jit::binary_ulp_bound(kiln_ir::BinaryOp::Arctan2) as u64 + 1;
    let mut failures = Vec::new();
    for f32 in [false, true] {
        let cols = [x.clone(), y.clone()];
        let (got, want) = (run_cols(&runner, &cols, f32), run_cols(&oracle, &cols, f32));
        for i in 0..x.len() {
            let (g, w) = (got[i], want[i]);
            if !agrees_with_libm(g, w, f32, bound) {
                failures.push(format!(
                    "arctan2 f32 {f32} ({:?}, {:?}): kiln {g:?}, libm {w:?}",
                    x[i], y[i]
                ));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
