"""The package as shipped: type stubs and docstrings for every public name, py.typed, and
`python -m kiln.bench` (a tiny run, checked against NumPy before it times anything)."""

import ast
import pathlib
import subprocess
import sys

import kiln
import kiln.numexpr as ne
from kiln import _kiln

PKG = pathlib.Path(kiln.__file__).parent


def stub_names(path):
    tree = ast.parse(path.read_text())
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.ImportFrom):
            names.update(a.asname or a.name for a in node.names)
    return names


def test_stubs_cover_the_public_names():
    assert (PKG / "py.typed").exists()
    assert set(kiln.__all__) <= stub_names(PKG / "__init__.pyi")
    assert set(ne.__all__) <= stub_names(PKG / "numexpr" / "__init__.pyi")
    for sub in (ne.utils, ne.necompiler):
        stub = PKG / "numexpr" / (sub.__name__.rsplit(".", 1)[1] + ".pyi")
        assert set(getattr(sub, "__all__", ())) | {n for n in dir(sub) if n[0] != "_" and callable(getattr(sub, n)) and getattr(sub, n).__module__ == sub.__name__} <= stub_names(stub), sub
    public = {n for n in dir(_kiln) if not n.startswith("_")}
    assert public <= stub_names(PKG / "_kiln.pyi")


def test_docstrings_on_every_public_callable():
    for mod in (kiln, ne, ne.utils, ne.necompiler, _kiln):
        assert mod.__doc__
        for name in dir(mod):
            obj = getattr(mod, name)
            if not name.startswith("_") and callable(obj):
                assert obj.__doc__, f"{mod.__name__}.{name}"
    for name in ("__call__", "explain"):
        assert getattr(kiln.Kernel, name).__doc__
    for name in ("run", "run_into", "prepare", "explain", "names", "expression", "stages"):
        assert getattr(_kiln.Kernel, name).__doc__, name


def test_bench_runs():
    r = subprocess.run(
        [sys.executable, "-m", "kiln.bench", "--sizes", "100", "--rounds", "1", "--sample-ms", "0.2"],
        capture_output=True, text=True, timeout=300,
    )
    assert r.returncode == 0, r.stderr
    rows = [line for line in r.stdout.splitlines() if line.startswith(tuple(["axpy", "horner", "sumsq", "logistic", "trig"]))]
    # five variants with numexpr installed, four without
    assert len(rows) in (20, 25)
    assert "kiln.evaluate" in r.stdout and "kiln.compile" in r.stdout and "kiln.compile out=" in r.stdout


def test_readme_python_example_runs(capsys):
    # the package page's drop-in and compiled-kernel examples, run as a reader would in one session
    text = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    code = ""
    for section in ("## The numexpr drop-in", "## The compiled-kernel API"):
        start = text.index("```python\n", text.index(section)) + len("```python\n")
        code += text[start : text.index("```", start)]
    old = ne.get_num_threads()
    try:
        exec(compile(code, "README.md", "exec"), {})
    finally:
        ne.set_num_threads(old)
    assert "; clif" in capsys.readouterr().out
