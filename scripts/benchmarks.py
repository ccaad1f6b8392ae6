#!/usr/bin/env python3
"""Writes BENCHMARKS.md: runs kiln's benchmarks and renders their JSON rows as one results page.

    cargo build --release --bin kiln --example percall_callgrind
    python3 scripts/benchmarks.py                      # the full run, into BENCHMARKS.md and docs/*.svg
    python3 scripts/benchmarks.py --quick              # a short run (fewer sizes, shorter budgets)
    python3 scripts/benchmarks.py --python /tmp/venv/bin/python   # a Python where `kiln` is installed

What it runs, each on one thread unless said, and keeps as JSON lines under --raw (default
target/benchmarks/):

- `kiln bench --json --plot docs/bench.svg`: the seed kernels, every variant (the fused kernel, its
  scalar schedule, unfused ndarray, a hand loop) at every N and dtype;
- `kiln bench --functions --json --plot docs/functions.svg`, where the binary has `--functions`: one
  row per math function and dtype, kiln against a loop over libm;
- `kiln bench --programs --json`: whole programs against plain Rust;
- where valgrind and `target/release/examples/percall_callgrind` are there, the instructions one call
  costs (the ordinary call, the prepared handle, ndarray) at N = 100, counted by callgrind;
- `PYTHON -m kiln.bench --json` (float64 and float32), `--functions --json`, `--programs --json`,
  `--complex --json`, `--strings --json` and `--reductions --json`, where that Python imports kiln:
  kiln.evaluate and a compiled kernel against NumPy and numexpr;
- with `--peers FILE.json` (the output of the peers' harness, `bench_py.py --out FILE.json`), its
  systems (numba, JAX, ...) beside kiln's rows of the same kernels.

`--from DIR` renders the JSON lines of an earlier run without running anything; `--only PART,...`
runs just those parts and renders them with the others kept from the last run. The renderer takes
rows generically: any kernel, dtype, size and variant; a kernel it has no description of is shown by
name. Only the standard library is needed.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import subprocess
import sys
from collections import OrderedDict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# what each seed kernel computes (kiln bench's and kiln.bench's names)
KERNELS = {
    "axpy": "`a*x + y`",
    "horner": "`((a*x+b)*x+c)*x+d`",
    "sumsq": "`sum(x*x)`",
    "logistic": "`1/(1+exp(-x))`",
    "trig": "`sin(x)*cos(x) + sqrt(abs(x))`",
    "cumsum": "`cumsum(x)`",
    "rowsum": "`sum(x, axis=1)` of x as (N/1000, 1000)",
    "colsum": "`sum(x, axis=0)` of x as (N/1000, 1000)",
    "intmod": "`(i*3 + j) % 7` of int32",
    "masksum": "`sum(where(p, i, 0))` of int64 `i` and bool `p`",
    "midsum": "`sum(i, axis=1)` of int64 `i` as (N/160, 16, 10)",
    "intcumsum": "`cumsum(i)` of int64",
}
# the peers' harness names some kernels otherwise
PEER_KERNELS = {"rowsum_ax1": "rowsum", "rowsum_ax0": "colsum"}
MAX_LINES = 300
# what the Python side runs: its own version and its peers' (numexpr where installed)
PYTHON_VERSIONS = """
import sys, numpy
parts = ["Python " + sys.version.split()[0], "NumPy " + numpy.__version__]
try:
    import numexpr
    parts.append(f"numexpr {numexpr.__version__} (timed on one thread)")
except ImportError:
    pass
print(", ".join(parts))
"""


def log(msg):
    print(f"benchmarks.py: {msg}", file=sys.stderr, flush=True)


def run_json(cmd, raw: Path, name: str, cwd=ROOT):
    """Runs `cmd`, keeps its stdout in raw/name.jsonl and returns the parsed JSON lines."""
    log("$ " + flag_line(cmd))
    out = subprocess.run([str(c) for c in cmd], cwd=cwd, stdout=subprocess.PIPE, text=True, check=True).stdout
    (raw / f"{name}.jsonl").write_text(out)
    return parse_lines(out)


def parse_lines(text):
    return [json.loads(line) for line in text.splitlines() if line.strip().startswith("{")]


def load(raw: Path, name: str):
    path = raw / f"{name}.jsonl"
    return parse_lines(path.read_text()) if path.exists() else []


def has_flag(cmd, flag):
    """Whether `cmd --help` mentions `flag` (an option this build may not have)."""
    try:
        out = subprocess.run([str(c) for c in cmd] + ["--help"], cwd=ROOT, capture_output=True, text=True)
    except OSError:
        return False
    return out.returncode == 0 and flag in out.stdout


def python_has_kiln(python):
    """Whether `python` imports kiln and its `kiln.bench` prints JSON rows."""
    try:
        probe = subprocess.run([python, "-m", "kiln.bench", "--help"], cwd="/", capture_output=True, text=True)
    except OSError:
        return False
    return probe.returncode == 0 and "--json" in probe.stdout


def machine():
    """The machine, in one line: CPU model, vector features, cores, memory, OS."""
    model, flags = platform.processor() or platform.machine(), set()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                model = value.strip()
            elif key.strip() == "flags":
                flags = set(value.split())
    except OSError:
        pass
    features = [name for f, name in (("avx512f", "AVX-512"), ("avx2", "AVX2"), ("fma", "FMA")) if f in flags]
    mem = ""
    try:
        kb = int(Path("/proc/meminfo").read_text().split("MemTotal:")[1].split()[0])
        mem = f", {kb / 2**20:.0f} GiB"
    except (OSError, IndexError, ValueError):
        pass
    feats = f" ({', '.join(features)})" if features else ""
    return f"{model}{feats}, {os.cpu_count()} logical cores{mem}, {platform.system()} {platform.release()}"


def versions(kiln, python):
    parts = []
    try:
        parts.append(subprocess.run([str(kiln), "--version"], capture_output=True, text=True).stdout.strip())
    except OSError:
        pass
    try:
        rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.split()
        parts.append(" ".join(rustc[:2]))
    except OSError:
        pass
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if commit.returncode == 0:
        # the page and its plots are this script's own output: changes to them do not count
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", ".",
                                ":!BENCHMARKS.md", ":!docs/*.svg"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        parts.append(f"commit {commit.stdout.strip()}{' (with local changes)' if dirty else ''}")
    if python:
        probe = subprocess.run([python, "-c", PYTHON_VERSIONS], cwd="/", capture_output=True, text=True)
        parts.append(probe.stdout.strip())
    return ", ".join(p.strip() for p in parts if p.strip())


# the parts of a run, each kept as --raw/PART.jsonl
PARTS = ["kernels", "functions", "programs", "callgrind", "python_f64", "python_f32", "python_functions",
         "python_programs", "python_complex", "python_strings", "python_reductions"]

# the cost of one call at N = 100 (n = 64 for the particle step), in instructions from callgrind:
# (row, column, examples/percall_callgrind.rs mode)
PERCALL = [
    ("axpy", "ordinary call", "axpy-ordinary"), ("axpy", "fresh result (run)", "axpy-fresh"),
    ("axpy", "prepared run_slices", "axpy"),
    ("axpy", "ndarray", "axpy-ndarray"),
    ("horner", "ordinary call", "horner-ordinary"), ("horner", "prepared run_slices", "horner"),
    ("horner", "ndarray", "horner-ndarray"),
    ("sumsq", "ordinary call", "sumsq-ordinary"), ("sumsq", "prepared run_slices", "sumsq"),
    ("sumsq", "ndarray", "sumsq-ndarray"),
    ("rowsum", "ordinary call", "rowsum-ordinary"), ("rowsum", "fresh result (run)", "rowsum-fresh"),
    ("rowsum", "prepared run_slices", "rowsum"),
    ("rowsum", "ndarray", "rowsum-ndarray"),
    ("intmod (int32)", "ordinary call", "intmod-ordinary"), ("intmod (int32)", "ndarray", "intmod-ndarray"),
    ("masksum (int64, bool)", "ordinary call", "masksum-ordinary"),
    ("masksum (int64, bool)", "ndarray", "masksum-ndarray"),
    ("particle step", "ordinary call", "particle-ordinary"), ("particle step", "prepared update", "particle"),
    ("particle step", "fuse_assign", "particle-fuse"), ("particle step", "ndarray", "particle-plain"),
]
PERCALL_CALLS = 2000


def callgrind_instructions(example, mode, calls):
    """The instructions callgrind counts for `example mode calls`."""
    done = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", str(example), mode,
                           str(calls)], capture_output=True, text=True, check=True)
    m = re.search(r"Collected : (\d+)", done.stderr)
    if m is None:
        sys.exit(f"benchmarks.py: no callgrind count for {mode}:\n{done.stderr[-2000:]}")
    return int(m.group(1))


def run_callgrind(example, raw: Path):
    """Instructions a call of each PERCALL mode: (calls, then none) apart, over the calls."""
    lines = []
    for row, column, mode in PERCALL:
        per = (callgrind_instructions(example, mode, PERCALL_CALLS) - callgrind_instructions(example, mode, 0)) / PERCALL_CALLS
        log(f"callgrind {mode}: {per:,.0f} instructions a call")
        lines.append(json.dumps({"kernel": row, "variant": column, "instructions": round(per)}))
    (raw / "callgrind.jsonl").write_text("\n".join(lines) + "\n")


# ------------------------------------------------------------------------------------------ tables


def fmt(v):
    """A time: three significant figures."""
    if v is None:
        return ""
    return f"{v:.3g}" if v < 1000 else f"{v:,.0f}"


def ratio_cells(values):
    """Cells `time (x ratio to the best)`, the best in bold; `values` maps a column to a time or None."""
    present = [v for v in values.values() if v is not None and v > 0]
    best = min(present) if present else None
    cells = []
    for v in values.values():
        if v is None:
            cells.append("")
        elif v == best:
            cells.append(f"**{fmt(v)}**")
        else:
            cells.append(f"{fmt(v)} ({v / best:.1f}x)")
    return cells


def grouped(rows, key):
    groups = OrderedDict()
    for r in rows:
        groups.setdefault(key(r), []).append(r)
    return groups


def kernel_table(rows, title_kernel="kernel"):
    """Per kernel, dtype and N: each variant's ns/elem and its ratio to the best of the row."""
    variants = list(OrderedDict.fromkeys(r["variant"] for r in rows))
    lines = [f"| {title_kernel} | dtype | N | " + " | ".join(variants) + " |",
             "| --- | --- | ---: | " + " | ".join("---:" for _ in variants) + " |"]
    wrong = []
    for (kernel, dtype, n), group in grouped(rows, lambda r: (r["kernel"], r["dtype"], r["n"])).items():
        by = {v: None for v in variants}
        for r in group:
            by[r["variant"]] = r.get("ns_per_elem")
            if r.get("ok") is False:
                wrong.append(f"{kernel} {dtype} N={n} {r['variant']}")
        cells = ratio_cells(by)
        for i, v in enumerate(variants):
            if any(r["variant"] == v and r.get("ok") is False for r in group):
                cells[i] += " WRONG"
        lines.append(f"| {kernel} | {dtype} | {n:.0e} | " + " | ".join(cells) + " |")
    return [line.replace("e+0", "e") for line in lines], wrong


def callgrind_table(rows):
    """Instructions a call per program and call, with the ratio to the best of the row."""
    variants = list(OrderedDict.fromkeys(r["variant"] for r in rows))
    lines = ["| program | " + " | ".join(variants) + " |", "| --- | " + " | ".join("---:" for _ in variants) + " |"]
    for kernel, group in grouped(rows, lambda r: r["kernel"]).items():
        by = {v: None for v in variants}
        for r in group:
            by[r["variant"]] = r["instructions"]
        lines.append(f"| {kernel} | " + " | ".join(ratio_cells(by)) + " |")
    return lines


def function_table(rows):
    """Per function and N, both dtypes side by side: each variant's ns/elem, its ratio to the best of
    its dtype."""
    variants = list(OrderedDict.fromkeys(r["variant"] for r in rows))
    dtypes = list(OrderedDict.fromkeys(r["dtype"] for r in rows))
    cols = [(d, v) for d in dtypes for v in variants]
    lines = ["| function | N | " + " | ".join(f"{d} {v}" for d, v in cols) + " |",
             "| --- | ---: | " + " | ".join("---:" for _ in cols) + " |"]
    wrong = []
    for (kernel, n), group in grouped(rows, lambda r: (r["kernel"], r["n"])).items():
        cells = []
        for d in dtypes:
            by = {v: None for v in variants}
            bad = set()
            for r in group:
                if r["dtype"] == d:
                    by[r["variant"]] = r.get("ns_per_elem")
                    if r.get("ok") is False:
                        bad.add(r["variant"])
                        wrong.append(f"{kernel} {d} N={n} {r['variant']}")
            cells += [c + (" WRONG" if v in bad else "") for c, v in zip(ratio_cells(by), variants)]
        lines.append(f"| {kernel} | {n:.0e} | " + " | ".join(cells) + " |")
    return [line.replace("e+0", "e") for line in lines], wrong


def describe(kernels):
    """A list line per kernel this page knows: its name and what it computes."""
    return [f"- `{k}`: {KERNELS[k]}" for k in kernels if k in KERNELS]


def flag_line(cmd):
    return " ".join(shlex.quote(str(c)) for c in cmd)


def programs_table(rows):
    lines = ["| program | size | kiln | plain Rust | plain / kiln | agreement | kiln API |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        lines.append(f"| {r['program']} | {r['size']} | {r['kiln_ns'] / 1e6:.3f} ms | {r['plain_ns'] / 1e6:.3f} ms | "
                     f"{r['ratio']:.2f} | {r['max_rel_diff']:.1e} | {r['api']} |")
    return lines


def python_table(rows):
    """Per kernel, dtype and N: us per call of each variant, and its ratio to the best."""
    variants = list(OrderedDict.fromkeys(r["variant"] for r in rows))
    lines = ["| kernel | dtype | N | " + " | ".join(f"{v} (us)" for v in variants) + " |",
             "| --- | --- | ---: | " + " | ".join("---:" for _ in variants) + " |"]
    for (kernel, dtype, n), group in grouped(rows, lambda r: (r["kernel"], r["dtype"], r["n"])).items():
        by = {v: None for v in variants}
        for r in group:
            by[r["variant"]] = r["ns_per_call"] / 1e3 if "ns_per_call" in r else r["ns_per_elem"] * n / 1e3
        lines.append(f"| {kernel} | {dtype} | {n:.0e} | " + " | ".join(ratio_cells(by)) + " |")
    return [line.replace("e+0", "e") for line in lines]


def python_programs_table(rows):
    variants = list(OrderedDict.fromkeys(r["variant"] for r in rows))
    lines = ["| program | N | " + " | ".join(f"{v} (ms)" for v in variants) + " |",
             "| --- | ---: | " + " | ".join("---:" for _ in variants) + " |"]
    for (kernel, n), group in grouped(rows, lambda r: (r["kernel"], r["n"])).items():
        by = {v: None for v in variants}
        for r in group:
            by[r["variant"]] = r["ms"] if "ms" in r else r["ns_per_elem"] * n / 1e6
        lines.append(f"| `{kernel}` | {n:.0e} | " + " | ".join(ratio_cells(by)) + " |")
    return [line.replace("e+0", "e") for line in lines]


def peer_rows(path: Path, kiln_rows):
    """The peers' harness records as kernel rows (ns/elem), beside kiln's own row of each cell."""
    data = json.loads(path.read_text())
    rows = []
    for rec in data.get("records", []):
        kernel = PEER_KERNELS.get(rec["kernel"], rec["kernel"])
        rows.append({"kernel": kernel, "dtype": rec["dtype"], "n": rec["n"], "variant": rec["system"],
                     "ns_per_elem": rec["median_ns"] / rec["n"]})
    cells = {(r["kernel"], r["dtype"], r["n"]) for r in rows}
    for r in kiln_rows:
        if r["variant"] == "kiln-simd" and (r["kernel"], r["dtype"], r["n"]) in cells:
            rows.append(dict(r, variant="kiln"))
    rows.sort(key=lambda r: (list(KERNELS).index(r["kernel"]) if r["kernel"] in KERNELS else 99, r["dtype"], r["n"]))
    return rows


# ------------------------------------------------------------------------------------------ page


def render(data, meta, commands):
    out = ["# kiln benchmarks", ""]
    rerun = meta.get("rerun")
    once = "from one run" if not rerun else f"from one run, with {', '.join(rerun)} run again on the same machine"
    out += [f"Written by `scripts/benchmarks.py` (see the end of this page), {once}:", "",
            f"- machine: {meta['machine']}",
            f"- date: {meta['date']}",
            f"- software: {meta['versions']}", ""]
    if commands:
        out += ["The commands it ran, one after another:", "", "```sh"] + commands + ["```", ""]
    out += ["Times are medians. Within a table every system ran side by side in one process, so ratios",
            "compare; absolute times move between runs on a shared machine. Each cell gives the time and,",
            "in brackets, how many times the best of its row it is (the best in bold). Before timing, every",
            "variant's result is checked against kiln's interpreter (bit for bit for elementwise algebra, a",
            "relative bound for reductions, a ULP bound for transcendentals); a row that disagreed says",
            "`WRONG`.", ""]
    kernel_names = list(OrderedDict.fromkeys(r["kernel"] for r in data["kernels"]))
    sections = [
        ("kernels", "Kernels: `kiln bench`", kernel_table,
         ["ns per element, one thread: `kiln-simd` is kiln's fused kernel into a reused output,",
          "`kiln-scalar` the same on the one-lane schedule, `ndarray` the natural unfused ndarray",
          "expression, `rust-loop` a hand-written loop (AVX2 and FMA enabled where the CPU has them):",
          ""] + describe(kernel_names),
         "![throughput against N, one panel per kernel](docs/bench.svg)"),
        ("functions", "Functions: `kiln bench --functions`", function_table,
         ["ns per element of each math function over its natural domain, kiln's ordinary call into a",
          "preallocated output against a loop over libm (std's functions, the interpreter's)."],
         "![functions](docs/functions.svg)" if (ROOT / "docs" / "functions.svg").exists() else None),
        ("programs", "Programs: `kiln bench --programs`", programs_table,
         ["Whole programs, kiln against plain ndarray/Rust (`Zip`, iterators, std's math; no hand SIMD),",
          "checked to agree first (agreement: the largest relative difference). plain / kiln above 1",
          "means kiln is faster."], None),
        ("callgrind", "The cost of one call: callgrind", callgrind_table,
         ["Instructions a call at N = 100 (f64 but where a type is named, one thread; the particle step",
          "at n = 64), counted by callgrind (`examples/percall_callgrind.rs`, the difference of 2,000",
          "calls and none): the ordinary call is `FusedRunner::run_into` by name into a given array",
          "(`run` for the sum; `call` for the integer kernels; two runners for the particle step),",
          "`fresh result` the same call returning a fresh array (`FusedRunner::run`),",
          "`prepared` the bound handle on slices, `fuse_assign` the closure per step, `ndarray` the",
          "natural unfused expression (`sum_axis` for rowsum, a (1, 100) matrix; a `Zip` loop for the",
          "particle step and masksum)."], None),
        ("python", "From Python: `python -m kiln.bench`", python_table,
         ["Microseconds per call as a user calls each: `kiln.evaluate(ex, local_dict=...)`, a",
          "`kiln.compile(ex)` kernel called by keyword, the same kernel writing into an array given",
          "as `out=`, `numexpr.evaluate` and the NumPy expression (every other result allocated per",
          "call)."], None),
        ("python_functions", "Functions from Python: `python -m kiln.bench --functions`", function_table,
         ["ns per element of each function through `kiln.evaluate`, NumPy and numexpr."], None),
        ("python_programs", "Programs from Python: `python -m kiln.bench --programs`", python_programs_table,
         ["Milliseconds per call of each program, every variant checked against NumPy first."], None),
        ("python_complex", "Complex numbers from Python: `python -m kiln.bench --complex`", function_table,
         ["ns per element of complex128 and complex64 expressions, one thread each: `kiln.evaluate`,",
          "numexpr and the NumPy expression, every result checked against NumPy's first."], None),
        ("python_reductions", "Reductions from Python: `python -m kiln.bench --reductions`", function_table,
         ["ns per element of reductions at N = 1e6, one thread each: `kiln.evaluate`, numexpr (where it",
          "has the reduction) and the call a NumPy user writes (`x.max()`, `np.argmax(x)`, `(x > 2).any()`,",
          "`x.any()`, `np.dot(x, x)` for `sum(x*x)`, its BLAS on one thread too, `m.max(axis=0)`,",
          "`m.max(axis=0) - m.min(axis=0)` (kiln: one pass), `m.sum(axis=1)` and `np.argmax(m, axis=1)`",
          "of x as rows of 1000), every result checked against NumPy's first. The bools are mostly false",
          "(the first true some 30,000 points in), so NumPy's `any` and `argmax` stop early; kiln's",
          "Python call first checks that every byte of a bool input is 0 or 1, a pass over the array."], None),
        ("python_strings", "Byte strings from Python: `python -m kiln.bench --strings`", function_table,
         ["ns per element of numexpr's byte-string operations on an `S10` array, one thread each",
          "(NumPy's are `s == b'abc'` and `np.char.find(s, b'ab') >= 0`), every result checked equal",
          "to NumPy's first."], None),
        ("peers", "Against the Python peers", kernel_table,
         ["ns per element: the peers' harness (`bench_py.py`: NumPy, numexpr, numba, JAX, each as its",
          "users call it, output allocated per call) beside `kiln bench`'s fused kernel (`kiln`) of the",
          "same cell."], None),
    ]
    for key, title, make, intro, figure in sections:
        if not data[key]:
            continue
        table = make(data[key])
        table, wrong = table if isinstance(table, tuple) else (table, [])
        out += [f"## {title}", ""] + intro + [""] + table + [""]
        if wrong:
            out += ["Rows that disagreed with the interpreter: " + "; ".join(wrong) + ".", ""]
        if figure:
            out += [figure, ""]
    out += ["## Regenerating this page", "",
            "```sh",
            "cargo build --release --bin kiln --example percall_callgrind",
            "python3 scripts/benchmarks.py --python PYTHON   # a Python with kiln installed (pip install ./python)",
            "```", "",
            "`--quick` makes a short run; `--peers FILE.json` adds the peers' harness; `--from DIR` re-renders",
            "kept JSON lines, `--only PART,...` runs just those parts. Older measurements, with the reasoning",
            "behind each change, are in the git history of this file.", ""]
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--kiln", default=str(ROOT / "target" / "release" / "kiln"), help="the kiln binary")
    p.add_argument("--python", default=sys.executable, help="a Python that imports kiln (else no Python tables)")
    p.add_argument("--quick", action="store_true", help="a short run: N = 1e4, 1e6; short budgets; few rounds")
    p.add_argument("--peers", type=Path, action="append", default=[], help="JSON of the peers' harness (bench_py.py --out)")
    p.add_argument("--raw", type=Path, default=ROOT / "target" / "benchmarks", help="where the JSON lines are kept")
    p.add_argument("--from", dest="from_dir", type=Path, help="render the JSON lines in this directory, run nothing")
    p.add_argument("--only", help="run just these parts (comma-separated: " + ", ".join(PARTS) + "), keep the "
                   "others' JSON lines from the last run in --raw, and render them all")
    p.add_argument("--out", type=Path, default=ROOT / "BENCHMARKS.md")
    args = p.parse_args(argv)

    kiln = Path(args.kiln)
    raw = args.from_dir or args.raw
    raw.mkdir(parents=True, exist_ok=True)
    # the Python parts run from `/`: a relative path to the interpreter is made absolute first
    if args.python and os.sep in args.python:
        args.python = str(Path(args.python).absolute())
    python = args.python if args.python and python_has_kiln(args.python) else None
    quick = ["--n", "1e4,1e6", "--budget-ms", "40"] if args.quick else []
    py_sizes = ["--sizes", "1e2,1e4,1e6", "--rounds", "3"] if args.quick else ["--sizes", "1e2,1e4,1e6,1e7"]
    only = set(args.only.split(",")) if args.only else set(PARTS)
    if not only <= set(PARTS):
        sys.exit(f"benchmarks.py: --only: unknown part(s) {', '.join(sorted(only - set(PARTS)))}")

    load_avg = os.getloadavg()[0]
    if args.from_dir is None:
        if not kiln.exists():
            sys.exit(f"benchmarks.py: {kiln} not found: build it first (cargo build --release --bin kiln)")
        # (part, its command as the page shows it, how to run it), in the order of the page
        parts = []
        bench = [kiln, "bench", "--threads", "1", "--json"]
        short = ["--budget-ms", "40"] if args.quick else []
        parts.append(("kernels", bench + quick + ["--plot", "docs/bench.svg"], None))
        if has_flag([kiln, "bench"], "--functions"):
            parts.append(("functions", bench + ["--functions"] + short + ["--plot", "docs/functions.svg"], None))
        parts.append(("programs", bench + ["--programs"] + short, None))
        example = kiln.parent / "examples" / "percall_callgrind"
        if example.exists() and shutil.which("valgrind"):
            parts.append(("callgrind", ["valgrind", "--tool=callgrind", "target/release/examples/percall_callgrind",
                                        "MODE", "CALLS"], lambda: run_callgrind(example, raw)))
        else:
            log(f"no {example} or no valgrind: no callgrind table "
                "(cargo build --release --example percall_callgrind)")
        if python:
            env_cmd = [python, "-m", "kiln.bench", "--json"]
            for dtype in ("f64", "f32"):
                parts.append((f"python_{dtype}", env_cmd + ["--dtype", dtype] + py_sizes, None))
            # the function table at N = 1e6 alone (the size issue 22 measures; the Rust table has 1e6)
            sizes = ["--sizes", "1e2,1e4,1e6"]
            for mode, extra in (("functions", ["--sizes", "1e6"]), ("programs", []), ("complex", sizes),
                                ("strings", sizes), ("reductions", ["--sizes", "1e6"])):
                if has_flag([python, "-m", "kiln.bench"], f"--{mode}"):
                    parts.append((f"python_{mode}", env_cmd + [f"--{mode}"] + extra, None))
        else:
            log(f"{args.python} does not import kiln: no Python tables (pip install ./python)")
        kept_path = raw / "commands.json"
        kept = json.loads(kept_path.read_text()) if kept_path.exists() and args.only else {}
        # the kept commands, in the page's order, each replaced where its part runs again (a part
        # this run cannot run, such as the Python ones without kiln installed, keeps its own)
        shown = dict(kept)
        for part, cmd, run in parts:
            if part not in only:
                continue
            shown[part] = flag_line([Path(cmd[0]).name if part != "callgrind" else cmd[0]] + cmd[1:])
            if run is not None:
                run()
            else:
                run_json(cmd, raw, part, cwd="/" if part.startswith("python") else ROOT)
        kept_path.write_text(json.dumps(shown))
        commands = list(shown.values())
    else:
        kept_path = raw / "commands.json"
        commands = list(json.loads(kept_path.read_text()).values()) if kept_path.exists() else []

    data = {
        "kernels": load(raw, "kernels"),
        "functions": load(raw, "functions"),
        "programs": load(raw, "programs"),
        "callgrind": load(raw, "callgrind"),
        "python": load(raw, "python_f64") + load(raw, "python_f32"),
        "python_functions": load(raw, "python_functions"),
        "python_programs": load(raw, "python_programs"),
        "python_complex": load(raw, "python_complex"),
        "python_strings": load(raw, "python_strings"),
        "python_reductions": load(raw, "python_reductions"),
    }
    data["peers"] = [row for path in args.peers for row in peer_rows(path, data["kernels"])]
    meta_path = raw / "meta.json"
    if args.from_dir is None:
        meta = {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
                "machine": f"{machine()}; load average {load_avg:.1f} when the run began",
                "versions": versions(kiln, python)}
        if args.only:
            meta["rerun"] = [part for part in PARTS if part in only]
        meta_path.write_text(json.dumps(meta))
    else:
        meta = json.loads(meta_path.read_text())
    page = render(data, meta, commands)
    args.out.write_text(page)
    lines = page.count("\n")
    log(f"wrote {args.out} ({lines} lines)")
    if lines > MAX_LINES:
        log(f"{args.out} has {lines} lines, more than the {MAX_LINES} a results page should: narrow the run")


if __name__ == "__main__":
    main()
