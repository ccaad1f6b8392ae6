//! Hand-written Rust loops, the best rustc does here: each loop body is inlined into a function
//! compiled with AVX2 and FMA enabled, chosen at run time when the CPU has them.
//!
//! The transcendental loops call std's `exp`, `sin`, `cos` (glibc); `sumsq` is the strict-order
//! `x.iter().map(|v| v * v).sum()`, `cumsum` the sequential running sum and `rowsum` a strict sum per
//! row; `colsum` adds row after row into the output, which vectorises across columns. rustc never contracts `a*x + y` into an FMA on its own, so the
//! algebra loops compute exactly what kiln's kernels compute.
// the one unsafe call of kiln: into a function compiled with AVX2 + FMA, after a run-time check
#![allow(unsafe_code)]

use kiln::array::Float;

/// std's math (glibc), which the loops call: for f32 that is `expf`, `sinf`, `cosf`.
pub trait StdMath: Float + std::iter::Sum {
    /// `exp` through std.
    fn std_exp(self) -> Self;
    /// `sin` through std.
    fn std_sin(self) -> Self;
    /// `cos` through std.
    fn std_cos(self) -> Self;
}

impl StdMath for f64 {
    fn std_exp(self) -> f64 {
        self.exp()
    }
    fn std_sin(self) -> f64 {
        self.sin()
    }
    fn std_cos(self) -> f64 {
        self.cos()
    }
}

impl StdMath for f32 {
    fn std_exp(self) -> f32 {
        self.exp()
    }
    fn std_sin(self) -> f32 {
        self.sin()
    }
    fn std_cos(self) -> f32 {
        self.cos()
    }
}

/// Whether this CPU runs the AVX2 + FMA versions.
pub fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Runs `f` inside a function compiled for AVX2 + FMA when the CPU has them.
#[inline(always)]
pub(super) fn dispatch<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    {
        #[target_feature(enable = "avx2,fma")]
        fn with_avx2<R>(f: impl FnOnce() -> R) -> R {
            f()
        }
        if has_avx2_fma() {
            // SAFETY: the CPU supports avx2 and fma (checked at run time just above).
            return unsafe { with_avx2(f) };
        }
    }
    f()
}

/// `out = a*x + y`, the hand loop.
pub fn axpy<T: Float>(a: T, x: &[T], y: &[T], out: &mut [T]) {
    dispatch(|| {
        for ((o, &x), &y) in out.iter_mut().zip(x).zip(y) {
            *o = a * x + y;
        }
    })
}

/// `out = ((a*x+b)*x+c)*x+d`, the hand loop.
pub fn horner<T: Float>([a, b, c, d]: [T; 4], x: &[T], out: &mut [T]) {
    dispatch(|| {
        for (o, &x) in out.iter_mut().zip(x) {
            *o = ((a * x + b) * x + c) * x + d;
        }
    })
}

/// `sum(x*x)`, accumulated in order in the data type (the strict loop a programmer writes).
pub fn sumsq<T: StdMath>(x: &[T]) -> T {
    dispatch(|| x.iter().map(|&v| v * v).sum())
}

/// `out = 1/(1+exp(-x))` with std's `exp`.
pub fn logistic<T: StdMath>(x: &[T], out: &mut [T]) {
    dispatch(|| {
        for (o, &x) in out.iter_mut().zip(x) {
            *o = T::ONE / (T::ONE + (-x).std_exp());
        }
    })
}

/// `out = sin(x)*cos(x) + sqrt(abs(x))` with std's functions.
pub fn trig<T: StdMath>(x: &[T], out: &mut [T]) {
    dispatch(|| {
        for (o, &x) in out.iter_mut().zip(x) {
            *o = x.std_sin() * x.std_cos() + x.abs().sqrt();
        }
    })
}

/// The running sum of `x`, in order.
pub fn cumsum<T: StdMath>(x: &[T], out: &mut [T]) {
    dispatch(|| {
        let mut acc = T::ZERO;
        for (o, &v) in out.iter_mut().zip(x) {
            acc = acc + v;
            *o = acc;
        }
    })
}

/// Sums each row of the row-major `(x.len() / cols, cols)` matrix `x` into `out`.
pub fn rowsum<T: StdMath>(x: &[T], cols: usize, out: &mut [T]) {
    dispatch(|| {
        for (o, row) in out.iter_mut().zip(x.chunks_exact(cols.max(1))) {
            *o = row.iter().copied().sum();
        }
    })
}

/// Sums each column of the row-major `(x.len() / cols, cols)` matrix `x` into `out`.
pub fn colsum<T: StdMath>(x: &[T], cols: usize, out: &mut [T]) {
    dispatch(|| {
        out.fill(T::ZERO);
        for row in x.chunks_exact(cols.max(1)) {
            for (o, &v) in out.iter_mut().zip(row) {
                *o = *o + v;
            }
        }
    })
}
