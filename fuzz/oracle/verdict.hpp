// Verdicts and severities (design.md), per rank and per case, and the bug signature that
// deduplicates findings.
#pragma once

#include <compare>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/policy.hpp"
#include "reference/rows.hpp"

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

std::string_view to_string(Verdict v);
std::string_view to_string(Severity s);
Result<Verdict> parse_verdict(std::string_view text);
Result<Severity> parse_severity(std::string_view text);  // "" and "null" mean none

struct RankJudgement {
  int dp = 0;
  int tp = 0;
  Verdict verdict = Verdict::pass;
  std::vector<std::string_view> branches;  // per call
  std::optional<RowRange> rows;            // the one source range it copied, when there is one
  std::string detail;                      // first difference, in words
  bool rejected = false;                   // some call raised
  std::vector<char> tp_gathers;            // per call: did this rank issue the TP all-gather
};

struct Judgement {
  std::string impl;
  Verdict verdict = Verdict::pass;
  Severity severity = Severity::none;
  std::string branch;  // branch of the rank and call the verdict comes from
  std::string detail;
  Allocation allocation;
  std::vector<RankJudgement> ranks;  // D*T, DP-major
  bool failed() const { return verdict != Verdict::pass; }
};

struct Signature {
  std::string impl;
  Verdict verdict = Verdict::pass;
  Path path = Path::single;
  std::string branch;
  auto operator<=>(const Signature&) const = default;
  std::string text() const;  // "vllm-pre-50874/capacity/gathered/naive_total"
};

Signature signature_of(const Judgement& j, Path path);

}  // namespace r3
