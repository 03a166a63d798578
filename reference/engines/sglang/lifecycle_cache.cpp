#include "reference/engines/sglang/lifecycle_cache.hpp"

#include <algorithm>
#include <tuple>

#include "reference/error.hpp"

namespace r3::sglang {

RankCache::RankCache(int64_t kv_slots, int64_t page, bool sorted_free, bool keep_evicted)
    : page_(page), sorted_free_(sorted_free), keep_evicted_(keep_evicted) {
  // Page 0 (slot 0 with page 1) is never handed out: padded rows write their dummy output there
  // (allocator/token.py and paged.py, clear: the free list starts at 1).
  pages_.resize(static_cast<size_t>(kv_slots / page));
  rows_.assign(static_cast<size_t>(kv_slots), RouteRef{});
  kv_.assign(static_cast<size_t>(kv_slots), RouteRef{});
  slot_hash_.assign(static_cast<size_t>(kv_slots), std::nullopt);
  for (int64_t p = 1; p < static_cast<int64_t>(pages_.size()); ++p) free_.push_back(p);
}

bool RankCache::make_room(int64_t pages) {
  auto merge = [&] {
    // base.py, merge_and_sort_free: the released pages join the free list, sorted.
    if (release_.empty()) return;
    std::vector<int64_t> all(free_.begin(), free_.end());
    all.insert(all.end(), release_.begin(), release_.end());
    std::sort(all.begin(), all.end());
    free_.assign(all.begin(), all.end());
    release_.clear();
  };
  if (sorted_free_ && pages > static_cast<int64_t>(free_.size())) merge();
  // The scheduler evicts from the tree what the batch lacks before it allocates
  // (radix_cache.py, evict; called through evict_from_tree_cache).
  while (static_cast<int64_t>(free_.size()) < pages) {
    if (!evict_one()) return false;
    if (sorted_free_) merge();
  }
  return true;
}

int64_t RankCache::take(int owner, int64_t depth) {
  R3_CHECK(!free_.empty(), "make_room() first");
  const int64_t p = free_.front();
  free_.pop_front();
  Page& page = pages_[static_cast<size_t>(p)];
  page = Page{1, true, false, owner, depth, 0};
  return p;
}

void RankCache::ref(int64_t page, int step) {
  Page& p = pages_[static_cast<size_t>(page)];
  ++p.refs;
  p.last_access = step;
}

void RankCache::unref(int64_t page) {
  Page& p = pages_[static_cast<size_t>(page)];
  R3_CHECK(p.refs > 0, "a page released more often than held");
  if (--p.refs == 0 && !p.in_tree) free_page(page);
}

void RankCache::keep_in_tree(int64_t page, int step) {
  Page& p = pages_[static_cast<size_t>(page)];
  p.in_tree = true;
  p.last_access = step;
}

void RankCache::publish(int64_t slot, uint64_t hash) {
  std::optional<uint64_t>& held = slot_hash_[static_cast<size_t>(slot)];
  if (held == hash) return;
  if (held) unpublish(slot, *held);
  held = hash;
  tree_[hash].push_back(slot);
}

std::optional<int64_t> RankCache::find(uint64_t hash) const {
  const auto it = tree_.find(hash);
  if (it == tree_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

const HostCopy* RankCache::host_copy(uint64_t hash) const {
  const auto it = host_.find(hash);
  return it == host_.end() ? nullptr : &it->second;
}

bool RankCache::idle() const {
  return std::all_of(pages_.begin(), pages_.end(), [](const Page& p) { return p.refs == 0; });
}

void RankCache::flush() {
  R3_CHECK(idle(), "flush_cache runs only when no request holds KV");
  // scheduler.py, flush_cache: tree_cache.reset() and token_to_kv_pool_allocator.clear().
  tree_.clear();
  host_.clear();
  std::fill(slot_hash_.begin(), slot_hash_.end(), std::nullopt);
  for (Page& p : pages_) p = Page{};
  free_.clear();
  release_.clear();
  for (int64_t p = 1; p < static_cast<int64_t>(pages_.size()); ++p) free_.push_back(p);
}

void RankCache::unpublish(int64_t slot, uint64_t hash) {
  // A hash with no live slot left leaves the tree, so that a long trace's tree holds only what
  // its KV slots hold (judging stays linear in the trace's length).
  const auto it = tree_.find(hash);
  if (it == tree_.end()) return;
  std::vector<int64_t>& live = it->second;
  live.erase(std::remove(live.begin(), live.end(), slot), live.end());
  if (live.empty()) tree_.erase(it);
}

void RankCache::free_page(int64_t page) {
  for (int64_t s = slot_of(page, 0); s < slot_of(page + 1, 0); ++s) {
    std::optional<uint64_t>& held = slot_hash_[static_cast<size_t>(s)];
    if (!held) continue;
    unpublish(s, *held);
    held.reset();
  }
  pages_[static_cast<size_t>(page)] = Page{};
  // token.py / paged.py, free: straight back to the free list's end, or to the release list
  // when the allocator sorts.
  if (sorted_free_)
    release_.push_back(page);
  else
    free_.push_back(page);
}

bool RankCache::evict_one() {
  int64_t victim = -1;
  for (int64_t p = 1; p < static_cast<int64_t>(pages_.size()); ++p) {
    const Page& page = pages_[static_cast<size_t>(p)];
    if (!page.allocated || !page.in_tree || page.refs != 0) continue;
    if (victim < 0) {
      victim = p;
      continue;
    }
    const Page& best = pages_[static_cast<size_t>(victim)];
    // radix_cache.py, evict: a heap of evictable leaves by last access time. Here the deepest
    // page of a prefix stands for its leaf.
    if (std::make_tuple(page.last_access, -page.depth) < std::make_tuple(best.last_access, -best.depth)) victim = p;
  }
  if (victim < 0) return false;
  if (keep_evicted_) {
    // HiCache backs each tree page up on host; an evicted page stays there for a load-back.
    for (int64_t s = slot_of(victim, 0); s < slot_of(victim + 1, 0); ++s)
      if (const std::optional<uint64_t>& h = slot_hash_[static_cast<size_t>(s)])
        host_.try_emplace(*h, HostCopy{kv_[static_cast<size_t>(s)], rows_[static_cast<size_t>(s)]});
  }
  pages_[static_cast<size_t>(victim)].in_tree = false;
  free_page(victim);
  return true;
}

}  // namespace r3::sglang
