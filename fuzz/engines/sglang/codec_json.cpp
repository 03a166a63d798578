// SGLang cases in JSON (codec.hpp; docs/layout-contract.md section 11).
#include "fuzz/engines/sglang/codec.hpp"

#include "fuzz/codec/json_fields.hpp"
#include "reference/engines/sglang/fields.hpp"

namespace r3::sglang {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;
using namespace json_fields;

Result<CudaGraphs> read_cuda_graph(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "cuda_graph", {"decode", "prefill"}));
  CudaGraphs g;
  if (const json* decode = o.find("decode")) { R3_TRY(g.decode, read_int_list(*decode, o.path("decode"))); }
  if (const json* prefill = o.find("prefill")) { R3_TRY(g.prefill, read_int_list(*prefill, o.path("prefill"))); }
  return g;
}

}  // namespace

// The fields in the order the example lists them; a vLLM-only key is unknown here.
Result<Case> read_case_document(const json& doc) {
  R3_TRY(ObjectReader o, ObjectReader::open(doc, "", {"format", "engine", "topology", "model", "forward", "tokens",
                                                      "requests", "spec_width", "cuda_graph", "last_decode_bucket",
                                                      "tbo", "chunked_prefill_size", "max_running_requests",
                                                      "max_prefill_tokens", "layer", "profile", "note", "expect"}));
  R3_TRY_STATUS(check_format(o));
  Case c;
  c.engine = engine();
  Forward& f = c.engine_fields.emplace<Forward>();
  R3_TRY(const json* topology, o.require("topology"));
  R3_TRY(ObjectReader t, ObjectReader::open(*topology, "topology", {"dp", "tp", "dp_attention", "a2a"}));
  R3_TRY(const json* dp, t.require("dp"));
  R3_TRY(c.topology.dp, read_int(*dp, t.path("dp")));
  R3_TRY(const json* tp, t.require("tp"));
  R3_TRY(c.topology.tp, read_int(*tp, t.path("tp")));
  R3_TRY(const json* dp_attention, t.require("dp_attention"));
  R3_TRY(f.dp_attention, read_bool(*dp_attention, t.path("dp_attention")));
  if (const json* a2a = t.find("a2a")) {
    R3_TRY(std::string a2a_text, read_string(*a2a, t.path("a2a")));
    R3_TRY(f.a2a, parse_a2a(a2a_text));
  }
  R3_TRY(const json* model, o.require("model"));
  R3_TRY(c.model, read_model(*model));
  R3_TRY(const json* forward, o.require("forward"));
  R3_TRY(std::string forward_text, read_string(*forward, "forward"));
  R3_TRY(f.kind, parse_forward_kind(forward_text));
  if (f.kind == ForwardKind::extend) {
    if (o.find("requests")) return Error{"requests: an extend forward counts tokens per DP rank (use \"tokens\")"};
    R3_TRY(const json* tokens, o.require("tokens"));
    R3_TRY(c.tokens, read_int_list(*tokens, "tokens"));
  } else {
    if (o.find("tokens")) return Error{"tokens: a decode or verify forward counts requests per DP rank (use \"requests\")"};
    R3_TRY(const json* requests, o.require("requests"));
    R3_TRY(f.requests, read_int_list(*requests, "requests"));
  }
  if (f.kind == ForwardKind::verify) {
    R3_TRY(const json* width, o.require("spec_width"));
    R3_TRY(f.spec_width, read_int64(*width, "spec_width"));
  } else if (const json* width = o.find("spec_width")) {
    R3_TRY(f.spec_width, read_int64(*width, "spec_width"));
  }
  if (const json* graphs = o.find("cuda_graph")) { R3_TRY(f.cuda_graph, read_cuda_graph(*graphs)); }
  if (const json* last = o.find("last_decode_bucket"); last && !last->is_null()) {
    R3_TRY(f.last_decode_bucket, read_int64(*last, "last_decode_bucket"));
  }
  if (const json* tbo = o.find("tbo")) { R3_TRY(f.tbo, read_bool(*tbo, "tbo")); }
  R3_TRY(const json* cps, o.require("chunked_prefill_size"));
  R3_TRY(f.chunked_prefill_size, read_int64(*cps, "chunked_prefill_size"));
  R3_TRY(const json* mrr, o.require("max_running_requests"));
  R3_TRY(f.max_running_requests, read_int64(*mrr, "max_running_requests"));
  if (const json* mpt = o.find("max_prefill_tokens")) { R3_TRY(f.max_prefill_tokens, read_int64(*mpt, "max_prefill_tokens")); }
  R3_TRY(const json* layer, o.require("layer"));
  R3_TRY(c.layer, read_int(*layer, "layer"));
  R3_TRY_STATUS(read_trailer(o, c));  // profile, note (at most 1 MiB, as for vLLM), expect
  return c;
}

// An SGLang case, keys in the order; max_prefill_tokens only when it is not SGLang's
// default, spec_width only for verify, last_decode_bucket with cuda_graph.
ordered_json case_document(const Case& c) {
  const Forward& f = *forward_of(c);
  ordered_json doc = ordered_json::object();
  doc["format"] = std::string(kCaseFormat);
  doc["engine"] = std::string(to_string(c.engine));
  ordered_json topology = ordered_json::object();
  topology["dp"] = c.topology.dp;
  topology["tp"] = c.topology.tp;
  topology["dp_attention"] = f.dp_attention;
  topology["a2a"] = std::string(to_string(f.a2a));
  doc["topology"] = std::move(topology);
  doc["model"] = model_json(c.model);
  doc["forward"] = std::string(to_string(f.kind));
  if (f.kind == ForwardKind::extend) doc["tokens"] = int_list(c.tokens);
  else doc["requests"] = int_list(f.requests);
  if (f.kind == ForwardKind::verify) doc["spec_width"] = f.spec_width;
  if (f.cuda_graph) {
    ordered_json graphs = ordered_json::object();
    if (!f.cuda_graph->decode.empty()) graphs["decode"] = int_list(f.cuda_graph->decode);
    if (!f.cuda_graph->prefill.empty()) graphs["prefill"] = int_list(f.cuda_graph->prefill);
    doc["cuda_graph"] = std::move(graphs);
  }
  if (f.cuda_graph || f.last_decode_bucket) {
    doc["last_decode_bucket"] = f.last_decode_bucket ? ordered_json(*f.last_decode_bucket) : ordered_json(nullptr);
  }
  doc["tbo"] = f.tbo;
  doc["chunked_prefill_size"] = f.chunked_prefill_size;
  doc["max_running_requests"] = f.max_running_requests;
  if (f.max_prefill_tokens != Forward{}.max_prefill_tokens) doc["max_prefill_tokens"] = f.max_prefill_tokens;
  doc["layer"] = c.layer;
  add_trailer(doc, c);
  return doc;
}

}  // namespace r3::sglang
