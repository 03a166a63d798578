#include "fuzz/libfuzzer/robustness.hpp"

#include <string>
#include <string_view>
#include <vector>

#include "fuzz/adapter/engine_adapter.hpp"
#include "fuzz/adapter/protocol.hpp"
#include "fuzz/cli/explain.hpp"
#include "fuzz/codec/case_binary.hpp"
#include "fuzz/codec/case_json.hpp"
#include "fuzz/io/output_path.hpp"
#include "fuzz/io/strict_json.hpp"
#include "fuzz/seed/seed.hpp"
#include "fuzz/shrink/regression_artifacts.hpp"
#include "reference/layout.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

std::string_view as_text(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Every renderer r3fuzz has, on a valid case small enough to derive (issue 15 item 0: explain
// --json crashed on all-idle DP-chunked steps, and no fuzz target rendered explain): the text
// and JSON explanation, and for each failing policy the regression entry and GoogleTest TEST
// `r3fuzz shrink` would write.
void render_everything(const Case& c) {
  auto e = explain_case(c);
  R3_CHECK(e.ok(), "explain accepts every valid case");
  R3_CHECK(!explanation_text(*e).empty(), "explain prints something");
  const auto doc = explanation_json(*e);
  // The layout report (vLLM's explanation) lists every (dp, tp); a document of DP ranks (an
  // engine's own, fuzz/cli/engine_explain.hpp: SGLang's lists each DP rank's forward batch) every
  // DP rank, and each model every (dp, tp).
  const size_t ranks = static_cast<size_t>(c.topology.dp * c.topology.tp);
  if (doc.contains("dp_ranks")) {
    R3_CHECK(doc.at("dp_ranks").size() == static_cast<size_t>(c.topology.dp), "one JSON entry per DP rank");
    for (const auto& model : doc.at("policies")) R3_CHECK(model.at("ranks").size() == ranks, "one JSON entry per rank");
  } else {
    R3_CHECK(doc.at("ranks").size() == ranks, "one JSON entry per rank");
  }
  (void)doc.dump();
  for (const Judgement& j : e->policies) {
    if (!j.failed()) continue;
    const ImplementationSpec spec{j.impl, "", ""};
    const Case entry = regression_entry(c, j, spec, "robustness target");
    auto back = case_from_json_text(case_to_json_text(entry));
    R3_CHECK(back.ok() && *back == entry, "a regression entry reads back equal");
    R3_CHECK(!regression_test_text(entry, j, spec, JudgeMode::symbolic).empty(), "the regression TEST renders");
  }
}

// Binary: what decodes is valid, re-encodes to a fixed point, and survives the JSON text form.
bool binary(std::span<const uint8_t> bytes, const BinaryLimits& limits, bool derive) {
  auto c = case_from_binary(bytes, limits);
  if (!c) return false;
  R3_CHECK(validate(*c).ok(), "a decoded case is valid");
  const std::vector<uint8_t> encoded = case_to_binary(*c);
  auto again = case_from_binary(encoded, limits);
  R3_CHECK(again.ok() && *again == *c, "decode(encode(c)) == c");
  auto from_json = case_from_json_text(case_to_json_text(*c));
  R3_CHECK(from_json.ok() && *from_json == *c, "the JSON form of a decoded case reads back equal");
  if (derive) {
    R3_CHECK(derive_step(*c).ok(), "derive_step accepts every valid case");
    render_everything(*c);
  }
  return true;
}

bool json(std::span<const uint8_t> bytes) {
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  auto c = case_from_json_text(text);
  if (!c) {
    R3_CHECK(!c.error().message.empty(), "errors say what is wrong");
    return false;
  }
  auto again = case_from_json_text(case_to_json_text(*c));
  R3_CHECK(again.ok() && *again == *c, "JSON text round trip");
  // Only cases the concrete limits bound: JSON reaches the full limits (65536 ranks, 4096 calls).
  if (fits_binary_limits(*c, concrete_binary_limits())) render_everything(*c);
  return true;
}

// A small deployment, for the log reader (which needs one) and as the shape of reply buffers.
Deployment small_deployment() {
  auto d = deployment_from_json_text(R"({"format": "r3fuzz-deployment/1", "name": "fuzz",
      "topology": {"dp": 2, "tp": 2, "ep": true, "sp": true}, "model": {"layers": 2, "top_k": 2, "experts": 16},
      "max_num_tokens": 16, "path": "gathered", "traffic": {"decode_batches": [0, 4]}})");
  R3_CHECK(d.ok(), "the built-in deployment parses");
  return *d;
}

// A deployment description (fuzz/seed): what parses has a safe name, and every case it seeds is
// valid and lands inside the output folder.
bool deployment(std::span<const uint8_t> bytes) {
  auto d = deployment_from_json_text(as_text(bytes));
  if (!d) {
    R3_CHECK(!d.error().message.empty(), "errors say what is wrong");
    return false;
  }
  R3_CHECK(check_safe_name(d->name, "name").ok(), "a parsed deployment's name is safe");
  auto cases = cases_from_traffic(*d);
  if (!cases) return true;
  for (const Case& c : *cases) {
    R3_CHECK(validate(c).ok(), "seeded cases are valid");
    R3_CHECK(output_path_inside("out", seed_file_name(d->name, c)).ok(), "seed files stay inside --out");
  }
  return true;
}

// A metadata log (fuzz/seed) for the small deployment: every case it yields is valid.
bool log(std::span<const uint8_t> bytes) {
  static const Deployment d = small_deployment();
  std::vector<std::string> errors;
  const std::vector<Case> cases = cases_from_metadata_log(d, as_text(bytes), errors);
  for (const Case& c : cases) {
    R3_CHECK(validate(c).ok(), "log cases are valid");
    R3_CHECK(derive_step(c).ok(), "derive_step accepts every valid case");
  }
  for (const std::string& e : errors) R3_CHECK(e.starts_with("line "), "log errors name their line");
  return !cases.empty();
}

// An adapter's reply line (fuzz/adapter/protocol): hello and capture replies both read as values.
bool adapter_reply(std::span<const uint8_t> bytes) {
  auto reply = parse_json_strictly(as_text(bytes));
  if (!reply) return false;
  int accepted = 0;
  accepted += read_hello(*reply).ok();
  accepted += reply_id(*reply).ok();
  // Each engine's reply to its step request (vLLM's: the base capture reply), its texts kept cut.
  for (Engine e : all_engines()) {
    const EngineAdapter* adapter = engine_adapter(e);
    if (adapter == nullptr) continue;
    if (auto texts = adapter->read_reply_for_fuzzing(*reply, BufferShape{16, 2, 2})) {
      ++accepted;
      R3_CHECK(texts->error.size() <= kMaxStoredReplyTextBytes + 64 && texts->branch.size() <= 64,
               "reply texts are stored cut");
    }
  }
  return accepted > 0;
}

// Metadata overrides as a production log would give them: a small base case chosen by the
// first byte, then num_tokens_across_dp and local_sizes of any length and content.
bool metadata(std::span<const uint8_t> bytes) {
  if (bytes.size() < 3) return false;
  Case c;
  c.model = {2, 2, 16};
  c.max_num_tokens = 16;
  switch (bytes[0] % 4) {
    case 0: c.topology = {2, 2, true, true}; c.path = Path::gathered; c.tokens = {5, 3}; break;
    case 1: c.topology = {2, 4, true, true}; c.path = Path::sp_shard; c.tokens = {1, 9}; break;
    case 2: c.topology = {3, 1, false, false}; c.path = Path::local; c.tokens = {4, 0, 7}; break;
    default: c.topology = {3, 2, true, false}; c.path = Path::gathered; c.tokens = {2, 2, 16}; c.monolithic = true;
  }
  MetadataOverride m;
  size_t pos = 3;
  auto list = [&](size_t count) {
    std::vector<int64_t> values;
    for (size_t i = 0; i < count && pos < bytes.size(); ++i) values.push_back(bytes[pos++]);
    return values;
  };
  if (bytes[1] & 1u) m.num_tokens_across_dp = list(bytes[2] & 0x0Fu);
  m.local_sizes_given = bytes[1] & 2u;
  if (m.local_sizes_given && (bytes[1] & 4u)) m.local_sizes = list(bytes[2] >> 4);
  c.metadata = m;
  if (!validate(c)) return false;
  auto step = derive_step(c);
  R3_CHECK(step.ok(), "derive_step accepts every valid case");
  R3_CHECK(!step->rejection || !step->rejection->empty(), "a rejection names its reason");
  return true;
}

}  // namespace

int exercise_decoders(std::span<const uint8_t> bytes) {
  int accepted = 0;
  accepted += binary(bytes, concrete_binary_limits(), true);
  accepted += binary(bytes, full_binary_limits(), false);  // may be production-sized: no derivation
  accepted += json(bytes);
  accepted += metadata(bytes);
  accepted += deployment(bytes);
  accepted += log(bytes);
  accepted += adapter_reply(bytes);
  return accepted;
}

}  // namespace r3
