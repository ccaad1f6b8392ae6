#!/usr/bin/env python3
"""Writes NumPy 2's result type (or its error) for kiln's operators over bool, int32, int64, float32 and
float64 arrays and Python int and float literals (NEP 50's weak scalars).

    python3 scripts/numpy_promotion.py > tests/data/numpy_promotion.csv

Each row is `op,lhs,rhs,result`: an operand is a dtype name (a 1-d array of that dtype) or a literal
written as `int:VALUE` / `float:VALUE`; the result is a dtype name or `error:ExceptionName`. `where`
rows read `where,a,b,result` for `np.where(cond, a, b)` with a bool array `cond`. Generated with the NumPy
version written in the header; the test that reads it (`ir/tests/promotion.rs`) needs no NumPy.
"""
import sys
import warnings

import numpy as np

ARRAYS = ["bool", "int32", "int64", "float32", "float64"]
LITERALS = ["int:2", "int:-1", "int:3000000000", "float:2.5"]
OPS = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.true_divide,
    "//": np.floor_divide,
    "%": np.remainder,
    "**": np.power,
    "<": np.less,
    "&": np.bitwise_and,
}


def operand(spec):
    if spec.startswith("int:"):
        return int(spec[4:])
    if spec.startswith("float:"):
        return float(spec[6:])
    return np.ones(3, dtype=spec)


def result(fn):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return str(fn().dtype)
        except Exception as e:  # the exception's class is the datum
            return "error:" + type(e).__name__


def main():
    out = sys.stdout
    out.write(f"# NumPy {np.__version__}: result dtypes of kiln's operators (scripts/numpy_promotion.py)\n")
    out.write("op,lhs,rhs,result\n")
    pairs = [(a, b) for a in ARRAYS for b in ARRAYS]
    pairs += [(a, lit) for a in ARRAYS for lit in LITERALS]
    pairs += [(lit, a) for lit in LITERALS for a in ARRAYS]
    for name, ufunc in OPS.items():
        for a, b in pairs:
            r = result(lambda: ufunc(operand(a), operand(b)))
            out.write(f"{name},{a},{b},{r}\n")
    cond = np.array([True, False, True])
    for a, b in pairs:
        r = result(lambda: np.where(cond, operand(a), operand(b)))
        out.write(f"where,{a},{b},{r}\n")


if __name__ == "__main__":
    main()
