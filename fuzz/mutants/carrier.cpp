#include "fuzz/mutants/carrier.hpp"

#include "fuzz/campaign/registry.hpp"
#include "fuzz/mutants/faulty_policy.hpp"
#include "fuzz/oracle/policy_implementation.hpp"
#include "reference/policy.hpp"

namespace r3 {
bool is_value_fault(Fault f) { return f == Fault::narrow_int16; }

Result<std::unique_ptr<Implementation>> make_subject(std::string_view impl, std::optional<Fault> fault) {
  if (auto policy = make_policy(impl)) {
    if (fault) policy = make_faulty_policy(std::move(policy), *fault);
    return std::unique_ptr<Implementation>(std::make_unique<PolicyImplementation>(std::move(policy)));
  }
  ImplementationOptions options;
  if (fault) options.fault = std::string(to_string(*fault));
  return make_implementation(impl, options);
}

Result<Mutant> make_mutant(std::string_view carrier, Fault fault) {
  Mutant m{fault, std::string(carrier), nullptr, nullptr, is_value_fault(fault)};
  if (carrier == "vllm-pre-50874") {
    if (fault != Fault::replay_per_rank) {
      return Error{"carrier vllm-pre-50874 carries only replay-per-rank (it is that fault, historically)"};
    }
    R3_TRY(m.mutant, make_subject("vllm-pre-50874", std::nullopt));
    R3_TRY(m.base, make_subject("vllm-50874", std::nullopt));
    return m;
  }
  R3_TRY(m.mutant, make_subject(carrier, fault));
  R3_TRY(m.base, make_subject(carrier, std::nullopt));
  m.concrete = m.concrete || m.mutant->policy() == nullptr;
  return m;
}

std::vector<std::string> default_carriers() { return {"r3-fixed", "vllm-pre-50874", "gpu"}; }

}  // namespace r3
