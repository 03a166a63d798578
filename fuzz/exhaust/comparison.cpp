#include "fuzz/exhaust/comparison.hpp"

namespace r3 {
namespace {

// The ranks of a judgement in DP-major order, through its classes.
class RankCursor {
 public:
  explicit RankCursor(const Judgement& j) : classes_(j.classes) {}
  bool done() const { return k_ == classes_.size(); }
  const RankJudgement& rank() const { return classes_[k_]; }  // the class of the current rank
  int tp() const { return classes_[k_].tp + offset_; }
  void next() {
    if (++offset_ == classes_[k_].members) ++k_, offset_ = 0;
  }

 private:
  const std::vector<RankJudgement>& classes_;
  size_t k_ = 0;
  int offset_ = 0;
};

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
  if (a.rank_count() != b.rank_count()) {
    return a.impl + " judged " + std::to_string(a.rank_count()) + " ranks, " + b.impl + " " +
           std::to_string(b.rank_count());
  }
  // Rank by rank: the two judgements may group their ranks into different classes. A member
  // takes its class's outcome; the words are the lead's (each failing rank leads its own class
  // when every rank's words were asked for).
  RankCursor x(a), y(b);
  for (; !x.done(); x.next(), y.next()) {
    if (x.rank().verdict != y.rank().verdict || x.rank().rejected != y.rank().rejected) {
      auto side = [](const Judgement& j, const RankCursor& at) {
        const RankJudgement& rank = at.rank();
        const bool lead = at.tp() == rank.tp;
        return j.impl + " " + std::string(to_string(rank.verdict)) + (rank.rejected ? " (raised)" : "") +
               (!lead || rank.detail.empty() ? "" : ": " + rank.detail);
      };
      return "dp " + std::to_string(x.rank().dp) + " tp " + std::to_string(x.tp()) + " differs: " + side(a, x) + "; " +
             side(b, y);
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
