// The words the commands r3fuzz prints for pasting are made of (fuzz/campaign/shell_quote.hpp):
// each is exactly one shell word that /bin/sh reads back as the text it quotes, and the program
// word names the r3fuzz that was run.
#include "fuzz/campaign/shell_quote.hpp"

#include <sys/wait.h>

#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace r3 {
namespace {

// What /bin/sh makes of `words`: each word it reads, on a line of its own.
std::string as_sh_reads(const std::string& words) {
  const std::string command = "printf '%s\\n' " + words;
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) return "(popen failed)";
  std::string out;
  char buf[256];
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? out : "(sh failed: " + out + ")";
}

TEST(ShellQuote, LeavesLiteralWordsAsTheyAreAndQuotesTheRest) {
  EXPECT_EQ(shell_quote("r3fuzz-out/finding-1-capacity.json"), "r3fuzz-out/finding-1-capacity.json");
  EXPECT_EQ(shell_quote("a b.json"), "'a b.json'");
  EXPECT_EQ(shell_quote("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_quote(""), "''");
  EXPECT_EQ(shell_quote("$(rm -rf x)`y`;*"), "'$(rm -rf x)`y`;*'");
}

TEST(ShellQuote, ShReadsEachQuotedWordBackAsOneWordWithItsText) {
  for (const std::string word : {"plain", "a b", "it's", "'", "''", "a\\b", "$HOME", "`id`", "x;y|z&", "*", "~", "",
                                 "new\nline", "\"double\"", "-n"}) {
    EXPECT_EQ(as_sh_reads("x " + shell_quote(word) + " y"), "x\n" + word + "\ny\n") << word;
  }
}

// The program word: the path that was run when argv[0] holds a '/', quoted like any word;
// "r3fuzz" for a bare name (found on PATH, where "r3fuzz" is found again) and for none.
TEST(ProgramWord, IsThePathThatWasRunOrR3fuzz) {
  EXPECT_EQ(program_word("r3fuzz"), "r3fuzz");
  EXPECT_EQ(program_word(""), "r3fuzz");
  EXPECT_EQ(program_word("r3fuzz-renamed"), "r3fuzz");
  EXPECT_EQ(program_word("build/default/fuzz/cli/r3fuzz"), "build/default/fuzz/cli/r3fuzz");
  EXPECT_EQ(program_word("./r3fuzz"), "./r3fuzz");
  EXPECT_EQ(program_word("/opt/r3/bin/r3fuzz"), "/opt/r3/bin/r3fuzz");
  EXPECT_EQ(program_word("/tmp/my tools/it's/r3fuzz"), "'/tmp/my tools/it'\\''s/r3fuzz'");
  EXPECT_EQ(as_sh_reads(program_word("/tmp/my tools/it's/r3fuzz") + " replay"), "/tmp/my tools/it's/r3fuzz\nreplay\n");
  EXPECT_EQ(as_sh_reads(program_word("../a $b/\"c\"/r3fuzz")), "../a $b/\"c\"/r3fuzz\n");
}

}  // namespace
}  // namespace r3
