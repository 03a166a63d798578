// The rules an Ascend case obeys before any layout is derived: the base case's (topology, model,
// tokens, padding, layer) and the Ascend fields'. Each error names the key.
#pragma once

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3::ascend {

Status validate(const Case& c);

}  // namespace r3::ascend
