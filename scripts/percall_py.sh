#!/usr/bin/env bash
# Instructions per kiln.evaluate call at N = 100 (scripts/percall_py.py) for each case, counted by
# callgrind: (total of 5000 calls - total of 1000 calls) / 4000.
# Usage: scripts/percall_py.sh [PYTHON] (default python/target/venv/bin/python)
set -euo pipefail
py="${1:-python/target/venv/bin/python}"
out="$(mktemp -d)"
for case in int float complex bytes; do
    for calls in 1000 5000; do
        valgrind --tool=callgrind --callgrind-out-file="$out/$case.$calls" "$py" scripts/percall_py.py "$case" "$calls" \
            >/dev/null 2>&1
    done
    a=$(grep -m1 '^summary:' "$out/$case.1000" | awk '{print $2}')
    b=$(grep -m1 '^summary:' "$out/$case.5000" | awk '{print $2}')
    echo "$case $(( (b - a) / 4000 ))"
done
rm -rf "$out"
