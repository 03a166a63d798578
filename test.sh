#!/usr/bin/env bash
# Builds and tests r3fuzz: host build + tests, the CUDA build when nvcc exists
# (build only: the tests run on the host backend), and the fuzzing build, which runs the
# tests again under ASan + UBSan plus the fuzz smoke tests. Stops at the first failure.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

stage() { printf '\n===== test.sh: %s =====\n' "$*"; }

stage "setup"
./setup.sh

stage "default: configure, build, test"
cmake --preset default
cmake --build --preset default -j2
ctest --preset default

NVCC="$(command -v nvcc || true)"
[[ -z "$NVCC" && -x /usr/local/cuda/bin/nvcc ]] && NVCC=/usr/local/cuda/bin/nvcc
if [[ -n "$NVCC" ]]; then
  stage "cuda: configure, build ($NVCC)"
  cmake --preset cuda -DCMAKE_CUDA_COMPILER="$NVCC"
  # The nvcc-built targets only: everything else is the host build above, compiled again.
  cmake --build --preset cuda -j2 --target r3fuzz_gpu_cuda gpu_cuda_tests r3fuzz_gpu_bench
  # cuda-build checks the library linked; the CUDA tests skip with a reason without a device.
  ctest --preset cuda -L 'cuda' --no-tests=error
else
  stage "cuda: skipped: no nvcc found"
fi

stage "fuzz: configure, build; every test under ASan + UBSan, the fuzz smoke tests among them"
cmake --preset fuzz
cmake --build --preset fuzz -j2
# The examples (thousands of cases through Python adapters) and the install test (a nested
# build) ran in the default stage; sanitizers add nothing there but minutes.
ctest --preset fuzz -LE 'examples|install'

stage "all stages passed"
