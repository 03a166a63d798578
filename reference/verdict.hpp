// Verdicts and severities (design.md): what the oracle concludes about an implementation on a
// case, per rank and per case. They live here, beside the case, because a case stores one as
// its documented outcome (Expectation), and the codecs read and write it without the oracle.
#pragma once

#include <span>
#include <string_view>

#include "reference/error.hpp"

namespace r3 {

enum class Verdict {
  pass,
  wrong_rows,           // a buffer row holds the wrong token, padding or a stale value
  overflow,             // a write outside an allocation
  capacity,             // an allocation smaller than the rows it must hold, caught before writing
  spurious_reject,      // raised on a valid case
  missed_reject,        // accepted a case the reference rejects
  collective_mismatch,  // ranks of one group disagree on issuing a collective (a hang)
  adapter_error,        // an external implementation crashed, timed out or answered nonsense
};

enum class Severity { none, failure, latent };

std::span<const Verdict> all_verdicts();      // in declaration order
std::span<const Severity> all_severities();   // in declaration order

// "pass", "wrong_rows", ...; "failure", "latent", and "" for Severity::none.
std::string_view to_string(Verdict v);
std::string_view to_string(Severity s);

// Errors name every valid text: `verdict: "boom" is not one of pass, ...`.
Result<Verdict> parse_verdict(std::string_view text);
Result<Severity> parse_severity(std::string_view text);  // "" and "null" mean none

}  // namespace r3
