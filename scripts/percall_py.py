"""Instructions per call of kiln.evaluate at N = 100, for callgrind.

Usage: valgrind --tool=callgrind --callgrind-out-file=OUT python scripts/percall_py.py CASE CALLS
CASE: int (i*2+1, int64), float (x*2+1, float64), complex (z*w, complex128), bytes (a == b'x', S10),
contains (contains(a, b'ab'), S10).
Instructions a call: the difference of the totals of two runs (e.g. 5000 and 1000 calls) over
their difference in calls (the start-up and the first, compiling call cancel).
"""
import sys

import numpy as np

import kiln

N = 100
rng = np.random.default_rng(0)
CASES = {
    "int": ("i*2+1", {"i": np.arange(N, dtype=np.int64)}),
    "float": ("x*2+1", {"x": rng.random(N)}),
    "complex": ("z*w", {"z": rng.random(N) + 1j * rng.random(N), "w": rng.random(N) - 1j * rng.random(N)}),
    "bytes": ("a == b'x'", {"a": np.array([b"x", b"abc", b""] * 33 + [b"x"], dtype="S10")}),
    "contains": ("contains(a, b'ab')", {"a": np.array([b"x", b"abc", b""] * 33 + [b"x"], dtype="S10")}),
}

ex, env = CASES[sys.argv[1]]
for _ in range(int(sys.argv[2])):
    kiln.evaluate(ex, local_dict=env)
