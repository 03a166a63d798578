#include "fuzz/oracle/lifecycle_fault.hpp"

#include <array>
#include <set>
#include <string>

namespace r3 {
namespace {

struct FaultInfo {
  LifecycleFault fault;
  std::string_view name;
  std::string_view what;
};

constexpr std::array<FaultInfo, 5> kFaults = {{
    {LifecycleFault::shift_one, "shift-one", "every row attributed one position off"},
    {LifecycleFault::drop_last, "drop-last", "the last row dropped at finish"},
    {LifecycleFault::preempted_freed, "preempted-freed", "a preempted request's prompt rows freed (zeros)"},
    {LifecycleFault::hit_before_store, "hit-before-store", "a prefix hit served before its rows were stored (zeros)"},
    {LifecycleFault::version_not_tracked, "version-not-tracked", "every row carries weight version 0"},
}};

constexpr std::array<LifecycleFault, 5> kAll = {LifecycleFault::shift_one, LifecycleFault::drop_last,
                                                LifecycleFault::preempted_freed, LifecycleFault::hit_before_store,
                                                LifecycleFault::version_not_tracked};

// The requests an event of `kind` names, with its hit length for hits.
std::vector<std::pair<int, int64_t>> named_by(const Trace& t, TraceEvent::Kind kind) {
  std::vector<std::pair<int, int64_t>> out;
  for (const TraceStep& s : t.steps)
    for (const TraceEvent& e : s.events)
      if (e.kind == kind) out.emplace_back(e.req, e.len);
  return out;
}

// Rows of request `req` for positions below `upto` become zeros.
void zero_below(const Timeline& timeline, int req, int64_t upto, LifecycleOutcome& outcome) {
  if (req < 0 || static_cast<size_t>(req) >= outcome.requests.size()) return;
  RequestRoutes& got = outcome.requests[static_cast<size_t>(req)];
  const int64_t start = timeline.requests[static_cast<size_t>(req)].start;
  for (size_t i = 0; i < got.rows.size(); ++i)
    if (start + static_cast<int64_t>(i) < upto) got.rows[i] = RouteRef{RouteRef::Kind::never_written};
}

}  // namespace

std::span<const LifecycleFault> all_lifecycle_faults() { return kAll; }

std::string_view to_string(LifecycleFault f) {
  for (const FaultInfo& i : kFaults)
    if (i.fault == f) return i.name;
  return "?";
}

std::string_view describe(LifecycleFault f) {
  for (const FaultInfo& i : kFaults)
    if (i.fault == f) return i.what;
  return "?";
}

Result<LifecycleFault> parse_lifecycle_fault(std::string_view text) {
  std::string names;
  for (const FaultInfo& i : kFaults) {
    if (i.name == text) return i.fault;
    names += (names.empty() ? "" : ", ") + std::string(i.name);
  }
  return Error{"\"" + std::string(text) + "\" is not a lifecycle fault; they are " + names};
}

void apply_lifecycle_fault(LifecycleFault f, const Trace& t, const Timeline& timeline, LifecycleOutcome& outcome) {
  switch (f) {
    case LifecycleFault::shift_one:
      for (RequestRoutes& r : outcome.requests)
        if (r.rows.size() >= 2) {
          r.rows.erase(r.rows.begin());
          r.rows.push_back(r.rows.back());
        }
      return;
    case LifecycleFault::drop_last:
      for (RequestRoutes& r : outcome.requests)
        if (!r.rows.empty()) r.rows.pop_back();
      return;
    case LifecycleFault::preempted_freed:
      for (const auto& [req, len] : named_by(t, TraceEvent::Kind::preempt))
        zero_below(timeline, req, timeline.requests[static_cast<size_t>(req)].prompt_len, outcome);
      return;
    case LifecycleFault::hit_before_store:
      for (const auto& [req, len] : named_by(t, TraceEvent::Kind::hit)) zero_below(timeline, req, len, outcome);
      return;
    case LifecycleFault::version_not_tracked:
      for (RequestRoutes& r : outcome.requests)
        for (RouteRef& ref : r.rows) ref.version = 0;
      return;
  }
}

}  // namespace r3
