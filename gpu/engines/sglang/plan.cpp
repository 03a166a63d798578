// Sources, paths under python/sglang/srt/ of SGLang upstream main at
// 30cb848d4b455a288a37cfeb6a45aff34f5634a6 (the same on sglang-miles at c447264eba46).
#include "gpu/engines/sglang/plan.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "gpu/detail/plan_support.hpp"
#include "reference/capturer.hpp"
#include "reference/engines/sglang/faults.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/policy.hpp"
#include "reference/fault.hpp"
#include "reference/guard_rows.hpp"

namespace r3::gpu::detail {
namespace {

using sglang::CaptureLayout;

const sglang::ForwardLayout& forward_layout(const Step& step) {
  const sglang::ForwardLayout* layout = sglang::forward_of(step);
  R3_CHECK(layout != nullptr, "an SGLang step carries its forward layout");
  return *layout;
}

class SglangPlanner {
 public:
  SglangPlanner(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan, PlannedCase& out)
      : step_(step), layout_(forward_layout(step)), settings_(settings), plan_(plan), out_(out), D_(step.dp), T_(step.tp),
        K_(c.model.top_k), L_(c.model.layers), ranks_(static_cast<size_t>(D_) * T_),
        shape_{out.allocation.capture_rows, L_, K_}, writes_(ranks_), published_(ranks_) {
    out_.ranks.resize(ranks_);
  }

  void plan_call(const Call& call) {
    const std::vector<TensorRef> received = receive(call);
    const std::vector<bool> needs_tp_gather = decide(call);
    // The capturer's attn-TP all-gather (state_capturer/routed_experts.py, capture:
    // attn_tp_all_gather_into_tensor into gather_buffer): each DP rank's T slices in TP order.
    gather_tp_groups(plan_, needs_tp_gather, received, T_, K_, out_.gathered, tp_gathered_);
    schedule_capture(received, tp_gathered_);
  }

  // After the last call: the window runs once per forward (model_runner.py, forward ->
  // on_forward_end), after every capture write of the step.
  void place_buffers() {
    window_wave_ = wave_base_;
    for (size_t r = 0; r < ranks_; ++r) place_rank(r);
  }

 private:
  bool capture_gathers_attn_tp() const {
    return layout_.capture == CaptureLayout::deepep_gather && settings_.fault != sglang::kNoAttnTpGather;
  }

  // What each rank's capture is handed. Under DP attention with a2a none the MoE input is the
  // DP gather of every rank's padded batch (layers/dp_attention.py, _dp_gather): MAX_LEN and
  // decode-graph segments through all_gather_into_tensor (_dp_gather_via_all_gather: with
  // attn_tp > 1 each attn-TP rank contributes its 1/attn_tp slice of the batch, group rank
  // d*T + t), SUM_LEN by each rank's copy at its offset and an all-reduce
  // (_dp_gather_via_all_reduce): a concatenation. Otherwise each rank's own tensor.
  std::vector<TensorRef> receive(const Call& call) {
    std::vector<TensorRef> received(ranks_);
    const CaptureLayout lay = layout_.capture;
    if (lay == CaptureLayout::dp_max_len || lay == CaptureLayout::dp_sum_len || lay == CaptureLayout::dp_graph) {
      std::fill(received.begin(), received.end(), dp_gather(call));
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

  TensorRef dp_gather(const Call& call) {
    const RowTensor& gathered = call.tensors.front();
    const bool equal = layout_.capture != CaptureLayout::dp_sum_len;
    const int64_t m = call.segments.empty() ? 0 : call.segments.front().rows;
    std::vector<TensorRef> parts;
    std::vector<int64_t> offsets;
    if (equal && T_ > 1 && m > 0 && m % T_ == 0) {
      const int64_t s = m / T_;
      const bool tp_major = settings_.fault == Fault::tp_major_order;
      for (const Segment& seg : call.segments)
        for (int t = 0; t < T_; ++t) {
          RowTensor slice;
          slice.append_slice(gathered, {seg.offset + t * s, seg.offset + (t + 1) * s});
          parts.push_back(materialize(plan_, slice, K_));
          offsets.push_back((tp_major ? int64_t{t} * D_ + seg.dp : int64_t{seg.dp} * T_ + t) * s);
        }
    } else {
      for (const Segment& seg : call.segments) {
        RowTensor own;
        own.append_slice(gathered, {seg.offset, seg.offset + seg.rows});
        parts.push_back(materialize(plan_, own, K_));
        offsets.push_back(seg.offset);
      }
    }
    return all_gatherv(plan_, parts, offsets, K_, out_.gathered);
  }

  // The policy's decisions (the fault applied to what capture is handed and to the decision);
  // which DP ranks need their attn-TP all-gather.
  std::vector<bool> decide(const Call& call) {
    std::vector<bool> needs(static_cast<size_t>(D_), capture_gathers_attn_tp());
    for (size_t r = 0; r < ranks_; ++r) {
      const RankView view = call.view(r);
      const CaptureCall cc = call_under_fault(settings_.fault, capture_call_for(step_, call, view, shape_));
      CaptureDecision& decision = out_.ranks[r].calls.emplace_back();
      settings_.policy->decide(cc, decision);
      r3::apply_decision_fault(settings_.fault, cc, decision);
      for (const Copy& copy : decision.copies)
        if (copy.from_tp_gather) needs[static_cast<size_t>(view.dp)] = true;
    }
    return needs;
  }

  CaptureJob copy_job(const TensorRef& src, int64_t src_row, int64_t rows, int64_t dst_row) const {
    CaptureJob job;
    job.src = src.row0;
    job.src_lo = src.lo;
    job.src_hi = src.hi;
    job.src_row = src_row;
    job.rows = rows;
    job.dst_row = dst_row;
    job.top_k = K_;
    job.row_width = L_ * K_;
    job.layer = step_.layer;
    return job;
  }

  // The capture kernel's writes into each rank's device buffer, and the rows the window will
  // publish. SGLang's capture writes the whole tensor it is handed at row 0
  // (state_capturer/base.py, BaseDeviceCache.capture: buffer[:batch, layer_id, :] = topk_ids),
  // whatever the decision; a copy {dst, src, rows} of the decision then says that published
  // rows [dst, dst + rows) are device rows [src, src + rows) (the window). sglang-fixed writes
  // the copy's rows at device rows [dst, dst + rows) and publishes them where they are.
  void schedule_capture(const std::vector<TensorRef>& received, const std::vector<TensorRef>& tp_gathered) {
    size_t most = 1;
    for (size_t r = 0; r < ranks_; ++r) {
      const CaptureDecision& decision = out_.ranks[r].calls.back();
      const TensorRef& gathered = tp_gathered[r / static_cast<size_t>(T_)];
      if (!sglang::writes_at_offset(decision)) {
        // The capturer writes the attn-TP gather when it gathers: DeepEP's, or any scattered
        // backend's under gather-scattered (the decision then copies from the gather).
        const bool gathers = capture_gathers_attn_tp() ||
                             std::any_of(decision.copies.begin(), decision.copies.end(),
                                         [](const Copy& c) { return c.from_tp_gather; });
        const TensorRef& whole = gathers ? gathered : received[r];
        writes_[r].push_back({copy_job(whole, 0, whole.rows, 0), wave_base_});
      }
      if (decision.rejected) continue;
      most = std::max(most, decision.copies.size());
      for (size_t i = 0; i < decision.copies.size(); ++i) {
        const Copy& copy = decision.copies[i];
        if (sglang::writes_at_offset(decision)) {
          const TensorRef& src = copy.from_tp_gather ? gathered : received[r];
          writes_[r].push_back({copy_job(src, copy.src_row, copy.rows, copy.dst_row), wave_base_ + i});
        }
        const int64_t from = sglang::writes_at_offset(decision) ? copy.dst_row : copy.src_row;
        for (int64_t j = 0; j < copy.rows; ++j) published_[r][copy.dst_row + j] = from + j;
      }
    }
    wave_base_ += most;
  }

  // Rank r's device buffer and published image, each R rows with back guards as deep as its
  // furthest write; the capture jobs, then the window jobs, pointed at them.
  void place_rank(size_t r) {
    const int64_t R = out_.allocation.capture_rows, width = int64_t{L_} * K_;
    PlannedRank& rank = out_.ranks[r];
    rank.dp = static_cast<int>(r) / T_;
    rank.tp = static_cast<int>(r) % T_;
    int64_t device_reach = R;
    for (const auto& [job, wave] : writes_[r])
      if (job.rows > 0) device_reach = std::max(device_reach, job.dst_row + job.rows);
    const BufferJob device =
        place(plan_, false, R, std::max(kMinGuardRows, device_reach - R), width, K_, Fill::untouched);
    for (auto& [job, wave] : writes_[r]) {
      point_at(job, device);
      push(wave, job);
    }
    // Runs of published rows reading consecutive device rows: one window job each.
    std::vector<CaptureJob> window;
    for (const auto& [row, from] : published_[r]) {
      if (!window.empty()) {
        CaptureJob& last = window.back();
        if (last.dst_row + last.rows == row && last.src_row + last.rows == from) {
          ++last.rows;
          continue;
        }
      }
      window.push_back(copy_job(tensor_ref(device), from, 1, row));
    }
    // A write past the device buffer must show in the image the judge reads: the window also
    // copies the device buffer's back guard over the image's (a torch size error in SGLang;
    // the capacity check reports the same case first where the allocation is known short).
    if (device_reach > R) window.push_back(copy_job(tensor_ref(device), R, device_reach - R, R));
    int64_t published_reach = std::max(R, device_reach);
    for (const CaptureJob& job : window) published_reach = std::max(published_reach, job.dst_row + job.rows);
    rank.capture = place(plan_, false, R, std::max(kMinGuardRows, published_reach - R), width, K_, Fill::untouched);
    for (CaptureJob& job : window) {
      if (job.rows <= 0) continue;
      job.src_width = static_cast<int32_t>(width);
      job.src_col = step_.layer * K_;
      point_at(job, rank.capture);
      push(window_wave_, job);
    }
  }

  static void point_at(CaptureJob& job, const BufferJob& buffer) {
    job.dst = buffer.row0();
    job.dst_lo = buffer.offset;
    job.dst_hi = buffer.offset + buffer.elements();
  }

  void push(size_t wave, const CaptureJob& job) {
    plan_.capture_wave(wave).push_back(job);
  }

  struct Write {
    CaptureJob job;
    size_t wave = 0;
  };
  const Step& step_;
  const sglang::ForwardLayout& layout_;
  const PlanSettings& settings_;
  DevicePlan& plan_;
  PlannedCase& out_;
  const int D_, T_, K_, L_;
  const size_t ranks_;
  BufferShape shape_;
  std::vector<std::vector<Write>> writes_;
  std::vector<std::map<int64_t, int64_t>> published_;  // per rank: published row -> device row
  std::vector<TensorRef> tp_gathered_;  // per DP rank, this call's
  size_t wave_base_ = 0;
  size_t window_wave_ = 0;
};

class SglangStepPlanner final : public EngineStepPlanner {
 public:
  int capture_images() const override { return 2; }  // the device buffer and the published image
  void plan_step(const Case& c, const Step& step, const PlanSettings& settings, DevicePlan& plan,
                 PlannedCase& out) const override {
    SglangPlanner planner(c, step, settings, plan, out);
    for (const Call& call : step.calls) planner.plan_call(call);
    planner.place_buffers();
  }
};

}  // namespace
}  // namespace r3::gpu::detail

namespace r3::sglang {

const gpu::EngineStepPlanner& gpu_step_planner() {
  static const gpu::detail::SglangStepPlanner planner;
  return planner;
}

}  // namespace r3::sglang
