// Flags several commands share, each defined once with its help text (style.md 6).
#pragma once

#include <optional>

#include <CLI/CLI.hpp>

#include "reference/profile.hpp"

namespace r3 {

// --profile vllm|vllm-legacy|any: the engine whose steps the command produces
// (docs/layout-contract.md section 10). Leaves `profile` as it is when absent.
CLI::Option* add_profile_option(CLI::App& cmd, Profile& profile);
// The same for a command whose default comes from its input (shrink: the case's own profile).
CLI::Option* add_profile_option(CLI::App& cmd, std::optional<Profile>& profile);

}  // namespace r3
