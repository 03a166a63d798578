#include "reference/trace/trace.hpp"

#include <array>
#include <utility>

namespace r3 {
namespace {

constexpr std::array<std::pair<Finish, std::string_view>, 4> kFinishNames = {{
    {Finish::length, "length"}, {Finish::eos, "eos"}, {Finish::stop, "stop"}, {Finish::abort, "abort"}}};

constexpr std::array<std::pair<TraceEvent::Kind, std::string_view>, 7> kEventNames = {{
    {TraceEvent::Kind::hit, "hit"},
    {TraceEvent::Kind::preempt, "preempt"},
    {TraceEvent::Kind::abort, "abort"},
    {TraceEvent::Kind::weight_update, "weight_update"},
    {TraceEvent::Kind::offload, "offload"},
    {TraceEvent::Kind::restore, "restore"},
    {TraceEvent::Kind::pd_handoff, "pd_handoff"}}};

template <class Table>
std::string joined_names(const Table& table) {
  std::string out;
  for (const auto& [value, name] : table) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

}  // namespace

std::string_view to_string(Finish finish) {
  for (const auto& [value, name] : kFinishNames)
    if (value == finish) return name;
  return "?";
}

Result<Finish> parse_finish(std::string_view text) {
  for (const auto& [value, name] : kFinishNames)
    if (name == text) return value;
  return Error{"\"" + std::string(text) + "\" is not one of " + joined_names(kFinishNames)};
}

std::string_view to_string(Work::Kind kind) {
  switch (kind) {
    case Work::Kind::extend: return "extend";
    case Work::Kind::decode: return "decode";
    case Work::Kind::verify: return "verify";
  }
  return "?";
}

std::string_view to_string(TraceEvent::Kind kind) {
  for (const auto& [value, name] : kEventNames)
    if (value == kind) return name;
  return "?";
}

Result<TraceEvent::Kind> parse_event_kind(std::string_view text) {
  for (const auto& [value, name] : kEventNames)
    if (name == text) return value;
  return Error{"\"" + std::string(text) + "\" is not an event; the events are " + joined_names(kEventNames)};
}

std::string_view knob(const Trace& t, std::string_view key, std::string_view fallback) {
  const auto it = t.knobs.find(key);
  return it == t.knobs.end() ? fallback : std::string_view(it->second);
}

bool knob_is_true(const Trace& t, std::string_view key) { return knob(t, key, "false") == "true"; }

std::string_view knob_word(std::string_view text) {
  if (text.size() >= 2 && text.front() == '"' && text.back() == '"') return text.substr(1, text.size() - 2);
  return text;
}

}  // namespace r3
