//! kiln's command line and benchmark harness, apart from the library: the `kiln` binary
//! (`src/main.rs`: `eval`, `explain` and `bench` over .npy files) and [`bench`](mod@bench), the harness `kiln
//! bench` runs (the seed kernels, the function table, whole programs, each against plain Rust
//! baselines). The harness's hand-written baselines are the one place here that needs unsafe code
//! (a call into a function compiled for AVX2 + FMA after a run-time check, `bench/baseline.rs`); the
//! kiln crate itself forbids it.

#![deny(missing_docs)]

pub mod bench;
