#include "fuzz/cli/shown_paths.hpp"

#include <algorithm>

#include "fuzz/io/terminal_text.hpp"

namespace r3 {

Error with_shown_paths(Error e, std::vector<std::string_view> paths) {
  std::sort(paths.begin(), paths.end(), [](std::string_view a, std::string_view b) { return a.size() > b.size(); });
  for (std::string_view path : paths) {
    const std::string shown = terminal_safe(path);
    if (path.empty() || shown == path) continue;
    // The shown text holds no control byte, so a later (shorter) path never matches inside it.
    std::string out;
    size_t from = 0;
    for (size_t at = e.message.find(path); at != std::string::npos; at = e.message.find(path, from)) {
      out.append(e.message, from, at - from);
      out += shown;
      from = at + path.size();
    }
    out.append(e.message, from, std::string::npos);
    e.message = std::move(out);
  }
  return e;
}

}  // namespace r3
