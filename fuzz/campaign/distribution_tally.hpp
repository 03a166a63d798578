// The campaign's distribution counted as values while cases are merged, turned into the report's
// words once at the end. Counting by words cost the merge about a microsecond a case (a string
// built and looked up per key), a tenth of a symbolic judgement, on the one thread that merges
// for every worker.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fuzz/campaign/campaign.hpp"

namespace r3 {

// How a case calls the layer: "one call", "dp_chunk", "microbatches".
enum class CallShape { one_call, dp_chunk, microbatches };

// The generated case's shape, as the distribution counts it.
struct CaseKeys {
  Path path = Path::single;
  PaddingMode padding = PaddingMode::none;
  bool sp = false;
  SizeClass size = SizeClass::tiny;
  CallShape calls = CallShape::one_call;
};

CaseKeys keys_of(const GeneratedCase& g);

class DistributionTally {
 public:
  explicit DistributionTally(size_t implementations) : per_impl_(implementations) {}

  void count_case(const CaseKeys& k);
  void count_skipped() { ++skipped_; }
  // Implementation number `impl` judged a case in `mode`, through `branch`, to this verdict.
  void count_judgement(size_t impl, JudgeMode mode, const std::string& branch, Verdict verdict, Severity severity);

  // The counts under their words; `names` are the implementations in order.
  Distribution distribution(const std::vector<std::string>& names) const;

 private:
  struct PerImpl {
    std::map<std::string, int64_t> branch;
    std::map<std::pair<Verdict, Severity>, int64_t> verdict;
  };
  std::map<Path, int64_t> path_;
  std::map<PaddingMode, int64_t> padding_;
  std::map<bool, int64_t> sp_;
  std::map<SizeClass, int64_t> size_;
  std::map<CallShape, int64_t> calls_;
  std::map<JudgeMode, int64_t> judged_;
  int64_t skipped_ = 0;
  std::vector<PerImpl> per_impl_;
};

}  // namespace r3
