//! The lexer of the text language: splits a `&str` into tokens, each with its byte offset.
//!
//! It works on bytes and only ever steps over ASCII ones, so every offset it reports is a char
//! boundary of the source. It never fails: a character or literal it cannot read becomes a
//! [`Tok::Bad`] token carrying the error message, and lexing stops there, so that the parser
//! reports whichever error comes first in the text.

/// What a token is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok<'a> {
    /// A decimal literal: its text, its value (`1e999` is inf), and whether it is an integer
    /// (digits only), as an axis must be.
    Num {
        text: &'a str,
        value: f64,
        integer: bool,
    },
    /// An imaginary literal, a decimal literal with a `j` or `J` suffix (Python's `2j`, `1.5e3J`): its
    /// text (the suffix included) and its value's imaginary part.
    Imag {
        text: &'a str,
        value: f64,
    },
    /// A byte-string literal, `b'...'` or `b"..."` with Python's escapes (`rb'...'` raw), or a
    /// string literal `'...'` of ASCII characters, which numexpr reads as bytes too: its bytes.
    Bytes(Vec<u8>),
    /// A name: `[A-Za-z_][A-Za-z0-9_]*`.
    Ident(&'a str),
    LParen,
    RParen,
    /// `[` and `]`: a subscript, `x[i, o]`, inside a contraction.
    LBracket,
    RBracket,
    Comma,
    /// `=`, only meaningful in `axis=k`.
    Assign,
    Plus,
    Minus,
    Star,
    Slash,
    /// `//`, NumPy's floor_divide.
    SlashSlash,
    /// `.`, before an attribute: `(expr).real`, `x.imag`.
    Dot,
    /// `%`, NumPy's remainder.
    Percent,
    StarStar,
    Lt,
    Le,
    Gt,
    Ge,
    EqEq,
    Ne,
    Amp,
    Pipe,
    Caret,
    Shl,
    Shr,
    Tilde,
    /// Something that is not a token: the message says what is wrong. Always the last token.
    Bad(String),
    /// The end of the input. Always the last token.
    End,
}

impl Tok<'_> {
    /// How the token reads in an error message.
    pub(crate) fn describe(&self) -> String {
        let punct = |s: &str| format!("'{s}'");
        match self {
            Tok::Num { text, .. } | Tok::Imag { text, .. } => format!("number '{text}'"),
            Tok::Ident(name) => format!("name '{name}'"),
            Tok::Bytes(b) => format!("string {}", kiln_ir::bytes::Repr(b)),
            Tok::LParen => punct("("),
            Tok::RParen => punct(")"),
            Tok::LBracket => punct("["),
            Tok::RBracket => punct("]"),
            Tok::Comma => punct(","),
            Tok::Assign => punct("="),
            Tok::Plus => punct("+"),
            Tok::Minus => punct("-"),
            Tok::Star => punct("*"),
            Tok::Slash => punct("/"),
            Tok::SlashSlash => punct("//"),
            Tok::Dot => punct("."),
            Tok::Percent => punct("%"),
            Tok::StarStar => punct("**"),
            Tok::Lt => punct("<"),
            Tok::Le => punct("<="),
            Tok::Gt => punct(">"),
            Tok::Ge => punct(">="),
            Tok::EqEq => punct("=="),
            Tok::Ne => punct("!="),
            Tok::Amp => punct("&"),
            Tok::Pipe => punct("|"),
            Tok::Caret => punct("^"),
            Tok::Shl => punct("<<"),
            Tok::Shr => punct(">>"),
            Tok::Tilde => punct("~"),
            Tok::Bad(message) => message.clone(),
            Tok::End => "end of input".to_string(),
        }
    }
}

/// A token and the byte offset where it starts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Token<'a> {
    pub tok: Tok<'a>,
    pub pos: usize,
}

/// Splits `src` into tokens. The last token is [`Tok::End`] (at `src.len()`) or [`Tok::Bad`].
pub(crate) fn tokenize(src: &str) -> Vec<Token<'_>> {
    let bytes = src.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    loop {
        while i < bytes.len() && bytes[i].is_ascii_whitespace() {
            i += 1;
        }
        let pos = i;
        let Some(&b) = bytes.get(i) else {
            tokens.push(Token { tok: Tok::End, pos });
            return tokens;
        };
        let next = bytes.get(i + 1).copied();
        let (tok, len) = match b {
            b'0'..=b'9' => number(src, pos),
            b'.' if next.is_some_and(|c| c.is_ascii_digit()) => number(src, pos),
            b'.' if next.is_some_and(|c| c.is_ascii_alphabetic() || c == b'_') => (Tok::Dot, 1),
            b'\'' | b'"' => string(src, pos, 0, false),
            b'b' | b'B' | b'r' | b'R' if string_prefix(bytes, pos).is_some() => {
                let (prefix, raw) = string_prefix(bytes, pos).unwrap_or((0, false));
                string(src, pos, prefix, raw)
            }
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                let len = bytes[pos..]
                    .iter()
                    .position(|c| !is_ident_byte(*c))
                    .unwrap_or(bytes.len() - pos);
                (Tok::Ident(&src[pos..pos + len]), len)
            }
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b'[' => (Tok::LBracket, 1),
            b']' => (Tok::RBracket, 1),
            b',' => (Tok::Comma, 1),
            b'+' => (Tok::Plus, 1),
            b'-' => (Tok::Minus, 1),
            b'*' if next == Some(b'*') => (Tok::StarStar, 2),
            b'*' => (Tok::Star, 1),
            b'/' if next == Some(b'/') => (Tok::SlashSlash, 2),
            b'/' => (Tok::Slash, 1),
            b'%' => (Tok::Percent, 1),
            b'<' if next == Some(b'=') => (Tok::Le, 2),
            b'<' if next == Some(b'<') => (Tok::Shl, 2),
            b'<' => (Tok::Lt, 1),
            b'>' if next == Some(b'=') => (Tok::Ge, 2),
            b'>' if next == Some(b'>') => (Tok::Shr, 2),
            b'>' => (Tok::Gt, 1),
            b'=' if next == Some(b'=') => (Tok::EqEq, 2),
            b'=' => (Tok::Assign, 1),
            b'!' if next == Some(b'=') => (Tok::Ne, 2),
            b'&' => (Tok::Amp, 1),
            b'|' => (Tok::Pipe, 1),
            b'~' => (Tok::Tilde, 1),
            b'^' => (Tok::Caret, 1),
            _ => {
                // `pos` is a char boundary: everything before it that was consumed is ASCII.
                let c = src[pos..].chars().next().unwrap_or('\u{fffd}');
                (Tok::Bad(format!("unexpected character {c:?}")), 0)
            }
        };
        let bad = matches!(tok, Tok::Bad(_));
        tokens.push(Token { tok, pos });
        if bad {
            return tokens;
        }
        i += len;
    }
}

fn is_ident_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The length of a string prefix at `pos` (`b`, `rb`, `br`, `r`, either case) right before a
/// quote, and whether it is raw; None where the letters are a name.
fn string_prefix(bytes: &[u8], pos: usize) -> Option<(usize, bool)> {
    let lower = |i: usize| bytes.get(pos + i).map(u8::to_ascii_lowercase);
    let quote = |i: usize| matches!(bytes.get(pos + i), Some(b'\'' | b'"'));
    match (lower(0), lower(1)) {
        (Some(b'b'), _) if quote(1) => Some((1, false)),
        (Some(b'r'), _) if quote(1) => Some((1, true)),
        (Some(b'b'), Some(b'r')) | (Some(b'r'), Some(b'b')) if quote(2) => Some((2, true)),
        _ => None,
    }
}

/// Reads a string literal at `pos` whose quote follows a prefix of `prefix` bytes: its bytes, with
/// Python's escapes unless `raw` (`\\ \' \" \a \b \f \n \r \t \v \ooo \xhh`, a backslash before
/// a newline joins lines, any other backslash stays). Only ASCII characters may be written in it,
/// as in Python's bytes literals (numexpr encodes a string constant as ASCII).
fn string(src: &str, pos: usize, prefix: usize, raw: bool) -> (Tok<'_>, usize) {
    let bytes = src.as_bytes();
    let quote = bytes[pos + prefix];
    let mut out = Vec::new();
    let mut i = pos + prefix + 1;
    let bad = |why: String| (Tok::Bad(why), 0);
    loop {
        let Some(&c) = bytes.get(i) else {
            return bad("unterminated string literal".into());
        };
        match c {
            c if c == quote => return (Tok::Bytes(out), i + 1 - pos),
            b'\n' => return bad("unterminated string literal (a newline inside it)".into()),
            c if !c.is_ascii() => {
                let ch = src[i..].chars().next().unwrap_or('\u{fffd}');
                return bad(format!(
                    "string literals hold ASCII characters only ({ch:?}): write its bytes as \\x escapes"
                ));
            }
            b'\\' if raw => {
                // a raw string keeps the backslash, and the quote after it does not end it
                out.push(c);
                if let Some(&n) = bytes.get(i + 1).filter(|n| n.is_ascii()) {
                    out.push(n);
                    i += 1;
                }
                i += 1;
            }
            b'\\' => {
                let Some(&e) = bytes.get(i + 1) else {
                    return bad("unterminated string literal".into());
                };
                i += 2;
                match e {
                    b'\n' => {}
                    b'\\' | b'\'' | b'"' => out.push(e),
                    b'a' => out.push(0x07),
                    b'b' => out.push(0x08),
                    b'f' => out.push(0x0c),
                    b'n' => out.push(b'\n'),
                    b'r' => out.push(b'\r'),
                    b't' => out.push(b'\t'),
                    b'v' => out.push(0x0b),
                    b'0'..=b'7' => {
                        let mut v = u32::from(e - b'0');
                        for _ in 0..2 {
                            match bytes.get(i) {
                                Some(&d @ b'0'..=b'7') => {
                                    v = v * 8 + u32::from(d - b'0');
                                    i += 1;
                                }
                                _ => break,
                            }
                        }
                        out.push((v & 0xff) as u8);
                    }
                    b'x' => {
                        let hex = bytes.get(i..i + 2).and_then(|h| std::str::from_utf8(h).ok());
                        match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                            Some(v) if hex.is_some_and(|h| h.bytes().all(|d| d.is_ascii_hexdigit())) => {
                                out.push(v);
                                i += 2;
                            }
                            _ => return bad(format!("invalid \\x escape at position {}", i - 2)),
                        }
                    }
                    other if other.is_ascii() => out.extend([b'\\', other]),
                    _ => {
                        return bad("string literals hold ASCII characters only".into());
                    }
                }
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
}

/// Reads a decimal literal at `pos`, Python's form: `digits [. digits] [(e|E) [+|-] digits]`, with
/// digits on at least one side of the point. Returns the token and its length in bytes.
fn number(src: &str, pos: usize) -> (Tok<'_>, usize) {
    let bytes = src.as_bytes();
    let digits = |from: usize| {
        bytes[from..]
            .iter()
            .position(|c| !c.is_ascii_digit())
            .map_or(bytes.len(), |n| from + n)
    };
    let mut end = digits(pos);
    let mut integer = true;
    if bytes.get(end) == Some(&b'.') {
        integer = false;
        end = digits(end + 1);
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut e = end + 1;
        if matches!(bytes.get(e), Some(b'+' | b'-')) {
            e += 1;
        }
        if bytes.get(e).is_some_and(|c| c.is_ascii_digit()) {
            integer = false;
            end = digits(e);
        }
    }
    // Python's imaginary suffix, `2j`
    let imaginary = matches!(bytes.get(end), Some(b'j' | b'J'));
    let text = &src[pos..end];
    if imaginary {
        end += 1;
    }
    // A literal run into a name, a digit or another point (`1x`, `1e`, `0x10`, `1.2.3`) is not a
    // number followed by something else, as Python sees it too.
    if bytes.get(end).is_some_and(|&c| is_ident_byte(c) || c == b'.') {
        let rest = bytes[end..]
            .iter()
            .position(|&c| !(is_ident_byte(c) || c == b'.'))
            .map_or(bytes.len(), |n| end + n);
        return (
            Tok::Bad(format!("invalid number literal '{}'", &src[pos..rest])),
            0,
        );
    }
    match text.parse::<f64>() {
        Ok(value) if imaginary => (
            Tok::Imag {
                text: &src[pos..end],
                value,
            },
            end - pos,
        ),
        Ok(value) => (Tok::Num { text, value, integer }, end - pos),
        Err(_) => (Tok::Bad(format!("invalid number literal '{text}'")), 0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok<'_>> {
        tokenize(src).into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers() {
        for (src, v) in [
            ("2", 2.0),
            ("2.5", 2.5),
            (".5", 0.5),
            ("2.", 2.0),
            ("1e-3", 1e-3),
            ("1E+3", 1e3),
            ("1.e2", 100.0),
            (".5e1", 5.0),
        ] {
            match &kinds(src)[0] {
                Tok::Num { value, .. } => assert_eq!(*value, v, "{src}"),
                t => panic!("{src}: {t:?}"),
            }
        }
        assert!(matches!(kinds("1e999")[0], Tok::Num { value, .. } if value == f64::INFINITY));
        assert!(matches!(kinds("12")[0], Tok::Num { integer: true, .. }));
        assert_eq!(
            kinds("2j")[0],
            Tok::Imag {
                text: "2j",
                value: 2.0
            }
        );
        assert_eq!(
            kinds("1.5e3J")[0],
            Tok::Imag {
                text: "1.5e3J",
                value: 1500.0
            }
        );
        assert!(matches!(kinds("2jx")[0], Tok::Bad(_)));
        assert!(matches!(kinds("12.")[0], Tok::Num { integer: false, .. }));
    }

    #[test]
    fn strings_as_python_reads_them() {
        assert_eq!(kinds("b'ab'")[0], Tok::Bytes(b"ab".to_vec()));
        assert_eq!(kinds("B\"a'b\"")[0], Tok::Bytes(b"a'b".to_vec()));
        assert_eq!(kinds("'b:'")[0], Tok::Bytes(b"b:".to_vec()));
        assert_eq!(
            kinds(r"b'\x00\n\t\\\'\101\0\q'")[0],
            Tok::Bytes(b"\x00\n\t\\'A\0\\q".to_vec())
        );
        assert_eq!(kinds(r"rb'\x00'")[0], Tok::Bytes(br"\x00".to_vec()));
        assert_eq!(kinds("b''")[0], Tok::Bytes(Vec::new()));
        assert_eq!(kinds("bx")[0], Tok::Ident("bx"));
        assert_eq!(kinds("b")[0], Tok::Ident("b"));
        for bad in ["b'ab", "b'\\x4'", "b'\u{e9}'", "'a"] {
            assert!(matches!(kinds(bad).last().unwrap(), Tok::Bad(_)), "{bad}");
        }
    }

    #[test]
    fn bad_tokens_stop_lexing() {
        for src in ["1x", "1e", "0x10", "1.2.3", "a $ b", "é", "a ? b"] {
            let toks = tokenize(src);
            assert!(matches!(toks.last().unwrap().tok, Tok::Bad(_)), "{src}: {toks:?}");
        }
        let toks = tokenize("ab é");
        assert_eq!(toks[1].pos, 3);
    }

    #[test]
    fn operators() {
        assert_eq!(
            kinds("**<=>===!=<>=&|~*,^<<>>"),
            vec![
                Tok::StarStar,
                Tok::Le,
                Tok::Ge,
                Tok::EqEq,
                Tok::Ne,
                Tok::Lt,
                Tok::Ge,
                Tok::Amp,
                Tok::Pipe,
                Tok::Tilde,
                Tok::Star,
                Tok::Comma,
                Tok::Caret,
                Tok::Shl,
                Tok::Shr,
                Tok::End
            ]
        );
    }
}
