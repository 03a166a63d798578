// Judgements (verdicts and severities, reference/verdict.hpp, per rank and per case), and the
// bug signature that deduplicates findings.
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
#include "reference/verdict.hpp"

namespace r3 {

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
  // SGLang cases: the capture layout (reference/engines/sglang/forward_layout.hpp) stands for the
  // path; empty for vLLM, so vLLM signatures order and print as before.
  std::string_view layout;
  std::string branch;
  auto operator<=>(const Signature&) const = default;
  std::string path_text() const;  // the path, or the SGLang capture layout
  std::string text() const;       // "vllm-pre-50874/capacity/gathered/naive_total", "sglang/wrong_rows/dp_graph/window_graph"
};

Signature signature_of(const Judgement& j, const Case& c);

}  // namespace r3
