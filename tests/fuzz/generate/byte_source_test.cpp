#include "fuzz/generate/byte_source.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "fuzz/generate/case_domain.hpp"
#include "reference/engines/vllm/model.hpp"

namespace r3 {
namespace {

TEST(ByteSource, ReadsAsManyBytesAsTheRangeNeedsAndFoldsThem) {
  const std::vector<uint8_t> bytes = {7, 1, 2, 200};
  ByteSource source(bytes);
  EXPECT_EQ(source.choose({Field::dp, 0, 5, 5}), 5);             // one value: no byte
  EXPECT_EQ(source.consumed(), 0u);
  EXPECT_EQ(source.choose({Field::dp, 0, 1, 4}), 1 + 7 % 4);     // one byte
  EXPECT_EQ(source.choose({Field::tokens, 0, 0, 1000}), 258);    // two bytes, 0x0102
  EXPECT_EQ(source.choose({Field::tokens, 1, 0, 1000}), 0 + 200);  // the bytes run out: what is left
  EXPECT_EQ(source.choose({Field::tokens, 2, 3, 9}), 3);          // then every choice is lo
  EXPECT_EQ(source.consumed(), 4u);
}

TEST(ByteSource, NoBytesGiveTheSimplestCase) {
  const std::vector<uint8_t> none;
  Case simplest;
  simplest.tokens = {0};
  ByteSource a(none);
  EXPECT_EQ(draw(a, {Profile::any(), bounds_of(SizeClass::tiny), vllm::engine()}), simplest);
  simplest.tokens = {1};  // vLLM runs no step with every rank idle
  ByteSource b(none);
  EXPECT_EQ(draw(b, {kDefaultProfile, bounds_of(SizeClass::tiny)}), simplest);
}

TEST(ByteSource, TheFirstByteIsTheTpChoice) {
  const std::vector<uint8_t> bytes = {3};
  ByteSource source(bytes);
  const Case c = draw(source, {Profile::any(), bounds_of(SizeClass::tiny), vllm::engine()});
  EXPECT_EQ(c.topology, (Topology{1, 4, false, false}));
  EXPECT_EQ(c.tokens, std::vector<int64_t>{0});
}

}  // namespace
}  // namespace r3
