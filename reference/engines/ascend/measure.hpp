// How an Ascend case reads (reference/case_measure.hpp): its summary line and its own fields'
// differences from their defaults.
#pragma once

#include <string>

#include "reference/engine_model.hpp"
#include "reference/engines/ascend/fields.hpp"

namespace r3::ascend {

std::string summarize(const Case& c);
int own_non_default_fields(const Fields& f);
void describe_own_changes(const Fields& a, const Fields& b, const ChangeItem& item);
// The comm type capture sees the rows through, "+sp" with SP: a finding's signature names it.
std::string capture_layout_text(const Case& c);

}  // namespace r3::ascend
