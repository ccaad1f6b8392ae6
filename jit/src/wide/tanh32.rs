//! float32 tanh at full width: `vmath::tanh32` (its clamp, interval index, table row and polynomial,
//! in the order the inline code emits them, `fma` where it emits `fma`), the bits of the inline
//! route by construction. The lookups are what make the table fast or slow: LLVM gathers the lane
//! code's (about 10x slower here than the exp and division they replace), so each level's routine
//! is written in its intrinsics, the chunk of 16 lanes as registers, each column of the table
//! looked up for a register of lanes by permutes: at AVX-512 one `vpermps` (the 16 rows in one
//! register), at AVX2 two and a blend on the index's bit 3 (8 rows a register). Each intrinsic is
//! the instruction LLVM emits for the lane code's operation (`vminps` with the clamp first keeps a
//! NaN, `vpsrad`, `vpmaxsd`, `vpminsd`, the fused multiply-adds). The routines expand their chunk's
//! code in their own `#[target_feature]` function (`lanes::map_with`), so that the intrinsics are
//! safe to call and inlined. Elsewhere than x86-64, where the routines compile but no level is on
//! the host, they are the lane code.

use super::Io;
#[cfg(not(target_arch = "x86_64"))]
use super::lanes::{Lane, Paths, map, sel};
use crate::vmath::tanh32::{BASE, CLAMP, ROWS, SHIFT, TANH32};

/// The lane code: `vmath::tanh32::tanh` for one lane (the routines elsewhere than x86-64).
#[cfg(not(target_arch = "x86_64"))]
pub(super) struct Tanh32;

#[cfg(not(target_arch = "x86_64"))]
impl Paths<f32> for Tanh32 {
    #[inline(always)]
    fn fast_ok(_: f32) -> bool {
        true
    }
    #[inline(always)]
    fn fast(x: f32) -> f32 {
        let a = sel(x.abs() > CLAMP, CLAMP, x.abs());
        let d = (a.to_bits() as i32).wrapping_sub(BASE) >> SHIFT;
        let i = d.clamp(0, ROWS - 1) as usize;
        let [b, c0, c0lo, c1, c2, c3, c4, c5, c6, c7] = std::array::from_fn(|k| TANH32[k][i]);
        let y = a - b;
        let q = c7.mul_add(y, c6);
        let q = q.mul_add(y, c5);
        let q = q.mul_add(y, c4);
        let q = q.mul_add(y, c3);
        let q = q.mul_add(y, c2);
        let t = c1.mul_add(y, c0lo);
        let y2 = y * y;
        let s = y2.mul_add(q, t);
        (c0 + s).or_sign(x)
    }
    #[inline(always)]
    fn general(x: f32) -> f32 {
        Self::fast(x)
    }
}

/// A row's polynomial at `$a` with the sign of `$x` (the lane code's operations, in its order), on
/// the registers of the level whose intrinsics the invoking function imports as `sub`, `fmadd`,
/// `mul`, `add`, `and`, `or` and `set1`; `$cols` the row's 10 columns.
#[cfg(target_arch = "x86_64")]
macro_rules! finish {
    ($x:expr, $a:expr, $cols:expr) => {{
        let [b, c0, c0lo, c1, c2, c3, c4, c5, c6, c7] = $cols;
        let y = sub($a, b);
        let q = fmadd(c7, y, c6);
        let q = fmadd(q, y, c5);
        let q = fmadd(q, y, c4);
        let q = fmadd(q, y, c3);
        let q = fmadd(q, y, c2);
        let t = fmadd(c1, y, c0lo);
        let y2 = mul(y, y);
        let s = fmadd(y2, q, t);
        let r = add(c0, s);
        or(r, and($x, set1(-0.0)))
    }};
}

/// At AVX-512: the chunk as one register, each column looked up by one permute of its 16 rows.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")]
pub(super) fn avx512(io: Io<'_, f32>) {
    use crate::wide::lanes::CHUNK;
    use std::arch::x86_64::*;
    use std::arch::x86_64::{
        _mm512_add_ps as add, _mm512_and_ps as and, _mm512_fmadd_ps as fmadd, _mm512_mul_ps as mul,
        _mm512_or_ps as or, _mm512_set1_ps as set1, _mm512_sub_ps as sub,
    };
    const _: () = assert!(
        ROWS == 16 && CHUNK == 16 && SHIFT == 22,
        "one register of rows, one of lanes"
    );
    crate::wide::lanes::map_with!(io, |c| {
        let x: __m512 = bytemuck::cast(*c);
        let a = _mm512_min_ps(_mm512_set1_ps(CLAMP), _mm512_abs_ps(x));
        let d = _mm512_sub_epi32(_mm512_castps_si512(a), _mm512_set1_epi32(BASE));
        let d = _mm512_srai_epi32::<22>(d);
        let i = _mm512_max_epi32(d, _mm512_setzero_si512());
        let i = _mm512_min_epi32(i, _mm512_set1_epi32(ROWS - 1));
        let cols: [__m512; 10] = std::array::from_fn(|k| _mm512_permutexvar_ps(i, bytemuck::cast(TANH32[k])));
        *c = bytemuck::cast(finish!(x, a, cols));
    })
}

/// At AVX2: two registers of 8 lanes, each column looked up by a permute of each half of its
/// rows and a blend on the index's bit 3.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
pub(super) fn avx2(io: Io<'_, f32>) {
    use crate::wide::lanes::CHUNK;
    use std::arch::x86_64::*;
    use std::arch::x86_64::{
        _mm256_add_ps as add, _mm256_and_ps as and, _mm256_fmadd_ps as fmadd, _mm256_mul_ps as mul,
        _mm256_or_ps as or, _mm256_set1_ps as set1, _mm256_sub_ps as sub,
    };
    const _: () = assert!(
        ROWS == 16 && CHUNK == 16 && SHIFT == 22,
        "two registers of rows, two of lanes"
    );
    crate::wide::lanes::map_with!(io, |c| {
        let halves: [__m256; 2] = bytemuck::cast(*c);
        let out = halves.map(|x| {
            let abs = _mm256_castsi256_ps(_mm256_set1_epi32(i32::MAX));
            let a = _mm256_min_ps(_mm256_set1_ps(CLAMP), _mm256_and_ps(x, abs));
            let d = _mm256_sub_epi32(_mm256_castps_si256(a), _mm256_set1_epi32(BASE));
            let d = _mm256_srai_epi32::<22>(d);
            let i = _mm256_max_epi32(d, _mm256_setzero_si256());
            let i = _mm256_min_epi32(i, _mm256_set1_epi32(ROWS - 1));
            let bit3 = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(i));
            let cols: [__m256; 10] = std::array::from_fn(|k| {
                let [r0, r1]: [__m256; 2] = bytemuck::cast(TANH32[k]);
                _mm256_blendv_ps(
                    _mm256_permutevar8x32_ps(r0, i),
                    _mm256_permutevar8x32_ps(r1, i),
                    bit3,
                )
            });
            finish!(x, a, cols)
        });
        *c = bytemuck::cast(out);
    })
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn avx2(io: Io<'_, f32>) {
    map::<f32, Tanh32>(io)
}

#[cfg(not(target_arch = "x86_64"))]
pub(super) fn avx512(io: Io<'_, f32>) {
    map::<f32, Tanh32>(io)
}
