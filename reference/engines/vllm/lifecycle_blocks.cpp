// vLLM main's AuxOutput connector ("V4"; docs/lifecycle-contract.md 2.3), walked over a trace.
// Sources (vllm-project/vllm, confirmed in the contract): vllm/distributed/aux_output_connector/
// worker.py @ f99d53b (AuxOutputWorkerConnector.process_output, _publish_blocks, begin_step),
// connector.py @ 09155ae (AuxOutputSchedulerConnector.build_connector_meta, take_output, reset),
// routed_experts.py @ 2d4ff1f (RoutedExpertsBuffer.capture, publish_routed_experts), store.py
// @ 159bfe5 (BlockObjectStore.put; get_concatenated: BlockObjectStoreError).
//
// One put publishes a whole batch (_publish_blocks gathers every request's completed blocks into
// one publish_routed_experts call). put keeps one object per key with `unique = {obj.key: obj for
// obj in objects}`, so within a put the last object of a key wins, while a key already in the
// store keeps its object (across puts the first writer wins). Which of two requests completing the
// same block in one step is "last" is the batch order of Model Runner V2: gather_batch_req_state
// sorts the scheduled requests with sort_batch_req_ids (model_runner.py @ 0036d38d): requests with
// drafts first, then those whose scheduled tokens equal decode_query_len (1 + the drafts),
// then by scheduled tokens ascending, stably in the scheduler's order.
//
// Per step, for each scheduled request (V1 of the contract): the rows of its scheduled range
// without the rejected spec suffix go into its tail from its capture cursor; full blocks whose
// block hash the scheduler has sent are published under (generation, hash), an existing object
// kept (V2). Then (V4) a request the step sampled for emits from its emit cursor: from this
// step's rows, or, when the cursor lies before them, from the store by its own block keys plus
// its tail, after the whole batch is published. The scheduler cuts each step's rows to
// num_tokens - 1 (V5). A missing object raises (V6): the engine crashes.
//
// The unsettled points, read as the contract's default (a): N4, a preemption tears the request's
// worker state down, so the resumed request emits from num_tokens - 1 (its earlier rows were
// streamed already); N6, a hit never reaches a block before its publication (the walk publishes
// each batch before it materializes). The store is unbounded here (no trace knob sizes it), so
// an object is missing only when nobody on this DP rank published it in this generation.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>

#include "reference/engines/vllm/lifecycle_versions.hpp"
#include "reference/engines/vllm/lifecycle_walk.hpp"

namespace r3::vllm {
namespace {

struct Key {
  int generation = 0;
  uint64_t hash = 0;
  uint64_t versions = 0;  // the weight versions of the block's KV: only under patch generation-on-weight-update
  auto operator<=>(const Key&) const = default;
};

// AuxOutputWorkerConnector's per-request state (_WorkerRequestState) and its tail in
// RoutedExpertsBuffer.
struct Worker {
  bool alive = false;
  int64_t capture_cursor = -1;
  int64_t emit_cursor = 0;
  int64_t keys = 0;                       // block hashes the scheduler has sent
  std::map<int64_t, RouteRef> captured;   // rows this state captured, by position
  std::set<int64_t> completed;            // blocks it completed (published or pending)
  std::map<int64_t, uint64_t> pending;    // completed blocks awaiting their hash: block -> KV versions
  int finished_step = -1;
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
        store_(static_cast<size_t>(std::max(t.dp, 1))), workers_(t.requests.size()),
        tokens_known_(t.requests.size(), 0), reemit_(t.requests.size(), false), done_(t.requests.size(), false),
        emitted_(t.requests.size()) {}

  void begin_step(int step) override {
    // begin_step: hash updates (a scheduled request's, a hash-only update, a finished
    // request's final hashes) publish the blocks that waited for them; a finished request's
    // state goes once no forward of it is in flight.
    for (size_t r = 0; r < workers_.size(); ++r) {
      Worker& w = workers_[r];
      if (!w.alive) continue;
      w.keys = std::max(w.keys, tokens_known_[r] / page_);
      publish({static_cast<int>(r)});
      if (w.finished_step >= 0 && (w.finished_step < step - 1 || !runs_in(step, static_cast<int>(r)))) w = Worker{};
    }
  }

  void after_event(int /*step*/, const TraceEvent& e, int /*version*/) override {
    if (e.kind == TraceEvent::Kind::weight_update) {
      // V3: only a prefix-cache reset (a flush) starts a new generation; the worker then drops
      // every request's state, pending blocks included (connector.py: reset; worker.py:
      // begin_step, the generation branch).
      if (!e.flush) return;
      ++generation_;
      for (Worker& w : workers_) w = Worker{};
      return;
    }
    if (e.kind != TraceEvent::Kind::preempt || e.req < 0 || e.req >= static_cast<int>(workers_.size())) return;
    // N4 (a): the state is torn down like a finished request's (final hashes publish first);
    // the resumed request starts a new one.
    Worker& w = workers_[e.req];
    if (w.alive) {
      w.keys = std::max(w.keys, tokens_known_[e.req] / page_);
      publish({e.req});
    }
    w = Worker{};
    // Patch preempt-reemit: the rows streamed before the preemption are withdrawn and the
    // resumed request streams again from its prompt start, so positions recomputed at another
    // weight version are the recompute's (T2).
    if (fixes_.reemit_after_preemption) {
      emitted_[e.req].clear();
      reemit_[e.req] = true;
    }
  }

  std::optional<std::string> forward(const ScheduledRun& run, std::span<const RouteRef> delivered) override {
    const int r = run.work.req;
    Worker& w = workers_[r];
    if (!w.alive) {
      // build_connector_meta: emit start max(prompt_start, 0 with no output yet, else
      // num_tokens - 1); begin_step creates the state with it as its emit cursor.
      const int64_t prompt = timeline_.requests[r].prompt_len;
      const int64_t start = t_.requests[r].start_len;
      const bool has_output = run.tokens_before > prompt;
      w.alive = true;
      w.emit_cursor = reemit_[r] ? start : std::max(start, has_output ? run.tokens_before - 1 : 0);
      reemit_[r] = false;
    }
    w.keys = std::max(w.keys, run.tokens_before / page_);
    tokens_known_[r] = std::max(tokens_known_[r], run.tokens_after);
    batch_.push_back({r, run.hi - run.lo, run.work.kind == Work::Kind::verify});

    // process_output: the rejected suffix is dropped before capture.
    const int64_t kept = std::min<int64_t>(run.kept_end - run.lo, static_cast<int64_t>(delivered.size()));
    int64_t capture_start = run.lo;
    if (w.capture_cursor >= 0 && capture_start < w.capture_cursor) {
      return "AssertionError: auxiliary output capture moved backwards (request " + std::to_string(r) +
             " captures from " + std::to_string(capture_start) + ", its cursor is at " +
             std::to_string(w.capture_cursor) + ")";
    }
    if (w.capture_cursor >= 0 && capture_start > w.capture_cursor) capture_start = w.capture_cursor;  // reattach
    for (int64_t i = 0; i < kept; ++i) w.captured[capture_start + i] = delivered[i];
    const int64_t token_end = capture_start + kept;
    w.capture_cursor = token_end;
    for (int64_t b = capture_start / page_; (b + 1) * page_ <= token_end; ++b) {
      if (w.completed.count(b) || !captured_block(w, b)) continue;
      w.completed.insert(b);
      w.pending[b] = block_versions(r, b);
    }

    // A lagging forward belongs to a finished request: the scheduler takes nothing from it.
    if (run.lagging || !run.sampled || w.emit_cursor >= token_end) return std::nullopt;
    const int64_t emit_start = w.emit_cursor;
    w.emit_cursor = token_end;
    const int64_t cut = run.tokens_after - 1;  // take_output
    if (emit_start >= capture_start) {
      for (int64_t p = emit_start; p < std::min(token_end, cut); ++p) emitted_[r].push_back(w.captured[p]);
    } else {
      materialize_.push_back({r, emit_start, token_end, cut});
    }
    return std::nullopt;
  }

  std::optional<std::string> end_forward(int /*step*/) override {
    // sort_batch_req_ids: the order the batch's blocks reach the one put (its last writer wins).
    const int64_t decode_query_len = 1 + (t_.config.spec ? t_.config.spec->width : 0);
    std::stable_sort(batch_.begin(), batch_.end(), [&](const Scheduled& a, const Scheduled& b) {
      const auto key = [&](const Scheduled& x) { return std::tuple(!x.verify, x.tokens != decode_query_len, x.tokens); };
      return key(a) < key(b);
    });
    std::vector<int> order;
    for (const Scheduled& x : batch_) order.push_back(x.req);
    publish(order);  // the whole batch first
    batch_.clear();
    std::vector<Materialize> queued;
    queued.swap(materialize_);
    for (const Materialize& m : queued) {
      if (auto crash = materialize(m)) return crash;
    }
    return std::nullopt;
  }

  void finish(int step, int req) override {
    done_[req] = true;
    if (workers_[req].alive) workers_[req].finished_step = step;
  }

  LifecycleOutcome outcome(const WalkResult& walked) {
    return make_outcome(timeline_, walked, done_, std::move(emitted_));
  }

 private:
  bool runs_in(int step, int req) const {
    if (step >= static_cast<int>(t_.steps.size())) return false;
    const auto& run = t_.steps[step].run;
    return std::any_of(run.begin(), run.end(), [&](const Work& w) { return w.req == req; });
  }

  bool captured_block(const Worker& w, int64_t b) const {
    for (int64_t p = b * page_; p < (b + 1) * page_; ++p) {
      if (!w.captured.count(p)) return false;
    }
    return true;
  }

  std::optional<uint64_t> block_hash(int req, int64_t b) const {
    const auto& hashes = timeline_.requests[req].prefix_hash;
    const int64_t last = (b + 1) * page_ - 1;
    if (last >= static_cast<int64_t>(hashes.size())) return std::nullopt;
    return hashes[last];
  }

  // The weight versions of every position of block b's KV, folded: under the patch a block whose
  // rows span a weight update is an object of its own, apart from one computed wholly after it.
  uint64_t block_versions(int req, int64_t b) const {
    uint64_t folded = 0xcbf29ce484222325ull;
    for (int64_t p = b * page_; p < (b + 1) * page_; ++p)
      folded = (folded ^ static_cast<uint64_t>(kv_.kv_version(req, p) + 1)) * 0x100000001b3ull;
    return folded;
  }

  Key key(int req, int64_t b, uint64_t versions) const {
    return {generation_, block_hash(req, b).value_or(0), fixes_.key_by_kv_version ? versions : 0};
  }

  int dp_of(int req) const { return std::clamp(t_.requests[req].dp, 0, static_cast<int>(store_.size()) - 1); }

  // _publish_blocks and one BlockObjectStore.put: each completed block of `reqs` (in that order)
  // whose hash has been sent becomes an object; of the objects under one key the last wins, and
  // an object already in the store under it stays.
  void publish(const std::vector<int>& reqs) {
    std::vector<std::map<Key, std::vector<RouteRef>>> put(store_.size());
    for (int req : reqs) {
      Worker& w = workers_[req];
      for (auto it = w.pending.begin(); it != w.pending.end();) {
        const int64_t b = it->first;
        if (b >= w.keys || !block_hash(req, b)) {
          ++it;
          continue;
        }
        std::vector<RouteRef> object;
        for (int64_t p = b * page_; p < (b + 1) * page_; ++p) object.push_back(w.captured[p]);
        put[static_cast<size_t>(dp_of(req))].insert_or_assign(key(req, b, it->second), std::move(object));
        it = w.pending.erase(it);
      }
    }
    for (size_t d = 0; d < put.size(); ++d)
      for (auto& [k, object] : put[d]) store_[d].emplace(k, std::move(object));
  }

  // materialize_routed_experts: the keyed full blocks from the store, the rest from the tail.
  std::optional<std::string> materialize(const Materialize& m) {
    const Worker& w = workers_[m.req];
    const int64_t stored_end = std::min(m.end / page_, w.keys) * page_;
    std::vector<RouteRef> rows;
    int64_t p = m.start;
    for (; p < stored_end; p = (p / page_ + 1) * page_) {
      const int64_t b = p / page_;
      const Key k = key(m.req, b, block_versions(m.req, b));
      const auto& store = store_[dp_of(m.req)];
      const auto found = store.find(k);
      if (found == store.end()) {
        return "BlockObjectStoreError: routed-experts block " + std::to_string(b) + " of request " +
               std::to_string(m.req) + " (generation " + std::to_string(k.generation) + ", block hash " + hex(k.hash) +
               ") is not in the store";
      }
      for (int64_t q = p; q < (b + 1) * page_; ++q) rows.push_back(found->second[q - b * page_]);
    }
    for (; p < m.end; ++p) {
      const auto it = w.captured.find(p);
      rows.push_back(it == w.captured.end() ? RouteRef{} : it->second);
    }
    const int64_t keep = std::max<int64_t>(0, m.cut - m.start);
    if (static_cast<int64_t>(rows.size()) > keep) rows.resize(static_cast<size_t>(keep));
    emitted_[m.req].insert(emitted_[m.req].end(), rows.begin(), rows.end());
    return std::nullopt;
  }

  const Trace& t_;
  const Timeline& timeline_;
  const KvCache& kv_;
  BlockStoreFixes fixes_;
  int64_t page_;
  int generation_ = 0;
  std::vector<std::map<Key, std::vector<RouteRef>>> store_;  // per DP rank
  std::vector<Worker> workers_;
  std::vector<int64_t> tokens_known_;  // per request: num_tokens after its latest forward
  std::vector<bool> reemit_;
  std::vector<bool> done_;
  std::vector<std::vector<RouteRef>> emitted_;
  // A forward of this step: its request, scheduled tokens, and whether it verifies drafts.
  struct Scheduled {
    int req = 0;
    int64_t tokens = 0;
    bool verify = false;
  };
  std::vector<Scheduled> batch_;
  std::vector<Materialize> materialize_;
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
