#include "fuzz/mutants/carrier.hpp"

#include "fuzz/implementations/registry.hpp"

namespace r3 {
bool is_value_fault(Fault f) { return f == Fault::narrow_int16; }

std::optional<HistoricalCarrier> historical_carrier(std::string_view carrier) {
  for (Engine e : all_engines()) {
    const EngineExhaust* part = engine_exhaust(e);
    if (!part) continue;
    for (const HistoricalCarrier& h : part->historical_carriers())
      if (h.name == carrier) return h;
  }
  return std::nullopt;
}

Engine carrier_engine(const Implementation& carrier) {
  for (Engine e : all_engines())
    if (carrier.serves(e)) return e;
  return Engine{};
}

Result<Mutant> make_mutant(std::string_view carrier, Fault fault) {
  Mutant m{fault, std::string(carrier), nullptr, nullptr, is_value_fault(fault)};
  if (const std::optional<HistoricalCarrier> h = historical_carrier(carrier)) {
    if (fault != h->fault) {
      return Error{"carrier " + std::string(h->name) + " carries only " + std::string(to_string(h->fault)) +
                   " (it is that fault, historically)"};
    }
    R3_TRY(m.mutant, make_implementation(h->mutant, {}));
    R3_TRY(m.base, make_implementation(h->base, {}));
    return m;
  }
  R3_TRY(m.mutant, make_implementation(ImplementationName{std::string(carrier), fault}, {}));
  R3_TRY(m.base, make_implementation(ImplementationName{std::string(carrier), Fault::none}, {}));
  m.concrete = m.concrete || m.mutant->policy() == nullptr;
  return m;
}

std::vector<std::string> default_carriers() {
  std::vector<std::string> carriers;
  for (Engine e : all_engines())
    if (const EngineExhaust* part = engine_exhaust(e))
      for (std::string_view carrier : part->carriers()) carriers.emplace_back(carrier);
  return carriers;
}

}  // namespace r3
