"""Repeated calls of typed kernels (issue 24 item 2): the second and later calls of one input form
go through the bound handle's direct call, for every element type, and give NumPy's values and
dtypes; byte strings at any address, strided views and a changed form give the same answers."""

import numpy as np
import pytest

import kiln

N = 100
RNG = np.random.default_rng(7)
I64 = np.arange(N, dtype=np.int64) * 7919 - 300
I32 = (np.arange(N, dtype=np.int32) % 13) - 6
B = np.arange(N) % 3 == 0
Z = RNG.random(N) + 1j * RNG.random(N)
W = (RNG.random(N) - 1j * RNG.random(N)).astype(np.complex64)
S = np.array([b"x", b"abc", b"", b"xy"] * (N // 4), dtype="S10")

CASES = [
    ("i*2 + 1", {"i": I64}, lambda i: i * 2 + 1),
    ("(i * 3 + j) % 7", {"i": I64, "j": I32}, lambda i, j: (i * 3 + j) % 7),
    ("j * 2 - 1", {"j": I32}, lambda j: j * 2 - 1),
    ("b & (i > 0)", {"b": B, "i": I64}, lambda b, i: b & (i > 0)),
    ("z * z + 1", {"z": Z}, lambda z: z * z + 1),
    ("w * w", {"w": W}, lambda w: w * w),
    ("s == b'x'", {"s": S}, lambda s: s == b"x"),
    ("sum(i * j)", {"i": I64, "j": I32}, lambda i, j: np.sum(i * j)),
]


@pytest.mark.parametrize("ex, env, numpy_fn", CASES, ids=[c[0] for c in CASES])
def test_repeated_calls_of_every_type_are_numpys(ex, env, numpy_fn):
    want = numpy_fn(**env)
    first = kiln.evaluate(ex, local_dict=env)
    for _ in range(3):
        got = kiln.evaluate(ex, local_dict=env)
        assert got.dtype == np.asarray(want).dtype
        # the bound call gives the first (general) call's bits
        assert np.array_equal(got, first)
        if np.iscomplexobj(got):
            # NumPy's complex product rounds its parts otherwise (within an ulp of each)
            assert np.allclose(got, want, rtol=1e-6 if got.dtype == np.complex64 else 1e-14, atol=0)
        else:
            assert np.array_equal(got, want)


def test_byte_strings_at_any_address():
    raw = np.frombuffer(b"\x00" + S.tobytes() + b"\x00" * 9, dtype=np.uint8)
    for start in range(4):
        s = raw[start : start + S.nbytes].view("S10")
        for _ in range(2):
            assert np.array_equal(kiln.evaluate("s == b'x'", local_dict={"s": s}), s == b"x")


def test_strided_views_and_changed_forms():
    m = (np.arange(5 * 40, dtype=np.int64) - 77).reshape(5, 40)
    for v in (m[:, 1:], m[:, ::2], m.T, m[:, 1:]):
        for _ in range(2):
            assert np.array_equal(kiln.evaluate("i * 3 - 1", local_dict={"i": v}), v * 3 - 1)
    # the same name bound to another type, then back
    for i in (I64, I32, B.astype(np.int64), I64):
        assert np.array_equal(kiln.evaluate("i*2 + 1", local_dict={"i": i}), i * 2 + 1)
