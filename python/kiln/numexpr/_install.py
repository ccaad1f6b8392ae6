"""`kiln.numexpr.install()`: makes `import numexpr` give `kiln.numexpr` in this process, so that
pandas (its `eval`, `query` and the numexpr-accelerated arithmetic of large frames) runs on kiln.

Call it once, before pandas is imported: pandas binds numexpr when it is imported, so a call after
that would change nothing pandas does, and raises `RuntimeError` rather than pretend. pandas accepts
kiln's `__version__` (numexpr's API level with kiln's version as its local label, `2.14.2+kiln.X`);
`kiln.numexpr.kiln_version` is kiln's own. numexpr's `E` and `ConstantNode` (its tree builders) are
not provided: `import numexpr.expressions` fails after `install()`.
"""

import sys


def install():
    """Makes `import numexpr` (and `numexpr.utils`, `numexpr.necompiler`) give kiln's modules in this
    process. Call it before pandas is imported (a `RuntimeError` after); calling it again is harmless."""
    from . import necompiler, utils

    this = sys.modules[__package__]
    if "pandas" in sys.modules and sys.modules.get("numexpr") is not this:
        raise RuntimeError(
            "kiln.numexpr.install() must run before pandas is imported: pandas has already bound "
            "numexpr (or found none), so it would not run on kiln"
        )
    sys.modules["numexpr"] = this
    sys.modules["numexpr.utils"] = utils
    sys.modules["numexpr.necompiler"] = necompiler
