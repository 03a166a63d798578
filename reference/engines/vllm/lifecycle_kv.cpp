// vLLM's KV cache manager for the lifecycle models (sources in lifecycle_kv.hpp).
#include "reference/engines/vllm/lifecycle_kv.hpp"

#include <algorithm>

namespace r3::vllm {
namespace {

int64_t blocks_for(int64_t positions, int64_t page) { return (positions + page - 1) / page; }

std::string request_name(int req) { return "request " + std::to_string(req); }

}  // namespace

KvPool::KvPool(int64_t usable, int64_t page)
    : page_(page), blocks_(static_cast<size_t>(std::max<int64_t>(usable, 0)) + 1),
      slot_versions_(blocks_.size() * static_cast<size_t>(page), 0) {
  // Block 0 is the null block (BlockPool.__init__ pops it before any request allocates).
  for (int b = 1; b < static_cast<int>(blocks_.size()); ++b) enqueue_tail(b);
}

void KvPool::enqueue_tail(int block) {
  Block& b = blocks_[block];
  b.queued = true;
  b.prev = tail_;
  b.next = -1;
  (tail_ >= 0 ? blocks_[tail_].next : head_) = block;
  tail_ = block;
  ++queued_;
}

void KvPool::dequeue(int block) {
  Block& b = blocks_[block];
  (b.prev >= 0 ? blocks_[b.prev].next : head_) = b.next;
  (b.next >= 0 ? blocks_[b.next].prev : tail_) = b.prev;
  b.prev = b.next = -1;
  b.queued = false;
  --queued_;
}

std::optional<int> KvPool::cached(uint64_t hash) const {
  const auto it = cached_.find(hash);
  if (it == cached_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();  // get_cached_block: the first of duplicates
}

void KvPool::evict(int block) {
  Block& b = blocks_[block];
  if (!b.hash) return;
  auto it = cached_.find(*b.hash);
  if (it != cached_.end()) {
    std::erase(it->second, block);
    if (it->second.empty()) cached_.erase(it);
  }
  b.hash.reset();
}

void KvPool::allocate(int64_t n, std::vector<int>& table) {
  for (int64_t i = 0; i < n && head_ >= 0; ++i) {
    const int block = head_;
    dequeue(block);
    evict(block);  // _maybe_evict_cached_block
    blocks_[block].refs = 1;
    table.push_back(block);
  }
}

void KvPool::touch(int block) {
  if (blocks_[block].queued) dequeue(block);
  ++blocks_[block].refs;
}

void KvPool::free(std::span<const int> table) {
  for (auto it = table.rbegin(); it != table.rend(); ++it) {
    Block& b = blocks_[*it];
    if (--b.refs > 0) continue;
    b.refs = 0;
    enqueue_tail(*it);
  }
}

void KvPool::set_version(int64_t slot, int version) {
  slot_versions_[slot] = version;
  blocks_[slot / page_].version = version;
}

void KvPool::cache(int block, uint64_t hash) {
  Block& b = blocks_[block];
  if (b.hash) return;
  b.hash = hash;
  cached_[hash].push_back(block);
}

void KvPool::reset_prefix_cache() {
  cached_.clear();
  for (Block& b : blocks_) b.hash.reset();
}

int64_t kv_blocks(const Trace& t) { return t.config.kv_slots / std::max<int64_t>(t.config.page, 1); }

KvCache::KvCache(const Trace& t, const Timeline& timeline)
    : page_(std::max<int64_t>(t.config.page, 1)), caching_(t.config.prefix_cache) {
  pools_.reserve(static_cast<size_t>(std::max(t.dp, 1)));
  for (int d = 0; d < std::max(t.dp, 1); ++d) pools_.emplace_back(kv_blocks(t), page_);
  const size_t n = t.requests.size();
  tables_.resize(n);
  cached_blocks_.assign(n, 0);
  offloaded_versions_.resize(n);
  for (size_t r = 0; r < n; ++r) {
    dp_of_.push_back(std::clamp(t.requests[r].dp, 0, static_cast<int>(pools_.size()) - 1));
    hashes_.push_back(r < timeline.requests.size() ? &timeline.requests[r].prefix_hash : nullptr);
  }
}

int64_t KvCache::slot(int req, int64_t pos) const {
  const auto& table = tables_[req];
  const int64_t b = pos / page_;
  if (pos < 0 || b >= static_cast<int64_t>(table.size())) return -1;
  return table[b] * page_ + pos % page_;
}

int KvCache::block_version(int req, int64_t block) const {
  const auto& table = tables_[req];
  if (block < 0 || block >= static_cast<int64_t>(table.size())) return -1;
  return pool_of(req).version(table[block]);
}

int KvCache::kv_version(int req, int64_t pos) const {
  const int64_t s = slot(req, pos);
  return s < 0 ? -1 : pool_of(req).slot_version(s);
}

Status KvCache::take_fresh(int req, int64_t n) {
  KvPool& pool = pool_of(req);
  if (pool.free_blocks() < n) {
    return Error{request_name(req) + " needs " + std::to_string(n) + " more KV blocks, DP rank " +
                 std::to_string(dp_of_[req]) + " has " + std::to_string(pool.free_blocks()) +
                 " free (vLLM preempts a request instead: KVCacheManager.allocate_slots returns None, "
                 "vllm/v1/core/kv_cache_manager.py @ 003df29)"};
  }
  pool.allocate(n, tables_[req]);
  return ok_status();
}

void KvCache::cache_full(int req, int64_t end) {
  if (!caching_ || hashes_[req] == nullptr) return;
  const auto& hashes = *hashes_[req];
  auto& table = tables_[req];
  int64_t& b = cached_blocks_[req];
  while (b < static_cast<int64_t>(table.size()) && (b + 1) * page_ <= end &&
         (b + 1) * page_ <= static_cast<int64_t>(hashes.size())) {
    pool_of(req).cache(table[b], hashes[(b + 1) * page_ - 1]);
    ++b;
  }
}

Status KvCache::first_forward(int req, int64_t hit, int64_t tokens_known) {
  KvPool& pool = pool_of(req);
  const std::vector<uint64_t> empty;
  const auto& hashes = hashes_[req] != nullptr ? *hashes_[req] : empty;
  auto hash_of = [&](int64_t b) -> std::optional<uint64_t> {
    const int64_t last = (b + 1) * page_ - 1;
    if (last >= static_cast<int64_t>(hashes.size())) return std::nullopt;
    return hashes[last];
  };
  // The longest run of cached full blocks within num_tokens - 1 (get_computed_blocks).
  int64_t longest = 0;
  if (caching_) {
    while ((longest + 1) * page_ <= tokens_known - 1) {
      const auto h = hash_of(longest);
      if (!h || !pool.cached(*h)) break;
      ++longest;
    }
  }
  Status status = ok_status();
  for (int64_t b = 0; b < hit / page_; ++b) {
    const auto h = hash_of(b);
    const std::optional<int> block = h && caching_ ? pool.cached(*h) : std::nullopt;
    if (block) {
      pool.touch(*block);
      tables_[req].push_back(*block);
      continue;
    }
    if (status.ok()) {
      status = Error{request_name(req) + " hits " + std::to_string(hit) + " positions, but block " + std::to_string(b) +
                     " of its prefix is not in DP rank " + std::to_string(dp_of_[req]) +
                     "'s prefix cache (vLLM hits only cached full blocks: KVCacheManager.get_computed_blocks, "
                     "vllm/v1/core/kv_cache_manager.py @ 003df29)"};
    }
    (void)take_fresh(req, 1);
  }
  cached_blocks_[req] = static_cast<int64_t>(tables_[req].size());
  if (status.ok() && hit != longest * page_) {
    return Error{request_name(req) + " hits " + std::to_string(hit) + " positions where vLLM's prefix cache holds " +
                 std::to_string(longest * page_) +
                 " (vLLM always takes the longest run of cached full blocks within num_tokens - 1: "
                 "KVCacheManager.get_computed_blocks, vllm/v1/core/kv_cache_manager.py @ 003df29)"};
  }
  return status;
}

Status KvCache::allocate(int req, int64_t end, int64_t cache_end) {
  const int64_t need = blocks_for(end, page_) - static_cast<int64_t>(tables_[req].size());
  if (need > 0) R3_TRY_STATUS(take_fresh(req, need));
  cache_full(req, cache_end);
  return ok_status();
}

void KvCache::write(int req, int64_t lo, int64_t hi, int version) {
  for (int64_t p = lo; p < hi; ++p) {
    const int64_t s = slot(req, p);
    if (s >= 0) pool_of(req).set_version(s, version);
  }
}

void KvCache::free(int req) {
  pool_of(req).free(tables_[req]);
  tables_[req].clear();
  cached_blocks_[req] = 0;
}

void KvCache::offload(int req) {
  auto& saved = offloaded_versions_[req];
  saved.clear();
  for (int64_t p = 0; p < static_cast<int64_t>(tables_[req].size()) * page_; ++p) saved.push_back(kv_version(req, p));
  free(req);
}

Result<std::vector<bool>> KvCache::restore(int req, int64_t held) {
  KvPool& pool = pool_of(req);
  const std::vector<uint64_t> empty;
  const auto& hashes = hashes_[req] != nullptr ? *hashes_[req] : empty;
  const auto& saved = offloaded_versions_[req];
  std::vector<bool> fresh;
  Status status = ok_status();
  for (int64_t b = 0; b < blocks_for(held, page_); ++b) {
    const int64_t last = (b + 1) * page_ - 1;
    const bool full = last < held && last < static_cast<int64_t>(hashes.size());
    const std::optional<int> block = full && caching_ ? pool.cached(hashes[last]) : std::nullopt;
    if (block) {
      pool.touch(*block);
      tables_[req].push_back(*block);
      fresh.push_back(false);
      continue;
    }
    const Status taken = take_fresh(req, 1);
    if (!taken.ok()) {
      if (status.ok()) status = taken;
      continue;
    }
    for (int64_t p = b * page_; p < (b + 1) * page_ && p < static_cast<int64_t>(saved.size()); ++p) {
      pool.set_version(tables_[req].back() * page_ + p % page_, saved[p]);
    }
    fresh.push_back(true);
  }
  cached_blocks_[req] = 0;
  while (cached_blocks_[req] < static_cast<int64_t>(tables_[req].size()) &&
         pool.hashed(tables_[req][cached_blocks_[req]])) {
    ++cached_blocks_[req];
  }
  cache_full(req, held);
  if (!status.ok()) return status.error();
  return fresh;
}

Status KvCache::receive_prompt(int req, int64_t prompt_len, int version) {
  const int64_t before = static_cast<int64_t>(tables_[req].size());
  const Status taken = take_fresh(req, blocks_for(prompt_len, page_));
  for (int64_t p = before * page_; p < prompt_len; ++p) {
    if (slot(req, p) >= 0) pool_of(req).set_version(slot(req, p), version);
  }
  cache_full(req, prompt_len);
  return taken;
}

void KvCache::reset_prefix_cache() {
  for (KvPool& pool : pools_) pool.reset_prefix_cache();
  std::fill(cached_blocks_.begin(), cached_blocks_.end(), 0);
}

std::optional<int> KvCache::any_holder() const {
  for (size_t r = 0; r < tables_.size(); ++r) {
    if (!tables_[r].empty()) return static_cast<int>(r);
  }
  return std::nullopt;
}

}  // namespace r3::vllm
