// Small hand-written SGLang cases for unit tests: one call names the forward (DP ranks, attn-TP
// ranks, a2a backend, forward kind, counts); the rest defaults to a 2-layer, top-2, 16-expert
// model at layer 0, chunked_prefill_size 16 and max_running_requests 4 per DP rank, eager.
// The buffer of upstream's sizing then holds max(16, 4) * dp rows.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reference/capture.hpp"
#include "reference/capturer.hpp"
#include "reference/case.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/forward.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3::test {

// cps 16, mrr 4: buffer rows R = max(cps, mrr) * dp upstream.
inline Case sglang_case(int dp, int tp, sglang::A2a a2a, sglang::ForwardKind kind, std::vector<int64_t> counts,
                        ModelShape model = {2, 2, 16}, int layer = 0) {
  Case c;
  c.engine = sglang::engine();
  c.topology.dp = dp;
  c.topology.tp = tp;
  c.model = model;
  c.layer = layer;
  sglang::Forward f;
  f.dp_attention = dp > 1;
  f.a2a = a2a;
  f.kind = kind;
  f.chunked_prefill_size = 16;
  f.max_running_requests = 4;
  if (kind == sglang::ForwardKind::extend) c.tokens = std::move(counts);
  else f.requests = std::move(counts);
  c.engine_fields.emplace<sglang::Forward>(std::move(f));
  return c;
}

inline Case sglang_extend(int dp, int tp, std::vector<int64_t> tokens, sglang::A2a a2a = sglang::A2a::none) {
  return sglang_case(dp, tp, a2a, sglang::ForwardKind::extend, std::move(tokens));
}

inline Case sglang_decode(int dp, int tp, std::vector<int64_t> requests, sglang::A2a a2a = sglang::A2a::none) {
  return sglang_case(dp, tp, a2a, sglang::ForwardKind::decode, std::move(requests));
}

inline Case sglang_verify(int dp, int tp, std::vector<int64_t> requests, int64_t w,
                          sglang::A2a a2a = sglang::A2a::none) {
  Case c = sglang_case(dp, tp, a2a, sglang::ForwardKind::verify, std::move(requests));
  sglang::forward_of(c)->spec_width = w;
  return c;
}

// The issue's example: DP attention over 2 ranks of attn_tp 2, an MTP verify of w 4 over
// requests [2, 1], decode graph buckets [2, 4] replayed last at 2.
inline Case sglang_issue_example() {
  Case c = sglang_verify(2, 2, {2, 1}, 4);
  sglang::forward_of(c)->cuda_graph = sglang::CudaGraphs{{2, 4}, {}};
  sglang::forward_of(c)->last_decode_bucket = 2;
  return c;
}

// A tensor's runs as (length, dp, first token) triples, every run a token run: what the
// layout tests compare.
struct TokenRun {
  int64_t length = 0;
  int dp = 0;
  int64_t first = 0;
  bool operator==(const TokenRun&) const = default;
};

inline std::vector<TokenRun> token_runs(const RowTensor& t) {
  std::vector<TokenRun> out;
  for (const RowRun& run : t.runs()) out.push_back({run.length, run.dp, run.first});
  return out;
}

// (received, tp_gathered) of each view of a call, DP-major.
inline std::vector<std::pair<int, int>> views_of(const Call& call) {
  std::vector<std::pair<int, int>> out;
  for (size_t r = 0; r < call.rank_count(); ++r) out.emplace_back(call.view(r).received, call.view(r).tp_gathered);
  return out;
}

// One rank's decision on every call of the step, with the policy's own buffer.
inline std::vector<CaptureDecision> decisions_of(const CapturePolicy& policy, const Case& c, const Step& step, int dp,
                                                 int tp = 0) {
  const BufferShape shape{policy.allocate(c).capture_rows, c.model.layers, c.model.top_k};
  std::vector<CaptureDecision> out;
  for (const Call& call : step.calls) {
    const RankView view = call.view(dp, tp);
    policy.decide(capture_call_for(step, call, view, shape), out.emplace_back());
  }
  return out;
}

}  // namespace r3::test
