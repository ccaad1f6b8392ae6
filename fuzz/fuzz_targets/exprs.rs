//! Random kernels of every element type (bool, int32, int64, float32, float64; all-float or mixed:
//! every op, casts, integer opcodes, broadcasting shapes, strided, transposed and reversed views,
//! raw bits, the special bit patterns and integer edge values, reductions over any axes, means,
//! scans, several results), from the generator the parity suite draws from
//! (`tests/support/random_kernel.rs`), compiled by the JIT on its SIMD and scalar schedules and
//! checked against the interpreter with the tolerance of each kernel kind
//! (`tests/support/fuzz_checks.rs`, replayed by `cargo test`).
#![no_main]

#[path = "../../tests/support/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::exprs(data));
