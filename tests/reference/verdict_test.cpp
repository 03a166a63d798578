#include "reference/verdict.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace r3 {
namespace {

TEST(Verdict, EveryVerdictRoundTripsThroughItsName) {
  std::vector<std::string> names;
  for (Verdict v : all_verdicts()) {
    names.emplace_back(to_string(v));
    EXPECT_EQ(parse_verdict(to_string(v)).value(), v);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"pass", "wrong_rows", "overflow", "capacity", "spurious_reject",
                                             "missed_reject", "collective_mismatch", "adapter_error"}));
}

TEST(Verdict, UnknownNameListsTheValidOnes) {
  EXPECT_EQ(parse_verdict("boom").error().message,
            "verdict: \"boom\" is not one of pass, wrong_rows, overflow, capacity, spurious_reject, missed_reject, "
            "collective_mismatch, adapter_error");
  EXPECT_FALSE(parse_verdict("").ok());
}

TEST(Severity, NoneIsTheEmptyTextAndJsonNull) {
  std::vector<std::string> names;
  for (Severity s : all_severities()) {
    names.emplace_back(to_string(s));
    EXPECT_EQ(parse_severity(to_string(s)).value(), s);
  }
  EXPECT_EQ(names, (std::vector<std::string>{"", "failure", "latent"}));
  EXPECT_EQ(parse_severity("null").value(), Severity::none);
  EXPECT_EQ(parse_severity("fatal").error().message, "severity: \"fatal\" is not one of failure, latent, null");
}

}  // namespace
}  // namespace r3
