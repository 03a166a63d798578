// TensorRT-LLM's trace part (fuzz/engines/trtllm/trace_draw.cpp) tested with itself: every
// trace drawn under profile trtllm is valid and inside the profile (its copies record within the
// ring's window), the fixed model passes every one, and each released version fails some.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "fuzz/generate/rng.hpp"
#include "fuzz/generate/trace_generator.hpp"
#include "fuzz/oracle/judge_trace.hpp"
#include "reference/engines/trtllm/model.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3 {
namespace {

constexpr int kTraces = 400;

TEST(TrtllmTraceDraw, DrawsInsideTheProfileAndTheFixedModelPassesThem) {
  const Profile profile = Profile::of(trtllm::engine(), 0);
  std::map<std::string, int> failures;
  int late_copies = 0;
  for (const char* name : {"trtllm-06a976ce", "trtllm", "trtllm-fixed"}) failures[name] = 0;
  Rng rng(20261202);
  for (int i = 0; i < kTraces; ++i) {
    Result<Trace> t = draw_trace(rng, profile);
    ASSERT_TRUE(t.ok()) << t.error().message;
    ASSERT_EQ(t->engine, trtllm::engine());
    Result<Timeline> timeline = validate_trace(*t);
    ASSERT_TRUE(timeline.ok()) << timeline.error().message;
    const Status inside = trtllm::model().lifecycle()->check_profile(*t, *timeline, profile);
    ASSERT_TRUE(inside.ok()) << "trace " << i << ": " << inside.error().message;
    late_copies += t->copies.empty() ? 0 : 1;
    for (auto& [name, failed] : failures) {
      Result<TraceImplementation> impl = make_trace_implementation(name);
      ASSERT_TRUE(impl.ok());
      const TraceJudgement j = judge_trace(*impl, *t, *timeline);
      if (j.verdict != TraceVerdict::pass) ++failed;
      if (name == "trtllm-fixed") {
        EXPECT_EQ(j.verdict, TraceVerdict::pass) << "trace " << i << ": " << j.detail;
      }
    }
  }
  EXPECT_EQ(failures["trtllm-fixed"], 0);
  EXPECT_GT(failures["trtllm-06a976ce"], 0);
  EXPECT_GT(failures["trtllm"], 0);
  EXPECT_GT(late_copies, 0);  // the draw uses the ring's window
}

}  // namespace
}  // namespace r3
