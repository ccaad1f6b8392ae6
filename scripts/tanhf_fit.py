#!/usr/bin/env python3
"""The table of kiln's float32 tanh (`jit/src/vmath/tanh32.rs`): |x| cut into 16 intervals (half
binades from 1/16 to 8, [8, 9.25] where the kernel clamps, and [0, 1/16)), and on each a polynomial
of degree 7 in `y = |x| - b` (`b` the interval's middle), fitted by Chebyshev interpolation in
mpmath (200-bit arithmetic) and rounded to floats, its constant term as a pair of floats.
Interval 0 is the odd `y + y³·(P0 + y²·P1)` (the even coefficients and the constant zero), so that
tiny and subnormal arguments give themselves.

Prints each interval's error measured over every 7th float32 in it: the polynomial in exact
arithmetic (as a power of two, relative), and the float32 evaluation as the kernel does it (its
fused multiply-adds emulated exactly in float64, then rounded) against float64 tanh rounded to
float32, in ULP (max, mean); then the Rust table. `DEG=5 PER=4` gives the 32 quarter-binade
intervals of degree 5 that were measured against it (as accurate; four permutes and three blends
a column at AVX2).

    cd /tmp && /work/main/python/target/venv/bin/python /work/main/scripts/tanhf_fit.py
"""

import os

import mpmath as m
import numpy as np

m.mp.prec = 200

DEG = int(os.environ.get("DEG", 7))
# intervals per binade (2: half binades, 16 intervals; 4: quarter binades, 32)
PER = int(os.environ.get("PER", 2))
# |x| at and above which float32 tanh is 1 (1 - tanh(a) below half an ULP of 1, 2^-25), rounded
# up; the kernel clamps |x| to it, and the last interval's polynomial gives 1 there
CLAMP = 9.25
# the table's rows: the intervals, then copies of the last
SLOTS = 8 * PER


def intervals():
    """(lo, hi, b) of the 16 intervals: [0, 1/16), then half binades [1/16, 3/32) ... [8, 12),
    the last one cut at the clamp."""
    out = [(0.0, 1 / 16, 0.0)]
    for i in range(1, 8 * PER + 1):
        e, part = divmod(i - 1, PER)
        lo = 2.0 ** (e - 4) * (1 + part / PER)
        hi = 2.0 ** (e - 4) * (1 + (part + 1) / PER)
        if lo >= CLAMP:
            break
        hi = min(hi, CLAMP)
        out.append((lo, hi, float(np.float32((lo + hi) / 2))))
    return out


def f32(x):
    return float(np.float32(float(x)))


def fit(i, lo, hi, b):
    """Coefficients [c0hi, c0lo, c1, ..., c6] (floats) and the exact polynomial's error."""
    if i == 0:
        t = m.mpf(hi)
        g = lambda z: (m.tanh(m.sqrt(z)) - m.sqrt(z)) / m.sqrt(z) ** 3 if z else m.mpf(-1) / 3
        p = m.chebyfit(g, [m.mpf(0), t * t], 2)[::-1]
        c = [0.0, 0.0, 1.0, 0.0, f32(p[0]), 0.0, f32(p[1])] + [0.0] * (DEG - 5)
    else:
        bb = m.mpf(b)
        cs = m.chebyfit(lambda y: m.tanh(bb + y), [m.mpf(lo) - bb, m.mpf(hi) - bb], DEG + 1)[::-1]
        hi0 = f32(cs[0])
        c = [hi0, f32(cs[0] - m.mpf(hi0))] + [f32(v) for v in cs[1:]]
    worst = 0
    for a in np.linspace(max(lo, 1e-6), hi, 2000):
        y = m.mpf(a) - m.mpf(b)
        q = sum(m.mpf(c[k + 1]) * y**k for k in range(1, DEG + 1))
        v = m.mpf(c[0]) + m.mpf(c[1]) + q
        worst = max(worst, abs(v / m.tanh(m.mpf(a)) - 1))
    return c, worst


def fma32(a, b, c):
    """float32 fused multiply-add: the product exact in float64, one rounding there, then to float32
    (a double rounding that differs from one only at float32 midpoints, vanishingly rarely)."""
    return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(np.float32)


def evaluate(c, b, a):
    """The kernel's float32 evaluation on the (non-negative) float32 array `a` of one interval."""
    c = [np.float32(v) for v in c]
    y = a - np.float32(b)
    q = np.full_like(y, c[DEG + 1])
    for k in range(DEG, 2, -1):
        q = fma32(q, y, np.full_like(y, c[k]))
    t = fma32(np.full_like(y, c[2]), y, np.full_like(y, c[1]))
    s = fma32(y * y, q, t)
    return np.float32(c[0]) + s


def ulps(got, want):
    d = np.abs(got.view(np.int32).astype(np.int64) - want.view(np.int32).astype(np.int64))
    return d


def main():
    rows = []
    print("interval        b          poly error   max ULP  mean ULP")
    for i, (lo, hi, b) in enumerate(intervals()):
        c, worst = fit(i, lo, hi, b)
        rows.append((b, c))
        bits = np.arange(np.float32(lo).view(np.int32), np.float32(hi).view(np.int32), 7, dtype=np.int32)
        a = bits.view(np.float32)
        want = np.tanh(a.astype(np.float64)).astype(np.float32)
        d = ulps(evaluate(c, b, a), want)
        err = float(m.log(worst, 2)) if worst else float("-inf")
        print(f"[{lo:<8g}, {hi:<6g})  {b:<10g} 2^{err:7.2f}   {d.max():4d}    {d.mean():.4f}")
    # the unused slots above the clamp's (NaN's index) repeat the last interval
    rows += [rows[-1]] * (SLOTS - len(rows))
    names = ["b", "c0 (high part)", "c0 (low part)"] + [f"c{k}" for k in range(1, DEG + 1)]
    print()
    print(f"pub(crate) const TANH32: [[f32; {SLOTS}]; {DEG + 3}] = [")
    for k, name in enumerate(names):
        col = [b for b, _ in rows] if k == 0 else [c[k - 1] for _, c in rows]
        print(f"    // {name}")
        print("    [")
        for r in range(0, SLOTS, 4):
            print("        " + " ".join(f"{lit(v)}," for v in col[r : r + 4]))
        print("    ],")
    print("];")


def lit(v):
    """The shortest literal that gives the float32 `v`."""
    t = str(np.float32(v))
    return t if ("." in t or "e" in t) else t + ".0"

if __name__ == "__main__":
    main()
