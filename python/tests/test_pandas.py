"""pandas on kiln: after `kiln.numexpr.install()` (before pandas is imported) pandas' `eval`,
`query`, column assignment and its numexpr-accelerated arithmetic run on kiln, and give what they
give on numexpr. Each side runs in its own interpreter (pandas binds numexpr when it is imported),
and the kiln side reports the expressions kiln compiled, so that a pandas that quietly fell back to
its own Python engine would fail here."""

import pickle
import subprocess
import sys

import numpy as np
import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("numexpr")

SCRIPT = r"""
import pickle, sys
if sys.argv[1] == "kiln":
    import kiln.numexpr
    kiln.numexpr.install()
import numpy as np
import pandas as pd
import numexpr
from pandas.core.computation import expressions

rng = np.random.default_rng(7)
# above pandas' threshold (1e6 elements) for its numexpr-accelerated arithmetic
n = 1_000_003
df = pd.DataFrame({"a": rng.standard_normal(n), "b": rng.standard_normal(n), "i": rng.integers(-50, 50, n)})
small = pd.DataFrame({"x": np.arange(10.0), "y": np.arange(10.0)[::-1], "k": np.arange(10)})
got = {
    "eval": df.eval("a * 2 + b / 3 - i").to_numpy(),
    "eval_cmp": df.eval("(a > b) & (i < 10)").to_numpy(),
    "query": df.query("a > b and i < 10").index.to_numpy(),
    "query_small": small.query("x < y or k == 7").index.to_numpy(),
    "assign": df.eval("c = a + b * i")["c"].to_numpy(),
    "pd_eval": pd.eval("small.x + small.y * 2").to_numpy(),
    "arith": (df["a"] * df["b"] + df["a"]).to_numpy(),
    "arith_int": (df["i"] * df["i"] - df["i"]).to_numpy(),
    "compare": (df["a"] > df["b"]).to_numpy(),
}
info = {
    "name": numexpr.__name__,
    "version": numexpr.__version__,
    "accelerated": expressions.USE_NUMEXPR and expressions.NUMEXPR_INSTALLED,
}
if sys.argv[1] == "kiln":
    info["compiled"] = sorted(kiln.numexpr._kernels.get(kiln.numexpr.nthreads, {}))
pickle.dump((got, info), sys.stdout.buffer)
"""


def run_pandas(engine):
    r = subprocess.run([sys.executable, "-c", SCRIPT, engine], capture_output=True, timeout=240)
    assert r.returncode == 0, r.stderr.decode()
    return pickle.loads(r.stdout)


@pytest.fixture(scope="module")
def both():
    return run_pandas("kiln"), run_pandas("numexpr")


def test_pandas_accepts_kiln_as_numexpr(both):
    (_, kiln_info), (_, ne_info) = both
    assert kiln_info["name"] == "kiln.numexpr" and kiln_info["version"].startswith("2.14.2+kiln.")
    assert ne_info["name"] == "numexpr" and "kiln" not in ne_info["version"]
    assert kiln_info["accelerated"] and ne_info["accelerated"]


def test_kiln_really_ran(both):
    (_, info), _ = both
    compiled = set(info["compiled"])
    # pandas' accelerated arithmetic (expressions._evaluate_numexpr) names its operands
    # left_value and right_value (a_value and b_value before pandas 3)
    for op in "*+->":
        assert {f"left_value {op} right_value", f"a_value {op} b_value"} & compiled, (op, compiled)
    # and its eval / query engine passes the expression's text, as pandas rewrites it
    assert "(((a) * (2)) + ((b) / (3))) - (i)" in compiled, compiled
    assert "((a) > (b)) & ((i) < (10))" in compiled and "(a) + ((b) * (i))" in compiled, compiled


def test_results_equal_numexprs(both):
    (got, _), (want, _) = both
    assert got.keys() == want.keys()
    for key in want:
        g, w = got[key], want[key]
        assert g.dtype == w.dtype and g.shape == w.shape, key
        if g.dtype.kind == "f":
            # numexpr rounds each operation; kiln may fuse a multiply and an add into one FMA,
            # rounded once: the same value to within a few units in the last place
            np.testing.assert_allclose(g, w, rtol=4e-16, atol=4e-16, err_msg=key)
        else:
            np.testing.assert_array_equal(g, w, err_msg=key)


def test_install_after_pandas_is_refused():
    script = "import pandas, kiln.numexpr\ntry:\n    kiln.numexpr.install()\nexcept RuntimeError as e:\n    print('refused:', e)\n"
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "refused: kiln.numexpr.install() must run before pandas is imported" in r.stdout
