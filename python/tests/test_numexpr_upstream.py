"""numexpr's own test file (numexpr 2.14.2's `numexpr/tests/test_numexpr.py`, copied unchanged into
`numexpr_upstream/` with its licence: see the README there) run against `kiln.numexpr`.

This adapter reads the file, points its import lines at `kiln.numexpr` (and the import lines of the
scripts it runs in subprocesses), and runs it as a module whose tests pytest collects here. `E` and
`ConstantNode`, numexpr's expression-tree builders, still come from numexpr (installed in the test
environment by `run_tests.sh`): kiln's `NumExpr` compiles the trees they build. Nothing else in the
file is changed. The cases kiln cannot pass yet are marked expected failures (strict: one that
starts passing fails the run until it leaves the list), by test id, each with its reason, in
`EXPECTED_FAILURES` below; `python/README.md` lists them ("numexpr's own tests").
"""

import pathlib
import sys
import types

import pytest

SOURCE = pathlib.Path(__file__).parent / "numexpr_upstream" / "test_numexpr.py"

# (the file's text, what it becomes, how many times it occurs): each line count kept, so that a
# traceback's line numbers are the file's own
IMPORTS = [
    (
        "import numexpr\nfrom numexpr import (E, NumExpr, disassemble, evaluate, re_evaluate, use_vml,\n",
        "import kiln.numexpr as numexpr; from numexpr import E\n"
        "from kiln.numexpr import (NumExpr, disassemble, evaluate, re_evaluate, use_vml,\n",
        1,
    ),
    ("from numexpr.utils import detect_number_of_cores\n", "from kiln.numexpr.utils import detect_number_of_cores\n", 1),
    # the scripts of test_locals_clears_globals and test_threading_config, run by a new interpreter
    ('r"import numexpr as ne",', 'r"import kiln.numexpr as ne",', 1),
    ('"import numexpr",', '"import kiln.numexpr as numexpr",', 2),
]


def _load():
    text = SOURCE.read_text()
    for old, new, count in IMPORTS:
        assert text.count(old) == count, f"numexpr's test file changed: {old!r} occurs {text.count(old)} times"
        text = text.replace(old, new)
    module = types.ModuleType("numexpr_upstream_on_kiln", "numexpr's test_numexpr.py on kiln.numexpr")
    module.__file__ = str(SOURCE)
    sys.modules[module.__name__] = module
    exec(compile(text, str(SOURCE), "exec"), module.__dict__)
    return module


UPSTREAM = _load()

# the file's test classes and its parametrised `test_expressions`, collected here
for _name, _obj in vars(UPSTREAM).items():
    if _name.startswith("test") and (isinstance(_obj, type) or isinstance(_obj, types.FunctionType)):
        globals()[_name] = _obj
del _name, _obj

DISASSEMBLE = "disassemble() gives kiln's program (its kernels' IR), not numexpr's virtual-machine opcodes"

# test_numexpr's methods run twice, with 1 and 2 threads (test_numexpr2 is its subclass)
_BOTH = {
    "test_reductions": DISASSEMBLE + " (and it ends with complex reductions)",
    "test_r0_reuse": DISASSEMBLE,
    "test_axis": "kiln accepts a negative axis as NumPy does (`axis=-1` is the last); numexpr refuses it "
    "(out-of-range axes, 2 and -3 here, are a ValueError in both)",
}

@pytest.fixture(autouse=True)
def _thread_variables_unset(monkeypatch):
    """numexpr's threading tests assume its thread variables unset, as in a fresh shell; an earlier
    test file may have set them in this process (dask's LocalCluster sets OMP_NUM_THREADS=1)."""
    for var in ("NUMEXPR_MAX_THREADS", "NUMEXPR_NUM_THREADS", "OMP_NUM_THREADS"):
        monkeypatch.delenv(var, raising=False)


#: Test ids (`Class::method`) that kiln cannot pass yet, and why.
EXPECTED_FAILURES = {
    **{f"{cls}::{name}": why for cls in ("test_numexpr", "test_numexpr2") for name, why in _BOTH.items()},
    "test_evaluate::test_disassemble": DISASSEMBLE,
    "test_int32_int64::test_small_int": "numexpr types a small int literal alone (`2`) as int32; kiln gives "
    "NumPy's type, int64 (as numexpr's own expression matrix expects for `1`)",
}


def expected_failure(test_id):
    """The reason `test_id` (a node id without the file) is expected to fail, or None."""
    return EXPECTED_FAILURES.get(test_id)
