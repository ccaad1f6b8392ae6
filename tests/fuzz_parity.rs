//! The bounded expression fuzzer: a fixed seed, a few thousand random kernels (trees over every op,
//! both dtypes, broadcasting shapes, strided and reversed views, floats from raw bits, reductions over
//! axes), each compiled by the JIT (SIMD and scalar schedules) and checked against the interpreter.
//! A second test does the same for typed kernels (bool, int32, int64 beside the floats, integer
//! opcodes, casts, integer reductions and scans; `tests/support/typed_kernel.rs`), bit for bit.
//! The same generators drive `fuzz/fuzz_targets/exprs.rs` for open-ended runs.

#[path = "support/random_kernel.rs"]
mod random_kernel;
#[path = "support/typed_kernel.rs"]
mod typed_kernel;

use arbitrary::Unstructured;
use random_kernel::Case;
use typed_kernel::TypedCase;

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

#[test]
fn random_kernels_match_the_interpreter() {
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut nonempty = 0;
    let trace = std::env::var_os("KILN_FUZZ_TRACE").is_some();
    let only: Option<u64> = std::env::var("KILN_FUZZ_SEED").ok().and_then(|s| s.parse().ok());
    let from: u64 = std::env::var("KILN_FUZZ_FROM")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let to: u64 = std::env::var("KILN_FUZZ_TO")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(3000);
    for seed in from..to {
        if only.is_some_and(|o| o != seed) {
            continue;
        }
        let data = bytes(seed * 7919 + 1, 4096);
        let mut u = Unstructured::new(&data);
        let Ok(case) = Case::arbitrary(&mut u) else {
            continue;
        };
        for backend in ["jit", "jit-scalar"] {
            if trace {
                let shapes: Vec<_> = case
                    .inputs
                    .iter()
                    .map(|(n, d, v)| {
                        (
                            n,
                            match d {
                                random_kernel::Data::F64(a) => a.shape().to_vec(),
                                random_kernel::Data::F32(a) => a.shape().to_vec(),
                            },
                            v,
                        )
                    })
                    .collect();
                eprintln!("seed {seed} {backend}: {:?} {shapes:?}", case.expr);
            }
            if let Err(e) = case.check(backend) {
                let f = format!("seed {seed} on {backend}: {e}\n  expr {:?}", case.expr);
                eprintln!("FAIL {f}");
                failures.push(f);
            }
        }
        checked += 1;
        if case.check_len().unwrap_or(0) > 0 {
            nonempty += 1;
        }
    }
    eprintln!("{checked} kernels checked, {nonempty} with a non-empty result");
    assert!(
        only.is_some() || to - from < 3000 || nonempty > 1500,
        "too few non-empty results: {nonempty}"
    );
    assert!(
        only.is_some() || to - from < 3000 || checked > 2500,
        "only {checked} cases generated"
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

/// The seed range of a run: `KILN_FUZZ_FROM`..`KILN_FUZZ_TO` (default `0..to`), or only
/// `KILN_FUZZ_SEED`.
fn seed_range(to: u64) -> (std::ops::Range<u64>, Option<u64>) {
    let var = |name: &str| std::env::var(name).ok().and_then(|s| s.parse().ok());
    let from = var("KILN_FUZZ_FROM").unwrap_or(0);
    (from..var("KILN_FUZZ_TO").unwrap_or(to), var("KILN_FUZZ_SEED"))
}

#[test]
fn random_typed_kernels_match_the_interpreter() {
    const CASES: u64 = 2000;
    let (range, only) = seed_range(CASES);
    let full = only.is_none() && range == (0..CASES);
    let trace = std::env::var_os("KILN_FUZZ_TRACE").is_some();
    let (mut failures, mut checked, mut typed) = (Vec::new(), 0, 0);
    // KILN_FUZZ_ENGINES=1: count what runs each kernel on the JIT backend (compiled, or
    // interpreted and why), printed at the end
    let engines = std::env::var_os("KILN_FUZZ_ENGINES").is_some();
    let mut seen: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for seed in range {
        if only.is_some_and(|o| o != seed) {
            continue;
        }
        // another stream than the float cases' (seed * 7919 + 1)
        let data = bytes(seed * 6271 + 3, 4096);
        let Ok(case) = TypedCase::arbitrary(&mut Unstructured::new(&data)) else {
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
        for backend in ["jit", "jit-scalar"] {
            if let Err(e) = case.check(backend) {
                let f = format!("seed {seed} on {backend}: {e}\n  expr {:?}", case.expr);
                eprintln!("FAIL {f}");
                failures.push(f);
            }
        }
        checked += 1;
        if case.oracle().is_some() {
            typed += 1;
            if engines && let Some(e) = case.engine("jit") {
                // the reason without the kernel's particulars (input names and types)
                let key = e.split(" (").next().unwrap_or(&e).to_string();
                let key = if key.starts_with("interpreted") {
                    e.rsplit("does not compile ").next().unwrap_or(&e).to_string()
                } else {
                    key
                };
                *seen.entry(key).or_default() += 1;
            }
        }
    }
    for (engine, count) in &seen {
        eprintln!("{count:6} {engine}");
    }
    eprintln!(
        "{checked} typed kernels checked, {typed} of them typed (run by each backend and compared with the typed interpreter; KILN_FUZZ_ENGINES=1 counts which engine ran them)"
    );
    assert!(!full || checked > 1800, "only {checked} cases generated");
    assert!(!full || typed > 1000, "too few cases type and run: {typed}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

/// Every integer operator, cast and reduction over every pair of edge values (int32 and int64
/// extremes, ±1, 0, shift counts around the width, 2**53 + 1, int64 values whose float32 rounding
/// differs from a rounding through float64; floats out of the integers' range, NaN, ±inf, halves),
/// the JIT bit for bit against the typed interpreter: a deterministic table beside the random
/// kernels.
#[test]
fn typed_edge_values_match_the_interpreter() {
    use kiln::{FusedRunner, interpreter};
    use ndarray::Array1;
    const I32: [i32; 12] = [0, 1, -1, 2, 7, -7, 31, 32, 33, i32::MIN, i32::MAX, i32::MIN + 1];
    const I64: [i64; 14] = [
        0,
        1,
        -1,
        63,
        64,
        -64,
        (1 << 53) + 1,
        -(1 << 53) - 1,
        (1 << 62) + (1 << 38) + 1, // rounds up to float32, but to even through float64
        -(1 << 62) - (1 << 38) - 1,
        (1 << 24) + 1,
        i64::MIN,
        i64::MAX,
        i32::MIN as i64 - 1,
    ];
    const F64: [f64; 14] = [
        0.0,
        -0.0,
        0.5,
        -2.5,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        2_147_483_647.5,
        -2_147_483_649.0,
        9.3e18,
        -9.3e18,
        1e300,
        5e-324,
        16_777_217.0,
    ];
    // every pair: `a` repeats each value, `b` cycles through them
    fn pairs<T: Copy>(v: &[T]) -> (Array1<T>, Array1<T>) {
        let n = v.len();
        (
            Array1::from_shape_fn(n * n, |k| v[k / n]),
            Array1::from_shape_fn(n * n, |k| v[k % n]),
        )
    }
    let (i, j) = pairs(&I32);
    let (k, l) = pairs(&I64);
    let (x, y) = pairs(&F64);
    let p = Array1::from_shape_fn(I32.len().pow(2), |n| n % 3 == 1);
    let i_for_k = Array1::from_shape_fn(I64.len().pow(2), |n| I32[n % I32.len()]);
    let q = Array1::from_shape_fn(I64.len().pow(2), |n| n % 3 != 1);
    let exprs = [
        "i + j",
        "i - j",
        "i * j",
        "i // j",
        "i % j",
        "i ** 2",
        "i ** 3",
        "i << j",
        "i >> j",
        "i & j",
        "i | j",
        "i ^ j",
        "~i",
        "-i",
        "abs(i)",
        "sign(i)",
        "minimum(i, j)",
        "maximum(i, j)",
        "i < j",
        "i == j",
        "i >= j",
        "where(p, i, j)",
        "where(i, p, j)",
        "i / j",
        "(i*3 + j) % 7",
        "i // -1",
        "i % -1",
        "float32(i)",
        "float64(i)",
        "int64(i) * j",
        "bool(i) | p",
        "p * i",
        "p + p",
        "i + 2",
        "i * -3",
        "sum(i)",
        "prod(j)",
        "min(i)",
        "max(j)",
        "any(i)",
        "all(j)",
        "sum(p)",
        "sum(where(p, i, 0))",
        "sum(i * j)",
        "max(i ^ j)",
    ];
    let exprs64 = [
        "k + l",
        "k - l",
        "k * l",
        "k // l",
        "k % l",
        "k ** 3",
        "k << l",
        "k >> l",
        "k & l",
        "k ^ l",
        "~k",
        "-k",
        "abs(k)",
        "minimum(k, l)",
        "k <= l",
        "k != l",
        "where(q, k, l)",
        "k / l",
        "float32(k)",
        "float64(k)",
        "int32(k)",
        "bool(k)",
        "k + m",
        "k * m",
        "k // m",
        "m << k",
        "k >> m",
        "float32(k + m)",
        "sum(k)",
        "prod(l)",
        "min(k)",
        "max(l)",
        "all(k)",
        "sum(where(q, k, 0))",
        "sum(k * m)",
    ];
    let exprs_f = [
        "int32(x)",
        "int64(x)",
        "bool(x)",
        "int32(x) + int32(y)",
        "int64(x) // 3",
        "float32(int64(x))",
        "x // y",
        "x % y",
        "int64(x) < y",
        "where(x > y, int32(x), int32(y))",
    ];
    // the same pairs as matrices, reduced along each axis (a slot per column, or per row)
    let side = I32.len();
    let (a, b) = (
        i.clone().into_shape_with_order((side, side)).unwrap(),
        j.clone().into_shape_with_order((side, side)).unwrap(),
    );
    let exprs_2d = [
        "sum(a, axis=0)",
        "sum(a * b, axis=0)",
        "prod(b, axis=0)",
        "max(a ^ b, axis=0)",
        "min(a, axis=1)",
        "any(a, axis=0)",
        "all(b, axis=1)",
        "sum(a, axis=1)",
        "sum(int64(a) << 40, axis=0)",
        "max(a // b, axis=0)",
    ];
    let runs: Vec<(&str, Vec<(&str, kiln::ArrayArg<'_>)>)> = exprs
        .iter()
        .map(|e| {
            (
                *e,
                vec![("i", (&i).into()), ("j", (&j).into()), ("p", (&p).into())],
            )
        })
        .chain(exprs64.iter().map(|e| {
            let args = vec![
                ("k", (&k).into()),
                ("l", (&l).into()),
                ("m", (&i_for_k).into()),
                ("q", (&q).into()),
            ];
            (*e, args)
        }))
        .chain(
            exprs_f
                .iter()
                .map(|e| (*e, vec![("x", (&x).into()), ("y", (&y).into())])),
        )
        .chain(
            exprs_2d
                .iter()
                .map(|e| (*e, vec![("a", (&a).into()), ("b", (&b).into())])),
        )
        .collect();
    let mut failures = Vec::new();
    for (text, args) in &runs {
        let runner = FusedRunner::compile_text(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let want = runner.clone().with_backend(interpreter()).run(args);
        let want = want.unwrap_or_else(|e| panic!("{text}: {e}"));
        for backend in ["jit", "jit-scalar"] {
            let got = runner
                .clone()
                .with_backend(kiln::backend_by_name(backend).unwrap())
                .run(args)
                .map_err(|e| e.to_string())
                .and_then(|got| typed_kernel::same(&want, &got));
            if let Err(e) = got {
                failures.push(format!("{text} on {backend}: {e}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Typed kernels over more points than one thread takes (2**18), split over threads on the JIT,
/// give the interpreter's bits: maps, integer division by a literal, masked and plain reductions.
#[test]
fn threaded_typed_kernels_match_the_interpreter() {
    use kiln::{FusedRunner, interpreter};
    use ndarray::Array1;
    let n = (1 << 18) + 77;
    let mut s = 0x2545_f491_4f6c_dd1du64;
    let mut next = move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        s.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let i = Array1::from_shape_fn(n, |_| next() as i32);
    let j = Array1::from_shape_fn(n, |_| (next() % 2000) as i32 - 1000);
    let k = Array1::from_shape_fn(n, |_| next() as i64);
    let p = Array1::from_shape_fn(n, |_| next() >> 63 == 1);
    let args = [
        ("i", (&i).into()),
        ("j", (&j).into()),
        ("k", (&k).into()),
        ("p", (&p).into()),
    ];
    for text in [
        "(i*3 + j) % 7",
        "i // j",
        "k // 7",
        "k % -3",
        "where(p, k, i)",
        "float32(k) + j",
        "sum(where(p, k, 0))",
        "prod(j | 1)",
        "max(i ^ j)",
        "any(k == 0)",
    ] {
        let runner = FusedRunner::compile_text(text).unwrap();
        let want = runner.clone().with_backend(interpreter()).run(&args).unwrap();
        for backend in ["jit", "jit-scalar"] {
            let got = runner
                .clone()
                .with_backend(kiln::backend_by_name(backend).unwrap())
                .with_threads(2)
                .run(&args)
                .unwrap();
            if let Err(e) = typed_kernel::same(&want, &got) {
                panic!("{text} on {backend}, 2 threads: {e}");
            }
        }
    }
}
