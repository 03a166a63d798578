#include "fuzz/oracle/lifecycle_fault.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

namespace r3 {
namespace {

struct FaultInfo {
  LifecycleFault fault;
  std::string_view name;
  std::string_view what;
};

constexpr std::array<FaultInfo, 8> kFaults = {{
    {LifecycleFault::shift_one, "shift-one", "every row attributed one position off"},
    {LifecycleFault::drop_last, "drop-last", "the last row dropped at finish"},
    {LifecycleFault::preempted_freed, "preempted-freed", "a preempted request's prompt rows freed (zeros)"},
    {LifecycleFault::hit_before_store, "hit-before-store", "a prefix hit served before its rows were stored (zeros)"},
    {LifecycleFault::version_not_tracked, "version-not-tracked", "every row carries weight version 0"},
    {LifecycleFault::copy_reads_next_forward, "copy-reads-next-forward",
     "a late copy to host reads the rows the next forward wrote (no clone or snapshot before the next forward, or no "
     "event synchronized before the next copy)"},
    {LifecycleFault::copy_not_awaited, "copy-not-awaited",
     "a read does not wait for the copy to host: rows of a copy still in flight read back as zeros"},
    {LifecycleFault::prefill_never_committed, "prefill-never-committed",
     "the prefill handler path never commits its copy: rows of extend-only steps read back as zeros (SGLang's P/D "
     "prefill between #22911 and #23885)"},
}};

constexpr std::array<LifecycleFault, 5> kAll = {LifecycleFault::shift_one, LifecycleFault::drop_last,
                                                LifecycleFault::preempted_freed, LifecycleFault::hit_before_store,
                                                LifecycleFault::version_not_tracked};
constexpr std::array<LifecycleFault, 3> kCopy = {LifecycleFault::copy_reads_next_forward,
                                                 LifecycleFault::copy_not_awaited,
                                                 LifecycleFault::prefill_never_committed};

// Where a forwarded row sits: its step, DP rank and batch row.
struct Written {
  int step = 0;
  int dp = 0;
  size_t row = 0;
};

// Every kept forward of each (request, position, weight version), in step order: the rows a
// returned row can have come from.
class Writers {
 public:
  explicit Writers(const Timeline& timeline) {
    for (size_t n = 0; n < timeline.steps.size(); ++n) {
      const StepView& s = timeline.steps[n];
      for (size_t d = 0; d < s.rows.size(); ++d)
        for (size_t x = 0; x < s.rows[d].size(); ++x) {
          const BatchRow& b = s.rows[d][x];
          if (!b.kept || b.lagging) continue;
          by_key_[key(b.req, b.pos, s.version)].push_back({static_cast<int>(n), static_cast<int>(d), x});
        }
    }
  }
  // The last forward of `ref` at or before step `read` (the step whose end reads it).
  std::optional<Written> of(const RouteRef& ref, int read) const {
    if (ref.kind != RouteRef::Kind::route) return std::nullopt;
    const auto it = by_key_.find(key(ref.req, ref.pos, ref.version));
    if (it == by_key_.end()) return std::nullopt;
    std::optional<Written> out;
    for (const Written& w : it->second)
      if (w.step <= read) out = w;
    return out;
  }

 private:
  static std::tuple<int, int64_t, int> key(int req, int64_t pos, int version) { return {req, pos, version}; }
  std::map<std::tuple<int, int64_t, int>, std::vector<Written>> by_key_;
};

// What batch row `row` of rank `dp` held after the forward of step `n`: the row itself, as a
// correct capture delivers it.
std::optional<RouteRef> device_row(const Timeline& timeline, int n, int dp, size_t row) {
  const StepView& s = timeline.steps[static_cast<size_t>(n)];
  if (static_cast<size_t>(dp) >= s.rows.size() || row >= s.rows[static_cast<size_t>(dp)].size()) return std::nullopt;
  const BatchRow& b = s.rows[static_cast<size_t>(dp)][row];
  return RouteRef{b.kept || b.lagging ? RouteRef::Kind::route : RouteRef::Kind::draft, b.req, b.pos, s.version};
}

// Rewrites every returned row through `change(row, its writer, the step that reads it)`.
template <class F>
void rewrite_rows(const Timeline& timeline, LifecycleOutcome& outcome, F change) {
  const Writers writers(timeline);
  for (size_t r = 0; r < outcome.requests.size() && r < timeline.requests.size(); ++r) {
    const int read = timeline.requests[r].finish_step;
    if (read < 0) continue;
    for (RouteRef& ref : outcome.requests[r].rows)
      if (const std::optional<Written> w = writers.of(ref, read)) change(ref, *w, read);
  }
}

void apply_copy_fault(LifecycleFault f, const Trace& t, const Timeline& timeline, LifecycleOutcome& outcome) {
  const std::vector<int> done = completion_steps(t);
  const int steps = static_cast<int>(timeline.steps.size());
  switch (f) {
    case LifecycleFault::copy_reads_next_forward:
      rewrite_rows(timeline, outcome, [&](RouteRef& ref, const Written& w, int) {
        // The forwards before the copy lands overwrite its rows, the last one over the earlier.
        for (int k = w.step + 1; k < std::min(done[static_cast<size_t>(w.step)], steps); ++k)
          if (const std::optional<RouteRef> next = device_row(timeline, k, w.dp, w.row)) ref = *next;
      });
      return;
    case LifecycleFault::copy_not_awaited:
      rewrite_rows(timeline, outcome, [&](RouteRef& ref, const Written& w, int read) {
        if (done[static_cast<size_t>(w.step)] > read + 1) ref = RouteRef{RouteRef::Kind::never_written};
      });
      return;
    case LifecycleFault::prefill_never_committed:
      rewrite_rows(timeline, outcome, [&](RouteRef& ref, const Written& w, int) {
        const std::vector<Work>& run = t.steps[static_cast<size_t>(w.step)].run;
        const bool prefill = std::all_of(run.begin(), run.end(), [](const Work& x) { return x.kind == Work::Kind::extend; });
        if (prefill) ref = RouteRef{RouteRef::Kind::never_written};
      });
      return;
    default:
      return;
  }
}

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
std::span<const LifecycleFault> all_copy_faults() { return kCopy; }
bool is_copy_fault(LifecycleFault f) { return std::find(kCopy.begin(), kCopy.end(), f) != kCopy.end(); }

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
    case LifecycleFault::copy_reads_next_forward:
    case LifecycleFault::copy_not_awaited:
    case LifecycleFault::prefill_never_committed: apply_copy_fault(f, t, timeline, outcome); return;
  }
}

}  // namespace r3
