//! What kiln's integration tests share: the test kit (`kit.rs`: the random generator and the
//! NaN-aware comparators, shared with kiln-jit's and kiln-ir's tests) and [`backend_suite!`], which
//! runs a suite over every backend kiln has.
#![allow(dead_code, unused_macros)]

mod kit;
pub use kit::*;

/// Every backend kiln has, by the name `--backend` takes (`kiln::BACKENDS`).
pub const BACKENDS: [&str; 3] = kiln::BACKENDS;

/// Runs each test function `fn name(backend: &str)` on every backend kiln has: one module per
/// backend (`interp`, `jit`, `jit_scalar`), each with one `#[test]` per function, and a test that
/// those modules are every entry of `kiln::BACKENDS`.
macro_rules! backend_suite {
    ($($test:ident),+ $(,)?) => {
        mod interp {
            $( #[test] fn $test() { super::$test("interp") } )+
        }
        mod jit {
            $( #[test] fn $test() { super::$test("jit") } )+
        }
        mod jit_scalar {
            $( #[test] fn $test() { super::$test("jit-scalar") } )+
        }
        #[test]
        fn the_backend_suite_covers_every_backend() {
            let mut known = kiln::BACKENDS.to_vec();
            known.sort_unstable();
            assert_eq!(known, ["interp", "jit", "jit-scalar"]);
        }
    };
}

/// The runner of a text expression on the backend named `backend` (panics on a bad expression).
pub fn runner(expr: &str, backend: &str) -> kiln::FusedRunner {
    kiln::FusedRunner::compile_text(expr)
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
        .with_backend(kiln::backend_by_name(backend).unwrap())
}

/// A result's shape and its values as f64, in C order.
pub fn values(out: kiln::Output) -> (Vec<usize>, Vec<f64>) {
    (out.shape().to_vec(), out.into_f64().iter().copied().collect())
}

/// The interpreter's result on C-contiguous copies of the inputs, or its error.
pub fn oracle(
    expr: &str,
    inputs: &[(&str, ndarray::ArrayViewD<'_, f64>)],
) -> Result<(Vec<usize>, Vec<f64>), String> {
    let copies: Vec<(&str, ndarray::ArrayD<f64>)> = inputs
        .iter()
        .map(|(n, v)| (*n, v.as_standard_layout().into_owned()))
        .collect();
    let args: Vec<(&str, kiln::ArrayArg<'_>)> = copies
        .iter()
        .map(|(n, c)| (*n, kiln::ArrayArg::from(c.view())))
        .collect();
    runner(expr, "interp")
        .run(&args)
        .map(values)
        .map_err(|e| e.to_string())
}
