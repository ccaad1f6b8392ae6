//! hypot on F64X2 (f32 widened to it and rounded once, see [`crate::math`]).
//!
//! Method: `big = max(|x|, |y|)`, `small = min(|x|, |y|)` (lane selects; a NaN lane keeps both
//! values, so it propagates), both scaled by 2^-600 where `big > 2^500` and by 2^600 where
//! `big < 2^-500` (subnormals included), so that the squares neither overflow nor lose bits; then
//! `sqrt(fma(big, big, small²))` scaled back, the scalings exact. The sum of squares is within one
//! rounding of `small²` and one of the `fma`, together below 1 ULP of the sum, half an ULP of its
//! square root; with the root's rounding the result is within 1 ULP of the correctly rounded value.
//! C99's special case by a lane select: an infinite operand gives +inf even if the other is NaN;
//! zeros and NaN follow from the arithmetic. The scalings are by 1 where `big` is within
//! [TINY, HUGE]: a vector whose lanes all are (or are NaN) skips them, a branch to the scaled path
//! taken only for the others, the same bits either way (so the wide routine's one path per lane
//! gives them too). Measured against glibc over the sweeps of `tests/accuracy.rs`:
//! max 1 ULP.
//!
//! f32 values widened to F64X2 ([`hypot_widened`]) skip the scaling: a finite f32 is below 2^128,
//! its square far from f64's overflow, and a nonzero one at least 2^-149, its square far above
//! f64's subnormals, so `big` is never above [`HUGE`] and below [`TINY`] only as zero, where the
//! scaling leaves zeros zero: the scalings are the identity on such lanes, and skipping them gives
//! the same bits, 9 operations fewer a vector.

use super::Vb;
use cranelift_codegen::ir::condcodes::FloatCC;
use cranelift_codegen::ir::{InstBuilder, Value};

/// Beyond these magnitudes of `big` the operands are scaled by [`SCALE_DOWN`] or [`SCALE_UP`].
pub(crate) const HUGE: f64 = 3.273390607896142e150; // 2^500
pub(crate) const TINY: f64 = 3.054936363499605e-151; // 2^-500
pub(crate) const SCALE_DOWN: f64 = 2.409919865102884e-181; // 2^-600
pub(crate) const SCALE_UP: f64 = 4.149515568880993e180; // 2^600

pub(crate) fn hypot(v: &mut Vb<'_, '_>, x: Value, y: Value) -> Value {
    use FloatCC::*;
    let (ax, ay, big, small) = ordered(v, x, y);
    // where every lane's `big` is within [TINY, HUGE] (or NaN) the scalings are by 1: the root
    // alone, the same bits; a vector with a lane outside takes the scaled path (a branch)
    let fast = root(v, ax, ay, big, small);
    let huge = v.cmpc(GreaterThan, big, HUGE);
    let tiny = v.cmpc(LessThan, big, TINY);
    let edge = v.or(huge, tiny);
    v.guard_shared(edge, fast, |v| {
        let one = v.c(1.0);
        let s = v.selc(tiny, SCALE_UP, one);
        let s = v.selc(huge, SCALE_DOWN, s);
        let back = v.selc(tiny, SCALE_DOWN, one);
        let back = v.selc(huge, SCALE_UP, back);
        let b = v.mul(big, s);
        let sm = v.mul(small, s);
        let h = root(v, ax, ay, b, sm);
        v.mul(h, back)
    })
}

/// `sqrt(fma(big, big, small²))`, +inf where `ax` or `ay` is infinite (C99: even for a NaN other).
fn root(v: &mut Vb<'_, '_>, ax: Value, ay: Value, big: Value, small: Value) -> Value {
    use FloatCC::*;
    let s2 = v.mul(small, small);
    let sum = v.fma(big, big, s2);
    let r = v.b.ins().sqrt(sum);
    let xi = v.cmpc(Equal, ax, f64::INFINITY);
    let yi = v.cmpc(Equal, ay, f64::INFINITY);
    let inf = v.or(xi, yi);
    v.selc(inf, f64::INFINITY, r)
}

/// [`hypot`] of f32 values widened to f64 (see the module's note): the same bits without the
/// scaling.
pub(crate) fn hypot_widened(v: &mut Vb<'_, '_>, x: Value, y: Value) -> Value {
    let (ax, ay, big, small) = ordered(v, x, y);
    root(v, ax, ay, big, small)
}

/// `(|x|, |y|, big, small)`: the magnitudes, the larger and the smaller (a NaN lane keeps both).
fn ordered(v: &mut Vb<'_, '_>, x: Value, y: Value) -> (Value, Value, Value, Value) {
    let ax = v.abs(x);
    let ay = v.abs(y);
    let ge = v.cmp(FloatCC::GreaterThanOrEqual, ax, ay);
    let big = v.sel(ge, ax, ay);
    let small = v.sel(ge, ay, ax);
    (ax, ay, big, small)
}
