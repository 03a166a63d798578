// The TensorRT-LLM lifecycle walk (lifecycle_run.cpp) under a version's behaviour.
#pragma once

#include <span>

#include "reference/engines/trtllm/lifecycle_capture.hpp"
#include "reference/trace/lifecycle.hpp"

namespace r3::trtllm {

LifecycleOutcome walk(const Trace& t, const Timeline& timeline, std::span<const StepDelivery> delivery,
                      const Behaviour& b, std::span<const int> done_before);

}  // namespace r3::trtllm
