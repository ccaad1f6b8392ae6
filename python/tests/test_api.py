"""numexpr's API and kiln's own, from Python: name resolution, out=, order and casting, the
exception types, re_evaluate / validate, the thread and VML settings, kiln.compile and explain, and
what kiln adds to the language (reductions anywhere, keepdims, initial, scans, contractions,
mean / var / std)."""

import re

import numpy as np
import pytest

import kiln
import kiln.numexpr as ne

G = np.arange(3.0)


def test_names_come_from_the_callers_frame_locals_first():
    a = np.arange(5.0)
    G = np.ones(5)  # noqa: N806 (shadows the global)
    np.testing.assert_array_equal(ne.evaluate("a + G"), a + 1)
    np.testing.assert_array_equal(kiln.evaluate("2*a"), 2 * a)


def test_names_fall_back_to_globals_and_dicts():
    np.testing.assert_array_equal(ne.evaluate("G * 2"), G * 2)
    np.testing.assert_array_equal(ne.evaluate("q + 1", local_dict={"q": G}), G + 1)
    np.testing.assert_array_equal(ne.evaluate("q + 1", local_dict={}, global_dict={"q": G}), G + 1)


def test_unknown_name_is_a_key_error():
    with pytest.raises(KeyError, match="nowhere"):
        ne.evaluate("nowhere + 1")


def test_bad_expressions():
    x = np.ones(3)  # noqa: F841 (read through the frame)
    with pytest.raises(SyntaxError) as info:
        ne.evaluate("2*x +")
    assert info.value.offset == 6 and "position 5" in str(info.value)  # offset counts from 1
    with pytest.raises(ValueError, match="unknown function 'frobnicate' at position 0"):
        ne.evaluate("frobnicate(x)")
    with pytest.raises(TypeError, match=r"sin\(\) takes 1 argument"):
        ne.evaluate("sin(x, x)")
    with pytest.raises(TypeError):
        ne.evaluate(3)


def test_shapes_that_do_not_broadcast():
    x = np.ones(3)  # noqa: F841
    y = np.ones(4)  # noqa: F841
    with pytest.raises(ValueError, match="cannot be broadcast"):
        ne.evaluate("x + y")


def test_unsupported_types_are_type_errors():
    for bad in (np.ones(3, np.clongdouble), np.ones(3, np.float16), np.array([2**64 - 1], np.uint64)):
        with pytest.raises(TypeError):
            ne.evaluate("v * 2", local_dict={"v": bad})


def test_integer_and_bool_inputs_have_numpys_types():
    i = np.array([1, -7, 2**31 - 1], np.int32)
    j = np.array([2, 2, 1], np.int32)
    got = ne.evaluate("i + j")
    assert got.dtype == np.int32 and got.tolist() == [3, -5, -(2**31)]  # wraps, as NumPy
    assert ne.evaluate("i // j").tolist() == (i // j).tolist()
    assert ne.evaluate("i / j").dtype == np.float64
    assert ne.evaluate("i * 2").dtype == np.int32  # a literal is weak
    assert ne.evaluate("sum(i)").dtype == np.int64
    p = np.array([True, False, True])
    assert ne.evaluate("p + p").dtype == np.bool_
    assert ne.evaluate("where(p, i, 0)").dtype == np.int32
    # int8 and uint16 are widened to int64 exactly
    assert ne.evaluate("v * 2", local_dict={"v": np.array([-128, 127], np.int8)}).tolist() == [-256, 254]
    assert ne.evaluate("v + 1", local_dict={"v": np.array([65535], np.uint16)}).dtype == np.int64
    # NumPy 2's exception for a Python int out of an integer array's range
    with pytest.raises(OverflowError, match="out of range for int32"):
        ne.evaluate("i + 3000000000")



def test_a_bool_view_of_other_bytes_reads_true_where_nonzero():
    # a view of other data as bool: every nonzero byte is true, as NumPy's logical functions read
    # it, on every path: compiled code reads C-contiguous bools as their bytes (the second and
    # later calls of a form), a call that views them as arrays of Rust bools (a first call, a
    # strided view, a plan of two kernels) reads a copy made true where nonzero
    raw = np.resize(np.array([0, 2, 1, 255, 128, 0, 3], np.uint8), 1003)
    other = np.resize(np.array([1, 0, 7, 0, 1], np.uint8), 1003)
    x = np.linspace(-2.0, 2.0, 1003)
    i = np.arange(1003, dtype=np.int64) - 500
    for m, c in ((raw.view(np.bool_), other.view(np.bool_)),
                 (np.repeat(raw, 2).view(np.bool_)[::2], np.repeat(other, 2).view(np.bool_)[::2])):
        t, u = m.view(np.uint8) != 0, c.view(np.uint8) != 0
        env = {"m": m, "c": c, "x": x, "i": i}
        cases = [("m & c", t & u), ("m | c", t | u), ("~m", ~t), ("m == c", t == u),
                 ("where(m, x, -1.0)", np.where(t, x, -1.0)), ("x * m", x * t),
                 ("where(m, i, 0)", np.where(t, i, 0)), ("sum(m)", t.sum()), ("any(m)", t.any()),
                 ("all(m)", t.all()), ("cumsum(m)", np.cumsum(t)),
                 # two kernels: the later calls view the elements as arrays, from a copy
                 ("where(m, i - max(i), 0)", np.where(t, i - i.max(), 0)),
                 ("m & (x < 0.5)", t & (x < 0.5))]
        for ex, want in cases:
            for _ in range(3):
                np.testing.assert_array_equal(ne.evaluate(ex, local_dict=env), want, err_msg=ex)
            names = set(re.findall(r"\b[mcxi]\b", ex))
            np.testing.assert_array_equal(kiln.compile(ex)(**{k: env[k] for k in names}), want, err_msg=ex)
        out = np.empty(1003, np.bool_)
        for _ in range(2):
            ne.evaluate("m & c", local_dict=env, out=out)
            np.testing.assert_array_equal(out, t & u)
    ok = np.array([0, 1, 1, 0], np.uint8).view(np.bool_)
    np.testing.assert_array_equal(ne.evaluate("where(ok, 1.0, 0.0)"), [0, 1, 1, 0])


def test_broadcasting_and_0d():
    x = np.arange(6.0).reshape(2, 3)
    y = np.arange(3.0)
    s = np.array(2.0)
    np.testing.assert_array_equal(ne.evaluate("x * y + s"), x * y + s)
    r = ne.evaluate("s * 3")
    assert r.shape == () and r == 6.0


def test_out_is_written_in_place():
    x = np.arange(10.0)
    out = np.empty(10)
    r = ne.evaluate("x * 2 + 1", out=out)
    assert r is out
    np.testing.assert_array_equal(out, x * 2 + 1)
    # a reduction, a bool result into a float out (a safe cast), float32 into float64
    tot = np.empty(())
    ne.evaluate("sum(x)", out=tot)
    assert tot == 45.0
    mask = np.empty(10)
    ne.evaluate("x > 4", out=mask)
    np.testing.assert_array_equal(mask, (x > 4).astype(float))
    x32 = x.astype(np.float32)
    wide = np.empty(10)
    ne.evaluate("x32 + 1", out=wide)
    np.testing.assert_array_equal(wide, x + 1)
    # a non-contiguous out
    big = np.zeros(20)
    ne.evaluate("x * 3", out=big[::2])
    np.testing.assert_array_equal(big[::2], x * 3)
    np.testing.assert_array_equal(big[1::2], 0)


def test_out_may_alias_an_input():
    x = np.arange(10.0)
    want = x * 2 + 1
    ne.evaluate("x * 2 + 1", out=x)
    np.testing.assert_array_equal(x, want)


def test_out_that_does_not_fit():
    x = np.arange(10.0)  # noqa: F841
    with pytest.raises(ValueError, match="shape"):
        ne.evaluate("x + 1", out=np.empty(9))
    with pytest.raises(TypeError, match="cast"):
        ne.evaluate("x + 1", out=np.empty(10, np.float32), casting="safe")
    # numexpr 2.14's default casting, 'same_kind', takes float64 to float32
    o = np.empty(10, np.float32)
    ne.evaluate("x + 1", out=o)
    np.testing.assert_array_equal(o, np.arange(1.0, 11.0, dtype=np.float32))
    # unsafe casting allowed when asked
    o32 = np.empty(10, np.float32)
    ne.evaluate("x + 1", out=o32, casting="unsafe")
    np.testing.assert_array_equal(o32, np.arange(1.0, 11.0, dtype=np.float32))
    with pytest.raises(ValueError, match="read-only"):
        ro = np.empty(10)
        ro.flags.writeable = False
        ne.evaluate("x + 1", out=ro)
    with pytest.raises(TypeError):
        ne.evaluate("x + 1", out=[0.0] * 10)


def test_order_and_casting_are_checked():
    x = np.ones((3, 4))
    assert ne.evaluate("x + 1", order="F").flags.f_contiguous
    assert ne.evaluate("x + 1", order="C").flags.c_contiguous
    with pytest.raises(ValueError):
        ne.evaluate("x + 1", order="Q")
    with pytest.raises(ValueError):
        ne.evaluate("x + 1", casting="sometimes")


def test_re_evaluate_uses_the_names_as_they_are_now():
    x = np.arange(4.0)
    first = ne.evaluate("x * 10")
    x = np.ones(4)
    np.testing.assert_array_equal(ne.re_evaluate(), np.full(4, 10.0))
    np.testing.assert_array_equal(first, np.arange(4.0) * 10)
    np.testing.assert_array_equal(ne.re_evaluate(local_dict={"x": np.zeros(2)}), np.zeros(2))


def test_validate_returns_none_or_the_exception():
    x = np.arange(4.0)
    y = np.ones(5)  # noqa: F841
    assert ne.validate("x + 1") is None
    np.testing.assert_array_equal(ne.re_evaluate(), x + 1)
    assert isinstance(ne.validate("x + y"), ValueError)
    assert isinstance(ne.validate("x +"), SyntaxError)
    assert isinstance(ne.validate("x + nope"), KeyError)


def test_re_evaluate_without_a_previous_call():
    import threading

    errors = []

    def fresh_thread():
        try:
            ne.re_evaluate()
        except RuntimeError as e:
            errors.append(e)

    t = threading.Thread(target=fresh_thread)
    t.start()
    t.join()
    assert len(errors) == 1


def test_thread_settings_and_vml():
    assert ne.detect_number_of_cores() == ne.ncores >= 1
    old = ne.set_num_threads(1)
    try:
        assert ne.get_num_threads() == 1 and ne.nthreads == 1 and kiln.nthreads == 1
        x = np.arange(1000.0)
        np.testing.assert_array_equal(ne.evaluate("x * 2"), x * 2)
        assert ne.set_num_threads(2) == 1
    finally:
        ne.set_num_threads(old)
    with pytest.raises(ValueError):
        ne.set_num_threads(0)
    assert ne.use_vml is False and kiln.use_vml is False
    assert ne.set_vml_num_threads(4) is None
    assert ne.set_vml_accuracy_mode("high") is None
    assert ne.get_vml_version() is None
    # numexpr's API level, with kiln's version as its PEP 440 local label
    assert ne.__version__ == f"2.14.2+kiln.{kiln.__version__}" and ne.kiln_version == kiln.__version__


def test_reexports_are_the_same_objects():
    for name in ne.__all__:
        # kiln's own version, and what only a numexpr drop-in needs, are kiln.numexpr's alone
        assert (name in kiln.__all__) == (name not in ("kiln_version", "install", "utils")), name
        if name in kiln.__all__ and name not in ("nthreads", "__version__"):
            assert getattr(kiln, name) is getattr(ne, name), name


def test_kiln_additions_through_evaluate():
    x = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(ne.evaluate("sum(x, axis=1)"), x.sum(axis=1))
    np.testing.assert_array_equal(ne.evaluate("x - max(x, axis=1, keepdims=1)"), x - x.max(axis=1, keepdims=True))
    np.testing.assert_array_equal(ne.evaluate("sum(x, axis=0, initial=10)"), x.sum(axis=0) + 10)
    np.testing.assert_array_equal(ne.evaluate("cumsum(x, axis=1)"), np.cumsum(x, axis=1))
    np.testing.assert_allclose(ne.evaluate("mean(x, axis=0)"), x.mean(axis=0))
    np.testing.assert_allclose(ne.evaluate("var(x)"), x.var())
    np.testing.assert_allclose(ne.evaluate("std(x, axis=1)"), x.std(axis=1))
    assert ne.evaluate("argmax(x)") == 11 and ne.evaluate("argmax(x)").dtype == np.int64
    v = np.array([1.0, 2.0, 3.0, 4.0])
    got = ne.evaluate("sum(where(i <= o, v[i], 0), index=(i, o), axis=i)")
    np.testing.assert_array_equal(got, np.cumsum(v))
    sm = ne.evaluate("exp(x - max(x, axis=1, keepdims=1)) / sum(exp(x - max(x, axis=1, keepdims=1)), axis=1, keepdims=1)")
    np.testing.assert_allclose(sm.sum(axis=1), 1.0, rtol=1e-12)


def test_empty_min_is_a_value_error():
    e = np.zeros(0)  # noqa: F841
    with pytest.raises(ValueError, match="zero-size"):
        ne.evaluate("min(e)")
    assert ne.evaluate("sum(e)") == 0.0


def test_compile_and_call():
    k = kiln.compile("a*x + y")
    assert k.names == ("a", "x", "y") and k.expression == "a*x + y"
    x = np.arange(5.0)
    y = np.ones(5)
    np.testing.assert_array_equal(k(a=2.0, x=x, y=y), 2 * x + y)
    out = np.empty(5)
    assert k(out=out, a=2.0, x=x, y=y) is out
    np.testing.assert_array_equal(out, 2 * x + y)
    with pytest.raises(KeyError, match="'y'"):
        k(a=1.0, x=x)
    with pytest.raises(TypeError, match="unexpected input"):
        k(a=1.0, x=x, y=y, z=y)
    assert "Kernel" in repr(k)


def test_compile_keywords_and_errors():
    x = np.random.default_rng(0).standard_normal(1000)
    a = kiln.compile("sum(x*x)", profile="reproducible", threads=1)(x=x)
    b = kiln.compile("sum(x*x)", threads=2)(x=x)
    assert a == b  # the bits never depend on the thread count
    with pytest.raises(ValueError, match="unknown profile"):
        kiln.compile("x", profile="fastest")
    with pytest.raises(ValueError):
        kiln.compile("x", threads=0)
    with pytest.raises(SyntaxError) as info:
        kiln.compile("x * (y + ")
    assert info.value.offset is not None
    with pytest.raises(TypeError):
        kiln.compile(b"x")


def test_explain():
    k = kiln.compile("sum(x*x, axis=1)")
    text = k.explain(x=np.ones((8, 3)))
    assert "kernel reduce" in text or "reduce" in text
    assert "f64 [8, 3]" in text
    default = kiln.compile("a*x").explain()
    assert "[1024]" in default
    dumps = kiln.compile("a*x + 1").explain(clif=True, asm=True, a=np.ones(64), x=np.ones(64))
    assert "; clif" in dumps and "; machine code" in dumps
    two = kiln.compile("x - max(x, axis=1, keepdims=1)").explain(x=np.ones((4, 5)))
    assert "# kernel 0" in two and "# kernel 1" in two
    with pytest.raises(TypeError):
        k.explain(z=np.ones(3))


def test_explain_shows_the_code_of_typed_kernels():
    # integer, complex and byte-string kernels are compiled in their own types: explain shows that
    # code (it raised "compile its typed kernel" before), as `kiln explain --clif` does
    i = np.arange(720, dtype=np.int64).reshape(8, 9, 10)
    z = (np.arange(64) + 1j).astype(np.complex128)
    s = np.array([b"ab", b"cd"] * 8)
    for ex, arrays in [("sum(i) + 1", {"i": i}), ("i * 3 + i", {"i": i}), ("z * z", {"z": z}), ("s == b'ab'", {"s": s})]:
        text = kiln.compile(ex).explain(clif=True, asm=True, **arrays)
        compiled = "; clif" in text and "function u0:0" in text and "; machine code" in text
        assert compiled or "# no compiled code: the kernel is interpreted" in text, (ex, text)
    assert "; clif" in kiln.compile("z * z").explain(clif=True, z=z)


def test_the_kernel_cache_is_bounded():
    from kiln import _kiln

    for i in range(4200):
        kiln.compile(f"x + {i}")
    assert 0 < _kiln.cache_size() <= 4096
    np.testing.assert_array_equal(kiln.compile("x + 4199")(x=np.zeros(2)), [4199.0, 4199.0])


def test_a_kernel_called_on_more_forms_than_it_keeps_handles_for():
    # each form of the inputs (dtype, shape, layout) gets a prepared handle, at most 8 kept: cycling
    # through 11 forms twice makes every call after the first round a hit or a replaced handle
    k = kiln.compile("2*x + y")
    base = np.linspace(-3, 3, 600)
    forms = [
        lambda: (base[:100], base[100:200]),
        lambda: (base[:7], base[7:14]),
        lambda: (base[:1], base[1:2]),
        lambda: (base[:0], base[1:1]),
        lambda: (base.reshape(20, 30), base[:30]),
        lambda: (base.reshape(20, 30)[:, :10], base[:10]),
        lambda: (base.reshape(20, 30)[::2], base[:30]),
        lambda: (base.astype(np.float32)[:50], base.astype(np.float32)[50:100]),
        lambda: (base[:50], np.float64(0.5)),
        lambda: (base[:50].reshape(5, 10).T, base[:5]),
        lambda: (base[::3][:100], base[:100]),
    ]
    for _ in range(2):
        for make in forms:
            x, y = make()
            np.testing.assert_array_equal(k(x=x, y=y), 2 * x + y)
            np.testing.assert_array_equal(ne.evaluate("2*x + y"), 2 * x + y)


def test_small_and_large_calls_agree_with_numpy():
    # below the GIL threshold (1024 elements) the call runs without releasing the GIL, above it with
    x = np.linspace(-2, 2, 5000)
    for n in (1023, 1024, 1025, 5000):
        np.testing.assert_array_equal(ne.evaluate("v*3 - 1", local_dict={"v": x[:n]}), x[:n] * 3 - 1)
        np.testing.assert_allclose(kiln.evaluate("sum(v)", local_dict={"v": x[:n]}), x[:n].sum(), rtol=1e-12, atol=1e-12)


def test_re_evaluate_after_the_common_path_is_per_thread():
    import threading

    results = {}

    def work(i):
        v = np.full(3, float(i))  # noqa: F841 (found by evaluate in this frame)
        ne.evaluate("v + %d" % i)
        results[i] = ne.re_evaluate(local_dict={"v": np.zeros(3)})

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for i in range(4):
        np.testing.assert_array_equal(results[i], np.full(3, float(i)))


def test_evaluate_is_a_builtin_with_numexprs_signature():
    import inspect

    assert kiln.evaluate is ne.evaluate
    params = list(inspect.signature(ne.evaluate).parameters)
    assert params == ["ex", "local_dict", "global_dict", "out", "order", "casting", "sanitize", "_frame_depth",
                      "optimization", "truediv", "disable_cache", "kwargs"]
    assert "local_dict" in ne.evaluate.__doc__
    x = np.arange(4.0)
    ne.evaluate("x - 1")  # compiled: the calls below take the builtin's own path where they can
    np.testing.assert_array_equal(ne.evaluate("x - 1", _frame_depth=1), x - 1)
    np.testing.assert_array_equal(ne.evaluate("x - 1", None, None), x - 1)
    np.testing.assert_array_equal(ne.evaluate("x - 1", sanitize=True), x - 1)
    # an option given as None is not an option left out: numexpr's checks still run on it
    with pytest.raises(ValueError, match="order"):
        ne.evaluate("x - 1", order=None)
    with pytest.raises(ValueError, match="casting"):
        ne.evaluate("x - 1", casting=None)
    with pytest.raises(TypeError, match="must be a str"):
        ne.evaluate(None)


def test_evaluate_takes_only_the_frame_scopes_it_is_not_given():
    q = np.arange(3.0)
    np.testing.assert_array_equal(ne.evaluate("q + G"), q + G)
    np.testing.assert_array_equal(ne.evaluate("q + G"), q + G)
    # local_dict given: G from the frame's globals, q not from the frame's locals
    with pytest.raises(KeyError, match="q"):
        ne.evaluate("q + G", local_dict={})
    np.testing.assert_array_equal(ne.evaluate("q + G", global_dict={"G": q}), 2 * q)


def test_evaluate_follows_set_num_threads():
    old = ne.set_num_threads(1)
    try:
        x = np.arange(5.0)
        for _ in range(2):
            np.testing.assert_array_equal(ne.evaluate("x * 3 + 0.5"), x * 3 + 0.5)
        assert "x * 3 + 0.5" in ne._kernels[1]
        assert kiln._kiln.last() is ne._kernels[1]["x * 3 + 0.5"][0]
    finally:
        ne.set_num_threads(old)
    np.testing.assert_array_equal(ne.evaluate("x * 3 + 0.5"), x * 3 + 0.5)
    assert kiln._kiln.last() is ne._kernels[old]["x * 3 + 0.5"][0]


def test_contiguous_calls_use_only_the_handle_of_their_form():
    # a handle made for C-contiguous inputs is called on their elements as slices: inputs of the
    # same element count but another shape, or the same shape but not C-contiguous, take their own
    k = kiln.compile("2*x + y")
    base = np.linspace(-3, 3, 400)
    cases = [
        (base[:100], base[100:200]),
        (base[:100].reshape(10, 10), base[100:110]),
        (base[:100].reshape(4, 25), base[100:125]),
        (base[:100].reshape(10, 10).T, base[100:110]),
        (base[::4], base[100:200]),
        (base[:100].reshape(10, 10), base[100:200].reshape(10, 10)),
        (base[:100].reshape(10, 10)[::-1], base[100:200].reshape(10, 10)),
        (base[:100].astype(np.float32), base[100:200].astype(np.float32)),
        (base[:100].astype(np.float32), 0.5),
        (base[:100], 0.5),
        (base[:100], np.float64(0.5)),
        (base[:100].astype(np.float32), np.float32(0.5)),
    ]
    for _ in range(2):
        for x, y in cases:
            # kiln binds a Python float as a 0-d float64 array, as numexpr does
            want = 2 * np.asarray(x) + np.asarray(y)
            got = k(x=x, y=y)
            np.testing.assert_array_equal(got, want)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(ne.evaluate("2*x + y"), want)


def test_run_into_refuses_an_input_that_is_its_out():
    k = kiln.compile("x + 1")._kernel
    x = np.arange(4.0)
    with pytest.raises(ValueError, match="out= cannot be written"):
        k.run_into([x], x)
    np.testing.assert_array_equal(x, np.arange(4.0))


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64", "int32", "bool", "complex128", "complex64"])
def test_out_of_every_type_is_written_by_the_kernel(dtype):
    # the result's own type: written by the kernel itself (`run_into`), no temporary; the same
    # values as a fresh call, C-contiguous or strided, and through `evaluate(out=)`
    x = (np.arange(-7, 13) % 5).astype(dtype)
    y = (np.arange(20) % 3 + 1).astype(dtype)
    ex = "x | y" if dtype == "bool" else "x * y + x"
    k = kiln.compile(ex)
    want = k(x=x, y=y)
    assert want.dtype == np.dtype(dtype)
    out = np.empty(20, dtype)
    k._kernel.run_into([x, y], out)
    np.testing.assert_array_equal(out, want)
    big = np.zeros(40, dtype)
    k._kernel.run_into([x, y], big[::2])
    np.testing.assert_array_equal(big[::2], want)
    np.testing.assert_array_equal(big[1::2], np.zeros(20, dtype))
    out2 = np.empty(20, dtype)
    assert ne.evaluate(ex, out=out2) is out2
    np.testing.assert_array_equal(out2, want)


def test_run_into_an_out_of_another_type_is_a_result_mismatch():
    # the Python layer casts then (evaluate(out=) of a bool result into int64 below)
    k = kiln.compile("x > 1")._kernel
    x = np.arange(4.0)
    with pytest.raises(ValueError, match="result mismatch"):
        k.run_into([x], np.empty(4, np.int64))
    with pytest.raises(ValueError, match="result mismatch"):
        k.run_into([x], np.empty(5, np.bool_))
    with pytest.raises(TypeError, match="out= must be"):
        k.run_into([x], np.empty(4, "S3"))
    o = np.full(4, 9, np.int64)
    ne.evaluate("x > 1", out=o, casting="unsafe")
    np.testing.assert_array_equal(o, [0, 0, 1, 1])


def test_an_out_whose_elements_overlap_goes_through_a_temporary():
    # a view made by as_strided with a zero stride: its elements share bytes, so it is never made
    # into a mutable view in Rust (aliasing elements); NumPy's own assignment of the result, the
    # last element winning, as np.copyto gives (the review's finding)
    x = np.arange(4.0)
    for ex in ["x + 1", "x > 1"]:
        want = kiln.evaluate(ex, local_dict={"x": x})
        base = np.zeros(1, want.dtype)
        out = np.lib.stride_tricks.as_strided(base, shape=(4,), strides=(0,), writeable=True)
        with pytest.raises(TypeError, match="do not overlap"):
            kiln.compile(ex)._kernel.run_into([x], out)
        assert ne.evaluate(ex, local_dict={"x": x}, out=out) is out
        expect = np.zeros(1, want.dtype)
        np.copyto(np.lib.stride_tricks.as_strided(expect, shape=(4,), strides=(0,), writeable=True), want)
        np.testing.assert_array_equal(base, expect)
        assert kiln.compile(ex)(x=x, out=out) is out
        np.testing.assert_array_equal(base, expect)


def test_float32_scalars_bind_as_0d_float32_arrays():
    import sys

    x = np.arange(5, dtype=np.float32)
    s = np.float32(0.1)
    env = {"s": s, "x": x}
    refs = sys.getrefcount(s)
    for _ in range(1000):
        r = ne.evaluate("s*x + s", local_dict=env)
    assert sys.getrefcount(s) == refs
    r = ne.evaluate("s*x + s")
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, s * x + s)
    k = kiln.compile("s*x")
    assert k(s=s, x=x).dtype == np.float32
    assert k(s=s, x=np.arange(3.0)).dtype == np.float64
    assert ne.evaluate("s + 1").dtype == np.float32
    np.testing.assert_array_equal(ne.evaluate("s*2.5"), np.asarray(s) * 2.5)


def test_out_of_a_compiled_expression_takes_every_path_of_the_first_call():
    # the second call of an expression with out= is the builtin's (written in one step, no Python
    # frame); each case runs twice so that both the first call's path and the builtin's are checked
    x = np.arange(10.0)
    for _ in range(2):
        out = np.empty(10)
        assert ne.evaluate("x * 2 + 1", out=out) is out
        np.testing.assert_array_equal(out, x * 2 + 1)
        # strided, of another dtype (cast), broadcast from a scalar result, aliasing its input
        big = np.zeros(20)
        every_other = big[::2]
        assert ne.evaluate("x * 2 + 1", out=every_other) is every_other
        np.testing.assert_array_equal(big[::2], x * 2 + 1)
        np.testing.assert_array_equal(big[1::2], 0.0)
        o32 = np.empty(10, np.float32)
        assert ne.evaluate("x * 2 + 1", out=o32) is o32
        np.testing.assert_array_equal(o32, (x * 2 + 1).astype(np.float32))
        with pytest.raises(TypeError, match="cast"):
            ne.evaluate("x * 2 + 1", out=np.empty(10, np.float32), casting="safe")
        ints = np.empty(10, np.int64)
        ne.evaluate("x * 2 + 1", out=ints, casting="unsafe")
        np.testing.assert_array_equal(ints, np.arange(1, 21, 2))
        with pytest.raises(TypeError, match="casting='no'"):
            ne.evaluate("x * 2 + 1", out=np.empty(10, np.float32), casting="no")
        same = np.empty(10)
        assert ne.evaluate("x * 2 + 1", out=same, casting="no") is same
        np.testing.assert_array_equal(same, x * 2 + 1)
        # a bool result into a float out, and the cast recorded for re_evaluate
        mask = np.empty(10)
        ne.evaluate("x > 4", out=mask, casting="safe")
        np.testing.assert_array_equal(mask, (x > 4).astype(float))
        mask[:] = -1
        assert ne.re_evaluate() is mask
        np.testing.assert_array_equal(mask, (x > 4).astype(float))
        filled = np.empty(4)
        assert ne.evaluate("3", out=filled) is filled
        np.testing.assert_array_equal(filled, 3.0)
        y = np.arange(10.0)
        assert ne.evaluate("y * 2 + 1", out=y) is y
        np.testing.assert_array_equal(y, x * 2 + 1)
        with pytest.raises(ValueError, match="shape"):
            ne.evaluate("x * 2 + 1", out=np.empty(9))
        ro = np.zeros(10)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            ne.evaluate("x * 2 + 1", out=ro)
        np.testing.assert_array_equal(ro, 0.0)
        with pytest.raises(KeyError, match="nowhere"):
            ne.evaluate("x * nowhere", out=np.empty(10))
        # out=None given is no out
        np.testing.assert_array_equal(ne.evaluate("x * 2 + 1", out=None), x * 2 + 1)
        # bool and complex results into outs of their own type
        m = np.empty(10, bool)
        assert ne.evaluate("x > 4", out=m) is m
        np.testing.assert_array_equal(m, x > 4)
        z = x + 1j
        zo = np.empty(10, complex)
        assert ne.evaluate("z / (z + 1)", out=zo) is zo
        np.testing.assert_array_equal(zo, z / (z + 1))


def test_out_of_a_compiled_kernel_is_written_in_one_native_call():
    # `kernel(out=..., **arrays)` writes an out of the result's type and shape in the call itself
    # (the handle of C-contiguous inputs where it can, the general call otherwise), and an out of
    # another type or shape from a new result cast or broadcast into it; an out it cannot write as
    # it is (overlapping an input, elements sharing bytes) or another order goes through the Python
    # layer, as `evaluate`'s does. Each case runs twice: the first call of a form binds its handle,
    # the second runs through it.
    x = np.arange(10.0)
    k = kiln.compile("x * 2 + 1")
    for _ in range(2):
        out = np.empty(10)
        assert k(x=x, out=out) is out
        np.testing.assert_array_equal(out, x * 2 + 1)
        # a strided out, a transposed input, a 2-D out with a broadcast row
        big = np.zeros(20)
        assert k(x=x, out=big[::2]) is not None
        np.testing.assert_array_equal(big, np.where(np.arange(20) % 2 == 0, np.repeat(x * 2 + 1, 2), 0.0))
        m = np.arange(12.0).reshape(3, 4)
        o2 = np.empty((4, 3))
        assert k(x=m.T, out=o2) is o2
        np.testing.assert_array_equal(o2, m.T * 2 + 1)
        add = kiln.compile("m + r")
        o3 = np.empty((3, 4))
        assert add(m=m, r=np.arange(4.0), out=o3) is o3
        np.testing.assert_array_equal(o3, m + np.arange(4.0))
        # in place into its input, and into a view overlapping it (NumPy's values: through a
        # temporary)
        y = np.arange(10.0)
        assert k(x=y, out=y) is y
        np.testing.assert_array_equal(y, x * 2 + 1)
        z = np.arange(11.0)
        k(x=z[:-1], out=z[1:])
        np.testing.assert_array_equal(z, np.concatenate([[0.0], np.arange(10.0) * 2 + 1]))
        # results of other types into outs of their own type
        mask = np.empty(10, bool)
        assert kiln.compile("x > 4")(x=x, out=mask) is mask
        np.testing.assert_array_equal(mask, x > 4)
        i = np.arange(10)
        io = np.empty(10, np.int64)
        assert kiln.compile("i * 3 - 1")(i=i, out=io) is io
        np.testing.assert_array_equal(io, i * 3 - 1)
        zc = x + 1j
        zo = np.empty(10, complex)
        assert kiln.compile("z / (z + 1)")(z=zc, out=zo) is zo
        np.testing.assert_array_equal(zo, zc / (zc + 1))
        tot = np.empty(())
        assert kiln.compile("sum(x)")(x=x, out=tot) is tot
        assert tot == 45.0
        # casting: 'safe' by default (a float64 result does not go into float32), others as asked
        with pytest.raises(TypeError, match="cast"):
            k(x=x, out=np.empty(10, np.float32))
        o32 = np.empty(10, np.float32)
        assert k(x=x, out=o32, casting="same_kind") is o32
        np.testing.assert_array_equal(o32, (x * 2 + 1).astype(np.float32))
        oc = np.empty(10)
        assert k(x=x, out=oc, order="C") is oc
        np.testing.assert_array_equal(oc, x * 2 + 1)
        # bad calls: nothing written
        with pytest.raises(ValueError, match="shape"):
            k(x=x, out=np.empty(9))
        ro = np.zeros(10)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match="read-only"):
            k(x=x, out=ro)
        np.testing.assert_array_equal(ro, 0.0)
        with pytest.raises(KeyError, match="'x'"):
            k(out=np.empty(10))
        untouched = np.zeros(10)
        with pytest.raises(TypeError, match="unexpected input"):
            k(x=x, w=x, out=untouched)
        np.testing.assert_array_equal(untouched, 0.0)
        # a name missing beside an extra one: the missing name first, with or without out=
        two = kiln.compile("x + y")
        for call in (lambda: two(x=x, w=x, v=x), lambda: two(x=x, w=x, v=x, out=untouched)):
            with pytest.raises(KeyError, match="'y'"):
                call()
        np.testing.assert_array_equal(untouched, 0.0)
        with pytest.raises(TypeError, match="NumPy array"):
            k(x=x, out=[0.0] * 10)


def test_re_evaluate_after_an_out_call_writes_that_out_again():
    x = np.arange(6.0)
    out = np.empty(6)
    for _ in range(2):  # the first call's path, then the builtin's
        ne.evaluate("x + 100", out=out)
        x = np.ones(6)
        assert ne.re_evaluate() is out
        np.testing.assert_array_equal(out, np.full(6, 101.0))
        x = np.arange(6.0)
    # the record holds no reference to out: one freed since is not written, a new result comes back
    ne.evaluate("x + 100", out=np.empty(6))
    np.testing.assert_array_equal(ne.re_evaluate(), x + 100)


@pytest.mark.parametrize(
    "value, dtype",
    [(2, np.int64), (np.int64(2), np.int64), (np.int32(2), np.int32), (True, np.bool_), (np.float32(2), np.float32),
     (np.complex64(2), np.complex64), ([2.0, 3.0], np.float64)],
)
def test_scalars_and_lists_are_bound_as_their_numpy_arrays(value, dtype):
    from kiln._core import as_input

    a = as_input("a", value)
    assert type(a) is np.ndarray and a.dtype == dtype
    np.testing.assert_array_equal(a, np.asarray(value))
    # a byte-swapped or unaligned array is still made native and aligned
    swapped = np.arange(3.0).astype(">f8")
    assert as_input("a", swapped).dtype.isnative
    i = np.int64(3)  # noqa: F841
    x = np.arange(4, dtype=np.int64)
    for _ in range(2):
        r = ne.evaluate("x * i + 1")
        assert r.dtype == np.int64
        np.testing.assert_array_equal(r, x * 3 + 1)


def test_numexpr_object_binds_arrays_of_its_signature_and_converts_the_rest():
    nex = ne.NumExpr("b - 2*a", [("b", np.float64), ("a", np.float64)])
    a, b = np.arange(4.0), np.ones(4)
    np.testing.assert_array_equal(nex(b, a), b - 2 * a)
    # other types cast to the signature's, a list converted, a byte-swapped array made native
    np.testing.assert_array_equal(nex(b.astype(np.float32), [0, 1, 2, 3]), b - 2 * a)
    np.testing.assert_array_equal(nex(b.astype(">f8"), a), b - 2 * a)
    # sorted names when no signature is given: (a, b)
    nex2 = ne.NumExpr("b - 2*a")
    np.testing.assert_array_equal(nex2(a, b), b - 2 * a)
    out = np.empty(4)
    assert nex(b, a, out=out) is out
    np.testing.assert_array_equal(out, b - 2 * a)
