#include "reference/engine.hpp"

#include <string>

namespace r3 {

std::string_view to_string(Engine engine) {
  switch (engine) {
    case Engine::vllm: return "vllm";
    case Engine::sglang: return "sglang";
  }
  return "?";
}

Result<Engine> parse_engine(std::string_view text) {
  for (Engine e : {Engine::vllm, Engine::sglang})
    if (text == to_string(e)) return e;
  return Error{"engine: \"" + std::string(text) + "\" is not one of vllm, sglang"};
}

}  // namespace r3
