//! The interpreter's compound and sibling reductions of bool and integer values, against NumPy
//! 2.x's results (computed with `numpy` and written here): the moments of integers in float64 as
//! NumPy's `mean` and `var`, max with sum of exponentials in float64, sibling reductions each
//! component as its reduction alone gives it (int64 words, wrapping).

use kiln_ir::typed::TypedKernel;
use kiln_ir::*;

fn kernel(shape: &[usize], arena: ExprArena, body: NodeId, extra: Vec<NodeId>, kind: KernelKind) -> KernelIR {
    KernelIR {
        dtype: ElemType::F64,
        inputs: vec![InputDecl::new("i", shape.to_vec())],
        shape: shape.to_vec(),
        arena,
        body,
        extra,
        kind,
    }
}

fn c_order<'a, T>(data: &'a [T], shape: &[usize]) -> StridedInput<'a, T> {
    let mut strides = vec![1isize; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1] as isize;
    }
    StridedInput {
        data,
        offset: 0,
        strides,
    }
}

/// `compound(op, axes)` of the one input `x` of type `t`.
fn compound(shape: &[usize], t: ElemType, op: CompoundOp, axes: Vec<usize>) -> TypedKernel {
    let mut a = ExprArena::new();
    let x = a.input(0);
    let k = kernel(shape, a, x, vec![], KernelKind::Compound { op, axes });
    TypedKernel::new(&k, &[t], false).unwrap()
}

fn floats(t: Tensor) -> Vec<f64> {
    match t.values {
        Values::F64(v) => v,
        other => panic!("float64 values, not {other:?}"),
    }
}

fn close(got: f64, want: f64, rel: f64) -> bool {
    got == want || (got - want).abs() <= rel * want.abs()
}

const I: [i64; 15] = [5, -3, 7, 2, 11, 1 << 40, 3, -(1 << 40), 9, 1, 0, 0, 0, 1, -1];

#[test]
fn moments_of_int64_are_numpys_mean_and_var() {
    // np.mean(i, axis) and np.var(i, axis) of the int64 array I (3 x 5)
    let cases: [(Vec<usize>, &[f64], &[f64]); 3] = [
        (vec![1], &[4.4, 2.6, 0.0], &[22.24, 4.835703278458517e+23, 0.4]),
        (
            vec![0],
            &[366503875927.0, 0.0, -366503875923.0, 4.0, 3.6666666666666665],
            &[
                2.686501821353626e+23,
                6.0,
                2.6865018213829458e+23,
                12.666666666666666,
                27.555555555555557,
            ],
        ),
        (vec![0, 1], &[2.3333333333333335], &[1.6119010928195055e+23]),
    ];
    for (axes, mean, var) in cases {
        let t = compound(&[3, 5], ElemType::I64, CompoundOp::Moments, axes.clone());
        assert_eq!(t.output_type(), ElemType::F64);
        let out = evaluate(&t, &[TypedInput::I64(c_order(&I, &[3, 5]))], Start::Identity).unwrap();
        assert_eq!(out.shape[0], 2, "{axes:?}");
        let v = floats(out);
        let (m, s) = v.split_at(mean.len());
        // the mean is NumPy's bit for bit (a float64 sum, exact here, divided by the count)
        assert_eq!(m, mean, "mean over {axes:?}");
        // the variance is Welford's: within a few ulps of NumPy's two passes
        for (g, w) in s.iter().zip(var) {
            assert!(close(*g, *w, 1e-14), "var over {axes:?}: {g:?}, NumPy {w:?}");
        }
    }
}

#[test]
fn moments_of_bool_and_int32_and_float() {
    // np.mean(b, 1), np.var(b, 1)
    let b = [true, false, true, true, false, false, false, true];
    let t = compound(&[2, 4], ElemType::Bool, CompoundOp::Moments, vec![1]);
    let v = floats(evaluate(&t, &[TypedInput::Bool(c_order(&b, &[2, 4]))], Start::Identity).unwrap());
    assert_eq!(v[..2], [0.75, 0.25]);
    assert!(v[2..].iter().all(|&g| close(g, 0.1875, 1e-15)), "{v:?}");
    // int32 values as their float64 (no int32 overflow in the sum: NumPy's mean of [MAX, MAX])
    let i = [i32::MAX, i32::MAX, -7, 8];
    let t = compound(&[2, 2], ElemType::I32, CompoundOp::Moments, vec![1]);
    let v = floats(evaluate(&t, &[TypedInput::I32(c_order(&i, &[2, 2]))], Start::Identity).unwrap());
    assert_eq!(v[..2], [2147483647.0, 0.5]);
    assert!(close(v[2], 0.0, 0.0) && close(v[3], 56.25, 1e-15), "{v:?}");
    // float values stay in their type, bit for bit what the float kernel gives
    let x = [1.5f32, -2.0, 3.25, f32::NAN, 0.0, 1e-3];
    let t = compound(&[2, 3], ElemType::F32, CompoundOp::Moments, vec![1]);
    let typed = evaluate(&t, &[TypedInput::F32(c_order(&x, &[2, 3]))], Start::Identity).unwrap();
    let mut a = ExprArena::new();
    let body = a.input(0);
    let mut k = kernel(
        &[2, 3],
        a,
        body,
        vec![],
        KernelKind::Compound {
            op: CompoundOp::Moments,
            axes: vec![1],
        },
    );
    k.dtype = ElemType::F32;
    let float = interpret(&k, &[c_order(&x, &[2, 3])]).unwrap();
    assert_eq!(format!("{:?}", typed.values), format!("{:?}", float.values));
    // complex values have no compound reduction (numexpr's orderings, and no float64 moments)
    let mut a = ExprArena::new();
    let body = a.input(0);
    let k = kernel(
        &[2],
        a,
        body,
        vec![],
        KernelKind::Compound {
            op: CompoundOp::Moments,
            axes: vec![0],
        },
    );
    assert!(TypedKernel::new(&k, &[ElemType::C128], false).is_err());
}

/// Sibling reductions `ops` over axis 1 of roots `x` and `x * 2` (in the input's type).
fn siblings(shape: &[usize], t: ElemType, ops: Vec<ReduceOp>, double: bool) -> TypedKernel {
    let mut a = ExprArena::new();
    let x = a.input(0);
    let two = a.int(2);
    let x2 = a.binary(BinaryOp::Mul, x, two);
    let extra = (1..ops.len())
        .map(|c| if double && c == ops.len() - 1 { x2 } else { x })
        .collect();
    let k = kernel(shape, a, x, extra, KernelKind::Siblings { ops, axes: vec![1] });
    TypedKernel::new(&k, &[t], false).unwrap()
}

#[test]
fn siblings_of_integers_are_each_reduction_alone() {
    // i32.sum(1), i32.min(1), i32.max(1), (i32 * 2).sum(1): int64 sums of int32, the product
    // wrapping in int32 first
    let i = [i32::MAX, 1, -5, i32::MIN, -1, 7];
    let ops = vec![ReduceOp::Sum, ReduceOp::Min, ReduceOp::Max, ReduceOp::Sum];
    let t = siblings(&[2, 3], ElemType::I32, ops, true);
    assert_eq!(t.output_type(), ElemType::I64);
    assert_eq!(t.component_type(1), Some(ElemType::I32));
    let out = evaluate(&t, &[TypedInput::I32(c_order(&i, &[2, 3]))], Start::Identity).unwrap();
    assert_eq!(out.shape, [4, 2]);
    assert_eq!(
        out.values,
        Values::I64(vec![
            2147483643,
            -2147483642,
            -5,
            -2147483648,
            2147483647,
            7,
            -10,
            12
        ])
    );
    // int64 sums and products wrap, as NumPy's
    let w = [i64::MAX, 1, 3, -4];
    let t = siblings(&[2, 2], ElemType::I64, vec![ReduceOp::Sum, ReduceOp::Prod], false);
    let out = evaluate(&t, &[TypedInput::I64(c_order(&w, &[2, 2]))], Start::Identity).unwrap();
    assert_eq!(out.values, Values::I64(vec![i64::MIN, -1, i64::MAX, -12]));
    // sibling reductions take no start
    let e = evaluate(&t, &[TypedInput::I64(c_order(&w, &[2, 2]))], Start::Initial(0.0));
    assert!(e.is_err());
}

#[test]
fn siblings_of_bools_count_and_take_extremes() {
    // b.sum(1), b.max(1), b.min(1): a count, then truth values as 1 / 0 words
    let b = [true, false, true, true, false, false, false, true];
    let ops = vec![ReduceOp::Sum, ReduceOp::Max, ReduceOp::Min];
    let t = siblings(&[2, 4], ElemType::Bool, ops, false);
    let out = evaluate(&t, &[TypedInput::Bool(c_order(&b, &[2, 4]))], Start::Identity).unwrap();
    assert_eq!(out.values, Values::I64(vec![3, 1, 1, 1, 0, 0]));
    assert_eq!(t.component_type(1), Some(ElemType::Bool));
}

#[test]
fn siblings_of_floats_equal_the_float_kernel() {
    let x = [1.5, -2.0, f64::NAN, 4.0, 0.25, -0.0];
    let mut a = ExprArena::new();
    let body = a.input(0);
    let k = kernel(
        &[2, 3],
        a,
        body,
        vec![body],
        KernelKind::Siblings {
            ops: vec![ReduceOp::Sum, ReduceOp::Max],
            axes: vec![1],
        },
    );
    let t = TypedKernel::new(&k, &[ElemType::F64], false).unwrap();
    let typed = evaluate(&t, &[TypedInput::F64(c_order(&x, &[2, 3]))], Start::Identity).unwrap();
    let float = interpret(&k, &[c_order(&x, &[2, 3])]).unwrap();
    assert_eq!(format!("{:?}", typed.values), format!("{:?}", float.values));
    assert_eq!(typed.shape, [2, 2]);
}
