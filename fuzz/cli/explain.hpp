// `r3fuzz explain`: everything the reference derives for one case (counts, shards, padding,
// the gathered layout, what each rank's capture() receives and must copy) beside each
// policy's decision, as text for people and as JSON for scripts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/oracle/verdict.hpp"
#include "reference/case.hpp"
#include "reference/error.hpp"
#include "reference/layout.hpp"

namespace r3 {

struct Explanation {
  Case c;
  Step step;
  // explained_policy_names(c.engine), in that order; one class a rank (split_into_ranks), so
  // classes[r] is rank r's outcome.
  std::vector<Judgement> policies;
};

// The policy models an explanation judges: the engine's released versions, then its proposed fix
// (EngineModel::released_policies(), fixed_policy()): vllm-50874, vllm-pre-50874, r3-fixed for
// vLLM cases; sglang, sglang-miles, sglang-fixed for SGLang's.
std::vector<std::string_view> explained_policy_names(Engine engine);

// Derives the step and judges the case's engine's policy models on it. Fails only on an invalid case.
Result<Explanation> explain_case(const Case& c);

// The --json document: the engine's own (EngineExplain::json, fuzz/cli/engine_explain.hpp) when
// it has an explain part, else layout_explanation_json(). Issue 2 names the latter's fields
// (extra fields are allowed); its "ranks" lists every (dp, tp) even when the step has no capture
// call (an all-idle DP-chunked step).
nlohmann::ordered_json explanation_json(const Explanation& e);
nlohmann::ordered_json layout_explanation_json(const Explanation& e);

// explanation_json() is never cut, so its size is checked first, on the derived step alone
// (before the policies are judged, which takes minutes on the largest cases): it lists dp*tp
// ranks, and each rank again per call and per policy; an engine's own document may also list,
// in each rank's entry of a call, the runs of rows the rank writes (EngineExplain::written_runs).
// More than kMaxJsonRankEntries such entries and runs (about half a GB of JSON in memory) is an
// error stating the count and the bound; the text output stays bounded for every case
// (docs/SECURITY.md, memory budgets). check_json_size(Explanation) checks again once the
// policies are judged, with the rows each model publishes (a list per rank and call) counted
// too when the engine's document lists them; it is the check to pass before explanation_json().
inline constexpr int64_t kMaxJsonRankEntries = int64_t{1} << 20;
Status check_json_size(const Step& s);
Status check_json_size(const Explanation& e);

// The human report: the engine's own (EngineExplain::text) when it has an explain part, else
// layout_explanation_text(): tables of ranks, shards and padding, then each policy's decision.
// Bounded whatever the case: a table longer than 64 rows folds runs of identical ranks and is cut
// at 64 lines, lists show 32 entries, at most 8 calls (and the last) print, and each cut says
// so. explanation_json() is never cut.
std::string explanation_text(const Explanation& e);
std::string layout_explanation_text(const Explanation& e);

}  // namespace r3
