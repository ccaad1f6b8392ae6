//! The per-call cost of the prepared handle's `run_slices` at N = 100, for callgrind:
//! `valgrind --tool=callgrind target/release/examples/percall_callgrind axpy 10000` (and with 0
//! calls: the difference over 10000 is the instructions of one call). `axpy-ordinary` (and
//! `horner-ordinary`, `sumsq-ordinary`, `rowsum-ordinary`) times the ordinary call instead:
//! `FusedRunner::run_into` by name into a given array (`run` for the sum; `rowsum` is `sum(m, axis=1)`
//! of a (1, 100) matrix into an array of one), and `axpy-ndarray` (`horner-ndarray`, `sumsq-ndarray`,
//! `rowsum-ndarray`: `sum_axis`) the unfused ndarray expression; `axpy-fresh` (and the others'
//! `-fresh`) the ordinary call into a fresh result, `FusedRunner::run`. `particle` is the prepared
//! multi-output in-place update of the particle step at n = 64 (`p + v*dt; v*0.99 + g*dt` into `p`
//! and `v`), `particle-ordinary` the same step by two runners' `run_into` by name, `particle-fuse`
//! by two `fuse_assign` calls, `particle-update` by the two runners' `run_update` that those calls
//! make (what `fuse_assign` adds is the difference), `particle-call` by one runner's `call` with `InPlace` into `p` and `v`, `particle-plain` the plain `Zip` loop they are compared with; a third argument gives
//! their n (`particle 10000 4096`).

use kiln::{ArrayArg, Expr, FusedRunner};
use ndarray::{Array1, arr0};
use std::hint::black_box;

fn main() -> kiln::Result<()> {
    let mut argv = std::env::args().skip(1);
    let which = argv.next().unwrap_or_else(|| "axpy".into());
    let calls: usize = argv
        .next()
        .map_or(10_000, |s| s.parse().expect("a count of calls"));
    let n: usize = argv
        .next()
        .map_or(64, |s| s.parse().expect("a count of particles"));
    if which == "particle" {
        return particle(calls, n);
    }
    if which.starts_with("intmod-") || which.starts_with("masksum-") {
        return int_kernel(&which, calls);
    }
    if which == "particle-fuse" {
        use kiln::FuseAssignExt;
        let mut p = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
        let mut v = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
        let (dt, g) = (0.001, -9.81);
        let none: [&Array1<f64>; 0] = [];
        // one step more than asked: the kernels compiled, whatever the count
        for _ in 0..=calls {
            p.fuse_assign(&(&v,), |p, (v,)| p + v * dt)?;
            v.fuse_assign(&none[..], |v, _| v * 0.99 + g * dt)?;
        }
        black_box((&p, &v));
        return Ok(());
    }
    if which == "particle-update" {
        // what particle-fuse runs, without the closures and the call-site cache
        let mut p = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
        let mut v = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
        let (dt, g) = (0.001, -9.81);
        let pu = FusedRunner::compile(&(Expr::input("p") + Expr::input("v") * dt))?;
        let vu = FusedRunner::compile(&(Expr::input("v") * 0.99 + g * dt))?;
        for _ in 0..=calls {
            pu.run_update("p", &[("v", v.view().into())], p.view_mut())?;
            vu.run_update("v", &[], v.view_mut())?;
        }
        black_box((&p, &v));
        return Ok(());
    }
    if which == "particle-call" {
        return particle_call(calls, n);
    }
    if which == "particle-ordinary" {
        return particle_ordinary(calls, n);
    }
    if which == "particle-plain" {
        particle_plain(calls, n);
        return Ok(());
    }
    let (which, ordinary, fresh) = match (which.strip_suffix("-ordinary"), which.strip_suffix("-fresh")) {
        (Some(w), _) => (w.to_string(), true, false),
        (_, Some(w)) => (w.to_string(), true, true),
        _ => (which, false, false),
    };
    let n = 100;
    let x = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
    let y = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
    let (a, b, c, d) = (arr0(2.5), arr0(-1.0), arr0(0.5), arr0(3.0));
    let m = x.clone().into_shape_with_order((1, 100)).expect("100 elements");
    let (text, args): (&str, Vec<(&str, ArrayArg<'_>)>) = match which.as_str() {
        "axpy" => (
            "a*x + y",
            vec![("a", (&a).into()), ("x", (&x).into()), ("y", (&y).into())],
        ),
        "horner" => (
            "((a*x+b)*x+c)*x+d",
            vec![
                ("a", (&a).into()),
                ("b", (&b).into()),
                ("c", (&c).into()),
                ("d", (&d).into()),
                ("x", (&x).into()),
            ],
        ),
        "sumsq" => ("sum(x*x)", vec![("x", (&x).into())]),
        "rowsum" => ("sum(m, axis=1)", vec![("m", (&m).into())]),
        "axpy-ndarray" => {
            for _ in 0..calls {
                black_box(black_box(&a)[()] * black_box(&x) + black_box(&y));
            }
            return Ok(());
        }
        "horner-ndarray" => {
            let (a, b, c, d) = (a[()], b[()], c[()], d[()]);
            for _ in 0..calls {
                let x = black_box(&x);
                black_box(((a * x + b) * x + c) * x + d);
            }
            return Ok(());
        }
        "rowsum-ndarray" => {
            for _ in 0..calls {
                black_box(black_box(&m).sum_axis(ndarray::Axis(1)));
            }
            return Ok(());
        }
        "sumsq-ndarray" => {
            for _ in 0..calls {
                let x = black_box(&x);
                black_box((x * x).sum());
            }
            return Ok(());
        }
        other => panic!("unknown kernel {other}"),
    };
    let runner = FusedRunner::compile_text(text)?;
    if ordinary {
        let mut out = Array1::<f64>::zeros(n);
        let mut rows = Array1::<f64>::zeros(1);
        for _ in 0..calls.max(1) {
            if fresh {
                black_box(runner.run(black_box(&args))?);
            } else if which == "rowsum" {
                runner.run_into(black_box(&args), rows.view_mut())?;
            } else if text.starts_with("sum") {
                black_box(runner.run(black_box(&args))?);
            } else {
                runner.run_into(black_box(&args), out.view_mut())?;
            }
        }
        black_box(&out);
        return Ok(());
    }
    let h = runner.prepared(&args)?;
    let slices: Vec<&[f64]> = args
        .iter()
        .map(|(_, a)| match a {
            ArrayArg::F64(v) => v.to_slice().unwrap(),
            _ => unreachable!("the kernels here are f64"),
        })
        .collect();
    let mut out = vec![0.0; h.output_shape().iter().product()];
    h.run_slices(&slices, &mut out)?;
    for _ in 0..calls {
        h.run_slices(black_box(&slices), &mut out)?;
    }
    black_box(&out);
    Ok(())
}

/// One step of the particle program per call: `Prepared::update` of `p` and `v` (n = 64 unless
/// given).
fn particle(calls: usize, n: usize) -> kiln::Result<()> {
    let mut p: Vec<f64> = (0..n).map(|i| i as f64 * 0.01).collect();
    let mut v: Vec<f64> = (0..n).map(|i| 1.0 - i as f64 * 0.02).collect();
    let (dt, g) = ([0.001], [-9.81]);
    let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt")?;
    let (pa, va) = (Array1::from(p.clone()), Array1::from(v.clone()));
    let (dta, ga) = (arr0(dt[0]), arr0(g[0]));
    let h = step.prepared_update(
        &[
            ("p", (&pa).into()),
            ("v", (&va).into()),
            ("dt", (&dta).into()),
            ("g", (&ga).into()),
        ],
        &["p", "v"],
    )?;
    h.update(&mut [&mut p[..], &mut v[..]], &[&dt[..], &g[..]])?;
    for _ in 0..calls {
        h.update(
            black_box(&mut [&mut p[..], &mut v[..]]),
            black_box(&[&dt[..], &g[..]]),
        )?;
    }
    black_box((&p, &v));
    Ok(())
}

/// One step of the particle program per call through the ordinary call: two runners, `run_into` by
/// name into a second pair of arrays, swapped after the step.
fn particle_ordinary(calls: usize, n: usize) -> kiln::Result<()> {
    let mut p = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
    let mut v = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
    let (mut pn, mut vn) = (p.clone(), v.clone());
    let (dt, g) = (arr0(0.001), arr0(-9.81));
    let pr = FusedRunner::compile_text("p + v*dt")?;
    let vr = FusedRunner::compile_text("v*0.99 + g*dt")?;
    // one step more than asked: the signatures bound, whatever the count
    for _ in 0..=calls {
        pr.run_into(
            &[
                ("p", p.view().into()),
                ("v", v.view().into()),
                ("dt", (&dt).into()),
            ],
            pn.view_mut(),
        )?;
        vr.run_into(
            &[("v", v.view().into()), ("g", (&g).into()), ("dt", (&dt).into())],
            vn.view_mut(),
        )?;
        std::mem::swap(&mut p, &mut pn);
        std::mem::swap(&mut v, &mut vn);
    }
    black_box((&p, &v));
    Ok(())
}

/// One step of the particle program per call through the one call: one runner of both results,
/// `call` with `InPlace` into `p` and `v`.
fn particle_call(calls: usize, n: usize) -> kiln::Result<()> {
    let mut p = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
    let mut v = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
    let (dt, g) = (arr0(0.001), arr0(-9.81));
    let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt")?;
    // one step more than asked: the signature bound, whatever the count
    for _ in 0..=calls {
        step.call(
            black_box(&[("dt", (&dt).into()), ("g", (&g).into())]),
            kiln::InPlace(&mut [("p", p.view_mut()), ("v", v.view_mut())]),
        )?;
    }
    black_box((&p, &v));
    Ok(())
}

/// The plain Rust step the particle program compares with: one `Zip` loop in place.
fn particle_plain(calls: usize, n: usize) {
    let mut p = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
    let mut v = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
    let (dt, g) = (black_box(0.001), black_box(-9.81));
    for _ in 0..calls {
        ndarray::Zip::from(black_box(&mut p))
            .and(black_box(&mut v))
            .for_each(|p, v| {
                *p += *v * dt;
                *v = *v * 0.99 + g * dt;
            });
    }
    black_box((&p, &v));
}

/// The integer kernels of `kiln bench` at N = 100 by the ordinary call into a given array
/// (`intmod-ordinary`, `masksum-ordinary`) and as ndarray computes them (`intmod-ndarray`,
/// `masksum-ndarray`): `intmod`, `(i*3 + j) % 7` of int32; `masksum`, `sum(where(p, i, 0))` of
/// int64 `i` and bool `p` into a zero-dimensional int64 array.
fn int_kernel(which: &str, calls: usize) -> kiln::Result<()> {
    let n = 100;
    let i32s = Array1::from_iter((0..n).map(|k| k as i32 * 7 - 300));
    let j32s = Array1::from_iter((0..n).map(|k| 5 - k as i32));
    let i64s = Array1::from_iter((0..n).map(|k| k as i64 * 11 - 500));
    let p = Array1::from_iter((0..n).map(|k| k % 3 != 0));
    match which {
        "intmod-ordinary" => {
            let runner = FusedRunner::compile_text("(i*3 + j) % 7")?;
            let args: Vec<(&str, ArrayArg<'_>)> = vec![("i", (&i32s).into()), ("j", (&j32s).into())];
            let mut out = Array1::<i32>::zeros(n);
            for _ in 0..calls.max(1) {
                runner.call(black_box(&args), out.view_mut())?;
            }
            black_box(&out);
        }
        "masksum-ordinary" => {
            let runner = FusedRunner::compile_text("sum(where(p, i, 0))")?;
            let args: Vec<(&str, ArrayArg<'_>)> = vec![("p", (&p).into()), ("i", (&i64s).into())];
            let mut out = arr0(0i64);
            for _ in 0..calls.max(1) {
                runner.call(black_box(&args), out.view_mut())?;
            }
            black_box(&out);
        }
        // NumPy's `%` (Python's modulo: the sign of the divisor) on ndarray's arrays
        "intmod-ndarray" => {
            for _ in 0..calls {
                let (i, j) = (black_box(&i32s), black_box(&j32s));
                black_box((i * 3 + j).mapv(|v| v.rem_euclid(7)));
            }
        }
        "masksum-ndarray" => {
            for _ in 0..calls {
                let (p, i) = (black_box(&p), black_box(&i64s));
                black_box(
                    ndarray::Zip::from(p)
                        .and(i)
                        .fold(0i64, |a, &p, &i| a + if p { i } else { 0 }),
                );
            }
        }
        other => panic!("unknown kernel {other}"),
    }
    Ok(())
}
