// The base case in JSON (base_codec.hpp): design.md's fields and key order.
#include "fuzz/codec/base_codec.hpp"

#include "fuzz/codec/json_fields.hpp"

namespace r3 {

using namespace json_fields;

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// ---- reading -------------------------------------------------------------------------

Result<Topology> read_topology(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "topology", {"dp", "tp", "ep", "sp"}));
  Topology t;
  R3_TRY(const json* dp, o.require("dp"));
  R3_TRY(t.dp, read_int(*dp, o.path("dp")));
  R3_TRY(const json* tp, o.require("tp"));
  R3_TRY(t.tp, read_int(*tp, o.path("tp")));
  R3_TRY(const json* ep, o.require("ep"));
  R3_TRY(t.ep, read_bool(*ep, o.path("ep")));
  R3_TRY(const json* sp, o.require("sp"));
  R3_TRY(t.sp, read_bool(*sp, o.path("sp")));
  return t;
}

Result<Padding> read_padding(const json& v) {
  Padding p;
  if (v.is_string()) {
    const auto text = v.get<std::string>();
    if (text == "none") return p;
    if (text == "dp_max") {
      p.mode = PaddingMode::dp_max;
      return p;
    }
    return Error{"padding: \"" + text + "\" is not one of \"none\", \"dp_max\" or {\"cudagraph\": [sizes...]}"};
  }
  if (!v.is_object()) return Error{"padding: expected \"none\", \"dp_max\" or {\"cudagraph\": [sizes...]}, got " + kind_of(v)};
  R3_TRY(ObjectReader o, ObjectReader::open(v, "padding", {"cudagraph"}));
  R3_TRY(const json* sizes, o.require("cudagraph"));
  p.mode = PaddingMode::cudagraph;
  R3_TRY(p.cudagraph_sizes, read_int_list(*sizes, o.path("cudagraph")));
  return p;
}

Result<MetadataOverride> read_metadata(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "metadata", {"num_tokens_across_dp", "local_sizes"}));
  MetadataOverride m;
  if (const json* n = o.find("num_tokens_across_dp")) {
    R3_TRY(m.num_tokens_across_dp, read_int_list(*n, o.path("num_tokens_across_dp")));
  }
  if (const json* sizes = o.find("local_sizes")) {
    m.local_sizes_given = true;  // null: the engine left local_sizes unset
    if (!sizes->is_null()) {
      R3_TRY(m.local_sizes, read_int_list(*sizes, o.path("local_sizes")));
    }
  }
  return m;
}

}  // namespace

Result<Case> read_base_case_json(const json& doc) {
  R3_TRY(ObjectReader o, ObjectReader::open(doc, "", {"format", "engine", "topology", "model", "max_num_tokens", "tokens",
                                                      "padding", "idle_dummy", "path", "monolithic", "layer",
                                                      "microbatches", "dp_chunk", "metadata", "profile", "note",
                                                      "expect"}));
  R3_TRY_STATUS(check_format(o));
  Case c;
  R3_TRY(const json* topology, o.require("topology"));
  R3_TRY(c.topology, read_topology(*topology));
  R3_TRY(const json* model, o.require("model"));
  R3_TRY(c.model, read_model(*model));
  R3_TRY(const json* max_num_tokens, o.require("max_num_tokens"));
  R3_TRY(c.max_num_tokens, read_int64(*max_num_tokens, "max_num_tokens"));
  R3_TRY(const json* tokens, o.require("tokens"));
  R3_TRY(c.tokens, read_int_list(*tokens, "tokens"));
  R3_TRY(const json* padding, o.require("padding"));
  R3_TRY(c.padding, read_padding(*padding));
  if (const json* idle_dummy = o.find("idle_dummy")) {
    R3_TRY(c.idle_dummy, read_bool(*idle_dummy, "idle_dummy"));
  }
  R3_TRY(const json* path, o.require("path"));
  R3_TRY(std::string path_text, read_string(*path, "path"));
  R3_TRY(c.path, parse_path(path_text));
  if (const json* monolithic = o.find("monolithic")) {
    R3_TRY(c.monolithic, read_bool(*monolithic, "monolithic"));
  }
  R3_TRY(const json* layer, o.require("layer"));
  R3_TRY(c.layer, read_int(*layer, "layer"));
  if (const json* microbatches = o.find("microbatches")) {
    R3_TRY(c.microbatches, read_int(*microbatches, "microbatches"));
  }
  if (const json* dp_chunk = o.find("dp_chunk")) {
    R3_TRY(c.dp_chunk, read_int64(*dp_chunk, "dp_chunk"));
  }
  if (const json* metadata = o.find("metadata")) {
    R3_TRY(c.metadata, read_metadata(*metadata));
  }
  R3_TRY_STATUS(read_trailer(o, c));
  return c;
}

// ---- writing -------------------------------------------------------------------------

ordered_json base_case_json(const Case& c) {
  ordered_json doc = ordered_json::object();
  doc["format"] = std::string(kCaseFormat);
  if (c.engine != Engine{}) doc["engine"] = std::string(to_string(c.engine));
  ordered_json topology = ordered_json::object();
  topology["dp"] = c.topology.dp;
  topology["tp"] = c.topology.tp;
  topology["ep"] = c.topology.ep;
  topology["sp"] = c.topology.sp;
  doc["topology"] = std::move(topology);
  doc["model"] = model_json(c.model);
  doc["max_num_tokens"] = c.max_num_tokens;
  doc["tokens"] = int_list(c.tokens);
  if (c.padding.mode == PaddingMode::cudagraph) {
    ordered_json padding = ordered_json::object();
    padding["cudagraph"] = int_list(c.padding.cudagraph_sizes);
    doc["padding"] = std::move(padding);
  } else {
    doc["padding"] = std::string(to_string(c.padding.mode));
  }
  if (c.idle_dummy) doc["idle_dummy"] = true;
  doc["path"] = std::string(to_string(c.path));
  doc["monolithic"] = c.monolithic;
  doc["layer"] = c.layer;
  if (c.microbatches != 1) doc["microbatches"] = c.microbatches;
  if (c.dp_chunk) doc["dp_chunk"] = *c.dp_chunk;
  if (c.metadata) {
    ordered_json metadata = ordered_json::object();
    if (c.metadata->num_tokens_across_dp) metadata["num_tokens_across_dp"] = int_list(*c.metadata->num_tokens_across_dp);
    if (c.metadata->local_sizes_given) {
      metadata["local_sizes"] = c.metadata->local_sizes ? int_list(*c.metadata->local_sizes) : ordered_json(nullptr);
    }
    doc["metadata"] = std::move(metadata);
  }
  add_trailer(doc, c);
  return doc;
}

}  // namespace r3
