"""numexpr's whole surface on kiln.numexpr, beyond its own test file: evaluate's keywords
(optimization, truediv, sanitize, disable_cache) and numexpr's checks of them, NumExpr and
disassemble, the thread settings read from the environment as numexpr reads them (each case in a
new interpreter, as the settings are read at import), the utils module, result dtypes of
constants, and bad input: an integer literal beyond int64, nothing written to out= on an error."""

import os
import subprocess
import sys

import numpy as np
import pytest

import kiln
import kiln.numexpr as ne


def test_context_keywords_are_checked_and_change_nothing():
    x = np.arange(10, dtype=np.int32)  # noqa: F841
    want = np.arange(10) / 2
    for kw in ({}, {"optimization": "none"}, {"optimization": "moderate"}, {"truediv": False},
               {"truediv": True}, {"truediv": "auto"}, {"disable_cache": True}, {"sanitize": False}):
        got = ne.evaluate("x/2", **kw)
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.float64, kw
    with pytest.raises(ValueError, match="'optimization' must be one of"):
        ne.evaluate("x/2", optimization="max")
    with pytest.raises(ValueError, match="'truediv' must be one of"):
        ne.evaluate("x/2", truediv="yes")
    with pytest.raises(ValueError, match="Unknown keyword argument 'speed'"):
        ne.evaluate("x/2", speed=2)
    assert isinstance(ne.validate("x/2", optimization="max"), ValueError)


def test_sanitize_refuses_what_numexpr_refuses():
    a = np.arange(3.0)  # noqa: F841
    for bad in ("__builtins__", "lambda x: x", 'locals()["evaluate"]', "a;", "os. cpu_count()", "(3+1).ᵇit_length()"):
        with pytest.raises(ValueError, match="forbidden"):
            ne.evaluate(bad)
        assert isinstance(ne.validate(bad), ValueError)
    # not sanitised: kiln's parser refuses what it cannot read, as numexpr's eval does
    with pytest.raises(SyntaxError):
        ne.evaluate("import os;", sanitize=False)
    # a text numexpr's sanitiser refuses never enters the cache the builtin reads: the default
    # refuses it after a sanitize=False call compiled and ran it
    d = {"__x__": a}
    np.testing.assert_array_equal(ne.evaluate("__x__ + 1", local_dict=d, sanitize=False), a + 1)
    for _ in range(2):
        with pytest.raises(ValueError, match="forbidden"):
            ne.evaluate("__x__ + 1", local_dict=d)
    # kiln's index syntax (`v[i]`) is its own language, not Python's subscript: not refused
    v = np.arange(4.0)  # noqa: F841
    np.testing.assert_array_equal(ne.evaluate("sum(where(i <= o, v[i], 0), index=(i, o), axis=i)"), np.cumsum(v))
    for ok in ("a*2.e-5", "a*2E+5", "2.+a", "(a).real", "a.imag"):
        ne.evaluate(ok)
    env = dict(os.environ, NUMEXPR_SANITIZE="0")
    r = subprocess.run([sys.executable, "-c", "import kiln.numexpr as ne\ntry:\n ne.evaluate('import os;')\nexcept SyntaxError:\n print('syntax')"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "syntax", r.stderr


def test_numexpr_object_from_text_and_trees():
    from numexpr import E

    sig = [("a", np.double), ("b", np.double), ("c", np.double)]
    f = ne.NumExpr(2.0 * E.a + 3.0 * E.b * E.c, signature=sig)
    assert f.input_names == ("a", "b", "c") and f.signature == b"ddd"
    np.testing.assert_array_equal(f(np.array([1.0, 2, 3]), np.array([4.0, 5, 6]), np.array([7.0, 8, 9])), [86.0, 124.0, 168.0])
    # the signature's order, not the expression's; inputs cast to the signature's types
    g = ne.NumExpr("b - a", [("a", np.double), ("b", np.double)])
    np.testing.assert_array_equal(g(np.arange(3), np.full(3, 10)), [10.0, 9.0, 8.0])
    assert g(np.arange(3), np.full(3, 10)).dtype == np.float64
    # no signature: inputs sorted by name, float64
    h = ne.NumExpr("y * 2 + x")
    assert h.input_names == ("x", "y")
    np.testing.assert_array_equal(h.run(np.ones(2), np.arange(2.0)), [1.0, 3.0])
    assert ne.NumExpr("(a + 1)*(a - 1)", [("a", np.int32)]).constants == (1,)
    # Python's float is float32 in numexpr's signatures
    k = ne.NumExpr("where(m, a, -1)", [("m", bool), ("a", float)])
    assert k.signature == b"bf"
    got = k(np.array([True, False]), np.array([2.5, 3.5], np.float32))
    np.testing.assert_array_equal(got, [2.5, -1.0])
    assert got.dtype == np.float32
    # reductions, functions, comparisons and constants of a tree
    from numexpr.expressions import ConstantNode, functions

    x = np.arange(4.0)
    r = ne.NumExpr(functions["sum"](E.x ** 2 + 2, 0), [("x", np.double)])
    assert r.expression == "sum(((x ** 2) + 2), axis=0)"
    np.testing.assert_allclose(r(x), (x ** 2 + 2).sum())
    t = ne.NumExpr(functions["where"](E.x < 2, functions["sqrt"](E.x), -E.x) + ConstantNode(np.float32(1)), [("x", np.double)])
    np.testing.assert_array_equal(t(x), np.where(x < 2, np.sqrt(x), -x) + 1)
    assert ne.NumExpr(ConstantNode(np.float32(3))).run().dtype == np.float32
    assert ne.NumExpr((E.a + ConstantNode(float("nan"))) * (E.b + ConstantNode(float("nan")))).constants[0] != 0
    with pytest.raises(ValueError, match="don't match"):
        ne.NumExpr("a + b", [("a", np.double)])
    with pytest.raises(TypeError, match="takes 3 input"):
        f(np.ones(2))


def test_disassemble_is_kilns_program():
    lines = ne.disassemble(ne.NumExpr("x * x + 2", [("x", np.double)]))
    assert lines and all(isinstance(line, str) for line in lines)
    text = "\n".join(lines)
    assert "mul" in text and "add" in text


def test_utils_module_and_vml():
    from kiln.numexpr import utils

    assert utils.set_vml_num_threads(3) is None and utils.get_vml_num_threads() is None
    assert utils.get_vml_version() is None and utils.set_vml_accuracy_mode("fast") is None
    assert utils.detect_number_of_cores() == ne.ncores
    assert utils.set_num_threads is ne.set_num_threads and utils.MAX_THREADS == ne.MAX_THREADS
    assert ne.necompiler.getExprNames("a + sin(b) * a", {}) == (["a", "b"], False)


def _threads_in_new_interpreter(env, code="print(ne.nthreads, ne.MAX_THREADS)"):
    clean = {k: v for k, v in os.environ.items() if k not in ("NUMEXPR_MAX_THREADS", "NUMEXPR_NUM_THREADS", "OMP_NUM_THREADS")}
    clean.update(env)
    r = subprocess.run([sys.executable, "-c", "import kiln.numexpr as ne\n" + code], env=clean, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


def test_thread_settings_from_the_environment():
    cores = ne.detect_number_of_cores()
    assert _threads_in_new_interpreter({}) == [str(min(cores, 16)), "64"]
    assert _threads_in_new_interpreter({"NUMEXPR_MAX_THREADS": "4"}) == ["4", "4"]
    assert _threads_in_new_interpreter({"NUMEXPR_NUM_THREADS": "3", "OMP_NUM_THREADS": "5"}) == ["3", "64"]
    assert _threads_in_new_interpreter({"OMP_NUM_THREADS": "5"}) == ["5", "64"]
    # empty strings are unset
    assert _threads_in_new_interpreter({"OMP_NUM_THREADS": "", "NUMEXPR_MAX_THREADS": "", "NUMEXPR_NUM_THREADS": ""}) == [str(min(cores, 16)), "64"]
    # beyond NUMEXPR_MAX_THREADS: brought into range at import, refused by set_num_threads
    assert _threads_in_new_interpreter({"NUMEXPR_MAX_THREADS": "2", "NUMEXPR_NUM_THREADS": "8"}) == ["2", "2"]
    out = _threads_in_new_interpreter({"NUMEXPR_MAX_THREADS": "2"}, "try:\n ne.set_num_threads(3)\nexcept ValueError as e:\n print('refused')")
    assert out == ["refused"]


def test_init_num_threads_reads_the_environment_now(monkeypatch):
    old = ne.get_num_threads()
    try:
        monkeypatch.setenv("OMP_NUM_THREADS", "5")
        monkeypatch.setenv("NUMEXPR_NUM_THREADS", "3")
        assert ne.utils._init_num_threads() == 3 == ne.nthreads
        monkeypatch.delenv("NUMEXPR_NUM_THREADS")
        assert ne.utils._init_num_threads() == 5
        monkeypatch.setenv("OMP_NUM_THREADS", "lots")
        with pytest.raises(ValueError, match="OMP_NUM_THREADS"):
            ne.utils._init_num_threads()
    finally:
        ne.set_num_threads(old)


def test_constant_result_dtypes_are_numpys():
    # integer literals alone are NumPy's int64 (numexpr's expression matrix expects it for `1`)
    for ex, want in (("1", 1), ("1+1", 2), ("2 ** 3 + 1", 9), ("-7 // 2", -4)):
        got = ne.evaluate(ex)
        assert got.dtype == np.int64 and got == want, ex
    assert ne.evaluate("7.0 < 5").dtype == np.bool_ and ne.evaluate("2.0 + 1").dtype == np.float64
    # a truth value scaled by a Python float is float64 beside float32 inputs, as NumPy gives
    a = np.arange(10, dtype=np.float32)  # noqa: F841
    for ex in ("0.25 * (a < 5) + 0.33 * (a >= 5)", "where(a < 5, 0.25, 0.5)"):
        got = ne.evaluate(ex)
        want = eval(ex, {"where": np.where}, {"a": a})
        assert got.dtype == want.dtype == np.float64, ex
        np.testing.assert_array_equal(got, want)
    # while float32 arithmetic with literals stays float32
    assert ne.evaluate("a * 0.5 + 1").dtype == np.float32
    assert ne.evaluate("2**40") == 2**40
    assert ne.evaluate("1.5 * 2").dtype == np.float64
    i32 = np.arange(100, dtype=np.int32)
    for ex in ("i32 * 2", "i32 + 1", "i32 - 3", "(i32 + 1) * (i32 - 1)"):
        assert ne.evaluate(ex).dtype == np.int32, ex
    np.testing.assert_array_equal(ne.evaluate("i32 * 2"), i32 * 2)
    # NumPy scalars are strong: int64 with an int32 array gives int64, int32 stays int32
    assert ne.evaluate("i32 * s", local_dict={"i32": i32, "s": np.int64(2)}).dtype == np.int64
    assert ne.evaluate("i32 * s", local_dict={"i32": i32, "s": np.int32(2)}).dtype == np.int32
    assert ne.evaluate("i32 * s", local_dict={"i32": i32, "s": np.uint32(2)}).dtype == np.int64


def test_unaligned_singleton_out():
    # numexpr's issue #397: a constant into an unaligned one-element int32 out
    out = np.empty(5, dtype=np.uint8)[1:].view(np.int32)
    assert not out.flags.aligned
    assert ne.evaluate("3", out=out) is out
    np.testing.assert_array_equal(out, 3)


def test_zero_size_inputs_and_out_broadcasting():
    a0 = np.array([], dtype=np.int32).reshape(0, 2, 4)
    a1 = np.array([], dtype=np.float64).reshape(0, 2, 4)
    r = ne.evaluate("a0 + a1")
    assert r.shape == (0, 2, 4) and r.dtype == np.float64
    # a result broadcast into out, as numexpr's iterator does
    x = np.ones(1)  # noqa: F841
    o = np.zeros(3)
    assert ne.evaluate("x * 2", out=o) is o
    np.testing.assert_array_equal(o, 2.0)
    with pytest.raises(ValueError, match="shape"):
        ne.evaluate("y * 2", local_dict={"y": np.ones(3)}, out=np.zeros(2))


def test_bad_axis_is_a_value_error():
    y = np.arange(9.0).reshape(3, 3)  # noqa: F841
    for ex in ("sum(y, axis=2)", "sum(y, axis=-3)"):
        with pytest.raises(ValueError):
            ne.evaluate(ex)


def test_an_int_literal_beyond_int64_is_an_overflow_error():
    a = np.arange(3, dtype=np.int64)  # noqa: F841
    for ex in ("a + 99999999999999999999999", "a * 9223372036854775808", "99999999999999999999999"):
        with pytest.raises(OverflowError):
            ne.evaluate(ex)
        kernel = kiln.compile(ex)
        with pytest.raises(OverflowError, match="beyond int64"):
            kernel(**({"a": a} if kernel.names else {}))
    # int64's own range is fine, and a float literal of any size is a float
    assert ne.evaluate("a + 9223372036854775807").dtype == np.int64
    assert ne.evaluate("a + 99999999999999999999999.0").dtype == np.float64
    # beside float inputs a Python int beyond int64 is a float, as NumPy 2 and numexpr make it
    f = np.arange(3.0)  # noqa: F841
    np.testing.assert_array_equal(ne.evaluate("f + 99999999999999999999999"), f + 99999999999999999999999)


def test_unsupported_types_raise_a_type_error_naming_the_expression():
    h = np.ones(2, np.float16)  # noqa: F841
    with pytest.raises(ne.UnsupportedTypeError) as info:
        ne.evaluate("h + 1")
    assert isinstance(info.value, TypeError) and not isinstance(info.value, NotImplementedError)
    assert "in 'h + 1'" in str(info.value) and "float16" in str(info.value), info.value
    assert isinstance(ne.validate("h + 1"), ne.UnsupportedTypeError)
    # byte strings are a type of kiln's: what they lack is numexpr's NotImplementedError, naming
    # numexpr's missing opcode
    sarr = np.array([b"foo", b"ba"])  # noqa: F841
    narr = np.arange(2, dtype=np.int32)  # noqa: F841
    for ex, opcode in (("sarr >= narr", "'ge_bsi'"), ("sarr + sarr", "'add_sss'")):
        with pytest.raises(NotImplementedError, match=opcode):
            ne.evaluate(ex)
    assert isinstance(ne.validate("sarr >= narr"), NotImplementedError)
    # complex numbers are a type of kiln's; an operation they lack is numexpr's NotImplementedError
    z = np.ones(2, np.complex128)  # noqa: F841
    with pytest.raises(NotImplementedError, match="not defined for complex numbers"):
        ne.evaluate("z < 1")
    assert isinstance(ne.validate("z < 1"), NotImplementedError)


def test_nothing_is_written_to_out_on_an_error():
    a = np.arange(4.0)
    b = np.arange(3.0)  # noqa: F841
    i = np.arange(4, dtype=np.int64)  # noqa: F841
    z = np.ones(4, np.complex128)  # noqa: F841
    out = np.full(4, -7.0)
    bad = [
        ("a + b", ValueError),  # shapes that do not broadcast
        ("a + nosuchname", KeyError),
        ("i + 99999999999999999999999", OverflowError),
        ("sum(a, axis=3)", ValueError),
        ("a +", SyntaxError),
        ("a ^ 1", TypeError),  # a bitwise operator of a float
        ("a + z", TypeError),  # a complex input
    ]
    for ex, err in bad:
        with pytest.raises(err):
            ne.evaluate(ex, out=out)
        np.testing.assert_array_equal(out, -7.0, err_msg=ex)
    # a result that does not cast to out's dtype under casting='safe'
    small = np.full(4, 9, dtype=np.int32)
    with pytest.raises(TypeError):
        ne.evaluate("a * 2", out=small)
    np.testing.assert_array_equal(small, 9)
