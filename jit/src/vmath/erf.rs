//! erf and erfc on F64X2.
//!
//! Method: fdlibm's `s_erf.c` (FreeBSD msun, via musl and the Rust `libm` crate, the interpreter's
//! own functions), its ranges of |x| computed where a lane of the vector needs them and selected
//! lane by lane:
//!
//! - |x| < 0.84375: `erf(x) = x + x·P(x²)/Q(x²)` (2^-28 > |x|: `(8x + c·x)/8`, which keeps the
//!   subnormals); `erfc(x) = 1 - erf(x)` for x < 1/4, else `0.5 - (x - 0.5 + x·P/Q)`;
//! - |x| in [0.84375, 1.25): `s = |x| - 1`, `erf(|x|) = erx + P1(s)/Q1(s)`;
//! - |x| in [1.25, 28): `erfc(|x|) = exp(-x² - 0.5625 + R(1/x²)/S(1/x²)) / |x|`, with one rational
//!   for |x| < 1/0.35 and another above; `erf = 1 - erfc`, `erfc(-|x|) = 2 - erfc(|x|)`.
//!
//! fdlibm's coefficients, unchanged. What differs from fdlibm, so that one vector needs two divisions
//! and one exp rather than five and two: the three ranges' numerators and denominators are selected
//! lane by lane before one division; `R(1/z)/S(1/z)` (z = x²) is evaluated as the same ratio of the
//! reversed polynomials `z^8·R(1/z) / z^8·S(1/z)` in z, which needs no `1/x²` (all of R's
//! coefficients have one sign, so Horner's rule in z is well conditioned); and the exp's argument
//! `-x² - 0.5625 + R/S` is carried as a double-double (the exact product `x·x` by FMA, two error-free
//! additions) into the vector exp's correction term, where fdlibm splits x and calls exp twice.
//! erfc's tail then divides by |x| and scales by `2^k` in one correction step (see [`tail`]). A
//! vector whose lanes are all below 0.84375 computes that range alone (a rational, no exp); any
//! other takes the general path, which computes each other range's rational, and the exp, only
//! when one of its lanes lies there (see [`parts`]).
//! |x| is clamped to 28, where erfc has underflowed to 0 (so ±inf needs no lane of its own), and NaN
//! runs through the arithmetic.
//!
//! Measured against the `libm` crate (the interpreter's) over a million points in [-6, 6], [-28, 28]
//! and log-uniform magnitudes, with and without FMA: erf max 1 ULP, erfc max 3 ULP. Against mpmath
//! (120 bits, 15000 points over the ranges): erf max 0.83 ULP (libm 0.83), erfc max 1.58 ULP in
//! [0.25, 0.84375) (fdlibm's formula there; libm the same), 1.48 in the middle range (libm 1.87),
//! 1.23 in the tail (libm 2.44): the distance of 3 from libm is libm's error more than kiln's.

use super::Vb;
use super::exp::exp_parts;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// erf(1) rounded to 24 bits (fdlibm's `erx`).
const ERX: f64 = 8.45062911510467529297e-01;
/// `8·(2/sqrt(pi) - 1)`, for the tiny |x| of erf.
const EFX8: f64 = 1.02703333676410069053e+00;
/// |x| < 0.84375: `P(z)`, `Q(z)` (ascending, z = x²).
const PP: [f64; 5] = [
    1.28379167095512558561e-01,
    -3.25042107247001499370e-01,
    -2.84817495755985104766e-02,
    -5.77027029648944159157e-03,
    -2.37630166566501626084e-05,
];
const QQ: [f64; 6] = [
    1.0,
    3.97917223959155352819e-01,
    6.50222499887672944485e-02,
    5.08130628187576562776e-03,
    1.32494738004321644526e-04,
    -3.96022827877536812320e-06,
];
/// |x| in [0.84375, 1.25): `P1(s)`, `Q1(s)` (ascending, s = |x| - 1).
const PA: [f64; 7] = [
    -2.36211856075265944077e-03,
    4.14856118683748331666e-01,
    -3.72207876035701323847e-01,
    3.18346619901161753674e-01,
    -1.10894694282396677476e-01,
    3.54783043256182359371e-02,
    -2.16637559486879084300e-03,
];
const QA: [f64; 7] = [
    1.0,
    1.06420880400844228286e-01,
    5.40397917702171048937e-01,
    7.18286544141962662868e-02,
    1.26171219808761642112e-01,
    1.36370839120290507362e-02,
    1.19844998467991074170e-02,
];
/// |x| in [1.25, 1/0.35): fdlibm's `R1(s)` (degree 7) and `S1(s)` (degree 8) in s = 1/x², reversed
/// into polynomials in z = x² (ascending): `z^7·R1(1/z)` and `z^8·S1(1/z)`; the numerator times z
/// over the denominator is R1/S1.
const RA_REV: [f64; 8] = [
    -9.81432934416914548592e+00,
    -8.12874355063065934246e+01,
    -1.84605092906711035994e+02,
    -1.62396669462573470355e+02,
    -6.23753324503260060396e+01,
    -1.05586262253232909814e+01,
    -6.93858572707181764372e-01,
    -9.86494403484714822705e-03,
];
const SA_REV: [f64; 9] = [
    -6.04244152148580987438e-02,
    6.57024977031928170135e+00,
    1.08635005541779435134e+02,
    4.29008140027567833386e+02,
    6.45387271733267880336e+02,
    4.34565877475229228821e+02,
    1.37657754143519042600e+02,
    1.96512716674392571292e+01,
    1.0,
];
/// |x| in [1/0.35, 28): `R2` (degree 6) and `S2` (degree 7) reversed the same way: `z^6·R2(1/z)`,
/// `z^7·S2(1/z)`.
const RB_REV: [f64; 7] = [
    -4.83519191608651397019e+02,
    -1.02509513161107724954e+03,
    -6.37566443368389627722e+02,
    -1.60636384855821916062e+02,
    -1.77579549177547519889e+01,
    -7.99283237680523006574e-01,
    -9.86494292470009928597e-03,
];
const SB_REV: [f64; 8] = [
    -2.24409524465858183362e+01,
    4.74528541206955367215e+02,
    2.55305040643316442583e+03,
    3.19985821950859553908e+03,
    1.53672958608443695994e+03,
    3.25792512996573918826e+02,
    3.03380607434824582924e+01,
    1.0,
];

/// The range boundaries (fdlibm compares the high word; these have zero low words).
const SMALL: f64 = 0.84375;
const MID: f64 = 1.25;
/// 1/0.35 with its low word cleared (`0x4006db6d_00000000`).
const TAIL_A: f64 = f64::from_bits(0x4006_db6d_0000_0000);
const TINY: f64 = 3.725290298461914e-09; // 2^-28
const QUARTER: f64 = 0.25;
const HUGE: f64 = 28.0;

/// What both functions share, per lane: `x` clamped to [-28, 28], the masks of the two
/// inner ranges, the selected ratio `y` (P/Q, P1/Q1, or R/S by range) and `erfc(|x|)` by the tail
/// formula (meaningful for |x| >= 1.25). All but `x` depend on |x| alone, so `erfc(-x)` is `x`
/// negated with the rest kept (see [`erfc_pair`]).
#[derive(Clone, Copy)]
struct Parts {
    x: Value,
    small: Value,
    mid: Value,
    y: Value,
    tail: Value,
}

/// `small` is the small range's `(P(x²), Q(x²))`, which the caller computed already. Each other
/// range's rational, and the tail's exp, is computed only when some lane of the vector lies in it (a
/// branch around it), and selected into the lanes that do.
fn parts(v: &mut Vb<'_, '_>, x0: Value, small: (Value, Value)) -> Parts {
    use FloatCC::*;
    let x = super::exp::clamp(v, x0, -HUGE, HUGE);
    let ax = v.abs(x);
    let z = v.mul(x, x);
    let small_m = v.cmpc(LessThan, ax, SMALL);
    let mid = v.cmpc(LessThan, ax, MID);
    let below_b = v.cmpc(LessThan, ax, TAIL_A);
    let not_small = v.not(small_m);
    let not_mid = v.not(mid);
    let in_mid = v.and(mid, not_small);
    let in_a = v.and(below_b, not_mid);
    let in_b = v.not(below_b); // NaN too
    let (ps, qs) = small;
    // [0.84375, 1.25)
    let nd = v.when(in_mid, &[ps, qs], |v| {
        let s = v.addc(ax, -1.0);
        let pm = v.poly(s, &PA);
        let qm = v.poly(s, &QA);
        vec![v.sel(in_mid, pm, ps), v.sel(in_mid, qm, qs)]
    });
    // [1.25, 1/0.35) and [1/0.35, 28): the reversed rationals in z, numerators times z
    let nd = v.when(in_a, &nd, |v| {
        let na = v.poly(z, &RA_REV);
        let na = v.mul(na, z);
        let da = v.poly(z, &SA_REV);
        vec![v.sel(in_a, na, nd[0]), v.sel(in_a, da, nd[1])]
    });
    let nd = v.when(in_b, &nd, |v| {
        let nb = v.poly(z, &RB_REV);
        let nb = v.mul(nb, z);
        let db = v.poly(z, &SB_REV);
        vec![v.sel(in_b, nb, nd[0]), v.sel(in_b, db, nd[1])]
    });
    let y = v.div(nd[0], nd[1]);
    let zero = v.c(0.0);
    let tail = v.when(not_mid, &[zero], |v| vec![tail(v, ax, z, y)])[0];
    Parts {
        x,
        small: small_m,
        mid,
        y,
        tail,
    }
}

/// `erfc(|x|) = exp(-x² - 0.5625 + y) / |x|` for |x| >= 1.25 (`z = x²`, `y = R/S`).
fn tail(v: &mut Vb<'_, '_>, ax: Value, z: Value, y: Value) -> Value {
    // -x² = -z - lo exactly, the sums kept as (hi, correction)
    let nz = v.neg(z);
    let lo = v.fma(ax, ax, nz);
    let c = v.c(-0.5625);
    let (s1, e1) = v.fast_two_sum(nz, c);
    let (s2, e2) = v.fast_two_sum(s1, y);
    let e = v.add(e1, e2);
    let e = v.sub(e, lo);
    // (1 + s)·2^k / |x| with one rounding: q = 1/|x| and its residual 1 - q·|x| (exact by FMA),
    // (1 + s)/|x| = q·(1 + s)(1 + res + ...) = q + q·(s + res·(1 + s)); the scaling by two exact
    // powers of two rounds once more only where the result is subnormal, and gives 0 beyond
    let (k, es) = exp_parts(v, &super::exp::F64, s2, Some(e));
    let one = v.c(1.0);
    let q = v.div(one, ax);
    let nq = v.neg(q);
    let res = v.fma(nq, ax, one);
    let ps = v.add(one, es);
    let u = v.fma(res, ps, es);
    let m = v.fma(q, u, q);
    v.scale(m, k)
}

/// The small range's `(P(x²), Q(x²))` and their ratio `y`, and the mask of lanes outside that
/// range (|x| >= 0.84375 or NaN), the same for `x` and `-x`.
fn small_rational(v: &mut Vb<'_, '_>, x: Value) -> ((Value, Value), Value, Value) {
    let ax = v.abs(x);
    let z = v.mul(x, x);
    let ps = v.poly(z, &PP);
    let qs = v.poly(z, &QQ);
    let y = v.div(ps, qs);
    let out = v.cmpc(FloatCC::UnorderedOrGreaterThanOrEqual, ax, SMALL);
    ((ps, qs), y, out)
}

/// `f(x)` by the small range's formula `small` alone where every lane has |x| < 0.84375 (no exp,
/// one rational), else by `general` for the whole vector: a branch taken only then. Arguments of
/// erf and erfc cluster near 0 in many programs (Black-Scholes' normal CDF: 92% of its arguments in
/// the benchmark), where fdlibm's scalar code returns early too.
fn small_or_general(
    v: &mut Vb<'_, '_>,
    x: Value,
    small: fn(&mut Vb<'_, '_>, Value, Value) -> Value,
    general: fn(&mut Vb<'_, '_>, Value, (Value, Value)) -> Value,
) -> Value {
    let (pq, y, out) = small_rational(v, x);
    let fast = small(v, x, y);
    v.guard_shared(out, fast, |v| general(v, x, pq))
}

pub(crate) fn erf(v: &mut Vb<'_, '_>, x: Value) -> Value {
    small_or_general(v, x, erf_small, erf_general)
}

pub(crate) fn erfc(v: &mut Vb<'_, '_>, x: Value) -> Value {
    small_or_general(v, x, erfc_small, erfc_general)
}

/// `(erfc(x), erfc(-x))` for the price of about one: everything but the last steps depends on |x|
/// alone (the ratios, the tail's exp, the range masks), and each result is assembled exactly as
/// [`erfc`] assembles it, from the same values, so the two are bit for bit `erfc(x)` and
/// `erfc(-x)` (the normal CDF's `N(d)` and `N(-d)`, both in Black-Scholes' call and put).
pub(crate) fn erfc_pair(v: &mut Vb<'_, '_>, x: Value) -> (Value, Value) {
    let (pq, y, out) = small_rational(v, x);
    let nx = v.neg(x);
    let fast = [erfc_small(v, x, y), erfc_small(v, nx, y)];
    let r = v.guard_many_shared(out, &fast, |v| {
        let p = parts(v, x, pq);
        let np = Parts { x: v.neg(p.x), ..p };
        vec![erfc_of(v, &p), erfc_of(v, &np)]
    });
    (r[0], r[1])
}

/// erf for |x| < 0.84375 from `y = P(x²)/Q(x²)`: `x + x·y`, or `(8x + EFX8·x)/8` below 2^-28.
fn erf_small(v: &mut Vb<'_, '_>, x: Value, y: Value) -> Value {
    let r = v.fma(x, y, x);
    let x8 = v.mulc(x, 8.0);
    let t = v.mulc(x, EFX8);
    let t = v.add(x8, t);
    let r_tiny = v.mulc(t, 0.125);
    let ax = v.abs(x);
    let tiny = v.cmpc(FloatCC::LessThan, ax, TINY);
    v.sel(tiny, r_tiny, r)
}

/// erfc for |x| < 0.84375 from `y = P(x²)/Q(x²)`: `1 - (x + x·y)` for x < 1/4, else
/// `0.5 - (x - 0.5 + x·y)`.
fn erfc_small(v: &mut Vb<'_, '_>, x: Value, y: Value) -> Value {
    let one = v.c(1.0);
    let e = v.fma(x, y, x);
    let r_low = v.sub(one, e);
    let xh = v.addc(x, -0.5);
    let t = v.fma(x, y, xh);
    let half = v.c(0.5);
    let r_high = v.sub(half, t);
    let low = v.cmpc(FloatCC::LessThan, x, QUARTER);
    v.sel(low, r_low, r_high)
}

fn erf_general(v: &mut Vb<'_, '_>, x0: Value, small: (Value, Value)) -> Value {
    let p = parts(v, x0, small);
    let r_small = erf_small(v, p.x, p.y);
    // mid: erx + y; tail: 1 - erfc(|x|); both with the sign of x
    let r_mid = v.addc(p.y, ERX);
    let one = v.c(1.0);
    let r_tail = v.sub(one, p.tail);
    let r = v.sel(p.mid, r_mid, r_tail);
    let r = v.copysign(r, p.x);
    v.sel(p.small, r_small, r)
}

fn erfc_general(v: &mut Vb<'_, '_>, x0: Value, small: (Value, Value)) -> Value {
    let p = parts(v, x0, small);
    erfc_of(v, &p)
}

/// erfc of `p.x` from its parts, lane by lane by range.
fn erfc_of(v: &mut Vb<'_, '_>, p: &Parts) -> Value {
    let one = v.c(1.0);
    let neg = v.cmpc(FloatCC::LessThan, p.x, 0.0);
    let r_small = erfc_small(v, p.x, p.y);
    // mid: (1 - erx) - y for x > 0, 1 + (erx + y) below
    let c = v.c(1.0 - ERX);
    let r_mid_pos = v.sub(c, p.y);
    let t = v.addc(p.y, ERX);
    let r_mid_neg = v.add(one, t);
    let r_mid = v.sel(neg, r_mid_neg, r_mid_pos);
    // tail: erfc(|x|), or 2 - erfc(|x|) for x < 0
    let two = v.c(2.0);
    let r_tail_neg = v.sub(two, p.tail);
    let r_tail = v.sel(neg, r_tail_neg, p.tail);
    let r = v.sel(p.mid, r_mid, r_tail);
    v.sel(p.small, r_small, r)
}
