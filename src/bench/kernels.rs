//! The seed kernels of `kiln bench`: their expressions, inputs, and the two baselines each is raced
//! against (the unfused ndarray expression and a hand-written Rust loop).

use super::baseline::{self, StdMath};
use crate::array::Float;
use ndarray::Array1;

/// A seed kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kernel {
    Axpy,
    Horner,
    Sumsq,
    Logistic,
    Trig,
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
    pub const ALL: [Kernel; 5] = [
        Kernel::Axpy,
        Kernel::Horner,
        Kernel::Sumsq,
        Kernel::Logistic,
        Kernel::Trig,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kernel::Axpy => "axpy",
            Kernel::Horner => "horner",
            Kernel::Sumsq => "sumsq",
            Kernel::Logistic => "logistic",
            Kernel::Trig => "trig",
        }
    }

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
        }
    }

    pub fn tolerance(self) -> Tolerance {
        match self {
            Kernel::Axpy | Kernel::Horner => Tolerance::Exact,
            Kernel::Sumsq => Tolerance::Reduction,
            // the interpreter's f32 math is the libm crate's, the loops' is glibc's
            Kernel::Logistic | Kernel::Trig => Tolerance::Ulp(4),
        }
    }

    /// Whether the kernel reduces to one value.
    pub fn reduces(self) -> bool {
        self == Kernel::Sumsq
    }

    /// Bytes of compulsory memory traffic per element: the arrays read and written.
    pub fn arrays_touched(self) -> usize {
        match self {
            Kernel::Axpy => 3,
            Kernel::Horner | Kernel::Logistic | Kernel::Trig => 2,
            Kernel::Sumsq => 1,
        }
    }
}

/// The inputs of one benchmark: x uniform in [-3, 3], y in [0, 1), and run-time scalars.
#[derive(Debug, Clone)]
pub struct Inputs<T> {
    pub x: Array1<T>,
    pub y: Array1<T>,
    pub a: T,
    pub b: T,
    pub c: T,
    pub d: T,
}

/// A small deterministic generator (xorshift64*), so runs are repeatable without a dependency.
struct Rng(u64);

impl Rng {
    fn unit(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// `n` values of `f`, or kiln's "out of memory" error if they cannot be allocated.
pub fn try_array<T>(n: usize, what: &str, mut f: impl FnMut() -> T) -> crate::Result<Array1<T>> {
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
    pub fn new(n: usize) -> crate::Result<Inputs<T>> {
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
        Kernel::Sumsq => Array1::from_elem(1, (x * x).sum()),
        Kernel::Logistic => {
            let e = x.mapv(|v| -v).mapv(T::std_exp);
            (e + T::ONE).mapv(|v| T::ONE / v)
        }
        Kernel::Trig => x.mapv(T::std_sin) * x.mapv(T::std_cos) + x.mapv(T::abs).mapv(T::sqrt),
    }
}

/// A hand-written loop into `out` (one element for sumsq), with AVX2 and FMA where the CPU has them.
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
    }
}
