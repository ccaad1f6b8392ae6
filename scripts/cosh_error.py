#!/usr/bin/env python3
"""The error of kiln's f64 vector cosh (`jit/src/vmath/hyperbolic.rs`, `cosh_fast`), emulated
operation by operation in exact arithmetic (each `fma` and product rounded once to a double, as the
hardware does, with `fractions.Fraction`, whose conversion to float rounds correctly), against
mpmath's cosh at 200 bits, beside the quotient form `e/2 + (1/2)/e` it replaced.

    python3 scripts/cosh_error.py            # uniform points in [0, 3], [3, 17], [17, 22], [22, 700]

Prints, per interval and method, the maximum and mean error in ULP of the true value.
"""

import math
import random
from fractions import Fraction as F

import mpmath

mpmath.mp.prec = 200

# vmath::exp::F64: the reduction's constants and Q (ascending)
LOG2E, LN2_HI, LN2_LO = 1.4426950408889634, 0.6931471805599453, 2.3190468138462996e-17
Q = [0.5000000000000001, 0.16666666666666669, 0.04166666666662413, 0.008333333333330062,
     0.0013888888917213717, 0.00019841269863053618, 2.4801521295954376e-05, 2.7557268459997064e-06,
     2.7620088445409746e-07, 2.510038549551032e-08]
COSH_K_MAX = 64


def fma(a, b, c):
    return float(F(a) * F(b) + F(c))


def poly(x, cs):
    acc = cs[-1]
    for c in reversed(cs[:-1]):
        acc = fma(acc, x, c)
    return acc


def reduce(x):
    k = float(round(x * LOG2E))
    r = fma(-k, LN2_HI, x)
    return k, fma(-k, LN2_LO, r)


def cosh_kiln(x):
    k, r = reduce(x)
    r2 = r * r
    e, o = poly(r2, Q[0::2]), poly(r2, Q[1::2])
    sp = fma(r2, fma(o, r, e), r)
    sm = fma(r2, fma(o, -r, e), -r)
    big, small = 2.0 ** (k - 1), 2.0 ** (-min(k, COSH_K_MAX) - 1)
    return big + fma(big, sp, fma(small, sm, small))


def cosh_quotient(x):
    k, r = reduce(x)
    r2 = r * r
    s = fma(r2, fma(poly(r2, Q[1::2]), r, poly(r2, Q[0::2])), r)
    e = (s + 1.0) * 2.0**k
    return e * 0.5 + 0.5 / e


def ulps(y, x):
    ref = mpmath.cosh(mpmath.mpf(x))
    return float(abs(mpmath.mpf(y) - ref) / math.ulp(float(ref)))


def main():
    random.seed(2)
    for lo, hi, n in [(0, 3, 3000), (3, 17, 1500), (17, 22, 1500), (22, 700, 1500)]:
        xs = [random.uniform(lo, hi) for _ in range(n)]
        for name, f in [("kiln", cosh_kiln), ("e/2 + (1/2)/e", cosh_quotient)]:
            es = [ulps(f(x), x) for x in xs]
            print(f"[{lo}, {hi}] {name}: max {max(es):.3f} ULP, mean {sum(es) / len(es):.3f}")


if __name__ == "__main__":
    main()
