// The r3fuzz subcommands. Each lives in <name>_command.cpp and registers itself on the
// app with add_<name>_command(); its callback runs the command and records the outcome,
// which main() turns into the exit code. Adding a command: one declaration here, one
// add_<name>_command(app, outcome) line in main.cpp, one source in fuzz/cli/CMakeLists.txt.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "reference/error.hpp"

namespace r3 {

// What the command that ran reports back to main().
struct CommandOutcome {
  // 0: done, nothing wrong; 1: failures found; 2: usage or input error.
  int exit_code = 0;
  // An input or usage error: main() prints "r3fuzz <command>: <message>" to stderr, then each
  // item of `listed` on a line of its own ("  <item>"), and exits 2. main() escapes every line
  // end in the message and in each item (docs/SECURITY.md, "One terminal escape"), so a list is
  // the only way an error spans lines: each line break is main()'s, never one from data.
  std::optional<Error> error;
  std::vector<std::string> listed;
  std::string command;  // the subcommand's name, for that message
  // Not an outcome but the one input every command shares, set by main() before the command runs:
  // the shell word the commands printed for the user to paste start with, program_word(argv[0])
  // (fuzz/campaign/shell_quote.hpp), so they run the r3fuzz that printed them.
  std::string program = "r3fuzz";

  void fail(std::string command_name, Error e, std::vector<std::string> items = {}) {
    command = std::move(command_name);
    error = std::move(e);
    listed = std::move(items);
    exit_code = 2;
  }
};

// r3fuzz explain CASE.json [--json]: the layout of one case and each policy's decision.
void add_explain_command(CLI::App& app, CommandOutcome& outcome);

// r3fuzz seed: deployments and metadata logs -> corpus cases; --to-binary / --to-json conversion.
void add_seed_command(CLI::App& app, CommandOutcome& outcome);

// r3fuzz exhaust [bounds] [--impl A [--against B]] [--fault NAME]: every case within bounds.
void add_exhaust_command(CLI::App& app, CommandOutcome& outcome);

// r3fuzz mutants [--seeds 5] [--max-cases N] [--json]: the fault-kill matrix.
void add_mutants_command(CLI::App& app, CommandOutcome& outcome);

// r3fuzz run [--impl NAME]... [--seed S] [--time SEC | --cases N] [--mode M] [--out DIR] [--json]: a campaign.
void add_run_command(CLI::App& app, CommandOutcome& outcome);

// r3fuzz replay FILE|DIR... [--impl NAME]... [--mode M]: saved cases against their "expect".
void add_replay_command(CLI::App& app, CommandOutcome& outcome);

// r3fuzz export CASE.json --pytest [--engine MODULE:CLASS] [--out FILE]: a case as an engine's pytest.
void add_export_command(CLI::App& app, CommandOutcome& outcome);

// r3fuzz shrink CASE.json|--from-bytes FILE [--impl NAME] [--fault NAME] [--out DIR]: minimize a failure.
void add_shrink_command(CLI::App& app, CommandOutcome& outcome);

}  // namespace r3
