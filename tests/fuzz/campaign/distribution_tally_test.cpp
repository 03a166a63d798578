#include "fuzz/campaign/distribution_tally.hpp"

#include <gtest/gtest.h>

#include "fuzz/generate/generator.hpp"

namespace r3 {
namespace {

std::string verdict_words(Verdict v, Severity s) {
  std::string key(to_string(v));
  if (s != Severity::none) key += " (" + std::string(to_string(s)) + ")";
  return key;
}

// The tally counts values and names them at the end; counted word by word, as the report reads
// them, the same cases and judgements give the same maps, with no key for what never occurred.
TEST(DistributionTally, CountsAsTheReportsWordsWould) {
  const std::vector<std::string> names = {"a", "b", "never"};
  DistributionTally tally(names.size());
  Distribution words;
  GeneratorOptions g;
  const std::vector<std::string> branches = {"single", "naive_total", "error", "local"};
  for (uint64_t i = 0; i < 600; ++i) {
    const GeneratedCase gc = generate_case(3, i, g);
    const Case& c = gc.c;
    tally.count_case(keys_of(gc));
    ++words.path[std::string(to_string(c.path))];
    ++words.padding[std::string(to_string(c.padding.mode))];
    ++words.sp[c.topology.sp ? "on" : "off"];
    ++words.size[std::string(to_string(gc.size))];
    ++words.calls[c.microbatches > 1 ? "microbatches" : c.dp_chunk ? "dp_chunk" : "one call"];
    for (size_t k = 0; k < 2; ++k) {  // "never" judges nothing
      if ((i + k) % 7 == 0) {
        tally.count_skipped();
        ++words.judged["skipped"];
        continue;
      }
      const JudgeMode mode = (i + k) % 3 ? JudgeMode::symbolic : JudgeMode::concrete;
      const Verdict v = i % 5 == 0 ? Verdict::wrong_rows : Verdict::pass;
      const Severity s = v == Verdict::pass ? Severity::none : (i % 2 ? Severity::latent : Severity::failure);
      const std::string& branch = branches[(i * (k + 1)) % branches.size()];
      tally.count_judgement(k, mode, branch, v, s);
      ++words.judged[std::string(to_string(mode))];
      ++words.branch[names[k]][branch];
      ++words.verdict[names[k]][verdict_words(v, s)];
    }
  }
  const Distribution d = tally.distribution(names);
  EXPECT_EQ(d.path, words.path);
  EXPECT_EQ(d.padding, words.padding);
  EXPECT_EQ(d.sp, words.sp);
  EXPECT_EQ(d.size, words.size);
  EXPECT_EQ(d.calls, words.calls);
  EXPECT_EQ(d.judged, words.judged);
  EXPECT_EQ(d.branch, words.branch);
  EXPECT_EQ(d.verdict, words.verdict);
  EXPECT_EQ(d.branch.count("never"), 0u);
}

TEST(DistributionTally, NothingCountedIsAnEmptyDistribution) {
  const Distribution d = DistributionTally(2).distribution({"a", "b"});
  EXPECT_TRUE(d.path.empty());
  EXPECT_TRUE(d.judged.empty());
  EXPECT_TRUE(d.branch.empty());
  EXPECT_TRUE(d.verdict.empty());
}

}  // namespace
}  // namespace r3
