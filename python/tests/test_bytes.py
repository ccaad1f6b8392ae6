"""Byte strings from Python (issue 25 item 3): NumPy `S` arrays, `bytes` values and `b'...'`
literals compared and searched through `kiln.evaluate` and `kiln.numexpr`, against NumPy and
numexpr's rules; what numexpr refuses, refused with its exceptions."""

import numpy as np
import pytest

import kiln
import kiln.numexpr as kne


def random_strings(n, width, seed):
    rng = np.random.default_rng(seed)
    alphabet = np.frombuffer(b"ab\x00\x7f\x80\xff", dtype="S1")
    chars = alphabet[rng.integers(0, 6, size=(n, width))]
    lengths = rng.integers(0, width + 1, size=n)
    chars[np.arange(width)[None, :] >= lengths[:, None]] = b""
    return chars.view(f"S{width}").reshape(n)


@pytest.mark.parametrize("op", ["==", "!=", "<", "<=", ">", ">="])
def test_comparisons_are_numpys(op):
    a, b = random_strings(500, 5, 1), random_strings(500, 3, 2)
    want = eval(f"a {op} b")  # noqa: S307 (NumPy's own operator)
    got = kiln.evaluate(f"a {op} b", local_dict={"a": a, "b": b})
    assert got.dtype == np.bool_ and np.array_equal(got, want)
    # against a constant, on either side, and a broadcast column
    assert np.array_equal(kiln.evaluate(f"a {op} b'a\\x80'", local_dict={"a": a}), eval(f"a {op} b'a\\x80'"))  # noqa: S307
    col = a[:20].reshape(20, 1)
    row = b[:7].reshape(1, 7)
    assert np.array_equal(kiln.evaluate(f"col {op} row", local_dict={"col": col, "row": row}), eval(f"col {op} row"))  # noqa: S307


def test_contains_is_numexprs_and_finds_as_numpy_without_nuls():
    rng = np.random.default_rng(3)
    letters = np.frombuffer(b"abc", dtype="S1")
    h = letters[rng.integers(0, 3, size=(400, 8))].view("S8").reshape(400)
    n = letters[rng.integers(0, 3, size=(400, 2))].view("S2").reshape(400)
    want = np.char.find(h, n) >= 0
    assert np.array_equal(kiln.evaluate("contains(h, n)", local_dict={"h": h, "n": n}), want)
    assert np.array_equal(kne.evaluate("contains(h, b'ab')"), np.char.find(h, b"ab") >= 0)
    # numexpr's rule: each operand up to its first NUL (numexpr 2.14 gives the same; not called here,
    # as its expression builder keeps global state other tests see)
    s = random_strings(300, 4, 4)
    want = [b"a" in bytes(v).split(b"\0")[0] for v in s]
    assert np.array_equal(kne.evaluate("contains(s, b'a\\x00z')"), want)


def test_strings_at_any_address_are_read_in_place():
    # S10 arrays whose data starts at every offset 0..10 of a bytes buffer (misaligned for the width),
    # twice (the second call takes the bound handle), against NumPy and numexpr's rules
    rng = np.random.default_rng(5)
    n = 101
    raw = np.frombuffer(b"ab\x00c\x7f", dtype=np.uint8)[rng.integers(0, 5, size=10 * n + 20)].tobytes()
    x = np.arange(n, dtype=np.float64)
    for off in range(10):
        a = np.frombuffer(raw[off : off + 10 * n], dtype="S10")
        b = np.frombuffer(raw[19 - off : 19 - off + 10 * n], dtype="S10")
        env = {"a": a, "b": b, "x": x}
        for _ in range(2):
            assert np.array_equal(kiln.evaluate("a == b", local_dict=env), a == b)
            assert np.array_equal(kiln.evaluate("a < b", local_dict=env), a < b)
            want = [bytes(v).split(b"\0")[0].find(b"ab") >= 0 for v in a]
            assert np.array_equal(kiln.evaluate("contains(a, b'ab')", local_dict=env), want)
            got = kiln.evaluate("where(a >= b, x, -x)", local_dict=env)
            assert np.array_equal(got, np.where(a >= b, x, -x))


def test_strings_combine_with_numbers():
    s = np.array([b"abc", b"ab", b"x", b""])
    x = np.array([1.0, -2.0, 3.0, 4.0])
    got = kiln.evaluate("where(contains(s, b'a') & (x > 0), x, 0)", local_dict={"s": s, "x": x})
    assert np.array_equal(got, [1.0, 0.0, 0.0, 0.0])
    assert np.array_equal(kne.evaluate("(s == b'abc') | (x > 3)"), [True, False, False, True])


def test_views_and_scalars():
    s = np.array([[b"abc", b"x"], [b"ab", b"abc"]])
    assert np.array_equal(kiln.evaluate("s.T == b'abc'" .replace("s.T", "t"), local_dict={"t": s.T}), s.T == b"abc")
    assert np.array_equal(kiln.evaluate("t == b'ab'", local_dict={"t": s[:, ::-1]}), s[:, ::-1] == b"ab")
    svar = b"abc"
    assert np.array_equal(kne.evaluate("s >= svar"), s >= svar)
    assert kne.evaluate("contains(b'abc', b'bc')") == np.True_


def test_a_string_alone_is_a_copy_of_every_byte():
    for raw in [b"\0\0foo\0", b"foo\0bar\0baz\0\0", b""]:
        s = np.array(raw)
        r = kne.evaluate("s")
        assert r.dtype.kind == "S" and r.tobytes() == s.tobytes()
    a = np.array([b"ab", b"c\0d"])
    r = kne.evaluate("a")
    assert np.array_equal(r, a) and r.dtype == a.dtype and r.flags.writeable


def test_numexprs_errors():
    s = np.array([b"ab", b"c"])
    i = np.arange(2, dtype=np.int32)
    for ex, exc, words in [
        ("s + s", NotImplementedError, "'add_sss'"),
        ("s >= i", NotImplementedError, "'ge_bsi'"),
        ("s == 1", NotImplementedError, "'eq_bsi'"),
        ("contains(s, 1)", NotImplementedError, "'contains_bsi'"),
        ("s * 2", TypeError, "strings can only be operated with strings"),
        ("sum(s)", NotImplementedError, "'sum_ssn'"),
    ]:
        with pytest.raises(exc, match=words):
            kne.evaluate(ex)
    u = np.array(["abc"])
    with pytest.raises(ValueError, match="does not support Unicode"):
        kne.evaluate("u == b'abc'")


def test_empty_arrays_of_strings_of_any_shape():
    # an empty S array with other extents than its zero (a panic before: found by the npy fuzzer)
    for shape in [(0, 2), (2, 0), (1, 0, 3)]:
        s = np.zeros(shape, dtype="S8")
        got = kiln.evaluate("s == b'ab'", local_dict={"s": s})
        assert got.shape == shape and got.dtype == np.bool_
        got = kiln.evaluate("contains(s, b'a')", local_dict={"s": s})
        assert got.shape == shape
