#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build: compiles the r3fuzz fuzz targets with the environment the
# base builder provides (CC, CXX, CFLAGS, CXXFLAGS with the sanitizer flags, LIB_FUZZING_ENGINE,
# OUT, SRC) and puts them, with seed corpora from corpus/, into $OUT.
# Run locally (as tests/fuzz/libfuzzer checks):
#   CC=clang CXX=clang++ CFLAGS="-O1 -gline-tables-only -fsanitize=address,fuzzer-no-link" CXXFLAGS="$CFLAGS" \
#   LIB_FUZZING_ENGINE=-fsanitize=fuzzer OUT=/tmp/out .clusterfuzzlite/build.sh
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
: "${OUT:?OUT must name the output folder}"
: "${LIB_FUZZING_ENGINE:?LIB_FUZZING_ENGINE must hold the engine flag, e.g. -fsanitize=fuzzer}"
CXXFLAGS="${CXXFLAGS:-${CFLAGS:-}}"
BUILD="${WORK:-$ROOT/build}/cflite"
TARGETS=(r3fuzz_differential_fuzzer r3fuzz_robustness_fuzzer r3fuzz_printers_fuzzer r3fuzz_trace_fuzzer)

# R3FUZZ_FUZZING stays off: the sanitizers are the builder's (CXXFLAGS); the engine is
# LIB_FUZZING_ENGINE. Only the fuzz targets are built, and r3fuzz_seed_corpus (the case codec
# alone) to convert the seed corpus: not the r3fuzz tool, nor the tests.
# ccache, when the builder has it (CMake picks it up): paths below the checkout and the build
# folder are hashed relative to the build folder, so a rebuild in another WORK still hits.
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$(dirname "$ROOT")}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
fi
# No build type: the builder's flags carry the optimisation level and debug info (OSS-Fuzz gives
# -O1 -gline-tables-only); a build type would add -O2 -g after them.
cmake -S "$ROOT" -B "$BUILD" -G Ninja \
  -DCMAKE_C_COMPILER="${CC:-clang}" -DCMAKE_CXX_COMPILER="${CXX:-clang++}" \
  -DCMAKE_CXX_FLAGS="$CXXFLAGS" -DCMAKE_BUILD_TYPE= \
  -DR3FUZZ_CUDA=OFF -DR3FUZZ_BUILD_TESTS=OFF -DR3FUZZ_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE"
cmake --build "$BUILD" -j"$(nproc)" --target "${TARGETS[@]}" r3fuzz_seed_corpus

mkdir -p "$OUT"
for t in "${TARGETS[@]}"; do cp "$BUILD/fuzz/libfuzzer/$t" "$OUT/"; done

# Seed corpora: readable cases converted to binary inputs (and, for the robustness target, the
# JSON files themselves).
seeds="$BUILD/seeds"
rm -rf "$seeds" && mkdir -p "$seeds"
"$BUILD/fuzz/libfuzzer/r3fuzz_seed_corpus" "$seeds" "$ROOT/corpus/production" "$ROOT/corpus/regression"
if command -v zip >/dev/null; then
  (cd "$seeds" && zip -q -j "$OUT/r3fuzz_differential_fuzzer_seed_corpus.zip" ./*.bin)
  (cd "$ROOT/corpus" && zip -q -j "$OUT/r3fuzz_robustness_fuzzer_seed_corpus.zip" production/*.json "$seeds"/*.bin)
  # The printers target's hostile texts: C1 controls, line ends, characters XML 1.0 forbids.
  (cd "$ROOT/fuzz/libfuzzer/seeds" && zip -q -j "$OUT/r3fuzz_printers_fuzzer_seed_corpus.zip" printers-*.bin)
  # The trace target reads JSON traces as they are.
  (cd "$ROOT/corpus/traces" && zip -q -j "$OUT/r3fuzz_trace_fuzzer_seed_corpus.zip" ./*.json ./*/*.json)
else
  echo "build.sh: zip not found: no seed corpora packed" >&2
fi
# Known vLLM bugs do not stop continuous fuzzing (see fuzz/libfuzzer/differential.hpp).
printf '[libfuzzer]\ntimeout = 10\n' >"$OUT/r3fuzz_differential_fuzzer.options"
