"""`python -m kiln.bench`: kiln from Python against numexpr and NumPy on kiln's seed kernels.

For each seed kernel (the expressions `kiln bench` races) and each size N, five variants are
timed in one process, interleaved (each round runs every variant once, in a rotating order, so that
a noisy neighbour hurts them alike): `kiln.evaluate(ex, local_dict=...)` as a numexpr user calls
it, a `kiln.compile(ex)` kernel called with keywords, the same kernel writing into an array given
as `out=` (the call of a hot loop), `numexpr.evaluate` (if numexpr is installed) and the NumPy
expression. Every variant's result is checked against NumPy's first. The table gives
the median time per call, nanoseconds per element and the speed relative to NumPy and numexpr.

`--functions` times every function of numexpr's set that kiln computes, one at a time, from the
table `kiln bench --functions` uses (`kiln._kiln.bench_functions()`: each function's expression and
the domains its inputs are drawn from), in float64 and float32 at N = 1e4 and 1e6 on one thread:
`kiln.evaluate`, `numexpr.evaluate` (one thread; where numexpr has the function) and NumPy's ufunc
(the expression evaluated in NumPy's namespace: `tanh(x)` is `np.tanh(x)`), each result checked first
against NumPy's in float64 on the same inputs (relative 1e-12 for float64, 1e-5 for float32). The
speeds are NumPy's (numexpr's) time over kiln's: above 1, kiln is faster.

`--strings` times numexpr's byte-string operations on an `S10` array (`s == b'abc'`, `contains(s,
b'ab')`) at N = 1e4 and 1e6 on one thread: `kiln.evaluate`, `numexpr.evaluate` and NumPy (`s ==
b'abc'`, `np.char.find(s, b'ab') >= 0`), each result checked equal to NumPy's first.

`--complex` times numexpr's complex operations (`z*w + 1j`, `z / w`, `abs(z)`, `exp(z)`,
`sqrt(z)`, `sum(z*w)`) on complex128 and complex64 arrays at N = 1e2, 1e4 and 1e6 on one thread the
same way, each result checked against NumPy's (relative 1e-12 for complex128, 1e-5 for complex64; a
sum within N times that).

`--reductions` times reductions (`sum(x)`, `max(x)`, `argmax(x)`, `any(x > 2)`, `sum(x*x)`, `max(m,
axis=0)`, `argmax(m, axis=1)`, ...) of float64, float32, int64, int32 and bool values (the bools
mostly false) at N = 1e4 and 1e6 on one thread against the call a NumPy user writes (`x.max()`,
`np.argmax(x)`, `(x > 2).any()`, `x.any()`, `np.dot(x, x)` for the sum of squares, on one BLAS
thread, `m.max(axis=0)` with `m` the values as rows of 1000) and numexpr
where it has the reduction, each result checked against NumPy's first (extremes, indices and
truths equal; sums within the bound of their association; `var(x)` and `std(m, axis=1)` within
1000 units of the last place).

`--programs` times small whole programs (`tanh(M)*2 + M**2` over a 1000 x 1000 float64 matrix) the
same way. `--json` prints one JSON object per measurement instead of a table, in every mode but
`--dask`.

    python -m kiln.bench                       # N = 1e2..1e7, float64
    python -m kiln.bench --dtype f32 --sizes 100,1e6 --rounds 9
    python -m kiln.bench --functions           # the function table, f64 and f32, N = 1e4 and 1e6
    python -m kiln.bench --functions --kernels tanh,x**y --dtype f32 --json
    python -m kiln.bench --programs
    python -m kiln.bench --reductions          # float64, float32, int64, int32 and bool, N = 1e4 and 1e6
    python -m kiln.bench --strings             # byte strings: ==, contains (S10, N = 1e4 and 1e6)
    python -m kiln.bench --complex             # complex128 and complex64, N = 1e2, 1e4 and 1e6
    python -m kiln.bench --dask                # kiln.dask against plain Dask (kiln.dask_bench)
"""

from __future__ import annotations

import argparse
import json
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

# small whole programs: (expression, its inputs' shapes), all float64, values uniform on [-3, 3)
PROGRAMS = {
    "tanh(M)*2 + M**2": {"M": (1000, 1000)},
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
    into = np.empty_like(np.asarray(kernel(**used)))
    out = [
        ("kiln.evaluate", lambda: kiln.evaluate(ex, local_dict=env)),
        ("kiln.compile", lambda: kernel(**used)),
        ("kiln.compile out=", lambda: kernel(out=into, **used)),
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


#: the clock samples are read from: wall time (`time.perf_counter`), or with `--cpu-time` this
#: process's CPU time (`time.process_time`), which a loaded machine's other processes do not inflate
#: (every variant here runs on one thread)
CLOCK = [time.perf_counter]


def loops_for(fn, target_s):
    """How many calls make one sample of about `target_s` seconds."""
    clock = CLOCK[0]
    loops = 1
    while True:
        t0 = clock()
        for _ in range(loops):
            fn()
        dt = clock() - t0
        if dt >= target_s or loops >= 1 << 20:
            return max(1, int(loops * target_s / max(dt, 1e-9)))
        loops *= 4


#: how long each variant runs untimed before each of its samples. A core that ran other code (or
#: slept) runs the next few milliseconds of wide vector code slower, by up to half on the AVX-512
#: Xeons seen (the first three arcsin calls at N = 1e6 after 20 ms of numexpr or of sleep: 2.1 ns
#: per element, then 1.4, for kiln and for NumPy alike): without this, a sample of a few
#: milliseconds measures that transition, and a variant that follows a similar one is favoured.
WARM_S = 0.01


def measure(fns, rounds, target_s):
    """Median seconds per call of each variant, over `rounds` interleaved rounds, each sample after
    [`WARM_S`] of untimed calls of its variant."""
    clock = CLOCK[0]
    loops = [loops_for(fn, target_s) for _, fn in fns]
    samples = [[] for _ in fns]
    for r in range(rounds):
        order = list(range(len(fns)))
        order = order[r % len(order):] + order[: r % len(order)]
        for i in order:
            fn = fns[i][1]
            n = loops[i]
            t0 = time.perf_counter()
            while time.perf_counter() - t0 < WARM_S:
                fn()
            t0 = clock()
            for _ in range(n):
                fn()
            samples[i].append((clock() - t0) / n)
    return [statistics.median(s) for s in samples]


def numexpr_module():
    """numexpr, or None where it is not installed."""
    try:
        import numexpr  # type: ignore[import-untyped]
    except ImportError:
        return None
    return numexpr


def numpy_eval(ex, env):
    """The expression evaluated by NumPy: its names are NumPy's (`tanh`, `arctan2`, `hypot`)."""
    return eval(ex, {"__builtins__": {}, **vars(np)}, env)  # noqa: S307 (kiln's own table)


def draw(domain, n, rng, dtype):
    """n values from a domain of the function table: ("uniform" | "log" | "signed-log", lo, hi)."""
    kind, lo, hi = domain
    u = rng.random(n)
    if kind == "uniform":
        v = lo + (hi - lo) * u
    else:
        v = np.clip(np.exp(np.log(lo) + (np.log(hi) - np.log(lo)) * u), lo, hi)
        if kind == "signed-log":
            v = np.where(rng.random(n) < 0.5, -v, v)
        elif kind != "log":
            raise ValueError(f"unknown domain kind {kind!r}")
    return v.astype(dtype)


def function_table():
    """The function table of `kiln bench --functions`: (name, expression, x domains, y domains)."""
    from . import _kiln

    return _kiln.bench_functions()


def agrees(got, want, dtype, atol=None):
    """Whether a result agrees with NumPy's float64 one: relative 1e-12 (float64) or 1e-5
    (float32), NaN where NumPy has NaN, the same shape; `atol` (default: that relative bound of the
    smallest normal) for a program whose result may cancel to nearly zero."""
    got = np.asarray(got)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    atol = rtol * np.finfo(dtype).tiny if atol is None else atol
    return got.shape == want.shape and bool(np.allclose(got.astype(np.float64), want, rtol=rtol, atol=atol, equal_nan=True))


def json_row(kernel, n, dtype, variant, seconds, ok=True, threads=1, **extra):
    """One measurement as the JSON object `kiln bench --json` prints (its keys, and these extra)."""
    row = {"kernel": kernel, "n": n, "dtype": dtype, "variant": variant, "threads": threads,
           "ns_per_elem": round(seconds * 1e9 / max(n, 1), 4), "ok": ok}
    row.update(extra)
    return json.dumps(row)


def function_variants(ex, env, dtype, numexpr):
    """What to time for one function: (label, callable); numexpr only where it has the function
    (and gives a result of the inputs' type, as the other two do)."""
    fns = [("kiln", lambda: kiln.evaluate(ex, local_dict=env))]
    if numexpr is not None:
        try:
            r = numexpr.evaluate(ex, local_dict=env)
        except Exception:  # noqa: BLE001 (a function numexpr lacks: its error types vary)
            r = None
        if r is not None and r.dtype == dtype:
            fns.append(("numexpr", lambda: numexpr.evaluate(ex, local_dict=env)))
    fns.append(("numpy", lambda: numpy_eval(ex, env)))
    return fns


def report(args, emit, name, n, dname, times, lead):
    """One measurement's JSON rows, or its table row (`lead`, N, each variant's ns per element, the
    speeds against NumPy and numexpr)."""
    if args.json:
        for label, t in times.items():
            emit(json_row(name, n, dname, label, t))
        return
    ns = {k: t * 1e9 / n for k, t in times.items()}
    ne = f"{ns['numexpr']:8.3f}" if "numexpr" in ns else f"{'-':>8}"
    vs_ne = f"{ns['numexpr'] / ns['kiln']:9.2f}x" if "numexpr" in ns else f"{'-':>10}"
    emit(f"{lead} {n:>8} {ns['kiln']:8.3f} {ns['numpy']:8.3f} {ne} {ns['numpy'] / ns['kiln']:8.2f}x {vs_ne}")


def run_functions(args, names, dtypes, sizes, emit):
    """The function table: per function, type and N, kiln, numexpr and NumPy, checked, timed."""
    numexpr = numexpr_module()
    if numexpr is not None:
        numexpr.set_num_threads(1)
    kiln.set_num_threads(1)
    table = [f for f in function_table() if names is None or f[0] in names]
    if names is not None:
        unknown = set(names) - {f[0] for f in table}
        if unknown:
            raise SystemExit(f"unknown function(s) {', '.join(sorted(unknown))} "
                             f"(known: {', '.join(f[0] for f in function_table())})")
    if not args.json:
        emit(f"{'function':<9} {'type':<4} {'N':>8} {'kiln':>8} {'numpy':>8} {'numexpr':>8} "
             f"{'vs numpy':>9} {'vs numexpr':>10}   (ns/elem; vs: their time / kiln's, above 1 kiln is faster)")
    for name, ex, xdom, ydom in table:
        for dname, dtype in dtypes:
            for n in sizes:
                which = 1 if dtype == np.float32 else 0
                rng = np.random.default_rng(n)
                env = {"x": draw(xdom[which], n, rng, dtype)}
                if ydom is not None:
                    env["y"] = draw(ydom[which], n, rng, dtype)
                want = np.asarray(numpy_eval(ex, {k: v.astype(np.float64) for k, v in env.items()}))
                fns = function_variants(ex, env, dtype, numexpr)
                for label, fn in fns:
                    if not agrees(fn(), want, dtype):
                        raise SystemExit(f"{name} {dname} N={n}: {label} disagrees with NumPy's float64")
                times = dict(zip((label for label, _ in fns), measure(fns, args.rounds, args.sample_ms / 1e3)))
                report(args, emit, name, n, dname, times, f"{name:<9} {dname:<4}")


def run_programs(args, emit):
    """The small programs: kiln.evaluate, numexpr (one thread) and NumPy, checked, timed."""
    numexpr = numexpr_module()
    if numexpr is not None:
        numexpr.set_num_threads(1)
    kiln.set_num_threads(1)
    if not args.json:
        emit(f"{'program':<20} {'size':<10} {'kiln ms':>9} {'numpy ms':>9} {'numexpr ms':>10} {'vs numpy':>9} {'vs numexpr':>10}")
    for ex, shapes in PROGRAMS.items():
        rng = np.random.default_rng(0)
        env = {k: rng.random(shape) * 6 - 3 for k, shape in shapes.items()}
        n = max(v.size for v in env.values())
        want = np.asarray(numpy_eval(ex, env))
        fns = function_variants(ex, env, np.float64, numexpr)
        for label, fn in fns:
            # values of order 1 (|M| < 3) that may cancel: an absolute bound, as `kiln bench --programs`
            if not agrees(fn(), want, np.float64, atol=1e-12):
                raise SystemExit(f"{ex}: {label} disagrees with NumPy")
        times = dict(zip((label for label, _ in fns), measure(fns, args.rounds, args.sample_ms / 1e3)))
        size_text = "x".join(map(str, next(iter(shapes.values()))))
        if args.json:
            for label, t in times.items():
                emit(json_row(ex, n, "f64", label, t, ms=round(t * 1e3, 4)))
            continue
        ne = f"{times['numexpr'] * 1e3:10.3f}" if "numexpr" in times else f"{'-':>10}"
        vs_ne = f"{times['numexpr'] / times['kiln']:9.2f}x" if "numexpr" in times else f"{'-':>10}"
        emit(f"{ex:<20} {size_text:<10} {times['kiln'] * 1e3:9.3f} {times['numpy'] * 1e3:9.3f} {ne} "
             f"{times['numpy'] / times['kiln']:8.2f}x {vs_ne}")


#: the byte-string rows: (kiln's and numexpr's expression, NumPy's function of the array `s`)
STRINGS = {
    "s == b'abc'": lambda s: s == b"abc",
    "contains(s, b'ab')": lambda s: np.char.find(s, b"ab") >= 0,
}


def strings(n, rng):
    """n byte strings of 0 to 10 bytes from 'abc ', as an `S10` array."""
    letters = np.frombuffer(b"abc ", dtype="S1")
    chars = letters[rng.integers(0, 4, size=(n, 10))]
    lengths = rng.integers(0, 11, size=n)
    chars[np.arange(10)[None, :] >= lengths[:, None]] = b""
    return chars.view("S10").reshape(n)


def single_threaded():
    """numexpr (if installed) and kiln on one thread; numexpr's module or None."""
    numexpr = numexpr_module()
    if numexpr is not None:
        numexpr.set_num_threads(1)
    kiln.set_num_threads(1)
    return numexpr


def race(args, emit, numexpr, ex, env, numpy_call, agrees, row):
    """`ex` by kiln.evaluate, numexpr.evaluate (if installed) and NumPy (`numpy_call`) on `env`,
    each result checked by `agrees` first (a message where it disagrees), timed and reported;
    `row` is (the row's name, N, its type's name, the table's leading columns)."""
    fns = [("kiln", lambda: kiln.evaluate(ex, local_dict=env))]
    if numexpr is not None:
        fns.append(("numexpr", lambda: numexpr.evaluate(ex, local_dict=env)))
    fns.append(("numpy", numpy_call))
    name, n, dname, lead = row
    for label, fn in fns:
        if not agrees(fn()):
            raise SystemExit(f"{name} {dname} N={n}: {label} disagrees with NumPy")
    times = dict(zip((label for label, _ in fns), measure(fns, args.rounds, args.sample_ms / 1e3)))
    report(args, emit, name, n, dname, times, lead)


def run_strings(args, sizes, emit):
    """The byte-string rows: kiln.evaluate, numexpr (one thread) and NumPy, checked, timed."""
    numexpr = single_threaded()
    if not args.json:
        emit(f"{'expression':<20} {'N':>8} {'kiln':>8} {'numpy':>8} {'numexpr':>8} {'vs numpy':>9} "
             f"{'vs numexpr':>10}   (ns/elem, S10; vs: their time / kiln's, above 1 kiln is faster)")
    for ex, numpy_fn in STRINGS.items():
        for n in sizes:
            env = {"s": strings(n, np.random.default_rng(n))}
            want = numpy_fn(env["s"])

            def agrees(got, want=want):
                return got.dtype == want.dtype and np.array_equal(got, want)

            race(args, emit, numexpr, ex, env, lambda env=env, f=numpy_fn: f(env["s"]), agrees,
                 (ex, n, "S10", f"{ex:<20}"))


#: the complex rows: (kiln's and numexpr's expression, NumPy's function of `z` and `w`)
COMPLEX = {
    "z*w + 1j": lambda z, w: z * w + 1j,
    "z / w": lambda z, w: z / w,
    "abs(z)": lambda z, w: np.abs(z),
    "exp(z)": lambda z, w: np.exp(z),
    "sqrt(z)": lambda z, w: np.sqrt(z),
    "sum(z*w)": lambda z, w: np.sum(z * w),
}


def run_complex(args, sizes, emit):
    """The complex rows: kiln.evaluate, numexpr (one thread) and NumPy, checked, timed."""
    numexpr = single_threaded()
    if not args.json:
        emit(f"{'expression':<12} {'type':<10} {'N':>8} {'kiln':>8} {'numpy':>8} {'numexpr':>8} {'vs numpy':>9} "
             f"{'vs numexpr':>10}   (ns/elem; vs: their time / kiln's, above 1 kiln is faster)")
    for ex, numpy_fn in COMPLEX.items():
        for dname, dtype, rtol in (("complex128", np.complex128, 1e-12), ("complex64", np.complex64, 1e-5)):
            for n in sizes:
                parts = np.random.default_rng(n).random((4, n)) * 4 - 2
                env = {"z": (parts[0] + 1j * parts[1]).astype(dtype), "w": (parts[2] + 1j * parts[3]).astype(dtype)}
                want = np.asarray(numpy_fn(env["z"].astype(np.complex128), env["w"].astype(np.complex128)))
                tol = rtol * (n if want.ndim == 0 else 1)

                def agrees(got, want=want, tol=tol):
                    got = np.asarray(got)
                    return got.shape == want.shape and np.allclose(got, want, rtol=tol, atol=tol)

                race(args, emit, numexpr, ex, env, lambda env=env, f=numpy_fn: f(env["z"], env["w"]), agrees,
                     (ex, n, dname, f"{ex:<12} {dname:<10}"))


#: the reduction rows: (kiln's expression, NumPy's call on the inputs `x` and `m` (x as rows of
#: 1000), the types it runs in); `sum(x*x)` is NumPy's `np.dot(x, x)`, as its users write it
REDUCTIONS = {
    "sum(x)": (lambda x, m: x.sum(), ("f64", "f32", "i64", "i32", "bool")),
    "max(x)": (lambda x, m: x.max(), ("f64", "f32", "i64", "i32", "bool")),
    "min(x)": (lambda x, m: x.min(), ("f64", "f32", "i64", "i32")),
    "argmax(x)": (lambda x, m: np.argmax(x), ("f64", "f32", "i64", "i32", "bool")),
    "argmin(x)": (lambda x, m: np.argmin(x), ("f64", "f32", "i64", "i32")),
    "any(x > 2)": (lambda x, m: (x > 2).any(), ("f64", "f32", "i64", "i32")),
    "any(x)": (lambda x, m: x.any(), ("bool",)),
    "sum(~x)": (lambda x, m: (~x).sum(), ("bool",)),
    "mean(x)": (lambda x, m: x.mean(), ("f64", "f32", "i64", "i32")),
    "sum(x*x)": (lambda x, m: np.dot(x, x), ("f64", "f32")),
    "sum(m, axis=1)": (lambda x, m: m.sum(axis=1), ("f64", "f32", "i64", "bool")),
    "sum(m, axis=0)": (lambda x, m: m.sum(axis=0), ("i64", "bool")),
    "max(m, axis=0)": (lambda x, m: m.max(axis=0), ("f64", "f32", "i64", "i32")),
    "any(m, axis=0)": (lambda x, m: m.any(axis=0), ("bool",)),
    "max(m, axis=0) - min(m, axis=0)": (lambda x, m: m.max(axis=0) - m.min(axis=0), ("f64", "f32")),
    "max(m, axis=1)": (lambda x, m: m.max(axis=1), ("f64", "f32")),
    "argmax(m, axis=1)": (lambda x, m: np.argmax(m, axis=1), ("f64", "f32", "i64", "i32")),
    "var(x)": (lambda x, m: x.var(), ("f64", "f32")),
    "std(m, axis=1)": (lambda x, m: m.std(axis=1), ("f64", "f32")),
}

REDUCTION_TYPES = {"f64": np.float64, "f32": np.float32, "i64": np.int64, "i32": np.int32, "bool": np.bool_}


def run_reductions(args, sizes, emit):
    """The reduction rows: kiln.evaluate, numexpr (one thread, where it has the reduction) and
    NumPy's call, checked, timed."""
    numexpr = single_threaded()
    if not args.json:
        emit(f"{'expression':<16} {'type':<5} {'N':>8} {'kiln':>8} {'numpy':>8} {'numexpr':>8} {'vs numpy':>9} "
             f"{'vs numexpr':>10}   (ns/elem; vs: their time / kiln's, above 1 kiln is faster)")
    for ex, (numpy_fn, dnames) in REDUCTIONS.items():
        for dname in dnames:
            dtype = REDUCTION_TYPES[dname]
            for n in sizes:
                rng = np.random.default_rng(n)
                if dname in ("i64", "i32"):
                    x = rng.integers(-(10**6), 10**6, n)
                elif dname == "bool":
                    # rare trues (about 3 in 1e5: the first some 30,000 points in, often none
                    # at N = 1e4): a mask that a reduction reads well into, as `mask.any()`
                    # over mostly false data
                    x = rng.standard_normal(n) > 4.0
                else:
                    x = rng.standard_normal(n)
                x = x.astype(dtype)
                env = {"x": x, "m": x.reshape(-1, 1000) if n % 1000 == 0 else x.reshape(1, -1)}
                want = np.asarray(numpy_fn(env["x"], env["m"]))
                exact = not ex.startswith(("sum", "mean", "var", "std"))
                # var and std: two passes against kiln's blocks, each rounded once to the type
                moments = ex.startswith(("var", "std"))
                # a sum of n terms, associated otherwise: within n ulps of the sum of magnitudes
                eps = 0.0 if exact else n * float(np.finfo(np.float32 if dname == "f32" else np.float64).eps)
                scale = float(np.sum(np.abs(x.astype(np.float64) ** (2 if "x*x" in ex else 1))))

                def agrees(got, want=want, exact=exact, eps=eps, scale=scale, moments=moments, dname=dname):
                    got = np.asarray(got)
                    if got.shape != want.shape:
                        return False
                    if moments:
                        unit = float(np.finfo(np.float32 if dname == "f32" else np.float64).eps)
                        return bool(np.allclose(got, want, rtol=1e3 * unit, atol=0))
                    if exact:
                        return bool(np.array_equal(got, want))
                    return bool(np.all(np.abs(got.astype(np.float64) - want) <= eps * max(scale, 1.0) / max(n, 1) + eps * np.abs(want)))

                fns = [("kiln", lambda env=env: kiln.evaluate(ex, local_dict=env))]
                if numexpr is not None:
                    try:
                        r = numexpr.evaluate(ex, local_dict={"x": x})
                    except Exception:  # noqa: BLE001 (a reduction numexpr lacks: its error types vary)
                        r = None
                    if r is not None and agrees(r):
                        fns.append(("numexpr", lambda: numexpr.evaluate(ex, local_dict={"x": x})))
                fns.append(("numpy", lambda env=env, f=numpy_fn: f(env["x"], env["m"])))
                for label, fn in fns:
                    if not agrees(fn()):
                        raise SystemExit(f"{ex} {dname} N={n}: {label} disagrees with NumPy")
                times = dict(zip((label for label, _ in fns), measure(fns, args.rounds, args.sample_ms / 1e3)))
                report(args, emit, ex, n, dname, times, f"{ex:<16} {dname:<5}")


def size(text):
    return int(float(text))


def run_kernels(args, names, dtype, sizes, emit):
    """The seed kernels: per N and kernel, the variants, checked, timed."""
    dname = "f32" if dtype == np.float32 else "f64"
    numexpr = numexpr_module()
    peer = f"numexpr {numexpr.__version__} ({numexpr.get_num_threads()} threads)" if numexpr else "numexpr not installed"
    if not args.json:
        emit(f"# kiln {kiln.__version__}, numpy {np.__version__}, {peer}; Python {sys.version.split()[0]}, "
             f"{os.cpu_count()} cores, {dname}, median of {args.rounds} interleaved rounds")
        header = f"{'kernel':<9} {'N':>9} {'variant':<17} {'us/call':>10} {'ns/elem':>8} {'vs numpy':>9} {'vs numexpr':>10}"
        emit(header)
        emit("-" * len(header))
    for n in sizes:
        for name in names:
            env = inputs(n, dtype)
            fns = variants(name, env)
            check(name, fns, env, dtype)
            times = measure(fns, args.rounds, args.sample_ms / 1e3)
            by = dict(zip((label for label, _ in fns), times))
            for (label, _), t in zip(fns, times):
                if args.json:
                    # the seed kernels run kiln and numexpr on their default thread counts
                    threads = {"numexpr": numexpr.get_num_threads() if numexpr else 1, "numpy": 1}.get(
                        label, kiln.get_num_threads())
                    emit(json_row(name, n, dname, label, t, threads=threads))
                    continue
                vs_np = f"{by['numpy'] / t:8.2f}x"
                vs_ne = f"{by['numexpr'] / t:9.2f}x" if "numexpr" in by else f"{'-':>10}"
                emit(f"{name:<9} {n:>9} {label:<17} {t * 1e6:>10.2f} {t * 1e9 / n:>8.3f} {vs_np} {vs_ne}")


def emit(line):
    print(line)
    sys.stdout.flush()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--dask" in argv:
        # kiln.dask against plain Dask on a LocalCluster: its own options (see kiln.dask_bench)
        from . import dask_bench

        return dask_bench.main([a for a in argv if a != "--dask"])
    p = argparse.ArgumentParser(prog="python -m kiln.bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", help="comma-separated N (default 1e2..1e7; with --functions 1e4,1e6)")
    p.add_argument("--dtype", choices=["f64", "f32", "both"],
                   help="the data's type (default f64; with --functions both)")
    p.add_argument("--kernels", help="comma-separated seed kernels (with --functions: function names)")
    p.add_argument("--functions", action="store_true",
                   help="the function table of `kiln bench --functions` against NumPy and numexpr, one thread")
    p.add_argument("--programs", action="store_true", help="small whole programs against NumPy and numexpr")
    p.add_argument("--reductions", action="store_true",
                   help="reductions of float64, float32, int64, int32 and bool values against NumPy's calls and numexpr, one thread")
    p.add_argument("--complex", action="store_true",
                   help="complex128 and complex64 operations against NumPy and numexpr, one thread")
    p.add_argument("--strings", action="store_true",
                   help="byte-string comparisons and contains() against NumPy and numexpr, one thread")
    p.add_argument("--json", action="store_true", help="one JSON object per measurement instead of the table")
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds; the median is reported")
    p.add_argument("--sample-ms", type=float, default=5.0, help="time per sample (calls are repeated to fill it)")
    p.add_argument("--cpu-time", action="store_true",
                   help="time by this process's CPU time, not wall time (one-thread runs on a loaded machine)")
    args = p.parse_args(argv)
    CLOCK[0] = time.process_time if args.cpu_time else time.perf_counter
    types = {"f64": [("f64", np.float64)], "f32": [("f32", np.float32)]}
    types["both"] = types["f64"] + types["f32"]
    if args.programs:
        return run_programs(args, emit)
    if args.reductions:
        return run_reductions(args, [size(s) for s in (args.sizes or "1e4,1e6").split(",")], emit)
    if args.complex:
        return run_complex(args, [size(s) for s in (args.sizes or "1e2,1e4,1e6").split(",")], emit)
    if args.strings:
        return run_strings(args, [size(s) for s in (args.sizes or "1e4,1e6").split(",")], emit)
    if args.functions:
        sizes = [size(s) for s in (args.sizes or "1e4,1e6").split(",")]
        names = args.kernels.split(",") if args.kernels else None
        return run_functions(args, names, types[args.dtype or "both"], sizes, emit)
    sizes = [size(s) for s in (args.sizes or "1e2,1e3,1e4,1e5,1e6,1e7").split(",")]
    names = (args.kernels or ",".join(KERNELS)).split(",")
    for n in names:
        if n not in KERNELS:
            p.error(f"unknown kernel {n!r} (known: {', '.join(KERNELS)})")
    for _, dtype in types[args.dtype or "f64"]:
        run_kernels(args, names, dtype, sizes, emit)


if __name__ == "__main__":
    # NumPy's BLAS calls (`np.dot`, the sum of squares' row) on one thread, as every other variant:
    # the BLAS reads its thread count when NumPy loads, so the bench starts again with it set
    if "OPENBLAS_NUM_THREADS" not in os.environ:
        one = {k: "1" for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}
        os.execve(sys.executable, [sys.executable, "-m", "kiln.bench", *sys.argv[1:]], {**os.environ, **one})
    main()
