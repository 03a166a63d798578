// Sources, paths under python/sglang/srt/: upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6,
// sglang-miles at c447264eba460045e6e961fd7cf1bfbaf038db6b. Nothing is checked for
// --enable-return-routed-experts in either version, so every rule here is a general one.
#include "reference/engines/sglang/profile.hpp"
#include "reference/engines/sglang/fields.hpp"

#include <algorithm>
#include <numeric>
#include <string>

namespace r3::sglang {
namespace {

bool every_rank_idle(const Case& c) {
  const auto& v = sglang::forward_of(c)->kind == ForwardKind::extend ? c.tokens : sglang::forward_of(c)->requests;
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

}  // namespace

bool is_miles(Profile profile) { return !profile.is_any() && profile.engine() == engine() && profile.variant() == 1; }

bool tbo_allowed(const Case& c) { return sglang::forward_of(c)->a2a != A2a::none || sglang::forward_of(c)->dp_attention; }

bool prefill_graph_allowed(const Case& c, Profile profile) {
  const Forward& f = *sglang::forward_of(c);
  if (f.tbo) return false;  // both versions: BCG is disabled with TBO
  if (is_miles(profile)) {
    // sglang-miles: still disabled with DP attention and with any a2a backend.
    return !f.dp_attention && f.a2a == A2a::none;
  }
  // Upstream: disabled with an a2a backend outside {none, deepep, megamoe, flashinfer}; allowed with
  // DP attention since PR #31682 (2026-07-21).
  return f.a2a == A2a::none || f.a2a == A2a::deepep || f.a2a == A2a::megamoe || f.a2a == A2a::flashinfer;
}

Status check_profile(const Case& c, Profile profile) {
  const std::string in = " under profile " + std::string(to_string(profile));
  const Forward& f = *sglang::forward_of(c);
  if (every_rank_idle(c)) {
    return Error{std::string(f.kind == ForwardKind::extend ? "tokens" : "requests") +
                 ": every DP rank is idle; the scheduler runs no forward then (idle ranks run only beside a "
                 "busy one: managers/scheduler.py, prepare_mlp_sync_batch)" + in};
  }
  if (f.tbo && !tbo_allowed(c)) {
    return Error{"tbo: two-batch overlap with a2a none needs DP attention (server_args.py, _check_two_batch_overlap)" + in};
  }
  if (f.cuda_graph && !f.cuda_graph->prefill.empty() && !prefill_graph_allowed(c, profile)) {
    return Error{std::string("cuda_graph.prefill: this version disables the breakable prefill graph here (") +
                 (is_miles(profile)
                      ? "sglang-miles: with TBO, DP attention or any a2a backend"
                      : "upstream: with TBO, or an a2a backend outside none, deepep, megamoe, flashinfer") +
                 "; server_args.py, _disable_breakable_cudagraph_if_incompatible)" + in};
  }
  return ok_status();
}

Case fit_to_profile(Case c, Profile profile) {
  Forward& f = *sglang::forward_of(c);
  if (f.tbo && !tbo_allowed(c)) f.tbo = false;
  if (f.cuda_graph && !f.cuda_graph->prefill.empty() && !prefill_graph_allowed(c, profile)) {
    f.cuda_graph->prefill.clear();
    if (f.cuda_graph->decode.empty()) {
      f.cuda_graph.reset();
      f.last_decode_bucket.reset();
    }
  }
  if (every_rank_idle(c)) {
    if (f.kind == ForwardKind::extend) c.tokens.front() = 1;
    else f.requests.front() = 1;
  }
  return c;
}

}  // namespace r3::sglang
