// r3fuzz: the command-line tool. Registers the subcommands, runs the chosen one and turns its
// outcome into the exit code: 0 ok, 1 failures found, 2 usage or input error (an output that
// could not be written included), 3 an internal error (a bug in r3fuzz).
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "fuzz/adapter/descendants.hpp"
#include "fuzz/campaign/shell_quote.hpp"
#include "fuzz/cli/commands.hpp"
#include "fuzz/cli/stop_signals.hpp"
#include "fuzz/io/exit_codes.hpp"
#include "fuzz/io/heap_policy.hpp"
#include "fuzz/io/terminal_text.hpp"

namespace {

// "r3fuzz bogus": CLI11 only says "A subcommand is required"; name the word and the commands.
std::optional<std::string> unknown_command(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return std::nullopt;
  std::string known;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->get_name() == argv[1]) return std::nullopt;
    known += (known.empty() ? "" : ", ") + sub->get_name();
  }
  return "r3fuzz: unknown command '" + r3::terminal_safe(argv[1]) + "'; commands: " + known;
}

// What the command printed must reach its destination: a full disk or /dev/full is an error,
// not a silent exit 0. nullopt when stdout is fine.
std::optional<std::string> stdout_write_error() {
  errno = 0;
  std::cout.flush();  // the write that fails sets errno, so it is read before anything else runs
  const int flush_errno = errno;
  const bool failed = std::fflush(stdout) != 0 || std::ferror(stdout) || !std::cout;
  if (!failed) return std::nullopt;
  const int why = flush_errno ? flush_errno : errno;
  return std::string("r3fuzz: cannot write to standard output: ") + (why ? std::strerror(why) : "write error");
}

int run(int argc, char** argv) {
  CLI::App app{"r3fuzz: property-based fuzzing and differential testing of MoE routing capture (R3) "
               "under DP/TP/EP/SP"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "r3fuzz " R3FUZZ_VERSION);
  // CLI11's parse errors quote the arguments, which may be file names a glob expanded: its
  // message goes through the same escape as every other error line; the rest of CLI11's text
  // ("Run with --help ...") is its own. Set before the subcommands, which inherit it.
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    const std::string what = e.what();
    std::string text = CLI::FailureMessage::simple(failed, e);  // what, '\n', then CLI11's hint
    return text.replace(0, what.size(), r3::terminal_safe(what));
  });
  r3::CommandOutcome outcome;
  outcome.program = r3::program_word(argc > 0 ? argv[0] : "");
  // One line per command (see fuzz/cli/commands.hpp).
  r3::add_explain_command(app, outcome);
  r3::add_seed_command(app, outcome);
  r3::add_exhaust_command(app, outcome);
  r3::add_mutants_command(app, outcome);
  r3::add_run_command(app, outcome);
  r3::add_replay_command(app, outcome);
  r3::add_shrink_command(app, outcome);
  r3::add_export_command(app, outcome);
  if (auto unknown = unknown_command(app, argc, argv)) {
    std::cerr << *unknown << "\nRun with --help for more information.\n";
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every other parse error is a usage error.
    return app.exit(e) == 0 ? 0 : 2;
  } catch (const std::exception& e) {
    // Every input error travels as a value; an exception here is a bug in r3fuzz, not in the input.
    std::cerr << "r3fuzz: internal error (a bug in r3fuzz; please report it): " << r3::terminal_safe(e.what()) << "\n";
    return r3::kInternalErrorExit;
  }
  if (outcome.error) {
    // The one exit of every error message (docs/SECURITY.md, "One terminal escape"). Messages
    // quote data in many places (an unknown key, an a2a or profile value, a file name, an
    // adapter's text), and one line end from data there would print a line r3fuzz never wrote
    // ("FAKE LINE: all good"). Rather than trust every place to quote what it adds, everything
    // printed here goes through terminal_safe with no line end kept: the message is one line,
    // and a multi-line error is a list whose line breaks are main()'s own (CommandOutcome).
    std::cerr << "r3fuzz " << outcome.command << ": " << r3::terminal_safe(outcome.error->message) << "\n";
    for (const std::string& item : outcome.listed) std::cerr << "  " << r3::terminal_safe(item) << "\n";
    return 2;
  }
  return outcome.exit_code;
}

}  // namespace

int main(int argc, char** argv) {
  r3::keep_freed_memory_in_heap();  // wide cases' steps reuse their pages (fuzz/io/heap_policy.hpp)
  // Every signal that ends r3fuzz kills the adapters first (fuzz/cli/stop_signals.hpp).
  r3::install_signal_cleanup();
  // A closed stdout pipe (r3fuzz run | head) is a write error main() reports (exit 2), not a
  // SIGPIPE death (rc 141). Adapters get the default disposition back (fuzz/adapter/child_process.cpp).
  std::signal(SIGPIPE, SIG_IGN);
  // Adapter descendants that call setsid() re-parent to r3fuzz, which kills and reaps them when
  // their adapter goes (fuzz/adapter/descendants.hpp). Without it they would only escape.
  r3::become_child_subreaper();
  const int code = run(argc, argv);
  if (auto error = stdout_write_error()) {
    std::cerr << *error << "\n";
    return 2;
  }
  return code;
}
