// vllm-ascend's export part (fuzz/export/engine_target.hpp): the plugin's patched capture
// (patch/worker/patch_routed_experts_capture.py reassigns RoutedExpertsCapturer.capture, so the
// class that module holds is the one to build), its data lines (vLLM's capture calls and the step's
// comm type) and its harness: vLLM's, with the comm type and torch.distributed faked
// (export_harness.hpp). A rank holds the reference's copies of every call.
#include <string>

#include "fuzz/engines/ascend/export_harness.hpp"
#include "fuzz/engines/ascend/parts.hpp"
#include "fuzz/engines/vllm/export_harness.hpp"
#include "fuzz/export/engine_target.hpp"
#include "fuzz/export/python_data.hpp"
#include "fuzz/io/source_text.hpp"
#include "reference/engines/ascend/layout.hpp"

namespace r3::ascend {
namespace {

using py::list;
using py::optional_list;
using py::text;

std::optional<int64_t> no_second_buffer(const Case&, const Allocation&, std::string_view) { return std::nullopt; }

std::string ascend_data(const Case& c, const StepInputs& in) {
  std::string out = "PATH = " + python_string_literal(to_string(c.path)) + "\n";
  out += "MONOLITHIC = False\n";
  out += "COMM = " + python_string_literal(comm_type_member(comm_of(c))) + "  # the step's MoECommType\n\n";
  out += "# The capture calls in order; received / tp_gather: per rank dp * TP + tp, an index into TENSORS\n"
         "# (what capture() is handed after prepare, and what the TP all-gather returns there; -1: no TP group).\nCALLS = [\n";
  for (const CallInputs& call : in.calls) {
    out += "    {\"index\": " + text(call.index) + ", \"row_offset\": " + text(call.row_offset) +
           ", \"chunk_size\": None, \"num_tokens_across_dp\": " + optional_list(call.num_tokens_across_dp) +
           ", \"local_sizes\": " + (call.num_tokens_across_dp ? optional_list(call.local_sizes) : "None") +
           ", \"kernel_rows\": 0,\n     \"received\": " + list(call.received) + ", \"tp_gather\": " + list(call.tp_gather) +
           "},\n";
  }
  return out + "]\n\n";
}

const std::string& harness() {
  static const std::string text = std::string(vllm::kVllmHarness) + std::string(kAscendHarness);
  return text;
}

}  // namespace

const EngineTarget& export_part() {
  static const EngineTarget target{
      "ascend",
      "vllm_ascend.patch.worker.patch_routed_experts_capture:RoutedExpertsCapturer",
      "vllm_ascend/patch/worker/patch_routed_experts_capture.py in vllm-project/vllm-ascend (it patches vLLM's class)",
      "What it tests: each rank's capturer, with vllm-ascend's patched capture, is called once per layer with\n"
      "the routing tensor that rank holds after moe_comm_method.prepare for the step's comm type, the forward\n"
      "context of the step (DP metadata, and _EXTRA_CTX.moe_comm_type) and a torch.distributed whose\n"
      "all_gather fills the TP group's slots with what the real collective would. Every routing value names\n"
      "its token (see rows_of), so a failure says: buffer row R of dp D tp T holds token (d, j), expected\n"
      "token (D, i).\n",
      "rows of the capture\n"
      "                              buffer (the second number is unused), per r3fuzz's models;\n",
      "",
      {"ascend", "ascend-0.26", "ascend-fixed"},
      no_second_buffer,
      ascend_data,
      harness(),
      nullptr,
      nullptr};
  return target;
}

}  // namespace r3::ascend
