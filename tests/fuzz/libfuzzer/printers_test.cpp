#include "fuzz/libfuzzer/printers.hpp"

#include <filesystem>
#include <fstream>
#include <iterator>
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

// Issue 27's inputs: C1 controls (U+009B and a raw 0x9b, the 8-bit CSI; U+0085, NEL), Unicode
// line ends, a forged line, and what XML 1.0 forbids (U+FFFE, U+FFFF, a lone surrogate, C0).
TEST(Printers, C1LineEndsAndXmlForbiddenCharactersPassEveryPrinter) {
  exercise_printers(input("note \xc2\x9b" "2J \x9b" "2J \xc2\x85 \xe2\x80\xa8 \xe2\x80\xa9", "b\xc2\x85" "FAKE",
                          "err\nFAKE LINE: all good\xe2\x80\xa8", "impl\xc2\x9b\x9b"));
  exercise_printers(input("\xef\xbf\xbe\xef\xbf\xbf", "b\xef\xbf\xbf", "\xed\xa0\x80\x01\x0b\xc0\xaf", "i\xef\xbf\xbf"));
}

// The printers target's seeds (fuzz/libfuzzer/seeds/printers-*.bin, its corpus in ci-fuzz.sh and
// .clusterfuzzlite/build.sh) hold those inputs; each passes.
TEST(Printers, TheSeedsPass) {
  const std::filesystem::path seeds = std::filesystem::path(R3FUZZ_SOURCE_DIR) / "fuzz/libfuzzer/seeds";
  int seen = 0;
  for (const auto& entry : std::filesystem::directory_iterator(seeds)) {
    if (!entry.path().filename().string().starts_with("printers-")) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    exercise_printers(bytes);
    ++seen;
  }
  EXPECT_EQ(seen, 2);
}

TEST(Printers, AFuzzedCaseIsRenderedToo) {
  Case c = starting_case();  // dp 2, tp 2, EP and SP on the gathered path
  c.monolithic = true;
  exercise_printers(input("n\x1b", "br\r", "err", "impl", case_to_binary(c)));
}

}  // namespace
}  // namespace r3
