#include "fuzz/seed/seed.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/io/input_file.hpp"
#include "fuzz/io/output_path.hpp"
#include "fuzz/io/strict_json.hpp"
#include "fuzz/seed/engine_seed.hpp"
#include "reference/limits.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using json = nlohmann::json;

// 64 bytes under a case's limit: room for the "metadata log line N; " of a log case.
constexpr int64_t kMaxDeploymentNoteBytes = limits::kMaxTextBytes - 64;

std::string log_error(size_t line, const std::string& what) { return "line " + std::to_string(line) + ": " + what; }

// Every registered engine's name quoted, the last two joined by " or ": "\"vllm\" or \"sglang\"".
std::string quoted_engine_names() {
  const std::vector<Engine> engines = all_engines();
  std::string text;
  for (size_t i = 0; i < engines.size(); ++i) {
    if (i > 0) text += i + 1 == engines.size() ? " or " : ", ";
    text += "\"" + std::string(engines[i].name()) + "\"";
  }
  return text;
}

// The seed part of a deployment's engine; an error naming an engine without one.
Result<const EngineSeed*> seed_part(Engine engine) {
  if (const EngineSeed* part = engine_seed(engine)) return part;
  return Error{"engine: " + std::string(engine.name()) + " has no seed part (its deployments cannot be read)"};
}

}  // namespace

Status read_deployment_label(const std::string& key, const json& v, Deployment& d) {
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

Status read_deployment_labels(const json& doc, Deployment& d) {
  if (const auto engine = doc.find("engine"); engine != doc.end()) {
    if (!engine->is_string()) return Error{"engine: expected a string (" + engine_names(" or ") + ")"};
    R3_TRY(d.engine, parse_engine(engine->get<std::string>()));
  }
  if (const auto format = doc.find("format"); format == doc.end()) {
    return Error{"format: missing (expected \"" + std::string(kDeploymentFormat) + "\")"};
  } else if (*format != kDeploymentFormat) {
    return Error{"format: expected \"" + std::string(kDeploymentFormat) + "\""};
  }
  for (const std::string key : {"name", "note"}) {
    if (const auto v = doc.find(key); v != doc.end()) R3_TRY_STATUS(read_deployment_label(key, *v, d));
  }
  if (d.name.empty()) return Error{"name: missing (it names the seeded files)"};
  return ok_status();
}

// "engine" picks the part that reads the rest: the default engine's when it is absent.
Result<Deployment> deployment_from_json_text(std::string_view text) {
  R3_TRY(const json doc, parse_json_strictly(text));
  if (!doc.is_object()) return Error{"deployment: not a JSON object"};
  Deployment d;
  if (const auto engine = doc.find("engine"); engine != doc.end()) {
    const std::vector<Engine> engines = all_engines();
    const auto named = std::find_if(engines.begin(), engines.end(),
                                    [&](Engine e) { return *engine == std::string(e.name()); });
    if (named == engines.end()) return Error{"engine: expected " + quoted_engine_names()};
    d.engine = *named;
  }
  R3_TRY(const EngineSeed* part, seed_part(d.engine));
  R3_TRY_STATUS(part->read_deployment(doc, d));
  return d;
}

Result<Deployment> read_deployment_file(const std::string& path) {
  R3_TRY(std::string text, read_input_file(path));
  auto d = deployment_from_json_text(text);
  if (!d) return Error{path + ": " + d.error().message};
  return d;
}

Profile default_profile_of(const Deployment& d) { return Profile::of(d.engine, 0); }

Case deployment_case(const Deployment& d) {
  const EngineSeed* part = engine_seed(d.engine);
  return part ? part->base_case(d) : Case{};
}

namespace {

// The traffic's cases in order, each handed to `emit` until it returns false; not validated
// (for_each_traffic_case does that). None for an engine without a seed part.
void generate_traffic(const Deployment& d, const std::function<bool(Case)>& emit) {
  if (const EngineSeed* part = engine_seed(d.engine)) part->generate_traffic(d, emit);
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
  const EngineSeed* part = engine_seed(d.engine);
  return part ? part->traffic_size(d).total() : 0;
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
  const Result<const EngineSeed*> part = seed_part(d.engine);
  Status status = ok_status();
  for_each_line(log, [&](size_t number, std::string_view line) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) return true;
    auto c = part ? (*part)->log_case(d, line) : Result<Case>(part.error());
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
  if (profile != Profile::any() && c.metadata) {
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
