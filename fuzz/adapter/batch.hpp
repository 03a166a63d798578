// The batched exchange of the adapter protocol (docs/adapter-protocol.md, "Batched exchange"):
// an adapter whose hello says "batch": true gets one request line per case, carrying every
// capture request of the step (call by call, rank by rank), and answers one line holding the
// replies in the same order. One round trip per case instead of one per call per rank: the
// pipe latency and the adapter's per-line overhead are paid once.
//
// Each element is exactly the request (and reply) of the unbatched exchange, so an adapter
// batches by mapping its one-request handler over the list. A batched reply is read strictly:
// the count, every id in order and every reply's fields are checked, and the first thing wrong
// is named by its index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/adapter/protocol.hpp"
#include "reference/error.hpp"

namespace r3 {

// {"type": "batch", "requests": [...]}; takes the capture requests by value (moved in).
nlohmann::json batch_request(std::vector<nlohmann::json> requests);

// How errors name a batch whose requests carry ids first .. first + count - 1:
// "batch [3..6]", or "batch [3]" for one request.
std::string batch_name(int64_t first_id, size_t count);

// Reads the reply to a batch of `count` requests with ids first_id, first_id + 1, ...:
// {"replies": [reply, ...]}, each reply read as read_capture_reply() reads one.
Result<std::vector<CaptureReply>> read_batch_reply(const nlohmann::json& reply, int64_t first_id, size_t count,
                                                   const BufferShape& buffer);

}  // namespace r3
