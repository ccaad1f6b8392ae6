#!/usr/bin/env python3
"""Generates tests/data/numpy_cases.txt: kiln text expressions with inputs, and the result NumPy gives.

Run from anywhere: `python3 tests/gen/make_numpy_cases.py`. Deterministic (fixed seed); the output
records the NumPy version it was made with. tests/numpy_parity.rs reads the file; it never runs Python.

Every expression is evaluated by walking its Python AST (kiln's grammar is a subset of Python's
expression grammar, with the same precedence), mapping each node to the NumPy operation with the
meaning kiln documents:
- `+ - * /`, unary `-`, comparisons: the NumPy operators (Python literals stay weak, NEP 50);
- `x ** 0.5` (the literal 0.5): `np.sqrt(x)`, as NumPy's `**` computes it for arrays; any other
  exponent: `np.power` (C99 pow);
- `&`, `|`, `~`: `np.logical_and(x != 0, y != 0)`, `np.logical_or(...)`, `np.logical_not(x != 0)`
  (a nonzero value, NaN included, is true);
- `//`: `np.floor_divide`; `x.real`, `x.imag`: `np.real`, `np.imag`;
- `sin cos tan exp log sqrt abs minimum maximum floor_divide nextafter copy ones_like conj real imag`:
  the NumPy functions; `where(c, x, y)`:
  `np.where(c != 0, x, y)`;
- `sum prod min max argmin argmax any all` with `axis=`: the NumPy reductions.
A truth value (bool) used in arithmetic is refused: NumPy and kiln type it differently, so such cases
are not generated. The check of each case is chosen from what the expression does: bit-exact for
IEEE algebra, 4 ULP for libm functions and pow, a relative tolerance for sums and products (kiln sums
sequentially in f64, NumPy pairwise), and `zeros_any` where NumPy does not pin the sign of an equal
zero (minimum/maximum, min/max).
"""

import ast
import os
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ beside the generators
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture import input_line, output_line  # noqa: E402

SEED = 20240611
rng = np.random.default_rng(SEED)
F64, F32 = np.float64, np.float32

TRANSCENDENTAL = {"sin", "cos", "tan", "exp", "log"}
ELEMENTWISE = {
    "sin": np.sin, "cos": np.cos, "tan": np.tan, "exp": np.exp, "log": np.log,
    "sqrt": np.sqrt, "abs": np.abs, "minimum": np.minimum, "maximum": np.maximum,
    "floor_divide": np.floor_divide, "nextafter": np.nextafter, "copy": np.copy,
    "ones_like": np.ones_like, "conj": np.conj, "real": np.real, "imag": np.imag,
}
REDUCTIONS = {
    "sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max,
    "argmin": np.argmin, "argmax": np.argmax, "any": np.any, "all": np.all,
}


class Refused(Exception):
    pass


def is_bool(v):
    return isinstance(v, (bool, np.bool_)) or (isinstance(v, np.ndarray) and v.dtype == np.bool_)


def truth(v):
    return v if is_bool(v) else np.not_equal(v, 0)


def number(v):
    if is_bool(v):
        raise Refused("a truth value used as a number")
    return v


class Evaluator:
    def __init__(self, env):
        self.env = env
        self.inexact = False  # a libm function or pow
        self.minmax = False   # minimum/maximum/min/max: the zero sign is not pinned by NumPy
        self.reduction = None

    def ev(self, n, top=False):
        if isinstance(n, ast.Expression):
            return self.ev(n.body, top=True)
        if isinstance(n, ast.Constant):
            if isinstance(n.value, bool) or not isinstance(n.value, (int, float)):
                raise Refused("constant %r" % (n.value,))
            return n.value
        if isinstance(n, ast.Name):
            if n.id == "inf":
                return float("inf")
            if n.id == "nan":
                return float("nan")
            return self.env[n.id]
        if isinstance(n, ast.UnaryOp):
            v = self.ev(n.operand)
            if isinstance(n.op, ast.USub) and isinstance(v, (int, float)):
                return -v  # kiln folds a minus on a literal (inf and nan too), as numexpr does
            if isinstance(n.op, ast.USub):
                return np.negative(number(v))
            if isinstance(n.op, ast.UAdd):
                return v
            if isinstance(n.op, ast.Invert):
                return np.logical_not(truth(v))
            raise Refused("unary %s" % n.op)
        if isinstance(n, ast.BinOp):
            if isinstance(n.op, ast.Pow) and isinstance(n.right, ast.Constant) and n.right.value == 0.5:
                return np.sqrt(number(self.ev(n.left)))
            l, r = self.ev(n.left), self.ev(n.right)
            if isinstance(n.op, ast.BitAnd):
                return np.logical_and(truth(l), truth(r))
            if isinstance(n.op, ast.BitOr):
                return np.logical_or(truth(l), truth(r))
            l, r = number(l), number(r)
            if not isinstance(l, np.ndarray) and not isinstance(r, np.ndarray) and \
                    not isinstance(l, np.generic) and not isinstance(r, np.generic):
                if self.env:
                    raise Refused("an operation of two literals in an expression with inputs")
                # no inputs at all: kiln computes in f64, as Python's floats do
                l, r = np.float64(l), np.float64(r)
            op = {ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
                  ast.Div: np.divide, ast.FloorDiv: np.floor_divide, ast.Mod: np.remainder,
                  ast.Pow: np.power}.get(type(n.op))
            if op is None:
                raise Refused("operator %s" % n.op)
            if op is np.power:
                self.inexact = True
            return op(l, r)
        if isinstance(n, ast.Attribute) and n.attr in ("real", "imag"):
            v = number(self.ev(n.value))
            return np.real(v) if n.attr == "real" else np.imag(v)
        if isinstance(n, ast.Compare):
            if len(n.ops) != 1:
                raise Refused("chained comparison")
            l, r = self.ev(n.left), self.ev(n.comparators[0])
            op = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater,
                  ast.GtE: np.greater_equal, ast.Eq: np.equal, ast.NotEq: np.not_equal}[type(n.ops[0])]
            return op(l, r)
        if isinstance(n, ast.Call):
            name = n.func.id
            if name in REDUCTIONS:
                if not top:
                    raise Refused("a reduction inside an expression")
                axis = None
                args = list(n.args)
                if len(args) == 2:
                    axis = ast.literal_eval(args.pop())
                for kw in n.keywords:
                    assert kw.arg == "axis"
                    axis = ast.literal_eval(kw.value)
                v = np.asarray(self.ev(args[0]))
                self.reduction = name
                if name in ("min", "max"):
                    self.minmax = True
                if name in ("any", "all"):
                    v = truth(v)
                return REDUCTIONS[name](v, axis=axis)
            args = [self.ev(a) for a in n.args]
            if name == "where":
                c, x, y = args
                if is_bool(x) != is_bool(y):
                    raise Refused("where() mixing truth values and numbers")
                if not isinstance(x, np.ndarray) and not isinstance(y, np.ndarray):
                    raise Refused("where() of two literals (NumPy would give an integer or f64)")
                return np.where(truth(c), x, y)
            if name in TRANSCENDENTAL:
                self.inexact = True
            if name in ("minimum", "maximum"):
                self.minmax = True
            return ELEMENTWISE[name](*[number(a) for a in args])
        raise Refused("node %s" % type(n).__name__)


CASES = []
NAMES = set()


def case(name, expr, inputs, err=None, check=None, note=None):
    """inputs: list of (name, array) or (name, array, layout)."""
    assert name not in NAMES, name
    NAMES.add(name)
    ins = [(i[0], np.asarray(i[1]), i[2] if len(i) > 2 else "c") for i in inputs]
    for _, a, _ in ins:
        assert a.dtype in (np.float64, np.float32), (name, a.dtype)
    env = {n: a for n, a, _ in ins}
    ev = Evaluator(env)
    tree = ast.parse(expr, mode="eval")
    with np.errstate(all="ignore"):
        try:
            result = ev.ev(tree)
            raised = None
        except Refused:
            raise
        except (ValueError, TypeError, IndexError) as e:  # NumPy's errors (AxisError is a ValueError)
            raised = e
    lines = ["case " + name]
    if note:
        lines.append("# " + note)
    lines.append("expr " + expr)
    lines += [input_line(n, a, layout) for n, a, layout in ins]
    if err is not None:
        assert raised is not None, "%s: NumPy did not raise for %s" % (name, expr)
        lines.append("# numpy: %s: %s" % (type(raised).__name__, str(raised).splitlines()[0]))
        lines.append("err " + " | ".join(err))
    else:
        if raised is not None:
            raise AssertionError("%s: NumPy raised %r" % (name, raised))
        out = np.asarray(result)
        assert out.dtype in (np.float64, np.float32, np.int64, np.bool_), (name, out.dtype)
        lines.append(output_line(out))
        lines.append("check " + (check or choose_check(ev, out)))
    lines.append("end")
    CASES.append("\n".join(lines))


def choose_check(ev, out):
    if out.dtype in (np.bool_, np.int64):
        return "exact"
    f32 = out.dtype == np.float32
    zeros = " zeros_any" if ev.minmax and np.any(out == 0) else ""
    if ev.reduction in ("sum", "prod"):
        rtol = 1e-5 if f32 else 1e-12
        atol = 0.0  # sum_case gives sums an absolute tolerance from the magnitudes summed
        return "close %r %r%s" % (rtol, atol, zeros)
    if ev.inexact:
        return "ulp 4" + zeros
    return "exact" + zeros


def sum_case(name, expr, inputs, body_expr, **kw):
    """A sum: the absolute tolerance is rtol times the sum of |body| over every element (a bound for
    each reduced extent: the rounding error of a sum is relative to the magnitudes summed)."""
    env = {i[0]: np.asarray(i[1]) for i in inputs}
    with np.errstate(all="ignore"):
        body = np.abs(np.asarray(Evaluator(env).ev(ast.parse(body_expr, mode="eval")), np.float64))
    body = np.where(np.isfinite(body), body, 0.0)
    f32 = all(np.asarray(i[1]).dtype == np.float32 for i in inputs)
    rtol = 1e-5 if f32 else 1e-12
    atol = rtol * float(body.sum()) if body.size else 0.0
    case(name, expr, inputs, check=kw.pop("check", None) or "close %r %r" % (rtol, atol), **kw)


# ----------------------------------------------------------------------------------------------
# data

def specials(dt):
    if dt == F64:
        v = [np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -1e-310, 1.0, -1.0, 0.5, -2.5, 3.0,
             1.7976931348623157e308, -7.25]
    else:
        v = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, -1e-40, 1.0, -1.0, 0.5, -2.5, 3.0,
             3.4028235e38, -7.25]
    return np.array(v, dt)


def unary_inputs(dt):
    base = list(specials(dt))
    if dt == F64:
        base += [2.2250738585072014e-308, -1e-300, 1e-320, 709.0, 710.0, -745.0, -746.0, 1e22,
                 -1e300, 1.5707963267948966, 3.141592653589793, 100.0, -0.1, 2.0 ** -1074 * 3]
    else:
        base += [1.1754944e-38, -1e-30, 1e-44, 88.0, 89.0, -103.0, -105.0, 1e22, -1e30,
                 1.5707964, 3.1415927, 100.0, -0.1, 2.0 ** -149 * 3]
    base += list(rng.standard_normal(10) * 4)
    return np.array(base, dt)


def rnd(shape, dt, scale=10.0):
    return (rng.standard_normal(shape) * scale).astype(dt)


def ints(shape, dt, lo=-5, hi=6):
    return rng.integers(lo, hi, shape).astype(dt)


def with_specials(a, frac=0.25):
    a = a.copy()
    flat = a.reshape(-1)
    sp = specials(a.dtype.type)
    k = max(1, int(flat.size * frac))
    pos = rng.choice(flat.size, k, replace=False)
    flat[pos] = rng.choice(sp, k)
    return a


def sfx(dt):
    return "f64" if dt == F64 else "f32"


# ----------------------------------------------------------------------------------------------
# 1. every binary operator and function over a grid of special values (also broadcasting [n,1]x[n])

BINARY = [
    ("add", "a + b"), ("sub", "a - b"), ("mul", "a * b"), ("div", "a / b"), ("pow", "a ** b"),
    ("lt", "a < b"), ("le", "a <= b"), ("gt", "a > b"), ("ge", "a >= b"), ("eq", "a == b"),
    ("ne", "a != b"), ("and", "a & b"), ("or", "a | b"),
    ("minimum", "minimum(a, b)"), ("maximum", "maximum(a, b)"),
]
for dt in (F64, F32):
    s = specials(dt)
    for name, expr in BINARY:
        case("grid_%s_%s" % (name, sfx(dt)), expr, [("a", s.reshape(-1, 1)), ("b", s)])

# 2. unary operators and functions, powers with literal exponents, literal bases

UNARY = [
    ("neg", "-a"), ("plus", "+a"), ("negneg", "-(-a)"), ("abs", "abs(a)"), ("sqrt", "sqrt(a)"),
    ("pow_half", "a ** 0.5"), ("sin", "sin(a)"), ("cos", "cos(a)"), ("tan", "tan(a)"),
    ("exp", "exp(a)"), ("log", "log(a)"), ("not", "~a"), ("pow2", "a ** 2"), ("pow3", "a ** 3"),
    ("pow_m1", "a ** -1"), ("pow_m2_5", "a ** -2.5"), ("pow0", "a ** 0"), ("pow_inf", "a ** inf"),
    ("pow_minf", "a ** -inf"), ("pow_nan", "a ** nan"), ("two_pow", "2 ** a"),
    ("neg_two_pow", "(-2) ** a"), ("one_pow", "1 ** a"), ("nan_pow", "nan ** a"),
    ("neg_pow2", "-a ** 2"), ("recip", "1 / a"), ("not_not", "~~a"),
]
for dt in (F64, F32):
    u = unary_inputs(dt)
    for name, expr in UNARY:
        case("unary_%s_%s" % (name, sfx(dt)), expr, [("a", u)])

# 3. broadcasting, scalars, empty arrays, layouts

for dt in (F64, F32):
    x = sfx(dt)
    case("bc_row_" + x, "a + b", [("a", rnd((1, 4), dt)), ("b", rnd((3, 4), dt))])
    case("bc_col_" + x, "a * b", [("a", rnd((3, 1), dt)), ("b", rnd((3, 4), dt))])
    case("bc_vec_3d_" + x, "a - b", [("a", rnd(4, dt)), ("b", rnd((2, 3, 4), dt))])
    case("bc_vec_2d_" + x, "a / b", [("a", rnd(3, dt)), ("b", rnd((2, 3), dt))])
    case("bc_scalar_" + x, "a * b + c", [("a", rnd((), dt)), ("b", rnd(5, dt)), ("c", rnd((2, 5), dt))])
    case("bc_scalars_" + x, "a * b - a", [("a", rnd((), dt)), ("b", rnd((), dt))])
    case("bc_outer_3d_" + x, "a * b", [("a", rnd((2, 1, 4), dt)), ("b", rnd((3, 1), dt))])
    case("bc_both_stretch_" + x, "a - b", [("a", rnd((1, 3), dt)), ("b", rnd((4, 1), dt))])
    case("one_elem_" + x, "a + b", [("a", rnd(1, dt)), ("b", rnd(1, dt))])
    case("one_elem_bc_" + x, "a * b", [("a", rnd((1, 1), dt)), ("b", rnd(3, dt))])
    case("empty_" + x, "a + b", [("a", rnd(0, dt)), ("b", rnd(0, dt))])
    case("empty_2d_" + x, "a * b", [("a", rnd((2, 0), dt)), ("b", rnd((2, 0), dt))])
    case("empty_bc_row_" + x, "a + b", [("a", rnd((2, 0), dt)), ("b", rnd(0, dt))])
    case("empty_bc_one_" + x, "a - b", [("a", rnd(1, dt)), ("b", rnd(0, dt))])
    case("empty_scalar_" + x, "a * b", [("a", rnd(0, dt)), ("b", rnd((), dt))])
    case("empty_lead_" + x, "a * 2", [("a", rnd((0, 3), dt))])
    case("long_rows_" + x, "a * b + c",
         [("a", rnd((3, 70), dt)), ("b", rnd(70, dt)), ("c", rnd((3, 1), dt))])
    case("long_where_" + x, "where(a > 0, a, b)", [("a", rnd((2, 100), dt)), ("b", rnd(100, dt))])
    case("layout_f_" + x, "a + b", [("a", rnd((3, 4), dt), "f"), ("b", rnd((3, 4), dt))])
    case("layout_step_" + x, "a * b", [("a", rnd(5, dt), "step"), ("b", rnd(5, dt))])
    case("layout_rev_step_" + x, "a - b", [("a", rnd(6, dt), "rev"), ("b", rnd(6, dt), "step")])
    case("layout_step_2d_bc_" + x, "a * b", [("a", rnd((3, 4), dt), "step"), ("b", rnd(4, dt), "rev")])
    case("layout_f_bc_" + x, "a / b", [("a", rnd((2, 3, 4), dt), "f"), ("b", rnd((3, 1), dt), "f")])
    case("layout_f_long_" + x, "sqrt(abs(a)) + b",
         [("a", rnd((3, 80), dt), "f"), ("b", rnd(80, dt), "rev")])

# 4. dtypes: f32 stays f32 with Python literals, f32 with f64 is f64

a32 = np.array([0.1, 1.0, 3.0, -2.5, 16777216.0, 1e-3], F32)
b64 = np.array([0.1, 1.0, 3.0, -2.5, 16777217.0, 1e-3], F64)
case("mixed_add", "a + b", [("a", a32), ("b", b64)])
case("mixed_eq", "a == b", [("a", a32), ("b", b64)])
case("mixed_lt", "a < b", [("a", a32), ("b", b64)])
case("mixed_scalar_f64", "a * b", [("a", a32), ("b", np.array(0.1, F64))])
case("mixed_scalar_f32", "a * b", [("a", b64), ("b", np.array(0.1, F32))])
case("mixed_where", "where(a > 1, a, b)", [("a", a32), ("b", b64)])
case("mixed_layout_f", "a + b", [("a", rnd((3, 4), F32), "f"), ("b", rnd(4, F64), "rev")])
case("mixed_layout_step", "a * b - c",
     [("a", rnd((4, 3), F32), "step"), ("b", rnd((4, 3), F64), "f"), ("c", rnd(3, F32), "step")])
case("mixed_reduce", "max(a - b, axis=0)", [("a", rnd((3, 4), F32), "rev"), ("b", rnd(4, F64))])
case("mixed_minimum", "minimum(a, b)", [("a", a32), ("b", b64)])
case("f32_lit_mul", "a * 0.1", [("a", a32)])
case("f32_lit_add", "a + 1e-3", [("a", a32)])
case("f32_lit_eq", "a == 0.1", [("a", a32)])
case("f32_lit_int", "a + 16777217", [("a", a32)])
case("f32_lit_overflow", "a * 1e40", [("a", a32)])
case("f32_lit_gt_overflow", "a < 1e40", [("a", a32)])
case("f32_lit_div", "a / 3", [("a", a32)])
case("f64_lit_div", "a / 3", [("a", b64)])
case("f32_lit_pow", "a ** 1.5", [("a", np.abs(a32))])
case("f32_where_lit", "where(a > 0, a, 0.1)", [("a", a32)])
case("literal_only", "1.5 * 2.0 + 0.25 * 4.0", [])
case("literal_nan", "nan + 1.0 * 2.0", [])
# NumPy rounds each operation in its own dtype: an f32 intermediate stays f32 until it meets f64
case("mixed_f32_intermediate", "a * b + c",
     [("a", np.array([0.1, 1.0 / 3, 7.1], F32)), ("b", np.array([0.3, 3.0, 1.1], F32)),
      ("c", np.array([0.0, 0.0, 0.0], F64))])
case("mixed_f32_lit_intermediate", "a * 0.1 + b",
     [("a", np.array([3.0, 7.0], F32)), ("b", np.array([0.0, 0.0], F64))])

# 5. compositions

for dt in (F64, F32):
    x = sfx(dt)
    w = with_specials(rnd(12, dt))
    case("where_float_cond_" + x, "where(a, b, c)",
         [("a", np.array([np.nan, 0.0, -0.0, 1.0, -np.inf, 5e-40 if dt == F32 else 5e-324], dt)),
          ("b", rnd(6, dt)), ("c", rnd(6, dt))])
    case("where_relu_" + x, "where(a > 0, a, 0)", [("a", w)])
    case("where_bool_branches_" + x, "where(a > b, a < c, a > c)",
         [("a", with_specials(rnd(10, dt))), ("b", rnd(10, dt)), ("c", rnd(10, dt))])
    case("where_nan_to_zero_" + x, "where(a != a, 0, a)", [("a", w)])
    case("clip_" + x, "minimum(maximum(a, -1), 1)", [("a", w)])
    case("sqrt_abs_" + x, "sqrt(abs(a))", [("a", w)])
    case("logistic_" + x, "1 / (1 + exp(-a))", [("a", rnd(16, dt))])
    case("axpy_" + x, "a * x + y", [("a", rnd((), dt)), ("x", rnd(20, dt)), ("y", rnd(20, dt))])
    case("ratio_" + x, "(a - b) / (a + b)", [("a", with_specials(rnd(12, dt))), ("b", rnd(12, dt))])
    case("diff_squares_" + x, "a * a - b * b", [("a", rnd(12, dt)), ("b", rnd(12, dt))])
    case("logical_mix_" + x, "(a < b) & ~(b >= 1) | (a != a)",
         [("a", with_specials(rnd((4, 5), dt, 1.0))), ("b", rnd(5, dt, 1.0))])
    case("truth_eq_" + x, "(a > 0) == (b > 0)", [("a", rnd(10, dt)), ("b", rnd(10, dt))])
    case("not_cmp_" + x, "~(a > 0)", [("a", w)])
    case("and_lit_" + x, "a & 1", [("a", w)])
    case("or_nan_lit_" + x, "a | nan", [("a", w)])
    case("inf_minus_" + x, "a + inf - a", [("a", w)])
    case("neg_zero_lit_" + x, "-0.0 + a * -0.0", [("a", w)])
    case("pow_tower_" + x, "a ** b ** 0.5", [("a", np.abs(rnd(8, dt, 2))), ("b", np.abs(rnd(8, dt, 2)))])
    case("pow_neg_exp_" + x, "a ** -b", [("a", np.abs(rnd(8, dt, 3))), ("b", rnd(8, dt, 2))])
    case("underflow_" + x, "a * b",
         [("a", np.array([1e-300, 2.2250738585072014e-308, 1e-20] if dt == F64 else
                         [1e-30, 1.1754944e-38, 1e-20], dt)),
          ("b", np.array([1e-10, 0.5, 1e-20], dt))])
    case("poly_" + x, "((a * x + b) * x + c) * x + d",
         [("x", rnd(15, dt, 2)), ("a", rnd((), dt)), ("b", rnd((), dt)), ("c", rnd((), dt)),
          ("d", rnd((), dt))])
    case("trig_" + x, "sin(a) * cos(a) + sqrt(abs(a))", [("a", rnd(16, dt, 3))])
    case("exp_log_" + x, "exp(log(abs(a)) * 0.5)", [("a", rnd(12, dt))])

# 6. reductions: every op, axis None / k / negative, f64 and f32, with and without NaN

RED = ["sum", "prod", "min", "max", "argmin", "argmax", "any", "all"]


def red_data(op, shape, dt, nan=False):
    if op in ("any", "all"):
        a = rng.choice(np.array([0.0, -0.0, 1.0, 2.0, 3.0, -4.0], dt), shape)
        if op == "all":
            a = np.where(rng.random(shape) < 0.75, np.abs(a) + 1, a).astype(dt)
    elif op == "prod":
        a = rng.uniform(0.5, 2.0, shape).astype(dt)
    elif op in ("argmin", "argmax"):
        a = ints(shape, dt)  # ties: the first extreme wins
    elif op in ("min", "max"):
        a = ints(shape, dt, 1, 30) * dt(0.5) - dt(7)
    else:
        a = rnd(shape, dt)
    if nan:
        flat = a.reshape(-1)
        flat[rng.choice(flat.size, 2, replace=False)] = np.nan
    return a


for dt, shape, axes in ((F64, (3, 4), [None, 0, 1, -1]), (F32, (2, 3, 4), [None, 1, -1, -3])):
    for op in RED:
        for ax in axes:
            for nan in (False, True):
                if nan and ax not in (None, axes[-1]):
                    continue
                a = red_data(op, shape, dt, nan)
                expr = "%s(a)" % op if ax is None else "%s(a, axis=%d)" % (op, ax)
                name = "red_%s_%s_%s%s" % (op, "all" if ax is None else "ax%d" % ax, sfx(dt),
                                           "_nan" if nan else "")
                if op == "sum":
                    sum_case(name, expr, [("a", a)], "a")
                else:
                    case(name, expr, [("a", a)])

# the spellings of an axis: axis=None, positional, negative positional
sum_case("red_sum_axis_none", "sum(a, axis=None)", [("a", rnd((3, 4), F64))], "a")
case("red_argmax_axis_none", "argmax(a, axis=None)", [("a", ints((3, 4), F32))])
case("red_max_positional_axis", "max(a, 0)", [("a", rnd((3, 4), F64))])
case("red_argmin_positional_neg_axis", "argmin(a, -1)", [("a", ints((2, 3, 4), F64))])
case("red_any_axis_none_spaced", "any( a > 0 , axis = None , )", [("a", rnd((2, 2), F32))])

for dt in (F64, F32):
    x = sfx(dt)
    n = np.nan
    case("red_sum_inf_" + x, "sum(a)", [("a", np.array([1.0, np.inf, 2.0], dt))])
    case("red_sum_inf_minf_" + x, "sum(a)", [("a", np.array([1.0, np.inf, -np.inf], dt))])
    case("red_sum_negzero_" + x, "sum(a)", [("a", np.array([-0.0, -0.0, -0.0], dt))], check="exact")
    case("red_sum_negzero_0d_" + x, "sum(a)", [("a", np.array(-0.0, dt))], check="exact")
    case("red_sum_negzero_axis_" + x, "sum(a, axis=1)", [("a", np.full((2, 3), -0.0, dt))], check="exact")
    case("red_sum_mixed_zero_" + x, "sum(a)", [("a", np.array([-0.0, 0.0, -0.0], dt))], check="exact")
    # kiln sums f32 in an f64 accumulator: an f32 intermediate overflow NumPy has, kiln does not
    case("red_sum_f32_overflow_" + x, "sum(a)", [("a", np.array([3e38, 3e38, -3e38], dt))])
    case("red_prod_zero_inf_" + x, "prod(a)", [("a", np.array([2.0, 0.0, np.inf], dt))])
    case("red_prod_negzero_" + x, "prod(a)", [("a", np.array([3.0, -0.0, 2.0], dt))], check="exact")
    case("red_max_nan_rows_" + x, "max(a, axis=1)", [("a", np.array([[1, n, 3], [4, 5, 6], [n, n, n]], dt))])
    case("red_min_inf_" + x, "min(a)", [("a", np.array([3.0, -np.inf, np.inf], dt))])
    case("red_argmax_nan_" + x, "argmax(a)", [("a", np.array([1.0, 9.0, n, 2.0, n], dt))])
    case("red_argmin_nan_axis_" + x, "argmin(a, axis=0)",
         [("a", np.array([[1.0, n, 3.0], [0.0, 2.0, n], [n, 1.0, 0.5]], dt))])
    case("red_argmin_all_nan_" + x, "argmin(a)", [("a", np.array([n, n, n], dt))])
    case("red_argmax_inf_tie_" + x, "argmax(a)", [("a", np.array([1.0, np.inf, np.inf], dt))])
    case("red_argmin_zero_tie_" + x, "argmin(a)", [("a", np.array([1.0, 0.0, -0.0, 0.0], dt))])
    case("red_any_nan_" + x, "any(a)", [("a", np.array([0.0, n, -0.0], dt))])
    case("red_all_nan_" + x, "all(a)", [("a", np.array([1.0, n, -2.0], dt))])
    case("red_all_negzero_" + x, "all(a)", [("a", np.array([1.0, -0.0, 2.0], dt))])
    case("red_any_negzero_" + x, "any(a)", [("a", np.array([-0.0, 0.0], dt))])
    # truth-valued bodies: sums and products count (int64), min/max stay bool
    b = with_specials(rnd((3, 5), dt), 0.2)
    case("red_sum_bool_" + x, "sum(a > 0)", [("a", b)])
    case("red_sum_bool_axis_" + x, "sum(a > 0, axis=1)", [("a", b)])
    case("red_prod_bool_" + x, "prod(a == a, axis=0)", [("a", b)])
    case("red_min_bool_" + x, "min(a > b)", [("a", b), ("b", rnd(5, dt))])
    case("red_max_bool_axis_" + x, "max(a > b, axis=0)", [("a", b), ("b", rnd(5, dt))])
    case("red_argmin_bool_" + x, "argmin(a > 0)", [("a", b)])
    case("red_argmax_bool_axis_" + x, "argmax(a > 0, axis=1)", [("a", b)])
    case("red_any_cmp_" + x, "any(a > 5, axis=0)", [("a", b)])
    case("red_all_self_eq_" + x, "all(a == a)", [("a", b)])
    case("red_all_and_" + x, "all(a & b, axis=-1)", [("a", b), ("b", rnd(5, dt))])
    # reductions of broadcast expressions
    sum_case("red_sum_bc_" + x, "sum(a * b)", [("a", rnd((3, 1), dt)), ("b", rnd(4, dt))], "a * b")
    case("red_max_bc_neg_axis_" + x, "max(a - b, axis=-2)", [("a", rnd((4, 6), dt)), ("b", rnd(6, dt))])
    sum_case("red_sum_bc_scalar_" + x, "sum(a + b, axis=0)", [("a", rnd((), dt)), ("b", rnd((3, 2), dt))],
             "a + b")
    case("red_argmax_bc_" + x, "argmax(a * b, axis=1)", [("a", ints((3, 1), dt)), ("b", ints(4, dt))])
    sum_case("red_sum_sq_" + x, "sum(a * a, axis=1)", [("a", rnd((4, 30), dt))], "a * a")
    sum_case("red_sum_sin_" + x, "sum(sin(a))", [("a", rnd(50, dt))], "sin(a)")
    case("red_prod_exp_" + x, "prod(exp(a), axis=0)", [("a", rnd((3, 4), dt, 1.0))])
    case("red_max_sqrt_" + x, "max(sqrt(a))", [("a", np.abs(rnd(9, dt)))])
    sum_case("red_sum_long_" + x, "sum(a)", [("a", rnd(1000, dt))], "a")
    sum_case("red_sum_layout_f_" + x, "sum(a, axis=0)", [("a", rnd((3, 5), dt), "f")], "a")
    case("red_max_layout_rev_" + x, "max(a, axis=1)", [("a", rnd((4, 3), dt), "rev")])
    case("red_argmin_layout_f_" + x, "argmin(a)", [("a", rnd((3, 4), dt), "f")])
    case("red_argmax_layout_step_" + x, "argmax(a, axis=0)", [("a", rnd((3, 4), dt), "step")])
    # 0-d and empty
    case("red_sum_0d_" + x, "sum(a)", [("a", rnd((), dt))], check="exact")
    case("red_argmax_0d_" + x, "argmax(a)", [("a", rnd((), dt))])
    case("red_min_0d_" + x, "min(a)", [("a", rnd((), dt))])
    case("red_sum_empty_" + x, "sum(a)", [("a", rnd(0, dt))], check="exact")
    case("red_prod_empty_" + x, "prod(a)", [("a", rnd(0, dt))], check="exact")
    case("red_any_empty_" + x, "any(a)", [("a", rnd(0, dt))])
    case("red_all_empty_" + x, "all(a)", [("a", rnd(0, dt))])
    case("red_sum_bool_empty_" + x, "sum(a > 0)", [("a", rnd(0, dt))])
    case("red_sum_empty_rows_" + x, "sum(a, axis=1)", [("a", rnd((2, 0), dt))], check="exact")
    case("red_sum_empty_out_" + x, "sum(a, axis=0)", [("a", rnd((2, 0), dt))], check="exact")
    case("red_min_empty_out_" + x, "min(a, axis=0)", [("a", rnd((2, 0), dt))])
    case("red_argmin_empty_out_" + x, "argmin(a, axis=0)", [("a", rnd((2, 0), dt))])
    case("red_max_empty_lead_" + x, "max(a, axis=1)", [("a", rnd((0, 3), dt))])

# 7. errors

ZERO = ["zero-size", "empty"]
case("err_bc_vec", "a + b", [("a", rnd(3, F64)), ("b", rnd(4, F64))], err=["[3]", "[4]", "broadcast"])
case("err_bc_mat", "a * b", [("a", rnd((2, 3), F64)), ("b", rnd((3, 2), F32))],
     err=["[2, 3]", "[3, 2]", "broadcast"])
case("err_bc_where", "where(a, b, c)", [("a", rnd(2, F64)), ("b", rnd(3, F64)), ("c", rnd(2, F64))],
     err=["[2]", "[3]", "broadcast"])
case("err_bc_reduce", "sum(a + b, axis=0)", [("a", rnd(3, F32)), ("b", rnd(4, F32))],
     err=["[3]", "[4]", "broadcast"])
case("err_bc_empty", "a + b", [("a", rnd((2, 0), F64)), ("b", rnd(3, F64))],
     err=["[2, 0]", "[3]", "broadcast"])
case("err_min_empty", "min(a)", [("a", rnd(0, F64))], err=ZERO[:1])
case("err_max_empty_f32", "max(a)", [("a", rnd(0, F32))], err=ZERO[:1])
case("err_argmax_empty", "argmax(a)", [("a", rnd(0, F64))], err=ZERO[:1])
case("err_argmin_empty_f32", "argmin(a)", [("a", rnd(0, F32))], err=ZERO[:1])
case("err_max_empty_axis", "max(a, axis=1)", [("a", rnd((2, 0), F64))], err=ZERO[:1])
case("err_argmin_empty_axis", "argmin(a, axis=-1)", [("a", rnd((3, 0), F64))], err=ZERO[:1])
case("err_argmax_empty_lead", "argmax(a, axis=0)", [("a", rnd((0, 3), F64))], err=ZERO[:1])
case("err_min_empty_bool", "min(a > 0)", [("a", rnd(0, F64))], err=ZERO[:1])
case("err_axis_high", "sum(a, axis=2)", [("a", rnd((2, 3), F64))], err=["axis 2", "out of range"])
case("err_axis_neg", "sum(a, axis=-3)", [("a", rnd((2, 3), F64))], err=["axis -3", "out of range"])
case("err_axis_0d", "max(a, axis=1)", [("a", rnd((), F64))], err=["axis 1", "out of range"])
# NumPy accepts axis=0 and axis=-1 on a 0-d array (a legacy rule: the axis is ignored)
case("red_max_0d_axis0", "max(a, axis=0)", [("a", rnd((), F64))])
case("red_sum_0d_axis_m1", "sum(a, axis=-1)", [("a", rnd((), F32))], check="exact")
case("err_axis_argmax", "argmax(a, axis=1)", [("a", rnd(4, F32))], err=["axis 1", "out of range"])
case("err_axis_bc", "any(a * b, axis=-3)", [("a", rnd((2, 1), F64)), ("b", rnd(3, F64))],
     err=["axis -3", "out of range"])

# 7. floor division, nextafter and numexpr's remaining real functions (after every case above, so
#    that their random draws are unchanged)

for dt in (F64, F32):
    s = specials(dt)
    x = sfx(dt)
    case("grid_floordiv_" + x, "a // b", [("a", s.reshape(-1, 1)), ("b", s)])
    case("grid_floor_divide_" + x, "floor_divide(a, b)", [("a", s.reshape(-1, 1)), ("b", s)])
    case("grid_nextafter_" + x, "nextafter(a, b)", [("a", s.reshape(-1, 1)), ("b", s)])
    u = unary_inputs(dt)
    for name, expr in [("floordiv_lit", "a // 2"), ("lit_floordiv", "7 // a"),
                       ("floordiv_neg", "a // -0.5"), ("copy", "copy(a)"), ("ones_like", "ones_like(a)"),
                       ("conj", "conj(a)"), ("real", "real(a)"), ("imag", "imag(a)"),
                       ("attr_real", "(a * 2).real"), ("attr_imag", "(a - 1).imag"),
                       ("attr_pow", "a.real ** 2 + a.imag"), ("floordiv_prec", "a * 3 // 2 % 5")]:
        case("unary_%s_%s" % (name, x), expr, [("a", u)])
    case("bc_ones_like_" + x, "ones_like(a) + b", [("a", rnd((3, 1), dt)), ("b", rnd(4, dt))])


def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "numpy_cases.txt")
    header = [
        "# NumPy parity cases for kiln: generated by tests/gen/make_numpy_cases.py, do not edit.",
        "# numpy %s, seed %d, %d cases. Format: see tests/gen/fixture.py." % (np.__version__, SEED, len(CASES)),
        "",
    ]
    with open(os.path.normpath(out), "w") as f:
        f.write("\n".join(header) + "\n\n".join(CASES) + "\n")
    print("wrote %d cases to %s" % (len(CASES), os.path.normpath(out)))


if __name__ == "__main__":
    main()
