//! pow by a literal exponent with its own code (`x**1.5`, `x**3`, `x**4`, `x**-0.5`, `x**-2`) at
//! full width: `vmath::pow_const` written for one lane (the same operations in the same order, its
//! constants, `mul_add` where it emits `fma`). f64 lanes follow its f64 code, one path for every
//! lane (selects, no branch), so every chunk takes it. f32 lanes follow `pow_const_f32`: the f64
//! code's operations in f32; a chunk with a lane outside the range where they are exact (`x**1.5`:
//! `0 < x < 2^-68`; `x**3`: |x| below 2^-34; `x**4`: below 2^-25; `x**-2`: outside [2^-51, 2^63])
//! takes the general path, where those lanes are computed on the widened value as
//! `pow_const_widened` computes them and rounded once to f32 (`x**-0.5` scales instead, one path).

use super::lanes::{Lane, Paths, levels, map, sel};
use crate::vmath::pow_const::{
    CUBE_TINY_F32, FOURTH_TINY_F32, INV_SQ_BIG, INV_SQ_DOWN, INV_SQ_HIGH_F32, INV_SQ_HUGE, INV_SQ_LOW_F32,
    INV_SQ_SMALL, INV_SQ_TINY, INV_SQ_UP, INV_SQRT_BACK, INV_SQRT_BACK_F32, INV_SQRT_SMALL,
    INV_SQRT_SMALL_F32, INV_SQRT_UP, INV_SQRT_UP_F32, THREE_HALVES_TINY_F32,
};

/// `x**1.5` (`vmath::pow_const::three_halves`).
#[inline(always)]
fn three_halves<T: Lane>(x: T) -> T {
    let s = x.sqrt();
    let hi = x * s;
    let lo = x.mul_add(s, -hi);
    let e = (-s).mul_add(s, x);
    let t = (s * T::c(0.5)).mul_add(e, lo);
    let r = hi + t;
    let inf = T::c(f64::INFINITY);
    sel((hi == inf) | (x == -inf), inf, r)
}

/// `r`, but `h` where `h` is zero, infinite or NaN (`x**3` and `x**4`). Finite as `h·0 == 0`:
/// written `h.abs() < inf` beside `h != 0`, LLVM folds the two into one class test, which it
/// lowers lane by lane (128 mask shifts in each AVX-512 routine, and `x**4` from Python at N = 1e6
/// twice the time of `x**3`).
#[inline(always)]
fn keep_special<T: Lane>(h: T, r: T) -> T {
    let zero = T::c(0.0);
    sel(((h * zero) == zero) & (h != zero), r, h)
}

/// `x**3` (`vmath::pow_const::cube`).
#[inline(always)]
fn cube<T: Lane>(x: T) -> T {
    let x2 = x * x;
    let x2l = x.mul_add(x, -x2);
    let h = x2 * x;
    let l = x2.mul_add(x, -h);
    let t = x2l.mul_add(x, l);
    let r = h + t;
    keep_special(h, r)
}

/// `x**4` (`vmath::pow_const::fourth`).
#[inline(always)]
fn fourth<T: Lane>(x: T) -> T {
    let x2 = x * x;
    let x2l = x.mul_add(x, -x2);
    let h = x2 * x2;
    let l = x2.mul_add(x2, -h);
    let t = (x2 + x2).mul_add(x2l, l);
    let r = h + t;
    keep_special(h, r)
}

/// `x**-0.5` (`vmath::pow_const::inv_sqrt`), with the type's scaling of small bases (below
/// `small`: by `up`, the result by `back`).
#[inline(always)]
fn inv_sqrt<T: Lane>(x: T, [small, up, back]: [f64; 3]) -> T {
    let one = T::c(1.0);
    let inf = T::c(f64::INFINITY);
    let small = x < T::c(small);
    let xs = sel(small, x * T::c(up), x);
    let s = xs.sqrt();
    let r0 = one / s;
    let d = (-r0).mul_add(s, one);
    let e = s.mul_add(s, -xs);
    let t = (e * T::c(0.5)).mul_add(r0 * r0, d);
    let r = r0.mul_add(t, r0);
    let r = sel(small, r * T::c(back), r);
    let r = sel(x == T::c(0.0), inf, r);
    sel(x.abs() == inf, T::c(0.0), r)
}

#[inline(always)]
fn inv_sqrt64(x: f64) -> f64 {
    inv_sqrt(x, [INV_SQRT_SMALL, INV_SQRT_UP, INV_SQRT_BACK])
}

#[inline(always)]
fn inv_sqrt32(x: f32) -> f32 {
    inv_sqrt(x, [INV_SQRT_SMALL_F32, INV_SQRT_UP_F32, INV_SQRT_BACK_F32])
}

/// `x**-2` (`vmath::pow_const::inv_square`).
#[inline(always)]
fn inv_square(x: f64) -> f64 {
    let ax = x.abs();
    let f = sel(ax < INV_SQ_SMALL, INV_SQ_UP, 1.0);
    let f = sel(ax > INV_SQ_BIG, INV_SQ_DOWN, f);
    let xs = ax * f;
    let x2 = xs * xs;
    let x2l = xs.mul_add(xs, -x2);
    let r0 = 1.0 / x2;
    let d = (-r0).mul_add(x2, 1.0);
    let t = (-x2l).mul_add(r0, d);
    let r = r0.mul_add(t, r0);
    let r = r * (f * f);
    let r = sel(ax <= INV_SQ_TINY, f64::INFINITY, r);
    sel(ax >= INV_SQ_HUGE, 0.0, r)
}

/// `vmath::pow_const::inv_square_f32`: `x**-2` in f32, for |x| in its range.
#[inline(always)]
fn inv_square32(x: f32) -> f32 {
    let ax = x.abs();
    let x2 = ax * ax;
    let x2l = ax.mul_add(ax, -x2);
    let r0 = 1.0 / x2;
    let d = (-r0).mul_add(x2, 1.0);
    let t = (-x2l).mul_add(r0, d);
    r0.mul_add(t, r0)
}

// Where each f32 power is computed in f32 (`vmath::pow_const::pow_const_f32`).

#[inline(always)]
fn three_halves_ok(x: f32) -> bool {
    !(x > 0.0 && x < THREE_HALVES_TINY_F32 as f32)
}

#[inline(always)]
fn cube_ok(x: f32) -> bool {
    x.abs() >= CUBE_TINY_F32 as f32
}

#[inline(always)]
fn fourth_ok(x: f32) -> bool {
    x.abs() >= FOURTH_TINY_F32 as f32
}

#[inline(always)]
fn inv_sqrt_ok(_x: f32) -> bool {
    true
}

#[inline(always)]
fn inv_square_ok(x: f32) -> bool {
    let ax = x.abs();
    (ax >= INV_SQ_LOW_F32 as f32) & (ax <= INV_SQ_HIGH_F32 as f32)
}

// The f32 powers on the widened value (`vmath::pow_const::pow_const_widened`), rounded once by
// `widened`.

#[inline(always)]
fn three_halves_widened(x: f64) -> f64 {
    let r = x * x.sqrt();
    sel(x == f64::NEG_INFINITY, f64::INFINITY, r)
}

#[inline(always)]
fn cube_widened(x: f64) -> f64 {
    (x * x) * x
}

#[inline(always)]
fn fourth_widened(x: f64) -> f64 {
    let x2 = x * x;
    x2 * x2
}

#[inline(always)]
fn inv_sqrt_widened(x: f64) -> f64 {
    let r = 1.0 / x.sqrt();
    let r = sel(x == 0.0, f64::INFINITY, r);
    sel(x == f64::NEG_INFINITY, 0.0, r)
}

#[inline(always)]
fn inv_square_widened(x: f64) -> f64 {
    1.0 / (x * x)
}

#[inline(always)]
fn widened(x: f32, f: fn(f64) -> f64) -> f32 {
    f(f64::from(x)) as f32
}

/// One exponent's paths: f64 lanes by one path; f32 lanes in f32 where `$ok` (the chunk's test),
/// the others (in the general path) widened.
macro_rules! exponents {
    ($($name:ident: $f64:path, $f32:path, $ok:ident, $wide:ident;)*) => {
        $(
            pub(super) struct $name;

            impl Paths<f64> for $name {
                #[inline(always)]
                fn fast_ok(_x: f64) -> bool {
                    true
                }
                #[inline(always)]
                fn fast(x: f64) -> f64 {
                    $f64(x)
                }
                #[inline(always)]
                fn general(x: f64) -> f64 {
                    $f64(x)
                }
            }

            impl Paths<f32> for $name {
                #[inline(always)]
                fn fast_ok(x: f32) -> bool {
                    $ok(x)
                }
                #[inline(always)]
                fn fast(x: f32) -> f32 {
                    $f32(x)
                }
                #[inline(always)]
                fn general(x: f32) -> f32 {
                    sel($ok(x), $f32(x), widened(x, $wide))
                }
            }
        )*
    };
}

exponents! {
    ThreeHalves: three_halves::<f64>, three_halves::<f32>, three_halves_ok, three_halves_widened;
    Cube: cube::<f64>, cube::<f32>, cube_ok, cube_widened;
    Fourth: fourth::<f64>, fourth::<f32>, fourth_ok, fourth_widened;
    InvSqrt: inv_sqrt64, inv_sqrt32, inv_sqrt_ok, inv_sqrt_widened;
    InvSquare: inv_square, inv_square32, inv_square_ok, inv_square_widened;
}

levels! {
    three_halves64: f64, ThreeHalves;
    three_halves32: f32, ThreeHalves;
    cube64: f64, Cube;
    cube32: f32, Cube;
    fourth64: f64, Fourth;
    fourth32: f32, Fourth;
    inv_sqrt64: f64, InvSqrt;
    inv_sqrt32: f32, InvSqrt;
    inv_square64: f64, InvSquare;
    inv_square32: f32, InvSquare;
}
