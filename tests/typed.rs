//! Integer and bool types end to end (issue 13): every row of `tests/data/typed_cases.csv`, which
//! NumPy 2 wrote (`tests/gen/make_typed_cases.py`), through `FusedRunner::compile_text` on the same
//! inputs: the promotion table (every pair of bool, int32, int64, float32, float64 and the weak
//! literals 3 and 2.5 under `+ * / // % ** < & where`), integer edge values, wrap-around, division by
//! zero, shifts, casts, and the accumulator types of reductions and scans. The dtype must be NumPy's
//! and the values bit for bit (any NaN equal to any NaN); where NumPy raises, kiln must give an error.
//! On the default backend (the JIT: kiln-jit's typed code generator, or the interpreter where it
//! declines, as `kiln explain` states) and on the interpreter.

use kiln::{ArrayArg, Expr, FusedRunner, Output};
use ndarray::{Array1, ArrayD, array};

const I32_MIN: i32 = i32::MIN;
const I32_MAX: i32 = i32::MAX;

/// The inputs of `tests/gen/make_typed_cases.py`, written out again.
struct Inputs {
    b: Array1<bool>,
    i: Array1<i32>,
    j: Array1<i32>,
    k: Array1<i64>,
    l: Array1<i64>,
    f: Array1<f32>,
    d: Array1<f64>,
    u: Array1<i32>,
    v: Array1<i64>,
}

fn inputs() -> Inputs {
    Inputs {
        b: array![true, false, true, false, true, true, false, false],
        i: array![0, -1, 1, I32_MIN, I32_MAX, 7, -7, 3],
        j: array![3, 2, -2, -1, 1, 0, 5, -3],
        k: array![0, -1, (1i64 << 53) + 1, i64::MIN, i64::MAX, 7, -7, 1i64 << 40],
        l: array![3, 0, -2, -1, 1, 63, 64, -3],
        f: array![0.5f32, -1.5, 2.5, f32::INFINITY, -0.0, f32::NAN, 3.0, 1e30],
        d: array![0.5, -1.5, 2.5, f64::NEG_INFINITY, 0.0, f64::NAN, 3.0, 1e300],
        u: array![0, 1, 2, 3, 0, 5, 1, 31],
        v: array![0, 1, 2, 3, 63, 5, 1, 2],
    }
}

/// The result's dtype and its values as the fixture writes them.
fn render(out: &Output) -> (String, Vec<String>) {
    fn float(v: f64) -> String {
        if v.is_nan() {
            "nan".into()
        } else if v.is_infinite() {
            if v > 0.0 { "inf".into() } else { "-inf".into() }
        } else {
            // bits, so that the comparison is exact
            format!("{:x}", v.to_bits())
        }
    }
    let values: Vec<String> = match out {
        Output::F64(a) => a.iter().map(|&v| float(v)).collect(),
        Output::F32(a) => a.iter().map(|&v| float(v as f64)).collect(),
        Output::I64(a) => a.iter().map(i64::to_string).collect(),
        Output::I32(a) => a.iter().map(i32::to_string).collect(),
        Output::Bool(a) => a.iter().map(|&v| u8::from(v).to_string()).collect(),
        Output::C64(a) => a
            .iter()
            .map(|z| format!("{},{}", float(z.re.into()), float(z.im.into())))
            .collect(),
        Output::C128(a) => a
            .iter()
            .map(|z| format!("{},{}", float(z.re), float(z.im)))
            .collect(),
        Output::Bytes(b) => b.data.chunks(b.width).map(|s| format!("{s:?}")).collect(),
    };
    (out.dtype_name().to_string(), values)
}

/// The fixture's values in [`render`]'s form.
fn expected_values(dtype: &str, text: &str) -> Vec<String> {
    text.split_whitespace()
        .map(|v| match dtype {
            "float32" | "float64" => match v {
                "nan" | "inf" | "-inf" => v.to_string(),
                _ => {
                    let x: f64 = v.parse().expect("a float");
                    let x = if dtype == "float32" { x as f32 as f64 } else { x };
                    format!("{:x}", x.to_bits())
                }
            },
            _ => v.to_string(),
        })
        .collect()
}

fn run(runner: &FusedRunner, inputs: &Inputs) -> kiln::Result<Output> {
    let all: Vec<(&str, ArrayArg<'_>)> = vec![
        ("b", (&inputs.b).into()),
        ("i", (&inputs.i).into()),
        ("j", (&inputs.j).into()),
        ("k", (&inputs.k).into()),
        ("l", (&inputs.l).into()),
        ("f", (&inputs.f).into()),
        ("d", (&inputs.d).into()),
        ("u", (&inputs.u).into()),
        ("v", (&inputs.v).into()),
    ];
    let named: Vec<(&str, ArrayArg<'_>)> = all
        .into_iter()
        .filter(|(n, _)| runner.input_names().iter().any(|m| m == n))
        .collect();
    runner.run(&named)
}

#[test]
fn numpy_types_and_values() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/typed_cases.csv"))
        .expect("tests/data/typed_cases.csv");
    let inputs = inputs();
    let mut checked = 0;
    let mut failures = Vec::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let parts: Vec<&str> = line.split(';').collect();
        let [_section, expr, dtype, values] = parts[..] else {
            panic!("bad fixture line {line}");
        };
        for backend in [None, Some(kiln::interpreter())] {
            let runner = FusedRunner::compile_text(expr).map(|r| match &backend {
                Some(b) => r.with_backend(b.clone()),
                None => r,
            });
            let got = runner.and_then(|r| run(&r, &inputs));
            let name = if backend.is_some() { "interp" } else { "jit" };
            match (dtype, got) {
                ("error", Ok(out)) => {
                    failures.push(format!("{name} {expr}: NumPy raises, kiln gives {out:?}"))
                }
                ("error", Err(e)) => assert!(!e.to_string().contains('\n'), "{expr}: {e}"),
                (_, Err(e)) => failures.push(format!("{name} {expr}: {e}")),
                (_, Ok(out)) => {
                    let (got_dtype, got_values) = render(&out);
                    let want = expected_values(dtype, values);
                    // a float `**` is C99's pow, and `exp` and `arctan2` transcendentals: NumPy's and
                    // kiln's within the JIT's documented bound (2 ULP covers each; integer `**` is
                    // exact). A function of integer or bool inputs computed in a float type reads
                    // them converted and runs the float path's vector math, as of float inputs
                    let pow = ["**", "exp(", "arctan2("].iter().any(|f| expr.contains(f))
                        && dtype.starts_with("float");
                    let close = |g: &String, w: &String| {
                        g == w
                            || (pow
                                && u64::from_str_radix(g, 16)
                                    .ok()
                                    .zip(u64::from_str_radix(w, 16).ok())
                                    .is_some_and(|(a, b)| {
                                        let ulp = if dtype == "float32" { 1u64 << 29 } else { 1 };
                                        a.abs_diff(b) <= 2 * ulp
                                    }))
                    };
                    let same = got_values.len() == want.len()
                        && got_values.iter().zip(&want).all(|(g, w)| close(g, w));
                    if got_dtype != dtype || !same {
                        failures.push(format!(
                            "{name} {expr}: NumPy {dtype} {want:?}, kiln {got_dtype} {got_values:?}"
                        ));
                    }
                }
            }
            checked += 1;
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked > 1000, "{checked} rows");
}

/// How each kernel runs is a value of `explain_kernels` (kiln::Engine), which the CLI reads
/// rather than the wording of a note: a float kernel, a typed one the JIT compiles, one it declines
/// and one under the interpreter backend.
#[test]
fn explain_kernels_give_the_engine_as_a_value() {
    use kiln::Engine;
    let (i, j) = (array![1i32, 2, 3], array![4i32, 5, 6]);
    let x = array![1.0, 2.0];
    let engine = |src: &str, inputs: &[(&str, kiln::ArrayArg<'_>)], interp: bool| {
        let mut r = FusedRunner::compile_text(src).unwrap();
        if interp {
            r = r.with_backend(kiln::interpreter());
        }
        let all = r.explain_kernels(inputs).unwrap();
        let last = all.last().unwrap();
        // the engine's note is the last of explain_rewrites' notes: every kernel has one, which
        // says "interpreted" only where the interpreter runs it
        let note = last.engine_note.as_deref().unwrap();
        assert_eq!(last.notes().last().map(String::as_str), Some(note));
        let interpreted = interp || last.engine == Engine::TypedInterpreted;
        assert_eq!(note.starts_with("interpreted"), interpreted, "{src}: {note}");
        assert_eq!(note.starts_with("compiled"), !interpreted, "{src}: {note}");
        last.engine
    };
    let ij = [("i", (&i).into()), ("j", (&j).into())];
    assert_eq!(engine("(i * 3 + j) % 7", &ij, false), Engine::TypedCompiled);
    assert_eq!(engine("(i * 3 + j) % 7", &ij, true), Engine::TypedInterpreted);
    assert_eq!(
        engine("cumsum(i, initial=2.5)", &[("i", (&i).into())], false),
        Engine::TypedInterpreted
    );
    assert_eq!(engine("x * 3 + 1", &[("x", (&x).into())], false), Engine::Float);
    assert_eq!(engine("x * 3 + 1", &[("x", (&x).into())], true), Engine::Float);
}

#[test]
fn explain_says_which_engine_runs_the_typed_kernel() {
    let runner = FusedRunner::compile_text("(i * 3 + j) % 7").unwrap();
    let (i, j) = (array![1i32, 2, 3], array![4i32, 5, 6]);
    let all = runner
        .explain_rewrites(&[("i", (&i).into()), ("j", (&j).into())])
        .unwrap();
    let notes = all[0].2.join("\n");
    assert!(
        notes.contains(
            "compiled: typed kernel (input 'i' is int32), a map of int32 values by the JIT's main code \
             generator (4 lanes)"
        ),
        "{notes}"
    );
    assert!(notes.contains("in0 i: i32 [3]"), "{notes}");
    assert!(notes.contains("cast %"), "{notes}");
    // under the interpreter backend the note says so
    let all = FusedRunner::compile_text("(i * 3 + j) % 7")
        .unwrap()
        .with_backend(kiln::interpreter())
        .explain_rewrites(&[("i", (&i).into()), ("j", (&j).into())])
        .unwrap();
    let notes = all[0].2.join("\n");
    assert!(
        notes.contains(
            "interpreted: input 'i' is int32, and the interp backend compiles no typed kernel; the typed kernel:"
        ),
        "{notes}"
    );
    // what the typed code generator declines runs on the interpreter, and the note says why
    let runner = FusedRunner::compile_text("cumsum(i, initial=2.5)").unwrap();
    let all = runner.explain_rewrites(&[("i", (&i).into())]).unwrap();
    let notes = all[0].2.join("\n");
    assert!(
        notes.contains(
            "interpreted: input 'i' is int32, and the JIT does not compile the scan cumsum with an initial value its accumulator does not hold"
        ),
        "{notes}"
    );
    // a float kernel compiles as before: no note
    let x = array![1.0, 2.0];
    let runner = FusedRunner::compile_text("x * 3 + 1").unwrap();
    let all = runner.explain_rewrites(&[("x", (&x).into())]).unwrap();
    assert!(
        !all[0].2.iter().any(|n| n.contains("interpreted")),
        "{:?}",
        all[0].2
    );
}

#[test]
fn integer_literals_in_float_kernels_compile_as_floats() {
    // `x ** 2` keeps NumPy's fast path (x*x) and the kernel compiles: the JIT gives the interpreter's bits
    let x = array![1.5f32, -2.25, 3.0e-20, f32::NAN];
    for text in ["x ** 2", "x * 2 + 1", "x // 2", "x % 3", "ones_like(x)", "x.imag"] {
        let jit = FusedRunner::compile_text(text).unwrap();
        let interp = FusedRunner::compile_text(text)
            .unwrap()
            .with_backend(kiln::interpreter());
        let a = jit.run(&[("x", (&x).into())]).unwrap();
        let b = interp.run(&[("x", (&x).into())]).unwrap();
        assert_eq!(a.dtype_name(), "float32", "{text}");
        let (a, b) = (a.into_f64(), b.into_f64());
        for (p, q) in a.iter().zip(&b) {
            assert!(
                p.to_bits() == q.to_bits() || (p.is_nan() && q.is_nan()),
                "{text}: {a} {b}"
            );
        }
    }
}

#[test]
fn builder_casts_and_typed_outputs() {
    let x = kiln::Expr::input("x");
    let runner = FusedRunner::compile(&(x.cast(kiln::ElemType::I32) * 2)).unwrap();
    let a = array![1.9, -2.9, 1e10];
    let out = runner.run(&[("x", (&a).into())]).unwrap();
    let got: ArrayD<i32> = out.into_typed().unwrap();
    // 1e10 does not fit int32: x86's integer indefinite, as NumPy's astype, then doubled (wraps to 0)
    assert_eq!(got, array![2, -4, 0].into_dyn());
    let err = runner
        .run(&[("x", (&a).into())])
        .unwrap()
        .into_typed::<f64>()
        .unwrap_err();
    assert!(err.to_string().contains("int32"), "{err}");
}

#[test]
fn initial_values_of_integer_reductions() {
    let i = array![1i32, 2, 3];
    let sum = FusedRunner::compile_text("sum(i, initial=2.5)").unwrap();
    let e = sum.run(&[("i", (&i).into())]).unwrap_err();
    assert!(e.to_string().contains("integer initial value"), "{e}");
    let max = FusedRunner::compile_text("max(i, initial=3000000000)").unwrap();
    let e = max.run(&[("i", (&i).into())]).unwrap_err();
    assert!(e.to_string().contains("out of range for int32"), "{e}");
    let ok = FusedRunner::compile_text("min(i, initial=-4)").unwrap();
    let got: ArrayD<i32> = ok.run(&[("i", (&i).into())]).unwrap().into_typed().unwrap();
    assert_eq!(got, ndarray::arr0(-4).into_dyn());
}

#[test]
fn ndarray_closures_on_integer_bool_and_mixed_arrays() {
    use kiln::{FuseAllExt, FuseExt};
    use ndarray::{Array1, Array2};
    let i = array![1i32, -2, i32::MAX];
    let y: Array1<i32> = i.fuse(|i| i * 3 + 1).unwrap();
    assert_eq!(y, array![4, -5, i32::MAX.wrapping_mul(3).wrapping_add(1)]);
    // a float result is not an int32 array: the error says so, fuse_dyn gives it
    let e = i.fuse(|i| i / 2).unwrap_err();
    assert!(e.to_string().contains("float64"), "{e}");
    assert_eq!(i.fuse_dyn(|i| i / 2).unwrap().dtype_name(), "float64");
    // sums of int32 are int64, as NumPy's
    let total = i.fuse_dyn(|i| i.sum()).unwrap().into_typed::<i64>().unwrap();
    assert_eq!(total, ndarray::arr0(1 - 2 + i32::MAX as i64).into_dyn());
    // mixed tuples promote as NumPy: int32 with float32 is float64, bool with int64 is int64
    let f = array![[0.5f32, 1.5, 2.5], [1.0, 1.0, 1.0]];
    let z: Array2<f64> = (&i, &f).fuse_all(|(i, f)| i + f).unwrap();
    assert_eq!(z[[0, 2]], i32::MAX as f64 + 2.5);
    let p = array![true, false, true];
    let k = array![10i64, 20, 30];
    let w: Array1<i64> = (&p, &k).fuse_all(|(p, k)| p * k).unwrap();
    assert_eq!(w, array![10, 0, 30]);
    // a bool result comes back as the tuple's type (int64: 1 / 0), or as bool through fuse_all_dyn
    let m: Array1<i64> = (&p, &k)
        .fuse_all(|(p, k)| kiln::select(p, k.gt(15), k.lt(15)))
        .unwrap();
    assert_eq!(m, array![0, 0, 1]);
    let m = (&p, &k)
        .fuse_all_dyn(|(p, k)| kiln::select(p, k.gt(15), k.lt(15)))
        .unwrap();
    assert_eq!(m, Output::Bool(array![false, false, true].into_dyn()));
    let mut out = Array1::<i64>::zeros(3);
    (&p, &k).fuse_all_into(&mut out, |(p, k)| k - p).unwrap();
    assert_eq!(out, array![9, 20, 29]);
}

#[test]
fn npy_round_trips_of_every_type() {
    use kiln::npy::{self, NpyArray};
    let dir = std::env::temp_dir().join(format!("kiln-typed-npy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let outputs = [
        Output::Bool(array![true, false, true].into_dyn()),
        Output::I32(array![i32::MIN, -1, 0, i32::MAX].into_dyn()),
        Output::I64(array![[i64::MIN, (1 << 53) + 1], [0, i64::MAX]].into_dyn()),
        Output::F32(array![1.5f32, -0.0, f32::INFINITY].into_dyn()),
        Output::F64(array![f64::MIN_POSITIVE, -2.5].into_dyn()),
        Output::C64(array![kiln::kiln_ir::num_complex::Complex32::new(1.5, -0.0)].into_dyn()),
        Output::C128(array![kiln::kiln_ir::num_complex::Complex64::new(f64::INFINITY, -2.5)].into_dyn()),
    ];
    for out in outputs {
        let path = dir.join(format!("{}.npy", out.dtype_name()));
        npy::write(&path, &out).unwrap();
        let back = npy::read(&path).unwrap();
        let again = match back {
            NpyArray::Bool(a) => Output::Bool(a),
            NpyArray::I32(a) => Output::I32(a),
            NpyArray::I64(a) => Output::I64(a),
            NpyArray::F32(a) => Output::F32(a),
            NpyArray::F64(a) => Output::F64(a),
            NpyArray::C64(a) => Output::C64(a),
            NpyArray::C128(a) => Output::C128(a),
            NpyArray::Bytes(b) => Output::Bytes(b),
        };
        assert_eq!(again, out);
    }
    // other integer types are widened to int64 exactly; uint64 only where every value fits
    use ndarray_npy::WriteNpyExt;
    let write = |name: &str, f: &dyn Fn(&mut std::fs::File)| {
        let path = dir.join(name);
        f(&mut std::fs::File::create(&path).unwrap());
        npy::read(&path)
    };
    let cases: Vec<(&str, kiln::Result<NpyArray>)> = vec![
        (
            "i8",
            write("i1.npy", &|w| array![-128i8, 127].write_npy(w).unwrap()),
        ),
        (
            "i16",
            write("i2.npy", &|w| array![-32768i16, 7].write_npy(w).unwrap()),
        ),
        ("u8", write("u1.npy", &|w| array![255u8, 0].write_npy(w).unwrap())),
        (
            "u16",
            write("u2.npy", &|w| array![65535u16, 1].write_npy(w).unwrap()),
        ),
        (
            "u32",
            write("u4.npy", &|w| array![u32::MAX, 2].write_npy(w).unwrap()),
        ),
        (
            "u64",
            write("u8.npy", &|w| array![i64::MAX as u64, 3].write_npy(w).unwrap()),
        ),
    ];
    let want: [[i64; 2]; 6] = [
        [-128, 127],
        [-32768, 7],
        [255, 0],
        [65535, 1],
        [u32::MAX as i64, 2],
        [i64::MAX, 3],
    ];
    for ((name, got), want) in cases.into_iter().zip(want) {
        match got {
            Ok(NpyArray::I64(a)) => assert_eq!(a, ndarray::arr1(&want).into_dyn(), "{name}"),
            other => panic!("{name}: {other:?}"),
        }
    }
    let e = write("u8big.npy", &|w| array![u64::MAX].write_npy(w).unwrap()).unwrap_err();
    assert!(e.to_string().contains("does not fit int64"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn several_outputs_over_integer_inputs_are_one_typed_kernel() {
    use kiln::{Expr, FuseManyExt};
    use ndarray::Array1;
    let (i, j) = (Expr::input("i"), Expr::input("j"));
    let runner = FusedRunner::compile_many(&[&i + &j, (&i * 2).cast(kiln::ElemType::F32), i.sum()]).unwrap();
    let (a, b) = (array![1i32, i32::MAX, -3], array![2i32, 1, 3]);
    let args = [("i", (&a).into()), ("j", (&b).into())];
    let outs = runner.run_many(&args).unwrap();
    assert_eq!(outs[0], Output::I32(array![3, i32::MIN, 0].into_dyn()));
    assert_eq!(outs[1], Output::F32(array![2.0f32, -2.0, -6.0].into_dyn()));
    assert_eq!(
        outs[2],
        Output::I64(ndarray::arr0(1 + i32::MAX as i64 - 3).into_dyn())
    );
    // the sum of every axis and the two maps are one typed kernel of three outputs, each of its type
    let all = runner.explain_rewrites(&args).unwrap();
    let (fused, _, notes) = all.last().unwrap();
    assert_eq!(fused.n_outputs(), 3, "{fused:?}");
    let notes = notes.join("\n");
    assert_eq!(notes.matches("  out %").count(), 3, "{notes}");
    assert!(!notes.contains("fused: declined"), "{notes}");
    // the same maps over floats still share one compiled kernel
    let (x, y) = (array![1.0, 2.0], array![3.0, 4.0]);
    let (s, d): (Array1<f64>, Array1<f64>) = (&x, &y).fuse_many(|(x, y)| (&x + &y, x - y)).unwrap();
    assert_eq!((s, d), (array![4.0, 6.0], array![-2.0, -2.0]));
    let (s, d): (Array1<i32>, Array1<i32>) = (&a, &b).fuse_many(|(a, b)| (&a + &b, a - b)).unwrap();
    assert_eq!((s, d), (array![3, i32::MIN, 0], array![-1, i32::MAX - 1, -6]));
}

#[test]
fn several_typed_outputs_each_as_alone() {
    use kiln::FuseManyExt;
    use ndarray::Array1;
    // int32, int64, bool and float inputs; maps of every result type, mixed with floats
    let text = "(i * 3 + j) % 7; k << 3; p & (i > 0); where(p, k, 0); x * i; ~k ^ i; i // 0; float32(i) + y";
    let runner = FusedRunner::compile_text(text).unwrap();
    let i = array![1i32, -7, i32::MAX, i32::MIN, 0];
    let j = array![5i32, 2, 1, -1, 9];
    let k = array![1i64 << 53 | 1, -1, i64::MAX, 3, i64::MIN];
    let p = array![true, false, true, true, false];
    let x = array![0.5, -1.5, 2.0, f64::NAN, -0.0];
    let y = array![1.5f32, 2.0, -0.5, 0.0, 3.0];
    let args = [
        ("i", (&i).into()),
        ("j", (&j).into()),
        ("k", (&k).into()),
        ("p", (&p).into()),
        ("x", (&x).into()),
        ("y", (&y).into()),
    ];
    let outs = runner.run_many(&args).unwrap();
    let types: Vec<&str> = outs.iter().map(Output::dtype_name).collect();
    assert_eq!(
        types,
        [
            "int32", "int64", "bool", "int64", "float64", "int64", "int32", "float32"
        ]
    );
    // values as NumPy 2.x gives them
    assert_eq!(outs[0], Output::I32(array![1, 2, 0, 1, 2].into_dyn()));
    assert_eq!(
        outs[1],
        Output::I64(array![8 << 53 | 8, -8, -8, 24, 0].into_dyn())
    );
    assert_eq!(
        outs[2],
        Output::Bool(array![true, false, true, false, false].into_dyn())
    );
    assert_eq!(
        outs[3],
        Output::I64(array![1i64 << 53 | 1, 0, i64::MAX, 3, 0].into_dyn())
    );
    assert_eq!(outs[6], Output::I32(array![0, 0, 0, 0, 0].into_dyn()));
    // one kernel of eight outputs, each output what it gives alone on the interpreter
    let all = runner.explain_rewrites(&args).unwrap();
    assert_eq!(all.last().unwrap().0.n_outputs(), 8);
    for (o, part) in text.split("; ").enumerate() {
        let alone = FusedRunner::compile_text(part)
            .unwrap()
            .with_backend(kiln::interpreter())
            .run(&args)
            .unwrap();
        match (&alone, &outs[o]) {
            (Output::F64(a), Output::F64(b)) => {
                assert!(
                    a.iter()
                        .zip(b)
                        .all(|(x, y)| x.to_bits() == y.to_bits() || x.is_nan() && y.is_nan())
                )
            }
            _ => assert_eq!(alone, outs[o], "{part}"),
        }
    }
    // the ndarray front end of several results: int32 with int64 gives int64 (NumPy 2)
    let (m, q): (Array1<i64>, Array1<i64>) = (&i, &k)
        .fuse_many(|(i, k)| (&i + &k, k.binary(kiln::BinaryOp::Shr, i)))
        .unwrap();
    assert_eq!(
        m,
        array![
            (1i64 << 53) + 2,
            -8,
            i64::MAX.wrapping_add(i32::MAX as i64),
            3 + i32::MIN as i64,
            i64::MIN
        ]
    );
    // a count outside 0..64 gives the sign (0 or -1), as NumPy's
    assert_eq!(q, array![1i64 << 52, -1, 0, 0, i64::MIN]);
}

#[test]
fn statistics_of_integers_run_in_one_pass() {
    // the compound `moments` kernel reads int32 where it is, converted to float64 as it reads each
    // (the mean and the variance in float64, as NumPy's; values from NumPy 2.4.6)
    let i = array![1i32, -7, i32::MAX, 0, 5];
    for (text, want) in [
        ("var(i)", 7.37869762432986e17),
        ("std(i) * std(i)", 7.37869762432986e17),
    ] {
        let runner = FusedRunner::compile_text(text).unwrap();
        let got = runner
            .run(&[("i", (&i).into())])
            .unwrap()
            .into_typed::<f64>()
            .unwrap();
        let got = got.into_iter().next().unwrap();
        assert!((got - want).abs() <= want * 1e-15, "{text}: {got}");
        let kernels = runner.explain_rewrites(&[("i", (&i).into())]).unwrap();
        let notes: Vec<&String> = kernels.iter().flat_map(|n| &n.2).collect();
        let compound = kernels
            .iter()
            .any(|k| matches!(k.0.kind, kiln::kiln_ir::KernelKind::Compound { .. }));
        assert!(
            compound
                && notes.iter().any(|n| n.starts_with("stored: "))
                && !notes.iter().any(|n| n.starts_with("compound: declined")),
            "{text}: {notes:?}"
        );
    }
}

#[test]
fn in_place_updates_of_integer_and_bool_arrays() {
    use kiln::FuseAssignExt;
    // fuse_assign of an int32 array: the result is int32 (NumPy 2), written over the input
    let mut i = array![1i32, -7, i32::MAX, i32::MIN, 0];
    let j = array![5i32, 2, 1, -1, 9];
    i.fuse_assign(&(&j,), |i, (j,)| (i * 3 + j) % 7).unwrap();
    assert_eq!(i, array![1, 2, 0, 1, 2]);
    // run_update of an int64 array with a bool mask, and of a bool array
    let step = FusedRunner::compile_text("where(p, k << 1, k - 1)").unwrap();
    let mut k = array![1i64, i64::MAX, -1, 3];
    let p = array![true, true, false, false];
    step.run_update("k", &[("p", (&p).into())], k.view_mut()).unwrap();
    assert_eq!(k, array![2, -2, -2, 2]);
    let mut q = array![true, false, true];
    let flip = FusedRunner::compile_text("q ^ r").unwrap();
    flip.run_update("q", &[("r", (&array![true, true, false]).into())], q.view_mut())
        .unwrap();
    assert_eq!(q, array![false, true, true]);
    // a strided (non-contiguous) integer target is written in place too
    let mut m = ndarray::Array2::<i32>::from_shape_fn((3, 4), |(r, c)| (r * 4 + c) as i32);
    FusedRunner::compile_text("m << 2")
        .unwrap()
        .run_update("m", &[], m.slice_mut(ndarray::s![.., ..;2]))
        .unwrap();
    assert_eq!(m, array![[0, 1, 8, 3], [16, 5, 24, 7], [32, 9, 40, 11]]);
    // refused as for floats: another result type, a reduction reading all of it, a broadcast input
    let mut i = array![1i32, 2, 3];
    let e = i
        .fuse_assign(&(&array![1i64, 2, 3],), |i, (k,)| i + k)
        .unwrap_err();
    assert!(e.to_string().contains("int64"), "{e}");
    let e = FusedRunner::compile_text("i - sum(i)")
        .unwrap()
        .run_update("i", &[], i.view_mut())
        .unwrap_err();
    assert!(e.to_string().contains("reads all of it"), "{e}");
    let mut one = array![1i32];
    let e = one
        .fuse_assign(&(&array![1i32, 2, 3],), |o, (i,)| o + i)
        .unwrap_err();
    assert!(e.to_string().contains("broadcast"), "{e}");
    assert_eq!(i, array![1, 2, 3]);
    assert_eq!(one, array![1]);
}

#[test]
fn truth_values_of_float_inputs_take_numpys_types() {
    // typing by NumPy 2's rules runs for every kernel: a comparison of floats is a bool array, so
    // what is built on it is typed as NumPy types it (the one rule of run, run_many and prepare)
    let a = array![-1.0, 2.0, 3.0];
    let b = array![1.0, -2.0, 3.0];
    let f = array![1.0f32, 7.0, 3.0];
    let args: [(&str, ArrayArg<'_>); 3] = [("a", (&a).into()), ("b", (&b).into()), ("f", (&f).into())];
    let cases: &[(&str, Output)] = &[
        (
            "(a > 0) + (b > 0)",
            Output::Bool(array![true, true, true].into_dyn()),
        ),
        (
            "(a > 0) * (b > 0)",
            Output::Bool(array![false, false, true].into_dyn()),
        ),
        ("(a > 0) * 3", Output::I64(array![0, 3, 3].into_dyn())),
        ("where(a > 0, 1, 0)", Output::I64(array![0, 1, 1].into_dyn())),
        ("cumsum(a > 0)", Output::I64(array![0, 1, 2].into_dyn())),
        (
            "cummax(a > 0)",
            Output::Bool(array![false, true, true].into_dyn()),
        ),
        ("sum(a > 0)", Output::I64(ndarray::arr0(2).into_dyn())),
        ("mean(a > 0)", Output::F64(ndarray::arr0(2.0 / 3.0).into_dyn())),
        ("mean(f > 2)", Output::F64(ndarray::arr0(2.0 / 3.0).into_dyn())),
        ("1 + 1", Output::I64(ndarray::arr0(2).into_dyn())),
        // a Python float with a bool array is float64, beside float32 inputs too
        (
            "0.25 * (f < 5) + 0.33 * (f >= 5)",
            Output::F64(array![0.25, 0.33, 0.25].into_dyn()),
        ),
        // kernels the float path computes as NumPy types them keep it
        ("(a > 0) * a", Output::F64(array![-0.0, 2.0, 3.0].into_dyn())),
        (
            "where(a > 0, a, 0)",
            Output::F64(array![0.0, 2.0, 3.0].into_dyn()),
        ),
        ("f * 2 + 1", Output::F32(array![3.0f32, 15.0, 7.0].into_dyn())),
        (
            "(a > 0) & (b > 0)",
            Output::Bool(array![false, false, true].into_dyn()),
        ),
        // typed kernels that read a float32 input beside a float64 one, each in its own type (the
        // float path's result type is float64: `abs` of a bool is the bool)
        (
            "abs((a > 0) & (f > 2))",
            Output::Bool(array![false, true, true].into_dyn()),
        ),
        ("abs(f > a)", Output::Bool(array![true, true, false].into_dyn())),
    ];
    // float32 arithmetic in float32 there: 3·0.1 rounds to 0.3000000119 in float32 (NumPy: True),
    // to 0.30000000000000004 in float64
    let (f3, a3) = (array![3.0f32], array![0.3000000001f64]);
    for backend in ["jit", "interp"] {
        let runner = FusedRunner::compile_text("abs(f * 0.1 > a)")
            .unwrap()
            .with_backend(kiln::backend_by_name(backend).unwrap());
        let got = runner.run(&[("f", (&f3).into()), ("a", (&a3).into())]).unwrap();
        assert_eq!(got, Output::Bool(array![true].into_dyn()), "{backend}");
    }
    for (text, want) in cases {
        let used: Vec<(&str, ArrayArg<'_>)> = args
            .iter()
            .filter(|(n, _)| text.contains(n))
            .map(|(n, a)| (*n, a.clone()))
            .collect();
        for backend in ["jit", "interp"] {
            let runner = FusedRunner::compile_text(text)
                .unwrap()
                .with_backend(kiln::backend_by_name(backend).unwrap());
            let got = runner.run(&used).unwrap();
            assert_eq!(&got, want, "{text} on {backend}");
            // several results: the same rule
            let many = FusedRunner::compile_text(&format!("{text}; {text}"))
                .unwrap()
                .with_backend(kiln::backend_by_name(backend).unwrap());
            for got in many.run_many(&used).unwrap() {
                assert_eq!(&got, want, "{text}; {text} on {backend}");
            }
        }
    }
    // the float path keeps what it computed as NumPy types it: no typed kernel
    for text in [
        "(a > 0) * a",
        "where(a > 0, a, 0)",
        "sum(where(a > 0, a * b, 0))",
        "mean(a > 0)",
    ] {
        let runner = FusedRunner::compile_text(text).unwrap();
        let used: Vec<(&str, ArrayArg<'_>)> = args[..2]
            .iter()
            .filter(|(n, _)| text.contains(n))
            .map(|(n, a)| (*n, a.clone()))
            .collect();
        let notes: Vec<String> = runner
            .explain_rewrites(&used)
            .unwrap()
            .into_iter()
            .flat_map(|k| k.2)
            .collect();
        let notes = notes.join("\n");
        assert!(!notes.contains("typed kernel"), "{text}: {notes}");
    }
    // NumPy's refusal
    let e = FusedRunner::compile_text("-(a > 0)")
        .unwrap()
        .run(&[("a", (&a).into())])
        .unwrap_err();
    assert!(e.to_string().contains("`-` of a bool"), "{e}");
    // and beside a function of constants, which folds to a strong float64 and leaves the kernel on
    // the float path: typed all the same (the fuzz finding `recip_of_bool_beside_a_folded_function`)
    for text in ["-(a > 0) + exp(0.0)", "-(a > 0) < sin(1.0)"] {
        let e = FusedRunner::compile_text(text)
            .unwrap()
            .run(&[("a", (&a).into())])
            .unwrap_err();
        assert!(e.to_string().contains("`-` of a bool"), "{text}: {e}");
    }
    let x = Expr::input("x");
    for e in [
        x.not().recip() + Expr::from(0.0f64).exp(),
        x.not().recip().lt(Expr::from(1.0f64).sin()),
    ] {
        let jit = FusedRunner::compile(&e).unwrap();
        for runner in [jit.clone(), jit.with_backend(kiln::interpreter())] {
            let err = runner.run(&[("x", (&a).into())]).unwrap_err();
            assert!(err.to_string().contains("reciprocal of bool"), "{err}");
        }
    }
}

/// A mean whose values are float32 computed through float64 intermediates is float32, from `run`
/// and from `run_into` alike (the typed kernel's type, not the float path's dtype; found by the
/// parity suite's random kernels, `mean(where(x + index(1), x, x))`).
#[test]
fn a_typed_mean_runs_into_its_own_type() {
    let x = ndarray::array![1.5f32, -2.0, 4.25, 0.5];
    let k = ndarray::array![0i64, 1, 2, 3];
    // `x + k` is float64 (float32 with int64), the `where` float32 again
    let runner = FusedRunner::compile_text("mean(where(x + k, x, x))").unwrap();
    let args: [(&str, ArrayArg<'_>); 2] = [("x", (&x).into()), ("k", (&k).into())];
    let Output::F32(want) = runner.run(&args).unwrap() else {
        panic!("a float32 mean")
    };
    let mut out = ndarray::arr0(0.0f32).into_dyn();
    runner.run_into(&args, out.view_mut()).unwrap();
    assert_eq!(out, want);
}
