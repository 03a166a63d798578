// r3fuzz explain CASE.json [--json]
#include <iostream>
#include <memory>

#include "fuzz/cli/commands.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "fuzz/cli/explain.hpp"
#include "fuzz/cli/shown_paths.hpp"
#include "fuzz/cli/replay_trace.hpp"
#include "fuzz/cli/trace_commands.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "reference/layout.hpp"
#include "reference/profile.hpp"

namespace r3 {
namespace {

struct ExplainFlags {
  std::string case_path;
  bool json = false;
  std::vector<std::string> impls;  // trace files: the implementations to judge it with
};

// Exit 0 on a valid case whatever the verdicts: explain describes, it does not judge the run.
Status explain_command(const ExplainFlags& f) {
  if (is_trace_file(f.case_path)) return explain_trace_command(f.case_path, f.impls, f.json);
  if (!f.impls.empty()) return Error{"--impl: names the implementations to judge a trace file with; a case's explanation shows every policy"};
  R3_TRY(Case c, read_case_file(f.case_path));
  if (f.json) {
    R3_TRY(const Step step, derive_step(c));
    R3_TRY_STATUS(check_json_size(step));
  }
  R3_TRY(Explanation e, explain_case(c));
  const ProfileStanding standing = standing_of(c);
  if (f.json) {
    R3_TRY_STATUS(check_json_size(e));
    nlohmann::json doc = explanation_json(e);
    doc["profile"] = {{"name", std::string(to_string(standing.profile))},
                      {"named", standing.named},
                      {"inside", !standing.outside},
                      {"outside_because", standing.outside ? nlohmann::json(*standing.outside) : nlohmann::json()}};
    std::cout << terminal_json(doc) << "\n";
  } else {
    std::cout << "case: " << terminal_safe(f.case_path) << "\n" << terminal_safe(standing.text()) << "\n" << explanation_text(e);
  }
  return ok_status();
}

}  // namespace

void add_explain_command(CLI::App& app, CommandOutcome& outcome) {
  auto f = std::make_shared<ExplainFlags>();
  CLI::App* cmd = app.add_subcommand(
      "explain", "Show a case's layout (ranks, SP shards, padding, gathered segments) and each policy's decision");
  cmd->add_option("case", f->case_path, "the case file (JSON, format r3fuzz-case/1) or trace file (r3fuzz-trace/1: its timeline, and each implementation's rows per request)")->required();
  add_impl_option(*cmd, f->impls, "trace files: the implementations to judge it with, repeatable (default: every version of its engine)");
  add_json_option(*cmd, f->json, "the explanation, instead of tables");
  cmd->callback([f, &outcome] {
    if (Status s = explain_command(*f); !s) outcome.fail("explain", with_shown_paths(s.error(), {f->case_path}));
  });
}

}  // namespace r3
