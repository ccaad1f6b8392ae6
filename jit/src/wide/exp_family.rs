//! exp2, expm1, tanh, sinh and cosh at full width: `vmath::exp`'s exp2 and expm1 and
//! `vmath::hyperbolic` written per lane (the operations in the order the inline code emits them,
//! its constants, `mul_add` where it emits `fma`), compiled by `lanes.rs`'s loop for each level.
//! One algorithm for both types ([`Family`]): f64 on `vmath::exp::FAMILY` and
//! `vmath::hyperbolic::HYP`, f32 natively on `vmath::f32x4::FAMILY` and `vmath::f32x4::HYP`, as
//! the inline code computes each; but tanh is f64's only here (f32 tanh: `tanh32.rs`).
//!
//! Where the inline code branches per vector to a general path (exp2: |x| >= 1020, f32 125, or NaN;
//! expm1: x >= 708, f32 87, or NaN; sinh: |x| >= 708, f32 88; cosh: the same or NaN), the general
//! path gives the other lanes the fast path's bits, so the chunk of 16 lanes takes it instead; tanh
//! has no branch.

use super::lanes::{
    Lane, Paths, clamp, exp_arg, exp_general, exp_parts, map, poly_halves, poly2, scale, sel,
};
use crate::vmath::exp::{EXPM1_LOW, EXPM1_SMALL, ExpFamily, FAMILY as FAM64};
use crate::vmath::f32x4::{FAMILY as FAM32, HYP as HYP32};
use crate::vmath::hyperbolic::{
    COSH_K_MAX, HYP as HYP64, Hyp, RECIP_MAX, SINH_SMALL, TANH_ONE, TANH_P, TANH_SMALL,
};

/// One type's constants and polynomials (each polynomial split into even and odd halves by
/// `poly2`, whose sizes are const parameters).
trait Family: Lane {
    const FAM: &'static ExpFamily;
    const HYP: &'static Hyp;
    /// exp's `Q(r)` (`r2 = r²`).
    fn exp_q(r: Self, r2: Self) -> Self;
    /// The even and odd halves of exp's `Q` at `r2 = r²`.
    fn exp_q_halves(r2: Self) -> (Self, Self);
    /// `lanes::exp_parts` on this type's exp.
    fn exp_parts(x: Self) -> (Self, Self);
    /// `lanes::exp_general` on this type's exp.
    fn exp_general(x: Self) -> Self;
    /// expm1's `P(x)` (`x2 = x²`).
    fn expm1_p(x: Self, x2: Self) -> Self;
    /// sinh's `P(z)` (`z2 = z²`).
    fn sinh_p(z: Self, z2: Self) -> Self;
}

macro_rules! family {
    ($t:ty, $fam:expr, $hyp:expr, $q:literal $qo:literal, $m:literal $mo:literal,
     $sh:literal $sho:literal) => {
        impl Family for $t {
            const FAM: &'static ExpFamily = &$fam;
            const HYP: &'static Hyp = &$hyp;
            #[inline(always)]
            fn exp_q(r: $t, r2: $t) -> $t {
                poly2::<$t, $q, $qo>(r, r2, $fam.exp.q)
            }
            #[inline(always)]
            fn exp_q_halves(r2: $t) -> ($t, $t) {
                poly_halves::<$t, $q, $qo>(r2, $fam.exp.q)
            }
            #[inline(always)]
            fn exp_parts(x: $t) -> ($t, $t) {
                exp_parts::<$t, $q, $qo>($fam.exp, x)
            }
            #[inline(always)]
            fn exp_general(x: $t) -> $t {
                exp_general::<$t, $q, $qo>($fam.exp, x)
            }
            #[inline(always)]
            fn expm1_p(x: $t, x2: $t) -> $t {
                poly2::<$t, $m, $mo>(x, x2, $fam.expm1_p)
            }
            #[inline(always)]
            fn sinh_p(z: $t, z2: $t) -> $t {
                poly2::<$t, $sh, $sho>(z, z2, $hyp.sinh_p)
            }
        }
    };
}

family!(f64, FAM64, HYP64, 5 5, 5 5, 5 4);
family!(f32, FAM32, HYP32, 3 2, 3 2, 3 2);

/// `vmath::exp::exp_reduce` (no correction): `(k, e^r)`.
#[inline(always)]
fn exp_reduce<T: Family>(x: T) -> (T, T) {
    let (k, s) = T::exp_parts(x);
    (k, s + T::c(1.0))
}

/// `vmath::exp::exp2_parts`: `(k, p)` with `2^x = p·2^k`.
#[inline(always)]
fn exp2_parts<T: Family>(x: T) -> (T, T) {
    let c = T::FAM.exp;
    let k = x.round_ties_even();
    let r = x - k;
    let ln2 = T::c(c.ln2_hi);
    let t = r * ln2;
    let nt = -t;
    let e = r.mul_add(ln2, nt);
    let tl = r.mul_add(T::c(c.ln2_lo), e);
    // exp_poly(t)
    let t2 = t * t;
    let q = T::exp_q(t, t2);
    let s = t2.mul_add(q, t);
    let p = s + T::c(1.0);
    (k, p.mul_add(tl, p))
}

/// `vmath::hyperbolic::odd_poly`: `x + x³·P(x²)`, `q = P(z)` (`z = x²`).
#[inline(always)]
fn odd_poly<T: Lane>(x: T, z: T, q: T) -> T {
    let x3 = x * z;
    x3.mul_add(q, x)
}

/// `vmath::exp::expm1_fast`.
#[inline(always)]
fn expm1_fast<T: Family>(x: T) -> T {
    let x2 = x * x;
    let p = T::expm1_p(x, x2);
    let t = x.mul_add(p, T::c(0.5));
    let small = x2.mul_add(t, x);
    let low = T::c(EXPM1_LOW);
    let xc = sel(x < low, low, x);
    let (k, s) = T::exp_parts(xc);
    let tk = k.pow2();
    let tk1 = tk + T::c(-1.0);
    let big = tk.mul_add(s, tk1);
    let r = sel(x.abs() < T::c(EXPM1_SMALL), small, big);
    r.copysign(x)
}

/// `vmath::hyperbolic::exp_pair`'s `e/2 - (1/2)/e`.
#[inline(always)]
fn combine<T: Family>(e: T) -> T {
    let h = e * T::c(0.5);
    let m = T::c(RECIP_MAX);
    let ec = sel(e > m, m, e);
    let q = T::c(0.5) / ec;
    h - q
}

/// `vmath::hyperbolic::exp_pair`'s fast path.
#[inline(always)]
fn pair_fast<T: Family>(ax: T) -> T {
    let (k, p) = exp_reduce(ax);
    combine(p.ldexp_fast(k))
}

/// `vmath::hyperbolic::exp_pair`'s general path.
#[inline(always)]
fn pair_general<T: Family>(ax: T) -> T {
    let clamp = T::c(T::HYP.clamp);
    let a = sel(ax > clamp, clamp, ax);
    let (k, p) = exp_reduce(a);
    let r = combine(scale(p, k));
    let h = scale(p, k + T::c(-1.0));
    sel(a >= T::c(T::HYP.edge), h, r)
}

/// `vmath::hyperbolic::cosh_fast`.
#[inline(always)]
fn cosh_fast<T: Family>(a: T) -> T {
    let (k, r) = exp_arg(T::FAM.exp, a);
    let r2 = r * r;
    let (e, o) = T::exp_q_halves(r2);
    let nr = -r;
    let qp = o.mul_add(r, e);
    let qm = o.mul_add(nr, e);
    let sp = r2.mul_add(qp, r);
    let sm = r2.mul_add(qm, nr);
    let big = (k + T::c(-1.0)).pow2();
    let kmax = T::c(COSH_K_MAX);
    let kc = sel(k > kmax, kmax, k);
    let small = (-kc + T::c(-1.0)).pow2();
    let b = small.mul_add(sm, small);
    let t = big.mul_add(sp, b);
    big + t
}

/// `vmath::hyperbolic::cosh`'s general path: `e^a/2` for the lanes of |x| >= edge or NaN, the
/// others [`cosh_fast`]'s bits.
#[inline(always)]
fn cosh_general<T: Family>(ax: T) -> T {
    let clamp = T::c(T::HYP.clamp);
    let a = sel(ax > clamp, clamp, ax);
    let (k, p) = exp_reduce(a);
    let h = scale(p, k + T::c(-1.0));
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let edge = !(ax < T::c(T::HYP.edge));
    sel(edge, h, cosh_fast(ax))
}

/// `vmath::hyperbolic::sinh` with `big` the exp pair of |x|.
#[inline(always)]
fn sinh_with<T: Family>(x: T, big: T) -> T {
    let z = x * x;
    let small = odd_poly(x, z, T::sinh_p(z, z * z));
    let big = big.copysign(x);
    // UnorderedOrLessThan: NaN takes the polynomial
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let is_small = !(x.abs() >= T::c(SINH_SMALL));
    sel(is_small, small, big)
}

/// `vmath::hyperbolic::tanh` (f64).
#[inline(always)]
fn tanh_lane(x: f64) -> f64 {
    let ax = x.abs();
    let z = ax * ax;
    let small = odd_poly(ax, z, poly2::<f64, 6, 5>(z, z * z, &TANH_P));
    let a = sel(ax > TANH_ONE, TANH_ONE, ax);
    let a2 = a + a;
    let (k, s) = <f64 as Family>::exp_parts(a2);
    let tk = k.pow2();
    let e1 = tk.mul_add(s, tk + 1.0);
    let q = 2.0 / e1;
    let big = 1.0 - q;
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let is_small = !(ax >= TANH_SMALL);
    sel(is_small, small, big).or_sign(x)
}

pub(super) struct Exp2;
pub(super) struct Expm1;
pub(super) struct Tanh;
pub(super) struct Sinh;
pub(super) struct Cosh;

impl<T: Family> Paths<T> for Exp2 {
    #[inline(always)]
    fn fast_ok(x: T) -> bool {
        let e = T::FAM.exp2_edge;
        x * x < T::c(e * e)
    }
    #[inline(always)]
    fn fast(x: T) -> T {
        let (k, p) = exp2_parts(x);
        p.ldexp_fast(k)
    }
    #[inline(always)]
    fn general(x: T) -> T {
        let (lo, hi) = T::FAM.exp2_clamp;
        let x = clamp(x, lo, hi);
        let (k, p) = exp2_parts(x);
        scale(p, k)
    }
}

impl<T: Family> Paths<T> for Expm1 {
    #[inline(always)]
    fn fast_ok(x: T) -> bool {
        x < T::c(T::FAM.expm1_edge)
    }
    #[inline(always)]
    fn fast(x: T) -> T {
        expm1_fast(x)
    }
    #[inline(always)]
    fn general(x: T) -> T {
        let fast = expm1_fast(x);
        let e = T::exp_general(x) + T::c(-1.0);
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

impl<T: Family> Paths<T> for Sinh {
    #[inline(always)]
    fn fast_ok(x: T) -> bool {
        #[allow(clippy::neg_cmp_op_on_partial_ord)]
        let ok = !(x.abs() >= T::c(T::HYP.edge));
        ok
    }
    #[inline(always)]
    fn fast(x: T) -> T {
        sinh_with(x, pair_fast(x.abs()))
    }
    #[inline(always)]
    fn general(x: T) -> T {
        sinh_with(x, pair_general(x.abs()))
    }
}

impl<T: Family> Paths<T> for Cosh {
    #[inline(always)]
    fn fast_ok(x: T) -> bool {
        x.abs() < T::c(T::HYP.edge)
    }
    #[inline(always)]
    fn fast(x: T) -> T {
        cosh_fast(x.abs())
    }
    #[inline(always)]
    fn general(x: T) -> T {
        cosh_general(x.abs())
    }
}

super::lanes::levels! {
    exp2_64: f64, Exp2;
    exp2_32: f32, Exp2;
    expm1_64: f64, Expm1;
    expm1_32: f32, Expm1;
    tanh64: f64, Tanh;
    sinh64: f64, Sinh;
    sinh32: f32, Sinh;
    cosh64: f64, Cosh;
    cosh32: f32, Cosh;
}
