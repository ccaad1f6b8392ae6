//! pow and hypot at full width: `vmath::pow` and `vmath::hypot` written for one lane (the same
//! operations in the same order, their constants, `mul_add` where they emit `fma`), and their
//! `#[target_feature]` loops over two slices (`binary.rs`).
//!
//! pow's table lookups are scalar loads per lane in the inline code; here the same 16-row columns
//! are looked up per chunk by the level's [`Look`] (permutes at AVX-512, scalar loads at AVX2),
//! between stages that vectorise. f64 pow reads `LN16` and `EXP16`. Its fast path (positive normal
//! finite bases, finite exponents, `|y·log x|` below `vmath::pow::FAST_EXP`) is tested per chunk,
//! the inputs first and `|y·log x|` after the log; its general path is one path for every lane
//! (selects, no branch), as hypot's, which needs no test. A slice whose bases are all one positive
//! normal finite value (a constant base staged by the kernel: `2.5**x`) computes that log once
//! ([`Paths2::constant_first`]) and each chunk from `y·log x` on, by the fast path where its
//! exponents allow it: the same operations on the same values, so the same bits. f32 pow
//! (`vmath::pow::pow_f32`, computed on the widened values and rounded once) reads `LOG2_16`'s `1/c`
//! and `hi` and `EXP16`'s heads. It has a fast path and a general path, chosen per chunk of 16 lanes
//! where the inline code chooses per vector (the same bits either way): the inline fast path takes
//! positive finite bases and finite exponents, this one positive normal bases (split on the f32's
//! own bits, which give the widened value's `k`, `z` and row) and normal exponents, tested once for
//! the whole slices ([`Paths2::all_fast`]) and, where some pair fails, per chunk. f32 hypot is the
//! f64 lane of the widened values, rounded once.

use super::binary::{Paths2, levels2, map2};
use super::lanes::{CHUNK, Line, Look, look_cols, poly, sel};
use super::logs::{cols64, reduce64};
use crate::vmath::hypot::{HUGE, SCALE_DOWN, SCALE_UP, TINY};
use crate::vmath::log::MIN_NORMAL;
use crate::vmath::pow::{
    DOWN, DOWN_BITS, EXP_CLAMP, EXP2_CLAMP, EXP2_E, FAST_EXP, LN2_HI, LN2_LO, LOG2_Q, OFF, SHIFT, UP,
    UP_BITS, exp16_heads, log2_cols,
};
use crate::vmath::pow_tables::{
    EXP16, LN16, NEG_TWO_THIRDS, POW_EXP_P, POW_INV_LN2_N, POW_LOG_T, POW_NEG_LN2_N,
};

/// `vmath::exp::clamp`: `x` clamped into `[lo, hi]`, NaN kept.
#[inline(always)]
fn clamp(x: f64, lo: f64, hi: f64) -> f64 {
    let x = sel(x > hi, hi, x);
    sel(x < lo, lo, x)
}

// pow's lanes in three stages around their two table lookups (`vmath::pow::log_hl` and `exp_hl`
// cut at the lookups), so that a chunk's lookups run in loops of their own ([`pow64_chunk`]): the
// stages between them vectorise (LLVM would otherwise gather the lookups at AVX-512 and leave the
// whole lane function scalar at AVX2), and the lookups are the level's (`Look`).

/// `vmath::pow::log_core`: `log|x|` as `hi + lo` from `(k, z)` and the log table's row.
#[inline(always)]
fn log_core(k: f64, z: f64, [invc, logc, logctail]: [f64; 3]) -> (f64, f64) {
    let r = z.mul_add(invc, -1.0);
    let t1 = k.mul_add(LN2_HI, logc);
    let t2 = t1 + r;
    let lo1 = k.mul_add(LN2_LO, logctail);
    let lo2 = (t1 - t2) + r;
    let ar = r * -0.5;
    let ar2 = r * ar;
    let hi = t2 + ar2;
    let lo3 = ar.mul_add(r, -ar2);
    let lo4 = (t2 - hi) + ar2;
    let ar3 = r * ar2;
    let ar3lo = r.mul_add(ar2, -ar3);
    let th = NEG_TWO_THIRDS[0];
    let p = ar3 * th;
    let pe = ar3.mul_add(th, -p);
    let e2 = r.mul_add(lo3, ar3lo);
    let pe = e2.mul_add(th, pe);
    let pe = ar3.mul_add(NEG_TWO_THIRDS[1], pe);
    let h2 = hi + p;
    let lo5 = (hi - h2) + p;
    let r4 = ar2 * ar2;
    let t: f64 = poly(r, &POW_LOG_T);
    let tail = r4 * t;
    let lo = lo1 + lo2;
    let lo = lo + lo3;
    let lo = lo + lo4;
    let lo = lo + lo5;
    let lo = lo + pe;
    let lo = lo + tail;
    let lh = h2 + lo;
    let ll = (h2 - lh) + lo;
    (lh, ll)
}

/// `vmath::pow::exp_reduce`: exp's reduction of `x + elo`: `(r, kd, ki)`.
#[inline(always)]
fn exp_reduce(x: f64, elo: f64) -> (f64, f64, u64) {
    let z = x * POW_INV_LN2_N;
    let kd = z + SHIFT;
    let ki = kd.to_bits();
    let kd = kd + -SHIFT;
    let r = kd.mul_add(POW_NEG_LN2_N[0], x);
    let r = kd.mul_add(POW_NEG_LN2_N[1], r);
    (r + elo, kd, ki)
}

/// pow's f64 lane from its log table to its exp table: `log|x|` as `hi + lo` (`vmath::pow::log_hl`),
/// `y·log|x|` as `ehi + elo`, and exp's reduction: `(r, kd, ki)`.
#[inline(always)]
fn pow_mid(x: f64, y: f64, k: f64, z: f64, row: [f64; 3]) -> (f64, f64, u64) {
    let (lh, ll) = log_core(k, z, row);
    // vmath::pow::pow
    let (ok, sp) = log_edges(x.abs());
    let lh = sel(ok, lh, sp);
    let ll = sel(ok, ll, 0.0);
    let ehi = y * lh;
    let elo = y.mul_add(lh, -ehi);
    let elo = y.mul_add(ll, elo);
    let elo = sel(ehi.abs() < 2000.0, elo, 0.0);
    // vmath::pow::exp_hl up to its table
    exp_reduce(clamp(ehi, -EXP_CLAMP, EXP_CLAMP), elo)
}

/// pow's f64 fast path from its log table to its exp table: `(r, ki, |ehi|)`, the last for the
/// chunk's test ([`FAST_EXP`]).
#[inline(always)]
fn pow_mid_fast(y: f64, k: f64, z: f64, row: [f64; 3]) -> (f64, u64, f64) {
    let (lh, ll) = log_core(k, z, row);
    exp_mid_fast(y, lh, ll)
}

/// pow's f64 fast path from `log x = lh + ll` to its exp table: `(r, ki, |ehi|)`.
#[inline(always)]
fn exp_mid_fast(y: f64, lh: f64, ll: f64) -> (f64, u64, f64) {
    let ehi = y * lh;
    let elo = y.mul_add(lh, -ehi);
    let elo = y.mul_add(ll, elo);
    let (r, _, ki) = exp_reduce(ehi, elo);
    (r, ki, ehi.abs())
}

/// `log x` as `(hi, lo)` for a positive normal finite `x` (the fast path's), computed once for a
/// slice whose bases are all `x` ([`Paths2::constant_first`]).
#[inline(always)]
fn log_fast(x: f64) -> (f64, f64) {
    let (k, z, row) = reduce64(x, false);
    log_core(k, z, cols64(&LN16, row))
}

/// Whether every value of `xs` (not empty) has the bits of the first, by chunks.
#[inline(always)]
fn all_same64(xs: &[f64]) -> bool {
    let b = xs[0].to_bits();
    for c in xs.chunks(CHUNK) {
        let mut d = 0u64;
        for &a in c {
            d |= a.to_bits() ^ b;
        }
        if d != 0 {
            return false;
        }
    }
    true
}

/// [`all_same64`] on f32.
#[inline(always)]
fn all_same32(xs: &[f32]) -> bool {
    let b = xs[0].to_bits();
    for c in xs.chunks(CHUNK) {
        let mut d = 0u32;
        for &a in c {
            d |= a.to_bits() ^ b;
        }
        if d != 0 {
            return false;
        }
    }
    true
}

/// The slices `$xs`, `$ys` by chunks `$x`, `$y` of `$body`, the remainder padded as `map2` pads it
/// (the base in every lane of `$xs` already). A macro, not a function of a closure: a closure is
/// not inlined into the `#[target_feature]` function, and compiled without its features it calls
/// `fma` out of line.
macro_rules! const_chunks {
    ($xs:ident, $ys:ident, |$x:ident, $y:ident| $body:block) => {{
        let mut xc = $xs.chunks_exact_mut(CHUNK);
        let mut yc = $ys.chunks_exact(CHUNK);
        for (cx, cy) in (&mut xc).zip(&mut yc) {
            let $x: &mut [_; CHUNK] = cx.try_into().expect("a chunk of CHUNK lanes");
            let $y: &[_; CHUNK] = cy.try_into().expect("a chunk of CHUNK lanes");
            $body
        }
        let (xr, yr) = (xc.into_remainder(), yc.remainder());
        if let (Some(&fx), Some(&fy)) = (xr.first(), yr.first()) {
            let mut bx = [fx; CHUNK];
            let mut by = [fy; CHUNK];
            bx[..xr.len()].copy_from_slice(xr);
            by[..yr.len()].copy_from_slice(yr);
            {
                let $x = &mut bx;
                let $y = &by;
                $body
            }
            xr.copy_from_slice(&bx[..xr.len()]);
        }
    }};
}

/// Whether every exponent of the chunk is finite (or-ed sign bits of `bits(MAX) - bits(|y|)`).
#[inline(always)]
fn exps_finite64(y: &[f64; CHUNK]) -> bool {
    const MAX: i64 = f64::MAX.to_bits() as i64;
    let mut acc = 0i64;
    for &b in y {
        acc |= MAX - (b.to_bits() & !(1 << 63)) as i64;
    }
    acc >= 0
}

/// f64 pow of a constant base over whole slices: where the base is positive, normal and finite,
/// its log once, each chunk by the fast path from `ehi` on where its exponents allow it, else by
/// `P`'s chunk rule.
#[inline(always)]
fn pow64_constant<P: Paths2<f64>>(xs: &mut [f64], ys: &[f64], look: &impl Look) -> bool {
    let Some(&b) = xs.first() else { return false };
    if !((MIN_NORMAL..=f64::MAX).contains(&b) && all_same64(xs)) {
        return false;
    }
    let (lh, ll) = log_fast(b);
    const_chunks!(xs, ys, |x, y| {
        'chunk: {
            if exps_finite64(y) {
                let mut r = Line([0.0f64; CHUNK]);
                let mut ki = Line([0u64; CHUNK]);
                let mut ae = Line([0.0f64; CHUNK]);
                for j in 0..CHUNK {
                    (r[j], ki[j], ae[j]) = exp_mid_fast(y[j], lh, ll);
                }
                let mut ok = true;
                for &a in ae.iter() {
                    ok &= a < FAST_EXP;
                }
                if ok {
                    let [tail, head] = *look_cols(look, &EXP16, &ki);
                    for j in 0..CHUNK {
                        x[j] = pow_end_fast(r[j], ki[j], [tail[j], head[j]]);
                    }
                    break 'chunk;
                }
            }
            P::chunk(x, y, look)
        }
    });
    true
}

/// f32 pow of a constant base over whole slices: where the base is positive and finite, its log2
/// once, each chunk from `y·log2 x` on where its exponents are finite, else by the chunk's own
/// rule.
#[inline(always)]
fn pow32_constant(xs: &mut [f32], ys: &[f32], look: &impl Look) -> bool {
    let Some(&b) = xs.first() else { return false };
    if !(b > 0.0 && b < f32::INFINITY && all_same32(xs)) {
        return false;
    }
    let (k, z, row) = reduce64(b as f64, false);
    let [invc, hi] = cols64(log2_cols(), row);
    let l = log2_32(k, z, invc, hi);
    const_chunks!(xs, ys, |x, y| {
        let mut m = 0u32;
        for &e in y {
            m = m.max(e.to_bits() & 0x7fff_ffff);
        }
        if m < f32::INFINITY.to_bits() {
            let mut t = Line([0.0f64; CHUNK]);
            for j in 0..CHUNK {
                t[j] = l * y[j] as f64;
            }
            let p = exp2_chunk32(&t, look);
            for j in 0..CHUNK {
                x[j] = p[j] as f32;
            }
        } else {
            <Pow32 as Paths2<f32>>::chunk(x, y, look)
        }
    });
    true
}

/// `vmath::pow::exp_tmp`: `T + r + r²·P(r)`.
#[inline(always)]
fn exp_tmp(r: f64, tail: f64) -> f64 {
    let r2 = r * r;
    let p: f64 = poly(r, &POW_EXP_P);
    r2.mul_add(p, tail + r)
}

/// pow's f64 lane after its exp table: the scale, `e^r`, the two scalings and C99's cases.
#[inline(always)]
fn pow_end(x: f64, y: f64, r: f64, kd: f64, ki: u64, [tail, head]: [f64; 2]) -> f64 {
    let top = ki << 48;
    let sbits = head.to_bits().wrapping_add(top);
    let pos = kd > 0.0;
    let adj = sel(pos, UP_BITS, DOWN_BITS);
    let scale = f64::from_bits(sbits.wrapping_add(adj as u64));
    let f = sel(pos, UP, DOWN);
    let tmp = exp_tmp(r, tail);
    annex_f(x, y, scale.mul_add(tmp, scale) * f)
}

/// pow's f64 fast path after its exp table: `scale + scale·tmp`, the scale `H·2^(k>>4)` by one
/// integer addition (a normal result: the general path's two scalings are exact).
#[inline(always)]
fn pow_end_fast(r: f64, ki: u64, [tail, head]: [f64; 2]) -> f64 {
    let scale = f64::from_bits(head.to_bits().wrapping_add(ki << 48));
    let tmp = exp_tmp(r, tail);
    scale.mul_add(tmp, scale)
}

/// `vmath::pow::pow` on one f64 lane.
#[inline(always)]
fn pow_lane(x: f64, y: f64) -> f64 {
    let (k, z, row) = reduce64(x.abs(), true);
    let (r, kd, ki) = pow_mid(x, y, k, z, cols64(&LN16, row));
    pow_end(x, y, r, kd, ki, cols64(&EXP16, ki))
}

/// Whether every pair of the chunk has a positive normal finite `x` and a finite `y`: on the bits
/// as signed integers, `t = bits(x) - bits(MIN_NORMAL)` and `C = bits(MAX) - bits(MIN_NORMAL)`,
/// `t` in `[0, C]` where `t` and `C - t` have their sign bits clear, and `bits(|y|) <= bits(MAX)`
/// where `bits(MAX) - bits(|y|)` has; the sign bits or-ed over the chunk (a minimum and maximum
/// of 64-bit integers was left scalar at AVX2, which has no such instructions).
#[inline(always)]
fn pow64_inputs_ok(x: &[f64; CHUNK], y: &[f64; CHUNK]) -> bool {
    const MIN: i64 = MIN_NORMAL.to_bits() as i64;
    const MAX: i64 = f64::MAX.to_bits() as i64;
    let mut acc = 0i64;
    for (&a, &b) in x.iter().zip(y.iter()) {
        let t = (a.to_bits() as i64).wrapping_sub(MIN);
        let u = (b.to_bits() & !(1 << 63)) as i64;
        acc |= t | (MAX - MIN).wrapping_sub(t) | (MAX - u);
    }
    acc >= 0
}

/// `OFF` as an f32's bits (its low 29 bits are zero: 0x1.2d554p-1 is an f32).
const OFF_F32_BITS: u32 = 0x3f34_aaa8;
const _: () = assert!(f32::from_bits(OFF_F32_BITS) as f64 == f64::from_bits(OFF as u64));

/// `logs::reduce64` of a positive normal finite f32, split on its own bits: `x = 2^k·z` with
/// `bits(z)` in `[OFF_F32_BITS, OFF_F32_BITS + 2^23)`. Widening a normal f32 keeps its mantissa (in
/// the top 23 of the 52 bits) and moves its exponent field by a constant, so `k` (the floor of
/// `(bits - off) / 2^23` against `/ 2^52`), `z` and the row (bits 48..51 of `bits(z) - OFF`) are the
/// values `logs::reduce64` gives the widened `x`: the same operations follow on the same values, so
/// the same bits, for an integer split on 16 lanes of a 512-bit vector where the f64 one takes 8.
#[inline(always)]
fn split32_normal(x: f32) -> (f64, f64, u64) {
    let u = x.to_bits().wrapping_sub(OFF_F32_BITS);
    let k = ((u as i32) >> 23) as f64;
    let z = f32::from_bits((u & 0x007f_ffff).wrapping_add(OFF_F32_BITS)) as f64;
    (k, z, z.to_bits().wrapping_sub(OFF as u64) >> 48)
}

/// `vmath::pow::log2_f32` from its table: `(k + hi) + r·Q(r)`, `r = z·(1/c) - 1`.
#[inline(always)]
fn log2_32(k: f64, z: f64, invc: f64, hi: f64) -> f64 {
    let r = z.mul_add(invc, -1.0);
    let q = r.mul_add(LOG2_Q[5], LOG2_Q[4]);
    let q = r.mul_add(q, LOG2_Q[3]);
    let q = r.mul_add(q, LOG2_Q[2]);
    let q = r.mul_add(q, LOG2_Q[1]);
    let q = r.mul_add(q, LOG2_Q[0]);
    r.mul_add(q, k + hi)
}

/// `vmath::pow::pow_f32`'s general path up to `t = y·log2|x|` (on f32 values widened), from the
/// table: `log2 0 = -inf`, `log2 inf = inf`, NaN for NaN.
#[inline(always)]
fn general_t32(x: f64, y: f64, k: f64, z: f64, [invc, hi]: [f64; 2]) -> f64 {
    let (xok, sp) = log_edges(x.abs());
    sel(xok, log2_32(k, z, invc, hi), sp) * y
}

/// `vmath::pow::exp2_f32` up to its table: `(u, i)` with `16·t = i + u` (`t` clamped, the index in
/// the low bits of `16·t + SHIFT`'s).
#[inline(always)]
fn exp2_split32(t: f64) -> (f64, u64) {
    let t = clamp(t, EXP2_CLAMP.0, EXP2_CLAMP.1);
    let kd = t.mul_add(16.0, SHIFT);
    let ki = kd.to_bits();
    let kd = kd + -SHIFT;
    (t.mul_add(16.0, -kd), ki)
}

/// `vmath::pow::exp2_f32` from its table: `(1 + u·E(u))·2^(i/16)`, the scale `H'` of `EXP16`'s heads
/// with `i << 48` added into its bits.
#[inline(always)]
fn exp2_end32(u: f64, ki: u64, h: f64) -> f64 {
    let p = u.mul_add(EXP2_E[3], EXP2_E[2]);
    let p = u.mul_add(p, EXP2_E[1]);
    let p = u.mul_add(p, EXP2_E[0]);
    let p = u.mul_add(p, 1.0);
    p * f64::from_bits(h.to_bits().wrapping_add(ki << 48))
}

/// `vmath::pow::exp2_f32` of a chunk of `t`, its table looked up by `look`.
#[inline(always)]
fn exp2_chunk32(t: &[f64; CHUNK], look: &impl Look) -> Line<[f64; CHUNK]> {
    let mut u = Line([0.0f64; CHUNK]);
    let mut ki = Line([0u64; CHUNK]);
    for j in 0..CHUNK {
        (u[j], ki[j]) = exp2_split32(t[j]);
    }
    let [h] = *look_cols(look, exp16_heads(), &ki);
    let mut out = Line([0.0f64; CHUNK]);
    for j in 0..CHUNK {
        out[j] = exp2_end32(u[j], ki[j], h[j]);
    }
    out
}

/// `vmath::pow::pow_f32` on one lane of f32 values widened to f64 (the general path, which gives
/// the fast path's lanes its bits; the result to be rounded to f32).
#[inline(always)]
fn pow32_lane(x: f64, y: f64) -> f64 {
    let (k, z, row) = reduce64(x.abs(), false);
    let t = general_t32(x, y, k, z, cols64(log2_cols(), row));
    let (u, ki) = exp2_split32(t);
    let [h] = cols64(exp16_heads(), ki);
    annex_f(x, y, exp2_end32(u, ki, h))
}

/// f32 pow's fast path on a chunk (every `x` positive, normal and finite, every `y` finite) by
/// stages around its two lookups (`look`): the f32 split, no selects.
#[inline(always)]
fn pow32_chunk_fast(x: &mut [f32; CHUNK], y: &[f32; CHUNK], look: &impl Look) {
    let mut k = Line([0.0f64; CHUNK]);
    let mut z = Line([0.0f64; CHUNK]);
    let mut row = Line([0u64; CHUNK]);
    for j in 0..CHUNK {
        (k[j], z[j], row[j]) = split32_normal(x[j]);
    }
    let invc = look(&log2_cols()[0], &row);
    let hi = look(&log2_cols()[1], &row);
    let mut u = Line([0.0f64; CHUNK]);
    let mut kb = Line([0.0f64; CHUNK]);
    for j in 0..CHUNK {
        let t = log2_32(k[j], z[j], invc[j], hi[j]) * y[j] as f64;
        let t = clamp(t, EXP2_CLAMP.0, EXP2_CLAMP.1);
        let kd = t.mul_add(16.0, SHIFT);
        kb[j] = kd;
        let kd = kd + -SHIFT;
        u[j] = t.mul_add(16.0, -kd);
    }
    let h = look(&EXP16[1], &kb.map(f64::to_bits));
    for j in 0..CHUNK {
        x[j] = exp2_end32(u[j], kb[j].to_bits(), h[j]) as f32;
    }
}

/// f32 pow's general path on a chunk by stages around its two lookups (`look`).
#[inline(always)]
fn pow32_chunk_general(x: &mut [f32; CHUNK], y: &[f32; CHUNK], look: &impl Look) {
    let mut k = Line([0.0f64; CHUNK]);
    let mut z = Line([0.0f64; CHUNK]);
    let mut row = Line([0u64; CHUNK]);
    for j in 0..CHUNK {
        (k[j], z[j], row[j]) = reduce64((x[j] as f64).abs(), false);
    }
    let [invc, hi] = *look_cols(look, log2_cols(), &row);
    let mut t = Line([0.0f64; CHUNK]);
    for j in 0..CHUNK {
        t[j] = general_t32(x[j] as f64, y[j] as f64, k[j], z[j], [invc[j], hi[j]]);
    }
    let p = exp2_chunk32(&t, look);
    for j in 0..CHUNK {
        x[j] = annex_f(x[j] as f64, y[j] as f64, p[j]) as f32;
    }
}

/// pow on a chunk of f64 lanes by stages around its two lookups (`look`): the fast path's
/// (`logs::reduce64`, [`pow_mid_fast`], [`pow_end_fast`]) where every pair allows it (the inputs
/// first, then `|y·log x|` after the middle stage), else the general path's
/// ([`pow64_chunk_general`]).
#[inline(always)]
fn pow64_chunk(x: &mut [f64; CHUNK], y: &[f64; CHUNK], look: &impl Look) {
    if pow64_inputs_ok(x, y) {
        let mut k = Line([0.0f64; CHUNK]);
        let mut z = Line([0.0f64; CHUNK]);
        let mut row = Line([0u64; CHUNK]);
        for j in 0..CHUNK {
            (k[j], z[j], row[j]) = reduce64(x[j], false);
        }
        let [invc, logc, logctail] = *look_cols(look, &LN16, &row);
        let mut r = Line([0.0f64; CHUNK]);
        let mut ki = Line([0u64; CHUNK]);
        let mut ae = Line([0.0f64; CHUNK]);
        for j in 0..CHUNK {
            (r[j], ki[j], ae[j]) = pow_mid_fast(y[j], k[j], z[j], [invc[j], logc[j], logctail[j]]);
        }
        let mut ok = true;
        for &a in ae.iter() {
            ok &= a < FAST_EXP;
        }
        if ok {
            let [tail, head] = *look_cols(look, &EXP16, &ki);
            for j in 0..CHUNK {
                x[j] = pow_end_fast(r[j], ki[j], [tail[j], head[j]]);
            }
            return;
        }
    }
    pow64_chunk_general(x, y, look)
}

/// pow's general path on a chunk of f64 lanes ([`pow_lane`]) by stages around its two lookups.
#[inline(always)]
fn pow64_chunk_general(x: &mut [f64; CHUNK], y: &[f64; CHUNK], look: &impl Look) {
    let mut k = Line([0.0f64; CHUNK]);
    let mut z = Line([0.0f64; CHUNK]);
    let mut row = Line([0u64; CHUNK]);
    for j in 0..CHUNK {
        (k[j], z[j], row[j]) = reduce64(x[j].abs(), true);
    }
    let [invc, logc, logctail] = *look_cols(look, &LN16, &row);
    let mut r = Line([0.0f64; CHUNK]);
    let mut kd = Line([0.0f64; CHUNK]);
    let mut ki = Line([0u64; CHUNK]);
    for j in 0..CHUNK {
        (r[j], kd[j], ki[j]) = pow_mid(x[j], y[j], k[j], z[j], [invc[j], logc[j], logctail[j]]);
    }
    let [tail, head] = *look_cols(look, &EXP16, &ki);
    for j in 0..CHUNK {
        x[j] = pow_end(x[j], y[j], r[j], kd[j], ki[j], [tail[j], head[j]]);
    }
}

/// `vmath::pow::log_edges`: where `log ax` is computed, and the others' value.
#[inline(always)]
fn log_edges(ax: f64) -> (bool, f64) {
    let ok = (ax > 0.0) & (ax <= f64::MAX);
    (ok, sel(ax == 0.0, f64::NEG_INFINITY, ax))
}

/// `vmath::pow::annex_f`: the sign and C99's special cases.
#[inline(always)]
fn annex_f(x: f64, y: f64, r: f64) -> f64 {
    let ty = y.trunc();
    let yint = ty == y;
    let hy = y * 0.5;
    let even = hy.trunc() == hy;
    let yodd = yint & !even;
    let negx = (x.to_bits() as i64) < 0;
    let r = sel(negx & yodd, -r, r);
    let bad = (f64::MIN..0.0).contains(&x) & !yint;
    let r = sel(bad, crate::vmath::INVALID, r);
    let one = (y == 0.0) | (x == 1.0) | ((x == -1.0) & (y.abs() > f64::MAX));
    sel(one, 1.0, r)
}

/// `vmath::hypot::hypot` on one f64 lane.
#[inline(always)]
pub(super) fn hypot_lane(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    let ay = y.abs();
    let ge = ax >= ay;
    let big = sel(ge, ax, ay);
    let small = sel(ge, ay, ax);
    let huge = big > HUGE;
    let tiny = big < TINY;
    let s = sel(tiny, SCALE_UP, 1.0);
    let s = sel(huge, SCALE_DOWN, s);
    let back = sel(tiny, SCALE_DOWN, 1.0);
    let back = sel(huge, SCALE_UP, back);
    let b = big * s;
    let sm = small * s;
    let s2 = sm * sm;
    let sum = b.mul_add(b, s2);
    let r = sum.sqrt() * back;
    sel((ax > f64::MAX) | (ay > f64::MAX), f64::INFINITY, r)
}

/// `vmath::hypot::hypot_widened` on one f32 lane widened to f64: [`hypot_lane`] without the
/// scaling, which is the identity on such lanes (the same bits).
#[inline(always)]
pub(super) fn hypot_widened_lane(x: f64, y: f64) -> f64 {
    let ax = x.abs();
    let ay = y.abs();
    let ge = ax >= ay;
    let big = sel(ge, ax, ay);
    let small = sel(ge, ay, ax);
    let s2 = small * small;
    let r = big.mul_add(big, s2).sqrt();
    sel((ax > f64::MAX) | (ay > f64::MAX), f64::INFINITY, r)
}

/// hypot's one path.
pub(super) struct Hypot;

impl Paths2<f64> for Hypot {
    #[inline(always)]
    fn fast_ok(_: f64, _: f64) -> bool {
        true
    }
    #[inline(always)]
    fn fast(x: f64, y: f64) -> f64 {
        hypot_lane(x, y)
    }
    #[inline(always)]
    fn general(x: f64, y: f64) -> f64 {
        hypot_lane(x, y)
    }
}

impl Paths2<f32> for Hypot {
    #[inline(always)]
    fn fast_ok(_: f32, _: f32) -> bool {
        true
    }
    #[inline(always)]
    fn fast(x: f32, y: f32) -> f32 {
        hypot_widened_lane(x as f64, y as f64) as f32
    }
    #[inline(always)]
    fn general(x: f32, y: f32) -> f32 {
        hypot_widened_lane(x as f64, y as f64) as f32
    }
}

/// f64 pow: by its stages per chunk ([`pow64_chunk`]). The general path has one path for every
/// lane (lane selects, no branch); the fast path is tested per chunk.
pub(super) struct Pow;

impl Paths2<f64> for Pow {
    #[inline(always)]
    fn fast_ok(_: f64, _: f64) -> bool {
        true
    }
    #[inline(always)]
    fn fast(x: f64, y: f64) -> f64 {
        pow_lane(x, y)
    }
    #[inline(always)]
    fn general(x: f64, y: f64) -> f64 {
        pow_lane(x, y)
    }
    #[inline(always)]
    fn chunk(x: &mut [f64; CHUNK], y: &[f64; CHUNK], look: &impl Look) {
        pow64_chunk(x, y, look)
    }
    #[inline(always)]
    fn constant_first(xs: &mut [f64], ys: &[f64], look: &impl Look) -> bool {
        pow64_constant::<Self>(xs, ys, look)
    }
}

/// f32 pow (`vmath::pow::pow_f32`): the fast path where every lane of the chunk has a positive
/// normal finite `x` and a normal finite `y`, else the general path (which gives such a lane the
/// same bits, as it gives the inline fast path's other lanes, of positive subnormal `x` or of zero
/// or subnormal `y`, theirs); both by stages around their lookups ([`pow32_chunk_fast`],
/// [`pow32_chunk_general`]).
pub(super) struct Pow32;

impl Paths2<f32> for Pow32 {
    #[inline(always)]
    fn fast_ok(_: f32, _: f32) -> bool {
        true
    }
    #[inline(always)]
    fn fast(x: f32, y: f32) -> f32 {
        pow32_lane(x as f64, y as f64) as f32
    }
    #[inline(always)]
    fn general(x: f32, y: f32) -> f32 {
        pow32_lane(x as f64, y as f64) as f32
    }
    #[inline(always)]
    fn constant_first(xs: &mut [f32], ys: &[f32], look: &impl Look) -> bool {
        pow32_constant(xs, ys, look)
    }
    #[inline(always)]
    fn all_fast(xs: &[f32], ys: &[f32]) -> bool {
        fast32(xs, ys)
    }
    #[inline(always)]
    fn fast_chunk(x: &mut [f32; CHUNK], y: &[f32; CHUNK], look: &impl Look) {
        pow32_chunk_fast(x, y, look)
    }
    #[inline(always)]
    fn chunk(x: &mut [f32; CHUNK], y: &[f32; CHUNK], look: &impl Look) {
        if fast32(x, y) {
            pow32_chunk_fast(x, y, look)
        } else {
            pow32_chunk_general(x, y, look)
        }
    }
}

/// [`Pow32`]'s fast path's test on the bits: `bits(x) - bits(MIN_POSITIVE)` is below `bits(inf) -
/// bits(MIN_POSITIVE)` where `x` is positive, normal and finite (below wraps around), and
/// `2·bits(y) - 2·bits(MIN_POSITIVE)` below twice that where `y` is normal and finite (±0 and
/// subnormal exponents, which the fast path would give its bits as well, take the general path,
/// with the same bits): a compare of each into a mask.
#[inline(always)]
fn fast32(x: &[f32], y: &[f32]) -> bool {
    const MIN: u32 = f32::MIN_POSITIVE.to_bits();
    const LIM: u32 = f32::INFINITY.to_bits() - MIN;
    x.iter().zip(y).fold(true, |ok, (&a, &b)| {
        let xa = a.to_bits().wrapping_sub(MIN);
        let ya = (b.to_bits() << 1).wrapping_sub(MIN << 1);
        ok & (xa < LIM) & (ya < LIM << 1)
    })
}

levels2! {
    pow64: f64, Pow;
    pow32: f32, Pow32;
    hypot64: f64, Hypot;
    hypot32: f32, Hypot;
}

#[cfg(test)]
mod tests {
    use super::{hypot_lane, hypot_widened_lane};

    /// The scaling [`hypot_widened_lane`] skips is the identity on f32 values: the same bits as
    /// [`hypot_lane`] for every pair of f32 special values and for pseudo-random f32 bit patterns
    /// (every exponent, both signs, NaN payloads).
    #[test]
    fn f32_hypot_without_scaling_has_the_scaled_bits() {
        let specials = [
            0.0f32,
            -0.0,
            f32::from_bits(1),
            f32::from_bits(0x007f_ffff),
            f32::MIN_POSITIVE,
            1.0,
            3.0,
            1e-20,
            1e20,
            f32::MAX,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
            -f32::NAN,
        ];
        let mut bits = 0x9e37_79b9u32;
        let mut values: Vec<f32> = specials.iter().flat_map(|&v| [v, -v]).collect();
        for _ in 0..4000 {
            bits ^= bits << 13;
            bits ^= bits >> 17;
            bits ^= bits << 5;
            values.push(f32::from_bits(bits));
        }
        for (i, &x) in values.iter().enumerate() {
            for &y in values.iter().skip(i % 7).step_by(37).chain(&specials) {
                let (a, b) = (x as f64, y as f64);
                let want = hypot_lane(a, b) as f32;
                let got = hypot_widened_lane(a, b) as f32;
                assert_eq!(got.to_bits(), want.to_bits(), "hypot({x:e}, {y:e})");
            }
        }
    }
}
