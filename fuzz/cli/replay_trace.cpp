#include "fuzz/cli/replay_trace.hpp"

#include <nlohmann/json.hpp>

#include "fuzz/campaign/report.hpp"
#include "fuzz/campaign/trace_report.hpp"
#include "fuzz/codec/trace_json.hpp"
#include "fuzz/io/input_file.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/oracle/judge_trace.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3 {

bool is_trace_file(const std::string& path) {
  const Result<std::string> text = read_input_file(path);
  if (!text) return false;
  const nlohmann::json doc = nlohmann::json::parse(*text, nullptr, false);
  return !doc.is_discarded() && looks_like_trace(doc);
}

namespace {

// "profile NAME (named in the trace): OUTSIDE it: WHY", or nullopt when the trace names no
// profile, is invalid (its judgement says why), or lies inside the one it names.
std::optional<std::string> outside_named_profile(const Trace& t) {
  const LifecycleModel* model = lifecycle_of(t.engine);
  if (!t.profile || model == nullptr) return std::nullopt;
  const Result<Timeline> timeline = validate_trace(t);
  if (!timeline) return std::nullopt;
  const Status inside = model->check_profile(t, *timeline, *t.profile);
  if (inside.ok()) return std::nullopt;
  return "profile " + std::string(to_string(*t.profile)) + " (named in the trace): OUTSIDE it: " + inside.error().message;
}

}  // namespace

TraceReplay replay_trace_file(const std::string& file, const std::vector<std::string>& impls,
                              const std::string& program, std::ostream& out) {
  TraceReplay result;
  const Result<Trace> t = read_trace_file(file);
  if (!t) {
    result.bad = t.error().message;
    return result;
  }
  std::vector<std::string> names = impls;
  if (names.empty()) {
    if (t->expect) {
      names = {t->expect->impl};
    } else {
      for (const std::string& name : default_trace_implementations(Profile::of(t->engine, 0)))
        names.push_back(name);
    }
  }
  const std::string shown = terminal_safe(file);
  // Judged all the same, as a case is: a trace outside the profile it names is still a valid
  // trace, but its verdicts are no reachable bug, and the output says so.
  if (std::optional<std::string> outside = outside_named_profile(*t))
    out << shown << ": " << terminal_safe(*outside) << "\n";
  for (const std::string& name : names) {
    const Result<TraceImplementation> impl = make_trace_implementation(name);
    const Result<TraceJudgement> j = impl ? judge_trace_file(*impl, *t) : Result<TraceJudgement>(impl.error());
    if (!j) {
      result.bad = file + ": " + name + ": " + j.error().message;
      return result;
    }
    const std::string got(to_string(j->verdict));
    const bool expected_here = t->expect && t->expect->impl == name;
    const bool failed = j->verdict != TraceVerdict::pass;
    const int before = result.unexpected;
    out << shown << ": " << terminal_safe(name) << ": " << got << " (trace)";
    if (expected_here) {
      ++result.checked;
      if (t->expect->verdict == got) {
        out << ": as expected";
      } else {
        ++result.unexpected;
        out << ": UNEXPECTED, the file expects " << terminal_safe(t->expect->verdict);
      }
    } else if (failed) {
      ++result.unexpected;
      out << (t->expect ? ": FAILS, and the file's \"expect\" is for " + terminal_safe(t->expect->impl)
                        : std::string(": FAILS, and the file has no \"expect\""));
    }
    out << "\n";
    if (failed) {
      out << "  " << terminal_safe(j->detail) << "\n";
      out << "  replay: " << terminal_safe(replay_command(program, file)) << "\n";
      out << "  export: " << terminal_safe(trace_export_text(program, file, *t)) << "\n";
    }
    JunitCase tc{"r3fuzz.replay." + name, file, std::nullopt, std::nullopt,
                 name + ": " + got + (failed ? "\n" + j->detail : "") + "\nreplay: " + replay_command(program, file) + "\n"};
    if (result.unexpected > before)
      tc.failure = expected_here ? got + ", the file expects " + t->expect->verdict : got + ": " + j->detail;
    result.cases.push_back(std::move(tc));
  }
  return result;
}

}  // namespace r3
