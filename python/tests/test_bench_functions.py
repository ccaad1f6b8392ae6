"""`python -m kiln.bench --functions` and `--programs`: tiny runs (small N, one round), each variant
checked against NumPy's float64 result before it is timed; the table is `kiln bench --functions`'
(kiln._kiln.bench_functions), its expressions NumPy's and numexpr's names."""

import json
import subprocess
import sys

import numpy as np

from kiln import _kiln, bench


def run_bench(*args):
    r = subprocess.run(
        [sys.executable, "-m", "kiln.bench", *args, "--rounds", "1", "--sample-ms", "0.2"],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    return r.stdout


def test_the_table_is_the_rust_benchmarks_and_numpy_computes_every_expression():
    table = _kiln.bench_functions()
    names = [f[0] for f in table]
    assert len(set(names)) == len(names)
    for want in ("exp", "tanh", "arctan2", "hypot", "x**y", "x**1.5", "2.5**x", "cbrt"):
        assert want in names
    rng = np.random.default_rng(0)
    for name, ex, xdom, ydom in table:
        for which, dtype in ((0, np.float64), (1, np.float32)):
            env = {"x": bench.draw(xdom[which], 200, rng, dtype)}
            if ydom is not None:
                env["y"] = bench.draw(ydom[which], 200, rng, dtype)
            kind, lo, hi = xdom[which]
            if kind in ("uniform", "log"):
                assert np.all((env["x"] >= dtype(lo)) & (env["x"] <= dtype(hi))), name
            got = bench.numpy_eval(ex, env)
            assert got.dtype == dtype, (name, got.dtype)
            assert np.all(np.isfinite(got)), name


def test_functions_json_has_every_function_and_type_checked():
    out = run_bench("--functions", "--sizes", "300", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    names = [f[0] for f in _kiln.bench_functions()]
    for name in names:
        for dtype in ("f64", "f32"):
            mine = [r for r in rows if r["kernel"] == name and r["dtype"] == dtype]
            labels = {r["variant"] for r in mine}
            assert {"kiln", "numpy"} <= labels <= {"kiln", "numpy", "numexpr"}, (name, dtype, labels)
            assert all(r["ok"] and r["n"] == 300 and r["ns_per_elem"] > 0 for r in mine)


def test_functions_table_text_and_unknown_names():
    out = run_bench("--functions", "--kernels", "tanh,x**y", "--dtype", "f32", "--sizes", "100")
    lines = [line for line in out.splitlines() if line.startswith(("tanh ", "x**y "))]
    assert len(lines) == 2 and all(" f32 " in line for line in lines)
    r = subprocess.run([sys.executable, "-m", "kiln.bench", "--functions", "--kernels", "nope"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "unknown function(s) nope" in r.stderr


def test_programs_run_checked():
    out = run_bench("--programs", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["variant"] for r in rows} >= {"kiln", "numpy"}
    assert all(r["kernel"] == "tanh(M)*2 + M**2" and r["ok"] and r["ms"] > 0 for r in rows)


def test_bad_domain_kind_is_an_error():
    try:
        bench.draw(("cubic", 1.0, 2.0), 3, np.random.default_rng(0), np.float64)
    except ValueError as e:
        assert "cubic" in str(e)
    else:
        raise AssertionError("no error")


def test_seed_kernels_json_in_both_types():
    out = run_bench("--kernels", "axpy", "--sizes", "100", "--dtype", "both", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["dtype"] for r in rows} == {"f64", "f32"}
    assert {"kiln.evaluate", "kiln.compile", "numpy"} <= {r["variant"] for r in rows}
    assert all(r["kernel"] == "axpy" and r["ok"] and r["threads"] >= 1 for r in rows)
    assert [r["threads"] for r in rows if r["variant"] == "numpy"] == [1, 1]


def test_the_string_rows_run_and_agree_with_numpy():
    out = run_bench("--strings", "--sizes", "100,1000", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["kernel"] for r in rows} == set(bench.STRINGS)
    assert {r["variant"] for r in rows} >= {"kiln", "numpy"}
    assert all(r["ok"] and r["dtype"] == "S10" for r in rows)
    s = bench.strings(1000, np.random.default_rng(0))
    assert s.dtype == np.dtype("S10") and (s == b"").any() and (np.char.find(s, b"ab") >= 0).any()


def test_the_complex_rows_run_and_agree_with_numpy():
    out = run_bench("--complex", "--sizes", "100,1000", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert {r["kernel"] for r in rows} == set(bench.COMPLEX)
    assert {r["variant"] for r in rows} >= {"kiln", "numpy"}
    assert {r["dtype"] for r in rows} == {"complex128", "complex64"}
    assert all(r["ok"] for r in rows)
