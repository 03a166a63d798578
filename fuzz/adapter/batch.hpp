// The batched exchange of the adapter protocol (docs/adapter-protocol.md, "Batched exchange"):
// an adapter whose hello says "batch": true gets one request line per case, carrying every
// capture request of the step (call by call, rank by rank), and answers one line holding the
// replies in the same order. One round trip per case instead of one per call per rank.
//
// What a batch does not repeat is where the time goes: the JSON an adapter parses. Most ranks
// of a case receive the same rows (every rank of the gathered path gets the same gathered
// batch; every TP rank of a group the same TP all-gather), so a batch carries the case once and
// each distinct row tensor once, in "tensors", and its requests name them by index. Resolved
// (case set, indexes replaced by their tensors), each request is exactly the unbatched one, so
// an adapter batches by resolving and mapping its one-request handler over the list.
//
// A batched reply is read strictly: the count, every id in order and every reply's fields are
// checked, and the first thing wrong is named by its index.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fuzz/adapter/protocol.hpp"
#include "reference/error.hpp"
#include "reference/layout.hpp"

namespace r3 {

// The line {"type": "batch", "case": ..., "tensors": [...], "requests": [...]} (no newline): the
// capture requests of every call and rank of `step`, with ids first_id, first_id + 1, ... in
// that order.
std::string batch_request(int64_t first_id, const nlohmann::json& case_json, const Step& step,
                          const BufferShape& buffer, const RequestContext* context = nullptr);

// The requests of a batch as the unbatched exchange sends them (indexes resolved): what an
// adapter does first, here for tests and for the documentation's example.
std::vector<nlohmann::json> resolve_batch(const nlohmann::json& batch);

// How errors name a batch whose requests carry ids first .. first + count - 1:
// "batch [3..6]", or "batch [3]" for one request.
std::string batch_name(int64_t first_id, size_t count);

// Reads the reply to a batch of `count` requests with ids first_id, first_id + 1, ...:
// {"replies": [reply, ...]}, each reply read as read_capture_reply() reads one.
Result<std::vector<CaptureReply>> read_batch_reply(const nlohmann::json& reply, int64_t first_id, size_t count,
                                                   const BufferShape& buffer);

}  // namespace r3
