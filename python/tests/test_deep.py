"""Expressions of any depth from Python: a flat chain of 10,000 terms compiles and agrees with NumPy
(the tree is as deep as the chain is long; nothing in kiln recurses per node)."""

import numpy as np

import kiln


def test_a_ten_thousand_term_chain_agrees_with_numpy():
    x = np.linspace(-2.0, 3.0, 37)
    terms = 10_000
    text = " + ".join(f"x*{1 + k / 64!r}" for k in range(terms))
    want = x * 1.0
    for k in range(1, terms):
        want = want + x * (1 + k / 64)
    got = kiln.evaluate(text, local_dict={"x": x})
    np.testing.assert_array_equal(got, want)
    want = x.copy()
    for _ in range(1, terms):
        want = want + x
    np.testing.assert_array_equal(kiln.evaluate(" + ".join(["x"] * terms), local_dict={"x": x}), want)
