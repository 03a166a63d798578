#include "fuzz/codec/trace_binary.hpp"

#include <string>

#include "fuzz/codec/binary_io.hpp"
#include "fuzz/codec/trace_json.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3 {
namespace {

namespace tl = trace_limits;

namespace flag {
inline constexpr uint8_t prefix_cache = 1 << 0;
inline constexpr uint8_t overlap = 1 << 1;
inline constexpr uint8_t spec = 1 << 2;
inline constexpr uint8_t spec_tree = 1 << 3;
inline constexpr uint8_t profile = 1 << 4;
inline constexpr uint8_t note = 1 << 5;
inline constexpr uint8_t expect = 1 << 6;
}  // namespace flag

// A request's byte: bits 0-1 are its finish.
namespace request_flag {
inline constexpr uint8_t max_new = 1 << 2;
inline constexpr uint8_t start_len = 1 << 3;
inline constexpr uint8_t arrival = 1 << 4;
inline constexpr uint8_t resume_of = 1 << 5;
}  // namespace request_flag

constexpr std::string_view kKnobObjects[] = {"topology", "config"};

std::string element(std::string_view where, size_t i) { return std::string(where) + "[" + std::to_string(i) + "]"; }

// BinaryReader words its errors for the case format; these bytes are a trace.
Error as_trace_error(Error e) {
  constexpr std::string_view head = "binary case";
  constexpr std::string_view tail = " after the case";
  if (e.message.starts_with(head)) e.message.replace(0, head.size(), "binary trace");
  if (e.message.ends_with(tail)) e.message.replace(e.message.size() - tail.size(), tail.size(), " after the trace");
  return e;
}

// ---- decoding ----------------------------------------------------------------------------

template <class T>
Status get(BinaryReader& r, std::string_view what, int64_t lo, int64_t hi, T& out) {
  R3_TRY(int64_t value, r.folded(what, lo, hi));
  out = static_cast<T>(value);
  return ok_status();
}

// A count, folded into [0, max]; what it counts is read one by one, so a count the bytes cannot
// back ends in a truncation error, not an allocation.
Result<size_t> get_count(BinaryReader& r, std::string_view what, int64_t max) {
  R3_TRY(int64_t count, r.folded(what, 0, max));
  return static_cast<size_t>(count);
}

Result<int> get_request_ref(BinaryReader& r, const std::string& what, size_t requests) {
  if (requests == 0) return Error{what + ": names a request, but the trace has none"};
  R3_TRY(int64_t value, r.folded(what, 0, static_cast<int64_t>(requests) - 1));
  return static_cast<int>(value);
}

Result<std::vector<int32_t>> get_tokens(BinaryReader& r, const std::string& what) {
  R3_TRY(size_t count, get_count(r, what, tl::kMaxTokens));
  std::vector<int32_t> tokens;
  for (size_t i = 0; i < count; ++i) {
    R3_TRY(int64_t token, r.folded(what, 0, tl::kMaxTokenId));
    tokens.push_back(static_cast<int32_t>(token));
  }
  return tokens;
}

Status decode_shape(BinaryReader& r, uint8_t flags, Trace& t) {
  R3_TRY(int64_t engine, r.folded("engine", 0, static_cast<int64_t>(engine_count()) - 1));
  t.engine = Engine::at(static_cast<size_t>(engine));
  R3_TRY_STATUS(get(r, "topology.dp", 1, tl::kMaxDp, t.dp));
  R3_TRY_STATUS(get(r, "topology.tp", 1, tl::kMaxTp, t.tp));
  R3_TRY_STATUS(get(r, "model.layers", 1, limits::kMaxLayers, t.model.layers));
  R3_TRY_STATUS(get(r, "model.top_k", 1, limits::kMaxTopK, t.model.top_k));
  R3_TRY_STATUS(get(r, "model.experts", 1, limits::kMaxExperts, t.model.experts));
  TraceConfig& c = t.config;
  R3_TRY_STATUS(get(r, "config.token_budget", 1, tl::kMaxRows, c.token_budget));
  R3_TRY_STATUS(get(r, "config.chunk", 0, tl::kMaxRows, c.chunk));
  if (c.chunk == 0) c.chunk = -1;  // off
  R3_TRY_STATUS(get(r, "config.page", 1, tl::kMaxRows, c.page));
  R3_TRY_STATUS(get(r, "config.kv_slots", 1, tl::kMaxRows, c.kv_slots));
  c.prefix_cache = flags & flag::prefix_cache;
  c.overlap = flags & flag::overlap;
  if (flags & flag::spec) {
    SpecConfig spec;
    R3_TRY_STATUS(get(r, "config.spec.width", 1, tl::kMaxSpecWidth, spec.width));
    spec.tree = flags & flag::spec_tree;
    c.spec = spec;
  }
  R3_TRY(size_t sizes, get_count(r, "config.cuda_graph.decode", tl::kMaxGraphSizes));
  for (size_t i = 0; i < sizes; ++i) {
    R3_TRY(int64_t size, r.folded("config.cuda_graph.decode", 1, tl::kMaxRows));
    c.cuda_graph_decode.push_back(size);
  }
  return ok_status();
}

Status decode_knobs(BinaryReader& r, Trace& t) {
  R3_TRY(size_t count, get_count(r, "the number of knobs", tl::kMaxKnobs));
  for (size_t i = 0; i < count; ++i) {
    R3_TRY(int64_t object, r.folded("a knob's object", 0, 1));
    R3_TRY(std::string key, r.text("a knob's key", tl::kMaxKnobText));
    R3_TRY(std::string value, r.text("a knob's value", tl::kMaxKnobText));
    std::string name = std::string(kKnobObjects[object]) + "." + key;
    R3_TRY_STATUS(check_trace_knob(name, value));
    if (t.knobs.contains(name)) return Error{name + ": the knob appears twice"};
    t.knobs.emplace(std::move(name), std::move(value));
  }
  return ok_status();
}

Result<TraceRequest> decode_request(BinaryReader& r, const Trace& t, size_t index, size_t count) {
  const std::string where = element("requests", index);
  R3_TRY(uint8_t bits, r.byte(where));
  TraceRequest q;
  q.id = static_cast<int>(index);
  q.finish = static_cast<Finish>(bits & 3u);
  R3_TRY_STATUS(get(r, where + ".dp", 0, t.dp - 1, q.dp));
  R3_TRY(q.prompt, get_tokens(r, where + ".prompt"));
  R3_TRY(q.outputs, get_tokens(r, where + ".outputs"));
  if (bits & request_flag::max_new) {
    R3_TRY(q.max_new, r.folded(where + ".max_new", 0, tl::kMaxTokens));
  }
  if (bits & request_flag::start_len) {
    R3_TRY(q.start_len, r.folded(where + ".start_len", -tl::kMaxPosition, tl::kMaxPosition));
  }
  if (bits & request_flag::arrival) {
    R3_TRY(int64_t arrival, r.folded(where + ".arrival", 0, tl::kMaxSteps));
    q.arrival = static_cast<int>(arrival);
  }
  if (bits & request_flag::resume_of) {
    R3_TRY(q.resume_of, get_request_ref(r, where + ".resume_of", count));
  }
  return q;
}

Result<TraceEvent> decode_event(BinaryReader& r, const std::string& where, size_t requests) {
  TraceEvent e;
  R3_TRY_STATUS(get(r, where, 0, static_cast<int64_t>(TraceEvent::Kind::pd_handoff), e.kind));
  if (e.kind == TraceEvent::Kind::weight_update) {
    R3_TRY_STATUS(get(r, where + ".version", 0, tl::kMaxVersion, e.version));
    R3_TRY_STATUS(get(r, where + ".flush", 0, 1, e.flush));
    return e;
  }
  R3_TRY(e.req, get_request_ref(r, where + ".req", requests));
  if (e.kind == TraceEvent::Kind::hit) {
    R3_TRY_STATUS(get(r, where + ".len", 0, tl::kMaxPosition, e.len));
  }
  return e;
}

Result<Work> decode_work(BinaryReader& r, const std::string& where, size_t requests) {
  Work w;
  R3_TRY_STATUS(get(r, where, 0, static_cast<int64_t>(Work::Kind::verify), w.kind));
  R3_TRY(w.req, get_request_ref(r, where + ".req", requests));
  R3_TRY(w.lo, r.folded(where, 0, tl::kMaxPosition));
  w.hi = w.lo + 1;  // decode and verify forward from one input position
  if (w.kind == Work::Kind::extend) {
    R3_TRY(w.hi, r.folded(where + ".extend", 0, tl::kMaxPosition));
  } else if (w.kind == Work::Kind::verify) {
    R3_TRY_STATUS(get(r, where + ".accepted", 0, tl::kMaxSpecWidth, w.accepted));
  }
  return w;
}

Result<TraceStep> decode_step(BinaryReader& r, size_t index, size_t requests) {
  const std::string where = element("steps", index);
  TraceStep step;
  R3_TRY(size_t events, get_count(r, where + ".events", tl::kMaxStepEntries));
  for (size_t i = 0; i < events; ++i) {
    R3_TRY(TraceEvent e, decode_event(r, element(where + ".events", i), requests));
    step.events.push_back(e);
  }
  R3_TRY(size_t run, get_count(r, where + ".run", tl::kMaxStepEntries));
  for (size_t i = 0; i < run; ++i) {
    R3_TRY(Work w, decode_work(r, element(where + ".run", i), requests));
    step.run.push_back(w);
  }
  return step;
}

Status decode_trailer(BinaryReader& r, uint8_t flags, Trace& t) {
  if (flags & flag::profile) {
    R3_TRY(int64_t code, r.folded("profile", 0, static_cast<int64_t>(profile_count()) - 1));
    t.profile = Profile::at(static_cast<size_t>(code));
  }
  if (flags & flag::note) {
    R3_TRY(t.note, r.text("note", static_cast<size_t>(tl::kMaxText)));
  }
  if (flags & flag::expect) {
    TraceExpectation e;
    R3_TRY(e.impl, r.text("expect.impl", static_cast<size_t>(tl::kMaxText)));
    R3_TRY(e.verdict, r.text("expect.verdict", static_cast<size_t>(tl::kMaxText)));
    // The JSON reader's rules, so every decoded trace also reads from its JSON text.
    if (e.impl.empty()) return Error{"expect.impl: must name an implementation, got an empty string"};
    if (e.verdict.empty()) return Error{"expect.verdict: must name a verdict, got an empty string"};
    t.expect = std::move(e);
  }
  return ok_status();
}

// The optional trailing copies section (trace_binary.hpp): present exactly when bytes are left
// after the trailer, so every byte string that decoded before it existed decodes the same.
Status decode_copies(BinaryReader& r, Trace& t) {
  R3_TRY(int64_t count, r.folded("the number of copies", 1, tl::kMaxSteps));
  for (int64_t i = 0; i < count; ++i) {
    const std::string where = element("copies", static_cast<size_t>(i));
    CopyCompletion c;
    R3_TRY_STATUS(get(r, where + ".step", 0, tl::kMaxSteps, c.step));
    R3_TRY_STATUS(get(r, where + ".done_before_step", 0, tl::kMaxSteps, c.done_before_step));
    t.copies.push_back(c);
  }
  return ok_status();
}

Result<Trace> decode(BinaryReader& r) {
  R3_TRY(uint8_t version, r.byte("the version byte"));
  if (version != kTraceBinaryVersion) {
    return Error{"binary trace: version " + std::to_string(version) + " is not supported (expected " +
                 std::to_string(kTraceBinaryVersion) + ")"};
  }
  R3_TRY(uint8_t flags, r.byte("the flags byte"));
  Trace t;
  R3_TRY_STATUS(decode_shape(r, flags, t));
  R3_TRY_STATUS(decode_knobs(r, t));
  R3_TRY(size_t requests, get_count(r, "the number of requests", tl::kMaxRequests));
  for (size_t i = 0; i < requests; ++i) {
    R3_TRY(TraceRequest q, decode_request(r, t, i, requests));
    t.requests.push_back(std::move(q));
  }
  R3_TRY(size_t steps, get_count(r, "the number of steps", tl::kMaxSteps));
  for (size_t i = 0; i < steps; ++i) {
    R3_TRY(TraceStep step, decode_step(r, i, requests));
    t.steps.push_back(std::move(step));
  }
  R3_TRY_STATUS(decode_trailer(r, flags, t));
  if (!r.finish().ok()) R3_TRY_STATUS(decode_copies(r, t));
  R3_TRY_STATUS(r.finish());
  return t;
}

// ---- encoding ----------------------------------------------------------------------------

void encode_tokens(BinaryWriter& w, const std::vector<int32_t>& tokens) {
  w.varint(static_cast<int64_t>(tokens.size()));
  for (int32_t token : tokens) w.varint(token);
}

void encode_shape(BinaryWriter& w, const Trace& t) {
  w.varint(static_cast<int64_t>(t.engine.index()));
  w.varint(t.dp, 1);
  w.varint(t.tp, 1);
  w.varint(t.model.layers, 1);
  w.varint(t.model.top_k, 1);
  w.varint(t.model.experts, 1);
  const TraceConfig& c = t.config;
  w.varint(c.token_budget, 1);
  w.varint(c.chunk == -1 ? 0 : c.chunk);
  w.varint(c.page, 1);
  w.varint(c.kv_slots, 1);
  if (c.spec) w.varint(c.spec->width, 1);
  w.varint(static_cast<int64_t>(c.cuda_graph_decode.size()));
  for (int64_t size : c.cuda_graph_decode) w.varint(size, 1);
}

void encode_knobs(BinaryWriter& w, const Trace& t) {
  w.varint(static_cast<int64_t>(t.knobs.size()));
  for (const auto& [name, value] : t.knobs) {
    const bool config = name.starts_with("config.");
    w.varint(config ? 1 : 0);
    w.text(name.substr(std::string_view(kKnobObjects[config ? 1 : 0]).size() + 1));
    w.text(value);
  }
}

void encode_request(BinaryWriter& w, const TraceRequest& q) {
  uint8_t bits = static_cast<uint8_t>(q.finish);
  if (q.max_new) bits |= request_flag::max_new;
  if (q.start_len != 0) bits |= request_flag::start_len;
  if (q.arrival) bits |= request_flag::arrival;
  if (q.resume_of) bits |= request_flag::resume_of;
  w.byte(bits);
  w.varint(q.dp);
  encode_tokens(w, q.prompt);
  encode_tokens(w, q.outputs);
  if (q.max_new) w.varint(*q.max_new);
  if (q.start_len != 0) w.varint(q.start_len, -tl::kMaxPosition);
  if (q.arrival) w.varint(*q.arrival);
  if (q.resume_of) w.varint(*q.resume_of);
}

void encode_step(BinaryWriter& w, const TraceStep& s) {
  w.varint(static_cast<int64_t>(s.events.size()));
  for (const TraceEvent& e : s.events) {
    w.varint(static_cast<int64_t>(e.kind));
    if (e.kind == TraceEvent::Kind::weight_update) {
      w.varint(e.version);
      w.varint(e.flush ? 1 : 0);
      continue;
    }
    w.varint(e.req);
    if (e.kind == TraceEvent::Kind::hit) w.varint(e.len);
  }
  w.varint(static_cast<int64_t>(s.run.size()));
  for (const Work& work : s.run) {
    w.varint(static_cast<int64_t>(work.kind));
    w.varint(work.req);
    w.varint(work.lo);
    if (work.kind == Work::Kind::extend) w.varint(work.hi);
    if (work.kind == Work::Kind::verify) w.varint(work.accepted);
  }
}

uint8_t flags_of(const Trace& t) {
  uint8_t flags = 0;
  if (t.config.prefix_cache) flags |= flag::prefix_cache;
  if (t.config.overlap) flags |= flag::overlap;
  if (t.config.spec) flags |= flag::spec;
  if (t.config.spec && t.config.spec->tree) flags |= flag::spec_tree;
  if (t.profile) flags |= flag::profile;
  if (!t.note.empty()) flags |= flag::note;
  if (t.expect) flags |= flag::expect;
  return flags;
}

}  // namespace

Result<Trace> decode_trace(std::span<const uint8_t> bytes) {
  BinaryReader r(bytes);
  auto t = decode(r);
  if (!t) return as_trace_error(t.error());
  auto timeline = validate_trace(*t);  // its errors name the step or the request already
  if (!timeline) return timeline.error();
  return t;
}

std::vector<uint8_t> encode_trace(const Trace& t) {
  BinaryWriter w;
  w.byte(kTraceBinaryVersion);
  w.byte(flags_of(t));
  encode_shape(w, t);
  encode_knobs(w, t);
  w.varint(static_cast<int64_t>(t.requests.size()));
  for (const TraceRequest& q : t.requests) encode_request(w, q);
  w.varint(static_cast<int64_t>(t.steps.size()));
  for (const TraceStep& s : t.steps) encode_step(w, s);
  if (t.profile) w.varint(static_cast<int64_t>(t.profile->code()));
  if (!t.note.empty()) w.text(t.note);
  if (t.expect) {
    w.text(t.expect->impl);
    w.text(t.expect->verdict);
  }
  if (!t.copies.empty()) {
    w.varint(static_cast<int64_t>(t.copies.size()), 1);
    for (const CopyCompletion& c : t.copies) {
      w.varint(c.step);
      w.varint(c.done_before_step);
    }
  }
  return w.take();
}

}  // namespace r3
