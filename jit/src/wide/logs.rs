//! The log family and the inverse hyperbolic functions per lane, for the wide routines: `vmath::log`'s
//! log, log2, log10 and log1p (f64, table-driven), `vmath::f32x4`'s log2, log10 and log1p (f32) and
//! `vmath::arc_hyp` (both) written for one lane (the operations in the order they are emitted, the
//! same constants and tables, `mul_add` where they emit `fma`), the bits of the inline route by
//! construction.
//!
//! log, log2 and log10 take the inline code's branch (a lane not positive, normal and finite sends
//! the chunk to the general path: subnormals scaled, special values selected; a normal lane gets the
//! fast path's bits there too). f64's table lookup (`vmath::pow_tables`' 16-row columns, the
//! statics the inline code loads from) splits a chunk into three stages: the reduction, the
//! level's lookup of the chunk's rows (`lanes::Look`: two permutes a column at AVX-512, scalar
//! loads at AVX2), the rest, so that the stages around the lookups vectorise
//! ([`log_chunk64`], [`log1p_chunk64`]). log1p and the inverse hyperbolic functions are
//! straight-line selects inline; here a chunk of ordinary lanes (f64 log1p: `-1 < x` finite, `|x|`
//! not below its tiny bound; arcsinh: `TINY <= |x|` finite; arccosh: `1 <= x` finite; arctanh:
//! `TINY <= |x| < 1`) skips the selects of the special values, which keep every such lane's value;
//! arcsinh's chunks without huge arguments (`|x| < HUGE`) skip those selects too (the fastest
//! path): the inline bits by construction, for 1-3 instructions per element fewer. The f64 inverse
//! hyperbolic functions stage their lookups as well, around their log1p core
//! ([`ArcLane::arc_chunk`]). f32 is, as inline,
//! native single precision (`vmath::f32x4`'s log1p: the argument scaled by `2^-k`, a division-free
//! kernel).

use super::lanes::{
    CHUNK, Lane, Line, Look, Paths, log_fast_ok, log_kernel32, log_reduce32, log_specials32, log_specials64,
    look_cols, map, pairs, sel, two_sum,
};
use crate::vmath::arc_hyp::{HUGE, HUGE_F32, TINY, TINY_F32};
use crate::vmath::f32x4::{
    FD_LN2_HI as LN2_HI_32, FD_LN2_LO as LN2_LO_32, IVLN2_HI as IVLN2_HI_32, IVLN2_LO as IVLN2_LO_32,
    IVLN10_HI as IVLN10_HI_32, IVLN10_LO as IVLN10_LO_32, LOG1P_TINY, LOG10_2_HI as LOG10_2_HI_32,
    LOG10_2_LO as LOG10_2_LO_32, MIN_NORMAL as MIN_NORMAL_32,
};
use crate::vmath::log::{Base, E, MIN_NORMAL, ROW_SHIFT, ROWS, TEN, TWO};
use crate::vmath::pow::OFF;

/// `vmath::pow::split`: `(k, z, u)` with `x = 2^k·z`, `bits(z)` in `[off, off + 2^52)`.
#[inline(always)]
pub(super) fn split(x: f64, off: i64) -> (f64, f64, u64) {
    let u = x.to_bits().wrapping_add((0x3ff0_0000_0000_0000 - off) as u64);
    let e = u >> 52;
    let kb = e.wrapping_add(0x4338_0000_0000_0000 - 0x3ff);
    let k = f64::from_bits(kb) + -6755399441055744.0;
    let m = (u & 0x000f_ffff_ffff_ffff).wrapping_add(off as u64);
    (k, f64::from_bits(m), u)
}

/// `vmath::log::reduce`: `(k, z, row)` with `x = 2^k·z`, subnormals scaled by 2^54 on the general
/// path (pow's split too, `pow.rs`).
#[inline(always)]
pub(super) fn reduce64(x: f64, general: bool) -> (f64, f64, u64) {
    if general {
        let sub = x < MIN_NORMAL;
        let xs = x * 18014398509481984.0; // 2^54
        let xx = sel(sub, xs, x);
        let kadj = sel(sub, -54.0, 0.0);
        let (k, z, u) = split(xx, OFF);
        (k + kadj, z, u >> ROW_SHIFT)
    } else {
        let (k, z, u) = split(x, OFF);
        (k, z, u >> ROW_SHIFT)
    }
}

/// `vmath::Vb::lookup_cols` for one lane: row `row & (ROWS - 1)` of each column of a 16-row table.
#[inline(always)]
pub(super) fn cols64<const W: usize>(table: &'static [[f64; ROWS]; W], row: u64) -> [f64; W] {
    let i = (row & (ROWS as u64 - 1)) as usize;
    table.map(|col| col[i])
}

/// `vmath::log::core`: `log_B(2^k·z)` from the table row of `z` (plus log1p's `c/u` where `cu` is
/// given).
#[inline(always)]
fn core64(b: &Base, k: f64, z: f64, [invc, ch, cl]: [f64; 3], cu: Option<f64>) -> f64 {
    let r = z.mul_add(invc, -1.0);
    let (w, wl) = if b.log2[1] == 0.0 {
        (k + ch, cl)
    } else {
        (k.mul_add(b.log2[0], ch), k.mul_add(b.log2[1], cl))
    };
    let (t1, wl) = match b.inv_ln {
        None => (r, wl),
        Some([sh, sl]) => {
            let t1 = r * sh;
            let e = r.mul_add(sh, -t1);
            let t2 = r.mul_add(sl, e);
            (t1, wl + t2)
        }
    };
    let wl = match cu {
        Some(cu) => {
            let cm = cu * invc;
            let t = r.mul_add(r, -r);
            let cm = t.mul_add(cm, cm);
            wl + cm
        }
        None => wl,
    };
    let hi = w + t1;
    let d = w - hi;
    let lo = d + t1;
    let lo = lo + wl;
    let r2 = r * r;
    let p = pairs(r, r2, b.poly);
    let lo = r2.mul_add(p, lo);
    hi + lo
}

/// `vmath::log::fast_or_general`'s paths for one lane: `log_B x`, on the general path with the
/// subnormal scaling and the special values.
#[inline(always)]
fn log64(b: &Base, x: f64, general: bool) -> f64 {
    let (k, z, row) = reduce64(x, general);
    let y = core64(b, k, z, cols64(b.table, row), None);
    if general { log_specials64(x, y) } else { y }
}

/// The f64 log family's chunk in three stages around its table lookup: the reduction, the
/// level's lookup of the chunk's rows (`look`: permutes at AVX-512, scalar loads at AVX2), the
/// rest, so that the stages around the lookups vectorise (at AVX2 LLVM would otherwise leave the
/// whole lane function scalar); the same operations per lane as [`log64`].
#[inline(always)]
fn log_chunk64<const GENERAL: bool>(b: &Base, c: &mut [f64; CHUNK], look: &impl Look) {
    let mut k = Line([0.0f64; CHUNK]);
    let mut z = Line([0.0f64; CHUNK]);
    let mut row = Line([0u64; CHUNK]);
    for j in 0..CHUNK {
        (k[j], z[j], row[j]) = reduce64(c[j], GENERAL);
    }
    let t = look_cols(look, b.table, &row);
    for j in 0..CHUNK {
        let y = core64(b, k[j], z[j], [t[0][j], t[1][j], t[2][j]], None);
        c[j] = if GENERAL { log_specials64(c[j], y) } else { y };
    }
}

/// `vmath::f32x4::log2_reduced`.
#[inline(always)]
fn log2_reduced32(f: f32, k: f32) -> f32 {
    let c = <f32 as Lane>::c;
    let t = log_kernel32(f);
    let a = f * c(IVLN2_LO_32);
    let a = t.mul_add(c(IVLN2_HI_32), a);
    let y = f.mul_add(c(IVLN2_HI_32), a);
    y + k
}

/// `vmath::f32x4::log10_reduced`.
#[inline(always)]
fn log10_reduced32(f: f32, k: f32) -> f32 {
    let c = <f32 as Lane>::c;
    let t = log_kernel32(f);
    let a = k * c(LOG10_2_LO_32);
    let a = f.mul_add(c(IVLN10_LO_32), a);
    let a = t.mul_add(c(IVLN10_HI_32), a);
    let y = f.mul_add(c(IVLN10_HI_32), a);
    k.mul_add(c(LOG10_2_HI_32), y)
}

/// `vmath::log::log1p_core` up to its table: `(k, z, row, c·2^-k)` of `u = 1 + x`, `kextra` added
/// into `k`.
#[inline(always)]
fn log1p_split(x: f64, kextra: Option<f64>) -> (f64, f64, u64, f64) {
    let u = x + 1.0;
    let (k, z, ub) = split(u, OFF);
    let c = log1p_error(x, u, k);
    let sc = f64::from_bits(((6755399441055744.0 + 1024.0) - k).to_bits() << 52);
    let c = c * 0.5;
    let c = c * sc;
    let k = match kextra {
        Some(ke) => k + ke,
        None => k,
    };
    (k, z, ub >> ROW_SHIFT, c)
}

/// `vmath::log::log1p_core`: log1p of finite `x > -1`, `kextra·ln2` added into `k`.
#[inline(always)]
fn log1p_core(x: f64, kextra: Option<f64>) -> f64 {
    let (k, z, row, c) = log1p_split(x, kextra);
    core64(&E, k, z, cols64(E.table, row), Some(c))
}

/// `vmath::log::log1p_error`: the rounding error of `u = 1 + x`.
#[inline(always)]
fn log1p_error<T: Lane>(x: T, u: T, k: T) -> T {
    let um = u - x;
    let c_big = T::c(1.0) - um;
    let u1 = u + T::c(-1.0);
    let c_small = x - u1;
    sel(k >= T::c(2.0), c_big, c_small)
}

/// `vmath::f32x4::log1p_core`: log1p of finite `x > -1` from `f = x·2^-k + (2^-k - 1)`, `k` the
/// exponent of `1 + x`, `kextra·ln2` added into `k`, the rounding error of `f` added where
/// `tracked`.
#[inline(always)]
fn log1p_core32(x: f32, kextra: Option<f32>, tracked: bool) -> f32 {
    let cc = <f32 as Lane>::c;
    let u = x + 1.0;
    let ub = u.to_bits().wrapping_add(0x3f800000 - 0x3f3504f3);
    let e = ub >> 23;
    let kb = e.wrapping_add(0x4b40_0000 - 0x7f);
    let k = f32::from_bits(kb) + -12582912.0;
    let top = ub & 0xff80_0000;
    let s = f32::from_bits(0x8000_0000u32.wrapping_sub(top));
    let xs = f32::from_bits(x.to_bits().wrapping_add(0x3f80_0000).wrapping_sub(top));
    let c1 = s.mul_add(0.25, -1.0);
    let k = match kextra {
        Some(ke) => k + ke,
        None => k,
    };
    let (f, a) = if tracked {
        let (f, e) = two_sum(xs, c1);
        let e = (-f).mul_add(e, e);
        let t = log_kernel32(f);
        (f, t + k.mul_add(cc(LN2_LO_32), e))
    } else {
        let f = xs + c1;
        let t = log_kernel32(f);
        (f, k.mul_add(cc(LN2_LO_32), t))
    };
    let a = a + f;
    k.mul_add(cc(LN2_HI_32), a)
}

/// What the inverse hyperbolic functions need beyond [`Lane`], per type: the edges of their
/// ranges and the log1p core of the type.
trait ArcLane: Lane {
    /// `vmath::arc_hyp::TINY` or `TINY_F32`.
    const TINY: f64;
    /// `vmath::arc_hyp::HUGE` or `HUGE_F32`.
    const HUGE: f64;
    /// The largest finite value of the type.
    const MAX: f64;
    /// `vmath::log::log1p_core` or `vmath::f32x4::log1p_core`.
    fn log1p_core(self, kextra: Option<Self>) -> Self;
    /// `x = post(x, log1p_core(pre(x)))` for each lane `x` of the chunk: f32 lane by lane, f64 in
    /// stages around the table lookup, by `look` ([`arc_chunk64`]).
    fn arc_chunk(
        c: &mut [Self; CHUNK],
        pre: impl Fn(Self) -> (Self, Option<Self>),
        post: impl Fn(Self, Self) -> Self,
        look: &impl Look,
    );
}

impl ArcLane for f64 {
    const TINY: f64 = TINY;
    const HUGE: f64 = HUGE;
    const MAX: f64 = f64::MAX;
    #[inline(always)]
    fn log1p_core(self, kextra: Option<f64>) -> f64 {
        log1p_core(self, kextra)
    }
    #[inline(always)]
    fn arc_chunk(
        c: &mut [f64; CHUNK],
        pre: impl Fn(f64) -> (f64, Option<f64>),
        post: impl Fn(f64, f64) -> f64,
        look: &impl Look,
    ) {
        arc_chunk64(c, pre, post, look)
    }
}

impl ArcLane for f32 {
    const TINY: f64 = TINY_F32;
    const HUGE: f64 = HUGE_F32;
    const MAX: f64 = f32::MAX as f64;
    #[inline(always)]
    fn log1p_core(self, kextra: Option<f32>) -> f32 {
        log1p_core32(self, kextra, false)
    }
    #[inline(always)]
    fn arc_chunk(
        c: &mut [f32; CHUNK],
        pre: impl Fn(f32) -> (f32, Option<f32>),
        post: impl Fn(f32, f32) -> f32,
        _look: &impl Look,
    ) {
        for x in c.iter_mut() {
            let (a, kextra) = pre(*x);
            *x = post(*x, a.log1p_core(kextra));
        }
    }
}

/// [`ArcLane::arc_chunk`] of f64 lanes (and log1p's chunk) in three stages around the table lookup
/// of `log1p_core`, as [`log_chunk64`]: `pre` and `log1p_split`, the level's lookup of the rows,
/// `core64` and `post`. The same operations per lane as `post(x, log1p_core(pre(x)))`.
#[inline(always)]
fn arc_chunk64(
    c: &mut [f64; CHUNK],
    pre: impl Fn(f64) -> (f64, Option<f64>),
    post: impl Fn(f64, f64) -> f64,
    look: &impl Look,
) {
    let mut k = Line([0.0f64; CHUNK]);
    let mut z = Line([0.0f64; CHUNK]);
    let mut row = Line([0u64; CHUNK]);
    let mut cu = Line([0.0f64; CHUNK]);
    for j in 0..CHUNK {
        let (a, kextra) = pre(c[j]);
        (k[j], z[j], row[j], cu[j]) = log1p_split(a, kextra);
    }
    let t = look_cols(look, E.table, &row);
    for j in 0..CHUNK {
        let r = core64(&E, k[j], z[j], [t[0][j], t[1][j], t[2][j]], Some(cu[j]));
        c[j] = post(c[j], r);
    }
}

/// `vmath::log::log1p`.
#[inline(always)]
fn log1p(x: f64) -> f64 {
    log1p_specials(x, log1p_core(x, None))
}

/// `vmath::log::log1p_specials` (f64): `x` where `|x| < 2^-53`, the special values.
#[inline(always)]
fn log1p_specials(x: f64, y: f64) -> f64 {
    let y = sel(x.abs() < 1.1102230246251565e-16, x, y);
    let ok = (x > -1.0) & (x < f64::INFINITY);
    let sp = sel(x < -1.0, crate::vmath::INVALID, x);
    let sp = sel(x == -1.0, f64::NEG_INFINITY, sp);
    sel(ok, y, sp)
}

/// `vmath::f32x4::log1p`.
#[inline(always)]
fn log1p32(x: f32) -> f32 {
    let c = <f32 as Lane>::c;
    let y = log1p_core32(x, None, true);
    let y = sel(x.abs() < c(LOG1P_TINY), x, y);
    let ok = (x > -1.0) & (x < f32::INFINITY);
    let sp = sel(x < -1.0, c(crate::vmath::INVALID), x);
    let sp = sel(x == -1.0, f32::NEG_INFINITY, sp);
    sel(ok, y, sp)
}

/// Whether log1p's f64 lane `x` is ordinary: `-1 < x <= MAX`, `|x| >= 2^-53`, where the inline
/// code's selects all keep `log1p_core(x)` (its fast path).
#[inline(always)]
fn log1p_fast_ok(x: f64) -> bool {
    (x > -1.0) & (x <= f64::MAX) & (x.abs() >= 1.1102230246251565e-16)
}

/// `vmath::arc_hyp::asinh` before its specials; `!huge` for lanes with `|x| < HUGE`, where the huge
/// arguments' selects keep `a` and add `0` into `k` (exact).
#[inline(always)]
fn asinh_core<T: ArcLane>(x: T, huge: bool) -> T {
    let (a, kextra) = asinh_arg(x, huge);
    a.log1p_core(kextra).copysign(x)
}

/// [`asinh_core`] up to its `log1p_core`: the argument, and `kextra` where `huge`.
#[inline(always)]
fn asinh_arg<T: ArcLane>(x: T, huge: bool) -> (T, Option<T>) {
    let c = T::c;
    let y = x.abs();
    let y2 = y * y;
    let q = (y2 + c(1.0)).sqrt();
    let small = y < c(2.0);
    let num = sel(small, y2, c(1.0));
    let den = sel(small, q + c(1.0), q + y);
    let t = num / den;
    let a_small = y + t;
    let w = y + y;
    let w = w + t;
    let a_big = w + c(-1.0);
    let a = sel(small, a_small, a_big);
    if huge {
        let huge = y >= c(T::HUGE);
        let a = sel(huge, y + c(-1.0), a);
        (a, Some(sel(huge, c(1.0), c(0.0))))
    } else {
        (a, None)
    }
}

/// `vmath::arc_hyp::asinh`.
#[inline(always)]
fn asinh<T: ArcLane>(x: T) -> T {
    asinh_specials(x, asinh_core(x, true))
}

/// [`asinh`] from [`asinh_core`]'s `r`: `x` itself where `|x|` is tiny, infinite or NaN.
#[inline(always)]
fn asinh_specials<T: ArcLane>(x: T, r: T) -> T {
    let c = T::c;
    let y = x.abs();
    // `&` of the two compares as the inline code's `band` (what LLVM vectorises)
    let ok = (y >= c(T::TINY)) & (y < c(f64::INFINITY));
    sel(ok, r, x)
}

/// `vmath::arc_hyp::acosh` before its specials. No path without the huge arguments' selects: over kiln bench's [1, 1e10]
/// (log-uniform, a sixth of the lanes huge) its chunk test cost more than it saved (f64 4.9 -> 5.4
/// ns per element, where `[1, 10]` gained 6% in instructions).
#[inline(always)]
fn acosh_core<T: ArcLane>(x: T) -> T {
    let (a, kextra) = acosh_arg(x);
    a.log1p_core(kextra)
}

/// [`acosh_core`] up to its `log1p_core`: the argument and `kextra`.
#[inline(always)]
fn acosh_arg<T: ArcLane>(x: T) -> (T, Option<T>) {
    let c = T::c;
    let t = x + c(-1.0);
    let small = x < c(2.0);
    let ss = t.mul_add(t, t + t);
    let sb = x.mul_add(x, c(-1.0));
    let sq = sel(small, ss, sb).sqrt();
    let a_small = t + sq;
    let w = x + sq;
    let a_big = w + c(-1.0);
    let a = sel(small, a_small, a_big);
    let huge = x >= c(T::HUGE);
    let a = sel(huge, t, a);
    (a, Some(sel(huge, c(1.0), c(0.0))))
}

/// `vmath::arc_hyp::acosh`.
#[inline(always)]
fn acosh<T: ArcLane>(x: T) -> T {
    acosh_specials(x, acosh_core(x))
}

/// [`acosh`] from [`acosh_core`]'s `r`: its special values where `x` is below 1, infinite or NaN.
#[inline(always)]
fn acosh_specials<T: ArcLane>(x: T, r: T) -> T {
    let c = T::c;
    let ok = (x >= c(1.0)) & (x < c(f64::INFINITY));
    let sp = sel(x == c(f64::INFINITY), c(f64::INFINITY), x);
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let bad = !(x >= c(1.0));
    let sp = sel(bad, c(crate::vmath::INVALID), sp);
    sel(ok, r, sp)
}

/// `vmath::arc_hyp::atanh` before its specials.
#[inline(always)]
fn atanh_core<T: ArcLane>(x: T) -> T {
    let (a, kextra) = atanh_arg(x);
    atanh_end(x, a.log1p_core(kextra))
}

/// [`atanh_core`] up to its `log1p_core`: the argument.
#[inline(always)]
fn atanh_arg<T: ArcLane>(x: T) -> (T, Option<T>) {
    let c = T::c;
    let y = x.abs();
    let den = c(1.0) - y;
    let d = y / den;
    let y2 = y + y;
    let a_small = y2.mul_add(d, y2);
    let a_big = d + d;
    (sel(y < c(0.5), a_small, a_big), None)
}

/// [`atanh_core`] after its `log1p_core` of value `r`: half of it, with `x`'s sign.
#[inline(always)]
fn atanh_end<T: ArcLane>(x: T, r: T) -> T {
    let r = r * T::c(0.5);
    r.copysign(x)
}

/// `vmath::arc_hyp::atanh`.
#[inline(always)]
fn atanh<T: ArcLane>(x: T) -> T {
    atanh_specials(x, atanh_core(x))
}

/// [`atanh`] from [`atanh_core`]'s `r`: ±inf at ±1, NaN beyond, `x` itself where tiny.
#[inline(always)]
fn atanh_specials<T: ArcLane>(x: T, r: T) -> T {
    let c = T::c;
    let y = x.abs();
    let r = sel(y == c(1.0), c(f64::INFINITY).copysign(x), r);
    let r = sel(y > c(1.0), c(crate::vmath::INVALID), r);
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let tiny = !(y >= c(T::TINY));
    sel(tiny, x, r)
}

pub(super) struct Ln;
pub(super) struct Log2;
pub(super) struct Log10;
pub(super) struct Log1p;
pub(super) struct Asinh;
pub(super) struct Acosh;
pub(super) struct Atanh;

macro_rules! log_paths {
    ($($f:ident: $t:ty, $min:expr, $max:expr, $reduce:ident, $specials:ident, $reduced:ident;)*) => {
        $(
            impl Paths<$t> for $f {
                #[inline(always)]
                fn fast_ok(x: $t) -> bool {
                    log_fast_ok(x, $min, $max)
                }
                /// `fast_or_general`'s fast path: no subnormal scaling, no specials.
                #[inline(always)]
                fn fast(x: $t) -> $t {
                    let (f, k) = $reduce(x, false);
                    $reduced(f, k)
                }
                #[inline(always)]
                fn general(x: $t) -> $t {
                    let (f, k) = $reduce(x, true);
                    $specials(x, $reduced(f, k))
                }
            }
        )*
    };
}

log_paths! {
    Log2: f32, MIN_NORMAL_32, f32::MAX as f64, log_reduce32, log_specials32, log2_reduced32;
    Log10: f32, MIN_NORMAL_32, f32::MAX as f64, log_reduce32, log_specials32, log10_reduced32;
}

/// The f64 log family's paths: positive, normal and finite lanes take the fast path, by
/// [`log_chunk64`]'s stages per chunk.
macro_rules! log64_paths {
    ($($f:ident: $b:ident;)*) => {
        $(
            impl Paths<f64> for $f {
                #[inline(always)]
                fn fast_ok(x: f64) -> bool {
                    log_fast_ok(x, MIN_NORMAL, f64::MAX)
                }
                #[inline(always)]
                fn fast(x: f64) -> f64 {
                    log64(&$b, x, false)
                }
                #[inline(always)]
                fn general(x: f64) -> f64 {
                    log64(&$b, x, true)
                }
                #[inline(always)]
                fn fast_chunk(c: &mut [f64; CHUNK], look: &impl Look) {
                    log_chunk64::<false>(&$b, c, look)
                }
                #[inline(always)]
                fn general_chunk(c: &mut [f64; CHUNK], look: &impl Look) {
                    log_chunk64::<true>(&$b, c, look)
                }
            }
        )*
    };
}

log64_paths! {
    Ln: E;
    Log2: TWO;
    Log10: TEN;
}

/// f64 log1p's chunk in stages around its table lookup ([`arc_chunk64`] of `x` itself), with the
/// special values' selects on the general path.
#[inline(always)]
fn log1p_chunk64<const GENERAL: bool>(c: &mut [f64; CHUNK], look: &impl Look) {
    arc_chunk64(
        c,
        |x| (x, None),
        |x, y| if GENERAL { log1p_specials(x, y) } else { y },
        look,
    )
}

// log1p and the inverse hyperbolic functions: the inline code is straight-line selects, one path;
// here a chunk whose lanes are all ordinary (no special value, no argument so small that the
// result is `x`) skips those selects, whose every lane would keep the core's value: the same bits.
// Huge arguments (arcsinh's and arccosh's `log(2|x|)` from HUGE on) stay on the fast path (a
// chunk test at HUGE alone sent almost every chunk of arccosh over [1, 1e10], the bench's, down
// the general path, 10% slower than before); arcsinh's chunk with none takes the fastest path,
// without their selects.

impl Paths<f64> for Log1p {
    #[inline(always)]
    fn fast_ok(x: f64) -> bool {
        log1p_fast_ok(x)
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        log1p_core(x, None)
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        log1p(x)
    }
    #[inline(always)]
    fn fast_chunk(c: &mut [f64; CHUNK], look: &impl Look) {
        log1p_chunk64::<false>(c, look)
    }
    #[inline(always)]
    fn general_chunk(c: &mut [f64; CHUNK], look: &impl Look) {
        log1p_chunk64::<true>(c, look)
    }
}

/// One path: the chunk's test cost f32 more than the selects it skips (10.1 instructions per
/// element against 9.9).
impl Paths<f32> for Log1p {
    #[inline(always)]
    fn fast_ok(_: f32) -> bool {
        true
    }
    #[inline(always)]
    fn fast(x: f32) -> f32 {
        log1p32(x)
    }
    #[inline(always)]
    fn general(x: f32) -> f32 {
        log1p32(x)
    }
}

impl<T: ArcLane> Paths<T> for Asinh {
    /// `TINY <= |x| <= MAX`.
    #[inline(always)]
    fn fast_ok(x: T) -> bool {
        let y = x.abs();
        (y >= T::c(T::TINY)) & (y <= T::c(T::MAX))
    }
    #[inline(always)]
    fn fast(x: T) -> T {
        asinh_core(x, true)
    }
    /// `TINY <= |x| < HUGE`.
    #[inline(always)]
    fn fastest_ok(x: T) -> bool {
        let y = x.abs();
        (y >= T::c(T::TINY)) & (y < T::c(T::HUGE))
    }
    #[inline(always)]
    fn fastest(x: T) -> T {
        asinh_core(x, false)
    }
    #[inline(always)]
    fn general(x: T) -> T {
        asinh(x)
    }
    #[inline(always)]
    fn fastest_chunk(c: &mut [T; CHUNK], look: &impl Look) {
        T::arc_chunk(c, |x| asinh_arg(x, false), |x, r| r.copysign(x), look)
    }
    #[inline(always)]
    fn fast_chunk(c: &mut [T; CHUNK], look: &impl Look) {
        T::arc_chunk(c, |x| asinh_arg(x, true), |x, r| r.copysign(x), look)
    }
    #[inline(always)]
    fn general_chunk(c: &mut [T; CHUNK], look: &impl Look) {
        T::arc_chunk(
            c,
            |x| asinh_arg(x, true),
            |x, r| asinh_specials(x, r.copysign(x)),
            look,
        )
    }
}

impl<T: ArcLane> Paths<T> for Acosh {
    /// `1 <= x <= MAX`.
    #[inline(always)]
    fn fast_ok(x: T) -> bool {
        (x >= T::c(1.0)) & (x <= T::c(T::MAX))
    }
    #[inline(always)]
    fn fast(x: T) -> T {
        acosh_core(x)
    }
    #[inline(always)]
    fn general(x: T) -> T {
        acosh(x)
    }
    #[inline(always)]
    fn fast_chunk(c: &mut [T; CHUNK], look: &impl Look) {
        T::arc_chunk(c, acosh_arg, |_, r| r, look)
    }
    #[inline(always)]
    fn general_chunk(c: &mut [T; CHUNK], look: &impl Look) {
        T::arc_chunk(c, acosh_arg, acosh_specials, look)
    }
}

impl<T: ArcLane> Paths<T> for Atanh {
    /// `TINY <= |x| < 1`.
    #[inline(always)]
    fn fast_ok(x: T) -> bool {
        let y = x.abs();
        (y >= T::c(T::TINY)) & (y < T::c(1.0))
    }
    #[inline(always)]
    fn fast(x: T) -> T {
        atanh_core(x)
    }
    #[inline(always)]
    fn general(x: T) -> T {
        atanh(x)
    }
    #[inline(always)]
    fn fast_chunk(c: &mut [T; CHUNK], look: &impl Look) {
        T::arc_chunk(c, atanh_arg, atanh_end, look)
    }
    #[inline(always)]
    fn general_chunk(c: &mut [T; CHUNK], look: &impl Look) {
        T::arc_chunk(c, atanh_arg, |x, r| atanh_specials(x, atanh_end(x, r)), look)
    }
}

// The f64 log family and inverse hyperbolic functions look their table rows up by permutes at
// AVX-512.
super::lanes::levels! {
    log64: f64, Ln, permuted;
    log2_64: f64, Log2, permuted;
    log2_32: f32, Log2;
    log10_64: f64, Log10, permuted;
    log10_32: f32, Log10;
    log1p64: f64, Log1p, permuted;
    log1p32: f32, Log1p;
    asinh64: f64, Asinh, permuted;
    asinh32: f32, Asinh;
    acosh64: f64, Acosh, permuted;
    acosh32: f32, Acosh;
    atanh64: f64, Atanh, permuted;
    atanh32: f32, Atanh;
}
