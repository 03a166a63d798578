#include "fuzz/generate/trace_scheduler.hpp"

#include <algorithm>
#include <utility>

#include "reference/trace/route.hpp"

namespace r3 {

SchedulerState::SchedulerState(const Trace& shape) : shape_(shape) {
  waiting_.resize(static_cast<size_t>(shape.dp));
  running_.resize(static_cast<size_t>(shape.dp));
  rows_.assign(static_cast<size_t>(shape.dp), 0);
}

int SchedulerState::add_request(SimRequest r, std::vector<int32_t> tokens) {
  r.id = static_cast<int>(requests_.size());
  hashes_.push_back(prefix_hashes(tokens));
  tokens_.push_back(std::move(tokens));
  requests_.push_back(r);
  return r.id;
}

int64_t SchedulerState::rows_left(int dp) const {
  return shape_.config.token_budget - rows_[static_cast<size_t>(dp)];
}

bool SchedulerState::runs_now(int r) const {
  return std::any_of(forwarded_.begin(), forwarded_.end(), [r](const Forwarded& f) { return f.req == r; });
}

int64_t SchedulerState::forwarded_prefix(int r, int64_t limit) const {
  const std::vector<uint64_t>& h = hashes(r);
  int64_t len = 0;
  while (len < limit && len < static_cast<int64_t>(h.size()) && first_forward_.count(h[static_cast<size_t>(len)])) ++len;
  return len;
}

int SchedulerState::first_version(int r, int64_t pos) const {
  const std::vector<uint64_t>& h = hashes(r);
  if (pos < 0 || pos >= static_cast<int64_t>(h.size())) return -1;
  const auto it = first_forward_.find(h[static_cast<size_t>(pos)]);
  return it == first_forward_.end() ? -1 : it->second;
}

// ---- events ----

void SchedulerState::hit(int r, int64_t len) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  R3_CHECK(q.computed == 0 && len > 0 && len <= forwarded_prefix(r, q.known() - 1),
           "a hit takes positions earlier steps forwarded, before the request holds KV");
  current_.events.push_back({TraceEvent::Kind::hit, r, len, 0, false});
  q.computed = len;
  q.started = true;
}

void SchedulerState::preempt(int r, bool to_front) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  R3_CHECK(q.running && !q.done() && q.computed > 0 && !runs_now(r), "only a running request that holds KV and has no work yet is preempted");
  current_.events.push_back({TraceEvent::Kind::preempt, r, 0, 0, false});
  q.computed = 0;
  drop_from_running(r);
  auto& queue = waiting_[static_cast<size_t>(q.dp)];
  queue.insert(to_front ? queue.begin() : queue.end(), r);
}

void SchedulerState::offload(int r) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  R3_CHECK(q.running && !q.done() && q.computed > 0 && !runs_now(r), "only a running request that holds KV is offloaded");
  current_.events.push_back({TraceEvent::Kind::offload, r, 0, 0, false});
  q.offloaded = true;
  drop_from_running(r);
  waiting_[static_cast<size_t>(q.dp)].push_back(r);
}

void SchedulerState::restore(int r) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  R3_CHECK(q.offloaded, "only an offloaded request is restored");
  current_.events.push_back({TraceEvent::Kind::restore, r, 0, 0, false});
  q.offloaded = false;
  admit(r);
}

void SchedulerState::pd_handoff(int r) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  R3_CHECK(q.arrived && !q.started && q.target >= 2, "a P/D handoff starts a request that decodes at least once");
  current_.events.push_back({TraceEvent::Kind::pd_handoff, r, 0, 0, false});
  q.computed = q.prompt_len;
  q.sampled = 1;
  q.started = true;
}

void SchedulerState::abort(int r, bool in_step) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  R3_CHECK(q.arrived && !q.done() && !q.abort_pending, "an abort lands on an arrived, unfinished request");
  current_.events.push_back({TraceEvent::Kind::abort, r, 0, 0, false});
  if (in_step) {
    R3_CHECK(runs_now(r) && q.sampled < q.target, "an abort in a step lands on a request the step runs and does not finish");
    q.abort_pending = true;
    return;
  }
  R3_CHECK(!runs_now(r), "an abort that ends a request at once comes before its work");
  q.aborted = true;
  q.finished_at = step_;
  drop_from_running(r);
  auto& queue = waiting_[static_cast<size_t>(q.dp)];
  queue.erase(std::remove(queue.begin(), queue.end(), r), queue.end());
}

void SchedulerState::weight_update(bool flush) {
  ++version_;
  current_.events.push_back({TraceEvent::Kind::weight_update, -1, 0, version_, flush});
  if (flush) first_forward_.clear();
}

// ---- queues and work ----

void SchedulerState::admit(int r) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  auto& queue = waiting_[static_cast<size_t>(q.dp)];
  queue.erase(std::remove(queue.begin(), queue.end(), r), queue.end());
  running_[static_cast<size_t>(q.dp)].push_back(r);
  q.running = true;
}

void SchedulerState::drop_from_running(int r) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  auto& list = running_[static_cast<size_t>(q.dp)];
  list.erase(std::remove(list.begin(), list.end(), r), list.end());
  q.running = false;
}

void SchedulerState::record(int r, Work w, int64_t rows, bool lag) {
  R3_CHECK(!runs_now(r), "a request runs once per step");
  current_.run.push_back(w);
  rows_[static_cast<size_t>(request(r).dp)] += rows;
  forwarded_.push_back({r, request(r).computed, lag});
}

void SchedulerState::extend(int r, int64_t len) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  R3_CHECK(q.running && !q.done() && len >= 1 && len <= q.extend_left(), "an extend stays within the known tokens");
  record(r, {Work::Kind::extend, r, q.computed, q.computed + len, 0}, len, false);
  q.computed += len;
  if (q.computed == q.known()) ++q.sampled;
  q.started = true;
}

void SchedulerState::decode(int r) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  if (q.done()) {
    R3_CHECK(q.lag_pending, "a finished request decodes only in its lag step");
    record(r, {Work::Kind::decode, r, q.next_input(), q.next_input() + 1, 0}, 1, true);
    return;
  }
  R3_CHECK(q.running && !q.needs_extend(), "a decode follows the request's last sampled token");
  record(r, {Work::Kind::decode, r, q.computed, q.computed + 1, 0}, 1, false);
  ++q.computed;
  ++q.sampled;
}

void SchedulerState::verify(int r, Rng& rng) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  R3_CHECK(q.running && !q.done() && !q.needs_extend() && shape_.config.spec, "a verify follows the last sampled token");
  const int width = shape_.config.spec->width;
  // All kept, none kept, or anything between: the ends are where rows go wrong.
  const uint64_t shape = rng.below(10);
  const int accepted = shape < 3 ? width : shape < 5 ? 0 : static_cast<int>(rng.range(0, width));
  record(r, {Work::Kind::verify, r, q.computed, q.computed + 1, accepted}, width + 1, false);
  q.computed += accepted + 1;
  q.sampled += accepted + 1;
}

// ---- the generator's side ----

void SchedulerState::begin_step(int step) {
  step_ = step;
  current_ = TraceStep{};
  rows_.assign(rows_.size(), 0);
  forwarded_.clear();
  ended_.clear();
}

void SchedulerState::arrive(int r) {
  SimRequest& q = requests_[static_cast<size_t>(r)];
  q.arrived = true;
  waiting_[static_cast<size_t>(q.dp)].push_back(r);
}

void SchedulerState::end_step(const std::function<bool(const SimRequest&)>& lags) {
  // A lag step lasts one step: the requests that finished before this one leave for good.
  for (SimRequest& q : requests_)
    if (q.lag_pending && q.finished_at < step_) {
      q.lag_pending = false;
      drop_from_running(q.id);
    }
  // The rows land: the trace's prefix cache keeps the first forward of each prefix.
  for (const Forwarded& f : forwarded_) {
    if (f.lag) continue;
    const std::vector<uint64_t>& h = hashes(f.req);
    const int64_t to = std::min(request(f.req).computed, static_cast<int64_t>(h.size()));
    for (int64_t p = f.before; p < to; ++p) first_forward_.try_emplace(h[static_cast<size_t>(p)], version_);
  }
  for (const Forwarded& f : forwarded_) {
    SimRequest& q = requests_[static_cast<size_t>(f.req)];
    if (f.lag || (!q.abort_pending && q.sampled < q.target)) continue;
    q.aborted = q.abort_pending;
    q.abort_pending = false;
    q.finished_at = step_;
    ended_.push_back(f.req);
    if (!q.aborted && lags(q))
      q.lag_pending = true;
    else
      drop_from_running(f.req);
  }
}

}  // namespace r3
