#!/usr/bin/env python3
"""The polynomials of kiln's table-free f32 pow (`jit/src/vmath/pow.rs`, `pow_f32`), computed in f64:

- `log2 z = s·Q(s²)`, `s = (z - 1)/(z + 1)`, for `z` in [OFF, 2·OFF) (OFF just below sqrt(1/2),
  so |s| <= 0.17158): `Q` of degree `dq` in `w = s²`;
- `2^r = 1 + r·R(r)` for |r| <= 1/2: `R` of degree `de`.

Chebyshev interpolation in mpmath (200-bit arithmetic), coefficients rounded to doubles, and the
relative error of each whole approximation measured in exact arithmetic with the rounded
coefficients. Prints the errors (as powers of two) and the coefficients, ascending.

    python3 scripts/powf_fit.py 4 7
"""

import sys

import mpmath as m

m.mp.prec = 200

OFF = float.fromhex("0x1.6a09ep-1")


def fit(f, a, b, deg):
    c = m.chebyfit(f, [a, b], deg + 1)
    return [float(x) for x in c][::-1]


def peval(c, x):
    acc = m.mpf(c[-1])
    for k in reversed(c[:-1]):
        acc = acc * x + m.mpf(k)
    return acc


def main():
    dq = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    de = int(sys.argv[2]) if len(sys.argv) > 2 else 7
    lo = m.mpf(OFF)
    smax = max((1 - lo) / (1 + lo), (2 * lo - 1) / (2 * lo + 1)) * m.mpf("1.0001")
    ln2 = m.log(2)

    def qf(w):
        if w == 0:
            return 2 / ln2
        s = m.sqrt(w)
        return 2 * m.atanh(s) / (s * ln2)

    q = fit(qf, m.mpf(0), smax * smax, dq)
    worst_q = 0
    n = 4000
    for i in range(1, n + 1):
        s = smax * i / n
        for sg in (1, -1):
            ss = sg * s
            z = (1 + ss) / (1 - ss)
            worst_q = max(worst_q, abs(ss * peval(q, ss * ss) / (m.log(z) / ln2) - 1))

    def ef(r):
        if r == 0:
            return ln2
        return (m.power(2, r) - 1) / r

    e = fit(ef, m.mpf(-0.5), m.mpf(0.5), de - 1)
    worst_e = 0
    for i in range(-n, n + 1):
        r = m.mpf(i) / (2 * n)
        worst_e = max(worst_e, abs((1 + r * peval(e, r)) / m.power(2, r) - 1))
    print(f"log2: degree {dq} in s^2, relative error 2^{float(m.log(worst_q, 2)):.2f}")
    print("Q =", [repr(c) for c in q])
    print(f"exp2: 1 + r R(r), R of degree {de - 1}, relative error 2^{float(m.log(worst_e, 2)):.2f}")
    print("E =", [repr(c) for c in [1.0] + e])


if __name__ == "__main__":
    main()
