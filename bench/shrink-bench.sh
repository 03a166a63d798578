#!/usr/bin/env bash
# The shrinker against libFuzzer -minimize_crash and RapidCheck's own shrinking, on the same
# failures: for each implementation below, the first failure RapidCheck's case generator
# finds at a fixed seed (bench/shrink_compare.cpp) is reduced three ways, and the table shows
# what each leaves: fields (non-default fields), bytes (JSON text), time, and whether the
# result still has the failure's signature.
#
#   bench/shrink-bench.sh [--build DIR] [--fuzz-build DIR] [--out FILE.md] [--lf-seconds S]
#
#   --build DIR       host build with tests enabled (default build/default): r3fuzz, r3fuzz_shrink_compare
#   --fuzz-build DIR  the fuzz preset's build (default build/fuzz): r3fuzz_differential_fuzzer;
#                     without it the libFuzzer column is skipped with a message
#   --out FILE.md     also write the table as a Markdown section body (for docs/BENCHMARKS.md)
#   --lf-seconds S    -max_total_time of each -minimize_crash run (default 10)
#   RUNS=N            in-process timings are the median of N runs (default 3)
# Exit: 0 measured, 2 usage or missing host build.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build/default"
FUZZ_BUILD="$ROOT/build/fuzz"
OUT=""
LF_SECONDS=10
RUNS="${RUNS:-3}"
die() { echo "shrink-bench.sh: $*" >&2; exit 2; }
while (($#)); do
  case "$1" in
    --build) BUILD="$(realpath "${2:?--build needs a folder}")"; shift 2 ;;
    --fuzz-build) FUZZ_BUILD="$(realpath -m "${2:?--fuzz-build needs a folder}")"; shift 2 ;;
    --out) OUT="${2:?--out needs a file}"; shift 2 ;;
    --lf-seconds) LF_SECONDS="${2:?--lf-seconds needs a value}"; shift 2 ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
  esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || die "RUNS must be a positive integer, got '$RUNS'"
[[ "$LF_SECONDS" =~ ^[1-9][0-9]*$ ]] || die "--lf-seconds must be a positive integer, got '$LF_SECONDS'"
R3FUZZ="$BUILD/fuzz/cli/r3fuzz"
COMPARE="$BUILD/bench/r3fuzz_shrink_compare"
LF="$FUZZ_BUILD/fuzz/libfuzzer/r3fuzz_differential_fuzzer"
[[ -x "$R3FUZZ" ]] || die "$R3FUZZ is missing (build the default preset)"
[[ -x "$COMPARE" ]] || die "$COMPARE is missing (needs a build with tests enabled: GTest and rapidcheck)"
SPECS=(vllm-pre-50874 vllm-50874 r3-fixed+tp-major-order r3-fixed+skip-tp-gather r3-fixed+no-trim r3-fixed+chunk-row0)
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
if [[ -x "$LF" ]]; then LF_NOTE=""; else LF_NOTE="skipped: $LF is not built (cmake --preset fuzz)"; echo "shrink-bench.sh: libFuzzer $LF_NOTE" >&2; fi

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
ms() { awk -v s="$1" 'BEGIN {printf "%.2f ms", s * 1000}'; }

rows="$TMP/rows.tsv"  # spec contender fields bytes time kept summary
: >"$rows"
for spec in "${SPECS[@]}"; do
  declare -A times=()
  for ((i = 1; i <= RUNS; i++)); do
    "$COMPARE" find "$TMP" "$spec" >"$TMP/find.tsv" 2>"$TMP/find.err" || { echo "shrink-bench.sh: $spec: $(tail -1 "$TMP/find.err")" >&2; continue 2; }
    while IFS=$'\t' read -r _ who _ _ secs _ _; do times[$who]+="$secs "; done <"$TMP/find.tsv"
  done
  input_sig="$(awk -F'\t' '$2 == "input" {print $6}' "$TMP/find.tsv")"
  while IFS=$'\t' read -r name who fields bytes _ sig summary; do
    # shellcheck disable=SC2086
    t="$(median ${times[$who]})"
    [[ $who == input ]] && t="" || t="$(ms "$t")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$who" "$fields" "$bytes" "$t" \
      "$([[ $sig == "$input_sig" ]] && echo yes || echo "no: $sig")" "$summary" >>"$rows"
  done <"$TMP/find.tsv"
  # libFuzzer -minimize_crash on the same failure's bytes; the target runs policy models by name only.
  if [[ -n "$LF_NOTE" ]]; then
    printf '%s\tlibfuzzer\t\t\t\t%s\t\n' "$spec" "$LF_NOTE" >>"$rows"
  elif [[ $spec == *+* ]]; then
    printf '%s\tlibfuzzer\t\t\t\tn/a: the differential target runs registry names, not %s\t\n' "$spec" "$spec" >>"$rows"
  else
    mkdir -p "$TMP/bin" "$TMP/min"
    "$R3FUZZ" seed --to-binary --out "$TMP/bin" "$TMP/$spec.json" >/dev/null
    start=$(date +%s.%N)
    R3FUZZ_IMPLS="$spec" "$LF" -minimize_crash=1 -max_total_time="$LF_SECONDS" -runs=1000000 \
      -exact_artifact_path="$TMP/min/$spec.bin" "$TMP/bin/$spec.bin" >"$TMP/lf.log" 2>&1
    secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')
    [[ -s "$TMP/min/$spec.bin" ]] || cp "$TMP/bin/$spec.bin" "$TMP/min/$spec.bin"
    if "$R3FUZZ" seed --to-json --out "$TMP/min" "$TMP/min/$spec.bin" >/dev/null 2>&1 &&
       IFS=$'\t' read -r fields bytes sig summary < <("$COMPARE" measure "$TMP/min/$spec.json" "$spec"); then
      printf '%s\tlibfuzzer\t%s\t%s\t%s\t%s\t%s\n' "$spec" "$fields" "$bytes" "$(ms "$secs")" \
        "$([[ $sig == "$input_sig" ]] && echo yes || echo "no: $sig")" "$summary" >>"$rows"
    else
      printf '%s\tlibfuzzer\t\t\t%s\tminimized bytes do not decode to a case\t\n' "$spec" "$(ms "$secs")" >>"$rows"
    fi
  fi
  unset times
done

echo "Shrinking the same failures (first failure of RapidCheck's generator at seed 20260813, per implementation):"
column -t -s $'\t' -N failure,contender,fields,bytes,time,"same signature",result "$rows" 2>/dev/null || cat "$rows"

if [[ -n "$OUT" ]]; then
  {
    echo "Each failure is the first case RapidCheck's generator (tests/support/case_gen.hpp, seed 20260813,"
    echo "DP*TP >= 8, M >= 32) finds for the implementation, reduced by r3fuzz's domain-aware shrinker,"
    echo "by RapidCheck's own shrinking of the generator's choices, and by libFuzzer \`-minimize_crash\`"
    echo "(differential target, ${LF_SECONDS} s budget) on the same case's bytes. *fields*: fields that differ"
    echo "from the defaults (fewer reads faster); *bytes*: the JSON text; in-process times are the median of $RUNS runs."
    echo "-minimize_crash keeps any crash, so its result may show another bug (\"same signature\": no)."
    echo
    echo "| failure | contender | fields | bytes | time | same signature | result |"
    echo "|---|---|---:|---:|---:|---|---|"
    while IFS=$'\t' read -r a b c d e f g; do echo "| $a | $b | $c | $d | $e | $f | $g |"; done <"$rows"
  } >"$OUT"
  echo "shrink-bench.sh: wrote $OUT" >&2
fi
