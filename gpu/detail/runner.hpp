// A runner executes a DevicePlan somewhere: on the host (Thrust CPP) or on CUDA devices.
// The CUDA runners live in r3fuzz_gpu_cuda; builds without it link cuda_absent.cpp, whose
// make_cuda_runner explains what is missing.
#pragma once

#include <memory>

#include "gpu/detail/device_plan.hpp"
#include "gpu/gpu_options.hpp"
#include "reference/error.hpp"

namespace r3::gpu::detail {

class Runner {
 public:
  virtual ~Runner() = default;
  virtual Result<DeviceResult> execute(const DevicePlan& plan) = 0;
  // Hands back a result the caller has done with, so the next execute() may reuse its storage
  // (the host runner's arenas are that storage: a case then allocates no arena of its own).
  virtual void recycle(DeviceResult&& /*done*/) {}
};

std::unique_ptr<Runner> make_host_runner();
// backend virtual_ or nccl.
Result<std::unique_ptr<Runner>> make_cuda_runner(Backend backend);

}  // namespace r3::gpu::detail
