// vLLM's KV cache manager as the trace generator's vLLM scheduler (trace_draw.cpp) keeps it, the
// way the lifecycle walk (reference/engines/vllm/lifecycle_walk.cpp, lifecycle_kv.hpp) drives it,
// so every schedule drawn is one the walk accepts: the hit of a request's first forward is the
// longest run of cached full blocks, every allocation fits, and blocks are freed and evicted in
// the walk's order. The pool here is lifecycle_kv.hpp's KvPool in a form that copies (the
// scheduler decides a step on a copy, then replays it in the walk's order).
//
// vLLM's facts, as lifecycle_kv.hpp cites them (vllm/v1/core/block_pool.py @ 002f349;
// kv_cache_manager.py @ 003df29; single_type_kv_cache_manager.py): block 0 is the null block; a
// new block comes off the free queue's head and loses its cached hash; a hit takes its blocks out
// of the queue; a freed request's blocks go to the queue's tail, tail block first, keeping their
// hashes; only full blocks are cached, at schedule time; the first of duplicate blocks serves a
// hit; a prefix-cache reset drops every hash.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "fuzz/generate/trace_scheduler.hpp"
#include "reference/trace/trace.hpp"

namespace r3::vllm {

// One DP rank's block pool.
class TracePool {
 public:
  TracePool(int64_t usable, int64_t page);

  int64_t free_blocks() const { return static_cast<int64_t>(queue_.size()); }
  bool queued(int block) const { return blocks_[static_cast<size_t>(block)].queued >= 0; }
  std::optional<int> cached(uint64_t hash) const;
  std::vector<int> allocate(int64_t n);  // n <= free_blocks()
  void touch(int block);
  void free(const std::vector<int>& table);
  void cache(int block, uint64_t hash);
  void reset_prefix_cache();
  int slot_version(int64_t slot) const { return slot_versions_[static_cast<size_t>(slot)]; }
  void set_version(int64_t slot, int version) { slot_versions_[static_cast<size_t>(slot)] = version; }

 private:
  struct Block {
    std::optional<uint64_t> hash;
    int refs = 0;
    int64_t queued = -1;  // its place in the free queue, -1 when not in it
  };
  void uncache(int block);

  std::vector<Block> blocks_;
  std::vector<int> slot_versions_;
  std::map<int64_t, int> queue_;                 // place -> block; the head is evicted first
  int64_t tail_ = 0;                             // the next place at the tail
  std::map<uint64_t, std::vector<int>> cached_;  // hash -> blocks, oldest first
};

class TraceKv {
 public:
  explicit TraceKv(const Trace& shape);

  // The hit vLLM takes at r's first forward: the longest run of cached full blocks within its
  // known tokens less one (KVCacheManager.get_computed_blocks), or 0 when r holds KV.
  int64_t longest_hit(const SchedulerState& s, int r) const;
  // Whether the trace can name that hit: every position forwarded by an earlier step, and the
  // cached KV of the weight version the trace's prefix cache says (the walk's check_hit_truth).
  bool nameable(const SchedulerState& s, int r, int64_t hit) const;
  // Whether r's forward through position `end` (after a hit of `hit` positions at its first
  // forward) fits the pool (KVCacheManager.allocate_slots).
  bool fits(const SchedulerState& s, int r, int64_t end, int64_t hit) const;

  // A forward, as the walk allocates it (allocate): forwarding [lo, end) with `tokens_before`
  // tokens known when it was scheduled; the first forward's hit blocks first, then blocks
  // through `end`, the full blocks of known tokens cached, the KV written at `version`.
  void forward(const SchedulerState& s, int r, int64_t hit, int64_t lo, int64_t end, int64_t tokens_before, int version);
  void free(int r);  // preemption, abort, finish: the table back, tail first
  void reset_prefix_cache();

 private:
  struct Table {
    int dp = 0;
    std::vector<int> blocks;
    int64_t cached = 0;  // leading blocks already hashed
  };
  Table& table(int r, int dp);
  const Table* find(int r) const;
  int64_t blocks_for(int64_t positions) const { return (positions + page_ - 1) / page_; }
  uint64_t block_hash(const SchedulerState& s, int r, int64_t block) const;

  int64_t page_ = 1;
  bool caching_ = false;
  std::vector<TracePool> pools_;  // per DP rank
  std::vector<Table> tables_;     // per request
};

}  // namespace r3::vllm
