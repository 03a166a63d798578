#include "fuzz/cli/run_traces.hpp"

#include <iostream>
#include <set>

#include "fuzz/campaign/trace_report.hpp"
#include "fuzz/cli/output_dir.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "fuzz/cli/stop_signals.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/shrink/trace_shrink.hpp"

namespace r3 {

inline constexpr int64_t kDefaultTraces = 2000;
inline constexpr int kShrinkAttemptsPerFinding = 2000;

int run_traces(const RunTracesFlags& f, CommandOutcome& outcome) {
  auto usage_error = [&](std::string message) {
    outcome.fail("run", Error{std::move(message)});
    return 2;
  };
  if (!f.case_only_flags.empty())
    return usage_error("--traces: " + f.case_only_flags.front() +
                       " applies to case campaigns only (a trace's layouts come from its steps)");
  const StopOnSignals stop;
  TraceCampaignOptions o;
  o.seed = f.seed;
  if (f.seconds > 0) o.max_seconds = f.seconds;
  if (f.traces > 0 || f.seconds <= 0) o.max_traces = f.traces > 0 ? f.traces : kDefaultTraces;
  o.profile = f.profile;
  o.out_dir = f.out;
  o.jobs = f.jobs;
  o.program = outcome.program;
  if (Status s = check_output_dir("--out", f.out); !s.ok()) return usage_error(s.error().message);
  if (!f.junit.empty())
    if (Status s = check_output_file("--junit", f.junit); !s.ok()) return usage_error(s.error().message);
  std::set<std::string> named;
  for (const std::string& name : f.impls)
    if (!named.insert(name).second) return usage_error("--impl " + name + ": given twice");
  const std::vector<std::string> names = f.impls.empty() ? default_trace_implementations(f.profile) : f.impls;
  if (names.empty())
    return usage_error("--traces: no engine of profile " + std::string(to_string(f.profile)) + " has a lifecycle model");
  std::vector<TraceImplementation> impls;
  for (const std::string& name : names) {
    Result<TraceImplementation> impl = make_trace_implementation(name);
    if (!impl) return usage_error("--impl " + name + ": " + impl.error().message);
    if (!covers(f.profile, impl->engine))
      return usage_error("--impl " + name + ": judges no trace of profile " + std::string(to_string(f.profile)) +
                         ", which is " + std::string(to_string(engine_of(f.profile))) + "'s");
    impls.push_back(std::move(impl).value());
  }
  TraceShrinkHook shrink;
  if (!f.no_shrink)
    shrink = [](const Trace& t, Profile profile, const std::function<bool(const Trace&)>& still_fails) {
      return shrink_trace(t, profile, still_fails, kShrinkAttemptsPerFinding).trace;
    };
  Result<TraceCampaignReport> report = run_trace_campaign(o, impls, shrink, stop.flag());
  if (!report) return usage_error(report.error().message);
  if (report->threads_refused) {
    std::cerr << "r3fuzz run: --jobs " << f.jobs << ": the system started fewer worker threads ("
              << terminal_safe(*report->threads_refused) << "); they judged every trace, with the same report\n";
  }
  if (f.json) {
    std::cout << terminal_json(trace_report_json(*report, f.timing)) << "\n";
  } else {
    std::cout << trace_report_text(*report, f.timing);
  }
  if (!f.junit.empty())
    if (Status s = write_flag_file("--junit", f.junit, junit_xml(junit_of_trace_run(*report))); !s.ok())
      return usage_error(s.error().message);
  return report->exit_code();
}

}  // namespace r3
