//! NumPy's answers at the edges, on every backend (the interpreter, the SIMD JIT, the scalar JIT):
//! `minimum` / `maximum` keep the second of two equal operands, reductions fold in order, `pow(x, ±0)`
//! is 1 for every x, a function of a literal is a strong float64 folded in f64, and a kernel of
//! thousands of inputs computes what the interpreter does. The accuracy of the interpreter's sums and
//! of `var` is measured against exact references in `tests/accuracy.rs`.

use kiln::{ArrayArg, FusedRunner, Output};
use ndarray::{ArrayD, IxDyn, arr0, array};

const BACKENDS: [&str; 3] = ["interp", "jit", "jit-scalar"];

fn run(expr: &str, backend: &str, args: &[(&str, ArrayArg<'_>)]) -> Output {
    FusedRunner::compile_text(expr)
        .unwrap()
        .with_backend(kiln::backend_by_name(backend).unwrap())
        .run(args)
        .unwrap_or_else(|e| panic!("{expr} on {backend}: {e}"))
}

fn f32s(o: Output) -> ArrayD<f32> {
    match o {
        Output::F32(a) => a,
        other => panic!("not f32: {other:?}"),
    }
}

fn bits(o: Output) -> Vec<u64> {
    o.into_f64().iter().map(|v| v.to_bits()).collect()
}

#[test]
fn minimum_and_maximum_return_the_second_of_equal_operands() {
    let (pz, nz) = (array![0.0f64].into_dyn(), array![-0.0f64].into_dyn());
    for b in BACKENDS {
        // the table: minimum(-0.0, 0.0) is 0.0, maximum(0.0, -0.0) is -0.0
        let a = [("a", (&nz).into()), ("b", (&pz).into())];
        assert_eq!(bits(run("minimum(a, b)", b, &a)), [0.0f64.to_bits()], "{b}");
        assert_eq!(bits(run("maximum(a, b)", b, &a)), [0.0f64.to_bits()], "{b}");
        let a = [("a", (&pz).into()), ("b", (&nz).into())];
        assert_eq!(bits(run("maximum(a, b)", b, &a)), [(-0.0f64).to_bits()], "{b}");
        assert_eq!(bits(run("minimum(a, b)", b, &a)), [(-0.0f64).to_bits()], "{b}");
        // 1/minimum(a, -a) with a = -0.0: minimum(-0.0, 0.0) = 0.0, so +inf
        let a = [("a", (&nz).into())];
        assert_eq!(
            run("1/minimum(a, -a)", b, &a).into_f64()[[0]],
            f64::INFINITY,
            "{b}"
        );
        // NaN still propagates from either side
        let n = array![f64::NAN].into_dyn();
        let a = [("a", (&n).into()), ("b", (&pz).into())];
        assert!(run("minimum(a, b) + maximum(b, a)", b, &a).into_f64()[[0]].is_nan());
    }
    // f32 too, and a row longer than a vector (lanes and the tail)
    let x: ArrayD<f32> = ArrayD::from_shape_fn(IxDyn(&[11]), |i| if i[0] % 2 == 0 { 0.0 } else { -0.0 });
    let y = x.mapv(|v| -v);
    for b in BACKENDS {
        let a = [("x", (&x).into()), ("y", (&y).into())];
        let got = f32s(run("maximum(x, y)", b, &a));
        assert_eq!(
            got.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            y.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
            "{b}"
        );
    }
}

#[test]
fn reductions_of_signed_zeros() {
    // max([0.0, -0.0]) folds in order: maximum(0.0, -0.0) = -0.0, as NumPy
    let x = array![0.0f64, -0.0].into_dyn();
    for b in BACKENDS {
        let a = [("x", (&x).into())];
        assert_eq!(bits(run("max(x)", b, &a)), [(-0.0f64).to_bits()], "{b}");
        assert_eq!(bits(run("min(x)", b, &a)), [(-0.0f64).to_bits()], "{b}");
    }
    let x = array![-0.0f64, 0.0].into_dyn();
    for b in BACKENDS {
        let a = [("x", (&x).into())];
        assert_eq!(bits(run("max(x)", b, &a)), [0.0f64.to_bits()], "{b}");
    }
    // longer: the interpreter (and the one-lane JIT) keep the last zero; the SIMD JIT folds in
    // interleaved lanes and keeps a zero of one of the signs present (README): always equal to 0
    let x: ArrayD<f64> = ArrayD::from_shape_fn(IxDyn(&[37]), |i| if i[0] % 3 == 0 { -0.0 } else { 0.0 });
    let last = x[[36]];
    for b in BACKENDS {
        let a = [("x", (&x).into())];
        let got = run("max(x)", b, &a).into_f64()[[]];
        assert_eq!(got, 0.0, "{b}");
        if b != "jit" {
            assert_eq!(got.to_bits(), last.to_bits(), "{b}: the last zero");
        }
        // a scan combines in order on every backend: cummax's outputs are exactly the interpreter's
        let want = bits(run("cummax(x)", "interp", &a));
        assert_eq!(bits(run("cummax(x)", b, &a)), want, "{b}");
    }
}

#[test]
fn pow_of_zero_exponent_is_one_for_every_base() {
    let specials: Vec<f64> = [
        0x7ff0_0000_0000_0001u64, // signalling NaN, the fuzz finding
        0xfff0_0000_0000_0001,
        0x7ff8_0000_0000_0000,
        0xfff8_0000_0000_0000,
        0x7ff0_0000_0000_0000,
        0xfff0_0000_0000_0000,
        0,
        0x8000_0000_0000_0000,
        1,
        0x7fef_ffff_ffff_ffff,
        0xffef_ffff_ffff_ffff,
    ]
    .into_iter()
    .map(f64::from_bits)
    .collect();
    let x = ArrayD::from_shape_vec(IxDyn(&[specials.len()]), specials).unwrap();
    let x32 = x.mapv(|v| v as f32);
    for b in BACKENDS {
        for e in ["x ** 0.0", "x ** -0.0", "1 ** (x * 0 + x)"] {
            let got = run(e, b, &[("x", (&x).into())]).into_f64();
            assert!(got.iter().all(|&v| v == 1.0), "{e} on {b}: {got}");
            let got = f32s(run(e, b, &[("x", (&x32).into())]));
            assert!(got.iter().all(|&v| v == 1.0), "{e} (f32) on {b}: {got}");
        }
    }
}

#[test]
fn a_function_of_a_literal_is_a_strong_float64() {
    let af = array![1.5f32, -2.25].into_dyn();
    for b in BACKENDS {
        let a = [("af", (&af).into())];
        // NumPy 2: np.trunc(-1) is a float64 scalar, so trunc(-1) + af is float64
        match run("trunc(-1) + af", b, &a) {
            Output::F64(r) => assert_eq!(r, array![0.5, -3.25].into_dyn()),
            other => panic!("{b}: {other:?}"),
        }
        // operators on literals stay weak Python scalars: f32
        assert!(matches!(run("(2 * 3 - 1) + af", b, &a), Output::F32(_)), "{b}");
        assert!(matches!(run("2 ** 0.5 * af", b, &a), Output::F32(_)), "{b}");
        // folded in f64, rounded once where used: 1/3 + 1/3 rounds as NumPy's Python float does
        let got = f32s(run("(1/3 + 1/3) * af", b, &a));
        assert_eq!(got[[0]], ((1.0f64 / 3.0 + 1.0 / 3.0) as f32) * 1.5f32, "{b}");
        // a comparison of literals keeps its truth type
        assert!(matches!(run("7.0 < 5", b, &[]), Output::Bool(_)), "{b}");
    }
    // constants alone: a 0-d f64
    assert_eq!(
        run("cos(0) + trunc(-1.5)", "jit", &[]).into_f64(),
        arr0(0.0).into_dyn()
    );
}

#[test]
fn many_inputs_compute_what_the_interpreter_does() {
    // more inputs than skeleton's MANY_INPUTS (64): pointers loaded where read, no e-graph pass
    let n = 150;
    let names: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
    fn tree(names: &[String]) -> String {
        if names.len() == 1 {
            return names[0].clone();
        }
        let (a, b) = names.split_at(names.len() / 2);
        format!("({} * 0.5 + {})", tree(a), tree(b))
    }
    // every third input full, every third a row re-read per row, every third a column splatted per
    // row: the contiguous, per-row-run and per-row-splat paths of a kernel of many inputs
    let arrays: Vec<ArrayD<f64>> = (0..n)
        .map(|k| {
            let shape: &[usize] = [&[3usize, 37][..], &[37], &[3, 1]][k % 3];
            ArrayD::from_shape_fn(IxDyn(shape), |i| {
                let flat = ndarray::Dimension::slice(&i)
                    .iter()
                    .fold(0, |acc, &x| acc * 37 + x);
                (flat + k) as f64 * 0.25 - 7.0
            })
        })
        .collect();
    let args: Vec<(&str, ArrayArg<'_>)> = names
        .iter()
        .zip(&arrays)
        .map(|(n, a)| (n.as_str(), a.into()))
        .collect();
    for e in [
        tree(&names),
        format!("sum({})", tree(&names)),
        format!("max({}, axis=1)", tree(&names)),
    ] {
        let want = run(&e, "interp", &args).into_f64();
        for b in ["jit", "jit-scalar"] {
            let got = run(&e, b, &args).into_f64();
            for (g, w) in got.iter().zip(want.iter()) {
                assert!((g - w).abs() <= 1e-12 * w.abs().max(1.0), "{b}: {g} vs {w}");
            }
        }
    }
}
