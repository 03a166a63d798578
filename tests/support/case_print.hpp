// GoogleTest prints a Case as its one-line summary instead of a byte dump.
#pragma once

#include <ostream>

#include "reference/case_measure.hpp"
#include "reference/case.hpp"

namespace r3 {

inline void PrintTo(const Case& c, std::ostream* os) { *os << summarize(c); }

}  // namespace r3
