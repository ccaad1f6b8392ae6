#!/usr/bin/env python3
"""Correctly rounded reference values for kiln's accuracy tests, computed with mpmath.

For each function this writes `tests/data/ulp/<name>.csv` in NumPy's umath-validation format
(`dtype,input,output,ulperrortol`, bits in hex), or for a function of two arguments
`dtype,input0,input1,output,ulperrortol`: float32 and float64 rows over a deterministic sweep of the
function's domain (uniform over its working ranges, log-uniform magnitudes over the whole exponent
range, values near its edges), each output the exact value rounded once to the type (round to nearest
even, subnormals and overflow included). Arguments whose result is NaN are left out: special values are
tested against libm elsewhere. The ulperrortol column is the bound kiln documents for the function and
type (`--tol32`, `--tol64`), which the Rust tests read.

    /tmp/peers/bin/python scripts/mpmath_reference.py tanh --tol64 2 --tol32 2
    /tmp/peers/bin/python scripts/mpmath_reference.py --list

Needs numpy and mpmath. The same command regenerates the same file (fixed seeds).
"""

import argparse
import os
import struct
import sys

import mpmath
import numpy as np

mp = mpmath.mp
mp.prec = 256

F64_MAX = float.fromhex("0x1.fffffffffffffp+1023")
F32_MAX = float.fromhex("0x1.fffffep+127")


def wide(rng, n, lo_exp, hi_exp, signed=True):
    """`n` magnitudes 2**e with e uniform in [lo_exp, hi_exp), random signs if `signed`."""
    m = np.exp2(rng.uniform(lo_exp, hi_exp, n))
    if signed:
        m *= rng.choice([-1.0, 1.0], n)
    return m


# name -> (mpmath function, arity, sweep(rng, n, dtype) -> list of argument arrays)
def _u(lo, hi):
    return lambda rng, n: rng.uniform(lo, hi, n)


def sweep_unary(parts):
    def f(rng, n, dtype):
        emax = 127 if dtype == np.float32 else 1023
        emin = -149 if dtype == np.float32 else -1074
        out = []
        for p in parts:
            if p == "wide":
                out.append(wide(rng, n, emin, emax))
            elif p == "wide+":
                out.append(wide(rng, n, emin, emax, signed=False))
            else:
                out.append(p(rng, n))
        return [np.concatenate(out)]

    return f


def sweep_binary(x_parts, y_parts):
    def f(rng, n, dtype):
        (x,) = sweep_unary(x_parts)(rng, n, dtype)
        (y,) = sweep_unary(y_parts)(rng, n, dtype)
        k = min(len(x), len(y))
        return [x[:k], y[:k]]

    return f


FUNCTIONS = {
    "sinh": (mpmath.sinh, 1, sweep_unary([_u(-1, 1), _u(-30, 30), _u(-720, 720), "wide"])),
    "cosh": (mpmath.cosh, 1, sweep_unary([_u(-1, 1), _u(-30, 30), _u(-720, 720), "wide"])),
    "tanh": (mpmath.tanh, 1, sweep_unary([_u(-1, 1), _u(-20, 20), "wide"])),
    "exp2": (lambda x: mpmath.power(2, x), 1, sweep_unary([_u(-1, 1), _u(-150, 130), _u(-1080, 1030)])),
    "expm1": (mpmath.expm1, 1, sweep_unary([_u(-1, 1), _u(-40, 90), _u(-750, 720), "wide"])),
    "log2": (lambda x: mpmath.log(x, 2), 1, sweep_unary([_u(0, 2), _u(0.5, 1.5), "wide+"])),
    "log10": (mpmath.log10, 1, sweep_unary([_u(0, 2), _u(0.5, 1.5), "wide+"])),
    "log1p": (mpmath.log1p, 1, sweep_unary([_u(-1, 1), _u(-1, 10), "wide+"])),
    "arcsinh": (mpmath.asinh, 1, sweep_unary([_u(-1, 1), _u(-100, 100), "wide"])),
    "arccosh": (mpmath.acosh, 1, sweep_unary([_u(1, 2), _u(1, 100), "wide+"])),
    "arctanh": (mpmath.atanh, 1, sweep_unary([_u(-1, 1), _u(-0.5, 0.5), _u(0.99, 1)])),
    "arcsin": (mpmath.asin, 1, sweep_unary([_u(-1, 1), _u(-0.5, 0.5), _u(0.99, 1)])),
    "arccos": (mpmath.acos, 1, sweep_unary([_u(-1, 1), _u(-0.5, 0.5), _u(0.99, 1), _u(-1, -0.99)])),
    "arctan": (mpmath.atan, 1, sweep_unary([_u(-1, 1), _u(-100, 100), "wide"])),
    "cbrt": (mpmath.cbrt, 1, sweep_unary([_u(-10, 10), "wide"])),
    # NumPy's arctan2(x0, x1) is atan2(y=x0, x=x1)
    "arctan2": (mpmath.atan2, 2, sweep_binary([_u(-10, 10), "wide"], [_u(-10, 10), "wide"])),
    "hypot": (mpmath.hypot, 2, sweep_binary([_u(-10, 10), "wide"], [_u(-10, 10), "wide"])),
    "power": (
        mpmath.power,
        2,
        sweep_binary([_u(0, 4), _u(0, 100), "wide+"], [_u(-4, 4), _u(-40, 40), _u(-1, 1)]),
    ),
}


def round_to(v, dtype):
    """The mpf `v` rounded once to `dtype` (nearest even), as a Python float or None for NaN."""
    if mpmath.isnan(v):
        return None
    if mpmath.isinf(v):
        return float(v)
    if dtype == np.float64:
        mant, emin, fmax = 53, -1074, F64_MAX
    else:
        mant, emin, fmax = 24, -149, F32_MAX
    if v == 0:
        return float(v)
    if abs(v) >= 2 * mpmath.mpf(fmax):
        # far beyond the largest finite value (sinh of 1e300): inf, without an integer of 10^300 digits
        return float("inf") if v > 0 else float("-inf")
    e = int(mpmath.floor(mpmath.log(abs(v), 2)))
    # the quantum at v's binade, never below the smallest subnormal's
    q = max(e - mant + 1, emin)
    scaled = v * mpmath.power(2, -q)
    n = int(mpmath.nint(scaled))  # nint rounds half to even
    r = mpmath.mpf(n) * mpmath.power(2, q)
    if abs(r) > fmax:
        return float("inf") if r > 0 else float("-inf")
    return float(r)  # exact: r has at most `mant` significant bits


def hexbits(x, dtype):
    if dtype == np.float64:
        return "0x%016x" % struct.unpack("<Q", struct.pack("<d", x))[0]
    return "0x%08x" % struct.unpack("<I", struct.pack("<f", x))[0]


def rows(name, dtype, n, tol):
    f, arity, sweep = FUNCTIONS[name]
    rng = np.random.default_rng(_seed(name, dtype))
    args = [np.asarray(a, dtype=dtype) for a in sweep(rng, n, dtype)]
    tag = "np.float32" if dtype == np.float32 else "np.float64"
    out = []
    for vals in zip(*args):
        mv = [mpmath.mpf(float(v)) for v in vals]
        try:
            r = f(*mv)
        except (ValueError, ZeroDivisionError):
            continue
        if isinstance(r, mpmath.mpc):
            continue
        y = round_to(r, dtype)
        if y is None:
            continue
        out.append(",".join([tag, *(hexbits(float(v), dtype) for v in vals), hexbits(y, dtype), str(tol)]))
    return out


def _seed(name, dtype):
    # a stable seed (Python's hash of a str is salted per process)
    s = 0
    for ch in f"{name}/{np.dtype(dtype).name}":
        s = (s * 131 + ord(ch)) % 2**32
    return s


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("name", nargs="?", choices=sorted(FUNCTIONS))
    p.add_argument("--tol64", type=int, required=False, default=1)
    p.add_argument("--tol32", type=int, required=False, default=1)
    p.add_argument("--n", type=int, default=500, help="points per part of the sweep, per type")
    p.add_argument("--out", default=os.path.join(os.path.dirname(__file__), "..", "tests", "data", "ulp"))
    p.add_argument("--list", action="store_true")
    a = p.parse_args()
    if a.list or not a.name:
        print("\n".join(sorted(FUNCTIONS)))
        return
    arity = FUNCTIONS[a.name][1]
    head = "dtype,input,output,ulperrortol" if arity == 1 else "dtype,input0,input1,output,ulperrortol"
    lines = [head]
    lines += rows(a.name, np.float32, a.n, a.tol32)
    lines += rows(a.name, np.float64, a.n, a.tol64)
    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.out, f"{a.name}.csv")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")
    print(f"{path}: {len(lines) - 1} rows", file=sys.stderr)


if __name__ == "__main__":
    main()
