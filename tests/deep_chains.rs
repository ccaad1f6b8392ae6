//! Expressions of any depth: a flat chain `x + x + ... + x` of tens of thousands of operations (the
//! tree as deep as it is long) goes through every layer — the text parser, the builder, lowering and
//! hash-consing, typing, the rewrites, the interpreter, the JIT, `explain`'s text, and dropping the
//! tree — without recursing per node, on a test thread's default stack (2 MiB), and gives the bits a
//! left-to-right loop gives (NumPy evaluates `a + b + c` as `(a + b) + c`, and so does kiln).
//!
//! Only parentheses, calls and unary operators nest the parser itself; they stay limited
//! (`kiln::text::MAX_NESTING`, tested in `cli/tests/hostile.rs`).

mod support;

use kiln::{Expr, FusedRunner, Output};
use ndarray::{ArrayD, IxDyn};
use support::{BACKENDS, bits_equal, runner, values};

/// Terms of the long chains: ten times what the old limit (1024 operations deep) allowed.
const TERMS: usize = 10_000;

fn xs() -> ArrayD<f64> {
    ArrayD::from_shape_vec(IxDyn(&[2, 9]), (0..18).map(|i| i as f64 * 0.37 - 2.1).collect()).unwrap()
}

/// `x*c0 + x*c1 + ...` with `TERMS` distinct literals, as text, and its value by a left fold.
fn weighted_chain() -> (String, Vec<f64>) {
    let c = |k: usize| 1.0 + k as f64 / 64.0;
    let text = (0..TERMS)
        .map(|k| format!("x*{}", c(k)))
        .collect::<Vec<_>>()
        .join(" + ");
    let want = xs()
        .iter()
        .map(|&x| (1..TERMS).fold(x * c(0), |acc, k| acc + x * c(k)))
        .collect();
    (text, want)
}

fn run_x(r: &FusedRunner, x: &ArrayD<f64>) -> (Vec<usize>, Vec<f64>) {
    values(r.run(&[("x", x.into())]).unwrap())
}

#[test]
fn a_long_text_chain_runs_on_every_backend_with_a_left_folds_bits() {
    let (text, want) = weighted_chain();
    for backend in BACKENDS {
        let (shape, got) = run_x(&runner(&text, backend), &xs());
        assert_eq!(shape, [2, 9], "{backend}");
        assert!(bits_equal(&got, &want), "{backend}: {got:?} vs {want:?}");
    }
}

#[test]
fn a_long_builder_chain_compiles_runs_and_drops() {
    let x = Expr::input("x");
    let mut e = x.clone();
    for _ in 1..TERMS * 2 {
        e = &e + &x;
    }
    let want: Vec<f64> = xs()
        .iter()
        .map(|&v| (1..TERMS * 2).fold(v, |acc, _| acc + v))
        .collect();
    let r = FusedRunner::compile(&e).unwrap();
    drop(e);
    let (_, got) = run_x(&r, &xs());
    assert!(bits_equal(&got, &want));
}

#[test]
fn long_chains_under_reductions_scans_and_several_outputs() {
    let chain = vec!["x"; TERMS].join(" + ");
    let x = xs();
    let n = TERMS as f64;
    let sum_all: f64 = x.iter().map(|v| v * n).sum();
    for (text, check) in [
        (format!("sum({chain})"), None),
        (format!("sum({chain}, axis=1)"), None),
        (format!("cumsum({chain}, axis=1)"), None),
        (format!("max({chain}) - min({chain})"), None),
        (format!("{chain}; sum({chain})"), Some(sum_all)),
    ] {
        let oracle = runner(&text, "interp").run_many(&[("x", (&x).into())]).unwrap();
        let jit = runner(&text, "jit").run_many(&[("x", (&x).into())]).unwrap();
        assert_eq!(oracle.len(), jit.len(), "{}", &text[text.len() - 40..]);
        for (a, b) in oracle.into_iter().zip(jit) {
            let ((sa, va), (sb, vb)) = (values(a), values(b));
            assert_eq!(sa, sb);
            assert!(support::close(&va, &vb, 1e-12), "{va:?} vs {vb:?}");
        }
        if let Some(total) = check {
            let all = runner(&text, "jit").run_many(&[("x", (&x).into())]).unwrap();
            let (_, s) = values(all.into_iter().nth(1).unwrap());
            assert!(
                (s[0] - total).abs() <= 1e-9 * total.abs().max(1.0),
                "{s:?} vs {total}"
            );
        }
    }
}

#[test]
fn a_long_integer_chain_is_typed_and_exact() {
    let i = ArrayD::from_shape_vec(IxDyn(&[7]), vec![-3i64, -1, 0, 1, 2, i64::MAX / 20_000, 9]).unwrap();
    let text = vec!["i"; TERMS].join(" + ");
    for backend in BACKENDS {
        let out = runner(&text, backend).run(&[("i", (&i).into())]).unwrap();
        match out {
            Output::I64(o) => {
                let want: Vec<i64> = i.iter().map(|v| v.wrapping_mul(TERMS as i64)).collect();
                assert_eq!(o.iter().copied().collect::<Vec<_>>(), want, "{backend}");
            }
            o => panic!("{backend}: int64 input gave {}", o.dtype_name()),
        }
    }
}

#[test]
fn explain_prints_a_long_chain() {
    let text = vec!["x"; TERMS].join(" * ");
    let x = xs();
    let (kernel, _) = runner(&text, "jit").explain(&[("x", (&x).into())]).unwrap();
    let shown = kernel.to_string();
    assert!(shown.lines().count() > TERMS, "{}", &shown[..200]);
}

#[test]
fn a_long_chain_inside_a_contraction() {
    // the index variables are bound through the whole chain
    let chain = vec!["x[i]"; 2_000].join(" + ");
    let text = format!("sum(where(i <= o, {chain}, 0), index=(i, o), axis=i)");
    let x = ArrayD::from_shape_vec(IxDyn(&[5]), vec![1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
    let out = runner(&text, "jit").run(&[("x", (&x).into())]).unwrap();
    let (_, got) = values(out);
    let want: Vec<f64> = (0..5)
        .map(|o| (0..=o).map(|i| (i + 1) as f64 * 2000.0).sum())
        .collect();
    assert!(support::close(&got, &want, 1e-12), "{got:?} vs {want:?}");
}
