// The trace target's body (trace_target.cpp): bytes to a trace, in the binary form
// (fuzz/codec/trace_binary.hpp) or, when they start with '{', the JSON form, so corpus/traces
// seeds it directly. Every trace that decodes must round-trip through both forms, and every
// fixed lifecycle model of its engine whose profile runs it must judge it clean.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace r3 {

// What went wrong on this input (a codec that does not round-trip, a fixed model that fails,
// with the trace as JSON), or nullopt: an input that does not decode is no failure.
std::optional<std::string> exercise_trace(std::span<const uint8_t> bytes);

}  // namespace r3
