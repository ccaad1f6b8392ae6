#!/usr/bin/env python3
"""How far kiln's and NumPy's math functions are from a reference, in ULP, side by side.

    python/target/venv/bin/python scripts/accuracy_survey.py [N] [SUBSTRING]

For each function of issue 22's set, N points (default 200,000) drawn over a domain that
exercises it, in float32 and float64: the largest and the mean distance in ULP of
`kiln.evaluate` and of NumPy's own loop (on this host, its AVX-512 or AVX2 code where it has
one). The float32 reference is NumPy's float64 result rounded to float32 (correctly rounded but in
rare double-rounding cases); the float64 one is Python's `math` module, the platform's libm
(glibc on Linux), which kiln's documented bounds are stated against (`jit/src/math.rs`
`ulp_bound`). SUBSTRING keeps only the functions whose name contains it. A survey for choosing
between speed and accuracy, not a test: the tests hold kiln to its bounds.
"""

import math
import sys

import numpy as np

import kiln

n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 200_000
only = sys.argv[2] if len(sys.argv) > 2 else ""
rng = np.random.default_rng(5)


def uniform(lo, hi):
    return rng.uniform(lo, hi, n)


def log_uniform(lo, hi):
    return np.exp(rng.uniform(lo, hi, n))


# (name, domain, the math module's function)
FUNCTIONS = [
    ("exp", uniform(-20, 20), math.exp),
    ("exp2", uniform(-20, 20), math.exp2),
    ("expm1", uniform(-5, 5), math.expm1),
    ("log", log_uniform(-20, 20), math.log),
    ("log2", log_uniform(-20, 20), math.log2),
    ("log10", log_uniform(-20, 20), math.log10),
    ("log1p", log_uniform(-20, 3) - 0.5, math.log1p),
    ("sin", uniform(-10, 10), math.sin),
    ("cos", uniform(-10, 10), math.cos),
    ("tan", uniform(-10, 10), math.tan),
    ("sinh", uniform(-10, 10), math.sinh),
    ("cosh", uniform(-10, 10), math.cosh),
    ("tanh", uniform(-5, 5), math.tanh),
    ("arcsin", uniform(-1, 1), math.asin),
    ("arccos", uniform(-1, 1), math.acos),
    ("arctan", uniform(-20, 20), math.atan),
    ("arcsinh", uniform(-20, 20), math.asinh),
    ("arccosh", 1 + log_uniform(-20, 5), math.acosh),
    ("arctanh", uniform(-0.999, 0.999), math.atanh),
    ("cbrt", uniform(-20, 20), math.cbrt),
]


def ulps(got, want, bits):
    """|got - want| in units in the last place, from the ordered integers of their bit patterns
    (any NaN equal to any NaN)."""
    it = np.int32 if bits == 32 else np.int64
    wide = np.int64
    a = got.view(it).astype(wide)
    b = want.view(it).astype(wide)
    low = np.iinfo(it).min
    a = np.where(a < 0, low - a, a)
    b = np.where(b < 0, low - b, b)
    d = np.abs(a - b)
    both_nan = np.isnan(got) & np.isnan(want)
    return np.where(both_nan, 0, d)


def row(name, x64, ref_fn):
    cells = []
    x32 = x64.astype(np.float32)
    np_fn = getattr(np, name)
    with np.errstate(all="ignore"):
        ref32 = np_fn(x32.astype(np.float64)).astype(np.float32)
    ref64 = np.array([ref_fn(v) for v in x64])
    for x, ref, bits in ((x32, ref32, 32), (x64, ref64, 64)):
        with np.errstate(all="ignore"):
            theirs = np_fn(x)
        ours = kiln.evaluate(f"{name}(x)", local_dict=dict(x=x))
        for got in (ours, theirs):
            d = ulps(np.asarray(got), ref, bits)
            cells.append(f"{int(d.max()):3d} {d.mean():7.4f}")
    print(f"{name:8s} " + "  ".join(cells))


print(f"N = {n}; max and mean ULP from the reference (float32: float64 rounded; float64: libm)")
print(f"{'':8s} {'kiln f32':>11s}  {'NumPy f32':>11s}  {'kiln f64':>11s}  {'NumPy f64':>11s}")
for name, x, ref_fn in FUNCTIONS:
    if only in name:
        row(name, x, ref_fn)
