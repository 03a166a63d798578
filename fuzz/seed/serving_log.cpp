#include "fuzz/seed/serving_log.hpp"

#include <algorithm>

#include "fuzz/io/strict_json.hpp"

namespace r3 {
namespace {

constexpr int64_t kMaxRecords = 4096;
constexpr int64_t kMaxHashIds = 1 << 16;

Result<int64_t> non_negative(const nlohmann::json& value, const std::string& where) {
  if (!value.is_number_integer() || value.get<int64_t>() < 0) return Error{where + ": expected a non-negative integer"};
  return value.get<int64_t>();
}

Result<ServingRecord> parse_record(std::string_view line, const std::string& at) {
  R3_TRY(const nlohmann::json doc, parse_json_strictly(line));
  if (!doc.is_object()) return Error{at + ": expected a JSON object"};
  ServingRecord r;
  for (const char* key : {"timestamp", "input_length", "output_length", "hash_ids"})
    if (!doc.contains(key)) return Error{at + ": " + key + ": missing"};
  for (const auto& [key, value] : doc.items())
    if (key != "timestamp" && key != "input_length" && key != "output_length" && key != "hash_ids")
      return Error{at + ": unknown key \"" + key + "\" (the keys are timestamp, input_length, output_length, hash_ids)"};
  R3_TRY(r.timestamp, non_negative(doc["timestamp"], at + ": timestamp"));
  R3_TRY(r.input_length, non_negative(doc["input_length"], at + ": input_length"));
  R3_TRY(r.output_length, non_negative(doc["output_length"], at + ": output_length"));
  const nlohmann::json& ids = doc["hash_ids"];
  if (!ids.is_array() || ids.empty()) return Error{at + ": hash_ids: expected a non-empty list of integers"};
  if (static_cast<int64_t>(ids.size()) > kMaxHashIds) return Error{at + ": hash_ids: more than " + std::to_string(kMaxHashIds)};
  for (size_t i = 0; i < ids.size(); ++i) {
    R3_TRY(const int64_t id, non_negative(ids[i], at + ": hash_ids[" + std::to_string(i) + "]"));
    r.hash_ids.push_back(id);
  }
  const int64_t blocks = (r.input_length + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
  if (blocks != static_cast<int64_t>(r.hash_ids.size()))
    return Error{at + ": hash_ids: " + std::to_string(r.hash_ids.size()) + " ids for input_length " +
                 std::to_string(r.input_length) + ", which is " + std::to_string(blocks) + " blocks of 512 tokens"};
  return r;
}

}  // namespace

Result<std::vector<ServingRecord>> parse_serving_log(std::string_view text) {
  std::vector<ServingRecord> out;
  int64_t line_no = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string_view::npos) continue;
    if (static_cast<int64_t>(out.size()) >= kMaxRecords)
      return Error{"line " + std::to_string(line_no) + ": more than " + std::to_string(kMaxRecords) + " requests"};
    R3_TRY(ServingRecord r, parse_record(line, "line " + std::to_string(line_no)));
    out.push_back(std::move(r));
  }
  if (out.empty()) return Error{"the log holds no request"};
  return out;
}

std::vector<TraceRequest> requests_from_log(const std::vector<ServingRecord>& records, const ServingScale& scale) {
  std::vector<TraceRequest> out;
  int64_t highest_prompt_token = 0;
  for (const ServingRecord& r : records)
    for (const int64_t id : r.hash_ids) highest_prompt_token = std::max(highest_prompt_token, (id + 1) * scale.tokens_per_block);
  for (size_t i = 0; i < records.size(); ++i) {
    const ServingRecord& r = records[i];
    TraceRequest q;
    q.id = static_cast<int>(i);
    for (const int64_t id : r.hash_ids)
      for (int64_t k = 0; k < scale.tokens_per_block; ++k) q.prompt.push_back(static_cast<int32_t>(id * scale.tokens_per_block + k + 1));
    const int64_t scaled = (r.output_length * scale.tokens_per_block + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
    const int64_t outputs = std::clamp<int64_t>(scaled, 1, scale.max_outputs);
    for (int64_t k = 0; k < outputs; ++k)
      q.outputs.push_back(static_cast<int32_t>(highest_prompt_token + 1 + static_cast<int64_t>(i) * scale.max_outputs + k));
    q.finish = Finish::length;
    q.arrival = static_cast<int>(r.timestamp * scale.steps_per_second / 1000);
    out.push_back(std::move(q));
  }
  return out;
}

}  // namespace r3
