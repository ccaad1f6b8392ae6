"""`python -m kiln.bench`: kiln from Python against numexpr and NumPy on kiln's seed kernels.

For each seed kernel (the expressions `kiln bench` races) and each size N, four variants are
timed in one process, interleaved (each round runs every variant once, in a rotating order, so that
a noisy neighbour hurts them alike): `kiln.evaluate(ex, local_dict=...)` as a numexpr user calls
it, a `kiln.compile(ex)` kernel called with keywords, `numexpr.evaluate` (if numexpr is installed)
and the NumPy expression. Every variant's result is checked against NumPy's first. The table gives
the median time per call, nanoseconds per element and the speed relative to NumPy and numexpr.

    python -m kiln.bench                       # N = 1e2..1e7, float64
    python -m kiln.bench --dtype f32 --sizes 100,1e6 --rounds 9
    python -m kiln.bench --dask                # kiln.dask against plain Dask (kiln.dask_bench)
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import kiln

KERNELS = {
    "axpy": ("a*x + y", lambda a, b, c, d, x, y: a * x + y),
    "horner": ("((a*x+b)*x+c)*x+d", lambda a, b, c, d, x, y: ((a * x + b) * x + c) * x + d),
    "sumsq": ("sum(x*x)", lambda a, b, c, d, x, y: np.sum(x * x)),
    "logistic": ("1/(1+exp(-x))", lambda a, b, c, d, x, y: 1 / (1 + np.exp(-x))),
    "trig": ("sin(x)*cos(x) + sqrt(abs(x))", lambda a, b, c, d, x, y: np.sin(x) * np.cos(x) + np.sqrt(np.abs(x))),
}

# the scalars of kiln's seed kernels; passed as NumPy scalars of the data's type, so that every
# variant computes in that type
SCALARS = {"a": 0.75, "b": -1.25, "c": 0.5, "d": 2.0}


def inputs(n, dtype):
    """The seed kernels' inputs: x uniform on [-3, 3), y on [0, 1), the scalars a, b, c, d."""
    rng = np.random.default_rng(n)
    env = {k: dtype(v) for k, v in SCALARS.items()}
    env["x"] = (rng.random(n) * 6 - 3).astype(dtype)
    env["y"] = rng.random(n).astype(dtype)
    return env


def variants(name, env):
    """The callables to time for kernel `name`: (label, function)."""
    ex, numpy_fn = KERNELS[name]
    kernel = kiln.compile(ex)
    used = {k: env[k] for k in kernel.names}
    out = [
        ("kiln.evaluate", lambda: kiln.evaluate(ex, local_dict=env)),
        ("kiln.compile", lambda: kernel(**used)),
    ]
    try:
        import numexpr  # type: ignore[import-untyped]
    except ImportError:
        numexpr = None
    if numexpr is not None:
        out.append(("numexpr", lambda: numexpr.evaluate(ex, local_dict=env)))
    out.append(("numpy", lambda: numpy_fn(**env)))
    return out


def check(name, fns, env, dtype):
    """Every variant agrees with NumPy (float32: computed in float32, so a relative 1e-4; a sum of
    n float32 terms within n * 2**-24, the bound of one accumulated in order, as numexpr sums)."""
    want = np.asarray(KERNELS[name][1](**env), dtype=np.float64)
    rtol = 1e-4 if dtype == np.float32 else 1e-9
    if dtype == np.float32 and want.ndim == 0:
        rtol = max(rtol, len(env["x"]) * 2.0**-24)
    for label, fn in fns:
        got = np.asarray(fn(), dtype=np.float64)
        if got.shape != want.shape or not np.allclose(got, want, rtol=rtol, atol=rtol):
            raise SystemExit(f"{name} N={len(env['x'])}: {label} disagrees with NumPy")


def loops_for(fn, target_s):
    """How many calls make one sample of about `target_s` seconds."""
    loops = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(loops):
            fn()
        dt = time.perf_counter() - t0
        if dt >= target_s or loops >= 1 << 20:
            return max(1, int(loops * target_s / max(dt, 1e-9)))
        loops *= 4


def measure(fns, rounds, target_s):
    """Median seconds per call of each variant, over `rounds` interleaved rounds."""
    loops = [loops_for(fn, target_s) for _, fn in fns]
    samples = [[] for _ in fns]
    for r in range(rounds):
        order = list(range(len(fns)))
        order = order[r % len(order):] + order[: r % len(order)]
        for i in order:
            fn = fns[i][1]
            n = loops[i]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            samples[i].append((time.perf_counter() - t0) / n)
    return [statistics.median(s) for s in samples]


def size(text):
    return int(float(text))


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--dask" in argv:
        # kiln.dask against plain Dask on a LocalCluster: its own options (see kiln.dask_bench)
        from . import dask_bench

        return dask_bench.main([a for a in argv if a != "--dask"])
    p = argparse.ArgumentParser(prog="python -m kiln.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="1e2,1e3,1e4,1e5,1e6,1e7", help="comma-separated N (default 1e2..1e7)")
    p.add_argument("--dtype", choices=["f64", "f32"], default="f64")
    p.add_argument("--kernels", default=",".join(KERNELS), help="comma-separated seed kernels")
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds; the median is reported")
    p.add_argument("--sample-ms", type=float, default=5.0, help="time per sample (calls are repeated to fill it)")
    args = p.parse_args(argv)
    dtype = np.float64 if args.dtype == "f64" else np.float32
    sizes = [size(s) for s in args.sizes.split(",")]
    names = args.kernels.split(",")
    for n in names:
        if n not in KERNELS:
            p.error(f"unknown kernel {n!r} (known: {', '.join(KERNELS)})")
    try:
        import numexpr  # type: ignore[import-untyped]

        peer = f"numexpr {numexpr.__version__} ({numexpr.get_num_threads()} threads)"
    except ImportError:
        peer = "numexpr not installed"
    print(f"# kiln {kiln.__version__}, numpy {np.__version__}, {peer}; Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores, {args.dtype}, median of {args.rounds} interleaved rounds")
    header = f"{'kernel':<9} {'N':>9} {'variant':<14} {'us/call':>10} {'ns/elem':>8} {'vs numpy':>9} {'vs numexpr':>10}"
    print(header)
    print("-" * len(header))
    for n in sizes:
        for name in names:
            env = inputs(n, dtype)
            fns = variants(name, env)
            check(name, fns, env, dtype)
            times = measure(fns, args.rounds, args.sample_ms / 1e3)
            by = dict(zip((label for label, _ in fns), times))
            for (label, _), t in zip(fns, times):
                vs_np = f"{by['numpy'] / t:8.2f}x"
                vs_ne = f"{by['numexpr'] / t:9.2f}x" if "numexpr" in by else f"{'-':>10}"
                print(f"{name:<9} {n:>9} {label:<14} {t * 1e6:>10.2f} {t * 1e9 / n:>8.3f} {vs_np} {vs_ne}")
            sys.stdout.flush()


if __name__ == "__main__":
    main()
