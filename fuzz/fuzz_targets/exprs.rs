//! Random expression trees (every op, both dtypes, broadcasting shapes, strided and reversed views,
//! floats from raw bits, reductions over axes), compiled by the JIT on its SIMD and scalar schedules
//! and checked against the interpreter under the parity rules of `tests/support/random_kernel.rs`.
#![no_main]

#[path = "../../tests/support/random_kernel.rs"]
mod random_kernel;

use arbitrary::Unstructured;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(case) = random_kernel::Case::arbitrary(&mut u) else {
        return;
    };
    for backend in ["jit", "jit-scalar"] {
        if let Err(e) = case.check(backend) {
            panic!("{backend} disagrees with the interpreter: {e}\n{case:?}");
        }
    }
});
