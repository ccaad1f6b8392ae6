//! Times `2*a + 3*b` and `sum(a*b)` over two 1000x1000 Fortran-ordered f64 arrays (1e6 points):
//! run in memory order (each input read in place, the result Fortran) against the inputs copied to
//! C order first (what a Fortran input cost before: one conversion of each); and `2*a + 3*b` over a
//! reversed last axis (`a[:, ::-1]`, read in place as strided rows since `examples/strided_rows.rs`)
//! against C inputs. One thread.
use kiln::FusedRunner;
use ndarray::{Array2, s};
use std::time::Instant;

fn main() {
    let fortran = |k: usize| {
        Array2::from_shape_fn((1000, 1000), |(i, j)| ((i * 7 + j * 13 + k) % 101) as f64)
            .reversed_axes()
            .as_standard_layout()
            .into_owned()
            .reversed_axes()
    };
    let (a, b) = (fortran(0), fortran(5));
    assert!(a.t().is_standard_layout());
    let time = |f: &dyn Fn()| {
        f();
        let reps = 100;
        let t = Instant::now();
        for _ in 0..reps {
            f();
        }
        t.elapsed().as_secs_f64() / reps as f64 * 1e6
    };
    for expr in ["2*a + 3*b", "sum(a*b)"] {
        let run = FusedRunner::compile_text(expr).unwrap().with_threads(1);
        let in_place = time(&|| {
            run.run(&[("a", a.view().into()), ("b", b.view().into())])
                .unwrap();
        });
        let copied = time(&|| {
            let (ca, cb) = (
                a.as_standard_layout().into_owned(),
                b.as_standard_layout().into_owned(),
            );
            run.run(&[("a", (&ca).into()), ("b", (&cb).into())]).unwrap();
        });
        println!(
            "{expr}: in memory order {in_place:.0} us, copied to C first {copied:.0} us, ratio {:.2}",
            copied / in_place
        );
    }
    let run = FusedRunner::compile_text("2*a + 3*b").unwrap().with_threads(1);
    let (ca, cb) = (
        a.as_standard_layout().into_owned(),
        b.as_standard_layout().into_owned(),
    );
    let (ra, rb) = (ca.slice(s![.., ..;-1]), cb.slice(s![.., ..;-1]));
    let reversed = time(&|| {
        run.run(&[("a", ra.into()), ("b", rb.into())]).unwrap();
    });
    let c_order = time(&|| {
        run.run(&[("a", (&ca).into()), ("b", (&cb).into())]).unwrap();
    });
    println!(
        "2*a + 3*b on a[:, ::-1], b[:, ::-1]: strided rows in place {reversed:.0} us, on C inputs {c_order:.0} us, ratio {:.2}",
        reversed / c_order
    );
}
