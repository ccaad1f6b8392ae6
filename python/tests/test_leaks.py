"""Reference counts and memory over 100k calls: inputs, `out` and results are neither leaked nor
freed early, and the process does not grow."""

import gc
import sys

import numpy as np
import pytest

import kiln
import kiln.numexpr as ne

CALLS = 100_000


def rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    except OSError:
        pytest.skip("no /proc/self/statm on this system")


def test_no_leaks_over_100k_calls():
    a = np.arange(100.0)
    b = np.ones(100, np.float32)[::-1]
    out = np.empty(100)
    k = kiln.compile("a * b + sum(a)")
    for _ in range(1000):  # warm: kernels compiled, caches filled; the same calls as below
        ne.evaluate("2*a + 3*b")
        k(a=a, b=b)
        ne.evaluate("2*a + 3*b", out=out)
        r = ne.evaluate("a * s", local_dict={"a": a, "s": 2.5})
    gc.collect()
    refs = (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(out))
    objects = len(gc.get_objects())
    rss = rss_bytes()
    for i in range(CALLS):
        ne.evaluate("2*a + 3*b")
        k(a=a, b=b)
        ne.evaluate("2*a + 3*b", out=out)
        r = ne.evaluate("a * s", local_dict={"a": a, "s": 2.5})
    gc.collect()
    # the name and getrefcount's argument: no hidden owner (the frame's f_locals snapshot, which
    # numexpr's name lookup makes too, was taken before `r` was bound)
    count = sys.getrefcount(r)
    assert count == 2
    assert (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(out)) == refs
    assert len(gc.get_objects()) - objects < 100
    # 400k results of 800 bytes would be 320 MB: a leak of any of them shows
    assert rss_bytes() - rss < 16 * 2**20


def test_errors_do_not_leak():
    a = np.arange(3.0)
    bad = np.ones(4)
    env = {"a": a, "bad": bad}
    refs = (sys.getrefcount(a), sys.getrefcount(bad))
    for _ in range(20_000):
        with pytest.raises(ValueError):
            ne.evaluate("a + bad", local_dict=env)
    assert (sys.getrefcount(a), sys.getrefcount(bad)) == refs
