#include "fuzz/adapter/batch.hpp"

#include <charconv>
#include <map>
#include <utility>

#include "reference/capturer.hpp"
#include "reference/provenance.hpp"

namespace r3 {

using nlohmann::json;

namespace {

// One row tensor as JSON text: [[v, ...], ...] with top_k values a row. Written straight into
// the line: the tensors are most of a batch's bytes, and a JSON tree of them (a node per value)
// cost more than everything else r3fuzz does for an external case.
void append_tensor(std::string& out, const RowTensor& tensor, int top_k) {
  char digits[16];
  out += '[';
  bool first_row = true;
  for (const RowRun& run : tensor.runs()) {
    for (int64_t i = 0; i < run.length; ++i) {
      const RowId id = run.at(i);
      out += first_row ? "[" : ",[";
      first_row = false;
      for (int k = 0; k < top_k; ++k) {
        if (k) out += ',';
        const auto end = std::to_chars(digits, digits + sizeof digits, routing_value(id, k)).ptr;
        out.append(digits, end);
      }
      out += ']';
    }
  }
  out += ']';
}

// The distinct row tensors of a batch, each numbered once and written once. A tensor is known by
// where it comes from: the call and the rows of Call::tensors it is made of, as (index, lo, hi)
// triples (one for what a rank receives or its SP all-gather; the group members' inputs, in TP
// order, for the all-gather of a path that does not shard).
class TensorTable {
 public:
  explicit TensorTable(int top_k) : top_k_(top_k) {}
  int index(const Call& call, std::vector<int64_t> parts, const RowTensor& tensor) {
    auto [it, added] = known_.try_emplace({call.index, std::move(parts)}, static_cast<int>(known_.size()));
    if (added) {
      if (it->second > 0) text_ += ',';
      append_tensor(text_, tensor, top_k_);
    }
    return it->second;
  }
  const std::string& text() const { return text_; }

 private:
  int top_k_;
  std::map<std::pair<int, std::vector<int64_t>>, int> known_;
  std::string text_;
};

}  // namespace

std::string batch_request(int64_t first_id, const json& case_json, const Step& step, const BufferShape& buffer,
                          const RequestContext* context) {
  TensorTable tensors(buffer.top_k);
  std::string requests;
  int64_t id = first_id;
  RowTensor scratch;
  for (const Call& call : step.calls) {
    for (size_t r = 0; r < call.rank_count(); ++r) {
      const RankView view = call.view(r);
      json request = capture_request_fields(id++, step, call, view, buffer, context);
      request["topk_ids"] = tensors.index(call, {view.received, view.rows.lo, view.rows.hi}, call.input_of(view));
      if (step.tp > 1) {
        std::vector<int64_t> parts;
        if (view.tp_gathered >= 0) {
          parts = {view.tp_gathered, 0, call.tensors[static_cast<size_t>(view.tp_gathered)].rows()};
        } else {
          for (int t = 0; t < step.tp; ++t) {
            const RankView member = call.view(view.dp, t);
            parts.insert(parts.end(), {member.received, member.rows.lo, member.rows.hi});
          }
        }
        request["tp_all_gather"] = tensors.index(call, std::move(parts), copy_source(call, view, true, step.tp, scratch));
      }
      if (!requests.empty()) requests += ',';
      requests += request.dump();
    }
  }
  return "{\"type\":\"batch\",\"case\":" + case_json.dump() + ",\"tensors\":[" + tensors.text() + "],\"requests\":[" +
         requests + "]}";
}

std::vector<json> resolve_batch(const json& batch) {
  std::vector<json> out;
  const json& tensors = batch.at("tensors");
  for (json request : batch.at("requests")) {
    request["case"] = batch.at("case");
    request["topk_ids"] = tensors.at(request.at("topk_ids").get<size_t>());
    if (request.contains("tp_all_gather")) request["tp_all_gather"] = tensors.at(request["tp_all_gather"].get<size_t>());
    out.push_back(std::move(request));
  }
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
    if (key != "replies") return Error{"unknown key \"" + stored_reply_text(key) + "\" (allowed: replies)"};
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
