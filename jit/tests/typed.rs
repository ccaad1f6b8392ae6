//! kiln-jit's typed code generator through its own API (`kiln_jit::typed`), against kiln-ir's typed
//! interpreter: a map, a reduction and a scan over int32, int64 and bool buffers at every length
//! around the vector width, splat inputs, and the checks that refuse buffers that do not fit the
//! code (an error, never a read out of bounds). The operator-by-operator parity over every type pair
//! is `tests/typed_jit.rs` (through the front ends).

use kiln_ir::typed::{TypedInput, TypedKernel, interpret};
use kiln_ir::*;
use kiln_jit::typed::{TypedSliceMut, compile_typed, lanes_of, why_not};
use kiln_jit::{Serial, Stored};

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
            .map(|(i, s)| InputDecl {
                name: format!("in{i}"),
                shape: s.clone(),
                stored: None,
            })
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

#[test]
fn a_map_at_every_length_around_the_vector_width() {
    for splat_b in [false, true] {
        for n in [0usize, 1, 2, 3, 4, 5, 7, 8, 9, 17, 1000] {
            let t = mod7(n, splat_b);
            assert_eq!(why_not(&t), None);
            assert_eq!(lanes_of(&t), 4);
            let splat = [false, splat_b];
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
                let code = compile_typed(&t, &splat, scalar, false).unwrap();
                let mut out = vec![0i32; n];
                code.run_map(
                    &[Stored::I32(&a), Stored::I32(&b)],
                    TypedSliceMut::I32(&mut out),
                    3,
                    &Serial,
                )
                .unwrap();
                assert_eq!(
                    want.values,
                    Values::I32(out),
                    "n = {n}, splat {splat_b}, scalar {scalar}"
                );
            }
        }
    }
}

/// The typed reduction `t` run by the main code generator ([`kiln_jit::compile_typed`]) over
/// C-contiguous inputs, with four threads' worth of units and small chunks.
fn main_reduce(t: &TypedKernel, ins: &[Stored<'_>]) -> Values {
    let mut k = kiln_ir::KernelIR {
        dtype: kiln_ir::DType::F64,
        ..t.kernel.clone()
    };
    for (d, &ty) in k.inputs.iter_mut().zip(&t.input_types) {
        d.stored = (ty != ElemType::F64).then_some(ty);
    }
    let layouts: Vec<_> = k
        .inputs
        .iter()
        .map(|d| kiln_ir::InputLayout::contiguous(&d.shape))
        .collect();
    let plan = kiln_ir::BroadcastPlan::new(&k.shape, &layouts, kiln_ir::PlanOptions::default()).unwrap();
    let code = kiln_jit::compile_typed(&k, &plan, kiln_jit::Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &plan)
        .unwrap();
    let refs: Vec<kiln_jit::InputRef<'_, f64>> =
        ins.iter().map(|s| kiln_jit::InputRef::Stored(s.view())).collect();
    let cfg = kiln_jit::RunConfig {
        min_chunk: 64,
        max_units: 4,
        ..Default::default()
    };
    code.run_with(&refs, &cfg, &mut kiln_jit::Workspace::new())
        .unwrap()
        .values
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
            KernelKind::Scan(kiln_ir::scan::Scan::new(kiln_ir::scan::ScanOp::Prod, Some(0))),
        ] {
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
            let ins = [Stored::Bool(&p), Stored::I64(&k)];
            let got = match kind {
                KernelKind::Reduce { .. } => main_reduce(&t, &ins),
                _ => {
                    let code = compile_typed(&t, &[false, false], false, false).unwrap();
                    let mut out = vec![0i64; n];
                    code.run_scan(&ins, &[n], TypedSliceMut::I64(&mut out), 4, &Serial)
                        .unwrap();
                    Values::I64(out)
                }
            };
            assert_eq!(want.values, got, "n = {n}");
        }
    }
}

#[test]
fn buffers_that_do_not_fit_the_code_are_errors() {
    let t = mod7(8, false);
    let code = compile_typed(&t, &[false, false], false, false).unwrap();
    let (a, b, short) = ([1i32; 8], [2i32; 8], [3i32; 7]);
    let wide = [1i64; 8];
    let mut out = [0i32; 8];
    let run = |ins: &[Stored<'_>], out: TypedSliceMut<'_>| code.run_map(ins, out, 1, &Serial);
    let e = run(
        &[Stored::I32(&a), Stored::I32(&short)],
        TypedSliceMut::I32(&mut out),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("input 1 (a int32 input of a typed kernel): 7 elements where the kernel reads 8"),
        "{e}"
    );
    let e = run(
        &[Stored::I32(&a), Stored::I64(&wide)],
        TypedSliceMut::I32(&mut out),
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("input 1 (a int32 input of a typed kernel): int64 given"),
        "{e}"
    );
    let e = run(&[Stored::I32(&a)], TypedSliceMut::I32(&mut out)).unwrap_err();
    assert!(e.to_string().contains("1 inputs given for a kernel of 2"), "{e}");
    let mut out64 = [0i64; 8];
    let e = run(
        &[Stored::I32(&a), Stored::I32(&b)],
        TypedSliceMut::I64(&mut out64),
    )
    .unwrap_err();
    assert!(e.to_string().contains("a int64 output for a map of int32"), "{e}");
    // a kernel the code generator declines is an error naming why, not a panic
    let mut ar = ExprArena::new();
    let body = ar.input(0);
    let scan = kiln_ir::scan::Scan::new(kiln_ir::scan::ScanOp::Sum, None).with_initial(Some(2.5));
    let k = kernel(ar, body, &[vec![4]], &[4], KernelKind::Scan(scan));
    let t = TypedKernel::new(&k, &[ElemType::I32], false).unwrap();
    let e = compile_typed(&t, &[false], false, false).unwrap_err();
    assert!(
        e.to_string()
            .contains("the scan cumsum with an initial value its accumulator does not hold"),
        "{e}"
    );
}

#[test]
fn strided_reads_are_checked_before_the_call() {
    // `(a * 3 + b) % 7` with `a` read in place backwards (strides [-1] over 8 points): a view of
    // those strides runs and agrees with the interpreter; a buffer the offsets leave, a view of other
    // strides, a strided read's view given for a contiguous read, and the wrong point count are
    // errors (never a read out of bounds)
    use kiln_jit::typed::{TypedRead, TypedView, compile_typed_reads};
    let t = mod7(8, false);
    let reads = [TypedRead::Strided(vec![-1]), TypedRead::Flat];
    let data: Vec<i32> = (0..16i32)
        .map(|k| k.wrapping_mul(1_000_000_007).wrapping_sub(5))
        .collect();
    let base = ndarray::ArrayView1::from(&data[..]);
    let b: Vec<i32> = (0..8).map(|k| k - 3).collect();
    for scalar in [false, true] {
        let code = compile_typed_reads(&t, &reads, scalar, false).unwrap();
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
        let mut out = [0i32; 8];
        code.run_map(
            &[Stored::View(TypedView::I32(reversed.clone())), Stored::I32(&b)],
            TypedSliceMut::I32(&mut out),
            1,
            &Serial,
        )
        .unwrap();
        assert_eq!(want.values, Values::I32(out.to_vec()), "scalar {scalar}");
        let run = |ins: &[Stored<'_>], n: usize| {
            let mut out = vec![0i32; n];
            code.run_map(ins, TypedSliceMut::I32(&mut out), 1, &Serial)
        };
        // a buffer read from its start backwards: offsets -7..=0
        let e = run(&[Stored::I32(&data[..8]), Stored::I32(&b)], 8).unwrap_err();
        assert!(e.to_string().contains("reads offsets -7..=0"), "{e}");
        let stepped = base.slice(ndarray::s![..;-2]).into_dyn();
        let e = run(&[Stored::View(TypedView::I32(stepped)), Stored::I32(&b)], 8).unwrap_err();
        assert!(e.to_string().contains("where the code reads [-1]"), "{e}");
        let e = run(
            &[
                Stored::View(TypedView::I32(reversed.clone())),
                Stored::View(TypedView::I32(reversed.clone())),
            ],
            8,
        )
        .unwrap_err();
        assert!(
            e.to_string()
                .contains("a view given for an input the code reads contiguously"),
            "{e}"
        );
        let e = run(
            &[
                Stored::View(TypedView::I32(reversed.clone())),
                Stored::I32(&b[..4]),
            ],
            4,
        )
        .unwrap_err();
        assert!(e.to_string().contains("4 points for a strided read"), "{e}");
    }
    let e = compile_typed_reads(
        &t,
        &[TypedRead::Strided(vec![1, 1]), TypedRead::Flat],
        false,
        false,
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("input 0 read with strides for 2 axes in a kernel of 1"),
        "{e}"
    );
}
