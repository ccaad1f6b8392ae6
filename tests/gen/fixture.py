"""Writer of kiln's fixture format, shared by the generators in this folder.

The format (read by tests/gen/fixture.rs) is line based. A file is a sequence of blocks:

    case NAME                      starts a case; NAME has no spaces
    meta KEY VALUE                 free-form metadata (the numexpr corpus: dtype, scalar, section)
    expr TEXT                      the kiln text expression (rest of the line)
    in NAME DTYPE SHAPE LAYOUT V.. an input: dtype f64|f32, shape [d0,d1,..] ([] is 0-d), layout
                                   c (C order) | f (Fortran order) | step (every other element of a
                                   twice-as-long axis 0) | rev (axis 0 reversed: a negative stride),
                                   then the elements in logical C order
    out DTYPE SHAPE V..            the expected result: dtype float64|float32|int64|bool
    check MODE ARGS..              exact | ulp N | close RTOL ATOL, optionally followed by zeros_any
                                   (+0.0 and -0.0 compare equal: NumPy does not pin the zero sign)
    err S1 | S2 | ..               the run must fail with a message containing every Si
    skip REASON | EXPR             an expression deliberately not run (it must fail to compile)
    end                            ends the case

Values: float64 as the 16 hex digits of the bit pattern, float32 as 8, trailing zero digits left out
(3ff0000000000000 is written 3ff; +0.0 is 0 and -0.0 is 8); int64 in decimal; bool as 0/1.
A value may be followed by *N (repeated N times). Lines starting with # are comments.
"""

import numpy as np


def hex_bits(x, dtype):
    if dtype == np.float64:
        return "%016x" % int(np.array(x, np.float64).view(np.uint64))
    return "%08x" % int(np.array(x, np.float32).view(np.uint32))


def encode_values(arr):
    arr = np.asarray(arr)
    flat = arr.ravel(order="C")
    if arr.dtype == np.float64 or arr.dtype == np.float32:
        bits = flat.view(np.uint64 if arr.dtype == np.float64 else np.uint32)
        width = 16 if arr.dtype == np.float64 else 8
        # trailing zero digits are left out: 3ff0000000000000 is written 3ff, +0.0 is 0, -0.0 is 8
        toks = [("%0*x" % (width, int(b))).rstrip("0") or "0" for b in bits]
    elif arr.dtype == np.bool_:
        toks = ["1" if v else "0" for v in flat]
    elif arr.dtype == np.int64:
        toks = [str(int(v)) for v in flat]
    else:
        raise TypeError("unsupported dtype %s" % arr.dtype)
    out = []
    i = 0
    while i < len(toks):
        j = i
        while j < len(toks) and toks[j] == toks[i]:
            j += 1
        n = j - i
        if n >= 3:
            out.append("%s*%d" % (toks[i], n))
        else:
            out.extend(toks[i:j])
        i = j
    return " ".join(out)


def shape_str(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def short_dtype(dt):
    return {np.dtype(np.float64): "f64", np.dtype(np.float32): "f32"}[np.dtype(dt)]


def input_line(name, arr, layout="c"):
    arr = np.asarray(arr)
    if arr.ndim == 0 and layout != "c":
        raise ValueError("a 0-d input has only the c layout")
    line = "in %s %s %s %s" % (name, short_dtype(arr.dtype), shape_str(arr.shape), layout)
    vals = encode_values(arr)
    return line + (" " + vals if vals else "")


def output_line(arr):
    arr = np.asarray(arr)
    line = "out %s %s" % (arr.dtype.name, shape_str(arr.shape))
    vals = encode_values(arr)
    return line + (" " + vals if vals else "")
