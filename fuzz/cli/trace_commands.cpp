#include "fuzz/cli/trace_commands.hpp"

#include <filesystem>
#include <iostream>

#include "fuzz/campaign/report.hpp"
#include "fuzz/campaign/trace_report.hpp"
#include "fuzz/cli/trace_explain.hpp"
#include "fuzz/cli/trace_explain_json.hpp"
#include "fuzz/codec/trace_json.hpp"
#include "fuzz/io/output_path.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/oracle/judge_trace.hpp"
#include "fuzz/shrink/trace_shrink.hpp"

namespace r3 {
namespace fs = std::filesystem;

Status explain_trace_command(const std::string& path, const std::vector<std::string>& impls, bool json) {
  R3_TRY(const Trace t, read_trace_file(path));
  R3_TRY(const Timeline timeline, validate_trace(t));
  std::vector<std::string> names = impls;
  if (names.empty()) {
    const Profile profile = Profile::of(t.engine, 0);
    names = default_trace_implementations(profile);
    for (const std::string& fixed : fixed_trace_implementations(profile)) names.push_back(fixed);
  }
  std::vector<NamedTraceJudgement> judged;
  for (const std::string& name : names) {
    R3_TRY(const TraceImplementation impl, make_trace_implementation(name));
    if (impl.engine != t.engine)
      return Error{"--impl " + name + ": models " + std::string(to_string(impl.engine)) + ", the trace is " +
                   std::string(to_string(t.engine)) + "'s"};
    TraceJudgement j = judge_trace(impl, t, timeline);
    std::string cause = j.verdict == TraceVerdict::pass ? "" : trace_root_cause(impl, t, timeline);
    judged.push_back({name, std::move(j), std::move(cause)});
  }
  if (json) {
    std::cout << terminal_json(explain_trace_json(path, t, timeline, judged)) << "\n";
    return ok_status();
  }
  std::cout << "trace: " << terminal_safe(path) << "\n";
  std::cout << terminal_safe(explain_trace_text(t, timeline, nullptr), true);
  for (const NamedTraceJudgement& n : judged) {
    std::cout << "\n== " << terminal_safe(n.impl) << ": " << to_string(n.judgement.verdict) << "\n";
    // The timeline was printed above: from each judgement only its routes and verdict.
    const std::string text = explain_trace_text(t, timeline, &n.judgement);
    const size_t routes = text.find("\nroutes:\n");
    std::cout << terminal_safe(routes == std::string::npos ? text : text.substr(routes + 1), true);
    if (!n.root_cause.empty()) std::cout << "root cause: " << n.root_cause << "\n";
  }
  return ok_status();
}

int shrink_trace_command(const std::string& path, const std::string& impl_name, const std::string& out,
                         int max_attempts, CommandOutcome& outcome) {
  auto input_error = [&](std::string message) {
    outcome.fail("shrink", Error{std::move(message)});
    return 2;
  };
  Result<Trace> input = read_trace_file(path);
  if (!input) return input_error(input.error().message);
  const std::string name = !impl_name.empty() ? impl_name : input->expect ? input->expect->impl : "";
  if (name.empty()) return input_error(path + ": name the implementation to shrink for (--impl), the file has no \"expect\"");
  Result<TraceImplementation> impl = make_trace_implementation(name);
  if (!impl) return input_error("--impl " + name + ": " + impl.error().message);
  Result<TraceJudgement> first = judge_trace_file(*impl, *input);
  if (!first) return input_error(path + ": " + first.error().message);
  if (first->verdict == TraceVerdict::pass) {
    std::cout << terminal_safe(path) << " passes on " << terminal_safe(name) << ": nothing to shrink\n";
    return 0;
  }
  const Timeline timeline = validate_trace(*input).value();
  const std::string cause = trace_root_cause(*impl, *input, timeline);
  const TraceVerdict verdict = first->verdict;
  const Profile profile = input->profile.value_or(Profile::of(input->engine, 0));
  const TraceShrinkResult shrunk = shrink_trace(
      *input, profile, [&](const Trace& candidate) { return fails_the_same(*impl, candidate, verdict, cause); },
      max_attempts);
  Trace minimal = shrunk.trace;
  const Timeline minimal_timeline = validate_trace(minimal).value();
  const TraceJudgement j = judge_trace(*impl, minimal, minimal_timeline);
  minimal.expect = TraceExpectation{name, std::string(to_string(j.verdict))};
  minimal.note = "minimized by r3fuzz shrink from " + fs::path(path).filename().string() + " (" + name + "): " + j.detail +
                 (cause.empty() ? "" : " (root cause: " + cause + ")");
  const fs::path dir = !out.empty() ? fs::path(out) : fs::path(path).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) return input_error("--out " + dir.string() + ": " + ec.message());
  const Result<fs::path> file = output_path_inside(dir, file_name_from_text(fs::path(path).stem().string(), "") + ".min.json");
  if (!file) return input_error(file.error().message);
  if (Status s = write_trace_file(file->string(), minimal); !s) return input_error(s.error().message);
  std::cout << "shrunk " << terminal_safe(path) << " (" << to_string(verdict) << " in " << terminal_safe(name)
            << (cause.empty() ? "" : ", root cause " + cause) << "; " << shrunk.accepted << " of " << shrunk.attempts
            << " candidates kept)\n"
            << "  from: " << summarize_trace(*input) << "\n"
            << "  to:   " << summarize_trace(minimal) << "\n"
            << "  " << terminal_safe(j.detail) << "\n"
            << "wrote " << terminal_safe(file->string()) << "\n"
            << "  replay: " << terminal_safe(replay_command(outcome.program, file->string())) << "\n";
  return 0;
}

}  // namespace r3
