// r3fuzz: the command-line tool. Registers the subcommands, runs the chosen one and turns its
// outcome into the exit code: 0 ok, 1 failures found, 2 usage or input error.
#include <exception>
#include <iostream>

#include <CLI/CLI.hpp>

#include "fuzz/cli/commands.hpp"
#include "fuzz/io/terminal_text.hpp"

int main(int argc, char** argv) {
  CLI::App app{"r3fuzz: property-based fuzzing and differential testing of MoE routing capture (R3) "
               "under DP/TP/EP/SP"};
  app.require_subcommand(1);
  r3::CommandOutcome outcome;
  // One line per command (see fuzz/cli/commands.hpp).
  r3::add_explain_command(app, outcome);
  r3::add_seed_command(app, outcome);
  r3::add_exhaust_command(app, outcome);
  r3::add_mutants_command(app, outcome);
  r3::add_run_command(app, outcome);
  r3::add_replay_command(app, outcome);
  r3::add_shrink_command(app, outcome);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    std::cerr << "r3fuzz: internal error: " << e.what() << "\n";
    return 2;
  }
  if (outcome.error) {
    // Messages quote files (names, notes, implementation names): no raw control characters.
    std::cerr << "r3fuzz " << outcome.command << ": " << r3::terminal_safe(outcome.error->message, true) << "\n";
    return 2;
  }
  return outcome.exit_code;
}
