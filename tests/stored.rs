//! Integer, bool and float32 inputs read by float kernels where they are (issue 23): where NumPy
//! computes in a float type and reads such an input only cast to it (`mean(i)`, `var(i)`,
//! `sum(i * 0.5, axis=1)`, `sin(i)`, `x32 * b`, `i * x32`), the float kernel reads its elements in
//! place and converts each as it reads it: no typed kernel, no converted copy, the float path's
//! rewrites, compound reductions and full-width functions.
//!
//! Each result must be, bit for bit and in NumPy's dtype, the same expression's over the inputs
//! converted to the kernel's float type first (what NumPy's cast gives), on every backend, for
//! C-ordered, broadcast, strided and Fortran-ordered inputs (read in place, per row), through `run`,
//! `run_many` and a prepared handle; and `kiln explain` says which inputs are read stored, and
//! nothing is typed or interpreted.

mod support;

use kiln::{ArrayArg, FusedRunner, Output};
use ndarray::{ArrayD, IxDyn, ShapeBuilder};
use support::{BACKENDS, bits_equal, runner};

/// Inputs of every stored type, of shape [5, 37] (rows long enough for the full-width functions, and
/// a tail), with edge values: int64 beyond 2^53 (whose conversion rounds) and at its extremes, int32's extremes,
/// float32 NaN, infinities, -0.0 and a subnormal.
struct Inputs {
    i: ArrayD<i64>,
    i32: ArrayD<i32>,
    b: ArrayD<bool>,
    x32: ArrayD<f32>,
    x: ArrayD<f64>,
}

const SHAPE: [usize; 2] = [5, 37];

fn inputs() -> Inputs {
    let n = SHAPE[0] * SHAPE[1];
    let at = |k: usize| k * 7919 % n;
    let i64_edge = [(1i64 << 53) + 1, i64::MAX, i64::MIN + 1, -(1i64 << 60) - 3];
    let f32_edge = [f32::NAN, f32::INFINITY, -0.0, 1e-40];
    Inputs {
        i: of((0..n)
            .map(|k| {
                i64_edge
                    .get(at(k))
                    .copied()
                    .unwrap_or(k as i64 * 1_000_003 - 31_000_000)
            })
            .collect()),
        i32: of((0..n)
            .map(|k| match at(k) {
                0 => i32::MIN,
                1 => i32::MAX,
                _ => k as i32 * 37 - 900,
            })
            .collect()),
        b: of((0..n).map(|k| k % 3 != 1).collect()),
        x32: of((0..n)
            .map(|k| f32_edge.get(at(k)).copied().unwrap_or(k as f32 * 0.37 - 11.0))
            .collect()),
        x: of((0..n).map(|k| (k as f64 * 0.61).sin() * 3.0).collect()),
    }
}

fn of<T>(v: Vec<T>) -> ArrayD<T> {
    ArrayD::from_shape_vec(IxDyn(&SHAPE), v).unwrap()
}

/// Expressions NumPy computes in a float type, reading the integer, bool and float32 inputs only
/// cast to it, and the float type.
const CASES: &[(&str, &str)] = &[
    ("mean(i)", "f64"),
    ("var(i)", "f64"),
    ("std(i32, axis=1)", "f64"),
    ("var(i, axis=0)", "f64"),
    ("sum(i * 0.5, axis=1)", "f64"),
    ("sum(i32 * 0.25, axis=0)", "f64"),
    ("max(i32 / 7, axis=1)", "f64"),
    ("sin(i32 * 0.001)", "f64"),
    ("exp(i32 * 0.001) + x", "f64"),
    ("cumsum(i * 1.5, axis=1)", "f64"),
    ("x32 * b", "f32"),
    ("sum(b * x32, axis=1)", "f32"),
    ("where(b, x32, 2)", "f32"),
    ("i * x32", "f64"),
    ("x32 + x", "f64"),
    ("mean(b)", "f64"),
    ("where(b, x, 0.5) * i32", "f64"),
];

/// The arguments: each input as `view` gives it.
fn args<'a>(v: &'a Inputs) -> Vec<(&'static str, ArrayArg<'a>)> {
    vec![
        ("i", ArrayArg::from(v.i.view())),
        ("i32", ArrayArg::from(v.i32.view())),
        ("b", ArrayArg::from(v.b.view())),
        ("x32", ArrayArg::from(v.x32.view())),
        ("x", ArrayArg::from(v.x.view())),
    ]
}

/// The arguments converted to `float` (f64 or f32) first, as NumPy casts them: the reference.
fn converted(v: &Inputs, float: &str) -> (Vec<ArrayD<f64>>, Vec<ArrayD<f32>>) {
    let f64s = vec![
        v.i.mapv(|x| x as f64),
        v.i32.mapv(f64::from),
        v.b.mapv(|x| f64::from(u8::from(x))),
        v.x32.mapv(f64::from),
        v.x.clone(),
    ];
    let f32s = if float == "f32" {
        vec![v.b.mapv(|x| f32::from(u8::from(x))), v.x32.clone()]
    } else {
        Vec::new()
    };
    (f64s, f32s)
}

fn names_in(expr: &str) -> Vec<&'static str> {
    let words: Vec<&str> = expr.split(|c: char| !c.is_alphanumeric() && c != '_').collect();
    ["i", "i32", "b", "x32", "x"]
        .into_iter()
        .filter(|n| words.contains(n))
        .collect()
}

/// The expression's result on the inputs converted to its float type first.
fn reference(expr: &str, float: &str, v: &Inputs, backend: &str) -> Output {
    let (f64s, f32s) = converted(v, float);
    let names = ["i", "i32", "b", "x32", "x"];
    let used = names_in(expr);
    let mut a: Vec<(&str, ArrayArg<'_>)> = Vec::new();
    for (k, n) in names.iter().enumerate() {
        if !used.contains(n) {
            continue;
        }
        // a float32 kernel's inputs are float32 (the bool converted to it)
        let arg = match (float, *n) {
            ("f32", "b") => ArrayArg::from(f32s[0].view()),
            ("f32", "x32") => ArrayArg::from(f32s[1].view()),
            _ => ArrayArg::from(f64s[k].view()),
        };
        a.push((n, arg));
    }
    runner(expr, backend)
        .run(&a)
        .unwrap_or_else(|e| panic!("{expr}: {e}"))
}

fn same_bits(got: &Output, want: &Output) -> bool {
    fn eq<T: Copy>(a: &ArrayD<T>, b: &ArrayD<T>, bits: impl Fn(T) -> (bool, u64)) -> bool {
        a.shape() == b.shape()
            && a.iter().zip(b.iter()).all(|(&x, &y)| {
                let ((nx, bx), (ny, by)) = (bits(x), bits(y));
                (nx && ny) || bx == by
            })
    }
    match (got, want) {
        (Output::F64(a), Output::F64(b)) => {
            a.shape() == b.shape()
                && bits_equal(
                    &a.iter().copied().collect::<Vec<_>>(),
                    &b.iter().copied().collect::<Vec<_>>(),
                )
        }
        (Output::F32(a), Output::F32(b)) => eq(a, b, |x: f32| (x.is_nan(), u64::from(x.to_bits()))),
        _ => false,
    }
}

fn dtype_of(o: &Output) -> &'static str {
    match o {
        Output::F64(_) => "f64",
        Output::F32(_) => "f32",
        _ => "not a float",
    }
}

#[test]
fn every_case_gives_the_bits_of_the_inputs_converted_first_on_every_backend() {
    let v = inputs();
    for &(expr, float) in CASES {
        for backend in BACKENDS {
            let got = runner(expr, backend)
                .run(&args(&v))
                .unwrap_or_else(|e| panic!("{expr} on {backend}: {e}"));
            assert_eq!(dtype_of(&got), float, "{expr} on {backend}");
            let want = reference(expr, float, &v, backend);
            assert!(same_bits(&got, &want), "{expr} on {backend}: {got:?} vs {want:?}");
        }
    }
}

#[test]
fn explain_says_which_inputs_are_read_stored_and_nothing_is_typed() {
    let v = inputs();
    for &(expr, _) in CASES {
        let kernels = runner(expr, "jit").explain_rewrites(&args(&v)).unwrap();
        let notes: Vec<&String> = kernels.iter().flat_map(|(_, _, n)| n).collect();
        assert!(
            notes.iter().any(|n| n.starts_with("stored: ")),
            "{expr}: {notes:?}"
        );
        assert!(
            !notes
                .iter()
                .any(|n| n.contains("typed kernel") || n.starts_with("interpreted")),
            "{expr}: {notes:?}"
        );
    }
    // an integer in integer arithmetic or compared stays typed: exact in int64, not in float64
    for expr in ["sum(i + 1)", "where(i > 0, x, 0)", "mean(i * 2)"] {
        let kernels = runner(expr, "jit").explain_rewrites(&args(&v)).unwrap();
        let notes: Vec<&String> = kernels.iter().flat_map(|(_, _, n)| n).collect();
        assert!(
            notes.iter().any(|n| n.contains("typed kernel")),
            "{expr}: {notes:?}"
        );
    }
}

#[test]
fn strided_fortran_and_broadcast_inputs_and_every_length() {
    let v = inputs();
    // a transposed (Fortran-ordered) int64 array, a stepped view, a broadcast row and column
    let it: ArrayD<i64> = {
        let t = v.i.t().to_owned();
        let mut f = ArrayD::zeros(IxDyn(&[37, 5]).f());
        f.assign(&t);
        f
    };
    // rows long enough to be read in place (shorter ones are copied, as float views are)
    let long_i32: ArrayD<i32> =
        ArrayD::from_shape_fn(IxDyn(&[3, 402]), |k| k[1] as i32 * 7 - k[0] as i32 * 1000);
    let long_b: ArrayD<bool> = ArrayD::from_shape_fn(IxDyn(&[3, 203]), |k| (k[0] + k[1]) % 3 == 0);
    let stepped = long_i32.slice(ndarray::s![.., ..;2]).into_dyn();
    let reversed = long_b.slice(ndarray::s![.., ..;-1]).into_dyn();
    let row = v.b.slice(ndarray::s![0, ..]).into_dyn();
    let col = v.i.slice(ndarray::s![.., 0..1]).into_dyn();
    for backend in BACKENDS {
        let r = runner("sum(t * 0.5, axis=0) + 1", backend);
        let got = r.run(&[("t", ArrayArg::from(it.view()))]).unwrap();
        // read where it is (in memory order: the runner walks a Fortran array as its transpose)
        let kernels = r.explain_rewrites(&[("t", ArrayArg::from(it.view()))]).unwrap();
        let (_, plan, notes) = &kernels[0];
        assert!(notes.iter().any(|n| n.starts_with("stored: ")), "{notes:?}");
        assert!(plan.inputs.iter().all(|p| p.reads_stored()), "{plan}");
        let want_in = it.mapv(|x| x as f64);
        let want = r.run(&[("t", ArrayArg::from(want_in.view()))]).unwrap();
        assert!(same_bits(&got, &want), "fortran {backend}");

        let r = runner("s * 0.25 + 1", backend);
        let got = r.run(&[("s", ArrayArg::from(stepped.view()))]).unwrap();
        // a stepped row is read in place, lane by lane
        let kernels = r
            .explain_rewrites(&[("s", ArrayArg::from(stepped.view()))])
            .unwrap();
        let plan = &kernels[0].1;
        assert!(
            matches!(&plan.inputs[0], kiln::kiln_ir::InputPlan::PerRow { .. }),
            "{plan}"
        );
        let want_in = stepped.mapv(f64::from);
        let want = r.run(&[("s", ArrayArg::from(want_in.view()))]).unwrap();
        assert!(same_bits(&got, &want), "stepped {backend}");

        let r = runner("s * 0.5 + 1", backend);
        let got = r.run(&[("s", ArrayArg::from(reversed.view()))]).unwrap();
        let kernels = r
            .explain_rewrites(&[("s", ArrayArg::from(reversed.view()))])
            .unwrap();
        let plan = &kernels[0].1;
        assert!(
            matches!(&plan.inputs[0], kiln::kiln_ir::InputPlan::PerRow { .. }),
            "{plan}"
        );
        let want_in = reversed.mapv(|x| f64::from(u8::from(x)));
        let want = r.run(&[("s", ArrayArg::from(want_in.view()))]).unwrap();
        assert!(same_bits(&got, &want), "reversed {backend}");

        // a float32 kernel's four lanes of a reversed bool row, one by one
        let y32: ArrayD<f32> = ArrayD::from_shape_fn(IxDyn(&[3, 203]), |k| k[1] as f32 * 0.25 - 9.0);
        let r = runner("y * s", backend);
        let a = [
            ("y", ArrayArg::from(y32.view())),
            ("s", ArrayArg::from(reversed.view())),
        ];
        let got = r.run(&a).unwrap();
        assert_eq!(dtype_of(&got), "f32", "y * s {backend}");
        let want_in = reversed.mapv(|x| f32::from(u8::from(x)));
        let want = r
            .run(&[
                ("y", ArrayArg::from(y32.view())),
                ("s", ArrayArg::from(want_in.view())),
            ])
            .unwrap();
        assert!(same_bits(&got, &want), "f32 reversed {backend}");

        let r = runner("x * r + c * 0.5", backend);
        let got = r
            .run(&[
                ("x", ArrayArg::from(v.x.view())),
                ("r", ArrayArg::from(row.view())),
                ("c", ArrayArg::from(col.view())),
            ])
            .unwrap();
        let (rf, cf) = (row.mapv(|x| f64::from(u8::from(x))), col.mapv(|x| x as f64));
        let want = r
            .run(&[
                ("x", ArrayArg::from(v.x.view())),
                ("r", ArrayArg::from(rf.view())),
                ("c", ArrayArg::from(cf.view())),
            ])
            .unwrap();
        assert!(same_bits(&got, &want), "broadcast {backend}");

        // lengths around the vector width, one element and none
        for n in [0usize, 1, 2, 3, 4, 5, 9, 17] {
            let a: ArrayD<i32> = ArrayD::from_shape_fn(IxDyn(&[n]), |k| k[0] as i32 * 3 - 4);
            let m: ArrayD<bool> = ArrayD::from_shape_fn(IxDyn(&[n]), |k| k[0] % 2 == 0);
            let y: ArrayD<f32> = ArrayD::from_shape_fn(IxDyn(&[n]), |k| k[0] as f32 * 0.5 - 1.0);
            for expr in ["a * 0.5", "sum(a * 0.5)", "cumsum(a * 0.5)"] {
                let r = runner(expr, backend);
                let got = r.run(&[("a", ArrayArg::from(a.view()))]).unwrap();
                let af = a.mapv(f64::from);
                let want = r.run(&[("a", ArrayArg::from(af.view()))]).unwrap();
                assert!(same_bits(&got, &want), "{expr} n={n} {backend}");
            }
            let r = runner("y * m", backend);
            let got = r
                .run(&[("y", ArrayArg::from(y.view())), ("m", ArrayArg::from(m.view()))])
                .unwrap();
            let mf = m.mapv(|x| f32::from(u8::from(x)));
            let want = r
                .run(&[("y", ArrayArg::from(y.view())), ("m", ArrayArg::from(mf.view()))])
                .unwrap();
            assert!(same_bits(&got, &want), "y * m n={n} {backend}");
        }
    }
}

#[test]
fn several_outputs_and_prepared_handles_read_stored_inputs() {
    let v = inputs();
    let (f64s, _) = converted(&v, "f64");
    for backend in BACKENDS {
        let r = FusedRunner::compile_text("i * 0.5; mean(i); sin(i32 * 0.01)")
            .unwrap()
            .with_backend(kiln::backend_by_name(backend).unwrap());
        let got = r
            .run_many(&[
                ("i", ArrayArg::from(v.i.view())),
                ("i32", ArrayArg::from(v.i32.view())),
            ])
            .unwrap();
        let want = r
            .run_many(&[
                ("i", ArrayArg::from(f64s[0].view())),
                ("i32", ArrayArg::from(f64s[1].view())),
            ])
            .unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!(same_bits(g, w), "run_many {backend}: {g:?} vs {w:?}");
        }

        let r = runner("i * 0.5 + x", backend);
        let p = r
            .prepared(&[
                ("i", ArrayArg::from(v.i.view())),
                ("x", ArrayArg::from(v.x.view())),
            ])
            .unwrap();
        let got = p
            .run(&[ArrayArg::from(v.i.view()), ArrayArg::from(v.x.view())])
            .unwrap();
        let want = r
            .run(&[
                ("i", ArrayArg::from(f64s[0].view())),
                ("x", ArrayArg::from(v.x.view())),
            ])
            .unwrap();
        assert!(same_bits(&got, &want), "prepared {backend}");
    }
}
