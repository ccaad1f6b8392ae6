//! Times a float scan over views that are not one strided run, on one thread: `cumsum(x[:, ::-1],
//! axis=1)` of a 1000 x 1000 f64 array (each line a reversed row: one vector load and a lane reversal
//! per 2 lanes) and `cumsum(x[:, :1000], axis=1)` of a 1000 x 2000 one (a column slice: each line a
//! run); also along the first axis, `cumsum(x[:, ::-1], axis=0)` of 1000 x 1000 (each step of a
//! block one row) and `cumsum(x[:, :, ::-1], axis=0)` of 100 x 100 x 100 (each step of a block 100
//! rows of the last axis); of the flattened array, `cumsum(x[:, ::-1])` of 1000 x 1000 and
//! `cumsum(x[:, :1000])` of 1000 x 2000 (the one line walked row by row). Read in place, against the view copied to C order first (ndarray's `as_standard_layout`,
//! then the scan on the copy) and the scan of a C-contiguous `x` (the floor). The three alternate for
//! 31 rounds; medians printed. One case per process (the argument, 0-5), as in `typed_strided`.
//!
//! `for c in 0 1 2 3 4 5; do cargo run --release --example scan_strided -- $c; done`
use kiln::{ArrayArg, FusedRunner};
use ndarray::{Array2, ArrayViewD, s};

#[path = "support/alternate.rs"]
mod alternate;
use alternate::alternate;

fn case(what: &str, expr: &str, x: ArrayViewD<'_, f64>) {
    let run = FusedRunner::compile_text(expr).unwrap().with_threads(1);
    let c = x.as_standard_layout().into_owned();
    let t = alternate(
        &[
            &|| {
                run.run(&[("x", ArrayArg::from(x.view()))]).unwrap();
            },
            &|| {
                let copy = x.as_standard_layout().into_owned();
                run.run(&[("x", ArrayArg::from(copy.view()))]).unwrap();
            },
            &|| {
                run.run(&[("x", ArrayArg::from(c.view()))]).unwrap();
            },
        ],
        31,
    );
    println!(
        "{what:<36} kiln {:>8.1} us   copy first {:>8.1} us   C floor {:>8.1} us",
        t[0], t[1], t[2]
    );
}

fn main() {
    let which: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(0);
    let m = Array2::from_shape_fn((1000, 2000), |(i, j)| {
        ((i * 7 + j * 13) % 101) as f64 * 0.01 - 0.5
    });
    match which {
        0 => case(
            "cumsum(x[:, ::-1], axis=1) 1000x1000",
            "cumsum(x, axis=1)",
            m.slice(s![.., ..1000;-1]).into_dyn(),
        ),
        1 => case(
            "cumsum(x[:, :1000], axis=1) of 2000",
            "cumsum(x, axis=1)",
            m.slice(s![.., ..1000]).into_dyn(),
        ),
        2 => case(
            "cumsum(x[:, ::-1], axis=0) 1000x1000",
            "cumsum(x, axis=0)",
            m.slice(s![.., ..1000;-1]).into_dyn(),
        ),
        4 => case(
            "cumsum(x[:, ::-1]) 1000x1000",
            "cumsum(x)",
            m.slice(s![.., ..1000;-1]).into_dyn(),
        ),
        5 => case(
            "cumsum(x[:, :1000]) of 2000",
            "cumsum(x)",
            m.slice(s![.., ..1000]).into_dyn(),
        ),
        _ => {
            let cube = m.into_shape_with_order((100, 100, 200)).unwrap();
            case(
                "cumsum(x[:, :, ::-1], axis=0) 100^3",
                "cumsum(x, axis=0)",
                cube.slice(s![.., .., ..100;-1]).into_dyn(),
            )
        }
    }
}
