//! exp, log, log2, log10, log1p, sin, cos and tan natively on F32X4 (four lanes at once, computed
//! in f32), the f32 constants of exp2, expm1 (`exp.rs`), sinh and cosh (`hyperbolic.rs`),
//! whose algorithms run on F32X4 with them, and the log1p core of the f32 inverse hyperbolic
//! functions (`arc_hyp.rs`); the f32 functions not native anywhere are computed by widening to F64X2.
//!
//! **exp**: as `exp.rs` in single precision: `k = nearest(x·log2(e))`, `r = x - k·ln2` by Cody-Waite
//! with FMA (ln2 split in two floats; the first `fma` is exact), `e^r = 1 + (r + r²·Q(r))` with `Q` of
//! degree 4 fitted here (Chebyshev interpolation in mpmath, coefficients rounded to f32; relative
//! error of the polynomial 2^-26.5), `k` added into the exponent field. Vectors with a lane of
//! |x| >= 87 or NaN take the general path: x clamped to [-104, 89], two exact scalings (subnormal
//! results rounded once, overflow to inf). Measured against the `libm` crate's `expf` over a million
//! points in [-103.9, 88.7]: max 1 ULP.
//!
//! **log**: `x = 2^k·(1+f)` with `1 + f` in [sqrt(2)/2, sqrt(2)) by integer arithmetic on the bits
//! (musl's `logf` reduction, exact), `log(1+f) = f + t`, `t = f²·Q(f)` with `Q` of degree 8 fitted
//! here ([`LOG1P_Q`]: Chebyshev interpolation in mpmath, `scripts/fexp_fit.py log1p 8 f32`, rounded
//! to f32, relative error 2^-26.1), `k·ln2` added in two parts (fdlibm's, the head's product
//! exact): `((t + k·ln2_lo) + f) + k·ln2_hi`. No division: fdlibm's `s = f/(2+f)` and its
//! polynomial in `s²` cost a `vdivps` a vector and more operations (0.31 ns an element at AVX-512
//! against 0.26; 0.43 against 0.31 from Python at N = 1e6). Vectors with a lane that is subnormal,
//! zero, negative, inf or NaN take the general path (subnormals scaled by 2^25, special values
//! selected).
//!
//! **log2, log10**: log's reduction, kernel and general path, with `f` (exact) the head and `t`
//! the tail of `log(1 + f)` before scaling by 1/ln 2 or 1/ln 10 (each as two floats), so that the
//! head's product is exact in the last fused multiply-add (fdlibm's `e_log2f.c` splits `f - hfsq`
//! for the same end); then `+ k`, or `+ k·log10(2)` (two floats, the head's product fused). Powers
//! of two give log2 exactly. **log1p**: `k` the exponent of `1 + x` (rounded) as log's reduction
//! finds it, but `f = x·2^-k + (2^-k - 1)` from `x` itself (`x·2^-k` by integer arithmetic on
//! its exponent field, one rounding, as ARM's AdvSIMD `log1pf`), so no correction for the rounding
//! of `1 + x` (musl's `c/u`, with its selects for the range near 0 and its second division) is
//! needed: `f = x` exactly where `k = 0`; log1p itself adds `f`'s rounding error (TwoSum), the
//! inverse hyperbolic functions do without. `x` itself below 2^-24; straight-line selects, no
//! branch (0.53 ns an element at AVX-512 before, 0.42 now; arcsinh 0.93 -> 0.69).
//! Measured over every f32 bit pattern (`cargo run --release -p kiln-jit --example ulp32`) against
//! std's f64 functions rounded: log, log2, log10 and log1p max 1 ULP.
//!
//! **sin, cos**: `q = nearest(x·2/pi)`, `r = x - q·pi/2` by Cody-Waite with FMA and pi/2 in three
//! floats (the first `fma` exact), for |x| <= 2^16; beyond (and ±inf) a per-lane call of the host
//! `sinf` / `cosf` on a branch taken only when needed. `sin r = r + r³·S(r²)`, `cos r = 1 + r²·C(r²)`
//! with musl's `__sindf` / `__cosdf` coefficients (fdlibm's `k_sinf.c`, `k_cosf.c`, Remez fits with
//! errors 2^-37.5 and 2^-34.5 in double) rounded to f32, and the quadrant `q mod 4` choosing the
//! kernel and the sign. |x| < 2^-12 returns x for sin (keeping -0.0). Measured against `sinf` /
//! `cosf` over a million points in [-1e4, 1e4] (and beyond, through the slow path): max 1 ULP.
//!
//! **tan**: the same `q` and slow path, and `x - q·pi/2` kept as a pair of floats `r + rl`: `r1 =
//! x - q·pio2_1` (exact), `m = -q·(pio2_2 + pio2_3)` rounded once, `r = r1 + m` and its rounding
//! error by Fast2Sum. Where `r1` and `m` cancel (`|r| < 8|m|`: x next to a multiple of pi/2, a
//! branch a vector takes only for such a lane), `m`'s rounding is large beside `r`, and those lanes
//! reduce exactly instead (`q·pio2_2` as a pair by an `fma` for its error, added by TwoSum).
//! `tan(r + rl) ≈ r + c`, `c = r³·T(r²) + rl·(1 + r²)`, with `T` of degree 6 fitted here
//! (Chebyshev interpolation in mpmath, `scripts/fexp_fit.py tan 6 f32`, rounded to f32: relative
//! error 2^-27.2 on |r| <= pi/4), the sum `w` and its rounding error `lo` by Fast2Sum; odd
//! quadrants `-1/(w + lo)` as `a + a·((1 + a·w) + a·lo)`, `a = -1/w` (musl's `__tandf` computes
//! these in double instead, which would halve the lanes per instruction). |x| < 2^-12 returns x.
//! Measured against `tanf` over a million points in [-1e4, 1e4]: max 1 ULP (mean 0.14); against the
//! correctly rounded values of NumPy's validation set: max 1 ULP; over every 7th f32 in [2^-12,
//! 65536] of either sign, within 1.29 ULP of the true value, as with the exact reduction
//! everywhere, which ran 1.25x slower at AVX-512 (0.82 against 0.66 ns an element; an uncorrected
//! quotient, 0.54 ns, measured 1.68 ULP).
//!
//! **exp2, expm1, sinh, cosh**: `exp.rs`'s and `hyperbolic.rs`'s algorithms on [`F32`] with
//! [`FAMILY`] and [`HYP`]: exp2 as `2^k·e^(r·ln2)` with `r·ln2` a pair of floats; expm1
//! and sinh with f32 polynomials of degree 4 for small |x| ([`EXPM1_P`], [`SINH_P`], fitted by
//! `scripts/fexp_fit.py NAME 4 f32`) and exp's core beyond; each general path's edges moved to
//! where f32's exp leaves its fast path. (f32 tanh is `tanh32.rs`'s table of polynomials.)
//! Measured over a million points each against the `libm` crate (`jit/tests/accuracy.rs`): exp2
//! max 1 ULP, expm1, tanh, sinh and cosh 2 (libm's `expm1f`, `tanhf`, `sinhf`, `coshf` are
//! themselves up to 1 ULP off); against the correctly rounded values (NumPy's validation sets and
//! `tests/data/ulp`, `tests/math_accuracy.rs`): max 1 ULP each; over five million points each
//! against std's f64 function rounded to f32 (tanh on [-10, 10], sinh and cosh [-89, 89], expm1
//! [-20, 88], exp2 [-150, 128], tan [-1e4, 1e4], and ±2^[-30, 0]): tanh, cosh, exp2 and tan max 1
//! ULP, sinh and expm1 2 (sinh near 5.9, expm1 just above 0.35, as in f64).

use super::Vb;
use super::exp::{ExpConsts, ExpFamily, exp_with};
use super::hyperbolic::Hyp;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// f32 exp (`exp.rs`'s algorithm): ln 2 in two floats (the float nearest ln 2, and the float nearest
/// the rest); `Q` of degree 4, f32 coefficients; the general path from |x| >= 87, clamped to
/// [-104, 89].
pub(crate) const F32: ExpConsts = ExpConsts {
    log2e: 1.4426950216293335,
    ln2_hi: 0.6931471824645996,
    ln2_lo: -1.9046542121259336e-09,
    q: &[
        0.5,
        0.16666576266288757,
        0.04166655242443085,
        0.00836323294788599,
        0.0013926250394433737,
    ],
    edge: 87.0,
    clamp: (-104.0, 89.0),
};

pub(crate) fn exp(v: &mut Vb<'_, '_>, x: Value) -> Value {
    exp_with(v, &F32, x, None)
}

/// f32 exp2 and expm1 (`exp.rs`'s algorithms on [`F32`]): exp2's general path from |x| >= 125
/// (below, `p·2^k` is normal), clamped to [-160, 130]; expm1's `P` of degree 4 ([`EXPM1_P`]) and
/// its general path from x >= 87.
pub(crate) const FAMILY: ExpFamily = ExpFamily {
    exp: &F32,
    exp2_edge: 125.0,
    exp2_clamp: (-160.0, 130.0),
    expm1_p: &EXPM1_P,
    expm1_edge: 87.0,
};

/// expm1's `P` in f32: `expm1(x) ≈ x + x²·(1/2 + x·P(x))` on |x| <= 0.35, Chebyshev interpolation
/// (`scripts/fexp_fit.py expm1 4 f32`) rounded to floats: relative error 2^-28.9.
pub(crate) const EXPM1_P: [f64; 5] = [
    0.1666666716337204,
    0.04166654869914055,
    0.00833332072943449,
    0.0013926918618381023,
    0.00019883514323737472,
];

/// f32 sinh and cosh (`hyperbolic.rs`'s algorithms on [`F32`]): [`SINH_P`]; the general path
/// from |x| >= 88 (below, `k <= 127` and `e^|x|` is finite), clamped to 90 (sinh and cosh overflow
/// from 89.4159).
pub(crate) const HYP: Hyp = Hyp {
    exp: &F32,
    sinh_p: &SINH_P,
    edge: 88.0,
    clamp: 90.0,
};

/// sinh's `P` in f32: `sinh(x) ≈ x + x³·P(x²)` on |x| <= 2, degree 4
/// (`scripts/fexp_fit.py sinh 4 f32`): relative error 2^-26.5 (bounded by the rounding of 1/6).
pub(crate) const SINH_P: [f64; 5] = [
    0.1666666716337204,
    0.008333329111337662,
    0.000198421097593382,
    2.7498767849465366e-06,
    2.6708717015822003e-08,
];

/// `Q` of log's kernel: `log(1 + f) ≈ f + f²·Q(f)` on [sqrt(2)/2 - 1, sqrt(2) - 1), degree 8
/// (`scripts/fexp_fit.py log1p 8 f32`): relative error 2^-26.1.
pub(crate) const LOG1P_Q: [f64; 9] = [
    -0.4999999701976776,
    0.3333333134651184,
    -0.2500078082084656,
    0.20001234114170074,
    -0.16626645624637604,
    0.14204855263233185,
    -0.13127554953098297,
    0.12722674012184143,
    -0.07673642784357071,
];
pub(crate) const FD_LN2_HI: f64 = 6.9313812256e-01;
pub(crate) const FD_LN2_LO: f64 = 9.0580006145e-06;
pub(crate) const MIN_NORMAL: f64 = 1.1754943508222875e-38;

/// `(f, k)`: `x = 2^k·(1 + f)` with `1 + f` in [sqrt(2)/2, sqrt(2)) by integer arithmetic on the
/// bits, for positive normal finite `x` (other lanes: garbage), `kadj` added to `k` where given.
fn reduce(v: &mut Vb<'_, '_>, x: Value, kadj: Option<Value>) -> (Value, Value) {
    let u = v.bits(x);
    let u = v.iaddc(u, 0x3f800000 - 0x3f3504f3);
    let e = v.ushr(u, 23);
    // (e - 0x7f) as a float: the bits of 1.5·2^23 + e - 0x7f, minus 1.5·2^23
    let kb = v.iaddc(e, 0x4b40_0000 - 0x7f);
    let kf = v.float(kb);
    let mut k = v.addc(kf, -12582912.0);
    if let Some(a) = kadj {
        k = v.add(k, a);
    }
    let m = v.andc(u, 0x007f_ffff);
    let m = v.iaddc(m, 0x3f3504f3);
    let m = v.float(m);
    let f = v.addc(m, -1.0);
    (f, k)
}

/// `t = f²·Q(f)`, so that `log(1 + f) ≈ f + t` for `f` in [sqrt(2)/2 - 1, sqrt(2) - 1): `Q` of
/// degree 8 by Horner's rule, [`LOG1P_Q`]. No division (fdlibm's `s = f/(2 + f)` was one
/// `vdivps` per vector, a third of the routine's time at AVX-512).
fn kernel(v: &mut Vb<'_, '_>, f: Value) -> Value {
    let q = v.poly(f, &LOG1P_Q);
    let f2 = v.mul(f, f);
    v.mul(f2, q)
}

/// log of positive normal finite `x`: musl's `logf` reduction, the division-free kernel.
fn log_normal(v: &mut Vb<'_, '_>, x: Value, kadj: Option<Value>) -> Value {
    let (f, k) = reduce(v, x, kadj);
    let t = kernel(v, f);
    // (t + k·ln2_lo) + f + k·ln2_hi, the products fused
    let c = v.c(FD_LN2_LO);
    let a = v.fma(k, c, t);
    let a = v.add(a, f);
    let c = v.c(FD_LN2_HI);
    v.fma(k, c, a)
}

/// `2^25·x` and `-25` where `x` is subnormal, `x` and 0 elsewhere: the general path's scaling.
fn unsubnormal(v: &mut Vb<'_, '_>, x: Value) -> (Value, Value) {
    let sub = v.cmpc(FloatCC::LessThan, x, MIN_NORMAL);
    let xs = v.mulc(x, 33554432.0); // 2^25
    let xx = v.sel(sub, xs, x);
    let m25 = v.c(-25.0);
    let zero = v.c(0.0);
    (xx, v.sel(sub, m25, zero))
}

/// Replaces the lanes where `x` is not positive and finite: log(±0) = -inf, log(x < 0) = NaN,
/// log(inf) = inf, log(NaN) = NaN.
fn specials(v: &mut Vb<'_, '_>, x: Value, y: Value) -> Value {
    use FloatCC::*;
    let pos = v.cmpc(GreaterThan, x, 0.0);
    let fin = v.cmpc(LessThan, x, f64::INFINITY);
    let ok = v.and(pos, fin);
    let neg = v.cmpc(LessThan, x, 0.0);
    let sp = v.selc(neg, super::INVALID, x);
    let zero = v.cmpc(Equal, x, 0.0);
    let sp = v.selc(zero, f64::NEG_INFINITY, sp);
    v.sel(ok, y, sp)
}

/// Whether a lane of `x` is not positive, normal and finite: the general path's condition.
fn edge(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use FloatCC::*;
    let small = v.cmpc(UnorderedOrLessThan, x, MIN_NORMAL);
    let inf = v.cmpc(Equal, x, f64::INFINITY);
    v.or(small, inf)
}

pub(crate) fn log(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let fast = log_normal(v, x, None);
    let edge = edge(v, x);
    v.guard(edge, fast, |v| {
        let (xx, kadj) = unsubnormal(v, x);
        let y = log_normal(v, xx, Some(kadj));
        specials(v, x, y)
    })
}

/// 1/ln 2, 1/ln 10 and log10(2), each as the float nearest it and the float nearest the rest.
pub(crate) const IVLN2_HI: f64 = 1.4426950216293335;
pub(crate) const IVLN2_LO: f64 = 1.925963033500011e-08;
pub(crate) const IVLN10_HI: f64 = 0.4342944920063019;
pub(crate) const IVLN10_LO: f64 = -1.0103049952192578e-08;
pub(crate) const LOG10_2_HI: f64 = 0.3010300099849701;
pub(crate) const LOG10_2_LO: f64 = -1.432098883924482e-08;

/// `g(f, k)` of log2 or log10 for positive normal finite `x` without the subnormal scaling, or
/// where a lane is not, for the whole vector (a branch taken only then) the subnormals scaled by
/// 2^25 and log's special values selected (the general path gives a normal lane the fast path's
/// bits).
fn fast_or_general(v: &mut Vb<'_, '_>, x: Value, g: fn(&mut Vb<'_, '_>, Value, Value) -> Value) -> Value {
    let (f, k) = reduce(v, x, None);
    let fast = g(v, f, k);
    let edge = edge(v, x);
    v.guard_shared(edge, fast, |v| {
        let (xx, kadj) = unsubnormal(v, x);
        let (f, k) = reduce(v, xx, Some(kadj));
        let y = g(v, f, k);
        specials(v, x, y)
    })
}

pub(crate) fn log2(v: &mut Vb<'_, '_>, x: Value) -> Value {
    fast_or_general(v, x, log2_reduced)
}

/// `k + (f + t)·(1/ln 2)`: `f` (exact) the head, `t` the tail, the head's product exact in the
/// last fma, `k` added last (exactly, where `f = 0`: a power of two gives its exponent).
fn log2_reduced(v: &mut Vb<'_, '_>, f: Value, k: Value) -> Value {
    let t = kernel(v, f);
    let a = v.mulc(f, IVLN2_LO);
    let c = v.c(IVLN2_HI);
    let a = v.fma(t, c, a);
    let y = v.fma(f, c, a);
    v.add(y, k)
}

pub(crate) fn log10(v: &mut Vb<'_, '_>, x: Value) -> Value {
    fast_or_general(v, x, log10_reduced)
}

/// `k·log10(2) + (f + t)·(1/ln 10)`: `f` (exact) the head, `t` the tail, the small terms first,
/// the head's product and `k·log10(2)` exact in the last two fmas.
fn log10_reduced(v: &mut Vb<'_, '_>, f: Value, k: Value) -> Value {
    let t = kernel(v, f);
    let a = v.mulc(k, LOG10_2_LO);
    let c = v.c(IVLN10_LO);
    let a = v.fma(f, c, a);
    let c = v.c(IVLN10_HI);
    let a = v.fma(t, c, a);
    let y = v.fma(f, c, a);
    let c = v.c(LOG10_2_HI);
    v.fma(k, c, y)
}

/// 2^-24: below it log1p(x) is `x` to within half an ULP.
pub(crate) const LOG1P_TINY: f64 = 5.960464477539063e-8;

pub(crate) fn log1p(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let y = log1p_core(v, x, None, true);
    // |x| < 2^-24: x (keeps -0.0 and the subnormals)
    super::log::log1p_specials(v, x, y, LOG1P_TINY)
}

/// log1p of finite `x > -1` with no special value handled (other lanes: garbage), plus `kextra ·
/// ln2` (0 or 1 per lane) added into the exponent `k` where given (the inverse hyperbolic
/// functions' `log(2|x|)`, as `vmath::log::log1p_core`). `k` is the exponent of `u = 1 + x` (in
/// log's reduction, `u = 2^k·(1 + f)`), but `f` is not taken from `u`, whose rounding error would
/// need a correction (musl's `c/u`): `f = x·2^-k + (2^-k - 1)`, `x·2^-k` exact (`k` subtracted from
/// `x`'s exponent field) and `2^-k - 1` as `fma(4·2^-k, 1/4, -1)` (`4·2^-k` is normal for every `k`
/// up to 128; the subtraction exact up to `k = 24`, beyond it below 2^-26 of the result), as ARM's
/// AdvSIMD `log1pf` scales its argument; where `tracked`, the sum's rounding error `e` by TwoSum,
/// added as `e·(1 - f)` (for `e/(1 + f)`): log1p's 1 ULP (without it, 29 f32 results were 2 ULP
/// off; the inverse hyperbolic functions, 2 ULP either way, go without it, 13% faster). `f = x`
/// exactly where `k = 0`.
pub(crate) fn log1p_core(v: &mut Vb<'_, '_>, x: Value, kextra: Option<Value>, tracked: bool) -> Value {
    let u = v.addc(x, 1.0);
    let ub = v.bits(u);
    let ub = v.iaddc(ub, 0x3f800000 - 0x3f3504f3);
    let e = v.ushr(ub, 23);
    let kb = v.iaddc(e, 0x4b40_0000 - 0x7f);
    let kf = v.float(kb);
    let mut k = v.addc(kf, -12582912.0);
    // (k + 127) << 23: `4·2^-k` and `x·2^-k` by integer arithmetic on the bits
    let top = v.andc(ub, 0xff80_0000_u32 as i64);
    let c = v.ci(0x8000_0000_u32 as i64);
    let sb = v.isub(c, top);
    let s = v.float(sb);
    let xb = v.bits(x);
    let xb = v.iaddc(xb, 0x3f80_0000);
    let xb = v.isub(xb, top);
    let xs = v.float(xb);
    let quarter = v.c(0.25);
    let m1 = v.c(-1.0);
    let c1 = v.fma(s, quarter, m1);
    if let Some(ke) = kextra {
        k = v.add(k, ke);
    }
    let l = v.c(FD_LN2_LO);
    let (f, a) = if tracked {
        // f + e = xs + c1 exactly (TwoSum); log1p(f + e) = log1p(f) + e/(1 + f), e·(1 - f) here;
        // (t + (k·ln2_lo + e)) + f
        let (f, e) = v.two_sum(xs, c1);
        let nf = v.neg(f);
        let e = v.fma(nf, e, e);
        let t = kernel(v, f);
        let a = v.fma(k, l, e);
        (f, v.add(t, a))
    } else {
        // (t + k·ln2_lo) + f
        let f = v.add(xs, c1);
        let t = kernel(v, f);
        (f, v.fma(k, l, t))
    };
    let a = v.add(a, f);
    let h = v.c(FD_LN2_HI);
    v.fma(k, h, a)
}

// ---------------------------------------------------------------------------------------------
// sin and cos

/// pi/2 in three floats (72 bits), and 2/pi rounded to f32.
pub(crate) const PIO2_1: f64 = 1.5707963705062866;
pub(crate) const PIO2_2: f64 = -4.371138828673793e-08;
pub(crate) const PIO2_3: f64 = -1.7151245100058819e-15;
pub(crate) const TWO_OVER_PI: f64 = 0.6366197466850281;
/// Above this, the reduction is left to libm (`sinf`, `cosf`).
pub(crate) const REDUCE_MAX: f64 = 65536.0;
/// Below this, sin(x) rounds to x in f32.
pub(crate) const TINY: f64 = 2.44140625e-4;
/// musl's `__sindf` and `__cosdf` polynomials (fdlibm's `k_sinf.c`, `k_cosf.c`), rounded to f32.
pub(crate) const S: [f64; 4] = [
    -0.166666666416265235595,
    0.0083333293858894631756,
    -0.000198393348360966317347,
    0.0000027183114939898219064,
];
pub(crate) const C: [f64; 4] = [
    -0.499999997251031003120,
    0.0416666233237390631894,
    -0.00138867637746099294692,
    0.0000243904487962774090654,
];

/// `(sin r, cos r, n)` for `x = q·pi/2 + r`, `n = q mod 4` (I32X4).
fn sincos_reduced(v: &mut Vb<'_, '_>, x: Value) -> (Value, Value, Value) {
    let t = v.mulc(x, TWO_OVER_PI);
    let q = v.nearest(t);
    let nq = v.neg(q);
    let p1 = v.c(PIO2_1);
    let r = v.fma(nq, p1, x); // exact
    let p2 = v.c(PIO2_2);
    let r = v.fma(nq, p2, r);
    let p3 = v.c(PIO2_3);
    let r = v.fma(nq, p3, r);
    let qb = v.addc(q, 12582912.0);
    let qb = v.bits(qb);
    let n = v.andc(qb, 3);
    let z = v.mul(r, r);
    // sin r = r + r³·S(r²); cos r = 1 + r²·C(r²)
    let s = v.poly(z, &S);
    let r3 = v.mul(z, r);
    let sin = v.fma(r3, s, r);
    let c = v.poly(z, &C);
    let one = v.c(1.0);
    let cos = v.fma(z, c, one);
    (sin, cos, n)
}

fn quadrant(v: &mut Vb<'_, '_>, sin: Value, cos: Value, n: Value) -> Value {
    use cranelift_codegen::ir::condcodes::IntCC;
    let b = v.andc(n, 1);
    let one = v.ci(1);
    let odd = v.icmp(IntCC::Equal, b, one);
    let r = v.sel(odd, cos, sin);
    let s = v.andc(n, 2);
    let s = v.shl(s, 30);
    let rb = v.bits(r);
    let rb = v.xor(rb, s);
    v.float(rb)
}

pub(crate) fn sin(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let (s, c, n) = sincos_reduced(v, x);
    let r = quadrant(v, s, c, n);
    let ax = v.abs(x);
    let tiny = v.cmpc(FloatCC::LessThan, ax, TINY);
    let r = v.sel(tiny, x, r);
    let huge = v.cmpc(FloatCC::GreaterThan, ax, REDUCE_MAX);
    v.slow_path(huge, crate::host::MathFn::Sin, x, r)
}

/// tan's `T`: `tan(r) ≈ r + r³·T(r²)` on |r| <= pi/4, degree 6 (`scripts/fexp_fit.py tan 6 f32`):
/// relative error 2^-27.2.
pub(crate) const T: [f64; 7] = [
    0.3333333432674408,
    0.13333231210708618,
    0.05399446561932564,
    0.02162112109363079,
    0.009962167590856552,
    0.0011852888856083155,
    0.00384315918199718,
];

pub(crate) fn tan(v: &mut Vb<'_, '_>, x: Value) -> Value {
    use cranelift_codegen::ir::condcodes::IntCC;
    let t = v.mulc(x, TWO_OVER_PI);
    let q = v.nearest(t);
    let nq = v.neg(q);
    let p1 = v.c(PIO2_1);
    let r1 = v.fma(nq, p1, x); // exact
    // r1 - q·(pio2_2 + pio2_3) as a pair of floats r + rl, the small product `m` rounded once
    let p3 = v.c(PIO2_3);
    let m3 = v.mul(nq, p3);
    let p2 = v.c(PIO2_2);
    let m = v.fma(nq, p2, m3);
    let r = v.add(r1, m);
    let d = v.sub(r1, r);
    let rl = v.add(d, m);
    let qb = v.addc(q, 12582912.0);
    let qb = v.bits(qb);
    let n = v.andc(qb, 1);
    let one = v.ci(1);
    let odd = v.icmp(IntCC::Equal, n, one);
    let res = tan_kernel(v, r, rl, odd);
    // where r1 and m cancel (x next to a multiple of pi/2), m's rounding is large beside r: those
    // lanes reduce exactly, q·pio2_2 as a pair (its rounding error by an fma) added by TwoSum
    let ar = v.abs(r);
    let am = v.abs(m);
    let am = v.mulc(am, NEAR);
    let near = v.cmp(FloatCC::LessThan, ar, am);
    let res = v.guard(near, res, |v| {
        let p2 = v.c(PIO2_2);
        let ph = v.mul(nq, p2);
        let nph = v.neg(ph);
        let pl = v.fma(nq, p2, nph);
        let (s, e) = v.two_sum(r1, ph);
        let p3 = v.c(PIO2_3);
        let l = v.fma(nq, p3, pl);
        let lo = v.add(e, l);
        let (r, rl) = v.fast_two_sum(s, lo);
        let exact = tan_kernel(v, r, rl, odd);
        v.sel(near, exact, res)
    });
    let ax = v.abs(x);
    let tiny = v.cmpc(FloatCC::LessThan, ax, TINY);
    let res = v.sel(tiny, x, res);
    let huge = v.cmpc(FloatCC::GreaterThan, ax, REDUCE_MAX);
    v.slow_path(huge, crate::host::MathFn::Tan, x, res)
}

/// tan's lanes whose reduced argument `r` is below `NEAR·|m|` (`m = -q·(pio2_2 + pio2_3)` rounded
/// once) reduce exactly: there `m`'s rounding error is above 2^-27 of `r`.
pub(crate) const NEAR: f64 = 8.0;

/// `tan(q·pi/2 + r + rl)` from the reduced pair and the quadrant's parity: `tan(r + rl) ≈ w = r + c`,
/// `c = r³·T(r²) + rl·(1 + r²)`; odd quadrants `-1/(w + lo)`, `lo` the sum's rounding error.
fn tan_kernel(v: &mut Vb<'_, '_>, r: Value, rl: Value, odd: Value) -> Value {
    let z = v.mul(r, r);
    let z2 = v.mul(z, z);
    let p = v.poly2(z, z2, &T);
    let r3 = v.mul(z, r);
    let d = v.fma(rl, z, rl);
    let c = v.fma(r3, p, d);
    // the sum `w` and its rounding error `lo` (Fast2Sum: |c| < |r|); odd quadrants
    // -1/(w + lo) = a·(1 + d), a = -1/w, d = (1 + a·w) + a·lo
    let (w, lo) = v.fast_two_sum(r, c);
    let m1 = v.c(-1.0);
    let a = v.div(m1, w);
    let onef = v.c(1.0);
    let d = v.fma(a, w, onef);
    let d = v.fma(a, lo, d);
    let ro = v.fma(a, d, a);
    v.sel(odd, ro, w)
}

pub(crate) fn cos(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let (s, c, n) = sincos_reduced(v, x);
    // cos(x) = sin(x + pi/2): quadrant n + 1
    let n1 = v.iaddc(n, 1);
    let r = quadrant(v, s, c, n1);
    let ax = v.abs(x);
    let huge = v.cmpc(FloatCC::GreaterThan, ax, REDUCE_MAX);
    v.slow_path(huge, crate::host::MathFn::Cos, x, r)
}
