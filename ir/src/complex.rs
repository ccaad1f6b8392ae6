//! Complex numbers: what every opcode gives on complex64 and complex128 values, the oracle of
//! complex kernels (the interpreter, [`crate::interp`], calls it; the compiled code is held to it).
//!
//! A value is a [`Complex`] of two floats of kiln's [`Real`] types, so each part's arithmetic and
//! functions are the float interpreter's (libm's). The formulas are NumPy's where NumPy writes its
//! own (`*` and `/` by Smith's method, `**` by repeated multiplication for small integer exponents,
//! `sign`, `log1p`, `expm1`, `log2`, `log10`, `exp2`), and elsewhere the accurate ones C99's
//! `<complex.h>` implementations use, with their special values (Annex G) where they matter:
//!
//! - `sqrt`, `exp`, `sinh`, `cosh`, `tanh` (Kahan's formula, no overflow for large parts), and
//!   through them `sin = -i sinh(iz)`, `cos = cosh(iz)`, `tan = -i tanh(iz)`;
//! - `log` (`0.5 log1p(|z|² - 1)` near the unit circle);
//! - `arcsin`, `arccos`, `arccosh` by Kahan's formulas ("Branch cuts for complex elementary
//!   functions", 1987), which take the sign of a zero imaginary part on the branch cuts and do not
//!   cancel near ±1; `arcsinh = -i arcsin(iz)`;
//! - `arctanh` by `0.25 log1p(4x / ((1-x)² + y²))` and `0.5 atan2(2y, (1-x)(1+x) - y²)`;
//!   `arctan = -i arctanh(iz)`.
//!
//! Their error is a few units in the last place of the result's magnitude: `tests/complex.rs`
//! holds them to NumPy's values within the bound it states.

use crate::dtype::Real;
use crate::op::{BinaryOp, UnaryOp};
use crate::promote::ElemType;
use num_complex::Complex;

/// What an opcode of complex operands gives: a complex number, a real one (`abs`, `real`, `imag`),
/// or a truth value (the comparisons, `isnan`, ...).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Out<T> {
    /// A complex result.
    Complex(Complex<T>),
    /// A real result, in the type of the operand's parts.
    Real(T),
    /// A bool result.
    Truth(bool),
}

fn c<T>(re: T, im: T) -> Complex<T> {
    Complex { re, im }
}

/// Whether `v` is neither infinite nor NaN.
fn finite<T: Real>(v: T) -> bool {
    v.abs() < T::INFINITY
}

fn nan<T: Real>() -> T {
    T::from_f64(f64::NAN)
}

/// The largest finite value of `T`.
fn max_value<T: Real>() -> T {
    match T::DTYPE {
        ElemType::F32 => T::from_f64(f32::MAX as f64),
        ElemType::F64 => T::from_f64(f64::MAX),
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// Where `tanh`'s real argument is large enough that `tanh` is ±1 to the last bit (`exp(-2x)`
/// below half an ulp of 1): 22 for float64 and 9 for float32, as FreeBSD's `ctanh`.
fn tanh_saturates<T: Real>() -> T {
    match T::DTYPE {
        ElemType::F32 => T::from_f64(9.0),
        ElemType::F64 => T::from_f64(22.0),
        _ => unreachable!("only float types (f32, f64) reach here"),
    }
}

/// `a * b`, as NumPy: `(ar br - ai bi) + (ar bi + ai br) i`.
pub fn mul<T: Real>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    c(a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re)
}

/// `a / b` by Smith's method, as NumPy (a zero divisor gives the parts divided by zero).
pub fn div<T: Real>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    let (br_abs, bi_abs) = (b.re.abs(), b.im.abs());
    if br_abs >= bi_abs {
        if br_abs == T::ZERO && bi_abs == T::ZERO {
            return c(a.re / br_abs, a.im / br_abs);
        }
        let rat = b.im / b.re;
        let scl = T::ONE / (b.re + b.im * rat);
        c((a.re + a.im * rat) * scl, (a.im - a.re * rat) * scl)
    } else {
        let rat = b.re / b.im;
        let scl = T::ONE / (b.im + b.re * rat);
        c((a.re * rat + a.im) * scl, (a.im * rat - a.re) * scl)
    }
}

/// `a ** b` as NumPy's `nc_pow`: `1` for a zero exponent; `0` for a zero base and an exponent of
/// positive real part (NaN for any other exponent); repeated multiplication for an integer exponent
/// below 100 in magnitude (a negative one divides 1 by the product); else `exp(b log a)`, whose
/// relative error grows with `|b log a|` (its condition number), and which is NaN where a part of
/// either operand is not finite (C99 leaves `cpow`'s special values to `cexp(b clog a)`).
pub fn pow<T: Real>(a: Complex<T>, b: Complex<T>) -> Complex<T> {
    let one = c(T::ONE, T::ZERO);
    if b.re == T::ZERO && b.im == T::ZERO {
        return one;
    }
    if a.re == T::ZERO && a.im == T::ZERO {
        return if b.re > T::ZERO {
            c(T::ZERO, T::ZERO)
        } else {
            c(nan(), nan())
        };
    }
    if b.im == T::ZERO && b.re.trunc() == b.re && b.re.abs() < T::from_f64(100.0) {
        let n = b.re.to_f64() as i64;
        match n {
            1 => return a,
            2 => return mul(a, a),
            3 => return mul(mul(a, a), a),
            _ => {}
        }
        let mut left = n.unsigned_abs();
        let (mut acc, mut p) = (one, a);
        loop {
            if left & 1 == 1 {
                acc = mul(acc, p);
            }
            left >>= 1;
            if left == 0 {
                break;
            }
            p = mul(p, p);
        }
        return if n < 0 { div(one, acc) } else { acc };
    }
    if !(finite(a.re) && finite(a.im) && finite(b.re) && finite(b.im)) {
        return c(nan(), nan());
    }
    exp(mul(b, log(a)))
}

/// `1 / z` as NumPy's `reciprocal` (not Smith's division: `1 / (0 + 0i)` is NaN + NaN i).
pub fn reciprocal<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if y.abs() <= x.abs() {
        let r = y / x;
        let d = x + y * r;
        c(T::ONE / d, -r / d)
    } else {
        let r = x / y;
        let d = x * r + y;
        c(r / d, -T::ONE / d)
    }
}

/// `f(z)` of a function odd and symmetric under conjugation (`f(-z) = -f(z)`, `f(conj z) =
/// conj f(z)`) from `q1`, its values in the first quadrant (`x, y >= 0`, results of parts `>= 0`):
/// each part takes the sign of the argument's part.
fn odd<T: Real>(z: Complex<T>, q1: impl Fn(T, T) -> Complex<T>) -> Complex<T> {
    let w = q1(z.re.abs(), z.im.abs());
    c(w.re.copysign(z.re), w.im.copysign(z.im))
}

/// pi / 2, pi / 4, 3 pi / 4 and pi in `T`.
fn quarter_turns<T: Real>(k: f64) -> T {
    T::from_f64(k * std::f64::consts::FRAC_PI_4)
}

/// `sqrt(z)`, the principal root (real part ≥ 0), with C99's special values: `sqrt(±0 + 0i) = +0`,
/// an infinite imaginary part gives `inf` with it, `sqrt(-inf + yi) = 0 ± inf i`.
pub fn sqrt<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if x == T::ZERO && y == T::ZERO {
        return c(T::ZERO, y);
    }
    if y.abs() == T::INFINITY {
        return c(T::INFINITY, y);
    }
    if x.is_nan() {
        return c(x, nan());
    }
    if x.abs() == T::INFINITY {
        return if x > T::ZERO {
            c(x, if y.is_nan() { y } else { T::ZERO.copysign(y) })
        } else {
            c(if y.is_nan() { y } else { T::ZERO }, T::INFINITY.copysign(y))
        };
    }
    if y.is_nan() {
        return c(nan(), nan());
    }
    // scaled by 1/4 near the top of the range, where |z| + |x| would overflow
    let big = max_value::<T>() * T::from_f64(0.25);
    if x.abs() >= big || y.abs() >= big {
        let q = T::from_f64(0.25);
        let r = sqrt(c(x * q, y * q));
        let two = T::from_f64(2.0);
        return c(r.re * two, r.im * two);
    }
    let half = T::from_f64(0.5);
    let t = ((x.abs() + x.hypot(y)) * half).sqrt();
    if x >= T::ZERO {
        c(t, y / (t + t))
    } else {
        c(y.abs() / (t + t), t.copysign(y))
    }
}

/// `exp(z) = exp(x) (cos y + i sin y)`, exact for a real `z` (`exp(x + 0i) = exp(x) + 0i`), C99's
/// values for infinite parts, and no overflow where the result is finite.
pub fn exp<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if y == T::ZERO {
        return c(x.exp(), y);
    }
    if x == T::ZERO {
        return c(y.cos(), y.sin());
    }
    if y.abs() == T::INFINITY || y.is_nan() {
        return if x == T::INFINITY {
            c(x, nan())
        } else if x == T::NEG_INFINITY {
            c(T::ZERO, T::ZERO)
        } else {
            c(nan(), nan())
        };
    }
    // exp(x) overflows before exp(x) cos(y) does: two halves
    let top = max_value::<T>().ln();
    if x > top {
        let h = (x * T::from_f64(0.5)).exp();
        return c(h * y.cos() * h, h * y.sin() * h);
    }
    let r = x.exp();
    c(r * y.cos(), r * y.sin())
}

/// `log(z) = log|z| + i arg z`, `log|z|` as `0.5 log1p(|z|² - 1)` near the unit circle.
pub fn log<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    let h = x.hypot(y);
    let re = if h > T::from_f64(0.5) && h < T::from_f64(2.0) {
        T::from_f64(0.5) * x2y2m1(x, y).log1p()
    } else {
        h.ln()
    };
    c(re, y.atan2(x))
}

/// `x² + y² - 1` to a few ulps of itself however close `|z|` is to 1 (as glibc's `__x2y2m1`): the
/// squares split exactly into their rounded values and errors by fused multiply-adds, the five
/// terms summed with Neumaier's compensation.
fn x2y2m1<T: Real>(x: T, y: T) -> T {
    let (p, q) = (x * x, y * y);
    compensated_sum([-T::ONE, p, q, x.mul_add(x, -p), y.mul_add(y, -q)])
}

/// Neumaier's compensated sum: the rounding error of each addition carried and added once.
fn compensated_sum<T: Real>(terms: [T; 5]) -> T {
    let (mut sum, mut comp) = (T::ZERO, T::ZERO);
    for t in terms {
        let u = sum + t;
        comp = comp
            + if sum.abs() >= t.abs() {
                (sum - u) + t
            } else {
                (t - u) + sum
            };
        sum = u;
    }
    sum + comp
}

/// `log(1 + z)`, accurate for small `z` and near `|1 + z| = 1`: `log|1 + z|` as `0.5 log1p(2x + x²
/// + y²)`, the squares exact and the sum compensated (as [`x2y2m1`]).
pub fn log1p<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    let x1 = x + T::ONE;
    let h = x1.hypot(y);
    let re = if h > T::from_f64(0.5) && h < T::from_f64(2.0) {
        let (p, q) = (x * x, y * y);
        let two_x = x + x;
        T::from_f64(0.5) * compensated_sum([two_x, p, q, x.mul_add(x, -p), y.mul_add(y, -q)]).log1p()
    } else {
        h.ln()
    };
    c(re, y.atan2(x1))
}

/// `exp(z) - 1` as NumPy's `nc_expm1`: `(expm1(x) cos y - 2 sin²(y/2)) + i exp(x) sin y`.
pub fn expm1<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if y == T::ZERO {
        return c(x.expm1(), y);
    }
    let a = (y * T::from_f64(0.5)).sin();
    c(x.expm1() * y.cos() - T::from_f64(2.0) * a * a, x.exp() * y.sin())
}

/// `sinh(z) = sinh x cos y + i cosh x sin y`, exact on the axes.
pub fn sinh<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    // C99's csinh(±inf + i inf) and csinh(±inf + i NaN): ±inf + i NaN (glibc's +inf)
    if x.abs() == T::INFINITY && !finite(y) {
        return c(T::INFINITY, nan());
    }
    if y == T::ZERO {
        return c(x.sinh(), y);
    }
    if x == T::ZERO {
        // the zero's sign that of 0 cos y (csinh(±0 + i inf) = ±0 + i NaN)
        return c(if finite(y) { x * y.cos() } else { x }, y.sin());
    }
    if let Some(h) = half_exp(x) {
        let s = T::ONE.copysign(x);
        return c(s * (h * y.cos()) * h, (h * y.sin()) * h);
    }
    c(x.sinh() * y.cos(), x.cosh() * y.sin())
}

/// `sqrt(exp(|x|) / 2)` where `sinh x` and `cosh x` overflow (`|x|` beyond `ln MAX`) but their
/// products with `cos y` and `sin y` may not: each is then `h (h cos y)` (and `± h (h sin y)`).
fn half_exp<T: Real>(x: T) -> Option<T> {
    (x.abs() > max_value::<T>().ln())
        .then(|| (x.abs() * T::from_f64(0.5)).exp() * T::from_f64(std::f64::consts::FRAC_1_SQRT_2))
}

/// `cosh(z) = cosh x cos y + i sinh x sin y`, exact on the real axis.
pub fn cosh<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    // C99's ccosh(±inf + i inf), ccosh(±inf + i NaN): inf + i NaN; ccosh(±0 + i inf) and
    // ccosh(±0 + i NaN): NaN ± i0
    if !finite(y) && y != T::ZERO {
        if x.abs() == T::INFINITY {
            return c(T::INFINITY, nan());
        }
        if x == T::ZERO {
            return c(nan(), T::ZERO);
        }
    }
    if y == T::ZERO {
        return c(x.cosh(), T::ZERO.copysign(x) * y);
    }
    if x == T::ZERO {
        return c(y.cos(), x * y.sin());
    }
    if let Some(h) = half_exp(x) {
        let s = T::ONE.copysign(x);
        return c((h * y.cos()) * h, s * (h * y.sin()) * h);
    }
    c(x.cosh() * y.cos(), x.sinh() * y.sin())
}

/// `tanh(z)` by Kahan's formula (`t = tan y`, `s = sinh x`, `β = 1 + t²`:
/// `(β s sqrt(1 + s²) + i t) / (1 + β s²)`), ±1 where `x` is large (no overflow).
pub fn tanh<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if x.is_nan() {
        return c(x, if y == T::ZERO { y } else { nan() });
    }
    if y.abs() == T::INFINITY || y.is_nan() {
        return if x.abs() == T::INFINITY {
            c(T::ONE.copysign(x), T::ZERO.copysign(y))
        } else if x == T::ZERO {
            c(x, nan())
        } else {
            c(nan(), nan())
        };
    }
    if y == T::ZERO {
        return c(x.tanh(), y);
    }
    if x.abs() >= tanh_saturates::<T>() {
        let e = (-x.abs()).exp();
        return c(T::ONE.copysign(x), T::from_f64(4.0) * y.sin() * y.cos() * e * e);
    }
    let t = y.tan();
    let beta = T::ONE + t * t;
    let s = x.sinh();
    let rho = (T::ONE + s * s).sqrt();
    let denom = T::ONE + beta * s * s;
    c(beta * rho * s / denom, t / denom)
}

/// `i z`.
fn times_i<T: Real>(z: Complex<T>) -> Complex<T> {
    c(-z.im, z.re)
}

/// `-i z`.
fn times_minus_i<T: Real>(z: Complex<T>) -> Complex<T> {
    c(z.im, -z.re)
}

/// `arcsin(z)` by Kahan's formula: `atan2(x, Re(sqrt(1-z) sqrt(1+z))) + i asinh(Im(conj(sqrt(1-z))
/// sqrt(1+z)))`.
pub fn asin<T: Real>(z: Complex<T>) -> Complex<T> {
    if !(finite(z.re) && finite(z.im)) {
        return times_minus_i(asinh(times_i(z)));
    }
    let s1 = sqrt(c(T::ONE - z.re, -z.im));
    let s2 = sqrt(c(T::ONE + z.re, z.im));
    let re = z.re.atan2(s1.re * s2.re - s1.im * s2.im);
    let im = (s1.re * s2.im - s1.im * s2.re).asinh();
    c(re, im)
}

/// `arccos(z)` by Kahan's formula: `2 atan2(Re sqrt(1-z), Re sqrt(1+z)) + i asinh(Im(conj(sqrt(1+z))
/// sqrt(1-z)))`.
pub fn acos<T: Real>(z: Complex<T>) -> Complex<T> {
    if !(finite(z.re) && finite(z.im)) {
        // C99's special values through cacosh's: acos(z) = -i acosh(z) above the real axis (its
        // sign bit clear), i acosh(z) below
        let w = acosh(z);
        return if T::ONE.copysign(z.im) < T::ZERO {
            times_i(w)
        } else {
            times_minus_i(w)
        };
    }
    let s1 = sqrt(c(T::ONE - z.re, -z.im));
    let s2 = sqrt(c(T::ONE + z.re, z.im));
    let re = T::from_f64(2.0) * s1.re.atan2(s2.re);
    let im = (s2.re * s1.im - s2.im * s1.re).asinh();
    c(re, im)
}

/// `arccosh(z)` by Kahan's formula: `asinh(Re(conj(sqrt(z-1)) sqrt(z+1))) + 2i atan2(Im sqrt(z-1),
/// Re sqrt(z+1))`.
pub fn acosh<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    if !(finite(x) && finite(y)) {
        // C99's table (G.6.2.1) above the real axis; below it, the conjugate
        let inf = T::INFINITY;
        let w = if x.is_nan() {
            c(if y.abs() == inf { inf } else { nan() }, nan())
        } else if y.is_nan() {
            match x {
                _ if x.abs() == inf => c(inf, nan()),
                _ if x == T::ZERO => c(nan(), quarter_turns(2.0)),
                _ => c(nan(), nan()),
            }
        } else if y.abs() == inf {
            let k = if x == inf {
                1.0
            } else if x == -inf {
                3.0
            } else {
                2.0
            };
            c(inf, quarter_turns(k))
        } else {
            c(inf, if x > T::ZERO { T::ZERO } else { quarter_turns(4.0) })
        };
        return c(w.re, w.im.copysign(y));
    }
    let s1 = sqrt(c(z.re - T::ONE, z.im));
    let s2 = sqrt(c(z.re + T::ONE, z.im));
    let re = (s1.re * s2.re + s1.im * s2.im).asinh();
    let im = T::from_f64(2.0) * s1.im.atan2(s2.re);
    c(re, im)
}

/// `arctanh(z)`: `0.25 log1p(4x / ((1-x)² + y²)) + 0.5i atan2(2y, (1-x)(1+x) - y²)`, and
/// `x / |z|² ± i pi/2` where the squares would overflow.
pub fn atanh<T: Real>(z: Complex<T>) -> Complex<T> {
    odd(z, atanh_q1)
}

/// `arctanh` in the first quadrant, C99's special values (G.6.2.3) included.
fn atanh_q1<T: Real>(x: T, y: T) -> Complex<T> {
    let inf = T::INFINITY;
    let half_pi = quarter_turns::<T>(2.0);
    if x.is_nan() {
        return if y == inf {
            c(T::ZERO, half_pi)
        } else {
            c(nan(), nan())
        };
    }
    if y.is_nan() {
        return if x == T::ZERO || x == inf {
            c(T::ZERO, nan())
        } else {
            c(nan(), nan())
        };
    }
    let big = max_value::<T>().sqrt() * T::from_f64(0.25);
    if x >= big || y >= big {
        // x / |z|² (zero for an infinite part), and pi / 2
        let h = x.hypot(y);
        return c(if h == inf { T::ZERO } else { x / h / h }, half_pi);
    }
    let one_minus = T::ONE - x;
    // near 1 the squares underflow: the quotient of the distances to ±1 instead
    let small = T::ONE / max_value::<T>().sqrt();
    let re = if one_minus.abs() < small && y < small {
        T::from_f64(0.5) * ((T::ONE + x).hypot(y).ln() - one_minus.hypot(y).ln())
    } else {
        T::from_f64(0.25) * (T::from_f64(4.0) * x / (one_minus * one_minus + y * y)).log1p()
    };
    let im = T::from_f64(0.5) * (T::from_f64(2.0) * y).atan2(one_minus * (T::ONE + x) - y * y);
    c(re, im)
}

/// `arcsinh(z) = -i arcsin(iz)`, C99's special values (G.6.2.2) where a part is not finite.
pub fn asinh<T: Real>(z: Complex<T>) -> Complex<T> {
    if finite(z.re) && finite(z.im) {
        return times_minus_i(asin(times_i(z)));
    }
    odd(z, |x: T, y: T| {
        let inf = T::INFINITY;
        if x.is_nan() {
            match y {
                _ if y == T::ZERO => c(nan(), T::ZERO),
                _ if y == inf => c(inf, nan()),
                _ => c(nan(), nan()),
            }
        } else if y.is_nan() {
            c(if x == inf { inf } else { nan() }, nan())
        } else if x == inf {
            c(inf, if y == inf { quarter_turns(1.0) } else { T::ZERO })
        } else {
            c(inf, quarter_turns(2.0))
        }
    })
}

/// NumPy 2's `sign` of a complex number, `z / |z|`: `0` for zero, NaN for a NaN part, and for an
/// infinite part its unit direction (NaN where both parts are infinite).
pub fn sign<T: Real>(z: Complex<T>) -> Complex<T> {
    let (x, y) = (z.re, z.im);
    let a = x.hypot(y);
    if a.is_nan() {
        c(nan(), nan())
    } else if a == T::INFINITY {
        match (x.abs() == T::INFINITY, y.abs() == T::INFINITY) {
            (true, true) => c(nan(), nan()),
            (true, false) => c(T::ONE.copysign(x), T::ZERO),
            _ => c(T::ZERO, T::ONE.copysign(y)),
        }
    } else if a == T::ZERO {
        c(T::ZERO, T::ZERO)
    } else {
        c(x / a, y / a)
    }
}

fn scaled<T: Real>(z: Complex<T>, k: f64) -> Complex<T> {
    let k = T::from_f64(k);
    c(z.re * k, z.im * k)
}

/// Whether a complex number reads as true: a nonzero part (NaN included), as NumPy's `bool(z)`.
pub fn truth<T: Real>(z: Complex<T>) -> bool {
    z.re != T::ZERO || z.im != T::ZERO
}

/// One unary opcode on a complex operand (the typing gives complex operands only the opcodes
/// here; the rest is a type error there).
pub fn unary<T: Real>(op: UnaryOp, z: Complex<T>) -> Out<T> {
    use UnaryOp::*;
    let (x, y) = (z.re, z.im);
    Out::Complex(match op {
        Abs => return Out::Real(x.hypot(y)),
        Real => return Out::Real(x),
        Imag => return Out::Real(y),
        IsNan => return Out::Truth(x.is_nan() || y.is_nan()),
        IsInf => return Out::Truth(x.abs() == T::INFINITY || y.abs() == T::INFINITY),
        IsFinite => return Out::Truth(x.abs() < T::INFINITY && y.abs() < T::INFINITY),
        Not => return Out::Truth(!truth(z)),
        Neg => c(-x, -y),
        Conj => c(x, -y),
        Recip => reciprocal(z),
        Sqrt => sqrt(z),
        Exp => exp(z),
        Log => log(z),
        Log2 => scaled(log(z), std::f64::consts::LOG2_E),
        Log10 => scaled(log(z), std::f64::consts::LOG10_E),
        Exp2 => exp(scaled(z, std::f64::consts::LN_2)),
        Expm1 => expm1(z),
        Log1p => log1p(z),
        Sin => times_minus_i(sinh(times_i(z))),
        Cos => cosh(times_i(z)),
        Tan => times_minus_i(tanh(times_i(z))),
        Sinh => sinh(z),
        Cosh => cosh(z),
        Tanh => tanh(z),
        Arcsin => asin(z),
        Arccos => acos(z),
        Arctan => times_minus_i(atanh(times_i(z))),
        Arcsinh => asinh(z),
        Arccosh => acosh(z),
        Arctanh => atanh(z),
        Sign => sign(z),
        Round => c(x.round_even(), y.round_even()),
        Floor | Ceil | Trunc | Erf | Erfc | Cbrt | Deg2Rad | Rad2Deg | Invert | Signbit => {
            unreachable!("the typing refuses {op} of a complex number")
        }
    })
}

/// One binary opcode on two complex operands.
pub fn binary<T: Real>(op: BinaryOp, a: Complex<T>, b: Complex<T>) -> Out<T> {
    Out::Complex(match op {
        BinaryOp::Add => c(a.re + b.re, a.im + b.im),
        BinaryOp::Sub => c(a.re - b.re, a.im - b.im),
        BinaryOp::Mul => mul(a, b),
        BinaryOp::Div => div(a, b),
        BinaryOp::Pow => pow(a, b),
        BinaryOp::Eq => return Out::Truth(a.re == b.re && a.im == b.im),
        BinaryOp::Ne => return Out::Truth(a.re != b.re || a.im != b.im),
        BinaryOp::And => return Out::Truth(truth(a) && truth(b)),
        BinaryOp::Or => return Out::Truth(truth(a) || truth(b)),
        _ => unreachable!("the typing refuses {op} of complex numbers"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::{FRAC_PI_2, PI};

    type Case = (UnaryOp, (f64, f64), (f64, f64));

    fn close(a: Complex<f64>, b: (f64, f64), tol: f64) -> bool {
        let d = (a.re - b.0).hypot(a.im - b.1);
        d <= tol * b.0.hypot(b.1).max(f64::MIN_POSITIVE)
    }

    #[test]
    fn values_numpy_gives() {
        // numpy 2.4: np.sqrt(-4+0j), np.exp(1+1j), np.log(-1+0j), np.arcsin(2+0j), np.arctanh(2+0j)...
        let cases: [Case; 10] = [
            (UnaryOp::Sqrt, (-4.0, 0.0), (0.0, 2.0)),
            (UnaryOp::Exp, (1.0, 1.0), (1.4686939399158851, 2.2873552871788423)),
            (UnaryOp::Log, (-1.0, 0.0), (0.0, std::f64::consts::PI)),
            (UnaryOp::Arcsin, (2.0, 0.0), (FRAC_PI_2, 1.3169578969248166)),
            (UnaryOp::Arcsin, (2.0, -0.0), (FRAC_PI_2, -1.3169578969248166)),
            (UnaryOp::Arctanh, (2.0, 0.0), (0.5493061443340549, FRAC_PI_2)),
            (
                UnaryOp::Arccos,
                (0.5, 0.5),
                (1.1185178796437059, -0.5306375309525178),
            ),
            (UnaryOp::Arccosh, (-2.0, 0.0), (1.3169578969248166, PI)),
            (UnaryOp::Tan, (1.0, 400.0), (0.0, 1.0)),
            (UnaryOp::Arcsinh, (0.0, 2.0), (1.3169578969248166, FRAC_PI_2)),
        ];
        for (op, z, want) in cases {
            let Out::Complex(got) = unary(op, c(z.0, z.1)) else {
                panic!("{op} gives a complex number")
            };
            assert!(close(got, want, 4e-16), "{op}({z:?}) = {got:?}, numpy {want:?}");
            assert_eq!(
                got.im.is_sign_negative(),
                want.1.is_sign_negative(),
                "{op}({z:?}) = {got:?}"
            );
        }
    }

    #[test]
    fn log_near_the_unit_circle() {
        // |0.6 + 0.8i|² - 1 is 2.22e-17 in float64 (mpmath: log's real part 2.2204460492503132e-17)
        let l = log(c(0.6f64, 0.8));
        assert!((l.re - 2.2204460492503132e-17).abs() < 1e-32, "{l:?}");
        let l = log(c(1e-20f64, 1.0));
        assert!((l.re - 5e-41).abs() < 1e-55, "{l:?}");
        // log1p(-0.4 + 0.8i) = log(0.6 + 0.8i) up to the rounding of -0.4 and 0.8: mpmath gives
        // 2.2204460492503132e-17 for the float64 point
        let l = log1p(c(-0.4f64, 0.8));
        assert!((l.re - 2.2204460492503132e-17).abs() < 1e-31, "{l:?}");
    }

    #[test]
    fn powers_and_division_as_numpy() {
        let z = c(1.5, -0.5);
        assert_eq!(pow(z, c(2.0, 0.0)), mul(z, z));
        assert_eq!(pow(z, c(-1.0, 0.0)), div(c(1.0, 0.0), z));
        assert_eq!(pow(c(0.0, 0.0), c(0.0, 0.0)), c(1.0, 0.0));
        assert_eq!(pow(c(0.0, 0.0), c(2.5, 0.0)), c(0.0, 0.0));
        assert!(pow(c(0.0, 0.0), c(-1.0, 0.0)).re.is_nan());
        // Smith's division does not overflow where the naive formula would
        let q = div(c(1e300, 1e300), c(1e300, 1e300));
        assert_eq!(q, c(1.0, 0.0));
        let r: Complex<f64> = div(c(1.0, 0.0), c(0.0, 0.0));
        assert!(r.re.is_infinite() && r.im.is_nan());
    }

    #[test]
    fn special_values() {
        assert_eq!(sqrt(c(-0.0, 0.0)), c(0.0, 0.0));
        assert_eq!(sqrt(c(f64::NEG_INFINITY, 1.0)), c(0.0, f64::INFINITY));
        assert_eq!(exp(c(f64::NEG_INFINITY, f64::INFINITY)), c(0.0, 0.0));
        assert_eq!(tanh(c(f64::INFINITY, 1.0)), c(1.0, 0.0));
        assert_eq!(sign(c(f64::INFINITY, 1.0)), c(1.0, 0.0));
        assert_eq!(sign(c(0.0, 0.0)), c(0.0, 0.0));
        assert!(sign(c(f64::NAN, 0.0)).im.is_nan());
        // tanh and tan of large parts: no overflow into NaN (numexpr's test_complex_tan)
        let t = tanh(c(385.0, 1.0));
        assert_eq!(t.re, 1.0);
        assert!(t.im.abs() < 1e-300);
    }
}
