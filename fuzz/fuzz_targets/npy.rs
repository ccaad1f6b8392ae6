//! The `.npy` reader, header and data: any bytes give an array or a one-line error, never a panic or
//! an allocation the data cannot back, and a read array computes alike in the JIT and the
//! interpreter (`tests/support/fuzz_checks.rs`, replayed by `cargo test`).
#![no_main]

#[path = "../../tests/support/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::npy(data));
