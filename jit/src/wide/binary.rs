//! The wide routines of two arguments (arctan2, and pow and hypot): the slice loop, its chunks and
//! the `#[target_feature]` functions, as `lanes.rs` has them for one argument.
//!
//! A routine of two arguments computes `xs[j] = f(xs[j], ys[j])` for every `j` of its first
//! arguments (`ys` as long: call.rs checks), in place or from a source ([`super::Io`]): the first
//! argument's slot (or the output) receives the result, as a unary routine's does
//! (`skeleton/block.rs` stages each argument that is no input read in place into a slot of its
//! own). Per
//! chunk of [`CHUNK`] lanes the same rule as a unary routine: the fast path where every lane of the
//! chunk allows it, else the general path, which gives a lane that allows the fast path the fast
//! path's bits (so a lane's result never depends on its neighbours, nor on the vector width).
//! It declines the algorithms themselves, which live in their families' files (`atan.rs`).

use super::lanes::{CHUNK, Line, Look};
use super::{Io, write};

/// One function of two arguments on one type: which pairs may take the fast path, the fast path,
/// the general path. Function items rather than closures, so that each is inlined into the
/// `#[target_feature]` function (see `lanes::Paths`).
pub(super) trait Paths2<T: Copy> {
    /// Whether `(x, y)` may take the fast path.
    fn fast_ok(x: T, y: T) -> bool;
    /// The fast path.
    fn fast(x: T, y: T) -> T;
    /// The general path.
    fn general(x: T, y: T) -> T;
    /// A chunk's pairs: [`chunk2`]'s rule by default. A routine whose lanes read tables computes
    /// the chunk in stages instead (`pow.rs`), its lookups in loops of their own (pow's 16-row
    /// columns by `look`, the level's [`Look`]), so that the arithmetic between them vectorises.
    #[inline(always)]
    fn chunk(x: &mut [T; CHUNK], y: &[T; CHUNK], _look: &impl Look)
    where
        Self: Sized,
    {
        chunk2::<T, Self>(x, y)
    }
    /// Whether every pair of the slices (as long) may take the fast path, tested before their
    /// chunks are, so that each runs [`Paths2::fast_chunk`] with no test of its own (the same bits:
    /// the fast path is each chunk's own choice then): for a routine whose per-chunk test costs
    /// what a test of the whole slices does not (f32 pow's, a fifth of its time at AVX-512). False
    /// by default: each chunk tests its own pairs ([`Paths2::chunk`]).
    #[inline(always)]
    fn all_fast(_xs: &[T], _ys: &[T]) -> bool {
        false
    }
    /// A chunk's pairs by the fast path, where every pair of the slices allows it
    /// ([`Paths2::all_fast`]).
    #[inline(always)]
    fn fast_chunk(x: &mut [T; CHUNK], y: &[T; CHUNK], _look: &impl Look)
    where
        Self: Sized,
    {
        for (a, &b) in x.iter_mut().zip(y.iter()) {
            *a = Self::fast(*a, b);
        }
    }
    /// Computes the whole slices by a rule of its own and returns true, or returns false (the
    /// default) for [`map2`]'s chunks: pow where every base is one value (`2.5**x`), whose log it
    /// computes once (the same operations on the same value, so the same bits).
    #[inline(always)]
    fn constant_first(_xs: &mut [T], _ys: &[T], _look: &impl Look) -> bool {
        false
    }
}

/// The chunk's pairs by the fast path if every one of them allows it, else by the general path.
#[inline(always)]
fn chunk2<T: Copy, P: Paths2<T>>(x: &mut [T; CHUNK], y: &[T; CHUNK]) {
    let mut ok = true;
    for (&a, &b) in x.iter().zip(y.iter()) {
        ok &= P::fast_ok(a, b);
    }
    if ok {
        for (a, &b) in x.iter_mut().zip(y.iter()) {
            *a = P::fast(*a, b);
        }
    } else {
        for (a, &b) in x.iter_mut().zip(y.iter()) {
            *a = P::general(*a, b);
        }
    }
}

/// [`chunk2`] over the first arguments (in place, or read from the source and the results written
/// into the destination: a kernel's input read where it lies) and `ys` (at least as long); the
/// remainder is copied into chunks padded with its first pair, computed, and copied out. A
/// constant first argument (`2.5**x`) is a literal, never a source: [`Paths2::constant_first`] is
/// tried in place only. Where [`Paths2::all_fast`] holds, every chunk by [`Paths2::fast_chunk`].
/// `look` is the level's lookup of 16-row table columns.
#[inline(always)]
pub(super) fn map2<T: Copy, P: Paths2<T>>(mut io: Io<'_, T>, ys: &[T], look: &impl Look) {
    let ys = &ys[..io.len()];
    if let Io::InPlace(xs) = &mut io
        && P::constant_first(xs, ys, look)
    {
        return;
    }
    if P::all_fast(io.src(), ys) {
        chunks2::<T, P, true>(io, ys, look)
    } else {
        chunks2::<T, P, false>(io, ys, look)
    }
}

/// [`map2`]'s chunks, each by [`Paths2::fast_chunk`] where `FAST`, else by [`Paths2::chunk`].
#[inline(always)]
fn chunks2<T: Copy, P: Paths2<T>, const FAST: bool>(io: Io<'_, T>, ys: &[T], look: &impl Look) {
    match io {
        Io::InPlace(xs) => {
            let mut xc = xs.chunks_exact_mut(CHUNK);
            let mut yc = ys.chunks_exact(CHUNK);
            for (x, y) in (&mut xc).zip(&mut yc) {
                let x: &mut [T; CHUNK] = x.try_into().expect("a chunk of CHUNK lanes");
                let y: &[T; CHUNK] = y.try_into().expect("a chunk of CHUNK lanes");
                one::<T, P, FAST>(x, y, look);
            }
            let (xr, yr) = (xc.into_remainder(), yc.remainder());
            if !xr.is_empty() {
                let bx = rest::<T, P, FAST>(xr, yr, look);
                let n = xr.len();
                xr.copy_from_slice(&bx[..n]);
            }
        }
        Io::From { dst, src } => {
            let src = &src[..dst.len()];
            let mut xc = dst.chunks_exact_mut(CHUNK);
            let mut yc = ys.chunks_exact(CHUNK);
            for ((x, y), s) in (&mut xc).zip(&mut yc).zip(src.chunks_exact(CHUNK)) {
                let mut lanes = Line::<[T; CHUNK]>(s.try_into().expect("a chunk of CHUNK lanes"));
                let y: &[T; CHUNK] = y.try_into().expect("a chunk of CHUNK lanes");
                one::<T, P, FAST>(&mut lanes, y, look);
                write(x, &lanes[..]);
            }
            let (xr, yr) = (xc.into_remainder(), yc.remainder());
            let n = xr.len();
            if n > 0 {
                let bx = rest::<T, P, FAST>(&src[src.len() - n..], yr, look);
                write(xr, &bx[..n]);
            }
        }
    }
}

/// One chunk: by [`Paths2::fast_chunk`] where `FAST`, else by [`Paths2::chunk`].
#[inline(always)]
fn one<T: Copy, P: Paths2<T>, const FAST: bool>(x: &mut [T; CHUNK], y: &[T; CHUNK], look: &impl Look) {
    if FAST {
        P::fast_chunk(x, y, look)
    } else {
        P::chunk(x, y, look)
    }
}

/// The remainder's pairs (`from` and `ys`, fewer than [`CHUNK`], at least one) in a chunk padded
/// with the first pair ([`one`]).
#[inline(always)]
fn rest<T: Copy, P: Paths2<T>, const FAST: bool>(from: &[T], ys: &[T], look: &impl Look) -> [T; CHUNK] {
    let n = from.len();
    let mut bx = [from[0]; CHUNK];
    let mut by = [ys[0]; CHUNK];
    bx[..n].copy_from_slice(from);
    by[..n].copy_from_slice(&ys[..n]);
    one::<T, P, FAST>(&mut bx, &by, look);
    bx
}

/// The `#[target_feature]` functions of routines of two arguments: `name: type, Paths2 impl;` makes
/// `name::avx2` and `name::avx512`, `fn(Io<type>, &[type])`, in the invoking module (which has
/// `map2` in scope), each with its level's lookup of 16-row table columns.
macro_rules! levels2 {
    ($($name:ident: $t:ty, $f:ident;)*) => {
        $(
            pub(super) mod $name {
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn avx2(io: $crate::wide::Io<'_, $t>, ys: &[$t]) {
                    super::map2::<$t, super::$f>(io, ys, &$crate::wide::lanes::index_col)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn avx512(io: $crate::wide::Io<'_, $t>, ys: &[$t]) {
                    // the closure, defined in the `#[target_feature]` function, has its features:
                    // the permutes are safe and inlined
                    use $crate::wide::lanes::permute_col;
                    super::map2::<$t, super::$f>(io, ys, &|col, rows| permute_col(col, rows))
                }
            }
        )*
    };
}

pub(super) use levels2;
