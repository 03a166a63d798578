// vLLM's slot-keyed generation ("V1", #28284; docs/lifecycle-contract.md 2.4 and the spec's 4.2):
// the worker writes each forwarded row into a host buffer at the row's KV slot (slot_mapping;
// padding rows are not in it), and at finish the scheduler reads [0, num_tokens - 1) through the
// request's current block table. Source: Scheduler._get_routed_experts (stored copies of the
// vLLM-shaped scheduler; the spec's commit b4622cf) and routed_experts_capturer.py
// save_captured_experts @ 42fa4c0 (spec only). Prefix hits and recompute read the slots of the
// KV they use, so they are right; KV that offload or P/D moves into new slots finds rows this
// instance never wrote there.
#include <algorithm>
#include <map>

#include "reference/engines/vllm/lifecycle_versions.hpp"
#include "reference/engines/vllm/lifecycle_walk.hpp"

namespace r3::vllm {
namespace {

class SlotWalk final : public WalkObserver {
 public:
  SlotWalk(const Trace& t, const Timeline& timeline, const KvCache& kv, SlotFixes fixes)
      : t_(t), timeline_(timeline), kv_(kv), fixes_(fixes),
        host_(static_cast<size_t>(std::max(t.dp, 1)), std::vector<RouteRef>(static_cast<size_t>(kv_slots(t)))),
        held_(t.requests.size(), 0), done_(t.requests.size(), false), rows_(t.requests.size()) {}

  void before_event(int /*step*/, const TraceEvent& e) override {
    if (!known(e.req)) return;
    if (e.kind == TraceEvent::Kind::preempt) {
      if (fixes_.keep_preempted_rows) {
        auto& kept = preempted_[e.req];
        for (int64_t p = 0; p < held_[e.req]; ++p) {
          if (p >= static_cast<int64_t>(kept.size())) kept.resize(static_cast<size_t>(p + 1));
          kept[static_cast<size_t>(p)] = read(e.req, p);
        }
      }
      held_[e.req] = 0;
    }
    // Patch offload-rows: the rows go to host with the KV (vLLM V3's
    // RoutedExpertsManager.apply_offload_transfers, manager.py @ 1291121, stores on offload).
    if (e.kind == TraceEvent::Kind::offload && fixes_.offload_rows) {
      auto& saved = offloaded_[e.req];
      saved.clear();
      for (int64_t p = 0; p < held_[e.req]; ++p) saved.push_back(read(e.req, p));
    }
  }

  void after_event(int /*step*/, const TraceEvent& e, int version) override {
    if (!known(e.req)) return;
    // Unpatched, a restore or a P/D handoff leaves the new slots as they were: the rows of their
    // earlier owner on this instance, or zeros (docs/lifecycle-contract.md 2.4, V1).
    if (e.kind == TraceEvent::Kind::restore && fixes_.offload_rows) {
      // ...and loads them back into the new blocks (apply_offload_transfers: loads).
      const auto& saved = offloaded_[e.req];
      for (int64_t p = 0; p < static_cast<int64_t>(saved.size()); ++p) write(e.req, p, saved[p]);
    }
    if (e.kind == TraceEvent::Kind::pd_handoff) {
      held_[e.req] = timeline_.requests[e.req].prompt_len;
      // Patch pd-rows: the prefill instance's rows for the prompt travel with its KV (what the
      // routers splice today, vllm-project/router #184, llm-d #1473: spec 4.2, V3).
      if (fixes_.pd_rows) {
        for (int64_t p = 0; p < held_[e.req]; ++p) write(e.req, p, {RouteRef::Kind::route, e.req, p, version});
      }
    }
  }

  std::optional<std::string> forward(const ScheduledRun& run, std::span<const RouteRef> delivered) override {
    if (run.lagging) return std::nullopt;  // its blocks went back at its finish (lifecycle_walk.cpp)
    const auto& rows = timeline_.steps[run.step].rows[run.dp];
    for (size_t i = 0; i < run.rows.size() && i < delivered.size(); ++i) {
      write(run.work.req, rows[run.rows[i]].pos, delivered[i]);  // drafts too: every scheduled token's slot
    }
    held_[run.work.req] = run.kept_end;
    return std::nullopt;
  }

  void finish(int /*step*/, int req) override {
    const RequestView& view = timeline_.requests[req];
    // V1 reads [0, num_tokens - 1): it predates routed_experts_prompt_start (#51906, V3), so
    // the fixed model alone starts at the request's start.
    const int64_t from = fixes_.from_start ? view.start : 0;
    const auto saved = preempted_.find(req);
    const std::vector<RouteRef> none;
    const std::vector<RouteRef>& kept = saved == preempted_.end() ? none : saved->second;
    rows_[req].reserve(static_cast<size_t>(std::max<int64_t>(view.total - 1 - from, 0)));
    for (int64_t p = from; p < view.total - 1; ++p) {
      const bool recomputed = p < held_[req];
      rows_[req].push_back(!recomputed && p < static_cast<int64_t>(kept.size()) ? kept[static_cast<size_t>(p)] : read(req, p));
    }
    done_[req] = true;
  }

  LifecycleOutcome outcome(const WalkResult& walked) { return make_outcome(timeline_, walked, done_, std::move(rows_)); }

 private:
  // Every block's slots, the null block's included.
  static int64_t kv_slots(const Trace& t) { return (kv_blocks(t) + 1) * std::max<int64_t>(t.config.page, 1); }
  bool known(int req) const { return req >= 0 && req < static_cast<int>(held_.size()); }
  int dp_of(int req) const { return std::clamp(t_.requests[req].dp, 0, static_cast<int>(host_.size()) - 1); }

  RouteRef read(int req, int64_t pos) const {
    const int64_t slot = kv_.slot(req, pos);
    const auto& host = host_[dp_of(req)];
    if (slot < 0 || slot >= static_cast<int64_t>(host.size())) return {};  // no block: the buffer's zeros
    return host[slot];
  }
  void write(int req, int64_t pos, const RouteRef& ref) {
    const int64_t slot = kv_.slot(req, pos);
    auto& host = host_[dp_of(req)];
    if (slot >= 0 && slot < static_cast<int64_t>(host.size())) host[slot] = ref;
  }

  const Trace& t_;
  const Timeline& timeline_;
  const KvCache& kv_;
  SlotFixes fixes_;
  std::vector<std::vector<RouteRef>> host_;  // per DP rank, per KV slot
  std::vector<int64_t> held_;                // per request: positions whose KV it holds
  std::map<int, std::vector<RouteRef>> offloaded_;
  std::map<int, std::vector<RouteRef>> preempted_;  // keep_preempted_rows: the rows before the last preemption
  std::vector<bool> done_;
  std::vector<std::vector<RouteRef>> rows_;
};

}  // namespace

LifecycleOutcome run_slots(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                           SlotFixes fixes) {
  KvCache kv(t, timeline);
  SlotWalk walk(t, timeline, kv, fixes);
  const WalkResult walked = walk_trace(t, timeline, delivery, kv, &walk);
  return walk.outcome(walked);
}

}  // namespace r3::vllm
