"""kiln for Python: array expressions compiled to fused SIMD kernels, over NumPy arrays.

numexpr's API (`import kiln.numexpr as ne` is the drop-in; the same names are re-exported here):

    >>> import numpy as np, kiln
    >>> a = np.arange(4.0); b = np.ones(4)
    >>> kiln.evaluate("2*a + 3*b")
    array([ 3.,  5.,  7.,  9.])

and kiln's own, an expression compiled once and called many times:

    >>> k = kiln.compile("sum(x*x, axis=1)")
    >>> k(x=np.ones((2, 3)))
    array([3., 3.])

Over Dask arrays (chunk by chunk, on any Dask scheduler or cluster): `import kiln.dask` (needs Dask).
"""

from . import _kiln, numexpr
from ._core import Kernel, compile
from .numexpr import (
    MAX_THREADS,
    NumExpr,
    UnsupportedTypeError,
    detect_number_of_cores,
    disassemble,
    evaluate,
    get_num_threads,
    get_vml_num_threads,
    get_vml_version,
    ncores,
    nthreads,
    re_evaluate,
    set_num_threads,
    set_vml_accuracy_mode,
    set_vml_num_threads,
    use_vml,
    validate,
)

#: kiln's version (`kiln.numexpr.__version__` is numexpr's API level with this as its local label).
__version__ = _kiln.__version__

# numexpr's names, as kiln.numexpr has them, but for those only a numexpr drop-in needs
__all__ = ["Kernel", "compile", "numexpr"] + [
    n for n in numexpr.__all__ if n not in ("__version__", "kiln_version", "install", "utils")
] + ["__version__"]
