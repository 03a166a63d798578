#!/usr/bin/env python3
"""Fails when a source folder includes a folder that includes it back.

Folders are the directories holding the files (a `detail/` folder counts as its parent: it is
that folder's inside). Every engine's folder `X/engines/NAME/` counts as `X/engines`: the engines
of a level stand above its generic code, which reaches them through interfaces and registries and
never includes them (docs/ENGINES.md), so a generic file that includes an engine's header makes a
cycle. An edge A -> B is an `#include "B/file"` line in a file of A. Any cycle
of edges is reported with the include lines behind each edge, and the exit code is 1.

usage: folder_cycles.py ROOT [FOLDER...]   (the folders to scan, relative to ROOT; default: all)
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".hpp", ".cpp", ".h", ".cc", ".cu", ".cuh", ".inl")


def folder_of(path):
    parts = os.path.dirname(path).split("/")
    while parts:
        if parts[-1] == "detail":
            parts.pop()
        elif len(parts) >= 2 and parts[-2] == "engines":
            parts.pop()
        else:
            break
    return "/".join(parts)


def include_edges(root, scanned):
    """{(from, to): [\"file:line: #include ...\"]} over the source files under the scanned folders."""
    edges = {}
    for top in scanned:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d != "build" and not d.startswith("."))
            for name in sorted(filenames):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m or not os.path.isfile(os.path.join(root, m.group(1))):
                            continue  # a system header, or one relative to the file
                        source, target = folder_of(path), folder_of(m.group(1))
                        if source != target:
                            edges.setdefault((source, target), []).append(f"{path}:{number}: {line.strip()}")
    return edges


def cycles(edges):
    """Strongly connected components of more than one folder (Tarjan), each sorted."""
    graph = {}
    for a, b in edges:
        graph.setdefault(a, set()).add(b)
        graph.setdefault(b, set())
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = argv[1]
    scanned = argv[2:] or sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    edges = include_edges(root, scanned)
    found = cycles(edges)
    for component in found:
        print("folder cycle: " + " <-> ".join(component))
        for (a, b), lines in sorted(edges.items()):
            if a in component and b in component:
                print(f"  {a} -> {b}: {lines[0]}" + (f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""))
    if found:
        return 1
    print(f"no folder cycle among {len({f for e in edges for f in e})} folders ({len(edges)} include edges)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
