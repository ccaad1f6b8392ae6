//! The kept reductions' row steps at full width: a kept sum's (skeleton.rs, "Kept sums, several
//! reduced rows per pass"): over a run of columns, `out[j] += ((r0[j] + r1[j]) + (r2[j] + r3[j])) + ((r4[j] +
//! r5[j]) + (r6[j] + r7[j]))` for a group of eight rows, and `out[j] += x[j]` for a row left over,
//! each value widened to f64 first (f32 data is accumulated in f64, as `Gen::widen` does), the
//! output an f64 accumulator row. A kept max or min of a plain read (`max(m, axis=0)`) steps a
//! group of eight adjacent rows, `out[j] = maximum(...maximum(maximum(out[j], r0[j]), r1[j])...,
//! r7[j])`, or one row, `out[j] = maximum(out[j], x[j])`, in the data's own type, as the inline
//! code's kept update does, row after row.
//!
//! **The inline path's bits, by construction.** Per column these are the operations the inline
//! code performs on one lane (`Gen::acc_update_rows` and `Gen::acc_update` of a sum): the same
//! additions, associated the same way, on the same f64 values; IEEE addition is exact-rounded per
//! lane at every width and x86 propagates the first operand's NaN alike in SSE and AVX, so a
//! column's sum is the same whether 2, 4 or 8 lanes compute it, and whether it lies in a chunk or
//! in the remainder. Columns are independent, so nothing depends on where a run starts or ends.
//! rustc vectorises the loops (`vaddpd zmm`, and `vcvtps2pd` for f32).

/// An element the steps read: widened to f64 exactly (`fpromote`, `fvpromote_low`).
pub(super) trait Widen: Copy {
    fn f64(self) -> f64;
}

impl Widen for f64 {
    #[inline(always)]
    fn f64(self) -> f64 {
        self
    }
}

impl Widen for f32 {
    #[inline(always)]
    fn f64(self) -> f64 {
        f64::from(self)
    }
}

/// Rows a group step adds (skeleton.rs `ROW_GROUP`).
pub const GROUP: usize = 8;

/// The columns before the first at which `x` is 64-byte aligned (at most `n`): the vector loop
/// then reads whole cache lines of the rows that share `x`'s alignment (a kept sum's rows a band
/// apart share it whenever the row's bytes are a multiple of 64).
#[inline(always)]
fn peel<T>(x: &[T], n: usize) -> usize {
    let size = std::mem::size_of::<T>();
    let mis = x.as_ptr() as usize % 64;
    let cols = if mis == 0 || !mis.is_multiple_of(size) {
        0
    } else {
        (64 - mis) / size
    };
    cols.min(n)
}

/// `out[j] += tree(rows[0][j], ..., rows[7][j])` for every `j` of `out`; every row holds at least
/// `out.len()` elements. The columns before row 0's first 64-byte boundary first ([`peel`]).
#[inline(always)]
fn group<T: Widen>(rows: [&[T]; GROUP], out: &mut [f64]) {
    let p = peel(rows[0], out.len());
    let (head, body) = out.split_at_mut(p);
    group_run(rows.map(|r| &r[..p]), head);
    group_run(rows.map(|r| &r[p..]), body);
}

/// [`group`]'s loop.
#[inline(always)]
fn group_run<T: Widen>(rows: [&[T]; GROUP], out: &mut [f64]) {
    let n = out.len();
    let (r0, r1, r2, r3) = (&rows[0][..n], &rows[1][..n], &rows[2][..n], &rows[3][..n]);
    let (r4, r5, r6, r7) = (&rows[4][..n], &rows[5][..n], &rows[6][..n], &rows[7][..n]);
    for j in 0..n {
        let a = (r0[j].f64() + r1[j].f64()) + (r2[j].f64() + r3[j].f64());
        let b = (r4[j].f64() + r5[j].f64()) + (r6[j].f64() + r7[j].f64());
        out[j] += a + b;
    }
}

/// `out[j] += x[j]` for every `j` of `out`; `x` holds at least `out.len()` elements.
#[inline(always)]
fn single<T: Widen>(x: &[T], out: &mut [f64]) {
    let x = &x[..out.len()];
    for (o, &v) in out.iter_mut().zip(x) {
        *o += v.f64();
    }
}

/// `maximum(a, v)` (`MAX`) or `minimum`, NumPy's NaN-propagating extremes as the inline code's
/// kept update computes them (`Gen::maximum`: `a` where it is beyond `v` or NaN, else `v`, so the
/// later of equal values).
#[inline(always)]
fn extreme<T: Copy + PartialOrd, const MAX: bool>(a: T, v: T) -> T {
    #[allow(clippy::eq_op)]
    let keep = if MAX { a > v } else { a < v } || a != a;
    if keep { a } else { v }
}

/// `out[j] = maximum(out[j], x[j])` (`MAX`) or `minimum` for every `j` of `out` ([`extreme`]):
/// the inline path's bits. `x` holds at least `out.len()` elements.
#[inline(always)]
fn single_extreme<T: Copy + PartialOrd, const MAX: bool>(x: &[T], out: &mut [T]) {
    let x = &x[..out.len()];
    for (o, &v) in out.iter_mut().zip(x) {
        *o = extreme::<T, MAX>(*o, v);
    }
}

/// `out[j] = maximum(...maximum(maximum(out[j], r0[j]), r1[j])..., r7[j])` (`MAX`) or `minimum`
/// for every `j` of `out` ([`extreme`]): a group of adjacent rows folded in order, the inline
/// group loop's bits (and those of the rows stepped one by one), each output read and written
/// once. Every row holds at least `out.len()` elements.
#[inline(always)]
fn group_extreme<T: Copy + PartialOrd, const MAX: bool>(rows: [&[T]; GROUP], out: &mut [T]) {
    let n = out.len();
    let rows = rows.map(|r| &r[..n]);
    for (j, o) in out.iter_mut().enumerate() {
        *o = rows.iter().fold(*o, |a, r| extreme::<T, MAX>(a, r[j]));
    }
}

macro_rules! levels {
    ($($name:ident: $t:ty;)*) => {
        $(
            pub(super) mod $name {
                use super::GROUP;
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn group_avx2(rows: [&[$t]; GROUP], out: &mut [f64]) {
                    super::group::<$t>(rows, out)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn group_avx512(rows: [&[$t]; GROUP], out: &mut [f64]) {
                    super::group::<$t>(rows, out)
                }
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn single_avx2(x: &[$t], out: &mut [f64]) {
                    super::single::<$t>(x, out)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn single_avx512(x: &[$t], out: &mut [f64]) {
                    super::single::<$t>(x, out)
                }
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn max_avx2(x: &[$t], out: &mut [$t]) {
                    super::single_extreme::<$t, true>(x, out)
                }
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn min_avx2(x: &[$t], out: &mut [$t]) {
                    super::single_extreme::<$t, false>(x, out)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn max_avx512(x: &[$t], out: &mut [$t]) {
                    super::single_extreme::<$t, true>(x, out)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn min_avx512(x: &[$t], out: &mut [$t]) {
                    super::single_extreme::<$t, false>(x, out)
                }
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn max_group_avx2(rows: [&[$t]; GROUP], out: &mut [$t]) {
                    super::group_extreme::<$t, true>(rows, out)
                }
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(in crate::wide) fn min_group_avx2(rows: [&[$t]; GROUP], out: &mut [$t]) {
                    super::group_extreme::<$t, false>(rows, out)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn max_group_avx512(rows: [&[$t]; GROUP], out: &mut [$t]) {
                    super::group_extreme::<$t, true>(rows, out)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(in crate::wide) fn min_group_avx512(rows: [&[$t]; GROUP], out: &mut [$t]) {
                    super::group_extreme::<$t, false>(rows, out)
                }
            }
        )*
    };
}

levels! {
    rows64: f64;
    rows32: f32;
}
