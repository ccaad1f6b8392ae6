//! pow by a literal exponent with its own code (`x**1.5`, `x**3`, `x**4`, `x**-0.5`, `x**-2`) at
//! full width: `vmath::pow_const` written for one lane (the same operations in the same order, its
//! constants, `mul_add` where it emits `fma`). f64 lanes follow its f64 code; f32 lanes are widened
//! to f64, computed as `pow_const_widened` computes them and rounded once to f32, as the inline code
//! does for each half of an F32X4. One path for every lane (selects, no branch), so every chunk
//! takes it.

use super::lanes::{Paths, levels, map, sel};
use crate::vmath::pow_const::{
    INV_SQ_BIG, INV_SQ_DOWN, INV_SQ_HUGE, INV_SQ_SMALL, INV_SQ_TINY, INV_SQ_UP, INV_SQRT_BACK,
    INV_SQRT_SMALL, INV_SQRT_UP,
};

/// `x**1.5` (`vmath::pow_const::three_halves`).
#[inline(always)]
fn three_halves(x: f64) -> f64 {
    let s = x.sqrt();
    let hi = x * s;
    let lo = x.mul_add(s, -hi);
    let e = (-s).mul_add(s, x);
    let t = (s * 0.5).mul_add(e, lo);
    let r = hi + t;
    sel((hi == f64::INFINITY) | (x == f64::NEG_INFINITY), f64::INFINITY, r)
}

/// `x**3` (`vmath::pow_const::cube`).
#[inline(always)]
fn cube(x: f64) -> f64 {
    let x2 = x * x;
    let x2l = x.mul_add(x, -x2);
    let h = x2 * x;
    let l = x2.mul_add(x, -h);
    let t = x2l.mul_add(x, l);
    let r = h + t;
    sel((h.abs() < f64::INFINITY) & (h != 0.0), r, h)
}

/// `x**4` (`vmath::pow_const::fourth`).
#[inline(always)]
fn fourth(x: f64) -> f64 {
    let x2 = x * x;
    let x2l = x.mul_add(x, -x2);
    let h = x2 * x2;
    let l = x2.mul_add(x2, -h);
    let t = (x2 + x2).mul_add(x2l, l);
    let r = h + t;
    sel((h.abs() < f64::INFINITY) & (h != 0.0), r, h)
}

/// `x**-0.5` (`vmath::pow_const::inv_sqrt`).
#[inline(always)]
fn inv_sqrt(x: f64) -> f64 {
    let small = x < INV_SQRT_SMALL;
    let xs = sel(small, x * INV_SQRT_UP, x);
    let s = xs.sqrt();
    let r0 = 1.0 / s;
    let d = (-r0).mul_add(s, 1.0);
    let e = s.mul_add(s, -xs);
    let t = (e * 0.5).mul_add(r0 * r0, d);
    let r = r0.mul_add(t, r0);
    let r = sel(small, r * INV_SQRT_BACK, r);
    let r = sel(x == 0.0, f64::INFINITY, r);
    sel(x.abs() == f64::INFINITY, 0.0, r)
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

/// The f32 forms on the widened value (`vmath::pow_const::pow_const_widened`), rounded once.
#[inline(always)]
fn widened(x: f32, f: fn(f64) -> f64) -> f32 {
    f(f64::from(x)) as f32
}

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

/// One exponent's paths: a single path for every lane.
macro_rules! exponents {
    ($($name:ident: $f64:ident, $f32:ident;)*) => {
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
                fn fast_ok(_x: f32) -> bool {
                    true
                }
                #[inline(always)]
                fn fast(x: f32) -> f32 {
                    widened(x, $f32)
                }
                #[inline(always)]
                fn general(x: f32) -> f32 {
                    widened(x, $f32)
                }
            }
        )*
    };
}

exponents! {
    ThreeHalves: three_halves, three_halves_widened;
    Cube: cube, cube_widened;
    Fourth: fourth, fourth_widened;
    InvSqrt: inv_sqrt, inv_sqrt_widened;
    InvSquare: inv_square, inv_square_widened;
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
