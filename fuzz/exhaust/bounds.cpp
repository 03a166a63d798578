#include "fuzz/exhaust/bounds.hpp"

namespace r3 {
namespace {

// Beyond these the enumeration runs for hours; the limits keep a typo from doing that.
constexpr int kMaxDp = 8;
constexpr int kMaxTp = 8;
constexpr int64_t kMaxTokens = 32;
constexpr int64_t kMaxM = 32;

Status in_range(const char* flag, int64_t value, int64_t lo, int64_t hi) {
  if (value >= lo && value <= hi) return ok_status();
  return Error{std::string(flag) + ": " + std::to_string(value) + " is out of range [" + std::to_string(lo) + ", " +
               std::to_string(hi) + "]"};
}

}  // namespace

Status validate(const ExhaustBounds& b) {
  R3_TRY_STATUS(in_range("--max-dp", b.max_dp, 1, kMaxDp));
  R3_TRY_STATUS(in_range("--max-tp", b.max_tp, 1, kMaxTp));
  R3_TRY_STATUS(in_range("--max-tokens", b.max_tokens, 0, kMaxTokens));
  R3_TRY_STATUS(in_range("--max-m", b.max_m, 1, kMaxM));
  R3_TRY_STATUS(in_range("--layers", b.layers, 1, 64));
  R3_TRY_STATUS(in_range("--experts", b.experts, 1, 1 << 20));
  R3_TRY_STATUS(in_range("--top-k", b.top_k, 1, b.experts < 64 ? b.experts : 64));
  return ok_status();
}

std::string describe(const ExhaustBounds& b) {
  return "D<=" + std::to_string(b.max_dp) + " T<=" + std::to_string(b.max_tp) +
         " sum(tokens)<=" + std::to_string(b.max_tokens) + " M<=" + std::to_string(b.max_m) +
         " L=" + std::to_string(b.layers) + " K=" + std::to_string(b.top_k) + " E=" + std::to_string(b.experts) +
         ", profile " + std::string(to_string(b.profile)) +
         // The default engine's space is what profile any meant before other engines joined:
         // its statements read as they did; another engine's space alone says whose it is.
         (b.profile.is_any() && b.engine && *b.engine != Engine{} ? " (" + std::string(b.engine->name()) + " cases)" : "");
}

}  // namespace r3
