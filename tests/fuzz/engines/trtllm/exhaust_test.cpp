// TensorRT-LLM's exhaustive space (fuzz/engines/trtllm/exhaust.cpp): one rank, every row count,
// M, captured batch sizes and layer, each case inside profile trtllm; the three per-step models
// show no difference within the default bounds.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "fuzz/codec/case_json.hpp"
#include "fuzz/engines/registry.hpp"
#include "fuzz/exhaust/engine_exhaust.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/profile.hpp"

namespace r3 {
namespace {

const Profile kTrtllm = Profile::of(trtllm::engine(), 0);

TEST(TrtllmExhaust, AUnitOfThreeRowsEnumeratesEveryMPaddingAndLayerInsideTheProfile) {
  const EngineExhaust* part = engine_exhaust(trtllm::engine());
  ASSERT_NE(part, nullptr);
  ExhaustBounds b = part->default_bounds();
  b.profile = kTrtllm;
  b.max_m = 4;
  const CaseUnit unit{trtllm::engine(), {1, 2, false, false}, {3}, {}};
  std::set<std::string> seen;
  const int64_t visited = part->for_each_case(unit, b, [&](const Case& c) {
    EXPECT_TRUE(in_profile(c, kTrtllm)) << case_to_json_text(c);
    std::string sizes;
    for (int64_t s : c.padding.cudagraph_sizes) sizes += std::to_string(s) + ",";
    seen.insert("M" + std::to_string(c.max_num_tokens) + " " + sizes + " L" + std::to_string(c.layer));
    return true;
  });
  // M 3: none, {1}, {1,2}, {3}; M 4: none, {1}, {1,2,4}, {4}; each at layers 0 and 1.
  EXPECT_EQ(visited, 16);
  EXPECT_EQ(seen, (std::set<std::string>{"M3  L0", "M3  L1", "M3 1, L0", "M3 1, L1", "M3 1,2, L0", "M3 1,2, L1",
                                         "M3 3, L0", "M3 3, L1", "M4  L0", "M4  L1", "M4 1, L0", "M4 1, L1",
                                         "M4 1,2,4, L0", "M4 1,2,4, L1", "M4 4, L0", "M4 4, L1"}));
}

TEST(TrtllmExhaust, AForwardOfNoRowIsOutsideTheProfile) {
  const EngineExhaust* part = engine_exhaust(trtllm::engine());
  ExhaustBounds b = part->default_bounds();
  b.profile = kTrtllm;
  const CaseUnit unit{trtllm::engine(), {1, 1, false, false}, {0}, {}};
  EXPECT_EQ(part->for_each_case(unit, b, [](const Case&) { return true; }), 0);
}

}  // namespace
}  // namespace r3
