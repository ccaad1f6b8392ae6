//! Python integer literals beyond int64 in an expression's text (`a + 99999999999999999999999`).
//!
//! kiln's parser reads such a literal as the nearest float, which is what NumPy 2 makes of a Python
//! int beside a float array; beside an integer or bool array (or alone) NumPy and numexpr raise
//! `OverflowError`. The extension finds these literals in the text when it compiles it
//! ([`beyond_int64`]), and a call whose inputs include an integer or bool array, or that has no
//! inputs, raises `OverflowError` naming the literal (`Kernel::hold_all`). The rule is per
//! call, not per operator: an expression that mixes integer and float inputs is refused even where
//! the literal meets only the floats. Declined here: any other literal (floats, `1e30`, names).

/// The first integer literal of `src` that does not fit int64, as written; None if there is none.
/// A literal is a run of digits not inside a quoted string, not part of a name or a float (`x12`,
/// `1.5`, `12.`, `1e30`, `3j`).
pub fn beyond_int64(src: &str) -> Option<&str> {
    let b = src.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || !c.is_ascii();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'\'' || c == b'"' {
            // a quoted string: skipped to its closing quote
            i += 1 + b[i + 1..].iter().position(|&q| q == c).map_or(b.len(), |n| n + 1);
            continue;
        }
        if ident(c) && !c.is_ascii_digit() {
            // a name, digits included
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
            continue;
        }
        if !c.is_ascii_digit() {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        let after_point = start > 0 && b[start - 1] == b'.';
        let float_or_name = matches!(b.get(i), Some(&n) if n == b'.' || ident(n));
        if !after_point && !float_or_name && src[start..i].parse::<i64>().is_err() {
            return Some(&src[start..i]);
        }
        // the rest of a float or a malformed literal (`1.5e3`, `1x`)
        while i < b.len() && (ident(b[i]) || b[i] == b'.') {
            i += 1;
        }
    }
    None
}
