#include "fuzz/engines/sglang/trace_kv.hpp"

#include <algorithm>
#include <utility>

namespace r3::sglang {

TraceKv::TraceKv(const Trace& shape, bool pd, bool hicache)
    : page_(std::max<int64_t>(shape.config.page, 1)), prefix_cache_(shape.config.prefix_cache), hicache_(hicache) {
  for (int d = 0; d < shape.dp; ++d) caches_.emplace_back(shape.config.kv_slots, page_, pd, hicache);
}

TraceKv::Req& TraceKv::req(int r) {
  if (static_cast<size_t>(r) >= reqs_.size()) reqs_.resize(static_cast<size_t>(r) + 1);
  return reqs_[static_cast<size_t>(r)];
}

int64_t TraceKv::hit_for(const SchedulerState& s, int r) {
  if (!prefix_cache_) return 0;
  const SimRequest& q = s.request(r);
  RankCache& cache = caches_[static_cast<size_t>(q.dp)];
  const std::vector<uint64_t>& hashes = s.hashes(r);
  const int64_t limit = std::min<int64_t>((q.known() - 1) / page_ * page_, static_cast<int64_t>(hashes.size()));
  int64_t len = 0;
  bool device = true;  // the device's pages first, then the host's
  for (int64_t first = 0; first + page_ <= limit; first += page_) {
    bool on_device = device, on_host = hicache_;
    for (int64_t p = first; p < first + page_; ++p) {
      const uint64_t h = hashes[static_cast<size_t>(p)];
      const std::optional<int64_t> slot = cache.find(h);
      on_device = on_device && slot && cache.kv(*slot).version == s.first_version(r, p);
      const HostCopy* copy = cache.host_copy(h);
      on_host = on_host && copy != nullptr && copy->kv.version == s.first_version(r, p);
    }
    if (!on_device && !on_host) break;
    device = on_device;
    len = first + page_;
  }
  // Only what earlier steps forwarded since the last flush (the tree holds no more than that).
  return s.forwarded_prefix(r, len) / page_ * page_;
}

bool TraceKv::continues_own_page(const RankCache& cache, const Req& q, int r, int64_t pos) const {
  if (pos == 0 || pos - 1 >= static_cast<int64_t>(q.slots.size())) return false;
  return cache.owner(cache.page_of(q.slots[static_cast<size_t>(pos - 1)])) == r;
}

// The walk's make_room_for: a new page for every row but one that continues its request's own
// page; one page per lagging row.
int64_t TraceKv::pages_needed(const SchedulerState& s, const RankCache& cache, int dp, const std::vector<Planned>& work,
                              int taker_req, const Req& taker) const {
  static const Req none;
  int64_t need = 0;
  for (const Planned& w : work) {
    if (s.request(w.req).dp != dp) continue;
    if (w.lag) {
      need += w.count;
      continue;
    }
    const Req& q = w.req == taker_req ? taker : static_cast<size_t>(w.req) < reqs_.size() ? reqs_[static_cast<size_t>(w.req)] : none;
    for (int64_t i = 0; i < w.count; ++i) {
      const int64_t pos = w.lo + i;
      const bool same_page = pos % page_ != 0 && (i > 0 || continues_own_page(cache, q, w.req, pos));
      need += same_page ? 0 : 1;
    }
  }
  return need;
}

// The walk's hit: device pages are shared (locked), host pages load back into new pages.
bool TraceKv::take_hit(RankCache& cache, Req& q, const SchedulerState& s, int r, int64_t len) const {
  const std::vector<uint64_t>& hashes = s.hashes(r);
  for (int64_t first = 0; first < len; first += page_) {
    bool on_device = true;
    for (int64_t p = first; p < first + page_; ++p) on_device = on_device && cache.find(hashes[static_cast<size_t>(p)]);
    if (on_device) {
      for (int64_t p = first; p < first + page_; ++p) {
        const int64_t slot = *cache.find(hashes[static_cast<size_t>(p)]);
        q.slots.push_back(slot);
        const int64_t page = cache.page_of(slot);
        if (std::find(q.pages.begin(), q.pages.end(), page) == q.pages.end()) {
          cache.ref(page, s.step());
          q.pages.push_back(page);
        }
      }
      continue;
    }
    if (!cache.make_room(1)) return false;
    const int64_t page = cache.take(-1, first / page_);
    cache.keep_in_tree(page, s.step());
    q.pages.push_back(page);
    for (int64_t p = first; p < first + page_; ++p) {
      const uint64_t h = hashes[static_cast<size_t>(p)];
      const int64_t slot = cache.slot_of(page, p % page_);
      cache.kv(slot) = cache.host_copy(h)->kv;
      cache.publish(slot, h);
      q.slots.push_back(slot);
    }
  }
  return true;
}

// The walk's events that take KV: a hit (take_hit), a restore (the offloaded positions into
// new pages), a P/D hand-off (the prompt's positions into new pages).
bool TraceKv::apply(RankCache& cache, Req& q, const SchedulerState& s, const Taking& taking) const {
  switch (taking.kind) {
    case Taking::Kind::none: return true;
    case Taking::Kind::hit: return take_hit(cache, q, s, taking.req, taking.len);
    case Taking::Kind::restore:
    case Taking::Kind::handoff: {
      const bool restore = taking.kind == Taking::Kind::restore;
      const int64_t count = restore ? static_cast<int64_t>(q.saved.size()) : s.request(taking.req).prompt_len;
      if (!cache.make_room((count + page_ - 1) / page_)) return false;
      for (int64_t p = 0; p < count; ++p) {
        const int64_t slot = place(cache, q, taking.req, p);
        cache.kv(slot) = restore ? q.saved[static_cast<size_t>(p)] : RouteRef{RouteRef::Kind::route, taking.req, p, s.version()};
      }
      q.saved.clear();
      return true;
    }
  }
  return true;
}

bool TraceKv::fits(const SchedulerState& s, int dp, const Taking& taking, const std::vector<Planned>& extra) const {
  RankCache probe = caches_[static_cast<size_t>(dp)];
  static const Req none;
  Req taker = taking.req >= 0 && static_cast<size_t>(taking.req) < reqs_.size() ? reqs_[static_cast<size_t>(taking.req)] : none;
  if (!apply(probe, taker, s, taking)) return false;
  std::vector<Planned> work = planned_;
  work.insert(work.end(), extra.begin(), extra.end());
  return probe.make_room(pages_needed(s, probe, dp, work, taking.req, taker));
}

void TraceKv::take(const SchedulerState& s, const Taking& taking) {
  const bool taken = apply(caches_[static_cast<size_t>(s.request(taking.req).dp)], req(taking.req), s, taking);
  R3_CHECK(taken, "KV is taken only after fits() said it fits");
}

void TraceKv::release(const SchedulerState& s, int r) {
  Req& q = req(r);
  RankCache& cache = caches_[static_cast<size_t>(s.request(r).dp)];
  for (const int64_t page : q.pages) cache.unref(page);
  q.pages.clear();
  q.slots.clear();
}

void TraceKv::offload(const SchedulerState& s, int r) {
  Req& q = req(r);
  RankCache& cache = caches_[static_cast<size_t>(s.request(r).dp)];
  q.saved.clear();
  for (const int64_t slot : q.slots) q.saved.push_back(cache.kv(slot));
  release(s, r);
}

int64_t TraceKv::place(RankCache& cache, Req& q, int r, int64_t pos) const {
  R3_CHECK(pos == static_cast<int64_t>(q.slots.size()), "positions take slots in order");
  int64_t slot = 0;
  if (pos % page_ != 0 && continues_own_page(cache, q, r, pos)) {
    slot = q.slots.back() + 1;
  } else {
    const int64_t page = cache.take(r, pos / page_);
    q.pages.push_back(page);
    slot = cache.slot_of(page, pos % page_);
  }
  q.slots.push_back(slot);
  return slot;
}

void TraceKv::forward(const SchedulerState& s) {
  for (int dp = 0; dp < static_cast<int>(caches_.size()); ++dp) {
    static const Req none;
    const bool room = caches_[static_cast<size_t>(dp)].make_room(pages_needed(s, caches_[static_cast<size_t>(dp)], dp, planned_, -1, none));
    R3_CHECK(room, "the step's work was planned only while fits() said it fits");
  }
  std::vector<std::pair<int, int64_t>> lag_pages;
  for (const Planned& w : planned_) {
    const int dp = s.request(w.req).dp;
    RankCache& cache = caches_[static_cast<size_t>(dp)];
    if (w.lag) {  // a slot allocated before the request's release, and freed by it
      for (int64_t i = 0; i < w.count; ++i) lag_pages.emplace_back(dp, cache.take(-1, (w.lo + i) / page_));
      continue;
    }
    Req& q = req(w.req);
    const std::vector<uint64_t>& hashes = s.hashes(w.req);
    for (int64_t i = 0; i < w.count; ++i) {
      const int64_t pos = w.lo + i;
      const int64_t slot = place(cache, q, w.req, pos);
      if (i >= w.kept || pos >= static_cast<int64_t>(hashes.size())) continue;
      cache.kv(slot) = RouteRef{RouteRef::Kind::route, w.req, pos, s.version()};
      cache.publish(slot, hashes[static_cast<size_t>(pos)]);
    }
    if (w.kept < w.count) {  // a verify's rejected drafts: their slots go back
      q.slots.resize(static_cast<size_t>(w.lo + w.kept));
      std::vector<int64_t> kept;
      for (const int64_t page : q.pages) {
        const bool used = std::any_of(q.slots.begin(), q.slots.end(), [&](int64_t slot) { return cache.page_of(slot) == page; });
        if (used) kept.push_back(page);
        else cache.unref(page);
      }
      q.pages = std::move(kept);
    }
  }
  for (const auto& [dp, page] : lag_pages) caches_[static_cast<size_t>(dp)].unref(page);
  planned_.clear();
}

void TraceKv::end(const SchedulerState& s, int r) {
  Req& q = req(r);
  RankCache& cache = caches_[static_cast<size_t>(s.request(r).dp)];
  if (prefix_cache_) {
    const std::vector<uint64_t>& hashes = s.hashes(r);
    const int64_t keyed = std::min<int64_t>(static_cast<int64_t>(q.slots.size()), static_cast<int64_t>(hashes.size()));
    for (const int64_t page : q.pages) {
      const int64_t first = cache.depth(page) * page_;
      if (cache.owner(page) != r || first + page_ > keyed) continue;
      cache.keep_in_tree(page, s.step());
      for (int64_t p = first; p < first + page_; ++p)
        cache.publish(q.slots[static_cast<size_t>(p)], hashes[static_cast<size_t>(p)]);
    }
  }
  release(s, r);
}

void TraceKv::flush() {
  for (RankCache& cache : caches_) cache.flush();
}

}  // namespace r3::sglang
