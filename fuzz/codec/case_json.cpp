#include "fuzz/codec/case_json.hpp"

#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <initializer_list>
#include <sstream>

#include "fuzz/io/input_file.hpp"
#include "fuzz/io/new_file.hpp"
#include "fuzz/io/strict_json.hpp"
#include "reference/limits.hpp"
#include "reference/validate.hpp"

namespace r3 {
namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;

// ---- reading -------------------------------------------------------------------------

// "string", "boolean", "array", ...; a non-integer number shows its value.
std::string kind_of(const json& v) {
  if (v.is_number_float()) return "number " + v.dump();
  return v.type_name();
}

std::string child(const std::string& where, std::string_view key) {
  return where.empty() ? std::string(key) : where + "." + std::string(key);
}

std::string element(const std::string& where, size_t i) { return where + "[" + std::to_string(i) + "]"; }

// An object whose keys must come from `allowed`; `where` is its path ("" at the top level).
class ObjectReader {
 public:
  static Result<ObjectReader> open(const json& v, std::string where, std::initializer_list<std::string_view> allowed) {
    const std::string name = where.empty() ? "case" : where;
    if (!v.is_object()) return Error{name + ": expected an object, got " + kind_of(v)};
    for (const auto& item : v.items()) {
      bool known = false;
      for (std::string_view key : allowed) known = known || item.key() == key;
      if (known) continue;
      std::string list;
      for (std::string_view key : allowed) list += (list.empty() ? "" : ", ") + std::string(key);
      return Error{name + ": unknown key \"" + item.key() + "\" (allowed: " + list + ")"};
    }
    return ObjectReader(v, std::move(where));
  }

  const json* find(std::string_view key) const {
    auto it = object_->find(std::string(key));
    return it == object_->end() ? nullptr : &*it;
  }
  Result<const json*> require(std::string_view key) const {
    if (const json* v = find(key)) return v;
    return Error{path(key) + ": required key is missing"};
  }
  std::string path(std::string_view key) const { return child(where_, key); }

 private:
  ObjectReader(const json& v, std::string where) : object_(&v), where_(std::move(where)) {}
  const json* object_;
  std::string where_;
};

Result<int64_t> read_int64(const json& v, const std::string& name) {
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return Error{name + ": " + v.dump() + " is out of range for a 64-bit integer"};
    return static_cast<int64_t>(u);
  }
  if (v.is_number_integer()) return v.get<int64_t>();
  return Error{name + ": expected an integer, got " + kind_of(v)};
}

Result<int> read_int(const json& v, const std::string& name) {
  R3_TRY(int64_t value, read_int64(v, name));
  if (value < INT_MIN || value > INT_MAX) return Error{name + ": " + std::to_string(value) + " is out of range for a 32-bit integer"};
  return static_cast<int>(value);
}

Result<bool> read_bool(const json& v, const std::string& name) {
  if (!v.is_boolean()) return Error{name + ": expected true or false, got " + kind_of(v)};
  return v.get<bool>();
}

Result<std::string> read_string(const json& v, const std::string& name) {
  if (!v.is_string()) return Error{name + ": expected a string, got " + kind_of(v)};
  return v.get<std::string>();
}

Result<std::vector<int64_t>> read_int_list(const json& v, const std::string& name) {
  if (!v.is_array()) return Error{name + ": expected a list of integers, got " + kind_of(v)};
  std::vector<int64_t> out;
  out.reserve(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    R3_TRY(int64_t value, read_int64(v[i], element(name, i)));
    out.push_back(value);
  }
  return out;
}

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

Result<ModelShape> read_model(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "model", {"layers", "top_k", "experts"}));
  ModelShape m;
  R3_TRY(const json* layers, o.require("layers"));
  R3_TRY(m.layers, read_int(*layers, o.path("layers")));
  R3_TRY(const json* top_k, o.require("top_k"));
  R3_TRY(m.top_k, read_int(*top_k, o.path("top_k")));
  R3_TRY(const json* experts, o.require("experts"));
  R3_TRY(m.experts, read_int(*experts, o.path("experts")));
  return m;
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

// Texts the binary format could not carry are refused here, so every case read round-trips.
Status check_text_size(const std::string& text, std::string_view field) {
  if (static_cast<int64_t>(text.size()) <= limits::kMaxTextBytes) return ok_status();
  return Error{std::string(field) + ": " + std::to_string(text.size()) + " bytes, at most " +
               std::to_string(limits::kMaxTextBytes) + " (1 MiB, the binary case format's limit)"};
}

Result<Expectation> read_expect(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "expect", {"impl", "verdict", "severity"}));
  Expectation e;
  R3_TRY(const json* impl, o.require("impl"));
  R3_TRY(e.impl, read_string(*impl, o.path("impl")));
  if (e.impl.empty()) return Error{"expect.impl: must name an implementation, got an empty string"};
  R3_TRY_STATUS(check_text_size(e.impl, "expect.impl"));
  R3_TRY(const json* verdict, o.require("verdict"));
  R3_TRY(const std::string verdict_text, read_string(*verdict, o.path("verdict")));
  auto parsed_verdict = parse_verdict(verdict_text);
  if (!parsed_verdict) return Error{"expect." + parsed_verdict.error().message};
  e.verdict = *parsed_verdict;
  if (const json* severity = o.find("severity"); severity && !severity->is_null()) {
    R3_TRY(const std::string severity_text, read_string(*severity, o.path("severity")));
    auto parsed = parse_severity(severity_text);
    if (!parsed) return Error{"expect." + parsed.error().message};
    e.severity = *parsed;
  }
  return e;
}

// ---- SGLang cases (engine "sglang"; docs/layout-contract.md section 11) ----------------

Status check_format(const ObjectReader& o) {
  R3_TRY(const json* format, o.require("format"));
  R3_TRY(std::string format_text, read_string(*format, "format"));
  if (format_text != kCaseFormat) {
    return Error{"format: \"" + format_text + "\" is not supported (expected \"" + std::string(kCaseFormat) + "\")"};
  }
  return ok_status();
}

Result<sglang::CudaGraphs> read_cuda_graph(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "cuda_graph", {"decode", "prefill"}));
  sglang::CudaGraphs g;
  if (const json* decode = o.find("decode")) { R3_TRY(g.decode, read_int_list(*decode, o.path("decode"))); }
  if (const json* prefill = o.find("prefill")) { R3_TRY(g.prefill, read_int_list(*prefill, o.path("prefill"))); }
  return g;
}

// The fields in the order the example lists them; a vLLM-only key is unknown here.
Result<Case> read_sglang_case(const json& doc) {
  R3_TRY(ObjectReader o, ObjectReader::open(doc, "", {"format", "engine", "topology", "model", "forward", "tokens",
                                                      "requests", "spec_width", "cuda_graph", "last_decode_bucket",
                                                      "tbo", "chunked_prefill_size", "max_running_requests",
                                                      "max_prefill_tokens", "layer", "profile", "note", "expect"}));
  R3_TRY_STATUS(check_format(o));
  Case c;
  c.engine = Engine::sglang;
  sglang::Forward& f = c.sglang.emplace();
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
    R3_TRY(f.a2a, sglang::parse_a2a(a2a_text));
  }
  R3_TRY(const json* model, o.require("model"));
  R3_TRY(c.model, read_model(*model));
  R3_TRY(const json* forward, o.require("forward"));
  R3_TRY(std::string forward_text, read_string(*forward, "forward"));
  R3_TRY(f.kind, sglang::parse_forward_kind(forward_text));
  if (f.kind == sglang::ForwardKind::extend) {
    if (o.find("requests")) return Error{"requests: an extend forward counts tokens per DP rank (use \"tokens\")"};
    R3_TRY(const json* tokens, o.require("tokens"));
    R3_TRY(c.tokens, read_int_list(*tokens, "tokens"));
  } else {
    if (o.find("tokens")) return Error{"tokens: a decode or verify forward counts requests per DP rank (use \"requests\")"};
    R3_TRY(const json* requests, o.require("requests"));
    R3_TRY(f.requests, read_int_list(*requests, "requests"));
  }
  if (f.kind == sglang::ForwardKind::verify) {
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
  if (const json* profile = o.find("profile")) {
    R3_TRY(std::string profile_text, read_string(*profile, "profile"));
    R3_TRY(c.profile, parse_profile(profile_text));
  }
  if (const json* note = o.find("note")) {
    R3_TRY(c.note, read_string(*note, "note"));
    R3_TRY_STATUS(check_text_size(c.note, "note"));  // as for vLLM: the binary form carries at most 1 MiB
  }
  if (const json* expect = o.find("expect")) { R3_TRY(c.expect, read_expect(*expect)); }
  R3_TRY_STATUS(validate(c));
  return c;
}

// "engine" decides which fields a case has; absent, it is vllm and every older file keeps its meaning.
Result<Engine> read_engine(const json& doc) {
  if (!doc.is_object()) return Engine::vllm;  // read_case's reader names the mistake
  auto it = doc.find("engine");
  if (it == doc.end()) return Engine::vllm;
  R3_TRY(std::string text, read_string(*it, "engine"));
  return parse_engine(text);
}

Result<Case> read_case(const json& doc) {
  R3_TRY(Engine engine, read_engine(doc));
  if (engine == Engine::sglang) return read_sglang_case(doc);
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
  if (const json* profile = o.find("profile")) {
    R3_TRY(std::string profile_text, read_string(*profile, "profile"));
    R3_TRY(c.profile, parse_profile(profile_text));
  }
  if (const json* note = o.find("note")) {
    R3_TRY(c.note, read_string(*note, "note"));
    R3_TRY_STATUS(check_text_size(c.note, "note"));
  }
  if (const json* expect = o.find("expect")) {
    R3_TRY(c.expect, read_expect(*expect));
  }
  R3_TRY_STATUS(validate(c));
  return c;
}

// ---- writing -------------------------------------------------------------------------

template <class J>
J int_list(const std::vector<int64_t>& values) {
  J out = J::array();
  for (int64_t v : values) out.push_back(v);
  return out;
}

template <class J>
J model_json(const ModelShape& m) {
  J model = J::object();
  model["layers"] = m.layers;
  model["top_k"] = m.top_k;
  model["experts"] = m.experts;
  return model;
}

template <class J>
void add_trailer(J& doc, const Case& c) {
  if (c.profile) doc["profile"] = std::string(to_string(*c.profile));
  if (!c.note.empty()) doc["note"] = c.note;
  if (c.expect) {
    J expect = J::object();
    expect["impl"] = c.expect->impl;
    expect["verdict"] = std::string(to_string(c.expect->verdict));
    expect["severity"] = c.expect->severity == Severity::none ? J(nullptr) : J(std::string(to_string(c.expect->severity)));
    doc["expect"] = std::move(expect);
  }
}

// An SGLang case, keys in the order; max_prefill_tokens only when it is not SGLang's
// default, spec_width only for verify, last_decode_bucket with cuda_graph.
template <class J>
J build_sglang(const Case& c) {
  const sglang::Forward& f = *c.sglang;
  J doc = J::object();
  doc["format"] = std::string(kCaseFormat);
  doc["engine"] = std::string(to_string(c.engine));
  J topology = J::object();
  topology["dp"] = c.topology.dp;
  topology["tp"] = c.topology.tp;
  topology["dp_attention"] = f.dp_attention;
  topology["a2a"] = std::string(to_string(f.a2a));
  doc["topology"] = std::move(topology);
  doc["model"] = model_json<J>(c.model);
  doc["forward"] = std::string(to_string(f.kind));
  if (f.kind == sglang::ForwardKind::extend) doc["tokens"] = int_list<J>(c.tokens);
  else doc["requests"] = int_list<J>(f.requests);
  if (f.kind == sglang::ForwardKind::verify) doc["spec_width"] = f.spec_width;
  if (f.cuda_graph) {
    J graphs = J::object();
    if (!f.cuda_graph->decode.empty()) graphs["decode"] = int_list<J>(f.cuda_graph->decode);
    if (!f.cuda_graph->prefill.empty()) graphs["prefill"] = int_list<J>(f.cuda_graph->prefill);
    doc["cuda_graph"] = std::move(graphs);
  }
  if (f.cuda_graph || f.last_decode_bucket) doc["last_decode_bucket"] = f.last_decode_bucket ? J(*f.last_decode_bucket) : J(nullptr);
  doc["tbo"] = f.tbo;
  doc["chunked_prefill_size"] = f.chunked_prefill_size;
  doc["max_running_requests"] = f.max_running_requests;
  if (f.max_prefill_tokens != sglang::Forward{}.max_prefill_tokens) doc["max_prefill_tokens"] = f.max_prefill_tokens;
  doc["layer"] = c.layer;
  add_trailer(doc, c);
  return doc;
}

// Keys in design.md's order when J keeps insertion order (ordered_json).
template <class J>
J build(const Case& c) {
  if (c.engine == Engine::sglang) return build_sglang<J>(c);
  J doc = J::object();
  doc["format"] = std::string(kCaseFormat);
  J topology = J::object();
  topology["dp"] = c.topology.dp;
  topology["tp"] = c.topology.tp;
  topology["ep"] = c.topology.ep;
  topology["sp"] = c.topology.sp;
  doc["topology"] = std::move(topology);
  doc["model"] = model_json<J>(c.model);
  doc["max_num_tokens"] = c.max_num_tokens;
  doc["tokens"] = int_list<J>(c.tokens);
  if (c.padding.mode == PaddingMode::cudagraph) {
    J padding = J::object();
    padding["cudagraph"] = int_list<J>(c.padding.cudagraph_sizes);
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
    J metadata = J::object();
    if (c.metadata->num_tokens_across_dp) metadata["num_tokens_across_dp"] = int_list<J>(*c.metadata->num_tokens_across_dp);
    if (c.metadata->local_sizes_given) {
      metadata["local_sizes"] = c.metadata->local_sizes ? int_list<J>(*c.metadata->local_sizes) : J(nullptr);
    }
    doc["metadata"] = std::move(metadata);
  }
  add_trailer(doc, c);
  return doc;
}

// Invalid UTF-8 in a note becomes U+FFFD instead of an exception.
std::string dump_scalar(const ordered_json& v) { return v.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

bool is_scalar_list(const ordered_json& v) {
  if (!v.is_array()) return false;
  for (const auto& e : v)
    if (e.is_structured()) return false;
  return true;
}

// Scalars, scalar lists and objects of those fit on one line.
bool fits_one_line(const ordered_json& v) {
  if (v.is_primitive() || is_scalar_list(v)) return true;
  if (!v.is_object()) return false;
  for (const auto& item : v.items())
    if (!(item.value().is_primitive() || is_scalar_list(item.value()))) return false;
  return true;
}

void print_inline(const ordered_json& v, std::string& out) {
  if (v.is_array()) {
    out += '[';
    for (size_t i = 0; i < v.size(); ++i) {
      if (i) out += ", ";
      print_inline(v[i], out);
    }
    out += ']';
  } else if (v.is_object()) {
    out += '{';
    bool first = true;
    for (const auto& item : v.items()) {
      if (!first) out += ", ";
      first = false;
      out += dump_scalar(ordered_json(item.key())) + ": ";
      print_inline(item.value(), out);
    }
    out += '}';
  } else {
    out += dump_scalar(v);
  }
}

void print_pretty(const ordered_json& v, int indent, bool top, std::string& out) {
  if (!top && fits_one_line(v)) return print_inline(v, out);
  const std::string pad(static_cast<size_t>(indent) + 2, ' ');
  const bool object = v.is_object();
  out += object ? "{\n" : "[\n";
  size_t i = 0;
  for (const auto& item : v.items()) {
    out += pad;
    if (object) out += dump_scalar(ordered_json(item.key())) + ": ";
    print_pretty(item.value(), indent + 2, false, out);
    out += ++i < v.size() ? ",\n" : "\n";
  }
  out += std::string(static_cast<size_t>(indent), ' ') + (object ? "}" : "]");
}

}  // namespace

Result<Case> case_from_json(const nlohmann::json& doc) {
  try {
    return read_case(doc);
  } catch (const std::exception& e) {  // defensive: every access above is type-checked first
    return Error{std::string("case: cannot read JSON: ") + e.what()};
  }
}

Result<Case> case_from_json_text(std::string_view text) {
  R3_TRY(json doc, parse_json_strictly(text));
  return case_from_json(doc);
}

nlohmann::json case_to_json(const Case& c) { return build<json>(c); }

std::string case_to_json_text(const Case& c) {
  std::string out;
  print_pretty(build<ordered_json>(c), 0, true, out);
  out += '\n';
  return out;
}

Result<Case> read_case_file(const std::string& path) {
  R3_TRY(std::string text, read_input_file(path));
  auto c = case_from_json_text(text);
  if (!c) return Error{path + ": " + c.error().message};
  return c;
}

Status write_case_file(const std::string& path, const Case& c) {
  return write_new_file(path, case_to_json_text(c));  // a new file, renamed over the name
}

}  // namespace r3
