#include "fuzz/engines/vllm/trace_kv.hpp"

#include <algorithm>

#include "reference/engines/vllm/lifecycle_kv.hpp"

namespace r3::vllm {

// ---- the pool ----

TracePool::TracePool(int64_t usable, int64_t page)
    : blocks_(static_cast<size_t>(std::max<int64_t>(usable, 0)) + 1), slot_versions_(blocks_.size() * static_cast<size_t>(page), 0) {
  for (int b = 1; b < static_cast<int>(blocks_.size()); ++b) {  // block 0 is the null block
    blocks_[static_cast<size_t>(b)].queued = tail_;
    queue_.emplace(tail_++, b);
  }
}

std::optional<int> TracePool::cached(uint64_t hash) const {
  const auto it = cached_.find(hash);
  if (it == cached_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

void TracePool::uncache(int block) {
  Block& b = blocks_[static_cast<size_t>(block)];
  if (!b.hash) return;
  auto it = cached_.find(*b.hash);
  if (it != cached_.end()) {
    std::erase(it->second, block);
    if (it->second.empty()) cached_.erase(it);
  }
  b.hash.reset();
}

std::vector<int> TracePool::allocate(int64_t n) {
  std::vector<int> out;
  for (int64_t i = 0; i < n && !queue_.empty(); ++i) {
    const int block = queue_.begin()->second;
    queue_.erase(queue_.begin());
    blocks_[static_cast<size_t>(block)].queued = -1;
    uncache(block);
    blocks_[static_cast<size_t>(block)].refs = 1;
    out.push_back(block);
  }
  return out;
}

void TracePool::touch(int block) {
  Block& b = blocks_[static_cast<size_t>(block)];
  if (b.queued >= 0) {
    queue_.erase(b.queued);
    b.queued = -1;
  }
  ++b.refs;
}

void TracePool::free(const std::vector<int>& table) {
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    Block& b = blocks_[static_cast<size_t>(*it)];
    if (--b.refs > 0) continue;
    b.refs = 0;
    b.queued = tail_;
    queue_.emplace(tail_++, *it);
  }
}

void TracePool::cache(int block, uint64_t hash) {
  Block& b = blocks_[static_cast<size_t>(block)];
  if (b.hash) return;
  b.hash = hash;
  cached_[hash].push_back(block);
}

void TracePool::reset_prefix_cache() {
  cached_.clear();
  for (Block& b : blocks_) b.hash.reset();
}

// ---- the tables ----

TraceKv::TraceKv(const Trace& shape) : page_(std::max<int64_t>(shape.config.page, 1)), caching_(shape.config.prefix_cache) {
  for (int d = 0; d < std::max(shape.dp, 1); ++d) pools_.emplace_back(kv_blocks(shape), page_);
}

TraceKv::Table& TraceKv::table(int r, int dp) {
  if (static_cast<size_t>(r) >= tables_.size()) tables_.resize(static_cast<size_t>(r) + 1);
  Table& t = tables_[static_cast<size_t>(r)];
  t.dp = dp;
  return t;
}

const TraceKv::Table* TraceKv::find(int r) const {
  return static_cast<size_t>(r) < tables_.size() ? &tables_[static_cast<size_t>(r)] : nullptr;
}

uint64_t TraceKv::block_hash(const SchedulerState& s, int r, int64_t block) const {
  return s.hashes(r)[static_cast<size_t>((block + 1) * page_ - 1)];
}

int64_t TraceKv::longest_hit(const SchedulerState& s, int r) const {
  const Table* t = find(r);
  if (!caching_ || (t != nullptr && !t->blocks.empty())) return 0;
  const TracePool& pool = pools_[static_cast<size_t>(s.request(r).dp)];
  const auto known = static_cast<int64_t>(s.hashes(r).size());
  int64_t blocks = 0;
  while ((blocks + 1) * page_ <= s.request(r).known() - 1 && (blocks + 1) * page_ <= known &&
         pool.cached(block_hash(s, r, blocks)))
    ++blocks;
  return blocks * page_;
}

bool TraceKv::nameable(const SchedulerState& s, int r, int64_t hit) const {
  if (s.forwarded_prefix(r, hit) < hit) return false;
  const TracePool& pool = pools_[static_cast<size_t>(s.request(r).dp)];
  for (int64_t pos = 0; pos < hit; ++pos) {
    const int block = *pool.cached(block_hash(s, r, pos / page_));
    if (pool.slot_version(block * page_ + pos % page_) != s.first_version(r, pos)) return false;
  }
  return true;
}

bool TraceKv::fits(const SchedulerState& s, int r, int64_t end, int64_t hit) const {
  const TracePool& pool = pools_[static_cast<size_t>(s.request(r).dp)];
  const Table* t = find(r);
  if (t != nullptr && !t->blocks.empty())
    return blocks_for(end) - static_cast<int64_t>(t->blocks.size()) <= pool.free_blocks();
  // A hit takes its cached blocks out of the free queue before the fresh ones are popped.
  int64_t taken = 0;
  for (int64_t b = 0; b < hit / page_; ++b) taken += pool.queued(*pool.cached(block_hash(s, r, b))) ? 1 : 0;
  return blocks_for(end) - hit / page_ <= pool.free_blocks() - taken;
}

void TraceKv::forward(const SchedulerState& s, int r, int64_t hit, int64_t lo, int64_t end, int64_t tokens_before,
                      int version) {
  Table& t = table(r, s.request(r).dp);
  TracePool& pool = pools_[static_cast<size_t>(t.dp)];
  if (t.blocks.empty()) {  // the first forward since it held no KV: the hit's blocks first
    for (int64_t b = 0; b < hit / page_; ++b) {
      const int block = *pool.cached(block_hash(s, r, b));
      pool.touch(block);
      t.blocks.push_back(block);
    }
    t.cached = static_cast<int64_t>(t.blocks.size());
  }
  const int64_t need = blocks_for(end) - static_cast<int64_t>(t.blocks.size());
  if (need > 0)
    for (const int block : pool.allocate(need)) t.blocks.push_back(block);
  const int64_t cache_end = std::min(end, tokens_before);
  while (t.cached < static_cast<int64_t>(t.blocks.size()) && (t.cached + 1) * page_ <= cache_end &&
         (t.cached + 1) * page_ <= static_cast<int64_t>(s.hashes(r).size())) {
    pool.cache(t.blocks[static_cast<size_t>(t.cached)], block_hash(s, r, t.cached));
    ++t.cached;
  }
  for (int64_t pos = lo; pos < end && pos / page_ < static_cast<int64_t>(t.blocks.size()); ++pos)
    pool.set_version(t.blocks[static_cast<size_t>(pos / page_)] * page_ + pos % page_, version);
}

void TraceKv::free(int r) {
  if (static_cast<size_t>(r) >= tables_.size()) return;
  Table& t = tables_[static_cast<size_t>(r)];
  pools_[static_cast<size_t>(t.dp)].free(t.blocks);
  t.blocks.clear();
  t.cached = 0;
}

void TraceKv::reset_prefix_cache() {
  for (TracePool& p : pools_) p.reset_prefix_cache();
  for (Table& t : tables_) t.cached = 0;
}

}  // namespace r3::vllm
