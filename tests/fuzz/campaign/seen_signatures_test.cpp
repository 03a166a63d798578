#include "fuzz/campaign/seen_signatures.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace r3 {
namespace {

Signature sig(const std::string& impl, const std::string& branch) {
  Signature s;
  s.impl = impl;
  s.verdict = Verdict::wrong_rows;
  s.branch = branch;
  return s;
}

// A view finds what the merge added before it looked, under the failure number the merge gave,
// and nothing else: a signature the merge has not added keeps its words.
TEST(SeenSignatures, AViewFindsWhatTheMergeAddedWithItsNumber) {
  SeenSignatures seen;
  SeenSignatures::View view(seen);
  EXPECT_EQ(view.find(sig("a", "single")), std::nullopt);
  seen.add(sig("a", "single"), 0);
  seen.add(sig("b", "local"), 3);
  EXPECT_EQ(view.find(sig("a", "single")), 0u);
  EXPECT_EQ(view.find(sig("b", "local")), 3u);
  EXPECT_EQ(view.find(sig("b", "single")), std::nullopt);
  seen.add(sig("b", "single"), 4);
  EXPECT_EQ(view.find(sig("b", "single")), 4u);
}

// Workers look while the merge adds: each view sees every signature added before its look, and a
// look never returns a wrong number (ThreadSanitizer runs this too).
TEST(SeenSignatures, ViewsOnOtherThreadsSeeEveryAddition) {
  SeenSignatures seen;
  std::atomic<size_t> added{0};
  std::vector<std::jthread> workers;
  std::atomic<bool> wrong{false};
  for (int w = 0; w < 3; ++w) {
    workers.emplace_back([&] {
      SeenSignatures::View view(seen);
      for (size_t done = 0; done < 200;) {
        done = added.load();
        for (size_t i = 0; i < done; ++i)
          if (view.find(sig("impl", std::to_string(i))) != i) wrong = true;
      }
    });
  }
  for (size_t i = 0; i < 200; ++i) {
    seen.add(sig("impl", std::to_string(i)), i);
    added = i + 1;
  }
  workers.clear();
  EXPECT_FALSE(wrong.load());
}

}  // namespace
}  // namespace r3
