//! The scalar semantics of the opcodes and the interpreter's reductions, on special values.

#[path = "../../tests/support/kit.rs"]
mod kit;

use kiln_ir::*;
use kit::same_bits as same;

#[test]
fn unary_special_values() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let cases: &[(UnaryOp, f64, f64)] = &[
        (UnaryOp::Neg, 0.0, -0.0),
        (UnaryOp::Neg, -0.0, 0.0),
        (UnaryOp::Abs, -0.0, 0.0),
        (UnaryOp::Abs, -inf, inf),
        (UnaryOp::Sqrt, -0.0, -0.0),
        (UnaryOp::Sqrt, -1.0, nan),
        (UnaryOp::Sqrt, inf, inf),
        (UnaryOp::Exp, -inf, 0.0),
        (UnaryOp::Exp, 710.0, inf),
        (UnaryOp::Log, 0.0, -inf),
        (UnaryOp::Log, -0.0, -inf),
        (UnaryOp::Log, -1.0, nan),
        (UnaryOp::Sin, -0.0, -0.0),
        (UnaryOp::Sin, inf, nan),
        (UnaryOp::Cos, nan, nan),
        (UnaryOp::Tan, -0.0, -0.0),
        (UnaryOp::Recip, -0.0, -inf),
        (UnaryOp::Recip, inf, 0.0),
        (UnaryOp::Not, 0.0, 1.0),
        (UnaryOp::Not, -0.0, 1.0),
        (UnaryOp::Not, nan, 0.0),
        (UnaryOp::Not, 2.5, 0.0),
    ];
    for &(op, x, want) in cases {
        assert!(
            same(op.eval(x), want),
            "{op}({x:?}) = {:?}, want {want:?}",
            op.eval(x)
        );
        let got32 = op.eval(x as f32) as f64;
        assert!(
            same(got32, want as f32 as f64) || op == UnaryOp::Exp,
            "{op}({x:?}) f32 = {got32:?}"
        );
    }
    assert_eq!(UnaryOp::Exp.eval(100.0f32), f32::INFINITY);
}

#[test]
fn binary_special_values() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let cases: &[(BinaryOp, f64, f64, f64)] = &[
        (BinaryOp::Add, -0.0, -0.0, -0.0),
        (BinaryOp::Add, -0.0, 0.0, 0.0),
        (BinaryOp::Add, inf, -inf, nan),
        (BinaryOp::Div, 1.0, -0.0, -inf),
        (BinaryOp::Div, 0.0, 0.0, nan),
        (BinaryOp::Min, nan, 1.0, nan),
        (BinaryOp::Min, 1.0, nan, nan),
        // NumPy's minimum / maximum: of two equal operands, the second
        (BinaryOp::Min, 0.0, -0.0, -0.0),
        (BinaryOp::Min, -0.0, 0.0, 0.0),
        (BinaryOp::Max, -0.0, 0.0, 0.0),
        (BinaryOp::Max, 0.0, -0.0, -0.0),
        (BinaryOp::Max, -inf, nan, nan),
        (BinaryOp::Pow, nan, 0.0, 1.0),
        (BinaryOp::Pow, nan, -0.0, 1.0),
        // a signalling NaN (glibc's pow gives NaN for it; C99 and NumPy give 1)
        (BinaryOp::Pow, f64::from_bits(0x7ff0_0000_0000_0001), 0.0, 1.0),
        (BinaryOp::Pow, f64::from_bits(0xfff0_0000_0000_0001), -0.0, 1.0),
        (BinaryOp::Pow, 1.0, f64::from_bits(0x7ff0_0000_0000_0001), 1.0),
        (BinaryOp::Pow, 1.0, nan, 1.0),
        (BinaryOp::Pow, -8.0, 1.0 / 3.0, nan),
        (BinaryOp::Pow, -2.0, 3.0, -8.0),
        (BinaryOp::Pow, 0.0, -1.0, inf),
        (BinaryOp::Pow, -0.0, -1.0, -inf),
        (BinaryOp::Lt, nan, 1.0, 0.0),
        (BinaryOp::Ge, inf, inf, 1.0),
        (BinaryOp::Eq, -0.0, 0.0, 1.0),
        (BinaryOp::Eq, nan, nan, 0.0),
        (BinaryOp::Ne, nan, nan, 1.0),
        (BinaryOp::And, nan, 2.0, 1.0),
        (BinaryOp::And, -0.0, 2.0, 0.0),
        (BinaryOp::Or, 0.0, nan, 1.0),
        (BinaryOp::Or, 0.0, -0.0, 0.0),
    ];
    for &(op, a, b, want) in cases {
        let got = op.eval(a, b);
        assert!(same(got, want), "{op}({a:?}, {b:?}) = {got:?}, want {want:?}");
        let got32 = op.eval(a as f32, b as f32) as f64;
        let want32 = if op == BinaryOp::Pow && b == 1.0 / 3.0 {
            nan
        } else {
            want as f32 as f64
        };
        assert!(
            same(got32, want32),
            "f32 {op}({a:?}, {b:?}) = {got32:?}, want {want32:?}"
        );
    }
}

fn kernel_1d(body: impl FnOnce(&mut ExprArena) -> NodeId, n: usize, kind: KernelKind) -> KernelIR {
    let mut arena = ExprArena::new();
    let body = body(&mut arena);
    KernelIR {
        dtype: ElemType::F64,
        inputs: vec![InputDecl {
            name: "x".into(),
            shape: vec![n],
            stored: None,
        }],
        shape: vec![n],
        arena,
        body,
        extra: Vec::new(),
        kind,
    }
}

fn reduce(op: ReduceOp, data: &[f64]) -> Result<Values> {
    let k = kernel_1d(
        |a| a.input(0),
        data.len(),
        KernelKind::Reduce { op, axes: vec![0] },
    );
    interpret(
        &k,
        &[StridedInput {
            data,
            offset: 0,
            strides: vec![1],
        }],
    )
    .map(|t| t.values)
}

#[test]
fn reductions_follow_numpy() {
    let nan = f64::NAN;
    assert_eq!(reduce(ReduceOp::Sum, &[]).unwrap(), Values::F64(vec![0.0]));
    // NumPy 2 sums from +0.0: a sum of -0.0s is +0.0
    assert!(matches!(reduce(ReduceOp::Sum, &[-0.0, -0.0]).unwrap(), Values::F64(v) if v[0].to_bits() == 0),);
    assert_eq!(reduce(ReduceOp::Prod, &[]).unwrap(), Values::F64(vec![1.0]));
    assert_eq!(reduce(ReduceOp::Any, &[]).unwrap(), Values::Bool(vec![false]));
    assert_eq!(reduce(ReduceOp::All, &[]).unwrap(), Values::Bool(vec![true]));
    assert_eq!(
        reduce(ReduceOp::Any, &[0.0, nan]).unwrap(),
        Values::Bool(vec![true])
    );
    assert_eq!(
        reduce(ReduceOp::All, &[1.0, -0.0]).unwrap(),
        Values::Bool(vec![false])
    );
    for op in [ReduceOp::Min, ReduceOp::Max, ReduceOp::ArgMin, ReduceOp::ArgMax] {
        assert!(matches!(reduce(op, &[]), Err(IrError::EmptyReduction { .. })));
    }
    assert!(matches!(reduce(ReduceOp::Max, &[1.0, nan, 3.0]).unwrap(), Values::F64(v) if v[0].is_nan()));
    // ties give the first index; a NaN wins from where it first appears
    assert_eq!(
        reduce(ReduceOp::ArgMin, &[3.0, 1.0, 1.0, 2.0]).unwrap(),
        Values::I64(vec![1])
    );
    assert_eq!(
        reduce(ReduceOp::ArgMax, &[3.0, 5.0, nan, 9.0, nan]).unwrap(),
        Values::I64(vec![2])
    );
    assert_eq!(
        reduce(ReduceOp::ArgMin, &[nan, -1.0]).unwrap(),
        Values::I64(vec![0])
    );
    assert_eq!(
        reduce(ReduceOp::ArgMax, &[0.0, -0.0, 0.0]).unwrap(),
        Values::I64(vec![0])
    );
    assert_eq!(
        reduce(ReduceOp::ArgMin, &[-inf(), -inf()]).unwrap(),
        Values::I64(vec![0])
    );
}

fn inf() -> f64 {
    f64::INFINITY
}

#[test]
fn f32_sums_accumulate_in_f64() {
    // 2^24 + 1 + 1 ... in f32 steps would stall at 2^24; the f64 accumulator does not
    let mut data = vec![1.0f32; 1001];
    data[0] = 16_777_216.0;
    let mut arena = ExprArena::new();
    let body = arena.input(0);
    let k = KernelIR {
        dtype: ElemType::F32,
        inputs: vec![InputDecl {
            name: "x".into(),
            shape: vec![1001],
            stored: None,
        }],
        shape: vec![1001],
        arena,
        body,
        extra: Vec::new(),
        kind: KernelKind::Reduce {
            op: ReduceOp::Sum,
            axes: vec![0],
        },
    };
    let out = interpret(
        &k,
        &[StridedInput {
            data: &data,
            offset: 0,
            strides: vec![1],
        }],
    )
    .unwrap();
    assert_eq!(out.values, Values::F32(vec![16_778_216.0]));
}

#[test]
fn axis_reductions_and_bounds() {
    // a 2x3 input read through strides: reduce each axis
    let data = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let mut arena = ExprArena::new();
    let body = arena.input(0);
    let mut k = KernelIR {
        dtype: ElemType::F64,
        inputs: vec![InputDecl {
            name: "x".into(),
            shape: vec![2, 3],
            stored: None,
        }],
        shape: vec![2, 3],
        arena,
        body,
        extra: Vec::new(),
        kind: KernelKind::Reduce {
            op: ReduceOp::Sum,
            axes: vec![1],
        },
    };
    let input = [StridedInput {
        data: &data,
        offset: 0,
        strides: vec![3, 1],
    }];
    assert_eq!(
        interpret(&k, &input).unwrap().values,
        Values::F64(vec![6.0, 15.0])
    );
    k.kind = KernelKind::Reduce {
        op: ReduceOp::ArgMax,
        axes: vec![0],
    };
    assert_eq!(interpret(&k, &input).unwrap().values, Values::I64(vec![1, 1, 1]));
    // a buffer too short for its strides is refused before anything is read
    let short = [StridedInput {
        data: &data[..5],
        offset: 0,
        strides: vec![3, 1],
    }];
    assert!(matches!(interpret(&k, &short), Err(IrError::BadInput { .. })));
    let offset = [StridedInput {
        data: &data,
        offset: 1,
        strides: vec![3, 1],
    }];
    assert!(matches!(interpret(&k, &offset), Err(IrError::BadInput { .. })));
    // reversed strides reach below the offset
    let reversed = [StridedInput {
        data: &data,
        offset: 5,
        strides: vec![-3, -1],
    }];
    k.kind = KernelKind::Map;
    assert_eq!(
        interpret(&k, &reversed).unwrap().values,
        Values::F64(vec![6.0, 5.0, 4.0, 3.0, 2.0, 1.0])
    );
}

#[test]
fn arena_hash_conses() {
    let mut a = ExprArena::new();
    let x = a.input(0);
    let one = a.literal(1.0);
    let s1 = a.binary(BinaryOp::Add, x, one);
    let s2 = a.binary(BinaryOp::Add, x, one);
    assert_eq!(s1, s2);
    assert_ne!(a.literal(0.0), a.literal(-0.0));
    assert_eq!(a.literal(f64::NAN), a.literal(f64::NAN));
    assert_eq!(a.len(), 6);
}

#[test]
fn numexpr_functions_special_values() {
    let nan = f64::NAN;
    let inf = f64::INFINITY;
    let unary: &[(UnaryOp, f64, f64)] = &[
        (UnaryOp::Floor, -0.5, -1.0),
        (UnaryOp::Floor, -0.0, -0.0),
        (UnaryOp::Ceil, -0.5, -0.0),
        (UnaryOp::Trunc, -2.7, -2.0),
        (UnaryOp::Round, 2.5, 2.0),
        (UnaryOp::Round, 3.5, 4.0),
        (UnaryOp::Round, -0.5, -0.0),
        (UnaryOp::Round, inf, inf),
        (UnaryOp::Sign, -3.0, -1.0),
        (UnaryOp::Sign, -0.0, 0.0),
        (UnaryOp::Sign, nan, nan),
        (UnaryOp::IsNan, nan, 1.0),
        (UnaryOp::IsInf, -inf, 1.0),
        (UnaryOp::IsInf, nan, 0.0),
        (UnaryOp::IsFinite, nan, 0.0),
        (UnaryOp::IsFinite, -1e38, 1.0),
        (UnaryOp::Tanh, -0.0, -0.0),
        (UnaryOp::Tanh, -inf, -1.0),
        (UnaryOp::Expm1, -inf, -1.0),
        (UnaryOp::Log1p, -1.0, -inf),
        (UnaryOp::Log1p, -2.0, nan),
        (UnaryOp::Log2, 0.0, -inf),
        (UnaryOp::Log10, 1000.0, 3.0),
        (UnaryOp::Exp2, 10.0, 1024.0),
        (UnaryOp::Arccosh, -104.0, nan),
        (UnaryOp::Arccosh, 1.0, 0.0),
        (UnaryOp::Arctanh, 1.0, inf),
    ];
    for &(op, x, want) in unary {
        assert!(
            same(op.eval(x), want),
            "{op}({x:?}) = {:?}, want {want:?}",
            op.eval(x)
        );
        let got32 = op.eval(x as f32) as f64;
        assert!(same(got32, want as f32 as f64), "{op}({x:?}) f32 = {got32:?}");
    }
    let binary: &[(BinaryOp, f64, f64, f64)] = &[
        (BinaryOp::Rem, -1.0, 3.0, 2.0),
        (BinaryOp::Rem, 1.0, -3.0, -2.0),
        (BinaryOp::Rem, -0.0, 3.0, 0.0),
        (BinaryOp::Rem, 0.0, -3.0, -0.0),
        (BinaryOp::Rem, 1.0, 0.0, nan),
        (BinaryOp::Rem, -1.0, inf, inf),
        (BinaryOp::Rem, 7.5, 2.0, 1.5),
        (BinaryOp::Fmod, -1.0, 3.0, -1.0),
        (BinaryOp::Fmod, 1.0, -3.0, 1.0),
        (BinaryOp::Fmod, 1.0, inf, 1.0),
        (BinaryOp::Fmod, inf, 1.0, nan),
        (BinaryOp::Fmax, nan, 1.0, 1.0),
        (BinaryOp::Fmax, 1.0, nan, 1.0),
        (BinaryOp::Fmax, nan, nan, nan),
        (BinaryOp::Fmin, nan, -1.0, -1.0),
        (BinaryOp::Fmin, 2.0, 1.0, 1.0),
        (BinaryOp::Copysign, 2.0, -0.0, -2.0),
        (BinaryOp::Copysign, -2.0, nan, 2.0),
        (BinaryOp::Arctan2, 0.0, -0.0, std::f64::consts::PI),
        (BinaryOp::Arctan2, -0.0, -0.0, -std::f64::consts::PI),
        (BinaryOp::Hypot, inf, nan, inf),
        (BinaryOp::Hypot, 3.0, 4.0, 5.0),
    ];
    for &(op, a, b, want) in binary {
        assert!(
            same(op.eval(a, b), want),
            "{op}({a:?}, {b:?}) = {:?}, want {want:?}",
            op.eval(a, b)
        );
        let got32 = op.eval(a as f32, b as f32) as f64;
        assert!(
            same(got32, want as f32 as f64),
            "{op}({a:?}, {b:?}) f32 = {got32:?}"
        );
    }
    for op in [UnaryOp::IsNan, UnaryOp::IsInf, UnaryOp::IsFinite, UnaryOp::Not] {
        assert!(op.is_logical(), "{op}");
    }
    for op in UnaryOp::ALL {
        assert_eq!(UnaryOp::from_name(op.name()), Some(op));
    }
    for op in BinaryOp::ALL {
        assert_eq!(BinaryOp::from_name(op.name()), Some(op));
    }
}

/// `ReduceOp`'s semantics, the one definition the interpreter, the merge of partials and the sign
/// fix of sums use: the identity is neutral bit for bit, merge is the fold's step, the arg rule keeps
/// the first extreme and the first NaN, and a sum finished from its -0.0 identity is NumPy's +0.0.
#[test]
fn reduce_op_identity_merge_and_finish() {
    let values = [-0.0, 0.0, 1.5, -2.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN];
    for op in [ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Min, ReduceOp::Max] {
        for &v in &values {
            assert!(same(op.merge(op.identity(), v), v), "{op:?} identity with {v}");
            assert!(same(op.merge(v, op.identity()), v), "{op:?} {v} with identity");
        }
    }
    assert_eq!(ReduceOp::Any.merge(ReduceOp::Any.identity(), f64::NAN), 1.0);
    assert_eq!(ReduceOp::Any.merge(ReduceOp::Any.identity(), -0.0), 0.0);
    assert_eq!(ReduceOp::All.merge(ReduceOp::All.identity(), 0.0), 0.0);
    assert_eq!(ReduceOp::All.merge(ReduceOp::All.identity(), 2.0), 1.0);
    assert!(same(ReduceOp::Max.merge(1.0, f64::NAN), f64::NAN));
    assert!(same(ReduceOp::Min.merge(f64::NAN, 1.0), f64::NAN));
    // argmin / argmax: strictly better replaces; a NaN replaces and is never replaced
    let (amin, amax) = (ReduceOp::ArgMin, ReduceOp::ArgMax);
    assert!(amin.arg_replaces(1.0, 0.5) && !amin.arg_replaces(1.0, 1.0) && !amin.arg_replaces(1.0, 2.0));
    assert!(amax.arg_replaces(1.0, 2.0) && !amax.arg_replaces(1.0, 1.0));
    assert!(amin.arg_replaces(1.0, f64::NAN) && !amin.arg_replaces(f64::NAN, -5.0));
    assert!(!amax.arg_replaces(f64::NAN, f64::NAN));
    // the sign of sums: from the identity, +0.0 (NumPy starts at +0.0); from a start, as it is
    assert!(same(ReduceOp::Sum.finish(-0.0, false), 0.0));
    assert!(same(ReduceOp::Sum.finish(-0.0, true), -0.0));
    assert!(same(ReduceOp::Prod.finish(-0.0, false), -0.0));
}

#[test]
fn sibling_reductions_give_each_reductions_bits_and_print() {
    // sum(x*2), max(x) and prod(x*2) over the rows of a 2x3 input: one kernel, x*2 one node
    let data = [1.5, -0.0, f64::NAN, 4.0, 5.0, -6.0];
    let mut arena = ExprArena::new();
    let x = arena.input(0);
    let two = arena.literal(2.0);
    let x2 = arena.binary(BinaryOp::Mul, x, two);
    let k = KernelIR {
        dtype: ElemType::F64,
        inputs: vec![InputDecl::new("x", vec![2, 3])],
        shape: vec![2, 3],
        arena,
        body: x2,
        extra: vec![x, x2],
        kind: KernelKind::Siblings {
            ops: vec![ReduceOp::Sum, ReduceOp::Max, ReduceOp::Prod],
            axes: vec![1],
        },
    };
    let input = [StridedInput {
        data: &data,
        offset: 0,
        strides: vec![3, 1],
    }];
    let got = interpret(&k, &input).unwrap();
    assert_eq!(got.shape, vec![3, 2]);
    let mut want = Vec::new();
    for c in 0..3 {
        match interpret(&k.component(c), &input).unwrap().values {
            Values::F64(v) => want.extend(v),
            other => panic!("{other:?}"),
        }
    }
    let Values::F64(got) = got.values else {
        panic!("f64")
    };
    assert!(
        got.iter().zip(&want).all(|(a, b)| same(*a, *b)),
        "{got:?} vs {want:?}"
    );
    assert_eq!(
        k.to_string(),
        "kernel siblings sum,max,prod axes=[1] f64 [2, 3] -> f64 [3, 2]\n  in0 x: [2, 3]\n  \
         %0 = in0\n  %1 = lit 2.0\n  %2 = mul %0 %1\n  out0 %2\n  out1 %0\n  out2 %2\n"
    );
    // one op per root, and values, not truth values
    let mut bad = k.clone();
    bad.extra.pop();
    assert!(bad.validate().is_err());
    let mut bad = k.clone();
    bad.kind = KernelKind::Siblings {
        ops: vec![ReduceOp::Sum, ReduceOp::ArgMax, ReduceOp::Prod],
        axes: vec![1],
    };
    assert!(bad.validate().is_err());
}

#[test]
fn a_kernel_computes_in_a_float_type() {
    // the float type of a kernel is an element type: any other is an error, never a panic
    for t in [
        ElemType::Bool,
        ElemType::I32,
        ElemType::I64,
        ElemType::C128,
        ElemType::Bytes(4),
    ] {
        let mut k = kernel_1d(|a| a.input(0), 3, KernelKind::Map);
        k.dtype = t;
        let e = k.validate().unwrap_err();
        assert!(e.to_string().contains("float32 or float64"), "{e}");
        let data = [1.0, 2.0, 3.0];
        let input = StridedInput {
            data: &data[..],
            offset: 0,
            strides: vec![1],
        };
        assert!(interpret(&k, &[input]).is_err());
    }
}
