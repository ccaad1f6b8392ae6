//! Times kernels over views whose last axis is reversed, stepped or transposed (1e6 points, f64 and
//! f32, one thread): read in place as strided rows (the plan's `per-row strided`), against the
//! same view copied to C order first (ndarray's `as_standard_layout`, then the kernel on the copy),
//! and the kernel on a C-contiguous array of the same shape (the floor). Each case alternates the
//! three for 31 rounds and prints medians. `--asm` prints the machine code of `2*x + 1` over
//! `x[::-1]` and `x[::2]` instead (the reversal and the gather).
//!
//! `cargo run --release --example strided_rows [-- --asm]`
use kiln::{ArrayArg, FusedRunner};
use ndarray::{Array1, Array2, ArrayViewD, s};

#[path = "support/alternate.rs"]
mod alternate;
use alternate::alternate;

fn case<T>(expr: &str, what: &str, views: &[(&str, ArrayViewD<'_, T>)], plan_of: usize)
where
    T: Clone,
    for<'a> ArrayArg<'a>: From<ArrayViewD<'a, T>>,
{
    let run = FusedRunner::compile_text(expr).unwrap().with_threads(1);
    let in_place: Vec<(&str, ArrayArg<'_>)> = views.iter().map(|(n, v)| (*n, v.view().into())).collect();
    let copies: Vec<_> = views
        .iter()
        .map(|(_, v)| v.as_standard_layout().into_owned())
        .collect();
    let c_args: Vec<(&str, ArrayArg<'_>)> = views
        .iter()
        .zip(&copies)
        .map(|((n, _), c)| (*n, c.view().into()))
        .collect();
    let (_, plan) = run.explain(&in_place).unwrap();
    let t = alternate(
        &[
            &|| {
                run.run(&in_place).unwrap();
            },
            &|| {
                let copies: Vec<_> = views
                    .iter()
                    .map(|(_, v)| v.as_standard_layout().into_owned())
                    .collect();
                let a: Vec<(&str, ArrayArg<'_>)> = views
                    .iter()
                    .zip(&copies)
                    .map(|((n, _), c)| (*n, c.view().into()))
                    .collect();
                run.run(&a).unwrap();
            },
            &|| {
                run.run(&c_args).unwrap();
            },
        ],
        31,
    );
    println!(
        "| {what} | `{expr}` | {:.0} | {:.0} | {:.0} | {:.2} | {} |",
        t[0],
        t[1],
        t[2],
        t[1] / t[0],
        plan.inputs[plan_of]
    );
}

fn asm() {
    let x = Array1::from_shape_fn(4096, |i| i as f64);
    let x32 = x.mapv(|v| v as f32);
    let run = FusedRunner::compile_text("2*x + 1").unwrap();
    for (what, v) in [
        ("f64 x[::-1]", ArrayArg::from(x.slice(s![..;-1]).into_dyn())),
        ("f32 x[::-1]", ArrayArg::from(x32.slice(s![..;-1]).into_dyn())),
        ("f64 x[::2]", ArrayArg::from(x.slice(s![..;2]).into_dyn())),
    ] {
        let (kernel, plan) = run.explain(&[("x", v)]).unwrap();
        let code = kiln_jit::CompiledKernel::explain(&kernel, &plan, kiln_jit::Schedule::for_kernel(&kernel))
            .unwrap();
        println!("; {what}: {}", plan.inputs[0]);
        println!("{}", code.dumps().unwrap().vcode.as_deref().unwrap_or("(none)"));
    }
}

fn main() {
    if std::env::args().any(|a| a == "--asm") {
        asm();
        return;
    }
    let n = 1_000_000;
    let x = Array1::from_shape_fn(3 * n, |i| ((i * 7) % 101) as f64 - 50.0);
    let m = Array2::from_shape_fn((1000, 2000), |(i, j)| ((i * 13 + j * 7) % 101) as f64 - 50.0);
    let a = Array2::from_shape_fn((1000, 1000), |(i, j)| ((i * 3 + j) % 97) as f64);
    let b = Array2::from_shape_fn((1000, 1000), |(i, j)| ((i + j * 5) % 89) as f64);
    let (x32, m32, a32, b32) = (
        x.mapv(|v| v as f32),
        m.mapv(|v| v as f32),
        a.mapv(|v| v as f32),
        b.mapv(|v| v as f32),
    );
    println!(
        "| view | kernel | in place (us) | copied first (us) | on a C array (us) | copy / in place | plan |"
    );
    println!("| --- | --- | ---: | ---: | ---: | ---: | --- |");
    macro_rules! cases {
        ($t:literal, $x:expr, $m:expr, $a:expr, $b:expr, $big:expr) => {
            for expr in ["2*x + 1", "sum(x)"] {
                case(expr, concat!($t, " x[::-1], 1e6"), &[("x", $x.slice(s![..n;-1]).into_dyn())], 0);
                case(expr, concat!($t, " x[::2], 1e6"), &[("x", $x.slice(s![..2 * n;2]).into_dyn())], 0);
                case(expr, concat!($t, " x[::-3], 1e6"), &[("x", $x.slice(s![..;-3]).into_dyn())], 0);
                case(expr, concat!($t, " x[:, ::-1], 1000x1000"), &[("x", $m.slice(s![.., ..1000;-1]).into_dyn())], 0);
                case(expr, concat!($t, " x[:, ::2] of 1000x2000"), &[("x", $m.slice(s![.., ..;2]).into_dyn())], 0);
                // one element per cache line (f64: 128 bytes apart)
                case(expr, concat!($t, " x[::16], 1e6"), &[("x", $big.slice(s![..;16]).into_dyn())], 0);
            }
            for expr in ["2*x + 1", "sum(x, axis=1)", "sum(x, axis=0)"] {
                case(expr, concat!($t, " x[:, ::-1], 1000x1000"), &[("x", $m.slice(s![.., ..1000;-1]).into_dyn())], 0);
            }
            // a strided row re-read by every row: a reversed vector, a column (stride 2000)
            case("x + y", concat!($t, " a + w[::-1], 1000x1000"), &[("x", $a.view().into_dyn()), ("y", $m.slice(s![0, ..1000;-1]).into_dyn())], 1);
            case("x + y", concat!($t, " a + m[:, 5], 1000x1000"), &[("x", $a.view().into_dyn()), ("y", $m.slice(s![.., 5]).into_dyn())], 1);
            case("x + y", concat!($t, " a + b.T, 1000x1000"), &[("x", $a.view().into_dyn()), ("y", $b.t().into_dyn())], 1);
            case("sum(x * y)", concat!($t, " a + b.T, 1000x1000"), &[("x", $a.view().into_dyn()), ("y", $b.t().into_dyn())], 1);
        };
    }
    let big = Array1::from_shape_fn(16 * n, |i| ((i * 7) % 101) as f64 - 50.0);
    cases!("f64", x, m, a, b, big);
    let big = big.mapv(|v| v as f32);
    cases!("f32", x32, m32, a32, b32, big);
}
