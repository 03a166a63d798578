// TensorRT-LLM's trace export part (fuzz/export/trace_target.hpp): the data lines that say what
// PyExecutor hands RouteCapture at each step of the trace, in the order
// reference/engines/trtllm/lifecycle_run.cpp models (contract 4.3 and 5): the step's events,
// attach_routes for requests an abort ends before the forward, prepare (context requests, then
// generation requests, then CUDA-graph dummies), one capture per MoE layer, finish_forward, then
// attach_routes for the requests the step's result processing finishes (after the overlap
// scheduler's extra step for one that runs it). The harness is trace_export_harness.hpp.
#include <algorithm>

#include "fuzz/engines/trtllm/parts.hpp"
#include "fuzz/engines/trtllm/trace_export_harness.hpp"
#include "fuzz/export/python_data.hpp"
#include "fuzz/export/trace_target.hpp"
#include "reference/trace/copies.hpp"

namespace r3::trtllm {
namespace {

using py::list;
using py::text;

// The dummy generation requests a decode-only batch is padded with up to a CUDA-graph batch
// size; the same rule as the lifecycle walk's (reference/engines/trtllm/lifecycle_run.cpp,
// graph_padding): a batch above the largest size runs eagerly, unpadded.
int64_t graph_dummies(const Trace& t, const TraceStep& step) {
  const auto& sizes = t.config.cuda_graph_decode;
  if (sizes.empty() || step.run.empty()) return 0;
  for (const Work& w : step.run)
    if (w.kind != Work::Kind::decode) return 0;
  const auto rows = static_cast<int64_t>(step.run.size());
  for (int64_t size : sizes)
    if (size >= rows && size <= t.config.token_budget) return size - rows;
  return 0;
}

// Whether `req` forwards a lagging row in step s + 1, so that its attach_routes waits for it.
bool lags_into(const Timeline& timeline, size_t s, int req) {
  if (s + 1 >= timeline.steps.size()) return false;
  for (const auto& rank : timeline.steps[s + 1].rows)
    for (const BatchRow& row : rank)
      if (row.req == req && row.lagging) return true;
  return false;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + items[i];
  return out + "]";
}

Result<std::string> event_text(const TraceEvent& e, size_t s, size_t i) {
  const std::string where = "steps[" + std::to_string(s) + "].events[" + std::to_string(i) + "]: ";
  switch (e.kind) {
    case TraceEvent::Kind::hit: return "(\"hit\", " + text(e.req) + ", " + text(e.len) + ")";
    case TraceEvent::Kind::preempt: return "(\"preempt\", " + text(e.req) + ")";
    case TraceEvent::Kind::abort: return std::string();  // the attach lists carry it
    case TraceEvent::Kind::weight_update:
      // PyExecutor.reset_prefix_cache calls RouteCapture.clear_shared; the version itself is the
      // forward's (STEPS[s]["version"]).
      return e.flush ? std::string("(\"reset_prefix_cache\",)") : std::string();
    default: break;
  }
  return Error{where + std::string(to_string(e.kind)) +
               ": the TensorRT-LLM trace harness cannot drive a KV move (route_capture.py has no hook for it)"};
}

Result<std::string> trtllm_data(const Trace& t, const Timeline& timeline) {
  if (t.dp != 1)
    return Error{"topology.dp: " + std::to_string(t.dp) + ": the TensorRT-LLM trace harness drives one DP rank"};
  if (t.config.spec)
    return Error{"config.spec: TensorRT-LLM refuses route capture with speculative decoding; nothing to export"};
  std::vector<int> deferred;
  int64_t most_rows = t.config.token_budget;
  std::string steps = "STEPS = [\n";
  const std::vector<int> done_before = completion_steps(t);
  for (size_t s = 0; s < t.steps.size() && s < timeline.steps.size(); ++s) {
    const TraceStep& ts = t.steps[s];
    const StepView& view = timeline.steps[s];
    std::vector<std::string> events, context, generation;
    for (size_t i = 0; i < ts.events.size(); ++i) {
      R3_TRY(const std::string e, event_text(ts.events[i], s, i));
      if (!e.empty()) events.push_back(e);
    }
    for (size_t i = 0; i < ts.run.size(); ++i) {
      const Work& w = ts.run[i];
      if (w.kind == Work::Kind::extend)
        context.push_back("(" + text(w.req) + ", " + text(w.lo) + ", " + text(w.hi) + ")");
      else if (w.kind == Work::Kind::decode)
        generation.push_back("(" + text(w.req) + ", " + text(w.lo) + ")");
      else
        return Error{"steps[" + std::to_string(s) + "].run[" + std::to_string(i) +
                     "]: a verify: TensorRT-LLM refuses route capture with speculative decoding"};
    }
    const int64_t dummies = graph_dummies(t, ts);
    int64_t rows = dummies;
    for (const auto& rank : view.rows) rows += static_cast<int64_t>(rank.size());
    most_rows = std::max(most_rows, rows);
    std::vector<int> before, after = deferred;
    deferred.clear();
    for (int req : view.aborted_before)
      if (timeline.requests[static_cast<size_t>(req)].returns_output) before.push_back(req);
    for (int req : view.finished) {
      if (!timeline.requests[static_cast<size_t>(req)].returns_output) continue;
      (lags_into(timeline, s, req) ? deferred : after).push_back(req);
    }
    steps += "    {\"events\": " + quoted_list(events) + ", \"attach_before\": " + list(before) +
             ",\n     \"context\": " + quoted_list(context) + ", \"generation\": " + quoted_list(generation) +
             ", \"dummies\": " + text(dummies) + ", \"version\": " + text(view.version) + ", \"attach\": " + list(after) +
             "},\n";
  }
  steps += "]\n";
  // A copy that lands before forward D is first seen by a non-waiting query in step D - 1
  // (reference/trace/copies.hpp); in order, in its own step.
  std::vector<int64_t> seen;
  for (size_t s = 0; s < t.steps.size(); ++s)
    seen.push_back(std::max<int64_t>(static_cast<int64_t>(s), s < done_before.size() ? done_before[s] - 1 : 0));
  std::vector<int64_t> final_len;
  for (const RequestView& v : timeline.requests) final_len.push_back(v.total);

  std::string out = "MAX_NUM_TOKENS = " + text(most_rows) + "  # model_engine.max_num_tokens: rows a forward holds at most\n";
  out += "TOKENS_PER_BLOCK = " + text(t.config.page) + "\n";
  out += "FINAL_LEN = " + list(final_len) + "  # S: the tokens a request holds when it finishes (prompt and kept outputs)\n";
  out += "# The steps as PyExecutor hands them to RouteCapture: events before the forward (a prefix hit's\n"
         "# prepopulated_prompt_len, an eviction, reset_prefix_cache), attach_routes for requests an abort ends\n"
         "# first, the context requests (request, chunk begin, end) and generation requests (request, input\n"
         "# position) of the forward with its CUDA-graph dummies and weight version, then attach_routes.\n";
  out += steps;
  out += "# The step at whose drains each step's copy to host is first seen landed (the trace's copies record;\n"
         "# in order: its own step). A forced drain or a synchronize lands it at once.\nCOPY_SEEN = " +
         list(seen) + "\n";
  return out;
}

}  // namespace

const EngineTraceTarget& trace_export_part() {
  static const EngineTraceTarget target{
      "trtllm",
      "tensorrt_llm._torch.route_capture:RouteCapture",
      "tensorrt_llm/_torch/route_capture.py in NVIDIA/TensorRT-LLM (PR #18397)",
      "What it tests: RouteCapture's static facade, as PyExecutor drives it: create, then per step prepare\n"
      "(a scheduled batch of fake LlmRequests), capture once per MoE layer with the routes the trace's\n"
      "forward computes, finish_forward, clear_shared on reset_prefix_cache, and attach_routes when a\n"
      "request finishes (its py_result receives routed_experts). CUDA streams and events are faked on\n"
      "CPU: a non-blocking copy issued on a side stream lands when the trace's copies record says\n"
      "(COPY_SEEN), or when something synchronizes it.\n",
      "",
      trtllm_data,
      kTrtllmTraceHarness};
  return target;
}

}  // namespace r3::trtllm
