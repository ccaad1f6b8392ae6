#!/usr/bin/env python3
"""The polynomials of kiln's f32 pow (`jit/src/vmath/pow.rs`, `pow_f32`), computed in f64 around two
16-row tables (`jit/src/vmath/pow_tables.rs`, from `scripts/pow_tables.py`):

- `log2(1 + r) = r·Q(r)` for |r| <= 0.03842, the largest `r = z·(1/c) - 1` of the f64 log
  family's table `LOG2_16` (whose rows this log2 shares): `Q` of degree `dq`;
- `2^(u/16) = 1 + u·E(u)` for |u| <= 1/2 (`u = 16·t - nearest(16·t)`, `EXP16`'s heads holding
  `2^(i/16)`): `E` of degree `de - 1`, the scaling by 1/16 folded into its coefficients.

Chebyshev interpolation in mpmath (200-bit arithmetic), coefficients rounded to doubles, and the
relative error of each whole approximation measured in exact arithmetic with the rounded
coefficients. Prints the errors (as powers of two) and the coefficients, ascending.

    python3 scripts/powf_fit.py 5 4
"""

import sys

import mpmath as m

m.mp.prec = 200

MAX_R = m.mpf("0.03842")


def fit(f, a, b, deg):
    c = m.chebyfit(f, [a, b], deg + 1)
    return [float(x) for x in c][::-1]


def peval(c, x):
    acc = m.mpf(c[-1])
    for k in reversed(c[:-1]):
        acc = acc * x + m.mpf(k)
    return acc


def main():
    dq = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    de = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    ln2 = m.log(2)
    n = 4000

    def qf(r):
        return m.log1p(r) / (r * ln2) if r else 1 / ln2

    a = MAX_R * m.mpf("1.0001")
    q = fit(qf, -a, a, dq)
    worst_q = max(
        abs(r * peval(q, r) / (m.log1p(r) / ln2) - 1) for r in (a * i / n for i in range(-n, n + 1) if i)
    )

    def ef(u):
        return (m.power(2, u / 16) - 1) / u if u else ln2 / 16

    b = m.mpf("0.5") * m.mpf("1.0001")
    e = fit(ef, -b, b, de - 1)
    worst_e = max(abs((1 + u * peval(e, u)) / m.power(2, u / 16) - 1) for u in (b * i / n for i in range(-n, n + 1)))
    print(f"log2: r Q(r), Q of degree {dq}, relative error 2^{float(m.log(worst_q, 2)):.2f}")
    print("Q =", [repr(c) for c in q])
    print(f"exp2: 1 + u E(u), E of degree {de - 1}, relative error 2^{float(m.log(worst_e, 2)):.2f}")
    print("E =", [repr(c) for c in e])


if __name__ == "__main__":
    main()
