#include "fuzz/oracle/verdict.hpp"

namespace r3 {
namespace {
constexpr Verdict kVerdicts[] = {Verdict::pass,           Verdict::wrong_rows,    Verdict::overflow,
                                 Verdict::capacity,       Verdict::spurious_reject, Verdict::missed_reject,
                                 Verdict::collective_mismatch, Verdict::adapter_error};
}

std::string_view to_string(Verdict v) {
  switch (v) {
    case Verdict::pass: return "pass";
    case Verdict::wrong_rows: return "wrong_rows";
    case Verdict::overflow: return "overflow";
    case Verdict::capacity: return "capacity";
    case Verdict::spurious_reject: return "spurious_reject";
    case Verdict::missed_reject: return "missed_reject";
    case Verdict::collective_mismatch: return "collective_mismatch";
    case Verdict::adapter_error: return "adapter_error";
  }
  return "?";
}

std::string_view to_string(Severity s) {
  switch (s) {
    case Severity::none: return "";
    case Severity::failure: return "failure";
    case Severity::latent: return "latent";
  }
  return "?";
}

Result<Verdict> parse_verdict(std::string_view text) {
  for (Verdict v : kVerdicts)
    if (to_string(v) == text) return v;
  return Error{"verdict: \"" + std::string(text) +
               "\" is not one of pass, wrong_rows, overflow, capacity, spurious_reject, missed_reject, "
               "collective_mismatch, adapter_error"};
}

Result<Severity> parse_severity(std::string_view text) {
  if (text.empty() || text == "null") return Severity::none;
  if (text == "failure") return Severity::failure;
  if (text == "latent") return Severity::latent;
  return Error{"severity: \"" + std::string(text) + "\" is not one of failure, latent, null"};
}

std::string Signature::text() const {
  return impl + "/" + std::string(to_string(verdict)) + "/" + std::string(to_string(path)) + "/" + branch;
}

Signature signature_of(const Judgement& j, Path path) { return {j.impl, j.verdict, path, j.branch}; }

}  // namespace r3
