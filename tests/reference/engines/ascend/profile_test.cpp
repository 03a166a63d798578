// vllm-ascend's profiles (reference/engines/ascend/profile.cpp; spec section 5).
#include "reference/engines/ascend/profile.hpp"

#include <gtest/gtest.h>

#include "reference/engines/ascend/fields.hpp"
#include "tests/support/ascend_fixtures.hpp"

namespace r3::ascend {
namespace {

std::string error_of(const Case& c, Variant v) {
  const Status s = check_profile(c, v);
  return s.ok() ? "ok" : s.error().message;
}

TEST(AscendProfile, SpExactlyWhereUpstreamEnablesIt) {
  EXPECT_EQ(error_of(test::ascend_case(2, 2, true, true, {3, 4}), Variant::main), "ok");
  EXPECT_EQ(error_of(test::ascend_case(2, 2, true, false, {3, 4}), Variant::main),
            "topology.sp: upstream SP is on exactly when ep, tp > 1 and dp > 1 (utils.enable_sp -> use_sequence_parallel_moe, #13946)");
  EXPECT_EQ(error_of(test::ascend_case(2, 2, true, false, {3, 4}), Variant::v026), "ok");
  EXPECT_EQ(error_of(test::ascend_case(2, 2, true, true, {3, 4}), Variant::v026),
            "topology.sp: SP is off in v0.26 (platform.py forces flashinfer_all2allv, before #13946)");
}

TEST(AscendProfile, EagerPaddingFollowsTheRunner) {
  Case c = test::ascend_case(2, 2, true, true, {3, 4});
  c.padding.mode = PaddingMode::none;
  EXPECT_EQ(error_of(c, Variant::main),
            "padding: an eager step on runner v1 with SP is padded dp_max, the case has none "
            "(model_runner_v1.py, _determine_batch_execution_and_padding; MRv2: dispatch_cg_and_sync_dp)");
  fields_of(c)->runner = Runner::mrv2;
  EXPECT_EQ(error_of(c, Variant::main), "ok");
  EXPECT_EQ(error_of(c, Variant::aligned),
            "tokens[0]: 3 is not a multiple of tp 2 (profile ascend-mrv2-rounded reads upstream MRv2 as rounding SP counts to TP)");
  EXPECT_EQ(error_of(c, Variant::v026).substr(0, 12), "topology.sp:");
}

TEST(AscendProfile, GraphStepsRunAtOneTpAlignedCaptureSize) {
  Case c = test::ascend_case(2, 2, true, true, {3, 4});
  fields_of(c)->graph = Graph::full_decode_only;
  EXPECT_EQ(error_of(c, Variant::main).substr(0, 60), "padding: a full_decode_only graph step runs at one capture s");
  c.padding = {PaddingMode::cudagraph, {3, 8}};
  EXPECT_EQ(error_of(c, Variant::main),
            "padding.cudagraph: size 3 is not a multiple of tp 2 (under SP capture sizes are TP-aligned: platform.py, _setup_compile_backend)");
  c.padding = {PaddingMode::cudagraph, {4, 8}};
  EXPECT_EQ(error_of(c, Variant::main), "ok");
  c.padding = {PaddingMode::cudagraph, {4, 32}};
  EXPECT_EQ(error_of(c, Variant::main).substr(0, 38), "padding.cudagraph: size 32 is above ma");
}

TEST(AscendProfile, NamedCommMustBeTheDerivedOne) {
  Case c = test::ascend_case(1, 2, true, false, {5});
  fields_of(c)->comm = Comm::alltoall;
  EXPECT_EQ(error_of(c, Variant::main), "ascend.comm: the case names alltoall, select_moe_comm_method picks mc2 (ascend_forward_context.py)");
  fields_of(c)->comm = Comm::mc2;
  EXPECT_EQ(error_of(c, Variant::main), "ok");
}

TEST(AscendProfile, FitBringsCasesInside) {
  Case c = test::ascend_case(2, 2, true, false, {0, 40});
  c.idle_dummy = false;
  fields_of(c)->graph = Graph::piecewise;
  fields_of(c)->comm = Comm::allgather;
  for (Variant v : {Variant::main, Variant::aligned, Variant::v026}) {
    const Case fit = fit_to_profile(c, v);
    EXPECT_EQ(error_of(fit, v), "ok");
  }
  Case mrv2 = test::ascend_case(2, 2, true, true, {3, 5}, Chip::a3, Runner::mrv2);
  EXPECT_EQ(fit_to_profile(mrv2, Variant::aligned).tokens, (std::vector<int64_t>{4, 6}));
}

}  // namespace
}  // namespace r3::ascend
