// The planner (gpu/detail/plan.cpp) reuses its working storage: planning a case into a cleared
// plan, once the thread has planned it before, allocates only the blocks the planned case keeps
// (its ranks, their decisions and the policy's copies, which the outcome takes over, and the
// gathered tensors' list). Before the storage was reused these cases took 26 to 54 more (4 to 10
// a rank).
#include "gpu/detail/plan.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "gpu_test_support.hpp"
#include "reference/engines/vllm/policy.hpp"

// Counts this thread's operator new calls while a counter is armed (test-local: the binary's
// other tests leave it unarmed).
namespace {
thread_local long* armed_counter = nullptr;
}  // namespace

void* operator new(std::size_t n) {
  if (armed_counter) ++*armed_counter;
  if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
  throw std::bad_alloc();
}
// The replacement operator new above allocates with malloc, so free is the matching release. GCC
// cannot see that through the replacement and warns (-Wmismatched-new-delete, GCC bug 103993).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
#endif
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

namespace r3::gpu::detail {
namespace {

// Heap blocks a planned case owns (a std::string's own buffer only past its inline capacity).
long owned_blocks(const PlannedCase& planned) {
  long blocks = (planned.ranks.capacity() > 0) + (planned.gathered.capacity() > 0);
  for (const PlannedRank& rank : planned.ranks) {
    blocks += rank.calls.capacity() > 0;
    for (const CaptureDecision& d : rank.calls)
      blocks += (d.copies.capacity() > 0) + (d.error.capacity() > std::string().capacity());
  }
  return blocks;
}

long allocations_planning_again(const Case& c, const CapturePolicy& policy) {
  const Step step = testing::step_of(c);
  const PlanSettings settings{&policy, Selection::host_decision, Fault::none};
  DevicePlan plan;
  EXPECT_TRUE(plan_case(c, step, settings, plan).ok());  // the thread's storage grows to fit
  plan.clear();
  long count = 0;
  armed_counter = &count;
  Result<PlannedCase> planned = plan_case(c, step, settings, plan);
  armed_counter = nullptr;
  EXPECT_TRUE(planned.ok());
  return planned.ok() ? count - owned_blocks(*planned) : -1;
}

TEST(PlanCase, PlanningACaseAgainAllocatesOnlyWhatThePlannedCaseKeeps) {
  const auto r3_fixed = make_r3_fixed_policy();
  const auto vllm = make_vllm_50874_policy();
  const std::vector<Case> cases = {
      testing::small_case(4, 2, false, 8, {3, 1, 4, 0}, Path::gathered, /*monolithic=*/true),  // all-gatherv, replay
      testing::small_case(2, 2, true, 8, {5, 3}, Path::sp_shard),                              // TP all-gathers
      testing::small_case(3, 2, false, 6, {6, 2, 0}, Path::local),
      testing::small_case(1, 4, false, 5, {5}, Path::single, /*monolithic=*/true),
  };
  for (const CapturePolicy* policy : {r3_fixed.get(), vllm.get()})
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(policy->name()) + " dp " + std::to_string(c.topology.dp) + " path " +
                   std::string(to_string(c.path)));
      // One beyond what it keeps: reference/provenance.cpp's provenance_fits derives the case's
      // DP token counts into a vector of its own.
      EXPECT_LE(allocations_planning_again(c, *policy), 1);
    }
}

}  // namespace
}  // namespace r3::gpu::detail
