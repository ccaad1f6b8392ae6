"""kiln expressions over Dask arrays: the same text, evaluated chunk by chunk by kiln's kernels,
scheduled by Dask (threads, processes or a dask.distributed cluster).

    >>> import dask.array as da, kiln.dask
    >>> x = da.random.random((4000, 3000), chunks=(1000, 1000))
    >>> kiln.dask.evaluate("sum(x*x, axis=1)", local_dict={"x": x}).compute()

`evaluate` and `compile` build a lazy Dask graph and compute nothing. The expression is split at
its reductions and scans, as kiln splits it into kernels on one machine:

- an elementwise part is one `blockwise` task per block, running one fused kiln kernel on the
  blocks of its inputs (NumPy broadcasting across chunkings; a size-1 axis is never materialised);
- a reduction is a per-chunk partial state computed by one fused kiln kernel (`sum(x*x)` reads each
  chunk once), then Dask's reduction tree (a fixed `split_every`) merging the states in NumPy in a
  fixed order, then one finishing step. The states: a sum or product (float64 for float32 data, as
  kiln accumulates), a min or max (with `initial=±inf` so that a 0-size chunk is neutral), any/all,
  (count, mean, M2) merged by Chan's formula for `var`/`std`, (value, global index) for
  `argmin`/`argmax` (ties and NaN resolved by the smaller index, kiln's "first extreme");
- a scan is kiln's inclusive scan per chunk, the chunk totals folded in order into carries, and
  each chunk finished with its carry (`exclusive`, `reverse` and `initial` applied there);
- an expression whose reductions feed later work (softmax, `x - max(x, axis=1, keepdims=1)`,
  layer norm) is a graph of the above: each reduction becomes a Dask array bound to a fresh name
  in the rest of the expression, which stays one fused kernel per block.

For a fixed chunking (and `split_every`) the graph, and so every bit of the result, is the same
on any scheduler and any number of workers. Tasks carry the expression text, not compiled code:
each worker process compiles a text once and keeps it in kiln's kernel cache. kiln runs each task
on one thread by default (`threads=1`): Dask's workers are the parallelism.

Contractions (`x[i]`, `index=`) are not split across chunks: `evaluate` refuses them with a
`ValueError`; evaluate them with `kiln.evaluate` on NumPy arrays.
"""

from __future__ import annotations

import ast
import itertools
import math
import sys
import threading
from numbers import Integral

import numpy as np

from . import _kiln
from ._core import as_input

try:
    import dask
    import dask.array as da
    from dask.array.core import unify_chunks
except ImportError as e:  # pragma: no cover - exercised only without dask
    raise ImportError("kiln.dask needs Dask: pip install 'dask[array]' (or 'dask[distributed]')") from e

__all__ = ["evaluate", "compile", "DaskKernel", "cache_info"]

_REDUCTIONS = ("sum", "prod", "min", "max", "any", "all", "argmin", "argmax", "mean", "var", "std")
_SCANS = ("cumsum", "cumprod", "cummax", "cummin")

# ---------------------------------------------------------------------------------------------
# the per-process kernel cache the tasks use (on a worker: compiled on first use, then a lookup)

_kernels = {}
_kernels_lock = threading.Lock()
_compiles = 0


def _kernel(text, profile, threads):
    """The compiled kiln kernel of `text`, from this process's cache (compiled under a lock, so
    once per process however many tasks ask at once)."""
    key = (text, profile, threads)
    k = _kernels.get(key)
    if k is None:
        global _compiles
        with _kernels_lock:
            k = _kernels.get(key)
            if k is None:
                k = _kiln.compile(text, profile, threads)
                _kernels[key] = k
                _compiles += 1
    return k


def cache_info():
    """This process's kiln.dask kernel cache: `{"kernels": n, "compiles": m, "texts": [...]}`,
    `compiles` counting calls into kiln's compiler (equal to `kernels`: each text compiled once).
    On a cluster, `client.run(kiln.dask.cache_info)` gives each worker's."""
    with _kernels_lock:
        return {"kernels": len(_kernels), "compiles": _compiles, "texts": sorted(k[0] for k in _kernels)}


def _run(text, profile, threads, names, values):
    k = _kernel(text, profile, threads)
    return k.run([as_input(n, v) for n, v in zip(names, values)])


class _Task:
    """A task function: the kernel's text, profile and thread count, and its input names. Pickles
    as those strings; the kernel is compiled (once per process) where the task runs."""

    __slots__ = ("text", "profile", "threads", "names")

    def __init__(self, text, profile, threads, names):
        self.text = text
        self.profile = profile
        self.threads = threads
        self.names = tuple(names)

    def __getstate__(self):
        return (self.text, self.profile, self.threads, self.names)

    def __setstate__(self, state):
        self.text, self.profile, self.threads, self.names = state

    def __repr__(self):
        return f"{type(self).__name__}({self.text!r})"


class _Map(_Task):
    """An elementwise block: one kiln kernel on the blocks of its inputs."""

    __slots__ = ()

    def __call__(self, *blocks):
        return _run(self.text, self.profile, self.threads, self.names, blocks)


# ---------------------------------------------------------------------------------------------
# reductions: per-chunk states (structured NumPy arrays), merged in a fixed order


def _block_shape(blocks, nd):
    shapes = [np.shape(b) for b in blocks]
    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()


def _keep(shape, axes):
    return tuple(1 if i in axes else s for i, s in enumerate(shape))


def _state_dtype(kind, acc):
    if kind in ("sum", "prod", "min", "max", "mean"):
        return np.dtype([("v", acc)])
    if kind in ("any", "all"):
        return np.dtype([("v", np.bool_)])
    if kind in ("var", "std"):
        return np.dtype([("n", np.float64), ("m", np.float64), ("M2", np.float64)])
    return np.dtype([("v", acc), ("i", np.int64)])  # argmin, argmax


class _Partial(_Task):
    """The chunk step of a reduction: a block's state, with every reduced axis kept (length 1).

    `text` is the state's kiln kernel (a keepdims reduction of the operand); var/std run a second
    kernel `text2` (the squared deviations from the chunk's mean: the chunk is read twice, as
    kiln's own two-pass var reads it), argmin/argmax a second kernel (the extreme's value, unless
    the operand is an input whose block is read directly)."""

    __slots__ = ("kind", "axes", "nd", "acc", "text2", "full", "starts", "direct")

    def __init__(self, kind, text, text2, profile, threads, names, axes, nd, acc, full=None, starts=None, direct=None):
        super().__init__(text, profile, threads, names)
        self.kind, self.text2, self.axes, self.nd, self.acc = kind, text2, tuple(axes), nd, acc
        self.full, self.starts, self.direct = full, starts, direct

    def __getstate__(self):
        return (super().__getstate__(), self.kind, self.text2, self.axes, self.nd, self.acc, self.full, self.starts, self.direct)

    def __setstate__(self, state):
        base, self.kind, self.text2, self.axes, self.nd, self.acc, self.full, self.starts, self.direct = state
        super().__setstate__(base)

    def __call__(self, *blocks, block_id=None):
        bs = _block_shape(blocks, self.nd)
        out_shape = _keep(bs, self.axes)
        state = np.empty(out_shape, _state_dtype(self.kind, self.acc))
        kind = self.kind
        n = math.prod(bs[a] for a in self.axes)
        if kind in ("var", "std"):
            state["n"] = n
            if n == 0 or state.size == 0:
                state["m"] = 0.0
                state["M2"] = 0.0
                return state
            s = np.asarray(_run(self.text, self.profile, self.threads, self.names, blocks), dtype=np.float64)
            m = s / n
            m2 = _run(self.text2, self.profile, self.threads, self.names + ("_kiln_mean",), blocks + (m,))
            state["m"] = m
            state["M2"] = m2
            return state
        if kind in ("argmin", "argmax"):
            if n == 0 or state.size == 0:
                state["v"] = np.nan
                state["i"] = -1
                return state
            idx = np.asarray(_run(self.text, self.profile, self.threads, self.names, blocks)).reshape(out_shape)
            if self.direct is not None:
                b = np.broadcast_to(blocks[self.direct], bs)  # a view: nothing copied
                if len(self.axes) == 1:
                    val = np.take_along_axis(b, idx, axis=self.axes[0])
                else:
                    val = np.reshape(b[np.unravel_index(int(idx.reshape(-1)[0]), bs)], out_shape)
            else:
                val = np.asarray(_run(self.text2, self.profile, self.threads, self.names, blocks)).reshape(out_shape)
            start = [self.starts[d][block_id[d]] for d in range(self.nd)]
            if len(self.axes) == 1:
                gi = idx + start[self.axes[0]]
            else:
                local = np.unravel_index(int(idx.reshape(-1)[0]), bs)
                gi = np.ravel_multi_index(tuple(l + s for l, s in zip(local, start)), self.full)
            state["v"] = val
            state["i"] = gi
            return state
        if state.size == 0:
            return state
        state["v"] = np.asarray(_run(self.text, self.profile, self.threads, self.names, blocks)).reshape(out_shape)
        return state


def _merge(kind, a, b):
    """The state of a's elements followed by b's (both structured arrays of one shape)."""
    if kind in ("sum", "mean"):
        return _pack(a.dtype, v=a["v"] + b["v"])
    if kind == "prod":
        return _pack(a.dtype, v=a["v"] * b["v"])
    if kind == "min":
        return _pack(a.dtype, v=np.minimum(a["v"], b["v"]))
    if kind == "max":
        return _pack(a.dtype, v=np.maximum(a["v"], b["v"]))
    if kind == "any":
        return _pack(a.dtype, v=a["v"] | b["v"])
    if kind == "all":
        return _pack(a.dtype, v=a["v"] & b["v"])
    if kind in ("var", "std"):
        # Chan et al.: exact for counts, a single rounding chain for mean and M2; an empty side
        # (n = 0) leaves the other as it is
        na, nb = a["n"], b["n"]
        n = na + nb
        with np.errstate(invalid="ignore", divide="ignore"):
            delta = b["m"] - a["m"]
            wb = np.where(n > 0, nb / n, 0.0)
            m = np.where(na == 0, b["m"], np.where(nb == 0, a["m"], a["m"] + delta * wb))
            m2 = np.where(
                na == 0, b["M2"], np.where(nb == 0, a["M2"], a["M2"] + b["M2"] + delta * delta * na * wb)
            )
        return _pack(a.dtype, n=n, m=m, M2=m2)
    # argmin / argmax: NaN wins (kiln's "first NaN"), then the extreme, ties to the smaller index
    av, ai, bv, bi = a["v"], a["i"], b["v"], b["i"]
    an, bn = np.isnan(av), np.isnan(bv)
    better = (bn & ~an) | ((bv < av) if kind == "argmin" else (bv > av))
    same = (bv == av) | (an & bn)
    take_b = (ai < 0) | ((bi >= 0) & (better | (same & (bi < ai))))
    return _pack(a.dtype, v=np.where(take_b, bv, av), i=np.where(take_b, bi, ai))


def _pack(dtype, **fields):
    shape = np.shape(next(iter(fields.values())))
    out = np.empty(shape, dtype)
    for k, v in fields.items():
        out[k] = v
    return out


def _fold(kind, parts, axes):
    """Merges `parts` (a structured array) over `axes` in C order of the blocks; keeps the axes."""
    axes = tuple(sorted(axes))
    if not axes:
        return parts
    moved = np.moveaxis(parts, axes, tuple(range(len(axes))))
    rest = moved.shape[len(axes) :]
    flat = moved.reshape((math.prod(moved.shape[: len(axes)]),) + rest)
    acc = flat[0]
    for p in flat[1:]:
        acc = _merge(kind, acc, p)
    return np.expand_dims(acc, axes)


def _identity(x, axis=None, keepdims=True, **kwargs):
    return x


class _Combine:
    """Dask's combine step: merges the concatenated states of a group of chunks."""

    __slots__ = ("kind",)

    def __init__(self, kind):
        self.kind = kind

    def __getstate__(self):
        return self.kind

    def __setstate__(self, state):
        self.kind = state

    def __call__(self, x, axis=None, keepdims=True, **kwargs):
        return _fold(self.kind, x, axis)


class _Aggregate:
    """Dask's aggregate step: the last merge, then the finish (initial, mean, var, the dtype)."""

    __slots__ = ("kind", "initial", "count", "dtype")

    def __init__(self, kind, initial, count, dtype):
        self.kind, self.initial, self.count, self.dtype = kind, initial, count, np.dtype(dtype)

    def __getstate__(self):
        return (self.kind, self.initial, self.count, self.dtype)

    def __setstate__(self, state):
        self.kind, self.initial, self.count, self.dtype = state

    def __call__(self, x, axis=None, keepdims=False, **kwargs):
        s = _fold(self.kind, x, axis)
        kind, init = self.kind, self.initial
        with np.errstate(invalid="ignore", divide="ignore"):
            if kind in ("sum", "prod", "min", "max"):
                v = s["v"]
                if init is not None:
                    op = {"sum": np.add, "prod": np.multiply, "min": np.minimum, "max": np.maximum}[kind]
                    v = op(np.asarray(init, v.dtype), v)
            elif kind in ("any", "all"):
                v = s["v"]
            elif kind == "mean":
                v = s["v"] / np.float64(self.count) if self.count else np.full(s.shape, np.nan)
            elif kind in ("var", "std"):
                v = s["M2"] / s["n"] if self.count else np.full(s.shape, np.nan)
                if kind == "std":
                    v = np.sqrt(v)
            else:
                v = s["i"]
        v = np.asarray(v).astype(self.dtype, copy=False)
        if not keepdims:
            v = np.squeeze(v, axis=tuple(axis))
        # a whole-array reduction gives a NumPy scalar, as Dask's own reductions do
        return v[()] if v.ndim == 0 else v


# ---------------------------------------------------------------------------------------------
# scans: kiln's inclusive scan per chunk, carries between chunks


_SCAN_OPS = {"cumsum": np.add, "cumprod": np.multiply, "cummax": np.maximum, "cummin": np.minimum}
# -0.0 is the identity of IEEE addition (-0.0 + x is x for every x, -0.0 included; 0.0 + -0.0 is 0.0)
_NEUTRAL = {"cumsum": -0.0, "cumprod": 1.0, "cummax": -np.inf, "cummin": np.inf}


class _Edge:
    """A chunk's total along the scan axis: its inclusive scan's last (or, reversed, first) slice;
    the neutral element for a 0-length chunk."""

    __slots__ = ("kind", "axis", "reverse")

    def __init__(self, kind, axis, reverse):
        self.kind, self.axis, self.reverse = kind, axis, reverse

    def __getstate__(self):
        return (self.kind, self.axis, self.reverse)

    def __setstate__(self, state):
        self.kind, self.axis, self.reverse = state

    def __call__(self, block):
        if block.shape[self.axis] == 0:
            return np.full(_keep(block.shape, (self.axis,)), _NEUTRAL[self.kind], block.dtype)
        i = 0 if self.reverse else block.shape[self.axis] - 1
        return np.take(block, [i], axis=self.axis)


class _Carries:
    """The carry into each chunk: the first chunk's carry (`initial`) folded in order with the
    totals of the chunks before it (after it, reversed). One block holding every chunk's total."""

    __slots__ = ("kind", "axis", "reverse", "initial")

    def __init__(self, kind, axis, reverse, initial):
        self.kind, self.axis, self.reverse, self.initial = kind, axis, reverse, initial

    def __getstate__(self):
        return (self.kind, self.axis, self.reverse, self.initial)

    def __setstate__(self, state):
        self.kind, self.axis, self.reverse, self.initial = state

    def __call__(self, totals):
        op = _SCAN_OPS[self.kind]
        t = np.moveaxis(totals, self.axis, 0)
        c = np.empty_like(t)
        start = self.initial
        acc = np.full(t.shape[1:], start, t.dtype)
        order = range(t.shape[0] - 1, -1, -1) if self.reverse else range(t.shape[0])
        for j in order:
            c[j] = acc
            acc = op(acc, t[j])
        return np.moveaxis(c, 0, self.axis)


class _Finish:
    """A chunk's scan: its carry combined with its inclusive local scan (shifted when exclusive)."""

    __slots__ = ("kind", "axis", "reverse", "exclusive", "dtype")

    def __init__(self, kind, axis, reverse, exclusive, dtype):
        self.kind, self.axis, self.reverse, self.exclusive, self.dtype = kind, axis, reverse, exclusive, np.dtype(dtype)

    def __getstate__(self):
        return (self.kind, self.axis, self.reverse, self.exclusive, self.dtype)

    def __setstate__(self, state):
        self.kind, self.axis, self.reverse, self.exclusive, self.dtype = state

    def __call__(self, local, carry):
        op = _SCAN_OPS[self.kind]
        n = local.shape[self.axis]
        if n == 0:
            return local.astype(self.dtype)
        if not self.exclusive:
            out = op(carry, local)
        else:
            out = np.empty(np.broadcast_shapes(local.shape, carry.shape), local.dtype)
            ax = self.axis
            sl = lambda s: (slice(None),) * ax + (s,)  # noqa: E731
            if self.reverse:
                out[sl(slice(n - 1, n))] = carry
                out[sl(slice(0, n - 1))] = op(carry, local[sl(slice(1, n))])
            else:
                out[sl(slice(0, 1))] = carry
                out[sl(slice(1, n))] = op(carry, local[sl(slice(0, n - 1))])
        return out.astype(self.dtype, copy=False)


# ---------------------------------------------------------------------------------------------
# splitting an expression into stages


def _const(node, what, where):
    """A keyword's value: an int, a float (`-inf` included), a flag, None or a tuple of ints."""
    text = ast.unparse(node)
    try:
        value = ast.literal_eval(node)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise ValueError(f"{what}={text} in {where}: expected a number") from None
    return value


def _flag(value, what, where):
    if value in (0, 1, True, False):
        return bool(value)
    raise ValueError(f"{what}={value!r} in {where}: expected 1, 0, True or False")


def _axes(axis, nd, where):
    if axis is None:
        return tuple(range(nd))
    items = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in items:
        if isinstance(a, bool) or not isinstance(a, Integral) or not -nd <= a < nd:
            raise ValueError(f"axis {a!r} is out of range for {nd} dimension(s) in {where}")
        a = int(a) % nd if nd else 0
        if a in out:
            raise ValueError(f"axis {a} repeated in {where}")
        out.append(a)
    return tuple(sorted(out))


def _axis_text(axes):
    if len(axes) == 1:
        return str(axes[0])
    return "(" + ", ".join(map(str, axes)) + ")"


def _check_dask(name, a):
    if a.dtype.kind != "f" or a.dtype.itemsize not in (4, 8):
        # kiln itself takes bool and integer arrays; kiln.dask's partial states are floats for now
        raise TypeError(
            f"input '{name}' has dtype {a.dtype}: kiln.dask computes in float32 and float64 "
            "(bool and integer arrays run through kiln.evaluate)"
        )
    if any(math.isnan(c) for cs in a.chunks for c in cs):
        raise ValueError(f"input '{name}' has unknown chunk sizes: call compute_chunk_sizes() first")
    return a


def _bind(name, value):
    """A user's value as kiln.dask binds it: a Dask array, a NumPy array (as one Dask chunk), or a
    scalar (a float, NumPy scalar or 0-d array: carried into every task as it is)."""
    if isinstance(value, da.Array):
        return _check_dask(name, value)
    if isinstance(value, float) or (isinstance(value, np.generic) and np.ndim(value) == 0):
        as_input(name, value)
        return value
    arr = np.asarray(value)
    if arr.ndim == 0:
        return as_input(name, arr)
    arr = as_input(name, arr)
    return da.from_array(arr, chunks=arr.shape)


def _probe(value):
    """A stand-in of `value` for finding a kernel's result type: a 1-element block of its dtype."""
    if isinstance(value, da.Array):
        return np.ones((1,) * value.ndim, value.dtype)
    return value


class _Builder(ast.NodeTransformer):
    """Replaces each reduction and scan (innermost first) by a fresh name bound to its Dask array."""

    def __init__(self, env, profile, threads, split_every, source):
        self.env = env
        self.profile, self.threads, self.split_every = profile, threads, split_every
        self.source = source
        self.memo = {}
        self.count = 0

    # -- helpers --
    def fresh(self, value):
        while True:
            name = f"_kiln_{self.count}"
            self.count += 1
            if name not in self.env:
                self.env[name] = value
                return name

    def kernel_inputs(self, text):
        names = tuple(_kernel(text, self.profile, self.threads).names)
        return names, [self.env[n] for n in names]

    def result_dtype(self, text, names, values):
        return np.asarray(_run(text, self.profile, self.threads, names, [_probe(v) for v in values])).dtype

    def aligned(self, values):
        """The values with their Dask arrays' chunks unified (broadcasting right-aligned); the
        dimension count and the common chunks."""
        arrays = [v for v in values if isinstance(v, da.Array)]
        if not arrays:
            return values, 0, ()
        nd = max(a.ndim for a in arrays)
        np.broadcast_shapes(*(a.shape for a in arrays))  # a ValueError when they do not
        args = []
        for a in arrays:
            args += [a, tuple(range(nd - a.ndim, nd))]
        chunkss, unified = unify_chunks(*args)
        it = iter(unified)
        values = [next(it) if isinstance(v, da.Array) else v for v in values]
        return values, nd, tuple(chunkss[i] for i in range(nd))

    def elementwise(self, text):
        """`text` (no reductions) as a Dask array: one kiln kernel per block."""
        names, values = self.kernel_inputs(text)
        dtype = self.result_dtype(text, names, values)
        if not any(isinstance(v, da.Array) for v in values):
            task = dask.delayed(_Map(text, self.profile, self.threads, names), pure=True)(*values)
            shape = np.shape(_run(text, self.profile, self.threads, names, [_probe(v) for v in values]))
            return da.from_delayed(task, shape=shape, dtype=dtype)
        values, nd, _ = self.aligned(values)
        return da.map_blocks(
            _Map(text, self.profile, self.threads, names), *values, dtype=dtype, meta=np.empty((0,) * nd, dtype)
        )

    # -- the transformer --
    def visit_Subscript(self, node):
        raise ValueError(f"kiln.dask does not split contractions (x[i], index=) over chunks: {self.source!r}")

    def visit_Call(self, node):
        self.generic_visit(node)
        fname = node.func.id if isinstance(node.func, ast.Name) else None
        if fname not in _REDUCTIONS and fname not in _SCANS:
            return node
        key = ast.unparse(node)
        if key in self.memo:
            return ast.Name(self.memo[key], ast.Load())
        if len(node.args) != 1:
            raise TypeError(f"{fname} takes one positional argument in {key!r}")
        kw = {}
        for k in node.keywords:
            if k.arg is None or k.arg in kw:
                raise ValueError(f"bad keyword in {key!r}")
            kw[k.arg] = _const(k.value, k.arg, key)
        if "index" in kw:
            raise ValueError(f"kiln.dask does not split contractions (index=) over chunks: {key!r}")
        operand = ast.unparse(node.args[0])
        if fname in _REDUCTIONS:
            result = self.reduction(fname, operand, kw, key)
        else:
            result = self.scan(fname, operand, kw, key)
        name = self.fresh(result)
        self.memo[key] = name
        return ast.Name(name, ast.Load())

    def reduction(self, kind, operand, kw, where):
        known = {"axis", "keepdims", "initial"}
        extra = set(kw) - known
        if extra or ("initial" in kw and kind not in ("sum", "prod", "min", "max")):
            raise ValueError(f"unexpected keyword(s) {', '.join(sorted(extra or {'initial'}))} in {where!r}")
        names, values = self.kernel_inputs(operand)
        if not any(isinstance(v, da.Array) for v in values):
            return self.elementwise(where)
        values, nd, chunks = self.aligned(values)
        full = tuple(int(sum(c)) for c in chunks)
        axes = _axes(kw.get("axis"), nd, where)
        if kind in ("argmin", "argmax") and isinstance(kw.get("axis"), tuple):
            raise ValueError(f"{kind} takes one axis or none in {where!r}")
        keepdims = _flag(kw.get("keepdims", False), "keepdims", where)
        initial = kw.get("initial")
        if initial is not None:
            initial = float(initial)
        count = math.prod(full[a] for a in axes)
        if count == 0 and initial is None and kind in ("min", "max", "argmin", "argmax"):
            raise ValueError(f"{kind} of an empty extent (shape {full}, axis {axes}) in {where!r}")
        out_dtype = self.result_dtype(where, *self.kernel_inputs(where))
        op_dtype = self.result_dtype(operand, names, values)
        wide = op_dtype == np.float32 and kind in ("sum", "prod", "mean", "var", "std")
        acc = np.dtype(np.float64) if wide else op_dtype
        body = f"({operand}) * _kiln_one" if wide else f"({operand})"
        tnames = names + (("_kiln_one",) if wide else ())
        tvalues = list(values) + ([np.float64(1.0)] if wide else [])
        ax = _axis_text(axes)
        text2 = None
        direct = None
        starts = None
        if kind in ("sum", "prod", "any", "all"):
            text = f"{kind}({body}, axis={ax}, keepdims=1)"
        elif kind == "mean":
            text = f"sum({body}, axis={ax}, keepdims=1)"
        elif kind in ("min", "max"):
            sign = "" if kind == "min" else "-"
            text = f"{kind}({body}, axis={ax}, keepdims=1, initial={sign}inf)"
        elif kind in ("var", "std"):
            text = f"sum({body}, axis={ax}, keepdims=1)"
            text2 = f"sum(square({body} - _kiln_mean), axis={ax}, keepdims=1)"
        else:
            text = f"{kind}({body}, axis={ax}, keepdims=1)" if kw.get("axis") is not None else f"{kind}({body})"
            ext = "min" if kind == "argmin" else "max"
            text2 = f"{ext}({body}, axis={ax}, keepdims=1)"
            if operand in names:
                i = names.index(operand)
                if isinstance(values[i], da.Array) and values[i].ndim == nd:
                    direct = i
            starts = [list(itertools.accumulate(c, initial=0)) for c in chunks]
        part = _Partial(kind, text, text2, self.profile, self.threads, tnames, axes, nd, acc, full, starts, direct)
        pchunks = tuple((1,) * len(c) if i in axes else c for i, c in enumerate(chunks))
        sdt = _state_dtype(kind, acc)
        partials = da.map_blocks(part, *tvalues, chunks=pchunks, dtype=sdt, meta=np.empty((0,) * nd, sdt))
        out_nd = nd if keepdims else nd - len(axes)
        return da.reduction(
            partials,
            chunk=_identity,
            combine=_Combine(kind),
            aggregate=_Aggregate(kind, initial, count, out_dtype),
            axis=axes,
            keepdims=keepdims,
            # the dtype of the intermediate states (Dask casts its meta to it); the result's dtype
            # comes from `meta`
            dtype=sdt,
            split_every=self.split_every,
            concatenate=True,
            meta=np.empty((0,) * out_nd, out_dtype),
            name=f"kiln-{kind}",
        )

    def scan(self, kind, operand, kw, where):
        extra = set(kw) - {"axis", "exclusive", "reverse", "initial"}
        if extra:
            raise ValueError(f"unexpected keyword(s) {', '.join(sorted(extra))} in {where!r}")
        exclusive = _flag(kw.get("exclusive", False), "exclusive", where)
        reverse = _flag(kw.get("reverse", False), "reverse", where)
        initial = kw.get("initial")
        if initial is not None:
            initial = float(initial)
        axis = kw.get("axis")
        names, values = self.kernel_inputs(operand)
        if not any(isinstance(v, da.Array) for v in values):
            return self.elementwise(where)
        out_dtype = self.result_dtype(where, *self.kernel_inputs(where))
        values, nd, _ = self.aligned(values)
        if axis is None and nd != 1:
            # the flattened array, as NumPy: the operand as a Dask array, raveled (Dask rechunks)
            flat = self.elementwise(operand).ravel()
            operand = self.fresh(flat)
            names, values, nd, axis = (operand,), [flat], 1, 0
        else:
            axis = _axes(0 if axis is None else axis, nd, where)[0] if not isinstance(axis, tuple) else None
            if axis is None:
                raise ValueError(f"{kind} takes one axis in {where!r}")
        op_dtype = self.result_dtype(operand, names, values)
        wide = op_dtype == np.float32 and kind in ("cumsum", "cumprod")
        body = f"({operand}) * _kiln_one" if wide else f"({operand})"
        tnames = names + (("_kiln_one",) if wide else ())
        tvalues = list(values) + ([np.float64(1.0)] if wide else [])
        rev = ", reverse=1" if reverse else ""
        text = f"{kind}({body}, axis={axis}{rev})"
        acc = np.dtype(np.float64) if wide else op_dtype
        local = da.map_blocks(
            _Map(text, self.profile, self.threads, tnames), *tvalues, dtype=acc, meta=np.empty((0,) * nd, acc)
        )
        echunks = tuple((1,) * len(c) if i == axis else c for i, c in enumerate(local.chunks))
        totals = local.map_blocks(_Edge(kind, axis, reverse), chunks=echunks, dtype=acc, meta=np.empty((0,) * nd, acc))
        # the carry into the first chunk: `initial`, else the identity (-0.0 for an inclusive cumsum,
        # so that a scan of -0.0 stays -0.0); an exclusive scan's first output is kiln's default
        # initial, +0.0 for cumsum
        if initial is None:
            initial = 0.0 if kind == "cumsum" and exclusive else _NEUTRAL[kind]
        carries = totals.rechunk({axis: -1}).map_blocks(
            _Carries(kind, axis, reverse, initial), dtype=acc, meta=np.empty((0,) * nd, acc)
        ).rechunk(echunks)
        ind = tuple(range(nd))
        return da.blockwise(
            _Finish(kind, axis, reverse, exclusive, out_dtype),
            ind,
            local,
            ind,
            carries,
            ind,
            align_arrays=False,
            dtype=out_dtype,
            meta=np.empty((0,) * nd, out_dtype),
            name=f"kiln-{kind}-{dask.base.tokenize(text, local.name, carries.name, exclusive, out_dtype)}",
        )


def _graph(ex, env, profile, threads, split_every):
    """The Dask array of `ex` over `env` (names to bound values)."""
    if not isinstance(ex, str):
        raise TypeError(f"the expression must be a str, not {type(ex).__name__}")
    whole = _kernel(ex, profile, threads)  # kiln's own errors (syntax, unknown function, arity)
    try:
        tree = ast.parse(ex.strip(), mode="eval")
    except SyntaxError:
        raise ValueError(f"kiln.dask cannot split {ex!r} into stages") from None
    for n in whole.names:
        if n not in env:
            raise KeyError(n)
    builder = _Builder(env, profile, threads, split_every, ex)
    body = builder.visit(tree).body
    if isinstance(body, ast.Name) and body.id in builder.memo.values():
        return env[body.id]
    return builder.elementwise(ast.unparse(body))


def _lookup(names_of, local_dict, global_dict, depth):
    if local_dict is None or global_dict is None:
        frame = sys._getframe(depth + 1)
        if local_dict is None:
            local_dict = frame.f_locals
        if global_dict is None:
            global_dict = frame.f_globals
        del frame
    env = {}
    for n in names_of:
        if n in local_dict:
            env[n] = _bind(n, local_dict[n])
        elif n in global_dict:
            env[n] = _bind(n, global_dict[n])
        else:
            raise KeyError(n)
    return env


def evaluate(ex, local_dict=None, global_dict=None, *, profile=None, threads=1, split_every=None, _frame_depth=1):
    """The expression `ex` over Dask arrays, as a lazy Dask array (0-d for a whole-array
    reduction); nothing runs until `.compute()`, on whatever scheduler is in use.

    Names are looked up in `local_dict`, then `global_dict` (each defaulting to the caller's frame,
    numexpr's rule). Values may be Dask arrays, NumPy arrays (each becomes one Dask chunk) or
    scalars, float32 or float64. `profile` is kiln's profile; `threads` the threads one task's
    kernel may use (default 1: Dask's workers are the parallelism); `split_every` the fan-in of
    the reduction trees (default: Dask's, 4 per axis group): for a fixed chunking and
    `split_every` the result's bits do not depend on the scheduler or the number of workers.

    Raises what `kiln.evaluate` raises for a bad expression, name or type, `ValueError` for
    shapes that do not broadcast, an axis out of range, chunks of unknown size, a min/max/argmin/
    argmax of an empty extent, or a contraction (not split across chunks).
    """
    whole = _kernel(ex, profile, threads) if isinstance(ex, str) else None
    if whole is None:
        raise TypeError(f"the expression must be a str, not {type(ex).__name__}")
    env = _lookup(whole.names, local_dict, global_dict, _frame_depth)
    return _graph(ex, env, profile, threads, split_every)


class DaskKernel:
    """An expression compiled by `kiln.dask.compile`: call it with Dask arrays (or NumPy arrays,
    scalars) by name; returns a lazy Dask array."""

    __slots__ = ("expression", "names", "profile", "threads", "split_every")

    def __init__(self, ex, profile, threads, split_every):
        k = _kernel(ex, profile, threads)
        self.expression = ex
        self.names = tuple(k.names)
        self.profile, self.threads, self.split_every = profile, threads, split_every

    def __call__(self, **arrays):
        """The expression over these inputs (by name), as a lazy Dask array."""
        missing = [n for n in self.names if n not in arrays]
        if missing:
            raise KeyError(f"no input named {missing[0]!r} was given (the expression uses {', '.join(self.names)})")
        extra = sorted(set(arrays) - set(self.names))
        if extra:
            raise TypeError(f"unexpected input(s) {', '.join(extra)}: the expression uses {', '.join(self.names)}")
        env = {n: _bind(n, arrays[n]) for n in self.names}
        return _graph(self.expression, env, self.profile, self.threads, self.split_every)

    def __repr__(self):
        return f"kiln.dask.DaskKernel({self.expression!r}, names={self.names!r})"


def compile(ex, *, profile=None, threads=1, split_every=None):
    """`ex` compiled once (checked and cached here; each worker compiles it on first use) into a
    `DaskKernel`, a callable over Dask arrays by name."""
    if not isinstance(ex, str):
        raise TypeError(f"the expression must be a str, not {type(ex).__name__}")
    return DaskKernel(ex, profile, threads, split_every)
