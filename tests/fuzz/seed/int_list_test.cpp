// The bounded integer readers of deployments and metadata logs (fuzz/seed/int_list.hpp).
#include "fuzz/seed/int_list.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace r3 {
namespace {

using json = nlohmann::json;

std::string error_of(const Result<std::vector<int64_t>>& r) { return r ? "(no error)" : r.error().message; }
std::string error_of(const Result<int64_t>& r) { return r ? "(no error)" : r.error().message; }

TEST(IntList, ReadsUpToItsBound) {
  EXPECT_EQ(int_list(json::parse("[1, -2, 3]"), "x", 3).value(), (std::vector<int64_t>{1, -2, 3}));
  EXPECT_EQ(int_list(json::array(), "x", 0).value(), std::vector<int64_t>{});
}

TEST(IntList, ALongerListIsRefusedWithItsLengthAndTheBound) {
  EXPECT_EQ(error_of(int_list(json::parse("[1, 2, 3, 4]"), "traffic.prefill_lengths", 3)),
            "traffic.prefill_lengths: 4 entries, at most 3");
  EXPECT_EQ(error_of(int_list(json::parse("[1, 2, 3]"), "cudagraph", 2, "(why)")), "cudagraph: 3 entries, at most 2 (why)");
}

TEST(IntList, NamesTheEntryThatIsNoIntegerOrBeyondSixtyFourBits) {
  EXPECT_EQ(error_of(int_list(json::parse("[1, 2.5]"), "x", 4)), "x[1]: expected an integer");
  EXPECT_EQ(error_of(int_list(json::parse("{}"), "x", 4)), "x: expected a list of integers");
  EXPECT_EQ(error_of(int_list(json::parse("[18446744073709551615]"), "x", 4)),
            "x[0]: 18446744073709551615 is out of range for a 64-bit integer");
}

TEST(BoundedInt, NamesTheFieldTheValueAndTheRange) {
  EXPECT_EQ(bounded_int(json(7), "n", 1, 8).value(), 7);
  EXPECT_EQ(error_of(bounded_int(json(1000000000000), "cuda_graph.decode_max_bs", 1, 16777216, "(a batch size)")),
            "cuda_graph.decode_max_bs: 1000000000000 is out of range [1, 16777216] (a batch size)");
  EXPECT_EQ(error_of(bounded_int(json(-1), "step", 0, 5)), "step: -1 is out of range [0, 5]");
  EXPECT_EQ(error_of(bounded_int(json("7"), "step", 0, 5)), "step: expected an integer");
  EXPECT_EQ(error_of(bounded_int(json::parse("9223372036854775808"), "step", 0, 5)),
            "step: 9223372036854775808 is out of range for a 64-bit integer");
}

}  // namespace
}  // namespace r3
