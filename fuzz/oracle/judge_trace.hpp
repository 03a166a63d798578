// The trace oracle: runs a trace implementation (an engine's lifecycle version coupled with its
// per-step capture policy) over a whole trace and compares what each finished request returns
// with the truth, request by request (docs/TRACES.md, "The oracle").
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/oracle/lifecycle_fault.hpp"
#include "reference/error.hpp"
#include "reference/policy.hpp"
#include "reference/trace/lifecycle.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

// What a trace verdict tells the trainer's owner, worst first.
enum class TraceVerdict : uint8_t {
  pass,
  wrong_route,     // silent: a returned row holds another route (another position, request, version, a draft, padding or zeros)
  short_output,    // detectable: rows missing (fewer than the truth's)
  long_output,     // detectable: rows past the truth's (a trainer sees the length is wrong)
  missing_output,  // detectable: a finished request came back without routes
  crash,           // the engine raised or asserted: the serving run fails
};

enum class TraceSeverity : uint8_t { none, silent, detectable, crash };

std::string_view to_string(TraceVerdict v);
std::string_view to_string(TraceSeverity s);
Result<TraceVerdict> parse_trace_verdict(std::string_view text);
TraceSeverity severity_of(TraceVerdict v);
std::span<const TraceVerdict> all_trace_verdicts();

// A trace implementation: a lifecycle version with some patches applied.
struct TraceImplementation {
  Engine engine;
  const LifecycleModel* model = nullptr;
  const LifecycleVersion* version = nullptr;
  std::shared_ptr<const CapturePolicy> policy;  // the version's per-step policy model (EngineModel::policies)
  std::vector<int> applied;  // patches applied on top of the version (indices into model->patches())
  bool identity_capture = false;  // the per-step capture taken as right (root-cause search)
  std::optional<LifecycleFault> fault;  // injected into what the model returns (mutants)
  std::string name() const;  // the version's name, "+patch" per applied patch
};

// "sglang", "sglang-fixed", "vllm-50874", "sglang+offload-rows" (a version with patches applied);
// errors list every trace implementation, or the version's patches.
Result<TraceImplementation> make_trace_implementation(std::string_view name);
std::vector<std::string> trace_implementation_names();
// The released versions of the profile's engine (every engine's under any), or its fixed one.
std::vector<std::string> default_trace_implementations(Profile profile);
std::vector<std::string> fixed_trace_implementations(Profile profile);

struct TraceJudgement {
  TraceVerdict verdict = TraceVerdict::pass;
  int request = -1;        // the first request that differs (-1 for a crash or a pass)
  int64_t position = -1;   // the first position that differs, when one does
  std::string detail;      // "request 1 position 4 holds the route of request 0 position 4 at weight version 0, expected version 1"
  std::vector<RequestRoutes> returned;  // what each request returned
};

// Judges `impl` on a valid trace of its engine (build_timeline and the model's check passed).
TraceJudgement judge_trace(const TraceImplementation& impl, const Trace& t, const Timeline& timeline);

// Validates `t` (build_timeline, the engine's own check) and judges it; an Error names what is
// wrong with the trace.
Result<TraceJudgement> judge_trace_file(const TraceImplementation& impl, const Trace& t);

// The root cause of a failing judgement: the one missing patch of the version that makes it pass,
// else "step-capture" when the per-step capture taken as right does ("step-capture:PATCH" when one
// patch of the per-step policy, CapturePolicy::patch_names, does), else a minimal set of both
// ("pd-prompt-rows+step-capture": a trace with several bugs), or empty when nothing repairs it.
std::string trace_root_cause(const TraceImplementation& impl, const Trace& t, const Timeline& timeline);

// Whether `t` is valid and `impl` still fails it with `verdict` and root cause `cause`: the
// predicate a failing trace is shrunk under (run --traces, shrink).
bool fails_the_same(const TraceImplementation& impl, const Trace& t, TraceVerdict verdict, const std::string& cause);

}  // namespace r3
