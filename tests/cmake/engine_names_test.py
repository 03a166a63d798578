#!/usr/bin/env python3
"""cmake/engine_names.py on two fixture trees: one whose generic code names engines (it must fail
and list each place: a file named after an engine, an identifier, a bare-name string, a raw
string, a CMake line; comments, prose strings and the engines' own folders are free), and one
that names them only in comments, prose and an engine folder (it must pass). The engines' names
come from each tree's reference/engines/ folders (vllm, sglang and trtllm here)."""
import sys

from fixture_check import expect, run

ok = expect("engine_names", run("engine_names.py", "engine_names", "fuzz"),
            (1, "fuzz/export/vllm_target.cpp: the file is named after an engine (move it to an engines/NAME/ folder)\n"
                "fuzz/shrink/passes.cpp:4: names an engine in code: sglang\n"
                "fuzz/shrink/passes.cpp:5: names an engine in code: vllm\n"
                'fuzz/shrink/passes.cpp:5: names an engine in code: "sglang-fixed"\n'
                'fuzz/shrink/passes.cpp:6: names an engine in code: R"(sglang)"\n'
                "fuzz/shrink/passes.cpp:7: names an engine in code: trtllm\n"
                "fuzz/shrink/sources.cmake:3: names an engine in code: sglang\n"
                "7 place(s) in generic code name an engine\n"))
ok &= expect("engine_names_clean", run("engine_names.py", "engine_names_clean", "fuzz"),
             (0, "no generic code names an engine\n"))
sys.exit(0 if ok else 1)
