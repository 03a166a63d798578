#!/usr/bin/env bash
# The one benchmark report: measures r3fuzz side by side in one run and writes
# docs/BENCHMARKS.md with the machine, the date and ratios. Run on demand, never in CI.
#
#   bench/run-benchmarks.sh [--build DIR] [--fuzz-build DIR] [--runs N] [--quick] [--out FILE] [--sections LIST]
#
# Sections (each a figure as the median of RUNS runs, with min and max):
#   1. campaign: symbolic and concrete cases/s, time to catch vllm-pre-50874 (bench/campaign-bench.sh)
#   2. libFuzzer exec/s: the differential target against a trivial target built the same way, and
#      the symbolic campaign beside them, each run followed by a trivial one (ratios per pair)
#   3. structure-aware mutator against plain byte mutation, time to kill each fault (bench/mutator-vs-bytes.sh)
#   4. the shrinker against libFuzzer -minimize_crash (bench/shrink-bench.sh)
#   5. exhaustive search cases/s, one job and every core
#   6. the fault-kill matrix (r3fuzz mutants)
#   7. engine adapters: the example adapter unbatched and batched, the torch adapter (bench/adapter-bench.sh)
#   8. symbolic judging cost against the layout: time per case at D in {8, 64, 512} x T in {1, 8},
#      vLLM and SGLang (bench/judge_scaling.cpp)
#  10. traces: traces/s and steps/s of a trace campaign per engine, the time to each lifecycle finding
#      of the default trace campaign, and the judge's cost against trace length and against a
#      one-step case (bench/trace_scaling.cpp)
#   9. the targets of issue 21 as ratios from this run (scaling; the campaign and the differential
#      target against the trivial target, per pair from section 2; --jobs against its ceiling)
# A section whose prerequisites are missing (no fuzz build, a section script not written yet)
# says why and is marked "not measured"; the others still run. Default run: under ~10 minutes.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD="$ROOT/build/default"
FUZZ_BUILD="$ROOT/build/fuzz"
RUNS=5
QUICK=0
OUT="$ROOT/docs/BENCHMARKS.md"
ALL_SECTIONS="campaign scaling libfuzzer mutator shrink exhaust mutants adapter traces targets"
SECTION_LIST="$ALL_SECTIONS"
while (($#)); do
  case "$1" in
    --build) BUILD="$(realpath "$2")"; shift 2 ;;
    --fuzz-build) FUZZ_BUILD="$(realpath "$2")"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --quick) QUICK=1; shift ;;
    --out) OUT="$2"; shift 2 ;;
    --sections) SECTION_LIST="${2//,/ }"; shift 2 ;;
    -h|--help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "run-benchmarks.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
for s in $SECTION_LIST; do
  [[ " $ALL_SECTIONS " == *" $s "* ]] || { echo "run-benchmarks.sh: unknown section '$s' (sections: $ALL_SECTIONS)" >&2; exit 2; }
done
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "run-benchmarks.sh: --runs needs a positive integer, got '$RUNS'" >&2; exit 2; }
R3FUZZ="$BUILD/fuzz/cli/r3fuzz"
TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT
CORES="$(nproc 2>/dev/null || echo 1)"
log() { echo "run-benchmarks: $*" >&2; }

# stats VALUES...: "median min max".
stats() { python3 -c 'import statistics,sys; v=[float(x) for x in sys.argv[1:]]; print("%.6g %.6g %.6g" % (statistics.median(v), min(v), max(v)))' "$@"; }
ratio() { python3 -c 'import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); print("%.3g" % (a/b) if b else "n/a")' "$1" "$2"; }

SECTIONS="$TMP/sections.md"
# One core for the single-process rates (as bench/campaign-bench.sh pins its runs), when taskset exists.
PIN=()
command -v taskset >/dev/null && PIN=(taskset -c 0)
: >"$SECTIONS"
section() { printf '\n## %s\n\n' "$1" >>"$SECTIONS"; }
not_measured() { echo "**not measured**: $1" >>"$SECTIONS"; log "$2: not measured: $1"; }

# --- 1. campaign ------------------------------------------------------------------------
campaign_section() {
  section "Campaign throughput (symbolic and concrete cases/s, time to catch vllm-pre-50874)"
  [[ -x "$R3FUZZ" ]] || { not_measured "$R3FUZZ is not built (cmake --build $BUILD)" campaign; return; }
  [[ -x "$ROOT/bench/campaign-bench.sh" ]] || { not_measured "bench/campaign-bench.sh does not exist yet" campaign; return; }
  if RUNS="$RUNS" OUT_MD="$TMP/campaign.md" "$ROOT/bench/campaign-bench.sh" "$R3FUZZ" >"$TMP/campaign.log" 2>&1; then
    # Its own header (title, machine, date) is ours already: keep from its first table on.
    sed -n '/^|/,$p' "$TMP/campaign.md" >>"$SECTIONS"
  else
    not_measured "bench/campaign-bench.sh failed: $(tail -1 "$TMP/campaign.log")" campaign
  fi
}

# --- 8. symbolic judging cost against the layout ----------------------------------------------
scaling_section() {
  section "Symbolic judging cost against the layout (time per case against D and T)"
  local bin="$BUILD/bench/r3fuzz_judge_scaling" cases=200 repeat=5
  ((QUICK)) && { cases=100; repeat=3; }
  [[ -x "$bin" ]] || { not_measured "$bin is not built (cmake --build $BUILD --target r3fuzz_judge_scaling)" scaling; return; }
  for ((i = 1; i <= RUNS; i++)); do
    "$bin" --cases "$cases" --repeat "$repeat" >"$TMP/scaling.$i" 2>"$TMP/scaling.log" ||
      { not_measured "r3fuzz_judge_scaling failed: $(tail -1 "$TMP/scaling.log")" scaling; return; }
  done
  python3 - "$TMP" "$RUNS" "$cases" "$repeat" >>"$SECTIONS" <<'PY'
import statistics, sys
tmp, runs, cases, repeat = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
points = {}
for i in range(1, runs + 1):
    for line in open(f"{tmp}/scaling.{i}"):
        engine, d, t, us, _ = line.split("\t")
        points.setdefault((engine, int(d), int(t)), []).append(float(us))
med = {k: statistics.median(v) for k, v in points.items()}
print(f"Microseconds a case (deriving its step and judging it with both default implementations of its")
print(f"engine: vllm-50874 and r3-fixed, sglang and sglang-fixed), the best of {repeat} passes over {cases} fixed-seed")
print(f"production-shaped cases (bench/judge_scaling.cpp says which), median of {runs} runs.")
print()
print("| engine | T | D = 8 | D = 64 | D = 512 | D 512 / D 64 (target <= 10) |")
print("|---|---|---|---|---|---|")
for engine in ("vllm", "sglang"):
    for t in (1, 8):
        row = [med[(engine, d, t)] for d in (8, 64, 512)]
        print(f"| {engine} | {t} | {row[0]:.2f} | {row[1]:.2f} | {row[2]:.2f} | {row[2] / row[1]:.2f} |")
print()
for engine in ("vllm", "sglang"):
    r = med[(engine, 512, 8)] / med[(engine, 512, 1)]
    print(f"- {engine}: time(T = 8) / time(T = 1) at D = 512: **{r:.2f}** (target <= 1.5)")
with open(f"{tmp}/targets.scaling", "w") as out:
    for engine in ("vllm", "sglang"):
        for t in (1, 8):
            out.write(f"{engine} D512/D64 at T={t}\t{med[(engine, 512, t)] / med[(engine, 64, t)]:.3g}\t<= 10\n")
        out.write(f"{engine} T8/T1 at D=512\t{med[(engine, 512, 8)] / med[(engine, 512, 1)]:.3g}\t<= 1.5\n")
PY
}

# --- 10. traces --------------------------------------------------------------------------------
traces_section() {
  section "Traces (judging whole serving traces: r3fuzz run --traces)"
  local bin="$BUILD/bench/r3fuzz_trace_scaling" seconds=10
  ((QUICK)) && seconds=5
  [[ -x "$R3FUZZ" ]] || { not_measured "$R3FUZZ is not built (cmake --build $BUILD)" traces; return; }
  [[ -x "$bin" ]] || { not_measured "$bin is not built (cmake --build $BUILD --target r3fuzz_trace_scaling)" traces; return; }
  for profile in vllm sglang trtllm; do
    for ((i = 1; i <= RUNS; i++)); do
      "${PIN[@]}" "$R3FUZZ" run --traces --profile "$profile" --time "$seconds" --jobs 1 --no-shrink --out "$TMP/traces-out.$profile.$i" --timing \
        --json >"$TMP/traces.$profile.$i" 2>"$TMP/traces.log"
      (($? <= 1)) || { not_measured "r3fuzz run --traces failed: $(tail -1 "$TMP/traces.log")" traces; return; }
    done
  done
  for ((i = 1; i <= RUNS; i++)); do
    "${PIN[@]}" "$bin" --repeat 3 >"$TMP/trace_scaling.$i" 2>"$TMP/traces.log" ||
      { not_measured "r3fuzz_trace_scaling failed: $(tail -1 "$TMP/traces.log")" traces; return; }
    # The cost of choosing completion orders of the copies to host (docs/TRACES.md, "Copies").
    "${PIN[@]}" "$bin" --draws 500 --repeat 3 >"$TMP/trace_copies.$i" 2>"$TMP/traces.log" ||
      { not_measured "r3fuzz_trace_scaling --draws failed: $(tail -1 "$TMP/traces.log")" traces; return; }
  done
  python3 - "$TMP" "$RUNS" "$seconds" >>"$SECTIONS" <<'PY'
import json, statistics, sys
tmp, runs, seconds = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def stat(values):
    return f"{statistics.median(values):.0f} ({min(values):.0f} to {max(values):.0f})"
print(f"A {seconds}-s trace campaign of each engine's default implementations (its released lifecycle versions),")
print(f"one job, no shrinking, median of {runs} runs (min to max).")
print()
print("| profile | traces/s | steps/s | lifecycle findings | seconds to each finding (median) |")
print("|---|---|---|---|---|")
for profile in ("vllm", "sglang", "trtllm"):
    reports = [json.load(open(f"{tmp}/traces.{profile}.{i}")) for i in range(1, runs + 1)]
    tps = [r["traces"] / r["elapsed_seconds"] for r in reports]
    sps = [r["steps"] / r["elapsed_seconds"] for r in reports]
    firsts = {}
    for r in reports:
        for f in r["findings"]:
            key = f"{f['verdict']} ({f['root_cause'] or ', '.join(f['implementations'])})"
            firsts.setdefault(key, []).append(f["first_seconds"])
    shown = "; ".join(f"{k}: {statistics.median(v):.3f}" for k, v in sorted(firsts.items())) or "none"
    print(f"| {profile} | {stat(tps)} | {stat(sps)} | {len(firsts)} | {shown} |")
print()
rows = {}
for i in range(1, runs + 1):
    for line in open(f"{tmp}/trace_scaling.{i}"):
        impl, small, large, ratio, case, per = line.split("\t")
        rows.setdefault(impl, []).append((float(small), float(large), float(ratio), float(case), float(per)))
print("Judging cost (bench/trace_scaling.cpp: one steady shape, one extend and about three decodes a step),")
print("microseconds a step, median of the runs:")
print()
print("| implementation | 1,000 steps | 10,000 steps | t(10,000) / t(1,000) (target <= 12) | one-step case | trace step / case (target <= 3) |")
print("|---|---|---|---|---|---|")
with open(f"{tmp}/targets.traces", "w") as out:
    for impl, values in rows.items():
        med = [statistics.median(v[k] for v in values) for k in range(5)]
        print(f"| {impl} | {med[0]:.2f} | {med[1]:.2f} | {med[2]:.2f} | {med[3]:.2f} | {med[4]:.2f} |")
        out.write(f"{impl} t(10000 steps)/t(1000 steps)\t{med[2]:.3g}\t<= 12\n")
        out.write(f"{impl} trace step / one-step case\t{med[4]:.3g}\t<= 3\n")
copies = {}
for i in range(1, runs + 1):
    for line in open(f"{tmp}/trace_copies.{i}"):
        impl, in_order, with_orders, late = line.split("\t")
        copies.setdefault(impl, []).append((float(in_order), float(with_orders), float(late)))
print()
print("Choosing completion orders of the copies to host (bench/trace_scaling.cpp --draws 500: the traces drawn for")
print("each fixed model's profile, validated and judged with their drawn copies record and with every copy in")
print("order), traces/s, median of the runs:")
print()
print("| implementation | in order | with drawn completion orders | traces with a late copy |")
print("|---|---|---|---|")
for impl, values in copies.items():
    med = [statistics.median(v[k] for v in values) for k in range(3)]
    print(f"| {impl} | {med[0]:.0f} | {med[1]:.0f} | {med[2]:.2f} |")
PY
}

# --- 9. the targets of issue 21 ----------------------------------------------------------------
# Each as a ratio from this run: the campaign's symbolic rate against the trivial libFuzzer
# target's exec/s, the differential target against it, --jobs against its ceiling, and the
# scaling ratios of section 8.
targets_section() {
  section "Targets of issue 21, from this run"
  python3 - "$TMP" >>"$SECTIONS" <<'PY'
import os, re, sys
tmp = sys.argv[1]
rows = []
def read(name):
    path = os.path.join(tmp, name)
    return open(path).read() if os.path.exists(path) else None
campaign = read("campaign.md") or ""
# Both throughput ratios are medians of per-pair ratios (section 2): each campaign and differential
# run is followed at once by a trivial one, pinned alike.
fuzz = read("targets.libfuzzer")
differential = symbolic = None
if fuzz:
    differential, symbolic = (float(x) for x in fuzz.split())
def add(name, value, target, ok):
    rows.append((name, "not measured" if value is None else f"{value:.3g}", target, "n/a" if value is None else ("met" if ok(value) else "not met")))
add("symbolic campaign cases/s / trivial target exec/s", symbolic, ">= 0.4", lambda v: v >= 0.4)
add("differential target exec/s / trivial target exec/s", differential, ">= 0.015", lambda v: v >= 0.015)
for mode in ("symbolic", "concrete"):
    speed = [l for l in campaign.splitlines() if l.startswith(f"| {mode} speed-up, --jobs")]
    ceiling = [l for l in campaign.splitlines() if l.startswith(f"| {mode} ceiling:")]
    value = None
    if speed and ceiling:
        value = float(speed[0].split("|")[2].split()[0]) / float(ceiling[0].split("|")[2].split()[0])
    add(f"{mode} --jobs speed-up / ceiling", value, ">= 0.9", lambda v: v >= 0.9)
for line in ((read("targets.scaling") or "") + (read("targets.traces") or "")).splitlines():
    name, value, target = line.split("\t")
    bound = float(target.split()[-1])
    add(name, float(value), target, lambda v, b=bound: v <= b)
print("| target | this run | wanted | |")
print("|---|---|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
PY
}

# --- 2. libFuzzer exec/s -----------------------------------------------------------------
# execs_per_second TARGET SECONDS SEED: one run from an empty corpus; prints its exec/s (from
# -print_final_stats) and the distinct inputs it judged per second (the differential target's
# exit line; "-" for a target without one).
# campaign_cases_per_second SECS SEED: the symbolic campaign's rate on production layouts (both
# default vLLM implementations), one worker pinned as the libFuzzer targets are, for SECS seconds.
campaign_cases_per_second() {
  local rc=0
  "${PIN[@]}" "$R3FUZZ" run --jobs 1 --json --timing --no-shrink --out "$TMP/pair-out" --mode symbolic \
    --size production --time "$1" --seed "$2" >"$TMP/pair.json" || rc=$?
  ((rc <= 1)) || return 1
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['timing']['cases_per_second'])" "$TMP/pair.json"
}

execs_per_second() {
  local dir="$TMP/corpus.$RANDOM"
  mkdir -p "$dir"
  # The implementations that must stay clean: vLLM's models abort on their documented bugs within
  # seconds, and a target that stops early reports no rate. Pinned to the core the campaign
  # benchmark pins its runs to, so the campaign's rate and the trivial target's compare alike.
  R3FUZZ_IMPLS=r3-fixed,gpu:r3-fixed "${PIN[@]}" "$1" -max_total_time="$2" -print_final_stats=1 -seed="$3" "$dir" >"$TMP/fuzz.log" 2>&1
  python3 - "$TMP/fuzz.log" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
execs = re.search(r"stat::number_of_executed_units:\s*(\d+)", text)
secs = re.search(r"Done \d+ runs in (\d+) second", text)
if not execs or not secs or int(secs.group(1)) == 0:
    sys.exit(1)
judged = re.search(r"r3fuzz differential target: (\d+) inputs judged", text)
print(int(execs.group(1)) / int(secs.group(1)), int(judged.group(1)) / int(secs.group(1)) if judged else "-")
PY
}

libfuzzer_section() {
  section "libFuzzer exec/s: differential target against the in-process ceiling"
  local bin="$FUZZ_BUILD/fuzz/libfuzzer" secs=10
  ((QUICK)) && secs=3
  for t in r3fuzz_differential_fuzzer r3fuzz_trivial_fuzzer; do
    [[ -x "$bin/$t" ]] || { not_measured "$bin/$t missing: build the fuzz preset (cmake --preset fuzz && cmake --build --preset fuzz)" libfuzzer; return; }
  done
  # Each differential run is followed at once by a trivial one, and their ratio is taken per
  # pair: on a loaded machine the pair shares the load, where medians taken apart need not. The
  # symbolic campaign (issue 21's other ratio) runs beside them for as long, pinned alike: its
  # 20,000-case runs of the campaign section last a tenth of a second, which one preemption spoils.
  [[ -x "$R3FUZZ" ]] || { not_measured "$R3FUZZ is not built (cmake --build $BUILD)" libfuzzer; return; }
  local diff=() judged=() triv=() pairs=() camp=() camp_pairs=() d j t c _
  for ((i = 1; i <= RUNS; i++)); do
    c="$(campaign_cases_per_second "$secs" "$i")" || { not_measured "the symbolic campaign did not report its rate" libfuzzer; return; }
    read -r d j < <(execs_per_second "$bin/r3fuzz_differential_fuzzer" "$secs" "$i") || { not_measured "the differential target did not report stats" libfuzzer; return; }
    read -r t _ < <(execs_per_second "$bin/r3fuzz_trivial_fuzzer" "$secs" "$i") || { not_measured "the trivial target did not report stats" libfuzzer; return; }
    diff+=("$d"); judged+=("$j"); triv+=("$t"); pairs+=("$(ratio "$d" "$t")")
    camp+=("$c"); camp_pairs+=("$(ratio "$c" "$t")")
  done
  read -r dm dlo dhi < <(stats "${diff[@]}")
  read -r jm jlo jhi < <(stats "${judged[@]}")
  read -r tm tlo thi < <(stats "${triv[@]}")
  read -r pm plo phi < <(stats "${pairs[@]}")
  read -r cm clo chi < <(stats "${camp[@]}")
  read -r qm qlo qhi < <(stats "${camp_pairs[@]}")
  echo "$pm $qm" >"$TMP/targets.libfuzzer"
  {
    echo "$RUNS runs of ${secs}s each, from an empty corpus, one process pinned to one core (as the campaign runs are); the differential target judges"
    echo "r3-fixed (symbolically) and gpu:r3-fixed (the GPU pipeline on its host backend, concretely) beside"
    echo "the reference. An input it has judged before is answered from memory (fuzz/libfuzzer/judged_inputs.hpp):"
    echo "*judged/s* counts the distinct inputs it judged, *exec/s* every input libFuzzer ran. The symbolic"
    echo "campaign of section 1 runs just before each pair, as long and pinned alike, so that its ratio to the"
    echo "trivial target is taken per pair too (its 20,000-case runs above last a tenth of a second)."
    echo
    echo "| target | exec/s median | min | max |"
    echo "|---|---|---|---|"
    echo "| differential (r3fuzz_differential_fuzzer) | $dm | $dlo | $dhi |"
    echo "| differential, distinct inputs judged/s | $jm | $jlo | $jhi |"
    echo "| trivial (r3fuzz_trivial_fuzzer, the ceiling) | $tm | $tlo | $thi |"
    echo "| symbolic campaign, cases/s (r3fuzz run --mode symbolic --size production --jobs 1 --time $secs) | $cm | $clo | $chi |"
    echo
    echo "Ratio differential / trivial: **$(ratio "$dm" "$tm")** of the medians; **$pm** (min $plo, max $phi)"
    echo "taken per back-to-back pair. Target (issue 21): 0.015 of the trivial target."
    echo "Ratio symbolic campaign / trivial, per back-to-back pair: **$qm** (min $qlo, max $qhi). Target (issue 21): 0.4."
    echo
    echo "What bounds it (perf record -g of an 8-s run, seed 2, from an empty corpus, after the changes below):"
    echo "the GPU pipeline on the host 26.8% (its kernels 15.1%, of which filling the guarded buffers 9.5%;"
    echo "planning 8.1%; collecting images 2.7%), the concrete judge of its images 12.1%, libFuzzer's own work on"
    echo "each input 23% (collecting the coverage features 13.3%, the rest of RunOne 10.0%: it grows with the"
    echo "instrumented code, which the trivial target barely has), decoding and checking the input 5.0%, the"
    echo "mutator 3.0%, the symbolic judge of r3-fixed 2.7%, deriving the step 2.0%. Were the GPU pipeline and"
    echo "the concrete judge free, the target would run 1/(1 - 0.389) = 1.64 times as fast, about 0.008 of the"
    echo "trivial target; an earlier run with R3FUZZ_IMPLS=r3-fixed alone (no GPU side) measured 0.0085 to 0.016."
    echo "So the bound is the differential's own cost under ASan and libFuzzer's per-input bookkeeping, not a hot"
    echo "spot: 0.015 would need the GPU side and the concrete judge to cost almost nothing."
    echo "Done since the last report: the host walk hands FillBuffers each element's (row, group, k) instead of"
    echo "its dividing a flat index (15.5% of the target's time before, 9.5% after; the device launch divides as"
    echo "before, into the same body), the GPU plan makes a policy's shared checks once per call (it decided every"
    echo "rank whole, so r3-fixed's local_sizes check was O((D*T)^2) a call), and the target derives each input"
    echo "into its last step's storage. Earlier: the plan, scratch and arenas reused per thread, no coverage"
    echo "instrumentation on the GPU host library or the harness's own sources, a replay buffer compared whole"
    echo "first, and a mutator whose crossover never returns a parent (repeats fell from 39% to 17% of its"
    echo "outputs, which lowers exec/s, a repeat being answered from memory at about 1/50 of a judged input's"
    echo "cost, without lowering judged/s)."
  } >>"$SECTIONS"
}

# --- 3. mutator against bytes ----------------------------------------------------------------
mutator_section() {
  section "Structure-aware mutator against plain byte mutation (time to kill each fault)"
  [[ -x "$ROOT/bench/mutator-vs-bytes.sh" ]] || { not_measured "bench/mutator-vs-bytes.sh does not exist yet" mutator; return; }
  local runs=2 budget=10
  ((QUICK)) && { runs=1; budget=5; }
  ((RUNS < runs)) && runs=$RUNS
  if "$ROOT/bench/mutator-vs-bytes.sh" --build "$FUZZ_BUILD" --runs "$runs" --budget "$budget" \
       --faults "tp-major-order unpadded-offset skip-tp-gather chunk-row0" --out "$TMP/mutator.md" >"$TMP/mutator.log" 2>&1; then
    echo "$runs runs per fault and mutator, ${budget}s budget each (the default run measures four faults; the script takes --faults)." >>"$SECTIONS"
    echo >>"$SECTIONS"
    cat "$TMP/mutator.md" >>"$SECTIONS"
  else
    not_measured "bench/mutator-vs-bytes.sh: $(tail -1 "$TMP/mutator.log")" mutator
  fi
}

# --- 4. shrinker against -minimize_crash --------------------------------------------------
shrink_section() {
  section "Shrinker against libFuzzer -minimize_crash"
  [[ -x "$ROOT/bench/shrink-bench.sh" ]] || { not_measured "bench/shrink-bench.sh does not exist yet" shrink; return; }
  if RUNS="$RUNS" "$ROOT/bench/shrink-bench.sh" --build "$BUILD" --fuzz-build "$FUZZ_BUILD" --out "$TMP/shrink.md" \
       >"$TMP/shrink.log" 2>&1 && [[ -s "$TMP/shrink.md" ]]; then
    cat "$TMP/shrink.md" >>"$SECTIONS"
  else
    not_measured "bench/shrink-bench.sh: $(tail -1 "$TMP/shrink.log")" shrink
  fi
}

# --- 5. exhaustive search --------------------------------------------------------------
exhaust_rate() {  # exhaust_rate JOBS BOUNDS...: cases/s of one r3-fixed run (prints "cases rate")
  "$R3FUZZ" exhaust --impl r3-fixed --jobs "$@" >"$TMP/exhaust.log" 2>&1 || return 1
  sed -n 's/^no difference within bounds: \([0-9]*\) cases checked (.*, \([0-9.]*\) cases\/s)$/\1 \2/p' "$TMP/exhaust.log"
}

exhaust_section() {
  section "Exhaustive search (r3fuzz exhaust --impl r3-fixed)"
  [[ -x "$R3FUZZ" ]] || { not_measured "$R3FUZZ is not built" exhaust; return; }
  local bounds=(--max-dp 4 --max-tp 4 --max-tokens 6 --max-m 6)
  ((QUICK)) && bounds=(--max-dp 3 --max-tp 3 --max-tokens 5 --max-m 5)
  local one=() all=() cases=""
  for ((i = 1; i <= RUNS; i++)); do
    read -r cases r1 < <(exhaust_rate 1 "${bounds[@]}") || { not_measured "r3fuzz exhaust failed: $(tail -1 "$TMP/exhaust.log")" exhaust; return; }
    read -r _ rn < <(exhaust_rate "$CORES" "${bounds[@]}")
    one+=("$r1"); all+=("$rn")
  done
  read -r om olo ohi < <(stats "${one[@]}")
  read -r am alo ahi < <(stats "${all[@]}")
  {
    echo "Bounds \`${bounds[*]}\` (the rest at their defaults): $cases cases, each judged symbolically against the reference."
    echo
    echo "| jobs | cases/s median | min | max |"
    echo "|---|---|---|---|"
    echo "| 1 | $om | $olo | $ohi |"
    echo "| $CORES | $am | $alo | $ahi |"
    echo
    echo "Ratio $CORES jobs / 1 job: **$(ratio "$am" "$om")**."
  } >>"$SECTIONS"
}

# --- 6. mutants ------------------------------------------------------------------------
mutants_section() {
  section "Fault-kill matrix (r3fuzz mutants)"
  [[ -x "$R3FUZZ" ]] || { not_measured "$R3FUZZ is not built" mutants; return; }
  local rc=0
  "$R3FUZZ" mutants --seeds "$(( RUNS < 5 ? 5 : RUNS ))" --max-cases 20000 --markdown "$TMP/mutants.md" \
    >"$TMP/mutants.log" 2>&1 || rc=$?
  if ((rc <= 1)) && [[ -s "$TMP/mutants.md" ]]; then
    ((rc == 1)) && echo "**A mutant survived**: the harness misses a fault it should find (see the table)." >>"$SECTIONS"
    echo "Equivalence claims and their evidence: docs/MUTANTS.md." >>"$SECTIONS"
    echo >>"$SECTIONS"
    cat "$TMP/mutants.md" >>"$SECTIONS"
  else
    not_measured "r3fuzz mutants exited $rc: $(tail -1 "$TMP/mutants.log")" mutants
  fi
}

# --- 7. engine adapters -----------------------------------------------------------------
adapter_section() {
  section "Engine adapters (cases/s over the adapter protocol, unbatched and batched)"
  [[ -x "$R3FUZZ" ]] || { not_measured "$R3FUZZ is not built" adapter; return; }
  local cases=3000
  ((QUICK)) && cases=1000
  if "$ROOT/bench/adapter-bench.sh" --build "$BUILD" --runs "$RUNS" --cases "$cases" --out "$TMP/adapter.md" \
       >"$TMP/adapter.log" 2>&1; then
    {
      echo "Target: the example adapter batched at least 5x the unbatched exchange before batching (issue 14 measured"
      echo "that one at 108 cases/s elsewhere)."
      echo
      cat "$TMP/adapter.md"
      echo
      echo "What bounds the batched rate (perf record of one batched run, 3000 cases, when this section was written):"
      echo "the adapter's Python is 54% of the CPU (json.loads of each batch, then its capture code once per rank),"
      echo "r3fuzz 40% (writing requests and reading replies as JSON, applying and judging them); the round trip per"
      echo "rank is gone, and a batch carries each distinct tensor once."
    } >>"$SECTIONS"
  else
    not_measured "bench/adapter-bench.sh: $(tail -1 "$TMP/adapter.log")" adapter
  fi
}

start=$(date +%s)
for s in $SECTION_LIST; do
  log "section $s"
  "${s}_section"
done
elapsed=$(( $(date +%s) - start ))

cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -1)"
mkdir -p "$(dirname "$OUT")"
{
  echo "# Benchmarks"
  echo
  echo "Generated by \`bench/run-benchmarks.sh\`; do not edit by hand. Every figure is the median of the runs"
  echo "shown, with min and max. Sections whose prerequisites were missing say so."
  echo
  echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "- machine: \`$(uname -srm)\`"
  echo "- CPU: ${cpu:-unknown}, $CORES cores"
  echo "- commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- runs per figure: $RUNS; whole report: ${elapsed}s"
  cat "$SECTIONS"
  # Times of the README's two commands are measured by hand (a fresh machine, a clean clone):
  # copied in as they are, so the README carries none.
  echo
  cat "$ROOT/bench/build-and-test-times.md"
} >"$OUT"
log "wrote $OUT in ${elapsed}s"
