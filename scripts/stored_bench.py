"""Integer, bool and float32 inputs read by float kernels ("stored" in `kiln explain`), from Python.

ns per element of `kiln.numexpr.evaluate` over int64, int32, bool and float32 inputs, beside the
same expression over a float64 copy made beforehand (what the conversion costs), NumPy as its user
writes it, and numexpr; one thread each, N = 1e6, the median of 15 calls after one warm-up call.
Run it with the Python package built (python/run_tests.sh builds it into python/target/venv):

    python/target/venv/bin/python scripts/stored_bench.py
"""

import time

import kiln
import kiln.numexpr as kne
import numexpr as ne
import numpy as np

N = 1_000_000


def median_ns(f, calls=15):
    """The median time of `calls` calls of `f`, in ns per element."""
    f()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)) * 1e9 / N


def main():
    ne.set_num_threads(1)
    kiln.set_num_threads(1)
    r = np.random.default_rng(0)
    i = r.integers(-1000, 1000, N).astype(np.int64)
    i32 = i.astype(np.int32)
    b = r.random(N) > 0.5
    x32 = r.random(N).astype(np.float32)
    x = r.random(N)
    fi = i.astype(np.float64)
    env = {"i": i, "i32": i32, "b": b, "x32": x32, "x": x, "fi": fi}

    def kiln_of(ex):
        return lambda: kne.evaluate(ex, local_dict=env)

    def numexpr_of(ex):
        return lambda: ne.evaluate(ex, local_dict=env)

    # (expression, the same over the float64 copy, NumPy)
    rows = [
        ("sin(i)", "sin(fi)", lambda: np.sin(i)),
        ("sum(i*1.0)", "sum(fi)", lambda: np.sum(i, dtype=np.float64)),
        ("i*0.5 + x", "fi*0.5 + x", lambda: i * 0.5 + x),
        ("x32*b", "x32*x32", lambda: x32 * b),
        ("exp(i32*0.001)", "exp(fi*0.001)", lambda: np.exp(i32 * 0.001)),
    ]
    print(f"{'expression':16s} {'kiln':>7s} {'kiln f64':>9s} {'numpy':>7s} {'numexpr':>8s}   ns/elem")
    for ex, copy, numpy in rows:
        cells = [median_ns(kiln_of(ex)), median_ns(kiln_of(copy)), median_ns(numpy), median_ns(numexpr_of(ex))]
        print(f"{ex:16s} " + " ".join(f"{c:{w}.2f}" for c, w in zip(cells, [7, 9, 7, 8])))


if __name__ == "__main__":
    main()
