#include "fuzz/export/engine_target.hpp"

#include <string>

namespace r3 {
namespace {

bool python_name(std::string_view word) {
  if (word.empty() || (word[0] >= '0' && word[0] <= '9')) return false;
  for (char ch : word)
    if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') || ch == '_')) return false;
  return true;
}

}  // namespace

Result<const EngineTarget*> engine_target(const Case& c) {
  if (const EngineTarget* target = engine_export(c.engine)) return target;
  return Error{"engine " + std::string(c.engine.name()) + ": r3fuzz cannot export its cases (the engine has no export part)"};
}

Status check_capturer_spec(std::string_view spec) {
  const size_t colon = spec.find(':');
  if (colon == std::string_view::npos) return Error{"expected MODULE:CLASS, got no ':'"};
  const std::string_view module = spec.substr(0, colon), cls = spec.substr(colon + 1);
  if (!python_name(cls)) return Error{"the class after ':' must be a Python name (letters, digits, _)"};
  size_t start = 0;
  while (true) {
    const size_t dot = module.find('.', start);
    if (!python_name(module.substr(start, dot == std::string_view::npos ? dot : dot - start)))
      return Error{"the module before ':' must be a dotted Python name (a.b.c)"};
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  return ok_status();
}

}  // namespace r3
