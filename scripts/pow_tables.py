#!/usr/bin/env python3
"""The tables of kiln's table-driven pow and f64 log family (`jit/src/vmath/pow_tables.rs`), generated
here with mpmath by the recipes of ARM's optimized-routines (`math/pow_log_data.c`,
`math/exp_data.c`; Copyright (c) 2017-2018, Arm Limited, MIT OR Apache-2.0 WITH LLVM-exception),
and checked against the properties the algorithm relies on.

    python3 scripts/pow_tables.py > jit/src/vmath/pow_tables.rs    # needs mpmath
    rustfmt --edition 2024 --config-path . jit/src/vmath/pow_tables.rs   # wraps the long rows

f64 log family (`vmath::log`; 16 rows, stored as columns so that a column's 16 rows fill two
AVX-512 registers and one permute looks up 8 lanes): |x| = 2^k·z with z in [OFF, 2·OFF) (OFF =
0x3fe6955500000000 as bits, about 0.7057), subinterval i of z by bits 48..51 of bits(x) - OFF; 1/c from the grids 1/16 .. 1/256 (at most 7 significant bits),
the candidate with the smallest largest |r| over the subinterval among those for which
r = z·(1/c) - 1 is exact at the subinterval's first two and last doubles (the last and the second
have odd significands: z·(1/c) has the most bits there, and |r| is largest at an end, so r is
exact everywhere in it); the one that holds 1 takes c = 1; |r| <= 0.03842. log(c),
log2(c) and log10(c) split as hi + lo, hi a multiple of 2^-43 (e) or 2^-42 (2, 10), so that
k·ln2_hi + hi, k + hi and k·log10(2)_hi + hi (the constants multiples of 2^-43 or 2^-42 too) are
exact for every k of a double, subnormals' included ([-1076, 1024]; checked). The polynomial of
log1p(r) - r = r²·P(r), P of degree 8 with P(0) = -1/2: Chebyshev interpolation of (log1p(r) - r
+ r²/2)/r³ over the table's |r|, its error checked (below 2^-57 of |r|), and P·(1/ln 2), P·(1/ln
10) rounded per coefficient; 1/ln 2 and 1/ln 10 split in hi + lo.

f64 pow (`vmath::pow`) reads the log family's `LN16` for its log (k·ln2_hi + hi exact for every k,
r = z·(1/c) - 1 exact, |r| <= 0.03842) and a 16-row exp table: 2^(i/16) = H·(1 + T) with H the
double nearest 2^(i/16) and T the double nearest the rest, stored as the columns [T] and
[bits(H) - (i << 48)], so that adding k << 48 (k = 16·e + i) gives bits(H·2^e) in one integer
addition. Its polynomials: log1p(r) = r - r²/2 + r³/3 + (r⁴/4)·T(r), T of degree 9 (Chebyshev
interpolation over the table's |r|, its error checked: below 2^-70 of |r|; r - r²/2 + r³/3 are
carried in double-double, -2/3 split as hi + lo); e^r = 1 + r + r²·P(r) on |r| <= ln2/32 (and a little),
P of degree 5 (absolute error below 2^-64); 16/ln2, and -ln2/16 split as hi + lo with hi of 37
significant bits (k·hi exact for |k| < 2^15).

f32 pow reads the log family's `LOG2_16` for its log2 and `EXP16`'s heads for its exp2; its
polynomials are fitted by `scripts/powf_fit.py`.
"""

import math
import struct
from fractions import Fraction as F

import mpmath

mpmath.mp.prec = 256


def bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def dbl(b):
    return struct.unpack("<d", struct.pack("<Q", b & 0xFFFFFFFFFFFFFFFF))[0]


def rnd(x):
    """The double nearest the mpmath value x."""
    return float(mpmath.mpf(x))


K_RANGE = range(-1076, 1025)


def split42(v):
    """v (mpmath) as (hi, lo): hi a multiple of 2^-42, lo the double nearest the rest."""
    hi = float(mpmath.nint(v * 2**42) / 2**42)
    return hi, rnd(v - hi)


def log_constants():
    """log10(2) split (hi a multiple of 2^-42), 1/ln 2 and 1/ln 10 split."""
    l10_hi, l10_lo = split42(mpmath.log10(2))
    s2, s10 = 1 / mpmath.log(2), 1 / mpmath.log(10)
    s2_hi, s10_hi = rnd(s2), rnd(s10)
    return {
        "LOG10_2": (l10_hi, l10_lo),
        "INV_LN2": (s2_hi, rnd(s2 - s2_hi)),
        "INV_LN10": (s10_hi, rnd(s10 - s10_hi)),
    }


LN2_HI = 0.6931471805598903  # `pow::LN2_HI`, a multiple of 2^-43


def family_rows():
    """The log family's 16 rows: 1/c per subinterval, and the largest |r|."""
    n, sh, off = 16, 48, 0x3FE6955500000000
    rows, max_r = [], 0
    for i in range(n):
        a = F(dbl(off + (i << sh)))
        last = F(dbl(off + ((i + 1) << sh) - 1))
        if a <= 1 <= last:
            invc = F(1)
        else:
            best = None
            for g in (16, 32, 64, 128, 256):
                grid = g if last < 1 else 2 * g
                for num in range(int(grid / last) - 2, int(grid / a) + 3):
                    cand = F(num, grid)
                    ends = [z * cand - 1 for z in (a, F(dbl(off + (i << sh) + 1)), last)]
                    if all(F(float(r)) == r for r in ends):
                        worst = max(abs(r) for r in ends)
                        if best is None or worst < best[0]:
                            best = (worst, cand)
            invc = best[1]
        # r = z/c - 1 at the subinterval's ends (where |r| is largest) and next to them (odd
        # significands, the most bits in z·(1/c)): exact in a double
        for z in (a, F(dbl(off + (i << sh) + 1)), last):
            r = z * invc - 1
            assert F(float(r)) == r, (i, z)
            max_r = max(max_r, abs(r))
        rows.append(invc)
    assert max_r < F(39, 1000)
    return rows, max_r


def split_at(v, e):
    """v (mpmath) as (hi, lo): hi a multiple of 2^-e, lo the double nearest the rest."""
    hi = float(mpmath.nint(v * 2**e) / 2**e)
    return hi, rnd(v - hi)


def family_table(rows, log_b, lb_hi, e):
    """The columns [1/c], [hi], [lo] with hi + lo = log_b(c), hi a multiple of 2^-e and k·lb_hi +
    hi exact for every k."""
    cols = ([], [], [])
    for invc in rows:
        c = 1 / invc
        v = log_b(mpmath.mpf(c.numerator) / c.denominator)
        hi, lo = split_at(v, e)
        assert abs(v - hi - lo) < mpmath.mpf(2) ** -97
        for k in (K_RANGE.start, -1, 1, K_RANGE.stop - 1):
            s = k * F(lb_hi) + F(hi)
            assert F(float(s)) == s, (k, hi)
        assert F(hi) * 2**e == int(F(hi) * 2**e)
        for col, x in zip(cols, (float(invc), hi, lo)):
            col.append(x)
    # every k: the sum's bits fit when its magnitude stays below 2^(53-e) and both are multiples of 2^-e
    assert F(lb_hi) * 2**e == int(F(lb_hi) * 2**e) and abs(K_RANGE.start * lb_hi) + 1 < 2 ** (53 - e)
    return cols


def family_poly(max_r):
    """P with log1p(r) - r = r²·P(r) on |r| <= max_r, P(0) = -1/2 exactly."""
    a = mpmath.mpf(max_r.numerator) / max_r.denominator
    g = lambda r: (mpmath.log1p(r) - r + r * r / 2) / r**3 if r else mpmath.mpf(1) / 3  # noqa: E731
    p = [-0.5] + [rnd(c) for c in mpmath.chebyfit(g, [-a, a], 8)[::-1]]
    worst = 0
    for j in range(-2000, 2001):
        r = a * j / 2000
        if r == 0:
            continue
        approx = r * r * sum(mpmath.mpf(c) * r**i for i, c in enumerate(p))
        worst = max(worst, abs((approx - (mpmath.log1p(r) - r)) / r))
    assert worst < mpmath.mpf(2) ** -57, mpmath.log(worst, 2)
    return p


def pow_log_tail(max_r):
    """T with log1p(r) = r - r²/2 + r³/3 + (r⁴/4)·T(r) on |r| <= max_r, degree 9; its error checked."""
    a = mpmath.mpf(max_r.numerator) / max_r.denominator * mpmath.mpf("1.0001")

    def g(r):
        return (mpmath.log1p(r) - r + r * r / 2 - r**3 / 3) / (r**4 / 4) if r else mpmath.mpf(-1)

    t = [rnd(c) for c in mpmath.chebyfit(g, [-a, a], 10)[::-1]]
    worst = 0
    for j in range(-2000, 2001):
        r = a * j / 2000
        if r == 0:
            continue
        approx = r**4 / 4 * sum(mpmath.mpf(c) * r**i for i, c in enumerate(t))
        worst = max(worst, abs((approx - (mpmath.log1p(r) - r + r * r / 2 - r**3 / 3)) / r))
    assert worst < mpmath.mpf(2) ** -70, mpmath.log(worst, 2)
    return t


POW_EXP_R = mpmath.log(2) / 32 * mpmath.mpf("1.001")


def pow_exp_p():
    """P with e^r = 1 + r + r²·P(r) on |r| <= ln2/32 (and a little), degree 5; its error checked."""
    b = POW_EXP_R

    def g(r):
        return (mpmath.exp(r) - 1 - r) / r**2 if r else mpmath.mpf(1) / 2

    p = [rnd(c) for c in mpmath.chebyfit(g, [-b, b], 6)[::-1]]
    worst = 0
    for j in range(-2000, 2001):
        r = b * j / 2000
        approx = r * r * sum(mpmath.mpf(c) * r**i for i, c in enumerate(p))
        worst = max(worst, abs(approx - (mpmath.exp(r) - 1 - r)))
    assert worst < mpmath.mpf(2) ** -64, mpmath.log(worst, 2)
    return p


def pow_exp_constants():
    """16/ln2, and -ln2/16 as hi + lo, hi with 37 significant bits (k·hi exact for |k| < 2^15)."""
    v = mpmath.log(2) / 16
    e = int(mpmath.floor(mpmath.log(v, 2)))
    hi = float(mpmath.nint(v * 2 ** (36 - e)) / 2 ** (36 - e))
    assert F(hi) * 2 ** (36 - e) == int(F(hi) * 2 ** (36 - e))
    return rnd(16 / mpmath.log(2)), -hi, -rnd(v - hi)


def pow_exp16():
    """The columns [T], [bits(H) - (i << 48)] with 2^(i/16) = H·(1 + T)."""
    tails, heads = [], []
    for i in range(16):
        t = mpmath.mpf(2) ** (mpmath.mpf(i) / 16)
        h = rnd(t)
        tails.append(rnd((t - h) / h))
        heads.append(dbl(bits(h) - (i << 48)))
    return tails, heads


def fmt(x):
    if x != x:
        raise ValueError("NaN")
    # the shortest decimal that reads back as x; a table value whose bits are not a useful number
    # (the exp tables' shifted heads) is written by its bits
    s = repr(x)
    if "e" in s or len(s) > 24 or abs(x) < 1e-3 and x != 0:
        return f"f64::from_bits({bits(x):#018x})"
    return s if "." in s else s + ".0"


def main():
    print("""//! The tables and polynomials of pow (`pow.rs`) and the f64 log family (`log.rs`), generated by `scripts/pow_tables.py`
//! (mpmath) by the recipes of ARM's optimized-routines (`math/pow_log_data.c`, `math/exp_data.c`;
//! Copyright (c) 2017-2018, Arm Limited, MIT OR Apache-2.0 WITH LLVM-exception): see the script
//! for each one's definition and the properties it checks. Regenerate with
//! `python3 scripts/pow_tables.py > jit/src/vmath/pow_tables.rs` (mpmath).
//! Both routes read these same statics (the inline code by per-lane loads from their addresses,
//! the wide routines by permutes at AVX-512 and by indexing at AVX2), so the values agree by
//! construction.
""")
    k = log_constants()
    rows, max_r = family_rows()
    for name, doc, cols in (
        ("LN16", "`[1/c]`, `[hi]`, `[lo]` with `log c = hi + lo`", family_table(rows, mpmath.log, LN2_HI, 43)),
        ("LOG2_16", "`[1/c]`, `[hi]`, `[lo]` with `log2 c = hi + lo`", family_table(rows, lambda c: mpmath.log(c, 2), 1.0, 42)),
        ("LOG10_16", "`[1/c]`, `[hi]`, `[lo]` with `log10 c = hi + lo`",
         family_table(rows, mpmath.log10, k["LOG10_2"][0], 42)),
    ):
        print(f"/// f64 log family: {doc}, for subinterval `i` of `z` (16 rows, as columns).")
        print(f"pub(crate) static {name}: [[f64; 16]; 3] = [")
        for col in cols:
            print("    [" + ", ".join(fmt(x) for x in col) + "],")
        print("];")
        print()
    for name, doc in (
        ("LOG10_2", "`log10(2)` as `hi + lo`, `hi` a multiple of 2^-42."),
        ("INV_LN2", "`1/ln 2` as `hi + lo`."),
        ("INV_LN10", "`1/ln 10` as `hi + lo`."),
    ):
        print(f"/// {doc}")
        print(f"pub(crate) const {name}: [f64; 2] = [{', '.join(fmt(x) for x in k[name])}];")
    p = family_poly(max_r)
    inv2, inv10 = 1 / mpmath.log(2), 1 / mpmath.log(10)
    for name, doc, poly in (
        ("P", f"`log1p(r) - r ≈ r²·P(r)` (ascending; error below 2^-57 of |r| on |r| <= {math.ceil(max_r * 10**5) / 10**5:.5f}).", p),
        ("P2", "`P/ln 2`, each coefficient rounded.", [rnd(mpmath.mpf(c) * inv2) for c in p]),
        ("P10", "`P/ln 10`, each coefficient rounded.", [rnd(mpmath.mpf(c) * inv10) for c in p]),
    ):
        print(f"/// {doc}")
        print(f"pub(crate) const LOG_{name}: [f64; 9] = [{', '.join(fmt(x) for x in poly)}];")
    print()
    print("/// f64 pow's log: `log1p(r) = r - r²/2 + r³/3 + (r⁴/4)·T(r)`, `T` ascending (error below 2^-70 of")
    print("/// |r| on the rows of `LN16`).")
    print(f"pub(crate) const POW_LOG_T: [f64; 10] = [{', '.join(fmt(x) for x in pow_log_tail(max_r))}];")
    th = rnd(mpmath.mpf(-2) / 3)
    print("/// `-2/3` as `hi + lo`: `r³/3 = (-2/3)·r·(-r²/2)`.")
    print(f"pub(crate) const NEG_TWO_THIRDS: [f64; 2] = [{fmt(th)}, {fmt(rnd(mpmath.mpf(-2) / 3 - th))}];")
    print("/// f64 pow's exp: `e^r = 1 + r + r²·P(r)`, `P` ascending (absolute error below 2^-64 on")
    print("/// |r| <= ln2/32).")
    print(f"pub(crate) const POW_EXP_P: [f64; 6] = [{', '.join(fmt(x) for x in pow_exp_p())}];")
    inv, nhi, nlo = pow_exp_constants()
    print("/// f64 pow's exp: `16/ln2`, and `-ln2/16` as `hi + lo` (`hi` of 37 significant bits).")
    print(f"pub(crate) const POW_INV_LN2_N: f64 = {fmt(inv)};")
    print(f"pub(crate) const POW_NEG_LN2_N: [f64; 2] = [{fmt(nhi)}, {fmt(nlo)}];")
    tails, heads = pow_exp16()
    print("/// f64 pow's exp: `[T]`, `[H']` with `2^(i/16) = H·(1 + T)` and `bits(H') = bits(H) - (i << 48)`")
    print("/// (16 rows, as columns).")
    print("pub(crate) static EXP16: [[f64; 16]; 2] = [")
    for col in (tails, heads):
        print("    [" + ", ".join(fmt(x) for x in col) + "],")
    print("];")


if __name__ == "__main__":
    main()
