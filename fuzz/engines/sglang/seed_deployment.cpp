// Sources, paths under python/sglang/srt/ of SGLang upstream main at 30cb848d4b455a288a37cfeb6a45aff34f5634a6
// (the sglang-miles branch at c447264eba460045e6e961fd7cf1bfbaf038db6b has the same two functions).
#include "fuzz/engines/sglang/seed_deployment.hpp"

#include <algorithm>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/codec/case_json.hpp"
#include "reference/engines/sglang/profile.hpp"
#include "reference/engines/sglang/validate.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using json = nlohmann::json;

constexpr std::string_view kAllowedKeys =
    "format, engine, name, note, topology, model, spec_width, cuda_graph, tbo, chunked_prefill_size, "
    "max_running_requests, traffic";

Result<std::vector<int64_t>> ints(const json& v, const std::string& name) {
  if (!v.is_array()) return Error{name + ": expected a list of integers"};
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer()) return Error{name + "[" + std::to_string(i) + "]: expected an integer"};
    out.push_back(v[i].get<int64_t>());
  }
  return out;
}

Status read_traffic(const json& t, SglangDeployment& d) {
  if (!t.is_object()) return Error{"traffic: expected an object with decode_requests and/or prefill_lengths"};
  for (const auto& item : t.items()) {
    if (item.key() == "decode_requests") {
      R3_TRY(auto range, ints(item.value(), "traffic.decode_requests"));
      if (range.size() != 2 || range[0] < 0 || range[0] > range[1]) {
        return Error{"traffic.decode_requests: expected [lo, hi] with 0 <= lo <= hi"};
      }
      d.decode_requests = std::pair{range[0], range[1]};
    } else if (item.key() == "prefill_lengths") {
      R3_TRY(d.prefill_lengths, ints(item.value(), "traffic.prefill_lengths"));
    } else {
      return Error{"traffic: unknown key \"" + item.key() + "\" (allowed: decode_requests, prefill_lengths)"};
    }
  }
  if (!d.decode_requests && d.prefill_lengths.empty()) return Error{"traffic: needs decode_requests or prefill_lengths"};
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
    if (max_bs == v.end() || !max_bs->is_number_integer() || max_bs->get<int64_t>() < 1) {
      return Error{"cuda_graph.decode_max_bs: \"decode\": \"sglang-default\" needs SGLang's --cuda-graph-max-bs, a "
                   "positive integer"};
    }
    g.default_decode_max_bs = max_bs->get<int64_t>();
  } else if (max_bs != v.end()) {
    return Error{"cuda_graph.decode_max_bs: only with \"decode\": \"sglang-default\""};
  }
  return g;
}

// Rank 0 holds `most`; the others fewer, spread deterministically (some idle), as for vLLM.
std::vector<int64_t> spread(int dp, int64_t most) {
  std::vector<int64_t> v(static_cast<size_t>(dp));
  for (int r = 0; r < dp; ++r) v[static_cast<size_t>(r)] = r == 0 ? most : (most * ((r * 5) % 8)) / 8;
  return v;
}

const std::vector<int64_t>& decode_buckets(const Case& c) {
  static const std::vector<int64_t> none;
  return c.sglang->cuda_graph ? c.sglang->cuda_graph->decode : none;
}

// The bucket a decode replay of `most` requests runs, nullopt when it runs eager.
std::optional<int64_t> bucket_of(const Case& c, int64_t most) {
  for (int64_t b : decode_buckets(c))
    if (b >= most) return b;
  return std::nullopt;
}

Status check_traffic_fits(const SglangDeployment& d) {
  const sglang::Forward& f = *d.base.sglang;
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
  std::vector<int64_t> list;
  auto range = [&](int64_t from, int64_t to_inclusive, int64_t step) {
    for (int64_t b = from; b <= to_inclusive; b += step) list.push_back(b);
  };
  if (!speculative) {
    list = {1, 2, 4, 8, 12};
    range(16, 256, 8);
    range(272, 511, 16);
    range(512, max_bs, 32);
  } else {
    range(1, 8, 1);
    range(10, 32, 2);
    range(40, 64, 4);
    range(72, 256, 8);
    range(272, max_bs, 16);
  }
  std::erase_if(list, [&](int64_t b) { return b > max_bs; });
  if (std::find(list.begin(), list.end(), max_bs) == list.end()) list.push_back(max_bs);
  const int64_t pool = (max_running_requests + align - 1) / align * align;
  if (*std::max_element(list.begin(), list.end()) > pool) list.push_back(pool);
  std::set<int64_t> kept;
  for (int64_t b : list)
    if (b * width % align == 0 && b <= pool) kept.insert(b);
  return {kept.begin(), kept.end()};
}

Result<SglangDeployment> sglang_deployment_from_json(const json& doc) {
  SglangDeployment d;
  json as_case = {{"format", std::string(kCaseFormat)}, {"engine", "sglang"}, {"layer", 0}};
  GraphSpec graphs;
  bool has_graphs = false;
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    if (key == "format" || key == "engine" || key == "name" || key == "note") continue;  // seed.cpp reads them
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
  if (base.sglang->tbo && !sglang::tbo_allowed(base)) {
    return Error{"tbo: two-batch overlap with a2a none needs DP attention; SGLang refuses to start "
                 "(server_args.py, _check_two_batch_overlap)"};
  }
  if (has_graphs) {
    if (graphs.default_decode_max_bs) {
      const sglang::Forward& f = *base.sglang;
      const int64_t align = (f.tbo ? 2 : 1) * (sglang::counts_aligned(base) ? base.topology.tp : 1);
      graphs.graphs["decode"] = sglang_default_decode_buckets(*graphs.default_decode_max_bs, verify, align,
                                                              f.tbo ? 1 : f.spec_width, f.max_running_requests);
    }
    as_case["cuda_graph"] = graphs.graphs;
    R3_TRY(base, case_from_json(as_case));
  }
  base.layer = base.model.layers - 1;
  d.base = std::move(base);
  R3_TRY_STATUS(check_traffic_fits(d));
  return d;
}

Result<std::vector<Case>> sglang_traffic_cases(const SglangDeployment& d) {
  std::vector<Case> cases;
  const int dp = d.base.topology.dp;
  if (d.decode_requests) {
    const auto [lo, hi] = *d.decode_requests;
    std::set<int64_t> targets = {lo, hi};
    for (int64_t b : decode_buckets(d.base))
      for (int64_t t : {b - 1, b, b + 1})
        if (t >= lo && t <= hi) targets.insert(t);
    for (int64_t t : targets) {
      Case c = d.base;
      c.sglang->requests = spread(dp, t);
      // Steady decoding: the replay before this one ran the same bucket.
      c.sglang->last_decode_bucket = bucket_of(c, t);
      cases.push_back(std::move(c));
    }
  }
  for (int64_t length : d.prefill_lengths) {
    std::vector<int64_t> even(static_cast<size_t>(dp), length);
    std::vector<int64_t> short_last = even;
    short_last.back() = std::max<int64_t>(0, length - 1);
    for (const auto& tokens : {even, short_last}) {
      Case c = d.base;
      c.sglang->kind = sglang::ForwardKind::extend;
      c.sglang->spec_width = 1;
      c.sglang->requests.clear();
      c.tokens = tokens;
      c.sglang->last_decode_bucket.reset();  // the first prefill, before any decode replay
      cases.push_back(c);
      if (!decode_buckets(c).empty()) {
        c.sglang->last_decode_bucket = decode_buckets(c).back();
        cases.push_back(std::move(c));
      }
    }
  }
  for (const Case& c : cases) {
    if (auto s = validate(c); !s) return Error{"a traffic case is invalid: " + s.error().message};
  }
  return cases;
}

}  // namespace r3
