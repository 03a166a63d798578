#!/usr/bin/env python3
"""Fails when a source writes a file other than through write_new_file (docs/SECURITY.md, "One
write path").

Every C and C++ source under the given folders is scanned for the primitives that create or
write a file: std::ofstream and friends, fopen/freopen/fdopen with a mode that writes (or a
mode that is not a literal), open() flags that write (O_WRONLY, O_RDWR, O_CREAT, O_TRUNC,
O_APPEND), creat, mkstemp and its kin, tmpfile, mkfifo, mknod, link, symlink, truncate, and
std::filesystem's copy, copy_file, create_symlink, create_hard_link, resize_file and rename. A use outside
the allowed list below is reported as FILE:LINE: PRIMITIVE: the line, and the exit code is 1.
Otherwise it lists every writer: the allowed uses, then every source that calls write_new_file
(or write_case_file / write_flag_file, which call it), and exits 0. Comments and string
literals are not scanned.

usage: file_writers.py ROOT [FOLDER...]   (the folders to scan, relative to ROOT; default: all)
"""
import os
import re
import sys

SOURCES = (".hpp", ".cpp", ".h", ".cc", ".cu", ".cuh", ".inl")

# Each allowed use: (file, primitive) -> why it is no second write path.
ALLOWED = {
    ("fuzz/io/new_file.cpp", "O_WRONLY"): "the one write path",
    ("fuzz/io/new_file.cpp", "O_CREAT"): "the one write path",
    ("fuzz/io/new_file.cpp", "rename"): "the one write path",
    ("fuzz/cli/output_dir.cpp", "mkstemp"): "--out's writability probe: an empty temporary, removed at once",
    ("fuzz/adapter/child_process.cpp", "O_WRONLY"): "--adapter-log FILE: the adapter's own stderr, appended by it",
    ("fuzz/adapter/child_process.cpp", "O_CREAT"): "--adapter-log FILE: the adapter's own stderr, appended by it",
    ("fuzz/adapter/child_process.cpp", "O_APPEND"): "--adapter-log FILE: the adapter's own stderr, appended by it",
}

PRIMITIVES = [
    (re.compile(r"\b(?:basic_)?(?:o?fstream|filebuf)\b"), None),
    (re.compile(r"\bO_(?:WRONLY|RDWR|CREAT|TRUNC|APPEND)\b"), None),
    (re.compile(r"\b(?:creat|mkstemps?|mkostemps?|tmpfile|tmpnam|mkfifo|mknod|link|symlink|linkat|symlinkat|"
                r"truncate|ftruncate)\s*\("), None),
    (re.compile(r"\b(?:copy_file|copy_symlink|create_symlink|create_hard_link|create_directory_symlink|resize_file|"
                r"rename)\s*\("), None),
    (re.compile(r"\b(?:fs|filesystem)::copy\s*\("), None),
    # A mode that writes ("w", "a", "r+"), or one that is no literal: reading ("r", "rb", "re") is fine.
    (re.compile(r"\b(?:fopen|freopen|fdopen)\s*\("), "mode"),
]
WRITERS = re.compile(r"\b(?:write_new_file|write_case_file|write_flag_file)\s*\(")
MODE = re.compile(r'"((?:[^"\\]|\\.)*)"\s*\)')


def code_only(line, in_comment):
    """The line with comments and string literals blanked (their quotes kept), and whether a
    block comment is still open at its end."""
    out, i = [], 0
    while i < len(line):
        if in_comment:
            end = line.find("*/", i)
            if end < 0:
                return "".join(out), True
            i, in_comment = end + 2, False
        elif line.startswith("//", i):
            break
        elif line.startswith("/*", i):
            in_comment, i = True, i + 2
        elif line[i] in "\"'":
            quote, j = line[i], i + 1
            while j < len(line) and line[j] != quote:
                j += 2 if line[j] == "\\" else 1
            out.append(quote + " " * (min(j, len(line)) - i - 1) + quote)
            i = j + 1
        else:
            out.append(line[i])
            i += 1
    return "".join(out), in_comment


def primitive_of(match):
    return re.sub(r"\s*\($", "", match.group(0)).split("::")[-1]


def scan(root, folders):
    bad, allowed, writers = [], [], []
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, folder)):
            dirnames.sort()
            for name in sorted(filenames):
                if not name.endswith(SOURCES):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                in_comment = False
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, raw in enumerate(f, 1):
                        raw = raw.rstrip("\n")
                        if re.match(r"\s*#\s*include\b", raw):
                            continue
                        code, in_comment = code_only(raw, in_comment)
                        call = WRITERS.search(code)
                        if call and not re.search(r"\bStatus\s+$", code[:call.start()]) and rel not in writers:
                            writers.append(rel)  # a call, not the declaration or definition
                        for pattern, check in PRIMITIVES:
                            for m in pattern.finditer(code):
                                if check == "mode":
                                    mode = MODE.search(raw, m.end())
                                    if mode and not re.search(r"[wa+]", mode.group(1)):
                                        continue
                                what = primitive_of(m)
                                where = f"{rel}:{number}: {what}: {raw.strip()}"
                                if (rel, what) in ALLOWED:
                                    allowed.append(f"{where}  [{ALLOWED[(rel, what)]}]")
                                else:
                                    bad.append(where)
    return bad, allowed, writers


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    root = argv[1]
    folders = argv[2:] or ["."]
    bad, allowed, writers = scan(root, folders)
    if bad:
        print(f"{len(bad)} file write(s) outside write_new_file (fuzz/io/new_file.hpp; docs/SECURITY.md, "
              f"\"One write path\"):")
        for line in bad:
            print(f"  {line}")
        return 1
    print(f"every file is written through write_new_file; {len(writers)} source(s) call it:")
    for w in writers:
        print(f"  {w}")
    print(f"{len(allowed)} allowed use(s) of a write primitive:")
    for line in allowed:
        print(f"  {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
