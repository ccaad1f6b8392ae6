//! The text language: numexpr-style expressions such as `a*x + y`, `sum(x*x, axis=1)` or
//! `where(x > 0, x, 0)`, parsed by [`parse`] into an [`Expr`](crate::Expr).
//!
//! The grammar, loosest binding first, as Python and numexpr read it:
//!
//! ```text
//! expression := or_expr [('<' | '<=' | '>' | '>=' | '==' | '!=') or_expr]   (no chains: a < b < c)
//! or_expr    := and_expr ('|' and_expr)*          logical or, 1 / 0
//! and_expr   := sum ('&' sum)*                    logical and, 1 / 0
//! sum        := term (('+' | '-') term)*
//! term       := unary (('*' | '/') unary)*
//! unary      := ('-' | '+' | '~') unary | power   ~ is logical not
//! power      := primary ['**' unary]              a**b**c = a**(b**c), -a**2 = -(a**2)
//! primary    := number | 'inf' | 'nan' | name | name '(' arguments ')' | '(' expression ')'
//! ```
//!
//! - Numbers are decimal, Python's form: `2`, `2.5`, `.5`, `2.`, `1e-3`, `1E+3`; `1e999` is inf.
//!   A minus on a literal gives the negative literal (`-3` is `Expr::lit(-3.0)`), as numexpr
//!   folds it; a unary plus is dropped.
//! - A name, `[A-Za-z_][A-Za-z0-9_]*`, is an input, except `inf` and `nan`, which are the float
//!   literals. `x ** 0.5` is `sqrt(x)` (see [`Expr::pow`](crate::Expr::pow)).
//! - Logical operators and comparisons give 1 / 0; a nonzero value, NaN included, is true.
//! - Functions, under their NumPy names: `sin cos tan exp log sqrt abs tanh exp2 log2 log10 expm1
//!   log1p arcsin arccos arctan sinh cosh arcsinh arccosh arctanh floor ceil trunc round sign isnan
//!   isinf isfinite erf erfc cbrt deg2rad rad2deg square reciprocal` of one argument (`isnan isinf
//!   isfinite` are logical; `square(x)` is `x * x` and `reciprocal(x)` is `1 / x`, as NumPy computes
//!   them), `where(c, a, b)`, and `minimum maximum fmax fmin arctan2 hypot copysign fmod logaddexp
//!   logaddexp2 floor_divide nextafter` of two.
//! - numexpr's functions on real values: `copy(x)`, `conj(x)` and `real(x)` are `x`; `imag(x)` is
//!   zeros and `ones_like(x)` ones of `x`'s shape and type; the attribute forms `(expr).real` and
//!   `x.imag` likewise, binding tighter than `**`, as Python's attributes.
//! - `a % b` is NumPy's `remainder` (the sign of the divisor, `-1 % 3 == 2`) and `a // b` its
//!   `floor_divide` (`5 // 0` is inf, `inf // 3` NaN, `1 // -inf` -1), both with the precedence of
//!   `*` and `/`; `fmod(a, b)` is C's (the sign of the dividend).
//! - Reductions: `sum prod min max argmin argmax any all`, and `mean var std` (ddof 0), as `f(x)`,
//!   `f(x, k)` or with keywords in any order: `axis=` an integer literal (negative counts from the
//!   end), `None` (every axis, as without one) or a tuple `(0, 2)`, `(1,)`, `()` (no axis; argmin and
//!   argmax reject tuples); `keepdims=` `1`, `0`, `True` or `False`; `initial=` a signed number
//!   (`10`, `-3.5`, `-inf`; sum, prod, min and max only). A reduction may stand anywhere: lowering
//!   splits the expression into kernels at reductions whose values feed later work.
//! - A call may end with a trailing comma, as in Python. Whitespace may stand between any tokens.
//! - `<<`, `>>` and `^` are not supported and say so (they come with integer types); `None` stands only as an axis, and
//!   a number run into a name (`1x`, `0x10`) is an invalid literal.
//!
//! Nesting (parentheses, calls, unary operators, `**`'s right operand) is limited ([`MAX_NESTING`])
//! so that any input gives `Ok` or an error and never overflows the stack; a flat chain
//! `a + b + c + ...` may be of any length.

mod lexer;
mod parser;

pub use parser::{MAX_NESTING, parse, parse_many};

/// Whether `name` is a word of the language rather than a possible input name: the literals `inf`
/// and `nan`, and `None`. Binding an input under such a name could never be read by an expression.
pub fn is_reserved(name: &str) -> bool {
    matches!(name, "inf" | "nan" | "None")
}
