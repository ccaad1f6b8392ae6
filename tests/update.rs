//! In-place updates (issue 12 item 2): `FusedRunner::run_update` and `fuse_assign` write the result
//! into an input of the expression where that is safe (a map reading it only at the element it
//! writes), bit-identical to a run into another array on every backend, and refuse an unsafe alias
//! with an error that says why.

use kiln::{Error, FuseAssignExt, FusedRunner, backend_by_name};
use ndarray::{Array1, Array2, arr0, s};

fn data(n: usize, seed: f64) -> Array1<f64> {
    Array1::from_iter((0..n).map(|i| ((i as f64 + seed) * 0.37).sin() * 3.0))
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

const BACKENDS: [&str; 3] = ["jit", "jit-scalar", "interp"];

#[test]
fn an_elementwise_update_equals_a_run_into_another_array() {
    let srcs = [
        "p + v*dt",
        "where(p > 0, p*0.99 + v*dt, -p)",
        "p - mean(v)",            // an earlier kernel reads v, not p
        "v - max(v, axis=0) + p", // the same, a kept shape
    ];
    for src in srcs {
        for backend in BACKENDS {
            for n in [0, 1, 3, 17, 1027] {
                let runner = FusedRunner::compile_text(src)
                    .unwrap()
                    .with_backend(backend_by_name(backend).unwrap());
                let (p0, v, dt) = (data(n, 0.0), data(n, 3.0), arr0(0.25));
                let want = if n == 0 && src.contains("max") {
                    continue; // max over an empty extent is an error either way
                } else {
                    let mut out = Array1::<f64>::zeros(n);
                    runner
                        .run_into(
                            &[("p", (&p0).into()), ("v", (&v).into()), ("dt", (&dt).into())],
                            out.view_mut(),
                        )
                        .unwrap();
                    out
                };
                let mut p = p0.clone();
                runner
                    .run_update("p", &[("v", (&v).into()), ("dt", (&dt).into())], p.view_mut())
                    .unwrap();
                assert!(
                    same_bits(p.as_slice().unwrap(), want.as_slice().unwrap()),
                    "{src} on {backend}, n = {n}"
                );
            }
        }
    }
}

#[test]
fn an_update_spread_over_threads_and_with_a_strided_input_is_exact() {
    let n = 300_001;
    let runner = FusedRunner::compile_text("p*0.5 + v")
        .unwrap()
        .with_threads(3)
        .with_threshold(0);
    let (p0, v) = (data(n, 1.0), data(2 * n, 2.0));
    let v = v.slice(s![..;2]); // not contiguous: copied or read in place, the same result
    let mut want = Array1::<f64>::zeros(n);
    runner
        .run_into(&[("p", (&p0).into()), ("v", v.into())], want.view_mut())
        .unwrap();
    let mut p = p0.clone();
    runner.run_update("p", &[("v", v.into())], p.view_mut()).unwrap();
    assert!(same_bits(p.as_slice().unwrap(), want.as_slice().unwrap()));
    // f32, two dimensions, a row broadcast from another input
    let m = Array2::from_shape_fn((33, 70), |(i, j)| (i as f32 - j as f32) * 0.125);
    let row = Array1::from_iter((0..70).map(|j| j as f32));
    let runner = FusedRunner::compile_text("m*m - row").unwrap();
    let want = runner.run(&[("m", (&m).into()), ("row", (&row).into())]).unwrap();
    let mut mm = m.clone();
    runner
        .run_update("m", &[("row", (&row).into())], mm.view_mut())
        .unwrap();
    assert_eq!(kiln::Output::F32(mm.into_dyn()), want);
}

#[test]
fn an_unsafe_alias_is_refused_with_the_reason() {
    let (v, dt) = (data(8, 1.0), arr0(0.5));
    let cases = [
        ("p - sum(p) + v", "kernel 0 (a reduction) reads all of it"),
        ("cumsum(p) + v", "kernel 0 (a scan) reads all of it"),
        (
            "sum(p*v, axis=0)",
            "the result is a reduction, not an elementwise map",
        ),
    ];
    for (src, why) in cases {
        let runner = FusedRunner::compile_text(src).unwrap();
        let mut p = data(8, 0.0);
        let before = p.clone();
        let e = runner
            .run_update("p", &[("v", (&v).into())], p.view_mut())
            .unwrap_err();
        assert!(matches!(e, Error::Unsupported(_)), "{src}: {e}");
        assert!(e.to_string().contains(why), "{src}: {e}");
        assert_eq!(p, before, "{src}: the array is untouched");
    }
    // the updated input broadcast to a larger result
    let runner = FusedRunner::compile_text("p + v").unwrap();
    let mut p = Array1::from_elem(1, 2.0);
    let e = runner
        .run_update("p", &[("v", (&v).into())], p.view_mut())
        .unwrap_err();
    assert!(e.to_string().contains("broadcast input"), "{e}");
    // not an input; given twice
    let runner = FusedRunner::compile_text("p + v*dt").unwrap();
    let mut p = data(8, 0.0);
    let e = runner
        .run_update("q", &[("v", (&v).into()), ("dt", (&dt).into())], p.view_mut())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "unsupported: cannot update 'q' in place: it is not an input of the expression (inputs: p, v, dt)"
    );
    let p2 = p.clone();
    let e = runner
        .run_update("p", &[("p", (&p2).into()), ("v", (&v).into())], p.view_mut())
        .unwrap_err();
    assert!(matches!(e, Error::DuplicateInput { .. }), "{e}");
    // a non-contiguous target is updated from a copy of its previous values
    let mut wide = data(16, 0.0);
    let before = wide.slice(s![..;2]).to_owned();
    runner
        .run_update(
            "p",
            &[("v", (&v).into()), ("dt", (&dt).into())],
            wide.slice_mut(s![..;2]),
        )
        .unwrap();
    assert_eq!(wide.slice(s![..;2]), &before + &(&v * 0.5));
    assert_eq!(wide.slice(s![1..;2]), data(16, 0.0).slice(s![1..;2]));
}

#[test]
fn the_particle_step_in_place_follows_the_two_buffer_version() {
    let n = 64;
    let (dt, g) = (0.01, -9.81);
    let (mut p, mut v) = (data(n, 0.0), data(n, 5.0));
    let (mut p2, mut v2) = (p.clone(), v.clone());
    for _ in 0..50 {
        p.fuse_assign(&(&v,), |p, (v,)| p + v * dt).unwrap();
        v.fuse_assign(&(&p,), |v, _| v * 0.99 + g * dt).unwrap();
        p2 = &p2 + &(&v2 * dt);
        v2 = &v2 * 0.99 + g * dt;
    }
    assert!(same_bits(p.as_slice().unwrap(), p2.as_slice().unwrap()));
    assert!(same_bits(v.as_slice().unwrap(), v2.as_slice().unwrap()));
}
