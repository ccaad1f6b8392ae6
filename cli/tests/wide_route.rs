//! exp, log, sin, cos, tan, exp2, expm1, tanh, sinh and cosh at full width (kiln-jit's `wide`) against the inline path, through the CLI with
//! `KILN_JIT_WIDE` (each `kiln` process reads it once): unset (AVX-512 or AVX2 where the host has
//! it), `avx2`, and `off` (the inline 128-bit path: what a host without AVX2 and FMA runs) give the
//! same bits in every profile (any NaN equals any NaN), over lengths that end in and between blocks,
//! with special values; and the switch shows in the machine code (the call of the block function).

use ndarray::{ArrayD, IxDyn};
use ndarray_npy::{ReadNpyExt, WriteNpyExt};
use std::path::PathBuf;

#[path = "support/kiln_cli.rs"]
mod kiln_cli;
use kiln_cli::{kiln_with, tmp_in};

#[path = "../../tests/support/kit.rs"]
mod kit;

const WIDE: &str = "KILN_JIT_WIDE";

/// `kiln` with `KILN_JIT_WIDE` as given (unset where None).
fn kiln(args: &[&str], wide: Option<&str>) -> Vec<u8> {
    kiln_with(args, &[("KILN_JIT_NO_FMA", None), (WIDE, wide)])
}

fn tmp(name: &str) -> PathBuf {
    tmp_in("wide", name)
}

fn values(n: usize) -> Vec<f64> {
    let special = [
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        5e-324,
        -1e-310,
        709.8,
        -745.2,
        88.8,
        -104.0,
        1e300,
        7e4,
        -2e6,
        1.0,
        -1.0,
    ];
    let mut rng = kit::Rng::new(0x5eed);
    (0..n)
        .map(|i| {
            if i % 37 == 0 {
                special[rng.below(special.len())]
            } else {
                rng.uniform(-4.0, 4.0)
            }
        })
        .collect()
}

/// The bits of each value of the .npy file at `path` (f64, or f32 widened), and whether it is NaN.
fn bits(path: &std::path::Path, dtype: &str) -> Vec<(u64, bool)> {
    let f = std::fs::File::open(path).unwrap();
    if dtype == "f64" {
        let a = ArrayD::<f64>::read_npy(f).unwrap();
        a.iter().map(|v| (v.to_bits(), v.is_nan())).collect()
    } else {
        let a = ArrayD::<f32>::read_npy(f).unwrap();
        a.iter().map(|v| (v.to_bits() as u64, v.is_nan())).collect()
    }
}

#[test]
fn every_route_gives_the_same_bits() {
    let exprs = [
        "1/(1+exp(-x))",
        "exp(x)",
        "log(x)",
        "log(abs(x)) + exp(-x*x)",
        "exp(x - 1.5)",
        "sum(exp(x))",
        "sin(x)*cos(x) + sqrt(abs(x))",
        "tan(x)",
        "sum(cos(x))",
        "tanh(x)*2 + x**2",
        "expm1(x) - exp2(x * 300)",
        "sinh(x * 200) + cosh(x * 200)",
        "sum(tanh(x)) + sum(expm1(x))",
        "cbrt(x)",
        "sum(cbrt(x) * x)",
        "hypot(x, 1.5 - x)",
        "x ** 1.5 + abs(x) ** x",
        "log2(x)",
        "log10(x)",
        "log1p(x)",
        "arcsinh(x)",
        "arccosh(x)",
        "arctanh(x)",
        "sum(log1p(abs(x)))",
        "arcsin(x * 0.3)",
        "arccos(x * 0.3) + arcsin(x)",
        "arctan(x)",
        "arctan2(x, x * x - 2)",
        "sum(arctan2(x, 1.5))",
    ];
    let mut checked = 0;
    for n in [1, 255, 257, 515, 1001] {
        let v = values(n);
        let (x64, x32) = (tmp(&format!("x64_{n}.npy")), tmp(&format!("x32_{n}.npy")));
        let a = ArrayD::from_shape_vec(IxDyn(&[n]), v.clone()).unwrap();
        a.write_npy(std::fs::File::create(&x64).unwrap()).unwrap();
        a.mapv(|x| x as f32)
            .write_npy(std::fs::File::create(&x32).unwrap())
            .unwrap();
        for expr in exprs {
            for (dtype, x) in [("f64", &x64), ("f32", &x32)] {
                for profile in ["default", "reproducible"] {
                    let routes = [None, Some("avx2"), Some("off")];
                    let outs: Vec<Vec<(u64, bool)>> = routes
                        .iter()
                        .enumerate()
                        .map(|(r, &route)| {
                            let o = tmp(&format!("{checked}_{r}.npy"));
                            let xa = format!("x={}", x.display());
                            let args = [
                                "eval",
                                expr,
                                "-i",
                                &xa,
                                "--threads",
                                "1",
                                "--profile",
                                profile,
                                "--out",
                                o.to_str().unwrap(),
                            ];
                            kiln(&args, route);
                            bits(&o, dtype)
                        })
                        .collect();
                    for (r, out) in outs.iter().enumerate().skip(1) {
                        assert_eq!(out.len(), outs[0].len());
                        for (i, (p, q)) in outs[0].iter().zip(out).enumerate() {
                            assert!(
                                p.0 == q.0 || p.1 && q.1,
                                "{expr} {dtype} {profile} n {n} at {i}: {:#x} by default, {:#x} with {WIDE} = {:?}",
                                p.0,
                                q.0,
                                routes[r]
                            );
                        }
                    }
                    checked += 1;
                }
            }
        }
    }
    assert_eq!(checked, 5 * exprs.len() * 2 * 2);
}

#[test]
fn the_switch_takes_the_call_out_of_the_machine_code() {
    let asm = |wide| String::from_utf8(kiln(&["explain", "exp(x)", "--asm"], wide)).unwrap();
    let off = asm(Some("off"));
    assert!(!off.contains("call    "), "{off}");
    // the call needs a host with AVX2 and FMA; `avx2` asks for every routine (by default a host
    // that runs 256-bit operations as two halves keeps exp inline: kiln_jit::wide::routed)
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        let on = asm(Some("avx2"));
        assert!(on.contains("call    "), "{on}");
    }
}

/// Column sums of a plain input (`sum(x, axis=0)`, and a sum over both leading axes of a 3-D x)
/// call the kept sum's row steps at full width (kiln-jit `wide/rows.rs`): every route and 1-4
/// threads give the bits of the inline path on one thread (any NaN equals any NaN), f64 and f32,
/// row counts around the group of eight (0, 1, 8, 9, 17, 26) and column runs below, at and above
/// the steps' threshold of 16 with every tail of a vector of 8.
#[test]
fn column_sums_give_the_same_bits_on_every_route_and_thread_count() {
    let mut checked = 0;
    let shapes: [&[usize]; 8] = [
        &[0, 40],
        &[1, 40],
        &[8, 23],
        &[9, 16],
        &[17, 1003],
        &[26, 41],
        &[26, 15],
        &[3, 9, 37],
    ];
    for shape in shapes {
        let n: usize = shape.iter().product();
        let v = values(n);
        let name = shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("x");
        let (x64, x32) = (tmp(&format!("c64_{name}.npy")), tmp(&format!("c32_{name}.npy")));
        let a = ArrayD::from_shape_vec(IxDyn(shape), v).unwrap();
        a.write_npy(std::fs::File::create(&x64).unwrap()).unwrap();
        a.mapv(|x| x as f32)
            .write_npy(std::fs::File::create(&x32).unwrap())
            .unwrap();
        let expr = if shape.len() == 3 {
            "sum(x, axis=(0, 1))"
        } else {
            "sum(x, axis=0)"
        };
        for (dtype, x) in [("f64", &x64), ("f32", &x32)] {
            let run = |wide: Option<&str>, threads: usize| -> Vec<(u64, bool)> {
                let o = tmp(&format!("col_{checked}_{}_{threads}.npy", wide.unwrap_or("best")));
                let xa = format!("x={}", x.display());
                let t = threads.to_string();
                let args = [
                    "eval",
                    expr,
                    "-i",
                    &xa,
                    "--threads",
                    &t,
                    "--out",
                    o.to_str().unwrap(),
                ];
                kiln(&args, wide);
                bits(&o, dtype)
            };
            let want = run(Some("off"), 1);
            assert_eq!(want.len(), *shape.last().unwrap());
            for wide in [None, Some("avx2"), Some("off")] {
                for threads in 1..=4 {
                    let got = run(wide, threads);
                    assert_eq!(got.len(), want.len());
                    for (i, (p, q)) in want.iter().zip(&got).enumerate() {
                        assert!(
                            p.0 == q.0 || p.1 && q.1,
                            "{expr} of {shape:?} {dtype} column {i}: {:#x} inline, {:#x} with {WIDE}={wide:?} on {threads} threads",
                            p.0,
                            q.0
                        );
                    }
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 8 * 2);
}
