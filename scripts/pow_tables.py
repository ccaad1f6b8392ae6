#!/usr/bin/env python3
"""The tables of kiln's table-driven pow (`jit/src/vmath/pow_tables.rs`), generated here with mpmath
by the recipes of ARM's optimized-routines (`math/pow_log_data.c`, `math/exp_data.c`,
`math/powf_log2_data.c`, `math/exp2f_data.c`; Copyright (c) 2017-2018, Arm Limited, MIT OR
Apache-2.0 WITH LLVM-exception), and checked against the properties the algorithm relies on.

    python3 scripts/pow_tables.py > jit/src/vmath/pow_tables.rs    # needs mpmath

f64 log (128 entries): |x| = 2^k·z with z in [OFF, 2·OFF) (OFF = 0x3fe6955500000000 as bits, about
0.7057), subinterval i of z (bits 45..51 of bits(x) - OFF); c near the subinterval's centre with 1/c
of 8 or 9 significant bits, so that r = z·(1/c) - 1 is exact (one `fma`); logc = log(c) rounded to a
multiple of 2^-43 (so k·ln2_hi + logc is exact), logctail = log(c) - logc rounded; the subinterval
that holds 1 takes c = 1 (no cancellation near x = 1).

f64 exp (128 entries): 2^(i/128) = H·(1 + T) with H the double nearest 2^(i/128) and T the double
nearest the rest; stored as T and bits(H) - (i << 45), so that adding k << 45 (k = 128·e + i) gives
bits(H·2^e) in one integer addition.

f32 log2 (16 entries, in double): the same scheme on f32 bits (OFF = 0x3f330000, bits 19..22), ARM's
own 1/c (53 bits: r is rounded once, harmless at f32's precision; its polynomial is fitted to these
c) copied, and log2 c checked here. f32 exp2 (32 entries): bits(2^(i/32)) - (i << 47).
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


def exp_table():
    rows = []
    for i in range(128):
        t = mpmath.mpf(2) ** (mpmath.mpf(i) / 128)
        h = rnd(t)
        tail = rnd((t - h) / h)
        rows.append((tail, dbl(bits(h) - (i << 45))))
    return rows


# ARM's f32 log2 table (`math/powf_log2_data.c`): (1/c, log2 c), its own choice of c per subinterval
ARM_LOG2F = [
    ("0x1.661ec79f8f3bep+0", "-0x1.efec65b963019p-2"),
    ("0x1.571ed4aaf883dp+0", "-0x1.b0b6832d4fca4p-2"),
    ("0x1.49539f0f010bp+0", "-0x1.7418b0a1fb77bp-2"),
    ("0x1.3c995b0b80385p+0", "-0x1.39de91a6dcf7bp-2"),
    ("0x1.30d190c8864a5p+0", "-0x1.01d9bf3f2b631p-2"),
    ("0x1.25e227b0b8eap+0", "-0x1.97c1d1b3b7afp-3"),
    ("0x1.1bb4a4a1a343fp+0", "-0x1.2f9e393af3c9fp-3"),
    ("0x1.12358f08ae5bap+0", "-0x1.960cbbf788d5cp-4"),
    ("0x1.0953f419900a7p+0", "-0x1.a6f9db6475fcep-5"),
    ("0x1p+0", "0x0p+0"),
    ("0x1.e608cfd9a47acp-1", "0x1.338ca9f24f53dp-4"),
    ("0x1.ca4b31f026aap-1", "0x1.476a9543891bap-3"),
    ("0x1.b2036576afce6p-1", "0x1.e840b4ac4e4d2p-3"),
    ("0x1.9c2d163a1aa2dp-1", "0x1.40645f0c6651cp-2"),
    ("0x1.886e6037841edp-1", "0x1.88e9c2c1b9ff8p-2"),
    ("0x1.767dcf5534862p-1", "0x1.ce0a44eb17bccp-2"),
]


def log2f_table():
    """ARM's table, checked: 1/c within the subinterval's inverse range, log2 c = -log2(1/c)
    correctly rounded."""
    n, off = 16, 0x3F330000
    rows = []
    for i, (h_invc, h_logc) in enumerate(ARM_LOG2F):
        invc, logc = float.fromhex(h_invc), float.fromhex(h_logc)
        a = struct.unpack("<f", struct.pack("<I", off + (i << 19)))[0]
        b = struct.unpack("<f", struct.pack("<I", off + ((i + 1) << 19)))[0]
        assert a <= 1 / invc <= b, i
        assert logc == rnd(-mpmath.log(mpmath.mpf(invc), 2)), i
        rows.append((invc, logc))
    return rows


def exp2f_table():
    return [
        dbl(bits(rnd(mpmath.mpf(2) ** (mpmath.mpf(i) / 32))) - (i << 47)) for i in range(32)
    ]


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
    print("""//! The tables of the table-driven pow (`pow.rs`), generated by `scripts/pow_tables.py` (mpmath)
//! by the recipes of ARM's optimized-routines (`math/pow_log_data.c`, `math/exp_data.c`,
//! `math/powf_log2_data.c`, `math/exp2f_data.c`; Copyright (c) 2017-2018, Arm Limited, MIT OR
//! Apache-2.0 WITH LLVM-exception): see the script for each one's definition and the properties it
//! checks. Regenerate with `python3 scripts/pow_tables.py > jit/src/vmath/pow_tables.rs` (mpmath).
//! Both routes read these same statics (the inline code by per-lane loads from their addresses,
//! the wide routines by indexing), so the values agree by construction.
""")
    print(rust_array(
        "LOG",
        "/// f64 log: `[1/c, logc, logctail]` for subinterval `i` of `z` (`log c = logc + logctail`).",
        log_table(), 3))
    print()
    print(rust_array(
        "EXP",
        "/// f64 exp: `[T, H']` with `2^(i/128) = H·(1 + T)` and `bits(H') = bits(H) - (i << 45)`.",
        exp_table(), 2))
    print()
    print(rust_array(
        "LOG2F",
        "/// f32 log2 (in f64): `[1/c, log2 c]` for subinterval `i` of `z`.",
        log2f_table(), 2))
    print()
    print(rust_array(
        "EXP2F",
        "/// f32 exp2 (in f64): `[H']` with `bits(H') = bits(2^(i/32)) - (i << 47)`.",
        [[x] for x in exp2f_table()], 1))


if __name__ == "__main__":
    main()
