//! The builder and the ndarray front end read like maths: methods on `&Expr`, operators for every
//! combination of `Expr`, `&Expr` and scalars (weak, as NumPy's), axis reductions with `keepdims` without kiln-ir,
//! any number of inputs (tuples up to 8, slices), results typed as the user holds them, a hint to the
//! right method in every dimension error, and `fuse` cached per call site.

use kiln::{Error, Expr, FuseAllExt, FuseExt, FusedRunner, ReduceOp};
use ndarray::{Array0, Array1, Array2, Array3, ArrayD, IxDyn, array};

fn eval(e: &Expr, x: &Array1<f64>) -> Array1<f64> {
    FusedRunner::compile(e)
        .unwrap()
        .run(&[("x", x.into())])
        .unwrap()
        .into_f64()
        .into_dimensionality()
        .unwrap()
}

#[test]
fn operators_on_every_combination() {
    let x = Expr::input("x");
    let a = array![1.0, 2.0, 4.0];
    let want = a.mapv(|v| 2.0 * v);
    // Expr, &Expr and scalars on either side (f64 and f32 on the right; on the left an f64, an
    // i64 or a bare literal), every operator
    let forms: Vec<Expr> = vec![
        &x * 2.0,
        &x * 2.0f32,
        2.0f64 * &x,
        2.0 * &x,
        x.clone() * 2.0,
        x.clone() * 2.0f32,
        2.0f64 * x.clone(),
        2 * x.clone(),
        &x + &x,
        &x + x.clone(),
        x.clone() + &x,
        x.clone() + x.clone(),
    ];
    for f in &forms {
        assert_eq!(eval(f, &a), want);
    }
    let ops: Vec<(Expr, Array1<f64>)> = vec![
        (1.0 - &x, a.mapv(|v| 1.0 - v)),
        (8 / &x, a.mapv(|v| 8.0 / v)),
        (5.0 % &x, a.mapv(|v| 5.0 % v)),
        (&x - 1.0f32, a.mapv(|v| v - 1.0)),
        (&x / 2.0f32, a.mapv(|v| v / 2.0)),
        (-&x, a.mapv(|v| -v)),
        (!&x, a.mapv(|_| 0.0)),
    ];
    for (e, w) in ops {
        assert_eq!(eval(&e, &a), w);
    }
}

/// Runs `e` on `x` (whatever its element type) and returns the result as the runner gives it.
fn run_on(e: &Expr, x: kiln::ArrayArg<'_>) -> kiln::Output {
    FusedRunner::compile(e).unwrap().run(&[("x", x)]).unwrap()
}

#[test]
fn bare_literals_are_weak_scalars_that_keep_the_arrays_type() {
    let x = Expr::input("x");
    // no annotation anywhere: a bare literal first in a group a method is then called on compiles
    let gauss = (-0.5 * &x * &x).exp();
    let a = array![1.0f32, 2.0, 4.0];
    let exact: Vec<(Expr, Array1<f32>)> = vec![
        (0.5 * &x, a.mapv(|v| 0.5 * v)),
        (&x * 2, a.mapv(|v| v * 2.0)),
        (2 * &x, a.mapv(|v| 2.0 * v)),
        (-&x, a.mapv(|v| -v)),
        (x.powi(2), a.mapv(|v| v * v)),
        ((2.0 * &x).sqrt(), a.mapv(|v| (2.0 * v).sqrt())),
    ];
    for (e, want) in exact {
        // `into_typed` refuses anything but float32
        let got = run_on(&e, (&a).into()).into_typed::<f32>().unwrap();
        assert_eq!(got.into_raw_vec_and_offset().0, want.to_vec(), "{e:?}");
    }
    let g = run_on(&gauss, (&a).into()).into_typed::<f32>().unwrap();
    for (got, v) in g.iter().zip(&a) {
        let want = (-0.5 * v * v).exp();
        assert!((got - want).abs() <= 4.0 * f32::EPSILON * want, "{got} vs {want}");
    }
    let p = run_on(&x.powf(1.5), (&a).into()).into_typed::<f32>().unwrap();
    for (got, v) in p.iter().zip(&a) {
        assert!((got - v.powf(1.5)).abs() <= 4.0 * f32::EPSILON * v.powf(1.5));
    }
    // an integer array stays integer under an integer literal on either side
    let i = array![1i32, -2, 3];
    for (e, want) in [
        (&x * 2, [2, -4, 6]),
        (2 * &x, [2, -4, 6]),
        (-&x, [-1, 2, -3]),
        (x.powi(2), [1, 4, 9]),
    ] {
        let got = run_on(&e, (&i).into()).into_typed::<i32>().unwrap();
        assert_eq!(got.into_raw_vec_and_offset().0, want.to_vec(), "{e:?}");
    }
}

#[test]
fn methods_take_a_reference() {
    let x = Expr::input("x");
    // no clone anywhere: x is used after every call
    let e = x.abs() + x.sin() * &x + x.exp().log() + x.maximum(&x) + x.pow(2.0) + x.square();
    let a = array![0.5, -1.0];
    let got = eval(&e, &a);
    let want = a.mapv(|v| v.abs() + v.sin() * v + v.exp().ln() + v + v * v + v * v);
    for (g, w) in got.iter().zip(&want) {
        assert!((g - w).abs() <= 1e-15 * w.abs().max(1.0), "{g} vs {w}");
    }
}

#[test]
fn axis_reductions_with_keepdims_need_no_kiln_ir() {
    let a = array![[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]];
    let x = Expr::input("x");
    let run = |e: Expr| {
        FusedRunner::compile(&e)
            .unwrap()
            .run(&[("x", (&a).into())])
            .unwrap()
            .into_f64()
    };
    assert_eq!(run(x.max_axis(1)), array![5.0, 6.0].into_dyn());
    assert_eq!(run(x.max_axis_keepdims(1)), array![[5.0], [6.0]].into_dyn());
    assert_eq!(run(x.min_axis(0)), array![1.0, 2.0, 3.0].into_dyn());
    assert_eq!(run(x.sum_axis_keepdims(-1)), array![[9.0], [12.0]].into_dyn());
    assert_eq!(run(x.prod_axis(0)), array![4.0, 10.0, 18.0].into_dyn());
    assert_eq!(run(x.argmax_axis(1)), array![1.0, 2.0].into_dyn());
    assert_eq!(run(x.argmin_axis(1)), array![0.0, 1.0].into_dyn());
    assert_eq!(run(x.gt(4.0).any_axis(1)), array![1.0, 1.0].into_dyn());
    assert_eq!(run(x.gt(1.0).all_axis(0)), array![0.0, 1.0, 1.0].into_dyn());
    assert_eq!(run(x.mean_axis(1, false)), array![3.0, 4.0].into_dyn());
    assert_eq!(
        run(x.reduce_axes(ReduceOp::Sum, &[0, 1], true)),
        array![[21.0]].into_dyn()
    );
    assert_eq!(
        run(x.cumsum(Some(1))),
        array![[1.0, 6.0, 9.0], [4.0, 6.0, 12.0]].into_dyn()
    );
    let var = run(x.var_axis(1, true));
    assert_eq!(var.shape(), &[2, 1]);
    assert!((var[[0, 0]] - 8.0 / 3.0).abs() < 1e-15);
    // softmax over rows as the user wrote it, no import from kiln-ir
    let e = (&x - x.max_axis_keepdims(1)).exp();
    let sm = run(&e / e.sum_axis_keepdims(1));
    for row in sm.rows() {
        assert!((row.sum() - 1.0).abs() < 1e-15);
    }
}

#[test]
fn results_are_typed_as_the_user_holds_them() {
    let m = array![[1.0f32, -2.0], [3.0, 4.0]];
    let v = array![10.0f64, 20.0];
    let y: Array2<f32> = m.fuse(|x| x.abs()).unwrap();
    assert_eq!(y, array![[1.0f32, 2.0], [3.0, 4.0]]);
    let rows: Array1<f32> = m.fuse_reduced(|x| x.max_axis(1)).unwrap();
    assert_eq!(rows, array![1.0f32, 4.0]);
    let s: f32 = m.fuse_scalar(|x| x.sum()).unwrap();
    assert_eq!(s, 6.0);
    // f32 with f64 promotes; Ix2 with Ix1 broadcasts to Ix2
    let z: Array2<f64> = (&m, &v).fuse_all(|(m, v)| m * v).unwrap();
    assert_eq!(z, array![[10.0, -40.0], [30.0, 80.0]]);
    let r: Array1<f64> = (&m, &v).fuse_all_reduced(|(m, v)| (m * v).sum_axis(0)).unwrap();
    assert_eq!(r, array![40.0, 40.0]);
    let t: f64 = (&m, &v).fuse_all_scalar(|(m, v)| (m * v).sum()).unwrap();
    assert_eq!(t, 80.0);
    // a dynamic-dimensional input gives a dynamic-dimensional result
    let d = ArrayD::<f64>::ones(IxDyn(&[2, 2]));
    let dz: ArrayD<f64> = (&d, &v).fuse_all(|(d, v)| d + v).unwrap();
    assert_eq!(dz.shape(), &[2, 2]);
    // a zero-dimensional array stays one
    let zero = ndarray::arr0(2.0f64);
    let z0: Array0<f64> = zero.fuse(|x| &x * &x).unwrap();
    assert_eq!(z0[()], 4.0);
}

#[test]
fn tuples_up_to_eight_and_slices() {
    let a = array![1.0, 2.0];
    let b = array![[1.0f32], [2.0]];
    let c = Array3::<f64>::ones((1, 2, 2));
    let out: Array3<f64> = (&a, &b, &c, &a, &a, &a, &a, &a)
        .fuse_all(|(a, b, c, d, e, f, g, h)| a + b + c + d + e + f + g + h)
        .unwrap();
    assert_eq!(out.shape(), &[1, 2, 2]);
    assert_eq!(out[[0, 1, 1]], 2.0 + 2.0 + 1.0 + 5.0 * 2.0);
    let five: Array1<f64> = (&a, &a, &a, &a, &a)
        .fuse_all(|(p, q, r, s, t)| p * q * r * s * t)
        .unwrap();
    assert_eq!(five, array![1.0, 32.0]);
    // one array in a tuple, too
    let one: Array1<f64> = (&a,).fuse_all(|(a,)| &a + 1.0).unwrap();
    assert_eq!(one, array![2.0, 3.0]);
    // any number through a slice: twenty arrays
    let many: Vec<Array1<f64>> = (0..20).map(|i| Array1::from_elem(2, i as f64)).collect();
    let refs: Vec<&Array1<f64>> = many.iter().collect();
    let sum: Array1<f64> = refs[..]
        .fuse_all(|xs| xs.iter().skip(1).fold(xs[0].clone(), |acc, x| acc + x))
        .unwrap();
    assert_eq!(sum, array![190.0, 190.0]);
    let views = [a.view(), a.view()];
    let prod: Array1<f64> = views[..].fuse_all(|xs| &xs[0] * &xs[1]).unwrap();
    assert_eq!(prod, array![1.0, 4.0]);
    let arr: Array1<f64> = [&a, &a, &a].fuse_all(|xs| &xs[0] + &xs[1] + &xs[2]).unwrap();
    assert_eq!(arr, array![3.0, 6.0]);
}

#[test]
fn dimension_errors_name_the_right_method() {
    let m = array![[1.0, 2.0], [3.0, 4.0]];
    let msg = |r: Result<(), Error>| match r {
        Err(e @ (Error::Output(_) | Error::OutputShape { .. })) => e.to_string(),
        other => panic!("expected an output error, got {other:?}"),
    };
    let e = msg(m.fuse(|x| x.sum()).map(drop));
    assert!(e.contains("`fuse_scalar`"), "{e}");
    let e = msg(m.fuse(|x| x.sum_axis(0)).map(drop));
    assert!(e.contains("`fuse_reduced`"), "{e}");
    let e = msg(m.fuse_reduced(|x| x.abs()).map(drop));
    assert!(e.contains("`fuse_dyn`"), "{e}");
    let e = msg(m.fuse_scalar(|x| x.abs()).map(drop));
    assert!(e.contains("`fuse`") && e.contains("`fuse_reduced`"), "{e}");
    let mut out = Array2::<f64>::zeros((2, 2));
    let e = msg(m.fuse_into(&mut out, |x| x.sum_axis(1)));
    assert!(e.contains("`fuse_reduced`"), "{e}");
    let v = array![1.0, 2.0];
    let e = msg((&m, &v).fuse_all(|(m, v)| (m * v).sum()).map(drop));
    assert!(e.contains("`fuse_all_scalar`"), "{e}");
    let e = msg((&m, &v).fuse_all(|(m, v)| (m * v).sum_axis(1)).map(drop));
    assert!(e.contains("`fuse_all_reduced`"), "{e}");
    let e = msg((&m, &v).fuse_all_scalar(|(m, v)| m * v).map(drop));
    assert!(e.contains("`fuse_all`"), "{e}");
}

/// `fuse` in a loop: the expression is rebuilt and compared each call; a captured value that changes
/// gives a new expression (a different result), one that does not reuses the runner.
#[test]
fn fuse_in_a_loop_is_cached_per_call_site_and_sees_captured_values() {
    let p = array![1.0, 2.0];
    let mut out = Vec::new();
    let before = kiln::fuse_cache::stats();
    for dt in [0.5, 0.5, 0.25, -0.0, 0.0] {
        let y: Array1<f64> = p.fuse(|p| &p * dt + 1.0).unwrap();
        out.push(y);
    }
    let after = kiln::fuse_cache::stats();
    // 0.5 compiles, 0.5 again hits, 0.25, -0.0 and 0.0 are new expressions at the same site
    assert_eq!((after.hits - before.hits, after.misses - before.misses), (1, 4));
    assert_eq!(out[0], array![1.5, 2.0]);
    assert_eq!(out[1], out[0]);
    assert_eq!(out[2], array![1.25, 1.5]);
    // -0.0 and 0.0 are different literals: p * -0.0 + 1.0 is 1.0 either way here, but the kernels differ
    assert_eq!(out[3], array![1.0, 1.0]);
    assert_eq!(out[4], array![1.0, 1.0]);
    // shapes and dtypes change between calls at one site
    let before = kiln::fuse_cache::stats();
    for n in [3usize, 5, 3] {
        let q = Array1::<f32>::ones(n);
        let y: Array1<f32> = q.fuse(|q| &q + 1.0).unwrap();
        assert_eq!(y, Array1::from_elem(n, 2.0f32));
        let z: Array1<f32> = (&q, &q).fuse_all(|(a, b)| &a * &b).unwrap();
        assert_eq!(z, Array1::from_elem(n, 1.0f32));
    }
    let after = kiln::fuse_cache::stats();
    // one expression per site: the runner keeps a specialisation per shape
    assert_eq!((after.hits - before.hits, after.misses - before.misses), (4, 2));
}
