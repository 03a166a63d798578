// Lays one case's step out as device work. Per call: every rank's own rows are materialised
// (an SP shard or a whole batch), the all-gatherv assembles the gathered tensor from those
// contributions in EP/DP rank order (docs/layout-contract.md section 4), a TP all-gatherv serves ranks whose
// decision needs it, the monolithic kernel writes its replay output, and the capture kernel
// copies the decided rows. Guards are sized so every planned write lands in canary rows.
// That is the base planner, for the case format's own calls; a step its engine laid out its own
// way (Step::engine_step) goes to the engine's planner (gpu/engine_planner.hpp).
#include <algorithm>
#include <map>
#include <numeric>
#include <optional>
#include <string>

#include "gpu/detail/plan.hpp"
#include "gpu/detail/plan_support.hpp"
#include "gpu/engine_planner.hpp"
#include "reference/capturer.hpp"
#include "reference/provenance.hpp"

namespace r3::gpu::detail {
namespace {

// More than this many int32 values for one case is refused (1 GiB of host memory).
constexpr double kMaxCaseValues = double(int64_t{1} << 28);

// Offsets of each group rank's contribution (into `offsets`): EP/DP rank order, or TP-major
// under the fault.
void gather_offsets(const std::vector<Segment>& segments, int D, int T, bool tp_major, std::vector<int64_t>& offsets) {
  offsets.resize(segments.size());
  if (!tp_major || segments.size() != static_cast<size_t>(D) * T) {
    for (size_t r = 0; r < segments.size(); ++r) offsets[r] = segments[r].offset;
    return;
  }
  int64_t at = 0;
  for (int t = 0; t < T; ++t)
    for (int d = 0; d < D; ++d) {
      offsets[static_cast<size_t>(d * T + t)] = at;
      at += segments[static_cast<size_t>(d * T + t)].rows;
    }
}

// Device-offsets selection: where the exclusive scan that yields a copy's source offset lives.
class OffsetScans {
 public:
  explicit OffsetScans(DevicePlan& plan) : plan_(plan) {}
  // Index into the scan output holding sum(values[:index]); values get a trailing 0 so index
  // == values.size() (the total) is valid too.
  int64_t index_of(const std::vector<int64_t>& values, size_t index) {
    auto [it, fresh] = segments_.try_emplace(values, 0);
    if (fresh) {
      const int64_t key = plan_.scan.keys.empty() ? 0 : plan_.scan.keys.back() + 1;
      it->second = static_cast<int64_t>(plan_.scan.values.size());
      for (int64_t v : values) plan_.scan.keys.push_back(key), plan_.scan.values.push_back(v);
      plan_.scan.keys.push_back(key);
      plan_.scan.values.push_back(0);
    }
    return it->second + static_cast<int64_t>(std::min(index, values.size()));
  }

 private:
  DevicePlan& plan_;
  std::map<std::vector<int64_t>, int64_t> segments_;
};

// The scan input and index that give a copy's source offset, or nullopt for a literal offset.
std::optional<std::pair<std::vector<int64_t>, size_t>> device_offset_source(const CaptureDecision& decision,
                                                                          const CaptureCall& call, Fault fault) {
  if (!call.metadata) return std::nullopt;
  const auto& n = call.metadata->num_tokens_across_dp;
  const size_t d = static_cast<size_t>(call.dp_rank);
  if (decision.branch == branch::naive_total) return std::make_pair(n, d);
  if (decision.branch != branch::gathered_shards || !call.metadata->local_sizes) return std::nullopt;
  const auto& sizes = *call.metadata->local_sizes;
  if (fault == Fault::unpadded_offset) return std::make_pair(n, d);
  const size_t per_rank = n.empty() ? 1 : sizes.size() / n.size();
  if (fault == Fault::floor_sp && per_rank > 1) {
    std::vector<int64_t> floors;
    for (int64_t count : n) floors.insert(floors.end(), per_rank, count / static_cast<int64_t>(per_rank));
    return std::make_pair(floors, d * per_rank);
  }
  return std::make_pair(sizes, d * per_rank);
}

// `own`: the step's engine planner, null for the base planner's one image per rank.
double planned_values(const Case& c, const Step& step, const Allocation& a, const EngineStepPlanner* own) {
  const double ranks = double(step.dp) * step.tp;
  const double images = own ? double(own->capture_images()) : 1.0;
  double values = images * ranks * double(a.capture_rows + 2 * kMinGuardRows) * c.model.layers * c.model.top_k;
  if (a.replay_rows) values += ranks * double(*a.replay_rows + 2 * kMinGuardRows) * c.model.top_k;
  for (const Call& call : step.calls) {
    double rows = 2.0 * double(call.gathered_rows);
    for (const RowTensor& t : call.tensors) rows += 2.0 * double(t.rows());
    values += (rows + 8.0 * ranks * kMinGuardRows) * c.model.top_k;
  }
  return values;
}

struct RankCopy {
  CaptureJob job;
  size_t wave = 0;  // copies of one rank run in order: its i-th copy of a call joins wave base + i
};

struct RankReplay {
  ReplayJob job;
  size_t wave = 0;  // its call
};

// The planner's working tables, kept from case to case: once they have grown to fit the cases,
// planning one allocates nothing of its own (under ASan an allocation costs more than planning
// a rank). One per thread: plan_case runs on its caller's thread and is never re-entered.
struct StepScratch {
  // Per rank (the first D*T entries; an entry's storage outlives smaller cases):
  std::vector<std::vector<RankCopy>> copies;  // in call order
  std::vector<std::vector<RankReplay>> replays;
  std::vector<int64_t> replay_rows_written;
  // Per call:
  std::vector<TensorRef> received;     // per rank
  std::vector<CaptureCall> calls;      // per rank
  CaptureDecision shared;              // the checks every rank makes alike (CapturePolicy::check_shared)
  std::vector<bool> needs_tp_gather;   // per DP rank
  std::vector<TensorRef> tp_gathered;  // per DP rank
  std::vector<std::optional<TensorRef>> held;  // per tensor of the call: once materialised
  std::vector<TensorRef> parts;
  std::vector<int64_t> offsets;
};

// Empties the first n tables of `per_rank` (growing it to n), keeping their storage.
template <class T>
void clear_first(std::vector<std::vector<T>>& per_rank, size_t n) {
  if (per_rank.size() < n) per_rank.resize(n);
  for (size_t i = 0; i < n; ++i) per_rank[i].clear();
}

StepScratch& step_scratch() {
  thread_local StepScratch scratch;
  return scratch;
}

// The buffers the pipeline allocates for the case, or why the case is too large to plan (its
// provenance values would not fit, or its device memory would exceed kMaxCaseValues).
Result<Allocation> planned_allocation(const Case& c, const Step& step, const PlanSettings& settings,
                                      const EngineStepPlanner* own) {
  if (!provenance_fits(c)) {
    return Error{"gpu: the case is too large for provenance values (at most dp " + std::to_string(kProvenanceMaxDp) +
                 ", " + std::to_string(kProvenanceMaxRows) + " rows per rank, top_k " +
                 std::to_string(kProvenanceMaxTopK) + ", 256 layers)"};
  }
  Allocation alloc = gpu_allocation(c, *settings.policy, settings.fault);
  if (planned_values(c, step, alloc, own) > kMaxCaseValues) {
    return Error{"gpu: the case needs more than 2^28 values of device memory; the concrete pipeline runs small cases"};
  }
  return alloc;
}

// Plans one step call by call, then places each rank's buffers once every write is known.
class StepPlanner {
 public:
  StepPlanner(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan, PlannedCase& out,
              StepScratch& scratch)
      : c_(c), step_(step), settings_(settings), plan_(plan), out_(out), s_(scratch), scans_(plan),
        D_(step.dp), T_(step.tp), K_(c.model.top_k), L_(c.model.layers),
        ranks_(static_cast<size_t>(D_) * T_), wide_replay_(out.allocation.replay_bits > 16),
        shape_{out.allocation.capture_rows, L_, K_} {
    if (settings.fault == Fault::layer_unchecked) shape_.layers = std::max(L_, step.layer + 1);  // no layer check
    out_.ranks.resize(ranks_);
    for (PlannedRank& rank : out_.ranks) rank.calls.reserve(step.calls.size());  // one allocation per rank
    out_.gathered.reserve(step.calls.size() * static_cast<size_t>(1 + D_));  // at most a DP and D TP gathers a call
    clear_first(s_.copies, ranks_);
    clear_first(s_.replays, ranks_);
    s_.replay_rows_written.assign(ranks_, 0);
  }

  void plan_call(const Call& call) {
    receive(call);
    decide(call);
    gather_tp_groups(plan_, s_.needs_tp_gather, s_.received, T_, K_, out_.gathered, s_.tp_gathered);
    schedule_kernels(call);
  }

  void place_buffers() {
    for (size_t r = 0; r < ranks_; ++r) place_rank(r);
  }

 private:
  // Each rank's received tensor (s_.received), built from the rows the ranks hold: on the
  // gathered path the all-gatherv of every rank's segment, otherwise the call's tensor the rank
  // received.
  void receive(const Call& call) {
    std::vector<TensorRef>& received = s_.received;
    received.assign(ranks_, TensorRef{});
    if (step_.path == Path::gathered && call.metadata) {
      s_.parts.clear();
      for (const Segment& seg : call.segments) {
        RowTensor own;
        own.append_slice(call.tensors[0], {seg.offset, seg.offset + seg.rows});
        s_.parts.push_back(materialize(plan_, own, K_));
      }
      gather_offsets(call.segments, D_, T_, settings_.fault == Fault::tp_major_order, s_.offsets);
      const TensorRef gathered = all_gatherv(plan_, s_.parts, s_.offsets, K_, out_.gathered);
      std::fill(received.begin(), received.end(), gathered);
      return;
    }
    // A whole tensor is materialised once for every rank that receives it; a TP slice is its
    // rank's own rows.
    s_.held.assign(call.tensors.size(), std::nullopt);
    for (size_t r = 0; r < ranks_; ++r) {
      const RankView view = call.view(r);
      if (call.split_across_tp()) {
        received[r] = materialize(plan_, call.input_of(view), K_);
        continue;
      }
      const auto index = static_cast<size_t>(view.received);
      if (!s_.held[index]) s_.held[index] = materialize(plan_, call.tensors[index], K_);
      received[r] = *s_.held[index];
    }
  }

  // The decisions (s_.calls, and each rank's in out_), taken on the host from shapes (the fault
  // applied); which DP ranks' decisions read the TP group's all-gatherv (s_.needs_tp_gather).
  void decide(const Call& call) {
    s_.calls.resize(ranks_);
    s_.needs_tp_gather.assign(static_cast<size_t>(D_), false);
    // The shared checks once per call, as the symbolic judge makes them: r3-fixed's reads D*T
    // local_sizes entries, and made on every rank (decide()) it cost O((D*T)^2) a call.
    s_.shared.clear();
    settings_.policy->check_shared(capture_call_for(step_, call, call.view(size_t{0}), shape_), s_.shared);
    for (size_t r = 0; r < ranks_; ++r) {
      const RankView view = call.view(r);
      s_.calls[r] = capture_call_for(step_, call, view, shape_);
      CaptureDecision& decision = out_.ranks[r].calls.emplace_back();
      if (s_.shared.rejected) decision = s_.shared;  // what decide() gives when the shared checks reject
      else settings_.policy->decide_checked(s_.calls[r], decision);
      apply_decision_fault(settings_.fault, s_.calls[r], s_.received[r].rows, decision);
      for (const Copy& copy : decision.copies)
        if (copy.from_tp_gather) s_.needs_tp_gather[static_cast<size_t>(view.dp)] = true;
    }
  }

  // The monolithic kernel's replay job and the capture jobs of every rank for this call.
  void schedule_kernels(const Call& call) {
    size_t most_copies = 0;
    for (size_t r = 0; r < ranks_; ++r) {
      const TensorRef& received = s_.received[r];
      if (c_.monolithic) {
        R3_CHECK(received.rows == call.kernel_rows, "the monolithic kernel processes the received tensor");
        s_.replays[r].push_back({ReplayJob{received.row0, received.rows, 0, K_, c_.model.experts, wide_replay_},
                                 static_cast<size_t>(call.index)});
        s_.replay_rows_written[r] = std::max(s_.replay_rows_written[r], received.rows);
      }
      const CaptureDecision& decision = out_.ranks[r].calls.back();
      most_copies = std::max(most_copies, decision.copies.size());
      for (size_t i = 0; i < decision.copies.size(); ++i) {
        const Copy& copy = decision.copies[i];
        const TensorRef& src = copy.from_tp_gather ? s_.tp_gathered[r / static_cast<size_t>(T_)] : received;
        s_.copies[r].push_back({capture_job(copy, src, decision, s_.calls[r]), wave_base_ + i});
      }
    }
    wave_base_ += most_copies;
  }

  // One copy as a capture job; its destination is filled in once the buffer is placed.
  CaptureJob capture_job(const Copy& copy, const TensorRef& src, const CaptureDecision& decision, const CaptureCall& call) {
    CaptureJob job;
    job.src = src.row0;
    job.src_lo = src.lo;
    job.src_hi = src.hi;
    job.src_row = copy.src_row;
    job.rows = copy.rows;
    job.dst_row = copy.dst_row;
    job.top_k = K_;
    job.row_width = L_ * K_;
    job.layer = step_.layer;
    if (settings_.selection == Selection::device_offsets) {
      if (auto source = device_offset_source(decision, call, settings_.fault)) {
        const auto& [values, index] = *source;
        job.offset_index = scans_.index_of(values, index);
        const auto before = values.begin() + static_cast<std::ptrdiff_t>(std::min(index, values.size()));
        job.src_row = copy.src_row - std::accumulate(values.begin(), before, int64_t{0});
      }
    }
    return job;
  }

  // Rank r's capture (and replay) buffer, with back guards deep enough for the furthest planned
  // write, and its jobs pointed at it.
  void place_rank(size_t r) {
    const Allocation& alloc = out_.allocation;
    const int64_t width = int64_t{L_} * K_;
    PlannedRank& rank = out_.ranks[r];
    rank.dp = static_cast<int>(r) / T_;
    rank.tp = static_cast<int>(r) % T_;
    int64_t reach = alloc.capture_rows;  // rows up to the furthest element written
    for (const RankCopy& rc : s_.copies[r]) {
      if (rc.job.rows <= 0) continue;
      const int64_t end = (rc.job.dst_row + rc.job.rows - 1) * width + int64_t{rc.job.layer} * K_ + K_;
      reach = std::max(reach, ceil_div(end, width));
    }
    rank.capture = place(plan_, false, alloc.capture_rows, std::max(kMinGuardRows, reach - alloc.capture_rows), width,
                         K_, Fill::untouched);
    for (RankCopy& rc : s_.copies[r]) {
      rc.job.dst = rank.capture.row0();
      rc.job.dst_lo = rank.capture.offset;
      rc.job.dst_hi = rank.capture.offset + rank.capture.elements();
      plan_.capture_wave(rc.wave).push_back(rc.job);
    }
    if (!c_.monolithic) return;
    const int64_t rows = alloc.replay_rows.value_or(0);
    rank.replay = place(plan_, !wide_replay_, rows, std::max(kMinGuardRows, s_.replay_rows_written[r] - rows), K_, K_,
                        Fill::replay_unwritten);
    for (RankReplay& rr : s_.replays[r]) {
      rr.job.dst = rank.replay->row0();
      plan_.replay_wave(rr.wave).push_back(rr.job);
    }
  }

  const Case& c_;
  const Step& step_;
  const PlanSettings& settings_;
  DevicePlan& plan_;
  PlannedCase& out_;
  StepScratch& s_;
  OffsetScans scans_;
  const int D_, T_, K_, L_;
  const size_t ranks_;
  const bool wide_replay_;
  BufferShape shape_;
  size_t wave_base_ = 0;
};

}  // namespace

Result<PlannedCase> plan_case(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan) {
  R3_CHECK(settings.policy != nullptr, "a policy to decide with");
  // A step its engine laid out its own way is its engine's planner's to lay out on the device.
  const EngineStepPlanner* own = engine_planner(step.engine);
  if (!own && step.engine_step) {
    return Error{"gpu: engine " + std::string(step.engine.name()) +
                 " lays its steps out its own way but has no GPU step planner (gpu/engine_planner.hpp)"};
  }
  PlannedCase out;
  R3_TRY(out.allocation, planned_allocation(c, step, settings, own));
  if (own) {
    own->plan_step(c, step, settings, plan, out);
    return out;
  }
  plan_base_step(c, step, settings, plan, out);
  return out;
}

void plan_base_step(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan, PlannedCase& out) {
  StepPlanner planner(c, step, settings, plan, out, step_scratch());
  for (const Call& call : step.calls) planner.plan_call(call);
  planner.place_buffers();
}

}  // namespace r3::gpu::detail
