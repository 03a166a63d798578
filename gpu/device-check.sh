#!/usr/bin/env bash
# One prepared check of the GPU pipeline on a lent GPU machine (an H200, CUDA 13):
#   1. builds the CUDA targets (cuda preset);
#   2. runs the GPU tests: host-backend tests, then the CUDA backends against the host
#      backend element by element (virtual ranks; NCCL when two or more GPUs are visible);
#   3. a 60-second differential campaign of gpu (CUDA, virtual ranks) against the reference,
#      then the same cases on gpu (host), comparing the unique failures of the two;
#   4. capture-kernel bandwidth against cudaMemcpy device-to-device on the same bytes.
# Usage: gpu/device-check.sh [LOG_DIR]   (default: $OUT, else ./device-check-logs)
# Environment: R3FUZZ_BUILD_DIR (default build/cuda); R3FUZZ_SKIP_BUILD=1 reuses a built tree.
# Every step has a timeout, capped so the whole script ends within 8 minutes; a step that
# fails or times out is reported and the script goes on. Exit 0 when every step passed.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

LOG_DIR="${1:-${OUT:-$PWD/device-check-logs}}"
mkdir -p "$LOG_DIR" || { echo "device-check: cannot create $LOG_DIR" >&2; exit 2; }
LOG_DIR="$(cd "$LOG_DIR" && pwd)"
BUILD="${R3FUZZ_BUILD_DIR:-build/cuda}"
START=$SECONDS
DEADLINE=470  # seconds; 8 minutes less a margin for the summary
FAILED=()
SUMMARY="$LOG_DIR/summary.txt"
: >"$SUMMARY"

say() { echo "device-check: $*" | tee -a "$SUMMARY"; }

# step NAME SECONDS COMMAND...: runs COMMAND with its output in LOG_DIR/NAME.log.
step() {
  local name="$1" limit="$2"; shift 2
  local left=$((DEADLINE - (SECONDS - START)))
  ((limit > left)) && limit=$left
  if ((limit < 5)); then
    say "$name: SKIPPED (out of time)"; FAILED+=("$name"); return 1
  fi
  local t0=$SECONDS
  timeout --kill-after=10 "$limit" "$@" >"$LOG_DIR/$name.log" 2>&1
  local rc=$?
  if ((rc == 0)); then
    say "$name: ok ($((SECONDS - t0)) s)"
  elif ((rc == 124 || rc == 137)); then
    say "$name: TIMEOUT after ${limit} s (log: $name.log)"; FAILED+=("$name")
  else
    say "$name: FAILED rc=$rc ($((SECONDS - t0)) s; log: $name.log)"; FAILED+=("$name")
  fi
  return $rc
}

say "logs in $LOG_DIR; $(date -u +%Y-%m-%dT%H:%M:%SZ); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
nvidia-smi >"$LOG_DIR/nvidia-smi.log" 2>&1 || true
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
say "visible GPUs: ${GPUS:-0}"
NVCC="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
say "nvcc: $("$NVCC" --version 2>/dev/null | tail -1)"

JOBS=$(nproc 2>/dev/null || echo 4)
if [[ "${R3FUZZ_SKIP_BUILD:-0}" == 1 ]]; then
  say "configure, build: skipped (R3FUZZ_SKIP_BUILD=1, using $BUILD)"
else
  step configure 90 cmake --preset cuda -B "$BUILD" -DCMAKE_CUDA_COMPILER="$NVCC"
  TARGETS=(gpu_tests gpu_cuda_tests r3fuzz_gpu_bench)
  grep -q '^r3fuzz:' <(ninja -C "$BUILD" -t targets all 2>/dev/null) && TARGETS+=(r3fuzz)
  step build 240 cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]}"
fi

# GPU tests. The NCCL test skips itself below two GPUs; say why here too.
step tests-host 60 "$BUILD/tests/gpu/gpu_tests"
step tests-cuda 90 "$BUILD/tests/gpu/cuda/gpu_cuda_tests" --gtest_filter='CudaRunner.Virtual*'
# A skipped CUDA test passes in gtest's eyes: put its reason in the summary.
grep -A1 ': Skipped$' "$LOG_DIR/tests-cuda.log" 2>/dev/null | grep -v -e ': Skipped$' -e '^--$' |
  sed 's/^/device-check: tests-cuda: SKIPPED: /' | tee -a "$SUMMARY"
if ((${GPUS:-0} >= 2)); then
  step tests-nccl 90 "$BUILD/tests/gpu/cuda/gpu_cuda_tests" --gtest_filter='CudaRunner.Nccl*'
else
  say "tests-nccl: skipped: nccl needs 2 GPUs, found ${GPUS:-0}"
fi

# Differential campaign, written against `r3fuzz run --impl gpu --backend B`.
R3FUZZ="$BUILD/fuzz/cli/r3fuzz"
if [[ ! -x "$R3FUZZ" ]]; then
  say "campaign: skipped: $R3FUZZ was not built (the r3fuzz command is missing)"
elif ! "$R3FUZZ" run --help 2>/dev/null | grep -q -- '--backend'; then
  say "campaign: skipped: 'r3fuzz run' has no --backend flag yet (gpu not registered in this checkout)"
else
  # stdout (the --json report) and stderr go to separate files. Exit 1 means failures found,
  # which vllm-50874's known bugs guarantee: only 2 and above fail the step.
  step campaign-cuda 90 bash -c '"$0" run --impl gpu --backend virtual --seed 1 --time 60 --mode concrete \
      --no-shrink --out "$1/campaign-cuda" --json >"$1/campaign-cuda.json"; (($? <= 1))' "$R3FUZZ" "$LOG_DIR"
  CASES=$(python3 -c 'import json,sys
try: print(int(json.load(open(sys.argv[1]))["cases"]))
except Exception: print(0)' "$LOG_DIR/campaign-cuda.json")
  if [[ "${CASES:-0}" -gt 0 ]]; then
    say "campaign-cuda: ${CASES} cases in 60 s"
    step campaign-host 90 bash -c '"$0" run --impl gpu --backend host --seed 1 --cases "$2" --mode concrete \
        --no-shrink --out "$1/campaign-host" --json >"$1/campaign-host.json"; (($? <= 1))' "$R3FUZZ" "$LOG_DIR" "$CASES"
    step campaign-compare 10 python3 - "$LOG_DIR/campaign-cuda.json" "$LOG_DIR/campaign-host.json" <<'PY'
import json, sys
def signatures(path):
    found = json.load(open(path))["failures"]
    return sorted((f["signature"], f["severity"], f["occurrences"]) for f in found)
a, b = signatures(sys.argv[1]), signatures(sys.argv[2])
print("cuda:", len(a), "unique failures; host:", len(b))
if a != b:
    print("DIFFERENT:", sorted(set(a) ^ set(b)))
    sys.exit(1)
PY
  else
    say "campaign-cuda: no case count in campaign-cuda.json; host comparison skipped"
  fi
fi

# Capture-kernel bandwidth against cudaMemcpy device-to-device on the same bytes.
step bench 60 "$BUILD/gpu/bench/r3fuzz_gpu_bench"
[[ -f "$LOG_DIR/bench.log" ]] && sed 's/^/  /' "$LOG_DIR/bench.log" | tee -a "$SUMMARY"

say "finished in $((SECONDS - START)) s; ${#FAILED[@]} step(s) failed${FAILED[*]:+: ${FAILED[*]}}"
((${#FAILED[@]} == 0))
