#include "fuzz/oracle/verdict.hpp"

#include "reference/engines/sglang/layout.hpp"

namespace r3 {

std::string Signature::path_text() const { return layout.empty() ? std::string(to_string(path)) : std::string(layout); }

std::string Signature::text() const {
  return impl + "/" + std::string(to_string(verdict)) + "/" + path_text() + "/" + branch;
}

Signature signature_of(const Judgement& j, const Case& c) {
  Signature s{j.impl, j.verdict, c.path, {}, j.branch};
  if (c.engine == Engine::sglang) s.layout = sglang::to_string(sglang::capture_layout_of(c));
  return s;
}

}  // namespace r3
