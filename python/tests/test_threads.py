"""Python threads calling kiln at once (`concurrent.futures`): the GIL is released while kiln
compiles and runs, and every thread shares one kernel cache. Results must be those of one thread."""

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import kiln
import kiln.numexpr as ne
from kiln import _kiln

EXPRS = ["2*a + 3*b", "sum(a*b, axis=0)", "sin(a) * cos(b) + sqrt(abs(a))", "cumsum(a, axis=1)", "a - max(a, axis=1, keepdims=1)"]


def job(i):
    rng = np.random.default_rng(i)
    a = rng.standard_normal((64, 33))
    b = rng.standard_normal((64, 33))
    ex = EXPRS[i % len(EXPRS)]
    return i, ex, ne.evaluate(ex, local_dict={"a": a, "b": b}), a, b


def test_threads_from_python_agree_with_one_thread():
    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(job, range(400)))
    for i, ex, got, a, b in results:
        np.testing.assert_array_equal(got, ne.evaluate(ex, local_dict={"a": a, "b": b}), err_msg=ex)


def test_one_compiled_kernel_shared_by_threads():
    x = np.arange(100_000.0)
    k = kiln.compile("x * 2 + 1")
    want = x * 2 + 1
    with ThreadPoolExecutor(max_workers=4) as pool:
        outs = list(pool.map(lambda _: k(x=x), range(64)))
    for o in outs:
        np.testing.assert_array_equal(o, want)


def test_threads_compiling_the_same_text_share_the_cache():
    text = "x * 1.25 + 0.5 - x"
    before = _kiln.cache_size()
    x = np.ones(10)
    with ThreadPoolExecutor(max_workers=8) as pool:
        outs = list(pool.map(lambda _: kiln.compile(text)(x=x), range(32)))
    assert _kiln.cache_size() == before + 1
    for o in outs:
        np.testing.assert_array_equal(o, x * 1.25 + 0.5 - x)


def test_out_arrays_per_thread():
    x = np.arange(1000.0)

    def into(i):
        out = np.empty(1000)
        ne.evaluate("x * k", local_dict={"x": x, "k": float(i)}, out=out)
        return i, out

    with ThreadPoolExecutor(max_workers=6) as pool:
        for i, out in pool.map(into, range(120)):
            np.testing.assert_array_equal(out, x * i)
