//! `kiln bench`: the seed kernels raced side by side in one process.
//!
//! Each kernel runs as four variants over each N and dtype: `kiln-simd` (the fused JIT kernel),
//! `kiln-scalar` (the fused kernel on the one-lane schedule), `ndarray` (the natural unfused ndarray
//! expression, one temporary per operation) and `rust-loop` (a hand-written loop with AVX2 and FMA
//! enabled where the CPU has them). Every variant's result is checked against the interpreter before it
//! is timed; every variant but `ndarray` writes into a preallocated output reused across repetitions.
//!
//! The integer kernels (`intmod`, `masksum`: [`ints`]) run the same four variants at their own fixed
//! types, once per N.
//!
//! `kiln bench --functions` ([`functions`]) races every function of numexpr's set, one at a time,
//! against std's scalar loop, into the same [`Row`]s.
//!
//! Every variant runs on one thread unless `threads` says otherwise; then the kiln variants use that
//! many and the baselines (which have no threaded form) stay on one. Each row records its own count.

pub mod baseline;
pub mod functions;
pub mod ints;
pub mod kernels;
pub mod plot;
pub mod programs;
pub mod report;
pub mod std_loops;
pub mod timing;

use baseline::StdMath;
use ints::IntKernel;
use kernels::{Inputs, Kernel, Tolerance};
use kiln::array::Float;
use kiln::error::{Error, Result};
use kiln::profile::Profile;
use kiln::runner::FusedRunner;
use kiln_ir::ElemType;
use ndarray::{Array1, ArrayD, Axis, IxDyn, arr0};
pub use report::Row;
use report::Timed;
use std::sync::Arc;
use std::time::Duration;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The float kernels.
    pub kernels: Vec<Kernel>,
    /// The integer kernels, each at its own fixed types (not multiplied by `dtypes`).
    pub int_kernels: Vec<IntKernel>,
    /// The sizes N.
    pub ns: Vec<usize>,
    /// The float types of the float kernels.
    pub dtypes: Vec<ElemType>,
    /// Threads of the kiln variants (the baselines always run on one).
    pub threads: usize,
    /// The profile the kiln variants are compiled under.
    pub profile: Profile,
    /// The time spent measuring each variant.
    pub budget: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            kernels: Kernel::ALL.to_vec(),
            int_kernels: IntKernel::ALL.to_vec(),
            ns: vec![100, 10_000, 1_000_000, 10_000_000],
            dtypes: vec![ElemType::F64, ElemType::F32],
            threads: 1,
            profile: Profile::Default,
            budget: Duration::from_millis(150),
        }
    }
}

/// The call the kiln variants time, as the table's last line says it: the ordinary call a user writes.
pub const KILN_CALL: &str = "kiln-*: the ordinary call, inputs by name, into a reused output: \
     runner.run_into(&[(\"x\", x.view().into()), ...], out.view_mut()) (for sumsq a zero-dimensional \
     out; the integer kernels runner.call(&args, out.view_mut()), the same call, into an array of \
     the result's type); the runner compiled once, before the timing";

/// The variants, in the order they are printed.
pub const VARIANTS: [&str; 4] = ["kiln-simd", "kiln-scalar", "ndarray", "rust-loop"];

/// Runs every kernel, dtype and N of `config`; `progress` hears about each step.
pub fn run(config: &Config, mut progress: impl FnMut(&str)) -> Result<Vec<Row>> {
    if config.threads == 0 {
        return Err(Error::Unsupported("--threads 0: at least one thread".into()));
    }
    let simd = kiln::backend_by_name("jit")?;
    let scalar = kiln::backend_by_name("jit-scalar")?;
    let mut rows = Vec::new();
    for &kernel in &config.kernels {
        for &dtype in &config.dtypes {
            for &n in &config.ns {
                progress(&format!("{} {} n={n}", kernel.name(), dtype.short()));
                let backends = [&simd, &scalar];
                match dtype {
                    ElemType::F64 => rows.extend(one::<f64>(kernel, n, config, backends)?),
                    ElemType::F32 => rows.extend(one::<f32>(kernel, n, config, backends)?),
                    _ => unreachable!("only float types (f32, f64) reach here"),
                }
            }
        }
    }
    for &kernel in &config.int_kernels {
        for &n in &config.ns {
            progress(&format!("{} {} n={n}", kernel.name(), kernel.dtype()));
            rows.extend(ints::one(
                kernel,
                n,
                config.threads,
                config.budget,
                [&simd, &scalar],
            )?);
        }
    }
    Ok(rows)
}

/// All variants of one kernel at one N and dtype.
fn one<T: StdMath + ndarray::LinalgScalar + ndarray::ScalarOperand>(
    kernel: Kernel,
    n: usize,
    config: &Config,
    backends: [&Arc<dyn kiln::Backend>; 2],
) -> Result<Vec<Row>> {
    let inputs = Inputs::<T>::new(n)?;
    let scalars: Vec<(&str, ArrayD<T>)> =
        [("a", inputs.a), ("b", inputs.b), ("c", inputs.c), ("d", inputs.d)]
            .into_iter()
            .map(|(name, v)| (name, arr0(v).into_dyn()))
            .collect();
    let x = inputs
        .x
        .view()
        .into_shape_with_order(IxDyn(&kernel.x_shape(n)))
        .map_err(|e| Error::Unsupported(format!("bench input shape: {e}")))?;
    let mut all: Vec<(&str, kiln::ArrayArg<'_>)> = vec![("x", x.into()), ("y", (&inputs.y).into())];
    all.extend(scalars.iter().map(|(name, v)| (*name, v.into())));
    // the inputs the kernel reads, as a user passes them
    let used = FusedRunner::compile_text(kernel.expr())?;
    let args: Vec<(&str, kiln::ArrayArg<'_>)> = all
        .into_iter()
        .filter(|(name, _)| used.input_names().iter().any(|n| n == name))
        .collect();
    // the interpreter under the kiln variants' profile checks them (bit for bit where exact: under
    // `approximate` it contracts `a*x + y` as they do); the baselines, written as the user wrote the
    // expression, against the default profile's
    let oracle_in = |profile: Profile| -> Result<Vec<T>> {
        let runner = FusedRunner::compile_text(kernel.expr())?
            .with_backend(kiln::interpreter())
            .with_profile(profile);
        Ok(flat(T::from_output(runner.run(&args)?)?))
    };
    let oracle = oracle_in(Profile::Default)?;
    let kiln_oracle = if config.profile == Profile::Default {
        oracle.clone()
    } else {
        oracle_in(config.profile)?
    };
    let out_shape = kernel.out_shape(n);
    let out_len = out_shape.iter().product::<usize>();
    let mut out = kernels::try_array(out_len, "the benchmark output", || T::ZERO)?;
    // the unfused ndarray variant allocates its temporaries infallibly: make sure (up to the
    // system's overcommit) that the most it holds at once, four arrays of n, can be had
    let mut probe: Vec<T> = Vec::new();
    probe
        .try_reserve_exact(n.saturating_mul(4))
        .map_err(|_| kiln_ir::IrError::Allocation {
            what: "the ndarray baseline's temporaries".into(),
            elements: n.saturating_mul(4),
        })?;
    drop(probe);
    let bytes = (kernel.arrays_touched() * n * std::mem::size_of::<T>()) as f64;
    let mut rows = Vec::new();
    let timed = Timed {
        kernel: kernel.name(),
        n,
        dtype: T::DTYPE.short_name(),
        bytes,
    };
    let mut push = |variant: &'static str, threads: usize, ns: f64, ok: bool| {
        rows.push(timed.row(variant, threads, ns, ok))
    };
    for (variant, backend) in VARIANTS[..2].iter().zip(backends) {
        let runner = FusedRunner::compile_text(kernel.expr())?
            .with_backend(backend.clone())
            .with_profile(config.profile)
            .with_threads(config.threads);
        let go = |out: &mut Array1<T>| -> Result<()> {
            if out_shape.len() == 1 {
                runner.run_into(&args, out.view_mut())
            } else if out_shape.is_empty() {
                // the one value of a whole-array reduction: a zero-dimensional view of `out`
                runner.run_into(&args, out.view_mut().index_axis_move(Axis(0), 0))
            } else {
                let view = out
                    .view_mut()
                    .into_shape_with_order(IxDyn(&out_shape))
                    .map_err(|e| Error::Unsupported(format!("bench output shape: {e}")))?;
                runner.run_into(&args, view)
            }
        };
        go(&mut out)?;
        let ok = agrees(
            kernel.tolerance(),
            out.as_slice().unwrap_or(&[]),
            &kiln_oracle,
            false,
        );
        let ns = timing::median_ns(|| go(&mut out).expect("ran once already"), config.budget);
        push(variant, config.threads, ns, ok);
    }
    let nd = kernels::ndarray_variant(kernel, &inputs);
    let ok = agrees(kernel.tolerance(), nd.as_slice().unwrap_or(&[]), &oracle, true);
    // a whole-array reduction is its one value, as the expression gives it (not put in an array)
    let ns = if kernel.reduces() {
        timing::median_ns(
            || {
                std::hint::black_box(kernels::ndarray_scalar(&inputs));
            },
            config.budget,
        )
    } else {
        timing::median_ns(
            || drop(std::hint::black_box(kernels::ndarray_variant(kernel, &inputs))),
            config.budget,
        )
    };
    push("ndarray", 1, ns, ok);
    kernels::loop_variant(kernel, &inputs, out.as_slice_mut().expect("contiguous"));
    let ok = agrees(kernel.tolerance(), out.as_slice().unwrap_or(&[]), &oracle, true);
    let ns = timing::median_ns(
        || kernels::loop_variant(kernel, &inputs, out.as_slice_mut().expect("contiguous")),
        config.budget,
    );
    push("rust-loop", 1, ns, ok);
    Ok(rows)
}

fn flat<T: Clone>(a: ArrayD<T>) -> Vec<T> {
    a.iter().cloned().collect()
}

/// Whether `got` agrees with the interpreter's `want` within `tol`. `baseline` loosens the bound of
/// f32 reductions, which the baselines accumulate in f32 while kiln accumulates in f64.
pub fn agrees<T: Float>(tol: Tolerance, got: &[T], want: &[T], baseline: bool) -> bool {
    if got.len() != want.len() {
        return false;
    }
    // a reduction's error is bounded relative to the magnitude of the results, not to each one: a
    // row sum or a prefix sum may cancel to nearly zero while its terms are large
    let scale = want
        .iter()
        .map(|w| w.to_f64().abs())
        .filter(|w| w.is_finite())
        .fold(f64::MIN_POSITIVE, f64::max);
    got.iter().zip(want).all(|(&g, &w)| {
        if g.is_nan() || w.is_nan() {
            return g.is_nan() && w.is_nan();
        }
        match tol {
            Tolerance::Exact => g.bits() == w.bits(),
            Tolerance::Reduction => {
                let rel = match (T::DTYPE, baseline) {
                    (ElemType::F64, _) => 1e-9,
                    (ElemType::F32, false) => 1e-6,
                    (ElemType::F32, true) => 1e-2,
                    _ => unreachable!("only float types (f32, f64) reach here"),
                };
                (g.to_f64() - w.to_f64()).abs() <= rel * scale
            }
            Tolerance::Ulp(max) => ulp_distance(g, w) <= max as u64,
        }
    })
}

/// The number of representable values between two finite floats of the same type.
pub fn ulp_distance<T: Float>(a: T, b: T) -> u64 {
    let key = |v: T| {
        let bits = v.bits() as i64;
        let sign = if T::DTYPE == ElemType::F64 {
            bits < 0
        } else {
            bits & (1 << 31) != 0
        };
        let mag = if T::DTYPE == ElemType::F64 {
            bits & i64::MAX
        } else {
            bits & 0x7fff_ffff
        };
        if sign { -mag } else { mag }
    };
    key(a).abs_diff(key(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kernel agrees with the interpreter on small and awkward sizes (empty, one element, a
    /// tail, not a multiple of 1000, several rows), and each row records its thread count.
    #[test]
    fn every_kernel_agrees_and_rows_record_threads() {
        let config = Config {
            ns: vec![0, 1, 7, 1003, 3000],
            threads: 2,
            budget: Duration::from_micros(200),
            ..Default::default()
        };
        let rows = run(&config, |_| {}).expect("bench runs");
        let per_n = Kernel::ALL.len() * 2 + IntKernel::ALL.len();
        assert_eq!(rows.len(), per_n * 5 * VARIANTS.len());
        for r in &rows {
            assert!(
                r.ok,
                "{} n={} {} {} disagrees with the interpreter",
                r.kernel, r.n, r.dtype, r.variant
            );
            let want = if r.variant.starts_with("kiln") { 2 } else { 1 };
            assert_eq!(r.threads, want, "{r:?}");
        }
    }

    #[test]
    fn axis_sums_read_a_matrix_of_1000_columns() {
        assert_eq!(Kernel::Rowsum.x_shape(3000), vec![3, 1000]);
        assert_eq!(Kernel::Colsum.out_shape(3000), vec![1000]);
        assert_eq!(Kernel::Rowsum.out_shape(3000), vec![3]);
        assert_eq!(Kernel::Rowsum.x_shape(1003), vec![1, 1003]);
        assert_eq!(Kernel::Cumsum.out_shape(7), vec![7]);
    }

    #[test]
    fn reduction_tolerance_scales_with_the_results_magnitude() {
        // a row sum that cancels to nearly zero beside large ones may differ in its last bits
        let want = [1000.0f64, 1e-12];
        assert!(agrees(Tolerance::Reduction, &[1000.0, 1.1e-12], &want, false));
        assert!(!agrees(Tolerance::Reduction, &[1000.0, 1e-3], &want, false));
        assert!(!agrees(Tolerance::Reduction, &[1000.0], &want, false));
    }
}
