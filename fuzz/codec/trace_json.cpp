#include "fuzz/codec/trace_json.hpp"

#include <algorithm>
#include <array>
#include <span>

#include "fuzz/codec/json_fields.hpp"
#include "fuzz/io/input_file.hpp"
#include "fuzz/io/new_file.hpp"
#include "fuzz/io/strict_json.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3 {

using namespace json_fields;

namespace {

using json = nlohmann::json;
using ordered_json = nlohmann::ordered_json;
namespace tl = trace_limits;

// The keys of "topology" and "config" every engine reads; any other key there is an engine knob.
constexpr std::string_view kTopology = "topology";
constexpr std::string_view kConfig = "config";
constexpr std::array<std::string_view, 2> kTopologyKeys = {"dp", "tp"};
constexpr std::array<std::string_view, 8> kConfigKeys = {"token_budget", "chunk",   "page", "kv_slots",
                                                         "prefix_cache", "overlap", "spec", "cuda_graph"};

bool is_generic(std::string_view object, std::string_view key) {
  const auto& keys = object == kTopology ? std::span<const std::string_view>(kTopologyKeys)
                                         : std::span<const std::string_view>(kConfigKeys);
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

Error knob_not_scalar(const std::string& name, const std::string& kind) {
  return Error{name + ": an engine knob's value must be a scalar (true, 4, \"deepep\"), got " + kind};
}

std::string element(const std::string& where, size_t i) { return where + "[" + std::to_string(i) + "]"; }

// ---- reading: values ---------------------------------------------------------------------

Result<int64_t> read_ranged(const json& v, const std::string& name, int64_t lo, int64_t hi) {
  R3_TRY(int64_t value, read_int64(v, name));
  if (value >= lo && value <= hi) return value;
  return Error{name + ": " + std::to_string(value) + " is out of range (" + std::to_string(lo) + " to " +
               std::to_string(hi) + ")"};
}

// A required key's integer in [lo, hi], stored into `out`.
template <class T>
Status read_field(const ObjectReader& o, std::string_view key, int64_t lo, int64_t hi, T& out) {
  R3_TRY(const json* v, o.require(key));
  R3_TRY(int64_t value, read_ranged(*v, o.path(key), lo, hi));
  out = static_cast<T>(value);
  return ok_status();
}

// A request named by its id: one of the trace's `count` requests.
Result<int> read_request_ref(const json& v, const std::string& name, size_t count) {
  R3_TRY(int64_t value, read_int64(v, name));
  if (value >= 0 && static_cast<size_t>(value) < count) return static_cast<int>(value);
  return Error{name + ": " + std::to_string(value) + " names no request (the trace has " + std::to_string(count) + ")"};
}

// A list of at most `max` entries, refused before anything is read from it.
Result<const json*> read_list(const json& v, const std::string& name, size_t max, std::string_view entries) {
  if (!v.is_array()) return Error{name + ": expected a list, got " + kind_of(v)};
  if (v.size() > max) {
    return Error{name + ": " + std::to_string(v.size()) + " " + std::string(entries) + ", at most " + std::to_string(max)};
  }
  return &v;
}

Result<std::vector<int32_t>> read_tokens(const json& v, const std::string& name) {
  R3_TRY(const json* list, read_list(v, name, tl::kMaxTokens, "tokens"));
  std::vector<int32_t> tokens;
  tokens.reserve(list->size());
  for (size_t i = 0; i < list->size(); ++i) {
    R3_TRY(int64_t token, read_ranged((*list)[i], element(name, i), 0, tl::kMaxTokenId));
    tokens.push_back(static_cast<int32_t>(token));
  }
  return tokens;
}

Status check_text(const std::string& text, std::string_view name) {
  if (static_cast<int64_t>(text.size()) <= tl::kMaxText) return ok_status();
  return Error{std::string(name) + ": " + std::to_string(text.size()) + " bytes, at most " + std::to_string(tl::kMaxText) +
               " (1 MiB, the binary trace format's limit)"};
}

Result<std::string> read_named_text(const ObjectReader& o, std::string_view key, std::string_view what) {
  R3_TRY(const json* v, o.require(key));
  R3_TRY(std::string text, read_string(*v, o.path(key)));
  if (text.empty()) return Error{o.path(key) + ": must name " + std::string(what) + ", got an empty string"};
  R3_TRY_STATUS(check_text(text, o.path(key)));
  return text;
}

// ---- reading: the header -----------------------------------------------------------------

// Checked before the keys, so a case file handed to the trace reader is told so first.
Status check_trace_format(const json& doc) {
  if (!doc.is_object()) return Error{"trace: expected an object, got " + kind_of(doc)};
  auto it = doc.find("format");
  if (it == doc.end()) return Error{"format: required key is missing"};
  R3_TRY(std::string text, read_string(*it, "format"));
  if (text == kTraceFormat) return ok_status();
  return Error{"format: \"" + text + "\" is not supported (expected \"" + std::string(kTraceFormat) + "\")"};
}

// ObjectReader calls the top-level object "case"; here it is the trace.
Result<ObjectReader> open_trace(const json& doc) {
  auto o = ObjectReader::open(doc, "", {"format", "engine", "profile", "topology", "model", "config", "requests", "steps",
                                        "copies", "note", "expect"});
  if (o) return o;
  std::string message = o.error().message;
  if (message.starts_with("case:")) message.replace(0, 4, "trace");
  return Error{message};
}

// Splits `object` ("topology" or "config") into its generic keys, returned as an object of their
// own for ObjectReader, and its engine knobs, added to t.knobs.
Result<json> split_knobs(const json& v, std::string_view object, Trace& t) {
  if (!v.is_object()) return Error{std::string(object) + ": expected an object, got " + kind_of(v)};
  json generic = json::object();
  for (const auto& item : v.items()) {
    if (is_generic(object, item.key())) {
      generic[item.key()] = item.value();
      continue;
    }
    const std::string name = std::string(object) + "." + item.key();
    if (item.value().is_structured()) return knob_not_scalar(name, kind_of(item.value()));
    if (t.knobs.size() >= static_cast<size_t>(tl::kMaxKnobs)) {
      return Error{name + ": more than " + std::to_string(tl::kMaxKnobs) + " engine knobs"};
    }
    std::string text = item.value().dump();
    R3_TRY_STATUS(check_trace_knob(name, text));
    t.knobs.emplace(name, std::move(text));
  }
  return generic;
}

Status read_topology(const json& v, Trace& t) {
  R3_TRY(const json generic, split_knobs(v, kTopology, t));
  R3_TRY(ObjectReader o, ObjectReader::open(generic, std::string(kTopology), {"dp", "tp"}));
  R3_TRY_STATUS(read_field(o, "dp", 1, tl::kMaxDp, t.dp));
  return read_field(o, "tp", 1, tl::kMaxTp, t.tp);
}

Result<std::optional<SpecConfig>> read_spec(const json& v) {
  if (v.is_null()) return std::optional<SpecConfig>();
  if (!v.is_object()) return Error{"config.spec: expected null or {\"width\": k, \"tree\": bool}, got " + kind_of(v)};
  R3_TRY(ObjectReader o, ObjectReader::open(v, "config.spec", {"width", "tree"}));
  SpecConfig spec;
  R3_TRY_STATUS(read_field(o, "width", 1, tl::kMaxSpecWidth, spec.width));
  R3_TRY(const json* tree, o.require("tree"));
  R3_TRY(spec.tree, read_bool(*tree, o.path("tree")));
  return std::optional<SpecConfig>(spec);
}

Result<std::vector<int64_t>> read_cuda_graph(const json& v) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, "config.cuda_graph", {"decode"}));
  std::vector<int64_t> sizes;
  const json* decode = o.find("decode");
  if (!decode) return sizes;  // {}: no graphs
  R3_TRY(const json* list, read_list(*decode, o.path("decode"), tl::kMaxGraphSizes, "sizes"));
  for (size_t i = 0; i < list->size(); ++i) {
    R3_TRY(int64_t size, read_ranged((*list)[i], element(o.path("decode"), i), 1, tl::kMaxRows));
    sizes.push_back(size);
  }
  return sizes;
}

Status read_config(const json& v, Trace& t) {
  R3_TRY(const json generic, split_knobs(v, kConfig, t));
  R3_TRY(ObjectReader o, ObjectReader::open(generic, std::string(kConfig),
                                            {"token_budget", "chunk", "page", "kv_slots", "prefix_cache", "overlap", "spec",
                                             "cuda_graph"}));
  TraceConfig& c = t.config;
  R3_TRY_STATUS(read_field(o, "token_budget", 1, tl::kMaxRows, c.token_budget));
  R3_TRY(const json* chunk, o.require("chunk"));
  R3_TRY(c.chunk, read_int64(*chunk, o.path("chunk")));
  if (c.chunk != -1 && (c.chunk < 1 || c.chunk > tl::kMaxRows)) {
    return Error{"config.chunk: " + std::to_string(c.chunk) + " is out of range (-1 for off, or 1 to " +
                 std::to_string(tl::kMaxRows) + ")"};
  }
  R3_TRY_STATUS(read_field(o, "page", 1, tl::kMaxRows, c.page));
  R3_TRY_STATUS(read_field(o, "kv_slots", 1, tl::kMaxRows, c.kv_slots));
  R3_TRY(const json* prefix_cache, o.require("prefix_cache"));
  R3_TRY(c.prefix_cache, read_bool(*prefix_cache, o.path("prefix_cache")));
  R3_TRY(const json* overlap, o.require("overlap"));
  R3_TRY(c.overlap, read_bool(*overlap, o.path("overlap")));
  if (const json* spec = o.find("spec")) {
    R3_TRY(c.spec, read_spec(*spec));
  }
  if (const json* graphs = o.find("cuda_graph")) {
    R3_TRY(c.cuda_graph_decode, read_cuda_graph(*graphs));
  }
  return ok_status();
}

// ---- reading: requests -------------------------------------------------------------------

Result<TraceRequest> read_request(const json& v, size_t index, size_t count, const Trace& t) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, element("requests", index),
                                            {"id", "dp", "prompt", "outputs", "max_new", "finish", "start_len", "arrival",
                                             "resume_of"}));
  TraceRequest r;
  R3_TRY(const json* id, o.require("id"));
  R3_TRY(r.id, read_int(*id, o.path("id")));
  if (r.id < 0 || static_cast<size_t>(r.id) != index) {
    return Error{o.path("id") + ": " + std::to_string(r.id) + ", expected " + std::to_string(index) +
                 " (a request's id is its place in the list)"};
  }
  R3_TRY_STATUS(read_field(o, "dp", 0, t.dp - 1, r.dp));
  R3_TRY(const json* prompt, o.require("prompt"));
  R3_TRY(r.prompt, read_tokens(*prompt, o.path("prompt")));
  R3_TRY(const json* outputs, o.require("outputs"));
  R3_TRY(r.outputs, read_tokens(*outputs, o.path("outputs")));
  if (const json* max_new = o.find("max_new")) {
    R3_TRY(r.max_new, read_ranged(*max_new, o.path("max_new"), 0, tl::kMaxTokens));
  }
  R3_TRY(const json* finish, o.require("finish"));
  R3_TRY(const std::string finish_text, read_string(*finish, o.path("finish")));
  auto parsed = parse_finish(finish_text);
  if (!parsed) return Error{o.path("finish") + ": " + parsed.error().message};
  r.finish = *parsed;
  if (const json* start_len = o.find("start_len")) {
    R3_TRY(r.start_len, read_ranged(*start_len, o.path("start_len"), -tl::kMaxPosition, tl::kMaxPosition));
  }
  if (const json* arrival = o.find("arrival")) {
    R3_TRY(int64_t step, read_ranged(*arrival, o.path("arrival"), 0, tl::kMaxSteps));
    r.arrival = static_cast<int>(step);
  }
  if (const json* resume_of = o.find("resume_of")) {
    R3_TRY(r.resume_of, read_request_ref(*resume_of, o.path("resume_of"), count));
  }
  return r;
}

Status read_requests(const json& v, Trace& t) {
  R3_TRY(const json* list, read_list(v, "requests", tl::kMaxRequests, "requests"));
  for (size_t i = 0; i < list->size(); ++i) {
    R3_TRY(TraceRequest r, read_request((*list)[i], i, list->size(), t));
    t.requests.push_back(std::move(r));
  }
  return ok_status();
}

// ---- reading: steps ----------------------------------------------------------------------

Result<Work> read_work(const json& v, const std::string& where, size_t requests) {
  R3_TRY(ObjectReader o, ObjectReader::open(v, where, {"req", "extend", "decode", "verify"}));
  Work w;
  R3_TRY(const json* req, o.require("req"));
  R3_TRY(w.req, read_request_ref(*req, o.path("req"), requests));
  const json* extend = o.find("extend");
  const json* decode = o.find("decode");
  const json* verify = o.find("verify");
  const int kinds = (extend != nullptr) + (decode != nullptr) + (verify != nullptr);
  if (kinds != 1) {
    return Error{where + ": expected exactly one of extend, decode, verify, got " + std::to_string(kinds)};
  }
  if (extend) {
    const std::string name = o.path("extend");
    if (!extend->is_array() || extend->size() != 2) {
      const std::string got = extend->is_array() ? "a list of " + std::to_string(extend->size()) : kind_of(*extend);
      return Error{name + ": expected [from, to], got " + got};
    }
    R3_TRY(w.lo, read_ranged((*extend)[0], element(name, 0), 0, tl::kMaxPosition));
    R3_TRY(w.hi, read_ranged((*extend)[1], element(name, 1), 0, tl::kMaxPosition));
    return w;
  }
  if (decode) {
    w.kind = Work::Kind::decode;
    R3_TRY(w.lo, read_ranged(*decode, o.path("decode"), 0, tl::kMaxPosition));
  } else {
    w.kind = Work::Kind::verify;
    if (!verify->is_object()) return Error{o.path("verify") + ": expected {\"at\": q, \"accepted\": a}, got " + kind_of(*verify)};
    R3_TRY(ObjectReader vo, ObjectReader::open(*verify, o.path("verify"), {"at", "accepted"}));
    R3_TRY_STATUS(read_field(vo, "at", 0, tl::kMaxPosition, w.lo));
    R3_TRY_STATUS(read_field(vo, "accepted", 0, tl::kMaxSpecWidth, w.accepted));
  }
  w.hi = w.lo + 1;  // decode and verify forward from one input position
  return w;
}

// The one form each event kind is written in ({"preempt": r}, {"offload": {"req": r}}); the
// other is refused naming the right one, so no event reads two ways.
Result<TraceEvent> read_event(const json& v, const std::string& where, size_t requests) {
  if (!v.is_object() || v.size() != 1) {
    return Error{where + ": expected an object with one key, the event's kind, got " +
                 (v.is_object() ? std::to_string(v.size()) + " keys" : kind_of(v))};
  }
  const std::string kind_text = v.begin().key();
  const json& body = v.begin().value();
  auto kind = parse_event_kind(kind_text);
  if (!kind) return Error{where + ": " + kind.error().message};
  TraceEvent e;
  e.kind = *kind;
  const std::string name = where + "." + kind_text;
  switch (e.kind) {
    case TraceEvent::Kind::preempt:
    case TraceEvent::Kind::abort: {
      if (!body.is_number_integer()) {
        return Error{name + ": expected a request id, as in {\"" + kind_text + "\": 1}, got " + kind_of(body)};
      }
      R3_TRY(e.req, read_request_ref(body, name, requests));
      return e;
    }
    case TraceEvent::Kind::hit: {
      if (!body.is_object()) return Error{name + ": expected {\"req\": r, \"len\": n}, got " + kind_of(body)};
      R3_TRY(ObjectReader o, ObjectReader::open(body, name, {"req", "len"}));
      R3_TRY(const json* req, o.require("req"));
      R3_TRY(e.req, read_request_ref(*req, o.path("req"), requests));
      R3_TRY_STATUS(read_field(o, "len", 0, tl::kMaxPosition, e.len));
      return e;
    }
    case TraceEvent::Kind::weight_update: {
      if (!body.is_object()) return Error{name + ": expected {\"version\": v, \"flush\": bool}, got " + kind_of(body)};
      R3_TRY(ObjectReader o, ObjectReader::open(body, name, {"version", "flush"}));
      R3_TRY_STATUS(read_field(o, "version", 0, tl::kMaxVersion, e.version));
      R3_TRY(const json* flush, o.require("flush"));
      R3_TRY(e.flush, read_bool(*flush, o.path("flush")));
      return e;
    }
    case TraceEvent::Kind::offload:
    case TraceEvent::Kind::restore:
    case TraceEvent::Kind::pd_handoff: {
      if (!body.is_object()) {
        return Error{name + ": expected {\"req\": r}, as in {\"" + kind_text + "\": {\"req\": 1}}, got " + kind_of(body)};
      }
      R3_TRY(ObjectReader o, ObjectReader::open(body, name, {"req"}));
      R3_TRY(const json* req, o.require("req"));
      R3_TRY(e.req, read_request_ref(*req, o.path("req"), requests));
      return e;
    }
  }
  return Error{name + ": unknown event kind"};  // unreachable: parse_event_kind knows every kind
}

Result<TraceStep> read_step(const json& v, size_t index, size_t requests) {
  const std::string where = element("steps", index);
  R3_TRY(ObjectReader o, ObjectReader::open(v, where, {"events", "run"}));
  TraceStep step;
  if (const json* events = o.find("events")) {
    R3_TRY(const json* list, read_list(*events, o.path("events"), tl::kMaxStepEntries, "events"));
    for (size_t i = 0; i < list->size(); ++i) {
      R3_TRY(TraceEvent e, read_event((*list)[i], element(o.path("events"), i), requests));
      step.events.push_back(e);
    }
  }
  R3_TRY(const json* run, o.require("run"));
  R3_TRY(const json* list, read_list(*run, o.path("run"), tl::kMaxStepEntries, "entries"));
  for (size_t i = 0; i < list->size(); ++i) {
    R3_TRY(Work w, read_work((*list)[i], element(o.path("run"), i), requests));
    step.run.push_back(w);
  }
  return step;
}

Status read_steps(const json& v, Trace& t) {
  R3_TRY(const json* list, read_list(v, "steps", tl::kMaxSteps, "steps"));
  for (size_t i = 0; i < list->size(); ++i) {
    R3_TRY(TraceStep step, read_step((*list)[i], i, t.requests.size()));
    t.steps.push_back(std::move(step));
  }
  return ok_status();
}

// "copies": [{"step": S, "done_before_step": D}]; the record's rules are check_copies()'s
// (reference/trace/copies.hpp, run by validate_trace), the ranges here only bound the numbers.
Status read_copies(const json& v, Trace& t) {
  R3_TRY(const json* list, read_list(v, "copies", tl::kMaxSteps, "entries"));
  for (size_t i = 0; i < list->size(); ++i) {
    R3_TRY(ObjectReader o, ObjectReader::open((*list)[i], element("copies", i), {"step", "done_before_step"}));
    CopyCompletion c;
    R3_TRY_STATUS(read_field(o, "step", 0, tl::kMaxSteps, c.step));
    R3_TRY_STATUS(read_field(o, "done_before_step", 0, tl::kMaxSteps, c.done_before_step));
    t.copies.push_back(c);
  }
  return ok_status();
}

// ---- reading: the whole trace ------------------------------------------------------------

Status read_trailer(const ObjectReader& o, Trace& t) {
  if (const json* profile = o.find("profile")) {
    R3_TRY(const std::string text, read_string(*profile, "profile"));
    R3_TRY(t.profile, parse_profile(text));
  }
  if (const json* note = o.find("note")) {
    R3_TRY(t.note, read_string(*note, "note"));
    R3_TRY_STATUS(check_text(t.note, "note"));
  }
  if (const json* expect = o.find("expect")) {
    R3_TRY(ObjectReader e, ObjectReader::open(*expect, "expect", {"impl", "verdict"}));
    TraceExpectation x;
    R3_TRY(x.impl, read_named_text(e, "impl", "an implementation"));
    R3_TRY(x.verdict, read_named_text(e, "verdict", "a verdict"));
    t.expect = std::move(x);
  }
  return ok_status();
}

Result<Trace> read_trace(const json& doc) {
  R3_TRY_STATUS(check_trace_format(doc));
  R3_TRY(ObjectReader o, open_trace(doc));
  Trace t;
  if (const json* engine = o.find("engine")) {
    R3_TRY(const std::string text, read_string(*engine, "engine"));
    R3_TRY(t.engine, parse_engine(text));
  }
  R3_TRY(const json* topology, o.require("topology"));
  R3_TRY_STATUS(read_topology(*topology, t));
  R3_TRY(const json* model, o.require("model"));
  R3_TRY(t.model, read_model(*model));  // its ranges are validate_trace()'s
  R3_TRY(const json* config, o.require("config"));
  R3_TRY_STATUS(read_config(*config, t));
  R3_TRY(const json* requests, o.require("requests"));
  R3_TRY_STATUS(read_requests(*requests, t));
  R3_TRY(const json* steps, o.require("steps"));
  R3_TRY_STATUS(read_steps(*steps, t));
  if (const json* copies = o.find("copies")) R3_TRY_STATUS(read_copies(*copies, t));
  R3_TRY_STATUS(read_trailer(o, t));
  auto timeline = validate_trace(t);  // its errors name the step or the request already
  if (!timeline) return timeline.error();
  return t;
}

// ---- writing -----------------------------------------------------------------------------

// Knobs go back into their object after its generic keys (the map's order: by key).
void add_knobs(ordered_json& object, const Trace& t, std::string_view prefix) {
  for (const auto& [key, text] : t.knobs) {
    if (!key.starts_with(prefix) || key.size() <= prefix.size() || key[prefix.size()] != '.') continue;
    ordered_json value = ordered_json::parse(text, nullptr, false);
    if (value.is_discarded()) value = text;  // not JSON text (a trace built by hand): kept as a string
    object[key.substr(prefix.size() + 1)] = std::move(value);
  }
}

ordered_json config_json(const Trace& t) {
  const TraceConfig& c = t.config;
  ordered_json config = ordered_json::object();
  config["token_budget"] = c.token_budget;
  config["chunk"] = c.chunk;
  config["page"] = c.page;
  config["kv_slots"] = c.kv_slots;
  config["prefix_cache"] = c.prefix_cache;
  config["overlap"] = c.overlap;
  config["spec"] = c.spec ? ordered_json{{"width", c.spec->width}, {"tree", c.spec->tree}} : ordered_json(nullptr);
  ordered_json graphs = ordered_json::object();
  if (!c.cuda_graph_decode.empty()) graphs["decode"] = int_list(c.cuda_graph_decode);
  config["cuda_graph"] = std::move(graphs);
  add_knobs(config, t, kConfig);
  return config;
}

ordered_json request_json(const TraceRequest& r) {
  ordered_json out = ordered_json::object();
  out["id"] = r.id;
  out["dp"] = r.dp;
  out["prompt"] = r.prompt;
  out["outputs"] = r.outputs;
  if (r.max_new) out["max_new"] = *r.max_new;
  out["finish"] = std::string(to_string(r.finish));
  if (r.start_len != 0) out["start_len"] = r.start_len;
  if (r.arrival) out["arrival"] = *r.arrival;
  if (r.resume_of) out["resume_of"] = *r.resume_of;
  return out;
}

ordered_json work_json(const Work& w) {
  ordered_json out = ordered_json::object();
  out["req"] = w.req;
  switch (w.kind) {
    case Work::Kind::extend: out["extend"] = ordered_json::array({w.lo, w.hi}); break;
    case Work::Kind::decode: out["decode"] = w.lo; break;
    case Work::Kind::verify: out["verify"] = ordered_json{{"at", w.lo}, {"accepted", w.accepted}}; break;
  }
  return out;
}

ordered_json event_json(const TraceEvent& e) {
  ordered_json body;
  switch (e.kind) {
    case TraceEvent::Kind::preempt:
    case TraceEvent::Kind::abort: body = e.req; break;
    case TraceEvent::Kind::hit: body = ordered_json{{"req", e.req}, {"len", e.len}}; break;
    case TraceEvent::Kind::weight_update: body = ordered_json{{"version", e.version}, {"flush", e.flush}}; break;
    case TraceEvent::Kind::offload:
    case TraceEvent::Kind::restore:
    case TraceEvent::Kind::pd_handoff: body = ordered_json{{"req", e.req}}; break;
  }
  ordered_json out = ordered_json::object();
  out[std::string(to_string(e.kind))] = std::move(body);
  return out;
}

ordered_json step_json(const TraceStep& s) {
  ordered_json out = ordered_json::object();
  if (!s.events.empty()) {
    ordered_json events = ordered_json::array();
    for (const TraceEvent& e : s.events) events.push_back(event_json(e));
    out["events"] = std::move(events);
  }
  ordered_json run = ordered_json::array();
  for (const Work& w : s.run) run.push_back(work_json(w));
  out["run"] = std::move(run);
  return out;
}

ordered_json build(const Trace& t) {
  ordered_json doc = ordered_json::object();
  doc["format"] = std::string(kTraceFormat);
  doc["engine"] = std::string(to_string(t.engine));
  if (t.profile) doc["profile"] = std::string(to_string(*t.profile));
  ordered_json topology = ordered_json::object();
  topology["dp"] = t.dp;
  topology["tp"] = t.tp;
  add_knobs(topology, t, kTopology);
  doc["topology"] = std::move(topology);
  doc["model"] = model_json(t.model);
  doc["config"] = config_json(t);
  ordered_json requests = ordered_json::array();
  for (const TraceRequest& r : t.requests) requests.push_back(request_json(r));
  doc["requests"] = std::move(requests);
  ordered_json steps = ordered_json::array();
  for (const TraceStep& s : t.steps) steps.push_back(step_json(s));
  doc["steps"] = std::move(steps);
  if (!t.copies.empty()) {
    ordered_json copies = ordered_json::array();
    for (const CopyCompletion& c : t.copies)
      copies.push_back(ordered_json{{"step", c.step}, {"done_before_step", c.done_before_step}});
    doc["copies"] = std::move(copies);
  }
  if (!t.note.empty()) doc["note"] = t.note;
  if (t.expect) doc["expect"] = ordered_json{{"impl", t.expect->impl}, {"verdict", t.expect->verdict}};
  return doc;
}

// Invalid UTF-8 (in a note built by hand) becomes U+FFFD instead of an exception.
std::string scalar_text(const ordered_json& v) { return v.dump(-1, ' ', false, ordered_json::error_handler_t::replace); }

// One value on one line, with ", " between entries and ": " after keys, as a person writes it.
void put_inline(const ordered_json& v, std::string& out) {
  if (!v.is_structured()) {
    out += scalar_text(v);
    return;
  }
  const bool object = v.is_object();
  out += object ? '{' : '[';
  std::string_view separator;
  for (const auto& item : v.items()) {
    out += separator;
    separator = ", ";
    if (object) out += scalar_text(ordered_json(item.key())) + ": ";
    put_inline(item.value(), out);
  }
  out += object ? '}' : ']';
}

}  // namespace

Result<Trace> trace_from_json(const nlohmann::json& doc) {
  try {
    return read_trace(doc);
  } catch (const std::exception& e) {  // defensive: every access above is type-checked first
    return Error{std::string("trace: cannot read JSON: ") + e.what()};
  }
}

Result<Trace> trace_from_json_text(std::string_view text) {
  R3_TRY(json doc, parse_json_strictly(text));
  return trace_from_json(doc);
}

nlohmann::json trace_to_json(const Trace& t) { return nlohmann::json(build(t)); }

std::string trace_to_json_text(const Trace& t) {
  const ordered_json doc = build(t);
  std::string out = "{\n";
  size_t left = doc.size();
  for (const auto& item : doc.items()) {
    out += "  " + scalar_text(ordered_json(item.key())) + ": ";
    const ordered_json& v = item.value();
    if (v.is_array() && !v.empty() && v.front().is_structured()) {  // requests and steps: one per line
      out += "[\n";
      for (size_t i = 0; i < v.size(); ++i) {
        out += "    ";
        put_inline(v[i], out);
        out += i + 1 < v.size() ? ",\n" : "\n";
      }
      out += "  ]";
    } else {
      put_inline(v, out);
    }
    out += --left > 0 ? ",\n" : "\n";
  }
  out += "}\n";
  return out;
}

Result<Trace> read_trace_file(const std::string& path) {
  R3_TRY(std::string text, read_input_file(path));  // its errors start with the path
  auto t = trace_from_json_text(text);
  if (!t) return Error{path + ": " + t.error().message};
  return t;
}

Status write_trace_file(const std::string& path, const Trace& t) { return write_new_file(path, trace_to_json_text(t)); }

bool looks_like_trace(const nlohmann::json& doc) {
  if (!doc.is_object()) return false;
  auto it = doc.find("format");
  return it != doc.end() && it->is_string() && it->get_ref<const std::string&>() == kTraceFormat;
}

Status check_trace_knob(std::string_view key, std::string_view value) {
  const std::string name(key);
  std::string_view object;
  for (std::string_view o : {kTopology, kConfig})
    if (key.size() > o.size() && key.starts_with(o) && key[o.size()] == '.') object = o;
  if (object.empty()) return Error{"knob \"" + name + "\": expected topology.KEY or config.KEY"};
  const std::string_view own = key.substr(object.size() + 1);
  if (is_generic(object, own)) return Error{name + ": a generic key of " + std::string(object) + ", not an engine knob"};
  if (own.size() > tl::kMaxKnobText) {
    return Error{std::string(object) + ": an engine knob's key is " + std::to_string(own.size()) + " bytes, at most " +
                 std::to_string(tl::kMaxKnobText)};
  }
  if (value.size() > tl::kMaxKnobText) {
    return Error{name + ": the knob's value is " + std::to_string(value.size()) + " bytes, at most " +
                 std::to_string(tl::kMaxKnobText)};
  }
  auto parsed = parse_json_strictly(value);
  if (!parsed) return Error{name + ": the knob's value is not JSON: " + parsed.error().message};
  if (parsed->is_structured()) return knob_not_scalar(name, kind_of(*parsed));
  const std::string canonical = parsed->dump();
  if (canonical != value) {
    return Error{name + ": the knob's value " + std::string(value) + " is not written as the JSON writer writes it (" +
                 canonical + ")"};
  }
  return ok_status();
}

}  // namespace r3
