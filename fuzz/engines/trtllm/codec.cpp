// The trtllm engine's case codec: its cases are the base case (fuzz/codec/base_codec.hpp), in
// the base JSON layout with "engine": "trtllm", and binary version 4 (fuzz/codec/case_binary.hpp).
#include "fuzz/codec/base_codec.hpp"
#include "fuzz/engines/trtllm/parts.hpp"

namespace r3::trtllm {

const EngineCodec& codec_part() {
  static const BaseCaseCodec codec(4, "TensorRT-LLM");
  return codec;
}

}  // namespace r3::trtllm
