// The key the shrinker caches a candidate's verdict under (shrink.cpp): every field of a case in
// a fixed order, the case format's own first, then the engine's own (EngineShrink::append_key).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "reference/case.hpp"

namespace r3 {

// Builds a key: each value followed by ',', each list in brackets, a mark before a group of
// fields that may be absent (so that no two cases share a key).
class CaseKey {
 public:
  void put(int64_t value) { text_ += std::to_string(value) + ','; }
  void put_list(const std::vector<int64_t>& list) {
    text_ += '[';
    for (int64_t v : list) put(v);
    text_ += ']';
  }
  void mark(char group) { text_ += group; }
  std::string take() && { return std::move(text_); }

 private:
  std::string text_;
};

// The key of `c`.
std::string case_key(const Case& c);

}  // namespace r3
