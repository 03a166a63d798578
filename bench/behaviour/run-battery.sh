#!/usr/bin/env bash
# run-battery.sh BINARY OUTDIR
#
# Runs a deterministic battery of r3fuzz commands with BINARY, from this repository (override with
# R3_REPO) as the working directory, and writes one file per command into
# OUTDIR: OUTDIR/<name>.txt holds the command line, its stdout, its stderr, its exit code and, for
# commands that write files, a listing and the contents of what they wrote.
#
# Everything the tool prints that legitimately varies between two binaries or two runs is
# normalised:
#   - the BINARY path (replay:/export: lines, usage lines)        -> r3fuzz
#   - the scratch folder of this run (relative and absolute)       -> $TMP
#   - wall-clock figures: exhaust's "Ns, N cases/s", shrink's "N s", mutants' time columns
#     (text, markdown) and "seconds" fields (JSON), JUnit time="..." -> T
#
# Every path handed to the tool is relative to the repository, so every path it prints is relative.
# The scratch folder lives under $CMP_ROOT/tmp (default build/behaviour/tmp) and is removed at the end
# (KEEP_TMP=1 keeps it). Nothing is written into the repository.
#
# Environment: R3_REPO (default: this repository), CMP_ROOT (default build/behaviour in it), CMD_TIMEOUT (seconds per
# command, default 300), KEEP_TMP.
set -u

if [ $# -ne 2 ]; then
  echo "usage: $0 BINARY OUTDIR" >&2
  exit 2
fi

HERE=$(cd "$(dirname "$0")" && pwd)
abspath() { case "$1" in /*) printf '%s\n' "$1" ;; *) printf '%s/%s\n' "$(pwd)" "$1" ;; esac; }

BIN=$(abspath "$1")
OUT=$(abspath "$2")
REPO=${R3_REPO:-$(cd "$HERE/../.." && pwd)}
CMP=${CMP_ROOT:-$REPO/build/behaviour}
INPUTS=$CMP/inputs
CMD_TIMEOUT=${CMD_TIMEOUT:-300}

[ -x "$BIN" ] || { echo "run-battery: $BIN is not an executable" >&2; exit 2; }
[ -d "$REPO/corpus" ] || { echo "run-battery: $REPO has no corpus/" >&2; exit 2; }

# OUTDIR: created, or emptied when it is an earlier battery's output (marker file), else refused.
if [ -e "$OUT" ]; then
  if [ -n "$(ls -A "$OUT" 2>/dev/null)" ] && [ ! -e "$OUT/.battery-output" ]; then
    echo "run-battery: $OUT exists, is not empty and is not a battery output; refusing to clear it" >&2
    exit 2
  fi
  find "$OUT" -mindepth 1 -delete
fi
mkdir -p "$OUT" "$CMP/tmp" "$INPUTS"
: > "$OUT/.battery-output"

TMP_ABS=$(mktemp -d "$CMP/tmp/battery.XXXXXX")
TMP=$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$TMP_ABS" "$REPO")
cleanup() { [ "${KEEP_TMP:-0}" = 1 ] || rm -rf "$TMP_ABS"; }
trap cleanup EXIT
INP=$(python3 -c 'import os,sys; print(os.path.relpath(sys.argv[1], sys.argv[2]))' "$INPUTS" "$REPO")

# per-command wall times, beside OUTDIR (not inside it: they vary from run to run)
TIMINGS="$OUT.timings"
: > "$TIMINGS"

export LC_ALL=C TZ=UTC
for v in $(env | sed -n 's/^\(R3FUZZ_[A-Za-z0-9_]*\)=.*/\1/p'); do unset "$v"; done
export NORM_BIN="$BIN" NORM_TMP_REL="$TMP" NORM_TMP_ABS="$TMP_ABS"

cd "$REPO" || exit 2

# ---------------------------------------------------------------------------------------------
# normalisation (norm.pl beside this script)

NORM="$HERE/norm.pl"

# t NAME ARGS...            run BINARY ARGS, record into OUT/NAME.txt
# Set SQUEEZE=1 in front of t to squeeze table padding (mutants' text table, whose column widths
# follow its time cells).
# After t, `files PATH...` appends the listing and contents of what the command wrote.

CUR=""
NCMD=0
t() {
  local name=$1; shift
  CUR="$OUT/$name.txt"
  if [ -e "$CUR" ]; then echo "run-battery: duplicate command name $name" >&2; exit 3; fi
  NCMD=$((NCMD + 1))
  local so="$TMP_ABS/.stdout" se="$TMP_ABS/.stderr" rc t0 t1
  t0=$EPOCHREALTIME
  timeout "$CMD_TIMEOUT" "$BIN" "$@" > "$so" 2> "$se" < /dev/null
  rc=$?
  t1=$EPOCHREALTIME
  printf '%s %s\n' "$name" "$(( ${t1/./} / 1000 - ${t0/./} / 1000 ))ms" >> "$TIMINGS"
  local sq=()
  [ "${SQUEEZE:-0}" = 1 ] && sq=(--squeeze)
  {
    printf '$ r3fuzz'
    printf ' %q' "$@"
    printf '\n--- stdout\n'
    cat "$so"
    printf '\n--- stderr\n'
    cat "$se"
    printf '\n--- exit code: %s\n' "$rc"
  } | perl "$NORM" "${sq[@]}" > "$CUR"
}

# files PATH...: append every file under each PATH (sorted), with its contents (hex for binary)
files() {
  perl "$NORM" --files "$@" >> "$CUR"
}

# ---------------------------------------------------------------------------------------------
# crafted inputs (idempotent)

write_inputs() {
  cat > "$INPUTS/bad-engine.json" <<'EOF'
{
  "format": "r3fuzz-case/1",
  "engine": "trtllm",
  "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false},
  "model": {"layers": 1, "top_k": 1, "experts": 1},
  "max_num_tokens": 2,
  "tokens": [2, 2],
  "padding": "dp_max",
  "idle_dummy": true,
  "path": "local",
  "monolithic": false,
  "layer": 0
}
EOF
  cat > "$INPUTS/bad-profile.json" <<'EOF'
{
  "format": "r3fuzz-case/1",
  "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false},
  "model": {"layers": 1, "top_k": 1, "experts": 1},
  "max_num_tokens": 2,
  "tokens": [2, 2],
  "padding": "dp_max",
  "idle_dummy": true,
  "path": "local",
  "monolithic": false,
  "layer": 0,
  "profile": "tensorrt"
}
EOF
  cat > "$INPUTS/bad-format.json" <<'EOF'
{
  "format": "r3fuzz-case/9",
  "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false},
  "model": {"layers": 1, "top_k": 1, "experts": 1},
  "max_num_tokens": 1,
  "tokens": [1],
  "padding": "none",
  "path": "single",
  "monolithic": false,
  "layer": 0
}
EOF
  cat > "$INPUTS/bad-field.json" <<'EOF'
{
  "format": "r3fuzz-case/1",
  "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false},
  "model": {"layers": 1, "top_k": 1, "experts": 1},
  "max_num_tokens": 2,
  "tokens": [2, 2, 2],
  "padding": "dp_max",
  "idle_dummy": true,
  "path": "local",
  "monolithic": false,
  "layer": 5
}
EOF
  cat > "$INPUTS/bad-duplicate-key.json" <<'EOF'
{"format": "r3fuzz-case/1", "format": "r3fuzz-case/1", "topology": {"dp": 1, "tp": 1, "ep": false, "sp": false}, "model": {"layers": 1, "top_k": 1, "experts": 1}, "max_num_tokens": 1, "tokens": [1], "padding": "none", "path": "single", "monolithic": false, "layer": 0}
EOF
  printf '{"format": "r3fuzz-case/1", "topology": {"dp": 1,' > "$INPUTS/bad-truncated.json"
  : > "$INPUTS/empty.json"
  # binary cases: byte 0 is the version (1 vLLM, 2/3 SGLang): 9 is unknown
  printf '\x09\x01\x01\x01\x01\x01\x01' > "$INPUTS/bad-version.bin"
  printf '\x01' > "$INPUTS/truncated-v1.bin"
  : > "$INPUTS/empty.bin"
  cat > "$INPUTS/bad-engine-deployment.json" <<'EOF'
{"format": "r3fuzz-deployment/1", "engine": "trtllm", "name": "x", "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false}, "model": {"layers": 4, "top_k": 2, "experts": 64}, "max_num_tokens": 16, "path": "gathered", "traffic": {"prefill_lengths": [4]}}
EOF
  # the vLLM deployment of docs/FUZZING.md, "Seeding from production"
  cat > "$INPUTS/vllm-qwen3-235b-tp4-dp2.deployment.json" <<'EOF'
{
  "format": "r3fuzz-deployment/1",
  "name": "qwen3-235b-tp4-dp2",
  "note": "Qwen3-235B-A22B (94 layers, 128 experts, top-8), TP4 DP2 EP, all-gather backend",
  "topology": {"dp": 2, "tp": 4, "ep": true, "sp": true},
  "model": {"layers": 94, "top_k": 8, "experts": 128},
  "max_num_tokens": 8192,
  "path": "sp_shard",
  "monolithic": false,
  "cudagraph": "vllm-default",
  "traffic": {"decode_batches": [1, 64], "prefill_lengths": [8192, 8191]}
}
EOF
  cat > "$INPUTS/vllm-dp2.deployment.json" <<'EOF'
{"format": "r3fuzz-deployment/1", "name": "dp2-gathered", "note": "a small vLLM DP2 deployment for metadata logs", "topology": {"dp": 2, "tp": 1, "ep": true, "sp": false}, "model": {"layers": 4, "top_k": 2, "experts": 64}, "max_num_tokens": 16, "path": "gathered", "monolithic": false, "cudagraph": [1, 2, 4, 8], "traffic": {"decode_batches": [1, 4], "prefill_lengths": [4]}}
EOF
  cat > "$INPUTS/vllm-dp2.log.jsonl" <<'EOF'
{"step": 1, "num_tokens_across_dp": [3, 1], "local_sizes": null}
{"step": 2, "num_tokens_across_dp": [4, 4], "local_sizes": [4, 4]}
{"step": 3, "num_tokens_across_dp": [2, 0]}
{"step": 4, "num_tokens_across_dp": [5, 3], "local_sizes": [2, 2, 2, 2, 1, 1, 1, 1]}
EOF
}
write_inputs

# ---------------------------------------------------------------------------------------------
# the battery

START=$(date +%s.%N)

# --- help and version
t version --version
t help --help
t help-none
t help-unknown-subcommand frobnicate
for s in run replay explain shrink export mutants exhaust seed; do
  t "help-$s" "$s" --help
done

# --- run --json: profiles x modes x implementation sets
VLLM_IMPLS="vllm-50874 vllm-pre-50874 r3-fixed gpu gpu:r3-fixed gpu:vllm-50874"
SGLANG_IMPLS="sglang sglang-miles sglang-fixed gpu:sglang gpu:sglang-fixed"
impls_of() {
  case $1 in
    vllm|vllm-legacy) echo "$VLLM_IMPLS" ;;
    sglang|sglang-miles) echo "$SGLANG_IMPLS" ;;
    any) echo "$VLLM_IMPLS $SGLANG_IMPLS" ;;
  esac
}
seed_of() { case $1 in vllm) echo 11 ;; vllm-legacy) echo 12 ;; sglang) echo 13 ;; sglang-miles) echo 14 ;; any) echo 15 ;; esac; }
slug() { printf '%s' "$1" | tr ':+/' '___'; }

for p in vllm vllm-legacy sglang sglang-miles any; do
  s=$(seed_of "$p")
  for m in symbolic mixed; do
    t "run-json-$p-$m-default" run --json --profile "$p" --mode "$m" --seed "$s" --cases 2000 --jobs 1 --out "$TMP/run-$p-$m-default"
    all=()
    for i in $(impls_of "$p"); do
      all+=(--impl "$i")
      t "run-json-$p-$m-$(slug "$i")" run --json --profile "$p" --mode "$m" --seed "$s" --cases 1000 --jobs 1 --impl "$i" --out "$TMP/run-$p-$m-$(slug "$i")"
    done
    t "run-json-$p-$m-all" run --json --profile "$p" --mode "$m" --seed "$s" --cases 2000 --jobs 1 "${all[@]}" --out "$TMP/run-$p-$m-all"
  done
done
# the SGLang campaign of docs/USAGE.md, other seeds
for s in 1 2; do
  t "run-json-sglang-usage-seed$s" run --json --profile sglang --seed "$s" --cases 3000 --jobs 1 --impl sglang --impl sglang-miles --impl sglang-fixed --impl gpu:sglang --out "$TMP/run-sglang-usage-$s"
done
for s in 1 2; do
  t "run-json-vllm-readme-seed$s" run --json --profile vllm --seed "$s" --cases 3000 --jobs 1 --impl vllm-50874 --impl vllm-pre-50874 --impl r3-fixed --impl gpu --out "$TMP/run-vllm-readme-$s"
done

# --- runs whose output folders are recorded (text and JSON reports)
t run-findings-vllm-text run --profile vllm --seed 1 --cases 3000 --jobs 1 --impl vllm-50874 --impl vllm-pre-50874 --impl r3-fixed --impl gpu --out "$TMP/findings-vllm"
files "$TMP/findings-vllm"
t run-findings-vllm-json run --json --profile vllm --seed 1 --cases 3000 --jobs 1 --impl vllm-50874 --impl vllm-pre-50874 --impl r3-fixed --impl gpu --out "$TMP/findings-vllm-json"
files "$TMP/findings-vllm-json"
t run-findings-sglang-text run --profile sglang --seed 1 --cases 3000 --jobs 1 --impl sglang --impl sglang-miles --impl sglang-fixed --impl gpu:sglang --out "$TMP/findings-sglang"
files "$TMP/findings-sglang"
t run-findings-any-json-junit run --json --profile any --seed 3 --cases 2000 --jobs 1 --out "$TMP/findings-any" --junit "$TMP/findings-any.xml"
files "$TMP/findings-any" "$TMP/findings-any.xml"
t run-findings-vllm-legacy-noshrink run --profile vllm-legacy --seed 4 --cases 1000 --jobs 1 --no-shrink --out "$TMP/findings-legacy-noshrink"
files "$TMP/findings-legacy-noshrink"

# --- other run flags
t run-text-vllm-default run --profile vllm --seed 5 --cases 1000 --jobs 1 --out "$TMP/run-text-vllm"
t run-text-sglang-default run --profile sglang --seed 5 --cases 1000 --jobs 1 --out "$TMP/run-text-sglang"
t run-json-vllm-concrete run --json --profile vllm --mode concrete --seed 6 --cases 1000 --jobs 1 --out "$TMP/run-vllm-concrete"
t run-json-sglang-concrete run --json --profile sglang --mode concrete --seed 6 --cases 1000 --jobs 1 --out "$TMP/run-sglang-concrete"
t run-json-any-concrete run --json --profile any --mode concrete --seed 6 --cases 1000 --jobs 1 --out "$TMP/run-any-concrete"
t run-json-vllm-jobs2 run --json --profile vllm --seed 11 --cases 2000 --jobs 2 --out "$TMP/run-vllm-jobs2"
t run-json-vllm-strict run --json --profile vllm --seed 7 --cases 1000 --jobs 1 --strict --out "$TMP/run-vllm-strict"
t run-json-r3fixed-strict run --json --profile vllm --seed 7 --cases 1000 --jobs 1 --strict --impl r3-fixed --out "$TMP/run-r3fixed-strict"
t run-json-vllm-size-tiny run --json --profile vllm --seed 8 --cases 1000 --jobs 1 --size tiny --out "$TMP/run-size-tiny"
t run-json-vllm-size-small-production run --json --profile vllm --seed 8 --cases 1000 --jobs 1 --size small --size production --out "$TMP/run-size-sp"
t run-json-any-metadata-overrides run --json --profile any --seed 9 --cases 1000 --jobs 1 --metadata-overrides --out "$TMP/run-mo"
t run-json-vllm-wide-experts run --json --profile vllm --seed 9 --cases 1000 --jobs 1 --wide-experts --impl r3-fixed --impl gpu --out "$TMP/run-wide"
t run-json-fault-no-trim run --json --profile vllm --seed 10 --cases 1000 --jobs 1 --impl r3-fixed --fault no-trim --out "$TMP/run-fault"
t run-json-impl-plus-fault run --json --profile vllm --seed 10 --cases 1000 --jobs 1 --impl r3-fixed+no-trim --impl gpu:r3-fixed+chunk-row0 --out "$TMP/run-implfault"
t run-json-sglang-fault run --json --profile sglang --seed 10 --cases 1000 --jobs 1 --impl sglang-fixed+tbo-row0 --out "$TMP/run-sglang-fault"
t run-json-gpu-device-offsets run --json --profile vllm --seed 10 --cases 1000 --jobs 1 --impl gpu --selection device-offsets --out "$TMP/run-devoff"
t run-json-gpu-backend-host run --json --profile vllm --seed 10 --cases 1000 --jobs 1 --impl gpu --backend host --out "$TMP/run-host"
t err-run-gpu-backend-virtual run --json --profile vllm --seed 10 --cases 500 --jobs 1 --impl gpu --backend virtual --out "$TMP/run-virtual"
t run-json-one-case run --json --seed 0 --cases 1 --jobs 1 --out "$TMP/run-one"
files "$TMP/run-one"

# --- run errors (exit 2)
t err-run-unknown-profile run --profile tensorrt --cases 10 --out "$TMP/e1"
t err-run-wrong-engine-impl-sglang run --profile sglang --impl r3-fixed --cases 10 --out "$TMP/e2"
t err-run-wrong-engine-impl-vllm run --profile vllm --impl gpu:sglang --cases 10 --out "$TMP/e3"
t err-run-unknown-impl run --impl tensorrt-llm --cases 10 --out "$TMP/e4"
t err-run-unknown-fault run --impl r3-fixed --fault no-such-fault --cases 10 --out "$TMP/e5"
t err-run-old-fault-spelling run --impl gpu+fault:no-trim --cases 10 --out "$TMP/e6"
t err-run-impl-twice run --impl r3-fixed --impl r3-fixed --cases 10 --out "$TMP/e7"
t err-run-impl-two-words run --impl r3-fixed gpu --cases 10 --out "$TMP/e8"
t err-run-negative-seed run --seed -1 --cases 10 --out "$TMP/e9"
t err-run-time-and-cases run --time 1 --cases 10 --out "$TMP/e10"
t err-run-zero-cases run --cases 0 --out "$TMP/e11"
t err-run-bad-mode run --mode quantum --cases 10 --out "$TMP/e12"
t err-run-metadata-overrides-vllm run --metadata-overrides --profile vllm --cases 10 --out "$TMP/e13"
t err-run-bad-size run --size huge --cases 10 --out "$TMP/e14"
t err-run-bad-selection run --impl gpu --selection random --cases 10 --out "$TMP/e15"
t err-run-junit-unwritable run --cases 10 --out "$TMP/e16" --junit "$TMP/no/such/dir/j.xml"

# --- replay: every corpus file, directories, implementations
while IFS= read -r f; do
  n=$(basename "$(dirname "$f")")-$(basename "$f" .json)
  t "replay-$n" replay "$f"
done < <(find corpus -type f | LC_ALL=C sort)
t replay-dir-regression replay corpus/regression
t replay-dir-production replay corpus/production
t err-replay-dir-corpus-not-recursive replay corpus
t replay-all-corpus-files-one-batch replay $(find corpus -type f -name '*.json' | LC_ALL=C sort)
t replay-regression-symbolic replay --mode symbolic corpus/regression
t replay-regression-concrete replay --mode concrete corpus/regression
t replay-vllm-regression-r3fixed replay --impl r3-fixed corpus/regression/vllm-*.json
t replay-vllm-regression-all-impls replay --impl vllm-50874 --impl vllm-pre-50874 --impl r3-fixed --impl gpu --impl gpu:r3-fixed corpus/regression/vllm-*.json
t replay-sglang-regression-all-impls replay --impl sglang --impl sglang-miles --impl sglang-fixed --impl gpu:sglang --impl gpu:sglang-fixed corpus/regression/sglang-*.json
t replay-vllm-production-all-impls replay --impl vllm-50874 --impl vllm-pre-50874 --impl r3-fixed corpus/production/[!s]*.json
t replay-sglang-production-all-impls replay --impl sglang --impl sglang-miles --impl sglang-fixed corpus/production/sglang-*.json
t replay-vllm-production-symbolic replay --mode symbolic --impl vllm-50874 --impl vllm-pre-50874 --impl r3-fixed corpus/production/[!s]*.json
t err-replay-vllm-production-gpu-too-large replay --impl r3-fixed --impl gpu corpus/production/[!s]*.json
t err-replay-sglang-production-gpu-too-large replay --impl sglang --impl gpu:sglang corpus/production/sglang-*.json
t err-replay-r3fixed-mixed-engines replay --impl r3-fixed corpus/regression corpus/production
t replay-regression-vllm-fault replay --impl r3-fixed+no-trim --impl gpu+off-by-one-copy corpus/regression/vllm-*.json
t replay-regression-sglang-fault replay --impl sglang-fixed+tbo-row0 --impl gpu:sglang-fixed+off-by-one-copy corpus/regression/sglang-*.json
t replay-regression-junit replay corpus/regression --junit "$TMP/replay.xml"
files "$TMP/replay.xml"
t replay-production-junit replay --impl r3-fixed corpus/production/[!s]*.json --junit "$TMP/replay-prod.xml"
files "$TMP/replay-prod.xml"

# --- explain: every corpus entry, text and JSON
while IFS= read -r f; do
  n=$(basename "$(dirname "$f")")-$(basename "$f" .json)
  t "explain-$n" explain "$f"
  t "explain-json-$n" explain --json "$f"
done < <(find corpus -type f | LC_ALL=C sort)

# --- shrink (each into its own folder; bounded by judgements, not time)
SHR=(--max-judgements 20000 --max-seconds 3600)
t shrink-regression-vllm-microbatch shrink corpus/regression/vllm-50874-wrong-rows-microbatch-overwrite.json --out "$TMP/shrink1" "${SHR[@]}"
files "$TMP/shrink1"
t shrink-regression-vllm-pre-capacity shrink corpus/regression/vllm-pre-50874-capacity-gathered-monolithic.json --out "$TMP/shrink2" "${SHR[@]}"
files "$TMP/shrink2"
t shrink-regression-sglang-tbo shrink corpus/regression/sglang-wrong_rows-tbo-offsets.json --out "$TMP/shrink3" "${SHR[@]}"
files "$TMP/shrink3"
t shrink-regression-sglang-window shrink corpus/regression/sglang-wrong_rows-window-token-bucket.json --out "$TMP/shrink4" "${SHR[@]}"
files "$TMP/shrink4"
t shrink-production-vllm-pre shrink corpus/production/deepseek-v3-dp16-ep-two-nodes-prefill.json --impl vllm-pre-50874 --out "$TMP/shrink5" "${SHR[@]}"
files "$TMP/shrink5"
t shrink-production-sglang shrink corpus/production/sglang-deepseek-v3-dp2-mtp-verify.json --impl sglang --out "$TMP/shrink6" "${SHR[@]}"
files "$TMP/shrink6"
t shrink-production-path-change shrink corpus/production/qwen3-235b-a22b-tp4-dp2-ep-sp-prefill.json --impl vllm-pre-50874 --allow-path-change --out "$TMP/shrink7" "${SHR[@]}"
files "$TMP/shrink7"
t shrink-fault shrink corpus/production/mixtral-8x7b-tp8-no-ep-prefill.json --impl r3-fixed --fault off-by-one-copy --out "$TMP/shrink8" "${SHR[@]}"
files "$TMP/shrink8"
t shrink-passing shrink corpus/production/kimi-k2-dp32-ep-decode.json --impl vllm-50874 --out "$TMP/shrink9" "${SHR[@]}"
files "$TMP/shrink9"
t shrink-bounded-judgements shrink corpus/production/deepseek-v3-dp16-ep-two-nodes-prefill.json --impl vllm-pre-50874 --out "$TMP/shrink10" --max-judgements 3 --max-seconds 3600
files "$TMP/shrink10"

# --- seed: deployments, metadata logs, conversions
t seed-sglang-example seed --deployment examples/deployments/sglang-deepseek-r1-dp8-deepep.json --out "$TMP/seed-sglang"
files "$TMP/seed-sglang"
t seed-sglang-example-miles seed --deployment examples/deployments/sglang-deepseek-r1-dp8-deepep.json --profile sglang-miles --out "$TMP/seed-sglang-miles"
files "$TMP/seed-sglang-miles"
t seed-sglang-example-any seed --deployment examples/deployments/sglang-deepseek-r1-dp8-deepep.json --profile any --out "$TMP/seed-sglang-any"
t err-seed-sglang-example-vllm-profile seed --deployment examples/deployments/sglang-deepseek-r1-dp8-deepep.json --profile vllm --out "$TMP/seed-sglang-vllm"
t err-seed-sglang-with-log seed --deployment examples/deployments/sglang-deepseek-r1-dp8-deepep.json --log "$INP/vllm-dp2.log.jsonl" --out "$TMP/seed-sglang-log"
t seed-vllm-docs-deployment seed --deployment "$INP/vllm-qwen3-235b-tp4-dp2.deployment.json" --out "$TMP/seed-vllm"
files "$TMP/seed-vllm"
t seed-vllm-docs-deployment-legacy seed --deployment "$INP/vllm-qwen3-235b-tp4-dp2.deployment.json" --profile vllm-legacy --out "$TMP/seed-vllm-legacy"
t seed-vllm-docs-deployment-twice seed --deployment "$INP/vllm-qwen3-235b-tp4-dp2.deployment.json" --out "$TMP/seed-vllm"
t seed-vllm-dp2-log seed --deployment "$INP/vllm-dp2.deployment.json" --log "$INP/vllm-dp2.log.jsonl" --out "$TMP/seed-vllm-log"
files "$TMP/seed-vllm-log"
t seed-vllm-dp2-log-any seed --deployment "$INP/vllm-dp2.deployment.json" --log "$INP/vllm-dp2.log.jsonl" --profile any --out "$TMP/seed-vllm-log-any"
files "$TMP/seed-vllm-log-any"
t seed-libfuzzer-deployment-log seed --deployment fuzz/libfuzzer/seeds/deployment-d5.json --log fuzz/libfuzzer/seeds/log.jsonl --out "$TMP/seed-d5"
files "$TMP/seed-d5"
t err-seed-bad-engine-deployment seed --deployment "$INP/bad-engine-deployment.json" --out "$TMP/seed-bad"
t err-seed-no-out seed --deployment "$INP/vllm-dp2.deployment.json"
t seed-to-binary seed --to-binary --out "$TMP/bin" corpus/regression corpus/production
files "$TMP/bin"
t seed-to-json seed --to-json --out "$TMP/json" "$TMP/bin"
files "$TMP/json"
t replay-roundtrip-json replay "$TMP/json"
t shrink-from-bytes shrink --from-bytes "$TMP/bin/vllm-50874-wrong-rows-microbatch-overwrite.bin" --impl vllm-50874 --out "$TMP/shrink-bytes" "${SHR[@]}"
files "$TMP/shrink-bytes"
t shrink-from-bytes-sglang shrink --from-bytes "$TMP/bin/sglang-capacity-buffer-rows.bin" --impl sglang --out "$TMP/shrink-bytes-sglang" "${SHR[@]}"
files "$TMP/shrink-bytes-sglang"

# --- export --pytest
t err-export-no-such-folder export corpus/regression/vllm-50874-latent-one-row-sp-shard.json --pytest --out "$TMP/export/test_x.py"
mkdir -p "$TMP_ABS/export"
for f in corpus/regression/vllm-50874-wrong-rows-microbatch-overwrite.json \
         corpus/regression/vllm-pre-50874-spurious-reject-padded-sp-shards.json \
         corpus/production/vllm-50874-gb200-tp2-dp2.json \
         corpus/regression/sglang-wrong_rows-tbo-offsets.json \
         corpus/regression/sglang-capacity-buffer-rows.json \
         corpus/production/sglang-deepseek-v3-dp2-mtp-verify.json; do
  n=$(basename "$(dirname "$f")")-$(basename "$f" .json)
  t "export-$n" export "$f" --pytest --out "$TMP/export/test_$n.py"
  files "$TMP/export/test_$n.py"
done
t export-stdout export corpus/regression/vllm-50874-spurious-reject-dp-chunking.json --pytest
t export-engine export corpus/regression/vllm-50874-latent-one-row-sp-shard.json --pytest --engine mymod.capture:MyCapturer --out "$TMP/export/test_engine.py"
files "$TMP/export/test_engine.py"
t export-engine-sglang export corpus/regression/sglang-wrong_rows-gather-scattered.json --pytest --engine mymod.capture:MyCapturer --out "$TMP/export/test_engine_sglang.py"
files "$TMP/export/test_engine_sglang.py"
t err-export-no-pytest export corpus/regression/vllm-50874-latent-one-row-sp-shard.json

# --- mutants (small bounds)
SQUEEZE=1 t mutants-vllm mutants --profile vllm --seeds 1 --max-cases 2000 --jobs 1
t mutants-vllm-json mutants --profile vllm --seeds 1 --max-cases 2000 --jobs 1 --json
SQUEEZE=1 t mutants-sglang mutants --profile sglang --seeds 1 --max-cases 2000 --jobs 1 --markdown "$TMP/mutants-sglang.md"
files "$TMP/mutants-sglang.md"
t mutants-sglang-json mutants --profile sglang --seeds 1 --max-cases 2000 --jobs 1 --json
SQUEEZE=1 t mutants-r3fixed-two-faults mutants --profile vllm --seeds 3 --first-seed 5 --max-cases 2000 --jobs 1 --carrier r3-fixed --fault no-trim --fault chunk-row0
SQUEEZE=1 t mutants-noshrink mutants --profile vllm --seeds 1 --max-cases 500 --jobs 1 --carrier gpu --no-shrink
t err-mutants-unknown-carrier mutants --carrier tensorrt --seeds 1 --max-cases 10
t err-mutants-unknown-fault mutants --fault no-such-fault --seeds 1 --max-cases 10

# --- exhaust (small bounds)
EXV=(--max-dp 2 --max-tp 2 --max-tokens 4 --max-m 4 --jobs 1)
EXS=(--max-dp 2 --max-tp 2 --max-tokens 3 --max-m 3 --jobs 1)
t exhaust-vllm-default exhaust --profile vllm "${EXV[@]}"
t exhaust-vllm-50874 exhaust --profile vllm --impl vllm-50874 "${EXV[@]}"
t exhaust-vllm-pre-50874 exhaust --profile vllm --impl vllm-pre-50874 "${EXV[@]}"
t exhaust-vllm-against exhaust --profile vllm --impl vllm-50874 --against vllm-pre-50874 "${EXV[@]}"
t exhaust-vllm-gpu-against-r3fixed exhaust --profile vllm --impl gpu --against r3-fixed "${EXV[@]}"
t exhaust-vllm-fault exhaust --profile vllm --fault no-trim "${EXV[@]}"
t exhaust-vllm-concrete exhaust --profile vllm --mode concrete --max-dp 2 --max-tp 2 --max-tokens 3 --max-m 3 --jobs 1
t exhaust-vllm-mixed exhaust --profile vllm --mode mixed --impl vllm-50874 "${EXV[@]}"
t exhaust-vllm-legacy exhaust --profile vllm-legacy --impl vllm-50874 "${EXV[@]}"
t exhaust-vllm-legacy-r3fixed exhaust --profile vllm-legacy "${EXV[@]}"
t exhaust-vllm-layers-topk exhaust --profile vllm --layers 3 --top-k 2 --experts 8 --max-dp 2 --max-tp 2 --max-tokens 3 --max-m 3 --jobs 1
t exhaust-sglang-default exhaust --profile sglang "${EXS[@]}"
t exhaust-sglang exhaust --profile sglang --impl sglang "${EXS[@]}"
t exhaust-sglang-miles exhaust --profile sglang-miles --impl sglang-miles "${EXS[@]}"
t exhaust-sglang-miles-default exhaust --profile sglang-miles "${EXS[@]}"
t exhaust-sglang-against exhaust --profile sglang --impl sglang-miles --against sglang "${EXS[@]}"
t exhaust-sglang-fault exhaust --profile sglang --fault tbo-row0 "${EXS[@]}"
t exhaust-sglang-gpu exhaust --profile sglang --impl gpu:sglang-fixed "${EXS[@]}"
t exhaust-any-r3fixed exhaust --profile any --max-dp 2 --max-tp 2 --max-tokens 3 --max-m 3 --jobs 1
t err-exhaust-out-of-range exhaust --max-dp 64 --max-tp 4 --max-tokens 4 --max-m 4 --jobs 1
t err-exhaust-too-large exhaust --max-dp 8 --max-tp 8 --max-tokens 32 --max-m 32 --jobs 1
t err-exhaust-too-large-sglang exhaust --profile sglang --max-dp 8 --max-tp 8 --max-tokens 32 --max-m 32 --jobs 1
t err-exhaust-wrong-engine exhaust --profile sglang --impl r3-fixed "${EXS[@]}"
t err-exhaust-mode-and-concrete exhaust --mode symbolic --concrete "${EXV[@]}"

# --- input errors: crafted files
for f in bad-engine bad-profile bad-format bad-field bad-duplicate-key bad-truncated empty; do
  t "err-replay-$f" replay "$INP/$f.json"
  t "err-explain-$f" explain "$INP/$f.json"
  t "err-explain-json-$f" explain --json "$INP/$f.json"
done
t err-shrink-bad-engine shrink "$INP/bad-engine.json" --out "$TMP/e-shrink"
t err-export-bad-engine export "$INP/bad-engine.json" --pytest --out "$TMP/e-export.py"
t err-replay-bad-engine-among-good replay corpus/regression/vllm-50874-wrong-rows-microbatch-overwrite.json "$INP/bad-engine.json" corpus/regression/sglang-capacity-buffer-rows.json
t err-replay-missing-file replay "$INP/no-such-file.json"
t err-explain-missing-file explain "$INP/no-such-file.json"
for f in bad-version truncated-v1 empty; do
  t "err-seed-to-json-$f" seed --to-json --out "$TMP/e-json-$f" "$INP/$f.bin"
  t "err-shrink-from-bytes-$f" shrink --from-bytes "$INP/$f.bin" --impl r3-fixed --out "$TMP/e-bytes-$f"
done
t err-replay-unknown-impl replay --impl tensorrt-llm corpus/regression
t err-replay-no-args replay
t err-explain-no-args explain
t err-shrink-unknown-profile shrink corpus/regression/vllm-50874-wrong-rows-microbatch-overwrite.json --profile tensorrt --out "$TMP/e-sp"
t err-exhaust-unknown-profile exhaust --profile tensorrt
t err-mutants-unknown-profile mutants --profile tensorrt
t err-seed-unknown-profile seed --deployment "$INP/vllm-dp2.deployment.json" --profile tensorrt --out "$TMP/e-seed"

END=$(date +%s.%N)

# every path in the outputs must be relative: flag any absolute path into the repository or the
# scratch root that survived (a path that differs between two checkouts would differ in the diff)
{
  echo "battery: $NCMD commands"
  echo "absolute paths left in outputs:"
  grep -lF -e "$REPO/" -e "$CMP/" "$OUT"/*.txt 2>/dev/null | sed "s|^$OUT/||" || true
} > "$OUT/.battery-summary"
python3 - "$START" "$END" "$NCMD" "$OUT" <<'EOF' >&2
import sys
s, e, n, out = float(sys.argv[1]), float(sys.argv[2]), sys.argv[3], sys.argv[4]
print(f"run-battery: {n} commands recorded in {out} ({e - s:.1f} s wall)")
EOF
exit 0
