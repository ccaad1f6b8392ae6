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
fn c_string(s: &[u8]) -> &[u8] {
    match s.iter().position(|&c| c == 0) {
        Some(end) => &s[..end],
        None => s,
    }
}

/// numexpr's `contains(haystack, needle)`: whether the needle, up to its first NUL, occurs in the
/// haystack, up to its first NUL (the empty needle occurs everywhere).
///
/// Without a branch on the data: each place of the haystack is compared with the whole needle and
/// counts while no NUL came before it (a match holds no NUL, the needle's bytes being nonzero).
/// numexpr's strings are short and their lengths vary, where the branches of a search (and a call
/// of memcmp per candidate) are mispredicted more often than not.
pub fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    let n = c_string(needle);
    if n.len() > haystack.len() {
        // no place to start; found only where the needle is empty
        return n.is_empty();
    }
    let mut live = true;
    let mut found = false;
    for (i, w) in haystack.windows(n.len().max(1)).enumerate() {
        let same = w.iter().zip(n).fold(true, |all, (x, y)| all & (x == y));
        found |= live & same;
        live &= haystack[i] != 0;
    }
    found | n.is_empty()
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
    /// search as C's `strstr` of the two C strings states it.
    #[test]
    fn contains_as_strstr() {
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
                        let (hs, ns) = (c_string(&h), c_string(&n));
                        let strstr = ns.is_empty() || hs.windows(ns.len()).any(|w| w == ns);
                        assert_eq!(contains(&h, &n), strstr, "contains({h:?}, {n:?})");
                    }
                }
            }
        }
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
