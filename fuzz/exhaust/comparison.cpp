#include "fuzz/exhaust/comparison.hpp"

namespace r3 {
namespace {

std::string rank_name(const RankJudgement& r) { return "dp " + std::to_string(r.dp) + " tp " + std::to_string(r.tp); }

}  // namespace

StepJudge judge_implementation(const Implementation& impl, Mode mode) {
  return [&impl, mode](const Case& c, const Step& step) { return judge_by_rule(impl, c, step, mode); };
}

std::string summarize(const Judgement& j) {
  if (!j.failed()) return "pass";
  std::string text(to_string(j.verdict));
  text += " " + std::string(to_string(j.severity));
  if (!j.branch.empty()) text += " (branch " + j.branch + ")";
  if (!j.detail.empty()) text += ": " + j.detail;
  return text;
}

std::optional<std::string> outcome_difference(const Judgement& a, const Judgement& b) {
  auto both = [&] { return a.impl + ": " + summarize(a) + "; " + b.impl + ": " + summarize(b); };
  if (a.verdict != b.verdict || a.severity != b.severity) return both();
  if (a.ranks.size() != b.ranks.size()) {
    return a.impl + " judged " + std::to_string(a.ranks.size()) + " ranks, " + b.impl + " " +
           std::to_string(b.ranks.size());
  }
  for (size_t r = 0; r < a.ranks.size(); ++r) {
    const RankJudgement& x = a.ranks[r];
    const RankJudgement& y = b.ranks[r];
    if (x.verdict != y.verdict || x.rejected != y.rejected) {
      auto side = [](const Judgement& j, const RankJudgement& rank) {
        return j.impl + " " + std::string(to_string(rank.verdict)) + (rank.rejected ? " (raised)" : "") +
               (rank.detail.empty() ? "" : ": " + rank.detail);
      };
      return rank_name(x) + " differs: " + side(a, x) + "; " + side(b, y);
    }
  }
  return std::nullopt;
}

CaseCheck differs_from_reference(StepJudge judge) {
  return [judge = std::move(judge)](const Case& c, const Step& step) -> std::optional<std::string> {
    auto j = judge(c, step);
    if (!j.ok()) return j.error().message;
    if (!j->failed()) return std::nullopt;
    return j->impl + ": " + summarize(*j);
  };
}

CaseCheck differs_between(StepJudge a, StepJudge b) {
  return [a = std::move(a), b = std::move(b)](const Case& c, const Step& step) -> std::optional<std::string> {
    auto ja = a(c, step);
    if (!ja.ok()) return ja.error().message;
    auto jb = b(c, step);
    if (!jb.ok()) return jb.error().message;
    return outcome_difference(*ja, *jb);
  };
}

}  // namespace r3
