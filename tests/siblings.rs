//! Sibling reductions in one pass (issue 23 item 5): reductions of the same data over the same axes,
//! whatever their operations, are one kernel (`sum(x*2) + max(x)` reads x once; `sum(x); min(x);
//! max(x)` is one pass), and each component gives exactly the bits the reduction run alone gives,
//! on the JIT (SIMD and scalar) and the interpreter, in f32 and f64, for every length (empty, 1,
//! below the vector width, tails), NaN, ±inf and -0.0, whole arrays and axes, and any thread count.

#[path = "support/kit.rs"]
mod kit;

use kiln::array::ArrayArg;
use kiln::{Backend, FusedRunner, backend_by_name};
use kit::Rng;
use ndarray::{Array2, ArrayD};
use std::sync::Arc;

fn runner(src: &str, backend: &str) -> FusedRunner {
    FusedRunner::compile_text(src)
        .unwrap()
        .with_backend(backend_by_name(backend).unwrap())
}

/// Every result of `src` (one expression or several) on `x`, as f64 (exact for f32 results).
fn results(r: &FusedRunner, x: ArrayArg<'_>) -> Vec<ArrayD<f64>> {
    r.run_many(&[("x", x)])
        .unwrap()
        .into_iter()
        .map(|o| o.into_f64())
        .collect()
}

fn same_bits(a: &ArrayD<f64>, b: &ArrayD<f64>) -> bool {
    a.shape() == b.shape()
        && kit::bits_equal(
            &a.iter().copied().collect::<Vec<_>>(),
            &b.iter().copied().collect::<Vec<_>>(),
        )
}

/// Several expressions whose reductions merge, each also run alone.
const GROUPS: &[&str] = &[
    "sum(x*2); max(x); min(x); prod(x*0.5); mean(x)",
    "sum(x*2) + max(x); min(x)",
    "sum(x, axis=1); max(x*3, axis=1, keepdims=1); mean(x, axis=1); prod(x, axis=1)",
    "sum(x, axis=(0, 1)); min(x, axis=(0, 1))",
    // every component folded at full width where the rows are long
    "max(x); min(x)",
    "max(x, axis=1); min(x, axis=1)",
    // over a leading axis, one pass where every component or none is a sum (each component folds
    // the rows in the order it folds them alone: sums in groups, the others one by one)
    "max(x, axis=0); min(x, axis=0)",
    "prod(x*0.5, axis=0); max(x*x, axis=0, keepdims=1); min(x, axis=0)",
    "sum(x, axis=0); sum(x*x, axis=0); mean(x, axis=0, keepdims=1)",
    // a sum beside a max over a leading axis: the reductions one by one; the plan still merges them
    "sum(x, axis=0); max(x, axis=0); mean(x, axis=0, keepdims=1)",
];

/// Rows of values with the special values mixed in at a few places.
fn data(rows: usize, cols: usize, seed: u64, special: bool) -> Array2<f64> {
    let mut rng = Rng::new(seed);
    let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0];
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        let k = r * cols + c;
        if special && k % 13 == 5 {
            specials[(k / 13) % specials.len()]
        } else {
            rng.uniform(-2.0, 2.0)
        }
    })
}

fn check_group(src: &str, backend: &str, x: &Array2<f64>) {
    check_group_on(src, || backend_by_name(backend).unwrap(), backend, x);
}

/// [`check_group`] on the backend `make` makes (one for the merged runner, one for each alone).
fn check_group_on(src: &str, make: impl Fn() -> Arc<dyn Backend>, backend: &str, x: &Array2<f64>) {
    let on = |e: &str| FusedRunner::compile_text(e).unwrap().with_backend(make());
    let merged = on(src);
    let alone: Vec<FusedRunner> = src.split(';').map(|e| on(e.trim())).collect();
    let x32 = x.mapv(|v| v as f32);
    for (arg, alone_arg) in [
        (ArrayArg::from(x), ArrayArg::from(x)),
        (ArrayArg::from(&x32), ArrayArg::from(&x32)),
    ] {
        let got = match merged.run_many(&[("x", arg)]) {
            Ok(v) => v.into_iter().map(|o| o.into_f64()).collect::<Vec<_>>(),
            Err(e) => {
                // an empty min or max is an error alone too
                let each = alone
                    .iter()
                    .any(|r| r.run(&[("x", alone_arg.reborrow())]).is_err());
                assert!(each, "{src} on {backend} {:?}: {e}", x.shape());
                continue;
            }
        };
        for (k, r) in alone.iter().enumerate() {
            let want = r.run(&[("x", alone_arg.reborrow())]).unwrap().into_f64();
            assert!(
                same_bits(&got[k], &want),
                "{src} result {k} on {backend} {:?}: {} vs {}",
                x.shape(),
                got[k],
                want
            );
        }
    }
}

/// Rows whose results depend on how a reduction partitions them: every maximum a zero of either
/// sign (`neg zeros`: the rest negative) or every minimum (`pos zeros`), or NaNs of two payloads
/// and both signs (`payloads`), at positions past the first 16 of a row as well.
fn partition_data(rows: usize, cols: usize, kind: &str, seed: u64) -> Array2<f64> {
    let mut rng = Rng::new(seed);
    let (a, b) = (
        f64::from_bits(0x7ff8_0000_0000_0a00),
        f64::from_bits(0xfff8_0000_00b0_0000),
    );
    Array2::from_shape_fn((rows, cols), |(r, c)| {
        let v = rng.uniform(1.0, 2.0);
        match (kind, (r * 7 + c) % 11) {
            ("neg zeros" | "pos zeros", 2 | 9) => -0.0,
            ("neg zeros" | "pos zeros", 5) => 0.0,
            ("neg zeros", _) => -v,
            ("payloads", 3) => a,
            ("payloads", 8) => b,
            _ => v,
        }
    })
}

/// Each component of a merged pass keeps what its reduction keeps alone, however many
/// accumulators that is (a min and a max keep 8, a float64 sum of a plain read or a square over
/// rows of 1024 points or more 8, a sum of another body and a product 4; float32 sums 4 of two
/// halves): every row length of 0 to 40 points and a few long ones (each remainder of 16, where
/// the merged pass runs its loops of 8, 4 and 1 vectors and the scalar tail), on data where the
/// partition shows in the bits; and
/// on schedules a caller gives (every component then keeps the schedule's count, as every
/// reduction alone does under it).
#[test]
fn each_component_keeps_the_partition_of_its_reduction_alone() {
    let srcs = [
        "sum(x, axis=1); sum(x*x, axis=1); max(x, axis=1); min(x, axis=1); sum(x*2, axis=1); prod(x, axis=1)",
        "mean(x); max(x); sum(x*0.5)",
        // every component folded at full width (float32 sums too) where the rows are long
        "max(x, axis=1); min(x, axis=1)",
        "sum(x, axis=1); max(x, axis=1); sum(x*x, axis=1)",
        "max(x); min(x)",
    ];
    let custom = |acc: u8| {
        move || -> Arc<dyn Backend> {
            Arc::new(kiln::jit::Jit {
                schedule: Some(kiln_jit::Schedule::simd(kiln_ir::ElemType::F64, 1, acc)),
            })
        }
    };
    for cols in (0..=40).chain([63, 100, 255, 256, 1001, 1030, 1047]) {
        for kind in ["neg zeros", "pos zeros", "payloads"] {
            let x = partition_data(3, cols, kind, cols as u64);
            for src in srcs {
                check_group(src, "jit", &x);
                for acc in [6, 8] {
                    check_group_on(src, custom(acc), &format!("jit with {acc} accumulators"), &x);
                }
            }
        }
    }
}

#[test]
fn merged_reductions_give_the_bits_of_each_alone() {
    let shapes = [
        (1, 0),
        (1, 1),
        (2, 3),
        (3, 7),
        (2, 8),
        (4, 17),
        (3, 100),
        (5, 1001),
    ];
    for backend in ["jit", "jit-scalar", "interp"] {
        for &(rows, cols) in &shapes {
            for special in [false, true] {
                let x = data(rows, cols, (rows * 31 + cols) as u64, special);
                for src in GROUPS {
                    check_group(src, backend, &x);
                }
            }
        }
    }
}

#[test]
fn signed_zeros_and_all_nan_rows() {
    let rows = [
        vec![-0.0; 9],
        vec![0.0, -0.0, 0.0],
        vec![f64::NAN; 5],
        vec![f64::NEG_INFINITY, f64::INFINITY, 1.0],
    ];
    for backend in ["jit", "jit-scalar", "interp"] {
        for row in &rows {
            let x = Array2::from_shape_vec((1, row.len()), row.clone()).unwrap();
            for src in GROUPS {
                check_group(src, backend, &x);
            }
        }
    }
}

#[test]
fn the_plan_is_one_pass() {
    let plan = |src: &str| runner(src, "jit").pipeline().to_string();
    assert_eq!(
        plan("sum(x*2) + max(x)"),
        "kernel 0: siblings [sum axis=None, max axis=None] (one pass) <- [x] -> %0\n\
         kernel 1: map <- [%0.sum0 (kernel 0, reduced axes dropped), %0.max1 (kernel 0, reduced axes dropped)] -> %1\n"
    );
    let p = plan("sum(x); min(x); max(x)");
    assert!(
        p.starts_with(
            "kernel 0: siblings [sum axis=None, min axis=None, max axis=None] (one pass) <- [x] -> %0\n"
        ),
        "{p}"
    );
    assert_eq!(p.matches("<- [x]").count(), 1, "{p}");
    // different inputs, axes or an initial value: separate passes
    for src in [
        "sum(x) + max(y)",
        "sum(x, axis=0) + max(x, axis=1)",
        "sum(x, initial=1) + max(x)",
    ] {
        assert!(!plan(src).contains("siblings"), "{src}: {}", plan(src));
    }
}

#[test]
fn explain_shows_one_kernel_reading_x_once() {
    let x = data(4, 50, 1, false);
    for backend in ["jit", "interp"] {
        let r = runner("sum(x*2) + max(x)", backend);
        let kernels = r.explain_rewrites(&[("x", (&x).into())]).unwrap();
        assert_eq!(kernels.len(), 2, "{backend}");
        let text = kernels[0].0.to_string();
        assert!(
            text.starts_with("kernel siblings sum,max axes=[0, 1] f64 [4, 50] -> f64 [2]"),
            "{text}"
        );
        assert_eq!(text.matches("= in0").count(), 1, "{text}");
    }
}

#[test]
fn thread_counts_give_the_same_bits() {
    // large enough for threads and for a whole-array reduction in chunks
    let x = data(600, 1000, 7, false);
    let x32 = x.mapv(|v| v as f32);
    for src in GROUPS {
        let at = |threads: usize| {
            let r = runner(src, "jit").with_threads(threads);
            (results(&r, (&x).into()), results(&r, (&x32).into()))
        };
        let (a1, b1) = at(1);
        let (a4, b4) = at(4);
        for k in 0..a1.len() {
            assert!(same_bits(&a1[k], &a4[k]), "{src} f64 result {k}");
            assert!(same_bits(&b1[k], &b4[k]), "{src} f32 result {k}");
        }
        check_group(src, "jit", &x);
    }
}

#[test]
fn int64_extremes_fold_at_full_width_together() {
    // rows long enough for the folds at full width (64 points or more), and whole arrays of
    // several chunks; the extremes anywhere, i64::MIN and i64::MAX among them
    // (over leading axes, kept: each component's rows stepped at full width into its int64
    // words, in groups of eight rows and alone; 75 x 1001 is over the 65536 points below which a
    // call runs the components one by one)
    for (rows, cols) in [(3usize, 300usize), (2, 64), (1, 70_000), (20, 300), (75, 1001)] {
        let i = Array2::from_shape_fn((rows, cols), |(r, c)| match (r * cols + c) % 997 {
            13 => i64::MIN,
            500 => i64::MAX,
            k => (k as i64 * 7919) % 2001 - 1000,
        });
        for src in [
            "max(i, axis=1); min(i, axis=1)",
            "max(i); min(i)",
            "max(i, axis=0); min(i, axis=0)",
            "sum(i, axis=0); max(i, axis=0)",
        ] {
            let merged = runner(src, "jit");
            assert!(merged.pipeline().to_string().contains("siblings"), "{src}");
            let got = merged.run_many(&[("i", (&i).into())]).unwrap();
            for (k, e) in src.split(';').enumerate() {
                let want = runner(e.trim(), "interp").run(&[("i", (&i).into())]).unwrap();
                assert_eq!(
                    format!("{:?}", got[k]),
                    format!("{want:?}"),
                    "{src} result {k}, {rows} x {cols}"
                );
            }
        }
    }
}

#[test]
fn integer_inputs_run_the_reductions_one_by_one() {
    // the plan merges them; integer values take the typed path, where each runs alone (float
    // values of integer inputs run in one pass: `integer_inputs_of_float_values_in_one_pass`)
    let i = Array2::from_shape_fn((3, 37), |(r, c)| (r as i64 * 37 + c as i64) * 7 % 23 - 11);
    for backend in ["jit", "interp"] {
        for src in [
            "sum(i); min(i); max(i)",
            "sum(i, axis=1); max(i, axis=1); mean(i, axis=1)",
        ] {
            let merged = runner(src, backend);
            assert!(merged.pipeline().to_string().contains("siblings"), "{src}");
            let got = merged.run_many(&[("i", (&i).into())]).unwrap();
            for (k, e) in src.split(';').enumerate() {
                let want = runner(e.trim(), backend).run(&[("i", (&i).into())]).unwrap();
                assert_eq!(
                    format!("{:?}", got[k]),
                    format!("{want:?}"),
                    "{src} result {k} on {backend}"
                );
            }
        }
    }
}

#[test]
fn explain_of_a_pass_the_jit_declines_shows_the_first_reduction() {
    // over a leading axis the JIT runs the reductions one by one: explain says so
    let x = data(4, 50, 1, false);
    let r = runner("sum(x, axis=0) + max(x, axis=0)", "jit");
    let kernels = r.explain_rewrites(&[("x", (&x).into())]).unwrap();
    let text = kernels[0].0.to_string();
    assert!(text.starts_with("kernel reduce sum axes=[0]"), "{text}");
    assert!(
        kernels[0].2[0].starts_with("siblings: declined"),
        "{:?}",
        kernels[0].2
    );
    let got = r.run(&[("x", (&x).into())]).unwrap().into_f64();
    let want = runner("sum(x, axis=0)", "jit")
        .run(&[("x", (&x).into())])
        .unwrap()
        .into_f64()
        + runner("max(x, axis=0)", "jit")
            .run(&[("x", (&x).into())])
            .unwrap()
            .into_f64();
    assert!(same_bits(&got, &want));
}

#[test]
fn integer_inputs_of_float_values_in_one_pass() {
    // each reduction's values are float64 computed from the integers cast (a float kernel reading
    // `i` stored): one pass, each result the bits of its reduction alone
    let i = Array2::from_shape_fn((3, 37), |(r, c)| (r as i64 * 37 + c as i64) * 7919 % 2003 - 1000);
    for backend in ["jit", "jit-scalar", "interp"] {
        for src in [
            "sum(i * 0.5, axis=1); max(i * 0.5, axis=1); min(sin(i), axis=1)",
            "sum(i * 0.25); max(i / 3)",
        ] {
            let merged = runner(src, backend);
            let got = merged.run_many(&[("i", (&i).into())]).unwrap();
            for (k, e) in src.split(';').enumerate() {
                let want = runner(e.trim(), backend).run(&[("i", (&i).into())]).unwrap();
                assert_eq!(
                    format!("{:?}", got[k]),
                    format!("{want:?}"),
                    "{src} result {k} on {backend}"
                );
            }
            let kernels = merged.explain_rewrites(&[("i", (&i).into())]).unwrap();
            let (kernel, _, notes) = &kernels[0];
            assert!(
                kernel.to_string().starts_with("kernel siblings"),
                "{src}: {kernel}"
            );
            assert!(
                notes.iter().any(|n| n.starts_with("stored: ")),
                "{src}: {notes:?}"
            );
        }
    }
}

/// Whether a sibling or compound stage runs in one pass or as its reductions is decided once per
/// form of its inputs (issue 24 item 4) and kept beside its kernels: one runner called with
/// float, integer (run apart: the typed path), float32 and column-axis (apart: leading axes) forms in
/// turn, each form more than once, gives every time what a fresh runner gives for that form alone.
#[test]
fn one_runner_decides_each_form_once_and_keeps_it_apart_from_the_others() {
    for src in [
        "sum(x, axis=1); max(x, axis=1); min(x, axis=1)",
        "x - mean(x, axis=1, keepdims=1); var(x, axis=1)",
        "sum(x, axis=0); max(x, axis=0)",
    ] {
        let kept = runner(src, "jit");
        let mut rng = Rng::new(7);
        let f = Array2::from_shape_fn((5, 7), |_| rng.uniform(-3.0, 3.0));
        let i = f.mapv(|v| (v * 10.0) as i64);
        let s = f.mapv(|v| v as f32);
        let wide = Array2::from_shape_fn((3, 40), |_| rng.uniform(-3.0, 3.0));
        let forms: [ArrayArg<'_>; 4] = [(&f).into(), (&i).into(), (&s).into(), (&wide).into()];
        for round in 0..3 {
            for (n, x) in forms.iter().enumerate() {
                let got = results(&kept, x.reborrow());
                let want = results(&runner(src, "jit"), x.reborrow());
                assert_eq!(got.len(), want.len());
                for (g, w) in got.iter().zip(&want) {
                    assert!(same_bits(g, w), "{src}, form {n}, round {round}: {g} vs {w}");
                }
            }
        }
    }
}

/// Sibling reductions over leading and middle axes (the trailing axes kept) in one pass, where every
/// component or none is a sum: each component's bits as its reduction alone gives them, on many
/// rows (a kept sum adds its rows in groups of 8, a band apart: every band and remainder) and
/// rows of every length around the vector width, 3-d shapes reduced over one or two leading
/// axes or the middle one, special values, float32 and float64, int64 (the typed path) and any
/// thread count; explain shows the one pass.
#[test]
fn kept_siblings_run_in_one_pass() {
    use ndarray::IxDyn;
    let cases: &[(&[usize], &str)] = &[
        (&[17, 33], "max(x, axis=0); min(x, axis=0)"),
        (&[64, 5], "max(x, axis=0); min(x*2, axis=0); prod(x, axis=0)"),
        (&[9, 1], "sum(x, axis=0); sum(x*x, axis=0); mean(x, axis=0)"),
        (&[8, 16], "sum(x, axis=0); sum(x*x, axis=0)"),
        (&[40, 3], "sum(x, axis=0); mean(x*0.5, axis=0, keepdims=1)"),
        // every component a plain read: each one's row steps at full width
        (&[40, 33], "sum(x, axis=0); mean(x, axis=0)"),
        (&[0, 5], "sum(x, axis=0); sum(x*x, axis=0)"),
        (&[10, 3, 5], "max(x, axis=0); min(x, axis=0)"),
        (&[4, 19, 6], "sum(x, axis=1); sum(x*3, axis=1)"),
        (&[4, 19, 6], "min(x, axis=1); max(x, axis=1)"),
        (&[9, 9, 3], "sum(x, axis=(0, 1)); mean(x, axis=(0, 1))"),
        (&[9, 9, 3], "max(x, axis=(0, 1)); min(x, axis=(0, 1))"),
    ];
    let on = |src: &str, backend: &str, threads: usize| runner(src, backend).with_threads(threads);
    for &(shape, src) in cases {
        let n: usize = shape.iter().product();
        let mut rng = Rng::new(n as u64 + 3);
        let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 1e-310];
        let values = (0..n)
            .map(|k| match k % 13 {
                3 => specials[k % specials.len()],
                _ => rng.uniform(-2.0, 2.0),
            })
            .collect();
        let x = ArrayD::from_shape_vec(IxDyn(shape), values).unwrap();
        let x32 = x.mapv(|v| v as f32);
        let ints = x.mapv(|v| if v.is_finite() { (v * 1000.0) as i64 } else { -7 });
        let merged = on(src, "jit", 1);
        let kernels = merged.explain_rewrites(&[("x", (&x).into())]).unwrap();
        assert!(
            kernels[0].0.to_string().starts_with("kernel siblings"),
            "{src} {shape:?}: {}",
            kernels[0].0
        );
        for threads in [1, 3] {
            let merged = on(src, "jit", threads);
            for arg in [ArrayArg::from(&x), ArrayArg::from(&x32), ArrayArg::from(&ints)] {
                let got = merged.run_many(&[("x", arg.reborrow())]);
                for (k, e) in src.split(';').enumerate() {
                    let want = on(e.trim(), "jit", 1).run(&[("x", arg.reborrow())]);
                    let (got, want) = match (&got, want) {
                        (Ok(g), Ok(w)) => (g[k].clone().into_f64(), w.into_f64()),
                        // an empty min or max is an error merged and alone
                        (Err(_), Err(_)) => continue,
                        (g, w) => panic!("{src} {shape:?}: merged {g:?}, alone {w:?}"),
                    };
                    assert!(
                        same_bits(&got, &want),
                        "{src} {shape:?} result {k}, {threads} threads: {got} vs {want}"
                    );
                    let interp = on(e.trim(), "interp", 1)
                        .run(&[("x", arg.reborrow())])
                        .unwrap()
                        .into_f64();
                    assert!(
                        got.iter().zip(&interp).all(|(a, b)| {
                            (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= 1e-9 * b.abs().max(1.0)
                        }),
                        "{src} {shape:?} result {k} against the interpreter: {got} vs {interp}"
                    );
                }
            }
        }
    }
}
