//! The scalar loops `kiln bench --functions` races kiln against: the loop a Rust programmer writes,
//! `for (o, x) in out.iter_mut().zip(x) { *o = x.tanh() }`, std's method for the function applied
//! to one element at a time (inside `baseline::dispatch`, compiled with AVX2 and FMA where the CPU
//! has them, as every `rust-loop` of `kiln bench`).
//!
//! std's methods are glibc's libm for both types (`tanhf` for f32). The interpreter, the oracle
//! both are checked against, is std for f64 except `arcsinh`, `arccosh`, `arctanh` (the `libm`
//! crate's, more accurate than std's formulas: std's `acosh` near 1 is hundreds of ULP off, its
//! `atanh` near -1 far more, in f64 and f32 alike, as std computes both types by one formula) and uses
//! the `libm` crate for every f32 function (`kiln_ir::Real`), so a loop agrees with it within a
//! looser bound than kiln's ([`super::functions::LOOP_ULP`]), not bit for bit.
//!
//! The one exception to std's methods is arctanh: std's `atanh` (`0.5 * ln_1p(2x / (1 - x))`) is
//! not the function near -1 (thousands of ULP off in f64; in f32, -inf at -0.99999994, where
//! atanh is about -8.7), so its loop, which would only time a wrong answer, is the `libm` crate's
//! `atanh` / `atanhf` (musl's), the interpreter's own ([`kiln_ir::Real::atanh`]).
//!
//! The one table of this file maps each opcode to its loop's method; an opcode std has no method
//! for (erf, erfc) has no loop here.

use super::baseline;
use kiln::array::Float;
use kiln_ir::{BinaryOp, Real, UnaryOp};

/// std's scalar math over slices, for f64 and f32.
pub trait StdLoops: Float {
    /// `out[i] = op(x[i])` through std's method for `op`; `false` (and `out` untouched) where std
    /// has none.
    fn unary(op: UnaryOp, x: &[Self], out: &mut [Self]) -> bool;
    /// `out[i] = op(x[i], y[i])` through std's method for `op` (`powf` for `Pow`); `false` where
    /// std has none.
    fn binary(op: BinaryOp, x: &[Self], y: &[Self], out: &mut [Self]) -> bool;
    /// `out[i] = x[i].powf(e)`.
    fn pow_scalar(x: &[Self], e: Self, out: &mut [Self]);
    /// `out[i] = base.powf(x[i])`.
    fn scalar_pow(base: Self, x: &[Self], out: &mut [Self]);
}

/// `out[i] = f(x[i])`; `f` is a function item, so each call site is its own inlined loop.
fn each<T: Copy>(x: &[T], out: &mut [T], f: impl Fn(T) -> T) {
    baseline::dispatch(|| {
        for (o, &v) in out.iter_mut().zip(x) {
            *o = f(v);
        }
    })
}

/// `out[i] = f(x[i], y[i])`.
fn each2<T: Copy>(x: &[T], y: &[T], out: &mut [T], f: impl Fn(T, T) -> T) {
    baseline::dispatch(|| {
        for ((o, &a), &b) in out.iter_mut().zip(x).zip(y) {
            *o = f(a, b);
        }
    })
}

macro_rules! std_loops {
    ($t:ty) => {
        impl StdLoops for $t {
            fn unary(op: UnaryOp, x: &[$t], out: &mut [$t]) -> bool {
                use UnaryOp as U;
                match op {
                    U::Exp => each(x, out, <$t>::exp),
                    U::Log => each(x, out, <$t>::ln),
                    U::Sin => each(x, out, <$t>::sin),
                    U::Cos => each(x, out, <$t>::cos),
                    U::Tan => each(x, out, <$t>::tan),
                    U::Sqrt => each(x, out, <$t>::sqrt),
                    U::Tanh => each(x, out, <$t>::tanh),
                    U::Sinh => each(x, out, <$t>::sinh),
                    U::Cosh => each(x, out, <$t>::cosh),
                    U::Exp2 => each(x, out, <$t>::exp2),
                    U::Expm1 => each(x, out, <$t>::exp_m1),
                    U::Log2 => each(x, out, <$t>::log2),
                    U::Log10 => each(x, out, <$t>::log10),
                    U::Log1p => each(x, out, <$t>::ln_1p),
                    U::Arcsin => each(x, out, <$t>::asin),
                    U::Arccos => each(x, out, <$t>::acos),
                    U::Arctan => each(x, out, <$t>::atan),
                    U::Arcsinh => each(x, out, <$t>::asinh),
                    U::Arccosh => each(x, out, <$t>::acosh),
                    // std's formula is wrong near -1 (module docs): musl's
                    U::Arctanh => each(x, out, <$t as Real>::atanh),
                    U::Cbrt => each(x, out, <$t>::cbrt),
                    _ => return false,
                }
                true
            }

            fn binary(op: BinaryOp, x: &[$t], y: &[$t], out: &mut [$t]) -> bool {
                use BinaryOp as B;
                match op {
                    B::Pow => each2(x, y, out, <$t>::powf),
                    B::Arctan2 => each2(x, y, out, <$t>::atan2),
                    B::Hypot => each2(x, y, out, <$t>::hypot),
                    _ => return false,
                }
                true
            }

            fn pow_scalar(x: &[$t], e: $t, out: &mut [$t]) {
                each(x, out, |v| v.powf(e))
            }

            fn scalar_pow(base: $t, x: &[$t], out: &mut [$t]) {
                each(x, out, |v| base.powf(v))
            }
        }
    };
}

std_loops!(f64);
std_loops!(f32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_opcode_is_std_s_method() {
        let x = [0.25f64, 0.5, 0.75];
        let mut out = [0.0; 3];
        assert!(f64::unary(UnaryOp::Arccos, &x, &mut out));
        assert_eq!(out, x.map(f64::acos));
        assert!(f64::binary(BinaryOp::Arctan2, &x, &[1.0, 2.0, 3.0], &mut out));
        assert_eq!(out, [0.25f64.atan2(1.0), 0.5f64.atan2(2.0), 0.75f64.atan2(3.0)]);
        let mut o32 = [0.0f32; 2];
        f32::scalar_pow(2.5, &[2.0, -1.0], &mut o32);
        assert_eq!(o32, [6.25, 0.4]);
        // arctanh: musl's, finite near -1 where std's f32 formula gives -inf
        let mut a32 = [0.0f32; 1];
        assert!(f32::unary(UnaryOp::Arctanh, &[-0.99999994], &mut a32));
        assert!(a32[0].is_finite() && a32[0] < -8.0, "{a32:?}");
        assert_eq!(a32[0], <f32 as Real>::atanh(-0.99999994));
        // no std method: no loop, the output untouched
        assert!(!f64::unary(UnaryOp::Erf, &x, &mut out));
        assert!(!f64::binary(BinaryOp::Add, &x, &x, &mut out));
    }
}
