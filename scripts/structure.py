#!/usr/bin/env python3
"""The shape of a crate's modules: its largest functions and its module import graph.

    python3 scripts/structure.py [crate src dir, default jit/src] [--top N]

Functions are measured from their `fn` line to the closing brace at the same indentation (a
function's doc comment and attributes are not counted). The import graph has one node per top-level
module (a directory module's files are one node) and an edge a -> b for every `crate::b` that a
names; strongly connected components of more than one module are import cycles. Exits 1 if there
is a cycle.
"""
import os
import re
import sys

src = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else "jit/src"
top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 10

files = []
for d, _, names in os.walk(src):
    files += [os.path.join(d, n) for n in names if n.endswith(".rs")]


def module_of(path):
    rel = os.path.relpath(path, src)
    first = rel.split(os.sep)[0]
    return first[:-3] if first.endswith(".rs") else first


fn_re = re.compile(r"^(\s*)(pub(\([^)]*\))?\s+)?(const\s+)?(unsafe\s+)?(extern\s+\"C\"\s+)?fn\s+(\w+)")
sizes = []
edges = {}
for path in sorted(files):
    lines = open(path, encoding="utf-8").read().split("\n")
    mod = module_of(path)
    edges.setdefault(mod, set())
    for line in lines:
        if line.lstrip().startswith("//"):
            continue
        for m in re.finditer(r"crate::(\w+)", line):
            if m.group(1) != mod:
                edges[mod].add(m.group(1))
        m = re.match(r"^\s*use crate::\{([^}]*)\}", line)
        if m:
            for part in m.group(1).split(","):
                name = part.strip().split("::")[0].split(" ")[0]
                if name and name not in ("self", mod) and name[0].islower():
                    edges[mod].add(name)
    for i, line in enumerate(lines):
        m = fn_re.match(line)
        if not m or line.rstrip().endswith(";"):
            continue
        indent = m.group(1)
        for j in range(i, len(lines)):
            if lines[j] == indent + "}" or (j > i and lines[j].startswith(indent + "}")
                                              and len(lines[j]) - len(lines[j].lstrip()) == len(indent)):
                break
            if j == i and line.rstrip().endswith("}"):
                break
        sizes.append((j - i + 1, f"{os.path.relpath(path)}:{i + 1}", m.group(7)))

sizes.sort(reverse=True)
print(f"largest functions in {src}:")
for n, at, name in sizes[:top]:
    print(f"  {n:4} lines  {name:28} {at}")

mods = sorted(edges)
edges = {a: sorted(b for b in bs if b in edges) for a, bs in edges.items()}
print("\nmodule imports:")
for a in mods:
    print(f"  {a:10} -> {', '.join(edges[a]) or '-'}")

# Tarjan's strongly connected components
index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]


def visit(v):
    index[v] = low[v] = counter[0]
    counter[0] += 1
    stack.append(v)
    on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        sccs.append(comp)


for v in mods:
    if v not in index:
        visit(v)
cycles = [sorted(c) for c in sccs if len(c) > 1]
print("\nimport cycles:", "none" if not cycles else cycles)
sys.exit(1 if cycles else 0)
