// vLLM's KV cache manager, as far as the lifecycle models need it (every vLLM version shares it):
// per DP rank a block pool of config.kv_slots / config.page blocks that requests can use, plus
// block 0, the null block no request gets (config.kv_slots counts the slots requests can use);
// a free queue in eviction order; a prefix cache of full blocks keyed by block hash; each
// request's block table. A full block's hash here is the prefix hash of its last position (route.hpp),
// which, like vLLM's chained block hash, names the whole token prefix through the block.
//
// Sources (vllm-project/vllm, read for this file):
//  - vllm/v1/core/block_pool.py @ 002f349: BlockPool.__init__ (block 0 popped as the null
//    block), get_new_block_bundles (pops the free queue's head, evicting a cached hash),
//    touch (a hit takes its blocks out of the free queue), free_blocks (a block whose refs reach
//    0 goes to the queue's tail, keeping its hash), get_cached_block (the first of duplicates),
//    cache_full_blocks (only full blocks are cached), reset_prefix_cache (drops every hash).
//  - vllm/v1/core/single_type_kv_cache_manager.py: SingleTypeKVCacheManager.free frees a
//    request's blocks in reverse order, so its tail blocks are evicted first (read in stored
//    copies of the file; no commit pinned).
//  - vllm/v1/core/kv_cache_manager.py @ 003df29: KVCacheManager.get_computed_blocks (the
//    longest run of cached full blocks within num_tokens - 1), allocate_slots (None when the
//    pool has too few free blocks: the scheduler preempts instead).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "reference/error.hpp"
#include "reference/trace/timeline.hpp"
#include "reference/trace/trace.hpp"

namespace r3::vllm {

// One DP rank's block pool.
class KvPool {
 public:
  // `usable` blocks after the null block.
  KvPool(int64_t usable, int64_t page);

  int64_t free_blocks() const { return queued_; }
  std::optional<int> cached(uint64_t hash) const;
  // Pops n blocks off the queue's head (n <= free_blocks()), evicting their hashes, onto `table`.
  void allocate(int64_t n, std::vector<int>& table);
  void touch(int block);
  // Frees a request's table, tail first.
  void free(std::span<const int> table);
  void cache(int block, uint64_t hash);
  bool hashed(int block) const { return blocks_[block].hash.has_value(); }
  void reset_prefix_cache();

  // The weight version of the last forward that wrote KV into the block, and into one slot.
  int version(int block) const { return blocks_[block].version; }
  int slot_version(int64_t slot) const { return slot_versions_[slot]; }
  void set_version(int64_t slot, int version);

 private:
  // The free queue is a list threaded through the blocks themselves (prev/next: block numbers,
  // -1 at the ends), so freeing and allocating a block allocates no memory.
  struct Block {
    std::optional<uint64_t> hash;
    int refs = 0;
    int version = 0;
    bool queued = false;
    int prev = -1;
    int next = -1;
  };
  void evict(int block);
  void enqueue_tail(int block);
  void dequeue(int block);

  int64_t page_;
  std::vector<Block> blocks_;
  std::vector<int> slot_versions_;
  int head_ = -1;  // the free queue's head: evicted first
  int tail_ = -1;
  int64_t queued_ = 0;
  std::map<uint64_t, std::vector<int>> cached_;  // hash -> blocks, oldest first
};

// Every DP rank's pool and every request's block table. Errors say what vLLM would have done
// instead; the caller adds where in the trace it happened.
class KvCache {
 public:
  KvCache(const Trace& t, const Timeline& timeline);

  int64_t page() const { return page_; }
  const std::vector<int>& table(int req) const { return tables_[req]; }
  bool holds_kv(int req) const { return !tables_[req].empty(); }
  // The KV slot of (req, pos), or -1 when its table has no block there.
  int64_t slot(int req, int64_t pos) const;
  // The weight version of the KV the request uses in block `block` of its table, and at
  // position `pos` (-1: no block there).
  int block_version(int req, int64_t block) const;
  int kv_version(int req, int64_t pos) const;

  // A request's first forward since it held no KV: the hit the trace gives it (`hit`
  // positions), checked against the longest run vLLM's prefix cache holds for its
  // `tokens_known` tokens; the hit blocks join its table. On an error the table still gets
  // `hit` positions (fresh blocks stand in for the missing ones) so a run can go on.
  Status first_forward(int req, int64_t hit, int64_t tokens_known);
  // Blocks for positions [0, end) (allocate_slots), then full blocks through `cache_end` cached.
  Status allocate(int req, int64_t end, int64_t cache_end);
  // The forward wrote KV at [lo, hi) of req at `version`.
  void write(int req, int64_t lo, int64_t hi, int version);

  void free(int req);  // finish, abort, preemption: the table goes back, tail first
  // KV moved to host (offload: the table goes back, its blocks' versions are kept) and back
  // into blocks (restore): full blocks still in the prefix cache are taken back as they are,
  // the others land in fresh blocks. Returns, per block of the new table, whether it is fresh.
  void offload(int req);
  Result<std::vector<bool>> restore(int req, int64_t held);
  // The decode instance takes a prompt's KV from a prefill instance into fresh blocks.
  Status receive_prompt(int req, int64_t prompt_len, int version);
  void reset_prefix_cache();
  // A request that holds KV blocks, if any (reset_prefix_cache refuses while one does).
  std::optional<int> any_holder() const;

 private:
  KvPool& pool_of(int req) { return pools_[dp_of_[req]]; }
  const KvPool& pool_of(int req) const { return pools_[dp_of_[req]]; }
  Status take_fresh(int req, int64_t n);
  void cache_full(int req, int64_t end);

  int64_t page_ = 1;
  bool caching_ = false;
  std::vector<KvPool> pools_;  // per DP rank
  std::vector<int> dp_of_;
  std::vector<const std::vector<uint64_t>*> hashes_;  // per request: RequestView::prefix_hash
  std::vector<std::vector<int>> tables_;
  std::vector<int64_t> cached_blocks_;  // per request: leading blocks already hashed
  std::vector<std::vector<int>> offloaded_versions_;  // per request: its KV's versions on host, by position
};

// The blocks a trace gives each DP rank's requests: whole blocks of config.kv_slots (the null
// block comes on top).
int64_t kv_blocks(const Trace& t);

}  // namespace r3::vllm
