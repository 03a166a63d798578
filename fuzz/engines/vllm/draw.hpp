// vLLM's draw part (fuzz/generate/engine_draw.hpp): a vLLM case is the case format's own fields,
// drawn in draw.cpp in the case domain's order, and vLLM's default capture sizes are the list the
// draw's default_capture_sizes hint takes.
#pragma once

#include <cstdint>
#include <vector>

namespace r3::vllm {

// vLLM's default CUDA-graph capture sizes: 1, 2, 4, then 8 to 248 by 8, then 256 to 512 by 16.
const std::vector<int64_t>& default_cudagraph_sizes();

}  // namespace r3::vllm
