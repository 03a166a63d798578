#include "fuzz/cli/shared_options.hpp"

#include <functional>
#include <string>

namespace r3 {
namespace {

CLI::Option* add_profile(CLI::App& cmd, std::function<void(Profile)> set) {
  return cmd
      .add_option_function<std::string>(
          "--profile",
          [set = std::move(set)](const std::string& name) {
            if (auto parsed = parse_profile(name)) set(*parsed);
          },
          "which steps the engine can run, and so which cases are produced (docs/layout-contract.md "
          "section 10): vllm (current vLLM main; the default), vllm-legacy (vLLM with MoE DP chunking), "
          "any (everything the case format allows, CUDA-graph sizes above M included)")
      ->check(CLI::IsMember({"vllm", "vllm-legacy", "any"}));
}

}  // namespace

CLI::Option* add_profile_option(CLI::App& cmd, Profile& profile) {
  return add_profile(cmd, [&profile](Profile p) { profile = p; });
}

CLI::Option* add_profile_option(CLI::App& cmd, std::optional<Profile>& profile) {
  return add_profile(cmd, [&profile](Profile p) { profile = p; });
}

}  // namespace r3
