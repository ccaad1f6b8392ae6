//! The recursive-descent parser of the text language: tokens to an [`Expr`], with Python's
//! operator precedence and numexpr's functions and reductions.
//!
//! Every recursion (a parenthesis, a call, a unary operator, the right operand of `**`) counts
//! towards [`MAX_NESTING`], so no input can overflow the parser's stack. A tree may be as deep as
//! its text is long (a chain `a + b + c + ...` of any length): everything that walks it later does
//! so with a stack of its own, not by recursion (`tests/deep_chains.rs`).

use super::lexer::{Tok, Token, tokenize};
use crate::error::{Error, Result};
use crate::expr::{Axes, Expr, ExprNode};
use crate::scan::ScanOptions;
use kiln_ir::{BinaryOp, ReduceOp, ScanOp, UnaryOp};

/// The most parentheses, calls, unary operators and `**` right operands that may enclose one
/// another. One more is a parse error, "expression nested too deeply".
pub const MAX_NESTING: usize = 256;

/// Parses a numexpr-style expression into an [`Expr`].
///
/// ```
/// use kiln::{Expr, text};
///
/// let e = text::parse("2 * x ** -1 + sum(y, axis=0)")?;
/// let x = Expr::input("x");
/// let y = Expr::input("y");
/// // `2` and `-1` are Python ints (weak: they take the array's type)
/// assert_eq!(e, Expr::int(2) * x.pow(-1i64) + y.sum_axis(0));
///
/// let err = text::parse("sin(x, y)").unwrap_err();
/// assert!(matches!(err, kiln::Error::Arity { pos: 0, .. }));
/// # Ok::<(), kiln::Error>(())
/// ```
///
/// # Errors
///
/// [`Error::Parse`] with the byte offset and what was expected there, [`Error::UnknownFunction`]
/// for a call of a name that is not a function, [`Error::Arity`] for a call with the wrong number
/// of arguments. Any `&str` gives `Ok` or one of these: never a panic.
pub fn parse(src: &str) -> Result<Expr> {
    let mut parser = Parser {
        tokens: tokenize(src),
        at: 0,
        nesting: 0,
    };
    if parser.peek() == &Tok::End {
        return Err(parse_error(parser.pos(), "empty expression"));
    }
    let node = parser.expression()?;
    match parser.peek() {
        Tok::End => Ok(node),
        Tok::RParen => Err(parse_error(parser.pos(), "unmatched ')'")),
        _ => Err(parser.expected("an operator or the end of the input")),
    }
}

/// Parses `;`-separated expressions (`"call; put"`, one result each; a trailing `;` is allowed), as
/// [`FusedRunner::compile_text`](crate::FusedRunner::compile_text) and [`FusedRunner::compile_many`](crate::FusedRunner::compile_many) take them.
///
/// ```
/// let es = kiln::text::parse_many("x*2; sum(x*2)")?;
/// assert_eq!(es.len(), 2);
/// # Ok::<(), kiln::Error>(())
/// ```
///
/// # Errors
/// As [`parse`], with positions counted from the start of `src`; an empty expression between two
/// `;` is a parse error at the second.
pub fn parse_many(src: &str) -> Result<Vec<Expr>> {
    let mut parts: Vec<(usize, &str)> = Vec::new();
    let mut start = 0;
    for (i, c) in src.char_indices() {
        if c == ';' {
            parts.push((start, &src[start..i]));
            start = i + 1;
        }
    }
    if !src[start..].trim().is_empty() || parts.is_empty() {
        parts.push((start, &src[start..]));
    }
    parts
        .into_iter()
        .map(|(at, part)| {
            parse(part).map_err(|e| match e {
                Error::Parse { pos, message } => Error::Parse {
                    pos: pos + at,
                    message,
                },
                Error::UnknownFunction { name, pos } => Error::UnknownFunction { name, pos: pos + at },
                Error::Arity {
                    name,
                    expected,
                    got,
                    pos,
                } => Error::Arity {
                    name,
                    expected,
                    got,
                    pos: pos + at,
                },
                other => other,
            })
        })
        .collect()
}

fn parse_error(pos: usize, message: impl Into<String>) -> Error {
    Error::Parse {
        pos,
        message: message.into(),
    }
}

/// The functions of the text language.
enum Function {
    Unary(UnaryOp),
    /// `square(x)`: `x * x`, as NumPy computes it (the same node as `x * x`).
    Square,
    Where,
    Binary(BinaryOp),
    Reduce(ReduceOp),
    /// `mean`, `var`, `std`: reductions the builder writes as several kernels.
    Stat(Stat),
    /// `cumsum`, `cumprod`, `cummax`, `cummin`.
    Scan(ScanOp),
    /// `copy`: the value itself.
    Identity,
    /// `ones_like`: ones of the argument's shape and type.
    OnesLike,
    /// `bool(x)`, `int32(x)`, `int64(x)`, `float32(x)`, `float64(x)`: NumPy's `x.astype(...)`.
    Cast(kiln_ir::ElemType),
}

/// The statistics of the text language (ddof = 0, as NumPy's defaults).
#[derive(Clone, Copy, PartialEq)]
enum Stat {
    Mean,
    Var,
    Std,
}

impl Function {
    fn named(name: &str) -> Option<Function> {
        Some(match name {
            "sqrt" => Function::Unary(UnaryOp::Sqrt),
            "abs" => Function::Unary(UnaryOp::Abs),
            "where" => Function::Where,
            "minimum" => Function::Binary(BinaryOp::Min),
            "maximum" => Function::Binary(BinaryOp::Max),
            // every other unary function and the binary ones under their NumPy names (the IR's)
            "sin" | "cos" | "tan" | "exp" | "log" | "tanh" | "exp2" | "log2" | "log10" | "expm1"
            | "log1p" | "arcsin" | "arccos" | "arctan" | "sinh" | "cosh" | "arcsinh" | "arccosh"
            | "arctanh" | "floor" | "ceil" | "trunc" | "round" | "sign" | "isnan" | "isinf" | "isfinite"
            | "signbit" | "erf" | "erfc" | "cbrt" | "deg2rad" | "rad2deg" => {
                Function::Unary(UnaryOp::from_name(name)?)
            }
            "reciprocal" => Function::Unary(UnaryOp::Recip),
            "square" => Function::Square,
            "copy" => Function::Identity,
            "conj" | "conjugate" => Function::Unary(UnaryOp::Conj),
            "real" => Function::Unary(UnaryOp::Real),
            "imag" => Function::Unary(UnaryOp::Imag),
            "complex" => Function::Binary(BinaryOp::Complex),
            "contains" => Function::Binary(BinaryOp::Contains),
            "ones_like" => Function::OnesLike,
            "bool" | "int32" | "int64" | "float32" | "float64" => {
                Function::Cast(kiln_ir::ElemType::from_name(name)?)
            }
            "arctan2" | "hypot" | "copysign" | "fmax" | "fmin" | "fmod" | "logaddexp" | "logaddexp2"
            | "floor_divide" | "nextafter" => Function::Binary(BinaryOp::from_name(name)?),
            "mean" => Function::Stat(Stat::Mean),
            "var" => Function::Stat(Stat::Var),
            "std" => Function::Stat(Stat::Std),
            "cumsum" | "cumprod" | "cummax" | "cummin" => Function::Scan(ScanOp::from_name(name)?),
            _ => Function::Reduce(ReduceOp::from_name(name)?),
        })
    }
}

struct Parser<'a> {
    /// Ends with exactly one `End` or `Bad` token.
    tokens: Vec<Token<'a>>,
    at: usize,
    /// How many parentheses, calls, unary operators and `**` operands enclose the current token.
    nesting: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> &Tok<'a> {
        &self.tokens[self.at].tok
    }

    /// The token after the current one (the last token again at the end).
    fn peek2(&self) -> &Tok<'a> {
        let i = (self.at + 1).min(self.tokens.len() - 1);
        &self.tokens[i].tok
    }

    fn pos(&self) -> usize {
        self.tokens[self.at].pos
    }

    /// Steps past the current token (never past the last one).
    fn bump(&mut self) {
        if self.at + 1 < self.tokens.len() {
            self.at += 1;
        }
    }

    /// The error at the current token: the lexer's own if it is a bad one, else "expected ...".
    fn expected(&self, what: &str) -> Error {
        match self.peek() {
            Tok::Bad(message) => parse_error(self.pos(), message.clone()),
            tok => parse_error(self.pos(), format!("expected {what}, found {}", tok.describe())),
        }
    }

    fn expect(&mut self, tok: Tok<'static>, what: &str) -> Result<()> {
        if *self.peek() == tok {
            self.bump();
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    /// Enters one level of nesting opened by the token at `pos`.
    fn enter(&mut self, pos: usize) -> Result<()> {
        if self.nesting >= MAX_NESTING {
            return Err(parse_error(
                pos,
                format!(
                    "expression nested too deeply: more than {MAX_NESTING} parentheses, calls, unary \
                     operators and ** exponents inside one another (kiln's limit)"
                ),
            ));
        }
        self.nesting += 1;
        Ok(())
    }

    fn leave(&mut self) {
        self.nesting -= 1;
    }

    /// `expression := binary(0)`
    fn expression(&mut self) -> Result<Expr> {
        self.binary(0)
    }

    /// The binary operators that bind at least as tightly as `min`, by precedence climbing:
    ///
    /// ```text
    /// binary(0) := binary(1) [cmp_op binary(1)]    comparisons do not chain
    /// binary(1) := binary(2) ('|' binary(2))*
    /// binary(2) := binary(3) ('^' binary(3))*
    /// binary(3) := binary(4) ('&' binary(4))*
    /// binary(4) := binary(5) (('<<' | '>>') binary(5))*
    /// binary(5) := binary(6) (('+' | '-') binary(6))*
    /// binary(6) := unary (('*' | '/' | '//' | '%') unary)*
    /// ```
    ///
    /// Python's precedence: `^` between `&` and `|`, shifts between `+ -` and `&`.
    ///
    /// One function rather than one per level keeps the stack shallow per parenthesis.
    fn binary(&mut self, min: u8) -> Result<Expr> {
        let mut lhs = self.unary()?;
        let mut compared = false;
        while let Some((op, precedence)) = infix(self.peek()) {
            if precedence < min {
                break;
            }
            let pos = self.pos();
            if precedence == 0 {
                if compared {
                    return Err(parse_error(
                        pos,
                        "chained comparisons such as 'a < b < c' are not supported; \
                         write '(a < b) & (b < c)'",
                    ));
                }
                compared = true;
            }
            self.bump();
            // Left-associative: the right operand binds only tighter operators.
            let rhs = self.binary(precedence + 1)?;
            lhs = lhs.binary(op, rhs);
        }
        Ok(lhs)
    }

    /// `unary := ('-' | '+' | '~') unary | power`. A minus on a literal gives the negated
    /// literal, as numexpr folds it; a plus is nothing.
    fn unary(&mut self) -> Result<Expr> {
        let op = match self.peek() {
            Tok::Minus => Some(UnaryOp::Neg),
            Tok::Plus => None,
            Tok::Tilde => Some(UnaryOp::Not),
            _ => return self.power(),
        };
        let pos = self.pos();
        self.bump();
        self.enter(pos)?;
        let operand = self.unary();
        self.leave();
        let operand = operand?;
        match (op, operand.node()) {
            (None, _) => Ok(operand),
            (Some(UnaryOp::Neg), ExprNode::Literal(v)) => Ok(Expr::lit(-v)),
            (Some(UnaryOp::Neg), ExprNode::Int(v)) if *v != i64::MIN => Ok(Expr::int(-v)),
            (Some(op), _) => Ok(operand.unary(op)),
        }
    }

    /// `power := attribute ['**' unary]`: right-associative, and tighter than a unary operator on
    /// its left but not on its right (`-a**-b` is `-(a**(-b))`).
    fn power(&mut self) -> Result<Expr> {
        let base = self.attribute()?;
        if *self.peek() != Tok::StarStar {
            return Ok(base);
        }
        let pos = self.pos();
        self.bump();
        self.enter(pos)?;
        let exponent = self.unary();
        self.leave();
        let exponent = exponent?;
        // `Expr::pow` turns an exponent of the literal 0.5 into `sqrt`, which is no deeper.
        Ok(base.pow(exponent))
    }

    /// `attribute := primary ('.' ('real' | 'imag'))*`: numexpr's attribute forms, a complex value's
    /// parts (of a real value, the value itself and zeros of its type, as NumPy's).
    fn attribute(&mut self) -> Result<Expr> {
        let mut node = self.primary()?;
        while *self.peek() == Tok::Dot {
            self.bump();
            let pos = self.pos();
            node = match *self.peek() {
                Tok::Ident("real") => node.real(),
                Tok::Ident("imag") => node.imag(),
                Tok::Ident(name) => {
                    return Err(parse_error(
                        pos,
                        format!("unknown attribute '.{name}': only .real and .imag"),
                    ));
                }
                _ => return Err(self.expected("an attribute name after '.'")),
            };
            self.bump();
        }
        Ok(node)
    }

    /// `primary := number | 'inf' | 'nan' | name | call | '(' expression ')'`
    fn primary(&mut self) -> Result<Expr> {
        let pos = self.pos();
        match *self.peek() {
            // an integer is a Python int (weak); one beyond int64 reads as the nearest float
            Tok::Num {
                text, integer: true, ..
            } if text.parse::<i64>().is_ok() => {
                self.bump();
                Ok(Expr::int(text.parse().expect("checked")))
            }
            Tok::Num { value, .. } => {
                self.bump();
                Ok(Expr::lit(value))
            }
            Tok::Imag { value, .. } => {
                self.bump();
                Ok(Expr::imaginary(value))
            }
            Tok::Bytes(ref v) => {
                let e = Expr::bytes(v);
                self.bump();
                Ok(e)
            }
            Tok::Ident(name) if *self.peek2() == Tok::LParen => self.call(name, pos),
            Tok::Ident("inf") => {
                self.bump();
                Ok(Expr::lit(f64::INFINITY))
            }
            Tok::Ident("nan") => {
                self.bump();
                Ok(Expr::lit(f64::NAN))
            }
            Tok::Ident("None") => Err(parse_error(pos, "None is only allowed as axis=None")),
            Tok::Ident(name) if *self.peek2() == Tok::LBracket => self.subscript(name),
            Tok::Ident(name) => {
                self.bump();
                Ok(Expr::input(name))
            }
            Tok::LParen => {
                self.bump();
                self.enter(pos)?;
                let inner = self.expression();
                self.leave();
                let inner = inner?;
                if *self.peek() != Tok::RParen {
                    let what = format!("')' to close the '(' at position {pos}");
                    return Err(self.expected(&what));
                }
                self.bump();
                Ok(inner)
            }
            _ => Err(self.expected("an expression")),
        }
    }

    /// `call := name '(' arguments ')'`, the current token being the name.
    fn call(&mut self, name: &'a str, pos: usize) -> Result<Expr> {
        let Some(function) = Function::named(name) else {
            return Err(Error::UnknownFunction {
                name: name.to_string(),
                pos,
            });
        };
        self.bump(); // the name
        self.enter(self.pos())?;
        self.bump(); // '('
        let result = match function {
            Function::Reduce(op) => self.reduction(Ok(op), name, pos),
            Function::Stat(stat) => self.reduction(Err(stat), name, pos),
            Function::Scan(op) => self.scan(op, name, pos),
            function => self.elementwise(function, name, pos),
        };
        self.leave();
        result
    }

    /// The arguments of an elementwise function, `(expression, ...)`, and the call.
    fn elementwise(&mut self, function: Function, name: &str, pos: usize) -> Result<Expr> {
        let mut args = Vec::new();
        self.arguments(name, &[], &[], |p, _| {
            args.push(p.expression()?);
            Ok(())
        })?;
        let expected = match function {
            Function::Unary(_)
            | Function::Square
            | Function::Identity
            | Function::Cast(_)
            | Function::OnesLike => 1,
            Function::Binary(_) => 2,
            Function::Where => 3,
            Function::Reduce(_) | Function::Stat(_) | Function::Scan(_) => {
                unreachable!("reductions and scans are parsed by `reduction` and `scan`")
            }
        };
        if args.len() != expected {
            return Err(Error::Arity {
                name: name.to_string(),
                expected: expected.to_string(),
                got: args.len(),
                pos,
            });
        }
        let mut args = args.into_iter();
        let mut arg = || args.next().expect("the arity was checked");
        let expr = match function {
            Function::Unary(op) => arg().unary(op),
            Function::Square => arg().square(),
            Function::Identity => arg(),
            Function::OnesLike => arg().ones_like(),
            Function::Cast(t) => arg().cast(t),
            Function::Binary(op) => arg().binary(op, arg()),
            Function::Where => {
                let (c, a, b) = (arg(), arg(), arg());
                Expr::select(c, a, b)
            }
            Function::Reduce(_) | Function::Stat(_) | Function::Scan(_) => {
                unreachable!("reductions and scans are parsed by `reduction` and `scan`")
            }
        };
        Ok(expr)
    }

    /// The arguments of a reduction, `(expression [, axis] [, keyword=value]* [,])`, and the reduction.
    /// The keywords, in any order: `axis` (an integer, `None`, or a tuple of integers), `keepdims`
    /// (`1`, `0`, `True`, `False`) and, for sum, prod, min and max, `initial` (a signed number).
    fn reduction(&mut self, op: std::result::Result<ReduceOp, Stat>, name: &str, pos: usize) -> Result<Expr> {
        let mut arg: Option<Expr> = None;
        let mut axes: Option<(Axes, bool)> = None;
        let mut keepdims: Option<bool> = None;
        let mut initial: Option<f64> = None;
        let mut index: Option<Vec<String>> = None;
        let mut folded: Option<String> = None;
        let mut folded_pos = 0;
        let keywords: &[&str] = if matches!(op, Ok(op) if op.takes_initial()) {
            &["index", "axis", "keepdims", "initial"]
        } else {
            &["axis", "keepdims"]
        };
        let got = self.arguments(name, &["", "axis"], keywords, |p, a| {
            match a {
                Arg::Positional(0) => arg = Some(p.expression()?),
                Arg::Positional(1) => axes = Some(p.axis()?),
                // only to count the arguments for the error
                Arg::Positional(_) => drop(p.expression()?),
                Arg::Keyword("index") => index = Some(p.index_list()?),
                Arg::Keyword("axis") => match *p.peek() {
                    // axis=NAME: the folded index of a contraction
                    Tok::Ident(n) if n != "None" => {
                        folded = Some(n.to_string());
                        folded_pos = p.pos();
                        p.bump();
                    }
                    _ => axes = Some(p.axis()?),
                },
                Arg::Keyword("keepdims") => keepdims = Some(p.flag("keepdims")?),
                Arg::Keyword(k) => initial = Some(p.signed_number(k)?),
            }
            Ok(())
        })?;
        let keyword_seen = index.is_some()
            || folded.is_some()
            || keepdims.is_some()
            || initial.is_some()
            || (axes.is_some() && got < 2);
        let arity = || Error::Arity {
            name: name.to_string(),
            expected: "1 or 2".into(),
            got,
            pos,
        };
        if got > 2 {
            return Err(arity());
        }
        let Some(arg) = arg else {
            if got == 0 && !keyword_seen {
                return Err(arity());
            }
            return Err(parse_error(
                pos,
                format!("{name}() needs the expression to reduce as its first argument"),
            ));
        };
        if let (None, Some(n)) = (&index, &folded) {
            return Err(parse_error(
                folded_pos,
                format!(
                    "expected an integer axis or None, found name '{n}' (a contraction also needs index=(...))"
                ),
            ));
        }
        if index.is_some() || folded.is_some() {
            return self.contraction(op, arg, index, folded, keepdims, initial, name, pos);
        }
        let (axes, tuple) = axes.unwrap_or((Axes::All, false));
        if tuple && matches!(op, Ok(op) if op.is_arg()) {
            return Err(parse_error(
                pos,
                format!("{name}() takes one axis or None, not a tuple"),
            ));
        }
        let keepdims = keepdims.unwrap_or(false);
        let expr = match op {
            Ok(op) => arg.reduce_with(op, axes, keepdims, initial),
            Err(Stat::Mean) => arg.mean_axes(axes, keepdims),
            Err(Stat::Var) => arg.var_axes(axes, keepdims),
            Err(Stat::Std) => arg.std_axes(axes, keepdims),
        };
        Ok(expr)
    }

    /// A contraction: `op(body, index=(i, o), axis=i [, initial=v])`; the names in `index` are the
    /// body's index variables (see [`crate::contract`]).
    #[allow(clippy::too_many_arguments)]
    fn contraction(
        &self,
        op: std::result::Result<ReduceOp, Stat>,
        arg: Expr,
        index: Option<Vec<String>>,
        folded: Option<String>,
        keepdims: Option<bool>,
        initial: Option<f64>,
        name: &str,
        pos: usize,
    ) -> Result<Expr> {
        let Ok(op) = op else {
            return Err(parse_error(pos, format!("{name}() cannot be a contraction")));
        };
        let (Some(index), Some(folded)) = (index, folded) else {
            return Err(parse_error(
                pos,
                format!(
                    "a contraction needs both index=(...) and axis=NAME, as {name}(e, index=(i, o), axis=i)"
                ),
            ));
        };
        if keepdims.is_some() {
            return Err(parse_error(pos, "a contraction takes no keepdims"));
        }
        let body = bind_indices(&arg, &index);
        let refs: Vec<&str> = index.iter().map(String::as_str).collect();
        Ok(Expr::contract_with(op, &refs, &folded, body, initial))
    }

    /// `'(' name (',' name)* [','] ')'`: the index variables of a contraction.
    fn index_list(&mut self) -> Result<Vec<String>> {
        self.expect(Tok::LParen, "'(' to open the index list")?;
        let mut names = Vec::new();
        while let Tok::Ident(n) = *self.peek() {
            names.push(n.to_string());
            self.bump();
            if *self.peek() == Tok::Comma {
                self.bump();
            }
        }
        self.expect(Tok::RParen, "an index name or ')'")?;
        if names.is_empty() {
            return Err(parse_error(self.pos(), "a contraction needs at least one index"));
        }
        Ok(names)
    }

    /// `name '[' name (',' name)* ']'`: an input read at index variables.
    fn subscript(&mut self, name: &'a str) -> Result<Expr> {
        self.bump(); // the name
        self.bump(); // '['
        let mut indices: Vec<String> = Vec::new();
        while let Tok::Ident(n) = *self.peek() {
            indices.push(n.to_string());
            self.bump();
            if *self.peek() == Tok::Comma {
                self.bump();
            } else {
                break;
            }
        }
        self.expect(Tok::RBracket, "an index name or ']'")?;
        let refs: Vec<&str> = indices.iter().map(String::as_str).collect();
        Ok(Expr::subscript(name, &refs))
    }

    /// The arguments of a scan, `(expression [, axis] [, keyword=value]*)`: `axis` (an integer or
    /// None, the default: the flattened array), `exclusive` and `reverse` (1, 0, True, False) and
    /// `initial` (a signed number), keywords in any order.
    fn scan(&mut self, op: ScanOp, name: &str, pos: usize) -> Result<Expr> {
        let mut arg: Option<Expr> = None;
        let mut options = ScanOptions::default();
        let keywords = ["axis", "exclusive", "reverse", "initial"];
        let got = self.arguments(name, &["", "axis"], &keywords, |p, a| {
            match a {
                Arg::Positional(0) => arg = Some(p.expression()?),
                Arg::Positional(1) | Arg::Keyword("axis") => options.axis = p.scan_axis()?,
                // only to count the arguments for the error
                Arg::Positional(_) => drop(p.expression()?),
                Arg::Keyword("exclusive") => options.exclusive = p.flag("exclusive")?,
                Arg::Keyword("reverse") => options.reverse = p.flag("reverse")?,
                Arg::Keyword(k) => options.initial = Some(p.signed_number(k)?),
            }
            Ok(())
        })?;
        let Some(arg) = arg.filter(|_| got <= 2) else {
            return Err(Error::Arity {
                name: name.to_string(),
                expected: "1 or 2".into(),
                got,
                pos,
            });
        };
        Ok(arg.scan(op, options))
    }

    /// A scan's axis: an integer or None.
    fn scan_axis(&mut self) -> Result<Option<isize>> {
        if *self.peek() == Tok::Ident("None") {
            self.bump();
            return Ok(None);
        }
        Ok(Some(self.axis_integer()?))
    }

    /// `axis := 'None' | integer | '(' [integer (',' integer)* [',']] ')'`, and whether it was a
    /// tuple (a parenthesised integer with no comma is an integer, as in Python).
    fn axis(&mut self) -> Result<(Axes, bool)> {
        if *self.peek() == Tok::Ident("None") {
            self.bump();
            return Ok((Axes::All, false));
        }
        if *self.peek() != Tok::LParen {
            return Ok((Axes::Some(vec![self.axis_integer()?]), false));
        }
        self.bump();
        let mut list = Vec::new();
        let mut comma = false;
        while *self.peek() != Tok::RParen {
            list.push(self.axis_integer()?);
            match self.peek() {
                Tok::Comma => {
                    comma = true;
                    self.bump();
                }
                Tok::RParen => {}
                _ => return Err(self.expected("',' or ')' in the axis tuple")),
            }
        }
        self.bump();
        let tuple = comma || list.is_empty();
        Ok((Axes::Some(list), tuple))
    }

    /// `['-' | '+'] integer`: one axis.
    fn axis_integer(&mut self) -> Result<isize> {
        let negative = *self.peek() == Tok::Minus;
        if matches!(self.peek(), Tok::Minus | Tok::Plus) {
            self.bump();
        }
        let pos = self.pos();
        let Tok::Num { text, integer, .. } = *self.peek() else {
            return Err(self.expected("an integer axis or None"));
        };
        if !integer {
            return Err(parse_error(
                pos,
                format!("the axis must be an integer, not '{text}'"),
            ));
        }
        let axis = if negative {
            format!("-{text}")
        } else {
            text.to_string()
        };
        let Ok(axis) = axis.parse::<isize>() else {
            return Err(parse_error(pos, format!("axis {axis} is out of range")));
        };
        self.bump();
        Ok(axis)
    }

    /// A flag: `1`, `0`, `True` or `False`.
    fn flag(&mut self, keyword: &str) -> Result<bool> {
        let value = match *self.peek() {
            Tok::Ident("True") => true,
            Tok::Ident("False") => false,
            Tok::Num {
                value: 1.0,
                integer: true,
                ..
            } => true,
            Tok::Num {
                value: 0.0,
                integer: true,
                ..
            } => false,
            _ => return Err(self.expected(&format!("True, False, 1 or 0 for {keyword}"))),
        };
        self.bump();
        Ok(value)
    }

    /// `['-' | '+'] (number | 'inf' | 'nan')`: the value of `initial`.
    fn signed_number(&mut self, keyword: &str) -> Result<f64> {
        let negative = *self.peek() == Tok::Minus;
        if matches!(self.peek(), Tok::Minus | Tok::Plus) {
            self.bump();
        }
        let value = match *self.peek() {
            Tok::Num { value, .. } => value,
            Tok::Ident("inf") => f64::INFINITY,
            Tok::Ident("nan") => f64::NAN,
            _ => return Err(self.expected(&format!("a number for {keyword}"))),
        };
        self.bump();
        Ok(if negative { -value } else { value })
    }

    /// Reads a call's arguments up to and including its `)`: `(argument [',' argument]* [','])`, each
    /// a positional argument or `keyword=value`, handed to `read` (which reads its value), with the
    /// rules of Python's calls: a keyword is one of `keywords` (none: the call takes no keyword
    /// arguments), given once (the `k`th positional argument gives keyword `positional[k]`, where
    /// that names one), and no positional argument follows a keyword. The number of positional
    /// arguments.
    fn arguments(
        &mut self,
        name: &str,
        positional: &[&str],
        keywords: &[&str],
        mut read: impl FnMut(&mut Self, Arg<'a>) -> Result<()>,
    ) -> Result<usize> {
        let mut seen: Vec<&str> = Vec::new();
        let mut keyword_seen = false;
        let mut got = 0;
        while *self.peek() != Tok::RParen {
            let arg_pos = self.pos();
            if let (&Tok::Ident(keyword), Tok::Assign) = (self.peek(), self.peek2()) {
                if keywords.is_empty() {
                    return Err(parse_error(
                        arg_pos,
                        format!("{name}() takes no keyword arguments"),
                    ));
                }
                if !keywords.contains(&keyword) {
                    return Err(parse_error(
                        arg_pos,
                        format!("{name}() got an unexpected keyword argument '{keyword}'"),
                    ));
                }
                if seen.contains(&keyword) {
                    return Err(parse_error(
                        arg_pos,
                        format!("{name}() got multiple values for {keyword}"),
                    ));
                }
                seen.push(keyword);
                keyword_seen = true;
                self.bump();
                self.bump();
                read(self, Arg::Keyword(keyword))?;
            } else if keyword_seen {
                return Err(parse_error(
                    arg_pos,
                    "positional argument follows keyword argument",
                ));
            } else {
                if let Some(&k) = positional.get(got).filter(|k| !k.is_empty()) {
                    seen.push(k);
                }
                read(self, Arg::Positional(got))?;
                got += 1;
            }
            if !self.argument_separator()? {
                break;
            }
        }
        self.expect(Tok::RParen, "',' or ')'")?;
        Ok(got)
    }

    /// After an argument: steps over a ',' and says whether another argument may follow.
    fn argument_separator(&mut self) -> Result<bool> {
        match self.peek() {
            Tok::Comma => {
                self.bump();
                Ok(true)
            }
            Tok::RParen => Ok(false),
            _ => Err(self.expected("',' or ')'")),
        }
    }
}

/// A binary operator below `**` and its precedence, from 0 (comparisons) to 6 (`*`, `/`, `//`, `%`).
/// `&` and `|` are `And`/`Or`, which the typing makes bitwise on integers (logical on bools, and
/// kiln's logical extension on floats).
fn infix(tok: &Tok<'_>) -> Option<(BinaryOp, u8)> {
    Some(match tok {
        Tok::Lt => (BinaryOp::Lt, 0),
        Tok::Le => (BinaryOp::Le, 0),
        Tok::Gt => (BinaryOp::Gt, 0),
        Tok::Ge => (BinaryOp::Ge, 0),
        Tok::EqEq => (BinaryOp::Eq, 0),
        Tok::Ne => (BinaryOp::Ne, 0),
        Tok::Pipe => (BinaryOp::Or, 1),
        Tok::Caret => (BinaryOp::BitXor, 2),
        Tok::Amp => (BinaryOp::And, 3),
        Tok::Shl => (BinaryOp::Shl, 4),
        Tok::Shr => (BinaryOp::Shr, 4),
        Tok::Plus => (BinaryOp::Add, 5),
        Tok::Minus => (BinaryOp::Sub, 5),
        Tok::Star => (BinaryOp::Mul, 6),
        Tok::Slash => (BinaryOp::Div, 6),
        Tok::Percent => (BinaryOp::Rem, 6),
        Tok::SlashSlash => (BinaryOp::FloorDiv, 6),
        _ => return None,
    })
}

/// `e` with the names in `index` read as index variables (they parse as inputs).
fn bind_indices(e: &Expr, index: &[String]) -> Expr {
    let map = |x: &Expr| bind_indices(x, index);
    match e.node() {
        ExprNode::Input(n) if index.iter().any(|i| i == n) => Expr::idx(n.to_string()),
        ExprNode::Unary(op, a) => map(a).unary(*op),
        ExprNode::Binary(op, a, b) => map(a).binary(*op, map(b)),
        ExprNode::Where(c, a, b) => Expr::select(map(c), map(a), map(b)),
        _ => e.clone(),
    }
}

/// One argument of a call, as [`Parser::arguments`] hands it over: the `k`th positional argument, or
/// the value of a keyword.
#[derive(Debug, Clone, Copy)]
enum Arg<'a> {
    Positional(usize),
    Keyword(&'a str),
}
