"""numexpr's API over kiln: `import kiln.numexpr as ne` is the one line a numexpr user changes.

`evaluate("2*a + 3*b")` finds `a` and `b` in the caller's frame (locals first, then globals) or
in `local_dict` / `global_dict`, as numexpr does, compiles the expression once into a fused SIMD
kernel (cached for the process, shared by all threads) and runs it with the GIL released. The
language, result dtypes, broadcasting, `out=` and the exception types are numexpr's; kiln's own
additions (reductions anywhere with `axis=`, `keepdims`, `initial`, scans, contractions, `mean`,
`var`, `std`) work in the same call. Inputs are bool, integer, float, complex and byte-string (`S`)
arrays (see `kiln._core.as_input`); byte strings and `b'...'` constants compare (`==`, `<`, ...)
and search (`contains(s, b'ab')`) as numexpr's, and a unicode (`U`) array raises numexpr's
`ValueError`. An operation complex numbers or byte strings do not have (`<` of complex values,
`//`, `floor`, `arctan2`, `max`, `s + s`, `s == 1`) raises `NotImplementedError` naming numexpr's
missing opcode, as numexpr's.

numexpr's whole surface is here: `evaluate` with every keyword of numexpr 2.14 (`optimization`,
`truediv` and `disable_cache` accepted and checked as numexpr checks them: kiln always optimises,
divides truly and caches), `re_evaluate`, `validate`, `NumExpr` (kiln's compiled kernel with
numexpr's call, `necompiler.py`), `disassemble` (kiln's program text, not numexpr's opcodes), the
thread settings read from the environment as numexpr reads them (`NUMEXPR_MAX_THREADS`,
`NUMEXPR_NUM_THREADS`, `OMP_NUM_THREADS`, empty strings as unset), and the `utils` module.
`install()` makes `import numexpr` give this module, so that pandas runs on kiln (`_install.py`).
"""

from __future__ import annotations

import logging
import os
import re
import sys
import weakref

import numpy as np
from .. import _kiln
from .._core import _F32, _F64, UnsupportedTypeError, as_input, check_options, run

_ndarray = np.ndarray

__all__ = [
    "evaluate",
    "re_evaluate",
    "validate",
    "NumExpr",
    "disassemble",
    "install",
    "set_num_threads",
    "get_num_threads",
    "detect_number_of_cores",
    "ncores",
    "nthreads",
    "MAX_THREADS",
    "use_vml",
    "set_vml_accuracy_mode",
    "set_vml_num_threads",
    "get_vml_num_threads",
    "get_vml_version",
    "utils",
    "UnsupportedTypeError",
    "kiln_version",
    "__version__",
]

#: kiln's own version.
kiln_version = _kiln.__version__

#: The numexpr release whose API this module provides, with kiln's version as its local label
#: (PEP 440: `2.14.2+kiln.0.1.0`): libraries that check numexpr's version (pandas needs 2.10 or
#: newer) accept it, and it still says that this is kiln.
__version__ = f"2.14.2+kiln.{kiln_version}"

#: numexpr's Intel VML switch: kiln has its own vector math, so never.
use_vml = False

log = logging.getLogger(__name__)


def detect_number_of_cores():
    """The number of cores of this machine (kiln's thread pool uses them all by default)."""
    return _kiln.detect_number_of_cores()


#: The number of cores, as `detect_number_of_cores()` says.
ncores = detect_number_of_cores()


def _max_threads():
    """`NUMEXPR_MAX_THREADS` as numexpr reads it at import (its leading integer), else 64. An empty
    or non-numeric value, which numexpr reads as 0 (a pool of no threads), is taken as unset."""
    m = re.match(r"\s*[+-]?\d+", os.environ.get("NUMEXPR_MAX_THREADS", ""))
    value = int(m.group()) if m else 0
    return value if value > 0 else 64


#: The most threads `set_num_threads` accepts: `NUMEXPR_MAX_THREADS` at import, else 64 (numexpr's).
MAX_THREADS = _max_threads()

# the compiled kernels of each thread count, by expression: (kernel, its input names); `_current`
# is the dict of the current `nthreads`, so that a call's lookup is one dict access. Only texts that
# pass numexpr's sanitiser enter them, so that the builtin `evaluate`, which finds its kernels in
# `_current`, never needs to sanitise.
_kernels = {}
_current = {}
nthreads = ncores
_MAX_CACHED = 4096

# numexpr's sanitiser (numexpr/necompiler.py, MIT licence): `;`, `:`, dunder names, and attribute
# access other than `.real`, `.imag` and the digits of a float or imaginary literal; and `[` (which
# numexpr refuses too) except as kiln's index syntax, a name right after a name (`v[i]`, `v[i, j]`)
_flow_pat = r"[\;\:]|\[(?![A-Za-z_]\w*(,[A-Za-z_]\w*)*\])|(?<![\w)\]])\["
_dunder_pat = r"(^|[^\w])__[\w]+__($|[^\w])"
_attr_pat = r"\.\b(?!(real|imag|(\d*[eE]?[+-]?\d+)|(\d*[eE]?[+-]?\d+j)|(\d*j))\b)"
_blacklist_re = re.compile(f"{_flow_pat}|{_dunder_pat}|{_attr_pat}")


def _forbidden(ex):
    """Whether numexpr's sanitiser refuses the text `ex`."""
    no_whitespace = re.sub(r"\s+", "", ex)
    skip_quotes = re.sub(r"(\'[^\']*\')", "", no_whitespace)
    return _blacklist_re.search(skip_quotes) is not None


def _sanitizing(sanitize):
    """Whether to sanitise: `sanitize`, or for None `NUMEXPR_SANITIZE` (read each call, as numexpr)."""
    if sanitize is None:
        if "NUMEXPR_SANITIZE" in os.environ:
            return bool(int(os.environ["NUMEXPR_SANITIZE"]))
        return True
    return bool(sanitize)


# Python's `and`, `or` and `not`, which numexpr refuses with a TypeError (its nodes have no truth value)
_BOOLEAN_WORDS = re.compile(r"(?<![\w.])(and|or|not)(?![\w.])")
_BOOLEAN_MESSAGE = (
    "You can't use Python's standard boolean operators in NumExpr expressions. You should use their "
    "bitwise counterparts instead: '&' instead of 'and', '|' instead of 'or', and '~' instead of 'not'."
)


def _kernel(ex, threads, sanitize=None):
    """The compiled kernel of `ex` for `threads` threads, and its input names: a `ValueError` for a
    text numexpr's sanitiser refuses (unless `sanitize` is off)."""
    cache = _kernels.setdefault(threads, {})
    hit = cache.get(ex)
    if hit is None:
        if not isinstance(ex, str):
            raise TypeError(f"the expression must be a str, not {type(ex).__name__}")
        forbidden = _forbidden(ex)
        if forbidden and _sanitizing(sanitize):
            raise ValueError(f"Expression {ex} has forbidden control characters.")
        try:
            kernel = _kiln.compile(ex, None, None if threads == ncores else threads)
        except SyntaxError as e:
            if _BOOLEAN_WORDS.search(ex):
                raise TypeError(_BOOLEAN_MESSAGE) from e
            raise
        hit = (kernel, tuple(kernel.names))
        if not forbidden:
            if len(cache) >= _MAX_CACHED:
                cache.clear()
            cache[ex] = hit
    return hit


# numexpr's context keywords (necompiler.getContext): their allowed values. kiln always optimises
# and `/` is always true division (as numexpr's on Python 3), so they are checked and change nothing.
_CONTEXT = (("optimization", ("none", "moderate", "aggressive")), ("truediv", (False, True, "auto")))


def _check_context(kwargs):
    """numexpr's check of `optimization=`, `truediv=` and unknown keywords (a `ValueError`)."""
    d = dict(kwargs)
    d.pop("disable_cache", None)
    for name, allowed in _CONTEXT:
        if name in d and d.pop(name) not in allowed:
            raise ValueError(f"'{name}' must be one of {allowed}")
    if d:
        raise ValueError(f"Unknown keyword argument '{d.popitem()[0]}'")


def _arguments(names, local_dict, global_dict, depth, expression=None):
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
            value = as_input(name, value, expression)
        args.append(value)
    return args


def _evaluate(ex, local_dict=None, global_dict=None, out=None, order="K", casting="same_kind", sanitize=None, _frame_depth=1, **kwargs):
    """`evaluate`'s calls that kiln's own does not make: the first of an expression (it compiles it),
    those with `out`, another `order` or `casting`, `_frame_depth`, a keyword of numexpr's with a
    value it refuses, or with no Python frame. `_frame_depth` counts from this function, which
    `evaluate` calls without a frame of its own."""
    _check_context(kwargs)
    hit = _current.get(ex)
    kernel, names = hit if hit is not None else _kernel(ex, nthreads, sanitize)
    if names and (local_dict is None or global_dict is None):
        frame = sys._getframe(_frame_depth)
        if local_dict is None:
            local_dict = frame.f_locals
        if global_dict is None:
            global_dict = frame.f_globals
        del frame
    if out is None and order == "K" and casting in ("safe", "same_kind"):
        # the common call, in one step: names looked up, values bound, the kernel run and recorded
        # as this thread's last (for re_evaluate) in kiln
        return kernel.evaluate(local_dict, global_dict)
    args = _arguments(names, local_dict, global_dict, _frame_depth, ex)
    result = run(kernel, args, out, order, casting)
    # recorded only once it ran: a failed call leaves the last expression as it was
    _kiln.set_last((kernel, names, _weak(out), order, casting))
    return result


def _weak(out):
    """`out` as this thread's last call records it: a weak reference (numexpr's: the record does
    not keep the array alive), or None."""
    return None if out is None else weakref.ref(out)


#: `evaluate(ex, local_dict=None, global_dict=None, out=None, order='K', casting='same_kind',
#: sanitize=None, _frame_depth=1, optimization='aggressive', truediv='auto', disable_cache=False)`:
#: kiln's builtin, whose common call (an expression seen before, no `out`, `order` or `casting`)
#: makes no Python frame; the rest go to `_evaluate`. See its docstring.
evaluate = _kiln.evaluate


def re_evaluate(local_dict=None, global_dict=None, _frame_depth=1):
    """Runs the expression of this thread's last `evaluate` or `validate` again (with its `out`,
    `order` and `casting`), on the names as they are now."""
    state = _kiln.last()
    if state is None:
        raise RuntimeError("no previous evaluate() or validate() in this thread: call one of them before re_evaluate()")
    if isinstance(state, _kiln.Kernel):
        state = (state, tuple(state.names), None, "K", "same_kind")
    kernel, names, out, order, casting = state
    if out is not None:
        # numexpr keeps no reference to `out`: one freed since is not written
        out = out()
    args = _arguments(names, local_dict, global_dict, _frame_depth, kernel.expression)
    return run(kernel, args, out, order, casting)


def validate(ex, local_dict=None, global_dict=None, out=None, order="K", casting="same_kind", sanitize=None, _frame_depth=1, **kwargs):
    """Checks that `ex` evaluates on these names (parses, names found, types and shapes fit) and
    compiles its kernels, without running them. Returns `None` if it does, otherwise the exception
    `evaluate` would raise (numexpr's convention). A valid expression becomes this thread's last
    one, for `re_evaluate`."""
    try:
        _check_context(kwargs)
        check_options(order, casting)
        kernel, names = _kernel(ex, nthreads, sanitize)
        args = _arguments(names, local_dict, global_dict, _frame_depth, ex)
        kernel.prepare(args)
    except (KeyError, SyntaxError, ValueError, TypeError, OverflowError, NotImplementedError) as e:
        return e
    _kiln.set_last((kernel, names, _weak(out), order, casting))
    return None


def set_num_threads(n):
    """Sets the number of threads runs use (1 to `MAX_THREADS`); returns the previous number."""
    global nthreads, _current
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"the number of threads must be a positive int, got {n!r}")
    if n > MAX_THREADS:
        raise ValueError(f"the number of threads ({n}) cannot be larger than MAX_THREADS ({MAX_THREADS}, set by NUMEXPR_MAX_THREADS)")
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


def _env_threads(var):
    """The integer value of the environment variable `var`, None where it is unset or empty."""
    value = os.environ.get(var, "")
    if value == "":
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"{var}={value!r} is not an integer number of threads") from None


def _init_num_threads():
    """numexpr's start-up thread count, read from the environment as numexpr reads it, set with
    `set_num_threads` and returned: `NUMEXPR_NUM_THREADS`, else `OMP_NUM_THREADS`, else the
    number of cores, at most 16 unless `NUMEXPR_MAX_THREADS` or `OMP_NUM_THREADS` is set (then
    `MAX_THREADS`). An empty variable counts as unset. A request outside 1 to `MAX_THREADS`, which
    numexpr reports and ignores, is brought into that range here, with a warning logged."""
    env_configured = os.environ.get("NUMEXPR_MAX_THREADS", "") != "" or os.environ.get("OMP_NUM_THREADS", "") != ""
    n_cores = detect_number_of_cores()
    if env_configured:
        n_cores = MAX_THREADS
    elif n_cores > 16:
        log.info('Note: NumExpr detected %d cores but "NUMEXPR_MAX_THREADS" not set, so enforcing safe limit of 16.', n_cores)
        n_cores = 16
    requested = _env_threads("NUMEXPR_NUM_THREADS")
    if requested is None:
        requested = _env_threads("OMP_NUM_THREADS")
    if requested is None:
        requested = n_cores
    if not 1 <= requested <= MAX_THREADS:
        clamped = min(max(requested, 1), MAX_THREADS)
        log.warning("%d threads requested by the environment: using %d (1 to MAX_THREADS=%d)", requested, clamped, MAX_THREADS)
        requested = clamped
    set_num_threads(requested)
    return requested


nthreads = _init_num_threads()


def set_vml_accuracy_mode(mode):
    """numexpr's VML accuracy switch; kiln has no VML: a no-op that returns None."""
    if mode not in (None, "low", "high", "fast"):
        raise ValueError(f"mode must be one of 'low', 'high', 'fast', got {mode!r}")
    return None


def set_vml_num_threads(n):
    """numexpr's VML thread setting; kiln has no VML: a no-op that returns None."""
    return None


def get_vml_num_threads():
    """numexpr's VML thread count; kiln has no VML: None."""
    return None


def get_vml_version():
    """numexpr's VML version; kiln has no VML: None."""
    return None


from . import necompiler, utils  # noqa: E402  (they use the names above)
from ._install import install  # noqa: E402
from .necompiler import NumExpr, disassemble  # noqa: E402
