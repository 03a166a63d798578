#!/usr/bin/env bash
# Campaign benchmark: symbolic cases/s on production layouts, concrete cases/s on small ones,
# and the time and cases until vllm-pre-50874 is first caught. Each figure is the median of
# RUNS runs (with min and max), printed beside its target as a ratio, and written to
# docs/BENCHMARKS.md with the machine and the date. Runs pinned to one core when taskset exists.
#
#   bench/campaign-bench.sh [R3FUZZ_BINARY]      (default: build/default/fuzz/cli/r3fuzz)
#
# One function per section, so other benchmarks can be added beside these (issue 9).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="${1:-$ROOT/build/default/fuzz/cli/r3fuzz}"
RUNS="${RUNS:-5}"
OUT_MD="${OUT_MD:-$ROOT/docs/BENCHMARKS.md}"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

[[ -x "$BIN" ]] || { echo "campaign-bench: $BIN is not built (cmake --build --preset default)" >&2; exit 2; }
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c 0)

# run_json ARGS...: one campaign with timing on one worker pinned to one core, its JSON on stdout
# (exit 1 = failures found is fine).
run_json() {
  local rc=0
  "${PIN[@]}" "$BIN" run --jobs 1 --json --timing --no-shrink --out "$TMP/out" "$@" >"$TMP/run.json" || rc=$?
  ((rc <= 1)) || { echo "campaign-bench: r3fuzz run $* exited $rc" >&2; exit 2; }
  cat "$TMP/run.json"
}

# field EXPR: evaluates a Python expression on the JSON document read from stdin (as `doc`).
field() { python3 -c "import json,sys; doc=json.load(sys.stdin); print($1)"; }

# stats VALUES...: "median min max" of the values.
stats() { python3 -c "import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print(statistics.median(v), min(v), max(v))" "$@"; }

ROWS=()  # markdown table rows: figure | median | min | max | target | ratio
add_row() {  # add_row NAME UNIT TARGET HIGHER_IS_BETTER(1/0) VALUES...
  local name="$1" unit="$2" target="$3" higher="$4"; shift 4
  read -r med lo hi < <(stats "$@")
  local ratio="n/a"
  [[ "$target" != "-" ]] && ratio="$(python3 -c "m,t=$med,$target; print(f'{(m/t if $higher else t/m) if m else 0:.3f}')")"
  printf '%-48s median %12.4f %s (min %.4f, max %.4f)  target %s  ratio %s\n' "$name" "$med" "$unit" "$lo" "$hi" "$target" "$ratio"
  ROWS+=("| $name | $(printf '%.4f' "$med") $unit | $(printf '%.4f' "$lo") | $(printf '%.4f' "$hi") | $target $unit | $ratio |")
}

section_symbolic_rate() {
  local values=()
  for ((i = 1; i <= RUNS; i++)); do
    values+=("$(run_json --mode symbolic --size production --cases 20000 --seed "$i" | field "doc['timing']['cases_per_second']")")
  done
  add_row "symbolic cases/s, production layouts (D<=64)" "cases/s" 500000 1 "${values[@]}"
}

section_concrete_rate() {
  local values=()
  for ((i = 1; i <= RUNS; i++)); do
    values+=("$(run_json --mode concrete --size small --cases 20000 --seed "$i" | field "doc['timing']['cases_per_second']")")
  done
  add_row "concrete cases/s, small layouts (M<=64)" "cases/s" 20000 1 "${values[@]}"
}

# run_json_jobs JOBS ARGS...: the same on JOBS workers, unpinned (every core).
run_json_jobs() {
  local jobs="$1" rc=0
  shift
  "$BIN" run --jobs "$jobs" --json --timing --no-shrink --out "$TMP/out" "$@" >"$TMP/run.json" || rc=$?
  ((rc <= 1)) || { echo "campaign-bench: r3fuzz run --jobs $jobs $* exited $rc" >&2; exit 2; }
  cat "$TMP/run.json"
}

# side_by_side N ARGS...: N separate `--jobs 1` campaigns at once (seeds 1..N), the sum of their
# cases/s: what the machine gives N independent processes, the ceiling for N workers.
side_by_side() {
  local n="$1" k pids=() total=0
  shift
  for ((k = 1; k <= n; k++)); do
    ("$BIN" run --jobs 1 --json --timing --no-shrink --out "$TMP/out$k" --seed "$k" "$@" >"$TMP/side$k.json" || true) &
    pids+=($!)
  done
  wait "${pids[@]}"
  for ((k = 1; k <= n; k++)); do
    total="$(python3 -c "print($total + $(field "doc['timing']['cases_per_second']" <"$TMP/side$k.json"))")"
  done
  echo "$total"
}

# --jobs 1 and --jobs N side by side (N = every core), and the speed-up, against a 1.8x target on
# 2 cores. Time-bounded runs, so each worker judges its share of the same wall-clock budget. Beside
# them, N separate --jobs 1 processes at once: their sum over one process alone is the machine's
# ceiling for N workers (shared caches, memory bandwidth, whatever the host gives the cores).
section_jobs_scaling() {
  local cores
  cores="$(nproc)"
  for mode in symbolic concrete; do
    local size=production one=() many=() speedup=() ceiling=()
    [[ $mode == concrete ]] && size=small
    for ((i = 1; i <= RUNS; i++)); do
      local a b c
      a="$(run_json_jobs 1 --mode "$mode" --size "$size" --time 3 --seed "$i" | field "doc['timing']['cases_per_second']")"
      b="$(run_json_jobs "$cores" --mode "$mode" --size "$size" --time 3 --seed "$i" | field "doc['timing']['cases_per_second']")"
      c="$(side_by_side "$cores" --mode "$mode" --size "$size" --time 3)"
      one+=("$a")
      many+=("$b")
      speedup+=("$(python3 -c "print($b / $a if $a else 0)")")
      ceiling+=("$(python3 -c "print($c / $a if $a else 0)")")
    done
    add_row "$mode cases/s, --jobs 1 (unpinned)" "cases/s" - 1 "${one[@]}"
    add_row "$mode cases/s, --jobs $cores" "cases/s" - 1 "${many[@]}"
    add_row "$mode speed-up, --jobs $cores over --jobs 1" "x" 1.8 1 "${speedup[@]}"
    add_row "$mode ceiling: $cores separate --jobs 1 processes at once, over one alone" "x" - 1 "${ceiling[@]}"
  done
}

section_time_to_catch() {
  local secs=() cases=()
  for ((i = 1; i <= RUNS; i++)); do
    local doc
    doc="$(run_json --impl vllm-pre-50874 --mode mixed --cases 2000 --seed "$i")"
    secs+=("$(field "doc['timing']['first_failure_seconds']['vllm-pre-50874']" <<<"$doc")")
    cases+=("$(field "doc['timing']['first_failure_cases']['vllm-pre-50874']" <<<"$doc")")
  done
  add_row "seconds until vllm-pre-50874 is caught" "s" 0.1 0 "${secs[@]}"
  add_row "cases until vllm-pre-50874 is caught" "cases" - 0 "${cases[@]}"
}

# An engine's rows: the same figures under its profile (SGLang: docs/layout-contract.md section 11;
# vllm-ascend: docs/ascend-contract.md), judging its default implementations, and the time until
# MODEL alone is caught. section_engine PROFILE MODEL LABEL.
section_engine() {
  local profile="$1" model="$2" label="$3"
  local sym=() con=() secs=() cases=()
  for ((i = 1; i <= RUNS; i++)); do
    sym+=("$(run_json --profile "$profile" --mode symbolic --size production --cases 20000 --seed "$i" | field "doc['timing']['cases_per_second']")")
    con+=("$(run_json --profile "$profile" --mode concrete --size small --cases 20000 --seed "$i" | field "doc['timing']['cases_per_second']")")
    local doc
    doc="$(run_json --profile "$profile" --impl "$model" --mode mixed --cases 2000 --seed "$i")"
    secs+=("$(field "doc['timing']['first_failure_seconds']['$model']" <<<"$doc")")
    cases+=("$(field "doc['timing']['first_failure_cases']['$model']" <<<"$doc")")
  done
  add_row "$label symbolic cases/s, production layouts (D<=64)" "cases/s" - 1 "${sym[@]}"
  add_row "$label concrete cases/s, small layouts" "cases/s" - 1 "${con[@]}"
  add_row "seconds until $model is caught" "s" - 0 "${secs[@]}"
  add_row "cases until $model is caught" "cases" - 0 "${cases[@]}"
}

write_markdown() {
  mkdir -p "$(dirname "$OUT_MD")"
  {
    echo "# Benchmarks"
    echo
    echo "Generated by \`bench/campaign-bench.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'); do not edit by hand."
    echo
    echo "Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores," \
         "$(uname -sm); runs pinned to one core: ${PIN[*]:-no (taskset missing)}; $RUNS runs per figure."
    echo
    echo "## Campaigns"
    echo
    echo "Each campaign judges both default implementations (vllm-50874, vllm-pre-50874) per case, except the"
    echo "time-to-catch runs, which judge vllm-pre-50874 alone; the SGLang rows run under --profile sglang and"
    echo "judge its defaults (sglang, sglang-miles), and their time-to-catch runs judge sglang alone; the"
    echo "vllm-ascend rows likewise under --profile ascend (ascend, ascend-0.26; ascend alone). Every figure runs one worker (--jobs 1) pinned"
    echo "to one core, except the --jobs rows, which run unpinned for 3 s each. Ratio: against the target,"
    echo "above 1 is better."
    echo
    echo "| figure | median | min | max | target | ratio |"
    echo "|---|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
    echo
    echo "What bounds symbolic mode (valgrind --tool=callgrind on 20,000 production cases, seed 7, both default"
    echo "implementations, minus a 1-case run): about 33k instructions a case, down from 41k (58k, and 254k before"
    echo "the first rework). A judgement is made of rank classes (a lead and the TP ranks that share its outcome,"
    echo "fuzz/oracle/verdict.hpp), so members cost nothing; a step's ranks receive their tensors by formula"
    echo "(Call::view), materialised only for the consumers that read rows; the checks every rank of a call makes"
    echo "alike run once per call (CapturePolicy::check_shared); SGLang's window counts are summed once per step."
    echo "Since the last report: a one-call step whose single copy lands the rank's own tokens at row 0 passes"
    echo "at sight, without a row image (judge_symbolic.cpp, passes_at_sight: anything else is simulated), and a"
    echo "worker derives each case into the storage of its last step (derive_step_into: 13 of the 23 allocations"
    echo "a case made are gone). Left, per case: judging 21.9k for the two implementations over 25.3 classes"
    echo "(deciding 5.9k, simulating 6.4k, starting a class 1.7k, the reported rank's words 0.8k, conclude 0.7k,"
    echo "the loop around them the rest), derive_step 5.5k (build_batch_call 3.1k), generation 2.5k, merging"
    echo "1.9k, malloc and free and the outcome's glue 1.3k. What bounds it is one decision and one"
    echo "simulation per class: the campaign runs at about 0.25 of the trivial target (section 2, per pair;"
    echo "0.24 to 0.27 in the runs made when this was written), so 0.4 means a case in 0.25/0.4 of its 33.1k"
    echo "instructions, about 20.7k. The case's pipeline without judging (deriving, generating, merging, the"
    echo "rest) takes 11.2k, which leaves 9.5k to judge the 25.3 classes of its two implementations; deciding"
    echo "(232 instructions a class) and simulating (253) alone take 12.3k, before starting and filling the"
    echo "classes (about 385 each, 9.6k). A production case has a class per DP rank at least (12.6 a"
    echo "judgement on average), each with its own tokens; fewer would need classes spanning DP ranks with equal"
    echo "counts, which read different rows of the gathered tensor and so need a symbolic row identity per class"
    echo "(not built: the per-rank words, rows and exhaust's comparison all read a rank's own rows)."
    echo
    echo "What bounds --jobs: the ceiling rows run separate --jobs 1 processes at once, which share nothing but"
    echo "the machine; their sum over one process alone is what N cores give this work here, and a speed-up"
    echo "cannot pass it. Inside one process the workers take small blocks of cases from a shared counter"
    echo "(work stealing, fuzz/campaign/case_pipeline.hpp) with no barrier between rounds, and whichever worker"
    echo "owns the next block in case order merges it (shrinking and file writes included), so the report is"
    echo "the same for every N. What remains between the speed-up and the ceiling is the heap the workers'"
    echo "threads share and the merge itself, which runs on one worker at a time."
  } >"$OUT_MD"
  echo "campaign-bench: wrote $OUT_MD"
}

section_symbolic_rate
section_concrete_rate
section_time_to_catch
section_engine sglang sglang SGLang
section_engine ascend ascend vllm-ascend
section_jobs_scaling
write_markdown
