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

namespace r3 {

std::string_view to_string(Profile profile) {
  switch (profile) {
    case Profile::vllm: return "vllm";
    case Profile::vllm_legacy: return "vllm-legacy";
    case Profile::any: return "any";
    case Profile::sglang: return "sglang";
    case Profile::sglang_miles: return "sglang-miles";
  }
  return "?";
}

Result<Profile> parse_profile(std::string_view text) {
  for (Profile p : {Profile::vllm, Profile::vllm_legacy, Profile::any, Profile::sglang, Profile::sglang_miles}) {
    if (text == to_string(p)) return p;
  }
  return Error{"profile: \"" + std::string(text) + "\" is not one of vllm, vllm-legacy, any, sglang, sglang-miles"};
}

}  // namespace r3
