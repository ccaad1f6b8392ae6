"""Zero-copy and the GIL: a NumPy view whose rows are contiguous is read in place by the kernel
(its plan says so), rows stepped backwards (`x[::-1]`, a negative outer stride) included; a reversed
or stepped last axis, and a transposed or Fortran input beside a C one, is read in place as strided
rows; Fortran-ordered and transposed inputs run in memory order (read in place, axis reductions and
scans along the mapped axes, the result in their layout); rows too short for an outer loop are
copied once by kiln and still give NumPy's results; the GIL is released while a kernel runs."""

import sys
import threading
import time

import numpy as np

import kiln


def plan_of(v):
    text = kiln.compile("v * 2").explain(v=v)
    return [line.strip() for line in text.splitlines() if line.strip().startswith("in0:")][0]


def test_views_with_contiguous_rows_are_read_in_place():
    x = np.arange(8 * 1000.0).reshape(8, 1000)
    assert plan_of(x) == "in0: contiguous"
    for view in (x[:, :500], x[::2], x[1:7, 250:750]):
        assert plan_of(view).startswith("in0: per-row run"), plan_of(view)
        np.testing.assert_array_equal(kiln.evaluate("v * 2", local_dict={"v": view}), view * 2)


def test_rows_stepped_backwards_are_read_in_place():
    x = np.arange(8 * 1000.0).reshape(8, 1000)
    y = np.arange(4 * 6 * 200.0).reshape(4, 6, 200)
    cases = [
        (x[::-1], "[-1000]"),
        (x[::-2, 100:900], "[-2000]"),
        (x[6:1:-3, :700], "[-3000]"),
        (y[::-1, :, 20:], "[-1200, 200]"),
        (y[:, ::-2], "[1200, -400]"),
        (y[::-1, ::-1], "[-1200, -200]"),
    ]
    for view, strides in cases:
        assert plan_of(view) == f"in0: per-row run, outer strides {strides}", plan_of(view)
        np.testing.assert_array_equal(kiln.evaluate("v * 2", local_dict={"v": view}), view * 2)
        np.testing.assert_allclose(kiln.evaluate("sum(v, axis=-1)", local_dict={"v": view}), view.sum(axis=-1), rtol=1e-12)
        np.testing.assert_allclose(kiln.evaluate("sum(v, axis=0)", local_dict={"v": view}), view.sum(axis=0), rtol=1e-12)
        np.testing.assert_array_equal(kiln.evaluate("max(v, axis=-1)", local_dict={"v": view}), view.max(axis=-1))


def test_every_stride_pattern_agrees_with_numpy():
    # every combination of a start, a stop and a step (negative included) on each axis of a 2-D
    # array, empty and one-element views among them, through a map, a row and column sum and a
    # whole-array sum; in place or copied, the values are NumPy's
    x = np.random.default_rng(5).standard_normal((9, 130))
    steps = [None, 1, 2, -1, -2, -5]
    bounds = [(None, None), (3, None), (None, 1), (4, 5), (5, 5), (8, 2)]
    for s0 in steps:
        for b0 in bounds:
            for s1 in steps:
                for b1 in [(None, None), (7, 100), (64, 65), (10, 10)]:
                    v = x[slice(b0[0], b0[1], s0), slice(b1[0], b1[1], s1)]
                    got = kiln.evaluate("v * 3 - 1", local_dict={"v": v})
                    np.testing.assert_array_equal(got, v * 3 - 1)
                    np.testing.assert_allclose(kiln.evaluate("sum(v, axis=1)", local_dict={"v": v}), v.sum(axis=1), rtol=1e-12, atol=1e-12)
                    np.testing.assert_allclose(kiln.evaluate("sum(v, axis=0)", local_dict={"v": v}), v.sum(axis=0), rtol=1e-12, atol=1e-12)
                    np.testing.assert_allclose(kiln.evaluate("sum(v)", local_dict={"v": v}), v.sum(), rtol=1e-12, atol=1e-12)
                    # its transpose, and a Fortran copy: read in memory order where the layout allows
                    for w in (v.T, np.asfortranarray(v)):
                        np.testing.assert_array_equal(kiln.evaluate("w * 3 - 1", local_dict={"w": w}), w * 3 - 1)
                        np.testing.assert_allclose(kiln.evaluate("sum(w, axis=0)", local_dict={"w": w}), w.sum(axis=0), rtol=1e-12, atol=1e-12)
                        np.testing.assert_allclose(kiln.evaluate("sum(w)", local_dict={"w": w}), w.sum(), rtol=1e-12, atol=1e-12)
                    # beside a C array of its shape, a Fortran input is a strided row
                    c = np.ascontiguousarray(v[::-1])
                    f = np.asfortranarray(v)
                    np.testing.assert_array_equal(kiln.evaluate("c + 2 * f", local_dict={"c": c, "f": f}), c + 2 * f)
                    np.testing.assert_allclose(kiln.evaluate("sum(c * f, axis=1)", local_dict={"c": c, "f": f}), (c * f).sum(axis=1), rtol=1e-12, atol=1e-12)
    # every kernel kind over reversed and stepped last axes (1-D and 2-D, f64 and f32, NaN, infinities
    # and signed zeros among the values; lengths below a vector, with tails, one element, none)
    rng = np.random.default_rng(9)
    # (NumPy's own statistics of the special values warn: inf - inf)
    with np.errstate(invalid="ignore"):
        for dtype in (np.float64, np.float32):
            base = rng.uniform(0.5, 2.0, 3 * 203 + 4).astype(dtype)
            odd = base.copy()
            specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0], dtype=dtype)
            odd[2::7] = np.resize(specials, len(odd[2::7]))
            m = rng.uniform(0.5, 2.0, (40, 210)).astype(dtype)
            views = [d[1 : 1 + n * st : st] if st > 0 else d[n * -st : 0 : st] for d in (base, odd) for n in (0, 1, 3, 5, 17, 203) for st in (-1, 2, -2, 3, -3)]
            views += [m[:, ::-1], m[:, ::2], m[::-1, ::-2], m[3::2, 1::3], m[::-3, 200::-3]]
            tol = dict(rtol=1e-5 if dtype == np.float32 else 1e-11, atol=0)
            for v in views:
                env = {"v": v}
                np.testing.assert_array_equal(kiln.evaluate("where(v > 0, v * 2.5, -v)", local_dict=env), np.where(v > 0, v * np.asarray(2.5, dtype), -v))
                if v.size == 0:
                    continue
                np.testing.assert_array_equal(kiln.evaluate("max(v)", local_dict=env), v.max())
                assert kiln.evaluate("argmin(v)", local_dict=env) == np.argmin(v)
                np.testing.assert_allclose(kiln.evaluate("sum(v)", local_dict=env), v.sum(dtype=np.float64), **tol)
                for name in ("mean", "var", "std"):
                    np.testing.assert_allclose(kiln.evaluate(f"{name}(v)", local_dict=env), getattr(np, name)(v.astype(np.float64)), **tol)
                np.testing.assert_allclose(kiln.evaluate("cumsum(v, axis=-1)", local_dict=env), np.cumsum(v.astype(np.float64), axis=-1), **tol)
                np.testing.assert_array_equal(kiln.evaluate("max(v, axis=-1)", local_dict=env), v.max(axis=-1))
                if v.ndim == 2:
                    np.testing.assert_allclose(kiln.evaluate("sum(v, axis=0)", local_dict=env), v.sum(axis=0, dtype=np.float64), **tol)
                    np.testing.assert_allclose(kiln.evaluate("var(v, axis=1)", local_dict=env), np.var(v.astype(np.float64), axis=1), **tol)
                    np.testing.assert_allclose(kiln.evaluate("cumsum(v, axis=0)", local_dict=env), np.cumsum(v.astype(np.float64), axis=0), **tol)


def test_float_scans_of_strided_views_agree_with_numpy_read_in_place():
    # cumsum / cumprod / cummax / cummin along each axis of 2-D and 3-D float views (reversed,
    # stepped, column slices, negative outer strides; NaN, infinities and signed zeros among the
    # values), a broadcast row beside: the values are NumPy's, and rows of at least 64 points are
    # read in place (kiln explain copies nothing)
    rng = np.random.default_rng(21)
    specials = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    with np.errstate(invalid="ignore", over="ignore"):
        for dtype in (np.float64, np.float32):
            m = rng.uniform(0.5, 1.5, (13, 310)).astype(dtype)
            m.flat[5::97] = np.resize(np.array(specials, dtype), len(m.flat[5::97]))
            c = rng.uniform(0.5, 1.5, (6, 5, 140)).astype(dtype)
            views = [m[:, ::-1], m[::2, ::-1], m[:, :100], m[::-1, ::2], m[::-3, 300::-3], m[1:2, ::-1], m[:, 5:8], m[:, 0:0], m[:1, :1]]
            views += [c[:, :, ::-1], c[::-1, ::2, :], c[::2, :, ::3], c[:, ::-1, :70]]
            tol = dict(rtol=1e-5 if dtype == np.float32 else 1e-11, atol=0)
            for v in views:
                wide = v.astype(np.float64)
                for axis in range(v.ndim):
                    env = {"v": v}
                    np.testing.assert_allclose(kiln.evaluate(f"cumsum(v, axis={axis})", local_dict=env), np.cumsum(wide, axis=axis).astype(dtype), **tol)
                    np.testing.assert_allclose(kiln.evaluate(f"cumprod(v, axis={axis})", local_dict=env), np.cumprod(wide, axis=axis).astype(dtype), **tol)
                    np.testing.assert_array_equal(kiln.evaluate(f"cummax(v, axis={axis})", local_dict=env), np.maximum.accumulate(v, axis=axis))
                    np.testing.assert_array_equal(kiln.evaluate(f"cummin(v, axis={axis})", local_dict=env), np.minimum.accumulate(v, axis=axis))
                row = np.ascontiguousarray(m[0, : v.shape[-1]])
                env = {"v": v, "r": row}
                np.testing.assert_allclose(kiln.evaluate("cumsum(v * r, axis=-1)", local_dict=env), np.cumsum(wide * row, axis=-1).astype(dtype), **tol)
            for v, axis in [(m[:, ::-1], 1), (m[:, :100], 1), (m[::-2, ::-1], 0), (m[::-1, ::2], 1), (c[::-1, ::2, :], 1), (c[:, :, ::-1], 0), (c[::2, :, ::-2], 0)]:
                row = np.ascontiguousarray(m[0, : v.shape[-1]])
                for ex, env in ((f"cumsum(v, axis={axis})", {"v": v}), (f"cummax(v * r, axis={axis})", {"v": v, "r": row})):
                    text = kiln.compile(ex).explain(**env)
                    assert "copied" not in text and "materialise" not in text, text
                    assert "per-row" in text, text


def test_scans_of_the_flattened_array_agree_with_numpy_read_in_place():
    # cumsum / cumprod / cummax / cummin of the flattened array (no axis) of 2-D and 3-D views that
    # are not one strided run (reversed, stepped, column slices, negative outer strides, Fortran, a
    # transposed array): the values are NumPy's; the one line is walked row by row in place where
    # the rows hold whole vectors (kiln explain copies nothing), else the copy says why
    rng = np.random.default_rng(33)
    specials = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    with np.errstate(invalid="ignore", over="ignore"):
        for dtype in (np.float64, np.float32):
            m = rng.uniform(0.5, 1.5, (13, 320)).astype(dtype)
            m.flat[5::97] = np.resize(np.array(specials, dtype), len(m.flat[5::97]))
            c = rng.uniform(0.5, 1.5, (6, 5, 144)).astype(dtype)
            f = np.asfortranarray(m[:, :100])
            views = [m[:, ::-1], m[::2, ::-1], m[:, :100], m[::-1, ::2], m[::-3, 300::-3], m[:, 5:8], m[:, 0:0], m[:1, :1], f, m[:40, :12].T]
            views += [c[:, :, ::-1], c[::-1, ::2, :], c[::2, :, ::3], c[:, ::-1, :72]]
            tol = dict(rtol=1e-5 if dtype == np.float32 else 1e-11, atol=0)
            for v in views:
                wide = v.astype(np.float64)
                env = {"v": v}
                np.testing.assert_allclose(kiln.evaluate("cumsum(v)", local_dict=env), np.cumsum(wide).astype(dtype), **tol)
                np.testing.assert_allclose(kiln.evaluate("cumprod(v)", local_dict=env), np.cumprod(wide).astype(dtype), **tol)
                np.testing.assert_array_equal(kiln.evaluate("cummax(v)", local_dict=env), np.maximum.accumulate(v.ravel()))
                np.testing.assert_array_equal(kiln.evaluate("cummin(v)", local_dict=env), np.minimum.accumulate(v.ravel()))
            for v in (m[:, ::-1], m[:, :100], m[::-1, ::2], f, c[:, ::-1, :72], c[::-1, ::2, :]):
                for ex in ("cumsum(v)", "cummax(v)"):
                    text = kiln.compile(ex).explain(v=v)
                    assert "copied" not in text and "materialise" not in text, text
                    assert "per-row" in text, text
            text = kiln.compile("cumsum(v)").explain(v=m[:, 5:10])
            assert "not whole vectors" in text, text


def test_integer_and_bool_views_agree_with_numpy_read_in_place():
    # int32, int64 and bool views (reversed and stepped either way on each axis, outer and inner
    # reversed together, one row, one element, empty; 1-D below a vector and with tails) beside a C
    # int array, a broadcast row and floats: the typed code reads each view in place (kiln explain
    # says so) and the values and dtypes are NumPy's, wrapping overflow and int32 MIN included
    rng = np.random.default_rng(15)
    edge = np.array([np.iinfo(np.int32).min, -1, 0, 7, np.iinfo(np.int32).max, -7, 3, 65], np.int32)
    base32 = np.resize(edge, (9, 14)) ^ rng.integers(0, 4, (9, 14), dtype=np.int32)
    bases = {np.int32: base32, np.int64: base32.astype(np.int64) * 3_000_000_001}
    flags = base32 % 3 == 0
    floats = rng.standard_normal((9, 14))
    cuts = [
        np.s_[::-1, :], np.s_[:, ::-1], np.s_[::-1, ::-1], np.s_[::2, ::3], np.s_[::-2, ::-3],
        np.s_[:, ::2], np.s_[::2, ::-1], np.s_[1:2, ::-1], np.s_[:1, :1], np.s_[:, 0:0],
    ]
    for dtype, base in bases.items():
        for cut in cuts:
            x, b, f = base[cut], flags[cut], floats[cut]
            y = np.ascontiguousarray(np.resize(np.array([3, 1, -1, 5], dtype), x.shape))
            row = np.resize(np.array([2, -3, 1], dtype), x.shape[1])
            env = {"x": x, "y": y, "b": b, "f": f, "r": row}
            with np.errstate(over="ignore"):
                cases = {
                    "x % 7 + y": x % 7 + y,
                    "x * y - x": x * y - x,
                    "where(b, x, y)": np.where(b, x, y),
                    "b & (x > r)": b & (x > row),
                    "x * 0.5 + f": x * 0.5 + f,
                    "x - r": x - row,
                    "sum(x, axis=1)": x.sum(axis=1, dtype=np.int64),
                    "sum(x, axis=0)": x.sum(axis=0, dtype=np.int64),
                    "cumsum(x, axis=1)": np.cumsum(x, axis=1, dtype=np.int64),
                    "cumsum(x, axis=0)": np.cumsum(x, axis=0, dtype=np.int64),
                    "sum(b, axis=1)": b.sum(axis=1),
                }
            for ex, want in cases.items():
                got = kiln.evaluate(ex, local_dict=env)
                np.testing.assert_array_equal(got, want, err_msg=f"{ex} on {dtype.__name__}{cut}")
                assert got.dtype == want.dtype, (ex, got.dtype, want.dtype)
            if x.size > 1:
                text = kiln.compile("x % 7 + y").explain(x=x, y=y)
                assert "'x' in place" in text or "reading each in place" in text, text
    for n in (1, 2, 3, 5, 17, 40):
        a = np.resize(edge, 3 * n)
        for st in (-1, 2, -2, 3, -3):
            x = a[::st][:n]
            y = np.resize(np.array([3, 1, -1, 7], np.int32), x.shape)
            with np.errstate(over="ignore"):
                np.testing.assert_array_equal(kiln.evaluate("x % 7 + y", local_dict={"x": x, "y": y}), x % 7 + y)
            np.testing.assert_array_equal(kiln.evaluate("cumsum(x)", local_dict={"x": x}), np.cumsum(x, dtype=np.int64))
            assert kiln.evaluate("max(x)", local_dict={"x": x}) == x.max()


def test_strided_last_axes_are_read_in_place():
    x = np.arange(8 * 1000.0).reshape(8, 1000)
    cases = [
        (x[:, ::-1], "-1", "[1000]"),
        # 500 columns 2 apart in rows 1000 apart: one row of 4000 points 2 apart
        (x[:, ::2], "2", "[]"),
        (x[::-2, ::-3], "-3", "[-2000]"),
        (x[::-1, ::-1], "-1", "[]"),
        (x[0, ::-4], "-4", "[]"),
    ]
    for view, stride, outer in cases:
        want = f"in0: per-row strided, in place (element stride {stride}), outer strides {outer}"
        assert plan_of(view) == want, plan_of(view)
        np.testing.assert_array_equal(kiln.evaluate("v * 2", local_dict={"v": view}), view * 2)
        np.testing.assert_allclose(kiln.evaluate("sum(v, axis=-1)", local_dict={"v": view}), view.sum(axis=-1), rtol=1e-12)
    # a C input beside a Fortran or transposed one: the odd one's rows step by a whole column
    c = np.arange(80 * 130.0).reshape(80, 130)
    for odd in (np.asfortranarray(c * 0.5), np.ascontiguousarray((c * 0.25).T).T):
        text = explain("a + b", a=c, b=odd)
        assert "in1: per-row strided, in place (element stride 80), outer strides [1]" in text, text
        assert "materialise" not in text, text
        np.testing.assert_array_equal(kiln.evaluate("a + b", local_dict={"a": c, "b": odd}), c + odd)
    # rows too short for an outer loop are still copied once, and right
    short = x[:, 20::-2]
    assert plan_of(short) == "in0: materialise", plan_of(short)
    np.testing.assert_array_equal(kiln.evaluate("v * 2", local_dict={"v": short}), short * 2)


def explain(expr, **arrays):
    return kiln.compile(expr).explain(**arrays)


def test_fortran_and_transposed_inputs_are_read_in_memory_order():
    # every input C-contiguous under one permutation of its axes: the kernel runs on that order
    # (each input read in place), and the result has the inputs' layout, as NumPy's and numexpr's
    # order='K' (a Fortran result for Fortran inputs)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((80, 130))
    cube = rng.standard_normal((5, 6, 70))
    for v in (np.asfortranarray(x), x.T, np.asfortranarray(cube), cube.transpose(2, 0, 1), x.T[:, :1], x[:1].T):
        for expr, want in (("v * 3 - 1", v * 3 - 1), ("where(v > 0, sqrt(v), -v)", np.where(v > 0, np.sqrt(np.abs(v)), -v))):
            got = kiln.evaluate(expr, local_dict={"v": v})
            np.testing.assert_array_equal(got, want)
            assert got.strides == want.strides or v.size <= 1 or min(v.shape) == 1, (got.strides, want.strides)
        np.testing.assert_allclose(kiln.evaluate("sum(v)", local_dict={"v": v}), v.sum(), rtol=1e-12)
        assert kiln.evaluate("max(v)", local_dict={"v": v}) == v.max()
        np.testing.assert_allclose(kiln.evaluate("sum(v, axis=0)", local_dict={"v": v}), v.sum(axis=0), rtol=1e-12, atol=1e-12)
    f = np.asfortranarray(x)
    for v in (f, x.T):
        text = explain("v * 2", v=v)
        assert "memory order" in text and "in0: contiguous" in text, text
    # two Fortran inputs, with a row, a column and a 0-d array broadcast beside them
    g = np.asfortranarray(rng.standard_normal((80, 130)))
    row, col, zero_d = rng.standard_normal(130), rng.standard_normal((80, 1)), np.array(0.5)
    env = {"a": f, "b": g, "r": row, "c": col, "z": zero_d}
    got = kiln.evaluate("a * b + r * c - z", local_dict=env)
    np.testing.assert_array_equal(got, f * g + row * col - zero_d)
    assert got.flags.f_contiguous and not got.flags.c_contiguous
    text = explain("a * b + r * c - z", **env)
    assert "memory order" in text and "materialise" not in text, text
    np.testing.assert_allclose(kiln.evaluate("sum(a * b)", local_dict=env), (f * g).sum(), rtol=1e-12)
    # a C input beside a Fortran one: no common order, a C result as NumPy's
    got = kiln.evaluate("a + x", local_dict={"a": f, "x": x})
    np.testing.assert_array_equal(got, f + x)
    assert got.flags.c_contiguous
    text = explain("a + x", a=f, x=x)
    assert "memory order" not in text and "in0: per-row strided" in text and "materialise" not in text, text
    # order= and out= still give what they say
    assert kiln.evaluate("a * 2", local_dict={"a": f}, order="C").flags.c_contiguous
    assert kiln.evaluate("a * 2", local_dict={"a": x}, order="F").flags.f_contiguous
    for out in (np.empty_like(f), np.empty((80, 130))):
        kiln.evaluate("a * b", local_dict=env, out=out)
        np.testing.assert_array_equal(out, f * g)
    # empty and one-element transposed views
    for v in (np.zeros((0, 4)).T, np.ones((1, 1)).T, np.asfortranarray(np.zeros((3, 0)))):
        np.testing.assert_array_equal(kiln.evaluate("v * 2", local_dict={"v": v}), v * 2)
        assert kiln.evaluate("sum(v)", local_dict={"v": v}) == v.sum()


def _flags(a):
    return (a.flags.c_contiguous, a.flags.f_contiguous)


def test_axis_reductions_scans_and_pipelines_of_fortran_inputs_run_in_memory_order():
    # axis reductions, arg-reductions along an axis, scans along an axis and pipelines of several
    # kernels on Fortran and transposed inputs: read in place (each kernel's axes mapped), NumPy's
    # values and NumPy's layout (order='K': a Fortran result of Fortran inputs; argmin and argmax
    # in C order), on the first call of a form and through its handle after
    rng = np.random.default_rng(11)
    x = rng.standard_normal((40, 70))
    cube = rng.standard_normal((5, 6, 30))
    views = [np.asfortranarray(x), x.T, np.asfortranarray(cube), cube.transpose(2, 0, 1), cube.transpose(1, 0, 2)]
    for v in views:
        env = {"v": v}
        cases = []
        for axis in list(range(v.ndim)) + [-1]:
            cases += [
                (f"sum(v, axis={axis})", np.sum(v, axis=axis)),
                (f"prod(v, axis={axis})", np.prod(v, axis=axis)),
                (f"max(v, axis={axis})", np.max(v, axis=axis)),
                (f"min(v, axis={axis}, keepdims=True)", np.min(v, axis=axis, keepdims=True)),
                (f"mean(v, axis={axis})", np.mean(v, axis=axis)),
                (f"var(v, axis={axis})", np.var(v, axis=axis)),
                (f"std(v, axis={axis}, keepdims=True)", np.std(v, axis=axis, keepdims=True)),
                (f"sum(v, axis={axis}, initial=1.5)", np.sum(v, axis=axis, initial=1.5)),
                (f"argmax(v, axis={axis})", np.argmax(v, axis=axis)),
                (f"argmin(v, axis={axis})", np.argmin(v, axis=axis)),
                (f"cumsum(v, axis={axis})", np.cumsum(v, axis=axis)),
                (f"cummax(v, axis={axis})", np.maximum.accumulate(v, axis=axis)),
            ]
        cases += [
            ("v - mean(v, axis=1, keepdims=True)", v - np.mean(v, axis=1, keepdims=True)),
            (
                "exp(v - max(v, axis=-1, keepdims=1)) / sum(exp(v - max(v, axis=-1, keepdims=1)), axis=-1, keepdims=1)",
                np.exp(v - v.max(axis=-1, keepdims=True)) / np.exp(v - v.max(axis=-1, keepdims=True)).sum(axis=-1, keepdims=True),
            ),
            ("std(v, axis=0)", np.std(v, axis=0)),
            ("sqrt(sum(v * v, axis=0))", np.sqrt(np.sum(v * v, axis=0))),
            ("sum(v, axis=(0, 1))", np.sum(v, axis=(0, 1))),
        ]
        for expr, want in cases:
            for _ in range(2):
                got = kiln.evaluate(expr, local_dict=env)
                np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, err_msg=expr)
                assert got.dtype == want.dtype, (expr, got.dtype, want.dtype)
                assert got.shape == want.shape, (expr, got.shape, want.shape)
                assert _flags(got) == _flags(want), (expr, v.strides, got.strides, want.strides)
        for expr in ("sum(v, axis=0)", "cumsum(v, axis=1)", "v - mean(v, axis=1, keepdims=True)"):
            text = explain(expr, v=v)
            assert "memory order" in text and "in0: contiguous" in text, text
    # a flat index depends on C order: run as before, and NumPy's
    f = np.asfortranarray(x)
    for expr, want in (("argmax(v)", np.argmax(f)), ("cumsum(v)", np.cumsum(f))):
        np.testing.assert_allclose(kiln.evaluate(expr, local_dict={"v": f}), want, rtol=1e-10, atol=1e-12)
        assert "memory order" not in explain(expr, v=f)
    # out=: a Fortran output written in memory order, a C one in the user's order
    for out in (np.empty((70,), order="F"), np.empty((40, 1), order="F"), np.empty((40, 1))):
        expr = "sum(v, axis=0)" if out.ndim == 1 else "sum(v, axis=1, keepdims=True)"
        kiln.evaluate(expr, local_dict={"v": f}, out=out)
        np.testing.assert_allclose(out, f.sum(axis=0) if out.ndim == 1 else f.sum(axis=1, keepdims=True), rtol=1e-12)
    for out in (np.empty_like(f), np.empty((40, 70))):
        kiln.evaluate("cumsum(v, axis=0)", local_dict={"v": f}, out=out)
        np.testing.assert_allclose(out, np.cumsum(f, axis=0), rtol=1e-12, atol=1e-12)


def test_byte_swapped_input_is_converted_and_left_alone():
    x = np.arange(12.0).reshape(3, 4).astype(">f8")
    before = x.copy()
    np.testing.assert_array_equal(kiln.evaluate("x + 1"), before + 1)
    assert x.dtype == np.dtype(">f8")
    np.testing.assert_array_equal(x, before)


def test_the_gil_is_released_while_a_kernel_runs():
    """A second Python thread makes progress while the first is inside kiln. With a switch interval
    of an hour, this thread gives the GIL away only where something releases it explicitly: the
    other thread (which releases it at each `sleep(0)`) can then count only while kiln runs."""
    x = np.linspace(-3, 3, 2_000_000)
    k = kiln.compile("sin(x)*cos(x) + sqrt(abs(x)) + exp(-x*x)", threads=1)
    k(x=x)  # compiled before the race starts
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1
            time.sleep(0)

    old = sys.getswitchinterval()
    sys.setswitchinterval(3600)
    t = threading.Thread(target=spin)
    try:
        t.start()
        advanced = 0
        for _ in range(10):
            before = count[0]
            k(x=x)
            advanced += count[0] > before
    finally:
        stop.set()
        sys.setswitchinterval(old)
        t.join()
    assert advanced > 0


def test_large_results_come_from_a_bounded_pool_and_stay_valid():
    # a result of at least 4 MiB lives in a kiln buffer that returns to a small pool when NumPy frees
    # the array (and every view of it); the next result of that size and dtype reuses it
    from kiln import _kiln

    _kiln.clear_output_pool()
    n = 1 << 20  # 8 MiB of float64
    x = np.linspace(-1, 1, n)
    k = kiln.compile("x * 2 + 1")
    k(x=x)  # the first call of a form returns the run that prepares its handle: not pooled
    assert _kiln.output_pool() == (0, 0)
    r = k(x=x)
    assert _kiln.output_pool() == (0, 0)
    view = r[::3]
    want = x * 2 + 1
    del r
    assert _kiln.output_pool() == (0, 0), "a view keeps the buffer"
    r2 = k(x=x)  # a new buffer: the first is still the view's
    np.testing.assert_array_equal(view, want[::3])
    del view
    assert _kiln.output_pool() == (1, 8 * n)
    r3 = k(x=x + 1)  # reuses the pooled buffer
    assert _kiln.output_pool() == (0, 0)
    np.testing.assert_array_equal(r2, want)
    np.testing.assert_array_equal(r3, (x + 1) * 2 + 1)
    assert r3.flags.writeable and r3.flags.c_contiguous
    r3[:] = 0  # written by NumPy, then pooled, then filled by the next call
    del r2, r3
    assert _kiln.output_pool() == (2, 16 * n)
    # float32 buffers are another pool entry; the pool keeps at most 4 buffers
    x32 = x.astype(np.float32)
    f32 = [kiln.evaluate("v * 2", local_dict={"v": x32}) for _ in range(3)]
    many = [k(x=x) for _ in range(5)]
    for m in many:
        np.testing.assert_array_equal(m, want)
    np.testing.assert_array_equal(f32[0], x32 * 2)
    del f32, many
    count, size = _kiln.output_pool()
    assert count == 4 and size <= 4 * 8 * n
    # a reduction's result and small results do not use it
    assert kiln.evaluate("sum(x * x)") == pytest_approx((x * x).sum())
    assert _kiln.output_pool() == (count, size)
    _kiln.clear_output_pool()
    assert _kiln.output_pool() == (0, 0)


def pytest_approx(v):
    import pytest

    return pytest.approx(v, rel=1e-12, abs=1e-12)
