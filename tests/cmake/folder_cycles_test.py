#!/usr/bin/env python3
"""cmake/folder_cycles.py on two fixture trees: one with a folder cycle (it must fail and name
the cycle with the include lines behind it), one without (a detail/ folder including its
parent is no cycle, nor an engines/NAME/ folder including its parent; an include that names
no file is ignored)."""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "..", "..", "cmake", "folder_cycles.py")


def run(tree):
    r = subprocess.run([sys.executable, SCRIPT, os.path.join(HERE, "fixtures", tree)], capture_output=True, text=True)
    return r.returncode, r.stdout


def expect(what, got, want):
    if got != want:
        print(f"{what}:\n got  {got!r}\n want {want!r}")
        return False
    return True


ok = expect("cycle", run("cycle"), (1, 'folder cycle: a <-> b\n'
                                       '  a -> b: a/one.hpp:1: #include "b/two.hpp"\n'
                                       '  b -> a: b/two.hpp:2: #include "a/one.hpp"\n'))
ok &= expect("acyclic", run("acyclic"), (0, "no folder cycle among 2 folders (1 include edges)\n"))
sys.exit(0 if ok else 1)
