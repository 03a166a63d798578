// Sources: SGLang upstream main (U) at 30cb848d4b455a288a37cfeb6a45aff34f5634a6 and sglang-miles (M)
// at c447264eba460045e6e961fd7cf1bfbaf038db6b, paths under python/sglang/srt/, as
// docs/lifecycle-contract.md sections 2.1 and 2.2 cite them.
#include "reference/engines/sglang/lifecycle_run.hpp"

#include <algorithm>
#include <string>
#include <unordered_map>
#include <vector>

#include "reference/engines/sglang/lifecycle_batch.hpp"
#include "reference/engines/sglang/lifecycle_cache.hpp"
#include "reference/engines/sglang/lifecycle_copies.hpp"
#include "reference/engines/sglang/lifecycle_knobs.hpp"
#include "reference/engines/sglang/lifecycle_step_case.hpp"

namespace r3::sglang {
namespace {

std::string str(int64_t v) { return std::to_string(v); }

RouteRef route_of(int req, int64_t pos, int version) { return RouteRef{RouteRef::Kind::route, req, pos, version}; }

struct Refused {
  std::string why;
};

// What the walk knows of one request.
struct Req {
  int id = 0;
  int rank = 0;
  std::vector<int64_t> slots;  // req_to_token: the slot of each position whose KV it holds
  std::vector<int64_t> pages;  // the pages it holds, once each
  // Per position, its KV and row when the request last let them go (a retract or an offload):
  // what a fix that keeps them has to answer with.
  std::vector<HostCopy> saved;
  int64_t offloaded = -1;  // the positions on host while offloaded, else -1
  int64_t sampled = 0;     // tokens sampled so far (the prefill instance's first one included)
  bool handed_off = false;
  int handoff_version = 0;
  bool ended = false;
};

class Walker {
 public:
  Walker(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery, const Behaviour& b)
      : t_(t), tl_(timeline), delivery_(delivery), b_(b), knobs_(knobs_of(t)), done_(copy_completions(t, knobs_)) {
    const bool pd = std::any_of(t.steps.begin(), t.steps.end(), [](const TraceStep& s) {
      return std::any_of(s.events.begin(), s.events.end(),
                         [](const TraceEvent& e) { return e.kind == TraceEvent::Kind::pd_handoff; });
    });
    // A P/D instance's allocator sorts its free pages (mem_cache/kv_cache_configurator.py:
    // need_sort for disaggregation decode and prefill).
    for (int d = 0; d < t.dp; ++d) caches_.emplace_back(t.config.kv_slots, t.config.page, pd, knobs_.hicache);
    size_t positions = 0;
    for (size_t r = 0; r < t.requests.size(); ++r) {
      positions += t.requests[r].prompt.size() + t.requests[r].outputs.size();
      Req& q = reqs_.emplace_back();
      q.id = static_cast<int>(r);
      q.rank = t.requests[r].dp;
    }
    out_.outcome.requests.resize(t.requests.size());
    truth_.reserve(positions);  // at most one entry a position: no rehash in a long trace
  }

  WalkResult run() {
    for (int n = 0; n < static_cast<int>(t_.steps.size()); ++n) {
      try_step(n);
      if (out_.refused_at || out_.outcome.crash_step) break;
    }
    return std::move(out_);
  }

 private:
  void try_step(int n) {
    std::optional<Refused> refused = step(n);
    if (refused) {
      out_.refused_at = n;
      out_.refusal = refused->why;
    }
  }

  std::optional<Refused> step(int n) {
    const TraceStep& spec = t_.steps[static_cast<size_t>(n)];
    for (size_t e = 0; e < spec.events.size(); ++e) {
      const std::string where = "steps[" + str(n) + "].events[" + str(static_cast<int64_t>(e)) + "]." +
                                std::string(to_string(spec.events[e].kind));
      if (auto refused = event(n, spec.events[e], where)) return refused;
    }
    // A capture that raises takes the scheduler down with this step's forward.
    const StepDelivery& got = delivery_[static_cast<size_t>(n)];
    if (got.raised) {
      out_.outcome.crash_step = n;
      out_.outcome.crash = "step " + str(n) + ": " + *got.raised;
      return std::nullopt;
    }
    if (auto refused = forward(n)) return refused;
    // Result processing: requests that reached their finish are collected after this step's
    // rows are finalized (batch_result_processor.py: process_batch_result_prefill and
    // process_batch_result_decode call finalize before _maybe_collect_routed_experts).
    for (const int r : tl_.steps[static_cast<size_t>(n)].finished) end(r, n, collect(reqs_[static_cast<size_t>(r)]));
    return std::nullopt;
  }

  // ---- events, before the forward -------------------------------------------------------

  std::optional<Refused> event(int n, const TraceEvent& e, const std::string& where) {
    switch (e.kind) {
      case TraceEvent::Kind::weight_update: return weight_update(n, e, where);
      case TraceEvent::Kind::hit: return hit(n, reqs_[static_cast<size_t>(e.req)], e.len, where);
      case TraceEvent::Kind::preempt: retract(reqs_[static_cast<size_t>(e.req)], false); return std::nullopt;
      case TraceEvent::Kind::offload: retract(reqs_[static_cast<size_t>(e.req)], true); return std::nullopt;
      case TraceEvent::Kind::restore: return restore(reqs_[static_cast<size_t>(e.req)], where);
      case TraceEvent::Kind::pd_handoff: return handoff(reqs_[static_cast<size_t>(e.req)], where);
      case TraceEvent::Kind::abort: {
        const std::vector<int>& ended = tl_.steps[static_cast<size_t>(n)].aborted_before;
        Req& q = reqs_[static_cast<size_t>(e.req)];
        if (std::find(ended.begin(), ended.end(), e.req) != ended.end()) {
          abort_now(q, n);
        } else if (!decoding(q)) {
          // The timeline lets it run again and end there; SGLang ends it before its next chunk.
          return Refused{where + ": request " + str(e.req) +
                         " is not decoding (retracted, or in the middle of a chunked prefill), and SGLang's abort ends "
                         "it before it runs again (scheduler.py, abort_request and process_pending_chunked_abort)"};
        }
        // Else a decoding request: its abort lands at the next forward it runs in (scheduler.py,
        // abort_request: to_finish), and the timeline lists it as finished there.
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  std::optional<Refused> weight_update(int n, const TraceEvent& e, const std::string& where) {
    version_ = e.version;
    if (!e.flush) return std::nullopt;
    // scheduler_components/weight_updater.py, flush_cache_after_weight_update asserts that
    // scheduler.py, flush_cache succeeded, and flush_cache refuses unless is_fully_idle: no
    // request queued or running.
    for (const Req& q : reqs_) {
      const TraceRequest& r = t_.requests[static_cast<size_t>(q.id)];
      if (!q.ended && (!r.arrival || *r.arrival <= n)) {
        return Refused{where + ": request " + str(q.id) +
                       " is pending (queued or running), so flush_cache refuses and flush_cache_after_weight_update "
                       "asserts (\"Cache flush failed after updating weights\"; scheduler_components/weight_updater.py "
                       "@ 30cb848)"};
      }
    }
    for (RankCache& c : caches_) c.flush();
    truth_.clear();
    return std::nullopt;
  }

  // Match of the radix tree (mem_cache/radix_cache.py, match_prefix; the request's first `len`
  // positions map to the tree's slots, whose rows are those of the forward that computed them).
  // With HiCache a page evicted to host is loaded back into a new device page (the load-back,
  // mem_cache/hiradix_cache.py; srt/mem_cache has no reference to the capturer @ U, so upstream
  // leaves whatever the new slots held).
  std::optional<Refused> hit(int n, Req& q, int64_t len, const std::string& where) {
    RankCache& cache = caches_[static_cast<size_t>(q.rank)];
    const std::vector<uint64_t>& hashes = tl_.requests[static_cast<size_t>(q.id)].prefix_hash;
    const int64_t ps = cache.page_size();
    for (int64_t first = 0; first < len; first += ps) {
      bool on_device = true, on_host = knobs_.hicache;
      for (int64_t p = first; p < first + ps; ++p) {
        on_device = on_device && cache.find(hashes[static_cast<size_t>(p)]).has_value();
        on_host = on_host && cache.host_copy(hashes[static_cast<size_t>(p)]) != nullptr;
      }
      if (!on_device && !on_host) {
        return Refused{where + ": request " + str(q.id) + " position " + str(first) +
                       " is not in the radix tree of DP rank " + str(q.rank) +
                       (knobs_.hicache ? " nor on its HiCache host" : "") +
                       " (freed, evicted, or computed on another rank), so SGLang's match_prefix stops short of it"};
      }
      if (on_device) {
        for (int64_t p = first; p < first + ps; ++p) {
          const int64_t slot = *cache.find(hashes[static_cast<size_t>(p)]);
          if (auto refused = same_version(cache.kv(slot), hashes[static_cast<size_t>(p)], q, p, where)) return refused;
          q.slots.push_back(slot);
          const int64_t page = cache.page_of(slot);
          if (std::find(q.pages.begin(), q.pages.end(), page) == q.pages.end()) {
            cache.ref(page, n);
            q.pages.push_back(page);
          }
        }
        continue;
      }
      if (!cache.make_room(1)) return out_of_kv(where, q.rank, 1);
      const int64_t page = cache.take(-1, first / ps);
      cache.keep_in_tree(page, n);
      q.pages.push_back(page);
      for (int64_t p = first; p < first + ps; ++p) {
        const uint64_t h = hashes[static_cast<size_t>(p)];
        const HostCopy copy = *cache.host_copy(h);
        if (auto refused = same_version(copy.kv, h, q, p, where)) return refused;
        const int64_t slot = cache.slot_of(page, p % ps);
        cache.kv(slot) = copy.kv;
        if (b_.has(TracePatch::offload_rows)) cache.row(slot) = copy.row;
        cache.publish(slot, h);
        q.slots.push_back(slot);
      }
    }
    return std::nullopt;
  }

  // The timeline's prefix cache keeps the first forward since the last flush that computed each
  // prefix, on any rank; SGLang's tree on this rank may hold another copy. When the two differ
  // in weight version the truth and the engine disagree about which KV the hit uses: a
  // schedule the model does not claim to know.
  std::optional<Refused> same_version(const RouteRef& kv, uint64_t hash, const Req& q, int64_t p,
                                      const std::string& where) {
    const auto it = truth_.find(hash);
    if (it == truth_.end() || it->second.version == kv.version) return std::nullopt;
    return Refused{where + ": request " + str(q.id) + " position " + str(p) + ": the radix tree of DP rank " +
                   str(q.rank) + " holds the KV of weight version " + str(kv.version) +
                   ", the trace's prefix cache that of version " + str(it->second.version)};
  }

  // Decode retract (schedule_batch.py, release_req; ScheduleBatch.retract_decode): the KV is
  // released without being inserted into the tree and the request starts over
  // (Req.reset_for_retract). On a P/D decode instance the KV is first copied to host
  // (Req.offload_kv_cache) and later loaded into new slots (Req.load_kv_cache;
  // disaggregation/decode.py, resume_retracted_reqs). Either way its rows are kept here for the
  // fixes that need them.
  void retract(Req& q, bool offload) {
    RankCache& cache = caches_[static_cast<size_t>(q.rank)];
    if (q.saved.size() < q.slots.size()) q.saved.resize(q.slots.size());
    for (size_t p = 0; p < q.slots.size(); ++p) q.saved[p] = HostCopy{cache.kv(q.slots[p]), cache.row(q.slots[p])};
    if (offload) q.offloaded = static_cast<int64_t>(q.slots.size());
    release(q);
  }

  std::optional<Refused> restore(Req& q, const std::string& where) {
    RankCache& cache = caches_[static_cast<size_t>(q.rank)];
    const int64_t count = q.offloaded;
    const int64_t pages = (count + cache.page_size() - 1) / cache.page_size();
    if (!cache.make_room(pages)) return out_of_kv(where, q.rank, pages);
    for (int64_t p = 0; p < count; ++p) {
      const int64_t slot = place(q, p);
      cache.kv(slot) = q.saved[static_cast<size_t>(p)].kv;
      // Upstream copies the KV only: the new slots keep their earlier owners' rows.
      if (b_.has(TracePatch::offload_rows)) cache.row(slot) = q.saved[static_cast<size_t>(p)].row;
    }
    q.offloaded = -1;
    return std::nullopt;
  }

  // P/D: the decode instance preallocates the prompt's slots and receives the prefill's KV, with
  // no forward of its own (disaggregation/decode.py, _run_batch_prebuilt;
  // batch_result_processor.py, process_batch_result_prebuilt carries no rows). The prefill
  // instance finalizes its rows but never returns them (prefill.py,
  // process_batch_result_disagg_prefill) @ U.
  std::optional<Refused> handoff(Req& q, const std::string& where) {
    RankCache& cache = caches_[static_cast<size_t>(q.rank)];
    const int64_t prompt = tl_.requests[static_cast<size_t>(q.id)].prompt_len;
    const int64_t pages = (prompt + cache.page_size() - 1) / cache.page_size();
    if (!cache.make_room(pages)) return out_of_kv(where, q.rank, pages);
    for (int64_t p = 0; p < prompt; ++p) {
      const int64_t slot = place(q, p);
      cache.kv(slot) = route_of(q.id, p, version_);
      if (b_.has(TracePatch::pd_prompt_rows)) cache.row(slot) = route_of(q.id, p, version_);
    }
    q.handed_off = true;
    q.handoff_version = version_;
    q.sampled = 1;
    return std::nullopt;
  }

  // ---- the forward ------------------------------------------------------------------------

  std::optional<Refused> forward(int n) {
    const StepView& view = tl_.steps[static_cast<size_t>(n)];
    const std::vector<Segment> segments = segments_of(t_, tl_, n);
    if (auto refused = make_room_for(n, segments)) return refused;
    // The slot of every row: out_cache_loc, allocated in batch order (alloc_for_extend,
    // alloc_for_decode). A lagging row (overlap: a request that finished in the previous step's
    // result processing) writes a slot allocated before that release and freed by it.
    std::vector<std::vector<int64_t>> slots(view.rows.size());
    std::vector<std::pair<int, int64_t>> lag_pages;
    for (size_t d = 0; d < view.rows.size(); ++d) slots[d].resize(view.rows[d].size(), 0);
    for (const Segment& s : segments) {
      Req& q = reqs_[static_cast<size_t>(s.work->req)];
      RankCache& cache = caches_[static_cast<size_t>(s.rank)];
      for (size_t i = 0; i < s.count; ++i) {
        const int64_t pos = view.rows[static_cast<size_t>(s.rank)][s.first + i].pos;
        int64_t& slot = slots[static_cast<size_t>(s.rank)][s.first + i];
        if (s.lagging) {
          const int64_t page = cache.take(-1, pos / cache.page_size());
          lag_pages.emplace_back(s.rank, page);
          slot = cache.slot_of(page, pos % cache.page_size());
        } else {
          slot = place(q, pos);
        }
      }
    }
    write_rows(n, segments, slots);
    const int version = view.version;
    for (const Segment& s : segments) {
      if (s.lagging) continue;
      Req& q = reqs_[static_cast<size_t>(s.work->req)];
      RankCache& cache = caches_[static_cast<size_t>(s.rank)];
      const std::vector<uint64_t>& hashes = tl_.requests[static_cast<size_t>(q.id)].prefix_hash;
      for (size_t i = 0; i < s.count; ++i) {
        const BatchRow& row = view.rows[static_cast<size_t>(s.rank)][s.first + i];
        if (!row.kept) continue;
        const int64_t slot = slots[static_cast<size_t>(s.rank)][s.first + i];
        cache.kv(slot) = route_of(q.id, row.pos, version);
        // A chunk's pages reach the tree in result processing, after its rows are finalized
        // (process_batch_result_prefill: finalize precedes maybe_cache_unfinished_req); here every
        // kept position is matchable from the next step on, as the timeline's prefix cache has it.
        if (row.pos < static_cast<int64_t>(hashes.size())) {
          cache.publish(slot, hashes[static_cast<size_t>(row.pos)]);
          truth_.try_emplace(hashes[static_cast<size_t>(row.pos)], route_of(q.id, row.pos, version));
        }
      }
      if (s.work->kind == Work::Kind::verify) drop_rejected(q, s.work->lo + s.work->accepted + 1);
      const int64_t known = tl_.requests[static_cast<size_t>(q.id)].prompt_len + q.sampled;
      if (s.work->kind == Work::Kind::verify)
        q.sampled += s.work->accepted + 1;
      else if (s.work->kind == Work::Kind::decode || s.work->hi == known)
        ++q.sampled;
    }
    for (const auto& [rank, page] : lag_pages) caches_[static_cast<size_t>(rank)].unref(page);
    return std::nullopt;
  }

  // Pages the step's allocations need on each rank, made free before any is taken.
  std::optional<Refused> make_room_for(int n, const std::vector<Segment>& segments) {
    const StepView& view = tl_.steps[static_cast<size_t>(n)];
    std::vector<int64_t> need(view.rows.size(), 0);
    std::unordered_map<int, int64_t> last;  // the last position each request takes a slot for here
    for (const Segment& s : segments) {
      const Req& q = reqs_[static_cast<size_t>(s.work->req)];
      const RankCache& cache = caches_[static_cast<size_t>(s.rank)];
      for (size_t i = 0; i < s.count; ++i) {
        const int64_t pos = view.rows[static_cast<size_t>(s.rank)][s.first + i].pos;
        bool same_page = false;
        if (!s.lagging && pos % cache.page_size() != 0) {
          const auto it = last.find(q.id);
          same_page = it != last.end() ? it->second == pos - 1 : continues_own_page(q, pos);
        }
        if (!same_page) ++need[static_cast<size_t>(s.rank)];
        if (!s.lagging) last[q.id] = pos;
      }
    }
    for (size_t d = 0; d < need.size(); ++d)
      if (!caches_[d].make_room(need[d])) return out_of_kv("steps[" + str(n) + "]", static_cast<int>(d), need[d]);
    return std::nullopt;
  }

  bool continues_own_page(const Req& q, int64_t pos) const {
    if (pos == 0 || pos - 1 >= static_cast<int64_t>(q.slots.size())) return false;
    const RankCache& cache = caches_[static_cast<size_t>(q.rank)];
    return cache.owner(cache.page_of(q.slots[static_cast<size_t>(pos - 1)])) == q.id;
  }

  // The slot of position `pos` (the next one q holds): the next slot of its own last page, or
  // the first slot of a new page (paged.py, alloc_extend / alloc_decode).
  int64_t place(Req& q, int64_t pos) {
    R3_CHECK(pos == static_cast<int64_t>(q.slots.size()), "positions take slots in order");
    RankCache& cache = caches_[static_cast<size_t>(q.rank)];
    int64_t slot = 0;
    if (pos % cache.page_size() != 0 && continues_own_page(q, pos)) {
      slot = q.slots.back() + 1;
    } else {
      const int64_t page = cache.take(q.id, pos / cache.page_size());
      q.pages.push_back(page);
      slot = cache.slot_of(page, pos % cache.page_size());
    }
    q.slots.push_back(slot);
    return slot;
  }

  // A verify keeps q .. q + a; the rejected drafts' slots are freed (pages that only they used).
  void drop_rejected(Req& q, int64_t keep) {
    if (static_cast<int64_t>(q.slots.size()) <= keep) return;
    RankCache& cache = caches_[static_cast<size_t>(q.rank)];
    q.slots.resize(static_cast<size_t>(keep));
    std::vector<int64_t> still;
    for (const int64_t slot : q.slots) still.push_back(cache.page_of(slot));
    std::vector<int64_t> kept;
    for (const int64_t page : q.pages) {
      if (std::find(still.begin(), still.end(), page) != still.end())
        kept.push_back(page);
      else
        cache.unref(page);
    }
    q.pages = std::move(kept);
  }

  // The capture's rows land in the host cache at their slots (state_capturer/base.py,
  // on_forward_end and TopkCaptureOutput.finalize: window row i to host row out_cache_loc[i]);
  // padded rows go to slot 0 (S3).
  void write_rows(int n, const std::vector<Segment>& segments, const std::vector<std::vector<int64_t>>& slots) {
    // NGRAM's GenerationBatchResult never carries the capture's output, so under the overlap
    // scheduler no NGRAM forward reaches the host cache (speculative/ngram_worker.py,
    // NGRAMWorker.forward_batch_generation @ U, M). Without overlap the capture is written inline.
    const bool dropped = knobs_.spec_algorithm == SpecAlgorithm::ngram && t_.config.overlap &&
                         !b_.has(TracePatch::ngram_overlap_capture);
    if (!dropped) {
      std::vector<std::vector<RouteRef>> values = device_rows(n, segments);
      const std::vector<int64_t> padded = forward_rows(n);
      const int done = done_[static_cast<size_t>(n)];
      if (t_.config.overlap && !b_.has(TracePatch::overlap_copy_race) && done > n + 1) late_copy(n, done, values);
      for (size_t d = 0; d < values.size(); ++d) {
        RankCache& cache = caches_[d];
        R3_CHECK(values[d].size() == slots[d].size(), "a delivery holds one row per batch row");
        for (size_t x = 0; x < values[d].size(); ++x) cache.row(slots[d][x]) = values[d][x];
        if (padded[d] > static_cast<int64_t>(values[d].size())) cache.row(0) = RouteRef{RouteRef::Kind::padding};
      }
    }
    // The tree verify's KV move (N7: lifecycle_batch.hpp): accepted node k - a + i goes to slot
    // q + i. Upstream moves the KV only; the fix moves the route row with it.
    for (const Segment& s : segments) {
      if (!s.tree || !b_.has(TracePatch::tree_accept_rows)) continue;
      RankCache& cache = caches_[static_cast<size_t>(s.rank)];
      const int64_t width = static_cast<int64_t>(s.count) - 1;
      for (int64_t i = 1; i <= s.work->accepted; ++i) {
        const std::vector<int64_t>& at = slots[static_cast<size_t>(s.rank)];
        const int64_t from = at[s.first + static_cast<size_t>(tree_node_of_row(i, width, s.work->accepted))];
        cache.row(at[s.first + static_cast<size_t>(i)]) = cache.row(from);
      }
    }
  }

  // Rows of each rank's forward in step n, padding included: the delivery's, from the step the
  // judge derived for the per-step policy (LifecycleModel::forward_rows), else derived here.
  std::vector<int64_t> forward_rows(int n) const {
    const StepDelivery& got = delivery_[static_cast<size_t>(n)];
    if (got.forward_rows.empty()) return padded_rows(t_, tl_, n);
    std::vector<int64_t> out = got.forward_rows;
    const auto& rows = tl_.steps[static_cast<size_t>(n)].rows;
    out.resize(rows.size(), 0);
    for (size_t d = 0; d < out.size(); ++d) out[d] = std::max(out[d], static_cast<int64_t>(rows[d].size()));
    return out;
  }

  // What each rank's device buffer holds at row x after the forward: the capture of the batch
  // row the forward laid out there (a tree verify's rows in node order).
  std::vector<std::vector<RouteRef>> device_rows(int n, const std::vector<Segment>& segments) const {
    const StepDelivery& got = delivery_[static_cast<size_t>(n)];
    std::vector<std::vector<RouteRef>> values = got.rows;
    values.resize(tl_.steps[static_cast<size_t>(n)].rows.size());
    for (const Segment& s : segments) {
      if (!s.tree) continue;
      const std::vector<RouteRef>& rows = got.rows[static_cast<size_t>(s.rank)];
      const int64_t width = static_cast<int64_t>(s.count) - 1;
      for (size_t m = 0; m < s.count; ++m) {
        const int64_t row = tree_row_of_node(static_cast<int64_t>(m), width, s.work->accepted);
        values[static_cast<size_t>(s.rank)][s.first + m] = rows[s.first + static_cast<size_t>(row)];
      }
    }
    return values;
  }

  // S8 (docs/lifecycle-contract.md; N11): the copy of step n's window is a view of the device
  // buffer that nothing orders before the next forward (state_capturer/base.py,
  // BaseTopkCapturer.on_forward_end returns a view; managers/utils.py,
  // GenerationBatchResult.copy_to_cpu @ U, M). A copy that lands before step `done` (the trace's
  // copies record) reads what the forwards of steps n + 1 .. done - 1 left there, the last one
  // over the earlier: each writes its rows, then its padding; past those, step n's own stay.
  // (SGLang's window ends at done = n + 2: copy_window.) The fix clones the rows before the next
  // forward (patch overlap-copy-race), so its copy reads step n's rows whenever it lands.
  void late_copy(int n, int done, std::vector<std::vector<RouteRef>>& values) const {
    const int last = std::min(done - 1, static_cast<int>(t_.steps.size()) - 1);
    for (int k = n + 1; k <= last; ++k) {
      const std::vector<std::vector<RouteRef>> next = device_rows(k, segments_of(t_, tl_, k));
      const std::vector<int64_t> next_padded = forward_rows(k);
      for (size_t d = 0; d < values.size(); ++d) {
        const size_t real = d < next.size() ? next[d].size() : 0;
        const size_t padded = d < next_padded.size() ? std::max(real, static_cast<size_t>(next_padded[d])) : real;
        for (size_t x = 0; x < values[d].size(); ++x) {
          if (x < real)
            values[d][x] = next[d][x];
          else if (x < padded)
            values[d][x] = RouteRef{RouteRef::Kind::padding};
        }
      }
    }
  }

  // ---- ends ---------------------------------------------------------------------------------

  // S4: positions [s, S - 1) through req_to_token into the host cache (base.py,
  // BaseTopkCapturer.get_topk; batch_result_processor.py, _maybe_collect_routed_experts @ U).
  RequestRoutes collect(const Req& q) {
    const RequestView& v = tl_.requests[static_cast<size_t>(q.id)];
    const RankCache& cache = caches_[static_cast<size_t>(q.rank)];
    RequestRoutes out{RequestRoutes::Status::returned, {}};
    for (int64_t p = v.start; p < v.total - 1; ++p) {
      if (p < static_cast<int64_t>(q.slots.size()))
        out.rows.push_back(cache.row(q.slots[static_cast<size_t>(p)]));
      else
        out.rows.push_back(RouteRef{});
    }
    // sglang-miles M1 + M2: the prefill instance returns rows [s, P) when the KV transfer
    // succeeds (disaggregation/prefill.py, process_disagg_prefill_inflight_queue) and mini_lb keeps
    // them as the head of the decode's answer (sgl-model-gateway/.../mini_lb.py,
    // _merge_routed_experts @ M, from 6005dcc "[7/27]"). Any other router keeps the decode's.
    if (b_.mini_lb_splice && knobs_.pd_router == PdRouter::mini_lb && q.handed_off) {
      for (int64_t p = v.start; p < std::min(v.prompt_len, v.total - 1); ++p)
        out.rows[static_cast<size_t>(p - v.start)] = route_of(q.id, p, q.handoff_version);
    }
    return out;
  }

  // A request that holds the KV of every position but its next input is decoding; any other
  // started request is retracted (waiting queue), offloaded (the decode instance's retracted
  // queue) or in the middle of a chunked prefill or recompute.
  bool decoding(const Req& q) const {
    const int64_t known = tl_.requests[static_cast<size_t>(q.id)].prompt_len + q.sampled;
    return q.sampled > 0 && static_cast<int64_t>(q.slots.size()) >= known - 1;
  }

  // An abort the timeline ends before this step's forward: a waiting request, or one that
  // never runs again.
  void abort_now(Req& q, int n) {
    const RequestView& v = tl_.requests[static_cast<size_t>(q.id)];
    RequestRoutes out{RequestRoutes::Status::none, {}};
    if (v.returns_output && decoding(q)) {
      out = collect(q);
    } else if (v.returns_output && b_.has(TracePatch::aborted_rows)) {
      // The fix answers with the rows of the forwards the request had: those of the KV it holds,
      // and for the rest the rows it held when it let them go.
      const RankCache& cache = caches_[static_cast<size_t>(q.rank)];
      out.status = RequestRoutes::Status::returned;
      for (int64_t p = v.start; p < v.total - 1; ++p) {
        if (p < static_cast<int64_t>(q.slots.size()))
          out.rows.push_back(cache.row(q.slots[static_cast<size_t>(p)]));
        else if (p < static_cast<int64_t>(q.saved.size()))
          out.rows.push_back(q.saved[static_cast<size_t>(p)].row);
        else
          out.rows.push_back(RouteRef{});
      }
    }
    // Else upstream answers AbortReq, with no routes: abort_request pops a request from the
    // waiting queue or the decode instance's retracted queue, and process_pending_chunked_abort
    // ends a chunked prefill (scheduler.py @ U).
    end(q.id, n, std::move(out));
  }

  void end(int r, int n, RequestRoutes routes) {
    Req& q = reqs_[static_cast<size_t>(r)];
    out_.outcome.requests[static_cast<size_t>(r)] = std::move(routes);
    // cache_finished_req (radix_cache.py): the request's full pages of known tokens enter the
    // tree; its partial tail page is freed. Without the prefix cache everything is freed.
    if (t_.config.prefix_cache) {
      RankCache& cache = caches_[static_cast<size_t>(q.rank)];
      const std::vector<uint64_t>& hashes = tl_.requests[static_cast<size_t>(r)].prefix_hash;
      const int64_t keyed =
          std::min<int64_t>(static_cast<int64_t>(q.slots.size()), static_cast<int64_t>(hashes.size()));
      for (const int64_t page : q.pages) {
        const int64_t first = cache.depth(page) * cache.page_size();
        if (cache.owner(page) != r || first + cache.page_size() > keyed) continue;
        cache.keep_in_tree(page, n);
        for (int64_t p = first; p < first + cache.page_size(); ++p)
          cache.publish(q.slots[static_cast<size_t>(p)], hashes[static_cast<size_t>(p)]);
      }
    }
    release(q);
    q.saved.clear();
    q.ended = true;
  }

  void release(Req& q) {
    RankCache& cache = caches_[static_cast<size_t>(q.rank)];
    for (const int64_t page : q.pages) cache.unref(page);
    q.pages.clear();
    q.slots.clear();
  }

  Refused out_of_kv(const std::string& where, int rank, int64_t pages) const {
    return Refused{where + ": DP rank " + str(rank) + " needs " + str(pages) + " free KV pages of config.page = " +
                   str(t_.config.page) + " (config.kv_slots = " + str(t_.config.kv_slots) +
                   ", page 0 reserved) beyond what freeing and evicting give; SGLang's scheduler retracts or waits "
                   "rather than run it (schedule_policy.py, PrefillAdder; ScheduleBatch.check_decode_mem)"};
  }

  const Trace& t_;
  const Timeline& tl_;
  std::span<const StepDelivery> delivery_;
  Behaviour b_;
  LifecycleKnobs knobs_;
  std::vector<int> done_;  // per step: before which step's forward its copy lands (lifecycle_copies.hpp)
  std::vector<RankCache> caches_;
  std::vector<Req> reqs_;
  std::unordered_map<uint64_t, RouteRef> truth_;  // the timeline's prefix cache: first forward since the last flush
  int version_ = 0;
  WalkResult out_;
};

}  // namespace

WalkResult walk_trace(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                      const Behaviour& behaviour) {
  R3_CHECK(delivery.size() == t.steps.size(), "one delivery per step");
  return Walker(t, timeline, delivery, behaviour).run();
}

}  // namespace r3::sglang
