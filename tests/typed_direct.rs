//! The direct call of bound handles for every element type (issue 24 item 2): a handle bound to
//! integer, bool, complex, byte-string or mixed inputs calls the compiled kernel straight
//! ([`kiln::Prepared::is_direct`]), as a float handle does, through `run`, `call`, `run_into` and
//! the runner's ordinary `call` (its bindings); every result bit for bit the interpreter's, at
//! every length (0, 1, below and above the vector width); and every check on the caller's buffers
//! still runs: a wrong count, type, shape or layout is an `Err` naming the input, never a wrong
//! answer.

use kiln::kiln_ir::num_complex::{Complex32, Complex64};
use kiln::{ArrayArg, Fresh, FusedRunner, Output, Strings};
use ndarray::{Array1, Array2, ArrayD, s};

/// Bit for bit, any NaN equal to any NaN.
fn same(a: &Output, b: &Output) -> bool {
    fn eq<T: Copy>(x: &ArrayD<T>, y: &ArrayD<T>, bits: impl Fn(T) -> Vec<u64>) -> bool {
        x.shape() == y.shape() && x.iter().zip(y).all(|(&p, &q)| bits(p) == bits(q))
    }
    let f = |v: f64| if v.is_nan() { u64::MAX } else { v.to_bits() };
    let g = |v: f32| {
        if v.is_nan() {
            u64::MAX
        } else {
            u64::from(v.to_bits())
        }
    };
    match (a, b) {
        (Output::F64(x), Output::F64(y)) => eq(x, y, |v| vec![f(v)]),
        (Output::F32(x), Output::F32(y)) => eq(x, y, |v| vec![g(v)]),
        (Output::I64(x), Output::I64(y)) => x == y,
        (Output::I32(x), Output::I32(y)) => x == y,
        (Output::Bool(x), Output::Bool(y)) => x == y,
        (Output::C128(x), Output::C128(y)) => eq(x, y, |z: Complex64| vec![f(z.re), f(z.im)]),
        (Output::C64(x), Output::C64(y)) => eq(x, y, |z: Complex32| vec![g(z.re), g(z.im)]),
        (Output::Bytes(x), Output::Bytes(y)) => x == y,
        _ => false,
    }
}

/// The inputs of the cases, of `n` elements each.
struct Inputs {
    i: Array1<i64>,
    j: Array1<i32>,
    b: Array1<bool>,
    x: Array1<f64>,
    z: Array1<Complex64>,
    w: Array1<Complex32>,
    s: Vec<u8>,
}

impl Inputs {
    fn new(n: usize) -> Inputs {
        let words: [&[u8]; 4] = [b"x", b"abc", b"", b"xy"];
        let mut s = Vec::new();
        for k in 0..n {
            let word = words[k % 4];
            s.extend_from_slice(word);
            s.resize(s.len() + 3 - word.len(), 0);
        }
        Inputs {
            i: (0..n as i64).map(|k| k * 7919 - 300).collect(),
            j: (0..n as i32).map(|k| k % 13 - 6).collect(),
            b: (0..n).map(|k| k % 3 == 0).collect(),
            x: (0..n).map(|k| (k as f64 * 0.37).sin()).collect(),
            z: (0..n)
                .map(|k| Complex64::new(k as f64 * 0.5 - 3.0, 1.0 - k as f64 * 0.25))
                .collect(),
            w: (0..n)
                .map(|k| Complex32::new(k as f32 * 0.5, -(k as f32)))
                .collect(),
            s,
        }
    }

    /// The named inputs `names` (i int64, j int32, b bool, x float64, z complex128, w complex64,
    /// s byte strings of width 3).
    fn args(&self, names: &[&'static str]) -> Vec<(&'static str, ArrayArg<'_>)> {
        let n = self.i.len();
        names
            .iter()
            .map(|&name| {
                let a: ArrayArg<'_> = match name {
                    "i" => (&self.i).into(),
                    "j" => (&self.j).into(),
                    "b" => (&self.b).into(),
                    "x" => (&self.x).into(),
                    "z" => (&self.z).into(),
                    "w" => (&self.w).into(),
                    "s" => ArrayArg::Bytes(Strings::new(&self.s, 3, &[n]).unwrap()),
                    other => unreachable!("no input {other}"),
                };
                (name, a)
            })
            .collect()
    }
}

/// Expressions of every element type (and their inputs): maps, reductions, a scan.
const CASES: &[(&str, &[&str])] = &[
    ("i*2 + 1", &["i"]),
    ("(i * 3 + j) % 7", &["i", "j"]),
    ("j * 2 - 1", &["j"]),
    ("b & (i > 0)", &["b", "i"]),
    ("where(b, i, j)", &["b", "i", "j"]),
    ("i * 0.5 + x", &["i", "x"]),
    ("z * z + 1", &["z"]),
    ("w * w", &["w"]),
    ("abs(z) + real(z)", &["z"]),
    ("s == b'x'", &["s"]),
    ("sum(i * j)", &["i", "j"]),
    ("sum(z * z)", &["z"]),
    ("max(j)", &["j"]),
    ("cumsum(i)", &["i"]),
];

#[test]
fn typed_handles_call_the_compiled_kernel_and_match_the_interpreter() {
    for n in [0usize, 1, 3, 17, 100] {
        let data = Inputs::new(n);
        for &(expr, names) in CASES {
            if n == 0 && expr == "max(j)" {
                continue; // the max of nothing is an error (tested elsewhere)
            }
            let named = data.args(names);
            let plain: Vec<ArrayArg<'_>> = named.iter().map(|(_, a)| a.clone()).collect();
            let want = FusedRunner::compile_text(expr)
                .unwrap()
                .with_backend(kiln::interpreter())
                .run(&named)
                .unwrap_or_else(|e| panic!("{expr}: {e}"));
            let runner = FusedRunner::compile_text(expr).unwrap();
            let h = runner.prepared(&named).unwrap();
            assert!(
                h.is_direct(),
                "{expr} (n = {n}): the handle takes the direct call"
            );
            for _ in 0..2 {
                let got = h.run(&plain).unwrap();
                assert!(same(&got, &want), "{expr} (n = {n}): {got:?} against {want:?}");
                let got = h.call(&plain, Fresh).unwrap();
                assert!(same(&got, &want), "{expr} (n = {n}): call");
                // the runner's ordinary call, bound on its first call
                let got = runner.call(&named, Fresh).unwrap();
                assert!(same(&got, &want), "{expr} (n = {n}): the runner's call");
            }
        }
    }
}

#[test]
fn typed_float_results_go_into_given_arrays() {
    let data = Inputs::new(37);
    for (expr, names) in [
        ("abs(z) + real(z)", &["z"][..]),
        ("i * 0.5 + x", &["i", "x"]),
        ("sum(i * j) * 0.5", &["i", "j"]),
    ] {
        let named = data.args(names);
        let plain: Vec<ArrayArg<'_>> = named.iter().map(|(_, a)| a.clone()).collect();
        let runner = FusedRunner::compile_text(expr).unwrap();
        let want = runner.run(&named).unwrap();
        let h = runner.prepared(&named).unwrap();
        let mut out = ArrayD::<f64>::zeros(h.output_shape());
        h.run_into(&plain, out.view_mut()).unwrap();
        assert!(same(&Output::F64(out.clone()), &want), "{expr}: run_into");
        let mut again = ArrayD::<f64>::zeros(h.output_shape());
        runner.call(&named, again.view_mut()).unwrap();
        assert!(
            same(&Output::F64(again), &want),
            "{expr}: the runner's call into an array"
        );
        // an output of another type is refused, not converted silently
        let mut wrong = ArrayD::<f32>::zeros(h.output_shape());
        assert!(
            h.run_into(&plain, wrong.view_mut()).is_err(),
            "{expr}: float32 out"
        );
    }
}

#[test]
fn strided_and_unaligned_typed_inputs_are_read_as_they_are() {
    // a strided int64 view, read in place by the compiled code
    let m = Array2::from_shape_fn((5, 40), |(r, c)| (r * 40 + c) as i64 - 77);
    let v = m.slice(s![.., 1..]);
    let runner = FusedRunner::compile_text("i * 3 - 1").unwrap();
    let h = runner.prepared(&[("i", v.into())]).unwrap();
    let want = FusedRunner::compile_text("i * 3 - 1")
        .unwrap()
        .with_backend(kiln::interpreter())
        .run(&[("i", v.into())])
        .unwrap();
    assert!(same(&h.run(&[v.into()]).unwrap(), &want));
    // the same shape with other strides is refused by the handle (bound to the first layout) and
    // run right by the runner
    let other = m.slice(s![.., ..39]);
    let wide = Array2::from_shape_fn((5, 39), |(r, c)| (r * 40 + c) as i64 - 77);
    let wide_want = runner.run(&[("i", (&wide).into())]).unwrap();
    assert!(same(
        &runner.call(&[("i", other.into())], Fresh).unwrap(),
        &wide_want
    ));
    // byte strings at an address their width does not divide: read in place, the same answer
    let words = b"xx\0abcx\0\0\0\0\0x\0\0";
    let runner = FusedRunner::compile_text("s == b'x'").unwrap();
    for start in 0..3 {
        let strings = Strings::new(&words[start..start + 12], 3, &[4]).unwrap();
        let aligned = words[start..start + 12].to_vec();
        let want = FusedRunner::compile_text("s == b'x'")
            .unwrap()
            .with_backend(kiln::interpreter())
            .run(&[("s", ArrayArg::Bytes(Strings::new(&aligned, 3, &[4]).unwrap()))])
            .unwrap();
        for _ in 0..2 {
            let got = runner
                .call(&[("s", ArrayArg::Bytes(strings.clone()))], Fresh)
                .unwrap();
            assert!(same(&got, &want), "start {start}: {got:?} against {want:?}");
        }
    }
}

#[test]
fn typed_handles_refuse_wrong_inputs_by_name() {
    let data = Inputs::new(10);
    let runner = FusedRunner::compile_text("(i * 3 + j) % 7").unwrap();
    let h = runner.prepared(&data.args(&["i", "j"])).unwrap();
    assert!(h.is_direct());
    let err = |r: kiln::Result<Output>| r.err().map(|e| e.to_string()).unwrap_or_default();
    // a count other than the bound one
    let e = err(h.run(&[(&data.i).into()]));
    assert!(e.contains("1 inputs given, 2 bound"), "{e}");
    // another type: int32 where int64 was bound
    let e = err(h.run(&[(&data.j).into(), (&data.j).into()]));
    assert!(e.contains("input 0 ('i')") && e.contains("i32"), "{e}");
    // another shape
    let short: Array1<i32> = data.j.slice(s![..5]).to_owned();
    let e = err(h.run(&[(&data.i).into(), (&short).into()]));
    assert!(e.contains("input 1 ('j')") && e.contains("[5]"), "{e}");
    // a complex input where a complex128 was bound
    let h = runner_of("z * 2").prepared(&data.args(&["z"])).unwrap();
    let e = err(h.run(&[(&data.w).into()]));
    assert!(e.contains("input 0 ('z')"), "{e}");
    // the runner's call with a wrong name or type binds anew and says what is wrong
    let r = runner_of("i + 1");
    r.call(&data.args(&["i"]), Fresh).unwrap();
    let e = r.call(&[("k", (&data.i).into())], Fresh).unwrap_err().to_string();
    assert!(e.contains('i'), "{e}");
    let bools = r.call(&[("i", (&data.b).into())], Fresh).unwrap();
    let want = runner_of("i + 1")
        .with_backend(kiln::interpreter())
        .run(&[("i", (&data.b).into())])
        .unwrap();
    assert!(same(&bools, &want), "a bool input after an int64 one: {bools:?}");
}

fn runner_of(expr: &str) -> FusedRunner {
    FusedRunner::compile_text(expr).unwrap()
}

#[test]
fn results_of_every_type_go_into_given_buffers() {
    use kiln::OutSlice;
    let data = Inputs::new(23);
    let want = |expr: &str, names: &[&'static str]| runner_of(expr).run(&data.args(names)).unwrap();
    let plain = |names: &[&'static str]| -> Vec<ArrayArg<'_>> {
        data.args(names).into_iter().map(|(_, a)| a).collect()
    };
    let bind = |expr: &str, names: &[&'static str]| runner_of(expr).prepared(&data.args(names)).unwrap();
    // int64
    let h = bind("(i * 3 + j) % 7", &["i", "j"]);
    let mut out = vec![0i64; 23];
    h.run_into_out(&plain(&["i", "j"]), OutSlice::I64(&mut out))
        .unwrap();
    let got = Output::I64(ArrayD::from_shape_vec(vec![23], out).unwrap());
    assert!(same(&got, &want("(i * 3 + j) % 7", &["i", "j"])));
    // bool, from byte strings at any address
    let h = bind("s == b'x'", &["s"]);
    let mut out = vec![false; 23];
    h.run_into_out(&plain(&["s"]), OutSlice::Bool(&mut out)).unwrap();
    let got = Output::Bool(ArrayD::from_shape_vec(vec![23], out).unwrap());
    assert!(same(&got, &want("s == b'x'", &["s"])));
    // complex128, and a reduction's one element
    let h = bind("z * z + 1", &["z"]);
    let mut out = vec![Complex64::new(0.0, 0.0); 23];
    h.run_into_out(&plain(&["z"]), OutSlice::C128(&mut out)).unwrap();
    let got = Output::C128(ArrayD::from_shape_vec(vec![23], out).unwrap());
    assert!(same(&got, &want("z * z + 1", &["z"])));
    let h = bind("sum(i * j)", &["i", "j"]);
    let mut one = [0i64];
    h.run_into_out(&plain(&["i", "j"]), OutSlice::I64(&mut one))
        .unwrap();
    assert!(same(
        &Output::I64(ndarray::arr0(one[0]).into_dyn()),
        &want("sum(i * j)", &["i", "j"])
    ));
    // another type or length is an error naming both; nothing is written
    let h = bind("(i * 3 + j) % 7", &["i", "j"]);
    let mut wrong = vec![7i32; 23];
    let e = h
        .run_into_out(&plain(&["i", "j"]), OutSlice::I32(&mut wrong))
        .unwrap_err()
        .to_string();
    assert!(e.contains("i32") && e.contains("i64"), "{e}");
    assert!(wrong.iter().all(|&v| v == 7));
    let mut short = vec![0i64; 22];
    assert!(
        h.run_into_out(&plain(&["i", "j"]), OutSlice::I64(&mut short))
            .is_err()
    );
}

#[test]
fn large_typed_calls_cut_into_work_units_agree() {
    use kiln::OutSlice;
    let n = 300_007;
    let data = Inputs::new(n);
    for (expr, names) in [
        ("(i * 3 + j) % 7", &["i", "j"][..]),
        ("b & (i > 0)", &["b", "i"]),
        ("z * z + 1", &["z"]),
        ("sum(i * j)", &["i", "j"]),
    ] {
        let named = data.args(names);
        let plain: Vec<ArrayArg<'_>> = named.iter().map(|(_, a)| a.clone()).collect();
        let want = runner_of(expr)
            .with_backend(kiln::interpreter())
            .run(&named)
            .unwrap();
        let runner = runner_of(expr).with_threads(3).with_threshold(1000);
        let h = runner.prepared(&named).unwrap();
        assert!(h.is_direct(), "{expr}");
        let got = h.run(&plain).unwrap();
        assert!(same(&got, &want), "{expr}: fresh");
        let mut into = Output::I64(ArrayD::zeros(h.output_shape()));
        if let Output::I64(a) = &mut into
            && h.output_type() == kiln::ElemType::I64
        {
            let s = a.as_slice_mut().unwrap();
            h.run_into_out(&plain, OutSlice::I64(s)).unwrap();
            assert!(same(&into, &want), "{expr}: into");
        }
    }
}

/// The result of `run` into a fresh buffer of type `t` and length `n`, as the bits of each element
/// (any NaN as one value), for comparing two runs.
fn bits_of(
    t: kiln::ElemType,
    n: usize,
    run: impl FnOnce(kiln::OutSlice<'_>) -> kiln::Result<()>,
) -> kiln::Result<Vec<u64>> {
    use kiln::OutSlice;
    let f = |v: f64| if v.is_nan() { u64::MAX } else { v.to_bits() };
    Ok(match t {
        kiln::ElemType::F64 => {
            let mut o = vec![0.0; n];
            run(OutSlice::F64(&mut o))?;
            o.into_iter().map(f).collect()
        }
        kiln::ElemType::F32 => {
            let mut o = vec![0.0f32; n];
            run(OutSlice::F32(&mut o))?;
            o.into_iter().map(|v| f(f64::from(v))).collect()
        }
        kiln::ElemType::I64 => {
            let mut o = vec![0i64; n];
            run(OutSlice::I64(&mut o))?;
            o.into_iter().map(|v| v as u64).collect()
        }
        kiln::ElemType::I32 => {
            let mut o = vec![0i32; n];
            run(OutSlice::I32(&mut o))?;
            o.into_iter().map(|v| v as u64).collect()
        }
        kiln::ElemType::Bool => {
            let mut o = vec![false; n];
            run(OutSlice::Bool(&mut o))?;
            o.into_iter().map(u64::from).collect()
        }
        kiln::ElemType::C64 => {
            let mut o = vec![Complex32::default(); n];
            run(OutSlice::C64(&mut o))?;
            o.into_iter()
                .flat_map(|z| [f(z.re.into()), f(z.im.into())])
                .collect()
        }
        kiln::ElemType::C128 => {
            let mut o = vec![Complex64::default(); n];
            run(OutSlice::C128(&mut o))?;
            o.into_iter().flat_map(|z| [f(z.re), f(z.im)]).collect()
        }
        other => panic!("no buffer of {other}"),
    })
}

/// Input `name` of `d` as its own elements ([`Inputs::args`]'s names).
fn stored<'a>(d: &'a Inputs, name: &str) -> kiln_jit::Stored<'a> {
    use kiln_jit::Stored;
    match name {
        "i" => Stored::I64(d.i.as_slice().unwrap()),
        "j" => Stored::I32(d.j.as_slice().unwrap()),
        "b" => Stored::bools(d.b.as_slice().unwrap()),
        "x" => Stored::F64(d.x.as_slice().unwrap()),
        "z" => Stored::C128(d.z.as_slice().unwrap()),
        "w" => Stored::C64(d.w.as_slice().unwrap()),
        "s" => Stored::Bytes(&d.s, 3),
        other => unreachable!("no input {other}"),
    }
}

/// `run_stored` (each input's own elements in C order, no view made: the Python binding's call of
/// C-contiguous typed inputs) gives what `run_into_out` gives, for every case and length; a handle
/// bound to a transposed input runs it as `run_into_out` does; wrong inputs are refused by name.
#[test]
fn typed_handles_run_on_their_own_elements() {
    use kiln_jit::Stored;
    // beside the typed cases: a float map and whole-array fold (the serial paths on the elements),
    // and plans of two kernels (the runner's run, on the elements viewed in their bound shapes)
    let more: &[(&str, &[&str])] = &[
        ("x * 2 + 1", &["x"]),
        ("sum(x * x)", &["x"]),
        ("x - mean(x)", &["x"]),
        ("i - max(i) + j", &["i", "j"]),
    ];
    for n in [0usize, 1, 3, 17, 100] {
        let data = Inputs::new(n);
        for &(expr, names) in CASES.iter().chain(more) {
            if n == 0 && (expr == "max(j)" || expr.contains("max(i)")) {
                continue;
            }
            let named = data.args(names);
            let plain: Vec<ArrayArg<'_>> = named.iter().map(|(_, a)| a.clone()).collect();
            let parts: Vec<Stored<'_>> = names.iter().map(|&name| stored(&data, name)).collect();
            let h = FusedRunner::compile_text(expr).unwrap().prepared(&named).unwrap();
            let (t, len) = (h.output_type(), h.output_shape().iter().product());
            let want = bits_of(t, len, |o| h.run_into_out(&plain, o)).unwrap();
            for _ in 0..2 {
                let got = bits_of(t, len, |o| h.run_stored(&parts, o)).unwrap();
                assert_eq!(got, want, "{expr} (n = {n})");
            }
        }
    }
    // bound to a transposed view: the elements in C order of the bound shape, as run_into_out
    let m = Array2::from_shape_fn((3, 5), |(r, c)| (r * 5 + c) as i64 - 4);
    let t = m.t();
    let runner = FusedRunner::compile_text("i * 3 - 1").unwrap();
    let h = runner.prepared(&[("i", t.into())]).unwrap();
    let c_order: Vec<i64> = t.iter().copied().collect();
    let want = bits_of(kiln::ElemType::I64, 15, |o| h.run_into_out(&[t.into()], o)).unwrap();
    let got = bits_of(kiln::ElemType::I64, 15, |o| {
        h.run_stored(&[Stored::I64(&c_order)], o)
    })
    .unwrap();
    assert_eq!(got, want);
    // wrong inputs, by name
    let data = Inputs::new(10);
    let h = FusedRunner::compile_text("where(b, i, j)")
        .unwrap()
        .prepared(&data.args(&["b", "i", "j"]))
        .unwrap();
    let err = |parts: &[Stored<'_>]| {
        bits_of(kiln::ElemType::I64, 10, |o| h.run_stored(parts, o))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    };
    let (b, i, j) = (stored(&data, "b"), stored(&data, "i"), stored(&data, "j"));
    assert!(err(&[b.clone(), i.clone()]).contains("2 inputs given, 3 bound"));
    // a handle of several results: the call of one names itself
    let two = FusedRunner::compile_text("i * 2; i + 1").unwrap();
    let h2 = two.prepared(&data.args(&["i"])).unwrap();
    let e = bits_of(kiln::ElemType::I64, 10, |o| {
        h2.run_stored(std::slice::from_ref(&i), o)
    })
    .unwrap_err();
    assert!(e.to_string().contains("run_stored gives one result"), "{e}");
    assert!(err(&[b.clone(), j.clone(), j.clone()]).contains("input 1 ('i')"));
    let short = Stored::I32(&[1, 2, 3]);
    assert!(err(&[b.clone(), i.clone(), short]).contains("input 2 ('j')"));
    // byte strings with a trailing part of one: refused
    let h = FusedRunner::compile_text("s == b'x'")
        .unwrap()
        .prepared(&data.args(&["s"]))
        .unwrap();
    let mut s = data.s.clone();
    s.push(b'x');
    let e = bits_of(kiln::ElemType::Bool, 10, |o| {
        h.run_stored(&[Stored::Bytes(&s, 3)], o)
    });
    assert!(e.err().is_some_and(|e| e.to_string().contains("input 0 ('s')")));
    // and a result of another type
    let e = bits_of(kiln::ElemType::I64, 10, |o| {
        h.run_stored(&[Stored::Bytes(&data.s, 3)], o)
    });
    assert!(e.is_err());
}

/// Bool inputs given as their bytes (`Stored::Bool`, as the Python binding passes NumPy's memory,
/// unchecked): compiled code reads any nonzero byte as true, as NumPy's logical functions; a call
/// that views the inputs as arrays (a plan of two kernels, run on arrays) reads a copy of the
/// bytes made true where nonzero (a Rust `bool` holds 0 or 1 only): the same results as the
/// arrays of bools give.
#[test]
fn bool_bytes_are_true_where_nonzero() {
    use kiln_jit::Stored;
    for n in [1usize, 3, 17, 100] {
        let data = Inputs::new(n);
        let bytes: Vec<u8> = data
            .b
            .iter()
            .enumerate()
            .map(|(k, &t)| if t { [1, 2, 255, 128][k % 4] } else { 0 })
            .collect();
        for &(expr, names) in &[
            ("b & (i > 0)", &["b", "i"][..]),
            ("where(b, i, j)", &["b", "i", "j"][..]),
            ("~b", &["b"][..]),
            ("sum(b)", &["b"][..]),
            ("any(b)", &["b"][..]),
            ("x * b", &["x", "b"][..]),
        ] {
            let named = data.args(names);
            let plain: Vec<ArrayArg<'_>> = named.iter().map(|(_, a)| a.clone()).collect();
            let parts: Vec<Stored<'_>> = names
                .iter()
                .map(|&name| match name {
                    "b" => Stored::Bool(&bytes),
                    other => stored(&data, other),
                })
                .collect();
            let h = FusedRunner::compile_text(expr).unwrap().prepared(&named).unwrap();
            let (t, len) = (h.output_type(), h.output_shape().iter().product());
            let want = bits_of(t, len, |o| h.run_into_out(&plain, o)).unwrap();
            let got = bits_of(t, len, |o| h.run_stored(&parts, o)).unwrap();
            assert_eq!(got, want, "{expr} (n = {n})");
        }
        // two kernels: the runner's run, on the elements viewed as arrays (Rust bools: the bytes
        // copied true where nonzero)
        let expr = "where(b, i - max(i), j)";
        let named = data.args(&["b", "i", "j"]);
        let h = FusedRunner::compile_text(expr).unwrap().prepared(&named).unwrap();
        let (i, j) = (stored(&data, "i"), stored(&data, "j"));
        let plain: Vec<ArrayArg<'_>> = named.iter().map(|(_, a)| a.clone()).collect();
        let want = bits_of(kiln::ElemType::I64, n, |o| h.run_into_out(&plain, o)).unwrap();
        let got = bits_of(kiln::ElemType::I64, n, |o| {
            h.run_stored(&[Stored::Bool(&bytes), i.clone(), j.clone()], o)
        })
        .unwrap();
        assert_eq!(got, want, "{expr} (n = {n})");
    }
}

/// A handle bound to a strided float64 view (rows of 100 read in place with the view's strides)
/// and called with the view's elements in C order (`run_stored_many`, `update_stored`): the
/// elements are read in C order, not with the bound strides, so the results are the arrays' call's.
#[test]
fn elements_given_for_a_strided_binding_are_read_in_c_order() {
    use kiln::OutSlice;
    use kiln_jit::Stored;
    let big = Array2::from_shape_fn((6, 200), |(i, j)| (i * 200 + j) as f64 * 0.25 - 40.0);
    let v = big.slice(s![.., ..;2]);
    let c_order: Vec<f64> = v.iter().copied().collect();
    // several results
    let two = FusedRunner::compile_text("v * 2; v + 1").unwrap();
    let h = two.prepared(&[("v", v.into())]).unwrap();
    let want = two.run_many(&[("v", v.into())]).unwrap();
    let (mut a, mut b) = (vec![0.0; 600], vec![0.0; 600]);
    h.run_stored_many(
        &[Stored::F64(&c_order)],
        &mut [OutSlice::F64(&mut a), OutSlice::F64(&mut b)],
    )
    .unwrap();
    assert_eq!(
        Output::F64(Array2::from_shape_vec((6, 100), a).unwrap().into_dyn()),
        want[0]
    );
    assert_eq!(
        Output::F64(Array2::from_shape_vec((6, 100), b).unwrap().into_dyn()),
        want[1]
    );
    // an update of p with v bound strided
    let p0 = Array2::from_shape_fn((6, 100), |(i, j)| (i * 3 + j) as f64);
    let step = FusedRunner::compile_text("p + v * 0.5").unwrap();
    let hu = step
        .prepared_update(&[("p", (&p0).into()), ("v", v.into())], &["p"])
        .unwrap();
    let mut p = p0.clone();
    hu.update_stored(
        &mut [OutSlice::F64(p.as_slice_mut().unwrap())],
        &[Stored::F64(&c_order)],
    )
    .unwrap();
    assert_eq!(p, &p0 + &(&v * 0.5));
}

/// Reductions of bool and integer values into given outputs (the ordinary call, and a handle's
/// call into a buffer): below the threshold the bound serial fold in int64 words, narrowed to
/// the result's type: bit for bit the interpreter's, whole arrays and along either axis, every
/// length (0, 1, below and above the vector width); a min or max of nothing is an error both ways.
#[test]
fn integer_reductions_into_given_outputs_match_the_interpreter() {
    use kiln::OutSlice;
    use ndarray::IxDyn;
    let exprs = [
        "sum(i)",
        "prod(j)",
        "min(i)",
        "max(j)",
        "any(b)",
        "all(b)",
        "sum(b)",
        "max(b)",
        "sum(where(b, i, 0))",
        "min(i * j)",
        "sum(m, axis=1)",
        "min(m, axis=0)",
        "max(mj, axis=1)",
        "prod(mj, axis=0)",
        "sum(mj, axis=0)",
        "min(mj, axis=0)",
        "any(mb, axis=0)",
        "all(mb, axis=1)",
        "sum(mb, axis=1)",
    ];
    for n in [0usize, 1, 3, 17, 100] {
        let data = Inputs::new(n);
        let m = Array2::from_shape_fn((3, n), |(r, c)| (r * 31 + c) as i64 * 97 - 1000);
        let mj = m.mapv(|v| (v % 50) as i32);
        let mb = m.mapv(|v| v % 3 != 0);
        for expr in exprs {
            let runner = FusedRunner::compile_text(expr).unwrap();
            let mut named = data.args(&["i", "j", "b"]);
            named.extend([("m", (&m).into()), ("mj", (&mj).into()), ("mb", (&mb).into())]);
            let used = runner.input_names().to_vec();
            named.retain(|(name, _)| used.iter().any(|u| u == name));
            let oracle = FusedRunner::compile_text(expr)
                .unwrap()
                .with_backend(kiln::interpreter());
            let want = oracle.run(&named);
            let Ok(want) = want else {
                // a min or max of nothing: the same error through the compiled call, into an
                // output of the result's type and shape
                let shape: &[usize] = if expr.contains("axis=1") { &[3] } else { &[] };
                let e = if expr.contains("mj") || expr.contains("(j)") {
                    let mut out = ArrayD::<i32>::zeros(IxDyn(shape));
                    runner.call(&named, out.view_mut()).unwrap_err()
                } else if expr.contains("(b)") || expr.contains("mb") {
                    let mut out = ArrayD::<bool>::from_elem(IxDyn(shape), false);
                    runner.call(&named, out.view_mut()).unwrap_err()
                } else {
                    let mut out = ArrayD::<i64>::zeros(IxDyn(shape));
                    runner.call(&named, out.view_mut()).unwrap_err()
                };
                assert!(e.to_string().contains("empty"), "{expr} (n = {n}): {e}");
                continue;
            };
            let h = runner.prepared(&named).unwrap();
            let plain: Vec<ArrayArg<'_>> = named.iter().map(|(_, a)| a.clone()).collect();
            for _ in 0..2 {
                let got = match &want {
                    Output::I64(w) => {
                        let mut out = ArrayD::<i64>::from_elem(w.shape(), 7);
                        runner.call(&named, out.view_mut()).unwrap();
                        let mut buf = vec![7i64; w.len()];
                        h.run_into_out(&plain, OutSlice::I64(&mut buf)).unwrap();
                        assert_eq!(buf, out.iter().copied().collect::<Vec<_>>(), "{expr} (n = {n})");
                        Output::I64(out)
                    }
                    Output::I32(w) => {
                        let mut out = ArrayD::<i32>::from_elem(w.shape(), 7);
                        runner.call(&named, out.view_mut()).unwrap();
                        let mut buf = vec![7i32; w.len()];
                        h.run_into_out(&plain, OutSlice::I32(&mut buf)).unwrap();
                        assert_eq!(buf, out.iter().copied().collect::<Vec<_>>(), "{expr} (n = {n})");
                        Output::I32(out)
                    }
                    Output::Bool(w) => {
                        let mut out = ArrayD::<bool>::from_elem(w.shape(), true);
                        runner.call(&named, out.view_mut()).unwrap();
                        let mut buf = vec![true; w.len()];
                        h.run_into_out(&plain, OutSlice::Bool(&mut buf)).unwrap();
                        assert_eq!(buf, out.iter().copied().collect::<Vec<_>>(), "{expr} (n = {n})");
                        Output::Bool(out)
                    }
                    other => panic!("{expr}: an integer or bool result, not {other:?}"),
                };
                assert!(same(&got, &want), "{expr} (n = {n}): {got:?} against {want:?}");
            }
        }
    }
}
