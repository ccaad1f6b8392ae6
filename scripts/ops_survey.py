#!/usr/bin/env python3
"""Everyday array operations from Python, kiln against NumPy (and numexpr), side by side.

    python/target/venv/bin/python scripts/ops_survey.py [N] [SUBSTRING]

Each row is one expression, evaluated by `kiln.evaluate` and written the natural NumPy way (and
by `numexpr.evaluate` where it takes the expression), on one thread each: the best of 5 repeats
of a batch, in ns per element, and NumPy's time over kiln's (above 1: kiln is faster). Rows NumPy
runs more than 1.25x faster are marked `<<<`. N defaults to 1e6; SUBSTRING keeps only the rows
whose expression contains it. The inputs: x uniform in [-1, 1), y in [0.1, 2), f and g their
float32 copies, i in [-1e6, 1e6) and j in [1, 1000) int64, i32 and j32 their int32 copies, b and c
bool masks, m, mf and mi x, f and i as 1000 rows. A survey for finding gaps, not BENCHMARKS.md's
controlled run: the machine is shared, so compare ratios of one run.
"""

import sys
import timeit

import numexpr as ne
import numpy as np

import kiln

ne.set_num_threads(1)
kiln.set_num_threads(1)

n = int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**6
only = sys.argv[2] if len(sys.argv) > 2 else ""
rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, n)
y = rng.uniform(0.1, 2, n)
f, g = x.astype(np.float32), y.astype(np.float32)
i = rng.integers(-(10**6), 10**6, n)
j = rng.integers(1, 1000, n)
i32, j32 = i.astype(np.int32), j.astype(np.int32)
b, c = x > 0, y > 1
rows = 1000 if n % 1000 == 0 else 1
m, mf, mi = x.reshape(rows, -1), f.reshape(rows, -1), i.reshape(rows, -1)
env = dict(x=x, y=y, f=f, g=g, i=i, j=j, i32=i32, j32=j32, b=b, c=c, m=m, mf=mf, mi=mi)

CASES = [
    ("sum(x)", lambda: np.sum(x)),
    ("sum(f)", lambda: np.sum(f)),
    ("sum(i)", lambda: np.sum(i)),
    ("sum(i32)", lambda: np.sum(i32)),
    ("max(x)", lambda: np.max(x)),
    ("min(i)", lambda: np.min(i)),
    ("max(i32)", lambda: np.max(i32)),
    ("sum(b)", lambda: np.sum(b)),
    ("any(b)", lambda: np.any(b)),
    ("all(b)", lambda: np.all(b)),
    ("any(x > 0.5)", lambda: np.any(x > 0.5)),
    ("sum(m, axis=0)", lambda: m.sum(axis=0)),
    ("sum(m, axis=1)", lambda: m.sum(axis=1)),
    ("max(m, axis=0)", lambda: m.max(axis=0)),
    ("sum(mi, axis=1)", lambda: mi.sum(axis=1)),
    ("argmax(x)", lambda: np.argmax(x)),
    ("argmin(f)", lambda: np.argmin(f)),
    ("argmin(m, axis=1)", lambda: m.argmin(axis=1)),
    ("argmax(i)", lambda: np.argmax(i)),
    ("cumsum(x)", lambda: np.cumsum(x)),
    ("cumsum(i)", lambda: np.cumsum(i)),
    ("mean(x)", lambda: np.mean(x)),
    ("std(x)", lambda: np.std(x)),
    ("var(f)", lambda: np.var(f)),
    ("abs(i)", lambda: np.abs(i)),
    ("i * j", lambda: i * j),
    ("i32 * i32", lambda: i32 * i32),
    ("i // 2", lambda: i // 2),
    ("i // 3", lambda: i // 3),
    ("i % 7", lambda: i % 7),
    ("i // 1000", lambda: i // 1000),
    ("i // j", lambda: i // j),
    ("i % j", lambda: i % j),
    ("i32 // 3", lambda: i32 // 3),
    ("i32 % j32", lambda: i32 % j32),
    ("where(i > 0, i, -i)", lambda: np.where(i > 0, i, -i)),
    ("~b", lambda: ~b),
    ("b & c", lambda: b & c),
    ("b | ~c", lambda: b | ~c),
    ("(x > 0) & (y < 0.5)", lambda: (x > 0) & (y < 0.5)),
    ("where(b, x, y)", lambda: np.where(b, x, y)),
    ("minimum(x, y)", lambda: np.minimum(x, y)),
    ("x / y", lambda: x / y),
    ("i / j", lambda: i / j),
    ("i32 + f", lambda: i32 + f),
    ("isnan(x)", lambda: np.isnan(x)),
    ("exp(x)", lambda: np.exp(x)),
    ("log(y)", lambda: np.log(y)),
    ("sin(x)", lambda: np.sin(x)),
    ("exp(f)", lambda: np.exp(f)),
    ("arctan2(x, y)", lambda: np.arctan2(x, y)),
    ("hypot(x, y)", lambda: np.hypot(x, y)),
]


def per_element(fn):
    """The best of 5 repeats of a batch of calls of `fn`, in ns per element (NaN if it raises)."""
    try:
        fn()
        reps = max(3, int(2e6 // n))
        return min(timeit.repeat(fn, number=reps, repeat=5)) / reps / n * 1e9
    except Exception:  # noqa: BLE001 - a call the library refuses is a NaN cell
        return float("nan")


print(f"{'expression':24s} {'N':>8s} {'kiln':>7s} {'numexpr':>8s} {'numpy':>7s}  numpy/kiln")
for expr, natural in CASES:
    if only not in expr:
        continue
    k = per_element(lambda: kiln.evaluate(expr, local_dict=env))
    e = per_element(lambda: ne.evaluate(expr, local_dict=env))
    p = per_element(natural)
    flag = "  <<<" if p / k < 0.8 else ""
    print(f"{expr:24s} {n:>8d} {k:7.3f} {e:8.3f} {p:7.3f}  {p / k:5.2f}{flag}")
