#include "fuzz/oracle/judge_trace.hpp"

#include <algorithm>
#include <array>

#include "fuzz/oracle/host_executor.hpp"
#include "reference/engine_model.hpp"
#include "reference/layout.hpp"
#include "reference/provenance.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

constexpr std::array<TraceVerdict, 6> kTraceVerdicts = {TraceVerdict::pass,         TraceVerdict::wrong_route,
                                                        TraceVerdict::short_output, TraceVerdict::long_output,
                                                        TraceVerdict::missing_output, TraceVerdict::crash};

std::string str(int64_t v) { return std::to_string(v); }

// Which batch row of the step a captured value names: rank `dp`'s row `index`, when it is one.
RouteRef ref_of_row(const StepView& step, const RowId& id) {
  if (id.kind == RowKind::untouched) return RouteRef{RouteRef::Kind::never_written};
  if (id.kind != RowKind::token || id.dp < 0 || static_cast<size_t>(id.dp) >= step.rows.size())
    return RouteRef{RouteRef::Kind::padding};
  const std::vector<BatchRow>& rows = step.rows[static_cast<size_t>(id.dp)];
  if (id.index < 0 || id.index >= static_cast<int64_t>(rows.size())) return RouteRef{RouteRef::Kind::padding};
  const BatchRow& row = rows[static_cast<size_t>(id.index)];
  const auto kind = row.kept || row.lagging ? RouteRef::Kind::route : RouteRef::Kind::draft;
  return RouteRef{kind, row.req, row.pos, step.version};
}

// What the version's per-step capture delivers in step `n`: it runs the step's one-step case on
// the host (fuzz/oracle/host_executor.hpp) and reads, on TP rank 0 of each DP rank, which token
// each of the rank's real rows holds. A step the model gives no case for is taken as right.
StepDelivery deliver(const TraceImplementation& impl, const StepView& view, const std::optional<Case>& c) {
  if (impl.identity_capture || impl.policy == nullptr) return identity_delivery(view);
  if (!c || !provenance_fits(*c)) return identity_delivery(view);
  Result<Step> step = derive_step(*c);
  if (!step) return identity_delivery(view);
  const ConcreteOutcome outcome = execute_on_host(*c, *step, *impl.policy);
  StepDelivery out;
  out.rows.resize(view.rows.size());
  if (impl.model) out.forward_rows = impl.model->forward_rows(*step);
  const int K = c->model.top_k;
  for (const ConcreteRank& rank : outcome.ranks) {
    for (const CaptureDecision& call : rank.calls)
      if (call.rejected && !out.raised) out.raised = call.error.empty() ? std::string("the capture raised") : call.error;
    if (rank.tp != 0 || rank.dp < 0 || static_cast<size_t>(rank.dp) >= view.rows.size()) continue;
    const GuardedImage& img = rank.capture;
    std::vector<RouteRef>& rows = out.rows[static_cast<size_t>(rank.dp)];
    const auto real = static_cast<int64_t>(view.rows[static_cast<size_t>(rank.dp)].size());
    for (int64_t r = 0; r < real; ++r) {
      if (r >= img.rows) {
        rows.push_back(RouteRef{RouteRef::Kind::never_written});
        continue;
      }
      const size_t at = static_cast<size_t>((img.guard_rows + r) * img.row_width + static_cast<int64_t>(c->layer) * K);
      const std::optional<DecodedValue> value = decode_value(img.data[at]);
      rows.push_back(value ? ref_of_row(view, value->id) : RouteRef{RouteRef::Kind::never_written});
    }
  }
  return out;
}

// "holds X, expected Y", said the short way when only the version differs.
std::string difference(const Timeline& timeline, int req, int64_t pos, const RouteRef& got, const RouteRef& want) {
  std::string out = "request " + str(req) + " position " + str(pos) + " holds " + describe(got);
  if (want.kind != RouteRef::Kind::route)
    return out + ", expected no route (the request holds no KV computed there: the row must be marked, not filled)";
  RouteRef same_version = got;
  same_version.version = want.version;
  if (got.kind == RouteRef::Kind::route && timeline.same_route(same_version, want))
    return out + ", expected version " + str(want.version);
  return out + ", expected " + describe(want);
}

// Whether a returned row is what the truth wants there. A position the request never forwarded
// (its KV dropped and not recomputed before it ended) has no route: the row must say so (zeros, or
// a padding row), never hold a route of some forward.
bool matches(const Timeline& timeline, const RouteRef& got, const RouteRef& want) {
  if (want.kind != RouteRef::Kind::route)
    return got.kind == RouteRef::Kind::never_written || got.kind == RouteRef::Kind::padding;
  return timeline.same_route(got, want);
}

struct RequestVerdict {
  TraceVerdict verdict = TraceVerdict::pass;
  int64_t position = -1;
  std::string detail;
};

RequestVerdict judge_request(const Timeline& timeline, int req, const RequestRoutes& got, bool crashed) {
  const RequestView& want = timeline.requests[static_cast<size_t>(req)];
  const std::string who = "request " + str(req);
  if (!want.returns_output) {
    if (got.status == RequestRoutes::Status::returned && !got.rows.empty())
      return {TraceVerdict::long_output, 0, who + " returns " + str(static_cast<int64_t>(got.rows.size())) +
                                                " rows, but it ended before any forward"};
    return {};
  }
  if (got.status == RequestRoutes::Status::not_finished)
    return crashed ? RequestVerdict{} : RequestVerdict{TraceVerdict::missing_output, -1, who + " never finished"};
  if (got.status == RequestRoutes::Status::none)
    return {TraceVerdict::missing_output, -1, who + " finished without routed experts (" +
                                                  str(static_cast<int64_t>(want.expected.size())) +
                                                  (want.expected.size() == 1 ? " row" : " rows") + " expected)"};
  const size_t common = std::min(got.rows.size(), want.expected.size());
  for (size_t i = 0; i < common; ++i)
    if (!matches(timeline, got.rows[i], want.expected[i])) {
      const int64_t pos = want.start + static_cast<int64_t>(i);
      return {TraceVerdict::wrong_route, pos, difference(timeline, req, pos, got.rows[i], want.expected[i])};
    }
  const std::string counts = who + " returns " + str(static_cast<int64_t>(got.rows.size())) + " rows, expected " +
                             str(static_cast<int64_t>(want.expected.size())) + " (positions " + str(want.start) +
                             " to " + str(want.total - 2) + ")";
  if (got.rows.size() < want.expected.size())
    return {TraceVerdict::short_output, want.start + static_cast<int64_t>(common),
            counts + ": position " + str(want.start + static_cast<int64_t>(common)) + " is missing"};
  if (got.rows.size() > want.expected.size())
    return {TraceVerdict::long_output, want.start + static_cast<int64_t>(common), counts + ": one row past the last is " +
                                                                                      describe(got.rows[common])};
  return {};
}

int rank_of(TraceVerdict v) {  // worst first: silent wrong data, then detectable, then a crash
  switch (severity_of(v)) {
    case TraceSeverity::silent: return 0;
    case TraceSeverity::detectable: return 1;
    case TraceSeverity::crash: return 2;
    case TraceSeverity::none: break;
  }
  return 3;
}

const PolicyInfo* policy_named(Engine engine, std::string_view name) {
  for (const PolicyInfo& p : engine.model().policies())
    if (p.name == name) return &p;
  return nullptr;
}

}  // namespace

std::string_view to_string(TraceVerdict v) {
  switch (v) {
    case TraceVerdict::pass: return "pass";
    case TraceVerdict::wrong_route: return "wrong_route";
    case TraceVerdict::short_output: return "short_output";
    case TraceVerdict::long_output: return "long_output";
    case TraceVerdict::missing_output: return "missing_output";
    case TraceVerdict::crash: return "crash";
  }
  return "?";
}

std::string_view to_string(TraceSeverity s) {
  switch (s) {
    case TraceSeverity::none: return "";
    case TraceSeverity::silent: return "silent";
    case TraceSeverity::detectable: return "detectable";
    case TraceSeverity::crash: return "crash";
  }
  return "?";
}

Result<TraceVerdict> parse_trace_verdict(std::string_view text) {
  std::string names;
  for (const TraceVerdict v : kTraceVerdicts) {
    if (to_string(v) == text) return v;
    names += (names.empty() ? "" : ", ") + std::string(to_string(v));
  }
  return Error{"\"" + std::string(text) + "\" is not a trace verdict; they are " + names};
}

TraceSeverity severity_of(TraceVerdict v) {
  switch (v) {
    case TraceVerdict::pass: return TraceSeverity::none;
    case TraceVerdict::wrong_route: return TraceSeverity::silent;
    case TraceVerdict::short_output:
    case TraceVerdict::long_output:
    case TraceVerdict::missing_output: return TraceSeverity::detectable;
    case TraceVerdict::crash: return TraceSeverity::crash;
  }
  return TraceSeverity::none;
}

std::span<const TraceVerdict> all_trace_verdicts() { return kTraceVerdicts; }

std::string TraceImplementation::name() const {
  std::string out(version ? version->name : "?");
  for (const int p : applied) out += "+" + std::string(model->patches()[static_cast<size_t>(p)].name);
  return out;
}

Result<TraceImplementation> make_trace_implementation(std::string_view name) {
  const size_t plus = name.find('+');
  const std::string_view base = name.substr(0, plus);
  const std::optional<FoundVersion> found = find_lifecycle_version(base);
  if (!found) {
    std::string known;
    for (const std::string& n : trace_implementation_names()) known += (known.empty() ? "" : ", ") + n;
    return Error{"\"" + std::string(base) + "\" is not a trace implementation; they are " + known};
  }
  TraceImplementation impl{found->engine, found->model, found->version, nullptr, {}, false, std::nullopt};
  if (const PolicyInfo* policy = policy_named(found->engine, found->version->policy)) impl.policy = policy->make();
  std::string_view rest = plus == std::string_view::npos ? std::string_view{} : name.substr(plus + 1);
  while (!rest.empty()) {
    const size_t next = rest.find('+');
    const std::string_view patch = rest.substr(0, next);
    const std::span<const LifecyclePatch> patches = found->model->patches();
    const auto it = std::find_if(patches.begin(), patches.end(), [&](const LifecyclePatch& p) { return p.name == patch; });
    if (it == patches.end()) {
      std::string known;
      for (const LifecyclePatch& p : patches) known += (known.empty() ? "" : ", ") + std::string(p.name);
      return Error{"\"" + std::string(patch) + "\" is not a patch of " + std::string(base) + "; its engine's are " + known};
    }
    impl.applied.push_back(static_cast<int>(it - patches.begin()));
    rest = next == std::string_view::npos ? std::string_view{} : rest.substr(next + 1);
  }
  return impl;
}

std::vector<std::string> trace_implementation_names() {
  std::vector<std::string> out;
  for (const Engine engine : all_engines())
    if (const LifecycleModel* model = lifecycle_of(engine))
      for (const LifecycleVersion& v : model->versions()) out.emplace_back(v.name);
  return out;
}

namespace {
std::vector<std::string> versions_for(Profile profile, bool released) {
  std::vector<std::string> out;
  for (const Engine engine : all_engines()) {
    if (!profile.is_any() && profile.engine() != engine) continue;
    if (const LifecycleModel* model = lifecycle_of(engine))
      for (const LifecycleVersion& v : model->versions())
        if (v.released == released) out.emplace_back(v.name);
  }
  return out;
}
}  // namespace

std::vector<std::string> default_trace_implementations(Profile profile) { return versions_for(profile, true); }
std::vector<std::string> fixed_trace_implementations(Profile profile) { return versions_for(profile, false); }

TraceJudgement judge_trace(const TraceImplementation& impl, const Trace& t, const Timeline& timeline) {
  std::vector<StepDelivery> delivery;
  delivery.reserve(timeline.steps.size());
  const bool per_step = !impl.identity_capture && impl.policy != nullptr;
  const std::vector<std::optional<Case>> cases =
      per_step ? impl.model->step_cases(t, timeline) : std::vector<std::optional<Case>>(timeline.steps.size());
  for (size_t n = 0; n < timeline.steps.size(); ++n) delivery.push_back(deliver(impl, timeline.steps[n], cases[n]));
  LifecycleOutcome outcome = impl.model->run(t, timeline, delivery, impl.version->name, impl.applied);
  outcome.requests.resize(t.requests.size());
  if (impl.fault) apply_lifecycle_fault(*impl.fault, t, timeline, outcome);
  TraceJudgement out;
  const bool crashed = outcome.crash_step.has_value();
  int worst = 3;
  for (size_t r = 0; r < t.requests.size(); ++r) {
    RequestVerdict v = judge_request(timeline, static_cast<int>(r), outcome.requests[r], crashed);
    if (v.verdict == TraceVerdict::pass || rank_of(v.verdict) >= worst) continue;
    worst = rank_of(v.verdict);
    out.verdict = v.verdict;
    out.request = static_cast<int>(r);
    out.position = v.position;
    out.detail = std::move(v.detail);
  }
  if (crashed && worst > rank_of(TraceVerdict::crash)) {
    out.verdict = TraceVerdict::crash;
    out.detail = "the engine crashed at step " + str(*outcome.crash_step) + ": " + outcome.crash;
  }
  out.returned = std::move(outcome.requests);
  return out;
}

Result<TraceJudgement> judge_trace_file(const TraceImplementation& impl, const Trace& t) {
  if (t.engine != impl.engine)
    return Error{"engine: the trace is " + std::string(to_string(t.engine)) + "'s, but " + impl.name() + " models " +
                 std::string(to_string(impl.engine))};
  R3_TRY(const Timeline timeline, validate_trace(t));
  return judge_trace(impl, t, timeline);
}

std::string trace_root_cause(const TraceImplementation& impl, const Trace& t, const Timeline& timeline) {
  const std::vector<int> missing = impl.model->missing_patches(impl.version->name);
  auto passes_with = [&](std::vector<int> patches, bool identity) {
    TraceImplementation tried = impl;
    tried.applied.insert(tried.applied.end(), patches.begin(), patches.end());
    tried.identity_capture = identity;
    return judge_trace(tried, t, timeline).verdict == TraceVerdict::pass;
  };
  auto named = [&](std::span<const int> patches) {
    std::string out;
    for (const int p : patches) out += (out.empty() ? "" : "+") + std::string(impl.model->patches()[static_cast<size_t>(p)].name);
    return out;
  };
  for (const int p : missing)
    if (passes_with({p}, false)) return named(std::array{p});
  if (passes_with({}, true)) {
    // A per-step bug: named by the per-step policy's own patch that repairs it (root_cause.hpp's
    // mechanism), so one per-step bug is one finding whatever the version and verdict it shows in.
    if (impl.policy != nullptr)
      for (const std::string_view patch : impl.policy->patch_names()) {
        TraceImplementation tried = impl;
        tried.policy = impl.policy->with_patches(std::array{patch});
        if (tried.policy != nullptr && judge_trace(tried, t, timeline).verdict == TraceVerdict::pass)
          return "step-capture:" + std::string(patch);
      }
    return "step-capture";
  }
  // Several bugs in one trace: from every missing patch and the per-step capture taken as right,
  // drop each in turn that the trace still passes without; what is left is a minimal repair.
  std::vector<int> kept = missing;
  bool identity = true;
  if (!passes_with(kept, identity)) return {};
  for (size_t i = 0; i < kept.size();) {
    std::vector<int> without = kept;
    without.erase(without.begin() + static_cast<std::ptrdiff_t>(i));
    if (passes_with(without, identity)) {
      kept = std::move(without);
    } else {
      ++i;
    }
  }
  if (passes_with(kept, false)) identity = false;
  if (kept.empty()) return "step-capture";
  return named(kept) + (identity ? "+step-capture" : "");
}

bool fails_the_same(const TraceImplementation& impl, const Trace& t, TraceVerdict verdict, const std::string& cause) {
  const Result<Timeline> timeline = validate_trace(t);
  return timeline && judge_trace(impl, t, *timeline).verdict == verdict && trace_root_cause(impl, t, *timeline) == cause;
}

}  // namespace r3
