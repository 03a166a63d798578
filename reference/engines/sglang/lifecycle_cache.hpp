// One DP rank's KV memory as SGLang's request lifecycle sees it (docs/lifecycle-contract.md 2.1):
// the page allocator over config.kv_slots slots, the radix tree that hands published pages to
// prefix hits, HiCache's host copies of evicted pages, and the routed-experts host cache with one
// row per KV slot (S2), never cleared. Each slot also remembers whose forward computed the KV it
// holds (kv()), the ground the truth and the fixed model stand on.
//
// Sources (upstream main 30cb848, paths under python/sglang/srt/): mem_cache/allocator/token.py and
// paged.py (TokenToKVPoolAllocator, PagedTokenToKVPoolAllocator: clear, alloc, free),
// mem_cache/allocator/base.py (merge_and_sort_free), mem_cache/radix_cache.py (RadixCache:
// match_prefix, cache_finished_req, evict, inc_lock_ref / dec_lock_ref).
#pragma once

#include <cstdint>
#include <deque>
#include <optional>
#include <unordered_map>
#include <vector>

#include "reference/trace/route.hpp"

namespace r3::sglang {

// What HiCache keeps on host of an evicted position: the KV's origin, and the route row the
// host cache held at its slot (which only a fixed load-back carries back).
struct HostCopy {
  RouteRef kv;
  RouteRef row;
};

class RankCache {
 public:
  // `sorted_free`: the allocator's need_sort (P/D instances): freed pages wait in a release list
  // that is merged in and sorted only when the free list runs short. `keep_evicted`: HiCache.
  RankCache(int64_t kv_slots, int64_t page, bool sorted_free, bool keep_evicted);

  int64_t page_size() const { return page_; }
  int64_t slot_of(int64_t page, int64_t offset) const { return page * page_ + offset; }
  int64_t page_of(int64_t slot) const { return slot / page_; }

  // Makes `pages` pages free: merges the release list, then evicts unreferenced tree pages, least
  // recently used first (deepest first among equals: leaves go before their parents). False when
  // even that leaves too few.
  bool make_room(int64_t pages);
  // The free list's first page, referenced once, allocated by `owner` for its positions from
  // depth * page on. make_room() first.
  int64_t take(int owner, int64_t depth);
  void ref(int64_t page, int step);           // a hit locks it (match_prefix touches the path)
  void unref(int64_t page);                   // frees it once nobody holds it and the tree does not
  void keep_in_tree(int64_t page, int step);  // cache_finished_req inserts a full page
  int owner(int64_t page) const { return pages_[static_cast<size_t>(page)].owner; }
  int64_t depth(int64_t page) const { return pages_[static_cast<size_t>(page)].depth; }

  RouteRef& row(int64_t slot) { return rows_[static_cast<size_t>(slot)]; }
  const RouteRef& row(int64_t slot) const { return rows_[static_cast<size_t>(slot)]; }
  RouteRef& kv(int64_t slot) { return kv_[static_cast<size_t>(slot)]; }

  // The radix tree, per position: the first live slot published under a prefix hash.
  void publish(int64_t slot, uint64_t hash);
  std::optional<int64_t> find(uint64_t hash) const;
  const HostCopy* host_copy(uint64_t hash) const;

  bool idle() const;  // no page held by a request
  // flush_cache: the tree and HiCache reset, the allocator cleared (its free list back in order).
  // The host cache keeps its rows. Only when idle().
  void flush();

 private:
  struct Page {
    int refs = 0;
    bool allocated = false;
    bool in_tree = false;
    int owner = -1;
    int64_t depth = 0;
    int last_access = 0;
  };
  void free_page(int64_t page);
  void unpublish(int64_t slot, uint64_t hash);
  bool evict_one();

  int64_t page_;
  bool sorted_free_;
  bool keep_evicted_;
  std::vector<Page> pages_;
  std::deque<int64_t> free_;
  std::vector<int64_t> release_;
  std::vector<RouteRef> rows_;
  std::vector<RouteRef> kv_;
  std::vector<std::optional<uint64_t>> slot_hash_;
  std::unordered_map<uint64_t, std::vector<int64_t>> tree_;  // hash -> live slots, in publish order
  std::unordered_map<uint64_t, HostCopy> host_;
};

}  // namespace r3::sglang
