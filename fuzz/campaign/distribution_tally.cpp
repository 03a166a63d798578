#include "fuzz/campaign/distribution_tally.hpp"

namespace r3 {
namespace {

std::string_view to_string(CallShape calls) {
  switch (calls) {
    case CallShape::one_call: return "one call";
    case CallShape::dp_chunk: return "dp_chunk";
    case CallShape::microbatches: return "microbatches";
  }
  return "one call";
}

std::string verdict_key(Verdict verdict, Severity severity) {
  std::string key(to_string(verdict));
  if (severity != Severity::none) key += " (" + std::string(to_string(severity)) + ")";
  return key;
}

// Adds every count of `from` under its word (distinct values have distinct words).
template <class Key, class Word>
void add_words(std::map<std::string, int64_t>& to, const std::map<Key, int64_t>& from, Word word) {
  for (const auto& [key, n] : from) to[std::string(word(key))] += n;
}

}  // namespace

CaseKeys keys_of(const GeneratedCase& g) {
  const Case& c = g.c;
  CaseKeys k;
  k.path = c.path;
  k.padding = c.padding.mode;
  k.sp = c.topology.sp;
  k.size = g.size;
  k.calls = c.microbatches > 1 ? CallShape::microbatches : c.dp_chunk ? CallShape::dp_chunk : CallShape::one_call;
  return k;
}

void DistributionTally::count_case(const CaseKeys& k) {
  ++path_[k.path];
  ++padding_[k.padding];
  ++sp_[k.sp];
  ++size_[k.size];
  ++calls_[k.calls];
}

void DistributionTally::count_judgement(size_t impl, JudgeMode mode, const std::string& branch, Verdict verdict,
                                        Severity severity) {
  ++judged_[mode];
  PerImpl& p = per_impl_[impl];
  // Found without building a key: a branch is counted once as a new word, then only looked up.
  if (auto it = p.branch.find(branch); it != p.branch.end()) {
    ++it->second;
  } else {
    p.branch.emplace(branch, 1);
  }
  ++p.verdict[{verdict, severity}];
}

Distribution DistributionTally::distribution(const std::vector<std::string>& names) const {
  Distribution d;
  add_words(d.path, path_, [](Path p) { return to_string(p); });
  add_words(d.padding, padding_, [](PaddingMode m) { return to_string(m); });
  add_words(d.sp, sp_, [](bool on) { return on ? "on" : "off"; });
  add_words(d.size, size_, [](SizeClass s) { return to_string(s); });
  add_words(d.calls, calls_, [](CallShape c) { return to_string(c); });
  add_words(d.judged, judged_, [](JudgeMode m) { return to_string(m); });
  if (skipped_ > 0) d.judged["skipped"] += skipped_;
  for (size_t k = 0; k < per_impl_.size(); ++k) {
    const PerImpl& p = per_impl_[k];
    if (p.branch.empty()) continue;  // never judged a case: no entry, as the words-first count made none
    for (const auto& [branch, n] : p.branch) d.branch[names[k]][branch] += n;
    add_words(d.verdict[names[k]], p.verdict, [](const std::pair<Verdict, Severity>& v) {
      return verdict_key(v.first, v.second);
    });
  }
  return d;
}

}  // namespace r3
