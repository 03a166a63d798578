#include "fuzz/oracle/verdict.hpp"

namespace r3 {
std::string Signature::text() const {
  return impl + "/" + std::string(to_string(verdict)) + "/" + std::string(to_string(path)) + "/" + branch;
}

Signature signature_of(const Judgement& j, Path path) { return {j.impl, j.verdict, path, j.branch}; }

}  // namespace r3
