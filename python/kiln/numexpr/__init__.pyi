"""Type stubs of kiln.numexpr: numexpr's API over kiln."""

from typing import Any, Literal, Mapping

import numpy as np
import numpy.typing as npt

from . import utils as utils
from .necompiler import NumExpr as NumExpr, disassemble as disassemble

class UnsupportedTypeError(TypeError):
    """An input of a type kiln has no kernels for (float16, long double, uint64 beyond int64, ...)."""

__version__: str
kiln_version: str
use_vml: bool
ncores: int
nthreads: int
MAX_THREADS: int

_Order = Literal["K", "A", "C", "F"]
_Casting = Literal["no", "equiv", "safe", "same_kind", "unsafe"]

def evaluate(
    ex: str,
    local_dict: Mapping[str, Any] | None = None,
    global_dict: Mapping[str, Any] | None = None,
    out: npt.NDArray[Any] | None = None,
    order: _Order = "K",
    casting: _Casting = "safe",
    sanitize: bool | None = None,
    _frame_depth: int = 1,
    optimization: Literal["none", "moderate", "aggressive"] = "aggressive",
    truediv: bool | Literal["auto"] = "auto",
    disable_cache: bool = False,
) -> npt.NDArray[Any]:
    """Evaluates the array expression `ex`; names come from the caller's frame or the dicts."""

def re_evaluate(
    local_dict: Mapping[str, Any] | None = None,
    global_dict: Mapping[str, Any] | None = None,
    _frame_depth: int = 1,
) -> npt.NDArray[Any]:
    """Runs this thread's last evaluated or validated expression again."""

def validate(
    ex: str,
    local_dict: Mapping[str, Any] | None = None,
    global_dict: Mapping[str, Any] | None = None,
    out: npt.NDArray[Any] | None = None,
    order: _Order = "K",
    casting: _Casting = "safe",
    sanitize: bool | None = None,
    _frame_depth: int = 1,
    optimization: Literal["none", "moderate", "aggressive"] = "aggressive",
    truediv: bool | Literal["auto"] = "auto",
) -> Exception | None:
    """None if `ex` would evaluate on these names, else the exception evaluate would raise."""

def set_num_threads(n: int) -> int:
    """Sets the number of threads; returns the previous number."""

def get_num_threads() -> int:
    """The number of threads runs use."""

def detect_number_of_cores() -> int:
    """The number of cores of this machine."""

def set_vml_accuracy_mode(mode: str | None) -> None:
    """A no-op: kiln has no VML."""

def set_vml_num_threads(n: int) -> None:
    """A no-op: kiln has no VML."""

def get_vml_num_threads() -> None:
    """None: kiln has no VML."""

def install() -> None:
    """Makes `import numexpr` give kiln.numexpr (call before pandas is imported)."""

def get_vml_version() -> None:
    """None: kiln has no VML."""
