// Building traces in C++ (a request, a work, an event), and issue 29's example trace as a value:
// the fixtures every trace test shares.
#pragma once

#include "reference/engine.hpp"
#include "reference/trace/trace.hpp"

namespace r3::test {

inline Work extend(int req, int64_t lo, int64_t hi) { return {Work::Kind::extend, req, lo, hi, 0}; }
inline Work decode(int req, int64_t q) { return {Work::Kind::decode, req, q, q + 1, 0}; }
inline Work verify(int req, int64_t q, int accepted) { return {Work::Kind::verify, req, q, q + 1, accepted}; }
inline TraceEvent hit(int req, int64_t len) { return {TraceEvent::Kind::hit, req, len, 0, false}; }
inline TraceEvent on(TraceEvent::Kind kind, int req) { return {kind, req, 0, 0, false}; }
inline TraceEvent weight_update(int version, bool flush) { return {TraceEvent::Kind::weight_update, -1, 0, version, flush}; }

inline TraceRequest request(int id, std::vector<int32_t> prompt, std::vector<int32_t> outputs,
                            Finish finish = Finish::length, int dp = 0) {
  TraceRequest r;
  r.id = id;
  r.dp = dp;
  r.prompt = std::move(prompt);
  r.outputs = std::move(outputs);
  r.finish = finish;
  return r;
}

inline Trace example_trace() {
  Trace t;
  t.engine = parse_engine("sglang").value();
  t.profile = parse_profile("sglang").value();
  t.knobs = {{"topology.dp_attention", "false"}, {"topology.a2a", "\"none\""}};
  t.model = {1, 2, 16};
  t.config.token_budget = 8;
  t.config.chunk = 4;
  t.config.page = 2;
  t.config.kv_slots = 64;
  t.config.prefix_cache = true;
  t.config.cuda_graph_decode = {1, 2, 4};
  t.requests = {
      {0, 0, {5, 6, 7, 8, 9}, {1, 2, 3}, std::nullopt, Finish::length, 0, std::nullopt, std::nullopt},
      {1, 0, {5, 6, 7, 8, 4, 4}, {2}, std::nullopt, Finish::eos, 0, std::nullopt, std::nullopt},
      {2, 0, {3, 3}, {7}, 0, Finish::length, 0, std::nullopt, std::nullopt},
  };
  t.steps = {
      {{}, {extend(0, 0, 4), extend(2, 0, 2)}},
      {{}, {extend(0, 4, 5)}},
      {{hit(1, 4)}, {extend(1, 4, 6)}},
      {{}, {decode(0, 5)}},
      {{}, {decode(0, 6)}},
  };
  return t;
}

}  // namespace r3::test
