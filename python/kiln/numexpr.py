"""numexpr's API over kiln: `import kiln.numexpr as ne` is the one line a numexpr user changes.

`evaluate("2*a + 3*b")` finds `a` and `b` in the caller's frame (locals first, then globals) or
in `local_dict` / `global_dict`, as numexpr does, compiles the expression once into a fused SIMD
kernel (cached for the process, shared by all threads) and runs it with the GIL released. The
language, result dtypes, broadcasting, `out=` and the exception types are numexpr's; kiln's own
additions (reductions anywhere with `axis=`, `keepdims`, `initial`, scans, contractions, `mean`,
`var`, `std`) work in the same call. Inputs may be bool, int32, int64, float32 or float64 arrays,
typed as NumPy 2 types them (int8, int16, uint8, uint16 and uint32 are widened exactly to int64,
uint64 where every value fits); complex, float16 and long double arrays raise `TypeError`.
"""

from __future__ import annotations

import os
import sys

import numpy as np
from . import _kiln
from ._core import _F32, _F64, as_input, check_options, run

_ndarray = np.ndarray

__all__ = [
    "evaluate",
    "re_evaluate",
    "validate",
    "set_num_threads",
    "get_num_threads",
    "detect_number_of_cores",
    "ncores",
    "nthreads",
    "use_vml",
    "set_vml_accuracy_mode",
    "set_vml_num_threads",
    "get_vml_version",
    "__version__",
]

#: The version of the kiln package.
__version__ = _kiln.__version__

#: numexpr's Intel VML switch: kiln has its own vector math, so never.
use_vml = False


def detect_number_of_cores():
    """The number of cores of this machine (kiln's thread pool uses them all by default)."""
    return _kiln.detect_number_of_cores()


#: The number of cores, as `detect_number_of_cores()` says.
ncores = detect_number_of_cores()


def _initial_threads():
    for var in ("NUMEXPR_NUM_THREADS", "OMP_NUM_THREADS"):
        value = os.environ.get(var, "")
        if value.strip().isdigit() and int(value) > 0:
            return int(value)
    return ncores


#: The number of threads runs use (numexpr's `NUMEXPR_NUM_THREADS` is honoured at import).
nthreads = _initial_threads()

# the compiled kernels of each thread count, by expression: (kernel, its input names); `_current`
# is the dict of the current `nthreads`, so that a call's lookup is one dict access
_kernels = {}
_current = _kernels.setdefault(nthreads, {})
_MAX_CACHED = 4096
# `evaluate` (kiln's, without a Python frame) looks expressions up in `_current`
_kiln.set_evaluate_cache(_current)


def _kernel(ex, threads):
    """The compiled kernel of `ex` for `threads` threads, and its input names."""
    cache = _kernels.setdefault(threads, {})
    hit = cache.get(ex)
    if hit is None:
        if not isinstance(ex, str):
            raise TypeError(f"the expression must be a str, not {type(ex).__name__}")
        kernel = _kiln.compile(ex, None, None if threads == ncores else threads)
        hit = (kernel, tuple(kernel.names))
        if len(cache) >= _MAX_CACHED:
            cache.clear()
        cache[ex] = hit
    return hit


def _arguments(names, local_dict, global_dict, depth):
    """The values of `names`: from `local_dict`, then `global_dict`, each defaulting to the frame
    `depth` levels above the caller (numexpr's rule). Arrays kiln reads as they are pass straight
    through (the common case, kept free of function calls); the rest go through `as_input`."""
    if names and (local_dict is None or global_dict is None):
        frame = sys._getframe(depth + 1)
        if local_dict is None:
            local_dict = frame.f_locals
        if global_dict is None:
            global_dict = frame.f_globals
        del frame
    args = []
    for name in names:
        if name in local_dict:
            value = local_dict[name]
        elif name in global_dict:
            value = global_dict[name]
        else:
            raise KeyError(name)
        if type(value) is not _ndarray or not (value.dtype is _F64 or value.dtype is _F32) or not value.flags.aligned:
            value = as_input(name, value)
        args.append(value)
    return args


def _evaluate(ex, local_dict=None, global_dict=None, out=None, order="K", casting="safe", sanitize=None, _frame_depth=1):
    """`evaluate`'s calls that kiln's own does not make: the first of an expression (it compiles it),
    those with `out`, `order`, `casting`, `sanitize` or `_frame_depth` given, or with no Python frame.
    `_frame_depth` counts from this function, which `evaluate` calls without a frame of its own."""
    hit = _current.get(ex)
    kernel, names = hit if hit is not None else _kernel(ex, nthreads)
    if names and (local_dict is None or global_dict is None):
        frame = sys._getframe(_frame_depth)
        if local_dict is None:
            local_dict = frame.f_locals
        if global_dict is None:
            global_dict = frame.f_globals
        del frame
    if out is None and order == "K" and casting == "safe":
        # the common call, in one step: names looked up, values bound, the kernel run and recorded
        # as this thread's last (for re_evaluate) in kiln
        return kernel.evaluate(local_dict, global_dict)
    _kiln.set_last((kernel, names, out, order, casting))
    args = _arguments(names, local_dict, global_dict, _frame_depth)
    return run(kernel, args, out, order, casting)


#: `evaluate(ex, local_dict=None, global_dict=None, out=None, order='K', casting='safe',
#: sanitize=None)`: kiln's builtin, whose common call (an expression seen before, no `out`,
#: `order` or `casting`) makes no Python frame; the rest go to `_evaluate`. See its docstring.
evaluate = _kiln.evaluate


def re_evaluate(local_dict=None, global_dict=None, _frame_depth=1):
    """Runs the expression of this thread's last `evaluate` or `validate` again (with its `out`,
    `order` and `casting`), on the names as they are now."""
    state = _kiln.last()
    if state is None:
        raise RuntimeError("no previous evaluate() or validate() in this thread: call one of them before re_evaluate()")
    if isinstance(state, _kiln.Kernel):
        state = (state, tuple(state.names), None, "K", "safe")
    kernel, names, out, order, casting = state
    args = _arguments(names, local_dict, global_dict, _frame_depth)
    return run(kernel, args, out, order, casting)


def validate(ex, local_dict=None, global_dict=None, out=None, order="K", casting="safe", sanitize=None, _frame_depth=1):
    """Checks that `ex` evaluates on these names (parses, names found, types and shapes fit) and
    compiles its kernels, without running them. Returns `None` if it does, otherwise the exception
    `evaluate` would raise (numexpr's convention). A valid expression becomes this thread's last
    one, for `re_evaluate`."""
    try:
        check_options(order, casting)
        kernel, names = _kernel(ex, nthreads)
        args = _arguments(names, local_dict, global_dict, _frame_depth)
        kernel.prepare(args)
    except (KeyError, SyntaxError, ValueError, TypeError) as e:
        return e
    _kiln.set_last((kernel, names, out, order, casting))
    return None


def set_num_threads(n):
    """Sets the number of threads runs use; returns the previous number."""
    global nthreads, _current
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"the number of threads must be a positive int, got {n!r}")
    old = nthreads
    nthreads = n
    _current = _kernels.setdefault(n, {})
    _kiln.set_evaluate_cache(_current)
    package = sys.modules.get("kiln")
    if package is not None:
        package.nthreads = n
    return old


def get_num_threads():
    """The number of threads runs use."""
    return nthreads


def set_vml_accuracy_mode(mode):
    """numexpr's VML accuracy switch; kiln has no VML: a no-op that returns None."""
    if mode not in (None, "low", "high", "fast"):
        raise ValueError(f"mode must be one of 'low', 'high', 'fast', got {mode!r}")
    return None


def set_vml_num_threads(n):
    """numexpr's VML thread setting; kiln has no VML: a no-op."""
    return None


def get_vml_version():
    """numexpr's VML version; kiln has no VML: None."""
    return None
