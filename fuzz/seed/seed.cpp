#include "fuzz/seed/seed.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <functional>

#include <nlohmann/json.hpp>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/input_file.hpp"
#include "fuzz/io/output_path.hpp"
#include "fuzz/io/strict_json.hpp"
#include "fuzz/seed/int_list.hpp"
#include "fuzz/seed/traffic.hpp"
#include "reference/limits.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using json = nlohmann::json;

constexpr std::string_view kDeploymentFormat = "r3fuzz-deployment/1";
// 64 bytes under a case's limit: room for the "metadata log line N; " of a log case.
constexpr int64_t kMaxDeploymentNoteBytes = limits::kMaxTextBytes - 64;

std::vector<int64_t> vllm_default_capture_sizes() {
  std::vector<int64_t> sizes = {1, 2, 4};
  for (int64_t s = 8; s <= 512; s += 8) sizes.push_back(s);
  return sizes;
}

Status read_traffic(const json& t, Deployment& d) {
  if (!t.is_object()) return Error{"traffic: expected an object with decode_batches and/or prefill_lengths"};
  for (const auto& item : t.items()) {
    if (item.key() == "decode_batches") {
      R3_TRY(auto range, int_list(item.value(), "traffic.decode_batches", 2, "(expected [lo, hi])"));
      if (range.size() != 2 || range[0] < 0 || range[0] > range[1]) {
        return Error{"traffic.decode_batches: expected [lo, hi] with 0 <= lo <= hi"};
      }
      d.decode_batches = std::pair{range[0], range[1]};
    } else if (item.key() == "prefill_lengths") {
      R3_TRY(d.prefill_lengths,
             int_list(item.value(), "traffic.prefill_lengths", kMaxPrefillLengths, kPrefillLengthsWhy));
    } else {
      return Error{"traffic: unknown key \"" + item.key() + "\" (allowed: decode_batches, prefill_lengths)"};
    }
  }
  if (!d.decode_batches && d.prefill_lengths.empty()) return Error{"traffic: needs decode_batches or prefill_lengths"};
  return ok_status();
}

Case with_tokens(const Deployment& d, std::vector<int64_t> tokens, bool cudagraph) {
  Case c = deployment_case(d);
  c.tokens = std::move(tokens);  // within [0, M]: deployment_from_json_text() refuses traffic beyond M
  if (cudagraph && !d.cudagraph_sizes.empty()) c.padding = Padding{PaddingMode::cudagraph, d.cudagraph_sizes};
  return c;
}

std::string log_error(size_t line, const std::string& what) { return "line " + std::to_string(line) + ": " + what; }

std::optional<std::string> check_log_metadata(const Deployment& d, const std::vector<int64_t>& n,
                                              const std::optional<std::vector<int64_t>>& local_sizes) {
  const size_t dp = static_cast<size_t>(d.topology.dp);
  if (n.size() != dp) {
    return "num_tokens_across_dp has " + std::to_string(n.size()) + " entries, expected " + std::to_string(dp) + " (dp)";
  }
  for (size_t i = 0; i < n.size(); ++i) {
    if (n[i] < 0 || n[i] > d.max_num_tokens) {
      return "num_tokens_across_dp[" + std::to_string(i) + "] = " + std::to_string(n[i]) + " is outside [0, " +
             std::to_string(d.max_num_tokens) + "] (max_num_tokens of the deployment)";
    }
  }
  if (!local_sizes) return std::nullopt;
  const bool sp = d.topology.sp;
  const std::vector<int64_t> expected = derive_local_sizes(n, d.topology.tp, sp);
  if (local_sizes->size() != expected.size()) {
    return "local_sizes has " + std::to_string(local_sizes->size()) + " entries, expected " +
           std::to_string(expected.size()) + (sp ? " (dp*tp with sp)" : " (dp without sp)");
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if ((*local_sizes)[i] != expected[i]) {
      return "local_sizes[" + std::to_string(i) + "] = " + std::to_string((*local_sizes)[i]) + ", expected " +
             std::to_string(expected[i]) + (sp ? " (ceil(n_d/tp) of num_tokens_across_dp)" : " (num_tokens_across_dp)");
    }
  }
  return std::nullopt;
}

// The lists are bounded by what any deployment can hold (one count per DP rank; one local size
// per rank of dp*tp), before check_log_metadata() compares them with this deployment's.
Result<Case> case_from_log_line(const Deployment& d, std::string_view line) {
  R3_TRY(const json doc, parse_json_strictly(line));
  if (!doc.is_object()) return Error{"not a JSON object"};
  std::optional<std::vector<int64_t>> n;
  bool local_given = false;
  std::optional<std::vector<int64_t>> local_sizes;
  for (const auto& item : doc.items()) {
    if (item.key() == "num_tokens_across_dp") {
      R3_TRY(n, int_list(item.value(), "num_tokens_across_dp", limits::kMaxDp, "(one count per DP rank)"));
    } else if (item.key() == "local_sizes") {
      local_given = true;
      if (!item.value().is_null()) {
        R3_TRY(local_sizes, int_list(item.value(), "local_sizes", limits::kMaxMetadataEntries, "(one per rank of dp*tp)"));
      }
    } else if (item.key() == "step") {
      // Only a label; it sizes nothing, but a step is still a count.
      R3_TRY_STATUS(bounded_int(item.value(), "step", 0, INT64_MAX));
    } else {
      return Error{"unknown key \"" + item.key() + "\" (allowed: step, num_tokens_across_dp, local_sizes)"};
    }
  }
  if (!n) return Error{"num_tokens_across_dp is missing"};
  if (auto problem = check_log_metadata(d, *n, local_sizes)) return Error{*problem};
  Case c = with_tokens(d, *n, false);
  c.metadata = MetadataOverride{n, local_given, local_sizes};
  R3_TRY_STATUS(validate(c));
  return c;
}

// What generate_traffic() makes of a vLLM deployment: one decode step per target, two prefill
// steps per length.
TrafficSize vllm_traffic_size(const Deployment& d) {
  const size_t decode = d.decode_batches ? decode_targets(*d.decode_batches, d.cudagraph_sizes).size() : 0;
  return {static_cast<int64_t>(decode), 2 * static_cast<int64_t>(d.prefill_lengths.size())};
}

Status read_label(const std::string& key, const json& v, Deployment& d) {
  if (!v.is_string()) return Error{key + ": expected a string"};
  (key == "name" ? d.name : d.note) = v.get<std::string>();
  // The name becomes file names under --out: a safe set of characters, never a path.
  if (key == "name") R3_TRY_STATUS(check_safe_name(d.name, "name"));
  // The note goes into every case, which must stay readable (limits::kMaxTextBytes), with
  // room for the "metadata log line N; " a log case adds in front.
  if (key == "note" && static_cast<int64_t>(d.note.size()) > kMaxDeploymentNoteBytes) {
    return Error{"note: " + std::to_string(d.note.size()) + " bytes, at most " +
                 std::to_string(kMaxDeploymentNoteBytes) + " (a case's note is at most 1 MiB)"};
  }
  return ok_status();
}

// The keys both engines' deployments share: format, engine, name, note.
Status read_common(const json& doc, Deployment& d) {
  if (const auto engine = doc.find("engine"); engine != doc.end()) {
    if (!engine->is_string()) return Error{"engine: expected a string (vllm or sglang)"};
    R3_TRY(d.engine, parse_engine(engine->get<std::string>()));
  }
  if (const auto format = doc.find("format"); format == doc.end()) {
    return Error{"format: missing (expected \"" + std::string(kDeploymentFormat) + "\")"};
  } else if (*format != kDeploymentFormat) {
    return Error{"format: expected \"" + std::string(kDeploymentFormat) + "\""};
  }
  for (const std::string key : {"name", "note"}) {
    if (const auto v = doc.find(key); v != doc.end()) R3_TRY_STATUS(read_label(key, *v, d));
  }
  if (d.name.empty()) return Error{"name: missing (it names the seeded files)"};
  return ok_status();
}

}  // namespace

Result<Deployment> deployment_from_json_text(std::string_view text) {
  R3_TRY(const json doc, parse_json_strictly(text));
  if (!doc.is_object()) return Error{"deployment: not a JSON object"};
  Deployment d;
  if (const auto engine = doc.find("engine"); engine != doc.end() && *engine != "vllm" && *engine != "sglang") {
    return Error{"engine: expected \"vllm\" or \"sglang\""};
  } else if (engine != doc.end() && *engine == "sglang") {
    R3_TRY_STATUS(read_common(doc, d));
    R3_TRY(d.sglang, sglang_deployment_from_json(doc));
    d.sglang->base.note = d.note;
    return d;
  }
  json as_case = {{"format", std::string(kCaseFormat)}, {"padding", "none"}};
  for (const auto& item : doc.items()) {
    const std::string& key = item.key();
    const json& v = item.value();
    if (key == "format") {
      if (v != kDeploymentFormat) return Error{"format: expected \"" + std::string(kDeploymentFormat) + "\""};
    } else if (key == "engine") {
      // "vllm": checked above.
    } else if (key == "name" || key == "note") {
      R3_TRY_STATUS(read_label(key, v, d));
    } else if (key == "topology" || key == "model" || key == "max_num_tokens" || key == "path" || key == "monolithic") {
      as_case[key] = v;
    } else if (key == "cudagraph") {
      if (v == "vllm-default") {
        d.cudagraph_sizes = vllm_default_capture_sizes();
      } else {
        R3_TRY(d.cudagraph_sizes, int_list(v, "cudagraph", limits::kMaxCudagraphSizes));
        if (d.cudagraph_sizes.empty()) return Error{"cudagraph: empty; give capture sizes, or leave the key out for no CUDA graphs"};
      }
    } else if (key == "traffic") {
      R3_TRY_STATUS(read_traffic(v, d));
    } else {
      return Error{"deployment: unknown key \"" + key +
                   "\" (allowed: format, engine, name, note, topology, model, max_num_tokens, path, monolithic, cudagraph, "
                   "traffic)"};
    }
  }
  if (!doc.contains("format")) return Error{"format: missing (expected \"" + std::string(kDeploymentFormat) + "\")"};
  if (d.name.empty()) return Error{"name: missing (it names the seeded files)"};
  if (!doc.contains("traffic")) return Error{"traffic: missing"};
  const int dp = as_case.contains("topology") && as_case["topology"].is_object() && as_case["topology"].contains("dp") &&
                         as_case["topology"]["dp"].is_number_integer()
                     ? as_case["topology"]["dp"].get<int>()
                     : 1;
  as_case["tokens"] = std::vector<int64_t>(static_cast<size_t>(std::clamp(dp, 1, 1024)), 0);
  as_case["layer"] = 0;
  R3_TRY(Case base, case_from_json(as_case));
  d.topology = base.topology;
  d.model = base.model;
  d.max_num_tokens = base.max_num_tokens;
  d.path = base.path;
  d.monolithic = base.monolithic;
  // Traffic beyond M is an error in the deployment, not something to clamp silently.
  for (size_t i = 0; i < d.prefill_lengths.size(); ++i) {
    const int64_t length = d.prefill_lengths[i];
    if (length < 0 || length > d.max_num_tokens) {
      return Error{"traffic.prefill_lengths[" + std::to_string(i) + "]: " + std::to_string(length) + " is outside [0, " +
                   std::to_string(d.max_num_tokens) + "] (max_num_tokens)"};
    }
  }
  if (d.decode_batches && d.decode_batches->second > d.max_num_tokens) {
    return Error{"traffic.decode_batches: " + std::to_string(d.decode_batches->second) + " is above max_num_tokens " +
                 std::to_string(d.max_num_tokens)};
  }
  if (!d.cudagraph_sizes.empty()) {
    Case probe = base;
    probe.padding = Padding{PaddingMode::cudagraph, d.cudagraph_sizes};
    if (auto s = validate(probe); !s) return Error{"cudagraph: " + s.error().message};
  }
  R3_TRY_STATUS(check_traffic_size(vllm_traffic_size(d)));
  return d;
}

Result<Deployment> read_deployment_file(const std::string& path) {
  R3_TRY(std::string text, read_input_file(path));
  auto d = deployment_from_json_text(text);
  if (!d) return Error{path + ": " + d.error().message};
  return d;
}

Profile default_profile_of(const Deployment& d) { return d.engine == Engine::sglang ? Profile::sglang : kDefaultProfile; }

Case deployment_case(const Deployment& d) {
  if (d.sglang) return d.sglang->base;
  Case c;
  c.topology = d.topology;
  c.model = d.model;
  c.max_num_tokens = d.max_num_tokens;
  c.tokens.assign(static_cast<size_t>(d.topology.dp), 0);
  c.path = d.path;
  c.monolithic = d.monolithic;
  c.layer = d.model.layers - 1;
  c.note = d.note;
  return c;
}

namespace {

// The traffic's cases in order, each handed to `emit` until it returns false; not validated
// (for_each_traffic_case does that).
void generate_traffic(const Deployment& d, const std::function<bool(Case)>& emit) {
  if (d.sglang) return generate_sglang_traffic(*d.sglang, emit);
  const size_t dp = static_cast<size_t>(d.topology.dp);
  if (d.decode_batches) {
    for (int64_t t : decode_targets(*d.decode_batches, d.cudagraph_sizes))
      if (!emit(with_tokens(d, spread_over_ranks(d.topology.dp, t), true))) return;
  }
  for (int64_t length : d.prefill_lengths) {
    std::vector<int64_t> short_last(dp, length);
    short_last.back() = std::max<int64_t>(0, length - 1);
    if (!emit(with_tokens(d, std::vector<int64_t>(dp, length), false))) return;
    if (!emit(with_tokens(d, std::move(short_last), false))) return;
  }
}

// The lines of `log` as std::getline() splits them, with their numbers from 1.
void for_each_line(std::string_view log, const std::function<bool(size_t, std::string_view)>& visit) {
  size_t number = 0;
  for (size_t at = 0; at < log.size();) {
    const size_t end = std::min(log.find('\n', at), log.size());
    if (!visit(++number, log.substr(at, end - at))) return;
    at = end + 1;
  }
}

}  // namespace

int64_t count_traffic_cases(const Deployment& d) {
  return (d.sglang ? sglang_traffic_size(*d.sglang) : vllm_traffic_size(d)).total();
}

Status for_each_traffic_case(const Deployment& d, const std::function<Status(Case)>& visit) {
  // Every case is checked before the first is visited: a deployment with an invalid case seeds
  // nothing. Making them twice costs little; holding them all would cost their whole size.
  std::optional<Error> invalid;
  generate_traffic(d, [&](Case c) {
    if (auto s = validate(c); !s) invalid = Error{d.name + ": a traffic case is invalid: " + s.error().message};
    return !invalid;
  });
  if (invalid) return *invalid;
  Status status = ok_status();
  generate_traffic(d, [&](Case c) {
    status = visit(std::move(c));
    return status.ok();
  });
  return status;
}

Result<std::vector<Case>> cases_from_traffic(const Deployment& d) {
  std::vector<Case> cases;
  R3_TRY_STATUS(for_each_traffic_case(d, [&](Case c) {
    cases.push_back(std::move(c));
    return ok_status();
  }));
  return cases;
}

Status for_each_log_case(const Deployment& d, std::string_view log, std::vector<std::string>& errors,
                         const std::function<Status(Case)>& visit) {
  Status status = ok_status();
  for_each_line(log, [&](size_t number, std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
    auto c = case_from_log_line(d, line);
    if (!c) {
      errors.push_back(log_error(number, c.error().message));
      return true;
    }
    c->note = "metadata log line " + std::to_string(number) + "; " + d.note;
    status = visit(std::move(*c));
    return status.ok();
  });
  return status;
}

std::vector<Case> cases_from_metadata_log(const Deployment& d, std::string_view log, std::vector<std::string>& errors) {
  std::vector<Case> cases;
  (void)for_each_log_case(d, log, errors, [&](Case c) {
    cases.push_back(std::move(c));
    return ok_status();
  });
  return cases;
}

std::string canonical_key(const Case& c) {
  Case bare = c;
  bare.note.clear();
  bare.expect.reset();
  const std::vector<uint8_t> bytes = case_to_binary(bare);
  return {bytes.begin(), bytes.end()};
}

uint64_t canonical_hash(const Case& c) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char b : canonical_key(c)) h = (h ^ b) * 1099511628211ull;
  return h;
}

std::string seed_file_name(const std::string& name, const Case& c) {
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(canonical_hash(c)));
  return name + "-" + hex + ".json";
}

// fit_to_profile gives idle ranks their dummy token and clamps CUDA-graph sizes to M.
Result<Case> seed_in_profile(Case c, Profile profile) {
  if (!covers(profile, c.engine)) {
    return Error{"is an " + std::string(to_string(c.engine)) + " step, and profile " + std::string(to_string(profile)) +
                 " is " + std::string(to_string(engine_of(profile))) + "'s (use a profile of the deployment's engine, or any)"};
  }
  if (profile != Profile::any && c.metadata) {
    R3_TRY(Step step, derive_step(c));
    if (step.rejection) {
      return Error{"its metadata disagrees with the step (" + *step.rejection + "), which profile " +
                   std::string(to_string(profile)) + " cannot run; seed it with --profile any"};
    }
  }
  c = fit_to_profile(std::move(c), profile);
  c.profile = profile;
  return c;
}

}  // namespace r3
