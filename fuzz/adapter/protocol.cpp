#include "fuzz/adapter/protocol.hpp"

#include <algorithm>
#include <deque>
#include <limits>
#include <mutex>

#include "reference/capturer.hpp"
#include "reference/provenance.hpp"

namespace r3 {

using nlohmann::json;

json tensor_values(const RowTensor& tensor, int top_k) {
  json rows = json::array();
  for (const RowRun& run : tensor.runs()) {
    for (int64_t i = 0; i < run.length; ++i) {
      const RowId id = run.at(i);
      json row = json::array();
      for (int k = 0; k < top_k; ++k) row.push_back(routing_value(id, k));
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

namespace {

Error field_error(std::string_view field, std::string_view what) {
  return Error{std::string(field) + ": " + std::string(what)};
}

std::string_view type_name(const json& v) {
  if (v.is_number_integer()) return "an integer";
  if (v.is_number()) return "a number";
  return v.type_name();
}

Result<int64_t> read_int(const json& v, std::string_view field, int64_t lo, int64_t hi) {
  if (!v.is_number_integer()) return field_error(field, "expected an integer, got " + std::string(type_name(v)));
  if (v.is_number_unsigned() && v.get<uint64_t>() > static_cast<uint64_t>(hi))
    return field_error(field, std::to_string(v.get<uint64_t>()) + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  const int64_t x = v.get<int64_t>();
  if (x < lo || x > hi)
    return field_error(field, std::to_string(x) + " is out of range [" + std::to_string(lo) + ", " +
                                  std::to_string(hi) + "]");
  return x;
}

// Every string of every reply is cut here, so no reply text is kept whole (docs/SECURITY.md).
Result<std::string> read_string(const json& v, std::string_view field) {
  if (!v.is_string()) return field_error(field, "expected a string, got " + std::string(type_name(v)));
  return stored_reply_text(v.get<std::string>());
}

Status only_keys(const json& object, std::string_view where, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : object.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || key == a;
    if (!known) {
      std::string list;
      for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
      return Error{std::string(where) + "unknown key \"" + stored_reply_text(key) + "\" (allowed: " + list + ")"};
    }
  }
  return ok_status();
}

// Branch names live as long as the process: CaptureDecision holds a string_view.
std::string_view intern_branch(const std::string& name) {
  for (std::string_view known : {branch::single, branch::naive_total, branch::local, branch::gathered_shards,
                                 branch::sp_allgather, branch::skip, branch::error})
    if (name == known) return known;
  static std::mutex mutex;
  static std::deque<std::string> names;
  std::lock_guard lock(mutex);
  for (const std::string& n : names)
    if (n == name) return n;
  return names.emplace_back(name);
}

constexpr int64_t kRowLimit = int64_t{1} << 40;  // far beyond any buffer; keeps row arithmetic exact

// Every registered engine's name quoted, the last after "and": "\"vllm\" and \"sglang\"".
std::string quoted_engine_names() {
  const std::vector<Engine> engines = all_engines();
  std::string text;
  for (size_t i = 0; i < engines.size(); ++i) {
    if (i > 0) text += i + 1 == engines.size() ? " and " : ", ";
    text += "\"" + std::string(engines[i].name()) + "\"";
  }
  return text;
}

}  // namespace

std::string_view to_string(ReplaySizing s) {
  switch (s) {
    case ReplaySizing::max_num_tokens: return "max_num_tokens";
    case ReplaySizing::dp_group: return "dp_group";
    case ReplaySizing::dispatch_group: return "dispatch_group";
  }
  return "dispatch_group";
}

int64_t replay_rows_for(ReplaySizing s, const Case& c) {
  switch (s) {
    case ReplaySizing::max_num_tokens: return c.max_num_tokens;
    case ReplaySizing::dp_group: return c.max_num_tokens * c.topology.dp;
    case ReplaySizing::dispatch_group: return dispatch_group_replay_rows(c);
  }
  return dispatch_group_replay_rows(c);
}

bool AdapterHello::serves(Engine engine) const {
  return std::find(engines.begin(), engines.end(), engine) != engines.end();
}

json hello_request() { return {{"type", "hello"}, {"protocol", kAdapterProtocol}}; }

Result<AdapterHello> read_hello(const json& reply) {
  if (!reply.is_object()) return Error{"hello: expected a JSON object, got " + std::string(type_name(reply))};
  R3_TRY_STATUS(only_keys(reply, "hello: ", {"type", "protocol", "name", "version", "replay_rows", "batch", "engines"}));
  if (!reply.contains("protocol")) return Error{"hello: missing \"protocol\""};
  R3_TRY(std::string protocol, read_string(reply["protocol"], "hello.protocol"));
  if (protocol != kAdapterProtocol) {
    return Error{"hello: the adapter speaks protocol \"" + protocol + "\", r3fuzz speaks \"" +
                 std::string(kAdapterProtocol) + "\""};
  }
  if (reply.contains("type")) {
    R3_TRY(std::string type, read_string(reply["type"], "hello.type"));
    if (type != "hello") return Error{"hello.type: expected \"hello\", got \"" + type + "\""};
  }
  AdapterHello hello;
  if (!reply.contains("name")) return Error{"hello: missing \"name\""};
  R3_TRY(hello.name, read_string(reply["name"], "hello.name"));
  if (reply.contains("version")) {
    R3_TRY(hello.version, read_string(reply["version"], "hello.version"));
  }
  if (reply.contains("replay_rows")) {
    R3_TRY(std::string sizing, read_string(reply["replay_rows"], "hello.replay_rows"));
    if (sizing == "max_num_tokens") hello.replay_rows = ReplaySizing::max_num_tokens;
    else if (sizing == "dp_group") hello.replay_rows = ReplaySizing::dp_group;
    else if (sizing == "dispatch_group") hello.replay_rows = ReplaySizing::dispatch_group;
    else
      return Error{"hello.replay_rows: \"" + sizing + "\" is not one of max_num_tokens, dp_group, dispatch_group"};
  }
  if (reply.contains("batch")) {
    if (!reply["batch"].is_boolean())
      return field_error("hello.batch", "expected true or false, got " + std::string(type_name(reply["batch"])));
    hello.batch = reply["batch"].get<bool>();
  }
  if (reply.contains("engines")) {
    const json& engines = reply["engines"];
    if (!engines.is_array() || engines.empty())
      return field_error("hello.engines", "expected a non-empty list of " + quoted_engine_names());
    hello.engines.clear();
    for (size_t i = 0; i < engines.size(); ++i) {
      const std::string where = "hello.engines[" + std::to_string(i) + "]";
      R3_TRY(std::string name, read_string(engines[i], where));
      const Result<Engine> engine = parse_engine(name);
      if (!engine) return Error{where + ": \"" + name + "\" is not one of " + engine_names()};
      if (!hello.serves(*engine)) hello.engines.push_back(*engine);
    }
  }
  return hello;
}

json capture_request_fields(int64_t id, const Step& step, const Call& call, const RankView& view,
                            const BufferShape& buffer, const RequestContext* context) {
  json request = {{"type", "capture"},
                  {"id", id},
                  {"rank", {{"dp", view.dp}, {"tp", view.tp}}},
                  {"dp_size", step.dp},
                  {"tp_size", step.tp},
                  {"layer", step.layer},
                  {"capture_buffer", {buffer.rows, buffer.layers, buffer.top_k}},
                  {"call",
                   {{"index", call.index},
                    {"count", step.calls.size()},
                    {"row_offset", call.row_offset},
                    {"chunk_size", call.chunk_size > 0 ? json(call.chunk_size) : json(nullptr)}}}};
  if (call.metadata) {
    request["dp_metadata"] = {
        {"num_tokens_across_dp", call.metadata->num_tokens_across_dp},
        {"local_sizes", call.metadata->local_sizes ? json(*call.metadata->local_sizes) : json(nullptr)}};
  } else {
    request["dp_metadata"] = nullptr;
  }
  if (context && *context) {
    const json extra = (*context)(view);
    for (const auto& [key, value] : extra.items()) {
      R3_CHECK(!request.contains(key), "an engine's request context overwrites a base field");
      request[key] = value;
    }
  }
  return request;
}

json capture_request(int64_t id, const json& case_json, const Step& step, const Call& call, const RankView& view,
                     const BufferShape& buffer, const RequestContext* context) {
  json request = capture_request_fields(id, step, call, view, buffer, context);
  request["case"] = case_json;
  request["topk_ids"] = tensor_values(call.input_of(view), buffer.top_k);
  RowTensor scratch;
  if (step.tp > 1) request["tp_all_gather"] = tensor_values(copy_source(call, view, true, step.tp, scratch), buffer.top_k);
  return request;
}

Result<int64_t> reply_id(const json& reply) {
  if (!reply.is_object()) return Error{"expected a JSON object, got " + std::string(type_name(reply))};
  if (!reply.contains("id")) return Error{"missing \"id\""};
  return read_int(reply["id"], "id", 0, std::numeric_limits<int64_t>::max());
}

std::string stored_reply_text(std::string text) {
  if (text.size() <= kMaxStoredReplyTextBytes) return text;
  const size_t length = text.size();
  size_t cut = kMaxStoredReplyTextBytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;  // not inside a UTF-8 character
  text.resize(cut);
  text.shrink_to_fit();
  return text + "... (" + std::to_string(length) + " bytes in all)";
}

Result<CaptureReply> read_capture_reply(const json& reply, const BufferShape& buffer) {
  CaptureReply out;
  R3_TRY(out.id, reply_id(reply));
  R3_TRY_STATUS(only_keys(reply, "", {"id", "branch", "rows", "copies", "error", "tp_all_gather"}));
  const int forms = static_cast<int>(reply.contains("rows")) + static_cast<int>(reply.contains("copies")) +
                    static_cast<int>(reply.contains("error"));
  if (forms != 1) return Error{"expected exactly one of \"rows\", \"copies\" or \"error\", got " + std::to_string(forms)};
  if (reply.contains("branch")) {
    R3_TRY(out.branch, read_string(reply["branch"], "branch"));
    if (out.branch.empty() || out.branch.size() > 64) return Error{"branch: expected 1 to 64 characters"};
  }
  if (reply.contains("tp_all_gather")) {
    if (!reply["tp_all_gather"].is_boolean())
      return field_error("tp_all_gather", "expected true or false, got " + std::string(type_name(reply["tp_all_gather"])));
    out.used_tp_all_gather = reply["tp_all_gather"].get<bool>();
  }
  if (reply.contains("error")) {
    R3_TRY(out.error, read_string(reply["error"], "error"));
    out.rejected = true;
    if (out.branch.empty()) out.branch = "error";
    return out;
  }
  if (reply.contains("copies")) {
    const json& copies = reply["copies"];
    if (!copies.is_array()) return field_error("copies", "expected a list, got " + std::string(type_name(copies)));
    out.has_copies = true;
    for (size_t i = 0; i < copies.size(); ++i) {
      const std::string where = "copies[" + std::to_string(i) + "]";
      const json& c = copies[i];
      if (!c.is_object()) return field_error(where, "expected an object, got " + std::string(type_name(c)));
      R3_TRY_STATUS(only_keys(c, where + ": ", {"dst_row", "src_row", "rows", "from_tp_gather"}));
      for (const char* key : {"dst_row", "src_row", "rows"})
        if (!c.contains(key)) return Error{where + ": missing \"" + key + "\""};
      Copy copy;
      R3_TRY(copy.dst_row, read_int(c["dst_row"], where + ".dst_row", -kRowLimit, kRowLimit));
      R3_TRY(copy.src_row, read_int(c["src_row"], where + ".src_row", 0, kRowLimit));
      R3_TRY(copy.rows, read_int(c["rows"], where + ".rows", 0, kRowLimit));
      if (c.contains("from_tp_gather")) {
        if (!c["from_tp_gather"].is_boolean()) return field_error(where + ".from_tp_gather", "expected true or false");
        copy.from_tp_gather = c["from_tp_gather"].get<bool>();
      }
      out.used_tp_all_gather = out.used_tp_all_gather || copy.from_tp_gather;
      out.copies.push_back(copy);
    }
  } else {
    const json& rows = reply["rows"];
    if (!rows.is_array()) return field_error("rows", "expected a list, got " + std::string(type_name(rows)));
    out.writes.reserve(rows.size());
    for (size_t i = 0; i < rows.size(); ++i) {
      const std::string where = "rows[" + std::to_string(i) + "]";
      const json& r = rows[i];
      if (!r.is_object()) return field_error(where, "expected an object, got " + std::string(type_name(r)));
      R3_TRY_STATUS(only_keys(r, where + ": ", {"dst_row", "values"}));
      if (!r.contains("dst_row") || !r.contains("values")) return Error{where + ": needs \"dst_row\" and \"values\""};
      RowWrite w;
      R3_TRY(w.dst_row, read_int(r["dst_row"], where + ".dst_row", -kRowLimit, kRowLimit));
      const json& values = r["values"];
      if (!values.is_array() || values.size() != static_cast<size_t>(buffer.top_k)) {
        return field_error(where + ".values", "expected a list of " + std::to_string(buffer.top_k) +
                                                  " integers (top_k), got " +
                                                  (values.is_array() ? std::to_string(values.size()) + " entries"
                                                                     : std::string(type_name(values))));
      }
      w.values.reserve(values.size());
      for (size_t k = 0; k < values.size(); ++k) {
        R3_TRY(int64_t v, read_int(values[k], where + ".values[" + std::to_string(k) + "]",
                                   std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()));
        w.values.push_back(static_cast<int32_t>(v));
      }
      out.writes.push_back(std::move(w));
    }
  }
  if (out.branch.empty()) out.branch = "unnamed";
  return out;
}

Result<int64_t> read_reply_int(const json& v, std::string_view field, int64_t lo, int64_t hi) {
  return read_int(v, field, lo, hi);
}
Result<std::string> read_reply_string(const json& v, std::string_view field) { return read_string(v, field); }
Status only_reply_keys(const json& object, std::string_view where, std::initializer_list<std::string_view> allowed) {
  return only_keys(object, where, allowed);
}
std::string_view reply_type_name(const json& v) { return type_name(v); }

// Interned here so CaptureDecision can hold the branch as a string_view.
std::string_view adapter_branch_name(const std::string& name) { return intern_branch(name); }

}  // namespace r3
