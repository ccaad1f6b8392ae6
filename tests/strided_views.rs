//! Strided and offset views read in place: a view whose rows are contiguous (innermost stride 1) is
//! planned per row with its own strides, negative ones included (no copy), and the JIT's results
//! match the interpreter's (which copies it): bit-exact for maps, min, max and argmax, within the
//! reduction suite's relative bound for sums. Fortran-ordered and transposed inputs of an expression
//! whose value does not depend on the order of the axes (maps, whole-array reductions) run in memory
//! order (each input C-contiguous, the result in the inputs' layout); axis reductions and scans too,
//! their axes mapped (tests/memory_order.rs covers them). A reversed or stepped last
//! axis, and the last axis of a transposed input beside a C one, is a strided row, read in place
//! too. Float scans read views per row as well (one row per line, or per step of a block along an
//! outer axis). Views whose inner axes do not step alike, and rows too short for an outer loop, are
//! materialised, and still right.

use kiln::kiln_ir::{InputPlan, RowAccess};
mod support;

use kiln::{ArrayArg, Output};
use ndarray::{Array2, Array3, ArrayViewD, Axis, s};
use support::{Rng, bits_equal, close, oracle, runner, values};

const EXACT: [&str; 7] = [
    "x * 2.5 - 1",
    "sqrt(abs(x)) + x * x",
    "max(x, axis=1)",
    "min(x, axis=0)",
    "max(x)",
    "argmax(x, axis=1)",
    "where(x > 0, x, -x * 3)",
];
const SUMS: [&str; 5] = [
    "sum(x, axis=1)",
    "sum(x, axis=0)",
    "sum(x)",
    "mean(x, axis=1)",
    "sum(x * x, axis=1)",
];

/// Runs every expression over `v` on the JIT (one and four threads, every run on threads) and on the
/// interpreter, and compares.
fn check_against_interpreter(v: ArrayArg<'_>, what: &str) {
    for (exprs, exact) in [(&EXACT[..], true), (&SUMS[..], false)] {
        for expr in exprs {
            let want = values(runner(expr, "interp").run(&[("x", v.clone())]).unwrap());
            for threads in [1, 4] {
                let jit = runner(expr, "jit").with_threads(threads).with_threshold(0);
                let got = values(jit.run(&[("x", v.clone())]).unwrap());
                assert_eq!(got.0, want.0, "{expr} on {what}");
                let rtol = if v.dtype() == kiln::kiln_ir::ElemType::F32 {
                    1e-6
                } else {
                    1e-12
                };
                let ok = if exact {
                    bits_equal(&got.1, &want.1)
                } else {
                    // a reassociated sum is within rtol of the sum of magnitudes, not of the sum
                    // (the data has both signs, so a row may cancel)
                    let scale = values(
                        runner(
                            &expr.replace("(x", "(abs(x)").replace("* x", "* abs(x)"),
                            "interp",
                        )
                        .run(&[("x", v.clone())])
                        .unwrap(),
                    )
                    .1;
                    let mags: Vec<f64> = want.1.iter().zip(&scale).map(|(w, s)| w.abs().max(*s)).collect();
                    close(&got.1, &want.1, rtol)
                        || got
                            .1
                            .iter()
                            .zip(&want.1)
                            .zip(&mags)
                            .all(|((g, w), m)| (g - w).abs() <= rtol * m)
                };
                assert!(ok, "{expr} on {what}, {threads} threads");
            }
        }
    }
}

fn plan_of(expr: &str, v: ArrayArg<'_>) -> InputPlan {
    let (_, plan) = runner(expr, "jit").explain(&[("x", v)]).unwrap();
    plan.inputs[0].clone()
}

fn data(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut rng = Rng::new(seed);
    Array2::from_shape_fn((rows, cols), |_| rng.uniform(-1.0, 1.0))
}

#[test]
fn views_with_contiguous_rows_are_read_in_place() {
    let x = data(200, 300, 1);
    let x32 = x.mapv(|v| v as f32);
    let views: [(&str, ArrayViewD<'_, f64>, isize); 4] = [
        ("column slice", x.slice(s![.., ..100]).into_dyn(), 300),
        ("row step", x.slice(s![..;2, ..]).into_dyn(), 600),
        (
            "row step and column slice",
            x.slice(s![1..;3, 7..107]).into_dyn(),
            900,
        ),
        ("offset slice", x.slice(s![5.., 3..]).into_dyn(), 300),
    ];
    for (what, v, stride) in views {
        assert!(v.as_slice().is_none(), "{what} is not C-contiguous");
        let want = InputPlan::PerRow {
            row: RowAccess::Run,
            outer_strides: vec![stride],
        };
        for expr in ["sum(x, axis=1)", "sum(x, axis=0)", "x * 2"] {
            assert_eq!(plan_of(expr, v.view().into()), want, "{expr} on {what}");
        }
        check_against_interpreter(v.view().into(), what);
    }
    for (what, v) in [
        ("f32 column slice", x32.slice(s![.., ..100]).into_dyn()),
        ("f32 row step", x32.slice(s![..;2, 20..]).into_dyn()),
    ] {
        assert!(matches!(
            plan_of("sum(x, axis=1)", v.view().into()),
            InputPlan::PerRow { .. }
        ));
        check_against_interpreter(v.view().into(), what);
    }
}

#[test]
fn large_views_chunked_and_three_dimensional() {
    // a whole-array sum over 500k points is cut into chunks that start mid-row
    let x = data(1000, 1000, 2);
    check_against_interpreter(x.slice(s![.., ..500]).into_dyn().into(), "1000x1000[:, :500]");
    let mut rng = Rng::new(3);
    let y = Array3::from_shape_fn((6, 10, 120), |_| rng.uniform(-1.0, 1.0));
    let v = y.slice(s![..;2, 1..9, ..100]).into_dyn();
    let want = InputPlan::PerRow {
        row: RowAccess::Run,
        outer_strides: vec![2400, 120],
    };
    assert_eq!(plan_of("sum(x, axis=2)", v.view().into()), want);
    for expr in [
        "sum(x, axis=2)",
        "sum(x, axis=(0, 1))",
        "max(x, axis=1)",
        "x - 1",
        "sum(x)",
    ] {
        let a = values(runner(expr, "jit").run(&[("x", v.view().into())]).unwrap());
        let b = values(runner(expr, "interp").run(&[("x", v.view().into())]).unwrap());
        assert_eq!(a.0, b.0);
        assert!(close(&a.1, &b.1, 1e-12), "{expr}");
    }
}

#[test]
fn a_view_broadcast_against_other_inputs() {
    let x = data(200, 300, 4);
    let w = data(1, 100, 5).into_shape_with_order(100).unwrap();
    let v = x.slice(s![..;2, 50..150]);
    for expr in ["sum(x * w, axis=1)", "x * w + 1", "max(x - w, axis=0)"] {
        let args = |_: ()| [("x", ArrayArg::from(v.view())), ("w", ArrayArg::from(w.view()))];
        let (_, plan) = runner(expr, "jit").explain(&args(())).unwrap();
        assert!(
            matches!(
                plan.inputs[0],
                InputPlan::PerRow {
                    row: RowAccess::Run,
                    ..
                }
            ),
            "{plan}"
        );
        let a = values(
            runner(expr, "jit")
                .with_threshold(0)
                .with_threads(3)
                .run(&args(()))
                .unwrap(),
        );
        let b = values(runner(expr, "interp").run(&args(())).unwrap());
        assert_eq!(a.0, b.0);
        assert!(close(&a.1, &b.1, 1e-12), "{expr}");
    }
}

#[test]
fn views_with_strided_rows_are_read_in_place() {
    // a reversed or stepped last axis is a strided row (gathered lane by lane; a reversed one by a
    // load and a lane reversal); a row whose every axis steps alike flattens into one row (k = 0)
    let x = data(200, 300, 6);
    let x32 = x.mapv(|v| v as f32);
    let views: [(&str, ArrayViewD<'_, f64>, isize, Vec<isize>); 8] = [
        (
            "reversed columns",
            x.slice(s![.., ..;-1]).into_dyn(),
            -1,
            vec![300],
        ),
        // the whole array backwards: one row of 60000 points
        (
            "reversed rows and columns",
            x.slice(s![..;-1, ..;-1]).into_dyn(),
            -1,
            vec![],
        ),
        // 150 columns 2 apart in rows 300 apart: one row of 30000 points 2 apart
        ("column step", x.slice(s![.., ..;2]).into_dyn(), 2, vec![]),
        (
            "column step 3",
            x.slice(s![.., 1..290;3]).into_dyn(),
            3,
            vec![300],
        ),
        (
            "reversed column step 3",
            x.slice(s![.., ..;-3]).into_dyn(),
            -3,
            vec![300],
        ),
        (
            "reversed rows, reversed column step",
            x.slice(s![..;-1, ..;-2]).into_dyn(),
            -2,
            vec![],
        ),
        (
            "reversed rows, column step 3",
            x.slice(s![..;-2, ..;3]).into_dyn(),
            3,
            vec![-600],
        ),
        (
            "row and column steps",
            x.slice(s![3..;4, 5..;2]).into_dyn(),
            2,
            vec![1200],
        ),
    ];
    for (what, v, stride, outer) in views {
        let want = InputPlan::PerRow {
            row: RowAccess::Strided { stride },
            outer_strides: outer,
        };
        for expr in ["sum(x, axis=1)", "sum(x, axis=0)", "x * 2"] {
            assert_eq!(plan_of(expr, v.view().into()), want, "{expr} on {what}");
        }
        // the compound kernel of a variance is the first stage (a map of its statistics follows)
        let stages = runner("var(x, axis=1)", "jit")
            .explain_all(&[("x", v.view().into())])
            .unwrap();
        assert_eq!(stages[0].1.inputs[0], want, "var on {what}");
        check_against_interpreter(v.view().into(), what);
    }
    // a transposed input alone runs in memory order (tests/memory_order.rs): read as contiguous
    let t = x.t().into_dyn();
    assert_eq!(plan_of("sum(x, axis=1)", t.view().into()), InputPlan::Contiguous);
    check_against_interpreter(t.view().into(), "transposed");
    for (what, v) in [
        ("f32 reversed columns", x32.slice(s![.., ..;-1]).into_dyn()),
        ("f32 column step", x32.slice(s![..;2, 1..;2]).into_dyn()),
        (
            "f32 reversed column step 3",
            x32.slice(s![..;-1, ..;-3]).into_dyn(),
        ),
    ] {
        assert!(matches!(
            plan_of("sum(x, axis=1)", v.view().into()),
            InputPlan::PerRow {
                row: RowAccess::Strided { .. },
                ..
            }
        ));
        check_against_interpreter(v.view().into(), what);
    }
}

#[test]
fn views_that_step_unevenly_or_have_short_rows_are_materialised_and_right() {
    let x = data(200, 300, 6);
    let y = data(30, 40, 7).into_shape_with_order((30, 4, 10)).unwrap();
    let views: [(&str, ArrayViewD<'_, f64>); 2] = [
        ("short rows", x.slice(s![.., ..10]).into_dyn()),
        ("short strided rows", x.slice(s![.., ..20;-2]).into_dyn()),
    ];
    for (what, v) in views {
        assert_eq!(
            plan_of("sum(x, axis=1)", v.view().into()),
            InputPlan::Materialise,
            "{what}"
        );
        check_against_interpreter(v.view().into(), what);
    }
    // two inner axes that do not step alike (a row of 4 x 10 with the 10 reversed) read as one
    // row: copied (row sums over both inner axes)
    let v = y.slice(s![.., .., ..;-1]).into_dyn();
    let (_, plan) = runner("sum(x, axis=(1, 2))", "jit")
        .explain(&[("x", v.view().into())])
        .unwrap();
    assert_eq!(plan.inputs[0], InputPlan::Materialise, "{plan}");
    let a = values(
        runner("sum(x, axis=(1, 2))", "jit")
            .run(&[("x", v.view().into())])
            .unwrap(),
    );
    let b = values(
        runner("sum(x, axis=(1, 2))", "interp")
            .run(&[("x", v.view().into())])
            .unwrap(),
    );
    assert!(close(&a.1, &b.1, 1e-12));
}

#[test]
fn one_runner_over_views_of_one_shape_and_other_strides() {
    // the plan holds the strides: a view of the same shape with other strides is another specialisation
    let a = data(200, 300, 7);
    let b = data(200, 500, 8);
    let run = runner("sum(x, axis=1)", "jit");
    for (x, stride) in [(&a, 300), (&b, 500), (&a, 300)] {
        let v = x.slice(s![.., 100..200]);
        let got = values(run.run(&[("x", v.into())]).unwrap()).1;
        let want: Vec<f64> = v.rows().into_iter().map(|r| r.iter().sum()).collect();
        assert!(close(&got, &want, 1e-12), "stride {stride}");
    }
}

#[test]
fn a_view_beside_a_mutable_borrow_of_its_gaps() {
    // the left half is read in place while the right half, between its rows, is borrowed mutably
    let mut x = data(100, 200, 9);
    let want: Vec<f64> = x
        .slice(s![.., ..100])
        .rows()
        .into_iter()
        .map(|r| r.iter().sum())
        .collect();
    let (left, mut right) = x.view_mut().split_at(Axis(1), 100);
    let run = runner("sum(x, axis=1)", "jit");
    let got = values(run.run(&[("x", left.view().into())]).unwrap()).1;
    right.fill(0.0);
    assert!(close(&got, &want, 1e-12));
}

#[test]
fn views_with_negative_outer_strides_are_read_in_place() {
    // a negative stride on an outer axis is a row start below the view's first element: read in
    // place, checked against the view's extent, and right
    let x = data(200, 300, 10);
    let views: [(&str, ArrayViewD<'_, f64>, isize); 4] = [
        ("reversed rows", x.slice(s![..;-1, ..100]).into_dyn(), -300),
        (
            "reversed rows, all columns",
            x.slice(s![..;-1, ..]).into_dyn(),
            -300,
        ),
        ("reversed row step", x.slice(s![10..150;-3, 5..]).into_dyn(), -900),
        (
            "reversed row step from the end",
            x.slice(s![..;-7, 200..]).into_dyn(),
            -2100,
        ),
    ];
    for (what, v, stride) in views {
        assert!(v.strides()[0] < 0, "{what} steps backwards");
        let want = InputPlan::PerRow {
            row: RowAccess::Run,
            outer_strides: vec![stride],
        };
        for expr in ["sum(x, axis=1)", "sum(x, axis=0)", "x * 2"] {
            assert_eq!(plan_of(expr, v.view().into()), want, "{expr} on {what}");
        }
        check_against_interpreter(v.view().into(), what);
    }
    // three dimensions, a negative stride on either outer axis or both, chunked over threads
    let mut rng = Rng::new(11);
    let y = Array3::from_shape_fn((6, 10, 120), |_| rng.uniform(-1.0, 1.0));
    for (what, v, strides) in [
        (
            "first axis reversed",
            y.slice(s![..;-1, .., ..100]).into_dyn(),
            vec![-1200, 120],
        ),
        (
            "second axis reversed",
            y.slice(s![.., ..;-2, 10..]).into_dyn(),
            vec![1200, -240],
        ),
        (
            "both reversed",
            y.slice(s![..;-2, ..;-1, ..]).into_dyn(),
            vec![-2400, -120],
        ),
    ] {
        let want = InputPlan::PerRow {
            row: RowAccess::Run,
            outer_strides: strides,
        };
        assert_eq!(plan_of("sum(x, axis=2)", v.view().into()), want, "{what}");
        for expr in [
            "sum(x, axis=2)",
            "sum(x, axis=(0, 1))",
            "max(x, axis=1)",
            "x - 1",
            "sum(x)",
        ] {
            let a = values(
                runner(expr, "jit")
                    .with_threshold(0)
                    .with_threads(3)
                    .run(&[("x", v.view().into())])
                    .unwrap(),
            );
            let b = values(runner(expr, "interp").run(&[("x", v.view().into())]).unwrap());
            assert_eq!(a.0, b.0, "{expr} on {what}");
            assert!(close(&a.1, &b.1, 1e-12), "{expr} on {what}");
        }
    }
    // a reversed view broadcast against a row
    let w = data(1, 100, 12).into_shape_with_order(100).unwrap();
    let v = x.slice(s![..;-2, 50..150]);
    for expr in ["x * w + 1", "sum(x * w, axis=1)"] {
        let args = [("x", ArrayArg::from(v.view())), ("w", ArrayArg::from(w.view()))];
        let (_, plan) = runner(expr, "jit").explain(&args).unwrap();
        assert_eq!(
            plan.inputs[0],
            InputPlan::PerRow {
                row: RowAccess::Run,
                outer_strides: vec![-600],
            },
            "{expr}"
        );
        let a = values(runner(expr, "jit").run(&args).unwrap());
        let b = values(runner(expr, "interp").run(&args).unwrap());
        assert_eq!(a.0, b.0);
        assert!(close(&a.1, &b.1, 1e-12), "{expr}");
    }
}

#[test]
fn empty_and_one_element_views_with_negative_strides() {
    let x = data(20, 300, 13);
    let views: [(&str, ArrayViewD<'_, f64>); 10] = [
        ("no rows", x.slice(s![5..5;-1, ..]).into_dyn()),
        ("no columns", x.slice(s![..;-1, 7..7]).into_dyn()),
        ("one row", x.slice(s![3..4;-1, ..]).into_dyn()),
        ("one element", x.slice(s![3..4;-1, 9..10]).into_dyn()),
        ("one column", x.slice(s![..;-1, 9..10]).into_dyn()),
        // strided rows: reversed or stepped columns
        ("no rows, reversed columns", x.slice(s![5..5, ..;-1]).into_dyn()),
        ("no columns, stepped", x.slice(s![.., 7..7;-2]).into_dyn()),
        ("one row, reversed", x.slice(s![3..4, ..;-1]).into_dyn()),
        ("one row, stepped by 3", x.slice(s![3..4;-1, 1..;3]).into_dyn()),
        ("one stepped column", x.slice(s![..;-1, 9..10;-2]).into_dyn()),
    ];
    for (what, v) in views {
        for expr in ["x * 2 + 1", "sum(x, axis=1)", "sum(x, axis=0)", "max(x, axis=1)"] {
            let a = runner(expr, "jit").run(&[("x", v.view().into())]);
            let b = runner(expr, "interp").run(&[("x", v.view().into())]);
            match (a, b) {
                (Ok(a), Ok(b)) => {
                    let (a, b) = (values(a), values(b));
                    assert_eq!(a.0, b.0, "{expr} on {what}");
                    // maps and max bit for bit; a sum within the reduction bound (reassociated)
                    let ok = if expr.starts_with("sum") {
                        close(&a.1, &b.1, 1e-12)
                    } else {
                        bits_equal(&a.1, &b.1)
                    };
                    assert!(ok, "{expr} on {what}");
                }
                // max over no element is an error on both
                (Err(_), Err(_)) => {}
                (a, b) => panic!(
                    "{expr} on {what}: jit {:?}, interpreter {:?}",
                    a.is_ok(),
                    b.is_ok()
                ),
            }
        }
    }
}

/// Runs `expr` on the JIT (one and three threads) and compares with the oracle: bit-exact for maps,
/// max and min, within 1e-12 of the sum of magnitudes for sums and means. The result, for its layout.
fn check_layout_run(expr: &str, inputs: &[(&str, ArrayViewD<'_, f64>)], what: &str) -> Output {
    let want = oracle(expr, inputs).unwrap();
    let args: Vec<(&str, ArrayArg<'_>)> = inputs
        .iter()
        .map(|(n, v)| (*n, ArrayArg::from(v.view())))
        .collect();
    let mut last = None;
    for threads in [1, 3] {
        let out = runner(expr, "jit")
            .with_threads(threads)
            .with_threshold(0)
            .run(&args)
            .unwrap_or_else(|e| panic!("{expr} on {what}: {e}"));
        let got = values(out.clone());
        assert_eq!(got.0, want.0, "{expr} on {what}");
        let ok = if expr.starts_with("sum") || expr.starts_with("mean") {
            got.1
                .iter()
                .zip(&want.1)
                .all(|(g, w)| (g - w).abs() <= 1e-12 * (1.0 + w.abs()) * 1e3)
        } else {
            bits_equal(&got.1, &want.1)
        };
        assert!(
            ok,
            "{expr} on {what}, {threads} threads: {:?} vs {:?}",
            &got.1[..got.1.len().min(4)],
            &want.1[..want.1.len().min(4)]
        );
        last = Some(out);
    }
    last.unwrap()
}

/// The plans and rewrite notes of a run, and whether it runs in memory order.
fn layout_plans(expr: &str, inputs: &[(&str, ArrayViewD<'_, f64>)]) -> (Vec<InputPlan>, String, bool) {
    let args: Vec<(&str, ArrayArg<'_>)> = inputs
        .iter()
        .map(|(n, v)| (*n, ArrayArg::from(v.view())))
        .collect();
    let r = runner(expr, "jit");
    let all = r.explain_rewrites(&args).unwrap();
    let (_, plan, notes) = all.last().unwrap();
    let bound: Vec<&ArrayArg<'_>> = r
        .input_names()
        .iter()
        .map(|n| &args.iter().find(|(m, _)| m == n).unwrap().1)
        .collect();
    (
        plan.inputs.clone(),
        notes.join("\n"),
        r.memory_order(&bound).is_some(),
    )
}

const ORDER_FREE: [&str; 7] = [
    "x * 2.5 - 1",
    "sqrt(abs(x)) + x * x",
    "where(x > 0, x, -x * 3)",
    "max(x)",
    "min(x * 2)",
    "sum(x)",
    "mean(x * x)",
];

#[test]
fn fortran_and_transposed_inputs_run_in_memory_order() {
    let x = data(200, 300, 11);
    let fortran = x.t().as_standard_layout().into_owned().reversed_axes();
    let mut rng = Rng::new(12);
    let cube = Array3::from_shape_fn((7, 5, 40), |_| rng.uniform(-1.0, 1.0));
    let views: [(&str, ArrayViewD<'_, f64>); 4] = [
        ("transposed", x.t().into_dyn()),
        ("Fortran", fortran.view().into_dyn()),
        ("3-D permuted", cube.view().permuted_axes([2, 0, 1]).into_dyn()),
        ("3-D Fortran", cube.t().into_dyn()),
    ];
    for (what, v) in views {
        assert!(v.as_slice().is_none(), "{what} is not C-contiguous");
        for expr in ORDER_FREE {
            let (plans, notes, ordered) = layout_plans(expr, &[("x", v.view())]);
            assert!(ordered, "{expr} on {what}");
            assert_eq!(plans, [InputPlan::Contiguous], "{expr} on {what}");
            assert!(notes.contains("memory order"), "{expr} on {what}: {notes}");
            let out = check_layout_run(expr, &[("x", v.view())], what);
            if out.shape().len() == 2 || out.shape().len() == 3 {
                // the result is laid out as the input (NumPy's order='K')
                let out = out.into_f64();
                assert_eq!(
                    out.strides().iter().map(|s| s.signum()).collect::<Vec<_>>(),
                    vec![1; out.ndim()]
                );
                let mut order: Vec<usize> = (0..out.ndim()).collect();
                order.sort_by_key(|&i| std::cmp::Reverse(v.strides()[i]));
                assert!(
                    out.view().permuted_axes(order.as_slice()).is_standard_layout(),
                    "{expr} on {what}"
                );
            }
        }
    }
}

#[test]
fn memory_order_beside_broadcast_inputs_and_mixed_layouts() {
    let x = data(120, 90, 13);
    let f = x.t().as_standard_layout().into_owned().reversed_axes(); // Fortran (120, 90)
    let g = data(90, 120, 14).reversed_axes(); // the transpose of a C array: Fortran-like (120, 90)
    let row = data(1, 90, 15).into_shape_with_order(90).unwrap();
    let col = data(120, 1, 16);
    let zero_d = ndarray::arr0(0.75);
    let c = data(120, 90, 17);
    let same = [("x", f.view().into_dyn()), ("y", g.view().into_dyn())];
    let broadcast = [
        ("x", f.view().into_dyn()),
        ("y", row.view().into_dyn()),
        ("z", col.view().into_dyn()),
        ("w", zero_d.view().into_dyn()),
    ];
    for expr in ["x * y - 1", "sum(x * y)", "max(x - y)"] {
        let (plans, _, ordered) = layout_plans(expr, &same);
        assert!(
            ordered && plans.iter().all(|p| *p == InputPlan::Contiguous),
            "{expr}: {plans:?}"
        );
        check_layout_run(expr, &same, "two Fortran inputs");
    }
    for expr in ["x * y + z * w", "sum(x + y * z - w)", "where(x > y, z, w)"] {
        let (plans, _, ordered) = layout_plans(expr, &broadcast);
        assert!(ordered, "{expr}");
        assert!(
            plans.iter().all(|p| *p != InputPlan::Materialise),
            "{expr}: {plans:?}"
        );
        check_layout_run(expr, &broadcast, "Fortran beside broadcast inputs");
    }
    // one C and one Fortran input: no common order; each input read as before, and right
    let mixed = [("x", f.view().into_dyn()), ("y", c.view().into_dyn())];
    for expr in ["x * y - 1", "sum(x * y)"] {
        let (plans, notes, ordered) = layout_plans(expr, &mixed);
        assert!(!ordered && !notes.contains("memory order"), "{expr}");
        assert_eq!(plans[1], InputPlan::Contiguous, "{expr}");
        check_layout_run(expr, &mixed, "Fortran beside C");
    }
    // an axis reduction and a scan run in memory order with their axes mapped; a flat index and a
    // point's position depend on C order: run as before
    for (expr, in_memory) in [
        ("sum(x, axis=0)", true),
        ("max(x * y, axis=1)", true),
        ("cumsum(x, axis=1)", true),
        ("argmax(x)", false),
        ("argmin(x * y)", false),
    ] {
        let (_, notes, ordered) = layout_plans(expr, &same);
        assert_eq!(ordered, in_memory, "{expr}");
        assert_eq!(notes.contains("memory order"), in_memory, "{expr}");
        let want = oracle(expr, &same).unwrap();
        let args: Vec<(&str, ArrayArg<'_>)> =
            same.iter().map(|(n, v)| (*n, ArrayArg::from(v.view()))).collect();
        let got = values(runner(expr, "jit").run(&args).unwrap());
        assert_eq!(got.0, want.0, "{expr}");
        assert!(close(&got.1, &want.1, 1e-12), "{expr}");
    }
}

#[test]
fn memory_order_into_an_output_and_small_views() {
    let x = data(64, 48, 18);
    let f = x.t().as_standard_layout().into_owned().reversed_axes();
    let r = runner("x * 3 + 1", "jit");
    // a Fortran output of a Fortran input is written in memory order; a C one as before
    let mut out_f = ndarray::Array2::<f64>::zeros((48, 64)).reversed_axes();
    r.run_into(&[("x", f.view().into())], out_f.view_mut()).unwrap();
    assert!(bits_equal(
        &out_f.iter().copied().collect::<Vec<_>>(),
        &x.mapv(|v| v * 3.0 + 1.0).iter().copied().collect::<Vec<_>>()
    ));
    let mut out_c = ndarray::Array2::<f64>::zeros((64, 48));
    r.run_into(&[("x", f.view().into())], out_c.view_mut()).unwrap();
    assert_eq!(out_c, out_f);
    // empty and one-element transposed views
    let e = ndarray::Array2::<f64>::zeros((0, 5));
    let one = ndarray::Array2::<f64>::from_elem((1, 1), -2.0);
    let tall = data(1, 7, 19);
    for (what, v) in [
        ("empty", e.t().into_dyn()),
        ("one element", one.t().into_dyn()),
        ("one row", tall.t().into_dyn()),
    ] {
        for expr in ["x * 2.5 - 1", "sum(x)"] {
            check_layout_run(expr, &[("x", v.view())], what);
        }
    }
}

#[test]
fn fortran_inputs_that_do_not_broadcast_report_the_shapes_as_given() {
    // (3, 5) and (4, 5) as Fortran arrays: no one order helps, and the error names the user's shapes
    let a = data(5, 3, 21).reversed_axes();
    let b = data(5, 4, 22).reversed_axes();
    let r = runner("a + b", "jit");
    let err = r
        .run(&[("a", a.view().into()), ("b", b.view().into())])
        .unwrap_err()
        .to_string();
    assert!(err.contains("[3, 5]") && err.contains("[4, 5]"), "{err}");
    assert!(!err.contains("[5, 3]") && !err.contains("[5, 4]"), "{err}");
}

/// Runs `expr` (results separated by `;`) over `inputs` on the JIT (one and three threads, every
/// run on threads) and on the interpreter: bit-exact for maps, min, max, the arg-reductions and
/// cummax / cummin; sums, products, means, var, std and their scans within `1e-9` relative (the
/// data is of one sign where a sum is compared, so no cancellation).
fn agree(expr: &str, inputs: &[(&str, ArrayArg<'_>)], what: &str) {
    let want: Vec<(Vec<usize>, Vec<f64>)> = runner(expr, "interp")
        .run_many(inputs)
        .unwrap_or_else(|e| panic!("{expr} on {what}: {e}"))
        .into_iter()
        .map(values)
        .collect();
    let exact = ["sum", "prod", "mean", "var", "std", "cumsum", "cumprod"]
        .iter()
        .all(|f| !expr.contains(&format!("{f}(")));
    for threads in [1, 3] {
        let got: Vec<(Vec<usize>, Vec<f64>)> = runner(expr, "jit")
            .with_threads(threads)
            .with_threshold(0)
            .run_many(inputs)
            .unwrap_or_else(|e| panic!("{expr} on {what}: {e}"))
            .into_iter()
            .map(values)
            .collect();
        assert_eq!(got.len(), want.len());
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g.0, w.0, "{expr} on {what}");
            let ok = if exact {
                bits_equal(&g.1, &w.1)
            } else {
                close(&g.1, &w.1, 1e-9)
            };
            assert!(
                ok,
                "{expr} on {what}, {threads} threads: {:?} vs {:?}",
                &g.1[..g.1.len().min(6)],
                &w.1[..w.1.len().min(6)]
            );
        }
    }
}

/// `n` values: of one sign (positive, so sums do not cancel), or with NaN, infinities and signed
/// zeros among them (`special`).
fn vector(n: usize, seed: u64, special: bool) -> ndarray::Array1<f64> {
    let mut rng = Rng::new(seed);
    let odd = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, -2.5];
    ndarray::Array1::from_shape_fn(n, |i| {
        if special && i % 5 == 2 {
            odd[rng.below(odd.len())]
        } else if special {
            rng.uniform(-2.0, 2.0)
        } else {
            rng.uniform(0.5, 2.0)
        }
    })
}

const ONE_D: [&str; 16] = [
    "x * 2.5 - 1",
    "where(x > 0, x, -x * 3)",
    "sqrt(abs(x)) + x * x",
    "max(x)",
    "min(x * 2)",
    "argmax(x)",
    "argmin(x)",
    "sum(x)",
    "sum(x * x)",
    "mean(x)",
    "var(x)",
    "std(x)",
    "cumsum(x)",
    "cummax(x)",
    "cumprod(x / 2)",
    "x * 2; sum(x * 2)",
];

#[test]
fn one_dimensional_reversed_and_stepped_views() {
    // lengths below the vector width, with tails, one element and none; steps both ways
    for n in [0, 1, 2, 3, 5, 8, 17, 203] {
        for step in [-1isize, 2, -2, 3, -3, 16] {
            for special in [false, true] {
                let base = vector(n * step.unsigned_abs() + 2, n as u64 * 31 + 7, special);
                let base32 = base.mapv(|v| v as f32);
                let v = base.slice(s![1..;step]);
                let v = v.slice(s![..n]).into_dyn();
                let v32 = base32.slice(s![1..;step]);
                let v32 = v32.slice(s![..n]).into_dyn();
                assert_eq!(v.len(), n);
                if n >= 2 {
                    for x in [ArrayArg::from(v.view()), ArrayArg::from(v32.view())] {
                        assert_eq!(
                            plan_of("x * 2", x),
                            InputPlan::PerRow {
                                row: RowAccess::Strided { stride: step },
                                outer_strides: vec![],
                            },
                            "x[::{step}] of {n}"
                        );
                    }
                }
                for expr in ONE_D {
                    if special && (expr.starts_with("cumprod") || expr.contains("; sum")) {
                        continue;
                    }
                    // min, max and the statistics over no element are errors (on both)
                    let needs_one = ["max(", "min(", "arg", "mean(", "var(", "std("];
                    if n == 0 && needs_one.iter().any(|f| expr.contains(f)) {
                        continue;
                    }
                    let what = format!("x[::{step}] of {n} (special {special})");
                    agree(expr, &[("x", v.view().into())], &what);
                    agree(expr, &[("x", v32.view().into())], &format!("f32 {what}"));
                }
            }
        }
    }
}

#[test]
fn two_dimensional_strided_rows_under_every_kernel_kind() {
    let x = data(60, 250, 31).mapv(|v| v + 1.5);
    let views: [(&str, ArrayViewD<'_, f64>); 5] = [
        ("x[:, ::-1]", x.slice(s![.., ..;-1]).into_dyn()),
        ("x[:, ::2]", x.slice(s![.., ..;2]).into_dyn()),
        ("x[::-1, ::-2]", x.slice(s![..;-1, ..;-2]).into_dyn()),
        ("x[::2, 3::3]", x.slice(s![..;2, 3..;3]).into_dyn()),
        ("x[::-3, :200:-3]", x.slice(s![..;-3, ..200;-3]).into_dyn()),
    ];
    let exprs = [
        "x * 2.5 - 1",
        "sum(x, axis=1)",
        "sum(x, axis=0)",
        "sum(x, axis=1, keepdims=1)",
        "max(x, axis=0)",
        "argmin(x, axis=1)",
        "prod(x / 2, axis=1)",
        "mean(x, axis=1)",
        "var(x, axis=1)",
        "std(x)",
        "mean(x, axis=0)",
        "cumsum(x, axis=1)",
        "cumsum(x, axis=0)",
        "cummin(x, axis=1)",
        "cumsum(x)",
        "x * 2; sum(x * 2)",
        "x - 1; x + 1; max(x - 1)",
    ];
    for (what, v) in views {
        let v32 = v.mapv(|e| e as f32);
        let v32 = ndarray::Array2::from_shape_vec(
            (v.shape()[0], v.shape()[1] * 2),
            v32.iter().flat_map(|&e| [e, -7.0]).collect(),
        )
        .unwrap();
        // the f32 view: every other column of a wider array, reversed
        let v32 = v32.slice(s![.., ..;-2]).into_dyn();
        for expr in exprs {
            agree(expr, &[("x", v.view().into())], what);
            agree(expr, &[("x", v32.view().into())], &format!("f32 {what}"));
        }
    }
}

#[test]
fn strided_rows_beside_broadcast_and_zero_dimensional_inputs() {
    let x = data(80, 300, 41).mapv(|v| v + 1.5);
    let w = vector(300, 42, false);
    let c = data(80, 1, 43).mapv(|v| v + 1.5);
    let z = ndarray::arr0(0.75);
    let v = x.slice(s![..;-1, ..;-2]);
    let row = w.slice(s![..;-2]);
    let args = [
        ("x", ArrayArg::from(v.view())),
        ("w", ArrayArg::from(row.view())),
        ("c", ArrayArg::from(c.view())),
        ("z", ArrayArg::from(z.view())),
    ];
    for expr in [
        "x * w + c * z",
        "sum(x * w, axis=1)",
        "sum(x - w * z, axis=0)",
        "max(x * c - w)",
        "var(x + w, axis=1)",
        "cumsum(x * w, axis=1)",
    ] {
        let r = runner(expr, "jit");
        let (_, plan) = r.explain(&args).unwrap();
        let wi = r.input_names().iter().position(|n| n == "w").unwrap();
        agree(
            expr,
            &args,
            "a strided view beside a strided row, a column and a 0-d input",
        );
        if !expr.starts_with("cumsum") && !expr.starts_with("var") {
            // the reversed vector is one strided row re-read by every row (outer stride 0)
            assert_eq!(
                plan.inputs[wi],
                InputPlan::PerRow {
                    row: RowAccess::Strided { stride: -2 },
                    outer_strides: vec![0],
                },
                "{expr}: {plan}"
            );
            assert!(!plan.to_string().contains("materialise"), "{expr}: {plan}");
        }
    }
}

#[test]
fn a_c_input_beside_a_fortran_or_transposed_one_is_read_in_place() {
    let c = data(120, 90, 51).mapv(|v| v + 1.5);
    let f = data(120, 90, 52).mapv(|v| v + 1.5);
    let f = f.t().as_standard_layout().into_owned().reversed_axes(); // Fortran (120, 90)
    let t = data(90, 120, 53).mapv(|v| v + 1.5); // t.t(): a transposed C array
    for (what, odd) in [("Fortran", f.view()), ("transposed", t.t())] {
        let args = [("a", ArrayArg::from(c.view())), ("b", ArrayArg::from(odd))];
        for expr in [
            "a + 2 * b",
            "sum(a * b)",
            "sum(a * b, axis=1)",
            "sum(a - b, axis=0)",
            "max(a / b, axis=1)",
            "mean(a * b, axis=1)",
            "a * b; sum(a * b)",
        ] {
            let r = runner(expr, "jit");
            let stages = r.explain_all(&args).unwrap();
            let (_, plan) = &stages[0];
            assert_eq!(plan.inputs[0], InputPlan::Contiguous, "{expr} on {what}: {plan}");
            // the odd input's row steps by a whole column of 120
            assert_eq!(
                plan.inputs[1],
                InputPlan::PerRow {
                    row: RowAccess::Strided { stride: 120 },
                    outer_strides: vec![1],
                },
                "{expr} on {what}: {plan}"
            );
            assert!(
                !plan.to_string().contains("materialise"),
                "{expr} on {what}: {plan}"
            );
            agree(expr, &args, &format!("C beside {what}"));
        }
    }
}

#[test]
fn strided_rows_through_blocked_transcendentals_and_many_inputs() {
    // exp and log run on blocks staged in stack buffers (skeleton/block.rs): the strided input is
    // read into the block like any other; within the transcendental's bound of the interpreter
    let x = data(40, 300, 61).mapv(|v| v + 1.5);
    for v in [
        x.slice(s![.., ..;-1]).into_dyn(),
        x.slice(s![..;-1, 1..;3]).into_dyn(),
    ] {
        for expr in ["exp(x) + log(x)", "sum(exp(x * 0.5), axis=1)", "sum(log(x))"] {
            let a = values(runner(expr, "jit").run(&[("x", v.view().into())]).unwrap());
            let b = values(runner(expr, "interp").run(&[("x", v.view().into())]).unwrap());
            assert_eq!(a.0, b.0, "{expr}");
            assert!(close(&a.1, &b.1, 1e-12), "{expr}");
        }
    }
    // more inputs than the JIT keeps in registers: row pointers held on the stack, strided rows
    // among them
    let n = 70;
    let names: Vec<String> = (0..n).map(|i| format!("x{i}")).collect();
    let expr = names.join(" + ");
    let views: Vec<ArrayViewD<'_, f64>> = (0..n)
        .map(|i| match i % 3 {
            0 => x.slice(s![.., ..100;-1]).into_dyn(),
            1 => x.slice(s![..;-1, ..;3]).into_dyn(),
            _ => x.slice(s![.., 100..200]).into_dyn(),
        })
        .collect();
    let args: Vec<(&str, ArrayArg<'_>)> = names
        .iter()
        .zip(&views)
        .map(|(name, v)| (name.as_str(), ArrayArg::from(v.view())))
        .collect();
    let (_, plan) = runner(&expr, "jit").explain(&args).unwrap();
    assert!(!plan.to_string().contains("materialise"), "{plan}");
    agree(&expr, &args, "70 inputs, strided rows among them");
    agree(
        &format!("sum({expr}, axis=1)"),
        &args,
        "70 inputs, strided rows among them",
    );
}

/// Runs `expr` over `args` on the typed interpreter (`interp`) and on `jit` and `jit-scalar`, which
/// must agree bit for bit (the Debug text of the outputs: exact for integers and bools, and for
/// floats any NaN equal to any NaN); `in_place`: the inputs `kiln explain` must say the compiled
/// code reads in place (or all of them in memory order, each C-contiguous in its axes' order). A
/// case the typing refuses is refused by all three.
fn typed_agrees(expr: &str, args: &[(&str, ArrayArg<'_>)], in_place: &[&str], what: &str) {
    let want = runner(expr, "interp").run(args).map(|o| format!("{o:?}"));
    for backend in ["jit", "jit-scalar"] {
        let got = runner(expr, backend).run(args).map(|o| format!("{o:?}"));
        match (&want, &got) {
            (Ok(w), Ok(g)) => assert_eq!(w, g, "{expr} on {what} ({backend})"),
            (Err(_), Err(_)) => {}
            _ => panic!("{expr} on {what} ({backend}): interp {want:?}, jit {got:?}"),
        }
    }
    if want.is_err() {
        return;
    }
    let notes = runner(expr, "jit").explain_rewrites(args).unwrap();
    let text = notes.last().unwrap().2.join("\n");
    if text.contains("interpreted:") {
        // a kernel the typed code generator routes to the interpreter (`why_not`): as before
        assert!(
            text.contains("the JIT does not compile"),
            "{expr} on {what}:\n{text}"
        );
        return;
    }
    if !text.contains("typed kernel") {
        // a float kernel reading integer or bool inputs converted (tests/stored.rs): its plan reads
        // a view in place as a float view's would (short rows copied, converted)
        return;
    }
    for name in in_place {
        assert!(
            text.contains(&format!("'{name}' in place")) || text.contains("reading each in place"),
            "{expr} on {what}: '{name}' not read in place:\n{text}"
        );
    }
}

/// The 2-D views of the typed pattern test: outer and inner reversed (alone and together), steps
/// of 2 and 3 (negative too), transposed (Fortran), one row, one element, empty.
fn views2<T>(a: &ndarray::Array2<T>) -> Vec<(&'static str, ndarray::ArrayView2<'_, T>)> {
    vec![
        ("[::-1, :]", a.slice(s![..;-1, ..])),
        ("[:, ::-1]", a.slice(s![.., ..;-1])),
        ("[::-1, ::-1]", a.slice(s![..;-1, ..;-1])),
        ("[::2, ::3]", a.slice(s![..;2, ..;3])),
        ("[::-2, ::-3]", a.slice(s![..;-2, ..;-3])),
        ("[:, ::2]", a.slice(s![.., ..;2])),
        ("[::2, ::-1]", a.slice(s![..;2, ..;-1])),
        ("[1:2, ::-1]", a.slice(s![1..2, ..;-1])),
        ("[:1, :1]", a.slice(s![..1, ..1])),
        ("[:, 0:0]", a.slice(s![.., 0..0])),
        (".T", a.t()),
    ]
}

#[test]
fn typed_kernels_read_strided_views_in_place() {
    // integer and bool inputs run typed kernels, whose code reads a strided view in place (per-lane
    // gathers, a lane reversal for stride -1): every pattern against the typed interpreter, with
    // int32 MIN / -1, division by zero and wrapping overflow among the values, a C input, a
    // broadcast row and a 0-d input beside the views
    let (r, c) = (9, 14);
    let edge = [i32::MIN, -1, 0, 7, i32::MAX, -7, 3, 2, 1, -3, 0, 65];
    let i32s = ndarray::Array2::from_shape_fn((r, c), |(i, j)| edge[(i * 5 + j * 3) % edge.len()]);
    let i64s = i32s.mapv(|v| i64::from(v) * 3_000_000_001);
    let bools = i32s.mapv(|v| v % 3 == 0);
    let floats = data(r, c, 91);
    let maps = [
        "x % 7 + y",
        "x // y",
        "x % y",
        "x * y - x",
        "where(b, x, y)",
        "(x > y) & b",
        "x * 0.5 + f",
        "abs(x) + b",
    ];
    let reductions = [
        "sum(x, axis=1)",
        "max(x, axis=1)",
        "sum(x, axis=0)",
        "min(x * y, axis=0)",
        "prod(x)",
        "any(b & (x > 0))",
        "argmax(x, axis=1)",
        "argmin(x)",
        "mean(x)",
    ];
    let scans = [
        "cumsum(x, axis=1)",
        "cumsum(x, axis=0)",
        "cummax(x, axis=1)",
        "cumprod(x, axis=0)",
    ];
    for (what, xv) in views2(&i32s) {
        let shape = xv.raw_dim();
        let n = shape[0] * shape[1];
        // y: a C array of the view's shape, divisors 0 and -1 among its values
        let y = ndarray::Array2::from_shape_fn(shape, |(i, j)| [3, 0, -1, 5, i32::MIN][(i + j) % 5]);
        let bv = views2(&bools).into_iter().find(|v| v.0 == what).unwrap().1;
        let fv = views2(&floats).into_iter().find(|v| v.0 == what).unwrap().1;
        let lv = views2(&i64s).into_iter().find(|v| v.0 == what).unwrap().1;
        let strided = n > 1;
        let args = [
            ("x", ArrayArg::from(xv)),
            ("y", ArrayArg::from(y.view())),
            ("b", ArrayArg::from(bv)),
            ("f", ArrayArg::from(fv)),
        ];
        for expr in maps.iter().chain(&reductions).chain(&scans) {
            let used: Vec<&str> = ["x", "b", "f"]
                .into_iter()
                .filter(|v| strided && expr.contains(v) && !(*v == "b" && expr.contains("abs")))
                .collect();
            let args: Vec<(&str, ArrayArg<'_>)> = args
                .iter()
                .filter(|(name, _)| expr.contains(name))
                .map(|(name, a)| (*name, a.clone()))
                .collect();
            typed_agrees(expr, &args, &used, what);
        }
        // int64 views, with a broadcast row (its stride 0 on the outer axis) and a 0-d input
        let row = ndarray::Array1::from_shape_fn(shape[1], |j| [2i64, 0, -1][j % 3]);
        let zero_d = ndarray::arr0(-1i64);
        for expr in [
            "x // r + z",
            "x * r",
            "sum(x * z, axis=1)",
            "cumsum(x - r, axis=1)",
            "x % r",
        ] {
            let args = [
                ("x", ArrayArg::from(lv)),
                ("r", ArrayArg::from(row.view())),
                ("z", ArrayArg::from(zero_d.view())),
            ];
            let args: Vec<(&str, ArrayArg<'_>)> = args
                .iter()
                .filter(|(name, _)| expr.contains(name))
                .cloned()
                .collect();
            typed_agrees(expr, &args, if strided { &["x"] } else { &[] }, what);
        }
    }
    // 1-D: lengths below the vector width and with tails, stepped by 1, 2 and 3 either way
    for len in [1usize, 2, 3, 5, 8, 17, 40] {
        let a = ndarray::Array1::from_shape_fn(len * 3, |i| edge[i % edge.len()]);
        let bb = a.mapv(|v| v > 0);
        for step in [-1isize, 2, -2, 3, -3] {
            let xv = a.slice(s![..;step]);
            let bv = bb.slice(s![..;step]);
            let m = xv.len();
            let y = ndarray::Array1::from_shape_fn(m, |i| [3, 0, -1, 7][i % 4]);
            for expr in [
                "x % 7 + y",
                "x // y",
                "where(b, x, -x)",
                "sum(x)",
                "cumsum(x)",
                "max(x)",
            ] {
                let args = [
                    ("x", ArrayArg::from(xv)),
                    ("y", ArrayArg::from(y.view())),
                    ("b", ArrayArg::from(bv)),
                ];
                let args: Vec<(&str, ArrayArg<'_>)> = args
                    .iter()
                    .filter(|(name, _)| expr.contains(name))
                    .cloned()
                    .collect();
                let in_place: &[&str] = if m > 1 { &["x"] } else { &[] };
                typed_agrees(expr, &args, in_place, &format!("a[::{step}] of {m}"));
            }
        }
    }
}

/// 2-D data with NaN, ±inf and -0.0 among the values.
fn spicy(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut x = data(rows, cols, seed);
    let special = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0];
    for (i, v) in x.iter_mut().enumerate() {
        if i % 11 == 5 {
            *v = special[(i / 11) % special.len()];
        }
    }
    x
}

/// Runs `expr` over `args` with rows of any length read per row (`min_row` 1): the JIT's plan reads
/// every input in place and copies nothing (`kiln explain` has no copy note), and its values are
/// bit-exact against the JIT over `copies` (C-contiguous copies of the same inputs: the same code
/// order, read flat), and against the interpreter: bit-exact for cummax / cummin and scans along an
/// outer axis (each column folds in order), within the innermost sum's bound (jit/src/scan.rs)
/// otherwise.
fn check_scan_in_place(
    expr: &str,
    args: &[(&str, ArrayArg<'_>)],
    copies: &[(&str, ArrayArg<'_>)],
    exact: bool,
    what: &str,
) -> kiln::kiln_ir::BroadcastPlan {
    let opts = kiln::kiln_ir::PlanOptions { min_row: 1 };
    let jit = |t: usize| {
        runner(expr, "jit")
            .with_plan_options(opts)
            .with_threads(t)
            .with_threshold(0)
    };
    let (_, plan) = jit(1).explain(args).unwrap();
    // (an empty space copies nothing: a materialised input of no points is no copy)
    if !plan.shape.contains(&0) {
        assert_eq!(plan.copies(), 0, "{expr} on {what}:\n{plan}");
    }
    let notes = jit(1).explain_rewrites(args).unwrap();
    let text = notes.last().unwrap().2.join("\n");
    assert!(!text.contains("copied"), "{expr} on {what}:\n{text}");
    let flat: Vec<f64> = jit(1).run(copies).unwrap().into_f64().iter().copied().collect();
    let want = runner(expr, "interp").run(args).unwrap();
    let is_f32 = want.elem() == kiln::kiln_ir::ElemType::F32;
    let want: Vec<f64> = want.into_f64().iter().copied().collect();
    for threads in [1, 3] {
        let got: Vec<f64> = jit(threads)
            .run(args)
            .unwrap()
            .into_f64()
            .iter()
            .copied()
            .collect();
        assert!(
            bits_equal(&got, &flat),
            "{expr} on {what}, {threads} threads: in place vs copied\n{got:?}\n{flat:?}"
        );
        let ok = if exact {
            bits_equal(&got, &want)
        } else {
            close(&got, &want, if is_f32 { 1e-5 } else { 1e-12 })
        };
        assert!(ok, "{expr} on {what}, {threads} threads:\n{got:?}\n{want:?}");
    }
    plan
}

/// Views of `rows x cols` of `x` (which has at least `2 * rows + 1` rows and `3 * cols + 2`
/// columns) that are not one strided run: reversed, stepped by 2 and 3, column slices, negative
/// outer strides.
fn scan_views<T>(x: &Array2<T>, rows: usize, cols: usize) -> Vec<(&'static str, ArrayViewD<'_, T>)> {
    let views = [
        ("reversed columns", x.slice(s![..rows, ..cols;-1])),
        ("rows by 2, columns reversed", x.slice(s![..;2, ..cols;-1])),
        ("column slice", x.slice(s![..rows, ..cols])),
        (
            "rows reversed, columns by 2",
            x.slice(s![..rows;-1, ..2 * cols;2]),
        ),
        ("columns by 3", x.slice(s![..rows, ..3 * cols;3])),
        ("rows by -2, columns by -3", x.slice(s![..;-2, ..;-3])),
    ];
    views
        .into_iter()
        .map(|(what, v)| (what, v.slice_move(s![..rows, ..cols]).into_dyn()))
        .collect()
}

#[test]
fn float_scans_read_strided_views_in_place() {
    // lengths below the vector width, with tails, one element, empty; f64 and f32
    for (rows, cols) in [(7, 1), (6, 3), (5, 9), (9, 67), (1, 1), (0, 5), (4, 0)] {
        let x = spicy(2 * rows + 1, 3 * cols + 2, (rows * 100 + cols) as u64);
        let x32 = x.mapv(|v| v as f32);
        let y = spicy(1, cols, 7).into_shape_with_order(cols).unwrap();
        let y32 = y.mapv(|v| v as f32);
        let f64s = scan_views(&x, rows, cols);
        let f32s = scan_views(&x32, rows, cols);
        for ((what, v), (_, v32)) in f64s.into_iter().zip(f32s) {
            let what = format!("{what} {rows}x{cols}");
            let c = v.as_standard_layout().into_owned();
            let c32 = v32.as_standard_layout().into_owned();
            for (op, options, exact_line) in [
                ("cumsum", "", false),
                ("cumprod", "", false),
                ("cummax", "", true),
                ("cummin", "", true),
                ("cumsum", ", reverse=1", false),
                ("cumprod", ", exclusive=1, reverse=1", false),
                ("cummax", ", exclusive=1, initial=0", true),
                ("cummin", ", reverse=1, initial=0.5", true),
            ] {
                // along the first axis of more than one column, the columns fold side by side in
                // order (exact); of one column, it is one line in vectors
                for (axis, exact) in [(1, exact_line), (0, exact_line || cols > 1)] {
                    let expr = format!("{op}(x, axis={axis}{options})");
                    let args = [("x", ArrayArg::from(v.view()))];
                    let copies = [("x", ArrayArg::from(c.view()))];
                    check_scan_in_place(&expr, &args, &copies, exact, &what);
                    let args = [("x", ArrayArg::from(v32.view()))];
                    let copies = [("x", ArrayArg::from(c32.view()))];
                    check_scan_in_place(&expr, &args, &copies, exact, &format!("{what} f32"));
                }
            }
            // a broadcast row beside the view is read in place too
            let expr = "cumsum(x * y, axis=1)";
            let yv = y.view().into_dyn();
            let args = [("x", ArrayArg::from(v.view())), ("y", ArrayArg::from(yv.view()))];
            let copies = [("x", ArrayArg::from(c.view())), ("y", ArrayArg::from(yv.view()))];
            check_scan_in_place(expr, &args, &copies, false, &what);
            let yv = y32.view().into_dyn();
            let args = [
                ("x", ArrayArg::from(v32.view())),
                ("y", ArrayArg::from(yv.view())),
            ];
            let copies = [
                ("x", ArrayArg::from(c32.view())),
                ("y", ArrayArg::from(yv.view())),
            ];
            check_scan_in_place(expr, &args, &copies, false, &format!("{what} f32"));
        }
    }
}

#[test]
fn float_scans_read_3d_views_in_place_along_each_axis() {
    let x = spicy(9 * 7, 23, 31).into_shape_with_order((9, 7, 23)).unwrap();
    // whether the two inner axes step uniformly: a scan along the first axis reads them as one row
    // per step of a block, else as rows of the last axis, several per step
    let views: [(&str, ndarray::ArrayView3<'_, f64>, bool); 5] = [
        ("reversed last axis", x.slice(s![..4, .., ..;-1]), false),
        ("stepped 2, 3, -1", x.slice(s![..;2, ..;3, ..;-1]), false),
        ("reversed first, last by 2", x.slice(s![..;-1, 1.., ..;2]), false),
        ("middle reversed", x.slice(s![2..7, ..;-1, ..]), false),
        ("first by -2", x.slice(s![..;-2, .., ..]), true),
    ];
    for (what, v, uniform) in views {
        let c = v.as_standard_layout().into_owned();
        for (op, exact_last) in [
            ("cumsum", false),
            ("cumprod", false),
            ("cummax", true),
            ("cummin", true),
        ] {
            for axis in 0..3 {
                let expr = format!("{op}(x, axis={axis})");
                let exact = axis < 2 || exact_last;
                let args = [("x", ArrayArg::from(v.into_dyn()))];
                let copies = [("x", ArrayArg::from(c.view().into_dyn()))];
                let plan = check_scan_in_place(&expr, &args, &copies, exact, what);
                let rows = if axis == 0 && uniform { 1 } else { 2 };
                assert_eq!(plan.outer_axes, rows, "{expr} on {what}:\n{plan}");
            }
        }
    }
}

#[test]
fn float_scans_say_why_they_still_copy() {
    // scanned along the first axis, a block's rows are the two inner axes: a column slice of them
    // does not step uniformly and is copied; lines shorter than min_row are copied under the
    // default plan options; the values are the interpreter's either way
    let x = spicy(4 * 5, 20, 3).into_shape_with_order((4, 5, 20)).unwrap();
    let x2 = spicy(6, 40, 17);
    let cases: [(&str, ArrayViewD<'_, f64>, &str); 3] = [
        (
            "cummax(x, axis=0)",
            x.slice(s![.., .., ..5]).into_dyn(),
            "rows would be of 5 points",
        ),
        (
            "cumsum(x, axis=1)",
            x2.slice(s![.., ..;-1]).into_dyn(),
            "shorter than min_row 64",
        ),
        (
            "cumsum(x)",
            x2.slice(s![..;2, ..25;-1]).into_dyn(),
            "not whole vectors of 2",
        ),
    ];
    for (expr, v, why) in cases {
        let args = [("x", ArrayArg::from(v))];
        let notes = runner(expr, "jit").explain_rewrites(&args).unwrap();
        let text = notes.last().unwrap().2.join("\n");
        assert!(
            text.contains("scan: input 'x' copied") && text.contains(why),
            "{expr}:\n{text}"
        );
        let want = runner(expr, "interp").run(&args).unwrap().into_f64();
        let got = runner(expr, "jit").run(&args).unwrap().into_f64();
        let (got, want): (Vec<f64>, Vec<f64>) =
            (got.iter().copied().collect(), want.iter().copied().collect());
        assert!(close(&got, &want, 1e-12), "{expr}");
    }
    // long lines are read in place under the default options
    let x3 = spicy(10, 300, 5);
    let v = x3.slice(s![.., ..200;-1]).into_dyn();
    let (_, plan) = runner("cumsum(x, axis=1)", "jit")
        .explain(&[("x", v.into())])
        .unwrap();
    assert_eq!(
        plan.inputs[0],
        InputPlan::PerRow {
            row: RowAccess::Strided { stride: -1 },
            outer_strides: vec![300]
        },
        "{plan}"
    );
}

/// Whether the JIT's plan of `expr` over `args` (rows of any length, `min_row` 1) copies an input,
/// and its explain notes.
fn copy_notes(expr: &str, args: &[(&str, ArrayArg<'_>)]) -> Option<String> {
    let opts = kiln::kiln_ir::PlanOptions { min_row: 1 };
    let notes = runner(expr, "jit")
        .with_plan_options(opts)
        .explain_rewrites(args)
        .unwrap();
    let text = notes.last().unwrap().2.join("\n");
    text.contains("copied").then_some(text)
}

#[test]
fn scans_of_the_flattened_array_read_strided_views_in_place() {
    // the one line is walked row by row, the carry (and an exclusive scan's held-back value) going
    // on from one row into the next: bit-exact against the flat walk of a C copy. A sum or product
    // whose rows are not whole vectors keeps the copy (its vectors would straddle rows) and says so;
    // lengths below the vector width, with tails, one element, empty; f64 and f32
    let mut in_place = 0;
    for (rows, cols) in [
        (3, 4),
        (5, 8),
        (1, 4),
        (9, 68),
        (2, 2),
        (7, 1),
        (6, 3),
        (5, 9),
        (1, 1),
        (0, 5),
        (4, 0),
    ] {
        let x = spicy(2 * rows + 1, 3 * cols + 2, (rows * 100 + cols) as u64 + 7);
        let x32 = x.mapv(|v| v as f32);
        let f64s = scan_views(&x, rows, cols);
        let f32s = scan_views(&x32, rows, cols);
        for ((what, v), (_, v32)) in f64s.into_iter().zip(f32s) {
            let what = format!("{what} {rows}x{cols}");
            let c = v.as_standard_layout().into_owned();
            let c32 = v32.as_standard_layout().into_owned();
            for (op, options, exact) in [
                ("cumsum", "", false),
                ("cumprod", "", false),
                ("cummax", "", true),
                ("cummin", "", true),
                ("cumsum", ", reverse=1", false),
                ("cumsum", ", exclusive=1", false),
                ("cumprod", ", exclusive=1, reverse=1", false),
                ("cumsum", ", initial=0.25", false),
                ("cummax", ", exclusive=1, initial=0", true),
                ("cummin", ", reverse=1, initial=0.5", true),
            ] {
                let expr = format!("{op}(x{options})");
                let wide = matches!(op, "cumsum" | "cumprod");
                let cases = [
                    (ArrayArg::from(v.view()), ArrayArg::from(c.view()), 2, "f64"),
                    (ArrayArg::from(v32.view()), ArrayArg::from(c32.view()), 4, "f32"),
                ];
                for (arg, copy, lanes, ty) in cases {
                    let what = format!("{what} {ty}");
                    let args = [("x", arg)];
                    let copies = [("x", copy)];
                    match copy_notes(&expr, &args) {
                        Some(text) => {
                            // only a sum or product of rows that are not whole vectors is copied
                            assert!(wide && cols % lanes != 0, "{expr} on {what}:\n{text}");
                            assert!(text.contains("not whole vectors"), "{expr} on {what}:\n{text}");
                            let got = runner(&expr, "jit").run(&args).unwrap().into_f64();
                            let want = runner(&expr, "jit").run(&copies).unwrap().into_f64();
                            let (got, want): (Vec<f64>, Vec<f64>) =
                                (got.iter().copied().collect(), want.iter().copied().collect());
                            assert!(bits_equal(&got, &want), "{expr} on {what}");
                        }
                        None => {
                            let plan = check_scan_in_place(&expr, &args, &copies, exact, &what);
                            in_place += usize::from(plan.outer_axes > 0);
                        }
                    }
                }
            }
        }
    }
    assert!(in_place > 300, "{in_place} flat scans read per row");
    // 3-D views (rows of the last axis, or of the two last axes where they step alike), a Fortran
    // array and a C input beside a transposed one (read in C order)
    let x = spicy(9 * 7, 24, 31).into_shape_with_order((9, 7, 24)).unwrap();
    let views: [(&str, ndarray::ArrayView3<'_, f64>, usize); 4] = [
        ("reversed last axis", x.slice(s![..4, .., ..;-1]), 2),
        ("stepped 2, 3, -2", x.slice(s![..;2, ..;3, ..;-2]), 2),
        ("first by -2", x.slice(s![..;-2, .., ..]), 1),
        ("middle reversed", x.slice(s![2..7, ..;-1, ..]), 2),
    ];
    for (what, v, axes) in views {
        let c = v.as_standard_layout().into_owned();
        for (op, exact) in [
            ("cumsum", false),
            ("cumprod", false),
            ("cummax", true),
            ("cummin", true),
        ] {
            let expr = format!("{op}(x)");
            let args = [("x", ArrayArg::from(v.into_dyn()))];
            let copies = [("x", ArrayArg::from(c.view().into_dyn()))];
            let plan = check_scan_in_place(&expr, &args, &copies, exact, what);
            assert_eq!(plan.outer_axes, axes, "{expr} on {what}:\n{plan}");
        }
    }
    let a = spicy(12, 40, 3);
    let f = a.t().as_standard_layout().into_owned().reversed_axes();
    let t = spicy(40, 12, 4);
    let (fc, tc) = (
        f.as_standard_layout().into_owned(),
        t.t().as_standard_layout().into_owned(),
    );
    for expr in [
        "cumsum(x)",
        "cumsum(a + x, reverse=1)",
        "cummax(a * x, exclusive=1)",
    ] {
        // `cumsum(x)` reads `x` alone
        let skip = usize::from(expr == "cumsum(x)");
        for (what, view, copy) in [("Fortran", f.view(), fc.view()), ("transposed", t.t(), tc.view())] {
            let args = [
                ("a", ArrayArg::from(a.view().into_dyn())),
                ("x", ArrayArg::from(view.into_dyn())),
            ];
            let copies = [
                ("a", ArrayArg::from(a.view().into_dyn())),
                ("x", ArrayArg::from(copy.into_dyn())),
            ];
            check_scan_in_place(expr, &args[skip..], &copies[skip..], expr.contains("max"), what);
        }
    }
}

/// `kiln explain` of a typed kernel shows the plan it runs by: an int64 view with a step of 2 along
/// its rows read in place (with its strides, not as a contiguous copy), and the code compiled for
/// that plan.
#[test]
fn explain_shows_the_plan_a_typed_kernel_runs_by() {
    let m = ndarray::Array2::from_shape_fn((6, 10), |(i, j)| (i * 10 + j) as i64 - 7);
    let t = m.slice(s![.., ..;2]);
    let runner = kiln::FusedRunner::compile_text("i * 3 - 1").unwrap();
    let args = [("i", t.into())];
    let opts = kiln::ExplainOptions {
        clif: true,
        asm: false,
    };
    let text = runner.explain_text(&args, opts).unwrap();
    assert!(text.contains("compiled: typed kernel"), "{text}");
    assert!(!text.contains("in0: contiguous"), "{text}");
    assert!(text.contains("; clif"), "{text}");
    // and the run agrees with the interpreter
    let got = runner.run(&args).unwrap();
    let want = kiln::FusedRunner::compile_text("i * 3 - 1")
        .unwrap()
        .with_backend(kiln::interpreter())
        .run(&args)
        .unwrap();
    assert_eq!(got, want);
}
