#include "fuzz/oracle/verdict.hpp"

#include <algorithm>

#include "reference/engine_model.hpp"

namespace r3 {

std::string Signature::path_text() const { return layout.empty() ? std::string(to_string(path)) : layout; }

std::string Signature::text() const {
  return impl + "/" + std::string(to_string(verdict)) + "/" + path_text() + "/" + branch;
}

size_t Judgement::rank_count() const {
  size_t count = 0;
  for (const RankJudgement& c : classes) count += static_cast<size_t>(c.members);
  return count;
}

const RankJudgement& Judgement::class_of(int dp, int tp) const {
  // The last class that starts at or before (dp, tp).
  auto after = std::upper_bound(classes.begin(), classes.end(), std::pair{dp, tp}, [](auto rank, const RankJudgement& c) {
    return rank < std::pair{c.dp, c.tp};
  });
  return *std::prev(after);
}

std::vector<RankJudgement> rank_by_rank(const Judgement& j) {
  std::vector<RankJudgement> ranks;
  ranks.reserve(j.rank_count());
  for (const RankJudgement& c : j.classes) {
    for (int t = c.tp; t <= c.last_tp(); ++t) {
      RankJudgement& rank = ranks.emplace_back(c);
      rank.tp = t;
      rank.members = 1;
      if (t != c.tp) rank.detail.clear();
    }
  }
  return ranks;
}

void split_into_ranks(Judgement& j) {
  const bool split = std::any_of(j.classes.begin(), j.classes.end(), [](const RankJudgement& c) { return c.members > 1; });
  if (split) j.classes = rank_by_rank(j);
}

Signature signature_of(const Judgement& j, const Case& c) {
  Signature s{j.impl, j.verdict, c.path, {}, j.branch};
  s.layout = c.engine.model().capture_layout_text(c);
  return s;
}

}  // namespace r3
