"""kiln.dask on a real dask.distributed LocalCluster (two worker processes, loopback only, no
dashboard; a four-worker cluster once for the worker-count test): parity with kiln on one machine
and with NumPy on chunked arrays (regular, irregular and 0-size chunks, broadcasting across
chunkings, NaN and inf), every reduction and scan, multi-stage plans, bit-equality across 1, 2 and 4
workers, one compile per worker, clean pickling and laziness."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import dask  # noqa: E402

import kiln  # noqa: E402
import kiln.dask as kd  # noqa: E402


def _cluster(n):
    return distributed.LocalCluster(
        n_workers=n,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",
        worker_dashboard_address="127.0.0.1:0",
        silence_logs=40,
    )


@pytest.fixture(scope="module")
def client():
    with _cluster(2) as cluster, distributed.Client(cluster, set_as_default=False) as c:
        yield c


def run(client, arr):
    return client.compute(arr, sync=True)


RNG = np.random.default_rng(16)
XN = RNG.standard_normal((9, 12))
YN = RNG.standard_normal(12)
ZN = RNG.standard_normal((9, 1))
# NaN and ±inf in places that make reductions, arg-reductions and scans see them
WN = XN.copy()
WN[2, 5] = np.nan
WN[6, 1] = np.inf
WN[7, 3] = -np.inf

CHUNKINGS = {
    "regular": (3, 4),
    "irregular": ((2, 5, 2), (1, 6, 5)),
    "zero": ((4, 0, 5), (6, 0, 0, 6)),
}


def chunked(a, chunks):
    return da.from_array(a, chunks=chunks)


def oracle(ex, **arrays):
    """kiln on one machine, on the whole NumPy arrays."""
    return kiln.evaluate(ex, local_dict=arrays)


# (expression, exact): exact results must be bit-equal to kiln's on one machine; the others are
# sums in another order, within a relative 1e-12
EXPRESSIONS = [
    ("2*x + y*z - 1", True),
    ("where(x > 0, x, -x) * exp(-z)", True),
    ("sum(x*x)", False),
    ("sum(x*y, axis=1)", False),
    ("sum(x + z, axis=0, keepdims=1, initial=2.5)", False),
    ("sum(x, axis=(0, 1), keepdims=True)", False),
    ("prod(1 + x/8, axis=0)", False),
    ("prod(1 + x/8)", False),
    ("min(x)", True),
    ("max(x*y, axis=0)", True),
    ("min(x, axis=1, keepdims=1, initial=-0.5)", True),
    ("max(x, initial=10)", True),
    ("any(x > 2)", True),
    ("all(x > -2, axis=0)", True),
    ("any(x*z > 1, axis=1, keepdims=1)", True),
    ("argmin(x)", True),
    ("argmax(x)", True),
    ("argmin(x, axis=0)", True),
    ("argmax(x + y, axis=1)", True),
    ("argmax(x, axis=-1, keepdims=1)", True),
    ("mean(x)", False),
    ("mean(x*z, axis=1)", False),
    ("var(x)", False),
    ("var(x, axis=0, keepdims=1)", False),
    ("std(x + y, axis=1)", False),
    ("std(x, axis=(0, 1))", False),
    ("cumsum(x, axis=0)", False),
    ("cumsum(x*x, axis=1, exclusive=1)", False),
    ("cumsum(x, axis=0, reverse=1, initial=3)", False),
    ("cumsum(x, axis=1, exclusive=1, reverse=1, initial=-1)", False),
    ("cumsum(x)", False),
    ("cumprod(1 + x/8, axis=1)", False),
    ("cumprod(1 + x/8, axis=0, exclusive=1, reverse=1)", False),
    ("cummax(x, axis=0)", True),
    ("cummin(x + y, axis=1, reverse=1)", True),
    ("cummax(x, axis=1, exclusive=1, initial=0)", True),
    ("cummin(x)", True),
]


def check(got, want, exact):
    got = np.asarray(got)
    want = np.asarray(want)
    assert got.shape == want.shape
    assert got.dtype == want.dtype
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, equal_nan=True)


@pytest.mark.parametrize("chunking", sorted(CHUNKINGS))
@pytest.mark.parametrize("ex,exact", EXPRESSIONS, ids=[e for e, _ in EXPRESSIONS])
def test_parity_with_kiln(client, ex, exact, chunking):
    cx = CHUNKINGS[chunking]
    x = chunked(XN, cx)
    y = chunked(YN, cx[1])
    z = chunked(ZN, (cx[0], 1))
    got = run(client, kd.evaluate(ex, local_dict={"x": x, "y": y, "z": z}))
    check(got, oracle(ex, x=XN, y=YN, z=ZN), exact)


@pytest.mark.parametrize("ex,exact", EXPRESSIONS, ids=[e for e, _ in EXPRESSIONS])
def test_nan_and_inf(client, ex, exact):
    x = chunked(WN, CHUNKINGS["irregular"])
    got = run(client, kd.evaluate(ex, local_dict={"x": x, "y": YN, "z": ZN}))
    check(got, oracle(ex, x=WN, y=YN, z=ZN), exact)


NUMPY = {
    "sum(x*x, axis=1)": lambda x: np.sum(x * x, axis=1),
    "prod(x, axis=0)": lambda x: np.prod(x, axis=0),
    "min(x, axis=1)": lambda x: np.min(x, axis=1),
    "max(x)": np.max,
    "argmin(x)": np.argmin,
    "argmax(x, axis=0)": lambda x: np.argmax(x, axis=0),
    "mean(x, axis=0)": lambda x: np.mean(x, axis=0),
    "var(x)": np.var,
    "std(x, axis=1, keepdims=1)": lambda x: np.std(x, axis=1, keepdims=True),
    "cumsum(x, axis=1)": lambda x: np.cumsum(x, axis=1),
    "cumprod(x, axis=0)": lambda x: np.cumprod(x, axis=0),
    "cummax(x, axis=0)": lambda x: np.maximum.accumulate(x, axis=0),
    "cummin(x)": lambda x: np.minimum.accumulate(x.ravel()),
    "exp(x - max(x, axis=1, keepdims=1)) / sum(exp(x - max(x, axis=1, keepdims=1)), axis=1, keepdims=1)": lambda x: (
        np.exp(x - x.max(axis=1, keepdims=True)) / np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True)
    ),
}


@pytest.mark.parametrize("ex", sorted(NUMPY))
@pytest.mark.parametrize("data", ["finite", "nan_inf"])
def test_parity_with_numpy(client, ex, data):
    xn = XN if data == "finite" else WN
    x = chunked(xn, CHUNKINGS["zero"])
    got = run(client, kd.evaluate(ex, local_dict={"x": x}))
    with np.errstate(invalid="ignore", over="ignore"):
        want = NUMPY[ex](xn)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15, equal_nan=True)


X3 = RNG.standard_normal((5, 6, 7))
EXPRESSIONS_3D = [
    "sum(x, axis=())",
    "sum(x, axis=(0, 2))",
    "max(x, axis=(0, 2), keepdims=1)",
    "argmin(x, axis=1)",
    "argmax(x)",
    "var(x, axis=(1, 2))",
    "x - max(x, axis=0)",
    "mean(x, axis=-1, keepdims=True)",
    "cumsum(x, axis=2, reverse=1, exclusive=1)",
    "cummax(x)",
    "sqrt(sum(x*x))",
]


@pytest.mark.parametrize("ex", EXPRESSIONS_3D)
def test_three_dimensions_and_axis_tuples(client, ex):
    x = chunked(X3, ((2, 0, 3), (4, 2), (3, 1, 3)))
    got = run(client, kd.evaluate(ex, local_dict={"x": x}))
    want = oracle(ex, x=X3)
    assert np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)


def test_float32_accumulates_in_float64(client):
    xn = (RNG.random(10_000) + 1e3).astype(np.float32)
    x = chunked(xn, 1000)
    for ex in ("sum(x)", "mean(x)", "var(x)", "cumsum(x)"):
        got = run(client, kd.evaluate(ex, local_dict={"x": x}))
        want = oracle(ex, x=xn)
        assert got.dtype == np.float32 == want.dtype
        np.testing.assert_allclose(got, want, rtol=2e-7)
    np.testing.assert_allclose(run(client, kd.evaluate("sum(x)", local_dict={"x": x})), np.sum(xn, dtype=np.float64), rtol=1e-7)


def test_softmax_and_layer_norm_plans(client):
    x = chunked(XN, (4, 5))
    softmax = "exp(x - max(x, axis=1, keepdims=1)) / sum(exp(x - max(x, axis=1, keepdims=1)), axis=1, keepdims=1)"
    got = run(client, kd.evaluate(softmax, local_dict={"x": x}))
    np.testing.assert_allclose(got, oracle(softmax, x=XN), rtol=1e-14)
    np.testing.assert_allclose(got.sum(axis=1), 1.0, rtol=1e-14)
    norm = "(x - mean(x, axis=1, keepdims=1)) / sqrt(var(x, axis=1, keepdims=1) + 1e-5) * g + b"
    g, b = RNG.random(12), RNG.random(12)
    got = run(client, kd.evaluate(norm, local_dict={"x": x, "g": chunked(g, 4), "b": b}))
    np.testing.assert_allclose(got, oracle(norm, x=XN, g=g, b=b), rtol=1e-12, atol=1e-13)
    # the repeated max(x, ...) is one Dask array, computed once
    graph = kd.evaluate(softmax, local_dict={"x": x}).__dask_graph__()
    assert sum(1 for name in graph.layers if name.startswith("kiln-max-aggregate")) == 1


def test_broadcast_input_is_not_materialised(client):
    x = chunked(XN, (3, 4))
    y = chunked(YN, 6)  # another chunking of axis 1: Dask's common refinement of both
    z = chunked(ZN, (3, 1))  # a size-1 axis: each block of z is read by a row of x's blocks
    r = kd.evaluate("x*y + z", local_dict={"x": x, "y": y, "z": z})
    assert r.chunks == ((3, 3, 3), (4, 2, 2, 4))
    layers = list(r.__dask_graph__().layers)
    assert not any("broadcast" in name for name in layers)
    # z's graph stays its own three blocks
    assert len(r.__dask_graph__().layers[z.name]) == 3
    check(run(client, r), oracle("x*y + z", x=XN, y=YN, z=ZN), True)


def test_bit_equal_across_1_2_and_4_workers(client):
    x = chunked(np.concatenate([XN.ravel(), WN.ravel()[:50]]) * 1e3, ((37, 0, 41, 80, 0, 0),))
    m = chunked(XN, ((2, 5, 2), (1, 6, 5)))
    exprs = [
        ("sum(x*x)", x),
        ("mean(x)", x),
        ("std(x)", x),
        ("argmax(x)", x),
        ("cumsum(x, exclusive=1)", x),
        ("cumprod(1 + x/4000)", x),
        ("var(x, axis=0)", m),
        ("sum(x, axis=(0, 1))", m),
        ("exp(x - max(x, axis=1, keepdims=1)) / sum(exp(x - max(x, axis=1, keepdims=1)), axis=1, keepdims=1)", m),
    ]
    graphs = [kd.evaluate(ex, local_dict={"x": a}, split_every=3) for ex, a in exprs]
    one = dask.compute(*graphs, scheduler="synchronous")
    two = client.compute(graphs, sync=True)
    with _cluster(4) as cluster, distributed.Client(cluster, set_as_default=False) as c4:
        four = c4.compute(graphs, sync=True)
    threads = dask.compute(*graphs, scheduler="threads", num_workers=4)
    for (ex, _), a, b, c, d in zip(exprs, one, two, four, threads):
        for other in (b, c, d):
            assert np.asarray(a).tobytes() == np.asarray(other).tobytes(), ex


def test_workers_compile_each_text_once(client):
    x = chunked(RNG.standard_normal(64_000), 1000)  # 64 chunks over 2 workers
    before = client.run(kd.cache_info)
    run(client, kd.evaluate("sum(x*x + 1)", local_dict={"x": x}))
    run(client, kd.evaluate("sum(x*x + 1)", local_dict={"x": x}))
    after = client.run(kd.cache_info)
    ran = 0
    for worker, info in after.items():
        assert info["compiles"] == info["kernels"]
        new = info["compiles"] - before[worker]["compiles"]
        # the chunk kernel, at most, whatever the number of tasks the worker ran
        assert new <= 1
        ran += "sum((x * x + 1), axis=0, keepdims=1)" in info["texts"]
    assert ran >= 1


def test_tasks_carry_text_and_pickle(client):
    x = chunked(XN, (3, 4))
    exprs = ["sum(x*x, axis=1)", "argmin(x, axis=0)", "var(x)", "cumsum(x, axis=0, exclusive=1)", "2*x + 1"]
    for ex in exprs:
        graph = dict(kd.evaluate(ex, local_dict={"x": x}).__dask_graph__())
        blob = pickle.dumps(graph)  # no compiled code in a task: plain pickle works
        assert len(blob) < 200_000
        assert b"kiln.dask" in blob
    task = kd._Map("2*x + 1", None, 1, ("x",))
    back = pickle.loads(pickle.dumps(task))
    np.testing.assert_array_equal(back(XN), 2 * XN + 1)
    # the same through the cluster: task functions pickled to worker processes
    np.testing.assert_array_equal(run(client, kd.evaluate("2*x + 1", local_dict={"x": x})), 2 * XN + 1)


def test_lazy_until_compute(client):
    calls = []

    def load():
        calls.append(1)
        return XN

    x = da.from_delayed(dask.delayed(load)(), shape=XN.shape, dtype=XN.dtype)
    r = kd.evaluate("sum(exp(x), axis=0) + 1", local_dict={"x": x})
    s = kd.evaluate("sum(x)", local_dict={"x": x})
    assert calls == []
    assert isinstance(r, da.Array) and r.shape == (12,) and r.dtype == np.float64
    assert isinstance(s, da.Array) and s.shape == ()
    np.testing.assert_allclose(r.compute(scheduler="synchronous"), np.exp(XN).sum(axis=0) + 1, rtol=1e-13)
    assert calls == [1]
    assert isinstance(s.compute(scheduler="synchronous"), np.floating)


def test_compile_and_mixed_inputs(client):
    k = kd.compile("a*x + y")
    assert k.names == ("a", "x", "y")
    x = chunked(XN, (5, 5))
    got = run(client, k(a=0.5, x=x, y=YN))  # a scalar, a Dask array, a NumPy array
    np.testing.assert_array_equal(got, 0.5 * XN + YN)
    got = run(client, k(a=np.float32(0.5), x=x.astype(np.float32), y=YN.astype(np.float32)))
    assert got.dtype == np.float32
    with pytest.raises(KeyError):
        k(a=1.0, x=x)
    with pytest.raises(TypeError):
        k(a=1.0, x=x, y=YN, w=YN)
    # names from the caller's frame, as numexpr
    y = chunked(YN, 4)
    np.testing.assert_array_equal(kd.evaluate("y * 2").compute(scheduler="synchronous"), YN * 2)
    del y


def test_signed_zero_scans():
    z = np.array([-0.0, -0.0, -0.0, -0.0, -0.0])
    for ex in ("cumsum(x)", "cumsum(x, exclusive=1)", "cumsum(x, reverse=1)", "cumsum(x, initial=-0.0)"):
        got = kd.evaluate(ex, local_dict={"x": chunked(z, 2)}).compute(scheduler="synchronous")
        assert np.signbit(got).tolist() == np.signbit(oracle(ex, x=z)).tolist(), ex


def test_empty_arrays():
    e = chunked(np.zeros((0, 4)), (0, 2))
    assert kd.evaluate("sum(x)", local_dict={"x": e}).compute(scheduler="synchronous") == 0.0
    assert kd.evaluate("prod(x, axis=0)", local_dict={"x": e}).compute(scheduler="synchronous").tolist() == [1.0] * 4
    assert np.isnan(kd.evaluate("mean(x)", local_dict={"x": e}).compute(scheduler="synchronous"))
    assert kd.evaluate("max(x, initial=-1)", local_dict={"x": e}).compute(scheduler="synchronous") == -1.0
    assert kd.evaluate("cumsum(x, axis=0)", local_dict={"x": e}).compute(scheduler="synchronous").shape == (0, 4)
    assert kd.evaluate("min(x, axis=1)", local_dict={"x": e}).compute(scheduler="synchronous").shape == (0,)


def test_errors():
    x = chunked(XN, (3, 4))
    with pytest.raises(ValueError, match="empty extent"):
        kd.evaluate("min(x, axis=0)", local_dict={"x": chunked(np.zeros((0, 3)), 1)})
    with pytest.raises(ValueError, match="out of range"):
        kd.evaluate("sum(x, axis=2)", local_dict={"x": x})
    with pytest.raises(ValueError, match="contractions"):
        kd.evaluate("sum(x[i], index=(i,), axis=i)", local_dict={"x": chunked(YN, 4)})
    with pytest.raises(ValueError):
        kd.evaluate("x + y", local_dict={"x": x, "y": chunked(np.zeros(5), 5)})
    with pytest.raises(KeyError):
        kd.evaluate("x + nosuchname", local_dict={"x": x}, global_dict={})
    with pytest.raises(TypeError, match="float32 and float64"):
        kd.evaluate("x + 1", local_dict={"x": da.ones(4, dtype=np.int64)})
    with pytest.raises(SyntaxError):
        kd.evaluate("x +", local_dict={"x": x})
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        kd.evaluate("x + 1", local_dict={"x": x[x[:, 0] > 0]})


def test_stub_and_docstrings():
    import ast
    import pathlib

    stub = pathlib.Path(kd.__file__).with_suffix(".pyi")
    tree = ast.parse(stub.read_text())
    names = {n.name for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    assert set(kd.__all__) <= names
    assert kd.__doc__
    for name in kd.__all__:
        assert getattr(kd, name).__doc__, name
    assert kd.DaskKernel.__call__.__doc__


def test_readme_dask_example_runs(capsys):
    import pathlib

    text = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    start = text.index("```python\n", text.index("## Scaling out with Dask")) + len("```python\n")
    code = text[start : text.index("```", start)]
    exec(compile(code, "README.md", "exec"), {"__name__": "__main__"})
    out = capsys.readouterr().out
    assert "[1. 1.]" in out


def test_dask_bench_runs():
    import subprocess
    import sys

    r = subprocess.run(
        [sys.executable, "-m", "kiln.bench", "--dask", "--n", "2e5", "--chunk", "2e4", "--rounds", "1"],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if not line.startswith(("#", "-", "workload"))]
    assert len(rows) == 8
