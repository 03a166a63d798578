// SGLang's trace export part (fuzz/export/trace_target.hpp): the data lines that say what each DP
// rank's RoutedExpertsCapturer sees at each step of the trace (contract 4.1 and 5): the rows of
// the forward in batch order with the KV slot each is written to, and when each step's deferred
// copy to host runs under the overlap scheduler; the harness (trace_export_harness.hpp) assigns
// the slots, keeps req_to_token, and reads each finished request back through get_topk.
//
// What it drives is the capturer only: a finding that lives in the scheduler, the memory pool or
// the P/D and speculative paths (KV moved between slots, a worker that never hands the rows over)
// is not the capturer's, and a trace that needs one is refused, naming the step or knob. So is DP
// attention, whose per-step window is the case export's (fuzz/engines/sglang/export.cpp).
#include <algorithm>

#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/engines/sglang/trace_export_harness.hpp"
#include "fuzz/export/python_data.hpp"
#include "fuzz/export/trace_target.hpp"
#include "reference/engines/sglang/lifecycle_copies.hpp"
#include "reference/engines/sglang/lifecycle_knobs.hpp"

namespace r3::sglang {
namespace {

using py::list;
using py::text;

// What the capturer alone cannot show; "" when the harness can drive the trace.
std::string refused_knobs(const Trace& t, const LifecycleKnobs& k) {
  if (k.dp_attention)
    return "topology.dp_attention: the SGLang trace harness drives ranks without DP attention (the per-step window "
           "under DP attention is what r3fuzz export CASE.json tests)";
  if (k.a2a != A2a::none) return "topology.a2a: the SGLang trace harness drives the capturer without an all-to-all backend";
  if (t.config.spec) return "config.spec: speculative decoding moves KV in the worker, not in the capturer";
  if (k.hicache) return "config.hicache: HiCache moves KV in the memory pool, not in the capturer";
  if (k.pd_router != PdRouter::none) return "config.pd_router: the P/D hand-off is the scheduler's, not the capturer's";
  return "";
}

Result<std::string> event_text(const TraceEvent& e, size_t s, size_t i) {
  switch (e.kind) {
    case TraceEvent::Kind::hit: return "(\"hit\", " + text(e.req) + ", " + text(e.len) + ")";
    case TraceEvent::Kind::preempt: return "(\"preempt\", " + text(e.req) + ")";
    case TraceEvent::Kind::abort: return std::string();  // the timeline's lists carry it
    case TraceEvent::Kind::weight_update: return e.flush ? std::string("(\"flush\",)") : std::string();
    default: break;
  }
  return Error{"steps[" + std::to_string(s) + "].events[" + std::to_string(i) + "]: " + std::string(to_string(e.kind)) +
               ": the SGLang trace harness drives the capturer only, and this KV move is the memory pool's or the "
               "scheduler's"};
}

// The CUDA-graph padding rows of a decode batch (the capture sees them; the window does not).
int64_t graph_padding(const Trace& t, const TraceStep& step, int64_t rows) {
  const auto& sizes = t.config.cuda_graph_decode;
  if (sizes.empty() || rows == 0) return 0;
  for (const Work& w : step.run)
    if (w.kind != Work::Kind::decode) return 0;
  for (int64_t size : sizes)
    if (size >= rows) return size - rows;
  return 0;
}

Result<std::string> sglang_data(const Trace& t, const Timeline& timeline) {
  const LifecycleKnobs knobs = knobs_of(t);
  if (std::string why = refused_knobs(t, knobs); !why.empty()) return Error{why};
  const std::vector<int> done = copy_completions(t, knobs);
  std::vector<int64_t> rank_rows(static_cast<size_t>(t.dp), 0);
  int64_t most_rows = 1;
  std::string steps = "STEPS = [\n";
  for (size_t s = 0; s < t.steps.size() && s < timeline.steps.size(); ++s) {
    const StepView& view = timeline.steps[s];
    std::string events;
    for (size_t i = 0; i < t.steps[s].events.size(); ++i) {
      R3_TRY(const std::string e, event_text(t.steps[s].events[i], s, i));
      if (!e.empty()) events += (events.empty() ? "" : ", ") + e;
    }
    std::string ranks;
    for (size_t d = 0; d < view.rows.size(); ++d) {
      std::string rows;
      for (const BatchRow& row : view.rows[d])
        rows += (rows.empty() ? "" : ", ") + std::string("(") + text(row.req) + ", " + text(row.pos) + ", " +
                py::boolean(row.kept && !row.lagging) + ")";
      const auto n = static_cast<int64_t>(view.rows[d].size());
      const int64_t padding = graph_padding(t, t.steps[s], n);
      rank_rows[d] += n;
      most_rows = std::max(most_rows, n + padding);
      ranks += (ranks.empty() ? "" : ", ") + std::string("{\"rows\": [") + rows + "], \"padding\": " + text(padding) + "}";
    }
    std::vector<int> before, finished;
    for (int req : view.aborted_before)
      if (timeline.requests[static_cast<size_t>(req)].returns_output) before.push_back(req);
    for (int req : view.finished)
      if (timeline.requests[static_cast<size_t>(req)].returns_output) finished.push_back(req);
    steps += "    {\"events\": [" + events + "], \"collect_before\": " + list(before) + ", \"version\": " +
             text(view.version) + ",\n     \"ranks\": [" + ranks + "],\n     \"collect\": " + list(finished) + "},\n";
  }
  steps += "]\n";
  std::vector<int64_t> rank_of, final_len, start_len;
  int64_t longest = 1;
  for (size_t r = 0; r < t.requests.size(); ++r) {
    rank_of.push_back(t.requests[r].dp);
    final_len.push_back(timeline.requests[r].total);
    start_len.push_back(t.requests[r].start_len);
    longest = std::max<int64_t>(longest, static_cast<int64_t>(t.requests[r].prompt.size() + t.requests[r].outputs.size()));
  }
  int64_t host_slots = 1;
  for (int64_t n : rank_rows) host_slots = std::max(host_slots, n + 1);

  std::string out = "DP, TP, OVERLAP = " + text(t.dp) + ", " + text(t.tp) + ", " + py::boolean(t.config.overlap) + "\n";
  out += "DEVICE_ROWS = " + text(most_rows) + "  # the device cache's rows: the most a forward captures\n";
  out += "HOST_SLOTS = " + text(host_slots) + "  # KV slots: 0 is the dummy slot, then one per row a rank forwards\n";
  out += "LONGEST = " + text(longest) + "  # req_to_token's width\n";
  out += "RANK_OF = " + list(rank_of) + "  # the DP rank that serves each request\n";
  out += "FINAL_LEN = " + list(final_len) + "  # the seqlen get_topk is given: prompt and kept outputs\n";
  out += "START_LEN = " + list(start_len) + "  # routed_experts_start_len\n";
  out += "# The steps: events before the forward (a prefix hit, a retract, flush_cache), the requests an abort\n"
         "# ends first (read back then), the forward's rows per DP rank in batch order as (request, position,\n"
         "# kept: its KV may be reused), its CUDA-graph padding rows, then the requests its result processing\n"
         "# finishes and reads back.\n";
  out += steps;
  std::vector<int64_t> copy_done(done.begin(), done.end());
  out += "# done_before_step of each step's copy to host under the overlap scheduler (the trace's copies record;\n"
         "# in order: the next step): the copy runs after the forward of step D - 1.\nCOPY_DONE = " +
         list(copy_done) + "\n";
  return out;
}

}  // namespace

const EngineTraceTarget& trace_export_part() {
  static const EngineTraceTarget target{
      "sglang",
      "sglang.srt.state_capturer.routed_experts:RoutedExpertsCapturer",
      "python/sglang/srt/state_capturer/routed_experts.py in sgl-project/sglang",
      "What it tests: each DP rank's RoutedExpertsCapturer (built as __init__ builds it: a device cache\n"
      "[rows, L, K + 1 shared expert] and a host cache [KV slots, L, K]) through the trace: per forward,\n"
      "capture once per MoE layer with the routes of the step's rows at its weight version, then\n"
      "on_forward_end with the forward batch's out_cache_loc (the KV slot of every row). Under the overlap\n"
      "scheduler it asks for the deferred copy (no_copy_to_cpu=True), copies the TopkCaptureOutput's\n"
      "tensors to host (map_device_tensors) and calls finalize when the trace's copies record says the\n"
      "copy ran: after the forward of step done_before_step - 1. A finished request is read back with\n"
      "get_topk through a fake\n"
      "req_to_token pool whose slots the harness allocated (a prefix hit maps to the slots that computed it).\n",
      "",
      sglang_data,
      kSglangTraceHarness};
  return target;
}

}  // namespace r3::sglang
