//! The text front end and `kiln explain` shape specs: an expression line and `NAME=f64[...]` lines;
//! any bytes give `Ok` or `Err`, never a panic or a hang, and whatever parses runs over arrays of the
//! special bit patterns (`tests/support/fuzz_checks.rs`, replayed by `cargo test`).
#![no_main]

#[path = "../../tests/support/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::text(data));
