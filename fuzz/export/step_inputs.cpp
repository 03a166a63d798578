#include "fuzz/export/step_inputs.hpp"

#include <algorithm>
#include <map>

#include "reference/capturer.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

// Each distinct tensor once: on the gathered path every rank receives the same batch, and a
// step of D*T ranks would otherwise repeat it D*T times.
class TensorTable {
 public:
  explicit TensorTable(std::vector<std::vector<RowRun>>& tensors) : tensors_(tensors) {}

  int index(const RowTensor& t) {
    std::vector<RowRun> runs(t.runs().begin(), t.runs().end());
    std::string key;
    for (const RowRun& r : runs)
      key += std::to_string(static_cast<int>(r.kind)) + ":" + std::to_string(r.dp) + ":" + std::to_string(r.first) +
             ":" + std::to_string(r.length) + ";";
    auto [it, added] = seen_.emplace(key, static_cast<int>(tensors_.size()));
    if (added) tensors_.push_back(std::move(runs));
    return it->second;
  }

 private:
  std::vector<std::vector<RowRun>>& tensors_;
  std::map<std::string, int> seen_;
};

int64_t run_end(const RowRun& r) { return r.kind == RowKind::placeholder ? r.first + 1 : r.first + r.length; }

}  // namespace

Result<StepInputs> step_inputs(const Case& c) {
  R3_TRY(const Step step, derive_step(c));
  StepInputs out;
  out.num_tokens = step.num_tokens_across_dp;
  out.rejection = step.rejection;
  TensorTable table(out.tensors);
  const size_t ranks = static_cast<size_t>(step.dp) * static_cast<size_t>(step.tp);
  out.expected.assign(out.rejection ? 0 : ranks, {});
  RowTensor scratch;
  for (const Call& call : step.calls) {
    CallInputs in;
    in.index = call.index;
    in.row_offset = call.row_offset;
    in.chunk_size = call.chunk_size;
    in.kernel_rows = c.monolithic ? call.kernel_rows : 0;
    if (call.metadata) {
      in.num_tokens_across_dp = call.metadata->num_tokens_across_dp;
      in.local_sizes = call.metadata->local_sizes;
    }
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView view = call.view(r);
      in.received.push_back(table.index(call.input_of(view)));
      in.tp_gather.push_back(step.tp > 1 ? table.index(copy_source(call, view, true, step.tp, scratch)) : -1);
      if (out.rejection || step.sglang) continue;
      // The reference's copies, applied in call order, are the rows a correct capture leaves.
      const RowTensor source = reference_source(call, view);
      auto& expected = out.expected[static_cast<size_t>(view.dp * step.tp + view.tp)];
      for (const Copy& copy : expected_copies(call, view)) {
        RowTensor rows;
        rows.append_slice(source, {copy.src_row, copy.src_row + copy.rows});
        int64_t dst = copy.dst_row;
        for (const RowRun& run : rows.runs()) {
          expected.push_back({dst, run});
          dst += run.length;
        }
      }
    }
    out.calls.push_back(std::move(in));
  }
  // SGLang publishes each rank's real tokens in order (the host-cache rows at their KV slots),
  // whatever slice of the batch its capture saw: on an attn-TP rank holding another rank's slice
  // the copies above would name none of them, and the judge (judge_concrete.cpp) expects all.
  if (step.sglang && !out.rejection)
    for (size_t r = 0; r < ranks; ++r) {
      const int d = static_cast<int>(r) / step.tp;
      const int64_t n = step.num_tokens_across_dp[static_cast<size_t>(d)];
      if (n > 0) out.expected[r].push_back({0, RowRun{n, RowKind::token, d, 0}});
    }
  for (const auto& tensor : out.tensors)
    for (const RowRun& r : tensor) out.row_span = std::max(out.row_span, run_end(r));
  for (const auto& rank : out.expected)
    for (const ExpectedRun& e : rank) out.row_span = std::max({out.row_span, run_end(e.run), e.dst_row + e.run.length});
  return out;
}

}  // namespace r3
