#!/usr/bin/env python3
"""Copies the rows of the shared external corpora that tests/corpora.rs uses into tests/data/, each
file with an attribution header (upstream repository, path, commit, license).

Run from a checkout that has the shared corpora: `python3 tests/gen/copy_corpora.py [CORPORA_DIR]`
(default /work/shared/corpora). The copies are committed; the tests never read the shared folder.
Lines starting with # are the header; the rest is the upstream CSV, header row included.
"""

import csv
import io
import os
import sys

SRC = sys.argv[1] if len(sys.argv) > 1 else "/work/shared/corpora"
DST = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "data"))

NUMEXPR = ("pydata/numexpr", "a561ee3835fe47e1aa90fd56300d64c3aa8d4509", "MIT (numexpr LICENSE.txt)")
NUMPY = ("numpy/numpy", "1f90bbb55e65e7de68921bc3f1a2d94492fdf689", "BSD-3-Clause (numpy LICENSE.txt)")

# the functions of numpy_special_values.csv that kiln's text language computes, and how
SPECIAL_FNS = {"exp", "log", "sin", "cos", "tan", "sqrt", "abs", "reciprocal", "square", "log2",
               "log10", "log1p", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh"}


def copy(name, upstream, path, what, keep=lambda row: True):
    repo, commit, license = upstream
    with open(os.path.join(SRC, name), newline="") as f:
        text = f.read()
    rows = list(csv.reader(io.StringIO(text)))
    header, body = rows[0], rows[1:]
    kept = [r for r in body if keep(dict(zip(header, r)))]
    out = io.StringIO()
    for line in [
        "Copied from the external corpus %s (extracted upstream test data, not written by us)." % name,
        "upstream: https://github.com/%s @ %s" % (repo, commit),
        "path: %s" % path,
        "license: %s" % license,
        "rows: %d of %d upstream rows (%s)" % (len(kept), len(body), what),
        "Written by tests/gen/copy_corpora.py; used by tests/corpora.rs.",
    ]:
        out.write("# " + line + "\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(header)
    w.writerows(kept)
    with open(os.path.join(DST, name), "w") as f:
        f.write(out.getvalue())
    print("%s: %d rows" % (name, len(kept)))


def main():
    copy("numexpr_test_expressions.csv", NUMEXPR,
         "numexpr/tests/test_numexpr.py (module-level tests, optests, cmptests, func1tests, "
         "func2tests, powtests; lines ~865-924)",
         "every row: tests/gen/make_numexpr_cases.py runs the ones within kiln's language and "
         "records the others as expressions kiln must reject")
    copy("numpy_minmax_nan_cases.csv", NUMPY,
         "numpy/_core/tests/test_umath.py: TestMaximum, TestMinimum (test_float_nans, "
         "test_strided_array, test_precision)",
         "the maximum/minimum rows; fmax/fmin are not in kiln",
         keep=lambda r: r["op"] in ("maximum", "minimum"))
    copy("numpy_minmax_reduce_cases.csv", NUMPY,
         "numpy/_core/tests/test_umath.py: TestMaximum.test_reduce, TestMinimum.test_reduce",
         "the maximum/minimum rows; fmax/fmin are not in kiln",
         keep=lambda r: r["reduce_op"] in ("maximum", "minimum"))
    copy("numpy_special_values.csv", NUMPY,
         "numpy/_core/tests/test_umath.py: TestSpecialFloats (float64 rows; upstream checks the "
         "same values for float16/32/64/longdouble)",
         "the functions kiln computes: %s (reciprocal as 1/x, square as x*x and x**2)"
         % ", ".join(sorted(SPECIAL_FNS)),
         keep=lambda r: r["fn"] in SPECIAL_FNS)


if __name__ == "__main__":
    main()
