//! Random expression trees (every op, both dtypes, broadcasting shapes, strided and reversed views,
//! floats from raw bits and the special bit patterns, reductions over axes; about half with one or two
//! more results, run as one runner of several results), compiled by the JIT on its SIMD and scalar
//! schedules and checked against the interpreter; and from the same bytes a typed kernel (bool,
//! int32, int64 beside the floats, their edge values, integer opcodes, casts, integer reductions and
//! scans) checked bit for bit against the typed interpreter (`tests/support/fuzz_checks.rs`,
//! replayed by `cargo test`).
#![no_main]

#[path = "../../tests/support/fuzz_checks.rs"]
mod fuzz_checks;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| fuzz_checks::exprs(data));
