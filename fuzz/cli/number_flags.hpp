// Validators for numeric flags, defined once and shared by every command. CLI11 converts
// integers with strtoull/strtoll in base 0: "-1" wraps to 2^64-1, an overflow saturates
// silently, "010" reads as octal; and its range checks print doubles in full (a 310-digit
// DBL_MAX). These check the text first, in decimal, and say what was wrong in a few words;
// the value each lets through is rewritten as plain decimal so the conversion agrees.
#pragma once

#include <cstdint>
#include <limits>

#include <CLI/CLI.hpp>

namespace r3 {

// A whole number in [lo, hi]: "--seed: -1 is out of range [0, 2^64-1]",
// "--cases: not a whole number: abc".
CLI::Validator unsigned_in(uint64_t lo, uint64_t hi = std::numeric_limits<uint64_t>::max());
CLI::Validator signed_in(int64_t lo, int64_t hi = std::numeric_limits<int64_t>::max());

// A duration in seconds: finite, above 0, at most `max`: "--time: not a number: abc",
// "--time: nan is not a finite number", "--adapter-timeout: 1e300 is out of range (0, 3600]".
CLI::Validator seconds_up_to(double max);

}  // namespace r3
