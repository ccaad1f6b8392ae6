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
        }
    }
    eprintln!("{checked} typed kernels checked, {typed} of them typed and ran on the interpreter");
    assert!(!full || checked > 1800, "only {checked} cases generated");
    assert!(!full || typed > 1000, "too few cases type and run: {typed}");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}
