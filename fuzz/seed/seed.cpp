#include "fuzz/seed/seed.hpp"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/input_file.hpp"
#include "fuzz/io/output_path.hpp"
#include "fuzz/io/strict_json.hpp"
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

Result<std::vector<int64_t>> int_list(const json& v, const std::string& name) {
  if (!v.is_array()) return Error{name + ": expected a list of integers"};
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_number_integer()) return Error{name + "[" + std::to_string(i) + "]: expected an integer"};
    // get<int64_t>() of 2^64-1 is -1: a message would then quote a number the file never held.
    if (v[i].is_number_unsigned() && v[i].get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
      return Error{name + "[" + std::to_string(i) + "]: " + std::to_string(v[i].get<uint64_t>()) +
                   " is out of range for a 64-bit integer"};
    }
    out.push_back(v[i].get<int64_t>());
  }
  return out;
}

Status read_traffic(const json& t, Deployment& d) {
  if (!t.is_object()) return Error{"traffic: expected an object with decode_batches and/or prefill_lengths"};
  for (const auto& item : t.items()) {
    if (item.key() == "decode_batches") {
      R3_TRY(auto range, int_list(item.value(), "traffic.decode_batches"));
      if (range.size() != 2 || range[0] < 0 || range[0] > range[1]) {
        return Error{"traffic.decode_batches: expected [lo, hi] with 0 <= lo <= hi"};
      }
      d.decode_batches = std::pair{range[0], range[1]};
    } else if (item.key() == "prefill_lengths") {
      R3_TRY(d.prefill_lengths, int_list(item.value(), "traffic.prefill_lengths"));
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

// Rank 0 holds `most` requests; the others fewer, spread deterministically (some idle).
std::vector<int64_t> decode_tokens(int dp, int64_t most) {
  std::vector<int64_t> tokens(static_cast<size_t>(dp));
  for (int r = 0; r < dp; ++r) tokens[static_cast<size_t>(r)] = r == 0 ? most : (most * ((r * 5) % 8)) / 8;
  return tokens;
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

Result<Case> case_from_log_line(const Deployment& d, const std::string& line) {
  R3_TRY(const json doc, parse_json_strictly(line));
  if (!doc.is_object()) return Error{"not a JSON object"};
  std::optional<std::vector<int64_t>> n;
  bool local_given = false;
  std::optional<std::vector<int64_t>> local_sizes;
  for (const auto& item : doc.items()) {
    if (item.key() == "num_tokens_across_dp") {
      R3_TRY(n, int_list(item.value(), "num_tokens_across_dp"));
    } else if (item.key() == "local_sizes") {
      local_given = true;
      if (!item.value().is_null()) {
        R3_TRY(local_sizes, int_list(item.value(), "local_sizes"));
      }
    } else if (item.key() != "step") {
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
        R3_TRY(d.cudagraph_sizes, int_list(v, "cudagraph"));
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

Result<std::vector<Case>> cases_from_traffic(const Deployment& d) {
  if (d.sglang) {
    auto cases = sglang_traffic_cases(*d.sglang);
    if (!cases) return Error{d.name + ": " + cases.error().message};
    return cases;
  }
  std::vector<Case> cases;
  if (d.decode_batches) {
    const auto [lo, hi] = *d.decode_batches;
    std::set<int64_t> targets = {lo, hi};
    for (int64_t s : d.cudagraph_sizes) {
      for (int64_t t : {s - 1, s, s + 1}) {
        if (t >= lo && t <= hi) targets.insert(t);
      }
    }
    for (int64_t t : targets) cases.push_back(with_tokens(d, decode_tokens(d.topology.dp, t), true));
  }
  for (int64_t length : d.prefill_lengths) {
    cases.push_back(with_tokens(d, std::vector<int64_t>(static_cast<size_t>(d.topology.dp), length), false));
    std::vector<int64_t> short_last(static_cast<size_t>(d.topology.dp), length);
    short_last.back() = std::max<int64_t>(0, length - 1);
    cases.push_back(with_tokens(d, short_last, false));
  }
  for (const Case& c : cases) {
    if (auto s = validate(c); !s) return Error{d.name + ": a traffic case is invalid: " + s.error().message};
  }
  return cases;
}

std::vector<Case> cases_from_metadata_log(const Deployment& d, std::string_view log, std::vector<std::string>& errors) {
  std::vector<Case> cases;
  std::istringstream in{std::string(log)};
  std::string line;
  size_t number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    auto c = case_from_log_line(d, line);
    if (!c) {
      errors.push_back(log_error(number, c.error().message));
      continue;
    }
    c->note = "metadata log line " + std::to_string(number) + "; " + d.note;
    cases.push_back(std::move(*c));
  }
  return cases;
}

std::string canonical_key(const Case& c) {
  Case bare = c;
  bare.note.clear();
  bare.expect.reset();
  const std::vector<uint8_t> bytes = case_to_binary(bare);
  return {bytes.begin(), bytes.end()};
}

std::string seed_file_name(const std::string& name, const Case& c) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (unsigned char b : canonical_key(c)) h = (h ^ b) * 1099511628211ull;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
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
