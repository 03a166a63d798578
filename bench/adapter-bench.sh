#!/usr/bin/env bash
# Engine adapters: cases/s of `r3fuzz run` over the example adapter (examples/python/
# vllm_50874_adapter.py) with each exchange side by side, and over the torch adapter when torch
# is importable. Each figure is the median of RUNS runs (seeds 1..RUNS) with min and max, and its
# ratio to the unbatched exchange with rows replies (the protocol before batching).
#
#   bench/adapter-bench.sh [--build DIR] [--runs N] [--cases N] [--out FILE]
#
# Workload: --mode concrete --size small (M <= 64, the concrete benchmark's layouts), no shrinking,
# pinned to one core (taskset, when it exists) with the adapter on the same core. Prints the
# table; --out writes it as markdown (bench/run-benchmarks.sh puts it in docs/BENCHMARKS.md).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build/default"
RUNS=5
CASES=3000
OUTFILE=""
while (($#)); do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --cases) CASES="$2"; shift 2 ;;
    --out) OUTFILE="$2"; shift 2 ;;
    *) echo "adapter-bench.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ && "$CASES" =~ ^[1-9][0-9]*$ ]] || { echo "adapter-bench.sh: --runs and --cases need positive integers" >&2; exit 2; }
R3FUZZ="$BUILD/fuzz/cli/r3fuzz"
[[ -x "$R3FUZZ" ]] || { echo "adapter-bench.sh: $R3FUZZ is not built (cmake --build --preset default --target r3fuzz)" >&2; exit 2; }
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c 0)
EXAMPLE="python3 $ROOT/examples/python/vllm_50874_adapter.py"
TORCH="python3 $ROOT/examples/python/torch_capture_adapter.py --engine engine_capture_sample:RoutedExpertsCapturer"

# rate SEED COMMAND: cases/s of one campaign over external:COMMAND (exit 1, findings, is fine).
rate() {
  local rc=0
  "${PIN[@]}" "$R3FUZZ" run --json --timing --no-shrink --out "$TMP/out" --mode concrete --size small \
    --cases "$CASES" --seed "$1" --impl "external:$2" >"$TMP/run.json" 2>"$TMP/run.err" || rc=$?
  ((rc <= 1)) || { echo "adapter-bench.sh: r3fuzz run over '$2' exited $rc: $(tail -1 "$TMP/run.err")" >&2; return 1; }
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["timing"]["cases_per_second"])' "$TMP/run.json"
}
stats() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print("%.1f %.1f %.1f" % (statistics.median(v), min(v), max(v)))' "$@"; }
ratio() { python3 -c 'import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print("%.2f" % (a/b) if b else "n/a")' "$1" "$2"; }

NAMES=("unbatched, rows replies (before batching)" "unbatched, copies replies" "batched, copies replies (the default)" "batched, rows replies")
COMMANDS=("$EXAMPLE --no-batch --rows" "$EXAMPLE --no-batch" "$EXAMPLE" "$EXAMPLE --rows")
if python3 -c 'import torch' >/dev/null 2>&1; then
  NAMES+=("torch adapter, batched (engine_capture_sample, vLLM before #50874)")
  COMMANDS+=("$TORCH")
  TORCH_NOTE=""
else
  TORCH_NOTE="The torch adapter: **not measured**: torch is not importable by python3 here."
fi

MEDIANS=() ROWS=()
for i in "${!NAMES[@]}"; do
  values=()
  for ((s = 1; s <= RUNS; s++)); do values+=("$(rate "$s" "${COMMANDS[$i]}")") || exit 1; done
  read -r med lo hi < <(stats "${values[@]}")
  MEDIANS+=("$med")
  ROWS+=("${NAMES[$i]}|$med|$lo|$hi")
done
base="${MEDIANS[0]}"
{
  echo "$RUNS runs of $CASES cases each (\`r3fuzz run --mode concrete --size small --no-shrink\`, seeds 1..$RUNS), one core."
  echo "Ratios are to the first row, the exchange before batching (one round trip per call per rank, every row's values)."
  echo
  echo "| exchange | cases/s median | min | max | ratio to unbatched rows |"
  echo "|---|---|---|---|---|"
  for i in "${!ROWS[@]}"; do
    IFS='|' read -r name med lo hi <<<"${ROWS[$i]}"
    echo "| $name | $med | $lo | $hi | **$(ratio "$med" "$base")** |"
  done
  [[ -n "$TORCH_NOTE" ]] && { echo; echo "$TORCH_NOTE"; }
} >"$TMP/table.md"
cat "$TMP/table.md"
[[ -n "$OUTFILE" ]] && cp "$TMP/table.md" "$OUTFILE"
exit 0
