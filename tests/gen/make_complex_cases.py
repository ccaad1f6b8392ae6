#!/usr/bin/env python3
"""Generates tests/data/complex_cases.csv: NumPy 2's values of kiln's complex functions and operators
(issue 25) over fixed complex64 and complex128 points: a random spread of magnitudes 1e-8 to 1e8 in
every quadrant, the axes and the unit circle, the branch cuts with both signs of a zero part, ±1,
±i, large and tiny parts, and the special values (±0, ±inf, NaN) in each part.

The reference is correctly rounded where it can be: mpmath's value (2400 bits) rounded to float64 at
every point whose parts are finite and nonzero and whose result is finite (NumPy's own complex
`log1p`, `expm1` and others are naive formulas that lose digits near zero, which kiln does not, so
NumPy's values would be the wrong yardstick there), NumPy's at the rest: a zero or special part,
where the sign of a zero picks the side of a branch cut (which mpmath does not see) and C99's
special values hold.

Run: `/work/venv/bin/python tests/gen/make_complex_cases.py` (NumPy 2.4.6, mpmath 1.3). tests/complex.rs reads
the output and runs each function over the same points through `FusedRunner::compile_text`; it
never runs Python.

Line format (`;`-separated): `z` or `w` and a dtype, then the points of that input as
space-separated `re,im` pairs (`w` is `z` rotated by 7 places); or a dtype, an expression (`f(z)`,
`-z`, `z op w`) and NumPy's result at each point, as pairs (floats as Python's repr; a float32 part
is exact in float64's repr).
"""

import os
import warnings

import mpmath as mp
import numpy as np

# enough bits for 1 ± 1e-300 and 1e-300² (the cancellation of the extreme points)
mp.mp.prec = 2400

MP = {
    "sqrt": mp.sqrt, "exp": mp.exp, "log": mp.log, "log1p": mp.log1p, "expm1": mp.expm1,
    "log10": mp.log10, "log2": lambda z: mp.log(z, 2), "sin": mp.sin, "cos": mp.cos, "tan": mp.tan,
    "sinh": mp.sinh, "cosh": mp.cosh, "tanh": mp.tanh, "arcsin": mp.asin, "arccos": mp.acos,
    "arctan": mp.atan, "arcsinh": mp.asinh, "arccosh": mp.acosh, "arctanh": mp.atanh,
    "abs": abs, "conj": mp.conj, "sign": lambda z: z / abs(z), "reciprocal": lambda z: 1 / z,
    "square": lambda z: z * z, "negative": lambda z: -z, "real": mp.re, "imag": mp.im,
    "+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b,
    "**": lambda a, b: mp.power(a, b),
}


def reference(f, args, numpy_value):
    """mpmath's value of `f` at `args` rounded to complex128, where every part of every argument is
    finite and nonzero and the value is finite; else NumPy's."""
    if f not in MP:
        return numpy_value
    out = []
    for i, v in enumerate(numpy_value):
        zs = [complex(a[i]) for a in args]
        if all(np.isfinite(c.real) and np.isfinite(c.imag) and c.real != 0 and c.imag != 0 for c in zs):
            r = mp.mpc(MP[f](*[mp.mpc(c.real, c.imag) for c in zs]))
            c = complex(float(r.real), float(r.imag))
            if np.isfinite(c.real) and np.isfinite(c.imag):
                out.append(c)
                continue
        out.append(complex(v))
    return np.array(out, dtype=np.complex128)

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.normpath(os.path.join(HERE, "..", "data", "complex_cases.csv"))

UNARY = ["sqrt", "exp", "log", "log1p", "expm1", "log10", "log2", "sin", "cos", "tan", "sinh", "cosh",
         "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "abs", "conj", "sign",
         "reciprocal", "square", "negative", "real", "imag"]
# kiln's text names where NumPy's differ
TEXT = {"reciprocal": "reciprocal", "negative": None, "square": "square"}
BINARY = ["+", "-", "*", "/", "**", "==", "!="]


def points(rng):
    mags = 10.0 ** rng.uniform(-8, 8, 32)
    angles = rng.uniform(-np.pi, np.pi, 32)
    spread = mags * np.exp(1j * angles)
    unit = np.exp(1j * rng.uniform(-np.pi, np.pi, 8)) * (1 + rng.uniform(-1e-6, 1e-6, 8))
    near = rng.uniform(-3, 3, 16) + 1j * rng.uniform(-3, 3, 16)
    edges = []
    for re in (0.0, -0.0, 1.0, -1.0, 0.5, -2.0, 1e-300, 1e300):
        for im in (0.0, -0.0, 1.0, -2.0, 1e-300, 1e300):
            edges.append(complex(re, im))
    specials = []
    for re in (0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan):
        for im in (0.0, -0.0, 1.5, -1.5, np.inf, -np.inf, np.nan):
            specials.append(complex(re, im))
    return np.concatenate([spread, unit, near, np.array(edges), np.array(specials)])


def rounded(values, dtype):
    """The reference rounded to the inputs' type (complex64 parts to float32, inf beyond it)."""
    return values.astype(dtype).astype(np.complex128)


def fmt(z):
    return " ".join(f"{float(c.real)!r},{float(c.imag)!r}" for c in z)


def main():
    rng = np.random.default_rng(2025)
    z128 = points(rng)
    lines = []
    warnings.simplefilter("ignore")
    for dtype in (np.complex128, np.complex64):
        z = z128.astype(dtype)
        name = np.dtype(dtype).name
        w = np.roll(z, 7)
        lines.append(f"z;{name};{fmt(z)}")
        lines.append(f"w;{name};{fmt(w)}")
        # parts beyond float32's range are inf in complex64: keep the points once
        for f in UNARY:
            if f == "negative":
                text, got = "-z", -z
            else:
                text, got = f"{f}(z)", getattr(np, f)(z)
            ref = rounded(reference(f, [z], np.asarray(got).astype(np.complex128)), dtype)
            lines.append(f"{name};{text};{fmt(ref)}")
        for op in BINARY:
            got = np.asarray(eval(f"z {op} w")).astype(np.complex128)
            got = rounded(reference(op, [z, w], got), dtype)
            lines.append(f"{name};z {op} w;{fmt(got)}")
    with open(OUT, "w") as out:
        out.write("# generated by tests/gen/make_complex_cases.py with NumPy " + np.__version__ + "\n")
        out.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
