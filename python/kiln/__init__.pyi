"""Type stubs of the kiln package."""

from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from . import numexpr as numexpr
from .numexpr import (
    MAX_THREADS as MAX_THREADS,
    NumExpr as NumExpr,
    UnsupportedTypeError as UnsupportedTypeError,
    detect_number_of_cores as detect_number_of_cores,
    disassemble as disassemble,
    evaluate as evaluate,
    get_num_threads as get_num_threads,
    get_vml_num_threads as get_vml_num_threads,
    get_vml_version as get_vml_version,
    ncores as ncores,
    nthreads as nthreads,
    re_evaluate as re_evaluate,
    set_num_threads as set_num_threads,
    set_vml_accuracy_mode as set_vml_accuracy_mode,
    set_vml_num_threads as set_vml_num_threads,
    use_vml as use_vml,
    validate as validate,
)

__version__: str

class Kernel:
    """An expression compiled by `kiln.compile`: call it with its inputs by name."""

    names: tuple[str, ...]
    expression: str
    def __call__(
        self,
        out: npt.NDArray[Any] | None = None,
        order: Literal["K", "A", "C", "F"] = "K",
        casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] = "safe",
        **arrays: npt.ArrayLike,
    ) -> npt.NDArray[Any]:
        """Runs on the named arrays; into `out` if given (returned)."""
    def explain(self, clif: bool = False, asm: bool = False, **arrays: npt.ArrayLike) -> str:
        """The kernels kiln runs for inputs of this form, as text."""

def compile(ex: str, *, profile: Literal["default", "approximate", "reproducible"] | None = None, threads: int | None = None) -> Kernel:
    """Compiles `ex` into a `Kernel` (cached per process)."""
