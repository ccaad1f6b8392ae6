#!/usr/bin/env bash
# Instructions per kiln.evaluate call at N = 100 (scripts/percall_py.py) for each case, counted by
# callgrind: the difference of the counts for 5000 calls and 1000, over 4000. Two counts a case:
# the whole process (the Python interpreter's share included), and kiln's own (inclusive, from
# the entry of the extension's `evaluate`: lookups, checks, the kernel, the result array).
# Usage: scripts/percall_py.sh [PYTHON] (default python/target/venv/bin/python)
set -euo pipefail
py="${1:-python/target/venv/bin/python}"
out="$(mktemp -d)"
export PYTHONHASHSEED=0
inclusive() {
    callgrind_annotate --inclusive=yes "$1" 2>/dev/null \
        | awk '/trampoline::cfunction_with_keywords \[.*_kiln/ && !done {gsub(",", "", $1); print $1; done = 1}'
}
printf '%-8s %10s %10s\n' case process kiln
for case in ${CASES:-int float complex bytes contains}; do
    for calls in 1000 5000; do
        valgrind --tool=callgrind --callgrind-out-file="$out/$case.$calls" "$py" scripts/percall_py.py "$case" "$calls" \
            >/dev/null 2>&1
    done
    a=$(grep -m1 '^summary:' "$out/$case.1000" | awk '{print $2}')
    b=$(grep -m1 '^summary:' "$out/$case.5000" | awk '{print $2}')
    ka=$(inclusive "$out/$case.1000")
    kb=$(inclusive "$out/$case.5000")
    printf '%-8s %10d %10d\n' "$case" $(( (b - a) / 4000 )) $(( (kb - ka) / 4000 ))
done
rm -rf "$out"
