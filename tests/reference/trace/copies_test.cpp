// The copies record's generic rules (reference/trace/copies.hpp) and their place in validate_trace.
#include "reference/trace/copies.hpp"

#include <gtest/gtest.h>

#include "reference/trace/lifecycle.hpp"
#include "tests/reference/trace/example_trace.hpp"

namespace r3 {
namespace {

// issue 29's example: 5 steps.
Trace with_copies(std::vector<CopyCompletion> copies) {
  Trace t = test::example_trace();
  t.copies = std::move(copies);
  return t;
}

std::string error_of(const Trace& t) {
  const Status s = check_copies(t);
  return s.ok() ? "ok" : s.error().message;
}

TEST(Copies, ARecordOfLateCopiesIsValid) {
  EXPECT_EQ(error_of(with_copies({})), "ok");
  EXPECT_EQ(error_of(with_copies({{0, 2}, {1, 5}, {3, 5}})), "ok");
}

TEST(Copies, EachBrokenEntryIsNamed) {
  EXPECT_EQ(error_of(with_copies({{0, 2}, {3, 2}})), "copies[1].done_before_step: 2 is not after step 3");
  EXPECT_EQ(error_of(with_copies({{3, 3}})), "copies[0].done_before_step: 3 is not after step 3");
  EXPECT_EQ(error_of(with_copies({{3, 4}})),
            "copies[0].done_before_step: 4 is step 3's in-order completion; leave the entry out");
  EXPECT_EQ(error_of(with_copies({{1, 6}})),
            "copies[0].done_before_step: 6 is past the end of the trace (5 steps; 5 is \"at the end\")");
  EXPECT_EQ(error_of(with_copies({{5, 6}})), "copies[0].step: 5 is not a step of the trace (it has 5)");
  EXPECT_EQ(error_of(with_copies({{-1, 2}})), "copies[0].step: -1 is not a step of the trace (it has 5)");
  EXPECT_EQ(error_of(with_copies({{1, 3}, {1, 4}})), "copies[1].step: step 1 already has an entry (copies[0])");
  EXPECT_EQ(error_of(with_copies({{2, 4}, {1, 3}})),
            "copies[1].step: 1 comes after copies[0].step 2 (entries go in step order)");
}

TEST(Copies, CompletionStepsAreInOrderWithoutAnEntry) {
  EXPECT_EQ(completion_steps(with_copies({})), (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(completion_steps(with_copies({{1, 3}, {2, 5}})), (std::vector<int>{1, 3, 5, 4, 5}));
}

TEST(Copies, WindowsBoundTheLatestCompletion) {
  const Trace t = with_copies({});
  EXPECT_EQ(in_order_window(t, "inline").latest, (std::vector<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(lagging_window(t, 1, "lag").latest, (std::vector<int>{2, 3, 4, 5, 5}));
  EXPECT_EQ(lagging_window(t, 3, "lag").latest, (std::vector<int>{4, 5, 5, 5, 5}));
  EXPECT_EQ(lagging_window(t, 1, "lag").rule, "lag");
}

TEST(Copies, ARecordOutsideTheWindowNamesTheEntryAndTheRule) {
  const CopyWindow one = lagging_window(with_copies({}), 1, "RULE");
  EXPECT_TRUE(check_copies_within(with_copies({{0, 2}, {3, 5}}), one).ok());
  const Status late = check_copies_within(with_copies({{0, 2}, {1, 4}}), one);
  ASSERT_FALSE(late.ok());
  EXPECT_EQ(late.error().message, "copies[1].done_before_step: 4 is past what step 1's copy allows (at most 3): RULE");
  const Status inline_only = check_copies_within(with_copies({{0, 2}}), in_order_window(with_copies({}), "INLINE"));
  ASSERT_FALSE(inline_only.ok());
  EXPECT_EQ(inline_only.error().message,
            "copies[0].done_before_step: 2 is past what step 0's copy allows (at most 1, in order): INLINE");
}

TEST(Copies, ValidateTraceChecksTheRecord) {
  EXPECT_TRUE(validate_trace(with_copies({{1, 3}})).ok());
  const Result<Timeline> bad = validate_trace(with_copies({{1, 3}, {3, 2}}));
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "copies[1].done_before_step: 2 is not after step 3");
}

}  // namespace
}  // namespace r3
