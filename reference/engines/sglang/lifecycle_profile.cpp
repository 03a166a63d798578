// check_profile(): the traces SGLang never runs. Sources: upstream main (U) 30cb848 and
// sglang-miles (M) c447264, paths under python/sglang/srt/; every start-up rule below was found
// at both commits, so the two profiles refuse the same traces (their lifecycles differ in
// behaviour only: lifecycle.cpp). A start_len outside [0, P], which SGLang answers with an
// abort at admission (scheduler.py, handle_generate_request), never gets here: build_timeline()
// rejects it.
#include "reference/engines/sglang/lifecycle_check.hpp"

#include <algorithm>
#include <string>
#include <vector>

#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/lifecycle_behaviour.hpp"
#include "reference/engines/sglang/lifecycle_copies.hpp"
#include "reference/engines/sglang/lifecycle_knobs.hpp"
#include "reference/engines/sglang/lifecycle_run.hpp"

namespace r3::sglang {
namespace {

std::string str(int64_t v) { return std::to_string(v); }
std::string step_at(size_t n) { return "steps[" + str(static_cast<int64_t>(n)) + "]"; }
std::string event_at(size_t n, size_t e, TraceEvent::Kind kind) {
  return step_at(n) + ".events[" + str(static_cast<int64_t>(e)) + "]." + std::string(to_string(kind));
}

bool has_handoff(const Trace& t) {
  for (const TraceStep& s : t.steps)
    for (const TraceEvent& e : s.events)
      if (e.kind == TraceEvent::Kind::pd_handoff) return true;
  return false;
}

// Start-up: server arguments SGLang refuses together.
Status check_startup(const Trace& t, const LifecycleKnobs& k) {
  if (k.hicache && !t.config.prefix_cache) {
    return Error{
        "knobs.config.hicache: HiCache with the radix cache off is refused at start-up (server_args.py, "
        "_handle_cache_compatibility: enable-hierarchical-cache and disable-radix-cache are mutually exclusive)"};
  }
  if (t.config.spec && k.spec_algorithm == SpecAlgorithm::ngram && k.dp_attention) {
    return Error{
        "knobs.config.spec_algorithm: NGRAM with DP attention is refused at start-up (arg_groups/"
        "speculative_hook.py, _handle_ngram)"};
  }
  if (t.config.spec && k.spec_algorithm == SpecAlgorithm::eagle && k.mixed_chunk) {
    return Error{
        "knobs.config.mixed_chunk: mixed chunked prefill with speculative decoding fails an assertion at "
        "start-up (server_args.py, check_server_args; NGRAM turns it off instead: _handle_ngram)"};
  }
  const bool aligned = k.dp_attention || (k.a2a != A2a::none && t.tp > 1);
  for (size_t i = 0; i < t.config.cuda_graph_decode.size(); ++i) {
    if (!aligned || t.config.cuda_graph_decode[i] % t.tp == 0) continue;
    return Error{"config.cuda_graph_decode[" + str(static_cast<int64_t>(i)) +
                 "]: " + str(t.config.cuda_graph_decode[i]) + " is not a multiple of attn_tp = " + str(t.tp) +
                 "; SGLang captures decode batch sizes aligned to it "
                 "here (utils/common.py, get_cuda_graph_batch_size_alignment)"};
  }
  return ok_status();
}

// The batches SGLang's scheduler forms, per DP rank.
Status check_batches(const Trace& t, const Timeline& timeline, const LifecycleKnobs& k) {
  const bool mixing = k.mixed_chunk && t.config.chunk != -1 && !t.config.spec;
  for (size_t n = 0; n < t.steps.size(); ++n) {
    for (size_t d = 0; d < timeline.steps[n].rows.size(); ++d) {
      bool extend = false, other = false;
      for (const Work& w : t.steps[n].run) {
        if (t.requests[static_cast<size_t>(w.req)].dp != static_cast<int>(d)) continue;
        (w.kind == Work::Kind::extend ? extend : other) = true;
      }
      const auto rows = static_cast<int64_t>(timeline.steps[n].rows[d].size());
      if (extend && other && !mixing) {
        return Error{step_at(n) + ": DP rank " + str(static_cast<int64_t>(d)) +
                     " mixes extend and decode rows in one batch, which SGLang does only with --enable-mixed-chunk "
                     "(knobs.config.mixed_chunk), chunked prefill on and no speculative decoding (scheduler.py, "
                     "is_mixed_chunk and the mixed-style chunked prefill branch)"};
      }
      if (extend && t.config.chunk != -1 && rows > t.config.chunk) {
        return Error{step_at(n) + ": DP rank " + str(static_cast<int64_t>(d)) + " forwards " + str(rows) +
                     " rows in an extend batch, over config.chunk = " + str(t.config.chunk) +
                     " (schedule_policy.py, PrefillAdder: rem_chunk_tokens, less the mixed decode rows)"};
      }
    }
    if (!t.config.spec) continue;
    for (size_t i = 0; i < t.steps[n].run.size(); ++i) {
      const Work& w = t.steps[n].run[i];
      if (w.kind != Work::Kind::decode) continue;
      const std::vector<BatchRow>& rows =
          timeline.steps[n].rows[static_cast<size_t>(t.requests[static_cast<size_t>(w.req)].dp)];
      if (std::any_of(rows.begin(), rows.end(), [&](const BatchRow& r) { return r.req == w.req && r.lagging; }))
        continue;
      return Error{step_at(n) + ".run[" + str(static_cast<int64_t>(i)) + "]: request " + str(w.req) +
                   " decodes without drafts, but with speculative decoding every decode batch is a verify "
                   "(speculative/eagle_worker_v2.py and ngram_worker.py, forward_batch_generation)"};
    }
  }
  return ok_status();
}

// P/D and offload: where requests come from and where their KV goes between forwards.
Status check_requests(const Trace& t) {
  const bool pd = has_handoff(t);
  std::vector<bool> started(t.requests.size(), false);
  for (size_t n = 0; n < t.steps.size(); ++n) {
    const std::vector<TraceEvent>& events = t.steps[n].events;
    for (size_t e = 0; e < events.size(); ++e) {
      const TraceEvent& ev = events[e];
      if (ev.kind == TraceEvent::Kind::weight_update) continue;
      const auto r = static_cast<size_t>(ev.req);
      const std::string at = event_at(n, e, ev.kind) + ": request " + str(ev.req);
      if (pd && !started[r] && ev.kind != TraceEvent::Kind::pd_handoff && ev.kind != TraceEvent::Kind::abort) {
        return Error{at +
                     " starts on the decode instance without a pd_handoff; a P/D decode instance (this trace hands "
                     "requests off) never prefills a request itself (disaggregation/decode.py)"};
      }
      if ((ev.kind == TraceEvent::Kind::offload || ev.kind == TraceEvent::Kind::restore) && !pd) {
        return Error{at +
                     ": SGLang offloads a retracted request's KV to host only on a P/D decode instance "
                     "(schedule_batch.py, release_req: offload_kv_cache in decode disaggregation mode)"};
      }
      if (ev.kind == TraceEvent::Kind::preempt && pd) {
        return Error{at +
                     ": a P/D decode instance retracts by offloading the KV to host (schedule_batch.py, release_req) "
                     "or by asking the prefill to recompute it (Req.build_rebootstrap_payload), never by "
                     "re-extending here"};
      }
      if (ev.kind != TraceEvent::Kind::abort) started[r] = true;
    }
    for (const Work& w : t.steps[n].run) {
      const auto r = static_cast<size_t>(w.req);
      if (pd && !started[r]) {
        return Error{step_at(n) + ": request " + str(w.req) +
                     " runs on the decode instance without a pd_handoff; a P/D "
                     "decode instance never prefills a request itself (disaggregation/decode.py)"};
      }
      started[r] = true;
    }
  }
  return ok_status();
}

}  // namespace

Status check_lifecycle_profile(const Trace& t, const Timeline& timeline, Profile profile) {
  if (!profile.is_any() && profile.engine() != engine()) {
    return Error{"profile " + std::string(to_string(profile)) + " is not one of SGLang's (sglang, sglang-miles)"};
  }
  R3_TRY(const LifecycleKnobs k, parse_knobs(t));
  R3_TRY_STATUS(check_startup(t, k));
  R3_TRY_STATUS(check_copies_within(t, copy_window(t, timeline)));
  R3_TRY_STATUS(check_batches(t, timeline, k));
  R3_TRY_STATUS(check_requests(t));
  // What only walking the KV shows: batches that do not fit, hits the radix tree cannot serve,
  // a flush with requests pending, an abort SGLang ends sooner. The KV moves the same in every
  // version.
  std::vector<StepDelivery> identity;
  for (const StepView& s : timeline.steps) identity.push_back(identity_delivery(s));
  const WalkResult walked = walk_trace(t, timeline, identity, Behaviour{});
  if (walked.refused_at) return Error{walked.refusal};
  return ok_status();
}

}  // namespace r3::sglang
