//! The seed kernels of `kiln bench`: their expressions, inputs, and the two baselines each is raced
//! against (the unfused ndarray expression and a hand-written Rust loop).
//!
//! The elementwise kernels and `sumsq` read `x` (and `y`) as vectors of N; `cumsum` scans them;
//! `rowsum` and `colsum` read `x` as an `(N/1000, 1000)` matrix (`(1, N)` when N is not a multiple of
//! 1000) and sum it along axis 1 or axis 0, as `../shared/peers/bench_py.py` does.

use super::baseline::{self, StdMath};
use kiln::array::Float;
use ndarray::{Array1, ArrayView2, Axis};

/// A seed kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    /// `a*x + y`.
    Axpy,
    /// `((a*x+b)*x+c)*x+d`.
    Horner,
    /// `sum(x*x)`.
    Sumsq,
    /// `1/(1+exp(-x))`.
    Logistic,
    /// `sin(x)*cos(x) + sqrt(abs(x))`.
    Trig,
    /// `cumsum(x)`.
    Cumsum,
    /// `sum(x, axis=1)` of x as an `(N/1000, 1000)` matrix.
    Rowsum,
    /// `sum(x, axis=0)` of x as an `(N/1000, 1000)` matrix.
    Colsum,
}

/// How a kernel's results are compared with the interpreter's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tolerance {
    /// Elementwise algebra: every bit, any NaN equal to any NaN.
    Exact,
    /// A reduction: a relative bound (looser for baselines that accumulate f32 in f32).
    Reduction,
    /// Transcendentals: a bound in ULP.
    Ulp(u32),
}

impl Kernel {
    /// Every seed kernel, in the order they are printed.
    pub const ALL: [Kernel; 8] = [
        Kernel::Axpy,
        Kernel::Horner,
        Kernel::Sumsq,
        Kernel::Logistic,
        Kernel::Trig,
        Kernel::Cumsum,
        Kernel::Rowsum,
        Kernel::Colsum,
    ];

    /// The name `--kernels` takes and rows carry.
    pub fn name(self) -> &'static str {
        match self {
            Kernel::Axpy => "axpy",
            Kernel::Horner => "horner",
            Kernel::Sumsq => "sumsq",
            Kernel::Logistic => "logistic",
            Kernel::Trig => "trig",
            Kernel::Cumsum => "cumsum",
            Kernel::Rowsum => "rowsum",
            Kernel::Colsum => "colsum",
        }
    }

    /// The kernel of that name.
    pub fn from_name(name: &str) -> Option<Kernel> {
        Kernel::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The text expression kiln compiles.
    pub fn expr(self) -> &'static str {
        match self {
            Kernel::Axpy => "a*x + y",
            Kernel::Horner => "((a*x+b)*x+c)*x+d",
            Kernel::Sumsq => "sum(x*x)",
            Kernel::Logistic => "1/(1+exp(-x))",
            Kernel::Trig => "sin(x)*cos(x) + sqrt(abs(x))",
            Kernel::Cumsum => "cumsum(x)",
            Kernel::Rowsum => "sum(x, axis=1)",
            Kernel::Colsum => "sum(x, axis=0)",
        }
    }

    /// How its results are compared with the interpreter's.
    pub fn tolerance(self) -> Tolerance {
        match self {
            Kernel::Axpy | Kernel::Horner => Tolerance::Exact,
            Kernel::Sumsq | Kernel::Cumsum | Kernel::Rowsum | Kernel::Colsum => Tolerance::Reduction,
            // the interpreter's f32 math is the libm crate's, the loops' is glibc's
            Kernel::Logistic | Kernel::Trig => Tolerance::Ulp(4),
        }
    }

    /// Whether the kernel reduces to one value.
    pub fn reduces(self) -> bool {
        self == Kernel::Sumsq
    }

    /// The shape `x` is read as: a vector of N, or for the axis sums an `(N/1000, 1000)` matrix
    /// (`(1, N)` when N is not a multiple of 1000).
    pub fn x_shape(self, n: usize) -> Vec<usize> {
        match self {
            Kernel::Rowsum | Kernel::Colsum => {
                let (rows, cols) = grid(n);
                vec![rows, cols]
            }
            _ => vec![n],
        }
    }

    /// The shape of the result.
    pub fn out_shape(self, n: usize) -> Vec<usize> {
        let (rows, cols) = grid(n);
        match self {
            Kernel::Sumsq => vec![],
            Kernel::Rowsum => vec![rows],
            Kernel::Colsum => vec![cols],
            _ => vec![n],
        }
    }

    /// Bytes of compulsory memory traffic per element: the arrays read and written.
    pub fn arrays_touched(self) -> usize {
        match self {
            Kernel::Axpy => 3,
            Kernel::Horner | Kernel::Logistic | Kernel::Trig | Kernel::Cumsum => 2,
            // the axis sums write N/1000 or 1000 values: negligible beside the read of x
            Kernel::Sumsq | Kernel::Rowsum | Kernel::Colsum => 1,
        }
    }
}

/// The `(rows, cols)` of the axis-sum kernels' matrix of N elements.
pub fn grid(n: usize) -> (usize, usize) {
    if n >= 1000 && n.is_multiple_of(1000) {
        (n / 1000, 1000)
    } else {
        (1, n)
    }
}

/// `x` as the axis sums' matrix.
fn matrix<T>(k: Kernel, x: &Array1<T>) -> ArrayView2<'_, T> {
    let (rows, cols) = grid(x.len());
    debug_assert!(matches!(k, Kernel::Rowsum | Kernel::Colsum));
    x.view()
        .into_shape_with_order((rows, cols))
        .expect("rows * cols == n")
}

/// The inputs of one benchmark: x uniform in [-3, 3], y in [0, 1), and run-time scalars.
#[derive(Debug, Clone)]
pub struct Inputs<T> {
    /// The array input.
    pub x: Array1<T>,
    /// The second array input (axpy's `y`).
    pub y: Array1<T>,
    /// The scalar `a`.
    pub a: T,
    /// The scalar `b`.
    pub b: T,
    /// The scalar `c`.
    pub c: T,
    /// The scalar `d`.
    pub d: T,
}

/// A small deterministic generator (xorshift64*), so runs are repeatable without a dependency.
pub(super) struct Rng(pub(super) u64);

impl Rng {
    /// The next value, uniform on `[0, 1)`.
    pub(super) fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` values of `f`, or kiln's "out of memory" error if they cannot be allocated.
pub fn try_array<T>(n: usize, what: &str, mut f: impl FnMut() -> T) -> kiln::Result<Array1<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| kiln_ir::IrError::Allocation {
        what: what.to_string(),
        elements: n,
    })?;
    v.extend((0..n).map(|_| f()));
    Ok(Array1::from_vec(v))
}

impl<T: Float> Inputs<T> {
    /// The inputs at size `n`; an error, not an abort, if they do not fit in memory.
    pub fn new(n: usize) -> kiln::Result<Inputs<T>> {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ n as u64);
        let x = try_array(n, "the benchmark input x", || T::from_f64(rng.unit() * 6.0 - 3.0))?;
        let y = try_array(n, "the benchmark input y", || T::from_f64(rng.unit()))?;
        let s = |v: f64| T::from_f64(v);
        Ok(Inputs {
            x,
            y,
            a: s(0.75),
            b: s(-1.25),
            c: s(0.5),
            d: s(2.0),
        })
    }
}

/// The natural unfused ndarray expression: one temporary array per operation.
pub fn ndarray_variant<T: StdMath + ndarray::LinalgScalar + ndarray::ScalarOperand>(
    k: Kernel,
    i: &Inputs<T>,
) -> Array1<T> {
    let x = &i.x;
    match k {
        Kernel::Axpy => x * i.a + &i.y,
        Kernel::Horner => ((x * i.a + i.b) * x + i.c) * x + i.d,
        Kernel::Sumsq => Array1::from_elem(1, ndarray_scalar(i)),
        Kernel::Logistic => {
            let e = x.mapv(|v| -v).mapv(T::std_exp);
            (e + T::ONE).mapv(|v| T::ONE / v)
        }
        Kernel::Trig => x.mapv(T::std_sin) * x.mapv(T::std_cos) + x.mapv(T::abs).mapv(T::sqrt),
        Kernel::Cumsum => {
            let mut s = x.clone();
            s.accumulate_axis_inplace(Axis(0), |&prev, cur| *cur = *cur + prev);
            s
        }
        Kernel::Rowsum => matrix(k, x).sum_axis(Axis(1)),
        Kernel::Colsum => matrix(k, x).sum_axis(Axis(0)),
    }
}

/// The natural unfused ndarray expression of the one whole-array reduction, sumsq: `(x * x).sum()`.
pub fn ndarray_scalar<T: StdMath + ndarray::LinalgScalar>(i: &Inputs<T>) -> T {
    (&i.x * &i.x).sum()
}

/// A hand-written loop into `out` (one element for sumsq, one per row or column for the axis sums),
/// with AVX2 and FMA where the CPU has them.
pub fn loop_variant<T: StdMath>(k: Kernel, i: &Inputs<T>, out: &mut [T]) {
    let (x, y) = (
        i.x.as_slice().expect("contiguous"),
        i.y.as_slice().expect("contiguous"),
    );
    match k {
        Kernel::Axpy => baseline::axpy(i.a, x, y, out),
        Kernel::Horner => baseline::horner([i.a, i.b, i.c, i.d], x, out),
        Kernel::Sumsq => out[0] = baseline::sumsq(x),
        Kernel::Logistic => baseline::logistic(x, out),
        Kernel::Trig => baseline::trig(x, out),
        Kernel::Cumsum => baseline::cumsum(x, out),
        Kernel::Rowsum => baseline::rowsum(x, grid(x.len()).1, out),
        Kernel::Colsum => baseline::colsum(x, grid(x.len()).1, out),
    }
}
