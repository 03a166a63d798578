// vLLM's lifecycle model on drawn traces (fuzz/generate/trace_generator.hpp): on every vLLM trace
// the generator draws that a vLLM profile runs, the fixed model returns the truth, and so does
// that profile's released version with all its missing patches applied (the patches are the
// whole distance to the fixed model). Each step's capture is delivered as itself.
#include <gtest/gtest.h>

#include "fuzz/generate/rng.hpp"
#include "fuzz/generate/trace_generator.hpp"
#include "tests/reference/engines/vllm/lifecycle_fixtures.hpp"

namespace r3 {
namespace {

using namespace test::vllm_trace;

// Why `out` is not the truth of `timeline`, or "" when it is.
std::string differs(const Timeline& timeline, const LifecycleOutcome& out) {
  if (out.crash_step) return "crashed: " + out.crash;
  for (size_t r = 0; r < timeline.requests.size(); ++r) {
    const RequestView& want = timeline.requests[r];
    const RequestRoutes& got = out.requests[r];
    const std::string who = "request " + std::to_string(r);
    if (want.finish_step < 0) {
      if (got.status != RequestRoutes::Status::not_finished) return who + " finished, the trace never ends it";
      continue;
    }
    if (!want.returns_output) {
      if (got.status != RequestRoutes::Status::none) return who + " returned rows, it ended before any forward";
      continue;
    }
    if (got.status != RequestRoutes::Status::returned) return who + " returned no rows";
    if (got.rows.size() != want.expected.size()) {
      return who + " returned " + std::to_string(got.rows.size()) + " rows, expected " +
             std::to_string(want.expected.size());
    }
    for (size_t i = 0; i < got.rows.size(); ++i) {
      if (!timeline.same_route(got.rows[i], want.expected[i])) {
        return who + " position " + std::to_string(want.start + static_cast<int64_t>(i)) + " holds " +
               describe(got.rows[i]) + ", expected " + describe(want.expected[i]);
      }
    }
  }
  return "";
}

// Draws traces under profile `any` (the generator's draw for a vLLM profile keeps to its own
// rules, this one to every trace vLLM's model takes) and judges the fixed model, and `released`
// with `all_patches`, on each vLLM trace inside `profile`.
void check_draws(Profile profile, std::string_view released, const std::vector<int>& all_patches) {
  int judged = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    Rng rng(seed);
    const Result<Trace> t = draw_trace(rng, Profile::any());
    if (!t.ok() || t->engine != vllm::engine()) continue;
    const Result<Timeline> timeline = validate_trace(*t);
    ASSERT_TRUE(timeline.ok()) << "seed " << seed << ": " << timeline.error().message;
    if (!model().check_profile(*t, *timeline, profile).ok()) continue;
    std::vector<StepDelivery> delivery;
    for (const StepView& step : timeline->steps) delivery.push_back(identity_delivery(step));
    EXPECT_EQ(differs(*timeline, model().run(*t, *timeline, delivery, "r3-fixed", {})), "")
        << "seed " << seed << ", r3-fixed";
    EXPECT_EQ(differs(*timeline, model().run(*t, *timeline, delivery, released, all_patches)), "")
        << "seed " << seed << ", " << released << " with every patch";
    ++judged;
  }
  EXPECT_GE(judged, 100);  // the draws reach the model at all
}

TEST(VllmLifecycleDraws, MainWithItsPatchesAndTheFixedModelReturnTheTruth) {
  check_draws(main_profile(), "vllm-50874",
              {vllm::kPatchGenerationOnWeightUpdate, vllm::kPatchPreemptReemit, vllm::kPatchStoreCapacity});
}

TEST(VllmLifecycleDraws, TheSlotKeyedGenerationWithItsPatchesReturnsTheTruth) {
  check_draws(legacy_profile(), "vllm-pre-50874", {vllm::kPatchOffloadRows, vllm::kPatchPdRows});
}

}  // namespace
}  // namespace r3
