//! Byte strings, as numexpr has them: NumPy's fixed-width `S` arrays and `b'...'` constants,
//! compared (`== != < <= > >=`) and searched (`contains(haystack, needle)`), each giving a bool.
//!
//! [`compare`] and [`contains`] are the semantics the interpreter runs and compiled code calls.
//!
//! - **Comparisons** compare as if each string were padded with infinitely many NUL bytes, as
//!   NumPy and numexpr do (`b'abc' == b'abc\0\0'`, `b'foo' < b'foo\0bar'`, `b'foo\0a' <
//!   b'foo\0bar'`: bytes after a NUL count). Bytes compare unsigned, as NumPy and Python compare
//!   `bytes` (`b'\x80' > b'\x7f'`). numexpr compares C `char`s, signed on x86, so there
//!   `b'\x80' < b'\x7f'`; kiln follows NumPy, the same on every machine. numexpr also compares a
//!   string with the empty constant `b''` by its first byte alone (`b'\0a' == b''` is true there,
//!   false in NumPy and kiln).
//! - **`contains(h, n)`** is numexpr's (NumPy has no such function): each operand ends at its
//!   first NUL (a C string within its width), and the result is whether the needle occurs in the
//!   haystack (`contains(b'abc', b'a\0z')` is true: the needle is `a`; every string contains the
//!   empty one). Without NUL bytes inside the strings it is `np.char.find(h, n) >= 0`.
//! - Anything else on a byte string (arithmetic, functions, casts, `where`, reductions, a string
//!   beside a number) is a type error, worded as numexpr words it ([`numexpr_signature`]).
//!
//! String constants are interned for the process ([`ByteStr`]): each distinct constant is kept
//! once, so a node holding one stays `Copy` and hash-consing compares them by value.

use crate::op::BinaryOp;
use rustc_hash::FxHashSet;
use std::cmp::Ordering;
use std::fmt;
use std::sync::{Mutex, OnceLock};

/// A byte-string constant (`b'abc'`), interned for the process: equal constants are one
/// allocation, kept for the process's life (as Python interns names).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ByteStr(&'static [u8]);

impl ByteStr {
    /// The interned constant holding `bytes`.
    pub fn new(bytes: &[u8]) -> ByteStr {
        static TABLE: OnceLock<Mutex<FxHashSet<&'static [u8]>>> = OnceLock::new();
        let mut table = TABLE
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(&s) = table.get(bytes) {
            return ByteStr(s);
        }
        let s: &'static [u8] = Box::leak(bytes.to_vec().into_boxed_slice());
        table.insert(s);
        ByteStr(s)
    }

    /// The bytes.
    pub fn bytes(self) -> &'static [u8] {
        self.0
    }

    /// The width of the constant's type (its length: `b'abc'` is `S3`).
    pub fn width(self) -> u32 {
        u32::try_from(self.0.len()).unwrap_or(u32::MAX)
    }
}

impl fmt::Debug for ByteStr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for ByteStr {
    /// As Python's `repr` of a `bytes` object (`b'a\x00\n'`), which the text language reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Repr(self.0).fmt(f)
    }
}

/// Bytes shown as Python's `repr` of a `bytes` object shows them (`b'a\x00\n'`).
pub struct Repr<'a>(pub &'a [u8]);

impl fmt::Display for Repr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let quote = if self.0.contains(&b'\'') && !self.0.contains(&b'"') {
            '"'
        } else {
            '\''
        };
        write!(f, "b{quote}")?;
        for &c in self.0 {
            match c {
                b'\\' => f.write_str("\\\\")?,
                b'\n' => f.write_str("\\n")?,
                b'\r' => f.write_str("\\r")?,
                b'\t' => f.write_str("\\t")?,
                c if c as char == quote => write!(f, "\\{quote}")?,
                0x20..=0x7e => write!(f, "{}", c as char)?,
                c => write!(f, "\\x{c:02x}")?,
            }
        }
        write!(f, "{quote}")
    }
}

/// `a` against `b`, each padded with infinitely many NULs, bytes unsigned (NumPy's order).
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    let n = a.len().min(b.len());
    // byte by byte: numexpr's strings are short, where a loop beats a call of memcmp
    if let Some((x, y)) = a[..n].iter().zip(&b[..n]).find(|(x, y)| x != y) {
        return x.cmp(y);
    }
    // the longer one's rest against NULs: greater where any of it is not NUL
    let rest_nonzero = |s: &[u8]| s[n..].iter().any(|&c| c != 0);
    if rest_nonzero(a) {
        Ordering::Greater
    } else if rest_nonzero(b) {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// The string up to its first NUL (all of it where there is none): a C string within its width.
pub fn c_string(s: &[u8]) -> &[u8] {
    match s.iter().position(|&c| c == 0) {
        Some(end) => &s[..end],
        None => s,
    }
}

/// numexpr's `contains(haystack, needle)`: whether the needle, up to its first NUL, occurs in the
/// haystack, up to its first NUL (the empty needle occurs everywhere).
///
/// Without a branch on the haystack's bytes: numexpr's strings are short and their lengths vary,
/// where the branches of a search (and a call of memcmp per candidate) are mispredicted more often
/// than not. The branches left depend on the needle and the widths only, the same for every
/// string of an array. A needle of up to 8 bytes is searched 8 places at a time (`contains_8`);
/// a longer one place by place, each compared with the whole needle.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let n = c_string(needle);
    if n.is_empty() {
        return true;
    }
    if n.len() <= 8 {
        return contains_8(haystack, n);
    }
    if n.len() > haystack.len() {
        return false;
    }
    // each place counts while no NUL came before it (a match holds no NUL, the needle's bytes
    // being nonzero)
    let mut live = true;
    let mut found = false;
    for (i, w) in haystack.windows(n.len()).enumerate() {
        let same = w.iter().zip(n).fold(true, |all, (x, y)| all & (x == y));
        found |= live & same;
        live &= haystack[i] != 0;
    }
    found
}

/// `0x01` in every byte of a word.
const ONES: u64 = 0x0101_0101_0101_0101;
/// `0x80` in every byte of a word.
const HIGHS: u64 = ONES << 7;

/// Bytes `i..i + 8` of `s` as a little-endian word, zero past its end: one load where the eight
/// bytes are inside `s`, else its last eight shifted down, else (`s` shorter than 8 bytes) its
/// bytes one by one; which one depends on `i` and the width only.
fn word_at(s: &[u8], i: usize) -> u64 {
    let w = s.len();
    if i + 8 <= w {
        u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"))
    } else if i >= w {
        0
    } else if w >= 8 {
        u64::from_le_bytes(s[w - 8..].try_into().expect("8 bytes")) >> (8 * (i + 8 - w))
    } else {
        s[i..].iter().rev().fold(0, |x, &c| (x << 8) | u64::from(c))
    }
}

/// [`contains`] of a needle of 1 to 8 nonzero bytes `n`, 8 places of the haystack at a time: in
/// each word of the haystack (byte `k` the place `base + k`, zero past its end) and the next, the
/// needle's byte `j` is compared with every place's byte `j` at once (`(word >> 8j) ^ n[j]`
/// repeated in each byte, the next word's bytes shifted in), the differences ORed: a zero byte is
/// a match. Places from the first NUL on (a NUL byte of the word, or one in an earlier word) are
/// set nonzero first; a place past the end has zero bytes, never the needle's.
fn contains_8(haystack: &[u8], n: &[u8]) -> bool {
    let w = haystack.len();
    let mut found = false;
    // all ones once a word held a NUL
    let mut after_nul = 0u64;
    let mut lo = word_at(haystack, 0);
    let mut base = 0;
    loop {
        let hi = word_at(haystack, base + 8);
        // 0x80 in exactly the zero bytes of `lo` (adding 0x7f carries into the high bit of a byte
        // whose low bits are not all zero; no carry crosses bytes)
        let nul = !((((lo & !HIGHS) + !HIGHS) | lo) | !HIGHS);
        let first = nul & nul.wrapping_neg();
        // every byte from the first NUL on
        let dead = !((first >> 7).wrapping_sub(1)) | after_nul;
        let mut d = (lo ^ (ONES * u64::from(n[0]))) | dead;
        for (j, &c) in n.iter().enumerate().skip(1) {
            d |= ((lo >> (8 * j)) | (hi << (64 - 8 * j))) ^ (ONES * u64::from(c));
        }
        // a zero byte in `d` (a borrow reaches the high bit of a byte only from a zero one below
        // or the byte itself being zero, so the lowest such bit is a zero byte's)
        found |= (d.wrapping_sub(ONES) & !d & HIGHS) != 0;
        after_nul |= 0u64.wrapping_sub(u64::from(nul != 0));
        base += 8;
        if base >= w {
            return found;
        }
        lo = hi;
    }
}

/// The operations of two byte strings: the comparisons and `contains`.
pub const OPS: [BinaryOp; 7] = {
    use BinaryOp::*;
    [Lt, Le, Gt, Ge, Eq, Ne, Contains]
};

/// Whether `op` applies to two byte strings ([`OPS`]).
pub fn has(op: BinaryOp) -> bool {
    OPS.contains(&op)
}

/// `op` of two byte strings (see [`has`]); None for an opcode they do not have.
pub fn eval(op: BinaryOp, a: &[u8], b: &[u8]) -> Option<bool> {
    use BinaryOp::*;
    Some(match op {
        Contains => contains(a, b),
        Lt => compare(a, b).is_lt(),
        Le => compare(a, b).is_le(),
        Gt => compare(a, b).is_gt(),
        Ge => compare(a, b).is_ge(),
        Eq => compare(a, b).is_eq(),
        Ne => compare(a, b).is_ne(),
        _ => return None,
    })
}

/// numexpr's name of an operation it has no opcode for (`add_sss`, `ge_bsi`, `contains_bsi`): the
/// operation, its result's type code and its operands' (`b` bool, `i` int32, `l` int64, `f`
/// float32, `d` float64, `c` complex, `s` a byte string). numexpr writes `a < b` as `b > a` and
/// `a <= b` as `b >= a`, and so does this name.
pub fn numexpr_signature(op: &str, result: char, operands: &[char]) -> String {
    let (op, swap) = match op {
        "lt" => ("gt", true),
        "le" => ("ge", true),
        other => (other, false),
    };
    let mut codes: Vec<char> = operands.to_vec();
    if swap {
        codes.reverse();
    }
    format!("{op}_{result}{}", codes.into_iter().collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_with_nuls() {
        assert_eq!(compare(b"abc", b"abc\0\0"), Ordering::Equal);
        assert_eq!(compare(b"foo", b"foobar"), Ordering::Less);
        assert_eq!(compare(b"foo", b"foo\0bar"), Ordering::Less);
        assert_eq!(compare(b"foo\0a", b"foo\0bar"), Ordering::Less);
        assert_eq!(compare(b"", b""), Ordering::Equal);
        assert_eq!(compare(b"", b"\0\0"), Ordering::Equal);
        assert_eq!(compare(b"\0a", b""), Ordering::Greater);
        assert_eq!(compare(b"\x80", b"\x7f"), Ordering::Greater);
    }

    #[test]
    fn contains_stops_at_nul() {
        assert!(contains(b"abc", b"ab"));
        assert!(contains(b"abc", b""));
        assert!(contains(b"", b""));
        assert!(!contains(b"", b"a"));
        assert!(contains(b"abc", b"a\0z"));
        assert!(!contains(b"a\0bc", b"bc"));
        assert!(contains(b"test abc here", b" abc "));
        assert!(!contains(b"ab", b"abc"));
    }

    /// Every haystack of width 0 to 5 and needle of width 0 to 3 over `{NUL, a, b}`, against the
    /// search as C's `strstr` of the two C strings states it; then haystacks of every width 0 to
    /// 17 (shorter and longer than a word, ending inside one, two or three) with needles of every
    /// width 0 to 9 (the 8-place path and the longer one), drawn over `{NUL, a, b}` with the
    /// needle most often a piece of the haystack, so that matches are common.
    #[test]
    fn contains_as_strstr() {
        fn strstr(h: &[u8], n: &[u8]) -> bool {
            let (hs, ns) = (c_string(h), c_string(n));
            ns.is_empty() || hs.windows(ns.len()).any(|w| w == ns)
        }
        fn strings(width: usize) -> Vec<Vec<u8>> {
            (0..3usize.pow(width as u32))
                .map(|k| {
                    (0..width)
                        .map(|d| [0, b'a', b'b'][k / 3usize.pow(d as u32) % 3])
                        .collect()
                })
                .collect()
        }
        for hw in 0..=5 {
            for nw in 0..=3 {
                for h in strings(hw) {
                    for n in strings(nw) {
                        assert_eq!(contains(&h, &n), strstr(&h, &n), "contains({h:?}, {n:?})");
                    }
                }
            }
        }
        // xorshift: deterministic draws
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut draw = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % k) as usize
        };
        let mut matched = 0;
        for hw in 0..=17 {
            for nw in 0..=9 {
                for _ in 0..400 {
                    // NUL rarely, so that long C strings occur
                    let byte = |r: usize| [0, b'a', b'b', b'a', b'b', b'a', b'b', b'a'][r];
                    let h: Vec<u8> = (0..hw).map(|_| byte(draw(8))).collect();
                    let n: Vec<u8> = if hw >= nw && draw(4) != 0 {
                        let at = draw((hw - nw + 1) as u64);
                        h[at..at + nw].to_vec()
                    } else {
                        (0..nw).map(|_| byte(draw(8))).collect()
                    };
                    let want = strstr(&h, &n);
                    matched += usize::from(want);
                    assert_eq!(contains(&h, &n), want, "contains({h:?}, {n:?})");
                }
            }
        }
        assert!(matched > 20_000, "{matched} matches");
    }

    #[test]
    fn repr_as_python() {
        assert_eq!(ByteStr::new(b"a'b\x00\n\\").to_string(), r#"b"a'b\x00\n\\""#);
        assert_eq!(ByteStr::new(b"ab").to_string(), "b'ab'");
        assert_eq!(ByteStr::new(b"a'\"").to_string(), r#"b'a\'"'"#);
        assert_eq!(ByteStr::new(b"x"), ByteStr::new(b"x"));
    }

    #[test]
    fn numexpr_names() {
        assert_eq!(numexpr_signature("add", 's', &['s', 's']), "add_sss");
        assert_eq!(numexpr_signature("lt", 'b', &['s', 'd']), "gt_bds");
        assert_eq!(numexpr_signature("ge", 'b', &['s', 'i']), "ge_bsi");
    }
}
