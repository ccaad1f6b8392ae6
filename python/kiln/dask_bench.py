"""`python -m kiln.dask_bench` (or `python -m kiln.bench --dask`): kiln.dask against plain Dask
(NumPy per chunk) on a dask.distributed LocalCluster.

Four workloads over N elements in chunks of C: `sum(x*x)`, `a*x + y`, the logistic `1/(1+exp(-x))`
and a row softmax (x as an (N/1000, 1000) matrix, chunks of C/1000 whole rows). The inputs are
made on the workers and persisted there before any timing; each run persists its result on the
workers (nothing but the scalar of `sum(x*x)` comes back to this process), so a wall time is kiln
or NumPy on the chunks, Dask's scheduling, and the transfers between workers that the graph needs.
For each workload and variant the table gives the median wall time over `--rounds` interleaved
runs, the number of tasks in the graph (after Dask's optimisation), and the time of one chunk's
task alone in this process (the kiln kernel, or the NumPy expression) so that
`tasks x per-chunk / workers` can be read against the wall time. Results are checked against each
other (a chunk of each, the sum) before anything is timed.

    python -m kiln.dask_bench                              # N = 2e8, chunks of 1e7, 2 workers
    python -m kiln.dask_bench --n 2e7 --chunk 1e6 --workers 4
    python -m kiln.dask_bench --scheduler tcp://10.0.0.5:8786   # a running cluster instead
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import numpy as np

import kiln

ROW = 1000


def workloads(da, x, y, m, a):
    """name -> (kiln expression, its inputs, the plain-Dask expression)."""
    import kiln.dask as kd

    softmax = "exp(x - max(x, axis=1, keepdims=1)) / sum(exp(x - max(x, axis=1, keepdims=1)), axis=1, keepdims=1)"

    def dask_softmax(v):
        e = da.exp(v - v.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    return {
        "sum(x*x)": (lambda: kd.evaluate("sum(x*x)", local_dict={"x": x}), lambda: (x * x).sum()),
        "a*x + y": (lambda: kd.evaluate("a*x + y", local_dict={"a": a, "x": x, "y": y}), lambda: a * x + y),
        "logistic": (lambda: kd.evaluate("1/(1+exp(-x))", local_dict={"x": x}), lambda: 1 / (1 + da.exp(-x))),
        "softmax": (lambda: kd.evaluate(softmax, local_dict={"x": m}), lambda: dask_softmax(m)),
    }


def chunk_tasks(chunk, a):
    """name -> (kiln's chunk step, NumPy's), on one chunk in this process."""
    from kiln.dask import _Map, _Partial

    rng = np.random.default_rng(1)
    xc = rng.random(chunk)
    yc = rng.random(chunk)
    mc = xc.reshape(-1, ROW)
    sumsq = _Partial("sum", "sum((x * x), axis=0, keepdims=1)", None, None, 1, ("x",), (0,), 1, np.dtype(np.float64))
    axpy = _Map("a * x + y", None, 1, ("a", "x", "y"))
    logistic = _Map("1 / (1 + exp(-x))", None, 1, ("x",))
    smax = _Map("max(x, axis=1, keepdims=1)", None, 1, ("x",))
    ssum = _Map("sum(exp(x - m), axis=1, keepdims=1)", None, 1, ("x", "m"))
    sdiv = _Map("exp(x - m) / s", None, 1, ("x", "m", "s"))
    mx = smax(mc)
    s = ssum(mc, mx)

    def np_softmax():
        mm = mc.max(axis=1, keepdims=True)
        e = np.exp(mc - mm)
        return e / e.sum(axis=1, keepdims=True)

    return {
        "sum(x*x)": (lambda: sumsq(xc), lambda: (xc * xc).sum(axis=0, keepdims=True)),
        "a*x + y": (lambda: axpy(a, xc, yc), lambda: a * xc + yc),
        "logistic": (lambda: logistic(xc), lambda: 1 / (1 + np.exp(-xc))),
        "softmax": (lambda: (smax(mc), ssum(mc, mx), sdiv(mc, mx, s)), np_softmax),
    }


def per_chunk(fn, rounds):
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m kiln.dask_bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--n", default="2e8", help="elements per array (default 2e8)")
    p.add_argument("--chunk", default="1e7", help="elements per chunk (default 1e7; a multiple of 1000)")
    p.add_argument("--workers", type=int, default=2, help="LocalCluster worker processes (default 2)")
    p.add_argument("--threads-per-worker", type=int, default=1)
    p.add_argument("--rounds", type=int, default=3, help="interleaved runs per variant; the median is reported")
    p.add_argument("--workloads", default="sum(x*x),a*x + y,logistic,softmax", help="comma-separated workloads")
    p.add_argument("--scheduler", default=None, help="a running scheduler's address instead of a LocalCluster")
    args = p.parse_args(argv)
    n, chunk = int(float(args.n)), int(float(args.chunk))
    if chunk % ROW or n % chunk:
        p.error(f"--chunk must be a multiple of {ROW} and divide --n")

    import dask
    import dask.array as da
    import distributed

    if args.scheduler:
        cluster = None
        client = distributed.Client(args.scheduler)
    else:
        cluster = distributed.LocalCluster(
            n_workers=args.workers,
            threads_per_worker=args.threads_per_worker,
            processes=True,
            host="127.0.0.1",
            dashboard_address="127.0.0.1:0",
            worker_dashboard_address="127.0.0.1:0",
            memory_limit=0,
            silence_logs=40,
        )
        client = distributed.Client(cluster)
    try:
        workers = len(client.scheduler_info()["workers"])
        a = 0.75
        rng = da.random.default_rng(16)
        x = rng.random(n, chunks=chunk)
        y = rng.random(n, chunks=chunk)
        x, y = client.persist([x, y])
        distributed.wait([x, y])
        m = x.reshape(n // ROW, ROW).rechunk((chunk // ROW, ROW))
        m = client.persist(m)
        distributed.wait(m)
        print(f"# kiln {kiln.__version__}, dask {dask.__version__}, numpy {np.__version__}; Python "
              f"{sys.version.split()[0]}, {os.cpu_count()} cores, {workers} workers x {args.threads_per_worker} "
              f"thread(s); N = {n:.3g} f64 in chunks of {chunk:.3g} ({n // chunk} chunks); median of {args.rounds}")
        work = workloads(da, x, y, m, a)
        chunks = chunk_tasks(chunk, a)
        header = f"{'workload':<9} {'variant':<10} {'wall s':>8} {'tasks':>6} {'chunk ms':>9} {'chunks*chunk/workers s':>23} {'vs dask':>8}"
        print(header)
        print("-" * len(header))
        wanted = args.workloads.split(",")
        for name in wanted:
            if name not in work:
                raise SystemExit(f"unknown workload {name!r} (known: {', '.join(work)})")
        for name in wanted:
            kfn, dfn = work[name]
            # check: the same result (the sum, or the first chunk of the map)
            kr, dr = kfn(), dfn()
            if kr.ndim == 0:
                got, want = client.compute([kr, dr], sync=True)
            else:
                first = tuple(slice(0, c[0]) for c in kr.chunks)
                got, want = client.compute([kr[first], dr[first]], sync=True)
            if not np.allclose(got, want, rtol=1e-10, atol=1e-12):
                raise SystemExit(f"{name}: kiln.dask and plain Dask disagree")
            variants = [("kiln.dask", kfn), ("dask", dfn)]
            walls = {label: [] for label, _ in variants}
            tasks = {}
            for r in range(args.rounds):
                for label, fn in variants[r % 2 :] + variants[: r % 2]:
                    arr = fn()
                    (opt,) = dask.optimize(arr)
                    tasks[label] = len(opt.__dask_graph__())
                    t0 = time.perf_counter()
                    if arr.ndim == 0:
                        client.compute(arr, sync=True)
                    else:
                        done = client.persist(arr)
                        distributed.wait(done)
                        del done
                    walls[label].append(time.perf_counter() - t0)
            kchunk, nchunk = chunks[name]
            per = {"kiln.dask": per_chunk(kchunk, 5), "dask": per_chunk(nchunk, 5)}
            nchunks = n // chunk
            med = {k: statistics.median(v) for k, v in walls.items()}
            for label, _ in variants:
                busy = nchunks * per[label] / workers
                print(f"{name:<9} {label:<10} {med[label]:>8.3f} {tasks[label]:>6} {per[label] * 1e3:>9.2f} "
                      f"{busy:>23.3f} {med['dask'] / med[label]:>7.2f}x")
            sys.stdout.flush()
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


if __name__ == "__main__":
    main()
