//! The `kiln` binary: eval and explain over .npy files, errors on stderr with a failing exit code.

use ndarray::{ArrayD, IxDyn, array};
use ndarray_npy::{ReadNpyExt, WriteNpyExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn kiln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .output()
        .expect("kiln runs")
}

/// A path in this test process's scratch folder; the tests run in parallel, so every test uses names
/// of its own.
fn tmp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("kiln-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

fn save<T: ndarray_npy::WritableElement>(path: &Path, a: &ArrayD<T>) {
    a.write_npy(std::fs::File::create(path).unwrap()).unwrap();
}

fn stdout(o: &Output) -> String {
    assert!(
        o.status.success(),
        "kiln failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout.clone()).unwrap()
}

#[test]
fn eval_prints_and_writes_npy() {
    let x = tmp("x.npy");
    let y = tmp("y.npy");
    save(&x, &array![[1.0, 2.0], [3.0, 4.0]].into_dyn());
    save(&y, &array![10.0f32, 20.0].into_dyn());
    let out = kiln(&[
        "eval",
        "x*2 + y",
        "--input",
        &format!("x={}", x.display()),
        "-i",
        &format!("y={}", y.display()),
    ]);
    assert_eq!(stdout(&out).trim(), "[[12.0, 24.0], [16.0, 28.0]]");
    // f32 only: the result stays f32, written as .npy
    let o = tmp("o.npy");
    let out = kiln(&[
        "eval",
        "y / 4",
        "-i",
        &format!("y={}", y.display()),
        "--out",
        o.to_str().unwrap(),
    ]);
    stdout(&out);
    let r = ArrayD::<f32>::read_npy(std::fs::File::open(&o).unwrap()).unwrap();
    assert_eq!(r, array![2.5f32, 5.0].into_dyn());
    // comparisons and any are bool, argmax int64, a full reduction 0-d
    let out = kiln(&[
        "eval",
        "x > 2",
        "-i",
        &format!("x={}", x.display()),
        "--out",
        o.to_str().unwrap(),
    ]);
    stdout(&out);
    let r = ArrayD::<bool>::read_npy(std::fs::File::open(&o).unwrap()).unwrap();
    assert_eq!(r, array![[false, false], [true, true]].into_dyn());
    let out = kiln(&[
        "eval",
        "argmax(x, axis=1)",
        "-i",
        &format!("x={}", x.display()),
        "--out",
        o.to_str().unwrap(),
    ]);
    stdout(&out);
    let r = ArrayD::<i64>::read_npy(std::fs::File::open(&o).unwrap()).unwrap();
    assert_eq!(r, array![1i64, 1].into_dyn());
    let out = kiln(&[
        "eval",
        "sum(x)",
        "-i",
        &format!("x={}", x.display()),
        "--out",
        o.to_str().unwrap(),
    ]);
    stdout(&out);
    let r = ArrayD::<f64>::read_npy(std::fs::File::open(&o).unwrap()).unwrap();
    assert_eq!(r, ndarray::arr0(10.0).into_dyn());
    // an expression may start with a minus sign; ** binds tighter than it
    assert_eq!(stdout(&kiln(&["eval", "-2**2.0"])).trim(), "-4.0");
    // no array input: a 0-d array of NumPy's type, f64 for a float literal, i64 for integers alone
    assert_eq!(stdout(&kiln(&["eval", "2.0 ** 3 + 1"])).trim(), "9.0");
    assert_eq!(stdout(&kiln(&["eval", "2 ** 3 + 1"])).trim(), "9");
    // unused inputs are ignored
    assert_eq!(
        stdout(&kiln(&["eval", "1.0 + 1", "-i", &format!("x={}", x.display())])).trim(),
        "2.0"
    );
}

#[test]
fn eval_reads_integer_bool_and_fortran_arrays() {
    let i = tmp("i.npy");
    let b = tmp("b.npy");
    save(
        &i,
        &ArrayD::from_shape_vec(IxDyn(&[2, 3]), (0..6i64).collect()).unwrap(),
    );
    save(&b, &array![true, false, true].into_dyn());
    let f = tmp("f.npy");
    // a Fortran-order array: the transpose of a C-order one, written as it is
    let c = ArrayD::from_shape_vec(IxDyn(&[3, 2]), vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]).unwrap();
    save(&f, &c.t().into_owned().into_dyn());
    let header = std::fs::read(&f).unwrap();
    assert!(String::from_utf8_lossy(&header[..80]).contains("'fortran_order': True"));
    let out = kiln(&[
        "eval",
        "i + b * 10 + f",
        "-i",
        &format!("i={}", i.display()),
        "-i",
        &format!("b={}", b.display()),
        "-i",
        &format!("f={}", f.display()),
    ]);
    assert_eq!(stdout(&out).trim(), "[[10.0, 2.0, 14.0], [16.0, 8.0, 20.0]]");
}

#[test]
fn errors_go_to_stderr_with_failure() {
    let x = tmp("e.npy");
    save(&x, &array![1.0, 2.0, 3.0].into_dyn());
    let xi = format!("x={}", x.display());
    for (args, needle) in [
        (vec!["eval", "x + q", "-i", &xi], "no input named 'q'"),
        (vec!["eval", "frob(x)", "-i", &xi], "unknown function 'frob'"),
        (vec!["eval", "x +", "-i", &xi], "position 3"),
        (vec!["eval", "sum(x, axis=3)", "-i", &xi], "out of range"),
        (vec!["eval", "min(x[0])", "-i", &xi], "parse error"),
        (
            vec!["eval", "x", "-i", "x=/nonexistent/file.npy"],
            "/nonexistent/file.npy",
        ),
        (vec!["eval", "x", "-i", "x"], "NAME=VALUE"),
        (vec!["eval", "x", "-i", &xi, "--backend", "gpu"], "gpu"),
    ] {
        let out = kiln(&args);
        assert!(!out.status.success(), "{args:?} should fail");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: stderr {err:?} lacks {needle:?}");
        assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
    }
}

/// A .npy file with this header text and `data` after it.
fn raw_npy(path: &Path, dict: &str, data: &[u8]) {
    let mut h = dict.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(h.len() as u16).to_le_bytes());
    bytes.extend_from_slice(h.as_bytes());
    bytes.extend_from_slice(data);
    std::fs::write(path, bytes).unwrap();
}

#[test]
fn bad_npy_files_are_errors() {
    // a header that promises 8 TiB: refused before anything is allocated
    let big = tmp("big.npy");
    raw_npy(
        &big,
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,), }",
        &[],
    );
    let out = kiln(&["eval", "x + 1", "-i", &format!("x={}", big.display())]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("promises"), "{err}");
    // complex128 reads (and prints as Python writes it); float16 is no type of kiln's; garbage
    let c = tmp("c.npy");
    raw_npy(
        &c,
        "{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }",
        &[0; 16],
    );
    let out = kiln(&["eval", "x * 1j - 1", "-i", &format!("x={}", c.display())]);
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[(-1.0+0.0j)]");
    let h = tmp("h.npy");
    raw_npy(
        &h,
        "{'descr': '<f2', 'fortran_order': False, 'shape': (1,), }",
        &[0; 2],
    );
    let out = kiln(&["eval", "x", "-i", &format!("x={}", h.display())]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("unsupported dtype 'f2'"));
    let g = tmp("g.npy");
    std::fs::write(&g, b"hello").unwrap();
    let out = kiln(&["eval", "x", "-i", &format!("x={}", g.display())]);
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a valid .npy"));
    // broadcasting two vectors into 2^40 elements is an error, not an abort (where the kernel refuses
    // allocations beyond memory, Linux's default heuristic overcommit)
    let heuristic = std::fs::read_to_string("/proc/sys/vm/overcommit_memory").is_ok_and(|m| m.trim() == "0");
    if !heuristic {
        return;
    }
    let (a, b) = (tmp("tall.npy"), tmp("wide.npy"));
    raw_npy(
        &a,
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1048576, 1), }",
        &vec![0; 8 << 20],
    );
    raw_npy(
        &b,
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1048576), }",
        &vec![0; 8 << 20],
    );
    let out = kiln(&[
        "eval",
        "a * b",
        "-i",
        &format!("a={}", a.display()),
        "-i",
        &format!("b={}", b.display()),
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("out of memory"), "{err}");
}

#[test]
fn explain_prints_ir_and_plan() {
    let out = stdout(&kiln(&[
        "explain",
        "a*x + y",
        "-i",
        "x=f64[1000,3]",
        "-i",
        "y=f64[3]",
        "-i",
        "a=f32[]",
    ]));
    assert!(out.contains("kernel map f64 [1000, 3] -> f64 [1000, 3]"), "{out}");
    assert!(out.contains("%2 = mul %0 %1"), "{out}");
    assert!(out.contains("plan shape=[1000, 3]"), "{out}");
    assert!(out.contains("in0: splat"), "{out}");
    let out = stdout(&kiln(&[
        "explain",
        "a*x + y",
        "-i",
        "x=f32[100]",
        "-i",
        "a=f32[]",
        "-i",
        "y=f32[100]",
        "--clif",
        "--asm",
    ]));
    assert!(out.contains("; clif") && out.contains("f32x4"), "{out}");
    assert!(out.contains("; machine code"), "{out}");
    let out = stdout(&kiln(&["explain", "sum(x*x)"]));
    assert!(
        out.contains("assumed f64[1024]") && out.contains("kernel reduce sum axes=[0]"),
        "{out}"
    );
}

#[test]
fn explain_notes_the_strength_reduction_of_pow() {
    let out = stdout(&kiln(&["explain", "x**2 + x**3", "-i", "x=f64[100]"]));
    assert!(out.contains("strength: x**2 -> x*x"), "{out}");
    assert!(out.contains("mul %0 %0") && out.contains(" pow "), "{out}");
    let out = stdout(&kiln(&[
        "explain",
        "x**2 + x**3",
        "-i",
        "x=f64[100]",
        "--profile",
        "approximate",
    ]));
    assert!(
        out.contains("x**3 -> multiplication chain") && !out.contains(" pow "),
        "{out}"
    );
}

/// `explain --clif` of a typed kernel that reads an earlier kernel's result (`%0`, no input of the
/// command line) shows its code: the typed kernel comes with the explanation, its inputs' types
/// those of the run.
#[test]
fn explain_clif_of_a_typed_kernel_reading_an_earlier_result() {
    for ex in ["sum(i) + 1", "sum(i); min(i); max(i)"] {
        let out = stdout(&kiln(&["explain", ex, "-i", "i=i64[8,9,10]", "--clif"]));
        assert!(
            out.contains("; clif") && out.contains("function u0:0"),
            "{ex}: {out}"
        );
    }
}

/// The interpreter backend compiles nothing: `explain --clif` says so rather than show code another
/// backend would run.
#[test]
fn explain_clif_on_the_interpreter_says_nothing_is_compiled() {
    let out = stdout(&kiln(&[
        "explain",
        "x + 1",
        "-i",
        "x=f64[8]",
        "--clif",
        "--backend",
        "interp",
    ]));
    assert!(
        out.contains("# no compiled code: the interp backend compiles nothing") && !out.contains("; clif"),
        "{out}"
    );
}

/// A scan is compiled like any kernel: `explain --clif --asm` shows its Cranelift IR (the one kernel
/// function, `kiln_kernel`, with the scan's vector prefix) and its machine code.
#[test]
fn explain_scan_shows_clif_and_machine_code() {
    let out = stdout(&kiln(&[
        "explain",
        "cumsum(x)",
        "-i",
        "x=f64[1000]",
        "--clif",
        "--asm",
    ]));
    let clif = out.split("; clif").nth(1).expect("a clif section");
    let (clif, asm) = clif.split_once("; machine code").expect("a machine code section");
    assert!(
        clif.contains("function u0:0(i64, i64, i64, i64, i64, i64, i64, i64)"),
        "{out}"
    );
    assert!(clif.contains("f64x2") && clif.contains("shuffle"), "{out}");
    let asm = asm.trim();
    assert!(!asm.is_empty() && asm != "(not available)", "{out}");
    assert!(asm.lines().count() > 20, "{out}");
    // --asm alone prints the machine code too (it printed nothing for scans before)
    let out = stdout(&kiln(&["explain", "cumsum(x)", "-i", "x=f64[1000]", "--asm"]));
    assert!(out.contains("; machine code") && !out.contains("; clif"), "{out}");
}

#[test]
fn eval_of_several_results_prints_each_or_writes_one_out_each() {
    let x = tmp("many_x.npy");
    save(&x, &array![1.0, 4.0, 9.0].into_dyn());
    let xi = format!("x={}", x.display());
    let out = kiln(&["eval", "x*2; sqrt(x); sum(x)", "-i", &xi]);
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines, ["[2.0, 8.0, 18.0]", "[1.0, 2.0, 3.0]", "14.0"], "{text}");
    let (a, b) = (tmp("many_a.npy"), tmp("many_b.npy"));
    let out = kiln(&[
        "eval",
        "x*2; x > 3",
        "-i",
        &xi,
        "--out",
        a.to_str().unwrap(),
        "--out",
        b.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let got_a = ArrayD::<f64>::read_npy(std::fs::File::open(&a).unwrap()).unwrap();
    assert_eq!(got_a, array![2.0, 8.0, 18.0].into_dyn());
    let got_b = ArrayD::<bool>::read_npy(std::fs::File::open(&b).unwrap()).unwrap();
    assert_eq!(got_b, array![false, true, true].into_dyn());
    // one --out for two results
    let out = kiln(&["eval", "x*2; x+1", "-i", &xi, "--out", a.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("1 --out given for 2 results"), "{err}");
}

#[test]
fn explain_of_several_results_shows_the_fused_kernel_and_its_outputs() {
    let out = kiln(&[
        "explain",
        "p + v*dt; v*0.99 + g*dt",
        "-i",
        "p=f64[64]",
        "-i",
        "v=f64[64]",
    ]);
    let text = stdout(&out);
    assert!(
        text.contains("kernel 2: map of 2 outputs in one pass <- [p, v, dt, g] -> %0, %1"),
        "{text}"
    );
    assert!(text.contains("results: %0, %1"), "{text}");
    assert!(text.contains("  out0 %") && text.contains("  out1 %"), "{text}");
}

#[test]
fn bench_races_the_integer_kernels_at_their_own_types() {
    let o = kiln(&[
        "bench",
        "--kernels",
        "intmod,masksum,midsum,intcumsum,axpy",
        "--n",
        "1003",
        "--budget-ms",
        "1",
        "--json",
    ]);
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    // axpy in f64 and f32, the integer kernels once each, four variants apiece
    assert_eq!(rows.len(), 6 * 4, "{out}");
    for (kernel, dtype) in [
        ("intmod", "i32"),
        ("masksum", "i64"),
        ("midsum", "i64"),
        ("intcumsum", "i64"),
    ] {
        let mine: Vec<&&str> = rows
            .iter()
            .filter(|r| r.contains(&format!(r#""kernel":"{kernel}""#)))
            .collect();
        assert_eq!(mine.len(), 4, "{out}");
        for r in mine {
            assert!(r.contains(&format!(r#""dtype":"{dtype}""#)), "{r}");
            assert!(r.contains(r#""ok":true"#), "{r}");
        }
    }
    // --dtype picks the float kernels' type; `int` names the integer kernels
    for (dtype, every_row) in [("f32", r#""dtype":"f32""#), ("int", r#""kernel":"intmod""#)] {
        let o = kiln(&[
            "bench",
            "--kernels",
            "intmod,axpy",
            "--n",
            "10",
            "--budget-ms",
            "1",
            "--json",
            "--dtype",
            dtype,
        ]);
        let out = stdout(&o);
        assert_eq!(out.lines().count(), 4, "{out}");
        assert!(out.lines().all(|r| r.contains(every_row)), "{out}");
    }
    let o = kiln(&["bench", "--dtype", "i16"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("is not f64, f32 or int"));
}

/// `kiln bench --functions` once at a small N: every function of the table in both types, kiln and
/// std's loop, each checked against the interpreter (kiln within its documented ULP bound) before
/// it is timed; `--kernels` picks functions, an unknown name is an error.
#[test]
fn bench_functions_checks_every_function_against_the_interpreter() {
    let o = kiln(&[
        "bench",
        "--functions",
        "--n",
        "1003",
        "--budget-ms",
        "1",
        "--json",
    ]);
    let out = stdout(&o);
    let rows: Vec<&str> = out.lines().collect();
    let table = kiln_cli::bench::functions::FUNCTIONS;
    assert_eq!(rows.len(), table.len() * 2 * 2, "{out}");
    for r in &rows {
        assert!(r.contains(r#""ok":true"#), "{r}");
        assert!(r.contains(r#""n":1003"#), "{r}");
    }
    for f in table {
        for dtype in ["f64", "f32"] {
            for variant in ["kiln-simd", "rust-loop"] {
                let want = format!(
                    r#""kernel":"{}","n":1003,"dtype":"{dtype}","variant":"{variant}""#,
                    f.name
                );
                assert!(rows.iter().any(|r| r.contains(&want)), "{want} missing:\n{out}");
            }
        }
    }
    let o = kiln(&[
        "bench",
        "--functions",
        "--kernels",
        "tanh,x**y",
        "--dtype",
        "f32",
        "--n",
        "100",
        "--budget-ms",
        "1",
    ]);
    let text = stdout(&o);
    assert_eq!(
        text.lines().filter(|l| l.starts_with("tanh ")).count(),
        2,
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("x**y ")).count(),
        2,
        "{text}"
    );
    assert!(!text.contains("WRONG"), "{text}");
    let o = kiln(&["bench", "--functions", "--kernels", "erf"]);
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown function 'erf'"));
}

#[test]
fn explain_shows_a_fortran_input_beside_a_c_one_read_in_place() {
    // a C input beside a Fortran .npy: no common memory order, and the Fortran one's rows step by a
    // whole column (a strided row, read in place: no copy in the plan)
    let f = tmp("strided_f.npy");
    let c = ArrayD::from_shape_fn(IxDyn(&[70, 90]), |i| (i[0] * 90 + i[1]) as f64);
    save(&f, &c.t().as_standard_layout().into_owned().reversed_axes());
    let header = std::fs::read(&f).unwrap();
    assert!(String::from_utf8_lossy(&header[..80]).contains("'fortran_order': True"));
    let text = stdout(&kiln(&[
        "explain",
        "a + 2 * b",
        "-i",
        "a=f64[70,90]",
        "-i",
        &format!("b={}", f.display()),
    ]));
    assert!(
        text.contains("in1: per-row strided, in place (element stride 70), outer strides [1]"),
        "{text}"
    );
    assert!(!text.contains("materialise"), "{text}");
    let out = tmp("strided_out.npy");
    stdout(&kiln(&[
        "eval",
        "sum(b * 2, axis=1)",
        "-i",
        &format!("b={}", f.display()),
        "--out",
        &out.to_string_lossy(),
    ]));
    let got = ArrayD::<f64>::read_npy(std::fs::File::open(&out).unwrap()).unwrap();
    let want = c.sum_axis(ndarray::Axis(1)).mapv(|v| v * 2.0);
    assert_eq!(got, want);
}

#[test]
fn cli_reads_and_writes_integer_npy_and_explains_the_typed_kernel() {
    use kiln::Output;
    use kiln::npy::{self, NpyArray};
    let dir = std::env::temp_dir().join(format!("kiln-typed-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (i, j, out) = (dir.join("i.npy"), dir.join("j.npy"), dir.join("out.npy"));
    npy::write(&i, &Output::I32(array![i32::MAX, -7, 5].into_dyn())).unwrap();
    npy::write(&j, &Output::I32(array![1, 2, 0].into_dyn())).unwrap();
    let kiln = env!("CARGO_BIN_EXE_kiln");
    let arg = |name: &str, p: &std::path::Path| format!("{name}={}", p.display());
    let run = |args: &[&str]| std::process::Command::new(kiln).args(args).output().unwrap();
    let r = run(&[
        "eval",
        "(i + j) // j",
        "-i",
        &arg("i", &i),
        "-i",
        &arg("j", &j),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    match npy::read(&out).unwrap() {
        // MAX + 1 wraps to MIN; // 0 is 0, as NumPy's
        NpyArray::I32(a) => assert_eq!(a, array![i32::MIN, -3, 0].into_dyn()),
        other => panic!("{other:?}"),
    }
    let r = run(&["eval", "i + 3000000000", "-i", &arg("i", &i)]);
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(
        !r.status.success() && err.contains("out of range for int32"),
        "{err}"
    );
    let r = run(&[
        "explain",
        "sum(where(p, i, 0))",
        "-i",
        "p=bool[8]",
        "-i",
        "i=i64[8]",
    ]);
    let text = String::from_utf8_lossy(&r.stdout);
    assert!(
        text.contains(
            "# compiled: typed kernel (input 'p' is bool), a reduction of int64 values (int64 \
             accumulators) by the JIT's main code generator (2 lanes)"
        ),
        "{text}"
    );
    assert!(
        text.contains("kernel reduce sum axes=[0] i64 [8] -> i64 []"),
        "{text}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The layer norm's mean and variance merged into one moments pass (tests/compound.rs has the
/// plans themselves).
#[test]
fn explain_shows_the_merge() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args([
            "explain",
            "(x - mean(x, axis=1, keepdims=1)) / sqrt(var(x, axis=1, keepdims=1) + 1e-5)",
            "-i",
            "x=f32[4,8]",
            "--backend",
            "interp",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success());
    assert!(
        text.contains(
            "# rewrite siblings: kernels 0 (mean) and 1 (var) read the same data: one moments pass\n"
        ),
        "{text}"
    );
    assert!(
        text.contains("kernel compound moments axes=[1] f32 [4, 8] -> f32 [2, 4]\n"),
        "{text}"
    );
}

#[test]
fn byte_strings_from_npy() {
    // NumPy's `np.save` of `np.array([b'abc', b'ab', b'', b'\x80'], dtype='S3')`, and its Fortran
    // twin of shape (2, 2)
    let s = tmp("s.npy");
    raw_npy(
        &s,
        "{'descr': '|S3', 'fortran_order': False, 'shape': (4,), }",
        b"abcab\0\0\0\0\x80\0\0",
    );
    assert_eq!(
        stdout(&kiln(&[
            "eval",
            "s == b'abc'",
            "-i",
            &format!("s={}", s.display())
        ])),
        "[true, false, false, false]\n"
    );
    assert_eq!(
        stdout(&kiln(&[
            "eval",
            "contains(s, b'b') | (s > b'\\x7f')",
            "-i",
            &format!("s={}", s.display())
        ])),
        "[true, true, false, true]\n"
    );
    let f = tmp("sf.npy");
    raw_npy(
        &f,
        "{'descr': '|S2', 'fortran_order': True, 'shape': (2, 2), }",
        b"a\0c\0bbd\0",
    );
    assert_eq!(
        stdout(&kiln(&["eval", "f", "-i", &format!("f={}", f.display())])),
        "[[b'a', b'bb'], [b'c', b'd']]\n"
    );
    // a string result written as NumPy's |S file, read back
    let o = tmp("so.npy");
    stdout(&kiln(&[
        "eval",
        "f",
        "-i",
        &format!("f={}", f.display()),
        "--out",
        o.to_str().unwrap(),
    ]));
    assert_eq!(
        stdout(&kiln(&[
            "eval",
            "o == f",
            "-i",
            &format!("o={}", o.display()),
            "-i",
            &format!("f={}", f.display())
        ])),
        "[[true, true], [true, true]]\n"
    );
    let bytes = std::fs::read(&o).unwrap();
    assert!(String::from_utf8_lossy(&bytes[..128]).contains("'descr': '|S2'"));
    assert_eq!(&bytes[bytes.len() - 8..], b"a\0bbc\0d\0");
    // explain says where a string kernel runs: a comparison compiled, a copy interpreted
    let out = stdout(&kiln(&[
        "explain",
        "s < b'ab'",
        "-i",
        &format!("s={}", s.display()),
    ]));
    let copy = stdout(&kiln(&["explain", "s", "-i", &format!("s={}", s.display())]));
    assert!(
        copy.contains("# interpreted") && copy.contains("a result of byte strings"),
        "{copy}"
    );
    assert!(
        out.contains("%1: S2 = bytes b'ab'") && out.contains("# compiled: typed kernel"),
        "{out}"
    );
    // what strings do not have is an error naming numexpr's opcode
    let err = kiln(&["eval", "s + s", "-i", &format!("s={}", s.display())]);
    assert!(!err.status.success());
    assert!(String::from_utf8_lossy(&err.stderr).contains("'add_sss'"));
}
