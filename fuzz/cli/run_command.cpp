// r3fuzz run: a differential campaign from the command line (fuzz/campaign does the work).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include "fuzz/campaign/campaign.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/campaign/report.hpp"
#include "fuzz/cli/commands.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "fuzz/cli/number_flags.hpp"
#include "fuzz/cli/output_dir.hpp"
#include "fuzz/cli/run_traces.hpp"
#include "fuzz/cli/stop_signals.hpp"
#include "fuzz/campaign/junit.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/shrink/campaign_hook.hpp"

namespace r3 {
namespace {

struct RunFlags {
  std::vector<std::string> impls;
  uint64_t seed = 1;
  double seconds = 0;
  int64_t cases = 0;
  Mode mode = Mode::mixed;
  std::string out = "r3fuzz-out";
  std::vector<std::string> sizes;
  bool json = false;
  std::string junit;  // --junit FILE ("" = none)
  bool strict = false;
  bool timing = false;
  bool no_shrink = false;  // report failures as found, unshrunk
  bool metadata = false;
  bool wide_experts = false;
  Profile profile = kDefaultProfile;
  int64_t jobs = std::max(1u, std::thread::hardware_concurrency());
  std::string backend;
  std::string selection;
  std::string fault;
  double adapter_timeout = 5;  // external:COMMAND, seconds per reply
  double adapter_startup_timeout = 30;  // external:COMMAND, seconds for the hello
  std::string adapter_log;     // external:COMMAND stderr ("" = ours)
  bool traces = false;         // judge generated serving traces instead of cases (run_traces.hpp)
};

inline constexpr int64_t kDefaultCases = 10000;
// Shrinking each unique failure is bounded by judgements, which keeps runs deterministic; the
// time bound is only a safety net for slow external implementations.
inline constexpr int64_t kShrinkJudgementsPerFailure = 20000;
inline constexpr double kShrinkSecondsPerFailure = 60;
// The largest --time (30 days), --adapter-timeout and --adapter-startup-timeout (an hour): bounds
// far above any real use that keep a typo such as 1e300 from meaning "forever".
inline constexpr double kMaxRunSeconds = 30 * 24 * 3600;
inline constexpr double kMaxAdapterTimeoutSeconds = 3600;


std::string progress_line(const CampaignProgress& p, const CampaignOptions& o) {
  char buf[200];
  const double rate = p.elapsed_seconds > 0 ? p.cases / p.elapsed_seconds : 0.0;
  const std::string budget = o.max_seconds ? " of " + std::to_string(static_cast<int64_t>(*o.max_seconds)) + " s"
                                           : ", " + std::to_string(*o.max_cases) + " cases budget";
  std::snprintf(buf, sizeof buf, "\rr3fuzz run: %lld cases, %.0f cases/s, %zu unique failures, %.1f s%s\033[K",
                static_cast<long long>(p.cases), rate, p.unique_failures, p.elapsed_seconds, budget.c_str());
  return buf;
}

// The campaign's exit code; usage errors go to `outcome` (main() prints them and exits 2).
int run_command(const RunFlags& f, CommandOutcome& outcome) {
  auto usage_error = [&](std::string message) {
    outcome.fail("run", Error{std::move(message)});
    return 2;
  };
  // From here on SIGINT, SIGTERM and SIGHUP stop the campaign (and cut an adapter's wait
  // short, the hello's included); the summary is printed and the adapters are killed.
  const StopOnSignals stop;
  CampaignOptions o;
  o.seed = f.seed;
  if (f.seconds > 0) o.max_seconds = f.seconds;
  if (f.cases > 0 || f.seconds <= 0) o.max_cases = f.cases > 0 ? f.cases : kDefaultCases;
  if (f.seconds > 0 && f.cases <= 0) o.max_cases.reset();
  o.mode = f.mode;
  o.out_dir = f.out;
  if (Status s = check_output_dir("--out", f.out); !s.ok()) return usage_error(s.error().message);
  if (!f.junit.empty()) {
    if (Status s = check_output_file("--junit", f.junit); !s.ok()) return usage_error(s.error().message);
  }
  o.strict = f.strict;
  o.generator.profile = f.profile;
  // Only profile any draws metadata overrides: no engine's profile has them (the message names
  // the default engine's reason, where the rule comes from).
  if (f.metadata && !f.profile.is_any()) {
    return usage_error("--metadata-overrides: needs --profile any (no vLLM profile has DP metadata that disagrees "
                       "with the step: vllm/forward_context.py, DPMetadata.make)");
  }
  o.generator.metadata_overrides = f.metadata;
  o.generator.wide_experts = f.wide_experts;
  if (!f.sizes.empty()) {
    o.generator.sizes.clear();
    for (const std::string& s : f.sizes) {
      const Result<SizeClass> size = parse_size_class(s);
      if (!size.ok()) return usage_error("--" + size.error().message);
      o.generator.sizes.push_back(*size);
    }
  }
  ImplementationOptions io;
  io.backend = f.backend;
  io.selection = f.selection;
  io.fault = f.fault;
  // At least 1 ms: a tiny positive timeout must not round down to "no time at all".
  io.adapter_timeout = std::chrono::milliseconds(static_cast<int64_t>(std::ceil(f.adapter_timeout * 1000)));
  io.adapter_startup_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(std::ceil(f.adapter_startup_timeout * 1000)));
  io.adapter_log = f.adapter_log;
  io.stop = stop.flag();
  // The same implementation twice would be judged twice and its findings doubled: refused.
  std::set<std::string> named;
  for (const std::string& name : f.impls)
    if (!named.insert(name).second) return usage_error("--impl " + name + ": given twice");
  const std::vector<std::string> names = f.impls.empty() ? default_implementation_names(f.profile) : f.impls;
  // Each worker judges with implementations of its own: an external adapter is one process per worker.
  auto make_impls = [names, io]() -> Result<std::vector<std::unique_ptr<Implementation>>> {
    std::vector<std::unique_ptr<Implementation>> made;
    for (const std::string& name : names) {
      R3_TRY(std::unique_ptr<Implementation> impl, make_implementation(name, io));
      made.push_back(std::move(impl));
    }
    return made;
  };
  Result<std::vector<std::unique_ptr<Implementation>>> impls = make_impls();
  if (!impls.ok()) return usage_error(impls.error().message);
  // An implementation of one engine judges only that engine's cases: one that serves no engine
  // of the profile would judge nothing, and under profile any the cases come only from the
  // engines some implementation serves.
  std::vector<Engine> served;  // each once
  for (const auto& impl : *impls) {
    bool serves_profile = false;
    for (Engine e : all_engines()) {
      if (!covers(f.profile, e) || !impl->serves(e)) continue;
      if (std::find(served.begin(), served.end(), e) == served.end()) served.push_back(e);
      serves_profile = true;
    }
    if (!serves_profile) {
      return usage_error("--impl " + impl->name() + ": judges no case of profile " + std::string(to_string(f.profile)) +
                         ", which is " + std::string(to_string(engine_of(f.profile))) + "'s");
    }
  }
  if (served.size() == 1) o.generator.engine = served.front();
  o.jobs = static_cast<int>(f.jobs);
  o.program = outcome.program;

  CampaignHooks hooks;
  hooks.make_impls = make_impls;
  hooks.stop = stop.flag();
  if (!f.no_shrink) {
    ShrinkOptions shrink;
    shrink.stop = stop.flag();
    shrink.max_judgements = kShrinkJudgementsPerFailure;
    shrink.max_seconds = kShrinkSecondsPerFailure;
    shrink.profile = f.profile;
    hooks.shrink = campaign_shrink_hook(o.mode, shrink);
    hooks.canonical = campaign_canonical_hook(o.mode, shrink);
  }
  const bool tty = isatty(STDERR_FILENO) == 1;
  if (tty) hooks.on_progress = [&](const CampaignProgress& p) { std::cerr << progress_line(p, o) << std::flush; };
  Result<CampaignReport> report = run_campaign(o, *impls, hooks);
  if (tty) std::cerr << "\n";
  if (!report.ok()) return usage_error(report.error().message);
  if (report->threads_refused) {
    std::cerr << "r3fuzz run: --jobs " << f.jobs << ": the system started only " << report->workers
              << " worker thread(s) (" << terminal_safe(*report->threads_refused)
              << "); they judged every case, with the same report\n";
  }
  if (f.json) {
    std::cout << terminal_json(report_json(*report, f.timing)) << "\n";
  } else {
    std::cout << report_text(*report, f.timing);
  }
  if (!f.junit.empty()) {
    if (Status s = write_flag_file("--junit", f.junit, junit_xml(junit_of_run(*report))); !s.ok()) return usage_error(s.error().message);
  }
  return report->exit_code();
}

}  // namespace

void add_run_command(CLI::App& app, CommandOutcome& outcome) {
  auto f = std::make_shared<RunFlags>();
  CLI::App* cmd = app.add_subcommand("run", "run a differential campaign: generated cases, every implementation "
                                            "judged against the reference, failures written to --out");
  add_impl_option(*cmd, f->impls, "under test, repeatable, each at most once (default: " + default_implementations_text() + ")");
  add_seed_option(*cmd, f->seed, "default 1");
  auto* time = cmd->add_option("--time", f->seconds, "stop after SEC seconds (at most 30 days)")
                   ->transform(seconds_up_to(kMaxRunSeconds));
  auto* cases = cmd->add_option("--cases", f->cases, "stop after N cases (default 10000 when --time is absent)")
                    ->transform(signed_in(1));
  time->excludes(cases);
  add_mode_option(*cmd, f->mode, "default mixed");
  add_out_option(*cmd, f->out,
                 "failing cases: one file per finding (finding-N-VERDICT.json) and one per unique signature "
                 "(default r3fuzz-out)");
  add_repeatable_option(*cmd, "--size", f->sizes,
                        "a size class to generate, repeatable: tiny, small, production (default all)");
  add_profile_option(*cmd, f->profile, "default " + std::string(kDefaultProfile.name()));
  cmd->add_option("--jobs", f->jobs,
                  "worker threads judging cases (default: every core, " + std::to_string(f->jobs) +
                      " here); the report of --cases N is the same for every count")
      ->transform(signed_in(1, 1024));
  add_json_option(*cmd, f->json, "the campaign's summary");
  add_junit_option(*cmd, f->junit, "one test case per finding, failing with its detail and its replay and export commands");
  cmd->add_flag("--strict", f->strict, "latent findings (unpublished TP ranks only) fail the run too");
  cmd->add_flag("--no-shrink", f->no_shrink,
                "write each unique failure as found, without shrinking it first (fuzz/shrink; default: shrink)");
  cmd->add_flag("--timing", f->timing, "add wall-clock figures (not reproducible) to the summary");
  cmd->add_flag("--metadata-overrides", f->metadata,
                "also generate inconsistent DP metadata (corner case 8; needs --profile any; vllm-50874 misses "
                "some by design)");
  cmd->add_flag("--wide-experts", f->wide_experts, "also generate expert counts above 32768 (int16 replay storage)");
  cmd->add_option("--backend", f->backend, "backend of the gpu implementation");
  cmd->add_option("--selection", f->selection,
                  "how the gpu implementation selects rows: host-decision (default) or device-offsets");
  add_fault_option(*cmd, f->fault, "injected into every --impl that names none (as IMPL+FAULT would)");
  cmd->add_option("--adapter-timeout", f->adapter_timeout,
                  "external:COMMAND: seconds one reply may take before the case is an adapter_error (default 5, "
                  "at most 3600)")
      ->transform(seconds_up_to(kMaxAdapterTimeoutSeconds));
  cmd->add_option("--adapter-startup-timeout", f->adapter_startup_timeout,
                  "external:COMMAND: seconds the adapter may take to answer the hello, its imports included, "
                  "before the run is a usage error (default 30, at most 3600)")
      ->transform(seconds_up_to(kMaxAdapterTimeoutSeconds));
  cmd->add_option("--adapter-log", f->adapter_log, "external:COMMAND: append the adapter's stderr to FILE");
  cmd->add_flag("--traces", f->traces,
                "judge generated serving traces instead of one-step cases: the routes each finished request returns, "
                "with the profile's lifecycle models (docs/TRACES.md); --cases N counts traces");
  cmd->callback([f, cmd, &outcome] {
    if (f->traces) {
      RunTracesFlags t{f->impls, f->seed, f->seconds, f->cases, f->out, f->json, f->junit, f->timing, f->no_shrink,
                       f->profile, static_cast<int>(f->jobs), {}};
      for (const char* flag : {"--mode", "--size", "--strict", "--metadata-overrides", "--wide-experts", "--backend",
                               "--selection", "--fault", "--adapter-timeout", "--adapter-startup-timeout", "--adapter-log"})
        if (cmd->count(flag) > 0) t.case_only_flags.emplace_back(flag);
      const int code = run_traces(t, outcome);
      if (!outcome.error) outcome.exit_code = code;
      return;
    }
    const int code = run_command(*f, outcome);
    if (!outcome.error) outcome.exit_code = code;
  });
}

}  // namespace r3
