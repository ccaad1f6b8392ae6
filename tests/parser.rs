//! The text front end: `kiln::text::parse` against expressions built with the builder, every
//! error path with its position, and a pseudo-random sweep that no input makes it panic.

use kiln::text::{MAX_NESTING, parse};
use kiln::{Axes, Error, Expr, ExprNode};
use kiln_ir::{BinaryOp, ReduceOp, UnaryOp};

fn input(name: &str) -> Expr {
    Expr::input(name)
}

fn lit(v: f64) -> Expr {
    Expr::lit(v)
}

#[track_caller]
fn ok(src: &str) -> Expr {
    match parse(src) {
        Ok(e) => e,
        Err(e) => panic!("{src:?} should parse: {e}"),
    }
}

/// The tree's text with integer literals written as the float literals of their value: these tests
/// check the structure (precedence, folding of signs), not whether a literal is a Python int.
fn floats(e: &Expr) -> String {
    let text = format!("{e:?}");
    let mut out = String::new();
    let mut rest = text.as_str();
    while let Some(at) = rest.find("Int(") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 4..];
        let end = tail.find(')').expect("Int(..) closes");
        let v: i64 = tail[..end].parse().expect("an integer");
        out.push_str(&format!("Literal({:?})", v as f64));
        rest = &tail[end + 1..];
    }
    out + rest
}

#[track_caller]
fn same(src: &str, expected: Expr) {
    assert_eq!(floats(&ok(src)), floats(&expected), "{src:?}");
}

/// The position and message of a `Parse` error.
#[track_caller]
fn parse_err(src: &str) -> (usize, String) {
    match parse(src) {
        Err(Error::Parse { pos, message }) => (pos, message),
        other => panic!("{src:?} should be a parse error, got {other:?}"),
    }
}

#[track_caller]
fn parse_err_at(src: &str, pos: usize, words: &str) {
    let (p, message) = parse_err(src);
    assert_eq!(p, pos, "{src:?}: {message}");
    assert!(
        message.contains(words),
        "{src:?}: {message:?} should contain {words:?}"
    );
}

// ---- precedence and associativity ----

#[test]
fn power_binds_tighter_than_unary_minus_on_its_left() {
    let a = input("a");
    same("-a**2", -(a.clone().pow(2.0)));
    same("-2**2", -(lit(2.0).pow(2.0)));
    same("(-2)**2", lit(-2.0).pow(2.0));
    same("~a**2", a.clone().pow(2.0).not());
}

#[test]
fn power_takes_a_unary_operand_on_its_right() {
    let (a, b, c, x) = (input("a"), input("b"), input("c"), input("x"));
    same("a ** -1", a.clone().pow(-1.0));
    same("a**-1", a.clone().pow(-1.0));
    same("2**-x", lit(2.0).pow(-&x));
    same("a ** -b ** c", a.clone().pow(-(b.clone().pow(c.clone()))));
    same("a ** ~b", a.clone().pow(b.clone().not()));
    same("a ** +b", a.clone().pow(b.clone()));
}

#[test]
fn power_is_right_associative() {
    let (a, b, c) = (input("a"), input("b"), input("c"));
    same("a**b**c", a.clone().pow(b.clone().pow(c.clone())));
    same("(a**b)**c", a.clone().pow(b.clone()).pow(c.clone()));
    same("a**b*c", a.clone().pow(b.clone()) * &c);
    same("c*a**b", &c * a.pow(b));
}

#[test]
fn arithmetic_precedence_and_left_associativity() {
    let (a, b, c) = (input("a"), input("b"), input("c"));
    same("2*-3", lit(2.0) * lit(-3.0));
    same("2 * - 3", lit(2.0) * lit(-3.0));
    same("a+b*c", &a + &b * &c);
    same("(a+b)*c", (&a + &b) * &c);
    same("a-b-c", &a - &b - &c);
    same("a-(b-c)", &a - (&b - &c));
    same("a/b/c", &a / &b / &c);
    same("a/b*c", &a / &b * &c);
    same("a*b/c+a", &a * &b / &c + &a);
    same("-a*b", -&a * &b);
    same("a--b", &a - -&b);
    same("a+-b", &a + -&b);
}

#[test]
fn unary_chains() {
    let a = input("a");
    same("--a", -(-&a));
    same("- - a", -(-&a));
    same("-~a", -(a.clone().not()));
    same("~-a", (-&a).not());
    same("~~a", a.clone().not().not());
    same("+a", a.clone());
    same("+-+a", -&a);
    same("--3", lit(3.0));
    same("-(3)", lit(-3.0));
    same("-(-3)", lit(3.0));
    same("-(a)", -&a);
    same("-inf", lit(f64::NEG_INFINITY));
}

#[test]
fn comparisons_bind_looser_than_logical_operators() {
    let (a, b, c) = (input("a"), input("b"), input("c"));
    same("a < b & c", a.clone().lt(b.clone().and(c.clone())));
    same("a<b&c", a.clone().lt(b.clone().and(c.clone())));
    same("a | b < c", a.clone().or(b.clone()).lt(c.clone()));
    same("a + 1 > b * 2", (&a + 1.0).gt(&b * 2.0));
    same(
        "(a < b) & (b < c)",
        a.clone().lt(b.clone()).and(b.clone().lt(c.clone())),
    );
    same("a <= b", a.clone().le(b.clone()));
    same("a >= b", a.clone().ge(b.clone()));
    same("a > b", a.clone().gt(b.clone()));
    same("a == b", a.clone().eq(b.clone()));
    same("a != b", a.clone().ne(b.clone()));
}

#[test]
fn and_binds_tighter_than_or_and_not_tighter_than_both() {
    let (a, b, c) = (input("a"), input("b"), input("c"));
    same("~a|b", a.clone().not().or(b.clone()));
    same("~a & b", a.clone().not().and(b.clone()));
    same("~(a|b)", a.clone().or(b.clone()).not());
    same("a|b&c", a.clone().or(b.clone().and(c.clone())));
    same("a&b|c", a.clone().and(b.clone()).or(c.clone()));
    same("a|b|c", a.clone().or(b.clone()).or(c.clone()));
    same("a&b&c", a.clone().and(b.clone()).and(c.clone()));
    same("a & b + c", a.clone().and(&b + &c));
    same("a | b * c", a.clone().or(&b * &c));
}

// ---- literals and names ----

#[test]
fn numbers() {
    for (src, v) in [
        ("2", 2.0),
        ("2.5", 2.5),
        (".5", 0.5),
        ("2.", 2.0),
        ("1e-3", 1e-3),
        ("1E+3", 1e3),
        ("1e3", 1e3),
        ("1.5e2", 150.0),
        ("007", 7.0),
        ("1e999", f64::INFINITY),
        ("-1e999", f64::NEG_INFINITY),
        ("1e-999", 0.0),
        ("123456789012345678901234567890", 123456789012345678901234567890.0),
    ] {
        same(src, lit(v));
    }
}

#[test]
fn inf_and_nan_are_literals() {
    same("inf", lit(f64::INFINITY));
    same("x + inf", input("x") + f64::INFINITY);
    for src in ["nan", " nan "] {
        match ok(src).node() {
            ExprNode::Literal(v) => assert!(v.is_nan()),
            n => panic!("{n:?}"),
        }
    }
    match ok("x * nan").node() {
        ExprNode::Binary(BinaryOp::Mul, x, n) => {
            assert_eq!(*x, input("x"));
            assert!(matches!(n.node(), ExprNode::Literal(v) if v.is_nan()));
        }
        n => panic!("{n:?}"),
    }
    // Only the exact names: these are inputs.
    same(
        "infinity + Inf + NaN + nan_",
        input("infinity") + input("Inf") + input("NaN") + input("nan_"),
    );
}

#[test]
fn names_are_inputs() {
    same("x", input("x"));
    same("_a1_B", input("_a1_B"));
    same("sin", input("sin"));
    same("sum + 1", input("sum") + 1.0);
    same("x1*x2", input("x1") * input("x2"));
}

#[test]
fn whitespace_between_any_tokens() {
    let (a, b) = (input("a"), input("b"));
    same(" \t\na\r\n*\t( b\n+ 1 ) ", &a * (&b + 1.0));
    same("sum ( a , axis = - 1 )", a.clone().sum_axis(-1));
    same("a ** - 1", a.pow(-1.0));
}

#[test]
fn half_power_is_sqrt() {
    let x = input("x");
    same("x ** 0.5", x.clone().sqrt());
    same("x**0.5", x.clone().sqrt());
    same("x ** .5", x.clone().sqrt());
    same("x ** 5e-1", x.clone().sqrt());
    same("x ** (0.5)", x.clone().sqrt());
    same("x ** +0.5", x.clone().sqrt());
    assert_eq!(ok("x**0.5").node(), &ExprNode::Unary(UnaryOp::Sqrt, x.clone()));
    // A minus half is no square root.
    same("x ** -0.5", x.clone().binary(BinaryOp::Pow, -0.5));
    same("x ** -.5", x.clone().binary(BinaryOp::Pow, -0.5));
    same("x ** 0.25", x.clone().binary(BinaryOp::Pow, 0.25));
    same(
        "x ** 0.5 ** 1",
        x.clone().binary(BinaryOp::Pow, lit(0.5).pow(1.0)),
    );
}

// ---- functions ----

#[test]
fn elementwise_functions() {
    let x = input("x");
    for (name, op) in [
        ("sin", UnaryOp::Sin),
        ("cos", UnaryOp::Cos),
        ("tan", UnaryOp::Tan),
        ("exp", UnaryOp::Exp),
        ("log", UnaryOp::Log),
        ("sqrt", UnaryOp::Sqrt),
        ("abs", UnaryOp::Abs),
    ] {
        same(&format!("{name}(x)"), x.clone().unary(op));
        same(&format!("{name}( x + 1 , )"), (&x + 1.0).unary(op));
    }
    let (a, b) = (input("a"), input("b"));
    same(
        "where(x > 0, a, b)",
        Expr::select(x.clone().gt(0.0), a.clone(), b.clone()),
    );
    same("where(x, 1, -1)", Expr::select(x.clone(), 1.0, -1.0));
    same("minimum(a, b)", a.clone().minimum(b.clone()));
    same("maximum(a, 2*b)", a.clone().maximum(2.0 * &b));
    same("-sin(x)**2", -(x.clone().sin().pow(2.0)));
    same("exp(log(x))", x.clone().log().exp());
}

#[test]
fn reductions() {
    let x = input("x");
    for (name, op) in [
        ("sum", ReduceOp::Sum),
        ("prod", ReduceOp::Prod),
        ("min", ReduceOp::Min),
        ("max", ReduceOp::Max),
        ("argmin", ReduceOp::ArgMin),
        ("argmax", ReduceOp::ArgMax),
        ("any", ReduceOp::Any),
        ("all", ReduceOp::All),
    ] {
        let all = x.clone().reduce(op, Axes::All);
        same(&format!("{name}(x)"), all.clone());
        same(&format!("{name}(x,)"), all.clone());
        same(&format!("{name}(x, axis=None)"), all.clone());
        same(&format!("{name}(x, None)"), all.clone());
        for k in [0isize, 1, 2, -1, -2] {
            let along = x.clone().reduce(op, Axes::Some(vec![k]));
            same(&format!("{name}(x, axis={k})"), along.clone());
            same(&format!("{name}(x, {k})"), along.clone());
            same(&format!("{name}(x, axis = {k} ,)"), along.clone());
        }
    }
    same("sum(x*x, axis=1)", (&x * &x).sum_axis(1));
    same("sum(x, axis=+1)", x.clone().sum_axis(1));
    same("sum(x, axis=-0)", x.clone().sum_axis(0));
    same(
        "sum(x, axis=-9223372036854775808)",
        x.clone().reduce(ReduceOp::Sum, Axes::Some(vec![isize::MIN])),
    );
    same("any(x > 0)", x.clone().gt(0.0).any());
    same("all(x)", x.clone().all());
    // The parser takes a reduction anywhere; lowering decides.
    same("1 + sum(x)", 1.0 + x.clone().sum());
    same("sum(sum(x, axis=0))", x.clone().sum_axis(0).sum());
}

// ---- errors ----

#[test]
fn unknown_function_with_its_position() {
    match parse("1 + foo(x)") {
        Err(Error::UnknownFunction { name, pos }) => assert_eq!((name.as_str(), pos), ("foo", 4)),
        other => panic!("{other:?}"),
    }
    match parse("  x * (inf (2))") {
        Err(Error::UnknownFunction { name, pos }) => assert_eq!((name.as_str(), pos), ("inf", 7)),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        parse("startswith(x, 1)"),
        Err(Error::UnknownFunction { pos: 0, .. })
    ));
    assert!(matches!(
        parse("x(1)"),
        Err(Error::UnknownFunction { pos: 0, .. })
    ));
}

#[track_caller]
fn arity(src: &str, name: &str, expected: &str, got: usize, pos: usize) {
    match parse(src) {
        Err(Error::Arity {
            name: n,
            expected: e,
            got: g,
            pos: p,
        }) => {
            assert_eq!(
                (n.as_str(), e.as_str(), g, p),
                (name, expected, got, pos),
                "{src:?}"
            )
        }
        other => panic!("{src:?}: {other:?}"),
    }
}

#[test]
fn wrong_argument_counts() {
    arity("sin()", "sin", "1", 0, 0);
    arity("x + sin(x, x)", "sin", "1", 2, 4);
    arity("sqrt(1,2,3)", "sqrt", "1", 3, 0);
    arity("where(a, b)", "where", "3", 2, 0);
    arity("where(a, b, c, d)", "where", "3", 4, 0);
    arity("minimum(a)", "minimum", "2", 1, 0);
    arity("maximum(a, b, c)", "maximum", "2", 3, 0);
    arity("sum()", "sum", "1 or 2", 0, 0);
    arity(" all(x, 0, y)", "all", "1 or 2", 3, 1);
    // one argument reader for reductions, scans and elementwise calls: the same rules everywhere
    arity("cumsum(x, 0, 1)", "cumsum", "1 or 2", 3, 0);
    parse_err_at("cumsum(x, 0, axis=1)", 13, "multiple values for axis");
    parse_err_at("cummax(axis=0, x)", 15, "positional argument follows keyword");
    parse_err_at(
        "cumprod(x, reverse=1, reverse=0)",
        22,
        "multiple values for reverse",
    );
    let e = parse("sin(x, y)").unwrap_err().to_string();
    assert!(e.contains("sin() takes 1 argument(s) but 2 were given"), "{e}");
}

#[test]
fn bad_arguments() {
    parse_err_at("sin(x, axis=1)", 7, "takes no keyword arguments");
    parse_err_at("sum(x, axes=1)", 7, "unexpected keyword argument 'axes'");
    parse_err_at("sum(x, 1, axis=1)", 10, "multiple values for axis");
    parse_err_at("sum(x, axis=1, axis=1)", 15, "multiple values for axis");
    parse_err_at("sum(axis=1, x)", 12, "positional argument follows keyword");
    parse_err_at("sum(axis=1)", 0, "needs the expression to reduce");
    parse_err_at("sum(x, axis=1.0)", 12, "must be an integer");
    parse_err_at("sum(x, 1e2)", 7, "must be an integer");
    parse_err_at("sum(x, axis=y)", 12, "expected an integer axis or None");
    parse_err_at("sum(x, y)", 7, "expected an integer axis or None");
    parse_err_at("sum(x, axis=(1, y))", 16, "expected an integer axis or None");
    parse_err_at("sum(x, axis=(1 2))", 15, "',' or ')' in the axis tuple");
    parse_err_at("argmin(x, axis=(1,))", 0, "takes one axis or None, not a tuple");
    parse_err_at("any(x, initial=1)", 7, "unexpected keyword argument 'initial'");
    parse_err_at("sum(x, initial=y)", 15, "expected a number for initial");
    parse_err_at("sum(x, keepdims=2)", 16, "True, False, 1 or 0 for keepdims");
    parse_err_at(
        "sum(x, keepdims=1, keepdims=0)",
        19,
        "multiple values for keepdims",
    );
    parse_err_at("sum(x, axis=)", 12, "expected an integer axis or None");
    parse_err_at("sum(x, axis=--1)", 13, "expected an integer axis or None");
    parse_err_at("sum(x, axis=99999999999999999999)", 12, "out of range");
    parse_err_at("sum(x, -9223372036854775809)", 8, "out of range");
    parse_err_at("sin(,)", 4, "expected an expression, found ','");
    parse_err_at("sin(x y)", 6, "expected ',' or ')', found name 'y'");
    parse_err_at("sin(x", 5, "expected ',' or ')', found end of input");
    parse_err_at("sin(x,,)", 6, "expected an expression");
    parse_err_at("None + 1", 0, "None is only allowed as axis=None");
}

#[test]
fn chained_comparisons_are_rejected() {
    parse_err_at("a < b < c", 6, "chained comparisons");
    parse_err_at("a == b != c", 7, "chained comparisons");
    parse_err_at("a<b<=c", 3, "write '(a < b) & (b < c)'");
}

#[test]
fn parenthesised_comparisons_do_chain() {
    let (a, b, c) = (input("a"), input("b"), input("c"));
    same("(a<b)<c", a.lt(b).lt(c));
}

#[test]
fn unbalanced_parentheses() {
    parse_err_at(
        "(a + b",
        6,
        "expected ')' to close the '(' at position 0, found end of input",
    );
    parse_err_at("((a) + b", 8, "to close the '(' at position 0");
    parse_err_at("a + b)", 5, "unmatched ')'");
    parse_err_at("(a))", 3, "unmatched ')'");
    parse_err_at(")", 0, "expected an expression, found ')'");
    parse_err_at("()", 1, "expected an expression, found ')'");
    parse_err_at("(", 1, "expected an expression, found end of input");
    parse_err_at("sum(x", 5, "expected ',' or ')'");
}

#[test]
fn trailing_tokens() {
    parse_err_at(
        "a b",
        2,
        "expected an operator or the end of the input, found name 'b'",
    );
    parse_err_at("1 2", 2, "found number '2'");
    parse_err_at("a + b c", 6, "found name 'c'");
    parse_err_at("x = 1", 2, "found '='");
    parse_err_at("sin(x) (y)", 7, "found '('");
    parse_err_at("a +", 3, "expected an expression, found end of input");
    parse_err_at("a * * b", 4, "expected an expression, found '*'");
    parse_err_at("a ** ** b", 5, "expected an expression, found '**'");
}

#[test]
fn empty_input() {
    parse_err_at("", 0, "empty expression");
    parse_err_at("   \t\n", 5, "empty expression");
}

#[test]
fn bad_characters() {
    parse_err_at("a $ b", 2, "unexpected character '$'");
    parse_err_at("a + @", 4, "unexpected character '@'");
    parse_err_at("a ! b", 2, "unexpected character '!'");
    parse_err_at("a.b", 2, "unknown attribute '.b'");
    parse_err_at("a; b", 1, "unexpected character ';'");
    parse_err_at("'a", 0, "unterminated string literal");
    parse_err_at("a\0", 1, "unexpected character '\\0'");
    parse_err_at("1x", 0, "invalid number literal '1x'");
    parse_err_at("2 * 0x10", 4, "invalid number literal '0x10'");
    parse_err_at("1e", 0, "invalid number literal '1e'");
    parse_err_at("1e+", 0, "invalid number literal '1e'");
    parse_err_at("1.2.3", 0, "invalid number literal '1.2.3'");
    parse_err_at("a ^ ", 4, "expected an expression");
    parse_err_at("a.foo", 2, "unknown attribute '.foo': only .real and .imag");
    parse_err_at("(a).", 3, "unexpected character '.'");
    parse_err_at("a.real.", 6, "unexpected character '.'");
    parse_err_at("a << ", 5, "expected an expression");
    // The first error in the text wins.
    parse_err_at(") $", 0, "expected an expression, found ')'");
    parse_err_at("a b $", 2, "found name 'b'");
}

#[test]
fn non_ascii_characters() {
    parse_err_at("é", 0, "unexpected character 'é'");
    parse_err_at("x + é", 4, "unexpected character 'é'");
    parse_err_at("xé", 1, "unexpected character 'é'");
    parse_err_at("x * 2 − y", 6, "unexpected character '−'");
    parse_err_at("ab😀", 2, "unexpected character '😀'");
    parse_err_at("sum(x,\u{a0}1)", 6, "unexpected character");
    parse_err_at("(é", 1, "unexpected character 'é'");
}

#[test]
fn bitwise_operators_and_shifts_with_pythons_precedence() {
    let (a, b, c) = (input("a"), input("b"), input("c"));
    // `^` between `&` and `|`; shifts between `+ -` and `&`
    same(
        "a | b ^ c",
        a.binary(BinaryOp::Or, b.binary(BinaryOp::BitXor, &c)),
    );
    same(
        "a ^ b & c",
        a.binary(BinaryOp::BitXor, b.binary(BinaryOp::And, &c)),
    );
    same("a & b << c", a.binary(BinaryOp::And, b.binary(BinaryOp::Shl, &c)));
    same("a << b + c", a.binary(BinaryOp::Shl, &b + &c));
    same(
        "a >> b - c >> a",
        a.binary(BinaryOp::Shr, &b - &c).binary(BinaryOp::Shr, &a),
    );
    same("~a ^ b", a.unary(UnaryOp::Not).binary(BinaryOp::BitXor, &b));
    same("a < b ^ c", a.lt(b.binary(BinaryOp::BitXor, &c)));
    // integer literals are Python ints; a cast is a function
    assert_eq!(ok("2").node(), &ExprNode::Int(2));
    assert_eq!(ok("-7").node(), &ExprNode::Int(-7));
    assert_eq!(ok("2.0").node(), &ExprNode::Literal(2.0));
    assert_eq!(ok("int32(a)"), a.cast(kiln::ElemType::I32));
    assert_eq!(ok("float64(a)"), a.cast(kiln::ElemType::F64));
}

#[test]
fn percent_is_remainder_with_the_precedence_of_times() {
    let (a, b, c) = (Expr::input("a"), Expr::input("b"), Expr::input("c"));
    assert_eq!(parse("a % b").unwrap(), (a.clone() % b.clone()));
    assert_eq!(parse("a + b % c").unwrap(), a.clone() + (b.clone() % c.clone()));
    assert_eq!(parse("a * b % c").unwrap(), (a.clone() * b.clone()) % c.clone());
    assert_eq!(parse("a % b * c").unwrap(), (a.clone() % b.clone()) * c.clone());
    assert_eq!(parse("-a % b").unwrap(), (-a.clone()) % b.clone());
    assert_eq!(parse("a % b ** 2").unwrap(), a % b.pow(2i64));
    parse_err_at("%", 0, "expected an expression, found '%'");
    parse_err_at("a %", 3, "expected an expression");
}

#[test]
fn nesting_limit() {
    let n = MAX_NESTING;
    let x = input("x");

    let ok_parens = format!("{}x{}", "(".repeat(n), ")".repeat(n));
    same(&ok_parens, x.clone());
    let deep_parens = format!("{}x{}", "(".repeat(n + 1), ")".repeat(n + 1));
    parse_err_at(&deep_parens, n, "expression nested too deeply");

    let mut minus = x.clone();
    for _ in 0..n {
        minus = -minus;
    }
    same(&format!("{}x", "-".repeat(n)), minus);
    parse_err_at(&format!("{}x", "-".repeat(n + 1)), n, "nested too deeply");
    parse_err_at(&format!("{}x", "~".repeat(n + 1)), n, "nested too deeply");

    let ok_calls = format!("{}x{}", "sin(".repeat(n), ")".repeat(n));
    assert!(parse(&ok_calls).is_ok());
    let deep_calls = format!("{}x{}", "sin(".repeat(n + 1), ")".repeat(n + 1));
    parse_err_at(&deep_calls, 4 * n + 3, "nested too deeply");
    let deep_sums = format!("{}x{}", "sum(".repeat(n + 1), ")".repeat(n + 1));
    parse_err_at(&deep_sums, 4 * n + 3, "nested too deeply");

    let powers = vec!["x"; n + 2].join("**");
    parse_err_at(&powers, 3 * n + 1, "nested too deeply");

    // Far too deep: still an error, no stack overflow, and unclosed ones too.
    for src in [
        "(".repeat(100_000),
        format!("{}x", "-".repeat(100_000)),
        "sin(".repeat(50_000),
        format!("x{}", "**x".repeat(50_000)),
        "-(".repeat(50_000),
    ] {
        assert!(parse_err(&src).1.contains("nested too deeply"));
    }
}

#[test]
fn long_chains_have_no_depth_limit() {
    // A chain of binary operators is as deep as it is long, and parses at any length: the parser
    // builds it in a loop, and what walks the tree later does not recurse (tests/deep_chains.rs).
    for op in ["+", "|", " * ", "-"] {
        let chain = vec!["x"; 200_000].join(op);
        assert!(parse(&chain).is_ok(), "a chain of '{op}'");
    }
    // Unary operators and calls still count towards the nesting limit, beside a long chain.
    let m = MAX_NESTING / 4;
    let chain = vec!["x"; 5_000].join("+");
    let mixed = format!("{}{chain}{}", "-(".repeat(m), ")".repeat(m));
    assert!(parse(&mixed).is_ok());
    let over = MAX_NESTING / 2 + 1;
    let mixed = format!("{}{chain}{}", "-(".repeat(over), ")".repeat(over));
    assert!(parse_err(&mixed).1.contains("nested too deeply"));
    let mixed = format!(
        "{}{chain}{}",
        "sin(".repeat(MAX_NESTING + 1),
        ")".repeat(MAX_NESTING + 1)
    );
    assert!(parse_err(&mixed).1.contains("nested too deeply"));
}

#[test]
fn errors_display_their_position() {
    let e = parse("a + $").unwrap_err().to_string();
    assert_eq!(e, "parse error at position 4: unexpected character '$'");
    let e = parse("foo(1)").unwrap_err().to_string();
    assert_eq!(e, "unknown function 'foo' at position 0");
}

// ---- robustness ----

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

#[track_caller]
fn check_total(src: &str) {
    match parse(src) {
        Ok(_) => {}
        Err(Error::Parse { pos, .. })
        | Err(Error::UnknownFunction { pos, .. })
        | Err(Error::Arity { pos, .. }) => {
            assert!(pos <= src.len(), "{src:?}: position {pos} past the end");
            assert!(
                src.is_char_boundary(pos),
                "{src:?}: position {pos} inside a character"
            );
        }
        Err(e) => panic!("{src:?}: unexpected error kind {e:?}"),
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    for _ in 0..3000 {
        let len = rng.below(40);
        let bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        check_total(&String::from_utf8_lossy(&bytes));
        // Mostly printable ASCII, which reaches further into the grammar.
        let ascii: String = (0..len).map(|_| (32 + rng.below(95)) as u8 as char).collect();
        check_total(&ascii);
    }
}

#[test]
fn random_token_soup_never_panics() {
    const PIECES: &[&str] = &[
        "x",
        "y",
        "_z1",
        "2",
        "2.5",
        ".5",
        "1e-3",
        "1E+3",
        "1e999",
        "inf",
        "nan",
        "None",
        "(",
        ")",
        "(",
        ")",
        ",",
        "=",
        "+",
        "-",
        "*",
        "/",
        "**",
        "<",
        "<=",
        ">",
        ">=",
        "==",
        "!=",
        "&",
        "|",
        "~",
        "%",
        "sin(",
        "where(",
        "minimum(",
        "sum(",
        "argmax(",
        "any(",
        "foo(",
        "axis=",
        "axis=-1",
        "axis=None",
        "99999999999999999999",
        " ",
        "\t",
        "é",
        "$",
        ".",
        "e",
        "0x",
    ];
    let mut rng = XorShift(12345);
    let mut parsed = 0;
    for _ in 0..5000 {
        let len = 1 + rng.below(24);
        let src: String = (0..len).map(|_| PIECES[rng.below(PIECES.len())]).collect();
        check_total(&src);
        parsed += parse(&src).is_ok() as usize;
    }
    // The soup is not all errors: it does reach the success paths.
    assert!(parsed > 0);
}

/// `//` has the precedence of `*`, `/` and `%`, left to right; `.real` and `.imag` bind tighter than
/// `**`; numexpr's complex functions are the IR's opcodes (the typing makes them the value or
/// zeros of a real operand), `copy` the value, `ones_like` ones of its shape; `2j` a weak complex.
#[test]
fn floor_division_attributes_and_numexprs_real_functions() {
    let (a, b, c) = (input("a"), input("b"), input("c"));
    same("a // b * c", a.floor_divide(&b) * &c);
    same("a * b // c", (&a * &b).floor_divide(&c));
    same("a + b // c", &a + &b.floor_divide(&c));
    same("a // b % c", a.floor_divide(&b) % &c);
    same("-a // b", (-&a).floor_divide(&b));
    same("floor_divide(a, b)", a.floor_divide(&b));
    same("nextafter(a, b)", a.nextafter(&b));
    same("copy(a) + conj(b) + real(c)", &a + &b.conj() + &c.real());
    same("imag(a)", a.imag());
    same("ones_like(a)", a.ones_like());
    same("a.real", a.real());
    same("(a + b).imag", (&a + &b).imag());
    same("a.real ** 2", a.real().pow(2.0));
    same("a.imag.real", a.imag().real());
    same("-a.imag", -a.imag());
    same("complex(a, b) * 2j", Expr::complex(&a, &b) * Expr::imaginary(2.0));
    same("a + 1.5e3J", &a + Expr::imaginary(1500.0));
}
