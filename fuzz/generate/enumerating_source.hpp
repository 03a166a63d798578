// A bounded enumerator: walks every choice sequence of the domain in order (depth first, each
// choice from lo to hi), so the domain's bounds alone decide the enumerated space. Hints stay at
// their plain value 0, which keeps the enumeration free of duplicates: with the hints fixed,
// distinct sequences give distinct cases.
//
//   EnumeratingSource source;
//   do { visit(draw(source, domain)); } while (source.advance());
#pragma once

#include <cstdint>
#include <vector>

#include "fuzz/generate/source.hpp"

namespace r3 {

class EnumeratingSource final : public Source {
 public:
  int64_t choose(const Choice& choice, SeededDraw seeded) override;
  using Source::choose;
  // Moves to the next sequence after the draw just made; false when that draw was the last.
  bool advance();

 private:
  struct Taken {
    int64_t value;
    int64_t hi;
  };
  std::vector<Taken> taken_;  // the last draw's choices; a prefix of them is replayed
  size_t position_ = 0;
};

}  // namespace r3
