#include "reference/engines/sglang/validate.hpp"
#include "reference/engines/sglang/fields.hpp"

#include <string>

#include "reference/limits.hpp"
#include "reference/validate.hpp"

namespace r3::sglang {
namespace {

constexpr int64_t kMaxSpecWidth = 64;

Status counts(std::string_view field, const std::vector<int64_t>& v, int dp, int64_t hi, std::string_view why) {
  if (static_cast<int64_t>(v.size()) != dp) {
    return Error{std::string(field) + ": has " + std::to_string(v.size()) + " entries, topology.dp is " +
                 std::to_string(dp) + " (one count per DP rank)"};
  }
  for (size_t r = 0; r < v.size(); ++r) {
    if (v[r] < 0 || v[r] > hi) {
      return Error{std::string(field) + "[" + std::to_string(r) + "]: " + std::to_string(v[r]) +
                   " is out of range [0, " + std::to_string(hi) + "]" + std::string(why)};
    }
  }
  return ok_status();
}

Status buckets(std::string_view field, const std::vector<int64_t>& v, int64_t align) {
  if (static_cast<int64_t>(v.size()) > limits::kMaxCudagraphSizes) {
    return Error{std::string(field) + ": has " + std::to_string(v.size()) + " buckets, at most " +
                 std::to_string(limits::kMaxCudagraphSizes)};
  }
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string name = std::string(field) + "[" + std::to_string(i) + "]";
    R3_TRY_STATUS(validate_in_range(name, v[i], 1, limits::kMaxRows));
    if (i > 0 && v[i] <= v[i - 1]) {
      return Error{std::string(field) + ": buckets must be strictly increasing, entry " + std::to_string(i) + " (" +
                   std::to_string(v[i]) + ") follows " + std::to_string(v[i - 1])};
    }
    if (v[i] % align != 0) {
      return Error{name + ": " + std::to_string(v[i]) + " is not a multiple of " + std::to_string(align) +
                   " (SGLang captures decode batch sizes aligned to 2 under TBO and to attn_tp when counts are "
                   "aligned: utils/common.py, get_cuda_graph_batch_size_alignment)"};
    }
  }
  return ok_status();
}

// Fields only vLLM cases have must keep their defaults: an SGLang case that sets them is a
// mistake worth naming, not a field silently ignored.
Status no_vllm_fields(const Case& c) {
  auto refuse = [](std::string_view key) {
    return Error{std::string(key) + ": is a vLLM case field; an SGLang case (engine \"sglang\") does not take it"};
  };
  if (c.topology.ep) return refuse("topology.ep");
  if (c.topology.sp) return refuse("topology.sp");
  if (c.max_num_tokens != 1) return refuse("max_num_tokens");
  if (c.padding.mode != PaddingMode::none) return refuse("padding");
  if (c.path != Path::single) return refuse("path");
  if (c.monolithic) return refuse("monolithic");
  if (c.microbatches != 1) return refuse("microbatches");
  if (c.dp_chunk) return refuse("dp_chunk");
  if (c.metadata) return refuse("metadata");
  if (c.idle_dummy) return refuse("idle_dummy");
  return ok_status();
}

}  // namespace

int64_t most_per_rank(const Forward& f) {
  if (f.kind != ForwardKind::extend) return f.max_running_requests;
  return f.chunked_prefill_size != -1 ? f.chunked_prefill_size : f.max_prefill_tokens;
}

bool counts_aligned(const Case& c) {
  return sglang::forward_of(c)->dp_attention || (sglang::forward_of(c)->a2a != A2a::none && c.topology.tp > 1);
}

Status validate(const Case& c) {
  if (!sglang::forward_of(c)) return Error{"engine: an SGLang case needs its forward (topology.dp_attention, forward, ...)"};
  const Forward& f = *sglang::forward_of(c);
  R3_TRY_STATUS(no_vllm_fields(c));
  R3_TRY_STATUS(validate_in_range("topology.dp", c.topology.dp, 1, limits::kMaxDp));
  R3_TRY_STATUS(validate_in_range("topology.tp", c.topology.tp, 1, limits::kMaxTp));
  if (f.dp_attention && c.topology.dp < 2) {
    return Error{"topology.dp_attention: needs dp > 1 (server_args.py: DP attention runs dp > 1 attention-DP ranks)"};
  }
  if (!f.dp_attention && c.topology.dp != 1) {
    return Error{"topology.dp: " + std::to_string(c.topology.dp) +
                 " attention-DP ranks need dp_attention true (without DP attention dp is 1)"};
  }
  R3_TRY_STATUS(validate_model(c.model));
  R3_TRY_STATUS(validate_in_range("layer", c.layer, 0, c.model.layers - 1));
  if (f.chunked_prefill_size != -1) R3_TRY_STATUS(validate_in_range("chunked_prefill_size", f.chunked_prefill_size, 1, limits::kMaxRows));
  R3_TRY_STATUS(validate_in_range("max_running_requests", f.max_running_requests, 1, limits::kMaxRows));
  R3_TRY_STATUS(validate_in_range("max_prefill_tokens", f.max_prefill_tokens, 1, limits::kMaxRows));
  if (f.kind == ForwardKind::verify) {
    R3_TRY_STATUS(validate_in_range("spec_width", f.spec_width, 2, kMaxSpecWidth));
  } else if (f.spec_width != 1) {
    return Error{"spec_width: only a verify forward has one (" + std::to_string(f.spec_width) + " on " +
                 std::string(to_string(f.kind)) + ")"};
  }
  if (f.kind == ForwardKind::extend) {
    if (!f.requests.empty()) return Error{"requests: an extend forward counts tokens per DP rank, not requests"};
    const bool chunked = f.chunked_prefill_size != -1;
    R3_TRY_STATUS(counts("tokens", c.tokens, c.topology.dp, most_per_rank(f),
                         chunked ? " (at most chunked_prefill_size: a prefill chunk holds no more)"
                                 : " (at most max_prefill_tokens: chunking is off)"));
  } else {
    if (!c.tokens.empty()) return Error{"tokens: a decode or verify forward counts requests per DP rank, not tokens"};
    R3_TRY_STATUS(counts("requests", f.requests, c.topology.dp, most_per_rank(f), " (at most max_running_requests)"));
  }
  if (f.cuda_graph) {
    if (f.cuda_graph->decode.empty() && f.cuda_graph->prefill.empty()) {
      return Error{"cuda_graph: lists no bucket (leave it out when no graph is captured)"};
    }
    const int64_t align = (f.tbo ? 2 : 1) * (counts_aligned(c) ? c.topology.tp : 1);
    R3_TRY_STATUS(buckets("cuda_graph.decode", f.cuda_graph->decode, align));
    R3_TRY_STATUS(buckets("cuda_graph.prefill", f.cuda_graph->prefill, 1));
  }
  if (f.last_decode_bucket) {
    const std::vector<int64_t>* decode = f.cuda_graph ? &f.cuda_graph->decode : nullptr;
    bool listed = false;
    if (decode)
      for (int64_t b : *decode) listed = listed || b == *f.last_decode_bucket;
    if (!listed) {
      return Error{"last_decode_bucket: " + std::to_string(*f.last_decode_bucket) +
                   " is not one of cuda_graph.decode (a replay runs a captured bucket)"};
    }
  }
  return ok_status();
}

}  // namespace r3::sglang
