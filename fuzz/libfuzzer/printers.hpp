// The printers target's body: fuzzed texts (a note, an adapter's branch and error, an
// implementation name) and a fuzzed case through every printer r3fuzz has that takes data: the
// explanation (text and JSON), the campaign report (text, JSON and JUnit XML), the regression
// entry and GoogleTest TEST, and the source-text escapes the pytest exporter uses. It checks
// three things (docs/SECURITY.md rules 5 and 6, "One terminal escape", "One XML character
// filter"), aborting through R3_CHECK when one breaks:
//   - nothing a terminal acts on reaches a terminal stream: no C0 control but '\n', no DEL, no C1
//     control (U+009B, U+0085), no U+2028/U+2029, no byte outside well-formed UTF-8; the data
//     adds no line, and terminal_safe of a text alone (main()'s error line) holds no '\n' at all;
//   - the JUnit XML holds only characters XML 1.0 allows (no U+FFFE, U+FFFF, lone surrogate or
//     C0 control), and the filter leaves no markup character of the data unescaped;
//   - in generated source, every data text stays inside its comment or string literal: the file,
//     lexed again (source_lexer.hpp), has the skeleton it has with harmless texts.
#pragma once

#include <cstdint>
#include <span>

namespace r3 {

// Input: four length bytes, then the four texts of those lengths (note, branch, error, impl),
// then a binary case (concrete limits; a fixed small case when it does not decode).
void exercise_printers(std::span<const uint8_t> bytes);

}  // namespace r3
