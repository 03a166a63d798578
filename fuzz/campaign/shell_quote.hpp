// Commands r3fuzz prints for the user to paste (replay a finding, export it) name the program and
// files, and a path with a space or a quote must survive the paste: every such word goes through here.
#pragma once

#include <string>
#include <string_view>

namespace r3 {

// `word` as one POSIX shell word: as it is when every character is one the shell takes
// literally (letters, digits, and - _ . / + : , = @ %), else in single quotes with each '
// written '\''. "a b.json" -> 'a b.json'.
inline std::string shell_quote(std::string_view word) {
  auto literal = [](char ch) {
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           std::string_view("-_./+:,=@%").find(ch) != std::string_view::npos;
  };
  bool plain = !word.empty();
  for (char ch : word) plain = plain && literal(ch);
  if (plain) return std::string(word);
  std::string quoted = "'";
  for (char ch : word) quoted += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
  return quoted + "'";
}

// The first word of those commands: the program as it was run, so a line pasted into a shell runs
// the r3fuzz that printed it. An argv[0] holding a '/' is the path that was run
// (build/default/fuzz/cli/r3fuzz), given as one shell word. Any other name was looked up on PATH
// and is printed as "r3fuzz", the name installed there; so is an empty one (started without).
inline std::string program_word(std::string_view argv0) {
  return argv0.find('/') == std::string_view::npos ? std::string("r3fuzz") : shell_quote(argv0);
}

}  // namespace r3
