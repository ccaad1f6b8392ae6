//! The one run call, `FusedRunner::call`: each way of delivering results gives the bits of the
//! others, repeated calls (bound) give the first call's, and bad calls are errors that name what is
//! wrong and write nothing.

use kiln::{ArrayArg, Error, Fresh, FreshAll, FusedRunner, InPlace};
use ndarray::{Array1, Array2, ShapeBuilder, arr0, s};

fn data(n: usize, seed: f64) -> Array1<f64> {
    Array1::from_iter((0..n).map(|i| ((i as f64 + seed) * 0.37).sin() * 3.0))
}

fn bits(a: &[f64]) -> Vec<u64> {
    a.iter().map(|v| v.to_bits()).collect()
}

#[test]
fn every_way_of_delivering_gives_the_same_bits() {
    let r = FusedRunner::compile_text("a*x + y*y").unwrap();
    let (a, x, y) = (arr0(1.5), data(100, 1.0), data(100, 2.0));
    let inputs = [("a", (&a).into()), ("x", (&x).into()), ("y", (&y).into())];
    let want = r.run(&inputs).unwrap().into_f64();
    for _ in 0..3 {
        assert_eq!(r.call(&inputs, Fresh).unwrap().into_f64(), want);
        let all = r.call(&inputs, FreshAll).unwrap();
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].clone().into_f64(), want);
        let mut out = Array1::<f64>::zeros(100);
        r.call(&inputs, out.view_mut()).unwrap();
        assert_eq!(out.clone().into_dyn(), want);
        let mut outs = [Array1::<f64>::zeros(100)];
        let mut views = [outs[0].view_mut()];
        r.call(&inputs, &mut views).unwrap();
        assert_eq!(outs[0].clone().into_dyn(), want);
        // in place into x: the result of the same inputs
        let mut xx = x.clone();
        r.call(
            &[("a", (&a).into()), ("y", (&y).into())],
            InPlace(&mut [("x", xx.view_mut())]),
        )
        .unwrap();
        assert_eq!(xx.into_dyn(), want);
    }
}

#[test]
fn several_results_into_inputs_in_place_follow_run_many() {
    let step = FusedRunner::compile_text("p + v*dt; v*0.99 + g*dt").unwrap();
    let (dt, g) = (arr0(0.01), arr0(-9.81));
    for backend in ["jit", "jit-scalar", "interp"] {
        let step = step.clone().with_backend(kiln::backend_by_name(backend).unwrap());
        let (mut p, mut v) = (data(64, 0.0), data(64, 5.0));
        let (mut p2, mut v2) = (p.clone(), v.clone());
        for _ in 0..20 {
            step.call(
                &[("dt", (&dt).into()), ("g", (&g).into())],
                InPlace(&mut [("p", p.view_mut()), ("v", v.view_mut())]),
            )
            .unwrap();
            let outs = step
                .run_many(&[
                    ("p", (&p2).into()),
                    ("v", (&v2).into()),
                    ("dt", (&dt).into()),
                    ("g", (&g).into()),
                ])
                .unwrap();
            p2 = outs[0].clone().into_f64().into_dimensionality().unwrap();
            v2 = outs[1].clone().into_f64().into_dimensionality().unwrap();
            assert_eq!(
                bits(p.as_slice().unwrap()),
                bits(p2.as_slice().unwrap()),
                "{backend}"
            );
            assert_eq!(
                bits(v.as_slice().unwrap()),
                bits(v2.as_slice().unwrap()),
                "{backend}"
            );
        }
    }
    // strided targets and f32, through the copy
    let step32 = FusedRunner::compile_text("p + v*dt; v*0.5").unwrap();
    let mut pw = Array1::from_iter((0..32).map(|i| i as f32));
    let mut v = Array1::from_iter((0..16).map(|i| 1.0 + i as f32));
    let dt = arr0(0.25f32);
    let (p0, v0) = (pw.slice(s![..;2]).to_owned(), v.clone());
    step32
        .call(
            &[("dt", (&dt).into())],
            InPlace(&mut [("p", pw.slice_mut(s![..;2])), ("v", v.view_mut())]),
        )
        .unwrap();
    assert_eq!(pw.slice(s![..;2]), &p0 + &(&v0 * 0.25));
    assert_eq!(v, &v0 * 0.5);
    assert_eq!(pw[1], 1.0);
}

#[test]
fn several_results_into_given_arrays() {
    let r = FusedRunner::compile_text("x*2; x + y; sum(x)").unwrap();
    let (x, y) = (data(50, 1.0), data(50, 3.0));
    let inputs = [("x", (&x).into()), ("y", (&y).into())];
    let want = r.call(&inputs, FreshAll).unwrap();
    let maps = FusedRunner::compile_text("x*2; x + y").unwrap();
    let (mut a, mut b) = (Array1::<f64>::zeros(50), Array1::<f64>::zeros(50));
    for _ in 0..3 {
        maps.call(&inputs, &mut [a.view_mut(), b.view_mut()]).unwrap();
        assert_eq!(a.clone().into_dyn(), want[0].clone().into_f64());
        assert_eq!(b.clone().into_dyn(), want[1].clone().into_f64());
    }
    // one output short, one of another shape, one not contiguous: errors naming the output
    let e = maps.call(&inputs, &mut [a.view_mut()]).unwrap_err();
    assert!(matches!(e, Error::Output(_)), "{e}");
    let mut short = Array1::<f64>::zeros(49);
    let e = maps
        .call(&inputs, &mut [a.view_mut(), short.view_mut()])
        .unwrap_err();
    assert!(e.to_string().contains("output 1"), "{e}");
    // an output in another layout takes its result (every other element of a longer array)
    let mut wide = Array1::<f64>::from_elem(100, 7.0);
    maps.call(&inputs, &mut [a.view_mut(), wide.slice_mut(s![..;2])])
        .unwrap();
    assert_eq!(
        wide.slice(s![..;2]).to_owned().into_dyn(),
        want[1].clone().into_f64()
    );
    assert!(wide.slice(s![1..;2]).iter().all(|&v| v == 7.0));
}

#[test]
fn a_bad_update_is_an_error_and_writes_nothing() {
    let step = FusedRunner::compile_text("p + v*dt; v*0.99").unwrap();
    let dt = arr0(0.5);
    let (mut p, mut v) = (data(8, 0.0), data(8, 1.0));
    let (p0, v0) = (p.clone(), v.clone());
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["p"], "1 inputs named for 2 results"),
        (vec!["p", "w"], "'w' in place: it is not an input"),
        (vec!["p", "p"], "'p'"),
    ];
    for (names, why) in cases {
        let e = match names.as_slice() {
            [a] => step.call(&[("dt", (&dt).into())], InPlace(&mut [(*a, p.view_mut())])),
            [a, b] => step.call(
                &[("dt", (&dt).into())],
                InPlace(&mut [(*a, p.view_mut()), (*b, v.view_mut())]),
            ),
            _ => unreachable!(),
        }
        .unwrap_err();
        assert!(e.to_string().contains(why), "{names:?}: {e}");
    }
    // an updated input also given among the inputs
    let p_again = p.clone();
    let e = step
        .call(
            &[("dt", (&dt).into()), ("p", (&p_again).into())],
            InPlace(&mut [("p", p.view_mut()), ("v", v.view_mut())]),
        )
        .unwrap_err();
    assert!(matches!(e, Error::DuplicateInput { .. }), "{e}");
    // a result that reads all of an updated input
    let red = FusedRunner::compile_text("p - sum(v); v*2").unwrap();
    let e = red
        .call(&[], InPlace(&mut [("p", p.view_mut()), ("v", v.view_mut())]))
        .unwrap_err();
    assert!(e.to_string().contains("not all maps of one kernel"), "{e}");
    // an updated input of another shape than its result (broadcast)
    let mut one = Array1::from_elem(1, 2.0);
    let bc = FusedRunner::compile_text("q + v; v*2").unwrap();
    let e = bc
        .call(&[], InPlace(&mut [("q", one.view_mut()), ("v", v.view_mut())]))
        .unwrap_err();
    assert!(e.to_string().contains("broadcast input"), "{e}");
    assert_eq!((p, v, one[0]), (p0, v0, 2.0), "nothing written");
    // a 2-d update of the wrong dtype: an error, nothing written
    let mut m = Array2::<f32>::zeros((3, 4));
    let r = FusedRunner::compile_text("m + x").unwrap();
    let x = Array2::<f64>::ones((3, 4));
    let e = r
        .call(&[("x", (&x).into())], InPlace(&mut [("m", m.view_mut())]))
        .unwrap_err();
    assert!(matches!(e, Error::Output(_)), "{e}");
    assert!(m.iter().all(|&v| v == 0.0));
}

#[test]
fn a_handle_calls_by_position_with_the_same_bits() {
    let r = FusedRunner::compile_text("a*x + y*y; x - y").unwrap();
    let one = FusedRunner::compile_text("a*x + y*y").unwrap();
    let (a, x, y) = (arr0(1.5), data(40, 1.0), data(40, 2.0));
    let named = [("a", (&a).into()), ("x", (&x).into()), ("y", (&y).into())];
    let want = r.call(&named, FreshAll).unwrap();
    let h = r.prepared(&named).unwrap();
    let h1 = one.prepared(&named).unwrap();
    let at = [(&a).into(), (&x).into(), (&y).into()];
    for _ in 0..3 {
        assert_eq!(h.call(&at, FreshAll).unwrap(), want);
        assert_eq!(h1.call(&at, Fresh).unwrap(), want[0]);
        let mut out = Array1::<f64>::zeros(40);
        h1.call(&at, out.view_mut()).unwrap();
        assert_eq!(kiln::Output::F64(out.into_dyn()), want[0]);
        let (mut o0, mut o1) = (Array1::<f64>::zeros(40), Array1::<f64>::zeros(40));
        h.call(&at, &mut [o0.view_mut(), o1.view_mut()]).unwrap();
        assert_eq!(kiln::Output::F64(o0.into_dyn()), want[0]);
        assert_eq!(kiln::Output::F64(o1.into_dyn()), want[1]);
    }
    // a count or a shape other than bound: an error that names the input
    let e = h.call(&at[..2], FreshAll).unwrap_err();
    assert!(e.to_string().contains("2 inputs given, 3 bound"), "{e}");
    let short = data(39, 2.0);
    let e = h1
        .call(&[(&a).into(), (&x).into(), (&short).into()], Fresh)
        .unwrap_err();
    assert!(e.to_string().contains("input 2 ('y')"), "{e}");
}

/// A result of any element type goes into the caller's array of that type: the compiled code
/// writes it (a C-contiguous array, by name and by position, repeated calls bound), a view in
/// another layout takes the same values; an array of another type or shape is an error that says
/// so and writes nothing.
#[test]
fn results_of_every_type_go_into_a_given_array() {
    use kiln::kiln_ir::num_complex::Complex64;
    let i = Array1::from_iter((0..37).map(|k| (k * 7919 % 101) as i64 - 50));
    let j = Array1::from_iter((0..37i32).map(|k| k % 5));
    let z = Array1::from_iter((0..37).map(|k| Complex64::new(k as f64 * 0.5, -(k as f64))));
    let inputs = [("i", (&i).into()), ("j", (&j).into()), ("z", (&z).into())];
    // each expression's result into an array of its type equals its fresh result
    fn into<A: kiln::Element + PartialEq + std::fmt::Debug + Clone + Default>(
        expr: &str,
        inputs: &[(&str, kiln::ArrayArg<'_>)],
        shape: &[usize],
    ) {
        let r = FusedRunner::compile_text(expr).unwrap();
        let want = A::take(r.call(inputs, Fresh).unwrap()).unwrap();
        for _ in 0..3 {
            let mut out = ndarray::ArrayD::<A>::default(shape);
            r.call(inputs, out.view_mut()).unwrap();
            assert_eq!(out, want, "{expr}");
        }
        // by position
        let h = r.prepared(inputs).unwrap();
        let args: Vec<kiln::ArrayArg<'_>> = inputs.iter().map(|(_, a)| a.clone()).collect();
        let mut out = ndarray::ArrayD::<A>::default(shape);
        h.call(&args, out.view_mut()).unwrap();
        assert_eq!(out, want, "{expr} by position");
    }
    into::<i64>("i * 3 - 1", &inputs, &[37]);
    into::<i32>("(j * 3 + 1) % 4", &inputs, &[37]);
    into::<bool>("i > j", &inputs, &[37]);
    into::<i64>("cumsum(i)", &inputs, &[37]);
    into::<i64>("sum(i)", &inputs, &[]);
    into::<i64>("max(i * j)", &inputs, &[]);
    into::<Complex64>("z * z + i", &inputs, &[37]);

    // a view in another layout: every other element of a longer array
    let r = FusedRunner::compile_text("i * 3 - 1").unwrap();
    let mut long = Array1::<i64>::zeros(74);
    r.call(&inputs, long.slice_mut(s![..;2])).unwrap();
    let want = r.call(&inputs, Fresh).unwrap().into_typed::<i64>().unwrap();
    assert_eq!(long.slice(s![..;2]).to_owned().into_dyn(), want);
    assert!(long.slice(s![1..;2]).iter().all(|&v| v == 0));

    // another type, another shape: errors that say so, nothing written
    let mut wrong_type = Array1::<i32>::from_elem(37, 7);
    let e = r.call(&inputs, wrong_type.view_mut()).unwrap_err();
    assert!(matches!(e, Error::Output(_)), "{e}");
    assert!(
        e.to_string().contains("i32") && e.to_string().contains("i64"),
        "{e}"
    );
    assert!(wrong_type.iter().all(|&v| v == 7));
    let mut wrong_shape = Array1::<i64>::from_elem(36, 7);
    let e = r.call(&inputs, wrong_shape.view_mut()).unwrap_err();
    assert!(e.to_string().contains("shape"), "{e}");
    assert!(wrong_shape.iter().all(|&v| v == 7));
    // another type in another layout too (an int32 result is not widened into int64 or f64)
    let r32 = FusedRunner::compile_text("(j * 3 + 1) % 4").unwrap();
    let mut long = Array1::<i64>::from_elem(74, 7);
    let e = r32.call(&inputs, long.slice_mut(s![..;2])).unwrap_err();
    assert!(
        e.to_string().contains("i32") && e.to_string().contains("i64"),
        "{e}"
    );
    assert!(long.iter().all(|&v| v == 7));
    let mut long = Array1::<f64>::from_elem(74, 7.0);
    assert!(r32.call(&inputs, long.slice_mut(s![..;2])).is_err());
    assert!(long.iter().all(|&v| v == 7.0));
    let mut long = Array1::<i32>::zeros(74);
    r32.call(&inputs, long.slice_mut(s![..;2])).unwrap();
    let want = r32.call(&inputs, Fresh).unwrap().into_typed::<i32>().unwrap();
    assert_eq!(long.slice(s![..;2]).to_owned().into_dyn(), want);
}

/// A float result into a view in another layout (every other element of a longer array, a
/// transposed matrix) is assigned, on the first call and on a repeated one, for maps, scans and
/// reductions over an axis; accumulating into such a view folds from its previous values (and
/// through the one call, [`kiln::Accumulate`], from what the last call left).
#[test]
fn float_results_into_views_of_another_layout() {
    let x = Array2::from_shape_fn((6, 5), |(i, j)| (i * 5 + j) as f64 * 0.5 - 3.0);
    let inputs = [("x", ArrayArg::from(x.view()))];
    for expr in ["x * 2 + 1", "cumsum(x, axis=1)", "exp(x) - x"] {
        let r = FusedRunner::compile_text(expr).unwrap();
        let want = r.call(&inputs, Fresh).unwrap().into_typed::<f64>().unwrap();
        for _ in 0..2 {
            let mut t = Array2::<f64>::from_elem((5, 6), 9.0);
            r.call(&inputs, t.view_mut().reversed_axes()).unwrap();
            assert_eq!(t.t().to_owned().into_dyn(), want, "{expr}");
        }
    }
    let r = FusedRunner::compile_text("sum(x, axis=0)").unwrap();
    let want = r.call(&inputs, Fresh).unwrap().into_typed::<f64>().unwrap();
    for _ in 0..2 {
        let mut long = Array1::<f64>::zeros(10);
        r.call(&inputs, long.slice_mut(s![..;2])).unwrap();
        assert_eq!(long.slice(s![..;2]).to_owned().into_dyn(), want);
        assert!(long.slice(s![1..;2]).iter().all(|&v| v == 0.0));
    }
    // accumulating: out = out + sum(x, axis=0), in a strided view
    let mut long = Array1::<f64>::from_elem(10, 1.0);
    r.run_accumulate(&inputs, long.slice_mut(s![..;2])).unwrap();
    let plus_one = want.mapv(|v| v + 1.0);
    assert_eq!(long.slice(s![..;2]).to_owned().into_dyn(), plus_one);
    assert!(long.slice(s![1..;2]).iter().all(|&v| v == 1.0));
    // the same through the one call: each call folds into the values the last one left
    let mut total = Array1::<f64>::from_elem(5, 1.0);
    for k in 1..=2 {
        r.call(&inputs, kiln::Accumulate(total.view_mut())).unwrap();
        assert_eq!(total.clone().into_dyn(), want.mapv(|v| v * k as f64 + 1.0));
    }
    // a result that is not such a reduction: an error, nothing written
    let m = FusedRunner::compile_text("x * 2").unwrap();
    let mut out = Array2::<f64>::from_elem((6, 5), 7.0);
    let e = m.call(&inputs, kiln::Accumulate(out.view_mut())).unwrap_err();
    assert!(e.to_string().contains("needs a sum, prod, min or max"), "{e}");
    assert!(out.iter().all(|&v| v == 7.0));
}

/// `Accumulate` binds its signature as the other ways do: the first call keeps a handle (a plan of
/// one kernel), later calls fold through it without binding names, a handle kept by another way
/// of the same signature folds too, and its checks stay: another output shape, an expression that
/// is not such a reduction. A plan of two kernels and Fortran-order inputs fold by name, alike.
#[test]
fn accumulate_binds_its_signature() {
    let x = Array2::from_shape_fn((6, 5), |(i, j)| (i * 5 + j) as f64 * 0.25 - 2.0);
    let xf = x.t().as_standard_layout().into_owned().reversed_axes();
    for (expr, x) in [
        ("sum(x, axis=1)", x.view()),
        ("max(x * 2, axis=0)", x.view()),
        ("sum(x - mean(x), axis=1)", x.view()),
        ("sum(x, axis=1)", xf.view()),
    ] {
        let inputs = [("x", ArrayArg::from(x))];
        let want = FusedRunner::compile_text(expr)
            .unwrap()
            .call(&inputs, Fresh)
            .unwrap();
        let want = want.into_typed::<f64>().unwrap();
        // a runner of its own, which no other call has bound
        let r = FusedRunner::compile_text(expr).unwrap();
        let fold = |prev: f64, v: f64| {
            if expr.starts_with("max") {
                prev.max(v)
            } else {
                prev + v
            }
        };
        let mut total = ndarray::ArrayD::<f64>::from_elem(want.shape(), 0.5);
        let mut expect = total.clone();
        for _ in 0..3 {
            r.call(&inputs, kiln::Accumulate(total.view_mut())).unwrap();
            expect.zip_mut_with(&want, |e, &w| *e = fold(*e, w));
            assert_eq!(total, expect, "{expr}");
        }
        let one_kernel = !expr.contains("mean") && x.is_standard_layout();
        assert_eq!(r.kept(&inputs).is_some(), one_kernel, "{expr}");
        // the kept handle's checks: an output of another shape
        let mut wrong = Array1::<f64>::zeros(want.len() + 1);
        let e = r.call(&inputs, kiln::Accumulate(wrong.view_mut())).unwrap_err();
        assert!(e.to_string().contains("output"), "{expr}: {e}");
        assert!(wrong.iter().all(|&v| v == 0.0));
    }
    // the bound direct fold (a C-order output) against the runner's run (a Fortran-order one), bit
    // for bit, in both float types, over values whose sums round: 40 outputs (more than the 16
    // previous values kept on the stack), 327,680 points (past the threads' threshold: partials),
    // a max whose start (0.3) is above every value (a start dropped would show)
    let x3 = ndarray::Array3::from_shape_fn((5, 8, 8192), |(i, j, k)| {
        ((i * 7 + j * 3 + k) as f64 * 0.37).sin() * 1e3
    });
    let x32 = x3.mapv(|v| v as f32);
    for expr in [
        "sum(x * 1.1, axis=2)",
        "prod(x / 900 + 0.8, axis=2)",
        "max(x / 1e4, axis=2)",
    ] {
        let r = FusedRunner::compile_text(expr).unwrap();
        let r32 = FusedRunner::compile_text(expr).unwrap();
        let mut c = Array2::<f64>::from_elem((5, 8), 0.3);
        let mut f = Array2::<f64>::from_elem((8, 5), 0.3).reversed_axes();
        let mut c32 = Array2::<f32>::from_elem((5, 8), 0.3);
        let mut f32_ = Array2::<f32>::from_elem((8, 5), 0.3).reversed_axes();
        for _ in 0..2 {
            r.call(&[("x", (&x3).into())], kiln::Accumulate(c.view_mut()))
                .unwrap();
            r.call(&[("x", (&x3).into())], kiln::Accumulate(f.view_mut()))
                .unwrap();
            r32.call(&[("x", (&x32).into())], kiln::Accumulate(c32.view_mut()))
                .unwrap();
            r32.call(&[("x", (&x32).into())], kiln::Accumulate(f32_.view_mut()))
                .unwrap();
        }
        // the kept handles call the compiled code directly (so the C-order fold took that path)
        assert!(r.kept(&[("x", (&x3).into())]).unwrap().is_direct(), "{expr}");
        assert!(r32.kept(&[("x", (&x32).into())]).unwrap().is_direct(), "{expr}");
        let bits = |a: &Array2<f64>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let bits32 = |a: &Array2<f32>| a.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&c), bits(&f), "{expr}");
        assert_eq!(bits32(&c32), bits32(&f32_), "{expr} f32");
        if expr.starts_with("max") {
            assert!(c.iter().all(|&v| v == 0.3), "{expr}");
        }
        // by position, through a handle bound once: the same bits again
        let h = r.prepared(&[("x", (&x3).into())]).unwrap();
        let mut p = Array2::<f64>::from_elem((5, 8), 0.3);
        for _ in 0..2 {
            h.call(&[(&x3).into()], kiln::Accumulate(p.view_mut())).unwrap();
        }
        assert_eq!(bits(&p), bits(&c), "{expr} by position");
    }
    // a handle kept by a call into an array folds as well; a map's kept handle refuses to fold
    let inputs = [("x", ArrayArg::from(x.view()))];
    let r = FusedRunner::compile_text("sum(x, axis=0)").unwrap();
    let mut out = Array1::<f64>::zeros(5);
    r.call(&inputs, out.view_mut()).unwrap();
    assert!(r.kept(&inputs).is_some());
    let mut total = out.clone();
    r.call(&inputs, kiln::Accumulate(total.view_mut())).unwrap();
    assert_eq!(total, out.mapv(|v| v + v));
    let m = FusedRunner::compile_text("x * 2").unwrap();
    let mut y = Array2::<f64>::zeros((6, 5));
    m.call(&inputs, y.view_mut()).unwrap();
    assert!(m.kept(&inputs).is_some());
    let e = m.call(&inputs, kiln::Accumulate(y.view_mut())).unwrap_err();
    assert!(e.to_string().contains("needs a sum, prod, min or max"), "{e}");
}

/// The first call of a signature into a given array binds it (without a run where one kernel's
/// specialisation gives the result's form, else by the run itself): every type, a reduction, a
/// plan of two kernels and Fortran-order inputs give, first call and later ones, the result a
/// fresh call gives; `FreshAll` gives the same on every call.
#[test]
fn a_first_call_into_a_given_array_gives_the_fresh_result() {
    use kiln::kiln_ir::num_complex::Complex64;
    let x = Array2::from_shape_fn((6, 7), |(a, b)| ((a * 7 + b) as f64 * 0.61).sin());
    let mut xf = Array2::<f64>::zeros((6, 7).f()); // the same values in Fortran order
    xf.assign(&x);
    assert!(!xf.is_standard_layout() && xf == x);
    let i = Array2::from_shape_fn((6, 7), |(a, b)| (a * 31 + b * 17) as i64 % 23 - 11);
    let z = Array2::from_shape_fn((6, 7), |(a, b)| Complex64::new(a as f64, -(b as f64) * 0.5));
    fn first<A: kiln::Element + PartialEq + std::fmt::Debug + Clone + Default>(
        expr: &str,
        inputs: &[(&str, ArrayArg<'_>)],
    ) {
        let want = A::take(
            FusedRunner::compile_text(expr)
                .unwrap()
                .call(inputs, Fresh)
                .unwrap(),
        )
        .unwrap();
        let r = FusedRunner::compile_text(expr).unwrap();
        for call in 0..3 {
            let mut out = ndarray::ArrayD::<A>::default(want.shape());
            r.call(inputs, out.view_mut()).unwrap();
            assert_eq!(out, want, "{expr}, call {call}");
        }
        let r = FusedRunner::compile_text(expr).unwrap();
        for call in 0..3 {
            let all = r.call(inputs, FreshAll).unwrap();
            assert_eq!(all.len(), 1);
            let got = A::take(all.into_iter().next().unwrap()).unwrap();
            assert_eq!(got, want, "{expr}, FreshAll call {call}");
        }
    }
    let fortran: ArrayArg<'_> = (&xf).into();
    let r = FusedRunner::compile_text("x * 2 + 1").unwrap();
    assert!(
        r.memory_order(&[&fortran]).is_some(),
        "Fortran inputs run in memory order"
    );
    let c = [("x", (&x).into()), ("i", (&i).into()), ("z", (&z).into())];
    let f = [("x", (&xf).into()), ("i", (&i).into()), ("z", (&z).into())];
    for inputs in [&c, &f] {
        first::<f64>("x * 2 + 1", inputs);
        first::<f64>("sum(x, axis=1)", inputs);
        first::<f64>("x - mean(x, axis=1, keepdims=True)", inputs);
        first::<f64>("sum(x)", inputs);
        first::<bool>("x > 0", inputs);
        first::<i64>("argmax(i, axis=0)", inputs);
        first::<i64>("sum(i, axis=1)", inputs);
        first::<i64>("i * 3 - 1", inputs);
        first::<Complex64>("z * z + i", inputs);
    }
    // a first call's bad output is refused as a later call's, nothing written
    let r = FusedRunner::compile_text("x - mean(x, axis=1, keepdims=True)").unwrap();
    let mut short = Array2::<f64>::from_elem((6, 6), 7.0);
    let e = r.call(&c, short.view_mut()).unwrap_err();
    assert!(e.to_string().contains("has shape"), "{e}");
    assert!(short.iter().all(|&v| v == 7.0));
    let mut typed = Array2::<f32>::from_elem((6, 7), 7.0);
    let e = r.call(&f, typed.view_mut()).unwrap_err();
    assert!(e.to_string().contains("f32"), "{e}");
    assert!(typed.iter().all(|&v| v == 7.0));
}
