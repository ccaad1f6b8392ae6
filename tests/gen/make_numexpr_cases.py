#!/usr/bin/env python3
"""Generates tests/data/numexpr_cases.txt from tests/data/numexpr_test_expressions.csv (numexpr's own
expression list, copied by copy_corpora.py): for every expression within kiln's language, the value
NumPy gives on numexpr's inputs, for float64 and float32 and numexpr's three test_scalar variants.

Run: `python3 tests/gen/make_numexpr_cases.py`. tests/corpora.rs reads the output; it never runs
Python. The expected value is computed exactly as numexpr's harness computes its reference (`npval`):
the expression string evaluated by Python with NumPy's names in scope, on the inputs

    a = arange(200, dtype)[::2]      (a strided view; test_scalar 1: a = a[50], a 0-d scalar)
    a2 = zeros((100, 100), dtype)
    b = arange(100, dtype) / 100     (test_scalar 2: b = b[50])
    c = d = e = arange(100, dtype)

Skipped: the int and complex dtypes (kiln computes in f32 and f64 only), and the expressions that use
what kiln's language lacks (functions kiln does not have; none of the float rows since kiln has
`.real`, `copy`, `ones_like`, `conj` and `nextafter`).
Those are written as `skip` lines: the Rust test checks that kiln rejects each of them, so an
expression that becomes expressible is noticed. Rows of section EXTRA are ours, not upstream: they
broadcast a2 ([100, 100]) with the [100] inputs, which no upstream row does.
"""

import csv
import os
import re
import sys

import numpy as np

sys.dont_write_bytecode = True  # no __pycache__ beside the generators
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture import output_line  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", "data", "numexpr_test_expressions.csv"))
OUT = os.path.normpath(os.path.join(HERE, "..", "data", "numexpr_cases.txt"))

KILN_FUNCTIONS = {"sqrt", "sin", "cos", "tan", "exp", "log", "abs", "where", "minimum", "maximum",
                  "sum", "prod", "min", "max", "argmin", "argmax", "any", "all",
                  "tanh", "exp2", "log2", "log10", "expm1", "log1p", "arcsin", "arccos", "arctan",
                  "sinh", "cosh", "arcsinh", "arccosh", "arctanh", "floor", "ceil", "trunc", "round",
                  "sign", "isnan", "isinf", "isfinite", "arctan2", "hypot", "copysign", "fmax", "fmin",
                  "fmod", "floor_divide", "nextafter", "copy", "ones_like", "conj", "real", "imag"}
INEXACT = re.compile(r"\*\*|\b(sin|cos|tan|exp|log|tanh|exp2|log2|log10|expm1|log1p|arcsin|arccos|"
                     r"arctan|sinh|cosh|arcsinh|arccosh|arctanh|arctan2|hypot)\(")

# (expression, check or None for the default): reduced over an axis to keep the fixture small
EXTRA = [
    ("sum(a2 + a * b, axis=0)", {"float64": "close 1e-12 0", "float32": "close 1e-05 0"}),
    ("max(where(a2 == 0, a, b) - c, axis=1)", None),
    ("min(a2 - exp(a2) * a * b, axis=-2)", None),
]


def unsupported(expr):
    for fn in re.findall(r"([A-Za-z_][A-Za-z_0-9]*)\s*\(", expr):
        if fn not in KILN_FUNCTIONS:
            return "function %s" % fn
    return None


def inputs(dtype, test_scalar):
    array_size = 100
    a = np.arange(2 * array_size, dtype=dtype)[::2]
    a2 = np.zeros([array_size, array_size], dtype=dtype)
    b = np.arange(array_size, dtype=dtype) / array_size
    c = np.arange(array_size, dtype=dtype)
    d = np.arange(array_size, dtype=dtype)
    e = np.arange(array_size, dtype=dtype)
    if test_scalar == 1:
        a = a[array_size // 2]
    if test_scalar == 2:
        b = b[array_size // 2]
    return dict(a=a, a2=a2, b=b, c=c, d=d, e=e)


def main():
    with open(SRC, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    rows = [(i + 1, r["section"], r["expression"]) for i, r in enumerate(rows)]
    checks = {}
    for i, (e, check) in enumerate(EXTRA):
        rows.append((len(rows) + 1, "EXTRA", e))
        checks[e] = check
    blocks, skips, n_run = [], [], 0
    for row, section, expr in rows:
        why = unsupported(expr)
        if why:
            skips.append("skip %s | %s" % (why, expr))
            continue
        n_run += 1
        for dtype in (np.float64, np.float32):
            for test_scalar in (0, 1, 2):
                env = dict(vars(np))
                env["abs"] = abs
                loc = inputs(dtype, test_scalar)
                with np.errstate(all="ignore"):
                    npval = np.asarray(eval(expr, env, loc))
                check = "ulp 4" if INEXACT.search(expr) else "exact"
                if checks.get(expr):
                    check = checks[expr][npval.dtype.name]
                blocks.append("\n".join([
                    "case row%d_%s_s%d" % (row, "f64" if dtype == np.float64 else "f32", test_scalar),
                    "meta section %s" % section,
                    "meta dtype %s" % np.dtype(dtype).name,
                    "meta scalar %d" % test_scalar,
                    "expr " + expr,
                    output_line(npval),
                    "check " + check,
                    "end",
                ]))
    header = [
        "# numexpr's test expressions with the values NumPy gives: generated by",
        "# tests/gen/make_numexpr_cases.py (numpy %s), do not edit. Format: tests/gen/fixture.py." % np.__version__,
        "# The expressions are upstream data:",
        "#   upstream: https://github.com/pydata/numexpr @ a561ee3835fe47e1aa90fd56300d64c3aa8d4509",
        "#   path: numexpr/tests/test_numexpr.py (tests, optests, cmptests, func1tests, func2tests, powtests)",
        "#   license: MIT (numexpr LICENSE.txt)",
        "# except section EXTRA, which is ours. %d of %d upstream expressions run, %d skipped;"
        % (n_run - len(EXTRA), len(rows) - len(EXTRA), len(skips)),
        "# %d cases (float64 and float32, test_scalar 0, 1, 2)." % len(blocks),
        "",
    ]
    skip_block = "\n".join(["case skipped"] + skips + ["end"])
    with open(OUT, "w") as f:
        f.write("\n".join(header) + "\n\n".join(blocks + [skip_block]) + "\n")
    print("wrote %d cases (%d expressions, %d skipped) to %s" % (len(blocks), n_run, len(skips), OUT))


if __name__ == "__main__":
    main()
