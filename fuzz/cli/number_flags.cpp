#include "fuzz/cli/number_flags.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <system_error>

namespace r3 {
namespace {

// 2^64-1 and 2^63-1 in the short form a reader checks at a glance.
template <class T>
std::string bound_text(T value) {
  if constexpr (std::is_unsigned_v<T>) {
    if (value == std::numeric_limits<uint64_t>::max()) return "2^64-1";
  } else {
    if (value == std::numeric_limits<int64_t>::max()) return "2^63-1";
    if (value == std::numeric_limits<int64_t>::min()) return "-2^63";
  }
  return std::to_string(value);
}

// Optional '-', then decimal digits only (no '+', spaces, hex or exponent).
bool is_decimal_integer(const std::string& text) {
  const size_t first = !text.empty() && text[0] == '-' ? 1 : 0;
  if (text.size() == first) return false;
  for (size_t i = first; i < text.size(); ++i)
    if (text[i] < '0' || text[i] > '9') return false;
  return true;
}

template <class T>
CLI::Validator integer_in(T lo, T hi) {
  const std::string range = "[" + bound_text(lo) + ", " + bound_text(hi) + "]";
  return CLI::Validator(
      [lo, hi, range](std::string& text) -> std::string {
        if (!is_decimal_integer(text)) return "not a whole number: " + text;
        const std::string out_of_range = text + " is out of range " + range;
        // from_chars takes no '-' for unsigned types: a negative value is below any lo.
        if (std::is_unsigned_v<T> && text[0] == '-') return out_of_range;
        T value{};
        const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (ec != std::errc() || end != text.data() + text.size() || value < lo || value > hi) return out_of_range;
        text = std::to_string(value);  // "007" would otherwise convert as octal
        return {};
      },
      range, "INTEGER" + range);
}

}  // namespace

CLI::Validator unsigned_in(uint64_t lo, uint64_t hi) { return integer_in<uint64_t>(lo, hi); }
CLI::Validator signed_in(int64_t lo, int64_t hi) { return integer_in<int64_t>(lo, hi); }

CLI::Validator seconds_up_to(double max) {
  char max_text[32];
  std::snprintf(max_text, sizeof max_text, "%.15g", max);
  const std::string range = "(0, " + std::string(max_text) + "]";
  return CLI::Validator(
      [max, range](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = text.empty() ? 0 : std::strtod(text.c_str(), &end);
        if (text.empty() || end != text.c_str() + text.size()) return "not a number: " + text;
        if (!std::isfinite(value)) return text + " is not a finite number of seconds";
        if (value <= 0 || value > max) return text + " is out of range " + range + " seconds";
        return {};
      },
      "SEC in " + range, "seconds" + range);
}

}  // namespace r3
