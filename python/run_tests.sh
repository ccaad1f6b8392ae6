#!/usr/bin/env bash
# The Python package's tests: a virtual environment of its own (maturin, numpy, pytest from pip;
# numexpr 2.14 for its own test file and E, and pandas, whose eval and query run on kiln too),
# the extension built in release mode into it (`maturin develop`, reusing python/target), then pytest.
# Usage: python/run_tests.sh [pytest args]; KILN_PY_VENV picks the environment (default
# python/target/venv), PYTHON the interpreter that creates it (default python3).
set -euo pipefail
cd "$(dirname "$0")"
venv="${KILN_PY_VENV:-target/venv}"
if [ ! -x "$venv/bin/python" ]; then
    "${PYTHON:-python3}" -m venv "$venv"
fi
"$venv/bin/python" -m pip install --quiet --upgrade pip
"$venv/bin/python" -m pip install --quiet "maturin>=1.5,<2" "numpy>=1.23" "pytest>=7" "dask[distributed]>=2024.1" \
    "numexpr==2.14.*" "pandas>=2.2"
VIRTUAL_ENV="$(cd "$venv" && pwd)" PATH="$(cd "$venv" && pwd)/bin:$PATH" maturin develop --release --quiet
# pytest exits 5 when it collects no tests: that is a failure here, as is anything but 0
status=0
"$venv/bin/python" -m pytest -q -p no:cacheprovider tests "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "python/run_tests.sh: pytest collected no tests" >&2
fi
exit "$status"
