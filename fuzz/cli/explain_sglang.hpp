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

// What sglang_explanation_json() lists beyond its rank entries, counted without building it
// (explain.hpp, check_json_size): the runs of every rank's written tensor in every call, and the
// copies every model publishes on every rank and call.
int64_t sglang_written_runs(const Step& s);
int64_t sglang_published_copies(const Explanation& e);

}  // namespace r3
