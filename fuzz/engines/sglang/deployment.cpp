// Sources, paths under python/sglang/srt/ of SGLang upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6
// (the sglang-miles branch at c447264eba460045e6e961fd7cf1bfbaf038db6b has the same two functions).
#include "fuzz/engines/sglang/deployment.hpp"

#include <algorithm>
#include <limits>
#include <span>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/seed/int_list.hpp"
#include "reference/limits.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/engines/sglang/profile.hpp"
#include "reference/engines/sglang/validate.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using json = nlohmann::json;

constexpr std::string_view kAllowedKeys =
    "format, engine, name, note, topology, model, spec_width, cuda_graph, tbo, chunked_prefill_size, "
    "max_running_requests, traffic";

Status read_traffic(const json& t, SglangDeployment& d) {
  R3_TRY(DeclaredTraffic traffic, read_declared_traffic(t, "decode_requests", 0));
  d.decode_requests = traffic.decode;
  d.prefill_lengths = std::move(traffic.prefill_lengths);
  return ok_status();
}

// The deployment's cuda_graph: "decode" a list or "sglang-default" (with "decode_max_bs", SGLang's
// --cuda-graph-max-bs), "prefill" a list. Default decode buckets need the rest of the case, so the
// caller resolves them; here they come back as `max_bs`.
struct GraphSpec {
  json graphs = json::object();
  std::optional<int64_t> default_decode_max_bs;
};

Result<GraphSpec> read_graphs(const json& v) {
  if (!v.is_object()) return Error{"cuda_graph: expected an object with decode and/or prefill"};
  GraphSpec g;
  for (const auto& item : v.items()) {
    const std::string& key = item.key();
    if (key == "decode" && item.value() == "sglang-default") {
      g.default_decode_max_bs = 0;
    } else if (key == "decode" || key == "prefill") {
      g.graphs[key] = item.value();
    } else if (key != "decode_max_bs") {
      return Error{"cuda_graph: unknown key \"" + key + "\" (allowed: decode, decode_max_bs, prefill)"};
    }
  }
  const auto max_bs = v.find("decode_max_bs");
  if (g.default_decode_max_bs) {
    // nlohmann reads 0 and up as unsigned: a value of 2^63 and above must not read as negative.
    const bool positive = max_bs != v.end() && max_bs->is_number_integer() &&
                          (max_bs->is_number_unsigned() ? max_bs->get<uint64_t>() > 0 : max_bs->get<int64_t>() > 0);
    if (!positive) {
      return Error{"cuda_graph.decode_max_bs: \"decode\": \"sglang-default\" needs SGLang's --cuda-graph-max-bs, a "
                   "positive integer"};
    }
    // A batch size, bounded as every bucket is (limits::kMaxRows).
    R3_TRY(g.default_decode_max_bs, bounded_int(*max_bs, "cuda_graph.decode_max_bs", 1, limits::kMaxRows,
                                                "(a decode batch size, bounded as a bucket is)"));
  } else if (max_bs != v.end()) {
    return Error{"cuda_graph.decode_max_bs: only with \"decode\": \"sglang-default\""};
  }
  return g;
}

const std::vector<int64_t>& decode_buckets(const Case& c) {
  static const std::vector<int64_t> none;
  return sglang::forward_of(c)->cuda_graph ? sglang::forward_of(c)->cuda_graph->decode : none;
}

// The bucket a decode replay of `most` requests runs, nullopt when it runs eager.
std::optional<int64_t> bucket_of(const Case& c, int64_t most) {
  for (int64_t b : decode_buckets(c))
    if (b >= most) return b;
  return std::nullopt;
}

Status check_traffic_fits(const SglangDeployment& d) {
  const sglang::Forward& f = *sglang::forward_of(d.base);
  if (d.decode_requests && d.decode_requests->second > f.max_running_requests) {
    return Error{"traffic.decode_requests: " + std::to_string(d.decode_requests->second) +
                 " is above max_running_requests " + std::to_string(f.max_running_requests) + " (per DP rank)"};
  }
  const bool chunked = f.chunked_prefill_size != -1;
  const int64_t most = chunked ? f.chunked_prefill_size : f.max_prefill_tokens;
  for (size_t i = 0; i < d.prefill_lengths.size(); ++i) {
    const int64_t length = d.prefill_lengths[i];
    if (length < 0 || length > most) {
      return Error{"traffic.prefill_lengths[" + std::to_string(i) + "]: " + std::to_string(length) + " is outside [0, " +
                   std::to_string(most) + "] (" + (chunked ? "chunked_prefill_size" : "max_prefill_tokens") +
                   ", per DP rank: a prefill chunk holds no more)"};
    }
  }
  return ok_status();
}

}  // namespace

std::vector<int64_t> sglang_default_decode_buckets(int64_t max_bs, bool speculative, int64_t align, int64_t width,
                                                   int64_t max_running_requests) {
  // SGLang's list runs in spans up to max_bs, which it then holds; where it reaches past the
  // pool it gets the pool too, and every bucket above the pool goes. So the buckets kept are the
  // list's up to top = min(max_bs, pool), and top: listing only those gives the same buckets
  // without a list as long as max_bs (10^12 would take terabytes).
  struct Span {
    int64_t from, to, step;
  };
  constexpr int64_t kOpen = std::numeric_limits<int64_t>::max();
  static constexpr Span kPlain[] = {{1, 1, 1}, {2, 2, 1}, {4, 4, 1}, {8, 8, 1}, {12, 12, 1}, {16, 256, 8}, {272, 511, 16}, {512, kOpen, 32}};
  static constexpr Span kSpeculative[] = {{1, 8, 1}, {10, 32, 2}, {40, 64, 4}, {72, 256, 8}, {272, kOpen, 16}};
  const int64_t pool = (max_running_requests + align - 1) / align * align;
  const int64_t top = std::min(max_bs, pool);
  std::vector<int64_t> kept;
  // Candidates come in increasing order; top may repeat the last one.
  auto keep = [&](int64_t b) {
    if (b * width % align == 0 && (kept.empty() || kept.back() < b)) kept.push_back(b);
    return static_cast<int64_t>(kept.size()) <= limits::kMaxCudagraphSizes;
  };
  for (const Span& span : speculative ? std::span<const Span>(kSpeculative) : std::span<const Span>(kPlain))
    for (int64_t b = span.from; b <= std::min(span.to, top); b += span.step)
      if (!keep(b)) return kept;
  keep(top);
  return kept;
}

Result<SglangDeployment> sglang_deployment_from_json(const json& doc) {
  SglangDeployment d;
  json as_case = {{"format", std::string(kCaseFormat)}, {"engine", "sglang"}, {"layer", 0}};
  GraphSpec graphs;
  bool has_graphs = false;
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    if (key == "format" || key == "engine" || key == "name" || key == "note") continue;  // the caller reads them
    if (key == "topology" || key == "model" || key == "spec_width" || key == "tbo" || key == "chunked_prefill_size" ||
        key == "max_running_requests") {
      as_case[key] = item.value();
    } else if (key == "cuda_graph") {
      R3_TRY(graphs, read_graphs(item.value()));
      has_graphs = true;
    } else if (key == "traffic") {
      R3_TRY_STATUS(read_traffic(item.value(), d));
    } else {
      return Error{"deployment: unknown key \"" + key + "\" for an SGLang deployment (allowed: " +
                   std::string(kAllowedKeys) + ")"};
    }
  }
  if (!doc.contains("traffic")) return Error{"traffic: missing"};
  // spec_width > 1 is speculative decoding: its decode-like forwards are target verifies.
  const bool verify = as_case.contains("spec_width") && !(as_case["spec_width"] == 1);
  if (as_case.contains("spec_width") && !verify) as_case.erase("spec_width");
  as_case["forward"] = verify ? "verify" : "decode";
  int dp = 1;
  if (as_case.contains("topology") && as_case["topology"].is_object() && as_case["topology"].contains("dp") &&
      as_case["topology"]["dp"].is_number_integer()) {
    dp = std::clamp(as_case["topology"]["dp"].get<int>(), 1, 1024);
  }
  as_case["requests"] = std::vector<int64_t>(static_cast<size_t>(dp), 1);
  // The knobs without graphs first: default buckets depend on the alignment they imply.
  R3_TRY(Case base, case_from_json(as_case));
  // SGLang refuses to start here, so no step of it exists to seed (fit_to_profile would drop TBO).
  if (sglang::forward_of(base)->tbo && !sglang::tbo_allowed(base)) {
    return Error{"tbo: two-batch overlap with a2a none needs DP attention; SGLang refuses to start "
                 "(server_args.py, _check_two_batch_overlap)"};
  }
  if (has_graphs) {
    if (graphs.default_decode_max_bs) {
      const sglang::Forward& f = *sglang::forward_of(base);
      const int64_t align = (f.tbo ? 2 : 1) * (sglang::counts_aligned(base) ? base.topology.tp : 1);
      const std::vector<int64_t> buckets = sglang_default_decode_buckets(*graphs.default_decode_max_bs, verify, align,
                                                                         f.tbo ? 1 : f.spec_width, f.max_running_requests);
      if (static_cast<int64_t>(buckets.size()) > limits::kMaxCudagraphSizes) {
        return Error{"cuda_graph.decode_max_bs: " + std::to_string(*graphs.default_decode_max_bs) + " gives over " +
                     std::to_string(limits::kMaxCudagraphSizes) +
                     " decode buckets (SGLang's default list up to it or max_running_requests " +
                     std::to_string(f.max_running_requests) + "), at most " +
                     std::to_string(limits::kMaxCudagraphSizes) + " (lower it, or list the buckets)"};
      }
      graphs.graphs["decode"] = buckets;
    }
    as_case["cuda_graph"] = graphs.graphs;
    R3_TRY(base, case_from_json(as_case));
  }
  base.layer = base.model.layers - 1;
  d.base = std::move(base);
  R3_TRY_STATUS(check_traffic_fits(d));
  R3_TRY_STATUS(check_traffic_size(sglang_traffic_size(d)));
  return d;
}

TrafficSize sglang_traffic_size(const SglangDeployment& d) {
  const size_t decode = d.decode_requests ? decode_targets(*d.decode_requests, decode_buckets(d.base)).size() : 0;
  const int64_t per_length = decode_buckets(d.base).empty() ? 2 : 4;
  return {static_cast<int64_t>(decode), per_length * static_cast<int64_t>(d.prefill_lengths.size())};
}

void generate_sglang_traffic(const SglangDeployment& d, const std::function<bool(Case)>& emit) {
  const int dp = d.base.topology.dp;
  if (d.decode_requests) {
    for (int64_t t : decode_targets(*d.decode_requests, decode_buckets(d.base))) {
      Case c = d.base;
      sglang::forward_of(c)->requests = spread_over_ranks(dp, t);
      // Steady decoding: the replay before this one ran the same bucket.
      sglang::forward_of(c)->last_decode_bucket = bucket_of(c, t);
      if (!emit(std::move(c))) return;
    }
  }
  for (int64_t length : d.prefill_lengths) {
    std::vector<int64_t> even(static_cast<size_t>(dp), length);
    std::vector<int64_t> short_last = even;
    short_last.back() = std::max<int64_t>(0, length - 1);
    for (std::vector<int64_t>* tokens : {&even, &short_last}) {
      Case c = d.base;
      sglang::forward_of(c)->kind = sglang::ForwardKind::extend;
      sglang::forward_of(c)->spec_width = 1;
      sglang::forward_of(c)->requests.clear();
      c.tokens = std::move(*tokens);
      sglang::forward_of(c)->last_decode_bucket.reset();  // the first prefill, before any decode replay
      if (decode_buckets(c).empty()) {
        if (!emit(std::move(c))) return;
        continue;
      }
      if (!emit(c)) return;
      sglang::forward_of(c)->last_decode_bucket = decode_buckets(c).back();
      if (!emit(std::move(c))) return;
    }
  }
}

}  // namespace r3
