// vLLM's rules for a trace, beyond build_timeline()'s (lifecycle_rules.hpp).
#include <algorithm>
#include <array>

#include "reference/engines/vllm/lifecycle_copies.hpp"
#include "reference/engines/vllm/lifecycle_kv.hpp"
#include "reference/engines/vllm/lifecycle_rules.hpp"
#include "reference/engines/vllm/lifecycle_walk.hpp"
#include "reference/engines/vllm/model.hpp"

namespace r3::vllm {
namespace {

// config.kv_connector's values: none, vLLM's KV offloading connector, and the P/D connectors
// the routed-experts docs name (docs.vllm.ai training/routed_experts; contract 2.3).
constexpr std::array<std::string_view, 7> kConnectors = {"none", "offload", "nixl", "nixl_pull",
                                                         "nixl_push", "moriio", "mooncake"};
constexpr std::array<std::string_view, 2> kKnobs = {kKnobKvConnector, kKnobSpecAdaptive};

std::string joined(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

Status check_knobs(const Trace& t) {
  for (const auto& [key, value] : t.knobs) {
    if (std::find(kKnobs.begin(), kKnobs.end(), key) == kKnobs.end()) {
      return Error{"knobs: \"" + key + "\" is not a vllm knob (known: " + joined(kKnobs) + ")"};
    }
    if (key == kKnobKvConnector) {
      const std::string_view v = knob_word(value);
      if (value.size() < 2 || value.front() != '"' ||
          std::find(kConnectors.begin(), kConnectors.end(), v) == kConnectors.end()) {
        return Error{"knobs.config.kv_connector: " + value + " is not one of " + joined(kConnectors) +
                     " (a JSON string)"};
      }
    }
    if (key == kKnobSpecAdaptive && value != "true" && value != "false") {
      return Error{"knobs.config.spec_adaptive: " + value + " is not true or false"};
    }
  }
  return ok_status();
}

bool moves_offload(std::string_view connector) { return connector == "offload"; }
bool moves_pd(std::string_view connector) { return connector != "none" && connector != "offload"; }

}  // namespace

std::string_view kv_connector(const Trace& t) { return knob_word(knob(t, kKnobKvConnector, "\"none\"")); }

Status check_trace(const Trace& t, const Timeline& /*timeline*/) {
  R3_TRY_STATUS(check_knobs(t));
  if (knob_is_true(t, kKnobSpecAdaptive) && !t.config.spec) {
    return Error{"knobs.config.spec_adaptive: true needs speculative decoding (config.spec)"};
  }
  const int64_t page = t.config.page;
  if (page < 1) return Error{"config.page: " + std::to_string(page) + " is not a block size"};
  if (kv_blocks(t) < 1) {
    return Error{"config.kv_slots: " + std::to_string(t.config.kv_slots) + " slots hold no whole block of config.page " +
                 std::to_string(page)};
  }
  // r3fuzz models vLLM's speculative decoding as a chain: a verify keeps the input and the
  // accepted prefix of its drafts, and the rejected suffix is cut (contract 2.3, "spec
  // rejection": process_output @ f99d53b). The tree shape (SGLang's EAGLE topk > 1 KV move,
  // contract 2.1) has no vLLM counterpart modelled here.
  if (t.config.spec && t.config.spec->tree) {
    return Error{"config.spec.tree: vLLM's lifecycle is modelled for chain drafts only (a verify keeps its "
                 "accepted prefix: process_output, vllm/distributed/aux_output_connector/worker.py @ f99d53b)"};
  }
  const std::string_view connector = kv_connector(t);
  for (size_t s = 0; s < t.steps.size(); ++s) {
    const auto& events = t.steps[s].events;
    for (size_t i = 0; i < events.size(); ++i) {
      const TraceEvent& e = events[i];
      const std::string where = "steps[" + std::to_string(s) + "].events[" + std::to_string(i) + "]: ";
      // vLLM's prefix cache holds full blocks only (BlockPool.cache_full_blocks @ 002f349), so
      // a hit is whole blocks (KVCacheManager.get_computed_blocks @ 003df29).
      if (e.kind == TraceEvent::Kind::hit && e.len % page != 0) {
        return Error{where + "hit of request " + std::to_string(e.req) + " covers " + std::to_string(e.len) +
                     " positions, not a multiple of config.page " + std::to_string(page) +
                     " (vLLM hits whole blocks: KVCacheManager.get_computed_blocks, "
                     "vllm/v1/core/kv_cache_manager.py @ 003df29)"};
      }
      const bool offloading = e.kind == TraceEvent::Kind::offload || e.kind == TraceEvent::Kind::restore;
      if (offloading && !moves_offload(connector)) {
        return Error{where + std::string(to_string(e.kind)) + " of request " + std::to_string(e.req) +
                     " needs knob config.kv_connector \"offload\" (vLLM moves KV to host and back only through "
                     "a KV connector), it is \"" + std::string(connector) + "\""};
      }
      if (e.kind == TraceEvent::Kind::pd_handoff && !moves_pd(connector)) {
        return Error{where + "pd_handoff of request " + std::to_string(e.req) +
                     " needs a P/D connector in knob config.kv_connector (nixl, nixl_pull, nixl_push, moriio, "
                     "mooncake), it is \"" + std::string(connector) + "\""};
      }
    }
  }
  return ok_status();
}

Status check_trace_profile(const Trace& t, const Timeline& timeline, Profile profile) {
  if (profile.is_any() || profile.engine() == engine())
    R3_TRY_STATUS(check_copies_within(t, copy_window(t, timeline, profile)));
  if (profile.is_any()) return ok_status();
  if (profile.engine() != engine()) {
    return Error{"profile: " + std::string(to_string(profile)) + " is not a vllm profile"};
  }
  const bool main = profile.variant() == 0;
  const std::string in = " under profile " + std::string(to_string(profile));
  // SamplingParams._verify_args (vllm/sampling_params.py @ 00388f65) raises for max_tokens below
  // 1: vLLM serves no prefill-only request.
  for (size_t r = 0; r < t.requests.size(); ++r) {
    if (t.requests[r].max_new && *t.requests[r].max_new == 0) {
      return Error{"requests[" + std::to_string(r) + "].max_new: 0, but vLLM refuses max_tokens below 1 "
                   "(SamplingParams._verify_args, vllm/sampling_params.py @ 00388f65)" + in};
    }
  }
  if (main) {
    // docs.vllm.ai training/routed_experts (contract 2.3, "Start-up"): the P/D connectors are
    // refused; N5 reading (a), the contract's default: so is every other connector.
    if (kv_connector(t) != "none") {
      return Error{"knobs.config.kv_connector: vLLM main refuses KV connector \"" + std::string(kv_connector(t)) +
                   "\" with routed-experts capture at start-up (the docs name Nixl, NixlPull, NixlPush, MoRIIO "
                   "and Mooncake; contract N5, reading (a): every connector)" + in};
    }
    if (knob_is_true(t, kKnobSpecAdaptive)) {
      return Error{"knobs.config.spec_adaptive: vLLM main refuses adaptive speculative verification with "
                   "routed-experts capture at start-up (docs.vllm.ai training/routed_experts; contract 2.3)" + in};
    }
    if (!t.config.prefix_cache) {
      return Error{"config.prefix_cache: vLLM main's routed-experts capture requires prefix caching "
                   "(docs.vllm.ai training/routed_experts; contract 2.3)" + in};
    }
  } else {
    // routed_experts_prompt_start came with #51906, after v0.26.0 (spec 3): the releases with
    // the slot-keyed capture (#28284) have no such request field.
    for (size_t r = 0; r < t.requests.size(); ++r) {
      if (t.requests[r].start_len != 0) {
        return Error{"requests[" + std::to_string(r) + "].start_len: " + std::to_string(t.requests[r].start_len) +
                     ", but vLLM releases before the AuxOutput connector have no routed_experts_prompt_start "
                     "(added by #51906)" + in};
      }
    }
  }
  KvCache kv(t, timeline);
  const WalkResult walked = walk_trace(t, timeline, {}, kv, nullptr);
  if (!walked.schedule.ok()) return Error{walked.schedule.error().message + in};
  return ok_status();
}

}  // namespace r3::vllm
