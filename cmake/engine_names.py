#!/usr/bin/env python3
"""Fails when generic code names an engine (docs/ENGINES.md): outside the engines' folders
(any path with an `engines/` component), no source or CMake file may be named after an engine,
and none may name one in code. Comments are free, and so is prose in a string literal (a help
text that lists the engines has spaces); an identifier, or a string that is a bare name such as
"sglang-fixed", is a hit: generic code reaches an engine through the registry, never by name.

usage: engine_names.py ROOT FOLDER...   (the folders to scan, relative to ROOT)
"""
import os
import re
import sys

NAMES = None  # every built-in engine's name: the folders of reference/engines/ (engine_names())
SOURCES = (".hpp", ".cpp", ".h", ".cc", ".cu", ".cuh", ".inl")
# C++: comments and literals, in the order the lexer meets them (raw strings first).
CPP_TOKENS = re.compile(r'R"(?P<delim>[^(\s]*)\((?:.|\n)*?\)(?P=delim)"|//[^\n]*|/\*(?:.|\n)*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'')
CMAKE_TOKENS = re.compile(r'#[^\n]*|"(?:\\.|[^"\\])*"')


def code_hits(text, tokens):
    """(line, what) for every engine name in code: outside comments, and in bare-name strings."""
    hits = []
    pos = 0
    for m in tokens.finditer(text):
        hits += [(text.count("\n", 0, pos + n.start()) + 1, n.group(0)) for n in NAMES.finditer(text[pos:m.start()])]
        token = m.group(0)
        if token.startswith('"') or token.startswith('R"'):
            body = token.strip('"')
            if NAMES.search(body) and not re.search(r"\s", body):
                hits.append((text.count("\n", 0, m.start()) + 1, token))
        pos = m.end()
    hits += [(text.count("\n", 0, pos + n.start()) + 1, n.group(0)) for n in NAMES.finditer(text[pos:])]
    return hits


def scan(root, folders):
    problems = []
    for top in folders:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames[:] = sorted(d for d in dirnames if d not in ("build", "engines") and not d.startswith("."))
            for name in sorted(filenames):
                path = os.path.relpath(os.path.join(dirpath, name), root).replace(os.sep, "/")
                is_cmake = name == "CMakeLists.txt" or name.endswith(".cmake")
                if not (name.endswith(SOURCES) or is_cmake):
                    continue
                if NAMES.search(name):
                    problems.append(f"{path}: the file is named after an engine (move it to an engines/NAME/ folder)")
                with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                for line, what in code_hits(text, CMAKE_TOKENS if is_cmake else CPP_TOKENS):
                    problems.append(f"{path}:{line}: names an engine in code: {what}")
    return problems


def engine_names(root):
    """The engines r3fuzz ships: one folder each under reference/engines/, so a new engine is
    checked from the day its folder exists."""
    top = os.path.join(root, "reference", "engines")
    names = sorted(d for d in os.listdir(top) if os.path.isdir(os.path.join(top, d)) and not d.startswith("."))
    # Not inside the English words some names are part of ("ascending", "descend").
    return re.compile("|".join(r"(?<!d)" + re.escape(n) + r"(?!ing)" for n in names), re.IGNORECASE)


def main(argv):
    global NAMES
    if len(argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    NAMES = engine_names(argv[1])
    problems = scan(argv[1], argv[2:])
    for p in problems:
        print(p)
    if problems:
        print(f"{len(problems)} place(s) in generic code name an engine")
        return 1
    print("no generic code names an engine")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
