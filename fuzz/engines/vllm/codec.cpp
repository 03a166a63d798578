// The vllm engine's case codec: its cases are the base case (fuzz/codec/base_codec.hpp), in
// design.md's JSON layout and binary version 1 (fuzz/codec/case_binary.hpp).
#include "fuzz/codec/base_codec.hpp"
#include "fuzz/engines/vllm/parts.hpp"

namespace r3::vllm {

const EngineCodec& codec_part() {
  static const BaseCaseCodec codec(1, "vLLM");
  return codec;
}

}  // namespace r3::vllm
