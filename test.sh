#!/usr/bin/env bash
# Builds and tests r3fuzz, running each test once:
#  - default (g++, Release): the r3fuzz tool, and the tests that need an unsanitised build (the
#    example adapters in Python drive it through whole campaigns, the torch ones on real torch;
#    every corpus/regression entry's exported pytest runs under pytest against the sample engines;
#    the C++ plug-in example builds against the installed package);
#  - cuda (nvcc, when it exists): the CUDA targets, built only: without a GPU the tests run on
#    the host backend, and the CUDA tests skip with a reason;
#  - fuzz (clang, libFuzzer, ASan + UBSan): every other test, under the sanitizers, with the
#    fuzz smoke tests. A sanitized run proves what a plain run proves, and memory safety besides.
# .ci/run adds the ClusterFuzzLite build check (label cflite) and a 100-s fuzz smoke.
# Stops at the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

stage() { printf '\n===== test.sh: %s (%s) =====\n' "$*" "$(date -u +%H:%M:%S)"; }

stage "setup"
./setup.sh --with-torch
# The example tests run engine capture code on real torch and the exported pytests under pytest:
# here a missing torch is a failure, not a skip (tests/examples/torch_python.hpp).
export R3FUZZ_REQUIRE_TORCH=1
# One compiler cache for every build folder: paths below the checkout are hashed relative to
# the build folder, so folders at the same depth share objects compiled with the same flags.
export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=1

stage "default: configure, build the tool and the example tests, run them"
cmake --preset default
cmake --build --preset default -j2 --target r3fuzz r3fuzz_examples_tests
ctest --preset default -L 'examples|install' --no-tests=error

NVCC="$(command -v nvcc || true)"
[[ -z "$NVCC" && -x /usr/local/cuda/bin/nvcc ]] && NVCC=/usr/local/cuda/bin/nvcc
if [[ -n "$NVCC" ]]; then
  stage "cuda: configure, build ($NVCC)"
  cmake --preset cuda -DCMAKE_CUDA_COMPILER="$NVCC"
  # The nvcc-built targets only: everything else is built and tested in the other stages.
  cmake --build --preset cuda -j2 --target r3fuzz_gpu_cuda gpu_cuda_tests r3fuzz_gpu_bench
  # cuda-build checks the library linked; the CUDA tests skip with a reason without a device.
  ctest --preset cuda -L 'cuda' --no-tests=error
else
  stage "cuda: skipped: no nvcc found"
fi

stage "fuzz: configure, build; every other test under ASan + UBSan, the fuzz smoke tests among them"
cmake --preset fuzz
cmake --build --preset fuzz -j2
ctest --preset fuzz -LE 'examples|install|cflite' --no-tests=error

stage "all stages passed"
