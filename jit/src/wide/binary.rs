//! The wide routines of two arguments (arctan2, and pow and hypot): the slice loop, its chunks and
//! the `#[target_feature]` functions, as `lanes.rs` has them for one argument.
//!
//! A routine of two arguments transforms `xs` in place, `xs[j] = f(xs[j], ys[j])`, for every `j` of
//! `xs` (`ys` as long: call.rs checks): the first argument's slot receives the result, as a unary
//! routine's does (`skeleton/block.rs` stages both arguments, each into a slot of its own). Per
//! chunk of [`CHUNK`] lanes the same rule as a unary routine: the fast path where every lane of the
//! chunk allows it, else the general path, which gives a lane that allows the fast path the fast
//! path's bits (so a lane's result never depends on its neighbours, nor on the vector width).
//! It declines the algorithms themselves, which live in their families' files (`atan.rs`).

use super::lanes::CHUNK;

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
    /// the chunk in stages instead (`pow.rs`), its lookups in loops of their own, so that the
    /// arithmetic between them vectorises where the level has no gathers.
    #[inline(always)]
    fn chunk(x: &mut [T; CHUNK], y: &[T; CHUNK])
    where
        Self: Sized,
    {
        chunk2::<T, Self>(x, y)
    }
    /// Computes the whole slices by a rule of its own and returns true, or returns false (the
    /// default) for [`map2`]'s chunks: pow where every base is one value (`2.5**x`), whose log it
    /// computes once (the same operations on the same value, so the same bits).
    #[inline(always)]
    fn constant_first(_xs: &mut [T], _ys: &[T]) -> bool {
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

/// [`chunk2`] over the slices (`ys` at least as long as `xs`), each chunk's first arguments read
/// from `src` where it is given (as long as `xs`, which callers check: a kernel's input read where
/// it lies) and else from `xs`; the remainder is copied into chunks padded with its first pair,
/// computed, and copied back. A constant first argument (`2.5**x`) is a literal, never a source:
/// [`Paths2::constant_first`] is tried in place only.
#[inline(always)]
pub(super) fn map2<T: Copy, P: Paths2<T>>(xs: &mut [T], ys: &[T], src: Option<&[T]>) {
    let len = xs.len();
    let ys = &ys[..len];
    if src.is_none() && P::constant_first(xs, ys) {
        return;
    }
    let mut xc = xs.chunks_exact_mut(CHUNK);
    let mut yc = ys.chunks_exact(CHUNK);
    match src {
        None => {
            for (x, y) in (&mut xc).zip(&mut yc) {
                let x: &mut [T; CHUNK] = x.try_into().expect("a chunk of CHUNK lanes");
                let y: &[T; CHUNK] = y.try_into().expect("a chunk of CHUNK lanes");
                P::chunk(x, y);
            }
        }
        Some(src) => {
            for ((x, y), s) in (&mut xc).zip(&mut yc).zip(src.chunks_exact(CHUNK)) {
                let mut lanes: [T; CHUNK] = s.try_into().expect("a chunk of CHUNK lanes");
                let y: &[T; CHUNK] = y.try_into().expect("a chunk of CHUNK lanes");
                P::chunk(&mut lanes, y);
                x.copy_from_slice(&lanes);
            }
        }
    }
    let (xr, yr) = (xc.into_remainder(), yc.remainder());
    let n = xr.len();
    if n == 0 {
        return;
    }
    let from = match src {
        Some(s) => &s[len - n..len],
        None => &*xr,
    };
    let mut bx = [from[0]; CHUNK];
    let mut by = [yr[0]; CHUNK];
    bx[..n].copy_from_slice(from);
    by[..n].copy_from_slice(yr);
    P::chunk(&mut bx, &by);
    xr.copy_from_slice(&bx[..n]);
}

/// The `#[target_feature]` functions of routines of two arguments: `name: type, Paths2 impl;` makes
/// `name::avx2` and `name::avx512`, `fn(&mut [type], &[type], Option<&[type]>)`, in the invoking module (which has
/// `map2` in scope); `name: type, impl, impl512;` uses a second impl at AVX-512 (pow: its lanes
/// whole, where LLVM gathers their table lookups, against its stages at AVX2, which has no fast
/// gathers; the same operations, so the same bits).
macro_rules! levels2 {
    ($($name:ident: $t:ty, $f:ident $(, $f512:ident)?;)*) => {
        $(
            levels2!(@one $name, $t, $f, $f $(, $f512)?);
        )*
    };
    (@one $name:ident, $t:ty, $f:ident, $_g:ident, $g:ident) => {
        levels2!(@one $name, $t, $f, $g);
    };
    (@one $name:ident, $t:ty, $f:ident, $g:ident) => {
        pub(super) mod $name {
            #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
            pub(in crate::wide) fn avx2(xs: &mut [$t], ys: &[$t], src: Option<&[$t]>) {
                super::map2::<$t, super::$f>(xs, ys, src)
            }
            #[cfg_attr(
                target_arch = "x86_64",
                target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
            )]
            pub(in crate::wide) fn avx512(xs: &mut [$t], ys: &[$t], src: Option<&[$t]>) {
                super::map2::<$t, super::$g>(xs, ys, src)
            }
        }
    };
}

pub(super) use levels2;
