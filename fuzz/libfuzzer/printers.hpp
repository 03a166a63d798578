// The printers target's body: fuzzed texts (a note, an adapter's branch and error, an
// implementation name) and a fuzzed case through every printer r3fuzz has that takes data: the
// explanation (text and JSON), the campaign report (text and JSON), the regression entry and
// GoogleTest TEST, and the source-text escapes the pytest exporter uses. It checks two things
// (docs/SECURITY.md rules 5 and 6), aborting through R3_CHECK when either breaks:
//   - no control byte but '\n' reaches a terminal stream, and the data adds no line;
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
