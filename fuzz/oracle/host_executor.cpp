#include "fuzz/oracle/host_executor.hpp"

#include <algorithm>

#include "reference/capturer.hpp"
#include "reference/provenance.hpp"

namespace r3 {
namespace {

GuardedImage make_image(int64_t rows, int64_t guard, int64_t width, int bits) {
  GuardedImage img;
  img.rows = rows;
  img.guard_rows = guard;
  img.row_width = width;
  img.bits = bits;
  // Guards hold the canary; the caller fills the body.
  img.data.resize(static_cast<size_t>((rows + 2 * guard) * width));
  const int32_t canary = stored_value(kCanary, bits);
  std::fill(img.data.begin(), img.data.begin() + guard * width, canary);
  std::fill(img.data.end() - guard * width, img.data.end(), canary);
  return img;
}

// Calls `write(buffer_row, id)` for rows [src, src + rows) of `from`, in order.
template <class Write>
void for_each_row(const RowTensor& from, int64_t src, int64_t rows, int64_t dst, Write&& write) {
  int64_t start = 0;
  for (const RowRun& run : from.runs()) {
    const int64_t end = start + run.length;
    const int64_t lo = std::max(start, src), hi = std::min(end, src + rows);
    for (int64_t i = lo; i < hi; ++i) write(dst + (i - src), run.at(i - start));
    if (end >= src + rows) break;
    start = end;
  }
}

struct Extent {
  int64_t before = 0;  // rows written before row 0
  int64_t after = 0;   // rows written past the end
  void cover(int64_t lo, int64_t hi, int64_t rows) {
    before = std::max(before, -lo);
    after = std::max(after, hi - rows);
  }
  int64_t guard(int64_t most) const {
    return std::clamp(std::max(before, after), kMinGuardRows, std::max(kMinGuardRows, most));
  }
};

}  // namespace

ConcreteOutcome execute_on_host(const Case& c, const Step& step, const CapturePolicy& policy, HostRunStats* stats,
                                int64_t max_guard_rows) {
  ConcreteOutcome out;
  out.allocation = policy.allocate(c);
  const Allocation& a = out.allocation;
  const int L = c.model.layers, K = c.model.top_k;
  const BufferShape buffer{a.capture_rows, L, K};
  const size_t rank_count = static_cast<size_t>(step.dp) * step.tp;
  int64_t folded = 0;
  RowTensor scratch;

  // Decide first, so the guard regions can be sized to hold every write.
  out.ranks.resize(rank_count);
  Extent capture_extent;
  for (size_t r = 0; r < rank_count; ++r) {
    ConcreteRank& rank = out.ranks[r];
    rank.dp = static_cast<int>(r) / step.tp;
    rank.tp = static_cast<int>(r) % step.tp;
    for (const Call& call : step.calls) {
      const RankView view = call.view(r);
      CaptureDecision& d = rank.calls.emplace_back();
      policy.decide(capture_call_for(step, call, view, buffer), d);
      for (const Copy& copy : d.copies) {
        const int64_t source_rows = copy_source(call, view, copy.from_tp_gather, step.tp, scratch).rows();
        const int64_t readable = std::clamp<int64_t>(source_rows - copy.src_row, 0, copy.rows);
        if (readable > 0) capture_extent.cover(copy.dst_row, copy.dst_row + readable, a.capture_rows);
      }
    }
  }

  const int64_t width = int64_t{L} * K;
  const int64_t guard = capture_extent.guard(std::min(max_guard_rows, kMaxGuardRows));
  // Every buffer starts as the same stale step: build it once, copy it per rank.
  std::vector<int32_t> untouched(static_cast<size_t>(a.capture_rows * width));
  for (int64_t row = 0; row < a.capture_rows; ++row)
    for (int l = 0; l < L; ++l)
      for (int k = 0; k < K; ++k) untouched[static_cast<size_t>(row * width + l * K + k)] = untouched_value(row, l, k);
  for (ConcreteRank& rank : out.ranks) {
    rank.capture = make_image(a.capture_rows, guard, width, 32);
    std::copy(untouched.begin(), untouched.end(), rank.capture.data.begin() + guard * width);
  }

  // Apply each call's copies in order: later calls overwrite earlier ones, as in vLLM.
  for (size_t r = 0; r < rank_count; ++r) {
    ConcreteRank& rank = out.ranks[r];
    int32_t* body = rank.capture.data.data() + guard * width;
    for (size_t ci = 0; ci < step.calls.size(); ++ci) {
      const Call& call = step.calls[ci];
      const RankView view = call.view(r);
      const CaptureDecision& d = rank.calls[ci];
      if (d.rejected) continue;
      for (const Copy& copy : d.copies) {
        const RowTensor& source = copy_source(call, view, copy.from_tp_gather, step.tp, scratch);
        const int64_t readable = std::clamp<int64_t>(source.rows() - copy.src_row, 0, copy.rows);
        if (copy.src_row < 0 || readable <= 0) continue;
        for_each_row(source, copy.src_row, readable, copy.dst_row, [&](int64_t row, const RowId& id) {
          // A write beyond the guard region lands on its outermost row: the overflow still shows
          // (understated), where dropping it would let the case pass.
          if (row < -guard || row >= a.capture_rows + guard) ++folded;
          row = std::clamp(row, -guard, a.capture_rows + guard - 1);
          int32_t* slot = body + row * width + int64_t{step.layer} * K;
          for (int k = 0; k < K; ++k) slot[k] = routing_value(id, k);
        });
      }
    }
  }

  // The monolithic kernel writes the routing of every row it processes, call by call.
  if (a.replay_rows && step.replay_rows_needed) {
    const int64_t rows = *a.replay_rows;
    int64_t most = 0;
    for (const Call& call : step.calls) most = std::max(most, call.kernel_rows);
    const int64_t replay_guard = std::clamp(most - rows, kMinGuardRows, kMaxGuardRows);
    for (size_t r = 0; r < rank_count; ++r) {
      GuardedImage img = make_image(rows, replay_guard, K, a.replay_bits);
      int32_t* body = img.data.data() + replay_guard * K;
      std::fill(body, body + rows * K, stored_value(kReplayUntouched, a.replay_bits));
      for (const Call& call : step.calls) {
        const RowTensor input = call.input_of(call.view(r));
        const int64_t kernel_rows = std::min(call.kernel_rows, input.rows());
        for_each_row(input, 0, kernel_rows, 0, [&](int64_t row, const RowId& id) {
          if (row >= rows + replay_guard) ++folded;
          row = std::min(row, rows + replay_guard - 1);
          for (int k = 0; k < K; ++k)
            body[row * K + k] = stored_value(replay_value(routing_value(id, k), c.model.experts), a.replay_bits);
        });
      }
      out.ranks[r].replay = std::move(img);
    }
  }
  if (stats) stats->rows_folded = folded;
  return out;
}

}  // namespace r3
