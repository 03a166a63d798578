#include "fuzz/mutants/carrier.hpp"

#include "fuzz/implementations/registry.hpp"

namespace r3 {
bool is_value_fault(Fault f) { return f == Fault::narrow_int16; }

Result<Mutant> make_mutant(std::string_view carrier, Fault fault) {
  Mutant m{fault, std::string(carrier), nullptr, nullptr, is_value_fault(fault)};
  if (carrier == "vllm-pre-50874") {
    if (fault != Fault::replay_per_rank) {
      return Error{"carrier vllm-pre-50874 carries only replay-per-rank (it is that fault, historically)"};
    }
    R3_TRY(m.mutant, make_implementation("vllm-pre-50874", {}));
    R3_TRY(m.base, make_implementation("vllm-50874", {}));
    return m;
  }
  R3_TRY(m.mutant, make_implementation(ImplementationName{std::string(carrier), fault}, {}));
  R3_TRY(m.base, make_implementation(ImplementationName{std::string(carrier), Fault::none}, {}));
  m.concrete = m.concrete || m.mutant->policy() == nullptr;
  return m;
}

std::vector<std::string> default_carriers() {
  return {"r3-fixed", "vllm-pre-50874", "gpu", "sglang-fixed", "gpu:sglang-fixed"};
}

}  // namespace r3
