// The bookkeeping of a simulated serving run, step by step: what each request has computed and
// sampled, where it waits or runs, what the trace's prefix cache holds (the timeline's: every
// prefix some earlier step forwarded since the last flush, and the weight version of its first
// forward). The trace generator (trace_generator.hpp) owns it; an engine's trace scheduler
// (engine_trace_draw.hpp) decides each step's composition through its operations, keeping its
// own KV memory beside it, and every operation records its event or work in the step, so the
// step obeys the rules of reference/trace/timeline.hpp by construction.
#pragma once

#include <cstdint>
#include <functional>
#include <unordered_map>
#include <vector>

#include "fuzz/generate/rng.hpp"
#include "reference/error.hpp"
#include "reference/trace/trace.hpp"

namespace r3 {

// A request as the scheduler sees it: the walk of timeline.hpp from the scheduler's side.
struct SimRequest {
  int id = 0;
  int dp = 0;
  int64_t prompt_len = 0;           // P
  int64_t target = 1;               // samples that finish it (a prefill-only request: 1)
  int64_t max_new = 0;              // the request's max_new (0: prefill-only)
  Finish finish = Finish::length;   // how it ends unless an abort ends it first
  int64_t computed = 0;             // c: positions whose KV it holds
  int64_t sampled = 0;              // g
  bool arrived = false;
  bool started = false;             // forwarded something, or was handed KV (hit, P/D)
  bool running = false;             // in its rank's running list
  bool offloaded = false;
  bool abort_pending = false;       // ends at the result processing of this step
  bool aborted = false;             // an abort ended it
  int finished_at = -1;
  bool lag_pending = false;         // finished in the last step: may forward one discarded row now

  int64_t next_input() const { return prompt_len + sampled - 1; }
  int64_t known() const { return prompt_len + sampled; }  // tokens known so far (vLLM's num_tokens)
  // Whether its next work is an extend (its prompt, or a recompute), and how far it reaches.
  bool needs_extend() const { return sampled == 0 || computed < next_input(); }
  int64_t extend_left() const { return known() - computed; }
  bool done() const { return finished_at >= 0; }
};

class SchedulerState {
 public:
  // `shape` carries topology, config and knobs; it must outlive the state.
  explicit SchedulerState(const Trace& shape);

  const Trace& shape() const { return shape_; }
  const TraceConfig& config() const { return shape_.config; }
  int ranks() const { return shape_.dp; }
  int step() const { return step_; }
  int version() const { return version_; }
  const SimRequest& request(int r) const { return requests_[static_cast<size_t>(r)]; }
  int request_count() const { return static_cast<int>(requests_.size()); }
  // The prefix hash of every position of r's prompt and the outputs it may sample (route.hpp).
  const std::vector<uint64_t>& hashes(int r) const { return hashes_[static_cast<size_t>(r)]; }
  const std::vector<int32_t>& tokens(int r) const { return tokens_[static_cast<size_t>(r)]; }
  // Queue order: the rank's waiting requests (arrived, not running, not finished), and its
  // running list (a lagging request stays in it for its lag step).
  const std::vector<int>& waiting(int dp) const { return waiting_[static_cast<size_t>(dp)]; }
  const std::vector<int>& running(int dp) const { return running_[static_cast<size_t>(dp)]; }
  // Rows the rank may still forward this step (config.token_budget less what it runs).
  int64_t rows_left(int dp) const;
  bool runs_now(int r) const;  // whether `r` has work in the step being built

  // The trace's prefix cache: how many leading positions of `r` (at most `limit`) some earlier
  // step forwarded since the last flush, and the weight version of the first such forward of
  // position p's prefix (-1: none).
  int64_t forwarded_prefix(int r, int64_t limit) const;
  int first_version(int r, int64_t pos) const;

  // Events, recorded before the step's forward.
  void hit(int r, int64_t len);
  void preempt(int r, bool to_front);  // recompute: KV dropped, back to waiting
  void offload(int r);                 // KV to host: out of the running list until restored
  void restore(int r);                 // back at the end of the running list
  void pd_handoff(int r);              // prompt KV and the first token from a prefill instance
  // An abort of an arrived request before its work: one that never started ends with no output,
  // a running one ends at once (it never runs again) unless `in_step`, where it runs in this step
  // and ends at its result processing.
  void abort(int r, bool in_step = false);

  // Queues: `r` leaves waiting for the end of the running list.
  void admit(int r);

  // Work, in batch order.
  void extend(int r, int64_t len);
  void decode(int r);  // the lag row when r finished in the step before
  void verify(int r, Rng& rng);

  // The generator's side (trace_generator.cpp).
  int add_request(SimRequest r, std::vector<int32_t> tokens);
  void begin_step(int step);
  void arrive(int r);
  void weight_update(bool flush);
  // Result processing: finishes, the prefix cache, lag marks. `lags` says which requests that
  // finish now forward one lagging row in the next step (never one an abort ended).
  void end_step(const std::function<bool(const SimRequest&)>& lags);
  const TraceStep& current() const { return current_; }
  TraceStep take_step() { return std::move(current_); }
  // Requests this step's result processing ended, in run order.
  const std::vector<int>& ended_now() const { return ended_; }

 private:
  struct Forwarded {
    int req = 0;
    int64_t before = 0;  // what it computed before this step's work
    bool lag = false;
  };

  void drop_from_running(int r);
  void record(int r, Work w, int64_t rows, bool lag);

  const Trace& shape_;
  std::vector<SimRequest> requests_;
  std::vector<std::vector<int32_t>> tokens_;
  std::vector<std::vector<uint64_t>> hashes_;
  std::vector<std::vector<int>> waiting_;
  std::vector<std::vector<int>> running_;
  std::unordered_map<uint64_t, int> first_forward_;  // prefix hash -> version, since the last flush
  std::vector<int64_t> rows_;                        // rows forwarded this step, per rank
  std::vector<Forwarded> forwarded_;                 // this step's work, in order
  std::vector<int> ended_;
  TraceStep current_;
  int step_ = 0;
  int version_ = 0;
};

}  // namespace r3
