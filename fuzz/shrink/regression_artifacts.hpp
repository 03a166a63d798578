// What a shrunk failure leaves behind for the project: a corpus/regression/ entry (the case
// with a note and its "expect" field) and a ready-to-paste GoogleTest TEST that replays it.
#pragma once

#include <string>
#include <string_view>

#include "fuzz/oracle/verdict.hpp"
#include "reference/case.hpp"

namespace r3 {

// How the implementation was named on the command line, so the test can build it again.
struct ImplementationSpec {
  std::string name;   // --impl, as given to make_implementation()
  std::string fault;  // --fault, "" for none
  std::string backend;
};

// The minimized case with "note" and "expect" {impl, verdict, severity} filled in. The
// expectation's impl is the spec's name, with "+<fault>" when a fault was injected.
Case regression_entry(const Case& minimal, const Judgement& judgement, const ImplementationSpec& spec,
                      std::string_view note);

// "VllmPre50874_SpuriousReject_Gathered_Error": the signature in GoogleTest's name alphabet.
std::string regression_test_name(const Signature& signature, std::string_view fault);

// A TEST(Regression, <name>) that parses the case from an inline raw string, builds the
// implementation through the registry, judges it and asserts verdict, severity and branch.
// It needs the r3fuzz_codec, r3fuzz_campaign and r3fuzz_shrink libraries.
std::string regression_test_text(const Case& entry, const Judgement& judgement, const ImplementationSpec& spec);

}  // namespace r3
