#!/usr/bin/env python3
"""The tables of kiln's table-driven pow and f64 log family (`jit/src/vmath/pow_tables.rs`), generated
here with mpmath by the recipes of ARM's optimized-routines (`math/pow_log_data.c`,
`math/exp_data.c`; Copyright (c) 2017-2018, Arm Limited, MIT OR Apache-2.0 WITH LLVM-exception),
and checked against the properties the algorithm relies on.

    python3 scripts/pow_tables.py > jit/src/vmath/pow_tables.rs    # needs mpmath

f64 log (128 entries): |x| = 2^k·z with z in [OFF, 2·OFF) (OFF = 0x3fe6955500000000 as bits, about
0.7057), subinterval i of z (bits 45..51 of bits(x) - OFF); c near the subinterval's centre with 1/c
of 8 or 9 significant bits, so that r = z·(1/c) - 1 is exact (one `fma`); logc = log(c) rounded to a
multiple of 2^-43 (so k·ln2_hi + logc is exact), logctail = log(c) - logc rounded; the subinterval
that holds 1 takes c = 1 (no cancellation near x = 1).

f64 log2 and log10 (`vmath::log`): the same subintervals and 1/c, with log2(c) and log10(c) split
as hi + lo, hi a multiple of 2^-42, so that k + hi (log2) and k·log10(2)_hi + hi (log10, the
constant a multiple of 2^-42 too) are exact for every k of a double, subnormals' included
([-1076, 1024]; checked). With them the polynomial of log1p(r) - r, ARM's pow coefficients
multiplied out (`log1p(r) - r = r²·P(r)`, P of degree 6: the products by powers of two are exact),
and P·(1/ln 2), P·(1/ln 10) rounded per coefficient; 1/ln 2 and 1/ln 10 split in hi + lo.

f64 exp (128 entries): 2^(i/128) = H·(1 + T) with H the double nearest 2^(i/128) and T the double
nearest the rest; stored as T and bits(H) - (i << 45), so that adding k << 45 (k = 128·e + i) gives
bits(H·2^e) in one integer addition.

f32 pow has no table (`scripts/powf_fit.py`).
"""

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


def log_table():
    n, off = 128, 0x3FE6955500000000
    rows = []
    max_r = 0
    for i in range(n):
        a = F(dbl(off + (i << 45)))
        b = F(dbl(off + ((i + 1) << 45)))
        centre = (a + b) / 2
        if a <= 1 < b:
            invc = F(1)
        elif centre < 1:
            invc = F(round(n / centre), n)
        else:
            invc = F(round(2 * n / centre), 2 * n)
        c = 1 / invc
        lc = mpmath.log(mpmath.mpf(c.numerator) / c.denominator)
        logc = float(mpmath.nint(lc * 2**43) / 2**43)
        logctail = rnd(lc - logc)
        assert abs(lc - logc - logctail) < mpmath.mpf(2) ** -97
        # r = z/c - 1 at the subinterval's ends: exact in a double
        for z in (a, F(dbl(off + ((i + 1) << 45) - 1))):
            r = z * invc - 1
            max_r = max(max_r, abs(r))
            assert F(float(r)) == r, (i, z)
        rows.append((float(invc), logc, logctail))
    # |r| < 1/128 (ARM's bound; its polynomial's error, fitted on |r| <= 0x1.6bp-8, grows as r^8
    # up to the largest |r| here, 0x1.78p-8)
    assert max_r < F(1, n)
    return rows


K_RANGE = range(-1076, 1025)


def split42(v):
    """v (mpmath) as (hi, lo): hi a multiple of 2^-42, lo the double nearest the rest."""
    hi = float(mpmath.nint(v * 2**42) / 2**42)
    return hi, rnd(v - hi)


def base_table(rows, log_b, lb_hi):
    """[1/c, hi, lo] with hi + lo = log_b(c), hi a multiple of 2^-42, k·lb_hi + hi exact for every k."""
    out = []
    for invc, _, _ in rows:
        c = 1 / F(invc)
        hi, lo = split42(log_b(mpmath.mpf(c.numerator) / c.denominator))
        assert abs(log_b(mpmath.mpf(c.numerator) / c.denominator) - hi - lo) < mpmath.mpf(2) ** -97
        out.append((invc, hi, lo))
    for _, hi, _ in out:
        for k in (K_RANGE.start, -1, 1, K_RANGE.stop - 1):
            v = k * F(lb_hi) + F(hi)
            assert F(float(v)) == v, (k, hi)
    # every k: the sum's bits fit when its magnitude stays below 2^11 and both are multiples of 2^-42
    assert all(F(hi) * 2**42 == int(F(hi) * 2**42) for _, hi, _ in out)
    assert F(lb_hi) * 2**42 == int(F(lb_hi) * 2**42) and abs(K_RANGE.start * lb_hi) + 1 < 2**11
    return out


def log_constants():
    """log2(2), log10(2) split (hi a multiple of 2^-42), 1/ln 2 and 1/ln 10 split, and the
    polynomials P, P/ln 2, P/ln 10 of log1p(r) - r = r²·P(r) from ARM's pow coefficients."""
    # ARM's `math/pow_log_data.c` poly (pow.rs `A`)
    a = [float.fromhex(h) for h in ("-0x1.555555555556p-1", "0x1.0000000000006p-1", "0x1.999999959554ep-1",
                                     "-0x1.555555529a47ap-1", "-0x1.2495b9b4845e9p0", "0x1.0002b8b263fc3p+0")]
    # log1p(r) - r = ar2 + ar3·(a0 + r·a1 + ar2·(a2 + r·a3 + ar2·(a4 + r·a5))), ar2 = -r²/2, ar3 = -r³/2
    p = [-0.5, -a[0] / 2, -a[1] / 2, a[2] / 4, a[3] / 4, -a[4] / 8, -a[5] / 8]
    ln2, ln10 = mpmath.log(2), mpmath.log(10)
    l10_hi, l10_lo = split42(mpmath.log10(2))
    s2, s10 = 1 / ln2, 1 / ln10
    s2_hi, s10_hi = rnd(s2), rnd(s10)
    return {
        "LOG10_2": (l10_hi, l10_lo),
        "INV_LN2": (s2_hi, rnd(s2 - s2_hi)),
        "INV_LN10": (s10_hi, rnd(s10 - s10_hi)),
        "P": p,
        "P2": [rnd(mpmath.mpf(c) * s2) for c in p],
        "P10": [rnd(mpmath.mpf(c) * s10) for c in p],
    }


def exp_table():
    rows = []
    for i in range(128):
        t = mpmath.mpf(2) ** (mpmath.mpf(i) / 128)
        h = rnd(t)
        tail = rnd((t - h) / h)
        rows.append((tail, dbl(bits(h) - (i << 45))))
    return rows


def rust_array(name, doc, rows, width):
    out = [doc, f"pub(crate) static {name}: [[f64; {width}]; {len(rows)}] = ["]
    for r in rows:
        out.append("    [" + ", ".join(fmt(x) for x in r) + "],")
    out.append("];")
    return "\n".join(out)


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
    print("""//! The tables of the table-driven f64 pow (`pow.rs`) and f64 log family (`log.rs`), generated by `scripts/pow_tables.py`
//! (mpmath) by the recipes of ARM's optimized-routines (`math/pow_log_data.c`, `math/exp_data.c`;
//! Copyright (c) 2017-2018, Arm Limited, MIT OR Apache-2.0 WITH LLVM-exception): see the script
//! for each one's definition and the properties it checks. Regenerate with
//! `python3 scripts/pow_tables.py > jit/src/vmath/pow_tables.rs` (mpmath).
//! Both routes read these same statics (the inline code by per-lane loads from their addresses,
//! the wide routines by indexing), so the values agree by construction.
""")
    log_rows = log_table()
    print(rust_array(
        "LOG",
        "/// f64 log: `[1/c, logc, logctail]` for subinterval `i` of `z` (`log c = logc + logctail`).",
        log_rows, 3))
    print()
    print(rust_array(
        "LOG2",
        "/// f64 log2: `[1/c, hi, lo]` for subinterval `i` of `z` (`LOG`'s `1/c`; `log2 c = hi + lo`, `hi`\n"
        "/// a multiple of 2^-42).",
        base_table(log_rows, lambda c: mpmath.log(c, 2), 1.0), 3))
    print()
    k = log_constants()
    print(rust_array(
        "LOG10",
        "/// f64 log10: `[1/c, hi, lo]` for subinterval `i` of `z` (`LOG`'s `1/c`; `log10 c = hi + lo`,\n"
        "/// `hi` a multiple of 2^-42).",
        base_table(log_rows, mpmath.log10, k["LOG10_2"][0]), 3))
    print()
    for name, doc in (
        ("LOG10_2", "`log10(2)` as `hi + lo`, `hi` a multiple of 2^-42."),
        ("INV_LN2", "`1/ln 2` as `hi + lo`."),
        ("INV_LN10", "`1/ln 10` as `hi + lo`."),
    ):
        print(f"/// {doc}")
        print(f"pub(crate) const {name}: [f64; 2] = [{', '.join(fmt(x) for x in k[name])}];")
    for name, doc in (
        ("P", "`log1p(r) - r ≈ r²·P(r)` (ascending, ARM's pow coefficients multiplied out: relative\n/// error near 2^-70 on |r| <= 0x1.6bp-8)."),
        ("P2", "`P/ln 2`, each coefficient rounded."),
        ("P10", "`P/ln 10`, each coefficient rounded."),
    ):
        print(f"/// {doc}")
        print(f"pub(crate) const LOG_{name}: [f64; 7] = [{', '.join(fmt(x) for x in k[name])}];")
    print()
    print(rust_array(
        "EXP",
        "/// f64 exp: `[T, H']` with `2^(i/128) = H·(1 + T)` and `bits(H') = bits(H) - (i << 45)`.",
        exp_table(), 2))


if __name__ == "__main__":
    main()
