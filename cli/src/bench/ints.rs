//! The integer kernels of `kiln bench` (issue 13): `(i*3 + j) % 7` over int32 (a map),
//! `sum(where(p, i, 0))` over int64 `i` and bool `p` (a masked reduction), `sum(i, axis=1)` of a
//! 3-D int64 array (a middle axis) and `cumsum(i)` of int64 (a scan; issue 23), raced as the float
//! kernels are (`kiln-simd`, `kiln-scalar`, the unfused ndarray expression, a hand loop), each checked bit
//! for bit against the interpreter before it is timed.
//!
//! Their types are fixed (NumPy's: int32 stays int32 under `* 3 + j % 7`; a sum of int64 is int64),
//! so `--dtype` does not multiply them: they run once per N where `--dtype` is not given or names
//! `int`. `%` is NumPy's (floored: the divisor's sign), which the baselines write as
//! `rem_euclid(7)`. The kiln variants write into a reused array of the result's type (the ordinary
//! call, `runner.call(&args, out.view_mut())`), as the hand loop (AVX2 where the CPU has it) writes
//! into a preallocated output; the ndarray variant allocates its result.

use super::kernels::try_array;
use super::report::{Row, Timed};
use super::timing;
use kiln::array::Output;
use kiln::error::{Error, Result};
use kiln::runner::FusedRunner;
use ndarray::{Array1, Zip};
use std::sync::Arc;
use std::time::Duration;

/// An integer kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IntKernel {
    /// `(i*3 + j) % 7`, `i` and `j` int32 in [-1000, 1000).
    Mod7,
    /// `sum(where(p, i, 0))`, `i` int64 in [-10**9, 10**9), `p` bool (true about half the time).
    MaskSum,
    /// `sum(i, axis=1)`, `i` int64 of shape [N / 160, 16, 10] (the middle axis), as `MaskSum`'s.
    MidSum,
    /// `cumsum(i)`, `i` int64 (the flattened array), as `MaskSum`'s.
    CumSum,
}

impl IntKernel {
    /// Every integer kernel.
    pub const ALL: [IntKernel; 4] = [
        IntKernel::Mod7,
        IntKernel::MaskSum,
        IntKernel::MidSum,
        IntKernel::CumSum,
    ];

    /// The name `--kernels` takes and rows carry.
    pub fn name(self) -> &'static str {
        match self {
            IntKernel::Mod7 => "intmod",
            IntKernel::MaskSum => "masksum",
            IntKernel::MidSum => "midsum",
            IntKernel::CumSum => "intcumsum",
        }
    }

    /// The kernel of that name.
    pub fn from_name(name: &str) -> Option<IntKernel> {
        IntKernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The text expression kiln compiles.
    pub fn expr(self) -> &'static str {
        match self {
            IntKernel::Mod7 => "(i*3 + j) % 7",
            IntKernel::MaskSum => "sum(where(p, i, 0))",
            IntKernel::MidSum => "sum(i, axis=1)",
            IntKernel::CumSum => "cumsum(i)",
        }
    }

    /// The type of the result, as the table's `type` column shows it.
    pub fn dtype(self) -> &'static str {
        match self {
            IntKernel::Mod7 => "i32",
            IntKernel::MaskSum | IntKernel::MidSum | IntKernel::CumSum => "i64",
        }
    }

    /// Bytes of compulsory memory traffic per element: two int32 read and one written; an int64 and
    /// a bool read; an int64 read (a sixteenth of one written); an int64 read and one written.
    pub fn bytes_per_elem(self) -> usize {
        match self {
            IntKernel::Mod7 => 12,
            IntKernel::MaskSum => 9,
            IntKernel::MidSum => 8,
            IntKernel::CumSum => 16,
        }
    }
}

/// The inputs at size `n`: deterministic, as the float kernels' (xorshift64*).
struct Inputs {
    i32s: Array1<i32>,
    j32s: Array1<i32>,
    i64s: Array1<i64>,
    mask: Array1<bool>,
}

impl Inputs {
    fn new(n: usize) -> Result<Inputs> {
        let mut s = 0x9e37_79b9_7f4a_7c15 ^ n as u64;
        let mut next = move || {
            s ^= s >> 12;
            s ^= s << 25;
            s ^= s >> 27;
            s.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let i32s = try_array(n, "the benchmark input i", || (next() % 2000) as i32 - 1000)?;
        let j32s = try_array(n, "the benchmark input j", || (next() % 2000) as i32 - 1000)?;
        let i64s = try_array(n, "the benchmark input i", || {
            (next() % 2_000_000_000) as i64 - 1_000_000_000
        })?;
        let mask = try_array(n, "the benchmark input p", || next() >> 63 == 1)?;
        Ok(Inputs {
            i32s,
            j32s,
            i64s,
            mask,
        })
    }

    fn args(&self, k: IntKernel) -> Vec<(&'static str, kiln::ArrayArg<'_>)> {
        match k {
            IntKernel::Mod7 => vec![("i", (&self.i32s).into()), ("j", (&self.j32s).into())],
            IntKernel::MaskSum => vec![("i", (&self.i64s).into()), ("p", (&self.mask).into())],
            IntKernel::MidSum => vec![("i", self.cube().into())],
            IntKernel::CumSum => vec![("i", (&self.i64s).into())],
        }
    }

    /// The int64 values as a 3-D array of [N / 160, 16, 10] (the first N / 160 * 160 of them).
    fn cube(&self) -> ndarray::ArrayView3<'_, i64> {
        let outer = self.i64s.len() / MID_INNER;
        let flat = self.i64s.slice(ndarray::s![..outer * MID_INNER]);
        let data = flat.to_slice().expect("owned");
        ndarray::ArrayView3::from_shape((outer, 16, 10), data).expect("the shape's elements")
    }
}

/// Points of one outer index of `sum(i, axis=1)`'s array ([16, 10]).
const MID_INNER: usize = 160;

/// The unfused ndarray expression: a temporary per operation (`rem_euclid` is NumPy's `%` for a
/// positive divisor).
fn ndarray_variant(k: IntKernel, x: &Inputs) -> Output {
    match k {
        IntKernel::Mod7 => Output::I32((&x.i32s * 3 + &x.j32s).mapv_into(|v| v.rem_euclid(7)).into_dyn()),
        IntKernel::MaskSum => {
            let masked = Zip::from(&x.mask)
                .and(&x.i64s)
                .map_collect(|&p, &i| if p { i } else { 0 });
            Output::I64(ndarray::arr0(masked.sum()).into_dyn())
        }
        IntKernel::MidSum => Output::I64(x.cube().sum_axis(ndarray::Axis(1)).into_dyn()),
        IntKernel::CumSum => {
            let mut c = x.i64s.clone();
            c.accumulate_axis_inplace(ndarray::Axis(0), |&prev, cur| *cur = cur.wrapping_add(prev));
            Output::I64(c.into_dyn())
        }
    }
}

/// The hand loop: one pass, into `out` (the map) or `out64` (a row sum or the scan) or returned
/// (the sum), compiled for AVX2 where the CPU has it (as the float kernels' loops).
fn loop_variant(k: IntKernel, x: &Inputs, out: &mut [i32], out64: &mut [i64]) -> i64 {
    super::baseline::dispatch(|| match k {
        IntKernel::Mod7 => {
            let (i, j) = (
                x.i32s.as_slice().expect("owned"),
                x.j32s.as_slice().expect("owned"),
            );
            for ((o, &a), &b) in out.iter_mut().zip(i).zip(j) {
                *o = a.wrapping_mul(3).wrapping_add(b).rem_euclid(7);
            }
            0
        }
        IntKernel::MaskSum => {
            let (i, p) = (
                x.i64s.as_slice().expect("owned"),
                x.mask.as_slice().expect("owned"),
            );
            i.iter()
                .zip(p)
                .fold(0i64, |s, (&v, &m)| s.wrapping_add(if m { v } else { 0 }))
        }
        IntKernel::MidSum => {
            // each outer block of [16, 10]: its 16 rows of 10 added into 10 sums
            let i = x.i64s.as_slice().expect("owned");
            for (block, o) in i.chunks_exact(MID_INNER).zip(out64.chunks_exact_mut(10)) {
                o.fill(0);
                for row in block.chunks_exact(10) {
                    for (s, &v) in o.iter_mut().zip(row) {
                        *s = s.wrapping_add(v);
                    }
                }
            }
            0
        }
        IntKernel::CumSum => {
            let i = x.i64s.as_slice().expect("owned");
            let mut s = 0i64;
            for (o, &v) in out64.iter_mut().zip(i) {
                s = s.wrapping_add(v);
                *o = s;
            }
            0
        }
    })
}

/// The median time of `runner`'s ordinary call into a reused array of the result's type
/// (`runner.call(&args, out.view_mut())`), and whether its result equals `oracle`.
fn time_into<A: kiln::Element + Default + PartialEq>(
    runner: &FusedRunner,
    args: &[(&str, kiln::ArrayArg<'_>)],
    oracle: &ndarray::ArrayD<A>,
    budget: Duration,
) -> Result<(f64, bool)> {
    let mut out = ndarray::ArrayD::<A>::default(oracle.shape());
    runner.call(args, out.view_mut())?;
    let ok = out == *oracle;
    let ns = timing::median_ns(
        || runner.call(args, out.view_mut()).expect("ran once already"),
        budget,
    );
    Ok((ns, ok))
}

/// All variants of one integer kernel at one N.
pub(super) fn one(
    k: IntKernel,
    n: usize,
    threads: usize,
    budget: Duration,
    backends: [&Arc<dyn kiln::Backend>; 2],
) -> Result<Vec<Row>> {
    let inputs = Inputs::new(n)?;
    let args = inputs.args(k);
    let oracle = FusedRunner::compile_text(k.expr())?
        .with_backend(kiln::interpreter())
        .run(&args)?;
    let bytes = (k.bytes_per_elem() * n) as f64;
    let mut rows = Vec::new();
    let timed = Timed {
        kernel: k.name(),
        n,
        dtype: k.dtype(),
        bytes,
    };
    let mut push = |variant: &'static str, threads: usize, ns: f64, ok: bool| {
        rows.push(timed.row(variant, threads, ns, ok))
    };
    for (variant, backend) in super::VARIANTS[..2].iter().zip(backends) {
        let runner = FusedRunner::compile_text(k.expr())?
            .with_backend(backend.clone())
            .with_threads(threads);
        let (ns, ok) = match &oracle {
            Output::I32(o) => time_into(&runner, &args, o, budget)?,
            Output::I64(o) => time_into(&runner, &args, o, budget)?,
            other => {
                return Err(Error::Output(format!(
                    "an integer kernel gave {}",
                    other.dtype_name()
                )));
            }
        };
        push(variant, threads, ns, ok);
    }
    let ok = ndarray_variant(k, &inputs) == oracle;
    let ns = timing::median_ns(|| drop(std::hint::black_box(ndarray_variant(k, &inputs))), budget);
    push("ndarray", 1, ns, ok);
    let mut out = try_array(
        if k == IntKernel::Mod7 { n } else { 0 },
        "the benchmark output",
        || 0i32,
    )?;
    let out = out
        .as_slice_mut()
        .ok_or_else(|| Error::Output("not contiguous".into()))?;
    let n64 = match k {
        IntKernel::MidSum => n / MID_INNER * 10,
        IntKernel::CumSum => n,
        _ => 0,
    };
    let mut out64 = try_array(n64, "the benchmark output", || 0i64)?;
    let out64 = out64
        .as_slice_mut()
        .ok_or_else(|| Error::Output("not contiguous".into()))?;
    let sum = loop_variant(k, &inputs, out, out64);
    let ok = match k {
        IntKernel::Mod7 => Output::I32(Array1::from(out.to_vec()).into_dyn()) == oracle,
        IntKernel::MaskSum => Output::I64(ndarray::arr0(sum).into_dyn()) == oracle,
        IntKernel::MidSum => {
            let shape = ndarray::IxDyn(&[n / MID_INNER, 10]);
            Output::I64(ndarray::ArrayD::from_shape_vec(shape, out64.to_vec()).expect("sized")) == oracle
        }
        IntKernel::CumSum => Output::I64(Array1::from(out64.to_vec()).into_dyn()) == oracle,
    };
    let ns = timing::median_ns(
        || {
            std::hint::black_box(loop_variant(k, &inputs, out, out64));
        },
        budget,
    );
    push("rust-loop", 1, ns, ok);
    Ok(rows)
}
