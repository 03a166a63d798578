#include "fuzz/oracle/root_cause.hpp"

#include <vector>

#include "fuzz/oracle/judge.hpp"

namespace r3 {
namespace {

bool repairs(const CapturePolicy& policy, std::span<const std::string_view> names, const Case& c, const Step& step) {
  const std::unique_ptr<CapturePolicy> patched = policy.with_patches(names);
  if (!patched) return false;
  return !judge_symbolic(c, step, *patched, patched->name(), RankDetails::reported_ranks).failed();
}

}  // namespace

std::string root_cause(const CapturePolicy& policy, const Case& c, const Step& step) {
  const std::vector<std::string_view> names = policy.patch_names();
  if (names.empty()) return "";
  if (!judge_symbolic(c, step, policy, policy.name(), RankDetails::reported_ranks).failed()) return "";
  for (std::string_view one : names) {
    if (repairs(policy, std::span(&one, 1), c, step)) return std::string(one);
  }
  for (size_t i = 0; i < names.size(); ++i) {
    for (size_t j = i + 1; j < names.size(); ++j) {
      const std::string_view two[] = {names[i], names[j]};
      if (repairs(policy, two, c, step)) return std::string(names[i]) + "+" + std::string(names[j]);
    }
  }
  return "";
}

}  // namespace r3
