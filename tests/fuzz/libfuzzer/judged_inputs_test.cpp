#include "fuzz/libfuzzer/judged_inputs.hpp"

#include <string>

#include <gtest/gtest.h>

namespace r3 {
namespace {

std::span<const uint8_t> bytes(const std::string& text) {
  return {reinterpret_cast<const uint8_t*>(text.data()), text.size()};
}

TEST(JudgedInputs, AnswersExactlyTheBytesItWasGiven) {
  JudgedInputs judged(16, 1024);
  EXPECT_EQ(judged.find(bytes("abc")), std::nullopt);
  judged.remember(bytes("abc"), 0);
  judged.remember(bytes("abd"), -1);
  judged.remember(bytes(""), -1);
  EXPECT_EQ(judged.find(bytes("abc")), 0);
  EXPECT_EQ(judged.find(bytes("abd")), -1);
  EXPECT_EQ(judged.find(bytes("")), -1);
  // A prefix, an extension and a same-length neighbour are other inputs.
  EXPECT_EQ(judged.find(bytes("ab")), std::nullopt);
  EXPECT_EQ(judged.find(bytes("abcd")), std::nullopt);
  EXPECT_EQ(judged.find(bytes("abe")), std::nullopt);
  EXPECT_EQ(judged.size(), 3u);
  EXPECT_EQ(judged.resets(), 0u);
}

TEST(JudgedInputs, RemembersManyInputsThroughCollidingSlots) {
  // 500 inputs in 1024 slots: probing past occupied slots must still find each one.
  JudgedInputs judged(500, 1 << 16);
  for (int i = 0; i < 500; ++i) judged.remember(bytes("case " + std::to_string(i)), i % 2 == 0 ? 0 : -1);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(judged.find(bytes("case " + std::to_string(i))), i % 2 == 0 ? 0 : -1) << i;
  EXPECT_EQ(judged.find(bytes("case 500")), std::nullopt);
  EXPECT_EQ(judged.size(), 500u);
}

TEST(JudgedInputs, ForgetsEverythingWhenItHoldsAsManyInputsAsAllowed) {
  JudgedInputs judged(2, 1024);
  judged.remember(bytes("one"), 0);
  judged.remember(bytes("two"), 0);
  judged.remember(bytes("three"), -1);
  EXPECT_EQ(judged.resets(), 1u);
  EXPECT_EQ(judged.size(), 1u);
  EXPECT_EQ(judged.find(bytes("one")), std::nullopt);
  EXPECT_EQ(judged.find(bytes("two")), std::nullopt);
  EXPECT_EQ(judged.find(bytes("three")), -1);
}

TEST(JudgedInputs, ForgetsEverythingWhenTheBytesRunOutAndKeepsNoInputLargerThanThem) {
  JudgedInputs judged(16, 8);
  judged.remember(bytes("12345"), 0);
  judged.remember(bytes("6789"), -1);  // 9 bytes in all: over the 8
  EXPECT_EQ(judged.resets(), 1u);
  EXPECT_EQ(judged.find(bytes("12345")), std::nullopt);
  EXPECT_EQ(judged.find(bytes("6789")), -1);
  judged.remember(bytes("123456789"), 0);  // larger than all the bytes: judged every time
  EXPECT_EQ(judged.find(bytes("123456789")), std::nullopt);
  EXPECT_EQ(judged.find(bytes("6789")), -1) << "an input too large to keep costs nothing else";
  EXPECT_EQ(judged.resets(), 1u);
}

TEST(JudgedInputs, RememberingTwiceKeepsTheFirstAnswer) {
  JudgedInputs judged(4, 64);
  judged.remember(bytes("same"), 0);
  judged.remember(bytes("same"), -1);
  EXPECT_EQ(judged.find(bytes("same")), 0);
  EXPECT_EQ(judged.size(), 1u);
}

}  // namespace
}  // namespace r3
