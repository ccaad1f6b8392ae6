//! `kiln bench --programs`: whole programs, each written with kiln's best API today and as a good
//! Rust programmer would write it with ndarray (`Zip`, iterators, std's math; no hand SIMD), checked
//! to agree first, then timed (median, one thread unless `--threads`).
//!
//! - Black-Scholes call and put over 1e6 options (f64): kiln runs one prepared kernel of two outputs
//!   (`"call; put"`: d1, d2, the discount and the logs computed once per option), plain Rust one `Zip`
//!   loop computing both;
//! - softmax and logsumexp over the rows of a 1000 x 1000 f32 array;
//! - layer norm over the rows of a 4096 x 1024 f32 array (`(x - mean) / sqrt(var + 1e-5)`);
//! - the particle step `p += v*dt; v = v*0.99 + g*dt` at n = 64 (100k steps) and n = 4096 (10k
//!   steps), plain Rust one `Zip` loop in place, kiln four ways: one prepared call per step that
//!   updates `p` and `v` in place ([`FusedRunner::prepared_update`]), the ordinary call (one
//!   runner's [`FusedRunner::call`] with `InPlace` into `p` and `v`, as README writes it), two
//!   runners' `run_into` by name, and `fuse_assign`;
//! - `tanh(M)*2 + M**2` over a 1000 x 1000 f64 matrix (issue 22's small program): kiln one prepared
//!   kernel into a preallocated output, plain Rust one `Zip` loop of std's `tanh`.

use kiln::array::ArrayArg;
use kiln::error::{Error, Result};
use kiln::runner::FusedRunner;
use kiln_ir::UnaryOp;
use ndarray::{Array1, Array2, ArrayD, Axis, Zip, arr0};
use std::time::Duration;

use super::timing::median_ns;

/// One program's timings.
#[derive(Debug, Clone)]
pub struct ProgramRow {
    /// The program.
    pub name: &'static str,
    /// Its size and element type.
    pub size: String,
    /// The kiln API the program uses.
    pub api: &'static str,
    /// kiln's median time, in ns.
    pub kiln_ns: f64,
    /// The plain Rust version's median time, in ns.
    pub plain_ns: f64,
    /// The largest difference between the two results, relative to the larger magnitude (at least 1).
    pub max_rel_diff: f64,
}

impl ProgramRow {
    /// Plain time over kiln time: above 1, kiln is faster.
    pub fn ratio(&self) -> f64 {
        self.plain_ns / self.kiln_ns
    }

    /// One JSON object on one line (`kiln bench --programs --json`): the fields, times in ns.
    pub fn json(&self) -> String {
        use super::report::{json_number, json_string};
        format!(
            r#"{{"program":{},"size":{},"api":{},"kiln_ns":{},"plain_ns":{},"ratio":{},"max_rel_diff":{}}}"#,
            json_string(self.name),
            json_string(&self.size),
            json_string(self.api),
            json_number(self.kiln_ns),
            json_number(self.plain_ns),
            json_number(self.ratio()),
            // a difference is small: four decimals would round it away
            if self.max_rel_diff.is_finite() {
                format!("{:e}", self.max_rel_diff)
            } else {
                "null".into()
            }
        )
    }
}

/// The largest relative difference of two results (an absolute one below magnitude 1); NaN and
/// infinities must match exactly.
fn max_rel_diff<'a>(a: impl Iterator<Item = &'a f64>, b: impl Iterator<Item = &'a f64>) -> f64 {
    a.zip(b)
        .map(|(&x, &y)| {
            if x == y || (x.is_nan() && y.is_nan()) {
                0.0
            } else if !x.is_finite() || !y.is_finite() {
                f64::INFINITY
            } else {
                (x - y).abs() / x.abs().max(y.abs()).max(1.0)
            }
        })
        .fold(0.0, f64::max)
}

/// A deterministic value in `[lo, hi)` for index `i`.
fn spread(i: usize, lo: f64, hi: f64) -> f64 {
    let u = ((i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11) as f64 / (1u64 << 53) as f64;
    lo + (hi - lo) * u
}

fn check(name: &str, diff: f64, tol: f64) -> Result<()> {
    if diff.is_nan() || diff > tol {
        return Err(Error::Unsupported(format!(
            "program {name}: kiln and plain Rust disagree by {diff:e} (tolerance {tol:e})"
        )));
    }
    Ok(())
}

/// Runs every program; `progress` hears about each.
pub fn run(threads: usize, budget: Duration, mut progress: impl FnMut(&str)) -> Result<Vec<ProgramRow>> {
    let mut rows = Vec::new();
    progress("black-scholes");
    rows.push(black_scholes(1_000_000, threads, budget)?);
    progress("softmax");
    rows.push(softmax(1000, 1000, threads, budget)?);
    progress("logsumexp");
    rows.push(logsumexp(1000, 1000, threads, budget)?);
    progress("layer-norm");
    rows.push(layer_norm(4096, 1024, threads, budget)?);
    for (n, steps) in [(64, 100_000), (4096, 10_000)] {
        progress("particle-step");
        rows.extend(particles(n, steps, threads, budget)?);
    }
    progress("tanh-square");
    rows.push(tanh_square(1000, 1000, threads, budget)?);
    Ok(rows)
}

fn black_scholes(n: usize, threads: usize, budget: Duration) -> Result<ProgramRow> {
    let s = Array1::from_iter((0..n).map(|i| spread(i, 10.0, 110.0)));
    let k = Array1::from_iter((0..n).map(|i| spread(i + 7 * n, 20.0, 100.0)));
    let t = Array1::from_iter((0..n).map(|i| spread(i + 13 * n, 0.1, 2.0)));
    let (r, v) = (0.02, 0.3);
    let d1 = "((log(s/k) + (r + 0.5*v*v)*t) / (v*sqrt(t)))";
    let d2 = format!("({d1} - v*sqrt(t))");
    // N(x) = erfc(-x/sqrt(2)) / 2
    let cdf = |x: &str| format!("(0.5*erfc(-({x})*0.7071067811865476))");
    let call_src = format!("s*{} - k*exp(-r*t)*{}", cdf(d1), cdf(&d2));
    let put_src = format!(
        "k*exp(-r*t)*{} - s*{}",
        cdf(&format!("-{d2}")),
        cdf(&format!("-{d1}"))
    );
    let (ra, va) = (arr0(r), arr0(v));
    let args: [(&str, ArrayArg<'_>); 5] = [
        ("s", (&s).into()),
        ("k", (&k).into()),
        ("t", (&t).into()),
        ("r", (&ra).into()),
        ("v", (&va).into()),
    ];
    // one kernel of two outputs: the subexpressions call and put share are computed once
    let h = FusedRunner::compile_text(&format!("{call_src}; {put_src}"))?
        .with_threads(threads)
        .prepared(&args)?;
    let ins: [&[f64]; 5] = [
        s.as_slice().expect("fresh"),
        k.as_slice().expect("fresh"),
        t.as_slice().expect("fresh"),
        ra.as_slice().expect("fresh"),
        va.as_slice().expect("fresh"),
    ];
    let (mut call, mut put) = (Array1::<f64>::zeros(n), Array1::<f64>::zeros(n));
    let kiln = |call: &mut Array1<f64>, put: &mut Array1<f64>| -> Result<()> {
        let mut outs = [
            call.as_slice_mut().expect("fresh"),
            put.as_slice_mut().expect("fresh"),
        ];
        h.run_slices_many(&ins, &mut outs)
    };
    kiln(&mut call, &mut put)?;
    let (mut pc, mut pp) = (Array1::<f64>::zeros(n), Array1::<f64>::zeros(n));
    let plain = |pc: &mut Array1<f64>, pp: &mut Array1<f64>| {
        let cdf = |x: f64| 0.5 * UnaryOp::Erfc.eval(-x * std::f64::consts::FRAC_1_SQRT_2);
        Zip::from(pc)
            .and(pp)
            .and(&s)
            .and(&k)
            .and(&t)
            .for_each(|c, p, &s, &k, &t| {
                let vs = v * t.sqrt();
                let d1 = ((s / k).ln() + (r + 0.5 * v * v) * t) / vs;
                let d2 = d1 - vs;
                let disc = k * (-r * t).exp();
                *c = s * cdf(d1) - disc * cdf(d2);
                *p = disc * cdf(-d2) - s * cdf(-d1);
            });
    };
    plain(&mut pc, &mut pp);
    let diff = max_rel_diff(call.iter(), pc.iter()).max(max_rel_diff(put.iter(), pp.iter()));
    check("black-scholes", diff, 1e-12)?;
    let kiln_ns = median_ns(|| kiln(&mut call, &mut put).expect("ran once"), budget);
    let plain_ns = median_ns(|| plain(&mut pc, &mut pp), budget);
    Ok(ProgramRow {
        name: "black-scholes call+put",
        size: format!("{n} f64"),
        api: "one prepared kernel of two outputs, run_slices_many",
        kiln_ns,
        plain_ns,
        max_rel_diff: diff,
    })
}

fn matrix(rows: usize, cols: usize, lo: f64, hi: f64) -> Array2<f32> {
    Array2::from_shape_fn((rows, cols), |(i, j)| spread(i * cols + j, lo, hi) as f32)
}

fn widen(a: &ArrayD<f32>) -> Vec<f64> {
    a.iter().map(|&v| f64::from(v)).collect()
}

/// Runs a one-input f32 program through `src` (prepared, run_into) against `plain`.
#[allow(clippy::too_many_arguments)]
fn rows_program(
    name: &'static str,
    src: &str,
    x: &Array2<f32>,
    out_shape: &[usize],
    mut plain: impl FnMut(&Array2<f32>, &mut ArrayD<f32>),
    tol: f64,
    threads: usize,
    budget: Duration,
) -> Result<ProgramRow> {
    let h = FusedRunner::compile_text(src)?
        .with_threads(threads)
        .prepared(&[("x", x.into())])?;
    let xs = [ArrayArg::from(x)];
    let mut out = ArrayD::<f32>::zeros(out_shape);
    h.run_into(&xs, out.view_mut())?;
    let mut want = ArrayD::<f32>::zeros(out_shape);
    plain(x, &mut want);
    let diff = max_rel_diff(widen(&out).iter(), widen(&want).iter());
    check(name, diff, tol)?;
    let kiln_ns = median_ns(|| h.run_into(&xs, out.view_mut()).expect("ran once"), budget);
    let plain_ns = median_ns(|| plain(x, &mut want), budget);
    Ok(ProgramRow {
        name,
        size: format!("{}x{} f32", x.nrows(), x.ncols()),
        api: "prepared handle, run_into",
        kiln_ns,
        plain_ns,
        max_rel_diff: diff,
    })
}

fn row_max(row: ndarray::ArrayView1<'_, f32>) -> f32 {
    row.fold(f32::NEG_INFINITY, |m, &v| m.max(v))
}

fn softmax(rows: usize, cols: usize, threads: usize, budget: Duration) -> Result<ProgramRow> {
    let x = matrix(rows, cols, -10.0, 10.0);
    let src =
        "exp(x - max(x, axis=1, keepdims=1)) / sum(exp(x - max(x, axis=1, keepdims=1)), axis=1, keepdims=1)";
    let plain = |x: &Array2<f32>, out: &mut ArrayD<f32>| {
        for (xr, mut or) in x.rows().into_iter().zip(out.axis_iter_mut(Axis(0))) {
            let m = row_max(xr);
            or.iter_mut().zip(xr).for_each(|(o, &v)| *o = (v - m).exp());
            let s: f32 = or.sum();
            or.mapv_inplace(|v| v / s);
        }
    };
    rows_program(
        "softmax rows",
        src,
        &x,
        &[rows, cols],
        plain,
        1e-5,
        threads,
        budget,
    )
}

fn logsumexp(rows: usize, cols: usize, threads: usize, budget: Duration) -> Result<ProgramRow> {
    let x = matrix(rows, cols, -10.0, 10.0);
    let src = "log(sum(exp(x - max(x, axis=1, keepdims=1)), axis=1)) + max(x, axis=1)";
    let plain = |x: &Array2<f32>, out: &mut ArrayD<f32>| {
        for (xr, o) in x.rows().into_iter().zip(out.iter_mut()) {
            let m = row_max(xr);
            let s: f32 = xr.iter().map(|&v| (v - m).exp()).sum();
            *o = s.ln() + m;
        }
    };
    rows_program("logsumexp rows", src, &x, &[rows], plain, 1e-5, threads, budget)
}

fn layer_norm(rows: usize, cols: usize, threads: usize, budget: Duration) -> Result<ProgramRow> {
    let x = matrix(rows, cols, -3.0, 5.0);
    let src = "(x - mean(x, axis=1, keepdims=1)) / sqrt(var(x, axis=1, keepdims=1) + 1e-5)";
    let plain = |x: &Array2<f32>, out: &mut ArrayD<f32>| {
        let n = x.ncols() as f32;
        for (xr, mut or) in x.rows().into_iter().zip(out.axis_iter_mut(Axis(0))) {
            let mean = xr.sum() / n;
            let var = xr.iter().map(|&v| (v - mean) * (v - mean)).sum::<f32>() / n;
            let inv = 1.0 / (var + 1e-5).sqrt();
            or.iter_mut().zip(xr).for_each(|(o, &v)| *o = (v - mean) * inv);
        }
    };
    rows_program(
        "layer norm rows",
        src,
        &x,
        &[rows, cols],
        plain,
        1e-4,
        threads,
        budget,
    )
}

/// How the particle step calls kiln.
#[derive(Debug, Clone, Copy)]
enum Step {
    /// One prepared kernel of two outputs that overwrite `p` and `v` ([`FusedRunner::prepared_update`]).
    Update,
    /// The one call a README reader writes: one runner of both results, `call` with `InPlace`
    /// into `p` and `v` each step.
    Call,
    /// Two runners, `run_into` by name each step into a second pair of arrays, swapped after the
    /// step.
    Ordinary,
    /// `fuse_assign` on `p`, then on `v`, each step.
    Fuse,
}

impl Step {
    fn api(self) -> &'static str {
        match self {
            Step::Update => "one prepared update of p and v in place",
            Step::Call => "one runner, call(.., InPlace([p, v])) each step (the ordinary call)",
            Step::Ordinary => "two runners, run_into by name each step",
            Step::Fuse => "p.fuse_assign, then v.fuse_assign, each step",
        }
    }
}

fn particles(n: usize, steps: usize, threads: usize, budget: Duration) -> Result<Vec<ProgramRow>> {
    let (dt, g) = (0.001, -9.81);
    let p0 = Array1::from_iter((0..n).map(|i| spread(i, -1.0, 1.0)));
    let v0 = Array1::from_iter((0..n).map(|i| spread(i + n, -1.0, 1.0)));
    let plain = |p: &mut Array1<f64>, v: &mut Array1<f64>| {
        for _ in 0..steps {
            Zip::from(&mut *p).and(&mut *v).for_each(|p, v| {
                *p += *v * dt;
                *v = *v * 0.99 + g * dt;
            });
        }
    };
    let (mut pp, mut pv) = (p0.clone(), v0.clone());
    plain(&mut pp, &mut pv);
    let plain_ns = median_ns(
        || {
            let (mut p, mut v) = (p0.clone(), v0.clone());
            plain(&mut p, &mut v)
        },
        budget,
    );
    let mut rows = Vec::new();
    for how in [Step::Update, Step::Call, Step::Ordinary, Step::Fuse] {
        let kiln = particle_steps(how, dt, g, steps, threads, (&p0, &v0))?;
        let (kp, kv) = kiln(p0.clone(), v0.clone())?;
        let diff = max_rel_diff(kp.iter(), pp.iter()).max(max_rel_diff(kv.iter(), pv.iter()));
        check("particle-step", diff, 1e-12)?;
        let kiln_ns = median_ns(|| drop(kiln(p0.clone(), v0.clone()).expect("ran once")), budget);
        rows.push(ProgramRow {
            name: "particle step",
            size: format!("n={n} f64, {steps} steps"),
            api: how.api(),
            kiln_ns,
            plain_ns,
            max_rel_diff: diff,
        });
    }
    Ok(rows)
}

/// The particle loop `how` writes it: `steps` steps from the given `p` and `v`, their final values.
type Steps<'r> = Box<dyn Fn(Array1<f64>, Array1<f64>) -> Result<(Array1<f64>, Array1<f64>)> + 'r>;

fn particle_steps<'r>(
    how: Step,
    dt: f64,
    g: f64,
    steps: usize,
    threads: usize,
    (p0, v0): (&Array1<f64>, &Array1<f64>),
) -> Result<Steps<'r>> {
    use kiln::ext::FuseAssignExt;
    let (dta, ga) = (arr0(dt), arr0(g));
    Ok(match how {
        Step::Update => {
            // one kernel of two outputs that overwrite p and v: every input of a point is loaded
            // before either output of it is stored, so the velocity update reads the old v as the
            // plain loop does
            let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt")?
                .with_threads(threads)
                .prepared_update(
                    &[
                        ("p", p0.into()),
                        ("v", v0.into()),
                        ("dt", (&dta).into()),
                        ("g", (&ga).into()),
                    ],
                    &["p", "v"],
                )?;
            let (dts, gs) = ([dt], [g]);
            Box::new(move |p, v| {
                let (mut p, mut v) = (p.to_vec(), v.to_vec());
                for _ in 0..steps {
                    step.update(&mut [&mut p[..], &mut v[..]], &[&dts[..], &gs[..]])?;
                }
                Ok((Array1::from_vec(p), Array1::from_vec(v)))
            })
        }
        Step::Call => {
            let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt")?.with_threads(threads);
            Box::new(move |mut p, mut v| {
                for _ in 0..steps {
                    step.call(
                        &[("dt", (&dta).into()), ("g", (&ga).into())],
                        kiln::InPlace(&mut [("p", p.view_mut()), ("v", v.view_mut())]),
                    )?;
                }
                Ok((p, v))
            })
        }
        Step::Ordinary => {
            let pr = FusedRunner::compile_text("p + v*dt")?.with_threads(threads);
            let vr = FusedRunner::compile_text("v*0.99 + g*dt")?.with_threads(threads);
            Box::new(move |mut p, mut v| {
                let (mut pn, mut vn) = (p.clone(), v.clone());
                for _ in 0..steps {
                    let args = [
                        ("p", p.view().into()),
                        ("v", v.view().into()),
                        ("dt", (&dta).into()),
                    ];
                    pr.run_into(&args, pn.view_mut())?;
                    let args = [("v", v.view().into()), ("g", (&ga).into()), ("dt", (&dta).into())];
                    vr.run_into(&args, vn.view_mut())?;
                    std::mem::swap(&mut p, &mut pn);
                    std::mem::swap(&mut v, &mut vn);
                }
                Ok((p, v))
            })
        }
        Step::Fuse => Box::new(move |mut p, mut v| {
            let none: [&Array1<f64>; 0] = [];
            for _ in 0..steps {
                p.fuse_assign(&(&v,), |p, (v,)| p + v * dt)?;
                v.fuse_assign(&none[..], |v, _| v * 0.99 + g * dt)?;
            }
            Ok((p, v))
        }),
    })
}

fn tanh_square(rows: usize, cols: usize, threads: usize, budget: Duration) -> Result<ProgramRow> {
    let m = Array2::from_shape_fn((rows, cols), |(i, j)| spread(i * cols + j, -3.0, 3.0));
    let h = FusedRunner::compile_text("tanh(M)*2 + M**2")?
        .with_threads(threads)
        .prepared(&[("M", (&m).into())])?;
    let ms = [ArrayArg::from(&m)];
    let mut out = Array2::<f64>::zeros((rows, cols));
    h.run_into(&ms, out.view_mut())?;
    let mut want = Array2::<f64>::zeros((rows, cols));
    let plain = |want: &mut Array2<f64>| {
        Zip::from(want)
            .and(&m)
            .for_each(|o, &v| *o = v.tanh() * 2.0 + v * v);
    };
    plain(&mut want);
    let diff = max_rel_diff(out.iter(), want.iter());
    check("tanh-square", diff, 1e-12)?;
    let kiln_ns = median_ns(|| h.run_into(&ms, out.view_mut()).expect("ran once"), budget);
    let plain_ns = median_ns(|| plain(&mut want), budget);
    Ok(ProgramRow {
        name: "tanh(M)*2 + M**2",
        size: format!("{rows}x{cols} f64"),
        api: "prepared handle, run_into",
        kiln_ns,
        plain_ns,
        max_rel_diff: diff,
    })
}

/// The programs as a Markdown table.
pub fn table(rows: &[ProgramRow]) -> String {
    let mut s = String::from(
        "| program | size | kiln | plain Rust | ratio (plain / kiln) | agreement | kiln API |\n\
         | --- | --- | --- | --- | --- | --- | --- |\n",
    );
    for r in rows {
        s.push_str(&format!(
            "| {} | {} | {:.3} ms | {:.3} ms | {:.2} | {:.1e} | {} |\n",
            r.name,
            r.size,
            r.kiln_ns / 1e6,
            r.plain_ns / 1e6,
            r.ratio(),
            r.max_rel_diff,
            r.api
        ));
    }
    s
}
