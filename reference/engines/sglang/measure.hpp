// How an SGLang case reads (reference/case_measure.hpp): its summary, "sglang dp 2 tp 1
// dp-attention, a2a none, decode, requests [1, 2], ...", and its own fields' measures.
#pragma once

#include <string>

#include "reference/case.hpp"
#include "reference/engine_model.hpp"
#include "reference/engines/sglang/forward.hpp"

namespace r3::sglang {

std::string summarize(const Case& c);
// SGLang's fields beyond the shared ones (topology, model, layer, tokens, note, expect).
int own_non_default_fields(const Forward& f);
void describe_own_changes(const Forward& a, const Forward& b, const ChangeItem& item);

}  // namespace r3::sglang
