//! A fresh output (a map's or a scan's result when no destination is given) is allocated without
//! being zeroed and given its length only after the run wrote it: every element must be the run's.
//! Runs of many sizes (every vector tail, one element, empty, several work units on threads) follow
//! runs whose freed results hold other values (so memory the allocator hands back is not zero), and
//! every element is compared with the interpreter's.

use kiln::{FusedRunner, Output};
use ndarray::Array1;

fn f64s(out: Output) -> Vec<f64> {
    out.into_f64().iter().copied().collect()
}

#[test]
fn fresh_map_and_scan_outputs_are_written_whole() {
    let sizes = [0usize, 1, 2, 3, 5, 7, 8, 17, 1000, 4099, 300_000];
    for expr in ["x * 2.5 + 1", "where(x > 0.5, x, -x)", "cumsum(x)"] {
        let jit = FusedRunner::compile_text(expr)
            .unwrap()
            .with_threads(3)
            .with_threshold(0);
        let interp = FusedRunner::compile_text(expr)
            .unwrap()
            .with_backend(kiln::backend_by_name("interp").unwrap());
        for round in 0..3 {
            for &n in &sizes {
                // a result of the same size full of other values, freed just before the run
                let junk = jit
                    .run(&[("x", (&Array1::from_elem(n, 1e300 + round as f64)).into())])
                    .unwrap();
                drop(junk);
                let x = Array1::from_shape_fn(n, |i| ((i * 7919 + round) % 1013) as f64 * 0.001);
                let got = f64s(jit.run(&[("x", (&x).into())]).unwrap());
                let want = f64s(interp.run(&[("x", (&x).into())]).unwrap());
                assert_eq!(got.len(), n, "{expr} n={n}");
                let ok = if expr.starts_with("cumsum") {
                    got.iter()
                        .zip(&want)
                        .all(|(g, w)| (g - w).abs() <= 1e-9 * w.abs().max(1.0))
                } else {
                    got.iter().zip(&want).all(|(g, w)| g.to_bits() == w.to_bits())
                };
                assert!(ok, "{expr} n={n} round {round}");
            }
        }
    }
}
