#!/usr/bin/env bash
# Continuous fuzzing for CI: builds the libFuzzer targets (the `fuzz` preset: clang, ASan,
# UBSan), fuzzes each for a time budget from corpus/ (readable cases converted to binary
# seeds), merges new coverage into a corpus directory (-merge=1), and on a failure minimizes
# it (-minimize_crash=1), writes it as a readable JSON case plus the raw input, and exits 1.
#
#   fuzz/ci-fuzz.sh [--seconds N] [--build DIR] [--no-build] [--work DIR] [--corpus-out DIR]
#
#   --seconds N       budget per target (default 60; the printers and trace targets at most 20)
#   --build DIR       fuzz build folder (default build/fuzz, the preset's)
#   --no-build        use the targets already built there
#   --work DIR        scratch: seeds, new inputs, artifacts (default build/ci-fuzz)
#   --corpus-out DIR  where merged coverage accumulates, one sub-folder per target
#                     (default <work>/corpus); keep it between CI runs to fuzz deeper each time
# Known vLLM bugs (corpus/regression "expect" entries) do not fail the run: R3FUZZ_KNOWN.
# Exit: 0 nothing found, 1 a finding (see <work>/artifacts), 2 usage or build error.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

SECONDS_PER_TARGET=60
BUILD="$ROOT/build/fuzz"
WORK="$ROOT/build/ci-fuzz"
CORPUS_OUT=""
DO_BUILD=1
die() { echo "ci-fuzz.sh: error: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --seconds) SECONDS_PER_TARGET="${2:?--seconds needs a value}"; shift 2 ;;
    --build) BUILD="${2:?--build needs a folder}"; shift 2 ;;
    --work) WORK="${2:?--work needs a folder}"; shift 2 ;;
    --corpus-out) CORPUS_OUT="${2:?--corpus-out needs a folder}"; shift 2 ;;
    --no-build) DO_BUILD=0; shift ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$SECONDS_PER_TARGET" =~ ^[1-9][0-9]*$ ]] || die "--seconds must be a positive integer, got '$SECONDS_PER_TARGET'"
CORPUS_OUT="${CORPUS_OUT:-$WORK/corpus}"
TARGETS=(r3fuzz_differential_fuzzer r3fuzz_robustness_fuzzer r3fuzz_printers_fuzzer r3fuzz_trace_fuzzer)

if ((DO_BUILD)); then
  echo "ci-fuzz.sh: building the fuzz targets in $BUILD"
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DR3FUZZ_FUZZING=ON -DR3FUZZ_CUDA=OFF >/dev/null || die "configure failed"
  cmake --build "$BUILD" -j2 --target "${TARGETS[@]}" r3fuzz || die "build failed"
fi
BIN="$BUILD/fuzz/libfuzzer"
R3FUZZ="$BUILD/fuzz/cli/r3fuzz"
for t in "${TARGETS[@]}"; do [[ -x "$BIN/$t" ]] || die "$BIN/$t is missing (build with the fuzz preset)"; done
[[ -x "$R3FUZZ" ]] || die "$R3FUZZ is missing (needed to convert seeds)"

rm -rf "$WORK/seeds" "$WORK/new" "$WORK/artifacts"
mkdir -p "$WORK/seeds" "$WORK/artifacts" "$CORPUS_OUT"
"$R3FUZZ" seed --to-binary --out "$WORK/seeds" "$ROOT/corpus/production" "$ROOT/corpus/regression" >/dev/null
cp "$ROOT"/corpus/production/*.json "$WORK/seeds/"  # the JSON decoder's seeds, for the robustness target
# A deployment, a metadata log and adapter replies, for the same; and the printers target's
# hostile texts (printers-*.bin: C1 controls, line ends, characters XML 1.0 forbids).
cp "$ROOT"/fuzz/libfuzzer/seeds/* "$WORK/seeds/"
cp "$ROOT"/corpus/traces/*.json "$ROOT"/corpus/traces/*/*.json "$WORK/seeds/"  # the trace target's seeds (it reads JSON traces as well as binary)

export R3FUZZ_KNOWN="$ROOT/corpus/regression"
R3FUZZ_IMPLS="${R3FUZZ_IMPLS:-$([[ -n ${R3FUZZ_FAULT:-} ]] && echo r3-fixed || echo vllm-50874)}"  # what shrinking judges
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=0
for t in "${TARGETS[@]}"; do
  new="$WORK/new/$t"
  merged="$CORPUS_OUT/$t"
  mkdir -p "$new" "$merged"
  # The printers target checks escapes, a small surface: 20 s at most is plenty for the smoke.
  seconds="$SECONDS_PER_TARGET"
  [[ $t == r3fuzz_printers_fuzzer || $t == r3fuzz_trace_fuzzer ]] && ((seconds > 20)) && seconds=20
  echo "ci-fuzz.sh: $t for ${seconds}s"
  set +e
  "$BIN/$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$WORK/artifacts/$t-" "$new" "$merged" "$WORK/seeds" >"$WORK/$t.log" 2>&1
  rc=$?
  set -e
  "$BIN/$t" -merge=1 "$merged" "$new" >>"$WORK/$t.log" 2>&1 || true
  echo "ci-fuzz.sh: $t: $(grep -E '^stat::number_of_executed_units' "$WORK/$t.log" | tail -1 | awk '{print $2}') runs, corpus $(find "$merged" -type f | wc -l) inputs"
  ((rc == 0)) && continue
  failed=1
  for crash in "$WORK"/artifacts/"$t"-{crash,leak,timeout,oom}-*; do
    [[ -f "$crash" ]] || continue
    min="$crash.min"
    "$BIN/$t" -minimize_crash=1 -max_total_time=30 -exact_artifact_path="$min" "$crash" >>"$WORK/$t.log" 2>&1 || true
    [[ -s "$min" ]] || cp "$crash" "$min"
    mkdir -p "$WORK/artifacts/json"
    cp "$min" "$WORK/artifacts/json/$(basename "$crash").bin"
    if "$R3FUZZ" seed --to-json --out "$WORK/artifacts/json" "$WORK/artifacts/json/$(basename "$crash").bin" >/dev/null 2>&1; then
      echo "ci-fuzz.sh: FINDING in $t: $WORK/artifacts/json/$(basename "$crash").json (raw: $min)"
      # The domain-aware shrinker on the original crash, per implementation the target ran
      # (R3FUZZ_IMPLS, or the fault's carrier); -minimize_crash's result stays beside it.
      [[ $t == r3fuzz_differential_fuzzer ]] && for impl in ${R3FUZZ_IMPLS//,/ }; do
        "$R3FUZZ" shrink --from-bytes "$crash" --impl "$impl" ${R3FUZZ_FAULT:+--fault "$R3FUZZ_FAULT"} \
          --out "$WORK/artifacts/json" 2>>"$WORK/$t.log" | head -3 || true
      done
    else
      echo "ci-fuzz.sh: FINDING in $t: raw input $min (not a binary case: a decoder bug)"
    fi
  done
  echo "ci-fuzz.sh: $t log (last 60 lines):"
  tail -60 "$WORK/$t.log"
done
if ((failed)); then
  echo "ci-fuzz.sh: findings written to $WORK/artifacts" >&2
  exit 1
fi
echo "ci-fuzz.sh: no findings; merged corpus in $CORPUS_OUT"
