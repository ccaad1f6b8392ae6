//! kiln-jit's typed kernels through its own API ([`kiln_jit::compile_typed`]), against kiln-ir's
//! typed interpreter: a map, a reduction and a scan over int32, int64 and bool buffers at every
//! length around the vector width, splat and strided inputs, and the checks that refuse buffers that
//! do not fit the code (an error, never a read out of bounds). The operator-by-operator parity over
//! every type pair is `tests/typed_jit.rs` (through the front ends).

use kiln_ir::typed::{TypedInput, TypedKernel, interpret};
use kiln_ir::*;
use kiln_jit::typed::{kernel_of, lanes_dtype, plan, why_not};
use kiln_jit::{BoundKernel, InputRef, RunConfig, Schedule, Stored, TypedView, Workspace};

fn kernel(
    arena: ExprArena,
    body: NodeId,
    shapes: &[Vec<usize>],
    shape: &[usize],
    kind: KernelKind,
) -> KernelIR {
    KernelIR {
        dtype: DType::F64,
        inputs: shapes
            .iter()
            .enumerate()
            .map(|(i, s)| InputDecl::new(format!("in{i}"), s.clone()))
            .collect(),
        shape: shape.to_vec(),
        arena,
        body,
        extra: vec![],
        kind,
    }
}

fn whole<'a, T>(data: &'a [T], shape: &[usize], of: &[usize]) -> StridedInput<'a, T> {
    StridedInput {
        data,
        offset: 0,
        strides: kiln_ir::shape::broadcast_strides(shape, &kiln_ir::shape::c_strides(shape), of).unwrap(),
    }
}

/// `(a * 3 + b) % 7` over int32 `a` and `b` (`b` splat where `splat_b`).
fn mod7(n: usize, splat_b: bool) -> TypedKernel {
    let mut a = ExprArena::new();
    let (x, y, three, seven) = (a.input(0), a.input(1), a.int(3), a.int(7));
    let m = a.binary(BinaryOp::Mul, x, three);
    let s = a.binary(BinaryOp::Add, m, y);
    let body = a.binary(BinaryOp::Rem, s, seven);
    let b_shape = if splat_b { vec![1] } else { vec![n] };
    let k = kernel(a, body, &[vec![n], b_shape], &[n], KernelKind::Map);
    TypedKernel::new(&k, &[ElemType::I32, ElemType::I32], false).unwrap()
}

/// The typed kernel `t` compiled by [`kiln_jit::compile_typed`] (`scalar`: one lane) for inputs laid
/// out as `layouts` (None: C-contiguous of the declared shape), and bound.
fn bind(t: &TypedKernel, layouts: Option<Vec<InputLayout>>, scalar: bool) -> BoundKernel {
    let k = kernel_of(t);
    let layouts = layouts.unwrap_or_else(|| {
        k.inputs
            .iter()
            .map(|d| InputLayout::contiguous(&d.shape))
            .collect()
    });
    let p = plan(&k, &layouts).unwrap().expect("every input read in place");
    let schedule = if scalar {
        Schedule::scalar()
    } else {
        Schedule::for_kernel(&k)
    };
    kiln_jit::compile_typed(&k, &p, schedule)
        .unwrap()
        .bind(&k, &p)
        .unwrap()
}

/// A run of `code` (as [`bind`] made it, of float dtype `dtype`) over `ins`, with four units' worth of
/// threads and small chunks.
fn run(code: &BoundKernel, dtype: DType, ins: &[Stored<'_>]) -> kiln_jit::Result<Values> {
    let cfg = RunConfig {
        min_chunk: 64,
        max_units: 4,
        ..Default::default()
    };
    let mut ws = Workspace::new();
    match dtype {
        DType::F64 => {
            let refs: Vec<InputRef<'_, f64>> = ins
                .iter()
                .map(|s| match s {
                    Stored::F64(x) => InputRef::Slice(x),
                    other => InputRef::Stored(other.view()),
                })
                .collect();
            code.run_with(&refs, &cfg, &mut ws).map(|t| t.values)
        }
        DType::F32 => {
            let refs: Vec<InputRef<'_, f32>> = ins
                .iter()
                .map(|s| match s {
                    Stored::F32(x) => InputRef::Slice(x),
                    other => InputRef::Stored(other.view()),
                })
                .collect();
            code.run_with(&refs, &cfg, &mut ws).map(|t| t.values)
        }
    }
}

#[test]
fn a_map_at_every_length_around_the_vector_width() {
    for splat_b in [false, true] {
        for n in [0usize, 1, 2, 3, 4, 5, 7, 8, 9, 17, 1000] {
            let t = mod7(n, splat_b);
            assert_eq!(why_not(&t), None);
            // 32-bit values: float32's four lanes
            assert_eq!(lanes_dtype(&t), DType::F32);
            let a: Vec<i32> = (0..n as i32).map(|k| k.wrapping_mul(-1_640_531_527)).collect();
            let b: Vec<i32> = if splat_b {
                vec![-5]
            } else {
                (0..n as i32).map(|k| k - 3).collect()
            };
            let want = interpret(
                &t,
                &[
                    TypedInput::I32(whole(&a, &[n], &[n])),
                    TypedInput::I32(whole(&b, &[b.len()], &[n])),
                ],
                Start::Identity,
            )
            .unwrap();
            for scalar in [false, true] {
                let code = bind(&t, None, scalar);
                let got = run(&code, DType::F32, &[Stored::I32(&a), Stored::I32(&b)]).unwrap();
                assert_eq!(want.values, got, "n = {n}, splat {splat_b}, scalar {scalar}");
            }
        }
    }
}

#[test]
fn a_masked_sum_and_a_scan_of_int64_and_bool() {
    for n in [0usize, 1, 2, 3, 5, 64, 999] {
        let k: Vec<i64> = (0..n as i64)
            .map(|v| v.wrapping_mul(0x5851_f42d_4c95_7f2d))
            .collect();
        let p: Vec<bool> = (0..n).map(|v| v % 3 != 1).collect();
        let mut a = ExprArena::new();
        let (pi, ki, zero) = (a.input(0), a.input(1), a.int(0));
        let body = a.select(pi, ki, zero);
        for kind in [
            KernelKind::Reduce {
                op: ReduceOp::Sum,
                axes: vec![0],
            },
            KernelKind::Reduce {
                op: ReduceOp::ArgMax,
                axes: vec![0],
            },
            KernelKind::Scan(kiln_ir::scan::Scan::new(kiln_ir::scan::ScanOp::Prod, Some(0))),
            KernelKind::Scan(
                kiln_ir::scan::Scan::new(kiln_ir::scan::ScanOp::Sum, Some(0)).with_initial(Some(-3.0)),
            ),
        ] {
            if n == 0
                && matches!(
                    kind,
                    KernelKind::Reduce {
                        op: ReduceOp::ArgMax,
                        ..
                    }
                )
            {
                continue;
            }
            let kr = kernel(a.clone(), body, &[vec![n], vec![n]], &[n], kind.clone());
            let t = TypedKernel::new(&kr, &[ElemType::Bool, ElemType::I64], false).unwrap();
            let want = interpret(
                &t,
                &[
                    TypedInput::Bool(whole(&p, &[n], &[n])),
                    TypedInput::I64(whole(&k, &[n], &[n])),
                ],
                Start::Identity,
            )
            .unwrap();
            for scalar in [false, true] {
                let code = bind(&t, None, scalar);
                let got = run(&code, DType::F64, &[Stored::Bool(&p), Stored::I64(&k)]).unwrap();
                assert_eq!(want.values, got, "{kind:?}, n = {n}, scalar {scalar}");
            }
        }
    }
}

#[test]
fn buffers_that_do_not_fit_the_code_are_errors() {
    let t = mod7(8, false);
    let code = bind(&t, None, false);
    let (a, short) = ([1i32; 8], [3i32; 7]);
    let wide = [1i64; 8];
    let e = run(&code, DType::F32, &[Stored::I32(&a), Stored::I32(&short)]).unwrap_err();
    assert!(e.to_string().contains("input 1"), "{e}");
    let e = run(&code, DType::F32, &[Stored::I32(&a), Stored::I64(&wide)]).unwrap_err();
    assert!(e.to_string().contains("input 1"), "{e}");
    let e = run(&code, DType::F32, &[Stored::I32(&a)]).unwrap_err();
    assert!(e.to_string().contains('1') && e.to_string().contains('2'), "{e}");
    // a float64 run of a float32-lane kernel
    let e = run(&code, DType::F64, &[Stored::I32(&a), Stored::I32(&a)]).unwrap_err();
    assert!(matches!(e, kiln_jit::JitError::DType { .. }), "{e}");
    // a kernel the code generator declines is an error naming why, not a panic
    let mut ar = ExprArena::new();
    let body = ar.input(0);
    let scan = kiln_ir::scan::Scan::new(kiln_ir::scan::ScanOp::Sum, None).with_initial(Some(2.5));
    let k = kernel(ar, body, &[vec![4]], &[4], KernelKind::Scan(scan));
    let t = TypedKernel::new(&k, &[ElemType::I32], false).unwrap();
    let k = kernel_of(&t);
    let layouts = [InputLayout::contiguous(&[4])];
    let p = plan(&k, &layouts).unwrap().unwrap();
    let Err(e) = kiln_jit::compile_typed(&k, &p, Schedule::for_kernel(&k)) else {
        panic!("a scan whose initial value int64 cannot hold compiled")
    };
    assert!(
        e.to_string()
            .contains("the scan cumsum with an initial value its accumulator does not hold"),
        "{e}"
    );
}

#[test]
fn strided_views_are_read_in_place_and_checked() {
    // `(a * 3 + b) % 7` with `a` a reversed view (strides [-1] over 8 points), read in place; a
    // view of other strides, a contiguous buffer given for the view, and a short buffer are errors
    // (never a read out of bounds)
    let t = mod7(8, false);
    let layouts = vec![
        InputLayout {
            shape: vec![8],
            contiguous: false,
            strides: Some(vec![-1]),
        },
        InputLayout::contiguous(&[8]),
    ];
    let data: Vec<i32> = (0..16i32)
        .map(|k| k.wrapping_mul(1_000_000_007).wrapping_sub(5))
        .collect();
    let base = ndarray::ArrayView1::from(&data[..]);
    let b: Vec<i32> = (0..8).map(|k| k - 3).collect();
    let reversed = base.slice(ndarray::s![..8;-1]).into_dyn();
    let copy: Vec<i32> = reversed.iter().copied().collect();
    let want = interpret(
        &t,
        &[
            TypedInput::I32(whole(&copy, &[8], &[8])),
            TypedInput::I32(whole(&b, &[8], &[8])),
        ],
        Start::Identity,
    )
    .unwrap();
    for scalar in [false, true] {
        let code = bind(&t, Some(layouts.clone()), scalar);
        let got = run(
            &code,
            DType::F32,
            &[Stored::View(TypedView::I32(reversed.clone())), Stored::I32(&b)],
        )
        .unwrap();
        assert_eq!(want.values, got, "scalar {scalar}");
        let stepped = base.slice(ndarray::s![..;-2]).into_dyn();
        assert!(
            run(
                &code,
                DType::F32,
                &[Stored::View(TypedView::I32(stepped)), Stored::I32(&b)]
            )
            .is_err()
        );
        let e = run(
            &code,
            DType::F32,
            &[Stored::I32(&data[..8]), Stored::I32(&b[..4])],
        )
        .unwrap_err();
        assert!(e.to_string().contains("input"), "{e}");
    }
}

/// Kernels built by hand in forms the typing never makes (operands of two types, an int32 `where`
/// condition, `not` of an int64) are refused by `compile_typed`, never compiled into wrong code or a
/// panic.
#[test]
fn hand_made_kernels_of_mismatched_types_are_refused() {
    let build = |body: Body| {
        let mut a = ExprArena::new();
        let root = body(&mut a);
        let mut k = kernel(a, root, &[vec![9], vec![9]], &[9], KernelKind::Map);
        k.inputs[0].stored = Some(ElemType::I32);
        k.inputs[1].stored = Some(ElemType::I64);
        k
    };
    type Body = fn(&mut ExprArena) -> NodeId;
    let cases: [(Body, &str); 3] = [
        (
            |a| {
                let (x, y) = (a.input(0), a.input(1));
                let ny = a.unary(UnaryOp::Neg, y);
                a.select(x, y, ny)
            },
            "a where of a int32 condition",
        ),
        (
            |a| {
                let y = a.input(1);
                a.unary(UnaryOp::Not, y)
            },
            "not of int64",
        ),
        (
            |a| {
                let (x, y) = (a.input(0), a.input(1));
                a.binary(BinaryOp::Add, x, y)
            },
            "of int32 and int64",
        ),
    ];
    for (body, why) in cases {
        let k = build(body);
        let layouts: Vec<_> = k
            .inputs
            .iter()
            .map(|d| InputLayout::contiguous(&d.shape))
            .collect();
        let p = plan(&k, &layouts).unwrap().unwrap();
        let Err(e) = kiln_jit::compile_typed(&k, &p, Schedule::for_kernel(&k)) else {
            panic!("a kernel of mismatched types compiled ({why})")
        };
        assert!(e.to_string().contains(why), "{e}");
    }
}
