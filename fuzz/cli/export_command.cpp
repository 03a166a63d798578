// r3fuzz export CASE.json --pytest [--engine MODULE:CLASS] [--out FILE]: a case as a test an
// engine team runs on its own code (fuzz/export/). A trace file (TRACE.json) exports the same
// way, as a test that drives the engine's lifecycle classes through the trace's steps.
#include <iostream>
#include <memory>

#include "fuzz/campaign/report.hpp"
#include "fuzz/campaign/shell_quote.hpp"
#include "fuzz/cli/commands.hpp"
#include "fuzz/cli/replay_trace.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "fuzz/cli/shown_paths.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/codec/trace_json.hpp"
#include "fuzz/export/pytest_writer.hpp"
#include "fuzz/export/trace_pytest_writer.hpp"
#include "fuzz/io/terminal_text.hpp"

namespace r3 {
namespace {

struct ExportFlags {
  std::string case_path;
  bool pytest = false;
  std::string engine;
  std::string out;
};

// A trace file (format r3fuzz-trace/1) or a case file, by its format.
Result<std::string> module_text(const ExportFlags& f, const std::string& command) {
  if (is_trace_file(f.case_path)) {
    R3_TRY(const Trace t, read_trace_file(f.case_path));
    return trace_pytest_module(t, {f.case_path, f.engine, command});
  }
  R3_TRY(const Case c, read_case_file(f.case_path));
  return pytest_module(c, {f.case_path, f.engine, command});
}

// `program`: how the EXPORT_COMMAND the module shows names r3fuzz (CommandOutcome::program).
Status export_command(const ExportFlags& f, const std::string& program) {
  if (!f.pytest) return Error{"choose what to export: --pytest (the only format so far)"};
  std::string command = export_command_text(program, f.case_path);
  if (!f.engine.empty()) command += " --engine " + shell_quote(f.engine);
  R3_TRY(const std::string module, module_text(f, command));
  if (f.out.empty()) {
    std::cout << module;
    return ok_status();
  }
  R3_TRY_STATUS(write_flag_file("--out", f.out, module));
  std::cout << "wrote " << terminal_safe(f.out) << "; run it: pytest " << terminal_safe(shell_quote(f.out)) << "\n";
  return ok_status();
}

}  // namespace

void add_export_command(CLI::App& app, CommandOutcome& outcome) {
  auto f = std::make_shared<ExportFlags>();
  CLI::App* cmd = app.add_subcommand(
      "export", "write a case as a test an engine team runs on its own capture code (--pytest: a pytest module "
                "needing only torch and pytest)");
  cmd->add_option("case", f->case_path,
                  "the case file (JSON, format r3fuzz-case/1) or trace file (r3fuzz-trace/1: a test that drives the "
                  "engine's lifecycle classes through the trace's steps)")
      ->required();
  cmd->add_flag("--pytest", f->pytest, "a self-contained pytest module that runs every capture call of the step on "
                                       "the engine's capturer and asserts the rows the reference expects");
  cmd->add_option("--engine", f->engine,
                  "MODULE:CLASS of the capturer the test runs by default (default: the case engine's real one, "
                  "for vLLM vllm.model_executor.layers.fused_moe.routed_experts_capturer:RoutedExpertsCapturer, for "
                  "SGLang sglang.srt.state_capturer.routed_experts:RoutedExpertsCapturer; for a trace, the engine's "
                  "lifecycle class, for TensorRT-LLM tensorrt_llm._torch.route_capture:RouteCapture); "
                  "R3FUZZ_ENGINE overrides it when the test runs");
  cmd->add_option("--out", f->out, "the file to write (default: standard output)");
  cmd->callback([f, &outcome] {
    if (Status s = export_command(*f, outcome.program); !s) outcome.fail("export", with_shown_paths(s.error(), {f->case_path, f->out}));
  });
}

}  // namespace r3
