// Validation of a case: every rule a case must obey before any layout is derived. Each
// error names the field and the allowed range, so a user can fix the file from the message.
#pragma once

#include <cstdint>
#include <string_view>

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

// Ok when the case is well formed. A well-formed case may still carry metadata that
// disagrees with its layout: that is not an error here but a rejection the reference
// expects from every implementation (see layout.hpp, Step::rejection).
// Dispatches on the case's engine (EngineModel::validate, reference/engines/NAME/).
Status validate(const Case& c);

// The rules of the case's own fields (topology, model, tokens, padding, path, calls, metadata:
// docs/layout-contract.md sections 1 to 9), for an engine whose cases are made of them.
Status validate_base(const Case& c);

// Shared by the engines' rules: the model shape, and a field within [lo, hi] (the message names both).
Status validate_model(const ModelShape& m);
Status validate_in_range(std::string_view field, int64_t value, int64_t lo, int64_t hi);

}  // namespace r3
