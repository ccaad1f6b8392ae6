"""NumPy parity over random expressions: float32 and float64, broadcasting, every layout NumPy
makes (C, Fortran, sliced, negative strides, byte-swapped, unaligned, 0-d), NaN, ±inf, -0.0 and
subnormals in the data.

Expressions of exactly rounded operations (+ - * / sqrt abs minimum maximum where, comparisons)
must agree with NumPy bit for bit (any NaN equals any NaN); a transcendental applied on top is
compared within a few ULP, as kiln's math is within 1-2 ULP of libm and NumPy's within a few.
"""

import random

import numpy as np
import pytest

import kiln

SPICY = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-310, -1e-310, 1.0, -1.0, 3.5, 1e300, -1e-300]
SPICY32 = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1e-40, -1e-40, 1.0, -1.0, 3.5, 1e30, -1e-30]


def data(rng, shape, dtype):
    """Random values with special ones sprinkled in."""
    x = rng.standard_normal(shape) * 10
    flat = x.reshape(-1)
    spicy = SPICY32 if dtype == np.float32 else SPICY
    for i in range(0, flat.size, 3):
        flat[i] = spicy[(i // 3) % len(spicy)]
    return x.astype(dtype)


def layout(x, kind):
    """`x`'s values in another memory layout."""
    if kind == "c":
        return x
    if kind == "fortran":
        return np.asfortranarray(x)
    if kind == "reversed":
        y = np.ascontiguousarray(x[tuple(slice(None, None, -1) for _ in x.shape)])
        return y[tuple(slice(None, None, -1) for _ in x.shape)]
    if kind == "sliced":
        big = np.zeros(tuple(2 * n + 1 for n in x.shape), dtype=x.dtype)
        view = big[tuple(slice(1, None, 2) for _ in x.shape)]
        view[...] = x
        return view
    if kind == "byteswapped":
        return x.astype(x.dtype.newbyteorder("S"))
    if kind == "unaligned":
        raw = np.zeros(x.nbytes + 1, dtype=np.uint8)
        y = raw[1:].view(x.dtype).reshape(x.shape)
        y[...] = x
        assert not y.flags.aligned or x.size == 0
        return y
    raise AssertionError(kind)


LAYOUTS = ["c", "fortran", "reversed", "sliced", "byteswapped", "unaligned"]
# x, y, z broadcast together: (4, 5), (5,), (4, 1); w is 0-d
SHAPES = {"x": (4, 5), "y": (5,), "z": (4, 1), "w": ()}

BINARY = ["+", "-", "*", "/"]
CALLS = ["minimum", "maximum"]


def exact_expr(rng, depth):
    """A random expression of exactly rounded operations, as (kiln text, NumPy text). Every
    subexpression but a bare literal reads an input, so that NumPy types it as kiln does (NumPy
    makes `np.sqrt(0.5)` a float64 scalar, which widens; kiln folds it into a literal, which does
    not)."""
    text, numpy_text, has_name = _expr(rng, depth)
    return (text, numpy_text) if has_name else ("x", "x")


def _expr(rng, depth):
    if depth == 0 or rng.random() < 0.25:
        leaf = rng.choice(["x", "y", "z", "w", "x", "y", "2.5", "0.5", "-3"])
        return leaf, leaf, leaf[0].isalpha()
    kind = rng.random()
    a, na, ha = _expr(rng, depth - 1)
    if not ha:
        a, na, ha = "x", "x", True
    if kind < 0.45:
        b, nb, _ = _expr(rng, depth - 1)
        op = rng.choice(BINARY)
        return f"({a} {op} {b})", f"({na} {op} {nb})", True
    if kind < 0.6:
        b, nb, _ = _expr(rng, depth - 1)
        f = rng.choice(CALLS)
        return f"{f}({a}, {b})", f"np.{f}({na}, {nb})", True
    if kind < 0.7:
        return f"sqrt(abs({a}))", f"np.sqrt(np.abs({na}))", True
    if kind < 0.8:
        return f"-{a}", f"-{na}", True
    b, nb, _ = _expr(rng, depth - 1)
    c, nc, hc = _expr(rng, depth - 1)
    if not hc:
        c, nc = "y", "y"
    cmp = rng.choice(["<", "<=", ">", ">=", "==", "!="])
    return f"where({a} {cmp} {b}, {b}, {c})", f"np.where({na} {cmp} {nb}, {nb}, {nc})", True


def assert_same_bits(got, want):
    """Equal values and dtype; any NaN equals any NaN."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("seed", range(60))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_random_exact_expressions(seed, dtype):
    rng = random.Random(seed)
    nrng = np.random.default_rng(seed)
    text, numpy_text = exact_expr(rng, 4)
    lay = LAYOUTS[seed % len(LAYOUTS)]
    values = {n: data(nrng, s, dtype) for n, s in SHAPES.items()}
    env = {n: layout(v, lay) if v.ndim else v for n, v in values.items()}
    with np.errstate(all="ignore"):
        want = np.asarray(eval(numpy_text, {"np": np}, dict(values)))
    got = kiln.evaluate(text, local_dict=env)
    assert_same_bits(got, want)
    # the inputs are not written
    for n, v in values.items():
        np.testing.assert_array_equal(env[n], v)


ULP_FUNCS = ["exp", "log", "sin", "cos", "tanh", "expm1", "log1p", "arctan"]


@pytest.mark.parametrize("seed", range(24))
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_random_transcendental_of_exact(seed, dtype):
    rng = random.Random(1000 + seed)
    nrng = np.random.default_rng(1000 + seed)
    inner, numpy_inner = exact_expr(rng, 2)
    f = ULP_FUNCS[seed % len(ULP_FUNCS)]
    values = {n: data(nrng, s, dtype) for n, s in SHAPES.items()}
    env = {n: layout(v, LAYOUTS[seed % len(LAYOUTS)]) if v.ndim else v for n, v in values.items()}
    with np.errstate(all="ignore"):
        want = np.asarray(getattr(np, f)(eval(numpy_inner, {"np": np}, dict(values))))
    got = kiln.evaluate(f"{f}({inner})", local_dict=env)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    finite = np.isfinite(want)
    np.testing.assert_array_equal(got[~finite], want[~finite])
    # a few ULP, in units of the result's magnitude (1e-300-sized results: absolutely)
    np.testing.assert_array_max_ulp(got[finite], want[finite], maxulp=4, dtype=dtype)


@pytest.mark.parametrize("lay", LAYOUTS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_layouts_of_a_reduction(lay, dtype):
    x = data(np.random.default_rng(7), (6, 9), dtype)
    x[~np.isfinite(x) | (np.abs(x) > 1e10)] = 1.0
    v = layout(x, lay)
    got = kiln.evaluate("sum(v * v, axis=1)", local_dict={"v": v})
    want = np.sum(x.astype(np.float64) ** 2, axis=1).astype(dtype)
    np.testing.assert_allclose(got, want, rtol=1e-6 if dtype == np.float32 else 1e-14)


def test_mixed_float_types_promote_to_float64():
    x = np.arange(5, dtype=np.float32)
    y = np.arange(5, dtype=np.float64)
    got = kiln.evaluate("x * y + 1")
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, x * y + 1)


def test_scalars_python_and_numpy():
    x = np.arange(4, dtype=np.float32)
    for k, dtype in [(2.5, np.float64), (np.float64(2.5), np.float64), (np.float32(2.5), np.float32)]:
        got = kiln.evaluate("x * k", local_dict={"x": x, "k": k})
        # numexpr binds a scalar as a 0-d array: a float64 one widens, as NumPy's arrays do
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, (x * np.asarray(k)).astype(dtype))
    assert kiln.evaluate("k * 2", local_dict={"k": np.array(3.0)}).shape == ()
