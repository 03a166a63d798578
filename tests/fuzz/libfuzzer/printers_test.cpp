#include "fuzz/libfuzzer/printers.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "fuzz/codec/case_binary.hpp"
#include "fuzz/libfuzzer/mutator.hpp"

namespace r3 {
namespace {

std::vector<uint8_t> input(const std::string& note, const std::string& branch, const std::string& error,
                           const std::string& impl, const std::vector<uint8_t>& case_bytes = {}) {
  std::vector<uint8_t> out = {static_cast<uint8_t>(note.size()), static_cast<uint8_t>(branch.size()),
                              static_cast<uint8_t>(error.size()), static_cast<uint8_t>(impl.size())};
  for (const std::string* s : {&note, &branch, &error, &impl}) out.insert(out.end(), s->begin(), s->end());
  out.insert(out.end(), case_bytes.begin(), case_bytes.end());
  return out;
}

// The inputs of issue 22: each printer holds (the target aborts otherwise).
TEST(Printers, IssueInputsPassEveryPrinter) {
  const std::string inject = "x\nint injected = system(\"touch /tmp/INJ\");\n//";
  exercise_printers(input("note\x1b[2J\n", inject, "e\x1b[2J\nFAKE: pass", "r3-fixed\x1b[2J"));
  exercise_printers(input(")r3case\"", "b\\", std::string("\0\x7f\xff", 3), "a\"b"));
  exercise_printers({});
  exercise_printers(input("", "", "", ""));
}

TEST(Printers, AFuzzedCaseIsRenderedToo) {
  Case c = starting_case();  // dp 2, tp 2, EP and SP on the gathered path
  c.monolithic = true;
  exercise_printers(input("n\x1b", "br\r", "err", "impl", case_to_binary(c)));
}

}  // namespace
}  // namespace r3
