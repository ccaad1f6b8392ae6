//! The three front ends produce the same kernels; every user error is an `Err`, never a panic.

use kiln::{Error, Expr, FuseAllExt, FuseExt, FusedRunner, Output, select};
use ndarray::{Array1, ArrayD, IxDyn, array};

fn run1(expr: &Expr, x: &ArrayD<f64>) -> kiln::Result<Output> {
    FusedRunner::compile(expr)?.run(&[("x", x.into())])
}

#[test]
fn builder_text_and_closure_agree() {
    let x = Array1::linspace(-3.0, 3.0, 101);
    let e = Expr::input("x");
    let built = ((2.0f64 * &e + 1.0) * &e - 3.0).maximum(e.sin());
    let from_builder = FusedRunner::compile(&built)
        .unwrap()
        .run(&[("x", (&x).into())])
        .unwrap();
    let from_text = FusedRunner::compile_text("maximum((2*x + 1)*x - 3, sin(x))")
        .unwrap()
        .run(&[("x", (&x).into())])
        .unwrap();
    let from_closure = x
        .fuse(|x| ((2.0f64 * &x + 1.0) * &x - 3.0).maximum(x.sin()))
        .unwrap();
    assert_eq!(from_builder, from_text);
    assert_eq!(from_builder.into_f64(), from_closure.into_dyn());
    // and the same IR
    let p1 = FusedRunner::compile(&built).unwrap().program().clone();
    // float literals: `2` would be a Python int, another node than the builder's `2.0f64`
    let p2 = FusedRunner::compile_text("maximum((2.0*x + 1.0)*x - 3.0, sin(x))")
        .unwrap()
        .program()
        .clone();
    assert_eq!(p1, p2);
}

#[test]
fn shared_values_are_one_node() {
    let x = Expr::input("x");
    let s = x.sin();
    let e = &s * &s + &s;
    let program = FusedRunner::compile(&e).unwrap().program().clone();
    // x, sin, mul, add
    assert_eq!(program.arena.reachable(program.body).len(), 4);
}

#[test]
fn fuse_keeps_dtype_and_dimension() {
    let x = array![[1.0f32, -2.0], [3.0, 4.5]];
    let y: ndarray::Array2<f32> = x.fuse(|x| x.abs() * 2.0).unwrap();
    assert_eq!(y, array![[2.0f32, 4.0], [6.0, 9.0]]);
    // comparisons come back as 1 / 0 in the array's type
    let z = x.fuse(|x| x.gt(2.0)).unwrap();
    assert_eq!(z, array![[0.0f32, 0.0], [1.0, 1.0]]);
    // a reduction changes the shape: fuse_dyn gives it
    let total = x.fuse_dyn(|x| x.sum()).unwrap();
    assert_eq!(total, Output::F32(ndarray::arr0(6.5f32).into_dyn()));
    assert!(matches!(x.fuse(|x| x.sum()), Err(Error::Output(_))));
}

#[test]
fn fuse_on_views_and_into() {
    let base = Array1::from_iter((0..10).map(|v| v as f64));
    let view = base.slice(ndarray::s![..;3]);
    let y = view.fuse(|x| x + 1.0).unwrap();
    assert_eq!(y, array![1.0, 4.0, 7.0, 10.0]);
    let mut out = Array1::zeros(4);
    view.fuse_into(&mut out, |x| &x * &x).unwrap();
    assert_eq!(out, array![0.0, 9.0, 36.0, 81.0]);
    let mut wrong = Array1::zeros(3);
    let e = view.fuse_into(&mut wrong, |x| x).unwrap_err();
    assert!(matches!(e, Error::OutputShape { .. }), "{e}");
    // the error names the methods for a result of another dimension
    assert_eq!(
        e.to_string(),
        "result mismatch: the output has shape [3] but the result has shape [4] (for a result of \
         another dimension use `fuse_reduced`, `fuse_scalar` or `fuse_dyn`)"
    );
    // a comparison into a float array: truth values as 1 / 0, on the first call and the bound
    // ones, into a C-contiguous array and into a view of another layout
    for _ in 0..3 {
        let mut out = Array1::from_elem(4, 7.0);
        view.fuse_into(&mut out, |x| x.gt(4.0)).unwrap();
        assert_eq!(out, array![0.0, 0.0, 1.0, 1.0]);
        let mut long = Array1::from_elem(8, 7.0);
        view.fuse_into(&mut long.slice_mut(ndarray::s![..;2]), |x| x.gt(4.0))
            .unwrap();
        assert_eq!(long, array![0.0, 7.0, 0.0, 7.0, 1.0, 7.0, 1.0, 7.0]);
    }
}

#[test]
fn fuse_all_broadcasts() {
    let a = array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let b = array![10.0, 20.0, 30.0];
    let c = array![[100.0], [200.0]];
    let out: ndarray::Array2<f64> = (&a, &b, &c).fuse_all(|(a, b, c)| a * b + c).unwrap();
    assert_eq!(out, array![[110.0, 140.0, 190.0], [240.0, 300.0, 380.0]]);
    let mut into = ArrayD::zeros(IxDyn(&[2, 3]));
    (&a, &b)
        .fuse_all_into(&mut into, |(a, b)| select(a.gt(2.0), a, b))
        .unwrap();
    assert_eq!(into, array![[10.0, 20.0, 3.0], [4.0, 5.0, 6.0]].into_dyn());
    let d = array![1.0, 2.0, 3.0, 4.0];
    let w = array![0.5, 0.5, 0.5, 0.5];
    let dot = (&d, &w, &d, &w)
        .fuse_all_scalar(|(a, b, c, d)| (a * b + c * d).sum())
        .unwrap();
    assert_eq!(dot, 10.0);
}

#[test]
fn f32_with_f64_gives_f64_and_literals_do_not_widen() {
    let a = array![1.5f32, 2.5];
    let b = array![0.1f64, 0.2];
    let out: Array1<f64> = (&a, &b).fuse_all(|(a, b)| a + b).unwrap();
    assert_eq!(out, array![1.5 + 0.1, 2.5 + 0.2]);
    let runner = FusedRunner::compile_text("a + 0.1").unwrap();
    let out = runner.run(&[("a", (&a).into())]).unwrap();
    assert_eq!(
        out,
        Output::F32(array![1.5f32 + 0.1f32, 2.5f32 + 0.1f32].into_dyn())
    );
}

#[test]
fn no_inputs_gives_numpys_zero_d_type() {
    // integer literals alone are NumPy's int64; a float literal makes it float64
    let run = |text: &str| FusedRunner::compile_text(text).unwrap().run(&[]).unwrap();
    assert_eq!(run("2 ** 10 - 1"), Output::I64(ndarray::arr0(1023).into_dyn()));
    assert_eq!(
        run("2.0 ** 10 - 1"),
        Output::F64(ndarray::arr0(1023.0).into_dyn())
    );
}

#[test]
fn index_expression_reads_positions() {
    let x = ArrayD::<f64>::zeros(IxDyn(&[2, 3]));
    let e = Expr::input("x") + Expr::index(0) * 10.0 + Expr::index(1);
    assert_eq!(
        run1(&e, &x).unwrap().into_f64(),
        array![[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]].into_dyn()
    );
    let bad = Expr::input("x") + Expr::index(2);
    assert!(matches!(run1(&bad, &x), Err(Error::Ir(_))));
}

#[test]
fn user_errors_are_errors() {
    let x = ArrayD::<f64>::zeros(IxDyn(&[3, 0]));
    let e = Expr::input("x");
    // a missing input, a repeated one
    let r = FusedRunner::compile(&(&e + Expr::input("y"))).unwrap();
    assert!(matches!(r.run(&[("x", (&x).into())]), Err(Error::MissingInput { name }) if name == "y"));
    assert!(matches!(
        r.run(&[("x", (&x).into()), ("x", (&x).into())]),
        Err(Error::DuplicateInput { .. })
    ));
    // min over an empty extent has no identity; sum does
    let err = run1(
        &e.clone()
            .reduce(kiln::kiln_ir::ReduceOp::Min, kiln::Axes::Some(vec![1])),
        &x,
    )
    .unwrap_err();
    assert!(err.to_string().contains("zero-size"), "{err}");
    let ok = run1(&e.clone().sum_axis(1), &x).unwrap();
    assert_eq!(ok.into_f64(), ArrayD::zeros(IxDyn(&[3])));
    // along axis 0 the output is empty, so nothing needs an identity
    let ok = run1(
        &e.clone()
            .reduce(kiln::kiln_ir::ReduceOp::Max, kiln::Axes::Some(vec![0])),
        &x,
    )
    .unwrap();
    assert_eq!(ok.shape(), &[0]);
    // axes out of range, repeated, argmin over two axes
    assert!(
        run1(&e.clone().sum_axis(2), &x)
            .unwrap_err()
            .to_string()
            .contains("out of range")
    );
    assert!(run1(&e.clone().sum_axis(-3), &x).is_err());
    let two = kiln::Axes::Some(vec![0, 1]);
    assert!(run1(&e.clone().reduce(kiln::kiln_ir::ReduceOp::ArgMin, two), &x).is_err());
    let rep = kiln::Axes::Some(vec![1, -1]);
    assert!(run1(&e.clone().reduce(kiln::kiln_ir::ReduceOp::Sum, rep), &x).is_err());
    // a reduction inside an expression is a kernel of its own, whose result flows into the next
    let two_kernels = FusedRunner::compile(&(e.clone().sum() + 1.0)).unwrap();
    assert_eq!(two_kernels.pipeline().stages.len(), 2);
    // but not one `Program`
    assert!(matches!(
        kiln::Program::lower(&(e.clone().sum() + 1.0)),
        Err(Error::Unsupported(_))
    ));
    // text errors
    assert!(matches!(
        FusedRunner::compile_text("foo(x)"),
        Err(Error::UnknownFunction { .. })
    ));
    assert!(matches!(
        FusedRunner::compile_text("sin(x, y)"),
        Err(Error::Arity { .. })
    ));
    assert!(matches!(
        FusedRunner::compile_text("x +"),
        Err(Error::Parse { .. })
    ));
}

#[test]
fn size_overflow_is_an_error() {
    let big = [1usize << 40, 1 << 40];
    let shapes = vec![big.to_vec()];
    let program = FusedRunner::compile(&(Expr::input("x") * 2.0))
        .unwrap()
        .program()
        .clone();
    let err = program.kernel(kiln::kiln_ir::ElemType::F64, &shapes).unwrap_err();
    assert!(err.to_string().contains("overflow"), "{err}");
}

#[test]
fn deep_expressions_do_not_overflow_the_stack() {
    let x = ArrayD::from_elem(IxDyn(&[2]), 1.0);
    let mut e = Expr::input("x");
    for _ in 0..50_000 {
        e = e + 1.0;
    }
    let out = run1(&e, &x).unwrap().into_f64();
    assert_eq!(out, ArrayD::from_elem(IxDyn(&[2]), 50_001.0));
}

#[test]
fn run_into_writes_the_callers_array() {
    let runner = FusedRunner::compile_text("a*x + y").unwrap();
    let a = ndarray::arr0(2.0);
    let x = array![1.0, 2.0, 3.0];
    let y = array![0.5, 0.5, 0.5];
    let mut out = ndarray::Array1::<f64>::zeros(3);
    let args = [("a", (&a).into()), ("x", (&x).into()), ("y", (&y).into())];
    runner.run_into(&args, out.view_mut()).unwrap();
    assert_eq!(out, array![2.5, 4.5, 6.5]);
    // twice, through the cached specialisation
    runner.run_into(&args, out.view_mut()).unwrap();
    assert_eq!(out, array![2.5, 4.5, 6.5]);
    let mut wrong_shape = ndarray::Array1::<f64>::zeros(4);
    assert!(matches!(
        runner.run_into(&args, wrong_shape.view_mut()),
        Err(Error::OutputShape { .. })
    ));
    let mut wrong_type = ndarray::Array1::<f32>::zeros(3);
    assert!(matches!(
        runner.run_into(&args, wrong_type.view_mut()),
        Err(Error::Output(_))
    ));
    // a view in another layout is assigned the result
    let mut strided = ndarray::Array1::<f64>::zeros(6);
    runner
        .run_into(&args, strided.slice_mut(ndarray::s![..;2]))
        .unwrap();
    assert_eq!(strided, array![2.5, 0.0, 4.5, 0.0, 6.5, 0.0]);
}
