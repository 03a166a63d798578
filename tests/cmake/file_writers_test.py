#!/usr/bin/env python3
"""cmake/file_writers.py on two fixture trees: one that writes files past write_new_file (it must
fail and name each write with its file, line and primitive; comments, string literals and
reading with fopen "re" are no writes), one that writes only through it (it must pass and list
the writer and the one write path's allowed uses)."""
import sys

from fixture_check import expect, run as run_check


def run(tree):
    return run_check("file_writers.py", tree)


ok = expect("writers_bad", run("writers_bad"), (1, '5 file write(s) outside write_new_file (fuzz/io/new_file.hpp; '
                                                   'docs/SECURITY.md, "One write path"):\n'
                                                   '  report.cpp:7: ofstream: std::ofstream out(path);\n'
                                                   '  report.cpp:8: fopen: FILE* f = std::fopen(path, "ab");\n'
                                                   '  report.cpp:9: fopen: FILE* g = fopen(path, mode);\n'
                                                   '  report.cpp:11: O_RDWR: int fd = open(path, O_RDWR);\n'
                                                   '  report.cpp:12: copy_file: std::filesystem::copy_file(path, "b");\n'))
new_file = "Status write_new_file(const char* path) { return ::open(path, O_WRONLY | O_CREAT | O_EXCL, 0644); }"
ok &= expect("writers_clean", run("writers_clean"),
             (0, "every file is written through write_new_file; 1 source(s) call it:\n"
                 "  report.cpp\n"
                 "2 allowed use(s) of a write primitive:\n"
                 f"  fuzz/io/new_file.cpp:1: O_WRONLY: {new_file}  [the one write path]\n"
                 f"  fuzz/io/new_file.cpp:1: O_CREAT: {new_file}  [the one write path]\n"))
sys.exit(0 if ok else 1)
