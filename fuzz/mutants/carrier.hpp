// Implementations with a named fault injected, and the implementation each is compared with
// (the same one without the fault). Every carrier is built by the registry from IMPL+FAULT
// (fuzz/implementations/implementation_name.hpp).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

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

// The fault in `carrier`. The carrier "vllm-pre-50874" is the historical mutant: vLLM before
// PR #50874 against vLLM after it, which is replay-per-rank on the policy side (with the old
// capture decision besides).
Result<Mutant> make_mutant(std::string_view carrier, Fault fault);

// Faults that show only in values (judged concretely even on policy carriers).
bool is_value_fault(Fault f);

// Carriers `r3fuzz mutants` measures by default: r3-fixed (every vLLM fault), gpu (every vLLM
// fault, when registered), the historical vllm-pre-50874 (replay-per-rank only), and SGLang's
// sglang-fixed and gpu:sglang-fixed (every fault that fits SGLang: reference/fault.hpp).
std::vector<std::string> default_carriers();

}  // namespace r3
