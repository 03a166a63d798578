#include "fuzz/libfuzzer/trace.hpp"

#include <string_view>

#include "fuzz/codec/trace_binary.hpp"
#include "fuzz/codec/trace_json.hpp"
#include "fuzz/oracle/judge_trace.hpp"

namespace r3 {

std::optional<std::string> exercise_trace(std::span<const uint8_t> bytes) {
  const bool text = !bytes.empty() && bytes.front() == '{';
  const Result<Trace> t = text ? trace_from_json_text(std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()))
                               : decode_trace(bytes);
  if (!t) return std::nullopt;
  const std::string json = trace_to_json_text(*t);
  const Result<Trace> from_json = trace_from_json_text(json);
  if (!from_json || *from_json != *t)
    return "the trace does not round-trip through JSON (" + (from_json ? std::string("it reads back different") : from_json.error().message) + "):\n" + json;
  const Result<Trace> from_bytes = decode_trace(encode_trace(*t));
  if (!from_bytes || *from_bytes != *t)
    return "the trace does not round-trip through the binary form (" + (from_bytes ? std::string("it decodes different") : from_bytes.error().message) + "):\n" + json;
  const Result<Timeline> timeline = validate_trace(*t);
  if (!timeline) return "a decoded trace fails validation: " + timeline.error().message + "\n" + json;
  const LifecycleModel* model = lifecycle_of(t->engine);
  for (const LifecycleVersion& version : model->versions()) {
    if (version.released) continue;
    const Result<Profile> profile = parse_profile(version.profile);
    if (!profile || !model->check_profile(*t, *timeline, *profile)) continue;  // the version never runs it
    const Result<TraceImplementation> impl = make_trace_implementation(version.name);
    if (!impl) return "cannot build " + std::string(version.name) + ": " + impl.error().message;
    const TraceJudgement j = judge_trace(*impl, *t, *timeline);
    if (j.verdict != TraceVerdict::pass)
      return std::string(version.name) + " (a fixed model) fails: " + std::string(to_string(j.verdict)) + ": " + j.detail +
             "\n" + json;
  }
  return std::nullopt;
}

}  // namespace r3
