// The SGLang engine's export part (fuzz/export/engine_target.hpp): its real capturer, its sizings
// and its data lines, the capture calls with the layout each call's rows have (what the proposed
// fix reads) and the forward end (what _get_local_slice reads), the rows each rank publishes and
// its host cache's slots. The harness is export_harness.hpp.
//
// Sources: SGLang upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6, paths under
// python/sglang/srt/: state_capturer/routed_experts.py (RoutedExpertsCapturer: __init__, capture,
// _get_local_slice), state_capturer/base.py (BaseDeviceCache, BaseHostCache, on_forward_end),
// layers/dp_attention.py (get_dp_local_slice_cpu), model_executor/model_runner.py (forward).
#include <algorithm>

#include "fuzz/engines/sglang/export_harness.hpp"
#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/export/engine_target.hpp"
#include "fuzz/export/python_data.hpp"
#include "fuzz/io/source_text.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/layout.hpp"

namespace r3::sglang {
namespace {

using py::boolean;
using py::list;
using py::text;

// routed_experts.py, RoutedExpertsCapturer.__init__: with DeepEP, gather_buffer holds
// device rows * attn_tp under DP attention, device rows * 1 without it. The proposed fix
// (sglang-fixed) gathers every scattered backend into device rows * attn_tp.
std::optional<int64_t> gather_rows(const Case& c, const Allocation& a, std::string_view sizing) {
  const int64_t attn_tp = c.topology.tp;
  if (sizing == "sglang-fixed") return a.capture_rows * attn_tp;
  const Forward& fw = *forward_of(c);
  if (fw.a2a != A2a::deepep) return std::nullopt;
  return a.capture_rows * (fw.dp_attention ? attn_tp : 1);
}

template <class Per>
std::string per_rank(size_t ranks, Per value) {
  std::vector<int64_t> values;
  for (size_t d = 0; d < ranks; ++d) values.push_back(value(d));
  return list(values);
}

std::string sglang_data(const Case& c, const StepInputs& in) {
  const Step step = *derive_step(c);  // step_inputs derived it already: the case is valid
  const ForwardLayout& f = *forward_of(step);
  const size_t D = static_cast<size_t>(step.dp);
  const Forward& fw = *forward_of(c);
  std::string out = "DP_ATTENTION = " + boolean(f.dp_attention) + "\n";
  out += "A2A = " + python_string_literal(to_string(f.a2a)) + "  # --moe-a2a-backend\n";
  out += "FORWARD = " + python_string_literal(to_string(f.kind)) + "\n";
  out += "CHUNKED_PREFILL_SIZE, MAX_RUNNING_REQUESTS = " + text(fw.chunked_prefill_size) + ", " +
         text(fw.max_running_requests) + "\n";
  out += "# NUM_TOKENS: each DP rank's real tokens, at KV slots 1, 2, ... (padding rows go to slot 0).\n\n";
  out += "# The capture calls in order (two under TBO). received / tp_gather: per rank dp * TP + tp, an\n"
         "# index into TENSORS (what capture() is handed, and what attn_tp_all_gather_into_tensor fills in\n"
         "# there; -1: attn-TP of one rank, the gather is the tensor itself). Per DP rank, where the call's\n"
         "# rows are (not read by SGLang's capturer; the proposed fix reads them): dp_local_start, this\n"
         "# rank's first row in a DP-gathered tensor; dp_local_num_tokens, its rows; batch_offset, the\n"
         "# call's first row in the rank's batch (a TBO child's offset).\nCALLS = [\n";
  for (size_t k = 0; k < in.calls.size(); ++k) {
    const CallInputs& call = in.calls[k];
    out += "    {\"index\": " + text(call.index) + ", \"received\": " + list(call.received) +
           ", \"tp_gather\": " + list(call.tp_gather) + ",\n     \"dp_local_start\": " +
           per_rank(D, [&](size_t d) { return f.segment_start[k][d]; }) +
           ", \"dp_local_num_tokens\": " + per_rank(D, [&](size_t d) { return f.call_rows[k][d].size(); }) +
           ", \"batch_offset\": " + per_rank(D, [&](size_t d) { return f.call_rows[k][d].lo; }) + "},\n";
  }
  out += "]\n\n";
  std::string bs = "[";
  for (size_t d = 0; d < D; ++d) bs += (d ? ", " : "") + (f.runner_bs[d] > 0 ? text(f.runner_bs[d]) : std::string("None"));
  out += "# The forward end: forward_batch.global_num_tokens_cpu, len(forward_batch.out_cache_loc) per DP\n"
         "# rank, can_run_graph (model_runner.py, _forward_raw), and per DP rank the decode CUDA-graph\n"
         "# runner's bs (None: no replay has set it yet) and captured_req_width.\n";
  out += "FORWARD_END = {\"global_num_tokens_cpu\": " + list(f.global_num_tokens_cpu) +
         ", \"out_cache_loc\": " + list(f.out_cache_loc) + ", \"can_run_graph\": " + boolean(f.can_run_graph()) +
         ",\n               \"runner_bs\": " + bs + "], \"captured_req_width\": " + text(f.spec_width) + "}\n\n";
  out += "# EXPECTED below: its first number is the published row j, host-cache slot j + 1.\n";
  return out;
}

// SGLang publishes each rank's real tokens in order (the host-cache rows at their KV slots),
// whatever slice of the batch its capture saw: on an attn-TP rank holding another rank's slice
// the reference's copies would name none of them, and the judge (judge_concrete.cpp) expects all.
std::optional<ExpectedRun> published_run(const Step& step, size_t rank) {
  const int d = static_cast<int>(rank) / step.tp;
  const int64_t n = step.num_tokens_across_dp[static_cast<size_t>(d)];
  if (n <= 0) return std::nullopt;
  return ExpectedRun{0, RowRun{n, RowKind::token, d, 0}};
}

// The most KV slots of a rank + 1 (slot 0: padding): the host cache each rank's test allocates.
int64_t host_slots(const Step& step) {
  int64_t most = 0;
  for (int64_t slots : forward_of(step)->out_cache_loc) most = std::max(most, slots + 1);
  return most;
}

}  // namespace

const EngineTarget& export_part() {
  static const EngineTarget target{
      "sglang",
      "sglang.srt.state_capturer.routed_experts:RoutedExpertsCapturer",
      "python/sglang/srt/state_capturer/routed_experts.py in sgl-project/sglang,\n"
      "                              read at 30cb848d4b455a288a37cfeb6a45aff34f5634a6",
      "What it tests: each rank's capturer (built as SGLang builds it, see make_capturer: device buffer\n"
      "[R, L, K + shared experts], host cache, DeepEP gather buffer) is called with capture(layer, topk_ids)\n"
      "for every capture call of the forward (two under TBO), each with the tensor that rank's MoE layer\n"
      "hands it, then on_forward_end(forward_batch, can_run_graph, cuda_graph_batch) as the model runner\n"
      "calls it. SGLang's runtime getters that capture and _get_local_slice read are faked from the case\n"
      "(install_fakes). Every routing value names its token (see rows_of), so a failure says: published\n"
      "row j of dp D tp T (its KV slot) holds token (d, i), or a stale row, expected token (D, j).\n",
      "rows of the device\n"
      "                              buffer and of the DeepEP gather buffer (None: not allocated), per\n"
      "                              r3fuzz's models: sglang, sglang-miles, sglang-fixed;\n",
      "  R3FUZZ_SGLANG_VERSION=V     what model_runner.py passes as cuda_graph_batch (that code is not in\n"
      "                              the capturer): upstream (default), the decode runner's bs (requests);\n"
      "                              miles, bs * captured_req_width (tokens), as sglang-miles does\n",
      {"sglang", "sglang-miles", "sglang-fixed"},
      gather_rows,
      sglang_data,
      kSglangHarness,
      published_run,
      host_slots};
  return target;
}

}  // namespace r3::sglang
