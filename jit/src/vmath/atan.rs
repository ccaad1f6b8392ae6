//! arctan and arctan2 on F64X2 and F32X4, both from one kernel.
//!
//! **The kernel** (`core`): `atan(ay/ax)` for `ay, ax >= 0`, fdlibm's `atan.c` with its five ranges
//! as lane selects and the division folded into the reduction: the range of `ay/ax` is found by
//! comparing `ay` with `c·ax` (`c` = 7/16, 11/16, 19/16, 39/16), and the reduced argument is
//! `t = (ay - k·ax) / (ax + k·ay)` (`k` = 0, 1/2, 1, 3/2, each numerator and denominator one `fma`)
//! or `-ax/ay` in the last range, so that `atan(ay/ax) = atan(k) + atan(t)` with `|t| <= 7/16`, with
//! one rounded division and no rounding of `ay/ax` itself. Then fdlibm's polynomial (11 coefficients
//! in f64, atanf's 5 in f32, split in even and odd halves, Horner with FMA) and its reconstruction
//! `hi - ((t·s - lo) - t)` with `atan(k)` as `hi + lo`.
//!
//! - **arctan(x)** = the kernel of `(|x|, 1)` with the sign of x: branch-free (NaN propagates through
//!   the arithmetic, ±inf lands in the last range and gives ±pi/2, a tiny or subnormal x gives x).
//! - **arctan2(y, x)** (C's `atan2`, NumPy's `arctan2(x0 = y, x1 = x)`) = the kernel of `(|y|, |x|)`,
//!   where `x < 0` `pi - atan(|y|/|x|)` by the same reduction from `pi - atan(k)` (so that
//!   `arctan2(1, -0.0)` is pi/2 exactly and the left half-plane as accurate), and the sign of y. The fast path needs
//!   both magnitudes at most 2^1020 and one at least 2^-968 (f32: 2^124, 2^-100), so that the
//!   denominator cannot overflow and the numerator's cancellation stays exact; a vector with another
//!   lane (a zero pair, ±inf, NaN, huge or tiny magnitudes) branches to the general path, which scales
//!   both arguments by a power of two and applies C99 Annex F's special cases by selects: NaN gives
//!   `x + y`, `(±0, +0)` gives ±0 and `(±0, -0)` ±pi, infinities give ±pi/4, ±3pi/4, ±pi/2, ±0, ±pi.
//!
//! f32 is computed in f32 (atanf's constants and polynomial) on F32X4. Coefficients: fdlibm
//! (`s_atan.c`, `s_atanf.c`, `e_atan2.c`, Sun Microsystems 1993, freely granted with this notice
//! preserved), as carried by musl and the Rust `libm` crate. Measured maxima are in `math.rs`'s
//! bounds; `wide/atan.rs` computes the same operations per lane at full width.

use super::Vb;
use cranelift_codegen::ir::Value;
use cranelift_codegen::ir::condcodes::FloatCC;

/// The constants of one type's kernel (f32 ones written as the f32 values, widened exactly).
pub(crate) struct AtanConsts {
    /// The range thresholds of `ay / ax`: 7/16, 11/16, 19/16, 39/16.
    pub cut: [f64; 4],
    /// atan(1/2), atan(1), atan(3/2), atan(inf): the rounded values.
    pub hi: [f64; 4],
    /// Their tails.
    pub lo: [f64; 4],
    /// pi - atan(k) for k = 0, 1/2, 1, 3/2 (the left half-plane, `x < 0`), rounded, and the tails.
    pub left_hi: [f64; 4],
    pub left_lo: [f64; 4],
    /// The even and odd coefficients of the polynomial in `w = t^4`.
    pub even: &'static [f64],
    pub odd: &'static [f64],
    /// pi rounded (atan2 of zeros and infinities).
    pub pi: f64,
    /// pi/2, pi/4 and 3pi/4 rounded (atan2 of infinities).
    pub pio2: f64,
    pub pio4: f64,
    pub three_pio4: f64,
    /// The fast path of atan2: both magnitudes at most `big`, one at least `tiny`.
    pub big: f64,
    pub tiny: f64,
    /// The general path's scalings: by `down` where a magnitude exceeds `big`, by `up` where both
    /// are below `tiny`.
    pub down: f64,
    pub up: f64,
}

const CUT: [f64; 4] = [7.0 / 16.0, 11.0 / 16.0, 19.0 / 16.0, 39.0 / 16.0];

/// The f64 kernel (`s_atan.c`, `e_atan2.c`).
pub(crate) const F64: AtanConsts = AtanConsts {
    cut: CUT,
    hi: [
        4.63647609000806093515e-01,
        7.85398163397448278999e-01,
        9.82793723247329054082e-01,
        1.57079632679489655800e+00,
    ],
    lo: [
        2.26987774529616870924e-17,
        3.06161699786838301793e-17,
        1.39033110312309984516e-17,
        6.12323399573676603587e-17,
    ],
    left_hi: [
        3.141592653589793,
        2.677945044588987,
        2.356194490192345,
        2.158798930342464,
    ],
    left_lo: [
        1.2246467991473532e-16,
        1.5527705369303147e-16,
        9.184850993605148e-17,
        2.1958367134601997e-16,
    ],
    even: &[
        3.33333333333329318027e-01,
        1.42857142725034663711e-01,
        9.09088713343650656196e-02,
        6.66107313738753120669e-02,
        4.97687799461593236017e-02,
        1.62858201153657823623e-02,
    ],
    odd: &[
        -1.99999999998764832476e-01,
        -1.11111104054623557880e-01,
        -7.69187620504482999495e-02,
        -5.83357013379057348645e-02,
        -3.65315727442169155270e-02,
    ],
    pi: 3.1415926535897931160e+00,
    pio2: 1.57079632679489655800e+00,
    pio4: 7.85398163397448278999e-01,
    three_pio4: 2.356194490192344837,
    big: 1.1235582092889474e307,  // 2^1020
    tiny: 4.008336720017946e-292, // 2^-968
    down: 2.409919865102884e-181, // 2^-600
    up: 4.149515568880993e180,    // 2^600
};

/// The f32 kernel (`s_atanf.c`, `e_atan2f.c`).
pub(crate) const F32: AtanConsts = AtanConsts {
    cut: CUT,
    hi: [
        4.6364760399e-01_f32 as f64,
        7.8539812565e-01_f32 as f64,
        9.8279368877e-01_f32 as f64,
        1.5707962513e+00_f32 as f64,
    ],
    lo: [
        5.0121582440e-09_f32 as f64,
        3.7748947079e-08_f32 as f64,
        3.4473217170e-08_f32 as f64,
        7.5497894159e-08_f32 as f64,
    ],
    left_hi: [
        3.1415927410125732,
        2.677945137023926,
        2.356194496154785,
        2.158798933029175,
    ],
    left_lo: [
        -8.742277657347586e-08,
        -9.243493792610025e-08,
        -5.962440319251527e-09,
        -2.6867106317496336e-09,
    ],
    even: &[
        3.3333328366e-01_f32 as f64,
        1.4253635705e-01_f32 as f64,
        6.1687607318e-02_f32 as f64,
    ],
    odd: &[-1.9999158382e-01_f32 as f64, -1.0648017377e-01_f32 as f64],
    pi: 3.1415927410e+00_f32 as f64,
    pio2: 1.5707963705e+00_f32 as f64,
    pio4: 7.8539818525e-01_f32 as f64,
    three_pio4: 2.3561944962e+00_f32 as f64,
    big: 2.1267647932558654e37,  // 2^124
    tiny: 7.888609052210118e-31, // 2^-100
    down: 5.421010862427522e-20, // 2^-64
    up: 1.8446744073709552e19,   // 2^64
};

fn consts(v: &Vb<'_, '_>) -> &'static AtanConsts {
    if v.f32 { &F32 } else { &F64 }
}

/// `atan(ay / ax)` in [0, pi/2] for `ay, ax >= 0` within the fast path's range (see the module
/// docs), or where the lane mask `left` is set, `pi - atan(ay / ax)`: the same reduction with
/// `pi - atan(k)` as `hi + lo` and `-t` for `t`, so that the left half-plane is as accurate.
fn core(v: &mut Vb<'_, '_>, ay: Value, ax: Value, left: Option<Value>) -> Value {
    use FloatCC::GreaterThanOrEqual as Ge;
    let k = consts(v);
    let mut m = [ay; 4];
    for (i, &c) in k.cut.iter().enumerate() {
        let cx = v.mulc(ax, c);
        m[i] = v.cmp(Ge, ay, cx);
    }
    // k = 0, 1/2, 1, 3/2 by range; atan(k) = hi + lo (0 below the first cut)
    let zero = v.c(0.0);
    let mut kk = zero;
    let mut hi = zero;
    let mut lo = zero;
    for (i, &mi) in m.iter().enumerate() {
        if i < 3 {
            kk = v.selc(mi, 0.5 * (i + 1) as f64, kk);
        }
        hi = v.selc(mi, k.hi[i], hi);
        lo = v.selc(mi, k.lo[i], lo);
    }
    let nk = v.neg(kk);
    let num = v.fma(nk, ax, ay);
    let den = v.fma(kk, ay, ax);
    let nax = v.neg(ax);
    let num = v.sel(m[3], nax, num);
    let den = v.sel(m[3], ay, den);
    let mut t = v.div(num, den);
    if let Some(left) = left {
        let mut lh = v.c(k.left_hi[0]);
        let mut ll = v.c(k.left_lo[0]);
        for (i, &mi) in m[..3].iter().enumerate() {
            lh = v.selc(mi, k.left_hi[i + 1], lh);
            ll = v.selc(mi, k.left_lo[i + 1], ll);
        }
        lh = v.selc(m[3], k.hi[3], lh);
        ll = v.selc(m[3], k.lo[3], ll);
        hi = v.sel(left, lh, hi);
        lo = v.sel(left, ll, lo);
        let nt = v.neg(t);
        t = v.sel(left, nt, t);
    }
    let z = v.mul(t, t);
    let w = v.mul(z, z);
    let s1 = v.poly(w, k.even);
    let s1 = v.mul(z, s1);
    let s2 = v.poly(w, k.odd);
    let s2 = v.mul(w, s2);
    let s = v.add(s1, s2);
    // hi - ((t*s - lo) - t)
    let ts = v.mul(t, s);
    let a = v.sub(ts, lo);
    let a = v.sub(a, t);
    v.sub(hi, a)
}

/// arctan on F64X2 or F32X4.
pub(crate) fn atan(v: &mut Vb<'_, '_>, x: Value) -> Value {
    let ax = v.abs(x);
    let one = v.c(1.0);
    let r = core(v, ax, one, None);
    v.copysign(r, x)
}

/// arctan2(y, x) on F64X2 or F32X4.
pub(crate) fn atan2(v: &mut Vb<'_, '_>, y: Value, x: Value) -> Value {
    use FloatCC::*;
    let k = consts(v);
    let ax = v.abs(x);
    let ay = v.abs(y);
    let okx = v.cmpc(LessThanOrEqual, ax, k.big);
    let oky = v.cmpc(LessThanOrEqual, ay, k.big);
    let bx = v.cmpc(GreaterThanOrEqual, ax, k.tiny);
    let by = v.cmpc(GreaterThanOrEqual, ay, k.tiny);
    let ok = v.and(okx, oky);
    let big = v.or(bx, by);
    let ok = v.and(ok, big);
    let edge = v.not(ok);
    let neg = v.cmpc(LessThan, x, 0.0);
    let r = core(v, ay, ax, Some(neg));
    let fast = v.copysign(r, y);
    v.guard(edge, fast, |v| {
        let k = consts(v);
        // scale both into the fast path's range (a power of two: the ratio is unchanged)
        let hx = v.cmpc(GreaterThan, ax, k.big);
        let hy = v.cmpc(GreaterThan, ay, k.big);
        let huge = v.or(hx, hy);
        let up = v.c(k.up);
        let f = v.selc(big, 1.0, up);
        let f = v.selc(huge, k.down, f);
        let sx = v.mul(ax, f);
        let sy = v.mul(ay, f);
        let r = core(v, sy, sx, Some(neg));
        // special cases, as magnitudes
        let inf = f64::INFINITY;
        let ix = v.cmpc(Equal, ax, inf);
        let iy = v.cmpc(Equal, ay, inf);
        let pi = v.c(k.pi);
        let zero = v.c(0.0);
        let r_xinf = v.sel(neg, pi, zero);
        let r = v.sel(ix, r_xinf, r);
        let pio2 = v.c(k.pio2);
        let r = v.sel(iy, pio2, r);
        let p4 = v.c(k.pio4);
        let p34 = v.c(k.three_pio4);
        let r_ii = v.sel(neg, p34, p4);
        let both = v.and(ix, iy);
        let r = v.sel(both, r_ii, r);
        let zx = v.cmpc(Equal, ax, 0.0);
        let zy = v.cmpc(Equal, ay, 0.0);
        let zz = v.and(zx, zy);
        let sx = v.sign_mask(x);
        let r_zz = v.sel(sx, pi, zero);
        let r = v.sel(zz, r_zz, r);
        let r = v.copysign(r, y);
        let nx = v.cmp(Unordered, x, y);
        let nan = v.add(x, y);
        v.sel(nx, nan, r)
    })
}
