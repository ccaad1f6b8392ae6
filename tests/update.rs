//! In-place updates (issue 12 item 2): `FusedRunner::run_update` and `fuse_assign` write the result
//! into an input of the expression where that is safe (a map reading it only at the element it
//! writes), bit-identical to a run into another array on every backend, and refuse an unsafe alias
//! with an error that says why.

use kiln::{Error, FuseAssignExt, FusedRunner, Output, backend_by_name};
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
                if n == 0 && src.contains("max") {
                    continue; // max over an empty extent is an error either way
                }
                let (mut p, v, dt) = (data(n, 0.0), data(n, 3.0), arr0(0.25));
                // two steps: the second on the signature the first bound (its handle, or the
                // run that bound it, gave the first step's values)
                for step in 0..2 {
                    let mut want = Array1::<f64>::zeros(n);
                    runner
                        .run_into(
                            &[("p", (&p).into()), ("v", (&v).into()), ("dt", (&dt).into())],
                            want.view_mut(),
                        )
                        .unwrap();
                    runner
                        .run_update("p", &[("v", (&v).into()), ("dt", (&dt).into())], p.view_mut())
                        .unwrap();
                    assert!(
                        same_bits(p.as_slice().unwrap(), want.as_slice().unwrap()),
                        "{src} on {backend}, n = {n}, step {step}"
                    );
                }
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

/// In-place updates take every element type: by name (`InPlace`, one result and several) and
/// through a handle on slices (`update`, `update_stored` of several types at once); each equals
/// the interpreter's run on the previous values, repeated; a target of another type is an error
/// that writes nothing.
#[test]
fn updates_of_every_element_type() {
    use kiln::kiln_ir::num_complex::Complex64;
    use kiln::{FreshAll, InPlace, OutSlice, Stored};
    let n = 33;
    let c0 = Array1::from_iter((0..n).map(|k| (k * 7 % 11) as i64 - 5));
    let d = Array1::from_iter((0..n).map(|k| k as i64 % 3 - 1));
    let m0 = Array1::from_iter((0..n).map(|k| k % 4 == 1));
    let z0 = Array1::from_iter((0..n).map(|k| Complex64::new(0.5, k as f64 * 0.1)));
    let interp = || kiln::backend_by_name("interp").unwrap();
    // the interpreter's step on the previous values
    let step = |expr: &str, inputs: &[(&str, kiln::ArrayArg<'_>)]| {
        FusedRunner::compile_text(expr)
            .unwrap()
            .with_backend(interp())
            .call(inputs, FreshAll)
            .unwrap()
    };

    // int64, two results into two inputs, by name
    let r = FusedRunner::compile_text("c + d; d * 2 - c").unwrap();
    let (mut c, mut dd) = (c0.clone(), d.clone());
    let (mut cw, mut dw) = (c0.clone().into_dyn(), d.clone().into_dyn());
    for _ in 0..3 {
        r.call(&[], InPlace(&mut [("c", c.view_mut()), ("d", dd.view_mut())]))
            .unwrap();
        let want = step("c + d; d * 2 - c", &[("c", (&cw).into()), ("d", (&dw).into())]);
        cw = want[0].clone().into_typed().unwrap();
        dw = want[1].clone().into_typed().unwrap();
        assert_eq!(
            (c.clone().into_dyn(), dd.clone().into_dyn()),
            (cw.clone(), dw.clone())
        );
    }
    // bool and complex, one result each
    let mut m = m0.clone();
    let mut mw = m0.clone().into_dyn();
    let rb = FusedRunner::compile_text("~m ^ (d > 0)").unwrap();
    let mut z = z0.clone();
    let mut zw = z0.clone().into_dyn();
    let rz = FusedRunner::compile_text("z * z + d").unwrap();
    for _ in 0..3 {
        rb.call(&[("d", (&d).into())], InPlace(&mut [("m", m.view_mut())]))
            .unwrap();
        mw = step("~m ^ (d > 0)", &[("m", (&mw).into()), ("d", (&d).into())])[0]
            .clone()
            .into_typed()
            .unwrap();
        assert_eq!(m.clone().into_dyn(), mw);
        rz.run_update("z", &[("d", (&d).into())], z.view_mut()).unwrap();
        zw = step("z * z + d", &[("z", (&zw).into()), ("d", (&d).into())])[0]
            .clone()
            .into_typed()
            .unwrap();
        assert_eq!(z.clone().into_dyn(), zw);
    }

    // a handle on slices: int64 updated with int64, then an int64 and a bool input updated at once
    let h = r
        .prepared_update(&[("c", (&c0).into()), ("d", (&d).into())], &["c", "d"])
        .unwrap();
    let (mut c, mut dd) = (c0.clone(), d.clone());
    h.update::<i64, i64>(&mut [c.as_slice_mut().unwrap(), dd.as_slice_mut().unwrap()], &[])
        .unwrap();
    let want = step("c + d; d * 2 - c", &[("c", (&c0).into()), ("d", (&d).into())]);
    assert_eq!(Output::I64(c.into_dyn()), want[0]);
    assert_eq!(Output::I64(dd.into_dyn()), want[1]);
    let mixed = FusedRunner::compile_text("c + d; m & (c > 0)").unwrap();
    let bind = [("c", (&c0).into()), ("m", (&m0).into()), ("d", (&d).into())];
    let h = mixed.prepared_update(&bind, &["c", "m"]).unwrap();
    let (mut c, mut m) = (c0.clone(), m0.clone());
    for _ in 0..2 {
        let want = step(
            "c + d; m & (c > 0)",
            &[("c", (&c).into()), ("m", (&m).into()), ("d", (&d).into())],
        );
        h.update_stored(
            &mut [
                OutSlice::I64(c.as_slice_mut().unwrap()),
                OutSlice::Bool(m.as_slice_mut().unwrap()),
            ],
            &[Stored::I64(d.as_slice().unwrap())],
        )
        .unwrap();
        assert_eq!(Output::I64(c.clone().into_dyn()), want[0]);
        assert_eq!(Output::Bool(m.clone().into_dyn()), want[1]);
    }

    // a target of another type than its result: an error, nothing written
    let mut wrong = Array1::<i32>::from_elem(n, 9);
    let rc = FusedRunner::compile_text("c + d").unwrap();
    let e = rc
        .call(&[("d", (&d).into())], InPlace(&mut [("c", wrong.view_mut())]))
        .unwrap_err();
    assert!(
        e.to_string().contains("int64") || e.to_string().contains("i64"),
        "{e}"
    );
    assert!(wrong.iter().all(|&v| v == 9));
    let mut wrong = vec![9i32; n];
    let e = h
        .update_stored(
            &mut [OutSlice::I32(&mut wrong), OutSlice::Bool(&mut vec![true; n])],
            &[Stored::I64(d.as_slice().unwrap())],
        )
        .unwrap_err();
    assert!(e.to_string().contains("output 0"), "{e}");
    assert!(wrong.iter().all(|&v| v == 9));
}

/// Targets of several element types in one call (a tuple of named views): a float64 and an int64
/// input updated at once, through the one update (bound on the first call, then straight to its
/// handle), equal to the interpreter's step on the previous values; a float64 and a bool target;
/// a strided float target (from a copy); a wrong type, shape or name is an error that names the
/// target, and nothing is written.
#[test]
fn targets_of_several_types_in_one_call() {
    use kiln::{FreshAll, InPlace, backend_by_name};
    let n = 37;
    let p0 = data(n, 1.0);
    let v = data(n, 2.0);
    let k0 = Array1::from_iter((0..n).map(|k| (k * 5 % 9) as i64 - 4));
    let dt = arr0(0.125);
    let src = "p + v*dt; k * 3 - 1";
    let step = |inputs: &[(&str, kiln::ArrayArg<'_>)]| {
        FusedRunner::compile_text(src)
            .unwrap()
            .with_backend(backend_by_name("interp").unwrap())
            .call(inputs, FreshAll)
            .unwrap()
    };
    for backend in BACKENDS {
        let r = FusedRunner::compile_text(src)
            .unwrap()
            .with_backend(backend_by_name(backend).unwrap());
        let (mut p, mut k) = (p0.clone(), k0.clone());
        let (mut pw, mut kw) = (p0.clone().into_dyn(), k0.clone().into_dyn());
        for _ in 0..3 {
            r.call(
                &[("v", (&v).into()), ("dt", (&dt).into())],
                InPlace((("p", p.view_mut()), ("k", k.view_mut()))),
            )
            .unwrap();
            let want = step(&[
                ("p", (&pw).into()),
                ("v", (&v).into()),
                ("dt", (&dt).into()),
                ("k", (&kw).into()),
            ]);
            pw = want[0].clone().into_typed().unwrap();
            kw = want[1].clone().into_typed().unwrap();
            assert!(
                same_bits(p.as_slice().unwrap(), pw.as_slice().unwrap()),
                "{backend}"
            );
            assert_eq!(k.clone().into_dyn(), kw, "{backend}");
        }
        // the targets in the other order
        let (mut p2, mut k2) = (p0.clone(), k0.clone());
        r.call(
            &[("dt", (&dt).into()), ("v", (&v).into())],
            InPlace((("k", k2.view_mut()), ("p", p2.view_mut()))),
        )
        .unwrap_err();
        // (results go to targets in the order of the expressions: k2 is not of result 0's type)
        assert_eq!((p2.clone(), k2.clone()), (p0.clone(), k0.clone()));
    }
    // a float and a bool target; a strided float target (from a copy)
    let r = FusedRunner::compile_text("p * 2; m ^ (p > 0)").unwrap();
    let m0 = Array1::from_iter((0..n).map(|k| k % 3 == 0));
    let mut big = Array1::<f64>::zeros(2 * n);
    big.slice_mut(s![..;2]).assign(&p0);
    let mut m = m0.clone();
    r.call(
        &[],
        InPlace((("p", big.slice_mut(s![..;2])), ("m", m.view_mut()))),
    )
    .unwrap();
    assert!(same_bits(
        &big.slice(s![..;2]).to_vec(),
        &p0.mapv(|x| x * 2.0).to_vec()
    ));
    assert_eq!(
        m,
        Array1::from_iter(m0.iter().zip(&p0).map(|(&b, &x)| b ^ (x > 0.0)))
    );
    // errors name the target and write nothing
    let r = FusedRunner::compile_text(src).unwrap();
    let (mut p, mut k) = (p0.clone(), k0.clone());
    // a bool p: its result is float64, which it does not hold
    let mut pb = p0.mapv(|x| x > 0.0);
    let e = r
        .call(
            &[("v", (&v).into()), ("dt", (&dt).into())],
            InPlace((("p", pb.view_mut()), ("k", k.view_mut()))),
        )
        .unwrap_err();
    assert!(e.to_string().contains("'p'"), "{e}");
    assert_eq!((&pb, &k), (&p0.mapv(|x| x > 0.0), &k0));
    // a p of one element: read broadcast over v's points
    let mut one = Array1::<f64>::zeros(1);
    let e = r
        .call(
            &[("v", (&v).into()), ("dt", (&dt).into())],
            InPlace((("p", one.view_mut()), ("k", k.view_mut()))),
        )
        .unwrap_err();
    assert!(e.to_string().contains("'p'"), "{e}");
    assert_eq!((one[0], &k), (0.0, &k0));
    let e = r
        .call(
            &[("v", (&v).into()), ("dt", (&dt).into())],
            InPlace((("p", p.view_mut()), ("q", k.view_mut()))),
        )
        .unwrap_err();
    assert!(e.to_string().contains("'q'"), "{e}");
    assert!(matches!(e, Error::Unsupported(_)), "{e}");
    assert_eq!((p, k), (p0, k0));
}

/// A function whose wide routine writes each block straight into the output row (a map whose
/// value is the function: `skeleton/block.rs` `direct`) gives, updating an input in place, the
/// bits of a run into another array: the routine's argument read where it lies is the array it
/// writes (then read there), a second argument that is the target is copied first, arguments
/// computed into the target are computed before anything overwrites what they read; at lengths
/// around a block (256 points) and below the blocked rows' minimum (16). Complex quotients as well,
/// though a complex target is updated through a copy (a compiled kernel reads no complex target in
/// place), so they hold the update's bits but not the aliasing paths.
#[test]
fn a_routine_writing_into_the_array_it_reads_gives_a_runs_bits() {
    use kiln::kiln_ir::num_complex::Complex64;
    let srcs = [
        "exp(p)",
        "sin(p)",
        "arctan2(p, v)",
        "arctan2(v, p)",
        "arctan2(p * 2, v + 1)",
        "arctan2(v * 2, p + 1)",
        "hypot(v, p)",
        "abs(v) ** p",
        "p ** 1.5",
    ];
    let lengths = [1, 15, 16, 17, 255, 256, 257, 1027];
    for src in srcs {
        for backend in BACKENDS {
            let runner = FusedRunner::compile_text(src)
                .unwrap()
                .with_backend(backend_by_name(backend).unwrap());
            for n in lengths {
                let (p, want) = updated_and_run(&runner, data(n, 0.0), data(n, 3.0));
                assert!(same_bits(&p, &want), "{src} on {backend}, n = {n}");
            }
        }
    }
    for src in ["p / v", "v / p", "(p + 1j) / (v * 2)", "(v + 1j) / (p * 2)"] {
        let runner = FusedRunner::compile_text(src).unwrap();
        for n in lengths {
            let z = |seed: f64| -> Array1<Complex64> {
                data(n, seed)
                    .iter()
                    .zip(data(n, seed + 7.0))
                    .map(|(&re, im)| Complex64::new(re, im))
                    .collect()
            };
            let (p, want) = updated_and_run(&runner, z(0.0), z(3.0));
            let parts = |a: &[Complex64]| a.iter().flat_map(|c| [c.re, c.im]).collect::<Vec<f64>>();
            assert!(same_bits(&parts(&p), &parts(&want)), "{src}, n = {n}");
        }
    }
}

/// `p` updated in place by `runner` of inputs `p` and `v`, and its run into another array.
fn updated_and_run<A: kiln::Element + Default>(
    runner: &FusedRunner,
    mut p: Array1<A>,
    v: Array1<A>,
) -> (Vec<A>, Vec<A>) {
    let mut want = Array1::<A>::default(p.len());
    runner
        .run_into(&[("p", (&p).into()), ("v", (&v).into())], want.view_mut())
        .unwrap();
    runner
        .run_update("p", &[("v", (&v).into())], p.view_mut())
        .unwrap();
    (p.to_vec(), want.to_vec())
}
