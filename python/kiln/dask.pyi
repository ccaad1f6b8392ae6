"""Type stubs of kiln.dask: kiln expressions over Dask arrays."""

from typing import Any, Literal, Mapping

import dask.array as da
import numpy.typing as npt

_Value = da.Array | npt.ArrayLike
_Profile = Literal["default", "approximate", "reproducible"] | None

def evaluate(
    ex: str,
    local_dict: Mapping[str, _Value] | None = None,
    global_dict: Mapping[str, _Value] | None = None,
    *,
    profile: _Profile = None,
    threads: int = 1,
    split_every: int | dict[int, int] | None = None,
) -> da.Array:
    """The expression `ex` over Dask arrays, as a lazy Dask array (0-d for a whole-array reduction)."""

class DaskKernel:
    """An expression compiled by `kiln.dask.compile`: call it with Dask arrays by name."""

    expression: str
    names: tuple[str, ...]
    profile: _Profile
    threads: int
    split_every: int | dict[int, int] | None
    def __call__(self, **arrays: _Value) -> da.Array:
        """The expression over these inputs, as a lazy Dask array."""

def compile(
    ex: str, *, profile: _Profile = None, threads: int = 1, split_every: int | dict[int, int] | None = None
) -> DaskKernel:
    """`ex` checked and compiled once into a `DaskKernel`."""

def cache_info() -> dict[str, Any]:
    """This process's kiln.dask kernel cache: kernels, compiles and their texts."""
