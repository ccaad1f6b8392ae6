//! exp2, expm1, tanh, sinh and cosh at full width: `vmath::exp`'s exp2 and expm1 and
//! `vmath::hyperbolic` written per lane (the operations in the order the inline code emits them,
//! its constants, `mul_add` where it emits `fma`), compiled by `lanes.rs`'s loop for each level.
//! f32 is the f64 algorithm on the widened lane, rounded once, as the inline code computes it.
//!
//! Where the inline code branches per vector to a general path (exp2: |x| >= 1020 or NaN; expm1:
//! x >= 708 or NaN; sinh: |x| >= 708; cosh: |x| >= 708 or NaN), the general path gives the other
//! lanes the fast path's bits, so the chunk of 16 lanes takes it instead; tanh has no branch.

use super::lanes::{
    Lane, Paths, clamp, exp_general, exp_parts, exp_reduce, map, poly2, scale, sel, widened_f32,
};
use crate::vmath::exp::{EXP2_EDGE, EXPM1_EDGE, EXPM1_LOW, EXPM1_P, EXPM1_SMALL, F64 as EXP64};
use crate::vmath::hyperbolic::{HYP_CLAMP, HYP_EDGE, SINH_P, SINH_SMALL, TANH_ONE, TANH_P, TANH_SMALL};

/// `vmath::exp::exp2_parts`: `(k, p)` with `2^x = p·2^k`.
#[inline(always)]
fn exp2_parts(x: f64) -> (f64, f64) {
    let k = x.round_ties_even();
    let r = x - k;
    let t = r * EXP64.ln2_hi;
    let nt = -t;
    let e = r.mul_add(EXP64.ln2_hi, nt);
    let tl = r.mul_add(EXP64.ln2_lo, e);
    // exp_poly(t)
    let t2 = t * t;
    let q = poly2::<f64, 5, 5>(t, t2, EXP64.q);
    let s = t2.mul_add(q, t);
    let p = s + 1.0;
    (k, p.mul_add(tl, p))
}

/// `vmath::hyperbolic::odd_poly`: `x + x³·P(x²)`.
#[inline(always)]
fn odd_poly<const E: usize, const O: usize>(x: f64, z: f64, p: &[f64]) -> f64 {
    let z2 = z * z;
    let q = poly2::<f64, E, O>(z, z2, p);
    let x3 = x * z;
    x3.mul_add(q, x)
}

/// `vmath::exp::expm1_fast`.
#[inline(always)]
fn expm1_fast(x: f64) -> f64 {
    let x2 = x * x;
    let p = poly2::<f64, 5, 5>(x, x2, &EXPM1_P);
    let t = x.mul_add(p, 0.5);
    let small = x2.mul_add(t, x);
    let xc = sel(x < EXPM1_LOW, EXPM1_LOW, x);
    let (k, s) = exp_parts::<f64, 5, 5>(&EXP64, xc);
    let tk = k.pow2();
    let tk1 = tk + -1.0;
    let big = tk.mul_add(s, tk1);
    let r = sel(x.abs() < EXPM1_SMALL, small, big);
    r.copysign(x)
}

/// `vmath::hyperbolic::exp_pair`'s `e/2 ± (1/2)/e`.
#[inline(always)]
fn combine(e: f64, plus: bool) -> f64 {
    let h = e * 0.5;
    let q = 0.5 / e;
    if plus { h + q } else { h - q }
}

/// `vmath::hyperbolic::exp_pair`'s fast path.
#[inline(always)]
fn pair_fast(ax: f64, plus: bool) -> f64 {
    let (k, p) = exp_reduce::<f64, 5, 5>(&EXP64, ax);
    combine(p.ldexp_fast(k), plus)
}

/// `vmath::hyperbolic::exp_pair`'s general path.
#[inline(always)]
fn pair_general(ax: f64, plus: bool) -> f64 {
    let a = sel(ax > HYP_CLAMP, HYP_CLAMP, ax);
    let (k, p) = exp_reduce::<f64, 5, 5>(&EXP64, a);
    let r = combine(scale(p, k), plus);
    let h = scale(p, k + -1.0);
    sel(a >= HYP_EDGE, h, r)
}

/// `vmath::hyperbolic::sinh` with `big` the exp pair of |x|.
#[inline(always)]
fn sinh_with(x: f64, big: f64) -> f64 {
    let z = x * x;
    let small = odd_poly::<5, 4>(x, z, &SINH_P);
    let big = big.copysign(x);
    // UnorderedOrLessThan: NaN takes the polynomial
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let is_small = !(x.abs() >= SINH_SMALL);
    sel(is_small, small, big)
}

/// `vmath::hyperbolic::tanh`.
#[inline(always)]
fn tanh_lane(x: f64) -> f64 {
    let z = x * x;
    let small = odd_poly::<6, 5>(x, z, &TANH_P);
    let ax = x.abs();
    let a = sel(ax > TANH_ONE, TANH_ONE, ax);
    let a2 = a + a;
    let (k, p) = exp_reduce::<f64, 5, 5>(&EXP64, a2);
    let e = p.ldexp_fast(k);
    let e1 = e + 1.0;
    let q = 2.0 / e1;
    let big = 1.0 - q;
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let is_small = !(ax >= TANH_SMALL);
    sel(is_small, small, big).copysign(x)
}

pub(super) struct Exp2;
pub(super) struct Expm1;
pub(super) struct Tanh;
pub(super) struct Sinh;
pub(super) struct Cosh;

impl Paths<f64> for Exp2 {
    #[inline(always)]
    fn fast_ok(x: f64) -> bool {
        x * x < EXP2_EDGE * EXP2_EDGE
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        let (k, p) = exp2_parts(x);
        p.ldexp_fast(k)
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        let x = clamp(x, -1080.0, 1025.0);
        let (k, p) = exp2_parts(x);
        scale(p, k)
    }
}

impl Paths<f64> for Expm1 {
    #[inline(always)]
    fn fast_ok(x: f64) -> bool {
        x < EXPM1_EDGE
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        expm1_fast(x)
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        let fast = expm1_fast(x);
        let e = exp_general::<f64, 5, 5>(&EXP64, x) + -1.0;
        sel(Self::fast_ok(x), fast, e)
    }
}

impl Paths<f64> for Tanh {
    #[inline(always)]
    fn fast_ok(_: f64) -> bool {
        true
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        tanh_lane(x)
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        tanh_lane(x)
    }
}

impl Paths<f64> for Sinh {
    #[inline(always)]
    fn fast_ok(x: f64) -> bool {
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let ok = !(x.abs() >= HYP_EDGE);
        ok
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        sinh_with(x, pair_fast(x.abs(), false))
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        sinh_with(x, pair_general(x.abs(), false))
    }
}

impl Paths<f64> for Cosh {
    #[inline(always)]
    fn fast_ok(x: f64) -> bool {
        x.abs() < HYP_EDGE
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        pair_fast(x.abs(), true)
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        pair_general(x.abs(), true)
    }
}

widened_f32!(Exp2 Expm1 Tanh Sinh Cosh);

super::lanes::levels! {
    exp2_64: f64, Exp2;
    exp2_32: f32, Exp2;
    expm1_64: f64, Expm1;
    expm1_32: f32, Expm1;
    tanh64: f64, Tanh;
    tanh32: f32, Tanh;
    sinh64: f64, Sinh;
    sinh32: f32, Sinh;
    cosh64: f64, Cosh;
    cosh32: f32, Cosh;
}
