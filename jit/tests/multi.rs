//! Maps of several outputs (`KernelIR::extra`): one compiled loop stores every output, bit for bit what
//! `kiln_ir::interpret_outputs` gives, for every schedule, both dtypes, tails and broadcasts; outputs
//! read in place from inputs (`InputRef::Output`) where that is safe, and refused where it is not.

mod common;

use common::*;
use kiln_ir::*;
use kiln_jit::{Elem, InputRef, OutSlice, Part, RunConfig, Schedule};

/// `out0 = x*y + 1`, `out1 = sqrt(x*y) - z`, `out2 = where(x > z, x*y, -x)`: `x*y` is shared by all
/// three; `z` is broadcast along the rows.
fn three_outputs(dtype: ElemType, shape: &[usize]) -> KernelIR {
    let mut a = ExprArena::new();
    let (x, y, z) = (a.input(0), a.input(1), a.input(2));
    let xy = a.binary(BinaryOp::Mul, x, y);
    let one = a.literal(1.0);
    let out0 = a.binary(BinaryOp::Add, xy, one);
    let r = a.unary(UnaryOp::Sqrt, xy);
    let out1 = a.binary(BinaryOp::Sub, r, z);
    let gt = a.binary(BinaryOp::Gt, x, z);
    let nx = a.unary(UnaryOp::Neg, x);
    let out2 = a.select(gt, xy, nx);
    let zshape: Vec<usize> = shape.last().map(|&d| vec![d]).unwrap_or_default();
    let mut k = kernel(dtype, &[shape, shape, &zshape], a, out0, KernelKind::Map);
    k.extra = vec![out1, out2];
    k
}

fn data<T: Elem>(k: &KernelIR, rng: &mut Rng) -> Vec<Vec<T>> {
    k.inputs
        .iter()
        .map(|d| gen_data::<T>(rng, d.shape.iter().product(), Data::Special))
        .collect()
}

fn oracle_all<T: Elem>(k: &KernelIR, data: &[Vec<T>]) -> Vec<Vec<f64>> {
    (0..k.n_outputs())
        .map(|o| oracle(&k.output(o), data).unwrap().values.to_f64())
        .collect()
}

fn run_all<T: Elem>(k: &KernelIR, sched: Schedule, data: &[Vec<T>]) -> Vec<Vec<f64>> {
    let p = plan(k, 1);
    let n: usize = k.shape.iter().product();
    let refs: Vec<&[T]> = data.iter().map(|d| d.as_slice()).collect();
    let mut outs: Vec<Vec<T>> = (0..k.n_outputs()).map(|_| vec![T::ZERO; n]).collect();
    let mut slices: Vec<&mut [T]> = outs.iter_mut().map(|o| o.as_mut_slice()).collect();
    let code = kiln_jit::compile(k, &p, sched).unwrap();
    code.run_into_many(k, &p, &refs, &mut slices).unwrap();
    outs.iter()
        .map(|o| o.iter().map(|v| v.to_f64()).collect())
        .collect()
}

fn parity<T: Elem>(dtype: ElemType) {
    let mut rng = Rng::new(12);
    let scheds = [
        Schedule::scalar(),
        Schedule::simd(dtype, 1, 1),
        Schedule::simd(dtype, 4, 4),
        Schedule::simd(dtype, 2, 3),
    ];
    let shapes: [&[usize]; 11] = [
        &[0],
        &[1],
        &[2],
        &[3],
        &[5],
        &[7],
        &[17],
        &[100],
        &[3, 5],
        &[4, 9],
        &[2, 0],
    ];
    for shape in shapes {
        let k = three_outputs(dtype, shape);
        let d = data::<T>(&k, &mut rng);
        let want = oracle_all(&k, &d);
        for sched in scheds {
            let got = run_all(&k, sched, &d);
            for o in 0..3 {
                assert!(
                    bits_equal(&got[o], &want[o]),
                    "{dtype} {shape:?} {sched:?} output {o}: {:?} vs {:?}",
                    got[o],
                    want[o]
                );
            }
        }
    }
}

#[test]
fn three_outputs_match_the_interpreter_f64() {
    parity::<f64>(ElemType::F64);
}

#[test]
fn three_outputs_match_the_interpreter_f32() {
    parity::<f32>(ElemType::F32);
}

#[test]
fn shared_subexpressions_are_one_node_in_the_text_form() {
    let k = three_outputs(ElemType::F64, &[4]);
    let text = k.to_string();
    assert_eq!(text.matches("mul").count(), 1, "{text}");
    assert!(
        text.contains("out0 %") && text.contains("out1 %") && text.contains("out2 %"),
        "{text}"
    );
}

/// `p = p + v*dt; v = v*0.99 + g*dt` over `n` points: `dt` and `g` are scalars.
fn particle(dtype: ElemType, n: usize, p_shape: &[usize]) -> KernelIR {
    let mut a = ExprArena::new();
    let (p, v, dt, g) = (a.input(0), a.input(1), a.input(2), a.input(3));
    let vdt = a.binary(BinaryOp::Mul, v, dt);
    let p1 = a.binary(BinaryOp::Add, p, vdt);
    let damp = a.literal(0.99);
    let vd = a.binary(BinaryOp::Mul, v, damp);
    let gdt = a.binary(BinaryOp::Mul, g, dt);
    let v1 = a.binary(BinaryOp::Add, vd, gdt);
    let mut k = kernel(dtype, &[p_shape, &[n], &[], &[]], a, p1, KernelKind::Map);
    k.extra = vec![v1];
    k
}

fn in_place<T: Elem>(dtype: ElemType) {
    let mut rng = Rng::new(7);
    for n in [0, 1, 3, 4, 5, 8, 9, 64, 67] {
        let k = particle(dtype, n, &[n]);
        let d = data::<T>(&k, &mut rng);
        let want = oracle_all(&k, &d);
        for sched in [
            Schedule::scalar(),
            Schedule::simd(dtype, 4, 4),
            Schedule::simd(dtype, 2, 1),
        ] {
            let p = plan(&k, 1);
            let code = kiln_jit::compile(&k, &p, sched).unwrap().bind(&k, &p).unwrap();
            let (mut pos, mut vel) = (d[0].clone(), d[1].clone());
            let ins = [
                InputRef::Output(0),
                InputRef::Output(1),
                InputRef::Slice(&d[2][..]),
                InputRef::Slice(&d[3][..]),
            ];
            code.run_into_many(
                &ins,
                &mut [T::out_slice(&mut pos), T::out_slice(&mut vel)],
                &RunConfig::default(),
            )
            .unwrap();
            let got = [pos, vel].map(|o| o.iter().map(|v| v.to_f64()).collect::<Vec<f64>>());
            for o in 0..2 {
                assert!(
                    bits_equal(&got[o], &want[o]),
                    "{dtype} n={n} {sched:?} output {o}"
                );
            }
        }
    }
}

#[test]
fn outputs_update_their_inputs_in_place_f64() {
    in_place::<f64>(ElemType::F64);
}

#[test]
fn outputs_update_their_inputs_in_place_f32() {
    in_place::<f32>(ElemType::F32);
}

#[test]
fn a_broadcast_input_is_not_updated_in_place() {
    // p of one element broadcast over 8 points: each point would read p after another wrote it
    let k = particle(ElemType::F64, 8, &[1]);
    let p = plan(&k, 1);
    let code = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &p)
        .unwrap();
    let (dt, g) = ([0.5], [1.0]);
    let mut outs = [vec![0.0; 8], vec![0.0; 8]];
    let [o0, o1] = &mut outs;
    let ins = [
        InputRef::Output(0),
        InputRef::Slice(&[1.0; 8][..]),
        InputRef::Slice(&dt[..]),
        InputRef::Slice(&g[..]),
    ];
    let err = code
        .run_into_many(
            &ins,
            &mut [OutSlice::F64(o0), OutSlice::F64(o1)],
            &RunConfig::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("read in place only by a map"), "{err}");
}

#[test]
fn the_output_count_and_lengths_are_checked() {
    let k = particle(ElemType::F64, 4, &[4]);
    let p = plan(&k, 1);
    let code = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k)).unwrap();
    let ins: [&[f64]; 4] = [&[1.0; 4], &[1.0; 4], &[0.5], &[1.0]];
    let mut one = vec![0.0; 4];
    let err = code.run_into_many(&k, &p, &ins, &mut [&mut one]).unwrap_err();
    assert!(
        err.to_string().contains("2 outputs but the run writes 1"),
        "{err}"
    );
    let (mut a, mut b) = (vec![0.0; 4], vec![0.0; 3]);
    let err = code
        .run_into_many(&k, &p, &ins, &mut [&mut a, &mut b])
        .unwrap_err();
    assert!(err.to_string().contains("3 elements"), "{err}");
    // a kernel of several outputs does not run into one allocated tensor
    assert!(code.run(&k, &p, &ins).is_err());
    let ins_out = [
        InputRef::Output(2),
        InputRef::Slice(&[1.0; 4][..]),
        InputRef::Slice(&[0.5][..]),
        InputRef::Slice(&[1.0][..]),
    ];
    let bound = code.bind(&k, &p).unwrap();
    let err = bound
        .run_into_many(
            &ins_out,
            &mut [OutSlice::F64(&mut a), OutSlice::F64(&mut [0.0; 4])],
            &RunConfig::default(),
        )
        .unwrap_err();
    assert!(err.to_string().contains("reads output 2"), "{err}");
}

#[test]
fn several_outputs_are_for_maps_and_reductions_of_every_axis() {
    let mut k = particle(ElemType::F64, 4, &[4]);
    k.kind = KernelKind::Reduce {
        op: ReduceOp::ArgMin,
        axes: vec![0],
    };
    assert!(k.validate().unwrap_err().to_string().contains("must be a map"));
    k.kind = KernelKind::Reduce {
        op: ReduceOp::Sum,
        axes: vec![0],
    };
    k.validate().unwrap();
}

#[test]
fn the_serial_map_checks_what_it_reads() {
    let k = particle(ElemType::F64, 8, &[1]);
    let p = plan(&k, 1);
    let serial = kiln_jit::compile(&k, &p, Schedule::for_kernel(&k))
        .unwrap()
        .bind(&k, &p)
        .unwrap()
        .serial_map()
        .unwrap();
    let (v, dt, g) = ([1.0; 8], [0.5], [1.0]);
    let (mut a, mut b) = (vec![0.0; 8], vec![0.0; 8]);
    // `p` of one element broadcast over 8 points is not updated in place
    let parts = [
        Part::Output(0),
        Part::Slice(&v[..]),
        Part::Slice(&dt[..]),
        Part::Slice(&g[..]),
    ];
    let e = serial.run(&parts, &mut [&mut a, &mut b]).unwrap_err().to_string();
    assert!(e.contains("read in place only by a map"), "{e}");
    let parts = [
        Part::Slice(&[2.0][..]),
        Part::Slice(&v[..7]),
        Part::Slice(&dt[..]),
        Part::Slice(&g[..]),
    ];
    let e = serial.run(&parts, &mut [&mut a, &mut b]).unwrap_err().to_string();
    assert!(e.contains("7 elements given, 8 expected"), "{e}");
    let parts = [
        Part::Slice(&[2.0][..]),
        Part::Slice(&v[..]),
        Part::Slice(&dt[..]),
        Part::Slice(&g[..]),
    ];
    let e = serial.run(&parts, &mut [&mut a]).unwrap_err().to_string();
    assert!(e.contains("1 outputs"), "{e}");
    let e = serial
        .run(&parts[..3], &mut [&mut a, &mut b])
        .unwrap_err()
        .to_string();
    assert!(e.contains("3"), "{e}");
    let e = serial.run::<f32>(&[], &mut []).unwrap_err().to_string();
    assert!(e.contains("f32"), "{e}");
    serial.run(&parts, &mut [&mut a, &mut b]).unwrap();
    assert_eq!((a[0], b[0]), (2.5, 1.0 * 0.99 + 0.5));
}

/// `op(x*y)` over every axis with the maps `x*y + 1` and `sqrt(x*y)` beside it, in one pass.
fn reduction_with_maps(dtype: ElemType, shape: &[usize], op: ReduceOp) -> KernelIR {
    let mut a = ExprArena::new();
    let (x, y) = (a.input(0), a.input(1));
    let xy = a.binary(BinaryOp::Mul, x, y);
    let one = a.literal(1.0);
    let m0 = a.binary(BinaryOp::Add, xy, one);
    let m1 = a.unary(UnaryOp::Sqrt, xy);
    let axes = (0..shape.len()).collect();
    let mut k = kernel(dtype, &[shape, shape], a, xy, KernelKind::Reduce { op, axes });
    k.extra = vec![m0, m1];
    k
}

fn reduction_parity<T: Elem>(dtype: ElemType) {
    let mut rng = Rng::new(21);
    let shapes: [&[usize]; 8] = [&[0], &[1], &[3], &[7], &[33], &[4, 9], &[100_003], &[300, 301]];
    let cases = [
        (ReduceOp::Sum, Data::Special),
        (ReduceOp::Sum, Data::Plain),
        (ReduceOp::Max, Data::Special),
        (ReduceOp::Min, Data::Plain),
        (ReduceOp::Prod, Data::NearOneSpecial),
        (ReduceOp::Prod, Data::NearOne),
    ];
    for (op, kind) in cases {
        for shape in shapes {
            let k = reduction_with_maps(dtype, shape, op);
            let d: Vec<Vec<T>> = k
                .inputs
                .iter()
                .map(|i| gen_data::<T>(&mut rng, i.shape.iter().product(), kind))
                .collect();
            let p = plan(&k, 1);
            let n: usize = shape.iter().product();
            for sched in [
                Schedule::scalar(),
                Schedule::simd(dtype, 4, 4),
                Schedule::simd(dtype, 2, 3),
            ] {
                let code = kiln_jit::compile(&k, &p, sched).unwrap();
                let refs: Vec<&[T]> = d.iter().map(|v| v.as_slice()).collect();
                let (mut e0, mut e1) = (vec![T::ZERO; n], vec![T::ZERO; n]);
                let want0 = oracle(&k.output(0), &d);
                let got0 = code.run_with_extra(
                    &k,
                    &p,
                    &refs,
                    &mut [&mut e0, &mut e1],
                    &RunConfig::default(),
                    &mut kiln_jit::Workspace::new(),
                );
                // a reassociated sum or product: within the bound of the sum of magnitudes
                let scale: f64 = d[0]
                    .iter()
                    .zip(&d[1])
                    .map(|(a, b)| (a.to_f64() * b.to_f64()).abs())
                    .sum();
                match (want0, got0) {
                    (Ok(w), Ok(g)) => compare(
                        &format!("{op:?} {shape:?} {sched:?}"),
                        &k.output(0),
                        &g,
                        &w,
                        Some(&[scale]),
                    ),
                    (Err(_), Err(_)) => continue,
                    (w, g) => panic!("{op:?} {shape:?}: {w:?} vs {g:?}"),
                }
                for (o, e) in [(1, &e0), (2, &e1)] {
                    let want = oracle(&k.output(o), &d).unwrap().values.to_f64();
                    let got: Vec<f64> = e.iter().map(|v| v.to_f64()).collect();
                    assert!(bits_equal(&got, &want), "{op:?} {shape:?} {sched:?} output {o}");
                }
            }
        }
    }
}

#[test]
fn a_reduction_of_every_axis_with_maps_matches_the_interpreter_f64() {
    reduction_parity::<f64>(ElemType::F64);
}

#[test]
fn a_reduction_of_every_axis_with_maps_matches_the_interpreter_f32() {
    reduction_parity::<f32>(ElemType::F32);
}
