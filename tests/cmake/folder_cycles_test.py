#!/usr/bin/env python3
"""cmake/folder_cycles.py on three fixture trees: one with a folder cycle (it must fail and name
the cycle with the include lines behind it), one where generic code includes an engine's part
(engines/NAME/ counts as engines/, which stands above the generic code: a cycle too), and one
without (a detail/ folder including its parent is no cycle, nor an engine's part or the engines'
registry including the generic code; an include that names no file is ignored)."""
import sys

from fixture_check import expect, run as run_check


def run(tree):
    return run_check("folder_cycles.py", tree)


ok = expect("cycle", run("cycle"), (1, 'folder cycle: a <-> b\n'
                                       '  a -> b: a/one.hpp:1: #include "b/two.hpp"\n'
                                       '  b -> a: b/two.hpp:2: #include "a/one.hpp"\n'))
ok &= expect("engine dispatch", run("engine_dispatch"), (1, 'folder cycle: a <-> a/engines\n'
                                                          '  a -> a/engines: a/one.hpp:1: #include "a/engines/e/part.hpp"\n'
                                                          '  a/engines -> a: a/engines/e/part.hpp:1: #include "a/one.hpp"\n'))
ok &= expect("acyclic", run("acyclic"), (0, "no folder cycle among 3 folders (2 include edges)\n"))
sys.exit(0 if ok else 1)
