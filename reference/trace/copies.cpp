#include "reference/trace/copies.hpp"

#include <algorithm>
#include <utility>

#include "reference/trace/trace.hpp"

namespace r3 {
namespace {

std::string entry(size_t i) { return "copies[" + std::to_string(i) + "]"; }

}  // namespace

Status check_copies(const Trace& t) {
  const int steps = static_cast<int>(t.steps.size());
  for (size_t i = 0; i < t.copies.size(); ++i) {
    const CopyCompletion& c = t.copies[i];
    const std::string at = entry(i);
    if (c.step < 0 || c.step >= steps)
      return Error{at + ".step: " + std::to_string(c.step) + " is not a step of the trace (it has " +
                   std::to_string(steps) + ")"};
    if (i > 0 && c.step == t.copies[i - 1].step)
      return Error{at + ".step: step " + std::to_string(c.step) + " already has an entry (" + entry(i - 1) + ")"};
    if (i > 0 && c.step < t.copies[i - 1].step)
      return Error{at + ".step: " + std::to_string(c.step) + " comes after " + entry(i - 1) + ".step " +
                   std::to_string(t.copies[i - 1].step) + " (entries go in step order)"};
    if (c.done_before_step <= c.step)
      return Error{at + ".done_before_step: " + std::to_string(c.done_before_step) + " is not after step " +
                   std::to_string(c.step)};
    if (c.done_before_step == c.step + 1)
      return Error{at + ".done_before_step: " + std::to_string(c.done_before_step) + " is step " +
                   std::to_string(c.step) + "'s in-order completion; leave the entry out"};
    if (c.done_before_step > steps)
      return Error{at + ".done_before_step: " + std::to_string(c.done_before_step) + " is past the end of the trace (" +
                   std::to_string(steps) + " steps; " + std::to_string(steps) + " is \"at the end\")"};
  }
  return ok_status();
}

std::vector<int> completion_steps(const Trace& t) {
  std::vector<int> out(t.steps.size());
  for (size_t s = 0; s < out.size(); ++s) out[s] = static_cast<int>(s) + 1;
  for (const CopyCompletion& c : t.copies)
    if (c.step >= 0 && static_cast<size_t>(c.step) < out.size()) out[static_cast<size_t>(c.step)] = c.done_before_step;
  return out;
}

bool has_late_copies(const Trace& t) { return !t.copies.empty(); }

CopyWindow in_order_window(const Trace& t, std::string rule) { return lagging_window(t, 0, std::move(rule)); }

CopyWindow lagging_window(const Trace& t, int lag, std::string rule) {
  CopyWindow w;
  w.rule = std::move(rule);
  const int steps = static_cast<int>(t.steps.size());
  w.latest.resize(t.steps.size());
  for (int s = 0; s < steps; ++s) w.latest[static_cast<size_t>(s)] = std::min(s + 1 + std::max(lag, 0), steps);
  return w;
}

Status check_copies_within(const Trace& t, const CopyWindow& window) {
  R3_CHECK(window.latest.size() == t.steps.size(), "a copy window holds one latest completion per step");
  for (size_t i = 0; i < t.copies.size(); ++i) {
    const CopyCompletion& c = t.copies[i];
    if (c.step < 0 || static_cast<size_t>(c.step) >= window.latest.size()) continue;  // check_copies names it
    const int latest = window.latest[static_cast<size_t>(c.step)];
    if (c.done_before_step <= latest) continue;
    return Error{entry(i) + ".done_before_step: " + std::to_string(c.done_before_step) + " is past what step " +
                 std::to_string(c.step) + "'s copy allows (at most " + std::to_string(latest) +
                 (latest == c.step + 1 ? ", in order" : "") + "): " + window.rule};
  }
  return ok_status();
}

}  // namespace r3
