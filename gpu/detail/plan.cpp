// Lays one case's step out as device work. Per call: every rank's own rows are materialised
// (an SP shard or a whole batch), the all-gatherv assembles the gathered tensor from those
// contributions in EP/DP rank order (docs/layout-contract.md section 4), a TP all-gatherv serves ranks whose
// decision needs it, the monolithic kernel writes its replay output, and the capture kernel
// copies the decided rows. Guards are sized so every planned write lands in canary rows.
#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <tuple>

#include "gpu/detail/plan.hpp"
#include "gpu/detail/plan_sglang.hpp"
#include "gpu/detail/plan_support.hpp"
#include "reference/capturer.hpp"
#include "reference/provenance.hpp"

namespace r3::gpu::detail {
namespace {

// More than this many int32 values for one case is refused (1 GiB of host memory).
constexpr double kMaxCaseValues = double(int64_t{1} << 28);

// Offsets of each group rank's contribution: EP/DP rank order, or TP-major under the fault.
std::vector<int64_t> gather_offsets(const std::vector<Segment>& segments, int D, int T, bool tp_major) {
  std::vector<int64_t> offsets(segments.size());
  if (!tp_major || segments.size() != static_cast<size_t>(D) * T) {
    for (size_t r = 0; r < segments.size(); ++r) offsets[r] = segments[r].offset;
    return offsets;
  }
  int64_t at = 0;
  for (int t = 0; t < T; ++t)
    for (int d = 0; d < D; ++d) {
      offsets[static_cast<size_t>(d * T + t)] = at;
      at += segments[static_cast<size_t>(d * T + t)].rows;
    }
  return offsets;
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

double planned_values(const Case& c, const Step& step, const Allocation& a) {
  const double ranks = double(step.dp) * step.tp;
  // SGLang's steps hold a device buffer and the published image per rank.
  const double images = step.sglang ? 2.0 : 1.0;
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

// The buffers the pipeline allocates for the case, or why the case is too large to plan (its
// provenance values would not fit, or its device memory would exceed kMaxCaseValues).
Result<Allocation> planned_allocation(const Case& c, const Step& step, const PlanSettings& settings) {
  if (!provenance_fits(c)) {
    return Error{"gpu: the case is too large for provenance values (at most dp " + std::to_string(kProvenanceMaxDp) +
                 ", " + std::to_string(kProvenanceMaxRows) + " rows per rank, top_k " +
                 std::to_string(kProvenanceMaxTopK) + ", 256 layers)"};
  }
  Allocation alloc = gpu_allocation(c, *settings.policy, settings.fault);
  if (planned_values(c, step, alloc) > kMaxCaseValues) {
    return Error{"gpu: the case needs more than 2^28 values of device memory; the concrete pipeline runs small cases"};
  }
  return alloc;
}

// Plans one step call by call, then places each rank's buffers once every write is known.
class StepPlanner {
 public:
  StepPlanner(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan, PlannedCase& out)
      : c_(c), step_(step), settings_(settings), plan_(plan), out_(out), scans_(plan),
        D_(step.dp), T_(step.tp), K_(c.model.top_k), L_(c.model.layers),
        ranks_(static_cast<size_t>(D_) * T_), wide_replay_(out.allocation.replay_bits > 16),
        shape_{out.allocation.capture_rows, L_, K_}, copies_(ranks_), replays_(ranks_), replay_rows_written_(ranks_, 0) {
    if (settings.fault == Fault::layer_unchecked) shape_.layers = std::max(L_, step.layer + 1);  // no layer check
    out_.ranks.resize(ranks_);
  }

  void plan_call(const Call& call) {
    const std::vector<TensorRef> received = receive(call);
    std::vector<CaptureCall> calls(ranks_);
    const std::vector<bool> needs_tp_gather = decide(call, received, calls);
    const std::vector<TensorRef> tp_gathered = gather_tp_groups(plan_, needs_tp_gather, received, T_, K_, out_.gathered);
    schedule_kernels(call, received, tp_gathered, calls);
  }

  void place_buffers() {
    for (size_t r = 0; r < ranks_; ++r) place_rank(r);
  }

 private:
  // Each rank's received tensor, built from the rows the ranks hold: on the gathered path the
  // all-gatherv of every rank's segment, otherwise the call's tensor the rank received.
  std::vector<TensorRef> receive(const Call& call) {
    std::vector<TensorRef> received(ranks_);
    if (step_.path == Path::gathered && call.metadata) {
      std::vector<TensorRef> parts;
      for (const Segment& seg : call.segments) {
        RowTensor own;
        own.append_slice(call.tensors[0], {seg.offset, seg.offset + seg.rows});
        parts.push_back(materialize(plan_, own, K_));
      }
      const auto offsets = gather_offsets(call.segments, D_, T_, settings_.fault == Fault::tp_major_order);
      const TensorRef gathered = all_gatherv(plan_, parts, offsets, K_, out_.gathered);
      std::fill(received.begin(), received.end(), gathered);
      return received;
    }
    // Ranks that receive the same rows of the same tensor share one device copy of them.
    std::map<std::tuple<int, int64_t, int64_t>, TensorRef> held;
    for (size_t r = 0; r < ranks_; ++r) {
      const RankView view = call.view(r);
      const auto key = std::make_tuple(view.received, view.rows.lo, view.rows.hi);
      auto it = held.find(key);
      if (it == held.end()) it = held.emplace(key, materialize(plan_, call.input_of(view), K_)).first;
      received[r] = it->second;
    }
    return received;
  }

  // The decisions, taken on the host from shapes (the fault applied); which DP ranks' decisions
  // read the TP group's all-gatherv.
  std::vector<bool> decide(const Call& call, const std::vector<TensorRef>& received, std::vector<CaptureCall>& calls) {
    std::vector<bool> needs_tp_gather(static_cast<size_t>(D_), false);
    for (size_t r = 0; r < ranks_; ++r) {
      const RankView view = call.view(r);
      calls[r] = capture_call_for(step_, call, view, shape_);
      CaptureDecision& decision = out_.ranks[r].calls.emplace_back();
      settings_.policy->decide(calls[r], decision);
      apply_decision_fault(settings_.fault, calls[r], received[r].rows, decision);
      for (const Copy& copy : decision.copies)
        if (copy.from_tp_gather) needs_tp_gather[static_cast<size_t>(view.dp)] = true;
    }
    return needs_tp_gather;
  }

  // The monolithic kernel's replay job and the capture jobs of every rank for this call.
  void schedule_kernels(const Call& call, const std::vector<TensorRef>& received, const std::vector<TensorRef>& tp_gathered,
                        const std::vector<CaptureCall>& calls) {
    size_t most_copies = 0;
    for (size_t r = 0; r < ranks_; ++r) {
      if (c_.monolithic) {
        R3_CHECK(received[r].rows == call.kernel_rows, "the monolithic kernel processes the received tensor");
        replays_[r].push_back(
            {ReplayJob{received[r].row0, received[r].rows, 0, K_, c_.model.experts, wide_replay_}, call.index});
        replay_rows_written_[r] = std::max(replay_rows_written_[r], received[r].rows);
      }
      const CaptureDecision& decision = out_.ranks[r].calls.back();
      most_copies = std::max(most_copies, decision.copies.size());
      for (size_t i = 0; i < decision.copies.size(); ++i) {
        const Copy& copy = decision.copies[i];
        const TensorRef& src = copy.from_tp_gather ? tp_gathered[r / static_cast<size_t>(T_)] : received[r];
        copies_[r].push_back({capture_job(copy, src, decision, calls[r]), wave_base_ + i});
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
    rank.dp = step_.calls.empty() ? static_cast<int>(r) / T_ : static_cast<int>(r) / T_;
    rank.tp = step_.calls.empty() ? static_cast<int>(r) % T_ : static_cast<int>(r) % T_;
    int64_t reach = alloc.capture_rows;  // rows up to the furthest element written
    for (const RankCopy& rc : copies_[r]) {
      if (rc.job.rows <= 0) continue;
      const int64_t end = (rc.job.dst_row + rc.job.rows - 1) * width + int64_t{rc.job.layer} * K_ + K_;
      reach = std::max(reach, ceil_div(end, width));
    }
    rank.capture = place(plan_, false, alloc.capture_rows, std::max(kMinGuardRows, reach - alloc.capture_rows), width,
                         K_, Fill::untouched);
    for (RankCopy& rc : copies_[r]) {
      rc.job.dst = rank.capture.row0();
      rc.job.dst_lo = rank.capture.offset;
      rc.job.dst_hi = rank.capture.offset + rank.capture.elements();
      if (plan_.capture_waves.size() <= rc.wave) plan_.capture_waves.resize(rc.wave + 1);
      plan_.capture_waves[rc.wave].push_back(rc.job);
    }
    if (!c_.monolithic) return;
    const int64_t rows = alloc.replay_rows.value_or(0);
    rank.replay = place(plan_, !wide_replay_, rows, std::max(kMinGuardRows, replay_rows_written_[r] - rows), K_, K_,
                        Fill::replay_unwritten);
    for (auto& [job, wave] : replays_[r]) {
      job.dst = rank.replay->row0();
      if (plan_.replay_waves.size() <= wave) plan_.replay_waves.resize(wave + 1);
      plan_.replay_waves[wave].push_back(job);
    }
  }

  const Case& c_;
  const Step& step_;
  const PlanSettings& settings_;
  DevicePlan& plan_;
  PlannedCase& out_;
  OffsetScans scans_;
  const int D_, T_, K_, L_;
  const size_t ranks_;
  const bool wide_replay_;
  BufferShape shape_;
  std::vector<std::vector<RankCopy>> copies_;
  std::vector<std::vector<std::pair<ReplayJob, size_t>>> replays_;  // with each job's wave (its call)
  std::vector<int64_t> replay_rows_written_;
  size_t wave_base_ = 0;
};

}  // namespace

Result<PlannedCase> plan_case(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan) {
  R3_CHECK(settings.policy != nullptr, "a policy to decide with");
  PlannedCase out;
  R3_TRY(out.allocation, planned_allocation(c, step, settings));
  if (step.sglang) {
    plan_sglang_step(c, step, settings, plan, out);
    return out;
  }
  StepPlanner planner(c, step, settings, plan, out);
  for (const Call& call : step.calls) planner.plan_call(call);
  planner.place_buffers();
  return out;
}

}  // namespace r3::gpu::detail
