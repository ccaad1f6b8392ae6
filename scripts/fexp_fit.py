#!/usr/bin/env python3
"""The polynomial coefficients of kiln's vector tanh, sinh, expm1 and (f32) tan
(`jit/src/vmath/hyperbolic.rs`, `jit/src/vmath/exp.rs`, `jit/src/vmath/f32x4.rs`): Chebyshev
interpolation in mpmath (200-bit arithmetic), rounded to doubles (or with `f32`, to floats), and the
relative error of the whole approximation measured over the interval in exact arithmetic with the
rounded coefficients.

    /tmp/peers/bin/python scripts/fexp_fit.py tanh 10      # x + x^3 P(x^2), |x| <= 0.5493
    /tmp/peers/bin/python scripts/fexp_fit.py sinh 8       # x + x^3 P(x^2), |x| <= 2
    /tmp/peers/bin/python scripts/fexp_fit.py expm1 9      # x + x^2 (1/2 + x P(x)), |x| <= 0.35
    /tmp/peers/bin/python scripts/fexp_fit.py tanh 4 f32   # the f32 kernels (and `tan`, |x| <= pi/4)
    /tmp/peers/bin/python scripts/fexp_fit.py log1p 8 f32  # f + f^2 Q(f), sqrt(2)/2 - 1 <= f < sqrt(2) - 1

Prints the measured error (as a power of two) and the coefficients, ascending.
"""

import sys

import mpmath as m
import numpy as np

m.mp.prec = 200


ROUND = float


def fit(f, a, b, deg):
    c = m.chebyfit(f, [a, b], deg + 1)
    return [ROUND(x) for x in c][::-1]


def peval(c, x):
    acc = m.mpf(c[-1])
    for k in reversed(c[:-1]):
        acc = acc * x + m.mpf(k)
    return acc


def odd(fn, t, deg):
    c = fit(lambda z: (fn(m.sqrt(z)) - m.sqrt(z)) / m.sqrt(z) ** 3, m.mpf(0), m.mpf(t * t), deg)
    worst = max(
        abs((m.mpf(x) + m.mpf(x) ** 3 * peval(c, m.mpf(x) ** 2)) / fn(m.mpf(x)) - 1)
        for x in np.linspace(1e-4, t, 4000)
    )
    return c, worst


def expm1(t, deg):
    c = fit(lambda x: (m.expm1(x) - x - x * x / 2) / x**3 if x else m.mpf(1) / 6, m.mpf(-t), m.mpf(t), deg)
    worst = 0
    for x in np.linspace(-t, t, 4001):
        if x == 0:
            continue
        x = m.mpf(x)
        worst = max(worst, abs((x + x * x * (m.mpf(0.5) + x * peval(c, x))) / m.expm1(x) - 1))
    return c, worst


# f = m - 1 for the mantissa m in [0x3f3504f3, 0x3fb504f3) as floats (`vmath::f32x4::reduce`)
F_LO, F_HI = -0.29289323091506958, 0.41421353816986084


def log1p(deg):
    a, b = m.mpf(F_LO), m.mpf(F_HI)
    c = fit(lambda f: (m.log1p(f) - f) / f**2 if f else m.mpf(-0.5), a, b, deg)
    worst = 0
    for f in np.linspace(F_LO, F_HI, 4001):
        if f == 0:
            continue
        f = m.mpf(f)
        worst = max(worst, abs((f + f * f * peval(c, f)) / m.log1p(f) - 1))
    return c, worst


def main():
    global ROUND
    name, deg = sys.argv[1], int(sys.argv[2])
    if sys.argv[3:] == ["f32"]:
        ROUND = lambda x: float(np.float32(float(x)))  # noqa: E731
    if name == "tanh":
        c, worst = odd(m.tanh, 0.5493, deg)
    elif name == "sinh":
        c, worst = odd(m.sinh, 2.0, deg)
    elif name == "tan":
        c, worst = odd(m.tan, 0.7854, deg)
    elif name == "log1p":
        c, worst = log1p(deg)
    elif name == "expm1":
        c, worst = expm1(0.35, deg)
    else:
        sys.exit(f"unknown function {name}")
    print(f"{name} degree {deg}: relative error 2^{float(m.log(worst, 2)):.1f}")
    for x in c:
        print(f"    {x!r},")


if __name__ == "__main__":
    main()
