// What an engine's trace export part (fuzz/engines/NAME/trace_export.cpp) writes for a trace of
// corpus/traces/, for the parts' tests: its data lines, or its refusal; and whether a text holds a
// whole line.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "fuzz/codec/trace_json.hpp"
#include "fuzz/export/trace_target.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3::test {

// `name` is relative to corpus/traces/ ("regression/x.json").
inline Result<std::string> trace_export_data(const EngineTraceTarget& part, const std::string& name) {
  auto t = read_trace_file(std::string(R3FUZZ_SOURCE_DIR) + "/corpus/traces/" + name);
  EXPECT_TRUE(t.ok()) << t.error().message;
  if (!t.ok()) return t.error();
  auto timeline = validate_trace(*t);
  EXPECT_TRUE(timeline.ok());
  if (!timeline.ok()) return timeline.error();
  return part.engine_data(*t, *timeline);
}

inline bool has_line(const std::string& text, const std::string& line) {
  return ("\n" + text).find("\n" + line + "\n") != std::string::npos;
}

}  // namespace r3::test
