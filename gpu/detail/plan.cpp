// Lays one case's step out as device work. Per call: every rank's own rows are materialised
// (an SP shard or a whole batch), the all-gatherv assembles the gathered tensor from those
// contributions in EP/DP rank order (docs/layout-contract.md section 4), a TP all-gatherv serves ranks whose
// decision needs it, the monolithic kernel writes its replay output, and the capture kernel
// copies the decided rows. Guards are sized so every planned write lands in canary rows.
#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "gpu/detail/plan.hpp"
#include "reference/capturer.hpp"
#include "reference/provenance.hpp"

namespace r3::gpu::detail {
namespace {

// More than this many int32 values for one case is refused (1 GiB of host memory).
constexpr double kMaxCaseValues = double(int64_t{1} << 28);

struct TensorRef {
  int64_t row0 = 0;  // element of row 0
  int64_t rows = 0;
  int64_t lo = 0, hi = 0;  // guarded region
};

BufferJob place(DevicePlan& plan, bool narrow, int64_t rows, int64_t guard, int64_t width, int top_k, Fill fill) {
  int64_t& arena = narrow ? plan.arena16 : plan.arena32;
  BufferJob b{arena, rows, guard, width, top_k, fill, fill == Fill::tensor ? kTensorCanary : kCanary};
  arena += b.elements();
  (narrow ? plan.buffers16 : plan.buffers32).push_back(b);
  return b;
}

TensorRef tensor_ref(const BufferJob& b) { return {b.row0(), b.rows, b.offset, b.offset + b.elements()}; }

TensorRef new_tensor(DevicePlan& plan, int64_t rows, int top_k) {
  return tensor_ref(place(plan, false, rows, kMinGuardRows, top_k, top_k, Fill::tensor));
}

// A rank's own rows, with the values reference/provenance.hpp gives them.
TensorRef materialize(DevicePlan& plan, const RowTensor& rows, int top_k) {
  const TensorRef t = new_tensor(plan, rows.rows(), top_k);
  int64_t row = 0;
  for (const RowRun& run : rows.runs()) {
    plan.materialize.push_back({t.row0 + row * top_k, run.length, run.first, static_cast<int32_t>(run.kind), run.dp,
                                top_k});
    row += run.length;
  }
  return t;
}

// All-gatherv of `parts` (group-rank order) into a new tensor; part r lands at offsets[r].
TensorRef all_gatherv(DevicePlan& plan, const std::vector<TensorRef>& parts, const std::vector<int64_t>& offsets,
                      int top_k, std::vector<BufferJob>& checked) {
  int64_t rows = 0;
  for (const TensorRef& p : parts) rows += p.rows;
  const BufferJob out = place(plan, false, rows, kMinGuardRows, top_k, top_k, Fill::tensor);
  checked.push_back(out);
  GatherOp op;
  for (size_t r = 0; r < parts.size(); ++r) {
    op.pieces.push_back({parts[r].row0, out.row0() + offsets[r] * top_k, parts[r].rows * top_k, static_cast<int32_t>(r)});
  }
  plan.gathers.push_back(std::move(op));
  return tensor_ref(out);
}

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
  double values = ranks * double(a.capture_rows + 2 * kMinGuardRows) * c.model.layers * c.model.top_k;
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
  size_t wave = 0;
};

}  // namespace

Result<PlannedCase> plan_case(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan) {
  R3_CHECK(settings.policy != nullptr, "a policy to decide with");
  if (!provenance_fits(c)) {
    return Error{"gpu: the case is too large for provenance values (at most dp " + std::to_string(kProvenanceMaxDp) +
                 ", " + std::to_string(kProvenanceMaxRows) + " rows per rank, top_k " +
                 std::to_string(kProvenanceMaxTopK) + ", 256 layers)"};
  }
  PlannedCase out;
  out.allocation = gpu_allocation(c, *settings.policy, settings.fault);
  const Allocation& alloc = out.allocation;
  if (planned_values(c, step, alloc) > kMaxCaseValues) {
    return Error{"gpu: the case needs more than 2^28 values of device memory; the concrete pipeline runs small cases"};
  }
  const int D = step.dp, T = step.tp, K = c.model.top_k, L = c.model.layers;
  const size_t rank_count = static_cast<size_t>(D) * T;
  const bool wide_replay = alloc.replay_bits > 16;
  BufferShape shape{alloc.capture_rows, L, K};
  if (settings.fault == Fault::layer_unchecked) shape.layers = std::max(L, step.layer + 1);  // no layer check

  out.ranks.resize(rank_count);
  std::vector<std::vector<RankCopy>> copies(rank_count);
  std::vector<int64_t> replay_rows_written(rank_count, 0);
  std::vector<std::vector<std::pair<ReplayJob, size_t>>> replays(rank_count);
  OffsetScans scans(plan);
  size_t wave_base = 0;

  for (const Call& call : step.calls) {
    // Each rank's received tensor, built from the rows the ranks hold.
    std::vector<TensorRef> received(rank_count);
    if (step.path == Path::gathered && call.metadata) {
      std::vector<TensorRef> parts;
      for (const Segment& seg : call.segments) {
        RowTensor own;
        own.append_slice(call.tensors[0], {seg.offset, seg.offset + seg.rows});
        parts.push_back(materialize(plan, own, K));
      }
      const auto offsets = gather_offsets(call.segments, D, T, settings.fault == Fault::tp_major_order);
      const TensorRef gathered = all_gatherv(plan, parts, offsets, K, out.gathered);
      std::fill(received.begin(), received.end(), gathered);
    } else {
      std::map<int, TensorRef> held;
      for (size_t r = 0; r < rank_count; ++r) {
        const int index = call.ranks[r].received;
        auto it = held.find(index);
        if (it == held.end()) it = held.emplace(index, materialize(plan, call.tensors[static_cast<size_t>(index)], K)).first;
        received[r] = it->second;
      }
    }

    // Decisions, taken on the host from shapes.
    std::vector<CaptureCall> calls(rank_count);
    std::vector<bool> needs_tp_gather(static_cast<size_t>(D), false);
    for (size_t r = 0; r < rank_count; ++r) {
      const RankView& view = call.ranks[r];
      calls[r] = capture_call_for(step, call, view, shape);
      CaptureDecision& decision = out.ranks[r].calls.emplace_back();
      settings.policy->decide(calls[r], decision);
      apply_decision_fault(settings.fault, calls[r], received[r].rows, decision);
      for (const Copy& copy : decision.copies)
        if (copy.from_tp_gather) needs_tp_gather[static_cast<size_t>(view.dp)] = true;
    }
    // TP all-gatherv of what each TP rank of the DP rank received (the SP shards on sp_shard).
    std::vector<TensorRef> tp_gathered(static_cast<size_t>(D));
    for (int d = 0; d < D; ++d) {
      if (!needs_tp_gather[static_cast<size_t>(d)]) continue;
      std::vector<TensorRef> parts(received.begin() + d * T, received.begin() + (d + 1) * T);
      std::vector<int64_t> offsets(static_cast<size_t>(T));
      for (int t = 1; t < T; ++t) offsets[static_cast<size_t>(t)] = offsets[static_cast<size_t>(t - 1)] + parts[static_cast<size_t>(t - 1)].rows;
      tp_gathered[static_cast<size_t>(d)] = all_gatherv(plan, parts, offsets, K, out.gathered);
    }

    size_t most_copies = 0;
    for (size_t r = 0; r < rank_count; ++r) {
      const RankView& view = call.ranks[r];
      if (c.monolithic) {
        R3_CHECK(received[r].rows == call.kernel_rows, "the monolithic kernel processes the received tensor");
        replays[r].push_back({ReplayJob{received[r].row0, received[r].rows, 0, K, c.model.experts, wide_replay}, call.index});
        replay_rows_written[r] = std::max(replay_rows_written[r], received[r].rows);
      }
      const CaptureDecision& decision = out.ranks[r].calls.back();
      most_copies = std::max(most_copies, decision.copies.size());
      for (size_t i = 0; i < decision.copies.size(); ++i) {
        const Copy& copy = decision.copies[i];
        const TensorRef& src = copy.from_tp_gather ? tp_gathered[static_cast<size_t>(view.dp)] : received[r];
        CaptureJob job;
        job.src = src.row0;
        job.src_lo = src.lo;
        job.src_hi = src.hi;
        job.src_row = copy.src_row;
        job.rows = copy.rows;
        job.dst_row = copy.dst_row;
        job.top_k = K;
        job.row_width = L * K;
        job.layer = step.layer;
        if (settings.selection == Selection::device_offsets) {
          if (auto source = device_offset_source(decision, calls[r], settings.fault)) {
            const auto& [values, index] = *source;
            job.offset_index = scans.index_of(values, index);
            job.src_row = copy.src_row - std::accumulate(values.begin(),
                                                         values.begin() + static_cast<std::ptrdiff_t>(std::min(index, values.size())),
                                                         int64_t{0});
          }
        }
        copies[r].push_back({job, wave_base + i});
      }
    }
    wave_base += most_copies;
  }

  // Buffers, with back guards deep enough for the furthest planned write.
  const int64_t width = int64_t{L} * K;
  for (size_t r = 0; r < rank_count; ++r) {
    PlannedRank& rank = out.ranks[r];
    rank.dp = step.calls.empty() ? static_cast<int>(r) / T : step.calls.front().ranks[r].dp;
    rank.tp = step.calls.empty() ? static_cast<int>(r) % T : step.calls.front().ranks[r].tp;
    int64_t reach = alloc.capture_rows;  // rows up to the furthest element written
    for (const RankCopy& rc : copies[r]) {
      if (rc.job.rows <= 0) continue;
      const int64_t end = (rc.job.dst_row + rc.job.rows - 1) * width + int64_t{rc.job.layer} * K + K;
      reach = std::max(reach, ceil_div(end, width));
    }
    rank.capture = place(plan, false, alloc.capture_rows, std::max(kMinGuardRows, reach - alloc.capture_rows), width, K,
                         Fill::untouched);
    for (RankCopy& rc : copies[r]) {
      rc.job.dst = rank.capture.row0();
      rc.job.dst_lo = rank.capture.offset;
      rc.job.dst_hi = rank.capture.offset + rank.capture.elements();
      if (plan.capture_waves.size() <= rc.wave) plan.capture_waves.resize(rc.wave + 1);
      plan.capture_waves[rc.wave].push_back(rc.job);
    }
    if (!c.monolithic) continue;
    const int64_t rows = alloc.replay_rows.value_or(0);
    rank.replay = place(plan, !wide_replay, rows, std::max(kMinGuardRows, replay_rows_written[r] - rows), K, K, Fill::replay_unwritten);
    for (auto& [job, wave] : replays[r]) {
      job.dst = rank.replay->row0();
      if (plan.replay_waves.size() <= wave) plan.replay_waves.resize(wave + 1);
      plan.replay_waves[wave].push_back(job);
    }
  }
  return out;
}

}  // namespace r3::gpu::detail
