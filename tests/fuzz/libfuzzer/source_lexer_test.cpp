#include "fuzz/libfuzzer/source_lexer.hpp"

#include <gtest/gtest.h>

namespace r3 {
namespace {

TEST(SourceLexer, CppCommentsAndLiteralsBecomeOneLetter) {
  EXPECT_EQ(cpp_skeleton("int a = 1; // note\nauto s = \"x\\\"y\"; /* b */ char c = '\\'';\n"),
            "int a = 1; C\nauto s = S; C char c = S;\n");
  EXPECT_EQ(cpp_skeleton("auto k = R\"r3case({\"a\": \")\"})r3case\";\n"), "auto k = S;\n");
  EXPECT_EQ(cpp_skeleton("// spliced \\\nstill comment\nint x;\n"), "C\nint x;\n");
}

// The defect of issue 22 item 2, as the lexer sees it: a line end in the comment makes code.
TEST(SourceLexer, AnInjectedLineShowsUpAsCode) {
  const std::string branch = "x\nint injected = system(\"touch /tmp/INJ\");\n//";
  EXPECT_EQ(cpp_skeleton("// Regression: " + branch + "\nTEST() {}\n"), "C\nint injected = system(S);\nC\nTEST() {}\n");
  EXPECT_EQ(cpp_skeleton("auto s = \"a\nb\";"), std::nullopt);  // a raw line end in a literal
  EXPECT_EQ(cpp_skeleton("/* open"), std::nullopt);
}

TEST(SourceLexer, PythonCommentsAndStrings) {
  EXPECT_EQ(python_skeleton("x = 'a\\'b'  # c\ny = \"\"\"t\n\"\"\"\n"), "x = S  C\ny = S\n");
  EXPECT_EQ(python_skeleton("x = \"a\nb\""), std::nullopt);
  EXPECT_EQ(python_skeleton("# a\rimport os\n"), "C\rimport os\n");  // \r ends a Python comment
}

}  // namespace
}  // namespace r3
