//! The vector math and the `approximate` profile's contraction on a host without FMA, simulated on
//! this one by `KILN_JIT_NO_FMA=1` (each `kiln` process builds its ISA once): the machine code then
//! has no `vfmadd` (Cranelift calls libm's `fma` per lane), and every result has the same bits as
//! with FMA, since both round once (any NaN equals any NaN: libm's `fma` does not propagate a NaN
//! operand's sign as `vfmadd` does, so `exp(NaN)` is `-NaN` without FMA). This is what makes the
//! vector math's values independent of the host in every profile (README, "What may differ between
//! machines").

use ndarray::{ArrayD, IxDyn};
use ndarray_npy::{ReadNpyExt, WriteNpyExt};
use std::path::PathBuf;

#[path = "support/kiln_cli.rs"]
mod kiln_cli;
use kiln_cli::{kiln_with, tmp_in};

#[path = "../../tests/support/kit.rs"]
mod kit;

const NO_FMA: &str = "KILN_JIT_NO_FMA";

fn kiln(args: &[&str], no_fma: bool) -> Vec<u8> {
    kiln_with(args, &[(NO_FMA, no_fma.then_some("1"))])
}

fn tmp(name: &str) -> PathBuf {
    tmp_in("nofma", name)
}

/// Values over the ranges the functions reduce (tiny, ordinary, large, near the edges of exp's
/// range), with specials; 1001 of them, so the vector body and the scalar tail both run.
fn values() -> Vec<f64> {
    let special = [
        0.0,
        -0.0,
        f64::NAN,
        f64::INFINITY,
        f64::NEG_INFINITY,
        5e-324,
        1e-310,
        709.7,
        -745.0,
        1e6,
        0.5,
        -0.5,
        1.0,
        -1.0,
    ];
    let mut rng = kit::Rng::new(0x2545_f491_4f6c_dd1d);
    (0..1001)
        .map(|i| {
            if i % 10 == 0 {
                special[rng.below(special.len())]
            } else {
                rng.uniform(-0.5, 0.5) * 2f64.powi(rng.below(24) as i32 - 8)
            }
        })
        .collect()
}

#[test]
fn vector_math_has_the_same_bits_without_fma() {
    let v = values();
    let (x64, y64, x32) = (tmp("x64.npy"), tmp("y64.npy"), tmp("x32.npy"));
    let arr = |v: Vec<f64>| ArrayD::from_shape_vec(IxDyn(&[1001]), v).unwrap();
    let save = |p: &PathBuf, a: &ArrayD<f64>| a.write_npy(std::fs::File::create(p).unwrap()).unwrap();
    save(&x64, &arr(v.clone()));
    save(&y64, &arr(v.iter().map(|x| x.abs() * 3.0).collect()));
    let a32: ArrayD<f32> = arr(v.clone()).mapv(|x| x as f32);
    a32.write_npy(std::fs::File::create(&x32).unwrap()).unwrap();
    let exprs = [
        "exp(x)",
        "exp2(x)",
        "expm1(x)",
        "log(x)",
        "log2(x)",
        "log10(x)",
        "log1p(x)",
        "sin(x)",
        "cos(x)",
        "tan(x)",
        "tanh(x)",
        "erf(x)",
        "erfc(x)",
        "x ** y",
        "cbrt(x)",
        "hypot(x, y)",
        "sinh(x)",
        "cosh(x)",
        "arcsinh(x)",
        "arccosh(x)",
        "arctanh(x)",
        "arcsin(x)",
        "arccos(x)",
        "arctan(x)",
        "arctan2(y - 1, x)",
        // pow by the literal exponents with code of their own (vmath::pow_const)
        "abs(x) ** 1.5",
        "x ** -0.5",
        "x ** 3",
        "x ** 4 + x ** -2",
    ];
    let mut checked = 0;
    for expr in exprs {
        for (dtype, x) in [("f64", &x64), ("f32", &x32)] {
            let y = if dtype == "f64" { &y64 } else { &x32 };
            let expr = if dtype == "f32" && expr == "x ** y" {
                "abs(x) ** x"
            } else {
                expr
            };
            for profile in ["default", "approximate"] {
                let out = [tmp(&format!("{checked}a.npy")), tmp(&format!("{checked}b.npy"))];
                for (no_fma, o) in [false, true].into_iter().zip(&out) {
                    let (xa, ya) = (format!("x={}", x.display()), format!("y={}", y.display()));
                    let args = [
                        "eval",
                        expr,
                        "-i",
                        &xa,
                        "-i",
                        &ya,
                        "--profile",
                        profile,
                        "--out",
                        o.to_str().unwrap(),
                    ];
                    kiln(&args, no_fma);
                }
                let bits = |p: &PathBuf| -> Vec<(u64, bool)> {
                    if dtype == "f64" {
                        let a = ArrayD::<f64>::read_npy(std::fs::File::open(p).unwrap()).unwrap();
                        a.iter().map(|v| (v.to_bits(), v.is_nan())).collect()
                    } else {
                        let a = ArrayD::<f32>::read_npy(std::fs::File::open(p).unwrap()).unwrap();
                        a.iter().map(|v| (v.to_bits() as u64, v.is_nan())).collect()
                    }
                };
                let (a, b) = (bits(&out[0]), bits(&out[1]));
                assert_eq!(a.len(), 1001);
                for (i, (p, q)) in a.iter().zip(&b).enumerate() {
                    assert!(
                        p.0 == q.0 || p.1 && q.1,
                        "{expr} {dtype} {profile} at {i} (x = {:e}): {:#x} with FMA, {:#x} without",
                        v[i],
                        p.0,
                        q.0
                    );
                }
                checked += 1;
            }
        }
    }
    // and the contraction: ordinary values where one rounding and two differ
    let out = [tmp("fma_a.npy"), tmp("fma_b.npy")];
    for (no_fma, o) in [false, true].into_iter().zip(&out) {
        let xa = format!("x={}", x64.display());
        let args = [
            "eval",
            "(x*x + 1.25)*x - 0.3",
            "-i",
            &xa,
            "--profile",
            "approximate",
            "--out",
            o.to_str().unwrap(),
        ];
        kiln(&args, no_fma);
    }
    let read = |p: &PathBuf| ArrayD::<f64>::read_npy(std::fs::File::open(p).unwrap()).unwrap();
    let (a, b) = (read(&out[0]), read(&out[1]));
    assert!(
        a.iter()
            .zip(&b)
            .all(|(p, q)| p.to_bits() == q.to_bits() || p.is_nan() && q.is_nan())
    );
    assert_eq!(checked, exprs.len() * 4);
}

#[test]
fn the_switch_takes_fma_out_of_the_machine_code() {
    let asm = |no_fma| String::from_utf8(kiln(&["explain", "exp(x)", "--asm"], no_fma)).unwrap();
    let (with, without) = (asm(false), asm(true));
    // this test's claim needs a host with FMA; elsewhere both listings lack it
    if std::arch::is_x86_feature_detected!("fma") {
        assert!(with.contains("vfmadd"), "{with}");
    }
    assert!(!without.contains("vfmadd"), "{without}");
    assert!(!without.contains("vfnmadd"), "{without}");
}
