//! Every committed input of the cargo-fuzz targets, replayed through the check the target runs
//! (`tests/support/fuzz_checks.rs`) without cargo-fuzz: the seeds each target starts from
//! (`fuzz/seeds/<target>/`) and the inputs of its findings (`fuzz/regressions/<target>/`, one file
//! per finding, named for what it found). The seeds are checked to reach the special bit patterns
//! (signalling and quiet NaNs of both signs, ±0, ±inf, subnormals, MIN and MAX) and, for `exprs`
//! and `bounds`, the int32 and int64 extremes.
//!
//! `KILN_WRITE_SEEDS=1 cargo test --test fuzz_regressions write_seeds -- --ignored` rewrites the
//! seeds of `exprs` and `bounds` (found by search: the first generated cases that hold each pattern).

#[path = "support/fuzz_checks.rs"]
mod fuzz_checks;

use fuzz_checks::{SPECIAL_BITS, SPECIAL_BITS_F32, random_kernel};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz")
}

/// The committed inputs of `target` under `fuzz/<kind>/<target>/`, sorted.
fn inputs(kind: &str, target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = fuzz_dir().join(kind).join(target);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.expect("a directory entry").path()).collect();
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).expect("a committed fuzz input reads");
            (p, bytes)
        })
        .collect()
}

fn replay(target: &str, check: fn(&[u8])) -> usize {
    let seeds = inputs("seeds", target);
    assert!(!seeds.is_empty(), "no seeds for the {target} target");
    let all: Vec<_> = seeds.into_iter().chain(inputs("regressions", target)).collect();
    for (path, bytes) in &all {
        let outcome = std::panic::catch_unwind(|| check(bytes));
        assert!(outcome.is_ok(), "{target}: {} fails its check", path.display());
    }
    all.len()
}

#[test]
fn npy_inputs_pass() {
    replay("npy", fuzz_checks::npy);
}

#[test]
fn text_inputs_pass() {
    replay("text", fuzz_checks::text);
}

#[test]
fn exprs_inputs_pass() {
    replay("exprs", fuzz_checks::exprs);
}

#[test]
fn bounds_inputs_pass() {
    replay("bounds", fuzz_checks::bounds);
}

/// `fuzz/regressions/exprs/sum_overflow_inf_nan`, as the float generator it was found with drew it
/// (before the one generator over every element type, which reads the same bytes as another case):
/// a whole-array sum of a reversed float64 input holding -MAX, MAX and inf, inf pairwise in the
/// interpreter, NaN with the JIT's accumulators, with two more results. Both stand: the magnitudes
/// overflow.
#[test]
fn the_sum_of_overflowing_magnitudes_stands() {
    use kiln::{Axes, Expr, ReduceOp};
    #[rustfmt::skip]
    const X: [f64; 56] = [
        -9.5616064890087e-38, -1.7976931348623157e308, 9.26890946363505e36, 1.7976931348623157e308,
        5.797475857051498e-25, f64::INFINITY, -1.7976931348623157e308, -3.468757818118157e-276, -5e-324,
        2.225073858507201e-308, 6.8770501363939e-310, -2.747069120966646e142, 1.9285920952317963e-168,
        2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21, 2.079385445425911e-21,
        -2.9753323520878013e26, -1.7976931348623157e308, -3.468757818118157e-276, -5e-324,
        2.225073858507201e-308, 4.1023772752101587e-25, 1.8157858567933343e-26, 1.7976931348623157e308,
        1.7976931348623157e308, 1.9285920952317963e-168, 2.0793828200968182e-21, 2.0793828200968182e-21,
        2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21,
        2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21,
        2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21,
        2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21,
        2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21, 2.0793828200968182e-21,
        2.093642604252622e37, 3.4028234663852886e38, -1.0, 3.2314288233547113e68, 6.85871849593153e-28,
        -1e-300, 50.052520751953125,
    ];
    let data = random_kernel::Data::F64(ndarray::ArrayD::from_shape_vec(vec![56], X.to_vec()).unwrap());
    let mut case = random_kernel::Case::new(
        Expr::input("x0").reduce(ReduceOp::Sum, Axes::All),
        vec![("x0", data)],
    );
    case.inputs[0].2 = random_kernel::View::Reversed;
    case.siblings = vec![
        Expr::lit(6.134915752501961e-116).binary(kiln::BinaryOp::Add, Expr::lit(4.385098028188939e37)),
        Expr::input("x0"),
    ];
    for backend in ["jit", "jit-scalar"] {
        case.check(backend).unwrap_or_else(|e| panic!("{backend}: {e}"));
    }
}

/// The values of a generated case's inputs that the seeds must reach, each as a key: the float64
/// bit patterns (`f64 0x...`) and the integer extremes (`i32 MIN`, ...).
fn case_values(bytes: &[u8]) -> BTreeSet<String> {
    let mut u = arbitrary::Unstructured::new(bytes);
    let Ok(case) = random_kernel::Case::arbitrary(&mut u) else {
        return BTreeSet::new();
    };
    let mut keys = BTreeSet::new();
    for (_, d, _) in &case.inputs {
        match d {
            random_kernel::Data::F64(a) => keys.extend(a.iter().map(|v| f64_key(v.to_bits()))),
            random_kernel::Data::I32(a) => keys.extend(a.iter().filter_map(|&v| int_key("i32", v.into()))),
            random_kernel::Data::I64(a) => keys.extend(a.iter().filter_map(|&v| int_key("i64", v))),
            _ => {}
        }
    }
    keys
}

fn f64_key(bits: u64) -> String {
    format!("f64 {bits:#018x}")
}

/// The key of an integer extreme of `ty`, None for any other value.
fn int_key(ty: &str, v: i64) -> Option<String> {
    match (ty, v) {
        ("i32", v) if v == i32::MIN.into() => Some("i32 MIN".into()),
        ("i32", v) if v == i32::MAX.into() => Some("i32 MAX".into()),
        ("i64", i64::MIN) => Some("i64 MIN".into()),
        ("i64", i64::MAX) => Some("i64 MAX".into()),
        _ => None,
    }
}

/// What the exprs and bounds seeds must reach: the special bit patterns and the integer extremes.
fn required() -> Vec<String> {
    SPECIAL_BITS
        .iter()
        .map(|&b| f64_key(b))
        .chain(["i32 MIN", "i32 MAX", "i64 MIN", "i64 MAX"].map(String::from))
        .collect()
}

fn missing(found: &BTreeSet<String>) -> Vec<String> {
    required().into_iter().filter(|k| !found.contains(k)).collect()
}

#[test]
fn seeds_reach_the_special_bit_patterns() {
    // exprs: the inputs of the generated cases; bounds: the same after its first byte
    let exprs: BTreeSet<String> = inputs("seeds", "exprs")
        .iter()
        .flat_map(|(_, b)| case_values(b))
        .collect();
    assert!(
        missing(&exprs).is_empty(),
        "exprs seeds miss {:?}",
        missing(&exprs)
    );
    let bounds: BTreeSet<String> = inputs("seeds", "bounds")
        .iter()
        .flat_map(|(_, b)| case_values(b.get(1..).unwrap_or(&[])))
        .collect();
    assert!(
        missing(&bounds).is_empty(),
        "bounds seeds miss {:?}",
        missing(&bounds)
    );
    // npy: the elements of the seed files that read
    let (mut f64s, mut f32s) = (BTreeSet::new(), BTreeSet::new());
    for (_, bytes) in inputs("seeds", "npy") {
        match kiln::npy::read_bytes(&bytes) {
            Ok(kiln::npy::NpyArray::F64(a)) => f64s.extend(a.iter().map(|v| f64_key(v.to_bits()))),
            Ok(kiln::npy::NpyArray::F32(a)) => f32s.extend(a.iter().map(|v| v.to_bits())),
            Ok(_) | Err(_) => {}
        }
    }
    let f64_missing: Vec<_> = SPECIAL_BITS
        .iter()
        .filter(|&&b| !f64s.contains(&f64_key(b)))
        .collect();
    assert!(f64_missing.is_empty(), "npy seeds miss {f64_missing:x?}");
    let f32_missing: Vec<_> = SPECIAL_BITS_F32.iter().filter(|b| !f32s.contains(b)).collect();
    assert!(f32_missing.is_empty(), "npy f32 seeds miss {f32_missing:x?}");
    // text: every seed binds its names to arrays of the special bit patterns (both dtypes)
    let texts: Vec<String> = inputs("seeds", "text")
        .iter()
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .collect();
    assert!(texts.iter().any(|t| t.contains("=f64[")) && texts.iter().any(|t| t.contains("=f32[")));
}

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
#[ignore = "writes fuzz/seeds; run with KILN_WRITE_SEEDS=1"]
fn write_seeds() {
    if std::env::var_os("KILN_WRITE_SEEDS").is_none() {
        return;
    }
    // the first cases (in seed order) that hold a pattern not yet covered, until all are
    let mut covered = BTreeSet::new();
    let mut chosen = Vec::new();
    for seed in 0..200_000u64 {
        let data = bytes(seed * 7919 + 3, 512);
        let found = case_values(&data);
        if required()
            .iter()
            .any(|k| found.contains(k) && !covered.contains(k))
        {
            covered.extend(found);
            chosen.push((seed, data));
        }
        if missing(&covered).is_empty() {
            break;
        }
    }
    assert!(
        missing(&covered).is_empty(),
        "no cases found for {:?}",
        missing(&covered)
    );
    for target in ["exprs", "bounds"] {
        let dir = fuzz_dir().join("seeds").join(target);
        std::fs::create_dir_all(&dir).unwrap();
        for (seed, data) in &chosen {
            let data = if target == "bounds" {
                // the first byte picks the guard page's end: both ends
                [&[(*seed & 1) as u8][..], data].concat()
            } else {
                data.clone()
            };
            std::fs::write(dir.join(format!("specials-{seed}")), data).unwrap();
        }
    }
}
