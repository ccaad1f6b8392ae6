"""Type stubs of kiln.numexpr.necompiler: numexpr's NumExpr, disassemble and getExprNames."""

from typing import Any, Literal, Mapping, Sequence

import numpy as np
import numpy.typing as npt

class NumExpr:
    """numexpr's compiled expression: kiln's kernel with numexpr's positional call."""

    input_names: tuple[str, ...]
    signature: bytes
    constants: tuple[float | int, ...]
    expression: str
    def __init__(self, ex: Any, signature: Sequence[tuple[str, type]] = (), sanitize: bool = True, **kwargs: Any) -> None: ...
    def run(
        self,
        *args: npt.ArrayLike,
        out: npt.NDArray[Any] | None = None,
        order: Literal["K", "A", "C", "F"] = "K",
        casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] = "safe",
        ex_uses_vml: bool = False,
    ) -> npt.NDArray[Any]:
        """Runs the expression on the inputs, in `input_names` order."""
    def __call__(
        self,
        *args: npt.ArrayLike,
        out: npt.NDArray[Any] | None = None,
        order: Literal["K", "A", "C", "F"] = "K",
        casting: Literal["no", "equiv", "safe", "same_kind", "unsafe"] = "safe",
        ex_uses_vml: bool = False,
    ) -> npt.NDArray[Any]:
        """Runs the expression on the inputs, in `input_names` order."""

def tree_text(node: Any) -> str:
    """The text, in kiln's language, of a numexpr expression tree."""

def disassemble(nex: NumExpr) -> list[str]:
    """kiln's program of `nex` (its kernels' IR), not numexpr's opcodes."""

def getExprNames(text: str, context: Mapping[str, Any], sanitize: bool = True) -> tuple[list[str], bool]:
    """The input names of `text` and False (kiln has no VML)."""
