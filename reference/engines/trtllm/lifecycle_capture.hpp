// TensorRT-LLM's RouteCapture and RouteCopier (route_capture.py @ 06a976ce and aa94b01;
// docs/lifecycle-contract.md 2.5), as one DP rank's state in the lifecycle walk
// (lifecycle_run.cpp): the per-request store keyed by (request, absolute position), the private
// decode counters, the SharedRouteCache of prompt prefixes, and the pinned ring of three copies.
// Values are RouteRefs (where a row came from), never route values.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "reference/trace/route.hpp"
#include "reference/trace/timeline.hpp"

namespace r3::trtllm {

// What a version does, its patches applied (lifecycle.cpp names each).
struct Behaviour {
  bool store_follows_kv = false;     // a recompute or a new hit replaces stored rows
  bool decode_position = false;      // a decode row's position is its input position
  bool inclusive_range = false;      // assemble includes the highest stored position
  bool range_to_finish = false;      // assemble cuts at S - 1 and assembles a store whose top is 0
  bool shared_cache_epoch = false;   // the cache takes only rows forwarded since the last reset
  bool cache_every_row = false;      // every forwarded row enters the cache, drained before a read-back
  bool commit_before_reuse = false;  // a ring slot's pending copy is committed before reuse
  bool raise_on_gap = false;         // assemble's error reaches the executor (else: no routes)
};

// One row of a forward's layout: (request, position), or (-1, -1) for a dummy or padding row.
struct LayoutRow {
  int req = -1;
  int64_t pos = -1;
  bool forwarded = true;  // false for a lagging row (nothing may reuse its KV)
};

// What attach_routes gave a request.
struct Attached {
  enum class Kind { routes, none, raised } kind = Kind::none;
  std::vector<RouteRef> rows;
  std::string error;  // raised
};

class RankCapture {
 public:
  // done_before[S]: the trace's completion step D of step S's copy (copies.hpp, completion_steps).
  RankCapture(const Timeline& timeline, Behaviour b, std::span<const int> done_before);

  // Events.
  void hit(int req, int64_t len) { prepopulated_[req] = len; }
  void preempt(int req);
  void clear_shared(int step);  // reset_prefix_cache

  // One forward: _prepare (the layout, the read-back of hits), then _finish_forward with the
  // rows the capture delivered (one per layout row). `is_context[j]` says whether batch row j is
  // a context request's (an extend); `padding` dummy rows follow the real ones.
  std::vector<LayoutRow> prepare(int step, const std::vector<BatchRow>& rows, const std::vector<bool>& is_context,
                                 int64_t padding);
  void finish_forward(int step, const std::vector<LayoutRow>& layout, const std::vector<RouteRef>& delivered);

  // attach_routes at a request's finish.
  Attached attach(int step, int req);

 private:
  struct StagedCopy {
    int step = 0;
    int slot = 0;
    std::vector<LayoutRow> layout;
    std::vector<RouteRef> rows;
    int done = 0;  // the first step whose non-waiting drain sees it landed: D - 1
    bool landed = false;
  };

  int64_t prompt_len(int req) const { return timeline_.requests[req].prompt_len; }
  uint64_t hash(int req, int64_t pos) const { return timeline_.requests[req].prefix_hash[static_cast<size_t>(pos)]; }
  void readback(int step, int req);
  void land_through(size_t copy);
  void advance(int step);
  void stage(int step, const std::vector<LayoutRow>& layout, const std::vector<RouteRef>& delivered);
  void drain(int step, bool force);
  void commit(const StagedCopy& copy);
  void store_row(int req, int64_t pos, const RouteRef& value, int step);
  void incremental_populate();
  void store_positions(int req);

  const Timeline& timeline_;
  Behaviour b_;
  std::span<const int> done_before_;

  struct Stored {
    RouteRef row;
    int step = 0;  // the step of the forward it came from (a read-back: the step it was read)
  };
  // One request's rows by absolute position (the store's inner dict): a dense array, since
  // positions run from 0 to the request's length, and its highest key, which assemble reads.
  class Positions {
   public:
    const Stored* find(int64_t pos) const {
      return pos >= 0 && pos < static_cast<int64_t>(rows_.size()) && rows_[static_cast<size_t>(pos)]
                 ? &*rows_[static_cast<size_t>(pos)]
                 : nullptr;
    }
    void put(int64_t pos, const Stored& value, bool replace);
    int64_t highest() const { return highest_; }  // -1 when empty

   private:
    std::vector<std::optional<Stored>> rows_;
    int64_t highest_ = -1;
  };
  std::unordered_map<int, Positions> store_;  // rid -> pos -> row
  std::vector<int> store_order_;                      // store keys in insertion order (dict order)
  std::unordered_map<int, int64_t> gen_count_;
  std::unordered_map<int, int64_t> prepopulated_;
  std::unordered_set<int> recorded_;  // _req_toks: requests whose prompt was recorded
  std::unordered_set<int> readback_done_;
  std::unordered_set<int> populated_;
  std::unordered_map<int, int64_t> pop_cursor_;
  std::unordered_map<uint64_t, RouteRef> shared_;
  int reset_step_ = -1;  // the step of the last clear_shared
  bool had_context_ = false;  // this forward has context rows: its drain is forced

  std::vector<StagedCopy> copies_;    // every staged copy, in stage order
  size_t first_unlanded_ = 0;         // copies land in stage order: every one before it has landed
  std::vector<size_t> pending_;       // indices into copies_, in stage order
  std::vector<std::vector<RouteRef>> ring_;  // the pinned host ring of three slots
  std::vector<std::optional<size_t>> slot_copy_;  // the last copy staged into each slot
  int next_slot_ = 0;
};

}  // namespace r3::trtllm
