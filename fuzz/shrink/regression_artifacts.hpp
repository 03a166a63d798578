// What a shrunk failure leaves behind for the project: a corpus/regression/ entry (the case
// with a note and its "expect" field) and a ready-to-paste GoogleTest TEST that replays it.
#pragma once

#include <string>
#include <string_view>

#include "fuzz/oracle/judge_case.hpp"
#include "fuzz/oracle/verdict.hpp"
#include "reference/case.hpp"

namespace r3 {

// How the implementation was named on the command line, so the test can build it again.
struct ImplementationSpec {
  std::string name;   // --impl, as given to make_implementation()
  std::string fault;    // the fault injected, "" for none: built as name+fault (IMPL+FAULT)
  std::string backend;  // --backend
};

// The minimized case with "note" and "expect" {impl, verdict, severity} filled in. The
// expectation's impl is the spec's name, with "+<fault>" when a fault was injected.
Case regression_entry(const Case& minimal, const Judgement& judgement, const ImplementationSpec& spec,
                      std::string_view note);

// "VllmPre50874_SpuriousReject_Gathered_Error": the signature in GoogleTest's name alphabet.
std::string regression_test_name(const Signature& signature, std::string_view fault);

// A TEST(Regression, <name>) that parses the case from an inline raw string, builds the
// implementation (the registry, from IMPL+FAULT), judges it with judge_with()
// in the mode the failure was found in, and asserts verdict, severity and branch.
std::string regression_test_text(const Case& entry, const Judgement& judgement, const ImplementationSpec& spec,
                                 JudgeMode how);

}  // namespace r3
