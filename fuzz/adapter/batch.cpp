#include "fuzz/adapter/batch.hpp"

#include <utility>

namespace r3 {

using nlohmann::json;

json batch_request(std::vector<json> requests) {
  json out = {{"type", "batch"}};
  out["requests"] = json::array();
  json& list = out["requests"];
  for (json& r : requests) list.push_back(std::move(r));
  return out;
}

std::string batch_name(int64_t first_id, size_t count) {
  if (count == 1) return "batch [" + std::to_string(first_id) + "]";
  return "batch [" + std::to_string(first_id) + ".." + std::to_string(first_id + static_cast<int64_t>(count) - 1) + "]";
}

Result<std::vector<CaptureReply>> read_batch_reply(const json& reply, int64_t first_id, size_t count,
                                                   const BufferShape& buffer) {
  if (!reply.is_object()) return Error{std::string("expected a JSON object, got ") + reply.type_name()};
  for (const auto& [key, value] : reply.items())
    if (key != "replies") return Error{"unknown key \"" + key + "\" (allowed: replies)"};
  if (!reply.contains("replies")) return Error{"missing \"replies\""};
  const json& replies = reply["replies"];
  if (!replies.is_array()) return Error{std::string("replies: expected a list, got ") + replies.type_name()};
  // A count that differs is a lie about the whole batch (a reply lost, or one too many): no
  // reply can be trusted to belong to the request at its index, so none is read.
  if (replies.size() != count) {
    return Error{"replies: expected " + std::to_string(count) + " replies (one per request, in order), got " +
                 std::to_string(replies.size())};
  }
  std::vector<CaptureReply> out;
  out.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const std::string where = "replies[" + std::to_string(i) + "]";
    const int64_t want = first_id + static_cast<int64_t>(i);
    auto id = reply_id(replies[i]);
    if (!id) return Error{where + ": " + id.error().message};
    if (*id != want) {
      return Error{where + " carries id " + std::to_string(*id) + ", expected " + std::to_string(want) +
                   " (replies come in request order)"};
    }
    auto parsed = read_capture_reply(replies[i], buffer);
    if (!parsed) return Error{where + ": " + parsed.error().message};
    out.push_back(std::move(*parsed));
  }
  return out;
}

}  // namespace r3
