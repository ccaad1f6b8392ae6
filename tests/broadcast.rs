//! NumPy broadcasting: the plan each input gets, and the values, checked against hand-computed arrays.

use kiln::kiln_ir::{BroadcastPlan, InputLayout, InputPlan, PlanOptions, RowAccess};
use kiln::{Error, Expr, FusedRunner, Output};
use ndarray::{Array, ArrayD, IxDyn, array, s};

fn layout(shape: &[usize]) -> InputLayout {
    InputLayout {
        shape: shape.to_vec(),
        contiguous: true,
        strides: None,
    }
}

fn plan(shape: &[usize], inputs: &[&[usize]], min_row: usize) -> BroadcastPlan {
    let layouts: Vec<_> = inputs.iter().map(|s| layout(s)).collect();
    BroadcastPlan::new(shape, &layouts, PlanOptions { min_row }).unwrap()
}

fn mul(a: &ArrayD<f64>, b: &ArrayD<f64>) -> Output {
    let runner = FusedRunner::compile(&(Expr::input("a") * Expr::input("b"))).unwrap();
    runner.run(&[("a", a.into()), ("b", b.into())]).unwrap()
}

#[test]
fn row_repeated_along_outer_axis() {
    // [1,4] -> [3,4]: the same row re-read for each of the 3 rows, no copy
    let p = plan(&[3, 4], &[&[1, 4], &[3, 4]], 1);
    assert_eq!((p.outer_axes, p.row_len), (1, 4));
    assert_eq!(
        p.inputs[0],
        InputPlan::PerRow {
            row: RowAccess::Run,
            outer_strides: vec![0]
        }
    );
    assert_eq!(p.inputs[1], InputPlan::Contiguous);
    let a = array![[1.0, 2.0, 3.0, 4.0]].into_dyn();
    let b = Array::from_shape_fn((3, 4), |(i, j)| (10 * i + j) as f64).into_dyn();
    let want = array![
        [0.0, 2.0, 6.0, 12.0],
        [10.0, 22.0, 36.0, 52.0],
        [20.0, 42.0, 66.0, 92.0]
    ];
    assert_eq!(mul(&a, &b), Output::F64(want.into_dyn()));
}

#[test]
fn column_constant_along_inner_axis() {
    // [3,1] -> [3,4]: one value splatted per row
    let p = plan(&[3, 4], &[&[3, 1], &[3, 4]], 1);
    assert_eq!(
        p.inputs[0],
        InputPlan::PerRow {
            row: RowAccess::Splat,
            outer_strides: vec![1]
        }
    );
    let a = array![[1.0], [2.0], [3.0]].into_dyn();
    let b = Array::from_shape_fn((3, 4), |(i, j)| (i + j) as f64).into_dyn();
    let want = array![[0.0, 1.0, 2.0, 3.0], [2.0, 4.0, 6.0, 8.0], [6.0, 9.0, 12.0, 15.0]];
    assert_eq!(mul(&a, &b), Output::F64(want.into_dyn()));
}

#[test]
fn vector_to_rank_three() {
    // [4] -> [2,3,4]: a row repeated along two outer axes
    let p = plan(&[2, 3, 4], &[&[4], &[2, 3, 4]], 1);
    assert_eq!(p.outer_axes, 2);
    assert_eq!(
        p.inputs[0],
        InputPlan::PerRow {
            row: RowAccess::Run,
            outer_strides: vec![0, 0]
        }
    );
    let a = array![1.0, 10.0, 100.0, 1000.0].into_dyn();
    let b = ArrayD::from_elem(IxDyn(&[2, 3, 4]), 2.0);
    let out = mul(&a, &b).into_f64();
    assert_eq!(out.shape(), &[2, 3, 4]);
    for i in 0..2 {
        for j in 0..3 {
            assert_eq!(out.slice(s![i, j, ..]).to_vec(), vec![2.0, 20.0, 200.0, 2000.0]);
        }
    }
}

#[test]
fn vector_to_matrix_and_short_rows_flatten() {
    // [3] -> [2,3]; with the default planner, rows of 3 are too short for an outer loop: the planner
    // flattens the iteration space and materialises the broadcast input once
    let p = plan(&[2, 3], &[&[3], &[2, 3]], 64);
    assert_eq!((p.outer_axes, p.row_len), (0, 6));
    assert_eq!(p.inputs, vec![InputPlan::Materialise, InputPlan::Contiguous]);
    let a = array![1.0, 2.0, 3.0].into_dyn();
    let b = array![[1.0, 1.0, 1.0], [-1.0, 0.5, 2.0]].into_dyn();
    let want = array![[1.0, 2.0, 3.0], [-1.0, 1.0, 6.0]];
    assert_eq!(mul(&a, &b), Output::F64(want.into_dyn()));
}

#[test]
fn splat_and_scalars() {
    let p = plan(&[5, 7], &[&[], &[1, 1], &[5, 7]], 1);
    assert_eq!(p.inputs[..2], [InputPlan::Splat, InputPlan::Splat]);
    assert_eq!(p.outer_axes, 0);
    let a = ArrayD::from_elem(IxDyn(&[]), 3.0);
    let b = ArrayD::from_elem(IxDyn(&[2]), 2.0);
    assert_eq!(mul(&a, &b), Output::F64(array![6.0, 6.0].into_dyn()));
}

#[test]
fn both_inputs_stretch() {
    // [3,1] * [1,4] -> [3,4]: the outer product
    let a = array![[1.0], [2.0], [3.0]].into_dyn();
    let b = array![[1.0, 10.0, 100.0, 1000.0]].into_dyn();
    let out = mul(&a, &b).into_f64();
    assert_eq!(
        out,
        Array::from_shape_fn((3, 4), |(i, j)| ((i + 1) * 10usize.pow(j as u32)) as f64).into_dyn()
    );
}

#[test]
fn incompatible_shapes_name_both() {
    let a = ArrayD::<f64>::zeros(IxDyn(&[3]));
    let b = ArrayD::<f64>::zeros(IxDyn(&[2, 4]));
    let runner = FusedRunner::compile(&(Expr::input("a") + Expr::input("b"))).unwrap();
    let err = runner.run(&[("a", (&a).into()), ("b", (&b).into())]).unwrap_err();
    assert!(matches!(err, Error::Ir(_)));
    let msg = err.to_string();
    assert!(msg.contains("[3]") && msg.contains("[2, 4]"), "{msg}");
}

#[test]
fn strided_offset_and_reversed_views() {
    let base = Array::from_shape_fn((4, 6), |(i, j)| (i * 6 + j) as f64);
    let runner = FusedRunner::compile(&(Expr::input("a") + Expr::input("b"))).unwrap();
    // every other column, an offset block, a reversed view, a transpose
    let a = base.slice(s![1.., ..;2]);
    let b = base.slice(s![..3;1, 3..]);
    let out = runner
        .run(&[("a", a.into()), ("b", b.into())])
        .unwrap()
        .into_f64();
    let want = &a + &b;
    assert_eq!(out, want.into_dyn());
    let r = base.slice(s![..;-1, ..;-1]);
    let t = base.t();
    let out = runner
        .run(&[("a", r.into()), ("b", base.view().into())])
        .unwrap()
        .into_f64();
    assert_eq!(out, (&r + &base).into_dyn());
    let tt = base.t().to_owned();
    let out = runner
        .run(&[("a", t.into()), ("b", tt.view().into())])
        .unwrap()
        .into_f64();
    assert_eq!(out, (&tt * 2.0).into_dyn());
    // `to_owned` keeps the transpose's layout: both inputs are read in place in memory order
    let (_, p) = runner
        .explain(&[("a", t.into()), ("b", tt.view().into())])
        .unwrap();
    assert_eq!(p.inputs, [InputPlan::Contiguous, InputPlan::Contiguous]);
    // beside a C array, the plan copies the transpose once
    let tc = base.t().as_standard_layout().into_owned();
    let (_, p) = runner
        .explain(&[("a", t.into()), ("b", tc.view().into())])
        .unwrap();
    assert_eq!(p.inputs[0], InputPlan::Materialise);
    let out = runner
        .run(&[("a", t.into()), ("b", tc.view().into())])
        .unwrap()
        .into_f64();
    assert_eq!(out, (&tc * 2.0).into_dyn());
}

#[test]
fn empty_arrays_broadcast() {
    let a = ArrayD::<f64>::zeros(IxDyn(&[0, 3]));
    let b = ArrayD::<f64>::zeros(IxDyn(&[3]));
    let out = mul(&a, &b);
    assert_eq!(out.shape(), &[0, 3]);
    let c = ArrayD::<f64>::zeros(IxDyn(&[1, 0]));
    let d = ArrayD::<f64>::zeros(IxDyn(&[3, 0]));
    assert_eq!(mul(&c, &d).shape(), &[3, 0]);
}
