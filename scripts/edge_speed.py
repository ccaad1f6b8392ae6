#!/usr/bin/env python3
"""ns per element of each vector function on arguments of one magnitude, kiln against NumPy:
tiny ones, whose powers inside a kernel fall into the subnormals (about a hundred cycles an
operation on x86), and huge ones (the trigonometric functions' per-lane slow path). Prints the
functions where kiln takes more than `--worse` times NumPy's time, or more than 3 ns.

    python/target/venv/bin/python scripts/edge_speed.py                 # the default magnitudes
    python/target/venv/bin/python scripts/edge_speed.py --dtype float32 --magnitudes 1e-15,1e19

Run it from outside the source tree (or with the package installed), so that `import kiln` finds
the built package.
"""

import argparse
import time

import numpy as np

import kiln

FUNCTIONS = [
    "exp", "exp2", "expm1", "log1p", "sin", "cos", "tan", "tanh", "sinh", "cosh",
    "arcsin", "arccos", "arctan", "arcsinh", "arctanh",
]
DEFAULTS = {"float32": [1e-12, 1e-15, 1e-20, 1e19], "float64": [1e-120, 1e-160, 1e160]}


def best_ns(f, n, rounds):
    """The best of `rounds` calls of `f`, in ns per element."""
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best / n * 1e9


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--dtype", choices=["float32", "float64"], action="append")
    p.add_argument("--magnitudes", help="comma-separated (default: per dtype)")
    p.add_argument("--n", type=int, default=100_000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--worse", type=float, default=3.0)
    a = p.parse_args()
    rng = np.random.default_rng(1)
    for dtype in a.dtype or ["float32", "float64"]:
        mags = [float(m) for m in a.magnitudes.split(",")] if a.magnitudes else DEFAULTS[dtype]
        for m in mags:
            x = (m * (1 + rng.random(a.n))).astype(dtype)
            slow = []
            with np.errstate(all="ignore"):
                for fn in FUNCTIONS:
                    k = best_ns(lambda: kiln.evaluate(f"{fn}(x)", {"x": x}), a.n, a.rounds)
                    ref = best_ns(lambda: getattr(np, fn)(x), a.n, a.rounds)
                    if k > a.worse * ref or k > 3.0:
                        slow.append(f"{fn} {k:.2f} ({ref:.2f})")
            print(f"{dtype} ~{m:g}: " + ("; ".join(slow) if slow else "none slow"))


if __name__ == "__main__":
    main()
