//! arcsin and arccos on F64X2 and F32X4 by the direct method (SLEEF's `xasin_u1`, `xacos_u1`,
//! `xasinf_u1`, `xacosf_u1`), with no division.
//!
//! **The kernel** (`parts`): with `a = |x|`, for `a < 1/2` `x2 = a²` and `y = a`, else
//! `x2 = (1 - a)/2` (exact) and `y = sqrt(x2)`, so that `asin(a) = y + u` in the first range and
//! `asin(a) = pi/2 - 2·(y + u)` in the second, with `u = y·x2·P(x2)`: SLEEF's minimax polynomial
//! (12 coefficients in f64, 5 in f32), split in even and odd halves in `x2²`, Horner with FMA. Both
//! ranges are computed in every lane and one is kept by a select.
//!
//! **The reconstruction** (`finish`): every case is `c - (s + t)` with `c` one of 0, pi/2, pi given
//! as `hi + lo`, `s` the leading term (`±y` or `±2y`) and `t` its correction (`±u` or `±2u`):
//! `h = hi - s` and its rounding error `(hi - h) - s` (exact: `|s| <= |hi|` or `hi = 0`), then
//! `h + ((err + lo) - t)`, so that the constant and the leading term add without losing the tail.
//!
//! - **arcsin(x)** = the first range's `y + u` (`c = 0`) or `pi/2 - 2(y + u)`, with the sign of x
//!   (so ±0 stays ±0 and arcsin(±1) is ±pi/2 rounded).
//! - **arccos(x)** = `pi/2 - (x + copysign(u, x))` in the first range; in the second `2(y + u)`
//!   where `x > 0` (arccos(1) = +0) and `pi - 2(y + u)` where `x < 0` (arccos(-1) = pi rounded).
//!
//! |x| > 1 (NaN: libm's `INVALID`) and NaN (itself) are applied on a branch taken only by a vector
//! holding one. f32 is computed in f32. Coefficients: SLEEF (`sleefdp.c`, `sleefsp.c`, Naoki
//! Shibata and contributors, Boost Software License 1.0). Measured maxima are in `math.rs`'s bounds;
//! `wide/asin.rs` computes the same operations per lane at full width.

use super::Vb;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// The constants of one type's arcsin and arccos (f32 ones written as the f32 values, widened
/// exactly).
pub(crate) struct AsinConsts {
    /// `P(x2)`, the constant term first.
    pub poly: &'static [f64],
    /// pi/2 and pi rounded, and their tails.
    pub pio2: [f64; 2],
    pub pi: [f64; 2],
}

/// The f64 constants (`xasin_u1`).
pub(crate) const F64: AsinConsts = AsinConsts {
    poly: &[
        0.1666666666666497543e+0,
        0.7500000000378581611e-1,
        0.4464285681377102438e-1,
        0.3038195928038132237e-1,
        0.2237176181932048341e-1,
        0.1735956991223614604e-1,
        0.1388715184501609218e-1,
        0.1215360525577377331e-1,
        0.6606077476277170610e-2,
        0.1929045477267910674e-1,
        -0.1581918243329996643e-1,
        0.3161587650653934628e-1,
    ],
    pio2: [1.5707963267948966, 6.123233995736766e-17],
    pi: [3.141592653589793, 1.2246467991473532e-16],
};

/// The f32 constants (`xasinf_u1`).
pub(crate) const F32: AsinConsts = AsinConsts {
    poly: &[
        0.1666677296e+0_f32 as f64,
        0.7495029271e-1_f32 as f64,
        0.4547423869e-1_f32 as f64,
        0.2424046025e-1_f32 as f64,
        0.4197454825e-1_f32 as f64,
    ],
    pio2: [1.5707963705062866, -4.371139e-8_f32 as f64],
    pi: [3.1415927410125732, -8.742278e-8_f32 as f64],
};

fn consts(v: &Vb<'_, '_>) -> &'static AsinConsts {
    if v.f32 { &F32 } else { &F64 }
}

/// `(o, y, u)` from `|x|`: the first range's lane mask, the leading term and its correction.
fn parts(v: &mut Vb<'_, '_>, ax: Value) -> (Value, Value, Value) {
    let k = consts(v);
    let o = v.cmpc(FloatCC::LessThan, ax, 0.5);
    let sq = v.mul(ax, ax);
    let one = v.c(1.0);
    let d = v.sub(one, ax);
    let d = v.mulc(d, 0.5);
    let x2 = v.sel(o, sq, d);
    let r = v.sqrt(x2);
    let y = v.sel(o, ax, r);
    let x4 = v.mul(x2, x2);
    let p = v.poly2(x2, x4, k.poly);
    let w = v.mul(x2, y);
    let u = v.mul(p, w);
    (o, y, u)
}

/// `c - (s + t)` with `c = hi + lo` (see the module docs).
fn finish(v: &mut Vb<'_, '_>, hi: Value, lo: Value, s: Value, t: Value) -> Value {
    let h = v.sub(hi, s);
    let e = v.sub(hi, h);
    let e = v.sub(e, s);
    let e = v.add(e, lo);
    let e = v.sub(e, t);
    v.add(h, e)
}

/// The values of arcsin and arccos where |x| > 1 (libm's `INVALID`) or x is NaN (itself).
fn domain(v: &mut Vb<'_, '_>, x: Value, ax: Value, fast: Value) -> Value {
    let out = v.cmpc(FloatCC::LessThanOrEqual, ax, 1.0);
    let out = v.not(out);
    v.guard(out, fast, |v| {
        let out = v.cmpc(FloatCC::GreaterThan, ax, 1.0);
        let r = v.selc(out, super::INVALID, fast);
        let nan = v.cmp(FloatCC::Unordered, x, x);
        v.sel(nan, x, r)
    })
}

/// arcsin on F64X2 or F32X4.
pub(crate) fn asin(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let k = consts(v);
    let ax = v.abs(x);
    let (o, y, u) = parts(v, ax);
    let y2 = v.add(y, y);
    let u2 = v.add(u, u);
    let ny = v.neg(y);
    let nu = v.neg(u);
    let s = v.sel(o, ny, y2);
    let t = v.sel(o, nu, u2);
    let hi = v.c(k.pio2[0]);
    let hi = v.selc(o, 0.0, hi);
    let lo = v.c(k.pio2[1]);
    let lo = v.selc(o, 0.0, lo);
    let r = finish(v, hi, lo, s, t);
    let r = v.copysign(r, x);
    domain(v, x, ax, r)
}

/// arccos on F64X2 or F32X4.
pub(crate) fn acos(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let k = consts(v);
    let ax = v.abs(x);
    let (o, y, u) = parts(v, ax);
    let neg = v.cmpc(FloatCC::LessThan, x, 0.0);
    let y2 = v.add(y, y);
    let u2 = v.add(u, u);
    let ny2 = v.neg(y2);
    let nu2 = v.neg(u2);
    let sl = v.sel(neg, y2, ny2);
    let tl = v.sel(neg, u2, nu2);
    let su = v.copysign(u, x);
    let s = v.sel(o, x, sl);
    let t = v.sel(o, su, tl);
    let zero = v.c(0.0);
    let hi = v.selc(neg, k.pi[0], zero);
    let hi = v.selc(o, k.pio2[0], hi);
    let lo = v.selc(neg, k.pi[1], zero);
    let lo = v.selc(o, k.pio2[1], lo);
    let r = finish(v, hi, lo, s, t);
    domain(v, x, ax, r)
}
