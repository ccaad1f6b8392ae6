//! Random expression trees (every op, both dtypes, broadcasting shapes, strided and reversed views,
//! floats from raw bits and the special bit patterns, reductions over axes; about half with one or two
//! more results, run as one runner of several results), compiled by the JIT on its SIMD and scalar
//! schedules and checked against the interpreter (`tests/support/fuzz_checks.rs`,
//! replayed by `cargo test`).
#![no_main]

#[path = "../../tests/support/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::exprs(data));
