#!/usr/bin/env bash
# Structure-aware mutation against libFuzzer's byte mutation: for each injected fault
# (R3FUZZ_FAULT), runs the differential target built with the custom mutator and the one built
# with -DR3FUZZ_PLAIN_MUTATION (no hooks) from the same seeds, several times with different
# -seed values, and records the seconds and executions until the first crash (the fault found).
# Prints one row per fault: medians side by side and their ratio (bytes / structure).
#
#   bench/mutator-vs-bytes.sh [--build DIR] [--runs N] [--budget SEC] [--faults "a b ..."] [--out FILE]
# Needs the fuzz preset build (cmake --preset fuzz && cmake --build --preset fuzz).
# A run that finds nothing within the budget counts as the budget (shown with '>').
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build/fuzz"
RUNS=5
BUDGET=60
FAULTS="tp-major-order unpadded-offset no-trim floor-sp skip-tp-gather last-shard-pad narrow-int16 off-by-one-copy replay-per-rank replay-dp-under-ep chunk-row0"
OUTFILE=""
while (($#)); do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --budget) BUDGET="$2"; shift 2 ;;
    --faults) FAULTS="$2"; shift 2 ;;
    --out) OUTFILE="$2"; shift 2 ;;
    *) echo "mutator-vs-bytes.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
BIN="$BUILD/fuzz/libfuzzer"
for t in r3fuzz_differential_fuzzer r3fuzz_differential_bytes_fuzzer; do
  [[ -x "$BIN/$t" ]] || { echo "mutator-vs-bytes.sh: $BIN/$t missing: build the fuzz preset" >&2; exit 2; }
done
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
# Seeds: the smallest regression cases only (production cases fold into the concrete limits
# arbitrarily); both binaries start from the same files.
mkdir -p "$TMP/seeds"
"$BUILD/fuzz/cli/r3fuzz" seed --to-binary --out "$TMP/seeds" "$ROOT/corpus/regression" >/dev/null

# One run: prints "<seconds> <execs> <found 0|1>".
one_run() {
  local bin="$1" fault="$2" seed="$3" dir="$TMP/run"
  rm -rf "$dir" && mkdir -p "$dir/corpus"
  cp "$TMP"/seeds/*.bin "$dir/corpus/"
  local start end
  start=$(date +%s.%N)
  set +e
  R3FUZZ_FAULT="$fault" "$bin" -seed="$seed" -max_total_time="$BUDGET" -print_final_stats=1 \
    -artifact_prefix="$dir/" "$dir/corpus" >"$dir/log" 2>&1
  local rc=$?
  set -e
  end=$(date +%s.%N)
  local execs
  execs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$dir/log" | grep -oE '[0-9]+$' | tail -1)
  [[ -z "$execs" ]] && execs=$(grep -oE '^#[0-9]+' "$dir/log" | tail -1 | tr -d '#')
  if grep -q "R3FUZZ_FAULT=.*no implementation" "$dir/log"; then echo "error"; return; fi
  echo "$(echo "$end - $start" | bc) ${execs:-0} $((rc != 0))"
}

median() { sort -g | awk '{a[NR]=$1} END {if (NR==0) {print "nan"} else if (NR%2) {print a[(NR+1)/2]} else {print (a[NR/2]+a[NR/2+1])/2}}'; }

report() {
  printf '%-20s %14s %14s %14s %14s %8s\n' fault "struct s" "bytes s" "struct execs" "bytes execs" "ratio"
  for fault in $FAULTS; do
    declare -A secs=() execs=() found=()
    for kind in struct bytes; do
      local bin="$BIN/r3fuzz_differential_fuzzer"
      [[ $kind == bytes ]] && bin="$BIN/r3fuzz_differential_bytes_fuzzer"
      : >"$TMP/$kind.s"; : >"$TMP/$kind.e"; found[$kind]=0
      for ((r = 1; r <= RUNS; r++)); do
        read -r s e f < <(one_run "$bin" "$fault" "$r")
        [[ "$s" == error ]] && { echo "mutator-vs-bytes.sh: fault $fault is not injectable" >&2; continue 3; }
        echo "$s" >>"$TMP/$kind.s"; echo "$e" >>"$TMP/$kind.e"
        found[$kind]=$((found[$kind] + f))
      done
      secs[$kind]=$(median <"$TMP/$kind.s"); execs[$kind]=$(median <"$TMP/$kind.e")
    done
    local mark_s="" mark_b=""
    ((found[struct] * 2 <= RUNS)) && mark_s=">"
    ((found[bytes] * 2 <= RUNS)) && mark_b=">"
    printf '%-20s %14s %14s %14s %14s %8s\n' "$fault" "$mark_s${secs[struct]}" "$mark_b${secs[bytes]}" \
      "${execs[struct]}" "${execs[bytes]}" "$(echo "scale=1; ${execs[bytes]} / (${execs[struct]} + 1)" | bc)x"
  done
  echo "medians of $RUNS runs, budget ${BUDGET}s per run; '>' marks a median that did not find the fault"
}

if [[ -n "$OUTFILE" ]]; then report | tee "$OUTFILE"; else report; fi
