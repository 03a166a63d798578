#!/usr/bin/env bash
# Builds the r3fuzz tool (default preset, no tests) and runs it. With no arguments it runs
# the main job below (paths relative to the repository root); with arguments it
# passes them to r3fuzz unchanged, from the caller's directory.
# Build output goes to stderr so that stdout carries only r3fuzz's output.
set -euo pipefail

# The main job: a 10-second differential campaign of the built-in policy models and the GPU
# pipeline on its host backend. It exits 1: it finds vLLM's documented bugs (docs/FINDINGS.md).
DEFAULT_ARGS=(run --time 10 --mode mixed --impl vllm-50874 --impl vllm-pre-50874 --impl r3-fixed --impl gpu)

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BIN="$ROOT/build/default/fuzz/cli/r3fuzz"

(
  cd "$ROOT"
  ./setup.sh
  cmake --preset default
  cmake --build --preset default -j2 --target r3fuzz  # the tool alone: ./test.sh builds the tests
) >&2

if [[ ! -x "$BIN" ]]; then
  echo "run.sh: error: $BIN was not built (does fuzz/cli/CMakeLists.txt define it yet?)" >&2
  exit 1
fi

if (($# == 0)); then
  cd "$ROOT"
  set -- "${DEFAULT_ARGS[@]}"
fi
exec "$BIN" "$@"
