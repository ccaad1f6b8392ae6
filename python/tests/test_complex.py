"""Complex numbers through kiln.numexpr: complex64 and complex128 arrays, `1j` literals, NumPy's
promotion, numexpr's functions on them, checked against NumPy."""

import numpy as np
import pytest

import kiln.numexpr as ne

rng = np.random.default_rng(7)
N = 37  # not a multiple of any vector width
z = (rng.standard_normal(N) + 1j * rng.standard_normal(N)) * 2
w = (rng.standard_normal(N) + 1j * rng.standard_normal(N)) * 2
x = rng.standard_normal(N)
f = x.astype(np.float32)
z64 = z.astype(np.complex64)

FUNCS = ["sqrt", "exp", "log", "log1p", "expm1", "log10", "log2", "sin", "cos", "tan", "sinh", "cosh",
         "tanh", "arcsin", "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "conj"]


@pytest.mark.parametrize("func", FUNCS)
def test_functions_agree_with_numpy(func):
    for data, rtol in ((z, 1e-13), (z64, 1e-5)):
        got = ne.evaluate(f"{func}(v)", local_dict={"v": data})
        want = getattr(np, {"conj": "conjugate"}.get(func, func))(data)
        assert got.dtype == want.dtype, (func, got.dtype, want.dtype)
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0)


@pytest.mark.parametrize(
    "expr",
    ["z*w + 1j", "z / w", "z ** 2", "z ** 2.5", "z ** w", "2 ** z", "abs(z) + real(z) * imag(w)",
     "where(x > 0, z, w)", "z == w", "z != z", "z.real + z.imag", "complex(x, 2*x)", "x * 1j + z",
     "sum(z * w)", "prod(z / abs(z))", "sign(z)", "round(z * 3)"],
)
def test_expressions_agree_with_numpy(expr):
    env = {"z": z, "w": w, "x": x, "real": np.real, "imag": np.imag, "where": np.where, "abs": np.abs,
           "complex": lambda a, b: a + 1j * b, "sum": np.sum, "prod": np.prod, "sign": np.sign,
           "round": np.round}
    got = ne.evaluate(expr, local_dict={"z": z, "w": w, "x": x})
    want = eval(expr, env)
    assert np.asarray(got).dtype == np.asarray(want).dtype, expr
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_numpys_promotion():
    assert ne.evaluate("f * 1j").dtype == np.complex64  # a Python complex is weak
    assert ne.evaluate("x * 1j").dtype == np.complex128
    assert ne.evaluate("z64 + f").dtype == np.complex64
    assert ne.evaluate("z64 + x").dtype == np.complex128
    assert ne.evaluate("abs(z64)").dtype == np.float32
    assert ne.evaluate("v + 1", local_dict={"v": 1 + 2j}) == 2 + 2j


def test_what_complex_numbers_do_not_have():
    for expr in ("z < w", "floor(z)", "z % w", "z // w", "arctan2(z, w)", "max(z)", "cummax(z)"):
        with pytest.raises(NotImplementedError):
            ne.evaluate(expr)


def test_out_and_strided_views():
    out = np.empty(N, np.complex128)
    ne.evaluate("z * 2", out=out)
    np.testing.assert_array_equal(out, z * 2)
    v = z[::-3]
    np.testing.assert_array_equal(ne.evaluate("v + v"), v + v)
    assert ne.evaluate("e * 2", local_dict={"e": z[:0]}).shape == (0,)


def test_numexpr_object_with_a_complex_signature():
    func = ne.NumExpr("z * 2j + w", signature=[("z", complex), ("w", complex)])
    np.testing.assert_allclose(func(z, w), z * 2j + w, rtol=1e-15)
    assert func.constants == (2j,)
    assert func.signature == b"DD"


def test_reductions_and_scans_that_keep_the_imaginary_part():
    X = np.outer(x, x)
    np.testing.assert_allclose(ne.evaluate("sum(X*1j, axis=0) + sum(X, axis=0)"), X.sum(0) * (1 + 1j))
    np.testing.assert_allclose(ne.evaluate("sum(x*1j) + sum(x*2j)"), np.sum(x) * 3j, atol=1e-12)
    np.testing.assert_allclose(ne.evaluate("sum(x*1j) + max(x)"), np.sum(x) * 1j + x.max())
    # NumPy's accumulate starts from the first value: cumprod([inf+1j, 2]) keeps its 1j
    v = np.array([complex(np.inf, 1), 2])
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(ne.evaluate("cumprod(v)"), np.cumprod(v))
    f = np.ones(3, np.float32)
    assert ne.evaluate("f * -1j").dtype == np.complex64  # a negated complex literal stays weak
    assert ne.evaluate("f * (2 * 1j)").dtype == np.complex64
    with pytest.raises(ValueError, match="variance"):
        ne.evaluate("var(z)")
