// r3fuzz mutants [--seeds 5] [--max-cases N] [--carrier NAME]... [--fault NAME]... [--json]
//                [--markdown FILE] [--no-shrink] [--jobs N]
// The fault-kill matrix (fuzz/mutants/kill_matrix.hpp). Exit 0 when every mutant that is not
// equivalent is killed, 1 when one survives, 2 on bad input.
#include <iostream>
#include <limits>
#include <memory>
#include <thread>

#include "fuzz/cli/commands.hpp"
#include "fuzz/io/new_file.hpp"
#include "fuzz/io/terminal_text.hpp"
#include "fuzz/cli/output_dir.hpp"
#include "fuzz/cli/shared_options.hpp"
#include "fuzz/cli/flag_error.hpp"
#include "fuzz/cli/number_flags.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/mutants/carrier.hpp"
#include "fuzz/mutants/report.hpp"
#include "fuzz/mutants/trace_kill_matrix.hpp"
#include "reference/profile.hpp"

namespace r3 {
namespace {

struct MutantsFlags {
  MutantsOptions options;
  std::vector<std::string> carriers = default_carriers();
  std::vector<std::string> faults;  // empty: all
  bool json = false;
  std::string markdown;
  bool no_shrink = false;
  bool traces = false;  // the lifecycle faults in the fixed lifecycle models (trace_kill_matrix.hpp)
};

Result<std::vector<Fault>> chosen_faults(const std::vector<std::string>& names) {
  std::vector<Fault> out;
  if (names.empty()) return std::vector<Fault>(all_faults().begin(), all_faults().end());
  for (const std::string& name : names) {
    R3_TRY(Fault f, parse_fault(name));
    out.push_back(f);
  }
  return out;
}

// The lifecycle matrix: --max-cases traces per mutant (default 500), the profile's fixed models.
Result<int> trace_mutants_command(const MutantsFlags& f, bool max_cases_given) {
  const int64_t budget = max_cases_given ? f.options.max_cases : 500;
  const std::vector<TraceMutantResult> rows = trace_kill_matrix(f.options.profile, f.options.first_seed + 1, budget);
  if (rows.empty()) return Error{"--traces: no engine of profile " + std::string(to_string(f.options.profile)) + " has a fixed lifecycle model"};
  std::cout << terminal_safe(trace_kill_matrix_text(rows), true);
  // As for the case matrix: a mutant proven equivalent by the bounded search is no survivor.
  return std::any_of(rows.begin(), rows.end(), [](const TraceMutantResult& r) { return !r.killed && !r.equivalent; }) ? 1 : 0;
}

Result<int> mutants_command(MutantsFlags f) {
  if (f.options.seeds < 1 || f.options.seeds > 1000) {
    return Error{"--seeds: " + std::to_string(f.options.seeds) + " is out of range [1, 1000]"};
  }
  if (f.options.max_cases < 1) return Error{"--max-cases: must be at least 1, got " + std::to_string(f.options.max_cases)};
  if (f.options.jobs < 1) return Error{"--jobs: must be at least 1, got " + std::to_string(f.options.jobs)};
  // Seeds first_seed .. first_seed + seeds - 1 must not wrap past 2^64-1 to seed 0.
  if (f.options.first_seed > std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(f.options.seeds - 1)) {
    return Error{"--first-seed: " + std::to_string(f.options.first_seed) + " with --seeds " +
                 std::to_string(f.options.seeds) + " would wrap past " +
                 std::to_string(std::numeric_limits<uint64_t>::max()) + " (the last seed)"};
  }
  f.options.shrink = !f.no_shrink;
  // The matrix's file is checked before the minutes of measuring, not after them.
  if (!f.markdown.empty()) R3_TRY_STATUS(check_output_file("--markdown", f.markdown));
  R3_TRY(std::vector<Fault> faults, chosen_faults(f.faults));
  // A carrier that is no implementation would measure nothing and report a perfect kill rate.
  // Each carrier's engine (carrier_engine) decides which faults it carries.
  std::vector<Engine> engines;
  for (const std::string& carrier : f.carriers) {
    auto made = make_implementation(carrier, {});
    if (!made.ok()) return as_flag_error(made.error(), "--carrier");
    engines.push_back(carrier_engine(**made));
  }
  std::vector<MutantResult> rows;
  for (size_t i = 0; i < f.carriers.size(); ++i) {
    const std::string& carrier = f.carriers[i];
    // A carrier whose engine lies outside --profile has no case to be hunted on.
    if (!covers(f.options.profile, engines[i])) continue;
    for (Fault fault : faults) {
      // A historical carrier is one fault only; asking it for others is not an error.
      if (const auto historical = historical_carrier(carrier); historical && fault != historical->fault) continue;
      // A carrier carries the faults of its engine's capture (reference/fault.hpp).
      if (!fault_applies(fault, engines[i])) continue;
      auto mutant = make_mutant(carrier, fault);
      rows.push_back(mutant.ok() ? measure_mutant(*mutant, f.options)
                                 : unavailable_mutant(carrier, fault, mutant.error().message));
    }
  }
  if (f.json) {
    std::cout << terminal_json(mutants_json(rows, f.options)) << "\n";
  } else {
    std::cout << terminal_safe(mutants_text(rows, f.options), true);
  }
  if (!f.markdown.empty()) {
    // A new file renamed over the name: a full disk is an error and leaves no empty file.
    if (Status s = write_new_file(f.markdown, mutants_markdown(rows, f.options)); !s.ok())
      return Error{"--markdown " + s.error().message};
  }
  const MutantsSummary summary = summarize(rows);
  // Nothing measured is no result: a 0-of-0 kill rate must not pass as success.
  if (rows.empty()) {
    return Error{"--profile " + std::string(to_string(f.options.profile)) +
                 ": no carrier asked for carries a fault of the mutant table under it (docs/MUTANTS.md; an engine "
                 "without carriers may still have lifecycle faults: mutants --traces)"};
  }
  if (summary.measured == 0) return Error{"no mutant could be measured: every carrier and fault asked for is unavailable (listed above)"};
  return summary.survived > 0 ? 1 : 0;
}

}  // namespace

void add_mutants_command(CLI::App& app, CommandOutcome& outcome) {
  auto f = std::make_shared<MutantsFlags>();
  f->options.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  CLI::App* cmd = app.add_subcommand(
      "mutants", "Measure how fast the harness kills each named fault in each implementation that carries it");
  cmd->add_option("--seeds", f->options.seeds, "generator seeds per mutant")
      ->capture_default_str()
      ->transform(signed_in(1, 1000));
  cmd->add_option("--first-seed", f->options.first_seed, "the first seed; the others follow it")
      ->capture_default_str()
      ->transform(unsigned_in(0));
  cmd->add_option("--max-cases", f->options.max_cases, "generated cases per seed before giving up")
      ->capture_default_str()
      ->transform(signed_in(1));
  add_repeatable_option(*cmd, "--carrier", f->carriers,
                        "an implementation to inject faults into, repeatable (default: r3-fixed, "
                        "vllm-pre-50874 (historical replay-per-rank), gpu, sglang-fixed, gpu:sglang-fixed)");
  add_fault_option(*cmd, f->faults, "the ones to measure, repeatable (default: every fault of the table)");
  add_profile_option(*cmd, f->options.profile,
                     "the steps mutants are hunted, shrunk and searched in (default any: the faults are "
                     "hypothetical bugs in any engine)");
  add_json_option(*cmd, f->json, "the matrix");
  cmd->add_option("--markdown", f->markdown, "also write the matrix as a Markdown section to this file");
  cmd->add_flag("--no-shrink", f->no_shrink, "report first detections without shrinking them");
  cmd->add_option("--jobs", f->options.jobs, "threads for the equivalence searches")
      ->capture_default_str()
      ->transform(signed_in(1, 1024));
  cmd->add_flag("--traces", f->traces,
                "the lifecycle faults (shift-one, drop-last, ...) in the profile's fixed lifecycle models, each "
                "judged on generated traces (--max-cases per mutant, default 500)");
  cmd->callback([f, cmd, &outcome] {
    auto code = f->traces ? trace_mutants_command(*f, cmd->count("--max-cases") > 0) : mutants_command(*f);
    if (!code) return outcome.fail("mutants", code.error());
    outcome.exit_code = *code;
  });
}

}  // namespace r3
