//! Times an int32 kernel over a reversed view, `x[::-1] % 7 + y` at 1e6 points on one thread: the
//! view read in place by the typed code (a vector load and a lane reversal per 4 lanes), against the
//! view copied to C order first (ndarray's `as_standard_layout`, then the kernel on the copy: what
//! kiln did before typed kernels read views) and the kernel on a C-contiguous `x` (the floor); also
//! `x[::2]` (gathered lanes) and `x[:, ::-1]` of a 1000 x 1000 array (rows of 1000: the lanes of
//! a vector in one row reversed as above, those across two rows one by one). The three alternate
//! for 31 rounds; medians printed. One case per process (the argument, 0-2): on the machine
//! measured, a 4 MB buffer that the allocator maps afresh costs about 1.7 ms of page faults, and
//! which allocations reuse memory depends on what ran before in the process.
//!
//! `for c in 0 1 2; do cargo run --release --example typed_strided -- $c; done`
use kiln::{ArrayArg, FusedRunner};
use ndarray::{Array1, Array2, ArrayViewD, s};

#[path = "support/alternate.rs"]
mod alternate;
use alternate::alternate;

fn case(what: &str, x: ArrayViewD<'_, i32>, y: ArrayViewD<'_, i32>) {
    let run = FusedRunner::compile_text("x % 7 + y").unwrap().with_threads(1);
    let c = x.as_standard_layout().into_owned();
    let t = alternate(
        &[
            &|| {
                run.run(&[("x", ArrayArg::from(x.view())), ("y", ArrayArg::from(y.view()))])
                    .unwrap();
            },
            &|| {
                let copy = x.as_standard_layout().into_owned();
                run.run(&[
                    ("x", ArrayArg::from(copy.view())),
                    ("y", ArrayArg::from(y.view())),
                ])
                .unwrap();
            },
            &|| {
                run.run(&[("x", ArrayArg::from(c.view())), ("y", ArrayArg::from(y.view()))])
                    .unwrap();
            },
        ],
        31,
    );
    println!(
        "{what:<28} in place {:>8.1} us   copy first {:>8.1} us   C floor {:>8.1} us",
        t[0], t[1], t[2]
    );
}

fn main() {
    let which: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let n = 1_000_000;
    let a = Array1::from_shape_fn(2 * n, |i| (i as i32).wrapping_mul(-1_640_531_527));
    let y = Array1::from_shape_fn(n, |i| (i % 1000) as i32 - 500);
    let m = Array2::from_shape_fn((1000, 1000), |(i, j)| (i * 1000 + j) as i32 - 7);
    let y2 = Array2::from_shape_fn((1000, 1000), |(i, j)| ((i + j) % 13) as i32);
    match which {
        0 => case(
            "x[::-1] % 7 + y (1e6)",
            a.slice(s![..n;-1]).into_dyn(),
            y.view().into_dyn(),
        ),
        1 => case(
            "x[::2] % 7 + y (1e6)",
            a.slice(s![..;2]).into_dyn(),
            y.view().into_dyn(),
        ),
        _ => case(
            "x[:, ::-1] % 7 + y (1e3^2)",
            m.slice(s![.., ..;-1]).into_dyn(),
            y2.view().into_dyn(),
        ),
    }
}
