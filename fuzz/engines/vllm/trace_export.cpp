// vLLM's trace export part (fuzz/export/trace_target.hpp): the data lines that say what vLLM
// main's AuxOutput connector sees at each step of the trace, as the lifecycle walk schedules it
// (reference/engines/vllm/lifecycle_walk.hpp; contract 2.3): the events before the schedule (a
// preemption calls request_finished, N4 (a); a prefix-cache reset calls reset), the requests an
// abort ends first, each scheduled request's forward in the scheduler's order (its scheduled
// range, num_tokens before and after the step, whether the step samples for it) with the weight
// versions of the KV it holds before the forward (what the proposed fix reads), and the requests
// the step's result processing finishes. The harness is trace_export_harness.hpp.
//
// What it drives is the connector only, synchronously: a trace under async scheduling (whose
// engine core runs the scheduler a step ahead, a queue the harness does not model) or of the
// releases before the connector (profile vllm-legacy) is refused.
#include <algorithm>

#include "fuzz/engines/vllm/parts.hpp"
#include "fuzz/engines/vllm/trace_export_harness.hpp"
#include "fuzz/export/python_data.hpp"
#include "fuzz/export/trace_target.hpp"
#include "reference/engines/vllm/lifecycle_kv.hpp"
#include "reference/engines/vllm/lifecycle_walk.hpp"

namespace r3::vllm {
namespace {

using py::list;
using py::text;

std::string refused(const Trace& t) {
  if (t.profile && t.profile->variant() != 0)
    return "profile " + std::string(to_string(*t.profile)) +
           ": the export drives vLLM main's AuxOutput connector; the releases before it keep a slot-keyed buffer "
           "(Scheduler._get_routed_experts), which has no harness";
  if (t.config.overlap)
    return "config.overlap: under async scheduling vLLM's engine core runs the scheduler a step ahead of the "
           "worker's output; the vLLM trace harness drives the connector synchronously";
  return "";
}

// The walk as the harness replays it: per step, the lines below, in the walk's order.
class Recorder final : public WalkObserver {
 public:
  Recorder(const Timeline& timeline, const KvCache& kv) : kv_(kv), steps_(timeline.steps.size()) {
    for (size_t s = 0; s < steps_.size(); ++s) steps_[s].version = timeline.steps[s].version;
  }

  void begin_step(int step) override {
    step_ = step;
    forwarded_ = false;
  }

  void after_event(int /*step*/, const TraceEvent& e, int /*version*/) override {
    Step& s = steps_[static_cast<size_t>(step_)];
    std::string event;
    if (e.kind == TraceEvent::Kind::preempt) event = "(\"preempt\", " + text(e.req) + ")";
    if (e.kind == TraceEvent::Kind::weight_update && e.flush) event = "(\"reset\",)";
    if (!event.empty()) s.events += (s.events.empty() ? "" : ", ") + event;
  }

  std::optional<std::string> forward(const ScheduledRun& run, std::span<const RouteRef> /*delivered*/) override {
    Step& s = steps_[static_cast<size_t>(step_)];
    // The weight versions of the KV it holds before this forward, as runs (version, positions).
    std::string kv;
    int last = -2;
    int64_t count = 0;
    auto flush = [&] {
      if (count > 0) kv += (kv.empty() ? "" : ", ") + std::string("(") + text(last) + ", " + text(count) + ")";
    };
    for (int64_t p = 0; p < run.lo; ++p) {
      const int v = kv_.kv_version(run.work.req, p);
      if (v != last) {
        flush();
        last = v;
        count = 0;
      }
      ++count;
    }
    flush();
    s.runs += "        (" + text(run.work.req) + ", " + text(run.lo) + ", " + text(run.hi) + ", " + text(run.kept_end) + ", " +
              text(run.tokens_before) + ", " + text(run.tokens_after) + ", " + py::boolean(run.sampled) + ", [" + kv +
              "], " + py::boolean(run.work.kind == Work::Kind::verify) + "),\n";
    return std::nullopt;
  }

  std::optional<std::string> end_forward(int /*step*/) override {
    forwarded_ = true;
    return std::nullopt;
  }

  void finish(int step, int req) override {
    Step& s = steps_[static_cast<size_t>(step)];
    (forwarded_ ? s.finished : s.aborted).push_back(req);
  }

  std::string text_of_steps() const {
    std::string out = "STEPS = [\n";
    for (const Step& s : steps_) {
      out += "    {\"events\": [" + s.events + "], \"aborted\": " + list(s.aborted) + ", \"version\": " + text(s.version) +
             ",\n     \"runs\": [\n" + s.runs + "     ],\n     \"finished\": " + list(s.finished) + "},\n";
    }
    return out + "]\n";
  }

 private:
  struct Step {
    std::string events;
    std::vector<int> aborted, finished;
    int version = 0;
    std::string runs;
  };
  const KvCache& kv_;
  std::vector<Step> steps_;
  int step_ = 0;
  bool forwarded_ = false;  // this step's forward ran (a finish now is result processing's)
};

Result<std::string> vllm_data(const Trace& t, const Timeline& timeline) {
  if (std::string why = refused(t); !why.empty()) return Error{why};
  KvCache kv(t, timeline);
  Recorder recorder(timeline, kv);
  const WalkResult walked = walk_trace(t, timeline, {}, kv, &recorder);
  if (!walked.schedule.ok()) return Error{walked.schedule.error().message};
  std::vector<int64_t> rank_of, start;
  for (const TraceRequest& r : t.requests) {
    rank_of.push_back(r.dp);
    start.push_back(r.start_len);
  }
  std::string out = "DP, TP, PAGE = " + text(t.dp) + ", " + text(t.tp) + ", " + text(t.config.page) + "\n";
  out += "KV_BLOCKS = " + text(std::max<int64_t>(t.config.kv_slots / std::max<int64_t>(t.config.page, 1), 0) + 1) +
         "  # kv_cache_config.num_blocks of each DP rank: the trace's KV blocks and the null block\n";
  out += "MAX_BATCHED_TOKENS = " + text(t.config.token_budget) + "  # max_num_batched_tokens\n";
  out += "DRAFTS = " + text(t.config.spec ? t.config.spec->width : 0) + "  # num_speculative_tokens\n";
  out += "RANK_OF = " + list(rank_of) + "  # the DP rank that serves each request\n";
  out += "PROMPT_START = " + list(start) + "  # sampling_params.routed_experts_prompt_start\n";
  out += "# The steps: events before the schedule (\"preempt\": request_finished, \"reset\": a prefix-cache reset),\n"
         "# the requests an abort ends before it, the forward's weight version, each scheduled request in the\n"
         "# scheduler's order as (request, first and end position of its scheduled range, the end of what it\n"
         "# keeps (a verify's rejected drafts lie past it), num_tokens before and after the step, whether the\n"
         "# step samples for it, the weight versions of the KV it holds before the forward as (version,\n"
         "# positions) runs, whether it verifies drafts), then the requests the step's result processing\n"
         "# finishes.\n";
  out += recorder.text_of_steps();
  return out;
}

}  // namespace

const EngineTraceTarget& trace_export_part() {
  static const EngineTraceTarget target{
      "vllm",
      "vllm.distributed.aux_output_connector.worker:AuxOutputWorkerConnector",
      "vllm/distributed/aux_output_connector/worker.py in vllm-project/vllm (with connector.py beside it)",
      "What it tests: vLLM main's AuxOutput connector, one scheduler connector and one worker connector per\n"
      "DP rank (the worker built through its own __init__, its capturer, TP group and block sizes faked),\n"
      "through the trace: per step, build_connector_meta with the step's scheduled requests, begin_step,\n"
      "then for a step that forwards prepare_output and process_output with the routes of its rows in\n"
      "Model Runner V2's batch order (sort_batch_req_ids; a verify's rejected drafts as num_rejected), and\n"
      "take_output for each request it sampled for; request_finished at a preemption, an abort and a\n"
      "finish, reset at a prefix-cache reset. Each\n"
      "request's returned rows are placed at the token_start take_output's output names.\n",
      "",
      vllm_data,
      kVllmTraceHarness};
  return target;
}

}  // namespace r3::vllm
