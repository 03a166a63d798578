// The shrinker's passes for SGLang cases (engine "sglang"): each proposes smaller variants of an
// SGLang forward, most-reducing first, and proposes nothing for a vLLM case (passes.cpp's vLLM
// passes likewise propose nothing for an SGLang case). The model and layer passes serve both.
#pragma once

#include <vector>

#include "fuzz/shrink/passes.hpp"

namespace r3 {

// Appends them in the order that helps a reader most. The forward kind and the a2a backend
// decide the capture layout, the signature's path: their passes come only when allowed.
void append_sglang_passes(std::vector<ShrinkPass>& passes, bool allow_path_change);

}  // namespace r3
