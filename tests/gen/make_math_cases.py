#!/usr/bin/env python3
"""Generates tests/data/math_cases.txt: NumPy's values of kiln's math functions (the vectorised
transcendentals and numexpr's other functions), for tests/math_numpy.rs.

Run: `python3 tests/gen/make_math_cases.py`. The test never runs Python. For every unary function,
f64 and f32 inputs (special values: NaN, ±inf, ±0, subnormals, huge and tiny values, values at the
edges of each function's domain; then pseudo-random values over its interesting range), some as 2-D
arrays to check that the shape is kept; for every binary function, the grid of special values with
itself and random pairs. Checks: `exact` for functions that are exact in IEEE arithmetic (floor,
ceil, trunc, round, sign, isnan, isinf, isfinite, copysign, fmax, fmin, fmod, %), else `ulp 4`
(NumPy's own f32 sin, cos, exp, log are SIMD approximations within 2 to 4 ULP of the correctly
rounded value; kiln stays within 1 or 2 of it). NumPy does not pin the sign of a zero that fmax
and fmin return for (+0, -0) (its scalar and SIMD loops differ): those compare zeros as equal.
"""

import os
import sys

import numpy as np

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from fixture import input_line, output_line  # noqa: E402

OUT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data",
                                    "math_cases.txt"))

SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, -5e-324, 1e-310, -1e-310,
            2.2250738585072014e-308, 1e-300, 1e-20, -1e-20, 1e-45, 1e-40, 0.5, -0.5, 1.0, -1.0,
            2.0, -2.0, 2.5, -2.5, 3.5, -0.49999999999999994, 0.49999999999999994, 4503599627370497.0,
            10.0, 20.0, 88.72, 89.0, -103.9, -104.0, 709.78, 710.0, -745.2, 1e6, 1e22, -1e22, 1e300,
            -1e300, 1.7976931348623157e308, -1.7976931348623157e308, 3.4028234663852886e38,
            1.5707963267948966, 3.141592653589793]

# name: (expression, range of the random values, exact)
UNARY = {
    "exp": ("exp(x)", (-50, 50), False),
    "exp2": ("exp2(x)", (-70, 70), False),
    "expm1": ("expm1(x)", (-5, 5), False),
    "log": ("log(x)", (0, 100), False),
    "log2": ("log2(x)", (0, 100), False),
    "log10": ("log10(x)", (0, 100), False),
    "log1p": ("log1p(x)", (-1, 10), False),
    "sin": ("sin(x)", (-20, 20), False),
    "cos": ("cos(x)", (-20, 20), False),
    "tan": ("tan(x)", (-20, 20), False),
    "tanh": ("tanh(x)", (-10, 10), False),
    "arcsin": ("arcsin(x)", (-1.2, 1.2), False),
    "arccos": ("arccos(x)", (-1.2, 1.2), False),
    "arctan": ("arctan(x)", (-20, 20), False),
    "sinh": ("sinh(x)", (-20, 20), False),
    "cosh": ("cosh(x)", (-20, 20), False),
    "arcsinh": ("arcsinh(x)", (-20, 20), False),
    "arccosh": ("arccosh(x)", (0.5, 20), False),
    "arctanh": ("arctanh(x)", (-1.2, 1.2), False),
    "floor": ("floor(x)", (-10, 10), True),
    "ceil": ("ceil(x)", (-10, 10), True),
    "trunc": ("trunc(x)", (-10, 10), True),
    "round": ("round(x)", (-10, 10), True),
    "sign": ("sign(x)", (-10, 10), True),
    "isnan": ("isnan(x)", (-10, 10), True),
    "isinf": ("isinf(x)", (-10, 10), True),
    "isfinite": ("isfinite(x)", (-10, 10), True),
}

BINARY = {
    "arctan2": ("arctan2(x, y)", np.arctan2, False),
    "hypot": ("hypot(x, y)", np.hypot, False),
    "copysign": ("copysign(x, y)", np.copysign, True),
    "fmax": ("fmax(x, y)", np.fmax, True),
    "fmin": ("fmin(x, y)", np.fmin, True),
    "fmod": ("fmod(x, y)", np.fmod, True),
    "remainder": ("x % y", np.remainder, True),
    "pow": ("x ** y", np.power, False),
}

BINARY_SPECIALS = [np.nan, np.inf, -np.inf, 0.0, -0.0, 5e-324, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 3.0,
                   -3.0, 1.0 / 3.0, -8.0, 7.5, -7.5, 1e300, 1e-300]


def numpy_fn(name):
    return {"round": np.round}.get(name, getattr(np, name))


def main():
    rng = np.random.default_rng(20240611)
    blocks = []
    for name, (expr, (lo, hi), exact) in UNARY.items():
        f = numpy_fn(name)
        for dt in (np.float64, np.float32):
            tag = "f64" if dt == np.float64 else "f32"
            with np.errstate(all="ignore"):
                sp = np.array(SPECIALS, dtype=dt)
                rnd = rng.uniform(lo, hi, 60).astype(dt).reshape(4, 15)
                for kind, x in (("specials", sp), ("random", rnd)):
                    y = f(x)
                    blocks.append("\n".join([
                        "case %s_%s_%s" % (name, kind, tag),
                        "expr " + expr,
                        input_line("x", x),
                        output_line(y),
                        "check " + ("exact" if exact else "ulp 4"),
                        "end",
                    ]))
    for name, (expr, f, exact) in BINARY.items():
        for dt in (np.float64, np.float32):
            tag = "f64" if dt == np.float64 else "f32"
            s = np.array(BINARY_SPECIALS, dtype=dt)
            gx, gy = np.meshgrid(s, s, indexing="ij")
            rx = rng.uniform(-10, 10, 80).astype(dt)
            ry = rng.uniform(-10, 10, 80).astype(dt)
            if name == "pow":
                rx = np.abs(rx)
            for kind, x, y in (("grid", gx, gy), ("random", rx, ry)):
                with np.errstate(all="ignore"):
                    z = f(x, y)
                blocks.append("\n".join([
                    "case %s_%s_%s" % (name, kind, tag),
                    "expr " + expr,
                    input_line("x", x),
                    input_line("y", y),
                    output_line(z),
                    "check " + ("exact" if exact else "ulp 4")
                    + (" zeros_any" if name in ("fmax", "fmin") else ""),
                    "end",
                ]))
    header = [
        "# NumPy's values of kiln's math functions: generated by tests/gen/make_math_cases.py",
        "# (numpy %s), do not edit. Format: tests/gen/fixture.py." % np.__version__,
    ]
    with open(OUT, "w") as fh:
        fh.write("\n".join(header) + "\n" + "\n".join(blocks) + "\n")
    print("wrote %d cases to %s" % (len(blocks), OUT))


if __name__ == "__main__":
    main()
