// r3fuzz shrink: one failing case (JSON, or libFuzzer crash bytes) reduced to the smallest
// case with the same bug signature, written out with a regression entry and a ready-to-paste
// GoogleTest TEST. Exit 0 when it shrank a failing case or the case does not fail (nothing
// to shrink: nothing failed), 2 for bad input.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <stop_token>
#include <thread>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "fuzz/campaign/campaign.hpp"
#include "fuzz/campaign/report.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/cli/commands.hpp"
#include "fuzz/cli/replay_trace.hpp"
#include "fuzz/cli/trace_commands.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "fuzz/cli/number_flags.hpp"
#include "fuzz/cli/output_dir.hpp"
#include "fuzz/cli/shown_paths.hpp"
#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/input_file.hpp"
#include "fuzz/io/new_file.hpp"
#include "fuzz/io/output_path.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "reference/case_measure.hpp"
#include "fuzz/shrink/implementation_judge.hpp"
#include "fuzz/shrink/regression_artifacts.hpp"
#include "fuzz/shrink/shrink.hpp"

namespace r3 {
namespace {

namespace fs = std::filesystem;

// A day: far above any real shrink, and a bound that keeps a typo from meaning "forever".
inline constexpr double kMaxShrinkSeconds = 24 * 3600;

struct ShrinkFlags {
  std::string input;       // CASE.json
  std::string from_bytes;  // or a libFuzzer crash file
  std::string impl;
  std::string fault;
  std::string backend;
  Mode mode = Mode::mixed;
  std::string out;
  double max_seconds = 60;
  int64_t max_judgements = 100000;
  bool allow_path_change = false;
  std::optional<Profile> profile;  // --profile; else the case's own (profile_of)
  bool allow_external_from_files = false;
};

Result<Case> load_case(const ShrinkFlags& f) {
  if (f.input.empty() == f.from_bytes.empty()) return Error{"give exactly one of CASE.json and --from-bytes FILE"};
  if (!f.input.empty()) return read_case_file(f.input);
  R3_TRY(std::string bytes, read_input_file(f.from_bytes));
  Result<Case> c = case_from_fuzz_input({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()});
  if (!c.ok()) return Error{f.from_bytes + ": " + c.error().message};
  return c;
}

// An implementation error about a name taken from the case's "expect.impl": the file is to
// blame, not --impl ("--impl bogus: ..." reads "CASE.json: expect.impl bogus: ...").
Error blame_the_file(const Error& e, const ShrinkFlags& f) {
  const std::string source = f.input.empty() ? f.from_bytes : f.input;
  constexpr std::string_view kFlag = "--impl ";
  if (!e.message.starts_with(kFlag)) return e;
  return Error{source + ": expect.impl " + e.message.substr(kFlag.size())};
}

// --impl (IMPL or IMPL+FAULT) and --fault, or the case's own "expect" (a regression entry
// names IMPL+FAULT).
Result<ImplementationSpec> implementation_spec(const ShrinkFlags& f, const Case& c) {
  std::string text = f.impl;
  if (text.empty()) {
    if (!c.expect || c.expect->impl.empty()) {
      return Error{"--impl: not given, and the case has no \"expect\" naming an implementation to take it from"};
    }
    // Files are data, never commands (docs/SECURITY.md).
    if (names_external_command(c.expect->impl) && !f.allow_external_from_files) {
      return Error{terminal_safe(external_from_file_refusal(c.expect->impl))};
    }
    text = c.expect->impl;
  }
  Result<ImplementationName> parsed = parse_implementation_name(text);
  if (!parsed.ok()) return f.impl.empty() ? blame_the_file(parsed.error(), f) : parsed.error();
  ImplementationName name = std::move(parsed).value();
  R3_TRY(name, with_fault_flag(std::move(name), f.fault));
  const std::string fault = name.fault == Fault::none ? "" : std::string(to_string(name.fault));
  return ImplementationSpec{name.base, fault, f.backend};
}

Result<std::unique_ptr<Implementation>> build(const ImplementationSpec& spec, const std::atomic<bool>* time_up) {
  ImplementationOptions options;
  options.backend = spec.backend;
  options.fault = spec.fault;
  options.stop = time_up;  // an external adapter's wait ends within 50 ms of it
  return make_implementation(spec.name, options);
}

// Sets `time_up` once `seconds` have passed (or never, when destroyed first). The shrinker checks
// its clock only between judgements; a slow adapter's reply must not carry it far past
// --max-seconds, so the adapter's waits are cut at the deadline too.
class Deadline {
 public:
  explicit Deadline(double seconds)
      : thread_([this, seconds](std::stop_token stop) {
          std::unique_lock lock(mutex_);
          const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
          wake_.wait_until(lock, stop, until, [] { return false; });  // ends at `until` or when stopped
          if (!stop.stop_requested()) time_up_ = true;
        }) {}
  const std::atomic<bool>* flag() const { return &time_up_; }
  bool passed() const { return time_up_.load(); }

 private:
  std::atomic<bool> time_up_{false};
  std::mutex mutex_;
  std::condition_variable_any wake_;
  std::jthread thread_;  // last: joined (and stopped) before the members it uses go
};

int shrink_command(const ShrinkFlags& f, CommandOutcome& outcome) {
  if (!f.input.empty() && is_trace_file(f.input))  // a serving trace: fuzz/cli/trace_commands.hpp
    return shrink_trace_command(f.input, f.impl, f.out, static_cast<int>(std::min<int64_t>(f.max_judgements, 100000)),
                                outcome);
  // Paths from the command line (and the folder named after the input) are shown escaped.
  const std::string input_dir = fs::path(f.input.empty() ? f.from_bytes : f.input).parent_path().string();
  auto input_error = [&](const Error& e) {
    outcome.fail("shrink", with_shown_paths(e, {f.input, f.from_bytes, f.out, input_dir}));
    return 2;
  };
  if (!f.out.empty()) {
    if (Status s = check_output_dir("--out", f.out); !s.ok()) return input_error(s.error());
  }
  Result<Case> input = load_case(f);
  if (!input.ok()) return input_error(input.error());
  Result<ImplementationSpec> spec = implementation_spec(f, *input);
  if (!spec.ok()) return input_error(spec.error());
  const Deadline deadline(f.max_seconds);
  Result<std::unique_ptr<Implementation>> impl = build(*spec, deadline.flag());
  if (!impl.ok()) return input_error(f.impl.empty() ? blame_the_file(impl.error(), f) : impl.error());
  Result<JudgeMode> how = judge_mode_for(**impl, *input, f.mode);
  if (!how.ok()) return input_error(how.error());

  ShrinkOptions options;
  options.max_seconds = f.max_seconds;
  options.max_judgements = f.max_judgements;
  options.allow_path_change = f.allow_path_change;
  options.profile = f.profile.value_or(profile_of(*input));
  options.progress = [](const std::string& line) { std::cerr << terminal_safe(line) << "\n"; };
  const std::string source = f.input.empty() ? f.from_bytes : f.input;
  Result<ShrinkResult> shrunk = shrink_case(*input, judge_with(**impl, *how), options);
  if (!shrunk.ok()) return input_error(Error{source + ": " + shrunk.error().message});
  const std::string impl_name = (*impl)->name();
  if (deadline.passed() && shrunk->stats.judged == 0 && shrunk->judgement.verdict == Verdict::adapter_error) {
    return input_error(Error{source + ": --max-seconds " + std::to_string(f.max_seconds) +
                             " ran out before the case was judged once (a slow adapter)"});
  }
  if (shrunk->stop == ShrinkStop::not_failing) {
    std::cout << terminal_safe(source) << " passes on " << terminal_safe(impl_name) << " (judged " << to_string(*how)
              << "): nothing to shrink\n";
    return 0;
  }

  const Judgement& j = shrunk->judgement;
  const std::string note = "minimized by r3fuzz shrink from " + fs::path(source).filename().string() + " (" +
                           impl_name + ", judged " + std::string(to_string(*how)) + "): " + j.detail;
  Case minimal = shrunk->minimal;
  minimal.note = note;
  minimal.profile = options.profile;
  Case entry = regression_entry(shrunk->minimal, j, *spec, note);
  entry.profile = options.profile;
  const std::string test = regression_test_text(entry, j, *spec, *how);

  const fs::path dir = !f.out.empty() ? fs::path(f.out) : fs::path(source).parent_path();
  std::error_code ec;
  if (!dir.empty()) fs::create_directories(dir, ec);
  if (ec) return input_error(Error{"--out " + dir.string() + ": " + ec.message()});
  // Every output lands inside `dir`, under a name that fits (docs/SECURITY.md).
  const std::string stem = file_name_from_text(fs::path(source).stem().string(), "");
  const Result<fs::path> case_file = output_path_inside(dir, stem + ".min.json");
  const Result<fs::path> entry_file = output_path_inside(dir, finding_file_name(shrunk->signature));
  const Result<fs::path> test_file = output_path_inside(dir, stem + ".min_test.cpp");
  for (const Result<fs::path>* p : {&case_file, &entry_file, &test_file})
    if (!p->ok()) return input_error(p->error());
  for (Status s : {write_case_file(case_file->string(), minimal), write_case_file(entry_file->string(), entry),
                   write_new_file(test_file->string(), test)}) {
    if (!s.ok()) return input_error(s.error());
  }

  // The signature and detail hold an adapter's branch and error texts: escaped like every printer's data.
  std::cout << "shrunk " << terminal_safe(source) << " (" << terminal_safe(shrunk->signature.text()) << ", "
            << to_string(j.severity) << ", stopped at " << to_string(shrunk->stop) << ")\n"
            << "  from: " << summarize(*input) << "\n"
            << "  to:   " << summarize(shrunk->minimal) << "\n"
            << "  " << terminal_safe(j.detail) << "\n"
            << "wrote " << terminal_safe(case_file->string()) << ", " << terminal_safe(entry_file->string()) << ", "
            << terminal_safe(test_file->string()) << "\n"
            << "  replay: " << terminal_safe(replay_command(outcome.program, entry_file->string())) << "\n"
            << "  export: " << terminal_safe(export_command_text(outcome.program, entry_file->string())) << "\n\n"
            << terminal_safe(test, true);
  return 0;
}

}  // namespace

void add_shrink_command(CLI::App& app, CommandOutcome& outcome) {
  auto f = std::make_shared<ShrinkFlags>();
  CLI::App* cmd = app.add_subcommand(
      "shrink", "reduce a failing case to the smallest case with the same bug signature; write it, a "
                "corpus/regression entry and a GoogleTest regression TEST");
  cmd->add_option("case", f->input, "the failing case (r3fuzz-case/1 JSON)");
  cmd->add_option("--from-bytes", f->from_bytes, "a libFuzzer crash file (binary case format) instead of JSON");
  add_impl_option(*cmd, f->impl, "the one the case fails on (default: the case's expect.impl)");
  add_fault_option(*cmd, f->fault, "injected into --impl when it names none (as IMPL+FAULT would)");
  cmd->add_option("--backend", f->backend, "backend of the gpu implementation");
  add_mode_option(*cmd, f->mode, "the input's mode, then every candidate's (default mixed)");
  add_out_option(*cmd, f->out,
                 "the minimized case, the regression entry and the test (default: the input's directory)");
  cmd->add_option("--max-seconds", f->max_seconds, "stop shrinking after SEC seconds (default 60, at most 86400)")
      ->transform(seconds_up_to(kMaxShrinkSeconds));
  cmd->add_option("--max-judgements", f->max_judgements, "stop after judging N candidates (default 100000)")
      ->transform(signed_in(1));
  add_profile_option(*cmd, f->profile,
                     "every candidate stays inside it (default: the case's \"profile\", else the narrowest one it "
                     "lies in)");
  cmd->add_flag("--allow-external-from-files", f->allow_external_from_files,
                "run an external:COMMAND implementation named by the case's expect.impl (by default only the "
                "command line names programs to run)");
  cmd->add_flag("--allow-path-change", f->allow_path_change,
                "let the path move toward single; the bug is then (impl, verdict, severity) without path and branch");
  cmd->callback([f, &outcome] {
    const int code = shrink_command(*f, outcome);
    if (!outcome.error) outcome.exit_code = code;
  });
}

}  // namespace r3
