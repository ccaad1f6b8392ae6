//! Nothing a user types crashes kiln: hostile `.npy` files (generated headers: shapes, descriptors,
//! versions, lengths), hostile expressions (depth, width, literals, names), hostile shapes
//! (overflowing products, rank limits) and hostile options, through the library and the `kiln`
//! binary. Each must give a result or a one-line error: never a panic (exit 101), an abort
//! (SIGABRT), a broken pipe's panic, or a half-written file. Add a family's new case here.

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

fn kiln(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(args)
        .output()
        .expect("kiln runs")
}

fn dir() -> PathBuf {
    let d = std::env::temp_dir().join(format!("kiln-hostile-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A clean failure: exit status 1 and exactly one line on stderr, `kiln: error: ...` containing
/// `needle`.
#[track_caller]
fn fails_cleanly(o: &Output, needle: &str) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "status {:?}, stderr: {err}", o.status);
    assert!(err.starts_with("kiln: error: "), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "more than one line: {err}");
    assert!(err.contains(needle), "'{needle}' not in: {err}");
}

/// No panic and no signal: exit status 0, 1 (an error) or 2 (clap's usage error).
#[track_caller]
fn no_crash(o: &Output, what: &str) {
    assert!(
        matches!(o.status.code(), Some(0..=2)),
        "{what}: status {:?}, stderr: {}",
        o.status,
        stderr(o)
    );
}

/// A `.npy` file with header dict `dict` (padded as NumPy pads it) and `data`.
fn npy_bytes(version: u8, dict: &str, data: &[u8]) -> Vec<u8> {
    let prefix = if version == 1 { 10 } else { 12 };
    let pad = (64 - (prefix + dict.len() + 1) % 64) % 64;
    let header = format!("{dict}{}\n", " ".repeat(pad));
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([version, 0]);
    if version == 1 {
        out.extend((header.len() as u16).to_le_bytes());
    } else {
        out.extend((header.len() as u32).to_le_bytes());
    }
    out.extend(header.as_bytes());
    out.extend(data);
    out
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir().join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn dict(descr: &str, shape: &str) -> String {
    format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}")
}

fn f64s(v: &[f64]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

// --- the table, as written ---------------------------------------------------------------

#[test]
fn a_shape_spec_of_an_empty_huge_axis_is_an_error() {
    let o = kiln(&["explain", "sum(x)", "-i", "x=f64[0,9223372036854775808]"]);
    fails_cleanly(&o, "size overflow");
    fails_cleanly(&kiln(&["explain", "x", "-i", "x=f64[3,,4]"]), "empty dimension");
    fails_cleanly(&kiln(&["explain", "x", "-i", "x=f64[3,-4]"]), "'-4'");
    fails_cleanly(
        &kiln(&["explain", "x", "-i", "x=f32[99999999999999999999]"]),
        "64 bits",
    );
    // a trailing comma is Python's, and fine
    assert!(kiln(&["explain", "x", "-i", "x=f64[3,]"]).status.success());
}

#[test]
fn npy_headers_of_empty_huge_axes_are_errors() {
    for shape in [
        "(0, 9223372036854775808)",
        "(0, 18446744073709551615)",
        "(0, 4611686018427387904, 4)",
    ] {
        let p = write("huge.npy", &npy_bytes(1, &dict("<f8", shape), &[]));
        let o = kiln(&["eval", "sum(x)", "-i", &format!("x={}", p.display())]);
        fails_cleanly(&o, "size overflow");
    }
}

#[test]
fn bench_of_an_unallocatable_size_is_out_of_memory() {
    let o = kiln(&[
        "bench",
        "--kernels",
        "axpy",
        "--n",
        "1e12",
        "--dtype",
        "f64",
        "--budget-ms",
        "1",
    ]);
    fails_cleanly(&o, "out of memory");
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let n = 200_000;
    let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let p = write(
        "big.npy",
        &npy_bytes(1, &dict("<f8", &format!("({n},)")), &f64s(&values)),
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args(["eval", "x", "-i", &format!("x={}", p.display())])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 10];
    child.stdout.as_mut().unwrap().read_exact(&mut head).unwrap();
    drop(child.stdout.take()); // `| head -c 10`
    let o = child.wait_with_output().unwrap();
    assert_eq!(&head, b"[0.0, 1.0,");
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(&o));
    assert!(o.stderr.is_empty(), "{}", stderr(&o));
    // a full device is an error, not a panic
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "'{}' eval x -i 'x={}' > /dev/full",
            env!("CARGO_BIN_EXE_kiln"),
            p.display()
        ))
        .output()
        .unwrap();
    fails_cleanly(&o, "No space left");
}

#[test]
fn printing_streams_nested_text() {
    let p = write(
        "m.npy",
        &npy_bytes(1, &dict("<f8", "(2, 3)"), &f64s(&[1.0, 2.0, 3.0, 4.0, 5.0, -0.0])),
    );
    let o = kiln(&["eval", "x", "-i", &format!("x={}", p.display())]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        "[[1.0, 2.0, 3.0], [4.0, 5.0, -0.0]]\n"
    );
    let o = kiln(&["eval", "x[0] > 1", "-i", &format!("x={}", p.display())]);
    no_crash(&o, "a subscript outside a contraction");
    let o = kiln(&["eval", "sum(x) > 1"]);
    no_crash(&o, "no input");
}

#[test]
fn a_failed_out_leaves_no_file_behind() {
    let n = 100_000;
    let values: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let input = write(
        "in.npy",
        &npy_bytes(1, &dict("<f8", &format!("({n},)")), &f64s(&values)),
    );
    let out = dir().join("out.npy");
    let _ = std::fs::remove_file(&out);
    // a file-size limit of 100 blocks (51200 bytes), SIGXFSZ ignored: the write fails with EFBIG
    let under_limit = || {
        Command::new("sh")
            .arg("-c")
            .arg(format!(
                "trap '' XFSZ; ulimit -f 100; exec '{}' eval 'x*2' -i 'x={}' --out '{}'",
                env!("CARGO_BIN_EXE_kiln"),
                input.display(),
                out.display()
            ))
            .output()
            .unwrap()
    };
    let o = under_limit();
    fails_cleanly(&o, "out.npy");
    assert!(!out.exists(), "a truncated out.npy was left behind");
    let leftovers: Vec<_> = std::fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("kiln-") && n.ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporaries left: {leftovers:?}");
    // an existing file is replaced only by a complete one
    std::fs::write(&out, b"previous").unwrap();
    let o = under_limit();
    fails_cleanly(&o, "out.npy");
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
    // and a successful write replaces it
    let o = kiln(&[
        "eval",
        "x*2",
        "-i",
        &format!("x={}", input.display()),
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(std::fs::metadata(&out).unwrap().len(), 128 + 8 * n as u64);
}

#[test]
fn the_errors_row() {
    // a directory as input
    let d = dir();
    fails_cleanly(
        &kiln(&["eval", "x", "-i", &format!("x={}", d.display())]),
        "is a directory",
    );
    // '|f8' and '=f8' read as NumPy reads them (native byte order)
    for descr in ["|f8", "=f8"] {
        let p = write(
            "native.npy",
            &npy_bytes(1, &dict(descr, "(2,)"), &f64s(&[1.5, 2.5])),
        );
        let o = kiln(&["eval", "x", "-i", &format!("x={}", p.display())]);
        assert_eq!(
            String::from_utf8_lossy(&o.stdout).trim(),
            "[1.5, 2.5]",
            "{descr}: {}",
            stderr(&o)
        );
    }
    // a literal's name as an input
    let p = write("f.npy", &npy_bytes(1, &dict("<f8", "(2,)"), &f64s(&[1.5, 2.5])));
    for name in ["inf", "nan", "None"] {
        fails_cleanly(
            &kiln(&["eval", "x", "-i", &format!("{name}={}", p.display())]),
            "literal",
        );
    }
    fails_cleanly(
        &kiln(&["eval", "x", "-i", &format!("2x={}", p.display())]),
        "not a name",
    );
    // 'shape': (10) is an int, not a tuple: one line
    let p = write("ten.npy", &npy_bytes(1, &dict("<f8", "(10)"), &[0; 80]));
    fails_cleanly(
        &kiln(&["eval", "x", "-i", &format!("x={}", p.display())]),
        "not a tuple",
    );
    // a flat sum of 10,000 terms: no depth limit (the old one was 1024)
    let long = vec!["x"; 10_000].join(" + ");
    let one = write("one2.npy", &npy_bytes(1, &dict("<f8", "(1,)"), &f64s(&[1.0])));
    let o = kiln(&["eval", &long, "-i", &format!("x={}", one.display())]);
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        "[10000.0]",
        "{}",
        stderr(&o)
    );
    let deep = format!("{}x{}", "(".repeat(257), ")".repeat(257));
    fails_cleanly(
        &kiln(&["eval", &deep, "-i", &format!("x={}", one.display())]),
        "256",
    );
}

// --- generated families -----------------------------------------------------------------------------

/// Malformed headers: every combination of a version, a descriptor, a shape and a data length.
#[test]
fn generated_npy_headers_never_crash() {
    let versions = [1u8, 2, 3, 0, 4, 255];
    let descrs = [
        "<f8", ">f8", "|f8", "=f8", "<f4", ">f4", "<i8", "|u1", "|b1", "<c16", "<U3", "O", "f8", "<f16", "",
        "<f8'", "<<f8",
    ];
    let shapes = [
        "()",
        "(3,)",
        "(2, 3)",
        "(10)",
        "(0,)",
        "(0, 9223372036854775808)",
        "(0, 18446744073709551615)",
        "(0, 4611686018427387904, 4)",
        "(4294967296, 4294967296)",
        "(18446744073709551616,)",
        "(-1,)",
        "(3, , 4)",
        "(,)",
        "[3]",
        "(3L, 2L)",
        "(1e3,)",
        "",
    ];
    let lengths = [0usize, 7, 48, 1 << 10];
    let mut n = 0;
    for &v in &versions {
        for d in descrs {
            for s in shapes {
                for &len in &lengths {
                    let bytes = npy_bytes(v, &dict(d, s), &vec![0x7f; len]);
                    match kiln::npy::read_bytes(&bytes) {
                        Ok(a) => {
                            let (shape, count) = (a.shape().to_vec(), a.len());
                            assert_eq!(shape.iter().product::<usize>(), count);
                        }
                        Err(e) => assert!(!e.to_string().contains('\n'), "{v} {d} {s}: {e}"),
                    }
                    n += 1;
                }
            }
        }
    }
    // a few through the binary too (process level: exit status and one line)
    for (d, s) in [
        ("<f8", "(0, 9223372036854775808)"),
        ("<f2", "(1,)"),
        ("<f8", "(3, , 4)"),
        ("<f8", "(4294967296, 4294967296)"),
    ] {
        let p = write("gen.npy", &npy_bytes(1, &dict(d, s), &[0; 64]));
        let o = kiln(&["eval", "x", "-i", &format!("x={}", p.display())]);
        fails_cleanly(&o, "gen.npy");
    }
    // truncated files: every prefix of a valid one
    let full = npy_bytes(1, &dict("<f8", "(3,)"), &f64s(&[1.0, 2.0, 3.0]));
    for cut in 0..full.len() {
        match kiln::npy::read_bytes(&full[..cut]) {
            Ok(_) => panic!("a file cut at {cut} of {} read", full.len()),
            Err(e) => assert!(!e.to_string().contains('\n')),
        }
    }
    assert!(n > 5000);
}

/// Depth, width, literals and names.
#[test]
fn hostile_expressions_never_crash() {
    let mut cases: Vec<String> = vec![
        "(".repeat(10_000),
        ")".repeat(10_000),
        "-".repeat(10_000) + "x",
        "~".repeat(300) + "x",
        "x**".repeat(300) + "x",
        format!("{}x{}", "sin(".repeat(300), ")".repeat(300)),
        vec!["x"; 5000].join("+"),
        vec!["x"; 5000].join(","),
        "sum(".repeat(100) + "x" + &")".repeat(100),
        "1e99999".into(),
        "-1e-99999".into(),
        "0x10".into(),
        "1_000".into(),
        "nan ** 0".into(),
        "inf - inf".into(),
        "x[".into(),
        "sum(x, axis=99999999999999999999999)".into(),
        "sum(x, axis=-9223372036854775808)".into(),
        "sum(x, axis=(0, 0))".into(),
        "cumsum(x, axis=1, initial=nan, exclusive=True, reverse=1)".into(),
        "sum(x, initial=-inf, keepdims=True, axis=None)".into(),
        "argmax(x, axis=(0, 1))".into(),
        "\u{0}".into(),
        "x\u{200b}".into(),
        "é + x".into(),
        "x ** 0.5 ** 0.5".into(),
        "where(x, x, x, x)".into(),
        "sum(where(i <= o, x[i], 0), index=(i, o), axis=i)".into(),
        "sum(x[i], index=(i, i), axis=i)".into(),
        "trunc(-1) + cos(1e308) * exp(1000)".into(),
    ];
    // names: long, reserved, keywords
    cases.push("a".repeat(100_000));
    cases.extend(["True + x", "None", "sum + 1", "x.y", "x y"].map(String::from));
    let x = ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&[2, 3]), |i| i[0] as f64 - i[1] as f64);
    for text in &cases {
        let Ok(runner) = kiln::FusedRunner::compile_text(text) else {
            continue;
        };
        let names = runner.input_names().to_vec();
        let args: Vec<(&str, kiln::ArrayArg<'_>)> = names.iter().map(|n| (n.as_str(), (&x).into())).collect();
        let _ = runner.run(&args);
    }
    // every error a user sees is one line
    for text in &cases {
        if let Err(e) = kiln::FusedRunner::compile_text(text) {
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
}

/// Overflowing products and rank limits, through the library and shape specs.
#[test]
fn hostile_shapes_never_crash() {
    use kiln::kiln_ir::shape::checked_addressable;
    assert!(checked_addressable(&[0, 1 << 63], 8).is_err());
    assert!(checked_addressable(&[1 << 32, 1 << 32], 1).is_err());
    assert!(checked_addressable(&vec![1; 65], 8).is_err());
    assert_eq!(checked_addressable(&vec![1; 64], 8), Ok(1));
    assert_eq!(checked_addressable(&[0, 1 << 40], 8), Ok(0));
    for spec in [
        "f64[0,9223372036854775808]",
        "f32[4611686018427387904,2]",
        "f64[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1]",
        "f64[",
        "f64]",
        "f64[,]",
        "f64[ 3 , 4 ]",
        "f64[+3]",
        "f16[3]",
    ] {
        match kiln::npy::shape_spec(spec) {
            Ok(_) => {}
            Err(e) => assert!(!e.to_string().contains('\n'), "{e}"),
        }
        let o = kiln(&["explain", "x", "-i", &format!("x={spec}")]);
        no_crash(&o, spec);
    }
    // a broadcast whose product overflows
    let a = ndarray::ArrayD::<f64>::zeros(ndarray::IxDyn(&[1, 0]));
    let r = kiln::FusedRunner::compile_text("sum(x + y)")
        .unwrap()
        .run(&[("x", (&a).into()), ("y", (&a).into())]);
    assert!(r.is_ok());
}

/// Options: thread counts, sizes, kernels, backends, profiles.
#[test]
fn hostile_options_never_crash() {
    let one = write(
        "opt.npy",
        &npy_bytes(1, &dict("<f8", "(3,)"), &f64s(&[1.0, 2.0, 3.0])),
    );
    let x = format!("x={}", one.display());
    let runs: Vec<Vec<&str>> = vec![
        vec!["eval", "x", "-i", &x, "--threads", "0"],
        vec!["eval", "x", "-i", &x, "--threads", "18446744073709551615"],
        vec!["eval", "x", "-i", &x, "--threads", "100000"],
        vec!["eval", "x", "-i", &x, "--backend", "gpu"],
        vec!["eval", "x", "-i", &x, "-i", &x],
        vec!["eval", "x", "-i", "x="],
        vec!["eval", "x", "-i", "=a.npy"],
        vec!["eval", "x", "-i", "x=/nonexistent.npy"],
        vec!["eval", "x", "-i", &x, "--out", "/nonexistent/dir/o.npy"],
        vec!["eval", "x", "-i", &x, "--out", "/dev/full"],
        vec![
            "eval",
            "x",
            "-i",
            &x,
            "--profile",
            "reproducible",
            "--prefix-scan",
            "on",
        ],
        vec!["bench", "--n", "-1"],
        vec!["bench", "--n", "1e16"],
        vec!["bench", "--n", "nan"],
        vec!["bench", "--kernels", "nope"],
        vec!["bench", "--dtype", "f16"],
        vec![
            "bench",
            "--threads",
            "0",
            "--n",
            "10",
            "--kernels",
            "axpy",
            "--budget-ms",
            "1",
        ],
        vec![
            "explain",
            "x",
            "-i",
            "x=f64[3]",
            "--clif",
            "--asm",
            "--backend",
            "jit-scalar",
        ],
    ];
    for args in &runs {
        let o = kiln(args);
        no_crash(&o, &args.join(" "));
        if !o.status.success() {
            assert_eq!(stderr(&o).trim_end().lines().count().min(1), 1);
        }
    }
    // a whole run through a pipe closed at once
    let mut child = Command::new(env!("CARGO_BIN_EXE_kiln"))
        .args([
            "explain",
            "sum(x*x, axis=1)",
            "-i",
            "x=f64[10,10]",
            "--clif",
            "--asm",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let o = child.wait_with_output().unwrap();
    assert!(
        matches!(o.status.code(), Some(0)),
        "{:?} {}",
        o.status,
        stderr(&o)
    );
}
