// SGLang's trace export part (fuzz/export/trace_target.hpp): the data lines that say what each DP
// rank's RoutedExpertsCapturer sees at each step of the trace (contract 4.1 and 5): the rows of
// the forward in batch order with the KV slot each is written to, and when each step's deferred
// copy to host runs under the overlap scheduler; the harness (trace_export_harness.hpp) assigns
// the slots, keeps req_to_token, and reads each finished request back through get_topk.
//
// The capturer is built with the device cache each of r3fuzz's SGLang models says __init__
// allocates for the trace's server (SIZINGS, the most over its steps' per-step cases), so a step
// too large for it fails the test as it fails the engine. Under DP attention each step's forward
// is laid out as the per-step model lays it out (layout.cpp, derive_step; the same calls and
// window inputs `r3fuzz export CASE.json` writes): every rank's capture is handed the DP-gathered
// rows, and on_forward_end is given global_num_tokens_cpu, can_run_graph and the decode runner's bs.
//
// What it drives is the capturer only: a finding that lives in the scheduler, the memory pool or
// the P/D and speculative workers (KV moved between slots, a worker that never hands the rows
// over) is not the capturer's, and a trace that needs one is refused, naming the step or knob.
#include <algorithm>

#include <memory>

#include "fuzz/engines/sglang/parts.hpp"
#include "fuzz/engines/sglang/trace_export_harness.hpp"
#include "fuzz/export/python_data.hpp"
#include "fuzz/export/step_inputs.hpp"
#include "fuzz/export/trace_target.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/lifecycle_copies.hpp"
#include "reference/engines/sglang/lifecycle_knobs.hpp"
#include "reference/engines/sglang/lifecycle_step_case.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3::sglang {
namespace {

using py::list;
using py::text;

// What the capturer alone cannot show; "" when the harness can drive the trace.
std::string refused_knobs(const Trace& t, const LifecycleKnobs& k) {
  if (k.a2a != A2a::none) return "topology.a2a: the SGLang trace harness drives the capturer without an all-to-all backend";
  if (t.config.spec && k.spec_algorithm == SpecAlgorithm::ngram && t.config.overlap)
    return "config.spec_algorithm: ngram under the overlap scheduler: whether NGRAM's forwards hand their capture on "
           "is the worker's (speculative/ngram_worker.py, NGRAMWorker.forward_batch_generation), not the capturer's";
  if (k.hicache) return "config.hicache: HiCache moves KV in the memory pool, not in the capturer";
  if (k.pd_router != PdRouter::none) return "config.pd_router: the P/D hand-off is the scheduler's, not the capturer's";
  return "";
}

// A tree verify that keeps some but not all of its drafts: the worker moves the accepted path's KV
// to the request's next slots (lifecycle_batch.hpp, N7), which the capturer never sees; "" if none.
std::string refused_tree_move(const Trace& t) {
  if (!t.config.spec || !t.config.spec->tree) return "";
  const int width = t.config.spec->width;
  for (size_t s = 0; s < t.steps.size(); ++s)
    for (size_t i = 0; i < t.steps[s].run.size(); ++i) {
      const Work& w = t.steps[s].run[i];
      if (w.kind != Work::Kind::verify || w.accepted == 0 || w.accepted == width) continue;
      return "steps[" + std::to_string(s) + "].run[" + std::to_string(i) + "]: a tree verify that accepts " +
             std::to_string(w.accepted) + " of " + std::to_string(width) +
             " drafts: the worker moves the accepted path's KV (eagle_worker_common.py, _finalize_accept_tree_path; "
             "spec_utils.py, move_accept_tokens_to_target_kvcache), not the capturer";
    }
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

// The rows of the device cache each of r3fuzz's SGLang models allocates for the trace's server
// (RoutedExpertsCapturer.__init__; policy.cpp, allocate): the most over the steps' per-step cases.
Result<std::string> sizings_text(const std::vector<std::optional<Case>>& cases) {
  std::string out = "{";
  for (std::string_view name : {"sglang", "sglang-miles", "sglang-fixed"}) {
    const std::unique_ptr<CapturePolicy> policy = make_policy(name);
    int64_t rows = 0;
    for (const std::optional<Case>& c : cases)
      if (c) rows = std::max(rows, policy->allocate(*c).capture_rows);
    if (rows == 0)
      return Error{"steps: no step is a forward r3fuzz's per-step model lays out, so nothing says how many rows the "
                   "capturer's device cache holds"};
    out += (out.size() > 1 ? ", \"" : "\"") + std::string(name) + "\": " + text(rows);
  }
  return out + "}";
}

// Step `s`'s forward under DP attention as the per-step model lays it out (layout.cpp,
// derive_step; step_inputs.cpp): the tensors capture() is handed, each row (DP rank, row of its
// batch) or None (a DP or CUDA-graph padding row); the calls, per DP rank the tensor
// its attn-TP rank 0 is handed and where the call's rows are (what the fix reads); and what
// on_forward_end and the window read.
// `listed` counts the tensor rows every step's text lists so far: more than kMaxExportEntries in
// all is refused, as the rows themselves are (trace_pytest_writer.cpp).
Result<std::string> dp_forward_text(const Trace& t, const StepView& view, const std::optional<Case>& c, size_t s,
                                    int64_t& listed) {
  const std::string where = "steps[" + std::to_string(s) + "]";
  if (!c)
    return Error{where + ": under DP attention the harness lays a forward out as r3fuzz's per-step model does, and "
                         "this step's rows are no such forward (decode and verify rows mixed, or verify rows in an extend)"};
  R3_TRY(const Step step, r3::derive_step(*c));
  R3_TRY(const StepInputs in, step_inputs(*c));
  const ForwardLayout& f = *forward_of(step);
  const size_t D = view.rows.size();
  for (size_t d = 0; d < D; ++d)
    if (f.tokens[d] != static_cast<int64_t>(view.rows[d].size()))
      return Error{where + ": dp " + std::to_string(d) + ": the per-step forward runs " + text(f.tokens[d]) +
                   " tokens, the trace's batch " + std::to_string(view.rows[d].size()) + " rows"};
  for (const std::vector<RowRun>& runs : in.tensors)
    for (const RowRun& run : runs) listed += run.length;
  if (listed > kMaxExportEntries)
    return Error{where + ": the DP-gathered tensors of the steps so far hold " + std::to_string(listed) +
                 " rows; an exported test lists at most " + std::to_string(kMaxExportEntries) + " (kMaxExportEntries)"};
  std::string tensors;
  for (const std::vector<RowRun>& runs : in.tensors) {
    std::string rows;
    for (const RowRun& run : runs)
      for (int64_t i = 0; i < run.length; ++i) {
        const RowId id = run.at(i);
        if (id.kind != RowKind::token)
          return Error{where + ": the forward hands capture() a " + std::string(py::kind_name(id.kind)) +
                       " row, which the SGLang trace harness has no route for"};
        const bool real = id.index < static_cast<int64_t>(view.rows[static_cast<size_t>(id.dp)].size());
        rows += (rows.empty() ? "" : ", ") + (real ? "(" + text(id.dp) + ", " + text(id.index) + ")" : std::string("None"));
      }
    tensors += (tensors.empty() ? "" : ", ") + std::string("[") + rows + "]";
  }
  std::string calls;
  for (size_t k = 0; k < in.calls.size(); ++k) {
    std::vector<int64_t> received, start, count, offset;
    for (size_t d = 0; d < D; ++d) {
      received.push_back(in.calls[k].received[d * static_cast<size_t>(t.tp)]);
      start.push_back(f.segment_start[k][d]);
      count.push_back(f.call_rows[k][d].size());
      offset.push_back(f.call_rows[k][d].lo);
    }
    calls += (calls.empty() ? "" : ", ") + std::string("{\"received\": ") + list(received) +
             ", \"dp_local_start\": " + list(start) + ", \"dp_local_num_tokens\": " + list(count) +
             ", \"batch_offset\": " + list(offset) + "}";
  }
  std::string bs;
  for (size_t d = 0; d < D; ++d) bs += (d ? ", " : "") + (f.runner_bs[d] > 0 ? text(f.runner_bs[d]) : std::string("None"));
  return "{\"tensors\": [" + tensors + "],\n            \"calls\": [" + calls +
         "],\n            \"forward_mode\": \"" + std::string(to_string(f.kind)) + "\", \"global_num_tokens_cpu\": " +
         list(f.global_num_tokens_cpu) + ", \"out_cache_loc\": " + list(f.out_cache_loc) +
         ", \"can_run_graph\": " + py::boolean(f.can_run_graph()) + ", \"runner_bs\": [" + bs +
         "], \"captured_req_width\": " + text(f.spec_width) + "}";
}

Result<std::string> sglang_data(const Trace& t, const Timeline& timeline) {
  const LifecycleKnobs knobs = knobs_of(t);
  if (std::string why = refused_knobs(t, knobs); !why.empty()) return Error{why};
  if (std::string why = refused_tree_move(t); !why.empty()) return Error{why};
  const std::vector<std::optional<Case>> cases = step_cases_in(t, timeline, trace_profile(t));
  R3_TRY(const std::string sizings, sizings_text(cases));
  const std::vector<int> done = copy_completions(t, knobs);
  std::vector<int64_t> rank_rows(static_cast<size_t>(t.dp), 0);
  int64_t listed = 0;  // DP-gathered tensor rows
  std::string steps = "STEPS = [\n";
  for (size_t s = 0; s < t.steps.size() && s < timeline.steps.size(); ++s) {
    const StepView& view = timeline.steps[s];
    std::string events;
    for (size_t i = 0; i < t.steps[s].events.size(); ++i) {
      R3_TRY(const std::string e, event_text(t.steps[s].events[i], s, i));
      if (!e.empty()) events += (events.empty() ? "" : ", ") + e;
    }
    // Each rank's batch with the CUDA-graph (decode or verify replay) or DP-attention padding.
    const std::vector<int64_t> padded = padded_rows(t, timeline, static_cast<int>(s));
    std::string ranks;
    bool forwards = false;
    for (size_t d = 0; d < view.rows.size(); ++d) {
      std::string rows;
      for (const BatchRow& row : view.rows[d]) {
        const auto& req = t.requests[static_cast<size_t>(row.req)];
        // A rejected draft's token, or one a verify accepted past the request's last output (its
        // length limit cut it), is none the request returns: the trace cannot name its route.
        const bool unnamed = (!row.kept && !row.lagging) || row.pos >= static_cast<int64_t>(req.prompt.size() + req.outputs.size());
        rows += (rows.empty() ? "" : ", ") + std::string("(") + text(row.req) + ", " + text(row.pos) + ", " +
                py::boolean(row.kept && !row.lagging && !unnamed) + ", " + py::boolean(unnamed) + ")";
      }
      const auto n = static_cast<int64_t>(view.rows[d].size());
      forwards = forwards || n > 0;
      rank_rows[d] += n;
      ranks += (ranks.empty() ? "" : ", ") + std::string("{\"rows\": [") + rows +
               "], \"padding\": " + text(padded[d] - n) + "}";
    }
    std::string dp = "None";
    if (knobs.dp_attention && forwards) {
      R3_TRY(dp, dp_forward_text(t, view, cases[s], s, listed));
    }
    std::vector<int> before, finished;
    for (int req : view.aborted_before)
      if (timeline.requests[static_cast<size_t>(req)].returns_output) before.push_back(req);
    for (int req : view.finished)
      if (timeline.requests[static_cast<size_t>(req)].returns_output) finished.push_back(req);
    steps += "    {\"events\": [" + events + "], \"collect_before\": " + list(before) + ", \"version\": " +
             text(view.version) + ",\n     \"ranks\": [" + ranks + "],\n     \"dp_attention\": " + dp +
             ",\n     \"collect\": " + list(finished) + "},\n";
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

  std::string out = "DP, TP, OVERLAP, DP_ATTENTION = " + text(t.dp) + ", " + text(t.tp) + ", " +
                    py::boolean(t.config.overlap) + ", " + py::boolean(knobs.dp_attention) + "\n";
  out += "CHUNKED_PREFILL_SIZE, MAX_RUNNING_REQUESTS = " + text(t.config.chunk) + ", " + text(t.config.token_budget) +
         "  # --chunked-prefill-size; --max-running-requests, the trace's token budget\n";
  out += "# The device cache's rows as each of r3fuzz's SGLang models says RoutedExpertsCapturer.__init__ allocates\n"
         "# them for this server (R3FUZZ_SIZING picks one; default: the engine's current one).\n";
  out += "SIZINGS = " + sizings + "\n";
  out += "SIZING = os.environ.get(\"R3FUZZ_SIZING\") or \"sglang\"\n";
  out += "VERSION = os.environ.get(\"R3FUZZ_SGLANG_VERSION\") or \"upstream\"\n";
  out += "HOST_SLOTS = " + text(host_slots) + "  # KV slots: 0 is the dummy slot, then one per row a rank forwards\n";
  out += "LONGEST = " + text(longest) + "  # req_to_token's width\n";
  out += "RANK_OF = " + list(rank_of) + "  # the DP rank that serves each request\n";
  out += "FINAL_LEN = " + list(final_len) + "  # the seqlen get_topk is given: prompt and kept outputs\n";
  out += "START_LEN = " + list(start_len) + "  # routed_experts_start_len\n";
  out += "# The steps: events before the forward (a prefix hit, a retract, flush_cache), the requests an abort\n"
         "# ends first (read back then), the forward's rows per DP rank in batch order as (request, position,\n"
         "# kept: its KV may be reused, draft: a token the request does not return, a rejected draft's or one\n"
         "# past its last output), its CUDA-graph padding rows; under DP attention, the forward as the per-step\n"
         "# model lays it out (the tensors capture() is handed, each row (DP rank, row of its batch) or None for\n"
         "# padding; per call and DP rank, the tensor and where its rows are; what on_forward_end reads); then\n"
         "# the requests its result processing finishes and reads back.\n";
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
      "[SIZINGS rows, L, K + 1 shared expert] and a host cache [KV slots, L, K]) through the trace: per forward,\n"
      "capture once per MoE layer with the routes of the step's rows at its weight version (under DP\n"
      "attention the DP-gathered rows, laid out as r3fuzz's per-step model lays them out), then\n"
      "on_forward_end with the forward batch's out_cache_loc (the KV slot of every row). Under the overlap\n"
      "scheduler it asks for the deferred copy (no_copy_to_cpu=True), copies the TopkCaptureOutput's\n"
      "tensors to host (map_device_tensors) and calls finalize when the trace's copies record says the\n"
      "copy ran: after the forward of step done_before_step - 1. A finished request is read back with\n"
      "get_topk through a fake\n"
      "req_to_token pool whose slots the harness allocated (a prefix hit maps to the slots that computed it).\n",
      "  R3FUZZ_SIZING=NAME          the device cache's rows (SIZINGS: per r3fuzz's models sglang,\n"
      "                              sglang-miles, sglang-fixed; default: sglang)\n"
      "  R3FUZZ_SGLANG_VERSION=V     what model_runner.py passes the window as cuda_graph_batch under DP\n"
      "                              attention: upstream (default), the decode runner's bs; miles,\n"
      "                              bs * captured_req_width, as sglang-miles does\n",
      sglang_data,
      kSglangTraceHarness};
  return target;
}

}  // namespace r3::sglang
