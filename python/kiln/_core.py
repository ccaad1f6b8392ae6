"""What `kiln.evaluate` and `kiln.compile` share: binding Python values as kiln inputs, `out=`,
`order=` and `casting=`, and the `Kernel` class.

Inputs reach kiln as NumPy arrays of float64, float32, int64, int32, bool, complex64 or complex128
in native byte order,
read in place whatever their strides (C, Fortran, sliced, negative strides), and byte-string (`S`)
arrays in C order. Anything else is
converted here once (a byte-swapped or unaligned array, a Python or NumPy float, a Python int as a
0-d int64 array, a Python complex as a 0-d complex128 array, Python `bytes` as a 0-d `S` array, a
list; an `S` array of another layout copied in C order; int8, int16, uint8, uint16 and
uint32 widened exactly to int64, uint64 too when every value fits) or refused: unicode (`U`)
strings with numexpr's `ValueError`, float16, long double and complex long double data and uint64
beyond int64 with a `TypeError`.
"""

from __future__ import annotations

import numpy as np

from . import _kiln

_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
_NATIVE = (
    np.dtype(np.int64),
    np.dtype(np.int32),
    np.dtype(np.bool_),
    np.dtype(np.complex128),
    np.dtype(np.complex64),
)
# the types `out=` is written in place of (`_kiln.Kernel.run_into`)
_INTO = (_F64, _F32) + _NATIVE
_ORDERS = ("K", "A", "C", "F")
_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")


class UnsupportedTypeError(TypeError):
    """An input of a type kiln has no kernels for (float16, long double,
    uint64 beyond int64), named with the expression. A `TypeError`, not numexpr's
    `NotImplementedError`: numexpr raises that for one operation it has no opcode for (a string with
    a number, `<` of complex values, as kiln does too), and its own tests skip such a case as not
    implemented, where kiln lacks the type itself (they are counted as kiln's failures)."""


def as_input(name, value, expression=None):
    """`value`, bound to `name`, as an array kiln reads: float64 or float32, native, aligned; an
    `UnsupportedTypeError` naming the input, its dtype and the `expression` for a type kiln lacks."""
    if type(value) is np.ndarray:
        dt = value.dtype
        # the builtin dtypes are singletons: a byte-swapped float64 is another object
        if (dt is _F64 or dt is _F32 or dt in _NATIVE) and value.flags.aligned and dt.isnative:
            return value
    elif isinstance(value, float):
        # a Python float or NumPy float64 scalar: bound by kiln as a 0-d float64 array, with no
        # NumPy array made per call
        return value
    elif isinstance(value, complex):
        # a Python complex or NumPy complex128 scalar: a 0-d complex128 array, as a float's
        return value
    else:
        value = np.asarray(value)
        dt = value.dtype
        # a Python int or bool, a NumPy integer, bool or float32 scalar, a list: a new native array
        # of one of kiln's types is bound as it is (`np.require` below costs several microseconds)
        if (dt is _F64 or dt is _F32 or dt in _NATIVE) and dt.isnative and value.flags.aligned:
            return value
    if dt.kind == "f" and dt.itemsize in (4, 8):
        # byte-swapped or unaligned: converted once, to native order
        return np.require(value, dtype=dt.newbyteorder("="), requirements="A")
    if dt.kind == "b":
        return np.require(value, dtype=np.bool_, requirements="A")
    if dt.kind in "ic" and dt.itemsize in ((4, 8) if dt.kind == "i" else (8, 16)):
        return np.require(value, dtype=dt.newbyteorder("="), requirements="A")
    if dt.kind in "iu" and dt.itemsize <= 4:
        # int8, int16, uint8, uint16, uint32: every value fits int64
        return value.astype(np.int64)
    where = f" in '{expression}'" if expression is not None else ""
    if dt.kind == "u":
        if value.size and value.max() > np.iinfo(np.int64).max:
            raise UnsupportedTypeError(
                f"input '{name}'{where} has dtype {dt} with values beyond int64: kiln has no unsigned type"
            )
        return value.astype(np.int64)
    if dt.kind == "S":
        # C order, and NumPy's empty `S0` as `S1` (a NUL)
        return np.ascontiguousarray(value if dt.itemsize else value.astype("S1"))
    if dt.kind == "U":
        raise ValueError(
            f"NumExpr 2 does not support Unicode as a dtype. (input '{name}'{where} has dtype {dt}: "
            "kiln, as numexpr, compares byte strings; encode it, e.g. np.char.encode(a, 'ascii'))"
        )
    raise UnsupportedTypeError(
        f"input '{name}'{where} has dtype {dt}: kiln computes in bool, int32, int64, float32, float64, "
        "complex64 and complex128"
    )


def check_options(order, casting):
    """A `ValueError` for an `order` or `casting` NumPy does not know."""
    if order not in _ORDERS:
        raise ValueError(f"order must be one of {_ORDERS}, got {order!r}")
    if casting not in _CASTINGS:
        raise ValueError(f"casting must be one of {_CASTINGS}, got {casting!r}")


def run(kernel, args, out, order, casting):
    """Runs `kernel` (a `_kiln.Kernel`) on `args`, into `out` if given; the result."""
    if out is None:
        if order == "K" and (casting == "safe" or casting == "same_kind"):
            return kernel.run(args)
        check_options(order, casting)
        result = kernel.run(args)
        if order == "F":
            return np.asfortranarray(result)
        return np.ascontiguousarray(result) if order == "C" or not (result.flags.c_contiguous or result.flags.f_contiguous) else result
    check_options(order, casting)
    return run_out(kernel, args, out, casting)


def _broadcast_shape(a, b):
    """The broadcast shape of `a` and `b`, None where they do not broadcast."""
    try:
        return np.broadcast_shapes(a, b)
    except ValueError:
        return None


def _distinct_elements(a):
    """Whether no two elements of `a` share bytes (sufficient, not exact: the axes of more than
    one element sorted by stride, each stride passes the extent the smaller axes span; a view made
    by `as_strided` with a zero or too small stride fails). Only such an `out` is written in place."""
    reach = a.itemsize
    for stride, n in sorted((abs(s), n) for s, n in zip(a.strides, a.shape) if n > 1):
        if stride < reach:
            return False
        reach += stride * (n - 1)
    return True


def run_out(kernel, args, out, casting):
    """Writes the result into `out`: in place (no temporary) when `out` is an aligned array of the
    result's shape and dtype that no input overlaps (a C-contiguous one by the compiled pass
    itself), otherwise through one temporary. A result whose shape broadcasts to `out`'s is
    broadcast into it (numexpr's `evaluate('3', out=a)`)."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"out must be a NumPy array, not {type(out).__name__}")
    if not out.flags.writeable:
        raise ValueError("out is read-only")
    dt = out.dtype
    if (
        dt in _INTO
        and dt.isnative
        and out.flags.aligned
        and _distinct_elements(out)
        and not any(np.may_share_memory(out, a) for a in args)
    ):
        try:
            kernel.run_into(args, out)
            return out
        except ValueError as e:
            # the result's shape or dtype differs from out's: checked and cast below
            if not str(e).startswith("result mismatch"):
                raise
    return finish_out(kernel.run(args), out, casting)


def finish_out(result, out, casting):
    """Writes `result`, a new array kiln made, into `out` (a writeable array) and returns `out`: cast
    under `casting` (a `TypeError` where it refuses), broadcast where its shape broadcasts to out's
    (a `ValueError` where it does not). Also the builtin `evaluate`'s path for an `out` of another
    dtype or shape than the result's."""
    if result.shape != out.shape and _broadcast_shape(result.shape, out.shape) != out.shape:
        raise ValueError(f"out has shape {out.shape} but the result has shape {result.shape}")
    if not np.can_cast(result.dtype, out.dtype, casting):
        raise TypeError(
            f"cannot cast the result from {result.dtype} to out's {out.dtype} under casting={casting!r}"
        )
    np.copyto(out, result, casting="unsafe")
    return out


class Kernel(_kiln.Callable):
    """An expression compiled by `kiln.compile`: call it with its inputs by name.

    `kernel(x=..., y=...)` returns a new array, `kernel(out=o, x=..., y=...)` writes into `o` and
    returns it. `kernel.names` lists the inputs in order of first appearance; `kernel.explain()`
    shows the kernels kiln runs for inputs of a given form. A `Kernel` may be called from several
    Python threads at once: it releases the GIL while it runs.
    """

    # `_kernel` (the compiled `_kiln.Kernel`) and the call itself are the base class's, in kiln
    __slots__ = ("names", "expression")

    def __init__(self, kernel):
        self.names = tuple(kernel.names)
        self.expression = kernel.expression

    def _args(self, arrays):
        args = []
        try:
            for n in self.names:
                value = arrays[n]
                if type(value) is not np.ndarray or not (value.dtype is _F64 or value.dtype is _F32) or not value.flags.aligned:
                    value = as_input(n, value, self.expression)
                args.append(value)
        except KeyError as e:
            raise KeyError(f"no input named {e.args[0]!r} was given (the expression uses {', '.join(self.names)})") from None
        if len(arrays) != len(self.names):
            extra = sorted(set(arrays) - set(self.names))
            raise TypeError(f"unexpected input(s) {', '.join(extra)}: the expression uses {', '.join(self.names) or 'no inputs'}")
        return args

    # `kernel(out=None, order="K", casting="safe", **arrays)` is the base class's `__call__`, in
    # kiln (not overridden here, so that a call makes no Python frame): the common calls (no out=,
    # order 'K', casting 'safe'; or an array out= that kiln writes as it is, order 'K', any
    # casting) run there, and any other comes back to `_call_slow`

    def _call_slow(self, out, order, casting, arrays):
        """A call with another `order` or `casting`, an `out=` written through a temporary (or
        refused), or an input missing."""
        args = self._args(arrays)
        return run(self._kernel, args, out, order, casting)

    def explain(self, clif=False, asm=False, **arrays):
        """The kernels kiln runs for these inputs, as text: the plan of kernels when there are
        several, each kernel's IR and broadcast plan, and with `clif` / `asm` the last kernel's
        Cranelift IR and machine code. An input not given is assumed float64 of shape (1024,)."""
        given = {n: arrays[n] if n in arrays else np.zeros(1024) for n in self.names}
        extra = sorted(set(arrays) - set(self.names))
        if extra:
            raise TypeError(f"unexpected input(s) {', '.join(extra)}: the expression uses {', '.join(self.names)}")
        args = [as_input(n, given[n], self.expression) for n in self.names]
        return self._kernel.explain(args, clif, asm)

    def __repr__(self):
        return f"kiln.Kernel({self.expression!r}, names={self.names!r})"


def compile(ex, *, profile=None, threads=None):
    """Compiles the expression `ex` (kiln's text language, a superset of numexpr's) into a `Kernel`.

    `profile` is "default", "approximate" or "reproducible" (see kiln's README); `threads` the
    number of threads a run may use (default: every core; runs below 2^18 points stay on the
    calling thread). Kernels are cached per process: compiling the same text again is a lookup.

    A bad expression raises `SyntaxError` with its position (`offset`), an unknown function
    `ValueError`, a call with the wrong number of arguments `TypeError`.
    """
    if not isinstance(ex, str):
        raise TypeError(f"the expression must be a str, not {type(ex).__name__}")
    return Kernel(_kiln.compile(ex, profile, threads))
