// SGLang's KV memory as the trace generator's SGLang scheduler (trace_draw.cpp) keeps it: the
// per-rank page allocator and radix tree of reference/engines/sglang/lifecycle_cache.hpp, driven
// the way the lifecycle walk (lifecycle_run.cpp) drives them, so every schedule drawn is one the
// walk accepts: each step's pages fit after freeing and evicting, and every hit is served by
// the rank's radix tree (or its HiCache host copies) with the KV the trace's truth names.
#pragma once

#include <cstdint>
#include <vector>

#include "fuzz/generate/trace_scheduler.hpp"
#include "reference/engines/sglang/lifecycle_cache.hpp"
#include "reference/trace/trace.hpp"

namespace r3::sglang {

class TraceKv {
 public:
  // One work of the step being formed: `count` rows from position `lo`, the first `kept` of
  // them kept (a verify keeps its accepted drafts), or a lagging row.
  struct Planned {
    int req = 0;
    int64_t lo = 0;
    int64_t count = 0;
    int64_t kept = 0;
    bool lag = false;
  };

  // An event that takes KV before the forward, for fits() to weigh: a hit, a restore of an
  // offloaded request, or a P/D hand-off.
  struct Taking {
    enum class Kind : uint8_t { none, hit, restore, handoff };
    Kind kind = Kind::none;
    int req = -1;
    int64_t len = 0;  // a hit's positions
  };

  // `pd`: a P/D decode instance, whose allocator sorts its free pages (the walk's RankCache).
  TraceKv(const Trace& shape, bool pd, bool hicache);

  // The longest page-aligned prefix of r (within its known tokens less one) that the rank's
  // radix tree holds on device, then on the HiCache host, with the KV of the weight version the
  // trace's prefix cache names (radix_cache.py, match_prefix; schedule_batch.py,
  // Req._compute_max_prefix_len).
  int64_t hit_for(const SchedulerState& s, int r);
  // Whether rank dp's forward still fits, with the works planned so far and `extra`, after
  // `taking` takes its KV: the walk's make_room for the event, then for the forward.
  bool fits(const SchedulerState& s, int dp, const Taking& taking, const std::vector<Planned>& extra) const;

  // Events, applied at once (the walk applies them before the forward).
  void take(const SchedulerState& s, const Taking& taking);
  void release(const SchedulerState& s, int r);  // a retract: the KV freed without entering the tree
  void offload(const SchedulerState& s, int r);  // a P/D retract: the KV copied to host, then freed

  // Work: planned in run order while the step forms, placed by forward() at its end.
  void plan(const Planned& work) { planned_.push_back(work); }
  void forward(const SchedulerState& s);
  // Result processing: a request that ended puts its own full pages into the tree
  // (cache_finished_req) and releases the rest.
  void end(const SchedulerState& s, int r);
  void flush();

 private:
  struct Req {
    std::vector<int64_t> slots;  // req_to_token
    std::vector<int64_t> pages;  // the pages it holds, once each
    std::vector<RouteRef> saved;  // its KV's origin per position while offloaded
  };
  Req& req(int r);
  bool continues_own_page(const RankCache& cache, const Req& q, int r, int64_t pos) const;
  int64_t pages_needed(const SchedulerState& s, const RankCache& cache, int dp, const std::vector<Planned>& work,
                       int taker_req, const Req& taker) const;
  bool apply(RankCache& cache, Req& q, const SchedulerState& s, const Taking& taking) const;
  bool take_hit(RankCache& cache, Req& q, const SchedulerState& s, int r, int64_t len) const;
  int64_t place(RankCache& cache, Req& q, int r, int64_t pos) const;

  int64_t page_ = 1;
  bool prefix_cache_ = false;
  bool hicache_ = false;
  std::vector<RankCache> caches_;  // per DP rank
  std::vector<Req> reqs_;          // per request
  std::vector<Planned> planned_;   // this step's work, in run order
};

}  // namespace r3::sglang
