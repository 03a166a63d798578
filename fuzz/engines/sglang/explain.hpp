// `r3fuzz explain` of an SGLang case: the forward (counts, padding, graph, window inputs of each
// DP rank), each rank's tensor at every capture call and the rows it writes, then each SGLang
// model's window (start, n), the rows it publishes and its verdict. explain.hpp dispatches here.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "fuzz/cli/explain.hpp"

namespace r3 {

nlohmann::ordered_json sglang_explanation_json(const Explanation& e);
std::string sglang_explanation_text(const Explanation& e);

}  // namespace r3
