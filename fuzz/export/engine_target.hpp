// The engine an exported test runs a case on: where its capturer lives, how the test builds
// and feeds it, and which buffer sizings it can be told. One entry per engine; vLLM is the only
// one so far. Adding an engine (SGLang): a case that names it gets its own EngineTarget, with its
// default capturer and its harness (the Python that fakes what that engine's capture reads and
// asserts what it publishes; for SGLang, the forward-end window); step_inputs and the data part
// of the module stay shared.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

struct EngineTarget {
  std::string_view engine;            // "vllm"
  std::string_view default_capturer;  // MODULE:CLASS of the engine's real capturer
  std::string_view capturer_source;   // where that path was read, for the file's docstring
  // Allocations the test can be told (R3FUZZ_SIZING), named after the policy models that make
  // them (reference/policy.hpp); the first is the engine's current one, the default.
  std::vector<std::string_view> sizings;
  std::string_view harness;  // the Python that builds the capturer, fakes its world and asserts
};

// The target for `c` (every case is a vLLM step for now).
const EngineTarget& engine_target(const Case& c);

// MODULE:CLASS, each a dotted Python name (module) or a name (class); the error says what is wrong.
Status check_capturer_spec(std::string_view spec);

}  // namespace r3
