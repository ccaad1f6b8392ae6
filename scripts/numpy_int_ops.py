#!/usr/bin/env python3
"""Writes NumPy 2's integer arithmetic on edge values: every binary operator of int32 and int64 over
pairs of edge values, the unary ones, and float -> int casts of special values.

    python3 scripts/numpy_int_ops.py > tests/data/numpy_int_ops.csv

Rows: `type,op,a,b,result` (`b` empty for a unary op; `cast` rows hold the float in `a`, written with
Python's repr). `ir/tests/int_ops.rs` checks kiln-ir's integer semantics against every row without
NumPy. NumPy's warnings (division by zero, invalid casts) are silenced: the values are the datum.
"""
import sys
import warnings

import numpy as np

BINARY = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "//": np.floor_divide,
    "%": np.remainder,
    "<<": np.left_shift,
    ">>": np.right_shift,
    "&": np.bitwise_and,
    "|": np.bitwise_or,
    "^": np.bitwise_xor,
    "minimum": np.minimum,
    "maximum": np.maximum,
}
UNARY = {"neg": np.negative, "abs": np.absolute, "sign": np.sign, "~": np.invert}


def edges(t):
    i = np.iinfo(t)
    v = [0, 1, -1, 2, -2, 3, -3, 7, -7, 31, 32, 33, 63, 64, i.min, i.min + 1, i.max, i.max - 1]
    if t == np.int64:
        v += [2**53 + 1, -(2**53) - 1, 2**31, -(2**31) - 1]
    return v


def main():
    out = sys.stdout
    out.write(f"# NumPy {np.__version__}: integer arithmetic on edge values (scripts/numpy_int_ops.py)\n")
    out.write("type,op,a,b,result\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for t in (np.int32, np.int64):
            name = np.dtype(t).name
            vals = edges(t)
            for op, f in BINARY.items():
                for a in vals:
                    for b in vals:
                        r = f(np.array([a], t), np.array([b], t))[0]
                        out.write(f"{name},{op},{a},{b},{int(r)}\n")
            for a in vals:
                for b in range(0, 65):
                    r = np.power(np.array([a], t), np.array([b], t))[0]
                    out.write(f"{name},**,{a},{b},{int(r)}\n")
            for op, f in UNARY.items():
                for a in vals:
                    out.write(f"{name},{op},{a},,{int(f(np.array([a], t))[0])}\n")
            floats = [0.0, -0.0, 0.5, -0.5, 2.9, -2.9, 1e9, -1e9, 2147483647.0, 2147483648.0,
                      -2147483648.0, -2147483649.0, 9.2e18, 9.3e18, -9.3e18, float(2**53 + 1),
                      float("inf"), float("-inf"), float("nan"), 5e-324]
            for a in floats:
                r = np.array([a], np.float64).astype(t)[0]
                out.write(f"{name},cast,{a!r},,{int(r)}\n")


if __name__ == "__main__":
    main()
