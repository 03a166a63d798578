// Validation of a case: every rule a case must obey before any layout is derived. Each
// error names the field and the allowed range, so a user can fix the file from the message.
#pragma once

#include "reference/case.hpp"
#include "reference/error.hpp"

namespace r3 {

// Ok when the case is well formed. A well-formed case may still carry metadata that
// disagrees with its layout: that is not an error here but a rejection the reference
// expects from every implementation (see layout.hpp, Step::rejection).
Status validate(const Case& c);

}  // namespace r3
