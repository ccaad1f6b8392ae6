//! pow by a literal exponent with its own code (`x**1.5`, `x**3`, `x**4`, `x**-0.5`, `x**-2`) at
//! full width: `vmath::pow_const` written for one lane (the same operations in the same order, its
//! constants, `mul_add` where it emits `fma`). f64 lanes follow its f64 code, one path for every
//! lane (selects, no branch), so every chunk takes it. f32 lanes follow `pow_const_f32`: the f64
//! code's operations in f32, on three paths: unscaled (the fastest, for chunks with no lane near
//! the ends of the range: `Plan`'s `small` and `big`; `x**-2`: |x| outside [2^-40, 2^60]),
//! scaled (the fast path, for chunks whose results are all normal), and scaled but for the lanes
//! whose results are in the subnormals, computed on the widened value as `pow_const_widened`
//! computes them and rounded once to f32 (the general path). `x**-0.5` scales in its one path.

use super::lanes::{Lane, Paths, levels, map, sel};
use crate::vmath::pow_const::{
    CUBE_F32, FOURTH_F32, INV_SQ_F32, INV_SQ_F64, INV_SQ_WIDEN_F32, INV_SQRT_BACK, INV_SQRT_BACK_F32,
    INV_SQRT_SMALL, INV_SQRT_SMALL_F32, INV_SQRT_UP, INV_SQRT_UP_F32, InvSquarePlan, Plan, THREE_HALVES_F32,
    THREE_HALVES_F64,
};

/// `x**1.5` (`vmath::pow_const::three_halves`).
#[inline(always)]
fn three_halves<T: Lane>(x: T) -> T {
    let s = x.sqrt();
    let hi = x * s;
    let lo = x.mul_add(s, -hi);
    let e = (-s).mul_add(s, x);
    let t = (s * T::c(0.5)).mul_add(e, lo);
    let r = (hi + t).or_sign(hi);
    let inf = T::c(f64::INFINITY);
    sel((hi == inf) | (x == -inf), inf, r)
}

#[inline(always)]
fn three_halves64(x: f64) -> f64 {
    scaled(x, &THREE_HALVES_F64, three_halves::<f64>)
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
    let r = sel(small, r * T::c(back), r).or_sign(s);
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

/// `x**-2` (`vmath::pow_const::inv_square`), scaled as `c` says.
#[inline(always)]
fn inv_square<T: Lane>(x: T, c: &InvSquarePlan) -> T {
    let ax = x.abs();
    let f = sel(ax < T::c(c.small), T::c(c.up), T::c(1.0));
    let f = sel(ax > T::c(c.big), T::c(c.down), f);
    let r = inv_square_core(ax * f) * (f * f);
    let r = sel(ax <= T::c(c.tiny), T::c(f64::INFINITY), r);
    sel(ax >= T::c(c.huge), T::c(0.0), r)
}

#[inline(always)]
fn inv_square64(x: f64) -> f64 {
    inv_square(x, &INV_SQ_F64)
}

#[inline(always)]
fn inv_square32(x: f32) -> f32 {
    inv_square(x, &INV_SQ_F32)
}

/// `vmath::pow_const::inv_square_core`: `1/(xs·xs)` with the residuals.
#[inline(always)]
fn inv_square_core<T: Lane>(xs: T) -> T {
    let one = T::c(1.0);
    let x2 = xs * xs;
    let x2l = xs.mul_add(xs, -x2);
    let r0 = one / x2;
    let d = (-r0).mul_add(x2, one);
    let t = (-x2l).mul_add(r0, d);
    r0.mul_add(t, r0)
}

/// `vmath::pow_const::scaled`: `f(x)`, but where |x| is below `plan.small`, `f(x·up)·back`, and
/// where it is at least `plan.big`, `f(x·down)·grow`.
#[inline(always)]
fn scaled<T: Lane>(x: T, plan: &Plan, f: impl Fn(T) -> T) -> T {
    let ax = x.abs();
    let small = ax < T::c(plan.small);
    let big = ax >= T::c(plan.big);
    let one = T::c(1.0);
    let fx = sel(small, T::c(plan.up), sel(big, T::c(plan.down), one));
    let fr = sel(small, T::c(plan.back), sel(big, T::c(plan.grow), one));
    f(x * fx) * fr
}

// f32 lanes (`vmath::pow_const::pow_const_f32`): each power unscaled, for chunks with no lane near
// the ends of its range (`unscaled`); scaled (`scaled32`) for chunks whose results are all normal
// (`normal`); and widened where the result is in the subnormals (`general32`).

/// A power with a [`Plan`] (`x**1.5`, `x**3`, `x**4`): its code, its f32 plan, and its form on the
/// widened value (`vmath::pow_const::pow_const_widened`).
trait Planned {
    const PLAN: Plan;
    /// Whether the plan's small-base test reads the base itself (`x**1.5`: a negative base is NaN
    /// unscaled), rather than |x|.
    const SIGNED: bool;
    fn code<T: Lane>(x: T) -> T;
    fn widened(x: f64) -> f64;
}

impl Planned for ThreeHalves {
    const PLAN: Plan = THREE_HALVES_F32;
    const SIGNED: bool = true;
    #[inline(always)]
    fn code<T: Lane>(x: T) -> T {
        three_halves(x)
    }
    #[inline(always)]
    fn widened(x: f64) -> f64 {
        x * x.sqrt()
    }
}

impl Planned for Cube {
    const PLAN: Plan = CUBE_F32;
    const SIGNED: bool = false;
    #[inline(always)]
    fn code<T: Lane>(x: T) -> T {
        cube(x)
    }
    #[inline(always)]
    fn widened(x: f64) -> f64 {
        (x * x) * x
    }
}

impl Planned for Fourth {
    const PLAN: Plan = FOURTH_F32;
    const SIGNED: bool = false;
    #[inline(always)]
    fn code<T: Lane>(x: T) -> T {
        fourth(x)
    }
    #[inline(always)]
    fn widened(x: f64) -> f64 {
        let x2 = x * x;
        x2 * x2
    }
}

/// The value a plan's small-base test reads: the base, or |x|.
#[inline(always)]
fn small_base<P: Planned>(x: f32) -> f32 {
    if P::SIGNED { x } else { x.abs() }
}

#[inline(always)]
fn nonzero_below(t: f32, c: f64) -> bool {
    (t > 0.0) & (t < c as f32)
}

/// `vmath::pow_const::edge`: not a lane the plan scales (the base, or |x|, in (0, `small`); |x|
/// from `big` on).
#[inline(always)]
fn unscaled<P: Planned>(x: f32) -> bool {
    !(nonzero_below(small_base::<P>(x), P::PLAN.small) | (x.abs() >= P::PLAN.big as f32))
}

/// Not a lane computed widened (its result in or at the edge of the subnormals).
#[inline(always)]
fn normal<P: Planned>(x: f32) -> bool {
    !nonzero_below(small_base::<P>(x), P::PLAN.widen)
}

#[inline(always)]
fn scaled32<P: Planned>(x: f32) -> f32 {
    scaled(x, &P::PLAN, P::code::<f32>)
}

#[inline(always)]
fn general32<P: Planned>(x: f32) -> f32 {
    sel(normal::<P>(x), scaled32::<P>(x), widened(x, P::widened))
}

#[inline(always)]
fn inv_square_fast(x: f32) -> f32 {
    inv_square_core(x.abs())
}

#[inline(always)]
fn inv_square_unscaled(x: f32) -> bool {
    let ax = x.abs();
    !((ax < INV_SQ_F32.small as f32) | (ax > INV_SQ_F32.big as f32))
}

#[inline(always)]
fn inv_square_normal(x: f32) -> bool {
    let ax = x.abs();
    !((ax > INV_SQ_WIDEN_F32 as f32) & (ax < f32::INFINITY))
}

#[inline(always)]
fn inv_square_general(x: f32) -> f32 {
    let w = widened(x, |x| 1.0 / (x * x));
    sel(inv_square_normal(x), inv_square32(x), w)
}

/// An f32 power on the widened value, rounded once.
#[inline(always)]
fn widened(x: f32, f: fn(f64) -> f64) -> f32 {
    f(f64::from(x)) as f32
}

/// One exponent's paths: f64 lanes by one path; f32 lanes by the f32 code unscaled in chunks where
/// every lane allows it (the fastest path), else scaled where every lane's result is normal (the
/// fast path), else scaled and widened lane by lane (the general path).
macro_rules! exponents {
    ($($name:ident: $f64:path, [$ok0:path, $f0:path], [$ok1:path, $f1:path], $general:path;)*) => {
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
                fn fastest_ok(x: f32) -> bool {
                    $ok0(x)
                }
                #[inline(always)]
                fn fastest(x: f32) -> f32 {
                    $f0(x)
                }
                #[inline(always)]
                fn fast_ok(x: f32) -> bool {
                    $ok1(x)
                }
                #[inline(always)]
                fn fast(x: f32) -> f32 {
                    $f1(x)
                }
                #[inline(always)]
                fn general(x: f32) -> f32 {
                    $general(x)
                }
            }
        )*
    };
}

#[inline(always)]
fn always(_x: f32) -> bool {
    true
}

exponents! {
    ThreeHalves: three_halves64, [unscaled::<ThreeHalves>, three_halves::<f32>],
        [normal::<ThreeHalves>, scaled32::<ThreeHalves>], general32::<ThreeHalves>;
    Cube: cube::<f64>, [unscaled::<Cube>, cube::<f32>], [normal::<Cube>, scaled32::<Cube>],
        general32::<Cube>;
    Fourth: fourth::<f64>, [unscaled::<Fourth>, fourth::<f32>], [normal::<Fourth>, scaled32::<Fourth>],
        general32::<Fourth>;
    InvSqrt: inv_sqrt64, [always, inv_sqrt32], [always, inv_sqrt32], inv_sqrt32;
    InvSquare: inv_square64, [inv_square_unscaled, inv_square_fast], [inv_square_normal, inv_square32],
        inv_square_general;
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
