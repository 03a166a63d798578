#include "reference/verdict.hpp"

#include <array>
#include <string>

namespace r3 {
namespace {

template <class E>
struct Named {
  E value;
  std::string_view name;
};

// In declaration order (to_string indexes them).
constexpr std::array<Named<Verdict>, 8> kVerdicts{{
    {Verdict::pass, "pass"},
    {Verdict::wrong_rows, "wrong_rows"},
    {Verdict::overflow, "overflow"},
    {Verdict::capacity, "capacity"},
    {Verdict::spurious_reject, "spurious_reject"},
    {Verdict::missed_reject, "missed_reject"},
    {Verdict::collective_mismatch, "collective_mismatch"},
    {Verdict::adapter_error, "adapter_error"},
}};

constexpr std::array<Named<Severity>, 3> kSeverities{{
    {Severity::none, ""},
    {Severity::failure, "failure"},
    {Severity::latent, "latent"},
}};

template <class E, size_t N>
constexpr bool in_enum_order(const std::array<Named<E>, N>& table) {
  for (size_t i = 0; i < N; ++i)
    if (static_cast<size_t>(table[i].value) != i) return false;
  return true;
}
static_assert(in_enum_order(kVerdicts) && in_enum_order(kSeverities), "the tables are indexed by their enums");

template <class E, size_t N>
constexpr std::array<E, N> values_of(const std::array<Named<E>, N>& table) {
  std::array<E, N> out{};
  for (size_t i = 0; i < N; ++i) out[i] = table[i].value;
  return out;
}
constexpr auto kVerdictValues = values_of(kVerdicts);
constexpr auto kSeverityValues = values_of(kSeverities);

// `what: "text" is not one of a, b, ...`, listing the table's names (`also` after them).
template <class E, size_t N>
Result<E> parse(const std::array<Named<E>, N>& table, std::string_view what, std::string_view text,
                std::string_view also = {}) {
  std::string names;
  for (const Named<E>& entry : table) {
    if (entry.name == text) return entry.value;
    if (entry.name.empty()) continue;
    names += (names.empty() ? "" : ", ") + std::string(entry.name);
  }
  if (!also.empty()) names += ", " + std::string(also);
  return Error{std::string(what) + ": \"" + std::string(text) + "\" is not one of " + names};
}

}  // namespace

std::span<const Verdict> all_verdicts() { return kVerdictValues; }
std::span<const Severity> all_severities() { return kSeverityValues; }

std::string_view to_string(Verdict v) { return kVerdicts[static_cast<size_t>(v)].name; }
std::string_view to_string(Severity s) { return kSeverities[static_cast<size_t>(s)].name; }

Result<Verdict> parse_verdict(std::string_view text) { return parse(kVerdicts, "verdict", text); }

Result<Severity> parse_severity(std::string_view text) {
  if (text == "null") return Severity::none;  // JSON's spelling of none
  return parse(kSeverities, "severity", text, "null");
}

}  // namespace r3
