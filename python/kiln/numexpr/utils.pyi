"""Type stubs of kiln.numexpr.utils: numexpr's thread and VML settings."""

MAX_THREADS: int

def _init_num_threads() -> int: ...
def detect_number_of_cores() -> int:
    """The number of cores of this machine."""
def detect_number_of_threads() -> int:
    """numexpr's deprecated thread count from the environment."""
def get_num_threads() -> int:
    """The number of threads runs use."""
def set_num_threads(n: int) -> int:
    """Sets the number of threads; returns the previous number."""
def get_vml_num_threads() -> None:
    """None: kiln has no VML."""
def get_vml_version() -> None:
    """None: kiln has no VML."""
def set_vml_accuracy_mode(mode: str | None) -> None:
    """A no-op: kiln has no VML."""
def set_vml_num_threads(n: int) -> None:
    """A no-op: kiln has no VML."""
