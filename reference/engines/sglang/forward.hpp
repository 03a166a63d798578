// The SGLang part of a case: one forward of SGLang's model runner on every attention-DP rank
// (docs/layout-contract.md section 11; ../shared/spec/sglang-contract.md). Plain data: the layout
// it derives is in layout.hpp, its rules in validate.cpp and profile.cpp.
//
// Sources read: SGLang upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6 and the
// sglang-miles branch at c447264eba460045e6e961fd7cf1bfbaf038db6b (paths under python/sglang/srt/).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "reference/error.hpp"

namespace r3::sglang {

// --moe-a2a-backend (layers/moe/utils.py, MoeA2ABackend). For capture there are three classes:
// none (the MoE input is the DP-gathered batch under DP attention), deepep (the capturer
// all-gathers the attn-TP slices itself: state_capturer/routed_experts.py, capture) and every
// other backend (the attn-TP slice is written as it is).
enum class A2a : uint8_t { none, deepep, mooncake, nixl, mori, flashinfer, megamoe, pplx, ascend_fuseep };
inline constexpr int kA2aCount = 9;

// The forward mode (model_executor/forward_batch_info.py, ForwardMode): a prefill (chunk), a
// plain decode, or a speculative target verify (EAGLE, MTP, NGRAM) with spec_width tokens a request.
enum class ForwardKind : uint8_t { extend, decode, verify };

// The captured CUDA-graph buckets: decode (and verify) in requests
// (model_executor/runner/decode_cuda_graph_runner.py), breakable prefill in tokens.
struct CudaGraphs {
  std::vector<int64_t> decode;   // strictly increasing; empty: no decode graph
  std::vector<int64_t> prefill;  // strictly increasing; empty: no prefill graph (BCG)
  bool operator==(const CudaGraphs&) const = default;
};

struct Forward {
  bool dp_attention = false;  // --enable-dp-attention: topology.dp attention-DP ranks
  A2a a2a = A2a::none;
  ForwardKind kind = ForwardKind::extend;
  std::vector<int64_t> requests;  // decode and verify: requests per DP rank (extend uses Case::tokens)
  int64_t spec_width = 1;         // w: tokens per request (captured_req_width); > 1 for verify only
  std::optional<CudaGraphs> cuda_graph;      // nullopt: no graph captured (eager only)
  std::optional<int64_t> last_decode_bucket;  // bs of the decode replay before this forward; nullopt: none yet
  bool tbo = false;                           // --enable-two-batch-overlap
  int64_t chunked_prefill_size = -1;          // per DP rank; -1: chunking off
  int64_t max_running_requests = 1;           // per DP rank
  // Per DP rank, the most tokens an extend batch holds when chunking is off (server_args.py,
  // max_prefill_tokens, default 16384); not part of the field list, see docs.
  int64_t max_prefill_tokens = 16384;
  bool operator==(const Forward&) const = default;
};

std::string_view to_string(A2a a2a);
Result<A2a> parse_a2a(std::string_view text);
std::string_view to_string(ForwardKind kind);
Result<ForwardKind> parse_forward_kind(std::string_view text);
inline constexpr std::string_view kA2aNames = "none, deepep, mooncake, nixl, mori, flashinfer, megamoe, pplx, ascend_fuseep";

}  // namespace r3::sglang
