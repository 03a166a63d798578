// The ascend engine's case codec: the base case (fuzz/codec/base_codec.hpp) without a path or a
// monolithic flag (the comm type places the rows), plus an "ascend" object after "layer"; in
// binary, version 5: the base case's bytes, then the Ascend fields.
#include <string>

#include "fuzz/codec/base_codec.hpp"
#include "fuzz/codec/binary_io.hpp"
#include "fuzz/codec/engine_codec.hpp"
#include "fuzz/codec/json_fields.hpp"
#include "fuzz/engines/ascend/codec.hpp"
#include "fuzz/engines/ascend/parts.hpp"
#include "reference/engines/ascend/fields.hpp"

namespace r3::ascend {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;
using namespace json_fields;

constexpr uint8_t kVersions[] = {5};

ordered_json fields_json(const Fields& f) {
  ordered_json o = ordered_json::object();
  o["chip"] = std::string(to_string(f.chip));
  if (f.comm) o["comm"] = std::string(to_string(*f.comm));
  o["runner"] = std::string(to_string(f.runner));
  o["graph"] = std::string(to_string(f.graph));
  if (f.lora) o["lora"] = true;
  if (f.fused_mc2) o["fused_mc2"] = true;
  if (f.mega_moe) o["mega_moe"] = true;
  if (f.mc2_tokens != 0) o["mc2_tokens"] = f.mc2_tokens;
  return o;
}

class Codec final : public EngineCodec {
 public:
  Result<Case> read_json(const json& doc) const override {
    if (!doc.is_object()) return Error{"case: expected an object, got " + kind_of(doc)};
    for (const char* key : {"path", "monolithic", "microbatches", "dp_chunk", "metadata"})
      if (doc.contains(key)) return Error{std::string(key) + ": not a key of an ascend case (its comm type places the rows)"};
    const auto ascend = doc.find("ascend");
    if (ascend == doc.end()) return Error{"ascend: missing (an ascend case names chip, runner and graph)"};
    json base = doc;
    base.erase("ascend");
    base["path"] = "single";
    R3_TRY(Case c, read_base_case_json(base));
    R3_TRY(Fields f, read_ascend_fields(*ascend));
    c.engine_fields.emplace<Fields>(f);
    return c;
  }

  ordered_json to_json(const Case& c) const override {
    const ordered_json base = base_case_json(c);
    ordered_json doc = ordered_json::object();
    for (auto it = base.begin(); it != base.end(); ++it) {
      if (it.key() == "path" || it.key() == "monolithic") continue;
      doc[it.key()] = it.value();
      if (it.key() == "layer" && fields_of(c)) doc["ascend"] = fields_json(*fields_of(c));
    }
    return doc;
  }

  std::span<const uint8_t> versions() const override { return kVersions; }
  std::string_view label() const override { return "vllm-ascend"; }

  // The base case's bytes, then chip, comm (0 derived), runner, graph, the three flags and
  // mc2_tokens. A path, monolithic flag, micro-batches, DP chunk or metadata the base bytes hold
  // are dropped: an Ascend case has none, and every byte string should decode to a case.
  Result<Case> decode(BinaryReader& r, const BinaryLimits& limits, uint8_t version) const override {
    (void)version;
    R3_TRY(Case c, decode_base_case(r, limits));
    c.path = Path::single;
    c.monolithic = false;
    c.microbatches = 1;
    c.dp_chunk.reset();
    c.metadata.reset();
    Fields f;
    R3_TRY(int64_t chip, r.folded("ascend.chip", 0, kChipCount - 1));
    R3_TRY(int64_t comm, r.folded("ascend.comm", 0, kCommCount));
    R3_TRY(int64_t runner, r.folded("ascend.runner", 0, kRunnerCount - 1));
    R3_TRY(int64_t graph, r.folded("ascend.graph", 0, kGraphCount - 1));
    R3_TRY(int64_t flags, r.folded("ascend flags", 0, 7));
    R3_TRY(f.mc2_tokens, r.folded("ascend.mc2_tokens", 0, int64_t{1} << 20));
    f.chip = static_cast<Chip>(chip);
    if (comm > 0) f.comm = static_cast<Comm>(comm - 1);
    f.runner = static_cast<Runner>(runner);
    f.graph = static_cast<Graph>(graph);
    f.lora = flags & 1;
    f.fused_mc2 = flags & 2;
    f.mega_moe = flags & 4;
    c.engine_fields.emplace<Fields>(f);
    return c;
  }

  void encode(BinaryWriter& w, const Case& c) const override {
    encode_base_case(w, c, kVersions[0]);
    const Fields& f = *fields_of(c);
    w.varint(static_cast<int64_t>(f.chip));
    w.varint(f.comm ? static_cast<int64_t>(*f.comm) + 1 : 0);
    w.varint(static_cast<int64_t>(f.runner));
    w.varint(static_cast<int64_t>(f.graph));
    w.varint((f.lora ? 1 : 0) | (f.fused_mc2 ? 2 : 0) | (f.mega_moe ? 4 : 0));
    w.varint(f.mc2_tokens);
  }
};

}  // namespace

Result<Fields> read_ascend_fields(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "ascend", {"chip", "comm", "runner", "graph", "lora", "fused_mc2", "mega_moe", "mc2_tokens"}));
  Fields f;
  R3_TRY(const json* chip, o.require("chip"));
  R3_TRY(std::string chip_text, read_string(*chip, o.path("chip")));
  R3_TRY(f.chip, parse_chip(chip_text));
  if (const json* comm = o.find("comm")) {
    R3_TRY(std::string comm_text, read_string(*comm, o.path("comm")));
    R3_TRY(f.comm, parse_comm(comm_text));
  }
  R3_TRY(const json* runner, o.require("runner"));
  R3_TRY(std::string runner_text, read_string(*runner, o.path("runner")));
  R3_TRY(f.runner, parse_runner(runner_text));
  R3_TRY(const json* graph, o.require("graph"));
  R3_TRY(std::string graph_text, read_string(*graph, o.path("graph")));
  R3_TRY(f.graph, parse_graph(graph_text));
  if (const json* b = o.find("lora")) { R3_TRY(f.lora, read_bool(*b, o.path("lora"))); }
  if (const json* b = o.find("fused_mc2")) { R3_TRY(f.fused_mc2, read_bool(*b, o.path("fused_mc2"))); }
  if (const json* b = o.find("mega_moe")) { R3_TRY(f.mega_moe, read_bool(*b, o.path("mega_moe"))); }
  if (const json* m = o.find("mc2_tokens")) { R3_TRY(f.mc2_tokens, read_int64(*m, o.path("mc2_tokens"))); }
  return f;
}

const EngineCodec& codec_part() {
  static const Codec codec;
  return codec;
}

}  // namespace r3::ascend
