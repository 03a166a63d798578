// TensorRT-LLM's rules for a trace (lifecycle_rules.hpp): its knobs, what the model leaves out,
// and what start-up refuses (route_capture.py: RouteCapture.create, assert_capturable @ 06a976ce
// and aa94b01; contract 2.5, "Start-up").
#include <algorithm>
#include <string>
#include <vector>

#include "reference/engines/trtllm/lifecycle_copies.hpp"
#include "reference/engines/trtllm/lifecycle_rules.hpp"
#include "reference/engines/trtllm/model.hpp"

namespace r3::trtllm {
namespace {

constexpr std::array<std::string_view, 2> kKnobs = {kKnobPp, kKnobMoeBackend};

template <size_t N>
std::string joined(const std::array<std::string_view, N>& names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

// A positive JSON integer of at most four digits, or nullopt.
std::optional<int> small_positive(std::string_view text) {
  if (text.empty() || text.size() > 4) return std::nullopt;
  int v = 0;
  for (char ch : text) {
    if (ch < '0' || ch > '9') return std::nullopt;
    v = v * 10 + (ch - '0');
  }
  if (v < 1) return std::nullopt;
  return v;
}

Status check_knobs(const Trace& t) {
  for (const auto& [key, value] : t.knobs) {
    if (std::find(kKnobs.begin(), kKnobs.end(), key) == kKnobs.end())
      return Error{"knobs: \"" + key + "\" is not a trtllm knob (known: " + joined(kKnobs) + ")"};
    if (key == kKnobPp && !small_positive(value))
      return Error{"knobs.topology.pp: " + value + " is not a pipeline-parallel size (an integer from 1 to 9999)"};
    if (key == kKnobMoeBackend) {
      const std::string_view v = knob_word(value);
      if (value.size() < 2 || value.front() != '"' || std::find(kMoeBackends.begin(), kMoeBackends.end(), v) == kMoeBackends.end())
        return Error{"knobs.config.moe_backend: " + value + " is not one of " + joined(kMoeBackends) + " (a JSON string)"};
    }
  }
  return ok_status();
}

}  // namespace

int pipeline_parallel(const Trace& t) { return small_positive(knob(t, kKnobPp, "1")).value_or(1); }
std::string_view moe_backend(const Trace& t) { return knob_word(knob(t, kKnobMoeBackend, "\"cutlass\"")); }

// What the model leaves out, as errors naming the key: the contract read route_capture.py only,
// which has no handling for KV offload or P/D (contract 2.5, per-event table), and not which rows
// an attention-DP rank's MoE hands the capture hook.
Status check_trace(const Trace& t, const Timeline& /*timeline*/) {
  R3_TRY_STATUS(check_knobs(t));
  if (t.dp != 1) {
    return Error{"topology.dp: " + std::to_string(t.dp) +
                 " DP ranks; the trtllm model covers one (attention DP's capture rows were not read: "
                 "docs/lifecycle-contract.md 2.5)"};
  }
  for (size_t s = 0; s < t.steps.size(); ++s) {
    const auto& events = t.steps[s].events;
    for (size_t i = 0; i < events.size(); ++i) {
      const TraceEvent::Kind k = events[i].kind;
      if (k == TraceEvent::Kind::offload || k == TraceEvent::Kind::restore || k == TraceEvent::Kind::pd_handoff) {
        return Error{"steps[" + std::to_string(s) + "].events[" + std::to_string(i) + "]: " + std::string(to_string(k)) +
                     " is not modelled for trtllm (route_capture.py has no KV offload or P/D handling: "
                     "docs/lifecycle-contract.md 2.5)"};
      }
    }
  }
  return ok_status();
}

Status check_trace_profile(const Trace& t, const Timeline& timeline, Profile profile) {
  if (profile.is_any()) return ok_status();
  if (profile.engine() != engine())
    return Error{"profile: " + std::string(to_string(profile)) + " is not a trtllm profile"};
  const std::string in = " under profile " + std::string(to_string(profile));
  // RouteCapture.create raises for pipeline parallelism and for speculative decoding / MTP [2.5].
  if (pipeline_parallel(t) > 1) {
    return Error{"knobs.topology.pp: TensorRT-LLM refuses route capture with pipeline parallelism (pp " +
                 std::to_string(pipeline_parallel(t)) +
                 ") at start-up (route_capture.py: RouteCapture.create @ 06a976ce, aa94b01)" + in};
  }
  if (t.config.spec) {
    return Error{"config.spec: TensorRT-LLM refuses route capture with speculative decoding or MTP at start-up "
                 "(route_capture.py: RouteCapture.create @ 06a976ce, aa94b01)" + in};
  }
  if (moe_backend(t) == "trtllmgen") {
    return Error{"knobs.config.moe_backend: TensorRT-LLM refuses route capture on a fused-routing MoE backend "
                 "(\"trtllmgen\": top-k inside the kernel) at start-up (route_capture.py: assert_capturable @ "
                 "06a976ce, aa94b01)" + in};
  }
  // The request carries only SamplingParams.return_routed_experts: no start position (the
  // routes always start at 0: RouteCapture.assemble @ 06a976ce, aa94b01).
  for (size_t r = 0; r < t.requests.size(); ++r) {
    if (t.requests[r].start_len != 0) {
      return Error{"requests[" + std::to_string(r) + "].start_len: " + std::to_string(t.requests[r].start_len) +
                   ", but TensorRT-LLM's routes always start at position 0 (RouteCapture.assemble @ 06a976ce, "
                   "aa94b01)" + in};
    }
  }
  R3_TRY_STATUS(check_copies_within(t, copy_window(t, timeline)));
  // A request enters the generation phase once a context forward samples its next token; from
  // then on it forwards one decode row a step, and only an eviction sends it back to a context
  // forward (its re-prefill): _prepare places a context row at its chunk window and a generation
  // row by the decode counter (contract R2), so the two are not interchangeable.
  std::vector<bool> generating(t.requests.size(), false);
  std::vector<int64_t> known(t.requests.size(), 0);
  for (size_t r = 0; r < t.requests.size(); ++r) known[r] = static_cast<int64_t>(t.requests[r].prompt.size());
  for (size_t s = 0; s < t.steps.size(); ++s) {
    for (const TraceEvent& e : t.steps[s].events)
      if (e.kind == TraceEvent::Kind::preempt && e.req >= 0 && e.req < static_cast<int>(generating.size()))
        generating[static_cast<size_t>(e.req)] = false;
    const auto& run = t.steps[s].run;
    for (size_t i = 0; i < run.size(); ++i) {
      const Work& w = run[i];
      if (w.req < 0 || w.req >= static_cast<int>(generating.size())) continue;
      const size_t r = static_cast<size_t>(w.req);
      if (w.kind == Work::Kind::extend && generating[r]) {
        return Error{"steps[" + std::to_string(s) + "].run[" + std::to_string(i) + "]: request " + std::to_string(w.req) +
                     " extends in its generation phase; TensorRT-LLM forwards a generating request one decode row a "
                     "step and sends it back to a context forward only after evicting its KV (a preempt event; "
                     "RouteCapture._prepare @ 06a976ce, aa94b01)" + in};
      }
      if (w.kind != Work::Kind::extend && !generating[r]) {
        return Error{"steps[" + std::to_string(s) + "].run[" + std::to_string(i) + "]: request " + std::to_string(w.req) +
                     " decodes before a context forward sampled its last token; TensorRT-LLM schedules a new or "
                     "evicted request as a context request first, whatever its KV reuse covers "
                     "(RouteCapture._prepare @ 06a976ce, aa94b01)" + in};
      }
      if (w.kind != Work::Kind::extend) {
        ++known[r];
      } else if (w.hi >= known[r]) {
        generating[r] = true;
        ++known[r];
      }
    }
  }
  // A forward's rows are its context requests' chunks, then its generation requests
  // (RouteCapture._prepare walks scheduled_batch.context_requests, then generation_requests).
  for (size_t s = 0; s < t.steps.size(); ++s) {
    bool generation = false;
    const auto& run = t.steps[s].run;
    for (size_t i = 0; i < run.size(); ++i) {
      if (run[i].kind != Work::Kind::extend) {
        generation = true;
      } else if (generation) {
        return Error{"steps[" + std::to_string(s) + "].run[" + std::to_string(i) + "]: request " +
                     std::to_string(run[i].req) +
                     " extends after a decode; TensorRT-LLM forwards context requests before generation requests "
                     "(RouteCapture._prepare @ 06a976ce, aa94b01)" + in};
      }
    }
  }
  return ok_status();
}

}  // namespace r3::trtllm
