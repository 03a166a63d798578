#include "reference/trace/timeline.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "reference/limits.hpp"

namespace r3 {
namespace {

using limits::kMaxTp;
using limits::kMaxLayers;
using limits::kMaxTopK;
using limits::kMaxExperts;

std::string str(int64_t v) { return std::to_string(v); }

// Traces are small by nature (a lifecycle bug shows on a handful of requests): these bound what a
// file may ask the walk to hold.
constexpr int kMaxTraceDp = 64;
constexpr int64_t kMaxTraceBudget = int64_t{1} << 16;
constexpr int64_t kMaxTraceSlots = int64_t{1} << 20;

// Where in the trace a rule is checked: "steps[3].run[0]". Built into text only when the rule
// fails, so a valid trace's walk allocates no message.
struct Where {
  int step = 0;
  const char* part = nullptr;  // "events", "run" or null (the step itself)
  int64_t index = 0;
  std::string text() const {
    std::string out = "steps[" + str(step) + "]";
    if (part) out += std::string(".") + part + "[" + str(index) + "]";
    return out;
  }
};

// What the walk knows of one request.
struct RequestState {
  int64_t P = 0;
  int64_t known_limit = 0;  // prompt + outputs: positions whose token the trace gives
  int64_t computed = 0;     // c: positions whose KV the request holds
  int64_t sampled = 0;      // g
  int64_t target = -1;      // samples that finish it (-1: an abort ends it)
  bool started = false;     // forwarded something, or was handed KV (hit, P/D)
  bool offloaded = false;
  bool abort_pending = false;
  int finished_at = -1;
  int last_run = -1;        // the last step whose run lists it
  std::vector<RouteRef> kv;  // per position: whose forward computed the KV it uses
};

// The prefix cache as the truth sees it: the first forward since the last flush that computed
// each prefix (docs/TRACES.md, "Which forward's version").
using PrefixCache = std::unordered_map<uint64_t, RouteRef>;

Status check_shapes(const Trace& t) {
  if (t.dp < 1 || t.dp > kMaxTraceDp) return Error{"topology.dp: " + str(t.dp) + " is outside [1, " + str(kMaxTraceDp) + "]"};
  if (t.tp < 1 || t.tp > kMaxTp) return Error{"topology.tp: " + str(t.tp) + " is outside [1, " + str(kMaxTp) + "]"};
  if (t.model.layers < 1 || t.model.layers > kMaxLayers)
    return Error{"model.layers: " + str(t.model.layers) + " is outside [1, " + str(kMaxLayers) + "]"};
  if (t.model.top_k < 1 || t.model.top_k > kMaxTopK)
    return Error{"model.top_k: " + str(t.model.top_k) + " is outside [1, " + str(kMaxTopK) + "]"};
  if (t.model.experts < t.model.top_k || t.model.experts > kMaxExperts)
    return Error{"model.experts: " + str(t.model.experts) + " is outside [top_k = " + str(t.model.top_k) + ", " +
                 str(kMaxExperts) + "]"};
  const TraceConfig& c = t.config;
  if (c.token_budget < 1 || c.token_budget > kMaxTraceBudget)
    return Error{"config.token_budget: " + str(c.token_budget) + " is outside [1, " + str(kMaxTraceBudget) + "]"};
  if (c.chunk != -1 && c.chunk < 1) return Error{"config.chunk: " + str(c.chunk) + " is neither -1 (off) nor >= 1"};
  if (c.page < 1 || c.page > 1024) return Error{"config.page: " + str(c.page) + " is outside [1, 1024]"};
  if (c.kv_slots < 1 || c.kv_slots > kMaxTraceSlots)
    return Error{"config.kv_slots: " + str(c.kv_slots) + " is outside [1, " + str(kMaxTraceSlots) + "]"};
  if (c.spec && (c.spec->width < 1 || c.spec->width > 16))
    return Error{"config.spec.width: " + str(c.spec->width) + " is outside [1, 16]"};
  for (size_t i = 0; i < c.cuda_graph_decode.size(); ++i) {
    const int64_t size = c.cuda_graph_decode[i];
    if (size < 1 || (i > 0 && size <= c.cuda_graph_decode[i - 1]))
      return Error{"config.cuda_graph.decode[" + str(static_cast<int64_t>(i)) +
                   "]: sizes must be positive and strictly increasing"};
  }
  return ok_status();
}

Status check_request(const Trace& t, size_t index) {
  const TraceRequest& r = t.requests[index];
  const auto at = [&] { return "requests[" + str(static_cast<int64_t>(index)) + "]"; };  // only on an error
  if (r.id != static_cast<int>(index)) return Error{at() + ".id: " + str(r.id) + " must equal its index " + str(static_cast<int64_t>(index))};
  if (r.dp < 0 || r.dp >= t.dp) return Error{at() + ".dp: " + str(r.dp) + " is outside [0, topology.dp = " + str(t.dp) + ")"};
  if (r.prompt.empty()) return Error{at() + ".prompt: a request needs at least one prompt token"};
  const auto outputs = static_cast<int64_t>(r.outputs.size());
  const int64_t max_new = r.max_new_or_default();
  if (max_new < 0) return Error{at() + ".max_new: " + str(max_new) + " is below 0"};
  if (r.start_len < 0 || r.start_len > static_cast<int64_t>(r.prompt.size()))
    return Error{at() + ".start_len: " + str(r.start_len) + " is outside [0, prompt length " +
                 str(static_cast<int64_t>(r.prompt.size())) + "]"};
  switch (r.finish) {
    case Finish::length:
      if (max_new == 0 && outputs != 1)
        return Error{at() + ".outputs: a prefill-only request (max_new 0) samples exactly one token, not " + str(outputs)};
      if (max_new > 0 && outputs != max_new)
        return Error{at() + ".outputs: a length finish keeps max_new = " + str(max_new) + " outputs, not " + str(outputs)};
      break;
    case Finish::eos:
    case Finish::stop:
      if (outputs < 1 || outputs > max_new)
        return Error{at() + ".outputs: an " + std::string(to_string(r.finish)) + " finish keeps 1 to max_new = " +
                     str(max_new) + " outputs (the stop last), not " + str(outputs)};
      break;
    case Finish::abort:
      if (outputs > std::max<int64_t>(max_new, 1))
        return Error{at() + ".outputs: " + str(outputs) + " outputs exceed max_new = " + str(max_new)};
      break;
  }
  if (r.arrival && *r.arrival < 0) return Error{at() + ".arrival: " + str(*r.arrival) + " is below 0"};
  if (r.resume_of) {
    const int of = *r.resume_of;
    if (of < 0 || of >= static_cast<int>(index))
      return Error{at() + ".resume_of: " + str(of) + " names no earlier request"};
    const TraceRequest& old = t.requests[static_cast<size_t>(of)];
    if (old.finish != Finish::abort) return Error{at() + ".resume_of: request " + str(of) + " was not aborted"};
    std::vector<int32_t> resumed = old.prompt;
    resumed.insert(resumed.end(), old.outputs.begin(), old.outputs.end());
    if (resumed != r.prompt)
      return Error{at() + ".prompt: a resume of request " + str(of) + " prompts with its prompt and outputs"};
  }
  return ok_status();
}

class Walk {
 public:
  Walk(const Trace& t, Timeline& out) : t_(t), out_(out) {}

  Status run() {
    states_.resize(t_.requests.size());
    if (t_.config.prefix_cache) {  // it holds at most every known position: no rehash mid-walk
      size_t positions = 0;
      for (const TraceRequest& r : t_.requests) positions += r.prompt.size() + r.outputs.size();
      cache_.reserve(positions);
    }
    for (size_t i = 0; i < t_.requests.size(); ++i) {
      const TraceRequest& r = t_.requests[i];
      RequestState& s = states_[i];
      s.P = static_cast<int64_t>(r.prompt.size());
      s.known_limit = s.P + static_cast<int64_t>(r.outputs.size());
      if (r.finish != Finish::abort) s.target = r.max_new_or_default() == 0 ? 1 : static_cast<int64_t>(r.outputs.size());
      s.kv.assign(static_cast<size_t>(s.known_limit + 1), RouteRef{});
    }
    for (size_t n = 0; n < t_.steps.size(); ++n)
      for (const Work& w : t_.steps[n].run)
        if (w.req >= 0 && static_cast<size_t>(w.req) < states_.size()) states_[static_cast<size_t>(w.req)].last_run = static_cast<int>(n);
    out_.steps.resize(t_.steps.size());
    for (size_t n = 0; n < t_.steps.size(); ++n) R3_TRY_STATUS(step(static_cast<int>(n)));
    return ok_status();
  }

  const std::vector<RequestState>& states() const { return states_; }

 private:
  Status step(int n) {
    StepView& view = out_.steps[static_cast<size_t>(n)];
    const TraceStep& spec = t_.steps[static_cast<size_t>(n)];
    for (size_t e = 0; e < spec.events.size(); ++e)
      R3_TRY_STATUS(event(n, spec.events[e], Where{n, "events", static_cast<int64_t>(e)}, view));
    view.version = version_;
    view.rows.assign(static_cast<size_t>(t_.dp), {});
    reserve_rows(spec, view);
    ran_.clear();
    for (size_t i = 0; i < spec.run.size(); ++i) {
      const Work& w = spec.run[i];
      const Where where{n, "run", static_cast<int64_t>(i)};
      if (w.req < 0 || static_cast<size_t>(w.req) >= states_.size())
        return Error{where.text() + ": request " + str(w.req) + " is not in requests"};
      if (std::find(ran_.begin(), ran_.end(), w.req) != ran_.end())
        return Error{where.text() + ": request " + str(w.req) + " runs twice in one step"};
      ran_.push_back(w.req);
      R3_TRY_STATUS(work(n, w, where, view));
    }
    for (size_t d = 0; d < view.rows.size(); ++d)
      if (static_cast<int64_t>(view.rows[d].size()) > t_.config.token_budget)
        return Error{Where{n}.text() + ": DP rank " + str(static_cast<int64_t>(d)) + " forwards " +
                     str(static_cast<int64_t>(view.rows[d].size())) + " rows, over config.token_budget = " +
                     str(t_.config.token_budget)};
    // Result processing: the rows land (the prefix cache sees them from the next step on), then
    // the requests that reached their target, or that carry an abort, end.
    if (t_.config.prefix_cache)  // without it nothing reads the cache (a hit needs it)
      for (const auto& rank_rows : view.rows)
        for (const BatchRow& row : rank_rows) publish(row, view.version);
    for (const int r : ran_) {
      RequestState& s = states_[static_cast<size_t>(r)];
      if (s.finished_at >= 0) continue;  // a lagging row
      if (s.abort_pending || (s.target >= 0 && s.sampled >= s.target)) {
        if (s.abort_pending && s.sampled != static_cast<int64_t>(t_.requests[static_cast<size_t>(r)].outputs.size()))
          return Error{Where{n}.text() + ": request " + str(r) + " ends on its abort with " + str(s.sampled) +
                       " tokens sampled, but its outputs list " +
                       str(static_cast<int64_t>(t_.requests[static_cast<size_t>(r)].outputs.size()))};
        finish(r, n, true);
        view.finished.push_back(r);
      }
    }
    return ok_status();
  }

  // Each DP rank's rows of the step, counted from its work as listed (a malformed entry is
  // refused by work(); here it only costs a wrong guess), so the rows are allocated once.
  void reserve_rows(const TraceStep& spec, StepView& view) const {
    counts_.assign(view.rows.size(), 0);
    for (const Work& w : spec.run) {
      if (w.req < 0 || static_cast<size_t>(w.req) >= t_.requests.size()) continue;
      const auto dp = static_cast<size_t>(t_.requests[static_cast<size_t>(w.req)].dp);
      if (dp >= counts_.size()) continue;
      const int64_t rows = w.kind == Work::Kind::extend   ? std::clamp<int64_t>(w.hi - w.lo, 0, t_.config.token_budget)
                           : w.kind == Work::Kind::verify ? (t_.config.spec ? t_.config.spec->width + 1 : 1)
                                                          : 1;
      counts_[dp] += rows;
    }
    for (size_t d = 0; d < view.rows.size(); ++d)
      view.rows[d].reserve(static_cast<size_t>(std::min(counts_[d], t_.config.token_budget + 1)));
  }

  void publish(const BatchRow& row, int version) {
    if (!row.kept || row.lagging) return;
    const std::vector<uint64_t>& hashes = out_.requests[static_cast<size_t>(row.req)].prefix_hash;
    if (row.pos >= static_cast<int64_t>(hashes.size())) return;  // past the stop: no token to key it by
    cache_.try_emplace(hashes[static_cast<size_t>(row.pos)], RouteRef{RouteRef::Kind::route, row.req, row.pos, version});
  }

  void finish(int r, int n, bool returns_output) {
    RequestState& s = states_[static_cast<size_t>(r)];
    s.finished_at = n;
    RequestView& v = out_.requests[static_cast<size_t>(r)];
    v.finish_step = n;
    v.returns_output = returns_output;
  }

  Status event(int n, const TraceEvent& e, const Where& where, StepView& view) {
    if (e.kind == TraceEvent::Kind::weight_update) {
      if (e.version < 0 || e.version > 255)
        return Error{where.text() + ".weight_update.version: " + str(e.version) + " is outside [0, 255]"};
      version_ = e.version;
      if (e.flush) cache_.clear();
      return ok_status();
    }
    const auto who = [&] { return where.text() + "." + std::string(to_string(e.kind)) + ": request " + str(e.req); };
    if (e.req < 0 || static_cast<size_t>(e.req) >= states_.size()) return Error{who() + " is not in requests"};
    RequestState& s = states_[static_cast<size_t>(e.req)];
    const TraceRequest& r = t_.requests[static_cast<size_t>(e.req)];
    if (s.finished_at >= 0) return Error{who() + " already finished at step " + str(s.finished_at)};
    if (r.arrival && n < *r.arrival) return Error{who() + " arrives at step " + str(*r.arrival)};
    switch (e.kind) {
      case TraceEvent::Kind::hit: {
        if (!t_.config.prefix_cache) return Error{who() + ": a prefix hit needs config.prefix_cache"};
        if (s.computed != 0) return Error{who() + " already holds KV through position " + str(s.computed - 1)};
        if (e.len < 1 || e.len >= s.P + s.sampled)
          return Error{who() + ": len " + str(e.len) + " must lie in [1, " + str(s.P + s.sampled) +
                       ") (the last known token is always forwarded)"};
        const std::vector<uint64_t>& hashes = out_.requests[static_cast<size_t>(e.req)].prefix_hash;
        for (int64_t p = 0; p < e.len; ++p) {
          const auto it = cache_.find(hashes[static_cast<size_t>(p)]);
          if (it == cache_.end())
            return Error{who() + ": position " + str(p) + " is not cached (no earlier step computed that prefix since the last flush)"};
          s.kv[static_cast<size_t>(p)] = it->second;
        }
        s.computed = e.len;
        s.started = true;
        return ok_status();
      }
      case TraceEvent::Kind::preempt:
        if (!s.started || s.computed == 0 || s.offloaded) return Error{who() + " holds no KV to preempt"};
        s.computed = 0;
        return ok_status();
      case TraceEvent::Kind::abort:
        if (!s.started) {  // still waiting: it leaves the queue with no output
          if (!r.outputs.empty())
            return Error{who() + " ends before any forward, so it samples nothing, but its outputs list " +
                         str(static_cast<int64_t>(r.outputs.size()))};
          finish(e.req, n, false);
          view.aborted_before.push_back(e.req);
        } else if (s.last_run >= n && !s.offloaded) {
          s.abort_pending = true;  // ends at the result processing of the step it runs in next
        } else {
          if (s.sampled != static_cast<int64_t>(r.outputs.size()))
            return Error{who() + " ends with " + str(s.sampled) + " tokens sampled, but its outputs list " +
                         str(static_cast<int64_t>(r.outputs.size()))};
          finish(e.req, n, true);
          view.aborted_before.push_back(e.req);
        }
        return ok_status();
      case TraceEvent::Kind::offload:
        if (!s.started || s.offloaded) return Error{who() + " is not running with KV to offload"};
        s.offloaded = true;
        return ok_status();
      case TraceEvent::Kind::restore:
        if (!s.offloaded) return Error{who() + " was not offloaded"};
        s.offloaded = false;
        return ok_status();
      case TraceEvent::Kind::pd_handoff:
        if (s.started) return Error{who() + " already started here; a P/D handoff comes first"};
        if (s.target >= 0 && s.target < 2)
          return Error{who() + ": the prefill instance would finish it (it needs more than one output)"};
        if (r.outputs.empty()) return Error{who() + ": the prefill instance samples its first output, but it has none"};
        for (int64_t p = 0; p < s.P; ++p) s.kv[static_cast<size_t>(p)] = RouteRef{RouteRef::Kind::route, e.req, p, version_};
        s.computed = s.P;
        s.sampled = 1;
        s.started = true;
        return ok_status();
      case TraceEvent::Kind::weight_update: break;
    }
    return ok_status();
  }

  Status work(int n, const Work& w, const Where& where, StepView& view) {
    RequestState& s = states_[static_cast<size_t>(w.req)];
    const TraceRequest& r = t_.requests[static_cast<size_t>(w.req)];
    const auto who = [&] { return where.text() + ": request " + str(w.req); };
    std::vector<BatchRow>& rows = view.rows[static_cast<size_t>(r.dp)];
    const int64_t last_known = s.P + s.sampled - 1;  // the next input
    if (s.finished_at >= 0) {
      // Overlap lag: the step after it finished, it runs once more and its row is discarded.
      if (t_.config.overlap && s.finished_at == n - 1 && w.kind == Work::Kind::decode && w.lo == last_known &&
          t_.requests[static_cast<size_t>(w.req)].finish != Finish::abort) {
        rows.push_back({w.req, w.lo, false, true});
        return ok_status();
      }
      return Error{who() + " already finished at step " + str(s.finished_at) +
                   (t_.config.overlap ? " (overlap lets it decode position " + str(last_known) + " in the next step only)" : "")};
    }
    if (r.arrival && n < *r.arrival) return Error{who() + " arrives at step " + str(*r.arrival)};
    if (s.offloaded) return Error{who() + " is offloaded (restore it first)"};
    switch (w.kind) {
      case Work::Kind::extend: {
        if (w.lo != s.computed) return Error{who() + " extends from " + str(w.lo) + " but holds KV for positions [0, " + str(s.computed) + ")"};
        if (w.hi <= w.lo || w.hi > last_known + 1)
          return Error{who() + " extends to " + str(w.hi) + ", outside (" + str(w.lo) + ", " + str(last_known + 1) + "] (the tokens known so far)"};
        for (int64_t p = w.lo; p < w.hi; ++p) {
          rows.push_back({w.req, p, true, false});
          s.kv[static_cast<size_t>(p)] = RouteRef{RouteRef::Kind::route, w.req, p, version_};
        }
        s.computed = w.hi;
        if (w.hi == last_known + 1) ++s.sampled;
        break;
      }
      case Work::Kind::decode:
      case Work::Kind::verify: {
        const char* does = w.kind == Work::Kind::verify ? " verifies" : " decodes";
        if (s.sampled == 0)
          return Error{who() + does + " position " + str(w.lo) + " before finishing its prompt (it holds KV for [0, " +
                       str(s.computed) + ") of " + str(s.P) + ")"};
        if (w.lo != last_known || s.computed != last_known)
          return Error{who() + does + " position " + str(w.lo) + ", but its next input is position " + str(last_known) +
                       (s.computed != last_known ? " and it holds KV for [0, " + str(s.computed) + ")" : "")};
        const int width = w.kind == Work::Kind::verify ? (t_.config.spec ? t_.config.spec->width : -1) : 0;
        if (width < 0) return Error{who() + ": a verify needs config.spec"};
        if (w.accepted < 0 || w.accepted > width)
          return Error{who() + ": accepted " + str(w.accepted) + " is outside [0, " + str(width) + "]"};
        for (int64_t i = 0; i <= width; ++i) {
          const int64_t p = w.lo + i;
          const bool kept = i <= w.accepted;
          rows.push_back({w.req, p, kept, false});
          if (kept && p < static_cast<int64_t>(s.kv.size()))
            s.kv[static_cast<size_t>(p)] = RouteRef{RouteRef::Kind::route, w.req, p, version_};
        }
        s.computed = w.lo + w.accepted + 1;
        s.sampled += w.accepted + 1;
        if (s.P + s.sampled > s.known_limit + 1 && s.target < 0)
          return Error{who() + " samples past its outputs"};
        break;
      }
    }
    if (s.target < 0 && s.sampled > static_cast<int64_t>(r.outputs.size()))
      return Error{who() + " samples " + str(s.sampled) + " tokens, more than its outputs list"};
    if (s.computed > s.known_limit) s.computed = std::min(s.computed, s.known_limit);
    s.started = true;
    return ok_status();
  }

  const Trace& t_;
  Timeline& out_;
  std::vector<RequestState> states_;
  std::vector<int> ran_;                // the requests the current step runs (reused)
  mutable std::vector<int64_t> counts_;  // rows per DP rank of the current step (reused)
  PrefixCache cache_;
  int version_ = 0;
};

}  // namespace

bool Timeline::same_route(const RouteRef& ref, const RouteRef& expected) const {
  if (ref.kind != RouteRef::Kind::route || expected.kind != RouteRef::Kind::route) return false;
  if (ref.version != expected.version) return false;
  auto hash_of = [&](const RouteRef& r, uint64_t& out) {
    if (r.req < 0 || static_cast<size_t>(r.req) >= requests.size() || r.pos < 0) return false;
    const std::vector<uint64_t>& hashes = requests[static_cast<size_t>(r.req)].prefix_hash;
    if (r.pos >= static_cast<int64_t>(hashes.size())) return false;
    out = hashes[static_cast<size_t>(r.pos)];
    return true;
  };
  uint64_t a = 0;
  uint64_t b = 0;
  return hash_of(ref, a) && hash_of(expected, b) && a == b;
}

Result<Timeline> build_timeline(const Trace& t) {
  R3_TRY_STATUS(check_shapes(t));
  for (size_t i = 0; i < t.requests.size(); ++i) R3_TRY_STATUS(check_request(t, i));
  Timeline out;
  out.requests.resize(t.requests.size());
  std::vector<int32_t> tokens;  // a request's prompt and outputs (one buffer for all of them)
  for (size_t i = 0; i < t.requests.size(); ++i) {
    const TraceRequest& r = t.requests[i];
    tokens.assign(r.prompt.begin(), r.prompt.end());
    tokens.insert(tokens.end(), r.outputs.begin(), r.outputs.end());
    RequestView& v = out.requests[i];
    v.prefix_hash = prefix_hashes(tokens);
    v.prompt_len = static_cast<int64_t>(r.prompt.size());
    v.kept_outputs = std::min<int64_t>(static_cast<int64_t>(r.outputs.size()), r.max_new_or_default());
    v.total = v.prompt_len + v.kept_outputs;
    v.start = std::min(r.start_len, v.total - 1);
  }
  Walk walk(t, out);
  R3_TRY_STATUS(walk.run());
  for (size_t i = 0; i < t.requests.size(); ++i) {
    RequestView& v = out.requests[i];
    if (!v.returns_output) continue;
    const RequestState& s = walk.states()[i];
    v.expected.assign(s.kv.begin() + v.start, s.kv.begin() + std::max(v.start, v.total - 1));
  }
  return out;
}

}  // namespace r3
