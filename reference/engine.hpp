// Which engine a case belongs to. An engine is the layout contract of one inference engine: how a
// case becomes the tensors every rank's capture sees, and which rows the step then publishes
// (design.md, "Engines"). vLLM's contract lives in reference/layout.cpp and reference/engines/vllm/,
// SGLang's in reference/engines/sglang/; everything else (reference capturer, oracle, findings,
// shrinker, codecs) is shared.
#pragma once

#include <cstdint>
#include <string_view>

#include "reference/error.hpp"

namespace r3 {

enum class Engine : uint8_t {
  vllm,    // docs/layout-contract.md sections 1 to 10 (the default: a case without "engine")
  sglang,  // docs/layout-contract.md section 11 (SGLang's routed-experts capturer)
};

std::string_view to_string(Engine engine);  // "vllm", "sglang"
Result<Engine> parse_engine(std::string_view text);

}  // namespace r3
