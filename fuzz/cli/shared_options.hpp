// Flags several commands share, each defined once with its help text (style.md 6). The help
// says what the flag's values are, once; a command adds what it does with them (`use`: its
// default, or what the value names there).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "fuzz/oracle/judge_case.hpp"
#include "reference/profile.hpp"

namespace r3 {

// The shared part of each flag's help; the whole help is "<this>; <use>".
inline constexpr std::string_view kImplHelp =
    "an implementation: NAME or NAME+FAULT (a fault of docs/MUTANTS.md injected into it)";
inline constexpr std::string_view kFaultHelp =
    "a fault of the mutant table (docs/MUTANTS.md, reference/fault.hpp), by name";
inline constexpr std::string_view kModeHelp =
    "how cases are judged: concrete (real values, small layouts), symbolic (row ranges, any size; "
    "implementations without a policy run concretely) or mixed (concrete when small enough, else symbolic)";
inline constexpr std::string_view kSeedHelp = "generator seed: the same seed and flags give the same cases";
inline constexpr std::string_view kOutHelp = "directory the command writes its files to";
inline constexpr std::string_view kJsonHelp = "print the result as one JSON document instead of text";
// --profile's, built from the registered engines' profiles (ProfileInfo::summary), any last:
// "which steps ... section 10): vllm (current vLLM main), vllm-legacy (...), sglang (...), ...,
// any (everything the case format allows, for both engines, CUDA-graph sizes above M included)".
std::string profile_help();

// A repeatable option: one value per use (--impl A --impl B), never the words after it, so
// `replay --impl A x.json y.json` replays both files. CLI11 lets a vector option take every
// following word; every command's repeatable option is made here, or passed through
// one_value_per_use().
CLI::Option* add_repeatable_option(CLI::App& cmd, std::string name, std::vector<std::string>& values, std::string help);
CLI::Option* one_value_per_use(CLI::Option* option);

// The default profile's implementations as a command's help names them when it runs them by
// default (default_implementation_names): "vllm-50874 and vllm-pre-50874".
std::string default_implementations_text();

// --impl NAME (once), or --impl NAME (repeatable, one name per use). Known names are listed by the help.
CLI::Option* add_impl_option(CLI::App& cmd, std::string& impl, std::string_view use);
CLI::Option* add_impl_option(CLI::App& cmd, std::vector<std::string>& impls, std::string_view use);

// --fault FAULT (once), or --fault FAULT (repeatable, one per use); checked against the table.
CLI::Option* add_fault_option(CLI::App& cmd, std::string& fault, std::string_view use);
CLI::Option* add_fault_option(CLI::App& cmd, std::vector<std::string>& faults, std::string_view use);

// --mode concrete|symbolic|mixed (fuzz/oracle/judge_case.hpp's rule). Leaves `mode` as it is
// when absent.
CLI::Option* add_mode_option(CLI::App& cmd, Mode& mode, std::string_view use);

// --seed S: an unsigned 64-bit integer, checked as typed (no wrapping, no sign).
CLI::Option* add_seed_option(CLI::App& cmd, uint64_t& seed, std::string_view use);

// --out DIR.
CLI::Option* add_out_option(CLI::App& cmd, std::string& out, std::string_view use);

// --json.
CLI::Option* add_json_option(CLI::App& cmd, bool& json, std::string_view use);

// --junit FILE: a JUnit XML report for CI dashboards (fuzz/campaign/junit.hpp).
inline constexpr std::string_view kJunitHelp =
    "also write a JUnit XML report to FILE (GitHub Actions, GitLab and Buildkite show it)";
CLI::Option* add_junit_option(CLI::App& cmd, std::string& file, std::string_view use);

// Writes `text` as the new file `file`, the value of `flag` (--junit, --out), through
// write_new_file (fuzz/io/new_file.hpp): a FIFO, device, directory or symbolic link at `file`
// is refused, a hard link is replaced, never written through. The error names both:
// "--junit x.xml: refusing to replace a FIFO (...)".
Status write_flag_file(std::string_view flag, const std::string& file, const std::string& text);

// --profile PROFILE, one of all_profiles() (vllm|vllm-legacy|any|sglang|sglang-miles with the
// built-in engines): the engine whose steps the command produces (docs/layout-contract.md
// section 10). Leaves `profile` as it is when absent.
CLI::Option* add_profile_option(CLI::App& cmd, Profile& profile, std::string_view use);
// The same for a command whose default comes from its input (shrink: the case's own profile).
CLI::Option* add_profile_option(CLI::App& cmd, std::optional<Profile>& profile, std::string_view use);

}  // namespace r3
