// The interface every implementation under test fills in. Two ways to be judged:
//  - symbolic: a policy that decides from shapes (CaptureCall -> CaptureDecision); the harness
//    applies the decisions to row ranges, so production sizes cost nothing;
//  - concrete: the implementation runs the step on real routing values and returns every
//    buffer it wrote, guard rows included; the harness compares them element by element.
// Policy models do both (concrete through the harness's host executor); the GPU pipeline and
// external adapters are concrete only.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/capture.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/layout.hpp"
#include "reference/policy.hpp"

namespace r3 {

// A buffer as the implementation left it: `guard_rows` canary rows, `rows` rows, then
// `guard_rows` canary rows again, each row `row_width` values wide. Values narrower than
// 32 bits (int16 replay storage) are stored sign-extended.
struct GuardedImage {
  int64_t rows = 0;
  int64_t guard_rows = 0;
  int64_t row_width = 0;
  int bits = 32;
  std::vector<int32_t> data;
};

struct ConcreteRank {
  int dp = 0;
  int tp = 0;
  std::vector<CaptureDecision> calls;  // branch and rejection per call (copies optional)
  GuardedImage capture;                // [rows, L*K]
  std::optional<GuardedImage> replay;  // monolithic cases: [rows, K]
};

struct ConcreteOutcome {
  Allocation allocation;
  std::vector<ConcreteRank> ranks;  // D*T, DP-major
};

class Implementation {
 public:
  virtual ~Implementation() = default;
  virtual std::string name() const = 0;
  virtual Allocation allocate(const Case& c) const = 0;
  // Non-null when the implementation can be judged symbolically.
  virtual const CapturePolicy* policy() const { return nullptr; }
  // The policy whose decisions it carries out unchanged (a policy model's own; the GPU pipeline's
  // without a fault), or null. A finding's root cause is read from its patches (fuzz/oracle/root_cause.hpp).
  virtual const CapturePolicy* followed_policy() const { return policy(); }
  // Runs the whole step on concrete data. An Error means the implementation itself failed
  // (an adapter crashed or lied), not that it rejected the case.
  virtual Result<ConcreteOutcome> run_concrete(const Case& c, const Step& step) const = 0;
  // False for an engine whose cases it cannot judge (a policy model judges only its engine's
  // cases; the GPU pipeline and adapters serve both).
  virtual bool serves(Engine engine) const {
    (void)engine;
    return true;
  }
};

}  // namespace r3
