#include "reference/engines/sglang/lifecycle_knobs.hpp"

#include <string>

namespace r3::sglang {
namespace {

std::string at(std::string_view key) { return "knobs." + std::string(key) + ": "; }

Result<bool> parse_bool(std::string_view key, std::string_view text) {
  if (text == "true") return true;
  if (text == "false") return false;
  return Error{at(key) + std::string(text) + " is neither true nor false"};
}

Result<PdRouter> parse_router(std::string_view key, std::string_view text) {
  const std::string_view word = knob_word(text);
  if (word == "none") return PdRouter::none;
  if (word == "mini_lb") return PdRouter::mini_lb;
  return Error{at(key) + "\"" + std::string(word) + "\" is not one of none, mini_lb"};
}

Result<SpecAlgorithm> parse_spec(std::string_view key, std::string_view text) {
  const std::string_view word = knob_word(text);
  if (word == "eagle") return SpecAlgorithm::eagle;
  if (word == "ngram") return SpecAlgorithm::ngram;
  return Error{at(key) + "\"" + std::string(word) + "\" is not one of eagle, ngram"};
}

Result<A2a> parse_backend(std::string_view key, std::string_view text) {
  const std::string_view word = knob_word(text);
  for (int i = 0; i < kA2aCount; ++i)
    if (word == to_string(static_cast<A2a>(i))) return static_cast<A2a>(i);
  return Error{at(key) + "\"" + std::string(word) + "\" is not one of " + std::string(kA2aNames)};
}

}  // namespace

Result<LifecycleKnobs> parse_knobs(const Trace& t) {
  LifecycleKnobs k;
  k.dp_attention = t.dp > 1;
  for (const auto& [key, value] : t.knobs) {
    if (key == "topology.dp_attention") {
      R3_TRY(k.dp_attention, parse_bool(key, value));
    } else if (key == "topology.a2a") {
      R3_TRY(k.a2a, parse_backend(key, value));
    } else if (key == "config.pd_router") {
      R3_TRY(k.pd_router, parse_router(key, value));
    } else if (key == "config.hicache") {
      R3_TRY(k.hicache, parse_bool(key, value));
    } else if (key == "config.spec_algorithm") {
      R3_TRY(k.spec_algorithm, parse_spec(key, value));
    } else if (key == "config.mixed_chunk") {
      R3_TRY(k.mixed_chunk, parse_bool(key, value));
    } else if (key == "config.overlap_copy_race") {
      R3_TRY(k.overlap_copy_race, parse_bool(key, value));
    } else {
      return Error{"knobs: \"" + key + "\" is not an SGLang knob; SGLang takes " + std::string(kKnobKeys)};
    }
  }
  return k;
}

LifecycleKnobs knobs_of(const Trace& t) {
  Result<LifecycleKnobs> k = parse_knobs(t);
  if (k.ok()) return *k;
  LifecycleKnobs fallback;
  fallback.dp_attention = t.dp > 1;
  return fallback;
}

}  // namespace r3::sglang
