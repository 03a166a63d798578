// Implementations with a named fault injected, and the implementation each is compared with
// (the same one without the fault). Every carrier is built by the registry from IMPL+FAULT
// (fuzz/implementations/implementation_name.hpp), except an engine's historical carriers: two
// of its released versions, the older one being the fault (EngineExhaust::historical_carriers,
// fuzz/exhaust/engine_exhaust.hpp).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz/exhaust/engine_exhaust.hpp"
#include "reference/engine.hpp"
#include "reference/fault.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"

namespace r3 {

struct Mutant {
  Fault fault;
  std::string carrier;  // the implementation the fault lives in: "r3-fixed", "gpu", ...
  std::unique_ptr<Implementation> mutant;
  std::unique_ptr<Implementation> base;  // what the mutant must be told apart from
  bool concrete = false;  // judged concretely: value faults, and implementations without a policy
};

// The fault in `carrier`. A historical carrier (vllm-pre-50874: vLLM before PR #50874 against
// vLLM after it, which is replay-per-rank on the policy side) carries its one fault only.
Result<Mutant> make_mutant(std::string_view carrier, Fault fault);

// The historical carrier named `carrier`, of any engine; nullopt when it is none.
std::optional<HistoricalCarrier> historical_carrier(std::string_view carrier);

// The engine whose cases a carrier's mutants are hunted, shrunk and searched on: the first
// registered engine it serves (the default engine when it serves none).
Engine carrier_engine(const Implementation& carrier);

// Faults that show only in values (judged concretely even on policy carriers).
bool is_value_fault(Fault f);

// Carriers `r3fuzz mutants` measures by default: each engine's (EngineExhaust::carriers), in
// registry order. With the built-in engines: r3-fixed (every vLLM fault), the historical
// vllm-pre-50874 (replay-per-rank only), gpu (every vLLM fault, when registered), and SGLang's
// sglang-fixed and gpu:sglang-fixed (every fault that fits SGLang: reference/fault.hpp).
std::vector<std::string> default_carriers();

}  // namespace r3
