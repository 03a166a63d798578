#include "fuzz/cli/shared_options.hpp"

#include <functional>
#include <string>

#include "fuzz/cli/number_flags.hpp"
#include "fuzz/implementations/registry.hpp"
#include "fuzz/io/new_file.hpp"
#include "reference/engine_model.hpp"

namespace r3 {
namespace {

std::string help(std::string_view shared, std::string_view use) {
  return std::string(shared) + (use.empty() ? "" : "; " + std::string(use));
}

std::string impl_help(std::string_view use) {
  return help(std::string(kImplHelp) + " (known: " + known_implementation_names() + ")", use);
}

// Every profile's name, by code (the order CLI11 lists them in when one is refused).
std::vector<std::string> profile_name_list() {
  std::vector<std::string> names;
  for (Profile p : all_profiles()) names.emplace_back(p.name());
  return names;
}

CLI::Option* add_profile(CLI::App& cmd, std::function<void(Profile)> set, std::string_view use) {
  return cmd
      .add_option_function<std::string>(
          "--profile",
          [set = std::move(set)](const std::string& name) {
            if (auto parsed = parse_profile(name)) set(*parsed);
          },
          help(profile_help(), use))
      ->check(CLI::IsMember(profile_name_list()));
}

}  // namespace

std::string profile_help() {
  std::string text =
      "which steps the engine can run, and so which cases are produced (docs/layout-contract.md section 10): ";
  for (Engine e : all_engines())
    for (const ProfileInfo& p : e.model().profiles())
      text += std::string(p.name) + " (" + std::string(p.summary) + "), ";
  return text + "any (everything the case format allows, for " +
         (engine_count() == 2 ? "both engines" : "every engine") + ", CUDA-graph sizes above M included)";
}

std::string default_implementations_text() {
  std::string text;
  const std::vector<std::string> names = default_implementation_names(kDefaultProfile);
  for (size_t i = 0; i < names.size(); ++i) text += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return text;
}

CLI::Option* one_value_per_use(CLI::Option* option) {
  // The help says so too: CLI11 would print "TEXT ...", a list after one flag.
  return option->allow_extra_args(false)->option_text(option->get_type_name() + " (one per use)");
}

CLI::Option* add_repeatable_option(CLI::App& cmd, std::string name, std::vector<std::string>& values, std::string help) {
  return one_value_per_use(cmd.add_option(std::move(name), values, std::move(help)));
}

CLI::Option* add_impl_option(CLI::App& cmd, std::string& impl, std::string_view use) {
  return cmd.add_option("--impl", impl, impl_help(use));
}

CLI::Option* add_impl_option(CLI::App& cmd, std::vector<std::string>& impls, std::string_view use) {
  return add_repeatable_option(cmd, "--impl", impls, impl_help(use));
}

CLI::Option* add_fault_option(CLI::App& cmd, std::string& fault, std::string_view use) {
  return cmd.add_option("--fault", fault, help(kFaultHelp, use));
}

CLI::Option* add_fault_option(CLI::App& cmd, std::vector<std::string>& faults, std::string_view use) {
  return add_repeatable_option(cmd, "--fault", faults, help(kFaultHelp, use));
}

CLI::Option* add_mode_option(CLI::App& cmd, Mode& mode, std::string_view use) {
  return cmd
      .add_option_function<std::string>(
          "--mode", [&mode](const std::string& text) { mode = *parse_mode(text); }, help(kModeHelp, use))
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            auto parsed = parse_mode(text);
            return parsed ? std::string() : parsed.error().message;
          },
          "MODE"));
}

CLI::Option* add_seed_option(CLI::App& cmd, uint64_t& seed, std::string_view use) {
  return cmd.add_option("--seed", seed, help(kSeedHelp, use))->transform(unsigned_in(0));
}

CLI::Option* add_out_option(CLI::App& cmd, std::string& out, std::string_view use) {
  return cmd.add_option("--out", out, help(kOutHelp, use));
}

CLI::Option* add_json_option(CLI::App& cmd, bool& json, std::string_view use) {
  return cmd.add_flag("--json", json, help(kJsonHelp, use));
}

CLI::Option* add_junit_option(CLI::App& cmd, std::string& file, std::string_view use) {
  return cmd.add_option("--junit", file, help(kJunitHelp, use));
}

Status write_flag_file(std::string_view flag, const std::string& file, const std::string& text) {
  // The one write path (docs/SECURITY.md, "One write path"): a new file renamed over the name,
  // so a FIFO there is refused rather than waited on, and a symbolic or hard link there is
  // never written through.
  if (Status s = write_new_file(file, text); !s.ok()) return Error{std::string(flag) + " " + s.error().message};
  return ok_status();
}

CLI::Option* add_profile_option(CLI::App& cmd, Profile& profile, std::string_view use) {
  return add_profile(cmd, [&profile](Profile p) { profile = p; }, use);
}

CLI::Option* add_profile_option(CLI::App& cmd, std::optional<Profile>& profile, std::string_view use) {
  return add_profile(cmd, [&profile](Profile p) { profile = p; }, use);
}

}  // namespace r3
