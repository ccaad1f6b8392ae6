#!/usr/bin/env python3
"""Generates tests/data/typed_cases.csv: NumPy 2's dtype and values for kiln's typed kernels (issue 13),
over fixed bool, int32, int64, float32 and float64 inputs with the edge values (0, -1, MIN, MAX,
2**53 + 1, zero divisors, shift counts outside the width, NaN, inf, -0.0).

Run: `/tmp/peers/bin/python tests/gen/make_typed_cases.py` (NumPy 2.4.6). tests/typed.rs reads the
output and runs every expression through `FusedRunner::compile_text` on the same inputs (written out
in both files); it never runs Python.

Rows marked `ext` hold kiln's documented difference from NumPy instead of NumPy's refusal or float16:
`& |` of a float (kiln's logical extension) and unary math of a bool (float64).

Sections:
- the promotion table: every pair of the five array types and the weak literals 3 and 2.5 under
  `+ * / // % ** < & where`, NumPy's dtype and values, or `error` where NumPy raises (or gives int8,
  a type kiln does not compute). Where NumPy refuses `&` of a float, kiln keeps its documented logical
  extension: those rows hold `np.logical_and`'s result, marked `ext`.
- integer semantics: wrap-around, floor division and remainder by zero, shifts, bitwise operators,
  casts, unary functions;
- reductions and scans: NumPy's accumulator types.

Line format (`;`-separated): section; expression; dtype or `error`; values (space-separated; floats
as Python's repr, bools as 0/1).
"""

import os
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "data", "typed_cases.csv"))

I32_MIN, I32_MAX = -2**31, 2**31 - 1
I64_MIN, I64_MAX = -2**63, 2**63 - 1

INPUTS = {
    "b": np.array([True, False, True, False, True, True, False, False]),
    "i": np.array([0, -1, 1, I32_MIN, I32_MAX, 7, -7, 3], dtype=np.int32),
    "j": np.array([3, 2, -2, -1, 1, 0, 5, -3], dtype=np.int32),
    "k": np.array([0, -1, 2**53 + 1, I64_MIN, I64_MAX, 7, -7, 2**40], dtype=np.int64),
    "l": np.array([3, 0, -2, -1, 1, 63, 64, -3], dtype=np.int64),
    "f": np.array([0.5, -1.5, 2.5, np.inf, -0.0, np.nan, 3.0, 1e30], dtype=np.float32),
    "d": np.array([0.5, -1.5, 2.5, -np.inf, 0.0, np.nan, 3.0, 1e300], dtype=np.float64),
    # non-negative exponents, for `**` of integers
    "u": np.array([0, 1, 2, 3, 0, 5, 1, 31], dtype=np.int32),
    "v": np.array([0, 1, 2, 3, 63, 5, 1, 2], dtype=np.int64),
}
KILN_TYPES = {"bool", "int32", "int64", "float32", "float64"}

# the operand of each type in the promotion table, and its exponent form for `**`
OPERANDS = {"b": "b", "i": "i", "k": "k", "f": "f", "d": "d", "3": "3", "2.5": "2.5"}
EXPONENT = {"b": "b", "i": "u", "k": "v", "f": "f", "d": "d", "3": "3", "2.5": "2.5"}

NAMES = {
    "sqrt": np.sqrt, "abs": np.abs, "sign": np.sign, "floor": np.floor, "ceil": np.ceil,
    "trunc": np.trunc, "round": np.round, "minimum": np.minimum, "maximum": np.maximum,
    "fmax": np.fmax, "fmin": np.fmin, "fmod": np.fmod, "isnan": np.isnan, "isinf": np.isinf,
    "isfinite": np.isfinite, "exp": np.exp, "where": np.where, "arctan2": np.arctan2,
    "sum": np.sum, "prod": np.prod, "min": np.min, "max": np.max, "argmin": np.argmin,
    "argmax": np.argmax, "any": np.any, "all": np.all, "mean": np.mean, "var": np.var, "std": np.std,
    "cumsum": np.cumsum, "logical_and": np.logical_and, "cumprod": np.cumprod,
    "cummax": np.maximum.accumulate, "cummin": np.minimum.accumulate,
    "int32": lambda x: np.asarray(x).astype(np.int32), "int64": lambda x: np.asarray(x).astype(np.int64),
    "float32": lambda x: np.asarray(x).astype(np.float32),
    "float64": lambda x: np.asarray(x).astype(np.float64),
    "bool": lambda x: np.asarray(x).astype(np.bool_),
}


def evaluate(expr):
    scope = dict(INPUTS)
    scope.update(NAMES)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return np.asarray(eval(expr, {"__builtins__": {}}, scope))  # noqa: S307


def fmt(v, dtype):
    if dtype == "bool":
        return str(int(v))
    if dtype.startswith("int"):
        return str(int(v))
    v = float(v)
    if np.isnan(v):
        return "nan"
    return repr(v)


def row(section, expr, ext=None):
    try:
        r = evaluate(expr)
    except Exception:  # NumPy refuses: kiln must refuse too
        if ext is None:
            return "%s;%s;error;" % (section, expr)
        r, section = evaluate(ext), "ext"
    dtype = str(r.dtype)
    if dtype == "float16" and ext is not None:
        r, section, dtype = evaluate(ext), "ext", "float64"
    if dtype not in KILN_TYPES:
        return "%s;%s;error;" % (section, expr)
    return "%s;%s;%s;%s" % (section, expr, dtype, " ".join(fmt(v, dtype) for v in r.ravel()))


def main():
    lines = []
    keys = list(OPERANDS)
    for a in keys:
        for b in keys:
            if a[0].isdigit() and b[0].isdigit():
                continue  # two literals: Python's arithmetic, not an array's
            x, y = OPERANDS[a], OPERANDS[b]
            for op in ["+", "*", "/", "//", "%", "<"]:
                lines.append(row("promote", "%s %s %s" % (x, op, y)))
            lines.append(row("promote", "%s ** %s" % (x, EXPONENT[b])))
            lines.append(row("promote", "%s & %s" % (x, y), ext="logical_and(%s, %s)" % (x, y)))
            lines.append(row("promote", "where(b, %s, %s)" % (x, y)))
    # literals that do not fit the array's type
    for e in ["i + 3000000000", "i * -2147483649", "k + 9223372036854775807", "i < 3000000000",
              "i == 2147483648", "i ** -1", "b - b", "b // b", "b % b", "b ** b"]:
        lines.append(row("promote", e))
    semantics = [
        "i + j", "i - j", "i * j", "-i", "-k", "abs(i)", "abs(k)", "k * k", "k + 1", "k - 1", "i + 1",
        "i // j", "i % j", "k // l", "k % l", "fmod(i, j)", "fmod(k, l)", "i ** u", "k ** v", "i ** 2",
        "i << j", "i >> j", "k << l", "k >> l", "i << 31", "i >> 31", "k << 63", "1 << i",
        "i ^ j", "i & j", "i | j", "~i", "~k", "~b", "b ^ b", "b | b", "b & b", "b + b", "b * b",
        "b * i", "b + 1", "i & 6", "i | -8", "i ^ -1", "k & 255",
        "sign(i)", "sign(k)", "floor(i)", "ceil(k)", "trunc(i)", "round(k)", "minimum(i, j)",
        "maximum(k, l)", "fmax(i, j)", "fmin(k, l)", "minimum(i, k)", "maximum(b, b)",
        "isnan(i)", "isinf(k)", "isfinite(i)", "sqrt(i)", "exp(b)", "arctan2(i, j)",
        "int32(d)", "int32(f)", "int64(d)", "int64(f)", "int32(k)", "float32(k)", "float64(k)",
        "float32(i)", "bool(i)", "bool(d)", "int64(b)", "float64(b)", "int32(b) + b",
        "k == 9007199254740993", "k < 9007199254740993", "i < 3000000000", "i > -3000000000",
        "where(b, i, k)", "where(b, i, 2.5)", "where(b, f, 3)", "where(i, k, 0)", "where(b, 1, 0)",
        "(i * 3 + j) % 7", "i / j", "k / l", "b / b", "i * 2.5", "f * 2", "f + i", "d + k",
    ]
    for e in semantics:
        # unary math of a bool: float16 in NumPy, float64 in kiln (the math of float64(b))
        lines.append(row("semantics", e, ext=e.replace("(b)", "(float64(b))")))
    reductions = [
        "sum(i)", "sum(b)", "sum(k)", "prod(i)", "prod(k)", "prod(b)", "min(i)", "max(i)", "min(k)",
        "max(b)", "min(b)", "argmin(i)", "argmax(i)", "argmin(k)", "argmax(b)", "any(i)", "all(i)",
        "any(k)", "all(j)", "mean(i)", "mean(k)", "mean(b)", "sum(i, initial=5)", "max(i, initial=10)",
        "sum(where(b, i, 0))", "sum(i * 2)", "sum(i + 2.5)", "max(f + i)",
        "cumsum(i)", "cumsum(b)", "cumsum(k)", "cumprod(i)", "cumprod(k)", "cummax(i)", "cummin(k)",
        "cummax(b)", "cumsum(i + 0.5)", "prod(i + 3)", "cumprod(k + 2)", "prod(l)", "var(i)", "std(i)",
        "var(b)", "mean(i * 2)",
    ]
    for e in reductions:
        lines.append(row("reduce", e))
    with open(OUT, "w") as out:
        out.write("# NumPy %s: tests/gen/make_typed_cases.py writes this file; tests/typed.rs reads it\n"
                  % np.__version__)
        for line in lines:
            out.write(line + "\n")
    print("%d rows -> %s" % (len(lines), OUT))


if __name__ == "__main__":
    main()
