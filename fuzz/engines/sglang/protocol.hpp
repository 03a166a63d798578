// The SGLang side of the adapter protocol (docs/adapter-protocol.md, "SGLang steps"), which
// SGLang's adapter part (adapter.cpp) exchanges. SGLang's
// capturer is not asked per capture call what it wrote: capture writes the whole tensor at row 0
// of its device buffer, and the forward end picks this DP rank's rows with a window
// (state_capturer/routed_experts.py, _get_local_slice) and stores them at the forward's KV
// slots (state_capturer/base.py, on_forward_end). So one request per (dp, tp) rank carries
// every capture call of the forward (two under TBO) and what the window reads, and one reply
// gives the rows the forward end published for the rank's real tokens, in order.
//
// Sent only to adapters whose hello lists "sglang" in "engines"; vLLM requests are unchanged.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "reference/capture.hpp"
#include "reference/case.hpp"
#include "reference/engines/sglang/fields.hpp"
#include "reference/error.hpp"
#include "reference/implementation.hpp"
#include "reference/layout.hpp"

namespace r3 {

// The request of rank (dp, tp) without "case" (a batch sends the case once). The step must be
// an SGLang step (sglang::forward_of(step) set).
nlohmann::json sglang_request_fields(int64_t id, const Case& c, const Step& step, int dp, int tp);
// The same with "case": the unbatched request.
nlohmann::json sglang_request(int64_t id, const nlohmann::json& case_json, const Case& c, const Step& step, int dp,
                              int tp);
// {"type": "batch", "engine": "sglang", "case": ..., "requests": [...]}: every rank, DP-major,
// ids first_id, first_id + 1, ...
std::string sglang_batch_request(int64_t first_id, const nlohmann::json& case_json, const Case& c, const Step& step);

struct SglangReply {
  int64_t id = 0;
  int64_t buffer_rows = 0;  // rows R of the device buffer the capturer allocated
  std::string branch;       // "unnamed" when the adapter did not say; "error" for an error reply
  bool rejected = false;
  std::string error;
  // Published row j: the values stored at the KV slot of real token j, or nullopt when the
  // window read a device-buffer row no capture call of this forward wrote (stale).
  std::vector<std::optional<std::vector<int32_t>>> rows;
  std::optional<Window> window;  // the window the adapter says it read, for explain
};

// Reads the reply to an SGLang request (top_k values a row).
Result<SglangReply> read_sglang_reply(const nlohmann::json& reply, int top_k);

// The concrete outcome the judge reads, from one reply per rank (DP-major): a published image
// of R rows per rank (R: the replies' buffer_rows, which must agree), stale rows untouched and
// row j holding published row j; per call the branch and window, an error reply rejecting the
// forward's last call (the window runs after it).
Result<ConcreteOutcome> sglang_outcome(const Case& c, const Step& step, const std::vector<SglangReply>& replies);

}  // namespace r3
