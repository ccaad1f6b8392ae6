"""numexpr's `utils` module over kiln: the thread settings (`set_num_threads`, `get_num_threads`,
`detect_number_of_cores`, `detect_number_of_threads`, `_init_num_threads`) and the VML functions
(`set_vml_num_threads`, `get_vml_num_threads`, `set_vml_accuracy_mode`, `get_vml_version`, no-ops
that return None: kiln has its own vector math, no Intel VML). The settings themselves live in
`kiln.numexpr`, which these are the same functions as."""

from . import (
    MAX_THREADS,
    _env_threads,
    _init_num_threads,
    detect_number_of_cores,
    get_num_threads,
    get_vml_num_threads,
    get_vml_version,
    log,
    set_num_threads,
    set_vml_accuracy_mode,
    set_vml_num_threads,
)

__all__ = [
    "MAX_THREADS",
    "_init_num_threads",
    "detect_number_of_cores",
    "detect_number_of_threads",
    "get_num_threads",
    "get_vml_num_threads",
    "get_vml_version",
    "set_num_threads",
    "set_vml_accuracy_mode",
    "set_vml_num_threads",
]


def detect_number_of_threads():
    """numexpr's deprecated thread count from the environment: `NUMEXPR_NUM_THREADS`, else
    `OMP_NUM_THREADS`, else the number of cores, at most `MAX_THREADS`."""
    log.warning("Deprecated, use `init_num_threads` instead.")
    n = _env_threads("NUMEXPR_NUM_THREADS")
    if n is None:
        n = _env_threads("OMP_NUM_THREADS")
    if n is None:
        n = detect_number_of_cores()
    return min(n, MAX_THREADS)
