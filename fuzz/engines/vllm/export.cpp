// The vLLM engine's export part (fuzz/export/engine_target.hpp): its real capturer, its sizings
// and its data lines (the capture calls with the forward context's DP metadata). A rank holds the
// reference's copies of every call, and there is no host cache. The harness is export_harness.hpp.
#include "fuzz/engines/vllm/export_harness.hpp"
#include "fuzz/engines/vllm/parts.hpp"
#include "fuzz/export/engine_target.hpp"
#include "fuzz/export/python_data.hpp"
#include "fuzz/io/source_text.hpp"

namespace r3::vllm {
namespace {

using py::list;
using py::optional_list;
using py::text;

std::optional<int64_t> replay_rows(const Case&, const Allocation& a, std::string_view) { return a.replay_rows; }

std::string vllm_data(const Case& c, const StepInputs& in) {
  std::string out = "PATH = " + python_string_literal(to_string(c.path)) + "\n";
  out += "MONOLITHIC = " + py::boolean(c.monolithic) + "\n\n";
  out += "# The capture calls in order; received / tp_gather: per rank dp * TP + tp, an index into TENSORS\n"
         "# (what capture() is handed, and what the TP all-gather returns there; -1: no TP group).\nCALLS = [\n";
  for (const CallInputs& call : in.calls) {
    out += "    {\"index\": " + text(call.index) + ", \"row_offset\": " + text(call.row_offset) +
           ", \"chunk_size\": " + (call.chunk_size > 0 ? text(call.chunk_size) : "None") +
           ", \"num_tokens_across_dp\": " + optional_list(call.num_tokens_across_dp) +
           ", \"local_sizes\": " + (call.num_tokens_across_dp ? optional_list(call.local_sizes) : "None") +
           ", \"kernel_rows\": " + text(call.kernel_rows) + ",\n     \"received\": " + list(call.received) +
           ", \"tp_gather\": " + list(call.tp_gather) + "},\n";
  }
  return out + "]\n\n";
}

}  // namespace

const EngineTarget& export_part() {
  static const EngineTarget target{
      "vllm",
      "vllm.model_executor.layers.fused_moe.routed_experts_capturer:RoutedExpertsCapturer",
      "vllm/model_executor/layers/fused_moe/routed_experts_capturer.py in vllm-project/vllm",
      "What it tests: each rank's capturer (built as vllm holds it, see make_capturer) is called once per\n"
      "capture call of the step (several with micro-batching or DP chunking), each with the routing\n"
      "tensor that rank receives, the forward context of that call (DP metadata) and a TP group whose\n"
      "all_gather returns what the real collective would. Every routing value names its token (see\n"
      "rows_of), so a failure says: buffer row R of dp D tp T holds token (d, j), expected token (D, i).\n",
      "rows of the capture\n"
      "                              buffer and of the monolithic replay buffer, per r3fuzz's models;\n",
      "",
      {"vllm-50874", "vllm-pre-50874", "r3-fixed"},
      replay_rows,
      vllm_data,
      kVllmHarness,
      nullptr,
      nullptr};
  return target;
}

}  // namespace r3::vllm
