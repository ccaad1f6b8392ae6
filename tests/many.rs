//! Runners of several results (issue 12 item 1): `compile_many` and `;` in `compile_text`, run on
//! every backend, give bit for bit what one runner per expression gives (sums within the reduction
//! bound); maps of one iteration space run as one kernel of several outputs, others as kernels of
//! their own; the prepared handle's calls of several results and its in-place updates, accepted where
//! safe and refused where not.

#[macro_use]
mod support;

use kiln::{ArrayArg, Expr, FusedRunner, Output, backend_by_name};
use ndarray::{Array0, Array1, Array2, ArrayD, IxDyn};
use support::{Rng, bits_equal, close};

/// Data with the edge values: NaN, ±inf, ±0, subnormals, among uniform values.
fn data(rng: &mut Rng, shape: &[usize]) -> ArrayD<f64> {
    let n: usize = shape.iter().product();
    let specials = [
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        0.0,
        -0.0,
        5e-324,
        -1e-310,
        1.0,
    ];
    let v = (0..n)
        .map(|_| {
            if rng.below(6) == 0 {
                specials[rng.below(specials.len())]
            } else {
                rng.uniform(-3.0, 3.0)
            }
        })
        .collect();
    ArrayD::from_shape_vec(IxDyn(shape), v).unwrap()
}

fn values(o: &Output) -> Vec<f64> {
    o.clone().into_f64().iter().copied().collect()
}

/// Each result of `src` (`;`-separated) against its own runner, on `backend`.
fn check_against_separate(src: &str, backend: &str, inputs: &[(&str, ArrayArg<'_>)]) {
    let b = || backend_by_name(backend).unwrap();
    let many = FusedRunner::compile_text(src).unwrap().with_backend(b());
    let got = many.run_many(inputs).unwrap();
    let parts: Vec<&str> = src.split(';').collect();
    assert_eq!(got.len(), parts.len(), "{src}");
    for (i, part) in parts.iter().enumerate() {
        let one = FusedRunner::compile_text(part).unwrap().with_backend(b());
        let want = one.run(inputs).unwrap();
        assert_eq!(got[i].shape(), want.shape(), "{src} result {i} on {backend}");
        assert_eq!(
            got[i].dtype_name(),
            want.dtype_name(),
            "{src} result {i} on {backend}"
        );
        let (g, w) = (values(&got[i]), values(&want));
        // sums regroup; a compound stage's mean is its shift plus the mean of the shifted values
        let statistic = ["sum", "mean", "var", "std"].iter().any(|f| part.contains(f));
        let ok = if statistic {
            close(&g, &w, 1e-12)
        } else {
            bits_equal(&g, &w)
        };
        assert!(ok, "{src} result {i} on {backend}: {g:?} vs {w:?}");
    }
}

fn maps_of_one_space(backend: &str) {
    let mut rng = Rng::new(3);
    for n in [0, 1, 2, 3, 5, 7, 8, 9, 33, 1000] {
        let (x, y) = (data(&mut rng, &[n]), data(&mut rng, &[n]));
        let a = Array0::from_elem((), 1.5);
        let ins = [("x", (&x).into()), ("y", (&y).into()), ("a", (&a).into())];
        check_against_separate("a*x + y; sqrt(abs(a*x)) - y; x > y", backend, &ins);
        check_against_separate("x*2; sum(x*2); exp(x*2)", backend, &ins);
    }
}

fn broadcasts_and_shapes(backend: &str) {
    let mut rng = Rng::new(4);
    let m = data(&mut rng, &[4, 5]);
    let r = data(&mut rng, &[5]);
    let c = data(&mut rng, &[4, 1]);
    let ins = [("m", (&m).into()), ("r", (&r).into()), ("c", (&c).into())];
    // one space (4 x 5): fused; then maps of different shapes (5 and 4 x 5): each its own kernel
    check_against_separate("m*r + c; m - c; r*c", backend, &ins);
    check_against_separate("r*2; m*r", backend, &ins);
    // a reduction's result read by a map, an axis reduction beside a map, a scan, keepdims twins
    check_against_separate(
        "m - max(m, axis=1, keepdims=1); max(m, axis=1); cumsum(m, axis=1); m*3",
        backend,
        &ins,
    );
}

fn f32_and_mixed_dtypes(backend: &str) {
    let mut rng = Rng::new(5);
    let x = data(&mut rng, &[37]).mapv(|v| v as f32);
    let y = data(&mut rng, &[37]);
    // f32 and f64 maps: one computes in f32, the other in f64, so each is its own kernel
    let ins = [("x", (&x).into()), ("y", (&y).into())];
    check_against_separate("x*x + 1; x*y", backend, &ins);
    let ins = [("x", (&x).into())];
    check_against_separate("x*x + 1; sin(x)*x", backend, &ins);
}

/// Statistics among the results: the sibling rewrite merges a mean and the variance built on it (a
/// max and the sum of exponentials) into one compound stage, which the results then read out.
fn statistics_among_results(backend: &str) {
    let mut rng = Rng::new(6);
    let m = data(&mut rng, &[6, 9]).mapv(|v| if v.is_finite() { v + 1e8 } else { v });
    let u = ArrayD::from_shape_fn(IxDyn(&[6, 9]), |_| rng.uniform(-3.0, 3.0));
    for x in [&m, &u] {
        let ins = [("x", x.into())];
        check_against_separate("mean(x); var(x)", backend, &ins);
        check_against_separate("var(x); x*2", backend, &ins);
        check_against_separate("x*2; var(x); x - 1", backend, &ins);
        check_against_separate("std(x, axis=1); x*2; mean(x, axis=1)", backend, &ins);
        check_against_separate(
            "x - max(x, axis=1, keepdims=1); sum(exp(x - max(x, axis=1, keepdims=1)), axis=1); max(x, axis=1)",
            backend,
            &ins,
        );
    }
}

/// Arguments of erfc in every range of `jit/src/vmath/erf.rs`, both sides of each boundary, the
/// special values, and uniform values in [-6, 6] (`data`'s specials among them).
fn erfc_arguments(rng: &mut Rng, n: usize) -> ArrayD<f64> {
    let edges = [
        0.84375,
        1.25,
        f64::from_bits(0x4006_db6d_0000_0000),
        28.0,
        0.25,
        3.725290298461914e-09,
        1e-300,
        6.0,
        27.5,
        40.0,
    ];
    let mut x = data(rng, &[n]);
    for (i, v) in x.iter_mut().enumerate() {
        match rng.below(4) {
            0 => {
                let e = edges[rng.below(edges.len())];
                let e = [
                    e,
                    f64::from_bits(e.to_bits() - 1),
                    f64::from_bits(e.to_bits() + 1),
                ][i % 3];
                *v = if rng.below(2) == 0 { e } else { -e };
            }
            1 => *v = rng.uniform(-6.0, 6.0),
            _ => {}
        }
    }
    x
}

/// erfc of an argument and of its exact negation (Black-Scholes' `N(d)` and `N(-d)`), which the JIT
/// computes as one pair sharing everything but the sign's last steps: the same bits as each alone.
fn erfc_of_negated_arguments(backend: &str) {
    let mut rng = Rng::new(7);
    for n in [0, 1, 2, 3, 5, 8, 9, 33, 1000] {
        let (x, y) = (erfc_arguments(&mut rng, n), erfc_arguments(&mut rng, n));
        let ins = [("x", (&x).into()), ("y", (&y).into())];
        check_against_separate("erfc(-x); erfc(x)", backend, &ins);
        check_against_separate(
            "erfc(-(x)*0.7071067811865476); erfc(-(-x)*0.7071067811865476); x*2",
            backend,
            &ins,
        );
        check_against_separate("erfc(x*-1.5); erfc(x/y); erfc(x*1.5); erfc(-x/y)", backend, &ins);
        // the two in one result
        let b = || backend_by_name(backend).unwrap();
        let run = |src: &str| {
            let r = FusedRunner::compile_text(src).unwrap().with_backend(b());
            values(&r.run(&ins).unwrap())
        };
        let both = run("erfc(x/y) + erfc(-x/y)");
        let (e, ne) = (run("erfc(x/y)"), run("erfc(-x/y)"));
        let want: Vec<f64> = e.iter().zip(&ne).map(|(a, b)| a + b).collect();
        assert!(
            bits_equal(&both, &want),
            "n = {n} on {backend}: {both:?} vs {want:?}"
        );
        let xf = x.mapv(|v| v as f32);
        check_against_separate("erfc(-x); erfc(x)", backend, &[("x", (&xf).into())]);
    }
}

backend_suite!(
    erfc_of_negated_arguments,
    maps_of_one_space,
    broadcasts_and_shapes,
    f32_and_mixed_dtypes,
    statistics_among_results
);

#[test]
fn maps_of_one_space_share_one_kernel_and_its_nodes() {
    let runner = FusedRunner::compile_text("a*x + y; (a*x)*(a*x); y - a*x").unwrap();
    let p = runner.pipeline();
    assert_eq!(p.stages.len(), 3);
    let f = p.fused.as_ref().expect("three maps fused");
    assert_eq!(f.members, [0, 1, 2]);
    let x = Array1::<f64>::ones(8);
    let a = Array0::from_elem((), 2.0);
    let kernels = runner
        .explain_all(&[("x", (&x).into()), ("y", (&x).into()), ("a", (&a).into())])
        .unwrap();
    let text = kernels.last().unwrap().0.to_string();
    // `a*x` is one node for the three outputs
    assert_eq!(text.matches(" mul ").count(), 2, "{text}");
    assert!(text.contains("out2 %"), "{text}");
}

#[test]
fn the_text_form_separates_results_with_semicolons() {
    assert_eq!(FusedRunner::compile_text("x; x*2;").unwrap().n_results(), 2);
    assert_eq!(FusedRunner::compile_text("x*2").unwrap().n_results(), 1);
    let err = FusedRunner::compile_text("x*2; y +").unwrap_err().to_string();
    assert!(err.contains("position 8"), "{err}");
    assert!(FusedRunner::compile_text("x; ; y").is_err());
    assert!(FusedRunner::compile_many(&[]).is_err());
}

#[test]
fn single_result_methods_refuse_a_runner_of_several() {
    let runner = FusedRunner::compile_text("x*2; x+1").unwrap();
    let x = Array1::<f64>::ones(4);
    let err = runner.run(&[("x", (&x).into())]).unwrap_err().to_string();
    assert!(err.contains("run_many"), "{err}");
    let mut out = Array1::<f64>::zeros(4);
    assert!(runner.run_into(&[("x", (&x).into())], out.view_mut()).is_err());
}

#[test]
fn run_into_many_writes_each_result_and_checks_each_output() {
    let runner = FusedRunner::compile_many(&[Expr::input("x") * 2.0, Expr::input("x").sqrt()]).unwrap();
    let x = Array1::from_vec(vec![0.0, 1.0, -2.0]);
    let (mut a, mut b) = (Array1::<f64>::zeros(3), Array1::<f64>::zeros(3));
    runner
        .run_into_many(&[("x", (&x).into())], &mut [a.view_mut(), b.view_mut()])
        .unwrap();
    assert_eq!(a, x.mapv(|v| v * 2.0));
    assert!(bits_equal(
        b.as_slice().unwrap(),
        x.mapv(f64::sqrt).as_slice().unwrap()
    ));
    let mut short = Array1::<f64>::zeros(2);
    let err = runner
        .run_into_many(&[("x", (&x).into())], &mut [a.view_mut(), short.view_mut()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("output 1"), "{err}");
    let err = runner
        .run_into_many(&[("x", (&x).into())], &mut [a.view_mut()])
        .unwrap_err()
        .to_string();
    assert!(err.contains("1 outputs given for 2 results"), "{err}");
}

fn particle_inputs(n: usize) -> (Array1<f64>, Array1<f64>, Array0<f64>, Array0<f64>) {
    let p = Array1::from_shape_fn(n, |i| (i as f64 * 0.3).sin());
    let v = Array1::from_shape_fn(n, |i| (i as f64 * 0.7).cos());
    (p, v, Array0::from_elem((), 0.01), Array0::from_elem((), -9.81))
}

#[test]
fn the_prepared_handle_calls_several_results_and_updates_in_place() {
    let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt").unwrap();
    for n in [0, 1, 3, 4, 64, 67, 4096] {
        let (p0, v0, dt, g) = particle_inputs(n);
        let bind = [
            ("p", (&p0).into()),
            ("v", (&v0).into()),
            ("dt", (&dt).into()),
            ("g", (&g).into()),
        ];
        // the reference: plain Rust, 5 steps
        let (mut pw, mut vw) = (p0.clone(), v0.clone());
        for _ in 0..5 {
            ndarray::Zip::from(&mut pw).and(&mut vw).for_each(|p, v| {
                let (p1, v1) = (*p + *v * 0.01, *v * 0.99 + -9.81 * 0.01);
                *p = p1;
                *v = v1;
            });
        }
        let h = step.prepared(&bind).unwrap();
        assert!(h.is_direct_many(), "n = {n}");
        assert_eq!(h.n_results(), 2);
        let (mut p, mut v) = (p0.clone(), v0.clone());
        let (mut p_next, mut v_next) = (Array1::zeros(n), Array1::zeros(n));
        for _ in 0..5 {
            let ins = [
                p.as_slice().unwrap(),
                v.as_slice().unwrap(),
                dt.as_slice().unwrap(),
                g.as_slice().unwrap(),
            ];
            h.run_slices_many(
                &ins,
                &mut [p_next.as_slice_mut().unwrap(), v_next.as_slice_mut().unwrap()],
            )
            .unwrap();
            std::mem::swap(&mut p, &mut p_next);
            std::mem::swap(&mut v, &mut v_next);
        }
        assert_eq!((&p, &v), (&pw, &vw), "n = {n}: run_slices_many");
        let u = step.prepared_update(&bind, &["p", "v"]).unwrap();
        let (mut p, mut v) = (p0.clone(), v0.clone());
        for _ in 0..5 {
            let rest = [dt.as_slice().unwrap(), g.as_slice().unwrap()];
            u.update(&mut [p.as_slice_mut().unwrap(), v.as_slice_mut().unwrap()], &rest)
                .unwrap();
        }
        assert_eq!((&p, &v), (&pw, &vw), "n = {n}: update");
    }
}

#[test]
fn the_prepared_handle_checks_counts_lengths_and_dtypes() {
    let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt").unwrap();
    let (p, v, dt, g) = particle_inputs(8);
    let bind = [
        ("p", (&p).into()),
        ("v", (&v).into()),
        ("dt", (&dt).into()),
        ("g", (&g).into()),
    ];
    let h = step.prepared_update(&bind, &["p", "v"]).unwrap();
    let (mut a, mut b) = (p.clone(), v.clone());
    let (dts, gs) = (dt.as_slice().unwrap(), g.as_slice().unwrap());
    let err = |r: kiln::Result<()>| r.unwrap_err().to_string();
    let e = err(h.update(&mut [a.as_slice_mut().unwrap()], &[dts, gs]));
    assert!(e.contains("1 outputs given for 2 results"), "{e}");
    let e = err(h.update(
        &mut [a.as_slice_mut().unwrap(), b.as_slice_mut().unwrap()],
        &[dts],
    ));
    assert!(
        e.contains("1 input not updateds given, 2 bound") || e.contains("given, 2 bound"),
        "{e}"
    );
    let mut short = vec![0.0; 7];
    let e = err(h.update(&mut [a.as_slice_mut().unwrap(), &mut short], &[dts, gs]));
    assert!(e.contains("output 1 is 7 elements"), "{e}");
    let e = err(h.update(
        &mut [a.as_slice_mut().unwrap(), b.as_slice_mut().unwrap()],
        &[gs, &[1.0, 2.0]],
    ));
    assert!(e.contains("('g') is 2 elements"), "{e}");
    let (mut a32, mut b32) = (vec![0f32; 8], vec![0f32; 8]);
    let e = err(h.update(&mut [&mut a32, &mut b32], &[&[0.1f32], &[1.0f32]]));
    assert!(e.contains("f32"), "{e}");
    // the handle of several results refuses the calls of one
    let plain = step.prepared(&bind).unwrap();
    let mut out = Array1::<f64>::zeros(8);
    let ins = [(&p).into(), (&v).into(), (&dt).into(), (&g).into()];
    assert!(plain.run_into(&ins, out.view_mut()).is_err());
    let e = err(plain.update(
        &mut [a.as_slice_mut().unwrap(), b.as_slice_mut().unwrap()],
        &[dts, gs],
    ));
    assert!(e.contains("prepared_update"), "{e}");
    // run_into_many checks its outputs' shapes
    let mut wrong = Array1::<f64>::zeros(9);
    let e = err(plain.run_into_many(&ins, &mut [out.view_mut(), wrong.view_mut()]));
    assert!(e.contains("output 1 has shape [9]"), "{e}");
}

#[test]
fn unsafe_updates_are_refused() {
    let (p, v, dt, g) = particle_inputs(8);
    let bind = [
        ("p", (&p).into()),
        ("v", (&v).into()),
        ("dt", (&dt).into()),
        ("g", (&g).into()),
    ];
    let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt").unwrap();
    let refused = |r: kiln::Result<kiln::Prepared>| r.unwrap_err().to_string();
    // a scalar read broadcast at every point
    let e = refused(step.prepared_update(&bind, &["p", "dt"]));
    assert!(e.contains("'dt'") && e.contains("broadcast"), "{e}");
    let e = refused(step.prepared_update(&bind, &["p"]));
    assert!(e.contains("1 inputs named for 2 results"), "{e}");
    let e = refused(step.prepared_update(&bind, &["p", "p"]));
    assert!(e.contains("named twice"), "{e}");
    let e = refused(step.prepared_update(&bind, &["p", "w"]));
    assert!(e.contains("'w' is not a bound input"), "{e}");
    // a reduction among the results
    let red = FusedRunner::compile_text("p + v*dt; sum(v)").unwrap();
    let e = refused(red.prepared_update(&bind, &["p", "v"]));
    assert!(e.contains("not all maps of one kernel"), "{e}");
    // a row read broadcast down the columns of a 2-D iteration
    let m = Array2::<f64>::ones((3, 512));
    let r = Array1::<f64>::ones(512);
    let bc = FusedRunner::compile_text("m + r; r*2 + m").unwrap();
    let e = refused(bc.prepared_update(&[("m", (&m).into()), ("r", (&r).into())], &["m", "r"]));
    assert!(e.contains("'r' of shape [512]"), "{e}");
    // on the interpreter there is no compiled loop to update through: the update is computed from
    // a copy of the previous values, with the compiled update's bits
    let interp = step.clone().with_backend(backend_by_name("interp").unwrap());
    let iu = interp.prepared_update(&bind, &["p", "v"]).unwrap();
    let ju = step.prepared_update(&bind, &["p", "v"]).unwrap();
    assert!(!iu.is_direct_many() && ju.is_direct_many());
    let (mut pi, mut vi, mut pj, mut vj) = (p.clone(), v.clone(), p.clone(), v.clone());
    let rest = [dt.as_slice().unwrap(), g.as_slice().unwrap()];
    for _ in 0..3 {
        iu.update(
            &mut [pi.as_slice_mut().unwrap(), vi.as_slice_mut().unwrap()],
            &rest,
        )
        .unwrap();
        ju.update(
            &mut [pj.as_slice_mut().unwrap(), vj.as_slice_mut().unwrap()],
            &rest,
        )
        .unwrap();
    }
    assert_eq!((&pi, &vi), (&pj, &vj));
    // one result updating one input works too
    let one = FusedRunner::compile_text("p + v*dt").unwrap();
    let u = one
        .prepared_update(
            &[("p", (&p).into()), ("v", (&v).into()), ("dt", (&dt).into())],
            &["p"],
        )
        .unwrap();
    let mut q = p.clone();
    u.update(
        &mut [q.as_slice_mut().unwrap()],
        &[v.as_slice().unwrap(), dt.as_slice().unwrap()],
    )
    .unwrap();
    assert_eq!(q, &p + &(&v * 0.01));
}

#[test]
fn fuse_many_returns_a_tuple_of_typed_arrays() {
    use kiln::FuseManyExt;
    let s = Array1::from_shape_fn(50, |i| 90.0 + i as f32);
    let k = Array1::from_elem(50, 100.0f32);
    let (up, down): (Array1<f32>, Array1<f32>) = (&s, &k)
        .fuse_many(|(s, k)| ((&s - &k).maximum(0.0), (&k - &s).maximum(0.0)))
        .unwrap();
    assert_eq!(up, (&s - &k).mapv(|v| v.max(0.0)));
    assert_eq!(down, (&k - &s).mapv(|v| v.max(0.0)));
    let m = Array2::<f64>::ones((2, 3));
    let v: Vec<Array2<f64>> = (&m,)
        .fuse_many(|(m,)| vec![&m * 2.0, &m + 1.0, m.clone()])
        .unwrap();
    assert_eq!(v.len(), 3);
    assert_eq!(v[1], Array2::from_elem((2, 3), 2.0));
    // a reduction among the results: the error names it
    let e = (&m,)
        .fuse_many(|(m,)| (&m * 2.0, m.sum()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("result 1"), "{e}");
}

#[test]
fn updates_cut_into_units_on_threads_match_one_thread() {
    let n = 40_000;
    let (p0, v0, dt, g) = particle_inputs(n);
    let bind = [
        ("p", (&p0).into()),
        ("v", (&v0).into()),
        ("dt", (&dt).into()),
        ("g", (&g).into()),
    ];
    let one = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt")
        .unwrap()
        .with_threads(1);
    let two = one.clone().with_threads(2).with_threshold(0);
    let mut results = Vec::new();
    for runner in [one, two] {
        let h = runner.prepared_update(&bind, &["p", "v"]).unwrap();
        let (mut p, mut v) = (p0.clone(), v0.clone());
        for _ in 0..3 {
            let rest = [dt.as_slice().unwrap(), g.as_slice().unwrap()];
            h.update(&mut [p.as_slice_mut().unwrap(), v.as_slice_mut().unwrap()], &rest)
                .unwrap();
        }
        results.push((p, v));
    }
    assert_eq!(results[0], results[1]);
}

#[test]
fn a_handle_of_maps_of_two_shapes_runs_each_alone() {
    let r = Array1::from_shape_fn(5, |i| i as f64);
    let m = Array2::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as f64 * 0.5);
    let runner = FusedRunner::compile_text("r*2; m*r").unwrap();
    let h = runner
        .prepared(&[("r", (&r).into()), ("m", (&m).into())])
        .unwrap();
    assert!(!h.is_direct_many());
    assert_eq!((h.result_shape(0), h.result_shape(1)), (&[5][..], &[3, 5][..]));
    let (mut a, mut b) = (vec![0.0; 5], vec![0.0; 15]);
    h.run_slices_many(
        &[r.as_slice().unwrap(), m.as_slice().unwrap()],
        &mut [&mut a, &mut b],
    )
    .unwrap();
    assert_eq!(a, (&r * 2.0).to_vec());
    assert_eq!(b, (&m * &r).into_raw_vec_and_offset().0);
    // where the maps do not share a kernel, an update is computed from a copy of the previous
    // values: each result as the run on the old values gives it
    let u = runner
        .prepared_update(&[("r", (&r).into()), ("m", (&m).into())], &["r", "m"])
        .unwrap();
    let (mut r2, mut m2) = (r.clone(), m.clone());
    u.update::<f64, f64>(&mut [r2.as_slice_mut().unwrap(), m2.as_slice_mut().unwrap()], &[])
        .unwrap();
    assert_eq!((r2, m2), (&r * 2.0, &m * &r));
}

#[test]
fn a_sum_of_every_axis_shares_the_kernel_of_its_maps_for_any_thread_count() {
    let runner = FusedRunner::compile_text("x*2; sum(x*2); mean(x*y); max(y)").unwrap();
    let f = runner.pipeline().fused.as_ref().expect("fused");
    // the first whole-array reduction (output 0) and the map; the others run as kernels of their own
    assert_eq!(f.members.len(), 2, "{}", runner.pipeline());
    assert!(matches!(f.stage.program.work, kiln::Work::Reduce(_)));
    let mut rng = Rng::new(9);
    let (x, y) = (data(&mut rng, &[300, 401]), data(&mut rng, &[300, 401]));
    let ins = [("x", (&x).into()), ("y", (&y).into())];
    let one = runner.clone().with_threads(1).run_many(&ins).unwrap();
    let two = runner.with_threads(2).with_threshold(0).run_many(&ins).unwrap();
    for (a, b) in one.iter().zip(&two) {
        assert!(bits_equal(&values(a), &values(b)));
    }
    for backend in ["interp", "jit", "jit-scalar"] {
        check_against_separate("x*2; sum(x*2); mean(x*y); max(y)", backend, &ins);
        check_against_separate("sum(abs(x)); x*y; y > x", backend, &ins);
    }
}

#[test]
fn a_zero_dimensional_reduction_beside_maps_runs_alone() {
    let x = Array0::from_elem((), -0.0f64);
    for backend in ["interp", "jit", "jit-scalar"] {
        check_against_separate("x*2; min(x); x + 1", backend, &[("x", (&x).into())]);
    }
}

#[test]
fn a_reduction_of_one_point_beside_maps() {
    for shape in [&[1][..], &[1, 1], &[2, 1], &[1, 3]] {
        let x = ArrayD::from_elem(IxDyn(shape), -0.5f64);
        for backend in ["interp", "jit", "jit-scalar"] {
            check_against_separate("x*2; min(x); x + 1", backend, &[("x", (&x).into())]);
            check_against_separate("x*2; sum(x*2)", backend, &[("x", (&x).into())]);
        }
    }
}

/// The ordinary call of several results into given arrays keeps the binding of its recent
/// signatures (issue 24): repeated and alternating signatures give run_many's bits every time, and a
/// wrong call after a bound one is still an error naming what is wrong.
#[test]
fn run_into_many_by_name_is_bound_and_gives_run_manys_bits() {
    let runner = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt; sum(v*v)").unwrap();
    let maps = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt").unwrap();
    let mut rng = Rng::new(11);
    let (dt, g) = (Array0::from_elem((), 0.01), Array0::from_elem((), -9.81));
    for round in 0..3 {
        for n in [1usize, 7, 64, 1000] {
            let (p, v) = (data(&mut rng, &[n]), data(&mut rng, &[n]));
            let named = [
                ("p", ArrayArg::from(&p)),
                ("v", ArrayArg::from(&v)),
                ("dt", ArrayArg::from(&dt)),
                ("g", ArrayArg::from(&g)),
            ];
            for r in [&runner, &maps] {
                let want: Vec<ArrayD<f64>> = r
                    .run_many(&named)
                    .unwrap()
                    .into_iter()
                    .map(Output::into_f64)
                    .collect();
                let mut outs: Vec<ArrayD<f64>> = want.iter().map(|w| ArrayD::zeros(w.shape())).collect();
                let mut views: Vec<_> = outs.iter_mut().map(|o| o.view_mut()).collect();
                r.run_into_many(&named, &mut views).unwrap();
                for (k, (o, w)) in outs.iter().zip(&want).enumerate() {
                    assert!(
                        bits_equal(o.as_slice().unwrap(), w.as_slice().unwrap()),
                        "round {round}, n {n}, result {k}"
                    );
                }
            }
        }
    }
    // a wrong output after the signature is bound: an error, not a panic
    let (p, v) = (data(&mut rng, &[64]), data(&mut rng, &[64]));
    let named = [
        ("p", ArrayArg::from(&p)),
        ("v", ArrayArg::from(&v)),
        ("dt", ArrayArg::from(&dt)),
        ("g", ArrayArg::from(&g)),
    ];
    let mut a = ArrayD::<f64>::zeros(IxDyn(&[64]));
    let mut b = ArrayD::<f64>::zeros(IxDyn(&[63]));
    let err = maps
        .run_into_many(&named, &mut [a.view_mut(), b.view_mut()])
        .unwrap_err();
    assert!(err.to_string().contains("output 1"), "{err}");
    let err = maps.run_into_many(&named, &mut [a.view_mut()]).unwrap_err();
    assert!(err.to_string().contains("1 outputs given for 2 results"), "{err}");
}

/// The fresh results of `expr` on the interpreter (the oracle), for a call's inputs.
fn oracle(expr: &str, inputs: &[(&str, ArrayArg<'_>)]) -> Vec<Output> {
    FusedRunner::compile_text(expr)
        .unwrap()
        .with_backend(backend_by_name("interp").unwrap())
        .call(inputs, kiln::FreshAll)
        .unwrap()
}

/// Several results of one element type into given arrays of that type, by name and by position,
/// repeated (the binding kept), and into views in another layout: each equals the interpreter's.
fn several_into<A: kiln::Element + PartialEq + std::fmt::Debug + Default>(
    expr: &str,
    inputs: &[(&str, ArrayArg<'_>)],
) {
    let want: Vec<ArrayD<A>> = oracle(expr, inputs)
        .into_iter()
        .map(|o| A::take(o).unwrap())
        .collect();
    let r = FusedRunner::compile_text(expr).unwrap();
    for _ in 0..3 {
        let mut outs: Vec<ArrayD<A>> = want.iter().map(|w| ArrayD::default(w.shape())).collect();
        let mut views: Vec<_> = outs.iter_mut().map(|o| o.view_mut()).collect();
        r.call(inputs, &mut views[..]).unwrap();
        assert_eq!(outs, want, "{expr} by name");
    }
    let h = r.prepared(inputs).unwrap();
    let args: Vec<ArrayArg<'_>> = inputs.iter().map(|(_, a)| a.clone()).collect();
    for _ in 0..2 {
        let mut outs: Vec<ArrayD<A>> = want.iter().map(|w| ArrayD::default(w.shape())).collect();
        let mut views: Vec<_> = outs.iter_mut().map(|o| o.view_mut()).collect();
        h.call(&args, &mut views[..]).unwrap();
        assert_eq!(outs, want, "{expr} by position");
    }
    // every output a view of every other element of a longer array (its own shape, reversed)
    let mut longs: Vec<ArrayD<A>> = want
        .iter()
        .map(|w| {
            let mut s = w.shape().to_vec();
            if let Some(first) = s.first_mut() {
                *first *= 2;
            }
            ArrayD::default(s)
        })
        .collect();
    let mut views: Vec<_> = longs
        .iter_mut()
        .map(|l| {
            let mut v = l.view_mut();
            if v.ndim() > 0 {
                v.slice_axis_inplace(ndarray::Axis(0), ndarray::Slice::new(0, None, -2));
            }
            v
        })
        .collect();
    r.call(inputs, &mut views[..]).unwrap();
    for (v, w) in views.iter().zip(&want) {
        assert_eq!(&v.to_owned(), w, "{expr} into strided views");
    }
}

#[test]
fn several_results_of_every_type_go_into_given_arrays() {
    use kiln::kiln_ir::num_complex::Complex64;
    let n: usize = 37;
    let i = Array1::from_iter((0..n).map(|k| (k * 7919 % 101) as i64 - 50));
    let j = Array1::from_iter((0..n as i32).map(|k| k % 5 - 2));
    let x = Array1::from_iter((0..n).map(|k| (k as f64 - 18.0) * 0.37));
    let y = Array1::from_iter((0..n).map(|k| k as f32 * 0.5 - 3.0));
    let b = Array1::from_iter((0..n).map(|k| k % 3 == 0));
    let z = Array1::from_iter((0..n).map(|k| Complex64::new(k as f64 * 0.5, -(k as f64))));
    let inputs = [
        ("i", (&i).into()),
        ("j", (&j).into()),
        ("x", (&x).into()),
        ("y", (&y).into()),
        ("b", (&b).into()),
        ("z", (&z).into()),
    ];
    several_into::<f64>("x*2; x + 1; x * x - 3", &inputs);
    several_into::<f32>("y*2; y*y + 1", &inputs);
    several_into::<i64>("i * 3 - 1; i * i; cumsum(i)", &inputs);
    several_into::<i32>("(j * 3 + 1) % 4; j * j", &inputs);
    several_into::<bool>("b & (i > 0); ~b; x > 0", &inputs);
    several_into::<Complex64>("z * z + i; z * x", &inputs);
    // a reduction among them: a zero-dimensional output
    several_into::<i64>("sum(i); i * 2", &inputs);
}

#[test]
fn several_results_of_mixed_types_go_into_a_tuple_of_arrays() {
    use kiln::kiln_ir::num_complex::Complex64;
    use kiln::{Error, OutSlice};
    let n = 64;
    let x = Array1::from_iter((0..n).map(|k| (k as f64 - 30.0) * 0.25));
    let i = Array1::from_iter((0..n).map(|k| (k * 31 % 17) as i64 - 8));
    let z = Array1::from_iter((0..n).map(|k| Complex64::new(k as f64, 1.0 - k as f64)));
    let inputs = [("x", (&x).into()), ("i", (&i).into()), ("z", (&z).into())];
    let want = oracle("x*2; x > 0; i + 1; z * x", &inputs);
    let r = FusedRunner::compile_text("x*2; x > 0; i + 1; z * x").unwrap();
    let h = r.prepared(&inputs).unwrap();
    let args: Vec<ArrayArg<'_>> = inputs.iter().map(|(_, a)| a.clone()).collect();
    for by_name in [true, false, true] {
        let mut a = Array1::<f64>::zeros(n);
        let mut m = Array1::<bool>::default(n);
        let mut c = Array1::<i64>::zeros(n);
        let mut w = Array1::<Complex64>::default(n);
        let outs = (a.view_mut(), m.view_mut(), c.view_mut(), w.view_mut());
        if by_name {
            r.call(&inputs, outs).unwrap();
        } else {
            h.call(&args, outs).unwrap();
        }
        assert_eq!(Output::F64(a.into_dyn()), want[0]);
        assert_eq!(Output::Bool(m.into_dyn()), want[1]);
        assert_eq!(Output::I64(c.into_dyn()), want[2]);
        assert_eq!(Output::C128(w.into_dyn()), want[3]);
    }
    // two results of a float kernel, one of them bool: through the handle on slices too
    let two = FusedRunner::compile_text("x*2; x > 0").unwrap();
    let h2 = two.prepared(&[("x", (&x).into())]).unwrap();
    assert_eq!(h2.result_type(1), kiln::kiln_ir::ElemType::Bool);
    let (mut a, mut m) = (vec![0.0; n], vec![false; n]);
    h2.run_stored_many(
        &[kiln_jit::Stored::F64(x.as_slice().unwrap())],
        &mut [OutSlice::F64(&mut a), OutSlice::Bool(&mut m)],
    )
    .unwrap();
    assert_eq!(Output::F64(Array1::from(a).into_dyn()), want[0]);
    assert_eq!(Output::Bool(Array1::from(m).into_dyn()), want[1]);

    // a wrong type, a wrong shape, a count short: errors naming the output, nothing written
    let mut a = Array1::<f64>::from_elem(n, 7.0);
    let mut m = Array1::<i64>::from_elem(n, 7);
    let e = two
        .call(&[("x", (&x).into())], (a.view_mut(), m.view_mut()))
        .unwrap_err();
    assert!(matches!(e, Error::Output(_)), "{e}");
    assert!(
        e.to_string().contains("output 1") && e.to_string().contains("bool"),
        "{e}"
    );
    assert!(a.iter().all(|&v| v == 7.0) && m.iter().all(|&v| v == 7));
    let mut short = Array1::<bool>::default(n - 1);
    let e = two
        .call(&[("x", (&x).into())], (a.view_mut(), short.view_mut()))
        .unwrap_err();
    assert!(e.to_string().contains("output 1 has shape"), "{e}");
    assert!(a.iter().all(|&v| v == 7.0));
    let e = two.call(&[("x", (&x).into())], &mut [a.view_mut()]).unwrap_err();
    assert!(e.to_string().contains("1 outputs given for 2 results"), "{e}");
    let (mut a, mut m) = (vec![7.0; n], vec![7.0; n]);
    let e = h2
        .run_slices_many(&[x.as_slice().unwrap()], &mut [&mut a, &mut m])
        .unwrap_err();
    assert!(e.to_string().contains("output 1"), "{e}");
    assert!(a.iter().chain(&m).all(|&v| v == 7.0));
}
