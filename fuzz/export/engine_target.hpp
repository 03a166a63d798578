// The engine an exported test runs a case on (an engine's export part): where its capturer lives,
// how the test builds and feeds it, which buffer sizings it can be told, and what its step adds to
// the inputs every engine's test embeds. One entry per engine (fuzz/engines/NAME/export.cpp),
// found through the registry (engine_export); step_inputs and the shared data part of the module
// (pytest_writer.cpp) serve every engine, and each adds its own data lines and its harness: the
// Python that fakes what that engine's capture reads and asserts what it publishes (for SGLang,
// through the forward-end window). An engine without an export part cannot be exported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/export/step_inputs.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3 {

struct EngineTarget {
  std::string_view engine;            // "vllm", "sglang"
  std::string_view default_capturer;  // MODULE:CLASS of the engine's real capturer
  std::string_view capturer_source;   // where that path was read, for the file's docstring
  std::string_view tests_doc;         // the docstring's "What it tests" paragraph
  std::string_view sizing_doc;        // what the two numbers of a SIZINGS entry are
  std::string_view env_doc;           // further environment variables the harness reads ("" if none)
  // Allocations the test can be told (R3FUZZ_SIZING), named after the policy models that make
  // them (reference/policy.hpp); the first is the engine's current one, the default.
  std::vector<std::string_view> sizings;
  // A sizing's second number beside its capture rows (vLLM: the monolithic replay buffer; SGLang:
  // the DeepEP gather buffer); nullopt: the engine allocates none.
  std::optional<int64_t> (*second_rows)(const Case& c, const Allocation& a, std::string_view sizing);
  // The engine's own data lines, after the shared ones (its capture calls, its forward end).
  std::string (*engine_data)(const Case& c, const StepInputs& in);
  std::string_view harness;  // the Python that builds the capturer, fakes its world and asserts
  // The rows `rank` (d*T + t) must hold after the step when the engine publishes them itself
  // rather than keeping the reference's copies of every call (SGLang: the rank's real tokens in
  // order, at its KV slots): at most one run a rank, counted before anything is built. Null: the
  // copies, applied in call order (step_inputs.cpp).
  std::optional<ExpectedRun> (*published_run)(const Step& step, size_t rank);
  // StepInputs::host_slots: the most host-cache slots a rank's test allocates; null: none (0).
  int64_t (*host_slots)(const Step& step);
};

// The export part of `engine`; null when it has none (fuzz/engines/registry.cpp).
const EngineTarget* engine_export(Engine engine);

// The target for `c`, by the case's engine; an error naming the engine when it has no export part.
Result<const EngineTarget*> engine_target(const Case& c);

// MODULE:CLASS, each a dotted Python name (module) or a name (class); the error says what is wrong.
Status check_capturer_spec(std::string_view spec);

}  // namespace r3
