#include "fuzz/libfuzzer/differential.hpp"

#include <algorithm>
#include <filesystem>

#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/campaign/report.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/shrink/campaign_hook.hpp"
#include "reference/engine_model.hpp"
#include "reference/layout.hpp"

namespace r3 {
namespace {

ImplementationOptions options(std::string backend, std::string fault) {
  ImplementationOptions o;
  o.backend = std::move(backend);
  o.fault = std::move(fault);
  return o;
}

std::vector<std::string> split_names(std::string_view text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    std::string name(text.substr(start, comma - start));
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    if (!name.empty()) names.push_back(name);
    start = comma + 1;
  }
  return names;
}

// The faulted implementation: the GPU pipeline when it is registered, else the default engine's
// proposed fix (r3-fixed) with the fault.
Result<std::unique_ptr<Implementation>> make_faulted(const std::string& fault) {
  auto gpu = make_implementation("gpu", options("host", fault));
  if (gpu) return gpu;
  const std::string faulty = std::string(Engine{}.model().fixed_policy()) + "+" + fault;
  auto policy = make_implementation(faulty, {});
  if (policy) return policy;
  return Error{"R3FUZZ_FAULT=" + fault + ": no implementation carries it (gpu: " + gpu.error().message + "; " +
               faulty + ": " + policy.error().message + ")"};
}

Result<std::vector<std::unique_ptr<Implementation>>> make_impls(const DifferentialConfig& config) {
  std::vector<std::unique_ptr<Implementation>> impls;
  if (config.impls.empty() && !config.fault.empty()) {
    R3_TRY(auto faulted, make_faulted(config.fault));
    impls.push_back(std::move(faulted));
    return impls;
  }
  if (config.impls.empty()) {
    // The engine's current model (its first released policy) and the GPU pipeline taking its
    // decisions, for each engine the profile covers. Plain "gpu" decides like the default
    // engine's current model; another engine's is "gpu:POLICY".
    for (Engine e : all_engines()) {
      if (!covers(config.profile, e)) continue;
      const std::vector<std::string_view> released = e.model().released_policies();
      if (released.empty()) continue;
      const std::string current(released.front());
      R3_TRY(auto model, make_implementation(current, {}));
      impls.push_back(std::move(model));
      const std::string gpu_name = e == Engine{} ? std::string("gpu") : "gpu:" + current;
      if (auto gpu = make_implementation(gpu_name, options("host", ""))) impls.push_back(std::move(*gpu));
    }
    return impls;
  }
  for (const std::string& name : config.impls) {
    auto impl = make_implementation(name, options("", config.fault));
    if (!impl) return Error{"R3FUZZ_IMPLS: " + impl.error().message};
    impls.push_back(std::move(*impl));
  }
  return impls;
}

// Symbolically whenever the implementation has a policy: symbolic and concrete verdicts agree
// on every case small enough for both (tests/fuzz/oracle), and the symbolic judge reuses its
// storage where the host executor materialises every buffer. Implementations without a policy
// (the GPU pipeline, adapters) run concretely: every input of the target is small enough.
std::optional<JudgeMode> judge_mode(const Implementation& impl, const Case& c) {
  return choose_judge_mode(Mode::symbolic, impl, c);
}

// Judges into `out`, reusing its storage; false when `impl` cannot be judged on `c`.
bool judge_into(Judgement& out, const Implementation& impl, const Case& c, const Step& step) {
  const auto mode = judge_mode(impl, c);
  if (!mode) return false;
  // Only the reported rank's words reach a report; rendering every rank's costs more than judging.
  judge_case_into(out, impl, c, step, *mode, RankDetails::reported_ranks);
  return true;
}

// Signatures the regression cases in `dir` show for the implementation each one names; each
// failing case is also placed in `findings`, whose findings are then marked known.
Result<std::set<Signature>> known_signatures(const std::string& dir, FindingGrouper& findings) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  if (ec) return Error{"R3FUZZ_KNOWN=" + dir + ": " + ec.message()};
  std::sort(files.begin(), files.end());
  std::set<Signature> known;
  for (const auto& file : files) {
    R3_TRY(Case c, read_case_file(file.string()));
    if (!c.expect) continue;
    // Files are data, never commands (docs/SECURITY.md): a corpus entry cannot make CI start a program.
    if (names_external_command(c.expect->impl)) return Error{file.string() + ": " + external_from_file_refusal(c.expect->impl)};
    auto impl = make_implementation(c.expect->impl, {});
    if (!impl) return Error{file.string() + ": expect.impl: " + impl.error().message};
    R3_TRY(Step step, derive_step(c));
    if (Judgement j; judge_into(j, **impl, c, step) && j.failed()) {
      known.insert(signature_of(j, c));
      findings.place(known.size(), **impl, j, c);
    }
  }
  for (Finding& f : findings.findings()) f.known = true;
  return known;
}

std::string report_for(const Case& c, const std::vector<std::string>& names, std::vector<Failure> failures, bool strict) {
  CampaignReport report;
  report.options.max_cases = 1;
  report.options.out_dir.clear();
  report.options.strict = strict;
  report.implementations = names;
  report.cases = 1;
  Case documented = c;
  const Failure& first = failures.front();
  documented.expect = Expectation{first.signature.impl, first.signature.verdict, first.severity};
  documented.note = "found by the differential fuzz target";
  // One input, not grouped: each failure is its own finding here; r3fuzz shrink groups nothing
  // either, and a campaign (r3fuzz run) groups across cases.
  for (size_t i = 0; i < failures.size(); ++i) {
    failures[i].finding = i;
    Finding f;
    f.verdict = failures[i].signature.verdict;
    f.severity = failures[i].severity;
    f.implementations = {failures[i].signature.impl};
    f.failures = {i};
    f.reproducer = c;
    f.detail = failures[i].detail;
    report.findings.push_back(std::move(f));
  }
  report.failures = std::move(failures);
  return report_text(report, false) + "\nThe failing case (save it as a .json file and run r3fuzz replay on it):\n" +
         case_to_json_text(documented);
}

}  // namespace

Result<Profile> profile_from_env(const GetEnv& getenv) {
  const char* name = getenv("R3FUZZ_PROFILE");
  if (name == nullptr || *name == '\0') return kDefaultProfile;
  auto parsed = parse_profile(name);
  if (!parsed) return Error{"R3FUZZ_PROFILE: " + parsed.error().message};
  return *parsed;
}

Result<DifferentialConfig> differential_config_from_env(const GetEnv& getenv) {
  DifferentialConfig config;
  R3_TRY(config.profile, profile_from_env(getenv));
  if (const char* impls = getenv("R3FUZZ_IMPLS")) config.impls = split_names(impls);
  if (const char* fault = getenv("R3FUZZ_FAULT")) config.fault = fault;
  if (const char* strict = getenv("R3FUZZ_STRICT")) {
    const std::string value = strict;
    if (value == "1") config.strict = true;
    else if (value != "0" && !value.empty()) return Error{"R3FUZZ_STRICT: \"" + value + "\" is not 0 or 1"};
  }
  if (const char* known = getenv("R3FUZZ_KNOWN")) config.known_dir = known;
  if (const char* overrides = getenv("R3FUZZ_METADATA_OVERRIDES")) {
    const std::string value = overrides;
    if (value == "1") config.metadata_overrides = true;
    else if (value != "0" && !value.empty()) return Error{"R3FUZZ_METADATA_OVERRIDES: \"" + value + "\" is not 0 or 1"};
  }
  return config;
}

Result<DifferentialRunner> DifferentialRunner::create(const DifferentialConfig& config) {
  DifferentialRunner runner;
  runner.config_ = config;
  R3_TRY(runner.impls_, make_impls(config));
  runner.judgements_.resize(runner.impls_.size());
  if (!config.known_dir.empty()) {
    ShrinkOptions shrink;
    shrink.profile = config.profile;
    shrink.max_judgements = 5000;  // cases of the fuzz targets' limits shrink in far fewer
    runner.known_findings_ =
        std::make_unique<FindingGrouper>(Mode::mixed, config.profile, campaign_canonical_hook(Mode::mixed, shrink));
    R3_TRY(runner.known_, known_signatures(config.known_dir, *runner.known_findings_));
  }
  return runner;
}

bool DifferentialRunner::joins_known_finding(const Implementation& impl, const Judgement& j, const Case& c) const {
  const Signature signature = signature_of(j, c);
  if (!known_findings_ || not_known_.count(signature)) return false;
  // A throwaway copy: a failure that starts a finding of its own must not make later ones known.
  FindingGrouper probe = *known_findings_;
  const FindingGrouper::Placement placed = probe.place(++placed_, impl, j, c);
  if (placed.created || !probe.findings()[placed.finding].known) {
    not_known_.insert(signature);  // decided once per signature, as a known one is
    return false;
  }
  *known_findings_ = std::move(probe);
  known_.insert(signature);
  return true;
}

DifferentialVerdict DifferentialRunner::run(const Case& c) const {
  DifferentialVerdict verdict;
  if (!in_profile(c, config_.profile) || (c.metadata && !config_.metadata_overrides)) {
    verdict.skipped = true;
    return verdict;
  }
  const Status derived = derive_step_into(step_, c);
  R3_CHECK(derived.ok(), "the fuzz targets only run valid cases");
  std::vector<Failure> findings;
  for (size_t i = 0; i < impls_.size(); ++i) {
    const Implementation& impl = *impls_[i];
    Judgement& j = judgements_[i];
    if (!judge_into(j, impl, c, step_) || !j.failed()) continue;
    const Signature signature = signature_of(j, c);
    if (known_.count(signature) || joins_known_finding(impl, j, c)) {
      verdict.known_hits.push_back(signature);
      continue;
    }
    if (j.severity == Severity::latent && !config_.strict) continue;
    Failure f;
    f.signature = signature;
    f.severity = j.severity;
    f.detail = j.detail;
    f.c = c;
    f.judged_as = *judge_mode(impl, c);
    findings.push_back(std::move(f));
  }
  if (findings.empty()) return verdict;
  std::vector<std::string> names;
  for (const auto& impl : impls_) names.push_back(impl->name());
  verdict.abort = true;
  verdict.report = report_for(c, names, std::move(findings), config_.strict);
  return verdict;
}

}  // namespace r3
