// One DP rank's RouteCapture and RouteCopier (lifecycle_capture.hpp). Every rule cites
// tensorrt_llm/_torch/route_capture.py at E (06a976ce, stored copy 57903209176) and L (aa94b01,
// stored copy 68348127803), both read for this file; the contract's rule names are in brackets.
#include "reference/engines/trtllm/lifecycle_capture.hpp"

#include <algorithm>

namespace r3::trtllm {
namespace {

constexpr int kRingSlots = 3;  // RouteCopier.__init__: ring = 3 [R8]

}  // namespace

RankCapture::RankCapture(const Timeline& timeline, Behaviour b, std::span<const int> done_before)
    : timeline_(timeline), b_(b), done_before_(done_before), ring_(kRingSlots), slot_copy_(kRingSlots) {
  // The cache takes at most one row a hashed position: sized once, a long trace never rehashes it.
  size_t positions = 0;
  for (const auto& r : timeline.requests) positions += r.prefix_hash.size();
  shared_.reserve(positions);
}

// A preemption evicts the KV; the capture is not told (no hook in route_capture.py): the store,
// the decode counter and the read-back mark stay [N2]. The fixed model reads a new hit back.
void RankCapture::preempt(int req) {
  prepopulated_[req] = 0;
  if (b_.store_follows_kv) readback_done_.erase(req);
}

// RouteCapture.clear_shared, from reset_prefix_cache: the cache, the read-back marks, the
// populated marks and the populate cursors are dropped [R4]; the stores are kept.
void RankCapture::clear_shared(int step) {
  shared_.clear();
  readback_done_.clear();
  populated_.clear();
  pop_cursor_.clear();
  reset_step_ = step;
}

// RouteCapture._prepare [R2]: context rows (request, chunk start + i), then generation rows
// (request, P + the private counter, which then rises by one), then dummies as (none, -1).
// The counter starts at 0 at the request's first context chunk (setdefault: never reset).
// Then RouteCapture._readback_prefix for the context requests [R4].
std::vector<LayoutRow> RankCapture::prepare(int step, const std::vector<BatchRow>& rows,
                                            const std::vector<bool>& is_context, int64_t padding) {
  std::vector<LayoutRow> layout;
  std::vector<int> context;
  had_context_ = false;
  for (size_t j = 0; j < rows.size(); ++j) {
    const BatchRow& row = rows[j];
    if (is_context[j]) {
      layout.push_back({row.req, row.pos, row.kept && !row.lagging});
      gen_count_.try_emplace(row.req, 0);
      recorded_.insert(row.req);
      had_context_ = true;
      if (std::find(context.begin(), context.end(), row.req) == context.end()) context.push_back(row.req);
    } else {
      int64_t& counter = gen_count_[row.req];
      const int64_t pos = b_.decode_position ? row.pos : prompt_len(row.req) + counter;
      ++counter;
      layout.push_back({row.req, pos, row.kept && !row.lagging});
    }
  }
  for (int64_t i = 0; i < padding; ++i) layout.push_back({});
  // The fixed model commits what has landed before a read-back, so a hit on rows forwarded in
  // the step before finds them (patch cache-every-row).
  if (b_.cache_every_row && !context.empty()) drain(step, true);
  for (int req : context) readback(step, req);
  return layout;
}

// RouteCapture._readback_prefix [R4]: positions [0, prepopulated_prompt_len) of the prompt not
// stored yet come from the SharedRouteCache by prefix hash; a missing one is retried on the
// request's next context step, and the request is marked done once none is missing.
void RankCapture::readback(int step, int req) {
  if (readback_done_.count(req)) return;
  const auto it = prepopulated_.find(req);
  const int64_t hit = it == prepopulated_.end() ? 0 : it->second;
  if (hit <= 0) {
    readback_done_.insert(req);
    return;
  }
  auto [entry, fresh] = store_.try_emplace(req);
  if (fresh) store_order_.push_back(req);
  int missing = 0;
  // The cumulative hashes cover the prompt (_hashes_for); the fixed model's cache holds every
  // position, so its read-back covers the whole hit.
  const int64_t hashed = b_.cache_every_row ? static_cast<int64_t>(timeline_.requests[req].prefix_hash.size())
                                            : prompt_len(req);
  for (int64_t p = 0; p < std::min(hit, hashed); ++p) {
    if (!b_.store_follows_kv && entry->second.find(p)) continue;
    const auto cached = shared_.find(hash(req, p));
    if (cached == shared_.end()) {
      ++missing;
      continue;
    }
    entry->second.put(p, {cached->second, step}, true);
  }
  if (missing == 0) readback_done_.insert(req);
}

// RouteCapture._finish_forward [R10]: stage the step's rows, drain (forced on a step with
// context rows, so that a sibling's hit finds them), then RouteCapture._incremental_populate.
void RankCapture::finish_forward(int step, const std::vector<LayoutRow>& layout, const std::vector<RouteRef>& delivered) {
  stage(step, layout, delivered);
  drain(step, had_context_);
  if (!b_.cache_every_row) incremental_populate();
}

// Copies land in stage order (one side stream): landing one lands every earlier one.
void RankCapture::land_through(size_t copy) {
  for (size_t i = first_unlanded_; i <= copy && i < copies_.size(); ++i) {
    StagedCopy& c = copies_[i];
    if (c.landed) continue;
    std::vector<RouteRef>& slot = ring_[static_cast<size_t>(c.slot)];
    if (slot.size() < c.rows.size()) slot.resize(c.rows.size());
    std::copy(c.rows.begin(), c.rows.end(), slot.begin());
    c.landed = true;
    std::vector<RouteRef>().swap(c.rows);  // landed: the slot holds them now
  }
  first_unlanded_ = std::max(first_unlanded_, std::min(copy + 1, copies_.size()));
}

// Every copy the record lands by this step's drains (lifecycle_copies.cpp), and those before it.
void RankCapture::advance(int step) {
  for (size_t i = copies_.size(); i-- > first_unlanded_;) {
    if (!copies_[i].landed && copies_[i].done <= step) {
      land_through(i);
      return;
    }
  }
}

// RouteCopier.stage [R8, R9]: nothing for an empty layout. E synchronizes the slot's previous
// copy when it is still in flight and leaves its pending entry; L drains first, and when the slot
// still has a pending entry synchronizes it and drains again (commit before reuse). Then the
// copy into the slot, which the next forward waits on (wait_before_overwrite; contract N8,
// reading (a): the device buffer is never overwritten before its copy read it).
void RankCapture::stage(int step, const std::vector<LayoutRow>& layout, const std::vector<RouteRef>& delivered) {
  if (layout.empty()) return;
  advance(step);
  const int slot = next_slot_;
  const std::optional<size_t> previous = slot_copy_[static_cast<size_t>(slot)];
  if (b_.commit_before_reuse) {
    drain(step, false);
    const bool pending = std::any_of(pending_.begin(), pending_.end(),
                                     [&](size_t i) { return copies_[i].slot == slot; });
    if (pending && previous) {
      land_through(*previous);
      drain(step, false);
    }
  } else if (previous && !copies_[*previous].landed) {
    land_through(*previous);
  }
  StagedCopy c;
  c.step = step;
  c.slot = slot;
  c.layout = layout;
  c.rows = delivered;
  c.rows.resize(layout.size(), RouteRef{RouteRef::Kind::padding});
  // Landing before forward D means a non-waiting read at the end of step D - 1 sees it
  // (copies.hpp); in order (D = S + 1) the drain right after the stage commits it.
  c.done = step;
  if (step >= 0 && static_cast<size_t>(step) < done_before_.size())
    c.done = std::max(done_before_[static_cast<size_t>(step)] - 1, step);
  copies_.push_back(std::move(c));
  slot_copy_[static_cast<size_t>(slot)] = copies_.size() - 1;
  pending_.push_back(copies_.size() - 1);
  next_slot_ = (slot + 1) % kRingSlots;
  advance(step);
}

// RouteCopier.drain [R8]: commits each pending entry whose copy has landed, in order; forced,
// it synchronizes each one first. A commit reads the slot as it is now: the rows of the last
// copy into it that landed, which is another copy's when E reused the slot [R9].
void RankCapture::drain(int step, bool force) {
  advance(step);
  std::vector<size_t> still;
  for (size_t i : pending_) {
    if (force) land_through(i);
    if (copies_[i].landed) {
      commit(copies_[i]);
      std::vector<LayoutRow>().swap(copies_[i].layout);  // committed: nothing reads it again
    } else
      still.push_back(i);
  }
  pending_ = std::move(still);
}

// RouteCapture.commit [R3]: dummy rows skipped; the first value stored at (request, position)
// is kept. The fixed model replaces it (the row of the KV the request now holds) and puts
// every forwarded row of the current cache epoch into the cache.
void RankCapture::commit(const StagedCopy& copy) {
  const std::vector<RouteRef>& slot = ring_[static_cast<size_t>(copy.slot)];
  for (size_t i = 0; i < copy.layout.size() && i < slot.size(); ++i) {
    const LayoutRow& row = copy.layout[i];
    if (row.req < 0) continue;
    store_row(row.req, row.pos, slot[i], copy.step);
    const bool in_epoch = !b_.shared_cache_epoch || copy.step >= reset_step_;
    if (b_.cache_every_row && row.forwarded && in_epoch && row.pos >= 0 &&
        row.pos < static_cast<int64_t>(timeline_.requests[row.req].prefix_hash.size())) {
      shared_.try_emplace(hash(row.req, row.pos), slot[i]);
    }
  }
}

void RankCapture::store_row(int req, int64_t pos, const RouteRef& value, int step) {
  auto [entry, fresh] = store_.try_emplace(req);
  if (fresh) store_order_.push_back(req);
  entry->second.put(pos, {value, step}, b_.store_follows_kv);
}

void RankCapture::Positions::put(int64_t pos, const Stored& value, bool replace) {
  if (pos >= static_cast<int64_t>(rows_.size())) rows_.resize(static_cast<size_t>(pos) + 1);
  std::optional<Stored>& slot = rows_[static_cast<size_t>(pos)];
  if (slot && !replace) return;
  slot = value;
  highest_ = std::max(highest_, pos);
}

// RouteCapture._incremental_populate and _store_positions [R4]: each request with a recorded
// prompt pushes its stored prompt positions from its cursor while they are contiguous; the cache
// is write-once. With the epoch patch, a row forwarded before the last reset is not pushed.
void RankCapture::incremental_populate() {
  for (int req : store_order_) {
    if (!store_.count(req) || populated_.count(req) || !recorded_.count(req)) continue;
    store_positions(req);
  }
}

void RankCapture::store_positions(int req) {
  const auto& rows = store_[req];
  int64_t& cursor = pop_cursor_[req];
  const int64_t n = prompt_len(req);
  while (cursor < n) {
    const Stored* row = rows.find(cursor);
    if (!row) break;
    if (!b_.shared_cache_epoch || row->step >= reset_step_) shared_.try_emplace(hash(req, cursor), row->row);
    ++cursor;
  }
  if (cursor >= n) populated_.insert(req);
}

// RouteCapture.attach_routes [R5 to R7]: force-drain, assemble, attach, publish the prompt
// (_populate_prefix), free. assemble: nothing when the store is empty or its highest position
// is 0; E returns [0, max), L [0, max]; a missing position below raises. E swallows every
// exception (no routed_experts, store kept); L lets it reach the executor.
Attached RankCapture::attach(int step, int req) {
  drain(step, true);
  Attached out;
  static const Positions kNone;
  const auto entry = store_.find(req);
  const auto& rows = entry == store_.end() ? kNone : entry->second;
  const int64_t last = rows.highest();
  if (last <= 0 && !b_.range_to_finish) return out;
  int64_t keep = b_.inclusive_range ? last + 1 : last;
  if (b_.range_to_finish) keep = std::min(keep, timeline_.requests[req].total - 1);
  for (int64_t p = 0; p < keep; ++p) {
    const Stored* row = rows.find(p);
    if (!row) {
      if (!b_.raise_on_gap) return out;
      out.kind = Attached::Kind::raised;
      out.error = "attach_routes raised for request " + std::to_string(req) + ": no stored row at position " +
                  std::to_string(p) + ", below its highest stored position " + std::to_string(last) +
                  " (RouteCapture.assemble fails closed on a gap)";
      return out;
    }
    out.rows.push_back(row->row);
  }
  out.kind = Attached::Kind::routes;
  if (!b_.cache_every_row && recorded_.count(req)) store_positions(req);
  store_.erase(req);
  std::erase(store_order_, req);  // a key stored again goes last, as in a dict; and populate walks live keys only
  gen_count_.erase(req);
  recorded_.erase(req);
  pop_cursor_.erase(req);
  populated_.erase(req);
  readback_done_.erase(req);
  return out;
}

}  // namespace r3::trtllm
