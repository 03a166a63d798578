#include "reference/case.hpp"

namespace r3 {

std::string_view to_string(Path path) {
  switch (path) {
    case Path::single: return "single";
    case Path::gathered: return "gathered";
    case Path::local: return "local";
    case Path::sp_shard: return "sp_shard";
  }
  return "?";
}

std::string_view to_string(PaddingMode mode) {
  switch (mode) {
    case PaddingMode::none: return "none";
    case PaddingMode::dp_max: return "dp_max";
    case PaddingMode::cudagraph: return "cudagraph";
  }
  return "?";
}

Result<Path> parse_path(std::string_view text) {
  for (Path p : {Path::single, Path::gathered, Path::local, Path::sp_shard}) {
    if (text == to_string(p)) return p;
  }
  return Error{"path: \"" + std::string(text) + "\" is not one of single, gathered, local, sp_shard"};
}

}  // namespace r3
