//! The particle step `p += v*dt; v = v*0.99 + g*dt` at n = 64 (issue 24's measure of the ordinary
//! call), timed side by side in one process: plain ndarray (one `Zip` loop in place) against each
//! way kiln is called, in rounds that alternate the ways, each way's median ns a step over the
//! rounds, in the thread's CPU time (a loaded host moves wall time far more).
//! `cargo run --release --example particle_step [steps per round] [rounds] [n]` (defaults 20000,
//! 15, 64).

use kiln::{Expr, FuseAssignExt, FusedRunner, InPlace};
use ndarray::{Array1, arr0};
use std::hint::black_box;

#[path = "support/cpu_time.rs"]
mod cpu_time;
use cpu_time::cpu_ns;

type Way = Box<dyn FnMut(&mut Array1<f64>, &mut Array1<f64>, usize) -> kiln::Result<()>>;

fn main() -> kiln::Result<()> {
    let mut argv = std::env::args().skip(1);
    let mut arg = |default: usize| argv.next().map_or(default, |s| s.parse().expect("a count"));
    let (steps, rounds, n) = (arg(20_000), arg(15), arg(64));
    let (dt, g) = (0.001, -9.81);
    let mut ways: Vec<(&str, Way)> = Vec::new();
    ways.push((
        "ndarray Zip, in place",
        Box::new(move |p, v, steps| {
            let (dt, g) = (black_box(dt), black_box(g));
            for _ in 0..steps {
                ndarray::Zip::from(&mut *p).and(&mut *v).for_each(|p, v| {
                    *p += *v * dt;
                    *v = *v * 0.99 + g * dt;
                });
            }
            Ok(())
        }),
    ));
    ways.extend(kiln_ways(dt, g)?);
    let mut times: Vec<Vec<f64>> = vec![Vec::new(); ways.len()];
    let p0 = Array1::from_iter((0..n).map(|i| i as f64 * 0.01));
    let v0 = Array1::from_iter((0..n).map(|i| 1.0 - i as f64 * 0.02));
    let mut finals = Vec::new();
    for round in 0..=rounds {
        for (k, (_, way)) in ways.iter_mut().enumerate() {
            let (mut p, mut v) = (p0.clone(), v0.clone());
            let t = cpu_ns();
            way(&mut p, &mut v, steps)?;
            let ns = (cpu_ns() - t) / steps as f64;
            // round 0 warms up (compiles and binds)
            if round > 0 {
                times[k].push(ns);
            } else {
                finals.push((p, v));
            }
        }
    }
    for (k, (p, v)) in finals.iter().enumerate() {
        assert!(
            p.iter().zip(&finals[0].0).all(|(a, b)| a == b)
                && v.iter().zip(&finals[0].1).all(|(a, b)| a == b),
            "{} differs from the Zip loop",
            ways[k].0
        );
    }
    let median = |t: &mut Vec<f64>| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    };
    let plain = median(&mut times[0].clone());
    println!("particle step, n = {n}, {steps} steps x {rounds} rounds, median ns a step (ratio to Zip)");
    for (k, (name, _)) in ways.iter().enumerate() {
        let m = median(&mut times[k]);
        println!("{m:9.1}  {:5.1}x  {name}", m / plain);
    }
    Ok(())
}

/// Each way kiln is called, as a user writes it.
fn kiln_ways(dt: f64, g: f64) -> kiln::Result<Vec<(&'static str, Way)>> {
    let (dta, ga) = (arr0(dt), arr0(g));
    let mut ways: Vec<(&str, Way)> = Vec::new();
    // two runners, run_into by name into a second pair of arrays, swapped after the step
    let pr = FusedRunner::compile_text("p + v*dt")?;
    let vr = FusedRunner::compile_text("v*0.99 + g*dt")?;
    let (d1, g1) = (dta.clone(), ga.clone());
    ways.push((
        "two runners, run_into by name",
        Box::new(move |p, v, steps| {
            let (mut pn, mut vn) = (p.clone(), v.clone());
            for _ in 0..steps {
                pr.run_into(
                    &[
                        ("p", p.view().into()),
                        ("v", v.view().into()),
                        ("dt", (&d1).into()),
                    ],
                    pn.view_mut(),
                )?;
                vr.run_into(
                    &[("v", v.view().into()), ("g", (&g1).into()), ("dt", (&d1).into())],
                    vn.view_mut(),
                )?;
                std::mem::swap(p, &mut pn);
                std::mem::swap(v, &mut vn);
            }
            Ok(())
        }),
    ));
    // the one call: one runner of both results, written into p and v in place
    let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt")?;
    let (d2, g2) = (dta.clone(), ga.clone());
    ways.push((
        "one runner, call(.., InPlace([p, v]))",
        Box::new(move |p, v, steps| {
            for _ in 0..steps {
                step.call(
                    &[("dt", (&d2).into()), ("g", (&g2).into())],
                    InPlace(&mut [("p", p.view_mut()), ("v", v.view_mut())]),
                )?;
            }
            Ok(())
        }),
    ));
    // what fuse_assign runs, without the closure and the call-site cache: two runners of the same
    // expressions (dt and g literals), run_update in place
    let pu = FusedRunner::compile(&(Expr::input("p") + Expr::input("v") * dt))?;
    let vu = FusedRunner::compile(&(Expr::input("v") * 0.99 + g * dt))?;
    ways.push((
        "two runners, run_update in place",
        Box::new(move |p, v, steps| {
            for _ in 0..steps {
                pu.run_update("p", &[("v", v.view().into())], p.view_mut())?;
                vu.run_update("v", &[], v.view_mut())?;
            }
            Ok(())
        }),
    ));
    // fuse_assign on p, then on v
    ways.push((
        "p.fuse_assign, then v.fuse_assign",
        Box::new(move |p, v, steps| {
            let none: [&Array1<f64>; 0] = [];
            for _ in 0..steps {
                p.fuse_assign(&(&*v,), |p, (v,)| p + v * dt)?;
                v.fuse_assign(&none[..], |v, _| v * 0.99 + g * dt)?;
            }
            Ok(())
        }),
    ));
    // the prepared handle's update of p and v on slices
    let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt")?;
    let (pa, va) = (Array1::<f64>::zeros(64), Array1::<f64>::zeros(64));
    let mut handle: Option<(usize, kiln::Prepared)> = None;
    ways.push((
        "prepared_update, then update on slices",
        Box::new(move |p, v, steps| {
            let n = p.len();
            if handle.as_ref().is_none_or(|(m, _)| *m != n) {
                let (pa, va) = if n == pa.len() {
                    (pa.clone(), va.clone())
                } else {
                    (Array1::zeros(n), Array1::zeros(n))
                };
                let bind = [
                    ("p", (&pa).into()),
                    ("v", (&va).into()),
                    ("dt", (&dta).into()),
                    ("g", (&ga).into()),
                ];
                handle = Some((n, step.prepared_update(&bind, &["p", "v"])?));
            }
            let h = &handle.as_ref().expect("bound").1;
            let (dts, gs) = ([dt], [g]);
            let (p, v) = (
                p.as_slice_mut().expect("contiguous"),
                v.as_slice_mut().expect("contiguous"),
            );
            for _ in 0..steps {
                h.update(&mut [&mut *p, &mut *v], &[&dts[..], &gs[..]])?;
            }
            Ok(())
        }),
    ));
    Ok(ways)
}
