//! Shapes, strides and offsets: no read or write outside the arrays (inputs and output against
//! guard pages; the check is `tests/support/guarded.rs`, replayed by `cargo test`).
#![no_main]

#[path = "../../tests/support/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::bounds(data));
