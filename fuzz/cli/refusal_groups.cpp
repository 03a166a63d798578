#include "fuzz/cli/refusal_groups.hpp"

namespace r3 {

void RefusalGroups::add(const std::string& cause, std::string file) {
  const auto [it, fresh] = index_.emplace(cause, groups_.size());
  if (fresh) groups_.push_back({cause, {}});
  groups_[it->second].second.push_back(std::move(file));
}

size_t RefusalGroups::files() const {
  size_t n = 0;
  for (const auto& [cause, files] : groups_) n += files.size();
  return n;
}

std::vector<std::string> RefusalGroups::blocks() const {
  std::vector<std::string> out;
  for (const auto& [cause, files] : groups_) {
    std::string block = cause + ": " + std::to_string(files.size()) + " case file" + (files.size() == 1 ? "" : "s") + ":";
    for (const std::string& file : files) block += "\n  " + file;
    out.push_back(std::move(block));
  }
  return out;
}

}  // namespace r3
