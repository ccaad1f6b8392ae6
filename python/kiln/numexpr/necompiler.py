"""numexpr's compiler entry points over kiln: `NumExpr(ex, signature)`, `disassemble` and
`getExprNames`.

`NumExpr` compiles a text, or a tree that numexpr's `E` builds (`2.0*E.a + E.b`), into a kiln
kernel and gives it numexpr's call: inputs by position in the signature's order (else sorted by
name, as numexpr orders them), each converted to its signature type (`double` float64, `float`
float32, `numpy.int32`, `numpy.int64`, `bool`; an input not in the signature is `double`). It does
not import numexpr: a tree is read through its attributes (`astType`, `value`, `children`).
`disassemble` returns kiln's program (the IR of its kernels, one line each), which is not numexpr's
list of virtual-machine opcodes: kiln has no such machine.
"""

from __future__ import annotations

import ast
import math

import numpy as np

from .. import _kiln
from .._core import as_input, check_options, run

_ndarray = np.ndarray

# numexpr's signature types: Python's `float` is float32 in numexpr (its 'f' typecode)
_SIGNATURE_TYPES = {
    bool: np.dtype(np.bool_),
    np.bool_: np.dtype(np.bool_),
    np.int32: np.dtype(np.int32),
    np.int64: np.dtype(np.int64),
    float: np.dtype(np.float32),
    np.float32: np.dtype(np.float32),
    np.float64: np.dtype(np.float64),
    complex: np.dtype(np.complex128),
    np.complex128: np.dtype(np.complex128),
}

# numexpr's op codes (expressions.py) as kiln's operators
_INFIX = {
    "add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "pow": "**", "mod": "%",
    "lshift": "<<", "rshift": ">>", "and": "&", "or": "|", "xor": "^",
    "gt": ">", "ge": ">=", "lt": "<", "le": "<=", "eq": "==", "ne": "!=",
}
_PREFIX = {"neg": "-", "invert": "~"}
# numexpr names a few functions after NumPy's: kiln's language spells them as numexpr's text does
_RENAMED = {"absolute": "abs"}
_REDUCTIONS = ("sum", "prod", "min", "max")
# numexpr's `interpreter.allaxes`: a reduction over every axis
_ALL_AXES = 255


def _constant_text(v):
    """A constant of a numexpr tree in kiln's language (its type kept for NumPy scalars)."""
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    if isinstance(v, (np.float32, np.int32)):
        return f"{np.dtype(type(v)).name}({_constant_text(v.item())})"
    if isinstance(v, (int, np.integer)):
        return repr(int(v))
    if isinstance(v, (float, np.floating)):
        v = float(v)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "(-inf)"
        return repr(v)
    if isinstance(v, bytes):
        return repr(v)
    raise TypeError(f"kiln has no literal for the constant {v!r} of type {type(v).__name__}")


def tree_text(node):
    """The text, in kiln's language, of a numexpr expression tree (as `E` builds it)."""
    kind = getattr(node, "astType", None)
    if kind == "variable":
        return node.value
    if kind == "constant":
        return _constant_text(node.value)
    if kind == "op":
        op, args = node.value, node.children
        if op in _INFIX and len(args) == 2:
            return f"({tree_text(args[0])} {_INFIX[op]} {tree_text(args[1])})"
        if op in _PREFIX and len(args) == 1:
            return f"({_PREFIX[op]}{tree_text(args[0])})"
        if op in _REDUCTIONS and len(args) == 2 and getattr(args[1], "astType", None) == "raw":
            axis = args[1].value
            inner = tree_text(args[0])
            return f"{op}({inner})" if axis == _ALL_AXES else f"{op}({inner}, axis={axis})"
        return f"{_RENAMED.get(op, op)}({', '.join(tree_text(a) for a in args)})"
    if isinstance(node, (bool, int, float, np.number)):
        return _constant_text(node)
    raise TypeError(f"not a numexpr expression: {node!r}")


def _literals(text):
    """The distinct numeric literals of `text` in order of appearance (NaN equal to NaN)."""
    found = []
    for n in ast.walk(ast.parse(text, mode="eval")):
        value = None
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float, complex)) and not isinstance(n.value, bool):
            value = n.value
        elif isinstance(n, ast.Name) and n.id in ("nan", "inf"):
            value = float(n.id)
        if value is None:
            continue
        if not any(v == value or (isinstance(v, float) and math.isnan(v) and math.isnan(value)) for v in found):
            found.append(value)
    return tuple(found)


class NumExpr:
    """numexpr's compiled expression (`numexpr.NumExpr(ex, signature)`): kiln's kernel of `ex` (a
    text or an `E` tree) with numexpr's call, `func(*inputs, out=None, order='K', casting='safe')`.

    `input_names` are the inputs in call order: the signature's, else sorted by name (numexpr's
    order); `signature` their numexpr typecodes (`b'dd'`); `constants` the expression's distinct
    numeric literals in order of appearance; `expression` kiln's text. `run` is the call.
    """

    def __init__(self, ex, signature=(), sanitize=True, **kwargs):
        from . import _check_context, _forbidden, _kernel, nthreads

        _check_context(kwargs)
        text = ex if isinstance(ex, str) else tree_text(ex)
        if isinstance(ex, str) and sanitize and _forbidden(ex):
            raise ValueError(f"Expression {ex} has forbidden control characters.")
        self._kernel, names = _kernel(text, nthreads, sanitize=False)
        self.expression = text
        types = {}
        for name, t in signature:
            if t not in _SIGNATURE_TYPES:
                raise TypeError(f"input '{name}': kiln has no type {t!r} (numexpr's signature types are bool, numpy.int32, numpy.int64, float, numpy.float64, complex)")
            types[name] = _SIGNATURE_TYPES[t]
        order = [name for name, _ in signature]
        if order:
            if set(order) != set(names):
                raise ValueError(f"input names ({', '.join(order)}) don't match those found in expression ({', '.join(names)})")
            self.input_names = tuple(order)
        else:
            self.input_names = tuple(sorted(names))
        self._types = tuple(types.get(n, np.dtype(np.float64)) for n in self.input_names)
        # the inputs in the kernel's order, as positions in the call's
        self._gather = tuple(self.input_names.index(n) for n in names)
        self._in_order = self._gather == tuple(range(len(names)))
        self.signature = "".join(t.char.replace("?", "b") for t in self._types).encode("ascii")
        self.constants = _literals(text)

    def _inputs(self, args):
        if len(args) != len(self.input_names):
            raise TypeError(f"the expression takes {len(self.input_names)} input(s) ({', '.join(self.input_names)}) but {len(args)} were given")
        values = []
        for name, t, v in zip(self.input_names, self._types, args):
            if type(v) is _ndarray and v.dtype is t and v.flags.aligned:
                # an array of the signature's type, which kiln reads as it is (the builtin dtypes
                # are singletons: a byte-swapped one is another object, and converted below)
                values.append(v)
                continue
            a = np.asarray(v)
            if a.dtype != t:
                if not np.can_cast(a.dtype, t, "same_kind") and not (a.dtype.kind in "biu" and t.kind in "fc"):
                    raise TypeError(f"input '{name}' of dtype {a.dtype} does not cast to the signature's {t}")
                a = a.astype(t)
            values.append(as_input(name, a, self.expression))
        return values if self._in_order else [values[i] for i in self._gather]

    def run(self, *args, out=None, order="K", casting="safe", ex_uses_vml=False):
        """Runs the expression on `args` (one per input, in `input_names` order); into `out` if given."""
        if out is None and order == "K" and casting == "safe":
            return self._kernel.run(self._inputs(args))
        check_options(order, casting)
        return run(self._kernel, self._inputs(args), out, order, casting)

    __call__ = run

    def __repr__(self):
        return f"kiln.numexpr.NumExpr({self.expression!r}, input_names={self.input_names!r})"


def disassemble(nex):
    """kiln's program of the `NumExpr` `nex` for inputs of its signature types, one line each: the
    IR of each kernel kiln runs (see `kiln explain`). Not numexpr's opcodes: kiln compiles the whole
    expression into one kernel of native code and has no virtual machine to list."""
    inputs = [np.zeros(1024, dtype=t) for t in nex._types]
    args = [inputs[i] for i in nex._gather]
    return [line for line in nex._kernel.explain(args).splitlines() if line.strip()]


def getExprNames(text, context, sanitize=True):
    """numexpr's `(input names, uses VML)` of `text`: its names, sorted (numexpr's order), read from
    the text as numexpr reads them (a function's arity is not checked here), and False (kiln has
    no VML)."""
    from . import _check_context, _forbidden

    _check_context(context)
    if sanitize and _forbidden(text):
        raise ValueError(f"Expression {text} has forbidden control characters.")
    tree = ast.parse(text.strip(), mode="eval")
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    keywords = {"None", "True", "False", "inf", "nan"}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called and n.id not in keywords}
    return sorted(names), False
