// The TensorRT-LLM lifecycle walk: a valid trace, step by step, through one RankCapture per DP
// rank (lifecycle_capture.hpp), in the order PyExecutor drives route_capture.py (contract 2.5):
// the step's events, the requests an abort ends before the forward, prepare (layout and
// read-back), the forward, finish_forward (stage, drain, populate), then attach_routes for the
// requests the step's result processing finishes.
//
// The overlap scheduler [N3, reading (a), the contract's default]: a request that finishes on a
// stop token runs one more generation step (a lagging row in the trace), and its attach_routes
// comes after that step's forward, so the row of position S - 1 is committed first.
#include <algorithm>
#include <memory>

#include "reference/engines/trtllm/lifecycle.hpp"
#include "reference/engines/trtllm/lifecycle_capture.hpp"
#include "reference/engines/trtllm/lifecycle_walk.hpp"

namespace r3::trtllm {
namespace {

// TensorRT-LLM pads a decode-only batch with dummy generation requests up to a CUDA-graph batch
// size (their layout rows are (none, -1): RouteCapture._prepare [R2]); a batch above the
// largest size runs eagerly, unpadded.
int64_t graph_padding(const Trace& t, const TraceStep& step, int64_t rows) {
  const auto& sizes = t.config.cuda_graph_decode;
  if (sizes.empty() || step.run.empty() || rows == 0) return 0;
  for (const Work& w : step.run)
    if (w.kind != Work::Kind::decode) return 0;
  for (int64_t size : sizes)
    if (size >= rows && size <= t.config.token_budget) return size - rows;
  return 0;
}

class Walk {
 public:
  Walk(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery, const Behaviour& b,
       std::span<const int> done_before)
      : t_(t), timeline_(timeline), delivery_(delivery) {
    for (int d = 0; d < std::max(t.dp, 1); ++d) ranks_.push_back(std::make_unique<RankCapture>(timeline, b, done_before));
    out_.requests.resize(t.requests.size());
  }

  LifecycleOutcome run() {
    const int steps = static_cast<int>(std::min(t_.steps.size(), timeline_.steps.size()));
    for (int s = 0; s < steps; ++s)
      if (!step(s)) break;
    return std::move(out_);
  }

 private:
  RankCapture& rank_of(int req) {
    const int d = std::clamp(t_.requests[static_cast<size_t>(req)].dp, 0, static_cast<int>(ranks_.size()) - 1);
    return *ranks_[static_cast<size_t>(d)];
  }
  bool known(int req) const { return req >= 0 && req < static_cast<int>(t_.requests.size()); }

  bool crash(int s, const std::string& why) {
    out_.crash_step = s;
    out_.crash = "step " + std::to_string(s) + ": " + why;
    return false;
  }

  // attach_routes; false when it raised (the executor fails: a crash).
  bool attach(int s, int req) {
    RequestRoutes& routes = out_.requests[static_cast<size_t>(req)];
    if (!timeline_.requests[static_cast<size_t>(req)].returns_output) {
      routes.status = RequestRoutes::Status::none;
      return true;
    }
    Attached a = rank_of(req).attach(s, req);
    switch (a.kind) {
      case Attached::Kind::routes:
        routes.status = RequestRoutes::Status::returned;
        routes.rows = std::move(a.rows);
        return true;
      case Attached::Kind::none:
        routes.status = RequestRoutes::Status::none;
        return true;
      case Attached::Kind::raised:
        return crash(s, a.error);
    }
    return true;
  }

  // Whether `req` forwards a lagging row in step s + 1: its attach waits for that forward.
  bool lags_into(int s, int req) const {
    if (s + 1 >= static_cast<int>(timeline_.steps.size())) return false;
    for (const auto& rank : timeline_.steps[static_cast<size_t>(s + 1)].rows)
      for (const BatchRow& row : rank)
        if (row.req == req && row.lagging) return true;
    return false;
  }

  void apply(int s, const TraceEvent& e) {
    switch (e.kind) {
      case TraceEvent::Kind::hit:
        if (known(e.req)) rank_of(e.req).hit(e.req, e.len);
        break;
      case TraceEvent::Kind::preempt:
        if (known(e.req)) rank_of(e.req).preempt(e.req);
        break;
      case TraceEvent::Kind::weight_update:
        // PyExecutor.reset_prefix_cache calls RouteCapture.clear_shared [R4]; an update without
        // the flush leaves the cache as it is.
        if (e.flush)
          for (auto& rank : ranks_) rank->clear_shared(s);
        break;
      default:
        break;  // aborts are the timeline's; KV moves are outside the model (lifecycle_check.cpp)
    }
  }

  bool step(int s) {
    const TraceStep& ts = t_.steps[static_cast<size_t>(s)];
    const StepView& view = timeline_.steps[static_cast<size_t>(s)];
    for (const TraceEvent& e : ts.events) apply(s, e);
    for (int req : view.aborted_before)
      if (known(req) && !attach(s, req)) return false;
    if (s < static_cast<int>(delivery_.size()) && delivery_[static_cast<size_t>(s)].raised)
      return crash(s, *delivery_[static_cast<size_t>(s)].raised);
    for (size_t d = 0; d < view.rows.size() && d < ranks_.size(); ++d) forward(s, ts, view, static_cast<int>(d));
    for (int req : deferred_)
      if (!attach(s, req)) return false;
    deferred_.clear();
    for (int req : view.finished) {
      if (!known(req)) continue;
      if (lags_into(s, req)) {
        deferred_.push_back(req);
        continue;
      }
      if (!attach(s, req)) return false;
    }
    return true;
  }

  void forward(int s, const TraceStep& ts, const StepView& view, int d) {
    const std::vector<BatchRow>& rows = view.rows[static_cast<size_t>(d)];
    if (rows.empty()) return;
    std::vector<bool> context;
    for (const BatchRow& row : rows) {
      bool extend = false;
      for (const Work& w : ts.run)
        if (w.req == row.req) extend = w.kind == Work::Kind::extend;
      context.push_back(extend);
    }
    RankCapture& rank = *ranks_[static_cast<size_t>(d)];
    const int64_t padding = graph_padding(t_, ts, static_cast<int64_t>(rows.size()));
    const std::vector<LayoutRow> layout = rank.prepare(s, rows, context, padding);
    std::vector<RouteRef> delivered;
    const StepDelivery* given = s < static_cast<int>(delivery_.size()) ? &delivery_[static_cast<size_t>(s)] : nullptr;
    for (size_t j = 0; j < rows.size(); ++j) {
      if (given && static_cast<size_t>(d) < given->rows.size() && j < given->rows[static_cast<size_t>(d)].size()) {
        delivered.push_back(given->rows[static_cast<size_t>(d)][j]);
        continue;
      }
      const BatchRow& row = rows[j];
      delivered.push_back({row.kept ? RouteRef::Kind::route : RouteRef::Kind::draft, row.req, row.pos, view.version});
    }
    for (int64_t i = 0; i < padding; ++i) delivered.push_back({RouteRef::Kind::padding});
    rank.finish_forward(s, layout, delivered);
  }

  const Trace& t_;
  const Timeline& timeline_;
  std::span<const StepDelivery> delivery_;
  std::vector<std::unique_ptr<RankCapture>> ranks_;
  std::vector<int> deferred_;
  LifecycleOutcome out_;
};

}  // namespace

LifecycleOutcome walk(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                      const Behaviour& b, std::span<const int> done_before) {
  return Walk(t, timeline, delivery, b, done_before).run();
}

}  // namespace r3::trtllm
