//! Axis reductions, scans and pipelines of several kernels on Fortran-ordered and transposed inputs
//! run in memory order (`src/memory_order.rs`): every input read in place, the axes of each kernel
//! mapped through the permutation, the result in the user's axes with NumPy's `order='K'` layout
//! (the kept axes' order; an arg-reduction's indices in C order). Each run is compared with the
//! interpreter on C-contiguous copies: bit-exact for maps, min, max, their arg forms and running
//! min/max (the fold order does not matter), within a bound on the sum of magnitudes for sums,
//! products, means, variances and their scans (the memory-order kernel folds the other way round).
//! The prepared handle runs such inputs in memory order too, without copying them.

mod support;

use kiln::kiln_ir::InputPlan;
use kiln::{ArrayArg, Output};
use ndarray::{Array2, Array3, ArrayD, ArrayViewD, IxDyn};
use support::{Rng, bits_equal, oracle, runner, values};

fn args<'a>(inputs: &'a [(&'a str, ArrayViewD<'a, f64>)]) -> Vec<(&'a str, ArrayArg<'a>)> {
    inputs
        .iter()
        .map(|(n, v)| (*n, ArrayArg::from(v.view())))
        .collect()
}

/// Whether `expr`'s value is the same whatever order its folds run in (maps, min, max, their arg
/// forms and scans): then a memory-order run is bit-exact.
fn exact(expr: &str) -> bool {
    ["sum", "prod", "mean", "var", "std", "cumsum", "cumprod"]
        .iter()
        .all(|f| !expr.contains(&format!("{f}(")))
}

/// Compares `got` with `want`: bit-exact for `exact` expressions, else within 1e-12 per input
/// element (the data lies in [-1, 1], so every sum's magnitudes add up to at most that count).
fn agree(expr: &str, got: &(Vec<usize>, Vec<f64>), want: &(Vec<usize>, Vec<f64>), n: usize, what: &str) {
    assert_eq!(got.0, want.0, "{expr} on {what}: shape");
    let ok = if exact(expr) {
        bits_equal(&got.1, &want.1)
    } else {
        got.1.iter().zip(&want.1).all(|(g, w)| {
            (g.is_nan() && w.is_nan())
                || g == w
                || (g - w).abs() <= 1e-12 * (n as f64 + 1.0) * (1.0 + w.abs())
        })
    };
    assert!(
        ok,
        "{expr} on {what}: {:?} vs {:?}",
        &got.1[..got.1.len().min(6)],
        &want.1[..want.1.len().min(6)]
    );
}

/// The result's axes by decreasing stride, as NumPy's `order='K'` lays them out: each result axis
/// after the input axis it comes from (`from[j]`), by the input's strides.
fn k_order(input_strides: &[isize], from: &[usize]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..from.len()).collect();
    order.sort_by_key(|&j| std::cmp::Reverse(input_strides[from[j]]));
    order
}

/// Whether `out` has the layout `order` says (its axes in that order are C-contiguous), ignoring
/// axes of length one.
fn laid_out(out: &Output, order: &[usize]) -> bool {
    let a = out.clone().into_f64();
    let p = a.view().permuted_axes(IxDyn(order));
    let (shape, strides) = (p.shape().to_vec(), p.strides().to_vec());
    let mut step = 1isize;
    for i in (0..shape.len()).rev() {
        if shape[i] > 1 && strides[i] != step {
            return false;
        }
        step *= shape[i] as isize;
    }
    true
}

/// Runs `expr` on the JIT (one and three threads) and the interpreter, in memory order (checked),
/// against the oracle; the JIT's result.
fn check(expr: &str, inputs: &[(&str, ArrayViewD<'_, f64>)], what: &str, in_memory: bool) -> Option<Output> {
    let want = oracle(expr, inputs);
    let n = inputs.iter().map(|(_, v)| v.len()).max().unwrap_or(0);
    let a = args(inputs);
    let mut last = None;
    for (backend, threads) in [("jit", 1), ("jit", 3), ("interp", 1)] {
        let r = runner(expr, backend).with_threads(threads).with_threshold(0);
        let bound: Vec<&ArrayArg<'_>> = r
            .input_names()
            .iter()
            .map(|n| &a.iter().find(|(m, _)| m == n).unwrap().1)
            .collect();
        assert_eq!(
            r.memory_order(&bound).is_some(),
            in_memory,
            "{expr} on {what}: in memory order"
        );
        match (r.run(&a), &want) {
            (Ok(out), Ok(want)) => {
                agree(
                    expr,
                    &values(out.clone()),
                    want,
                    n,
                    &format!("{what}, {backend} x{threads}"),
                );
                last = Some(out);
            }
            (Err(_), Err(_)) => {}
            (got, want) => panic!("{expr} on {what}: {:?} vs {want:?}", got.map(values)),
        }
    }
    last
}

fn data2(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
    let mut rng = Rng::new(seed);
    Array2::from_shape_fn((rows, cols), |_| rng.uniform(-1.0, 1.0))
}

fn data3(shape: (usize, usize, usize), seed: u64) -> Array3<f64> {
    let mut rng = Rng::new(seed);
    Array3::from_shape_fn(shape, |_| rng.uniform(-1.0, 1.0))
}

/// Every one-axis reduction and scan of `rank`-D `x` along each axis (and negative ones), with
/// keepdims, initial and tuples of axes.
fn axis_exprs(rank: usize) -> Vec<String> {
    let mut out = Vec::new();
    let axes: Vec<isize> = (0..rank as isize).chain([-1, -(rank as isize)]).collect();
    for a in axes {
        for f in [
            "sum", "prod", "min", "max", "mean", "var", "std", "argmin", "argmax", "any", "all",
        ] {
            out.push(format!("{f}(x, axis={a})"));
        }
        for f in ["sum", "max", "mean", "std"] {
            out.push(format!("{f}(x * 2 - 1, axis={a}, keepdims=1)"));
        }
        out.push(format!("sum(x, axis={a}, initial=2.5)"));
        out.push(format!("max(x, axis={a}, keepdims=True, initial=0.25)"));
        for f in ["cumsum", "cumprod", "cummax", "cummin"] {
            out.push(format!("{f}(x, axis={a})"));
        }
        out.push(format!("cumsum(x * x, axis={a}) - x"));
    }
    if rank == 3 {
        out.extend(
            [
                "sum(x, axis=(0, 2))",
                "max(x, axis=(-1, 0), keepdims=1)",
                "mean(x, axis=(0, 1))",
                "sum(x, axis=())",
                "sum(sum(x, axis=0), axis=0)",
                "cumsum(max(x, axis=1), axis=1)",
            ]
            .map(String::from),
        );
    } else {
        out.extend(["sum(x, axis=(0, 1))", "min(x, axis=(1, 0), keepdims=1)"].map(String::from));
    }
    out
}

/// Multi-kernel pipelines: a reduction feeding a map, softmax, a norm, compound statistics.
const PIPELINES: [&str; 8] = [
    "x - mean(x, axis=1, keepdims=True)",
    "exp(x - max(x, axis=-1, keepdims=1)) / sum(exp(x - max(x, axis=-1, keepdims=1)), axis=-1, keepdims=1)",
    "sqrt(sum(x * x, axis=0))",
    "std(x, axis=0) + 1",
    "(x - mean(x, axis=0, keepdims=1)) / std(x, axis=0, keepdims=1)",
    "cumsum(x - mean(x, axis=0, keepdims=1), axis=1)",
    "var(x, axis=1) * 2",
    "x / sum(x) + max(x, axis=0, keepdims=1)",
];

/// The 2-D and 3-D Fortran and transposed views the tests run on.
fn views<'a>(
    x: &'a Array2<f64>,
    f: &'a Array2<f64>,
    cube: &'a Array3<f64>,
) -> Vec<(&'static str, ArrayViewD<'a, f64>)> {
    vec![
        ("Fortran", f.view().into_dyn()),
        (".t()", x.t().into_dyn()),
        ("reversed_axes", x.view().reversed_axes().into_dyn()),
        ("3-D Fortran", cube.t().into_dyn()),
        (
            "3-D permuted (2, 0, 1)",
            cube.view().permuted_axes([2, 0, 1]).into_dyn(),
        ),
        (
            "3-D permuted (1, 0, 2)",
            cube.view().permuted_axes([1, 0, 2]).into_dyn(),
        ),
    ]
}

#[test]
fn axis_reductions_and_scans_run_in_memory_order() {
    let x = data2(37, 29, 1);
    let f = data2(29, 37, 2).reversed_axes(); // (37, 29), Fortran
    let cube = data3((6, 5, 23), 3);
    for (what, v) in views(&x, &f, &cube) {
        assert!(v.as_slice().is_none(), "{what} is not C-contiguous");
        for expr in axis_exprs(v.ndim()) {
            let inputs = [("x", v.view())];
            // a tuple of every axis without keepdims (a whole reduction) and `sum(x, axis=())` are
            // in memory order too; every expression here is
            let out = check(&expr, &inputs, what, true).expect("runs");
            // the result in NumPy's order='K' layout: the kept axes in the input's order; an
            // arg-reduction's indices in C order
            if out.shape().len() >= 2 {
                let from = result_axes(&expr, v.ndim());
                assert_eq!(from.len(), out.shape().len(), "{expr} on {what}");
                let want = if expr.starts_with("arg") {
                    (0..from.len()).collect()
                } else {
                    k_order(v.strides(), &from)
                };
                assert!(
                    laid_out(&out, &want),
                    "{expr} on {what}: {:?}",
                    out.clone().into_f64().strides()
                );
            }
        }
    }
}

/// The input axis each result axis of `expr` (one reduction or scan of `x`, from [`axis_exprs`])
/// comes from.
fn result_axes(expr: &str, rank: usize) -> Vec<usize> {
    let norm = |a: isize| {
        if a < 0 {
            (a + rank as isize) as usize
        } else {
            a as usize
        }
    };
    if expr.starts_with("sum(sum(") {
        return vec![2];
    }
    if expr.starts_with("cumsum(max(") {
        return vec![0, 2];
    }
    if expr.starts_with("cum") || expr.contains("keepdims") || expr.contains("axis=()") {
        return (0..rank).collect();
    }
    let axes_text = expr.split("axis=").nth(1).unwrap();
    let reduced: Vec<usize> = axes_text
        .trim_start_matches('(')
        .split([',', ')'])
        .filter_map(|t| t.trim().parse::<isize>().ok())
        .map(norm)
        .collect();
    (0..rank).filter(|a| !reduced.contains(a)).collect()
}

#[test]
fn pipelines_of_several_kernels_run_in_memory_order() {
    let x = data2(41, 33, 4);
    let f = data2(33, 41, 5).reversed_axes();
    let cube = data3((4, 7, 19), 6);
    for (what, v) in views(&x, &f, &cube) {
        for expr in PIPELINES {
            let out = check(expr, &[("x", v.view())], what, true).expect("runs");
            if out.shape().len() == v.ndim() {
                let all: Vec<usize> = (0..v.ndim()).collect();
                assert!(laid_out(&out, &k_order(v.strides(), &all)), "{expr} on {what}");
            }
        }
    }
}

#[test]
fn broadcast_and_zero_d_inputs_beside_fortran_ones() {
    let f = data2(31, 45, 7).reversed_axes(); // (45, 31) Fortran
    let g = data2(31, 45, 8).reversed_axes();
    let row = data2(1, 31, 9).into_shape_with_order(31).unwrap();
    let col = data2(45, 1, 10);
    let zero_d = ndarray::arr0(0.5);
    let inputs = [
        ("x", f.view().into_dyn()),
        ("y", g.view().into_dyn()),
        ("r", row.view().into_dyn()),
        ("c", col.view().into_dyn()),
        ("z", zero_d.view().into_dyn()),
    ];
    for expr in [
        "sum(x * y + r * c - z, axis=0)",
        "max(x - r, axis=1, keepdims=1) * z",
        "cumsum(x * c + z, axis=0)",
        "x * y - mean(x * r, axis=1, keepdims=1) + z",
        "argmin(x + y * c, axis=1)",
    ] {
        check(expr, &inputs, "Fortran beside broadcast inputs", true);
    }
    // a kernel that broadcasts a result or an input of fewer axes against its own: its leading axes
    // are not the memory order's, so the run is in the user's order (and right)
    for expr in [
        "x - mean(x, axis=0)",
        "sum(x, axis=1, keepdims=1) + sum(r, axis=0)",
        "sum(x) + r",
        "std(x, axis=0) * r",
        "sum(std(x, axis=0) * r)",
        "max(sum(x, axis=1) * c)",
        "argmax(x)",
        "cumsum(x)",
    ] {
        check(expr, &inputs, "declined", false);
    }
    // over an input of fewer axes alone the stage is rank 1: sum(r) beside a Fortran input
    check("sum(r * 2, axis=0) + x", &inputs, "a lower-rank reduction", false);
}

#[test]
fn empty_and_one_element_axes() {
    let shapes = [(0, 5), (5, 0), (1, 7), (7, 1), (1, 1)];
    for (rows, cols) in shapes {
        let f = data2(cols, rows, 11).reversed_axes();
        let what = format!("Fortran ({rows}, {cols})");
        for expr in [
            "sum(x, axis=0)",
            "sum(x, axis=1, keepdims=1)",
            "mean(x, axis=0)",
            "max(x, axis=1)",
            "max(x, axis=0, initial=-2)",
            "argmax(x, axis=0)",
            "cumsum(x, axis=1)",
            "x - mean(x, axis=1, keepdims=1)",
        ] {
            let inputs = [("x", f.view().into_dyn())];
            let a = args(&inputs);
            let r = runner(expr, "jit");
            let bound = [&a[0].1];
            let ordered = r.memory_order(&bound).is_some();
            check(expr, &inputs, &what, ordered);
        }
    }
}

#[test]
fn explain_states_the_run_in_memory_order() {
    let f = data2(20, 30, 12).reversed_axes(); // (30, 20) Fortran
    let a = [("x", ArrayArg::from(f.view()))];
    for (expr, axis) in [
        ("sum(x, axis=0)", "reduce sum axes=[1] f64 [20, 30]"),
        ("cumsum(x, axis=0)", "axis 1"),
        (
            "x - mean(x, axis=1, keepdims=True)",
            "reduce sum axes=[0] f64 [20, 30]",
        ),
    ] {
        let r = runner(expr, "jit");
        let all = r.explain_rewrites(&a).unwrap();
        for (kernel, plan, notes) in &all {
            let text = notes.join("\n");
            assert!(
                text.contains("memory order") && text.contains("[1, 0]"),
                "{expr}: {text}"
            );
            // x is read in place (a broadcast result may be expanded, as in C order)
            assert_eq!(plan.inputs[0], InputPlan::Contiguous, "{expr}");
            // the kernel runs over the axes in memory order: (20, 30)
            assert_eq!(kernel.shape, [20, 30], "{expr}");
        }
        let first = format!("{}", all[0].0);
        assert!(
            first.contains(axis) || expr.starts_with("cumsum"),
            "{expr}: {first}"
        );
    }
}

#[test]
fn outputs_written_in_memory_order_or_copied() {
    let f = data2(24, 40, 13).reversed_axes(); // (40, 24)
    let c = f.as_standard_layout().into_owned();
    let a = [("x", ArrayArg::from(f.view()))];
    let ca = [("x", ArrayArg::from(c.view()))];
    for expr in [
        "cumsum(x, axis=0)",
        "x - mean(x, axis=1, keepdims=1)",
        "max(x, axis=1, keepdims=1)",
    ] {
        let r = runner(expr, "jit");
        let want = r.run(&ca).unwrap().into_f64();
        let shape = want.shape().to_vec();
        // a Fortran output is written in place, in memory order; a C one through the user's order
        let mut out_f = ArrayD::<f64>::zeros(IxDyn(&[shape[1], shape[0]])).reversed_axes();
        r.run_into(&a, out_f.view_mut()).unwrap();
        let mut out_c = ArrayD::<f64>::zeros(IxDyn(&shape));
        r.run_into(&a, out_c.view_mut()).unwrap();
        let n = f.len();
        for out in [&out_f, &out_c] {
            agree(
                expr,
                &(out.shape().to_vec(), out.iter().copied().collect()),
                &(want.shape().to_vec(), want.iter().copied().collect()),
                n,
                "run_into",
            );
        }
    }
    // a reduction of lower rank: sum along axis 0 of a 3-D Fortran array gives a Fortran (b, c)
    let cube = data3((5, 6, 7), 14);
    let t = cube.t(); // (7, 6, 5)
    let r = runner("sum(x, axis=0)", "jit");
    let mut out = Array2::<f64>::zeros((5, 6)).reversed_axes(); // (6, 5) Fortran
    r.run_into(&[("x", ArrayArg::from(t.view()))], out.view_mut())
        .unwrap();
    let want = t.as_standard_layout().sum_axis(ndarray::Axis(0));
    assert!(
        out.iter().zip(want.iter()).all(|(g, w)| (g - w).abs() < 1e-12),
        "{out} vs {want}"
    );
}

#[test]
fn a_prepared_handle_reads_fortran_inputs_in_memory_order() {
    let f = data2(30, 50, 15).reversed_axes(); // (50, 30) Fortran
    let g = data2(30, 50, 16).reversed_axes();
    let cube = data3((3, 4, 9), 17);
    let inputs2 = [("x", f.view().into_dyn()), ("y", g.view().into_dyn())];
    let inputs3 = [("x", cube.t().into_dyn()), ("y", cube.t().into_dyn())];
    for inputs in [&inputs2[..], &inputs3[..]] {
        for expr in [
            "sum(x * y, axis=0)",
            "mean(x, axis=1)",
            "cumsum(x + y, axis=0)",
            "x - mean(x, axis=1, keepdims=True)",
            "argmax(x - y, axis=-1)",
            "x * 2 + y",
        ] {
            let a = args(inputs);
            let r = runner(expr, "jit").with_threads(1);
            let (h, first) = r.run_prepared(&a).unwrap();
            let order = h.memory_order().map(<[usize]>::to_vec);
            assert!(order.is_some(), "{expr}: the handle runs in memory order");
            // a one-kernel handle takes the fast path: every input read in place (no copy), an
            // argmax's (a result of int64 indices) too
            let one_kernel = r.pipeline().stages.len() == 1;
            assert_eq!(h.is_direct(), one_kernel, "{expr}");
            let want = oracle(expr, inputs).unwrap();
            let n = f.len();
            agree(expr, &values(first.clone()), &want, n, "run_prepared");
            let plain: Vec<ArrayArg<'_>> = a.iter().map(|(_, v)| v.clone()).collect();
            assert!(h.accepts(&plain));
            // the handle gives the runner's result, bit for bit, in the same layout
            let got = h.run(&plain).unwrap();
            let by_runner = r.run(&a).unwrap();
            assert_eq!(values(got.clone()), values(by_runner.clone()), "{expr}");
            assert_eq!(
                got.clone().into_f64().strides(),
                by_runner.into_f64().strides(),
                "{expr}"
            );
            if got.elem().is_float() {
                // into an output of the result's layout (in memory order) and into a C one
                let shape = h.output_shape().to_vec();
                let res: Vec<usize> = if expr.starts_with("sum") || expr.starts_with("mean") {
                    let mut from = Vec::new();
                    let reduced = if expr.starts_with("sum") { 0 } else { 1 };
                    for j in 0..inputs[0].1.ndim() {
                        if j != reduced {
                            from.push(j);
                        }
                    }
                    k_order(inputs[0].1.strides(), &from)
                } else {
                    k_order(inputs[0].1.strides(), &(0..shape.len()).collect::<Vec<_>>())
                };
                let in_order_shape: Vec<usize> = res.iter().map(|&j| shape[j]).collect();
                let mut buffer = ArrayD::<f64>::zeros(IxDyn(&in_order_shape));
                let inv = kiln::memory_order::inverse(&res);
                let view = buffer.view_mut().permuted_axes(IxDyn(&inv));
                assert_eq!(view.shape(), shape.as_slice());
                h.run_into(&plain, view).unwrap();
                let written = buffer.view().permuted_axes(IxDyn(&inv)).to_owned();
                agree(
                    expr,
                    &(shape.clone(), written.iter().copied().collect()),
                    &values(got.clone()),
                    0,
                    "into memory order",
                );
                let mut c = ArrayD::<f64>::zeros(IxDyn(&shape));
                h.run_into(&plain, c.view_mut()).unwrap();
                agree(
                    expr,
                    &(shape.clone(), c.iter().copied().collect()),
                    &values(got.clone()),
                    0,
                    "into C",
                );
            }
            // C-contiguous copies are another form: not accepted, and run by a handle of their own
            let copies: Vec<ArrayD<f64>> = inputs
                .iter()
                .map(|(_, v)| v.as_standard_layout().into_owned())
                .collect();
            let plain_c: Vec<ArrayArg<'_>> = copies.iter().map(|c| ArrayArg::from(c.view())).collect();
            assert!(!h.accepts(&plain_c), "{expr}");
            // still right when called with them (off the fast path), and from C-ordered slices
            assert_eq!(
                values(h.run(&plain_c).unwrap()),
                values(got.clone()),
                "{expr}: C inputs"
            );
            if got.elem().is_float() {
                let slices: Vec<&[f64]> = copies.iter().map(|c| c.as_slice().unwrap()).collect();
                let mut out = vec![0.0; h.output_shape().iter().product()];
                h.run_slices(&slices, &mut out).unwrap();
                let want = values(got.clone()).1;
                assert!(bits_equal(&out, &want), "{expr}: run_slices");
            }
        }
    }
}

#[test]
fn integer_and_bool_inputs_in_memory_order() {
    // typed kernels run on the permuted views alike; integer results are exact
    let c = ndarray::Array2::from_shape_fn((23, 17), |(i, j)| (i as i64 * 37 + j as i64 * 11) % 19 - 9);
    let f = c.t().as_standard_layout().into_owned().reversed_axes(); // (23, 17) Fortran
    assert!(!f.is_standard_layout());
    for expr in [
        "sum(x, axis=0)",
        "cumsum(x, axis=1)",
        "x - max(x, axis=1, keepdims=1)",
        "argmax(x, axis=0)",
        "any(x > 3, axis=1)",
        "prod(x % 3 + 1, axis=0)",
    ] {
        let r = runner(expr, "jit");
        let want = r.run(&[("x", ArrayArg::from(c.view()))]).unwrap();
        let bound = ArrayArg::from(f.view());
        assert!(r.memory_order(&[&bound]).is_some(), "{expr}");
        let got = r.run(&[("x", ArrayArg::from(f.view()))]).unwrap();
        assert_eq!(got, want, "{expr}");
        let h = r.prepared(&[("x", ArrayArg::from(f.view()))]).unwrap();
        assert!(h.memory_order().is_some(), "{expr}");
        assert_eq!(
            h.run(&[ArrayArg::from(f.view())]).unwrap(),
            want,
            "{expr}: prepared"
        );
    }
}

#[test]
fn an_output_that_does_not_fit_is_reported_in_the_users_axes() {
    // `x` Fortran (3, 4): a (4, 3) Fortran `out` is C-contiguous in memory order but does not fit;
    // the error names the shapes as the user gave them, from the runner and the prepared handle
    let f = data2(4, 3, 15).reversed_axes(); // (3, 4) Fortran
    let a = [("x", ArrayArg::from(f.view()))];
    for expr in ["x * 2", "cumsum(x, axis=1)"] {
        let r = runner(expr, "jit");
        let mut out = ArrayD::<f64>::zeros(IxDyn(&[3, 4])).reversed_axes(); // (4, 3) Fortran
        let e = r.run_into(&a, out.view_mut()).unwrap_err().to_string();
        assert!(e.contains("[4, 3]") && e.contains("[3, 4]"), "{expr}: {e}");
        assert!(
            e.find("[4, 3]") < e.find("[3, 4]"),
            "{expr}: the output's shape first: {e}"
        );
        let h = r.prepared(&a).unwrap();
        let plain = [ArrayArg::from(f.view())];
        let e = h.run_into(&plain, out.view_mut()).unwrap_err().to_string();
        assert!(
            e.contains("output has shape [4, 3] but the result has shape [3, 4]"),
            "{expr}: {e}"
        );
    }
}
