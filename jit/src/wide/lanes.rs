//! The per-lane algorithms of the wide routines, each the inline vector math's general path written
//! for one lane (the operations in the order `vmath` emits them, its constants, `mul_add` where it
//! emits `fma`), and the `#[target_feature]` loops over slices that rustc vectorises.

use super::{Io, write};
use crate::vmath::exp::{ExpConsts, F64 as EXP64};
use crate::vmath::f32x4::{
    C as T32_C, NEAR as T32_NEAR, PIO2_1 as T32_PIO2_1, PIO2_2 as T32_PIO2_2, PIO2_3 as T32_PIO2_3,
    REDUCE_MAX as T32_REDUCE_MAX, S as T32_S, T as T32_T, TINY as T32_TINY, TWO_OVER_PI as T32_TWO_OVER_PI,
};
use crate::vmath::f32x4::{
    F32 as EXP32, FD_LN2_HI as LN2_HI_32, FD_LN2_LO as LN2_LO_32, LOG1P_Q, MIN_NORMAL as MIN_NORMAL_32,
};
use crate::vmath::log::ROWS;
use crate::vmath::trig::{
    C as T64_C, C1 as T64_C1, C2 as T64_C2, C3 as T64_C3, REDUCE_MAX as T64_REDUCE_MAX,
    ROUNDER as T64_ROUNDER, S as T64_S, TAN_D as T64_TAN_D, TAN_M as T64_TAN_M, TINY as T64_TINY,
    TWO_OVER_PI as T64_TWO_OVER_PI,
};

/// The operations the algorithms need, on f64 and on f32 (constants rounded to the type as
/// `vmath::Vb::c` rounds them).
pub(super) trait Lane:
    Copy
    + PartialOrd
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Neg<Output = Self>
    + std::ops::Div<Output = Self>
{
    /// The float nearest the f64 `x` (`x as f32` on f32).
    fn c(x: f64) -> Self;
    fn abs(self) -> Self;
    fn sqrt(self) -> Self;
    /// `|self|` with the sign bit of `s` (`vmath::Vb::copysign`).
    fn copysign(self, s: Self) -> Self;
    /// `self` (sign bit clear) with the sign bit of `s` or-ed in (`vmath::Vb::or_sign`).
    fn or_sign(self, s: Self) -> Self;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn round_ties_even(self) -> Self;
    fn floor(self) -> Self;
    /// `2^j` for integers `j` that give a normal result (`vmath::Vb::pow2`).
    fn pow2(self) -> Self;
    /// `self · 2^k` for integers `k` that keep it normal: `k` added into the exponent field
    /// (`vmath::Vb::ldexp_fast`).
    fn ldexp_fast(self, k: Self) -> Self;
}

impl Lane for f64 {
    #[inline(always)]
    fn c(x: f64) -> f64 {
        x
    }
    #[inline(always)]
    fn abs(self) -> f64 {
        f64::abs(self)
    }
    #[inline(always)]
    fn sqrt(self) -> f64 {
        f64::sqrt(self)
    }
    #[inline(always)]
    fn copysign(self, s: f64) -> f64 {
        f64::copysign(self, s)
    }
    #[inline(always)]
    fn or_sign(self, s: f64) -> f64 {
        f64::from_bits(self.to_bits() | (s.to_bits() & (1 << 63)))
    }
    #[inline(always)]
    fn mul_add(self, a: f64, b: f64) -> f64 {
        f64::mul_add(self, a, b)
    }
    #[inline(always)]
    fn round_ties_even(self) -> f64 {
        f64::round_ties_even(self)
    }
    #[inline(always)]
    fn floor(self) -> f64 {
        f64::floor(self)
    }
    #[inline(always)]
    fn pow2(self) -> f64 {
        // j + (1.5·2^52 + 1023) holds j + 1023 in its low mantissa bits; shifting by 52 keeps just them
        f64::from_bits((self + (6755399441055744.0 + 1023.0)).to_bits() << 52)
    }
    #[inline(always)]
    fn ldexp_fast(self, k: f64) -> f64 {
        f64::from_bits(
            self.to_bits()
                .wrapping_add((k + 6755399441055744.0).to_bits() << 52),
        )
    }
}

impl Lane for f32 {
    #[inline(always)]
    fn c(x: f64) -> f32 {
        x as f32
    }
    #[inline(always)]
    fn abs(self) -> f32 {
        f32::abs(self)
    }
    #[inline(always)]
    fn sqrt(self) -> f32 {
        f32::sqrt(self)
    }
    #[inline(always)]
    fn copysign(self, s: f32) -> f32 {
        f32::copysign(self, s)
    }
    #[inline(always)]
    fn or_sign(self, s: f32) -> f32 {
        f32::from_bits(self.to_bits() | (s.to_bits() & (1 << 31)))
    }
    #[inline(always)]
    fn mul_add(self, a: f32, b: f32) -> f32 {
        f32::mul_add(self, a, b)
    }
    #[inline(always)]
    fn round_ties_even(self) -> f32 {
        f32::round_ties_even(self)
    }
    #[inline(always)]
    fn floor(self) -> f32 {
        f32::floor(self)
    }
    #[inline(always)]
    fn pow2(self) -> f32 {
        f32::from_bits((self + (12582912.0 + 127.0) as f32).to_bits() << 23)
    }
    #[inline(always)]
    fn ldexp_fast(self, k: f32) -> f32 {
        f32::from_bits(self.to_bits().wrapping_add((k + 12582912.0).to_bits() << 23))
    }
}

#[inline(always)]
pub(super) fn sel<T>(m: bool, a: T, b: T) -> T {
    if m { a } else { b }
}

/// `vmath::Vb::poly`: Horner's rule with FMA, coefficients ascending.
#[inline(always)]
pub(super) fn poly<T: Lane>(x: T, coeffs: &[f64]) -> T {
    let (&last, rest) = coeffs.split_last().expect("a polynomial has coefficients");
    let mut acc = T::c(last);
    for &c in rest.iter().rev() {
        acc = acc.mul_add(x, T::c(c));
    }
    acc
}

/// `vmath::Vb::two_sum`: `(s, e)` with `s + e = a + b` exactly (Knuth's TwoSum).
#[inline(always)]
pub(super) fn two_sum<T: Lane>(a: T, b: T) -> (T, T) {
    let s = a + b;
    let bb = s - a;
    let t = s - bb;
    (s, (a - t) + (b - bb))
}

/// `vmath::Vb::fast_two_sum`: `a + b` and its rounding error, for `|a| >= |b|`.
#[inline(always)]
pub(super) fn fast_two_sum<T: Lane>(a: T, b: T) -> (T, T) {
    let s = a + b;
    let t = s - a;
    (s, b - t)
}

/// `vmath::Vb::pairs`: pairs `c[2i] + c[2i+1]·x`, summed by Horner's scheme in `x2` (at most 32
/// coefficients).
#[inline(always)]
pub(super) fn pairs<T: Lane>(x: T, x2: T, coeffs: &[f64]) -> T {
    let (t, n) = pair_terms(x, coeffs);
    let mut acc = t[n - 1];
    for i in (0..n - 1).rev() {
        acc = x2.mul_add(acc, t[i]);
    }
    acc
}

/// `vmath::Vb::pair_terms`: `c[2i] + x·c[2i+1]` (one `mul_add` each), a lone last coefficient
/// as it is; and how many (at most 16, 32 coefficients).
#[inline(always)]
fn pair_terms<T: Lane>(x: T, coeffs: &[f64]) -> ([T; 16], usize) {
    let mut t = [x; 16];
    for (i, p) in coeffs.chunks(2).enumerate() {
        t[i] = match p.get(1) {
            Some(&hi) => x.mul_add(T::c(hi), T::c(p[0])),
            None => T::c(p[0]),
        };
    }
    (t, coeffs.len().div_ceil(2))
}

/// `vmath::Vb::poly2`: even and odd halves.
#[inline(always)]
pub(super) fn poly2<T: Lane, const E: usize, const O: usize>(x: T, x2: T, coeffs: &[f64]) -> T {
    let (e, o) = poly_halves::<T, E, O>(x2, coeffs);
    o.mul_add(x, e)
}

/// `vmath::Vb::poly_halves`: `(E(x2), O(x2))`.
#[inline(always)]
pub(super) fn poly_halves<T: Lane, const E: usize, const O: usize>(x2: T, coeffs: &[f64]) -> (T, T) {
    let mut even = [0.0; E];
    let mut odd = [0.0; O];
    for (i, &c) in coeffs.iter().enumerate() {
        if i % 2 == 0 {
            even[i / 2] = c;
        } else {
            odd[i / 2] = c;
        }
    }
    (poly(x2, &even), poly(x2, &odd))
}

/// `vmath::exp::exp_arg`: `(k, r)` with `x = k·ln2 + r`.
#[inline(always)]
pub(super) fn exp_arg<T: Lane>(c: &ExpConsts, x: T) -> (T, T) {
    let k = (x * T::c(c.log2e)).round_ties_even();
    let nk = -k;
    let r = nk.mul_add(T::c(c.ln2_hi), x);
    (k, nk.mul_add(T::c(c.ln2_lo), r))
}

/// `vmath::exp::exp_parts` (no correction): `(k, s)` with `e^x = (1 + s)·2^k`.
#[inline(always)]
pub(super) fn exp_parts<T: Lane, const E: usize, const O: usize>(c: &ExpConsts, x: T) -> (T, T) {
    let (k, r) = exp_arg(c, x);
    let r2 = r * r;
    let q = poly2::<T, E, O>(r, r2, c.q);
    (k, r2.mul_add(q, r))
}

/// `vmath::exp::exp_reduce` (no correction): `(k, e^r)` with `x = k·ln2 + r`.
#[inline(always)]
pub(super) fn exp_reduce<T: Lane, const E: usize, const O: usize>(c: &ExpConsts, x: T) -> (T, T) {
    let (k, s) = exp_parts::<T, E, O>(c, x);
    (k, s + T::c(1.0))
}

/// `vmath::exp::clamp`: `x` into `[lo, hi]`, keeping NaN.
#[inline(always)]
pub(super) fn clamp<T: Lane>(x: T, lo: f64, hi: f64) -> T {
    let hi = T::c(hi);
    let x = sel(x > hi, hi, x);
    let lo = T::c(lo);
    sel(x < lo, lo, x)
}

/// `vmath::Vb::scale`: `p·2^k` by two exact scalings.
#[inline(always)]
pub(super) fn scale<T: Lane>(p: T, k: T) -> T {
    let k1 = (k * T::c(0.5)).floor();
    let k2 = k - k1;
    p * k1.pow2() * k2.pow2()
}

/// Whether `x` takes `vmath::exp::exp_with`'s fast path: `x² < edge²` (NaN does not).
#[inline(always)]
fn exp_fast_ok<T: Lane>(c: &ExpConsts, x: T) -> bool {
    x * x < T::c(c.edge * c.edge)
}

/// `vmath::exp::exp_with`'s fast path: `k` added into the exponent field.
#[inline(always)]
fn exp_fast<T: Lane, const E: usize, const O: usize>(c: &ExpConsts, x: T) -> T {
    let (k, p) = exp_reduce::<T, E, O>(c, x);
    p.ldexp_fast(k)
}

/// `vmath::exp::exp_with`'s general path: clamp, reduction, polynomial, two exact scalings.
#[inline(always)]
pub(super) fn exp_general<T: Lane, const E: usize, const O: usize>(c: &ExpConsts, x: T) -> T {
    let x = clamp(x, c.clamp.0, c.clamp.1);
    let (k, p) = exp_reduce::<T, E, O>(c, x);
    scale(p, k)
}

/// `vmath::log::specials`: `y` where `x` is positive and finite, else log's special values.
#[inline(always)]
pub(super) fn log_specials64(x: f64, y: f64) -> f64 {
    let ok = (x > 0.0) & (x < f64::INFINITY);
    let sp = sel(x < 0.0, crate::vmath::INVALID, x);
    let sp = sel(x == 0.0, f64::NEG_INFINITY, sp);
    sel(ok, y, sp)
}

/// `vmath::f32x4::reduce` (after `unsubnormal` on the general path): `(f, k)` with `x = 2^k·(1 + f)`,
/// subnormals scaled by 2^25 first on the general path.
#[inline(always)]
pub(super) fn log_reduce32(x: f32, general: bool) -> (f32, f32) {
    let sub = general & (x < MIN_NORMAL_32 as f32);
    let xs = x * 33554432.0; // 2^25
    let xx = sel(sub, xs, x);
    let kadj = sel(sub, -25.0, 0.0);
    let u = xx.to_bits().wrapping_add(0x3f800000 - 0x3f3504f3);
    let e = u >> 23;
    let kb = e.wrapping_add(0x4b40_0000 - 0x7f);
    let kf = f32::from_bits(kb) + -12582912.0;
    let k = if general { kf + kadj } else { kf };
    let m = (u & 0x007f_ffff).wrapping_add(0x3f3504f3);
    let f = f32::from_bits(m) + -1.0;
    (f, k)
}

/// `vmath::f32x4::kernel`: `t = f²·Q(f)`, `log(1 + f) ≈ f + t`.
#[inline(always)]
pub(super) fn log_kernel32(f: f32) -> f32 {
    let q = poly(f, &LOG1P_Q);
    let f2 = f * f;
    f2 * q
}

/// `vmath::f32x4::specials`: `y` where `x` is positive and finite, else log's special values.
#[inline(always)]
pub(super) fn log_specials32(x: f32, y: f32) -> f32 {
    let ok = (x > 0.0) & (x < f32::INFINITY);
    let sp = sel(x < 0.0, crate::vmath::INVALID as f32, x);
    let sp = sel(x == 0.0, f32::NEG_INFINITY, sp);
    sel(ok, y, sp)
}

/// `vmath::f32x4::log`: on the fast path (`general` false) `log_normal(x, None)`, on the general
/// path subnormals scaled by 2^25, `log_normal(x, Some(kadj))` and the special values.
#[inline(always)]
fn log_f32_lane(x: f32, general: bool) -> f32 {
    let c = <f32 as Lane>::c;
    let (f, k) = log_reduce32(x, general);
    let t = log_kernel32(f);
    let a = k.mul_add(c(LN2_LO_32), t);
    let a = a + f;
    let y = k.mul_add(c(LN2_HI_32), a);
    if !general {
        return y;
    }
    log_specials32(x, y)
}

/// Lanes per chunk: two AVX-512 vectors of f64, one of f32, four AVX2 vectors of f64.
pub(super) const CHUNK: usize = 16;

/// A value on a cache line of its own: the routines' stack copies of a chunk. The stack of a
/// routine's caller (a compiled kernel) is aligned to 16 bytes only, and a chunk that straddles two
/// lines makes each full-width load of it a split load, after a store to it that cannot be
/// forwarded: float32 sin took 1.66 ns an element instead of 0.56 in the processes whose stack
/// happened to put the chunk across lines (half of them; `kiln bench --functions`).
#[repr(C, align(64))]
#[derive(Clone, Copy)]
pub(super) struct Line<T>(pub(super) T);

impl<T> std::ops::Deref for Line<T> {
    type Target = T;
    #[inline(always)]
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> std::ops::DerefMut for Line<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut T {
        &mut self.0
    }
}

/// One function on one type: which lanes may take the fast path, the fast path, the general path.
/// Function items rather than closures, so that each is inlined into the `#[target_feature]`
/// function (a closure made outside it and outlined is compiled without its features: libm's `fma`
/// per lane; one made inside it has them, as `levels!`' lookups by permutes).
pub(super) trait Paths<T: Copy> {
    /// Whether [`map`] tests the whole slice before its chunks: where every lane allows the fast
    /// path (and none the fastest), each chunk runs [`Paths::fast_chunk`] with no test of its own
    /// (the same bits: each chunk's own choice). For a routine whose test per chunk costs more
    /// than a pass over the slice: f32 sin and cos (in cache at AVX-512, `examples/routine_speed`,
    /// runs alternated: sin 0.50-0.53 -> 0.43-0.45 ns an element, cos 0.54-0.57 -> 0.41-0.44),
    /// where exp, whose test is one compare, lost 4-8%.
    const TEST_SLICE: bool = false;
    /// Whether `x` may take the fast path.
    fn fast_ok(x: T) -> bool;
    /// The fast path.
    fn fast(x: T) -> T;
    /// The general path.
    fn general(x: T) -> T;
    /// Whether `x` may take [`Paths::fastest`], a narrower case of the fast path (by default no
    /// lane may, and the chunk's test of it folds away).
    #[inline(always)]
    fn fastest_ok(_x: T) -> bool {
        false
    }
    /// The fastest path (by default the fast one).
    #[inline(always)]
    fn fastest(x: T) -> T {
        Self::fast(x)
    }
    /// The fastest path over a chunk (by default lane by lane; the f64 inverse hyperbolic
    /// functions stage their table lookups, by `look`, `logs.rs`).
    #[inline(always)]
    fn fastest_chunk(c: &mut [T; CHUNK], _look: &impl Look) {
        for x in c.iter_mut() {
            *x = Self::fastest(*x);
        }
    }
    /// The fast path over a chunk (by default lane by lane; the f64 log family stages its table
    /// lookups, by `look`, `logs.rs`).
    #[inline(always)]
    fn fast_chunk(c: &mut [T; CHUNK], _look: &impl Look) {
        for x in c.iter_mut() {
            *x = Self::fast(*x);
        }
    }
    /// The general path over a chunk (as [`Paths::fast_chunk`]).
    #[inline(always)]
    fn general_chunk(c: &mut [T; CHUNK], _look: &impl Look) {
        for x in c.iter_mut() {
            *x = Self::general(*x);
        }
    }
}

/// The chunk's lanes by the fastest path if every one of them allows it, else by the fast path if
/// every one allows that, else by the general path: the inline path's branch, taken per chunk
/// rather than per vector (where `fast_ok` holds, the paths give the same bits); `look` the level's
/// lookup of 16-row table columns.
#[inline(always)]
pub(super) fn chunk<T: Copy, P: Paths<T>>(c: &mut [T; CHUNK], look: &impl Look) {
    let mut ok = true;
    let mut best = true;
    for &x in c.iter() {
        ok &= P::fast_ok(x);
        best &= P::fastest_ok(x);
    }
    if best {
        P::fastest_chunk(c, look);
    } else if ok {
        P::fast_chunk(c, look);
    } else {
        P::general_chunk(c, look);
    }
}

/// [`chunk`] over the slice (see [`map_with`]).
#[inline(always)]
pub(super) fn map<T: Copy, P: Paths<T>>(io: Io<'_, T>) {
    if P::TEST_SLICE && all_fast::<T, P>(io.src()) {
        map_with!(io, |c| { P::fast_chunk(c, &index_col) });
    } else {
        map_with!(io, |c| { chunk::<T, P>(c, &index_col) });
    }
}

/// Whether every lane of `xs` allows the fast path and none the fastest ([`Paths::TEST_SLICE`]).
#[inline(always)]
fn all_fast<T: Copy, P: Paths<T>>(xs: &[T]) -> bool {
    xs.iter()
        .fold(true, |ok, &x| ok & P::fast_ok(x) & !P::fastest_ok(x))
}

/// A level's lookup of a chunk's rows in a column of a 16-row table (the f64 log family's,
/// `vmath::log`, and pow's, `vmath::pow`): each lane's value, the row the low 4 bits of the
/// lane's index. [`index_col`] by indexing (AVX2: scalar loads), [`permute_col`] by permutes
/// (AVX-512: the column's 16 rows in two registers, 8 lanes looked up by one `vpermt2pd`).
pub(super) trait Look: Fn(&'static [f64; ROWS], &[u64; CHUNK]) -> Line<[f64; CHUNK]> {}

impl<F: Fn(&'static [f64; ROWS], &[u64; CHUNK]) -> Line<[f64; CHUNK]>> Look for F {}

/// Each column of `table` looked up by `look` (each lane's row in `rows`).
#[inline(always)]
pub(super) fn look_cols<const W: usize>(
    look: &impl Look,
    table: &'static [[f64; ROWS]; W],
    rows: &[u64; CHUNK],
) -> Line<[[f64; CHUNK]; W]> {
    let mut out = Line([[0.0; CHUNK]; W]);
    for (o, col) in out.iter_mut().zip(table) {
        *o = *look(col, rows);
    }
    out
}

/// [`Look`] by indexing.
#[inline(always)]
pub(super) fn index_col(col: &'static [f64; ROWS], rows: &[u64; CHUNK]) -> Line<[f64; CHUNK]> {
    let mut out = Line([0.0; CHUNK]);
    for (v, &r) in out.iter_mut().zip(rows) {
        *v = col[(r & (ROWS as u64 - 1)) as usize];
    }
    out
}

/// [`Look`] by permutes, for the AVX-512 routines (`vpermt2pd` reads the low 4 bits of each
/// index: the row).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
#[inline]
pub(super) fn permute_col(col: &'static [f64; ROWS], rows: &[u64; CHUNK]) -> Line<[f64; CHUNK]> {
    use std::arch::x86_64::{__m512d, __m512i, _mm512_permutex2var_pd};
    const _: () = assert!(ROWS == 16 && CHUNK == 16, "two registers of rows, two of lanes");
    let idx: [__m512i; 2] = bytemuck::cast(*rows);
    let [lo, hi]: [__m512d; 2] = bytemuck::cast(*col);
    let v = [
        _mm512_permutex2var_pd(lo, idx[0], hi),
        _mm512_permutex2var_pd(lo, idx[1], hi),
    ];
    Line(bytemuck::cast(v))
}

/// [`index_col`] where no AVX-512 level exists (the routines compile, and no level is on the host).
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn permute_col(col: &'static [f64; ROWS], rows: &[u64; CHUNK]) -> Line<[f64; CHUNK]> {
    index_col(col, rows)
}

/// The function `$f` (`fn(&mut [T; CHUNK])`) over the chunks of the [`Io`] `$io`: in place, or each
/// chunk's lanes read from the source (the caller's input read where it lies, no copy into the
/// destination first, its loads spread among the chunks' arithmetic) and written into the
/// destination; the remainder (fewer than [`CHUNK`] lanes) is copied into a chunk padded with its
/// first element, computed, and copied out. A macro, so that `$f` is called directly where it is
/// expanded: a routine whose chunks use a level's intrinsics (a `#[target_feature]` function,
/// `tanh32.rs`) expands it in its own `#[target_feature]` function, whose calls of it are safe and
/// inlined (through a closure or a function argument they were neither).
macro_rules! map_with {
    // the body of the chunk function, expanded where each chunk is computed (no call at all)
    ($io:expr, |$c:ident| $body:block) => {
        $crate::wide::lanes::map_with!($io, (|$c: &mut [_; $crate::wide::lanes::CHUNK]| $body))
    };
    ($io:expr, $f:expr) => {
        match $io {
            $crate::wide::Io::InPlace(xs) => {
                let mut chunks = xs.chunks_exact_mut($crate::wide::lanes::CHUNK);
                for c in &mut chunks {
                    $f(c.try_into().expect("a chunk of CHUNK lanes"));
                }
                let rem = chunks.into_remainder();
                let n = rem.len();
                if n > 0 {
                    let mut buf = [rem[0]; $crate::wide::lanes::CHUNK];
                    buf[..n].copy_from_slice(rem);
                    $f(&mut buf);
                    rem.copy_from_slice(&buf[..n]);
                }
            }
            $crate::wide::Io::From { dst, src } => {
                let src = &src[..dst.len()];
                let mut chunks = dst.chunks_exact_mut($crate::wide::lanes::CHUNK);
                for (c, s) in (&mut chunks).zip(src.chunks_exact($crate::wide::lanes::CHUNK)) {
                    let mut lanes = $crate::wide::lanes::Line::<[_; $crate::wide::lanes::CHUNK]>(
                        s.try_into().expect("a chunk of CHUNK lanes"),
                    );
                    $f(&mut lanes.0);
                    $crate::wide::write(c, &lanes.0);
                }
                let rem = chunks.into_remainder();
                let n = rem.len();
                if n > 0 {
                    let from = &src[src.len() - n..];
                    let mut buf = [from[0]; $crate::wide::lanes::CHUNK];
                    buf[..n].copy_from_slice(from);
                    $f(&mut buf);
                    $crate::wide::write(rem, &buf[..n]);
                }
            }
        }
    };
}

pub(super) use map_with;

struct Exp;
struct Log;

impl Paths<f64> for Exp {
    #[inline(always)]
    fn fast_ok(x: f64) -> bool {
        exp_fast_ok(&EXP64, x)
    }
    #[inline(always)]
    fn fast(x: f64) -> f64 {
        exp_fast::<f64, 5, 5>(&EXP64, x)
    }
    #[inline(always)]
    fn general(x: f64) -> f64 {
        exp_general::<f64, 5, 5>(&EXP64, x)
    }
}

impl Paths<f32> for Exp {
    #[inline(always)]
    fn fast_ok(x: f32) -> bool {
        exp_fast_ok(&EXP32, x)
    }
    #[inline(always)]
    fn fast(x: f32) -> f32 {
        exp_fast::<f32, 3, 2>(&EXP32, x)
    }
    #[inline(always)]
    fn general(x: f32) -> f32 {
        exp_general::<f32, 3, 2>(&EXP32, x)
    }
}

/// Whether `x` takes `vmath::log`'s fast path: positive, normal and finite (`fast_or_general`),
/// as `min_normal <= x <= max` (`x < inf` is turned by LLVM into a test of the bits that it does not
/// vectorise here).
#[inline(always)]
pub(super) fn log_fast_ok<T: Lane>(x: T, min_normal: f64, max: f64) -> bool {
    (x >= T::c(min_normal)) & (x <= T::c(max))
}

impl Paths<f32> for Log {
    #[inline(always)]
    fn fast_ok(x: f32) -> bool {
        log_fast_ok(x, MIN_NORMAL_32, f32::MAX as f64)
    }
    #[inline(always)]
    fn fast(x: f32) -> f32 {
        log_f32_lane(x, false)
    }
    #[inline(always)]
    fn general(x: f32) -> f32 {
        log_f32_lane(x, true)
    }
}

// ---------------------------------------------------------------------------------------------
// sin, cos, tan

/// `vmath::trig::reduce`: `(yh, yl, n)` with `x - q·pi/2 = yh + yl` (three-part Cody-Waite, the
/// middle part's remainder exact, Fast2Sum) and `n = q mod 4` from the
/// rounder's bits.
#[inline(always)]
fn trig_reduce64(x: f64) -> (f64, f64, u64) {
    let rounded = x.mul_add(T64_TWO_OVER_PI, T64_ROUNDER);
    let q = rounded - T64_ROUNDER;
    let nq = -q;
    let r1 = nq.mul_add(T64_C1, x);
    let p = q * T64_C2;
    let r2 = r1 - p;
    let e = (r1 - r2) - p;
    let lo = nq.mul_add(T64_C3, e);
    // fast_two_sum(r2, lo)
    let yh = r2 + lo;
    let t = yh - r2;
    let yl = lo - t;
    (yh, yl, rounded.to_bits() & 3)
}

/// `vmath::trig::k_sin`: fdlibm's `__kernel_sin(x, y, 1)`.
#[inline(always)]
fn k_sin64(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r1 = poly(z, &T64_S[1..4]);
    let r2 = poly(z, &T64_S[4..6]);
    let zw = z * w;
    let r2 = zw * r2;
    let r = r1 + r2;
    let vv = z * x;
    let hy = y * 0.5;
    let vr = vv * r;
    let a = hy - vr;
    let a = z * a;
    let a = a - y;
    let vs = vv * T64_S[0];
    let a = a - vs;
    x - a
}

/// `vmath::trig::k_cos`: fdlibm's `__kernel_cos(x, y)`.
#[inline(always)]
fn k_cos64(x: f64, y: f64) -> f64 {
    let z = x * x;
    let w = z * z;
    let r1 = poly(z, &T64_C[0..3]);
    let r1 = z * r1;
    let r2 = poly(z, &T64_C[3..6]);
    let ww = w * w;
    let r2 = ww * r2;
    let r = r1 + r2;
    let hz = z * 0.5;
    let w = 1.0 - hz;
    let a = 1.0 - w;
    let a = a - hz;
    let zr = z * r;
    let xy = x * y;
    let b = zr - xy;
    let a = a + b;
    w + a
}

/// `vmath::trig::flip`: the sign of `r` flipped where bit 1 of `n` is set.
#[inline(always)]
fn flip64(r: f64, n: u64) -> f64 {
    f64::from_bits(r.to_bits() ^ ((n & 2) << 62))
}

/// `vmath::trig::sin` before its slow path.
#[inline(always)]
fn sin64_fast(x: f64) -> f64 {
    let (yh, yl, n) = trig_reduce64(x);
    let s = k_sin64(yh, yl);
    let c = k_cos64(yh, yl);
    let r = sel(n & 1 == 1, c, s);
    let r = flip64(r, n);
    sel(x.abs() < T64_TINY, x, r)
}

/// `vmath::trig::cos` before its slow path.
#[inline(always)]
fn cos64_fast(x: f64) -> f64 {
    let (yh, yl, n) = trig_reduce64(x);
    let s = k_sin64(yh, yl);
    let c = k_cos64(yh, yl);
    let r = sel(n & 1 == 1, s, c);
    flip64(r, n.wrapping_add(1))
}

/// `vmath::trig::tan` before its slow path: the rational's one division, corrected by its
/// remainder.
#[inline(always)]
fn tan64_fast(x: f64) -> f64 {
    let (yh, yl, n) = trig_reduce64(x);
    let odd = n & 1 == 1;
    let z = yh * yh;
    let d = poly(z, &T64_TAN_D);
    let m = poly(z, &T64_TAN_M);
    let m = m * z;
    let e = d + m;
    let ye = yh * e;
    // the lanes' picks by masks, not `sel`: LLVM turns `1/sel(odd, ye, d)` into two divisions
    let mask = (n & 1).wrapping_neg();
    let pick = |a: f64, b: f64| f64::from_bits(b.to_bits() ^ ((a.to_bits() ^ b.to_bits()) & mask));
    let num = pick(-d, ye);
    let den = pick(ye, d);
    let inv = 1.0 / den;
    let q = num * inv;
    let ym = yh * m;
    let rho_even = (yh - q).mul_add(d, ym);
    let a = q.mul_add(yh, 1.0);
    let qym = (q * yh) * m;
    let rho_odd = -d.mul_add(a, qym);
    let rho = sel(odd, rho_odd, rho_even);
    let lt = yl * q.mul_add(q, 1.0);
    let res = q + rho.mul_add(inv, lt);
    sel(x.abs() < T64_TINY, x, res)
}

/// `vmath::f32x4::sincos_reduced`: `(sin r, cos r, n)` for `x = q·pi/2 + r`, `n = q mod 4`.
#[inline(always)]
fn sincos_reduced32(x: f32) -> (f32, f32, u32) {
    let c = <f32 as Lane>::c;
    let q = (x * c(T32_TWO_OVER_PI)).round_ties_even();
    let nq = -q;
    let r = nq.mul_add(c(T32_PIO2_1), x);
    let r = nq.mul_add(c(T32_PIO2_2), r);
    let r = nq.mul_add(c(T32_PIO2_3), r);
    let n = (q + 12582912.0).to_bits() & 3;
    let z = r * r;
    let s = poly(z, &T32_S);
    let r3 = z * r;
    let sin = r3.mul_add(s, r);
    let cc = poly(z, &T32_C);
    let cos = z.mul_add(cc, 1.0);
    (sin, cos, n)
}

/// `vmath::f32x4::quadrant`.
#[inline(always)]
fn quadrant32(sin: f32, cos: f32, n: u32) -> f32 {
    let r = sel(n & 1 == 1, cos, sin);
    f32::from_bits(r.to_bits() ^ ((n & 2) << 30))
}

/// `vmath::f32x4::sin` before its slow path.
#[inline(always)]
fn sin32_fast(x: f32) -> f32 {
    let (s, c, n) = sincos_reduced32(x);
    let r = quadrant32(s, c, n);
    sel(x.abs() < T32_TINY as f32, x, r)
}

/// `vmath::f32x4::cos` before its slow path.
#[inline(always)]
fn cos32_fast(x: f32) -> f32 {
    let (s, c, n) = sincos_reduced32(x);
    quadrant32(s, c, n.wrapping_add(1))
}

/// `vmath::f32x4::tan`'s reduction up to its exact branch: `(q, r1, m)`, `x = q·pi/2 + r1 + m`
/// with `r1` exact and `m` rounded once.
#[inline(always)]
fn tan32_reduce(x: f32) -> (f32, f32, f32) {
    let c = <f32 as Lane>::c;
    let q = (x * c(T32_TWO_OVER_PI)).round_ties_even();
    let nq = -q;
    let r1 = nq.mul_add(c(T32_PIO2_1), x);
    let m = nq.mul_add(c(T32_PIO2_2), nq * c(T32_PIO2_3));
    (q, r1, m)
}

/// `vmath::f32x4::tan_kernel`: `tan(q·pi/2 + r + rl)` from the pair and `q`.
#[inline(always)]
fn tan32_kernel(q: f32, r: f32, rl: f32) -> f32 {
    let odd = (q + 12582912.0).to_bits() & 1 == 1;
    let z = r * r;
    let z2 = z * z;
    let p = poly2::<f32, 4, 3>(z, z2, &T32_T);
    let r3 = z * r;
    let d = rl.mul_add(z, rl);
    let c = r3.mul_add(p, d);
    let (w, lo) = fast_two_sum(r, c);
    let a = -1.0 / w;
    let d = a.mul_add(w, 1.0);
    let d = a.mul_add(lo, d);
    let ro = a.mul_add(d, a);
    sel(odd, ro, w)
}

/// `vmath::f32x4::tan` before its exact branch and its slow path: the value, and whether the lane
/// takes the exact branch (`|r| < NEAR·|m|`).
#[inline(always)]
fn tan32_quick(x: f32) -> (f32, bool) {
    let (q, r1, m) = tan32_reduce(x);
    let r = r1 + m;
    let rl = (r1 - r) + m;
    let res = tan32_kernel(q, r, rl);
    (
        sel(x.abs() < T32_TINY as f32, x, res),
        r.abs() < m.abs() * T32_NEAR as f32,
    )
}

/// `vmath::f32x4::tan`'s exact branch: the reduction as a pair by TwoSum.
#[inline(always)]
fn tan32_exact(x: f32) -> f32 {
    let c = <f32 as Lane>::c;
    let (q, r1, _) = tan32_reduce(x);
    let nq = -q;
    let p2 = c(T32_PIO2_2);
    let ph = nq * p2;
    let pl = nq.mul_add(p2, -ph);
    let (s, e) = two_sum(r1, ph);
    let l = nq.mul_add(c(T32_PIO2_3), pl);
    let (r, rl) = fast_two_sum(s, e + l);
    sel(x.abs() < T32_TINY as f32, x, tan32_kernel(q, r, rl))
}

/// `vmath::f32x4::tan` before its slow path, on one lane.
#[inline(always)]
fn tan32_fast(x: f32) -> f32 {
    let (res, near) = tan32_quick(x);
    if near { tan32_exact(x) } else { res }
}

/// Whether `x` stays off the inline trig's slow path (`Vb::slow_path` where `|x| > max`; NaN does
/// not take it).
#[inline(always)]
fn trig_fast_ok<T: Lane>(x: T, max: f64) -> bool {
    let ax = sel(x < T::c(0.0), -x, x);
    // NaN takes the fast path (the inline mask is `|x| > max`, false for NaN), hence the negation
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    let ok = !(ax > T::c(max));
    ok
}

struct Sin;
struct Cos;
struct Tan;

macro_rules! trig_paths {
    ($($f:ident: $t:ty, $max:expr, $fast:expr, $op:ident, $slice:expr;)*) => {
        $(
            impl Paths<$t> for $f {
                const TEST_SLICE: bool = $slice;
                #[inline(always)]
                fn fast_ok(x: $t) -> bool {
                    trig_fast_ok(x, $max)
                }
                #[inline(always)]
                fn fast(x: $t) -> $t {
                    $fast(x)
                }
                #[inline(always)]
                fn general(x: $t) -> $t {
                    // the host function `Vb::slow_path` calls where |x| > max
                    if trig_fast_ok(x, $max) { $fast(x) } else { kiln_ir::UnaryOp::$op.eval(x) }
                }
            }
        )*
    };
}

trig_paths! {
    Sin: f64, T64_REDUCE_MAX, sin64_fast, Sin, false;
    Cos: f64, T64_REDUCE_MAX, cos64_fast, Cos, false;
    Tan: f64, T64_REDUCE_MAX, tan64_fast, Tan, false;
    Sin: f32, T32_REDUCE_MAX, sin32_fast, Sin, true;
    Cos: f32, T32_REDUCE_MAX, cos32_fast, Cos, true;
}

/// f32 tan: the chunk's lanes by the quick reduction, and again by the exact one only where a lane
/// needs it (the inline code's branch per vector, [`tan32_quick`]; the same bits either way).
impl Paths<f32> for Tan {
    #[inline(always)]
    fn fast_ok(x: f32) -> bool {
        trig_fast_ok(x, T32_REDUCE_MAX)
    }
    #[inline(always)]
    fn fast(x: f32) -> f32 {
        tan32_fast(x)
    }
    #[inline(always)]
    fn general(x: f32) -> f32 {
        if trig_fast_ok(x, T32_REDUCE_MAX) {
            tan32_fast(x)
        } else {
            kiln_ir::UnaryOp::Tan.eval(x)
        }
    }
    #[inline(always)]
    fn fast_chunk(c: &mut [f32; CHUNK], _look: &impl Look) {
        let xs = *c;
        let mut near = false;
        for (y, &x) in c.iter_mut().zip(&xs) {
            let (v, n) = tan32_quick(x);
            *y = v;
            near |= n;
        }
        if near {
            for (y, &x) in c.iter_mut().zip(&xs) {
                let (_, n) = tan32_quick(x);
                *y = sel(n, tan32_exact(x), *y);
            }
        }
    }
}

/// sin and cos of one argument, the argument's elements to sin (in place, or from the source
/// into the destination) and `ys` to cos: per chunk the same branch as [`Sin`] and [`Cos`] (their
/// fast paths' condition is the same), each lane the pair of bits they give; the reduction and the
/// kernels the two share are computed once (LLVM merges the identical operations of the inlined
/// fast paths). `ys` is at least as long as the argument (call.rs checks), and only written.
#[inline(always)]
fn map_sincos<T: Copy>(io: Io<'_, T>, ys: &mut [std::mem::MaybeUninit<T>])
where
    Sin: Paths<T>,
    Cos: Paths<T>,
{
    let len = io.len();
    let ys = &mut ys[..len];
    let mut yc = ys.chunks_exact_mut(CHUNK);
    match io {
        Io::InPlace(xs) => {
            let mut xc = xs.chunks_exact_mut(CHUNK);
            for (x, y) in (&mut xc).zip(&mut yc) {
                let x: &mut [T; CHUNK] = x.try_into().expect("a chunk of CHUNK lanes");
                let mut cos = Line(*x);
                sincos_chunk(x, &mut cos);
                write(y, &cos[..]);
            }
            let xr = xc.into_remainder();
            let n = xr.len();
            if n > 0 {
                let (bx, by) = sincos_rest(xr);
                xr.copy_from_slice(&bx[..n]);
                write(yc.into_remainder(), &by[..n]);
            }
        }
        Io::From { dst, src } => {
            let src = &src[..len];
            let mut xc = dst.chunks_exact_mut(CHUNK);
            for ((x, y), s) in (&mut xc).zip(&mut yc).zip(src.chunks_exact(CHUNK)) {
                let mut lanes = Line::<[T; CHUNK]>(s.try_into().expect("a chunk of CHUNK lanes"));
                let mut cos = lanes;
                sincos_chunk(&mut lanes, &mut cos);
                write(x, &lanes[..]);
                write(y, &cos[..]);
            }
            let xr = xc.into_remainder();
            let n = xr.len();
            if n > 0 {
                let (bx, by) = sincos_rest(&src[len - n..]);
                write(xr, &bx[..n]);
                write(yc.into_remainder(), &by[..n]);
            }
        }
    }
}

/// The sines and cosines of the remainder `from` (fewer than [`CHUNK`] lanes, at least one), in a
/// chunk padded with its first element.
#[inline(always)]
fn sincos_rest<T: Copy>(from: &[T]) -> ([T; CHUNK], [T; CHUNK])
where
    Sin: Paths<T>,
    Cos: Paths<T>,
{
    let mut bx = [from[0]; CHUNK];
    let mut by = [from[0]; CHUNK];
    bx[..from.len()].copy_from_slice(from);
    sincos_chunk(&mut bx, &mut by);
    (bx, by)
}

#[inline(always)]
fn sincos_chunk<T: Copy>(x: &mut [T; CHUNK], y: &mut [T; CHUNK])
where
    Sin: Paths<T>,
    Cos: Paths<T>,
{
    let mut ok = true;
    for &v in x.iter() {
        ok &= <Sin as Paths<T>>::fast_ok(v);
    }
    if ok {
        for (a, b) in x.iter_mut().zip(y.iter_mut()) {
            let v = *a;
            *a = <Sin as Paths<T>>::fast(v);
            *b = <Cos as Paths<T>>::fast(v);
        }
    } else {
        for (a, b) in x.iter_mut().zip(y.iter_mut()) {
            let v = *a;
            *a = <Sin as Paths<T>>::general(v);
            *b = <Cos as Paths<T>>::general(v);
        }
    }
}

macro_rules! sincos_levels {
    ($($name:ident: $t:ty;)*) => {
        $(
            pub(super) mod $name {
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn avx2(io: super::Io<'_, $t>, ys: &mut [std::mem::MaybeUninit<$t>]) {
                    super::map_sincos::<$t>(io, ys)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn avx512(io: super::Io<'_, $t>, ys: &mut [std::mem::MaybeUninit<$t>]) {
                    super::map_sincos::<$t>(io, ys)
                }
            }
        )*
    };
}

sincos_levels! {
    sincos64: f64;
    sincos32: f32;
}

pub(super) use sincos32::{avx2 as sincos_f32_avx2, avx512 as sincos_f32_avx512};
pub(super) use sincos64::{avx2 as sincos_f64_avx2, avx512 as sincos_f64_avx512};

/// The `#[target_feature]` slice functions of each level for a [`Paths`] type (`map` and the
/// type must be in scope where it is invoked): `name: type, Paths impl;` makes `name::avx2` and
/// `name::avx512`; `name: f64, impl, permuted;` looks the f64 log family's table rows up by
/// permutes at AVX-512 ([`permute_col`]).
macro_rules! levels {
    ($($name:ident: $t:ident, $f:ident $(, $look:ident)?;)*) => {
        $(
            $crate::wide::lanes::levels!(@one $name, $t, $f $(, $look)?);
        )*
    };
    // one chunk rule at both levels
    (@one $name:ident, $t:ident, $f:ident) => {
        pub(super) mod $name {
            #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
            pub(in crate::wide) fn avx2(io: $crate::wide::Io<'_, $t>) {
                super::map::<$t, super::$f>(io)
            }
            #[cfg_attr(
                target_arch = "x86_64",
                target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
            )]
            pub(in crate::wide) fn avx512(io: $crate::wide::Io<'_, $t>) {
                super::map::<$t, super::$f>(io)
            }
        }
    };
    // the table rows looked up by permutes at AVX-512 (the closure, defined in the
    // `#[target_feature]` function, has its features: the call is safe and inlined)
    (@one $name:ident, f64, $f:ident, permuted) => {
        pub(super) mod $name {
            #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
            pub(in crate::wide) fn avx2(io: $crate::wide::Io<'_, f64>) {
                super::map::<f64, super::$f>(io)
            }
            #[cfg_attr(
                target_arch = "x86_64",
                target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
            )]
            pub(in crate::wide) fn avx512(io: $crate::wide::Io<'_, f64>) {
                use $crate::wide::lanes::{chunk, permute_col};
                $crate::wide::lanes::map_with!(io, |c| {
                    chunk::<f64, super::$f>(c, &|col, rows| permute_col(col, rows))
                })
            }
        }
    };
}

pub(super) use levels;

levels! {
    exp64: f64, Exp;
    exp32: f32, Exp;
    log32: f32, Log;
    sin64: f64, Sin;
    sin32: f32, Sin;
    cos64: f64, Cos;
    cos32: f32, Cos;
    tan64: f64, Tan;
    tan32: f32, Tan;
}

pub(super) use cos32::{avx2 as cos_f32_avx2, avx512 as cos_f32_avx512};
pub(super) use cos64::{avx2 as cos_f64_avx2, avx512 as cos_f64_avx512};
pub(super) use exp32::{avx2 as exp_f32_avx2, avx512 as exp_f32_avx512};
pub(super) use exp64::{avx2 as exp_f64_avx2, avx512 as exp_f64_avx512};
pub(super) use log32::{avx2 as log_f32_avx2, avx512 as log_f32_avx512};
pub(super) use sin32::{avx2 as sin_f32_avx2, avx512 as sin_f32_avx512};
pub(super) use sin64::{avx2 as sin_f64_avx2, avx512 as sin_f64_avx512};
pub(super) use tan32::{avx2 as tan_f32_avx2, avx512 as tan_f32_avx512};
pub(super) use tan64::{avx2 as tan_f64_avx2, avx512 as tan_f64_avx512};
