// vLLM main's AuxOutput connector ("V4"; docs/lifecycle-contract.md 2.3), walked over a trace.
// Sources (vllm-project/vllm, confirmed in the contract): vllm/distributed/aux_output_connector/
// worker.py @ f99d53b (AuxOutputWorkerConnector.process_output, _publish_blocks, begin_step),
// connector.py @ 09155ae (AuxOutputSchedulerConnector.build_connector_meta, take_output,
// request_finished, reset), routed_experts.py @ 2d4ff1f (RoutedExpertsBuffer.capture,
// publish_routed_experts, materialize_routed_experts), store.py @ 159bfe5 (BlockObjectStore:
// lifecycle_block_store.hpp).
//
// Per DP rank, one scheduler connector, one worker connector and its store. Per step:
//  - build_connector_meta (V1, V4): for each scheduled request, in the scheduler's order, the
//    block hashes of its known tokens not yet sent and its emit start, max(prompt_start, 0 with
//    no output yet, else num_tokens - 1); a hash-only update for each tracked request not
//    scheduled; the requests request_finished queued since the last metadata, with their final
//    hashes. A finish or a preemption before the schedule (an abort, N4 (a)) is in this step's
//    metadata; one in result processing is in the next step's, or the one after under async
//    scheduling, whose scheduler runs a step ahead. A prefix-cache reset (V3) starts a new
//    generation: no hash counts, no queued finishes.
//  - begin_step: a new generation releases every key the worker holds and drops every request
//    state; each scheduled request gets a state at its emit start; each hash sent becomes a key
//    under the worker's generation, retained; a finished request's keys are released; one put
//    publishes the blocks that waited for their keys, with those retains and releases; the
//    finished states go.
//  - process_output, in Model Runner V2's batch order (sort_batch_req_ids, model_runner.py @
//    0036d38d: requests with drafts first, then those scheduling decode_query_len tokens, then by
//    scheduled tokens, stably): the rows without the rejected spec suffix go into the request's
//    tail from its capture cursor (it must not move backwards; a gap reattaches); a request the
//    step sampled for emits from its emit cursor, from this step's rows or, when the cursor lies
//    before them, by materializing from the store (after one put has published the whole batch).
//    The scheduler cuts each step's rows to num_tokens - 1 (V5, take_output).
// A failed put or a missing object raises BlockObjectStoreError (V6): the engine crashes. In
// vLLM a put runs on the BackgroundBlockObjectStore's thread and its failure surfaces at the next
// store call; the walk reports it at the put's step.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "reference/engines/vllm/lifecycle_block_store.hpp"
#include "reference/engines/vllm/lifecycle_versions.hpp"
#include "reference/engines/vllm/lifecycle_walk.hpp"

namespace r3::vllm {
namespace {

// AuxOutputWorkerConnector's per-request state (_WorkerRequestState) and its tail in
// RoutedExpertsBuffer.
struct Worker {
  int64_t capture_cursor = -1;  // None
  int64_t scheduled_cursor = 0;
  int64_t emit_cursor = 0;
  std::vector<BlockKey> keys;             // aux_output_keys: one per block hash sent
  std::map<int64_t, RouteRef> captured;   // rows this state captured, by position
  std::set<int64_t> completed;            // blocks it completed (published or pending)
  std::map<int64_t, uint64_t> pending;    // completed blocks awaiting their key: block -> KV versions
};

// A request_finished call the next metadata delivers.
struct Finished {
  int req = 0;
  int64_t hashes = 0;     // len(request.block_hashes) at the call
  int deliver_step = 0;   // the first step whose metadata carries it
};

// One DP rank: its scheduler connector's state, its worker connector's and its store.
struct Rank {
  explicit Rank(int64_t slots) : store(slots) {}
  // AuxOutputSchedulerConnector
  std::map<int, std::pair<int64_t, int64_t>> sent;  // request -> (insertion order, hashes sent)
  int64_t next_order = 0;
  std::vector<Finished> finished;
  int generation = 0;
  // AuxOutputWorkerConnector
  int worker_generation = 0;
  std::map<int, Worker> states;
  BlockObjectStore store;
};

// An emission whose start lies before the step's capture start (materialize_outputs).
struct Materialize {
  int req = 0;
  int64_t start = 0;
  int64_t end = 0;  // the worker's token_end
  int64_t cut = 0;  // the scheduler's num_tokens - 1
};

std::string hex(uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof text, "0x%016llx", static_cast<unsigned long long>(v));
  return text;
}

class BlockStoreWalk final : public WalkObserver {
 public:
  BlockStoreWalk(const Trace& t, const Timeline& timeline, const KvCache& kv, BlockStoreFixes fixes)
      : t_(t), timeline_(timeline), kv_(kv), fixes_(fixes), page_(std::max<int64_t>(t.config.page, 1)),
        tokens_known_(t.requests.size(), 0), reemit_(t.requests.size(), false), done_(t.requests.size(), false),
        emitted_(t.requests.size()) {
    // One object per KV block of the pool, the null block included; unbounded under patch
    // store-capacity.
    const int64_t slots = fixes.unbounded_store ? 0 : std::max<int64_t>(t.config.kv_slots / page_, 0) + 1;
    for (int d = 0; d < std::max(t.dp, 1); ++d) ranks_.emplace_back(slots);
    for (size_t r = 0; r < t.requests.size(); ++r) tokens_known_[r] = timeline.requests[r].prompt_len;
  }

  void begin_step(int /*step*/) override { forwarded_ = false; }

  void after_event(int step, const TraceEvent& e, int /*version*/) override {
    if (e.kind == TraceEvent::Kind::weight_update) {
      // V3: only a prefix-cache reset (a flush) starts a new generation (connector.py: reset).
      if (!e.flush) return;
      for (Rank& k : ranks_) {
        k.sent.clear();
        k.finished.clear();
        ++k.generation;
      }
      return;
    }
    if (e.kind != TraceEvent::Kind::preempt || e.req < 0 || e.req >= static_cast<int>(t_.requests.size())) return;
    // N4 (a): a preemption calls request_finished, as vLLM's own test expects
    // (test_scheduler_connector_recreates_preempted_request_state, tests/distributed/
    // aux_output_connector/test_store.py @ 09155ae); the resumed request starts a new state.
    request_finished(e.req, step);
    // Patch preempt-reemit: the rows streamed before the preemption are withdrawn and the
    // resumed request streams again from its prompt start, so positions recomputed at another
    // weight version are the recompute's (T2).
    if (fixes_.reemit_after_preemption) {
      emitted_[e.req].clear();
      reemit_[e.req] = true;
    }
  }

  std::optional<std::string> forward(const ScheduledRun& run, std::span<const RouteRef> delivered) override {
    batch_.push_back({run, std::vector<RouteRef>(delivered.begin(), delivered.end())});
    return std::nullopt;
  }

  std::optional<std::string> end_forward(int step) override {
    forwarded_ = true;
    std::vector<Scheduled> batch;
    batch.swap(batch_);
    for (size_t d = 0; d < ranks_.size(); ++d) {
      std::vector<const Scheduled*> mine;
      for (const Scheduled& x : batch)
        if (x.run.dp == static_cast<int>(d)) mine.push_back(&x);
      // Every step delivers its metadata, a step that schedules nothing on this rank included,
      // so a preemption's teardown reaches the worker before the request resumes (N4 (a)).
      if (auto crash = apply_metadata(ranks_[d], mine, step)) return crash;
      if (mine.empty()) continue;
      if (auto crash = process_output(ranks_[d], mine)) return crash;
    }
    for (const Scheduled& x : batch)
      if (!x.run.lagging) tokens_known_[x.run.work.req] = std::max(tokens_known_[x.run.work.req], x.run.tokens_after);
    return std::nullopt;
  }

  void finish(int step, int req) override {
    done_[req] = true;
    // An abort before the forward reaches this step's metadata; a finish in result processing
    // the next step's (under async scheduling the one after: the scheduler runs a step ahead,
    // and the request's lagging forward still uses its state).
    request_finished(req, forwarded_ ? step + (t_.config.overlap ? 2 : 1) : step);
  }

  LifecycleOutcome outcome(const WalkResult& walked) {
    return make_outcome(timeline_, walked, done_, std::move(emitted_));
  }

 private:
  struct Scheduled {
    ScheduledRun run;
    std::vector<RouteRef> delivered;
  };

  Rank& rank_of(int req) { return ranks_[static_cast<size_t>(std::clamp(t_.requests[req].dp, 0, static_cast<int>(ranks_.size()) - 1))]; }

  // len(request.block_hashes): full blocks of the request's known tokens whose hash the trace
  // defines.
  int64_t hashes_known(int req, int64_t tokens) const {
    const auto known = static_cast<int64_t>(timeline_.requests[req].prefix_hash.size());
    return std::min(tokens, known) / page_;
  }

  uint64_t block_hash(int req, int64_t b) const {
    return timeline_.requests[req].prefix_hash[static_cast<size_t>((b + 1) * page_ - 1)];
  }

  // AuxOutputSchedulerConnector.request_finished: a tracked request's final hashes, queued.
  void request_finished(int req, int deliver_step) {
    Rank& k = rank_of(req);
    const auto found = k.sent.find(req);
    if (found == k.sent.end()) return;
    k.sent.erase(found);
    k.finished.push_back({req, hashes_known(req, tokens_known_[req]), deliver_step});
  }

  // build_connector_meta, then AuxOutputWorkerConnector.begin_step with it.
  std::optional<std::string> apply_metadata(Rank& k, const std::vector<const Scheduled*>& runs, int step) {
    std::vector<std::pair<int, int64_t>> requests;                    // request -> emit start
    std::vector<std::pair<int, std::pair<int64_t, int64_t>>> hashes;  // request -> new hashes [from, to)
    std::set<int> scheduled;
    for (const Scheduled* x : runs) {
      const int r = x->run.work.req;
      if (!scheduled.insert(r).second) continue;
      auto [at, fresh] = k.sent.try_emplace(r, std::pair<int64_t, int64_t>{k.next_order, 0});
      if (fresh) ++k.next_order;
      const int64_t known = hashes_known(r, x->run.tokens_before);
      if (known > at->second.second) hashes.push_back({r, {at->second.second, known}});
      at->second.second = std::max(at->second.second, known);
      const int64_t prompt = timeline_.requests[r].prompt_len;
      const int64_t start = t_.requests[r].start_len;
      const bool has_output = x->run.tokens_before > prompt;
      requests.push_back({r, reemit_[r] ? start : std::max(start, has_output ? x->run.tokens_before - 1 : 0)});
      // Patch preempt-reemit: the prompt start is sent until a step samples for the request (its
      // emission then starts there); a later start past the worker's emit cursor would trip
      // begin_step's "emit cursor moved ahead".
      if (x->run.sampled) reemit_[r] = false;
    }
    if (k.sent.size() != scheduled.size()) {
      std::vector<std::pair<int64_t, int>> tracked;  // in insertion order
      for (const auto& [r, entry] : k.sent)
        if (!scheduled.count(r)) tracked.push_back({entry.first, r});
      std::sort(tracked.begin(), tracked.end());
      for (const auto& [order, r] : tracked) {
        auto& sent = k.sent[r].second;
        const int64_t known = hashes_known(r, tokens_known_[r]);
        if (known > sent) hashes.push_back({r, {sent, known}});
        sent = std::max(sent, known);
      }
    }
    std::vector<int> finished;
    std::vector<Finished> later;
    for (const Finished& f : k.finished) {
      if (f.deliver_step > step) {
        later.push_back(f);
        continue;
      }
      finished.push_back(f.req);
      const auto state = k.states.find(f.req);
      const int64_t sent = state == k.states.end() ? 0 : static_cast<int64_t>(state->second.keys.size());
      if (f.hashes > sent) hashes.push_back({f.req, {sent, f.hashes}});
    }
    k.finished.swap(later);

    // begin_step
    for (int r : finished) {
      if (scheduled.count(r))
        return "AssertionError: auxiliary output request cannot run and finish in one step (request " +
               std::to_string(r) + ")";
    }
    std::vector<BlockKey> release;
    if (k.generation > k.worker_generation) {
      for (auto& [r, w] : k.states) release.insert(release.end(), w.keys.rbegin(), w.keys.rend());
      k.states.clear();
      k.worker_generation = k.generation;
    }
    for (const auto& [r, emit] : requests) {
      const auto [state, fresh] = k.states.try_emplace(r);
      if (fresh) {
        state->second.emit_cursor = emit;
      } else if (emit > state->second.emit_cursor) {
        return "AssertionError: auxiliary output Scheduler emit cursor moved ahead (request " + std::to_string(r) + ")";
      }
    }
    std::vector<BlockKey> retain;
    std::vector<int> publishing;
    for (const auto& [r, range] : hashes) {
      Worker& w = k.states[r];
      // The worker's keys extend from wherever its state stands: a state a generation change
      // dropped starts again at the block its hashes resume from.
      for (int64_t b = static_cast<int64_t>(w.keys.size()); b < range.second; ++b) {
        const BlockKey key{k.worker_generation, block_hash(r, b), 0};
        w.keys.push_back(key);
        retain.push_back(key);
      }
      publishing.push_back(r);
    }
    for (int r : finished) {
      const Worker& w = k.states[r];
      release.insert(release.end(), w.keys.rbegin(), w.keys.rend());
    }
    if (auto failed = publish(k, publishing, retain, release)) return failed;
    for (int r : finished) k.states.erase(r);
    return std::nullopt;
  }

  // process_output for one rank's share of the batch, in Model Runner V2's order.
  std::optional<std::string> process_output(Rank& k, std::vector<const Scheduled*> runs) {
    const int64_t decode_query_len = 1 + (t_.config.spec ? t_.config.spec->width : 0);
    const auto order = [&](const Scheduled* x) {
      const int64_t tokens = x->run.hi - x->run.lo;
      return std::tuple(x->run.work.kind != Work::Kind::verify, tokens != decode_query_len, tokens);
    };
    std::stable_sort(runs.begin(), runs.end(), [&](const Scheduled* a, const Scheduled* b) { return order(a) < order(b); });
    std::vector<Materialize> materialize;
    std::vector<int> batch;
    for (const Scheduled* x : runs) {
      const ScheduledRun& run = x->run;
      const int r = run.work.req;
      Worker& w = k.states[r];
      // The rejected spec suffix is dropped before capture.
      const int64_t kept = std::min<int64_t>(run.kept_end - run.lo, static_cast<int64_t>(x->delivered.size()));
      int64_t capture_start = run.lo;
      const int64_t cursor = w.capture_cursor < 0 ? capture_start : w.capture_cursor;
      if (capture_start < cursor) {
        return "AssertionError: auxiliary output capture moved backwards (request " + std::to_string(r) +
               " captures from " + std::to_string(capture_start) + ", its cursor is at " + std::to_string(cursor) + ")";
      }
      if (capture_start > cursor) {
        if (cursor >= w.scheduled_cursor)
          return "AssertionError: auxiliary output capture has an unbacked token gap (request " + std::to_string(r) + ")";
        capture_start = cursor;  // reattach after a rejected optimistic suffix
      }
      const int64_t emit_start = w.emit_cursor;
      for (int64_t i = 0; i < kept; ++i) w.captured[capture_start + i] = x->delivered[static_cast<size_t>(i)];
      const int64_t token_end = capture_start + kept;
      w.capture_cursor = token_end;
      w.scheduled_cursor = run.hi;
      for (int64_t b = capture_start / page_; (b + 1) * page_ <= token_end; ++b) {
        if (w.completed.count(b) || !captured_block(w, b)) continue;
        w.completed.insert(b);
        w.pending[b] = block_versions(r, b);
      }
      batch.push_back(r);

      // A lagging forward belongs to a finished request: the scheduler takes nothing from it.
      if (run.lagging || !run.sampled || emit_start >= token_end) continue;
      const int64_t cut = run.tokens_after - 1;  // take_output
      if (emit_start >= capture_start) {
        for (int64_t p = emit_start; p < std::min(token_end, cut); ++p) emitted_[r].push_back(w.captured[p]);
        w.emit_cursor = token_end;
      } else {
        materialize.push_back({r, emit_start, token_end, cut});
      }
    }
    if (auto failed = publish(k, batch, {}, {})) return failed;  // the whole batch first
    for (const Materialize& m : materialize) {
      if (auto crash = materialize_rows(k, m)) return crash;
    }
    return std::nullopt;
  }

  bool captured_block(const Worker& w, int64_t b) const {
    for (int64_t p = b * page_; p < (b + 1) * page_; ++p) {
      if (!w.captured.count(p)) return false;
    }
    return true;
  }

  // The weight versions of every position of block b's KV, folded: under the patch a block whose
  // rows span a weight update is an object of its own, apart from one computed wholly after it.
  uint64_t block_versions(int req, int64_t b) const {
    uint64_t folded = 0xcbf29ce484222325ull;
    for (int64_t p = b * page_; p < (b + 1) * page_; ++p)
      folded = (folded ^ static_cast<uint64_t>(kv_.kv_version(req, p) + 1)) * 0x100000001b3ull;
    return folded;
  }

  BlockKey versioned(BlockKey key, uint64_t versions) const {
    if (fixes_.key_by_kv_version) key.versions = versions;
    return key;
  }

  // _publish_blocks and one BlockObjectStore.put: each pending block of `reqs` (in that order)
  // whose key has been sent becomes an object, with the put's retains and releases.
  std::optional<std::string> publish(Rank& k, const std::vector<int>& reqs, const std::vector<BlockKey>& retain,
                                     const std::vector<BlockKey>& release) {
    std::vector<std::pair<BlockKey, BlockObject>> objects;
    for (int req : reqs) {
      Worker& w = k.states[req];
      for (auto it = w.pending.begin(); it != w.pending.end();) {
        const int64_t b = it->first;
        if (b >= static_cast<int64_t>(w.keys.size())) {
          ++it;
          continue;
        }
        BlockObject object;
        for (int64_t p = b * page_; p < (b + 1) * page_; ++p) object.push_back(w.captured[p]);
        objects.emplace_back(versioned(w.keys[static_cast<size_t>(b)], it->second), std::move(object));
        it = w.pending.erase(it);
      }
    }
    if (objects.empty() && retain.empty() && release.empty()) return std::nullopt;
    return k.store.put(objects, retain, release);
  }

  // materialize_routed_experts: the keyed full blocks from the store, the rest from the tail.
  std::optional<std::string> materialize_rows(Rank& k, const Materialize& m) {
    Worker& w = k.states[m.req];
    const int64_t stored_end = std::min(m.end / page_, static_cast<int64_t>(w.keys.size())) * page_;
    std::vector<RouteRef> rows;
    int64_t p = m.start;
    if (p < stored_end) {
      std::vector<BlockKey> keys;
      for (int64_t b = p / page_; b < stored_end / page_; ++b)
        keys.push_back(versioned(w.keys[static_cast<size_t>(b)], block_versions(m.req, b)));
      const auto objects = k.store.get(keys);
      if (!objects) {
        return "BlockObjectStoreError: auxiliary output object does not exist; the object may have been evicted "
               "(request " + std::to_string(m.req) + ", blocks " + std::to_string(p / page_) + " to " +
               std::to_string(stored_end / page_ - 1) + ", generation " + std::to_string(keys.front().generation) +
               ", first block hash " + hex(keys.front().hash) + ", limit " + std::to_string(k.store.slots()) + " objects)";
      }
      for (; p < stored_end; ++p) {
        const BlockObject& object = *(*objects)[static_cast<size_t>(p / page_ - m.start / page_)];
        rows.push_back(object[static_cast<size_t>(p % page_)]);
      }
    }
    for (; p < m.end; ++p) {
      const auto it = w.captured.find(p);
      rows.push_back(it == w.captured.end() ? RouteRef{} : it->second);
    }
    const int64_t keep = std::max<int64_t>(0, m.cut - m.start);
    if (static_cast<int64_t>(rows.size()) > keep) rows.resize(static_cast<size_t>(keep));
    emitted_[m.req].insert(emitted_[m.req].end(), rows.begin(), rows.end());
    w.emit_cursor = m.end;
    return std::nullopt;
  }

  const Trace& t_;
  const Timeline& timeline_;
  const KvCache& kv_;
  BlockStoreFixes fixes_;
  int64_t page_;
  std::vector<Rank> ranks_;
  std::vector<int64_t> tokens_known_;  // per request: num_tokens after its latest forward
  std::vector<bool> reemit_;
  std::vector<bool> done_;
  std::vector<std::vector<RouteRef>> emitted_;
  std::vector<Scheduled> batch_;  // this step's forwards, in the scheduler's order
  bool forwarded_ = false;  // this step's forward ran (a finish now is result processing's)
};

}  // namespace

LifecycleOutcome run_block_store(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                                 BlockStoreFixes fixes) {
  KvCache kv(t, timeline);
  BlockStoreWalk walk(t, timeline, kv, fixes);
  const WalkResult walked = walk_trace(t, timeline, delivery, kv, &walk);
  return walk.outcome(walked);
}

}  // namespace r3::vllm
