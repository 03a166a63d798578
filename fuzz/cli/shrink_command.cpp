// r3fuzz shrink: one failing case (JSON, or libFuzzer crash bytes) reduced to the smallest
// case with the same bug signature, written out with a regression entry and a ready-to-paste
// GoogleTest TEST. Exit 0 when it shrank a failing case or the case does not fail (nothing
// to shrink: nothing failed), 2 for bad input.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>

#include "fuzz/campaign/campaign.hpp"
#include "fuzz/campaign/report.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/cli/commands.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "fuzz/cli/number_flags.hpp"
#include "fuzz/cli/output_dir.hpp"
#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/input_file.hpp"
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
  R3_TRY(ImplementationName name, parse_implementation_name(text));
  R3_TRY(name, with_fault_flag(std::move(name), f.fault));
  const std::string fault = name.fault == Fault::none ? "" : std::string(to_string(name.fault));
  return ImplementationSpec{name.base, fault, f.backend};
}

Result<std::unique_ptr<Implementation>> build(const ImplementationSpec& spec) {
  ImplementationOptions options;
  options.backend = spec.backend;
  options.fault = spec.fault;
  return make_implementation(spec.name, options);
}

Status write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path);
  if (!out) return Error{path.string() + ": cannot open for writing: " + std::strerror(errno)};
  out << text;
  out.close();
  if (!out) return Error{path.string() + ": cannot write"};
  return ok_status();
}

int shrink_command(const ShrinkFlags& f, CommandOutcome& outcome) {
  auto input_error = [&](const Error& e) {
    outcome.fail("shrink", e);
    return 2;
  };
  if (!f.out.empty()) {
    if (Status s = check_output_dir("--out", f.out); !s.ok()) return input_error(s.error());
  }
  Result<Case> input = load_case(f);
  if (!input.ok()) return input_error(input.error());
  Result<ImplementationSpec> spec = implementation_spec(f, *input);
  if (!spec.ok()) return input_error(spec.error());
  Result<std::unique_ptr<Implementation>> impl = build(*spec);
  if (!impl.ok()) return input_error(impl.error());
  Result<JudgeMode> how = judge_mode_for(**impl, *input, f.mode);
  if (!how.ok()) return input_error(how.error());

  ShrinkOptions options;
  options.max_seconds = f.max_seconds;
  options.max_judgements = f.max_judgements;
  options.allow_path_change = f.allow_path_change;
  options.profile = f.profile.value_or(profile_of(*input));
  options.progress = [](const std::string& line) { std::cerr << line << "\n"; };
  const std::string source = f.input.empty() ? f.from_bytes : f.input;
  Result<ShrinkResult> shrunk = shrink_case(*input, judge_with(**impl, *how), options);
  if (!shrunk.ok()) return input_error(Error{source + ": " + shrunk.error().message});
  const std::string impl_name = (*impl)->name();
  if (shrunk->stop == ShrinkStop::not_failing) {
    std::cout << source << " passes on " << impl_name << " (judged " << to_string(*how)
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
                   write_text(*test_file, test)}) {
    if (!s.ok()) return input_error(s.error());
  }

  std::cout << "shrunk " << source << " (" << shrunk->signature.text() << ", "
            << to_string(j.severity) << ", stopped at " << to_string(shrunk->stop) << ")\n"
            << "  from: " << summarize(*input) << "\n"
            << "  to:   " << summarize(shrunk->minimal) << "\n"
            << "  " << j.detail << "\n"
            << "wrote " << case_file->string() << ", " << entry_file->string() << ", " << test_file->string() << "\n"
            << "  replay: " << replay_command(entry_file->string()) << "\n"
            << "  export: " << export_command_text(entry_file->string()) << "\n\n"
            << test;
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
