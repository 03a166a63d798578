// Files refused for one cause, told once: a corpus whose 52 files share one problem (an
// implementation that models the other engine, expect.impl naming a command) gets the cause
// once and the 52 files under it, each still named, rather than 52 copies of one sentence.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace r3 {

class RefusalGroups {
 public:
  // `file` refused for `cause` (both as they will be printed: the caller escapes them).
  void add(const std::string& cause, std::string file);
  bool empty() const { return groups_.empty(); }
  size_t files() const;
  // One block per cause, in the order the causes were first met, each file under it in the
  // order added: "<cause>: N case file(s):\n  a.json\n  b.json". Blocks end in no newline.
  std::vector<std::string> blocks() const;

 private:
  std::vector<std::pair<std::string, std::vector<std::string>>> groups_;
  std::map<std::string, size_t> index_;  // cause -> its group: a corpus of distinct causes stays n log n
};

}  // namespace r3
