// How the GPU pipeline runs: where (backend), how it picks rows (selection), whose decisions
// it follows (policy) and which fault it carries. Host types only: no CUDA here.
#pragma once

#include <string>
#include <string_view>

#include "reference/fault.hpp"
#include "reference/error.hpp"

namespace r3::gpu {

enum class Backend {
  host,     // the whole pipeline on the CPU through Thrust's CPP system; gather = thrust::copy
  virtual_, // one CUDA device, every rank a virtual rank; gather = async copies into offsets
  nccl,     // CUDA device 0 runs the kernels; the all-gatherv goes through NCCL over all GPUs
};

enum class Selection {
  host_decision,   // the policy's decision, taken on the host from shapes (as vLLM does)
  device_offsets,  // same branch, but the source offset comes from an exclusive scan on the device
};

// The policy plain "gpu" follows: the default engine's first released policy
// (EngineModel::released_policies()).
const std::string& default_gpu_policy();

struct GpuOptions {
  Backend backend = Backend::host;
  Selection selection = Selection::host_decision;
  std::string policy = default_gpu_policy();  // any policy model's name (reference/policy.hpp, policy_names())
  Fault fault = Fault::none;
};

std::string_view to_string(Backend b);
std::string_view to_string(Selection s);
Result<Backend> parse_backend(std::string_view text);      // host | virtual | nccl
Result<Selection> parse_selection(std::string_view text);  // host-decision | device-offsets

}  // namespace r3::gpu
