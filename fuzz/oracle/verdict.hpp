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

// The outcome of a class of ranks: TP ranks [tp, tp + members) of DP rank dp, which read the
// same rows and decided alike, so one simulation stands for all of them. The TP ranks of a DP
// rank usually form one class, so a judgement costs a class per DP rank, not per (d, t).
struct RankJudgement {
  int dp = 0;
  int tp = 0;       // the class's lead: its first TP rank
  int members = 1;  // TP ranks in the class, the lead included
  Verdict verdict = Verdict::pass;
  std::vector<std::string_view> branches;  // per call
  std::optional<RowRange> rows;            // the one source range it copied, when there is one
  // First difference, in words, for the lead (it names the lead's rank). A judgement asked
  // for every rank's words (RankDetails::every_rank) keeps each failing rank a class of its own.
  std::string detail;
  bool rejected = false;                   // some call raised
  std::vector<char> tp_gathers;            // per call: did this rank issue the TP all-gather
  int last_tp() const { return tp + members - 1; }
};

struct Judgement {
  std::string impl;
  Verdict verdict = Verdict::pass;
  Severity severity = Severity::none;
  std::string branch;  // branch of the rank and call the verdict comes from
  std::string detail;
  Allocation allocation;
  // The rank classes, DP-major and in TP order: together they hold every (d, t) once.
  std::vector<RankJudgement> classes;
  bool failed() const { return verdict != Verdict::pass; }
  size_t rank_count() const;
  // The class holding rank (dp, tp), by bisection; the ranks must exist.
  const RankJudgement& class_of(int dp, int tp) const;
};

// The same judgement with one class a rank (explain shows every rank; the rank-by-rank
// property compares ranks). A member takes its class's outcome; the words stay with the lead.
std::vector<RankJudgement> rank_by_rank(const Judgement& j);
void split_into_ranks(Judgement& j);

struct Signature {
  std::string impl;
  Verdict verdict = Verdict::pass;
  Path path = Path::single;
  // The capture layout the case's engine names (EngineModel::capture_layout_text: SGLang's,
  // reference/engines/sglang/forward_layout.hpp) stands for the path; empty when the path says it
  // (vLLM), so those signatures order and print as before.
  std::string layout;
  std::string branch;
  auto operator<=>(const Signature&) const = default;
  std::string path_text() const;  // the path, or the engine's capture layout
  std::string text() const;       // "vllm-pre-50874/capacity/gathered/naive_total", "sglang/wrong_rows/dp_graph/window_graph"
};

Signature signature_of(const Judgement& j, const Case& c);

}  // namespace r3
