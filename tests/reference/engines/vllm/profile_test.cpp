// vLLM's profile rules (reference/engines/vllm/profile.cpp), each with the words it reports, and
// fit_to_profile, through the generic check_profile (reference/profile.hpp).
#include "reference/profile.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "reference/engines/vllm/model.hpp"
#include "reference/engines/vllm/profile.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"
#include "tests/support/case_fixtures.hpp"
#include "tests/support/case_gen.hpp"
#include "tests/support/case_print.hpp"

namespace r3 {
namespace {

using V = std::vector<int64_t>;

Profile main_profile() { return Profile::of(vllm::engine(), 0); }  // vllm
Profile legacy() { return Profile::of(vllm::engine(), 1); }        // vllm-legacy

// Two DP ranks with EP, idle ranks running their dummy token: inside profile vllm.
Case vllm_case(V tokens, Path path = Path::local) {
  Case c = test::make_case({2, 1, true, false}, 8, std::move(tokens), path);
  c.idle_dummy = true;
  return c;
}

std::string why(const Case& c, Profile p) {
  const Status s = check_profile(c, p);
  return s.ok() ? "inside" : s.error().message;
}

TEST(Profile, NamesParseAndPrint) {
  for (Profile p : {main_profile(), legacy(), Profile::any()}) EXPECT_EQ(parse_profile(to_string(p)).value(), p);
  EXPECT_EQ(parse_profile("tgi").error().message, "profile: \"tgi\" is not one of vllm, vllm-legacy, any, sglang, sglang-miles, trtllm, ascend, ascend-mrv2-rounded, ascend-0.26");
}

TEST(Profile, CudagraphSizesAboveMAreOutsideVllm) {
  Case c = vllm_case({3, 1});
  c.padding = {PaddingMode::cudagraph, {4, 16}};
  EXPECT_EQ(why(c, main_profile()),
            "padding.cudagraph: size 16 is above max_num_tokens 8 (vLLM clamps capture sizes to "
            "max_num_batched_tokens: vllm/config/vllm.py, VllmConfig._set_cudagraph_sizes) under profile vllm");
  EXPECT_EQ(why(c, Profile::any()), "inside");
  // vLLM's own clamp: sizes above M dropped, M added.
  EXPECT_EQ(fit_to_profile(c, main_profile()).padding.cudagraph_sizes, (V{4, 8}));
  c.padding.cudagraph_sizes = {8, 16};
  EXPECT_EQ(fit_to_profile(c, main_profile()).padding.cudagraph_sizes, (V{8}));
}

TEST(Profile, IdleRanksRunADummyTokenAndAllIdleStepsDoNotRun) {
  Case c = vllm_case({3, 0});
  c.idle_dummy = false;
  EXPECT_EQ(why(c, main_profile()),
            "idle_dummy: must be true with dp > 1 (an idle DP rank runs one dummy token: "
            "vllm/v1/worker/gpu_worker.py, Worker.execute_dummy_batch -> _dummy_run(1)) under profile vllm");
  c.idle_dummy = true;
  EXPECT_EQ(derive_num_tokens_across_dp(c), (V{3, 1}));  // the dummy row is padding of rank 1
  EXPECT_EQ(why(c, main_profile()), "inside");
  c.tokens = {0, 0};
  EXPECT_EQ(why(c, legacy()),
            "tokens: every rank is idle; vLLM runs no step then (dummy batches run only while another DP rank has "
            "requests: vllm/v1/engine/core.py, DPEngineCoreProc) under profile vllm-legacy");
  EXPECT_EQ(fit_to_profile(c, main_profile()).tokens, (V{1, 0}));
  // A single rank needs no dummy flag, but still a token.
  Case single = test::make_case({1, 1, false, false}, 8, {2}, Path::single);
  EXPECT_EQ(why(single, main_profile()), "inside");
}

TEST(Profile, MicroBatchingOnlyWhereVllmDoesIt) {
  Case c = vllm_case({10, 7});
  c.padding = {PaddingMode::dp_max, {}};
  c.microbatches = 2;
  EXPECT_EQ(why(c, main_profile()), "inside");  // the [10, 7] fact of section 9.1
  c.path = Path::gathered;
  EXPECT_EQ(why(c, main_profile()),
            "microbatches: vLLM micro-batches only on the modular all-to-all kernel (path local or sp_shard), path "
            "is gathered (vLLM's dual batch overlap: vllm/v1/worker/ubatch_utils.py, docs/design/dbo.md) under "
            "profile vllm");
  c.path = Path::local;
  c.topology.ep = false;
  EXPECT_EQ(why(c, main_profile()),
            "microbatches: vLLM micro-batches only with expert parallelism (ep true) (vLLM's dual batch overlap: "
            "vllm/v1/worker/ubatch_utils.py, docs/design/dbo.md) under profile vllm");
  c.topology.ep = true;
  c.tokens = {10, 5};  // P = 10, q = 5: rank 1's last micro-batch holds only padding
  EXPECT_TRUE(vllm::last_ubatch_empty(10, 5, 2));
  EXPECT_FALSE(vllm::last_ubatch_empty(10, 6, 2));
  EXPECT_EQ(why(c, main_profile()),
            "microbatches: rank 1 has 5 real tokens of 10, so its last of 2 micro-batches holds none and it votes "
            "against micro-batching (vllm/v1/worker/ubatch_utils.py, is_last_ubatch_empty) under profile vllm");
  EXPECT_EQ(fit_to_profile(c, main_profile()).microbatches, 1);
  EXPECT_EQ(why(c, Profile::any()), "inside");
}

TEST(Profile, DpChunkingOnlyInVllmLegacy) {
  Case c = vllm_case({5, 2});
  c.dp_chunk = 2;
  EXPECT_EQ(why(c, main_profile()),
            "dp_chunk: vLLM main has no MoE DP chunking (removed by PR #39107; use profile vllm-legacy) under profile "
            "vllm");
  EXPECT_EQ(why(c, legacy()), "inside");
  EXPECT_FALSE(fit_to_profile(c, main_profile()).dp_chunk);
  EXPECT_EQ(fit_to_profile(c, legacy()).dp_chunk, 2);
}

TEST(Profile, MetadataOverridesOnlyInAny) {
  Case c = vllm_case({3, 2}, Path::gathered);
  c.metadata = MetadataOverride{V{3, 2}, false, {}};
  EXPECT_EQ(why(c, legacy()),
            "metadata: vLLM derives its DP metadata from the step, overrides need profile any under profile "
            "vllm-legacy");
  EXPECT_FALSE(fit_to_profile(c, main_profile()).metadata);
}

TEST(Profile, StandingNamesTheProfileAndWhyACaseLiesOutside) {
  Case c = vllm_case({3, 2});
  EXPECT_EQ(standing_of(c).text(), "profile vllm (the narrowest it lies in)");
  c.dp_chunk = 2;
  EXPECT_EQ(standing_of(c).text(), "profile vllm-legacy (the narrowest it lies in)");
  c.profile = main_profile();
  EXPECT_EQ(standing_of(c).text(),
            "profile vllm (named in the case): OUTSIDE it: dp_chunk: vLLM main has no MoE DP chunking (removed by "
            "PR #39107; use profile vllm-legacy) under profile vllm");
}

// fit_to_profile is a projection: valid in, valid and inside out, and a case already inside
// comes back unchanged.
RC_GTEST_PROP(Profile, FitToProfileGivesAValidCaseInsideAndFixesWhatIsInside, ()) {
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .extras = true});
  for (Profile p : {main_profile(), legacy(), Profile::any()}) {
    const Case fitted = fit_to_profile(c, p);
    RC_ASSERT(validate(fitted).ok());
    RC_ASSERT(in_profile(fitted, p));
    RC_ASSERT(fit_to_profile(fitted, p) == fitted);
    if (in_profile(c, p)) RC_ASSERT(fitted == c);
  }
}

// The rc::Gen source stays inside the profile it is asked for.
RC_GTEST_PROP(Profile, TheRapidCheckGeneratorStaysInsideItsProfile, ()) {
  const Profile p = *rc::gen::element(main_profile(), legacy(), Profile::any());
  const Case c = *test::gen_valid_case({.microbatches = true, .dp_chunk = true, .profile = p});
  RC_ASSERT(validate(c).ok());
  RC_ASSERT(in_profile(c, p));
}

}  // namespace
}  // namespace r3
