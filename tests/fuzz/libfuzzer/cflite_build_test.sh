#!/usr/bin/env bash
# Runs .clusterfuzzlite/build.sh as the OSS-Fuzz base builder would (its environment variables,
# a fresh OUT) and checks that every fuzz target and seed corpus lands in $OUT and that each
# target runs a few inputs.
#   cflite_build_test.sh [CXXFLAGS [WORK]]
# Without arguments: the flags the base builder gives an address-sanitizer build, in a temporary
# WORK. The fuzz preset passes its own flags and the folder beside its build (build/), so that
# build.sh's compile lines are the preset's and come from the compiler cache: what is checked is
# build.sh's plumbing (flags and engine taken from the builder's variables, targets and seed
# corpora into OUT), not a third build of the library.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../../.." && pwd)"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
builder_flags="-O1 -fno-omit-frame-pointer -gline-tables-only -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
flags="${1:-$builder_flags}"
export CC=clang CXX=clang++ CFLAGS="$flags" CXXFLAGS="$flags"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT="$TMP/out" SRC="$ROOT" WORK="${2:-$TMP/work}"
"$ROOT/.clusterfuzzlite/build.sh" >"$TMP/build.log" 2>&1 || { tail -40 "$TMP/build.log"; exit 1; }
# The implementations that must stay clean (as in .ci/run): this checks the build, not vLLM's bugs.
export R3FUZZ_IMPLS=r3-fixed,gpu:r3-fixed
for t in r3fuzz_differential_fuzzer r3fuzz_robustness_fuzzer r3fuzz_trace_fuzzer; do
  [[ -x "$OUT/$t" ]] || { echo "FAIL: $OUT/$t missing"; ls -l "$OUT"; exit 1; }
  "$OUT/$t" -runs=200 -seed=1 >"$TMP/$t.log" 2>&1 || { echo "FAIL: $t -runs=200"; tail -30 "$TMP/$t.log"; exit 1; }
  grep -q "Done 200 runs" "$TMP/$t.log" || { echo "FAIL: $t did not report 200 runs"; tail "$TMP/$t.log"; exit 1; }
done
if command -v zip >/dev/null; then
  [[ -s "$OUT/r3fuzz_differential_fuzzer_seed_corpus.zip" ]] || { echo "FAIL: no seed corpus zip"; exit 1; }
fi
echo "PASS: build.sh put $(ls "$OUT" | tr '\n' ' ')into OUT"
