#!/usr/bin/env python3
"""Generates tests/data/scan_numpy_cases.txt: scans checked against NumPy's cumsum, cumprod,
maximum.accumulate and minimum.accumulate on many shapes and axes (numpy 2.x; run once, committed;
the tests never run Python).

One case per line, fields separated by '|':
  op | axis (int or None) | exclusive (0/1) | reverse (0/1) | initial (float or -) | dtype | shape |
  input values (repr, C order) | expected values (repr, C order)
The expected value is NumPy's along the axis (None: the flattened array), with kiln's documented
semantics built from NumPy calls: reverse = flip, accumulate, flip; exclusive = accumulate over
[initial, x[0], ..., x[n-2]]; inclusive with initial = accumulate over [initial, x...] less its first
element. f32 cumsum / cumprod carry f64 in kiln: their expected value is NumPy's float64 accumulate
of the f32 data, rounded to f32 (cummax / cummin accumulate in f32 directly).
"""

import os
import numpy as np

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data", "scan_numpy_cases.txt")
UFUNC = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum, "cummin": np.minimum}
NEUTRAL = {"cumsum": 0.0, "cumprod": 1.0, "cummax": -np.inf, "cummin": np.inf}


def scan_1d(op, x, exclusive, reverse, initial, wide):
    u = UFUNC[op]
    x = x[::-1] if reverse else x
    work = x.astype(np.float64) if wide else x
    start = NEUTRAL[op] if initial is None else initial
    if exclusive:
        seq = np.concatenate([np.array([start], dtype=work.dtype), work[:-1]]) if len(work) else work
        y = u.accumulate(seq) if len(seq) else seq
    elif initial is not None:
        seq = np.concatenate([np.array([initial], dtype=work.dtype), work])
        y = u.accumulate(seq)[1:]
    else:
        y = u.accumulate(work) if len(work) else work
    y = y.astype(x.dtype)
    return y[::-1] if reverse else y


def scan(op, x, axis, exclusive, reverse, initial):
    wide = op in ("cumsum", "cumprod")
    if axis is None:
        return scan_1d(op, x.reshape(-1), exclusive, reverse, initial, wide)
    return np.apply_along_axis(lambda v: scan_1d(op, v, exclusive, reverse, initial, wide), axis, x) \
        if x.size else x.copy()


OPTIONS = [(0, 0, None), (1, 0, None), (0, 1, None), (1, 1, 2.5), (0, 0, -1.0)]


def values(a):
    return " ".join(repr(float(v)) for v in a.reshape(-1))


def main():
    rng = np.random.default_rng(20240611)
    shapes = [(0,), (1,), (5,), (17,), (64,), (3, 4), (2, 3, 5), (4, 1, 6), (33, 3), (2, 0, 3)]
    lines = []
    for shape in shapes:
        axes = [None] + list(range(len(shape))) + [-1]
        for dtype in (np.float64, np.float32):
            for op in UFUNC:
                for axis in axes:
                    # two of the five option sets per axis, rotating, so every set meets every shape
                    k = len(lines)
                    for (exclusive, reverse, initial) in [OPTIONS[k % 5], OPTIONS[(k + 2) % 5]]:
                        x = rng.normal(size=shape)
                        if op == "cumprod":
                            x = 1.0 + 0.1 * x
                        if rng.random() < 0.3 and x.size:
                            k = rng.integers(0, x.size, size=2)
                            x.reshape(-1)[k[0]] = rng.choice([np.nan, np.inf, -np.inf, -0.0])
                        x = x.astype(dtype)
                        y = scan(op, x, None if axis is None else axis % len(shape), exclusive, reverse, initial)
                        lines.append("|".join([
                            op, "None" if axis is None else str(axis), str(exclusive), str(reverse),
                            "-" if initial is None else repr(initial), "f64" if dtype == np.float64 else "f32",
                            ",".join(map(str, shape)), values(x), values(y),
                        ]))
    # NumPy's own functions, checked once more directly (inclusive, forward, no initial)
    for op, f in [("cumsum", np.cumsum), ("cumprod", np.cumprod),
                  ("cummax", np.maximum.accumulate), ("cummin", np.minimum.accumulate)]:
        x = np.array([3.0, 1.0, np.nan, 4.0, -0.0, 2.0])
        lines.append("|".join([op, "0", "0", "0", "-", "f64", "6", values(x), values(f(x))]))
    with open(OUT, "w") as out:
        out.write("# Scans against NumPy %s: written by tests/gen/make_scan_cases.py, read by tests/scans.rs.\n" % np.__version__)
        out.write("# op|axis|exclusive|reverse|initial|dtype|shape|input|expected\n")
        for line in lines:
            out.write(line + "\n")
    print("%d cases" % len(lines))


if __name__ == "__main__":
    main()
