//! The kept reductions' row steps over a typed kernel's int64, int32 or bool values at full width
//! (`sum(i, axis=0)`, `max(i, axis=0)`, `any(b, axis=0)`): over a run of columns, a group of
//! [`GROUP`] rows, or one row, folded into the int64 words int_acc.rs keeps for their outputs, one
//! a column. A sum adds each value widened to int64 (a bool 0 / 1, wrapping), a max or min keeps
//! the larger or smaller (of bools: `any` and `all`), an `any` or `all` the or or and of the
//! values' truths (0 / 1).
//!
//! **The inline code's words, by construction.** Every one of these operations is associative
//! and commutative on int64 words and exact, so a column's word is the same whatever the order and
//! grouping of its rows: the inline loop's (int_acc.rs `int_acc_update`, `int_acc_update_rows`).
//! A word may hold an int32 kernel's int64 identity (`i64::MIN` for a max), which an int64 max of
//! the widened values keeps exactly as the inline loop's clamped one does.
//!
//! A group of bools is combined in their bytes first (an or, an and of their truths, or a count
//! of at most eight), 64 columns at a time, then widened once into the words: a byte operation per
//! 32 columns and row at AVX2, where the inline code widens two bools a vector.

use super::{GROUP, Truth};
use kiln_ir::ReduceOp;

/// [`ReduceOp::Sum`] as the const parameter of the steps.
pub(crate) const SUM: u8 = 0;
/// [`ReduceOp::Max`].
pub(crate) const MAX: u8 = 1;
/// [`ReduceOp::Min`].
pub(crate) const MIN: u8 = 2;
/// [`ReduceOp::Any`].
pub(crate) const ANY: u8 = 3;
/// [`ReduceOp::All`].
pub(crate) const ALL: u8 = 4;

/// The reductions that have steps.
pub const OPS: [ReduceOp; 5] = [
    ReduceOp::Sum,
    ReduceOp::Max,
    ReduceOp::Min,
    ReduceOp::Any,
    ReduceOp::All,
];

/// The const parameter of the steps of `op`, where it has them (sum, max, min, any, all).
pub fn code(op: ReduceOp) -> Option<u8> {
    match op {
        ReduceOp::Sum => Some(SUM),
        ReduceOp::Max => Some(MAX),
        ReduceOp::Min => Some(MIN),
        ReduceOp::Any => Some(ANY),
        ReduceOp::All => Some(ALL),
        _ => None,
    }
}

/// The op of the const parameter `code` of the steps (the inverse of [`code`]).
pub fn op_of(code: u8) -> Option<ReduceOp> {
    match code {
        SUM => Some(ReduceOp::Sum),
        MAX => Some(ReduceOp::Max),
        MIN => Some(ReduceOp::Min),
        ANY => Some(ReduceOp::Any),
        ALL => Some(ReduceOp::All),
        _ => None,
    }
}

/// A value the steps fold: int64, int32 and bool.
pub trait IntValue: Copy {
    /// The value as an int64 word: sign-extended, a bool 0 / 1.
    fn word(self) -> i64;
    /// Whether the value is nonzero.
    fn truth(self) -> bool;
    /// `out[j] = op(out[j], rows[0][j], ..., rows[7][j])` for every `j` of `out`: each value
    /// lifted (`lift`) and merged into the column's word.
    #[inline(always)]
    fn group<const OP: u8>(rows: [&[Self]; GROUP], out: &mut [i64]) {
        let n = out.len();
        let rows = rows.map(|r| &r[..n]);
        for (j, o) in out.iter_mut().enumerate() {
            *o = rows
                .iter()
                .fold(*o, |a, r| merge::<OP>(a, lift::<Self, OP>(r[j])));
        }
    }
}

impl IntValue for i64 {
    #[inline(always)]
    fn word(self) -> i64 {
        self
    }
    #[inline(always)]
    fn truth(self) -> bool {
        self != 0
    }
}

impl IntValue for i32 {
    #[inline(always)]
    fn word(self) -> i64 {
        i64::from(self)
    }
    #[inline(always)]
    fn truth(self) -> bool {
        self != 0
    }
}

/// The columns a group of bools combines in bytes before it widens them into the words.
const BYTE_COLUMNS: usize = 64;

impl IntValue for Truth {
    #[inline(always)]
    fn word(self) -> i64 {
        i64::from(self.0 != 0)
    }
    #[inline(always)]
    fn truth(self) -> bool {
        self.0 != 0
    }
    /// The rows' bytes combined `BYTE_COLUMNS` columns at a time (a max is an `any`, a min an
    /// `all`; a sum counts at most [`GROUP`] truths a column), then merged into the words.
    #[inline(always)]
    fn group<const OP: u8>(rows: [&[Truth]; GROUP], out: &mut [i64]) {
        let n = out.len();
        let whole = n - n % BYTE_COLUMNS;
        for at in (0..whole).step_by(BYTE_COLUMNS) {
            combine::<OP>(&rows, at, &mut out[at..at + BYTE_COLUMNS]);
        }
        // the last columns, fewer than a chunk, one at a time
        for j in whole..n {
            out[j] = rows
                .iter()
                .fold(out[j], |a, r| merge::<OP>(a, lift::<Truth, OP>(r[j])));
        }
    }
}

/// `out[l] = op(out[l], rows[0][at + l], ..., rows[7][at + l])` for the [`BYTE_COLUMNS`] columns
/// of `out` from column `at`: each column's truths combined in a byte (from the identity: an
/// and's 1), then merged into its word.
#[inline(always)]
fn combine<const OP: u8>(rows: &[&[Truth]; GROUP], at: usize, out: &mut [i64]) {
    let out = &mut out[..BYTE_COLUMNS];
    let mut bytes = [u8::from(matches!(OP, MIN | ALL)); BYTE_COLUMNS];
    for r in rows {
        let r = &r[at..at + BYTE_COLUMNS];
        for (b, v) in bytes.iter_mut().zip(r) {
            let t = u8::from(v.0 != 0);
            *b = match OP {
                SUM => *b + t,
                MIN | ALL => *b & t,
                _ => *b | t,
            };
        }
    }
    for (w, &b) in out.iter_mut().zip(&bytes) {
        *w = merge::<OP>(*w, i64::from(b));
    }
}

/// `v` as the steps of `OP` fold it: its truth (0 / 1) for `any` and `all`, else its word.
#[inline(always)]
fn lift<T: IntValue, const OP: u8>(v: T) -> i64 {
    match OP {
        ANY | ALL => i64::from(v.truth()),
        _ => v.word(),
    }
}

/// Two words of `OP` merged.
#[inline(always)]
fn merge<const OP: u8>(a: i64, b: i64) -> i64 {
    match OP {
        SUM => a.wrapping_add(b),
        MAX => a.max(b),
        MIN => a.min(b),
        ANY => a | b,
        _ => a & b,
    }
}

/// `out[j] = op(out[j], x[j])` for every `j` of `out`; `x` holds at least `out.len()` values.
#[inline(always)]
fn single<T: IntValue, const OP: u8>(x: &[T], out: &mut [i64]) {
    let x = &x[..out.len()];
    for (o, &v) in out.iter_mut().zip(x) {
        *o = merge::<OP>(*o, lift::<T, OP>(v));
    }
}

/// An element whose kept rows the wide code folds into int64 words: the step of each op and
/// level. Unsafe to call unless the host has the level ([`super::Level::on_host`]), which call.rs
/// checks.
pub trait IntRows: IntValue {
    /// The group step of the op `code` gives, at `level` (`op` one of its codes).
    fn group_step(op: u8, level: super::Level) -> unsafe fn([&[Self]; GROUP], &mut [i64]);
    /// The single-row step of the op `code` gives, at `level`.
    fn single_step(op: u8, level: super::Level) -> unsafe fn(&[Self], &mut [i64]);
}

macro_rules! levels {
    ($($name:ident: $t:ty;)*) => {
        $(
            mod $name {
                use super::*;

                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(super) fn group_avx2<const OP: u8>(rows: [&[$t]; GROUP], out: &mut [i64]) {
                    <$t as IntValue>::group::<OP>(rows, out)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(super) fn group_avx512<const OP: u8>(rows: [&[$t]; GROUP], out: &mut [i64]) {
                    <$t as IntValue>::group::<OP>(rows, out)
                }
                #[cfg_attr(target_arch = "x86_64", target_feature(enable = "avx2,fma"))]
                pub(super) fn single_avx2<const OP: u8>(x: &[$t], out: &mut [i64]) {
                    single::<$t, OP>(x, out)
                }
                #[cfg_attr(
                    target_arch = "x86_64",
                    target_feature(enable = "avx512f,avx512dq,avx512vl,avx2,fma")
                )]
                pub(super) fn single_avx512<const OP: u8>(x: &[$t], out: &mut [i64]) {
                    single::<$t, OP>(x, out)
                }
            }

            impl IntRows for $t {
                fn group_step(op: u8, level: super::Level) -> unsafe fn([&[$t]; GROUP], &mut [i64]) {
                    use super::Level::{Avx2, Avx512};
                    match (op, level) {
                        (SUM, Avx2) => $name::group_avx2::<SUM>,
                        (MAX, Avx2) => $name::group_avx2::<MAX>,
                        (MIN, Avx2) => $name::group_avx2::<MIN>,
                        (ANY, Avx2) => $name::group_avx2::<ANY>,
                        (ALL, Avx2) => $name::group_avx2::<ALL>,
                        (SUM, Avx512) => $name::group_avx512::<SUM>,
                        (MAX, Avx512) => $name::group_avx512::<MAX>,
                        (MIN, Avx512) => $name::group_avx512::<MIN>,
                        (ANY, Avx512) => $name::group_avx512::<ANY>,
                        (ALL, Avx512) => $name::group_avx512::<ALL>,
                        _ => unreachable!("an op code of `code`"),
                    }
                }
                fn single_step(op: u8, level: super::Level) -> unsafe fn(&[$t], &mut [i64]) {
                    use super::Level::{Avx2, Avx512};
                    match (op, level) {
                        (SUM, Avx2) => $name::single_avx2::<SUM>,
                        (MAX, Avx2) => $name::single_avx2::<MAX>,
                        (MIN, Avx2) => $name::single_avx2::<MIN>,
                        (ANY, Avx2) => $name::single_avx2::<ANY>,
                        (ALL, Avx2) => $name::single_avx2::<ALL>,
                        (SUM, Avx512) => $name::single_avx512::<SUM>,
                        (MAX, Avx512) => $name::single_avx512::<MAX>,
                        (MIN, Avx512) => $name::single_avx512::<MIN>,
                        (ANY, Avx512) => $name::single_avx512::<ANY>,
                        (ALL, Avx512) => $name::single_avx512::<ALL>,
                        _ => unreachable!("an op code of `code`"),
                    }
                }
            }
        )*
    };
}

levels! {
    rows_i64: i64;
    rows_i32: i32;
    rows_bool: Truth;
}
